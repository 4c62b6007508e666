//! Physical-fidelity scenes: a cube (or a sphere) on a plane in setups whose motion has a
//! closed form, so that what a contact model does to a simulated motion is measured against
//! the exact answer (the project's physical-fidelity study, after Le Lidec et al., "Contact
//! Models in Robotics: a Comparative Analysis", T-RO 2024; the same setups run in MuJoCo and
//! Drake through the Python harness, `experiments/peers/fidelity.py`).
//!
//! # Notation
//!
//! `a` the cube's side (`side`), `m` the mass, `I` the moment of inertia about the centre,
//! `r_c = a / 50` the corner spheres' radius, `mu` the friction coefficient, `g` gravity,
//! `dt` the time step, `th` an incline's angle, `v0` an initial speed, `t` the time since the
//! velocity or force was applied (`t = 0` at the start: the body starts exactly at rest on the
//! surface, so no settling phase is needed).
//!
//! # The plane frame
//!
//! Every setup is written in the frame of its one support plane: the plane is `z = 0`, its
//! normal `+z` points into the body, and the motion (or the would-be motion) is along `+x`
//! (for `sliding_cube_diagonal`, along `(1, 1, 0) / sqrt 2`). Inclines and walls are made by
//! rotating gravity into this frame, which is exact and keeps one contact plane:
//!
//! - `sliding_cube`, `sliding_cube_diagonal`, `dragged_cube`, `drop_cube`, `drop_sphere`:
//!   gravity `(0, 0, -g)`;
//! - `slope`, `rolling_sphere`: gravity `(g sin th, 0, -g cos th)`, so `+x` points down the
//!   slope;
//! - `wall_press`: the plane is the wall, gravity `(g, 0, 0)` runs along it (`+x` is down), and
//!   the pressing force `(0, 0, -F)` pushes the cube into the wall; there is no floor.
//!
//! # Bodies and contacts
//!
//! The cube carries eight spheres of radius `r_c = a / 50` at its corners, pulled inward so
//! that each sphere's surface touches the three faces' planes: centres at
//! `(+-(a/2 - r_c), +-(a/2 - r_c), +-(a/2 - r_c))` in the body frame (the corner-sphere
//! convention of Le Lidec et al., T-RO 2024). At rest on the plane the four lowest spheres touch
//! it, the centre is at `z = a/2` (the cube's face lies in the plane) and the contact points
//! are the spheres' lowest points. Uniform cube: `I = m a^2 / 6` (isotropic). The
//! `rolling_sphere` body is one sphere of radius `R` (`radius`), `I = 2 m R^2 / 5`, resting at
//! `z = R`.
//!
//! A sphere is a contact when its gap is below `margin` plus its speculative reach (next
//! section); the contact point is `c - r e_z` for its world centre `c`, the frame is the
//! crate's [`contact_frame`]`(+z)` (normal first), and its key is
//! [`ContactKey::WallPoint`] `{ body: 0, obstacle: 0, feature: corner }`, so a corner keeps its
//! key across steps (warm starts). The rows of `J` for a frame direction `d` are `d` on `v` and
//! `(p - x) x d` on `omega` (the velocity of the touching point).
//!
//! # Which spheres are contacts: the speculative reach
//!
//! A sphere of world centre `c` is a contact when its gap `phi0 = c_z - r` satisfies
//!
//! `phi0 < margin + s`, `s = (dt + tau_d) max(0, mu |v*_t| - v*_n)` ([`Fidelity::reach`]),
//!
//! with `tau_d = 0` (the contacts are rigid) and `(v*_n, v*_t)` the velocity of the sphere's
//! lowest point at the step's free velocities `[v*, omega*]` (before any contact impulse), in
//! the contact frame. `s` is not a tuning knob: it is where SAP's impulse vanishes. With SAP's
//! bias `v^_n = -phi0 / (dt + tau_d)` (Castro et al., sec. V-A) the impulse
//! `gamma = P_F(y)`, `y = -R^-1 (v_c - v^)`, is zero exactly when `y` is in the polar cone,
//! `y_n < -mu^ y_r` (appendix C, region III), which in velocities reads
//! `v_n - v^_n > mu |v_t|`, that is `phi0 > (dt + tau_d) (mu |v_t| - v_n)`, for every `R`. A
//! sphere beyond `s` gets no impulse from SAP's model at the free velocity, so leaving it out
//! changes nothing; a sphere within it would be pushed, so it is in. (Exact for one contact;
//! with several, the others' impulses move the point after the prediction: here they stop its
//! approach and slow its slip, so `s` exceeds the solution's own bound by about
//! `dt^2 g cos th (1 + mu^2)`: conservative.) The exact models' own condition, that the gap
//! closes within the step (`phi0 < -dt v*_n`, Catto's speculative contact), is the case
//! `mu |v_t| = 0` and lies inside. `margin` (default `1e-3 m`, as the sphere scene) is only a
//! prediction distance on top of the reach, and `margin = 0` is a complete contact rule
//! (below).
//!
//! Why (issue 38): a convex relaxation lifts a sliding contact to Castro et al.'s estimate
//! `(dt + tau_d) mu |v_t|` (sec. V-A: SAP's steady state `v_n = v^_n + mu |v_t| = 0`, up to
//! the near-rigid compliance `dt R_n gamma_n (1 + mu~^2)`, 1.4e-7 m here). With a fixed margin
//! of 1 mm as the only rule, the cube on the 30 degree slope reached `|v_t| = 2 m/s` at
//! `t = 3.044 s`, where `dt mu |v_t|` is 1 mm: two corners dropped out of the problem, the cube
//! pitched and fell back inside the margin, and each returning contact (at `phi0` just under
//! 1 mm, below SAP's equilibrium) was pushed out at `v_n = mu |v_t| - phi0 / dt`, a kick that
//! grows with the speed: the chatter became a tumble 1.76 m high by 10 s (acceleration 0.686
//! instead of 0.657 m/s^2, 9.3 m ahead of the exact position). The reach keeps SAP's
//! equilibrium inside the contact set at every speed: at the equilibrium the gap is at most
//! `dt mu |v_t|`, and the free velocity adds `dt g sin th` to the slip and `dt g cos th`
//! towards the plane, so the gap stays `dt^2 g (cos th + mu sin th)` (11 micrometres at 30
//! degrees) inside `s`, less the step's rise `dt^2 mu a` (0.3 micrometres). Measured (SAP with
//! Newton, 10 s, either margin): four contacts every step, acceleration 0.65712 m/s^2 (exact
//! 0.65715), lift 3.2855 mm at 6.5713 m/s against the estimate's 3.2856 mm. The dragged cube,
//! at 6.46 m/s after its 1 s, lifted past the old margin the same way (from 0.70 s, 28.6 mm
//! high); its 2.6 mm lift is now kept in contact.
//!
//! The other place a fix could go, how a positive gap enters SAP's bias, is the model itself
//! and not the scene's to change: `v^_n = -phi0 / (dt + tau_d)` is the speculative constraint
//! (the gap may close within the step, no more), and the steady lift that the study measures
//! against Castro et al.'s estimate (`lift_over_estimate` = 1) is its consequence. Passing
//! `phi0 = 0` for a contact in the margin (touching, as the exact models see it) would make
//! SAP's steady state `v_n = mu |v_t|` every step, a climb; any other bias measures another
//! model.
//!
//! The rigid (exact complementarity) formulations see a positive gap as the room the contact
//! may close within the step, no more: `u_n + phi0 / dt >= 0` (Stewart and Trinkle's
//! time-stepping condition; Catto's speculative contact), through the offset
//! `b_n = max(phi0, 0) / dt`, while SAP keeps the rest of the gap, `phi0 = min(phi0, 0)`, in its
//! bias (the same `J v + b - v^` as the whole gap in `phi0`: SAP's model is unchanged). A contact
//! in the set that would not close within the step gets no impulse from them. Why (issue 44):
//! a body dropped onto the plane enters the set `margin + dt |v*_n|` above it, and a rigid model
//! that saw every contact in the set as touching (`b = 0`, the former rule) caught it there, up
//! to 2.4 mm above the plane, to fall again. On the resting and sliding setups the answers move
//! by round-off: under an exact model the four lowest spheres stay at gap 0 (to 1e-12 m, so
//! `b_n` is below 1e-9 m/s at dt = 1 ms) and the other four `a - 2 r_c` away; the reach adds only
//! spheres within `dt (mu |v*_t| - v*_n)` of the plane, at most 3.3 mm at the end of the 30
//! degree slide. One cost was measured: at the consistency sweep's smallest steps (1e-4 and
//! 3e-4 s, where the round-off gaps over `dt` are largest) the bisection-SOR takes many more
//! sweeps to meet its own test, and the sweep's wall time went from about 11 s to 112 s.
//!
//! `margin = 0` (`slopes_margin0.toml`; Drake's `margin` proximity property unset) is the reach
//! alone. A cube resting at gap exactly 0 keeps its contacts: gravity's free velocity,
//! `-dt g cos th` along the normal, gives them `s = dt^2 g cos th` (8.5 micrometres at 30
//! degrees, 9.8 on the level), so no step starts without them. (Under the former rule
//! `gap < margin`, `margin = 0` gave the resting cube no contact at all: it fell one step to
//! `-dt^2 g cos th` and stayed there under the exact models, which never correct a penetration,
//! while SAP, pushed out by `v^_n = -phi0 / dt > 0`, flew off from the first step.)
//!
//! # One step
//!
//! Velocities `[v, omega]`, both in the plane frame (world), `A = diag(m, m, m, I, I, I)`;
//! isotropic inertia makes `A` independent of the orientation and the gyroscopic term zero.
//! Symplectic Euler in impulses (as the sphere and clutter scenes): `v* = v + dt (g + F/m)`
//! with the applied force `F` at the step's midpoint (exact impulse of a force linear in time),
//! `omega* = omega`; the solver finds `r` for `u = W r + q`, `W = J A^-1 J'`, `q = J v*`; then
//! `[v, omega] = [v*, omega*] + A^-1 J' r`, `x += dt v`, `q = exp(dt omega) q`. Contacts are
//! rigid (`k = inf`, no regularisation; a positive gap speculative, as above): the
//! contact-space form is derived from the generalized one, and SAP runs in its near-rigid
//! regime.
//!
//! # The exact answers ([`exact`])
//!
//! Textbook Coulomb friction on a rigid block (the numbers are the fidelity study's):
//!
//! 1. `sliding_cube` (`mu = 0.4`, `v0 = 1 m/s` along `x`): decelerates at `mu g` and stops at
//!    `t = v0 / (mu g) = 0.2548 s` after `v0^2 / (2 mu g) = 0.1274 m`; kinetic energy
//!    `m (v0 - mu g t)^2 / 2`; no lift, no lateral motion.
//! 2. `sliding_cube_diagonal`: the same along `(1, 1) / sqrt 2` (an isotropic cone gives the
//!    same answer; a friction pyramid does not).
//! 3. `dragged_cube` (`mu = 0.4`, `F = force_rate t` along `x`, `force_rate = 20 N/s`): sticks
//!    until `t0 = mu m g / force_rate = 0.1962 s`, then `v = force_rate (t - t0)^2 / (2 m)`,
//!    `x = force_rate (t - t0)^3 / (6 m)`.
//! 4. `slope` (`mu = 0.5`, `th = slope_deg`): holds when `tan th <= mu` (15 degrees:
//!    displacement 0), else slides at `g (sin th - mu cos th)` (30 degrees: 0.657 m/s^2).
//! 5. `wall_press` (`mu = 1`, `F = press_force = 20 N`): holds when `mu F >= m g` (displacement
//!    0), else slides down at `g - mu F / m`.
//! 6. `rolling_sphere` (`R = 0.05 m`, `m = 0.1 kg`, `th = 15`, `mu = 1`): rolls without slip when
//!    `tan th <= 7 mu / 2` at `a = 5 g sin th / 7 = 1.814 m/s^2` (`omega = v / R`, friction
//!    `2 m g sin th / 7`); otherwise it slides at `g (sin th - mu cos th)` while spinning up at
//!    `mu m g R cos th / I`.
//! 7. `drop_cube`, `drop_sphere` (`mu = 0.5`, the lowest point `drop_height = 0.1 m` above the
//!    plane at rest, the cube flat; the sphere is the rolling sphere's ball): free fall until the
//!    lowest point reaches the plane at `t = sqrt(2 h / g) = 0.1428 s` with speed
//!    `sqrt(2 g h) = 1.401 m/s`, then at rest on it: the impact is inelastic (restitution 0 in
//!    every model of the study), so the exact bounce height, penetration and contact time are 0.
//!    The study's metrics (the report's and the peers' harness's): the touch, the first sample
//!    with `lift` below 1 um; the bounce, how high the lowest point rises above the plane after
//!    it; the contact time, from the touch to the last sample with `|v_z|` above 1 mm/s (0 when
//!    the body stops at the touch).
//!
//! The exact values at the step's end `t = steps dt` are observables (`x_exact`, `y_exact`,
//! `vx_exact`, `vy_exact`, `speed_exact`, `kinetic_energy_exact`) and the setup's constants are
//! [`Scene::constants`] with an `_exact` suffix (`stop_time_exact`, `stop_distance_exact`,
//! `breakaway_time_exact`, `acceleration_exact`, ...), beside the geometric `rest_height`.
//!
//! # Observables
//!
//! `t`; the centre's `x`, `y`, `z` and `vx`, `vy`, `vz` in the plane frame; `speed` (the
//! tangential speed `sqrt(vx^2 + vy^2)`); `omega` (`|omega|`); `tilt_deg` (the rotation angle
//! of the body from its start); `kinetic_energy` (`m |v|^2 / 2 + I |omega|^2 / 2`); `lift`
//! (`z` minus the exact rest height); the exact values; and per step, over the step's contacts
//! with impulses `r = (lambda_n, lambda_t)` and post-step contact velocities
//! `u = (v_n, v_t) = J [v, omega]`:
//!
//! - `signorini_max`: `max |lambda_n (v_n + max(gap, 0) / dt)|`, the product of the impulse
//!   and the speculative condition it complements (`v_n` alone for a touching contact; a
//!   contact that closes its gap within the step lands at `v_n = -gap / dt`), made unit-free by
//!   dividing by `m g dt v_scale` with `v_scale = 1 m/s` (the weight's impulse over one step
//!   times a unit speed); zero for an exact complementarity solution;
//! - `max_dissipation_angle_deg`: over sliding contacts (`|v_t| > 1e-6 m/s`) with a non-zero
//!   friction impulse, the largest angle between `lambda_t` and `-v_t` (maximum dissipation
//!   says 0); 0 when no contact slides;
//! - `friction_ratio_max`: over sliding contacts, the largest `|lambda_t| / (mu lambda_n)`
//!   (Coulomb's law says 1 on sliding contacts; infinity when a friction impulse has no normal
//!   impulse behind it); 0 when no contact slides;
//! - `gap_lambda_max`: `max max(gap + dt v_n, 0) lambda_n` over the contacts, with the gap the
//!   contact's at the step's start (so `gap + dt v_n` is the gap the step leaves), divided by
//!   `m g dt` times [`GAP_SCALE`] (1 mm): the position-level Signorini product, a contact that
//!   pushes and is still apart at the step's end (a relaxed model's lift does);
//! - `normal_work`: `sum lambda_n v_n` over the contacts (J), the work the normal impulses do at
//!   the velocity they leave; the study sums it over the run.
//!
//! # Choices the study leaves open
//!
//! The corner radius `a / 50` is fixed (not a parameter); `margin`; the midpoint evaluation of
//! the applied force; rigid contacts for SAP (the clutter scene's `stiffness`/`tau_d` are not
//! carried here); `finished()` after `duration` (defaults: sliding 0.5 s, dragged 1 s, wall and
//! both slopes 10 s, rolling 1 s, the drops 0.5 s).

