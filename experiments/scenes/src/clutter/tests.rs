//! The scene's tests: layout, contacts, the problem's rows and blocks, and runs under PGS
//! and SAP.

use std::sync::OnceLock;

use super::contacts::{geom, manifold, Geom, Narrow};
use super::*;
use approx::assert_relative_eq;
use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
use contactlab_core::generalized::sparse_mul_add;
use contactlab_core::{GeneralizedProblem, SolveOptions, StepContext};
use faer::sparse::SparseColMat;
use nalgebra::{Matrix3, Matrix6, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::scene::Scene;
use crate::{ContactKey, SceneKind};

const H: f64 = 0.05;

fn config(walls: bool) -> ClutterConfig {
    ClutterConfig {
        walls,
        ..ClutterConfig::default()
    }
}

fn cube(x: [f64; 3], q: UnitQuaternion<f64>) -> RigidBody {
    RigidBody::cuboid(Vector3::repeat(H), 1000.0, x.into(), q)
}

fn ball(x: [f64; 3]) -> RigidBody {
    RigidBody::sphere(H, 1000.0, x.into())
}

fn scene(bodies: Vec<RigidBody>, walls: bool) -> Clutter {
    Clutter::with_bodies(bodies, &config(walls)).unwrap()
}

fn turned(axis: [f64; 3], angle: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_scaled_axis(Vector3::from(axis).normalize() * angle)
}

fn normal(c: &ClutterContact) -> Vector3<f64> {
    c.frame.row(0).transpose()
}

/// A small pile with every kind of contact: a turned box on the floor, a box on it, a
/// sphere on that, a sphere against the `+x` wall and resting on the floor, two spheres
/// touching; all with velocities.
fn pile() -> Clutter {
    let tilt = turned([0.3, -0.2, 1.0], 0.4);
    let mut bodies = vec![
        cube([0.0, 0.0, H - 2e-4], turned([0.0, 0.0, 1.0], 0.3)),
        cube([0.01, -0.01, 3.0 * H - 3e-4], tilt),
        ball([0.0, 0.0, 0.0]),
        ball([0.4 - H + 1e-4, 0.0, H - 1e-4]),
        ball([0.4 - 3.0 * H + 2e-4, 0.0, H + 1e-3]),
    ];
    // The sphere on top of box 1, lowered onto it until they overlap by 1e-4: bisection on
    // its height, with distances from a scene whose prediction reaches everywhere.
    let far = ClutterConfig {
        margin: 1.0,
        ..config(true)
    };
    let phi = |z: f64| {
        let mut b = bodies.clone();
        b[2].x = Vector3::new(0.01, -0.01, z);
        let t = Clutter::with_bodies(b, &far).unwrap();
        t.contacts()
            .iter()
            .filter(|c| c.a == 1 && c.b == Some(2))
            .map(|c| c.phi0)
            .fold(f64::INFINITY, f64::min)
    };
    let (mut lo, mut hi) = (bodies[1].x.z, bodies[1].x.z + 0.3);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if phi(mid) < -1e-4 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    assert!((phi(hi) + 1e-4).abs() < 1e-12);
    bodies[2].x = Vector3::new(0.01, -0.01, hi);
    let mut s = scene(bodies, true);
    let vel = [
        ([0.3, -0.1, 0.2], [1.0, -2.0, 0.5]),
        ([-0.2, 0.4, -0.1], [0.3, 0.7, -1.1]),
        ([0.1, 0.1, -0.3], [-0.4, 0.2, 0.9]),
        ([0.5, 0.0, 0.1], [0.0, 1.5, 0.0]),
        ([-0.3, 0.2, 0.0], [0.6, 0.0, -0.8]),
    ];
    for (b, (v, w)) in s.bodies.iter_mut().zip(vel) {
        b.v = v.into();
        b.w = w.into();
    }
    s.contacts = OnceLock::new();
    s
}

#[test]
fn the_layout_mirrors_the_peers_scene() {
    let cfg = ClutterConfig::default();
    let s = Clutter::new(&cfg).unwrap();
    assert_eq!(s.bodies.len(), 40);
    for (i, b) in s.bodies.iter().enumerate() {
        let level = i / 4;
        let (sx, sy) = [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)][i % 4];
        assert!((b.x.x - 0.2 * sx).abs() <= 0.02 && (b.x.y - 0.2 * sy).abs() <= 0.02);
        assert_relative_eq!(b.x.z, 0.1 + 0.15 * level as f64, epsilon = 1e-12);
        assert_eq!(b.v, Vector3::zeros());
        match b.shape {
            BodyShape::Sphere { radius } => {
                assert_eq!((i + level) % 2, 0, "body {i}");
                assert_eq!(radius, 0.05);
                // The paper's 0.524 kg.
                assert_relative_eq!(b.mass, 0.524, epsilon = 1e-3);
                assert_relative_eq!(b.inertia, Vector3::repeat(0.4 * b.mass * 0.0025));
            }
            BodyShape::Cuboid { half } => {
                assert_eq!((i + level) % 2, 1, "body {i}");
                assert_eq!(half, Vector3::repeat(0.05));
                assert_relative_eq!(b.mass, 1.0, epsilon = 1e-12);
                // A cube: m s^2 / 6 about every axis.
                assert_relative_eq!(b.inertia, Vector3::repeat(0.01 / 6.0), epsilon = 1e-15);
                assert!(b.q.angle() > 1e-3, "boxes are turned");
            }
        }
    }
    let spheres = s
        .bodies
        .iter()
        .filter(|b| matches!(b.shape, BodyShape::Sphere { .. }))
        .count();
    assert_eq!(spheres, 20);
    // Nothing touches at the start: the columns and levels are apart, the floor below.
    assert!(s.contacts().is_empty(), "{:?}", s.contacts().first());
    // The container: floor top at z = 0, inner faces of the walls at +-0.4, 0.8 high.
    assert_eq!(s.obstacles.len(), 5);
    let faces: Vec<f64> = s
        .obstacles
        .iter()
        .map(|o| match o {
            Obstacle::Cuboid { half, center } => {
                if center.z < 0.0 {
                    center.z + half.z
                } else {
                    assert_relative_eq!(center.z + half.z, 0.8);
                    (center.x.abs() - half.x).max(center.y.abs() - half.y)
                }
            }
            Obstacle::Ground => f64::NAN,
        })
        .collect();
    for (got, want) in faces.iter().zip([0.0, 0.4, 0.4, 0.4, 0.4]) {
        assert_relative_eq!(*got, want, epsilon = 1e-15);
    }
    assert_eq!(container(&config(false)), vec![Obstacle::Ground]);
    assert_eq!(cfg.steps(), 1000);
    assert_eq!(cfg.tau_d(), cfg.dt);
}

