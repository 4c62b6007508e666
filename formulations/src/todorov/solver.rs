//! Todorov's non-smooth Gauss-Newton/Levenberg-Marquardt with dogleg and edge-aware line
//! search (Todorov 2010, section III, pseudocode III-E), on any
//! [`NonSmoothResidual`].
//!
//! One iteration at `x`, with `l = |r|^2 / 2`, `g = J' r`, `H = J' J + lambda I` (eqs. 19-21):
//!
//! 1. For every edge the point lies on ([`NonSmoothResidual::edges_at`]), compare the one-sided
//!    directional derivatives `delta_1 = r' J_1 d`, `delta_2 = -r' J_2 d` (eq. 25). If one is
//!    negative, take the Jacobian of the steeper side; otherwise the edge is *active*: mix the
//!    two Jacobians by eq. 26 and restrict the step to the edge's tangent space (the block
//!    `B_k` of eq. 29: an orthonormal basis of the complement of the edge normal, which spans
//!    the paper's tangent vectors).
//! 2. Newton point `x_N = x + B (B'HB)^-1 B' (-g)` (eq. 28), projected back onto active curved
//!    edges. Accept it when the actual decrease of `l` is at least `accept_ratio` (50%) of the
//!    decrease predicted by the quadratic model (23); then decrease `lambda`.
//! 3. Otherwise increase `lambda`, form the Cauchy point `x_C` (eq. 28), projected onto active
//!    curved edges, split the dogleg path `x -> x_C -> x_N` at its kinks
//!    ([`NonSmoothResidual::kinks_on_segment`], eq. 27) into smooth sub-segments, run a cubic
//!    line search in each, and take the best point found (kink crossings included: landing on
//!    an edge is how chattering stops). If no point improves on `x`, stop at a local minimum.
//!
//! On a residual that declares no edges (the default of [`NonSmoothResidual::edges_at`]: the
//! min-map, a notebook's residual), steps 1-2 see every point as smooth and the kink-aware
//! line search of step 3 is the edge machinery left. The residual supplies `J'J` and `g`
//! through [`NonSmoothResidual::normal_equations`], so the implicit NCP keeps its O(n^2)
//! kernel (`ImplicitNcp::normal_matrix`) while any other residual gets the dense product.
//!
//! The paper gives no numbers for the `lambda` schedule; we start at `lambda_0 = 1e-10` times
//! the mean diagonal of `J'J` (so the schedule is scale-free; small, so that a Newton step on a
//! piecewise-linear piece is exact to that order, as the ball-drop test's one iteration needs),
//! and divide / multiply by 10.
//! The iteration count is the number of steps taken (a start that already satisfies the
//! tolerance takes 0), which is how the ball-drop test can take "one iteration".

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::cholesky::llt::solve::solve_in_place;
use faer::{Mat, Par};
use serde::{Deserialize, Serialize};

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use contactlab_core::deadline::Deadline;
use contactlab_core::dense::{resize, resize_zeroed};
use contactlab_core::drivers::execute::execute;
use contactlab_core::drivers::kit::{self, axpy, cubic_minimizer, dot};
use contactlab_core::plugin::{Driver, DriverPlugin, NeedsNonSmooth};
use contactlab_core::{
    CoreError, Edge, EdgeMix, NonSmoothResidual, NormalEquations, Solution, SolveOptions, Status,
};

/// Todorov's driver and its parameters (the typed options of `--optimizer todorov`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Todorov {
    /// Initial `lambda`, relative to the mean diagonal of `J'J` at the start.
    pub lambda0: f64,
    /// Factor by which `lambda` grows after a rejected Newton point.
    pub lambda_up: f64,
    /// Factor by which `lambda` shrinks after an accepted Newton point.
    pub lambda_down: f64,
    /// Lower bound on `lambda`, relative to the mean diagonal of `J'J` at the start.
    pub lambda_min: f64,
    /// Newton point accepted when actual decrease >= this share of the predicted one (paper: 50%).
    pub accept_ratio: f64,
    /// Use the edge machinery (Jacobian selection and mixing, tangent-space restriction,
    /// projection onto curved edges, kink-aware line search). `false` gives plain LM-dogleg
    /// with a line search on the whole segments, for the ablation of the paper's open question.
    pub edge_aware: bool,
}

impl Default for Todorov {
    fn default() -> Self {
        Todorov {
            lambda0: 1e-10,
            lambda_up: 10.0,
            lambda_down: 10.0,
            lambda_min: 1e-14,
            accept_ratio: 0.5,
            edge_aware: true,
        }
    }
}

impl<R: NonSmoothResidual + ?Sized> Driver<R> for Todorov {
    fn solve(
        &self,
        residual: &R,
        x0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        solve_todorov(residual, TodorovSolver::new(self.clone()), x0, opts)
    }
}

impl DriverPlugin for Todorov {
    type Needs = NeedsNonSmooth;
    const NAME: &'static str = "todorov";
    const DESCRIPTION: &'static str =
        "Todorov 2010 LM-dogleg with Jacobian selection on edges and edge-aware cubic line search";

    fn check(&self) -> Result<(), CoreError> {
        let bad = |name: &str, v: f64, want: &str| {
            Err(CoreError::BadOption(format!(
                "todorov option {name} must be {want}, got {v}"
            )))
        };
        if !(self.lambda0 > 0.0 && self.lambda0.is_finite()) {
            return bad("lambda0", self.lambda0, "positive");
        }
        if !(self.lambda_up > 1.0 && self.lambda_up.is_finite()) {
            return bad("lambda_up", self.lambda_up, "above 1");
        }
        if !(self.lambda_down > 1.0 && self.lambda_down.is_finite()) {
            return bad("lambda_down", self.lambda_down, "above 1");
        }
        if !(self.lambda_min >= 0.0 && self.lambda_min.is_finite()) {
            return bad("lambda_min", self.lambda_min, "non-negative");
        }
        if !(self.accept_ratio > 0.0 && self.accept_ratio < 1.0) {
            return bad("accept_ratio", self.accept_ratio, "in (0, 1)");
        }
        Ok(())
    }
}

