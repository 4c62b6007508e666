use super::*;
use crate::fixtures::GlobalChange;
use crate::natural_map::NaturalMap;
use contactlab_core::drivers::{solve_least_squares, GaussNewtonLs};
use contactlab_core::{Constraint, GlobalProblem, SolveOptions, Status};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Two Coulomb contacts, a condim-4 contact and a limit (11 rows) on 14 velocities: `M`
/// symmetric positive definite, `H` dense, so `W = H' M^-1 H` is regular.
fn problem(seed: u64) -> GlobalProblem {
    let blocks = vec![
        Constraint::coulomb(0.5),
        Constraint::coulomb(0.9),
        Constraint::Contact {
            mu: vec![0.8, 0.6, 0.03],
        },
        Constraint::Limit,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    crate::fixtures::global_of(14, blocks, &mut rng, |_, rng| rng.random_range(-0.5..0.2))
}

/// The natural map's answer `(r, v)` by Gauss-Newton from `start`, to `1e-13` on the ruler.
fn solve(g: &GlobalProblem, start: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let p = g.to_local().ok()?;
    let opts = SolveOptions {
        max_iter: 200,
        stop_tol: 1e-13,
        ..SolveOptions::default()
    };
    let s = solve_least_squares(
        NaturalMap::new(&p),
        GaussNewtonLs::default(),
        start.to_vec(),
        &opts,
    )
    .ok()?;
    if s.status != Status::Converged {
        return None;
    }
    let gen = GeneralizedProblem::from_global(g).ok()?;
    let sens = GeneralizedSensitivity::new(&gen, Sensitivity::new(&p, &s.x, 1e-12).ok()?).ok()?;
    Some((s.x, sens.velocity()))
}

/// Central differences of `(r, v)` along `d`.
fn central(g: &GlobalProblem, r: &[f64], d: &GlobalChange, h: f64) -> Option<Vec<f64>> {
    let (rp, vp) = solve(&d.moved(g, h), r)?;
    let (rm, vm) = solve(&d.moved(g, -h), r)?;
    let plus = rp.iter().chain(&vp);
    Some(
        plus.zip(rm.iter().chain(&vm))
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect(),
    )
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn factored(g: &GlobalProblem) -> Option<(Vec<f64>, GeneralizedSensitivity)> {
    let (r, _) = solve(g, &vec![0.0; g.w.len()])?;
    let p = g.to_local().unwrap();
    let gen = GeneralizedProblem::from_global(g).unwrap();
    let s = GeneralizedSensitivity::new(&gen, Sensitivity::new(&p, &r, 1e-12).unwrap()).unwrap();
    Some((r, s))
}

/// Forward mode along `f`, `w`, `M`, `H` and `mu` at once agrees with central differences of
/// the whole solve (step `1e-6`, `M` perturbed symmetrically) to `1e-7` relative, in `r` and
/// `v`; seeds whose differences at `1e-6` and `1e-7` disagree (a contact within a step of a
/// regime boundary) are skipped.
#[test]
fn forward_mode_matches_central_differences_of_the_generalized_solve() {
    let mut compared = 0;
    for seed in 0..12 {
        let g = problem(seed);
        let Some((r, s)) = factored(&g) else {
            continue;
        };
        assert!(!s.local().non_unique(), "seed {seed}");
        let d = GlobalChange::of(&g, &mut ChaCha8Rng::seed_from_u64(300 + seed));
        let t = s.jvp(&d.along()).unwrap();
        let got: Vec<f64> = t.r.iter().chain(&t.v).copied().collect();
        let (Some(fd), Some(fine)) = (central(&g, &r, &d, 1e-6), central(&g, &r, &d, 1e-7)) else {
            continue;
        };
        let scale = max_abs(&fd).max(1e-3);
        let gap = |a: &[f64], b: &[f64]| {
            max_abs(&a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<_>>())
        };
        if gap(&fd, &fine) > 1e-4 * scale {
            continue;
        }
        assert!(
            gap(&got, &fd) <= 1e-7 * scale,
            "seed {seed}: {got:?} against {fd:?}"
        );
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} seeds compared");
}

/// `<r̄, dr> + <ū, du> + <v̄, dv> = <f̄, df> + <w̄, dw> + <M̄, dM> + <H̄, dH> + <mū, dmu>`.
#[test]
fn reverse_mode_is_the_adjoint_of_forward_mode_on_generalized_data() {
    for seed in 0..6 {
        let g = problem(seed);
        let Some((_, s)) = factored(&g) else {
            continue;
        };
        let mut rng = ChaCha8Rng::seed_from_u64(400 + seed);
        let d = GlobalChange::of(&g, &mut rng);
        let (nv, m) = (g.f.len(), g.w.len());
        let mut cot =
            |n: usize| -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (rb, ub, vb) = (cot(m), cot(m), cot(nv));
        let t = s.jvp(&d.along()).unwrap();
        let gr = s.vjp(&rb, &ub, &vb).unwrap();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let left = dot(&rb, &t.r) + dot(&ub, &t.u) + dot(&vb, &t.v);
        let right = dot(&gr.f, &d.f)
            + dot(&gr.w, &d.w)
            + dot(&gr.m, &d.m)
            + dot(&gr.h, &d.h)
            + dot(&gr.mu, &d.mu);
        assert!(
            (left - right).abs() <= 1e-10 * left.abs().max(1.0),
            "seed {seed}: {left} {right}"
        );
    }
}

/// Directions and cotangents of the wrong size name the field and what it should match.
#[test]
fn wrong_sizes_are_refused_with_the_field() {
    let g = problem(0);
    let (_, s) = factored(&g).unwrap();
    let err = s
        .jvp(&GeneralizedDirection {
            h: Some(&[0.0; 3]),
            ..GeneralizedDirection::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("`dH` has 3 entries"), "{err}");
    let err = s.vjp(&[0.0; 11], &[0.0; 11], &[0.0; 2]).unwrap_err();
    assert!(
        err.to_string()
            .contains("`v_bar` has 2 entries, the problem 14 velocities"),
        "{err}"
    );
}
