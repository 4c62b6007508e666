//! The non-smooth Newton driver of Erleben and Ortiz: Newton on the B-derivative of the
//! min-map (eqs. 6-7, 9), the Schur-complement reduction of the Newton system to the active
//! block (eq. 11 and the Schur system below it), Armijo back-tracking on `theta`, and a warm
//! start with `k` projected Gauss-Seidel sweeps (section "Numerical behavior": `k = 4`).
//!
//! One Newton iteration at `x`, with `y = A x + b`, `H = H(x)` and the index sets of eq. 10:
//!
//! 1. Partition the rows into `A` (active: row of `A`) and `I = L u U` (bound rows
//!    `e_i +- mu_i e_n(i)`). With the permutation of eq. 11 the Newton matrix is
//!    `[A_AA A_AI; C D]`; `D` is unit lower triangular with its off-diagonal entries only in
//!    normal columns, so `D^-1` flips their signs, and `D^-1 C = C`.
//! 2. Solve the Schur system `S dx_A = -H_A + A_AI D^-1 H_I`, `S = A_AA - A_AI D^-1 C`, then
//!    back-substitute `dx_I = -D^-1 (H_I + C dx_A)`.
//! 3. Armijo back-tracking `theta(x + tau dx) <= theta(x) + c tau theta'(x; dx)` with
//!    `theta'(x; dx) = H' J dx` (`= -2 theta` when the Newton system is solved exactly).
//!
//! Stopping rules (paper): absolute tolerance on `theta` (or on `|H|`, see
//! [`ConvergenceMeasure`]), at most `max_iter` Newton iterations, stagnation when the largest
//! component change of an accepted step is below `1e-5`, and back-tracking failure.
//!
//! What the paper leaves open and is chosen here (each a field of [`MinMapNewtonParams`]):
//! * the linear solve: the paper uses an SVD. By default we factor `S` by LU with partial
//!   pivoting and fall back to a truncated-SVD pseudo-inverse (the paper's solve) when a pivot
//!   ratio or the solve's residual shows that `S` is (numerically) singular; [`LinearSolver::Svd`]
//!   always uses the SVD;
//! * the Armijo constants `c = 1e-4`, `tau <- tau / 2`, and back-tracking failure below
//!   `tau = 1e-5` (the values of OpenTissue's non-smooth Newton of the same year, by the same
//!   group);
//! * the PGS sweep: row by row over the boxed LCP, `x_i <- clamp(x_i - y_i / A_ii, l_i(x),
//!   u_i(x))` with the bounds of the current `x_n` (the normal row of a contact is updated
//!   before its tangents). This is the pyramid PGS of the paper's model, not
//!   `contactlab_core::drivers::pgs` (per-contact, exact Coulomb cone, a different problem
//!   whose solution is not a zero of `H`);
//! * a start that already meets the tolerance takes no PGS sweep and no Newton iteration: this
//!   is how Table 2 can report a minimum of 0 iterations although its counts include the 4
//!   PGS sweeps;
//! * a local-minimum test `|J'H| <= opts.grad_tol` before each solve (not in the paper; it
//!   turns a vanishing gradient into [`Status::LocalMinimum`] instead of a back-tracking
//!   failure).
//!
//! The PGS sweeps run in the solver's `init`: [`Solution::iterations`] counts Newton
//! iterations only, and the number of sweeps is in `Solution::evaluations["pgs_sweeps"]` and
//! in the trace's row 0 (`extra["pgs_sweeps"]`, with `extra["merit_cold"]` the merit before
//! the warm start). The paper's Table 2 count is `iterations + pgs_sweeps`.

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use contactlab_core::drivers::execute::execute;
use contactlab_core::{CoreError, Solution, SolveOptions, Status};
use faer::prelude::*;
use faer::Mat;

use super::{check_start, dot, MinMap, MinMapPoint, Piece};

/// What the absolute tolerance `opts.tol` bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvergenceMeasure {
    /// `theta = H'H / 2 <= tol` (the paper's merit; OpenTissue's "accuracy").
    Theta,
    /// `|H|_2 <= tol` (the measure of the generic least-squares drivers).
    NormH,
}

