//! Shared pieces of the least-squares drivers: dense linear solves on faer 0.24, vector norms,
//! the stopping tests of [`SolveOptions`](crate::SolveOptions), evaluated points, Armijo
//! backtracking (Nocedal and Wright, *Numerical Optimization*, 2nd ed., Alg. 3.1) and the
//! trust-radius rule (Nocedal and Wright, Alg. 4.1).
//!
//! Kept in one place so that the drivers differ only in how they choose a step.

use argmin::core::{Error, Problem, State as _, TerminationStatus, KV};
use faer::prelude::*;
use faer::{Mat, MatRef, Side};

use super::{LeastSquares, LsState, Tolerances};
use crate::{Residual, Status};

/// Smallest accepted ratio `min L_ii^2 / max A_ii` of a Cholesky factor before the system is
/// treated as numerically singular: below it the LLT "succeeds" on rounding noise and returns
/// a huge, meaningless step.
const LLT_PIVOT_RATIO: f64 = 1e-13;

/// Smallest accepted ratio `min |R_ii| / max |R_ii|` of a QR factor (the square root of
/// [`LLT_PIVOT_RATIO`], since `cond(J'J) = cond(J)^2`).
const QR_PIVOT_RATIO: f64 = 3e-7;

/// Euclidean inner product.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Euclidean norm.
pub(crate) fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// Max norm.
pub(crate) fn norm_inf(a: &[f64]) -> f64 {
    a.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

/// Whether every entry is finite.
pub(crate) fn all_finite(a: &[f64]) -> bool {
    a.iter().all(|x| x.is_finite())
}

/// `x + t d`.
pub(crate) fn axpy(x: &[f64], t: f64, d: &[f64]) -> Vec<f64> {
    x.iter().zip(d).map(|(xi, di)| xi + t * di).collect()
}

/// `J v`.
pub(crate) fn mat_vec(j: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; j.nrows()];
    for (c, vc) in v.iter().enumerate() {
        if *vc != 0.0 {
            for (r, o) in out.iter_mut().enumerate() {
                *o += j[(r, c)] * vc;
            }
        }
    }
    out
}

/// `J' v`.
pub(crate) fn mat_t_vec(j: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..j.ncols())
        .map(|c| (0..j.nrows()).map(|r| j[(r, c)] * v[r]).sum())
        .collect()
}

/// `J' J`.
pub(crate) fn gram(j: MatRef<'_, f64>) -> Mat<f64> {
    j.transpose() * j
}

fn col(b: &[f64]) -> Col<f64> {
    Col::from_fn(b.len(), |i| b[i])
}

fn to_vec(c: &Col<f64>) -> Vec<f64> {
    (0..c.nrows()).map(|i| c[i]).collect()
}

/// Solves `A x = b` for a symmetric positive definite `A` by LLT; `None` when the factor fails
/// or is numerically singular (see [`LLT_PIVOT_RATIO`]).
pub(crate) fn solve_spd(a: &Mat<f64>, b: &[f64]) -> Option<Vec<f64>> {
    let n = a.nrows();
    if n == 0 {
        return Some(Vec::new());
    }
    let max_diag = (0..n).fold(0.0_f64, |m, i| m.max(a[(i, i)].abs()));
    if !(max_diag.is_finite() && max_diag > 0.0) {
        return None;
    }
    let llt = a.llt(Side::Lower).ok()?;
    let l = llt.L();
    let min_pivot = (0..n).fold(f64::INFINITY, |m, i| m.min(l[(i, i)] * l[(i, i)]));
    if min_pivot.is_nan() || min_pivot < LLT_PIVOT_RATIO * max_diag {
        return None;
    }
    let x = to_vec(&llt.solve(col(b)));
    all_finite(&x).then_some(x)
}

/// Least-squares solution of `A x ~ b` (`A` with at least as many rows as columns) by
/// Householder QR; `None` when `A` is numerically rank deficient (see [`QR_PIVOT_RATIO`]).
pub(crate) fn lstsq(a: &Mat<f64>, b: &[f64]) -> Option<Vec<f64>> {
    let n = a.ncols();
    if a.nrows() < n || !all_finite(b) {
        return None;
    }
    if n == 0 {
        return Some(Vec::new());
    }
    let qr = a.qr();
    let r = qr.thin_R();
    let (lo, hi) = (0..n).fold((f64::INFINITY, 0.0_f64), |(lo, hi), i| {
        (lo.min(r[(i, i)].abs()), hi.max(r[(i, i)].abs()))
    });
    if !(hi.is_finite() && hi > 0.0 && lo >= QR_PIVOT_RATIO * hi) {
        return None;
    }
    let x = to_vec(&qr.solve_lstsq(col(b)));
    all_finite(&x).then_some(x)
}

