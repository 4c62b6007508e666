//! Tests of Hwangbo et al.'s single-contact methods against the independent reference, and of
//! the sweep drivers against PGS. Seeded (ChaCha8), so every run draws the same problems.

use crate::fixtures::{every_kind_file, problem_of as kinds_problem};
use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
use contactlab_core::drivers::sweep::{
    contact_violation, solve_sweep, BlockSweep, ContactMode, FrictionModel, LocalError, Relaxation,
    StopRule,
};
use contactlab_core::metrics::local_metrics;
use contactlab_core::plugin::{Driver, DriverPlugin};
use contactlab_core::Constraints;
use contactlab_core::{LocalProblem, Matrix, SolveOptions, Status};
use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

/// A random rotation (uniform over unit quaternions up to the normalisation's bias; any
/// spread of orientations serves here).
fn rotation(rng: &mut ChaCha8Rng) -> Matrix3<f64> {
    let q = Quaternion::new(
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
        rng.random_range(-1.0..1.0),
    );
    UnitQuaternion::from_quaternion(q)
        .to_rotation_matrix()
        .into_inner()
}

fn log_uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    10f64.powf(rng.random_range(lo.log10()..hi.log10()))
}

/// The families of single-contact blocks the methods are checked on.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    /// Eigenvalues in [0.1, 10], any orientation.
    General,
    /// Eigenvalues 1, 1e-3, 1e-6 (times a scale): condition number 1e6.
    NearDegenerate,
    /// Tangential directions scaled by 1e-2..1e2 each, on top of a mildly conditioned block:
    /// strongly anisotropic friction response and strong normal-tangent coupling.
    Anisotropic,
}

fn block(rng: &mut ChaCha8Rng, family: Family) -> Matrix3<f64> {
    let r = rotation(rng);
    let eig = match family {
        Family::General => Vector3::from_fn(|_, _| log_uniform(rng, 0.1, 10.0)),
        Family::NearDegenerate => {
            let s = log_uniform(rng, 0.1, 10.0);
            Vector3::new(s, 1e-3 * s, 1e-6 * s)
        }
        Family::Anisotropic => Vector3::from_fn(|_, _| log_uniform(rng, 0.01, 1.0)),
    };
    let w = r * Matrix3::from_diagonal(&eig) * r.transpose();
    let w = if family == Family::Anisotropic {
        let d = Matrix3::from_diagonal(&Vector3::new(
            1.0,
            log_uniform(rng, 1e-2, 1e2),
            log_uniform(rng, 1e-2, 1e2),
        ));
        d * w * d
    } else {
        w
    };
    0.5 * (w + w.transpose())
}

/// A closing contact's free velocity.
fn free_velocity(rng: &mut ChaCha8Rng) -> Vector3<f64> {
    Vector3::new(
        -log_uniform(rng, 1e-2, 1.0),
        rng.random_range(-2.0..2.0),
        rng.random_range(-2.0..2.0),
    )
}

/// `n` slipping contacts of a family.
fn slipping_cases(seed: u64, family: Family, n: usize) -> Vec<SlipConic> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let w = block(&mut rng, family);
        let c = free_velocity(&mut rng);
        let mu = log_uniform(&mut rng, 0.05, 2.0);
        if let Case::Slipping(k) = classify(&w, &c, mu).unwrap() {
            out.push(k);
        }
    }
    out
}

/// Largest relative errors of `method` against the reference over `cases`, in the impulse
/// and in the velocity (`|W (lambda - lambda_ref)| / |W lambda_ref|`, which is what a nearly
/// singular block determines), after checking that each answer is on the cone with zero normal
/// velocity and no better than the reference's energy (up to rounding).
fn max_error<M: SlipMethod>(method: &M, cases: &[SlipConic], name: &str) -> (f64, f64) {
    let reference = Reference::default();
    let (mut worst, mut worst_v): (f64, f64) = (0.0, 0.0);
    for (i, k) in cases.iter().enumerate() {
        let (l_ref, _) = reference.slip(k).unwrap();
        let (l, _) = method
            .slip(k)
            .unwrap_or_else(|e| panic!("{name} case {i}: {e} on {k:?}"));
        let scale = l.norm();
        assert!(
            (l[1].hypot(l[2]) - k.mu * l[0]).abs() <= 1e-12 * scale,
            "{name} case {i}: off the cone"
        );
        let v = k.velocity(&l);
        let v_scale = k.c.norm() + k.w.norm() * scale;
        assert!(
            v[0].abs() <= 1e-12 * v_scale,
            "{name} case {i}: v_n = {}",
            v[0]
        );
        // Both points are on the plane of zero normal velocity, where the energy difference
        // is eq. 16's quadratic form: it does not cancel the way two three-dimensional
        // energies of `lambda*` up to 1e6 do (their rounding reached 1e-10 of E).
        let (e, gain) = (k.energy(&l), k.plane_energy_difference(&l_ref, &l));
        assert!(
            gain <= 1e-10 * e.abs().max(1e-300),
            "{name} case {i}: the reference is not the minimum (E_ref - E = {gain:e}, E = {e})"
        );
        worst = worst.max((l - l_ref).norm() / l_ref.norm());
        worst_v = worst_v.max((k.w * (l - l_ref)).norm() / (k.w * l_ref).norm());
    }
    (worst, worst_v)
}

fn tight_bisection() -> Bisection {
    Bisection {
        tol: 1e-12,
        ..Bisection::default()
    }
}

fn tight_golden() -> GoldenSection {
    GoldenSection {
        tol: 1e-12,
        ..GoldenSection::default()
    }
}

/// Each method against the reference on one family; `bounds` are the largest relative
/// errors allowed for bisection, golden section and the quartic, in the impulse or, with
/// `velocity`, in `W lambda`.
fn check_family(seed: u64, family: Family, n: usize, bounds: [f64; 3], velocity: bool) {
    let cases = slipping_cases(seed, family, n);
    let errors = [
        max_error(&tight_bisection(), &cases, "bisection"),
        max_error(&tight_golden(), &cases, "golden section"),
        max_error(&Analytical::default(), &cases, "analytical"),
    ];
    eprintln!(
        "{family:?}, {n} slipping contacts, max relative error vs reference (bisection, golden, \
         quartic): impulse {:.1e}, {:.1e}, {:.1e}; velocity {:.1e}, {:.1e}, {:.1e}",
        errors[0].0, errors[1].0, errors[2].0, errors[0].1, errors[1].1, errors[2].1
    );
    for ((e, b), name) in errors
        .iter()
        .zip(bounds)
        .zip(["bisection", "golden", "quartic"])
    {
        let e = if velocity { e.1 } else { e.0 };
        assert!(e <= b, "{family:?} {name}: {e:e} > {b:e}");
    }
}

