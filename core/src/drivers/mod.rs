//! Drivers (optimizers) on argmin's `Solver` trait.
//!
//! argmin supplies the framework (the [`Executor`](argmin::core::Executor) loop,
//! [`IterState`](argmin::core::IterState), key-value logging, observers, time-outs and
//! evaluation counts); the linear algebra is faer 0.24 (argmin's own
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
//! Convex merits ([`Merit`](crate::merit::Merit)) run through [`solve_merit`] with
//! [`NewtonMerit`] (Newton, exact line search) or [`Lbfgs`] (argmin's L-BFGS, Moré-Thuente line
//! search); conic programs ([`ConicProgram`](crate::conic_program::ConicProgram)) by
//! [`Clarabel`]'s interior point.
//!
//! Conventions shared by every driver:
//! - the stopping rules come from [`SolveOptions`] through [`Tolerances`], which
//!   [`solve_least_squares`] stores in the [`LeastSquares`] problem before the run and the
//!   drivers read in `init`;
//! - one argmin iteration is one trial step, accepted or not; a rejected trial (LM, trust
//!   region) is an iteration whose `step_kind` is `"rejected"`, so iteration counts compare
//!   linear solves across drivers;
//! - the solution is the last accepted iterate.
//!
//! This module only declares the drivers, re-exports them and registers them as plugins; what
//! they share lives beside them: [`Tolerances`] in `tolerances.rs`, the least-squares problem
//! and its state in `least_squares.rs`, the pieces of every driver in [`kit`].

use crate::error::CoreError;
use crate::residual::Residual;
use crate::result::{Solution, SolveOptions};

pub mod admm;
pub mod block_pgs;
mod clarabel;
mod dogleg;
pub mod execute;
mod gauss_newton;
pub mod kit;
mod lbfgs;
mod least_squares;
mod levenberg_marquardt;
pub mod newton_merit;
mod nncg;
pub mod pgs;
mod projected_lm;
pub mod sweep;
mod tolerances;
mod trust_region;

pub use self::admm::Admm;
pub use self::clarabel::Clarabel;
pub use dogleg::Dogleg;
pub use execute::{execute, execute_with_clock, Clock};
pub use gauss_newton::GaussNewtonLs;
pub use kit::{Armijo, RadiusRule};
pub use lbfgs::Lbfgs;
pub use least_squares::{solve_least_squares, LeastSquares, LsState};
pub use levenberg_marquardt::LevenbergMarquardt;
pub use newton_merit::{solve_merit, ExactLineSearch, MeritProblem, MeritState, NewtonMerit};
pub use projected_lm::ProjectedLevenbergMarquardt;
pub use tolerances::Tolerances;
pub use trust_region::TrustRegionSteihaug;

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

        /// The conic programs the formulations state (SAP's eq. 19) are of Coulomb contacts.
        const KINDS: &'static [&'static str] = crate::constraint::COULOMB_ONLY;
        const REFUSES: &'static str = "the conic programs the formulations state (SAP's eq. 19, \
             `castro/conic.rs`) have a second-order cone per Coulomb contact and no other set";
    }
}
