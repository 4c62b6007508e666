//! [`Tolerances`]: the stopping rules of a solve's options that every driver reads, with the
//! solve's deadline.

use crate::deadline::Deadline;
use crate::result::SolveOptions;

/// The stopping rules of [`SolveOptions`] a driver needs, and the solve's [`Deadline`] for
/// checks inside its loops (the executor enforces the iteration budget).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// [`SolveOptions::stop_tol`]: converged when the driver's measure is at most this.
    pub stop_tol: f64,
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
            stop_tol: o.stop_tol,
            rel_tol: o.rel_tol,
            grad_tol: o.grad_tol,
            step_tol: o.step_tol,
            deadline: Deadline::after(o.time_limit),
        }
    }
}
