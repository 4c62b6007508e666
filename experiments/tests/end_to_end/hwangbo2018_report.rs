//! End to end: the Hwangbo et al. configs cut down to under a second of simulated time (and the
//! small problem files), `contactlab run` on each, then `contactlab report hwangbo2018`, which
//! only reads those runs and the published CSVs, checking the CSVs the README promises (exact
//! columns) and values that must hold at any length.

use crate::common::{column, set, Root};
use contactlab_experiments::toml;

#[test]
fn cut_down_hwangbo_configs_run_and_report_tables_one_and_two() {
    let root = Root::new("hwangbo2018");
    // The small local problem files (the large ones take minutes of sweeps in a debug build).
    let problems = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/problems");
    let to = root.path.join("data/problems");
    std::fs::create_dir_all(&to).unwrap();
    let small = [
        "FrictionContact3D_1c.hdf5",
        "Rover4396.hdf5",
        "FC3D_Example1.hdf5",
        "NESpheres_10_1.hdf5",
        "two_contacts.json",
    ];
    for f in small {
        std::fs::copy(problems.join(f), to.join(f)).unwrap();
    }
    // 0.6 s: the release from 1 m lands at about 0.31 s, so every task meets contacts.
    for f in ["tasks.toml", "model.toml"] {
        root.config(f, |t| set(t, "scene", "steps", toml::Value::Integer(600)));
        root.run(f);
    }
    // Table I on the same 0.6 s of each task, fewer samples and rounds.
    root.config("table1.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(600));
        t.insert("samples_per_run".into(), toml::Value::Integer(100));
        t.insert("rounds".into(), toml::Value::Integer(3));
    });
    root.run("table1.toml");
    root.config("files.toml", |_| {});
    root.run("files.toml");
    for f in ["hang_tight.toml", "random_feet.toml", "random_shadow.toml"] {
        root.config(f, |t| set(t, "scene", "steps", toml::Value::Integer(600)));
        root.run(f);
    }
    // 1.2 s at 20 ms.
    root.config("dt50hz.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(60))
    });
    root.run("dt50hz.toml");
    root.copy_shipped(&[
        "table1_published.csv",
        "table2_published.csv",
        "claims_published.csv",
    ]);
    let readme = root.report().unwrap();
    assert!(readme.contains("## One contact (Table I)"));
    // The page's prose comes from the shipped templates, with the data's and configs' values.
    assert!(readme.contains("recorded from the first 600 steps of each task"));
    assert!(readme.contains("the methods interleaved over 3 rounds"));
    assert!(readme.contains("stopping at 1e-6 (see `tasks.toml`)"));
    assert!(readme.contains("(1e-8, `hang_tight.toml`; the paper reports about 50% more"));
    assert!(readme.contains("`coulomb-sor` is the bisection's own block SOR"));
    assert!(readme.contains(
        "![mean penetration of the feet over time in the hang task (Fig. 7)](hang_penetration.svg)"
    ));

    let t1 = root.csv("table1.csv");
    assert_eq!(
        t1.0[..4],
        [
            "method",
            "microseconds_published",
            "microseconds_reproduced",
            "max_error_vs_reference"
        ]
    );
    assert_eq!(
        column(&t1, "method"),
        [
            "bisection",
            "golden_section",
            "golden_section_closed",
            "analytical"
        ]
    );
    // The interval's evaluations are part of a solve's; the closed-form region needs none,
    // and the quartic has no interval.
    let steps = column(&t1, "mean_steps");
    let bracket = column(&t1, "mean_bracket_steps");
    for k in 0..3 {
        let (s, b): (f64, f64) = (steps[k].parse().unwrap(), bracket[k].parse().unwrap());
        assert!((0.0..=s).contains(&b), "{k}: {b} of {s}");
    }
    assert_eq!(bracket[2], "0.0");
    assert_eq!(bracket[3], "");
    for (m, e) in column(&t1, "method")
        .iter()
        .zip(column(&t1, "max_error_vs_reference"))
    {
        let e: f64 = e.parse().unwrap();
        // The slipping contacts were recorded: an error was measured, and it is small.
        assert!(e.is_finite() && e < 1e-3, "{m}: {e}");
    }
    for us in column(&t1, "microseconds_reproduced") {
        assert!(us.parse::<f64>().unwrap() > 0.0);
    }
    // The paper's numbers beside ours, from table1_published.csv.
    assert_eq!(
        column(&t1, "microseconds_published"),
        ["0.58", "1.20", "", "1.60"]
    );
    assert!(readme.contains("Intel Xeon E5-1620 (3.6 GHz)"), "{readme}");

    let t2 = root.csv("table2.csv");
    assert_eq!(
        t2.0[..6],
        [
            "task",
            "solver",
            "steps",
            "seconds_per_100k_published",
            "seconds_per_100k_reproduced",
            "solver_seconds_per_100k"
        ]
    );
    assert!(t2.0.iter().any(|c| c == "iterations_mean"));
    assert!(t2.0.iter().any(|c| c == "iterations_max"));
    assert_eq!(t2.1.len(), 8, "four tasks, two solvers");
    assert_eq!(
        column(&t2, "seconds_per_100k_published")[..2],
        ["1.98", "1.81"]
    );
    for it in column(&t2, "iterations_mean") {
        assert!(
            it.parse::<f64>().unwrap() >= 1.0,
            "every task meets contacts: {it}"
        );
    }

    // Both drivers on every shipped local problem file, the ruler beside each model's own.
    let files = root.csv("files.csv");
    assert_eq!(files.1.len(), 2 * small.len());
    assert_eq!(column(&files, "solver")[..2], ["bisection-sor", "pgs"]);
    for v in column(&files, "own_violation") {
        assert!(v.parse::<f64>().unwrap() >= 0.0);
    }

    // The open ends: time per step, the random task's cost, the trot, the dominance, the
    // penetration with PGS at 1e-8 and the 50 Hz runs, one row per what they cover.
    assert_eq!(root.csv("step_times.csv").1.len(), 8);
    let random = root.csv("random_cost.csv");
    assert_eq!(random.1.len(), 6, "three runs, two solvers");
    assert_eq!(
        column(&random, "steps_with_torso")[2..4],
        ["0", "0"],
        "random_feet has no torso contacts"
    );
    let trot = root.csv("trot.csv");
    assert_eq!(trot.1.len(), 2);
    for n in column(&trot, "max_contacts") {
        assert!(n.parse::<f64>().unwrap() <= 4.0);
    }
    let dominance = root.csv("dominance.csv");
    assert_eq!(
        column(&dominance, "task"),
        ["trot", "hang", "drop", "random"]
    );
    assert_eq!(
        column(&root.csv("hang_penetration.csv"), "solver"),
        ["bisection-sor", "pgs", "pgs-1e-8"]
    );
    let dt50 = root.csv("dt50hz.csv");
    assert_eq!(column(&dt50, "task"), ["hang", "drop", "random", "trot"]);
    // The unactuated tasks do not diverge at 20 ms.
    assert_eq!(column(&dt50, "diverged_at")[..2], ["", ""]);

    let model = root.csv("model.csv");
    assert_eq!(model.1.len(), 4);
    for share in column(&model, "share_under_1pct") {
        let s: f64 = share.parse().unwrap();
        assert!((0.0..=1.0).contains(&s));
    }
    // The checks: every shadow on every task; the driver's own method at 1e-10 stays within 1%
    // of it at 1e-6 on most steps (its tolerance is not what Fig. 6 measures).
    let checks = root.csv("model_checks.csv");
    assert_eq!(checks.1.len(), 12, "four tasks, three shadows");
    let shadows = column(&checks, "shadow");
    let shares = column(&checks, "share_under_1pct");
    for (shadow, share) in shadows.iter().zip(&shares) {
        let s: f64 = share.parse().unwrap();
        assert!((0.0..=1.0).contains(&s), "{shadow}: {s}");
        if *shadow == "bisection-tight" {
            assert!(s > 0.9, "{shadow}: {s}");
        }
    }
}
