//! The Hwangbo, Lee and Hutter 2018 report (`reports/hwangbo2018/`): Table I (one slipping
//! contact, three methods, timed on samples recorded from the four tasks), Table II (seconds per
//! 100k steps per task, bisection-SOR against PGS), the iterations (Fig. 4), the bisection's model
//! against Coulomb's (Fig. 6), the penetration in the hang task (Fig. 7) and both drivers on the
//! shipped problem files.
//!
//! The report only reads runs (`data/runs/hwangbo2018/`, made by `contactlab run` on the configs
//! of `experiments/configs/hwangbo2018/`). The paper's numbers come from `table1_published.csv`,
//! `table2_published.csv` and `claims_published.csv` beside the configs; the solvers' labels
//! from the configs (found by their optimizer's name).
//!
//! The page's prose and layout are `experiments/configs/hwangbo2018/templates/report.md` and the
//! sections it includes ([`crate::template`]); this module computes its tables, plots and facts
//! (statistics: [`crate::analysis::hwangbo2018`]). Every fact, with its value, is listed in
//! `reports/hwangbo2018/facts.md`.

use contactlab_runs::RunConfig;
use polars::prelude::DataFrame;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use crate::analysis::hwangbo2018::{
    file_solves, method_timings, model_differences, task_rows, Dt50Cols, Dt50Task, FileSolve,
    MethodTiming, RandomCols, RandomStats, TaskRow, BLOW_UP_JOULES,
};
use crate::analysis::{f64s, quantile, strs};
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::{problems, single_contact, steps};
use contactlab_runs::single_contact::SingleContactConfig;
use contactlab_runs::{ExperimentConfig, RunMeta, SolverSpec};

/// The optimizers of the paper's two drivers: the solvers of a config that run them are the
/// bisection's and PGS's rows, whatever their labels.
const BISECTION_OPTIMIZER: &str = "bisection-sor";
const PGS_OPTIMIZER: &str = "pgs-hwangbo";

/// Two answers agree when their relative distance is below this: sec. VI's "the difference
/// remained below 1%" (Fig. 6).
const AGREE_WITHIN: f64 = 0.01;

/// The solver among `specs` that runs `optimizer` with the single-contact method `local`
/// (`None`: any; an unset `local` option is the bisection, `bisection-sor`'s default); the
/// error names `file`.
fn spec_of<'a>(
    specs: impl IntoIterator<Item = &'a SolverSpec>,
    optimizer: &str,
    local: Option<&str>,
    file: &str,
) -> Result<&'a SolverSpec, ReportError> {
    specs
        .into_iter()
        .find(|s| {
            let method = s
                .optimizer
                .option("local")
                .map_or(Some("bisection"), |l| l.as_str());
            s.optimizer.name == optimizer && local.is_none_or(|l| method == Some(l))
        })
        .ok_or_else(|| {
            ReportError::Published(format!(
                "{file}: no solver runs `{optimizer}`{}",
                local.map_or(String::new(), |l| format!(" with local = \"{l}\""))
            ))
        })
}

/// The two drivers' labels in `tasks.toml`.
struct Labels {
    bisection: String,
    pgs: String,
}

impl Labels {
    /// The labels of the bisection's and PGS's drivers of `tasks.toml`.
    fn of(config: &ExperimentConfig) -> Result<Labels, ReportError> {
        let drivers = config.driver_specs();
        let bisection = spec_of(
            drivers.iter().copied(),
            BISECTION_OPTIMIZER,
            Some("bisection"),
            "tasks.toml",
        )?;
        let pgs = spec_of(drivers.iter().copied(), PGS_OPTIMIZER, None, "tasks.toml")?;
        Ok(Labels {
            bisection: bisection.name(),
            pgs: pgs.name(),
        })
    }

    /// The fact key's part for a solver label: `bisection` or `pgs` (the label otherwise).
    fn key<'a>(&self, label: &'a str) -> &'a str {
        if label == self.bisection {
            "bisection"
        } else if label == self.pgs {
            "pgs"
        } else {
            label
        }
    }

    /// Both drivers: each label with its fact key.
    fn both(&self) -> [(&str, &'static str); 2] {
        [(&self.bisection, "bisection"), (&self.pgs, "pgs")]
    }
}

/// A tolerance as the configs write it (`1e-6`).
fn tol(x: f64) -> String {
    format!("{x:e}")
}

/// The format that writes the tolerance `x` as [`tol`] does.
fn tol_fmt(x: f64) -> Fmt {
    let text = tol(x);
    let mantissa = text.split_once('e').map_or(text.as_str(), |(m, _)| m);
    Fmt::sci(mantissa.split_once('.').map_or(0, |(_, d)| d.len()))
}

/// Sets fact `<prefix>.<name>` for each `(name, value, format)`.
fn put(r: &mut Report, prefix: &str, items: Vec<(&str, f64, Fmt)>) {
    let facts = r.facts();
    for (name, v, fmt) in items {
        facts.num(format!("{prefix}.{name}"), v, fmt);
    }
}

/// `100 x` a share, as a percent.
fn pct(x: f64) -> f64 {
    100.0 * x
}

/// One row of `table1_published.csv`.
struct PublishedMethod {
    method: String,
    microseconds: f64,
    machine: String,
}

/// The header of `table1_published.csv`.
const TABLE1_COLUMNS: [&str; 5] = [
    single_contact::METHOD,
    "paper_method",
    "microseconds",
    "machine",
    "source",
];
/// The header of `table2_published.csv`.
const TABLE2_COLUMNS: [&str; 5] = [
    "task",
    steps::SOLVER,
    "paper_solver",
    "seconds_per_100k",
    "source",
];

/// Table I as published.
fn table1_published(r: &Report) -> Result<Vec<PublishedMethod>, ReportError> {
    let path = r.config_file("table1_published.csv");
    read_csv_with_header(&path, &TABLE1_COLUMNS)?
        .into_iter()
        .map(|row| {
            Ok(PublishedMethod {
                microseconds: number(&path, &row, &TABLE1_COLUMNS, 2)?,
                method: row[0].clone(),
                machine: row[3].clone(),
            })
        })
        .collect()
}

/// One row of `table2_published.csv`.
struct PublishedTask {
    task: String,
    solver: String,
    seconds_per_100k: f64,
}

/// Table II as published.
fn table2_published(r: &Report) -> Result<Vec<PublishedTask>, ReportError> {
    let path = r.config_file("table2_published.csv");
    read_csv_with_header(&path, &TABLE2_COLUMNS)?
        .into_iter()
        .map(|row| {
            Ok(PublishedTask {
                seconds_per_100k: number(&path, &row, &TABLE2_COLUMNS, 3)?,
                task: row[0].clone(),
                solver: row[1].clone(),
            })
        })
        .collect()
}

