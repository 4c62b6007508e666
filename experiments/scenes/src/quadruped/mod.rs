//! The quadruped of Hwangbo, Lee and Hutter 2018 (section V-A, the four tasks of Table II and
//! Figs. 4-7), in minimal coordinates on [`contactlab_multibody`].
//!
//! # The robot
//!
//! `multibody/robots/quadruped.toml` (the `robot` parameter, relative to the workspace root):
//! ANYmal's proportions as the paper gives them ("about 35 kg", 12 joints, 18 DOF, sphere
//! feet, a box torso), a floating base and four legs of three revolute joints (HAA, HFE, KFE);
//! the file says which link dimensions are approximate. `q = [x y z qx qy qz qw, joints]`,
//! `v = [v_lin, omega (both in the base frame), joint rates]` (Pinocchio's free-flyer, see the
//! `multibody` crate docs). The nominal crouch is HAA 0, HFE `+-stance_hfe = +-0.4`, KFE
//! `-+stance_kfe = -+0.8` rad (fore, hind: ANYmal's "X" stance, knees pointing inwards); it puts
//! the base 0.537 m above the ground with the feet touching.
//!
//! # One step (the paper's section II, eqs. 1-5)
//!
//! The paper's discretisation with impulses at the velocity level:
//! `u+ = u- + M^-1 (dt (tau - h) + J' lambda)`. Here `v* = v + dt M^-1 (tau - h)` with `M` from
//! CRBA and `h` (Coriolis, centrifugal, gravity) from RNEA at the step's start, `tau` the joint
//! torques below, and the step's problem is the rigid contact problem: `A = M`, `J` three rows
//! per contact (normal first, then world `x` and `y`: [`ground_frame`]), `v*`, and per contact
//! `ContactModel::rigid(mu)` with `phi0` = its gap; its contact-space form is given alongside
//! ([`StepProblem::with_local`](contactlab_core::StepProblem::with_local)), `W = J M^-1 J'`
//! (formed as `Y'Y`, `Y = L^-1 J'`, symmetric PSD to the last bit) and `q = J v* + b`:
//! the paper's `M^-1_{i,k}` blocks and free contact velocities (its `c_i`, eq. 5, before the
//! other contacts' terms), which Hwangbo's per-contact solvers and PGS work on. `advance`
//! applies `v+ = v* + M^-1 J' r` and moves `q` by [`Model::integrate`] with `v+` (semi-implicit
//! Euler). The contact law is the paper's: inelastic, Signorini in velocity space
//! (`r_n >= 0, u_n >= 0, r_n u_n = 0`), Coulomb's cone with one `mu` for all contacts.
//!
//! # Contacts, and the gap
//!
//! Candidates: each foot sphere's lowest point against the ground `z = 0` (`ContactKey::Wall {
//! ball: foot body, wall: GROUND }`), and in drop and random the torso box's 8 corners
//! (`ContactKey::WallPoint`): the paper's "maximum possible number of contacts" is 4 for hang
//! and trot (feet) and 8 for drop and random (feet and torso). `torso_collides` overrides the
//! task's choice (the random task with feet only, say). A candidate is a contact when its gap
//! is at most `margin`.
//!
//! The paper writes Signorini on velocities "for computational simplicity" and adds no
//! position correction ("A drift in the position level constraint is possible"; "the
//! penetration is unavoidable ... can be adjusted by introducing a small spring term"). So the
//! default `margin = 0`: a contact exists once the gap is zero or negative, there is no
//! Baumgarte term, and `b = 0`. Two consequences, both measured (PGS, `dt = 1 ms`):
//!
//! * an impact at speed `v` penetrates by up to `v dt` in its step and stays there: the drop's
//!   limp robot reaches the ground with its torso at about 4-5 m/s, and the deepest point is
//!   6.4 mm in (in random, whose PD targets swing the feet hard, 15 mm in the first second);
//!   the penetration then stays (no correction), and shrinks only when that point lifts off;
//! * positions drift at second order: a contact held at `u_n = 0` moves by
//!   `dt^2 / 2` times its centripetal acceleration per step. Standing, that acceleration points
//!   up (the feet lift a hair and fall back); hanging below its feet it points down, into the
//!   ground, every step: in hang the mean foot penetration (the paper's Fig. 7 quantity,
//!   [`Quadruped::foot_penetration`]) grows to 4.6 mm at 2 s, 17 mm at 10 s and 20 mm at 12 s
//!   (deepest foot 35 mm) while the robot swings, about 1.5 mm/s.
//!
//! `margin > 0` is the option against the first: contacts found up to `margin` early carry
//! `b_n = gap / dt`, so `u_n >= 0` says `gap + dt v_n >= 0`: the step may close the gap but
//! not cross it, and a contact pushes only once the surfaces meet. With `margin = 0.01` the
//! drop's deepest point stays at 2.0 mm (drift only). Touching and penetrating contacts keep
//! `b_n = 0` either way.
//!
//! # Implicit gains (`implicit_gains = true`)
//!
//! The torques are explicit: evaluated at the step's start from `(q, v)`. A PD law is then
//! stable only while `kd dt / I` stays below 2 for the lightest link, which `dt = 20 ms` (the
//! paper's "stable at 50 Hz") breaks for the joint PD (`kd = 4`, a shank of about 0.02 kg m^2)
//! and the raibert trot's swinging feet. With `implicit_gains` the rate-dependent part of the
//! torques is taken at the step's end, as stable PD controllers do (J. Tan, K. Liu and G. Turk,
//! "Stable proportional-derivative controllers", IEEE CG&A 31(4), 2011; MuJoCo's implicit
//! damping): a law `tau = tau_0 - D v` with `D = kd + dt kp` (the spring evaluated at `q + dt
//! v+`) gives `(M + dt D) v+ = M v + dt (tau_0 - h) + J' lambda`, i.e. the same step with
//! `A = M + dt D` and `v* = v + dt A^-1 (tau - h)`, `tau` the explicit torques. The contact
//! problem is built on that `A` (`W = J A^-1 J'`). Joints whose torque clips keep the explicit
//! clipped torque; the raibert trot's stance forces stay explicit (their gains are soft).
//!
//! # Control
//!
//! The paper's ANYmal has series-elastic actuators under joint PD control (the paper gives
//! neither gains nor actuator model). Here every joint is an ideal torque source with an
//! explicit PD law evaluated at the step's start, `tau = clip(kp (q_target - q) - kd qdot,
//! +-torque_limit)`, `kp = 200 N m/rad`, `kd = 4 N m s/rad`, `torque_limit = 40 N m` (about
//! the peak torque of ANYmal's actuators): stiff enough to hold the crouch within 4 mm of sag
//! (the knees carry about 10 N m each), and `kd dt / I` stays far below the explicit limit of 2
//! for the lightest link (a shank with its foot, about 0.02 kg m^2 about the knee). Hang and
//! drop are the paper's unactuated tasks ("For unactuated tasks, the simulation is stable even
//! when a very large time step ... is employed"; task 2 is the one that is not "actuated"):
//! their joints are passive, `tau = -joint_damping qdot`, with `joint_damping = 0` (the
//! paper's "the robot still swings around due to the conservation of energy").
//!
//! # The tasks (`task`), as the paper defines them and where it is silent
//!
//! * `hang` (task 2): "thrown in the air with zero initial velocity and 1 m height. The
//!   unilateral constraints keep only the feet (not the torso) above the ground, emulating
//!   upside down hanging behavior". Released at rest, the base 1 m up (`height`; the paper does
//!   not say which point is 1 m up: we take the base frame's origin, the torso's centre), in
//!   the nominal crouch, joints passive, feet-only contacts. The feet land at 0.31 s, the limp
//!   legs fold, and at about 2.5 s the torso passes through the ground and the robot hangs
//!   below its feet (base at about -0.5 m), swinging, as the paper describes. No reset.
//! * `drop` (task 3): "1 m/s initial tangential velocity and 1 m initial height ... keep both
//!   the feet and the torso above the ground. The simulation resets when there is no
//!   significant motion observed." Released as in hang with the base moving forward (world
//!   `x`) at `drop_speed = 1 m/s`, joints passive, feet and torso contacts. "No significant
//!   motion": after the first contact, the kinetic energy stays below `rest_energy = 0.01 J`
//!   for `rest_duration = 0.1 s`; the robot then restarts from the release state. Measured:
//!   the limp robot lands on its feet, then its torso, and is at rest after 2.9-3.7 s per episode
//!   (three resets in 12 s). A cap `drop_timeout = 10 s` resets an episode that never
//!   settles.
//! * `random` (task 4): "thrown into the air. The joints are controlled by a PD controller and
//!   the reference inputs are given randomly with 1 rad^2 variance. The simulation resets every
//!   5 s." Released as in hang (the paper gives no height: we keep 1 m), PD towards targets
//!   `nominal + N(0, target_variance = 1 rad^2)` independently per joint, feet and torso
//!   contacts, reset to the release state every `reset_period = 5 s`. How often the
//!   "reference inputs" change the paper does not say; it collects reinforcement-learning data,
//!   whose policies act many times per episode, and reports "frequent slippages at the feet",
//!   so targets are redrawn every `target_period = 0.2 s` (`target_period = 5` gives one
//!   target per episode). Targets from ChaCha8 seeded by `seed` (Box-Muller normals): runs
//!   repeat exactly.
//! * `trot` (task 1): the paper's robot "runs forward at 1.5 m/s with its legs moving in
//!   diagonal pairs", under a controller the paper does not give. Here an open-loop diagonal
//!   gait tracked by the PD law, from standing, feet-only contacts, no reset: each leg's phase
//!   is `s = 2 pi t / gait_period + (0 for LF and RH, pi for RF and LH)`, its hip target
//!   `nominal + hfe_amplitude cos s` (the foot swings forward while `sin s > 0` and pushes
//!   backwards on the ground otherwise) and its knee bends further by
//!   `kfe_amplitude max(sin s, 0)`, lifting the swinging foot; amplitudes ramp up over the
//!   first cycle. Defaults `gait_period = 0.5 s`, `hfe_amplitude = 0.2`, `kfe_amplitude = 0.4
//!   rad`: the base moves forward at 0.42 m/s on average over 2 s (the observable
//!   `mean_forward_speed`), well below the paper's 1.5 m/s, which needs a real locomotion
//!   controller (feedback on the base's attitude and speed). `trot_controller = "raibert"` is
//!   one ([`trot`]): Raibert's foot placement for the swinging pair and virtual-model stance
//!   forces (gravity, height, speed and attitude PD shared over the stance feet), commanded
//!   to `trot_speed = 1.5 m/s` after a ramp, at `trot_height = 0.5 m` with `swing_height =
//!   0.08 m` of clearance.
//! * `stand` (not the paper's): the trot's start held at the crouch by the PD law, for tests.
//!
//! # Observables (one DataFrame column each)
//!
//! `base_height` (base origin `z`, m), `base_x` (m), `forward_speed` (the base's world `x`
//! velocity, m/s), `mean_forward_speed` (`x` travelled since the episode's start over its
//! duration), `active_contacts` (contacts of the step just taken), `normal_impulse` (their
//! summed normal impulse, N s: `m g dt = 0.343 N s` at rest), `max_penetration` (the deepest
//! point of the task's geometry now, m), `foot_penetration` (mean penetration of the feet that
//! touch, the paper's Fig. 7), `kinetic_energy` (J), `resets` (so far), `task_time` (time since
//! the episode began, s), `torso_contacts` (torso corners among the step's contacts),
//! `max_joint_torque` (the largest `|tau|` of the joint torques at the new state, N m), and the
//! diagonal dominance of the step's Delassus matrix `W`: `delassus_row_dominance`
//! ([`row_dominance`], the scalar one a per-component PGS sweep sees) and
//! `delassus_block_dominance` ([`block_dominance`], the per-contact one), both NaN without
//! contacts. The dominance is computed from the step's blocks when the observables are read,
//! outside the timed step.

