//! The study's two sweeps, ours beside MuJoCo's and Drake's: the ill-conditioned stack over
//! mass ratios (`stack.toml`; Le Lidec et al., T-RO 2024, sec. VI, `2cubes`) and the dragged
//! cube over time steps (`consistency.toml`), with their tables and plots.
//!
//! Metrics: per stack run, `converged_fraction`, `iterations_mean`, `drift_mm`, `collapsed`
//! (0 or 1), `collapse_time_ms` (only where it collapsed) and `penetration_mm` (while it
//! stood) ([`StackRun`]), `param` the mass ratio, the scene `stack` (sphere on sphere) or
//! `stack_face` (spheres on the face); per consistency run,
//! `position_error_m_s` (`int |x - x_exact| dt` over 1 s, [`Motion::position_error_integral`]),
//! `dt` its time step; per configuration, `consistency_slope`, the least-squares slope of that
//! error against `dt` on log-log axes ([`log_log_slope`]).

use std::collections::BTreeMap;

use polars::prelude::DataFrame;

use contactlab_runs::schema::steps;

use super::metric::{peer_model, Metric};
use crate::analysis::fidelity::{log_log_slope, Motion, PathRun, StackRun};
use crate::analysis::{f64s, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::plots::{Axis, Chart, Series};
use crate::table::{Cell as C, Table};

/// The scene names of the sweeps in `metrics.csv`.
pub const SWEEP_SCENES: [&str; 6] = [
    "stack",
    "stack_face",
    "tower",
    "consistency",
    GRASP_CONSISTENCY,
    PILE_CONSISTENCY,
];

/// The pinch grasp's consistency sweep: its scene in the rows, its config and its run.
pub const GRASP_CONSISTENCY: &str = "consistency_grasp";

/// The pile's consistency sweep: its scene in the rows, its config and its run.
pub const PILE_CONSISTENCY: &str = "consistency_pile";

/// The pile's consistency error over the phase before a cube first touches another in the
/// reference run (`PathRun::stacked`): the cubes meet only the container.
pub const BEFORE_STACKING: &str = "position_error_before_stacking_m_s";

/// When a cube first touched a cube in the reference run (s): the end of the window of
/// [`BEFORE_STACKING`].
pub const REFERENCE_STACKED: &str = "reference_stacked_s";

/// Each consistency error and the name of its log-log slope.
const ERRORS_AND_SLOPES: [(&str, &str); 2] = [
    ("position_error_m_s", "consistency_slope"),
    (BEFORE_STACKING, SLOPE_BEFORE_STACKING),
];

/// The log-log slope of [`BEFORE_STACKING`] against dt.
pub const SLOPE_BEFORE_STACKING: &str = "consistency_slope_before_stacking";

/// Whether `scene` is a time-step sweep (the dragged cube's, the grasp's or the pile's), whose
/// rows differ by `dt`.
pub fn is_consistency(scene: &str) -> bool {
    scene == "consistency" || scene == GRASP_CONSISTENCY || scene == PILE_CONSISTENCY
}

/// The stack's scenes, one per way the top cube rests: corner sphere on corner sphere, and
/// on the bottom cube's face.
const STACKS: [&str; 2] = ["stack", "stack_face"];

/// How many cubes a stack run stands (2 unless the run says).
fn cube_count(record: &contactlab_runs::store::SceneRecord) -> i64 {
    (record.parameters.get("count"))
        .and_then(|v| v.as_integer())
        .unwrap_or(2)
}

/// The scene of a stack run: `tower` for more than two cubes, `stack_face` for
/// `resting = "face"`, else `stack`.
fn stack_scene(record: &contactlab_runs::store::SceneRecord) -> &'static str {
    if cube_count(record) > 2 {
        return "tower";
    }
    match record.parameters.get("resting").and_then(|v| v.as_str()) {
        Some("face") => "stack_face",
        _ => "stack",
    }
}

/// The `param` of a stack run: the tower's cube count, else the mass ratio.
fn stack_param(record: &contactlab_runs::store::SceneRecord) -> String {
    match stack_scene(record) {
        "tower" => count_param(cube_count(record) as f64),
        _ => ratio_param(param(record, "mass_ratio")),
    }
}

/// The `param` of a tower run: its cube count as `10`.
pub fn count_param(count: f64) -> String {
    format!("{count:.0}")
}

