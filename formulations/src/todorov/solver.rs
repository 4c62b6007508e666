//! Todorov's non-smooth Gauss-Newton/Levenberg-Marquardt with dogleg and edge-aware line
//! search (Todorov 2010, section III, pseudocode III-E).
//!
//! One iteration at `x`, with `l = |r|^2 / 2`, `g = J' r`, `H = J' J + lambda I` (eqs. 19-21):
//!
//! 1. For every contact lying on an edge, compare the one-sided directional derivatives
//!    `delta_1 = r' J_1 d`, `delta_2 = -r' J_2 d` (eq. 25). If one is negative, take the
//!    Jacobian of the steeper side; otherwise the edge is *active*: mix the two Jacobians by
//!    eq. 26 and restrict the step to the edge's tangent space with the block `B_k` of eq. 29.
//! 2. Newton point `x_N = x + B (B'HB)^-1 B' (-g)` (eq. 28), projected onto active cone edges.
//!    Accept it when the actual decrease of `l` is at least `accept_ratio` (50%) of the decrease
//!    predicted by the quadratic model (23); then decrease `lambda`.
//! 3. Otherwise increase `lambda`, form the Cauchy point `x_C` (eq. 28), projected onto active
//!    cone edges, split the dogleg path `x -> x_C -> x_N` at its analytic edge crossings
//!    (eq. 27) into smooth sub-segments, run a cubic line search in each, and take the best
//!    point found (edge crossings included: landing on an edge is how chattering stops). If no
//!    point improves on `x`, stop at a local minimum.
//!
//! The paper gives no numbers for the `lambda` schedule; we start at `lambda_0 = 1e-10` times
//! the mean diagonal of `J'J` (so the schedule is scale-free; small, so that a Newton step on a
//! piecewise-linear piece is exact to that order, as the ball-drop test's one iteration needs),
//! and divide / multiply by 10.
//! The iteration count is the number of steps taken (a start that already satisfies the
//! tolerance takes 0), which is how the ball-drop test can take "one iteration".

use faer::linalg::solvers::Solve;
use faer::{Mat, Side};
use nalgebra::{Matrix3, Matrix3x2, Vector3};

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use contactlab_core::drivers::execute::execute;
use contactlab_core::{CoreError, Solution, SolveOptions, Status};

use super::{
    block, edge_normal, edge_tangent_basis, project_on_cone_edge, region_along, EdgeKind,
    ImplicitNcp, Region,
};
use contactlab_core::{NonSmoothResidual, Residual};

/// Parameters of Todorov's driver.
#[derive(Debug, Clone, PartialEq)]
pub struct TodorovParams {
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
    /// cone projection, edge-aware line search). `false` gives plain LM-dogleg with a
    /// line search on the whole segments, for the ablation of the paper's open question.
    pub edge_aware: bool,
}

impl Default for TodorovParams {
    fn default() -> Self {
        TodorovParams {
            lambda0: 1e-10,
            lambda_up: 10.0,
            lambda_down: 10.0,
            lambda_min: 1e-14,
            accept_ratio: 0.5,
            edge_aware: true,
        }
    }
}

/// How one iteration moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// The Newton point was accepted.
    Newton,
    /// The line search on the dogleg path found a better point inside a smooth sub-segment.
    Dogleg,
    /// The line search's best point is an edge crossing.
    Edge,
    /// No point on the dogleg path improves the merit.
    LocalMinimum,
}

impl StepKind {
    /// Name used in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Newton => "newton",
            StepKind::Dogleg => "dogleg",
            StepKind::Edge => "edge",
            StepKind::LocalMinimum => "local_minimum",
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
    /// Contacts on active edges at the start of the iteration.
    pub active_edges: usize,
    /// Merit `|r|^2/2` at the new point.
    pub merit: f64,
    /// `|g|` at the start of the iteration.
    pub grad_norm: f64,
    /// `|x_new - x|`.
    pub step_norm: f64,
}

/// Todorov's driver. Holds `lambda` between iterations.
#[derive(Debug, Clone)]
pub struct TodorovSolver {
    /// The parameters.
    pub params: TodorovParams,
    /// Current `lambda` (absolute); `None` until the first iteration sets it.
    lambda: Option<f64>,
    /// Mean diagonal of `J'J` at the first iteration: the scale of `lambda`.
    scale: f64,
}

impl Default for TodorovSolver {
    fn default() -> Self {
        TodorovSolver::new(TodorovParams::default())
    }
}

