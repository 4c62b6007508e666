//! The Hwangbo, Lee and Hutter 2018 report (`reports/hwangbo2018/`): Table I (one slipping
//! contact, three methods, timed on samples recorded from the four tasks), Table II (seconds per
//! 100k steps per task, bisection-SOR against PGS), the iterations (Fig. 4), the bisection's model
//! against Coulomb's (Fig. 6), the penetration in the hang task (Fig. 7) and both drivers on the
//! shipped problem files.
//!
//! The report only reads runs (`data/runs/hwangbo2018/`, made by `contactlab run` on the configs
//! of `experiments/configs/hwangbo2018/`): `table1.toml` (`kind = "single_contact"`: the tasks'
//! slipping contacts and the methods' timings and errors), `tasks.toml`, `model.toml` and
//! `files.toml` (`kind = "problems"`: each driver's own law's violation beside the Coulomb
//! ruler). The paper's numbers come from `table1_published.csv` and `table2_published.csv`
//! beside the configs; the solvers' labels from the configs (found by their optimizer's name).
//!
//! Statistics: [`crate::analysis::hwangbo2018`]. Facts: `table1.{bisection,golden_section,
//! analytical}.{us, error, abs_error, mean_steps, us_published}`,
//! `table1.{golden_over_bisection, analytical_over_bisection}` (and `_published`),
//! `table1.samples`, `table2.<task>.<solver>.{s100k, s100k_published, iterations_mean,
//! iterations_max, unconverged}`, `table2.<task>.pgs_over_bisection` (and `_published`),
//! `table2.scene_s100k_{min,max}`, `model.{within_1pct, median}`, `model.<task>.{within_1pct,
//! velocity_close, slipping, no_slip_within_1pct, median}`, `model.<shadow>.within_1pct`,
//! `model.<shadow>.<task>.median`, `model.no_slip.{within_1pct, steps}`,
//! `hang.<solver>.{penetration_mm_end, penetration_mm_max}`, `trot.speed`,
//! `files.{problems, left_out, bisection_converged, pgs_converged}`; and every run's own
//! (`table1.wall_seconds`, `files.rows`, ...: [`super::builder`]).

use contactlab_runs::RunConfig;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use super::{number, read_csv_with_header, ReportError};
use crate::analysis::hwangbo2018::{
    file_solves, method_timings, model_differences, task_rows, TaskRow,
};
use crate::analysis::{f64s, quantile, strs};
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::single_contact::SingleContactConfig;
use contactlab_runs::{ExperimentConfig, SolverSpec};

/// The optimizers of the paper's two drivers: the solvers of a config that run them are the
/// bisection's and PGS's rows, whatever their labels.
const BISECTION_OPTIMIZER: &str = "bisection-sor";
const PGS_OPTIMIZER: &str = "pgs-hwangbo";

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
}

/// A tolerance as the configs write it (`1e-6`).
fn tol(x: f64) -> String {
    format!("{x:e}")
}

/// One row of `table1_published.csv`.
struct PublishedMethod {
    method: String,
    microseconds: f64,
    machine: String,
}

/// The header of `table1_published.csv`.
const TABLE1_COLUMNS: [&str; 5] = [
    "method",
    "paper_method",
    "microseconds",
    "machine",
    "source",
];
/// The header of `table2_published.csv`.
const TABLE2_COLUMNS: [&str; 5] = [
    "task",
    "solver",
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

/// Writes `reports/hwangbo2018/` from the runs of `table1.toml`, `tasks.toml`, `model.toml`
/// and `files.toml` and the published CSVs.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "hwangbo2018",
        "Hwangbo, Lee and Hutter 2018, per-contact bisection: reproduction",
        "J. Hwangbo, J. Lee and M. Hutter, *Per-Contact Iteration Method for Solving Contact \
         Dynamics*, IEEE RA-L 3(2), 2018.",
    );
    r.text(
        "The paper's contact model (eq. 8: a slipping contact takes the impulse of maximum \
         dissipation on the conic section of zero normal velocity) solved per contact by the \
         bisection on the angle (Algorithm 1) inside a block SOR (Algorithm 2, \
         `--optimizer bisection-sor`), against the paper's projected Gauss-Seidel on Coulomb's \
         law (eqs. 17-18, `--optimizer pgs-hwangbo`), on a quadruped with ANYmal's proportions \
         (`multibody/robots/quadruped.toml`, on this project's multibody crate) in the paper's \
         four tasks. The paper's robot is ANYmal itself, with RBDL dynamics and series-elastic \
         actuators; ours is a rigid tree with ideal torque sources and PD control.",
    );
    let table1_paper = table1_published(&r)?;
    let table2_paper = table2_published(&r)?;
    let tasks = r.load("tasks.toml")?;
    let drivers = tasks.config.driver_specs();
    let labels = Labels {
        bisection: spec_of(
            drivers.iter().copied(),
            BISECTION_OPTIMIZER,
            Some("bisection"),
            "tasks.toml",
        )?
        .name(),
        pgs: spec_of(drivers.iter().copied(), PGS_OPTIMIZER, None, "tasks.toml")?.name(),
    };
    table1(&mut r, root, &table1_paper)?;
    let rows = task_rows(&tasks.steps)?;
    let tasks_tol = drivers.first().map_or(f64::NAN, |d| d.tol);
    table2(&mut r, &rows, &table2_paper, &labels, tasks_tol)?;
    fig4(&mut r, &rows)?;
    fig7(&mut r, &tasks.steps, &tasks.config.scene.params, &labels)?;
    trot_speed(&mut r, &tasks.steps, &labels)?;
    let model = r.load("model.toml")?;
    fig6(&mut r, &model.steps, &model.config)?;
    files(&mut r, root)?;
    r.finish()?;
    Ok(())
}