#[test]
fn the_slope_is_the_energys_derivative_along_the_conic_and_its_shortcuts_agree() {
    // Eqs. 15-16's hybrid gradient against a central difference of eq. 12's energy along the
    // conic (the plane form, which does not cancel); the division-free multiple and the
    // bisector's point against their definitions.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    for family in [Family::General, Family::NearDegenerate, Family::Anisotropic] {
        for k in slipping_cases(5, family, 300) {
            let theta = k.theta0() + rng.random_range(-1.5..1.5);
            let h = 1e-6;
            let (Some(p), Some(pp), Some(pm)) = (k.at(theta), k.at(theta + h), k.at(theta - h))
            else {
                continue;
            };
            checked += 1;
            let slope = k.slope_at(&p);
            let fd = k.plane_energy_difference(&pp.lambda, &pm.lambda) / (2.0 * h);
            let scale = k.plane_energy_difference(&pp.lambda, &k.stick).abs() + slope.abs();
            assert!(
                (slope - fd).abs() <= 1e-8 * scale.max(1e-300),
                "{family:?}: slope {slope:e}, finite difference {fd:e}"
            );
            assert_eq!(slope, k.slope(theta, p.r));
            let d = k.c[0].abs() / p.r;
            let scaled = k.slope_scaled(&p);
            assert!(
                (scaled - slope * d * d / p.r).abs() <= 1e-9 * scaled.abs().max(1e-300),
                "{family:?}: D^2/r times the slope {:e}, slope_scaled {scaled:e}",
                slope * d * d / p.r
            );
            let other = theta + rng.random_range(-3.0..3.0);
            if let (Some(q), Some(m)) = (k.at(other), k.at(0.5 * (theta + other))) {
                let mid = k.at_mid(&p, &q).expect("the mid-angle has a point");
                assert!((mid.lambda - m.lambda).norm() <= 1e-12 * m.lambda.norm());
                assert_eq!(mid.theta, m.theta);
            }
        }
    }
    assert!(checked > 600, "{checked}");
}

#[test]
fn single_contact_methods_match_the_reference_on_general_blocks() {
    // Golden section compares energies: near the minimum they differ by less than their
    // rounding, so it locates the angle to about the square root of the precision.
    check_family(1, Family::General, 2000, [1e-9, 1e-7, 5e-9], false);
}

#[test]
fn single_contact_methods_match_the_reference_on_near_degenerate_blocks() {
    // Condition number 1e6: `lambda*` is large (up to 1e4) and the energy nearly flat along the
    // conic. The reference evaluates `v = c + W lambda` in three dimensions, where the large
    // impulse cancels, so it locates the minimum only to about 1e-2 in the impulse and 3e-4 in
    // the velocity; the three methods, on eq. 16's hybrid form (the normal part eliminated
    // exactly), agree with each other far more closely.
    check_family(2, Family::NearDegenerate, 1000, [1e-3, 1e-3, 1e-3], true);
    let cases = slipping_cases(2, Family::NearDegenerate, 1000);
    let mut worst: f64 = 0.0;
    for k in &cases {
        let (lb, _) = tight_bisection().slip(k).unwrap();
        let (lq, _) = Analytical::default().slip(k).unwrap();
        worst = worst.max((k.w * (lb - lq)).norm() / (k.w * lb).norm());
    }
    eprintln!("NearDegenerate: bisection vs quartic, max relative velocity difference {worst:.1e}");
    assert!(worst < 1e-7, "{worst:e}");
}

#[test]
fn single_contact_methods_match_the_reference_on_anisotropic_blocks() {
    check_family(3, Family::Anisotropic, 1000, [1e-9, 1e-7, 5e-8], false);
}

#[test]
fn the_default_tolerance_bounds_the_impulse_error_as_the_paper_says() {
    // The paper stops at an interval below 1e-6 N s: the answer is within it.
    let cases = slipping_cases(4, Family::General, 1000);
    let reference = Reference::default();
    let (mut worst_b, mut worst_g, mut steps_b, mut steps_g) = (0.0f64, 0.0f64, 0u64, 0u64);
    for k in &cases {
        let (l_ref, _) = reference.slip(k).unwrap();
        let (lb, sb) = Bisection::default().slip(k).unwrap();
        let (lg, sg) = GoldenSection::default().slip(k).unwrap();
        worst_b = worst_b.max((lb - l_ref).norm());
        worst_g = worst_g.max((lg - l_ref).norm());
        steps_b += u64::from(sb);
        steps_g += u64::from(sg);
    }
    let n = cases.len() as f64;
    eprintln!(
        "default tol 1e-6: max |error| bisection {worst_b:.1e}, golden {worst_g:.1e}; mean evaluations {:.1}, {:.1}",
        steps_b as f64 / n,
        steps_g as f64 / n
    );
    assert!(worst_b <= 1e-6 && worst_g <= 1e-6);
}

#[test]
fn the_reference_is_stationary_and_the_models_agree_without_coupling() {
    // W_nt = 0: maximum dissipation and Coulomb coincide; an isotropic tangent block makes the
    // answer the projection from the axis, mu lambda_n (-1, 0) at (1, -0.5, 0).
    let w = Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 2.0));
    let c = Vector3::new(-1.0, 3.0, 0.0);
    for m in [
        &Reference::default() as &dyn SlipMethod,
        &Bisection::default(),
        &GoldenSection::default(),
        &Analytical::default(),
        &CoulombExact::default(),
    ] {
        let s = solve_contact(m, &w, &c, 0.5).unwrap();
        assert_eq!(s.mode, ContactMode::Slipping);
        assert!(
            (s.r - Vector3::new(1.0, -0.5, 0.0)).norm() < 1e-6,
            "{:?}",
            s.r
        );
    }
    // With coupling the models differ, and each answer satisfies its own law.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut differ = 0;
    for _ in 0..300 {
        let w = block(&mut rng, Family::General);
        let c = free_velocity(&mut rng);
        let mu = log_uniform(&mut rng, 0.05, 2.0);
        let md = solve_contact(&Reference::default(), &w, &c, mu).unwrap();
        let cl = solve_contact(&CoulombExact::default(), &w, &c, mu)
            .unwrap_or_else(|e| panic!("{e}: w {:?} c {:?} mu {mu}", w.as_slice(), c.as_slice()));
        let (vm, vc) = (c + w * md.r, c + w * cl.r);
        let scale = 1.0 + c.norm();
        assert!(
            contact_violation(FrictionModel::MaximumDissipation, &w, mu, &md.r, &vm) < 1e-8 * scale
        );
        assert!(contact_violation(FrictionModel::Coulomb, &w, mu, &cl.r, &vc) < 1e-8 * scale);
        if (md.r - cl.r).norm() > 1e-6 * md.r.norm() {
            differ += 1;
        }
    }
    assert!(
        differ > 10,
        "coupled blocks should separate the models ({differ})"
    );
}