/// The header of `claims_published.csv`.
const CLAIMS_COLUMNS: [&str; 4] = ["claim", "value", "unit", "source"];

/// The single numbers the paper's text states (`claims_published.csv`), each as a
/// `claims.<claim>_published` fact.
fn claims_published(r: &mut Report) -> Result<(), ReportError> {
    let path = r.config_file("claims_published.csv");
    let claims = read_csv_with_header(&path, &CLAIMS_COLUMNS)?
        .into_iter()
        .map(|row| Ok((row[0].clone(), number(&path, &row, &CLAIMS_COLUMNS, 1)?)))
        .collect::<Result<Vec<_>, ReportError>>()?;
    for (claim, value) in &claims {
        let fmt = if *value != 0.0 && value.abs() < 1e-3 {
            Fmt::sci(0)
        } else if value.fract() == 0.0 {
            Fmt::int()
        } else {
            Fmt::fixed(2)
        };
        r.facts()
            .num(format!("claims.{claim}_published"), *value, fmt);
    }
    Ok(())
}

/// Writes `reports/hwangbo2018/` from the runs of `table1.toml`, `tasks.toml`, `model.toml`
/// and `files.toml` and the published CSVs.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "hwangbo2018")?;
    let table1_paper = table1_published(&r)?;
    let table2_paper = table2_published(&r)?;
    let tasks = r.load("tasks.toml")?;
    let labels = Labels::of(&tasks.config)?;
    table1(&mut r, root, &table1_paper)?;
    let rows = task_rows(&tasks.steps)?;
    table2(&mut r, &rows, &table2_paper, &labels)?;
    fig4(&mut r, &rows)?;
    claims_published(&mut r)?;
    step_times(&mut r, &tasks.steps, &rows, &table2_paper)?;
    random_cost(&mut r, &tasks.steps, &rows, &labels)?;
    let params = &tasks.config.scene.params;
    trot(&mut r, &tasks.steps, params, &labels)?;
    dominance(&mut r, &tasks.steps, &labels)?;
    fig7(&mut r, &tasks.steps, &rows, params, &labels)?;
    dt50(&mut r)?;
    let model = r.load("model.toml")?;
    fig6(&mut r, &model.steps, &model.config)?;
    files(&mut r, root)?;
    r.finish()?;
    Ok(())
}

/// What Table I's text names besides its facts.
#[derive(serde::Serialize)]
struct Table1Setup {
    /// The driver advancing the tasks whose contacts are recorded.
    driver: String,
    /// The paper's machine.
    machine: String,
}

