//! The Erleben and Ortiz report: Table 1 (converged / stagnated / back-tracking failed per
//! size) and Table 2 (seconds and iterations, min / avg / max, the 4 PGS warm-start sweeps
//! included) as published and as reproduced on two random families, the generic drivers on
//! the same min-map residual, the wall time and two plots (`reports/erleben2008/`).
//!
//! The paper's counts judge the Newton driver by its own stopping rule (`solver_status`:
//! `theta <= 1e-6` on the friction-pyramid problem); the exact-cone natural-map ruler of the
//! runner (`status`) is reported beside them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use polars::prelude::*;

use super::plots::{line_plot, Series};
use super::{
    f64s, fmt, markdown_table, number, read_csv_with_header, strs, write_csv, ReportError,
};
use crate::config::ExperimentConfig;
use crate::runner::read_parquet;

/// The configs of the report, in the order of its tables: the main (Delassus) family first.
pub const CONFIGS: [&str; 2] = ["tables_delassus.toml", "tables_opentissue.toml"];

/// The label of the paper's driver in the configs.
pub const NEWTON: &str = "newton";

/// Series per plot: the number of distinct colours of [`super::plots::line_plot`].
pub const PLOT_SERIES: usize = 6;

/// The columns [`size_stats`] reads.
pub const REQUIRED_COLUMNS: [&str; 7] = [
    "size",
    "solver",
    "iterations",
    "pgs_sweeps",
    "seconds",
    "status",
    "solver_status",
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
    /// Cases per status the driver itself reported (`converged`, `stagnated`, ...).
    pub stops: BTreeMap<String, u64>,
    /// Cases whose impulses pass the exact-cone natural-map ruler (`status == converged`).
    pub ruler_converged: u64,
    /// Seconds per solve.
    pub seconds: MinAvgMax,
    /// Iterations per solve, warm-start sweeps included (`iterations + pgs_sweeps`).
    pub iterations: MinAvgMax,
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

/// Aggregates a steps frame (one row per solve, [`REQUIRED_COLUMNS`]) into one
/// [`SizeStats`] per (size, solver), sorted by solver then size. Every case counts, converged
/// or not (the paper does not say otherwise).
pub fn size_stats(steps: &DataFrame) -> PolarsResult<Vec<SizeStats>> {
    let keys = [col("size"), col("solver")];
    let total = (col("iterations") + col("pgs_sweeps")).cast(DataType::Float64);
    let stats = steps
        .clone()
        .lazy()
        .with_column(col("size").cast(DataType::Int64))
        .group_by(keys.clone())
        .agg([
            col("seconds")
                .count()
                .cast(DataType::Float64)
                .alias("cases"),
            col("status")
                .eq(lit("converged"))
                .cast(DataType::Float64)
                .sum()
                .alias("ruler"),
            col("seconds").min().alias("s_min"),
            col("seconds").mean().alias("s_avg"),
            col("seconds").max().alias("s_max"),
            total.clone().min().alias("i_min"),
            total.clone().mean().alias("i_avg"),
            total.max().alias("i_max"),
            col("iterations")
                .cast(DataType::Float64)
                .mean()
                .alias("own_avg"),
        ])
        .sort(["solver", "size"], SortMultipleOptions::default())
        .collect()?;
    let stops = steps
        .clone()
        .lazy()
        .with_column(col("size").cast(DataType::Int64))
        .group_by([col("size"), col("solver"), col("solver_status")])
        .agg([col("seconds").count().cast(DataType::Float64).alias("n")])
        .collect()?;
    let (st_size, st_solver, st_status, st_n) = (
        f64s(&stops, "size")?,
        strs(&stops, "solver")?,
        strs(&stops, "solver_status")?,
        f64s(&stops, "n")?,
    );
    let (size, solver, cases, ruler) = (
        f64s(&stats, "size")?,
        strs(&stats, "solver")?,
        f64s(&stats, "cases")?,
        f64s(&stats, "ruler")?,
    );
    let col_of = |name: &str| f64s(&stats, name);
    let (s_min, s_avg, s_max) = (col_of("s_min")?, col_of("s_avg")?, col_of("s_max")?);
    let (i_min, i_avg, i_max) = (col_of("i_min")?, col_of("i_avg")?, col_of("i_max")?);
    let own = col_of("own_avg")?;
    Ok((0..stats.height())
        .map(|i| {
            let stops: BTreeMap<String, u64> = (0..st_n.len())
                .filter(|&j| st_size[j] == size[i] && st_solver[j] == solver[i])
                .map(|j| (st_status[j].clone(), st_n[j] as u64))
                .collect();
            SizeStats {
                size: size[i] as i64,
                solver: solver[i].clone(),
                cases: cases[i] as u64,
                stops,
                ruler_converged: ruler[i] as u64,
                seconds: MinAvgMax {
                    min: s_min[i],
                    avg: s_avg[i],
                    max: s_max[i],
                },
                iterations: MinAvgMax {
                    min: i_min[i],
                    avg: i_avg[i],
                    max: i_max[i],
                },
                own_iterations_avg: own[i],
            }
        })
        .collect())
}

/// One row of the paper's Tables 1-2.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedRow {
    /// Problem size.
    pub size: i64,
    /// Cases that reached the absolute tolerance.
    pub converged: u64,
    /// Cases that stagnated.
    pub stagnated: u64,
    /// Cases whose back-tracking failed.
    pub backtracking_failed: u64,
    /// Seconds per solve.
    pub seconds: MinAvgMax,
    /// Iterations per solve, the 4 PGS iterations included.
    pub iterations: MinAvgMax,
}

