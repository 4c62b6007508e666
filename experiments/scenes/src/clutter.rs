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

use std::sync::OnceLock;

use contactlab_core::generalized::{sparse_mul_add, sparse_transpose_mul_add};
use contactlab_core::{ContactModel, GeneralizedProblem, ProblemError, StepProblem};
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::query::details::{
    contact_manifold_ball_ball, contact_manifold_convex_ball, contact_manifold_cuboid_cuboid,
    contact_manifold_halfspace_pfm, NormalConstraints,
};
use parry3d_f64::query::ContactManifold;
use parry3d_f64::shape::{Ball, Cuboid, HalfSpace, PackedFeatureId};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::SceneError;
use crate::params::check_ranges;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

/// The obstacle index of the floor (floor box or ground) in [`ContactKey::WallPoint`]; the walls
/// are 1 to 4 (`+x`, `-x`, `+y`, `-y`, the peers' order).
pub const FLOOR: usize = 0;
/// At most this many points per contact manifold.
pub const MANIFOLD_POINTS: usize = 4;
/// The largest `n_bodies` accepted (the paper goes to 160; beyond a few thousand the columns
/// are tens of metres tall).
pub const MAX_BODIES: usize = 4096;
/// Manifold points closer than this (m) are one point.
const DUPLICATE_DISTANCE: f64 = 1e-7;

fn default_n_bodies() -> usize {
    40
}
fn default_true() -> bool {
    true
}
fn default_dt() -> f64 {
    0.01
}
fn default_duration() -> f64 {
    10.0
}
fn default_mu() -> f64 {
    1.0
}
fn default_stiffness() -> f64 {
    1e12
}
fn default_gravity() -> f64 {
    9.81
}
fn default_density() -> f64 {
    1000.0
}
fn default_sphere_radius() -> f64 {
    0.05
}
fn default_box_side() -> f64 {
    0.1
}
fn default_container() -> f64 {
    0.8
}
fn default_wall_thickness() -> f64 {
    0.05
}
fn default_first_level() -> f64 {
    0.1
}
fn default_level_spacing() -> f64 {
    0.15
}
fn default_jitter() -> f64 {
    0.02
}
fn default_margin() -> f64 {
    1e-3
}

/// The scene's parameters, as experiment configs give them (`[scene.params]` and sweep keys).
/// Defaults: the paper's section VI-C and the peers' layout (module doc).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClutterConfig {
    /// Number of bodies (paper: 8 to 160; 40 in its Figs. 9-10).
    #[serde(default = "default_n_bodies")]
    pub n_bodies: usize,
    /// Seed of the jitter and the boxes' orientations.
    #[serde(default)]
    pub seed: u64,
    /// The container's four walls (`true`) or an open ground plane (`false`).
    #[serde(default = "default_true")]
    pub walls: bool,
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// The paper's simulated span (s); [`ClutterConfig::steps`] turns it into steps (the runner
    /// advances `[scene] steps`).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Friction coefficient of every contact.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Contact stiffness `k` (N/m); `inf` is a rigid contact.
    #[serde(default = "default_stiffness")]
    pub stiffness: f64,
    /// Dissipation time scale `tau_d` (s); `dt` when not given (the paper's choice).
    #[serde(default)]
    pub dissipation: Option<f64>,
    /// Gravitational acceleration (m/s^2), along `-z`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Density of every body (kg/m^3).
    #[serde(default = "default_density")]
    pub density: f64,
    /// Sphere radius (m).
    #[serde(default = "default_sphere_radius")]
    pub sphere_radius: f64,
    /// Box edge length (m; the boxes are cubes).
    #[serde(default = "default_box_side")]
    pub box_side: f64,
    /// Inner side of the container's square floor and height of its walls (m).
    #[serde(default = "default_container")]
    pub container: f64,
    /// Thickness of the floor box and the walls (m).
    #[serde(default = "default_wall_thickness")]
    pub wall_thickness: f64,
    /// Height of the lowest level of centres (m).
    #[serde(default = "default_first_level")]
    pub first_level: f64,
    /// Vertical distance between levels (m).
    #[serde(default = "default_level_spacing")]
    pub level_spacing: f64,
    /// Horizontal jitter of the centres, uniform in `[-jitter, jitter]` on `x` and `y` (m).
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Prediction distance (m): points this far apart are contacts (`phi0 > 0`).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// Widen the prediction by the distance each pair can close in one step (module doc).
    #[serde(default = "default_true")]
    pub speculative: bool,
}

impl Default for ClutterConfig {
    fn default() -> Self {
        ClutterConfig {
            n_bodies: default_n_bodies(),
            seed: 0,
            walls: true,
            dt: default_dt(),
            duration: default_duration(),
            mu: default_mu(),
            stiffness: default_stiffness(),
            dissipation: None,
            gravity: default_gravity(),
            density: default_density(),
            sphere_radius: default_sphere_radius(),
            box_side: default_box_side(),
            container: default_container(),
            wall_thickness: default_wall_thickness(),
            first_level: default_first_level(),
            level_spacing: default_level_spacing(),
            jitter: default_jitter(),
            margin: default_margin(),
            speculative: true,
        }
    }
}

impl ClutterConfig {
    /// Parses a `[scene.params]` table (with sweep values applied); unknown keys are errors,
    /// and a value of the wrong type is named by its key.
    pub fn from_table(params: &toml::Table) -> Result<ClutterConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// `round(duration / dt)`: the number of steps of the paper's span.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The dissipation time scale `tau_d`: the given one, else `dt`.
    pub fn tau_d(&self) -> f64 {
        self.dissipation.unwrap_or(self.dt)
    }

    /// Checks the physical parameters' ranges (the error names the key), not the layout.
    pub fn validate_ranges(&self) -> Result<(), SceneError> {
        check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration),
                ("density", self.density),
                ("sphere_radius", self.sphere_radius),
                ("box_side", self.box_side),
                ("container", self.container),
                ("wall_thickness", self.wall_thickness),
                ("first_level", self.first_level),
                ("level_spacing", self.level_spacing),
            ],
            &[
                ("mu", self.mu),
                ("gravity", self.gravity),
                ("jitter", self.jitter),
                ("margin", self.margin),
                ("dissipation", self.tau_d()),
            ],
        )?;
        // Infinity is allowed: a rigid contact (ContactModel's convention).
        if self.stiffness.is_nan() || self.stiffness <= 0.0 {
            return Err(SceneError::Param {
                key: "stiffness",
                message: format!(
                    "must be a positive number (inf: rigid), got {}",
                    self.stiffness
                ),
            });
        }
        Ok(())
    }

    /// Checks every parameter: ranges, the number of bodies, and that the initial layout is
    /// free of overlaps (columns apart and inside the walls, levels apart, the lowest level
    /// above the floor).
    pub fn validate(&self) -> Result<(), SceneError> {
        self.validate_ranges()?;
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        if self.n_bodies == 0 || self.n_bodies > MAX_BODIES {
            return bad(
                "n_bodies",
                format!("must be between 1 and {MAX_BODIES}, got {}", self.n_bodies),
            );
        }
        // A randomly turned box reaches its half diagonal from its centre.
        let r_box = 0.5 * self.box_side * 3f64.sqrt();
        let reach = r_box.max(self.sphere_radius);
        // Columns sit container/4 from the axes: neighbours are container/2 apart, the walls
        // container/4 away; both need reach + jitter < container/4.
        if reach + self.jitter >= 0.25 * self.container {
            return bad(
                "container",
                format!(
                    "columns at +-{:.3} m with jitter {} and bodies reaching {reach:.3} m from \
                     their centres overlap each other or the walls",
                    0.25 * self.container,
                    self.jitter
                ),
            );
        }
        if self.sphere_radius + r_box >= self.level_spacing {
            return bad(
                "level_spacing",
                format!(
                    "a sphere ({}) and a turned box (reach {r_box:.3}) on consecutive levels \
                     overlap at {}",
                    self.sphere_radius, self.level_spacing
                ),
            );
        }
        if self.first_level <= reach {
            return bad(
                "first_level",
                format!(
                    "bodies reaching {reach:.3} m from their centres cut the floor at {}",
                    self.first_level
                ),
            );
        }
        Ok(())
    }
}

/// A body's shape, centred on its centre of mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BodyShape {
    /// A solid sphere.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A solid box along its body axes.
    Cuboid {
        /// Half the edge lengths (m).
        half: Vector3<f64>,
    },
}

/// One free rigid body: shape, inertia and state.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidBody {
    /// Its shape.
    pub shape: BodyShape,
    /// Mass (kg).
    pub mass: f64,
    /// Principal moments of inertia about the shape's axes (kg m^2).
    pub inertia: Vector3<f64>,
    /// Centre of mass (world).
    pub x: Vector3<f64>,
    /// Orientation, body to world.
    pub q: UnitQuaternion<f64>,
    /// Linear velocity of the centre of mass (world).
    pub v: Vector3<f64>,
    /// Angular velocity (world).
    pub w: Vector3<f64>,
}

