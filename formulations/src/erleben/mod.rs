//! Erleben and Ortiz, "A Non-smooth Newton Method for Multibody Dynamics" (ICNAAM 2008): the
//! boxed LCP with friction-pyramid bounds, its min-map reformulation and the non-smooth Newton
//! driver.
//!
//! The local problem `u = W r + q` (normal first per contact, `[n, t1, t2]`) becomes the boxed
//! LCP of the paper's eq. 1 with `x = r`, `A = W`, `b = q` and variable bounds:
//!
//! * normal rows: `l = 0`, `u = +inf`;
//! * tangent rows: `l = -mu x_n`, `u = mu x_n` (a four-sided friction pyramid spanned by the
//!   contact's two tangent directions). To turn the pyramid's faces, solve the problem in
//!   turned tangent axes ([`MinMap::turned`]); [`MinMapFormulation`] does so for its options
//!   `theta0_deg` and `align_with_slip`.
//!
//! With `y = A x + b`, the min-map (eq. 5) is
//!
//! `H(x) = max(x - u(x), min(x - l(x), y))`, componentwise, and the merit is `theta = H'H / 2`.
//!
//! Each row of `H` is a selection of three affine pieces; [`Piece`] names the one that is
//! active, which is the index sets `L`, `A`, `U` of eq. 10. The generalized Jacobian element
//! of eq. 9 is, row by row: `e_i + mu_i e_n(i)` on `L`, row `i` of `A` on `A`, and
//! `e_i - mu_i e_n(i)` on `U` (`mu_i = 0` on normal rows, `n(i)` the row of the contact's
//! normal). Ties go to `A`, as in eq. 10.
//!
//! Where the paper's eq. 9 assumes `l(x) <= u(x)` (true when `x_n >= 0`), this module follows
//! the function itself: for `x_n < 0` the bounds cross, and a tangent row with `y > x - l` is
//! then `x - u` (not `x - l` as eq. 9 would say), so the Jacobian returned here is always the
//! derivative of the piece that [`MinMap::residual`](contactlab_core::Residual::residual)
//! evaluates. The two agree wherever `x_n >= 0`, which includes every solution and every PGS
//! iterate.
//!
//! ## Every constraint kind (our extension)
//!
//! The paper poses contacts only; its boxed LCP (eq. 1, bounds `l <= x <= u` per row) is what
//! every MuJoCo kind ([`contactlab_core::constraint`]) already is, so each block's rows get
//! their bounds ([`MinMap::bounds`]) and the min-map, its pieces, its Jacobian, the Schur
//! reduction and the PGS sweep take them as they are:
//!
//! | block | rows' `(l, u)` | `H_i` |
//! |---|---|---|
//! | equality (1, 3 or 6 rows) | `(-inf, +inf)` | `y_i` (always `A`) |
//! | limit; contact of condim 1 | `(0, +inf)` | as a normal row |
//! | friction loss | `(-f_max, f_max)` (constant) | eq. 5 with a constant box |
//! | contact of condim 3, 4, 6 | normal `(0, +inf)`; row `i` `(-mu_i x_n, mu_i x_n)` | eq. 5 |
//!
//! A contact's pyramid is the paper's extended row by row, `|x_i| <= mu_i x_n` with each
//! frictional row's own coefficient (anisotropic sliding, torsion, rolling): it is the box
//! approximation of MuJoCo's elliptic cone `sum_i (x_i / mu_i)^2 <= x_n^2`
//! ([`contactlab_core::elliptic_cone`]), as the paper's pyramid is of Coulomb's cone. A
//! constant-bound row in `L` or `U` has the Jacobian row `e_i` (no normal coupling), so the
//! Schur reduction's `D` stays unit lower triangular; an equality row is never in `L` or `U`,
//! and an infinite bound is simply never active (`x_i - l_i` is then absent from the pieces).
//! The solutions are judged by the pyramid model's ruler
//! ([`contactlab_core::metrics::pyramid_metrics_for`]), the same terms as the cone's on every
//! kind but a contact with friction. A problem of Coulomb contacts only keeps the paper's
//! layout, number for number.
//!
//! Turned pyramids on other kinds ([`turn`]): the options turn only a contact's isotropic
//! sliding pair (`mu_1 = mu_2`); a turn asked of a contact whose sliding pair is anisotropic is
//! refused by name, and every other row is left as it is.
//!
//! * [`MinMap`] (in `minmap.rs`) implements [`Residual`](contactlab_core::Residual),
//!   [`NonSmoothResidual`](contactlab_core::NonSmoothResidual) (kinks are the crossings of
//!   the three affine pieces along a segment) and
//!   [`ProjectedResidual`](contactlab_core::ProjectedResidual) (the solutions lie in
//!   the product of pyramids `{x_n >= 0, |x_t1| <= mu x_n, |x_t2| <= mu x_n}` and of the other
//!   blocks' sets, so the projected LM runs on it too).
//! * [`newton`] holds the paper's driver: Newton on the B-derivative with the Schur-complement
//!   reduction of eq. 11, Armijo back-tracking on `theta`, PGS warm start.
//! * [`generator`] makes the seeded random problems of the paper's Tables 1-2.

pub mod generator;
mod minmap;
pub mod newton;
pub mod plugin;
pub mod sensitivity;
pub mod turn;

#[cfg(test)]
mod tests;

pub use generator::{random_boxed_lcp, RandomProblemParams, PAPER_SIZES};
pub use minmap::{min_map_row, project_pyramid, MinMap, MinMapPoint, Piece};
pub use newton::{
    pgs_pyramid_sweep, solve_minmap_newton, solve_newton, ConvergenceMeasure, ErlebenNewton,
    LinearSolver, NewtonStep,
};
pub use plugin::MinMapFormulation;
