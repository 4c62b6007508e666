//! The Todorov 2010 report: Table 1 as published and as reproduced, the generic drivers on the
//! same residual, the plots, and the ball-drop test (`reports/todorov2010/`).

use std::fmt::Write as _;
use std::path::Path;

use polars::prelude::*;

use super::plots::{histogram, line_plot, Series};
use super::{
    f64s, fmt, markdown_table, number, read_csv_with_header, strs, write_csv, ReportError,
};
use crate::config::ExperimentConfig;
use crate::runner::read_parquet;

/// Per (mu, n_b, solver): the Table 1 statistics of one solver.
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
    /// Percent of iterations whose Newton point was accepted.
    pub newton_share: f64,
    /// Percent of solves that converged by the shared ruler.
    pub converged_share: f64,
    /// Solves that ended at a local minimum.
    pub local_minima: u64,
    /// Mean contacts per step (all steps).
    pub n_c: f64,
    /// Mean seconds per solve.
    pub seconds_per_solve: f64,
}

/// Aggregates the steps frame of the Table 1 sweep into cells.
pub fn table1_cells(steps: &DataFrame) -> PolarsResult<Vec<Cell>> {
    let contact_steps = steps.clone().lazy().filter(col("n_c").gt(lit(0)));
    let per_run = contact_steps
        .group_by([col("mu"), col("n_balls"), col("solver"), col("run")])
        .agg([
            col("iterations")
                .cast(DataType::Float64)
                .median()
                .alias("median_iterations"),
            col("newton_accepted")
                .cast(DataType::Float64)
                .sum()
                .alias("newton"),
            col("iterations")
                .cast(DataType::Float64)
                .sum()
                .alias("iters"),
            col("status")
                .eq(lit("converged"))
                .cast(DataType::Float64)
                .sum()
                .alias("converged"),
            col("solver_status")
                .eq(lit("local_minimum"))
                .cast(DataType::Float64)
                .sum()
                .alias("local_minima"),
            col("seconds").sum().alias("seconds"),
            col("iterations")
                .count()
                .cast(DataType::Float64)
                .alias("solves"),
        ]);
    let cells = per_run
        .group_by([col("mu"), col("n_balls"), col("solver")])
        .agg([
            col("median_iterations").mean(),
            col("newton").sum(),
            col("iters").sum(),
            col("converged").sum(),
            col("local_minima").sum(),
            col("seconds").sum(),
            col("solves").sum(),
        ])
        .sort(["n_balls", "mu", "solver"], SortMultipleOptions::default())
        .collect()?;
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
    let (mu, nb, solver) = (
        f64s(&cells, "mu")?,
        f64s(&cells, "n_balls")?,
        strs(&cells, "solver")?,
    );
    let (med, newton, iters) = (
        f64s(&cells, "median_iterations")?,
        f64s(&cells, "newton")?,
        f64s(&cells, "iters")?,
    );
    let (conv, lm, secs, solves) = (
        f64s(&cells, "converged")?,
        f64s(&cells, "local_minima")?,
        f64s(&cells, "seconds")?,
        f64s(&cells, "solves")?,
    );
    Ok((0..cells.height())
        .map(|i| {
            let n_c = (0..nc.len())
                .find(|&j| nc_mu[j] == mu[i] && nc_nb[j] == nb[i])
                .map(|j| nc[j])
                .unwrap_or(f64::NAN);
            Cell {
                mu: mu[i],
                n_balls: nb[i] as i64,
                solver: solver[i].clone(),
                iterations: med[i],
                newton_share: if iters[i] > 0.0 {
                    100.0 * newton[i] / iters[i]
                } else {
                    f64::NAN
                },
                converged_share: 100.0 * conv[i] / solves[i].max(1.0),
                local_minima: lm[i] as u64,
                n_c,
                seconds_per_solve: secs[i] / solves[i].max(1.0),
            }
        })
        .collect())
}

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
    let want = ["mu", "n_b", "n_c", "iterations", "newton_accepted"];
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