/// The header of `published.csv`.
pub const PUBLISHED_HEADER: [&str; 10] = [
    "size",
    "converged",
    "stagnated",
    "backtracking_failed",
    "seconds_min",
    "seconds_avg",
    "seconds_max",
    "iterations_min",
    "iterations_avg",
    "iterations_max",
];

/// Reads `published.csv` (header [`PUBLISHED_HEADER`]).
pub fn read_published(path: &Path) -> Result<Vec<PublishedRow>, ReportError> {
    read_csv_with_header(path, &PUBLISHED_HEADER)?
        .iter()
        .map(|r| {
            let num = |i: usize| number(path, r, &PUBLISHED_HEADER, i);
            Ok(PublishedRow {
                size: num(0)? as i64,
                converged: num(1)? as u64,
                stagnated: num(2)? as u64,
                backtracking_failed: num(3)? as u64,
                seconds: MinAvgMax {
                    min: num(4)?,
                    avg: num(5)?,
                    max: num(6)?,
                },
                iterations: MinAvgMax {
                    min: num(7)?,
                    avg: num(8)?,
                    max: num(9)?,
                },
            })
        })
        .collect()
}

/// One random family's run: its config, statistics and timing.
#[derive(Debug, Clone)]
pub struct FamilyRun {
    /// The family's name for tables (`Delassus`, `OpenTissue`).
    pub family: String,
    /// The family's key in `tables.csv` (`delassus`, `opentissue`).
    pub key: String,
    /// The config.
    pub config: ExperimentConfig,
    /// Per (size, solver) statistics.
    pub stats: Vec<SizeStats>,
    /// Wall-clock seconds of the config's sweep (from its `.meta.json`).
    pub wall_seconds: Option<f64>,
    /// Threads the sweep ran on.
    pub threads: Option<u64>,
    /// The machine's 1-minute load average when the sweep ended, when recorded.
    pub load_average: Option<f64>,
}

impl FamilyRun {
    /// The statistics of `solver` at `size`.
    pub fn get(&self, solver: &str, size: i64) -> Option<&SizeStats> {
        self.stats
            .iter()
            .find(|s| s.solver == solver && s.size == size)
    }

    /// Solver labels in config order: the driver, then the shadows.
    pub fn solvers(&self) -> Vec<String> {
        self.config
            .driver_specs()
            .into_iter()
            .chain(&self.config.shadow)
            .map(|s| s.name())
            .collect()
    }
}

