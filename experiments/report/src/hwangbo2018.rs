//! The Hwangbo, Lee and Hutter 2018 report (`reports/hwangbo2018/`): Table I (one slipping
//! contact, three methods, timed on samples recorded from the four tasks), Table II (seconds per
//! 100k steps per task, bisection-SOR against PGS), the iterations (Fig. 4), the bisection's model
//! against Coulomb's (Fig. 6), the penetration in the hang task (Fig. 7) and both drivers on the
//! shipped problem files.
//!
//! The report only reads runs (`data/runs/hwangbo2018/`, made by `contactlab run` on the configs
//! of `experiments/configs/hwangbo2018/`): `table1.toml` (`kind = "single_contact"`: the tasks'
//! slipping contacts and the methods' timings and errors), `tasks.toml`, `hang_tight.toml`,
//! `random_feet.toml`, `random_shadow.toml`, `dt50hz.toml`, `model.toml` and
//! `files.toml` (`kind = "problems"`: each driver's own law's violation beside the Coulomb
//! ruler). The paper's numbers come from `table1_published.csv` and `table2_published.csv`
//! beside the configs; the solvers' labels from the configs (found by their optimizer's name).
//!
//! Statistics: [`crate::analysis::hwangbo2018`]. Facts: `table1.{bisection,golden_section,
//! analytical}.{us, error, abs_error, mean_steps, us_published}`,
//! `table1.{golden_over_bisection, analytical_over_bisection}` (and `_published`),
//! `table1.samples`, `table2.<task>.<solver>.{s100k, s100k_published, iterations_mean,
//! iterations_max, unconverged}`, `table2.<task>.pgs_over_bisection` (and `_published`),
//! `table2.scene_s100k_{min,max}`, `model.{within_1pct, median, threshold}`, `model.<task>.{within_1pct,
//! velocity_close, slipping, no_slip_within_1pct, median}`, `model.<shadow>.within_1pct`,
//! `model.<shadow>.<task>.median`, `model.no_slip.{within_1pct, steps}`,
//! `hang.<bisection|pgs|pgs_tight>.{penetration_mm_end, penetration_mm_max, solver_s100k}`,
//! `hang.pgs_tight.{time_increase, sweeps_mean, sweep_increase, unconverged, tol}`,
//! `hang.pgs.sweeps_mean` (`hang_tight.toml`: PGS at the paper's 1e-8),
//! `table1.<method>.{bracket_steps, search_steps, bracket_two}` (the evaluations finding the
//! interval and after it), `table1.golden_closed_over_bisection`,
//! `step_us.<task>.<solver>.{mean, median, solver_mean, published}`, `step_us.best_median`,
//! `<random|random_feet|random_shadow>.<solver>.{steps, torso_steps, sweeps_torso, sweeps_feet,
//! share_torso, capped, share_capped, s100k, solver_s100k, s100k_uncapped,
//! solver_s100k_uncapped, dominance_capped, dominance_all, contacts_capped, slipping_capped,
//! height_capped, height_all}` and
//! `<...>.{saving, solver_ratio, saving_uncapped, solver_ratio_uncapped}` (where PGS's time goes on
//! the random task: `random_feet.toml`, `random_shadow.toml`), `trot.<solver>.{speed, window,
//! min_height, max_contacts, max_torque, diverged}`, `trot.{torque_limit, steady_from}`,
//! `dominance.<task>.{row_median, row_share, block_median, block_share}` (the scene's Delassus
//! dominance observables), `dt50.<task>.{steps, diverged_at, contacts_before, max_pen_mm,
//! foot_pen_mm, min_height, speed}` and `dt50.{diverged, non_finite, unactuated_bad,
//! blow_up_joules}` (`dt50hz.toml`), `claims.<claim>_published` (`claims_published.csv`: the
//! numbers the paper's text states), `files.{problems, left_out, bisection_converged,
//! pgs_converged}`; and every run's own (`table1.wall_seconds`, `files.rows`, ...:
//! [`super::builder`]).

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

/// The header of `claims_published.csv`.
const CLAIMS_COLUMNS: [&str; 4] = ["claim", "value", "unit", "source"];

/// The single numbers the paper's text states (`claims_published.csv`), by claim; each is
/// also a `claims.<claim>_published` fact.
fn claims_published(r: &mut Report) -> Result<Vec<(String, f64)>, ReportError> {
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
    Ok(claims)
}

