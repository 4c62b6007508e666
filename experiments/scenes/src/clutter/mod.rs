//! Clutter: spheres and boxes dropped in four columns into a container (Castro, Permenter and
//! Han 2022, SAP, section VI-C), stated as contact problems in generalized velocities.
//!
//! # The scene
//!
//! The paper drops "an arbitrary assortment" of spheres (radius 5 cm) and boxes (10 cm sides),
//! density 1000 kg/m^3 (0.524 kg and 1 kg), in four columns into an 80 cm container, with and
//! without walls; `k = 1e12` N/m, `tau_d = dt`, `mu = 1`, `dt = 10` ms, 10 s. Its arrangement is
//! not published, so we mirror the one MuJoCo and Drake run in `peers/scenes.py` (`clutter`),
//! so that per-step times sit side by side with `docs/PEERS.md`:
//!
//! - body `i` goes to column `i mod 4`, at `(x, y) = (+-container/4, +-container/4)` (`+-0.2` m;
//!   the order `(-,-), (+,-), (-,+), (+,+)`), level `l = i div 4`, height
//!   `first_level + level_spacing l` (`0.1 + 0.15 l` m), with a horizontal jitter uniform in
//!   `[-jitter, jitter]` (`0.02` m) on `x` and on `y`;
//! - it is a sphere when `i + l` is even and a box otherwise (so kinds alternate along each
//!   column and across each level); a box gets a random orientation: an angle uniform in
//!   `[-pi, pi]` about a uniformly random axis;
//! - the container (`walls = true`) is the peers' five static boxes of thickness
//!   `wall_thickness` (5 cm): a floor box whose top face is `z = 0`, `container + 2 t` wide, and
//!   four walls `container` high around the inner `container x container` square, open at the
//!   top. Without walls (`walls = false`) the floor is the whole plane `z = 0` (a half-space):
//!   the paper's bodies roll "outside the frame", which a finite floor box would let them fall
//!   off.
//!
//! Where we could not mirror the peers: their jitter and orientations come from numpy's PCG64
//! generator and a normalized Gaussian axis; ours come from ChaCha8 (the project's generator)
//! and an axis drawn uniformly on the sphere (the same distribution), so a seed gives the same
//! layout in law, not the same numbers. MuJoCo's contacts are soft (its own `solref`, `solimp`);
//! Drake's point contact gives one point per pair, where we give manifolds.
//!
//! # Bodies and the free motion
//!
//! Every body is free: six velocities `[v, omega]`, **both in world coordinates** (the linear
//! velocity of the centre of mass and the angular velocity), and a pose `(x, q)` with a unit
//! quaternion `q` (body to world). World-frame angular velocities make every contact Jacobian
//! row a plain cross product, `A` the rotated inertia, and keep all bodies' blocks alike.
//!
//! The step is the paper's two-stage scheme (section II-D) with `theta = 0`, `theta_vq = 1`
//! (symplectic Euler), so stage 1 is explicit and `A = M(q0)` per body:
//! `A_i = diag(m I3, R I_body R')`, both triangles stored, every entry of the 3x3 rotated
//! inertia kept even when zero so the pattern of `A` never changes (a solver can reuse its
//! symbolic factorisation). The free motion is
//!
//! `v* = v0 + dt g`, `omega* = omega0 - dt I_w^-1 (omega0 x I_w omega0)`,
//!
//! the gyroscopic term evaluated explicitly at `omega0` (what `theta = 0` prescribes). For the
//! scene's own shapes it vanishes identically: a solid sphere and a cube have isotropic
//! inertia (`I_w = I` times the identity, `omega x I omega = 0`); the term is there for boxes
//! of other proportions, for which explicit Euler on it is first order and slightly
//! energy-increasing at high spin rates. After the contact solve, `v = v* + A^-1 J' gamma`
//! (six-by-six per body, no global matrix), then `x += dt v` and `q = exp(dt omega) q` (the
//! exact rotation by the new world angular velocity, instead of the paper's
//! `q + dt N(q) v` and a renormalization; both are first order).
//!
//! # Contacts
//!
//! From parry3d (`parry3d-f64`): sphere-sphere, sphere-box and box-box contact manifolds, and
//! each body against the floor and walls (static boxes) or the ground (a half-space). A pair is
//! a contact when parry reports a point within the prediction distance `margin` (1 mm by
//! default, so `phi0 > 0` contacts exist, as the paper's compliant law allows), widened with
//! `speculative = true` by `dt` times the largest speed any point of either body can have at
//! the start of the step (plus `dt g`): a contact that a step can close is in that step's
//! problem, so a fast body is stopped at the surface instead of found a step late, deep inside
//! it, where `k = 1e12` would throw it out. `speculative = false, margin = 0` is Drake's
//! penetration-only point pairs. The broad phase sorts bodies' bounding intervals along `x`
//! (sweep and prune), so the cost grows with the number of neighbours, not `n^2`.
//!
//! Box manifolds (box-box, box-floor, box-wall, box-ground) keep up to four points, as MuJoCo
//! does and the paper's multi-contact configurations need (a face clipped against a face can
//! give eight): the deepest point, the one farthest from it, the one spanning the largest
//! triangle with those two, and the one adding the most area outside that triangle
//! ([`reduce_manifold`]). Points closer than 0.1 micrometre are merged first.
//!
//! Per contact: the frame `[n, t1, t2]`, normal first, `n` from the second body (or obstacle)
//! towards the first, so a positive normal velocity separates and a positive normal impulse
//! pushes the bodies apart; the contact point is the midpoint of parry's two witness points;
//! `phi0` is parry's signed distance (negative on overlap); `mu`, `k = stiffness`,
//! `tau_d = dissipation` (default `dt`). The rows of `J` for a direction `d` of the frame give
//! `d . (v_a + omega_a x (p - x_a) - v_b - omega_b x (p - x_b))`: `d` and `(p - x_a) x d` on
//! body `a`'s columns, their negatives with `p - x_b` on `b`'s, nothing anywhere else. The key
//! of a contact ([`ContactKey::WallPoint`], [`ContactKey::PairPoint`]) names the two bodies and
//! the features in touch (parry's feature ids: a box corner on a face keeps its key while it
//! rests there), so warm starts follow each manifold point.
//!
//! # Observables
//!
//! Kinetic and potential energy, the largest overlap and the number of contacts at the state
//! after the step, mean and largest speed of the centres, and the mean slip: the mean tangential
//! contact speed `|(u_t1, u_t2)|`, with the velocities after the step, over the step's contacts
//! that carry a positive normal impulse (the paper's "mean slip velocity among all contacts" at
//! rest, Fig. 14; contacts found by the margin but not pressed are left out, their tangential
//! velocity is that of bodies passing by). `NaN` when no contact is pressed.
//!
//! # What to expect (measured, release build, 40 bodies with walls, SAP with `eps_r = 1e-5`)
//!
//! - Overlap: a few millimetres during the impacts of the first half second, then about
//!   0.2 mm at rest under the stacks. The transient is the time discretisation: a box that lands
//!   off-centre on a sphere spins at about 20 rad/s, and in one 10 ms step its contact point
//!   leaves the linearisation `phi = phi0 + dt v_n` by about `(omega dt)^2 L / 2`, a millimetre;
//!   the compliant law then pushes the overlap out at `v^ = -phi0 / (dt + tau_d)` (eq. 29),
//!   which returns a little energy. At rest the overlap is the near-rigid regime's static one,
//!   `(dt + tau_d) R_n` times the supported impulse (eqs. 29-30), growing down a stack.
//! - Cost: the scene's own work (detection, assembly, moving the bodies) is a few percent of a
//!   step, the rest is the solve; [`profile`] and `examples/clutter_timing.rs` split a run by
//!   phase.
//!
//! [`ContactKey::WallPoint`]: crate::ContactKey::WallPoint
//! [`ContactKey::PairPoint`]: crate::ContactKey::PairPoint

