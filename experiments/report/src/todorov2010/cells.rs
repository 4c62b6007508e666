//! Table 1's grid as the Todorov 2010 report's sections share it: the published cells
//! (`table1_published.csv`), a cell's fact key, and how many values of `mu` and `n_balls` a
//! run sweeps.

use std::path::Path;

use contactlab_runs::config::ExperimentConfig;
use contactlab_runs::schema::steps;

use crate::builder::{Report, RunData};
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;
use crate::findings::Fmt;

/// One published Table 1 cell.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedCell {
    /// Friction coefficient.
    pub mu: f64,
    /// Number of balls.
    pub n_balls: i64,
    /// Average contacts (the column label).
    pub n_c: f64,
    /// Iterations per step.
    pub iterations: f64,
    /// Percent of accepted Newton points.
    pub newton_accepted: f64,
}

/// Reads `table1_published.csv` (`mu,n_b,n_c,iterations,newton_accepted`).
pub fn read_published(path: &Path) -> Result<Vec<PublishedCell>, ReportError> {
    let want = [
        "mu",
        "n_b",
        steps::N_C,
        steps::ITERATIONS,
        "newton_accepted",
    ];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| {
            let num = |i: usize| number(path, r, &want, i);
            Ok(PublishedCell {
                mu: num(0)?,
                n_balls: num(1)? as i64,
                n_c: num(2)?,
                iterations: num(3)?,
                newton_accepted: num(4)?,
            })
        })
        .collect()
}

/// The fact-name key of a Table 1 cell: `mu1.0.nb15`.
pub fn cell_key(mu: f64, n_balls: i64) -> String {
    format!("mu{mu:.1}.nb{n_balls}")
}

/// How many values the config sweeps `key` over; `none` when it does not sweep it.
pub(super) fn sweep_len(cfg: &ExperimentConfig, key: &str, none: usize) -> usize {
    cfg.sweep.get(key).map_or(none, Vec::len)
}

/// The facts `<run>.sweep.mu` and `<run>.sweep.n_balls`: how many values the run sweeps.
pub(super) fn sweep_facts(r: &mut Report, run: &RunData) {
    let name = &run.config.name;
    for key in ["mu", "n_balls"] {
        let n = sweep_len(&run.config, key, 0) as f64;
        r.facts().num(format!("{name}.sweep.{key}"), n, Fmt::int());
    }
}
