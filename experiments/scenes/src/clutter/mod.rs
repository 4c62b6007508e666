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

mod body;
mod config;
mod contacts;
mod profile;
mod scene;
mod step;
#[cfg(test)]
mod tests;

pub use body::{container, BodyShape, Obstacle, RigidBody, FLOOR};
pub use config::{ClutterConfig, MAX_BODIES};
pub use contacts::{reduce_manifold, ClutterContact, ManifoldPoint, MANIFOLD_POINTS};
pub use profile::{profile, StepTiming};
pub use scene::Clutter;