#[test]
fn cases_and_bad_input() {
    let w = Matrix3::identity();
    let open = classify(&w, &Vector3::new(0.1, 5.0, 0.0), 0.5).unwrap();
    assert!(
        matches!(open, Case::Done(s) if s.mode == ContactMode::Opening && s.r == Vector3::zeros())
    );
    let stick = classify(&w, &Vector3::new(-1.0, 0.2, 0.0), 0.5).unwrap();
    assert!(
        matches!(stick, Case::Done(s) if s.mode == ContactMode::Sticking && s.r == Vector3::new(1.0, -0.2, 0.0))
    );
    let frictionless = classify(&w, &Vector3::new(-2.0, 0.2, 0.0), 0.0).unwrap();
    assert!(matches!(frictionless, Case::Done(s) if s.r == Vector3::new(2.0, 0.0, 0.0)));
    let c = Vector3::new(-1.0, 0.0, 0.0);
    assert_eq!(
        classify(&w, &c, -0.1),
        Err(LocalError::NegativeFriction(-0.1))
    );
    assert!(matches!(
        classify(&w, &c, f64::NAN),
        Err(LocalError::NotFinite(_))
    ));
    assert!(matches!(
        classify(&w, &Vector3::new(f64::NAN, 0.0, 0.0), 0.5),
        Err(LocalError::NotFinite(_))
    ));
    let mut wn = w;
    wn[(1, 2)] = f64::INFINITY;
    assert!(matches!(
        classify(&wn, &c, 0.5),
        Err(LocalError::NotFinite(_))
    ));
    assert_eq!(
        classify(&Matrix3::zeros(), &c, 0.5),
        Err(LocalError::SingularBlock)
    );
    // A zero block is fine where the contact opens.
    assert!(classify(&Matrix3::zeros(), &Vector3::new(1.0, 0.0, 0.0), 0.5).is_ok());
    assert_eq!(LocalError::SingularBlock.status(), Status::SingularSystem);
    assert_eq!(
        LocalError::NoBracket("x").status(),
        Status::LocalSolveFailed
    );
}

/// A random multi-contact problem `W = J M^-1 J' + eps I` with `ndof` degrees of freedom.
fn problem(seed: u64, nc: usize, ndof: usize, mu: f64, coupling: f64) -> LocalProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 3 * nc;
    let j: Vec<f64> = (0..n * ndof)
        .map(|k| {
            let (row, col) = (k / ndof, k % ndof);
            let own = col % nc == row / 3;
            rng.random_range(-1.0..1.0) * if own { 1.0 } else { coupling }
        })
        .collect();
    let mut w = vec![0.0; n * n];
    for a in 0..n {
        for b in 0..n {
            w[a * n + b] = (0..ndof)
                .map(|k| j[a * ndof + k] * j[b * ndof + k])
                .sum::<f64>()
                + if a == b { 1e-3 } else { 0.0 };
        }
    }
    let q = (0..n)
        .map(|i| {
            if i % 3 == 0 {
                rng.random_range(-1.0..0.2)
            } else {
                rng.random_range(-1.0..1.0)
            }
        })
        .collect();
    LocalProblem::coulomb(
        Matrix::from_row_major("W", n, n, &w).unwrap(),
        q,
        &vec![mu; nc],
    )
}

