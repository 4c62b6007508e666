//! Todorov 2010 statistics: Table 1's cells (the median iterations of a run's steps with
//! contacts, averaged over the runs, with the spread over runs), the paper's counting
//! convention, the size and time of the linear solves (section I-B), where the line-search
//! steps land on the dogleg path (section IV), and the ball-drop impact.

use std::collections::BTreeMap;

use contactlab_runs::schema::{steps, traces};
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
    /// Contact steps whose driver reported convergence by its own test (a pyramid model's
    /// answer cannot meet the Coulomb-cone ruler: this is what says it solved its own problem).
    pub solver_converged: f64,
    /// Contact steps whose driver reported a local minimum.
    pub local_minima: f64,
    /// Contact steps that took no iteration (the start already met the tolerance).
    pub zero_iterations: f64,
    /// Seconds in the solver, summed.
    pub seconds: f64,
    /// The formulation's unknowns summed over the contact steps.
    pub unknowns: f64,
    /// Contacts summed over the contact steps.
    pub contacts: f64,
    /// Linear systems the driver factored, summed (the `linear_solves` counter; 0 for drivers
    /// that do not report it).
    pub linear_solves: f64,
    /// Seconds in those factorizations and solves, summed (`linear_solve_nanoseconds`).
    pub linear_solve_seconds: f64,
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
    stats_of(&run_frame(steps)?)
}

/// One row per (mu, n_balls, solver, run) with a contact step: the sums and medians of
/// [`run_aggregates`], sorted by n_balls, mu, solver, run.
fn run_frame(steps: &DataFrame) -> PolarsResult<DataFrame> {
    let mut df = with_counters(
        steps,
        &[
            "newton_accepted",
            "linear_solves",
            "linear_solve_nanoseconds",
        ],
    )?;
    // Runs written before the column existed: no unknowns recorded.
    if df.column(steps::UNKNOWNS).is_err() {
        let zeros = vec![0.0; df.height()];
        df.with_column(Column::new(steps::UNKNOWNS.into(), zeros))?;
    }
    df.lazy()
        .group_by([
            col("mu"),
            col("n_balls"),
            col(steps::SOLVER),
            col(steps::RUN),
        ])
        .agg(run_aggregates())
        .filter(col("contact_steps").gt(lit(0.0)))
        .sort(
            ["n_balls", "mu", steps::SOLVER, steps::RUN],
            SortMultipleOptions::default(),
        )
        .collect()
}

/// What [`run_frame`] sums or takes the median of over a run's steps, most of it over the
/// steps with a contact only.
fn run_aggregates() -> Vec<Expr> {
    let contact = col(steps::N_C).gt(lit(0));
    let it = || col(steps::ITERATIONS).cast(DataType::Float64);
    // Over the contact steps: the sum of `e`, and the count of the steps where `e` holds.
    let sum = |e: Expr, name: &str| e.filter(contact.clone()).sum().alias(name);
    let count = |e: Expr, name: &str| {
        e.and(contact.clone())
            .cast(DataType::Float64)
            .sum()
            .alias(name)
    };
    let float = |name: &str| col(name).cast(DataType::Float64);
    vec![
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
        sum(it(), "iters"),
        sum(col("newton_accepted"), "newton"),
        count(col(steps::STATUS).eq(lit("converged")), "converged"),
        count(
            col(steps::SOLVER_STATUS).eq(lit("converged")),
            "solver_converged",
        ),
        count(
            col(steps::SOLVER_STATUS).eq(lit("local_minimum")),
            "local_minima",
        ),
        count(it().eq(lit(0.0)), "zero_iterations"),
        col(steps::SECONDS).sum().alias(steps::SECONDS),
        sum(float(steps::UNKNOWNS), steps::UNKNOWNS),
        sum(float(steps::N_C), "contacts"),
        sum(col("linear_solves"), "linear_solves"),
        sum(col("linear_solve_nanoseconds"), "linear_solve_ns"),
    ]
}

