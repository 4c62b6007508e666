//! The physical-fidelity study end to end, cut down: our three configs with short runs, the
//! engines run skipped (as on a machine without MuJoCo), then `contactlab report fidelity`,
//! checking the long-form `metrics.csv` against the closed forms.

mod common;

use common::{column, set, Root};
use contactlab_experiments::toml;

#[test]
fn cut_down_runs_report_each_models_motion_against_the_exact_answer() {
    // nextest runs every test in its own process, so the variable reaches
    // only this test's engines run.
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("fidelity");
    root.copy_shipped(&["engines.toml"]);
    for (config, steps) in [
        ("slides.toml", 300),
        ("slopes.toml", 200),
        ("holds.toml", 200),
    ] {
        root.config(config, |t| {
            set(t, "scene", "steps", toml::Value::Integer(steps));
            let drivers = t.get_mut("drivers").unwrap().as_array_mut().unwrap();
            drivers.retain(|d| {
                matches!(
                    d["label"].as_str(),
                    Some("Coulomb-PGS") | Some("Coulomb-ADMM") | Some("MinMap-Newton")
                )
            });
        });
        root.run(config);
    }
    root.run("engines.toml");
    root.write(
        "findings.md",
        "PGS stops the cube at {{sliding_cube.contactlab.Coulomb-PGS.stop_time_s}}.\n",
    );
    let readme = root.report().unwrap();
    assert!(readme.contains("MuJoCo and Drake were not measured in this run"));
    assert!(readme.contains("PGS stops the cube at 0.2547 s."));

    let metrics = root.csv("metrics.csv");
    assert_eq!(
        metrics.0,
        [
            "scene",
            "engine",
            "formulation",
            "optimizer",
            "model",
            "param",
            "dt",
            "metric",
            "value",
            "analytic"
        ]
    );
    let rows: Vec<usize> = (0..metrics.1.len()).collect();
    let find = |scene: &str, optimizer: &str, metric: &str| -> (f64, f64) {
        let (s, o, m, v, a) = (
            column(&metrics, "scene"),
            column(&metrics, "optimizer"),
            column(&metrics, "metric"),
            column(&metrics, "value"),
            column(&metrics, "analytic"),
        );
        let k = *rows
            .iter()
            .find(|&&k| s[k] == scene && o[k] == optimizer && m[k] == metric)
            .unwrap_or_else(|| panic!("{scene} {optimizer} {metric}"));
        (v[k].parse().unwrap(), a[k].parse().unwrap_or(f64::NAN))
    };
    // The exact cone stops within 1% of v0 / (mu g) and does not lift.
    let (stop, exact) = find("sliding_cube", "pgs", "stop_time_s");
    assert!((exact - 0.2548).abs() < 1e-4, "{exact}");
    assert!((stop / exact - 1.0).abs() < 0.01, "{stop} against {exact}");
    assert!(find("sliding_cube", "pgs", "max_lift_mm").0 < 1e-3);
    // A four-sided pyramid along x and y stops the diagonal slide sqrt(2) sooner.
    let (diagonal, _) = find("sliding_cube_diagonal", "newton", "stop_time_s");
    assert!(
        (diagonal * 2f64.sqrt() / exact - 1.0).abs() < 0.01,
        "{diagonal}"
    );
    // The dragged cube breaks away when friction saturates, plus the time to reach 1 mm/s.
    let (breakaway, exact) = find("dragged_cube", "pgs", "breakaway_time_s");
    assert!((exact - 0.2062).abs() < 1e-4, "{exact}");
    assert!((breakaway - exact).abs() < 2e-3, "{breakaway}");
    // Holding on the slope and against the wall: no creep (mm).
    assert!(find("slope_15", "pgs", "creep_mm").0 < 1e-6);
    assert!(find("wall_press", "pgs", "creep_mm").0 < 1e-6);
    assert!(find("slope_30", "pgs", "acceleration_error").0.abs() < 1e-6);
    assert!(find("rolling_sphere", "pgs", "acceleration_error").0.abs() < 1e-6);
    // ADMM solves the same Coulomb problem to the same tolerance: the same motions.
    let (stop_admm, _) = find("sliding_cube", "admm", "stop_time_s");
    assert!(
        (stop_admm - stop).abs() < 2e-3,
        "{stop_admm} against {stop}"
    );
    assert!(find("sliding_cube", "admm", "max_lift_mm").0 < 1e-3);
    let (breakaway_admm, _) = find("dragged_cube", "admm", "breakaway_time_s");
    assert!((breakaway_admm - exact).abs() < 2e-3, "{breakaway_admm}");
    assert!(find("slope_15", "admm", "creep_mm").0 < 1e-5);
    assert!(find("wall_press", "admm", "creep_mm").0 < 1e-5);
    assert!(find("slope_30", "admm", "acceleration_error").0.abs() < 1e-5);
}