mod cubes;
pub mod exact;
pub mod grasp;
pub mod pile;
pub mod stack;

use contactlab_core::{ProblemError, StepProblem};
use nalgebra::{Matrix3, Matrix3x6, UnitQuaternion, Vector3, Vector6};
use serde::{Deserialize, Serialize};

use self::exact::{ExactMotion, Profile};
use super::one_body::{self, BodyContact};
use crate::assemble::Gap;
use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

/// The corner spheres' radius as a fraction of the cube's side (Le Lidec et al., T-RO 2024).
pub const CORNER_RADIUS_FRACTION: f64 = 1.0 / 50.0;

/// The distance that makes `gap_lambda_max` unit-free (m).
pub const GAP_SCALE: f64 = 1e-3;

/// The speed that makes `signorini_max` unit-free (m/s).
pub const V_SCALE: f64 = 1.0;

/// A contact slides when its tangential post-step speed is above this (m/s).
pub const SLIDING_SPEED: f64 = 1e-6;

/// Which of the fidelity study's setups the scene runs (`setup = "..."`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// A cube launched at `v0` along `x` on a horizontal plane.
    #[default]
    SlidingCube,
    /// The same cube launched along `(1, 1) / sqrt 2`.
    SlidingCubeDiagonal,
    /// A cube at rest pulled along `x` by a force `force_rate t`.
    DraggedCube,
    /// A cube at rest on an incline of `slope_deg`.
    Slope,
    /// A cube pressed against a vertical wall by `press_force`, gravity along the wall.
    WallPress,
    /// A sphere at rest on an incline of `slope_deg`.
    RollingSphere,
    /// The cube dropped flat from `drop_height` onto the level plane.
    DropCube,
    /// The rolling sphere's ball dropped from `drop_height` onto the level plane.
    DropSphere,
}