/// The configurations drawn in the sweeps' plots: one pair per model family of ours (the
/// tables have every pair), MuJoCo's default and best, Drake's SAP at its defaults and
/// near-rigid, and TAMSI.
pub(crate) const DRAWN: [(&str, &str); 13] = [
    ("contactlab", "coulomb+pgs"),
    ("contactlab", "coulomb+bisection-sor"),
    ("contactlab", "implicit-ncp+todorov"),
    ("contactlab", "mncp+newton"),
    ("contactlab", "natural-map+plm"),
    ("contactlab", "min-map+newton"),
    ("contactlab", "mlcp-fb+plm"),
    ("contactlab", "sap+newton-merit"),
    ("mujoco", "elliptic-impratio1-noslip0"),
    ("mujoco", "elliptic-tc2dt-impratio10-noslip10"),
    ("drake", "sap"),
    ("drake", "sap-k1e12-taudt"),
    ("drake", "tamsi"),
];

/// The `param` of a stack run: its mass ratio as `1e3`.
pub fn ratio_param(ratio: f64) -> String {
    format!("{ratio:e}")
}

/// Each (run, solver)'s friction model, from the steps frame.
pub fn models(df: &DataFrame) -> Result<BTreeMap<(u64, String), String>, ReportError> {
    let (runs, solvers, models) = (
        f64s(df, steps::RUN)?,
        strs(df, steps::SOLVER)?,
        strs(df, steps::MODEL)?,
    );
    Ok((0..df.height())
        .map(|k| ((runs[k] as u64, solvers[k].clone()), models[k].clone()))
        .collect())
}

/// Our pair's formulation and optimizer from its `[every_pair]` label.
pub fn pair(label: &str) -> (String, String) {
    label
        .split_once('+')
        .map(|(f, o)| (f.to_string(), o.to_string()))
        .unwrap_or_default()
}

/// A number of a run's parameters, else of its constants (NaN when absent).
pub fn param(record: &contactlab_runs::store::SceneRecord, key: &str) -> f64 {
    record
        .parameters
        .get(key)
        .and_then(|v| v.as_float())
        .or_else(|| record.constants.get(key).copied())
        .unwrap_or(f64::NAN)
}

/// Our stack runs' metrics, of `stack.toml` or `tower.toml`.
pub fn ours_stack(r: &mut Report, file: &str) -> Result<Vec<Metric>, ReportError> {
    let run = r.load(file)?;
    let df = &run.steps;
    let model = models(df)?;
    let mut rows: Vec<Metric> = Vec::new();
    // SAP's near-rigid overlap, estimated from the scene's constants (one row per ratio).
    for record in &run.meta.scenes {
        let ratio = stack_param(record);
        let scene = stack_scene(record);
        if rows.iter().any(|m| m.param == ratio && m.scene == scene) {
            continue;
        }
        let estimate = record
            .constants
            .get("sap_penetration_estimate")
            .copied()
            .unwrap_or(f64::NAN);
        rows.push(Metric {
            scene: scene.into(),
            engine: "estimate".into(),
            formulation: "sap".into(),
            optimizer: String::new(),
            model: "regularized".into(),
            label: "sap-near-rigid".into(),
            param: ratio,
            dt: param(record, "dt"),
            metric: "penetration_mm".into(),
            value: 1e3 * estimate,
            analytic: f64::NAN,
        });
    }
    for ((index, label), s) in StackRun::all(df)? {
        let Some(record) = run.meta.scenes.iter().find(|c| c.run == index) else {
            continue;
        };
        let (formulation, optimizer) = pair(&label);
        let base = Metric {
            scene: stack_scene(record).into(),
            engine: "contactlab".into(),
            formulation,
            optimizer,
            model: model
                .get(&(index, label.clone()))
                .cloned()
                .unwrap_or_default(),
            label,
            param: stack_param(record),
            dt: param(record, "dt"),
            metric: String::new(),
            value: f64::NAN,
            analytic: f64::NAN,
        };
        for (metric, value, analytic) in [
            ("converged_fraction", s.converged_fraction(), f64::NAN),
            ("iterations_mean", s.iterations_mean(), f64::NAN),
            ("drift_mm", s.drift_mm(), 0.0),
            ("drift_top_mm", s.drift_top_mm(), 0.0),
            ("collapsed", s.collapsed(), 0.0),
            ("collapse_time_ms", 1e3 * s.collapse_time(), f64::NAN),
            ("penetration_mm", s.penetration_mm(), 0.0),
            (
                "duration_s",
                s.t.last().copied().unwrap_or(f64::NAN),
                f64::NAN,
            ),
        ] {
            if value.is_nan() {
                continue;
            }
            rows.push(Metric {
                metric: metric.into(),
                value,
                analytic,
                ..base.clone()
            });
        }
    }
    Ok(rows)
}