/// What the linearisation at `x` gives: residual, Jacobian blocks, active edges.
struct Linearization {
    r: Vec<f64>,
    /// `(A - I)' D r`, from which `g = J'r` follows block by block.
    pull: Vec<f64>,
    merit: f64,
    blocks: Vec<Matrix3<f64>>,
    /// Per contact: the active edge's kind and tangent basis, if any.
    active: Vec<Option<(EdgeKind, Matrix3x2<f64>)>>,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn merit_of(r: &[f64]) -> f64 {
    0.5 * dot(r, r)
}

fn axpy(x: &[f64], alpha: f64, d: &[f64]) -> Vec<f64> {
    x.iter().zip(d).map(|(a, b)| a + alpha * b).collect()
}

impl TodorovSolver {
    /// A solver with the given parameters.
    pub fn new(params: TodorovParams) -> TodorovSolver {
        TodorovSolver {
            params,
            lambda: None,
            scale: 1.0,
        }
    }

    /// The current `lambda`.
    pub fn lambda(&self) -> Option<f64> {
        self.lambda
    }

    fn linearize(&self, f: &ImplicitNcp, x: &[f64]) -> Linearization {
        let n = x.len();
        let mut r = vec![0.0; n];
        f.residual(x, &mut r);
        let nc = f.num_contacts();
        let regions = f.regions(x);
        let mut blocks = f.df_dx_blocks(x, &regions);
        let mut active = vec![None; nc];
        let pull = f.pullback(&r);
        if self.params.edge_aware {
            let dr: Vec<f64> = r.iter().zip(f.scaling()).map(|(a, b)| a * b).collect();
            for k in 0..nc {
                let (mu, b, xk) = (f.mu(k), f.bias(k), block(x, k));
                let Some(kind) = f.edge_of(k, xk) else {
                    continue;
                };
                let d = edge_normal(kind, mu, b, xk);
                let f1 = region_along(mu, b, xk, d).df_dx(mu, b, xk);
                let f2 = region_along(mu, b, xk, -d).df_dx(mu, b, xk);
                // r' J_i d = p_k' F_i d - (D r)_k . d (only contact k's columns change).
                let (pk, drk) = (block(&pull, k), block(&dr, k));
                let delta1 = pk.dot(&(f1 * d)) - drk.dot(&d);
                let delta2 = -(pk.dot(&(f2 * d)) - drk.dot(&d));
                if delta1 < 0.0 || delta2 < 0.0 {
                    blocks[k] = if delta1 <= delta2 { f1 } else { f2 };
                } else {
                    let s = delta1 + delta2;
                    blocks[k] = if s > 0.0 {
                        (delta2 * f1 + delta1 * f2) / s
                    } else {
                        0.5 * (f1 + f2)
                    };
                    active[k] = Some((kind, edge_tangent_basis(kind, b, xk)));
                }
            }
        }
        Linearization {
            merit: merit_of(&r),
            r,
            pull,
            blocks,
            active,
        }
    }

    /// Projects the contacts with an active cone edge back onto the cone (section III-D).
    fn project_active(&self, f: &ImplicitNcp, lin: &Linearization, x: &mut [f64]) {
        for (k, a) in lin.active.iter().enumerate() {
            if let Some((EdgeKind::Cone, _)) = a {
                let p = project_on_cone_edge(f.mu(k), f.bias(k), block(x, k));
                x[3 * k..3 * k + 3].copy_from_slice(p.as_slice());
            }
        }
    }

    /// The basis `B` (n x m) of eq. 28: identity columns for free contacts, the edge's 3x2
    /// tangent block for contacts on active edges.
    fn basis(lin: &Linearization) -> Basis {
        Basis {
            // Orthonormalise so B'B = I on the edge (the paper notes only the span matters).
            blocks: lin
                .active
                .iter()
                .map(|a| a.as_ref().map(|(_, t)| t.qr().q()))
                .collect(),
        }
    }

