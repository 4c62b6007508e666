//! The driver kit: the pieces every driver is built from, public so that the papers' own
//! drivers (Todorov's, Erleben and Ortiz's, SAP's, Hwangbo's) use them instead of private
//! copies. The dense linear solves and vector helpers of [`crate::dense`] (re-exported here),
//! the stopping tests of [`SolveOptions`](crate::result::SolveOptions),
//! evaluated points, Armijo backtracking (Nocedal and Wright, *Numerical Optimization*, 2nd
//! ed., Alg. 3.1), the cubic interpolation step (eq. 3.59) and the trust-radius rule (Alg.
//! 4.1). The wall-clock deadline drivers check in their loops is [`crate::deadline`]'s.

use std::time::Instant;

use argmin::core::{Error, Problem, State as _, TerminationStatus, KV};
use faer::prelude::*;
use faer::Mat;

pub use super::least_squares::merit_of;
use super::least_squares::{LeastSquares, LsState};
use super::tolerances::Tolerances;
pub use crate::dense::{
    all_finite, axpy, dot, gram, lstsq, mat_t_vec, mat_vec, norm2, norm_inf, orthogonal_complement,
    solve_spd, solve_square_transposed, stack_damped, SquareSolution, SquareSolve,
};
use crate::dense::{col, to_vec};
use crate::error::CoreError;
use crate::residual::Residual;
use crate::result::Status;

/// The Gauss-Newton step `-(J'J)^{-1} J'F` by LLT of the normal equations, falling back to QR
/// least squares on `J d = -F` (better conditioned: `cond(J)` instead of `cond(J)^2`), and when
/// `J` is rank deficient to a minimally damped system `[J; sqrt(delta) I] d = [-F; 0]` with
/// `delta = 1e-12 max diag(J'J)`, which keeps a descent direction along the range of `J'`.
/// `None` only when even that fails.
pub fn gauss_newton_direction(p: &LsPoint) -> Option<Vec<f64>> {
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
pub fn damped_step(p: &LsPoint, mu: f64) -> Option<Vec<f64>> {
    damped_step_cond(p, mu).map(|(d, _)| d)
}

/// [`damped_step`] and the estimate `(max |R_ii| / min |R_ii|)^2` of `cond(J'J + mu I)` from
/// the QR factor's diagonal (a lower bound of the true condition number, cheap to read).
pub fn damped_step_cond(p: &LsPoint, mu: f64) -> Option<(Vec<f64>, f64)> {
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
pub fn predicted_decrease(p: &LsPoint, d: &[f64]) -> f64 {
    let jd = mat_vec(p.jac.as_ref(), d);
    -(dot(&p.grad, d) + 0.5 * dot(&jd, &jd))
}

/// A point with its residual, merit `psi = |F|^2/2`, Jacobian, gradient `J'F`, and the
/// measure `stop_tol` bounds there ([`Residual::stop_measure`]: `|F|_2` unless the formulation
/// says otherwise).
#[derive(Debug, Clone)]
pub struct LsPoint {
    pub x: Vec<f64>,
    pub f: Vec<f64>,
    pub psi: f64,
    pub jac: Mat<f64>,
    pub grad: Vec<f64>,
    pub measure: f64,
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
pub struct Trial {
    pub x: Vec<f64>,
    pub f: Vec<f64>,
    pub psi: f64,
}

/// Evaluates `F` at `x`.
pub fn trial<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    x: Vec<f64>,
) -> Result<Trial, Error> {
    let f = problem.apply(&x)?;
    let psi = merit_of(&f);
    Ok(Trial { x, f, psi })
}

/// Completes an accepted trial with the Jacobian; `None` when the Jacobian is not finite.
pub fn accept<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    t: Trial,
) -> Result<Option<LsPoint>, Error> {
    let jac = problem.jacobian(&t.x)?;
    let finite = (0..jac.ncols()).all(|c| (0..jac.nrows()).all(|r| jac[(r, c)].is_finite()));
    if !finite {
        return Ok(None);
    }
    let grad = mat_t_vec(jac.as_ref(), &t.f);
    let measure = match problem.problem.as_ref() {
        Some(ls) => ls.residual.stop_measure(&t.x, &t.f),
        None => norm2(&t.f),
    };
    Ok(Some(LsPoint {
        x: t.x,
        f: t.f,
        psi: t.psi,
        jac,
        grad,
        measure,
    }))
}

/// The state type of every least-squares driver (see [`LsState`]).
type State = LsState;

/// Writes an accepted point into argmin's state.
pub fn write_state(state: State, p: &LsPoint) -> State {
    state
        .param(p.x.clone())
        .cost(p.psi)
        .gradient(p.grad.clone())
        .residuals(p.f.clone())
}

/// What [`init`] hands a driver: the first point (or why there is none) and the stopping rules.
pub struct Start {
    pub point: Option<LsPoint>,
    pub tol: Tolerances,
    pub stop: Option<Status>,
}

/// Evaluates the initial point (after `prepare`, e.g. a projection) and tests it.
pub fn init<R: Residual>(
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
    /// Converged when the point's stop measure (`|F|` unless the formulation gives its own,
    /// [`Residual::stop_measure`]) is at most `stop_tol`, local minimum when `|J'F| <= grad_tol`
    /// (and not converged), not finite when either is not finite.
    pub fn classify(&self, p: &LsPoint) -> Option<Status> {
        self.classify_norms(p.measure, p.gnorm())
    }

    /// [`Tolerances::classify`] on given residual and stationarity measures.
    pub fn classify_norms(&self, fnorm: f64, gnorm: f64) -> Option<Status> {
        if !(fnorm.is_finite() && gnorm.is_finite()) {
            Some(Status::NotFinite)
        } else if fnorm <= self.stop_tol {
            Some(Status::Converged)
        } else if gnorm <= self.grad_tol {
            Some(Status::LocalMinimum)
        } else {
            None
        }
    }

    /// Whether the step `s` taken from `x` changes no component by more than
    /// `step_tol * (1 + |x|_inf)`.
    pub fn negligible(&self, x: &[f64], s: &[f64]) -> bool {
        norm_inf(s) <= self.step_tol * (1.0 + norm_inf(x))
    }

    /// The status after accepting `p` by the step `s` from `x_old`: the residual and gradient
    /// tests first (a tiny final step to a solution is a success), then stagnation.
    pub fn after_step(&self, x_old: &[f64], s: &[f64], p: &LsPoint) -> Option<Status> {
        self.classify(p)
            .or_else(|| self.negligible(x_old, s).then_some(Status::Stagnated))
    }
}

/// Runs `f` and returns its value with the wall-clock nanoseconds it took: drivers time their
/// linear solves apart from the rest of an iteration, because the size of that solve is what a
/// formulation's count of unknowns decides (Todorov 2010, section I-B).
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let start = Instant::now();
    let value = f();
    let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    (value, nanos)
}

