//! Value tests of the least-squares drivers and the Newton merit driver.

use std::time::Duration;

use contactlab_core::drivers::{
    solve_least_squares, solve_merit, Dogleg, GaussNewtonLs, LevenbergMarquardt, NewtonMerit,
    ProjectedLevenbergMarquardt, TrustRegionSteihaug,
};
use contactlab_core::{Merit, ProjectedResidual, Residual, Solution, SolveOptions, Status};
use faer::MatMut;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Runs every least-squares driver on `r` from `x0`.
fn all_drivers<R: ProjectedResidual + Clone>(
    r: &R,
    x0: &[f64],
    opts: &SolveOptions,
) -> Vec<(&'static str, Solution)> {
    let go = |res: Result<Solution, _>| res.expect("solver error");
    vec![
        (
            "gauss_newton",
            go(solve_least_squares(
                r.clone(),
                GaussNewtonLs::default(),
                x0.to_vec(),
                opts,
            )),
        ),
        (
            "lm",
            go(solve_least_squares(
                r.clone(),
                LevenbergMarquardt::default(),
                x0.to_vec(),
                opts,
            )),
        ),
        (
            "plm",
            go(solve_least_squares(
                r.clone(),
                ProjectedLevenbergMarquardt::default(),
                x0.to_vec(),
                opts,
            )),
        ),
        (
            "dogleg",
            go(solve_least_squares(
                r.clone(),
                Dogleg::default(),
                x0.to_vec(),
                opts,
            )),
        ),
        (
            "steihaug",
            go(solve_least_squares(
                r.clone(),
                TrustRegionSteihaug::default(),
                x0.to_vec(),
                opts,
            )),
        ),
    ]
}

/// `F = (10 (x2 - x1^2), 1 - x1)`, root (1, 1).
#[derive(Clone)]
struct Rosenbrock;

impl Residual for Rosenbrock {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        out[0] = 10.0 * (x[1] - x[0] * x[0]);
        out[1] = 1.0 - x[0];
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        out[(0, 0)] = -20.0 * x[0];
        out[(0, 1)] = 10.0;
        out[(1, 0)] = -1.0;
        out[(1, 1)] = 0.0;
    }
}

impl ProjectedResidual for Rosenbrock {
    fn project(&self, _x: &mut [f64]) {}
}

/// `F = A x - b`.
#[derive(Clone)]
struct Linear {
    a: Vec<[f64; 3]>,
    b: Vec<f64>,
}

impl Residual for Linear {
    fn num_unknowns(&self) -> usize {
        3
    }
    fn num_residuals(&self) -> usize {
        self.a.len()
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        for (i, row) in self.a.iter().enumerate() {
            out[i] = row.iter().zip(x).map(|(a, x)| a * x).sum::<f64>() - self.b[i];
        }
    }
    fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
        for (i, row) in self.a.iter().enumerate() {
            for (j, a) in row.iter().enumerate() {
                out[(i, j)] = *a;
            }
        }
    }
}

impl ProjectedResidual for Linear {
    fn project(&self, _x: &mut [f64]) {}
}

fn linear_system(consistent: bool) -> (Linear, [f64; 3]) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let a: Vec<[f64; 3]> = (0..6)
        .map(|_| {
            [
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
                rng.random_range(-1.0..1.0),
            ]
        })
        .collect();
    let x_true = [0.7, -1.3, 2.1];
    let mut b: Vec<f64> = a
        .iter()
        .map(|row| row.iter().zip(&x_true).map(|(a, x)| a * x).sum())
        .collect();
    if consistent {
        return (Linear { a, b }, x_true);
    }
    for bi in b.iter_mut() {
        *bi += rng.random_range(-0.5..0.5);
    }
    // Reference by a different method than the drivers': nalgebra's SVD least squares.
    let am = nalgebra::DMatrix::from_fn(6, 3, |i, j| a[i][j]);
    let bm = nalgebra::DVector::from_column_slice(&b);
    let xs = am.svd(true, true).solve(&bm, 1e-14).expect("svd solve");
    (Linear { a, b }, [xs[0], xs[1], xs[2]])
}

