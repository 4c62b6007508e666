//! The notebook DSL: a short typed chain from a problem to a solved, traced result.
//!
//! ```
//! use contactlab_core::{LocalProblem, Matrix, Status};
//! use contactlab_lab::study::{Study, TraceFrame};
//! use contactlab_formulations::{ImplicitNcpFormulation, Todorov};
//!
//! let problem = LocalProblem::coulomb(
//!     Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap(),
//!     vec![-1.0, 3.0, 0.0],
//!     &[0.5],
//! );
//! let out = Study::on(&problem)
//!     .formulation(ImplicitNcpFormulation::default())
//!     .driver(Todorov::default())
//!     .tol(1e-8)
//!     .time_limit(1.0)
//!     .run()
//!     .unwrap();
//! assert_eq!(out.status, Status::Converged);
//! assert!((out.r[1] + 0.5).abs() < 1e-8); // sliding: friction mu r_n against the slip
//! let trace = out.trace_frame().unwrap(); // iter, merit, step_kind, lambda, ...
//! assert_eq!(trace.height() as u64, out.iterations + 1);
//! ```
//!
//! Names resolve at compile time: `driver(D)` then `run()` compiles only when `D` can solve
//! what the formulation builds (`D: Driver<F::Built>`), so a pair that cannot run is a compile
//! error here and a refusal with a reason in the registry:
//!
//! ```compile_fail
//! use contactlab_core::{LocalProblem, Matrix};
//! use contactlab_lab::study::Study;
//! use contactlab_formulations::{MlcpFbFormulation, Todorov};
//! let problem = LocalProblem::coulomb(Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(), vec![-1.0, 0.0, 0.0], &[0.5]);
//! // The FB-MLCP is not a NonSmoothResidual: Todorov's driver cannot take it.
//! let _ = Study::on(&problem).formulation(MlcpFbFormulation::default()).driver(Todorov::default()).run();
//! ```
//!
//! A formulation written in a notebook cell is any type implementing
//! [`contactlab_core::Formulation`]; for a residual over the impulses, wrap its
//! constructor in [`Custom`] and every generic driver runs it with no change to the crates.

use std::time::Duration;

use contactlab_core::plugin::{judge, solve_formulation, Driver, Formulation, Init, Model};
use std::borrow::Cow;

use contactlab_core::{
    CoreError, GeneralizedProblem, LocalProblem, LocalSolve, Residual, SolveOptions, StepProblem,
    Trace,
};
use polars::prelude::{DataFrame, PolarsResult};

/// A solve being set up: the problem, then a formulation, a driver and budgets.
#[derive(Debug, Clone)]
pub struct Study<'p, F = (), D = ()> {
    problem: Cow<'p, StepProblem>,
    formulation: F,
    driver: D,
    options: SolveOptions,
    warm: Option<Vec<f64>>,
    zero_start: bool,
}

/// What a study can be run on: a step problem, or either of its forms.
pub trait StudyProblem<'p> {
    /// As a step problem.
    fn step_problem(self) -> Cow<'p, StepProblem>;
}

impl<'p> StudyProblem<'p> for &'p StepProblem {
    fn step_problem(self) -> Cow<'p, StepProblem> {
        Cow::Borrowed(self)
    }
}

impl<'p> StudyProblem<'p> for &LocalProblem {
    fn step_problem(self) -> Cow<'p, StepProblem> {
        Cow::Owned(StepProblem::from(self.clone()))
    }
}

impl<'p> StudyProblem<'p> for &GeneralizedProblem {
    fn step_problem(self) -> Cow<'p, StepProblem> {
        Cow::Owned(StepProblem::from(self.clone()))
    }
}

impl<'p> Study<'p> {
    /// Starts a study of `problem` (a [`StepProblem`], [`LocalProblem`] or
    /// [`GeneralizedProblem`]; tolerance `1e-8`, 100 iterations, no time limit).
    pub fn on(problem: impl StudyProblem<'p>) -> Study<'p> {
        Study {
            problem: problem.step_problem(),
            formulation: (),
            driver: (),
            options: SolveOptions {
                stop_tol: 1e-8,
                ..SolveOptions::default()
            },
            warm: None,
            zero_start: false,
        }
    }
}

impl<'p, F, D> Study<'p, F, D> {
    /// The formulation (a plugin struct with its options, or a [`Custom`] one).
    pub fn formulation<G: Formulation>(self, formulation: G) -> Study<'p, G, D> {
        Study {
            problem: self.problem,
            formulation,
            driver: self.driver,
            options: self.options,
            warm: self.warm,
            zero_start: self.zero_start,
        }
    }

