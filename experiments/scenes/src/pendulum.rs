//! The twelve-link pendulum of Mylapilli and Jain 2014 (section "Simulation results",
//! "Twelve-link pendulum", Figs. 4-8), in minimal coordinates.
//!
//! # The system
//!
//! A planar chain of `n` links (paper: 12) hangs from a fixed pivot and swings in the `x-z`
//! plane under gravity (`-z`). Link `i` (0-based) is a massless rod of length `L` (paper: the
//! chain is 12 m long, so `L = 1 m`) hinged at its proximal end (the pivot for link 0, the
//! previous sphere's centre otherwise) and carrying at its distal end a solid sphere of mass
//! `m = 1 kg` and radius `R = 0.25 m` (diameter 0.5 m). The paper says the pendulum "consists of
//! twelve identical 1 kg spherical masses connected together with pin hinges" and is 12 m
//! long: we read the spheres as the bodies, one per metre, the last one's centre 12 m from the
//! pivot. Each link's inertia is the sphere's: `m` at distance `L` from its hinge plus
//! `I = 2 m R^2 / 5` about the sphere's centre (`m L^2 + I = 1.025 kg m^2` about the hinge).
//!
//! Coordinates: the hinge angles `q_i` (relative: `q_0` from the downward vertical, `q_i` from
//! link `i - 1`), the paper's `theta`. The absolute angle of link `i` is
//! `phi_i = q_0 + .. + q_i`, measured from the downward vertical, positive towards `+x` (the
//! wall). Sphere `i` sits at `p_i = pivot + L sum_{j<=i} u(phi_j)` with
//! `u(phi) = (sin phi, 0, -cos phi)`, and spins with `omega_i = -phi_i' e_y` (a positive `phi'` turns `-z` towards `+x`).
//!
//! Dynamics (the paper's eq. 5, `M(q) q'' + C(q, q') = tau`), derived from the kinematics:
//!
//! * `M = sum_i m J_i' J_i + I a_i a_i'`, with `J_i = dp_i/dq` (column `k <= i` is
//!   `L sum_{j=k}^{i} u'(phi_j)`, `u' = (cos, 0, sin)`) and `a_i = (1, .., 1, 0, ..)` (`k <= i`),
//!   the map from `q'` to `phi_i'`: [`Pendulum::mass_matrix`].
//! * Coriolis and centrifugal terms `sum_i m J_i' (J_i' q')`, where `J_i' q' =
//!   -L sum_{j<=i} u(phi_j) phi_j'^2` (planar spheres about a fixed axis have no gyroscopic
//!   term): [`Pendulum::coriolis`]. Gravity `sum_i m g J_i' e_z`: [`Pendulum::gravity_forces`].
//!   Their sum is `C`: [`Pendulum::bias_forces`].
//!
//! # The environment
//!
//! The paper measures heights "from the origin, which is located at the mid-section of the
//! floor of thickness 0.2 m" (Figs. 5-6): the floor occupies `-0.1 <= z <= 0.1`, its top surface
//! is `z = floor_thickness / 2 = 0.1`, and every height here (observables, energy) is measured
//! from that origin, so `last_z` is directly the paper's Fig. 5 quantity. "The pendulum is
//! located at a height of 10 m above the ground": the pivot is at `(0, 0, pivot_height = 10)`
//! above the origin (10.1 m would be the other reading, 10 m above the floor's top surface; set
//! `pivot_height` for it). The wall, "on the right side located 4 m away", is the half-space
//! `x >= wall_x = 4` (its surface 4 m to the right of the pivot); floor and wall are unbounded.
//!
//! # Initial state
//!
//! "The pendulum makes an initial angle of pi/4 radians with the vertical and has initial
//! angular velocity of 1 rad/s": the pendulum as a whole, so the chain starts **straight**,
//! every link at the absolute angle `phi_i = initial_angle`, i.e. `q = (initial_angle, 0, .., 0)`
//! (giving every relative hinge pi/4 would coil the chain through 540 degrees into itself), and
//! rotates rigidly: `q' = (initial_rate, 0, .., 0)`. It "swings from left to right, ... collides
//! with the ground, ..., collides with the wall on the right", so it starts on the side away
//! from the wall: `initial_angle = -pi/4` (left, `x < 0`), `initial_rate = +1 rad/s` (towards
//! the wall; the paper gives no sign). The last sphere then starts at `z = 10 - 12 cos(pi/4)
//! = 1.515 m`.
//!
//! # Contacts
//!
//! Each sphere against the floor (`ContactKey::Wall { ball: i, wall: FLOOR }`), the wall
//! (`wall: WALL`), and every non-adjacent sphere (`ContactKey::Pair { a, b }`, `b >= a + 2`;
//! adjacent spheres are `L = 1 m > 2R` apart and cannot touch), when the gap is below `margin`.
//! Rods and the pivot do not collide (the paper's Bullet set-up is not published; its figure
//! shows spheres). Frames are 3D, `[n, t1, t2] = [n, e_y x n, e_y]` ([`planar_frame`]), normal
//! first, `n` from the second body to the first (floor: `+z`, wall: `-x`, pair: from `b` to
//! `a`): `t1` is the in-plane tangent and `t2 = e_y` the out-of-plane one.
//!
//! **The out-of-plane row.** Every velocity of a planar chain lies in the `x-z` plane, so the
//! `t2` row of `J` is exactly zero, and so are the `t2` row and column of `W = J M^-1 J'` and
//! the `t2` entry of `q`. `W` is assembled as `Y'Y` with `Y = L^-1 J'` (`M = L L'`) and copied
//! symmetric, so it is symmetric to the last bit and positive semidefinite, but singular (one
//! zero row per contact, and rank at most `n` however many contacts). Solvers must not invert
//! `W` or its diagonal blocks: Todorov's implicit maps (`implicit-ncp`) handle it (the `t2`
//! residual row reduces to `v_t2 = 0`, met by `x_t2 = 0`, and the sticking start uses a
//! pseudoinverse), PGS with the cone projection handles it (its step is a projected gradient
//! step), and so does the natural map; a method that factors `W` needs a pseudoinverse or a
//! regularisation of its own. The impulse `r_t2` has no effect on the motion.
//!
//! # One step, restitution and the normal bias
//!
//! Semi-implicit Euler in impulses (the paper's eqs. 10 and 30 with no bilateral rows): the
//! free velocity `c = q' - h M^-1 C(q, q')`, the contact problem `u = W r + q` with
//! `W = J M^-1 J'` and `q = J c + s e_n`, then `q' <- c + M^-1 J' r` and `q <- q + h q'`.
//!
//! The paper's restitution `e = 0.7` is applied through the normal bias `s` of each contact
//! ([`normal_shift`]), from its gap `g` at the start of the step, its pre-step normal velocity
//! `v- = (J q')_n` (the paper's `v_u^-`) and its free normal velocity `v_f = (J c)_n`:
//!
//! * impact, `v- < 0` and the surfaces meet within the step (`g + h min(v-, v_f) <= 0`):
//!   `s = e v-`, so the complementarity `u_n >= 0` says `v_n >= -e v-`: a contact that pushes
//!   leaves with exactly `e |v-|`;
//! * not yet touching (`g > 0` otherwise): `s = g / h`, so the step may close the gap but not
//!   cross it (`g + h v_n >= 0`), and a contact found early by the margin pushes only when the
//!   surfaces would meet;
//! * overlapping and not approaching: `s = 0` (an overlap never grows; no position correction).
//!
//! The contact velocities `u` a solver returns are then the **biased** ones, `u_n = v_n + s`;
//! [`Pendulum::normal_shifts`] gives `s` per contact of a step to recover `v_n = u_n - s`.
//!
//! Newton's restitution on the normal velocity together with Coulomb friction is not
//! dissipative at oblique impacts of a chain (Kane's paradox): the normal impulse can reverse
//! the slip through the coupling `W_nt`, and friction opposing the reversed slip then pushes
//! along the approach. The default run shows it at its first floor impact (`t = 0.143 s`, the
//! last sphere arrives at `v_n = -7.66`, `v_t = +10.66 m/s` and leaves at `+5.36`, `-2.80`): an
//! exact solver gains 233 J there (961 J before), while the same impact loses 42 J with
//! `mu = 0` and 138 J with `e = 0`. The paper does not say how it applies restitution, so we
//! keep the law the project asked for and report the energy rather than hide the effect.
//!
//! # The non-planar variant (`hinge_skew`)
//!
//! The paper's chain is planar, and in a planar chain the `t2` rows of `J` vanish (above):
//! whether a formulation approximates the friction cone or not can then matter only in-plane.
//! To test what planarity does to the comparison of formulations, `hinge_skew = a` turns hinge
//! `i`'s axis about its link's rod by `(-1)^i a` from `-e_y` (in the parent link's frame):
//! neighbouring hinges are no longer parallel, gravity bends each link out of its parent's
//! swing plane, and every contact gets a tangential velocity out of the `x-z` plane. Same
//! coordinates (one angle per hinge), same spheres, contacts, restitution law and observables
//! (`last_y`, the last sphere's out-of-plane position, shows the departure). Kinematics and
//! dynamics then come from the chain's tree in the `multibody` crate (CRBA for `M`, RNEA for
//! `C`, its point Jacobians), which at `a = 0` reproduces the closed forms above to round-off
//! (tested); contact frames are [`chain_frame`], the planar frame turned continuously out of the
//! plane. `a = 0`, the default, keeps the closed forms.
//!
//! # Choices where the paper is silent
//!
//! Where the spheres sit (distal ends) and the link inertia (the sphere's alone, massless rods),
//! the reading of the floor and pivot heights, the sign of the initial angle and rate, the
//! time stepping, the restitution law above (Newton's law on the normal velocity through the
//! bias; no velocity threshold by default, `restitution_threshold` sets one) and the speculative gap term `g / h`, the contact margin
//! (`0.02 m`, about the distance a link end travels in one step at 20 m/s), no collision of
//! rods, and the observables: `last_z` and `last_vz` (the last sphere's centre height above the
//! origin and its vertical velocity, the paper's Figs. 5 and 7), `energy` (kinetic plus
//! potential, heights from the origin), `n_contacts` (contacts in the step just taken) and
//! `max_overlap` (the deepest penetration at the current state).