/// Residuals `a exp(b t_i) - y_i` of an exponential fit.
#[derive(Clone)]
struct ExpFit {
    t: Vec<f64>,
    y: Vec<f64>,
}

impl Residual for ExpFit {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        self.t.len()
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        for (i, (t, y)) in self.t.iter().zip(&self.y).enumerate() {
            out[i] = x[0] * (x[1] * t).exp() - y;
        }
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        for (i, t) in self.t.iter().enumerate() {
            let e = (x[1] * t).exp();
            out[(i, 0)] = e;
            out[(i, 1)] = x[0] * t * e;
        }
    }
}

impl ProjectedResidual for ExpFit {
    fn project(&self, _x: &mut [f64]) {}
}

fn exp_fit() -> (ExpFit, [f64; 2]) {
    let mut rng = ChaCha8Rng::seed_from_u64(2014);
    let (a, b) = (2.5, -1.3);
    let mut t: Vec<f64> = (0..12).map(|_| rng.random_range(0.0..2.0)).collect();
    t.sort_by(f64::total_cmp);
    let y = t.iter().map(|t| a * (b * t).exp()).collect();
    (ExpFit { t, y }, [a, b])
}

fn tight() -> SolveOptions {
    SolveOptions {
        max_iter: 200,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    }
}

#[test]
fn rosenbrock_all_drivers_converge_to_one_one() {
    for (name, s) in all_drivers(&Rosenbrock, &[-1.2, 1.0], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}: {:?}", s.status);
        assert!(
            (s.x[0] - 1.0).abs() < 1e-8 && (s.x[1] - 1.0).abs() < 1e-8,
            "{name}: {:?}",
            s.x
        );
        assert!(s.merit < 1e-20, "{name}: merit {}", s.merit);
        eprintln!("rosenbrock {name}: {} iterations", s.iterations);
    }
}

#[test]
fn consistent_linear_system_converges_to_the_root() {
    let (r, x_true) = linear_system(true);
    for (name, s) in all_drivers(&r, &[0.0; 3], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}");
        for (x, e) in s.x.iter().zip(&x_true) {
            assert!((x - e).abs() < 1e-8, "{name}: {:?} vs {:?}", s.x, x_true);
        }
    }
}

#[test]
fn inconsistent_linear_system_ends_at_a_local_minimum_equal_to_the_normal_equations() {
    let (r, x_ls) = linear_system(false);
    let opts = SolveOptions {
        grad_tol: 1e-10,
        ..tight()
    };
    for (name, s) in all_drivers(&r, &[0.0; 3], &opts) {
        assert_eq!(s.status, Status::LocalMinimum, "{name}");
        for (x, e) in s.x.iter().zip(&x_ls) {
            assert!((x - e).abs() < 1e-8, "{name}: {:?} vs {:?}", s.x, x_ls);
        }
        assert!(
            s.merit > 1e-3,
            "{name}: an inconsistent system has a positive merit"
        );
    }
}

#[test]
fn exponential_fit_recovers_the_parameters() {
    let (r, p) = exp_fit();
    for (name, s) in all_drivers(&r, &[1.0, 0.0], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}");
        assert!(
            (s.x[0] - p[0]).abs() < 1e-6 && (s.x[1] - p[1]).abs() < 1e-6,
            "{name}: {:?}",
            s.x
        );
    }
}

#[test]
fn traces_have_one_row_per_iteration_with_finite_nonincreasing_merits() {
    for (name, s) in all_drivers(&Rosenbrock, &[-1.2, 1.0], &tight()) {
        assert_eq!(s.trace.len() as u64, s.iterations + 1, "{name}");
        for (k, row) in s.trace.rows.iter().enumerate() {
            assert_eq!(row.iter, k as u64, "{name}");
            assert!(row.merit.is_finite(), "{name}: row {k}");
        }
        assert!(
            s.trace.rows[1..].iter().all(|r| r.step_kind.is_some()),
            "{name}"
        );
        assert_eq!(*s.trace.merits().last().unwrap(), s.merit, "{name}");
        if name != "plm" {
            let m = s.trace.merits();
            assert!(m.windows(2).all(|w| w[1] <= w[0]), "{name}: {m:?}");
        }
    }
}