pub mod config;
pub mod controller;
#[cfg(test)]
mod tests;
pub mod trot;

use contactlab_core::generalized::sparse_transpose_mul_add;
use contactlab_core::{ContactModel, GeneralizedProblem, LocalProblem, Matrix, ProblemError};
use contactlab_multibody::{BoxShape, Joint, Model, Sphere, Transform};
use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;
use nalgebra::{Cholesky, DMatrix, DVector, Dyn, Matrix3, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use config::{QuadrupedConfig, Task, TrotController, DEFAULT_ROBOT};
pub use controller::{JointLayout, Leg, LEG_NAMES};

use crate::error::SceneError;
use crate::scene::{Contact, ContactKey, ContactStep, Scene};

/// The obstacle index of the ground plane `z = 0` in contact keys.
pub const GROUND: usize = 0;

/// How far the feet of a robot that starts standing are placed into the ground (m).
pub const STANDING_OVERLAP: f64 = 1e-9;

/// The contact frame of every ground contact, rows `[n, t1, t2]` in world coordinates:
/// normal `+z`, tangents `x` and `y` (right-handed: `x cross y = z`).
pub fn ground_frame() -> Matrix3<f64> {
    Matrix3::new(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0)
}

/// A point of the robot's collision geometry that may touch the ground.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The contact's key (feet: `Wall { ball: body }`, box corners: `WallPoint`).
    pub key: ContactKey,
    /// The body carrying the point.
    pub body: usize,
    /// The point in the body's frame (a sphere's lowest point, a box corner).
    pub point: Vector3<f64>,
    /// Its height above the ground (negative: penetration).
    pub gap: f64,
    /// Whether the point is on a foot sphere (else on the torso box).
    pub foot: bool,
}

