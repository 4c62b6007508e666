//! What every driver returns: the solution, why it stopped, and a per-iteration trace.
//!
//! Drivers report per-iteration values to argmin as key-values (`kv!`); the
//! [`TraceObserver`] collects them into a [`Trace`] whose rows turn into a polars DataFrame
//! in `contactlab-experiments` (polars stays out of this crate: it is most of the build).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use argmin::core::observers::Observe;
use argmin::core::{Error as ArgminError, State, TerminationReason, TerminationStatus, KV};
use serde::{Deserialize, Serialize};

/// Why a solver stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The driver's own convergence test passed.
    Converged,
    /// The iteration budget ran out.
    MaxIterations,
    /// Steps became too small to change the iterate while the residual was not small.
    Stagnated,
    /// The line search found no acceptable step along a descent direction.
    LineSearchFailed,
    /// The merit's gradient vanished while the residual did not: a local minimum of the merit
    /// that is not a solution.
    LocalMinimum,
    /// The wall-clock budget ran out.
    Timeout,
    /// A non-finite value (NaN or infinity) appeared in the iterate or the residual.
    NotFinite,
    /// The Newton/LM linear system could not be solved.
    SingularSystem,
    /// The driver's own convergence test passed but the shared accuracy metric (the
    /// natural-map residual) is above the requested tolerance.
    Inaccurate,
    /// A per-contact solver found no answer for its single-contact problem (e.g. no bracket
    /// of a slipping solution).
    LocalSolveFailed,
}

