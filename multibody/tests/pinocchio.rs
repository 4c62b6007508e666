//! Agreement with Pinocchio (an outside implementation): `fixtures/pinocchio_*.json` were
//! written by `fixtures/pinocchio_fixtures.py` from the same descriptions the tests load.

mod common;

use common::{crate_dir, fixture_models, rel_err, rel_err_v};
use contactlab_multibody::Model;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn vector(v: &Value) -> DVector<f64> {
    DVector::from_iterator(
        v.as_array().unwrap().len(),
        v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()),
    )
}

fn matrix(v: &Value) -> DMatrix<f64> {
    let rows: Vec<DVector<f64>> = v.as_array().unwrap().iter().map(vector).collect();
    let (r, c) = (rows.len(), rows.first().map_or(0, |x| x.len()));
    DMatrix::from_fn(r, c, |i, j| rows[i][j])
}

fn fixture(name: &str) -> Value {
    let path = crate_dir().join(format!("fixtures/pinocchio_{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs `check` on every state of every fixture and returns the worst error it reports.
fn worst(check: impl Fn(&Model, &Value, &Value) -> f64) -> f64 {
    let mut worst = 0.0f64;
    for (name, model) in fixture_models() {
        let fx = fixture(name);
        assert_eq!(
            fx["nq"].as_u64().unwrap() as usize,
            model.nq(),
            "{name}: nq"
        );
        assert_eq!(
            fx["nv"].as_u64().unwrap() as usize,
            model.nv(),
            "{name}: nv"
        );
        let states = fx["states"].as_array().unwrap();
        assert!(!states.is_empty());
        for (k, s) in states.iter().enumerate() {
            let e = check(&model, &fx, s);
            assert!(e.is_finite(), "{name} state {k}: error not finite");
            assert!(e <= TOL, "{name} state {k}: error {e:e} > {TOL:e}");
            worst = worst.max(e);
        }
    }
    eprintln!("worst relative error: {worst:e}");
    worst
}

#[test]
fn mass_matrix_matches_pinocchio() {
    worst(|m, _, s| rel_err(&m.mass_matrix(&vector(&s["q"])), &matrix(&s["M"])));
}

#[test]
fn nonlinear_effects_match_pinocchio() {
    worst(|m, _, s| {
        rel_err_v(
            &m.bias_forces(&vector(&s["q"]), &vector(&s["v"])),
            &vector(&s["h"]),
        )
    });
}

#[test]
fn gravity_forces_match_pinocchio() {
    worst(|m, _, s| {
        rel_err_v(
            &m.gravity_forces(&vector(&s["q"])),
            &vector(&s["gravity_forces"]),
        )
    });
}

#[test]
fn rnea_matches_pinocchio() {
    worst(|m, _, s| {
        rel_err_v(
            &m.rnea(&vector(&s["q"]), &vector(&s["v"]), &vector(&s["a"])),
            &vector(&s["tau"]),
        )
    });
}

#[test]
fn forward_dynamics_matches_pinocchio_aba() {
    worst(|m, _, s| {
        let a = m
            .forward_dynamics(&vector(&s["q"]), &vector(&s["v"]), &vector(&s["tau_in"]))
            .unwrap();
        rel_err_v(&a, &vector(&s["aba_acceleration"]))
    });
}

#[test]
fn point_jacobians_and_positions_match_pinocchio() {
    worst(|m, fx, s| {
        let q = vector(&s["q"]);
        let mut e = 0.0f64;
        let points = fx["contact_points"].as_array().unwrap();
        assert!(!points.is_empty());
        for (k, p) in points.iter().enumerate() {
            let body = m.body_index(p["link"].as_str().unwrap()).unwrap();
            let point: Vector3<f64> = Vector3::from_iterator(vector(&p["point"]).iter().copied());
            let j = m.point_jacobian(&q, body, &point);
            let j = DMatrix::from_fn(3, m.nv(), |r, c| j[(r, c)]);
            e = e.max(rel_err(&j, &matrix(&s["point_jacobians"][k])));
            let x = m.point_position(&q, body, &point);
            let x = DVector::from_iterator(3, x.iter().copied());
            e = e.max(rel_err_v(&x, &vector(&s["point_positions"][k])));
        }
        e
    });
}

#[test]
fn link_poses_match_pinocchio() {
    worst(|m, _, s| {
        let poses = m.body_poses(&vector(&s["q"]));
        let mut e = 0.0f64;
        for (b, t) in m.bodies().iter().zip(&poses) {
            let want = &s["link_poses"][b.name.as_str()];
            let r = matrix(&want["rotation"]);
            let r = Matrix3::from_fn(|i, j| r[(i, j)]);
            e = e.max((t.rotation - r).abs().max());
            let p = vector(&want["translation"]);
            e = e.max((t.translation - Vector3::new(p[0], p[1], p[2])).abs().max());
        }
        e
    });
}

#[test]
fn energies_and_momentum_match_pinocchio() {
    worst(|m, _, s| {
        let (q, v) = (vector(&s["q"]), vector(&s["v"]));
        let scale = |x: f64| x.abs().max(1.0);
        let want_t = s["kinetic_energy"].as_f64().unwrap();
        let want_v = s["potential_energy"].as_f64().unwrap();
        let mut e = (m.kinetic_energy(&q, &v) - want_t).abs() / scale(want_t);
        e = e.max((m.potential_energy(&q) - want_v).abs() / scale(want_v));
        let h = m.momentum(&q, &v);
        let ang = vector(&s["momentum_angular_about_origin"]);
        let lin = vector(&s["momentum_linear"]);
        for k in 0..3 {
            e = e.max((h.angular[k] - ang[k]).abs() / ang.abs().max().max(1.0));
            e = e.max((h.linear[k] - lin[k]).abs() / lin.abs().max().max(1.0));
        }
        e
    });
}
