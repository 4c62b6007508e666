//! The least-squares residual trait: `F: R^n -> R^m`, merit `psi(x) = |F(x)|^2 / 2`.
//!
//! Every Gauss-Newton-type driver (Gauss-Newton with line search, Levenberg-Marquardt, dogleg,
//! trust region) runs any [`Residual`]. Non-smooth formulations (Todorov's implicit NCP,
//! Erleben's min-map, Fischer-Burmeister) return *an element of the generalized (Clarke or
//! B-) Jacobian* from [`Residual::jacobian`]; drivers that exploit the kinks ask for the
//! extra hooks of [`NonSmoothResidual`]; the projected LM of Kanzow and Petra asks for a
//! feasible set through [`ProjectedResidual`].

use faer::MatMut;

/// A residual map `F: R^n -> R^m` whose zeros are the solutions sought.
pub trait Residual {
    /// `n`, the number of unknowns.
    fn num_unknowns(&self) -> usize;

    /// `m`, the number of residual components.
    fn num_residuals(&self) -> usize;

    /// Writes `F(x)` into `out` (length `m`).
    fn residual(&self, x: &[f64], out: &mut [f64]);

    /// Writes an element of the generalized Jacobian of `F` at `x` into `out` (`m x n`),
    /// overwriting every entry. On a kink, any element is allowed; drivers that care use
    /// [`NonSmoothResidual::jacobian_along`].
    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>);
}

/// The hooks a non-smooth driver needs: where the kinks are along a segment, and which
/// Jacobian to take on a kink.
pub trait NonSmoothResidual: Residual {
    /// Appends to `out` the parameters `t` in `(0, 1]`, in ascending order, at which the
    /// segment `x + t dx` crosses a kink of `F` (an edge where the Jacobian jumps).
    fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>);

    /// Writes the Jacobian of the smooth piece entered when leaving `x` along `dx`, i.e. the
    /// limit of `J(x + eps dx)` as `eps -> 0+` (Todorov 2010, eqs. 25-26).
    fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>);
}

/// A residual whose unknowns are restricted to a closed convex set `X`
/// (Kanzow and Petra's constrained equations `F(x) = 0, x in X`).
pub trait ProjectedResidual: Residual {
    /// Replaces `x` by its Euclidean projection onto `X`.
    fn project(&self, x: &mut [f64]);
}