impl Status {
    /// The stable snake-case name used in JSON output and DataFrames.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::MaxIterations => "max_iterations",
            Status::Stagnated => "stagnated",
            Status::LineSearchFailed => "line_search_failed",
            Status::LocalMinimum => "local_minimum",
            Status::Timeout => "timeout",
            Status::NotFinite => "not_finite",
            Status::SingularSystem => "singular_system",
            Status::Inaccurate => "inaccurate",
            Status::LocalSolveFailed => "local_solve_failed",
        }
    }

    /// Parses [`Status::as_str`] back.
    pub fn from_name(name: &str) -> Option<Status> {
        [
            Status::Converged,
            Status::MaxIterations,
            Status::Stagnated,
            Status::LineSearchFailed,
            Status::LocalMinimum,
            Status::Timeout,
            Status::NotFinite,
            Status::SingularSystem,
            Status::Inaccurate,
            Status::LocalSolveFailed,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// The argmin termination reason a driver returns from `terminate` to stop with `self`.
    pub fn to_termination(&self) -> TerminationStatus {
        TerminationStatus::Terminated(match self {
            Status::Converged => TerminationReason::SolverConverged,
            Status::MaxIterations => TerminationReason::MaxItersReached,
            Status::Timeout => TerminationReason::Timeout,
            other => TerminationReason::SolverExit(other.as_str().to_string()),
        })
    }

    /// Maps argmin's final termination status to ours.
    pub fn from_termination(t: &TerminationStatus) -> Status {
        match t {
            TerminationStatus::NotTerminated => Status::MaxIterations,
            TerminationStatus::Terminated(reason) => match reason {
                TerminationReason::SolverConverged | TerminationReason::TargetCostReached => {
                    Status::Converged
                }
                TerminationReason::MaxItersReached => Status::MaxIterations,
                TerminationReason::Timeout | TerminationReason::Interrupt => Status::Timeout,
                TerminationReason::SolverExit(s) => {
                    Status::from_name(s).unwrap_or(Status::Stagnated)
                }
            },
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stopping rules and budgets shared by all drivers.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveOptions {
    /// Maximum number of iterations.
    pub max_iter: u64,
    /// The driver's own stopping tolerance: the driver stops with [`Status::Converged`] when
    /// its own measure is at most this. The measure is the driver's, not a shared one (the
    /// shared ruler's threshold is [`crate::plugin::judge`]'s `accept_tol`):
    ///
    /// | driver | measure `stop_tol` bounds |
    /// |---|---|
    /// | Gauss-Newton, LM, projected LM, dogleg, trust region | `\|F(x)\|_2` of the formulation's residual |
    /// | Todorov's driver | `\|r(x)\|_2` of the implicit NCP residual (Todorov 2010, eq. 9) |
    /// | Erleben's Newton | `\|H(x)\|_2` of the min-map, or `theta = \|H\|^2/2` as its `measure` option says |
    /// | SAP's Newton, L-BFGS | `\|D grad\|` with `rel_tol` (Castro et al. eq. 26: `\|D grad\| <= stop_tol + rel_tol max(\|D p\|, \|D j_c\|)`) |
    /// | PGS, Hwangbo's sweeps | the sweep's stop rule after a sweep: the local problem's natural-map residual (PGS), the impulse change plus the approach speeds (Hwangbo's bisection), or the summed per-contact violation |
    /// | ADMM | the local problem's natural-map residual at its impulse iterate |
    /// | Clarabel | not `stop_tol`: its own options `tol_gap_abs`, `tol_gap_rel`, `tol_feas` |
    ///
    /// A run's `tol` (configs, `--tol`, the study DSL's `.tol()`, Python's `tol=`) sets both
    /// this and the ruler's `accept_tol` to the same number.
    pub stop_tol: f64,
    /// Relative tolerance of drivers whose merit defines a scale (Castro et al. eq. 26:
    /// converged when `|D grad| <= tol + rel_tol max(|D p|, |D j_c|)`); 0 by default.
    pub rel_tol: f64,
    /// Local minimum when `|J' F|_2` is at most this while `|F|_2 > stop_tol`.
    pub grad_tol: f64,
    /// Stagnated when the step changes no component of `x` by more than
    /// `step_tol * (1 + |x|_inf)`.
    pub step_tol: f64,
    /// Wall-clock budget of the whole solve; `None` means none. A solve ends with
    /// [`Status::Timeout`] within `1.2 x` the limit plus one *indivisible step*, the longest
    /// stretch in which nothing reads the clock:
    ///
    /// | where | read | indivisible step |
    /// |---|---|---|
    /// | the solve flow ([`crate::plugin::solve_formulation`]) | after the build, before the start, before each attempt | the formulation's build (forming `W = H' M^-1 H`, SAP's analysis, the MLCP's matrices) and its start (Todorov's and the MNCP's sticking start: an eigendecomposition of the Delassus matrix, `O(n^3)`) |
    /// | islands ([`crate::islands::solve_by_island`]) | before each island's build | finding and splitting the islands |
    /// | least-squares and merit drivers (Gauss-Newton, LM, projected LM, dogleg, trust region, Todorov's, Erleben's Newton, SAP's Newton, L-BFGS) | before every iteration, the first included ([`Timed`](crate::drivers::execute::Timed)); inside line searches and damping retries | the set-up (first residual and Jacobian) or one iteration (its factorization or least-squares solve) |
    /// | sweeps (PGS, Hwangbo's bisection and PGS) | every 16 contacts of a sweep | 16 contacts' updates, or a sweep's residual |
    /// | ADMM | every iteration above 32 unknowns (every 8 below), each product of the power iteration, each panel of 32 columns of a factorization ([`crate::panels`]) | one iteration without a refactorization, or one panel |
    /// | Clarabel | before its iterations and after each (its termination callback) | forming the conic program, Clarabel's set-up and first iteration |
    ///
    /// What runs after the answer (the impulses and velocities from the unknowns, the shared
    /// ruler) is not counted as a step. The end-to-end tests (`time_limit::` in
    /// `experiments/tests/end_to_end/`) measure each step on the machine they run on and hold
    /// every driver and every pair's whole flow to this bound.
    pub time_limit: Option<Duration>,
    /// Record the per-iteration [`Trace`] (on by default). Off where only the answer and the
    /// counters are kept, as in timed problem sets: a trace row is built from the driver's
    /// key-value set with a string per key, which on a problem of a few contacts costs more
    /// than the iteration itself (measured: most of an ADMM solve of a one-contact FCLib file).
    pub trace: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            max_iter: 100,
            stop_tol: 1e-10,
            rel_tol: 0.0,
            grad_tol: 1e-14,
            step_tol: 1e-14,
            time_limit: None,
            trace: true,
        }
    }
}

/// One iteration's record. Drivers fill what applies; the rest stays `NaN` or `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    /// Iteration number, starting at 0 for the initial point.
    pub iter: u64,
    /// The merit after the iteration (`|F|^2/2` for least squares).
    pub merit: f64,
    /// Norm of the merit gradient.
    pub grad_norm: f64,
    /// Norm of the step taken.
    pub step_norm: f64,
    /// Which kind of step was taken ("newton", "cauchy", "dogleg", "gradient", "rejected", ...).
    pub step_kind: Option<String>,
    /// Line-search step length `alpha`, or trust radius for trust-region methods.
    pub step_length: f64,
    /// LM damping `lambda`.
    pub lambda: f64,
    /// Count of active constraints/contacts where the formulation reports one.
    pub active: Option<u64>,
    /// Seconds since the solve started.
    pub seconds: f64,
    /// Any other per-iteration value a driver reports (by key).
    pub extra: BTreeMap<String, f64>,
}

/// The per-iteration records of one solve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Rows in iteration order.
    pub rows: Vec<TraceRow>,
}

