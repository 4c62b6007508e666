//! A first-order start for the natural map's Newton-type drivers: proximal ADMM (Carpentier,
//! Le Lidec and Montaut 2024; [`contactlab_core::drivers::admm`]) from the given start until
//! the shared ruler reads at most `admm_start_tol`, then the driver from there.
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

use contactlab_core::drivers::admm::solve_admm;
use contactlab_core::drivers::Admm;
use contactlab_core::{CoreError, LocalProblem, SolveOptions};

/// Runs ADMM (its defaults) on `problem` from `x0` until the ruler reads at most `tol`, for at
/// most `max_iter` iterations and `time_limit`: the point it ends at (`x0` if that point is not
/// finite) and the iterations it took.
pub(super) fn admm_start(
    problem: &LocalProblem,
    x0: Vec<f64>,
    tol: f64,
    max_iter: u64,
    time_limit: Option<Duration>,
) -> Result<(Vec<f64>, u64), CoreError> {
    let opts = SolveOptions {
        max_iter,
        stop_tol: tol,
        time_limit,
        trace: false,
        ..SolveOptions::default()
    };
    let s = solve_admm(problem, &Admm::default(), Some(x0.clone()), &opts)?;
    let x = if s.x.iter().all(|v| v.is_finite()) {
        s.x
    } else {
        x0
    };
    Ok((x, s.iterations))
}
