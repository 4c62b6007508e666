use super::*;
use crate::fixtures::{direction, mixed, mixed_mu_direction, moved, solved_mixed};
use contactlab_core::drivers::{solve_least_squares, GaussNewtonLs, LevenbergMarquardt};
use contactlab_core::{Constraint, Matrix, SolveOptions, Status};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The natural map's answer to `p` from `start` by Gauss-Newton, to `1e-13` on the ruler.
fn solve(p: &LocalProblem, start: &[f64]) -> Option<Vec<f64>> {
    let opts = SolveOptions {
        max_iter: 200,
        stop_tol: 1e-13,
        ..SolveOptions::default()
    };
    let s = solve_least_squares(
        NaturalMap::new(p),
        GaussNewtonLs::default(),
        start.to_vec(),
        &opts,
    )
    .ok()?;
    (s.status == Status::Converged).then_some(s.x)
}

/// Central differences of the answer along `(dq, dW, dmu)` with step `h`, re-solved from `r`.
fn central(p: &LocalProblem, r: &[f64], d: (&[f64], &[f64], &[f64]), h: f64) -> Option<Vec<f64>> {
    let plus = solve(&moved(p, d, h), r)?;
    let minus = solve(&moved(p, d, -h), r)?;
    Some(
        plus.iter()
            .zip(&minus)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect(),
    )
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn gap(a: &[f64], b: &[f64]) -> f64 {
    max_abs(&a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<_>>())
}

/// At unique answers away from regime boundaries, forward mode (along `q`, `W` and `mu` at
/// once) is the derivative of the solve: it agrees with central differences (step `1e-6`) to
/// `1e-7` relative (measured: within
/// 5e-10 on every seed). A seed whose differences at `1e-6` and `1e-7` disagree has a contact
/// within a step of a regime boundary (a kink of the answer) and is skipped.
#[test]
fn forward_mode_matches_central_differences_of_the_solve() {
    let mut compared = 0;
    for (seed, p, n, r) in solved_mixed(0..16, solve) {
        let s = Sensitivity::new(&p, &r, 1e-12).unwrap();
        assert!(!s.non_unique(), "seed {seed}: W is positive definite");
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let (dq, dw) = direction(n, &mut rng);
        let dmu = mixed_mu_direction(&mut rng);
        let (dr, _) = s
            .jvp(&LocalDirection {
                q: Some(&dq),
                w: Some(&dw),
                mu: Some(&dmu),
            })
            .unwrap();
        let d = (&dq[..], &dw[..], &dmu[..]);
        let (Some(fd), Some(fine)) = (central(&p, &r, d, 1e-6), central(&p, &r, d, 1e-7)) else {
            continue;
        };
        let scale = max_abs(&fd).max(1e-3);
        if gap(&fd, &fine) > 1e-4 * scale {
            continue;
        }
        assert!(
            gap(&dr, &fd) <= 1e-7 * scale,
            "seed {seed}: {dr:?} against {fd:?}"
        );
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} seeds compared");
}

/// `<r̄, dr> + <ū, du> = <q̄, dq> + <W̄, dW> + <mū, dmu>` to rounding, also where `J` is
/// singular, and where `W` is asymmetric in its last digits as FCLib's files can be (odd seeds:
/// `1e-4` relative, below the problems' check at `1e-2`; the adjoint takes `W'`).
#[test]
fn reverse_mode_is_the_adjoint_of_forward_mode() {
    for seed in 0..8 {
        let p = mixed(seed);
        let n = p.q.len();
        let p = if seed % 2 == 1 {
            let mut rng = ChaCha8Rng::seed_from_u64(900 + seed);
            let a: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1e-4..1e-4)).collect();
            let skew: Vec<f64> = (0..n * n).map(|k| a[k] - a[(k % n) * n + k / n]).collect();
            moved(&p, (&vec![0.0; n], &skew, &[0.0; 5]), 1.0)
        } else {
            p
        };
        let Some(r) = solve(&p, &vec![0.0; n]) else {
            continue;
        };
        let s = Sensitivity::new(&p, &r, 1e-12).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(200 + seed);
        let (dq, dw) = direction(n, &mut rng);
        let dmu = mixed_mu_direction(&mut rng);
        let (r_bar, _) = direction(n, &mut rng);
        let (u_bar, _) = direction(n, &mut rng);
        let (dr, du) = s
            .jvp(&LocalDirection {
                q: Some(&dq),
                w: Some(&dw),
                mu: Some(&dmu),
            })
            .unwrap();
        let g = s.vjp(&r_bar, &u_bar).unwrap();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let left = dot(&r_bar, &dr) + dot(&u_bar, &du);
        let right = dot(&g.q, &dq) + dot(&g.w, &dw) + dot(&g.mu, &dmu);
        assert!(
            (left - right).abs() <= 1e-10 * left.abs().max(1.0),
            "seed {seed}: {left} {right}"
        );
    }
}

