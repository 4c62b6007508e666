//! The pinch grasp with a square-wave grip: the point-contact version of Castro et al.'s
//! slip-control test (SAP, sec. VI-D, where hydroelastic pads hold a spatula). A parallel-jaw
//! gripper fixed to the world squeezes a handle whose centre of mass sits off the grip; a strong
//! grip holds it, a weak grip carries its weight but not its moment, so it pitches.
//!
//! # The scene
//!
//! World frame: gravity `-z`, the grip axis `y` (the line between the pads), the handle along
//! `x`. Two fingers slide along `y` on prismatic joints (mass `m_f` each), force-controlled: the
//! finger on the `+y` side is pushed towards `-y` by the grip force `F(t)`, the other towards
//! `+y` by the same force. Each pad carries four spheres of radius `r_p` at `x = +-b`,
//! `z = +-c` (so the grasp can resist a moment about the grip axis: single points cannot). The
//! held body is a rigid plate of half-thickness `w` between the pads (its faces `y = +-w` in its
//! own frame are the contact planes), mass `m`, centre of mass at `x = d` from the grip, inertia
//! of a uniform box `length x 2w x height` about its centre. The grip force is a square wave
//! between `grip_high` (secure) and `grip_low` (loose) of period `period`, secure for the first
//! `duty` of each period; `dt = 5` ms.
//!
//! # The holding threshold
//!
//! By symmetry each pad carries half the weight, `P = m g / 2`, and half the moment about the
//! grip axis, `P d`, with the friction of its four contacts (in the pad's plane, `x-z`). With the
//! pad's normal force `F` shared freely among them (the pad is rigid), the least grip that holds
//! is `F* = (1/mu) min sum |f_i|` subject to `sum f_i = (0, P)` and `sum (x_i f_z - z_i f_x) = P d`
//! (each `N_i = |f_i| / mu` at the optimum). Its dual is `max P (lambda + d tau)` over
//! `|(-z_i tau, lambda + x_i tau)| <= 1` for every contact (the reflection `z -> -z` with
//! `f -> (-f_x, f_z)` leaves the problem unchanged, so a horizontal multiplier is zero). For
//! the contacts `(+-b, +-c)` the best `lambda` for a given `tau` is `sqrt(1 - c^2 tau^2) - b tau`
//! (feasible while `tau <= 1 / sqrt(b^2 + c^2)`), so
//!
//! `F* = (m g / 2 mu) max_tau [ sqrt(1 - c^2 tau^2) + (d - b) tau ]`,
//!
//! which is `m g / 2 mu` when `d <= b` (the weight alone), and otherwise is reached at
//! `tau = min((d - b) / (c sqrt(c^2 + (d - b)^2)), 1 / sqrt(b^2 + c^2))`. With the contacts on
//! the handle's axis (`c = 0`) it is the issue's `F* = (m g / 2 mu) max(1, d / b)`. The defaults
//! (`m = 0.1` kg, `mu = 1`, `d = 0.1` m, `b = 0.01` m, `c = 0.005` m) give `F* = 4.39` N: 1 N
//! carries the weight (0.49 N) but not the moment, 16 N carries both.
//!
//! Exact: in the secure phase nothing moves; in the loose phase the handle pitches about the
//! grip axis.
//!
//! # Contacts and one step
//!
//! A pad sphere of centre `s` and the facing plane of the plate (world normal `n = R (+-e_y)`,
//! a point `p0 = x + R (+-w e_y)`) are a contact when the gap `(s - p0) . n - r_p` is below
//! `margin`; the normal points from the plate to the sphere, the point is `s - r_p n`, the frame
//! the crate's [`contact_frame`]`(n)`. Velocities `[v_1, v_2, v, omega]` (the fingers along `y`,
//! then the plate's, world frame); `A = blockdiag(m_f, m_f, m I3, R I_b R')`; the free motion
//! `v_k* = v_k -+ dt F / m_f`, `v* = v + dt g`, `omega* = omega - dt I_w^-1 (omega x I_w omega)`
//! (explicit gyroscopic term, as the clutter scene); after the solve `v = v* + A^-1 J' r`, then
//! positions and `q = exp(dt omega) q`. The rows of `J` for a frame direction `d` are `d . e_y`
//! on the finger and `-[d, (p - x) x d]` on the plate: the sphere's velocity relative to the
//! plate's point. Contacts are rigid at their gaps.
//!
//! # Observables and constants
//!
//! `t`; `grip` (N); `secure` (1 in the secure phase); `pitch_deg` (the plate's rotation about
//! the grip axis, positive when its far end drops); `tilt_deg` (the angle between the plate's
//! faces and the pads); `slip_speed` (the largest tangential speed of a contact after the step,
//! m/s); `pad_force` (the pads' mean normal force, their contacts' normal impulses over `dt`,
//! N: the grip when the fingers are at rest); `z` (the plate centre's height), `speed`. Constants:
//! `grip_threshold_exact` (`F*`), `weight_threshold_exact` (`m g / 2 mu`), and
//! `sap_slip_estimate`, SAP's estimate of the slip of a held contact (Castro et al. eq. 31,
//! `mu sigma g dt` with SAP's default `sigma = 1e-3`: 49 um/s at the defaults).

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::{ProblemError, StepProblem};
use faer::sparse::Triplet;
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::assemble::{Assembly, Gap};
use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

