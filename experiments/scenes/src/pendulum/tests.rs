//! The scene's tests: dynamics against finite differences, contact rows, the restitution
//! law, runs, parameters and the non-planar variant.

use std::sync::Arc;

use super::chain::chain_model;
use super::*;
use crate::scene::Scene;
use crate::testing::TestSolver;
use crate::ContactKey;
use approx::assert_relative_eq;
use nalgebra::{DMatrix, DVector, Matrix3, Rotation3, Vector3};

/// A configuration with every kind of contact: the chain hangs with two folds so that
/// spheres (1, 3) touch and (5, 7) nearly do, the lowest sphere sinks into the floor and the
/// rightmost one is within the margin of the wall.
fn tangle() -> Pendulum {
    let mut p = Pendulum::new(&PendulumConfig {
        n_links: 10,
        margin: 0.05,
        initial_angle: 0.0,
        pivot_height: 20.0,
        ..PendulumConfig::default()
    })
    .unwrap();
    let fold = 2.0 * (0.25f64).acos(); // relative angle at which spheres i and i + 2 touch
    p.q = DVector::from_vec(vec![
        0.3,
        -0.2,
        0.1,
        fold,
        0.15,
        -0.3,
        0.2,
        -fold + 0.01,
        0.4,
        1.2,
    ]);
    p.qdot = DVector::from_vec(vec![0.5, -1.0, 0.7, 0.3, -0.2, 1.1, -0.6, 0.4, 0.9, -0.8]);
    // Lower the pivot until the lowest sphere sinks 3 mm into the floor, move the wall to
    // 1 cm right of the rightmost sphere.
    let pos = p.sphere_positions();
    let low = pos.iter().map(|v| v.z).fold(f64::INFINITY, f64::min);
    let right = pos.iter().map(|v| v.x).fold(f64::NEG_INFINITY, f64::max);
    p.config.pivot_height = 20.0 - (low - 0.25 - p.config.floor_top()) - 0.003;
    p.config.wall_x = right + 0.25 + 0.01;
    p
}

/// Kinetic energy from finite differences of the sphere positions (independent of `M`).
fn kinetic_from_positions(p: &Pendulum, qdot: &DVector<f64>) -> f64 {
    let eps = 1e-6;
    let mut a = p.clone();
    let mut b = p.clone();
    a.q = &p.q + eps * qdot;
    b.q = &p.q - eps * qdot;
    let (pa, pb) = (a.sphere_positions(), b.sphere_positions());
    let cfg = &p.config;
    let mut phidot = 0.0;
    let mut t = 0.0;
    for i in 0..p.n() {
        phidot += qdot[i];
        let v = (pa[i] - pb[i]) / (2.0 * eps);
        t += 0.5 * cfg.sphere_mass * v.norm_squared() + 0.5 * cfg.inertia() * phidot * phidot;
    }
    t
}

#[test]
fn mass_matrix_is_spd_and_the_hessian_of_the_kinetic_energy() {
    let p = tangle();
    let m = p.mass_matrix();
    let n = p.n();
    assert_eq!(m, m.transpose());
    let eig = m.clone().symmetric_eigen().eigenvalues;
    assert!(eig.min() > 0.0, "{eig}");
    // T is quadratic in qdot: the central second difference is its Hessian.
    let e = 1e-2;
    let mut worst: f64 = 0.0;
    for k in 0..n {
        for l in 0..n {
            let t = |dk: f64, dl: f64| {
                let mut v = p.qdot.clone();
                v[k] += dk;
                v[l] += dl;
                kinetic_from_positions(&p, &v)
            };
            let h = (t(e, e) - t(e, -e) - t(-e, e) + t(-e, -e)) / (4.0 * e * e);
            worst = worst.max((h - m[(k, l)]).abs());
        }
    }
    eprintln!(
        "max |M - Hessian of T| = {worst:.2e} (max M = {:.1})",
        m.max()
    );
    assert!(worst < 1e-5 * m.max(), "{worst}");
    // T = q' M q' / 2 agrees with the position-based T.
    assert_relative_eq!(
        p.kinetic_energy(),
        kinetic_from_positions(&p, &p.qdot),
        max_relative = 1e-8
    );
}

