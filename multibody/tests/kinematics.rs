//! Kinematics: point and contact Jacobians against finite differences of forward kinematics,
//! body Jacobians, the contact frame, and integration of the configuration.

mod common;

use common::{
    body_jacobians_fd, fixture_models, random_configuration, random_description, random_vector, rng,
};
use contactlab_multibody::{contact_frame, Model};
use nalgebra::{DVector, Vector3};
use proptest::prelude::*;

/// `v_p = J_p v` against `(p(q ⊕ v dt) - p(q ⊕ -v dt)) / 2dt` and the point velocity from the
/// body velocities; the contact Jacobian is the frame's rows of `J_p`.
fn check_point_jacobians(model: &Model, q: &DVector<f64>, v: &DVector<f64>) {
    let dt = 1e-6;
    let (qp, qm) = (model.integrate(q, v, dt), model.integrate(q, v, -dt));
    for (k, b) in model.bodies().iter().enumerate() {
        let points: Vec<Vector3<f64>> = b
            .spheres
            .iter()
            .map(|s| s.offset)
            .chain([b.com, Vector3::new(0.3, -0.1, 0.2)])
            .collect();
        for p in points {
            let j = model.point_jacobian(q, k, &p);
            let vp = &j * v;
            let fd =
                (model.point_position(&qp, k, &p) - model.point_position(&qm, k, &p)) / (2.0 * dt);
            let scale = 1.0 + fd.norm();
            assert!(
                (vp - fd).norm() < 1e-7 * scale,
                "body {k}: J v {vp} vs FD {fd}"
            );
            let direct = model.point_velocity(q, v, k, &p);
            assert!((vp - direct).norm() < 1e-12 * scale);
            let n = Vector3::new(0.2, -0.5, 1.0);
            let frame = contact_frame(&n);
            let jc = model.contact_jacobian(q, k, &p, &frame);
            let vc = &jc * v;
            assert!((vc[0] - n.normalize().dot(&vp)).abs() < 1e-12 * scale);
            assert!((vc[1] - frame.column(1).dot(&vp)).abs() < 1e-12 * scale);
            assert!((vc[2] - frame.column(2).dot(&vp)).abs() < 1e-12 * scale);
        }
    }
}

fn check_body_jacobians(model: &Model, q: &DVector<f64>) {
    let fd = body_jacobians_fd(model, q, 1e-6);
    for (k, jfd) in fd.iter().enumerate() {
        let j = model.body_jacobian(q, k);
        let e = (&j - jfd).abs().max();
        assert!(e < 1e-7, "body {k}: body Jacobian vs FD {e:e}");
    }
}