#[test]
fn lm_traces_lambda_and_rejections() {
    let s = solve_least_squares(
        Rosenbrock,
        LevenbergMarquardt::default(),
        vec![-1.2, 1.0],
        &tight(),
    )
    .unwrap();
    assert_eq!(s.trace.rows[0].lambda, 1e-3);
    assert!(s
        .trace
        .rows
        .iter()
        .all(|r| r.lambda.is_finite() && r.lambda > 0.0));
    for w in s.trace.rows.windows(2) {
        if w[1].step_kind.as_deref() == Some("rejected") {
            assert_eq!(w[1].merit, w[0].merit, "a rejected trial keeps the iterate");
        }
    }
    // Every trial factors one damped system, timed apart from the rest of the iteration.
    assert_eq!(s.counters["linear_solves"], s.iterations);
    assert!(s.counters["linear_solve_nanoseconds"] > 0);
}

#[test]
fn evaluation_counts_are_reported() {
    for (name, s) in all_drivers(&Rosenbrock, &[-1.2, 1.0], &tight()) {
        assert!(
            s.counters.get("operator_count").copied().unwrap_or(0) > s.iterations / 2,
            "{name}"
        );
        assert!(
            s.counters.get("jacobian_count").copied().unwrap_or(0) > 0,
            "{name}"
        );
    }
}

#[test]
fn two_iterations_give_max_iterations() {
    let opts = SolveOptions {
        max_iter: 2,
        ..tight()
    };
    for (name, s) in all_drivers(&Rosenbrock, &[-1.2, 1.0], &opts) {
        assert_eq!(s.status, Status::MaxIterations, "{name}");
        assert_eq!(s.iterations, 2, "{name}");
        assert_eq!(s.trace.len(), 3, "{name}");
    }
}

#[test]
fn a_start_at_the_root_converges_in_zero_iterations() {
    for (name, s) in all_drivers(&Rosenbrock, &[1.0, 1.0], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}");
        assert_eq!(s.iterations, 0, "{name}");
    }
}

/// A residual that is NaN everywhere.
#[derive(Clone)]
struct AlwaysNan;

impl Residual for AlwaysNan {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, _x: &[f64], out: &mut [f64]) {
        out.fill(f64::NAN);
    }
    fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
        out.fill(f64::NAN);
    }
}

impl ProjectedResidual for AlwaysNan {
    fn project(&self, _x: &mut [f64]) {}
}

#[test]
fn a_nan_residual_gives_not_finite() {
    for (name, s) in all_drivers(&AlwaysNan, &[0.5, 0.5], &tight()) {
        assert_eq!(s.status, Status::NotFinite, "{name}");
    }
}

/// `F = (sqrt(x1) - 2, x2)`: NaN for `x1 < 0`, root (4, 0); a full Gauss-Newton step from
/// near 0 overshoots into the NaN region, which the line searches and trust regions must
/// reject.
#[derive(Clone)]
struct SqrtNanLeft;

impl Residual for SqrtNanLeft {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0].sqrt() - 2.0;
        out[1] = x[1];
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        out[(0, 0)] = 0.5 / x[0].sqrt();
        out[(0, 1)] = 0.0;
        out[(1, 0)] = 0.0;
        out[(1, 1)] = 1.0;
    }
}

impl ProjectedResidual for SqrtNanLeft {
    fn project(&self, _x: &mut [f64]) {}
}

#[test]
fn nan_regions_are_stepped_around() {
    for (name, s) in all_drivers(&SqrtNanLeft, &[25.0, 1.0], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}: {:?}", s.x);
        assert!((s.x[0] - 4.0).abs() < 1e-8, "{name}");
    }
}

/// A Rosenbrock residual that sleeps on every evaluation.
#[derive(Clone)]
struct Slow;

