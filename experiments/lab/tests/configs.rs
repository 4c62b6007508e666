//! The shipped configs against the standard lab: every config under `experiments/configs/`
//! parses and passes the lab's check (experiments and matrices: solver names, pairings, options,
//! scene kinds and every run's scene parameters; problem sets: their solvers and files; other
//! engines: their harness script exists), and Hwangbo's tasks expand as the paper runs them.

use std::path::PathBuf;

use contactlab_lab::Lab;
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::matrix::config_kind;
use contactlab_scenes::quadruped::{Quadruped, QuadrupedConfig, Task};

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
                cfg.problems(lab.root(), &path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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
    let cfg = lab.experiment(&path).unwrap();
    assert_eq!(cfg.paper, "hwangbo2018");
    assert_eq!(cfg.scene.kind, "quadruped");
    assert_eq!(cfg.scene.steps, 10000);
    let runs = cfg.runs(&path).unwrap();
    let tasks: Vec<Task> = runs
        .iter()
        .map(|r| {
            let c = QuadrupedConfig::from_table(&r.params).unwrap();
            assert_eq!((c.dt, c.height), (1e-3, 1.0));
            Quadruped::new(&c).unwrap();
            c.task
        })
        .collect();
    // Each of the two drivers advances its own copy of every task.
    let four = [Task::Hang, Task::Drop, Task::Random, Task::Trot];
    assert_eq!(tasks, [four, four].concat());
    let names: Vec<String> = cfg.driver_specs().iter().map(|d| d.name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}