/// Adds `solves` linear solves that took `nanos` in all to the counters `linear_solves` and
/// `linear_solve_nanoseconds` (both created at zero when `solves` is 0, so that a solve that
/// needed none still reports them).
pub fn count_linear_solves<P>(problem: &mut Problem<P>, solves: u64, nanos: u64) {
    let c = problem.counts.entry("linear_solves").or_insert(0);
    *c = c.saturating_add(solves);
    let t = problem
        .counts
        .entry("linear_solve_nanoseconds")
        .or_insert(0);
    *t = t.saturating_add(nanos);
}

/// argmin's termination for a pending status.
pub fn termination(stop: &Option<Status>) -> TerminationStatus {
    stop.as_ref()
        .map(Status::to_termination)
        .unwrap_or(TerminationStatus::NotTerminated)
}

/// The per-iteration key-values shared by the drivers.
pub fn iter_kv(
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
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
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
pub fn backtrack<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    x: &[f64],
    reference: f64,
    slope: f64,
    d: &[f64],
    rule: &Armijo,
) -> Result<Option<(f64, Trial)>, Error> {
    let mut a = 1.0;
    let deadline = problem
        .problem
        .as_ref()
        .map(|p| p.tolerances.deadline)
        .unwrap_or_default();
    for k in 0..=rule.max_reductions {
        if k > 0 && deadline.expired() {
            return Ok(None);
        }
        let t = trial(problem, axpy(x, a, d))?;
        if t.psi <= reference + rule.c * a * slope {
            return Ok(Some((a, t)));
        }
        a *= rule.rho;
    }
    Ok(None)
}