/// The quadruped scene: the robot, its task, its controller and its state.
#[derive(Debug, Clone)]
pub struct Quadruped {
    config: QuadrupedConfig,
    model: Model,
    layout: JointLayout,
    nominal: DVector<f64>,
    feet: Vec<(usize, Sphere)>,
    boxes: Vec<(usize, BoxShape)>,
    q0: DVector<f64>,
    v0: DVector<f64>,
    q: DVector<f64>,
    v: DVector<f64>,
    targets: DVector<f64>,
    rng: ChaCha8Rng,
    time: f64,
    task_steps: u64,
    landed: bool,
    rest_time: f64,
    resets: usize,
    start_x: f64,
    last_contacts: usize,
    last_torso_contacts: usize,
    last_normal_impulse: f64,
    /// The last step's Delassus blocks `W_ab`, row-major over its contacts (for the
    /// dominance observables, computed outside the timed step).
    last_blocks: Vec<Matrix3<f64>>,
    legs: Option<[trot::LegGeometry; 4]>,
    speed_integral: trot::SpeedIntegral,
}

fn robot_error(message: String) -> SceneError {
    SceneError::Param {
        key: "robot",
        message,
    }
}

/// The Delassus matrix `W = J M^-1 J'` as `Y'Y` with `Y = L^-1 J'` (`M = L L'` by `chol`),
/// copied symmetric: symmetric positive semidefinite to the last bit.
fn delassus(chol: &Cholesky<f64, Dyn>, j: &DMatrix<f64>) -> Result<Mat<f64>, SceneError> {
    let y = chol
        .l()
        .solve_lower_triangular(&j.transpose())
        .ok_or(SceneError::NonFinite("mass matrix (singular factor)"))?;
    let yy = y.transpose() * &y;
    let n = j.nrows();
    Ok(Mat::<f64>::from_fn(n, n, |r, c| {
        if r >= c {
            yy[(r, c)]
        } else {
            yy[(c, r)]
        }
    }))
}