impl Residual for Slow {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        std::thread::sleep(Duration::from_millis(3));
        Rosenbrock.residual(x, out)
    }
    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
        Rosenbrock.jacobian(x, out)
    }
}

impl ProjectedResidual for Slow {
    fn project(&self, _x: &mut [f64]) {}
}

#[test]
fn a_tiny_timeout_gives_timeout() {
    let opts = SolveOptions {
        time_limit: Some(Duration::from_micros(1)),
        ..tight()
    };
    // The deadline is read before every iteration, the first included: a limit the set-up
    // used up leaves no iteration (argmin's own timeout, read only after an iteration, let one
    // run).
    for (name, s) in all_drivers(&Slow, &[-1.2, 1.0], &opts) {
        assert_eq!(s.status, Status::Timeout, "{name}");
        assert_eq!(s.iterations, 0, "{name}");
    }
}

/// `F(x) = x - 1` with a Jacobian a billion times too small, each evaluation taking 3 ms: the
/// first Gauss-Newton step overshoots by 1e9 and the backtracking needs some 30 halvings, 90 ms
/// of evaluations.
struct Overshooting;

impl Residual for Overshooting {
    fn num_unknowns(&self) -> usize {
        1
    }
    fn num_residuals(&self) -> usize {
        1
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        std::thread::sleep(Duration::from_millis(3));
        out[0] = x[0] - 1.0;
    }
    fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
        out[(0, 0)] = 1e-9;
    }
}

/// A backtracking cut short by the time limit (20 ms) reports the time limit, not a failed
/// line search (the pile's MNCP steps said `line_search_failed` after 1 s); without a limit the
/// same backtracking finds its step, and the one iteration allowed lowers the merit from 2.
#[test]
fn a_line_search_stopped_by_the_time_limit_is_a_timeout() {
    let limited = SolveOptions {
        time_limit: Some(Duration::from_millis(20)),
        max_iter: 10,
        ..SolveOptions::default()
    };
    let s = solve_least_squares(Overshooting, GaussNewtonLs::default(), vec![3.0], &limited);
    assert_eq!(s.as_ref().unwrap().status, Status::Timeout, "{s:?}");
    let free = SolveOptions {
        max_iter: 1,
        ..SolveOptions::default()
    };
    let s = solve_least_squares(Overshooting, GaussNewtonLs::default(), vec![3.0], &free).unwrap();
    assert_eq!(s.status, Status::MaxIterations, "{s:?}");
    assert!(s.merit < 2.0, "{s:?}");
}

// ---------------------------------------------------------------------------------------------
// Projected Levenberg-Marquardt on constrained problems.

/// Fischer-Burmeister residual of the LCP `0 <= z _|_ M z + q >= 0`, on `X = {z >= 0}`.
#[derive(Clone)]
struct FbLcp {
    m: [[f64; 2]; 2],
    q: [f64; 2],
}

impl FbLcp {
    fn w(&self, z: &[f64]) -> [f64; 2] {
        [
            self.m[0][0] * z[0] + self.m[0][1] * z[1] + self.q[0],
            self.m[1][0] * z[0] + self.m[1][1] * z[1] + self.q[1],
        ]
    }
}

impl Residual for FbLcp {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, z: &[f64], out: &mut [f64]) {
        let w = self.w(z);
        for i in 0..2 {
            out[i] = (z[i] * z[i] + w[i] * w[i]).sqrt() - z[i] - w[i];
        }
    }
    fn jacobian(&self, z: &[f64], mut out: MatMut<'_, f64>) {
        let w = self.w(z);
        for i in 0..2 {
            let s = (z[i] * z[i] + w[i] * w[i]).sqrt();
            // At the kink (0, 0) any element of the generalized Jacobian will do.
            let (da, db) = if s > 0.0 {
                (z[i] / s - 1.0, w[i] / s - 1.0)
            } else {
                (
                    std::f64::consts::FRAC_1_SQRT_2 - 1.0,
                    std::f64::consts::FRAC_1_SQRT_2 - 1.0,
                )
            };
            for j in 0..2 {
                out[(i, j)] = db * self.m[i][j] + if i == j { da } else { 0.0 };
            }
        }
    }
}