#[test]
fn seeds_are_deterministic_and_distinct() {
    let cfg = ClutterConfig {
        n_bodies: 160,
        seed: 3,
        ..ClutterConfig::default()
    };
    let (a, b) = (Clutter::new(&cfg).unwrap(), Clutter::new(&cfg).unwrap());
    assert_eq!(a.bodies, b.bodies);
    let c = Clutter::new(&ClutterConfig { seed: 4, ..cfg }).unwrap();
    assert_ne!(a.bodies, c.bodies);
    assert_eq!(a.bodies[159].x.z, 0.1 + 0.15 * 39.0);
    assert!(a.contacts().is_empty());
}

#[test]
fn bad_parameters_are_named() {
    let err = |cfg: ClutterConfig| Clutter::new(&cfg).unwrap_err().to_string();
    let d = ClutterConfig::default();
    for (cfg, key) in [
        (
            ClutterConfig {
                dt: 0.0,
                ..d.clone()
            },
            "`dt`",
        ),
        (
            ClutterConfig {
                mu: -1.0,
                ..d.clone()
            },
            "`mu`",
        ),
        (
            ClutterConfig {
                stiffness: 0.0,
                ..d.clone()
            },
            "`stiffness`",
        ),
        (
            ClutterConfig {
                dissipation: Some(-1.0),
                ..d.clone()
            },
            "`dissipation`",
        ),
        (
            ClutterConfig {
                margin: f64::NAN,
                ..d.clone()
            },
            "`margin`",
        ),
        (
            ClutterConfig {
                n_bodies: 0,
                ..d.clone()
            },
            "`n_bodies`",
        ),
        (
            ClutterConfig {
                box_side: 0.3,
                ..d.clone()
            },
            "`container`",
        ),
        (
            ClutterConfig {
                level_spacing: 0.1,
                ..d.clone()
            },
            "`level_spacing`",
        ),
        (
            ClutterConfig {
                first_level: 0.05,
                ..d.clone()
            },
            "`first_level`",
        ),
    ] {
        let e = err(cfg);
        assert!(e.contains(key), "{key}: {e}");
    }
    // Rigid contacts are allowed.
    assert!(Clutter::new(&ClutterConfig {
        stiffness: f64::INFINITY,
        ..d.clone()
    })
    .is_ok());
    let e = ClutterConfig::from_table(&"n_bodys = 3".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("n_bodys"), "{e}");
    let e = ClutterConfig::from_table(&"walls = 1".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("`walls`") && e.contains("bool"), "{e}");
    let e = ClutterConfig::from_table(&"n_bodies = -3".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("`n_bodies`"), "{e}");
    // TOML spells NaN and infinity: NaN is refused by name, in every float parameter.
    for key in [
        "dt",
        "mu",
        "stiffness",
        "dissipation",
        "density",
        "margin",
        "gravity",
    ] {
        let cfg = ClutterConfig::from_table(&format!("{key} = nan").parse().unwrap()).unwrap();
        let e = Clutter::new(&cfg).unwrap_err().to_string();
        assert!(e.contains(&format!("`{key}`")), "{key}: {e}");
    }
    for (text, key) in [
        ("stiffness = -1e12", "`stiffness`"),
        ("dt = -0.01", "`dt`"),
        ("mu = -0.5", "`mu`"),
        ("n_bodies = 0", "`n_bodies`"),
        ("duration = inf", "`duration`"),
    ] {
        let cfg = ClutterConfig::from_table(&text.parse().unwrap()).unwrap();
        let e = SceneKind::Clutter
            .check_params(&text.parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{text}: {e}");
        assert!(Clutter::new(&cfg).is_err());
    }
    let mut s = pile();
    let cs = s.contact_step().unwrap();
    let e = s.advance(&cs, &[1.0]).unwrap_err().to_string();
    assert!(
        e.contains(&format!("expected {}", 3 * cs.contacts.len())),
        "{e}"
    );
    let mut r = vec![0.0; 3 * cs.contacts.len()];
    r[0] = f64::NAN;
    assert!(s.advance(&cs, &r).is_err());
    assert!(Clutter::with_bodies(vec![], &d).is_err());
}

/// Symplectic Euler: `v_N = -g t`, `z_N = z0 - g dt^2 N (N + 1) / 2`, within `g dt t / 2` of
/// the exact drop; a spinning cube keeps its spin and turns by `exp(N dt omega)`.
#[test]
fn free_fall_matches_the_analytic_drop() {
    let mut c = cube([0.0, 0.0, 2.0], turned([1.0, 2.0, 3.0], 0.7));
    c.w = Vector3::new(1.0, -2.0, 0.5);
    let q0 = c.q;
    let mut s = scene(vec![ball([0.1, 0.1, 1.0]), c], true);
    let (g, dt, n) = (9.81, 0.01, 30);
    for _ in 0..n {
        let cs = s.contact_step().unwrap();
        assert!(cs.contacts.is_empty());
        s.advance(&cs, &[]).unwrap();
    }
    let t = n as f64 * dt;
    for (b, z0) in s.bodies.iter().zip([1.0, 2.0]) {
        assert_relative_eq!(b.v.z, -g * t, epsilon = 1e-12);
        let discrete = z0 - g * dt * dt * (n * (n + 1)) as f64 / 2.0;
        assert_relative_eq!(b.x.z, discrete, epsilon = 1e-12);
        let exact = z0 - 0.5 * g * t * t;
        assert_relative_eq!(b.x.z - exact, -0.5 * g * dt * t, epsilon = 1e-12);
    }
    assert_relative_eq!(s.bodies[1].w, Vector3::new(1.0, -2.0, 0.5), epsilon = 1e-12);
    let expected = UnitQuaternion::from_scaled_axis(t * Vector3::new(1.0, -2.0, 0.5)) * q0;
    assert!(s.bodies[1].q.angle_to(&expected) < 1e-12);
    assert_relative_eq!(s.time, t, epsilon = 1e-12);
}

/// The world-frame gyroscopic step equals Euler's equations stepped in the body frame; a
/// cube and a sphere have none.
#[test]
fn the_gyroscopic_term_is_eulers_equations() {
    let mut b = RigidBody::cuboid(
        Vector3::new(0.1, 0.05, 0.02),
        1000.0,
        Vector3::zeros(),
        turned([0.2, 1.0, -0.4], 1.1),
    );
    b.w = Vector3::new(3.0, -1.0, 2.0);
    let dt = 0.01;
    let [_, w] = b.free_velocity(dt, 0.0);
    let r = b.q.to_rotation_matrix();
    let wb = r.inverse() * b.w;
    let i = Matrix3::from_diagonal(&b.inertia);
    let wb_next = wb - dt * i.try_inverse().unwrap() * wb.cross(&(i * wb));
    assert_relative_eq!(w, r * wb_next, epsilon = 1e-12);
    assert!((w - b.w).norm() > 1e-3, "a non-principal spin precesses");
    for mut body in [cube([0.0; 3], turned([1.0, 1.0, 0.0], 0.5)), ball([0.0; 3])] {
        body.w = Vector3::new(3.0, -1.0, 2.0);
        let [_, w] = body.free_velocity(dt, 0.0);
        assert_relative_eq!(w, body.w, epsilon = 1e-13);
    }
}

#[test]
fn a_resting_box_gets_four_floor_contacts() {
    for (walls, q) in [
        (true, UnitQuaternion::identity()),
        (false, UnitQuaternion::identity()),
        (true, turned([0.0, 0.0, 1.0], 0.7)),
        (false, turned([0.0, 0.0, 1.0], -0.3)),
    ] {
        let s = scene(vec![cube([0.05, -0.1, H - 1e-4], q)], walls);
        let cs = s.contacts();
        assert_eq!(cs.len(), 4, "walls {walls}: {cs:?}");
        let mut corners: Vec<Vector3<f64>> = [-1.0, 1.0]
            .iter()
            .flat_map(|&sx| [-1.0, 1.0].map(|sy| Vector3::new(sx * H, sy * H, -H)))
            .map(|c| s.bodies[0].x + q * c)
            .collect();
        for c in cs {
            assert!(matches!(
                c.key,
                ContactKey::WallPoint {
                    body: 0,
                    obstacle: FLOOR,
                    ..
                }
            ));
            assert_relative_eq!(normal(c), Vector3::z(), epsilon = 1e-12);
            assert_relative_eq!(c.phi0, -1e-4, epsilon = 1e-12);
            // At a bottom corner, halfway into the floor.
            let k = corners
                .iter()
                .position(|p| (p.xy() - c.point.xy()).norm() < 1e-12)
                .unwrap_or_else(|| panic!("no corner under {:?}", c.point));
            corners.remove(k);
            assert_relative_eq!(c.point.z, -0.5e-4, epsilon = 1e-12);
        }
        let mut keys: Vec<_> = cs.iter().map(|c| c.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 4, "distinct keys");
    }
    // Lifted beyond the margin: none; within it: four with phi0 > 0.
    let s = scene(
        vec![cube([0.0, 0.0, H + 2e-3], UnitQuaternion::identity())],
        true,
    );
    assert!(s.contacts().is_empty());
    let s = scene(
        vec![cube([0.0, 0.0, H + 5e-4], UnitQuaternion::identity())],
        true,
    );
    assert_eq!(s.contacts().len(), 4);
    assert!(s.contacts().iter().all(|c| (c.phi0 - 5e-4).abs() < 1e-12));
}

#[test]
fn sphere_box_box_box_sphere_sphere_and_wall_contacts() {
    let id = UnitQuaternion::identity();
    // A sphere (0) on a box (1), in the air: one contact, normal up towards the sphere.
    let s = scene(
        vec![ball([0.01, 0.02, 0.6 - 1e-4]), cube([0.0, 0.0, 0.5], id)],
        true,
    );
    let c = s.contacts();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!((c[0].a, c[0].b), (0, Some(1)));
    assert!(matches!(c[0].key, ContactKey::PairPoint { a: 0, b: 1, .. }));
    assert_relative_eq!(normal(&c[0]), Vector3::z(), epsilon = 1e-12);
    assert_relative_eq!(c[0].phi0, -1e-4, epsilon = 1e-12);
    assert_relative_eq!(
        c[0].point,
        Vector3::new(0.01, 0.02, 0.55 - 0.5e-4),
        epsilon = 1e-12
    );
    // The other way round: the normal points down, towards the box (body 0).
    let s = scene(
        vec![cube([0.0, 0.0, 0.5], id), ball([0.01, 0.02, 0.6 - 1e-4])],
        true,
    );
    assert_relative_eq!(normal(&s.contacts()[0]), -Vector3::z(), epsilon = 1e-12);
    // Box on box, aligned: four corners; turned by 45 degrees the clipped octagon keeps four.
    // Box on box, aligned and turned by 45 degrees: parry clips each face against the
    // other, eight points both times (aligned: every corner twice, merged as duplicates;
    // turned: the octagon of the overlap), reduced to four that span most of the overlap.
    let octagon = 8.0 * (std::f64::consts::SQRT_2 - 1.0) * H * H;
    for (angle, overlap) in [(0.0, 4.0 * H * H), (std::f64::consts::FRAC_PI_4, octagon)] {
        let q = turned([0.0, 0.0, 1.0], angle);
        let s = scene(
            vec![cube([0.0, 0.0, 0.5], id), cube([0.0, 0.0, 0.6 - 1e-4], q)],
            true,
        );
        let c = s.contacts();
        assert_eq!(c.len(), 4, "angle {angle}: {c:?}");
        for ci in c {
            assert_eq!((ci.a, ci.b), (0, Some(1)));
            assert_relative_eq!(normal(ci), -Vector3::z(), epsilon = 1e-12);
            assert_relative_eq!(ci.phi0, -1e-4, epsilon = 1e-12);
            // Halfway between the top face of box 0 and the bottom face of box 1.
            assert_relative_eq!(ci.point.z, 0.55 - 0.5e-4, epsilon = 1e-12);
            // Inside both faces.
            let local = q.inverse() * (ci.point - s.bodies[1].x);
            assert!(ci.point.x.abs().max(ci.point.y.abs()) <= H + 1e-12);
            assert!(local.x.abs().max(local.y.abs()) <= H + 1e-12);
        }
        let (_, pts) = manifold(
            geom(&s.bodies[0]),
            &s.bodies[0].pose(),
            geom(&s.bodies[1]),
            &s.bodies[1].pose(),
            1e-3,
        )
        .unwrap();
        assert_eq!(pts.len(), 8, "angle {angle}: parry's clipped polygons");
        // The area of the kept quadrilateral (the largest of its three vertex orders): the
        // whole square aligned; 1 / sqrt 2 of the octagon turned (alternate corners).
        let p: Vec<_> = c.iter().map(|c| c.point.xy()).collect();
        let area = [(0, 2, 1, 3), (0, 1, 2, 3), (0, 3, 1, 2)]
            .iter()
            .map(|&(i, j, k, l)| 0.5 * (p[i] - p[j]).perp(&(p[k] - p[l])).abs())
            .fold(0.0, f64::max);
        assert!(
            area >= 0.7 * overlap,
            "angle {angle}: area {area} of {overlap}"
        );
    }
    // Sphere on sphere: along the centres.
    let d = Vector3::new(0.3, -0.2, 0.9).normalize();
    let s = scene(
        vec![
            ball([0.0, 0.0, 0.5]),
            ball((Vector3::new(0.0, 0.0, 0.5) + d * (0.1 - 2e-4)).into()),
        ],
        true,
    );
    let c = s.contacts();
    assert_eq!(c.len(), 1);
    assert_relative_eq!(normal(&c[0]), -d, epsilon = 1e-12);
    assert_relative_eq!(c[0].phi0, -2e-4, epsilon = 1e-12);
    // A sphere against the +x wall (obstacle 1), in the air: normal -x.
    let s = scene(vec![ball([0.4 - H + 1e-4, 0.0, 0.4])], true);
    let c = s.contacts();
    assert_eq!(c.len(), 1);
    assert!(matches!(
        c[0].key,
        ContactKey::WallPoint {
            body: 0,
            obstacle: 1,
            ..
        }
    ));
    assert_relative_eq!(normal(&c[0]), -Vector3::x(), epsilon = 1e-12);
    // No walls: nothing there.
    let s = scene(vec![ball([0.4 - H + 1e-4, 0.0, 0.4])], false);
    assert!(s.contacts().is_empty());
    // The pile has every kind.
    let s = pile();
    let kinds = |f: &dyn Fn(&ClutterContact) -> bool| s.contacts().iter().filter(|c| f(c)).count();
    assert!(
        kinds(&|c| c.a == 0 && c.b.is_none()) >= 3,
        "{:?}",
        s.contacts()
    );
    assert!(kinds(&|c| c.a == 0 && c.b == Some(1)) >= 1);
    assert_eq!(kinds(&|c| c.a == 1 && c.b == Some(2)), 1);
    assert_eq!(kinds(&|c| c.a == 3 && c.b.is_none()), 2, "floor and wall");
    assert_eq!(kinds(&|c| c.a == 3 && c.b == Some(4)), 1);
}

/// Point `p` carried by body `b` from state `s0` to state `s`.
fn carried(s0: &RigidBody, s: &RigidBody, p: &Vector3<f64>) -> Vector3<f64> {
    s.x + s.q * (s0.q.inverse() * (p - s0.x))
}

fn moved(s: &Clutter, eps: f64) -> Clutter {
    let mut t = s.clone();
    for b in &mut t.bodies {
        b.x += eps * b.v;
        b.q = UnitQuaternion::from_scaled_axis(eps * b.w) * b.q;
    }
    t.contacts = OnceLock::new();
    t
}

fn dense_rows(j: &SparseColMat<usize, f64>, row: usize) -> Vec<f64> {
    let mut out = vec![0.0; j.ncols()];
    let (cols, rows, vals) = (j.symbolic().col_ptr(), j.symbolic().row_idx(), j.val());
    for (c, o) in out.iter_mut().enumerate() {
        for k in cols[c]..cols[c + 1] {
            if rows[k] == row {
                *o += vals[k];
            }
        }
    }
    out
}

/// `J v` is the frame times the relative velocity of the two material points at the
/// contact point (central differences of the carried points), and only the two bodies'
/// columns are filled.
#[test]
fn jacobian_rows_are_contact_point_velocities() {
    let s = pile();
    let cs = s.contact_step().unwrap();
    let g = cs.problem.generalized().unwrap();
    let v: Vec<f64> = s
        .bodies
        .iter()
        .flat_map(|b| b.v.iter().chain(b.w.iter()).copied().collect::<Vec<_>>())
        .collect();
    let mut u = vec![0.0; g.j.nrows()];
    sparse_mul_add(&g.j, &v, &mut u);
    let eps = 1e-6;
    let (plus, minus) = (moved(&s, eps), moved(&s, -eps));
    for (ci, c) in s.contacts().iter().enumerate() {
        let track = |t: &Clutter| {
            let pa = carried(&s.bodies[c.a], &t.bodies[c.a], &c.point);
            let pb =
                c.b.map_or(c.point, |b| carried(&s.bodies[b], &t.bodies[b], &c.point));
            pa - pb
        };
        let fd = c.frame * (track(&plus) - track(&minus)) / (2.0 * eps);
        for k in 0..3 {
            assert!(
                (u[3 * ci + k] - fd[k]).abs() < 1e-8,
                "{:?} row {k}: {} vs {}",
                c.key,
                u[3 * ci + k],
                fd[k]
            );
            let row = dense_rows(&g.j, 3 * ci + k);
            for (col, x) in row.iter().enumerate() {
                let body = col / 6;
                if body != c.a && Some(body) != c.b {
                    assert_eq!(*x, 0.0);
                }
            }
        }
    }
    assert_eq!(
        g.j.val().len(),
        s.contacts()
            .iter()
            .map(|c| if c.b.is_some() { 36 } else { 18 })
            .sum::<usize>()
    );
}

/// The normal row is the rate of the signed distance parry measures (central differences
/// of `phi` along the motion), so positive normal velocity separates. Checked on every
/// contact with a sphere or an obstacle, where `phi` is a true distance; box-box manifolds
/// are skipped: parry clips the reference face against the incident one and measures each
/// clipped point's depth along the reference normal, which is not the distance between the
/// surfaces once the faces are not parallel, so its rate differs from `n . v` at first
/// order in the tilt (the usual approximation of clipped manifolds).
#[test]
fn normal_rows_are_the_rate_of_the_signed_distance() {
    let s = pile();
    let cs = s.contact_step().unwrap();
    let v: Vec<f64> = s
        .bodies
        .iter()
        .flat_map(|b| [b.v.as_slice(), b.w.as_slice()].concat())
        .collect();
    let u = cs.problem.generalized().unwrap().contact_velocity(&v);
    let eps = 1e-7;
    let (plus, minus) = (moved(&s, eps), moved(&s, -eps));
    let phi = |t: &Clutter, key| t.contacts().iter().find(|c| c.key == key).map(|c| c.phi0);
    let is_box = |i: usize| matches!(s.bodies[i].shape, BodyShape::Cuboid { .. });
    let mut checked = 0;
    for (ci, c) in s.contacts().iter().enumerate() {
        if c.b.is_some_and(|b| is_box(b) && is_box(c.a)) {
            continue;
        }
        let (p, m) = (phi(&plus, c.key), phi(&minus, c.key));
        let (Some(p), Some(m)) = (p, m) else {
            panic!("{:?} lost its key under a motion of 1e-7 s", c.key);
        };
        let rate = (p - m) / (2.0 * eps);
        assert!(
            (rate - u[3 * ci]).abs() < 1e-6,
            "{:?}: {rate} vs {}",
            c.key,
            u[3 * ci]
        );
        checked += 1;
    }
    assert!(checked >= 6, "{checked} contacts checked");
}

/// `A` is the per-body mass matrix, symmetric positive definite and block diagonal by body,
/// built sparse (12 entries per body), and the problem passes `GeneralizedProblem::new`.
#[test]
fn a_is_the_sparse_block_diagonal_mass_matrix() {
    let s = pile();
    let cs = s.contact_step().unwrap();
    let g = cs.problem.generalized().unwrap();
    let n = s.bodies.len();
    assert_eq!(g.a.val().len(), 12 * n, "no dense nv x nv matrix");
    assert_eq!(g.tree_of, (0..6 * n).map(|k| k / 6).collect::<Vec<_>>());
    assert_eq!(g.dt, Some(0.01));
    assert_eq!(g.contacts.len(), cs.contacts.len());
    for (m, c) in g.contacts.iter().zip(s.contacts()) {
        assert_eq!(
            (m.mu, m.stiffness, m.dissipation, m.phi0),
            (1.0, 1e12, 0.01, c.phi0)
        );
    }
    let again = GeneralizedProblem::new(
        g.a.clone(),
        g.j.clone(),
        g.v_star.clone(),
        g.b.clone(),
        g.contacts.clone(),
        StepContext {
            dt: g.dt,
            v0: g.v0.clone(),
            tree_of: Some(g.tree_of.clone()),
        },
    );
    assert!(again.is_ok(), "{:?}", again.err());
    for (i, b) in s.bodies.iter().enumerate() {
        let block = Matrix6::from_fn(|r, c| dense_rows(&g.a, 6 * i + r)[6 * i + c]);
        let mut want = Matrix6::zeros();
        want.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(b.mass);
        want.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&b.world_inertia());
        assert_relative_eq!(block, want, epsilon = 1e-15);
        assert_eq!(block, block.transpose());
        assert!(block.cholesky().is_some(), "body {i}: A block is SPD");
        let v0 = &g.v0.as_ref().unwrap()[6 * i..6 * i + 6];
        assert_eq!(v0, [b.v.as_slice(), b.w.as_slice()].concat());
    }
}