/// How one iteration moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// The Newton point was accepted.
    Newton,
    /// The line search on the dogleg path found a better point inside a smooth sub-segment.
    Dogleg,
    /// The line search's best point is a kink crossing.
    Edge,
    /// No point on the dogleg path improves the merit.
    LocalMinimum,
    /// The time limit ran out inside the iteration; the point did not move.
    Timeout,
}

impl StepKind {
    /// Name used in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Newton => "newton",
            StepKind::Dogleg => "dogleg",
            StepKind::Edge => "edge",
            StepKind::LocalMinimum => "local_minimum",
            StepKind::Timeout => "timeout",
        }
    }
}

/// The record of one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationReport {
    /// How the iteration moved.
    pub kind: StepKind,
    /// `lambda` after the iteration.
    pub lambda: f64,
    /// Edges active (Jacobians mixed, step restricted) at the start of the iteration.
    pub active_edges: usize,
    /// Merit `|r|^2/2` at the new point.
    pub merit: f64,
    /// `|g|` at the start of the iteration.
    pub grad_norm: f64,
    /// `|x_new - x|`.
    pub step_norm: f64,
    /// Where a line-search step landed on the dogleg path `x -> x_C -> x_N`: `t` in `(0, 1]` on
    /// the leg `x : x_C` (1 is `x_C`), `1 + t` on the leg `x_C : x_N` (2 is `x_N`); `None` for
    /// an accepted Newton point or a step that did not move. The paper reports where these
    /// steps land (section IV: "almost always in the segment `x_C : x_N`").
    pub path_position: Option<f64>,
    /// Linear systems factored and solved in the iteration (more than one when a numerically
    /// singular `H` is retried with a larger `lambda`).
    pub linear_solves: u64,
    /// Wall-clock nanoseconds spent factoring and solving them (the `O(n^3)` part whose size
    /// section I-B counts).
    pub linear_solve_nanoseconds: u64,
}

/// Todorov's driver while it runs: the parameters and `lambda` between iterations.
#[derive(Debug, Clone)]
pub struct TodorovSolver {
    /// The parameters.
    pub params: Todorov,
    /// Current `lambda` (absolute); `None` until the first iteration sets it.
    lambda: Option<f64>,
    /// Mean diagonal of `J'J` at the first iteration: the scale of `lambda`.
    scale: f64,
    /// The `n x n` buffers one iteration fills, kept between iterations.
    scratch: Scratch,
}

/// The dense buffers of one iteration, handed from one to the next: on a pile of a hundred
/// contacts `J'J` and the factored `H` are ~1 MB each, and allocating them afresh every
/// iteration cost a fifth of its time in page faults and zeroing (perf, clutter with 110
/// contacts).
#[derive(Debug, Clone)]
struct Scratch {
    /// `J'J` and `g` ([`NonSmoothResidual::normal_equations_into`]).
    normal: NormalEquations,
    /// `H = J'J + lambda I`, factored in place.
    h: Mat<f64>,
    /// `H B` on a step restricted to active edges.
    hb: Mat<f64>,
    /// `B'HB`, factored in place.
    bhb: Mat<f64>,
}

impl Default for Scratch {
    /// Empty buffers: the first iteration sizes them.
    fn default() -> Self {
        Scratch {
            normal: NormalEquations::default(),
            h: Mat::new(),
            hb: Mat::new(),
            bhb: Mat::new(),
        }
    }
}

impl Default for TodorovSolver {
    /// A solver with the default parameters.
    fn default() -> Self {
        TodorovSolver::new(Todorov::default())
    }
}

/// What the linearisation at `x` gives: residual, `J'J` and `g`, and the active edges.
struct Linearization {
    merit: f64,
    normal: NormalEquations,
    /// The edges where the Jacobians were mixed and the step is restricted.
    active: Vec<Edge>,
}

impl Linearization {
    /// `J'J`.
    fn jtj(&self) -> &Mat<f64> {
        &self.normal.jtj
    }

    /// `g = J'r`.
    fn g(&self) -> &[f64] {
        &self.normal.gradient
    }
}

/// `r(x)`.
fn eval<R: NonSmoothResidual + ?Sized>(f: &R, x: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; f.num_residuals()];
    f.residual(x, &mut r);
    r
}

impl TodorovSolver {
    /// A solver with the given parameters.
    pub fn new(params: Todorov) -> TodorovSolver {
        TodorovSolver {
            params,
            lambda: None,
            scale: 1.0,
            scratch: Scratch::default(),
        }
    }

    /// The current `lambda`.
    pub fn lambda(&self) -> Option<f64> {
        self.lambda
    }

    /// Eq. 25-26: one-sided slopes on each edge pick a side or, when neither side descends,
    /// mix the two Jacobians and make the edge active.
    fn linearize<R: NonSmoothResidual + ?Sized>(&mut self, f: &R, x: &[f64]) -> Linearization {
        let r = eval(f, x);
        let mut edges = Vec::new();
        if self.params.edge_aware {
            f.edges_at(x, &mut edges);
        }
        let mut slopes = Vec::with_capacity(edges.len());
        f.edge_slopes(x, &r, &edges, &mut slopes);
        let mut mixes = Vec::with_capacity(edges.len());
        let mut active = Vec::new();
        for (k, &(delta1, delta2)) in slopes.iter().enumerate() {
            if delta1 < 0.0 || delta2 < 0.0 {
                let plus = if delta1 <= delta2 { 1.0 } else { 0.0 };
                mixes.push(EdgeMix {
                    edge: k,
                    plus,
                    minus: 1.0 - plus,
                });
            } else {
                let s = delta1 + delta2;
                let (plus, minus) = if s > 0.0 {
                    (delta2 / s, delta1 / s)
                } else {
                    (0.5, 0.5)
                };
                mixes.push(EdgeMix {
                    edge: k,
                    plus,
                    minus,
                });
                active.push(edges[k].clone());
            }
        }
        let mut normal = std::mem::take(&mut self.scratch.normal);
        f.normal_equations_into(x, &r, &edges, &mixes, &mut normal);
        Linearization {
            merit: kit::merit_of(&r),
            normal,
            active,
        }
    }

