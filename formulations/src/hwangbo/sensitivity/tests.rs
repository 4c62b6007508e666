use super::*;
use crate::fixtures::{
    assert_matches_differences, central, direction, global_of, max_abs, moved, problem_of,
    GlobalChange,
};
use crate::hwangbo::BisectionSor;
use crate::natural_map::sensitivity::generalized::{GeneralizedDerivative, GeneralizedSensitivity};
use crate::natural_map::sensitivity::LocalDirection;
use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::plugin::Driver;
use contactlab_core::{Constraints, GlobalProblem, Matrix, SolveOptions, Status};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Three Coulomb contacts, a limit, a friction loss, a frictionless contact of one row and one
/// of three (`mu = 0`) on a random SPD `W` (coupled normal and tangential rows: the two models
/// differ).
fn dissipation_mixed(seed: u64) -> LocalProblem {
    let blocks = vec![
        Constraint::coulomb(0.5),
        Constraint::coulomb(0.8),
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.3 },
        Constraint::coulomb(0.6),
        Constraint::Contact { mu: vec![] },
        Constraint::coulomb(0.0),
    ];
    problem_of(blocks, (-1.0, 0.5), seed)
}

/// A change of the three frictional contacts' `mu`.
fn mu_direction(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut d = vec![0.0; 7];
    for b in [0, 1, 4] {
        d[b] = 0.2 * rng.random_range(-1.0..1.0);
    }
    d
}

