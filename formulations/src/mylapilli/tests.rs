//! Value tests of both formulations: derivatives against finite differences, residuals at
//! constructed solutions, the direction mapping, the paper's example 2 in miniature, and the
//! drivers reaching known solutions.

use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_4};

use contactlab_core::drivers::{
    solve_least_squares, Dogleg, GaussNewtonLs, LevenbergMarquardt, ProjectedLevenbergMarquardt,
    TrustRegionSteihaug,
};
use contactlab_core::metrics::{local_metrics, natural_map_residual};
use contactlab_core::{
    Constraint, Constraints, LocalProblem, Matrix, NonSmoothResidual, ProblemError,
    ProjectedResidual, Residual, Solution, SolveOptions, Status,
};
use faer::Mat;
use nalgebra::Vector3;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::todorov::{self, ImplicitNcp, Region};

mod kinds;

// ---------------------------------------------------------------- problem builders

/// A random symmetric positive definite `n x n` matrix `L L' / n + 0.1 I`.
fn random_spd(n: usize, rng: &mut ChaCha8Rng) -> Mat<f64> {
    let l = Mat::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    Mat::from_fn(n, n, |i, j| {
        (0..n).map(|k| l[(i, k)] * l[(j, k)]).sum::<f64>() / n as f64
            + if i == j { 0.1 } else { 0.0 }
    })
}

/// A problem of `n_b` one-row equality blocks (the paper's bilateral rows, first) and
/// Coulomb contacts `mu` on the combined `W` and `q`.
fn combined(w: Mat<f64>, q: Vec<f64>, n_b: usize, mu: &[f64]) -> LocalProblem {
    let mut blocks = vec![Constraint::Equality { rows: 1 }; n_b];
    blocks.extend(mu.iter().map(|&m| Constraint::coulomb(m)));
    LocalProblem::with_constraints(Matrix::Dense(w), q, Constraints::new(blocks).unwrap()).unwrap()
}

/// A random combined system with `n_b` bilateral rows (first) and `nc` contacts.
fn random_system(n_b: usize, nc: usize, seed: u64) -> LocalProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = n_b + 3 * nc;
    let w = random_spd(n, &mut rng);
    let q: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mu: Vec<f64> = (0..nc).map(|_| rng.random_range(0.1..1.0)).collect();
    combined(w, q, n_b, &mu)
}

/// The friction coefficient of each contact block (the other blocks have none).
fn contact_mu(p: &LocalProblem) -> Vec<f64> {
    p.mu().iter().copied().filter(|m| !m.is_nan()).collect()
}

/// `[p_b; r]`: the impulse of every row of a problem whose `n_b` equality rows come first.
fn cat(p_b: &[f64], r: &[f64]) -> Vec<f64> {
    p_b.iter().chain(r).copied().collect()
}

/// The contact problem with the first `n_b` (equality) rows eliminated (Schur complement):
/// `W_c = W - W_bu' W_bb^-1 W_bu`, `q_c = q - W_bu' W_bb^-1 q_b`, and `(W_bb^-1 W_bu,
/// W_bb^-1 q_b)`. Its solutions are the contact impulses of the combined system, so the shared
/// metrics judge them on it.
fn eliminate(p: &LocalProblem, n_b: usize) -> (LocalProblem, Mat<f64>) {
    use faer::prelude::Solve;
    let full = p.w.to_dense();
    let n = full.nrows() - n_b;
    let w_bb = Mat::from_fn(n_b, n_b, |i, j| full[(i, j)]);
    let rhs = Mat::from_fn(
        n_b,
        n + 1,
        |i, j| {
            if j < n {
                full[(i, n_b + j)]
            } else {
                p.q[i]
            }
        },
    );
    let x = if n_b == 0 {
        Mat::zeros(0, n + 1)
    } else {
        w_bb.llt(faer::Side::Lower).unwrap().solve(&rhs)
    };
    let wc = Mat::from_fn(n, n, |i, j| {
        let s: f64 = (0..n_b).map(|k| full[(k, n_b + i)] * x[(k, j)]).sum();
        let s_t: f64 = (0..n_b).map(|k| full[(k, n_b + j)] * x[(k, i)]).sum();
        0.5 * ((full[(n_b + i, n_b + j)] - s) + (full[(n_b + j, n_b + i)] - s_t))
    });
    let qc: Vec<f64> = (0..n)
        .map(|i| {
            p.q[n_b + i]
                - (0..n_b)
                    .map(|k| full[(k, n_b + i)] * x[(k, n)])
                    .sum::<f64>()
        })
        .collect();
    let c = LocalProblem::new(Matrix::Dense(wc), qc, contact_mu(p)).unwrap();
    (c, x)
}

/// The bilateral impulses that make `u_b = 0` for contact impulses `r`:
/// `p_b = -W_bb^-1 (W_bu r + q_b)`.
fn impulse_for(p: &LocalProblem, n_b: usize, r: &[f64]) -> Vec<f64> {
    let (_, x) = eliminate(p, n_b);
    (0..n_b)
        .map(|k| -((0..r.len()).map(|j| x[(k, j)] * r[j]).sum::<f64>() + x[(k, r.len())]))
        .collect()
}

/// What a contact does at a constructed solution.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Separate,
    Stick,
    /// Slides with the friction exactly along friction direction `j` (MLCP = Coulomb there).
    SlideAlong(usize),
    /// Slides in an arbitrary direction (a Coulomb solution, not an MLCP one).
    Slide,
}

