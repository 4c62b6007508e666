//! A trot that runs at a commanded speed (`trot_controller = "raibert"`): Raibert's foot
//! placement for the swinging legs and virtual-model stance forces for the body, the textbook
//! controller of a trotting quadruped.
//!
//! Hwangbo, Lee and Hutter 2018 (sec. V-A) run ANYmal "forward at 1.5 m/s with its legs moving
//! in diagonal pairs" under a controller they do not give. This one is:
//!
//! * **The gait.** A fixed clock of period `gait_period`: the pair LF+RH stands while the phase
//!   `phi = t / gait_period mod 1` is below one half, the pair RF+LH stands otherwise, so at most
//!   two feet are in stance at once and each phase lasts `T_st = gait_period / 2`.
//! * **Swing legs: Raibert's foot placement** (M. H. Raibert, *Legged Robots That Balance*, MIT
//!   Press 1986, ch. 2 and 5: a foot placed at the neutral point `v T_st / 2` ahead of the hip
//!   keeps the speed, and `k (v - v_cmd)` beyond it corrects the speed error). The foot lifts
//!   from `-v T_st / 2` behind its hip and is carried to `v T_st / 2 + raibert_gain (v -
//!   v_cmd)` ahead of it along a half-cosine in the horizontal plane, with a raised-cosine
//!   height of `swing_height`; both ends have zero speed relative to the hip. The leg tracks
//!   that point by a Cartesian PD through its Jacobian, `tau = J_leg' (K_p (p_d - p) + K_d (v_d
//!   - v))`, plus the leg's gravity torques.
//! * **Stance legs: virtual-model control** (J. Pratt, C.-M. Chew, A. Torres, P. Dilworth and
//!   G. Pratt, "Virtual model control: an intuitive approach for bipedal locomotion", IJRR
//!   20(2), 2001; on a trotting quadruped as in C. Gehring et al., "Control of dynamic gaits
//!   for a quadrupedal robot", ICRA 2013). A wrench on the base, `F = m (g + K (z_d - z) - D
//!   v_z)` up, `m (speed_gain (v_cmd - v) + speed_integral_gain int (v_cmd - v) dt)` forward
//!   (a PI loop on the speed: the integral takes up the drag of the feet's touchdowns and
//!   lift-offs, which a proportional term alone leaves as a lasting speed deficit),
//!   `m speed_gain (0 - v_y)` sideways, and a PD moment holding the base level and
//!   heading along `x`, is shared among the stance feet by the least-norm forces that produce
//!   it (`f = A' (A A' + eps I)^-1 w`, `A = [I ...; [r_i]x ...]`), each force clipped to the
//!   friction cone with a margin and to a non-negative normal part; a leg pushes with
//!   `tau = -J_leg' f`.
//! * **The command.** `v_cmd` ramps from 0 to `trot_speed` over [`RAMP_START`] to
//!   [`RAMP_START`] + [`RAMP_DURATION`] seconds; torques are clipped to `+-torque_limit`.
//!
//! Everything is evaluated explicitly at the step's start from the state and the speed
//! error's integral, which the scene keeps ([`SpeedIntegral`]).

/// The integral of the forward speed error `int (v_cmd - v_x) dt` (m), kept by the scene and
/// bounded so a fall cannot wind it up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpeedIntegral(pub f64);

/// The bound on [`SpeedIntegral`] (m).
const INTEGRAL_BOUND: f64 = 0.5;

impl SpeedIntegral {
    /// Adds one step's error, `dt (v_cmd - v_x)`, within the bound.
    pub fn add(&mut self, dt: f64, error: f64) {
        self.0 = (self.0 + dt * error).clamp(-INTEGRAL_BOUND, INTEGRAL_BOUND);
    }
}

use contactlab_multibody::spatial::skew;
use contactlab_multibody::{Model, Transform};
use nalgebra::{DMatrix, DVector, Matrix3, Rotation3, Vector2, Vector3};

use super::config::QuadrupedConfig;
use super::controller::{JointLayout, TROT_PHASE};