/// Two coincident sticking contacts (`W = [A A; A A]`): their impulses can be traded between
/// them, `J` has rank three of six, and the answer is flagged; the derivative is the
/// minimum-norm one, which splits a change of `q` evenly.
#[test]
fn non_unique_impulses_are_flagged() {
    let a = [1.0, 0.2, 0.0, 0.2, 1.5, 0.1, 0.0, 0.1, 2.0];
    let w: Vec<f64> = (0..36)
        .map(|k| a[3 * ((k / 6) % 3) + (k % 6) % 3])
        .collect();
    let q = vec![-1.0, 0.05, 0.02, -1.0, 0.05, 0.02];
    let p = LocalProblem::coulomb(
        Matrix::from_row_major("W", 6, 6, &w).unwrap(),
        q,
        &[1.0, 1.0],
    );
    let opts = SolveOptions {
        max_iter: 500,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    };
    let x = solve_least_squares(
        NaturalMap::new(&p),
        LevenbergMarquardt::default(),
        vec![0.0; 6],
        &opts,
    )
    .unwrap();
    assert_eq!(x.status, Status::Converged);
    let s = Sensitivity::new(&p, &x.x, 1e-10).unwrap();
    assert!(s.non_unique());
    assert_eq!(s.rank(), 3);
    let dq = [-1.0, 0.0, 0.0, -1.0, 0.0, 0.0];
    let (dr, du) = s
        .jvp(&LocalDirection {
            q: Some(&dq),
            ..LocalDirection::default()
        })
        .unwrap();
    assert!((dr[0] - dr[3]).abs() <= 1e-9, "{dr:?}");
    // Both stick: the velocity does not move.
    assert!(max_abs(&du) <= 1e-9, "{du:?}");
}

/// A point that does not answer the problem, or directions of the wrong size, are refused with
/// what is wrong.
#[test]
fn bad_requests_are_refused_with_the_reason() {
    let p = mixed(0);
    let n = p.q.len();
    let err = Sensitivity::new(&p, &vec![0.0; n], 1e-8).unwrap_err();
    assert!(err.to_string().contains("converged solve"), "{err}");
    assert!(Sensitivity::new(&p, &[0.0], 1e-8).is_err());
    let r = solve(&p, &vec![0.0; n]).unwrap();
    let s = Sensitivity::new(&p, &r, 1e-12).unwrap();
    let along = |q: Option<&[f64]>, w: Option<&[f64]>, mu: Option<&[f64]>| {
        s.jvp(&LocalDirection { q, w, mu }).unwrap_err().to_string()
    };
    let err = along(Some(&[1.0]), None, None);
    assert!(err.contains("`dq` has 1 entries"), "{err}");
    assert!(along(None, Some(&[0.0; 3]), None).contains("`dW`"));
    assert!(along(None, None, Some(&[0.0; 2])).contains("5 constraint blocks"));
    // Block 3 is a limit: it has no friction coefficient to move.
    let err = along(None, None, Some(&[0.0, 0.0, 0.0, 1.0, 0.0]));
    assert!(err.contains("block 3 (limit) has no friction"), "{err}");
    assert!(s.vjp(&vec![0.0; n], &[0.0]).is_err());
}