    /// One iteration from `x`: the new point and what happened. `tol` is only used to report;
    /// convergence is tested by the caller.
    pub fn iterate(&mut self, f: &ImplicitNcp, x: &[f64]) -> (Vec<f64>, IterationReport) {
        let n = x.len();
        let lin = self.linearize(f, x);
        // g = J'r and J'J without forming J (both O(n^2); see `ImplicitNcp::normal_matrix`).
        let g = f.jacobian_transpose_from_pullback(&lin.blocks, &lin.pull, &lin.r);
        let jtj = f.normal_matrix(&lin.blocks);
        if self.lambda.is_none() {
            let mean_diag = (0..n).map(|i| jtj[(i, i)]).sum::<f64>() / n.max(1) as f64;
            self.scale = if mean_diag > 0.0 && mean_diag.is_finite() {
                mean_diag
            } else {
                1.0
            };
        }
        let lambda_floor = self.params.lambda_min * self.scale;
        let lambda = *self.lambda.get_or_insert(self.params.lambda0 * self.scale);
        let any_active = lin.active.iter().any(Option::is_some);
        let bmat = any_active.then(|| Self::basis(&lin));
        let grad_norm = dot(&g, &g).sqrt();
        let active_edges = lin.active.iter().filter(|a| a.is_some()).count();

        // Quadratic model (23): predicted decrease of a step e is -(e'g + e'He/2).
        let h_times = |e: &[f64], lam: f64| -> Vec<f64> {
            let ecol = faer::Col::from_fn(n, |i| e[i]);
            let he = &jtj * &ecol;
            (0..n).map(|i| he[i] + lam * e[i]).collect()
        };
        let predicted = |e: &[f64], lam: f64| -(dot(e, &g) + 0.5 * dot(e, &h_times(e, lam)));

        // Newton point (eq. 28), retried with a larger lambda if H is numerically singular.
        let mut lam = lambda;
        let x_n = loop {
            if let Some(step) = newton_step(&jtj, &g, lam, bmat.as_ref()) {
                let mut xn = axpy(x, 1.0, &step);
                self.project_active(f, &lin, &mut xn);
                break xn;
            }
            lam *= self.params.lambda_up;
            if !lam.is_finite() {
                break x.to_vec();
            }
        };
        let e_n: Vec<f64> = x_n.iter().zip(x).map(|(a, b)| a - b).collect();
        let merit_n = merit_of(&eval(f, &x_n));
        let pred_n = predicted(&e_n, lam);
        if pred_n > 0.0 && lin.merit - merit_n >= self.params.accept_ratio * pred_n {
            self.lambda = Some((lam / self.params.lambda_down).max(lambda_floor));
            let report = IterationReport {
                kind: StepKind::Newton,
                lambda: self.lambda.unwrap_or(lam),
                active_edges,
                merit: merit_n,
                grad_norm,
                step_norm: dot(&e_n, &e_n).sqrt(),
            };
            return (x_n, report);
        }
        lam *= self.params.lambda_up;
        self.lambda = Some(lam);

        // Cauchy point (eq. 28) on the restricted model with the increased lambda.
        let bg = match &bmat {
            Some(b) => b.times(&b.t_times(&g)),
            None => g.clone(),
        };
        let curvature = dot(&bg, &h_times(&bg, lam));
        let mut x_c = if curvature > 0.0 {
            axpy(x, -dot(&g, &bg) / curvature, &bg)
        } else {
            x.to_vec()
        };
        self.project_active(f, &lin, &mut x_c);

        // Edge-aware line search over x -> x_C -> x_N.
        let (best, best_merit, on_edge) = self.search_path(f, &[x.to_vec(), x_c, x_n], lin.merit);
        let step: Vec<f64> = best.iter().zip(x).map(|(a, b)| a - b).collect();
        let kind = if best_merit < lin.merit {
            if on_edge {
                StepKind::Edge
            } else {
                StepKind::Dogleg
            }
        } else {
            StepKind::LocalMinimum
        };
        let report = IterationReport {
            kind,
            lambda: lam,
            active_edges,
            merit: best_merit.min(lin.merit),
            grad_norm,
            step_norm: dot(&step, &step).sqrt(),
        };
        if kind == StepKind::LocalMinimum {
            return (x.to_vec(), report);
        }
        (best, report)
    }

    /// Searches the polyline through `points`; returns the best point, its merit and whether it
    /// is an edge crossing.
    fn search_path(
        &self,
        f: &ImplicitNcp,
        points: &[Vec<f64>],
        merit0: f64,
    ) -> (Vec<f64>, f64, bool) {
        let mut best = (points[0].clone(), merit0, false);
        let mut consider = |p: Vec<f64>, m: f64, edge: bool| {
            if m < best.1 {
                best = (p, m, edge);
            }
        };
        for seg in points.windows(2) {
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
            for w in cuts.windows(2) {
                let (a0, a1) = (w[0], w[1]);
                if a1 - a0 <= 1e-14 {
                    continue;
                }
                let p0 = axpy(pa, a0, &dir);
                let p1 = axpy(pa, a1, &dir);
                let sub: Vec<f64> = dir.iter().map(|d| d * (a1 - a0)).collect();
                let (m0, s0) = merit_and_slope(f, &p0, &sub, 1.0);
                let (m1, s1) = merit_and_slope(f, &p1, &sub, -1.0);
                // Interior crossings are edge points; the segment's own ends are not.
                consider(p1.clone(), m1, self.params.edge_aware && a1 < 1.0);
                if let Some(t) = cubic_minimizer(m0, s0, m1, s1) {
                    let pt = axpy(&p0, t, &sub);
                    let mt = merit_of(&eval(f, &pt));
                    consider(pt, mt, false);
                }
            }
        }
        best
    }
}

/// `r(x)`.
fn eval(f: &ImplicitNcp, x: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; x.len()];
    f.residual(x, &mut r);
    r
}

