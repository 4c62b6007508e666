//! Gauss-Newton with Armijo backtracking on `psi = |F|^2 / 2`.
//!
//! Method: Nocedal and Wright, *Numerical Optimization*, 2nd ed., sec. 10.3 (the Gauss-Newton
//! direction from the normal equations, eq. 10.23, or a QR least-squares solve, eq. 10.24
//! discussion) with the backtracking line search of Alg. 3.1.

use argmin::core::{Error, Problem, Solver, TerminationStatus, KV};

use super::kit::{self, Armijo, LsPoint};
use super::least_squares::{LeastSquares, LsState};
use super::tolerances::Tolerances;
use crate::residual::Residual;
use crate::result::Status;

/// Gauss-Newton with Armijo backtracking; the direction solves `(J'J) d = -J'F` by LLT and
/// falls back to QR least squares on `J d = -F` when the normal equations are singular.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GaussNewtonLs {
    /// The backtracking rule; exhausting it stops with [`Status::LineSearchFailed`].
    pub armijo: Armijo,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    point: Option<LsPoint>,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for GaussNewtonLs {
    /// Armijo `c = 1e-4`, `rho = 0.5`, at most 30 halvings (Nocedal and Wright, sec. 3.1).
    fn default() -> Self {
        GaussNewtonLs {
            armijo: Armijo::default(),
            tol: Tolerances::default(),
            point: None,
            stop: None,
        }
    }
}

impl<R: Residual> Solver<LeastSquares<R>, LsState> for GaussNewtonLs {
    fn name(&self) -> &str {
        "gauss_newton_ls"
    }

    fn init(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        let (state, start, kv) = kit::init(problem, state, |_, _| {})?;
        (self.point, self.tol, self.stop) = (start.point, start.tol, start.stop);
        Ok((state, Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        let Some(p) = self.point.take() else {
            self.stop = Some(Status::NotFinite);
            return Ok((state, None));
        };
        // A direction that is not of descent (rounding on a nearly singular system) would make
        // the Armijo test unsatisfiable; steepest descent always is one.
        let (d, kind) = match kit::gauss_newton_direction(&p) {
            Some(d) if kit::dot(&p.grad, &d) < 0.0 => (d, "gauss_newton"),
            _ => (p.grad.iter().map(|g| -g).collect(), "gradient"),
        };
        let slope = kit::dot(&p.grad, &d);
        let Some((alpha, t)) = kit::backtrack(problem, &p.x, p.psi, slope, &d, &self.armijo)?
        else {
            // The backtracking also gives up when the solve's time is up: that is the time
            // limit's stop, and a status that said the line search failed would hide that the
            // answer depends on the machine's speed.
            self.stop = Some(if self.tol.deadline.expired() {
                Status::Timeout
            } else {
                Status::LineSearchFailed
            });
            let kv = kit::iter_kv(&p, 0.0, "rejected", 0.0, None);
            self.point = Some(p);
            return Ok((state, Some(kv)));
        };
        let step: Vec<f64> = d.iter().map(|di| alpha * di).collect();
        let Some(q) = kit::accept(problem, t)? else {
            self.stop = Some(Status::NotFinite);
            return Ok((state.cost(f64::NAN), None));
        };
        self.stop = self.tol.after_step(&p.x, &step, &q);
        let kv = kit::iter_kv(&q, kit::norm2(&step), kind, alpha, None);
        let state = kit::write_state(state, &q);
        self.point = Some(q);
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, _state: &LsState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
