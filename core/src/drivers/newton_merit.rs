//! Newton's method with an exact line search on a convex [`Merit`].
//!
//! Method: the Newton direction `H d = -g` by LLT (Nocedal and Wright, *Numerical
//! Optimization*, 2nd ed., sec. 3.3), and the exact line search SAP uses (Castro, Permenter
//! and Han 2022, sec. IV-B: `rtsafe` of Numerical Recipes sec. 9.4, a Newton-bisection root
//! search of `dl/dalpha` on
//! `(0, alpha_max]`, `alpha_max = 1.25`, with `l` convex along the line), falling back to Armijo
//! backtracking (Nocedal and Wright, Alg. 3.1) when the result fails sufficient decrease; or
//! SAP's alternative, Armijo backtracking from `alpha_max` by `rho = 0.8` with `c = 1e-4`.
//! With the same stopping rule as SAP this is Algorithm 2 of Castro et al.
//!
//! On a merit that separates over groups of unknowns ([`Merit::groups`]: a contact problem's
//! islands) the driver steps each group on its own, as MuJoCo's Newton solver does per island:
//! one factorization call for the groups that step, then each group's own exact line search,
//! and a group whose residual meets its share of the stopping bound rests. The stopping rule
//! is the whole merit's, unchanged; `island_iterations` counts the groups' steps.
//!
//! A merit that factors its own Hessian ([`Merit::newton_direction`]: SAP's body blocks) gives
//! the direction itself; otherwise a sparse Hessian ([`MeritHessian::Sparse`]) is factored by
//! faer's sparse Cholesky (supernodal where faer's analysis finds it pays), its symbolic
//! analysis kept and reused while the pattern stays the same (the counters
//! `symbolic_factorizations` and `numeric_factorizations` say how often each ran, either way). The stopping rule is the merit's
//! [`Optimality`]: `residual <= tol + rel_tol * scale` (eq. 26).

use argmin::core::{
    CostFunction, Error, Gradient, Hessian, IterState, Problem, Solver, State as _,
    TerminationStatus, KV,
};
use faer::linalg::solvers::Solve as _;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::SparseColMat;
use faer::{Mat, Side};

use super::kit::{self, Armijo};
use super::tolerances::Tolerances;
use crate::error::CoreError;
use crate::merit::{LinePoint, Merit, MeritEval, MeritHessian, Optimality, OwnNewton};
use crate::result::SolveOptions;
use crate::result::{Solution, Status};

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

impl<M: Merit> MeritProblem<M> {
    /// One evaluation of value, gradient and (with `hessian`) Hessian.
    pub fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        self.merit.evaluate(x, hessian)
    }
}

/// Minimizes a convex `merit` from `x0` with `solver`; converged when the merit's optimality
/// measure meets `opts.stop_tol` and `opts.rel_tol`.
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
    let tol = opts.stop_tol;
    let rel_tol = opts.rel_tol;
    let stop =
        |s: &MeritState| s.get_gradient().is_some_and(|g| kit::norm2(g) <= tol) && rel_tol == 0.0;
    super::execute::execute(problem, solver, x0, opts, stop)
}

/// A merit driver's start: the stopping rules, the start point evaluated, and the stop it
/// already warrants (`NotFinite`, or `Converged` by the merit's optimality).
pub(super) struct MeritStart {
    pub tol: Tolerances,
    pub x0: Vec<f64>,
    pub value: f64,
    pub gradient: Vec<f64>,
    pub stop: Option<Status>,
}

impl MeritStart {
    /// Reads the tolerances and the start point from `problem` and `state`, evaluates it once.
    pub fn evaluate<M: Merit>(
        problem: &mut Problem<MeritProblem<M>>,
        state: &MeritState,
    ) -> Result<MeritStart, Error> {
        let tol = problem
            .problem
            .as_ref()
            .map(|p| p.tolerances)
            .unwrap_or_default();
        let x0 = state.get_param().cloned().ok_or_else(|| {
            Error::msg("no initial point: configure the executor with `param(x0)`")
        })?;
        let e = problem.problem("evaluation_count", |mp| Ok(mp.evaluate(&x0, false)))?;
        let gnorm = kit::norm2(&e.gradient);
        let opt = problem
            .problem
            .as_ref()
            .map(|mp| mp.merit.optimality(&x0, &e.gradient));
        let stop = if !(e.value.is_finite() && gnorm.is_finite() && kit::all_finite(&x0)) {
            Some(Status::NotFinite)
        } else if opt.is_some_and(|o| o.met(tol.stop_tol, tol.rel_tol)) {
            Some(Status::Converged)
        } else {
            None
        };
        Ok(MeritStart {
            tol,
            x0,
            value: e.value,
            gradient: e.gradient,
            stop,
        })
    }
}