#[test]
fn coriolis_and_gravity_match_finite_differences() {
    bias_matches_finite_differences(&tangle());
}

/// `C = (d/dt M) q' - dT/dq` and the gravity forces against central differences of the
/// chain's own `M`, kinetic and potential energy.
fn bias_matches_finite_differences(p: &Pendulum) {
    let n = p.n();
    let eps = 1e-6;
    let shifted = |k: usize, d: f64| {
        let mut s = p.clone();
        s.q[k] += d;
        s
    };
    // C = (d/dt M) q' - dT/dq at q'' = 0, with d/dt M = sum_k dM/dq_k q'_k.
    let mut mdot = DMatrix::zeros(n, n);
    let mut dtdq = DVector::zeros(n);
    let mut dvdq = DVector::zeros(n);
    for k in 0..n {
        let (a, b) = (shifted(k, eps), shifted(k, -eps));
        mdot += (a.mass_matrix() - b.mass_matrix()) * (p.qdot[k] / (2.0 * eps));
        dtdq[k] = (a.kinetic_energy() - b.kinetic_energy()) / (2.0 * eps);
        dvdq[k] = (a.potential_energy() - b.potential_energy()) / (2.0 * eps);
    }
    let fd = &mdot * &p.qdot - dtdq;
    let c = p.coriolis();
    eprintln!(
        "coriolis: max |analytic - FD| = {:.2e} of {:.2e}",
        (&c - &fd).amax(),
        c.amax()
    );
    assert!((&c - &fd).amax() < 1e-6 * (1.0 + c.amax()), "{c} vs {fd}");
    let g = p.gravity_forces();
    assert!(
        (&g - &dvdq).amax() < 1e-6 * (1.0 + g.amax()),
        "{g} vs {dvdq}"
    );
    assert_relative_eq!(p.bias_forces(), c + g, epsilon = 1e-12);
}

#[test]
fn contact_rows_match_finite_differences_of_the_contact_points() {
    let p = tangle();
    let contacts = p.contacts();
    let kinds = |f: fn(&ContactKey) -> bool| contacts.iter().filter(|c| f(&c.key)).count();
    assert!(
        kinds(|k| matches!(k, ContactKey::Pair { .. })) >= 2,
        "{contacts:?}"
    );
    assert!(
        kinds(|k| matches!(k, ContactKey::Wall { wall: FLOOR, .. })) >= 1,
        "{contacts:?}"
    );
    assert!(
        kinds(|k| matches!(k, ContactKey::Wall { wall: WALL, .. })) >= 1,
        "{contacts:?}"
    );
    let r = p.config.sphere_radius;
    let phi0 = p.absolute_angles();
    // The material point of sphere `i` that sits at `offset` from its centre at `p`,
    // carried to the configuration of `s` (the sphere turns by -(phi - phi0) about y).
    let point = |s: &Pendulum, i: usize, offset: Vector3<f64>| {
        let rot =
            Rotation3::from_axis_angle(&Vector3::y_axis(), -(s.absolute_angles()[i] - phi0[i]));
        s.sphere_positions()[i] + rot * offset
    };
    let eps = 1e-6;
    for c in &contacts {
        let n: Vector3<f64> = c.frame.row(0).transpose();
        let rel = |s: &Pendulum| match c.key {
            ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                point(s, ball, -r * n)
            }
            ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => {
                point(s, a, -r * n) - point(s, b, r * n)
            }
        };
        let j = p.contact_jacobian(c);
        assert_eq!(j.row(2).amax(), 0.0, "the out-of-plane row is exactly zero");
        for k in 0..p.n() {
            let (mut a, mut b) = (p.clone(), p.clone());
            a.q[k] += eps;
            b.q[k] -= eps;
            let fd = c.frame * (rel(&a) - rel(&b)) / (2.0 * eps);
            for row in 0..3 {
                assert!(
                    (j[(row, k)] - fd[row]).abs() < 1e-8,
                    "{:?} row {row} col {k}: {} vs {}",
                    c.key,
                    j[(row, k)],
                    fd[row]
                );
            }
        }
    }
    // The frames: normal from the second body to the first.
    for c in &contacts {
        let n: Vector3<f64> = c.frame.row(0).transpose();
        let pos = p.sphere_positions();
        match c.key {
            ContactKey::Wall { wall: FLOOR, .. } => assert_eq!(n, Vector3::z()),
            ContactKey::Wall { .. } => assert_eq!(n, -Vector3::x()),
            ContactKey::WallPoint { .. } | ContactKey::PairPoint { .. } => {
                unreachable!("the pendulum makes no manifold contacts")
            }
            ContactKey::Pair { a, b } => {
                assert_relative_eq!(n, (pos[a] - pos[b]).normalize(), epsilon = 1e-14)
            }
        }
        assert_relative_eq!(
            c.frame * c.frame.transpose(),
            Matrix3::identity(),
            epsilon = 1e-14
        );
        assert_relative_eq!(c.frame.determinant(), 1.0, epsilon = 1e-14);
    }
}