/// `advance` gives `v = v* + A^-1 J' r`: its contact velocities equal `StepProblem`'s
/// (through a Cholesky of `A`), and impulses between bodies conserve momentum.
#[test]
fn advance_applies_impulses_through_a_inverse() {
    let s = pile();
    let cs = s.contact_step().unwrap();
    let nc = cs.contacts.len();
    let r: Vec<f64> = (0..3 * nc)
        .map(|k| {
            if k % 3 == 0 {
                0.02 + 0.001 * k as f64
            } else {
                0.003 * ((k % 7) as f64 - 3.0)
            }
        })
        .collect();
    let mut t = s.clone();
    t.advance(&cs, &r).unwrap();
    let v: Vec<f64> = t
        .bodies
        .iter()
        .flat_map(|b| b.v.iter().chain(b.w.iter()).copied().collect::<Vec<_>>())
        .collect();
    let g = cs.problem.generalized().unwrap();
    let through_a = cs.velocities(&r).unwrap();
    for (a, b) in g.contact_velocity(&v).iter().zip(&through_a) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // Only pair contacts: linear and angular momentum (about the origin) change by gravity.
    let mut u = s.clone();
    let pairs: Vec<f64> = s
        .contacts()
        .iter()
        .zip(r.chunks(3))
        .flat_map(|(c, x)| {
            if c.b.is_some() {
                x.to_vec()
            } else {
                vec![0.0; 3]
            }
        })
        .collect();
    u.advance(&cs, &pairs).unwrap();
    // Linear momentum: pair impulses cancel, gravity takes `dt g` times the total mass.
    let momentum = |bodies: &[RigidBody]| bodies.iter().map(|b| b.mass * b.v).sum::<Vector3<f64>>();
    let weight_impulse: f64 = s
        .bodies
        .iter()
        .map(|b| b.mass * s.config.gravity * s.config.dt)
        .sum();
    assert_relative_eq!(
        momentum(&u.bodies) + Vector3::new(0.0, 0.0, weight_impulse),
        momentum(&s.bodies),
        epsilon = 1e-12
    );
    assert!(
        (momentum(&t.bodies) - momentum(&u.bodies)).norm() > 1e-3,
        "floor impulses count"
    );
    // Angular momentum about the origin, with the start-of-step positions (impulses act there).
    let angular = |bodies: &[RigidBody], at: &[RigidBody]| {
        bodies
            .iter()
            .zip(at)
            .map(|(b, a)| a.x.cross(&(b.mass * b.v)) + a.world_inertia() * b.w)
            .sum::<Vector3<f64>>()
    };
    let gravity_torque: Vector3<f64> = s
        .bodies
        .iter()
        .map(|b| {
            b.x.cross(&Vector3::new(
                0.0,
                0.0,
                -b.mass * s.config.gravity * s.config.dt,
            ))
        })
        .sum();
    assert_relative_eq!(
        angular(&u.bodies, &s.bodies),
        angular(&s.bodies, &s.bodies) + gravity_torque,
        epsilon = 1e-12
    );
    assert!(u.mean_slip().is_finite());
}

