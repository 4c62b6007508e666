//! End to end: the Todorov 2010 configs cut down to a few runs and steps, through
//! `contactlab run` and `contactlab report` into a scratch root; the README and CSV files
//! must carry the numbers the data give (recomputed here from the steps frame), both counting
//! conventions, every shadow solver of the data, where the line-search steps land (counted from
//! the traces, checked against the driver's counters), the damping settings, the unknowns per
//! contact, and findings whose numbers are checked.

use std::collections::BTreeMap;

use crate::common::{column, floats, ints, set, Root};
use contactlab_experiments::report::{f64s, strs};
use contactlab_experiments::toml;

/// The mean over runs of the median iterations of each run's contact steps, per (mu, n_b),
/// computed directly from the rows (the paper's Table 1 statistic).
fn table1_by_hand(root: &Root, solver: &str) -> BTreeMap<(String, i64), f64> {
    let df = root.steps("table1");
    let (s, mu, nb, run, n_c, it) = (
        strs(&df, "solver").unwrap(),
        f64s(&df, "mu").unwrap(),
        f64s(&df, "n_balls").unwrap(),
        f64s(&df, "run").unwrap(),
        f64s(&df, "n_c").unwrap(),
        f64s(&df, "iterations").unwrap(),
    );
    let mut per_run: BTreeMap<(String, i64, u64), Vec<f64>> = BTreeMap::new();
    for i in 0..df.height() {
        if s[i] == solver && n_c[i] > 0.0 {
            per_run
                .entry((format!("{:.1}", mu[i]), nb[i] as i64, run[i] as u64))
                .or_default()
                .push(it[i]);
        }
    }
    let mut cells: BTreeMap<(String, i64), Vec<f64>> = BTreeMap::new();
    for ((mu, nb, _), mut v) in per_run {
        v.sort_by(f64::total_cmp);
        let m = v.len();
        let median = if m % 2 == 1 {
            v[m / 2]
        } else {
            0.5 * (v[m / 2 - 1] + v[m / 2])
        };
        cells.entry((mu, nb)).or_default().push(median);
    }
    cells
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64))
        .collect()
}

