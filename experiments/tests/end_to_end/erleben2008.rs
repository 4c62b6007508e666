//! End to end: a tiny version of the Erleben and Ortiz Tables 1-2 config (2 sizes, 3 cases
//! each) through the runner, the steps DataFrame and the report's aggregation; and both shipped
//! configs cut down the same way through `contactlab run` and `contactlab report`.

use std::path::Path;

use crate::common::{column, ints, set, Root};

use contactlab_experiments::analysis::erleben2008::size_stats;
use contactlab_experiments::config::{ExperimentConfig, RunConfig};
use contactlab_experiments::polars::prelude::*;
use contactlab_experiments::report::erleben2008::NEWTON;
use contactlab_experiments::report::{counter, f64s, strs};
use contactlab_experiments::runner::steps_frame;
use contactlab_experiments::toml;
use contactlab_experiments::Lab;

const TINY: &str = r#"
paper = "erleben2008"
name = "tiny"

[scene]
kind = "random_lcp"
steps = 3

[scene.params]
family = "delassus"
# The first cases of the shipped config's seed 0 (seed 7's first size-12 case is one of the
# Delassus family's rare back-tracking failures).
seed = 0

[sweep]
size = [12, 24]

[driver]
label = "newton"
formulation = "min-map"
optimizer = "newton"
tol = 0.0014142135623730952
max_iter = 100

[[shadow]]
label = "trust-region"
formulation = "min-map"
optimizer = "trust-region"
tol = 0.0014142135623730952
max_iter = 100

[[shadow]]
label = "lm"
formulation = "min-map"
optimizer = "lm"
tol = 0.0014142135623730952
max_iter = 100
"#;

fn column_u64(df: &DataFrame, name: &str) -> Vec<u64> {
    df.column(name)
        .unwrap()
        .cast(&DataType::UInt64)
        .unwrap()
        .u64()
        .unwrap()
        .iter()
        .map(|v| v.unwrap())
        .collect()
}

#[test]
fn a_tiny_sweep_runs_newton_with_four_pgs_sweeps_and_aggregates() {
    let path = Path::new("tiny.toml");
    let cfg = ExperimentConfig::parse(TINY, path).unwrap();
    let out = Lab::standard().run_experiment(&cfg, path, None).unwrap();
    let df = steps_frame(&cfg, &out).unwrap();
    // 2 sizes x 3 steps x 3 solvers.
    assert_eq!(df.height(), 18);
    for c in [
        "size",
        "solver",
        "role",
        "iterations",
        "seconds",
        "status",
        "solver_status",
        "residual",
    ] {
        assert!(df.column(c).is_ok(), "missing column {c}");
    }
    let solver = strs(&df, "solver").unwrap();
    let role = strs(&df, "role").unwrap();
    let own = strs(&df, "solver_status").unwrap();
    let sizes = column_u64(&df, "size");
    let n_c = column_u64(&df, "n_c");
    // The warm-start counter Erleben's Newton reports.
    let sweeps: Vec<u64> = counter(&df, "pgs_sweeps")
        .unwrap()
        .into_iter()
        .map(|v| v as u64)
        .collect();
    let iterations = column_u64(&df, "iterations");
    // Nulls read as NaN, which fails the `> 0` check below.
    let seconds = f64s(&df, "seconds").unwrap();
    for i in 0..df.height() {
        assert_eq!(n_c[i] * 3, sizes[i], "row {i}: size is 3 x contacts");
        assert!(seconds[i] > 0.0, "row {i}: a real solve takes time");
        if solver[i] == NEWTON {
            assert_eq!(role[i], "driver");
            // The zero start of these problems does not meet the tolerance (approaching
            // contacts), so the paper's 4 PGS sweeps ran (sometimes they alone meet it, and
            // Newton takes no step).
            assert_eq!(sweeps[i], 4, "row {i}");
            if sizes[i] == 12 {
                assert_eq!(own[i], "converged", "row {i}");
            }
        } else {
            assert_eq!(role[i], "shadow");
            assert_eq!(sweeps[i], 0, "row {i}: generic drivers have no warm start");
        }
    }
    let stats = size_stats(&df).unwrap();
    assert_eq!(stats.len(), 6);
    let newton12 = stats
        .iter()
        .find(|s| s.solver == NEWTON && s.size == 12)
        .unwrap();
    assert_eq!(newton12.cases, 3);
    assert_eq!(newton12.stopped("converged"), 3);
    // The report's iteration count is the driver's iterations plus the 4 sweeps.
    let newton12_iters: Vec<u64> = (0..df.height())
        .filter(|&i| solver[i] == NEWTON && sizes[i] == 12)
        .map(|i| iterations[i] + sweeps[i])
        .collect();
    let avg = newton12_iters.iter().sum::<u64>() as f64 / 3.0;
    assert!((newton12.iterations.avg - avg).abs() < 1e-12);
    assert_eq!(
        newton12.iterations.min,
        *newton12_iters.iter().min().unwrap() as f64
    );
    assert!(newton12.own_iterations_avg + 4.0 - newton12.iterations.avg < 1e-12);
}