/// The [`RunStats`] of each row of [`run_frame`].
fn stats_of(runs: &DataFrame) -> PolarsResult<Vec<RunStats>> {
    let g = |name: &str| f64s(runs, name);
    let (mu, nb, run) = (g("mu")?, g("n_balls")?, g(steps::RUN)?);
    let solver = strs(runs, steps::SOLVER)?;
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
        g(steps::SECONDS)?,
    );
    let (zero, solver_conv) = (g("zero_iterations")?, g("solver_converged")?);
    let (unknowns, contacts, solves, solve_ns) = (
        g(steps::UNKNOWNS)?,
        g("contacts")?,
        g("linear_solves")?,
        g("linear_solve_ns")?,
    );
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
            solver_converged: solver_conv[i],
            local_minima: lm[i],
            zero_iterations: zero[i],
            seconds: secs[i],
            unknowns: unknowns[i],
            contacts: contacts[i],
            linear_solves: solves[i],
            linear_solve_seconds: 1e-9 * solve_ns[i],
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
    /// The same share with the sticking start counted as an accepted Newton point of every
    /// contact step (the paper's counting convention for iterations, carried over).
    pub newton_share_paper_convention: f64,
    /// Percent of solves (contact steps) that converged by the shared ruler.
    pub converged_share: f64,
    /// The per-run converged shares (percent), in run order.
    pub run_converged: Vec<f64>,
    /// Percent of solves whose driver reported convergence by its own test.
    pub solver_converged_share: f64,
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
    /// The formulation's unknowns per contact over the cell's solves (NaN when not recorded).
    pub unknowns_per_contact: f64,
    /// Mean contacts per solve (steps with contacts only).
    pub contacts_per_solve: f64,
    /// Linear systems factored per solve (NaN when the driver does not report them).
    pub linear_solves_per_solve: f64,
    /// Mean seconds per factorization and solve (NaN when the driver does not report them).
    pub seconds_per_linear_solve: f64,
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
        .filter(col(steps::ROLE).eq(lit(steps::ROLE_DRIVER)))
        .group_by([col("mu"), col("n_balls")])
        .agg([col(steps::N_C)
            .cast(DataType::Float64)
            .mean()
            .alias(steps::N_C)])
        .collect()?;
    let (nc_mu, nc_nb, nc) = (
        f64s(&n_c, "mu")?,
        f64s(&n_c, "n_balls")?,
        f64s(&n_c, steps::N_C)?,
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
                newton_share_paper_convention: 100.0 * (newton + solves)
                    / (iters + solves).max(1.0),
                converged_share: 100.0 * sum(&|r| r.converged) / solves.max(1.0),
                run_converged: rs.iter().map(|r| r.converged_percent()).collect(),
                solver_converged_share: 100.0 * sum(&|r| r.solver_converged) / solves.max(1.0),
                local_minima: sum(&|r| r.local_minima) as u64,
                zero_iterations: sum(&|r| r.zero_iterations) as u64,
                n_c: (0..nc.len())
                    .find(|&j| nc_mu[j] == first.mu && nc_nb[j] == first.n_balls as f64)
                    .map_or(f64::NAN, |j| nc[j]),
                seconds_per_solve: sum(&|r| r.seconds) / solves.max(1.0),
                contact_steps: solves as u64,
                steps: sum(&|r| r.steps as f64) as u64,
                unknowns_per_contact: ratio(sum(&|r| r.unknowns), sum(&|r| r.contacts)),
                contacts_per_solve: ratio(sum(&|r| r.contacts), solves),
                linear_solves_per_solve: ratio(sum(&|r| r.linear_solves), solves),
                seconds_per_linear_solve: ratio(
                    sum(&|r| r.linear_solve_seconds),
                    sum(&|r| r.linear_solves),
                ),
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

/// `a / b`, NaN when either is zero (a quantity the data do not record is zero in every row).
fn ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 && b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
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
    /// Mean over the mu cells of the share of accepted Newton points (percent).
    pub newton_share: f64,
    /// Mean over the mu cells of the share of solves converged by the driver's own test.
    pub solver_converged_share: f64,
    /// Mean over the mu cells of the unknowns per contact.
    pub unknowns_per_contact: f64,
    /// Mean over the mu cells of the contacts per solve.
    pub contacts_per_solve: f64,
    /// Mean over the mu cells of the linear systems factored per solve.
    pub linear_solves_per_solve: f64,
    /// Mean over the mu cells of the seconds per factorization and solve.
    pub seconds_per_linear_solve: f64,
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
        newton_share: mean(&|c| c.newton_share),
        solver_converged_share: mean(&|c| c.solver_converged_share),
        unknowns_per_contact: mean(&|c| c.unknowns_per_contact),
        contacts_per_solve: mean(&|c| c.contacts_per_solve),
        linear_solves_per_solve: mean(&|c| c.linear_solves_per_solve),
        seconds_per_linear_solve: mean(&|c| c.seconds_per_linear_solve),
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
        strs(steps, steps::SOLVER)?,
        f64s(steps, steps::N_C)?,
        strs(steps, steps::SOLVER_STATUS)?,
        f64s(steps, steps::SECONDS)?,
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

/// Where the driver's iterations went in one Table 1 cell, counted from its per-iteration
/// traces (`step_kind` and `path_position` of Todorov's driver): accepted Newton points,
/// line-search steps by where they landed on the dogleg path `x -> x_C -> x_N` (section IV:
/// "almost always in the segment `x_C : x_N`", "about half of these ... on edges"), and
/// iterations that stopped without moving.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Landing {
    /// Friction coefficient (NaN for a pooled count).
    pub mu: f64,
    /// Number of balls (0 for a pooled count).
    pub n_balls: i64,
    /// Iterations counted.
    pub iterations: u64,
    /// Iterations whose Newton point was accepted.
    pub newton: u64,
    /// Iterations that took the line search's best point (on a smooth piece or an edge).
    pub line_search: u64,
    /// Line-search steps strictly inside the leg `x : x_C`.
    pub first_leg: u64,
    /// Line-search steps at `x_C` itself (the end of the first leg, the start of the second).
    pub at_cauchy: u64,
    /// Line-search steps past `x_C` on the leg `x_C : x_N`, `x_N` included.
    pub second_leg: u64,
    /// Of those, the steps at `x_N` itself (rejected by the 50% test but still the best point).
    pub at_newton_point: u64,
    /// Line-search steps at an edge crossing.
    pub on_edges: u64,
    /// Line-search steps at an edge crossing of the leg `x_C : x_N`.
    pub second_leg_on_edges: u64,
    /// Iterations that did not move (a local minimum or the time limit).
    pub stopped: u64,
}