/// `[J; sqrt(mu) I]`, the Levenberg-Marquardt system as a least-squares problem.
pub(crate) fn stack_damped(j: MatRef<'_, f64>, mu: f64) -> Mat<f64> {
    let (m, n) = (j.nrows(), j.ncols());
    let s = mu.sqrt();
    Mat::from_fn(m + n, n, |r, c| {
        if r < m {
            j[(r, c)]
        } else if r - m == c {
            s
        } else {
            0.0
        }
    })
}

/// The Gauss-Newton step `-(J'J)^{-1} J'F` by LLT of the normal equations, falling back to QR
/// least squares on `J d = -F` (better conditioned: `cond(J)` instead of `cond(J)^2`), and when
/// `J` is rank deficient to a minimally damped system `[J; sqrt(delta) I] d = [-F; 0]` with
/// `delta = 1e-12 max diag(J'J)`, which keeps a descent direction along the range of `J'`.
/// `None` only when even that fails.
pub(crate) fn gauss_newton_direction(p: &LsPoint) -> Option<Vec<f64>> {
    let neg_g: Vec<f64> = p.grad.iter().map(|g| -g).collect();
    let a = gram(p.jac.as_ref());
    if let Some(d) = solve_spd(&a, &neg_g) {
        return Some(d);
    }
    let neg_f: Vec<f64> = p.f.iter().map(|v| -v).collect();
    if let Some(d) = lstsq(&p.jac, &neg_f) {
        return Some(d);
    }
    let n = p.x.len();
    let max_diag = (0..n).fold(0.0_f64, |m, i| m.max(a[(i, i)]));
    let delta = 1e-12 * max_diag.max(f64::MIN_POSITIVE);
    damped_step(p, delta)
}

/// The Levenberg-Marquardt step: least-squares solution of `[J; sqrt(mu) I] d = [-F; 0]` by QR.
pub(crate) fn damped_step(p: &LsPoint, mu: f64) -> Option<Vec<f64>> {
    damped_step_cond(p, mu).map(|(d, _)| d)
}

/// [`damped_step`] and the estimate `(max |R_ii| / min |R_ii|)^2` of `cond(J'J + mu I)` from
/// the QR factor's diagonal (a lower bound of the true condition number, cheap to read).
pub(crate) fn damped_step_cond(p: &LsPoint, mu: f64) -> Option<(Vec<f64>, f64)> {
    let a = stack_damped(p.jac.as_ref(), mu);
    let mut rhs: Vec<f64> = p.f.iter().map(|v| -v).collect();
    rhs.resize(p.f.len() + p.x.len(), 0.0);
    let n = a.ncols();
    if n == 0 {
        return Some((Vec::new(), 1.0));
    }
    // No rank test: with mu > 0 the stacked matrix has full column rank in exact arithmetic,
    // and a tiny mu is the caller's deliberate choice (Kanzow-Petra's 1e-16).
    let qr = a.qr();
    let r = qr.thin_R();
    let (lo, hi) = (0..n).fold((f64::INFINITY, 0.0_f64), |(lo, hi), i| {
        (lo.min(r[(i, i)].abs()), hi.max(r[(i, i)].abs()))
    });
    let cond = if lo > 0.0 {
        (hi / lo).powi(2)
    } else {
        f64::INFINITY
    };
    let x = to_vec(&qr.solve_lstsq(col(&rhs)));
    all_finite(&x).then_some((x, cond))
}

/// Model decrease `q(0) - q(d)` of the Gauss-Newton model `q(d) = |F + J d|^2 / 2`.
pub(crate) fn predicted_decrease(p: &LsPoint, d: &[f64]) -> f64 {
    let jd = mat_vec(p.jac.as_ref(), d);
    -(dot(&p.grad, d) + 0.5 * dot(&jd, &jd))
}

