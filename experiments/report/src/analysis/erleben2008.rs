//! Erleben and Ortiz statistics: per problem size and solver, the outcomes by the driver's own
//! status and by the shared ruler, and the seconds and iterations per solve (min / avg / max,
//! warm-start sweeps included), with seeded bootstrap intervals of the averages over the cases.

use std::collections::BTreeMap;

use contactlab_runs::schema::steps;
use polars::prelude::*;

use super::{
    bootstrap_mean_interval, f64s, strs, with_counters, AnalysisError, Spread, BOOTSTRAP_RESAMPLES,
};

/// The columns [`size_stats`] reads (the warm-start counter `pgs_sweeps` is read as zero when
/// absent, see [`super::counter`]).
pub const REQUIRED_COLUMNS: [&str; 7] = [
    "size",
    steps::SOLVER,
    steps::RUN,
    steps::ITERATIONS,
    steps::SECONDS,
    steps::STATUS,
    steps::SOLVER_STATUS,
];

/// Minimum, mean and maximum of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinAvgMax {
    /// Smallest value.
    pub min: f64,
    /// Mean.
    pub avg: f64,
    /// Largest value.
    pub max: f64,
}

/// Per (size, solver): the Table 1-2 statistics of one solver over the cases of one size.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeStats {
    /// Problem size (`3 x contacts`).
    pub size: i64,
    /// Solver label.
    pub solver: String,
    /// Cases solved.
    pub cases: u64,
    /// Runs (seeds) the cases come from.
    pub runs: u64,
    /// Cases per status the driver itself reported (`converged`, `stagnated`, ...).
    pub stops: BTreeMap<String, u64>,
    /// Cases whose impulses pass the exact-cone natural-map ruler (`status == converged`).
    pub ruler_converged: u64,
    /// Seconds per solve.
    pub seconds: MinAvgMax,
    /// Iterations per solve, warm-start sweeps included (`iterations + pgs_sweeps`).
    pub iterations: MinAvgMax,
    /// Seeded 95% bootstrap interval of `iterations.avg` over the cases.
    pub iterations_interval: (f64, f64),
    /// Seeded 95% bootstrap interval of the converged count (driver's own status), scaled to
    /// the number of cases.
    pub converged_interval: (f64, f64),
    /// Mean of the driver's own iterations alone (Newton iterations for the paper's driver).
    pub own_iterations_avg: f64,
}

impl SizeStats {
    /// Cases that ended with the driver's own status `name`.
    pub fn stopped(&self, name: &str) -> u64 {
        self.stops.get(name).copied().unwrap_or(0)
    }

    /// Cases that ended neither converged, stagnated nor with a failed line search.
    pub fn other_stops(&self) -> u64 {
        self.cases
            .saturating_sub(self.stopped("converged"))
            .saturating_sub(self.stopped("stagnated"))
            .saturating_sub(self.stopped("line_search_failed"))
    }