/// When the commanded speed starts ramping up (s): the robot first trots in place.
pub const RAMP_START: f64 = 0.5;
/// How long the commanded speed takes to reach `trot_speed` (s).
pub const RAMP_DURATION: f64 = 2.0;

/// Swing foot stiffness (N/m) and damping (N s/m): a swinging foot of about 0.5 kg
/// effective mass tracks at about 8 Hz, well damped; `K_d dt / m` stays far below 2.
const SWING_KP: f64 = 1500.0;
const SWING_KD: f64 = 30.0;
/// Base height: stiffness and damping per unit mass (1/s^2, 1/s): 1.6 Hz, critically damped.
const HEIGHT_KP: f64 = 100.0;
const HEIGHT_KD: f64 = 20.0;
/// Base attitude stiffness (N m/rad) and damping (N m s/rad) about world x, y, z.
const ATTITUDE_KP: [f64; 3] = [150.0, 250.0, 150.0];
const ATTITUDE_KD: [f64; 3] = [15.0, 30.0, 15.0];
/// The share of `mu` a stance force may use (a margin against slipping).
const FRICTION_MARGIN: f64 = 0.7;
/// The furthest a foot is placed from its hip (m), so a speed error cannot ask for an
/// unreachable foothold.
const MAX_STEP: f64 = 0.25;
/// Regularisation of the force distribution (two diagonal feet cannot make a moment about
/// the line through them).
const DISTRIBUTION_EPS: f64 = 1e-3;

/// Where each leg's hip and foot are on the model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegGeometry {
    /// The body whose origin is the hip flexion joint (`X_thigh`): the foot is placed below it.
    pub hip_body: usize,
    /// The body carrying the foot sphere.
    pub foot_body: usize,
    /// The sphere's centre on that body.
    pub foot_centre: Vector3<f64>,
    /// The sphere's radius (m).
    pub foot_radius: f64,
}

/// The commanded forward speed at time `t` (m/s): 0 until [`RAMP_START`], then a linear ramp
/// to `trot_speed` over [`RAMP_DURATION`].
pub fn commanded_speed(cfg: &QuadrupedConfig, t: f64) -> f64 {
    cfg.trot_speed * ((t - RAMP_START) / RAMP_DURATION).clamp(0.0, 1.0)
}

/// Whether leg `k` (in [`super::LEG_NAMES`] order) is in stance at time `t`, and its phase
/// within the current stance or swing in `[0, 1)`.
pub fn leg_phase(cfg: &QuadrupedConfig, k: usize, t: f64) -> (bool, f64) {
    let phi = (t / cfg.gait_period + TROT_PHASE[k] / std::f64::consts::TAU).rem_euclid(1.0);
    if phi < 0.5 {
        (true, 2.0 * phi)
    } else {
        (false, 2.0 * phi - 1.0)
    }
}

/// The swinging foot's target position and velocity (world) at swing phase `s`: Raibert's
/// foothold ahead of the hip, a half-cosine in the plane and a raised cosine in height.
fn swing_target(
    cfg: &QuadrupedConfig,
    hip: Vector2<f64>,
    v_base: Vector2<f64>,
    v_cmd: Vector2<f64>,
    s: f64,
    radius: f64,
) -> (Vector3<f64>, Vector3<f64>) {
    let t_phase = 0.5 * cfg.gait_period;
    let clip = |x: Vector2<f64>| {
        let n = x.norm();
        if n > MAX_STEP {
            x * (MAX_STEP / n)
        } else {
            x
        }
    };
    let lift = clip(-0.5 * t_phase * v_base);
    let land = clip(0.5 * t_phase * v_base + cfg.raibert_gain * (v_base - v_cmd));
    // Relative to the hip, a cubic Hermite from `lift` to `land` whose end slopes are
    // `-v_base`: the foot leaves and meets the ground at zero world speed.
    let slope = -t_phase * v_base;
    let (s2, s3) = (s * s, s * s * s);
    let xy = hip
        + lift * (2.0 * s3 - 3.0 * s2 + 1.0)
        + slope * (s3 - 2.0 * s2 + s)
        + land * (3.0 * s2 - 2.0 * s3)
        + slope * (s3 - s2);
    let rate = lift * (6.0 * s2 - 6.0 * s)
        + slope * (3.0 * s2 - 4.0 * s + 1.0)
        + land * (6.0 * s - 6.0 * s2)
        + slope * (3.0 * s2 - 2.0 * s);
    let vxy = v_base + rate / t_phase;
    // Height: up at full speed (a quarter sine, so the foot leaves the ground at once), down
    // along a half cosine that lands at zero vertical speed.
    let pi = std::f64::consts::PI;
    let h = cfg.swing_height;
    let (z, vz) = if s < 0.5 {
        (
            radius + h * (pi * s).sin(),
            h * pi * (pi * s).cos() / t_phase,
        )
    } else {
        let u = 2.0 * pi * (s - 0.5);
        (
            radius + 0.5 * h * (1.0 + u.cos()),
            -h * pi * u.sin() / t_phase,
        )
    };
    (Vector3::new(xy.x, xy.y, z), Vector3::new(vxy.x, vxy.y, vz))
}