fn opts(tol: f64, max_iter: u64) -> SolveOptions {
    SolveOptions {
        stop_tol: tol,
        max_iter,
        ..SolveOptions::default()
    }
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn the_sweep_with_the_exact_coulomb_solve_matches_pgs() {
    let mut compared = 0;
    for seed in 0..20 {
        let p = problem(seed, 4, 30, 0.3, 0.3);
        let pgs = ProjectedGaussSeidel {
            local_iterations: 200,
            omega: 1.0,
            ..Default::default()
        };
        let a = solve_pgs(&p, pgs, None, &opts(1e-13, 5000)).unwrap();
        if a.status != Status::Converged {
            continue;
        }
        let sweep = BlockSweep::new(
            CoulombExact::default(),
            Relaxation::constant(1.0),
            StopRule::NaturalMap,
        );
        let b = solve_sweep(&p, sweep, None, &opts(1e-11, 5000)).unwrap();
        assert_eq!(
            b.status,
            Status::Converged,
            "seed {seed}: {} {:?} {:?}",
            b.merit,
            b.x,
            a.x
        );
        assert!(
            max_diff(&a.x, &b.x) < 1e-9,
            "seed {seed}: {:?} vs {:?}",
            a.x,
            b.x
        );
        // The same exact solve under Hwangbo's SOR schedule and violation stop.
        let sor = BisectionSor {
            local: LocalMethod::Coulomb,
            ..BisectionSor::default()
        };
        let c = sor
            .solve(&p, vec![0.0; p.q.len()], &opts(1e-10, 0))
            .unwrap();
        assert_eq!(c.status, Status::Converged, "seed {seed}");
        assert!(max_diff(&a.x, &c.x) < 1e-9, "seed {seed}");
        compared += 1;
        assert!(
            b.counters["slipping_contacts"]
                + b.counters["sticking_contacts"]
                + b.counters["opening_contacts"]
                == 4
        );
    }
    assert!(compared >= 15, "{compared}");
}

#[test]
fn bisection_sor_matches_pgs_where_every_contact_sticks_or_opens() {
    // mu = 3 and a free tangential velocity no larger than the normal one: the contacts stick
    // or open (the problems where one slides are skipped), and there the two friction models
    // are the same problem.
    let mut compared = 0;
    for seed in 0..20 {
        let p = problem(100 + seed, 5, 40, 3.0, 0.2);
        let a = solve_pgs(
            &p,
            ProjectedGaussSeidel::default(),
            None,
            &opts(1e-13, 10_000),
        )
        .unwrap();
        assert_eq!(a.status, Status::Converged, "seed {seed}: {}", a.merit);
        let slides = (0..5).any(|k| {
            let r = Vector3::new(a.x[3 * k], a.x[3 * k + 1], a.x[3 * k + 2]);
            ContactMode::of(3.0, &r) == ContactMode::Slipping
        });
        if slides {
            continue;
        }
        compared += 1;
        let h = HwangboPgs::default()
            .solve(&p, vec![0.0; p.q.len()], &opts(1e-12, 0))
            .unwrap();
        assert_eq!(h.status, Status::Converged, "seed {seed}: {}", h.merit);
        assert!(max_diff(&a.x, &h.x) < 1e-9, "seed {seed}: pgs-hwangbo");
        for local in [
            LocalMethod::Bisection,
            LocalMethod::GoldenSection,
            LocalMethod::Analytical,
        ] {
            let d = BisectionSor {
                local,
                ..BisectionSor::default()
            };
            let s = d.solve(&p, vec![0.0; p.q.len()], &opts(1e-10, 0)).unwrap();
            assert_eq!(
                s.status,
                Status::Converged,
                "seed {seed} {local:?} {} {} {:?}",
                s.merit,
                s.iterations,
                s.counters
            );
            assert_eq!(s.counters["slipping_contacts"], 0);
            assert!(s.counters["sticking_contacts"] > 0);
            assert!(max_diff(&a.x, &s.x) < 1e-9, "seed {seed} {local:?}");
        }
    }
    assert!(compared >= 5, "{compared}");
}

#[test]
fn bisection_sor_converges_with_each_local_method_and_they_agree() {
    let mut slipping = 0;
    for seed in 0..10 {
        let p = problem(200 + seed, 4, 24, 0.4, 0.4);
        let run = |local| {
            let d = BisectionSor {
                local,
                local_tol: Some(1e-12),
                ..BisectionSor::default()
            };
            d.solve(&p, vec![0.0; p.q.len()], &opts(1e-8, 0)).unwrap()
        };
        let b = run(LocalMethod::Bisection);
        let g = run(LocalMethod::GoldenSection);
        let q = run(LocalMethod::Analytical);
        for s in [&b, &g, &q] {
            assert_eq!(
                s.status,
                Status::Converged,
                "seed {seed} {} {} {:?}",
                s.merit,
                s.iterations,
                s.counters
            );
            assert!(s.merit <= 1e-8);
        }
        assert!(
            max_diff(&b.x, &g.x) < 1e-8 && max_diff(&b.x, &q.x) < 1e-8,
            "seed {seed}"
        );
        slipping += b.counters["slipping_contacts"];
        // The trace records the relaxation schedule of Algorithm 2.
        assert_eq!(b.trace.rows[1].extra["alpha"], 1.0);
        assert!((b.trace.rows[2].extra["alpha"] - 0.997).abs() < 1e-15);
    }
    assert!(
        slipping > 5,
        "the problems should have slipping contacts ({slipping})"
    );
}

#[test]
fn hwangbo_pgs_reaches_the_coulomb_solution() {
    for seed in 0..5 {
        let p = problem(300 + seed, 3, 20, 0.5, 0.3);
        let s = HwangboPgs::default()
            .solve(&p, vec![0.0; p.q.len()], &opts(1e-12, 0))
            .unwrap();
        assert_eq!(s.status, Status::Converged, "seed {seed}");
        let m = local_metrics(&p, &s.x);
        assert!(m.natural_map < 1e-9, "seed {seed}: {}", m.natural_map);
        assert!(s.iterations > 1);
    }
}

#[test]
fn drivers_refuse_bad_problems_and_options_and_report_budgets() {
    let mut p = problem(400, 2, 10, 0.5, 0.3);
    let x0 = vec![0.0; p.q.len()];
    let d = BisectionSor::default();
    let s = d.solve(&p, x0.clone(), &opts(1e-300, 0)).unwrap();
    assert!(
        matches!(s.status, Status::Stagnated | Status::MaxIterations),
        "{:?}",
        s.status
    );
    let short = HwangboPgs {
        max_iterations: 3,
        ..HwangboPgs::default()
    };
    let s = short.solve(&p, x0.clone(), &opts(1e-300, 1000)).unwrap();
    assert_eq!((s.status, s.iterations), (Status::MaxIterations, 3));
    let mu = p.mu().to_vec();
    p.constraints = Constraints::coulomb(&[mu[0], -0.5]);
    assert!(d.solve(&p, x0.clone(), &opts(1e-8, 0)).is_err());
    p.constraints = Constraints::coulomb(&mu);
    p.q[0] = f64::NAN;
    assert!(HwangboPgs::default()
        .solve(&p, x0.clone(), &opts(1e-8, 0))
        .is_err());
    assert!(BisectionSor { beta2: 1.5, ..d }.check().is_err());
    assert!(BisectionSor { alpha: 0.0, ..d }.check().is_err());
    assert!(HwangboPgs {
        alpha: -1.0,
        max_iterations: 5
    }
    .check()
    .is_err());
    assert!(d.check().is_ok() && HwangboPgs::default().check().is_ok());
}

/// `W` plus a skew part of relative size `eps` (FCLib's files are symmetric only to about 1e-3).
fn with_skew(p: &LocalProblem, seed: u64, eps: f64) -> LocalProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let w = p.w.to_dense();
    let n = w.nrows();
    let scale = (0..n).map(|i| w[(i, i)].abs()).fold(0.0, f64::max);
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let v = eps * scale * rng.random_range(-1.0..1.0);
            k[i * n + j] = v;
            k[j * n + i] = -v;
        }
    }
    let data: Vec<f64> = (0..n * n).map(|e| w[(e / n, e % n)] + k[e]).collect();
    LocalProblem::coulomb(
        Matrix::from_row_major("W", n, n, &data).unwrap(),
        p.q.clone(),
        p.mu(),
    )
}