#[test]
fn delassus_matrix_is_symmetric_psd_and_the_step_is_consistent() {
    let p = tangle();
    let cs = p.contact_step().unwrap();
    let nc = cs.contacts.len();
    let w = cs.problem.local().unwrap().dense_w();
    let wd = DMatrix::from_fn(3 * nc, 3 * nc, |i, j| w[(i, j)]);
    assert_eq!(wd, wd.transpose(), "symmetric to the last bit");
    let eig = wd.clone().symmetric_eigen().eigenvalues;
    assert!(eig.min() >= -1e-12 * eig.max(), "{eig}");
    for ci in 0..nc {
        assert_eq!(wd.row(3 * ci + 2).amax(), 0.0);
        assert_eq!(cs.problem.local().unwrap().q[3 * ci + 2], 0.0);
    }
    // A unit impulse e_j changes the contact velocities by W e_j (with the biases removed).
    let shifts = p.normal_shifts(&cs);
    let all = p.stacked_jacobian(&cs.contacts);
    for j in [0, 1, 3, 4] {
        let mut r = vec![0.0; 3 * nc];
        r[j] = 1.0;
        let mut s = p.clone();
        s.advance(&cs, &r).unwrap();
        let mut expected = cs.velocities(&r).unwrap();
        for ci in 0..nc {
            expected[3 * ci] -= shifts[ci];
        }
        let got = &all * &s.qdot;
        for i in 0..3 * nc {
            assert!(
                (got[i] - expected[i]).abs() < 1e-10,
                "{i}: {} vs {}",
                got[i],
                expected[i]
            );
        }
    }
}

#[test]
fn the_normal_bias_follows_the_documented_rule() {
    let h = 1e-3;
    assert_eq!(normal_shift(0.0, -2.0, -2.01, 0.7, h), 0.7 * -2.0);
    assert_eq!(
        normal_shift(0.0015, -2.0, -2.01, 0.7, h),
        0.7 * -2.0,
        "meets within the step"
    );
    assert_eq!(
        normal_shift(0.01, -2.0, -2.01, 0.7, h),
        0.01 / h,
        "still apart after the step"
    );
    assert_eq!(normal_shift(0.01, 1.0, 1.0, 0.7, h), 0.01 / h);
    assert_eq!(
        normal_shift(-0.01, 1.0, 1.0, 0.7, h),
        0.0,
        "overlap, separating"
    );
    assert_eq!(
        normal_shift(-0.01, -1.0, -1.0, 0.7, h),
        -0.7,
        "overlap, approaching"
    );
}

/// The largest `|E - E0|` and kinetic energy over one second of free motion at step `h`.
fn free_drift(h: f64) -> (f64, f64) {
    let cfg = PendulumConfig {
        pivot_height: 100.0,
        wall_x: 100.0,
        h,
        ..PendulumConfig::default()
    };
    let mut p = Pendulum::new(&cfg).unwrap();
    let e0 = p.energy();
    let (mut drift, mut ke) = (0.0f64, 0.0f64);
    for _ in 0..cfg.steps().min((1.0 / h).round() as usize) {
        assert!(p.contacts().is_empty());
        p.advance_free().unwrap();
        drift = drift.max((p.energy() - e0).abs());
        ke = ke.max(p.kinetic_energy());
    }
    (drift, ke)
}