/// End to end with a contact-space solver: a box resting on the floor, PGS on the rigid
/// problem `W = J A^-1 J'` derived from ours: the four normal impulses carry its weight
/// over the step and it stays at rest.
#[test]
fn a_box_rests_on_the_floor_under_pgs() {
    let mut s = scene(
        vec![cube([0.0, 0.0, H], turned([0.0, 0.0, 1.0], 0.2))],
        true,
    );
    for _ in 0..5 {
        let cs = s.contact_step().unwrap();
        assert_eq!(cs.contacts.len(), 4);
        let local = cs.problem.local().unwrap();
        let opts = SolveOptions {
            max_iter: 10_000,
            stop_tol: 1e-12,
            ..SolveOptions::default()
        };
        let sol = solve_pgs(local, ProjectedGaussSeidel::default(), None, &opts).unwrap();
        let normal_sum: f64 = sol.x.chunks(3).map(|c| c[0]).sum();
        assert_relative_eq!(normal_sum, 1.0 * 9.81 * 0.01, epsilon = 1e-9);
        s.advance(&cs, &sol.x).unwrap();
        assert!(s.bodies[0].v.norm() < 1e-9 && s.bodies[0].w.norm() < 1e-8);
        assert!(s.mean_slip() < 1e-9);
    }
    let obs = Scene::observables(&s);
    let get = |k: &str| obs.iter().find(|o| o.0 == k).unwrap().1;
    assert_eq!(get("contacts"), 4.0);
    assert_eq!(get("pressed_contacts"), 4.0);
    // `advance` detected the new state's contacts and timed it; a moved scene has not yet.
    let detect = Scene::detect_seconds(&s).expect("the new state's detection is timed");
    assert!(detect > 0.0 && detect < 1.0, "{detect}");
    s.contacts = OnceLock::new();
    assert_eq!(Scene::detect_seconds(&s), None);
    assert!(get("kinetic_energy") < 1e-15 && get("max_penetration") < 1e-12);
    assert_relative_eq!(get("potential_energy"), 9.81 * H, epsilon = 1e-9);
}

