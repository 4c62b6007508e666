//! ADMM's unit tests: the closed-form answers of one contact, the power iteration and the
//! deadline, the spectral `rho`, the small and blocked factorizations (symmetric and not), the
//! ruler's residual to the last bit, complementarity by construction, options and statuses.

use super::*;
use crate::metrics::local_metrics;
use crate::problem::Matrix;

/// The unit vector along `v` (zero stays zero): used by the tests' analytic answers.
fn unit(v: nalgebra::Vector3<f64>) -> nalgebra::Vector3<f64> {
    let n = v.norm();
    if n > 0.0 {
        v / n
    } else {
        v
    }
}

fn one_contact(w: [f64; 9], q: [f64; 3], mu: f64) -> LocalProblem {
    LocalProblem::coulomb(
        Matrix::from_row_major("W", 3, 3, &w).unwrap(),
        q.to_vec(),
        &[mu],
    )
}

fn tight(max_iter: u64) -> SolveOptions {
    SolveOptions {
        stop_tol: 1e-12,
        max_iter,
        ..Default::default()
    }
}

#[test]
fn single_contact_sticking_matches_the_closed_form() {
    // W = diag(2, 1, 1), q = (-2, 0.1, -0.2), mu = 0.5: r = -W^{-1} q = (1, -0.1, 0.2),
    // |r_t| = 0.224 < 0.5: sticking, u = 0.
    let p = one_contact([2., 0., 0., 0., 1., 0., 0., 0., 1.], [-2.0, 0.1, -0.2], 0.5);
    let s = solve_admm(&p, &Admm::default(), None, &tight(500)).unwrap();
    assert_eq!(s.status, Status::Converged, "{s:?}");
    let want = [1.0, -0.1, 0.2];
    assert!(
        s.x.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-10),
        "{:?}",
        s.x
    );
    assert!(local_metrics(&p, &s.x).natural_map <= 1e-12);
}

#[test]
fn single_contact_sliding_matches_the_closed_form() {
    // W = diag(1, 2, 2), q = (-1, 3, 4), mu = 0.5: slides along -(3, 4)/5 with r_n = 1,
    // r_t = -0.5 (0.6, 0.8), u_t = (3, 4) + 2 r_t = (2.4, 3.2), u_n = 0.
    let p = one_contact([1., 0., 0., 0., 2., 0., 0., 0., 2.], [-1.0, 3.0, 4.0], 0.5);
    let s = solve_admm(&p, &Admm::default(), None, &tight(2000)).unwrap();
    assert_eq!(s.status, Status::Converged, "{s:?}");
    let d = unit(nalgebra::Vector3::new(0.0, 3.0, 4.0));
    let want = nalgebra::Vector3::new(1.0, 0.0, 0.0) - 0.5 * d;
    assert!((block(&s.x, 0) - want).amax() < 1e-10, "{:?}", s.x);
    // The answer sits on the cone's boundary, its velocity opposes the friction.
    let u = p.velocity(&s.x);
    assert!(u[0].abs() < 1e-10 && u[1] > 0.0 && u[2] > 0.0);
}

#[test]
fn a_separating_contact_gets_zero_impulse() {
    let p = one_contact(
        [1., 0.2, 0., 0.2, 1., 0., 0., 0., 1.],
        [0.5, -3.0, 1.0],
        0.8,
    );
    let s = solve_admm(&p, &Admm::default(), None, &tight(500)).unwrap();
    assert_eq!(s.status, Status::Converged);
    assert!(s.x.iter().all(|v| v.abs() < 1e-12), "{:?}", s.x);
}