/// Table I: the single-contact methods on the slipping contacts of the four tasks, as the
/// `table1.toml` run timed and measured them, beside `table1_published.csv`.
fn table1(r: &mut Report, root: &Path, published: &[PublishedMethod]) -> Result<(), ReportError> {
    let cfg = SingleContactConfig::load(&r.config_file("table1.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let timings = method_timings(&df)?;
    let samples = timings.first().map_or(0, |m| m.samples);
    let rounds = cfg.rounds;
    let paper = |method: &str| published.iter().find(|p| p.method == method);
    let machine = published
        .first()
        .map_or("not stated", |p| p.machine.as_str());
    r.heading(2, "One contact (Table I)");
    r.text(&format!(
        "{samples} slipping contacts recorded from the first {} steps of each task \
         (`table1.toml`, `{}` advancing; a contact slips when its sticking impulse leaves the \
         cone at the step's answer), each solved by every method with the paper's stopping \
         rule (the impulse interval below {} N s; the quartic is exact up to its root \
         polishing). Time: the whole single-contact solve (case analysis and the slipping \
         method), in batches over all samples through `black_box`, the methods interleaved over \
         {rounds} rounds, the median round's time per solve; this machine's CPU is in the \
         provenance table above, the paper's was {machine}. Error: the largest \
         `|lambda - lambda_ref| / |lambda_ref|` against an independent reference (a 4096-point \
         scan of the angle polished by Newton's method), not against one of the three.",
        cfg.scene.steps,
        cfg.driver.name(),
        tol(cfg.tol),
    ));
    let mut t = Table::new(Some("table1.csv"))
        .col("method", "method")
        .col("us, paper", "microseconds_published")
        .col("us, here", "microseconds_reproduced")
        .col("largest error vs reference", "max_error_vs_reference")
        .col("largest absolute error (N s)", "max_abs_error_vs_reference")
        .col("mean inner steps", "mean_steps")
        .col("failures", "failures");
    for m in &timings {
        let published = paper(&m.method).map_or(f64::NAN, |p| p.microseconds);
        t.row(vec![
            C::code(m.method.clone()),
            C::same(published, &Fmt::fixed(2)),
            C::same(m.micros_median, &Fmt::fixed(3)),
            C::same(m.max_error, &Fmt::sci(1)),
            C::same(m.max_abs_error, &Fmt::sci(1)),
            C::same(m.mean_steps, &Fmt::fixed(1)),
            C::int(m.failures as i64),
        ])?;
        r.facts()
            .num(
                format!("table1.{}.us", m.method),
                m.micros_median,
                Fmt::fixed(2),
            )
            .num(
                format!("table1.{}.us_published", m.method),
                published,
                Fmt::fixed(2),
            )
            .num(
                format!("table1.{}.abs_error", m.method),
                m.max_abs_error,
                Fmt::sci(1),
            )
            .num(
                format!("table1.{}.error", m.method),
                m.max_error,
                Fmt::sci(1),
            )
            .num(
                format!("table1.{}.mean_steps", m.method),
                m.mean_steps,
                Fmt::fixed(1),
            );
    }
    r.table(&t)?;
    let us = |name: &str| {
        timings
            .iter()
            .find(|m| m.method == name)
            .map_or(f64::NAN, |m| m.micros_median)
    };
    let us_paper = |name: &str| paper(name).map_or(f64::NAN, |p| p.microseconds);
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
                us_paper(method) / us_paper("bisection"),
                Fmt::fixed(2),
            );
    }
    r.facts().num("table1.samples", samples as f64, Fmt::int());
    Ok(())
}

