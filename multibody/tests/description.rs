//! Descriptions: parsing (TOML and JSON), validation errors, the parent-first order, and the
//! quadruped data file.

mod common;

use common::{crate_dir, load};
use contactlab_multibody::{Description, Joint, Model, ModelError};

const PENDULUM: &str = r#"
name = "pendulum"
[[links]]
name = "upper"
joint = { type = "revolute", axis = [0.0, 1.0, 0.0] }
translation = [0.0, 0.0, 2.0]
mass = 1.0
com = [0.0, 0.0, -0.5]
inertia = { principal = [0.1, 0.1, 0.01] }
[[links]]
name = "lower"
parent = "upper"
joint = { type = "revolute", axis = [0.0, 1.0, 0.0] }
translation = [0.0, 0.0, -1.0]
mass = 1.0
com = [0.0, 0.0, -0.5]
inertia = { principal = [0.1, 0.1, 0.01] }
"#;

fn build(text: &str) -> Result<Model, ModelError> {
    Description::from_toml_str(text)?.build()
}

/// The pendulum with one line replaced.
fn variant(from: &str, to: &str) -> String {
    assert!(PENDULUM.contains(from), "{from}");
    PENDULUM.replacen(from, to, 1)
}

#[test]
fn the_pendulum_builds() {
    let m = build(PENDULUM).unwrap();
    assert_eq!((m.nq(), m.nv(), m.num_bodies()), (2, 2, 2));
    assert_eq!(m.bodies()[1].parent, Some(0));
    assert_eq!(m.gravity, nalgebra::Vector3::new(0.0, 0.0, -9.81));
}

#[test]
fn toml_and_json_give_the_same_model() {
    let d = Description::from_toml_str(PENDULUM).unwrap();
    let json = serde_json::to_string(&d).unwrap();
    let back = Description::from_json_str(&json).unwrap();
    assert_eq!(d, back);
    assert_eq!(d.build().unwrap(), back.build().unwrap());
}

#[test]
fn a_cycle_is_refused() {
    let text = variant(
        "name = \"upper\"\n",
        "name = \"upper\"\nparent = \"lower\"\n",
    );
    match build(&text) {
        Err(ModelError::Cycle { links }) => {
            assert!(links.contains(&"upper".to_string()) && links.contains(&"lower".to_string()))
        }
        other => panic!("expected a cycle, got {other:?}"),
    }
}

#[test]
fn a_self_parent_is_a_cycle() {
    let text = variant(
        "name = \"upper\"\n",
        "name = \"upper\"\nparent = \"upper\"\n",
    );
    assert!(matches!(build(&text), Err(ModelError::Cycle { .. })));
}

#[test]
fn a_missing_parent_is_refused() {
    let text = variant("parent = \"upper\"", "parent = \"uper\"");
    assert_eq!(
        build(&text),
        Err(ModelError::MissingParent {
            link: "lower".into(),
            parent: "uper".into()
        })
    );
}

#[test]
fn non_positive_masses_are_refused() {
    for mass in ["0.0", "-1.0"] {
        let text = variant("mass = 1.0", &format!("mass = {mass}"));
        assert!(
            matches!(build(&text), Err(ModelError::NonPositiveMass { ref link, .. }) if link == "upper"),
            "mass {mass}"
        );
    }
}

