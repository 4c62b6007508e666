//! `--time-limit` holds on every driver: a solve with a limit ends with status `timeout` within
//! 1.2 times its limit plus 20 ms, on a problem that runs far longer without it (the same solve
//! with four times the limit also times out).
//!
//! The problems are slow on purpose: a residual `F(x) = x^3` whose evaluations sleep, so that
//! Newton-type drivers converge linearly (rate 2/3, hundreds of iterations to a tolerance of
//! `1e-300`, with the stagnation and stationarity tests off), and an ill-conditioned contact
//! problem for Gauss-Seidel. These tests time wall clock; nextest runs them one at a time
//! (`.config/nextest.toml`, group `timing`).

use std::thread::sleep;
use std::time::{Duration, Instant};

use contactlab_core::drivers::pgs::ProjectedGaussSeidel;
use contactlab_core::drivers::{
    Dogleg, GaussNewtonLs, LevenbergMarquardt, NewtonMerit, ProjectedLevenbergMarquardt,
    TrustRegionSteihaug,
};
use contactlab_core::plugin::Driver;
use contactlab_core::{
    BDerivative, LocalProblem, Matrix, Merit, NonSmoothResidual, ProjectedResidual, Residual,
    Solution, SolveOptions, Status,
};
use contactlab_experiments::registry::{PluginChoice, SolverSpec};
use contactlab_formulations::{ErlebenNewton, Todorov};
use faer::MatMut;
use rand::{Rng, SeedableRng};

/// The limit every test gives.
const LIMIT: Duration = Duration::from_millis(100);

/// `F(x) = x^3` componentwise; every evaluation sleeps 1 ms.
struct SlowCube;

fn nap() {
    sleep(Duration::from_millis(1));
}

impl Residual for SlowCube {
    fn num_unknowns(&self) -> usize {
        3
    }
    fn num_residuals(&self) -> usize {
        3
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        nap();
        out.iter_mut().zip(x).for_each(|(o, v)| *o = v * v * v);
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        nap();
        for i in 0..3 {
            for j in 0..3 {
                out[(i, j)] = if i == j { 3.0 * x[i] * x[i] } else { 0.0 };
            }
        }
    }
}

impl NonSmoothResidual for SlowCube {
    fn kinks_on_segment(&self, _x: &[f64], _dx: &[f64], _out: &mut Vec<f64>) {}
    fn jacobian_along(&self, x: &[f64], _dx: &[f64], out: MatMut<'_, f64>) {
        self.jacobian(x, out)
    }
}

impl BDerivative for SlowCube {}

impl ProjectedResidual for SlowCube {
    fn project(&self, _x: &mut [f64]) {}
}

impl Merit for SlowCube {
    fn dim(&self) -> usize {
        3
    }
    fn value(&self, x: &[f64]) -> f64 {
        nap();
        x.iter().map(|v| v.powi(4) / 4.0).sum()
    }
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        nap();
        g.iter_mut().zip(x).for_each(|(o, v)| *o = v * v * v);
    }
    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        nap();
        for i in 0..3 {
            for j in 0..3 {
                h[(i, j)] = if i == j { 3.0 * x[i] * x[i] } else { 0.0 };
            }
        }
    }
}

/// Stopping rules that never fire before the limit: only time ends the solve.
fn options(limit: Duration) -> SolveOptions {
    SolveOptions {
        tol: 1e-300,
        rel_tol: 0.0,
        grad_tol: 0.0,
        step_tol: 0.0,
        max_iter: u64::MAX,
        time_limit: Some(limit),
        trace: true,
    }
}

/// Runs `solve` with the limit and with four times it; both must time out, the first within
/// the bound.
fn holds(name: &str, solve: impl Fn(&SolveOptions) -> Solution) {
    let start = Instant::now();
    let s = solve(&options(LIMIT));
    let elapsed = start.elapsed();
    assert_eq!(
        s.status,
        Status::Timeout,
        "{name}: {:?} after {elapsed:?}",
        s.status
    );
    let bound = LIMIT.mul_f64(1.2) + Duration::from_millis(20);
    assert!(elapsed <= bound, "{name}: {elapsed:?} > {bound:?}");
    assert!(s.iterations > 0, "{name}: the driver ran");
    let long = solve(&options(4 * LIMIT));
    assert_eq!(
        long.status,
        Status::Timeout,
        "{name}: the problem must outlast 4x the limit"
    );
}