    /// Projects the point back onto the active curved edges (section III-D).
    fn project_active<R: NonSmoothResidual + ?Sized>(f: &R, lin: &Linearization, x: &mut [f64]) {
        for e in lin.active.iter().filter(|e| e.curved) {
            f.project_onto_edge(e, x);
        }
    }

    /// One iteration from `x` (section III-E): the new point and what happened. Convergence is
    /// tested by the caller; `deadline` stops the damping retries and the line search (the
    /// point stays).
    pub fn iterate<R: NonSmoothResidual + ?Sized>(
        &mut self,
        f: &R,
        x: &[f64],
        deadline: Deadline,
    ) -> (Vec<f64>, IterationReport) {
        let lin = self.linearize(f, x);
        let lambda = self.current_lambda(lin.jtj(), x.len());
        let scratch = std::mem::take(&mut self.scratch);
        let mut model = Model::new(lin, x.len(), scratch);
        let out = self.iterate_on(f, x, &mut model, lambda, deadline);
        self.scratch = model.into_scratch();
        out
    }

    /// [`Self::iterate`] on the model of the linearisation at `x`, from `lambda`.
    fn iterate_on<R: NonSmoothResidual + ?Sized>(
        &mut self,
        f: &R,
        x: &[f64],
        model: &mut Model,
        lambda: f64,
        deadline: Deadline,
    ) -> (Vec<f64>, IterationReport) {
        let merit0 = model.lin.merit;
        let mut lam = lambda;
        let Some(x_n) = self.newton_point(f, x, model, &mut lam, deadline) else {
            let report = model.report(StepKind::Timeout, lam, merit0, &[], None);
            return (x.to_vec(), report);
        };
        let e_n: Vec<f64> = x_n.iter().zip(x).map(|(a, b)| a - b).collect();
        let merit_n = kit::merit_of(&eval(f, &x_n));
        let pred_n = model.predicted(&e_n, lam);
        if pred_n > 0.0 && merit0 - merit_n >= self.params.accept_ratio * pred_n {
            let floor = self.params.lambda_min * self.scale;
            let next = (lam / self.params.lambda_down).max(floor);
            self.lambda = Some(next);
            let report = model.report(StepKind::Newton, next, merit_n, &e_n, None);
            return (x_n, report);
        }
        lam *= self.params.lambda_up;
        self.lambda = Some(lam);
        if deadline.expired() {
            let report = model.report(StepKind::Timeout, lam, merit0, &[], None);
            return (x.to_vec(), report);
        }
        let x_c = model.cauchy_point(f, x, lam);
        // Edge-aware line search over x -> x_C -> x_N.
        let best = self.search_path(f, &[x.to_vec(), x_c, x_n], merit0, deadline);
        let kind = if best.merit < merit0 {
            if best.on_edge {
                StepKind::Edge
            } else {
                StepKind::Dogleg
            }
        } else if deadline.expired() {
            StepKind::Timeout
        } else {
            StepKind::LocalMinimum
        };
        if matches!(kind, StepKind::LocalMinimum | StepKind::Timeout) {
            return (x.to_vec(), model.report(kind, lam, merit0, &[], None));
        }
        let step: Vec<f64> = best.x.iter().zip(x).map(|(a, b)| a - b).collect();
        let report = model.report(kind, lam, best.merit, &step, Some(best.position));
        (best.x, report)
    }

    /// This iteration's `lambda`. The first sets the schedule's scale, the mean diagonal of
    /// `J'J` (1 when that is not positive), and starts at `lambda_0` times it.
    fn current_lambda(&mut self, jtj: &Mat<f64>, n: usize) -> f64 {
        if self.lambda.is_none() {
            let mean_diag = (0..n).map(|i| jtj[(i, i)]).sum::<f64>() / n.max(1) as f64;
            self.scale = if mean_diag > 0.0 && mean_diag.is_finite() {
                mean_diag
            } else {
                1.0
            };
        }
        *self.lambda.get_or_insert(self.params.lambda0 * self.scale)
    }

    /// The Newton point (eq. 28) from `x`, projected onto the active curved edges; while `H`
    /// is numerically singular, `lam` grows by `lambda_up` and the step is retried. `x` itself
    /// once `lam` is no longer finite; `None` when the deadline passed between retries.
    fn newton_point<R: NonSmoothResidual + ?Sized>(
        &self,
        f: &R,
        x: &[f64],
        model: &mut Model,
        lam: &mut f64,
        deadline: Deadline,
    ) -> Option<Vec<f64>> {
        loop {
            let (step, nanos) = model.newton_step(*lam);
            model.linear_solves += 1;
            model.linear_solve_nanoseconds += nanos;
            if let Some(step) = step {
                let mut xn = axpy(x, 1.0, &step);
                Self::project_active(f, &model.lin, &mut xn);
                return Some(xn);
            }
            *lam *= self.params.lambda_up;
            if !lam.is_finite() {
                return Some(x.to_vec());
            }
            if deadline.expired() {
                return None;
            }
        }
    }