#[test]
fn inertias_that_are_not_spd_are_refused() {
    let indefinite = variant(
        "inertia = { principal = [0.1, 0.1, 0.01] }",
        "inertia = { matrix = [[0.1, 0.2, 0.0], [0.2, 0.1, 0.0], [0.0, 0.0, 0.1]] }",
    );
    assert!(matches!(
        build(&indefinite),
        Err(ModelError::InertiaNotPositiveDefinite { min_eigenvalue, .. }) if min_eigenvalue < 0.0
    ));
    let zero = variant(
        "inertia = { principal = [0.1, 0.1, 0.01] }",
        "inertia = { principal = [0.1, 0.1, 0.0] }",
    );
    assert!(matches!(
        build(&zero),
        Err(ModelError::InertiaNotPositiveDefinite { .. })
    ));
    let asymmetric = variant(
        "inertia = { principal = [0.1, 0.1, 0.01] }",
        "inertia = { matrix = [[0.1, 0.01, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]] }",
    );
    assert!(matches!(
        build(&asymmetric),
        Err(ModelError::InertiaNotSymmetric { .. })
    ));
    let triangle = variant(
        "inertia = { principal = [0.1, 0.1, 0.01] }",
        "inertia = { principal = [0.01, 0.01, 0.1] }",
    );
    assert!(matches!(
        build(&triangle),
        Err(ModelError::InertiaTriangleInequality { .. })
    ));
}

#[test]
fn an_unknown_joint_type_is_a_parse_error_naming_the_link() {
    let text = variant("type = \"revolute\"", "type = \"spherical\"");
    let err = build(&text).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ModelError::Parse { .. }), "{err:?}");
    eprintln!("{msg}");
    assert!(
        msg.contains("links[0]") && msg.contains("spherical") && msg.contains("prismatic"),
        "{msg}"
    );
}

#[test]
fn nan_and_infinity_are_refused() {
    for (from, to) in [
        ("mass = 1.0", "mass = nan"),
        ("com = [0.0, 0.0, -0.5]", "com = [0.0, nan, -0.5]"),
        (
            "translation = [0.0, 0.0, 2.0]",
            "translation = [0.0, inf, 2.0]",
        ),
        ("axis = [0.0, 1.0, 0.0]", "axis = [0.0, nan, 0.0]"),
        (
            "principal = [0.1, 0.1, 0.01]",
            "principal = [0.1, nan, 0.01]",
        ),
    ] {
        let text = variant(from, to);
        assert!(
            matches!(build(&text), Err(ModelError::NonFinite { .. })),
            "{to}: {:?}",
            build(&text)
        );
    }
    let text = PENDULUM.replacen(
        "name = \"pendulum\"",
        "name = \"pendulum\"\ngravity = [0.0, 0.0, nan]",
        1,
    );
    assert!(matches!(build(&text), Err(ModelError::NonFinite { .. })));
}

#[test]
fn other_mistakes_are_refused() {
    let dup = variant("name = \"lower\"", "name = \"upper\"");
    assert_eq!(build(&dup), Err(ModelError::DuplicateName("upper".into())));
    let floating_child = variant(
        "parent = \"upper\"\njoint = { type = \"revolute\", axis = [0.0, 1.0, 0.0] }",
        "parent = \"upper\"\njoint = { type = \"floating\" }",
    );
    assert_eq!(
        build(&floating_child),
        Err(ModelError::FloatingWithParent("lower".into()))
    );
    let zero_axis = variant("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 0.0, 0.0]");
    assert_eq!(build(&zero_axis), Err(ModelError::ZeroAxis("upper".into())));
    let quat = variant(
        "translation = [0.0, 0.0, 2.0]",
        "rotation = { quat_wxyz = [1.0, 1.0, 0.0, 0.0] }",
    );
    assert!(matches!(
        build(&quat),
        Err(ModelError::NotUnitQuaternion { .. })
    ));
    let sphere = variant("mass = 1.0", "mass = 1.0\nspheres = [{ radius = -0.1 }]");
    assert!(matches!(
        build(&sphere),
        Err(ModelError::NonPositiveDimension { .. })
    ));
    let overflow = variant(
        "principal = [0.1, 0.1, 0.01]",
        "principal = [1e308, 1e308, 1e308]",
    );
    assert!(
        build(&overflow).is_ok(),
        "large but finite is a valid inertia"
    );
    let overflow = variant(
        "inertia = { principal = [0.1, 0.1, 0.01] }",
        "inertia = { solid_box = [1e200, 1e200, 1e200] }",
    );
    assert!(
        matches!(build(&overflow), Err(ModelError::NonFinite { .. })),
        "{:?}",
        build(&overflow)
    );
    let unknown_key = variant("mass = 1.0", "mass = 1.0\nmas = 2.0");
    assert!(matches!(build(&unknown_key), Err(ModelError::Parse { .. })));
    assert_eq!(
        Description::from_toml_str("links = []").unwrap().build(),
        Err(ModelError::Empty)
    );
    assert!(matches!(
        Model::from_path(crate_dir().join("no_such_file.toml")),
        Err(ModelError::Io { .. })
    ));
}