impl Setup {
    /// Every setup, in the study's order.
    pub const ALL: [Setup; 8] = [
        Setup::SlidingCube,
        Setup::SlidingCubeDiagonal,
        Setup::DraggedCube,
        Setup::Slope,
        Setup::WallPress,
        Setup::RollingSphere,
        Setup::DropCube,
        Setup::DropSphere,
    ];

    /// The study's friction coefficient for this setup.
    pub fn default_mu(self) -> f64 {
        match self {
            Setup::SlidingCube | Setup::SlidingCubeDiagonal | Setup::DraggedCube => 0.4,
            Setup::Slope | Setup::DropCube | Setup::DropSphere => 0.5,
            Setup::WallPress | Setup::RollingSphere => 1.0,
        }
    }

    /// The study's mass: 1 kg for the cube, 0.1 kg for the sphere.
    pub fn default_mass(self) -> f64 {
        match self {
            Setup::RollingSphere | Setup::DropSphere => 0.1,
            _ => 1.0,
        }
    }

    /// The simulated span (s): sliding 0.5, dragged 1, the wall and both slopes 10 (the creep
    /// of a hold, or a slide's whole run: the speculative reach keeps a relaxed model's lift
    /// `dt mu |v_t|` in contact at every speed, see the module doc), rolling 1, the drops 0.5
    /// (the fall from 0.1 m takes 0.143 s; the rest is the impact and the rest after it).
    pub fn default_duration(self) -> f64 {
        match self {
            Setup::SlidingCube
            | Setup::SlidingCubeDiagonal
            | Setup::DropCube
            | Setup::DropSphere => 0.5,
            Setup::DraggedCube | Setup::RollingSphere => 1.0,
            Setup::WallPress | Setup::Slope => 10.0,
        }
    }

