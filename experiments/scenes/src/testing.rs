//! The solvers the scenes' own tests advance their scenes with. The registry of solvers by name
//! lives in the lab crate, which depends on this one, so these tests build the few pairs they
//! need by type and run them through the same flow the registry uses: islands with block `W`
//! ([`solve_by_island`]), the formulation's solve ([`solve_formulation`]) and the shared ruler
//! ([`judge`]).

use contactlab_core::drivers::pgs::ProjectedGaussSeidel;
use contactlab_core::drivers::NewtonMerit;
use contactlab_core::plugin::{judge, solve_formulation, Coulomb, Driver, Formulation, Init};
use contactlab_core::{solve_by_island, Layout, LocalSolve, SolveOptions, StepProblem};
use contactlab_formulations::{ImplicitNcpFormulation, SapFormulation, Todorov};

/// A (formulation, optimizer) pair by its registry names with the budgets a test gives it.
#[derive(Debug, Clone)]
pub struct TestSolver {
    formulation: &'static str,
    optimizer: &'static str,
    options: SolveOptions,
}

impl TestSolver {
    /// `formulation + optimizer` at tolerance `tol` within `max_iter` iterations.
    pub fn new(
        formulation: &'static str,
        optimizer: &'static str,
        tol: f64,
        max_iter: u64,
    ) -> Self {
        TestSolver {
            formulation,
            optimizer,
            options: SolveOptions {
                stop_tol: tol,
                max_iter,
                ..SolveOptions::default()
            },
        }
    }

    /// With SAP's relative tolerance (eq. 26's `eps_r`).
    pub fn rel_tol(mut self, rel_tol: f64) -> Self {
        self.options.rel_tol = rel_tol;
        self
    }

    /// `formulation+optimizer`, as tables name it.
    pub fn name(&self) -> String {
        format!("{}+{}", self.formulation, self.optimizer)
    }

    /// Solves `problem` from the formulation's own start, or from `warm` (three numbers per
    /// contact, `NaN` where a contact has none), judged by the shared ruler.
    pub fn solve(&self, problem: &StepProblem, warm: Option<&[f64]>) -> LocalSolve {
        match (self.formulation, self.optimizer) {
            ("coulomb", "pgs") => {
                self.run(&Coulomb {}, &ProjectedGaussSeidel::default(), problem, warm)
            }
            ("implicit-ncp", "todorov") => self.run(
                &ImplicitNcpFormulation::default(),
                &Todorov::default(),
                problem,
                warm,
            ),
            ("sap", "newton-merit") => self.run(
                &SapFormulation::default(),
                &NewtonMerit::default(),
                problem,
                warm,
            ),
            (f, o) => panic!("the scenes' tests have no `{f}+{o}`"),
        }
    }

    fn run<F: Formulation, D: Driver<F::Built>>(
        &self,
        formulation: &F,
        driver: &D,
        problem: &StepProblem,
        warm: Option<&[f64]>,
    ) -> LocalSolve {
        let init = warm.map_or(Init::Default, Init::Warm);
        let out = solve_by_island(
            problem,
            Layout::default(),
            init,
            &self.options,
            |p, i, o| solve_formulation(formulation, p, i, o, |b, x0, o| driver.solve(b, x0, o)),
        )
        .expect("the solve runs");
        judge(problem, out, self.options.stop_tol).expect("the ruler measures the answer")
    }
}
