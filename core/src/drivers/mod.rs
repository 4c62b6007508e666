//! Drivers (optimizers) on argmin's `Solver` trait.
//!
//! argmin supplies the framework (the [`Executor`](argmin::core::Executor) loop, [`IterState`], key-value logging,
//! observers, time-outs and evaluation counts); the linear algebra is faer 0.24 (argmin's own
//! Gauss-Newton and dogleg invert dense matrices and its math backends stop at faer 0.23, see
//! `docs/STACK.md`).
//!
//! Least squares (`min psi(x) = |F(x)|^2 / 2` for a [`Residual`] `F`), all run through
//! [`solve_least_squares`]:
//! - [`GaussNewtonLs`]: Gauss-Newton with Armijo backtracking (Nocedal and Wright, ch. 10.3);
//! - [`LevenbergMarquardt`]: Mylapilli and Jain's regular LM (RLM);
//! - [`ProjectedLevenbergMarquardt`]: Kanzow and Petra's projected LM (PLM) for a
//!   [`ProjectedResidual`](crate::residual::ProjectedResidual);
//! - [`Dogleg`]: Powell's dogleg trust region (Nocedal and Wright, sec. 4.1);
//! - [`TrustRegionSteihaug`]: trust region with Steihaug's truncated CG (Nocedal and Wright,
//!   Alg. 7.2).
//!
//! Convex merits ([`Merit`](crate::merit::Merit)) run through [`solve_merit`] with [`NewtonMerit`]
//! (Newton, exact line search) or [`Lbfgs`] (argmin's L-BFGS, Moré-Thuente line search);
//! conic programs ([`ConicProgram`](crate::conic_program::ConicProgram)) by [`Clarabel`]'s interior point.
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

use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::residual::Residual;
use crate::result::{Solution, SolveOptions};

pub mod admm;
mod clarabel;
mod dogleg;
pub mod execute;
mod gauss_newton;
pub mod kit;
mod lbfgs;
mod levenberg_marquardt;
pub mod newton_merit;
pub mod pgs;
mod projected_lm;
pub mod sweep;
mod trust_region;

pub use self::admm::Admm;
pub use self::clarabel::Clarabel;
pub use dogleg::Dogleg;
pub use execute::{execute, execute_with_clock, Clock};
pub use gauss_newton::GaussNewtonLs;
pub use kit::{Armijo, RadiusRule};
pub use lbfgs::Lbfgs;
pub use levenberg_marquardt::LevenbergMarquardt;
pub use newton_merit::{solve_merit, ExactLineSearch, MeritProblem, MeritState, NewtonMerit};
pub use projected_lm::ProjectedLevenbergMarquardt;
pub use trust_region::TrustRegionSteihaug;

/// argmin state of the least-squares drivers: parameter `x`, gradient `J'F`, no Jacobian or
/// Hessian slot (drivers keep the Jacobian themselves), residuals `F`, cost `|F|^2/2`.
pub type LsState = IterState<Vec<f64>, Vec<f64>, (), (), Vec<f64>, f64>;

/// The stopping rules of [`SolveOptions`] a driver needs, and the solve's [`Deadline`] for
/// checks inside its loops (the executor enforces the iteration budget).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// Converged when the residual measure is at most this.
    pub tol: f64,
    /// Relative tolerance on a merit's own scale ([`Optimality`](crate::merit::Optimality)).
    pub rel_tol: f64,
    /// Local minimum when the merit gradient norm is at most this (and not converged).
    pub grad_tol: f64,
    /// Stagnated when a step changes no component by more than `step_tol * (1 + |x|_inf)`.
    pub step_tol: f64,
    /// When the solve's time limit runs out.
    pub deadline: Deadline,
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
            rel_tol: o.rel_tol,
            grad_tol: o.grad_tol,
            step_tol: o.step_tol,
            deadline: Deadline::after(o.time_limit),
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
        Ok(kit::merit_of(&self.apply(x)?))
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
/// `opts.tol`, `opts.grad_tol` and `opts.step_tol` from the [`LeastSquares`] problem, and a
/// [`TraceObserver`](crate::result::TraceObserver) records one trace row for the initial point and one per iteration.
/// Running out of iterations with `|F| <= opts.tol` counts as converged; a non-finite final
/// iterate or merit is [`Status::NotFinite`](crate::result::Status::NotFinite).
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