/// `l(p)` and the one-sided slope of `t -> l(p + t sub)` at `t = 0`, taken on the piece entered
/// along `side * sub` (`side = -1` gives the slope at the end of a sub-segment, from inside).
fn merit_and_slope(f: &ImplicitNcp, p: &[f64], sub: &[f64], side: f64) -> (f64, f64) {
    let r = eval(f, p);
    let probe: Vec<f64> = sub.iter().map(|d| side * d).collect();
    let regions: Vec<Region> = (0..f.num_contacts())
        .map(|k| region_along(f.mu(k), f.bias(k), block(p, k), block(&probe, k)))
        .collect();
    let blocks = f.df_dx_blocks(p, &regions);
    let jd = f.jacobian_times(&blocks, sub);
    (merit_of(&r), dot(&r, &jd))
}

/// Minimiser in `(0, 1)` of the cubic Hermite interpolant of `phi(0) = m0`, `phi'(0) = s0`,
/// `phi(1) = m1`, `phi'(1) = s1` (Nocedal and Wright, eq. 3.59), if it has one there.
fn cubic_minimizer(m0: f64, s0: f64, m1: f64, s1: f64) -> Option<f64> {
    let d1 = s0 + s1 - 3.0 * (m1 - m0);
    let disc = d1 * d1 - s0 * s1;
    if disc < 0.0 {
        return None;
    }
    let d2 = disc.sqrt();
    let denom = s1 - s0 + 2.0 * d2;
    if denom == 0.0 {
        return None;
    }
    let t = 1.0 - (s1 + d2 - d1) / denom;
    (t > 0.0 && t < 1.0 && t.is_finite()).then_some(t)
}

/// The block-diagonal basis `B` of eq. 28, one block per contact: the 3x3 identity for a
/// contact off active edges (`None`), an orthonormal 3x2 tangent block on an active edge.
/// Kept in blocks so that `B'HB` costs O(n^2) instead of two dense O(n^3) products.
struct Basis {
    blocks: Vec<Option<Matrix3x2<f64>>>,
}

impl Basis {
    /// Columns of contact `k`'s block: its width.
    fn width(block: &Option<Matrix3x2<f64>>) -> usize {
        if block.is_some() {
            2
        } else {
            3
        }
    }

    /// First column of each contact's block, and the total width `m`.
    fn offsets(&self) -> (Vec<usize>, usize) {
        let mut col = 0;
        let offs = self
            .blocks
            .iter()
            .map(|b| {
                let c = col;
                col += Self::width(b);
                c
            })
            .collect();
        (offs, col)
    }

    /// `B' v` (length m).
    fn t_times(&self, v: &[f64]) -> Vec<f64> {
        let mut out = Vec::new();
        for (k, b) in self.blocks.iter().enumerate() {
            let vk = block(v, k);
            match b {
                None => out.extend_from_slice(vk.as_slice()),
                Some(q) => out.extend_from_slice((q.transpose() * vk).as_slice()),
            }
        }
        out
    }

    /// `B y` (length n).
    fn times(&self, y: &[f64]) -> Vec<f64> {
        let (offs, _) = self.offsets();
        let mut out = vec![0.0; 3 * self.blocks.len()];
        for (k, b) in self.blocks.iter().enumerate() {
            let c = offs[k];
            let v = match b {
                None => Vector3::new(y[c], y[c + 1], y[c + 2]),
                Some(q) => q * nalgebra::Vector2::new(y[c], y[c + 1]),
            };
            out[3 * k..3 * k + 3].copy_from_slice(v.as_slice());
        }
        out
    }