/// A point with its residual, merit `psi = |F|^2/2`, Jacobian and gradient `J'F`.
#[derive(Debug, Clone)]
pub(crate) struct LsPoint {
    pub x: Vec<f64>,
    pub f: Vec<f64>,
    pub psi: f64,
    pub jac: Mat<f64>,
    pub grad: Vec<f64>,
}

impl LsPoint {
    /// `|F|_2`.
    pub fn fnorm(&self) -> f64 {
        (2.0 * self.psi).sqrt()
    }

    /// `|J'F|_2`.
    pub fn gnorm(&self) -> f64 {
        norm2(&self.grad)
    }
}

/// A trial point: residual and merit only (the Jacobian is evaluated once it is accepted).
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    pub x: Vec<f64>,
    pub f: Vec<f64>,
    pub psi: f64,
}

/// `psi = |F|^2 / 2`, or `+inf` when `F` has a non-finite entry, so that a trial point that
/// leaves the residual's domain is rejected like any point with a large merit.
pub(crate) fn merit_of(f: &[f64]) -> f64 {
    let psi = 0.5 * dot(f, f);
    if psi.is_finite() {
        psi
    } else {
        f64::INFINITY
    }
}

/// Evaluates `F` at `x`.
pub(crate) fn trial<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    x: Vec<f64>,
) -> Result<Trial, Error> {
    let f = problem.apply(&x)?;
    let psi = merit_of(&f);
    Ok(Trial { x, f, psi })
}

/// Completes an accepted trial with the Jacobian; `None` when the Jacobian is not finite.
pub(crate) fn accept<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    t: Trial,
) -> Result<Option<LsPoint>, Error> {
    let jac = problem.jacobian(&t.x)?;
    let finite = (0..jac.ncols()).all(|c| (0..jac.nrows()).all(|r| jac[(r, c)].is_finite()));
    if !finite {
        return Ok(None);
    }
    let grad = mat_t_vec(jac.as_ref(), &t.f);
    Ok(Some(LsPoint {
        x: t.x,
        f: t.f,
        psi: t.psi,
        jac,
        grad,
    }))
}

/// The state type of every least-squares driver (see [`super::LsState`]).
type State = super::LsState;

/// Writes an accepted point into argmin's state.
pub(crate) fn write_state(state: State, p: &LsPoint) -> State {
    state
        .param(p.x.clone())
        .cost(p.psi)
        .gradient(p.grad.clone())
        .residuals(p.f.clone())
}

/// What [`init`] hands a driver: the first point (or why there is none) and the stopping rules.
pub(crate) struct Start {
    pub point: Option<LsPoint>,
    pub tol: Tolerances,
    pub stop: Option<Status>,
}

/// Evaluates the initial point (after `prepare`, e.g. a projection) and tests it.
pub(crate) fn init<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    state: State,
    prepare: impl FnOnce(&LeastSquares<R>, &mut Vec<f64>),
) -> Result<(State, Start, KV), Error> {
    let tol = problem
        .problem
        .as_ref()
        .map(|p| p.tolerances)
        .unwrap_or_default();
    let mut x0 = state
        .get_param()
        .cloned()
        .ok_or_else(|| Error::msg("no initial point: configure the executor with `param(x0)`"))?;
    if let Some(ls) = problem.problem.as_ref() {
        prepare(ls, &mut x0);
    }
    if !all_finite(&x0) {
        let state = state.param(x0).cost(f64::NAN);
        let start = Start {
            point: None,
            tol,
            stop: Some(Status::NotFinite),
        };
        return Ok((state, start, argmin::kv!("merit" => f64::NAN;)));
    }
    let t = trial(problem, x0)?;
    let point = if t.psi.is_finite() {
        accept(problem, t.clone())?
    } else {
        None
    };
    match point {
        None => {
            let state = state.param(t.x).cost(f64::NAN);
            let start = Start {
                point: None,
                tol,
                stop: Some(Status::NotFinite),
            };
            Ok((state, start, argmin::kv!("merit" => f64::NAN;)))
        }
        Some(p) => {
            let stop = tol.classify(&p);
            let kv = argmin::kv!("merit" => p.psi; "grad_norm" => p.gnorm(););
            let state = write_state(state, &p);
            Ok((
                state,
                Start {
                    point: Some(p),
                    tol,
                    stop,
                },
                kv,
            ))
        }
    }
}