impl RigidBody {
    /// A solid sphere of `radius` and `density` at rest at `x`.
    pub fn sphere(radius: f64, density: f64, x: Vector3<f64>) -> RigidBody {
        let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        let i = 0.4 * mass * radius * radius;
        RigidBody {
            shape: BodyShape::Sphere { radius },
            mass,
            inertia: Vector3::repeat(i),
            x,
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// A solid box of half extents `half` and `density` at rest at `x`, turned by `q`.
    pub fn cuboid(
        half: Vector3<f64>,
        density: f64,
        x: Vector3<f64>,
        q: UnitQuaternion<f64>,
    ) -> RigidBody {
        let mass = density * 8.0 * half.x * half.y * half.z;
        // (m / 12) (b^2 + c^2) with full edges b = 2 hb: (m / 3) (hb^2 + hc^2).
        let s = half.component_mul(&half);
        let inertia = Vector3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 3.0);
        RigidBody {
            shape: BodyShape::Cuboid { half },
            mass,
            inertia,
            x,
            q,
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// The radius of the smallest sphere about the centre that holds the body.
    pub fn bounding_radius(&self) -> f64 {
        match self.shape {
            BodyShape::Sphere { radius } => radius,
            BodyShape::Cuboid { half } => half.norm(),
        }
    }

    /// The rotated inertia `R diag(I) R'` (world), exactly symmetric.
    pub fn world_inertia(&self) -> Matrix3<f64> {
        self.rotated(self.inertia)
    }

    /// Its inverse `R diag(1 / I) R'`.
    pub fn world_inertia_inverse(&self) -> Matrix3<f64> {
        self.rotated(self.inertia.map(|i| 1.0 / i))
    }

    fn rotated(&self, d: Vector3<f64>) -> Matrix3<f64> {
        let r = self.q.to_rotation_matrix().into_inner();
        let m = r * Matrix3::from_diagonal(&d) * r.transpose();
        // Symmetric to the last bit, so A passes any symmetry check at any tolerance.
        (m + m.transpose()) * 0.5
    }

    /// `m |v|^2 / 2 + omega' I_w omega / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.mass * self.v.norm_squared() + 0.5 * self.w.dot(&(self.world_inertia() * self.w))
    }

    /// The largest speed of any of its points.
    fn speed_bound(&self) -> f64 {
        self.v.norm() + self.w.norm() * self.bounding_radius()
    }

    /// Its pose for parry.
    fn pose(&self) -> Pose {
        Pose::from_parts(
            to_parry(&self.x),
            Rotation::from_xyzw(self.q.i, self.q.j, self.q.k, self.q.w),
        )
    }

    /// The free motion of one step (module doc): `[v*, omega*]`.
    fn free_velocity(&self, dt: f64, gravity: f64) -> [Vector3<f64>; 2] {
        let iw = self.world_inertia();
        let gyro = self.w.cross(&(iw * self.w));
        [
            self.v - Vector3::new(0.0, 0.0, dt * gravity),
            self.w - dt * (self.world_inertia_inverse() * gyro),
        ]
    }
}

/// A static obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Obstacle {
    /// An axis-aligned box.
    Cuboid {
        /// Half extents (m).
        half: Vector3<f64>,
        /// Centre (m).
        center: Vector3<f64>,
    },
    /// The half-space `z <= 0`.
    Ground,
}

impl Obstacle {
    /// Distance from `p` to the obstacle (0 inside).
    fn distance(&self, p: &Vector3<f64>) -> f64 {
        match self {
            Obstacle::Cuboid { half, center } => {
                let d = (p - center).abs() - half;
                d.map(|c| c.max(0.0)).norm()
            }
            Obstacle::Ground => p.z.max(0.0),
        }
    }
}

/// The container of `peers/scenes.py` (`_box_walls(L, t, closed=False)`): floor box with its
/// top at `z = 0`, then the walls at `+x`, `-x`, `+y`, `-y`; or the ground alone.
pub fn container(cfg: &ClutterConfig) -> Vec<Obstacle> {
    if !cfg.walls {
        return vec![Obstacle::Ground];
    }
    let (h, t) = (0.5 * cfg.container, cfg.wall_thickness);
    let cuboid = |half: [f64; 3], center: [f64; 3]| Obstacle::Cuboid {
        half: Vector3::from(half),
        center: Vector3::from(center),
    };
    vec![
        cuboid([h + t, h + t, 0.5 * t], [0.0, 0.0, -0.5 * t]),
        cuboid([0.5 * t, h + t, h], [h + 0.5 * t, 0.0, h]),
        cuboid([0.5 * t, h + t, h], [-h - 0.5 * t, 0.0, h]),
        cuboid([h, 0.5 * t, h], [0.0, h + 0.5 * t, h]),
        cuboid([h, 0.5 * t, h], [0.0, -h - 0.5 * t, h]),
    ]
}

/// One contact point at the start of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct ClutterContact {
    /// Persistent identity.
    pub key: ContactKey,
    /// The body the normal points towards.
    pub a: usize,
    /// The other body (`None`: an obstacle).
    pub b: Option<usize>,
    /// The contact point (world): the midpoint of the two surfaces' witness points.
    pub point: Vector3<f64>,
    /// Rows `n, t1, t2` (world).
    pub frame: Matrix3<f64>,
    /// Signed distance (negative: overlap).
    pub phi0: f64,
}

/// One point of a manifold, in world coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManifoldPoint {
    /// The contact point.
    pub point: Vector3<f64>,
    /// Signed distance.
    pub phi: f64,
    /// The features in touch (the first shape's id in the high 32 bits).
    pub feature: u64,
}

/// Keeps at most [`MANIFOLD_POINTS`] of a manifold's points (normal `n`), in their given order:
/// near-duplicates merged (the deeper kept), then the deepest point, the one farthest from it in
/// the contact plane, the one spanning the largest triangle with those two, and the one adding
/// the most area outside that triangle (none if all the rest lie inside it).
pub fn reduce_manifold(points: &[ManifoldPoint], n: &Vector3<f64>) -> Vec<ManifoldPoint> {
    let mut pts: Vec<ManifoldPoint> = Vec::with_capacity(points.len());
    for p in points {
        match pts
            .iter_mut()
            .find(|q| (q.point - p.point).norm() < DUPLICATE_DISTANCE)
        {
            Some(q) if p.phi < q.phi => *q = *p,
            Some(_) => {}
            None => pts.push(*p),
        }
    }
    if pts.len() <= MANIFOLD_POINTS {
        return pts;
    }
    // In-plane vectors and areas: the normal component does not matter for the spread.
    let flat = |d: Vector3<f64>| d - n * n.dot(&d);
    let argmax = |score: &dyn Fn(&ManifoldPoint) -> f64| {
        let mut best = (0, f64::NEG_INFINITY);
        for (i, p) in pts.iter().enumerate() {
            let s = score(p);
            if s > best.1 {
                best = (i, s);
            }
        }
        best
    };
    let i0 = argmax(&|p| -p.phi).0;
    let p0 = pts[i0].point;
    let i1 = argmax(&|p| flat(p.point - p0).norm()).0;
    let p1 = pts[i1].point;
    let i2 = argmax(&|p| n.dot(&(p1 - p0).cross(&(p.point - p0))).abs()).0;
    let p2 = pts[i2].point;
    let mut keep = vec![i0, i1, i2];
    // Orientation of the triangle about n; a point outside edge (e0, e1) has a cross product of
    // the opposite sign.
    let sign = n.dot(&(p1 - p0).cross(&(p2 - p0))).signum();
    let outside = |p: &ManifoldPoint| {
        [(p0, p1), (p1, p2), (p2, p0)]
            .iter()
            .map(|(e0, e1)| (-sign * n.dot(&(e1 - e0).cross(&(p.point - e0)))).max(0.0))
            .sum::<f64>()
    };
    let (i3, area) = argmax(&outside);
    if area > 0.0 {
        keep.push(i3);
    }
    keep.sort_unstable();
    keep.dedup();
    keep.into_iter().map(|i| pts[i]).collect()
}

/// A shape as parry sees it.
#[derive(Debug, Clone, Copy)]
enum Geom {
    Ball(Ball),
    Cuboid(Cuboid),
    Ground(HalfSpace),
}