#[test]
fn energy_is_conserved_without_contacts() {
    // 1000 steps of 1 ms: the chain falls from 45 degrees and whips through the vertical.
    let (drift, ke) = free_drift(1e-3);
    let (half, _) = free_drift(5e-4);
    eprintln!("1000 steps of 1 ms: max |E - E0| = {drift:.3e} J (max kinetic {ke:.1} J); 2000 of 0.5 ms: {half:.3e} J");
    assert!(drift < 0.6, "max |E - E0| = {drift} J");
    assert!(
        drift < 1.2e-3 * ke,
        "{drift} J against {ke} J of kinetic energy"
    );
    // First order in h: the semi-implicit Euler error, not a modelling error.
    assert!(
        (1.8..2.2).contains(&(drift / half)),
        "drift ratio {}",
        drift / half
    );
}

/// One link dropped on the floor from 45 degrees above the horizontal; returns the ratio of
/// the rebound normal velocity to the impact one (the step's J) and of the sphere's vertical
/// velocities after and before the impact step.
fn rebound(mu: f64, spec: &TestSolver) -> (f64, f64) {
    rebound_with(mu, 0.0, spec)
}

fn rebound_with(mu: f64, restitution_threshold: f64, spec: &TestSolver) -> (f64, f64) {
    let r = 0.25;
    let cfg = PendulumConfig {
        n_links: 1,
        mu,
        restitution_threshold,
        pivot_height: 0.1 + r,
        wall_x: 100.0,
        initial_angle: 0.75 * std::f64::consts::PI,
        initial_rate: 0.0,
        ..PendulumConfig::default()
    };
    let mut p = Pendulum::new(&cfg).unwrap();
    for _ in 0..2000 {
        let cs = p.contact_step().unwrap();
        if cs.contacts.is_empty() {
            p.advance(&cs, &[]).unwrap();
            continue;
        }
        let s = spec.solve(&cs.problem, None);
        assert!(s.metrics.natural_map <= 1e-10, "{:?}", s.status);
        let j = p.contact_jacobian(&cs.contacts[0]);
        let v_minus = (j.row(0) * &p.qdot)[0];
        let vz_before = p.sphere_velocities()[0].z;
        p.advance(&cs, &s.r).unwrap();
        if s.r[0] > 0.0 {
            let v_plus = (j.row(0) * &p.qdot)[0];
            let vz_after = p.sphere_velocities()[0].z;
            eprintln!("mu {mu}: impact v- = {v_minus:.6}, v+ = {v_plus:.6}, vz {vz_before:.6} -> {vz_after:.6}");
            return (v_plus / -v_minus, vz_after / -vz_before);
        }
    }
    panic!("no impact");
}

#[test]
fn a_dropped_link_rebounds_with_the_restitution() {
    // One degree of freedom makes W rank one; PGS solves the sliding impact exactly, the
    // Newton-type solvers (todorov, lm) stop at a local minimum there (natural map 8e-2)
    // and solve it only without friction.
    let pgs = TestSolver::new("coulomb", "pgs", 1e-12, 1000);
    let todorov = TestSolver::new("implicit-ncp", "todorov", 1e-12, 100);
    for (mu, spec) in [(0.0, &pgs), (0.5, &pgs), (0.0, &todorov)] {
        let (normal, vertical) = rebound(mu, spec);
        assert!((normal - 0.7).abs() < 1e-8, "mu {mu}: {normal}");
        assert!((vertical - 0.7).abs() < 0.01, "mu {mu}: {vertical}");
    }
}