#[test]
fn both_families_cut_down_run_and_report_the_counts_of_the_data() {
    let root = Root::new("erleben2008");
    root.copy_shipped(&["published.csv"]);
    for c in ["tables_delassus.toml", "tables_opentissue.toml"] {
        root.config(c, |t| {
            set(t, "sweep", "size", ints(&[12, 24]));
            set(t, "sweep", "seed", ints(&[0]));
            set(t, "scene", "steps", toml::Value::Integer(3));
            // The Delassus family's dense generic drivers add nothing here but time.
            let shadows = t.get_mut("shadow").unwrap().as_array_mut().unwrap();
            shadows.retain(|s| s["label"].as_str() == Some("lm"));
        });
        root.run(c);
    }
    for (c, seed) in [("variants_opentissue.toml", 0), ("more_delassus.toml", 4)] {
        root.config(c, |t| {
            set(t, "sweep", "size", ints(&[12]));
            set(t, "sweep", "seed", ints(&[seed]));
            set(t, "scene", "steps", toml::Value::Integer(3));
        });
        root.run(c);
    }
    root.write(
        "findings.md",
        "Newton converged in {{delassus.newton.s12.converged = 3}} of {{delassus.newton.s12.cases = 3}} \
         size-12 cases (the paper: {{published.s12.converged = 100}}); OpenTissue: {{opentissue.newton.converged}}.\n",
    );
    let readme = root.report().unwrap();
    assert!(readme.contains("## Provenance") && readme.contains("| `tables_delassus` |"));
    assert!(readme.contains("Newton converged in 3 of 3 size-12 cases (the paper: 100)"));
    // The page's prose comes from the shipped templates, with the data's families and sizes.
    assert!(readme.contains("## Table 1: outcomes of the Newton driver per size"));
    assert!(readme.contains("Each cell: paper / Delassus / OpenTissue, out of the cases"));
    assert!(readme
        .contains("sizes 12, 24, 48, 96, 192, 384 (`3 x contacts`), 3 cases per size (1 seeds)"));
    assert!(readme.contains("**OpenTissue family** (also in [`drivers_opentissue.csv`]"));
    assert!(readme.contains("![average iterations per solve vs size](iterations_vs_size.svg)"));

    // Table 1's CSV carries the paper beside each family, counted from the data.
    let t1 = root.csv("table1.csv");
    assert_eq!(column(&t1, "size"), ["12", "24", "48", "96", "192", "384"]);
    assert_eq!(column(&t1, "converged_published")[0], "100");
    for (key, name) in [
        ("delassus", "tables_delassus"),
        ("opentissue", "tables_opentissue"),
    ] {
        let df = root.steps(name);
        let (solver, size, own) = (
            strs(&df, "solver").unwrap(),
            f64s(&df, "size").unwrap(),
            strs(&df, "solver_status").unwrap(),
        );
        for (i, want_size) in [(0usize, 12.0), (1, 24.0)] {
            let conv = (0..df.height())
                .filter(|&k| solver[k] == NEWTON && size[k] == want_size && own[k] == "converged")
                .count();
            assert_eq!(
                column(&t1, &format!("converged_{key}"))[i],
                conv.to_string(),
                "{key} size {want_size}"
            );
        }
        // Sizes the cut sweep did not run have no reproduced values.
        assert_eq!(column(&t1, &format!("converged_{key}"))[5], "");
        let t2 = root.csv(&format!("table2_{key}.csv"));
        assert_eq!(column(&t2, "cases")[0], "3");
        let drivers = root.csv(&format!("drivers_{key}.csv"));
        assert_eq!(column(&drivers, "driver"), ["newton", "newton", "lm", "lm"]);
    }
    // The diagnostic runs: one row per run, variant and size, counted from their data.
    let diagnostics = root.csv("diagnostics.csv");
    assert_eq!(
        column(&diagnostics, "variant"),
        [
            "newton",
            "no-stagnation",
            "backtrack-1e-12",
            "svd",
            "no-pgs",
            "newton"
        ]
    );
    assert_eq!(column(&diagnostics, "cases"), ["3"; 6]);
    let df = root.steps("variants_opentissue");
    let (solver, own) = (
        strs(&df, "solver").unwrap(),
        strs(&df, "solver_status").unwrap(),
    );
    let converged = |variant: &str| {
        (0..df.height())
            .filter(|&k| solver[k] == variant && own[k] == "converged")
            .count()
            .to_string()
    };
    assert_eq!(column(&diagnostics, "converged")[4], converged("no-pgs"));
    assert_eq!(
        column(&diagnostics, "converged")[1],
        converged("no-stagnation")
    );
    // tables.csv keeps its columns.
    let tables = root.csv("tables.csv");
    assert_eq!(
        tables.0,
        contactlab_experiments::report::erleben2008::TABLES_CSV_HEADER
    );
    // A logarithmic size axis labelled with the sizes themselves.
    let svg = root.read("seconds_vs_size.svg");
    assert!(
        svg.contains(">\n12\n</text>") && svg.contains(">\n384\n</text>"),
        "size ticks"
    );
}