impl Trace {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The merit column.
    pub fn merits(&self) -> Vec<f64> {
        self.rows.iter().map(|r| r.merit).collect()
    }

    /// Builds a row from an argmin key-value set. Known keys: `merit`, `grad_norm`,
    /// `step_norm`, `step_kind`, `step_length`, `lambda`, `active`; every other numeric key
    /// goes to `extra`.
    pub fn row_from_kv(iter: u64, seconds: f64, kv: &KV) -> TraceRow {
        let float = |k: &str| kv.get(k).and_then(|v| v.get_float()).unwrap_or(f64::NAN);
        let mut extra = BTreeMap::new();
        // Straight over the map: `KV::keys` clones every key on every iteration.
        for (key, v) in &kv.kv {
            if matches!(
                key.as_str(),
                "merit"
                    | "grad_norm"
                    | "step_norm"
                    | "step_kind"
                    | "step_length"
                    | "lambda"
                    | "active"
            ) {
                continue;
            }
            let x = v
                .get_float()
                .or_else(|| v.get_int().map(|i| i as f64))
                .or_else(|| v.get_uint().map(|i| i as f64))
                .or_else(|| v.get_bool().map(|b| if b { 1.0 } else { 0.0 }));
            if let Some(x) = x {
                extra.insert(key.clone(), x);
            }
        }
        TraceRow {
            iter,
            merit: float("merit"),
            grad_norm: float("grad_norm"),
            step_norm: float("step_norm"),
            step_kind: kv.get("step_kind").and_then(|v| v.get_string()),
            step_length: float("step_length"),
            lambda: float("lambda"),
            active: kv
                .get("active")
                .and_then(|v| v.get_uint().or(v.get_int().map(|i| i as u64))),
            seconds,
            extra,
        }
    }
}

/// An argmin observer that appends one [`TraceRow`] per iteration (and one for `init`) to a
/// shared [`Trace`].
#[derive(Debug, Clone)]
pub struct TraceObserver {
    trace: Arc<Mutex<Trace>>,
    start: std::time::Instant,
}

impl TraceObserver {
    /// A new observer and the handle its rows are collected in.
    pub fn new() -> (TraceObserver, Arc<Mutex<Trace>>) {
        let trace = Arc::new(Mutex::new(Trace::default()));
        (
            TraceObserver {
                trace: trace.clone(),
                start: std::time::Instant::now(),
            },
            trace,
        )
    }

    fn push(&self, iter: u64, kv: &KV) {
        let row = Trace::row_from_kv(iter, self.start.elapsed().as_secs_f64(), kv);
        if let Ok(mut t) = self.trace.lock() {
            t.rows.push(row);
        }
    }
}

impl<I: State> Observe<I> for TraceObserver {
    fn observe_init(&mut self, _name: &str, _state: &I, kv: &KV) -> Result<(), ArgminError> {
        self.push(0, kv);
        Ok(())
    }

    fn observe_iter(&mut self, state: &I, kv: &KV) -> Result<(), ArgminError> {
        // argmin observes an iteration before incrementing its counter: iteration k (1-based)
        // is observed with get_iter() == k - 1, and row 0 is the initial point.
        self.push(state.get_iter() + 1, kv);
        Ok(())
    }
}

/// The outcome of one solve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Solution {
    /// The final iterate (for contact solvers: the unknowns of the formulation).
    pub x: Vec<f64>,
    /// Why the driver stopped.
    pub status: Status,
    /// Iterations performed.
    pub iterations: u64,
    /// The final merit value.
    pub merit: f64,
    /// Wall-clock seconds of the solve.
    pub seconds: f64,
    /// The driver's own counters: argmin's evaluation counts (`operator_count`,
    /// `jacobian_count`, ...) and whatever the driver reports (`newton_accepted`, `pgs_sweeps`,
    /// ...). Each becomes a DataFrame column of its own.
    pub counters: BTreeMap<String, u64>,
    /// The per-iteration trace.
    pub trace: Trace,
}
