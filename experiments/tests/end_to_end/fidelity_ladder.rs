//! The accuracy-against-time ladder end to end, cut down: the cut-down sliding cube, two pairs,
//! two tolerances and two caps, four steps, then `contactlab report fidelity-ladder`, checking the
//! first pair to each accuracy against the rows and `metrics.csv`'s long form, with MuJoCo's
//! side skipped (`CONTACTLAB_NO_PEERS`) and the page saying so.

use crate::common::{column, Root};

const LADDER: &str = "kind = \"ladder\"\npaper = \"fidelity-ladder\"\nname = \"ladder\"\n\
    tols = [1e-4, 1e-10]\ncaps = [2, 200]\nstarts = [\"cold\", \"warm\"]\nsamples = 4\n\
    time_limit = 1.0\nonly = [\"coulomb+pgs\", \"implicit-ncp+todorov\"]\n\
    [[scenes]]\nname = \"cube\"\nconfig = \"experiments/configs/fidelity/cube.toml\"\n\
    driver = \"Coulomb-PGS\"\n";

#[test]
fn the_ladder_report_names_the_first_pair_to_each_accuracy() {
    let root = Root::new("fidelity-ladder");
    let scenes = root.path.join("experiments/configs/fidelity");
    std::fs::create_dir_all(&scenes).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs/fidelity/sliding_cube_small.toml"),
        scenes.join("cube.toml"),
    )
    .unwrap();
    root.write("ladder.toml", LADDER);
    root.run("ladder.toml");
    // MuJoCo's side is `experiments/peers/ladder.py`'s (its own test runs it, in Python's
    // stage, beside the package that judges its answers): here the run says it was skipped.
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    root.copy_shipped(&["mujoco.toml"]);
    root.run("mujoco.toml");
    let page = root.report().unwrap();
    assert!(
        page.contains("MuJoCo's ladder was not measured in this run")
            && page.contains("CONTACTLAB_NO_PEERS"),
        "{page}"
    );
    assert!(page.contains("## `cube`"), "{page}");
    assert!(page.contains("![cube_cold"), "{page}");
    // Every rung of both pairs in long form: 2 pairs x 8 rungs x (6 + 2 x 5) numbers.
    let metrics = root.csv("metrics.csv");
    assert_eq!(metrics.1.len(), 2 * 8 * 16);
    let names = column(&metrics, "metric");
    assert!(names.contains(&"seconds_median.tol1e-10"));
    assert!(names.contains(&"complementarity_p95.tol1e-4"));
    // Both pairs converge at the tightest rung with room, so both reach 1e-10; the first is
    // the fastest rung whose residual's 95th percentile is within it, by `metrics.csv`.
    let first = root.csv("cube_first.csv");
    let accuracy = column(&first, "accuracy");
    let tight = accuracy.iter().position(|a| *a == "<= 1e-10").unwrap();
    assert_eq!(column(&first, "cold_reached")[tight], "2");
    let rung = |pair: &str, tol: &str, cap: &str, stat: &str| -> f64 {
        let (f, o) = pair.split_once('+').unwrap();
        let rows = &metrics.1;
        let at = |c: &str| metrics.0.iter().position(|h| h == c).unwrap();
        rows.iter()
            .find(|r| {
                r[at("formulation")] == f
                    && r[at("optimizer")] == o
                    && r[at("start_from")] == "cold"
                    && r[at("param")] == cap
                    && r[at("metric")] == format!("{stat}.tol{tol}")
            })
            .map(|r| r[at("value")].parse().unwrap())
            .unwrap()
    };
    let (pair, tol, cap) = (
        column(&first, "cold_first")[tight],
        column(&first, "cold_tol")[tight],
        column(&first, "cold_cap")[tight],
    );
    assert!(rung(pair, tol, cap, "residual_p95") <= 1e-10);
    let time = rung(pair, tol, cap, "seconds_median");
    for p in ["coulomb+pgs", "implicit-ncp+todorov"] {
        for t in ["1e-4", "1e-10"] {
            for c in ["2", "200"] {
                if rung(p, t, c, "residual_p95") <= 1e-10 {
                    assert!(rung(p, t, c, "seconds_median") >= time, "{p} {t} {c}");
                }
            }
        }
    }
    let tightest = root.csv("cube_tightest.csv");
    assert_eq!(tightest.1.len(), 4, "two pairs, cold and warm");
    for c in column(&tightest, "converged_fraction") {
        assert_eq!(c, "1.00");
    }
}
