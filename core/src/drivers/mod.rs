//! Drivers (optimizers) on argmin's `Solver` trait.
//!
//! argmin supplies the framework (the [`Executor`] loop, [`IterState`], key-value logging,
//! observers, time-outs and evaluation counts); the linear algebra is faer 0.24 (argmin's own
//! Gauss-Newton and dogleg invert dense matrices and its math backends stop at faer 0.23, see
//! `shared/STACK.md`).
//!
//! Least squares (`min psi(x) = |F(x)|^2 / 2` for a [`Residual`] `F`), all run through
//! [`solve_least_squares`]:
//! - [`GaussNewtonLs`]: Gauss-Newton with Armijo backtracking (Nocedal and Wright, ch. 10.3);
//! - [`LevenbergMarquardt`]: Mylapilli and Jain's regular LM (RLM);
//! - [`ProjectedLevenbergMarquardt`]: Kanzow and Petra's projected LM (PLM) for a
//!   [`ProjectedResidual`](crate::ProjectedResidual);
//! - [`Dogleg`]: Powell's dogleg trust region (Nocedal and Wright, sec. 4.1);
//! - [`TrustRegionSteihaug`]: trust region with Steihaug's truncated CG (Nocedal and Wright,
//!   Alg. 7.2).
//!
//! Convex merits ([`Merit`](crate::Merit)) run through [`solve_merit`] with [`NewtonMerit`].
//!
//! Conventions shared by every driver:
//! - the stopping rules come from [`SolveOptions`] through [`Tolerances`], which
//!   [`solve_least_squares`] stores in the [`LeastSquares`] problem before the run and the
//!   drivers read in `init`;
//! - one argmin iteration is one trial step, accepted or not; a rejected trial (LM, trust
//!   region) is an iteration whose `step_kind` is `"rejected"`, so iteration counts compare
//!   linear solves across drivers;
//! - the solution is the last accepted iterate.

use argmin::core::{CostFunction, Error, IterState, Jacobian, Operator, Solver};
use faer::Mat;

use crate::{CoreError, Residual, Solution, SolveOptions};

pub(crate) mod common;
mod dogleg;
pub mod execute;
mod gauss_newton;
mod levenberg_marquardt;
mod newton_merit;
pub mod pgs;
mod projected_lm;
mod trust_region;

pub use common::{Armijo, RadiusRule};
pub use dogleg::Dogleg;
pub use execute::execute;
pub use gauss_newton::GaussNewtonLs;
pub use levenberg_marquardt::LevenbergMarquardt;
pub use newton_merit::{solve_merit, ExactLineSearch, MeritProblem, MeritState, NewtonMerit};
pub use projected_lm::ProjectedLevenbergMarquardt;
pub use trust_region::TrustRegionSteihaug;

/// argmin state of the least-squares drivers: parameter `x`, gradient `J'F`, no Jacobian or
/// Hessian slot (drivers keep the Jacobian themselves), residuals `F`, cost `|F|^2/2`.
pub type LsState = IterState<Vec<f64>, Vec<f64>, (), (), Vec<f64>, f64>;

/// The stopping rules of [`SolveOptions`] a driver needs, without the budgets the executor
/// enforces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// Converged when the residual measure is at most this.
    pub tol: f64,
    /// Local minimum when the merit gradient norm is at most this (and not converged).
    pub grad_tol: f64,
    /// Stagnated when a step changes no component by more than `step_tol * (1 + |x|_inf)`.
    pub step_tol: f64,
}

impl Default for Tolerances {
    /// The values of [`SolveOptions::default`].
    fn default() -> Self {
        Tolerances::from(&SolveOptions::default())
    }
}

impl From<&SolveOptions> for Tolerances {
    fn from(o: &SolveOptions) -> Self {
        Tolerances {
            tol: o.tol,
            grad_tol: o.grad_tol,
            step_tol: o.step_tol,
        }
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
        Ok(common::merit_of(&self.apply(x)?))
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
/// The solver runs in an argmin [`Executor`] with `opts.max_iter` and `opts.timeout`, reads
/// `opts.tol`, `opts.grad_tol` and `opts.step_tol` from the [`LeastSquares`] problem, and a
/// [`TraceObserver`] records one trace row for the initial point and one per iteration.
/// Running out of iterations with `|F| <= opts.tol` counts as converged; a non-finite final
/// iterate or merit is [`Status::NotFinite`].
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
    let tol = opts.tol;
    execute(problem, solver, x0, opts, |state: &LsState| {
        (2.0 * state.get_cost()).sqrt() <= tol
    })
}