/// The desired wrench on the base (world frame, about the base origin): height, speed and
/// attitude PD, and the weight.
fn base_wrench(
    cfg: &QuadrupedConfig,
    mass: f64,
    base: &Transform,
    v_lin: Vector3<f64>,
    omega: Vector3<f64>,
    v_cmd: Vector2<f64>,
    integral: SpeedIntegral,
) -> (Vector3<f64>, Vector3<f64>) {
    let g = 9.81;
    let force = mass
        * Vector3::new(
            cfg.speed_gain * (v_cmd.x - v_lin.x) + cfg.speed_integral_gain * integral.0,
            cfg.speed_gain * (v_cmd.y - v_lin.y),
            g + HEIGHT_KP * (cfg.trot_height - base.translation.z) - HEIGHT_KD * v_lin.z,
        );
    // The base's rotation from level and heading +x, as a rotation vector (world frame).
    let error = Rotation3::from_matrix_unchecked(base.rotation).scaled_axis();
    let moment = Vector3::from_fn(|i, _| -ATTITUDE_KP[i] * error[i] - ATTITUDE_KD[i] * omega[i]);
    (force, moment)
}

/// The least-norm contact forces at `feet` (world positions relative to the base origin) that
/// produce `(force, moment)`, each clipped to a non-negative normal part and the friction
/// cone with [`FRICTION_MARGIN`].
fn distribute(
    feet: &[Vector3<f64>],
    force: Vector3<f64>,
    moment: Vector3<f64>,
    mu: f64,
) -> Vec<Vector3<f64>> {
    let n = feet.len();
    if n == 0 {
        return Vec::new();
    }
    let mut a = DMatrix::zeros(6, 3 * n);
    for (k, r) in feet.iter().enumerate() {
        a.fixed_view_mut::<3, 3>(0, 3 * k)
            .copy_from(&Matrix3::identity());
        a.fixed_view_mut::<3, 3>(3, 3 * k).copy_from(&skew(r));
    }
    let w = DVector::from_iterator(6, force.iter().chain(moment.iter()).copied());
    let gram = &a * a.transpose() + DMatrix::identity(6, 6) * DISTRIBUTION_EPS;
    let y = gram
        .cholesky()
        .map_or_else(|| DVector::zeros(6), |c| c.solve(&w));
    let f = a.transpose() * y;
    (0..n)
        .map(|k| {
            let mut fk = Vector3::new(f[3 * k], f[3 * k + 1], f[3 * k + 2]);
            fk.z = fk.z.max(0.0);
            let t = fk.xy().norm();
            let cap = FRICTION_MARGIN * mu * fk.z;
            if t > cap {
                let scale = if t > 0.0 { cap / t } else { 0.0 };
                fk.x *= scale;
                fk.y *= scale;
            }
            fk
        })
        .collect()
}