#[test]
fn fixture_jacobians_match_finite_differences() {
    let mut r = rng(5);
    for (_, model) in fixture_models() {
        for _ in 0..3 {
            let q = random_configuration(&model, &mut r);
            let v = random_vector(&mut r, model.nv(), 1.0);
            check_point_jacobians(&model, &q, &v);
            check_body_jacobians(&model, &q);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_tree_jacobians_match_finite_differences(seed in any::<u64>(), n in 1usize..9, floating in any::<bool>()) {
        let mut r = rng(seed);
        let model = random_description(&mut r, n, floating).build().unwrap();
        let q = random_configuration(&model, &mut r);
        let v = random_vector(&mut r, model.nv(), 1.0);
        check_point_jacobians(&model, &q, &v);
        check_body_jacobians(&model, &q);
    }
}

#[test]
fn contact_frame_is_right_handed_normal_first() {
    for n in [
        Vector3::new(0.0, 0.0, 1.0),
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(-0.3, 0.8, 0.1),
        Vector3::new(0.0, 0.0, -2.0),
    ] {
        let f = contact_frame(&n);
        assert!((f.column(0) - n.normalize()).norm() < 1e-15);
        assert!(
            (f.transpose() * f - nalgebra::Matrix3::identity())
                .abs()
                .max()
                < 1e-15
        );
        assert!((f.determinant() - 1.0).abs() < 1e-14);
    }
}

#[test]
fn integration_moves_the_base_along_its_body_twist() {
    let (_, model) = fixture_models().remove(1);
    let mut r = rng(9);
    let q = random_configuration(&model, &mut r);
    let v = random_vector(&mut r, model.nv(), 1.0);
    // Two half steps equal one step (the exponential of a constant twist is a flow).
    let full = model.integrate(&q, &v, 0.2);
    let half = model.integrate(&model.integrate(&q, &v, 0.1), &v, 0.1);
    assert!((&full - &half).abs().max() < 1e-12, "{full} vs {half}");
    // The base quaternion stays unit; the base velocity is in the base frame: a pure forward
    // body velocity moves the base along its own x axis.
    assert!((full.rows(3, 4).norm() - 1.0).abs() < 1e-14);
    let mut vx = DVector::zeros(model.nv());
    vx[0] = 1.0;
    let moved = model.integrate(&q, &vx, 0.5);
    let pose = model.base_pose(&q, 0);
    let dp = Vector3::new(moved[0] - q[0], moved[1] - q[1], moved[2] - q[2]);
    assert!((dp - pose.rotation.column(0) * 0.5).norm() < 1e-14);
    // Joint coordinates move linearly.
    for b in model.bodies().iter().filter(|b| b.joint.nv() == 1) {
        let want = q[b.q_offset] + 0.2 * v[b.v_offset];
        assert!((full[b.q_offset] - want).abs() < 1e-14);
    }
}

#[test]
fn normalize_restores_unit_quaternions() {
    let (_, model) = fixture_models().remove(2);
    let mut q = model.neutral_configuration();
    q[6] = 3.0;
    q[3] = 1.0;
    model.normalize(&mut q);
    assert!((q.rows(3, 4).norm() - 1.0).abs() < 1e-15);
    assert!((q[6] - 3.0 / 10f64.sqrt()).abs() < 1e-15);
}

#[test]
fn relative_contact_jacobian_is_the_difference_of_point_velocities() {
    let (_, model) = fixture_models().remove(2);
    let mut r = rng(21);
    let q = random_configuration(&model, &mut r);
    let v = random_vector(&mut r, model.nv(), 1.0);
    let (a, b) = (
        model.body_index("LF_foot").unwrap(),
        model.body_index("RH_shank").unwrap(),
    );
    let (pa, pb) = (Vector3::new(0.0, 0.0, -0.03), Vector3::new(0.01, 0.0, -0.1));
    let frame = contact_frame(&Vector3::new(0.3, 0.4, 0.5));
    let j = model.relative_contact_jacobian(&q, (a, &pa), (b, &pb), &frame);
    let want = frame.transpose()
        * (model.point_velocity(&q, &v, a, &pa) - model.point_velocity(&q, &v, b, &pb));
    assert!((&j * &v - want).norm() < 1e-12, "{}", &j * &v - want);
    // Columns of joints of neither leg nor the base are zero: the LH leg's joints.
    for name in ["LH_hip", "LH_thigh", "LH_shank"] {
        let c = model.bodies()[model.body_index(name).unwrap()].v_offset;
        assert_eq!(j.column(c).norm(), 0.0, "{name}");
    }
}

#[test]
fn ancestors_follow_the_parents() {
    let (_, model) = fixture_models().remove(2);
    let id = |n: &str| model.body_index(n).unwrap();
    assert!(model.is_ancestor(id("torso"), id("RF_foot")));
    assert!(model.is_ancestor(id("RF_thigh"), id("RF_foot")));
    assert!(model.is_ancestor(id("RF_foot"), id("RF_foot")));
    assert!(!model.is_ancestor(id("LF_thigh"), id("RF_foot")));
    assert!(!model.is_ancestor(id("RF_foot"), id("RF_thigh")));
}

#[test]
fn base_pose_round_trips_through_q() {
    use contactlab_multibody::config::set_base_pose;
    use contactlab_multibody::Transform;
    let (_, model) = fixture_models().remove(2);
    let mut q = model.neutral_configuration();
    let rot = nalgebra::Rotation3::from_euler_angles(0.4, -1.2, 2.9).into_inner();
    let pose = Transform::new(rot, Vector3::new(0.1, -0.2, 0.45));
    set_base_pose(&mut q, 0, &pose);
    let back = model.base_pose(&q, 0);
    assert!((back.rotation - pose.rotation).abs().max() < 1e-14);
    assert!((back.translation - pose.translation).abs().max() < 1e-15);
    assert!((q.rows(3, 4).norm() - 1.0).abs() < 1e-15);
    // The torso is the base: its world pose is the base pose.
    let torso = model.body_poses(&q)[0];
    assert!((torso.rotation - pose.rotation).abs().max() < 1e-14);
}