    /// The driver (optimizer) with its options.
    pub fn driver<E>(self, driver: E) -> Study<'p, F, E> {
        Study {
            problem: self.problem,
            formulation: self.formulation,
            driver,
            options: self.options,
            warm: self.warm,
            zero_start: self.zero_start,
        }
    }

    /// The tolerance: the driver's and the bound on the natural-map residual for `converged`.
    pub fn tol(mut self, tol: f64) -> Self {
        self.options.stop_tol = tol;
        self
    }

    /// The iteration budget.
    pub fn max_iter(mut self, max_iter: u64) -> Self {
        self.options.max_iter = max_iter;
        self
    }

    /// The wall-clock limit of the solve, seconds.
    pub fn time_limit(mut self, seconds: f64) -> Self {
        self.options.time_limit = Some(Duration::from_secs_f64(seconds.max(0.0)));
        self
    }

    /// Starts from all-zero unknowns instead of the formulation's own start.
    pub fn zero_start(mut self) -> Self {
        self.zero_start = true;
        self
    }

    /// Starts from a previous solve's warm state ([`LocalSolve::warm`]).
    pub fn warm(mut self, warm: Vec<f64>) -> Self {
        self.warm = Some(warm);
        self
    }
}

impl<F: Formulation, D: Driver<F::Built>> Study<'_, F, D> {
    /// Solves, judges the impulses by the shared ruler and returns the result.
    pub fn run(&self) -> Result<LocalSolve, CoreError> {
        let init = match (&self.warm, self.zero_start) {
            (Some(w), _) => Init::Warm(w),
            (None, true) => Init::Zero,
            (None, false) => Init::Default,
        };
        let out = solve_formulation(
            &self.formulation,
            &self.problem,
            init,
            &self.options,
            |built, x0, o| self.driver.solve(built, x0, o),
        )?;
        judge(&self.problem, out, self.options.stop_tol)
    }
}

/// A formulation from a residual's constructor: its unknowns are the impulses (three per
/// contact), it starts at zero, and its model is unspecified. For a residual written in a
/// notebook cell: `Study::on(&p).formulation(Custom::new(|p| Ok(Mine::new(p))))`.
pub struct Custom<B, G> {
    build: G,
    _built: std::marker::PhantomData<fn() -> B>,
}

impl<B, G: Clone> Clone for Custom<B, G> {
    fn clone(&self) -> Self {
        Custom {
            build: self.build.clone(),
            _built: std::marker::PhantomData,
        }
    }
}

impl<B, G> Custom<B, G>
where
    B: Residual,
    G: Fn(&LocalProblem) -> Result<B, CoreError>,
{
    /// Wraps `build`.
    pub fn new(build: G) -> Self {
        Custom {
            build,
            _built: std::marker::PhantomData,
        }
    }
}