/// How the (Schur-reduced) Newton system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearSolver {
    /// LU with partial pivoting; a truncated-SVD pseudo-inverse when LU shows the matrix is
    /// numerically singular (pivot ratio or residual test).
    LuWithSvdFallback,
    /// Always the truncated-SVD pseudo-inverse (the paper's solve).
    Svd,
}

/// Parameters of the min-map Newton driver; [`Default`] gives the paper's values where it
/// has them (see the module documentation for the rest).
#[derive(Debug, Clone, PartialEq)]
pub struct MinMapNewtonParams {
    /// Projected Gauss-Seidel sweeps of the warm start (paper: 4).
    pub pgs_sweeps: usize,
    /// Armijo sufficient-decrease constant `c` (paper silent; 1e-4).
    pub armijo_c: f64,
    /// Back-tracking factor `tau <- factor * tau` (paper silent; 0.5).
    pub backtrack_factor: f64,
    /// Back-tracking fails when `tau` drops below this (paper silent; 1e-5).
    pub min_step_length: f64,
    /// Stagnated when an accepted step changes no component by more than this (paper: 1e-5).
    pub stagnation_tol: f64,
    /// What `opts.tol` bounds (paper: the absolute tolerance on the merit `theta`).
    pub measure: ConvergenceMeasure,
    /// Reduce the Newton system to the active block by the Schur complement (paper: yes);
    /// `false` solves the full `n x n` B-derivative system.
    pub schur: bool,
    /// How the reduced (or full) system is solved.
    pub linear_solver: LinearSolver,
    /// Singular values below `svd_rel_tol * sigma_max` are dropped from the pseudo-inverse.
    pub svd_rel_tol: f64,
    /// LU is rejected (SVD fallback) when `min |U_ii| < lu_pivot_ratio * max |U_ii|`.
    pub lu_pivot_ratio: f64,
}

impl Default for MinMapNewtonParams {
    fn default() -> Self {
        MinMapNewtonParams {
            pgs_sweeps: 4,
            armijo_c: 1e-4,
            backtrack_factor: 0.5,
            min_step_length: 1e-5,
            stagnation_tol: 1e-5,
            measure: ConvergenceMeasure::Theta,
            schur: true,
            linear_solver: LinearSolver::LuWithSvdFallback,
            svd_rel_tol: 1e-12,
            lu_pivot_ratio: 1e-12,
        }
    }
}

impl MinMapNewtonParams {
    /// The paper's budgets: absolute tolerance `1e-6` and at most 100 iterations.
    pub fn paper_options() -> SolveOptions {
        SolveOptions {
            tol: 1e-6,
            max_iter: 100,
            ..SolveOptions::default()
        }
    }

    /// Whether `theta` meets the tolerance `tol` in this measure.
    pub fn converged(&self, theta: f64, tol: f64) -> bool {
        match self.measure {
            ConvergenceMeasure::Theta => theta <= tol,
            ConvergenceMeasure::NormH => (2.0 * theta).sqrt() <= tol,
        }
    }
}

/// A Newton direction and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonStep {
    /// The direction `dx`.
    pub dx: Vec<f64>,
    /// Size of the system solved (`|A|` with the Schur reduction, `n` without).
    pub system_size: usize,
    /// Whether the truncated SVD was used.
    pub used_svd: bool,
    /// Numerical rank of the system (its size unless the SVD dropped singular values).
    pub rank: usize,
}

