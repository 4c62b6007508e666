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

mod chain;
mod config;
mod contacts;
mod scene;
mod step;
#[cfg(test)]
mod tests;

pub use config::{PendulumConfig, MAX_LINKS};
pub use contacts::{chain_frame, normal_shift, planar_frame, FLOOR, WALL};
pub use scene::Pendulum;