/// Our consistency runs' metrics (the slopes come from [`slopes`]).
pub fn ours_consistency(r: &mut Report) -> Result<Vec<Metric>, ReportError> {
    let run = r.load("consistency.toml")?;
    let df = &run.steps;
    let model = models(df)?;
    let mut rows = Vec::new();
    for ((index, label), m) in Motion::all(df)? {
        let Some(record) = run.meta.scenes.iter().find(|c| c.run == index) else {
            continue;
        };
        let (formulation, optimizer) = pair(&label);
        let duration = m.t.last().copied().unwrap_or(f64::NAN);
        rows.push(Metric {
            scene: "consistency".into(),
            engine: "contactlab".into(),
            formulation,
            optimizer,
            model: model
                .get(&(index, label.clone()))
                .cloned()
                .unwrap_or_default(),
            label,
            param: String::new(),
            dt: param(record, "dt"),
            metric: "position_error_m_s".into(),
            value: m.position_error_integral(),
            analytic: 0.0,
        });
        let last = rows.last().cloned();
        if let Some(last) = last {
            rows.push(Metric {
                metric: "duration_s".into(),
                value: duration,
                analytic: f64::NAN,
                ..last
            });
        }
    }
    Ok(rows)
}

/// A consistency sweep without a closed form (`<scene>.toml`, when it has run: the grasp's,
/// [`GRASP_CONSISTENCY`], and the pile's, [`PILE_CONSISTENCY`]): per pair and time step,
/// ContactBench's `int |p - p_ref| dt` of the centre of mass the scene records as `x`, `y`, `z`
/// (the plate's, the pile's) against the pair's own run at the sweep's smallest time step (the
/// reference), and each run's duration.
pub fn ours_path_consistency(r: &mut Report, scene: &str) -> Result<Vec<Metric>, ReportError> {
    let file = format!("{scene}.toml");
    if !r.config_file(&file).exists() {
        return Ok(Vec::new());
    }
    let Some(run) = r.load_if_run(&file)? else {
        return Ok(Vec::new());
    };
    let df = &run.steps;
    let model = models(df)?;
    let paths = PathRun::all(df)?;
    let mut by_pair: BTreeMap<String, Vec<(f64, u64)>> = BTreeMap::new();
    for (index, label) in paths.keys() {
        if let Some(record) = run.meta.scenes.iter().find(|c| c.run == *index) {
            by_pair
                .entry(label.clone())
                .or_default()
                .push((param(record, "dt"), *index));
        }
    }
    let mut rows = Vec::new();
    for (label, mut runs) in by_pair {
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(&(_, reference)) = runs.first() else {
            continue;
        };
        let reference = &paths[&(reference, label.clone())];
        let (formulation, optimizer) = pair(&label);
        for &(dt, index) in &runs[1..] {
            let path = &paths[&(index, label.clone())];
            let base = Metric {
                scene: scene.into(),
                engine: "contactlab".into(),
                formulation: formulation.clone(),
                optimizer: optimizer.clone(),
                model: model
                    .get(&(index, label.clone()))
                    .cloned()
                    .unwrap_or_default(),
                label: label.clone(),
                param: String::new(),
                dt,
                metric: "position_error_m_s".into(),
                value: path.distance_integral(reference),
                analytic: 0.0,
            };
            rows.push(Metric {
                metric: "duration_s".into(),
                value: path.t.last().copied().unwrap_or(f64::NAN),
                analytic: f64::NAN,
                ..base.clone()
            });
            if let Some(until) = reference.stacked {
                rows.push(Metric {
                    metric: BEFORE_STACKING.into(),
                    value: path.distance_integral_until(reference, until),
                    ..base.clone()
                });
                rows.push(Metric {
                    metric: REFERENCE_STACKED.into(),
                    value: until,
                    analytic: f64::NAN,
                    ..base.clone()
                });
            }
            rows.push(base);
        }
    }
    Ok(rows)
}