impl ProjectedResidual for FbLcp {
    fn project(&self, z: &mut [f64]) {
        for zi in z.iter_mut() {
            *zi = zi.max(0.0);
        }
    }
}

#[test]
fn plm_solves_a_fischer_burmeister_lcp() {
    // z = (0.5, 0), w = (0, 1.5): strictly complementary.
    let lcp = FbLcp {
        m: [[2.0, 1.0], [1.0, 2.0]],
        q: [-1.0, 1.0],
    };
    for x0 in [[1.0, 1.0], [0.0, 0.0], [3.0, 0.2], [-2.0, 5.0]] {
        let s = solve_least_squares(
            lcp.clone(),
            ProjectedLevenbergMarquardt::default(),
            x0.to_vec(),
            &tight(),
        )
        .unwrap();
        assert_eq!(s.status, Status::Converged, "from {x0:?}");
        assert!(
            (s.x[0] - 0.5).abs() < 1e-8 && s.x[1].abs() < 1e-8,
            "from {x0:?}: {:?}",
            s.x
        );
        assert!(s.x.iter().all(|z| *z >= 0.0));
        assert!(s.counters.get("projection_count").copied().unwrap_or(0) > 0);
    }
}

/// `F = (x1 + 1, x2 - 2)` on `X = {x >= 0}`: the root (-1, 2) lies outside `X`; the constrained
/// minimizer of `|F|^2/2` is (0, 2) with `psi = 1/2`.
#[derive(Clone)]
struct ShiftedOnOrthant;

impl Residual for ShiftedOnOrthant {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0] + 1.0;
        out[1] = x[1] - 2.0;
    }
    fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
        out[(0, 0)] = 1.0;
        out[(0, 1)] = 0.0;
        out[(1, 0)] = 0.0;
        out[(1, 1)] = 1.0;
    }
}

impl ProjectedResidual for ShiftedOnOrthant {
    fn project(&self, x: &mut [f64]) {
        for xi in x.iter_mut() {
            *xi = xi.max(0.0);
        }
    }
}

#[test]
fn plm_stops_at_the_constrained_minimizer_when_the_root_is_infeasible() {
    let s = solve_least_squares(
        ShiftedOnOrthant,
        ProjectedLevenbergMarquardt::default(),
        vec![3.0, 3.0],
        &tight(),
    )
    .unwrap();
    assert_eq!(s.status, Status::LocalMinimum);
    assert!(
        s.x[0].abs() < 1e-12 && (s.x[1] - 2.0).abs() < 1e-12,
        "{:?}",
        s.x
    );
    assert!((s.merit - 0.5).abs() < 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Newton on convex merits.

/// `l = x'Qx/2 - c'x` with `Q` SPD.
struct Quadratic {
    q: [[f64; 3]; 3],
    c: [f64; 3],
}

impl Merit for Quadratic {
    fn dim(&self) -> usize {
        3
    }
    fn value(&self, x: &[f64]) -> f64 {
        let mut v = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                v += 0.5 * x[i] * self.q[i][j] * x[j];
            }
            v -= self.c[i] * x[i];
        }
        v
    }
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        for ((gi, row), ci) in g.iter_mut().zip(&self.q).zip(&self.c) {
            *gi = row.iter().zip(x).map(|(q, x)| q * x).sum::<f64>() - ci;
        }
    }
    fn hessian(&self, _x: &[f64], mut h: MatMut<'_, f64>) {
        for i in 0..3 {
            for j in 0..3 {
                h[(i, j)] = self.q[i][j];
            }
        }
    }
}