/// A system with a known solution: the combined `W` random; `p_b`, `r`, `u` chosen for the
/// given states; `q`, `q_b` constructed so that they solve it. Returns the problem (`n_b`
/// equality rows first), `p_b`, `r` (the contacts').
fn known_solution(
    n_b: usize,
    states: &[State],
    dirs: &Directions,
    seed: u64,
) -> (LocalProblem, Vec<f64>, Vec<f64>) {
    let nc = states.len();
    let base = random_system(n_b, nc, seed);
    let mu = contact_mu(&base);
    let mut rng = ChaCha8Rng::seed_from_u64(seed + 7777);
    let mut r = vec![0.0; 3 * nc];
    let mut u = vec![0.0; 3 * nc];
    for (i, st) in states.iter().enumerate() {
        let mu = mu[i];
        let rn = rng.random_range(0.2..1.5);
        match *st {
            State::Separate => {
                u[3 * i] = rng.random_range(0.1..1.0);
                u[3 * i + 1] = rng.random_range(-1.0..1.0);
                u[3 * i + 2] = rng.random_range(-1.0..1.0);
            }
            State::Stick => {
                // Strictly inside the inscribed polygon (radius mu rn cos(pi / n_f) >= mu rn / 2).
                let rad = rng.random_range(0.0..0.45) * mu * rn;
                let a: f64 = rng.random_range(0.0..std::f64::consts::TAU);
                r[3 * i..3 * i + 3].copy_from_slice(&[rn, rad * a.cos(), rad * a.sin()]);
            }
            State::SlideAlong(j) => {
                let (c, s) = dirs.direction(i, j);
                let slip = rng.random_range(0.1..1.0);
                r[3 * i..3 * i + 3].copy_from_slice(&[rn, mu * rn * c, mu * rn * s]);
                u[3 * i + 1] = -slip * c;
                u[3 * i + 2] = -slip * s;
            }
            State::Slide => {
                let a: f64 = rng.random_range(0.0..std::f64::consts::TAU);
                let slip = rng.random_range(0.1..1.0);
                r[3 * i..3 * i + 3].copy_from_slice(&[rn, -mu * rn * a.cos(), -mu * rn * a.sin()]);
                u[3 * i + 1] = slip * a.cos();
                u[3 * i + 2] = slip * a.sin();
            }
        }
    }
    let p_b: Vec<f64> = (0..n_b).map(|_| rng.random_range(-1.0..1.0)).collect();
    let full = base.w.to_dense();
    let w = |i: usize, j: usize| full[(n_b + i, n_b + j)];
    let w_bu = |k: usize, j: usize| full[(k, n_b + j)];
    let n = 3 * nc;
    let q: Vec<f64> = (0..n)
        .map(|i| {
            let wr: f64 = (0..n).map(|j| w(i, j) * r[j]).sum();
            let wp: f64 = (0..n_b).map(|k| w_bu(k, i) * p_b[k]).sum();
            u[i] - wr - wp
        })
        .collect();
    let q_b: Vec<f64> = (0..n_b)
        .map(|k| {
            let a: f64 = (0..n_b).map(|l| full[(k, l)] * p_b[l]).sum();
            let b: f64 = (0..n).map(|j| w_bu(k, j) * r[j]).sum();
            -(a + b)
        })
        .collect();
    let problem = combined(full, cat(&q_b, &q), n_b, &mu);
    (problem, p_b, r)
}

fn dense(rows: usize, cols: usize, v: &[f64]) -> Matrix {
    Matrix::from_row_major("A", rows, cols, v).unwrap()
}

/// A hand-made system in dyadic numbers (every product and sum below is exact in binary):
/// one bilateral row, contact 0 slides along `d_2 = -t1`, contact 1 sticks, `n_f = 4`,
/// `theta0 = 0`. Returns problem, `p_b`, `r`, `u`.
#[allow(clippy::type_complexity)]
fn dyadic_system() -> (LocalProblem, Vec<f64>, Vec<f64>, Vec<f64>) {
    #[rustfmt::skip]
    let w_full = [
        2.0,  0.25, 0.0,  0.25, 0.0,  0.0,  0.25,
        0.25, 2.0,  0.25, 0.0,  0.5,  0.0,  0.0,
        0.0,  0.25, 2.0,  0.0,  0.0,  0.25, 0.0,
        0.25, 0.0,  0.0,  2.0,  0.0,  0.0,  0.5,
        0.0,  0.5,  0.0,  0.0,  2.0,  0.25, 0.0,
        0.0,  0.0,  0.25, 0.0,  0.25, 2.0,  0.0,
        0.25, 0.0,  0.0,  0.5,  0.0,  0.0,  2.0,
    ];
    let p_b = vec![0.75];
    let r = vec![1.0, -0.5, 0.0, 2.0, 0.25, -0.25];
    let u = vec![0.0, 0.5, 0.0, 0.0, 0.0, 0.0];
    let z = cat(&p_b, &r);
    let target = cat(&[0.0], &u);
    let q: Vec<f64> = (0..7)
        .map(|i| target[i] - (0..7).map(|j| w_full[7 * i + j] * z[j]).sum::<f64>())
        .collect();
    let p = combined(dense(7, 7, &w_full).to_dense(), q, 1, &[0.5, 0.5]);
    (p, p_b, r, u)
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

fn residual_of<R: Residual>(res: &R, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; res.num_residuals()];
    res.residual(x, &mut out);
    out
}

fn jacobian_of<R: Residual>(res: &R, x: &[f64]) -> Mat<f64> {
    let mut j = Mat::zeros(res.num_residuals(), res.num_unknowns());
    res.jacobian(x, j.as_mut());
    j
}

/// Central differences of row `i`, column `c`.
fn fd<R: Residual>(res: &R, x: &[f64], i: usize, c: usize, h: f64) -> f64 {
    let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
    xp[c] += h;
    xm[c] -= h;
    (residual_of(res, &xp)[i] - residual_of(res, &xm)[i]) / (2.0 * h)
}

// ---------------------------------------------------------------- Fischer-Burmeister

proptest! {
    /// Eq. 23: phi(a, b) = 0 exactly when a >= 0, b >= 0, a b = 0; the rationalized evaluation
    /// is the printed formula (eq. 24) up to rounding.
    #[test]
    fn fischer_burmeister_is_an_ncp_function(a in -5.0..5.0f64, b in -5.0..5.0f64) {
        let phi = fischer_burmeister(a, b);
        let printed = (a * a + b * b).sqrt() - a - b;
        prop_assert!((phi - printed).abs() <= 1e-14 * (1.0 + a.abs() + b.abs()));
        prop_assert_eq!(fischer_burmeister(a.abs(), 0.0), 0.0);
        prop_assert_eq!(fischer_burmeister(0.0, b.abs()), 0.0);
        if a < 0.0 || b < 0.0 || (a > 0.0 && b > 0.0) {
            prop_assert!(phi != 0.0);
        }
        // The gradient matches central differences away from the kink.
        if a.hypot(b) > 1e-3 {
            let (ga, gb) = fischer_burmeister_gradient(a, b).unwrap();
            let h = 1e-7;
            let da = (fischer_burmeister(a + h, b) - fischer_burmeister(a - h, b)) / (2.0 * h);
            let db = (fischer_burmeister(a, b + h) - fischer_burmeister(a, b - h)) / (2.0 * h);
            prop_assert!((ga - da).abs() < 1e-6 && (gb - db).abs() < 1e-6);
        }
    }
}

#[test]
fn fischer_burmeister_keeps_small_values_the_printed_form_loses() {
    // phi(1e8, 1e-9) = -1e-9 (1 - 5e-18): the printed form returns 0 or a rounding of 1e8.
    let phi = fischer_burmeister(1e8, 1e-9);
    assert!((phi + 1e-9).abs() < 1e-22, "{phi}");
    assert_eq!(fischer_burmeister_gradient(0.0, 0.0), None);
    assert_eq!(fischer_burmeister(0.0, 0.0), 0.0);
    assert_eq!(fischer_burmeister(-1.0, 0.0), 2.0);
}

// ---------------------------------------------------------------- MLCP structure

