//! The one place an argmin `Executor` is built and its result turned into a [`Solution`]:
//! iteration budget, optional timeout, the [`TraceObserver`] (unless the trace is off), the status mapping and the
//! evaluation counts are the same for every driver.
//!
//! The counts are read from the problem once at the end, so the state's own copy of them is
//! off: argmin would otherwise copy every counter into a string-keyed map after every
//! iteration (an allocation and a hash per counter, measured at a few percent of a small
//! problem's ADMM iteration).
//!
//! The time limit is not argmin's `timeout`: argmin reads its timer after each iteration but
//! not after `init`, so a driver whose set-up (a first Jacobian and its factorization) used up
//! the limit went on into a whole first iteration (measured: the natural map with
//! Gauss-Newton on an 83-contact clutter step in a debug build, 65 ms of set-up then 140 ms of
//! iteration under a 50 ms limit). [`Timed`] asks the deadline in the solver's own stopping
//! rule, which argmin calls before every iteration, the first one included.

use std::time::Instant;

use argmin::core::observers::ObserverMode;
use argmin::core::{
    Error as ArgminError, Executor, IterState, Problem, Solver, State, TerminationReason,
    TerminationStatus, KV,
};

use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::result::{Solution, SolveOptions, Status, TraceObserver};

/// Who stops a run at [`SolveOptions::time_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The executor, before every iteration (after `init` included), through [`Timed`].
    Executor,
    /// The driver's own [`Deadline`], checked where the driver chooses
    /// (and reported as `Timeout` in its status).
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
    let deadline = match clock {
        Clock::Executor => Deadline::after(opts.time_limit),
        Clock::Driver => Deadline::none(),
    };
    let (observer, trace) = TraceObserver::new();
    let mut exec = Executor::new(problem, Timed { solver, deadline })
        .configure(|s| s.param(x0).max_iters(opts.max_iter).counting(false))
        .ctrlc(false);
    if opts.trace {
        exec = exec.add_observer(observer, ObserverMode::Always);
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

/// A solver whose stopping rule also asks a [`Deadline`] (see the module's documentation):
/// argmin calls it before every iteration, after `init` included.
pub struct Timed<S> {
    /// The driver.
    pub solver: S,
    /// The time limit ([`Deadline::none`] when the driver keeps its own).
    pub deadline: Deadline,
}

impl<O, S, I> Solver<O, I> for Timed<S>
where
    S: Solver<O, I>,
    I: State,
{
    fn name(&self) -> &str {
        self.solver.name()
    }

    fn init(&mut self, problem: &mut Problem<O>, state: I) -> Result<(I, Option<KV>), ArgminError> {
        self.solver.init(problem, state)
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: I,
    ) -> Result<(I, Option<KV>), ArgminError> {
        self.solver.next_iter(problem, state)
    }

    fn terminate(&mut self, state: &I) -> TerminationStatus {
        match self.solver.terminate(state) {
            TerminationStatus::NotTerminated if self.deadline.expired() => {
                TerminationStatus::Terminated(TerminationReason::Timeout)
            }
            status => status,
        }
    }
}
