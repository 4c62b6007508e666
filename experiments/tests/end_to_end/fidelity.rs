//! The physical-fidelity study end to end, cut down: our configs with short runs and two pairs, the
//! engines run skipped (as on a machine without MuJoCo), then `contactlab report fidelity`,
//! checking the long-form `metrics.csv` against the closed forms.

use crate::common::{column, set, Root};
use contactlab_experiments::toml;

#[test]
fn cut_down_runs_report_each_models_motion_against_the_exact_answer() {
    // nextest runs every test in its own process, so the variable reaches
    // only this test's engines run.
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("fidelity");
    root.copy_shipped(&["engines.toml"]);
    // Two pairs instead of `[every_pair]`, unlabelled: their labels are the pairs.
    let drivers = |pairs: &[(&str, &str)]| {
        let list = pairs
            .iter()
            .map(|(f, o)| {
                let mut d = toml::Table::new();
                d.insert("formulation".into(), toml::Value::String(f.to_string()));
                d.insert("optimizer".into(), toml::Value::String(o.to_string()));
                d.insert("tol".into(), toml::Value::Float(1e-8));
                // ADMM's iterations are cheap and many.
                let budget = if *o == "admm" { 5000 } else { 200 };
                d.insert("max_iter".into(), toml::Value::Integer(budget));
                d.insert("start".into(), toml::Value::String("warm".into()));
                toml::Value::Table(d)
            })
            .collect();
        toml::Value::Array(list)
    };
    for (config, steps, pairs) in [
        (
            "slides.toml",
            300,
            &[
                ("coulomb", "pgs"),
                ("min-map", "newton"),
                ("coulomb", "admm"),
                ("coulomb", "bisection-sor"),
            ][..],
        ),
        (
            "slopes.toml",
            200,
            &[("coulomb", "pgs"), ("min-map", "newton")][..],
        ),
        (
            "holds.toml",
            200,
            &[("coulomb", "pgs"), ("min-map", "newton")][..],
        ),
        (
            "stack.toml",
            20,
            &[("coulomb", "pgs"), ("implicit-ncp", "todorov")][..],
        ),
        (
            "consistency.toml",
            100,
            &[("coulomb", "pgs"), ("implicit-ncp", "todorov")][..],
        ),
        (
            "grasp.toml",
            80,
            &[("coulomb", "pgs"), ("sap", "newton-merit")][..],
        ),
    ] {
        root.config(config, |t| {
            set(t, "scene", "steps", toml::Value::Integer(steps));
            t.remove("every_pair");
            t.insert("drivers".into(), drivers(pairs));
            if config == "grasp.toml" {
                // One period of 0.4 s: secure, then loose.
                let params = t["scene"]["params"].clone();
                let mut params = params.as_table().unwrap().clone();
                for (k, v) in [("period", 0.4), ("duty", 0.5), ("duration", 0.4)] {
                    params.insert(k.into(), toml::Value::Float(v));
                }
                set(t, "scene", "params", toml::Value::Table(params));
                return;
            }
            let sweep = t.get_mut("sweep").unwrap().as_table_mut().unwrap();
            if config == "stack.toml" {
                sweep.insert(
                    "mass_ratio".into(),
                    toml::Value::Array(vec![1.0.into(), 1e6.into()]),
                );
            }
            if config == "consistency.toml" {
                sweep.insert(
                    "dt".into(),
                    toml::Value::Array(vec![1e-2.into(), 1e-1.into()]),
                );
            }
        });
        root.run(config);
    }
    root.run("engines.toml");
    root.write(
        "findings.md",
        "PGS stops the cube at {{sliding_cube.contactlab.coulomb+pgs.stop_time_s}}.\n",
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
    // Signorini holds for the exact cone: the measure is 0 against an exact 0.
    let (signorini, zero) = find("sliding_cube", "pgs", "signorini_max");
    assert_eq!(zero, 0.0);
    assert!(signorini < 1e-6, "{signorini}");
    // A driver that imposes its own law names it, whatever the formulation's.
    let model_of = |optimizer: &str| -> String {
        let (o, m) = (column(&metrics, "optimizer"), column(&metrics, "model"));
        let k = rows.iter().find(|&&k| o[k] == optimizer).unwrap();
        m[*k].to_string()
    };
    assert_eq!(model_of("bisection-sor"), "maximum_dissipation");
    assert_eq!(model_of("pgs"), "coulomb_cone");
    // ADMM on the same Coulomb problem stops it as PGS does.
    let (admm, _) = find("sliding_cube", "admm", "stop_time_s");
    assert!((admm / exact - 1.0).abs() < 0.01, "{admm}");
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
    // The stack: PGS gives up at a mass ratio of 1e6, Todorov's Newton holds it.
    let stack = |optimizer: &str, metric: &str, ratio: &str| -> f64 {
        let (s, o, m, p, v) = (
            column(&metrics, "scene"),
            column(&metrics, "optimizer"),
            column(&metrics, "metric"),
            column(&metrics, "param"),
            column(&metrics, "value"),
        );
        let k = rows
            .iter()
            .find(|&&k| s[k] == "stack" && o[k] == optimizer && m[k] == metric && p[k] == ratio)
            .unwrap_or_else(|| panic!("stack {optimizer} {metric} {ratio}"));
        v[*k].parse().unwrap()
    };
    assert_eq!(stack("pgs", "converged_fraction", "1e0"), 1.0);
    assert!(stack("pgs", "converged_fraction", "1e6") < 0.5);
    assert_eq!(stack("todorov", "converged_fraction", "1e6"), 1.0);
    assert!(stack("todorov", "drift_mm", "1e6") < 1e-6);
    // Time-step consistency: the exact cone's error is first order in dt.
    let (slope, one) = find("consistency", "pgs", "consistency_slope");
    assert_eq!(one, 1.0);
    assert!((slope - 1.0).abs() < 0.1, "{slope}");
    assert!(readme.contains("stack_drift.svg") && readme.contains("consistency.svg"));
    for plot in ["sliding_energy.svg", "dragged_velocity.svg", "creep.svg"] {
        assert!(readme.contains(plot), "{plot}");
        let svg = root.read(plot);
        assert!(
            svg.contains("contactlab coulomb+pgs"),
            "{plot} draws our PGS"
        );
    }
    // The grasp: SAP holds it while secure (its regularised slip aside) and lets it swing
    // while loose; PGS lets the rigid pads' normal force gather on one sphere, and the plate
    // pivots under the secure grip.
    let (pitch, exact) = find("pinch_grasp", "newton-merit", "secure_pitch_deg");
    assert_eq!(exact, 0.0);
    assert!(pitch.abs() < 0.5, "{pitch}");
    assert!(find("pinch_grasp", "newton-merit", "loose_pitch_deg").0 > 5.0);
    assert!(find("pinch_grasp", "pgs", "secure_pitch_deg").0 > 1.0);
}

/// The MuJoCo side of every scene, CI size (`fidelity.py --small --engines mujoco`): one record
/// per setup, the stack at a mass ratio of 1e3 and the consistency sweep at two time steps, each
/// with its metrics. MuJoCo is a test dependency (`just test` installs it when missing); only
/// `CONTACTLAB_NO_PEERS` skips this test, explicitly.
#[test]
fn the_peers_harness_runs_every_scene_small_in_mujoco() {
    if std::env::var_os("CONTACTLAB_NO_PEERS").is_some() {
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/fidelity.py");
    let out = std::env::temp_dir().join(format!("fidelity_small_{}.json", std::process::id()));
    let status = std::process::Command::new("python3")
        .arg(&script)
        .args(["--small", "--engines", "mujoco", "--out"])
        .arg(&out)
        .status()
        .expect("python3 runs");
    assert!(
        status.success(),
        "fidelity.py --small failed (is `mujoco` installed?)"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    let records = json["records"].as_array().unwrap();
    let find = |scene: &str| -> Vec<&serde_json::Value> {
        records.iter().filter(|r| r["scene"] == scene).collect()
    };
    for scene in [
        "sliding_cube",
        "sliding_cube_diagonal",
        "dragged_cube",
        "slope_15",
        "slope_30",
        "wall_press",
        "rolling_sphere",
        "stack",
        "consistency",
        "pinch_grasp",
    ] {
        let rs = find(scene);
        assert!(!rs.is_empty(), "{scene}");
        for r in &rs {
            assert!(r.get("error").is_none(), "{scene}: {r}");
        }
    }
    // MuJoCo's default cone stops the 0.3 s slide within 15% of v0 / (mu g).
    let stop = find("sliding_cube")[0]["stop_time_s"].as_f64().unwrap();
    assert!((stop / 0.2548 - 1.0).abs() < 0.15, "{stop}");
    // Its soft contact pushes while the corners separate: the Signorini measure is well above
    // an exact solver's round-off (about 0.16 at this scene's full length).
    let signorini = find("sliding_cube")[0]["signorini_max"].as_f64().unwrap();
    assert!(signorini > 1e-3 && signorini < 10.0, "{signorini}");
    // The stack holds (soft contacts sink a little, drift stays below a millimetre).
    let stack = find("stack")[0];
    assert_eq!(stack["param"].as_f64(), Some(1e3));
    assert!(stack["drift_mm"].as_f64().unwrap() < 1.0, "{stack}");
    assert!(
        stack["penetration_max_mm"].as_f64().unwrap() < 1.0,
        "{stack}"
    );
    // The consistency error is larger at the larger step.
    let c = find("consistency");
    let err = |dt: f64| {
        c.iter()
            .find(|r| r["dt"].as_f64() == Some(dt))
            .and_then(|r| r["consistency_error_m_s"].as_f64())
            .unwrap()
    };
    assert!(err(1e-1) > err(1e-2) && err(1e-2) > 0.0);
}