    /// `B' H B` (m x m) for a symmetric `H` (n x n).
    fn restrict(&self, h: &Mat<f64>) -> Mat<f64> {
        let n = h.nrows();
        let (offs, m) = self.offsets();
        // HB, column block by column block: H[:, 3k..3k+3] times contact k's block.
        let mut hb = Mat::<f64>::zeros(n, m);
        for (k, b) in self.blocks.iter().enumerate() {
            for i in 0..n {
                let hk = Vector3::new(h[(i, 3 * k)], h[(i, 3 * k + 1)], h[(i, 3 * k + 2)]);
                match b {
                    None => (0..3).for_each(|j| hb[(i, offs[k] + j)] = hk[j]),
                    Some(q) => {
                        let v = q.transpose() * hk;
                        hb[(i, offs[k])] = v[0];
                        hb[(i, offs[k] + 1)] = v[1];
                    }
                }
            }
        }
        // B'(HB), row block by row block.
        let mut out = Mat::<f64>::zeros(m, m);
        for (k, b) in self.blocks.iter().enumerate() {
            for j in 0..m {
                let col = Vector3::new(hb[(3 * k, j)], hb[(3 * k + 1, j)], hb[(3 * k + 2, j)]);
                match b {
                    None => (0..3).for_each(|i| out[(offs[k] + i, j)] = col[i]),
                    Some(q) => {
                        let v = q.transpose() * col;
                        out[(offs[k], j)] = v[0];
                        out[(offs[k] + 1, j)] = v[1];
                    }
                }
            }
        }
        out
    }
}