#[test]
fn mlcp_matrix_has_the_blocks_of_eq_22() {
    let p = random_system(2, 3, 11);
    let dirs = Directions::uniform(5, 0.3, 3).unwrap();
    let m = MlcpFb::new(&p, dirs.clone()).unwrap();
    assert_eq!(m.size(), 2 + 3 * (5 + 2));
    assert_eq!(m.num_unknowns(), 23);
    let mm = m.matrix();
    // The combined W: the bilateral rows 0..2, then the contacts' (W_bu and W shifted by 2).
    let full = p.w.to_dense();
    let w = |i: usize, j: usize| full[(2 + i, 2 + j)];
    let w_bu = |k: usize, j: usize| full[(k, 2 + j)];
    let mu = contact_mu(&p);
    // D_' W D_ entry: contact 1, direction 2 against contact 2, normal.
    let (c, s) = dirs.direction(1, 2);
    let expect = c * w(4, 6) + s * w(5, 6);
    assert!((mm[(m.beta_index(1, 3), m.beta_index(2, 0))] - expect).abs() < 1e-15);
    // W_bu D_ and its transpose.
    let e = c * w_bu(1, 4) + s * w_bu(1, 5);
    assert!((mm[(1, m.beta_index(1, 3))] - e).abs() < 1e-15);
    assert!((mm[(m.beta_index(1, 3), 1)] - e).abs() < 1e-15);
    // E^ and E- (eq. 17), zero sigma-sigma block.
    for i in 0..3 {
        assert_eq!(mm[(m.sigma_index(i), m.beta_index(i, 0))], mu[i]);
        assert_eq!(mm[(m.beta_index(i, 0), m.sigma_index(i))], 0.0);
        for k in 1..6 {
            assert_eq!(mm[(m.sigma_index(i), m.beta_index(i, k))], -1.0);
            assert_eq!(mm[(m.beta_index(i, k), m.sigma_index(i))], 1.0);
        }
        for j in 0..3 {
            assert_eq!(mm[(m.sigma_index(i), m.sigma_index(j))], 0.0);
        }
    }
    // q_ = [q_b; D_' q; 0].
    let qv = m.vector();
    assert_eq!(qv[..2], p.q[..2]);
    assert!((qv[m.beta_index(1, 3)] - (c * p.q[6] + s * p.q[7])).abs() < 1e-15);
    assert_eq!(qv[m.beta_index(2, 0)], p.q[8]);
    assert_eq!(qv[m.sigma_index(1)], 0.0);
    assert!(m.is_equality(1) && !m.is_equality(2));
}

/// Eq. 22's `D_' W D_` and `D_' q` of a Coulomb problem written as the paper's 3-vector
/// products (`Matrix3`, `Vector3`), the way the MLCP was built before the other kinds.
fn coulomb_blocks_by_3_vectors(p: &LocalProblem, dirs: &Directions) -> (Vec<f64>, Vec<f64>) {
    use nalgebra::Matrix3;
    let (nc, w1) = (p.num_contacts(), dirs.n_f() + 1);
    let w = p.w.to_dense();
    let (mut m, mut q) = (Vec::new(), Vec::new());
    for i in 0..nc {
        let qi = Vector3::new(p.q[3 * i], p.q[3 * i + 1], p.q[3 * i + 2]);
        q.extend((0..w1).map(|c| dirs.column(i, c).dot(&qi)));
        for c in 0..w1 {
            for j in 0..nc {
                let wij = Matrix3::from_fn(|a, b| w[(3 * i + a, 3 * j + b)]);
                let left = wij.transpose() * dirs.column(i, c);
                m.extend((0..w1).map(|e| left.dot(&dirs.column(j, e))));
            }
        }
    }
    (m, q)
}

#[test]
fn coulomb_problems_build_the_papers_products_to_the_bit() {
    for seed in 0..6 {
        let p = random_system(0, 1 + seed % 4, 70 + seed as u64);
        let dirs = Directions::uniform(3 + seed % 4, 0.3 * seed as f64, p.num_contacts()).unwrap();
        let m = MlcpFb::new(&p, dirs.clone()).unwrap();
        let (want_m, want_q) = coulomb_blocks_by_3_vectors(&p, &dirs);
        let (nc, w1) = (p.num_contacts(), dirs.n_f() + 1);
        let mm = m.matrix();
        let mut got_m = Vec::new();
        for i in 0..nc {
            for c in 0..w1 {
                for j in 0..nc {
                    got_m.extend((0..w1).map(|e| mm[(m.beta_index(i, c), m.beta_index(j, e))]));
                }
            }
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&got_m), bits(&want_m), "seed {seed}");
        assert_eq!(bits(&m.vector()[..nc * w1]), bits(&want_q), "seed {seed}");
    }
}

#[test]
fn constructors_reject_bad_input() {
    let p = random_system(1, 2, 3);
    let d3 = Directions::uniform(4, 0.0, 3).unwrap();
    assert_eq!(
        MlcpFb::new(&p, d3).unwrap_err(),
        MylapilliError::DirectionCount {
            expected: 2,
            found: 3
        }
    );
    let mut neg = random_system(0, 2, 3);
    let mut mu = neg.mu().to_vec();
    mu[1] = -0.1;
    neg.constraints = contactlab_core::Constraints::coulomb(&mu);
    let d = Directions::uniform(4, 0.0, 2).unwrap();
    assert!(matches!(
        MlcpFb::new(&neg, d.clone()),
        Err(MylapilliError::Problem(ProblemError::NegativeFriction {
            contact: 1,
            ..
        }))
    ));
    assert!(matches!(
        ImplicitMncp::new(&neg),
        Err(MylapilliError::Problem(
            ProblemError::NegativeFriction { .. }
        ))
    ));
    let mut nan = p.clone();
    nan.q[2] = f64::NAN;
    assert!(matches!(
        MlcpFb::new(&nan, d.clone()),
        Err(MylapilliError::Problem(ProblemError::NonFinite { .. }))
    ));
    assert!(matches!(
        ImplicitMncp::new(&nan),
        Err(MylapilliError::Problem(ProblemError::NonFinite { .. }))
    ));
    // q for another number of rows than the blocks have.
    let mut short = p.clone();
    short.q.pop();
    assert!(matches!(
        MlcpFb::new(&short, d.clone()),
        Err(MylapilliError::Problem(ProblemError::Shape { .. }))
    ));
    assert!(ImplicitMncp::new(&short).is_err());
    assert_eq!(
        Directions::uniform(1, 0.0, 2).unwrap_err(),
        MylapilliError::TooFewDirections(1)
    );
    let m = MlcpFb::new(&p, d).unwrap();
    assert!(m.unknowns_from_impulse(&[0.0; 5]).is_err());
    assert!(m.unknowns_from_impulse(&[0.0; 8]).is_err());
    let mut bad = vec![0.0; 7];
    bad[3] = f64::NAN;
    assert!(m.unknowns_from_impulse(&bad).is_err());
}

// ---------------------------------------------------------------- MLCP derivatives

