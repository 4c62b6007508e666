//! Mylapilli and Jain 2014, "Evaluation of complementarity techniques for minimal coordinate
//! contact dynamics" (ASME IDETC, DETC2014-34322): the two formulations of the paper.
//!
//! * [`MlcpFb`]: the mixed LCP with a polyhedral friction cone of `n_f` directions per contact
//!   (eqs. 14-22), size `n_b + n_u (n_f + 2)`, recast as the non-smooth equations `phi(z) = 0`
//!   with the Fischer-Burmeister function (eq. 24) on the complementarity rows and `phi = -f`
//!   on the equality rows (the MCP variant of Ferris, Kanzow and Munson the paper cites), and
//!   the paper's Jacobian (section "Casting the MLCP as an optimization problem").
//! * [`ImplicitMncp`]: the implicit MNCP (eqs. 26-35): Todorov's implicit maps per contact
//!   (reused from [`crate::todorov`], per kind off the Coulomb contact) plus the bilateral
//!   impulses `p_b`, residual eq. 31/32 and Jacobian eq. 34/35.
//!
//! Both implement [`contactlab_core::Residual`] and [`contactlab_core::ProjectedResidual`], so
//! every least-squares driver of `contactlab_core::drivers` runs them. The paper's own two
//! optimizers are core's [`LevenbergMarquardt`] (RLM) and [`ProjectedLevenbergMarquardt`]
//! (PLM); [`paper_rlm`], [`paper_plm`] and [`paper_options`] build them with the paper's
//! parameters (stop at `psi < 1e-30`).
//!
//! # Input
//!
//! A local problem `u = W r + q` ([`LocalProblem`](contactlab_core::LocalProblem)) whose rows
//! are constraint blocks ([`contactlab_core::constraint`]), contacts normal first `[n, t1, t2]`
//! as everywhere in this project, and for the MLCP the friction directions ([`Directions`]:
//! `d_j` at angle `theta0_i + 2 pi j / n_f` in the `(t1, t2)` plane of contact block `i`, one
//! entry per contact block in the problem's order). An
//! [`Equality`](contactlab_core::Constraint::Equality) block is the paper's bilateral row; the
//! equality rows, wherever they stand, become the paper's `p_b` (first in the unknowns):
//!
//! ```text
//! [u_b]   [W_bb   W_bu] [p_b]   [q_b]
//! [u  ] = [W_bu'  W   ] [r  ] + [q  ],      u_b = 0,  p_b free
//! ```
//!
//! which is eq. 22's `Omega_b Lambda Omega_b' = W_bb`, `Omega_b Lambda Omega_u' = W_bu`,
//! `q_b = alpha_b^f dt`, `q = alpha_u^f dt + v_u^-` in the paper's notation. Both formulations
//! report the impulse of every row in the problem's row order.
//!
//! # Every kind in the MLCP
//!
//! The paper has two kinds of rows: bilateral (free `p_b`, `u_b = 0`, eq. 20) and the
//! polyhedral contact (eqs. 14-18: `r_i = D_(i) beta_(i)`, eq. 15; `D_(i)' v + E^ sigma >= 0 ⟂
//! beta_(i) >= 0`, eq. 16; `E- beta_(i) >= 0 ⟂ sigma_i >= 0`, eqs. 17-18). Every other kind is
//! written with the same three pieces, a block's columns `D_(b)`, its slip rate `sigma_b` and its
//! `E-` row, so `z` stays `[p_b; beta_; sigma]`, every unknown but `p_b` lies in `R+`, and the
//! paper's FB reformulation (eq. 24), Jacobian and kink rule apply unchanged:
//!
//! | block | `D_(b)` columns | `sigma_b` row `f_sigma` | from the paper |
//! |---|---|---|---|
//! | equality, 1-6 rows | (free `p_b`) | none | eq. 20, 22 (bilateral rows) |
//! | limit, contact `condim` 1 | `e_n` | none | eq. 16's first row, the normal's |
//! | friction loss | `+1`, `-1` | `f_max - beta_+ - beta_-` | eqs. 15-18, `mu F_n` -> `f_max` |
//! | Coulomb contact | `e_n`, `d_j` | `mu F_n - sum_j beta_j` | eqs. 14-18 as printed |
//! | contact, per-row `mu` (`condim` 3) | `e_n`, `(mu_1 cos a_j, mu_2 sin a_j)` | `F_n - sum_j beta_j` | eq. 14, scaled directions |
//! | contact, `condim` 4, 6 | the above, `+- mu_k e_k` per extra row | `F_n - sum_j beta_j` | eq. 14, extended `D_(i)` |
//!
//! Choices, and why:
//!
//! * Friction loss: the paper's own polyhedral friction with the constant bound `f_max` in
//!   place of `mu F_n` (two directions `beta_+`, `beta_-` on the block's one row and a
//!   `sigma`: `u + sigma ⟂ beta_+`, `-u + sigma ⟂ beta_-`, `f_max - beta_+ - beta_- ⟂ sigma`),
//!   not the box-MCP Fischer-Burmeister `phi(x - l, phi(u - x, -F))` of Billups and Kanzow. It
//!   keeps the problem the paper's MLCP: one NCP function, the paper's Jacobian rows and kink
//!   rule, and PLM's box `z >= 0`, where the box function would bring a nested kink of its own
//!   and a finite box to project on. In one dimension the two directions are exact (the answer
//!   is MuJoCo's box, no pyramid error); the price is two more unknowns and, when it sticks
//!   inside the box, a non-unique split `beta_+ - beta_-` (as a sticking contact's pyramid
//!   decomposition already is in the paper).
//! * Per-row coefficients: the polygon of directions scaled to the ellipse, `d_j = (mu_1 cos
//!   a_j, mu_2 sin a_j)` with `E- = [1, -1 .. -1]`, so every vertex lies on MuJoCo's elliptic
//!   cone `|D^-1 r_t| = F_n` (for `mu_1 = mu_2` it is eq. 14-17 with `beta` scaled by `mu`). The
//!   Coulomb contact keeps the paper's unit directions and `E- = [mu, -1 .. -1]`, to the bit.
//! * `condim` 4 and 6: each torsional and rolling row `k` with `mu_k > 0` adds its own two
//!   directions `+- mu_k e_k` to the contact's `D_(i)`, sharing the contact's one `sigma` and
//!   `E-` row (`sum_j beta_j <= F_n` over all directions). The polytope is the convex hull of
//!   points of the elliptic cone, hence inscribed in it as the paper's polygon is in the
//!   circle: every answer is in MuJoCo's cone (no primal error on the shared ruler), where a
//!   separate bound `mu_k F_n` and `sigma` per row would admit corners outside it (`|r_t| = mu
//!   F_n` together with `|r_tau| = mu_3 F_n`). With `n_f = 4` and `theta0 = 0` it is MuJoCo's
//!   pyramidal cone. The cost is the `l1` coupling of eq. 16's maximum dissipation: a contact
//!   that slides and spins at once gives all its friction to the direction that dissipates most.
//! * A row whose coefficient is 0 gets no direction (its impulse is 0, its velocity free); a
//!   block with no friction direction has no `sigma`.
//! * From `z` to the impulses, eq. 19 per block: `r_b = D_(b) beta_(b)`, `p_b` as it is
//!   ([`MlcpFb::impulse`]). From impulses to `z` (warm starts, [`MlcpFb::unknowns_from_impulse`]):
//!   the Coulomb polygon's two bracketing directions ([`Directions::pyramid_of`]); a scaled
//!   polygon the same on `(r_t1 / mu_1, r_t2 / mu_2)`; the pairs `+- mu_k e_k` and a friction
//!   loss's `+-1` the positive and negative parts; a limit's and a frictionless contact's `r`
//!   itself; every `sigma_b = max(0, max_j -d_j' u_b)`, the least making the friction rows
//!   `f >= 0`.
//! * PLM's box is the MCP's for every kind: `p_b` free, every `beta` and `sigma` in `R+`.
//!
//! # Every kind in the MNCP
//!
//! The paper's MNCP (eqs. 26-35) has the same two kinds of rows: bilateral `p_b` (free,
//! `u_b = 0`, eq. 31's first row) and the Coulomb contact, whose impulse `F_u(z)` is Todorov's
//! implicit map (eq. 26) of an unconstrained `z` with `v_u = F_u + z` (eq. 27). Every other kind
//! enters through Todorov's implicit map of that kind ([`crate::todorov::BlockMap`]): his paper
//! defines only the Coulomb contact's, and the maps of the other kinds are an extension of it
//! made and derived in [`crate::todorov`]'s docs, each meeting its kind's law for every `z` in
//! the form `v = f + z`. The MNCP takes them as they are, with the bias `b = 0` of eq. 26:
//!
//! | block | unknowns | enters the MNCP as | from |
//! |---|---|---|---|
//! | equality, 1-6 rows | `p_b` (its rows) | eq. 31's `Phi_b = u_b` | the paper, eqs. 29-31 |
//! | Coulomb contact | `z` (3 rows) | `F = ` eq. 26, `Phi_u = u - F - z` | the paper, eqs. 26-27, 35 |
//! | limit, contact `condim` 1 | `z` (1 row) | `F = max(0, -z)` | Todorov's eq. 10 |
//! | friction loss | `z` (1 row) | `F = -z min(1, f_max / abs(z))` | Todorov's eqs. 12-13, `mu F_n` -> `f_max` (extension) |
//! | contact, per-row `mu` (`condim` 3, 4, 6) | `z` (its rows) | the elliptic cone's stick/slip map | Todorov's extension (projection onto the ellipse) |
//!
//! The residual stays eq. 31/32 with `F_u` stacked block by block, and the Jacobian eq. 34
//! with `F' = dF_u/dz` block diagonal, one `rows x rows` block per constraint (eq. 35 for the
//! Coulomb contact, the map's own `df/dx` otherwise). Choices, and why:
//!
//! * Equality rows stay the paper's bilateral `p_b` rather than Todorov's equality map
//!   (`f = -z`, `v = 0`): the paper's split, and the same answers.
//! * A problem whose non-equality blocks are all Coulomb contacts keeps the paper's 3-vector
//!   code (to the bit and as fast); any other block puts the whole problem on the block path,
//!   decided once at build ([`ImplicitMncp::is_general`]).
//! * The non-smooth edges declared to Todorov's driver are each block's: the plane `z_n = 0`,
//!   the cone (the elliptic one for per-row coefficients, curved and projected onto), and a
//!   friction loss's `abs(z) = f_max`; an equality has none.
//! * PLM's projection stays the identity: every `z` is unconstrained on every kind.
//! * Starts and warm states: the sticking start (every row at zero velocity, `z = -r`) and one
//!   number per row in the problem's order, on every kind as on the Coulomb contact.
//!
//! # Frames
//!
//! The paper orders a contact's rows normal last, `[f, o, n]`. The MLCP's unknowns are
//! `beta_(i) = [F_n(i), beta_1(i), .., beta_nf(i)]` (eq. 15), normal first in the paper too, so
//! they need no conversion. The MNCP's unknowns are Todorov's `x` in this project's order,
//! normal first (`[z_n, z_f, z_o]`); [`ImplicitMncp::to_paper_order`] and
//! [`ImplicitMncp::from_paper_order`] convert to the paper's `[z_f, z_o, z_n]` with
//! [`contactlab_core::frame`].
//!
//! # Choices where the paper is silent
//!
//! * The FB kink `z_i = f_i = 0` (generic at this MLCP's solutions: every unused friction
//!   direction of a sticking contact, the `sigma` row of a separating one, and `z = 0`): the
//!   Jacobian row is the limit along `e_i` ([`KinkRule::DirectionalLimit`]), whose diagonal is
//!   the paper's; the paper's printed zero off-diagonal is available as
//!   [`KinkRule::PaperPrinted`] but is not a generalized-Jacobian element.
//! * `phi_FB` is evaluated in the rationalized form where `a + b > 0` (same function, no
//!   cancellation; see [`fischer_burmeister`]).
//! * Directions: [`Directions`] (angle offsets per contact; exact axes at quarter turns).
//! * PLM's feasible set: the MCP box (`beta_, sigma >= 0`, `p_b` free) for the MLCP; none
//!   (identity projection) for the MNCP, whose unknowns are free by construction.
//! * Stopping: [`paper_options`] sets only the paper's `psi < 1e-30`; core's stationarity and
//!   step tests and iteration budget stay (the paper states none). `1e-30` is at the rounding
//!   floor: some runs end one step short of it as `local_minimum` at `psi ~ 1e-29`, with the
//!   impulses exact to rounding.