/// Solves `M z = rhs` where `mt = M'` is given (row-major storage of `M` is the column-major
/// storage of `M'`); returns `(z, used_svd, rank)`, `None` when no finite solution comes out.
fn solve_transposed(
    mt: &Mat<f64>,
    rhs: &[f64],
    params: &MinMapNewtonParams,
) -> Option<(Vec<f64>, bool, usize)> {
    let n = mt.nrows();
    if n == 0 {
        return Some((Vec::new(), false, 0));
    }
    let b = Col::from_fn(n, |i| rhs[i]);
    if params.linear_solver == LinearSolver::LuWithSvdFallback {
        let lu = mt.partial_piv_lu();
        let u = lu.U();
        let (lo, hi) = (0..n).fold((f64::INFINITY, 0.0f64), |(lo, hi), i| {
            (lo.min(u[(i, i)].abs()), hi.max(u[(i, i)].abs()))
        });
        if hi.is_finite() && hi > 0.0 && lo >= params.lu_pivot_ratio * hi {
            let z = lu.solve_transpose(&b);
            let z: Vec<f64> = (0..n).map(|i| z[i]).collect();
            // Residual test `|M z - rhs| <= 1e-8 (|rhs| + |M|_max |z|_1)`: partial pivoting
            // can pass the pivot test on a matrix that is singular to working precision.
            let mz = mt.transpose() * Col::from_fn(n, |i| z[i]);
            let res = (0..n).map(|i| (mz[i] - rhs[i]).abs()).fold(0.0, f64::max);
            let scale_m = (0..n)
                .flat_map(|j| (0..n).map(move |i| (i, j)))
                .fold(0.0f64, |m, (i, j)| m.max(mt[(i, j)].abs()));
            let scale = rhs.iter().fold(0.0f64, |m, v| m.max(v.abs()))
                + scale_m * z.iter().map(|v| v.abs()).sum::<f64>();
            if z.iter().all(|v| v.is_finite()) && res <= 1e-8 * scale.max(f64::MIN_POSITIVE) {
                return Some((z, false, n));
            }
        }
    }
    // Truncated pseudo-inverse: M' = U S V' so M = V S U' and M^+ = U S^+ V'.
    let svd = mt.svd().ok()?;
    let s = svd.S().column_vector();
    let smax = (0..n).fold(0.0f64, |m, i| m.max(s[i]));
    if !(smax.is_finite()) {
        return None;
    }
    let cut = params.svd_rel_tol * smax;
    let vtb = svd.V().transpose() * &b;
    let mut w = Col::<f64>::zeros(n);
    let mut rank = 0;
    for i in 0..n {
        if s[i] > cut && s[i] > 0.0 {
            w[i] = vtb[i] / s[i];
            rank += 1;
        }
    }
    let z = svd.U() * &w;
    let z: Vec<f64> = (0..n).map(|i| z[i]).collect();
    z.iter().all(|v| v.is_finite()).then_some((z, true, rank))
}

/// `+mu_i` on `L`, `-mu_i` on `U` (the off-diagonal entry of row `i` of eq. 9), 0 on `A` and
/// on normal rows.
fn bound_coupling(map: &MinMap<'_>, i: usize, p: Piece) -> f64 {
    match p {
        Piece::Lower => map.row_mu(i),
        Piece::Upper => -map.row_mu(i),
        Piece::Active => 0.0,
    }
}