/// The claim `name` of [`claims_published`]; the error names the file.
fn claim(claims: &[(String, f64)], name: &str) -> Result<f64, ReportError> {
    claims
        .iter()
        .find(|(c, _)| c == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| ReportError::Published(format!("claims_published.csv: no claim `{name}`")))
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
    let claims = claims_published(&mut r)?;
    step_times(&mut r, &tasks.steps, &rows, &table2_paper, &claims)?;
    random_cost(&mut r, &tasks.steps, &rows, &labels)?;
    trot(
        &mut r,
        &tasks.steps,
        &tasks.config.scene.params,
        &labels,
        &claims,
    )?;
    dominance(&mut r, &tasks.steps, &labels)?;
    fig7(
        &mut r,
        &tasks.steps,
        &rows,
        &tasks.config.scene.params,
        &labels,
        &claims,
    )?;
    dt50(&mut r, &claims)?;
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
        .col("of which finding the interval", "mean_bracket_steps")
        .col("share of intervals in two evaluations", "share_bracket_two")
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
            C::same(m.mean_bracket_steps, &Fmt::fixed(1)),
            C::same(m.share_bracket_two, &Fmt::fixed(3)),
            C::int(m.failures as i64),
        ])?;
        if m.mean_bracket_steps.is_finite() {
            r.facts()
                .num(
                    format!("table1.{}.bracket_steps", m.method),
                    m.mean_bracket_steps,
                    Fmt::fixed(1),
                )
                .num(
                    format!("table1.{}.search_steps", m.method),
                    m.mean_steps - m.mean_bracket_steps,
                    Fmt::fixed(1),
                )
                .num(
                    format!("table1.{}.bracket_two", m.method),
                    100.0 * m.share_bracket_two,
                    Fmt::percent(1),
                );
        }
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
    r.facts()
        .num("table1.samples", samples as f64, Fmt::int())
        .num(
            "table1.golden_closed_over_bisection",
            us("golden_section_closed") / us("bisection"),
            Fmt::fixed(2),
        );
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

/// One line of a chart: its `(x, y)` points.
type Series1 = Vec<(f64, f64)>;

/// The hang rows of `df` for `solver`: (time, mean foot penetration in mm) every 20th step,
/// and every step's penetration (mm).
fn hang_penetration(
    df: &polars::prelude::DataFrame,
    solver: &str,
    dt: f64,
) -> Result<(Series1, Vec<f64>), ReportError> {
    let task = strs(df, "task")?;
    let solvers = strs(df, "solver")?;
    let step = f64s(df, "step")?;
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

/// `solver`'s row of the hang task among a run's [`task_rows`].
fn hang_row<'a>(rows: &'a [TaskRow], solver: &str) -> Option<&'a TaskRow> {
    rows.iter().find(|x| x.task == "hang" && x.solver == solver)
}

