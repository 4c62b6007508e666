//! Projected Levenberg-Marquardt (PLM) for `F(x) = 0, x in X` as Mylapilli and Jain use it.
//!
//! Sources:
//! - Mylapilli and Jain, DETC2014-34322, section "Unconstrained optimization algorithms",
//!   *Algorithm: Projected LMA (PLM)*: `lambda_LM = 1e-16`, the step solves
//!   `[J; sqrt(lambda) I] dx = [-phi; 0]` in the least-squares sense, `x+ = x + t dx` with a
//!   non-monotone line search (Grippo, Lampariello and Lucidi 1986) and watchdog
//!   stabilization (Grippo, Lampariello and Lucidi 1991): "if the best function value found so
//!   far has not been sufficiently reduced within a fixed number of iterations, we restart from
//!   that point using a monotone line search".
//! - Kanzow and Petra's LMMCP (the code the paper adopts) for what the paper leaves open:
//!   Armijo `sigma = 1e-4`, backtracking `beta = 0.55`, `t_min = 1e-12`, memory `m = 10`,
//!   watchdog after `kwatch = 20` iterations without a new best, monotone search for the first
//!   5 iterations, and `lambda = 0.1 / (k + 1)` when `cond(J'J) > 1e25`.
//! - Kanzow, Yamashita and Fukushima (2004), "Levenberg-Marquardt methods with strong local
//!   convergence properties for solving nonlinear equations with convex constraints": the
//!   projected trial point `P_X(x + t d)` and the projected-gradient step as the globalizing
//!   fallback when the LM step fails the line search.
//!
//! The line search accepts `x(t) = P_X(x + t d)` when
//! `psi(x(t)) <= max_{last m} psi + sigma grad psi(x)'(x(t) - x)` (the Armijo rule along the
//! projection arc, Bertsekas 1976, with Grippo's non-monotone reference).

use std::collections::VecDeque;

use argmin::core::{Error, Problem, Solver, TerminationStatus, KV};

use super::kit::{self, LsPoint, Trial};
use super::least_squares::{LeastSquares, LsState};
use super::tolerances::Tolerances;
use crate::residual::ProjectedResidual;
use crate::result::Status;

/// Projected Levenberg-Marquardt with a non-monotone projected line search and watchdog
/// restarts (Mylapilli and Jain 2014, PLM; Kanzow and Petra's LMMCP parameters).
///
/// `step_kind` is `"levenberg_marquardt"` or `"projected_gradient"` (the fallback);
/// `step_length` is the accepted `t`; `lambda` the damping used; a watchdog restart reports the
/// extra column `restart = 1` on the iteration that triggered it. Stationarity for
/// [`Status::LocalMinimum`] is the projected-gradient norm `|x - P_X(x - grad psi)|`, which
/// the extra column `pg_norm` records.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectedLevenbergMarquardt {
    /// Damping `lambda_LM`.
    pub lambda: f64,
    /// Condition estimate of `J'J + lambda I` above which the damping becomes
    /// `lambda_ill / (k + 1)`.
    pub ill_conditioned: f64,
    /// Numerator of the damping on ill-conditioned systems.
    pub lambda_ill: f64,
    /// Armijo constant `sigma`.
    pub sigma: f64,
    /// Backtracking factor `beta`.
    pub beta: f64,
    /// Smallest step length `t` tried.
    pub t_min: f64,
    /// Memory `m` of the non-monotone reference value.
    pub memory: usize,
    /// Iterations without a new best merit before the watchdog restarts from the best point.
    pub kwatch: u64,
    /// Iterations after a start or restart that use the monotone rule.
    pub monotone_steps: u64,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    point: Option<LsPoint>,
    #[serde(skip)]
    best: Option<(LsPoint, u64)>,
    #[serde(skip)]
    history: VecDeque<f64>,
    #[serde(skip)]
    k: u64,
    #[serde(skip)]
    since_start: u64,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for ProjectedLevenbergMarquardt {
    /// `lambda = 1e-16` (paper); `sigma = 1e-4`, `beta = 0.55`, `t_min = 1e-12`, `m = 10`,
    /// `kwatch = 20`, 5 monotone steps, `lambda = 0.1/(k+1)` above condition `1e25` (LMMCP).
    fn default() -> Self {
        ProjectedLevenbergMarquardt {
            lambda: 1e-16,
            ill_conditioned: 1e25,
            lambda_ill: 0.1,
            sigma: 1e-4,
            beta: 0.55,
            t_min: 1e-12,
            memory: 10,
            kwatch: 20,
            monotone_steps: 5,
            tol: Tolerances::default(),
            point: None,
            best: None,
            history: VecDeque::new(),
            k: 0,
            since_start: 0,
            stop: None,
        }
    }
}

/// `P_X(x)`, counted by argmin as `projection_count`.
fn project<R: ProjectedResidual>(
    problem: &mut Problem<LeastSquares<R>>,
    mut x: Vec<f64>,
) -> Result<Vec<f64>, Error> {
    problem.problem("projection_count", |ls| {
        ls.residual.project(&mut x);
        Ok(x)
    })
}

/// `|x - P_X(x - g)|`: zero exactly at the stationary points of `psi` on `X`.
fn projected_gradient_norm<R: ProjectedResidual>(
    problem: &mut Problem<LeastSquares<R>>,
    p: &LsPoint,
) -> Result<f64, Error> {
    let y = project(problem, kit::axpy(&p.x, -1.0, &p.grad))?;
    Ok(p.x
        .iter()
        .zip(&y)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt())
}