/// The Newton direction from the Schur-complement reduction to the active block (eq. 11).
///
/// `None` when the reduced system has no finite solution.
pub fn schur_newton_step(
    map: &MinMap<'_>,
    p: &MinMapPoint,
    params: &MinMapNewtonParams,
) -> Option<NewtonStep> {
    let n = map.dim();
    let active: Vec<usize> = (0..n).filter(|&i| p.pieces[i] == Piece::Active).collect();
    let na = active.len();
    let mut pos = vec![usize::MAX; n];
    for (r, &i) in active.iter().enumerate() {
        pos[i] = r;
    }
    // z = D^-1 H_I (zero on A): D's row i is e_i + s_i e_n(i) when n(i) is in I, and D^-1
    // flips the sign of that entry.
    let mut z = vec![0.0; n];
    for (i, zi) in z.iter_mut().enumerate() {
        let pi = p.pieces[i];
        if pi == Piece::Active {
            continue;
        }
        let s = bound_coupling(map, i, pi);
        let k = MinMap::normal_of(i);
        *zi = if s != 0.0 && p.pieces[k] != Piece::Active {
            p.h[i] - s * p.h[k]
        } else {
            p.h[i]
        };
    }
    // S' (column r of S' is row r of S), then the C-columns: S = A_AA - A_AI C, where C has
    // the entry s_i in row i (tangent in I), column n(i) (normal in A).
    let mut st = Mat::<f64>::zeros(na, na);
    let mut rhs = vec![0.0; na];
    for (r, &i) in active.iter().enumerate() {
        let row = map.row(i);
        let mut col = st.col_mut(r);
        for (c, &j) in active.iter().enumerate() {
            col[c] = row[j];
        }
        rhs[r] = -p.h[i] + dot(row, &z);
    }
    for i in 0..n {
        let pi = p.pieces[i];
        if pi == Piece::Active {
            continue;
        }
        let s = bound_coupling(map, i, pi);
        let k = MinMap::normal_of(i);
        if s == 0.0 || p.pieces[k] != Piece::Active {
            continue;
        }
        let c = pos[k];
        for (r, &ir) in active.iter().enumerate() {
            st[(c, r)] -= s * map.entry(ir, i);
        }
    }
    let (dxa, used_svd, rank) = solve_transposed(&st, &rhs, params)?;
    let mut dx = vec![0.0; n];
    for (r, &i) in active.iter().enumerate() {
        dx[i] = dxa[r];
    }
    // dx_I = -D^-1 (H_I + C dx_A), row by row: dx_i + s_i dx_n(i) = -H_i, normals first.
    for i in (0..n).step_by(3) {
        for t in 0..3 {
            let r = i + t;
            if r >= n || p.pieces[r] == Piece::Active {
                continue;
            }
            let s = bound_coupling(map, r, p.pieces[r]);
            dx[r] = -p.h[r] - if s != 0.0 { s * dx[i] } else { 0.0 };
        }
    }
    dx.iter().all(|v| v.is_finite()).then_some(NewtonStep {
        dx,
        system_size: na,
        used_svd,
        rank,
    })
}

/// The Newton direction from the full `n x n` system `J dx = -H` with the generalized
/// Jacobian of eq. 9 (no reduction).
pub fn full_newton_step(
    map: &MinMap<'_>,
    p: &MinMapPoint,
    params: &MinMapNewtonParams,
) -> Option<NewtonStep> {
    let n = map.dim();
    let mut jt = Mat::<f64>::zeros(n, n);
    let mut row = vec![0.0; n];
    for i in 0..n {
        map.jacobian_row(i, p.pieces[i], &mut row);
        let mut col = jt.col_mut(i);
        for (j, v) in row.iter().enumerate() {
            col[j] = *v;
        }
    }
    let rhs: Vec<f64> = p.h.iter().map(|v| -v).collect();
    let (dx, used_svd, rank) = solve_transposed(&jt, &rhs, params)?;
    Some(NewtonStep {
        dx,
        system_size: n,
        used_svd,
        rank,
    })
}

/// The Newton direction as `params.schur` asks.
pub fn newton_step(
    map: &MinMap<'_>,
    p: &MinMapPoint,
    params: &MinMapNewtonParams,
) -> Option<NewtonStep> {
    if params.schur {
        schur_newton_step(map, p, params)
    } else {
        full_newton_step(map, p, params)
    }
}

/// One projected Gauss-Seidel sweep over the rows of the boxed LCP with pyramid bounds:
/// `x_i <- clamp(x_i - y_i / A_ii, l_i(x), u_i(x))` with the current `x`; returns the largest
/// component change.
///
/// Rows with a nonpositive or non-finite `A_ii` are left as they are. If the normal row was
/// left at `x_n < 0`, the crossed tangent bounds clamp to `u = mu x_n`.
pub fn pgs_pyramid_sweep(map: &MinMap<'_>, x: &mut [f64]) -> f64 {
    let mut change = 0.0f64;
    for i in 0..map.dim() {
        let aii = map.entry(i, i);
        if !(aii > 0.0 && aii.is_finite()) {
            continue;
        }
        let yi = dot(map.row(i), x) + map.b()[i];
        let (l, u) = map.bounds(x, i);
        let new = (x[i] - yi / aii).max(l).min(u);
        change = change.max((new - x[i]).abs());
        x[i] = new;
    }
    change
}