/// Fig. 7: the feet's mean penetration over time in the hang task, both drivers at the tasks'
/// tolerance and PGS at the paper's tighter one (`hang_tight.toml`), with each one's solver time.
fn fig7(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    rows: &[TaskRow],
    params: &toml::Table,
    labels: &Labels,
    claims: &[(String, f64)],
) -> Result<(), ReportError> {
    let dt = params
        .get("dt")
        .and_then(toml::Value::as_float)
        .unwrap_or(1e-3);
    let tight = r.load("hang_tight.toml")?;
    let tight_spec = spec_of(
        tight.config.driver_specs(),
        PGS_OPTIMIZER,
        None,
        "hang_tight.toml",
    )?;
    let tight_label = tight_spec.name();
    let tight_rows = task_rows(&tight.steps)?;
    // Per run: its frame, its task rows, the solver's label, the facts' key and the tolerance.
    type Run<'a> = (
        &'a polars::prelude::DataFrame,
        &'a [TaskRow],
        String,
        &'static str,
        f64,
    );
    let mut runs: Vec<Run<'_>> = Vec::new();
    for (s, key) in [(&labels.bisection, "bisection"), (&labels.pgs, "pgs")] {
        runs.push((df, rows, s.clone(), key, f64::NAN));
    }
    runs.push((
        &tight.steps,
        &tight_rows,
        tight_label.clone(),
        "pgs_tight",
        tight_spec.tol,
    ));
    let mut series = Vec::new();
    let mut t = Table::new(Some("hang_penetration.csv"))
        .col("solver", "solver")
        .col("run", "config")
        .col("tolerance", "tol")
        .col(
            "mean foot penetration at the end (mm)",
            "penetration_mm_end",
        )
        .col("largest (mm)", "penetration_mm_max")
        .col("solver s per 100k", "solver_seconds_per_100k");
    for (frame, run_rows, label, key, tol_) in &runs {
        let (pts, all) = hang_penetration(frame, label, dt)?;
        let end = all.last().copied().unwrap_or(f64::NAN);
        let max = all.iter().copied().fold(f64::NAN, f64::max);
        let solver_s = hang_row(run_rows, label).map_or(f64::NAN, |x| x.solver_seconds_per_100k);
        r.facts()
            .num(
                format!("hang.{key}.penetration_mm_end"),
                end,
                Fmt::fixed(1).unit(" mm"),
            )
            .num(
                format!("hang.{key}.penetration_mm_max"),
                max,
                Fmt::fixed(1).unit(" mm"),
            )
            .num(
                format!("hang.{key}.solver_s100k"),
                solver_s,
                Fmt::fixed(2).unit(" s"),
            );
        let (config, tol_text) = if *key == "pgs_tight" {
            ("hang_tight.toml", tol(*tol_))
        } else {
            ("tasks.toml", String::from("as Table II"))
        };
        t.row(vec![
            C::code(label.clone()),
            C::code(config),
            C::text(tol_text),
            C::same(end, &Fmt::fixed(1)),
            C::same(max, &Fmt::fixed(1)),
            C::same(solver_s, &Fmt::fixed(2)),
        ])?;
        series.push((label.clone(), pts));
    }
    let (pgs_row, tight_row) = (
        hang_row(rows, &labels.pgs),
        hang_row(&tight_rows, &tight_label),
    );
    let of = |row: Option<&TaskRow>, f: fn(&TaskRow) -> f64| row.map_or(f64::NAN, f);
    let pgs_s = of(pgs_row, |x| x.solver_seconds_per_100k);
    let tight_s = of(tight_row, |x| x.solver_seconds_per_100k);
    // Sweeps are what the time follows, and unlike the time they do not move with the load.
    let pgs_sweeps = of(pgs_row, |x| x.iterations_mean);
    let tight_sweeps = of(tight_row, |x| x.iterations_mean);
    r.facts()
        .num(
            "hang.pgs_tight.time_increase",
            100.0 * (tight_s / pgs_s - 1.0),
            Fmt::percent(0),
        )
        .num("hang.pgs.sweeps_mean", pgs_sweeps, Fmt::fixed(1))
        .num("hang.pgs_tight.sweeps_mean", tight_sweeps, Fmt::fixed(1))
        .num(
            "hang.pgs_tight.sweep_increase",
            100.0 * (tight_sweeps / pgs_sweeps - 1.0),
            Fmt::percent(0),
        )
        .num(
            "hang.pgs_tight.unconverged",
            of(tight_row, |x| x.unconverged as f64),
            Fmt::int(),
        )
        .num("hang.pgs_tight.tol", tight_spec.tol, Fmt::sci(0));
    r.heading(2, "Penetration in the hang task (Fig. 7)");
    r.text(&format!(
        "The feet's mean penetration over the hang task, the two drivers of Table II and the \
         paper's PGS at its tighter threshold ({}, `hang_tight.toml`; the paper reports about \
         {}% more solver time for it).",
        tol(claim(claims, "pgs_tight_tol")?),
        claim(claims, "pgs_tight_time_increase")?
    ));
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
    r.table(&t)
}

/// Per (task, solver) of the tasks run: the whole step's and the solver's time per step, mean
/// and median, beside the paper's Table II in microseconds per step and its abstract's claim.
fn step_times(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    rows: &[TaskRow],
    published: &[PublishedTask],
    claims: &[(String, f64)],
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let secs = f64s(df, "seconds")?;
    let scene = f64s(df, "scene_seconds")?;
    r.heading(2, "Time per step (the abstract's \"less than 20 us\")");
    r.text(&format!(
        "The abstract: \"Simulating one time step of an 18-DOF quadruped robot with multiple \
         contacts took less than {} us with a single core of a CPU\". Table II's seconds per \
         100k steps are microseconds per step times ten; here the same runs per step, the \
         whole step (scene and solver, as Table II) and the solver alone, in microseconds, \
         on this machine (provenance above).",
        claim(claims, "step_us")?
    ));
    let mut t = Table::new(Some("step_times.csv"))
        .col("task", "task")
        .col("solver", "solver")
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
        let key = format!("step_us.{}.{}", row.task, row.solver);
        r.facts()
            .num(format!("{key}.mean"), mean, Fmt::fixed(1).unit(" us"))
            .num(format!("{key}.median"), median, Fmt::fixed(1).unit(" us"))
            .num(
                format!("{key}.solver_mean"),
                10.0 * row.solver_seconds_per_100k,
                Fmt::fixed(1).unit(" us"),
            )
            .num(format!("{key}.published"), paper, Fmt::fixed(1).unit(" us"));
        best = best.min(median);
    }
    r.facts()
        .num("step_us.best_median", best, Fmt::fixed(1).unit(" us"));
    r.table(&t)
}