use contactlab_core::{LocalProblem, Matrix};
use contactlab_multibody::{
    Description, InertiaDescription, JointDescription, LinkDescription, Model, RotationDescription,
};
use faer::Mat;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::error::SceneError;
use crate::scene::{Contact, ContactKey, ContactStep, Scene};

/// The obstacle index of the floor in `ContactKey::Wall`.
pub const FLOOR: usize = 0;
/// The obstacle index of the wall in `ContactKey::Wall`.
pub const WALL: usize = 1;
/// The largest accepted number of links.
pub const MAX_LINKS: usize = 200;

fn default_n_links() -> usize {
    12
}
fn default_link_length() -> f64 {
    1.0
}
fn default_sphere_radius() -> f64 {
    0.25
}
fn default_sphere_mass() -> f64 {
    1.0
}
fn default_pivot_height() -> f64 {
    10.0
}
fn default_floor_thickness() -> f64 {
    0.2
}
fn default_wall_x() -> f64 {
    4.0
}
fn default_mu() -> f64 {
    0.5
}
fn default_restitution() -> f64 {
    0.7
}
fn default_initial_angle() -> f64 {
    -std::f64::consts::FRAC_PI_4
}
fn default_initial_rate() -> f64 {
    1.0
}
fn default_h() -> f64 {
    0.001
}
fn default_duration() -> f64 {
    20.0
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    0.02
}

/// The pendulum's parameters (`[scene.params]`); the defaults are the paper's (see the module
/// doc for how we read them).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PendulumConfig {
    /// Number of links `n`.
    #[serde(default = "default_n_links")]
    pub n_links: usize,
    /// Length `L` of each link, hinge to sphere centre (m).
    #[serde(default = "default_link_length")]
    pub link_length: f64,
    /// Radius `R` of each sphere (m); below `L / 2`.
    #[serde(default = "default_sphere_radius")]
    pub sphere_radius: f64,
    /// Mass `m` of each sphere (kg).
    #[serde(default = "default_sphere_mass")]
    pub sphere_mass: f64,
    /// Height of the pivot above the origin (the floor's mid-plane) (m).
    #[serde(default = "default_pivot_height")]
    pub pivot_height: f64,
    /// Thickness of the floor, centred on the origin; its top surface is at half of it (m).
    #[serde(default = "default_floor_thickness")]
    pub floor_thickness: f64,
    /// The wall's surface `x = wall_x`, to the right of the pivot at `x = 0` (m).
    #[serde(default = "default_wall_x")]
    pub wall_x: f64,
    /// Friction coefficient of every contact.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Coefficient of restitution `e` of every contact, in `[0, 1]`.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// Impacts slower than this (`|v-|`, m/s) do not bounce (`e = 0` for them): the usual
    /// simulator cure for resting contacts that micro-bounce. 0, the default, applies `e` at
    /// every impact, as the paper describes.
    #[serde(default)]
    pub restitution_threshold: f64,
    /// Absolute angle of every link from the downward vertical at `t = 0`, positive towards
    /// the wall (rad); the paper's pi/4 away from the wall is `-pi/4`.
    #[serde(default = "default_initial_angle")]
    pub initial_angle: f64,
    /// Rigid rotation rate of the straight chain at `t = 0`, positive towards the wall (rad/s).
    #[serde(default = "default_initial_rate")]
    pub initial_rate: f64,
    /// Time step `h` (s).
    #[serde(default = "default_h")]
    pub h: f64,
    /// Simulated span (s); [`PendulumConfig::steps`] turns it into a step count (the runner's
    /// `[scene] steps` decides how many steps a run takes).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Gravitational acceleration (m/s^2), along `-z`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Pairs closer than this gap are contacts (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// Hinge `i`'s axis turned about its link's rod by `(-1)^i hinge_skew` from the swing axis
    /// (rad). 0, the default, is the paper's planar chain; otherwise neighbouring hinges are
    /// not parallel and the chain leaves the `x-z` plane (see "The non-planar variant").
    #[serde(default)]
    pub hinge_skew: f64,
}

impl Default for PendulumConfig {
    fn default() -> Self {
        PendulumConfig {
            n_links: default_n_links(),
            link_length: default_link_length(),
            sphere_radius: default_sphere_radius(),
            sphere_mass: default_sphere_mass(),
            pivot_height: default_pivot_height(),
            floor_thickness: default_floor_thickness(),
            wall_x: default_wall_x(),
            mu: default_mu(),
            restitution: default_restitution(),
            restitution_threshold: 0.0,
            initial_angle: default_initial_angle(),
            initial_rate: default_initial_rate(),
            h: default_h(),
            duration: default_duration(),
            gravity: default_gravity(),
            margin: default_margin(),
            hinge_skew: 0.0,
        }
    }
}

impl PendulumConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors.
    pub fn from_table(params: &toml::Table) -> Result<PendulumConfig, SceneError> {
        toml::Value::Table(params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SceneError::Parse(e.message().to_string()))
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        if self.n_links == 0 || self.n_links > MAX_LINKS {
            return bad(
                "n_links",
                format!("must be in 1..={MAX_LINKS}, got {}", self.n_links),
            );
        }
        crate::params::check_ranges(
            &[
                ("link_length", self.link_length),
                ("sphere_radius", self.sphere_radius),
                ("sphere_mass", self.sphere_mass),
                ("wall_x", self.wall_x),
                ("h", self.h),
                ("duration", self.duration),
            ],
            &[
                ("floor_thickness", self.floor_thickness),
                ("mu", self.mu),
                ("restitution_threshold", self.restitution_threshold),
                ("gravity", self.gravity),
                ("margin", self.margin),
            ],
        )?;
        for (key, v) in [
            ("pivot_height", self.pivot_height),
            ("initial_angle", self.initial_angle),
            ("initial_rate", self.initial_rate),
            ("hinge_skew", self.hinge_skew),
        ] {
            if !v.is_finite() {
                return bad(key, format!("must be finite, got {v}"));
            }
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return bad(
                "restitution",
                format!("must be in [0, 1], got {}", self.restitution),
            );
        }
        if 2.0 * self.sphere_radius >= self.link_length {
            return bad(
                "sphere_radius",
                format!(
                    "adjacent spheres would overlap: 2 x {} >= link_length {}",
                    self.sphere_radius, self.link_length
                ),
            );
        }
        Ok(())
    }

    /// `round(duration / h)`: the number of steps of the paper's span.
    pub fn steps(&self) -> usize {
        (self.duration / self.h).round() as usize
    }

    /// The height of the floor's top surface, `floor_thickness / 2`.
    pub fn floor_top(&self) -> f64 {
        0.5 * self.floor_thickness
    }

    /// A sphere's moment of inertia about its centre, `2 m R^2 / 5`.
    pub fn inertia(&self) -> f64 {
        0.4 * self.sphere_mass * self.sphere_radius * self.sphere_radius
    }

    /// The restitution applied to an impact at normal velocity `v_minus`: `e`, or 0 when the
    /// impact is slower than `restitution_threshold`.
    pub fn restitution_at(&self, v_minus: f64) -> f64 {
        if v_minus.abs() < self.restitution_threshold {
            0.0
        } else {
            self.restitution
        }
    }
}