/// `J' H` for the Jacobian whose rows are `p.pieces`.
fn gradient(map: &MinMap<'_>, p: &MinMapPoint) -> Vec<f64> {
    let n = map.dim();
    let mut g = vec![0.0; n];
    for i in 0..n {
        let hi = p.h[i];
        if hi == 0.0 {
            continue;
        }
        match p.pieces[i] {
            Piece::Active => {
                for (gj, aij) in g.iter_mut().zip(map.row(i)) {
                    *gj += hi * aij;
                }
            }
            pi => {
                g[i] += hi;
                let s = bound_coupling(map, i, pi);
                if s != 0.0 {
                    g[MinMap::normal_of(i)] += s * hi;
                }
            }
        }
    }
    g
}

/// How one Newton iteration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// A step passed the Armijo test.
    Accepted,
    /// No finite Newton direction.
    Singular,
    /// `|J'H| <= grad_tol` before solving.
    LocalMinimum,
    /// The direction is not one of descent (`H' J dx >= 0`).
    NotDescent,
    /// `tau` fell below `min_step_length` without sufficient decrease.
    BacktrackingFailed,
}

impl StepOutcome {
    /// Name used in traces (`step_kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            StepOutcome::Accepted => "newton",
            StepOutcome::Singular => "singular",
            StepOutcome::LocalMinimum => "local_minimum",
            StepOutcome::NotDescent => "not_descent",
            StepOutcome::BacktrackingFailed => "backtracking_failed",
        }
    }
}

/// The record of one Newton iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationReport {
    /// How it ended.
    pub outcome: StepOutcome,
    /// Step length `tau` accepted (0 when none).
    pub tau: f64,
    /// Number of back-tracking reductions.
    pub backtracks: u32,
    /// `theta'(x; dx) = H' J dx`.
    pub slope: f64,
    /// `|J'H|_2` at the start of the iteration.
    pub grad_norm: f64,
    /// `(|L|, |A|, |U|)` at the start of the iteration.
    pub sets: (usize, usize, usize),
    /// The Newton step's solve, when there was one.
    pub step: Option<(usize, bool, usize)>,
}

/// The min-map Newton driver as an argmin [`Solver`]; holds the current point.
#[derive(Debug, Clone)]
pub struct MinMapNewtonSolver {
    /// The parameters.
    pub params: MinMapNewtonParams,
    point: Option<MinMapPoint>,
    status: Option<Status>,
}

impl MinMapNewtonSolver {
    /// A solver with the given parameters.
    pub fn new(params: MinMapNewtonParams) -> MinMapNewtonSolver {
        MinMapNewtonSolver {
            params,
            point: None,
            status: None,
        }
    }

