//! End to end: a shortened sphere-on-a-plane config (Mylapilli and Jain 2014, Example 1) through
//! the runner and the report's metrics, against the exact slide-then-roll answer the run records
//! beside its observables (checked against the scene's [`SlideRoll`]); and the three
//! shipped configs cut down (fewer steps and solvers) through `contactlab run` and
//! `contactlab report`.

use std::path::Path;

use crate::common::{column, set, Root};
use contactlab_experiments::toml;

use contactlab_experiments::analysis::mylapilli2014::{sphere_metrics, SphereMetrics};
use contactlab_experiments::config::{ExperimentConfig, RunConfig};
use contactlab_experiments::runner::steps_frame;
use contactlab_experiments::scenes::sphere::{SlideRoll, SphereConfig};
use contactlab_experiments::Lab;

const CONFIG: &str = r#"
paper = "mylapilli2014"
name = "sphere_short"

[scene]
kind = "sphere_on_plane"
steps = 350

[[drivers]]
label = "MNCP-PLM"
formulation = "mncp"
optimizer = "plm"
tol = 1e-14
max_iter = 200
start = "warm"

[[drivers]]
label = "MLCP-FB-RLM"
formulation = { name = "mlcp-fb", n_f = 4, theta0_deg = 0.0 }
optimizer = "lm"
tol = 1e-14
max_iter = 200
start = "warm"
"#;

fn metrics() -> Vec<SphereMetrics> {
    let path = Path::new("sphere_short.toml");
    let cfg = ExperimentConfig::parse(CONFIG, path).unwrap();
    let out = Lab::standard().run_experiment(&cfg, path, None).unwrap();
    let df = steps_frame(&cfg, &out).unwrap();
    assert_eq!(df.height(), 2 * 350);
    let sc = SphereConfig::default();
    // The recorded exact answer is the closed form at each step's end, and the run's scene
    // record carries its parameters and constants.
    let exact = SlideRoll::new(&sc).unwrap();
    let f = |name| contactlab_experiments::report::f64s(&df, name).unwrap();
    let (step, vx_exact, wy_exact) = (f("step"), f("vx_exact"), f("omega_y_exact"));
    for k in 0..df.height() {
        let t = (step[k] + 1.0) * sc.h;
        assert_eq!(vx_exact[k], exact.velocity(t).x);
        assert_eq!(wy_exact[k], exact.angular_velocity(t).y);
    }
    let scene = &out.runs[0].scene;
    assert_eq!(scene.number("radius").unwrap(), sc.radius);
    assert_eq!(scene.numbers("v0").unwrap(), sc.v0);
    assert_eq!(
        scene.constant("slide_time_exact").unwrap(),
        exact.slide_time()
    );
    sphere_metrics(&df, sc.radius, sc.h).unwrap()
}

#[test]
fn short_sphere_run_slides_then_rolls_like_the_exact_answer() {
    let m = metrics();
    assert_eq!(
        m.iter().map(|m| m.solver.as_str()).collect::<Vec<_>>(),
        ["MNCP-PLM", "MLCP-FB-RLM"]
    );
    for s in &m {
        eprintln!("{s:?}");
        assert!(
            (s.slide_time - 0.291).abs() <= 2e-3,
            "{}: slide time {}",
            s.solver,
            s.slide_time
        );
        assert!(
            (s.roll_speed - 1.429).abs() <= 0.005 * 1.429,
            "{}: rolling speed {}",
            s.solver,
            s.roll_speed
        );
        assert!(s.max_hop < 1e-6, "{}: hop {}", s.solver, s.max_hop);
        // Friction mu m g against the motion while sliding; no sideways motion.
        assert!((s.friction_x + 0.2 * 9.81).abs() < 1e-9, "{}", s.friction_x);
        assert!(s.max_vy < 1e-12 && s.max_omega_x < 1e-12);
        assert!(s.max_err_vx < 1e-9, "{}", s.max_err_vx);
        assert_eq!(s.converged_share, 1.0, "{}", s.solver);
    }
}

/// Keeps the drivers of a config whose labels are in `keep`.
fn keep_drivers(t: &mut toml::Table, keep: &[&str]) {
    let drivers = t.get_mut("drivers").unwrap().as_array_mut().unwrap();
    drivers.retain(|d| keep.contains(&d["label"].as_str().unwrap()));
}