    /// Searches the polyline through `points` and returns the best point found: its merit,
    /// whether it is a kink crossing, and where on the polyline it lies (`k + t` on the
    /// `k`-th leg, `t` in `(0, 1]`).
    fn search_path<R: NonSmoothResidual + ?Sized>(
        &self,
        f: &R,
        points: &[Vec<f64>],
        merit0: f64,
        deadline: Deadline,
    ) -> PathPoint {
        let mut best = PathPoint {
            x: points[0].clone(),
            merit: merit0,
            on_edge: false,
            position: 0.0,
        };
        let mut consider = |p: PathPoint| {
            if p.merit < best.merit {
                best = p;
            }
        };
        for (leg, seg) in points.windows(2).enumerate() {
            let (pa, pb) = (&seg[0], &seg[1]);
            let dir: Vec<f64> = pb.iter().zip(pa).map(|(b, a)| b - a).collect();
            if dot(&dir, &dir) == 0.0 {
                continue;
            }
            // Sub-segment boundaries: 0, the crossings, 1.
            let mut cuts = vec![0.0];
            if self.params.edge_aware {
                let mut ks = Vec::new();
                f.kinks_on_segment(pa, &dir, &mut ks);
                cuts.extend(ks.into_iter().filter(|&a| a > 1e-12 && a < 1.0 - 1e-12));
            }
            cuts.push(1.0);
            // Each cut's residual once: a crossing ends one sub-segment and starts the next.
            let mut start = CutPoint::at(f, pa, &dir, cuts[0]);
            for w in cuts.windows(2) {
                if deadline.expired() {
                    return best;
                }
                let (a0, a1) = (w[0], w[1]);
                if a1 - a0 <= 1e-14 {
                    if a1 != a0 {
                        start = CutPoint::at(f, pa, &dir, a1);
                    }
                    continue;
                }
                let end = CutPoint::at(f, pa, &dir, a1);
                let sub: Vec<f64> = dir.iter().map(|d| d * (a1 - a0)).collect();
                // The slopes of t -> l(x + t sub) on [0, 1], from inside the sub-segment.
                let (s0, s1) = (start.after * (a1 - a0), end.before * (a1 - a0));
                let (m0, m1) = (start.merit, end.merit);
                // Interior crossings are edge points; the segment's own ends are not.
                consider(PathPoint {
                    x: end.x.clone(),
                    merit: m1,
                    on_edge: self.params.edge_aware && a1 < 1.0,
                    position: leg as f64 + a1,
                });
                if let Some(t) = cubic_minimizer(m0, s0, m1, s1) {
                    let pt = axpy(&start.x, t, &sub);
                    let mt = kit::merit_of(&eval(f, &pt));
                    consider(PathPoint {
                        x: pt,
                        merit: mt,
                        on_edge: false,
                        position: leg as f64 + a0 + t * (a1 - a0),
                    });
                }
                start = end;
            }
        }
        best
    }
}

/// One iteration's quadratic model (23) around `x`: the linearisation, the basis of the step
/// restricted to the active edges, the linear solves spent so far, and the buffers they use.
struct Model {
    lin: Linearization,
    basis: Option<Basis>,
    scratch: Scratch,
    /// `|g|` at `x`.
    grad_norm: f64,
    linear_solves: u64,
    linear_solve_nanoseconds: u64,
}

impl Model {
    /// The model of the linearisation `lin` at a point of `n` unknowns.
    fn new(lin: Linearization, n: usize, scratch: Scratch) -> Model {
        let basis = (!lin.active.is_empty()).then(|| Basis::new(n, &lin.active));
        let grad_norm = dot(lin.g(), lin.g()).sqrt();
        Model {
            lin,
            basis,
            scratch,
            grad_norm,
            linear_solves: 0,
            linear_solve_nanoseconds: 0,
        }
    }

    /// The buffers, back for the next iteration (`J'J`'s among them).
    fn into_scratch(self) -> Scratch {
        Scratch {
            normal: self.lin.normal,
            ..self.scratch
        }
    }

    /// The restricted Newton step `B (B'HB)^-1 B'(-g)` (eq. 28), `H = J'J + lambda I`, formed
    /// and factored in the scratch buffers; `None` when the factorization fails. Also returns
    /// the nanoseconds the factorization and the solve took (forming `H` and `B'HB` excluded:
    /// that is the residual's kernel, not the linear solve).
    fn newton_step(&mut self, lambda: f64) -> (Option<Vec<f64>>, u64) {
        let (jtj, g) = (self.lin.jtj(), self.lin.g());
        let n = g.len();
        let h = &mut self.scratch.h;
        // The Cholesky reads the lower triangle; the restriction reads whole columns.
        copy_into(h, jtj, self.basis.is_none());
        for i in 0..n {
            h[(i, i)] += lambda;
        }
        let (out, nanos) = match &self.basis {
            None => kit::timed(|| llt_solve(h, g.iter().map(|v| -v).collect())),
            Some(b) => {
                b.restrict_into(h, &mut self.scratch.hb, &mut self.scratch.bhb);
                let rhs = b.t_times(g).iter().map(|v| -v).collect();
                let bhb = &mut self.scratch.bhb;
                let (xi, nanos) = kit::timed(|| llt_solve(bhb, rhs));
                (xi.map(|xi| b.times(&xi)), nanos)
            }
        };
        (out.filter(|o| o.iter().all(|v| v.is_finite())), nanos)
    }

    /// `(J'J + lam I) e`.
    fn h_times(&self, e: &[f64], lam: f64) -> Vec<f64> {
        let n = e.len();
        let ecol = faer::Col::from_fn(n, |i| e[i]);
        let he = self.lin.jtj() * &ecol;
        (0..n).map(|i| he[i] + lam * e[i]).collect()
    }

    /// The decrease of the merit the model predicts for a step `e`: `-(e'g + e'He/2)`.
    fn predicted(&self, e: &[f64], lam: f64) -> f64 {
        -(dot(e, self.lin.g()) + 0.5 * dot(e, &self.h_times(e, lam)))
    }