/// The harness's stack, tower and consistency records as metrics.
pub fn peer_rows(df: &DataFrame) -> Result<Vec<Metric>, ReportError> {
    let names: [(&str, &str, f64, f64); 12] = [
        ("converged_fraction", "converged_fraction", 1.0, f64::NAN),
        ("iterations_per_step_mean", "iterations_mean", 1.0, f64::NAN),
        ("drift_mm", "drift_mm", 1.0, 0.0),
        ("drift_top_mm", "drift_top_mm", 1.0, 0.0),
        ("collapsed", "collapsed", 1.0, 0.0),
        ("collapse_time_s", "collapse_time_ms", 1e3, f64::NAN),
        ("penetration_max_mm", "penetration_mm", 1.0, 0.0),
        ("duration_s", "duration_s", 1.0, f64::NAN),
        ("consistency_error_m_s", "position_error_m_s", 1.0, 0.0),
        (
            "consistency_error_before_stacking_m_s",
            BEFORE_STACKING,
            1.0,
            0.0,
        ),
        ("reference_stacked_s", REFERENCE_STACKED, 1.0, f64::NAN),
        (
            "seconds_per_step_median",
            "seconds_per_step_median",
            1.0,
            f64::NAN,
        ),
    ];
    harness_rows(df, |s| SWEEP_SCENES.contains(&s), &names)
}

/// The harness's records of the scenes `keep` takes as metrics, one per finite value of
/// `names`' columns: `(column, metric, scale, exact value)`, the value the column's times the
/// scale. A record's `param` is its cube count (tower, pile) or mass ratio (stacks).
pub(super) fn harness_rows(
    df: &DataFrame,
    keep: impl Fn(&str) -> bool,
    names: &[(&str, &str, f64, f64)],
) -> Result<Vec<Metric>, ReportError> {
    let (scene, engine, config) = (strs(df, "scene")?, strs(df, "engine")?, strs(df, "config")?);
    let dt = f64s(df, "dt")?;
    let column = |name: &str| f64s(df, name).unwrap_or_else(|_| vec![f64::NAN; df.height()]);
    let param = column("param");
    let values: Vec<Vec<f64>> = names
        .iter()
        .map(|(c, _, scale, _)| column(c).iter().map(|v| scale * v).collect())
        .collect();
    let mut rows = Vec::new();
    for k in (0..df.height()).filter(|&k| keep(&scene[k])) {
        let (family, model) = peer_model(&engine[k], &config[k]);
        for (i, (_, metric, _, analytic)) in names.iter().enumerate() {
            if values[i][k].is_nan() {
                continue;
            }
            rows.push(Metric {
                scene: scene[k].clone(),
                engine: engine[k].clone(),
                formulation: family.clone(),
                optimizer: config[k].clone(),
                model: model.clone(),
                label: config[k].clone(),
                param: match scene[k].as_str() {
                    "tower" | "pile" => count_param(param[k]),
                    s if s.starts_with("stack") => ratio_param(param[k]),
                    _ => String::new(),
                },
                dt: dt[k],
                metric: metric.to_string(),
                value: values[i][k],
                analytic: *analytic,
            });
        }
    }
    Ok(rows)
}

/// Per configuration and consistency error, the log-log slope of the error against `dt`.
pub fn slopes(rows: &[Metric]) -> Vec<Metric> {
    let mut by: BTreeMap<(&str, String, String, String), Vec<&Metric>> = BTreeMap::new();
    for m in rows.iter().filter(|m| is_consistency(&m.scene)) {
        if let Some((_, slope)) = ERRORS_AND_SLOPES.iter().find(|(e, _)| m.metric == *e) {
            by.entry((slope, m.scene.clone(), m.engine.clone(), m.label.clone()))
                .or_default()
                .push(m);
        }
    }
    by.into_iter()
        .filter_map(|((slope, ..), ms)| {
            let first = (*ms.first()?).clone();
            let dt: Vec<f64> = ms.iter().map(|m| m.dt).collect();
            let err: Vec<f64> = ms.iter().map(|m| m.value).collect();
            Some(Metric {
                metric: slope.into(),
                value: log_log_slope(&dt, &err),
                analytic: 1.0,
                dt: f64::NAN,
                ..first
            })
        })
        .collect()
}