/// The robot as the trot controller sees it: its model, joints and legs.
#[derive(Debug, Clone, Copy)]
pub struct TrotRobot<'a> {
    /// The multibody model.
    pub model: &'a Model,
    /// Which coordinates are which leg's joints.
    pub layout: &'a JointLayout,
    /// Each leg's hip and foot.
    pub legs: &'a [LegGeometry; 4],
}

/// The trot's joint torques at state `(q, v)` and time `t` (module doc), clipped to
/// `+-torque_limit`, in the actuated joints' order.
pub fn raibert_torques(
    robot: TrotRobot<'_>,
    cfg: &QuadrupedConfig,
    q: &DVector<f64>,
    v: &DVector<f64>,
    t: f64,
    integral: SpeedIntegral,
) -> DVector<f64> {
    let TrotRobot {
        model,
        layout,
        legs,
    } = robot;
    let poses = model.body_poses(q);
    let base = model.base_pose(q, 0);
    let v_lin = base.rotation * Vector3::new(v[0], v[1], v[2]);
    let omega = base.rotation * Vector3::new(v[3], v[4], v[5]);
    let v_cmd = Vector2::new(commanded_speed(cfg, t), 0.0);
    let gravity = model.gravity_forces(q);
    let mut tau = DVector::zeros(layout.len());
    let mut stance = Vec::new();
    for (k, (leg, geo)) in layout.legs.iter().zip(legs).enumerate() {
        let jp = model.point_jacobian_with_poses(&poses, geo.foot_body, &geo.foot_centre);
        let foot = poses[geo.foot_body].transform_point(&geo.foot_centre);
        let (in_stance, s) = leg_phase(cfg, k, t);
        if in_stance {
            stance.push((k, jp, foot - base.translation));
            continue;
        }
        let hip = poses[geo.hip_body].translation.xy();
        let (p_d, v_d) = swing_target(cfg, hip, v_lin.xy(), v_cmd, s, geo.foot_radius);
        let v_foot = &jp * v;
        let f = SWING_KP * (p_d - foot) + SWING_KD * (v_d - v_foot);
        for &j in &leg.joints {
            let col = layout.v[j];
            tau[j] = jp.column(col).dot(&f) + gravity[col];
        }
    }
    let mass = model.total_mass();
    let (force, moment) = base_wrench(cfg, mass, &base, v_lin, omega, v_cmd, integral);
    let rel: Vec<Vector3<f64>> = stance.iter().map(|(_, _, r)| *r).collect();
    let forces = distribute(&rel, force, moment, cfg.mu);
    for ((k, jp, _), f) in stance.iter().zip(forces) {
        for &j in &layout.legs[*k].joints {
            tau[j] = -jp.column(layout.v[j]).dot(&f);
        }
    }
    tau.map(|x| x.clamp(-cfg.torque_limit, cfg.torque_limit))
}