#[test]
fn bisection_sor_converges_on_a_slightly_asymmetric_w_to_the_files_own_velocities() {
    // The methods see the symmetric part of `W_aa`; the skew part rides in `c`, so the answer's
    // violation is measured with the problem's own `u = W r + q`.
    let mut slipping = 0;
    for seed in 0..6 {
        let p = with_skew(&problem(400 + seed, 4, 24, 0.4, 0.4), seed, 1e-3);
        for local in [LocalMethod::Bisection, LocalMethod::Coulomb] {
            let d = BisectionSor {
                local,
                local_tol: Some(1e-12),
                ..BisectionSor::default()
            };
            let s = d.solve(&p, vec![0.0; p.q.len()], &opts(1e-8, 0)).unwrap();
            assert_eq!(
                s.status,
                Status::Converged,
                "seed {seed} {local:?}: {}",
                s.merit
            );
            if local == LocalMethod::Coulomb {
                let m = local_metrics(&p, &s.x);
                assert!(m.natural_map < 1e-7, "seed {seed}: {}", m.natural_map);
            } else {
                slipping += s.counters["slipping_contacts"];
            }
        }
    }
    assert!(
        slipping > 5,
        "the problems should have slipping contacts ({slipping})"
    );
}

#[test]
fn bisection_sor_converges_on_rover4396_whose_w_is_symmetric_to_1e_3() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/problems/Rover4396.hdf5");
    let p = contactlab_core::io::read_local(&file).unwrap();
    let (asym, _) = contactlab_core::problem::max_asymmetry(&p.w);
    assert!(asym > 1e-6, "Rover4396's W should be asymmetric ({asym})");
    for local in [LocalMethod::Bisection, LocalMethod::Coulomb] {
        let d = BisectionSor {
            local,
            ..BisectionSor::default()
        };
        let s = d.solve(&p, vec![0.0; p.q.len()], &opts(1e-6, 0)).unwrap();
        assert_eq!(
            s.status,
            Status::Converged,
            "{local:?}: violation {} after {} sweeps",
            s.merit,
            s.iterations
        );
        assert!(s.iterations < 100, "{local:?}: {} sweeps", s.iterations);
    }
}

/// The golden section's closed-form line-of-sight region: its ends are on the region's
/// boundary (just inside in sight or at an open conic's gap, just outside not, when the end is
/// not the half-turn guard), it contains the reference's answer, and the search over it
/// matches the reference like the searched region does.
#[test]
fn the_closed_form_sight_region_bounds_the_visible_arc_and_holds_the_answer() {
    use std::f64::consts::PI;
    for family in [Family::General, Family::Anisotropic] {
        let cases = slipping_cases(11, family, 300);
        for (i, k) in cases.iter().enumerate() {
            let (a, b) = GoldenSection::sight_region(k);
            assert!(a < k.theta0() && k.theta0() < b, "{family:?} {i}");
            let (l_ref, _) = Reference::default().slip(k).unwrap();
            let t_ref = l_ref[2].atan2(l_ref[1]);
            let t_ref = k.theta0() + (t_ref - k.theta0() + PI).rem_euclid(2.0 * PI) - PI;
            assert!(
                a <= t_ref && t_ref <= b,
                "{family:?} {i}: {t_ref} not in [{a}, {b}]"
            );
            for (end, out) in [(a, -1.0), (b, 1.0)] {
                let eps = 1e-7;
                let inside = k.point(end - out * eps).map(|(_, l)| l);
                assert!(
                    inside.is_some_and(|l| k.in_sight(&l)),
                    "{family:?} {i}: just inside {end} is out of sight"
                );
                let at_guard = (end - k.theta0()).abs() >= PI - 1e-12;
                if let (false, Some((_, l))) = (at_guard, k.point(end + out * eps)) {
                    assert!(!k.in_sight(&l), "{family:?} {i}: beyond {end} is in sight");
                }
            }
        }
        let closed = GoldenSection {
            closed_form_sight: true,
            ..tight_golden()
        };
        let (e, _) = max_error(&closed, &cases, "golden section, closed-form region");
        assert!(e < 1e-6, "{family:?}: {e:e}");
    }
}

/// The bisection's interval count: the start and one step when the first step already
/// crosses the answer (at `W = I` the start is the answer's angle up to the sign of a
/// rounding, so the first step crosses), and never more than the whole solve's steps.
#[test]
fn the_bisection_counts_its_initial_stepping() {
    let w = Matrix3::identity();
    let c = Vector3::new(-1.0, 3.0, 0.5);
    let Case::Slipping(k) = classify(&w, &c, 0.5).unwrap() else {
        panic!("slipping expected")
    };
    let b = Bisection::default();
    let (_, total) = b.slip(&k).unwrap();
    let bracket = b.bracket_steps(&k).unwrap();
    assert!(bracket <= 2, "{bracket}");
    assert!(bracket <= total);
    for k in slipping_cases(5, Family::General, 200) {
        let (_, total) = b.slip(&k).unwrap();
        let bracket = b.bracket_steps(&k).unwrap();
        assert!((1..=total).contains(&bracket), "{bracket} of {total}");
    }
    assert_eq!(Analytical::default().bracket_steps(&k), None);
}

// ---- Every constraint kind ----------------------------------------------------------------

use contactlab_core::constraint::Constraint;

/// Anisotropic condim 3, condim 4 and condim 6 contacts.
fn anisotropic3() -> Constraint {
    Constraint::Contact { mu: vec![0.9, 0.3] }
}

fn condim4() -> Constraint {
    Constraint::Contact {
        mu: vec![0.9, 0.5, 0.02],
    }
}

fn condim6() -> Constraint {
    Constraint::Contact {
        mu: vec![0.8, 0.6, 0.05, 0.01, 0.02],
    }
}

/// The kinds each driver is checked on, alone (several blocks of one kind), `q`'s range each.
fn kind_cases() -> Vec<(&'static str, Vec<Constraint>, (f64, f64))> {
    vec![
        (
            "equalities of 1 row",
            vec![Constraint::Equality { rows: 1 }; 3],
            (-1.0, 1.0),
        ),
        (
            "equalities of 3 rows",
            vec![Constraint::Equality { rows: 3 }; 2],
            (-1.0, 1.0),
        ),
        (
            "an equality of 6 rows",
            vec![Constraint::Equality { rows: 6 }],
            (-1.0, 1.0),
        ),
        ("limits", vec![Constraint::Limit; 5], (-1.0, 0.5)),
        (
            "sliding friction losses",
            vec![Constraint::FrictionLoss { f_max: 0.01 }; 4],
            (-1.0, 1.0),
        ),
        (
            "sticking friction losses",
            vec![Constraint::FrictionLoss { f_max: 50.0 }; 4],
            (-1.0, 1.0),
        ),
        (
            "frictionless contacts",
            vec![Constraint::Contact { mu: vec![] }; 4],
            (-1.0, 0.5),
        ),
        (
            "anisotropic contacts of condim 3",
            vec![anisotropic3(); 3],
            (-1.0, 0.5),
        ),
    ]
}