#[test]
fn power_iteration_finds_the_extreme_eigenvalues() {
    // diag(0.1, 1, 3, 7) turned by a fixed orthogonal matrix (a Householder reflection).
    let n = 4;
    let v = [1.0, -2.0, 0.5, 1.5];
    let vv: f64 = v.iter().map(|x| x * x).sum();
    let h = Mat::from_fn(n, n, |i, j| {
        (if i == j { 1.0 } else { 0.0 }) - 2.0 * v[i] * v[j] / vv
    });
    let d = [0.1, 1.0, 3.0, 7.0];
    let a = Mat::from_fn(n, n, |i, j| {
        (0..n).map(|k| h[(i, k)] * d[k] * h[(j, k)]).sum()
    });
    let none = Deadline::none();
    let (l, m, spent) = extreme_eigenvalues(a.as_ref(), 500, true, &none).unwrap();
    assert!((l - 7.0).abs() < 1e-5, "{l}");
    assert!((m.unwrap() - 0.1).abs() < 1e-4, "{m:?}");
    assert!(spent <= 1000);
    // A singular matrix has m = 0; the smallest is not asked for with `false`.
    let s = Mat::from_fn(3, 3, |i, j| if i < 2 && j < 2 { 1.0 } else { 0.0 });
    let (l, m, _) = extreme_eigenvalues(s.as_ref(), 200, true, &none).unwrap();
    assert!((l - 2.0).abs() < 1e-6 && m.unwrap() < 1e-6, "{l} {m:?}");
    assert_eq!(
        extreme_eigenvalues(s.as_ref(), 5, false, &none).unwrap().1,
        None
    );
    // Below SMALL unknowns a passed deadline is not read: the products are cheaper.
    let passed = Deadline::after(Some(std::time::Duration::ZERO));
    assert!(extreme_eigenvalues(a.as_ref(), 500, true, &passed).is_some());
    // From SMALL up it stops the iteration before its first product.
    let big = Mat::from_fn(
        SMALL,
        SMALL,
        |i, j| if i == j { 1.0 + i as f64 } else { 0.0 },
    );
    assert_eq!(extreme_eigenvalues(big.as_ref(), 500, true, &passed), None);
}

#[test]
fn a_passed_deadline_ends_the_setup_and_every_refactorization_with_timeout() {
    // 12 contacts (36 unknowns): the factor goes by panels and reads the deadline.
    let p = chain(12);
    let ap = AdmmProblem::new(&p, None);
    let passed = Deadline::after(Some(std::time::Duration::ZERO));
    assert_eq!(
        ap.factor(0.7, None, &passed).err(),
        Some(NoFactor::Interrupted)
    );
    assert!(ap.factor(0.7, None, &Deadline::none()).is_ok());
    let opts = SolveOptions {
        time_limit: Some(std::time::Duration::ZERO),
        ..tight(5000)
    };
    let s = solve_admm(&p, &Admm::default(), None, &opts).unwrap();
    assert_eq!(s.status, Status::Timeout);
    assert_eq!(s.iterations, 0);
    // The answer is still the start projected on the cones.
    assert!(s.x.iter().all(|v| v.is_finite()));
}

#[test]
fn coupled_contacts_converge_and_rho_moves_by_the_spectral_factor() {
    let p = crate::drivers::pgs::tests::coupled_contacts();
    let s = solve_admm(&p, &Admm::default(), None, &tight(5000)).unwrap();
    assert_eq!(s.status, Status::Converged);
    let m = local_metrics(&p, &s.x);
    assert!(m.natural_map <= 1e-12 && m.cone_violation < 1e-15, "{m:?}");
    // Every change of rho in the trace is a factor kappa^0.05 (up or down), and each one
    // is a refactorization.
    let rhos: Vec<f64> = s
        .trace
        .rows
        .iter()
        .filter_map(|r| r.extra.get("rho").copied())
        .collect();
    let kappa = s.trace.rows[0].extra["kappa"];
    let f = kappa.powf(0.05);
    let mut changes = 0;
    for w in rhos.windows(2) {
        if w[0] != w[1] {
            changes += 1;
            let ratio = w[1] / w[0];
            assert!(
                (ratio - f).abs() < 1e-12 * f || (ratio - 1.0 / f).abs() < 1e-12,
                "{ratio}"
            );
        }
    }
    assert_eq!(s.counters["rho_updates"], changes);
    assert_eq!(s.counters["factorizations"], 1 + s.counters["rho_updates"]);
    // The constant rule factors once.
    let c = Admm {
        rho_update: RhoUpdate::Constant,
        ..Default::default()
    };
    let s = solve_admm(&p, &c, None, &tight(20000)).unwrap();
    assert_eq!(s.counters["factorizations"], 1);
    assert_eq!(s.status, Status::Converged);
}

/// A chain of `n` contacts coupled to their neighbours, symmetric positive definite.
fn chain(n: usize) -> LocalProblem {
    let m = 3 * n;
    let mut w = vec![0.0; m * m];
    for i in 0..m {
        w[i * m + i] = 2.0 + 0.1 * (i % 3) as f64;
        if i + 3 < m {
            w[i * m + i + 3] = 0.4;
            w[(i + 3) * m + i] = 0.4;
        }
    }
    let q = (0..m)
        .map(|i| {
            if i % 3 == 0 {
                -1.0
            } else {
                0.3 * ((i as f64) * 0.7).sin()
            }
        })
        .collect();
    LocalProblem::coulomb(
        Matrix::from_row_major("W", m, m, &w).unwrap(),
        q,
        &vec![0.5; n],
    )
}

