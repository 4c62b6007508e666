//! Checks of CRBA, RNEA and forward dynamics against independent computations: body Jacobians
//! by finite differences of forward kinematics, the power balance of mechanical energy, and the
//! conservation (or gravity-driven change) of the spatial momentum.

mod common;

use common::{
    body_jacobians_fd, fixture_models, random_configuration, random_description, random_vector,
    rel_err, rel_err_v, rng,
};
use contactlab_multibody::{Force, Model};
use nalgebra::{DMatrix, DVector, Vector3};
use proptest::prelude::*;

/// `M` from body Jacobians by finite differences: `sum_k J_k' I_k J_k`.
fn mass_matrix_from_fd_jacobians(model: &Model, q: &DVector<f64>) -> DMatrix<f64> {
    let jac = body_jacobians_fd(model, q, 1e-6);
    let mut m = DMatrix::zeros(model.nv(), model.nv());
    for (b, j) in model.bodies().iter().zip(&jac) {
        let i6 = b.inertia.to_matrix();
        m += j.transpose() * i6 * j;
    }
    m
}

fn check_mass_matrix(model: &Model, q: &DVector<f64>) {
    let m = model.mass_matrix(q);
    assert_eq!(m.shape(), (model.nv(), model.nv()));
    assert!((&m - m.transpose()).abs().max() <= 1e-14 * m.abs().max());
    let eig = m.clone().symmetric_eigen().eigenvalues;
    assert!(eig.min() > 0.0, "M not positive definite: {eig}");
    let fd = mass_matrix_from_fd_jacobians(model, q);
    let e = rel_err(&m, &fd);
    assert!(e < 1e-7, "CRBA vs sum J'IJ (finite differences): {e:e}");
}

fn check_rnea_identity(model: &Model, q: &DVector<f64>, v: &DVector<f64>, a: &DVector<f64>) {
    let m = model.mass_matrix(q);
    let h = model.bias_forces(q, v);
    let tau = model.rnea(q, v, a);
    let e = rel_err_v(&tau, &(&m * a + &h));
    assert!(e < 1e-12, "RNEA(q, v, a) vs M a + h: {e:e}");
    // Columns of M from RNEA without gravity and velocity: an independent route to M.
    let zero = DVector::zeros(model.nv());
    for c in 0..model.nv() {
        let mut ec = DVector::zeros(model.nv());
        ec[c] = 1.0;
        let col = model.rnea_with_gravity(q, &zero, &ec, &Vector3::zeros());
        let e = rel_err_v(&col, &m.column(c).into_owned());
        assert!(e < 1e-12, "RNEA column {c} vs CRBA: {e:e}");
    }
    // Forward dynamics inverts RNEA.
    let back = model.forward_dynamics(q, v, &tau).unwrap();
    let e = rel_err_v(&back, a);
    assert!(e < 1e-9, "forward dynamics of RNEA's tau: {e:e}");
}

/// `d/dt (T + V)` along the motion under `tau`, by a central difference along the tangent
/// `(v, a)`, must equal the power `v' tau`.
fn check_power_balance(model: &Model, q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>) {
    let a = model.forward_dynamics(q, v, tau).unwrap();
    let dt = 1e-5;
    let e_plus = model.total_energy(&model.integrate(q, v, dt), &(v + &a * dt));
    let e_minus = model.total_energy(&model.integrate(q, v, -dt), &(v - &a * dt));
    let de_dt = (e_plus - e_minus) / (2.0 * dt);
    let power = v.dot(tau);
    let scale =
        1.0 + power.abs() + model.kinetic_energy(q, v) + v.norm() * model.gravity_forces(q).norm();
    assert!(
        (de_dt - power).abs() < 1e-6 * scale,
        "dE/dt {de_dt} vs v'tau {power} (scale {scale})"
    );
    // The same identity without finite differences: 1/2 v'Mv equals the bodies' kinetic energy.
    let t = 0.5 * v.dot(&(model.mass_matrix(q) * v));
    assert!((t - model.kinetic_energy(q, v)).abs() < 1e-12 * (1.0 + t));
}

/// The spatial momentum's rate along a free motion equals the gravity wrench on the whole tree
/// (zero without gravity), for trees whose every root is floating.
fn check_momentum_rate(model: &Model, q: &DVector<f64>, v: &DVector<f64>) {
    let zero = DVector::zeros(model.nv());
    let a = model.forward_dynamics(q, v, &zero).unwrap();
    let dt = 1e-5;
    let hp = model.momentum(&model.integrate(q, v, dt), &(v + &a * dt));
    let hm = model.momentum(&model.integrate(q, v, -dt), &(v - &a * dt));
    let rate = (hp - hm) * (1.0 / (2.0 * dt));
    let mg = model.gravity * model.total_mass();
    let want = Force::new(model.center_of_mass(q).cross(&mg), mg);
    let h = model.momentum(q, v);
    let scale = 1.0 + h.to_vector().norm() + mg.norm();
    let e = (rate - want).to_vector().abs().max();
    assert!(
        e < 1e-6 * scale,
        "momentum rate {rate:?} vs gravity wrench {want:?}"
    );
}