/// Table I: the single-contact methods on the slipping contacts of the four tasks, as the
/// `table1.toml` run timed and measured them, beside `table1_published.csv`.
fn table1(r: &mut Report, root: &Path, published: &[PublishedMethod]) -> Result<(), ReportError> {
    let cfg = SingleContactConfig::load(&r.config_file("table1.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let timings = method_timings(&df)?;
    let paper = |method: &str| {
        published
            .iter()
            .find(|p| p.method == method)
            .map_or(f64::NAN, |p| p.microseconds)
    };
    r.show(
        "table1_setup",
        Table1Setup {
            driver: cfg.driver.name(),
            machine: published
                .first()
                .map_or("not stated", |p| p.machine.as_str())
                .to_string(),
        },
    )?;
    r.facts().num("table1.tol", cfg.tol, tol_fmt(cfg.tol));
    let mut t = table1_columns();
    for m in &timings {
        let published = paper(&m.method);
        t.row(vec![
            C::code(m.method.clone()),
            C::same(published, &Fmt::fixed(2)),
            C::same(m.micros_median, &Fmt::fixed(3)),
            C::same(m.max_error, &Fmt::sci(1)),
            C::same(m.max_abs_error, &Fmt::sci(1)),
            C::same(m.mean_steps, &Fmt::fixed(1)),
            C::same(m.mean_bracket_steps, &Fmt::fixed(1)),
            C::same(m.share_bracket_two, &Fmt::fixed(3)),
            C::int(m.failures as i64),
        ])?;
        method_facts(r, m, published);
    }
    r.show_table("table1", &t)?;
    table1_ratios(r, &timings, &paper);
    Ok(())
}

/// Table I's columns.
fn table1_columns() -> Table {
    Table::new(Some("table1.csv"))
        .col(single_contact::METHOD, single_contact::METHOD)
        .col("us, paper", "microseconds_published")
        .col("us, here", "microseconds_reproduced")
        .col("largest error vs reference", "max_error_vs_reference")
        .col("largest absolute error (N s)", "max_abs_error_vs_reference")
        .col("mean inner steps", single_contact::MEAN_STEPS)
        .col(
            "of which finding the interval",
            single_contact::MEAN_BRACKET_STEPS,
        )
        .col(
            "share of intervals in two evaluations",
            single_contact::SHARE_BRACKET_TWO,
        )
        .col(single_contact::FAILURES, single_contact::FAILURES)
}

/// The facts of one method of Table I (`published`: the paper's microseconds).
fn method_facts(r: &mut Report, m: &MethodTiming, published: f64) {
    let prefix = format!("table1.{}", m.method);
    if m.mean_bracket_steps.is_finite() {
        put(
            r,
            &prefix,
            vec![
                ("bracket_steps", m.mean_bracket_steps, Fmt::fixed(1)),
                (
                    "search_steps",
                    m.mean_steps - m.mean_bracket_steps,
                    Fmt::fixed(1),
                ),
                ("bracket_two", pct(m.share_bracket_two), Fmt::percent(1)),
            ],
        );
    }
    put(
        r,
        &prefix,
        vec![
            ("us", m.micros_median, Fmt::fixed(2)),
            ("us_published", published, Fmt::fixed(2)),
            ("abs_error", m.max_abs_error, Fmt::sci(1)),
            ("error", m.max_error, Fmt::sci(1)),
            (single_contact::MEAN_STEPS, m.mean_steps, Fmt::fixed(1)),
        ],
    );
}

/// Table I's ratios of the methods' times to the bisection's, here and in the paper.
fn table1_ratios(r: &mut Report, timings: &[MethodTiming], paper: &dyn Fn(&str) -> f64) {
    let us = |name: &str| {
        timings
            .iter()
            .find(|m| m.method == name)
            .map_or(f64::NAN, |m| m.micros_median)
    };
    for (fact, method) in [
        ("golden_over_bisection", "golden_section"),
        ("analytical_over_bisection", "analytical"),
    ] {
        r.facts()
            .num(
                format!("table1.{fact}"),
                us(method) / us("bisection"),
                Fmt::fixed(2),
            )
            .num(
                format!("table1.{fact}_published"),
                paper(method) / paper("bisection"),
                Fmt::fixed(2),
            );
    }
    let samples = timings.first().map_or(0, |m| m.samples);
    r.facts()
        .num("table1.samples", samples as f64, Fmt::int())
        .num(
            "table1.golden_closed_over_bisection",
            us("golden_section_closed") / us("bisection"),
            Fmt::fixed(2),
        );
}

/// Table II: seconds per 100k steps per task and solver, in `table2_published.csv`'s order.
fn table2(
    r: &mut Report,
    rows: &[TaskRow],
    published: &[PublishedTask],
    labels: &Labels,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("table2.csv"))
        .col("task", "task")
        .col(steps::SOLVER, steps::SOLVER)
        .col("steps", "steps")
        .col("s per 100k, paper", "seconds_per_100k_published")
        .col("s per 100k, here", "seconds_per_100k_reproduced")
        .col("solver s per 100k", "solver_seconds_per_100k")
        .col("iterations (mean)", "iterations_mean")
        .col("iterations (max)", "iterations_max")
        .col("not converged", "unconverged_steps");
    for p in published {
        let (task, solver) = (p.task.as_str(), p.solver.as_str());
        let Some(row) = rows.iter().find(|x| x.task == task && x.solver == solver) else {
            continue;
        };
        t.row(vec![
            C::text(task),
            C::code(solver),
            C::int(row.steps as i64),
            C::same(p.seconds_per_100k, &Fmt::fixed(2)),
            C::same(row.seconds_per_100k, &Fmt::fixed(2)),
            C::same(row.solver_seconds_per_100k, &Fmt::fixed(2)),
            C::same(row.iterations_mean, &Fmt::fixed(1)),
            C::same(row.iterations_max, &Fmt::int()),
            C::int(row.unconverged as i64),
        ])?;
        let key = format!("table2.{task}.{}", labels.key(solver));
        put(
            r,
            &key,
            vec![
                ("s100k", row.seconds_per_100k, Fmt::fixed(2)),
                ("s100k_published", p.seconds_per_100k, Fmt::fixed(2)),
                ("iterations_mean", row.iterations_mean, Fmt::fixed(1)),
                ("iterations_max", row.iterations_max, Fmt::int()),
                ("unconverged", row.unconverged as f64, Fmt::int()),
            ],
        );
    }
    table2_ratios(r, rows, published, labels);
    r.show_table("table2", &t)
}

/// Table II's PGS-over-bisection ratio per task (here and in the paper) and the range of the
/// scene's share of a step.
fn table2_ratios(r: &mut Report, rows: &[TaskRow], published: &[PublishedTask], labels: &Labels) {
    let mut tasks: Vec<&str> = Vec::new();
    for p in published {
        if !tasks.contains(&p.task.as_str()) {
            tasks.push(&p.task);
        }
    }
    for task in tasks {
        let of = |solver: &str| {
            rows.iter()
                .find(|x| x.task == task && x.solver == solver)
                .map_or(f64::NAN, |x| x.seconds_per_100k)
        };
        let paper = |solver: &str| {
            published
                .iter()
                .find(|p| p.task == task && p.solver == solver)
                .map_or(f64::NAN, |p| p.seconds_per_100k)
        };
        r.facts()
            .num(
                format!("table2.{task}.pgs_over_bisection"),
                of(&labels.pgs) / of(&labels.bisection),
                Fmt::fixed(2),
            )
            .num(
                format!("table2.{task}.pgs_over_bisection_published"),
                paper(&labels.pgs) / paper(&labels.bisection),
                Fmt::fixed(2),
            );
    }
    let scene: Vec<f64> = rows
        .iter()
        .map(|x| x.seconds_per_100k - x.solver_seconds_per_100k)
        .collect();
    r.facts()
        .num(
            "table2.scene_s100k_min",
            scene.iter().copied().fold(f64::INFINITY, f64::min),
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            "table2.scene_s100k_max",
            scene.iter().copied().fold(0.0, f64::max),
            Fmt::fixed(1).unit(" s"),
        );
}

/// The share of `values` at least each of `xs`, as a series (a complementary distribution).
fn at_least(values: &[f64], xs: &[f64]) -> Vec<(f64, f64)> {
    let n = values.len().max(1) as f64;
    xs.iter()
        .map(|&x| (x, values.iter().filter(|&&v| v >= x).count() as f64 / n))
        .filter(|p| p.1 > 0.0)
        .collect()
}

/// Powers of two from 1 to the first at least `max`.
fn powers_of_two(max: f64) -> Vec<f64> {
    let mut out = vec![1.0];
    while *out.last().unwrap_or(&1.0) < max {
        out.push(2.0 * out.last().unwrap_or(&1.0));
    }
    out
}

/// Fig. 4: the iterations per step, as the share of steps needing at least `k` sweeps.
fn fig4(r: &mut Report, rows: &[TaskRow]) -> Result<(), ReportError> {
    let max = rows.iter().map(|x| x.iterations_max).fold(1.0, f64::max);
    let xs = powers_of_two(max);
    let series: Vec<Series> = rows
        .iter()
        .map(|x| {
            (
                format!("{}, {}", x.task, x.solver),
                at_least(&x.iterations, &xs),
            )
        })
        .collect();
    r.show_plot(
        steps::ITERATIONS,
        &Chart::new(
            "Sweeps per step (Fig. 4)",
            Axis::log("sweeps k").ticks(xs.clone()),
            Axis::log("share of steps"),
        ),
        &series,
    )
}

/// Per (task, solver) of the tasks run: the whole step's and the solver's time per step, mean
/// and median, beside the paper's Table II in microseconds per step.
fn step_times(
    r: &mut Report,
    df: &DataFrame,
    rows: &[TaskRow],
    published: &[PublishedTask],
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, steps::SOLVER)?;
    let secs = f64s(df, steps::SECONDS)?;
    let scene = f64s(df, steps::SCENE_SECONDS)?;
    let mut t = Table::new(Some("step_times.csv"))
        .col("task", "task")
        .col(steps::SOLVER, steps::SOLVER)
        .col("us per step, paper (Table II)", "us_per_step_published")
        .col("us per step, mean", "us_per_step_mean")
        .col("us per step, median", "us_per_step_median")
        .col("solver us per step, mean", "solver_us_per_step_mean")
        .col("solver us per step, median", "solver_us_per_step_median");
    let mut best: f64 = f64::INFINITY;
    for row in rows {
        let ks: Vec<usize> = (0..df.height())
            .filter(|&k| task[k] == row.task && solver[k] == row.solver)
            .collect();
        let whole: Vec<f64> = ks.iter().map(|&k| 1e6 * (secs[k] + scene[k])).collect();
        let solve: Vec<f64> = ks.iter().map(|&k| 1e6 * secs[k]).collect();
        let paper = published
            .iter()
            .find(|p| p.task == row.task && p.solver == row.solver)
            .map_or(f64::NAN, |p| 10.0 * p.seconds_per_100k);
        let mean = 10.0 * row.seconds_per_100k;
        let median = quantile(&whole, 0.5);
        t.row(vec![
            C::text(row.task.clone()),
            C::code(row.solver.clone()),
            C::same(paper, &Fmt::fixed(1)),
            C::same(mean, &Fmt::fixed(1)),
            C::same(median, &Fmt::fixed(1)),
            C::same(10.0 * row.solver_seconds_per_100k, &Fmt::fixed(1)),
            C::same(quantile(&solve, 0.5), &Fmt::fixed(1)),
        ])?;
        let us = Fmt::fixed(1).unit(" us");
        put(
            r,
            &format!("step_us.{}.{}", row.task, row.solver),
            vec![
                ("mean", mean, us.clone()),
                ("median", median, us.clone()),
                (
                    "solver_mean",
                    10.0 * row.solver_seconds_per_100k,
                    us.clone(),
                ),
                ("published", paper, us),
            ],
        );
        best = best.min(median);
    }
    r.facts()
        .num("step_us.best_median", best, Fmt::fixed(1).unit(" us"));
    r.show_table("step_times", &t)
}