    /// Whether the body is the cube (else the rolling sphere's ball).
    pub fn is_cube(self) -> bool {
        !matches!(self, Setup::RollingSphere | Setup::DropSphere)
    }

    /// Whether the body starts `drop_height` above the plane and falls.
    pub fn is_drop(self) -> bool {
        matches!(self, Setup::DropCube | Setup::DropSphere)
    }
}

fn default_dt() -> f64 {
    1e-3
}
fn default_side() -> f64 {
    0.2
}
fn default_radius() -> f64 {
    0.05
}
fn default_gravity() -> f64 {
    9.81
}
fn default_v0() -> f64 {
    1.0
}
fn default_force_rate() -> f64 {
    20.0
}
fn default_slope_deg() -> f64 {
    15.0
}
fn default_press_force() -> f64 {
    20.0
}
fn default_margin() -> f64 {
    1e-3
}
fn default_drop_height() -> f64 {
    0.1
}

/// The fidelity scene's parameters (`[scene.params]`); `mass`, `mu` and `duration` default per
/// setup (see [`Setup`]), the others are shared and each setup reads the ones it needs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FidelityConfig {
    /// The setup.
    #[serde(default)]
    pub setup: Setup,
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Simulated span (s); the setup's default when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// The cube's side `a` (m).
    #[serde(default = "default_side")]
    pub side: f64,
    /// The rolling sphere's radius `R` (m).
    #[serde(default = "default_radius")]
    pub radius: f64,
    /// Mass `m` (kg); the setup's default when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// Friction coefficient `mu`; the setup's default when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mu: Option<f64>,
    /// Gravitational acceleration `g` (m/s^2).
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Initial speed of the sliding setups (m/s).
    #[serde(default = "default_v0")]
    pub v0: f64,
    /// Growth rate of the dragging force (N/s).
    #[serde(default = "default_force_rate")]
    pub force_rate: f64,
    /// Incline angle of `slope` and `rolling_sphere` (degrees, in `[0, 90)`).
    #[serde(default = "default_slope_deg")]
    pub slope_deg: f64,
    /// The force pressing the cube into the wall (N).
    #[serde(default = "default_press_force")]
    pub press_force: f64,
    /// A prediction distance (m): a sphere is a contact while its gap is below this plus its
    /// speculative reach ([`Fidelity::reach`]); 0 leaves the reach alone.
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// How far the dropped body's lowest point starts above the plane (m).
    #[serde(default = "default_drop_height")]
    pub drop_height: f64,
}