#[test]
fn manifolds_reduce_to_the_four_that_span_them() {
    let n = Vector3::z();
    // An octagon, the deepest point at angle 3; a duplicate of point 0.
    let mut pts: Vec<ManifoldPoint> = (0..8)
        .map(|k| {
            let a = k as f64 * std::f64::consts::FRAC_PI_4;
            ManifoldPoint {
                point: Vector3::new(a.cos(), a.sin(), 0.0),
                phi: if k == 3 { -2e-3 } else { -1e-3 },
                feature: k,
            }
        })
        .collect();
    pts.push(ManifoldPoint {
        phi: -5e-3,
        feature: 99,
        ..pts[0]
    });
    let kept = reduce_manifold(&pts, &n);
    let features: Vec<u64> = kept.iter().map(|p| p.feature).collect();
    // The deeper duplicate replaces point 0 and is the deepest; then the opposite corner 4,
    // the widest triangle's 2 (the first of 2 and 6), and 6 outside it: a square.
    assert_eq!(features, vec![99, 2, 4, 6]);
    // Four or fewer are kept as they are.
    assert_eq!(reduce_manifold(&pts[..4], &n), pts[..4].to_vec());
}

/// The narrow phase keeps one parry manifold from pair to pair, and parry's routines update a
/// manifold's points in place (persistent manifolds): a pair answered after others, of every
/// kind and either way round, equals the same pair answered first, bit for bit.
#[test]
fn a_reused_narrow_phase_answers_each_pair_as_a_fresh_one() {
    let id = UnitQuaternion::identity();
    let q = turned([0.2, 1.0, -0.4], 0.7);
    let bodies = [
        cube([0.0, 0.0, 0.5], id),
        cube([0.01, 0.02, 0.6 - 1e-4], turned([0.0, 0.0, 1.0], 0.4)),
        ball([0.02, 0.01, 0.6 - 1e-4]),
        ball([0.02 + 2.0 * H - 3e-4, 0.01, 0.6 - 1e-4]),
        cube([0.0, 0.0, H - 2e-4], q),
    ];
    let ground = (
        Geom::Ground(parry3d_f64::shape::HalfSpace::new(
            parry3d_f64::math::Vector::Z,
        )),
        parry3d_f64::math::Pose::identity(),
    );
    let shape = |i: usize| (geom(&bodies[i]), bodies[i].pose());
    // Box-box (eight clipped points), box-ball, ball-box (swapped), ball-ball, ground-box,
    // box-ground (swapped), ball-ground, and the first again.
    let pairs = [
        (shape(0), shape(1)),
        (shape(0), shape(2)),
        (shape(2), shape(0)),
        (shape(2), shape(3)),
        (ground, shape(4)),
        (shape(4), ground),
        (shape(3), ground),
        (shape(0), shape(1)),
    ];
    let mut narrow = Narrow::default();
    let mut found = 0;
    for ((g1, p1), (g2, p2)) in pairs {
        let fresh = manifold(g1, &p1, g2, &p2, 1e-3);
        let reused = narrow.pair(g1, &p1, g2, &p2, 1e-3);
        assert_eq!(reused, fresh.as_ref().map(|(n, _)| *n));
        if let Some((_, points)) = fresh {
            assert_eq!(narrow.points, points);
            found += 1;
        }
    }
    // Every pair touches but the ball in the air and the ground.
    assert_eq!(found, 7);
}