    /// One Newton iteration from `p`: the new point (or `p` itself when no step was
    /// accepted) and the report.
    pub fn iterate(
        &self,
        map: &MinMap<'_>,
        p: &MinMapPoint,
        grad_tol: f64,
    ) -> (Option<MinMapPoint>, IterationReport) {
        let n = map.dim();
        let g = gradient(map, p);
        let mut report = IterationReport {
            outcome: StepOutcome::Accepted,
            tau: 0.0,
            backtracks: 0,
            slope: f64::NAN,
            grad_norm: dot(&g, &g).sqrt(),
            sets: p.set_sizes(),
            step: None,
        };
        if report.grad_norm <= grad_tol {
            report.outcome = StepOutcome::LocalMinimum;
            return (None, report);
        }
        let Some(step) = newton_step(map, p, &self.params) else {
            report.outcome = StepOutcome::Singular;
            return (None, report);
        };
        report.step = Some((step.system_size, step.used_svd, step.rank));
        let dx = step.dx;
        let mut ad = vec![0.0; n];
        map.mul(&dx, &mut ad);
        let mut jdx = vec![0.0; n];
        map.jacobian_times(&p.pieces, &dx, &ad, &mut jdx);
        let slope = dot(&p.h, &jdx);
        report.slope = slope;
        if slope.is_nan() || slope >= 0.0 {
            report.outcome = StepOutcome::NotDescent;
            return (None, report);
        }
        // Armijo back-tracking on theta (eq. 7 with the paper's line search).
        let mut tau = 1.0;
        let mut xt = vec![0.0; n];
        let mut yt = vec![0.0; n];
        let mut ht = vec![0.0; n];
        let mut pt = vec![Piece::Active; n];
        loop {
            for i in 0..n {
                xt[i] = p.x[i] + tau * dx[i];
                yt[i] = p.y[i] + tau * ad[i];
            }
            let theta = map.min_map_from(&xt, &yt, &mut ht, &mut pt);
            if theta <= p.theta + self.params.armijo_c * tau * slope {
                break;
            }
            tau *= self.params.backtrack_factor;
            report.backtracks += 1;
            if tau.is_nan() || tau < self.params.min_step_length {
                report.outcome = StepOutcome::BacktrackingFailed;
                return (None, report);
            }
        }
        report.tau = tau;
        // Re-evaluate y = A x + b exactly at the accepted point.
        (Some(map.evaluate(&xt)), report)
    }

    fn status_at(&self, p: &MinMapPoint, tol: f64) -> Option<Status> {
        if !p.theta.is_finite() || p.x.iter().any(|v| !v.is_finite()) {
            Some(Status::NotFinite)
        } else if self.params.converged(p.theta, tol) {
            Some(Status::Converged)
        } else {
            None
        }
    }
}

/// Argmin state of the min-map Newton driver: `x` and `theta` as cost.
pub type MinMapState = IterState<Vec<f64>, (), (), (), (), f64>;

/// The argmin problem: the min-map and the stopping tolerances.
#[derive(Debug, Clone)]
pub struct MinMapProblem<'m, 'a> {
    /// The residual.
    pub map: &'m MinMap<'a>,
    /// Absolute tolerance (in the measure of [`MinMapNewtonParams::measure`]).
    pub tol: f64,
    /// Local minimum when `|J'H|_2 <= grad_tol` and not converged.
    pub grad_tol: f64,
}

fn bump(problem: &mut Problem<MinMapProblem<'_, '_>>, key: &'static str, by: u64) {
    *problem.counts.entry(key).or_insert(0) += by;
}

impl<'m, 'a> Solver<MinMapProblem<'m, 'a>, MinMapState> for MinMapNewtonSolver {
    fn name(&self) -> &str {
        "Erleben-Ortiz min-map non-smooth Newton"
    }