/// Table II: seconds per 100k steps per task and solver, in `table2_published.csv`'s order.
fn table2(
    r: &mut Report,
    rows: &[TaskRow],
    published: &[PublishedTask],
    labels: &Labels,
    tasks_tol: f64,
) -> Result<(), ReportError> {
    r.heading(2, "Four tasks (Table II)");
    r.text(&format!(
        "Each task simulated for the steps below with each solver advancing its own copy, \
         warm-started from the previous step's impulses, stopping at {} (see `tasks.toml`). \
         Seconds per 100k steps are the whole step (contact detection, dynamics, the solve, \
         integration; no logging in the timed part) scaled from the steps run; the solver's own \
         share is beside it. Iterations are sweeps over the contacts per step with contacts.",
        tol(tasks_tol)
    ));
    let mut t = Table::new(Some("table2.csv"))
        .col("task", "task")
        .col("solver", "solver")
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
        r.facts()
            .num(format!("{key}.s100k"), row.seconds_per_100k, Fmt::fixed(2))
            .num(
                format!("{key}.s100k_published"),
                p.seconds_per_100k,
                Fmt::fixed(2),
            )
            .num(
                format!("{key}.iterations_mean"),
                row.iterations_mean,
                Fmt::fixed(1),
            )
            .num(
                format!("{key}.iterations_max"),
                row.iterations_max,
                Fmt::int(),
            )
            .num(
                format!("{key}.unconverged"),
                row.unconverged as f64,
                Fmt::int(),
            );
    }
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
    r.table(&t)
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
    r.plot(
        "iterations.svg",
        "share of steps needing at least k sweeps, per task and solver (Fig. 4)",
        &Chart::new(
            "Sweeps per step: share of steps with at least k (Fig. 4)",
            Axis::log("sweeps k").ticks(xs.clone()),
            Axis::log("share of steps"),
        ),
        &series,
    )
}

/// Fig. 7: the feet's mean penetration over time in the hang task, both solvers.
fn fig7(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    params: &toml::Table,
    labels: &Labels,
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let pen = f64s(df, "foot_penetration")?;
    let dt = params
        .get("dt")
        .and_then(toml::Value::as_float)
        .unwrap_or(1e-3);
    let mut series = Vec::new();
    for s in [labels.bisection.as_str(), labels.pgs.as_str()] {
        let pts: Vec<(f64, f64)> = (0..df.height())
            .filter(|&k| {
                task[k] == "hang" && solver[k] == s && (step[k] as usize).is_multiple_of(20)
            })
            .map(|k| ((step[k] + 1.0) * dt, 1e3 * pen[k]))
            .collect();
        let all: Vec<f64> = (0..df.height())
            .filter(|&k| task[k] == "hang" && solver[k] == s)
            .map(|k| 1e3 * pen[k])
            .collect();
        let key = labels.key(s);
        r.facts()
            .num(
                format!("hang.{key}.penetration_mm_end"),
                all.last().copied().unwrap_or(f64::NAN),
                Fmt::fixed(1).unit(" mm"),
            )
            .num(
                format!("hang.{key}.penetration_mm_max"),
                all.iter().copied().fold(f64::NAN, f64::max),
                Fmt::fixed(1).unit(" mm"),
            );
        series.push((s.to_string(), pts));
    }
    r.heading(2, "Penetration in the hang task (Fig. 7)");
    r.plot(
        "hang_penetration.svg",
        "mean penetration of the feet over time in the hang task (Fig. 7)",
        &Chart::new(
            "Hang: mean penetration of the feet (Fig. 7)",
            Axis::linear("time (s)"),
            Axis::linear("penetration (mm)"),
        )
        .lines_only(),
        &series,
    )?;
    Ok(())
}

/// The trot's mean forward speed at its last step with the bisection (the paper's controller
/// runs at a given speed: the findings compare).
fn trot_speed(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    labels: &Labels,
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let speed = f64s(df, "mean_forward_speed")?;
    let last = (0..df.height())
        .filter(|&k| task[k] == "trot" && solver[k] == labels.bisection)
        .max_by(|&a, &b| step[a].total_cmp(&step[b]))
        .map_or(f64::NAN, |k| speed[k]);
    r.facts()
        .num("trot.speed", last, Fmt::fixed(2).unit(" m/s"));
    Ok(())
}