/// A sphere resting on the floor, with walls (the floor box) and without (the ground): one
/// contact, normal `+z`, depth the overlap, point halfway between the two surfaces.
#[test]
fn a_sphere_on_the_floor_has_one_contact() {
    for walls in [true, false] {
        for (z, depth) in [(H - 3e-4, -3e-4), (H + 4e-4, 4e-4)] {
            let s = scene(vec![ball([0.07, -0.12, z])], walls);
            let c = s.contacts();
            assert_eq!(c.len(), 1, "walls {walls}: {c:?}");
            assert!(matches!(
                c[0].key,
                ContactKey::WallPoint {
                    body: 0,
                    obstacle: FLOOR,
                    ..
                }
            ));
            assert_eq!((c[0].a, c[0].b), (0, None));
            assert_relative_eq!(normal(&c[0]), Vector3::z(), epsilon = 1e-12);
            assert_relative_eq!(c[0].phi0, depth, epsilon = 1e-12);
            assert_relative_eq!(
                c[0].point,
                Vector3::new(0.07, -0.12, 0.5 * depth),
                epsilon = 1e-12
            );
            // The frame is orthonormal, normal first.
            assert_relative_eq!(
                c[0].frame * c[0].frame.transpose(),
                Matrix3::identity(),
                epsilon = 1e-14
            );
        }
    }
}