/// The stop an accepted step from `x` by `step` warrants, at the new point's `value`, gradient
/// `g` and optimality `opt`: `NotFinite`, `Converged` (eq. 26), `Stagnated` (a negligible step)
/// or none.
pub(super) fn stop_after_step(
    tol: &Tolerances,
    x: &[f64],
    step: &[f64],
    value: f64,
    g: &[f64],
    opt: Option<Optimality>,
) -> Option<Status> {
    if !(kit::norm2(g).is_finite() && value.is_finite()) {
        Some(Status::NotFinite)
    } else if opt.is_some_and(|o| o.met(tol.stop_tol, tol.rel_tol)) {
        Some(Status::Converged)
    } else if tol.negligible(x, step) {
        Some(Status::Stagnated)
    } else {
        None
    }
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

/// Which line search [`NewtonMerit`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// The exact search on `dl/dalpha` (SAP's preferred), Armijo as a fallback.
    #[default]
    Exact,
    /// Armijo backtracking only, from `alpha_max` (SAP's alternative, sec. IV-B).
    Backtracking,
}

/// SAP's backtracking line search: `alpha <- rho alpha` from `alpha_max` until Armijo holds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Backtracking {
    /// First trial step (paper: 1.25).
    pub alpha_max: f64,
    /// Reduction factor (paper: 0.8).
    pub rho: f64,
    /// Armijo constant (paper: 1e-4).
    pub c: f64,
    /// Reductions before the search fails.
    pub max_reductions: u32,
}

impl Default for Backtracking {
    /// Castro et al., sec. IV-B: `alpha_max = 1.25`, `rho = 0.8`, `c = 1e-4`; 200 reductions
    /// reach `alpha ~ 5e-20`.
    fn default() -> Self {
        Backtracking {
            alpha_max: 1.25,
            rho: 0.8,
            c: 1e-4,
            max_reductions: 200,
        }
    }
}

/// A kept symbolic Cholesky analysis and the pattern it was made for.
#[derive(Debug, Clone)]
struct Symbolic {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    llt: SymbolicLlt<usize>,
}

/// Newton's method on a convex [`Merit`] with an exact line search.
///
/// `step_kind` is `"newton"`, or `"gradient"` when the Hessian's LLT fails (steepest descent
/// keeps the method going on a merely semidefinite Hessian); `step_length` is `alpha`; the
/// extra column `armijo_fallback = 1` marks a step that came from the fallback backtracking.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonMerit {
    /// Which line search.
    pub search: SearchKind,
    /// The exact line search.
    pub line_search: ExactLineSearch,
    /// The fallback of the exact search; exhausting it stops with
    /// [`Status::LineSearchFailed`].
    pub armijo: Armijo,
    /// The backtracking search of [`SearchKind::Backtracking`].
    pub backtracking: Backtracking,
    /// On a merit that separates into groups ([`Merit::groups`]: a contact problem's islands),
    /// step each group on its own: its own line search, and a group whose residual meets its
    /// share of the stopping bound (`residual_k^2 <= bound^2 n_k / n`, so that all groups
    /// meeting theirs meet the whole bound) rests until the bound moves past it. The stopping
    /// test stays the whole merit's. Each group's steps count in `island_iterations`.
    pub by_island: bool,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    current: Option<(Vec<f64>, f64, Vec<f64>)>,
    /// The kept symbolic analysis, shared by the clones of one driver value, so that it
    /// survives from one solve to the next (time steps of a run) while the pattern holds.
    #[serde(skip)]
    symbolic: std::sync::Arc<std::sync::Mutex<Option<Symbolic>>>,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for NewtonMerit {
    /// The exact search ([`ExactLineSearch::default`], [`Armijo::default`] as fallback), island
    /// by island on a separable merit.
    fn default() -> Self {
        NewtonMerit {
            search: SearchKind::Exact,
            line_search: ExactLineSearch::default(),
            armijo: Armijo::default(),
            backtracking: Backtracking::default(),
            by_island: true,
            tol: Tolerances::default(),
            current: None,
            symbolic: Default::default(),
            stop: None,
        }
    }
}

