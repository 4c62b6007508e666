//! Newton's method with an exact line search on a convex [`Merit`].
//!
//! Method: the Newton direction `H d = -g` by LLT (Nocedal and Wright, *Numerical
//! Optimization*, 2nd ed., sec. 3.3), and the exact line search SAP uses (Castro, Permenter
//! and Han 2022, sec. IV-B: `rtsafe` of Numerical Recipes sec. 9.4, a Newton-bisection root
//! search of `dl/dalpha` on
//! `(0, alpha_max]`, `alpha_max = 1.25`, with `l` convex along the line), falling back to Armijo
//! backtracking (Nocedal and Wright, Alg. 3.1) when the result fails sufficient decrease.

use argmin::core::{
    CostFunction, Error, Gradient, Hessian, IterState, Problem, Solver, State as _,
    TerminationStatus, KV,
};
use faer::Mat;

use super::kit::{self, Armijo};
use super::{SolveOptions, Tolerances};
use crate::{CoreError, LinePoint, Merit, Solution, Status};

/// argmin state of [`NewtonMerit`]: parameter `x`, gradient, cost `l(x)`.
pub type MeritState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// A [`Merit`] as an argmin problem (`cost`, `gradient`, `hessian`), carrying the
/// [`Tolerances`] the driver stops on.
#[derive(Debug, Clone)]
pub struct MeritProblem<M> {
    /// The merit.
    pub merit: M,
    /// Stopping rules read by the driver in `init`.
    pub tolerances: Tolerances,
}

impl<M: Merit> MeritProblem<M> {
    /// Wraps `merit` with the stopping rules of `opts`.
    pub fn with_options(merit: M, opts: &SolveOptions) -> Self {
        MeritProblem {
            merit,
            tolerances: Tolerances::from(opts),
        }
    }
}

impl<M: Merit> CostFunction for MeritProblem<M> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        Ok(self.merit.value(x))
    }
}

impl<M: Merit> Gradient for MeritProblem<M> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let mut g = vec![0.0; self.merit.dim()];
        self.merit.gradient(x, &mut g);
        Ok(g)
    }
}

impl<M: Merit> Hessian for MeritProblem<M> {
    type Param = Vec<f64>;
    type Hessian = Mat<f64>;

    fn hessian(&self, x: &Vec<f64>) -> Result<Mat<f64>, Error> {
        let n = self.merit.dim();
        let mut h = Mat::zeros(n, n);
        self.merit.hessian(x, h.as_mut());
        Ok(h)
    }
}

/// Minimizes a convex `merit` from `x0` with `solver`; converged when `|grad l| <= opts.tol`.
///
/// Same executor, trace and status conventions as
/// [`solve_least_squares`](super::solve_least_squares).
pub fn solve_merit<M, S>(
    merit: M,
    solver: S,
    x0: Vec<f64>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError>
where
    M: Merit,
    S: Solver<MeritProblem<M>, MeritState>,
{
    let problem = MeritProblem::with_options(merit, opts);
    let tol = opts.tol;
    super::execute(problem, solver, x0, opts, |s: &MeritState| {
        s.get_gradient().is_some_and(|g| kit::norm2(g) <= tol)
    })
}

/// Parameters of the exact line search.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExactLineSearch {
    /// Upper end of the search interval (SAP: 1.25).
    pub alpha_max: f64,
    /// Stop when `|dl/dalpha| <= rel_slope_tol |dl/dalpha(0)|`.
    pub rel_slope_tol: f64,
    /// Maximum root-search iterations.
    pub max_iters: u32,
}

impl Default for ExactLineSearch {
    /// `alpha_max = 1.25` (Castro et al. 2022), slope reduced by `1e-10`, 100 iterations.
    fn default() -> Self {
        ExactLineSearch {
            alpha_max: 1.25,
            rel_slope_tol: 1e-10,
            max_iters: 100,
        }
    }
}

/// Newton's method on a convex [`Merit`] with an exact line search.
///
/// `step_kind` is `"newton"`, or `"gradient"` when the Hessian's LLT fails (steepest descent
/// keeps the method going on a merely semidefinite Hessian); `step_length` is `alpha`; the
/// extra column `armijo_fallback = 1` marks a step that came from the fallback backtracking.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonMerit {
    /// The exact line search.
    pub line_search: ExactLineSearch,
    /// The fallback; exhausting it stops with [`Status::LineSearchFailed`].
    pub armijo: Armijo,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    current: Option<(Vec<f64>, f64, Vec<f64>)>,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for NewtonMerit {
    /// [`ExactLineSearch::default`] and [`Armijo::default`].
    fn default() -> Self {
        NewtonMerit {
            line_search: ExactLineSearch::default(),
            armijo: Armijo::default(),
            tol: Tolerances::default(),
            current: None,
            stop: None,
        }
    }
}

fn finite_point(lp: &LinePoint) -> bool {
    lp.value.is_finite() && lp.slope.is_finite() && lp.curvature.is_finite()
}

