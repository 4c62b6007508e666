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

use contactlab_multibody::Model;
use nalgebra::{DMatrix, DVector, Vector3};
use std::sync::Arc;

use crate::error::SceneError;
use crate::scene::{ContactStep, Scene};
use chain::chain_model;

mod chain;
mod config;
mod contacts;
mod step;
#[cfg(test)]
mod tests;

pub use config::PendulumConfig;
pub use contacts::{chain_frame, normal_shift, planar_frame};

/// The obstacle index of the floor in `ContactKey::Wall`.
pub const FLOOR: usize = 0;
/// The obstacle index of the wall in `ContactKey::Wall`.
pub const WALL: usize = 1;
/// The largest accepted number of links.
pub const MAX_LINKS: usize = 200;

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
    pub(super) fn centre_in_link(&self) -> Vector3<f64> {
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