/// What an iteration's line search found, for [`NewtonMerit::finish`].
struct Found<'a> {
    /// The direction's kind: `"newton"` or `"gradient"`.
    kind: &'a str,
    /// The step and its length (on a separable merit, the longest group's); `None` when the
    /// line search failed.
    step: Option<(Vec<f64>, f64)>,
    /// Whether the Armijo fallback was taken.
    fallback: bool,
    /// How many groups stepped, on a separable merit.
    groups_stepped: Option<u64>,
}

/// Whether the line search's point has a finite value, slope and curvature.
fn finite_point(lp: &LinePoint) -> bool {
    lp.value.is_finite() && lp.slope.is_finite() && lp.curvature.is_finite()
}

fn bump<P>(problem: &mut Problem<P>, key: &'static str) {
    *problem.counts.entry(key).or_insert(0) += 1;
}

/// Counts what a merit's own factorization did (`hessian_count`, and the symbolic and numeric
/// factorizations of a solve): `None` when it did not provide one, else whether `d` is a
/// finite Newton direction (`false` when the Hessian was not positive definite).
fn counted<P>(problem: &mut Problem<P>, own: OwnNewton, d: &[f64]) -> Option<bool> {
    if own != OwnNewton::NotProvided {
        bump(problem, "hessian_count");
    }
    match own {
        OwnNewton::NotProvided => None,
        OwnNewton::Solved { analysed } => {
            if analysed {
                bump(problem, "symbolic_factorizations");
            }
            bump(problem, "numeric_factorizations");
            Some(kit::all_finite(d))
        }
        OwnNewton::NotPositiveDefinite => Some(false),
    }
}

impl NewtonMerit {
    /// Solves `H d = -g` for a sparse SPD `H`, reusing the symbolic analysis while the pattern
    /// holds; `None` when the numeric factorization fails (not positive definite).
    fn sparse_direction<P>(
        &self,
        problem: &mut Problem<P>,
        h: &SparseColMat<usize, f64>,
        neg_g: &[f64],
    ) -> Option<Vec<f64>> {
        let (cp, ri) = (h.symbolic().col_ptr(), h.symbolic().row_idx());
        let symbolic = {
            let mut kept = self.symbolic.lock().unwrap_or_else(|p| p.into_inner());
            let same = kept
                .as_ref()
                .is_some_and(|s| s.col_ptr == cp && s.row_idx == ri);
            if !same {
                let llt = SymbolicLlt::try_new(h.symbolic(), Side::Lower).ok()?;
                bump(problem, "symbolic_factorizations");
                *kept = Some(Symbolic {
                    col_ptr: cp.to_vec(),
                    row_idx: ri.to_vec(),
                    llt,
                });
            }
            kept.as_ref()?.llt.clone()
        };
        let llt = Llt::try_new_with_symbolic(symbolic, h.as_ref(), Side::Lower).ok()?;
        bump(problem, "numeric_factorizations");
        let mut rhs = Mat::from_fn(neg_g.len(), 1, |i, _| neg_g[i]);
        llt.solve_in_place(rhs.as_mut());
        let d: Vec<f64> = (0..neg_g.len()).map(|i| rhs[(i, 0)]).collect();
        kit::all_finite(&d).then_some(d)
    }

    /// The direction from the merit's own factorization ([`Merit::newton_direction`]):
    /// `Some(Some(d))` solved, `Some(None)` not positive definite, `None` not provided.
    fn own_direction<M: Merit>(
        &self,
        problem: &mut Problem<MeritProblem<M>>,
        x: &[f64],
        g: &[f64],
    ) -> Option<Option<Vec<f64>>> {
        let mut d = vec![0.0; g.len()];
        let own = problem
            .problem
            .as_ref()
            .map_or(OwnNewton::NotProvided, |mp| {
                mp.merit.newton_direction(x, g, &mut d)
            });
        counted(problem, own, &d).map(|solved| solved.then_some(d))
    }