impl Landing {
    /// Adds another count (pooling cells).
    pub fn add(&mut self, o: &Landing) {
        self.iterations += o.iterations;
        self.newton += o.newton;
        self.line_search += o.line_search;
        self.first_leg += o.first_leg;
        self.at_cauchy += o.at_cauchy;
        self.second_leg += o.second_leg;
        self.at_newton_point += o.at_newton_point;
        self.on_edges += o.on_edges;
        self.second_leg_on_edges += o.second_leg_on_edges;
        self.stopped += o.stopped;
    }

    /// `100 part / whole`, NaN for an empty whole.
    pub fn percent(part: u64, whole: u64) -> f64 {
        if whole == 0 {
            f64::NAN
        } else {
            100.0 * part as f64 / whole as f64
        }
    }

    /// Percent of the iterations whose Newton point was not accepted.
    pub fn non_newton_percent(&self) -> f64 {
        Landing::percent(self.iterations - self.newton, self.iterations)
    }

    /// Percent of the line-search steps on `x_C : x_N` (past `x_C`).
    pub fn second_leg_percent(&self) -> f64 {
        Landing::percent(self.second_leg, self.line_search)
    }

    /// Percent of the line-search steps at an edge crossing.
    pub fn on_edges_percent(&self) -> f64 {
        Landing::percent(self.on_edges, self.line_search)
    }
}