/// The contact frame `[n, e_y x n, e_y]` of a normal `n` in the `x-z` plane: normal first,
/// in-plane tangent, out-of-plane tangent (right-handed).
pub fn planar_frame(n: Vector3<f64>) -> Matrix3<f64> {
    let t1 = Vector3::y().cross(&n);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), Vector3::y().transpose()])
}

/// The contact frame of any normal `n`: [`planar_frame`] when `n` lies in the `x-z` plane;
/// otherwise `t1` is `e_y x n` normalised (`e_z x n` when `n` is along `e_y`) and
/// `t2 = n x t1`, which is `e_y` in the plane: the frame turns continuously out of it.
pub fn chain_frame(n: Vector3<f64>) -> Matrix3<f64> {
    if n.y == 0.0 {
        return planar_frame(n);
    }
    let t1 = Vector3::y().cross(&n);
    let t1 = if t1.norm() > 1e-9 {
        t1.normalize()
    } else {
        Vector3::z().cross(&n).normalize()
    };
    let t2 = n.cross(&t1);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), t2.transpose()])
}

/// The chain as a kinematic tree of the `multibody` crate, the pivot at its origin: link `i`
/// hinged at the previous sphere's centre (the pivot for link 0) about `(sin a_i, -cos a_i, 0)` in its parent's frame,
/// `a_i = (-1)^i hinge_skew`, with its sphere's mass and inertia at `(0, 0, -L)`. At
/// `hinge_skew = 0` every axis is `-e_y`, and the tree is the planar chain: a positive `q_i`
/// turns `-z` towards `+x`, as `u(phi)` does.
fn chain_model(c: &PendulumConfig) -> Result<Model, SceneError> {
    let links = (0..c.n_links)
        .map(|i| {
            let a = if i % 2 == 0 {
                c.hinge_skew
            } else {
                -c.hinge_skew
            };
            LinkDescription {
                name: format!("link{i}"),
                parent: (i > 0).then(|| format!("link{}", i - 1)),
                joint: JointDescription::Revolute {
                    axis: [a.sin(), -a.cos(), 0.0],
                },
                translation: if i == 0 {
                    [0.0; 3]
                } else {
                    [0.0, 0.0, -c.link_length]
                },
                rotation: RotationDescription::default(),
                mass: c.sphere_mass,
                com: [0.0, 0.0, -c.link_length],
                inertia: InertiaDescription::SolidSphere(c.sphere_radius),
                spheres: Vec::new(),
                boxes: Vec::new(),
            }
        })
        .collect();
    let description = Description {
        name: "pendulum".into(),
        gravity: [0.0, 0.0, -c.gravity],
        links,
    };
    let model = Model::from_description(&description).map_err(|e| SceneError::Param {
        key: "hinge_skew",
        message: format!("the chain's tree does not build: {e}"),
    })?;
    // Links are listed parents first, so body `i` is link `i`.
    debug_assert!((0..c.n_links).all(|i| model.body_index(&format!("link{i}")) == Some(i)));
    Ok(model)
}

/// The normal bias `s` of a contact (see the module doc): `e v-` at an impact (`v- < 0` and
/// `gap + h min(v-, v_free) <= 0`), else `gap / h` while the surfaces are apart, else 0.
pub fn normal_shift(gap: f64, v_minus: f64, v_free: f64, restitution: f64, h: f64) -> f64 {
    if v_minus < 0.0 && gap + h * v_free.min(v_minus) <= 0.0 {
        restitution * v_minus
    } else if gap > 0.0 {
        gap / h
    } else {
        0.0
    }
}

/// The twelve-link pendulum: state and time stepping.
#[derive(Debug, Clone)]
pub struct Pendulum {
    /// The parameters. With a `hinge_skew` the chain's tree is built once, by
    /// [`Pendulum::new`]: later changes to the links (`n_links`, `link_length`,
    /// `sphere_radius`, `sphere_mass`, `gravity`, `hinge_skew`) do not reach it; the
    /// environment (pivot, floor, wall, contact law) may change.
    pub config: PendulumConfig,
    /// Hinge angles (relative, rad).
    pub q: DVector<f64>,
    /// Hinge rates (rad/s).
    pub qdot: DVector<f64>,
    /// Simulated time (s).
    pub time: f64,
    /// Contacts in the step just taken.
    pub last_contacts: usize,
    /// The chain's tree when its kinematics and dynamics come from the `multibody` crate
    /// (a non-zero `hinge_skew`); `None` for the planar closed forms.
    spatial: Option<Arc<Model>>,
}

impl Pendulum {
    /// The paper's initial state for `config`: a straight chain at `initial_angle`, rotating
    /// rigidly at `initial_rate`; errors when it starts inside the floor or the wall.
    pub fn new(config: &PendulumConfig) -> Result<Pendulum, SceneError> {
        config.validate()?;
        let n = config.n_links;
        let mut q = DVector::zeros(n);
        let mut qdot = DVector::zeros(n);
        q[0] = config.initial_angle;
        qdot[0] = config.initial_rate;
        let spatial = if config.hinge_skew == 0.0 {
            None
        } else {
            Some(Arc::new(chain_model(config)?))
        };
        let p = Pendulum {
            config: config.clone(),
            q,
            qdot,
            time: 0.0,
            last_contacts: 0,
            spatial,
        };
        if let Some(c) = p.contacts().iter().find(|c| c.gap < 0.0) {
            return Err(SceneError::Param {
                key: "initial_angle",
                message: format!(
                    "the initial chain overlaps an obstacle ({:?}, gap {:.3} m); \
                     change initial_angle, pivot_height or wall_x",
                    c.key, c.gap
                ),
            });
        }
        Ok(p)
    }

    /// Number of links.
    pub fn n(&self) -> usize {
        self.config.n_links
    }

    /// The absolute link angles `phi_i = q_0 + .. + q_i` (of the planar chain; with a
    /// `hinge_skew` they are only the sums of the hinge angles).
    pub fn absolute_angles(&self) -> Vec<f64> {
        self.q
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect()
    }

    /// The absolute link rates `phi_i'`.
    pub fn absolute_rates(&self) -> Vec<f64> {
        self.qdot
            .iter()
            .scan(0.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect()
    }

    /// The pivot `(0, 0, pivot_height)`.
    pub fn pivot(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, self.config.pivot_height)
    }

    /// Whether the chain's kinematics and dynamics come from its `multibody` tree (a non-zero
    /// `hinge_skew`) rather than the planar closed forms.
    pub fn is_spatial(&self) -> bool {
        self.spatial.is_some()
    }