/// Every kind the bisection-SOR takes, in one problem: equalities of 1, 3 and 6 rows, a limit,
/// a friction loss, a Coulomb contact, an anisotropic condim 3, a frictionless contact.
fn bisection_mix() -> Vec<Constraint> {
    vec![
        Constraint::Equality { rows: 3 },
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.3 },
        Constraint::coulomb(0.6),
        anisotropic3(),
        Constraint::Contact { mu: vec![] },
        Constraint::Equality { rows: 1 },
        Constraint::Equality { rows: 6 },
    ]
}

/// The bisection mix with condim 4 and 6 contacts: every kind.
fn every_kind() -> Vec<Constraint> {
    let mut b = bisection_mix();
    b.insert(4, condim4());
    b.push(condim6());
    b
}

/// `x` passes the shared ruler on every row below `tol`.
fn assert_ruler(p: &LocalProblem, x: &[f64], tol: f64, what: &str) {
    let u = p.velocity(x);
    let (nm, primal, dual, gap) = p.constraints.ruler(x, &u);
    assert!(
        nm < tol && primal < tol && dual < tol && gap < tol,
        "{what}: natural map {nm:e}, primal {primal:e}, dual {dual:e}, gap {gap:e}"
    );
    for (rows, c) in p.constraints.iter() {
        let mut f = vec![0.0; rows.len()];
        c.natural_map(&x[rows.clone()], &u[rows.clone()], &mut f);
        let norm = f.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(norm < tol, "{what}, {}: {f:?}", c.describe());
    }
}

fn coulomb_sor() -> BisectionSor {
    BisectionSor {
        local: LocalMethod::Coulomb,
        ..BisectionSor::default()
    }
}

#[test]
fn pgs_hwangbo_solves_each_kind_to_the_rulers_tolerance() {
    let mut cases = kind_cases();
    cases.push(("contacts of condim 4", vec![condim4(); 2], (-1.0, 0.5)));
    cases.push(("contacts of condim 6", vec![condim6(); 2], (-1.0, 0.5)));
    cases.push(("every kind", every_kind(), (-1.0, 0.5)));
    for (what, blocks, q) in cases {
        for seed in 0..3 {
            let p = kinds_problem(blocks.clone(), q, seed);
            let s = HwangboPgs::default()
                .solve(&p, vec![0.0; p.q.len()], &opts(1e-12, 0))
                .unwrap();
            assert_eq!(s.status, Status::Converged, "{what}, seed {seed}");
            assert_ruler(&p, &s.x, 1e-9, &format!("pgs-hwangbo, {what}, seed {seed}"));
        }
    }
}

#[test]
fn bisection_sor_with_coulombs_law_solves_each_kind_it_takes_to_the_rulers_tolerance() {
    let mut cases = kind_cases();
    cases.push((
        "every kind but condim 4 and 6",
        bisection_mix(),
        (-1.0, 0.5),
    ));
    for (what, blocks, q) in cases {
        for seed in 0..3 {
            let p = kinds_problem(blocks.clone(), q, 10 + seed);
            let s = coulomb_sor()
                .solve(&p, vec![0.0; p.q.len()], &opts(1e-12, 0))
                .unwrap();
            assert_eq!(s.status, Status::Converged, "{what}, seed {seed}");
            assert_ruler(
                &p,
                &s.x,
                1e-9,
                &format!("bisection-sor, {what}, seed {seed}"),
            );
        }
    }
}

/// Algorithm 1's maximum-dissipation answers differ from Coulomb's where a slipping contact's
/// normal and tangential rows couple, so the default bisection-SOR is judged by its own
/// violation (its converged status) on the contacts and by the ruler on every other block; on an
/// anisotropic condim 3 its answer is checked against the violation of the scaled contact.
#[test]
fn bisection_sor_with_algorithm_1_meets_each_kinds_law() {
    let mut cases = kind_cases();
    cases.push((
        "every kind but condim 4 and 6",
        bisection_mix(),
        (-1.0, 0.5),
    ));
    for (what, blocks, q) in cases {
        for seed in 0..3 {
            let p = kinds_problem(blocks.clone(), q, 20 + seed);
            let s = BisectionSor::default()
                .solve(&p, vec![0.0; p.q.len()], &opts(1e-10, 0))
                .unwrap();
            assert_eq!(s.status, Status::Converged, "{what}, seed {seed}");
            let u = p.velocity(&s.x);
            let w = p.w.to_dense();
            for (rows, c) in p.constraints.iter() {
                let (r, v) = (&s.x[rows.clone()], &u[rows.clone()]);
                let err = match c {
                    Constraint::Contact { mu } if mu.len() == 2 => {
                        // The scaled contact: s = D^-1 r, D u, D W D, unit mu.
                        let d = Vector3::new(1.0, mu[0], mu[1]);
                        let wb = Matrix3::from_fn(|i, j| w[(rows.start + i, rows.start + j)]);
                        let wd = Matrix3::from_diagonal(&d) * wb * Matrix3::from_diagonal(&d);
                        let rs = Vector3::from_column_slice(r).component_div(&d);
                        let us = Vector3::from_column_slice(v).component_mul(&d);
                        contact_violation(FrictionModel::MaximumDissipation, &wd, 1.0, &rs, &us)
                    }
                    _ => {
                        let mut f = vec![0.0; rows.len()];
                        c.natural_map(r, v, &mut f);
                        f.iter().map(|x| x * x).sum::<f64>().sqrt()
                    }
                };
                assert!(err < 1e-9, "{what}, seed {seed}, {}: {err:e}", c.describe());
            }
        }
    }
}