#[test]
fn small_and_blocked_factorizations_both_solve() {
    // Ten contacts (30 unknowns) factor in the plain buffer, twelve (36) by faer: both
    // converge, and the plain factor solves W + c I exactly.
    let small = chain(10);
    assert!(small.q.len() < SMALL);
    let s = solve_admm(&small, &Admm::default(), None, &tight(5000)).unwrap();
    assert_eq!(s.status, Status::Converged);
    let m = local_metrics(&small, &s.x);
    assert!(m.natural_map <= 1e-12, "{m:?}");
    let big = chain(12);
    assert!(big.q.len() >= SMALL);
    let b = solve_admm(&big, &Admm::default(), None, &tight(5000)).unwrap();
    assert_eq!(b.status, Status::Converged);
    assert!(local_metrics(&big, &b.x).natural_map <= 1e-12);
    // The factor itself: L L' = W + c I to rounding on the small path.
    let p = AdmmProblem::new(&small, None);
    let n = small.q.len();
    let Ok(Factor::Small(l)) = p.factor(0.7, None, &Deadline::none()) else {
        panic!("a symmetric 30 x 30 W factors in the plain buffer");
    };
    let mut x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let b_rhs: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| p.w[(i, j)] * x[j]).sum::<f64>() + 0.7 * x[i])
        .collect();
    let mut solved = b_rhs.clone();
    Factor::Small(l).solve_in_place(&mut solved);
    for (a, e) in solved.iter().zip(&mut x) {
        assert!((a - *e).abs() < 1e-10 * e.abs(), "{a} against {e}");
    }
}

/// [`chain`] with a skew part of `1e-2` on the first off-diagonal (not symmetric).
fn skewed_chain(n: usize) -> LocalProblem {
    let base = chain(n);
    let m = 3 * n;
    let dense = base.dense_w();
    let mut w = vec![0.0; m * m];
    for i in 0..m {
        for j in 0..m {
            w[i * m + j] = dense[(i, j)];
        }
        if i + 1 < m {
            w[i * m + i + 1] += 0.01;
            w[(i + 1) * m + i] -= 0.01;
        }
    }
    LocalProblem {
        w: Matrix::from_row_major("W", m, m, &w).unwrap(),
        ..base
    }
}

#[test]
fn asymmetric_small_and_blocked_factorizations_both_solve() {
    // Ten contacts factor by the plain LU, twelve by faer's: both converge on W itself,
    // and the plain LU solves W + c I to rounding, its W y is the problem's.
    for n in [10, 12] {
        let p = skewed_chain(n);
        let ap = AdmmProblem::new(&p, None);
        assert!(!ap.symmetric);
        let s = solve_admm(&p, &Admm::default(), None, &tight(5000)).unwrap();
        assert_eq!(s.status, Status::Converged, "{n} contacts");
        assert!(local_metrics(&p, &s.x).natural_map <= 1e-12, "{n} contacts");
        let mut u = vec![0.0; 3 * n];
        ap.measure(&s.x, &mut [], &mut u);
        for (a, e) in u.iter().zip(p.velocity(&s.x)) {
            assert!((a - e).abs() <= 1e-12 * (1.0 + e.abs()), "{a} against {e}");
        }
    }
    let small = skewed_chain(10);
    let p = AdmmProblem::new(&small, None);
    let n = small.q.len();
    let Ok(f @ Factor::SmallLu(..)) = p.factor(0.7, None, &Deadline::none()) else {
        panic!("a non-symmetric 30 x 30 W factors by the plain LU");
    };
    let x: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
    let mut solved: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| p.w[(i, j)] * x[j]).sum::<f64>() + 0.7 * x[i])
        .collect();
    f.solve_in_place(&mut solved);
    for (a, e) in solved.iter().zip(&x) {
        assert!((a - e).abs() < 1e-10 * e.abs(), "{a} against {e}");
    }
}

#[test]
fn the_drivers_residual_is_the_rulers_to_the_last_bit() {
    // A solve stopped at `tol` must be judged converged by the shared ruler: both form
    // `W y + q` and the natural map in the same order (dense, non-symmetric, and larger
    // than the small path).
    for p in [chain(10), skewed_chain(10), chain(12)] {
        for max_iter in [3, 40] {
            let s = solve_admm(&p, &Admm::default(), None, &tight(max_iter)).unwrap();
            let ruler = local_metrics(&p, &s.x).natural_map;
            assert_eq!(
                s.merit.to_bits(),
                ruler.to_bits(),
                "{} against {ruler}",
                s.merit
            );
        }
    }
}