    /// The root of `dl/dalpha` in `(0, alpha_max]` (or `alpha_max` if `l` still decreases
    /// there), by `rtsafe` (Numerical Recipes, 3rd ed., sec. 9.4): Newton's method kept inside a
    /// shrinking bracket, bisecting when a Newton iterate would leave it, when the curvature is
    /// not positive, or when convergence is slow (the Newton step is not less than half the
    /// step before last: without that rule Newton can cycle between two points across a kink
    /// of `dl/dalpha`, as it did on clutter steps, ten trials for one line search).
    fn exact_search(
        &self,
        mut along: impl FnMut(f64) -> Result<LinePoint, Error>,
        slope0: f64,
    ) -> Result<Option<(f64, LinePoint)>, Error> {
        let ls = self.line_search;
        let (mut lo, mut hi) = (0.0, ls.alpha_max);
        let mut alpha = 1.0_f64.min(ls.alpha_max);
        let mut best = None;
        let mut first = true;
        // The step before last (rtsafe's `dxold`), starting as the bracket's width.
        let (mut step, mut step_before) = (ls.alpha_max, ls.alpha_max);
        for _ in 0..ls.max_iters {
            let lp = along(alpha)?;
            if !finite_point(&lp) {
                hi = alpha;
                alpha = 0.5 * (lo + hi);
                first = false;
                continue;
            }
            let done = lp.slope.abs() <= ls.rel_slope_tol * slope0.abs();
            // The Newton step first: when `l` still decreases there, the bracket's upper end is
            // `alpha_max`, taken when `l` decreases all the way to it. A Newton step that is
            // already the minimizer (the quadratic phase) costs one trial, not two.
            if std::mem::take(&mut first) && lp.slope < 0.0 && !done {
                if alpha >= ls.alpha_max {
                    return Ok(Some((alpha, lp)));
                }
                let at_max = along(ls.alpha_max)?;
                if finite_point(&at_max) && at_max.slope <= 0.0 {
                    return Ok(Some((ls.alpha_max, at_max)));
                }
            }
            best = Some((alpha, lp));
            if done {
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
            let slow = (2.0 * lp.slope).abs() > (step_before * lp.curvature).abs();
            let next = if lp.curvature > 0.0 && newton > lo && newton < hi && !slow {
                newton
            } else {
                0.5 * (lo + hi)
            };
            step_before = step;
            step = (next - alpha).abs();
            alpha = next;
        }
        Ok(best)
    }

    /// SAP's backtracking from `alpha_max`: the first `alpha` with Armijo's decrease, or, at
    /// the rounding floor where values no longer resolve the decrease, the first whose slope has
    /// shrunk by half with a value no worse than rounding (the exact search's rule).
    fn backtrack(
        &self,
        mut along: impl FnMut(f64) -> Result<LinePoint, Error>,
        value: f64,
        slope0: f64,
    ) -> Result<Option<(f64, f64)>, Error> {
        let b = self.backtracking;
        let rounding = 4.0 * f64::EPSILON * value.abs().max(f64::MIN_POSITIVE);
        let mut a = b.alpha_max;
        for _ in 0..=b.max_reductions {
            let lp = along(a)?;
            let armijo = lp.value.is_finite() && lp.value < value + b.c * a * slope0;
            let flat = lp.value.is_finite()
                && lp.value <= value + rounding
                && lp.slope.abs() < 0.5 * slope0.abs();
            if armijo || flat {
                return Ok(Some((a, lp.value)));
            }
            a *= b.rho;
        }
        Ok(None)
    }
}

impl NewtonMerit {
    /// The Newton direction at `x`: the merit's own factorization, else its Hessian factored
    /// here; `None` when the Hessian is not positive definite or the direction not finite.
    fn newton<M: Merit>(
        &self,
        problem: &mut Problem<MeritProblem<M>>,
        x: &[f64],
        g: &[f64],
    ) -> Result<Option<Vec<f64>>, Error> {
        if let Some(own) = self.own_direction(problem, x, g) {
            return Ok(own);
        }
        let neg_g: Vec<f64> = g.iter().map(|v| -v).collect();
        let e = problem.problem("hessian_count", |mp| Ok(mp.evaluate(x, true)))?;
        Ok(match &e.hessian {
            Some(MeritHessian::Dense(h)) => kit::solve_spd(h, &neg_g),
            Some(MeritHessian::Sparse(h)) => self.sparse_direction(problem, h, &neg_g),
            None => None,
        })
    }