/// Sphere on sphere and sphere on wall: the contact point is the midpoint of the two
/// surfaces along the normal, the depth the overlap of the radii.
#[test]
fn sphere_sphere_and_sphere_wall_points_and_depths() {
    let c0 = Vector3::new(0.1, -0.05, 0.5);
    let d = Vector3::new(-0.4, 0.7, 0.2).normalize();
    let c1 = c0 + d * (2.0 * H - 5e-4);
    let s = scene(vec![ball(c0.into()), ball(c1.into())], true);
    let c = s.contacts();
    assert_eq!(c.len(), 1);
    assert!(matches!(c[0].key, ContactKey::PairPoint { a: 0, b: 1, .. }));
    // Towards body 0, from body 1.
    assert_relative_eq!(normal(&c[0]), -d, epsilon = 1e-12);
    assert_relative_eq!(c[0].phi0, -5e-4, epsilon = 1e-12);
    let mid = 0.5 * ((c0 + d * H) + (c1 - d * H));
    assert_relative_eq!(c[0].point, mid, epsilon = 1e-12);
    // Against the -y wall (obstacle 4), in the air: normal +y, point halfway into it.
    let s = scene(vec![ball([0.1, -0.4 + H - 2e-4, 0.3])], true);
    let c = s.contacts();
    assert_eq!(c.len(), 1);
    assert!(matches!(
        c[0].key,
        ContactKey::WallPoint {
            body: 0,
            obstacle: 4,
            ..
        }
    ));
    assert_relative_eq!(normal(&c[0]), Vector3::y(), epsilon = 1e-12);
    assert_relative_eq!(c[0].phi0, -2e-4, epsilon = 1e-12);
    assert_relative_eq!(
        c[0].point,
        Vector3::new(0.1, -0.4 - 1e-4, 0.3),
        epsilon = 1e-12
    );
}

/// Random bodies, overlapping in a small region (with walls, so floor, walls and pairs all
/// appear), with random velocities: each contact's rows of `J v` equal the frame times the
/// relative velocity of the two bodies' material points at the contact point, computed
/// here from the rigid-body formula `v + omega x (p - x)`, independently of the scene.
#[test]
fn j_v_is_the_relative_contact_velocity_for_random_states() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for round in 0..5 {
        let mut u = |lo: f64, hi: f64| rng.random_range(lo..hi);
        let bodies: Vec<RigidBody> = (0..12)
            .map(|k| {
                let x = [u(0.25, 0.38), u(-0.1, 0.1), u(0.03, 0.25)];
                let mut b = if k % 2 == 0 {
                    ball(x)
                } else {
                    let axis = [u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0)];
                    cube(x, turned(axis, u(-3.0, 3.0)))
                };
                b.v = Vector3::new(u(-1.0, 1.0), u(-1.0, 1.0), u(-1.0, 1.0));
                b.w = Vector3::new(u(-5.0, 5.0), u(-5.0, 5.0), u(-5.0, 5.0));
                b
            })
            .collect();
        let s = scene(bodies, true);
        let cs = s.contact_step().unwrap();
        let g = cs.problem.generalized().unwrap();
        let v: Vec<f64> = s
            .bodies
            .iter()
            .flat_map(|b| [b.v.as_slice(), b.w.as_slice()].concat())
            .collect();
        let jv = g.contact_velocity(&v);
        let contacts = s.contacts();
        assert!(contacts.len() >= 10, "round {round}: {}", contacts.len());
        let kinds: [fn(&ClutterContact) -> bool; 3] = [
            |c: &ClutterContact| {
                c.b.is_none()
                    && matches!(
                        c.key,
                        ContactKey::WallPoint {
                            obstacle: FLOOR,
                            ..
                        }
                    )
            },
            |c: &ClutterContact| {
                c.b.is_none()
                    && !matches!(
                        c.key,
                        ContactKey::WallPoint {
                            obstacle: FLOOR,
                            ..
                        }
                    )
            },
            |c: &ClutterContact| c.b.is_some(),
        ];
        for kind in kinds {
            assert!(
                contacts.iter().any(kind),
                "round {round}: a kind is missing"
            );
        }
        let at = |i: usize, p: &Vector3<f64>| {
            let b = &s.bodies[i];
            b.v + b.w.cross(&(p - b.x))
        };
        for (ci, c) in contacts.iter().enumerate() {
            let rel = at(c.a, &c.point) - c.b.map_or(Vector3::zeros(), |b| at(b, &c.point));
            let want = c.frame * rel;
            for k in 0..3 {
                assert!(
                    (jv[3 * ci + k] - want[k]).abs() <= 1e-12 * (1.0 + want.norm()),
                    "round {round}, {:?} row {k}: {} vs {}",
                    c.key,
                    jv[3 * ci + k],
                    want[k]
                );
            }
            assert_relative_eq!(
                c.frame * c.frame.transpose(),
                Matrix3::identity(),
                epsilon = 1e-14
            );
        }
    }
}

/// `v*` of the problem (and `free`) is `v0 + dt g` on the linear velocities and the explicit
/// gyroscopic step on the angular ones, body by body; `v0` is the state's velocities.
#[test]
fn the_free_motion_is_gravity_and_the_gyroscopic_step() {
    let mut s = pile();
    // A non-cube box, so the gyroscopic term is not zero.
    let mut slab = RigidBody::cuboid(
        Vector3::new(0.08, 0.04, 0.02),
        1000.0,
        Vector3::new(-0.2, 0.2, 0.5),
        turned([1.0, -0.5, 0.3], 0.9),
    );
    slab.v = Vector3::new(0.1, 0.2, -0.3);
    slab.w = Vector3::new(4.0, -2.0, 1.0);
    s.bodies.push(slab);
    s.config.n_bodies += 1;
    s.contacts = OnceLock::new();
    let cs = s.contact_step().unwrap();
    let g = cs.problem.generalized().unwrap();
    let dt = 0.01;
    for (i, b) in s.bodies.iter().enumerate() {
        let vs = &g.v_star[6 * i..6 * i + 6];
        let lin = b.v - Vector3::new(0.0, 0.0, 9.81 * dt);
        let iw = b.world_inertia();
        let ang = b.w - dt * iw.try_inverse().unwrap() * b.w.cross(&(iw * b.w));
        assert_relative_eq!(Vector3::from_column_slice(&vs[..3]), lin, epsilon = 1e-15);
        assert_relative_eq!(Vector3::from_column_slice(&vs[3..]), ang, epsilon = 1e-12);
        let v0 = &g.v0.as_ref().unwrap()[6 * i..6 * i + 6];
        assert_eq!(v0, [b.v.as_slice(), b.w.as_slice()].concat());
    }
    let last = s.bodies.len() - 1;
    assert!((g.v_star[6 * last + 3] - s.bodies[last].w.x).abs() > 1e-3);
    assert_eq!(cs.free, g.v_star);
    assert!(g.b.iter().all(|b| *b == 0.0));
}