    /// The Cauchy point (eq. 28) from `x` on the restricted model with `lam`, projected onto
    /// the active curved edges (`x` itself where the model has no positive curvature).
    fn cauchy_point<R: NonSmoothResidual + ?Sized>(&self, f: &R, x: &[f64], lam: f64) -> Vec<f64> {
        let g = self.lin.g();
        let bg = match &self.basis {
            Some(b) => b.times(&b.t_times(g)),
            None => g.to_vec(),
        };
        let curvature = dot(&bg, &self.h_times(&bg, lam));
        let mut x_c = if curvature > 0.0 {
            axpy(x, -dot(g, &bg) / curvature, &bg)
        } else {
            x.to_vec()
        };
        TodorovSolver::project_active(f, &self.lin, &mut x_c);
        x_c
    }

    /// The iteration's record: it moved by `step` (empty when it did not), `lambda` after it,
    /// `merit` at the new point.
    fn report(
        &self,
        kind: StepKind,
        lambda: f64,
        merit: f64,
        step: &[f64],
        path_position: Option<f64>,
    ) -> IterationReport {
        IterationReport {
            kind,
            lambda,
            active_edges: self.lin.active.len(),
            merit,
            grad_norm: self.grad_norm,
            step_norm: dot(step, step).sqrt(),
            path_position,
            linear_solves: self.linear_solves,
            linear_solve_nanoseconds: self.linear_solve_nanoseconds,
        }
    }
}

/// A point of the dogleg line search: where it is, its merit, whether it is a kink crossing,
/// and its position on the path ([`IterationReport::path_position`]).
struct PathPoint {
    x: Vec<f64>,
    merit: f64,
    on_edge: bool,
    position: f64,
}

/// A cut of the line search's path (a leg's end or a kink crossing): the point, its merit and
/// the merit's slopes along the leg's direction from before and after it
/// ([`NonSmoothResidual::slopes_through`]), evaluated once for the two sub-segments it bounds.
struct CutPoint {
    x: Vec<f64>,
    merit: f64,
    /// `r' J(-dir) dir`: the slope at the end of the sub-segment that ends here, per unit `a`.
    before: f64,
    /// `r' J(+dir) dir`: the slope at the start of the sub-segment that starts here.
    after: f64,
}

impl CutPoint {
    /// The point `p + a dir`.
    fn at<R: NonSmoothResidual + ?Sized>(f: &R, p: &[f64], dir: &[f64], a: f64) -> CutPoint {
        let x = axpy(p, a, dir);
        let r = eval(f, &x);
        let (before, after) = f.slopes_through(&x, &r, dir);
        CutPoint {
            merit: kit::merit_of(&r),
            x,
            before,
            after,
        }
    }
}

/// The basis `B` (n x m) of eq. 28: identity columns off the active edges, the orthonormal
/// complement of the edge normal on each active edge's block. Kept in blocks so that `B'HB`
/// costs O(n^2) instead of two dense O(n^3) products.
struct Basis {
    /// Per unknown: `None` off edges, or `(edge, position in its block)`.
    owner: Vec<Option<(usize, usize)>>,
    /// Per active edge: its first unknown and the `w x (w - 1)` complement.
    blocks: Vec<(usize, Mat<f64>)>,
    /// Columns of `B`: `Unit(i)` or `Edge(edge, column of its complement)`.
    columns: Vec<Column>,
}

#[derive(Debug, Clone, Copy)]
enum Column {
    Unit(usize),
    Edge(usize, usize),
}

impl Basis {
    fn new(n: usize, edges: &[Edge]) -> Basis {
        let mut owner = vec![None; n];
        let mut blocks = Vec::with_capacity(edges.len());
        for (k, e) in edges.iter().enumerate() {
            for (p, i) in e.columns().enumerate() {
                owner[i] = Some((k, p));
            }
            blocks.push((e.start, kit::orthogonal_complement(&e.normal)));
        }
        let mut columns = Vec::with_capacity(n);
        for (i, o) in owner.iter().enumerate() {
            match o {
                None => columns.push(Column::Unit(i)),
                // The block's columns enter once, at its first unknown.
                Some((k, 0)) => {
                    (0..blocks[*k].1.ncols()).for_each(|c| columns.push(Column::Edge(*k, c)))
                }
                Some(_) => {}
            }
        }
        Basis {
            owner,
            blocks,
            columns,
        }
    }

    /// `B' v` (length m).
    fn t_times(&self, v: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.columns.len()];
        self.t_times_into(v, &mut out);
        out
    }

    /// `B' v` written into `out` (length m): [`Basis::restrict`] calls it once per column of
    /// `H B` on every Newton iteration, so it does not allocate.
    fn t_times_into(&self, v: &[f64], out: &mut [f64]) {
        for (o, c) in out.iter_mut().zip(&self.columns) {
            *o = match *c {
                Column::Unit(i) => v[i],
                Column::Edge(k, j) => {
                    let (s, q) = &self.blocks[k];
                    (0..q.nrows()).map(|l| q[(l, j)] * v[s + l]).sum()
                }
            };
        }
    }

    /// `B y` (length n).
    fn times(&self, y: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.owner.len()];
        for (c, col) in self.columns.iter().enumerate() {
            match *col {
                Column::Unit(i) => out[i] += y[c],
                Column::Edge(k, j) => {
                    let (s, q) = &self.blocks[k];
                    for l in 0..q.nrows() {
                        out[s + l] += q[(l, j)] * y[c];
                    }
                }
            }
        }
        out
    }

    /// `B' H B` (m x m) for a symmetric `H` (n x n), into `out`, through `hb` (both resized,
    /// their storage reused): `H B` column by column (an identity column copies one of `H`'s,
    /// an edge's column combines its block's), then `B'` on the rows the same way, over
    /// contiguous columns.
    fn restrict_into(&self, h: &Mat<f64>, hb: &mut Mat<f64>, out: &mut Mat<f64>) {
        let m = self.columns.len();
        let n = h.nrows();
        resize_zeroed(hb, n, m);
        for (c, col) in self.columns.iter().enumerate() {
            match *col {
                Column::Unit(i) => hb.col_as_slice_mut(c).copy_from_slice(h.col_as_slice(i)),
                Column::Edge(k, j) => {
                    let (s, q) = &self.blocks[k];
                    for l in 0..q.nrows() {
                        let w = q[(l, j)];
                        let src = h.col_as_slice(s + l);
                        hb.col_as_slice_mut(c)
                            .iter_mut()
                            .zip(src)
                            .for_each(|(o, v)| *o += w * v);
                    }
                }
            }
        }
        resize_zeroed(out, m, m);
        for c in 0..m {
            self.t_times_into(hb.col_as_slice(c), out.col_as_slice_mut(c));
        }
    }
}

