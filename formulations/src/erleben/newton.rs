//! The non-smooth Newton driver of Erleben and Ortiz: Newton on the B-derivative (eqs. 6-7, 9)
//! with Armijo back-tracking on `theta`, a warm start of `k` projected Gauss-Seidel sweeps
//! (section "Numerical behavior": `k = 4`), and on the min-map the Schur-complement reduction of
//! the Newton system to the active block (eq. 11 and the Schur system below it). The driver
//! runs on any [`BDerivative`]: the min-map supplies the reduction and the sweeps through that
//! trait's hooks; Todorov's implicit NCP and Mylapilli's MNCP get the dense square system and
//! no warm start.
//!
//! One Newton iteration at `x`, with `H = H(x)` and `J` its B-derivative element:
//!
//! 1. Solve `J dx = -H`. On the min-map ([`schur_newton_step`]): partition the rows into `A`
//!    (active: row of `A`) and `I = L u U` (bound rows `e_i +- mu_i e_n(i)`). With the
//!    permutation of eq. 11 the Newton matrix is `[A_AA A_AI; C D]`; `D` is unit lower
//!    triangular with its off-diagonal entries only in normal columns, so `D^-1` flips their
//!    signs, and `D^-1 C = C`. Solve the Schur system `S dx_A = -H_A + A_AI D^-1 H_I`,
//!    `S = A_AA - A_AI D^-1 C`, then back-substitute `dx_I = -D^-1 (H_I + C dx_A)`. On the
//!    other kinds (module [`super`]) a bound row of constant bounds (a friction loss, a limit)
//!    is `e_i` in `D` and adds nothing to `C`, and an equality row, whose bounds are
//!    infinite, is always in `A`: the same reduction, unchanged.
//! 2. Armijo back-tracking `theta(x + tau dx) <= theta(x) + c tau theta'(x; dx)` with
//!    `theta'(x; dx) = H' J dx` (`= -2 theta` when the Newton system is solved exactly).
//!
//! Stopping rules (paper): absolute tolerance on `theta` (or on `|H|`, see
//! [`ConvergenceMeasure`]), at most `max_iter` Newton iterations, stagnation when the largest
//! component change of an accepted step is below `1e-5`, and back-tracking failure.
//!
//! What the paper leaves open and is chosen here (each a field of [`ErlebenNewton`]):
//! * the linear solve: the paper uses an SVD. By default we factor by LU with partial
//!   pivoting and fall back to a truncated-SVD pseudo-inverse (the paper's solve) when a pivot
//!   ratio or the solve's residual shows that the system is (numerically) singular;
//!   [`LinearSolver::Svd`] always uses the SVD;
//! * the Armijo constants `c = 1e-4`, `tau <- tau / 2`, and back-tracking failure below
//!   `tau = 1e-5` (the values of OpenTissue's non-smooth Newton of the same year, by the same
//!   group);
//! * the PGS sweep ([`pgs_pyramid_sweep`]): row by row over the boxed LCP,
//!   `x_i <- clamp(x_i - y_i / A_ii, l_i(x), u_i(x))` with the bounds of the current `x_n` (the
//!   normal row of a contact is updated before its tangents). This is the pyramid PGS of the
//!   paper's model, not `contactlab_core::drivers::pgs` (per-contact, exact Coulomb cone, a
//!   different problem whose solution is not a zero of `H`);
//! * a start that already meets the tolerance takes no PGS sweep and no Newton iteration: this
//!   is how Table 2 can report a minimum of 0 iterations although its counts include the 4
//!   PGS sweeps;
//! * a local-minimum test `|J'H| <= opts.grad_tol` before each solve (not in the paper; it
//!   turns a vanishing gradient into [`Status::LocalMinimum`] instead of a back-tracking
//!   failure);
//! * [`ErlebenNewton::default`] stops on `|H|_2 <= tol`, the measure of every least-squares
//!   driver, so that one tolerance means the same across drivers; [`ErlebenNewton::paper`]
//!   stops on the paper's `theta <= tol`.
//!
//! The PGS sweeps run in the solver's `init`: [`Solution::iterations`] counts Newton
//! iterations only, and the number of sweeps is the counter `pgs_sweeps`
//! (`Solution::counters["pgs_sweeps"]`, also in the trace's row 0 as `extra["pgs_sweeps"]`,
//! with `extra["merit_cold"]` the merit before the warm start). The paper's Table 2 count is
//! `iterations + pgs_sweeps`.

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use contactlab_core::deadline::Deadline;
use contactlab_core::drivers::execute::execute;
use contactlab_core::drivers::kit::{
    self, dot, solve_square_transposed, SquareSolution, SquareSolve,
};
use contactlab_core::plugin::{Driver, DriverPlugin, NeedsBDerivative};
use contactlab_core::{
    BDerivative, CoreError, NewtonDirection, NewtonSystem, Solution, SolveOptions, Status,
};
use faer::Mat;
use serde::{Deserialize, Serialize};