    fn init(
        &mut self,
        problem: &mut Problem<MinMapProblem<'m, 'a>>,
        state: MinMapState,
    ) -> Result<(MinMapState, Option<KV>), ArgminError> {
        let mut x = state.get_param().cloned().unwrap_or_default();
        let pr = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("min-map problem missing"))?;
        let (map, tol) = (pr.map, pr.tol);
        let cold = map.evaluate(&x);
        let mut sweeps = 0u64;
        let mut point = cold.clone();
        if self.status_at(&cold, tol).is_none() {
            for _ in 0..self.params.pgs_sweeps {
                pgs_pyramid_sweep(map, &mut x);
                sweeps += 1;
            }
            if sweeps > 0 {
                point = map.evaluate(&x);
            }
        }
        bump(problem, "residual_count", 1 + u64::from(sweeps > 0));
        bump(problem, "pgs_sweeps", sweeps);
        self.status = self.status_at(&point, tol);
        let (l, a, u) = point.set_sizes();
        let kv = kv!(
            "merit" => point.theta;
            "merit_cold" => cold.theta;
            "h_norm" => point.h_norm();
            "pgs_sweeps" => sweeps;
            "active" => a as u64;
            "lower" => l as u64;
            "upper" => u as u64;
            "step_kind" => if sweeps > 0 { "pgs" } else { "start" };
        );
        let theta = point.theta;
        let x = point.x.clone();
        self.point = Some(point);
        Ok((state.param(x).cost(theta), Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<MinMapProblem<'m, 'a>>,
        state: MinMapState,
    ) -> Result<(MinMapState, Option<KV>), ArgminError> {
        let pr = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("min-map problem missing"))?;
        let (map, tol, grad_tol) = (pr.map, pr.tol, pr.grad_tol);
        let Some(p) = self.point.take() else {
            self.status = Some(Status::NotFinite);
            return Ok((state, None));
        };
        let (next, rep) = self.iterate(map, &p, grad_tol);
        bump(problem, "newton_iterations", 1);
        if let Some((_, svd, _)) = rep.step {
            bump(problem, "linear_solves", 1);
            bump(problem, "svd_solves", u64::from(svd));
        }
        bump(problem, "residual_count", u64::from(rep.backtracks) + 1);
        let (l, a, u) = rep.sets;
        let (size, svd, rank) = rep.step.unwrap_or((0, false, 0));
        let (point, step_norm, max_change) = match next {
            Some(q) => {
                let d: Vec<f64> = q.x.iter().zip(&p.x).map(|(a, b)| a - b).collect();
                let mc = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                (q, dot(&d, &d).sqrt(), mc)
            }
            None => (p, 0.0, 0.0),
        };
        self.status = match rep.outcome {
            StepOutcome::Accepted => self
                .status_at(&point, tol)
                .or_else(|| (max_change < self.params.stagnation_tol).then_some(Status::Stagnated)),
            StepOutcome::Singular => Some(Status::SingularSystem),
            StepOutcome::LocalMinimum => Some(Status::LocalMinimum),
            StepOutcome::NotDescent | StepOutcome::BacktrackingFailed => {
                Some(Status::LineSearchFailed)
            }
        };
        let kv = kv!(
            "merit" => point.theta;
            "h_norm" => point.h_norm();
            "grad_norm" => rep.grad_norm;
            "step_norm" => step_norm;
            "max_change" => max_change;
            "step_kind" => rep.outcome.as_str();
            "step_length" => rep.tau;
            "backtracks" => u64::from(rep.backtracks);
            "slope" => rep.slope;
            "active" => a as u64;
            "lower" => l as u64;
            "upper" => u as u64;
            "system_size" => size as u64;
            "svd" => svd;
            "rank" => rank as u64;
        );
        let (x, theta) = (point.x.clone(), point.theta);
        self.point = Some(point);
        Ok((state.param(x).cost(theta), Some(kv)))
    }

    fn terminate(&mut self, _state: &MinMapState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// Solves the min-map `H(x) = 0` by the paper's non-smooth Newton method from `x0` (zero
/// when `None`), warm-started by `params.pgs_sweeps` pyramid PGS sweeps.
///
/// `opts.tol` is the absolute tolerance in `params.measure` (paper: `1e-6` on `theta`, see
/// [`MinMapNewtonParams::paper_options`]), `opts.max_iter` bounds the Newton iterations,
/// `opts.grad_tol` the local-minimum test, `opts.timeout` the wall clock; `opts.step_tol` is
/// not used (the paper's stagnation threshold is `params.stagnation_tol`). A wrong-length
/// `x0` is an error; a non-finite one gives [`Status::NotFinite`].
pub fn solve_minmap_newton(
    map: &MinMap<'_>,
    params: &MinMapNewtonParams,
    x0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    let n = map.dim();
    let x0 = x0.unwrap_or_else(|| vec![0.0; n]);
    check_start(&x0, n)?;
    let problem = MinMapProblem {
        map,
        tol: opts.tol,
        grad_tol: opts.grad_tol,
    };
    let solver = MinMapNewtonSolver::new(params.clone());
    let (tol, p) = (opts.tol, params.clone());
    execute(problem, solver, x0, opts, move |s: &MinMapState| {
        p.converged(s.get_cost(), tol)
    })
}