/// Where PGS's time goes on the random task: the steps with a torso corner on the ground
/// against the rest, the steps at the sweep cap, and the same task with feet-only contacts
/// (`random_feet.toml`).
fn random_cost(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    rows: &[TaskRow],
    labels: &Labels,
) -> Result<(), ReportError> {
    r.heading(2, "The random task: where PGS's time goes");
    r.text(
        "The random task's steps split by whether a torso corner touches the ground \
         (`torso_contacts`), and the steps at the 50,000-sweep cap, for Table II's run \
         (`tasks.toml`, each solver advancing its own robot); the same task with only the feet \
         colliding (`random_feet.toml`, the torso box switched off, the same random targets); \
         and the same task advanced by the bisection with PGS solving every step's problem \
         beside it (`random_shadow.toml`: both solvers on identical problems; a shadow's whole \
         step is not timed, only its solve). `uncapped`: the same sums without the steps at \
         the cap.",
    );
    let mut t = Table::new(Some("random_cost.csv"))
        .col("run", "config")
        .col("solver", "solver")
        .col("steps with contacts", "steps_with_contacts")
        .col("of which with the torso", "steps_with_torso")
        .col("sweeps off the cap (mean), torso", "iterations_mean_torso")
        .col(
            "sweeps off the cap (mean), feet only",
            "iterations_mean_feet",
        )
        .col("solver time share on torso steps", "solver_share_torso")
        .col("steps at the cap", "steps_at_cap")
        .col("solver time share at the cap", "solver_share_cap")
        .col("s per 100k", "seconds_per_100k")
        .col("solver s per 100k", "solver_seconds_per_100k")
        .col("s per 100k, uncapped", "seconds_per_100k_uncapped")
        .col(
            "solver s per 100k, uncapped",
            "solver_seconds_per_100k_uncapped",
        );
    // NaN for no steps; `+ 0.0` turns the empty sum's -0.0 into 0.
    let mean = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
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
        let (ftask, fsolver) = (strs(frame, "task")?, strs(frame, "solver")?);
        let (fsecs, fscene) = (f64s(frame, "seconds")?, f64s(frame, "scene_seconds")?);
        let (fit, fnc) = (f64s(frame, "iterations")?, f64s(frame, "n_c")?);
        let ftorso = f64s(frame, "torso_contacts")?;
        let fdom = f64s(frame, "delassus_row_dominance")?;
        let fheight = f64s(frame, "base_height")?;
        let fslip = f64s(frame, "slipping_contacts")?;
        let fstatus = strs(frame, "solver_status")?;
        for (s, sk) in [(&labels.bisection, "bisection"), (&labels.pgs, "pgs")] {
            let ks: Vec<usize> = (0..frame.height())
                .filter(|&k| ftask[k] == "random" && fsolver[k] == *s && fnc[k] > 0.0)
                .collect();
            let on_torso: Vec<usize> = ks.iter().copied().filter(|&k| ftorso[k] > 0.0).collect();
            let feet_only: Vec<usize> = ks.iter().copied().filter(|&k| ftorso[k] == 0.0).collect();
            let capped: Vec<usize> = ks
                .iter()
                .copied()
                .filter(|&k| fstatus[k] == "max_iterations")
                .collect();
            let total: f64 = ks.iter().map(|&k| fsecs[k]).sum();
            let share = |set: &[usize]| set.iter().map(|&k| fsecs[k]).sum::<f64>() / total + 0.0;
            // The mean sweeps of the steps of `set` that did not reach the cap.
            let sweeps = |set: &[usize]| {
                mean(
                    &set.iter()
                        .filter(|&&k| fstatus[k] != "max_iterations")
                        .map(|&k| fit[k])
                        .collect::<Vec<_>>(),
                )
            };
            let row = frame_rows
                .iter()
                .find(|x| x.task == "random" && x.solver == *s);
            // A shadow's rows carry no scene time: only its solver time is comparable.
            let shadowing = key == "random_shadow";
            let (s100k, solver100k) = row.map_or((f64::NAN, f64::NAN), |x| {
                let whole = if shadowing {
                    f64::NAN
                } else {
                    x.seconds_per_100k
                };
                (whole, x.solver_seconds_per_100k)
            });
            // Whole-step seconds per 100k without the capped steps.
            let all: Vec<usize> = (0..frame.height())
                .filter(|&k| ftask[k] == "random" && fsolver[k] == *s)
                .collect();
            let uncapped: Vec<usize> = all
                .iter()
                .copied()
                .filter(|&k| fstatus[k] != "max_iterations")
                .collect();
            let s100k_uncapped = if shadowing {
                f64::NAN
            } else {
                uncapped.iter().map(|&k| fsecs[k] + fscene[k]).sum::<f64>()
                    / uncapped.len().max(1) as f64
                    * 1e5
            };
            let solver100k_uncapped = uncapped.iter().map(|&k| fsecs[k]).sum::<f64>()
                / uncapped.len().max(1) as f64
                * 1e5;
            t.row(vec![
                C::code(config),
                C::code(s.clone()),
                C::int(ks.len() as i64),
                C::int(on_torso.len() as i64),
                C::same(sweeps(&on_torso), &Fmt::fixed(1)),
                C::same(sweeps(&feet_only), &Fmt::fixed(1)),
                C::same(share(&on_torso), &Fmt::fixed(3)),
                C::int(capped.len() as i64),
                C::same(share(&capped), &Fmt::fixed(3)),
                C::same(s100k, &Fmt::fixed(2)),
                C::same(solver100k, &Fmt::fixed(2)),
                C::same(s100k_uncapped, &Fmt::fixed(2)),
                C::same(solver100k_uncapped, &Fmt::fixed(2)),
            ])?;
            let fk = format!("{key}.{sk}");
            let median_of = |set: &[usize], v: &[f64]| {
                quantile(&set.iter().map(|&k| v[k]).collect::<Vec<_>>(), 0.5)
            };
            r.facts()
                .num(
                    format!("{fk}.dominance_capped"),
                    median_of(&capped, &fdom),
                    Fmt::fixed(3),
                )
                .num(
                    format!("{fk}.dominance_all"),
                    median_of(&ks, &fdom),
                    Fmt::fixed(3),
                )
                .num(
                    format!("{fk}.contacts_capped"),
                    median_of(&capped, &fnc),
                    Fmt::int(),
                )
                .num(
                    format!("{fk}.slipping_capped"),
                    median_of(&capped, &fslip),
                    Fmt::int(),
                )
                .num(
                    format!("{fk}.height_capped"),
                    median_of(&capped, &fheight),
                    Fmt::fixed(2).unit(" m"),
                )
                .num(
                    format!("{fk}.height_all"),
                    median_of(&ks, &fheight),
                    Fmt::fixed(2).unit(" m"),
                );
            r.facts()
                .num(format!("{fk}.steps"), ks.len() as f64, Fmt::int())
                .num(
                    format!("{fk}.torso_steps"),
                    on_torso.len() as f64,
                    Fmt::int(),
                )
                .num(
                    format!("{fk}.sweeps_torso"),
                    sweeps(&on_torso),
                    Fmt::fixed(1),
                )
                .num(
                    format!("{fk}.sweeps_feet"),
                    sweeps(&feet_only),
                    Fmt::fixed(1),
                )
                .num(
                    format!("{fk}.share_torso"),
                    100.0 * share(&on_torso),
                    Fmt::percent(0),
                )
                .num(format!("{fk}.capped"), capped.len() as f64, Fmt::int())
                .num(
                    format!("{fk}.share_capped"),
                    100.0 * share(&capped),
                    Fmt::percent(0),
                )
                .num(format!("{fk}.s100k"), s100k, Fmt::fixed(2))
                .num(format!("{fk}.solver_s100k"), solver100k, Fmt::fixed(2))
                .num(
                    format!("{fk}.s100k_uncapped"),
                    s100k_uncapped,
                    Fmt::fixed(2),
                )
                .num(
                    format!("{fk}.solver_s100k_uncapped"),
                    solver100k_uncapped,
                    Fmt::fixed(2),
                );
        }
        let get = |name: &str| fact_number(r, &format!("{key}.{name}"));
        let (pb, pp) = (get("bisection.s100k"), get("pgs.s100k"));
        let (sb, sp) = (get("bisection.solver_s100k"), get("pgs.solver_s100k"));
        let (ub, up) = (get("bisection.s100k_uncapped"), get("pgs.s100k_uncapped"));
        let (usb, usp) = (
            get("bisection.solver_s100k_uncapped"),
            get("pgs.solver_s100k_uncapped"),
        );
        r.facts()
            .num(
                format!("{key}.saving"),
                100.0 * (1.0 - pb / pp),
                Fmt::percent(0),
            )
            .num(format!("{key}.solver_ratio"), sp / sb, Fmt::fixed(1))
            .num(
                format!("{key}.saving_uncapped"),
                100.0 * (1.0 - ub / up),
                Fmt::percent(0),
            )
            .num(
                format!("{key}.solver_ratio_uncapped"),
                usp / usb,
                Fmt::fixed(1),
            );
    }
    r.table(&t)
}