/// The share of `v` below `below`.
fn share_below(v: &[f64], below: f64) -> f64 {
    v.iter().filter(|&&x| x < below).count() as f64 / v.len().max(1) as f64
}

/// Fig. 6: the relative distance between the bisection's and PGS's impulses on the same steps,
/// and the checks that say what it is made of.
fn fig6(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    cfg: &ExperimentConfig,
) -> Result<(), ReportError> {
    let pgs = spec_of(&cfg.shadow, PGS_OPTIMIZER, None, "model.toml")?;
    let per_task = model_differences(df, &pgs.name())?;
    r.heading(2, "The two contact models (Fig. 6)");
    r.text(&format!(
        "The bisection advances each task (`model.toml`); the paper's PGS solves every step's \
         problem beside it (to {}). The distance is `|lambda_b - lambda_p| / |lambda_p|` over \
         the step's stacked impulses: the bisection solves eq. 8 (maximum dissipation on the \
         conic section), PGS Coulomb's law (eq. 6), which differ only where a contact slips and \
         its block `W_aa` couples normal and tangential directions. `no slip` restricts to the \
         steps where no contact slips in either answer, where the two laws coincide.",
        tol(pgs.tol)
    ));
    let mut t = Table::new(Some("model.csv"))
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
        .col("share of steps with a slipping contact", "share_slipping")
        .col("share under 1%, no slip", "share_under_1pct_no_slip");
    let (mut all, mut all_no_slip) = (Vec::new(), Vec::new());
    let xs: Vec<f64> = (0..=12).map(|k| 10f64.powi(k - 10)).collect();
    let mut series = Vec::new();
    for m in &per_task {
        let (task, d) = (&m.task, &m.distances);
        let no_slip: Vec<f64> = d
            .iter()
            .zip(&m.slipping)
            .filter(|(_, &s)| !s)
            .map(|(&x, _)| x)
            .collect();
        let slipping = m.slipping.iter().filter(|&&s| s).count() as f64 / d.len().max(1) as f64;
        let under = share_below(d, 0.01);
        let under_no_slip = share_below(&no_slip, 0.01);
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
        r.facts()
            .num(
                format!("model.{task}.within_1pct"),
                100.0 * under,
                Fmt::percent(1),
            )
            .num(
                format!("model.{task}.velocity_close"),
                100.0 * close,
                Fmt::percent(1),
            )
            .num(
                format!("model.{task}.slipping"),
                100.0 * slipping,
                Fmt::percent(1),
            )
            .num(
                format!("model.{task}.no_slip_within_1pct"),
                100.0 * under_no_slip,
                Fmt::percent(1),
            )
            .num(
                format!("model.{task}.median"),
                quantile(d, 0.5),
                Fmt::sci(1),
            );
        series.push((task.clone(), at_least(d, &xs)));
        all.extend_from_slice(d);
        all_no_slip.extend(no_slip);
    }
    r.table(&t)?;
    r.facts()
        .num(
            "model.within_1pct",
            100.0 * share_below(&all, 0.01),
            Fmt::percent(1),
        )
        .num(
            "model.no_slip.within_1pct",
            100.0 * share_below(&all_no_slip, 0.01),
            Fmt::percent(1),
        )
        .num("model.no_slip.steps", all_no_slip.len() as f64, Fmt::int())
        .num("model.median", quantile(&all, 0.5), Fmt::sci(1));
    r.plot(
        "model_difference.svg",
        "share of steps whose impulses differ by at least d between the two models (Fig. 6)",
        &Chart::new(
            "Bisection (eq. 8) vs PGS (eq. 6): share of steps at least d apart (Fig. 6)",
            Axis::log("relative distance d"),
            Axis::log("share of steps"),
        ),
        &series,
    )?;
    model_checks(r, df, cfg)
}