use contactlab_core::drivers::{LevenbergMarquardt, ProjectedLevenbergMarquardt};
use contactlab_core::SolveOptions;

mod directions;
mod error;
mod mlcp;
mod mncp;
mod mncp_blocks;
pub mod plugin;
mod pyramids;
mod system;
#[cfg(test)]
mod tests;

pub use directions::Directions;
pub use error::MylapilliError;
pub use mlcp::{
    fischer_burmeister, fischer_burmeister_gradient, mlcp_sensitivity, KinkRule, MlcpFb,
};
pub use mncp::ImplicitMncp;
pub use plugin::{MlcpFbFormulation, MncpFormulation};

/// The paper's stopping rule: `psi = |phi|^2 / 2 < 1e-30` (both algorithm boxes).
pub const PAPER_PSI_TOL: f64 = 1e-30;

/// [`SolveOptions`] with the paper's stopping rule: core's drivers stop on `|F|_2 <= tol`, and
/// `psi < 1e-30` is `|F|_2 < sqrt(2e-30)`; every other field keeps core's default (the paper
/// gives no iteration budget and no stagnation or stationarity tests).
pub fn paper_options() -> SolveOptions {
    SolveOptions {
        stop_tol: (2.0 * PAPER_PSI_TOL).sqrt(),
        ..SolveOptions::default()
    }
}