impl Tolerances {
    /// Converged when `|F| <= tol`, local minimum when `|J'F| <= grad_tol` (and not converged),
    /// not finite when either is not finite.
    pub(crate) fn classify(&self, p: &LsPoint) -> Option<Status> {
        self.classify_norms(p.fnorm(), p.gnorm())
    }

    /// [`Tolerances::classify`] on given residual and stationarity measures.
    pub(crate) fn classify_norms(&self, fnorm: f64, gnorm: f64) -> Option<Status> {
        if !(fnorm.is_finite() && gnorm.is_finite()) {
            Some(Status::NotFinite)
        } else if fnorm <= self.tol {
            Some(Status::Converged)
        } else if gnorm <= self.grad_tol {
            Some(Status::LocalMinimum)
        } else {
            None
        }
    }

    /// Whether the step `s` taken from `x` changes no component by more than
    /// `step_tol * (1 + |x|_inf)`.
    pub(crate) fn negligible(&self, x: &[f64], s: &[f64]) -> bool {
        norm_inf(s) <= self.step_tol * (1.0 + norm_inf(x))
    }

    /// The status after accepting `p` by the step `s` from `x_old`: the residual and gradient
    /// tests first (a tiny final step to a solution is a success), then stagnation.
    pub(crate) fn after_step(&self, x_old: &[f64], s: &[f64], p: &LsPoint) -> Option<Status> {
        self.classify(p)
            .or_else(|| self.negligible(x_old, s).then_some(Status::Stagnated))
    }
}

/// argmin's termination for a pending status.
pub(crate) fn termination(stop: &Option<Status>) -> TerminationStatus {
    stop.as_ref()
        .map(Status::to_termination)
        .unwrap_or(TerminationStatus::NotTerminated)
}

/// The per-iteration key-values shared by the drivers.
pub(crate) fn iter_kv(
    p: &LsPoint,
    step_norm: f64,
    step_kind: &str,
    step_length: f64,
    lambda: Option<f64>,
) -> KV {
    let mut kv = argmin::kv!(
        "merit" => p.psi;
        "grad_norm" => p.gnorm();
        "step_norm" => step_norm;
        "step_kind" => step_kind;
        "step_length" => step_length;
    );
    if let Some(l) = lambda {
        kv.insert("lambda", l.into());
    }
    kv
}

/// Armijo backtracking parameters (Nocedal and Wright, Alg. 3.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Armijo {
    /// Sufficient-decrease constant `c` in `psi(x + a d) <= psi(x) + c a psi'(x; d)`.
    pub c: f64,
    /// Backtracking factor `rho`: `a <- rho a`.
    pub rho: f64,
    /// Maximum number of reductions before the search fails.
    pub max_reductions: u32,
}

impl Default for Armijo {
    /// `c = 1e-4`, `rho = 0.5`, 30 reductions (Nocedal and Wright, sec. 3.1; 30 halvings reach
    /// `a ~ 1e-9`, below which the step is rounding noise for a unit-scaled direction).
    fn default() -> Self {
        Armijo {
            c: 1e-4,
            rho: 0.5,
            max_reductions: 30,
        }
    }
}

/// Backtracks from `a = 1` along `d` (with directional derivative `slope < 0`) until
/// `psi(x + a d) <= reference + c a slope`; `None` when the reductions run out.
pub(crate) fn backtrack<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    x: &[f64],
    reference: f64,
    slope: f64,
    d: &[f64],
    rule: &Armijo,
) -> Result<Option<(f64, Trial)>, Error> {
    let mut a = 1.0;
    for _ in 0..=rule.max_reductions {
        let t = trial(problem, axpy(x, a, d))?;
        if t.psi <= reference + rule.c * a * slope {
            return Ok(Some((a, t)));
        }
        a *= rule.rho;
    }
    Ok(None)
}

/// Trust-region radius rule (Nocedal and Wright, Alg. 4.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RadiusRule {
    /// Accept the step when `rho > eta` (N&W's `eta` in `[0, 1/4)`).
    pub eta: f64,
    /// Shrink when `rho <` this (N&W: 1/4).
    pub shrink_below: f64,
    /// New radius `shrink_factor * min(radius, |p|)` (N&W: 1/4).
    pub shrink_factor: f64,
    /// Expand when `rho >` this and the step is on the boundary (N&W: 3/4).
    pub expand_above: f64,
    /// Expansion factor (N&W: 2).
    pub expand_factor: f64,
    /// Largest radius (N&W's `Delta-hat`).
    pub max_radius: f64,
}