#[test]
fn time_limit_holds_on_gauss_newton() {
    holds("gauss-newton", |o| {
        GaussNewtonLs::default()
            .solve(&SlowCube, vec![1.0; 3], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_lm() {
    holds("lm", |o| {
        LevenbergMarquardt::default()
            .solve(&SlowCube, vec![1.0; 3], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_plm() {
    // The projected LM's stationarity test `|x - P(x - g)|` is limited by rounding (`g` below
    // the spacing of `x`), which the cube reaches after some 25 steps from 1; from `1e30` the
    // first component takes some 190.
    holds("plm", |o| {
        ProjectedLevenbergMarquardt::default()
            .solve(&SlowCube, vec![1e30, 1.0, 1.0], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_dogleg() {
    holds("dogleg", |o| {
        Dogleg::default().solve(&SlowCube, vec![1.0; 3], o).unwrap()
    });
}

#[test]
fn time_limit_holds_on_trust_region() {
    holds("trust-region", |o| {
        TrustRegionSteihaug::default()
            .solve(&SlowCube, vec![1.0; 3], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_todorov() {
    holds("todorov", |o| {
        Todorov::default()
            .solve(&SlowCube, vec![1.0; 3], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_erleben_newton() {
    let newton = ErlebenNewton {
        stagnation_tol: 0.0,
        ..ErlebenNewton::default()
    };
    holds("newton", |o| {
        newton.solve(&SlowCube, vec![1.0; 3], o).unwrap()
    });
}

#[test]
fn time_limit_holds_on_newton_merit() {
    holds("newton-merit", |o| {
        let m: &dyn Merit = &SlowCube;
        NewtonMerit::default().solve(m, vec![1.0; 3], o).unwrap()
    });
}

#[test]
fn time_limit_holds_on_lbfgs() {
    // From a symmetric start the first line search lands exactly on the minimizer of the
    // quartic; an uneven start leaves L-BFGS creeping towards it.
    holds("lbfgs", |o| {
        let m: &dyn Merit = &SlowCube;
        contactlab_core::drivers::Lbfgs::default()
            .solve(m, vec![1.0, 0.3, -0.7], o)
            .unwrap()
    });
}

/// `W = L L' / n + 1e-9 I` on 120 contacts: Gauss-Seidel needs tens of thousands of sweeps.
fn ill_conditioned(nc: usize) -> LocalProblem {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let n = 3 * nc;
    let l: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut w = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let s: f64 = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum();
            w[i * n + j] = s / n as f64 + if i == j { 1e-9 } else { 0.0 };
        }
    }
    LocalProblem {
        w: Matrix::from_row_major("W", n, n, &w).unwrap(),
        q: (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
        mu: vec![0.8; nc],
    }
}

#[test]
fn time_limit_holds_on_pgs() {
    let p = ill_conditioned(120);
    holds("pgs", |o| {
        ProjectedGaussSeidel::default()
            .solve(&p, vec![0.0; p.q.len()], o)
            .unwrap()
    });
}

#[test]
fn time_limit_holds_on_admm() {
    // ADMM reads its own clock every few iterations (argmin's timer is off for it).
    let p = ill_conditioned(120);
    holds("admm", |o| {
        contactlab_core::drivers::admm::Admm::default()
            .solve(&p, vec![0.0; p.q.len()], o)
            .unwrap()
    });
}

#[test]
fn time_limit_reaches_the_drivers_from_a_spec_start_and_restarts_included() {
    // Todorov's implicit NCP with many restarts on the ill-conditioned problem: the sticking
    // start, every attempt and the restarts share one limit.
    let p = ill_conditioned(20);
    let mut spec = SolverSpec::new("implicit-ncp", "todorov", 1e-300, 1_000_000);
    spec.formulation = PluginChoice::named("implicit-ncp").with("restarts", 1000);
    spec.time_limit = Some(LIMIT.as_secs_f64());
    let start = Instant::now();
    let s = contactlab_experiments::registry::solve_spec(&p.into(), &spec, None).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(s.solver_status, Status::Timeout, "{:?}", s.counters);
    assert!(
        elapsed <= LIMIT.mul_f64(1.2) + Duration::from_millis(20),
        "{elapsed:?}"
    );
}