impl ProjectedLevenbergMarquardt {
    /// Backtracks along the projection arc `t -> P_X(x + t d)`; `None` when `t` falls below
    /// `t_min` or the arc stops being a descent path.
    fn arc_search<R: ProjectedResidual>(
        &self,
        problem: &mut Problem<LeastSquares<R>>,
        p: &LsPoint,
        d: &[f64],
        reference: f64,
    ) -> Result<Option<(f64, Trial)>, Error> {
        let mut t = 1.0;
        while t > self.t_min {
            let xt = project(problem, kit::axpy(&p.x, t, d))?;
            let s: Vec<f64> = xt.iter().zip(&p.x).map(|(a, b)| a - b).collect();
            let slope = kit::dot(&p.grad, &s);
            if slope.is_nan() || slope >= 0.0 {
                return Ok(None);
            }
            let tr = kit::trial(problem, xt)?;
            if tr.psi <= reference + self.sigma * slope {
                return Ok(Some((t, tr)));
            }
            t *= self.beta;
        }
        Ok(None)
    }

    /// The non-monotone reference `max` of the remembered merits.
    fn reference(&self, psi: f64) -> f64 {
        self.history.iter().copied().fold(psi, f64::max)
    }

    /// Records an accepted merit; the first steps after a (re)start keep the monotone rule.
    fn remember(&mut self, psi: f64) {
        self.since_start += 1;
        if self.since_start <= self.monotone_steps {
            self.history.clear();
        }
        self.history.push_back(psi);
        while self.history.len() > self.memory.max(1) {
            self.history.pop_front();
        }
    }

    fn stationarity_status<R: ProjectedResidual>(
        &self,
        problem: &mut Problem<LeastSquares<R>>,
        p: &LsPoint,
    ) -> Result<(Option<Status>, f64), Error> {
        let pg = projected_gradient_norm(problem, p)?;
        Ok((self.tol.classify_norms(p.measure, pg), pg))
    }
}

impl<R: ProjectedResidual> Solver<LeastSquares<R>, LsState> for ProjectedLevenbergMarquardt {
    fn name(&self) -> &str {
        "projected_levenberg_marquardt"
    }

    fn init(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        // LMMCP starts from the projection of x0 so that every iterate is feasible.
        let (state, start, mut kv) = kit::init(problem, state, |ls, x| ls.residual.project(x))?;
        (self.point, self.tol, self.stop) = (start.point, start.tol, start.stop);
        self.history.clear();
        (self.k, self.since_start) = (0, 0);
        self.best = None;
        if let Some(p) = self.point.clone() {
            let (stop, pg) = self.stationarity_status(problem, &p)?;
            self.stop = stop;
            kv.insert("pg_norm", pg.into());
            self.history.push_back(p.psi);
            self.best = Some((p, 0));
        }
        kv.insert("lambda", self.lambda.into());
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
        let mut lambda = self.lambda;
        let mut step = kit::damped_step_cond(&p, lambda);
        if matches!(step, Some((_, c)) if c > self.ill_conditioned) {
            lambda = self.lambda_ill / (self.k + 1) as f64;
            step = kit::damped_step_cond(&p, lambda);
        }
        let reference = self.reference(p.psi);
        let mut found = None;
        if let Some((d, _)) = &step {
            found = self
                .arc_search(problem, &p, d, reference)?
                .map(|r| (r, "levenberg_marquardt"));
        }
        if found.is_none() {
            let neg_g: Vec<f64> = p.grad.iter().map(|g| -g).collect();
            found = self
                .arc_search(problem, &p, &neg_g, reference)?
                .map(|r| (r, "projected_gradient"));
        }
        let Some(((t, tr), kind)) = found else {
            self.stop = Some(Status::LineSearchFailed);
            let kv = kit::iter_kv(&p, 0.0, "rejected", 0.0, Some(lambda));
            self.point = Some(p);
            return Ok((state, Some(kv)));
        };
        let s: Vec<f64> = tr.x.iter().zip(&p.x).map(|(a, b)| a - b).collect();
        let Some(q) = kit::accept(problem, tr)? else {
            self.stop = Some(Status::NotFinite);
            return Ok((state.cost(f64::NAN), None));
        };
        self.k += 1;
        self.remember(q.psi);
        let (stop, pg) = self.stationarity_status(problem, &q)?;
        self.stop = stop.or_else(|| self.tol.negligible(&p.x, &s).then_some(Status::Stagnated));
        let mut restarted = false;
        let mut next = q;
        match &self.best {
            Some((b, _)) if next.psi >= b.psi => {
                let kbest = self.best.as_ref().map_or(0, |(_, k)| *k);
                if self.stop.is_none() && self.k - kbest > self.kwatch {
                    // Watchdog: the non-monotone phase wandered; resume from the best point
                    // with the monotone rule.
                    next = b.clone();
                    self.best = Some((b.clone(), self.k));
                    self.history.clear();
                    self.history.push_back(next.psi);
                    self.since_start = 0;
                    restarted = true;
                }
            }
            _ => self.best = Some((next.clone(), self.k)),
        }
        // The row reports the iterate the next iteration starts from (the best one after a
        // restart), so the trace's merit column is the state's.
        let mut kv = kit::iter_kv(&next, kit::norm2(&s), kind, t, Some(lambda));
        kv.insert("pg_norm", pg.into());
        if restarted {
            kv.insert("restart", 1u64.into());
        }
        let state = kit::write_state(state, &next);
        self.point = Some(next);
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, _state: &LsState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