/// The [`Landing`] counts of `solver` per (mu, n_b), sorted by n_b then mu, from the traces of
/// every step (`why = "every_step"`, the start rows left out) and the steps frame that maps
/// each run to its cell. None when the traces have no `step_kind` (no driver reported one); a
/// missing `path_position` column (no line-search step in the data) reads as no positions.
pub fn landing(traces: &DataFrame, steps: &DataFrame, solver: &str) -> PolarsResult<Vec<Landing>> {
    let (run, mu, nb) = (
        f64s(steps, steps::RUN)?,
        f64s(steps, "mu")?,
        f64s(steps, "n_balls")?,
    );
    let cell_of: BTreeMap<u64, (u64, i64)> = (0..run.len())
        .map(|i| (run[i] as u64, (mu[i].to_bits(), nb[i] as i64)))
        .collect();
    let (t_solver, why, t_run, iter) = (
        strs(traces, traces::SOLVER)?,
        strs(traces, traces::WHY)?,
        f64s(traces, traces::RUN)?,
        f64s(traces, traces::ITER)?,
    );
    if traces.column(traces::STEP_KIND).is_err() {
        return Ok(Vec::new());
    }
    let kind = strs(traces, traces::STEP_KIND)?;
    let pos = match traces.column("path_position") {
        Ok(_) => f64s(traces, "path_position")?,
        Err(_) => vec![f64::NAN; traces.height()],
    };
    let mut cells: BTreeMap<(i64, u64), Landing> = BTreeMap::new();
    for i in 0..t_solver.len() {
        if t_solver[i] != solver || why[i] != "every_step" || iter[i] < 1.0 {
            continue;
        }
        let Some(&(mu_bits, n_balls)) = cell_of.get(&(t_run[i] as u64)) else {
            continue;
        };
        let c = cells.entry((n_balls, mu_bits)).or_insert_with(|| Landing {
            mu: f64::from_bits(mu_bits),
            n_balls,
            ..Landing::default()
        });
        c.iterations += 1;
        match kind[i].as_str() {
            "newton" => c.newton += 1,
            "dogleg" | "edge" => {
                let edge = kind[i] == "edge";
                c.line_search += 1;
                c.on_edges += u64::from(edge);
                let t = pos[i];
                if t.is_nan() {
                    // A trace without positions (a driver build before the column): not placed.
                } else if t < 1.0 {
                    c.first_leg += 1;
                } else if t == 1.0 {
                    c.at_cauchy += 1;
                } else {
                    c.second_leg += 1;
                    c.at_newton_point += u64::from(t == 2.0);
                    c.second_leg_on_edges += u64::from(edge);
                }
            }
            _ => c.stopped += 1,
        }
    }
    Ok(cells.into_values().collect())
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
        assert!((c.newton_share_paper_convention - 100.0 * 21.0 / 22.0).abs() < 1e-12);
        assert!((c.converged_share - 80.0).abs() < 1e-12);
        assert!((c.solver_converged_share - 60.0).abs() < 1e-12);
        assert_eq!(c.run_converged, [100.0, 100.0 * 2.0 / 3.0]);
        assert_eq!((c.local_minima, c.zero_iterations), (1, 0));
        assert!((c.local_minima_percent() - 20.0).abs() < 1e-12);
        assert!((c.n_c - 18.0 / 7.0).abs() < 1e-12);
        assert_eq!((c.contact_steps, c.steps), (5, 7));
        assert!((c.seconds_per_solve - 7.0 / 5.0).abs() < 1e-12);
    }

    #[test]
    fn cells_carry_unknowns_and_linear_solve_times() {
        let df = two_runs()
            .lazy()
            .with_columns([
                (col("n_c") * lit(10u64)).alias("unknowns"),
                (col("iterations") + lit(1u64)).alias("linear_solves"),
                (col("iterations") * lit(2000u64)).alias("linear_solve_nanoseconds"),
            ])
            .collect()
            .unwrap();
        let c = &table1_cells(&df).unwrap()[0];
        assert_eq!(c.unknowns_per_contact, 10.0);
        assert!((c.contacts_per_solve - 18.0 / 5.0).abs() < 1e-12);
        // 17 iterations in 5 contact steps: 22 solves, 34 us.
        assert!((c.linear_solves_per_solve - 22.0 / 5.0).abs() < 1e-12);
        assert!((c.seconds_per_linear_solve - 34e-6 / 22.0).abs() < 1e-18);
        let s = solver_summary(std::slice::from_ref(c), "t", 5).unwrap();
        assert_eq!(s.unknowns_per_contact, 10.0);
        assert!((s.newton_share - c.newton_share).abs() < 1e-12);
        // Without the columns (an older run) these are unknown, not zero.
        let c = &table1_cells(&two_runs()).unwrap()[0];
        assert!(c.unknowns_per_contact.is_nan() && c.seconds_per_linear_solve.is_nan());
    }

    #[test]
    fn landing_counts_the_every_step_traces_by_cell_and_leg() {
        let steps = df!(
            "run" => [0u64, 1],
            "mu" => [0.5, 1.0],
            "n_balls" => [5i64, 5],
        )
        .unwrap();
        let kind = [
            None,
            Some("newton"),
            Some("dogleg"),
            Some("edge"),
            Some("dogleg"),
            Some("edge"),
            Some("local_minimum"),
            Some("dogleg"),
            Some("newton"),
        ];
        let traces = df!(
            "run" => [0u64, 0, 0, 0, 0, 0, 0, 1, 1],
            "step" => [3u64; 9],
            "solver" => ["t", "t", "t", "t", "t", "t", "t", "t", "other"],
            "why" => ["every_step", "every_step", "every_step", "every_step", "every_step", "every_step", "every_step", "every_step", "every_step"],
            "iter" => [0u64, 1, 2, 3, 4, 5, 6, 1, 1],
            "step_kind" => kind,
            "path_position" => [None, None, Some(0.5), Some(1.5), Some(1.0), Some(1.25), None, Some(2.0), None],
        )
        .unwrap();
        let cells = landing(&traces, &steps, "t").unwrap();
        assert_eq!(cells.len(), 2);
        let c = &cells[0];
        assert_eq!((c.mu, c.n_balls), (0.5, 5));
        assert_eq!(
            (c.iterations, c.newton, c.line_search, c.stopped),
            (6, 1, 4, 1)
        );
        assert_eq!((c.first_leg, c.at_cauchy, c.second_leg), (1, 1, 2));
        assert_eq!(
            (c.on_edges, c.second_leg_on_edges, c.at_newton_point),
            (2, 2, 0)
        );
        assert_eq!(c.second_leg_percent(), 50.0);
        assert_eq!(c.on_edges_percent(), 50.0);
        assert!((c.non_newton_percent() - 500.0 / 6.0).abs() < 1e-12);
        let d = &cells[1];
        assert_eq!((d.iterations, d.second_leg, d.at_newton_point), (1, 1, 1));
        let mut all = *c;
        all.add(d);
        assert_eq!((all.iterations, all.second_leg), (7, 3));
        assert!(Landing::percent(1, 0).is_nan());
        // Only traces of every step count: a hardest-step copy is not counted twice.
        let hardest = traces
            .clone()
            .lazy()
            .with_column(lit("hardest").alias("why"))
            .collect()
            .unwrap();
        assert!(landing(&hardest, &steps, "t").unwrap().is_empty());
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
