//! Todorov 2010 statistics: Table 1's cells (the median iterations of a run's steps with
//! contacts, averaged over the runs, with the spread over runs), the paper's counting
//! convention, and the ball-drop impact.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::{f64s, strs, with_counters, Spread};

/// One run of one solver: the per-run statistics a Table 1 cell averages.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    /// Friction coefficient.
    pub mu: f64,
    /// Number of balls.
    pub n_balls: i64,
    /// Solver label.
    pub solver: String,
    /// Run index.
    pub run: u64,
    /// Median iterations over the run's steps with contacts.
    pub median_iterations: f64,
    /// The same median in the paper's convention: the sticking start counted as an iteration
    /// (`iterations + 1` on every step with contacts).
    pub median_iterations_paper: f64,
    /// Steps with contacts (solves).
    pub contact_steps: u64,
    /// All steps of the run.
    pub steps: u64,
    /// Iterations summed over the contact steps.
    pub iterations: f64,
    /// Accepted Newton points summed over the contact steps (the `newton_accepted` counter).
    pub newton_accepted: f64,
    /// Contact steps converged by the shared ruler.
    pub converged: f64,
    /// Contact steps whose driver reported a local minimum.
    pub local_minima: f64,
    /// Contact steps that took no iteration (the start already met the tolerance).
    pub zero_iterations: f64,
    /// Seconds in the solver, summed.
    pub seconds: f64,
}

impl RunStats {
    /// Share of the contact steps converged by the shared ruler, in percent.
    pub fn converged_percent(&self) -> f64 {
        100.0 * self.converged / (self.contact_steps as f64).max(1.0)
    }
}

/// The per-run statistics of every (mu, n_balls, solver, run) with at least one contact step,
/// sorted by n_balls, mu, solver, run.
pub fn run_stats(steps: &DataFrame) -> PolarsResult<Vec<RunStats>> {
    let df = with_counters(steps, &["newton_accepted"])?;
    let contact = col("n_c").gt(lit(0));
    let it = || col("iterations").cast(DataType::Float64);
    let runs = df
        .lazy()
        .group_by([col("mu"), col("n_balls"), col("solver"), col("run")])
        .agg([
            it().filter(contact.clone()).median().alias("median"),
            (it() + lit(1.0))
                .filter(contact.clone())
                .median()
                .alias("median_paper"),
            it().filter(contact.clone())
                .count()
                .cast(DataType::Float64)
                .alias("contact_steps"),
            it().count().cast(DataType::Float64).alias("steps"),
            it().filter(contact.clone()).sum().alias("iters"),
            col("newton_accepted")
                .filter(contact.clone())
                .sum()
                .alias("newton"),
            col("status")
                .eq(lit("converged"))
                .and(contact.clone())
                .cast(DataType::Float64)
                .sum()
                .alias("converged"),
            col("solver_status")
                .eq(lit("local_minimum"))
                .and(contact.clone())
                .cast(DataType::Float64)
                .sum()
                .alias("local_minima"),
            it().eq(lit(0.0))
                .and(contact.clone())
                .cast(DataType::Float64)
                .sum()
                .alias("zero_iterations"),
            col("seconds").sum().alias("seconds"),
        ])
        .filter(col("contact_steps").gt(lit(0.0)))
        .sort(
            ["n_balls", "mu", "solver", "run"],
            SortMultipleOptions::default(),
        )
        .collect()?;
    let g = |name: &str| f64s(&runs, name);
    let (mu, nb, run) = (g("mu")?, g("n_balls")?, g("run")?);
    let solver = strs(&runs, "solver")?;
    let (median, paper, contact_steps, all) = (
        g("median")?,
        g("median_paper")?,
        g("contact_steps")?,
        g("steps")?,
    );
    let (iters, newton, conv, lm, secs) = (
        g("iters")?,
        g("newton")?,
        g("converged")?,
        g("local_minima")?,
        g("seconds")?,
    );
    let zero = g("zero_iterations")?;
    Ok((0..runs.height())
        .map(|i| RunStats {
            mu: mu[i],
            n_balls: nb[i] as i64,
            solver: solver[i].clone(),
            run: run[i] as u64,
            median_iterations: median[i],
            median_iterations_paper: paper[i],
            contact_steps: contact_steps[i] as u64,
            steps: all[i] as u64,
            iterations: iters[i],
            newton_accepted: newton[i],
            converged: conv[i],
            local_minima: lm[i],
            zero_iterations: zero[i],
            seconds: secs[i],
        })
        .collect())
}