/// `src` copied into `dst` (resized, its storage reused): its lower triangle only when
/// `lower_only`, and `dst`'s strict upper triangle is then left as it was.
fn copy_into(dst: &mut Mat<f64>, src: &Mat<f64>, lower_only: bool) {
    resize(dst, src.nrows(), src.ncols());
    if lower_only {
        dst.as_mut().copy_from_triangular_lower(src);
    } else {
        dst.as_mut().copy_from(src);
    }
}

/// `H^-1 rhs` by Cholesky of the symmetric `h` in place (its lower triangle; faer's kernel and
/// parameters, as `Llt::new` uses them); `None` when `h` is not numerically positive definite.
fn llt_solve(h: &mut Mat<f64>, rhs: Vec<f64>) -> Option<Vec<f64>> {
    let n = h.nrows();
    let mut buffer = MemBuffer::new(cholesky_in_place_scratch::<f64>(
        n,
        Par::Seq,
        Default::default(),
    ));
    cholesky_in_place(
        h.as_mut(),
        Default::default(),
        Par::Seq,
        MemStack::new(&mut buffer),
        Default::default(),
    )
    .ok()?;
    let mut x = faer::Col::from_fn(n, |i| rhs[i]);
    solve_in_place(
        h.as_ref(),
        x.as_mat_mut(),
        Par::Seq,
        MemStack::new(&mut buffer),
    );
    Some(x.iter().copied().collect())
}

/// Argmin state of Todorov's driver: `x` and the merit `|r|^2/2` as cost.
pub type TodorovState = IterState<Vec<f64>, (), (), (), (), f64>;

/// The argmin problem wrapper: the residual, the tolerance on `|r|_2` and the deadline.
pub struct TodorovProblem<'a, R: ?Sized> {
    /// The residual.
    pub residual: &'a R,
    /// [`SolveOptions::stop_tol`]: converged when `|r(x)|_2 <= stop_tol`.
    pub stop_tol: f64,
    /// When the time limit runs out.
    pub deadline: Deadline,
}

/// Wraps the solver for argmin with its stopping decision.
#[derive(Debug, Clone)]
struct TodorovArgmin {
    inner: TodorovSolver,
    status: Option<Status>,
}

fn status_after(merit: f64, tol: f64) -> Option<Status> {
    if !merit.is_finite() {
        Some(Status::NotFinite)
    } else if (2.0 * merit).sqrt() <= tol {
        Some(Status::Converged)
    } else {
        None
    }
}

fn bump<P>(problem: &mut Problem<P>, key: &'static str) {
    *problem.counts.entry(key).or_insert(0) += 1;
}