    /// The step length along a direction from a point of value `value` and slope `slope0`
    /// (`along` gives the line's points): SAP's backtracking alone, or the exact search,
    /// accepted when it decreases enough or is flat at rounding, else Armijo's backtracking
    /// from 1 (Nocedal and Wright, Alg. 3.1) on the line's values. `(alpha, value)`, and whether
    /// the fallback found it.
    fn step_length(
        &self,
        mut along: impl FnMut(f64) -> Result<LinePoint, Error>,
        value: f64,
        slope0: f64,
    ) -> Result<(Option<(f64, f64)>, bool), Error> {
        if self.search == SearchKind::Backtracking {
            return Ok((self.backtrack(&mut along, value, slope0)?, false));
        }
        let exact = self.exact_search(&mut along, slope0)?;
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
        if let Some((a, lp)) = exact {
            if sufficient(a, lp.value) || flat(&lp) {
                return Ok((Some((a, lp.value)), false));
            }
        }
        let mut a = 1.0;
        for _ in 0..=self.armijo.max_reductions {
            let v = along(a)?.value;
            if sufficient(a, v) {
                return Ok((Some((a, v)), true));
            }
            a *= self.armijo.rho;
        }
        Ok((None, true))
    }

    /// Takes the step the line search found from `x` (its merit `value`, its gradient `g`;
    /// no step: stop), evaluates the new point and tests it.
    fn finish<M: Merit>(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
        x: Vec<f64>,
        value: f64,
        g: &[f64],
        found: Found<'_>,
    ) -> Result<(MeritState, Option<KV>), Error> {
        let Found {
            kind,
            step,
            fallback,
            groups_stepped,
        } = found;
        let Some((step, alpha)) = step else {
            self.stop = Some(Status::LineSearchFailed);
            let kv = argmin::kv!(
                "merit" => value; "grad_norm" => kit::norm2(g); "step_norm" => 0.0;
                "step_kind" => "rejected"; "step_length" => 0.0;
            );
            self.current = Some((x, value, g.to_vec()));
            return Ok((state, Some(kv)));
        };
        let x_new = kit::axpy(&x, 1.0, &step);
        let e = problem.problem("evaluation_count", |mp| Ok(mp.evaluate(&x_new, false)))?;
        let (new_value, g_new) = (e.value, e.gradient);
        let gnorm = kit::norm2(&g_new);
        let opt = problem
            .problem
            .as_ref()
            .map(|mp| mp.merit.optimality(&x_new, &g_new));
        self.stop = stop_after_step(&self.tol, &x, &step, new_value, &g_new, opt);
        let mut kv = argmin::kv!(
            "merit" => new_value; "grad_norm" => gnorm; "step_norm" => kit::norm2(&step);
            "step_kind" => kind; "step_length" => alpha;
        );
        if let Some(o) = opt {
            kv.insert("optimality", o.residual.into());
        }
        if fallback {
            kv.insert("armijo_fallback", 1u64.into());
        }
        if let Some(k) = groups_stepped {
            kv.insert("groups_stepped", k.into());
        }
        let state = state
            .param(x_new.clone())
            .cost(new_value)
            .gradient(g_new.clone());
        self.current = Some((x_new, new_value, g_new));
        Ok((state, Some(kv)))
    }