impl Default for FidelityConfig {
    fn default() -> Self {
        FidelityConfig {
            setup: Setup::default(),
            dt: default_dt(),
            duration: None,
            side: default_side(),
            radius: default_radius(),
            mass: None,
            mu: None,
            gravity: default_gravity(),
            v0: default_v0(),
            force_rate: default_force_rate(),
            slope_deg: default_slope_deg(),
            press_force: default_press_force(),
            margin: default_margin(),
            drop_height: default_drop_height(),
        }
    }
}

impl FidelityConfig {
    /// The study's defaults for `setup`.
    pub fn for_setup(setup: Setup) -> FidelityConfig {
        FidelityConfig {
            setup,
            ..FidelityConfig::default()
        }
    }

    /// Parses a `[scene.params]` table; unknown keys are errors naming the key.
    pub fn from_table(params: &toml::Table) -> Result<FidelityConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// The config with the setup's defaults filled in (`mass`, `mu`, `duration`).
    pub fn resolved(&self) -> FidelityConfig {
        FidelityConfig {
            duration: Some(self.duration()),
            mass: Some(self.mass()),
            mu: Some(self.mu()),
            ..self.clone()
        }
    }

    /// The simulated span (s).
    pub fn duration(&self) -> f64 {
        self.duration
            .unwrap_or_else(|| self.setup.default_duration())
    }

    /// The mass (kg).
    pub fn mass(&self) -> f64 {
        self.mass.unwrap_or_else(|| self.setup.default_mass())
    }

    /// The friction coefficient.
    pub fn mu(&self) -> f64 {
        self.mu.unwrap_or_else(|| self.setup.default_mu())
    }

    /// The incline angle in radians (0 for the setups on a level plane or a wall).
    pub fn slope(&self) -> f64 {
        match self.setup {
            Setup::Slope | Setup::RollingSphere => self.slope_deg.to_radians(),
            _ => 0.0,
        }
    }

    /// The corner spheres' radius `r_c = a / 50`.
    pub fn corner_radius(&self) -> f64 {
        CORNER_RADIUS_FRACTION * self.side
    }

    /// The moment of inertia: `m a^2 / 6` (cube) or `2 m R^2 / 5` (sphere).
    pub fn inertia(&self) -> f64 {
        if self.setup.is_cube() {
            self.mass() * self.side * self.side / 6.0
        } else {
            0.4 * self.mass() * self.radius * self.radius
        }
    }

    /// The centre's height above the plane at rest: `a / 2` or `R`.
    pub fn rest_height(&self) -> f64 {
        if self.setup.is_cube() {
            0.5 * self.side
        } else {
            self.radius
        }
    }

