//! Regular Levenberg-Marquardt (RLM) as Mylapilli and Jain use it.
//!
//! Source: Mylapilli and Jain, "Evaluation of complementarity techniques for minimal
//! coordinate contact dynamics", DETC2014-34322, section "Unconstrained optimization
//! algorithms", *Algorithm: Regular LMA (RLM)* (adopted there from Bazaraa, Sherali and Shetty,
//! *Nonlinear Programming*). The paper's step 1 writes `H = J'J + lambda I` (a multiple of the
//! identity, not Marquardt's `diag(J'J)`) and `dx = H^{-1} (J' phi)`; the sign is a typo, the
//! descent step is `-H^{-1} J' phi`. Step 4's ratio `r` is the actual over the predicted
//! decrease of the quadratic model `q(d) = |F + J d|^2 / 2`; step 5: `r < 0.3` multiplies
//! `lambda` by `lambda_step = 20`, `r > 0` accepts the step, `r > 0.8` divides `lambda` by 20.
//! The paper lists `lambda_min = 1e-25` without its use; here `lambda` never drops below it
//! (Bazaraa's and Tassa's codes switch to pure Gauss-Newton there, which makes the LLT fail
//! on rank-deficient Jacobians, while `1e-25` is as good as zero otherwise).

use argmin::core::{Error, Problem, Solver, TerminationStatus, KV};
use faer::Mat;

use super::kit::{self, LsPoint};
use super::least_squares::{LeastSquares, LsState};
use super::tolerances::Tolerances;
use crate::residual::Residual;
use crate::result::Status;

/// Regular Levenberg-Marquardt: solves `(J'J + lambda I) d = -J'F` by LLT and adapts `lambda`
/// from the ratio of actual to predicted decrease (Mylapilli and Jain 2014, RLM).
///
/// Every trial is one iteration; a rejected trial reports `step_kind = "rejected"` and keeps
/// the iterate, an accepted one `"levenberg_marquardt"`. The trace's `lambda` is the damping
/// the step was computed with. The counters `linear_solves` and `linear_solve_nanoseconds` give
/// the number of damped systems factored (one per iteration) and the time in their LLT.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LevenbergMarquardt {
    /// Initial damping `lambda_LM`.
    pub lambda0: f64,
    /// Multiplier `lambda_step` applied on poor steps and divided out on good ones.
    pub factor: f64,
    /// `r` below which `lambda` grows (`r_min`).
    pub r_low: f64,
    /// `r` above which `lambda` shrinks (`r_max`).
    pub r_high: f64,
    /// `r` above which the step is accepted.
    pub r_accept: f64,
    /// Floor of `lambda`.
    pub lambda_min: f64,
    /// Ceiling of `lambda`: reaching it means no step of any length decreases `psi`, and the
    /// driver stops with [`Status::Stagnated`].
    pub lambda_max: f64,
    #[serde(skip)]
    lambda: f64,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    point: Option<LsPoint>,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for LevenbergMarquardt {
    /// The paper's values: `lambda0 = 1e-3`, factor 20, `r_min = 0.3`, `r_max = 0.8`, accept
    /// when `r > 0`, `lambda_min = 1e-25`; `lambda_max = 1e30` is ours.
    fn default() -> Self {
        LevenbergMarquardt {
            lambda0: 1e-3,
            factor: 20.0,
            r_low: 0.3,
            r_high: 0.8,
            r_accept: 0.0,
            lambda_min: 1e-25,
            lambda_max: 1e30,
            lambda: 1e-3,
            tol: Tolerances::default(),
            point: None,
            stop: None,
        }
    }
}

/// `(J'J + lambda I) d = -J'F`; `None` if the system is numerically singular. Also returns the
/// nanoseconds of the factorization and solve (forming `J'J` excluded).
fn lm_step(p: &LsPoint, lambda: f64) -> (Option<Vec<f64>>, u64) {
    let mut a: Mat<f64> = kit::gram(p.jac.as_ref());
    for i in 0..a.nrows() {
        a[(i, i)] += lambda;
    }
    let neg_g: Vec<f64> = p.grad.iter().map(|g| -g).collect();
    kit::timed(|| kit::solve_spd(&a, &neg_g))
}

impl<R: Residual> Solver<LeastSquares<R>, LsState> for LevenbergMarquardt {
    fn name(&self) -> &str {
        "levenberg_marquardt"
    }

    fn init(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        let (state, start, mut kv) = kit::init(problem, state, |_, _| {})?;
        (self.point, self.tol, self.stop) = (start.point, start.tol, start.stop);
        kit::count_linear_solves(problem, 0, 0);
        self.lambda = self.lambda0;
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
        let lambda = self.lambda;
        let (d, nanos) = lm_step(&p, lambda);
        kit::count_linear_solves(problem, 1, nanos);
        let Some(d) = d else {
            // A singular damped system is cured by more damping, as a poor step is.
            self.lambda = (lambda * self.factor).min(self.lambda_max);
            if lambda >= self.lambda_max {
                self.stop = Some(Status::SingularSystem);
            }
            let kv = kit::iter_kv(&p, 0.0, "rejected", 0.0, Some(lambda));
            self.point = Some(p);
            return Ok((state, Some(kv)));
        };
        let pred = kit::predicted_decrease(&p, &d);
        let t = kit::trial(problem, kit::axpy(&p.x, 1.0, &d))?;
        let r = if pred > 0.0 {
            (p.psi - t.psi) / pred
        } else {
            f64::NEG_INFINITY
        };
        let r = if r.is_nan() { f64::NEG_INFINITY } else { r };
        if r < self.r_low {
            self.lambda = (lambda * self.factor).min(self.lambda_max);
        }
        let step_norm = kit::norm2(&d);
        // `r` is never NaN here (mapped to -inf above).
        if r <= self.r_accept {
            self.stop = if self.tol.negligible(&p.x, &d) || lambda >= self.lambda_max {
                Some(Status::Stagnated)
            } else {
                None
            };
            let mut kv = kit::iter_kv(&p, step_norm, "rejected", 0.0, Some(lambda));
            kv.insert("ratio", r.max(-1e300).into());
            self.point = Some(p);
            return Ok((state, Some(kv)));
        }
        if r > self.r_high {
            self.lambda = (lambda / self.factor).max(self.lambda_min);
        }
        let Some(q) = kit::accept(problem, t)? else {
            self.stop = Some(Status::NotFinite);
            return Ok((state.cost(f64::NAN), None));
        };
        self.stop = self.tol.after_step(&p.x, &d, &q);
        let mut kv = kit::iter_kv(&q, step_norm, "levenberg_marquardt", 1.0, Some(lambda));
        kv.insert("ratio", r.into());
        let state = kit::write_state(state, &q);
        self.point = Some(q);
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, _state: &LsState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