impl RandomStats {
    /// The row of the random-cost table, for `config` and `solver`.
    fn cells(&self, config: &str, solver: &str) -> Vec<C> {
        vec![
            C::code(config),
            C::code(solver),
            C::int(self.steps as i64),
            C::int(self.torso_steps as i64),
            C::same(self.sweeps_torso, &Fmt::fixed(1)),
            C::same(self.sweeps_feet, &Fmt::fixed(1)),
            C::same(self.share_torso, &Fmt::fixed(3)),
            C::int(self.capped as i64),
            C::same(self.share_capped, &Fmt::fixed(3)),
            C::same(self.s100k, &Fmt::fixed(2)),
            C::same(self.solver_s100k, &Fmt::fixed(2)),
            C::same(self.s100k_uncapped, &Fmt::fixed(2)),
            C::same(self.solver_s100k_uncapped, &Fmt::fixed(2)),
        ]
    }

    /// Its facts, under `prefix` (`random.pgs`).
    fn facts(&self, r: &mut Report, prefix: &str) {
        let m = Fmt::fixed(2).unit(" m");
        put(
            r,
            prefix,
            vec![
                ("dominance_capped", self.dominance_capped, Fmt::fixed(3)),
                ("dominance_all", self.dominance_all, Fmt::fixed(3)),
                ("contacts_capped", self.contacts_capped, Fmt::int()),
                ("slipping_capped", self.slipping_capped, Fmt::int()),
                ("height_capped", self.height_capped, m.clone()),
                ("height_all", self.height_all, m),
                ("steps", self.steps as f64, Fmt::int()),
                ("torso_steps", self.torso_steps as f64, Fmt::int()),
                ("sweeps_torso", self.sweeps_torso, Fmt::fixed(1)),
                ("sweeps_feet", self.sweeps_feet, Fmt::fixed(1)),
                ("share_torso", pct(self.share_torso), Fmt::percent(0)),
                ("capped", self.capped as f64, Fmt::int()),
                ("share_capped", pct(self.share_capped), Fmt::percent(0)),
                ("s100k", self.s100k, Fmt::fixed(2)),
                ("solver_s100k", self.solver_s100k, Fmt::fixed(2)),
                ("s100k_uncapped", self.s100k_uncapped, Fmt::fixed(2)),
                (
                    "solver_s100k_uncapped",
                    self.solver_s100k_uncapped,
                    Fmt::fixed(2),
                ),
            ],
        );
    }
}

/// The random-cost table's columns.
fn random_cost_columns() -> Table {
    Table::new(Some("random_cost.csv"))
        .col("run", "config")
        .col(steps::SOLVER, steps::SOLVER)
        .col("steps with contacts", "steps_with_contacts")
        .col("of which with the torso", "steps_with_torso")
        .col("sweeps off cap (mean), torso", "iterations_mean_torso")
        .col("sweeps off cap (mean), feet only", "iterations_mean_feet")
        .col("solver time share on torso steps", "solver_share_torso")
        .col("steps at the cap", "steps_at_cap")
        .col("solver time share at the cap", "solver_share_cap")
        .col("s per 100k", "seconds_per_100k")
        .col("solver s per 100k", "solver_seconds_per_100k")
        .col("s per 100k, uncapped", "seconds_per_100k_uncapped")
        .col(
            "solver s per 100k, uncapped",
            "solver_seconds_per_100k_uncapped",
        )
}

/// Where PGS's time goes on the random task: the steps with a torso corner on the ground
/// against the rest, the steps at the sweep cap, and the same task with feet-only contacts
/// (`random_feet.toml`) and with PGS shadowing the bisection (`random_shadow.toml`).
fn random_cost(
    r: &mut Report,
    df: &DataFrame,
    rows: &[TaskRow],
    labels: &Labels,
) -> Result<(), ReportError> {
    let mut t = random_cost_columns();
    let feet = r.load("random_feet.toml")?;
    let feet_rows = task_rows(&feet.steps)?;
    let shadow = r.load("random_shadow.toml")?;
    let shadow_rows = task_rows(&shadow.steps)?;
    let frames = [
        ("tasks.toml", df, rows, "random"),
        (
            "random_feet.toml",
            &feet.steps,
            feet_rows.as_slice(),
            "random_feet",
        ),
        (
            "random_shadow.toml",
            &shadow.steps,
            shadow_rows.as_slice(),
            "random_shadow",
        ),
    ];
    for (config, frame, frame_rows, key) in frames {
        let cols = RandomCols::of(frame)?;
        let [bisection, pgs] = labels.both().map(|(s, sk)| {
            let row = frame_rows
                .iter()
                .find(|x| x.task == "random" && x.solver == s);
            let stats = RandomStats::of(&cols, s, row, key == "random_shadow");
            (s, sk, stats)
        });
        for (s, sk, stats) in [&bisection, &pgs] {
            t.row(stats.cells(config, s))?;
            stats.facts(r, &format!("{key}.{sk}"));
        }
        random_savings(r, key, &bisection.2, &pgs.2);
    }
    r.show_table("random_cost", &t)
}