    /// The non-converged stops as `status n, ...` (`-` when there are none).
    pub fn failures(&self) -> String {
        let parts: Vec<String> = self
            .stops
            .iter()
            .filter(|(k, v)| k.as_str() != "converged" && **v > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if parts.is_empty() {
            "-".into()
        } else {
            parts.join("; ")
        }
    }
}

/// The seed of the bootstrap intervals of one (size, solver): fixed, so reports are identical
/// from run to run, and different per cell, so cells do not share resampling noise.
fn bootstrap_seed(size: i64, solver: &str) -> u64 {
    solver
        .bytes()
        .fold(2008u64.wrapping_mul(1_000_003) ^ size as u64, |h, b| {
            h.wrapping_mul(31).wrapping_add(u64::from(b))
        })
}

/// Aggregates a steps frame (one row per solve, [`REQUIRED_COLUMNS`]) into one
/// [`SizeStats`] per (size, solver), sorted by solver then size. Every case counts, converged
/// or not (the paper does not say otherwise). A missing column is `MissingData`.
pub fn size_stats(steps: &DataFrame) -> Result<Vec<SizeStats>, AnalysisError> {
    for c in REQUIRED_COLUMNS {
        if steps.column(c).is_err() {
            return Err(AnalysisError::MissingData(format!(
                "column `{c}` of the steps frame"
            )));
        }
    }
    let df = with_counters(steps, &["pgs_sweeps"])?;
    let (size, solver, run) = (
        f64s(&df, "size")?,
        strs(&df, steps::SOLVER)?,
        f64s(&df, steps::RUN)?,
    );
    let (iters, sweeps, secs) = (
        f64s(&df, steps::ITERATIONS)?,
        f64s(&df, "pgs_sweeps")?,
        f64s(&df, steps::SECONDS)?,
    );
    let (status, own) = (strs(&df, steps::STATUS)?, strs(&df, steps::SOLVER_STATUS)?);
    let mut groups: BTreeMap<(String, i64), Vec<usize>> = BTreeMap::new();
    for i in 0..df.height() {
        groups
            .entry((solver[i].clone(), size[i] as i64))
            .or_default()
            .push(i);
    }
    Ok(groups
        .into_iter()
        .map(|((solver, size), rows)| {
            let total: Vec<f64> = rows.iter().map(|&i| iters[i] + sweeps[i]).collect();
            let s: Vec<f64> = rows.iter().map(|&i| secs[i]).collect();
            let mam = |v: &[f64]| {
                let s = Spread::of(v);
                MinAvgMax {
                    min: s.min,
                    avg: s.mean,
                    max: s.max,
                }
            };
            let mut stops: BTreeMap<String, u64> = BTreeMap::new();
            for &i in &rows {
                *stops.entry(own[i].clone()).or_default() += 1;
            }
            let mut runs: Vec<u64> = rows.iter().map(|&i| run[i] as u64).collect();
            runs.sort_unstable();
            runs.dedup();
            let converged: Vec<f64> = rows
                .iter()
                .map(|&i| f64::from(u8::from(own[i] == "converged")))
                .collect();
            let seed = bootstrap_seed(size, &solver);
            let n = rows.len() as f64;
            let conv = bootstrap_mean_interval(&converged, 0.95, BOOTSTRAP_RESAMPLES, seed ^ 1);
            SizeStats {
                size,
                cases: rows.len() as u64,
                runs: runs.len() as u64,
                ruler_converged: rows.iter().filter(|&&i| status[i] == "converged").count() as u64,
                seconds: mam(&s),
                iterations: mam(&total),
                iterations_interval: bootstrap_mean_interval(
                    &total,
                    0.95,
                    BOOTSTRAP_RESAMPLES,
                    seed,
                ),
                converged_interval: (n * conv.0, n * conv.1),
                own_iterations_avg: rows.iter().map(|&i| iters[i]).sum::<f64>() / n,
                stops,
                solver,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_count_own_statuses_and_include_the_sweeps() {
        // Size 12: newton converged twice (4 sweeps + 2, 4 sweeps + 3 iterations) and once
        // stagnated; the ruler passes one case. Size 24: newton once, back-tracking failed;
        // one shadow row with no sweeps.
        let df = df!(
            "size" => [12i64, 12, 12, 24, 24],
            "solver" => ["newton", "newton", "newton", "newton", "lm"],
            "run" => [0u64, 1, 1, 0, 0],
            "iterations" => [2u64, 3, 10, 7, 5],
            "pgs_sweeps" => [4u64, 4, 4, 4, 0],
            "seconds" => [1.0, 2.0, 6.0, 0.5, 0.25],
            "status" => ["converged", "inaccurate", "stagnated", "line_search_failed", "converged"],
            "solver_status" => ["converged", "converged", "stagnated", "line_search_failed", "converged"],
        )
        .unwrap();
        let stats = size_stats(&df).unwrap();
        assert_eq!(stats.len(), 3);
        let (lm, n12, n24) = (&stats[0], &stats[1], &stats[2]);
        assert_eq!((lm.solver.as_str(), lm.size), ("lm", 24));
        assert_eq!(lm.iterations.avg, 5.0);
        assert_eq!(
            (n12.solver.as_str(), n12.size, n12.cases, n12.runs),
            ("newton", 12, 3, 2)
        );
        assert_eq!(n12.stopped("converged"), 2);
        assert_eq!(n12.stopped("stagnated"), 1);
        assert_eq!(n12.stopped("line_search_failed"), 0);
        assert_eq!(n12.other_stops(), 0);
        assert_eq!(n12.ruler_converged, 1);
        assert_eq!(
            n12.seconds,
            MinAvgMax {
                min: 1.0,
                avg: 3.0,
                max: 6.0
            }
        );
        assert_eq!(
            n12.iterations,
            MinAvgMax {
                min: 6.0,
                avg: 9.0,
                max: 14.0
            }
        );
        // The intervals lie within the sample's range and bracket the mean.
        let (lo, hi) = n12.iterations_interval;
        assert!(
            (6.0..=9.0).contains(&lo) && (9.0..=14.0).contains(&hi),
            "{lo} {hi}"
        );
        let (clo, chi) = n12.converged_interval;
        assert!(
            (0.0..=2.0).contains(&clo) && (2.0..=3.0).contains(&chi),
            "{clo} {chi}"
        );
        assert_eq!(n12.own_iterations_avg, 5.0);
        assert_eq!(n12.failures(), "stagnated 1");
        assert_eq!(n24.stopped("line_search_failed"), 1);
        assert_eq!(n24.ruler_converged, 0);
        assert_eq!(n24.iterations.max, 11.0);
        assert_eq!(n24.iterations_interval, (11.0, 11.0));
    }

    #[test]
    fn the_sweep_counter_and_missing_columns() {
        let df = df!(
            "size" => [12i64],
            "solver" => ["newton"],
            "run" => [0u64],
            "iterations" => [2u64],
            "pgs_sweeps" => [4u64],
            "seconds" => [1.0],
            "status" => ["converged"],
            "solver_status" => ["converged"],
        )
        .unwrap();
        assert_eq!(size_stats(&df).unwrap()[0].iterations.avg, 6.0);
        let e = size_stats(&df.drop("run").unwrap()).unwrap_err();
        assert!(e.to_string().contains("`run`"), "{e}");
    }
}