/// The swinging legs' Cartesian PD as joint gains for the implicit step (`implicit_gains`,
/// [`super::Quadruped`]): per swinging leg whose torques are not clipped, its joints' indices
/// in `v` and `J_leg' (K_d + dt K_p) J_leg` (the leg's columns of its foot Jacobian), the
/// damping matrix that `tau = J_leg' (K_p (p_d - p) + K_d (v_d - v))` presents to the leg's
/// joint rates once the position is advanced by `dt` of them.
pub fn swing_gains(
    model: &Model,
    layout: &JointLayout,
    legs: &[LegGeometry; 4],
    cfg: &QuadrupedConfig,
    q: &DVector<f64>,
    t: f64,
    torques: &DVector<f64>,
) -> Vec<([usize; 3], Matrix3<f64>)> {
    let poses = model.body_poses(q);
    let mut out = Vec::new();
    for (k, (leg, geo)) in layout.legs.iter().zip(legs).enumerate() {
        let clipped = leg
            .joints
            .iter()
            .any(|&j| torques[j].abs() >= cfg.torque_limit);
        if leg_phase(cfg, k, t).0 || clipped {
            continue;
        }
        let jp = model.point_jacobian_with_poses(&poses, geo.foot_body, &geo.foot_centre);
        let cols = leg.joints.map(|j| layout.v[j]);
        let j_leg = Matrix3::from_fn(|r, c| jp[(r, cols[c])]);
        let gain = SWING_KD + cfg.dt * SWING_KP;
        out.push((cols, j_leg.transpose() * j_leg * gain));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The least-norm distribution reproduces a wrench that four feet can make exactly (up to
    /// its regularisation, 1e-3 relative here), and splits the weight evenly over four
    /// symmetric feet.
    #[test]
    fn distribution_reproduces_a_feasible_wrench() {
        let feet = [
            Vector3::new(0.3, 0.2, -0.5),
            Vector3::new(0.3, -0.2, -0.5),
            Vector3::new(-0.3, 0.2, -0.5),
            Vector3::new(-0.3, -0.2, -0.5),
        ];
        let f = distribute(&feet, Vector3::new(0.0, 0.0, 400.0), Vector3::zeros(), 0.8);
        for fk in &f {
            assert!((fk.z - 100.0).abs() < 0.1, "{fk}");
            assert!(fk.xy().norm() < 1e-3, "{fk}");
        }
    }

    /// A distributed force never leaves the friction cone's margin nor pulls on the ground.
    #[test]
    fn distribution_respects_the_cone() {
        let feet = [Vector3::new(0.3, 0.2, -0.5), Vector3::new(-0.3, -0.2, -0.5)];
        let f = distribute(
            &feet,
            Vector3::new(300.0, 0.0, 100.0),
            Vector3::zeros(),
            0.8,
        );
        for fk in &f {
            assert!(fk.z >= 0.0);
            assert!(
                fk.xy().norm() <= FRICTION_MARGIN * 0.8 * fk.z + 1e-12,
                "{fk}"
            );
        }
    }

    /// The diagonal pairs alternate: LF and RH stand together, RF and LH swing, and half a
    /// period later the other way round.
    #[test]
    fn diagonal_pairs_alternate() {
        let cfg = QuadrupedConfig::default();
        let at = |t: f64| (0..4).map(|k| leg_phase(&cfg, k, t).0).collect::<Vec<_>>();
        assert_eq!(at(0.1), vec![true, false, false, true]);
        assert_eq!(
            at(0.1 + 0.5 * cfg.gait_period),
            vec![false, true, true, false]
        );
    }

    /// The swing starts behind the hip and lands ahead of it at the neutral point when the
    /// speed is the command (Raibert), on the ground at both ends, meeting it at zero
    /// horizontal and vertical speed; the velocity is the position's derivative.
    #[test]
    fn swing_lands_at_the_neutral_point() {
        let cfg = QuadrupedConfig::default();
        let v = Vector2::new(1.0, 0.0);
        let hip = Vector2::new(2.0, 0.5);
        let (p0, _) = swing_target(&cfg, hip, v, v, 0.0, 0.03);
        let (p1, v1) = swing_target(&cfg, hip, v, v, 1.0, 0.03);
        let half = 0.25 * cfg.gait_period;
        assert!((p0.x - (2.0 - half)).abs() < 1e-12 && (p0.z - 0.03).abs() < 1e-12);
        assert!((p1.x - (2.0 + half)).abs() < 1e-12 && (p1.z - 0.03).abs() < 1e-12);
        // The hip is held still here, so the target's world speed is v_base plus its rate.
        assert!((v1 - Vector3::new(0.0, 0.0, 0.0)).norm() < 1e-9, "{v1}");
        let t_phase = 0.5 * cfg.gait_period;
        for s in [0.2, 0.5, 0.7] {
            let h = 1e-6;
            let (a, _) = swing_target(&cfg, hip, v, v, s - h, 0.03);
            let (b, _) = swing_target(&cfg, hip, v, v, s + h, 0.03);
            let (_, vs) = swing_target(&cfg, hip, v, v, s, 0.03);
            let fd = (b - a) / (2.0 * h * t_phase);
            // Relative to the moving hip: the target's rate is its velocity minus v_base.
            let rel = vs - Vector3::new(v.x, v.y, 0.0);
            assert!((fd - rel).norm() < 1e-5, "s = {s}: {fd} vs {rel}");
        }
    }
}
