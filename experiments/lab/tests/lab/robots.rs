//! The matrix's `robots` set (`data/mujoco_robots/`, every row MuJoCo has) through
//! `Lab::run_sets`: the set alone, a pair that takes every kind solving two robot states to the
//! shared ruler's tolerance at a measured distance from MuJoCo's answers, and a Coulomb-only
//! pair (`sap+clarabel`) refused before it runs, naming the kind.

use std::path::{Path, PathBuf};

use contactlab_lab::Lab;
use contactlab_runs::schema::matrix;
use contactlab_runs::store::read_run;
use polars::prelude::*;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch root whose `data` links to the workspace's robot and MuJoCo sets.
fn scratch(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("contactlab-robots-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("experiments/configs/m")).unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    for d in ["mujoco_robots", "mujoco"] {
        std::os::unix::fs::symlink(workspace().join("data").join(d), root.join("data").join(d))
            .unwrap();
    }
    root
}

fn f64s(df: &DataFrame, c: &str) -> Vec<f64> {
    contactlab_runs::columns::f64s(df, c).unwrap()
}

fn strs(df: &DataFrame, c: &str) -> Vec<String> {
    contactlab_runs::columns::strs(df, c).unwrap()
}

const PAIRS: &str = "only = [\"natural-map+lm\", \"sap+clarabel\"]\n";

#[test]
fn the_robots_set_alone_is_solved_by_an_every_kind_pair_and_refused_by_a_coulomb_only_one() {
    let root = scratch("set");
    let config = root.join("experiments/configs/m/m.toml");
    std::fs::write(
        &config,
        format!(
            "kind = \"matrix\"\nname = \"m\"\ntol = 1e-6\ntime_limit = 20.0\nmax_iter = 200\n{PAIRS}\
             [[sets]]\nname = \"mujoco\"\nfiles = [\"data/mujoco/global/balls_in_box_n5_mu1.0_seed105_step0060_nc6.json\"]\n\
             [[sets]]\nname = \"robots\"\nfiles = [\"data/mujoco_robots/global/cheetah_t1500ms.json\", \
             \"data/mujoco_robots/global/manipulator_t0500ms.json\"]\nreference = \"data/mujoco_robots/mujoco\"\n"
        ),
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab
        .run_sets(&config, None, &["robots".to_string()], &mut Vec::new())
        .unwrap();
    // The set alone, under its own name: the whole matrix's data is not overwritten.
    assert!(
        summary.path.ends_with("data/runs/matrix/m-robots.parquet"),
        "{}",
        summary.path.display()
    );
    let df = read_run(&summary.path).unwrap();
    let (set, problem, f) = (
        strs(&df, matrix::PROBLEM_SET),
        strs(&df, matrix::PROBLEM),
        strs(&df, matrix::FORMULATION),
    );
    let (status, kind, message) = (
        strs(&df, matrix::STATUS),
        strs(&df, matrix::REFUSED_KIND),
        strs(&df, matrix::MESSAGE),
    );
    let (residual, dr, du) = (
        f64s(&df, matrix::RESIDUAL),
        f64s(&df, matrix::REFERENCE_DISTANCE),
        f64s(&df, matrix::REFERENCE_DISTANCE_U),
    );
    let solved = contactlab_runs::columns::f64s(&df, matrix::SOLVED).unwrap();
    // Two problems x two pairs, the robots set only; problems sorted by name.
    assert_eq!(df.height(), 4);
    assert!(set.iter().all(|s| s == "robots"), "{set:?}");
    let row = |name: &str, formulation: &str| {
        (0..df.height())
            .find(|&i| problem[i] == name && f[i] == formulation)
            .unwrap_or_else(|| panic!("no row {name} {formulation}"))
    };
    // The natural map takes every kind: the limit beside the cheetah's contacts, the
    // manipulator's joint equality. Its answers pass the shared ruler (FCLib's relative error
    // 1e-6 over every row) and stand where we measured them from MuJoCo's soft answers
    // (impulses 0.177 and 0.074, velocities 0.067 and 0.069 of their scale).
    for (name, r_lo, r_hi, u_lo, u_hi) in [
        ("cheetah_t1500ms.json", 0.17, 0.185, 0.062, 0.072),
        ("manipulator_t0500ms.json", 0.07, 0.078, 0.064, 0.074),
    ] {
        let i = row(name, "natural-map");
        assert_eq!(status[i], "converged", "{name}: {}", message[i]);
        assert_eq!(solved[i], 1.0);
        assert!(residual[i] < 1e-6, "{name}: ruler {}", residual[i]);
        assert!((r_lo..r_hi).contains(&dr[i]), "{name}: impulses {}", dr[i]);
        assert!(
            (u_lo..u_hi).contains(&du[i]),
            "{name}: velocities {}",
            du[i]
        );
        assert!(kind[i].is_empty());
    }
    // Clarabel states Coulomb contacts' cones only: refused before it runs, naming the kind.
    for (name, refused) in [
        ("cheetah_t1500ms.json", "limit"),
        ("manipulator_t0500ms.json", "equality (1 row)"),
    ] {
        let i = row(name, "sap");
        assert_eq!(status[i], "error");
        assert_eq!(kind[i], refused);
        assert!(
            message[i].contains("does not take") && message[i].contains(refused),
            "{}",
            message[i]
        );
        assert!(dr[i].is_nan() && du[i].is_nan() && residual[i].is_nan());
    }
}

#[test]
fn an_unknown_set_is_named_with_the_known_ones() {
    let root = scratch("unknown");
    let config = root.join("experiments/configs/m/m.toml");
    std::fs::write(
        &config,
        format!(
            "kind = \"matrix\"\nname = \"m\"\ntol = 1e-6\ntime_limit = 1.0\nmax_iter = 10\n{PAIRS}\
             [[sets]]\nname = \"robots\"\ndirs = [\"data/mujoco_robots/global\"]\n"
        ),
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let e = lab
        .run_sets(&config, None, &["robot".to_string()], &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("no set `robot`") && e.contains("robots"), "{e}");
}