#[test]
fn mlcp_jacobian_matches_finite_differences_away_from_kinks() {
    let (mut checked, mut total) = (0, 0);
    for seed in 0..20 {
        let n_b = (seed % 3) as usize;
        let p = random_system(n_b, 2, seed);
        let dirs = Directions::uniform(3 + (seed % 4) as usize, 0.1 * seed as f64, 2).unwrap();
        let m = MlcpFb::new(&p, dirs).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(500 + seed);
        let z: Vec<f64> = (0..m.size()).map(|_| rng.random_range(-1.0..1.0)).collect();
        let f = m.affine(&z);
        let j = jacobian_of(&m, &z);
        total += m.size();
        for i in 0..m.size() {
            // Row i is smooth where (z_i, f_i) stays away from the origin.
            if !m.is_equality(i) && z[i].hypot(f[i]) < 1e-3 {
                continue;
            }
            for c in 0..m.size() {
                let d = fd(&m, &z, i, c, 1e-7);
                assert!(
                    (d - j[(i, c)]).abs() < 1e-6 * (1.0 + d.abs()),
                    "seed {seed} row {i} col {c}: fd {d} vs {}",
                    j[(i, c)]
                );
            }
            checked += 1;
        }
    }
    assert!(
        10 * checked >= 9 * total,
        "only {checked} of {total} rows checked"
    );
}

#[test]
fn mlcp_kink_rows_are_generalized_jacobian_elements() {
    let p = random_system(1, 2, 5);
    let m = MlcpFb::new(&p, Directions::uniform(4, 0.2, 2).unwrap()).unwrap();
    // At z = 0 every sigma row sits on the kink: sigma = 0, f_sigma = mu F_n - sum beta = 0.
    let z = vec![0.0; m.size()];
    let f = m.affine(&z);
    let j = jacobian_of(&m, &z);
    let mm = m.matrix();
    for i in 0..2 {
        let row = m.sigma_index(i);
        assert_eq!((z[row], f[row]), (0.0, 0.0));
        // Row = (xi - 1) e_i' + (zeta - 1) M_i with xi^2 + zeta^2 = 1: zeta from an off-diagonal
        // entry (M_ii = 0 on sigma rows, so zeta = 0 and xi = 1: the row is -M_i).
        let k = m.beta_index(i, 0);
        let zeta = j[(row, k)] / mm[(row, k)] + 1.0;
        let xi = j[(row, row)] - (zeta - 1.0) * mm[(row, row)] + 1.0;
        assert!(
            (xi * xi + zeta * zeta - 1.0).abs() < 1e-14,
            "xi {xi} zeta {zeta}"
        );
        for c in 0..m.size() {
            let expect = (zeta - 1.0) * mm[(row, c)] + if c == row { xi - 1.0 } else { 0.0 };
            assert!((j[(row, c)] - expect).abs() < 1e-15);
        }
        // The limit of the Jacobian along +e_i: the row at z + t e_i for small t.
        let mut zt = z.clone();
        zt[row] = 1e-9;
        let jt = jacobian_of(&m, &zt);
        for c in 0..m.size() {
            assert!((jt[(row, c)] - j[(row, c)]).abs() < 1e-8);
        }
        // The one-sided directional derivative along e_i is the diagonal entry.
        let h = 1e-8;
        let mut zh = z.clone();
        zh[row] = h;
        let d = (residual_of(&m, &zh)[row] - residual_of(&m, &z)[row]) / h;
        assert!((d - j[(row, row)]).abs() < 1e-7);
    }
    // A beta row on the kink has M_ii > 0: the paper's diagonal sqrt(1 + M_ii^2) - 1 - M_ii.
    // Take a direction of contact 1 with q_row <= 0 (the directions positively span the plane,
    // so one exists) and sigma(1) = -q_row: then beta = 0 and f_row = 0 exactly.
    let row = (1..5)
        .map(|k| m.beta_index(1, k))
        .find(|&r| m.vector()[r] <= 0.0)
        .unwrap();
    let mut z2 = vec![0.0; m.size()];
    z2[m.sigma_index(1)] = -m.vector()[row];
    let f2 = m.affine(&z2);
    assert_eq!((z2[row], f2[row]), (0.0, 0.0));
    let j2 = jacobian_of(&m, &z2);
    let mii = mm[(row, row)];
    assert!(mii > 0.0);
    assert!((j2[(row, row)] - ((1.0 + mii * mii).sqrt() - 1.0 - mii)).abs() < 1e-14);
    let s = mii.hypot(1.0);
    for c in 0..m.size() {
        if c != row {
            assert!((j2[(row, c)] - (mii / s - 1.0) * mm[(row, c)]).abs() < 1e-14);
        }
    }
    // The paper's printed rule: same diagonal, zero off-diagonal.
    let printed = m.clone().with_kink_rule(KinkRule::PaperPrinted);
    assert_eq!(printed.kink_rule(), KinkRule::PaperPrinted);
    let jp = jacobian_of(&printed, &z);
    for i in 0..2 {
        let row = m.sigma_index(i);
        assert!((jp[(row, row)] - j[(row, row)]).abs() < 1e-15);
        assert!((0..m.size()).all(|c| c == row || jp[(row, c)] == 0.0));
        // ... which is not of the form (xi - 1) e_i + (zeta - 1) M_i: M_i has non-zero
        // off-diagonal entries, forcing zeta = 1, hence xi = 0 and a diagonal of -1, not
        // sqrt(1 + 0) - 1 - 0 = 0.
        assert_eq!(jp[(row, row)], 0.0);
    }
}

// ---------------------------------------------------------------- MLCP known solutions

#[test]
fn mlcp_residual_is_exactly_zero_at_a_dyadic_solution() {
    let (p, p_b, r, u) = dyadic_system();
    let m = MlcpFb::new(&p, Directions::uniform(4, 0.0, 2).unwrap()).unwrap();
    let z = m.unknowns_from_impulse(&cat(&p_b, &r)).unwrap();
    // beta_: contact 0 = [1, 0, 0, 0.5, 0] (d_2 = -t1), contact 1 = [2, 0.25, 0, 0, 0.25];
    // sigma = [0.5 (the slip), 0 (sticks)].
    assert_eq!(
        z,
        vec![0.75, 1.0, 0.0, 0.0, 0.5, 0.0, 2.0, 0.25, 0.0, 0.0, 0.25, 0.5, 0.0]
    );
    assert_eq!(m.contact_velocity(&z), u);
    assert_eq!(m.bilateral_velocity(&z), vec![0.0]);
    assert_eq!(m.impulse(&z), cat(&p_b, &r));
    let phi = residual_of(&m, &z);
    assert!(phi.iter().all(|&v| v == 0.0), "{phi:?}");
    // Complementarity of the MLCP itself: z >= 0, f >= 0, z f = 0 on the complementarity rows.
    let f = m.affine(&z);
    for i in 1..m.size() {
        assert!(z[i] >= 0.0 && f[i] >= 0.0 && z[i] * f[i] == 0.0, "row {i}");
    }
    // The MNCP residual vanishes exactly at the same (Coulomb) solution.
    let n = ImplicitMncp::new(&p).unwrap();
    let x = n.unknowns_from_impulse(&cat(&p_b, &r)).unwrap();
    let phi = residual_of(&n, &x);
    assert!(phi.iter().all(|&v| v == 0.0), "{phi:?}");
    assert_eq!(n.impulse(&x), cat(&p_b, &r));
}