#[test]
fn cut_down_configs_run_and_report_the_papers_quantities() {
    let root = Root::new("mylapilli2014");
    root.copy_shipped(&[
        "sphere_published.csv",
        "peers_published.csv",
        "pendulum_published.csv",
    ]);
    root.config("sphere_example1.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(320));
        keep_drivers(t, &["MNCP-PLM", "MinMap-Newton"]);
    });
    root.config("sphere_example2.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(450));
        keep_drivers(t, &["MLCP-FB-PLM", "MNCP-PLM"]);
    });
    for c in ["pendulum.toml", "pendulum_spatial.toml"] {
        root.config(c, |t| {
            set(t, "scene", "steps", toml::Value::Integer(300));
            keep_drivers(t, &["MLCP-FB-PLM", "MNCP-PLM"]);
        });
    }
    for c in [
        "sphere_example1.toml",
        "sphere_example2.toml",
        "pendulum.toml",
        "pendulum_spatial.toml",
    ] {
        root.run(c);
    }
    // Checked values that hold whatever the implementation: the exact solvers end their slip in
    // the step containing t*, the 45-degree MLCP slides t* x sqrt 2.
    root.write(
        "findings.md",
        "## Findings\n\nExample 1 slides until {{sphere.ex1.MNCP-PLM.slide_time = 0.292 s}} \
         (exact {{sphere.exact.slide_time = 0.2912 s}}); at 45 degrees the MLCP slides until \
         {{sphere.ex2.MLCP-FB-PLM.slide_time = 0.412 s}} (the paper: \
         {{published.sphere.ex2.MLCP-FB-PLM.slide_time = 0.400}}), against {{peers.sphere_hop_mm = 5.6 mm}} \
         of hop for the peers. The chain gains {{pendulum.impact.gain}} at step {{pendulum.impact.step}}. \
         Skewed by {{spatial.hinge_skew = 0.20 rad}}, it leaves the plane by {{spatial.max_y}}.\n",
    );
    let readme = root.report().unwrap();
    assert!(
        readme.contains("Example 1 slides until 0.292 s (exact 0.2912 s)"),
        "{readme}"
    );
    assert!(readme.contains("at 45 degrees the MLCP slides until 0.412 s (the paper: 0.400)"));
    assert!(!readme.contains("{{"));
    // The page's prose comes from the shipped templates, with the data's numbers and solvers.
    assert!(readme.contains(
        "### Example 2 (Fig. 3): friction directions at 45 degrees to the motion\n\n450 steps of 1 ms."
    ));
    assert!(readme.contains(
        "- `MLCP-FB-PLM`: slides until **0.412 s** (+41% against t* = 0.2912 s; the paper: about 0.4 s)"
    ));
    assert!(readme.contains("h = 1 ms, 300 steps (0.3 s)."));
    assert!(
        readme.contains("within the MLCP group (MLCP-FB-PLM), within the MNCP group (MNCP-PLM)")
    );
    assert!(readme
        .contains("![drift between the solvers, non-planar chain](pendulum_spatial_drift.svg)"));

    // The per-example CSV puts ours, the paper's and the exact values side by side.
    let ex2 = root.csv("sphere_example2.csv");
    assert_eq!(column(&ex2, "solver"), ["MLCP-FB-PLM", "MNCP-PLM"]);
    assert_eq!(column(&ex2, "published_slide_time_s"), ["0.400", "0.291"]);
    assert_eq!(column(&ex2, "published_roll_speed"), ["", "1.429"]);
    assert_eq!(column(&ex2, "exact_slide_time_s"), ["0.291248", "0.291248"]);
    let t: Vec<f64> = column(&ex2, "slide_time_s")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        (t[0] - 0.412).abs() < 1e-9 && (t[1] - 0.292).abs() < 1e-9,
        "{t:?}"
    );
    // Example 1's MinMap-Newton has no published value: PATH is not in the figures.
    let ex1 = root.csv("sphere_example1.csv");
    assert_eq!(column(&ex1, "published_slide_time_s"), ["0.291", ""]);
    assert_eq!(
        column(&root.csv("sphere.csv"), "example"),
        ["1", "1", "2", "2"]
    );

    // The pendulum: both solvers, the published times beside ours, convergence from the data.
    let p = root.csv("pendulum.csv");
    assert_eq!(column(&p, "solver"), ["MLCP-FB-PLM", "MNCP-PLM"]);
    assert_eq!(column(&p, "published_seconds"), ["24.24", "22.82"]);
    let df = root.steps("pendulum");
    let (solver, n_c) = (
        contactlab_experiments::report::strs(&df, "solver").unwrap(),
        contactlab_experiments::report::f64s(&df, "n_c").unwrap(),
    );
    let contact = (0..df.height())
        .filter(|&i| solver[i] == "MNCP-PLM" && n_c[i] > 0.0)
        .count();
    assert_eq!(column(&p, "contact_steps")[1], contact.to_string());
    assert!(
        contact > 0,
        "the chain reaches the floor within the cut run"
    );
    let conv = root.csv("pendulum_convergence.csv");
    assert_eq!(column(&conv, "contact_steps")[1], contact.to_string());
    // The first floor impact comes within the cut run: its energy jump is a number of joules.
    let gain = readme.split("The chain gains ").nth(1).unwrap();
    let (joules, rest) = gain.split_once(" J at step ").unwrap();
    assert!(joules.parse::<f64>().unwrap() > 0.0, "{gain}");
    assert!(
        rest.split('.').next().unwrap().parse::<u64>().is_ok(),
        "{rest}"
    );
    // The non-planar chain: the planar one never leaves the plane, the skewed one does, and its
    // drift table times the same thresholds.
    let y = |run: &str| {
        let df = root.steps(run);
        contactlab_experiments::report::f64s(&df, "last_y")
            .unwrap()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    assert_eq!(y("pendulum"), 0.0);
    let out_of_plane = y("pendulum_spatial");
    assert!(out_of_plane > 1e-3, "{out_of_plane}");
    let left = readme.split("it leaves the plane by ").nth(1).unwrap();
    let metres: f64 = left.split(" m").next().unwrap().parse().unwrap();
    assert!(
        (metres - out_of_plane).abs() <= 0.01 * out_of_plane,
        "{left}"
    );
    let drift = root.csv("pendulum_spatial_drift.csv");
    assert_eq!(
        column(&drift, "threshold_m"),
        ["1e-9", "1e-6", "1e-4", "1e-3"]
    );
}