impl NewtonMerit {
    /// The root of `dl/dalpha` in `(0, alpha_max]` (or `alpha_max` if `l` still decreases
    /// there), by Newton's method kept inside a shrinking bracket, bisecting when a Newton
    /// iterate leaves it or the curvature is not positive.
    fn exact_search<M: Merit>(
        &self,
        problem: &mut Problem<MeritProblem<M>>,
        x: &[f64],
        d: &[f64],
        slope0: f64,
    ) -> Result<Option<(f64, LinePoint)>, Error> {
        let ls = self.line_search;
        let mut along = |alpha: f64| {
            problem.problem("along_line_count", |mp| {
                Ok(mp.merit.along_line(x, d, alpha))
            })
        };
        let at_max = along(ls.alpha_max)?;
        if finite_point(&at_max) && at_max.slope <= 0.0 {
            return Ok(Some((ls.alpha_max, at_max)));
        }
        let (mut lo, mut hi) = (0.0, ls.alpha_max);
        let mut alpha = 1.0_f64.min(ls.alpha_max);
        let mut best = None;
        for _ in 0..ls.max_iters {
            let lp = along(alpha)?;
            if !finite_point(&lp) {
                hi = alpha;
                alpha = 0.5 * (lo + hi);
                continue;
            }
            best = Some((alpha, lp));
            if lp.slope.abs() <= ls.rel_slope_tol * slope0.abs() {
                break;
            }
            if lp.slope < 0.0 {
                lo = alpha;
            } else {
                hi = alpha;
            }
            if hi - lo <= 1e-14 * ls.alpha_max {
                break;
            }
            let newton = alpha - lp.slope / lp.curvature;
            alpha = if lp.curvature > 0.0 && newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
        }
        Ok(best)
    }
}

impl<M: Merit> Solver<MeritProblem<M>, MeritState> for NewtonMerit {
    fn name(&self) -> &str {
        "newton_merit"
    }

    fn init(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
    ) -> Result<(MeritState, Option<KV>), Error> {
        self.tol = problem
            .problem
            .as_ref()
            .map(|p| p.tolerances)
            .unwrap_or_default();
        let x0 = state.get_param().cloned().ok_or_else(|| {
            Error::msg("no initial point: configure the executor with `param(x0)`")
        })?;
        let value = problem.cost(&x0)?;
        let g = problem.gradient(&x0)?;
        let gnorm = kit::norm2(&g);
        self.stop = if !(value.is_finite() && gnorm.is_finite() && kit::all_finite(&x0)) {
            Some(Status::NotFinite)
        } else if gnorm <= self.tol.tol {
            Some(Status::Converged)
        } else {
            None
        };
        let kv = argmin::kv!("merit" => value; "grad_norm" => gnorm;);
        let state = state.param(x0.clone()).cost(value).gradient(g.clone());
        self.current = Some((x0, value, g));
        Ok((state, Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
    ) -> Result<(MeritState, Option<KV>), Error> {
        let Some((x, value, g)) = self.current.take() else {
            self.stop = Some(Status::NotFinite);
            return Ok((state, None));
        };
        let h = problem.hessian(&x)?;
        let neg_g: Vec<f64> = g.iter().map(|v| -v).collect();
        let (d, kind) = match kit::solve_spd(&h, &neg_g) {
            Some(d) if kit::dot(&g, &d) < 0.0 => (d, "newton"),
            _ => (neg_g, "gradient"),
        };
        let slope0 = kit::dot(&g, &d);
        let exact = self.exact_search(problem, &x, &d, slope0)?;
        let sufficient = |a: f64, v: f64| v.is_finite() && v <= value + self.armijo.c * a * slope0;
        // Near the minimizer the decrease `~ |g|^2` drops below the rounding of `l` and the
        // Armijo test on values becomes noise; the slope still resolves it, so a point no
        // worse than rounding whose slope has shrunk is the exact search doing its job.
        let rounding = 4.0 * f64::EPSILON * value.abs().max(f64::MIN_POSITIVE);
        let flat = |lp: &LinePoint| {
            lp.value.is_finite()
                && lp.value <= value + rounding
                && lp.slope.abs() < 0.5 * slope0.abs()
        };
        let mut fallback = false;
        let found = match exact {
            Some((a, lp)) if sufficient(a, lp.value) || flat(&lp) => Some((a, lp.value)),
            _ => {
                fallback = true;
                let mut a = 1.0;
                let mut hit = None;
                for _ in 0..=self.armijo.max_reductions {
                    let v = problem.cost(&kit::axpy(&x, a, &d))?;
                    if sufficient(a, v) {
                        hit = Some((a, v));
                        break;
                    }
                    a *= self.armijo.rho;
                }
                hit
            }
        };
        let Some((alpha, new_value)) = found else {
            self.stop = Some(Status::LineSearchFailed);
            let kv = argmin::kv!(
                "merit" => value; "grad_norm" => kit::norm2(&g); "step_norm" => 0.0;
                "step_kind" => "rejected"; "step_length" => 0.0;
            );
            self.current = Some((x, value, g));
            return Ok((state, Some(kv)));
        };
        let step: Vec<f64> = d.iter().map(|v| alpha * v).collect();
        let x_new = kit::axpy(&x, 1.0, &step);
        let g_new = problem.gradient(&x_new)?;
        let gnorm = kit::norm2(&g_new);
        self.stop = if !(gnorm.is_finite() && new_value.is_finite()) {
            Some(Status::NotFinite)
        } else if gnorm <= self.tol.tol {
            Some(Status::Converged)
        } else if self.tol.negligible(&x, &step) {
            Some(Status::Stagnated)
        } else {
            None
        };
        let mut kv = argmin::kv!(
            "merit" => new_value; "grad_norm" => gnorm; "step_norm" => kit::norm2(&step);
            "step_kind" => kind; "step_length" => alpha;
        );
        if fallback {
            kv.insert("armijo_fallback", 1u64.into());
        }
        let state = state
            .param(x_new.clone())
            .cost(new_value)
            .gradient(g_new.clone());
        self.current = Some((x_new, new_value, g_new));
        Ok((state, Some(kv)))
    }

    fn terminate(&mut self, _state: &MeritState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