/// The trot of the tasks run: its speed over the steady window (from `STEADY_FROM` seconds to
/// the end), whether it stayed up, the feet in contact and the largest joint torque.
fn trot(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    params: &toml::Table,
    labels: &Labels,
    claims: &[(String, f64)],
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let x = f64s(df, "base_x")?;
    let z = f64s(df, "base_height")?;
    let nc = f64s(df, "active_contacts")?;
    let torque = f64s(df, "max_joint_torque")?;
    let status = strs(df, "status")?;
    let dt = params
        .get("dt")
        .and_then(toml::Value::as_float)
        .unwrap_or(1e-3);
    let limit = params
        .get("torque_limit")
        .and_then(toml::Value::as_float)
        .unwrap_or(40.0);
    r.heading(2, "The trot (task 1)");
    let mut t = Table::new(Some("trot.csv"))
        .col("solver", "solver")
        .col("steady window (s)", "window_seconds")
        .col("mean forward speed (m/s)", "steady_speed")
        .col("lowest base height (m)", "min_base_height")
        .col("most contacts in a step", "max_contacts")
        .col("largest joint torque (N m)", "max_joint_torque")
        .col("diverged steps", "diverged");
    for (s, key) in [(&labels.bisection, "bisection"), (&labels.pgs, "pgs")] {
        let ks: Vec<usize> = (0..df.height())
            .filter(|&k| task[k] == "trot" && solver[k] == *s)
            .collect();
        let time = |k: usize| (step[k] + 1.0) * dt;
        let first = ks
            .iter()
            .copied()
            .find(|&k| time(k) >= STEADY_FROM - 0.5 * dt);
        let last = ks.last().copied();
        let (window, speed) = match (first, last) {
            (Some(a), Some(b)) if b > a => (time(b) - time(a), (x[b] - x[a]) / (time(b) - time(a))),
            _ => (f64::NAN, f64::NAN),
        };
        let min_z = ks.iter().map(|&k| z[k]).fold(f64::INFINITY, f64::min);
        let max_nc = ks.iter().map(|&k| nc[k]).fold(0.0, f64::max);
        let max_tau = ks.iter().map(|&k| torque[k]).fold(0.0, f64::max);
        let diverged = ks.iter().filter(|&&k| status[k] == "diverged").count();
        t.row(vec![
            C::code(s.clone()),
            C::same(window, &Fmt::fixed(1)),
            C::same(speed, &Fmt::fixed(2)),
            C::same(min_z, &Fmt::fixed(3)),
            C::int(max_nc as i64),
            C::same(max_tau, &Fmt::fixed(1)),
            C::int(diverged as i64),
        ])?;
        r.facts()
            .num(
                format!("trot.{key}.speed"),
                speed,
                Fmt::fixed(2).unit(" m/s"),
            )
            .num(
                format!("trot.{key}.window"),
                window,
                Fmt::fixed(1).unit(" s"),
            )
            .num(
                format!("trot.{key}.min_height"),
                min_z,
                Fmt::fixed(2).unit(" m"),
            )
            .num(format!("trot.{key}.max_contacts"), max_nc, Fmt::int())
            .num(
                format!("trot.{key}.max_torque"),
                max_tau,
                Fmt::fixed(1).unit(" N m"),
            )
            .num(format!("trot.{key}.diverged"), diverged as f64, Fmt::int());
    }
    r.facts()
        .num("trot.torque_limit", limit, Fmt::int().unit(" N m"))
        .num("trot.steady_from", STEADY_FROM, Fmt::fixed(0).unit(" s"));
    r.text(&format!(
        "The trot of Table II (`tasks.toml`, `trot_controller = \"raibert\"`: Raibert's foot \
         placement for the swinging diagonal pair and virtual-model stance forces, module \
         `experiments/scenes/src/quadruped/trot.rs`), commanded to the paper's {} m/s. Speed: \
         the base's forward travel over the steady window from {STEADY_FROM} s to the end, over \
         its duration.",
        claim(claims, "trot_speed")?
    ));
    r.table(&t)
}