    /// The sphere centre in its link's frame.
    fn centre_in_link(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, -self.config.link_length)
    }

    /// The sphere centres `p_i`.
    pub fn sphere_positions(&self) -> Vec<Vector3<f64>> {
        if let Some(model) = &self.spatial {
            let (centre, pivot) = (self.centre_in_link(), self.pivot());
            return model
                .body_poses(&self.q)
                .iter()
                .map(|pose| pivot + pose.transform_point(&centre))
                .collect();
        }
        let l = self.config.link_length;
        let mut p = self.pivot();
        self.absolute_angles()
            .into_iter()
            .map(|phi| {
                p += l * Vector3::new(phi.sin(), 0.0, -phi.cos());
                p
            })
            .collect()
    }

    /// `J_i = dp_i/dq` per sphere: `jac[i][k] = L sum_{j=k}^{i} (cos phi_j, 0, sin phi_j)` for
    /// `k <= i`, zero for `k > i`.
    pub fn sphere_jacobians(&self) -> Vec<Vec<Vector3<f64>>> {
        let n = self.n();
        if let Some(model) = &self.spatial {
            let poses = model.body_poses(&self.q);
            let centre = self.centre_in_link();
            return (0..n)
                .map(|i| {
                    let j = model.point_jacobian_with_poses(&poses, i, &centre);
                    j.column_iter().map(|c| c.into_owned()).collect()
                })
                .collect();
        }
        let l = self.config.link_length;
        let du: Vec<Vector3<f64>> = self
            .absolute_angles()
            .iter()
            .map(|phi| l * Vector3::new(phi.cos(), 0.0, phi.sin()))
            .collect();
        (0..n)
            .map(|i| {
                let mut col = vec![Vector3::zeros(); n];
                let mut acc = Vector3::zeros();
                for k in (0..=i).rev() {
                    acc += du[k];
                    col[k] = acc;
                }
                col
            })
            .collect()
    }

    /// The sphere centres' velocities `J_i q'`.
    pub fn sphere_velocities(&self) -> Vec<Vector3<f64>> {
        self.sphere_jacobians()
            .iter()
            .map(|jac| jac.iter().zip(self.qdot.iter()).map(|(c, v)| c * *v).sum())
            .collect()
    }

    /// The mass matrix `M(q) = sum_i m J_i' J_i + I a_i a_i'` (symmetric positive definite).
    pub fn mass_matrix(&self) -> DMatrix<f64> {
        if let Some(model) = &self.spatial {
            return model.mass_matrix(&self.q);
        }
        let n = self.n();
        let (m, inertia) = (self.config.sphere_mass, self.config.inertia());
        let jac = self.sphere_jacobians();
        let mut out = DMatrix::zeros(n, n);
        for k in 0..n {
            for l in 0..=k {
                // Spheres i >= k (= max(k, l)) depend on both coordinates.
                let v: f64 = (k..n)
                    .map(|i| m * jac[i][k].dot(&jac[i][l]) + inertia)
                    .sum();
                out[(k, l)] = v;
                out[(l, k)] = v;
            }
        }
        out
    }

    /// The Coriolis and centrifugal forces `sum_i m J_i' (J_i' q')` (`M q'' + C = tau`).
    pub fn coriolis(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.bias_forces(&self.q, &self.qdot) - model.gravity_forces(&self.q);
        }
        let n = self.n();
        let (m, l) = (self.config.sphere_mass, self.config.link_length);
        let jac = self.sphere_jacobians();
        let mut acc = Vector3::zeros();
        let centripetal: Vec<Vector3<f64>> = self
            .absolute_angles()
            .iter()
            .zip(self.absolute_rates())
            .map(|(phi, rate)| {
                acc -= l * rate * rate * Vector3::new(phi.sin(), 0.0, -phi.cos());
                acc
            })
            .collect();
        DVector::from_fn(n, |k, _| {
            (k..n).map(|i| m * jac[i][k].dot(&centripetal[i])).sum()
        })
    }

    /// The gravity forces `sum_i m g J_i' e_z` (the gradient of the potential energy).
    pub fn gravity_forces(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.gravity_forces(&self.q);
        }
        let n = self.n();
        let mg = self.config.sphere_mass * self.config.gravity;
        let jac = self.sphere_jacobians();
        DVector::from_fn(n, |k, _| (k..n).map(|i| mg * jac[i][k].z).sum())
    }

    /// `C(q, q')`: Coriolis, centrifugal and gravity forces.
    pub fn bias_forces(&self) -> DVector<f64> {
        if let Some(model) = &self.spatial {
            return model.bias_forces(&self.q, &self.qdot);
        }
        self.coriolis() + self.gravity_forces()
    }

    /// `q' M q' / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.qdot.dot(&(self.mass_matrix() * &self.qdot))
    }

    /// `sum_i m g z_i`, heights from the origin (the floor's mid-plane).
    pub fn potential_energy(&self) -> f64 {
        let mg = self.config.sphere_mass * self.config.gravity;
        self.sphere_positions().iter().map(|p| mg * p.z).sum()
    }

    /// Kinetic plus potential energy.
    pub fn energy(&self) -> f64 {
        self.kinetic_energy() + self.potential_energy()
    }

    /// The contacts at the current state, in a fixed order: per sphere floor then wall, then
    /// the non-adjacent pairs `(a, b)`, `a < b - 1`.
    pub fn contacts(&self) -> Vec<Contact> {
        let c = &self.config;
        let r = c.sphere_radius;
        let p = self.sphere_positions();
        let mut out = Vec::new();
        for (i, pi) in p.iter().enumerate() {
            let floor_gap = pi.z - r - c.floor_top();
            if floor_gap < c.margin {
                out.push(Contact {
                    key: ContactKey::Wall {
                        ball: i,
                        wall: FLOOR,
                    },
                    frame: planar_frame(Vector3::z()),
                    gap: floor_gap,
                });
            }
            let wall_gap = c.wall_x - pi.x - r;
            if wall_gap < c.margin {
                out.push(Contact {
                    key: ContactKey::Wall {
                        ball: i,
                        wall: WALL,
                    },
                    frame: planar_frame(-Vector3::x()),
                    gap: wall_gap,
                });
            }
        }
        for a in 0..p.len() {
            for b in a + 2..p.len() {
                let d = p[a] - p[b];
                let dist = d.norm();
                let gap = dist - 2.0 * r;
                if gap < c.margin && dist > 0.0 {
                    out.push(Contact {
                        key: ContactKey::Pair { a, b },
                        frame: chain_frame(d / dist),
                        gap,
                    });
                }
            }
        }
        out
    }

    /// The `3 x n` Jacobian of the velocity of the point of sphere `sphere` at `offset` (world
    /// axes) from its centre: column `k <= i` is `J_i[k] - e_y x offset` for the planar chain,
    /// the tree's point Jacobian otherwise.
    pub fn point_jacobian(&self, sphere: usize, offset: Vector3<f64>) -> DMatrix<f64> {
        let n = self.n();
        if let Some(model) = &self.spatial {
            let poses = model.body_poses(&self.q);
            let point = poses[sphere].rotation.transpose() * offset + self.centre_in_link();
            let j = model.point_jacobian_with_poses(&poses, sphere, &point);
            return DMatrix::from_fn(3, n, |r, c| j[(r, c)]);
        }
        let jac = &self.sphere_jacobians()[sphere];
        let spin = -Vector3::y().cross(&offset);
        let mut out = DMatrix::zeros(3, n);
        for (k, col) in jac.iter().enumerate().take(sphere + 1) {
            out.set_column(k, &(col + spin));
        }
        out
    }

    /// The `3 x n` rows `[n, t1, t2]` of `J` for one contact: the frame times the velocity of
    /// the first body's touching point minus the second's.
    pub fn contact_jacobian(&self, contact: &Contact) -> DMatrix<f64> {
        let r = self.config.sphere_radius;
        let n: Vector3<f64> = contact.frame.row(0).transpose();
        let frame = DMatrix::from_fn(3, 3, |i, j| contact.frame[(i, j)]);
        let rel = match contact.key {
            ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                self.point_jacobian(ball, -r * n)
            }
            ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => {
                self.point_jacobian(a, -r * n) - self.point_jacobian(b, r * n)
            }
        };
        frame * rel
    }

    /// The stacked `3 nc x n` contact Jacobian of `contacts`.
    fn stacked_jacobian(&self, contacts: &[Contact]) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(3 * contacts.len(), self.n());
        for (ci, c) in contacts.iter().enumerate() {
            j.view_mut((3 * ci, 0), (3, self.n()))
                .copy_from(&self.contact_jacobian(c));
        }
        j
    }

    /// The Cholesky factor of `M(q)`.
    fn cholesky(&self) -> Result<nalgebra::Cholesky<f64, nalgebra::Dyn>, SceneError> {
        self.mass_matrix()
            .cholesky()
            .ok_or(SceneError::NonFinite("mass matrix (no Cholesky factor)"))
    }

    /// The free velocity `c = q' - h M^-1 C(q, q')`.
    pub fn free_velocity(&self) -> Result<DVector<f64>, SceneError> {
        let chol = self.cholesky()?;
        Ok(&self.qdot - self.config.h * chol.solve(&self.bias_forces()))
    }

    /// The normal biases `s` of a step's contacts (see [`normal_shift`]), at the current state
    /// (the one the step was made at): `u_n - s` is the contact's true normal velocity.
    pub fn normal_shifts(&self, step: &ContactStep) -> Vec<f64> {
        let free = DVector::from_column_slice(&step.free);
        step.contacts
            .iter()
            .map(|c| {
                let jn = self.contact_jacobian(c).row(0).into_owned();
                let v_minus = (&jn * &self.qdot)[0];
                let v_free = if free.len() == self.n() {
                    (&jn * &free)[0]
                } else {
                    v_minus
                };
                normal_shift(
                    c.gap,
                    v_minus,
                    v_free,
                    self.config.restitution_at(v_minus),
                    self.config.h,
                )
            })
            .collect()
    }

    /// This step's contact problem: `W = J M^-1 J'` (as `Y'Y`, symmetric PSD), `q = J c`
    /// plus the normal bias.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let contacts = self.contacts();
        let nc = contacts.len();
        let chol = self.cholesky()?;
        let free = &self.qdot - self.config.h * chol.solve(&self.bias_forces());
        let j = self.stacked_jacobian(&contacts);
        let y = chol
            .l()
            .solve_lower_triangular(&j.transpose())
            .ok_or(SceneError::NonFinite("mass matrix (singular factor)"))?;
        let yy = y.transpose() * &y;
        let w = Mat::<f64>::from_fn(
            3 * nc,
            3 * nc,
            |r, c| if r >= c { yy[(r, c)] } else { yy[(c, r)] },
        );
        let mut q: Vec<f64> = (&j * &free).iter().copied().collect();
        let v_minus = &j * &self.qdot;
        for (ci, c) in contacts.iter().enumerate() {
            q[3 * ci] += normal_shift(
                c.gap,
                v_minus[3 * ci],
                q[3 * ci],
                self.config.restitution_at(v_minus[3 * ci]),
                self.config.h,
            );
        }
        let problem = LocalProblem::new(Matrix::Dense(w), q, vec![self.config.mu; nc])?;
        Ok(ContactStep {
            contacts,
            problem: problem.into(),
            free: free.iter().copied().collect(),
        })
    }

    /// Applies the impulses `r` (normal first, the step's frames) and moves the chain:
    /// `q' = c + M^-1 J' r`, `q += h q'`.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let nc = step.contacts.len();
        let n = self.n();
        step.check_impulses(r, Some(n))?;
        let mut qdot = DVector::from_column_slice(&step.free);
        if nc > 0 {
            let j = self.stacked_jacobian(&step.contacts);
            let p = j.transpose() * DVector::from_column_slice(r);
            qdot += self.cholesky()?.solve(&p);
        }
        self.step_to(qdot, nc)
    }

    /// A step without contacts (gravity and the chain's own dynamics only).
    pub fn advance_free(&mut self) -> Result<(), SceneError> {
        let qdot = self.free_velocity()?;
        self.step_to(qdot, 0)
    }

    fn step_to(&mut self, qdot: DVector<f64>, contacts: usize) -> Result<(), SceneError> {
        if qdot.iter().any(|v| !v.is_finite()) {
            return Err(SceneError::NonFinite("hinge rates"));
        }
        self.q += self.config.h * &qdot;
        self.qdot = qdot;
        self.time += self.config.h;
        self.last_contacts = contacts;
        Ok(())
    }

    /// The deepest penetration at the current state (0 when nothing overlaps).
    pub fn max_overlap(&self) -> f64 {
        self.contacts()
            .iter()
            .map(|c| (-c.gap).max(0.0))
            .fold(0.0, f64::max)
    }
}