/// Writes `reports/todorov2010/` from the run data under `root/data/runs/todorov2010/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let cfg_dir = root.join("experiments/configs/todorov2010");
    let out = root.join("reports/todorov2010");
    std::fs::create_dir_all(&out)?;
    let table_cfg = ExperimentConfig::load(&cfg_dir.join("table1.toml"))
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let drop_cfg = ExperimentConfig::load(&cfg_dir.join("ball_drop.toml"))
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let table_path = table_cfg.data_path(root);
    if !table_path.exists() {
        return Err(ReportError::MissingData(table_path.display().to_string()));
    }
    let steps = read_parquet(&table_path)?;
    let solvers_cfg = ExperimentConfig::load(&cfg_dir.join("solvers.toml"))
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let solvers_path = solvers_cfg.data_path(root);
    let meta: serde_json::Value = std::fs::read_to_string(table_path.with_extension("meta.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null);
    let published = read_published(&cfg_dir.join("table1_published.csv"))?;
    let cells = table1_cells(&steps)?;
    let driver = table_cfg.driver_specs()[0].name();

    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Todorov 2010, implicit nonlinear complementarity: reproduction\n"
    );
    let _ = writeln!(
        md,
        "Generated by `just reproduce todorov2010` (`contactlab reproduce todorov2010`) from the configs in \
         `experiments/configs/todorov2010/`; do not edit by hand. Paper: E. Todorov, *Implicit nonlinear \
         complementarity: a new approach to contact dynamics*, ICRA 2010.\n"
    );
    let wall = meta.get("wall_seconds").and_then(|v| v.as_f64());
    let solve_seconds = meta.get("solve_seconds").and_then(|v| v.as_f64());
    let load = meta.get("load_average_1min").and_then(|v| v.as_f64());
    let threads = meta.get("threads").and_then(|v| v.as_u64());
    let _ = writeln!(
        md,
        "Table 1 sweep: {} cells x {} runs x {} steps, driver `{driver}`. \
         Wall time of the whole sweep (release build, {} threads, `experiments/configs/todorov2010/table1.toml`): **{}**.\n",
        table_cfg.sweep.get("mu").map_or(0, Vec::len) * table_cfg.sweep.get("n_balls").map_or(0, Vec::len),
        table_cfg.sweep.get("seed").map_or(1, Vec::len),
        table_cfg.scene.steps,
        threads.map_or("?".into(), |t| t.to_string()),
        wall.map_or("not recorded".into(), |w| format!("{w:.1} s")),
    );
    if let (Some(sec), Some(load)) = (solve_seconds, load) {
        let _ = writeln!(
            md,
            "Time inside the solvers, summed over all solves: {sec:.1} s; the machine's 1-minute load average \
             when the sweep ended: {load:.1} (on 2 cores, a load above 2 means the wall time was shared with \
             other work).\n"
        );
    }

    // Table 1.
    let mut rows_md = Vec::new();
    let mut rows_csv = Vec::new();
    for p in &published {
        let ours = cells
            .iter()
            .find(|c| c.solver == driver && c.mu == p.mu && c.n_balls == p.n_balls);
        let (it, nw, nc) = ours.map_or((f64::NAN, f64::NAN, f64::NAN), |c| {
            (c.iterations, c.newton_share, c.n_c)
        });
        let rel = (it - p.iterations) / p.iterations;
        rows_md.push(vec![
            fmt(p.mu, 1),
            p.n_balls.to_string(),
            format!("{} / {}", fmt(p.n_c, 0), fmt(nc, 1)),
            format!("{} / {}", fmt(p.iterations, 1), fmt(it, 2)),
            format!("{:+.0}%", 100.0 * rel),
            format!("{}% / {}%", fmt(p.newton_accepted, 0), fmt(nw, 0)),
            ours.map_or("-".into(), |c| {
                format!(
                    "{}% ({} local minima)",
                    fmt(c.converged_share, 1),
                    c.local_minima
                )
            }),
        ]);
        rows_csv.push(vec![
            fmt(p.mu, 1),
            p.n_balls.to_string(),
            fmt(p.n_c, 0),
            fmt(nc, 2),
            fmt(p.iterations, 1),
            fmt(it, 3),
            fmt(p.newton_accepted, 0),
            fmt(nw, 1),
        ]);
    }
    write_csv(
        &out.join("table1.csv"),
        &[
            "mu",
            "n_b",
            "n_c_published",
            "n_c_reproduced",
            "iterations_published",
            "iterations_reproduced",
            "newton_accepted_published",
            "newton_accepted_reproduced",
        ],
        &rows_csv,
    )?;
    let _ = writeln!(
        md,
        "## Table 1: iterations per step and accepted Newton points\n"
    );
    let _ = writeln!(
        md,
        "Each cell: published / reproduced. Iterations: the median over a run's steps with contacts, averaged \
         over the runs (the paper's definition). Newton: the share of iterations whose Newton point was accepted. \
         Relative difference of the iteration counts in its own column. Also in [`table1.csv`](table1.csv).\n"
    );
    md += &markdown_table(
        &[
            "mu",
            "n_b",
            "n_c",
            "iterations",
            "difference",
            "Newton accepted",
            "converged (ours)",
        ],
        &rows_md,
    );

    // Every solver on the same step problems (solvers.toml).
    if solvers_path.exists() {
        md += &solvers_section(&solvers_path, &solvers_cfg.driver_specs()[0].name(), &out)?;
    } else {
        let _ = writeln!(
            md,
            "\n(The solver comparison `solvers.toml` has not been run: `contactlab run experiments/configs/todorov2010/solvers.toml`.)\n"
        );
    }

    // Plots.
    let seeds = table_cfg.sweep.get("seed").cloned().unwrap_or_default();
    let first_seed = seeds.first().and_then(|v| v.as_integer()).unwrap_or(0);
    let nbs = f64s(&steps, "n_balls")?;
    let largest_nb = nbs.iter().copied().fold(0.0, f64::max);
    let series: Vec<Series> = table_cfg
        .sweep
        .get("mu")
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_float())
        .map(|mu| -> PolarsResult<Series> {
            let sel = steps
                .clone()
                .lazy()
                .filter(
                    col("solver")
                        .eq(lit(driver.clone()))
                        .and(col("mu").eq(lit(mu)))
                        .and(col("n_balls").cast(DataType::Float64).eq(lit(largest_nb)))
                        .and(col("seed").eq(lit(first_seed))),
                )
                .sort(["step"], SortMultipleOptions::default())
                .collect()?;
            let (st, it) = (f64s(&sel, "step")?, f64s(&sel, "iterations")?);
            Ok((format!("mu = {mu}"), st.into_iter().zip(it).collect()))
        })
        .collect::<PolarsResult<_>>()?;
    line_plot(
        &out.join("iterations_over_time.svg"),
        &format!("Iterations per step, n_b = {largest_nb}, seed {first_seed} ({driver})"),
        "step",
        "iterations",
        &series,
        false,
    )?;
    let driver_contact = steps
        .clone()
        .lazy()
        .filter(
            col("solver")
                .eq(lit(driver.clone()))
                .and(col("n_c").gt(lit(0))),
        )
        .collect()?;
    let iters: Vec<u64> = f64s(&driver_contact, "iterations")?
        .into_iter()
        .map(|v| v as u64)
        .collect();
    histogram(
        &out.join("iterations_histogram.svg"),
        &format!("Iterations per step, all cells ({driver})"),
        "iterations",
        &iters,
    )?;
    let _ = writeln!(md, "\n## Plots\n");
    let _ = writeln!(
        md,
        "![iterations per step over time](iterations_over_time.svg)\n"
    );
    let _ = writeln!(md, "![histogram of iterations](iterations_histogram.svg)\n");

    // Ball drop.
    let drop_path = drop_cfg.data_path(root);
    if drop_path.exists() {
        let d = read_parquet(&drop_path)?;
        let dd = d
            .clone()
            .lazy()
            .filter(col("role").eq(lit("driver")))
            .sort(["step"], SortMultipleOptions::default())
            .collect()?;
        let (st, nc, it, vz) = (
            f64s(&dd, "step")?,
            f64s(&dd, "n_c")?,
            f64s(&dd, "iterations")?,
            f64s(&dd, "max_abs_vz")?,
        );
        let rows: Vec<Vec<String>> = (0..st.len())
            .map(|i| {
                vec![
                    fmt(st[i], 0),
                    fmt(nc[i], 0),
                    fmt(it[i], 0),
                    format!("{:.3e}", vz[i]),
                ]
            })
            .collect();
        write_csv(
            &out.join("ball_drop.csv"),
            &["step", "n_c", "iterations", "max_abs_vz"],
            &rows,
        )?;
        let _ = writeln!(md, "## Ball-drop test (Fig. 6)\n");
        match impact_step(&vz) {
            Some(k) => {
                let _ = writeln!(
                    md,
                    "{} balls stacked and dropped from rest. Impact at step {}: the largest vertical speed goes from \
                     {:.3} m/s before the step to {:.2e} m/s after it, with {} contacts, solved in **{} iteration(s)** \
                     (the paper: all vertical velocities vanish in one step, solved in one iteration). Per-step data \
                     in [`ball_drop.csv`](ball_drop.csv).\n",
                    drop_cfg.runs(Path::new("ball_drop.toml")).ok().and_then(|r| r.first().and_then(|s| s.params.get("n_balls").and_then(|v| v.as_integer()))).unwrap_or(0),
                    st[k],
                    if k > 0 { vz[k - 1] } else { f64::NAN },
                    vz[k],
                    nc[k],
                    it[k]
                );
            }
            None => {
                let _ = writeln!(md, "No step in the ball-drop run stopped the stack's vertical motion: see `ball_drop.csv`.\n");
            }
        }
    }

    // Commentary written by people, kept beside the configs.
    if let Ok(findings) = std::fs::read_to_string(cfg_dir.join("findings.md")) {
        md += "\n";
        md += &findings;
    }
    std::fs::write(out.join("README.md"), md)?;
    Ok(())
}