#[test]
fn impacts_slower_than_the_threshold_do_not_bounce() {
    let cfg = PendulumConfig {
        restitution_threshold: 0.5,
        ..PendulumConfig::default()
    };
    assert_eq!(cfg.restitution_at(-0.4), 0.0);
    assert_eq!(cfg.restitution_at(-0.6), 0.7);
    // The dropped link hits at a few m/s: above a 10 m/s threshold it stops dead.
    let pgs = TestSolver::new("coulomb", "pgs", 1e-12, 1000);
    let (normal, _) = rebound_with(0.0, 10.0, &pgs);
    assert!(normal.abs() < 1e-8, "{normal}");
    let bad = "restitution_threshold = -1.0"
        .parse::<toml::Table>()
        .unwrap();
    let e = PendulumConfig::from_table(&bad)
        .and_then(|c| Pendulum::new(&c).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`restitution_threshold`"), "{e}");
}

/// Energy change of the first impact of the paper's run (the last sphere hits the floor
/// sliding at 10.7 m/s), solved exactly.
fn first_impact(mu: f64, restitution: f64) -> (f64, Vec<f64>, Vec<f64>) {
    let mut p = Pendulum::new(&PendulumConfig {
        mu,
        restitution,
        ..PendulumConfig::default()
    })
    .unwrap();
    let spec = TestSolver::new("coulomb", "pgs", 1e-12, 10_000);
    loop {
        let cs = p.contact_step().unwrap();
        let r = if cs.contacts.is_empty() {
            Vec::new()
        } else {
            spec.solve(&cs.problem, None).r
        };
        let j = p.stacked_jacobian(&cs.contacts);
        let (e0, before) = (p.energy(), &j * &p.qdot);
        p.advance(&cs, &r).unwrap();
        if r.first().is_some_and(|&rn| rn > 0.0) {
            let after = &j * &p.qdot;
            return (
                p.energy() - e0,
                before.iter().copied().collect(),
                after.iter().copied().collect(),
            );
        }
    }
}

#[test]
fn newton_restitution_with_friction_can_gain_energy() {
    // Kane's paradox: the normal impulse reverses the slip through W_nt, and friction
    // opposing the reversed slip then pushes along the approach. Without friction, or
    // without restitution, the impact dissipates.
    let (gain, before, after) = first_impact(0.5, 0.7);
    eprintln!("first impact, mu 0.5, e 0.7: dE = {gain:.2} J, v- = {before:?}, v+ = {after:?}");
    assert!(
        before[0] < 0.0 && before[1] > 0.0 && after[1] < 0.0,
        "the slip reverses"
    );
    assert!((after[0] / -before[0] - 0.7).abs() < 1e-8);
    assert!(gain > 100.0, "{gain}");
    let (no_friction, ..) = first_impact(0.0, 0.7);
    let (plastic, ..) = first_impact(0.5, 0.0);
    eprintln!("mu 0: dE = {no_friction:.2} J; e 0: dE = {plastic:.2} J");
    assert!(no_friction < 0.0 && plastic < 0.0);
}

#[test]
fn the_paper_run_takes_2000_steps_with_the_todorov_solver() {
    let mut p = Pendulum::new(&PendulumConfig::default()).unwrap();
    assert_relative_eq!(
        p.sphere_positions()[11].z,
        10.0 - 12.0 * (0.25 * std::f64::consts::PI).cos(),
        epsilon = 1e-12
    );
    let spec = TestSolver::new("implicit-ncp", "todorov", 1e-8, 100);
    let e0 = p.energy();
    let mut e_max = e0;
    let (mut steps_with_contacts, mut max_nc, mut converged, mut max_overlap) = (0, 0, 0, 0.0f64);
    for _ in 0..2000 {
        let cs = p.contact_step().unwrap();
        let r = if cs.contacts.is_empty() {
            Vec::new()
        } else {
            steps_with_contacts += 1;
            max_nc = max_nc.max(cs.contacts.len());
            let s = spec.solve(&cs.problem, None);
            converged += usize::from(s.metrics.natural_map <= 1e-8);
            s.r
        };
        p.advance(&cs, &r).unwrap();
        max_overlap = max_overlap.max(p.max_overlap());
        e_max = e_max.max(p.energy());
    }
    let obs = p.observables();
    eprintln!(
        "2000 steps: {steps_with_contacts} with contacts ({converged} converged), max nc {max_nc}, energy {e0:.2} -> {:.2} J (max {e_max:.2}), max overlap {max_overlap:.2e} m, {obs:?}",
        p.energy()
    );
    assert!(
        steps_with_contacts > 100,
        "the chain reaches the floor within 2 s"
    );
    assert!(
        100 * converged >= 99 * steps_with_contacts,
        "{converged} of {steps_with_contacts}"
    );
    // The first floor impact gains energy (Kane's paradox, see the module doc); nothing
    // else should.
    assert!(e_max < 1.3 * e0, "{e_max} J from {e0} J");
    assert!(max_overlap < 0.01, "{max_overlap}");
    assert_eq!(
        obs.iter().map(|o| o.0).collect::<Vec<_>>(),
        [
            "last_z",
            "last_vz",
            "last_y",
            "energy",
            "n_contacts",
            "max_overlap"
        ]
    );
}

#[test]
fn bad_parameters_are_named_and_unknown_keys_rejected() {
    let parse = |s: &str| PendulumConfig::from_table(&s.parse::<toml::Table>().unwrap());
    let e = parse("n_links = 12\nlinks = 3").unwrap_err().to_string();
    assert!(e.contains("links"), "{e}");
    for (text, key) in [
        ("n_links = 0", "`n_links`"),
        ("link_length = 0.0", "`link_length`"),
        ("sphere_radius = 0.6", "`sphere_radius`"),
        ("sphere_mass = -1.0", "`sphere_mass`"),
        ("restitution = 1.5", "`restitution`"),
        ("mu = -0.5", "`mu`"),
        ("h = nan", "`h`"),
        ("wall_x = -4.0", "`wall_x`"),
        ("floor_thickness = -0.2", "`floor_thickness`"),
        ("margin = -1.0", "`margin`"),
        ("initial_angle = inf", "`initial_angle`"),
        ("hinge_skew = nan", "`hinge_skew`"),
        ("pivot_height = 3.0", "`initial_angle`"),
    ] {
        let e = Pendulum::new(&parse(text).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
    let mut p = Pendulum::new(&PendulumConfig::default()).unwrap();
    let cs = p.contact_step().unwrap();
    assert!(cs.contacts.is_empty());
    assert!(p
        .advance(&cs, &[1.0, 0.0, 0.0])
        .unwrap_err()
        .to_string()
        .contains("expected 0"));
}

/// The tangle's state on a chain whose kinematics and dynamics come from its tree.
fn on_tree(p: &Pendulum) -> Pendulum {
    let mut t = p.clone();
    t.spatial = Some(Arc::new(chain_model(&p.config).unwrap()));
    t
}

/// The tangle's environment, hinge angles and rates on a chain with skewed hinges.
fn skewed(skew: f64) -> Pendulum {
    let t = tangle();
    // Built high (the straight chain would start in the tangle's floor), then moved to
    // the tangle's environment, which may change after `new`.
    let mut p = Pendulum::new(&PendulumConfig {
        hinge_skew: skew,
        pivot_height: 20.0,
        ..t.config.clone()
    })
    .unwrap();
    p.config.pivot_height = t.config.pivot_height;
    p.q = t.q.clone();
    p.qdot = t.qdot.clone();
    p
}

#[test]
fn the_tree_without_skew_is_the_planar_chain() {
    let planar = tangle();
    let tree = on_tree(&planar);
    assert!(tree.is_spatial() && !planar.is_spatial());
    let close = |a: &DMatrix<f64>, b: &DMatrix<f64>, what: &str| {
        let err = (a - b).amax();
        assert!(err < 1e-10 * (1.0 + a.amax()), "{what}: {err:e}");
    };
    close(&tree.mass_matrix(), &planar.mass_matrix(), "M");
    let col = |v: DVector<f64>| DMatrix::from_column_slice(v.len(), 1, v.as_slice());
    close(&col(tree.coriolis()), &col(planar.coriolis()), "Coriolis");
    close(
        &col(tree.gravity_forces()),
        &col(planar.gravity_forces()),
        "gravity",
    );
    close(&col(tree.bias_forces()), &col(planar.bias_forces()), "bias");
    for (a, b) in tree
        .sphere_positions()
        .iter()
        .zip(planar.sphere_positions())
    {
        assert!((a - b).norm() < 1e-12, "{a} vs {b}");
    }
    let contacts = planar.contacts();
    assert!(contacts.len() >= 4, "{contacts:?}");
    for c in &contacts {
        close(
            &tree.contact_jacobian(c),
            &planar.contact_jacobian(c),
            &format!("{:?}", c.key),
        );
    }
}

#[test]
fn a_skewed_chain_has_consistent_dynamics_and_point_jacobians() {
    let p = skewed(0.3);
    assert!(p.is_spatial());
    let m = p.mass_matrix();
    assert!((&m - m.transpose()).amax() < 1e-12 * m.amax());
    let eig = m.clone().symmetric_eigen().eigenvalues;
    assert!(eig.min() > 0.0, "{eig}");
    bias_matches_finite_differences(&p);
    // A material point of each sphere, carried by its link's pose: its velocity along
    // `q'` by central differences against the point Jacobian.
    let model = p.spatial.clone().unwrap();
    let poses = model.body_poses(&p.q);
    let offset = p.config.sphere_radius * Vector3::new(0.6, -0.48, 0.64);
    let eps = 1e-6;
    for (i, pose) in poses.iter().enumerate() {
        let body_point = pose.rotation.transpose() * offset + p.centre_in_link();
        let at = |q: &DVector<f64>| p.pivot() + model.body_poses(q)[i].transform_point(&body_point);
        let fd = (at(&(&p.q + eps * &p.qdot)) - at(&(&p.q - eps * &p.qdot))) / (2.0 * eps);
        let v = |offset: Vector3<f64>| {
            let u = p.point_jacobian(i, offset) * &p.qdot;
            Vector3::new(u[0], u[1], u[2])
        };
        let j = v(offset);
        assert!(
            (j - fd).amax() < 1e-6 * (1.0 + fd.amax()),
            "sphere {i}: {j} vs {fd}"
        );
        // The sphere centres' Jacobians are the same points at zero offset.
        let centre = v(Vector3::zeros()) - p.sphere_velocities()[i];
        assert!(centre.amax() < 1e-12 * (1.0 + fd.amax()), "{centre}");
    }
}

#[test]
fn a_skewed_chain_leaves_the_plane_and_keeps_its_energy_in_free_fall() {
    let run = |skew: f64| {
        let cfg = PendulumConfig {
            pivot_height: 100.0,
            wall_x: 100.0,
            hinge_skew: skew,
            ..PendulumConfig::default()
        };
        let mut p = Pendulum::new(&cfg).unwrap();
        let e0 = p.energy();
        let (mut drift, mut ke, mut y) = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..1000 {
            p.advance_free().unwrap();
            drift = drift.max((p.energy() - e0).abs());
            ke = ke.max(p.kinetic_energy());
            y = y.max(
                p.sphere_positions()
                    .iter()
                    .map(|s| s.y.abs())
                    .fold(0.0, f64::max),
            );
        }
        (drift, ke, y)
    };
    let (flat_drift, flat_ke, flat_y) = run(0.0);
    let (drift, ke, y) = run(0.2);
    eprintln!("free fall, 1 s: planar drift {flat_drift:.2e} J of {flat_ke:.1} J, y = {flat_y}; skewed drift {drift:.2e} J of {ke:.1} J, max |y| = {y:.3} m");
    assert_eq!(flat_y, 0.0);
    assert!(y > 0.1, "max |y| = {y}");
    // The same first-order integrator error as the planar chain's.
    assert!(drift < 1.2e-3 * ke, "{drift} J against {ke} J");
}

#[test]
fn the_chain_frame_is_orthonormal_and_planar_in_the_plane() {
    for n in [
        Vector3::new(0.6, 0.0, 0.8),
        Vector3::new(0.36, 0.48, 0.8),
        Vector3::new(0.0, 1.0, 0.0),
        Vector3::new(0.0, -0.6, -0.8),
    ] {
        let f = chain_frame(n);
        assert!(
            (f * f.transpose() - Matrix3::identity()).amax() < 1e-12,
            "{f}"
        );
        assert!((f.determinant() - 1.0).abs() < 1e-12);
        assert_eq!(f.row(0).transpose(), n);
        if n.y == 0.0 {
            assert_eq!(f, planar_frame(n));
        }
    }
}
