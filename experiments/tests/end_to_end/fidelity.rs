//! The physical-fidelity study end to end, cut down: our configs with short runs and two pairs, the
//! engines run skipped (as on a machine without MuJoCo), then `contactlab report fidelity`,
//! checking the long-form `metrics.csv` against the closed forms.

use crate::common::{column, set, Root};
use contactlab_experiments::toml;

/// Our configs cut down to short runs and a few pairs, run into `root`.
fn cut_down_runs(root: &Root) {
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
            "slopes_margin0.toml",
            200,
            &[("coulomb", "pgs"), ("sap", "newton-merit")][..],
        ),
        (
            "threshold.toml",
            300,
            &[("coulomb", "pgs"), ("coulomb", "bisection-sor")][..],
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
            "drops.toml",
            200,
            &[("coulomb", "pgs"), ("sap", "newton-merit")][..],
        ),
        (
            "tower.toml",
            20,
            &[("coulomb", "pgs"), ("implicit-ncp", "todorov")][..],
        ),
        (
            "pile.toml",
            250,
            &[("coulomb", "pgs"), ("sap", "newton-merit")][..],
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
        (
            "consistency_grasp.toml",
            400,
            &[("coulomb", "pgs"), ("implicit-ncp", "todorov")][..],
        ),
        (
            "consistency_pile.toml",
            500,
            &[("coulomb", "pgs"), ("implicit-ncp", "todorov")][..],
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
            if config == "pile.toml" {
                // Twenty cubes, their first landings within the 250 steps.
                sweep.insert("count".into(), toml::Value::Array(vec![20.into()]));
            }
            if config == "consistency.toml" {
                sweep.insert(
                    "dt".into(),
                    toml::Value::Array(vec![1e-2.into(), 1e-1.into()]),
                );
            }
            if config == "consistency_grasp.toml" || config == "consistency_pile.toml" {
                // The reference at 1 ms (the grasp's 400 steps, the pile's 500), then 5 and
                // 10 ms.
                sweep.insert(
                    "dt".into(),
                    toml::Value::Array(vec![1e-3.into(), 5e-3.into(), 1e-2.into()]),
                );
            }
        });
        root.run(config);
    }
}