#[test]
fn fixture_trees_satisfy_the_identities() {
    let mut r = rng(7);
    for (name, model) in fixture_models() {
        for _ in 0..3 {
            let q = random_configuration(&model, &mut r);
            let v = random_vector(&mut r, model.nv(), 1.0);
            let a = random_vector(&mut r, model.nv(), 1.0);
            let tau = random_vector(&mut r, model.nv(), 3.0);
            eprintln!("{name}");
            check_mass_matrix(&model, &q);
            check_rnea_identity(&model, &q, &v, &a);
            check_power_balance(&model, &q, &v, &tau);
            check_power_balance(&model, &q, &v, &DVector::zeros(model.nv()));
            if name != "double_pendulum" {
                check_momentum_rate(&model, &q, &v);
                let mut free = model.clone();
                free.gravity = Vector3::zeros();
                check_momentum_rate(&free, &q, &v);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_trees_satisfy_the_identities(seed in any::<u64>(), n in 1usize..9, floating in any::<bool>()) {
        let mut r = rng(seed);
        let model = random_description(&mut r, n, floating).build().unwrap();
        let q = random_configuration(&model, &mut r);
        let v = random_vector(&mut r, model.nv(), 1.0);
        let a = random_vector(&mut r, model.nv(), 1.0);
        let tau = random_vector(&mut r, model.nv(), 2.0);
        check_mass_matrix(&model, &q);
        check_rnea_identity(&model, &q, &v, &a);
        check_power_balance(&model, &q, &v, &tau);
        if floating {
            let mut free = model.clone();
            free.gravity = Vector3::zeros();
            check_momentum_rate(&model, &q, &v);
            check_momentum_rate(&free, &q, &v);
        }
    }
}

/// A free flight of the quadruped without gravity: semi-implicit Euler keeps the energy within
/// O(dt) and the spatial momentum about the origin nearly constant.
#[test]
fn free_flight_conserves_energy_and_momentum() {
    let (_, model) = fixture_models().remove(2);
    let mut model = model;
    model.gravity = Vector3::zeros();
    let mut r = rng(3);
    let mut q = random_configuration(&model, &mut r);
    let mut v = random_vector(&mut r, model.nv(), 1.0);
    let zero = DVector::zeros(model.nv());
    let (e0, h0) = (model.total_energy(&q, &v), model.momentum(&q, &v));
    let dt = 2e-4;
    let mut worst_e = 0.0f64;
    for _ in 0..2500 {
        let (qn, vn) = model.step(&q, &v, &zero, dt).unwrap();
        q = qn;
        v = vn;
        worst_e = worst_e.max((model.total_energy(&q, &v) - e0).abs());
    }
    let h1 = model.momentum(&q, &v);
    let dh = (h1 - h0).to_vector().abs().max();
    eprintln!("E0 {e0}, worst |E - E0| {worst_e:e}, |h1 - h0| {dh:e}");
    assert!(worst_e < 1e-2 * e0, "energy drift {worst_e} of {e0}");
    assert!(
        dh < 1e-3 * (1.0 + h0.to_vector().norm()),
        "momentum drift {dh}"
    );
    // The quaternion stays unit.
    let nq = q.rows(3, 4).norm();
    assert!((nq - 1.0).abs() < 1e-12);
}

/// The double pendulum released from rest swings with its energy (kinetic + potential)
/// conserved to O(dt) by semi-implicit Euler, under gravity.
#[test]
fn pendulum_swing_conserves_energy() {
    let (_, model) = fixture_models().remove(0);
    let mut q = DVector::from_vec(vec![1.0, -0.5]);
    let mut v = DVector::zeros(2);
    let zero = DVector::zeros(2);
    let e0 = model.total_energy(&q, &v);
    let dt = 1e-4;
    let mut worst = 0.0f64;
    let mut max_speed = 0.0f64;
    for _ in 0..20000 {
        let (qn, vn) = model.step(&q, &v, &zero, dt).unwrap();
        q = qn;
        v = vn;
        worst = worst.max((model.total_energy(&q, &v) - e0).abs());
        max_speed = max_speed.max(v.norm());
    }
    eprintln!("E0 {e0}, worst |E - E0| {worst:e}, max |v| {max_speed}");
    assert!(max_speed > 1.0, "the pendulum should swing");
    assert!(worst < 5e-3, "energy drift {worst}");
}

/// A floating tree in free fall: every body accelerates with gravity, no joint moves.
#[test]
fn free_fall_accelerates_with_gravity() {
    let (_, model) = fixture_models().remove(2);
    let mut r = rng(11);
    let q = random_configuration(&model, &mut r);
    let zero = DVector::zeros(model.nv());
    let a = model.forward_dynamics(&q, &zero, &zero).unwrap();
    // Base: the linear acceleration in base coordinates is R' g, no angular acceleration.
    let pose = model.base_pose(&q, 0);
    let want = pose.rotation.transpose() * model.gravity;
    for k in 0..3 {
        assert!((a[k] - want[k]).abs() < 1e-10, "{a}");
        assert!(a[3 + k].abs() < 1e-10, "{a}");
    }
    assert!(a.rows(6, 12).abs().max() < 1e-10, "{a}");
}