/// Per (mu, n_b, solver): the Table 1 statistics of one solver over the runs of the cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Friction coefficient.
    pub mu: f64,
    /// Number of balls.
    pub n_balls: i64,
    /// Solver label.
    pub solver: String,
    /// Mean over runs of the median iterations per step (steps with contacts).
    pub iterations: f64,
    /// The per-run medians: min, mean (= `iterations`), max over the runs, and the run count.
    pub iterations_spread: Spread,
    /// `iterations` in the paper's convention (the start counted: +1 per contact step).
    pub iterations_paper_convention: f64,
    /// The per-run medians of each run, in run order.
    pub run_medians: Vec<f64>,
    /// Percent of iterations whose Newton point was accepted.
    pub newton_share: f64,
    /// Percent of solves (contact steps) that converged by the shared ruler.
    pub converged_share: f64,
    /// The per-run converged shares (percent), in run order.
    pub run_converged: Vec<f64>,
    /// Solves that ended at a local minimum.
    pub local_minima: u64,
    /// Solves that took no iteration (the start already met the tolerance).
    pub zero_iterations: u64,
    /// Mean contacts per step (all steps, driver rows).
    pub n_c: f64,
    /// Mean seconds per solve.
    pub seconds_per_solve: f64,
    /// Steps with contacts (solves) in the cell.
    pub contact_steps: u64,
    /// All steps of the cell's runs.
    pub steps: u64,
}

impl Cell {
    /// Percent of the cell's solves that ended at a local minimum.
    pub fn local_minima_percent(&self) -> f64 {
        100.0 * self.local_minima as f64 / (self.contact_steps as f64).max(1.0)
    }

    /// Percent of the cell's solves that took no iteration.
    pub fn zero_iterations_percent(&self) -> f64 {
        100.0 * self.zero_iterations as f64 / (self.contact_steps as f64).max(1.0)
    }
}

/// Aggregates the steps frame of the Table 1 sweep into cells, sorted by n_balls, mu, solver.
pub fn table1_cells(steps: &DataFrame) -> PolarsResult<Vec<Cell>> {
    let runs = run_stats(steps)?;
    let n_c = steps
        .clone()
        .lazy()
        .filter(col("role").eq(lit("driver")))
        .group_by([col("mu"), col("n_balls")])
        .agg([col("n_c").cast(DataType::Float64).mean().alias("n_c")])
        .collect()?;
    let (nc_mu, nc_nb, nc) = (
        f64s(&n_c, "mu")?,
        f64s(&n_c, "n_balls")?,
        f64s(&n_c, "n_c")?,
    );
    // Runs come sorted by (n_balls, mu, solver, run): group consecutive runs of one cell.
    let mut groups: BTreeMap<(i64, u64, String), Vec<&RunStats>> = BTreeMap::new();
    for r in &runs {
        groups
            .entry((r.n_balls, r.mu.to_bits(), r.solver.clone()))
            .or_default()
            .push(r);
    }
    let mut cells: Vec<Cell> = groups
        .into_values()
        .map(|rs| {
            let first = rs[0];
            let medians: Vec<f64> = rs.iter().map(|r| r.median_iterations).collect();
            let paper: Vec<f64> = rs.iter().map(|r| r.median_iterations_paper).collect();
            let sum = |f: &dyn Fn(&RunStats) -> f64| rs.iter().map(|r| f(r)).sum::<f64>();
            let (iters, newton) = (sum(&|r| r.iterations), sum(&|r| r.newton_accepted));
            let solves = sum(&|r| r.contact_steps as f64);
            let spread = Spread::of(&medians);
            Cell {
                mu: first.mu,
                n_balls: first.n_balls,
                solver: first.solver.clone(),
                iterations: spread.mean,
                iterations_spread: spread,
                iterations_paper_convention: Spread::of(&paper).mean,
                run_medians: medians,
                newton_share: if iters > 0.0 {
                    100.0 * newton / iters
                } else {
                    f64::NAN
                },
                converged_share: 100.0 * sum(&|r| r.converged) / solves.max(1.0),
                run_converged: rs.iter().map(|r| r.converged_percent()).collect(),
                local_minima: sum(&|r| r.local_minima) as u64,
                zero_iterations: sum(&|r| r.zero_iterations) as u64,
                n_c: (0..nc.len())
                    .find(|&j| nc_mu[j] == first.mu && nc_nb[j] == first.n_balls as f64)
                    .map_or(f64::NAN, |j| nc[j]),
                seconds_per_solve: sum(&|r| r.seconds) / solves.max(1.0),
                contact_steps: solves as u64,
                steps: sum(&|r| r.steps as f64) as u64,
            }
        })
        .collect();
    cells.sort_by(|a, b| {
        (a.n_balls, a.mu, &a.solver)
            .partial_cmp(&(b.n_balls, b.mu, &b.solver))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(cells)
}

/// One solver at one `n_b`, averaged over the mu cells (the solver comparison's cells):
/// means over the cells, spreads over every run of those cells.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverSummary {
    /// Solver label.
    pub solver: String,
    /// Number of balls.
    pub n_balls: i64,
    /// Mean over the mu cells of the cells' iterations.
    pub iterations: f64,
    /// The per-run medians over every run of those cells.
    pub iterations_spread: Spread,
    /// Mean over the mu cells of the converged shares (percent).
    pub converged_share: f64,
    /// The per-run converged shares (percent) over every run of those cells.
    pub converged_spread: Spread,
    /// Local minima summed over the cells.
    pub local_minima: u64,
    /// Mean over the mu cells of the mean seconds per solve.
    pub seconds_per_solve: f64,
    /// Steps with contacts summed over the cells.
    pub contact_steps: u64,
    /// All steps summed over the cells.
    pub steps: u64,
}

/// The cells of `solver` with `n_balls` balls summarised over mu; `None` without such cells.
pub fn solver_summary(cells: &[Cell], solver: &str, n_balls: i64) -> Option<SolverSummary> {
    let sel: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.solver == solver && c.n_balls == n_balls)
        .collect();
    if sel.is_empty() {
        return None;
    }
    let k = sel.len() as f64;
    let mean = |f: &dyn Fn(&Cell) -> f64| sel.iter().map(|c| f(c)).sum::<f64>() / k;
    let all = |f: &dyn Fn(&Cell) -> &[f64]| -> Vec<f64> {
        sel.iter().flat_map(|c| f(c).iter().copied()).collect()
    };
    Some(SolverSummary {
        solver: solver.to_string(),
        n_balls,
        iterations: mean(&|c| c.iterations),
        iterations_spread: Spread::of(&all(&|c| &c.run_medians)),
        converged_share: mean(&|c| c.converged_share),
        converged_spread: Spread::of(&all(&|c| &c.run_converged)),
        local_minima: sel.iter().map(|c| c.local_minima).sum(),
        seconds_per_solve: mean(&|c| c.seconds_per_solve),
        contact_steps: sel.iter().map(|c| c.contact_steps).sum(),
        steps: sel.iter().map(|c| c.steps).sum(),
    })
}