/// The sparse form of the dense `x` (its nonzero entries), an error naming `field`.
fn sparse(x: &DMatrix<f64>, field: &str) -> Result<SparseColMat<usize, f64>, SceneError> {
    let mut t = Vec::new();
    for c in 0..x.ncols() {
        for r in 0..x.nrows() {
            if x[(r, c)] != 0.0 {
                t.push(Triplet::new(r, c, x[(r, c)]));
            }
        }
    }
    SparseColMat::try_new_from_triplets(x.nrows(), x.ncols(), &t).map_err(|e| {
        SceneError::Problem(ProblemError::Shape {
            field: field.into(),
            expected: "a valid sparse matrix".into(),
            found: format!("{e:?}"),
        })
    })
}

fn non_finite(field: &str, values: &[f64]) -> Result<(), SceneError> {
    match values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        Some((index, value)) => Err(SceneError::Problem(ProblemError::NonFinite {
            field: field.into(),
            index,
            value: *value,
        })),
        None => Ok(()),
    }
}

impl Quadruped {
    /// Builds the scene: checks the parameters, loads the robot (errors name `robot`), and
    /// places it in the task's initial state.
    pub fn new(config: &QuadrupedConfig) -> Result<Quadruped, SceneError> {
        config.validate()?;
        let path = config.robot_path();
        let model = Model::from_path(&path)
            .map_err(|e| robot_error(format!("cannot load {}: {e}", path.display())))?;
        if model.bodies().first().map(|b| b.joint) != Some(Joint::Floating) {
            return Err(robot_error(format!(
                "{}: the first link must have a floating joint (the base)",
                path.display()
            )));
        }
        let layout = JointLayout::from_model(&model)?;
        let nominal = layout.nominal(config);
        let feet: Vec<(usize, Sphere)> = model
            .bodies()
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.spheres.iter().map(move |s| (i, *s)))
            .collect();
        if feet.is_empty() {
            return Err(robot_error(format!(
                "{}: no collision spheres (the feet)",
                path.display()
            )));
        }
        let boxes = model
            .bodies()
            .iter()
            .enumerate()
            .flat_map(|(i, b)| b.boxes.iter().map(move |s| (i, *s)))
            .collect();
        let legs = leg_geometry(&model, &feet);
        if config.task == Task::Trot && config.trot_controller == TrotController::Raibert {
            legs.ok_or_else(|| {
                robot_error(format!(
                    "{}: the raibert trot needs links X_thigh and a foot sphere below X_shank \
                     on every leg",
                    path.display()
                ))
            })?;
        }
        let nv = model.nv();
        let mut scene = Quadruped {
            config: config.clone(),
            q0: model.neutral_configuration(),
            v0: DVector::zeros(nv),
            q: model.neutral_configuration(),
            v: DVector::zeros(nv),
            targets: nominal.clone(),
            model,
            layout,
            nominal,
            feet,
            boxes,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            time: 0.0,
            task_steps: 0,
            landed: false,
            rest_time: 0.0,
            resets: 0,
            start_x: 0.0,
            last_contacts: 0,
            last_torso_contacts: 0,
            last_normal_impulse: 0.0,
            last_blocks: Vec::new(),
            legs,
            speed_integral: trot::SpeedIntegral::default(),
        };
        scene.place_initial_state()?;
        scene.start_episode();
        Ok(scene)
    }

    /// The initial state of the task (module doc): the nominal crouch, standing on the feet
    /// (trot, stand) or released with the base at `height` (hang, drop, random; drop with
    /// `drop_speed` forward), everything else at rest.
    fn place_initial_state(&mut self) -> Result<(), SceneError> {
        let cfg = &self.config;
        let mut q = self.model.neutral_configuration();
        self.layout.set_angles(&mut q, &self.nominal);
        // With the base at the origin, the lowest point of the task's geometry.
        let lowest = self
            .candidates_at(&q)
            .iter()
            .map(|c| c.gap)
            .fold(f64::INFINITY, f64::min);
        let foot_lowest = self
            .candidates_at(&q)
            .iter()
            .filter(|c| c.foot)
            .map(|c| c.gap)
            .fold(f64::INFINITY, f64::min);
        let mut v = DVector::zeros(self.model.nv());
        if cfg.task.starts_standing() {
            // Feet on the ground, a nanometre in so that rounding cannot leave one a hair
            // above it: all four are active from the first step.
            q[2] = -foot_lowest - STANDING_OVERLAP;
        } else {
            if cfg.height + lowest <= 0.0 {
                return Err(SceneError::Param {
                    key: "height",
                    message: format!(
                        "the robot must start above the ground: at height {} its lowest point \
                         is {:.3} m below it (height above {:.3} m needed)",
                        cfg.height,
                        -(cfg.height + lowest),
                        -lowest
                    ),
                });
            }
            q[2] = cfg.height;
            if cfg.task == Task::Drop {
                // The base starts level: its frame's x is the world's.
                v[0] = cfg.drop_speed;
            }
        }
        self.q0 = q.clone();
        self.v0 = v.clone();
        self.q = q;
        self.v = v;
        Ok(())
    }

    /// Starts an episode (at construction and at every reset): the initial state, the task
    /// clock at zero, fresh random targets for the random task.
    fn start_episode(&mut self) {
        self.q = self.q0.clone();
        self.v = self.v0.clone();
        self.task_steps = 0;
        self.speed_integral = trot::SpeedIntegral::default();
        self.landed = false;
        self.rest_time = 0.0;
        self.start_x = self.q[0];
        self.targets = match self.config.task {
            Task::Random => controller::random_targets(
                &self.nominal,
                self.config.target_variance,
                &mut self.rng,
            ),
            _ => self.nominal.clone(),
        };
    }

    /// The scene's parameters.
    pub fn config(&self) -> &QuadrupedConfig {
        &self.config
    }

    /// The robot.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The joint layout (which coordinates are which leg's joints).
    pub fn layout(&self) -> &JointLayout {
        &self.layout
    }

    /// The configuration `q` (Pinocchio's free-flyer layout, `multibody` crate docs).
    pub fn q(&self) -> &DVector<f64> {
        &self.q
    }

    /// The generalized velocities `v`.
    pub fn v(&self) -> &DVector<f64> {
        &self.v
    }

    /// The joint angles of the nominal crouch.
    pub fn nominal(&self) -> &DVector<f64> {
        &self.nominal
    }

    /// Simulated time since the start (s).
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Time since the current episode started (the last reset) (s).
    pub fn task_time(&self) -> f64 {
        self.task_steps as f64 * self.config.dt
    }

    /// Resets so far.
    pub fn resets(&self) -> usize {
        self.resets
    }

    /// The PD targets in use now (the trot's depend on the time).
    pub fn targets(&self) -> DVector<f64> {
        match self.config.task {
            Task::Trot => controller::trot_targets(
                &self.layout,
                &self.nominal,
                &self.config,
                self.task_time(),
            ),
            _ => self.targets.clone(),
        }
    }

    /// The joint torques of this step: PD towards the targets for the actuated tasks, passive
    /// damping `-joint_damping qdot` for hang and drop.
    pub fn joint_torques(&self) -> DVector<f64> {
        let cfg = &self.config;
        let rates = self.layout.rates(&self.v);
        if !cfg.task.actuated() {
            return -cfg.joint_damping * rates;
        }
        if let (Task::Trot, TrotController::Raibert, Some(legs)) =
            (cfg.task, cfg.trot_controller, &self.legs)
        {
            let robot = trot::TrotRobot {
                model: &self.model,
                layout: &self.layout,
                legs,
            };
            return trot::raibert_torques(
                robot,
                cfg,
                &self.q,
                &self.v,
                self.task_time(),
                self.speed_integral,
            );
        }
        controller::pd_torques(
            cfg.kp,
            cfg.kd,
            cfg.torque_limit,
            &self.layout.angles(&self.q),
            &rates,
            &self.targets(),
        )
    }

    /// The collision points of the task's geometry at configuration `q`: every foot sphere's
    /// lowest point, and the torso box's 8 corners when the task lets the torso collide.
    fn candidates_at(&self, q: &DVector<f64>) -> Vec<Candidate> {
        let poses = self.model.body_poses(q);
        self.candidates_with(&poses)
    }

    fn candidates_with(&self, poses: &[Transform]) -> Vec<Candidate> {
        let mut out = Vec::new();
        for &(body, s) in &self.feet {
            let pose = &poses[body];
            let centre = pose.transform_point(&s.offset);
            let lowest = centre - Vector3::z() * s.radius;
            out.push(Candidate {
                key: ContactKey::Wall {
                    ball: body,
                    wall: GROUND,
                },
                body,
                point: pose.inverse().transform_point(&lowest),
                gap: lowest.z,
                foot: true,
            });
        }
        if self.config.torso_collides() {
            for (k, &(body, b)) in self.boxes.iter().enumerate() {
                for corner in 0..8 {
                    let sign = |bit: usize| if corner & bit == 0 { -1.0 } else { 1.0 };
                    let local = b.pose.transform_point(&Vector3::new(
                        sign(1) * b.half_extents.x,
                        sign(2) * b.half_extents.y,
                        sign(4) * b.half_extents.z,
                    ));
                    out.push(Candidate {
                        key: ContactKey::WallPoint {
                            body,
                            obstacle: GROUND,
                            feature: (8 * k + corner) as u64,
                        },
                        body,
                        point: local,
                        gap: poses[body].transform_point(&local).z,
                        foot: false,
                    });
                }
            }
        }
        out
    }

    /// The task's collision points at the current state.
    pub fn candidates(&self) -> Vec<Candidate> {
        self.candidates_at(&self.q)
    }

    /// The contacts of this step: the candidates with a gap of at most `margin`.
    pub fn active_contacts(&self) -> Vec<Candidate> {
        let margin = self.config.margin;
        self.candidates()
            .into_iter()
            .filter(|c| c.gap <= margin)
            .collect()
    }

    /// The deepest penetration of the task's geometry into the ground now (m; 0 if none).
    pub fn max_penetration(&self) -> f64 {
        self.candidates()
            .iter()
            .map(|c| (-c.gap).max(0.0))
            .fold(0.0, f64::max)
    }

    /// The mean penetration of the feet that touch the ground now (m; 0 if none touches): the
    /// quantity of the paper's Fig. 7.
    pub fn foot_penetration(&self) -> f64 {
        let pen: Vec<f64> = self
            .candidates()
            .iter()
            .filter(|c| c.foot && c.gap <= 0.0)
            .map(|c| -c.gap)
            .collect();
        if pen.is_empty() {
            0.0
        } else {
            pen.iter().sum::<f64>() / pen.len() as f64
        }
    }

    /// The base's linear velocity in world coordinates (m/s).
    pub fn base_velocity(&self) -> Vector3<f64> {
        let pose = self.model.base_pose(&self.q, 0);
        pose.rotation * Vector3::new(self.v[0], self.v[1], self.v[2])
    }

    /// Kinetic energy `1/2 v' M v` (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.model.kinetic_energy(&self.q, &self.v)
    }

    /// The base's mean forward speed since the episode started (m/s; 0 at its start).
    pub fn mean_forward_speed(&self) -> f64 {
        let t = self.task_time();
        if t > 0.0 {
            (self.q[0] - self.start_x) / t
        } else {
            0.0
        }
    }

    /// Contacts of the last step taken.
    pub fn last_contacts(&self) -> usize {
        self.last_contacts
    }

    /// Sum of the normal impulses of the last step taken (N s).
    pub fn last_normal_impulse(&self) -> f64 {
        self.last_normal_impulse
    }

    /// `M(q)`, symmetrised (CRBA fills both triangles; this removes rounding asymmetry so the
    /// problem's `A` is symmetric to the last bit).
    fn mass_matrix(&self) -> DMatrix<f64> {
        let m = self.model.mass_matrix(&self.q);
        (&m + m.transpose()) * 0.5
    }

    /// The step's matrix `A`: `M(q)`, plus `dt D` with the controllers' joint-rate gains `D`
    /// when `implicit_gains` is set (module doc): `(kd + dt kp)` on each PD joint whose torque
    /// `torques` does not clip, `joint_damping` on the passive ones, and the swinging legs'
    /// Cartesian PD as joint gains ([`trot::swing_gains`]).
    fn step_matrix(&self, torques: &DVector<f64>) -> DMatrix<f64> {
        let mut a = self.mass_matrix();
        let cfg = &self.config;
        if !cfg.implicit_gains {
            return a;
        }
        let dt = cfg.dt;
        let raibert = cfg.task == Task::Trot && cfg.trot_controller == TrotController::Raibert;
        match (&self.legs, raibert, cfg.task.actuated()) {
            (Some(legs), true, _) => {
                let t = self.task_time();
                let blocks =
                    trot::swing_gains(&self.model, &self.layout, legs, cfg, &self.q, t, torques);
                for (cols, d) in blocks {
                    for (r, &i) in cols.iter().enumerate() {
                        for (c, &j) in cols.iter().enumerate() {
                            a[(i, j)] += dt * d[(r, c)];
                        }
                    }
                }
            }
            (_, _, true) => {
                for (k, &i) in self.layout.v.iter().enumerate() {
                    if torques[k].abs() < cfg.torque_limit {
                        a[(i, i)] += dt * (cfg.kd + dt * cfg.kp);
                    }
                }
            }
            (_, _, false) => {
                for &i in &self.layout.v {
                    a[(i, i)] += dt * cfg.joint_damping;
                }
            }
        }
        a
    }

    /// This step's contact problem (module doc): `A = M(q)`, `J` at `q` (normal first),
    /// `v* = v + dt M^-1 (tau - h)`, rigid contacts, and the contact-space form
    /// `W = J M^-1 J'`, `q = J v* + b` alongside.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let cfg = &self.config;
        let nv = self.model.nv();
        let torques = self.joint_torques();
        let m = self.step_matrix(&torques);
        non_finite("M", m.as_slice())?;
        let chol = m
            .clone()
            .cholesky()
            .ok_or(SceneError::NonFinite("mass matrix (not positive definite)"))?;
        let h = self.model.bias_forces(&self.q, &self.v);
        let tau = self.layout.generalized(nv, &torques);
        let v_star = &self.v + cfg.dt * chol.solve(&(tau - h));
        non_finite("v*", v_star.as_slice())?;
        let (active, j) = self.contacts_and_jacobian();
        non_finite("J", j.as_slice())?;
        let nc = active.len();
        // A contact found early by the margin may close its gap within the step but not cross
        // it: b_n = gap / dt (zero for touching and penetrating contacts, module doc).
        let mut b = vec![0.0; 3 * nc];
        for (k, c) in active.iter().enumerate() {
            b[3 * k] = c.gap.max(0.0) / cfg.dt;
        }
        let free = &j * &v_star;
        let q_local: Vec<f64> = (0..3 * nc).map(|i| free[i] + b[i]).collect();
        let w = delassus(&chol, &j)?;
        let local = LocalProblem::new(Matrix::Dense(w), q_local, vec![cfg.mu; nc])?;
        let generalized = GeneralizedProblem {
            a: sparse(&m, "A")?,
            j: sparse(&j, "J")?,
            v_star: v_star.iter().copied().collect(),
            b,
            contacts: active
                .iter()
                .map(|c| ContactModel {
                    phi0: c.gap,
                    ..ContactModel::rigid(cfg.mu)
                })
                .collect(),
            others: Vec::new(),
            target: Vec::new(),
            dt: Some(cfg.dt),
            v0: Some(self.v.iter().copied().collect()),
            // One kinematic tree: A is dense on the base and couples every leg through it.
            tree_of: vec![0; nv],
        };
        Ok(ContactStep {
            contacts: active
                .iter()
                .map(|c| Contact {
                    key: c.key,
                    frame: ground_frame(),
                    gap: c.gap,
                })
                .collect(),
            problem: contactlab_core::StepProblem::with_local(generalized, local),
            free: v_star.iter().copied().collect(),
        })
    }

    /// [`Quadruped::active_contacts`] and their Jacobian `J` at `q` (one pass over the poses),
    /// three rows per contact in the ground frame's order: z (normal), x, y.
    fn contacts_and_jacobian(&self) -> (Vec<Candidate>, DMatrix<f64>) {
        let poses = self.model.body_poses(&self.q);
        let margin = self.config.margin;
        let active: Vec<Candidate> = self
            .candidates_with(&poses)
            .into_iter()
            .filter(|c| c.gap <= margin)
            .collect();
        let mut j = DMatrix::zeros(3 * active.len(), self.model.nv());
        for (k, c) in active.iter().enumerate() {
            let jp = self
                .model
                .point_jacobian_with_poses(&poses, c.body, &c.point);
            for (row, axis) in [2, 0, 1].into_iter().enumerate() {
                j.row_mut(3 * k + row).copy_from(&jp.row(axis));
            }
        }
        (active, j)
    }

    /// Applies the impulses `r` (normal first per contact, the step's frames):
    /// `v+ = v* + M^-1 J' r`, `q+ = q (+) v+ dt` ([`Model::integrate`]), then the task's
    /// clock, targets and resets.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let nv = self.model.nv();
        let nc = step.contacts.len();
        step.check_impulses(r, Some(nv))?;
        let mut v = DVector::from_column_slice(&step.free);
        if nc > 0 {
            let Some(g) = step.problem.generalized() else {
                return Err(SceneError::Problem(ProblemError::Shape {
                    field: "step".into(),
                    expected: "a problem in generalized velocities (from this scene)".into(),
                    found: "a contact-space problem".into(),
                }));
            };
            if g.j.nrows() != 3 * nc || g.j.ncols() != nv || g.a.ncols() != nv {
                return Err(SceneError::Problem(ProblemError::Shape {
                    field: "J".into(),
                    expected: format!("{} x {nv}", 3 * nc),
                    found: format!("{} x {}", g.j.nrows(), g.j.ncols()),
                }));
            }
            let mut jr = vec![0.0; nv];
            sparse_transpose_mul_add(&g.j, r, &mut jr);
            let mut a = DMatrix::zeros(nv, nv);
            let (cols, rows, vals) = (
                g.a.symbolic().col_ptr(),
                g.a.symbolic().row_idx(),
                g.a.val(),
            );
            for c in 0..nv {
                for k in cols[c]..cols[c + 1] {
                    a[(rows[k], c)] += vals[k];
                }
            }
            let chol = a
                .cholesky()
                .ok_or(SceneError::NonFinite("mass matrix (not positive definite)"))?;
            v += chol.solve(&DVector::from_vec(jr));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(SceneError::NonFinite("velocities"));
        }
        self.q = self.model.integrate(&self.q, &v, self.config.dt);
        self.v = v;
        self.last_contacts = nc;
        self.last_torso_contacts = step
            .contacts
            .iter()
            .filter(|c| matches!(c.key, ContactKey::WallPoint { .. }))
            .count();
        self.last_blocks.clear();
        if let (true, Ok(local)) = (nc > 0, step.problem.local()) {
            for a in 0..nc {
                for b in 0..nc {
                    self.last_blocks.push(local.w.block3(a, b));
                }
            }
        }
        self.last_normal_impulse = (0..nc).map(|k| r[3 * k]).sum();
        self.time += self.config.dt;
        self.task_steps += 1;
        self.after_step();
        Ok(())
    }

    /// The task's bookkeeping after a step: the drop's rest detection and reset, the random
    /// task's new targets and periodic reset (module doc).
    fn after_step(&mut self) {
        let cfg = &self.config;
        let dt = cfg.dt;
        // Periods in whole steps, so that resets fall on the same steps on every machine.
        let steps = |period: f64| ((period / dt).round() as u64).max(1);
        match cfg.task {
            Task::Drop => {
                if self.last_contacts > 0 {
                    self.landed = true;
                }
                if self.landed && self.kinetic_energy() < cfg.rest_energy {
                    self.rest_time += dt;
                } else {
                    self.rest_time = 0.0;
                }
                let at_rest = self.landed && self.rest_time >= cfg.rest_duration - 0.5 * dt;
                if at_rest || self.task_steps >= steps(cfg.drop_timeout) {
                    self.reset();
                }
            }
            Task::Random => {
                if self.task_steps >= steps(cfg.reset_period) {
                    self.reset();
                } else if self.task_steps.is_multiple_of(steps(cfg.target_period)) {
                    self.targets = controller::random_targets(
                        &self.nominal,
                        cfg.target_variance,
                        &mut self.rng,
                    );
                }
            }
            Task::Trot => {
                let t = self.task_time();
                let error = trot::commanded_speed(cfg, t) - self.base_velocity().x;
                self.speed_integral.add(dt, error);
            }
            Task::Hang | Task::Stand => {}
        }
    }

    /// Back to the task's initial state; counts the reset.
    pub fn reset(&mut self) {
        self.resets += 1;
        self.start_episode();
    }
}