/// The restricted Newton step `B (B'HB)^-1 B'(-g)` (eq. 28), `H = J'J + lambda I`; `None` when
/// the factorization fails.
fn newton_step(jtj: &Mat<f64>, g: &[f64], lambda: f64, b: Option<&Basis>) -> Option<Vec<f64>> {
    let n = g.len();
    let mut h = jtj.clone();
    for i in 0..n {
        h[(i, i)] += lambda;
    }
    let out: Vec<f64> = match b {
        None => {
            let gcol = faer::Col::from_fn(n, |i| -g[i]);
            let step = h.llt(Side::Lower).ok()?.solve(&gcol);
            (0..n).map(|i| step[i]).collect()
        }
        Some(b) => {
            let bhb = b.restrict(&h);
            let btg = b.t_times(g);
            let rhs = faer::Col::from_fn(btg.len(), |i| -btg[i]);
            let xi = bhb.llt(Side::Lower).ok()?.solve(&rhs);
            b.times(&(0..xi.nrows()).map(|i| xi[i]).collect::<Vec<f64>>())
        }
    };
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// Argmin state of Todorov's driver: `x` and the merit `|r|^2/2` as cost.
pub type TodorovState = IterState<Vec<f64>, (), (), (), (), f64>;

/// The argmin problem wrapper: the residual and the tolerance on `|r|_2`.
#[derive(Debug, Clone)]
pub struct TodorovProblem<'a> {
    /// The residual.
    pub ncp: &'a ImplicitNcp,
    /// Converged when `|r(x)|_2 <= tol`.
    pub tol: f64,
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

impl<'a> Solver<TodorovProblem<'a>, TodorovState> for TodorovArgmin {
    fn name(&self) -> &str {
        "Todorov 2010 LM-dogleg with edge-aware line search"
    }

    fn init(
        &mut self,
        problem: &mut Problem<TodorovProblem<'a>>,
        state: TodorovState,
    ) -> Result<(TodorovState, Option<KV>), ArgminError> {
        let x = state.get_param().cloned().unwrap_or_default();
        let (merit, tol) = problem.problem("residual_count", |p| {
            Ok((merit_of(&eval(p.ncp, &x)), p.tol))
        })?;
        self.status = status_after(merit, tol);
        Ok((state.param(x).cost(merit), Some(kv!("merit" => merit;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<TodorovProblem<'a>>,
        mut state: TodorovState,
    ) -> Result<(TodorovState, Option<KV>), ArgminError> {
        let x = state.take_param().unwrap_or_default();
        let p = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("Todorov problem missing"))?;
        let (x_new, rep) = self.inner.iterate(p.ncp, &x);
        self.status = if rep.kind == StepKind::LocalMinimum {
            Some(Status::LocalMinimum)
        } else {
            status_after(rep.merit, p.tol)
        };
        problem
            .counts
            .entry("iteration_count")
            .and_modify(|c| *c += 1)
            .or_insert(1);
        let kv = kv!(
            "merit" => rep.merit;
            "grad_norm" => rep.grad_norm;
            "step_norm" => rep.step_norm;
            "step_kind" => rep.kind.as_str();
            "lambda" => rep.lambda;
            "active" => rep.active_edges as u64;
            "newton_accepted" => rep.kind == StepKind::Newton;
        );
        Ok((state.param(x_new).cost(rep.merit), Some(kv)))
    }

    fn terminate(&mut self, _state: &TodorovState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// Solves `ncp` from `x0` with Todorov's driver; `opts.tol` bounds `|r(x)|_2`.
pub fn solve_todorov(
    ncp: &ImplicitNcp,
    solver: TodorovSolver,
    x0: Vec<f64>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    if x0.len() != ncp.num_unknowns() {
        return Err(CoreError::Unsupported(format!(
            "initial point has {} entries, the problem has {}",
            x0.len(),
            ncp.num_unknowns()
        )));
    }
    let problem = TodorovProblem { ncp, tol: opts.tol };
    let tol = opts.tol;
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
    use contactlab_core::metrics::natural_map_residual;
    use contactlab_core::{LocalProblem, Matrix};
    use rand::{Rng, SeedableRng};

    #[test]
    fn block_basis_products_equal_the_dense_ones() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let q1 = Matrix3x2::from_fn(|_, _| rng.random_range(-1.0..1.0))
            .qr()
            .q();
        let q2 = Matrix3x2::from_fn(|_, _| rng.random_range(-1.0..1.0))
            .qr()
            .q();
        let b = Basis {
            blocks: vec![None, Some(q1), None, Some(q2)],
        };
        let (n, m) = (12, 10);
        let mut dense = Mat::<f64>::zeros(n, m);
        let (offs, width) = b.offsets();
        assert_eq!(width, m);
        for (k, blk) in b.blocks.iter().enumerate() {
            for i in 0..3 {
                match blk {
                    None => dense[(3 * k + i, offs[k] + i)] = 1.0,
                    Some(q) => (0..2).for_each(|j| dense[(3 * k + i, offs[k] + j)] = q[(i, j)]),
                }
            }
        }
        let l = Mat::<f64>::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
        let h = &l * l.transpose();
        let expected = dense.transpose() * &h * &dense;
        let got = b.restrict(&h);
        for i in 0..m {
            for j in 0..m {
                assert!((got[(i, j)] - expected[(i, j)]).abs() < 1e-12, "({i}, {j})");
            }
        }
        let v: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let btv = dense.transpose() * faer::Col::from_fn(n, |i| v[i]);
        let y = b.t_times(&v);
        (0..m).for_each(|i| assert!((y[i] - btv[i]).abs() < 1e-14));
        let by = &dense * faer::Col::from_fn(m, |i| y[i]);
        let got = b.times(&y);
        (0..n).for_each(|i| assert!((got[i] - by[i]).abs() < 1e-14));
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
        LocalProblem {
            w: Matrix::from_row_major("W", n, n, &w).unwrap(),
            q: (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        rng.random_range(-1.0..0.2)
                    } else {
                        rng.random_range(-1.0..1.0)
                    }
                })
                .collect(),
            mu: (0..nc).map(|_| rng.random_range(0.1..2.0)).collect(),
        }
    }

    #[test]
    fn cubic_minimizer_is_exact_on_cubics_and_quadratics() {
        // phi(t) = (t - 0.3)^2: phi(0) = 0.09, phi'(0) = -0.6, phi(1) = 0.49, phi'(1) = 1.4.
        let t = cubic_minimizer(0.09, -0.6, 0.49, 1.4).unwrap();
        assert!((t - 0.3).abs() < 1e-12);
        // Monotone increasing: no interior minimiser.
        assert!(cubic_minimizer(0.0, 1.0, 2.0, 1.0).is_none());
    }

    #[test]
    fn solves_random_contact_problems_to_tight_tolerance() {
        let opts = SolveOptions {
            tol: 1e-10,
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
    fn a_solved_start_takes_zero_iterations_and_sticking_problems_one() {
        let p = LocalProblem {
            w: Matrix::from_row_major("W", 3, 3, &[2., 0.1, 0., 0.1, 1., 0., 0., 0., 1.]).unwrap(),
            q: vec![-1.0, 0.05, 0.0],
            mu: vec![0.5],
        };
        let f = ImplicitNcp::new(&p);
        // lambda0 = 1e-10 relative leaves a relative error of that order after an exact-model step.
        let opts = SolveOptions {
            tol: 1e-8,
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
            tol: 1e-9,
            max_iter: 300,
            ..Default::default()
        };
        let params = TodorovParams {
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