use std::sync::OnceLock;

use nalgebra::{UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::SceneError;
use crate::scene::{ContactStep, Scene};

mod body;
mod config;
mod contacts;
mod profile;
mod step;
#[cfg(test)]
mod tests;

pub use body::{container, BodyShape, Obstacle, RigidBody};
pub use config::ClutterConfig;
pub use contacts::{reduce_manifold, ClutterContact, ManifoldPoint};
pub use profile::{profile, StepTiming};

/// The obstacle index of the floor (floor box or ground) in
/// [`ContactKey::WallPoint`](crate::ContactKey::WallPoint); the walls are 1 to 4 (`+x`, `-x`,
/// `+y`, `-y`, the peers' order).
pub const FLOOR: usize = 0;
/// At most this many points per contact manifold.
pub const MANIFOLD_POINTS: usize = 4;
/// The largest `n_bodies` accepted (the paper goes to 160; beyond a few thousand the columns
/// are tens of metres tall).
pub const MAX_BODIES: usize = 4096;

/// Clutter: the bodies, the container and the time stepping.
#[derive(Debug, Clone)]
pub struct Clutter {
    /// The bodies.
    pub bodies: Vec<RigidBody>,
    /// The static obstacles (index 0 the floor).
    pub obstacles: Vec<Obstacle>,
    /// The parameters.
    pub config: ClutterConfig,
    /// Simulated time (s).
    pub time: f64,
    /// Mean slip of the last step's pressed contacts (`NaN` before the first or without any).
    mean_slip: f64,
    /// Contacts pressed (positive normal impulse) in the last step.
    pressed: usize,
    /// The contacts of the current state, found once (contact step and observables share them),
    /// and the seconds their detection took.
    contacts: OnceLock<(Vec<ClutterContact>, f64)>,
}

impl Clutter {
    /// The peers' layout (module doc) from `config.seed`.
    pub fn new(config: &ClutterConfig) -> Result<Clutter, SceneError> {
        config.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let c = 0.25 * config.container;
        let columns = [(-c, -c), (c, -c), (-c, c), (c, c)];
        let half = Vector3::repeat(0.5 * config.box_side);
        let mut bodies = Vec::with_capacity(config.n_bodies);
        for i in 0..config.n_bodies {
            let (cx, cy) = columns[i % 4];
            let level = i / 4;
            let z = config.first_level + config.level_spacing * level as f64;
            // Draws in the peers' order: x, y, then (boxes) angle and axis.
            let j = config.jitter;
            let mut jitter = || {
                if j > 0.0 {
                    rng.random_range(-j..=j)
                } else {
                    0.0
                }
            };
            let x = Vector3::new(cx + jitter(), cy + jitter(), z);
            if (i + level) % 2 == 0 {
                bodies.push(RigidBody::sphere(config.sphere_radius, config.density, x));
            } else {
                let angle = rng.random_range(-std::f64::consts::PI..=std::f64::consts::PI);
                // Uniform on the unit sphere (what numpy's normalized Gaussian draws).
                let cos_t: f64 = rng.random_range(-1.0..=1.0);
                let phi = rng.random_range(0.0..std::f64::consts::TAU);
                let sin_t = (1.0 - cos_t * cos_t).max(0.0).sqrt();
                let axis = Vector3::new(sin_t * phi.cos(), sin_t * phi.sin(), cos_t);
                let q = UnitQuaternion::from_scaled_axis(axis * angle);
                bodies.push(RigidBody::cuboid(half, config.density, x, q));
            }
        }
        Ok(Clutter::from_bodies(bodies, config.clone()))
    }

    /// A scene with the given bodies in `config`'s container (for tests and other layouts;
    /// `config.n_bodies` is set to their number and the layout parameters are not used).
    pub fn with_bodies(
        bodies: Vec<RigidBody>,
        config: &ClutterConfig,
    ) -> Result<Clutter, SceneError> {
        config.validate_ranges()?;
        if bodies.is_empty() || bodies.len() > MAX_BODIES {
            return Err(SceneError::Param {
                key: "n_bodies",
                message: format!("must be between 1 and {MAX_BODIES}, got {}", bodies.len()),
            });
        }
        let valid = |b: &RigidBody| {
            b.mass > 0.0
                && b.inertia.iter().all(|i| *i > 0.0 && i.is_finite())
                && [b.x, b.v, b.w]
                    .iter()
                    .all(|v| v.iter().all(|c| c.is_finite()))
                && match b.shape {
                    BodyShape::Sphere { radius } => radius > 0.0 && radius.is_finite(),
                    BodyShape::Cuboid { half } => half.iter().all(|h| *h > 0.0 && h.is_finite()),
                }
        };
        if !bodies.iter().all(valid) {
            return Err(SceneError::NonFinite(
                "bodies (or a non-positive size, mass or inertia)",
            ));
        }
        let config = ClutterConfig {
            n_bodies: bodies.len(),
            ..config.clone()
        };
        Ok(Clutter::from_bodies(bodies, config))
    }

    fn from_bodies(bodies: Vec<RigidBody>, config: ClutterConfig) -> Clutter {
        Clutter {
            bodies,
            obstacles: container(&config),
            config,
            time: 0.0,
            mean_slip: f64::NAN,
            pressed: 0,
            contacts: OnceLock::new(),
        }
    }

    /// The contacts at the current state (found on first use, then kept until the next step).
    pub fn contacts(&self) -> &[ClutterContact] {
        &self
            .contacts
            .get_or_init(|| {
                let clock = std::time::Instant::now();
                let found = self.detect();
                (found, clock.elapsed().as_secs_f64())
            })
            .0
    }

    /// Total kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(RigidBody::kinetic_energy).sum()
    }

    /// Potential energy `sum m g z` (J).
    pub fn potential_energy(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| b.mass * self.config.gravity * b.x.z)
            .sum()
    }

    /// The largest overlap at the current state (0 when nothing overlaps).
    pub fn max_penetration(&self) -> f64 {
        self.contacts()
            .iter()
            .map(|c| (-c.phi0).max(0.0))
            .fold(0.0, f64::max)
    }

    /// Mean and largest speed of the centres of mass.
    pub fn speeds(&self) -> (f64, f64) {
        let s = self.bodies.iter().map(|b| b.v.norm());
        let max = s.clone().fold(0.0, f64::max);
        (s.sum::<f64>() / self.bodies.len() as f64, max)
    }

    /// Mean tangential speed of the last step's pressed contacts (module doc; `NaN` if none).
    pub fn mean_slip(&self) -> f64 {
        self.mean_slip
    }
}

impl Scene for Clutter {
    /// The config, with `dissipation` resolved (`dt` when the config gives none).
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&ClutterConfig {
            dissipation: Some(self.config.tau_d()),
            ..self.config.clone()
        })
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Clutter::contact_step(self)
    }

    /// The current state's detection (made by the `advance` that reached it).
    fn detect_seconds(&self) -> Option<f64> {
        self.contacts.get().map(|(_, seconds)| *seconds)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Clutter::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let (mean_speed, max_speed) = self.speeds();
        vec![
            ("kinetic_energy", self.kinetic_energy()),
            ("potential_energy", self.potential_energy()),
            ("max_penetration", self.max_penetration()),
            ("contacts", self.contacts().len() as f64),
            ("pressed_contacts", self.pressed as f64),
            ("mean_speed", mean_speed),
            ("max_speed", max_speed),
            ("mean_slip", self.mean_slip),
        ]
    }
}