/// The bisection's saving on the random task of run `key`, whole step and solver alone, with
/// and without the capped steps.
fn random_savings(r: &mut Report, key: &str, b: &RandomStats, p: &RandomStats) {
    put(
        r,
        key,
        vec![
            ("saving", pct(1.0 - b.s100k / p.s100k), Fmt::percent(0)),
            (
                "solver_ratio",
                p.solver_s100k / b.solver_s100k,
                Fmt::fixed(1),
            ),
            (
                "saving_uncapped",
                pct(1.0 - b.s100k_uncapped / p.s100k_uncapped),
                Fmt::percent(0),
            ),
            (
                "solver_ratio_uncapped",
                p.solver_s100k_uncapped / b.solver_s100k_uncapped,
                Fmt::fixed(1),
            ),
        ],
    );
}

/// When the trot's steady window starts (s): the command has ramped up by 2.5 s.
const STEADY_FROM: f64 = 4.0;

/// A scene parameter of `params` (`default` when unset).
fn param(params: &toml::Table, name: &str, default: f64) -> f64 {
    params
        .get(name)
        .and_then(toml::Value::as_float)
        .unwrap_or(default)
}

/// The trot of the tasks run: its speed over the steady window (from `STEADY_FROM` seconds to
/// the end), whether it stayed up, the feet in contact and the largest joint torque.
fn trot(
    r: &mut Report,
    df: &DataFrame,
    params: &toml::Table,
    labels: &Labels,
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, steps::SOLVER)?;
    let step = f64s(df, steps::STEP)?;
    let x = f64s(df, "base_x")?;
    let z = f64s(df, "base_height")?;
    let nc = f64s(df, "active_contacts")?;
    let torque = f64s(df, "max_joint_torque")?;
    let status = strs(df, steps::STATUS)?;
    let dt = param(params, "dt", 1e-3);
    let mut t = Table::new(Some("trot.csv"))
        .col(steps::SOLVER, steps::SOLVER)
        .col("steady window (s)", "window_seconds")
        .col("mean forward speed (m/s)", "steady_speed")
        .col("lowest base height (m)", "min_base_height")
        .col("most contacts in a step", "max_contacts")
        .col("largest joint torque (N m)", "max_joint_torque")
        .col("diverged steps", "diverged");
    for (s, key) in labels.both() {
        let ks: Vec<usize> = (0..df.height())
            .filter(|&k| task[k] == "trot" && solver[k] == s)
            .collect();
        let time = |k: usize| (step[k] + 1.0) * dt;
        let first = ks
            .iter()
            .copied()
            .find(|&k| time(k) >= STEADY_FROM - 0.5 * dt);
        let (window, speed) = match (first, ks.last().copied()) {
            (Some(a), Some(b)) if b > a => (time(b) - time(a), (x[b] - x[a]) / (time(b) - time(a))),
            _ => (f64::NAN, f64::NAN),
        };
        let min_z = ks.iter().map(|&k| z[k]).fold(f64::INFINITY, f64::min);
        let max_nc = ks.iter().map(|&k| nc[k]).fold(0.0, f64::max);
        let max_tau = ks.iter().map(|&k| torque[k]).fold(0.0, f64::max);
        let diverged = ks.iter().filter(|&&k| status[k] == "diverged").count();
        t.row(vec![
            C::code(s),
            C::same(window, &Fmt::fixed(1)),
            C::same(speed, &Fmt::fixed(2)),
            C::same(min_z, &Fmt::fixed(3)),
            C::int(max_nc as i64),
            C::same(max_tau, &Fmt::fixed(1)),
            C::int(diverged as i64),
        ])?;
        put(
            r,
            &format!("trot.{key}"),
            vec![
                ("speed", speed, Fmt::fixed(2).unit(" m/s")),
                ("window", window, Fmt::fixed(1).unit(" s")),
                ("min_height", min_z, Fmt::fixed(2).unit(" m")),
                ("max_contacts", max_nc, Fmt::int()),
                ("max_torque", max_tau, Fmt::fixed(1).unit(" N m")),
                ("diverged", diverged as f64, Fmt::int()),
            ],
        );
    }
    r.facts()
        .num(
            "trot.torque_limit",
            param(params, "torque_limit", 40.0),
            Fmt::int().unit(" N m"),
        )
        .num("trot.steady_from", STEADY_FROM, Fmt::fixed(0).unit(" s"));
    r.show_table("trot", &t)
}

/// The diagonal dominance of the feet's Delassus matrix per task (the paper's reason for PGS's
/// win on the trot, sec. VI), from the scene's observables on the bisection's rows.
fn dominance(r: &mut Report, df: &DataFrame, labels: &Labels) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, steps::SOLVER)?;
    let nc = f64s(df, steps::N_C)?;
    let row_dom = f64s(df, "delassus_row_dominance")?;
    let block_dom = f64s(df, "delassus_block_dominance")?;
    let mut t = Table::new(Some("dominance.csv"))
        .col("task", "task")
        .col("steps with contacts", "steps")
        .col("scalar dominance, median", "row_dominance_median")
        .col("share of steps scalar-dominant", "row_dominant_share")
        .col("steps with 2+ contacts", "steps_two_contacts")
        .col("block dominance, median", "block_dominance_median")
        .col("share of steps block-dominant", "block_dominant_share");
    for name in ["trot", "hang", "drop", "random"] {
        let ks: Vec<usize> = (0..df.height())
            .filter(|&k| task[k] == name && solver[k] == labels.bisection && nc[k] > 0.0)
            .collect();
        let rows: Vec<f64> = ks.iter().map(|&k| row_dom[k]).collect();
        let blocks: Vec<f64> = ks
            .iter()
            .filter(|&&k| nc[k] >= 2.0)
            .map(|&k| block_dom[k])
            .collect();
        let share =
            |v: &[f64]| v.iter().filter(|&&d| d >= 1.0).count() as f64 / v.len().max(1) as f64;
        t.row(vec![
            C::text(name),
            C::int(rows.len() as i64),
            C::same(quantile(&rows, 0.5), &Fmt::fixed(3)),
            C::same(share(&rows), &Fmt::fixed(3)),
            C::int(blocks.len() as i64),
            C::same(quantile(&blocks, 0.5), &Fmt::fixed(2)),
            C::same(share(&blocks), &Fmt::fixed(3)),
        ])?;
        put(
            r,
            &format!("dominance.{name}"),
            vec![
                ("row_median", quantile(&rows, 0.5), Fmt::fixed(3)),
                ("row_share", pct(share(&rows)), Fmt::percent(1)),
                ("block_median", quantile(&blocks, 0.5), Fmt::fixed(2)),
                ("block_share", pct(share(&blocks)), Fmt::percent(1)),
            ],
        );
    }
    r.show_table("dominance", &t)
}