/// Loads one config's data; a missing file or column is [`ReportError::MissingData`].
pub fn load_family(root: &Path, config: &Path) -> Result<FamilyRun, ReportError> {
    let cfg = ExperimentConfig::load(config).map_err(|e| ReportError::Published(e.to_string()))?;
    let path = cfg.data_path(root);
    if !path.exists() {
        return Err(ReportError::MissingData(path.display().to_string()));
    }
    let steps = read_parquet(&path)?;
    for c in REQUIRED_COLUMNS {
        if steps.column(c).is_err() {
            return Err(ReportError::MissingData(format!(
                "{} (column `{c}`)",
                path.display()
            )));
        }
    }
    let meta: serde_json::Value = std::fs::read_to_string(path.with_extension("meta.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null);
    let key = cfg
        .scene
        .params
        .get("family")
        .and_then(|v| v.as_str())
        .unwrap_or("delassus")
        .to_string();
    let family = match key.as_str() {
        "opentissue" => "OpenTissue".to_string(),
        "delassus" => "Delassus".to_string(),
        other => other.to_string(),
    };
    Ok(FamilyRun {
        family,
        key,
        stats: size_stats(&steps)?,
        wall_seconds: meta.get("wall_seconds").and_then(|v| v.as_f64()),
        threads: meta.get("threads").and_then(|v| v.as_u64()),
        load_average: meta.get("load_average_1min").and_then(|v| v.as_f64()),
        config: cfg,
    })
}

/// Seconds in a short engineering notation (`1.12e-4`), `-` for NaN.
fn sci(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.2e}")
    }
}

fn mam_seconds(m: &MinAvgMax) -> String {
    format!("{} / {} / {}", sci(m.min), sci(m.avg), sci(m.max))
}

fn mam_iterations(m: &MinAvgMax) -> String {
    format!("{} / {} / {}", fmt(m.min, 0), fmt(m.avg, 2), fmt(m.max, 0))
}

/// The rows of `tables.csv`: per family, size and solver; published values only on the
/// paper's driver.
pub fn tables_csv_rows(published: &[PublishedRow], families: &[FamilyRun]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for f in families {
        for solver in f.solvers() {
            for p in published {
                let Some(s) = f.get(&solver, p.size) else {
                    continue;
                };
                let paper = solver == NEWTON;
                let pub_or = |v: String| if paper { v } else { String::new() };
                rows.push(vec![
                    p.size.to_string(),
                    format!("{}/{}", f.key, solver),
                    pub_or(p.converged.to_string()),
                    s.stopped("converged").to_string(),
                    pub_or(format!("{:.6}", p.seconds.avg)),
                    format!("{:.6}", s.seconds.avg),
                    pub_or(format!("{:.2}", p.iterations.avg)),
                    format!("{:.2}", s.iterations.avg),
                ]);
            }
        }
    }
    rows
}

/// The columns of `tables.csv`.
pub const TABLES_CSV_HEADER: [&str; 8] = [
    "size",
    "driver",
    "converged_published",
    "converged_reproduced",
    "avg_seconds_published",
    "avg_seconds_reproduced",
    "avg_iterations_published",
    "avg_iterations_reproduced",
];