impl Scene for Quadruped {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Quadruped::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Quadruped::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("base_height", self.q[2]),
            ("base_x", self.q[0]),
            ("forward_speed", self.base_velocity().x),
            ("mean_forward_speed", self.mean_forward_speed()),
            ("active_contacts", self.last_contacts as f64),
            ("torso_contacts", self.last_torso_contacts as f64),
            ("normal_impulse", self.last_normal_impulse),
            ("max_penetration", self.max_penetration()),
            ("foot_penetration", self.foot_penetration()),
            ("kinetic_energy", self.kinetic_energy()),
            ("resets", self.resets as f64),
            ("task_time", self.task_time()),
            ("max_joint_torque", self.joint_torques().amax()),
            (
                "delassus_row_dominance",
                row_dominance(&self.last_blocks, self.last_contacts),
            ),
            (
                "delassus_block_dominance",
                block_dominance(&self.last_blocks, self.last_contacts),
            ),
        ]
    }
}

/// Each leg's hip-flexion body (`X_thigh`) and the foot sphere below its shank (`X_shank` or a
/// body under it), in [`LEG_NAMES`] order; `None` when a leg lacks either.
fn leg_geometry(model: &Model, feet: &[(usize, Sphere)]) -> Option<[trot::LegGeometry; 4]> {
    let mut out = [trot::LegGeometry {
        hip_body: 0,
        foot_body: 0,
        foot_centre: Vector3::zeros(),
        foot_radius: 0.0,
    }; 4];
    for (geo, name) in out.iter_mut().zip(LEG_NAMES) {
        let hip_body = model.body_index(&format!("{name}_thigh"))?;
        let shank = model.body_index(&format!("{name}_shank"))?;
        let &(foot_body, sphere) = feet
            .iter()
            .find(|(b, _)| *b == shank || model.is_ancestor(shank, *b))?;
        *geo = trot::LegGeometry {
            hip_body,
            foot_body,
            foot_centre: sphere.offset,
            foot_radius: sphere.radius,
        };
    }
    Some(out)
}