/// The hang rows of `df` for `solver`: (time, mean foot penetration in mm) every 20th step,
/// and every step's penetration (mm).
fn hang_penetration(
    df: &DataFrame,
    solver: &str,
    dt: f64,
) -> Result<(Series1, Vec<f64>), ReportError> {
    let task = strs(df, "task")?;
    let solvers = strs(df, steps::SOLVER)?;
    let step = f64s(df, steps::STEP)?;
    let pen = f64s(df, "foot_penetration")?;
    let rows: Vec<usize> = (0..df.height())
        .filter(|&k| task[k] == "hang" && solvers[k] == solver)
        .collect();
    let pts = rows
        .iter()
        .filter(|&&k| (step[k] as usize).is_multiple_of(20))
        .map(|&k| ((step[k] + 1.0) * dt, 1e3 * pen[k]))
        .collect();
    Ok((pts, rows.iter().map(|&k| 1e3 * pen[k]).collect()))
}

/// One line of a chart: its `(x, y)` points.
type Series1 = Vec<(f64, f64)>;

/// `solver`'s row of the hang task among a run's [`task_rows`].
fn hang_row<'a>(rows: &'a [TaskRow], solver: &str) -> Option<&'a TaskRow> {
    rows.iter().find(|x| x.task == "hang" && x.solver == solver)
}

/// One run of Fig. 7: a solver of a run's frame.
struct HangRun<'a> {
    frame: &'a DataFrame,
    rows: &'a [TaskRow],
    /// The solver's label.
    label: String,
    /// Its facts' key: `bisection`, `pgs`, `pgs_tight`.
    key: &'static str,
    /// The run's config file.
    config: &'static str,
    /// The tolerance, as the table writes it.
    tol: String,
}

/// Fig. 7: the feet's mean penetration over time in the hang task, both drivers at the tasks'
/// tolerance and PGS at the paper's tighter one (`hang_tight.toml`), with each one's solver time.
fn fig7(
    r: &mut Report,
    df: &DataFrame,
    rows: &[TaskRow],
    params: &toml::Table,
    labels: &Labels,
) -> Result<(), ReportError> {
    let dt = param(params, "dt", 1e-3);
    let tight = r.load("hang_tight.toml")?;
    let spec = spec_of(
        tight.config.driver_specs(),
        PGS_OPTIMIZER,
        None,
        "hang_tight.toml",
    )?;
    let tight_rows = task_rows(&tight.steps)?;
    let mut runs: Vec<HangRun<'_>> = labels
        .both()
        .map(|(label, key)| HangRun {
            frame: df,
            rows,
            label: label.to_string(),
            key,
            config: "tasks.toml",
            tol: String::from("as Table II"),
        })
        .into();
    runs.push(HangRun {
        frame: &tight.steps,
        rows: &tight_rows,
        label: spec.name(),
        key: "pgs_tight",
        config: "hang_tight.toml",
        tol: tol(spec.tol),
    });
    let mut t = Table::new(Some("hang_penetration.csv"))
        .col(steps::SOLVER, steps::SOLVER)
        .col("run", "config")
        .col("tolerance", "tol")
        .col("mean final foot penetration (mm)", "penetration_mm_end")
        .col("largest (mm)", "penetration_mm_max")
        .col("solver s per 100k", "solver_seconds_per_100k");
    let mut series = Vec::new();
    for run in &runs {
        series.push(hang_run(r, &mut t, run, dt)?);
    }
    let tight_row = hang_row(&tight_rows, &spec.name());
    hang_facts(r, hang_row(rows, &labels.pgs), tight_row, spec.tol);
    r.show_plot(
        "hang_penetration",
        &Chart::new(
            "Hang: feet's mean penetration (Fig. 7)",
            Axis::linear("time (s)"),
            Axis::linear("penetration (mm)"),
        )
        .lines_only(),
        &series,
    )?;
    r.show_table("hang_penetration", &t)
}

/// One run's row of Fig. 7's table and its facts; its line of the plot.
fn hang_run(r: &mut Report, t: &mut Table, run: &HangRun, dt: f64) -> Result<Series, ReportError> {
    let (pts, all) = hang_penetration(run.frame, &run.label, dt)?;
    let end = all.last().copied().unwrap_or(f64::NAN);
    let max = all.iter().copied().fold(f64::NAN, f64::max);
    let solver_s = hang_row(run.rows, &run.label).map_or(f64::NAN, |x| x.solver_seconds_per_100k);
    let mm = Fmt::fixed(1).unit(" mm");
    put(
        r,
        &format!("hang.{}", run.key),
        vec![
            ("penetration_mm_end", end, mm.clone()),
            ("penetration_mm_max", max, mm),
            ("solver_s100k", solver_s, Fmt::fixed(2).unit(" s")),
        ],
    );
    t.row(vec![
        C::code(run.label.clone()),
        C::code(run.config),
        C::text(run.tol.clone()),
        C::same(end, &Fmt::fixed(1)),
        C::same(max, &Fmt::fixed(1)),
        C::same(solver_s, &Fmt::fixed(2)),
    ])?;
    Ok((run.label.clone(), pts))
}

/// PGS at the paper's tighter tolerance `tight_tol` (row `tight`) against PGS at the tasks'
/// (row `pgs`) in the hang task: solver time, sweeps, unconverged steps.
fn hang_facts(r: &mut Report, pgs: Option<&TaskRow>, tight: Option<&TaskRow>, tight_tol: f64) {
    let of = |row: Option<&TaskRow>, f: fn(&TaskRow) -> f64| row.map_or(f64::NAN, f);
    let pgs_s = of(pgs, |x| x.solver_seconds_per_100k);
    let tight_s = of(tight, |x| x.solver_seconds_per_100k);
    // Sweeps are what the time follows, and unlike the time they do not move with the load.
    let pgs_sweeps = of(pgs, |x| x.iterations_mean);
    let tight_sweeps = of(tight, |x| x.iterations_mean);
    r.facts()
        .num("hang.pgs.sweeps_mean", pgs_sweeps, Fmt::fixed(1))
        .num("hang.pgs_tight.tol", tight_tol, Fmt::sci(0));
    put(
        r,
        "hang.pgs_tight",
        vec![
            ("time_increase", pct(tight_s / pgs_s - 1.0), Fmt::percent(0)),
            ("sweeps_mean", tight_sweeps, Fmt::fixed(1)),
            (
                "sweep_increase",
                pct(tight_sweeps / pgs_sweeps - 1.0),
                Fmt::percent(0),
            ),
            (
                "unconverged",
                of(tight, |x| x.unconverged as f64),
                Fmt::int(),
            ),
        ],
    );
}