/// The rows' configurations in order of appearance: engine, family, label, model.
pub(super) fn configurations(rows: &[&Metric]) -> Vec<(String, String, String, String)> {
    let mut keys = Vec::new();
    for m in rows {
        let key = (
            m.engine.clone(),
            m.formulation.clone(),
            m.label.clone(),
            m.model.clone(),
        );
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// A table of one metric with a column per value of `axis` (`param` or `dt`), shown as
/// `tables.<name>`.
pub(super) fn pivot(
    r: &mut Report,
    name: &str,
    rows: &[&Metric],
    metric: &str,
    columns: &[(String, String)],
    fmt: &Fmt,
    extra: Option<&str>,
) -> Result<(), ReportError> {
    let mut t = Table::new(None)
        .md_col("engine")
        .md_col("formulation / configuration")
        .md_col(steps::ROLE_DRIVER)
        .md_col(steps::MODEL);
    for (_, head) in columns {
        t = t.md_col(head);
    }
    if let Some(e) = extra {
        t = t.md_col(e);
    }
    let with: Vec<&Metric> = rows
        .iter()
        .copied()
        .filter(|m| m.metric == metric)
        .collect();
    for (engine, family, label, model) in configurations(&with) {
        let mut row = vec![
            C::text(engine.clone()),
            C::code(family),
            C::code(label.clone()),
            C::text(model),
        ];
        let find = |metric: &str, key: Option<&str>| {
            rows.iter()
                .find(|m| {
                    m.engine == engine
                        && m.label == label
                        && m.metric == metric
                        && key.is_none_or(|k| column_key(m) == k)
                })
                .map(|m| m.value)
        };
        for (key, _) in columns {
            row.push(find(metric, Some(key)).map_or(C::text("-"), |v| C::same(v, fmt)));
        }
        if let Some(e) = extra {
            row.push(find(e, None).map_or(C::text("-"), |v| C::same(v, &Fmt::fixed(2))));
        }
        t.row(row)?;
    }
    r.show_table(name, &t)
}

/// The column a sweep row belongs to: its mass ratio or cube count, or its time step.
fn column_key(m: &Metric) -> String {
    if is_consistency(&m.scene) {
        format!("{:e}", m.dt)
    } else {
        m.param.clone()
    }
}

/// The series of `metric` against the sweep's axis for the drawn configurations.
fn series(rows: &[&Metric], metric: &str, x: impl Fn(&Metric) -> f64) -> Vec<Series> {
    DRAWN
        .iter()
        .filter_map(|(engine, label)| {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|m| m.engine == *engine && m.label == *label && m.metric == metric)
                .map(|m| (x(m), m.value))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!pts.is_empty()).then(|| (format!("{engine} {label}"), pts))
        })
        .collect()
}

/// The stack's tables and plots, one set per way the top cube rests ([`STACKS`]); the
/// stack scenes shown.
pub fn stack_section(r: &mut Report, rows: &[Metric]) -> Result<Vec<String>, ReportError> {
    let mut shown = Vec::new();
    for scene in STACKS {
        let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == scene).collect();
        if !here.is_empty() {
            one_stack(r, scene, &here)?;
            shown.push(scene.to_string());
        }
    }
    Ok(shown)
}

/// One column per distinct `param` of the rows, smallest first, as `(key, heading)` from the
/// value: a stack's mass ratios, a tower's cube counts.
fn param_columns(
    here: &[&Metric],
    column: impl Fn(f64) -> (String, String),
) -> Vec<(String, String)> {
    let mut values: Vec<f64> = here.iter().filter_map(|m| m.param.parse().ok()).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    values.into_iter().map(column).collect()
}

/// A sweep's tables, `tables.<scene>_<metric>` for each of `metrics` with its format, one
/// column per `columns`.
pub(super) fn sweep_tables(
    r: &mut Report,
    scene: &str,
    here: &[&Metric],
    columns: &[(String, String)],
    metrics: &[(&str, Fmt)],
) -> Result<(), ReportError> {
    for (metric, fmt) in metrics {
        pivot(
            r,
            &format!("{scene}_{metric}"),
            here,
            metric,
            columns,
            fmt,
            None,
        )?;
    }
    Ok(())
}

/// One stack scene's tables (`tables.<scene>_<metric>`), and for the sphere-on-sphere stack
/// the plots.
fn one_stack(r: &mut Report, scene: &str, here: &[&Metric]) -> Result<(), ReportError> {
    let columns = param_columns(here, |q| {
        (ratio_param(q), format!("ratio {}", ratio_param(q)))
    });
    let metrics = [
        ("converged_fraction", Fmt::fixed(2)),
        ("drift_mm", Fmt::sci(1)),
        ("collapse_time_ms", Fmt::fixed(0)),
        ("penetration_mm", Fmt::sci(1)),
    ];
    sweep_tables(r, scene, here, &columns, &metrics)?;
    if scene == "stack" {
        stack_plots(r, here)?;
    }
    Ok(())
}