#[test]
fn a_small_sweep_runs_and_reports_with_checked_findings() {
    let root = Root::new("todorov2010");
    root.copy_shipped(&["table1_published.csv", "ball_drop_published.csv"]);
    root.config("table1.toml", |t| {
        set(t, "sweep", "mu", floats(&[0.5, 2.0]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "sweep", "seed", ints(&[0, 1]));
        set(t, "scene", "steps", toml::Value::Integer(120));
    });
    // The damping sweep on the same cells: the driver and two of the shipped settings.
    root.config("damping.toml", |t| {
        set(t, "sweep", "mu", floats(&[0.5, 2.0]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "sweep", "seed", ints(&[0, 1]));
        set(t, "scene", "steps", toml::Value::Integer(120));
        let shadows = t.get_mut("shadow").unwrap().as_array_mut().unwrap();
        shadows.retain(|s| ["up-1000", "floor-1e-3"].contains(&s["label"].as_str().unwrap()));
    });
    root.config("unknowns.toml", |t| {
        set(t, "sweep", "mu", floats(&[1.0]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "scene", "steps", toml::Value::Integer(30));
    });
    // Two shadows of the shipped comparison, whatever their names: the section must show every
    // solver present in the data.
    root.config("solvers.toml", |t| {
        set(t, "sweep", "mu", floats(&[1.0]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "sweep", "seed", ints(&[0]));
        set(t, "scene", "steps", toml::Value::Integer(25));
        let shadows = t.get_mut("shadow").unwrap().as_array_mut().unwrap();
        shadows.retain(|s| ["lm", "todorov-warm"].contains(&s["label"].as_str().unwrap()));
    });
    root.config("ball_drop.toml", |_| {});
    for c in [
        "table1.toml",
        "damping.toml",
        "unknowns.toml",
        "solvers.toml",
        "ball_drop.toml",
    ] {
        root.run(c);
    }
    // The driver's iterations and accepted Newton points over the contact steps, from its
    // counters: the landing table counts the same iterations from the traces.
    let t1 = root.steps("table1");
    let (n_c, its, newton) = (
        f64s(&t1, "n_c").unwrap(),
        f64s(&t1, "iterations").unwrap(),
        f64s(&t1, "newton_accepted").unwrap(),
    );
    let contact = |v: &[f64]| -> f64 { (0..v.len()).filter(|&i| n_c[i] > 0.0).map(|i| v[i]).sum() };
    let (iterations, accepted) = (contact(&its), contact(&newton));
    root.write(
        "findings.md",
        &format!(
            "## Findings\n\nThe ball drop stops in {{{{ball_drop.iterations = 0}}}} iterations where the paper \
             counts {{{{published.ball_drop.iterations_at_impact = 1}}}}; the convention favoured: {{{{t1.favoured}}}}; \
             the sweep took {{{{table1.wall_seconds}}}} on {{{{table1.runs = 4}}}} runs of {{{{table1.steps = 120}}}} steps. \
             The traces count {{{{landing.all.iterations = {iterations}}}}} iterations; the pyramid has \
             {{{{unknowns.mlcp-fb-8+lm.nb5.per_contact = 10.0}}}} unknowns per contact, the implicit NCP \
             {{{{unknowns.todorov.nb5.per_contact = 3.0}}}}; {{{{damping.settings = 3}}}} damping settings.\n"
        ),
    );
    let readme = root.report().unwrap();

    // The templates' prose, with the sweep's numbers: two cells (two mu, one n_b) of two
    // seeds, only two of the twelve published cells compared.
    for want in [
        "Table 1 sweep: 2 cells x 2 runs x 120 steps, driver `todorov` (`experiments/configs/todorov2010/table1.toml`).",
        "Over the 2 cells, the iteration counts lie on average",
        "(`experiments/configs/todorov2010/damping.toml`: 2 mu x 1 n_b x 2 seeds x 120 steps, so like is compared with like)",
        "on the same step problems, `implicit-ncp+lm` (formulation `implicit-ncp`, defaults, under `lm`) and `mlcp-fb-8+lm` (formulation `mlcp-fb`, n_f = 8, under `lm`).",
        "Runs: 1 (every mu x n_b x seed of the config), 25 steps per solver",
    ] {
        assert!(readme.contains(want), "{want}\n---\n{readme}");
    }

    // Provenance and timing come first, from the runs' metas.
    let prov = readme.find("## Provenance").expect("provenance block");
    let timing = readme.find("## Timing").expect("timing block");
    let t1 = readme.find("## Table 1").unwrap();
    assert!(prov < timing && timing < t1, "{readme}");
    assert!(
        readme.contains("| `table1` |") && readme.contains("rustc "),
        "{readme}"
    );

    // Table 1: the reproduced iterations are the per-run medians averaged over runs, the
    // paper's convention one more, and the spread brackets the mean.
    let csv = root.csv("table1.csv");
    for col in [
        "mu",
        "n_b",
        "n_c_published",
        "n_c_reproduced",
        "iterations_published",
        "iterations_reproduced",
        "iterations_reproduced_paper_convention",
        "newton_accepted_published",
        "newton_accepted_reproduced",
        "runs",
        "contact_steps",
    ] {
        assert!(
            csv.0.iter().any(|h| h == col),
            "table1.csv lacks {col}: {:?}",
            csv.0
        );
    }
    let by_hand = table1_by_hand(&root, "todorov");
    let (mu, nb) = (column(&csv, "mu"), column(&csv, "n_b"));
    let (ours, paper) = (
        column(&csv, "iterations_reproduced"),
        column(&csv, "iterations_reproduced_paper_convention"),
    );
    let (lo, hi, runs) = (
        column(&csv, "iterations_run_median_min"),
        column(&csv, "iterations_run_median_max"),
        column(&csv, "runs"),
    );
    let mut checked = 0;
    for i in 0..csv.1.len() {
        let Some(want) = by_hand.get(&(mu[i].to_string(), nb[i].parse().unwrap())) else {
            assert_eq!(ours[i], "", "a cell without data has no reproduced value");
            continue;
        };
        let got: f64 = ours[i].parse().unwrap();
        assert!(
            (got - want).abs() < 1e-3,
            "mu {} n_b {}: {got} vs {want}",
            mu[i],
            nb[i]
        );
        let p: f64 = paper[i].parse().unwrap();
        assert!(
            (p - got - 1.0).abs() < 2e-3,
            "paper convention {p} vs {got} + 1"
        );
        let (l, h): (f64, f64) = (lo[i].parse().unwrap(), hi[i].parse().unwrap());
        assert!(l <= got + 0.05 && got <= h + 0.05 && runs[i] == "2");
        checked += 1;
    }
    assert_eq!(checked, 2, "the two cells of the sweep");
    assert!(readme.contains("the evidence favours"), "{readme}");

    // Where the line-search steps land: the pooled row counts every iteration of the driver's
    // contact steps from the traces, its accepted Newton points match the driver's counter, and
    // the line-search steps fall on one of the path's places.
    let landing = root.csv("landing.csv");
    let all = landing.1.last().unwrap();
    let get = |name: &str| -> f64 {
        let i = landing.0.iter().position(|h| h == name).unwrap();
        all[i].parse().unwrap()
    };
    assert_eq!((all[0].as_str(), all[1].as_str()), ("all", "all"));
    assert_eq!(get("iterations"), iterations);
    assert!((get("newton_percent") - 100.0 * accepted / iterations).abs() < 0.01);
    let line_search = get("line_search");
    assert!(line_search > 0.0, "the sweep takes line-search steps");
    let legs = get("first_leg_percent") + get("at_cauchy_percent") + get("second_leg_percent");
    assert!((legs - 100.0).abs() < 0.05, "{legs}");
    assert!(
        get("on_edges_percent") <= 100.0
            && get("at_newton_point_percent") <= get("second_leg_percent")
    );

    // The damping settings, the driver first; the driver's Newton share per cell is Table 1's
    // (same sweep, same steps).
    let damping = root.csv("damping_summary.csv");
    assert_eq!(
        column(&damping, "setting"),
        ["todorov", "up-1000", "floor-1e-3"]
    );
    assert_eq!(column(&damping, "options")[1], "lambda_up = 1000.0");
    let per_cell = root.csv("damping.csv");
    let (d_setting, d_mu, d_newton) = (
        column(&per_cell, "setting"),
        column(&per_cell, "mu"),
        column(&per_cell, "newton_percent"),
    );
    let d_nb = column(&per_cell, "n_b");
    let t1_newton = column(&csv, "newton_accepted_reproduced");
    let mut compared = 0;
    for i in 0..csv.1.len() {
        let Some(j) = (0..per_cell.1.len())
            .find(|&j| d_setting[j] == "todorov" && d_mu[j] == mu[i] && d_nb[j] == nb[i])
        else {
            continue;
        };
        let (a, b): (f64, f64) = (d_newton[j].parse().unwrap(), t1_newton[i].parse().unwrap());
        assert!((a - b).abs() < 0.051, "mu {}: {a} vs {b}", mu[i]);
        compared += 1;
    }
    assert_eq!(compared, 2, "the two cells of the sweep");

    // Unknowns per contact from the runs: 3 for Todorov's x, n_f + 2 = 10 for the pyramid's
    // MLCP with n_f = 8; each driver timed its linear solves.
    let unknowns = root.csv("unknowns.csv");
    assert_eq!(
        column(&unknowns, "solver"),
        ["todorov", "implicit-ncp+lm", "mlcp-fb-8+lm"]
    );
    assert_eq!(
        column(&unknowns, "unknowns_per_contact"),
        ["3.00", "3.00", "10.00"]
    );
    for v in column(&unknowns, "microseconds_per_linear_solve") {
        assert!(v.parse::<f64>().unwrap() > 0.0, "{v}");
    }

    // Every solver of the comparison's data, the driver first.
    let summary = root.csv("solvers_summary.csv");
    assert_eq!(
        column(&summary, "solver"),
        ["todorov", "lm", "todorov-warm"]
    );
    for s in ["`todorov`", "`lm`", "`todorov-warm`"] {
        assert!(
            readme.contains(&format!("| {s} |")),
            "{s} in the solvers table"
        );
    }

    // The ball drop: the sticking start solves the impact outright; the findings' checked
    // numbers passed and the unchecked wall time was filled.
    assert!(readme.contains("solved in **0 iteration(s)**"), "{readme}");
    assert!(readme.contains("The ball drop stops in 0 iterations where the paper counts 1"));
    assert!(!readme.contains("{{"), "every placeholder filled");
    let drop = root.csv("ball_drop.csv");
    assert_eq!(drop.0, ["step", "n_c", "iterations", "max_abs_vz"]);

    // A stale number fails the report, naming the file, the placeholder and both values.
    root.write("findings.md", "It took {{table1.runs = 5}} runs.\n");
    let e = root.report().unwrap_err().to_string();
    assert!(
        e.contains("experiments/configs/todorov2010/findings.md:1")
            && e.contains("{{table1.runs = 5}}")
            && e.contains("the data give 4"),
        "{e}"
    );
}