use super::minmap::{check_start, MinMap, MinMapPoint, Piece};

/// What the absolute tolerance `opts.stop_tol` bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvergenceMeasure {
    /// `theta = H'H / 2 <= tol` (the paper's merit; OpenTissue's "accuracy").
    Theta,
    /// `|H|_2 <= tol` (the measure of the generic least-squares drivers).
    NormH,
}

/// How the (Schur-reduced) Newton system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinearSolver {
    /// LU with partial pivoting; a truncated-SVD pseudo-inverse when LU shows the matrix is
    /// numerically singular (pivot ratio or residual test).
    LuWithSvdFallback,
    /// Always the truncated-SVD pseudo-inverse (the paper's solve).
    Svd,
}

/// Erleben and Ortiz's non-smooth Newton and its parameters (the typed options of
/// `--optimizer newton`); [`ErlebenNewton::paper`] gives the paper's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ErlebenNewton {
    /// Projected Gauss-Seidel sweeps of the warm start (paper: 4), where the formulation has a
    /// sweep ([`BDerivative::warm_start_sweep`]).
    pub pgs_sweeps: usize,
    /// Armijo sufficient-decrease constant `c` (paper silent; 1e-4).
    pub armijo_c: f64,
    /// Back-tracking factor `tau <- factor * tau` (paper silent; 0.5).
    pub backtrack_factor: f64,
    /// Back-tracking fails when `tau` drops below this (paper silent; 1e-5).
    pub min_step_length: f64,
    /// Stagnated when an accepted step changes no component by more than this (paper: 1e-5).
    pub stagnation_tol: f64,
    /// What `opts.stop_tol` bounds.
    pub measure: ConvergenceMeasure,
    /// Use the formulation's own reduced Newton solve (the min-map's Schur complement, eq. 11;
    /// paper: yes); `false` solves the full `n x n` system.
    pub schur: bool,
    /// How the reduced (or full) system is solved.
    pub linear_solver: LinearSolver,
    /// Singular values below `svd_rel_tol * sigma_max` are dropped from the pseudo-inverse.
    pub svd_rel_tol: f64,
    /// LU is rejected (SVD fallback) when `min |U_ii| < lu_pivot_ratio * max |U_ii|`.
    pub lu_pivot_ratio: f64,
}

impl Default for ErlebenNewton {
    /// The paper's values, stopping on `|H|_2` (see [`ErlebenNewton::paper`]).
    fn default() -> Self {
        ErlebenNewton {
            pgs_sweeps: 4,
            armijo_c: 1e-4,
            backtrack_factor: 0.5,
            min_step_length: 1e-5,
            stagnation_tol: 1e-5,
            measure: ConvergenceMeasure::NormH,
            schur: true,
            linear_solver: LinearSolver::LuWithSvdFallback,
            svd_rel_tol: 1e-12,
            lu_pivot_ratio: 1e-12,
        }
    }
}

impl ErlebenNewton {
    /// The paper's driver: its values, stopping on `theta <= tol`.
    pub fn paper() -> ErlebenNewton {
        ErlebenNewton {
            measure: ConvergenceMeasure::Theta,
            ..ErlebenNewton::default()
        }
    }