    /// `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration() / self.dt).round() as usize
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        crate::params::check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration()),
                ("side", self.side),
                ("radius", self.radius),
                ("mass", self.mass()),
                // `signorini_max` divides by m g dt.
                ("gravity", self.gravity),
            ],
            &[
                ("mu", self.mu()),
                ("v0", self.v0),
                ("force_rate", self.force_rate),
                ("slope_deg", self.slope_deg),
                ("press_force", self.press_force),
                ("margin", self.margin),
                ("drop_height", self.drop_height),
            ],
        )?;
        if self.slope_deg >= 90.0 {
            return Err(SceneError::Param {
                key: "slope_deg",
                message: format!("must be below 90 degrees, got {}", self.slope_deg),
            });
        }
        // A rigid contact-space problem treats every contact in the margin as touching: the
        // margin must stay below the gap of the spheres that are not on the plane.
        let limit = if self.setup.is_cube() {
            self.side - 2.0 * self.corner_radius()
        } else {
            self.radius
        };
        if self.margin >= limit {
            return Err(SceneError::Param {
                key: "margin",
                message: format!("must be below {limit} m for this body, got {}", self.margin),
            });
        }
        Ok(())
    }

    /// Gravity in the plane frame (see the module doc).
    pub fn gravity_vector(&self) -> Vector3<f64> {
        let g = self.gravity;
        match self.setup {
            Setup::WallPress => Vector3::new(g, 0.0, 0.0),
            _ => {
                let th = self.slope();
                Vector3::new(g * th.sin(), 0.0, -g * th.cos())
            }
        }
    }

    /// The applied force on the centre at time `t` (N, plane frame).
    pub fn applied_force(&self, t: f64) -> Vector3<f64> {
        match self.setup {
            Setup::DraggedCube => Vector3::new(self.force_rate * t, 0.0, 0.0),
            Setup::WallPress => Vector3::new(0.0, 0.0, -self.press_force),
            _ => Vector3::zeros(),
        }
    }

    /// The direction of the (would-be) motion in the plane.
    pub fn direction(&self) -> Vector3<f64> {
        match self.setup {
            Setup::SlidingCubeDiagonal => Vector3::new(1.0, 1.0, 0.0) / 2f64.sqrt(),
            _ => Vector3::x(),
        }
    }

    /// The setup's exact motion (see the module doc).
    pub fn exact(&self) -> ExactMotion {
        let (m, mu, g) = (self.mass(), self.mu(), self.gravity);
        let th = self.slope();
        let mut alpha = 0.0;
        let profile = match self.setup {
            Setup::SlidingCube | Setup::SlidingCubeDiagonal => Profile::Decelerate {
                v0: self.v0,
                rate: mu * g,
            },
            Setup::DraggedCube if self.force_rate > 0.0 => Profile::RampAfter {
                t0: mu * m * g / self.force_rate,
                k: self.force_rate / (2.0 * m),
            },
            Setup::DraggedCube | Setup::DropCube | Setup::DropSphere => Profile::Rest,
            Setup::Slope => accelerate(g * (th.sin() - mu * th.cos())),
            Setup::WallPress => accelerate(g - mu * self.press_force / m),
            Setup::RollingSphere => {
                if self.rolls() {
                    let a = 5.0 * g * th.sin() / 7.0;
                    alpha = a / self.radius;
                    accelerate(a)
                } else {
                    alpha = mu * m * g * th.cos() * self.radius / self.inertia();
                    accelerate(g * (th.sin() - mu * th.cos()))
                }
            }
        };
        ExactMotion {
            direction: self.direction(),
            profile,
            mass: m,
            inertia: self.inertia(),
            alpha,
        }
    }

    /// Whether the rolling sphere rolls without slip: `tan th <= 7 mu / 2`.
    fn rolls(&self) -> bool {
        self.slope().tan() <= 3.5 * self.mu()
    }

    /// The exact answer's constants (`_exact` suffix) and the rest height.
    pub fn constants(&self) -> Vec<(&'static str, f64)> {
        let (m, mu, g) = (self.mass(), self.mu(), self.gravity);
        let th = self.slope();
        let e = self.exact();
        let acceleration = match e.profile {
            Profile::Accelerate { a } => a,
            _ => 0.0,
        };
        let mut out = match self.setup {
            Setup::SlidingCube | Setup::SlidingCubeDiagonal => vec![
                ("deceleration_exact", mu * g),
                ("stop_time_exact", e.stop_time()),
                ("stop_distance_exact", e.distance(e.stop_time())),
                ("friction_exact", mu * m * g),
            ],
            Setup::DraggedCube => vec![
                (
                    "breakaway_time_exact",
                    match e.profile {
                        Profile::RampAfter { t0, .. } => t0,
                        _ => f64::INFINITY,
                    },
                ),
                ("friction_exact", mu * m * g),
            ],
            Setup::Slope => vec![
                ("acceleration_exact", acceleration),
                ("critical_slope_deg_exact", mu.atan().to_degrees()),
            ],
            Setup::WallPress => vec![
                ("acceleration_exact", acceleration),
                ("required_mu_exact", m * g / self.press_force),
            ],
            Setup::RollingSphere => vec![
                ("acceleration_exact", acceleration),
                (
                    "friction_exact",
                    if self.rolls() {
                        2.0 * m * g * th.sin() / 7.0
                    } else {
                        mu * m * g * th.cos()
                    },
                ),
                ("rolling_mu_exact", 2.0 * th.tan() / 7.0),
            ],
            // Free fall from `h`, then at rest (restitution 0): the lowest point reaches the
            // plane at `sqrt(2 h / g)` with speed `sqrt(2 g h)`, and stays there.
            Setup::DropCube | Setup::DropSphere => vec![
                ("touch_time_exact", (2.0 * self.drop_height / g).sqrt()),
                ("impact_speed_exact", (2.0 * g * self.drop_height).sqrt()),
                ("bounce_height_exact", 0.0),
                ("contact_time_exact", 0.0),
            ],
        };
        // An infinite constant (no stop, no breakaway) is left out rather than recorded.
        out.retain(|c| c.1.is_finite());
        out.push(("rest_height", self.rest_height()));
        out
    }
}

/// Accelerates at `a` when it is positive, else holds (static friction).
fn accelerate(a: f64) -> Profile {
    if a > 0.0 {
        Profile::Accelerate { a }
    } else {
        Profile::Rest
    }
}

/// One contact sphere of the body: which, its gap, the contact point relative to the centre
/// of mass (plane frame), and the speculative reach that admitted it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TouchPoint {
    /// The sphere's index (a corner of the cube, 0 for the rolling sphere).
    pub sphere: usize,
    /// The gap `c_z - r` (m).
    pub gap: f64,
    /// The contact point minus the centre of mass.
    pub arm: Vector3<f64>,
    /// The speculative reach `s` of [`Fidelity::reach`] (m): the sphere is a contact because
    /// `gap < margin + s`.
    pub reach: f64,
}

/// The fidelity scene: one rigid body on the plane `z = 0`.
#[derive(Debug, Clone)]
pub struct Fidelity {
    /// The parameters, the setup's defaults filled in.
    pub config: FidelityConfig,
    /// The spheres' centres in the body frame.
    pub spheres: Vec<Vector3<f64>>,
    /// The spheres' radius.
    pub sphere_radius: f64,
    /// Centre of mass (plane frame).
    pub p: Vector3<f64>,
    /// Orientation (body to plane frame).
    pub q: UnitQuaternion<f64>,
    /// Velocity of the centre.
    pub v: Vector3<f64>,
    /// Angular velocity (plane frame).
    pub w: Vector3<f64>,
    /// Steps taken.
    pub steps: usize,
    /// The exact motion.
    pub exact: ExactMotion,
    /// The last step's contact measures: `signorini_max`, `max_dissipation_angle_deg`,
    /// `friction_ratio_max`, `gap_lambda_max`, `normal_work`.
    pub measures: [f64; 5],
}