#[test]
fn cut_down_runs_report_each_models_motion_against_the_exact_answer() {
    // nextest runs every test in its own process, so the variable reaches
    // only this test's engines run.
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("fidelity");
    root.copy_shipped(&["engines.toml"]);
    cut_down_runs(&root);
    root.run("engines.toml");
    root.write(
        "findings.md",
        "PGS stops the cube at {{sliding_cube.contactlab.coulomb+pgs.stop_time_s}}.\n",
    );
    let readme = root.report().unwrap();
    assert!(readme.contains(
        "**MuJoCo and Drake were not measured in this run**: CONTACTLAB_NO_PEERS is set. Only \
         our rows are shown."
    ));
    assert!(readme.contains("PGS stops the cube at 0.2547 s."));
    // The grasp's consistency: each pair against its own run at the finest step, the error
    // larger at the larger step.
    assert!(readme.contains("### `consistency_grasp`"), "{readme}");
    let metrics = root.csv("metrics.csv");
    let at = |c: &str| metrics.0.iter().position(|h| h == c).unwrap();
    let error = |dt: &str| -> f64 {
        metrics
            .1
            .iter()
            .find(|r| {
                r[at("scene")] == "consistency_grasp"
                    && r[at("optimizer")] == "todorov"
                    && r[at("metric")] == "position_error_m_s"
                    && r[at("dt")].parse::<f64>().unwrap() == dt.parse::<f64>().unwrap()
            })
            .map(|r| r[at("value")].parse().unwrap())
            .unwrap()
    };
    assert!(error("1e-2") > error("5e-3") && error("5e-3") > 0.0);
    // The pile's: over the run and before a cube first touched a cube in the reference, a
    // part of the run (the lowest level lands on the floor first).
    assert!(readme.contains("### `consistency_pile`"), "{readme}");
    let pile = |metric: &str| -> Vec<f64> {
        (metrics.1.iter())
            .filter(|r| {
                r[at("scene")] == "consistency_pile"
                    && r[at("optimizer")] == "todorov"
                    && r[at("metric")] == metric
            })
            .map(|r| r[at("value")].parse().unwrap())
            .collect()
    };
    let (whole, early) = (
        pile("position_error_m_s"),
        pile("position_error_before_stacking_m_s"),
    );
    assert_eq!((whole.len(), early.len()), (2, 2));
    for (w, e) in whole.iter().zip(&early) {
        assert!(*e > 0.0 && e < w, "{e} {w}");
    }
    // The templates' prose with the run's values: the stop test's speed, the stack's steps.
    assert!(readme.contains(
        "falls to 1 mm/s, breakaway the first time it reaches 1 mm/s, both interpolated"
    ));
    assert!(readme.contains(
        "### `stack`\n\nA light cube under a heavy one, at rest, corner sphere on corner sphere, \
         a knife-edge balance (`stack.toml`, `experiments/scenes/src/fidelity/stack.rs`; the \
         harness's `stack`): 20 steps of 1 ms,"
    ));
    // A scene's section: its simulated duration (a fact of the scene's family), then its note.
    let section = readme
        .split_once("### `slope_15_margin0`\n\nSimulated for ")
        .map(|(_, rest)| rest)
        .expect("the margin-0 slope's section starts with its duration");
    let (duration, rest) = section
        .split_once(" s.\n\n")
        .expect("its duration in seconds");
    assert!(duration.parse::<f64>().is_ok_and(|d| d > 0.0), "{duration}");
    assert!(rest.starts_with("Ours with `margin = 0`"), "{rest}");
    assert!(
        !readme.contains("### MuJoCo's late stop"),
        "no MuJoCo, no lag"
    );

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
    // At the friction threshold (0.3 s here): PGS holds at 24 degrees; the bisection's
    // maximum dissipation creeps there, as its tilted friction predicts to a percent.
    assert!(find("threshold_24", "pgs", "displacement_mm").0.abs() < 1e-6);
    let (creep, zero) = find("threshold_24", "bisection-sor", "displacement_mm");
    assert_eq!(zero, 0.0);
    let (predicted, _) = find("threshold_24", "bisection-sor", "predicted_displacement_mm");
    assert!(
        creep > 0.1 && (predicted / creep - 1.0).abs() < 0.05,
        "{creep} {predicted}"
    );
    // The margin-0 slope: the speculative reach alone keeps PGS's answers.
    assert!(find("slope_15_margin0", "pgs", "creep_mm").0 < 1e-6);
    assert!(
        find("slope_30_margin0", "pgs", "acceleration_error")
            .0
            .abs()
            < 1e-6
    );
    // Every scene says how long it ran, per engine, in its own rows.
    let (scenes, engines, metric) = (
        column(&metrics, "scene"),
        column(&metrics, "engine"),
        column(&metrics, "metric"),
    );
    for k in &rows {
        if engines[*k] == "contactlab" {
            let has = rows.iter().any(|&j| {
                scenes[j] == scenes[*k] && engines[j] == "contactlab" && metric[j] == "duration_s"
            });
            assert!(has, "{} has no duration_s row", scenes[*k]);
        }
    }
    // The stack: PGS gives up at a mass ratio of 1e6, Todorov's Newton holds it.
    // A sweep's value: a scene's row for one optimizer, metric and `param`.
    let swept = |scene: &str, optimizer: &str, metric: &str, param: &str| -> f64 {
        let (s, o, m, p, v) = (
            column(&metrics, "scene"),
            column(&metrics, "optimizer"),
            column(&metrics, "metric"),
            column(&metrics, "param"),
            column(&metrics, "value"),
        );
        let k = rows
            .iter()
            .find(|&&k| s[k] == scene && o[k] == optimizer && m[k] == metric && p[k] == param)
            .unwrap_or_else(|| panic!("{scene} {optimizer} {metric} {param}"));
        v[*k].parse().unwrap()
    };
    let stack =
        |optimizer: &str, metric: &str, ratio: &str| swept("stack", optimizer, metric, ratio);
    assert_eq!(stack("pgs", "converged_fraction", "1e0"), 1.0);
    assert!(stack("pgs", "converged_fraction", "1e6") < 0.5);
    assert_eq!(stack("todorov", "converged_fraction", "1e6"), 1.0);
    assert!(stack("todorov", "drift_mm", "1e6") < 1e-6);
    // The drops: the exact cone lands the cube and the sphere on the plane (the speculative
    // gap: no catch above it) at the free fall's time, with no bounce and no penetration.
    for scene in ["drop_cube", "drop_sphere"] {
        let (touch, exact) = find(scene, "pgs", "touch_time_s");
        assert!((exact - 0.1428).abs() < 1e-4, "{exact}");
        assert!((touch - exact).abs() <= 2e-3, "{scene}: {touch}");
        for metric in ["bounce_height_mm", "penetration_max_mm", "contact_time_s"] {
            let (v, zero) = find(scene, "pgs", metric);
            assert_eq!(zero, 0.0);
            assert!(v.abs() < 1e-6, "{scene} {metric}: {v}");
        }
    }
    // The tower, 20 steps: the exact cone holds five and ten cubes still.
    let tower =
        |optimizer: &str, metric: &str, count: &str| swept("tower", optimizer, metric, count);
    for count in ["5", "10"] {
        assert_eq!(tower("todorov", "converged_fraction", count), 1.0);
        assert!(tower("todorov", "drift_top_mm", count) < 1e-6);
        assert_eq!(tower("pgs", "collapsed", count), 0.0);
    }
    assert!(readme.contains("### `tower`\n\nCubes of 1 kg stacked face on face"));
    // The pile, 250 steps: nothing leaves the box, and SAP's overlaps stay below a millimetre.
    assert_eq!(swept("pile", "newton-merit", "escaped", "20"), 0.0);
    assert!(swept("pile", "newton-merit", "penetration_max_mm", "20") < 1.0);
    assert!(swept("pile", "pgs", "converged_fraction", "20") > 0.0);
    assert!(readme.contains("### `pile`\n\nCubes of 0.1 m and 1 kg"));
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

/// The MuJoCo side of every scene, CI size (`fidelity.py --small --engines mujoco`): MuJoCo at
/// its defaults and at its best (`elliptic-tc2dt-impratio10-noslip10`), one record per setup,
/// both stacks at a mass ratio of 1e3 and the consistency sweep at two time steps, each with its
/// metrics. MuJoCo is a test dependency (`just test` installs it when missing); only
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
        "stack_face",
        "tower",
        "pile",
        "drop_cube",
        "drop_sphere",
        "consistency",
        "consistency_grasp",
        "consistency_pile",
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
    // Near zero slip MuJoCo's soft friction is a damper; the late stop it predicts is within
    // 10% of the one measured.
    let slide = find("sliding_cube")[0];
    let (lag, predicted) = (
        slide["stop_lag_s"].as_f64().unwrap(),
        slide["stop_lag_predicted_s"].as_f64().unwrap(),
    );
    assert!(
        lag > 0.01 && (predicted / lag - 1.0).abs() < 0.1,
        "{lag} {predicted}"
    );
    // The stack starts from our pose, with no settling. At a mass ratio of 1e3 MuJoCo's
    // default contacts let the heavy cube sink through the light one (a collapse, not a
    // penetration: the overlap passes a sphere's diameter); its stiffest time constant holds
    // it, sunk by less than a millimetre.
    for scene in ["stack", "stack_face"] {
        let config = |c: &str| *find(scene).iter().find(|r| r["config"] == c).unwrap();
        let default = config("elliptic-impratio1-noslip0");
        assert_eq!(default["param"].as_f64(), Some(1e3));
        assert_eq!(default["settle_s"].as_f64(), Some(0.0));
        assert_eq!(default["collapsed"].as_i64(), Some(1), "{default}");
        assert_eq!(default["collapse_reason"], "through");
        let best = config("elliptic-tc2dt-impratio10-noslip10");
        assert_eq!(best["collapsed"].as_i64(), Some(0), "{best}");
        assert!(best["penetration_max_mm"].as_f64().unwrap() < 1.0, "{best}");
        assert_eq!(best["solref"][0].as_f64(), Some(2e-3));
    }
    // The drops: MuJoCo's default soft contact sinks the cube about a centimetre on impact and
    // needs tens of milliseconds to stop it; at its stiffest time constant the overlap is the
    // one free-fall step across the plane (its margin is 0), and the body bounces.
    let drop = |c: &str| *find("drop_cube").iter().find(|r| r["config"] == c).unwrap();
    let soft = drop("elliptic-impratio1-noslip0");
    assert!(
        (soft["touch_time_s"].as_f64().unwrap() - 0.143).abs() < 2e-3,
        "{soft}"
    );
    assert!(soft["penetration_max_mm"].as_f64().unwrap() > 5.0, "{soft}");
    assert!(soft["contact_time_s"].as_f64().unwrap() > 0.05, "{soft}");
    let stiff = drop("elliptic-tc2dt-impratio10-noslip10");
    assert!(stiff["bounce_height_mm"].as_f64().unwrap() > 1.0, "{stiff}");
    // The tower stands 0.3 s in both.
    for r in find("tower") {
        assert_eq!(r["param"].as_f64(), Some(5.0), "{r}");
        assert_eq!(r["collapsed"].as_i64(), Some(0), "{r}");
    }
    // The pile, 0.3 s: twenty cubes, none out of the box; MuJoCo's default contact lets the
    // corners sink into the boxes by more than a sphere's radius (2 mm), its best by less.
    let pile = |c: &str| *find("pile").iter().find(|r| r["config"] == c).unwrap();
    let soft = pile("elliptic-impratio1-noslip0");
    assert_eq!(soft["param"].as_f64(), Some(20.0), "{soft}");
    assert_eq!(soft["escaped"].as_i64(), Some(0), "{soft}");
    assert!(soft["penetration_max_mm"].as_f64().unwrap() > 2.0, "{soft}");
    let best = pile("elliptic-tc2dt-impratio10-noslip10");
    assert!(
        best["penetration_max_mm"].as_f64().unwrap() < soft["penetration_max_mm"].as_f64().unwrap(),
        "{best}"
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
    // The grasp's sweep: its reference (1 ms) has no record, the coarser steps an error each.
    let g = find("consistency_grasp");
    assert_eq!(g.len(), 2 * 2, "two configurations x two coarser steps");
    for r in &g {
        let e = r["consistency_error_m_s"].as_f64().unwrap();
        assert!(e > 0.0 && e < 1e-2, "{r}");
    }
    // The pile's: the same, and its error before a cube first touched a cube in the reference
    // (the lowest level lands on the floor first) a part of the whole run's.
    let p = find("consistency_pile");
    assert_eq!(p.len(), 2 * 2, "two configurations x two coarser steps");
    for r in &p {
        let whole = r["consistency_error_m_s"].as_f64().unwrap();
        let early = r["consistency_error_before_stacking_m_s"].as_f64().unwrap();
        assert!(early > 0.0 && early < whole && whole < 1e-1, "{r}");
    }
}

/// Every file of a folder with its bytes, for comparing a report folder before and after.
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// On a machine without `pydrake` (simulated by `CONTACTLAB_PEERS_WITHOUT`), the engines run
/// measures MuJoCo alone and the report says Drake is absent, marking the findings that quote
/// Drake instead of failing on them; a later generation whose findings fail leaves the report
/// folder byte for byte as it was. MuJoCo is a test dependency, as for the harness test below.
#[test]
fn without_drake_the_report_says_so_and_a_failed_generation_changes_nothing() {
    if std::env::var_os("CONTACTLAB_NO_PEERS").is_some() {
        return;
    }
    std::env::set_var("CONTACTLAB_PEERS_WITHOUT", "pydrake");
    let root = Root::new("fidelity");
    // The harness at CI size: MuJoCo's default and best configurations.
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/fidelity.py");
    root.config("engines.toml", |t| {
        let args = t.get_mut("args").unwrap().as_array_mut().unwrap();
        args.push(toml::Value::String("--small".into()));
        let script = script.to_string_lossy().into_owned();
        t.insert("script".into(), toml::Value::String(script));
    });
    cut_down_runs(&root);
    root.run("engines.toml");
    root.write(
        "findings.md",
        "MuJoCo stops the cube at {{sliding_cube.mujoco.elliptic-impratio1-noslip0.stop_time_s}}; \
         Drake's SAP at {{sliding_cube.drake.sap.stop_time_s = 0.2547 s}}.\n",
    );
    let readme = root.report().unwrap();
    assert!(
        readme.contains("**Drake was not measured in this run**"),
        "{readme}"
    );
    assert!(
        readme.contains("**Drake was not measured in this run** (missing Python module pydrake"),
        "the reason names the module"
    );
    assert!(readme.contains("### MuJoCo's late stop, predicted\n\nNear zero slip"));
    assert!(readme.contains("| `sliding_cube` | `elliptic-impratio1-noslip0` |"));
    assert!(
        readme.contains("Drake's SAP at *[not measured: Drake not measured"),
        "the Drake finding is marked"
    );
    assert!(!readme.contains("| drake |"), "no Drake row");
    assert!(readme.contains("| mujoco |"), "MuJoCo's rows are there");
    let facts = root.read("facts.md");
    assert!(
        facts.contains(".drake."),
        "the facts page lists the absent pattern"
    );
    // A stale finding: the generation fails and the folder stays as it was.
    let folder = root.path.join("reports/fidelity");
    let before = snapshot(&folder);
    root.write(
        "findings.md",
        "MuJoCo stops the cube at {{sliding_cube.mujoco.elliptic-impratio1-noslip0.stop_time_s = 9.9999 s}}.\n",
    );
    assert!(
        root.report().is_err(),
        "a stale finding fails the generation"
    );
    assert_eq!(snapshot(&folder), before, "the report folder is untouched");
    let staging: Vec<_> = std::fs::read_dir(root.path.join("reports"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("staging"))
        .collect();
    assert!(staging.is_empty(), "no staging folder is left behind");
}
