//! `just peers`, whole steps: this project's scenes stepped end to end beside MuJoCo's `mj_step`
//! (and Drake's SAP where `pydrake` is installed) on the same scenes, in the same run (issue 11).
//!
//! Ours are the configs `experiments/configs/peers/{balls,clutter}.toml` run by the same runner
//! as every experiment, on one thread (as MuJoCo and Drake run here): a step's time is the
//! scene's collision detection, assembly and update plus the solve (`scene_seconds + seconds`
//! of its rows), its median over the run. Theirs are `experiments/peers/bench.py` on the scenes it
//! builds to mirror ours ([`contactlab_lab::engines::run_bench`]). The contact models differ (ours rigid or
//! SAP's near-rigid compliance, MuJoCo's soft `solref`/`solimp`, Drake's point contact), and the
//! placements of the balls come from different random generators, so a ratio compares the cost of
//! simulating the same scene, not of computing the same numbers.

use polars::prelude::DataFrame;

use contactlab_lab::engines::{run_bench, PeerTime};
use contactlab_lab::{runner, Lab};

use crate::analysis::{f64s, quantile, strs};
use crate::report::ReportError;

/// One engine's median whole step on one scene.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeStep {
    /// The scene, named as `bench.py` names it (`balls_in_box_n10_mu0.5`, `clutter_n40`).
    pub scene: String,
    /// `contactlab`, `mujoco` or `drake-sap`.
    pub engine: String,
    /// The solver (ours) or the engine's configuration.
    pub solver: String,
    /// Steps timed.
    pub steps: usize,
    /// Median contacts per step.
    pub contacts_median: f64,
    /// Median wall time of a whole step (s).
    pub median_seconds: f64,
}

/// The configs of our side, under `experiments/configs/peers/`.
pub const CONFIGS: [&str; 2] = ["balls.toml", "clutter.toml"];

/// Runs our scenes and the peers' and returns every engine's rows; `progress` gets a line per
/// stage. Where `bench.py` cannot run, the error says what is missing.
pub fn measure(
    lab: &Lab,
    progress: &mut dyn std::io::Write,
) -> Result<Vec<WholeStep>, ReportError> {
    let root = lab.root();
    let mut rows = Vec::new();
    for name in CONFIGS {
        writeln!(
            progress,
            "whole steps: running experiments/configs/peers/{name} (one thread)"
        )?;
        rows.extend(ours(lab, name)?);
    }
    let out_dir = root.join("data/runs/peers");
    std::fs::create_dir_all(&out_dir)?;
    let drake = has_drake();
    for (only, extra) in [
        ("balls", vec![]),
        ("clutter", vec!["--nclutter", "40", "--drake-paper-params"]),
    ] {
        writeln!(
            progress,
            "whole steps: bench.py --only {only} (MuJoCo{})",
            if drake { ", Drake" } else { "" }
        )?;
        let mut args = vec!["--only", only, "--configs", "mj_newton_elliptic"];
        args.extend(extra);
        if !drake {
            args.push("--no-drake");
        }
        let peers = run_bench(root, &args, &format!("steps_{only}"), &out_dir)
            .map_err(|e| ReportError::MissingData(format!("whole steps: {e}")))?;
        rows.extend(peers.into_iter().map(from_peer));
    }
    Ok(rows)
}

/// Whether Python's `pydrake` imports (Drake is optional: `pip install drake`).
fn has_drake() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import pydrake"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn from_peer(p: PeerTime) -> WholeStep {
    WholeStep {
        scene: p.scene,
        engine: p.engine,
        solver: p.config,
        steps: 0,
        contacts_median: p.contacts_per_step_median,
        median_seconds: p.seconds_per_step_median,
    }
}

/// Runs one of our configs on one thread and gives one row per (scene, driver).
fn ours(lab: &Lab, name: &str) -> Result<Vec<WholeStep>, ReportError> {
    let path = lab.root().join("experiments/configs/peers").join(name);
    let cfg = lab
        .experiment(&path)
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| ReportError::MissingData(format!("a one-thread pool: {e}")))?;
    let time_limit = lab.settings().sweep_time_limit;
    let out = pool
        .install(|| runner::run_experiment(lab.registry(), &cfg, &path, None, false, time_limit))
        .map_err(|e| ReportError::MissingData(format!("experiments/configs/peers/{name}: {e}")))?;
    let df = runner::steps_frame(&cfg, &out)?;
    whole_steps(&df)
}

