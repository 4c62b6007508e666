//! The shipped configs against the standard lab: every config under `experiments/configs/`
//! (experiment sweeps, matrices, problem sets, single-contact timings and other engines) parses
//! and passes the lab's check (solver names, pairings, options, scene kinds and every run's
//! scene parameters, method names; a problem set's files exist), Hwangbo's tasks expand as the
//! paper runs them, and his Table I samples those very tasks.

use std::path::PathBuf;

use contactlab_lab::Lab;
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::matrix::config_kind;
use contactlab_runs::RunConfig;
use contactlab_scenes::quadruped::{Quadruped, QuadrupedConfig, Task};
use contactlab_scenes::SceneConfig;

fn configs() -> Vec<PathBuf> {
    let root = Lab::standard().root().join("experiments/configs");
    let mut out = Vec::new();
    for paper in std::fs::read_dir(&root).unwrap() {
        let dir = paper.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_shipped_config_passes_the_labs_check() {
    let lab = Lab::standard();
    let all = configs();
    assert!(all.len() >= 19, "{} configs", all.len());
    for path in all {
        match config_kind(&path).as_deref() {
            None => {
                lab.experiment(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            Some("matrix") => {
                lab.matrix(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            Some("problems") => {
                let cfg = lab
                    .problems(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let problems = cfg
                    .problems(lab.root(), &path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!problems.is_empty(), "{}: no problem", path.display());
                if let Some(r) = &cfg.reference {
                    assert!(lab.root().join(&r.dir).is_dir(), "{}", path.display());
                }
            }
            Some("engines") => {
                let cfg = EnginesConfig::load(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(
                    lab.root().join(&cfg.script).is_file(),
                    "{}: no script {}",
                    path.display(),
                    cfg.script.display()
                );
            }
            Some("single_contact") => {
                lab.single_contact(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            Some("ladder") => {
                lab.ladder(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            Some(other) => panic!("{}: unknown kind {other}", path.display()),
        }
    }
}

/// The shipped config loads, expands to the four tasks, and every run's scene builds with the
/// paper's `dt` and the release height.
#[test]
fn the_tasks_config_expands_to_the_four_tasks() {
    let lab = Lab::standard();
    let path = lab
        .root()
        .join("experiments/configs/hwangbo2018/tasks.toml");
    let plan = lab.experiment(&path).unwrap();
    let cfg = plan.config();
    assert_eq!(cfg.paper, "hwangbo2018");
    assert_eq!(cfg.scene.kind, "quadruped");
    assert_eq!(cfg.scene.steps, 10000);
    // The plan keeps each run's scene parsed: the same config its raw table gives.
    let tasks: Vec<Task> = plan
        .runs()
        .iter()
        .map(|r| {
            let SceneConfig::Quadruped(c) = &r.scene else {
                panic!("run {} is not a quadruped: {:?}", r.spec.index, r.scene);
            };
            assert_eq!(*c, QuadrupedConfig::from_table(&r.spec.params).unwrap());
            assert_eq!((c.dt, c.height), (1e-3, 1.0));
            Quadruped::new(c).unwrap();
            c.task
        })
        .collect();
    // Each of the two drivers advances its own copy of every task.
    let four = [Task::Hang, Task::Drop, Task::Random, Task::Trot];
    assert_eq!(tasks, [four, four].concat());
    let names: Vec<String> = cfg.driver_specs().iter().map(|d| d.name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Table I's samples come from the tasks of Table II: `table1.toml` simulates the scene of
/// `tasks.toml` with its parameters, for each of its runs' sweep values (the same tasks and
/// seeds), with the bisection driver, for at most the tasks' steps.
#[test]
fn table_one_samples_the_tasks_of_table_two() {
    let lab = Lab::standard();
    let dir = lab.root().join("experiments/configs/hwangbo2018");
    let tasks = lab.experiment(&dir.join("tasks.toml")).unwrap();
    let tasks = tasks.config();
    let table1 = lab.single_contact(&dir.join("table1.toml")).unwrap();
    assert_eq!(table1.scene.kind, tasks.scene.kind);
    assert_eq!(table1.scene.params, tasks.scene.params);
    assert_eq!(table1.sweep, tasks.sweep);
    assert!(table1.scene.steps <= tasks.scene.steps);
    assert_eq!(table1.driver.optimizer.name, "bisection-sor");
    assert_eq!(
        table1.methods,
        [
            "bisection",
            "golden_section",
            "golden_section_closed",
            "analytical"
        ]
    );
}

/// The extra runs of the Hwangbo report simulate Table II's scene: `hang_tight`,
/// `random_feet` and `random_shadow` with the tasks' parameters (the feet-only random task
/// switching the torso off; without the trot's controller, which they do not run), `dt50hz`
/// with them at dt = 20 ms and the controllers' gains implicit.
#[test]
fn the_extra_hwangbo_runs_use_the_tasks_scene() {
    let lab = Lab::standard();
    let dir = lab.root().join("experiments/configs/hwangbo2018");
    let tasks = lab.experiment(&dir.join("tasks.toml")).unwrap();
    let tasks = tasks.config();
    for (file, changes) in [
        ("hang_tight.toml", vec![]),
        ("random_shadow.toml", vec![]),
        (
            "random_feet.toml",
            vec![("torso_collides", toml::Value::Boolean(false))],
        ),
        (
            "dt50hz.toml",
            vec![
                ("dt", toml::Value::Float(0.02)),
                ("implicit_gains", toml::Value::Boolean(true)),
            ],
        ),
    ] {
        let plan = lab.experiment(&dir.join(file)).unwrap();
        let cfg = plan.config();
        let mut want = tasks.scene.params.clone();
        // The trot's controller matters only where the trot runs.
        if !cfg
            .sweep
            .get("task")
            .is_some_and(|t| t.contains(&"trot".into()))
        {
            want.remove("trot_controller");
        }
        for (k, v) in changes {
            want.insert(k.into(), v);
        }
        assert_eq!(cfg.scene.params, want, "{file}");
        assert_eq!(cfg.scene.kind, "quadruped", "{file}");
    }
}

/// The fidelity study's `[every_pair]` runs every compatible pair of the lab's registry, each
/// labelled by its pair; a config still carrying `[every_pair]` is refused by the run's check
/// (so a driver list cannot silently miss the registry's pairs).
#[test]
fn every_pair_runs_every_compatible_pair_of_the_registry() {
    let lab = Lab::standard();
    let path = lab.root().join("experiments/configs/fidelity/stack.toml");
    let plan = lab.experiment(&path).unwrap();
    let cfg = plan.config();
    let names: Vec<String> = cfg.driver_specs().iter().map(|d| d.name()).collect();
    let pairs: Vec<String> = lab.registry().pairs().iter().map(|p| p.label()).collect();
    assert_eq!(names, pairs);
    assert!(names.contains(&"sap+newton-merit".to_string()), "{names:?}");
    let pgs = &cfg.drivers[names.iter().position(|n| n == "coulomb+pgs").unwrap()];
    assert_eq!((pgs.max_iter, pgs.time_limit), (1000, Some(1.0)));
    let raw = contactlab_runs::config::ExperimentConfig::load(&path).unwrap();
    let e = lab.check_experiment(&raw, &path).unwrap_err().to_string();
    assert!(
        e.contains("every_pair") && e.contains("not expanded"),
        "{e}"
    );
}