/// The paper's regular Levenberg-Marquardt (RLM box): `lambda0 = 1e-3`, `lambda_step = 20`,
/// `r_min = 0.3`, `r_max = 0.8`, accept when `r > 0`, `lambda_min = 1e-25`.
///
/// Core's `LevenbergMarquardt::default()` has the same values (checked by a test); they are set
/// here explicitly so that this helper stays the paper's if core's defaults change.
/// `lambda_max` (core's own safeguard, `1e30`) is kept.
pub fn paper_rlm() -> LevenbergMarquardt {
    let mut lm = LevenbergMarquardt::default();
    lm.lambda0 = 1e-3;
    lm.factor = 20.0;
    lm.r_low = 0.3;
    lm.r_high = 0.8;
    lm.r_accept = 0.0;
    lm.lambda_min = 1e-25;
    lm
}

/// The paper's projected Levenberg-Marquardt (PLM box): `lambda_LM = 1e-16`, with the
/// non-monotone line search and watchdog of core's driver (whose memory, watchdog length and
/// Armijo constants come from Kanzow and Petra's LMMCP; the paper gives none).
pub fn paper_plm() -> ProjectedLevenbergMarquardt {
    let mut plm = ProjectedLevenbergMarquardt::default();
    plm.lambda = 1e-16;
    plm
}