impl Fidelity {
    /// The body at rest on the plane (or, sliding, at `v0` along its direction) for `config`.
    pub fn new(config: &FidelityConfig) -> Result<Fidelity, SceneError> {
        let config = config.resolved();
        config.validate()?;
        let (spheres, sphere_radius) = if config.setup.is_cube() {
            let rc = config.corner_radius();
            let h = 0.5 * config.side - rc;
            // Corner k has the signs of its bits: x from bit 0, y from bit 1, z from bit 2.
            let sign = |k: usize, bit: usize| if k >> bit & 1 == 1 { h } else { -h };
            let corners = (0..8)
                .map(|k| Vector3::new(sign(k, 0), sign(k, 1), sign(k, 2)))
                .collect();
            (corners, rc)
        } else {
            (vec![Vector3::zeros()], config.radius)
        };
        let v = match config.setup {
            Setup::SlidingCube | Setup::SlidingCubeDiagonal => config.v0 * config.direction(),
            _ => Vector3::zeros(),
        };
        let above = if config.setup.is_drop() {
            config.drop_height
        } else {
            0.0
        };
        Ok(Fidelity {
            exact: config.exact(),
            spheres,
            sphere_radius,
            p: Vector3::new(0.0, 0.0, config.rest_height() + above),
            q: UnitQuaternion::identity(),
            v,
            w: Vector3::zeros(),
            steps: 0,
            measures: [0.0; 5],
            config,
        })
    }

    /// This step's contact spheres: those whose gap is below `margin` plus their speculative
    /// reach at the step's free velocities (the module doc's rule).
    pub fn touch_points(&self) -> Vec<TouchPoint> {
        let r = self.sphere_radius;
        let free = self.free_velocity();
        self.spheres
            .iter()
            .enumerate()
            .filter_map(|(sphere, local)| {
                let offset = self.q * local;
                let gap = self.p.z + offset.z - r;
                let arm = offset - r * Vector3::z();
                let reach = self.reach(&arm, &free);
                (gap < self.config.margin + reach).then_some(TouchPoint {
                    sphere,
                    gap,
                    arm,
                    reach,
                })
            })
            .collect()
    }

    /// The speculative reach of a contact point at `arm` from the centre for the free
    /// velocities `free = [v*, omega*]`: `s = (dt + tau_d) max(0, mu |v*_t| - v*_n)` with
    /// `tau_d = 0`, the gap below which SAP's impulse is not zero (Castro et al., sec. V-A's
    /// bias `v^_n = -phi0 / (dt + tau_d)` and appendix C's region III, `v_n - v^_n > mu |v_t|`).
    pub fn reach(&self, arm: &Vector3<f64>, free: &Vector6<f64>) -> f64 {
        let (v, w) = (free.fixed_rows::<3>(0), free.fixed_rows::<3>(3));
        let point = v + w.cross(arm);
        let c = &self.config;
        c.dt * (c.mu() * point.xy().norm() - point.z).max(0.0)
    }

    /// The rows `[n, t1, t2]` of `J` for a contact at `arm` from the centre with frame
    /// `frame`: `d` on `v`, `arm x d` on `omega`.
    pub fn contact_jacobian(frame: &Matrix3<f64>, arm: &Vector3<f64>) -> Matrix3x6<f64> {
        let mut j = Matrix3x6::zeros();
        for r in 0..3 {
            let d: Vector3<f64> = frame.row(r).transpose();
            let ang = arm.cross(&d);
            for c in 0..3 {
                j[(r, c)] = d[c];
                j[(r, 3 + c)] = ang[c];
            }
        }
        j
    }

    /// `A^-1` as a diagonal.
    fn inverse_mass(&self) -> Vector6<f64> {
        let (im, ii) = (1.0 / self.config.mass(), 1.0 / self.config.inertia());
        Vector6::new(im, im, im, ii, ii, ii)
    }

    /// The velocities after gravity and the applied force (at the step's midpoint).
    pub fn free_velocity(&self) -> Vector6<f64> {
        let c = &self.config;
        let t_mid = (self.steps as f64 + 0.5) * c.dt;
        let v = self.v + c.dt * (c.gravity_vector() + c.applied_force(t_mid) / c.mass());
        Vector6::new(v.x, v.y, v.z, self.w.x, self.w.y, self.w.z)
    }

