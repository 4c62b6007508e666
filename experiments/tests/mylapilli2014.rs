//! End to end: a shortened sphere-on-a-plane config (Mylapilli and Jain 2014, Example 1) through
//! the runner and the report's metrics, against the exact slide-then-roll answer.

use std::path::Path;

use contactlab_experiments::config::ExperimentConfig;
use contactlab_experiments::report::mylapilli2014::{sphere_metrics, SphereMetrics};
use contactlab_experiments::runner::{run_experiment, steps_frame};
use contactlab_experiments::scenes::sphere::{SlideRoll, SphereConfig};

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
    let out = run_experiment(&cfg, path, None, false).unwrap();
    let df = steps_frame(&cfg, &out).unwrap();
    assert_eq!(df.height(), 2 * 350);
    let sc = SphereConfig::default();
    let exact = SlideRoll::new(&sc).unwrap();
    sphere_metrics(&df, sc.radius, sc.h, Some(&exact)).unwrap()
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
