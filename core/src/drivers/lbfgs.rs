//! argmin's L-BFGS on a [`Merit`], stopped by the merit's own optimality measure.
//!
//! Method: limited-memory BFGS with the two-loop recursion (Nocedal and Wright, *Numerical
//! Optimization*, 2nd ed., Alg. 7.4-7.5) and the Moré-Thuente line search for the strong Wolfe
//! conditions (ibid., sec. 3.5), both argmin's. It needs only values and gradients, so on
//! SAP's cost it is the quasi-Newton alternative to [`NewtonMerit`](super::NewtonMerit): no
//! Hessian, no factorization, and a superlinear rate at best where Newton is quadratic.
//!
//! What this driver adds to argmin's solver: argmin's own stopping tests (`|g| < sqrt(eps)`,
//! a cost change below `eps`) are switched off, and the run stops by the merit's
//! [`Optimality`](crate::merit::Optimality) with the solve's `tol` and `rel_tol` (eq. 26 on
//! SAP), as every other merit driver does; a failed line search ends the solve with
//! [`Status::LineSearchFailed`] at the last accepted point, not with an error.

use argmin::core::{Error, Problem, Solver, State as _, TerminationReason, TerminationStatus, KV};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

use super::kit;
use super::newton_merit::{stop_after_step, MeritProblem, MeritStart, MeritState};
use super::tolerances::Tolerances;
use crate::merit::Merit;
use crate::result::Status;

/// argmin's L-BFGS with its Moré-Thuente line search, on `Vec<f64>`.
type Inner = LBFGS<MoreThuenteLineSearch<Vec<f64>, Vec<f64>, f64>, Vec<f64>, Vec<f64>, f64>;

/// L-BFGS (argmin) on a [`Merit`].
///
/// `step_kind` is `"quasi-newton"`; `step_norm` is the accepted step's length.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Lbfgs {
    /// Number of correction pairs kept (`m`; Nocedal and Wright suggest 3 to 20).
    pub memory: usize,
    /// Sufficient-decrease constant of the Wolfe conditions (`c1`).
    pub c1: f64,
    /// Curvature constant of the strong Wolfe conditions (`c2`, in `(c1, 1)`).
    pub c2: f64,
    #[serde(skip)]
    inner: Option<Inner>,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    stop: Option<Status>,
}

impl std::fmt::Debug for Lbfgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lbfgs")
            .field("memory", &self.memory)
            .field("c1", &self.c1)
            .field("c2", &self.c2)
            .finish_non_exhaustive()
    }
}

impl Default for Lbfgs {
    /// `m = 10`, `c1 = 1e-4`, `c2 = 0.9` (Nocedal and Wright's values for quasi-Newton
    /// methods, sec. 3.1).
    fn default() -> Self {
        Lbfgs {
            memory: 10,
            c1: 1e-4,
            c2: 0.9,
            inner: None,
            tol: Tolerances::default(),
            stop: None,
        }
    }
}

impl Lbfgs {
    /// argmin's solver with these parameters and its own stopping tests off.
    fn build(&self) -> Result<Inner, Error> {
        if self.memory == 0 {
            return Err(Error::msg("lbfgs: `memory` must be at least 1"));
        }
        // The smallest step is left near zero: on a stiff SAP cost the minimizer along the
        // first (steepest-descent) direction can be far below argmin's default sqrt(eps).
        let search = MoreThuenteLineSearch::new()
            .with_c(self.c1, self.c2)
            .map_err(|e| Error::msg(format!("lbfgs: c1 = {}, c2 = {}: {e}", self.c1, self.c2)))?
            .with_bounds(1e-30, f64::INFINITY)?;
        LBFGS::new(search, self.memory)
            .with_tolerance_grad(0.0)?
            .with_tolerance_cost(0.0)
    }
}

impl<M: Merit> Solver<MeritProblem<M>, MeritState> for Lbfgs {
    fn name(&self) -> &str {
        "lbfgs"
    }

    fn init(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
    ) -> Result<(MeritState, Option<KV>), Error> {
        let start = MeritStart::evaluate(problem, &state)?;
        self.tol = start.tol;
        self.stop = start.stop;
        let gnorm = kit::norm2(&start.gradient);
        self.inner = Some(self.build()?);
        let kv = argmin::kv!("merit" => start.value; "grad_norm" => gnorm;);
        Ok((state.cost(start.value).gradient(start.gradient), Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
    ) -> Result<(MeritState, Option<KV>), Error> {
        let Some(inner) = self.inner.as_mut() else {
            return Err(Error::msg("lbfgs: next_iter before init"));
        };
        let (x, value, g) = match (state.get_param(), state.get_gradient()) {
            (Some(x), Some(g)) => (x.clone(), state.get_cost(), g.clone()),
            _ => return Err(Error::msg("lbfgs: state without a point or gradient")),
        };
        let (next, _) = inner.next_iter(problem, state)?;
        // argmin ends the run itself when the Moré-Thuente search fails, with the point taken
        // out of the state; put the last accepted point back and say why.
        if let TerminationStatus::Terminated(TerminationReason::SolverExit(_)) =
            next.get_termination_status()
        {
            let gnorm = kit::norm2(&g);
            self.stop = Some(Status::LineSearchFailed);
            let kv = argmin::kv!(
                "merit" => value; "grad_norm" => gnorm; "step_norm" => 0.0;
                "step_kind" => "rejected"; "step_length" => 0.0;
            );
            let next = next.param(x).cost(value).gradient(g).terminate_with(
                TerminationReason::SolverExit(Status::LineSearchFailed.as_str().to_string()),
            );
            return Ok((next, Some(kv)));
        }
        let (x_new, g_new) = match (next.get_param(), next.get_gradient()) {
            (Some(x), Some(g)) => (x.clone(), g.clone()),
            _ => return Err(Error::msg("lbfgs: argmin's step left no point or gradient")),
        };
        let step = kit::axpy(&x_new, -1.0, &x);
        let opt = problem
            .problem
            .as_ref()
            .map(|mp| mp.merit.optimality(&x_new, &g_new));
        self.stop = stop_after_step(&self.tol, &x, &step, next.get_cost(), &g_new, opt);
        let mut kv = argmin::kv!(
            "merit" => next.get_cost(); "grad_norm" => kit::norm2(&g_new);
            "step_norm" => kit::norm2(&step); "step_kind" => "quasi-newton";
        );
        if let Some(o) = opt {
            kv.insert("optimality", o.residual.into());
        }
        Ok((next, Some(kv)))
    }

    fn terminate(&mut self, _state: &MeritState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
