//! The one place an argmin `Executor` is built and its result turned into a [`Solution`]:
//! iteration budget, optional timeout, the [`TraceObserver`] (unless the trace is off), the status mapping and the
//! evaluation counts are the same for every driver.
//!
//! The counts are read from the problem once at the end, so the state's own copy of them is
//! off: argmin would otherwise copy every counter into a string-keyed map after every
//! iteration (an allocation and a hash per counter, measured at a few percent of a small
//! problem's ADMM iteration).

use std::time::Instant;

use argmin::core::observers::ObserverMode;
use argmin::core::{Executor, IterState, Solver, State};

use crate::error::CoreError;
use crate::result::{Solution, SolveOptions, Status, TraceObserver};

/// Who stops a run at [`SolveOptions::time_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// argmin's executor, between iterations; it then reads the clock around every iteration
    /// (its timer), which costs a tenth of an iteration on a problem of a few contacts.
    Executor,
    /// The driver's own [`Deadline`](super::kit::Deadline), checked where the driver chooses
    /// (and reported as `Timeout` in its status); argmin's timer stays off.
    Driver,
}

/// Runs `solver` on `problem` from `x0` under the budgets of `opts`, argmin's executor
/// keeping the time limit ([`Clock::Executor`]).
pub fn execute<O, S, G, J, H, R>(
    problem: O,
    solver: S,
    x0: Vec<f64>,
    opts: &SolveOptions,
    converged_at_end: impl Fn(&IterState<Vec<f64>, G, J, H, R, f64>) -> bool,
) -> Result<Solution, CoreError>
where
    S: Solver<O, IterState<Vec<f64>, G, J, H, R, f64>>,
    IterState<Vec<f64>, G, J, H, R, f64>: State<Param = Vec<f64>, Float = f64>,
{
    execute_with_clock(problem, solver, x0, opts, Clock::Executor, converged_at_end)
}

/// Runs `solver` on `problem` from `x0` under the budgets of `opts`, the time limit kept by
/// `clock`.
///
/// The final iterate is the solver's current parameter (not argmin's best-so-far: a
/// non-monotone driver's last point is the one its status speaks about) and its cost is the
/// reported merit. A run stopped by the iteration budget whose final state passes
/// `converged_at_end` is reported as converged; a non-finite iterate or merit as `NotFinite`.
pub fn execute_with_clock<O, S, G, J, H, R>(
    problem: O,
    solver: S,
    x0: Vec<f64>,
    opts: &SolveOptions,
    clock: Clock,
    converged_at_end: impl Fn(&IterState<Vec<f64>, G, J, H, R, f64>) -> bool,
) -> Result<Solution, CoreError>
where
    S: Solver<O, IterState<Vec<f64>, G, J, H, R, f64>>,
    IterState<Vec<f64>, G, J, H, R, f64>: State<Param = Vec<f64>, Float = f64>,
{
    let start = Instant::now();
    let (observer, trace) = TraceObserver::new();
    let mut exec = Executor::new(problem, solver)
        .configure(|s| s.param(x0).max_iters(opts.max_iter).counting(false))
        .ctrlc(false);
    if opts.trace {
        exec = exec.add_observer(observer, ObserverMode::Always);
    }
    if let (Some(t), Clock::Executor) = (opts.time_limit, clock) {
        exec = exec.timeout(t);
    }
    let res = exec.run()?;
    let state = res.state();
    let x = state.get_param().cloned().unwrap_or_default();
    let merit = state.get_cost();
    let mut status = Status::from_termination(state.get_termination_status());
    if status == Status::MaxIterations && converged_at_end(state) {
        status = Status::Converged;
    }
    if !merit.is_finite() || x.iter().any(|v| !v.is_finite()) {
        status = Status::NotFinite;
    }
    let trace = trace.lock().map(|t| t.clone()).unwrap_or_default();
    Ok(Solution {
        x,
        status,
        iterations: state.get_iter(),
        merit,
        seconds: start.elapsed().as_secs_f64(),
        counters: res
            .problem()
            .counts
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        trace,
    })
}