impl Dt50Task {
    /// Its row of the 50 Hz table.
    fn cells(&self, name: &str) -> Vec<C> {
        vec![
            C::text(name),
            C::int(self.steps as i64),
            C::same(self.diverged_at, &Fmt::fixed(2)),
            C::same(self.contacts_before, &Fmt::int()),
            C::same(self.max_pen, &Fmt::fixed(1)),
            C::same(self.max_foot, &Fmt::fixed(1)),
            C::same(self.min_z, &Fmt::fixed(2)),
            C::same(self.max_ke, &Fmt::fixed(1)),
            C::same(self.speed, &Fmt::fixed(2)),
        ]
    }

    /// Its facts, `dt50.<name>.*`.
    fn facts(&self, r: &mut Report, name: &str) {
        put(
            r,
            &format!("dt50.{name}"),
            vec![
                ("max_pen_mm", self.max_pen, Fmt::fixed(1).unit(" mm")),
                ("foot_pen_mm", self.max_foot, Fmt::fixed(1).unit(" mm")),
                ("min_height", self.min_z, Fmt::fixed(2).unit(" m")),
                ("speed", self.speed, Fmt::fixed(2).unit(" m/s")),
                ("steps", self.steps as f64, Fmt::int()),
                ("diverged_at", self.diverged_at, Fmt::fixed(2).unit(" s")),
                ("contacts_before", self.contacts_before, Fmt::int()),
            ],
        );
    }
}

/// The 50 Hz table's columns.
fn dt50_columns() -> Table {
    Table::new(Some("dt50hz.csv"))
        .col("task", "task")
        .col("steps", "steps")
        .col("diverged at (s)", "diverged_at")
        .col(
            "most contacts before blow-up (1e4 J)",
            "contacts_before_blow_up",
        )
        .col("deepest penetration (mm)", "max_penetration_mm")
        .col(
            "mean foot penetration, largest (mm)",
            "foot_penetration_mm_max",
        )
        .col("lowest base height (m)", "min_base_height")
        .col("largest kinetic energy (J)", "max_kinetic_energy")
        .col("mean forward speed (m/s)", "mean_speed")
}

/// The four tasks at the paper's 50 Hz (`dt50hz.toml`): steps run, diverged steps, non-finite
/// observables, the deepest penetration and the feet's.
fn dt50(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("dt50hz.toml")?;
    let cols = Dt50Cols::of(&run.steps)?;
    let dt = param(&run.config.scene.params, "dt", f64::NAN);
    let mut t = dt50_columns();
    let (mut diverged, mut non_finite, mut unactuated_bad) = (0usize, 0usize, 0usize);
    for name in ["hang", "drop", "random", "trot"] {
        let task = Dt50Task::of(&cols, name, dt);
        diverged += task.diverged;
        non_finite += task.non_finite;
        if ["hang", "drop"].contains(&name) {
            unactuated_bad += task.diverged + task.non_finite;
        }
        t.row(task.cells(name))?;
        task.facts(r, name);
    }
    put(
        r,
        "dt50",
        vec![
            ("diverged", diverged as f64, Fmt::int()),
            ("non_finite", non_finite as f64, Fmt::int()),
            ("unactuated_bad", unactuated_bad as f64, Fmt::int()),
            ("blow_up_joules", BLOW_UP_JOULES, Fmt::sci(0).unit(" J")),
        ],
    );
    r.show_table("dt50hz", &t)
}

/// The share of `v` below `below`.
fn share_below(v: &[f64], below: f64) -> f64 {
    v.iter().filter(|&&x| x < below).count() as f64 / v.len().max(1) as f64
}

/// Fig. 6's table's columns.
fn model_columns() -> Table {
    Table::new(Some("model.csv"))
        .col("task", "task")
        .col("steps with contacts", "steps")
        .col("median distance", "distance_median")
        .col("95th percentile", "distance_p95")
        .col("share under 1%", "share_under_1pct")
        .col("median velocity gap (m/s)", "velocity_gap_median")
        .col(
            "share with velocities within 1e-4 m/s",
            "share_velocity_within_1e-4",
        )
        .col("share of steps with slipping contact", "share_slipping")
        .col("share under 1%, no slip", "share_under_1pct_no_slip")
}

/// Fig. 6: the relative distance between the bisection's and PGS's impulses on the same steps,
/// and the checks that say what it is made of.
fn fig6(r: &mut Report, df: &DataFrame, cfg: &ExperimentConfig) -> Result<(), ReportError> {
    let pgs = spec_of(&cfg.shadow, PGS_OPTIMIZER, None, "model.toml")?;
    r.facts().num("model.pgs_tol", pgs.tol, tol_fmt(pgs.tol));
    let mut t = model_columns();
    let (mut all, mut all_no_slip) = (Vec::new(), Vec::new());
    let xs: Vec<f64> = (0..=12).map(|k| 10f64.powi(k - 10)).collect();
    let mut series = Vec::new();
    for m in &model_differences(df, &pgs.name())? {
        let (task, d) = (&m.task, &m.distances);
        let no_slip: Vec<f64> = d
            .iter()
            .zip(&m.slipping)
            .filter(|(_, &s)| !s)
            .map(|(&x, _)| x)
            .collect();
        let slipping = m.slipping.iter().filter(|&&s| s).count() as f64 / d.len().max(1) as f64;
        let under = share_below(d, AGREE_WITHIN);
        let under_no_slip = share_below(&no_slip, AGREE_WITHIN);
        let close = share_below(&m.velocity_gaps, 1e-4);
        t.row(vec![
            C::text(task.clone()),
            C::int(d.len() as i64),
            C::same(quantile(d, 0.5), &Fmt::sci(1)),
            C::same(quantile(d, 0.95), &Fmt::sci(1)),
            C::same(under, &Fmt::fixed(3)),
            C::same(quantile(&m.velocity_gaps, 0.5), &Fmt::sci(1)),
            C::same(close, &Fmt::fixed(3)),
            C::same(slipping, &Fmt::fixed(3)),
            C::same(under_no_slip, &Fmt::fixed(3)),
        ])?;
        put(
            r,
            &format!("model.{task}"),
            vec![
                ("within_1pct", pct(under), Fmt::percent(1)),
                ("velocity_close", pct(close), Fmt::percent(1)),
                ("slipping", pct(slipping), Fmt::percent(1)),
                ("no_slip_within_1pct", pct(under_no_slip), Fmt::percent(1)),
                ("median", quantile(d, 0.5), Fmt::sci(1)),
            ],
        );
        series.push((task.clone(), at_least(d, &xs)));
        all.extend_from_slice(d);
        all_no_slip.extend(no_slip);
    }
    r.show_table(steps::MODEL, &t)?;
    model_facts(r, &all, &all_no_slip);
    r.show_plot(
        "model_difference",
        &Chart::new(
            "Distance between the models (Fig. 6)",
            Axis::log("relative distance d"),
            Axis::log("share of steps"),
        ),
        &series,
    )?;
    model_checks(r, df, cfg)
}

