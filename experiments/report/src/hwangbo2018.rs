//! The Hwangbo, Lee and Hutter 2018 report (`reports/hwangbo2018/`): Table I (one slipping
//! contact, three methods, timed on samples recorded from the four tasks), Table II (seconds per
//! 100k steps per task, bisection-SOR against PGS), the iterations (Fig. 4), the bisection's model
//! against Coulomb's (Fig. 6) and the penetration in the hang task (Fig. 7).
//!
//! Statistics: [`crate::analysis::hwangbo2018`]. Facts: `table1.{bisection,golden_section,
//! analytical}.{us, error, mean_steps}`, `table1.{golden_over_bisection, analytical_over_bisection,
//! samples}`, `table2.<task>.<solver>.{s100k, iterations_mean, iterations_max, unconverged}`,
//! `table2.<task>.pgs_over_bisection`, `model.{within_1pct, median}`, `model.<task>.{within_1pct,
//! slipping, no_slip_within_1pct, median}`, `model.<shadow>.within_1pct`,
//! `model.<shadow>.<task>.median`, `model.no_slip.{within_1pct, steps}`,
//! `hang.<solver>.{penetration_mm_end, penetration_mm_max}`, `trot.speed`.

use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use super::ReportError;
use crate::analysis::hwangbo2018::{
    model_differences, problem_files, slipping_samples, task_rows, time_methods, TaskRow,
};
use crate::analysis::{f64s, quantile, strs};
use contactlab_core::drivers::sweep::FrictionModel;
use contactlab_lab::registry::{PluginChoice, SolverSpec};

/// Table I of the paper: microseconds per single-contact solve (one 3.6 GHz Xeon E5-1620 core).
const TABLE1: [(&str, f64); 3] = [
    ("bisection", 0.58),
    ("golden_section", 1.2),
    ("analytical", 1.6),
];

/// Table II of the paper: seconds per 100k steps, (task, bisection, PGS).
const TABLE2: [(&str, f64, f64); 4] = [
    ("trot", 1.98, 1.81),
    ("hang", 2.57, 5.92),
    ("drop", 2.62, 4.35),
    ("random", 1.90, 2.88),
];

/// The two solvers' labels in the configs.
const BISECTION: &str = "bisection-sor";
const PGS: &str = "pgs";

/// Steps of each task re-simulated to record slipping contacts (at most the tasks' own steps),
/// samples kept per task, and the timing rounds of Table I.
const SAMPLE_STEPS: usize = 3000;
const SAMPLES_PER_TASK: usize = 2500;
const TIMING_ROUNDS: usize = 21;

/// Writes `reports/hwangbo2018/` from `tasks.toml` and `model.toml`'s runs.
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
    let tasks = r.load("tasks.toml")?;
    let params = tasks.config.scene.params.clone();
    let sample_steps = SAMPLE_STEPS.min(tasks.config.scene.steps);
    table1(&mut r, &params, sample_steps)?;
    let rows = task_rows(&tasks.steps)?;
    table2(&mut r, &rows)?;
    fig4(&mut r, &rows)?;
    fig7(&mut r, &tasks.steps, &params)?;
    trot_speed(&mut r, &tasks.steps)?;
    let model = r.load("model.toml")?;
    fig6(&mut r, &model.steps)?;
    files(&mut r, root)?;
    r.finish()?;
    Ok(())
}