/// The mean of `|ours / published - 1|` over the pairs with both values finite and a nonzero
/// published value (NaN when there is none): how far a column of reproduced numbers lies from
/// the published ones, whatever their scale.
pub fn mean_abs_relative_difference(pairs: &[(f64, f64)]) -> f64 {
    let d: Vec<f64> = pairs
        .iter()
        .filter(|(o, p)| o.is_finite() && p.is_finite() && *p != 0.0)
        .map(|(o, p)| (o / p - 1.0).abs())
        .collect();
    if d.is_empty() {
        f64::NAN
    } else {
        d.iter().sum::<f64>() / d.len() as f64
    }
}

/// The first step after which every vertical speed is below 1e-6 of the largest speed seen
/// before it (and the stack was moving): the impact that stops the whole stack.
pub fn impact_step(max_abs_vz: &[f64]) -> Option<usize> {
    let mut peak: f64 = 0.0;
    for (k, &v) in max_abs_vz.iter().enumerate() {
        if peak > 1e-3 && v <= 1e-6 * peak.max(1.0) {
            return Some(k);
        }
        peak = peak.max(v);
    }
    None
}

/// Share of the driver's contact steps and of its solver time per driver status
/// (`converged`, `max_iterations`, `local_minimum`, ...): `status -> (step share, time share)`,
/// both in percent.
pub fn status_shares(
    steps: &DataFrame,
    solver: &str,
) -> PolarsResult<BTreeMap<String, (f64, f64)>> {
    let (s, n_c, status, secs) = (
        strs(steps, "solver")?,
        f64s(steps, "n_c")?,
        strs(steps, "solver_status")?,
        f64s(steps, "seconds")?,
    );
    let mut by: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    let (mut n, mut t) = (0.0f64, 0.0f64);
    for i in 0..s.len() {
        if s[i] != solver || n_c[i] <= 0.0 {
            continue;
        }
        let e = by.entry(status[i].clone()).or_default();
        e.0 += 1.0;
        e.1 += secs[i];
        n += 1.0;
        t += secs[i];
    }
    for v in by.values_mut() {
        *v = (
            100.0 * v.0 / n.max(1.0),
            100.0 * v.1 / t.max(f64::MIN_POSITIVE),
        );
    }
    Ok(by)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impact_is_the_first_stop_after_motion() {
        assert_eq!(impact_step(&[0.0, 0.05, 0.1, 0.15, 1e-9, 0.0]), Some(4));
        assert_eq!(impact_step(&[0.0, 0.0]), None);
    }

    fn two_runs() -> DataFrame {
        // Two runs of one cell: medians 2 and 4 -> 3; steps without contacts are ignored.
        df!(
            "mu" => [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
            "n_balls" => [5i64, 5, 5, 5, 5, 5, 5],
            "solver" => ["t"; 7],
            "role" => ["driver"; 7],
            "run" => [0u64, 0, 0, 1, 1, 1, 1],
            "n_c" => [3u64, 3, 0, 4, 4, 4, 0],
            "iterations" => [2u64, 2, 0, 4, 4, 5, 0],
            "newton_accepted" => [2u64, 1, 0, 4, 4, 5, 0],
            "status" => ["converged", "converged", "no_contacts", "converged", "converged", "max_iterations", "no_contacts"],
            "solver_status" => ["converged", "converged", "no_contacts", "converged", "local_minimum", "max_iterations", "no_contacts"],
            "seconds" => [1.0; 7],
        )
        .unwrap()
    }

    #[test]
    fn cells_follow_the_papers_definition_with_spread_and_counts() {
        let cells = table1_cells(&two_runs()).unwrap();
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        assert_eq!(c.iterations, 3.0);
        assert_eq!(c.run_medians, [2.0, 4.0]);
        assert_eq!(
            (
                c.iterations_spread.min,
                c.iterations_spread.max,
                c.iterations_spread.n
            ),
            (2.0, 4.0, 2)
        );
        // The paper's convention counts the start: every contact step one more.
        assert_eq!(c.iterations_paper_convention, 4.0);
        assert!((c.newton_share - 100.0 * 16.0 / 17.0).abs() < 1e-12);
        assert!((c.converged_share - 80.0).abs() < 1e-12);
        assert_eq!(c.run_converged, [100.0, 100.0 * 2.0 / 3.0]);
        assert_eq!((c.local_minima, c.zero_iterations), (1, 0));
        assert!((c.local_minima_percent() - 20.0).abs() < 1e-12);
        assert!((c.n_c - 18.0 / 7.0).abs() < 1e-12);
        assert_eq!((c.contact_steps, c.steps), (5, 7));
        assert!((c.seconds_per_solve - 7.0 / 5.0).abs() < 1e-12);
    }

    #[test]
    fn cells_without_the_newton_counter_read_zero_accepted_points() {
        let df = two_runs().drop("newton_accepted").unwrap();
        let c = &table1_cells(&df).unwrap()[0];
        assert_eq!(c.newton_share, 0.0);
    }

    #[test]
    fn solver_summaries_average_cells_and_pool_runs() {
        let mut df = two_runs();
        let other = two_runs()
            .lazy()
            .with_column(lit(2.0).alias("mu"))
            .with_column((col("iterations") * lit(3u64)).alias("iterations"))
            .collect()
            .unwrap();
        df.vstack_mut(&other).unwrap();
        let cells = table1_cells(&df).unwrap();
        assert_eq!(cells.len(), 2);
        let s = solver_summary(&cells, "t", 5).unwrap();
        assert_eq!(s.iterations, (3.0 + 9.0) / 2.0);
        assert_eq!(
            (s.iterations_spread.min, s.iterations_spread.max),
            (2.0, 12.0)
        );
        assert_eq!(s.iterations_spread.n, 4);
        assert_eq!((s.contact_steps, s.steps, s.local_minima), (10, 14, 2));
        assert!(solver_summary(&cells, "t", 10).is_none());
    }

    #[test]
    fn relative_differences_and_status_shares() {
        let d =
            mean_abs_relative_difference(&[(2.0, 4.0), (6.0, 4.0), (f64::NAN, 1.0), (1.0, 0.0)]);
        assert_eq!(d, 0.5);
        assert!(mean_abs_relative_difference(&[]).is_nan());
        let shares = status_shares(&two_runs(), "t").unwrap();
        assert_eq!(shares["converged"], (60.0, 60.0));
        assert_eq!(shares["max_iterations"], (20.0, 20.0));
    }
}