fn to_parry(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

fn from_parry(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

fn pack(f1: PackedFeatureId, f2: PackedFeatureId) -> u64 {
    (u64::from(f1.0) << 32) | u64::from(f2.0)
}

/// The contact manifold of `g1` at `pose1` against `g2` at `pose2` within `prediction`: the
/// normal (world, from shape 1 towards shape 2) and the points (midpoint, signed distance,
/// features of shape 1 then shape 2), unreduced.
fn manifold(
    g1: Geom,
    pose1: &Pose,
    g2: Geom,
    pose2: &Pose,
    prediction: f64,
) -> Option<(Vector3<f64>, Vec<ManifoldPoint>)> {
    // Cases with the ball or the box second are answered by swapping the shapes and flipping
    // the answer back, so each of parry's routines is called the way round it is written.
    let swap = |g1, pose1, g2, pose2| {
        manifold(g2, pose2, g1, pose1, prediction).map(|(n, pts)| {
            let pts = pts
                .into_iter()
                .map(|p| ManifoldPoint {
                    feature: p.feature.rotate_left(32),
                    ..p
                })
                .collect();
            (-n, pts)
        })
    };
    let pos12 = pose1.inv_mul(pose2);
    let mut m = ContactManifold::<(), ()>::new();
    let none = None::<&dyn NormalConstraints>;
    match (g1, g2) {
        (Geom::Ball(b1), Geom::Ball(b2)) => {
            contact_manifold_ball_ball(&pos12, &b1, &b2, prediction, &mut m)
        }
        (Geom::Cuboid(c1), Geom::Cuboid(c2)) => {
            contact_manifold_cuboid_cuboid(&pos12, &c1, &c2, prediction, &mut m)
        }
        (Geom::Cuboid(c1), Geom::Ball(b2)) => {
            contact_manifold_convex_ball(&pos12, &c1, &b2, none, none, prediction, &mut m, false)
        }
        (Geom::Ground(h1), Geom::Ball(b2)) => {
            contact_manifold_convex_ball(&pos12, &h1, &b2, none, none, prediction, &mut m, false)
        }
        (Geom::Ground(h1), Geom::Cuboid(c2)) => {
            contact_manifold_halfspace_pfm(&pos12, &h1, &c2, 0.0, prediction, &mut m, false)
        }
        (Geom::Ball(_), Geom::Cuboid(_) | Geom::Ground(_)) | (Geom::Cuboid(_), Geom::Ground(_)) => {
            return swap(g1, pose1, g2, pose2)
        }
        (Geom::Ground(_), Geom::Ground(_)) => return None,
    }
    if m.points.is_empty() {
        return None;
    }
    let n = from_parry(pose1.rotation * m.local_n1);
    if !(n.iter().all(|c| c.is_finite()) && (n.norm() - 1.0).abs() < 1e-9) {
        // parry has no direction to give (coincident centres): no usable contact.
        return None;
    }
    let pts = m
        .points
        .iter()
        // Face clipping returns the whole clipped polygon; keep what is within reach.
        .filter(|c| c.dist <= prediction)
        .map(|c| ManifoldPoint {
            point: 0.5 * (from_parry(*pose1 * c.local_p1) + from_parry(*pose2 * c.local_p2)),
            phi: c.dist,
            feature: pack(c.fid1, c.fid2),
        })
        .collect::<Vec<_>>();
    (!pts.is_empty()).then_some((n, pts))
}

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

    /// Per body, how far its surface can move in one step (the speculative widening).
    fn reach(&self) -> Vec<f64> {
        let cfg = &self.config;
        self.bodies
            .iter()
            .map(|b| {
                if cfg.speculative {
                    cfg.dt * (b.speed_bound() + cfg.dt * cfg.gravity)
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Pairs of bodies whose bounding spheres come within their prediction distance, `a < b`,
    /// sorted: sweep and prune along `x`.
    fn candidate_pairs(&self, reach: &[f64]) -> Vec<(usize, usize)> {
        let half_margin = 0.5 * self.config.margin;
        let interval = |i: usize| {
            let b = &self.bodies[i];
            let r = b.bounding_radius() + reach[i] + half_margin;
            (b.x.x - r, b.x.x + r)
        };
        let mut order: Vec<usize> = (0..self.bodies.len()).collect();
        order.sort_by(|&i, &j| interval(i).0.total_cmp(&interval(j).0).then(i.cmp(&j)));
        let mut pairs = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            let hi = interval(i).1;
            for &j in &order[k + 1..] {
                if interval(j).0 > hi {
                    break;
                }
                let (a, b) = (i.min(j), i.max(j));
                let (ba, bb) = (&self.bodies[a], &self.bodies[b]);
                let limit = ba.bounding_radius()
                    + bb.bounding_radius()
                    + self.config.margin
                    + reach[a]
                    + reach[b];
                if (ba.x - bb.x).norm() <= limit {
                    pairs.push((a, b));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    fn geom(&self, i: usize) -> Geom {
        match self.bodies[i].shape {
            BodyShape::Sphere { radius } => Geom::Ball(Ball::new(radius)),
            BodyShape::Cuboid { half } => Geom::Cuboid(Cuboid::new(to_parry(&half))),
        }
    }

    /// Narrow phase: every body against every obstacle in reach, then every candidate pair.
    fn detect(&self) -> Vec<ClutterContact> {
        let cfg = &self.config;
        let reach = self.reach();
        let poses: Vec<Pose> = self.bodies.iter().map(RigidBody::pose).collect();
        let mut out = Vec::new();
        for (i, body) in self.bodies.iter().enumerate() {
            let prediction = cfg.margin + reach[i];
            for (k, obstacle) in self.obstacles.iter().enumerate() {
                if obstacle.distance(&body.x) > body.bounding_radius() + prediction {
                    continue;
                }
                let (g2, pose2) = match obstacle {
                    Obstacle::Cuboid { half, center } => (
                        Geom::Cuboid(Cuboid::new(to_parry(half))),
                        Pose::from_translation(to_parry(center)),
                    ),
                    Obstacle::Ground => (Geom::Ground(HalfSpace::new(Vector::Z)), Pose::identity()),
                };
                if let Some((n12, pts)) = manifold(self.geom(i), &poses[i], g2, &pose2, prediction)
                {
                    push_manifold(&mut out, i, None, k, -n12, &pts);
                }
            }
        }
        for (a, b) in self.candidate_pairs(&reach) {
            let prediction = cfg.margin + reach[a] + reach[b];
            if let Some((n12, pts)) =
                manifold(self.geom(a), &poses[a], self.geom(b), &poses[b], prediction)
            {
                push_manifold(&mut out, a, Some(b), 0, -n12, &pts);
            }
        }
        out
    }

    /// This step's problem in generalized velocities (module doc): `A = M(q0)`, `J` at `q0`,
    /// `v*`, each contact's model, `dt`, `v0`, one tree per body.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let cfg = &self.config;
        let n = self.bodies.len();
        let nv = 6 * n;
        let contacts = self.contacts();
        let nc = contacts.len();
        // `A`, column by column (CSC, rows sorted): per body three mass columns, then the
        // three columns of the rotated inertia with all nine entries, zeros included, so the
        // pattern never changes.
        let mut a_ptr = Vec::with_capacity(nv + 1);
        let mut a_rows = Vec::with_capacity(12 * n);
        let mut a_vals = Vec::with_capacity(12 * n);
        let mut v_star = Vec::with_capacity(nv);
        let mut v0 = Vec::with_capacity(nv);
        for (i, b) in self.bodies.iter().enumerate() {
            let o = 6 * i;
            for k in 0..3 {
                a_ptr.push(a_rows.len());
                a_rows.push(o + k);
                a_vals.push(b.mass);
            }
            let iw = b.world_inertia();
            for c in 0..3 {
                a_ptr.push(a_rows.len());
                for r in 0..3 {
                    a_rows.push(o + 3 + r);
                    a_vals.push(iw[(r, c)]);
                }
            }
            let [vs, ws] = b.free_velocity(cfg.dt, cfg.gravity);
            v_star.extend(vs.iter().chain(ws.iter()));
            v0.extend(b.v.iter().chain(b.w.iter()));
        }
        a_ptr.push(a_rows.len());
        // `J`, column by column: each body's contacts in contact order (so rows are sorted),
        // three rows each in each of the body's six columns.
        let mut touching: Vec<Vec<(usize, [[f64; 3]; 6])>> = vec![Vec::new(); n];
        for (ci, c) in contacts.iter().enumerate() {
            touching[c.a].push((ci, self.jacobian_block(c, c.a, 1.0)));
            if let Some(b) = c.b {
                touching[b].push((ci, self.jacobian_block(c, b, -1.0)));
            }
        }
        let nnz_j: usize = touching.iter().map(|t| 18 * t.len()).sum();
        let mut j_ptr = Vec::with_capacity(nv + 1);
        let mut j_rows = Vec::with_capacity(nnz_j);
        let mut j_vals = Vec::with_capacity(nnz_j);
        for blocks in &touching {
            for m in 0..6 {
                j_ptr.push(j_rows.len());
                for (ci, block) in blocks {
                    j_rows.extend([3 * ci, 3 * ci + 1, 3 * ci + 2]);
                    j_vals.extend(block[m]);
                }
            }
        }
        j_ptr.push(j_rows.len());
        // Valid by construction (sorted rows, one pointer per column): `new_checked` asserts it.
        let sparse = |rows, cols, ptr, idx, vals| {
            SparseColMat::new(
                SymbolicSparseColMat::new_checked(rows, cols, ptr, None, idx),
                vals,
            )
        };
        let tau_d = cfg.tau_d();
        let problem = GeneralizedProblem {
            a: sparse(nv, nv, a_ptr, a_rows, a_vals),
            j: sparse(3 * nc, nv, j_ptr, j_rows, j_vals),
            v_star: v_star.clone(),
            b: vec![0.0; 3 * nc],
            contacts: contacts
                .iter()
                .map(|c| ContactModel {
                    mu: cfg.mu,
                    phi0: c.phi0,
                    stiffness: cfg.stiffness,
                    dissipation: tau_d,
                })
                .collect(),
            dt: Some(cfg.dt),
            v0: Some(v0),
            tree_of: (0..nv).map(|k| k / 6).collect(),
        };
        // Shapes, symmetry and the block structure hold by construction (and are tested
        // against `GeneralizedProblem::validate`); what a diverging simulation could break is
        // finiteness, checked here in O(nnz) (the full validation's symmetry check hashes
        // every entry of `A`, a few percent of a step).
        for (field, values) in [
            ("A", problem.a.val()),
            ("J", problem.j.val()),
            ("v*", &problem.v_star[..]),
        ] {
            if let Some((index, value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(SceneError::Problem(ProblemError::NonFinite {
                    field: field.into(),
                    index,
                    value: *value,
                }));
            }
        }
        if let Some((i, c)) = problem
            .contacts
            .iter()
            .enumerate()
            .find(|(_, c)| !c.phi0.is_finite())
        {
            return Err(SceneError::Problem(ProblemError::NonFinite {
                field: "phi0".into(),
                index: i,
                value: c.phi0,
            }));
        }
        Ok(ContactStep {
            contacts: contacts
                .iter()
                .map(|c| Contact {
                    key: c.key,
                    frame: c.frame,
                    gap: c.phi0,
                })
                .collect(),
            problem: problem.into(),
            free: v_star,
        })
    }

    /// The block of `J` of contact `c` on `body`'s six columns, column by column (three rows
    /// each): for each direction `d` of the frame, `sign d` on the linear velocity and
    /// `sign (p - x) x d` on the angular one (module doc).
    fn jacobian_block(&self, c: &ClutterContact, body: usize, sign: f64) -> [[f64; 3]; 6] {
        let r = c.point - self.bodies[body].x;
        let mut out = [[0.0; 3]; 6];
        for (k, row) in c.frame.row_iter().enumerate() {
            let d: Vector3<f64> = row.transpose();
            let ang = r.cross(&d);
            for (m, column) in out.iter_mut().enumerate() {
                column[k] = sign * if m < 3 { d[m] } else { ang[m - 3] };
            }
        }
        out
    }

    /// Applies the impulses `r` (normal first per contact, the step's frames):
    /// `v = v* + A^-1 J' r` body by body, moves the bodies (module doc), and finds the new
    /// state's contacts, so that a caller timing `contact_step` and `advance` (the runner's
    /// `scene_seconds`) counts collision detection too.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        self.move_bodies(step, r)?;
        self.contacts();
        Ok(())
    }

    /// [`Clutter::advance`] without the detection of the new state's contacts.
    fn move_bodies(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let n = self.bodies.len();
        let nc = step.contacts.len();
        step.check_impulses(r, Some(6 * n))?;
        let mut v = step.free.clone();
        let mut jr = vec![0.0; 6 * n];
        let g = step.problem.generalized();
        if nc > 0 {
            let Some(g) = g else {
                return Err(SceneError::Problem(ProblemError::Shape {
                    field: "step".into(),
                    expected: "a problem in generalized velocities (from this scene)".into(),
                    found: "a contact-space problem".into(),
                }));
            };
            if g.j.nrows() != 3 * nc || g.j.ncols() != 6 * n {
                return Err(SceneError::Impulses {
                    expected: 6 * n,
                    found: g.j.ncols(),
                });
            }
            sparse_transpose_mul_add(&g.j, r, &mut jr);
        }
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let o = 6 * i;
            let lin = Vector3::new(jr[o], jr[o + 1], jr[o + 2]) / b.mass;
            let ang = b.world_inertia_inverse() * Vector3::new(jr[o + 3], jr[o + 4], jr[o + 5]);
            b.v = Vector3::new(v[o], v[o + 1], v[o + 2]) + lin;
            b.w = Vector3::new(v[o + 3], v[o + 4], v[o + 5]) + ang;
            v[o..o + 3].copy_from_slice(b.v.as_slice());
            v[o + 3..o + 6].copy_from_slice(b.w.as_slice());
            if !(b.v.iter().chain(b.w.iter()).all(|c| c.is_finite())) {
                return Err(SceneError::NonFinite("velocities"));
            }
        }
        // Slip of the pressed contacts with the new velocities, before the bodies move.
        let (mut slip, mut pressed) = (0.0, 0);
        if let (Some(g), true) = (g, nc > 0) {
            let mut u = vec![0.0; 3 * nc];
            sparse_mul_add(&g.j, &v, &mut u);
            for c in 0..nc {
                if r[3 * c] > 0.0 {
                    slip += u[3 * c + 1].hypot(u[3 * c + 2]);
                    pressed += 1;
                }
            }
        }
        self.mean_slip = if pressed > 0 {
            slip / pressed as f64
        } else {
            f64::NAN
        };
        self.pressed = pressed;
        let dt = self.config.dt;
        for b in &mut self.bodies {
            b.x += dt * b.v;
            b.q = UnitQuaternion::new_normalize(
                (UnitQuaternion::from_scaled_axis(dt * b.w) * b.q).into_inner(),
            );
        }
        self.time += dt;
        self.contacts = OnceLock::new();
        Ok(())
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

/// Appends one manifold (normal `n` towards body `a`) as contacts, reduced to
/// [`MANIFOLD_POINTS`], keyed by the bodies (or the obstacle) and the features.
fn push_manifold(
    out: &mut Vec<ClutterContact>,
    a: usize,
    b: Option<usize>,
    obstacle: usize,
    n: Vector3<f64>,
    pts: &[ManifoldPoint],
) {
    let frame = contact_frame(n);
    let kept = reduce_manifold(pts, &n);
    for (k, p) in kept.iter().enumerate() {
        // Features are distinct within one manifold from parry's clipping; if two ever agree,
        // the later one gets a key no feature pair can have, so keys stay unique.
        let feature = if kept[..k].iter().any(|q| q.feature == p.feature) {
            u64::MAX - k as u64
        } else {
            p.feature
        };
        let key = match b {
            Some(b) => ContactKey::PairPoint { a, b, feature },
            None => ContactKey::WallPoint {
                body: a,
                obstacle,
                feature,
            },
        };
        out.push(ClutterContact {
            key,
            a,
            b,
            point: p.point,
            frame,
            phi0: p.phi,
        });
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

/// Where one step's time went ([`profile`]), in seconds, and what the solver did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTiming {
    /// Contacts in the step's problem.
    pub contacts: usize,
    /// Collision detection: broad and narrow phase, manifold reduction.
    pub detect: f64,
    /// Assembly of `A`, `J`, `v*` and the contact models (and their validation).
    pub assemble: f64,
    /// The solve, as the runner calls it (formulation build, driver, the shared ruler).
    pub solve: f64,
    /// `advance`: impulses through `A^-1`, the new poses.
    pub advance: f64,
    /// The driver's iterations (0 without contacts).
    pub iterations: u64,
    /// The solve's status (`no_contacts` without contacts).
    pub status: String,
    /// The largest overlap after the step.
    pub max_penetration: f64,
}

/// Runs `steps` steps of the scene, `solve` giving each step's impulses, and times each phase
/// separately, so the scene's own work can be set against the solve's (the runner times only
/// the solve). `solve` returns the impulses, the iterations and the status it reached.
pub fn profile<E: std::fmt::Display>(
    scene: &mut Clutter,
    steps: usize,
    mut solve: impl FnMut(&StepProblem) -> Result<(Vec<f64>, u64, String), E>,
) -> Result<Vec<StepTiming>, SceneError> {
    use std::time::Instant;
    let mut out = Vec::with_capacity(steps);
    for step in 0..steps {
        let t0 = Instant::now();
        let contacts = scene.contacts().len();
        let t1 = Instant::now();
        let cs = scene.contact_step()?;
        let t2 = Instant::now();
        let (r, iterations, status) = if contacts == 0 {
            (Vec::new(), 0, "no_contacts".to_string())
        } else {
            solve(&cs.problem).map_err(|e| SceneError::Solve {
                step,
                message: e.to_string(),
            })?
        };
        let t3 = Instant::now();
        scene.move_bodies(&cs, &r)?;
        let t4 = Instant::now();
        // The new state's contacts (kept for the next step; `advance` finds them too): this
        // step's detection.
        scene.contacts();
        let t5 = Instant::now();
        let max_penetration = scene.max_penetration();
        out.push(StepTiming {
            contacts,
            detect: (t1 - t0 + (t5 - t4)).as_secs_f64(),
            assemble: (t2 - t1).as_secs_f64(),
            solve: (t3 - t2).as_secs_f64(),
            advance: (t4 - t3).as_secs_f64(),
            iterations,
            status,
            max_penetration,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
    use contactlab_core::SolveOptions;
    use contactlab_core::StepContext;
    use nalgebra::Matrix6;

    use crate::SceneKind;

    const H: f64 = 0.05;

    fn config(walls: bool) -> ClutterConfig {
        ClutterConfig {
            walls,
            ..ClutterConfig::default()
        }
    }

    fn cube(x: [f64; 3], q: UnitQuaternion<f64>) -> RigidBody {
        RigidBody::cuboid(Vector3::repeat(H), 1000.0, x.into(), q)
    }

    fn ball(x: [f64; 3]) -> RigidBody {
        RigidBody::sphere(H, 1000.0, x.into())
    }

    fn scene(bodies: Vec<RigidBody>, walls: bool) -> Clutter {
        Clutter::with_bodies(bodies, &config(walls)).unwrap()
    }

    fn turned(axis: [f64; 3], angle: f64) -> UnitQuaternion<f64> {
        UnitQuaternion::from_scaled_axis(Vector3::from(axis).normalize() * angle)
    }

    fn normal(c: &ClutterContact) -> Vector3<f64> {
        c.frame.row(0).transpose()
    }

    /// A small pile with every kind of contact: a turned box on the floor, a box on it, a
    /// sphere on that, a sphere against the `+x` wall and resting on the floor, two spheres
    /// touching; all with velocities.
    fn pile() -> Clutter {
        let tilt = turned([0.3, -0.2, 1.0], 0.4);
        let mut bodies = vec![
            cube([0.0, 0.0, H - 2e-4], turned([0.0, 0.0, 1.0], 0.3)),
            cube([0.01, -0.01, 3.0 * H - 3e-4], tilt),
            ball([0.0, 0.0, 0.0]),
            ball([0.4 - H + 1e-4, 0.0, H - 1e-4]),
            ball([0.4 - 3.0 * H + 2e-4, 0.0, H + 1e-3]),
        ];
        // The sphere on top of box 1, lowered onto it until they overlap by 1e-4: bisection on
        // its height, with distances from a scene whose prediction reaches everywhere.
        let far = ClutterConfig {
            margin: 1.0,
            ..config(true)
        };
        let phi = |z: f64| {
            let mut b = bodies.clone();
            b[2].x = Vector3::new(0.01, -0.01, z);
            let t = Clutter::with_bodies(b, &far).unwrap();
            t.contacts()
                .iter()
                .filter(|c| c.a == 1 && c.b == Some(2))
                .map(|c| c.phi0)
                .fold(f64::INFINITY, f64::min)
        };
        let (mut lo, mut hi) = (bodies[1].x.z, bodies[1].x.z + 0.3);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if phi(mid) < -1e-4 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        assert!((phi(hi) + 1e-4).abs() < 1e-12);
        bodies[2].x = Vector3::new(0.01, -0.01, hi);
        let mut s = scene(bodies, true);
        let vel = [
            ([0.3, -0.1, 0.2], [1.0, -2.0, 0.5]),
            ([-0.2, 0.4, -0.1], [0.3, 0.7, -1.1]),
            ([0.1, 0.1, -0.3], [-0.4, 0.2, 0.9]),
            ([0.5, 0.0, 0.1], [0.0, 1.5, 0.0]),
            ([-0.3, 0.2, 0.0], [0.6, 0.0, -0.8]),
        ];
        for (b, (v, w)) in s.bodies.iter_mut().zip(vel) {
            b.v = v.into();
            b.w = w.into();
        }
        s.contacts = OnceLock::new();
        s
    }

    #[test]
    fn the_layout_mirrors_the_peers_scene() {
        let cfg = ClutterConfig::default();
        let s = Clutter::new(&cfg).unwrap();
        assert_eq!(s.bodies.len(), 40);
        for (i, b) in s.bodies.iter().enumerate() {
            let level = i / 4;
            let (sx, sy) = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)][i % 4];
            assert!((b.x.x - 0.2 * sx).abs() <= 0.02 && (b.x.y - 0.2 * sy).abs() <= 0.02);
            assert_relative_eq!(b.x.z, 0.1 + 0.15 * level as f64, epsilon = 1e-12);
            assert_eq!(b.v, Vector3::zeros());
            match b.shape {
                BodyShape::Sphere { radius } => {
                    assert_eq!((i + level) % 2, 0, "body {i}");
                    assert_eq!(radius, 0.05);
                    // The paper's 0.524 kg.
                    assert_relative_eq!(b.mass, 0.524, epsilon = 1e-3);
                    assert_relative_eq!(b.inertia, Vector3::repeat(0.4 * b.mass * 0.0025));
                }
                BodyShape::Cuboid { half } => {
                    assert_eq!((i + level) % 2, 1, "body {i}");
                    assert_eq!(half, Vector3::repeat(0.05));
                    assert_relative_eq!(b.mass, 1.0, epsilon = 1e-12);
                    // A cube: m s^2 / 6 about every axis.
                    assert_relative_eq!(b.inertia, Vector3::repeat(0.01 / 6.0), epsilon = 1e-15);
                    assert!(b.q.angle() > 1e-3, "boxes are turned");
                }
            }
        }
        let spheres = s
            .bodies
            .iter()
            .filter(|b| matches!(b.shape, BodyShape::Sphere { .. }))
            .count();
        assert_eq!(spheres, 20);
        // Nothing touches at the start: the columns and levels are apart, the floor below.
        assert!(s.contacts().is_empty(), "{:?}", s.contacts().first());
        // The container: floor top at z = 0, inner faces of the walls at +-0.4, 0.8 high.
        assert_eq!(s.obstacles.len(), 5);
        let faces: Vec<f64> = s
            .obstacles
            .iter()
            .map(|o| match o {
                Obstacle::Cuboid { half, center } => {
                    if center.z < 0.0 {
                        center.z + half.z
                    } else {
                        assert_relative_eq!(center.z + half.z, 0.8);
                        (center.x.abs() - half.x).max(center.y.abs() - half.y)
                    }
                }
                Obstacle::Ground => f64::NAN,
            })
            .collect();
        for (got, want) in faces.iter().zip([0.0, 0.4, 0.4, 0.4, 0.4]) {
            assert_relative_eq!(*got, want, epsilon = 1e-15);
        }
        assert_eq!(container(&config(false)), vec![Obstacle::Ground]);
        assert_eq!(cfg.steps(), 1000);
        assert_eq!(cfg.tau_d(), cfg.dt);
    }

    #[test]
    fn seeds_are_deterministic_and_distinct() {
        let cfg = ClutterConfig {
            n_bodies: 160,
            seed: 3,
            ..ClutterConfig::default()
        };
        let (a, b) = (Clutter::new(&cfg).unwrap(), Clutter::new(&cfg).unwrap());
        assert_eq!(a.bodies, b.bodies);
        let c = Clutter::new(&ClutterConfig { seed: 4, ..cfg }).unwrap();
        assert_ne!(a.bodies, c.bodies);
        assert_eq!(a.bodies[159].x.z, 0.1 + 0.15 * 39.0);
        assert!(a.contacts().is_empty());
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |cfg: ClutterConfig| Clutter::new(&cfg).unwrap_err().to_string();
        let d = ClutterConfig::default();
        for (cfg, key) in [
            (
                ClutterConfig {
                    dt: 0.0,
                    ..d.clone()
                },
                "`dt`",
            ),
            (
                ClutterConfig {
                    mu: -1.0,
                    ..d.clone()
                },
                "`mu`",
            ),
            (
                ClutterConfig {
                    stiffness: 0.0,
                    ..d.clone()
                },
                "`stiffness`",
            ),
            (
                ClutterConfig {
                    dissipation: Some(-1.0),
                    ..d.clone()
                },
                "`dissipation`",
            ),
            (
                ClutterConfig {
                    margin: f64::NAN,
                    ..d.clone()
                },
                "`margin`",
            ),
            (
                ClutterConfig {
                    n_bodies: 0,
                    ..d.clone()
                },
                "`n_bodies`",
            ),
            (
                ClutterConfig {
                    box_side: 0.3,
                    ..d.clone()
                },
                "`container`",
            ),
            (
                ClutterConfig {
                    level_spacing: 0.1,
                    ..d.clone()
                },
                "`level_spacing`",
            ),
            (
                ClutterConfig {
                    first_level: 0.05,
                    ..d.clone()
                },
                "`first_level`",
            ),
        ] {
            let e = err(cfg);
            assert!(e.contains(key), "{key}: {e}");
        }
        // Rigid contacts are allowed.
        assert!(Clutter::new(&ClutterConfig {
            stiffness: f64::INFINITY,
            ..d.clone()
        })
        .is_ok());
        let e = ClutterConfig::from_table(&"n_bodys = 3".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("n_bodys"), "{e}");
        let e = ClutterConfig::from_table(&"walls = 1".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`walls`") && e.contains("bool"), "{e}");
        let e = ClutterConfig::from_table(&"n_bodies = -3".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`n_bodies`"), "{e}");
        // TOML spells NaN and infinity: NaN is refused by name, in every float parameter.
        for key in [
            "dt",
            "mu",
            "stiffness",
            "dissipation",
            "density",
            "margin",
            "gravity",
        ] {
            let cfg = ClutterConfig::from_table(&format!("{key} = nan").parse().unwrap()).unwrap();
            let e = Clutter::new(&cfg).unwrap_err().to_string();
            assert!(e.contains(&format!("`{key}`")), "{key}: {e}");
        }
        for (text, key) in [
            ("stiffness = -1e12", "`stiffness`"),
            ("dt = -0.01", "`dt`"),
            ("mu = -0.5", "`mu`"),
            ("n_bodies = 0", "`n_bodies`"),
            ("duration = inf", "`duration`"),
        ] {
            let cfg = ClutterConfig::from_table(&text.parse().unwrap()).unwrap();
            let e = SceneKind::Clutter
                .check_params(&text.parse().unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
            assert!(Clutter::new(&cfg).is_err());
        }
        let mut s = pile();
        let cs = s.contact_step().unwrap();
        let e = s.advance(&cs, &[1.0]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("expected {}", 3 * cs.contacts.len())),
            "{e}"
        );
        let mut r = vec![0.0; 3 * cs.contacts.len()];
        r[0] = f64::NAN;
        assert!(s.advance(&cs, &r).is_err());
        assert!(Clutter::with_bodies(vec![], &d).is_err());
    }

    /// Symplectic Euler: `v_N = -g t`, `z_N = z0 - g dt^2 N (N + 1) / 2`, within `g dt t / 2` of
    /// the exact drop; a spinning cube keeps its spin and turns by `exp(N dt omega)`.
    #[test]
    fn free_fall_matches_the_analytic_drop() {
        let mut c = cube([0.0, 0.0, 2.0], turned([1.0, 2.0, 3.0], 0.7));
        c.w = Vector3::new(1.0, -2.0, 0.5);
        let q0 = c.q;
        let mut s = scene(vec![ball([0.1, 0.1, 1.0]), c], true);
        let (g, dt, n) = (9.81, 0.01, 30);
        for _ in 0..n {
            let cs = s.contact_step().unwrap();
            assert!(cs.contacts.is_empty());
            s.advance(&cs, &[]).unwrap();
        }
        let t = n as f64 * dt;
        for (b, z0) in s.bodies.iter().zip([1.0, 2.0]) {
            assert_relative_eq!(b.v.z, -g * t, epsilon = 1e-12);
            let discrete = z0 - g * dt * dt * (n * (n + 1)) as f64 / 2.0;
            assert_relative_eq!(b.x.z, discrete, epsilon = 1e-12);
            let exact = z0 - 0.5 * g * t * t;
            assert_relative_eq!(b.x.z - exact, -0.5 * g * dt * t, epsilon = 1e-12);
        }
        assert_relative_eq!(s.bodies[1].w, Vector3::new(1.0, -2.0, 0.5), epsilon = 1e-12);
        let expected = UnitQuaternion::from_scaled_axis(t * Vector3::new(1.0, -2.0, 0.5)) * q0;
        assert!(s.bodies[1].q.angle_to(&expected) < 1e-12);
        assert_relative_eq!(s.time, t, epsilon = 1e-12);
    }

    /// The world-frame gyroscopic step equals Euler's equations stepped in the body frame; a
    /// cube and a sphere have none.
    #[test]
    fn the_gyroscopic_term_is_eulers_equations() {
        let mut b = RigidBody::cuboid(
            Vector3::new(0.1, 0.05, 0.02),
            1000.0,
            Vector3::zeros(),
            turned([0.2, 1.0, -0.4], 1.1),
        );
        b.w = Vector3::new(3.0, -1.0, 2.0);
        let dt = 0.01;
        let [_, w] = b.free_velocity(dt, 0.0);
        let r = b.q.to_rotation_matrix();
        let wb = r.inverse() * b.w;
        let i = Matrix3::from_diagonal(&b.inertia);
        let wb_next = wb - dt * i.try_inverse().unwrap() * wb.cross(&(i * wb));
        assert_relative_eq!(w, r * wb_next, epsilon = 1e-12);
        assert!((w - b.w).norm() > 1e-3, "a non-principal spin precesses");
        for mut body in [cube([0.0; 3], turned([1.0, 1.0, 0.0], 0.5)), ball([0.0; 3])] {
            body.w = Vector3::new(3.0, -1.0, 2.0);
            let [_, w] = body.free_velocity(dt, 0.0);
            assert_relative_eq!(w, body.w, epsilon = 1e-13);
        }
    }

    #[test]
    fn a_resting_box_gets_four_floor_contacts() {
        for (walls, q) in [
            (true, UnitQuaternion::identity()),
            (false, UnitQuaternion::identity()),
            (true, turned([0.0, 0.0, 1.0], 0.7)),
            (false, turned([0.0, 0.0, 1.0], -0.3)),
        ] {
            let s = scene(vec![cube([0.05, -0.1, H - 1e-4], q)], walls);
            let cs = s.contacts();
            assert_eq!(cs.len(), 4, "walls {walls}: {cs:?}");
            let mut corners: Vec<Vector3<f64>> = [-1.0, 1.0]
                .iter()
                .flat_map(|&sx| [-1.0, 1.0].map(|sy| Vector3::new(sx * H, sy * H, -H)))
                .map(|c| s.bodies[0].x + q * c)
                .collect();
            for c in cs {
                assert!(matches!(
                    c.key,
                    ContactKey::WallPoint {
                        body: 0,
                        obstacle: FLOOR,
                        ..
                    }
                ));
                assert_relative_eq!(normal(c), Vector3::z(), epsilon = 1e-12);
                assert_relative_eq!(c.phi0, -1e-4, epsilon = 1e-12);
                // At a bottom corner, halfway into the floor.
                let k = corners
                    .iter()
                    .position(|p| (p.xy() - c.point.xy()).norm() < 1e-12)
                    .unwrap_or_else(|| panic!("no corner under {:?}", c.point));
                corners.remove(k);
                assert_relative_eq!(c.point.z, -0.5e-4, epsilon = 1e-12);
            }
            let mut keys: Vec<_> = cs.iter().map(|c| c.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), 4, "distinct keys");
        }
        // Lifted beyond the margin: none; within it: four with phi0 > 0.
        let s = scene(
            vec![cube([0.0, 0.0, H + 2e-3], UnitQuaternion::identity())],
            true,
        );
        assert!(s.contacts().is_empty());
        let s = scene(
            vec![cube([0.0, 0.0, H + 5e-4], UnitQuaternion::identity())],
            true,
        );
        assert_eq!(s.contacts().len(), 4);
        assert!(s.contacts().iter().all(|c| (c.phi0 - 5e-4).abs() < 1e-12));
    }

    #[test]
    fn sphere_box_box_box_sphere_sphere_and_wall_contacts() {
        let id = UnitQuaternion::identity();
        // A sphere (0) on a box (1), in the air: one contact, normal up towards the sphere.
        let s = scene(
            vec![ball([0.01, 0.02, 0.6 - 1e-4]), cube([0.0, 0.0, 0.5], id)],
            true,
        );
        let c = s.contacts();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].a, c[0].b), (0, Some(1)));
        assert!(matches!(c[0].key, ContactKey::PairPoint { a: 0, b: 1, .. }));
        assert_relative_eq!(normal(&c[0]), Vector3::z(), epsilon = 1e-12);
        assert_relative_eq!(c[0].phi0, -1e-4, epsilon = 1e-12);
        assert_relative_eq!(
            c[0].point,
            Vector3::new(0.01, 0.02, 0.55 - 0.5e-4),
            epsilon = 1e-12
        );
        // The other way round: the normal points down, towards the box (body 0).
        let s = scene(
            vec![cube([0.0, 0.0, 0.5], id), ball([0.01, 0.02, 0.6 - 1e-4])],
            true,
        );
        assert_relative_eq!(normal(&s.contacts()[0]), -Vector3::z(), epsilon = 1e-12);
        // Box on box, aligned: four corners; turned by 45 degrees the clipped octagon keeps four.
        // Box on box, aligned and turned by 45 degrees: parry clips each face against the
        // other, eight points both times (aligned: every corner twice, merged as duplicates;
        // turned: the octagon of the overlap), reduced to four that span most of the overlap.
        let octagon = 8.0 * (std::f64::consts::SQRT_2 - 1.0) * H * H;
        for (angle, overlap) in [(0.0, 4.0 * H * H), (std::f64::consts::FRAC_PI_4, octagon)] {
            let q = turned([0.0, 0.0, 1.0], angle);
            let s = scene(
                vec![cube([0.0, 0.0, 0.5], id), cube([0.0, 0.0, 0.6 - 1e-4], q)],
                true,
            );
            let c = s.contacts();
            assert_eq!(c.len(), 4, "angle {angle}: {c:?}");
            for ci in c {
                assert_eq!((ci.a, ci.b), (0, Some(1)));
                assert_relative_eq!(normal(ci), -Vector3::z(), epsilon = 1e-12);
                assert_relative_eq!(ci.phi0, -1e-4, epsilon = 1e-12);
                // Halfway between the top face of box 0 and the bottom face of box 1.
                assert_relative_eq!(ci.point.z, 0.55 - 0.5e-4, epsilon = 1e-12);
                // Inside both faces.
                let local = q.inverse() * (ci.point - s.bodies[1].x);
                assert!(ci.point.x.abs().max(ci.point.y.abs()) <= H + 1e-12);
                assert!(local.x.abs().max(local.y.abs()) <= H + 1e-12);
            }
            let (_, pts) = manifold(
                s.geom(0),
                &s.bodies[0].pose(),
                s.geom(1),
                &s.bodies[1].pose(),
                1e-3,
            )
            .unwrap();
            assert_eq!(pts.len(), 8, "angle {angle}: parry's clipped polygons");
            // The area of the kept quadrilateral (the largest of its three vertex orders): the
            // whole square aligned; 1 / sqrt 2 of the octagon turned (alternate corners).
            let p: Vec<_> = c.iter().map(|c| c.point.xy()).collect();
            let area = [(0, 2, 1, 3), (0, 1, 2, 3), (0, 3, 1, 2)]
                .iter()
                .map(|&(i, j, k, l)| 0.5 * (p[i] - p[j]).perp(&(p[k] - p[l])).abs())
                .fold(0.0, f64::max);
            assert!(
                area >= 0.7 * overlap,
                "angle {angle}: area {area} of {overlap}"
            );
        }
        // Sphere on sphere: along the centres.
        let d = Vector3::new(0.3, -0.2, 0.9).normalize();
        let s = scene(
            vec![
                ball([0.0, 0.0, 0.5]),
                ball((Vector3::new(0.0, 0.0, 0.5) + d * (0.1 - 2e-4)).into()),
            ],
            true,
        );
        let c = s.contacts();
        assert_eq!(c.len(), 1);
        assert_relative_eq!(normal(&c[0]), -d, epsilon = 1e-12);
        assert_relative_eq!(c[0].phi0, -2e-4, epsilon = 1e-12);
        // A sphere against the +x wall (obstacle 1), in the air: normal -x.
        let s = scene(vec![ball([0.4 - H + 1e-4, 0.0, 0.4])], true);
        let c = s.contacts();
        assert_eq!(c.len(), 1);
        assert!(matches!(
            c[0].key,
            ContactKey::WallPoint {
                body: 0,
                obstacle: 1,
                ..
            }
        ));
        assert_relative_eq!(normal(&c[0]), -Vector3::x(), epsilon = 1e-12);
        // No walls: nothing there.
        let s = scene(vec![ball([0.4 - H + 1e-4, 0.0, 0.4])], false);
        assert!(s.contacts().is_empty());
        // The pile has every kind.
        let s = pile();
        let kinds =
            |f: &dyn Fn(&ClutterContact) -> bool| s.contacts().iter().filter(|c| f(c)).count();
        assert!(
            kinds(&|c| c.a == 0 && c.b.is_none()) >= 3,
            "{:?}",
            s.contacts()
        );
        assert!(kinds(&|c| c.a == 0 && c.b == Some(1)) >= 1);
        assert_eq!(kinds(&|c| c.a == 1 && c.b == Some(2)), 1);
        assert_eq!(kinds(&|c| c.a == 3 && c.b.is_none()), 2, "floor and wall");
        assert_eq!(kinds(&|c| c.a == 3 && c.b == Some(4)), 1);
    }

    /// Point `p` carried by body `b` from state `s0` to state `s`.
    fn carried(s0: &RigidBody, s: &RigidBody, p: &Vector3<f64>) -> Vector3<f64> {
        s.x + s.q * (s0.q.inverse() * (p - s0.x))
    }

    fn moved(s: &Clutter, eps: f64) -> Clutter {
        let mut t = s.clone();
        for b in &mut t.bodies {
            b.x += eps * b.v;
            b.q = UnitQuaternion::from_scaled_axis(eps * b.w) * b.q;
        }
        t.contacts = OnceLock::new();
        t
    }

    fn dense_rows(j: &SparseColMat<usize, f64>, row: usize) -> Vec<f64> {
        let mut out = vec![0.0; j.ncols()];
        let (cols, rows, vals) = (j.symbolic().col_ptr(), j.symbolic().row_idx(), j.val());
        for (c, o) in out.iter_mut().enumerate() {
            for k in cols[c]..cols[c + 1] {
                if rows[k] == row {
                    *o += vals[k];
                }
            }
        }
        out
    }

    /// `J v` is the frame times the relative velocity of the two material points at the
    /// contact point (central differences of the carried points), and only the two bodies'
    /// columns are filled.
    #[test]
    fn jacobian_rows_are_contact_point_velocities() {
        let s = pile();
        let cs = s.contact_step().unwrap();
        let g = cs.problem.generalized().unwrap();
        let v: Vec<f64> = s
            .bodies
            .iter()
            .flat_map(|b| b.v.iter().chain(b.w.iter()).copied().collect::<Vec<_>>())
            .collect();
        let mut u = vec![0.0; g.j.nrows()];
        sparse_mul_add(&g.j, &v, &mut u);
        let eps = 1e-6;
        let (plus, minus) = (moved(&s, eps), moved(&s, -eps));
        for (ci, c) in s.contacts().iter().enumerate() {
            let track = |t: &Clutter| {
                let pa = carried(&s.bodies[c.a], &t.bodies[c.a], &c.point);
                let pb =
                    c.b.map_or(c.point, |b| carried(&s.bodies[b], &t.bodies[b], &c.point));
                pa - pb
            };
            let fd = c.frame * (track(&plus) - track(&minus)) / (2.0 * eps);
            for k in 0..3 {
                assert!(
                    (u[3 * ci + k] - fd[k]).abs() < 1e-8,
                    "{:?} row {k}: {} vs {}",
                    c.key,
                    u[3 * ci + k],
                    fd[k]
                );
                let row = dense_rows(&g.j, 3 * ci + k);
                for (col, x) in row.iter().enumerate() {
                    let body = col / 6;
                    if body != c.a && Some(body) != c.b {
                        assert_eq!(*x, 0.0);
                    }
                }
            }
        }
        assert_eq!(
            g.j.val().len(),
            s.contacts()
                .iter()
                .map(|c| if c.b.is_some() { 36 } else { 18 })
                .sum::<usize>()
        );
    }

    /// The normal row is the rate of the signed distance parry measures (central differences
    /// of `phi` along the motion), so positive normal velocity separates. Checked on every
    /// contact with a sphere or an obstacle, where `phi` is a true distance; box-box manifolds
    /// are skipped: parry clips the reference face against the incident one and measures each
    /// clipped point's depth along the reference normal, which is not the distance between the
    /// surfaces once the faces are not parallel, so its rate differs from `n . v` at first
    /// order in the tilt (the usual approximation of clipped manifolds).
    #[test]
    fn normal_rows_are_the_rate_of_the_signed_distance() {
        let s = pile();
        let cs = s.contact_step().unwrap();
        let v: Vec<f64> = s
            .bodies
            .iter()
            .flat_map(|b| [b.v.as_slice(), b.w.as_slice()].concat())
            .collect();
        let u = cs.problem.generalized().unwrap().contact_velocity(&v);
        let eps = 1e-7;
        let (plus, minus) = (moved(&s, eps), moved(&s, -eps));
        let phi = |t: &Clutter, key| t.contacts().iter().find(|c| c.key == key).map(|c| c.phi0);
        let is_box = |i: usize| matches!(s.bodies[i].shape, BodyShape::Cuboid { .. });
        let mut checked = 0;
        for (ci, c) in s.contacts().iter().enumerate() {
            if c.b.is_some_and(|b| is_box(b) && is_box(c.a)) {
                continue;
            }
            let (p, m) = (phi(&plus, c.key), phi(&minus, c.key));
            let (Some(p), Some(m)) = (p, m) else {
                panic!("{:?} lost its key under a motion of 1e-7 s", c.key);
            };
            let rate = (p - m) / (2.0 * eps);
            assert!(
                (rate - u[3 * ci]).abs() < 1e-6,
                "{:?}: {rate} vs {}",
                c.key,
                u[3 * ci]
            );
            checked += 1;
        }
        assert!(checked >= 6, "{checked} contacts checked");
    }

    /// `A` is the per-body mass matrix, symmetric positive definite and block diagonal by body,
    /// built sparse (12 entries per body), and the problem passes `GeneralizedProblem::new`.
    #[test]
    fn a_is_the_sparse_block_diagonal_mass_matrix() {
        let s = pile();
        let cs = s.contact_step().unwrap();
        let g = cs.problem.generalized().unwrap();
        let n = s.bodies.len();
        assert_eq!(g.a.val().len(), 12 * n, "no dense nv x nv matrix");
        assert_eq!(g.tree_of, (0..6 * n).map(|k| k / 6).collect::<Vec<_>>());
        assert_eq!(g.dt, Some(0.01));
        assert_eq!(g.contacts.len(), cs.contacts.len());
        for (m, c) in g.contacts.iter().zip(s.contacts()) {
            assert_eq!(
                (m.mu, m.stiffness, m.dissipation, m.phi0),
                (1.0, 1e12, 0.01, c.phi0)
            );
        }
        let again = GeneralizedProblem::new(
            g.a.clone(),
            g.j.clone(),
            g.v_star.clone(),
            g.b.clone(),
            g.contacts.clone(),
            StepContext {
                dt: g.dt,
                v0: g.v0.clone(),
                tree_of: Some(g.tree_of.clone()),
            },
        );
        assert!(again.is_ok(), "{:?}", again.err());
        for (i, b) in s.bodies.iter().enumerate() {
            let block = Matrix6::from_fn(|r, c| dense_rows(&g.a, 6 * i + r)[6 * i + c]);
            let mut want = Matrix6::zeros();
            want.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(b.mass);
            want.fixed_view_mut::<3, 3>(3, 3)
                .copy_from(&b.world_inertia());
            assert_relative_eq!(block, want, epsilon = 1e-15);
            assert_eq!(block, block.transpose());
            assert!(block.cholesky().is_some(), "body {i}: A block is SPD");
            let v0 = &g.v0.as_ref().unwrap()[6 * i..6 * i + 6];
            assert_eq!(v0, [b.v.as_slice(), b.w.as_slice()].concat());
        }
    }

    /// `advance` gives `v = v* + A^-1 J' r`: its contact velocities equal `StepProblem`'s
    /// (through a Cholesky of `A`), and impulses between bodies conserve momentum.
    #[test]
    fn advance_applies_impulses_through_a_inverse() {
        let s = pile();
        let cs = s.contact_step().unwrap();
        let nc = cs.contacts.len();
        let r: Vec<f64> = (0..3 * nc)
            .map(|k| {
                if k % 3 == 0 {
                    0.02 + 0.001 * k as f64
                } else {
                    0.003 * ((k % 7) as f64 - 3.0)
                }
            })
            .collect();
        let mut t = s.clone();
        t.advance(&cs, &r).unwrap();
        let v: Vec<f64> = t
            .bodies
            .iter()
            .flat_map(|b| b.v.iter().chain(b.w.iter()).copied().collect::<Vec<_>>())
            .collect();
        let g = cs.problem.generalized().unwrap();
        let through_a = cs.velocities(&r).unwrap();
        for (a, b) in g.contact_velocity(&v).iter().zip(&through_a) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        // Only pair contacts: linear and angular momentum (about the origin) change by gravity.
        let mut u = s.clone();
        let pairs: Vec<f64> = s
            .contacts()
            .iter()
            .zip(r.chunks(3))
            .flat_map(|(c, x)| {
                if c.b.is_some() {
                    x.to_vec()
                } else {
                    vec![0.0; 3]
                }
            })
            .collect();
        u.advance(&cs, &pairs).unwrap();
        // Linear momentum: pair impulses cancel, gravity takes `dt g` times the total mass.
        let momentum =
            |bodies: &[RigidBody]| bodies.iter().map(|b| b.mass * b.v).sum::<Vector3<f64>>();
        let weight_impulse: f64 = s
            .bodies
            .iter()
            .map(|b| b.mass * s.config.gravity * s.config.dt)
            .sum();
        assert_relative_eq!(
            momentum(&u.bodies) + Vector3::new(0.0, 0.0, weight_impulse),
            momentum(&s.bodies),
            epsilon = 1e-12
        );
        assert!(
            (momentum(&t.bodies) - momentum(&u.bodies)).norm() > 1e-3,
            "floor impulses count"
        );
        // Angular momentum about the origin, with the start-of-step positions (impulses act there).
        let angular = |bodies: &[RigidBody], at: &[RigidBody]| {
            bodies
                .iter()
                .zip(at)
                .map(|(b, a)| a.x.cross(&(b.mass * b.v)) + a.world_inertia() * b.w)
                .sum::<Vector3<f64>>()
        };
        let gravity_torque: Vector3<f64> = s
            .bodies
            .iter()
            .map(|b| {
                b.x.cross(&Vector3::new(
                    0.0,
                    0.0,
                    -b.mass * s.config.gravity * s.config.dt,
                ))
            })
            .sum();
        assert_relative_eq!(
            angular(&u.bodies, &s.bodies),
            angular(&s.bodies, &s.bodies) + gravity_torque,
            epsilon = 1e-12
        );
        assert!(u.mean_slip().is_finite());
    }

    /// End to end with a contact-space solver: a box resting on the floor, PGS on the rigid
    /// problem `W = J A^-1 J'` derived from ours: the four normal impulses carry its weight
    /// over the step and it stays at rest.
    #[test]
    fn a_box_rests_on_the_floor_under_pgs() {
        let mut s = scene(
            vec![cube([0.0, 0.0, H], turned([0.0, 0.0, 1.0], 0.2))],
            true,
        );
        for _ in 0..5 {
            let cs = s.contact_step().unwrap();
            assert_eq!(cs.contacts.len(), 4);
            let local = cs.problem.local().unwrap();
            let opts = SolveOptions {
                max_iter: 10_000,
                stop_tol: 1e-12,
                ..SolveOptions::default()
            };
            let sol = solve_pgs(local, ProjectedGaussSeidel::default(), None, &opts).unwrap();
            let normal_sum: f64 = sol.x.chunks(3).map(|c| c[0]).sum();
            assert_relative_eq!(normal_sum, 1.0 * 9.81 * 0.01, epsilon = 1e-9);
            s.advance(&cs, &sol.x).unwrap();
            assert!(s.bodies[0].v.norm() < 1e-9 && s.bodies[0].w.norm() < 1e-8);
            assert!(s.mean_slip() < 1e-9);
        }
        let obs = Scene::observables(&s);
        let get = |k: &str| obs.iter().find(|o| o.0 == k).unwrap().1;
        assert_eq!(get("contacts"), 4.0);
        assert_eq!(get("pressed_contacts"), 4.0);
        // `advance` detected the new state's contacts and timed it; a moved scene has not yet.
        let detect = Scene::detect_seconds(&s).expect("the new state's detection is timed");
        assert!(detect > 0.0 && detect < 1.0, "{detect}");
        s.contacts = OnceLock::new();
        assert_eq!(Scene::detect_seconds(&s), None);
        assert!(get("kinetic_energy") < 1e-15 && get("max_penetration") < 1e-12);
        assert_relative_eq!(get("potential_energy"), 9.81 * H, epsilon = 1e-9);
    }

    #[test]
    fn manifolds_reduce_to_the_four_that_span_them() {
        let n = Vector3::z();
        // An octagon, the deepest point at angle 3; a duplicate of point 0.
        let mut pts: Vec<ManifoldPoint> = (0..8)
            .map(|k| {
                let a = k as f64 * std::f64::consts::FRAC_PI_4;
                ManifoldPoint {
                    point: Vector3::new(a.cos(), a.sin(), 0.0),
                    phi: if k == 3 { -2e-3 } else { -1e-3 },
                    feature: k,
                }
            })
            .collect();
        pts.push(ManifoldPoint {
            phi: -5e-3,
            feature: 99,
            ..pts[0]
        });
        let kept = reduce_manifold(&pts, &n);
        let features: Vec<u64> = kept.iter().map(|p| p.feature).collect();
        // The deeper duplicate replaces point 0 and is the deepest; then the opposite corner 4,
        // the widest triangle's 2 (the first of 2 and 6), and 6 outside it: a square.
        assert_eq!(features, vec![99, 2, 4, 6]);
        // Four or fewer are kept as they are.
        assert_eq!(reduce_manifold(&pts[..4], &n), pts[..4].to_vec());
    }

    /// A sphere resting on the floor, with walls (the floor box) and without (the ground): one
    /// contact, normal `+z`, depth the overlap, point halfway between the two surfaces.
    #[test]
    fn a_sphere_on_the_floor_has_one_contact() {
        for walls in [true, false] {
            for (z, depth) in [(H - 3e-4, -3e-4), (H + 4e-4, 4e-4)] {
                let s = scene(vec![ball([0.07, -0.12, z])], walls);
                let c = s.contacts();
                assert_eq!(c.len(), 1, "walls {walls}: {c:?}");
                assert!(matches!(
                    c[0].key,
                    ContactKey::WallPoint {
                        body: 0,
                        obstacle: FLOOR,
                        ..
                    }
                ));
                assert_eq!((c[0].a, c[0].b), (0, None));
                assert_relative_eq!(normal(&c[0]), Vector3::z(), epsilon = 1e-12);
                assert_relative_eq!(c[0].phi0, depth, epsilon = 1e-12);
                assert_relative_eq!(
                    c[0].point,
                    Vector3::new(0.07, -0.12, 0.5 * depth),
                    epsilon = 1e-12
                );
                // The frame is orthonormal, normal first.
                assert_relative_eq!(
                    c[0].frame * c[0].frame.transpose(),
                    Matrix3::identity(),
                    epsilon = 1e-14
                );
            }
        }
    }

    /// Sphere on sphere and sphere on wall: the contact point is the midpoint of the two
    /// surfaces along the normal, the depth the overlap of the radii.
    #[test]
    fn sphere_sphere_and_sphere_wall_points_and_depths() {
        let c0 = Vector3::new(0.1, -0.05, 0.5);
        let d = Vector3::new(-0.4, 0.7, 0.2).normalize();
        let c1 = c0 + d * (2.0 * H - 5e-4);
        let s = scene(vec![ball(c0.into()), ball(c1.into())], true);
        let c = s.contacts();
        assert_eq!(c.len(), 1);
        assert!(matches!(c[0].key, ContactKey::PairPoint { a: 0, b: 1, .. }));
        // Towards body 0, from body 1.
        assert_relative_eq!(normal(&c[0]), -d, epsilon = 1e-12);
        assert_relative_eq!(c[0].phi0, -5e-4, epsilon = 1e-12);
        let mid = 0.5 * ((c0 + d * H) + (c1 - d * H));
        assert_relative_eq!(c[0].point, mid, epsilon = 1e-12);
        // Against the -y wall (obstacle 4), in the air: normal +y, point halfway into it.
        let s = scene(vec![ball([0.1, -0.4 + H - 2e-4, 0.3])], true);
        let c = s.contacts();
        assert_eq!(c.len(), 1);
        assert!(matches!(
            c[0].key,
            ContactKey::WallPoint {
                body: 0,
                obstacle: 4,
                ..
            }
        ));
        assert_relative_eq!(normal(&c[0]), Vector3::y(), epsilon = 1e-12);
        assert_relative_eq!(c[0].phi0, -2e-4, epsilon = 1e-12);
        assert_relative_eq!(
            c[0].point,
            Vector3::new(0.1, -0.4 - 1e-4, 0.3),
            epsilon = 1e-12
        );
    }

    /// Random bodies, overlapping in a small region (with walls, so floor, walls and pairs all
    /// appear), with random velocities: each contact's rows of `J v` equal the frame times the
    /// relative velocity of the two bodies' material points at the contact point, computed
    /// here from the rigid-body formula `v + omega x (p - x)`, independently of the scene.
    #[test]
    fn j_v_is_the_relative_contact_velocity_for_random_states() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for round in 0..5 {
            let mut u = |lo: f64, hi: f64| rng.random_range(lo..hi);
            let bodies: Vec<RigidBody> = (0..12)
                .map(|k| {
                    let x = [u(0.25, 0.38), u(-0.1, 0.1), u(0.03, 0.25)];
                    let mut b = if k % 2 == 0 {
                        ball(x)
                    } else {
                        let axis = [u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)];
                        cube(x, turned(axis, u(-3.0, 3.0)))
                    };
                    b.v = Vector3::new(u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0));
                    b.w = Vector3::new(u(-5.0, 5.0), u(-5.0, 5.0), u(-5.0, 5.0));
                    b
                })
                .collect();
            let s = scene(bodies, true);
            let cs = s.contact_step().unwrap();
            let g = cs.problem.generalized().unwrap();
            let v: Vec<f64> = s
                .bodies
                .iter()
                .flat_map(|b| [b.v.as_slice(), b.w.as_slice()].concat())
                .collect();
            let jv = g.contact_velocity(&v);
            let contacts = s.contacts();
            assert!(contacts.len() >= 10, "round {round}: {}", contacts.len());
            let kinds: [fn(&ClutterContact) -> bool; 3] = [
                |c: &ClutterContact| {
                    c.b.is_none()
                        && matches!(
                            c.key,
                            ContactKey::WallPoint {
                                obstacle: FLOOR,
                                ..
                            }
                        )
                },
                |c: &ClutterContact| {
                    c.b.is_none()
                        && !matches!(
                            c.key,
                            ContactKey::WallPoint {
                                obstacle: FLOOR,
                                ..
                            }
                        )
                },
                |c: &ClutterContact| c.b.is_some(),
            ];
            for kind in kinds {
                assert!(
                    contacts.iter().any(kind),
                    "round {round}: a kind is missing"
                );
            }
            let at = |i: usize, p: &Vector3<f64>| {
                let b = &s.bodies[i];
                b.v + b.w.cross(&(p - b.x))
            };
            for (ci, c) in contacts.iter().enumerate() {
                let rel = at(c.a, &c.point) - c.b.map_or(Vector3::zeros(), |b| at(b, &c.point));
                let want = c.frame * rel;
                for k in 0..3 {
                    assert!(
                        (jv[3 * ci + k] - want[k]).abs() <= 1e-12 * (1.0 + want.norm()),
                        "round {round}, {:?} row {k}: {} vs {}",
                        c.key,
                        jv[3 * ci + k],
                        want[k]
                    );
                }
                assert_relative_eq!(
                    c.frame * c.frame.transpose(),
                    Matrix3::identity(),
                    epsilon = 1e-14
                );
            }
        }
    }

    /// `v*` of the problem (and `free`) is `v0 + dt g` on the linear velocities and the explicit
    /// gyroscopic step on the angular ones, body by body; `v0` is the state's velocities.
    #[test]
    fn the_free_motion_is_gravity_and_the_gyroscopic_step() {
        let mut s = pile();
        // A non-cube box, so the gyroscopic term is not zero.
        let mut slab = RigidBody::cuboid(
            Vector3::new(0.08, 0.04, 0.02),
            1000.0,
            Vector3::new(-0.2, 0.2, 0.5),
            turned([1.0, -0.5, 0.3], 0.9),
        );
        slab.v = Vector3::new(0.1, 0.2, -0.3);
        slab.w = Vector3::new(4.0, -2.0, 1.0);
        s.bodies.push(slab);
        s.config.n_bodies += 1;
        s.contacts = OnceLock::new();
        let cs = s.contact_step().unwrap();
        let g = cs.problem.generalized().unwrap();
        let dt = 0.01;
        for (i, b) in s.bodies.iter().enumerate() {
            let vs = &g.v_star[6 * i..6 * i + 6];
            let lin = b.v - Vector3::new(0.0, 0.0, 9.81 * dt);
            let iw = b.world_inertia();
            let ang = b.w - dt * iw.try_inverse().unwrap() * b.w.cross(&(iw * b.w));
            assert_relative_eq!(Vector3::from_column_slice(&vs[..3]), lin, epsilon = 1e-15);
            assert_relative_eq!(Vector3::from_column_slice(&vs[3..]), ang, epsilon = 1e-12);
            let v0 = &g.v0.as_ref().unwrap()[6 * i..6 * i + 6];
            assert_eq!(v0, [b.v.as_slice(), b.w.as_slice()].concat());
        }
        let last = s.bodies.len() - 1;
        assert!((g.v_star[6 * last + 3] - s.bodies[last].w.x).abs() > 1e-3);
        assert_eq!(cs.free, g.v_star);
        assert!(g.b.iter().all(|b| *b == 0.0));
    }

    /// The standard SAP solver (`sap` + `newton-merit`, the paper's stopping rule: eq. 26 with
    /// `eps_a = 1e-16`, `eps_r = 1e-5`).
    fn sap() -> crate::testing::TestSolver {
        crate::testing::TestSolver::new("sap", "newton-merit", 1e-16, 100).rel_tol(1e-5)
    }

    /// One step's record of [`run_sap`].
    #[derive(Debug)]
    struct Record {
        contacts: usize,
        iterations: u64,
        status: String,
        energy: f64,
        penetration: f64,
        a_pattern: (Vec<usize>, Vec<usize>),
    }

    /// Steps `s` with SAP; the records after each step.
    fn run_sap(s: &mut Clutter, steps: usize) -> Vec<Record> {
        let solver = sap();
        (0..steps)
            .map(|_| {
                let cs = s.contact_step().unwrap();
                let g = cs.problem.generalized().unwrap();
                let a_pattern = (
                    g.a.symbolic().col_ptr().to_vec(),
                    g.a.symbolic().row_idx().to_vec(),
                );
                let (r, iterations, status) = if cs.contacts.is_empty() {
                    (vec![], 0, "no_contacts".to_string())
                } else {
                    let out = solver.solve(&cs.problem, None);
                    (out.r, out.iterations, out.status.as_str().to_string())
                };
                s.advance(&cs, &r).unwrap();
                Record {
                    contacts: cs.contacts.len(),
                    iterations,
                    status,
                    energy: s.kinetic_energy() + s.potential_energy(),
                    penetration: s.max_penetration(),
                    a_pattern,
                }
            })
            .collect()
    }

    fn eight() -> Clutter {
        Clutter::new(&ClutterConfig {
            n_bodies: 8,
            seed: 5,
            ..ClutterConfig::default()
        })
        .unwrap()
    }

    /// Eight bodies dropped into the walled container, 150 steps (1.5 s: the drop, the impacts,
    /// settling) under SAP: every solve converges; the overlap stays within a few millimetres
    /// during the impacts and below 0.2 mm at rest; the mechanical energy falls (no step adds
    /// more than 0.1% of it); `A`'s pattern is the same at every step.
    ///
    /// The transient overlaps are the time discretisation, not the contact model: a box that
    /// lands off-centre on a sphere spins at about 20 rad/s, and over one 10 ms step its
    /// contact point leaves the linearisation `phi = phi0 + dt v_n` by about
    /// `(omega dt)^2 L / 2`, a millimetre; the compliant law then pushes the overlap out at
    /// `v^ = -phi0 / (dt + tau_d)` (eq. 29), which returns a few millijoules. At rest the
    /// overlap is the near-rigid regime's static one, `(dt + tau_d) R_n m g dt` per contact
    /// (eqs. 29-30): 84 micrometres under the stack.
    #[test]
    fn eight_bodies_under_sap_stay_bounded() {
        let mut s = eight();
        let e0 = s.kinetic_energy() + s.potential_energy();
        let log = run_sap(&mut s, 150);
        assert!(
            log.iter().filter(|r| r.contacts > 0).count() > 130,
            "{log:?}"
        );
        let mut energy = e0;
        for (k, r) in log.iter().enumerate() {
            assert!(
                r.status == "converged" || r.status == "no_contacts",
                "step {k}: {r:?}"
            );
            assert!(r.iterations < 100, "step {k}: {r:?}");
            assert!(r.penetration < 5e-3, "step {k}: overlap {}", r.penetration);
            if k >= 120 {
                assert!(r.penetration < 2e-4, "step {k}: overlap {}", r.penetration);
            }
            assert!(
                r.energy <= energy + 1e-3 * e0,
                "step {k}: {} after {energy}",
                r.energy
            );
            energy = r.energy;
            assert_eq!(
                r.a_pattern, log[0].a_pattern,
                "step {k}: A's pattern changed"
            );
        }
        assert!(energy < 0.5 * e0, "{energy} of {e0}");
        // Everything is on the floor and at rest.
        assert!(
            s.bodies.iter().all(|b| b.x.z < 0.2 && b.x.z > 0.0),
            "{:?}",
            s.bodies
        );
        // Settled: nothing moves vertically (a sphere may still roll on the floor: nothing
        // resists rolling).
        assert!(
            s.bodies.iter().all(|b| b.v.z.abs() < 0.01),
            "{:?}",
            s.bodies
        );
        // At rest SAP needs few iterations from the previous step's velocities.
        let tail: u64 = log[120..].iter().map(|r| r.iterations).sum();
        assert!(tail <= 3 * 30, "{tail} iterations in the last 30 steps");
    }

    /// The same seed gives the same trajectory, bit for bit (layout, contacts, SAP's solves).
    #[test]
    fn runs_are_deterministic_bit_for_bit() {
        let bits = |s: &Clutter| -> Vec<u64> {
            s.bodies
                .iter()
                .flat_map(|b| {
                    b.x.iter()
                        .chain(b.q.coords.iter())
                        .chain(b.v.iter())
                        .chain(b.w.iter())
                        .map(|c| c.to_bits())
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let (mut a, mut b) = (eight(), eight());
        let (la, lb) = (run_sap(&mut a, 40), run_sap(&mut b, 40));
        assert_eq!(bits(&a), bits(&b));
        let iters = |l: &[Record]| {
            l.iter()
                .map(|r| (r.contacts, r.iterations))
                .collect::<Vec<_>>()
        };
        assert_eq!(iters(&la), iters(&lb));
        assert!(la.iter().any(|r| r.contacts > 0));
    }

    /// Every step's `A` is symmetric positive definite, block by block, on the same pattern.
    #[test]
    fn a_is_spd_on_a_fixed_pattern_across_steps() {
        let mut s = eight();
        let mut pattern = None;
        for _ in 0..25 {
            let cs = s.contact_step().unwrap();
            let g = cs.problem.generalized().unwrap();
            let p = (
                g.a.symbolic().col_ptr().to_vec(),
                g.a.symbolic().row_idx().to_vec(),
            );
            assert_eq!(pattern.get_or_insert_with(|| p.clone()), &p);
            // The full validation (symmetry, trees, shapes) the scene leaves to its tests.
            g.validate().unwrap();
            for i in 0..s.bodies.len() {
                let block = Matrix6::from_fn(|r, c| dense_rows(&g.a, 6 * i + r)[6 * i + c]);
                assert_eq!(block, block.transpose());
                assert!(block.symmetric_eigenvalues().min() > 0.0);
            }
            let r = if cs.contacts.is_empty() {
                vec![]
            } else {
                sap().solve(&cs.problem, None).r
            };
            s.advance(&cs, &r).unwrap();
        }
    }
}
