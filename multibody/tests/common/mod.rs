//! Helpers shared by the integration tests: fixture models, random states and random trees,
//! and body Jacobians by finite differences of forward kinematics (independent of the crate's
//! Jacobian and CRBA code).
#![allow(dead_code)]

use contactlab_multibody::spatial::log_se3;
use contactlab_multibody::{
    Description, InertiaDescription, Joint, JointDescription, LinkDescription, Model,
    RotationDescription, SphereDescription,
};
use nalgebra::{DMatrix, DVector, Matrix3, Matrix6xX, Rotation3, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// The crate's directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A model from a file under the crate's directory.
pub fn load(relative: &str) -> Model {
    Model::from_path(crate_dir().join(relative)).expect("fixture description is valid")
}

/// The three fixture trees (also used for the Pinocchio fixtures).
pub fn fixture_models() -> Vec<(&'static str, Model)> {
    vec![
        ("double_pendulum", load("fixtures/double_pendulum.json")),
        ("mixed_tree", load("fixtures/mixed_tree.json")),
        ("quadruped", load("robots/quadruped.toml")),
    ]
}

/// A seeded generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A standard-normal-ish sample (sum of uniforms; tails do not matter here).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    (0..6).map(|_| rng.random::<f64>()).sum::<f64>() - 3.0
}

/// A random vector of `n` normal-ish samples scaled by `scale`.
pub fn random_vector(rng: &mut ChaCha8Rng, n: usize, scale: f64) -> DVector<f64> {
    DVector::from_fn(n, |_, _| scale * normal(rng))
}

/// A random configuration: base within a unit cube with a random orientation, angles in
/// (-pi, pi), prismatic displacements in (-0.3, 0.3).
pub fn random_configuration(model: &Model, rng: &mut ChaCha8Rng) -> DVector<f64> {
    let mut q = model.neutral_configuration();
    for b in model.bodies() {
        let i = b.q_offset;
        match b.joint {
            Joint::Floating => {
                for k in 0..3 {
                    q[i + k] = rng.random_range(-1.0..1.0);
                }
                let quat: Vec<f64> = (0..4).map(|_| normal(rng)).collect();
                let n = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
                for k in 0..4 {
                    q[i + 3 + k] = quat[k] / n;
                }
            }
            Joint::Revolute { .. } => q[i] = rng.random_range(-3.1..3.1),
            Joint::Prismatic { .. } => q[i] = rng.random_range(-0.3..0.3),
            Joint::Fixed => {}
        }
    }
    q
}

fn random_array(rng: &mut ChaCha8Rng, scale: f64) -> [f64; 3] {
    [0, 1, 2].map(|_| rng.random_range(-scale..scale))
}

/// A random tree of `n` links: a floating root (or a revolute one), then links hanging from
/// random earlier links with revolute, prismatic or fixed joints, random placements and axes,
/// and random inertias (principal moments satisfying the triangle inequality, random axes).
pub fn random_description(rng: &mut ChaCha8Rng, n: usize, floating: bool) -> Description {
    let mut links = Vec::new();
    for i in 0..n {
        let joint = if i == 0 {
            if floating {
                JointDescription::Floating
            } else {
                JointDescription::Revolute {
                    axis: random_array(rng, 1.0),
                }
            }
        } else {
            match rng.random_range(0..5) {
                0 => JointDescription::Prismatic {
                    axis: random_array(rng, 1.0),
                },
                1 => JointDescription::Fixed,
                _ => JointDescription::Revolute {
                    axis: random_array(rng, 1.0),
                },
            }
        };
        // Principal moments a <= b <= c with a + b >= c.
        let a = rng.random_range(0.01..0.1);
        let b = rng.random_range(a..0.1);
        let c = rng.random_range(b..(a + b));
        let r = Rotation3::from_euler_angles(
            rng.random_range(-3.0..3.0),
            rng.random_range(-1.5..1.5),
            rng.random_range(-3.0..3.0),
        );
        let m =
            r.matrix() * Matrix3::from_diagonal(&Vector3::new(a, b, c)) * r.matrix().transpose();
        let m = (m + m.transpose()) * 0.5;
        let rows = [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[(i, j)]));
        links.push(LinkDescription {
            name: format!("link{i}"),
            parent: (i > 0).then(|| format!("link{}", rng.random_range(0..i))),
            joint,
            translation: random_array(rng, 0.5),
            rotation: RotationDescription::Rpy(random_array(rng, 3.0)),
            mass: rng.random_range(0.2..3.0),
            com: random_array(rng, 0.2),
            inertia: InertiaDescription::Matrix(rows),
            spheres: vec![SphereDescription {
                radius: 0.05,
                offset: random_array(rng, 0.3),
            }],
            boxes: vec![],
        });
    }
    Description {
        name: "random".into(),
        gravity: [0.0, 0.0, -9.81],
        links,
    }
}

/// Body Jacobians (6 x nv, body coordinates, angular rows first) of every body by central
/// finite differences of forward kinematics along each velocity direction:
/// column `c` of body `k` is `log(T_k(q)^-1 T_k(q ⊕ eps e_c))` differenced.
pub fn body_jacobians_fd(model: &Model, q: &DVector<f64>, eps: f64) -> Vec<Matrix6xX<f64>> {
    let poses = model.body_poses(q);
    let mut jac = vec![Matrix6xX::zeros(model.nv()); model.num_bodies()];
    for c in 0..model.nv() {
        let mut e = DVector::zeros(model.nv());
        e[c] = 1.0;
        let plus = model.body_poses(&model.integrate(q, &e, eps));
        let minus = model.body_poses(&model.integrate(q, &e, -eps));
        for k in 0..model.num_bodies() {
            let inv = poses[k].inverse();
            let xp = log_se3(&inv.compose(&plus[k])).to_vector();
            let xm = log_se3(&inv.compose(&minus[k])).to_vector();
            jac[k].set_column(c, &((xp - xm) / (2.0 * eps)));
        }
    }
    jac
}

/// The largest absolute entry of `a - b`, relative to `max(1, max |b|)`.
pub fn rel_err(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    assert_eq!(a.shape(), b.shape());
    (a - b).abs().max() / b.abs().max().max(1.0)
}

/// [`rel_err`] for vectors.
pub fn rel_err_v(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    assert_eq!(a.len(), b.len());
    (a - b).abs().max() / b.abs().max().max(1.0)
}