/// What Fig. 6's distance is made of: every shadow of `model.toml` against the driver, so the
/// models' difference is told apart from the solvers' accuracy.
fn model_checks(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    cfg: &ExperimentConfig,
) -> Result<(), ReportError> {
    let driver = cfg.driver_specs().first().map_or(f64::NAN, |d| d.tol);
    let coulomb = spec_of(
        &cfg.shadow,
        BISECTION_OPTIMIZER,
        Some("coulomb"),
        "model.toml",
    )?;
    let tight = spec_of(
        &cfg.shadow,
        BISECTION_OPTIMIZER,
        Some("bisection"),
        "model.toml",
    )?;
    let mut t = Table::new(Some("model_checks.csv"))
        .col("task", "task")
        .col("shadow", "shadow")
        .col("median distance", "distance_median")
        .col("share under 1%", "share_under_1pct")
        .col("median velocity gap (m/s)", "velocity_gap_median");
    for shadow in cfg.shadow.iter().map(SolverSpec::name) {
        let shadow = shadow.as_str();
        let per_task = model_differences(df, shadow)?;
        let mut all = Vec::new();
        for m in &per_task {
            t.row(vec![
                C::text(m.task.clone()),
                C::code(shadow),
                C::same(quantile(&m.distances, 0.5), &Fmt::sci(1)),
                C::same(share_below(&m.distances, 0.01), &Fmt::fixed(3)),
                C::same(quantile(&m.velocity_gaps, 0.5), &Fmt::sci(1)),
            ])?;
            r.facts().num(
                format!("model.{shadow}.{}.median", m.task),
                quantile(&m.distances, 0.5),
                Fmt::sci(1),
            );
            all.extend_from_slice(&m.distances);
        }
        if !all.is_empty() {
            r.facts().num(
                format!("model.{shadow}.within_1pct"),
                100.0 * share_below(&all, 0.01),
                Fmt::percent(1),
            );
        }
    }
    let (c, t_) = (coulomb.name(), tight.name());
    r.text(&format!(
        "Each shadow against the driver (the bisection at {}) on the same steps: \
         `{c}` is the bisection's own block SOR with an exact per-contact Coulomb solve \
         (`local = \"coulomb\"`, to {}), so it solves PGS's law by the bisection's sweep; \
         `{t_}` is the driver's method and law at {}. Where `{c}` is as \
         far from the driver as PGS is, the distance is the two laws', not PGS's; where \
         `{t_}` is within 1%, it is not the driver's tolerance.",
        tol(driver),
        tol(coulomb.tol),
        tol(tight.tol),
    ));
    r.table(&t)?;
    Ok(())
}

/// Both drivers on the shipped problem files, as the `files.toml` run solved them: each
/// model's own violation beside the Coulomb ruler's residual (the bisection solves eq. 8, which
/// the ruler does not measure).
fn files(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let cfg = ProblemsConfig::load(&r.config_file("files.toml"))?;
    let data = cfg.data_path(root);
    let (df, _) = r.load_data(&cfg.name, &data)?;
    let rows = file_solves(&df)?;
    let bisection = spec_of(
        &cfg.solvers,
        BISECTION_OPTIMIZER,
        Some("bisection"),
        "files.toml",
    )?
    .name();
    let pgs = spec_of(&cfg.solvers, PGS_OPTIMIZER, None, "files.toml")?.name();
    // The files the run left out (no contact-space form), as its meta lists them.
    let left_out: Vec<String> = std::fs::read_to_string(data.with_extension("meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| {
            m.get("left_out")?.as_array().map(|a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default();
    let mut tols: Vec<String> = cfg.solvers.iter().map(|s| tol(s.tol)).collect();
    tols.dedup();
    r.heading(
        2,
        "On problem files: each model's own residual and the Coulomb ruler's",
    );
    r.text(&format!(
        "The shipped FCLib and JSON problems (`data/problems/`; global ones through \
         `W = H' M^-1 H`), solved from zero at tolerance {} (`files.toml`){}. `own violation` \
         is the summed violation of the solver's own law at its answer (eq. 8 for the bisection, Coulomb's eq. 6 for PGS: cone, \
         penetration, Signorini, friction direction), the measure the bisection stops on; \
         `Coulomb residual` is the project's shared ruler, the natural-map residual of Coulomb's \
         law, which charges the bisection for every sliding contact whose `W_aa` couples normal \
         and tangential directions: a difference of models, not an error.",
        tols.join(" and "),
        if left_out.is_empty() {
            String::new()
        } else {
            format!(
                "; left out, without a contact-space form: {}",
                left_out
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));
    let mut t = Table::new(Some("files.csv"))
        .col("file", "file")
        .col("contacts", "contacts")
        .col("solver", "solver")
        .col("own status", "own_status")
        .col("sweeps", "iterations")
        .col("own violation", "own_violation")
        .col("Coulomb residual", "coulomb_residual");
    for x in &rows {
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
    r.table(&t)
}