/// Writes `reports/erleben2008/` from the run data under `root/data/runs/erleben2008/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let cfg_dir = root.join("experiments/configs/erleben2008");
    let out = root.join("reports/erleben2008");
    let published = read_published(&cfg_dir.join("published.csv"))?;
    let families = CONFIGS
        .iter()
        .map(|c| load_family(root, &cfg_dir.join(c)))
        .collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(&out)?;
    let names: Vec<&str> = families.iter().map(|f| f.family.as_str()).collect();
    // One value per family, said once when they agree.
    let per_family = |f: &dyn Fn(&FamilyRun) -> String| -> String {
        let mut v: Vec<String> = families.iter().map(f).collect();
        v.dedup();
        v.join(" / ")
    };

    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Erleben and Ortiz, non-smooth Newton on the min-map: reproduction\n"
    );
    let _ = writeln!(
        md,
        "Generated by `just reproduce erleben2008` (`contactlab reproduce erleben2008`) from the configs in \
         `experiments/configs/erleben2008/`; do not edit by hand. Paper: K. Erleben and R. Ortiz, *A non-smooth \
         Newton method for multibody dynamics*, ICNAAM 2008, Tables 1-2.\n"
    );
    let total_wall: Option<f64> = families.iter().map(|f| f.wall_seconds).sum();
    let cases =
        |f: &FamilyRun| f.config.scene.steps * f.config.sweep.get("seed").map_or(1, Vec::len);
    let _ = writeln!(
        md,
        "Setup: random boxed LCPs with a friction pyramid of sizes {} (`3 x contacts`), {} cases per size, \
         absolute tolerance `theta = |H|^2/2 <= 1e-6` (the configs' `tol = sqrt(2e-6)` bounds `|H|`), at most 100 \
         iterations, the paper's Newton driver (`{NEWTON}`: B-derivative, Schur reduction, Armijo back-tracking, \
         4 projected Gauss-Seidel warm-start sweeps, stagnation below `1e-5`) from the zero start, and generic \
         drivers on the very same problems and the same residual `H`. The paper does not say how its \"random \
         symmetric positive definite systems\" were drawn, so two families run: **{}** (the main table) and \
         **{}**; `formulations/src/erleben/generator.rs` documents both.\n",
        published
            .iter()
            .map(|p| p.size.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        per_family(&|f| cases(f).to_string()),
        names.first().copied().unwrap_or("-"),
        names.get(1).copied().unwrap_or("-"),
    );
    let _ = writeln!(
        md,
        "Wall time of the whole sweep (release build, {} threads): **{}** ({}).\n",
        per_family(&|f| f.threads.map_or("?".into(), |t| t.to_string())),
        total_wall.map_or("not recorded".into(), |w| format!("{w:.1} s")),
        families
            .iter()
            .map(|f| format!(
                "{} {}{}",
                f.family,
                f.wall_seconds.map_or("?".into(), |w| format!("{w:.1} s")),
                f.load_average.map_or(String::new(), |l| format!(
                    ", load average {l:.1} at its end"
                ))
            ))
            .collect::<Vec<_>>()
            .join("; "),
    );
    let _ = writeln!(
        md,
        "Two judges of convergence: the paper's counts use the driver's own status (`solver_status`, \
         `|H| <= sqrt(2e-6)` on the friction-pyramid problem); the project's shared ruler (`status`) asks for the \
         exact Coulomb cone's natural-map residual divided by `1 + |q|` to be below the same number, which a \
         pyramid solution with sliding contacts misses and which the `1 + |q|` scaling loosens where `|q|` is \
         large (OpenTissue's `|q|` grows like `sqrt(n / 3)`).\n"
    );

    // Table 1.
    let newton = |f: &FamilyRun, size: i64| f.get(NEWTON, size).cloned();
    let mut t1 = Vec::new();
    for p in &published {
        let cell = |paper: u64, get: &dyn Fn(&SizeStats) -> u64| {
            let ours = families
                .iter()
                .map(|f| newton(f, p.size).map_or("-".into(), |s| get(&s).to_string()))
                .collect::<Vec<_>>()
                .join(" / ");
            format!("{paper} / {ours}")
        };
        t1.push(vec![
            p.size.to_string(),
            cell(p.converged, &|s| s.stopped("converged")),
            cell(p.stagnated, &|s| s.stopped("stagnated")),
            cell(p.backtracking_failed, &|s| s.stopped("line_search_failed")),
            families
                .iter()
                .map(|f| newton(f, p.size).map_or("-".into(), |s| s.other_stops().to_string()))
                .collect::<Vec<_>>()
                .join(" / "),
            families
                .iter()
                .map(|f| newton(f, p.size).map_or("-".into(), |s| s.ruler_converged.to_string()))
                .collect::<Vec<_>>()
                .join(" / "),
        ]);
    }
    let fam_list = names.join(" / ");
    let _ = writeln!(md, "## Table 1: outcomes of the Newton driver per size\n");
    let _ = writeln!(
        md,
        "Each cell: paper / {fam_list}, out of the cases of each size, by the driver's own status. \"Other\": \
         stops the paper has no column for (iteration budget, singular system, local minimum). The last column \
         is the shared exact-cone ruler, for comparison only.\n"
    );
    md += &markdown_table(
        &[
            "size",
            "converged",
            "stagnated",
            "back-tracking failed",
            &format!("other ({fam_list})"),
            &format!("exact-cone ruler converged ({fam_list})"),
        ],
        &t1,
    );

    // Table 2.
    let _ = writeln!(
        md,
        "\n## Table 2: seconds and iterations per solve (min / avg / max)\n"
    );
    let _ = writeln!(
        md,
        "Over all cases of a size, converged or not. Iterations include the 4 PGS sweeps (as the paper's do; \
         a start that already meets the tolerance takes none); the Newton iterations alone are the last column. \
         The paper's seconds are from a Dell M90 laptop (2008, 2-core Centrino Duo, 2 GB) with an SVD solve; ours \
         from this machine's release build, LU with an SVD fallback, two solves running at a time.\n"
    );
    for f in &families {
        let rows: Vec<Vec<String>> = published
            .iter()
            .map(|p| {
                let s = newton(f, p.size);
                vec![
                    p.size.to_string(),
                    mam_seconds(&p.seconds),
                    s.as_ref().map_or("-".into(), |s| mam_seconds(&s.seconds)),
                    mam_iterations(&p.iterations),
                    s.as_ref()
                        .map_or("-".into(), |s| mam_iterations(&s.iterations)),
                    s.as_ref()
                        .map_or("-".into(), |s| fmt(s.own_iterations_avg, 2)),
                ]
            })
            .collect();
        let _ = writeln!(md, "**{} family**\n", f.family);
        md += &markdown_table(
            &[
                "size",
                "seconds, paper",
                "seconds, ours",
                "iterations, paper",
                "iterations, ours",
                "Newton iterations (avg)",
            ],
            &rows,
        );
        md += "\n";
    }
    let csv_rows = tables_csv_rows(&published, &families);
    write_csv(&out.join("tables.csv"), &TABLES_CSV_HEADER, &csv_rows)?;
    let _ = writeln!(
        md,
        "Both tables' averages are also in [`tables.csv`](tables.csv), one row per size and `family/driver` \
         (published values on the `newton` rows only).\n"
    );

    // Every driver.
    let _ = writeln!(md, "## Every driver on the same problems\n");
    let _ = writeln!(
        md,
        "The paper names trust-region methods as the untried alternative to its back-tracking. The shadow \
         drivers solve the very same problems on the same residual `H` from the same zero start, without the PGS \
         sweeps: `trust-region` (Steihaug-CG on the Gauss-Newton model), `lm` (Levenberg-Marquardt), and on the \
         Delassus family also `gauss-newton` (Armijo), `dogleg` and `plm` (projected LM). Converged: by the \
         driver's own status; iterations include warm-start sweeps where a driver has them.\n"
    );
    for f in &families {
        let mut rows = Vec::new();
        for solver in f.solvers() {
            for p in &published {
                if let Some(s) = f.get(&solver, p.size) {
                    rows.push(vec![
                        p.size.to_string(),
                        format!("`{solver}`"),
                        format!("{} / {}", s.stopped("converged"), s.cases),
                        s.ruler_converged.to_string(),
                        s.failures(),
                        fmt(s.iterations.avg, 2),
                        format!("{:.3}", 1e3 * s.seconds.avg),
                        format!("{:.3}", 1e3 * s.seconds.max),
                    ]);
                }
            }
        }
        let _ = writeln!(md, "**{} family**\n", f.family);
        md += &markdown_table(
            &[
                "size",
                "driver",
                "converged",
                "exact-cone ruler",
                "other stops",
                "avg iterations",
                "avg ms",
                "max ms",
            ],
            &rows,
        );
        md += "\n";
    }

    // Plots.
    let log2 = |s: i64| (s as f64).log2();
    let mut it_series: Vec<Series> = vec![(
        "paper".into(),
        published
            .iter()
            .map(|p| (log2(p.size), p.iterations.avg))
            .collect(),
    )];
    let mut sec_series: Vec<Series> = vec![(
        "paper (2008 laptop)".into(),
        published
            .iter()
            .map(|p| (log2(p.size), p.seconds.avg))
            .collect(),
    )];
    for f in &families {
        it_series.push((
            format!("{NEWTON}, {}", f.family),
            published
                .iter()
                .filter_map(|p| newton(f, p.size).map(|s| (log2(p.size), s.iterations.avg)))
                .collect(),
        ));
        sec_series.push((
            format!("{NEWTON}, {}", f.family),
            published
                .iter()
                .filter_map(|p| newton(f, p.size).map(|s| (log2(p.size), s.seconds.avg)))
                .collect(),
        ));
    }
    // The main family's shadows, as many as the plot has distinct colours (the tables have
    // every driver).
    let shown_shadows = PLOT_SERIES.saturating_sub(sec_series.len());
    if let Some(main) = families.first() {
        for solver in main
            .solvers()
            .into_iter()
            .filter(|s| s != NEWTON)
            .take(shown_shadows)
        {
            sec_series.push((
                format!("{solver}, {}", main.family),
                published
                    .iter()
                    .filter_map(|p| {
                        main.get(&solver, p.size)
                            .map(|s| (log2(p.size), s.seconds.avg))
                    })
                    .collect(),
            ));
        }
    }
    line_plot(
        &out.join("iterations_vs_size.svg"),
        "Newton: average iterations per solve (4 PGS sweeps included)",
        "log2(size)",
        "iterations",
        &it_series,
        false,
    )?;
    line_plot(
        &out.join("seconds_vs_size.svg"),
        "Average seconds per solve",
        "log2(size)",
        "seconds",
        &sec_series,
        true,
    )?;
    let _ = writeln!(md, "## Plots\n");
    let _ = writeln!(
        md,
        "![average iterations per solve vs size](iterations_vs_size.svg)\n"
    );
    let _ = writeln!(
        md,
        "![average seconds per solve vs size: the paper, Newton on both families, the first shadow drivers \
         on the {} family](seconds_vs_size.svg)\n",
        names.first().copied().unwrap_or("main")
    );

    // Commentary written by people, kept beside the configs.
    if let Ok(findings) = std::fs::read_to_string(cfg_dir.join("findings.md")) {
        md += "\n";
        md += &findings;
    }
    std::fs::write(out.join("README.md"), md)?;
    Ok(())
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
            (n12.solver.as_str(), n12.size, n12.cases),
            ("newton", 12, 3)
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
        assert_eq!(n12.own_iterations_avg, 5.0);
        assert_eq!(n12.failures(), "stagnated 1");
        assert_eq!(n24.stopped("line_search_failed"), 1);
        assert_eq!(n24.ruler_converged, 0);
        assert_eq!(n24.iterations.max, 11.0);
    }

    #[test]
    fn published_numbers_parse_and_bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("erleben2008-pub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        std::fs::write(
            &good,
            format!(
                "# comment\n{}\n12,100,0,0,0.000006,0.000112,0.000389,0,5.14,9\n",
                PUBLISHED_HEADER.join(",")
            ),
        )
        .unwrap();
        let rows = read_published(&good).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].size, 12);
        assert_eq!(rows[0].converged, 100);
        assert_eq!(rows[0].iterations.avg, 5.14);
        assert_eq!(rows[0].seconds.max, 0.000389);
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, "size,converged\n12,x\n").unwrap();
        let e = read_published(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.csv") && e.contains("header"), "{e}");
        let e = generate(&dir).unwrap_err().to_string();
        assert!(e.contains("published.csv"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_root_without_run_data_is_missing_data() {
        let root = std::env::temp_dir().join(format!("erleben2008-root-{}", std::process::id()));
        let cfg = root.join("experiments/configs/erleben2008");
        std::fs::create_dir_all(&cfg).unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/erleben2008");
        for f in CONFIGS.iter().copied().chain(["published.csv"]) {
            std::fs::copy(shipped.join(f), cfg.join(f)).unwrap();
        }
        let e = generate(&root).unwrap_err();
        assert!(
            matches!(&e, ReportError::MissingData(p) if p.contains("tables_delassus.parquet")),
            "{e}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_shipped_published_file_has_the_papers_six_sizes() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/erleben2008/published.csv");
        let rows = read_published(&path).unwrap();
        let sizes: Vec<i64> = rows.iter().map(|r| r.size).collect();
        assert_eq!(sizes, [12, 24, 48, 96, 192, 384]);
        let last = &rows[5];
        assert_eq!(
            (last.converged, last.stagnated, last.backtracking_failed),
            (70, 0, 30)
        );
        assert_eq!(last.iterations.avg, 16.37);
        assert!(rows
            .iter()
            .all(|r| r.converged + r.stagnated + r.backtracking_failed == 100));
    }
}