#[test]
fn newton_solves_a_convex_quadratic_in_one_iteration() {
    let quad = Quadratic {
        q: [[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]],
        c: [1.0, -2.0, 3.0],
    };
    let s = solve_merit(
        quad,
        NewtonMerit::default(),
        vec![10.0, -10.0, 5.0],
        &tight(),
    )
    .unwrap();
    assert_eq!(s.status, Status::Converged);
    assert_eq!(s.iterations, 1);
    assert_eq!(s.trace.rows[1].step_kind.as_deref(), Some("newton"));
    assert!((s.trace.rows[1].step_length - 1.0).abs() < 1e-12);
    // Reference: Cramer's rule, independent of the driver's LLT.
    let q = [[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]];
    let c = [1.0, -2.0, 3.0];
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(q);
    for k in 0..3 {
        let mut mk = q;
        for i in 0..3 {
            mk[i][k] = c[i];
        }
        assert!((s.x[k] - det(mk) / d).abs() < 1e-12, "{:?}", s.x);
    }
}

/// `l = log sum_i exp(a_i'x + b_i) + mu |x|^2 / 2`: smooth and strongly convex.
#[derive(Clone)]
struct LogSumExp {
    a: Vec<[f64; 2]>,
    b: Vec<f64>,
    mu: f64,
}

impl LogSumExp {
    /// Softmax weights at `x` and the log-sum-exp value.
    fn weights(&self, x: &[f64]) -> (Vec<f64>, f64) {
        let z: Vec<f64> = self
            .a
            .iter()
            .zip(&self.b)
            .map(|(a, b)| a[0] * x[0] + a[1] * x[1] + b)
            .collect();
        let zmax = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = z.iter().map(|zi| (zi - zmax).exp()).collect();
        let s: f64 = e.iter().sum();
        (e.iter().map(|ei| ei / s).collect(), zmax + s.ln())
    }
}

impl Merit for LogSumExp {
    fn dim(&self) -> usize {
        2
    }
    fn value(&self, x: &[f64]) -> f64 {
        self.weights(x).1 + 0.5 * self.mu * (x[0] * x[0] + x[1] * x[1])
    }
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        let (p, _) = self.weights(x);
        for k in 0..2 {
            g[k] = self.a.iter().zip(&p).map(|(a, pi)| pi * a[k]).sum::<f64>() + self.mu * x[k];
        }
    }
    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        let (p, _) = self.weights(x);
        let mean: Vec<f64> = (0..2)
            .map(|k| self.a.iter().zip(&p).map(|(a, pi)| pi * a[k]).sum())
            .collect();
        for k in 0..2 {
            for l in 0..2 {
                let second: f64 = self.a.iter().zip(&p).map(|(a, pi)| pi * a[k] * a[l]).sum();
                h[(k, l)] = second - mean[k] * mean[l] + if k == l { self.mu } else { 0.0 };
            }
        }
    }
}

#[test]
fn newton_minimizes_log_sum_exp_plus_quadratic() {
    let lse = LogSumExp {
        a: vec![[1.0, 2.0], [-1.5, 0.5], [0.3, -2.0], [2.0, 1.0]],
        b: vec![0.1, -0.4, 0.7, 0.0],
        mu: 0.5,
    };
    let s = solve_merit(
        lse.clone(),
        NewtonMerit::default(),
        vec![3.0, -4.0],
        &tight(),
    )
    .unwrap();
    assert_eq!(s.status, Status::Converged);
    // Reference by fixed-step gradient descent (step 1/L with L bounding the Hessian).
    let l_bound = lse
        .a
        .iter()
        .map(|a| a[0] * a[0] + a[1] * a[1])
        .fold(0.0, f64::max)
        + lse.mu;
    let mut x = [0.0, 0.0];
    let mut g = [0.0; 2];
    for _ in 0..100_000 {
        lse.gradient(&x, &mut g);
        if (g[0] * g[0] + g[1] * g[1]).sqrt() < 1e-14 {
            break;
        }
        x[0] -= g[0] / l_bound;
        x[1] -= g[1] / l_bound;
    }
    assert!(
        (s.x[0] - x[0]).abs() < 1e-10 && (s.x[1] - x[1]).abs() < 1e-10,
        "{:?} vs {x:?}",
        s.x
    );
    // Non-increasing up to the rounding of `l` (the last step is accepted on its slope).
    let m = s.trace.merits();
    assert!(
        m.windows(2)
            .all(|w| w[1] <= w[0] + 4.0 * f64::EPSILON * w[0].abs()),
        "{m:?}"
    );
    assert!(s.counters.get("along_line_count").copied().unwrap_or(0) > 0);
}