/// The bisection-SOR's answer from `start`, to `1e-13` on its own measure.
fn solve(p: &LocalProblem, start: &[f64]) -> Option<Vec<f64>> {
    let d = BisectionSor {
        local_tol: Some(1e-15),
        ..BisectionSor::default()
    };
    let opts = SolveOptions {
        stop_tol: 1e-13,
        ..SolveOptions::default()
    };
    let s = d.solve(p, start.to_vec(), &opts).ok()?;
    (s.status == Status::Converged).then_some(s.x)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Forward mode along `q`, `W` and the contacts' `mu` at once agrees with central differences
/// of the bisection-SOR's solve to `1e-6` relative, reverse mode is its adjoint to `1e-10`,
/// and slipping contacts with `W_nt != 0` (where maximum dissipation is not Coulomb) are among
/// those compared.
#[test]
fn the_dissipation_derivative_is_the_derivative_of_the_bisection_sors_solve() {
    let (mut compared, mut slipping) = (0, 0);
    for seed in 0..16 {
        let p = dissipation_mixed(seed);
        let n = p.q.len();
        let Some(r) = solve(&p, &vec![0.0; n]) else {
            continue;
        };
        let s = dissipation_sensitivity(&p, &r, 1e-12).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(700 + seed);
        let (dq, dw) = direction(n, &mut rng);
        let dmu = mu_direction(&mut rng);
        let Some(fd) = central(|t| moved(&p, (&dq, &dw, &dmu), t), |p| solve(p, &r)) else {
            continue;
        };
        if s.non_unique() {
            continue;
        }
        let what = format!("seed {seed}");
        assert_matches_differences(&s, (&dq, &dw, &dmu), &fd, 1e-6, &mut rng, &what);
        compared += 1;
        slipping += s
            .regimes(1e-6)
            .iter()
            .filter(|r| **r == Regime::Sliding)
            .count();
    }
    assert!(compared >= 6, "only {compared} seeds compared");
    assert!(slipping >= 3, "only {slipping} sliding blocks compared");
}

/// On a generalized problem the chain rule carries the slipping rows' direct reading of `W`
/// through `dM` and `dH`: forward mode agrees with central differences of `(r, v)` and reverse
/// mode is its adjoint.
#[test]
fn the_dissipation_derivative_through_the_generalized_chain_rule() {
    let blocks = || {
        vec![
            Constraint::coulomb(0.5),
            Constraint::coulomb(0.9),
            Constraint::Limit,
        ]
    };
    let mut compared = 0;
    for seed in 0..12 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = global_of(9, blocks(), &mut rng, |_, rng| rng.random_range(-0.5..0.2));
        let answer = |g: &GlobalProblem, start: &[f64]| {
            let p = g.to_local().ok()?;
            let r = solve(&p, start)?;
            let gen = GeneralizedProblem::from_global(g).ok()?;
            let s = dissipation_sensitivity(&p, &r, 1e-12).ok()?;
            Some((r, GeneralizedSensitivity::new(&gen, s).ok()?))
        };
        let Some((r, s)) = answer(&g, &vec![0.0; g.w.len()]) else {
            continue;
        };
        let (nv, m) = (g.f.len(), g.w.len());
        let d = GlobalChange::of(&g, &mut rng);
        let of = |g: &GlobalProblem| {
            let (r2, s2) = answer(g, &r)?;
            Some(r2.into_iter().chain(s2.velocity()).collect::<Vec<f64>>())
        };
        let Some(fd) = central(|t| d.moved(&g, t), of) else {
            continue;
        };
        if s.local().non_unique() {
            continue;
        }
        let t = s.jvp(&d.along()).unwrap();
        let ours: Vec<f64> = t.r.iter().chain(&t.v).copied().collect();
        let scale = max_abs(&fd).max(1e-3);
        let gap = ours
            .iter()
            .zip(&fd)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(gap <= 1e-6 * scale, "seed {seed}: {gap:e} of {scale:e}");
        let mut draw =
            |k: usize| -> Vec<f64> { (0..k).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (rb, ub, vb) = (draw(m), draw(m), draw(nv));
        let grad = s.vjp(&rb, &ub, &vb).unwrap();
        let left = dot(&rb, &t.r) + dot(&ub, &t.u) + dot(&vb, &t.v);
        let right = dot(&grad.f, &d.f)
            + dot(&grad.w, &d.w)
            + dot(&grad.m, &d.m)
            + dot(&grad.h, &d.h)
            + dot(&grad.mu, &d.mu);
        assert!(
            (left - right).abs() <= 1e-10 * left.abs().max(1.0),
            "seed {seed}: {left} {right}"
        );
        compared += 1;
    }
    assert!(compared >= 4, "only {compared} seeds compared");
}

/// One contact on `W = I` (no coupling: maximum dissipation is Coulomb's law): pushed in with a
/// small tangential push it sticks, with a large one it slides with `dr_t1/dmu = -r_n`, pulled
/// apart it separates. Its derivative is the natural map's along changes that keep `W_nt = 0`; an
/// answer that is not one, and a condim-4 contact, are refused.
#[test]
fn the_dissipation_regimes_and_refusals() {
    let one = |w: &[f64], q: [f64; 3], mu: f64| {
        LocalProblem::new(
            Matrix::from_row_major("W", 3, 3, w).unwrap(),
            q.to_vec(),
            vec![mu],
        )
        .unwrap()
    };
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let cases = [
        ([-1.0, 0.1, 0.0], [1.0, -0.1, 0.0], Regime::Sticking),
        ([-1.0, 2.0, 0.0], [1.0, -0.5, 0.0], Regime::Sliding),
        ([1.0, 0.3, 0.0], [0.0, 0.0, 0.0], Regime::Separating),
    ];
    for (q, r, want) in cases {
        let s = dissipation_sensitivity(&one(&eye, q, 0.5), &r, 1e-12).unwrap();
        assert_eq!(s.regimes(1e-6), vec![want], "{q:?}");
    }
    let p = one(&eye, [-1.0, 2.0, 0.0], 0.5);
    let s = dissipation_sensitivity(&p, &[1.0, -0.5, 0.0], 1e-12).unwrap();
    let mu = LocalDirection {
        mu: Some(&[1.0]),
        ..Default::default()
    };
    let (dr, _) = s.jvp(&mu).unwrap();
    assert!(
        (dr[1] + 1.0).abs() <= 1e-12 && dr[0].abs() <= 1e-12,
        "{dr:?}"
    );
    let coulomb = Sensitivity::new(&p, &[1.0, -0.5, 0.0], 1e-12).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (dq, mut dw) = direction(3, &mut rng);
    // A change that couples the normal and tangential rows separates the models at first order
    // (the direct term); one that keeps `W_nt = 0` does not.
    for (i, j) in [(0, 1), (1, 0), (0, 2), (2, 0)] {
        dw[i * 3 + j] = 0.0;
    }
    let d = LocalDirection {
        q: Some(&dq),
        w: Some(&dw),
        mu: Some(&[0.3]),
    };
    let (a, b) = (s.jvp(&d).unwrap().0, coulomb.jvp(&d).unwrap().0);
    assert!(
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-12),
        "{a:?} {b:?}"
    );
    let e = dissipation_sensitivity(&p, &[1.0, 0.0, 0.0], 1e-12).unwrap_err();
    assert!(e.to_string().contains("maximum-dissipation"), "{e}");
    let torsion = LocalProblem::with_constraints(
        Matrix::Dense(faer::Mat::identity(4, 4)),
        vec![-1.0, 0.0, 0.0, 0.0],
        Constraints::new(vec![Constraint::Contact {
            mu: vec![0.5, 0.5, 0.01],
        }])
        .unwrap(),
    )
    .unwrap();
    let e = dissipation_sensitivity(&torsion, &[1.0, 0.0, 0.0, 0.0], 1e-12).unwrap_err();
    assert!(e.to_string().contains("block 0"), "{e}");
}
