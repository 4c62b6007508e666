//! A first-order start for the natural map's Newton-type drivers: proximal ADMM (Carpentier,
//! Le Lidec and Montaut 2024; [`contactlab_core::drivers::admm`]) from the given start until
//! the shared ruler reads at most `admm_start_tol`, then the driver from there; when the
//! driver fails, ADMM goes on from its own last point to a tolerance ten times tighter and the
//! driver starts again (at most `admm_restarts` times, each attempt but the last with
//! `admm_attempt_iterations` of the driver), so that the pair fails only where ADMM too would
//! not get close. Every phase runs inside the solve's clock and time limit; their
//! iterations are the solve's counter `admm_start_iterations`, apart from the driver's.
//!
//! Erleben and Ortiz start their non-smooth Newton with projected Gauss-Seidel sweeps for the
//! same reason (the min-map's [`contactlab_core::BDerivative::warm_start_sweep`]): Newton's
//! local convergence needs a start near a solution, which the merit's descent alone may not
//! reach. On a grasp the contact rows outnumber the hand's degrees of freedom (the Jaco's
//! steps: 23 rows, `rank W = 9`), the solutions form a set along the hand's internal forces,
//! and the natural map's merit is nearly flat towards it: projected LM falls back to
//! projected-gradient steps and crawls. Measured on a Jaco step (`reports/robots/`): projected
//! LM from the previous step's answer ends its 500 iterations at a ruler of `7e-3`; from
//! ADMM's point at `1e-4` (342 ADMM iterations) it converges in 3 iterations to `5e-13`. PGS
//! does not reach that basin in time (1000 sweeps leave `6e-4`), hence ADMM, which converges
//! on a singular `W`.

use std::time::Duration;

use contactlab_core::deadline::Deadline;
use contactlab_core::drivers::admm::solve_admm;
use contactlab_core::drivers::Admm;
use contactlab_core::{CoreError, LocalProblem, SolveOptions};

/// The ADMM phases of one solve: the point the last one ended at, its tolerance, the
/// iterations of all of them, and the solve's deadline.
#[derive(Debug, Clone, Default)]
pub(super) struct AdmmStart {
    point: Vec<f64>,
    tol: f64,
    iterations: u64,
    deadline: Deadline,
}

impl AdmmStart {
    /// The first phase: ADMM from `x0` to `tol`, within `time_limit` (the rest of the solve's).
    pub(super) fn first(
        &mut self,
        problem: &LocalProblem,
        x0: Vec<f64>,
        tol: f64,
        max_iter: u64,
        time_limit: Option<Duration>,
    ) -> Result<Vec<f64>, CoreError> {
        *self = AdmmStart {
            tol,
            deadline: Deadline::after(time_limit),
            ..AdmmStart::default()
        };
        self.run(problem, x0, max_iter)
    }

    /// A further phase from the last one's point to a tenth of its tolerance; `None` when
    /// ADMM fails (a bad option cannot reach here: the first phase checked them).
    pub(super) fn tighter(&mut self, problem: &LocalProblem, max_iter: u64) -> Option<Vec<f64>> {
        self.tol *= 0.1;
        let x0 = self.point.clone();
        self.run(problem, x0, max_iter).ok()
    }

    /// The iterations of every phase so far.
    pub(super) fn iterations(&self) -> u64 {
        self.iterations
    }

    /// ADMM (its defaults) on `problem` from `x0` until the ruler reads at most the phase's
    /// tolerance, within `max_iter` and the deadline: the point it ends at (`x0` if that point
    /// is not finite).
    fn run(
        &mut self,
        problem: &LocalProblem,
        x0: Vec<f64>,
        max_iter: u64,
    ) -> Result<Vec<f64>, CoreError> {
        let opts = SolveOptions {
            max_iter,
            stop_tol: self.tol,
            time_limit: self.deadline.remaining(),
            trace: false,
            ..SolveOptions::default()
        };
        let s = solve_admm(problem, &Admm::default(), Some(x0.clone()), &opts)?;
        self.iterations += s.iterations;
        self.point = if s.x.iter().all(|v| v.is_finite()) {
            s.x
        } else {
            x0
        };
        Ok(self.point.clone())
    }
}