/// SAP's default `sigma` (Castro et al. sec. V-B), for the slip estimate.
pub const SAP_SIGMA: f64 = 1e-3;

fn default_dt() -> f64 {
    5e-3
}
fn default_duration() -> f64 {
    12.0
}
fn default_mass() -> f64 {
    0.1
}
fn default_mu() -> f64 {
    1.0
}
fn default_offset() -> f64 {
    0.1
}
fn default_b() -> f64 {
    0.01
}
fn default_c() -> f64 {
    0.005
}
fn default_half_thickness() -> f64 {
    0.01
}
fn default_pad_radius() -> f64 {
    0.002
}
fn default_finger_mass() -> f64 {
    0.1
}
fn default_length() -> f64 {
    0.25
}
fn default_height() -> f64 {
    0.05
}
fn default_grip_high() -> f64 {
    16.0
}
fn default_grip_low() -> f64 {
    1.0
}
fn default_period() -> f64 {
    6.0
}
fn default_duty() -> f64 {
    0.75
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    1e-3
}

/// The grasp's parameters (`[scene.params]` of `kind = "pinch_grasp"`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GraspConfig {
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Simulated span (s).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// The held plate's mass `m` (kg).
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Friction between pads and plate.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// The plate's centre of mass from the grip axis along `x`, `d` (m).
    #[serde(default = "default_offset")]
    pub offset: f64,
    /// The pad spheres' `x` offset `b` (m).
    #[serde(default = "default_b")]
    pub b: f64,
    /// The pad spheres' `z` offset `c` (m).
    #[serde(default = "default_c")]
    pub c: f64,
    /// The plate's half-thickness `w` (m).
    #[serde(default = "default_half_thickness")]
    pub half_thickness: f64,
    /// The pad spheres' radius `r_p` (m).
    #[serde(default = "default_pad_radius")]
    pub pad_radius: f64,
    /// Each finger's mass `m_f` (kg).
    #[serde(default = "default_finger_mass")]
    pub finger_mass: f64,
    /// The plate's length along `x`, for its inertia (m).
    #[serde(default = "default_length")]
    pub length: f64,
    /// The plate's height along `z`, for its inertia (m).
    #[serde(default = "default_height")]
    pub height: f64,
    /// The secure grip force (N).
    #[serde(default = "default_grip_high")]
    pub grip_high: f64,
    /// The loose grip force (N).
    #[serde(default = "default_grip_low")]
    pub grip_low: f64,
    /// The square wave's period (s).
    #[serde(default = "default_period")]
    pub period: f64,
    /// The secure share of each period (0 to 1).
    #[serde(default = "default_duty")]
    pub duty: f64,
    /// Gravitational acceleration `g` (m/s^2).
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// A sphere and the plate are a contact while their gap is below this (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
}

impl Default for GraspConfig {
    fn default() -> Self {
        GraspConfig {
            dt: default_dt(),
            duration: default_duration(),
            mass: default_mass(),
            mu: default_mu(),
            offset: default_offset(),
            b: default_b(),
            c: default_c(),
            half_thickness: default_half_thickness(),
            pad_radius: default_pad_radius(),
            finger_mass: default_finger_mass(),
            length: default_length(),
            height: default_height(),
            grip_high: default_grip_high(),
            grip_low: default_grip_low(),
            period: default_period(),
            duty: default_duty(),
            gravity: default_gravity(),
            margin: default_margin(),
        }
    }
}