    /// The paper's budgets: absolute tolerance `1e-6` and at most 100 iterations.
    pub fn paper_options() -> SolveOptions {
        SolveOptions {
            stop_tol: 1e-6,
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

    /// The linear-solve settings.
    pub fn square_solve(&self) -> SquareSolve {
        SquareSolve {
            svd_only: self.linear_solver == LinearSolver::Svd,
            svd_rel_tol: self.svd_rel_tol,
            lu_pivot_ratio: self.lu_pivot_ratio,
        }
    }
}

impl<R: BDerivative + ?Sized> Driver<R> for ErlebenNewton {
    fn solve(
        &self,
        residual: &R,
        x0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        solve_newton(residual, self, Some(x0), opts)
    }
}

impl DriverPlugin for ErlebenNewton {
    type Needs = NeedsBDerivative;
    const NAME: &'static str = "newton";
    const DESCRIPTION: &'static str = "Erleben and Ortiz non-smooth Newton: B-derivative, Schur reduction (min-map), Armijo, 4 PGS warm-start sweeps";

    fn check(&self) -> Result<(), CoreError> {
        let bad = |name: &str, v: f64, want: &str| {
            Err(CoreError::BadOption(format!(
                "newton option {name} must be {want}, got {v}"
            )))
        };
        if !(self.armijo_c > 0.0 && self.armijo_c < 1.0) {
            return bad("armijo_c", self.armijo_c, "in (0, 1)");
        }
        if !(self.backtrack_factor > 0.0 && self.backtrack_factor < 1.0) {
            return bad("backtrack_factor", self.backtrack_factor, "in (0, 1)");
        }
        if !(self.min_step_length > 0.0 && self.min_step_length < 1.0) {
            return bad("min_step_length", self.min_step_length, "in (0, 1)");
        }
        if !(self.stagnation_tol >= 0.0 && self.stagnation_tol.is_finite()) {
            return bad("stagnation_tol", self.stagnation_tol, "non-negative");
        }
        Ok(())
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

/// `+mu_i` on `L`, `-mu_i` on `U` (the off-diagonal entry of row `i` of eq. 9), 0 on `A` and
/// on normal rows.
fn bound_coupling(map: &MinMap, i: usize, p: Piece) -> f64 {
    match p {
        Piece::Lower => map.row_mu(i),
        Piece::Upper => -map.row_mu(i),
        Piece::Active => 0.0,
    }
}

/// The Newton direction from the Schur-complement reduction to the active block (eq. 11).
///
/// `None` when the reduced system has no finite solution.
pub fn schur_newton_step(map: &MinMap, p: &MinMapPoint, how: &SquareSolve) -> Option<NewtonStep> {
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
        let k = map.normal_row(i);
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
        let k = map.normal_row(i);
        if s == 0.0 || p.pieces[k] != Piece::Active {
            continue;
        }
        let c = pos[k];
        for (r, &ir) in active.iter().enumerate() {
            st[(c, r)] -= s * map.entry(ir, i);
        }
    }
    let SquareSolution {
        z: dxa,
        used_svd,
        rank,
    } = solve_square_transposed(&st, &rhs, how)?;
    let mut dx = vec![0.0; n];
    for (r, &i) in active.iter().enumerate() {
        dx[i] = dxa[r];
    }
    // dx_I = -D^-1 (H_I + C dx_A), row by row: dx_i + s_i dx_n(i) = -H_i. A contact's normal
    // row precedes its frictional rows, so dx_n(i) is known when row i is reached.
    for r in 0..n {
        if p.pieces[r] == Piece::Active {
            continue;
        }
        let s = bound_coupling(map, r, p.pieces[r]);
        let coupled = if s != 0.0 {
            s * dx[map.normal_row(r)]
        } else {
            0.0
        };
        dx[r] = -p.h[r] - coupled;
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
pub fn full_newton_step(map: &MinMap, p: &MinMapPoint, how: &SquareSolve) -> Option<NewtonStep> {
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
    let s = solve_square_transposed(&jt, &rhs, how)?;
    Some(NewtonStep {
        dx: s.z,
        system_size: n,
        used_svd: s.used_svd,
        rank: s.rank,
    })
}

/// `J' H` for the Jacobian whose rows are `p.pieces` (eq. 9), row by row without forming `J`.
fn gradient(map: &MinMap, p: &MinMapPoint) -> Vec<f64> {
    let mut g = vec![0.0; map.dim()];
    for (i, (&hi, &pi)) in p.h.iter().zip(&p.pieces).enumerate() {
        if hi == 0.0 {
            continue;
        }
        match pi {
            Piece::Active => {
                for (gj, aij) in g.iter_mut().zip(map.row(i)) {
                    *gj += hi * aij;
                }
            }
            _ => {
                g[i] += hi;
                let s = bound_coupling(map, i, pi);
                if s != 0.0 {
                    g[map.normal_row(i)] += s * hi;
                }
            }
        }
    }
    g
}

/// The min-map's structure for the Newton driver: one evaluation of the pieces gives the
/// gradient, the Schur-reduced step (eq. 11) and `J dx` in O(n^2) besides the reduced solve,
/// and the pyramid Gauss-Seidel sweep is the warm start.
impl BDerivative for MinMap {
    fn newton_system(
        &self,
        x: &[f64],
        _f: &[f64],
        how: &SquareSolve,
        reduced: bool,
    ) -> NewtonSystem {
        let p = self.evaluate(x);
        let step = if reduced {
            schur_newton_step(self, &p, how)
        } else {
            full_newton_step(self, &p, how)
        };
        let direction = step.map(|s| {
            let mut ad = vec![0.0; self.dim()];
            self.mul(&s.dx, &mut ad);
            let mut j_dx = vec![0.0; self.dim()];
            self.jacobian_times(&p.pieces, &s.dx, &ad, &mut j_dx);
            NewtonDirection {
                dx: s.dx,
                j_dx,
                system_size: s.system_size,
                used_svd: s.used_svd,
                rank: s.rank,
            }
        });
        NewtonSystem {
            gradient: gradient(self, &p),
            direction,
        }
    }

    fn warm_start_sweep(&self, x: &mut [f64]) -> bool {
        pgs_pyramid_sweep(self, x);
        true
    }
}

/// One projected Gauss-Seidel sweep over the rows of the boxed LCP with pyramid bounds:
/// `x_i <- clamp(x_i - y_i / A_ii, l_i(x), u_i(x))` with the current `x`; returns the largest
/// component change.
///
/// Rows with a nonpositive or non-finite `A_ii` are left as they are. If the normal row was
/// left at `x_n < 0`, the crossed tangent bounds clamp to `u = mu x_n`. An equality row, its
/// bounds infinite, takes the plain Gauss-Seidel update; a friction loss's is clamped to its
/// constant box.
pub fn pgs_pyramid_sweep(map: &MinMap, x: &mut [f64]) -> f64 {
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

/// A point with its residual `H` and merit `theta = H'H / 2`.
#[derive(Debug, Clone)]
pub struct NewtonPoint {
    /// `x`.
    pub x: Vec<f64>,
    /// `H(x)`.
    pub h: Vec<f64>,
    /// `theta = H'H / 2`.
    pub theta: f64,
}

impl NewtonPoint {
    /// Evaluates `H` at `x`.
    pub fn at<R: BDerivative + ?Sized>(r: &R, x: Vec<f64>) -> NewtonPoint {
        let mut h = vec![0.0; r.num_residuals()];
        r.residual(&x, &mut h);
        NewtonPoint {
            theta: kit::merit_of(&h),
            x,
            h,
        }
    }

    /// `|H|_2`.
    pub fn h_norm(&self) -> f64 {
        (2.0 * self.theta).sqrt()
    }
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
    /// The time limit ran out during the back-tracking.
    Timeout,
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
            StepOutcome::Timeout => "timeout",
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
    /// The Newton system's solve, when there was one: `(size, used_svd, rank)`.
    pub step: Option<(usize, bool, usize)>,
}

impl ErlebenNewton {
    /// One Newton iteration from `p`: the new point (or `None` when no step was accepted) and
    /// the report.
    pub fn iterate<R: BDerivative + ?Sized>(
        &self,
        r: &R,
        p: &NewtonPoint,
        grad_tol: f64,
        deadline: Deadline,
    ) -> (Option<NewtonPoint>, IterationReport) {
        let n = p.x.len();
        let system = r.newton_system(&p.x, &p.h, &self.square_solve(), self.schur);
        let mut report = IterationReport {
            outcome: StepOutcome::Accepted,
            tau: 0.0,
            backtracks: 0,
            slope: f64::NAN,
            grad_norm: kit::norm2(&system.gradient),
            step: None,
        };
        if report.grad_norm <= grad_tol {
            report.outcome = StepOutcome::LocalMinimum;
            return (None, report);
        }
        let Some(step) = system.direction.filter(|d| d.dx.len() == n) else {
            report.outcome = StepOutcome::Singular;
            return (None, report);
        };
        report.step = Some((step.system_size, step.used_svd, step.rank));
        let dx = step.dx;
        let slope = dot(&p.h, &step.j_dx);
        report.slope = slope;
        if slope.is_nan() || slope >= 0.0 {
            report.outcome = StepOutcome::NotDescent;
            return (None, report);
        }
        // Armijo back-tracking on theta (eq. 7 with the paper's line search).
        let mut tau = 1.0;
        let mut ht = vec![0.0; r.num_residuals()];
        let xt = loop {
            let xt = kit::axpy(&p.x, tau, &dx);
            r.residual(&xt, &mut ht);
            if kit::merit_of(&ht) <= p.theta + self.armijo_c * tau * slope {
                break xt;
            }
            tau *= self.backtrack_factor;
            report.backtracks += 1;
            if tau.is_nan() || tau < self.min_step_length {
                report.outcome = StepOutcome::BacktrackingFailed;
                return (None, report);
            }
            if deadline.expired() {
                report.outcome = StepOutcome::Timeout;
                return (None, report);
            }
        };
        report.tau = tau;
        let theta = kit::merit_of(&ht);
        (
            Some(NewtonPoint {
                x: xt,
                h: ht,
                theta,
            }),
            report,
        )
    }

    fn status_at(&self, p: &NewtonPoint, tol: f64) -> Option<Status> {
        if !p.theta.is_finite() || !kit::all_finite(&p.x) {
            Some(Status::NotFinite)
        } else if self.converged(p.theta, tol) {
            Some(Status::Converged)
        } else {
            None
        }
    }
}

/// Argmin state of the Newton driver: `x` and `theta` as cost.
pub type NewtonState = IterState<Vec<f64>, (), (), (), (), f64>;

/// The argmin problem: the residual, the stopping tolerances and the deadline.
pub struct NewtonProblem<'a, R: ?Sized> {
    /// The residual.
    pub residual: &'a R,
    /// [`SolveOptions::stop_tol`]: absolute tolerance (in the measure of [`ErlebenNewton::measure`]).
    pub stop_tol: f64,
    /// Local minimum when `|J'H|_2 <= grad_tol` and not converged.
    pub grad_tol: f64,
    /// When the time limit runs out.
    pub deadline: Deadline,
}

/// The driver as an argmin [`Solver`]; holds the current point.
#[derive(Debug, Clone)]
struct NewtonArgmin {
    params: ErlebenNewton,
    point: Option<NewtonPoint>,
    status: Option<Status>,
}

fn bump<P>(problem: &mut Problem<P>, key: &'static str, by: u64) {
    *problem.counts.entry(key).or_insert(0) += by;
}

impl<'a, R: BDerivative + ?Sized> Solver<NewtonProblem<'a, R>, NewtonState> for NewtonArgmin {
    fn name(&self) -> &str {
        "Erleben-Ortiz non-smooth Newton"
    }

    fn init(
        &mut self,
        problem: &mut Problem<NewtonProblem<'a, R>>,
        state: NewtonState,
    ) -> Result<(NewtonState, Option<KV>), ArgminError> {
        let mut x = state.get_param().cloned().unwrap_or_default();
        let pr = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("Newton problem missing"))?;
        let (r, tol, deadline) = (pr.residual, pr.stop_tol, pr.deadline);
        let cold = NewtonPoint::at(r, x.clone());
        let mut sweeps = 0u64;
        let mut point = cold.clone();
        if self.params.status_at(&cold, tol).is_none() {
            for _ in 0..self.params.pgs_sweeps {
                if deadline.expired() || !r.warm_start_sweep(&mut x) {
                    break;
                }
                sweeps += 1;
            }
            if sweeps > 0 {
                point = NewtonPoint::at(r, x);
            }
        }
        bump(problem, "residual_count", 1 + u64::from(sweeps > 0));
        bump(problem, "pgs_sweeps", sweeps);
        self.status = self.params.status_at(&point, tol);
        let kv = kv!(
            "merit" => point.theta;
            "merit_cold" => cold.theta;
            "h_norm" => point.h_norm();
            "pgs_sweeps" => sweeps;
            "step_kind" => if sweeps > 0 { "pgs" } else { "start" };
        );
        let (x, theta) = (point.x.clone(), point.theta);
        self.point = Some(point);
        Ok((state.param(x).cost(theta), Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<NewtonProblem<'a, R>>,
        state: NewtonState,
    ) -> Result<(NewtonState, Option<KV>), ArgminError> {
        let pr = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("Newton problem missing"))?;
        let (r, tol, grad_tol, deadline) = (pr.residual, pr.stop_tol, pr.grad_tol, pr.deadline);
        let Some(p) = self.point.take() else {
            self.status = Some(Status::NotFinite);
            return Ok((state, None));
        };
        let (next, rep) = self.params.iterate(r, &p, grad_tol, deadline);
        bump(problem, "newton_iterations", 1);
        if let Some((_, svd, _)) = rep.step {
            bump(problem, "linear_solves", 1);
            bump(problem, "svd_solves", u64::from(svd));
        }
        bump(problem, "residual_count", u64::from(rep.backtracks) + 1);
        let (size, svd, rank) = rep.step.unwrap_or((0, false, 0));
        let (point, step_norm, max_change) = match next {
            Some(q) => {
                let d: Vec<f64> = q.x.iter().zip(&p.x).map(|(a, b)| a - b).collect();
                (q, kit::norm2(&d), kit::norm_inf(&d))
            }
            None => (p, 0.0, 0.0),
        };
        self.status = match rep.outcome {
            StepOutcome::Accepted => self
                .params
                .status_at(&point, tol)
                .or_else(|| (max_change < self.params.stagnation_tol).then_some(Status::Stagnated)),
            StepOutcome::Singular => Some(Status::SingularSystem),
            StepOutcome::LocalMinimum => Some(Status::LocalMinimum),
            StepOutcome::NotDescent | StepOutcome::BacktrackingFailed => {
                Some(Status::LineSearchFailed)
            }
            StepOutcome::Timeout => Some(Status::Timeout),
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
            "system_size" => size as u64;
            "svd" => svd;
            "rank" => rank as u64;
        );
        let (x, theta) = (point.x.clone(), point.theta);
        self.point = Some(point);
        Ok((state.param(x).cost(theta), Some(kv)))
    }

    fn terminate(&mut self, _state: &NewtonState) -> TerminationStatus {
        kit::termination(&self.status)
    }
}

/// Solves `H(x) = 0` for any [`BDerivative`] by Erleben and Ortiz's non-smooth Newton method
/// from `x0` (zero when `None`), warm-started by `params.pgs_sweeps` sweeps where the
/// formulation has them.
///
/// `opts.stop_tol` is the absolute tolerance in `params.measure` (paper: `1e-6` on `theta`, see
/// [`ErlebenNewton::paper_options`]), `opts.max_iter` bounds the Newton iterations,
/// `opts.grad_tol` the local-minimum test, `opts.time_limit` the wall clock; `opts.step_tol`
/// is not used (the paper's stagnation threshold is `params.stagnation_tol`). A wrong-length
/// `x0` or a non-square residual is an error; a non-finite `x0` gives [`Status::NotFinite`].
pub fn solve_newton<R: BDerivative + ?Sized>(
    residual: &R,
    params: &ErlebenNewton,
    x0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    let n = residual.num_unknowns();
    if residual.num_residuals() != n {
        return Err(CoreError::Unsupported(format!(
            "the Newton driver needs a square system; this residual has {} components for {n} unknowns",
            residual.num_residuals()
        )));
    }
    let x0 = x0.unwrap_or_else(|| vec![0.0; n]);
    check_start(&x0, n)?;
    let problem = NewtonProblem {
        residual,
        stop_tol: opts.stop_tol,
        grad_tol: opts.grad_tol,
        deadline: Deadline::after(opts.time_limit),
    };
    let solver = NewtonArgmin {
        params: params.clone(),
        point: None,
        status: None,
    };
    let (tol, p) = (opts.stop_tol, params.clone());
    execute(problem, solver, x0, opts, move |s: &NewtonState| {
        p.converged(s.get_cost(), tol)
    })
}

/// [`solve_newton`] on the min-map (the paper's setting).
pub fn solve_minmap_newton(
    map: &MinMap,
    params: &ErlebenNewton,
    x0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    solve_newton(map, params, x0, opts)
}