/// The comparison of every solver of `solvers.toml` on the same step problems: a compact
/// table per solver and `n_b`, `solvers.csv` per cell, and the merit traces of all solvers on
/// the hardest step (most driver iterations) of the sweep.
fn solvers_section(path: &Path, driver: &str, out: &Path) -> Result<String, ReportError> {
    let steps = read_parquet(path)?;
    let cells = table1_cells(&steps)?;
    let mut md = String::new();
    let _ = writeln!(md, "\n## Every solver on the same step problems\n");
    let _ = writeln!(
        md,
        "The driver's impulses advance the simulation; the other solvers solve the very same step problems \
         (shadow solves, `experiments/configs/todorov2010/solvers.toml`), so their numbers compare like with \
         like. This is the paper's open question: what the edge-aware machinery buys over generic drivers on \
         the same residual, and what the section V-A recoveries (perturbed restarts, row-sum scaling) and warm \
         starts recover. Each cell: iterations (Table 1's statistic) / share of solves converged by the shared \
         natural-map ruler / solves whose driver reported a local minimum (the generic drivers report such \
         steps as `stagnated` or `max_iterations` instead), averaged over mu, and the mean time per solve. \
         Per cell in [`solvers.csv`](solvers.csv). Runs: {runs} (every mu x n_b x seed of the config), \
         {steps_per_solver} steps per solver (steps without contacts included).\n",
        runs = steps.column("run")?.n_unique()?,
        steps_per_solver = steps.height() / steps.column("solver")?.n_unique()?.max(1),
    );
    // The driver first, then the shadows in name order.
    let mut solvers: Vec<String> = vec![driver.to_string()];
    for c in &cells {
        if !solvers.contains(&c.solver) {
            solvers.push(c.solver.clone());
        }
    }
    let mut nbs: Vec<i64> = cells.iter().map(|c| c.n_balls).collect();
    nbs.sort_unstable();
    nbs.dedup();
    let rows: Vec<Vec<String>> = solvers
        .iter()
        .map(|s| {
            let mut row = vec![format!("`{s}`")];
            for nb in &nbs {
                let sel: Vec<&Cell> = cells
                    .iter()
                    .filter(|c| &c.solver == s && c.n_balls == *nb)
                    .collect();
                let k = sel.len().max(1) as f64;
                let it = sel.iter().map(|c| c.iterations).sum::<f64>() / k;
                let conv = sel.iter().map(|c| c.converged_share).sum::<f64>() / k;
                let lm: u64 = sel.iter().map(|c| c.local_minima).sum();
                let us = 1e6 * sel.iter().map(|c| c.seconds_per_solve).sum::<f64>() / k;
                row.push(format!(
                    "{} / {}% / {} ({:.0} us)",
                    fmt(it, 1),
                    fmt(conv, 1),
                    lm,
                    us
                ));
            }
            row
        })
        .collect();
    let header: Vec<String> = std::iter::once("solver".to_string())
        .chain(nbs.iter().map(|nb| format!("n_b = {nb}")))
        .collect();
    md += &markdown_table(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
    );
    let csv: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            vec![
                fmt(c.mu, 1),
                c.n_balls.to_string(),
                c.solver.clone(),
                fmt(c.iterations, 3),
                fmt(c.converged_share, 2),
                c.local_minima.to_string(),
                format!("{:.3}", 1e6 * c.seconds_per_solve),
            ]
        })
        .collect();
    write_csv(
        &out.join("solvers.csv"),
        &[
            "mu",
            "n_b",
            "solver",
            "iterations",
            "converged_percent",
            "local_minima",
            "microseconds_per_solve",
        ],
        &csv,
    )?;
    // The hardest step of the sweep: the run whose driver took the most iterations on one step.
    let traces = read_parquet(&path.with_file_name(format!(
        "{}_traces.parquet",
        path.file_stem().and_then(|s| s.to_str()).unwrap_or("solvers")
    )))?;
    let (t_solver, t_run, t_step, t_iter, t_merit) = (
        strs(&traces, "solver")?,
        f64s(&traces, "run")?,
        f64s(&traces, "step")?,
        f64s(&traces, "iter")?,
        f64s(&traces, "merit")?,
    );
    let hardest = (0..t_solver.len())
        .filter(|&i| t_solver[i] == driver)
        .max_by(|&a, &b| t_iter[a].total_cmp(&t_iter[b]))
        .map(|i| (t_run[i], t_step[i]));
    if let Some((run, step)) = hardest {
        let series: Vec<Series> = solvers
            .iter()
            .map(|s| {
                let pts = (0..t_solver.len())
                    .filter(|&j| &t_solver[j] == s && t_run[j] == run && t_step[j] == step)
                    .map(|j| (t_iter[j], t_merit[j].max(1e-300)))
                    .collect();
                (s.clone(), pts)
            })
            .collect();
        line_plot(
            &out.join("hard_step_convergence.svg"),
            &format!(
                "Merit |r|^2/2 per iteration, run {run}, step {step}: every solver, same problem"
            ),
            "iteration",
            "merit",
            &series,
            true,
        )?;
        let _ = writeln!(
            md,
            "\n![convergence on the hardest step](hard_step_convergence.svg)\n\nThe hardest step of the sweep \
             (run {run}, step {step}: the most iterations of `{driver}`), every solver from the same start rule \
             on the same problem.\n"
        );
    }
    Ok(md)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impact_is_the_first_stop_after_motion() {
        assert_eq!(impact_step(&[0.0, 0.05, 0.1, 0.15, 1e-9, 0.0]), Some(4));
        assert_eq!(impact_step(&[0.0, 0.0]), None);
    }

    #[test]
    fn cells_follow_the_papers_definition() {
        // Two runs of one cell: medians 2 and 4 -> 3; steps without contacts are ignored.
        let df = df!(
            "mu" => [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
            "n_balls" => [5i64, 5, 5, 5, 5, 5, 5],
            "solver" => ["t"; 7],
            "role" => ["driver"; 7],
            "run" => [0u64, 0, 0, 1, 1, 1, 1],
            "n_c" => [3u64, 3, 0, 4, 4, 4, 0],
            "iterations" => [2u64, 2, 0, 4, 4, 5, 0],
            "newton_accepted" => [2u64, 1, 0, 4, 4, 5, 0],
            "status" => ["converged", "converged", "no_contacts", "converged", "converged", "max_iterations", "no_contacts"],
            "solver_status" => ["converged", "converged", "no_contacts", "converged", "converged", "max_iterations", "no_contacts"],
            "seconds" => [1.0; 7],
        )
        .unwrap();
        let cells = table1_cells(&df).unwrap();
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        assert_eq!(c.iterations, 3.0);
        assert!((c.newton_share - 100.0 * 16.0 / 17.0).abs() < 1e-12);
        assert!((c.converged_share - 80.0).abs() < 1e-12);
        assert!((c.n_c - 18.0 / 7.0).abs() < 1e-12);
    }
}