impl<'a, R: NonSmoothResidual + ?Sized> Solver<TodorovProblem<'a, R>, TodorovState>
    for TodorovArgmin
{
    fn name(&self) -> &str {
        "Todorov 2010 LM-dogleg with edge-aware line search"
    }

    fn init(
        &mut self,
        problem: &mut Problem<TodorovProblem<'a, R>>,
        state: TodorovState,
    ) -> Result<(TodorovState, Option<KV>), ArgminError> {
        let x = state.get_param().cloned().unwrap_or_default();
        let (merit, tol) = problem.problem("residual_count", |p| {
            Ok((kit::merit_of(&eval(p.residual, &x)), p.stop_tol))
        })?;
        problem.counts.entry("newton_accepted").or_insert(0);
        kit::count_linear_solves(problem, 0, 0);
        self.status = status_after(merit, tol);
        Ok((state.param(x).cost(merit), Some(kv!("merit" => merit;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<TodorovProblem<'a, R>>,
        mut state: TodorovState,
    ) -> Result<(TodorovState, Option<KV>), ArgminError> {
        let x = state.take_param().unwrap_or_default();
        let p = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("Todorov problem missing"))?;
        let (tol, deadline) = (p.stop_tol, p.deadline);
        let (x_new, rep) = self.inner.iterate(p.residual, &x, deadline);
        self.status = match rep.kind {
            StepKind::LocalMinimum => Some(Status::LocalMinimum),
            StepKind::Timeout => Some(Status::Timeout),
            _ => status_after(rep.merit, tol),
        };
        bump(problem, "iteration_count");
        if rep.kind == StepKind::Newton {
            bump(problem, "newton_accepted");
        }
        kit::count_linear_solves(problem, rep.linear_solves, rep.linear_solve_nanoseconds);
        let mut kv = kv!(
            "merit" => rep.merit;
            "grad_norm" => rep.grad_norm;
            "step_norm" => rep.step_norm;
            "step_kind" => rep.kind.as_str();
            "lambda" => rep.lambda;
            "active" => rep.active_edges as u64;
            "newton_accepted" => rep.kind == StepKind::Newton;
            "linear_solves" => rep.linear_solves;
        );
        if let Some(t) = rep.path_position {
            kv.insert("path_position", t.into());
        }
        Ok((state.param(x_new).cost(rep.merit), Some(kv)))
    }

    fn terminate(&mut self, _state: &TodorovState) -> TerminationStatus {
        kit::termination(&self.status)
    }
}

/// Solves `residual` from `x0` with Todorov's driver; `opts.stop_tol` bounds `|r(x)|_2`. The
/// solution's counters include `newton_accepted`, the iterations whose Newton point was taken,
/// and `linear_solves` / `linear_solve_nanoseconds`, the systems of eq. 28 factored and the time
/// in their LLT. The trace's `path_position` says where each line-search step landed
/// ([`IterationReport::path_position`]).
pub fn solve_todorov<R: NonSmoothResidual + ?Sized>(
    residual: &R,
    solver: TodorovSolver,
    x0: Vec<f64>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    if x0.len() != residual.num_unknowns() {
        return Err(CoreError::Unsupported(format!(
            "initial point has {} entries, the problem has {}",
            x0.len(),
            residual.num_unknowns()
        )));
    }
    let problem = TodorovProblem {
        residual,
        stop_tol: opts.stop_tol,
        deadline: Deadline::after(opts.time_limit),
    };
    let tol = opts.stop_tol;
    let solver = TodorovArgmin {
        inner: solver,
        status: None,
    };
    execute(problem, solver, x0, opts, |s: &TodorovState| {
        (2.0 * s.get_cost()).sqrt() <= tol
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todorov::ImplicitNcp;
    use contactlab_core::metrics::natural_map_residual;
    use contactlab_core::{LocalProblem, Matrix};
    use rand::{Rng, SeedableRng};

    #[test]
    fn block_basis_products_equal_the_dense_ones() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut unit = |w: usize| {
            let v: Vec<f64> = (0..w).map(|_| rng.random_range(-1.0..1.0)).collect();
            let n = dot(&v, &v).sqrt();
            v.iter().map(|x| x / n).collect::<Vec<f64>>()
        };
        // Two edges of width 3 (contacts 1 and 3) and one of width 2 inside a 14-vector.
        let edges = vec![
            Edge {
                start: 3,
                normal: unit(3),
                curved: true,
                tag: 1,
            },
            Edge {
                start: 9,
                normal: unit(3),
                curved: false,
                tag: 3,
            },
            Edge {
                start: 12,
                normal: unit(2),
                curved: false,
                tag: 4,
            },
        ];
        let n = 14;
        let b = Basis::new(n, &edges);
        let m = b.columns.len();
        assert_eq!(m, n - edges.len());
        let mut dense = Mat::<f64>::zeros(n, m);
        let mut basis_of_unit = vec![0.0; m];
        for c in 0..m {
            basis_of_unit.iter_mut().for_each(|v| *v = 0.0);
            basis_of_unit[c] = 1.0;
            let col = b.times(&basis_of_unit);
            (0..n).for_each(|i| dense[(i, c)] = col[i]);
        }
        // B'B = I and B' n_k = 0 on every edge.
        let btb = dense.transpose() * &dense;
        for i in 0..m {
            for j in 0..m {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((btb[(i, j)] - want).abs() < 1e-14);
            }
        }
        for e in &edges {
            let bt_n = b.t_times(&e.direction(n, 1.0));
            assert!(bt_n.iter().all(|v| v.abs() < 1e-14));
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let l = Mat::<f64>::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        let h = &l * l.transpose();
        let expected = dense.transpose() * &h * &dense;
        // Buffers of the wrong shape and stale entries, as the previous iteration leaves them.
        let mut hb = Mat::<f64>::from_fn(3, n + 4, |_, _| 9.0);
        let mut got = Mat::<f64>::from_fn(m + 2, 1, |_, _| -5.0);
        for _ in 0..2 {
            b.restrict_into(&h, &mut hb, &mut got);
            assert_eq!((got.nrows(), got.ncols()), (m, m));
            for i in 0..m {
                for j in 0..m {
                    assert!((got[(i, j)] - expected[(i, j)]).abs() < 1e-12, "({i}, {j})");
                }
            }
        }
        let v: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let btv = dense.transpose() * faer::Col::from_fn(n, |i| v[i]);
        let y = b.t_times(&v);
        (0..m).for_each(|i| assert!((y[i] - btv[i]).abs() < 1e-14));
    }

    /// `W = L L'/n + eps I` with random `q`, `mu` in [0.1, 2].
    fn random_problem(nc: usize, seed: u64, eps: f64) -> LocalProblem {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let n = 3 * nc;
        let l: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let w: Vec<f64> = (0..n * n)
            .map(|ij| {
                let (i, j) = (ij / n, ij % n);
                (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>() / n as f64
                    + if i == j { eps } else { 0.0 }
            })
            .collect();
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        rng.random_range(-1.0..0.2)
                    } else {
                        rng.random_range(-1.0..1.0)
                    }
                })
                .collect(),
            &(0..nc)
                .map(|_| rng.random_range(0.1..2.0))
                .collect::<Vec<f64>>(),
        )
    }

    #[test]
    fn solves_random_contact_problems_to_tight_tolerance() {
        let opts = SolveOptions {
            stop_tol: 1e-10,
            max_iter: 200,
            ..Default::default()
        };
        let mut converged = 0;
        for seed in 0..20 {
            let p = random_problem(4, seed, 0.05);
            let f = ImplicitNcp::new(&p);
            let x0 = f.sticking_start(1e-12);
            let s = solve_todorov(&f, TodorovSolver::default(), x0, &opts).unwrap();
            if s.status == Status::Converged {
                converged += 1;
                // r(x) = 0 means f(x) solves the Coulomb problem: the shared ruler agrees.
                assert!(
                    natural_map_residual(&p, &f.impulses(&s.x)) < 1e-8,
                    "seed {seed}"
                );
                assert_eq!(s.trace.len() as u64, s.iterations + 1);
            }
        }
        // Random dense problems with mu up to 2 are harder than simulation steps; the paper
        // reports rare local minima. Require the large majority.
        assert!(converged >= 18, "only {converged}/20 converged");
    }

    #[test]
    fn line_search_steps_say_where_they_landed_and_linear_solves_are_counted() {
        let opts = SolveOptions {
            stop_tol: 1e-10,
            max_iter: 200,
            ..Default::default()
        };
        let (mut line_search, mut second_leg) = (0, 0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for seed in 0..20 {
            let p = random_problem(6, seed, 0.01);
            let f = ImplicitNcp::new(&p);
            // Random starts far from the answer: the sticking start is too good to need many
            // line-search steps on problems this small.
            let x0: Vec<f64> = (0..18).map(|_| rng.random_range(-2.0..2.0)).collect();
            let s = solve_todorov(&f, TodorovSolver::default(), x0, &opts).unwrap();
            let mut solves = 0.0;
            for row in &s.trace.rows[1..] {
                let at = row.extra.get("path_position").copied();
                solves += row.extra["linear_solves"];
                match row.step_kind.as_deref() {
                    Some("dogleg") | Some("edge") => {
                        let t = at.expect("a line-search step has a position");
                        assert!(t > 0.0 && t <= 2.0, "seed {seed}: {t}");
                        line_search += 1;
                        second_leg += usize::from(t > 1.0);
                    }
                    _ => assert_eq!(at, None, "seed {seed}: {row:?}"),
                }
            }
            // Every iteration factors at least once; the counter adds the trace's column.
            assert!(s.counters["linear_solves"] >= s.iterations);
            assert_eq!(s.counters["linear_solves"] as f64, solves);
            assert_eq!(
                s.counters["linear_solve_nanoseconds"] > 0,
                s.counters["linear_solves"] > 0
            );
        }
        // Random dense problems take line-search steps on both legs of the path.
        assert!(
            line_search > 0 && second_leg > 0,
            "{line_search}, {second_leg}"
        );
        assert!(second_leg < line_search, "{line_search}, {second_leg}");
    }

    #[test]
    fn the_search_reports_the_best_points_position_on_the_path() {
        // Random paths x -> x_C -> x_N on two contacts: whenever the search improves on x, the
        // position it reports is that of the point it returns, on the leg it names.
        let p = random_problem(2, 5, 0.2);
        let f = ImplicitNcp::new(&p);
        let solver = TodorovSolver::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let mut improved = [0; 2];
        for _ in 0..50 {
            let mut point =
                || -> Vec<f64> { (0..6).map(|_| rng.random_range(-1.0..1.0)).collect() };
            let (x, xc, xn) = (point(), point(), point());
            let merit0 = kit::merit_of(&eval(&f, &x));
            let path = [x.clone(), xc.clone(), xn.clone()];
            let best = solver.search_path(&f, &path, merit0, Deadline::none());
            assert!(best.merit <= merit0);
            if best.merit == merit0 {
                assert_eq!(best.position, 0.0);
                continue;
            }
            assert!(
                best.position > 0.0 && best.position <= 2.0,
                "{}",
                best.position
            );
            let leg = usize::from(best.position > 1.0);
            improved[leg] += 1;
            let (a, b) = (&path[leg], &path[leg + 1]);
            let t = best.position - leg as f64;
            let gap = (0..6)
                .map(|i| (a[i] + t * (b[i] - a[i]) - best.x[i]).abs())
                .fold(0.0, f64::max);
            assert!(
                gap < 1e-12,
                "position {} is not the point: {gap}",
                best.position
            );
            assert!((kit::merit_of(&eval(&f, &best.x)) - best.merit).abs() <= 1e-15 * merit0);
        }
        assert!(improved[0] > 0 && improved[1] > 0, "{improved:?}");
    }

    #[test]
    fn a_solved_start_takes_zero_iterations_and_sticking_problems_one() {
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", 3, 3, &[2., 0.1, 0., 0.1, 1., 0., 0., 0., 1.]).unwrap(),
            vec![-1.0, 0.05, 0.0],
            &[0.5],
        );
        let f = ImplicitNcp::new(&p);
        // lambda0 = 1e-10 relative leaves a relative error of that order after an exact-model step.
        let opts = SolveOptions {
            stop_tol: 1e-8,
            ..Default::default()
        };
        let s =
            solve_todorov(&f, TodorovSolver::default(), f.sticking_start(1e-12), &opts).unwrap();
        assert_eq!((s.status.clone(), s.iterations), (Status::Converged, 0));
        // From the origin the sticking problem is piecewise linear: Newton lands in one step.
        let s = solve_todorov(&f, TodorovSolver::default(), vec![-0.1, 0.0, 0.0], &opts).unwrap();
        assert_eq!(s.status, Status::Converged);
        assert_eq!(s.iterations, 1, "{:?}", s.trace);
        assert_eq!(s.trace.rows[1].extra.get("newton_accepted"), Some(&1.0));
    }

    #[test]
    fn plain_dogleg_ablation_also_runs() {
        let p = random_problem(3, 99, 0.1);
        let f = ImplicitNcp::new(&p);
        let opts = SolveOptions {
            stop_tol: 1e-9,
            max_iter: 300,
            ..Default::default()
        };
        let params = Todorov {
            edge_aware: false,
            ..Default::default()
        };
        let s = solve_todorov(
            &f,
            TodorovSolver::new(params),
            f.sticking_start(1e-12),
            &opts,
        )
        .unwrap();
        assert!(matches!(
            s.status,
            Status::Converged | Status::LocalMinimum | Status::MaxIterations
        ));
        assert!(s.merit.is_finite());
        assert!(solve_todorov(&f, TodorovSolver::default(), vec![0.0; 2], &opts).is_err());
    }
}