/// Three groups of two unknowns, `l = lse_1(x_0, x_1) + lse_2(x_2, x_3) + |x_4, x_5|^2 / 2`: a
/// separable merit through [`Merit::groups`] with the trait's defaults for everything else.
struct ThreeIslands(LogSumExp, LogSumExp);

impl ThreeIslands {
    fn parts<'a>(&self, x: &'a [f64]) -> (&'a [f64], &'a [f64], &'a [f64]) {
        (&x[0..2], &x[2..4], &x[4..6])
    }
}

impl Merit for ThreeIslands {
    fn dim(&self) -> usize {
        6
    }
    fn value(&self, x: &[f64]) -> f64 {
        let (a, b, c) = self.parts(x);
        self.0.value(a) + self.1.value(b) + 0.5 * (c[0] * c[0] + c[1] * c[1])
    }
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        let (a, b, c) = self.parts(x);
        self.0.gradient(a, &mut g[0..2]);
        self.1.gradient(b, &mut g[2..4]);
        g[4] = c[0];
        g[5] = c[1];
    }
    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        let (a, b, _) = self.parts(x);
        for c in 0..6 {
            for r in 0..6 {
                h[(r, c)] = 0.0;
            }
        }
        self.0.hessian(a, h.as_mut().submatrix_mut(0, 0, 2, 2));
        self.1.hessian(b, h.as_mut().submatrix_mut(2, 2, 2, 2));
        h[(4, 4)] = 1.0;
        h[(5, 5)] = 1.0;
    }
    fn groups(&self) -> &[std::ops::Range<usize>] {
        const GROUPS: [std::ops::Range<usize>; 3] = [0..2, 2..4, 4..6];
        &GROUPS
    }
}

/// Island by island (the default) and all together reach the same minimizer; each island
/// takes its own step length; the island that starts at its minimum never steps, so the
/// summed island iterations stay at most two per iteration.
#[test]
fn newton_steps_the_groups_of_a_separable_merit_on_their_own() {
    let islands = || {
        ThreeIslands(
            LogSumExp {
                a: vec![[1.0, 2.0], [-1.5, 0.5], [0.3, -2.0], [2.0, 1.0]],
                b: vec![0.1, -0.4, 0.7, 0.0],
                mu: 0.5,
            },
            LogSumExp {
                a: vec![[3.0, -1.0], [-2.0, 2.5], [0.5, 0.5]],
                b: vec![1.0, 0.0, -2.0],
                mu: 0.1,
            },
        )
    };
    let x0 = vec![3.0, -4.0, -2.0, 5.0, 0.0, 0.0];
    // Above the second island's gradient floor (about 1e-10 taken together).
    let opts = SolveOptions {
        stop_tol: 1e-9,
        ..tight()
    };
    let by_island = solve_merit(islands(), NewtonMerit::default(), x0.clone(), &opts).unwrap();
    let mut together = NewtonMerit::default();
    together.by_island = false;
    let whole = solve_merit(islands(), together, x0, &opts).unwrap();
    assert_eq!(by_island.status, Status::Converged);
    assert_eq!(whole.status, Status::Converged);
    for (a, b) in by_island.x.iter().zip(&whole.x) {
        assert!((a - b).abs() < 1e-8, "{:?} vs {:?}", by_island.x, whole.x);
    }
    assert_eq!(&by_island.x[4..], &[0.0, 0.0]);
    let stepped = by_island.counters["island_iterations"];
    assert!(
        stepped >= by_island.iterations && stepped <= 2 * by_island.iterations,
        "{stepped} island steps in {} iterations",
        by_island.iterations
    );
    assert!(!whole.counters.contains_key("island_iterations"));
    for row in &by_island.trace.rows[1..] {
        assert!(row.extra["groups_stepped"] <= 2.0, "{row:?}");
    }
}

/// `F = x1 + x2 - 2`: one equation, two unknowns, a line of roots.
#[derive(Clone)]
struct Underdetermined;

