//! `[output] traces_at`: the runner keeps every solver's per-iteration trace at the asked
//! steps beside the hardest step's, with the drivers' extra values (SAP's optimality) as
//! columns.

use contactlab_lab::runner::traces_frame;
use contactlab_lab::Lab;
use contactlab_runs::config::{ExperimentConfig, RunConfig};
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