/// A column per cube count of the rows (`param`), smallest first: key and heading.
pub(super) fn count_columns(here: &[&Metric]) -> Vec<(String, String)> {
    param_columns(here, |n| {
        (count_param(n), format!("{} cubes", count_param(n)))
    })
}

/// The tower's tables (`tables.tower_<metric>`), a column per cube count; whether it ran.
pub fn tower_section(r: &mut Report, rows: &[Metric]) -> Result<bool, ReportError> {
    let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == "tower").collect();
    if here.is_empty() {
        return Ok(false);
    }
    let columns = count_columns(&here);
    let metrics = [
        ("converged_fraction", Fmt::fixed(3)),
        ("drift_top_mm", Fmt::sci(1)),
        ("collapse_time_ms", Fmt::fixed(0)),
        ("penetration_mm", Fmt::sci(1)),
    ];
    sweep_tables(r, "tower", &here, &columns, &metrics)?;
    Ok(true)
}

/// The sphere-on-sphere stack's drift and our pairs' converged fraction against the mass
/// ratio (`plots.stack_drift`, `plots.stack_convergence`).
fn stack_plots(r: &mut Report, here: &[&Metric]) -> Result<(), ReportError> {
    let x = |m: &Metric| m.param.parse().unwrap_or(f64::NAN);
    r.show_plot(
        "stack_drift",
        &Chart::new(
            "Stack at rest: largest drift",
            Axis::log("mass ratio m_top / m_bottom"),
            Axis::log("drift (mm)"),
        )
        .legend_upper_left(),
        &series(here, "drift_mm", x),
    )?;
    let ours: Vec<&Metric> = here
        .iter()
        .copied()
        .filter(|m| m.engine == "contactlab")
        .collect();
    r.show_plot(
        "stack_convergence",
        &Chart::new(
            "Stack at rest: converged fraction",
            Axis::log("mass ratio m_top / m_bottom"),
            Axis::linear("converged fraction"),
        ),
        &series(&ours, "converged_fraction", x),
    )
}

/// A consistency sweep's table and plot (`tables.<scene>`, `plots.<scene>`, `scene` being
/// `consistency`, [`GRASP_CONSISTENCY`] or [`PILE_CONSISTENCY`]), and where the rows have it
/// the error before stacking's (`<scene>_before_stacking`); whether it ran.
pub fn consistency_section(
    r: &mut Report,
    rows: &[Metric],
    scene: &str,
    title: &str,
) -> Result<bool, ReportError> {
    let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == scene).collect();
    if here.is_empty() {
        return Ok(false);
    }
    let mut dts: Vec<f64> = here
        .iter()
        .filter(|m| m.metric == "position_error_m_s")
        .map(|m| m.dt)
        .collect();
    dts.sort_by(f64::total_cmp);
    dts.dedup();
    let columns: Vec<(String, String)> = dts
        .iter()
        .map(|&d| (format!("{d:e}"), format!("dt {d:e}")))
        .collect();
    pivot(
        r,
        scene,
        &here,
        "position_error_m_s",
        &columns,
        &Fmt::sci(1),
        Some("consistency_slope"),
    )?;
    r.show_plot(
        scene,
        &Chart::new(
            &format!("{title}: position error against dt"),
            Axis::log("dt (s)"),
            Axis::log("error (m s)"),
        )
        .legend_upper_left(),
        &series(&here, "position_error_m_s", |m| m.dt),
    )?;
    if here.iter().any(|m| m.metric == BEFORE_STACKING) {
        let name = format!("{scene}_before_stacking");
        let slope = Some(SLOPE_BEFORE_STACKING);
        pivot(
            r,
            &name,
            &here,
            BEFORE_STACKING,
            &columns,
            &Fmt::sci(1),
            slope,
        )?;
        r.show_plot(
            &name,
            &Chart::new(
                &format!("{title} before stacking: error against dt"),
                Axis::log("dt (s)"),
                Axis::log("error (m s)"),
            )
            .legend_upper_left(),
            &series(&here, BEFORE_STACKING, |m| m.dt),
        )?;
    }
    Ok(true)
}