/// The standard SAP solver (`sap` + `newton-merit`, the paper's stopping rule: eq. 26 with
/// `eps_a = 1e-16`, `eps_r = 1e-5`).
fn sap() -> crate::testing::TestSolver {
    crate::testing::TestSolver::new("sap", "newton-merit", 1e-16, 100).rel_tol(1e-5)
}

/// One step's record of [`run_sap`].
#[derive(Debug)]
struct Record {
    contacts: usize,
    iterations: u64,
    status: String,
    energy: f64,
    penetration: f64,
    a_pattern: (Vec<usize>, Vec<usize>),
}

/// Steps `s` with SAP; the records after each step.
fn run_sap(s: &mut Clutter, steps: usize) -> Vec<Record> {
    let solver = sap();
    (0..steps)
        .map(|_| {
            let cs = s.contact_step().unwrap();
            let g = cs.problem.generalized().unwrap();
            let a_pattern = (
                g.a.symbolic().col_ptr().to_vec(),
                g.a.symbolic().row_idx().to_vec(),
            );
            let (r, iterations, status) = if cs.contacts.is_empty() {
                (vec![], 0, "no_contacts".to_string())
            } else {
                let out = solver.solve(&cs.problem, None);
                (out.r, out.iterations, out.status.as_str().to_string())
            };
            s.advance(&cs, &r).unwrap();
            Record {
                contacts: cs.contacts.len(),
                iterations,
                status,
                energy: s.kinetic_energy() + s.potential_energy(),
                penetration: s.max_penetration(),
                a_pattern,
            }
        })
        .collect()
}

fn eight() -> Clutter {
    Clutter::new(&ClutterConfig {
        n_bodies: 8,
        seed: 5,
        ..ClutterConfig::default()
    })
    .unwrap()
}

/// Eight bodies dropped into the walled container, 150 steps (1.5 s: the drop, the impacts,
/// settling) under SAP: every solve converges; the overlap stays within a few millimetres
/// during the impacts and below 0.2 mm at rest; the mechanical energy falls (no step adds
/// more than 0.1% of it); `A`'s pattern is the same at every step.
///
/// The transient overlaps are the time discretisation, not the contact model: a box that
/// lands off-centre on a sphere spins at about 20 rad/s, and over one 10 ms step its
/// contact point leaves the linearisation `phi = phi0 + dt v_n` by about
/// `(omega dt)^2 L / 2`, a millimetre; the compliant law then pushes the overlap out at
/// `v^ = -phi0 / (dt + tau_d)` (eq. 29), which returns a few millijoules. At rest the
/// overlap is the near-rigid regime's static one, `(dt + tau_d) R_n m g dt` per contact
/// (eqs. 29-30): 84 micrometres under the stack.
#[test]
fn eight_bodies_under_sap_stay_bounded() {
    let mut s = eight();
    let e0 = s.kinetic_energy() + s.potential_energy();
    let log = run_sap(&mut s, 150);
    assert!(
        log.iter().filter(|r| r.contacts > 0).count() > 130,
        "{log:?}"
    );
    let mut energy = e0;
    for (k, r) in log.iter().enumerate() {
        assert!(
            r.status == "converged" || r.status == "no_contacts",
            "step {k}: {r:?}"
        );
        assert!(r.iterations < 100, "step {k}: {r:?}");
        assert!(r.penetration < 5e-3, "step {k}: overlap {}", r.penetration);
        if k >= 120 {
            assert!(r.penetration < 2e-4, "step {k}: overlap {}", r.penetration);
        }
        assert!(
            r.energy <= energy + 1e-3 * e0,
            "step {k}: {} after {energy}",
            r.energy
        );
        energy = r.energy;
        assert_eq!(
            r.a_pattern, log[0].a_pattern,
            "step {k}: A's pattern changed"
        );
    }
    assert!(energy < 0.5 * e0, "{energy} of {e0}");
    // Everything is on the floor and at rest.
    assert!(
        s.bodies.iter().all(|b| b.x.z < 0.2 && b.x.z > 0.0),
        "{:?}",
        s.bodies
    );
    // Settled: nothing moves vertically (a sphere may still roll on the floor: nothing
    // resists rolling).
    assert!(
        s.bodies.iter().all(|b| b.v.z.abs() < 0.01),
        "{:?}",
        s.bodies
    );
    // At rest SAP needs few iterations from the previous step's velocities.
    let tail: u64 = log[120..].iter().map(|r| r.iterations).sum();
    assert!(tail <= 3 * 30, "{tail} iterations in the last 30 steps");
}

/// The same seed gives the same trajectory, bit for bit (layout, contacts, SAP's solves).
#[test]
fn runs_are_deterministic_bit_for_bit() {
    let bits = |s: &Clutter| -> Vec<u64> {
        s.bodies
            .iter()
            .flat_map(|b| {
                b.x.iter()
                    .chain(b.q.coords.iter())
                    .chain(b.v.iter())
                    .chain(b.w.iter())
                    .map(|c| c.to_bits())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (mut a, mut b) = (eight(), eight());
    let (la, lb) = (run_sap(&mut a, 40), run_sap(&mut b, 40));
    assert_eq!(bits(&a), bits(&b));
    let iters = |l: &[Record]| {
        l.iter()
            .map(|r| (r.contacts, r.iterations))
            .collect::<Vec<_>>()
    };
    assert_eq!(iters(&la), iters(&lb));
    assert!(la.iter().any(|r| r.contacts > 0));
}

/// Every step's `A` is symmetric positive definite, block by block, on the same pattern.
#[test]
fn a_is_spd_on_a_fixed_pattern_across_steps() {
    let mut s = eight();
    let mut pattern = None;
    for _ in 0..25 {
        let cs = s.contact_step().unwrap();
        let g = cs.problem.generalized().unwrap();
        let p = (
            g.a.symbolic().col_ptr().to_vec(),
            g.a.symbolic().row_idx().to_vec(),
        );
        assert_eq!(pattern.get_or_insert_with(|| p.clone()), &p);
        // The full validation (symmetry, trees, shapes) the scene leaves to its tests.
        g.validate().unwrap();
        for i in 0..s.bodies.len() {
            let block = Matrix6::from_fn(|r, c| dense_rows(&g.a, 6 * i + r)[6 * i + c]);
            assert_eq!(block, block.transpose());
            assert!(block.symmetric_eigenvalues().min() > 0.0);
        }
        let r = if cs.contacts.is_empty() {
            vec![]
        } else {
            sap().solve(&cs.problem, None).r
        };
        s.advance(&cs, &r).unwrap();
    }
}