/// With no normal-tangent coupling in the contacts' blocks the two laws agree, so the default
/// bisection-SOR's answer on a mix of the kinds it takes passes the shared ruler too.
#[test]
fn bisection_sor_passes_the_ruler_on_a_mix_without_normal_tangent_coupling() {
    for seed in 0..3 {
        let mut p = kinds_problem(bisection_mix(), (-1.0, 0.5), 30 + seed);
        let mut w = p.w.to_dense();
        let n = p.q.len();
        for (rows, c) in p.constraints.iter() {
            if let Constraint::Contact { mu } = c {
                if !mu.is_empty() {
                    // Decouple the normal row of the contact from its tangential rows (and keep W
                    // symmetric positive definite: it stays diagonally dominated by 0.2 + ...).
                    for t in 1..3 {
                        let (i, j) = (rows.start, rows.start + t);
                        w[(i, j)] = 0.0;
                        w[(j, i)] = 0.0;
                    }
                }
            }
        }
        let dense: Vec<f64> = (0..n * n).map(|k| w[(k / n, k % n)]).collect();
        p.w = Matrix::from_row_major("W", n, n, &dense).unwrap();
        if p.validate().is_err() {
            continue;
        }
        let s = BisectionSor::default()
            .solve(&p, vec![0.0; n], &opts(1e-11, 0))
            .unwrap();
        assert_eq!(s.status, Status::Converged, "seed {seed}");
        assert_ruler(
            &p,
            &s.x,
            1e-8,
            &format!("bisection-sor, decoupled mix, seed {seed}"),
        );
    }
}

#[test]
fn the_two_drivers_agree_on_a_mix_of_the_kinds_both_take() {
    for seed in 0..3 {
        let p = kinds_problem(bisection_mix(), (-1.0, 0.5), 40 + seed);
        let x0 = vec![0.0; p.q.len()];
        let a = coulomb_sor()
            .solve(&p, x0.clone(), &opts(1e-12, 0))
            .unwrap();
        let b = HwangboPgs::default()
            .solve(&p, x0, &opts(1e-12, 0))
            .unwrap();
        assert_eq!((a.status, b.status), (Status::Converged, Status::Converged));
        assert!(
            max_diff(&a.x, &b.x) < 1e-7,
            "seed {seed}: {}",
            max_diff(&a.x, &b.x)
        );
    }
}

#[test]
fn the_ellipse_projection_meets_its_optimality_conditions() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for k in 0..500 {
        let n = [2, 3, 5][k % 3];
        let mu: Vec<f64> = (0..n)
            .map(|i| {
                if k % 7 == 0 && i == 1 {
                    0.0
                } else {
                    log_uniform(&mut rng, 1e-3, 2.0)
                }
            })
            .collect();
        let t: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
        let rho = rng.random_range(0.0..1.0);
        let mut x = t.clone();
        super::pgs::project_ellipse(&mu, rho, &mut x);
        let scaled = |x: &[f64]| -> f64 {
            mu.iter()
                .zip(x)
                .filter(|(m, _)| **m > 0.0)
                .map(|(m, v)| (v / m) * (v / m))
                .sum::<f64>()
                .sqrt()
        };
        assert!(scaled(&x) <= rho * (1.0 + 1e-12) + 1e-300, "{k}: outside");
        for (m, v) in mu.iter().zip(&x) {
            assert!(*m > 0.0 || *v == 0.0, "{k}: a row without friction moved");
        }
        if scaled(&t) > rho && mu.iter().all(|m| *m > 0.0) && rho > 0.0 {
            // On the boundary, t - x along the outward normal x_i / mu_i^2, nonnegatively.
            assert!(
                (scaled(&x) - rho).abs() <= 1e-12 * rho.max(1.0),
                "{k}: not on it"
            );
            let normal: Vec<f64> = mu.iter().zip(&x).map(|(m, v)| v / (m * m)).collect();
            let nn = normal.iter().map(|v| v * v).sum::<f64>().sqrt();
            let d: Vec<f64> = t.iter().zip(&x).map(|(a, b)| a - b).collect();
            let dn = d.iter().map(|v| v * v).sum::<f64>().sqrt();
            let cos = d.iter().zip(&normal).map(|(a, b)| a * b).sum::<f64>() / (dn * nn);
            assert!(cos > 1.0 - 1e-9, "{k}: cos {cos}");
        }
        // No random point of the ellipse is nearer to t.
        let dist = |y: &[f64]| -> f64 {
            y.iter()
                .zip(&t)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt()
        };
        for _ in 0..20 {
            let mut y: Vec<f64> = mu.iter().map(|m| m * rng.random_range(-1.0..1.0)).collect();
            let s = scaled(&y);
            if s > 0.0 {
                let f = rho * rng.random_range(0.0..1.0) / s;
                y.iter_mut().for_each(|v| *v *= f);
            }
            assert!(dist(&x) <= dist(&y) + 1e-12, "{k}: a nearer point");
        }
    }
    // Equal coefficients: the disc's radial projection.
    let mut x = [3.0, 4.0];
    super::pgs::project_ellipse(&[0.5, 0.5], 1.0, &mut x);
    assert!(
        (x[0] - 0.3).abs() < 1e-15 && (x[1] - 0.4).abs() < 1e-15,
        "{x:?}"
    );
}

