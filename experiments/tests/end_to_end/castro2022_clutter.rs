//! End to end: the shipped clutter config of Castro et al. 2022 (section VI-C, cut down to 8
//! bodies and 60 steps) through `contactlab run`: SAP converges at every step with contacts,
//! the overlap stays within a few millimetres, the mechanical energy does not grow, and the DataFrame
//! carries the scene's observables and SAP's accuracy figures.

use crate::common::Root;
use contactlab_experiments::analysis;
use contactlab_experiments::polars::prelude::*;

fn floats(df: &DataFrame, name: &str) -> Vec<f64> {
    analysis::f64s(df, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn strings(df: &DataFrame, name: &str) -> Vec<String> {
    analysis::strs(df, name).unwrap()
}

#[test]
fn the_shipped_clutter_config_runs_bounded_under_sap() {
    let root = Root::new("castro2022");
    root.config("clutter_small.toml", |_| {});
    root.run("clutter_small.toml");
    let df = root.steps("clutter_small");
    // Two runs (walls, ground) of 60 steps, one solver.
    assert_eq!(df.height(), 2 * 60);
    let status = strings(&df, "status");
    let walls: Vec<bool> = df
        .column("walls")
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    let iterations = floats(&df, "iterations");
    let n_c = floats(&df, "n_c");
    let pen = floats(&df, "max_penetration");
    let energy: Vec<f64> = floats(&df, "kinetic_energy")
        .iter()
        .zip(floats(&df, "potential_energy"))
        .map(|(k, p)| k + p)
        .collect();
    let e_m = floats(&df, "e_m");
    for k in 0..df.height() {
        assert!(
            status[k] == "converged" || status[k] == "no_contacts",
            "row {k}: {}",
            status[k]
        );
        assert!(iterations[k] < 100.0, "row {k}");
        // A few millimetres at most in the impacts (boxes spinning at ~20 rad/s leave the
        // step's linearisation by about a millimetre per step; see the scene's tests).
        assert!(pen[k] < 5e-3, "row {k}: overlap {}", pen[k]);
        if n_c[k] > 0.0 {
            assert!(e_m[k] <= 1e-5, "row {k}: e_m {}", e_m[k]);
        }
        // Pushing an overlap out returns a little energy: at most 0.1% in a step.
        if k % 60 > 0 {
            assert!(
                energy[k] <= energy[k - 1] + 1e-3 * energy[k - k % 60],
                "row {k}: the energy grew from {} to {}",
                energy[k - 1],
                energy[k]
            );
        }
    }
    assert_eq!(walls.iter().filter(|w| **w).count(), 60);
    // Contacts come and the bodies land: most steps of each run have some.
    for run in 0..2 {
        let with = n_c[60 * run..60 * (run + 1)]
            .iter()
            .filter(|n| **n > 0.0)
            .count();
        assert!(with > 30, "run {run}: {with} steps with contacts");
    }
}