impl<B, G> Formulation for Custom<B, G>
where
    B: Residual,
    G: Fn(&LocalProblem) -> Result<B, CoreError>,
{
    type Built = B;

    fn model(&self) -> Model {
        Model::Unspecified
    }

    fn build(&self, problem: &StepProblem) -> Result<B, CoreError> {
        (self.build)(problem.local()?)
    }

    fn num_unknowns(&self, built: &B) -> usize {
        built.num_unknowns()
    }

    fn impulses(&self, _built: &B, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

/// A trace as a polars DataFrame (one row per iteration; see
/// [`crate::frames::trace_to_dataframe`]).
pub trait TraceFrame {
    /// The DataFrame.
    fn trace_frame(&self) -> PolarsResult<DataFrame>;
}

impl TraceFrame for Trace {
    fn trace_frame(&self) -> PolarsResult<DataFrame> {
        crate::frames::trace_to_dataframe(self)
    }
}

impl TraceFrame for LocalSolve {
    fn trace_frame(&self) -> PolarsResult<DataFrame> {
        crate::frames::trace_to_dataframe(&self.solution.trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::drivers::{
        Dogleg, GaussNewtonLs, LevenbergMarquardt, TrustRegionSteihaug,
    };
    use contactlab_core::{Matrix, Status};
    use faer::MatMut;

    /// A residual a user might write in a cell: the contact velocity `u = W r + q` itself, for
    /// problems whose contacts all stick (then `u = 0` is the Coulomb solution), with a cubic
    /// term `r^3 / 10` on the tangents so the drivers have a nonlinear system to solve (zero
    /// at the solution, where the tangential impulses vanish).
    struct Velocity {
        w: faer::Mat<f64>,
        q: Vec<f64>,
    }

    impl Residual for Velocity {
        fn num_unknowns(&self) -> usize {
            self.q.len()
        }
        fn num_residuals(&self) -> usize {
            self.q.len()
        }
        fn residual(&self, x: &[f64], out: &mut [f64]) {
            for (i, o) in out.iter_mut().enumerate() {
                let cubic = if i % 3 == 0 { 0.0 } else { 0.1 * x[i].powi(3) };
                *o = (0..x.len()).map(|j| self.w[(i, j)] * x[j]).sum::<f64>() + self.q[i] + cubic;
            }
        }
        fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
            for i in 0..x.len() {
                for j in 0..x.len() {
                    out[(i, j)] = self.w[(i, j)];
                }
                if i % 3 != 0 {
                    out[(i, i)] += 0.3 * x[i] * x[i];
                }
            }
        }
    }

    /// Two pressed contacts with no tangential load: both stick at `r = (0.4, 0, 0, 0.4, 0, 0)`.
    fn pressed() -> LocalProblem {
        #[rustfmt::skip]
        let w = [
            2., 0., 0., 0.5, 0., 0.,
            0., 1., 0., 0., 0., 0.,
            0., 0., 1., 0., 0., 0.,
            0.5, 0., 0., 2., 0., 0.,
            0., 0., 0., 0., 1., 0.,
            0., 0., 0., 0., 0., 1.,
        ];
        LocalProblem::coulomb(
            Matrix::from_row_major("W", 6, 6, &w).unwrap(),
            vec![-1.0, 0.0, 0.0, -1.0, 0.0, 0.0],
            &[0.5, 0.5],
        )
    }

    #[test]
    fn a_residual_written_in_a_cell_runs_under_every_generic_driver() {
        let p = pressed();
        let mine = || {
            Custom::new(|p: &LocalProblem| {
                Ok(Velocity {
                    w: p.w.to_dense(),
                    q: p.q.clone(),
                })
            })
        };
        let check = |s: LocalSolve| {
            assert_eq!(s.status, Status::Converged, "{:?}", s.solution.trace);
            assert!(
                (s.r[0] - 0.4).abs() < 1e-8 && (s.r[3] - 0.4).abs() < 1e-8,
                "{:?}",
                s.r
            );
        };
        let study = Study::on(&p).formulation(mine()).max_iter(200);
        check(study.clone_with(GaussNewtonLs::default()).run().unwrap());
        check(
            study
                .clone_with(LevenbergMarquardt::default())
                .run()
                .unwrap(),
        );
        check(study.clone_with(Dogleg::default()).run().unwrap());
        check(
            study
                .clone_with(TrustRegionSteihaug::default())
                .run()
                .unwrap(),
        );
    }

    impl<'p, F: Clone, D> Study<'p, F, D> {
        fn clone_with<E>(&self, d: E) -> Study<'p, F, E> {
            Study {
                problem: self.problem.clone(),
                formulation: self.formulation.clone(),
                driver: d,
                options: self.options.clone(),
                warm: self.warm.clone(),
                zero_start: self.zero_start,
            }
        }
    }

    #[test]
    fn a_time_limit_reaches_the_solve() {
        let p = pressed();
        let s = Study::on(&p)
            .formulation(contactlab_core::plugin::Coulomb {})
            .driver(contactlab_core::drivers::pgs::ProjectedGaussSeidel::default())
            .time_limit(0.0)
            .run()
            .unwrap();
        assert_eq!(s.solver_status, Status::Timeout);
    }
}