impl Default for RadiusRule {
    /// `eta = 1e-4`, shrink by 1/4 below `rho = 1/4`, double above `rho = 3/4` on the
    /// boundary, radius at most `1e10` (Nocedal and Wright, Alg. 4.1; `eta` small and positive
    /// as in MINPACK's `ftol`-free acceptance so that any real decrease is kept).
    fn default() -> Self {
        RadiusRule {
            eta: 1e-4,
            shrink_below: 0.25,
            shrink_factor: 0.25,
            expand_above: 0.75,
            expand_factor: 2.0,
            max_radius: 1e10,
        }
    }
}

impl RadiusRule {
    /// Whether to accept, and the next radius, from the ratio `rho` of actual to predicted
    /// decrease of a step of length `step_norm` inside radius `radius`.
    pub(crate) fn update(&self, rho: f64, step_norm: f64, radius: f64) -> (bool, f64) {
        // Shrinking from |p| rather than the radius matters when the Gauss-Newton point lies
        // deep inside the region: otherwise several rejections pass before the radius bites.
        let next = if rho.is_nan() || rho < self.shrink_below {
            self.shrink_factor * radius.min(step_norm)
        } else if rho > self.expand_above && step_norm >= (1.0 - 1e-10) * radius {
            (self.expand_factor * radius).min(self.max_radius)
        } else {
            radius
        };
        (rho > self.eta, next)
    }
}

/// Initial trust radius: `|x0|_2`, or 1 at the origin (the scale MINPACK's `factor * |D x0|`
/// uses, with factor 1).
pub(crate) fn initial_radius(x0: &[f64]) -> f64 {
    let r = norm2(x0);
    if r > 0.0 && r.is_finite() {
        r
    } else {
        1.0
    }
}

/// The positive `tau` with `|z + tau d| = radius` (for `|z| <= radius`).
pub(crate) fn to_boundary(z: &[f64], d: &[f64], radius: f64) -> f64 {
    let a = dot(d, d);
    let b = 2.0 * dot(z, d);
    let c = dot(z, z) - radius * radius;
    if a <= 0.0 {
        return 0.0;
    }
    // Stable root formula: avoids cancellation when b > 0.
    let disc = (b * b - 4.0 * a * c).max(0.0).sqrt();
    if b >= 0.0 {
        let q = -0.5 * (b + disc);
        if q != 0.0 {
            c / q
        } else {
            0.0
        }
    } else {
        (-b + disc) / (2.0 * a)
    }
}

/// Outcome of one trust-region trial, shared with the trust-region drivers.
pub(crate) enum Accepted {
    /// The trial point, now the iterate.
    Yes(LsPoint),
    /// Rejected (the iterate stays).
    No,
    /// The accepted point's Jacobian is not finite.
    NotFinite,
}

/// Evaluates the trial `x + s`, computes `rho`, updates `radius` and builds the key-values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn trust_region_trial<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    state: LsState,
    p: &LsPoint,
    s: &[f64],
    kind: &str,
    radius: f64,
    rule: &RadiusRule,
    next_radius: &mut f64,
) -> Result<(Accepted, LsState, KV), Error> {
    let pred = predicted_decrease(p, s);
    let t = trial(problem, axpy(&p.x, 1.0, s))?;
    let rho = if pred > 0.0 {
        (p.psi - t.psi) / pred
    } else {
        f64::NEG_INFINITY
    };
    let rho = if rho.is_nan() { f64::NEG_INFINITY } else { rho };
    let step_norm = norm2(s);
    let (accepted, r) = rule.update(rho, step_norm, radius);
    *next_radius = r;
    if !accepted {
        let mut kv = iter_kv(p, step_norm, "rejected", radius, None);
        kv.insert("ratio", rho.max(-1e300).into());
        return Ok((Accepted::No, state, kv));
    }
    let Some(q) = accept(problem, t)? else {
        return Ok((Accepted::NotFinite, state.cost(f64::NAN), KV::new()));
    };
    let mut kv = iter_kv(&q, step_norm, kind, radius, None);
    kv.insert("ratio", rho.into());
    let state = write_state(state, &q);
    Ok((Accepted::Yes(q), state, kv))
}