    /// One iteration on a separable merit ([`NewtonMerit::by_island`]): the groups whose
    /// residual exceeds their share of the stopping bound take a Newton step each, with their
    /// own line search, from one factorization of their blocks.
    fn next_iter_by_group<M: Merit>(
        &mut self,
        problem: &mut Problem<MeritProblem<M>>,
        state: MeritState,
        x: Vec<f64>,
        value: f64,
        g: Vec<f64>,
    ) -> Result<(MeritState, Option<KV>), Error> {
        let Some(mp) = problem.problem.as_ref() else {
            return Err(Error::msg("the merit problem is missing"));
        };
        let merit = &mp.merit;
        let groups = merit.groups().to_vec();
        let n = x.len().max(1) as f64;
        let o = merit.optimality(&x, &g);
        let bound = self.tol.stop_tol + self.tol.rel_tol * o.scale;
        let mut residuals = vec![0.0; groups.len()];
        merit.group_residuals(&x, &g, &mut residuals);
        // Shares proportional to the groups' sizes sum to the whole bound.
        let mut active: Vec<bool> = groups
            .iter()
            .zip(&residuals)
            .map(|(r, &e)| e * e > bound * bound * r.len() as f64 / n)
            .collect();
        if !active.contains(&true) {
            // Every share met but not the whole bound: rounding at its edge.
            active = residuals.iter().map(|&e| e > 0.0).collect();
        }
        let mut d = vec![0.0; x.len()];
        let own = merit.group_newton_direction(&x, &g, &active, &mut d);
        let newton = match counted(problem, own, &d) {
            Some(solved) => solved,
            None => match self.newton(problem, &x, &g)? {
                Some(whole) => {
                    for (r, _) in groups.iter().zip(&active).filter(|(_, &a)| a) {
                        d[r.clone()].copy_from_slice(&whole[r.clone()]);
                    }
                    true
                }
                None => false,
            },
        };
        let mut step = vec![0.0; x.len()];
        let (mut kind, mut fallback, mut longest, mut stepped) = ("newton", false, 0.0_f64, 0);
        for (k, r) in groups.iter().enumerate().filter(|&(k, _)| active[k]) {
            let mut slope0 = kit::dot(&g[r.clone()], &d[r.clone()]);
            if !(newton && slope0 < 0.0) {
                for i in r.clone() {
                    d[i] = -g[i];
                }
                slope0 = -kit::dot(&g[r.clone()], &g[r.clone()]);
                kind = "gradient";
            }
            if slope0 == 0.0 {
                continue;
            }
            // Counted here rather than through argmin's counters, a hash map entry per call.
            let (found, fb, calls) = {
                let merit = &problem
                    .problem
                    .as_ref()
                    .ok_or_else(|| Error::msg("the merit problem is missing"))?
                    .merit;
                let mut calls = 0;
                let mut along = |alpha: f64| {
                    calls += 1;
                    Ok(merit.along_group(k, &x, &d, alpha))
                };
                let value_k = merit.group_value(k, &x, &d);
                let (found, fb) = self.step_length(&mut along, value_k, slope0)?;
                (found, fb, calls)
            };
            *problem.counts.entry("along_line_count").or_insert(0) += calls;
            let Some((alpha, _)) = found else {
                let found = Found {
                    kind,
                    step: None,
                    fallback: fb,
                    groups_stepped: None,
                };
                return self.finish(problem, state, x, value, &g, found);
            };
            fallback |= fb;
            longest = longest.max(alpha);
            stepped += 1;
            for i in r.clone() {
                step[i] = alpha * d[i];
            }
        }
        *problem.counts.entry("island_iterations").or_insert(0) += stepped;
        let found = Found {
            kind,
            step: Some((step, longest)),
            fallback,
            groups_stepped: Some(stepped),
        };
        self.finish(problem, state, x, value, &g, found)
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
        let start = MeritStart::evaluate(problem, &state)?;
        self.tol = start.tol;
        self.stop = start.stop;
        let (x0, value, g) = (start.x0, start.value, start.gradient);
        let gnorm = kit::norm2(&g);
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
        let groups = problem
            .problem
            .as_ref()
            .map_or(0, |mp| mp.merit.groups().len());
        if self.by_island && groups > 1 {
            return self.next_iter_by_group(problem, state, x, value, g);
        }
        let (d, kind) = match self.newton(problem, &x, &g)? {
            Some(d) if kit::dot(&g, &d) < 0.0 => (d, "newton"),
            _ => (g.iter().map(|v| -v).collect(), "gradient"),
        };
        let slope0 = kit::dot(&g, &d);
        let along = |alpha: f64| {
            problem.problem("along_line_count", |mp| {
                Ok(mp.merit.along_line(&x, &d, alpha))
            })
        };
        let (found, fallback) = self.step_length(along, value, slope0)?;
        let step = found.map(|(alpha, _)| (d.iter().map(|v| alpha * v).collect(), alpha));
        let found = Found {
            kind,
            step,
            fallback,
            groups_stepped: None,
        };
        self.finish(problem, state, x, value, &g, found)
    }

    fn terminate(&mut self, _state: &MeritState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}