#[test]
fn without_a_trace_the_answer_and_counters_are_the_same() {
    let p = chain(4);
    let on = solve_admm(&p, &Admm::default(), None, &tight(5000)).unwrap();
    let opts = SolveOptions {
        trace: false,
        ..tight(5000)
    };
    let off = solve_admm(&p, &Admm::default(), None, &opts).unwrap();
    assert_eq!(on.x, off.x);
    assert_eq!(on.iterations, off.iterations);
    assert_eq!(on.counters, off.counters);
    assert_eq!(on.trace.len() as u64, on.iterations + 1);
    assert!(off.trace.is_empty());
}

#[test]
fn iterates_are_complementary_by_construction() {
    // Run a few iterations only and look at the solver's own y and z: y in K, z in K*,
    // y . z = 0 at every contact (Moreau's decomposition of step 3).
    let nc = 6;
    let n = 3 * nc;
    let w = Mat::from_fn(n, n, |i, j| {
        let d = if i == j {
            2.0 + 0.1 * (i % 3) as f64
        } else {
            0.0
        };
        d + 0.3 / (1.0 + (i as f64 - j as f64).abs())
    });
    let q: Vec<f64> = (0..n).map(|k| ((k as f64) * 1.7).sin()).collect();
    let p = LocalProblem::coulomb(
        Matrix::Dense(w),
        q,
        &(0..nc).map(|a| 0.2 + 0.1 * a as f64).collect::<Vec<f64>>(),
    );
    let ap = AdmmProblem::new(&p, None);
    let mut solver = AdmmSolver::new(Admm::default());
    let mut prob = Problem::new(ap);
    let (mut state, _) = solver
        .init(&mut prob, AdmmState::new().param(vec![0.0; n]))
        .unwrap();
    for _ in 0..7 {
        state = solver.next_iter(&mut prob, state).unwrap().0;
        let y = state.get_param().unwrap();
        let z = &solver.work.as_ref().unwrap().z;
        for a in 0..nc {
            let (ya, za) = (block(y, a), block(z, a));
            assert!(cone::distance(p.mu()[a], ya) < 1e-14);
            assert!((za - cone::project_dual(p.mu()[a], za)).norm() < 1e-12 * (1.0 + za.norm()));
            assert!(ya.dot(&za).abs() < 1e-12 * (1.0 + ya.norm() * za.norm()));
        }
    }
}

#[test]
fn asymmetric_w_is_factored_by_lu_and_still_solved() {
    // W with a 1e-3 skew part (FCLib's files are symmetric to about that).
    let w = [2.0, 0.1, 0.002, 0.098, 1.5, 0.0, -0.002, 0.0, 1.2];
    let p = one_contact(w, [-1.0, 0.05, 0.02], 0.6);
    let ap = AdmmProblem::new(&p, None);
    assert!(!ap.symmetric);
    let s = solve_admm(&p, &Admm::default(), None, &tight(2000)).unwrap();
    assert_eq!(s.status, Status::Converged);
    // Sticking: u = W r + q = 0 with W itself, not its symmetric part.
    assert!(p.velocity(&s.x).iter().all(|u| u.abs() < 1e-11));
}

