//! End to end: the peers' configs cut down (one problem per set, two rounds, a few solvers, a
//! few steps of each scene) through `contactlab reproduce peers` into a scratch root, with
//! `CONTACTLAB_NO_PEERS` set so that MuJoCo's and Drake's runs are skipped: the CSV files keep
//! their columns, the runs' provenance is on the page, the report says plainly that MuJoCo was
//! not measured and why, and without the whole-step sweeps it leaves their section out. And the
//! shipped problem sets split MuJoCo's exported steps as the report's tables name them.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{column, floats, ints, set, Root};
use contactlab_experiments::cli;
use contactlab_experiments::config::{ExperimentConfig, RunConfig};
use contactlab_experiments::store::RunMeta;
use contactlab_experiments::toml;
use contactlab_runs::problems::ProblemsConfig;

/// The contacts in an exported problem's name (`..._nc206.json`).
fn contacts(file: &str) -> usize {
    file.rsplit_once("_nc")
        .and_then(|(_, rest)| rest.split('.').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no contact count in {file}"))
}

fn readme_mentions_speed_without_ratio(readme: &str) -> bool {
    readme.contains("## SAP at MuJoCo's speed")
        && readme.contains("`speed` ran, but MuJoCo's cold solve of the same steps")
        && !readme.contains("speed.csv")
}

#[test]
fn a_cut_down_reproduction_reports_without_mujoco_and_says_why() {
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("peers");
    std::fs::create_dir_all(root.path.join("data")).unwrap();
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mujoco"),
        root.path.join("data/mujoco"),
    )
    .unwrap();
    // One problem per set, PGS and SAP in both layouts, two rounds.
    root.config("solvers.toml", |t| {
        t.insert("rounds".into(), toml::Value::Integer(2));
        let keep = [
            "balls_in_box_n10_mu0.5_seed110_step0050_nc4.json",
            "clutter_n8_seed7_step0250_nc19.json",
            "clutter_n40_seed7_step0090_nc83.json",
        ];
        for s in t["sets"].as_array_mut().unwrap() {
            let files = s["files"].as_array_mut().unwrap();
            files.retain(|f| keep.iter().any(|k| f.as_str().unwrap().ends_with(k)));
            assert_eq!(files.len(), 1);
        }
        let solvers = t["solvers"].as_array_mut().unwrap();
        solvers.retain(|s| ["pgs", "newton-merit"].contains(&s["optimizer"].as_str().unwrap()));
        assert_eq!(solvers.len(), 4);
    });
    // The speed protocol on one problem, two rounds.
    root.config("speed.toml", |t| {
        t.insert("rounds".into(), toml::Value::Integer(2));
        for s in t["sets"].as_array_mut().unwrap() {
            let files = s["files"].as_array_mut().unwrap();
            files.truncate(1);
        }
    });
    // Our side of the Pinocchio comparison on one problem per set; Pinocchio's is skipped.
    root.config("pinocchio.toml", |t| {
        t.insert("rounds".into(), toml::Value::Integer(1));
        // One small file per set, listed instead of the sets' folders.
        let one = |set: &mut toml::Value, file: &str| {
            let t = set.as_table_mut().unwrap();
            t.remove("dirs");
            t.insert("files".into(), toml::Value::Array(vec![file.into()]));
        };
        let sets = t["sets"].as_array_mut().unwrap();
        sets.truncate(1);
        one(
            &mut sets[0],
            "data/mujoco/global/clutter_n8_seed7_step0250_nc19.json",
        );
    });
    root.config("pinocchio_engines.toml", |_| {});
    // The fresh clutter (skipped here: it needs MuJoCo).
    root.config("fresh_engines.toml", |_| {});
    // Our PGS beside MuJoCo's (skipped here: it needs MuJoCo).
    root.config("pgs_engines.toml", |_| {});
    // Todorov's driver beside MuJoCo's Newton (skipped here: it needs MuJoCo).
    root.config("newton_engines.toml", |_| {});
    root.config("balls.toml", |t| {
        set(t, "sweep", "mu", floats(&[0.5]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "scene", "steps", toml::Value::Integer(5));
    });
    root.config("clutter.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(3));
    });
    for f in [
        "solvers_mujoco.toml",
        "balls_engines.toml",
        "clutter_engines.toml",
    ] {
        root.config(f, |_| {});
    }
    root.write(
        "findings.md",
        "## Findings\n\nOn {{solvers.problems = 3}} problems, MuJoCo {{mujoco.measured}}; PGS's \
         gain on the largest is {{mujoco_clutter_80plus.coulomb+pgs.gain}}, its largest island \
         {{mujoco_clutter_80plus.coulomb+pgs.largest_island}} of \
         {{mujoco_clutter_80plus.coulomb+pgs.largest_contacts = 83}} contacts.\n",
    );
    let mut out = Vec::new();
    cli::reproduce(&root.lab(), Some("peers"), false, false, &mut out).unwrap();
    let log = String::from_utf8(out).unwrap();
    for run in [
        "balls",
        "balls_engines",
        "clutter",
        "clutter_engines",
        "solvers",
        "solvers_mujoco",
        "speed",
        "pinocchio",
        "pinocchio_engines",
        "fresh_engines",
        "pgs_engines",
        "newton_engines",
    ] {
        assert!(log.contains(&format!("peers/{run}:")), "{run} ran:\n{log}");
    }
    assert!(
        root.read("README.md").contains(
            "**Our PGS was not measured beside MuJoCo's in this run** (`pgs_engines`: \
             CONTACTLAB_NO_PEERS is set)"
        ),
        "the PGS section says it was not measured"
    );
    assert!(
        root.read("README.md").contains(
            "**Todorov's driver was not measured beside MuJoCo's Newton in this run** \
             (`newton_engines`: CONTACTLAB_NO_PEERS is set)"
        ),
        "the Newton section says it was not measured"
    );
    // Without MuJoCo the fresh clutter's section says why it has no numbers.
    assert!(
        root.read("README.md").contains(
            "**The fresh clutter was not measured in this run** (`fresh_engines`: \
             CONTACTLAB_NO_PEERS is set)"
        ),
        "the fresh clutter's section says it was not measured"
    );
    // Without Pinocchio, its section keeps our side and says why the other is missing.
    let page = root.read("README.md");
    assert!(
        page.contains("## Beside Pinocchio's solvers")
            && page.contains("**Pinocchio's solvers were not measured in this run** (`pinocchio_engines`: CONTACTLAB_NO_PEERS is set)")
            && page.contains("| fclib | coulomb+admm (whole dense) |"),
        "{page}"
    );
    // Without MuJoCo's cold solves the speed section says why it has no ratio.
    assert!(
        readme_mentions_speed_without_ratio(&root.read("README.md")),
        "the speed section says MuJoCo was not measured"
    );
    let readme = root.read("README.md");

    // MuJoCo and Drake were not measured, and the page says so with the reason.
    assert!(
        readme.contains(
            "**MuJoCo's constraint solver was not measured in this run** (`solvers_mujoco`: \
             CONTACTLAB_NO_PEERS is set)"
        ),
        "{readme}"
    );
    for sweep in ["balls", "clutter"] {
        assert!(
            readme.contains(&format!(
                "MuJoCo and Drake were not measured on `{sweep}` in this run"
            )),
            "{readme}"
        );
    }
    assert!(readme
        .contains("On 3 problems, MuJoCo not measured in this run (CONTACTLAB_NO_PEERS is set)"));
    // The templates' prose, with the data's values: the warm-up threshold of the runs, the
    // sets' descriptions as the gains table's columns, and the files that were written.
    for want in [
        "Both sides' solves are warm in cache: Pinocchio's repeats run back to back, and each of \
         ours under 2 ms follows an untimed one of the same solver.",
        "## What islands and block-sparse `W` gain\n\nMedian over each set's problems",
        "| solver | balls | clutter, under 80 contacts | clutter, 80 or more |",
        "`problems.csv` (per problem, solver and layout), `pinocchio.csv` (our ADMM and PGS \
         beside Pinocchio's), `steps.csv` (whole steps, per scene and engine).",
    ] {
        assert!(readme.contains(want), "`{want}` in\n{readme}");
    }
    assert!(
        !readme.contains("{{") && !readme.contains("issue"),
        "{readme}"
    );
    // Every run read is in the provenance block.
    for run in [
        "solvers",
        "solvers_mujoco",
        "balls",
        "balls_engines",
        "clutter",
        "clutter_engines",
    ] {
        assert!(readme.contains(&format!("| `{run}` |")), "{run}: {readme}");
    }

    // peers.csv: per set and solver, MuJoCo's columns empty.
    let peers = root.csv("peers.csv");
    assert_eq!(
        peers.0,
        [
            "problem_set",
            "solver",
            "problems",
            "solved",
            "median_seconds",
            "mujoco_median_seconds",
            "ratio_to_mujoco"
        ]
    );
    assert_eq!(peers.1.len(), 12, "3 sets x 4 solvers");
    assert_eq!(
        column(&peers, "solver")[..4],
        [
            "coulomb+pgs",
            "coulomb+pgs (whole dense)",
            "sap+newton-merit",
            "sap+newton-merit (whole dense)"
        ]
    );
    assert!(column(&peers, "problems").iter().all(|p| *p == "1"));
    assert!(column(&peers, "mujoco_median_seconds")
        .iter()
        .all(|c| c.is_empty()));
    assert!(column(&peers, "ratio_to_mujoco")
        .iter()
        .all(|c| c.is_empty()));
    assert!(column(&peers, "median_seconds")
        .iter()
        .all(|c| c.parse::<f64>().unwrap() > 0.0));

    // problems.csv: per problem, pair and layout; the whole problem is one island.
    let problems = root.csv("problems.csv");
    assert_eq!(
        problems.0,
        [
            "problem",
            "problem_set",
            "contacts",
            "solver",
            "layout",
            "status",
            "iterations",
            "islands",
            "residual",
            "repeats",
            "median_seconds",
            "mujoco_median_seconds",
            "mujoco_iterations",
            "ratio_to_mujoco"
        ]
    );
    assert_eq!(problems.1.len(), 12);
    let (layout, islands, repeats) = (
        column(&problems, "layout"),
        column(&problems, "islands"),
        column(&problems, "repeats"),
    );
    for i in 0..problems.1.len() {
        assert!(["islands+blocks", "whole+dense"].contains(&layout[i]));
        if layout[i] == "whole+dense" {
            assert_eq!(islands[i], "1");
        }
        assert_eq!(repeats[i], "2");
    }
    let names: BTreeSet<&str> = column(&problems, "problem").into_iter().collect();
    assert!(
        names.contains("clutter_n40_seed7_step0090_nc83"),
        "{names:?}"
    );
    let pgs_83 = (0..problems.1.len())
        .find(|&i| {
            problems.1[i][0] == "clutter_n40_seed7_step0090_nc83"
                && problems.1[i][3] == "coulomb+pgs"
                && layout[i] == "islands+blocks"
        })
        .unwrap();
    assert!(
        islands[pgs_83].parse::<u64>().unwrap() > 1,
        "the clutter splits"
    );

    // gains.csv: one row per pair, one column per set.
    let gains = root.csv("gains.csv");
    assert_eq!(
        gains.0,
        [
            "solver",
            "mujoco_balls_gain",
            "mujoco_clutter_small_gain",
            "mujoco_clutter_80plus_gain"
        ]
    );
    assert_eq!(
        column(&gains, "solver"),
        ["coulomb+pgs", "sap+newton-merit"]
    );

    // steps.csv: our whole steps only, named as bench.py names its scenes.
    let steps = root.csv("steps.csv");
    assert_eq!(
        steps.0,
        [
            "scene",
            "engine",
            "solver",
            "steps",
            "contacts_median",
            "median_seconds"
        ]
    );
    // The clutter at its five sizes, once per driver.
    let clutter = [
        "clutter_n20",
        "clutter_n30",
        "clutter_n40",
        "clutter_n60",
        "clutter_n80",
    ];
    let mut scenes = vec!["balls_in_box_n5_mu0.5"; 2];
    scenes.extend(clutter.iter().chain(&clutter));
    assert_eq!(column(&steps, "scene"), scenes);
    assert!(column(&steps, "engine").iter().all(|e| *e == "contactlab"));
    let mut counts = vec!["5"; 2];
    counts.extend(["3"; 10]);
    assert_eq!(column(&steps, "steps"), counts);
    assert!(
        readme.contains("| balls_in_box | implicit-ncp+todorov | 1 |"),
        "{readme}"
    );

    // Our whole steps ran on one thread, as the configs say.
    for sweep in ["balls", "clutter"] {
        let meta = RunMeta::of_run(&root.path.join(format!("data/runs/peers/{sweep}.parquet")));
        assert_eq!(meta.threads, Some(1), "{sweep}");
    }
    assert!(root.read("facts.md").contains("`mujoco.measured`"));

    // Without the whole-step sweeps (only the solver configs run), that section is left out.
    for sweep in ["balls", "clutter"] {
        std::fs::remove_file(root.path.join(format!("data/runs/peers/{sweep}.parquet"))).unwrap();
    }
    let solvers_only = root.report().unwrap();
    assert!(
        !solvers_only.contains("## Whole steps") && !solvers_only.contains("steps.csv"),
        "{solvers_only}"
    );
    assert!(solvers_only.contains("## Per problem set"));
}