impl GraspConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors naming the key.
    pub fn from_table(params: &toml::Table) -> Result<GraspConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        crate::params::check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration),
                ("mass", self.mass),
                ("half_thickness", self.half_thickness),
                ("pad_radius", self.pad_radius),
                ("finger_mass", self.finger_mass),
                ("length", self.length),
                ("height", self.height),
                ("period", self.period),
                ("gravity", self.gravity),
            ],
            &[
                ("mu", self.mu),
                ("offset", self.offset),
                ("b", self.b),
                ("c", self.c),
                ("grip_high", self.grip_high),
                ("grip_low", self.grip_low),
                ("margin", self.margin),
            ],
        )?;
        if !(self.duty > 0.0 && self.duty <= 1.0) {
            return Err(SceneError::Param {
                key: "duty",
                message: format!("must be in (0, 1], got {}", self.duty),
            });
        }
        if self.b == 0.0 && self.c == 0.0 {
            return Err(SceneError::Param {
                key: "b",
                message: "b and c cannot both be 0: one point per pad cannot resist a moment \
                          about the grip axis"
                    .into(),
            });
        }
        Ok(())
    }

    /// `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// Whether time `t` lies in a secure phase of the square wave.
    pub fn secure(&self, t: f64) -> bool {
        (t / self.period).fract() < self.duty
    }

    /// The grip force at time `t` (N).
    pub fn grip(&self, t: f64) -> f64 {
        if self.secure(t) {
            self.grip_high
        } else {
            self.grip_low
        }
    }

    /// The least grip that holds the plate, `F*` (see the module doc).
    pub fn grip_threshold(&self) -> f64 {
        let (b, c, d) = (self.b, self.c, self.offset);
        let per_pad = self.mass * self.gravity / (2.0 * self.mu);
        if d <= b {
            return per_pad;
        }
        let reach = 1.0 / (b * b + c * c).sqrt();
        let tau = if c == 0.0 {
            reach
        } else {
            ((d - b) / (c * (c * c + (d - b) * (d - b)).sqrt())).min(reach)
        };
        per_pad * ((1.0 - c * c * tau * tau).max(0.0).sqrt() + (d - b) * tau)
    }

    /// The plate's inertia about its centre, in its own frame (a uniform box).
    pub fn plate_inertia(&self) -> Matrix3<f64> {
        let (l, t, h) = (self.length, 2.0 * self.half_thickness, self.height);
        let k = self.mass / 12.0;
        Matrix3::from_diagonal(&Vector3::new(
            k * (t * t + h * h),
            k * (l * l + h * h),
            k * (l * l + t * t),
        ))
    }
}

/// The grasp (see the module doc).
#[derive(Debug, Clone)]
pub struct PinchGrasp {
    /// The parameters.
    pub config: GraspConfig,
    /// The fingers' sphere-centre `y` (the `+y` finger first).
    pub fingers: [f64; 2],
    /// The fingers' velocities along `y`.
    pub finger_v: [f64; 2],
    /// The plate's centre of mass.
    pub p: Vector3<f64>,
    /// The plate's orientation.
    pub q: UnitQuaternion<f64>,
    /// The plate's velocity.
    pub v: Vector3<f64>,
    /// The plate's angular velocity (world).
    pub w: Vector3<f64>,
    /// Steps taken.
    pub steps: usize,
    /// The last step's largest contact slip speed (m/s).
    pub slip: f64,
    /// The last step's normal force of each pad: its contacts' normal impulses over `dt` (N).
    pub pad_force: [f64; 2],
}

/// The side of finger `k`: `+1` for the finger on `+y`, `-1` for the other.
fn side(k: usize) -> f64 {
    if k == 0 {
        1.0
    } else {
        -1.0
    }
}

/// A contact found by [`PinchGrasp::contacts`].
struct Found {
    contact: Contact,
    finger: usize,
    arm: Vector3<f64>,
}

impl PinchGrasp {
    /// The grasp at rest, the pads touching the plate, for `config`.
    pub fn new(config: &GraspConfig) -> Result<PinchGrasp, SceneError> {
        config.validate()?;
        let y = config.half_thickness + config.pad_radius;
        Ok(PinchGrasp {
            fingers: [y, -y],
            finger_v: [0.0; 2],
            p: Vector3::new(config.offset, 0.0, 0.0),
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
            steps: 0,
            slip: 0.0,
            pad_force: [0.0; 2],
            config: config.clone(),
        })
    }