#[test]
fn description_files_are_checked_before_reading() {
    let io_message = |path: &str| match Model::from_path(path) {
        Err(ModelError::Io { message, .. }) => message,
        other => panic!("{path}: expected an IO error, got {other:?}"),
    };
    // A device is refused by its extension, or as not a regular file, never read.
    assert!(io_message("/dev/zero").contains("unknown extension"));
    let dir = std::env::temp_dir().join(format!("contactlab-mb-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("dir.toml")).unwrap();
    let m = io_message(dir.join("dir.toml").to_str().unwrap());
    assert!(m.contains("not a regular file"), "{m}");
    // Too large: a sparse file of MAX_DESCRIPTION_BYTES + 1 bytes.
    let big = dir.join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(contactlab_multibody::description::MAX_DESCRIPTION_BYTES + 1)
        .unwrap();
    let m = io_message(big.to_str().unwrap());
    assert!(m.contains("MAX_DESCRIPTION_BYTES"), "{m}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn links_are_ordered_parents_first_keeping_the_listed_order() {
    // mixed_tree.json lists `tip` before its parent `welded`.
    let m = load("fixtures/mixed_tree.json");
    let names: Vec<&str> = m.bodies().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        ["base", "arm1", "slider", "welded", "tip", "arm2", "forearm2"]
    );
    for (i, b) in m.bodies().iter().enumerate() {
        assert!(b.parent.is_none_or(|p| p < i));
    }
    assert_eq!((m.nq(), m.nv()), (12, 11));
}

#[test]
fn the_quadruped_has_anymal_proportions() {
    let m = load("robots/quadruped.toml");
    assert!((m.total_mass() - 35.0).abs() < 1e-9, "{}", m.total_mass());
    assert_eq!((m.nq(), m.nv(), m.num_bodies()), (19, 18, 17));
    assert_eq!(m.bodies()[0].joint, Joint::Floating);
    assert_eq!(
        m.bodies()
            .iter()
            .filter(|b| matches!(b.joint, Joint::Revolute { .. }))
            .count(),
        12
    );
    let feet: Vec<_> = m
        .bodies()
        .iter()
        .filter(|b| b.name.ends_with("_foot"))
        .collect();
    assert_eq!(feet.len(), 4);
    assert!(feet
        .iter()
        .all(|f| f.spheres.len() == 1 && f.spheres[0].radius == 0.03));
    // At the neutral configuration the feet are 0.55 m below the hip joints (z = 0).
    let q = m.neutral_configuration();
    for f in &feet {
        let i = m.body_index(&f.name).unwrap();
        let p = m.point_position(&q, i, &f.spheres[0].offset);
        assert!((p.z + 0.55).abs() < 1e-12, "{}: {p}", f.name);
    }
    let mut r = common::rng(1);
    for _ in 0..5 {
        let q = common::random_configuration(&m, &mut r);
        let mm = m.mass_matrix(&q);
        assert!((&mm - mm.transpose()).abs().max() < 1e-12);
        assert!(mm.clone().cholesky().is_some());
        // The base block is the whole robot's inertia: its mass block is 35 I.
        for k in 0..3 {
            assert!((mm[(k, k)] - 35.0).abs() < 1e-9);
        }
    }
}