impl Residual for Underdetermined {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        1
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0] + x[1] - 2.0;
    }
    fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
        out[(0, 0)] = 1.0;
        out[(0, 1)] = 1.0;
    }
}

impl ProjectedResidual for Underdetermined {
    fn project(&self, _x: &mut [f64]) {}
}

#[test]
fn an_underdetermined_system_reaches_a_root() {
    for (name, s) in all_drivers(&Underdetermined, &[5.0, -1.0], &tight()) {
        assert_eq!(s.status, Status::Converged, "{name}");
        assert!((s.x[0] + s.x[1] - 2.0).abs() < 1e-12, "{name}: {:?}", s.x);
    }
}

/// A merit that is NaN everywhere.
struct NanMerit;

impl Merit for NanMerit {
    fn dim(&self) -> usize {
        1
    }
    fn value(&self, _x: &[f64]) -> f64 {
        f64::NAN
    }
    fn gradient(&self, _x: &[f64], g: &mut [f64]) {
        g[0] = f64::NAN;
    }
    fn hessian(&self, _x: &[f64], mut h: MatMut<'_, f64>) {
        h[(0, 0)] = f64::NAN;
    }
}

#[test]
fn newton_merit_reports_not_finite_and_max_iterations() {
    let s = solve_merit(NanMerit, NewtonMerit::default(), vec![1.0], &tight()).unwrap();
    assert_eq!(s.status, Status::NotFinite);
    let lse = LogSumExp {
        a: vec![[1.0, 2.0], [-1.5, 0.5]],
        b: vec![0.0, 0.0],
        mu: 0.1,
    };
    let opts = SolveOptions {
        max_iter: 1,
        ..tight()
    };
    let s = solve_merit(lse, NewtonMerit::default(), vec![30.0, -40.0], &opts).unwrap();
    assert_eq!(s.status, Status::MaxIterations);
    assert_eq!(s.trace.len(), 2);
}

/// `F(x) = (x_0^3, x_1^3)`: Newton-type steps shrink `x` by a constant factor near the root
/// (a triple root), so `|F|` passes any threshold one step before `scale |F|` does.
#[derive(Clone)]
struct Cubes {
    /// [`Residual::stop_measure`] is `scale |F|`.
    scale: f64,
}

impl Residual for Cubes {
    fn num_unknowns(&self) -> usize {
        2
    }
    fn num_residuals(&self) -> usize {
        2
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        out[0] = x[0].powi(3);
        out[1] = x[1].powi(3);
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        out.fill(0.0);
        out[(0, 0)] = 3.0 * x[0] * x[0];
        out[(1, 1)] = 3.0 * x[1] * x[1];
    }
    fn stop_measure(&self, _x: &[f64], f: &[f64]) -> f64 {
        self.scale * f[0].hypot(f[1])
    }
}

impl ProjectedResidual for Cubes {
    fn project(&self, _x: &mut [f64]) {}
}

#[test]
fn every_least_squares_driver_stops_on_the_residuals_own_measure() {
    let opts = SolveOptions {
        max_iter: 500,
        stop_tol: 1e-9,
        // `|J'F| = 3 |x|^5` is far below `|F|` here: no local-minimum test.
        grad_tol: 0.0,
        ..SolveOptions::default()
    };
    let plain = all_drivers(&Cubes { scale: 1.0 }, &[1.0, 0.5], &opts);
    let scaled = all_drivers(&Cubes { scale: 1e3 }, &[1.0, 0.5], &opts);
    for ((name, p), (_, s)) in plain.iter().zip(&scaled) {
        assert_eq!(s.status, Status::Converged, "{name}: {:?}", s.status);
        let f = s.x[0].powi(3).hypot(s.x[1].powi(3));
        assert!(
            1e3 * f <= 1e-9,
            "{name}: stopped at 1e3 |F| = {:e}",
            1e3 * f
        );
        assert!(
            s.iterations > p.iterations,
            "{name}: {} vs {}",
            s.iterations,
            p.iterations
        );
    }
}
