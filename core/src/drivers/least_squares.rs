//! Least squares as an argmin problem: a [`Residual`] `F` wrapped as [`LeastSquares`]
//! (`F(x)`, the merit `|F|^2 / 2`, the Jacobian, and the [`Tolerances`] the drivers stop on),
//! the state [`LsState`] every least-squares driver keeps, and [`solve_least_squares`], the one
//! entry that runs any of them.

use argmin::core::{CostFunction, Error, IterState, Jacobian, Operator, Solver};
use faer::Mat;

use super::execute::execute;
use super::tolerances::Tolerances;
use crate::dense::dot;
use crate::error::CoreError;
use crate::residual::Residual;
use crate::result::{Solution, SolveOptions};

/// argmin state of the least-squares drivers: parameter `x`, gradient `J'F`, no Jacobian or
/// Hessian slot (drivers keep the Jacobian themselves), residuals `F`, cost `|F|^2/2`.
pub type LsState = IterState<Vec<f64>, Vec<f64>, (), (), Vec<f64>, f64>;

/// `psi = |F|^2 / 2`, or `+inf` when `F` has a non-finite entry, so that a trial point that
/// leaves the residual's domain is rejected like any point with a large merit.
pub fn merit_of(f: &[f64]) -> f64 {
    let psi = 0.5 * dot(f, f);
    if psi.is_finite() {
        psi
    } else {
        f64::INFINITY
    }
}

/// A [`Residual`] as an argmin problem: `apply` is `F(x)`, `cost` is `|F(x)|^2 / 2`,
/// `jacobian` is `J(x)`; it also carries the [`Tolerances`] the drivers stop on.
#[derive(Debug, Clone)]
pub struct LeastSquares<R> {
    /// The residual.
    pub residual: R,
    /// Stopping rules read by the drivers in `init`.
    pub tolerances: Tolerances,
}

impl<R: Residual> LeastSquares<R> {
    /// Wraps `residual` with the default tolerances.
    pub fn new(residual: R) -> Self {
        LeastSquares {
            residual,
            tolerances: Tolerances::default(),
        }
    }

    /// Wraps `residual` with the stopping rules of `opts`.
    pub fn with_options(residual: R, opts: &SolveOptions) -> Self {
        LeastSquares {
            residual,
            tolerances: Tolerances::from(opts),
        }
    }
}

impl<R: Residual> Operator for LeastSquares<R> {
    type Param = Vec<f64>;
    type Output = Vec<f64>;

    fn apply(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let mut f = vec![0.0; self.residual.num_residuals()];
        self.residual.residual(x, &mut f);
        Ok(f)
    }
}

impl<R: Residual> CostFunction for LeastSquares<R> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        Ok(merit_of(&self.apply(x)?))
    }
}

impl<R: Residual> Jacobian for LeastSquares<R> {
    type Param = Vec<f64>;
    type Jacobian = Mat<f64>;

    fn jacobian(&self, x: &Vec<f64>) -> Result<Mat<f64>, Error> {
        let mut j = Mat::zeros(self.residual.num_residuals(), self.residual.num_unknowns());
        self.residual.jacobian(x, j.as_mut());
        Ok(j)
    }
}

/// Solves `F(x) = 0` in the least-squares sense with `solver` from `x0`.
///
/// The solver runs in an argmin [`Executor`](argmin::core::Executor) with `opts.max_iter` and `opts.time_limit`, reads
/// `opts.stop_tol`, `opts.grad_tol` and `opts.step_tol` from the [`LeastSquares`] problem, and a
/// [`TraceObserver`](crate::result::TraceObserver) records one trace row for the initial point and one per iteration.
/// A run that uses up its iterations is `max_iterations`: every driver tests each accepted
/// point's stop measure ([`Residual::stop_measure`], `|F|` by default) when it accepts it, so a
/// point that passes has already stopped the run. A non-finite final iterate or merit is
/// [`Status::NotFinite`](crate::result::Status::NotFinite).
pub fn solve_least_squares<R, S>(
    residual: R,
    solver: S,
    x0: Vec<f64>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError>
where
    R: Residual,
    S: Solver<LeastSquares<R>, LsState>,
{
    let problem = LeastSquares::with_options(residual, opts);
    execute(problem, solver, x0, opts, |_: &LsState| false)
}