/// Table I: the three single-contact methods on the slipping contacts of the four tasks.
fn table1(r: &mut Report, params: &toml::Table, steps: usize) -> Result<(), ReportError> {
    let mut spec = SolverSpec::new("coulomb", BISECTION, 1e-6, 100);
    spec.optimizer = PluginChoice::named(BISECTION).with("local", "bisection");
    let mut samples = Vec::new();
    for task in ["hang", "drop", "random", "trot"] {
        let mut p = params.clone();
        p.insert("task".into(), toml::Value::String(task.into()));
        samples.extend(slipping_samples(&p, &spec, steps, SAMPLES_PER_TASK)?);
    }
    let timings = time_methods(&samples, TIMING_ROUNDS);
    r.heading(2, "One contact (Table I)");
    r.text(&format!(
        "{} slipping contacts recorded from the first {} steps of each task (bisection-SOR \
         advancing; a contact slips when its sticking impulse leaves the cone at the step's \
         answer), each solved by every method with the paper's stopping rule (the impulse \
         interval below 1e-6 N s; the quartic is exact up to its root polishing). Time: the \
         whole single-contact solve (case analysis and the slipping method), in batches over all \
         samples through `black_box`, the methods interleaved over {TIMING_ROUNDS} rounds, the \
         median round's time per solve; this machine's CPU is in the provenance table above, the \
         paper's was one 3.6 GHz Xeon E5-1620 core. Error: the largest \
         `|lambda - lambda_ref| / |lambda_ref|` against an independent reference (a 4096-point \
         scan of the angle polished by Newton's method), not against one of the three.",
        samples.len(),
        steps
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
        let published = TABLE1
            .iter()
            .find(|p| p.0 == m.method)
            .map_or(f64::NAN, |p| p.1);
        t.row(vec![
            C::code(m.method),
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
    r.facts()
        .num(
            "table1.golden_over_bisection",
            us("golden_section") / us("bisection"),
            Fmt::fixed(2),
        )
        .num(
            "table1.analytical_over_bisection",
            us("analytical") / us("bisection"),
            Fmt::fixed(2),
        )
        .num("table1.samples", samples.len() as f64, Fmt::int());
    Ok(())
}

/// Table II: seconds per 100k steps per task and solver.
fn table2(r: &mut Report, rows: &[TaskRow]) -> Result<(), ReportError> {
    r.heading(2, "Four tasks (Table II)");
    r.text(
        "Each task simulated for the steps below with each solver advancing its own copy, \
         warm-started from the previous step's impulses, stopping at 1e-6 (see `tasks.toml`). \
         Seconds per 100k steps are the whole step (contact detection, dynamics, the solve, \
         integration; no logging in the timed part) scaled from the steps run; the solver's own \
         share is beside it. Iterations are sweeps over the contacts per step with contacts.",
    );
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
    for (task, pb, pp) in TABLE2 {
        for (solver, published) in [(BISECTION, pb), (PGS, pp)] {
            let Some(row) = rows.iter().find(|x| x.task == task && x.solver == solver) else {
                continue;
            };
            t.row(vec![
                C::text(task),
                C::code(solver),
                C::int(row.steps as i64),
                C::same(published, &Fmt::fixed(2)),
                C::same(row.seconds_per_100k, &Fmt::fixed(2)),
                C::same(row.solver_seconds_per_100k, &Fmt::fixed(2)),
                C::same(row.iterations_mean, &Fmt::fixed(1)),
                C::same(row.iterations_max, &Fmt::int()),
                C::int(row.unconverged as i64),
            ])?;
            let key = format!(
                "table2.{task}.{}",
                if solver == PGS { "pgs" } else { "bisection" }
            );
            r.facts()
                .num(format!("{key}.s100k"), row.seconds_per_100k, Fmt::fixed(2))
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
        let of = |solver: &str| {
            rows.iter()
                .find(|x| x.task == task && x.solver == solver)
                .map_or(f64::NAN, |x| x.seconds_per_100k)
        };
        r.facts().num(
            format!("table2.{task}.pgs_over_bisection"),
            of(PGS) / of(BISECTION),
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
    for s in [BISECTION, PGS] {
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
        let key = if s == PGS { "pgs" } else { "bisection" };
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
/// reaches 1.5 m/s).
fn trot_speed(r: &mut Report, df: &polars::prelude::DataFrame) -> Result<(), ReportError> {
    let task = strs(df, "task")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let speed = f64s(df, "mean_forward_speed")?;
    let last = (0..df.height())
        .filter(|&k| task[k] == "trot" && solver[k] == BISECTION)
        .max_by(|&a, &b| step[a].total_cmp(&step[b]))
        .map_or(f64::NAN, |k| speed[k]);
    r.facts()
        .num("trot.speed", last, Fmt::fixed(2).unit(" m/s"));
    Ok(())
}

/// The shadows of `model.toml` beside the driver (the bisection at 1e-6): the paper's PGS on
/// Coulomb's law, the same SOR with exact Coulomb solves per contact, and the bisection itself
/// at 1e-10.
const MODEL_SHADOWS: [&str; 3] = ["pgs", "coulomb-sor", "bisection-tight"];

/// The share of `v` below `below`.
fn share_below(v: &[f64], below: f64) -> f64 {
    v.iter().filter(|&&x| x < below).count() as f64 / v.len().max(1) as f64
}

/// Fig. 6: the relative distance between the bisection's and PGS's impulses on the same steps,
/// and the checks that say what it is made of.
fn fig6(r: &mut Report, df: &polars::prelude::DataFrame) -> Result<(), ReportError> {
    let per_task = model_differences(df, MODEL_SHADOWS[0])?;
    r.heading(2, "The two contact models (Fig. 6)");
    r.text(
        "The bisection advances each task (`model.toml`); the paper's PGS solves every step's \
         problem beside it (to 1e-12). The distance is `|lambda_b - lambda_p| / |lambda_p|` over \
         the step's stacked impulses: the bisection solves eq. 8 (maximum dissipation on the \
         conic section), PGS Coulomb's law (eq. 6), which differ only where a contact slips and \
         its block `W_aa` couples normal and tangential directions. `no slip` restricts to the \
         steps where no contact slips in either answer, where the two laws coincide.",
    );
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
    model_checks(r, df)
}

/// What Fig. 6's distance is made of: every shadow of `model.toml` against the driver, so the
/// models' difference is told apart from the solvers' accuracy.
fn model_checks(r: &mut Report, df: &polars::prelude::DataFrame) -> Result<(), ReportError> {
    let mut t = Table::new(Some("model_checks.csv"))
        .col("task", "task")
        .col("shadow", "shadow")
        .col("median distance", "distance_median")
        .col("share under 1%", "share_under_1pct")
        .col("median velocity gap (m/s)", "velocity_gap_median");
    for shadow in MODEL_SHADOWS {
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
    r.text(
        "Each shadow against the driver (the bisection at 1e-6) on the same steps: \
         `coulomb-sor` is the bisection's own block SOR with an exact per-contact Coulomb solve \
         (`local = \"coulomb\"`, to 1e-10), so it solves PGS's law by the bisection's sweep; \
         `bisection-tight` is the driver's method and law at 1e-10. Where `coulomb-sor` is as \
         far from the driver as PGS is, the distance is the two laws', not PGS's; where \
         `bisection-tight` is within 1%, it is not the driver's tolerance.",
    );
    r.table(&t)?;
    Ok(())
}

/// Both drivers on the shipped problem files: each model's own violation beside the Coulomb
/// ruler's residual (the bisection solves eq. 8, which the ruler does not measure).
fn files(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let spec = |name: &str, label: &str| {
        let mut s = SolverSpec::new("coulomb", name, 1e-6, 100);
        s.optimizer = PluginChoice::named(name);
        s.label = Some(label.into());
        s
    };
    let specs = [
        (
            spec(BISECTION, BISECTION),
            FrictionModel::MaximumDissipation,
        ),
        (spec("pgs-hwangbo", PGS), FrictionModel::Coulomb),
    ];
    let rows = problem_files(&root.join("data/problems"), &specs)?;
    r.heading(
        2,
        "On problem files: each model's own residual and the Coulomb ruler's",
    );
    r.text(
        "The shipped FCLib and JSON problems (`data/problems/`; global ones through `W = H' M^-1 H`), \
         solved from zero at tolerance 1e-6. `own violation` is the summed violation of the \
         solver's own law at its answer (eq. 8 for the bisection, Coulomb's eq. 6 for PGS: cone, \
         penetration, Signorini, friction direction), the measure the bisection stops on; \
         `Coulomb residual` is the project's shared ruler, the natural-map residual of Coulomb's \
         law, which charges the bisection for every sliding contact whose `W_aa` couples normal \
         and tangential directions: a difference of models, not an error.",
    );
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
        .num("files.problems", count(BISECTION), Fmt::int())
        .num(
            "files.bisection_converged",
            converged(BISECTION),
            Fmt::int(),
        )
        .num("files.pgs_converged", converged(PGS), Fmt::int());
    r.table(&t)
}