    /// The simulated time `steps dt` (s).
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.config.dt
    }

    /// The pad spheres' centres of finger `k`.
    fn pad(&self, k: usize) -> [Vector3<f64>; 4] {
        let (b, c, y) = (self.config.b, self.config.c, self.fingers[k]);
        [
            Vector3::new(b, y, c),
            Vector3::new(b, y, -c),
            Vector3::new(-b, y, c),
            Vector3::new(-b, y, -c),
        ]
    }

    /// The plate's inertia in the world frame.
    fn world_inertia(&self) -> Matrix3<f64> {
        let r = self.q.to_rotation_matrix();
        r.matrix() * self.config.plate_inertia() * r.matrix().transpose()
    }

    /// Every pad sphere within the margin of the plate face it faces.
    fn contacts(&self) -> Vec<Found> {
        let c = &self.config;
        let mut out = Vec::new();
        for k in 0..2 {
            let n = self.q * (side(k) * Vector3::y());
            let p0 = self.p + self.q * (side(k) * c.half_thickness * Vector3::y());
            for (j, s) in self.pad(k).iter().enumerate() {
                let gap = (s - p0).dot(&n) - c.pad_radius;
                if gap >= c.margin {
                    continue;
                }
                let point = s - c.pad_radius * n;
                out.push(Found {
                    contact: Contact {
                        key: ContactKey::PairPoint {
                            a: k,
                            b: 2,
                            feature: j as u64,
                        },
                        frame: contact_frame(n),
                        gap,
                    },
                    finger: k,
                    arm: point - self.p,
                });
            }
        }
        out
    }

    /// The velocities after the grip, gravity and the gyroscopic term.
    fn free_velocity(&self) -> Vec<f64> {
        let c = &self.config;
        let grip = c.grip(self.time());
        let inertia = self.world_inertia();
        let gyro = inertia.try_inverse().map_or(Vector3::zeros(), |inv| {
            inv * self.w.cross(&(inertia * self.w))
        });
        let w = self.w - c.dt * gyro;
        let v = self.v + c.dt * Vector3::new(0.0, 0.0, -c.gravity);
        vec![
            self.finger_v[0] - c.dt * grip / c.finger_mass,
            self.finger_v[1] + c.dt * grip / c.finger_mass,
            v.x,
            v.y,
            v.z,
            w.x,
            w.y,
            w.z,
        ]
    }

    /// The generalized problem of these contacts.
    fn problem(&self, found: &[Found], free: &[f64]) -> Result<GeneralizedProblem, SceneError> {
        let c = &self.config;
        let inertia = self.world_inertia();
        let mut a = vec![
            Triplet::new(0, 0, c.finger_mass),
            Triplet::new(1, 1, c.finger_mass),
        ];
        for k in 0..3 {
            a.push(Triplet::new(2 + k, 2 + k, c.mass));
            for l in 0..3 {
                a.push(Triplet::new(5 + k, 5 + l, inertia[(k, l)]));
            }
        }
        let mut jt = Vec::new();
        for (ci, f) in found.iter().enumerate() {
            for r in 0..3 {
                let d: Vector3<f64> = f.contact.frame.row(r).transpose();
                jt.push(Triplet::new(3 * ci + r, f.finger, d.y));
                let ang = f.arm.cross(&d);
                for k in 0..3 {
                    jt.push(Triplet::new(3 * ci + r, 2 + k, -d[k]));
                    jt.push(Triplet::new(3 * ci + r, 5 + k, -ang[k]));
                }
            }
        }
        Assembly {
            nv: 8,
            a,
            j: jt,
            contacts: found.iter().map(|f| (f.contact.gap, c.mu)).collect(),
            free: free.to_vec(),
            velocity: vec![
                self.finger_v[0],
                self.finger_v[1],
                self.v.x,
                self.v.y,
                self.v.z,
                self.w.x,
                self.w.y,
                self.w.z,
            ],
            tree_of: vec![0, 1, 2, 2, 2, 2, 2, 2],
            dt: c.dt,
            gap: Gap::Touching,
        }
        .problem()
    }

    /// The plate's rotation about the grip axis (degrees; positive when its far end drops).
    pub fn pitch_deg(&self) -> f64 {
        let axis = self.q * Vector3::x();
        (-axis.z).atan2(axis.x).to_degrees()
    }

    /// The angle between the plate's faces and the pads (degrees): 0 while the plate only
    /// pitches about the grip axis.
    pub fn tilt_deg(&self) -> f64 {
        (self.q * Vector3::y())
            .y
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees()
    }
}