impl Scene for Pendulum {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    /// `rest_height`: the height of a sphere's centre resting on the floor,
    /// [`PendulumConfig::floor_top`] plus the sphere radius (m).
    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![(
            "rest_height",
            self.config.floor_top() + self.config.sphere_radius,
        )]
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Pendulum::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Pendulum::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let n = self.n();
        let last = self.sphere_positions()[n - 1];
        let last_vz = self.sphere_velocities()[n - 1].z;
        vec![
            ("last_z", last.z),
            ("last_vz", last_vz),
            ("last_y", last.y),
            ("energy", self.energy()),
            ("n_contacts", self.last_contacts as f64),
            ("max_overlap", self.max_overlap()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestSolver;
    use approx::assert_relative_eq;
    use nalgebra::Rotation3;

    /// A configuration with every kind of contact: the chain hangs with two folds so that
    /// spheres (1, 3) touch and (5, 7) nearly do, the lowest sphere sinks into the floor and the
    /// rightmost one is within the margin of the wall.
    fn tangle() -> Pendulum {
        let mut p = Pendulum::new(&PendulumConfig {
            n_links: 10,
            margin: 0.05,
            initial_angle: 0.0,
            pivot_height: 20.0,
            ..PendulumConfig::default()
        })
        .unwrap();
        let fold = 2.0 * (0.25f64).acos(); // relative angle at which spheres i and i + 2 touch
        p.q = DVector::from_vec(vec![
            0.3,
            -0.2,
            0.1,
            fold,
            0.15,
            -0.3,
            0.2,
            -fold + 0.01,
            0.4,
            1.2,
        ]);
        p.qdot = DVector::from_vec(vec![0.5, -1.0, 0.7, 0.3, -0.2, 1.1, -0.6, 0.4, 0.9, -0.8]);
        // Lower the pivot until the lowest sphere sinks 3 mm into the floor, move the wall to
        // 1 cm right of the rightmost sphere.
        let pos = p.sphere_positions();
        let low = pos.iter().map(|v| v.z).fold(f64::INFINITY, f64::min);
        let right = pos.iter().map(|v| v.x).fold(f64::NEG_INFINITY, f64::max);
        p.config.pivot_height = 20.0 - (low - 0.25 - p.config.floor_top()) - 0.003;
        p.config.wall_x = right + 0.25 + 0.01;
        p
    }

    /// Kinetic energy from finite differences of the sphere positions (independent of `M`).
    fn kinetic_from_positions(p: &Pendulum, qdot: &DVector<f64>) -> f64 {
        let eps = 1e-6;
        let mut a = p.clone();
        let mut b = p.clone();
        a.q = &p.q + eps * qdot;
        b.q = &p.q - eps * qdot;
        let (pa, pb) = (a.sphere_positions(), b.sphere_positions());
        let cfg = &p.config;
        let mut phidot = 0.0;
        let mut t = 0.0;
        for i in 0..p.n() {
            phidot += qdot[i];
            let v = (pa[i] - pb[i]) / (2.0 * eps);
            t += 0.5 * cfg.sphere_mass * v.norm_squared() + 0.5 * cfg.inertia() * phidot * phidot;
        }
        t
    }

    #[test]
    fn mass_matrix_is_spd_and_the_hessian_of_the_kinetic_energy() {
        let p = tangle();
        let m = p.mass_matrix();
        let n = p.n();
        assert_eq!(m, m.transpose());
        let eig = m.clone().symmetric_eigen().eigenvalues;
        assert!(eig.min() > 0.0, "{eig}");
        // T is quadratic in qdot: the central second difference is its Hessian.
        let e = 1e-2;
        let mut worst: f64 = 0.0;
        for k in 0..n {
            for l in 0..n {
                let t = |dk: f64, dl: f64| {
                    let mut v = p.qdot.clone();
                    v[k] += dk;
                    v[l] += dl;
                    kinetic_from_positions(&p, &v)
                };
                let h = (t(e, e) - t(e, -e) - t(-e, e) + t(-e, -e)) / (4.0 * e * e);
                worst = worst.max((h - m[(k, l)]).abs());
            }
        }
        eprintln!(
            "max |M - Hessian of T| = {worst:.2e} (max M = {:.1})",
            m.max()
        );
        assert!(worst < 1e-5 * m.max(), "{worst}");
        // T = q' M q' / 2 agrees with the position-based T.
        assert_relative_eq!(
            p.kinetic_energy(),
            kinetic_from_positions(&p, &p.qdot),
            max_relative = 1e-8
        );
    }

    #[test]
    fn coriolis_and_gravity_match_finite_differences() {
        bias_matches_finite_differences(&tangle());
    }

    /// `C = (d/dt M) q' - dT/dq` and the gravity forces against central differences of the
    /// chain's own `M`, kinetic and potential energy.
    fn bias_matches_finite_differences(p: &Pendulum) {
        let n = p.n();
        let eps = 1e-6;
        let shifted = |k: usize, d: f64| {
            let mut s = p.clone();
            s.q[k] += d;
            s
        };
        // C = (d/dt M) q' - dT/dq at q'' = 0, with d/dt M = sum_k dM/dq_k q'_k.
        let mut mdot = DMatrix::zeros(n, n);
        let mut dtdq = DVector::zeros(n);
        let mut dvdq = DVector::zeros(n);
        for k in 0..n {
            let (a, b) = (shifted(k, eps), shifted(k, -eps));
            mdot += (a.mass_matrix() - b.mass_matrix()) * (p.qdot[k] / (2.0 * eps));
            dtdq[k] = (a.kinetic_energy() - b.kinetic_energy()) / (2.0 * eps);
            dvdq[k] = (a.potential_energy() - b.potential_energy()) / (2.0 * eps);
        }
        let fd = &mdot * &p.qdot - dtdq;
        let c = p.coriolis();
        eprintln!(
            "coriolis: max |analytic - FD| = {:.2e} of {:.2e}",
            (&c - &fd).amax(),
            c.amax()
        );
        assert!((&c - &fd).amax() < 1e-6 * (1.0 + c.amax()), "{c} vs {fd}");
        let g = p.gravity_forces();
        assert!(
            (&g - &dvdq).amax() < 1e-6 * (1.0 + g.amax()),
            "{g} vs {dvdq}"
        );
        assert_relative_eq!(p.bias_forces(), c + g, epsilon = 1e-12);
    }

    #[test]
    fn contact_rows_match_finite_differences_of_the_contact_points() {
        let p = tangle();
        let contacts = p.contacts();
        let kinds = |f: fn(&ContactKey) -> bool| contacts.iter().filter(|c| f(&c.key)).count();
        assert!(
            kinds(|k| matches!(k, ContactKey::Pair { .. })) >= 2,
            "{contacts:?}"
        );
        assert!(
            kinds(|k| matches!(k, ContactKey::Wall { wall: FLOOR, .. })) >= 1,
            "{contacts:?}"
        );
        assert!(
            kinds(|k| matches!(k, ContactKey::Wall { wall: WALL, .. })) >= 1,
            "{contacts:?}"
        );
        let r = p.config.sphere_radius;
        let phi0 = p.absolute_angles();
        // The material point of sphere `i` that sits at `offset` from its centre at `p`,
        // carried to the configuration of `s` (the sphere turns by -(phi - phi0) about y).
        let point = |s: &Pendulum, i: usize, offset: Vector3<f64>| {
            let rot =
                Rotation3::from_axis_angle(&Vector3::y_axis(), -(s.absolute_angles()[i] - phi0[i]));
            s.sphere_positions()[i] + rot * offset
        };
        let eps = 1e-6;
        for c in &contacts {
            let n: Vector3<f64> = c.frame.row(0).transpose();
            let rel = |s: &Pendulum| match c.key {
                ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                    point(s, ball, -r * n)
                }
                ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => {
                    point(s, a, -r * n) - point(s, b, r * n)
                }
            };
            let j = p.contact_jacobian(c);
            assert_eq!(j.row(2).amax(), 0.0, "the out-of-plane row is exactly zero");
            for k in 0..p.n() {
                let (mut a, mut b) = (p.clone(), p.clone());
                a.q[k] += eps;
                b.q[k] -= eps;
                let fd = c.frame * (rel(&a) - rel(&b)) / (2.0 * eps);
                for row in 0..3 {
                    assert!(
                        (j[(row, k)] - fd[row]).abs() < 1e-8,
                        "{:?} row {row} col {k}: {} vs {}",
                        c.key,
                        j[(row, k)],
                        fd[row]
                    );
                }
            }
        }
        // The frames: normal from the second body to the first.
        for c in &contacts {
            let n: Vector3<f64> = c.frame.row(0).transpose();
            let pos = p.sphere_positions();
            match c.key {
                ContactKey::Wall { wall: FLOOR, .. } => assert_eq!(n, Vector3::z()),
                ContactKey::Wall { .. } => assert_eq!(n, -Vector3::x()),
                ContactKey::WallPoint { .. } | ContactKey::PairPoint { .. } => {
                    unreachable!("the pendulum makes no manifold contacts")
                }
                ContactKey::Pair { a, b } => {
                    assert_relative_eq!(n, (pos[a] - pos[b]).normalize(), epsilon = 1e-14)
                }
            }
            assert_relative_eq!(
                c.frame * c.frame.transpose(),
                Matrix3::identity(),
                epsilon = 1e-14
            );
            assert_relative_eq!(c.frame.determinant(), 1.0, epsilon = 1e-14);
        }
    }

    #[test]
    fn delassus_matrix_is_symmetric_psd_and_the_step_is_consistent() {
        let p = tangle();
        let cs = p.contact_step().unwrap();
        let nc = cs.contacts.len();
        let w = cs.problem.local().unwrap().dense_w();
        let wd = DMatrix::from_fn(3 * nc, 3 * nc, |i, j| w[(i, j)]);
        assert_eq!(wd, wd.transpose(), "symmetric to the last bit");
        let eig = wd.clone().symmetric_eigen().eigenvalues;
        assert!(eig.min() >= -1e-12 * eig.max(), "{eig}");
        for ci in 0..nc {
            assert_eq!(wd.row(3 * ci + 2).amax(), 0.0);
            assert_eq!(cs.problem.local().unwrap().q[3 * ci + 2], 0.0);
        }
        // A unit impulse e_j changes the contact velocities by W e_j (with the biases removed).
        let shifts = p.normal_shifts(&cs);
        let all = p.stacked_jacobian(&cs.contacts);
        for j in [0, 1, 3, 4] {
            let mut r = vec![0.0; 3 * nc];
            r[j] = 1.0;
            let mut s = p.clone();
            s.advance(&cs, &r).unwrap();
            let mut expected = cs.velocities(&r).unwrap();
            for ci in 0..nc {
                expected[3 * ci] -= shifts[ci];
            }
            let got = &all * &s.qdot;
            for i in 0..3 * nc {
                assert!(
                    (got[i] - expected[i]).abs() < 1e-10,
                    "{i}: {} vs {}",
                    got[i],
                    expected[i]
                );
            }
        }
    }

    #[test]
    fn the_normal_bias_follows_the_documented_rule() {
        let h = 1e-3;
        assert_eq!(normal_shift(0.0, -2.0, -2.01, 0.7, h), 0.7 * -2.0);
        assert_eq!(
            normal_shift(0.0015, -2.0, -2.01, 0.7, h),
            0.7 * -2.0,
            "meets within the step"
        );
        assert_eq!(
            normal_shift(0.01, -2.0, -2.01, 0.7, h),
            0.01 / h,
            "still apart after the step"
        );
        assert_eq!(normal_shift(0.01, 1.0, 1.0, 0.7, h), 0.01 / h);
        assert_eq!(
            normal_shift(-0.01, 1.0, 1.0, 0.7, h),
            0.0,
            "overlap, separating"
        );
        assert_eq!(
            normal_shift(-0.01, -1.0, -1.0, 0.7, h),
            -0.7,
            "overlap, approaching"
        );
    }

    /// The largest `|E - E0|` and kinetic energy over one second of free motion at step `h`.
    fn free_drift(h: f64) -> (f64, f64) {
        let cfg = PendulumConfig {
            pivot_height: 100.0,
            wall_x: 100.0,
            h,
            ..PendulumConfig::default()
        };
        let mut p = Pendulum::new(&cfg).unwrap();
        let e0 = p.energy();
        let (mut drift, mut ke) = (0.0f64, 0.0f64);
        for _ in 0..cfg.steps().min((1.0 / h).round() as usize) {
            assert!(p.contacts().is_empty());
            p.advance_free().unwrap();
            drift = drift.max((p.energy() - e0).abs());
            ke = ke.max(p.kinetic_energy());
        }
        (drift, ke)
    }

    #[test]
    fn energy_is_conserved_without_contacts() {
        // 1000 steps of 1 ms: the chain falls from 45 degrees and whips through the vertical.
        let (drift, ke) = free_drift(1e-3);
        let (half, _) = free_drift(5e-4);
        eprintln!("1000 steps of 1 ms: max |E - E0| = {drift:.3e} J (max kinetic {ke:.1} J); 2000 of 0.5 ms: {half:.3e} J");
        assert!(drift < 0.6, "max |E - E0| = {drift} J");
        assert!(
            drift < 1.2e-3 * ke,
            "{drift} J against {ke} J of kinetic energy"
        );
        // First order in h: the semi-implicit Euler error, not a modelling error.
        assert!(
            (1.8..2.2).contains(&(drift / half)),
            "drift ratio {}",
            drift / half
        );
    }

    /// One link dropped on the floor from 45 degrees above the horizontal; returns the ratio of
    /// the rebound normal velocity to the impact one (the step's J) and of the sphere's vertical
    /// velocities after and before the impact step.
    fn rebound(mu: f64, spec: &TestSolver) -> (f64, f64) {
        rebound_with(mu, 0.0, spec)
    }

    fn rebound_with(mu: f64, restitution_threshold: f64, spec: &TestSolver) -> (f64, f64) {
        let r = 0.25;
        let cfg = PendulumConfig {
            n_links: 1,
            mu,
            restitution_threshold,
            pivot_height: 0.1 + r,
            wall_x: 100.0,
            initial_angle: 0.75 * std::f64::consts::PI,
            initial_rate: 0.0,
            ..PendulumConfig::default()
        };
        let mut p = Pendulum::new(&cfg).unwrap();
        for _ in 0..2000 {
            let cs = p.contact_step().unwrap();
            if cs.contacts.is_empty() {
                p.advance(&cs, &[]).unwrap();
                continue;
            }
            let s = spec.solve(&cs.problem, None);
            assert!(s.metrics.natural_map <= 1e-10, "{:?}", s.status);
            let j = p.contact_jacobian(&cs.contacts[0]);
            let v_minus = (j.row(0) * &p.qdot)[0];
            let vz_before = p.sphere_velocities()[0].z;
            p.advance(&cs, &s.r).unwrap();
            if s.r[0] > 0.0 {
                let v_plus = (j.row(0) * &p.qdot)[0];
                let vz_after = p.sphere_velocities()[0].z;
                eprintln!("mu {mu}: impact v- = {v_minus:.6}, v+ = {v_plus:.6}, vz {vz_before:.6} -> {vz_after:.6}");
                return (v_plus / -v_minus, vz_after / -vz_before);
            }
        }
        panic!("no impact");
    }

    #[test]
    fn a_dropped_link_rebounds_with_the_restitution() {
        // One degree of freedom makes W rank one; PGS solves the sliding impact exactly, the
        // Newton-type solvers (todorov, lm) stop at a local minimum there (natural map 8e-2)
        // and solve it only without friction.
        let pgs = TestSolver::new("coulomb", "pgs", 1e-12, 1000);
        let todorov = TestSolver::new("implicit-ncp", "todorov", 1e-12, 100);
        for (mu, spec) in [(0.0, &pgs), (0.5, &pgs), (0.0, &todorov)] {
            let (normal, vertical) = rebound(mu, spec);
            assert!((normal - 0.7).abs() < 1e-8, "mu {mu}: {normal}");
            assert!((vertical - 0.7).abs() < 0.01, "mu {mu}: {vertical}");
        }
    }

    #[test]
    fn impacts_slower_than_the_threshold_do_not_bounce() {
        let cfg = PendulumConfig {
            restitution_threshold: 0.5,
            ..PendulumConfig::default()
        };
        assert_eq!(cfg.restitution_at(-0.4), 0.0);
        assert_eq!(cfg.restitution_at(-0.6), 0.7);
        // The dropped link hits at a few m/s: above a 10 m/s threshold it stops dead.
        let pgs = TestSolver::new("coulomb", "pgs", 1e-12, 1000);
        let (normal, _) = rebound_with(0.0, 10.0, &pgs);
        assert!(normal.abs() < 1e-8, "{normal}");
        let bad = "restitution_threshold = -1.0"
            .parse::<toml::Table>()
            .unwrap();
        let e = PendulumConfig::from_table(&bad)
            .and_then(|c| Pendulum::new(&c).map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`restitution_threshold`"), "{e}");
    }

    /// Energy change of the first impact of the paper's run (the last sphere hits the floor
    /// sliding at 10.7 m/s), solved exactly.
    fn first_impact(mu: f64, restitution: f64) -> (f64, Vec<f64>, Vec<f64>) {
        let mut p = Pendulum::new(&PendulumConfig {
            mu,
            restitution,
            ..PendulumConfig::default()
        })
        .unwrap();
        let spec = TestSolver::new("coulomb", "pgs", 1e-12, 10_000);
        loop {
            let cs = p.contact_step().unwrap();
            let r = if cs.contacts.is_empty() {
                Vec::new()
            } else {
                spec.solve(&cs.problem, None).r
            };
            let j = p.stacked_jacobian(&cs.contacts);
            let (e0, before) = (p.energy(), &j * &p.qdot);
            p.advance(&cs, &r).unwrap();
            if r.first().is_some_and(|&rn| rn > 0.0) {
                let after = &j * &p.qdot;
                return (
                    p.energy() - e0,
                    before.iter().copied().collect(),
                    after.iter().copied().collect(),
                );
            }
        }
    }

    #[test]
    fn newton_restitution_with_friction_can_gain_energy() {
        // Kane's paradox: the normal impulse reverses the slip through W_nt, and friction
        // opposing the reversed slip then pushes along the approach. Without friction, or
        // without restitution, the impact dissipates.
        let (gain, before, after) = first_impact(0.5, 0.7);
        eprintln!("first impact, mu 0.5, e 0.7: dE = {gain:.2} J, v- = {before:?}, v+ = {after:?}");
        assert!(
            before[0] < 0.0 && before[1] > 0.0 && after[1] < 0.0,
            "the slip reverses"
        );
        assert!((after[0] / -before[0] - 0.7).abs() < 1e-8);
        assert!(gain > 100.0, "{gain}");
        let (no_friction, ..) = first_impact(0.0, 0.7);
        let (plastic, ..) = first_impact(0.5, 0.0);
        eprintln!("mu 0: dE = {no_friction:.2} J; e 0: dE = {plastic:.2} J");
        assert!(no_friction < 0.0 && plastic < 0.0);
    }

    #[test]
    fn the_paper_run_takes_2000_steps_with_the_todorov_solver() {
        let mut p = Pendulum::new(&PendulumConfig::default()).unwrap();
        assert_relative_eq!(
            p.sphere_positions()[11].z,
            10.0 - 12.0 * (0.25 * std::f64::consts::PI).cos(),
            epsilon = 1e-12
        );
        let spec = TestSolver::new("implicit-ncp", "todorov", 1e-8, 100);
        let e0 = p.energy();
        let mut e_max = e0;
        let (mut steps_with_contacts, mut max_nc, mut converged, mut max_overlap) =
            (0, 0, 0, 0.0f64);
        for _ in 0..2000 {
            let cs = p.contact_step().unwrap();
            let r = if cs.contacts.is_empty() {
                Vec::new()
            } else {
                steps_with_contacts += 1;
                max_nc = max_nc.max(cs.contacts.len());
                let s = spec.solve(&cs.problem, None);
                converged += usize::from(s.metrics.natural_map <= 1e-8);
                s.r
            };
            p.advance(&cs, &r).unwrap();
            max_overlap = max_overlap.max(p.max_overlap());
            e_max = e_max.max(p.energy());
        }
        let obs = p.observables();
        eprintln!(
            "2000 steps: {steps_with_contacts} with contacts ({converged} converged), max nc {max_nc}, energy {e0:.2} -> {:.2} J (max {e_max:.2}), max overlap {max_overlap:.2e} m, {obs:?}",
            p.energy()
        );
        assert!(
            steps_with_contacts > 100,
            "the chain reaches the floor within 2 s"
        );
        assert!(
            100 * converged >= 99 * steps_with_contacts,
            "{converged} of {steps_with_contacts}"
        );
        // The first floor impact gains energy (Kane's paradox, see the module doc); nothing
        // else should.
        assert!(e_max < 1.3 * e0, "{e_max} J from {e0} J");
        assert!(max_overlap < 0.01, "{max_overlap}");
        assert_eq!(
            obs.iter().map(|o| o.0).collect::<Vec<_>>(),
            [
                "last_z",
                "last_vz",
                "last_y",
                "energy",
                "n_contacts",
                "max_overlap"
            ]
        );
    }

    #[test]
    fn bad_parameters_are_named_and_unknown_keys_rejected() {
        let parse = |s: &str| PendulumConfig::from_table(&s.parse::<toml::Table>().unwrap());
        let e = parse("n_links = 12\nlinks = 3").unwrap_err().to_string();
        assert!(e.contains("links"), "{e}");
        for (text, key) in [
            ("n_links = 0", "`n_links`"),
            ("link_length = 0.0", "`link_length`"),
            ("sphere_radius = 0.6", "`sphere_radius`"),
            ("sphere_mass = -1.0", "`sphere_mass`"),
            ("restitution = 1.5", "`restitution`"),
            ("mu = -0.5", "`mu`"),
            ("h = nan", "`h`"),
            ("wall_x = -4.0", "`wall_x`"),
            ("floor_thickness = -0.2", "`floor_thickness`"),
            ("margin = -1.0", "`margin`"),
            ("initial_angle = inf", "`initial_angle`"),
            ("hinge_skew = nan", "`hinge_skew`"),
            ("pivot_height = 3.0", "`initial_angle`"),
        ] {
            let e = Pendulum::new(&parse(text).unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        let mut p = Pendulum::new(&PendulumConfig::default()).unwrap();
        let cs = p.contact_step().unwrap();
        assert!(cs.contacts.is_empty());
        assert!(p
            .advance(&cs, &[1.0, 0.0, 0.0])
            .unwrap_err()
            .to_string()
            .contains("expected 0"));
    }

    /// The tangle's state on a chain whose kinematics and dynamics come from its tree.
    fn on_tree(p: &Pendulum) -> Pendulum {
        let mut t = p.clone();
        t.spatial = Some(Arc::new(chain_model(&p.config).unwrap()));
        t
    }

    /// The tangle's environment, hinge angles and rates on a chain with skewed hinges.
    fn skewed(skew: f64) -> Pendulum {
        let t = tangle();
        // Built high (the straight chain would start in the tangle's floor), then moved to
        // the tangle's environment, which may change after `new`.
        let mut p = Pendulum::new(&PendulumConfig {
            hinge_skew: skew,
            pivot_height: 20.0,
            ..t.config.clone()
        })
        .unwrap();
        p.config.pivot_height = t.config.pivot_height;
        p.q = t.q.clone();
        p.qdot = t.qdot.clone();
        p
    }

    #[test]
    fn the_tree_without_skew_is_the_planar_chain() {
        let planar = tangle();
        let tree = on_tree(&planar);
        assert!(tree.is_spatial() && !planar.is_spatial());
        let close = |a: &DMatrix<f64>, b: &DMatrix<f64>, what: &str| {
            let err = (a - b).amax();
            assert!(err < 1e-10 * (1.0 + a.amax()), "{what}: {err:e}");
        };
        close(&tree.mass_matrix(), &planar.mass_matrix(), "M");
        let col = |v: DVector<f64>| DMatrix::from_column_slice(v.len(), 1, v.as_slice());
        close(&col(tree.coriolis()), &col(planar.coriolis()), "Coriolis");
        close(
            &col(tree.gravity_forces()),
            &col(planar.gravity_forces()),
            "gravity",
        );
        close(&col(tree.bias_forces()), &col(planar.bias_forces()), "bias");
        for (a, b) in tree
            .sphere_positions()
            .iter()
            .zip(planar.sphere_positions())
        {
            assert!((a - b).norm() < 1e-12, "{a} vs {b}");
        }
        let contacts = planar.contacts();
        assert!(contacts.len() >= 4, "{contacts:?}");
        for c in &contacts {
            close(
                &tree.contact_jacobian(c),
                &planar.contact_jacobian(c),
                &format!("{:?}", c.key),
            );
        }
    }

    #[test]
    fn a_skewed_chain_has_consistent_dynamics_and_point_jacobians() {
        let p = skewed(0.3);
        assert!(p.is_spatial());
        let m = p.mass_matrix();
        assert!((&m - m.transpose()).amax() < 1e-12 * m.amax());
        let eig = m.clone().symmetric_eigen().eigenvalues;
        assert!(eig.min() > 0.0, "{eig}");
        bias_matches_finite_differences(&p);
        // A material point of each sphere, carried by its link's pose: its velocity along
        // `q'` by central differences against the point Jacobian.
        let model = p.spatial.clone().unwrap();
        let poses = model.body_poses(&p.q);
        let offset = p.config.sphere_radius * Vector3::new(0.6, -0.48, 0.64);
        let eps = 1e-6;
        for (i, pose) in poses.iter().enumerate() {
            let body_point = pose.rotation.transpose() * offset + p.centre_in_link();
            let at =
                |q: &DVector<f64>| p.pivot() + model.body_poses(q)[i].transform_point(&body_point);
            let fd = (at(&(&p.q + eps * &p.qdot)) - at(&(&p.q - eps * &p.qdot))) / (2.0 * eps);
            let v = |offset: Vector3<f64>| {
                let u = p.point_jacobian(i, offset) * &p.qdot;
                Vector3::new(u[0], u[1], u[2])
            };
            let j = v(offset);
            assert!(
                (j - fd).amax() < 1e-6 * (1.0 + fd.amax()),
                "sphere {i}: {j} vs {fd}"
            );
            // The sphere centres' Jacobians are the same points at zero offset.
            let centre = v(Vector3::zeros()) - p.sphere_velocities()[i];
            assert!(centre.amax() < 1e-12 * (1.0 + fd.amax()), "{centre}");
        }
    }

    #[test]
    fn a_skewed_chain_leaves_the_plane_and_keeps_its_energy_in_free_fall() {
        let run = |skew: f64| {
            let cfg = PendulumConfig {
                pivot_height: 100.0,
                wall_x: 100.0,
                hinge_skew: skew,
                ..PendulumConfig::default()
            };
            let mut p = Pendulum::new(&cfg).unwrap();
            let e0 = p.energy();
            let (mut drift, mut ke, mut y) = (0.0f64, 0.0f64, 0.0f64);
            for _ in 0..1000 {
                p.advance_free().unwrap();
                drift = drift.max((p.energy() - e0).abs());
                ke = ke.max(p.kinetic_energy());
                y = y.max(
                    p.sphere_positions()
                        .iter()
                        .map(|s| s.y.abs())
                        .fold(0.0, f64::max),
                );
            }
            (drift, ke, y)
        };
        let (flat_drift, flat_ke, flat_y) = run(0.0);
        let (drift, ke, y) = run(0.2);
        eprintln!("free fall, 1 s: planar drift {flat_drift:.2e} J of {flat_ke:.1} J, y = {flat_y}; skewed drift {drift:.2e} J of {ke:.1} J, max |y| = {y:.3} m");
        assert_eq!(flat_y, 0.0);
        assert!(y > 0.1, "max |y| = {y}");
        // The same first-order integrator error as the planar chain's.
        assert!(drift < 1.2e-3 * ke, "{drift} J against {ke} J");
    }

    #[test]
    fn the_chain_frame_is_orthonormal_and_planar_in_the_plane() {
        for n in [
            Vector3::new(0.6, 0.0, 0.8),
            Vector3::new(0.36, 0.48, 0.8),
            Vector3::new(0.0, 1.0, 0.0),
            Vector3::new(0.0, -0.6, -0.8),
        ] {
            let f = chain_frame(n);
            assert!(
                (f * f.transpose() - Matrix3::identity()).amax() < 1e-12,
                "{f}"
            );
            assert!((f.determinant() - 1.0).abs() < 1e-12);
            assert_eq!(f.row(0).transpose(), n);
            if n.y == 0.0 {
                assert_eq!(f, planar_frame(n));
            }
        }
    }
}