/// Trust-region radius rule (Nocedal and Wright, Alg. 4.1).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
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
    pub fn update(&self, rho: f64, step_norm: f64, radius: f64) -> (bool, f64) {
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
pub fn initial_radius(x0: &[f64]) -> f64 {
    let r = norm2(x0);
    if r > 0.0 && r.is_finite() {
        r
    } else {
        1.0
    }
}

/// The positive `tau` with `|z + tau d| = radius` (for `|z| <= radius`).
pub fn to_boundary(z: &[f64], d: &[f64], radius: f64) -> f64 {
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
pub enum Accepted {
    /// The trial point, now the iterate.
    Yes(LsPoint),
    /// Rejected (the iterate stays).
    No,
    /// The accepted point's Jacobian is not finite.
    NotFinite,
}

/// Evaluates the trial `x + s`, computes `rho`, moves `radius` (the trial's, then the next
/// iteration's) by `rule` and builds the key-values, the trial's radius among them.
pub fn trust_region_trial<R: Residual>(
    problem: &mut Problem<LeastSquares<R>>,
    state: LsState,
    p: &LsPoint,
    s: &[f64],
    kind: &str,
    rule: &RadiusRule,
    radius: &mut f64,
) -> Result<(Accepted, LsState, KV), Error> {
    let trial_radius = *radius;
    let pred = predicted_decrease(p, s);
    let t = trial(problem, axpy(&p.x, 1.0, s))?;
    let rho = if pred > 0.0 {
        (p.psi - t.psi) / pred
    } else {
        f64::NEG_INFINITY
    };
    let rho = if rho.is_nan() { f64::NEG_INFINITY } else { rho };
    let step_norm = norm2(s);
    let (accepted, next) = rule.update(rho, step_norm, trial_radius);
    *radius = next;
    if !accepted {
        let mut kv = iter_kv(p, step_norm, "rejected", trial_radius, None);
        kv.insert("ratio", rho.max(-1e300).into());
        return Ok((Accepted::No, state, kv));
    }
    let Some(q) = accept(problem, t)? else {
        return Ok((Accepted::NotFinite, state.cost(f64::NAN), KV::new()));
    };
    let mut kv = iter_kv(&q, step_norm, kind, trial_radius, None);
    kv.insert("ratio", rho.into());
    let state = write_state(state, &q);
    Ok((Accepted::Yes(q), state, kv))
}

/// The bookkeeping after a trust-region trial: the stopping tests and the stored iterate.
pub trait TrustRegionDriver {
    /// Stores the iterate, the pending status.
    fn set(&mut self, point: Option<LsPoint>, stop: Option<Status>);
    /// The stopping rules.
    fn tolerances(&self) -> Tolerances;
    /// The current radius.
    fn radius(&self) -> f64;
}

/// Applies a trial's outcome: an accepted point is tested for convergence and stagnation; a
/// rejection stagnates once the radius cannot change `x` any more.
pub fn finish<D: TrustRegionDriver>(
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

/// Minimiser in `(0, 1)` of the cubic Hermite interpolant of `phi(0) = m0`, `phi'(0) = s0`,
/// `phi(1) = m1`, `phi'(1) = s1` (Nocedal and Wright, eq. 3.59), if it has one there.
pub fn cubic_minimizer(m0: f64, s0: f64, m1: f64, s1: f64) -> Option<f64> {
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

/// The starting impulses of a driver over a problem of `n` unknowns: `r0`, or zeros when
/// `None`; an `r0` of another length is an error naming both.
pub fn start_impulses(r0: Option<Vec<f64>>, n: usize) -> Result<Vec<f64>, CoreError> {
    let r0 = r0.unwrap_or_else(|| vec![0.0; n]);
    if r0.len() != n {
        return Err(CoreError::Unsupported(format!(
            "initial impulses have {} entries, the problem has {n}",
            r0.len()
        )));
    }
    Ok(r0)
}

#[cfg(test)]
pub mod tests {
    use std::time::Duration;

    use super::*;

    /// A point with given Jacobian rows and residual.
    pub fn point(jac: &[&[f64]], f: &[f64]) -> LsPoint {
        let (m, n) = (jac.len(), jac[0].len());
        let jac = Mat::from_fn(m, n, |i, j| jac[i][j]);
        let grad = mat_t_vec(jac.as_ref(), f);
        LsPoint {
            x: vec![0.0; n],
            f: f.to_vec(),
            psi: 0.5 * dot(f, f),
            jac,
            grad,
            measure: norm2(f),
        }
    }

    #[test]
    fn linear_solves_are_counted_with_their_time() {
        let (v, nanos) = timed(|| {
            std::thread::sleep(Duration::from_millis(2));
            7
        });
        assert_eq!(v, 7);
        assert!(nanos >= 2_000_000, "{nanos}");
        let mut p = Problem::new(());
        count_linear_solves(&mut p, 0, 0);
        assert_eq!(
            (
                p.counts["linear_solves"],
                p.counts["linear_solve_nanoseconds"]
            ),
            (0, 0)
        );
        count_linear_solves(&mut p, 2, 50);
        count_linear_solves(&mut p, 1, u64::MAX);
        assert_eq!(
            (
                p.counts["linear_solves"],
                p.counts["linear_solve_nanoseconds"]
            ),
            (3, u64::MAX)
        );
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
    fn to_boundary_finds_the_positive_root() {
        assert!((to_boundary(&[0.0, 0.0], &[3.0, 4.0], 10.0) - 2.0).abs() < 1e-15);
        assert!((to_boundary(&[1.0, 0.0], &[-1.0, 0.0], 2.0) - 3.0).abs() < 1e-15);
        assert!((to_boundary(&[1.0, 0.0], &[1.0, 0.0], 2.0) - 1.0).abs() < 1e-15);
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