/// Fig. 6's facts over all tasks: `all` distances, `no_slip` those of steps without a slipping
/// contact.
fn model_facts(r: &mut Report, all: &[f64], no_slip: &[f64]) {
    r.facts()
        .num(
            "model.within_1pct",
            pct(share_below(all, AGREE_WITHIN)),
            Fmt::percent(1),
        )
        .num(
            "model.no_slip.within_1pct",
            pct(share_below(no_slip, AGREE_WITHIN)),
            Fmt::percent(1),
        )
        .num("model.no_slip.steps", no_slip.len() as f64, Fmt::int())
        .num("model.median", quantile(all, 0.5), Fmt::sci(1))
        .num("model.threshold", pct(AGREE_WITHIN), Fmt::percent(0));
}

/// The two shadows of `model.toml` that tell the models apart from the solvers, by label.
#[derive(serde::Serialize)]
struct ModelShadows {
    /// The bisection's sweep with an exact per-contact Coulomb solve.
    coulomb: String,
    /// The driver's method and law at a tighter tolerance.
    tight: String,
}

/// What Fig. 6's distance is made of: every shadow of `model.toml` against the driver, so the
/// models' difference is told apart from the solvers' accuracy.
fn model_checks(r: &mut Report, df: &DataFrame, cfg: &ExperimentConfig) -> Result<(), ReportError> {
    let shadow = |local| spec_of(&cfg.shadow, BISECTION_OPTIMIZER, Some(local), "model.toml");
    let (coulomb, tight) = (shadow("coulomb")?, shadow("bisection")?);
    r.facts()
        .num("model.coulomb_tol", coulomb.tol, tol_fmt(coulomb.tol))
        .num("model.tight_tol", tight.tol, tol_fmt(tight.tol));
    r.show(
        "model_shadows",
        ModelShadows {
            coulomb: coulomb.name(),
            tight: tight.name(),
        },
    )?;
    let mut t = Table::new(Some("model_checks.csv"))
        .col("task", "task")
        .col(steps::ROLE_SHADOW, steps::ROLE_SHADOW)
        .col("median distance", "distance_median")
        .col("share under 1%", "share_under_1pct")
        .col("median velocity gap (m/s)", "velocity_gap_median");
    for shadow in cfg.shadow.iter().map(SolverSpec::name) {
        let mut all = Vec::new();
        for m in &model_differences(df, &shadow)? {
            let median = quantile(&m.distances, 0.5);
            t.row(vec![
                C::text(m.task.clone()),
                C::code(shadow.as_str()),
                C::same(median, &Fmt::sci(1)),
                C::same(share_below(&m.distances, AGREE_WITHIN), &Fmt::fixed(3)),
                C::same(quantile(&m.velocity_gaps, 0.5), &Fmt::sci(1)),
            ])?;
            let name = format!("model.{shadow}.{}.median", m.task);
            r.facts().num(name, median, Fmt::sci(1));
            all.extend_from_slice(&m.distances);
        }
        if !all.is_empty() {
            r.facts().num(
                format!("model.{shadow}.within_1pct"),
                pct(share_below(&all, AGREE_WITHIN)),
                Fmt::percent(1),
            );
        }
    }
    r.show_table("model_checks", &t)
}

/// The files a problems run left out (no contact-space form), as its meta at `data` lists them.
fn left_out(data: &Path) -> Vec<String> {
    RunMeta::of_run(data).left_out.unwrap_or_default()
}

/// Both drivers on the shipped problem files, as the `files.toml` run solved them: each
/// model's own violation beside the Coulomb ruler's residual (the bisection solves eq. 8, which
/// the ruler does not measure).
fn files(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let cfg = ProblemsConfig::load(&r.config_file("files.toml"))?;
    let data = cfg.data_path(root);
    let (df, _) = r.load_data(&cfg.name, &data)?;
    let rows = file_solves(&df)?;
    let solver = |optimizer, local| spec_of(&cfg.solvers, optimizer, local, "files.toml");
    let bisection = solver(BISECTION_OPTIMIZER, Some("bisection"))?.name();
    let pgs = solver(PGS_OPTIMIZER, None)?.name();
    let left_out = left_out(&data);
    let mut tols: Vec<f64> = cfg.solvers.iter().map(|s| s.tol).collect();
    tols.dedup_by(|a, b| tol(*a) == tol(*b));
    let fmt = tols.first().map_or(Fmt::sci(0), |&x| tol_fmt(x));
    r.facts().list("files.tol", tols, fmt);
    r.show("files_left_out", &left_out)?;
    let count = |solver: &str| rows.iter().filter(|x| x.solver == solver).count() as f64;
    let converged = |solver: &str| {
        rows.iter()
            .filter(|x| x.solver == solver && x.own_status == "converged")
            .count() as f64
    };
    r.facts()
        .num("files.problems", count(&bisection), Fmt::int())
        .num("files.left_out", left_out.len() as f64, Fmt::int())
        .num(
            "files.bisection_converged",
            converged(&bisection),
            Fmt::int(),
        )
        .num("files.pgs_converged", converged(&pgs), Fmt::int());
    r.show_table("files", &files_table(&rows)?)
}

/// The problem files' table: one row per file and solver.
fn files_table(rows: &[FileSolve]) -> Result<Table, ReportError> {
    let mut t = Table::new(Some("files.csv"))
        .col("file", "file")
        .col("contacts", "contacts")
        .col(problems::SOLVER, problems::SOLVER)
        .col("own status", "own_status")
        .col("sweeps", problems::ITERATIONS)
        .col("own violation", problems::OWN_VIOLATION)
        .col("Coulomb residual", "coulomb_residual");
    for x in rows {
        t.row(vec![
            C::code(x.file.clone()),
            C::int(x.contacts as i64),
            C::code(x.solver.clone()),
            C::text(x.own_status.clone()),
            C::int(x.iterations as i64),
            C::same(x.own_violation, &Fmt::sci(1)),
            C::same(x.coulomb_residual, &Fmt::sci(1)),
        ])?;
    }
    Ok(t)
}