/// One row per (scene, driver) of a steps frame: the driver's own rows (not its shadows'), the
/// median of `seconds + scene_seconds` over the run's steps.
pub fn whole_steps(df: &DataFrame) -> Result<Vec<WholeStep>, ReportError> {
    let role = strs(df, "role")?;
    let solver = strs(df, "solver")?;
    let seconds = f64s(df, "seconds")?;
    let scene_seconds = f64s(df, "scene_seconds")?;
    let contacts = f64s(df, "n_c")?;
    let scene = scene_names(df)?;
    // ((scene, solver), [(step seconds, contacts)]) in order of first appearance.
    type Group = ((String, String), Vec<(f64, f64)>);
    let mut groups: Vec<Group> = Vec::new();
    for i in 0..df.height() {
        if role[i] != "driver" {
            continue;
        }
        let key = (scene[i].clone(), solver[i].clone());
        let point = (seconds[i] + scene_seconds[i], contacts[i]);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(point),
            None => groups.push((key, vec![point])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|((scene, solver), v)| {
            let times: Vec<f64> = v.iter().map(|p| p.0).collect();
            let contacts: Vec<f64> = v.iter().map(|p| p.1).collect();
            WholeStep {
                scene,
                engine: "contactlab".into(),
                solver,
                steps: v.len(),
                contacts_median: quantile(&contacts, 0.5),
                median_seconds: quantile(&times, 0.5),
            }
        })
        .collect())
}

/// `bench.py`'s scene name of every row: `balls_in_box_n{n}_mu{mu}` or `clutter_n{n}`.
fn scene_names(df: &DataFrame) -> Result<Vec<String>, ReportError> {
    let names = df.get_column_names();
    let has = |c: &str| names.iter().any(|n| n.as_str() == c);
    if has("n_balls") && has("mu") {
        let (n, mu) = (f64s(df, "n_balls")?, f64s(df, "mu")?);
        Ok(n.iter()
            .zip(&mu)
            .map(|(n, mu)| format!("balls_in_box_n{}_mu{mu:?}", *n as u64))
            .collect())
    } else if has("n_bodies") {
        Ok(f64s(df, "n_bodies")?
            .iter()
            .map(|n| format!("clutter_n{}", *n as u64))
            .collect())
    } else {
        Err(ReportError::MissingData(
            "whole steps: a run without n_balls/mu or n_bodies".into(),
        ))
    }
}

/// The rows of the report: per scene set (`balls`: the twelve cells, the median of the per-cell
/// ratios; `clutter_n40`) and our solver, our median step beside MuJoCo's and Drake's.
pub fn summary(rows: &[WholeStep]) -> Vec<SetSummary> {
    type Member = fn(&str) -> bool;
    let sets: [(&str, Member); 2] = [
        ("balls_in_box", |s| s.starts_with("balls_in_box")),
        ("clutter_n40", |s| s == "clutter_n40"),
    ];
    let mut out = Vec::new();
    for (set, member) in sets {
        let peer = |engine: &str, scene: &str| {
            rows.iter()
                .find(|r| r.engine == engine && r.scene == scene)
                .map(|r| r.median_seconds)
        };
        let mut solvers: Vec<&str> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.engine == "contactlab" && member(&r.scene))
        {
            if !solvers.contains(&r.solver.as_str()) {
                solvers.push(&r.solver);
            }
        }
        for solver in solvers {
            let ours: Vec<&WholeStep> = rows
                .iter()
                .filter(|r| r.engine == "contactlab" && r.solver == solver && member(&r.scene))
                .collect();
            let collect = |f: &dyn Fn(&WholeStep) -> Option<f64>| -> Vec<f64> {
                ours.iter().filter_map(|r| f(r)).collect()
            };
            out.push(SetSummary {
                set: set.to_string(),
                solver: solver.to_string(),
                scenes: ours.len(),
                contacts_median: quantile(&collect(&|r| Some(r.contacts_median)), 0.5),
                median_seconds: quantile(&collect(&|r| Some(r.median_seconds)), 0.5),
                mujoco_median_seconds: quantile(&collect(&|r| peer("mujoco", &r.scene)), 0.5),
                drake_median_seconds: quantile(&collect(&|r| peer("drake-sap", &r.scene)), 0.5),
                ratio_to_mujoco: quantile(
                    &collect(&|r| peer("mujoco", &r.scene).map(|m| r.median_seconds / m)),
                    0.5,
                ),
            });
        }
    }
    out
}