#[test]
fn options_are_validated_with_their_names() {
    let p = one_contact([1., 0., 0., 0., 1., 0., 0., 0., 1.], [-1.0, 0.0, 0.0], 0.5);
    for (o, name) in [
        (
            Admm {
                eta: 0.0,
                ..Default::default()
            },
            "eta",
        ),
        (
            Admm {
                eta: f64::NAN,
                ..Default::default()
            },
            "eta",
        ),
        (
            Admm {
                rho: Some(-1.0),
                ..Default::default()
            },
            "rho",
        ),
        (
            Admm {
                rho_power: 2.0,
                ..Default::default()
            },
            "rho_power",
        ),
        (
            Admm {
                rho_power_factor: 0.0,
                ..Default::default()
            },
            "rho_power_factor",
        ),
        (
            Admm {
                ratio_primal_dual: 0.5,
                ..Default::default()
            },
            "ratio_primal_dual",
        ),
        (
            Admm {
                power_iterations: 0,
                ..Default::default()
            },
            "power_iterations",
        ),
    ] {
        let e = solve_admm(&p, &o, None, &tight(10))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("admm option {name} ")), "{e}");
    }
    assert!(Admm::default().check().is_ok());
    assert!(solve_admm(&p, &Admm::default(), Some(vec![0.0; 2]), &tight(10)).is_err());
    // Options deserialize by name; unknown ones are refused.
    let o: Admm =
        serde_json::from_str(r#"{"rho_update": "constant", "min_eigenvalue": "zero"}"#).unwrap();
    assert_eq!(
        (o.rho_update, o.min_eigenvalue),
        (RhoUpdate::Constant, MinEigenvalue::Zero)
    );
    assert!(serde_json::from_str::<Admm>(r#"{"tau": 0.5}"#).is_err());
}

#[test]
fn budgets_and_failures_have_their_status() {
    let p = one_contact([1., 0., 0., 0., 2., 0., 0., 0., 2.], [-1.0, 3.0, 4.0], 0.5);
    let s = solve_admm(
        &p,
        &Admm::default(),
        None,
        &SolveOptions {
            stop_tol: 1e-300,
            max_iter: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(s.status, Status::MaxIterations);
    assert_eq!(s.iterations, 3);
    let s = solve_admm(
        &p,
        &Admm::default(),
        None,
        &SolveOptions {
            stop_tol: 1e-300,
            max_iter: 1_000_000,
            time_limit: Some(std::time::Duration::from_millis(20)),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        matches!(s.status, Status::Timeout | Status::Stagnated),
        "{:?}",
        s.status
    );
    // An indefinite W has no Cholesky factor once rho + eta is below its negative eigenvalue.
    let bad = one_contact([-1., 0., 0., 0., 1., 0., 0., 0., 1.], [-1.0, 0.0, 0.0], 0.5);
    let o = Admm {
        rho: Some(0.5),
        ..Default::default()
    };
    let s = solve_admm(&bad, &o, None, &tight(10)).unwrap();
    assert_eq!(s.status, Status::SingularSystem);
    // A non-finite start is reported as such.
    let s = solve_admm(
        &p,
        &Admm::default(),
        Some(vec![f64::NAN, 0.0, 0.0]),
        &tight(10),
    )
    .unwrap();
    assert_eq!(s.status, Status::NotFinite);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// On random SPD problems of two contacts, the answer lies in the cone, whatever the
    /// status, and the solver converges.
    #[test]
    fn answers_are_in_the_cone(
        seed in proptest::collection::vec(-1.0..1.0f64, 36 + 6 + 2),
    ) {
        let n = 6;
        let b = Mat::from_fn(n, n, |i, j| seed[i * n + j]);
        let w = Mat::from_fn(n, n, |i, j| {
            (0..n).map(|k| b[(i, k)] * b[(j, k)]).sum::<f64>() + if i == j { 0.05 } else { 0.0 }
        });
        let p = LocalProblem::coulomb(Matrix::Dense(w), seed[36..42].to_vec(), &[0.1 + seed[42].abs(), 0.1 + seed[43].abs()]);
        let s = solve_admm(&p, &Admm::default(), None, &SolveOptions { stop_tol: 1e-9, max_iter: 20000, ..Default::default() }).unwrap();
        for a in 0..2 {
            proptest::prop_assert!(cone::distance(p.mu()[a], block(&s.x, a)) <= 1e-14);
        }
        proptest::prop_assert_eq!(&s.status, &Status::Converged);
    }
}

/// Adroit's hand before it touches the ball (`data/problems/kinds/adroit_grasp_step.json`:
/// friction loss on every joint and seven limits, the diagonal of `W` from 0.1 to 919): at the
/// paper's defaults, in the problem's own units, ADMM ends 2 000 iterations far from the
/// tolerance; with every block equilibrated it converges within 200, and the ruler, in the
/// problem's own coordinates, accepts the answer.
#[test]
fn equilibrated_blocks_take_admm_through_a_badly_scaled_hand() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/problems/kinds/adroit_grasp_step.json");
    let p = crate::io::read_local(&path).unwrap();
    let opts = |max_iter| SolveOptions {
        stop_tol: 1e-8,
        max_iter,
        ..Default::default()
    };
    let plain = solve_admm(&p, &Admm::default(), None, &opts(2_000)).unwrap();
    assert_eq!(plain.status, Status::MaxIterations);
    assert!(plain.merit > 1e-4, "{}", plain.merit);
    let equilibrated = Admm {
        equilibrate: true,
        ..Admm::default()
    };
    let s = solve_admm(&p, &equilibrated, None, &opts(200)).unwrap();
    assert_eq!(s.status, Status::Converged, "{}", s.merit);
    assert!(local_metrics(&p, &s.x).natural_map <= 1e-8);
}