    /// This step's contacts and contact problem (generalized velocities, rigid contacts).
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let points = self.touch_points();
        let frame = contact_frame(Vector3::z());
        let free = self.free_velocity();
        let body: Vec<BodyContact> = points
            .iter()
            .map(|tp| BodyContact {
                jacobian: Self::contact_jacobian(&frame, &tp.arm),
                gap: tp.gap,
            })
            .collect();
        let velocity = Vector6::new(self.v.x, self.v.y, self.v.z, self.w.x, self.w.y, self.w.z);
        let (m, i, c) = (self.config.mass(), self.config.inertia(), &self.config);
        let problem = one_body::problem(
            [m, i],
            &body,
            &free,
            c.mu(),
            c.dt,
            &velocity,
            Gap::Speculative,
        )?;
        Ok(ContactStep {
            contacts: points
                .iter()
                .map(|tp| Contact {
                    key: ContactKey::WallPoint {
                        body: 0,
                        obstacle: 0,
                        feature: tp.sphere as u64,
                    },
                    frame,
                    gap: tp.gap,
                })
                .collect(),
            problem: StepProblem::from(problem),
            free: free.iter().copied().collect(),
        })
    }

    /// Applies the impulses `r` (normal first, the step's frames), moves the body and records
    /// the step's contact measures.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        step.check_impulses(r, Some(6))?;
        // The step's own `J` (the one the solver saw): `A^-1 J' r`, then `u = J [v, omega]`.
        let g = step
            .problem
            .generalized()
            .filter(|g| g.j.nrows() == r.len() && g.j.ncols() == 6)
            .ok_or_else(|| {
                SceneError::Problem(ProblemError::Shape {
                    field: "step".into(),
                    expected: format!("this scene's generalized problem with {} rows", r.len()),
                    found: "another problem".into(),
                })
            })?;
        let (cols, rows, vals) = (
            g.j.symbolic().col_ptr(),
            g.j.symbolic().row_idx(),
            g.j.val(),
        );
        let mut vel = Vector6::from_column_slice(&step.free);
        let inv = self.inverse_mass();
        for c in 0..6 {
            let jt_r: f64 = (cols[c]..cols[c + 1]).map(|k| vals[k] * r[rows[k]]).sum();
            vel[c] += inv[c] * jt_r;
        }
        let mut u = vec![0.0; r.len()];
        for c in 0..6 {
            for k in cols[c]..cols[c + 1] {
                u[rows[k]] += vals[k] * vel[c];
            }
        }
        let contact_velocities: Vec<Vector3<f64>> = u
            .chunks_exact(3)
            .map(|c| Vector3::new(c[0], c[1], c[2]))
            .collect();
        let gaps: Vec<f64> = step.contacts.iter().map(|c| c.gap).collect();
        self.measures = self.contact_measures(r, &contact_velocities, &gaps);
        let dt = self.config.dt;
        self.v = Vector3::new(vel[0], vel[1], vel[2]);
        self.w = Vector3::new(vel[3], vel[4], vel[5]);
        self.p += dt * self.v;
        self.q = UnitQuaternion::from_scaled_axis(dt * self.w) * self.q;
        self.steps += 1;
        if !(self.p.iter().all(|x| x.is_finite()) && vel.iter().all(|x| x.is_finite())) {
            return Err(SceneError::NonFinite("state"));
        }
        Ok(())
    }

    /// `signorini_max`, `max_dissipation_angle_deg`, `friction_ratio_max`, `gap_lambda_max`
    /// and `normal_work` of impulses `r`, post-step contact velocities `u` and the contacts'
    /// gaps at the step's start (see the module doc).
    pub fn contact_measures(&self, r: &[f64], u: &[Vector3<f64>], gaps: &[f64]) -> [f64; 5] {
        let c = &self.config;
        let scale = c.mass() * c.gravity * c.dt * V_SCALE;
        let gap_scale = c.mass() * c.gravity * c.dt * GAP_SCALE;
        let (mut signorini, mut angle, mut ratio) = (0.0f64, 0.0f64, 0.0f64);
        let (mut gap_lambda, mut work) = (0.0f64, 0.0f64);
        for (ci, uc) in u.iter().enumerate() {
            let (ln, lt) = (
                r[3 * ci],
                nalgebra::Vector2::new(r[3 * ci + 1], r[3 * ci + 2]),
            );
            let vt = nalgebra::Vector2::new(uc[1], uc[2]);
            let gap = gaps.get(ci).copied().unwrap_or(0.0);
            signorini = signorini.max((ln * (uc[0] + gap.max(0.0) / c.dt)).abs() / scale);
            work += ln * uc[0];
            gap_lambda = gap_lambda.max((gap + c.dt * uc[0]).max(0.0) * ln / gap_scale);
            let slip = vt.norm();
            if slip <= SLIDING_SPEED {
                continue;
            }
            let friction = lt.norm();
            if friction > 0.0 {
                let cos = (-lt.dot(&vt) / (friction * slip)).clamp(-1.0, 1.0);
                angle = angle.max(cos.acos().to_degrees());
            }
            let bound = c.mu() * ln;
            ratio = ratio.max(if friction == 0.0 {
                0.0
            } else if bound > 0.0 {
                friction / bound
            } else {
                f64::INFINITY
            });
        }
        [signorini, angle, ratio, gap_lambda, work]
    }

    /// `m |v|^2 / 2 + I |omega|^2 / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.config.mass() * self.v.norm_squared()
            + 0.5 * self.config.inertia() * self.w.norm_squared()
    }

    /// The simulated time `steps dt` (s).
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.config.dt
    }
}

impl Scene for Fidelity {
    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Fidelity::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Fidelity::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let t = self.time();
        let start = Vector3::new(0.0, 0.0, self.config.rest_height());
        let xe = start + self.exact.displacement(t);
        let ve = self.exact.velocity(t);
        vec![
            ("t", t),
            ("x", self.p.x),
            ("y", self.p.y),
            ("z", self.p.z),
            ("vx", self.v.x),
            ("vy", self.v.y),
            ("vz", self.v.z),
            ("speed", self.v.xy().norm()),
            ("omega", self.w.norm()),
            ("tilt_deg", self.q.angle().to_degrees()),
            ("kinetic_energy", self.kinetic_energy()),
            ("lift", self.p.z - self.config.rest_height()),
            ("x_exact", xe.x),
            ("y_exact", xe.y),
            ("vx_exact", ve.x),
            ("vy_exact", ve.y),
            ("speed_exact", self.exact.speed(t)),
            ("kinetic_energy_exact", self.exact.kinetic_energy(t)),
            ("signorini_max", self.measures[0]),
            ("max_dissipation_angle_deg", self.measures[1]),
            ("friction_ratio_max", self.measures[2]),
            ("gap_lambda_max", self.measures[3]),
            ("normal_work", self.measures[4]),
        ]
    }

    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        self.config.constants()
    }

    fn finished(&self) -> bool {
        self.steps >= self.config.steps()
    }
}

#[cfg(test)]
mod tests;