/// Decoupled blocks (`W = I`) at answers known in closed form, one per regime of each kind, and
/// the kinks: a contact at rest with no load (`r = 0`, `u = 0`), friction exactly on the cone
/// at zero slip, a limit touching with no force, a friction loss at its bound at rest.
#[test]
fn regimes_are_read_from_each_block_and_kinks_are_flagged() {
    use Regime::*;
    let blocks = [
        (
            Constraint::coulomb(0.5),
            vec![-1.0, 0.1, 0.0],
            vec![1.0, -0.1, 0.0],
            Sticking,
        ),
        (
            Constraint::coulomb(0.5),
            vec![-1.0, 3.0, 0.0],
            vec![1.0, -0.5, 0.0],
            Sliding,
        ),
        (
            Constraint::coulomb(0.5),
            vec![1.0, 0.0, 0.0],
            vec![0.0; 3],
            Separating,
        ),
        (
            Constraint::coulomb(0.5),
            vec![0.0; 3],
            vec![0.0; 3],
            Degenerate,
        ),
        (
            Constraint::coulomb(0.5),
            vec![-1.0, 0.5, 0.0],
            vec![1.0, -0.5, 0.0],
            Degenerate,
        ),
        (
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.1],
            },
            vec![-1.0, 3.0, 0.0, 0.0],
            vec![1.0, -0.8, 0.0, 0.0],
            Sliding,
        ),
        (Constraint::Limit, vec![-1.0], vec![1.0], Sticking),
        (Constraint::Limit, vec![1.0], vec![0.0], Separating),
        (Constraint::Limit, vec![0.0], vec![0.0], Degenerate),
        (
            Constraint::FrictionLoss { f_max: 0.3 },
            vec![0.1],
            vec![-0.1],
            Sticking,
        ),
        (
            Constraint::FrictionLoss { f_max: 0.3 },
            vec![1.0],
            vec![-0.3],
            Sliding,
        ),
        (
            Constraint::FrictionLoss { f_max: 0.3 },
            vec![0.3],
            vec![-0.3],
            Degenerate,
        ),
        (
            Constraint::Equality { rows: 2 },
            vec![0.5, -0.2],
            vec![-0.5, 0.2],
            Sticking,
        ),
    ];
    let q: Vec<f64> = blocks.iter().flat_map(|b| b.1.clone()).collect();
    let r: Vec<f64> = blocks.iter().flat_map(|b| b.2.clone()).collect();
    let n = q.len();
    let eye: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { 1.0 } else { 0.0 })
        .collect();
    let constraints =
        contactlab_core::Constraints::new(blocks.iter().map(|b| b.0.clone()).collect()).unwrap();
    let p = LocalProblem::with_constraints(
        Matrix::from_row_major("W", n, n, &eye).unwrap(),
        q,
        constraints,
    )
    .unwrap();
    let s = Sensitivity::new(&p, &r, 1e-14).unwrap();
    let want: Vec<Regime> = blocks.iter().map(|b| b.3).collect();
    assert_eq!(s.regimes(1e-9), want);
    // A margin wider than the sticking contact's distance to its cone's edge (0.8 in `z`)
    // calls it degenerate too.
    assert_eq!(s.regimes(0.9)[0], Degenerate);
    assert_eq!(Sliding.name(), "sliding");
}

/// A Coulomb contact sliding on `W = I` (`q = (-1, 3, 0)`, `mu = 0.5`: `r = (1, -mu, 0)`,
/// `u = (0, 3 - mu, 0)`): a change of `mu` moves the friction impulse and the slip by `-1`
/// per unit, the normal not at all; reverse mode gives the same number.
#[test]
fn a_sliding_contacts_friction_follows_its_coefficient() {
    let eye: Vec<f64> = (0..9).map(|k| if k % 4 == 0 { 1.0 } else { 0.0 }).collect();
    let p = LocalProblem::coulomb(
        Matrix::from_row_major("W", 3, 3, &eye).unwrap(),
        vec![-1.0, 3.0, 0.0],
        &[0.5],
    );
    let s = Sensitivity::new(&p, &[1.0, -0.5, 0.0], 1e-14).unwrap();
    assert_eq!(s.regimes(1e-9), vec![Regime::Sliding]);
    let (dr, du) = s
        .jvp(&LocalDirection {
            mu: Some(&[1.0]),
            ..LocalDirection::default()
        })
        .unwrap();
    for (got, want) in dr.iter().chain(&du).zip([0.0, -1.0, 0.0, 0.0, -1.0, 0.0]) {
        assert!((got - want).abs() < 1e-12, "{dr:?} {du:?}");
    }
    let g = s.vjp(&[0.0, 1.0, 0.0], &[0.0; 3]).unwrap();
    assert!((g.mu[0] + 1.0).abs() < 1e-12, "{:?}", g.mu);
}