#[test]
fn the_shipped_sets_split_mujocos_steps_by_scene_and_size() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join("configs/peers/solvers.toml");
    let cfg = ProblemsConfig::load(&path).unwrap();
    let mut listed = BTreeSet::new();
    for s in &cfg.sets {
        for f in &s.files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let nc = contacts(&name);
            let want = if name.starts_with("balls_in_box") {
                "mujoco_balls"
            } else if nc < 80 {
                "mujoco_clutter_small"
            } else {
                "mujoco_clutter_80plus"
            };
            assert_eq!(s.name, want, "{name}");
            assert!(listed.insert(name), "listed twice");
        }
    }
    let shipped: BTreeSet<String> = std::fs::read_dir(dir.join("../data/mujoco/global"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(listed, shipped, "every exported step, once");
    // Every pair in both layouts, the whole dense one labelled so.
    let labels: Vec<String> = cfg.solvers.iter().map(|s| s.name()).collect();
    for pair in cfg.solvers.chunks(2) {
        assert!(pair[0].islands && !pair[0].dense, "{labels:?}");
        assert!(!pair[1].islands && pair[1].dense, "{labels:?}");
        assert_eq!(pair[1].name(), format!("{} (whole dense)", pair[0].name()));
    }
    for exempt in &cfg.slow_exempt {
        assert!(exempt.starts_with("coulomb+pgs"), "{exempt}");
    }
    // The whole steps run on one thread.
    for sweep in ["balls.toml", "clutter.toml"] {
        let c = ExperimentConfig::load(&dir.join("configs/peers").join(sweep)).unwrap();
        assert_eq!(c.threads, Some(1), "{sweep}");
    }
}

/// Our ADMM and PGS beside Pinocchio's, cut down to two problems per set and one round: our side
/// runs through its TOML config and converges, Pinocchio's run (skipped here, as on a machine
/// without `pin`) writes one row saying why, and both configs name the same problem sets.
#[test]
fn admm_beside_pinocchio_runs_ours_and_records_why_pinocchio_did_not() {
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("peers");
    std::fs::create_dir_all(root.path.join("data")).unwrap();
    for d in ["mujoco", "problems"] {
        std::os::unix::fs::symlink(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../data")
                .join(d),
            root.path.join("data").join(d),
        )
        .unwrap();
    }
    root.config("pinocchio.toml", |t| {
        t.insert("rounds".into(), toml::Value::Integer(1));
        let keep = ["Rover4396.hdf5", "FC3D_Example1.hdf5"];
        for s in t["sets"].as_array_mut().unwrap() {
            let s = s.as_table_mut().unwrap();
            if s["name"].as_str() == Some("fclib") {
                let files = s["files"].as_array_mut().unwrap();
                files.retain(|f| keep.iter().any(|k| f.as_str().unwrap().ends_with(k)));
                assert_eq!(files.len(), 2);
                s.remove("dirs");
            } else {
                s.remove("dirs");
                s.insert(
                    "files".into(),
                    toml::Value::Array(vec![
                        "data/mujoco/global/clutter_n8_seed7_step0250_nc19.json".into(),
                    ]),
                );
            }
        }
    });
    root.config("pinocchio_engines.toml", |_| {});
    root.run("pinocchio.toml");
    root.run("pinocchio_engines.toml");
    let ours = root.steps("pinocchio");
    let text = |c: &str| contactlab_experiments::analysis::strs(&ours, c).unwrap();
    let (solvers, statuses) = (text("solver"), text("status"));
    assert_eq!(solvers.len(), 6, "3 problems x 2 solvers");
    assert_eq!(
        solvers.iter().filter(|s| s.contains("admm")).count(),
        3,
        "{solvers:?}"
    );
    assert!(statuses.iter().all(|s| s == "converged"), "{statuses:?}");
    let skipped = root.steps("pinocchio_engines");
    let why = skipped.column("skipped").unwrap().str().unwrap().get(0);
    assert_eq!(why, Some("CONTACTLAB_NO_PEERS is set"));
}