impl Scene for PinchGrasp {
    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let found = self.contacts();
        let free = self.free_velocity();
        let problem = self.problem(&found, &free)?;
        Ok(ContactStep {
            contacts: found.into_iter().map(|f| f.contact).collect(),
            problem: StepProblem::from(problem),
            free,
        })
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        step.check_impulses(r, Some(8))?;
        let mut vel = step.free.clone();
        let mut u = vec![0.0; r.len()];
        if let Some(g) = step.problem.generalized() {
            let (cols, rows, vals) = (
                g.j.symbolic().col_ptr(),
                g.j.symbolic().row_idx(),
                g.j.val(),
            );
            let mut jt_r = [0.0; 8];
            for (col, out) in jt_r.iter_mut().enumerate() {
                *out = (cols[col]..cols[col + 1])
                    .map(|k| vals[k] * r[rows[k]])
                    .sum();
            }
            let c = &self.config;
            vel[0] += jt_r[0] / c.finger_mass;
            vel[1] += jt_r[1] / c.finger_mass;
            for k in 0..3 {
                vel[2 + k] += jt_r[2 + k] / c.mass;
            }
            let inv = self
                .world_inertia()
                .try_inverse()
                .ok_or(SceneError::NonFinite("plate inertia"))?;
            let dw = inv * Vector3::new(jt_r[5], jt_r[6], jt_r[7]);
            for k in 0..3 {
                vel[5 + k] += dw[k];
            }
            for col in 0..8 {
                for k in cols[col]..cols[col + 1] {
                    u[rows[k]] += vals[k] * vel[col];
                }
            }
        } else if !r.is_empty() {
            return Err(SceneError::Problem(ProblemError::Shape {
                field: "step".into(),
                expected: "this scene's generalized problem".into(),
                found: "a contact-space problem".into(),
            }));
        }
        self.slip = u
            .chunks_exact(3)
            .map(|c| c[1].hypot(c[2]))
            .fold(0.0, f64::max);
        self.pad_force = [0.0; 2];
        for (contact, rc) in step.contacts.iter().zip(r.chunks_exact(3)) {
            if let ContactKey::PairPoint { a, .. } = contact.key {
                if a < 2 {
                    self.pad_force[a] += rc[0] / self.config.dt;
                }
            }
        }
        let dt = self.config.dt;
        self.finger_v = [vel[0], vel[1]];
        self.fingers[0] += dt * vel[0];
        self.fingers[1] += dt * vel[1];
        self.v = Vector3::new(vel[2], vel[3], vel[4]);
        self.w = Vector3::new(vel[5], vel[6], vel[7]);
        self.p += dt * self.v;
        self.q = UnitQuaternion::from_scaled_axis(dt * self.w) * self.q;
        self.steps += 1;
        if !(vel.iter().all(|x| x.is_finite()) && self.p.iter().all(|x| x.is_finite())) {
            return Err(SceneError::NonFinite("state"));
        }
        Ok(())
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        // The grip and phase that acted over the step just taken.
        let t = self.time();
        let acted = t - self.config.dt;
        vec![
            ("t", t),
            ("grip", self.config.grip(acted)),
            ("secure", f64::from(u8::from(self.config.secure(acted)))),
            ("pitch_deg", self.pitch_deg()),
            ("tilt_deg", self.tilt_deg()),
            ("slip_speed", self.slip),
            ("pad_force", 0.5 * (self.pad_force[0] + self.pad_force[1])),
            ("x", self.p.x),
            ("y", self.p.y),
            ("z", self.p.z),
            ("speed", self.v.norm()),
        ]
    }

    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        let c = &self.config;
        vec![
            ("grip_threshold_exact", c.grip_threshold()),
            ("weight_threshold_exact", c.mass * c.gravity / (2.0 * c.mu)),
            ("sap_slip_estimate", c.mu * SAP_SIGMA * c.gravity * c.dt),
        ]
    }

    fn finished(&self) -> bool {
        self.steps >= self.config.steps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestSolver;

    /// The threshold: the closed form on the axis, the defaults' 4.39 N, the weight
    /// alone when the centre of mass is between the contacts, and the dual's maximum found by
    /// a plain search over `tau`.
    #[test]
    fn the_grip_threshold_is_the_dual_optimum() {
        let on_axis = GraspConfig {
            c: 0.0,
            ..GraspConfig::default()
        };
        let mg2 = 0.1 * 9.81 / 2.0;
        assert!((on_axis.grip_threshold() - mg2 * 10.0).abs() < 1e-12);
        let cfg = GraspConfig::default();
        assert!(
            (cfg.grip_threshold() - 4.39).abs() < 5e-3,
            "{}",
            cfg.grip_threshold()
        );
        let near = GraspConfig {
            offset: 0.005,
            ..GraspConfig::default()
        };
        assert!((near.grip_threshold() - mg2).abs() < 1e-12);
        for (c, d) in [(0.005, 0.1), (0.01, 0.1), (0.02, 0.05)] {
            let g = GraspConfig {
                c,
                offset: d,
                ..GraspConfig::default()
            };
            let (b, reach) = (g.b, 1.0 / (g.b * g.b + c * c).sqrt());
            let best = (0..=200_000)
                .map(|k| reach * k as f64 / 200_000.0)
                .map(|t| (1.0 - c * c * t * t).max(0.0).sqrt() + (d - b) * t)
                .fold(f64::MIN, f64::max);
            assert!((g.grip_threshold() - mg2 * best).abs() < 1e-6, "{c} {d}");
        }
        // Low grip carries the weight, not the moment; high grip both.
        assert!(cfg.grip_low > mg2 && cfg.grip_low < cfg.grip_threshold());
        assert!(cfg.grip_high > cfg.grip_threshold());
    }

    /// A secure grip holds the plate (SAP's regularised slip aside); a loose phase then lets it
    /// pitch, its far end down.
    #[test]
    fn secure_holds_and_loose_pitches() {
        let cfg = GraspConfig {
            period: 0.4,
            duty: 0.5,
            ..GraspConfig::default()
        };
        let mut g = PinchGrasp::new(&cfg).unwrap();
        // SAP's model is strictly convex: one answer, the one a compliant pad gives (the rigid
        // problem is statically indeterminate: a pad's normal force may gather on one sphere).
        let solver = TestSolver::new("sap", "newton-merit", 1e-10, 100);
        let mut warm: Option<Vec<f64>> = None;
        let mut secure_pitch = 0.0f64;
        for _ in 0..80 {
            let step = g.contact_step().unwrap();
            assert_eq!(step.contacts.len(), 8);
            let s = solver.solve(&step.problem, warm.as_deref());
            g.advance(&step, &s.r).unwrap();
            warm = Some(s.r);
            if cfg.secure(g.time() - cfg.dt) {
                secure_pitch = secure_pitch.max(g.pitch_deg().abs());
            }
        }
        // SAP slips at about mu sigma g dt (49 um/s) on a held contact: a few hundredths of a
        // degree over the secure phase.
        assert!(secure_pitch < 0.1, "{secure_pitch}");
        assert!(g.pitch_deg() > 5.0, "{}", g.pitch_deg());
    }

    /// Without impulses the fingers close on nothing and the plate falls: the Jacobian's
    /// normal rows read the sphere's approach to the face.
    #[test]
    fn normal_rows_read_the_approach() {
        let g = PinchGrasp::new(&GraspConfig::default()).unwrap();
        let step = g.contact_step().unwrap();
        let j = step.problem.generalized().unwrap().j.to_dense();
        // The +y finger moving towards -y closes its contacts (u_n < 0); the plate moving
        // towards +y closes them too; moving both together leaves the gap.
        for (ci, c) in step.contacts.iter().enumerate() {
            let ContactKey::PairPoint { a, .. } = c.key else {
                panic!()
            };
            let s = side(a);
            let mut v = [0.0; 8];
            v[a] = -s;
            let un: f64 = (0..8).map(|k| j[(3 * ci, k)] * v[k]).sum();
            assert!((un + 1.0).abs() < 1e-12, "{un}");
            v[3] = -s;
            let un: f64 = (0..8).map(|k| j[(3 * ci, k)] * v[k]).sum();
            assert!(un.abs() < 1e-12, "{un}");
        }
    }

    /// Bad parameters name the key.
    #[test]
    fn bad_parameters_name_the_key() {
        for (text, key) in [
            ("duty = 1.5", "duty"),
            ("mass = 0.0", "mass"),
            ("b = 0.0\nc = 0.0", "b"),
            ("grip = 3.0", "grip"),
        ] {
            let e = GraspConfig::from_table(&text.parse().unwrap())
                .and_then(|c| c.validate())
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
    }
}