#[test]
fn bisection_sor_refuses_condim_4_and_6_and_a_zero_coefficient_by_name_before_iterating() {
    for (c, condim) in [(condim4(), "condim 4"), (condim6(), "condim 6")] {
        let p = kinds_problem(
            vec![Constraint::Limit, Constraint::coulomb(0.5), c],
            (-1.0, 0.5),
            1,
        );
        let e = BisectionSor::default()
            .solve(&p, vec![0.0; p.q.len()], &opts(1e-8, 0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bisection-sor") && e.contains("constraint 2") && e.contains(condim),
            "{e}"
        );
    }
    let p = kinds_problem(
        vec![Constraint::Contact { mu: vec![0.5, 0.0] }],
        (-1.0, 0.5),
        1,
    );
    let e = BisectionSor::default()
        .solve(&p, vec![0.0; 3], &opts(1e-8, 0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("constraint 0") && e.contains("zero"), "{e}");
    // The PGS takes it (the row without friction stays at 0).
    let s = HwangboPgs::default()
        .solve(&p, vec![0.0; 3], &opts(1e-12, 0))
        .unwrap();
    assert_eq!(s.status, Status::Converged);
    assert_eq!(s.x[2], 0.0);
    assert_ruler(&p, &s.x, 1e-9, "pgs-hwangbo, a zero coefficient");
}

#[test]
fn bad_blocks_of_the_other_kinds_give_errors_or_statuses_not_panics() {
    let x0 = vec![0.0; 2];
    let c = Constraints::new(vec![
        Constraint::Equality { rows: 1 },
        Constraint::Equality { rows: 1 },
    ])
    .unwrap();
    // A singular equality block: two equal rows in one block of 2 rows. With consistent
    // targets its minimum-norm answer (0.5, 0.5) solves it; with contradicting ones no answer
    // does, and the run ends at the least-squares answer, never a panic.
    let c2 = Constraints::new(vec![Constraint::Equality { rows: 2 }]).unwrap();
    let w = Matrix::from_row_major("W", 2, 2, &[1.0, 1.0, 1.0, 1.0]).unwrap();
    let consistent =
        LocalProblem::with_constraints(w.clone(), vec![-1.0, -1.0], c2.clone()).unwrap();
    let singular = LocalProblem::with_constraints(w.clone(), vec![-1.0, -2.0], c2).unwrap();
    for solve in [
        |p: &LocalProblem, x: Vec<f64>| BisectionSor::default().solve(p, x, &opts(1e-10, 0)),
        |p: &LocalProblem, x: Vec<f64>| HwangboPgs::default().solve(p, x, &opts(1e-10, 0)),
    ] {
        let s = solve(&consistent, x0.clone()).unwrap();
        assert_eq!(s.status, Status::Converged);
        assert!(
            (s.x[0] - 0.5).abs() < 1e-9 && (s.x[1] - 0.5).abs() < 1e-9,
            "{:?}",
            s.x
        );
        // The least-squares answer (0.75, 0.75) leaves u = (0.5, -0.5): the driver may stop
        // on a still impulse, and the shared ruler then sees the residual.
        let s = solve(&singular, x0.clone()).unwrap();
        let u = singular.velocity(&s.x);
        assert!(
            (u[0] - 0.5).abs() < 1e-6 && (u[1] + 0.5).abs() < 1e-6,
            "{u:?}"
        );
    }
    // The same rows as two 1-row equalities: each block is regular; consistent targets converge.
    let two = LocalProblem::with_constraints(w, vec![-1.0, -1.0], c).unwrap();
    let s = BisectionSor::default()
        .solve(&two, x0.clone(), &opts(1e-10, 0))
        .unwrap();
    assert_eq!(s.status, Status::Converged);
    // A limit whose W_kk is zero has no 1-D solve.
    let zero = LocalProblem::with_constraints(
        Matrix::from_row_major("W", 2, 2, &[0.0, 0.0, 0.0, 1.0]).unwrap(),
        vec![-1.0, -1.0],
        Constraints::new(vec![Constraint::Limit, Constraint::Limit]).unwrap(),
    )
    .unwrap();
    let s = HwangboPgs::default()
        .solve(&zero, x0.clone(), &opts(1e-10, 0))
        .unwrap();
    assert_eq!(s.status, Status::SingularSystem);
    // NaN data and a negative friction-loss bound are refused before any sweep.
    let mut p = kinds_problem(every_kind(), (-1.0, 0.5), 3);
    let x0 = vec![0.0; p.q.len()];
    p.q[5] = f64::NAN;
    assert!(HwangboPgs::default()
        .solve(&p, x0.clone(), &opts(1e-8, 0))
        .is_err());
    assert!(coulomb_sor().solve(&p, x0.clone(), &opts(1e-8, 0)).is_err());
    let mut blocks = bisection_mix();
    blocks[2] = Constraint::FrictionLoss { f_max: -0.3 };
    let mut p = kinds_problem(bisection_mix(), (-1.0, 0.5), 3);
    p.constraints = Constraints::unchecked(blocks);
    let x0 = vec![0.0; p.q.len()];
    for e in [
        HwangboPgs::default().solve(&p, x0.clone(), &opts(1e-8, 0)),
        BisectionSor::default().solve(&p, x0.clone(), &opts(1e-8, 0)),
    ] {
        let e = e.unwrap_err().to_string();
        assert!(e.contains("f_max"), "{e}");
    }
}

#[test]
fn both_drivers_declare_every_kind() {
    assert_eq!(BisectionSor::KINDS, contactlab_core::constraint::EVERY_KIND);
    assert_eq!(HwangboPgs::KINDS, contactlab_core::constraint::EVERY_KIND);
}

/// The mixed problem file the CLI and the robustness sweep read: the PGS solves it to the
/// ruler's tolerance; the bisection-SOR refuses its condim 4 contact by name.
#[test]
fn the_every_kind_file_is_solved_by_pgs_and_refused_by_the_bisection() {
    let p = every_kind_file();
    let x0 = vec![0.0; p.q.len()];
    let s = HwangboPgs::default()
        .solve(&p, x0.clone(), &opts(1e-12, 0))
        .unwrap();
    assert_eq!(s.status, Status::Converged);
    assert_ruler(&p, &s.x, 1e-8, "pgs-hwangbo, every_kind.json");
    let e = BisectionSor::default()
        .solve(&p, x0, &opts(1e-8, 0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bisection-sor refuses constraint") && e.contains("condim"),
        "{e}"
    );
}

/// The planar models of `data/mujoco_robots` (dm_control's manipulator and stacker, whose
/// contacts move nothing out of their plane): every contact block is singular along one
/// tangent, which the bisection once stopped at as `singular_system`; reduced to the plane
/// ([`super::planar`]) the sweep solves them to the shared ruler.
#[test]
fn the_bisection_solves_the_planar_robots() {
    for name in [
        "manipulator_t0500ms",
        "manipulator_t1500ms",
        "stacker_t1500ms",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/mujoco_robots/global")
            .join(format!("{name}.json"));
        let p = contactlab_core::io::read_local(&path).unwrap();
        let planar = (0..p.num_contacts()).any(|a| {
            let (rows, c) = p.constraints.iter().nth(a).unwrap();
            c.is_coulomb() && {
                let w = p.w.to_dense();
                let s = rows.start;
                let b = Matrix3::from_fn(|i, j| w[(s + i, s + j)]);
                super::planar::reduce(&b, &Vector3::new(-1.0, 0.0, 0.0), 0.5).is_some()
            }
        });
        assert!(planar, "{name} has a planar contact");
        let s = BisectionSor::default()
            .solve(&p, vec![0.0; p.q.len()], &opts(1e-8, 2000))
            .unwrap();
        assert_eq!(s.status, Status::Converged, "{name}");
        assert!(local_metrics(&p, &s.x).natural_map <= 1e-8, "{name}");
    }
}