/// The bookkeeping after a trust-region trial: the stopping tests and the stored iterate.
pub(crate) trait TrustRegionDriver {
    /// Stores the iterate, the pending status.
    fn set(&mut self, point: Option<LsPoint>, stop: Option<Status>);
    /// The stopping rules.
    fn tolerances(&self) -> Tolerances;
    /// The current radius.
    fn radius(&self) -> f64;
}

/// Applies a trial's outcome: an accepted point is tested for convergence and stagnation; a
/// rejection stagnates once the radius cannot change `x` any more.
pub(crate) fn finish<D: TrustRegionDriver>(
    driver: &mut D,
    p: LsPoint,
    accepted: Accepted,
    s: &[f64],
    state: LsState,
    kv: KV,
) -> Result<(LsState, Option<KV>), Error> {
    let tol = driver.tolerances();
    match accepted {
        Accepted::Yes(q) => {
            let stop = tol.after_step(&p.x, s, &q);
            driver.set(Some(q), stop);
        }
        Accepted::No => {
            let r = driver.radius();
            let tiny = r <= tol.step_tol * (1.0 + norm_inf(&p.x)) || !r.is_finite();
            driver.set(Some(p), tiny.then_some(Status::Stagnated));
        }
        Accepted::NotFinite => driver.set(None, Some(Status::NotFinite)),
    }
    Ok((state, Some(kv)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A point with given Jacobian rows and residual.
    pub(crate) fn point(jac: &[&[f64]], f: &[f64]) -> LsPoint {
        let (m, n) = (jac.len(), jac[0].len());
        let jac = Mat::from_fn(m, n, |i, j| jac[i][j]);
        let grad = mat_t_vec(jac.as_ref(), f);
        LsPoint {
            x: vec![0.0; n],
            f: f.to_vec(),
            psi: 0.5 * dot(f, f),
            jac,
            grad,
        }
    }

    #[test]
    fn to_boundary_finds_the_positive_root() {
        assert!((to_boundary(&[0.0, 0.0], &[3.0, 4.0], 10.0) - 2.0).abs() < 1e-15);
        assert!((to_boundary(&[1.0, 0.0], &[-1.0, 0.0], 2.0) - 3.0).abs() < 1e-15);
        assert!((to_boundary(&[1.0, 0.0], &[1.0, 0.0], 2.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn solve_spd_solves_and_rejects_singular_matrices() {
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 1.0], [1.0, 3.0]][i][j]);
        let x = solve_spd(&a, &[1.0, 2.0]).unwrap();
        assert!((4.0 * x[0] + x[1] - 1.0).abs() < 1e-14 && (x[0] + 3.0 * x[1] - 2.0).abs() < 1e-14);
        let s = Mat::from_fn(2, 2, |_, _| 1.0);
        assert!(solve_spd(&s, &[1.0, 1.0]).is_none());
        let nan = Mat::from_fn(2, 2, |_, _| f64::NAN);
        assert!(solve_spd(&nan, &[1.0, 1.0]).is_none());
    }

    #[test]
    fn gauss_newton_direction_survives_a_rank_deficient_jacobian() {
        // Both columns equal: J'J is singular, plain QR is rank deficient.
        let p = point(&[&[1.0, 1.0], &[2.0, 2.0]], &[1.0, -3.0]);
        assert!(lstsq(&p.jac, &[-1.0, 3.0]).is_none());
        let d = gauss_newton_direction(&p).unwrap();
        assert!(dot(&p.grad, &d) < 0.0, "descent direction");
        // min |F + J d|^2/2 over d is 2.5 (at d1 + d2 = 1), psi = 5; the minimally damped
        // solve reaches it. (Its null-space component, zero in exact arithmetic, carries
        // rounding amplified by cond(J'J + delta I) ~ 1e12, and does not move the model.)
        assert!((predicted_decrease(&p, &d) - 2.5).abs() < 1e-9);
        assert!((d[0] + d[1] - 1.0).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn radius_rule_follows_nocedal_wright() {
        let r = RadiusRule::default();
        assert_eq!(r.update(0.1, 1.0, 1.0), (true, 0.25));
        assert_eq!(r.update(-1.0, 0.5, 1.0), (false, 0.125));
        assert_eq!(r.update(0.9, 1.0, 1.0), (true, 2.0));
        assert_eq!(r.update(0.9, 0.5, 1.0), (true, 1.0));
        assert_eq!(r.update(f64::NAN, 1.0, 1.0), (false, 0.25));
    }
}