/// The number fact `name` (NaN when absent or not one number).
fn fact_number(r: &Report, name: &str) -> f64 {
    match r.facts_ref().get(name) {
        Some(super::findings::Fact::Numbers(v, _)) if v.len() == 1 => v[0],
        _ => f64::NAN,
    }
}

/// When the trot's steady window starts (s): the command has ramped up by 2.5 s.
const STEADY_FROM: f64 = 4.0;

/// The diagonal dominance of the feet's Delassus matrix per task (the paper's reason for PGS's
/// win on the trot, sec. VI), from the scene's observables on the bisection's rows.
fn dominance(
    r: &mut Report,
    df: &polars::prelude::DataFrame,
    labels: &Labels,
) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let nc = f64s(df, "n_c")?;
    let row_dom = f64s(df, "delassus_row_dominance")?;
    let block_dom = f64s(df, "delassus_block_dominance")?;
    r.heading(2, "Diagonal dominance of the Delassus matrix");
    r.text(
        "Sec. VI: \"the inverse apparent inertia matrix at the feet is almost always \
         diagonal-dominant when ANYmal is trotting. It is not very surprising to see the PGS \
         method performing the best in such cases\". Two measures of each step's `W` (the \
         bisection's rows of `tasks.toml`): the scalar one PGS's per-component sweep sees, \
         `min_i |W_ii| / sum_{j != i} |W_ij|` over all rows, and the per-contact block one a \
         per-contact sweep sees, `min_a lambda_min(W_aa) / sum_{b != a} ||W_ab||_2` (steps \
         with at least two contacts). At least 1 means dominant.",
    );
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
        r.facts()
            .num(
                format!("dominance.{name}.row_median"),
                quantile(&rows, 0.5),
                Fmt::fixed(3),
            )
            .num(
                format!("dominance.{name}.row_share"),
                100.0 * share(&rows),
                Fmt::percent(1),
            )
            .num(
                format!("dominance.{name}.block_median"),
                quantile(&blocks, 0.5),
                Fmt::fixed(2),
            )
            .num(
                format!("dominance.{name}.block_share"),
                100.0 * share(&blocks),
                Fmt::percent(1),
            );
    }
    r.table(&t)
}