/// The scalar diagonal dominance of a Delassus matrix given by its `n x n` blocks (row-major):
/// `min_i |W_ii| / sum_{j != i} |W_ij|` over its `3 n` rows (at least 1: diagonally dominant,
/// where PGS's per-component sweep converges like Jacobi's on a dominant matrix); NaN without
/// contacts, infinite for a diagonal `W`.
pub fn row_dominance(blocks: &[Matrix3<f64>], n: usize) -> f64 {
    if n == 0 || blocks.len() != n * n {
        return f64::NAN;
    }
    let mut worst = f64::INFINITY;
    for a in 0..n {
        for i in 0..3 {
            let mut off = 0.0;
            for b in 0..n {
                let w = &blocks[a * n + b];
                for j in 0..3 {
                    if a != b || i != j {
                        off += w[(i, j)].abs();
                    }
                }
            }
            let diag = blocks[a * n + a][(i, i)].abs();
            worst = worst.min(if off > 0.0 { diag / off } else { f64::INFINITY });
        }
    }
    worst
}

/// The per-contact (block) diagonal dominance: `min_a lambda_min(W_aa) / sum_{b != a}
/// ||W_ab||_2` (Feingold and Varga's block dominance with the spectral norm; at least 1:
/// block diagonally dominant, where a per-contact sweep converges); NaN without contacts,
/// infinite with one.
pub fn block_dominance(blocks: &[Matrix3<f64>], n: usize) -> f64 {
    if n == 0 || blocks.len() != n * n {
        return f64::NAN;
    }
    let mut worst = f64::INFINITY;
    for a in 0..n {
        let w_aa = blocks[a * n + a];
        let own = (0.5 * (w_aa + w_aa.transpose()))
            .symmetric_eigenvalues()
            .min();
        let off: f64 = (0..n)
            .filter(|&b| b != a)
            .map(|b| blocks[a * n + b].svd(false, false).singular_values.max())
            .sum();
        worst = worst.min(if off > 0.0 { own / off } else { f64::INFINITY });
    }
    worst
}