#[test]
fn mlcp_residual_vanishes_at_constructed_solutions() {
    use State::*;
    for seed in 0..10 {
        let n_f = 3 + (seed % 5) as usize;
        let dirs = Directions::uniform(n_f, 0.37 * seed as f64, 4).unwrap();
        let states = [
            Separate,
            Stick,
            SlideAlong(seed as usize % n_f),
            SlideAlong(0),
        ];
        let n_b = (seed % 3) as usize;
        let (p, p_b, r) = known_solution(n_b, &states, &dirs, seed);
        let m = MlcpFb::new(&p, dirs).unwrap();
        let z = m.unknowns_from_impulse(&cat(&p_b, &r)).unwrap();
        let phi = residual_of(&m, &z);
        assert!(phi.iter().all(|v| v.abs() < 1e-12), "seed {seed}: {phi:?}");
        assert!(max_abs_diff(&m.impulse(&z)[n_b..], &r) < 1e-13);
        // A sliding contact's sigma is its slip speed (eq. 16: sigma = |v_t|).
        let u = m.contact_velocity(&z);
        let slip = u[10].hypot(u[11]);
        assert!((m.slip_rates(&z)[3] - slip).abs() < 1e-12);
        // Exactly one direction carries mu F_n on a sliding contact (eq. 16's case split).
        let beta = m.pyramid(&z);
        let w = n_f + 1;
        let carried: Vec<&f64> = beta[3 * w + 1..4 * w]
            .iter()
            .filter(|&&v| v > 1e-12)
            .collect();
        assert_eq!(carried.len(), 1);
        assert!((carried[0] - contact_mu(&p)[3] * r[9]).abs() < 1e-12);
        // The MNCP residual vanishes at the same impulses (they are a Coulomb solution).
        let n = ImplicitMncp::new(&p).unwrap();
        let x = n.unknowns_from_impulse(&cat(&p_b, &r)).unwrap();
        assert!(residual_of(&n, &x).iter().all(|v| v.abs() < 1e-12));
    }
}

// ---------------------------------------------------------------- MNCP

#[test]
fn mncp_without_bilateral_rows_is_todorovs_residual() {
    for seed in 0..5 {
        let p = random_system(0, 3, 40 + seed);
        let ours = ImplicitMncp::new(&p).unwrap();
        let his = ImplicitNcp::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<f64> = (0..9).map(|_| rng.random_range(-2.0..2.0)).collect();
        // Same formula, summed in another order.
        assert!(max_abs_diff(&residual_of(&ours, &x), &residual_of(&his, &x)) < 1e-14);
        let (a, b) = (jacobian_of(&ours, &x), jacobian_of(&his, &x));
        for i in 0..9 {
            for j in 0..9 {
                assert!((a[(i, j)] - b[(i, j)]).abs() < 1e-15);
            }
        }
    }
}

