//! Clarabel, a primal-dual interior-point method for conic programs (Goulart and Chen 2024),
//! as a driver on any [`ConicProgram`].
//!
//! Castro et al. (sec. VI-A) measure SAP against interior-point methods (Gurobi and a geodesic
//! IPM) on its primal problem (eq. 19); this is that comparison with an open solver, in the
//! same process and on the same data. What an interior-point method cannot do: warm-start.
//! The starting point a caller passes is ignored (counter `warm_start_ignored = 1`), and the
//! reported time includes Clarabel's set-up (equilibration, KKT pattern and its symbolic
//! factorization), which it redoes for every problem.
//!
//! The time limit is ours, not Clarabel's: Clarabel's own `time_limit` counts from the start of
//! its iterations, after the set-up, so a limit passed to it let a large program's set-up run
//! past the caller's limit (measured: 1.5x a 50 ms limit on a 206-contact clutter step in a
//! debug build). The [`Deadline`] starts before the conic program is formed, the iterations
//! are not started once it passed, and Clarabel's termination callback reads it after every
//! interior-point iteration. Not interruptible: forming the program, Clarabel's set-up, its
//! initial point (one KKT factorization) and one iteration.

use std::time::Instant;

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
};
use faer::sparse::SparseColMat;

use crate::conic_program::{Cone, ConicProgram};
use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::result::{Solution, SolveOptions, Status, Trace};

/// Clarabel's tolerances (its defaults: `1e-8` each).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Clarabel {
    /// Absolute duality-gap tolerance.
    pub tol_gap_abs: f64,
    /// Relative duality-gap tolerance.
    pub tol_gap_rel: f64,
    /// Feasibility tolerance (primal and dual residuals).
    pub tol_feas: f64,
    /// Whether a reduced-accuracy answer (`AlmostSolved`) counts as converged.
    pub accept_almost_solved: bool,
}

impl Default for Clarabel {
    /// Clarabel's own defaults; an `AlmostSolved` answer is not accepted.
    fn default() -> Self {
        Clarabel {
            tol_gap_abs: 1e-8,
            tol_gap_rel: 1e-8,
            tol_feas: 1e-8,
            accept_almost_solved: false,
        }
    }
}

fn csc(m: &SparseColMat<usize, f64>) -> CscMatrix<f64> {
    CscMatrix::new(
        m.nrows(),
        m.ncols(),
        m.symbolic().col_ptr().to_vec(),
        m.symbolic().row_idx().to_vec(),
        m.val().to_vec(),
    )
}

fn cone(c: &Cone) -> SupportedConeT<f64> {
    match *c {
        Cone::Zero(n) => SupportedConeT::ZeroConeT(n),
        Cone::Nonnegative(n) => SupportedConeT::NonnegativeConeT(n),
        Cone::SecondOrder(n) => SupportedConeT::SecondOrderConeT(n),
    }
}

impl Clarabel {
    /// Checks the tolerances; the error names the option.
    pub fn check(&self) -> Result<(), CoreError> {
        for (name, v) in [
            ("tol_gap_abs", self.tol_gap_abs),
            ("tol_gap_rel", self.tol_gap_rel),
            ("tol_feas", self.tol_feas),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(CoreError::BadOption(format!(
                    "clarabel option {name} must be a positive number, got {v}"
                )));
            }
        }
        Ok(())
    }

    /// Our status for Clarabel's.
    fn status(&self, s: SolverStatus) -> Status {
        match s {
            SolverStatus::Solved => Status::Converged,
            SolverStatus::AlmostSolved if self.accept_almost_solved => Status::Converged,
            SolverStatus::AlmostSolved => Status::Inaccurate,
            SolverStatus::MaxIterations => Status::MaxIterations,
            SolverStatus::MaxTime | SolverStatus::CallbackTerminated => Status::Timeout,
            SolverStatus::NumericalError => Status::NotFinite,
            SolverStatus::InsufficientProgress => Status::Stagnated,
            // Infeasibility cannot happen for SAP's primal (v free, sigma = 0 feasible once
            // v is large along the normals); for other programs it is a failure to solve.
            _ => Status::Stagnated,
        }
    }

    /// Solves `program` with the iteration and time budgets of `opts`.
    pub fn solve_program<C: ConicProgram + ?Sized>(
        &self,
        program: &C,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        self.check()?;
        let start = Instant::now();
        let deadline = Deadline::after(opts.time_limit);
        let data = program.conic_program()?;
        data.validate()?;
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(u32::try_from(opts.max_iter).unwrap_or(u32::MAX))
            .tol_gap_abs(self.tol_gap_abs)
            .tol_gap_rel(self.tol_gap_rel)
            .tol_feas(self.tol_feas)
            .build()
            .map_err(|e| CoreError::BadOption(format!("clarabel settings: {e}")))?;
        let cones: Vec<SupportedConeT<f64>> = data.cones.iter().map(cone).collect();
        let mut solver = DefaultSolver::new(
            &csc(&data.p),
            &data.q,
            &csc(&data.a),
            &data.b,
            &cones,
            settings,
        )
        .map_err(|e| CoreError::LinearAlgebra(format!("clarabel set-up: {e}")))?;
        let started = !deadline.expired();
        if started {
            solver.set_termination_callback(move |_| deadline.expired());
            solver.solve();
        }
        let sol = &solver.solution;
        let x = program.unknowns_from_conic(&sol.x);
        let mut status = match started {
            true => self.status(sol.status),
            false => Status::Timeout,
        };
        if x.iter().any(|v| !v.is_finite()) {
            status = Status::NotFinite;
        }
        Ok(Solution {
            x,
            status,
            iterations: u64::from(sol.iterations),
            merit: sol.obj_val,
            seconds: start.elapsed().as_secs_f64(),
            counters: [("warm_start_ignored".to_string(), 1)]
                .into_iter()
                .collect(),
            trace: Trace::default(),
        })
    }
}