/// A kinetic energy no run of the robot reaches unless it has blown up (J; 35 kg at 24 m/s).
const BLOW_UP_JOULES: f64 = 1e4;

/// The four tasks at the paper's 50 Hz (`dt50hz.toml`): steps run, diverged steps, non-finite
/// observables, the deepest penetration and the feet's.
fn dt50(r: &mut Report, claims: &[(String, f64)]) -> Result<(), ReportError> {
    let run = r.load("dt50hz.toml")?;
    let df = &run.steps;
    let task = strs(df, "task")?;
    let status = strs(df, "status")?;
    let pen = f64s(df, "max_penetration")?;
    let foot = f64s(df, "foot_penetration")?;
    let z = f64s(df, "base_height")?;
    let x = f64s(df, "base_x")?;
    let ke = f64s(df, "kinetic_energy")?;
    let dt = run
        .config
        .scene
        .params
        .get("dt")
        .and_then(toml::Value::as_float)
        .unwrap_or(f64::NAN);
    r.heading(2, "At 50 Hz");
    r.text(&format!(
        "The abstract: \"stable at 50 Hz\"; sec. V-A: stable at dt = {} s for the unactuated \
         tasks (hang, drop). The four tasks at dt = {dt} s (`dt50hz.toml`, bisection-SOR, the \
         same simulated time as Table II, the controllers' gains implicit): a step whose state \
         is no longer finite ends its run with a `diverged` row; a diverged run's magnitudes \
         are left out (`-`).",
        claim(claims, "stable_dt")?
    ));
    let n_c = f64s(df, "n_c")?;
    let mut t = Table::new(Some("dt50hz.csv"))
        .col("task", "task")
        .col("steps", "steps")
        .col("diverged at (s)", "diverged_at")
        .col(
            "most contacts before the energy passed 1e4 J",
            "contacts_before_blow_up",
        )
        .col("deepest penetration (mm)", "max_penetration_mm")
        .col(
            "mean foot penetration, largest (mm)",
            "foot_penetration_mm_max",
        )
        .col("lowest base height (m)", "min_base_height")
        .col("largest kinetic energy (J)", "max_kinetic_energy")
        .col("mean forward speed (m/s)", "mean_speed");
    let mut worst_diverged = 0usize;
    let mut worst_non_finite = 0usize;
    let unactuated = ["hang", "drop"];
    let mut unactuated_bad = 0usize;
    for name in ["hang", "drop", "random", "trot"] {
        let all: Vec<usize> = (0..df.height()).filter(|&k| task[k] == name).collect();
        let diverged = all.iter().filter(|&&k| status[k] == "diverged").count();
        let non_finite = all
            .iter()
            .filter(|&&k| {
                ![pen[k], foot[k], z[k], x[k], ke[k]]
                    .iter()
                    .all(|v| v.is_finite())
            })
            .count();
        // A run that diverged: when, and the most contacts of any step before its kinetic
        // energy first passed BLOW_UP_JOULES (none: the controller blew up in the air, before
        // the contact solver had anything to do); its magnitudes are left out.
        let steps_run = all.len();
        let (diverged_at, contacts_before) = if diverged + non_finite > 0 {
            let blow_up = all
                .iter()
                .position(|&k| ke[k].is_nan() || ke[k] >= BLOW_UP_JOULES)
                .unwrap_or(all.len());
            (
                steps_run as f64 * dt,
                all[..blow_up].iter().map(|&k| n_c[k]).fold(0.0, f64::max),
            )
        } else {
            (f64::NAN, f64::NAN)
        };
        let ks: Vec<usize> = if diverged + non_finite > 0 {
            Vec::new()
        } else {
            all.clone()
        };
        let max_pen = ks.iter().map(|&k| 1e3 * pen[k]).fold(f64::NAN, f64::max);
        let max_foot = ks.iter().map(|&k| 1e3 * foot[k]).fold(f64::NAN, f64::max);
        let min_z = ks.iter().map(|&k| z[k]).fold(f64::NAN, f64::min);
        let max_ke = ks.iter().map(|&k| ke[k]).fold(f64::NAN, f64::max);
        let speed = match (ks.first(), ks.last()) {
            (Some(&a), Some(&b)) if b > a => (x[b] - x[a]) / ((b - a) as f64 * dt),
            _ => f64::NAN,
        };
        worst_diverged += diverged;
        worst_non_finite += non_finite;
        if unactuated.contains(&name) {
            unactuated_bad += diverged + non_finite;
        }
        t.row(vec![
            C::text(name),
            C::int(steps_run as i64),
            C::same(diverged_at, &Fmt::fixed(2)),
            C::same(contacts_before, &Fmt::int()),
            C::same(max_pen, &Fmt::fixed(1)),
            C::same(max_foot, &Fmt::fixed(1)),
            C::same(min_z, &Fmt::fixed(2)),
            C::same(max_ke, &Fmt::fixed(1)),
            C::same(speed, &Fmt::fixed(2)),
        ])?;
        r.facts()
            .num(
                format!("dt50.{name}.max_pen_mm"),
                max_pen,
                Fmt::fixed(1).unit(" mm"),
            )
            .num(
                format!("dt50.{name}.foot_pen_mm"),
                max_foot,
                Fmt::fixed(1).unit(" mm"),
            )
            .num(
                format!("dt50.{name}.min_height"),
                min_z,
                Fmt::fixed(2).unit(" m"),
            )
            .num(
                format!("dt50.{name}.speed"),
                speed,
                Fmt::fixed(2).unit(" m/s"),
            )
            .num(format!("dt50.{name}.steps"), steps_run as f64, Fmt::int())
            .num(
                format!("dt50.{name}.diverged_at"),
                diverged_at,
                Fmt::fixed(2).unit(" s"),
            )
            .num(
                format!("dt50.{name}.contacts_before"),
                contacts_before,
                Fmt::int(),
            );
    }
    r.facts()
        .num("dt50.diverged", worst_diverged as f64, Fmt::int())
        .num("dt50.non_finite", worst_non_finite as f64, Fmt::int())
        .num("dt50.unactuated_bad", unactuated_bad as f64, Fmt::int())
        .num(
            "dt50.blow_up_joules",
            BLOW_UP_JOULES,
            Fmt::sci(0).unit(" J"),
        );
    r.table(&t)
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
            100.0 * share_below(&all, AGREE_WITHIN),
            Fmt::percent(1),
        )
        .num(
            "model.no_slip.within_1pct",
            100.0 * share_below(&all_no_slip, AGREE_WITHIN),
            Fmt::percent(1),
        )
        .num("model.no_slip.steps", all_no_slip.len() as f64, Fmt::int())
        .num("model.median", quantile(&all, 0.5), Fmt::sci(1))
        .num("model.threshold", 100.0 * AGREE_WITHIN, Fmt::percent(0));
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
                C::same(share_below(&m.distances, AGREE_WITHIN), &Fmt::fixed(3)),
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
                100.0 * share_below(&all, AGREE_WITHIN),
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