#[test]
fn mncp_jacobian_matches_finite_differences_away_from_edges() {
    let mut checked = 0;
    for seed in 0..30 {
        let n_b = (seed % 3) as usize;
        let p = random_system(n_b, 3, 100 + seed);
        let mu = contact_mu(&p);
        let r = ImplicitMncp::new(&p).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(900 + seed);
        let x: Vec<f64> = (0..n_b + 9).map(|_| rng.random_range(-2.0..2.0)).collect();
        let near_edge = (0..3).any(|k| {
            let zk = todorov::block(&x[n_b..], k);
            zk[0].abs() < 1e-4 || (mu[k] * -zk[0] - zk[1].hypot(zk[2])).abs() < 1e-4
        });
        if near_edge {
            continue;
        }
        let j = jacobian_of(&r, &x);
        for i in 0..n_b + 9 {
            for c in 0..n_b + 9 {
                let d = fd(&r, &x, i, c, 1e-7);
                assert!(
                    (d - j[(i, c)]).abs() < 1e-6 * (1.0 + d.abs()),
                    "seed {seed} ({i},{c}): {d} vs {}",
                    j[(i, c)]
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn mncp_one_sided_jacobian_on_an_edge_matches_one_sided_differences() {
    let p = random_system(1, 2, 8);
    let r = ImplicitMncp::new(&p).unwrap();
    let mu0 = contact_mu(&p)[0];
    // Contact 0 on its cone edge (mu (-z_n) = |z_t|), contact 1 sliding.
    let x = vec![0.3, -1.0, 0.6 * mu0, 0.8 * mu0, -0.2, 3.0, 0.5];
    let mut kinks = Vec::new();
    r.kinks_on_segment(&x, &[0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0], &mut kinks);
    assert!(
        kinks.iter().any(|&t| (t - 0.5).abs() < 1e-12),
        "the plane z_n = 0 at t = 1/2: {kinks:?}"
    );
    for dir in [
        vec![0.1, 0.3, -0.2, 0.1, 0.0, 0.0, 0.0],
        vec![0.0, -0.3, 0.4, 0.4, 0.0, 0.0, 0.0],
    ] {
        let mut j = Mat::zeros(7, 7);
        r.jacobian_along(&x, &dir, j.as_mut());
        let h = 1e-7;
        let xp: Vec<f64> = x.iter().zip(&dir).map(|(a, d)| a + h * d).collect();
        let (f0, f1) = (residual_of(&r, &x), residual_of(&r, &xp));
        for i in 0..7 {
            let fdv = (f1[i] - f0[i]) / h;
            let jd: f64 = (0..7).map(|c| j[(i, c)] * dir[c]).sum();
            assert!(
                (fdv - jd).abs() < 1e-5 * (1.0 + fdv.abs()),
                "row {i}: {fdv} vs {jd}"
            );
        }
    }
}

/// Eq. 35 typed in the paper's normal-last order, entry by entry.
fn eq35(mu: f64, z: [f64; 3]) -> [[f64; 3]; 3] {
    let [zf, zo, zn] = z;
    let fnn = (-zn).max(0.0);
    let dfn_dzn = if zn < 0.0 { -1.0 } else { 0.0 };
    let t = zf.hypot(zo);
    let m_f = if t > 0.0 { mu * fnn / t } else { f64::INFINITY };
    let s = m_f.min(1.0);
    let t2 = t * t;
    if m_f >= 1.0 {
        [[-s, 0.0, 0.0], [0.0, -s, 0.0], [0.0, 0.0, dfn_dzn]]
    } else {
        [
            [-s * zo * zo / t2, s * zf * zo / t2, -mu * dfn_dzn * zf / t],
            [s * zf * zo / t2, -s * zf * zf / t2, -mu * dfn_dzn * zo / t],
            [0.0, 0.0, dfn_dzn],
        ]
    }
}

proptest! {
    /// Eq. 35 (normal last) is Todorov's dF/dz (normal first) after reordering, in every region.
    #[test]
    fn eq35_is_todorovs_block(mu in 0.05..2.0f64, zf in -3.0..3.0f64, zo in -3.0..3.0f64,
                              zn in -3.0..3.0f64) {
        prop_assume!(zn.abs() > 1e-9 && zf.hypot(zo) > 1e-9);
        let x = Vector3::new(zn, zf, zo);
        let ours = Region::of(mu, 0.0, x).df_dx(mu, 0.0, x);
        let paper = eq35(mu, [zf, zo, zn]);
        // Normal-first index k is normal-last index [2, 0, 1][k].
        let nl = |k: usize| [2, 0, 1][k];
        for a in 0..3 {
            for b in 0..3 {
                prop_assert!((ours[(a, b)] - paper[nl(a)][nl(b)]).abs() < 1e-12,
                    "({}, {}): {} vs {}", a, b, ours[(a, b)], paper[nl(a)][nl(b)]);
            }
        }
    }

    /// Complementarity by construction (eq. 13 from eq. 26-27): for every x, the encoded
    /// impulse and velocity satisfy Coulomb's law.
    #[test]
    fn mncp_maps_satisfy_coulomb_for_every_x(seed in 0u64..1000,
                                             xs in proptest::collection::vec(-3.0..3.0f64, 7)) {
        let p = random_system(1, 2, seed);
        let r = ImplicitMncp::new(&p).unwrap();
        let f = r.contact_impulse(&xs);
        let v = r.encoded_velocity(&xs);
        for i in 0..2 {
            let (fi, vi, mu) = (&f[3 * i..3 * i + 3], &v[3 * i..3 * i + 3], contact_mu(&p)[i]);
            let tol = 1e-12;
            prop_assert!(fi[0] >= 0.0 && vi[0] >= 0.0 && (fi[0] * vi[0]).abs() <= tol);
            prop_assert!(fi[1].hypot(fi[2]) <= mu * fi[0] + tol);
            prop_assert!(fi[1] * vi[1] + fi[2] * vi[2] <= tol);
            prop_assert!((fi[1] * vi[2] - fi[2] * vi[1]).abs() <= tol * 10.0);
            // Sliding (v_t != 0) puts the friction on the cone's boundary.
            if vi[1].hypot(vi[2]) > 1e-9 {
                prop_assert!((fi[1].hypot(fi[2]) - mu * fi[0]).abs() <= 1e-9);
            }
        }
    }

    /// The paper-order conversion round-trips and moves each normal last.
    #[test]
    fn mncp_paper_order_round_trip(xs in proptest::collection::vec(-3.0..3.0f64, 8)) {
        let p = random_system(2, 2, 1);
        let r = ImplicitMncp::new(&p).unwrap();
        let z = r.to_paper_order(&xs);
        prop_assert_eq!(&z[..2], &xs[..2]);
        prop_assert_eq!(&z[2..5], &[xs[3], xs[4], xs[2]]);
        prop_assert_eq!(r.from_paper_order(&z), xs);
    }
}

#[test]
fn mncp_residual_vanishes_at_a_coulomb_solution() {
    use State::*;
    for seed in 0..10u64 {
        let n_b = (seed % 3) as usize;
        let dirs = Directions::uniform(4, 0.0, 4).unwrap();
        let (p, p_b, r) = known_solution(n_b, &[Slide, Stick, Separate, Slide], &dirs, seed);
        let n = ImplicitMncp::new(&p).unwrap();
        let x = n.unknowns_from_impulse(&cat(&p_b, &r)).unwrap();
        assert!(residual_of(&n, &x).iter().all(|v| v.abs() < 1e-12));
        assert_eq!(n.bilateral_impulse(&x), &p_b[..]);
        assert!(max_abs_diff(&n.contact_impulse(&x), &r) < 1e-13);
        assert!(max_abs_diff(&n.encoded_velocity(&x), &n.contact_velocity(&x)) < 1e-12);
        assert_eq!(
            n.regions(&x),
            vec![Region::Slip, Region::Stick, Region::Break, Region::Slip]
        );
        // The eliminated problem certifies r with the shared natural-map metric.
        let (c, _) = eliminate(&p, n_b);
        assert!(natural_map_residual(&c, &r) < 1e-12);
        assert!(max_abs_diff(&impulse_for(&p, n_b, &r), &p_b) < 1e-10);
    }
}

#[test]
fn mncp_project_is_the_identity_and_mlcp_project_clamps_complementarity_variables() {
    let p = random_system(1, 1, 2);
    let n = ImplicitMncp::new(&p).unwrap();
    let mut x = vec![-1.0, -2.0, 3.0, -4.0];
    n.project(&mut x);
    assert_eq!(x, vec![-1.0, -2.0, 3.0, -4.0]);
    let m = MlcpFb::new(&p, Directions::uniform(3, 0.0, 1).unwrap()).unwrap();
    let mut z = vec![-1.0, -2.0, 3.0, -4.0, 5.0, -6.0];
    m.project(&mut z);
    assert_eq!(z, vec![-1.0, 0.0, 3.0, 0.0, 5.0, 0.0]);
}

// ---------------------------------------------------------------- example 2 in miniature

/// The paper's sphere on a plane, one step from rest: m = 1, radius 1, `I = 2/5`, so
/// `W = diag(1, 3.5, 3.5)` (normal first); `q = (-g h, v_x, 0)`, `g = 9.81`, `h = 1 ms`,
/// `v_x = 2`, `mu = 0.2`. The exact Coulomb step slides: `r_n = g h`, `r_t = (-mu r_n, 0)`.
fn sphere_step() -> LocalProblem {
    LocalProblem::new(
        dense(3, 3, &[1.0, 0.0, 0.0, 0.0, 3.5, 0.0, 0.0, 0.0, 3.5]),
        vec![-9.81e-3, 2.0, 0.0],
        vec![0.2],
    )
    .unwrap()
}

fn solve_with<R, S>(res: R, solver: S, x0: Vec<f64>, opts: &SolveOptions) -> Solution
where
    R: Residual,
    S: argmin::core::Solver<
        contactlab_core::drivers::LeastSquares<R>,
        contactlab_core::drivers::LsState,
    >,
{
    solve_least_squares(res, solver, x0, opts).expect("solver error")
}

#[test]
fn sliding_sphere_aligned_directions_give_coulomb_and_45_degrees_do_not() {
    let p = sphere_step();
    let rn = 9.81e-3;
    let exact = [rn, -0.2 * rn, 0.0];
    let opts = paper_options();
    // Example 1: four directions with one along -t1 (theta0 = 0, or aligned against q's slip).
    for dirs in [
        Directions::uniform(4, 0.0, 1).unwrap(),
        Directions::aligned_against(4, &p.q).unwrap(),
    ] {
        let m = MlcpFb::new(&p, dirs).unwrap();
        let x0 = vec![0.0; m.size()];
        let plm = solve_with(m.clone(), paper_plm(), x0.clone(), &opts);
        let rlm = solve_with(m.clone(), paper_rlm(), x0, &opts);
        for s in [&plm, &rlm] {
            assert_eq!(s.status, Status::Converged, "{:?}", s.status);
            assert!(s.merit < PAPER_PSI_TOL);
            let r = m.impulse(&s.x);
            assert!(max_abs_diff(&r, &exact) < 1e-14, "{r:?}");
            assert!(natural_map_residual(&p, &r) < 1e-14);
        }
    }
    // Example 2: the directions at 45 degrees to the motion. The friction lands mid-edge of the
    // inscribed square, |r_t| = mu r_n / sqrt 2, still along -t1 here (W is isotropic in the
    // tangent plane), with the two bracketing directions sharing it.
    let m45 = MlcpFb::new(&p, Directions::uniform(4, FRAC_PI_4, 1).unwrap()).unwrap();
    let x0 = vec![0.0; m45.size()];
    for s in [
        solve_with(m45.clone(), paper_plm(), x0.clone(), &opts),
        solve_with(m45.clone(), paper_rlm(), x0.clone(), &opts),
    ] {
        assert_eq!(s.status, Status::Converged);
        let r = m45.impulse(&s.x);
        assert!((r[0] - rn).abs() < 1e-14);
        assert!((r[1] + 0.2 * rn * FRAC_1_SQRT_2).abs() < 1e-14, "{r:?}");
        assert!(r[2].abs() < 1e-14);
        let beta = m45.pyramid(&s.x);
        assert!((beta[2] - 0.1 * rn).abs() < 1e-14 && (beta[3] - 0.1 * rn).abs() < 1e-14);
        // The shared metric sees the error: the step is not a Coulomb solution.
        assert!(natural_map_residual(&p, &r) > 1e-4);
    }
    // The MNCP has no directions and gets the exact step.
    let n = ImplicitMncp::new(&p).unwrap();
    for s in [
        solve_with(n.clone(), paper_plm(), vec![0.0; 3], &opts),
        solve_with(n.clone(), paper_rlm(), vec![0.0; 3], &opts),
    ] {
        assert_eq!(s.status, Status::Converged);
        assert!(max_abs_diff(&n.impulse(&s.x), &exact) < 1e-14);
    }
}

// ---------------------------------------------------------------- drivers

#[test]
fn paper_driver_helpers_have_the_papers_values_and_core_defaults_agree() {
    let lm = paper_rlm();
    let d = LevenbergMarquardt::default();
    for (ours, core) in [
        (lm.lambda0, d.lambda0),
        (lm.factor, d.factor),
        (lm.r_low, d.r_low),
        (lm.r_high, d.r_high),
        (lm.r_accept, d.r_accept),
        (lm.lambda_min, d.lambda_min),
    ] {
        assert_eq!(ours, core);
    }
    assert_eq!(
        (
            lm.lambda0,
            lm.factor,
            lm.r_low,
            lm.r_high,
            lm.r_accept,
            lm.lambda_min
        ),
        (1e-3, 20.0, 0.3, 0.8, 0.0, 1e-25)
    );
    assert_eq!(paper_plm().lambda, 1e-16);
    assert_eq!(ProjectedLevenbergMarquardt::default().lambda, 1e-16);
    let o = paper_options();
    assert!((0.5 * o.stop_tol * o.stop_tol - PAPER_PSI_TOL).abs() < 1e-45);
    // Core's default stops at |F| <= 1e-10, i.e. psi <= 5e-21: coarser than the paper.
    assert_eq!(SolveOptions::default().stop_tol, 1e-10);
}

/// Runs Gauss-Newton, RLM and PLM (paper parameters) on `res` from `x0`.
fn three_drivers<R: ProjectedResidual + Clone>(
    res: &R,
    x0: &[f64],
    opts: &SolveOptions,
) -> Vec<(&'static str, Solution)> {
    vec![
        (
            "gauss_newton",
            solve_with(res.clone(), GaussNewtonLs::default(), x0.to_vec(), opts),
        ),
        (
            "rlm",
            solve_with(res.clone(), paper_rlm(), x0.to_vec(), opts),
        ),
        (
            "plm",
            solve_with(res.clone(), paper_plm(), x0.to_vec(), opts),
        ),
    ]
}

#[test]
fn drivers_reach_known_mlcp_solutions() {
    use State::*;
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    };
    let cases: [(usize, &[State]); 4] = [
        (0, &[SlideAlong(2)]),
        (0, &[Stick, SlideAlong(1)]),
        (1, &[Separate, SlideAlong(3)]),
        (2, &[Stick, Stick, SlideAlong(0)]),
    ];
    for (case, (n_b, states)) in cases.iter().enumerate() {
        let dirs = Directions::uniform(4, 0.25, states.len()).unwrap();
        let (p, p_b, r) = known_solution(*n_b, states, &dirs, 60 + case as u64);
        let m = MlcpFb::new(&p, dirs).unwrap();
        let x0 = vec![0.0; m.size()];
        for (name, s) in three_drivers(&m, &x0, &opts) {
            assert_eq!(
                s.status,
                Status::Converged,
                "case {case} {name}: {:?}",
                s.status
            );
            let got = m.impulse(&s.x)[*n_b..].to_vec();
            assert!(
                max_abs_diff(&got, &r) < 1e-9,
                "case {case} {name}: {got:?} vs {r:?}"
            );
            assert!(max_abs_diff(m.bilateral_impulse(&s.x), &p_b) < 1e-9);
            if name == "plm" {
                // PLM keeps every iterate in X: the complementarity variables stay >= 0.
                assert!(s.x[*n_b..].iter().all(|&v| v >= 0.0));
            }
        }
    }
}

#[test]
fn drivers_reach_known_mncp_solutions() {
    use State::*;
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    };
    let cases: [(usize, &[State]); 4] = [
        (0, &[Slide]),
        (0, &[Stick, Slide]),
        (1, &[Separate, Slide]),
        (2, &[Stick, Slide, Stick]),
    ];
    for (case, (n_b, states)) in cases.iter().enumerate() {
        let d = Directions::uniform(4, 0.0, states.len()).unwrap();
        let (p, p_b, r) = known_solution(*n_b, states, &d, 80 + case as u64);
        let n = ImplicitMncp::new(&p).unwrap();
        let x0 = vec![0.0; n.num_unknowns()];
        for (name, s) in three_drivers(&n, &x0, &opts) {
            assert_eq!(
                s.status,
                Status::Converged,
                "case {case} {name}: {:?}",
                s.status
            );
            let got = n.contact_impulse(&s.x);
            assert!(
                max_abs_diff(&got, &r) < 1e-9,
                "case {case} {name}: {got:?} vs {r:?}"
            );
            assert!(max_abs_diff(n.bilateral_impulse(&s.x), &p_b) < 1e-9);
        }
    }
}

#[test]
fn dogleg_and_trust_region_run_both_formulations() {
    let p = sphere_step();
    let rn = 9.81e-3;
    let exact = [rn, -0.2 * rn, 0.0];
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-13,
        ..SolveOptions::default()
    };
    let m = MlcpFb::new(&p, Directions::uniform(4, 0.0, 1).unwrap()).unwrap();
    let n = ImplicitMncp::new(&p).unwrap();
    let zm = vec![0.0; m.size()];
    let results = [
        (
            "mlcp dogleg",
            m.impulse(&solve_with(m.clone(), Dogleg::default(), zm.clone(), &opts).x),
        ),
        (
            "mlcp steihaug",
            m.impulse(&solve_with(m.clone(), TrustRegionSteihaug::default(), zm, &opts).x),
        ),
        (
            "mncp dogleg",
            n.impulse(&solve_with(n.clone(), Dogleg::default(), vec![0.0; 3], &opts).x),
        ),
        (
            "mncp steihaug",
            n.impulse(
                &solve_with(
                    n.clone(),
                    TrustRegionSteihaug::default(),
                    vec![0.0; 3],
                    &opts,
                )
                .x,
            ),
        ),
    ];
    for (name, r) in results {
        assert!(max_abs_diff(&r, &exact) < 1e-12, "{name}: {r:?}");
    }
}

#[test]
fn bilateral_rows_give_the_solution_of_the_eliminated_problem() {
    // A two-contact problem with two bilateral rows, solved by PLM on both formulations; the
    // contact impulses solve the eliminated (Schur complement) problem and p_b closes u_b = 0.
    let p = random_system(2, 2, 17);
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    };
    let (c, _) = eliminate(&p, 2);
    let n = ImplicitMncp::new(&p).unwrap();
    let s = solve_with(n.clone(), paper_plm(), vec![0.0; 8], &opts);
    assert_eq!(s.status, Status::Converged);
    let r = n.contact_impulse(&s.x);
    assert!(natural_map_residual(&c, &r) < 1e-10);
    assert!(n.bilateral_velocity(&s.x).iter().all(|v| v.abs() < 1e-11));
    assert!(max_abs_diff(n.bilateral_impulse(&s.x), &impulse_for(&p, 2, &r)) < 1e-10);
    // MLCP with directions aligned against the eliminated problem's free slip: its solution
    // solves the MLCP of the eliminated problem too (same r, same residual zero).
    let dirs = Directions::aligned_against(6, &c.q).unwrap();
    let m = MlcpFb::new(&p, dirs.clone()).unwrap();
    let sm = solve_with(m.clone(), paper_plm(), vec![0.0; m.size()], &opts);
    assert_eq!(sm.status, Status::Converged);
    let rm = m.impulse(&sm.x)[2..].to_vec();
    let mc = MlcpFb::new(&c, dirs).unwrap();
    let zc = mc.unknowns_from_impulse(&rm).unwrap();
    assert!(residual_of(&mc, &zc).iter().all(|v| v.abs() < 1e-10));
    assert!(m.bilateral_velocity(&sm.x).iter().all(|v| v.abs() < 1e-11));
}

/// The paper's four schemes (MLCP-FB-RLM, MLCP-FB-PLM, MNCP-RLM, MNCP-PLM) with its parameters
/// and stopping rule on 24 random problems with known solutions (2-5 contacts, 0-2 bilateral
/// rows, sticking, sliding and separating contacts), from zero.
///
/// `psi < 1e-30` is at the rounding floor of these problems: some runs stop one step short of
/// it with core's stationarity test (`|J'F| <= grad_tol = 1e-14`, reported as
/// `local_minimum`) at `psi ~ 1e-30 .. 1e-27`, with the impulses already exact to 1e-12.
#[test]
fn paper_schemes_reach_known_solutions_to_rounding() {
    use State::*;
    let opts = paper_options();
    let (mut converged, mut runs) = (0, 0);
    for seed in 0..24u64 {
        let n_f = 4;
        let nc = 2 + (seed % 4) as usize;
        let states: Vec<State> = (0..nc)
            .map(|i| match (seed as usize + i) % 3 {
                0 => Stick,
                1 => SlideAlong(i % n_f),
                _ => Separate,
            })
            .collect();
        let n_b = (seed % 3) as usize;
        let dirs = Directions::uniform(n_f, 0.25, nc).unwrap();
        let (p, p_b, r) = known_solution(n_b, &states, &dirs, 300 + seed);
        let m = MlcpFb::new(&p, dirs).unwrap();
        let n = ImplicitMncp::new(&p).unwrap();
        let z0 = vec![0.0; m.size()];
        let x0 = vec![0.0; n.num_unknowns()];
        let runs_here = [
            (
                "MLCP-FB-RLM",
                solve_with(m.clone(), paper_rlm(), z0.clone(), &opts),
                true,
            ),
            (
                "MLCP-FB-PLM",
                solve_with(m.clone(), paper_plm(), z0.clone(), &opts),
                true,
            ),
            (
                "MNCP-RLM",
                solve_with(n.clone(), paper_rlm(), x0.clone(), &opts),
                false,
            ),
            (
                "MNCP-PLM",
                solve_with(n.clone(), paper_plm(), x0.clone(), &opts),
                false,
            ),
        ];
        for (name, s, is_mlcp) in runs_here {
            let (got, pb) = if is_mlcp {
                (
                    m.impulse(&s.x)[n_b..].to_vec(),
                    m.bilateral_impulse(&s.x).to_vec(),
                )
            } else {
                (n.contact_impulse(&s.x), n.bilateral_impulse(&s.x).to_vec())
            };
            assert!(
                matches!(s.status, Status::Converged | Status::LocalMinimum) && s.merit < 1e-26,
                "seed {seed} {name}: {:?} psi {:e}",
                s.status,
                s.merit
            );
            assert!(max_abs_diff(&got, &r) < 1e-12, "seed {seed} {name}");
            assert!(max_abs_diff(&pb, &p_b) < 1e-12, "seed {seed} {name}");
            runs += 1;
            if s.status == Status::Converged {
                assert!(s.merit < PAPER_PSI_TOL);
                converged += 1;
            }
        }
    }
    // Most runs meet the paper's own test.
    assert!(4 * converged >= 3 * runs, "{converged} of {runs}");
}
