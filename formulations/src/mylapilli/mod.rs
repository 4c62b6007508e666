//! Mylapilli and Jain 2014, "Evaluation of complementarity techniques for minimal coordinate
//! contact dynamics" (ASME IDETC, DETC2014-34322): the two formulations of the paper.
//!
//! * [`MlcpFb`]: the mixed LCP with a polyhedral friction cone of `n_f` directions per contact
//!   (eqs. 14-22), size `n_b + n_u (n_f + 2)`, recast as the non-smooth equations `phi(z) = 0`
//!   with the Fischer-Burmeister function (eq. 24) on the complementarity rows and `phi = -f`
//!   on the equality rows (the MCP variant of Ferris, Kanzow and Munson the paper cites), and
//!   the paper's Jacobian (section "Casting the MLCP as an optimization problem").
//! * [`ImplicitMncp`]: the implicit MNCP (eqs. 26-35): Todorov's implicit maps per contact
//!   (reused from [`crate::todorov`]) plus the bilateral impulses `p_b`, residual eq. 31/32 and
//!   Jacobian eq. 34/35.
//!
//! Both implement [`contactlab_core::Residual`] and [`contactlab_core::ProjectedResidual`], so
//! every least-squares driver of `contactlab_core::drivers` runs them. The paper's own two
//! optimizers are core's [`LevenbergMarquardt`] (RLM) and [`ProjectedLevenbergMarquardt`]
//! (PLM); [`paper_rlm`], [`paper_plm`] and [`paper_options`] build them with the paper's
//! parameters (stop at `psi < 1e-30`).
//!
//! # Input
//!
//! A local contact problem `u = W r + q` ([`LocalProblem`](contactlab_core::LocalProblem), three rows per contact, **normal
//! first** `[n, t1, t2]` as everywhere in this project), the friction directions
//! ([`Directions`]: `d_j` at angle `theta0_i + 2 pi j / n_f` in the `(t1, t2)` plane of contact
//! `i`) and optionally a block of `n_b` bilateral (equality) rows ([`Bilateral`]):
//!
//! ```text
//! [u_b]   [W_bb   W_bu] [p_b]   [q_b]
//! [u  ] = [W_bu'  W   ] [r  ] + [q  ],      u_b = 0,  p_b free
//! ```
//!
//! which is eq. 22's `Omega_b Lambda Omega_b' = W_bb`, `Omega_b Lambda Omega_u' = W_bu`,
//! `q_b = alpha_b^f dt`, `q = alpha_u^f dt + v_u^-` in the paper's notation.
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
//! * The way back from `z` to `r` is eq. 19 ([`MlcpFb::impulse`]); the way from `r` to `z` (warm
//!   starts) takes the two directions bracketing `r_t` and the least feasible `sigma`
//!   ([`MlcpFb::unknowns_from_impulse`]).
//! * PLM's feasible set: the MCP box (`beta_, sigma >= 0`, `p_b` free) for the MLCP; none
//!   (identity projection) for the MNCP, whose unknowns are free by construction.
//! * Stopping: [`paper_options`] sets only the paper's `psi < 1e-30`; core's stationarity and
//!   step tests and iteration budget stay (the paper states none). `1e-30` is at the rounding
//!   floor: some runs end one step short of it as `local_minimum` at `psi ~ 1e-29`, with the
//!   impulses exact to rounding.

use contactlab_core::drivers::{LevenbergMarquardt, ProjectedLevenbergMarquardt};
use contactlab_core::SolveOptions;

mod bilateral;
mod directions;
mod error;
mod mlcp;
mod mncp;
pub mod plugin;
#[cfg(test)]
mod tests;

pub use bilateral::Bilateral;
pub use directions::Directions;
pub use error::MylapilliError;
pub use mlcp::{fischer_burmeister, fischer_burmeister_gradient, KinkRule, MlcpFb};
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
