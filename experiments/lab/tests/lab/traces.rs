//! `[output] traces_at`: the runner keeps every solver's per-iteration trace at the asked
//! steps beside the hardest step's, with the drivers' extra values (SAP's optimality) as
//! columns; `[output] all_traces` keeps every step's.

use contactlab_lab::runner::{steps_frame, traces_frame};
use contactlab_lab::Lab;
use contactlab_runs::columns;
use contactlab_runs::config::{ExperimentConfig, RunConfig};
use polars::prelude::DataFrame;
use std::path::Path;

#[test]
fn asked_steps_keep_every_solvers_trace() {
    let text = "paper = \"p\"\nname = \"t\"\n[scene]\nkind = \"clutter\"\nsteps = 12\n\
        [scene.params]\nn_bodies = 8\nwalls = false\n\
        [driver]\nformulation = \"sap\"\noptimizer = \"newton-merit\"\ntol = 1e-12\nrel_tol = 1e-6\n\
        [[shadow]]\nformulation = \"sap\"\noptimizer = \"lbfgs\"\ntol = 1e-8\nmax_iter = 500\n\
        [output]\ntraces_at = [10, 11]\n";
    let path = Path::new("t.toml");
    let cfg = ExperimentConfig::parse(text, path).unwrap();
    let out = Lab::standard().run_experiment(&cfg, path, None).unwrap();
    let df = traces_frame(&out).unwrap();
    let col = |c: &str| -> Vec<String> {
        df.column(c)
            .unwrap()
            .cast(&polars::prelude::DataType::String)
            .unwrap()
            .str()
            .unwrap()
            .iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect()
    };
    let (why, step, solver) = (col("why"), col("step"), col("solver"));
    for s in ["10", "11"] {
        for name in ["sap+newton-merit", "sap+lbfgs"] {
            let n = (0..df.height())
                .filter(|&i| why[i] == "asked" && step[i] == s && solver[i] == name)
                .count();
            assert!(n >= 2, "step {s}, {name}: {n} trace rows");
        }
    }
    assert!(why.iter().any(|w| w == "hardest"));
    let optimality = df.column("optimality").unwrap().f64().unwrap();
    assert!(optimality.iter().flatten().any(|v| v > 0.0));
    // Algorithm 2's exact line search never raises SAP's cost: each asked history starts at
    // iteration 0 and its cost does not grow (a convergence history as Fig. 10 draws it).
    let (iter, merit) = (col("iter"), df.column("merit").unwrap().f64().unwrap());
    for s in ["10", "11"] {
        let rows: Vec<usize> = (0..df.height())
            .filter(|&i| why[i] == "asked" && step[i] == s && solver[i] == "sap+newton-merit")
            .collect();
        assert_eq!(iter[rows[0]], "0", "step {s}");
        let cost: Vec<f64> = rows.iter().map(|&i| merit.get(i).unwrap()).collect();
        assert!(
            cost.windows(2).all(|w| w[1] <= w[0] + 1e-12 * w[0].abs()),
            "step {s}: {cost:?}"
        );
    }
}

#[test]
fn all_traces_keeps_every_solvers_trace_of_every_step() {
    let text = "paper = \"p\"\nname = \"t\"\n[scene]\nkind = \"balls_in_cube\"\nsteps = 60\n\
        [scene.params]\nn_balls = 5\nmu = 1.0\n\
        [driver]\nformulation = \"implicit-ncp\"\noptimizer = \"todorov\"\nislands = false\n\
        [[shadow]]\nformulation = \"implicit-ncp\"\noptimizer = \"lm\"\nislands = false\n\
        [output]\nall_traces = true\n";
    let path = Path::new("t.toml");
    let cfg = ExperimentConfig::parse(text, path).unwrap();
    let out = Lab::standard().run_experiment(&cfg, path, None).unwrap();
    let steps = steps_frame(&cfg, &out).unwrap();
    let traces = traces_frame(&out).unwrap();
    let strs = |df: &DataFrame, c: &str| columns::strs(df, c).unwrap();
    let f64s = |df: &DataFrame, c: &str| columns::f64s(df, c).unwrap();
    let (s_solver, s_step, n_c, iterations) = (
        strs(&steps, "solver"),
        f64s(&steps, "step"),
        f64s(&steps, "n_c"),
        f64s(&steps, "iterations"),
    );
    let (why, t_solver, t_step, kind) = (
        strs(&traces, "why"),
        strs(&traces, "solver"),
        f64s(&traces, "step"),
        strs(&traces, "step_kind"),
    );
    let mut solves = 0;
    for i in 0..steps.height() {
        let rows: Vec<usize> = (0..traces.height())
            .filter(|&j| {
                why[j] == "every_step" && t_solver[j] == s_solver[i] && t_step[j] == s_step[i]
            })
            .collect();
        if n_c[i] == 0.0 {
            assert!(rows.is_empty(), "no solve, no trace");
            continue;
        }
        solves += 1;
        // One row for the start, one per iteration, each iteration with its kind of step.
        assert_eq!(
            rows.len() as f64,
            iterations[i] + 1.0,
            "{} step {}",
            s_solver[i],
            s_step[i]
        );
        assert!(rows[1..].iter().all(|&j| !kind[j].is_empty()));
    }
    assert!(solves > 40, "{solves} solves");
    // The unknowns column: three per contact for Todorov's x.
    let unknowns = f64s(&steps, "unknowns");
    assert!((0..steps.height()).all(|i| unknowns[i] == 3.0 * n_c[i]));
}