/// One line of the whole-step table.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSummary {
    /// `balls_in_box` (twelve cells) or `clutter_n40`.
    pub set: String,
    /// Our solver.
    pub solver: String,
    /// Scenes in the set.
    pub scenes: usize,
    /// Our median contacts per step (median over the set's scenes).
    pub contacts_median: f64,
    /// Our median step (s), median over the set's scenes.
    pub median_seconds: f64,
    /// MuJoCo's, the same way (NaN when it did not run).
    pub mujoco_median_seconds: f64,
    /// Drake's, the same way (NaN when it did not run).
    pub drake_median_seconds: f64,
    /// Median over the set's scenes of our step time over MuJoCo's.
    pub ratio_to_mujoco: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn row(scene: &str, engine: &str, solver: &str, s: f64) -> WholeStep {
        WholeStep {
            scene: scene.into(),
            engine: engine.into(),
            solver: solver.into(),
            steps: 1,
            contacts_median: 3.0,
            median_seconds: s,
        }
    }

    #[test]
    fn driver_rows_group_by_scene_and_solver_with_median_step_times() {
        let df = df!(
            "role" => ["driver", "driver", "driver", "shadow", "driver"],
            "solver" => ["pgs", "pgs", "pgs", "lm", "pgs"],
            "seconds" => [1.0, 2.0, 3.0, 100.0, 7.0],
            "scene_seconds" => [1.0, 1.0, 1.0, 1.0, 1.0],
            "n_c" => [2u64, 4, 6, 4, 1],
            "n_balls" => [5i64, 5, 5, 5, 10],
            "mu" => [0.5, 0.5, 0.5, 0.5, 1.0],
        )
        .unwrap();
        let rows = whole_steps(&df).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].scene, "balls_in_box_n5_mu0.5");
        assert_eq!(rows[0].steps, 3);
        assert_eq!(rows[0].median_seconds, 3.0);
        assert_eq!(rows[0].contacts_median, 4.0);
        assert_eq!(rows[1].scene, "balls_in_box_n10_mu1.0");
        assert_eq!(rows[1].median_seconds, 8.0);
    }

    #[test]
    fn the_shipped_configs_run_and_name_their_scenes_as_bench_py_does() {
        let lab = Lab::standard();
        for name in CONFIGS {
            let path = lab.root().join("experiments/configs/peers").join(name);
            let mut cfg = lab.experiment(&path).unwrap();
            assert_eq!(cfg.driver_specs().len(), 2, "{name}");
            // A few steps of one cell: our side end to end.
            cfg.scene.steps = 3;
            for values in cfg.sweep.values_mut() {
                values.truncate(1);
            }
            let out = lab.run_experiment(&cfg, &path, None).unwrap();
            let rows = whole_steps(&runner::steps_frame(&cfg, &out).unwrap()).unwrap();
            let scene = if name == "balls.toml" {
                "balls_in_box_n5_mu0.1"
            } else {
                "clutter_n40"
            };
            assert_eq!(rows.len(), 2, "{name}: {rows:?}");
            for r in &rows {
                assert_eq!(r.scene, scene);
                assert_eq!(r.steps, 3);
                assert!(
                    r.median_seconds > 0.0 && r.median_seconds.is_finite(),
                    "{r:?}"
                );
            }
        }
    }

    #[test]
    fn the_summary_takes_ratios_per_scene_then_their_median() {
        let rows = vec![
            row("balls_in_box_n5_mu0.5", "contactlab", "pgs", 4.0),
            row("balls_in_box_n5_mu0.5", "mujoco", "mj", 1.0),
            row("balls_in_box_n10_mu0.5", "contactlab", "pgs", 9.0),
            row("balls_in_box_n10_mu0.5", "mujoco", "mj", 3.0),
            row("clutter_n40", "contactlab", "sap", 2.0),
            row("clutter_n40", "mujoco", "mj", 0.5),
            row("clutter_n40", "drake-sap", "drake", 4.0),
        ];
        let s = summary(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].set.as_str(), s[0].scenes), ("balls_in_box", 2));
        assert_eq!(s[0].ratio_to_mujoco, 3.5); // median of 4 and 3
        assert!(s[0].drake_median_seconds.is_nan());
        assert_eq!(s[1].ratio_to_mujoco, 4.0);
        assert_eq!(s[1].drake_median_seconds, 4.0);
    }
}