/// The least-squares drivers as [`Driver`]s over any residual they can take, and as named
/// plugins.
mod plugins {
    use super::*;
    use crate::merit::Merit;
    use crate::plugin::{Driver, DriverPlugin, NeedsMerit, NeedsProjected, NeedsResidual};
    use crate::residual::ProjectedResidual;

    macro_rules! least_squares_driver {
        ($t:ty, $bound:path, $needs:ty, $name:literal, $desc:literal) => {
            impl<R: $bound + ?Sized> Driver<R> for $t {
                fn solve(
                    &self,
                    residual: &R,
                    x0: Vec<f64>,
                    opts: &SolveOptions,
                ) -> Result<Solution, CoreError> {
                    solve_least_squares(residual, self.clone(), x0, opts)
                }
            }
            impl DriverPlugin for $t {
                type Needs = $needs;
                const NAME: &'static str = $name;
                const DESCRIPTION: &'static str = $desc;
            }
        };
    }

    least_squares_driver!(
        GaussNewtonLs,
        Residual,
        NeedsResidual,
        "gauss-newton",
        "Gauss-Newton with Armijo backtracking (Nocedal and Wright, sec. 10.3)"
    );
    least_squares_driver!(
        LevenbergMarquardt,
        Residual,
        NeedsResidual,
        "lm",
        "regular Levenberg-Marquardt, Mylapilli and Jain's lambda schedule"
    );
    least_squares_driver!(
        ProjectedLevenbergMarquardt,
        ProjectedResidual,
        NeedsProjected,
        "plm",
        "projected Levenberg-Marquardt (Kanzow and Petra), non-monotone line search with watchdog"
    );
    least_squares_driver!(
        Dogleg,
        Residual,
        NeedsResidual,
        "dogleg",
        "Powell's dogleg trust region on the Gauss-Newton model"
    );
    least_squares_driver!(
        TrustRegionSteihaug,
        Residual,
        NeedsResidual,
        "trust-region",
        "trust region with a Steihaug-CG subproblem"
    );

    macro_rules! merit_driver {
        ($t:ty, $name:literal, $desc:literal) => {
            impl<M: Merit + ?Sized> Driver<M> for $t {
                fn solve(
                    &self,
                    merit: &M,
                    x0: Vec<f64>,
                    opts: &SolveOptions,
                ) -> Result<Solution, CoreError> {
                    solve_merit(merit, self.clone(), x0, opts)
                }
            }
            impl DriverPlugin for $t {
                type Needs = NeedsMerit;
                const NAME: &'static str = $name;
                const DESCRIPTION: &'static str = $desc;
            }
        };
    }

    merit_driver!(
        NewtonMerit,
        "newton-merit",
        "Newton on a convex merit with an exact line search on dl/dalpha, Armijo fallback"
    );
    merit_driver!(
        Lbfgs,
        "lbfgs",
        "argmin's L-BFGS on a convex merit (Moré-Thuente line search), stopped by its optimality"
    );

    impl<C: crate::conic_program::ConicProgram + ?Sized> Driver<C> for Clarabel {
        fn solve(
            &self,
            program: &C,
            _x0: Vec<f64>,
            opts: &SolveOptions,
        ) -> Result<Solution, CoreError> {
            self.solve_program(program, opts)
        }
    }

    impl DriverPlugin for Clarabel {
        type Needs = crate::plugin::NeedsConic;
        const NAME: &'static str = "clarabel";
        const DESCRIPTION: &'static str =
            "Clarabel's interior-point method on a conic program (no warm start; time includes set-up)";

        fn check(&self) -> Result<(), CoreError> {
            Clarabel::check(self)
        }
    }
}
