//! The physical-fidelity report (`reports/fidelity/`): what each contact model does to a
//! simulated motion, every formulation of this workspace beside MuJoCo and Drake, against the
//! motions' closed forms (after Le Lidec et al., "Contact Models in Robotics: a Comparative
//! Analysis", T-RO 2024, who compare models inside one code; here the engines run themselves).
//!
//! Reads our runs of the `fidelity` scene ([`OUR_CONFIGS`]) and the other-engine run
//! `engines.toml` (`experiments/peers/fidelity.py`), computes the metrics of
//! [`crate::analysis::fidelity`] for our rows (the harness computes the same for its own), and
//! writes one table per scene and `metrics.csv` in long form, one row per number:
//! `scene, engine, formulation, optimizer, model, param, dt, metric, value, analytic`.
//!
//! The page's prose and layout are `experiments/configs/fidelity/templates/report.md` and the
//! sections it includes ([`crate::template`]); this module computes its tables, plots and
//! facts, and which sections the page has (`Sections`). Every fact, with its value, is listed
//! in `reports/fidelity/facts.md`.

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::schema::{common, engines, steps};
use contactlab_runs::RunConfig;
use polars::prelude::DataFrame;

use crate::analysis::fidelity::{Motion, SPEED_THRESHOLD};
use crate::analysis::{f64s, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

mod grasp;
mod metric;
mod motions;
mod pile;
mod sweeps;
mod threshold;

use metric::peer_model;
pub use metric::Metric;

/// Our runs of the fidelity setups.
/// (The sweeps' runs, `stack.toml` and `consistency.toml`, are read by their own section.)
pub const OUR_CONFIGS: [&str; 5] = [
    "slides.toml",
    "slopes.toml",
    "slopes_margin0.toml",
    "holds.toml",
    "drops.toml",
];

/// The drops' own metrics ([`crate::analysis::fidelity::drop_metrics`]).
const DROP: [&str; 5] = [
    "touch_time_s",
    "bounce_height_mm",
    "contact_time_s",
    "penetration_max_mm",
    "rest_penetration_mm",
];

/// The scenes in the report's order, with the metrics each one's table shows.
pub const SCENES: [(&str, &[&str]); 12] = [
    (
        "sliding_cube",
        &[
            "stop_time_s",
            "stop_distance_m",
            "max_lift_mm",
            "lift_over_estimate",
        ],
    ),
    (
        "sliding_cube_diagonal",
        &["stop_time_s", "stop_distance_m", "max_lift_mm"],
    ),
    ("dragged_cube", &["breakaway_time_s", "max_lift_mm"]),
    (
        "slope_15",
        &["creep_mm", "creep_after_1s_mm", "max_lift_mm"],
    ),
    (
        "slope_30",
        &[
            "acceleration_error",
            "dissipation_angle_deg",
            "max_lift_mm",
            "lift_over_estimate",
        ],
    ),
    (
        "slope_15_margin0",
        &["creep_mm", "creep_after_1s_mm", "max_lift_mm"],
    ),
    (
        "slope_30_margin0",
        &[
            "acceleration_error",
            "dissipation_angle_deg",
            "max_lift_mm",
            "lift_over_estimate",
        ],
    ),
    ("wall_press", &["creep_mm", "creep_after_1s_mm"]),
    ("rolling_sphere", &["acceleration_error"]),
    ("drop_cube", &DROP),
    ("drop_sphere", &DROP),
    ("pinch_grasp", &grasp::METRICS),
];

/// The columns every scene's table adds after its own metrics.
const SHARED: [&str; 3] = [
    "converged_fraction",
    "residual_median",
    "time_ratio_to_mujoco",
];

/// Metrics every run reports in `metrics.csv` without a column of the scene's table: the
/// span simulated, a step's time, and MuJoCo's stop lag with its prediction.
const CSV_ONLY: [&str; 5] = [
    "seconds_per_step_median",
    "duration_s",
    "stop_lag_s",
    "stop_lag_predicted_s",
    "friction_damping_rate_per_s",
];

/// The contact measures every scene's table shows (see the report's introduction).
const CONTACT: [&str; 4] = [
    "signorini_max",
    "gap_lambda_max",
    "normal_work_J",
    "friction_ratio_max",
];

/// MuJoCo's default configuration: the one every time ratio divides by.
pub const MUJOCO_DEFAULT: &str = "elliptic-impratio1-noslip0";

/// Per scene, the exact value of each of its metrics.
type Exact = BTreeMap<String, BTreeMap<String, f64>>;

/// The scene's name from a run's parameters (`slope` with its angle becomes `slope_15`, and
/// `slope_15_margin0` with `margin = 0`: the speculative reach alone).
fn scene_name(params: &toml::Table) -> String {
    let setup = params.get("setup").and_then(|v| v.as_str()).unwrap_or("");
    if setup == "slope" {
        let deg = params
            .get("slope_deg")
            .and_then(|v| v.as_float())
            .unwrap_or(f64::NAN);
        let margin = params.get("margin").and_then(|v| v.as_float());
        if margin == Some(0.0) {
            format!("slope_{deg:.0}_margin0")
        } else {
            format!("slope_{deg:.0}")
        }
    } else {
        setup.to_string()
    }
}

/// The exact values of a scene's metrics from a run's constants and parameters.
fn analytic(scene: &str, c: &BTreeMap<String, f64>, p: &toml::Table) -> BTreeMap<String, f64> {
    let get = |k: &str| c.get(k).copied().unwrap_or(f64::NAN);
    let num = |k: &str| p.get(k).and_then(|v| v.as_float()).unwrap_or(f64::NAN);
    let mut out = BTreeMap::new();
    match scene {
        "sliding_cube" | "sliding_cube_diagonal" => {
            out.insert("stop_time_s", get("stop_time_exact"));
            out.insert("stop_distance_m", get("stop_distance_exact"));
        }
        "dragged_cube" => {
            // The exact speed (F'/2m)(t - t0)^2 reaches the threshold sqrt(2 m v / F') after t0.
            let lag = (2.0 * num("mass") * SPEED_THRESHOLD / num("force_rate")).sqrt();
            out.insert("breakaway_time_s", get("breakaway_time_exact") + lag);
        }
        "slope_15" | "slope_15_margin0" | "wall_press" => {
            out.insert("creep_mm", 0.0);
            out.insert("creep_after_1s_mm", 0.0);
        }
        // Restitution 0: the body stops at the touch and stays on the plane.
        "drop_cube" | "drop_sphere" => {
            out.insert("touch_time_s", get("touch_time_exact"));
            for metric in &DROP[1..] {
                out.insert(metric, 0.0);
            }
        }
        _ => {
            out.insert("acceleration_error", 0.0);
            out.insert("dissipation_angle_deg", 0.0);
        }
    }
    if !is_drop(scene) {
        out.insert("max_lift_mm", 0.0);
    }
    out.insert("signorini_max", 0.0);
    out.insert("gap_lambda_max", 0.0);
    if !is_drop(scene) {
        // An impact's normal impulse removes the body's energy: no exact zero there.
        out.insert("normal_work_J", 0.0);
    }
    out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// The exact answer of the integrator, where it differs from the continuous one: symplectic
/// Euler (`x += dt v_{k+1}`) stops the sliding cube after `v0^2 / (2 mu g) - v0 dt / 2`, short
/// of the continuous distance by half a step's travel, whatever the contact model. A row of
/// engine `exact`, label `symplectic-euler`, its `analytic` the continuous value.
fn discrete_exact(scene: &str, c: &BTreeMap<String, f64>, p: &toml::Table) -> Option<Metric> {
    if !scene.starts_with("sliding_cube") {
        return None;
    }
    let num = |k: &str| p.get(k).and_then(|v| v.as_float()).unwrap_or(f64::NAN);
    let continuous = c.get("stop_distance_exact").copied().unwrap_or(f64::NAN);
    Some(Metric {
        scene: scene.to_string(),
        engine: "exact".into(),
        formulation: "discrete".into(),
        optimizer: String::new(),
        model: "-".into(),
        label: "symplectic-euler".into(),
        param: String::new(),
        dt: num("dt"),
        metric: "stop_distance_m".into(),
        value: continuous - 0.5 * num("v0") * num("dt"),
        analytic: continuous,
    })
}

/// Whether the scene is a drop (its lift starts at the drop height: no lift metrics).
fn is_drop(scene: &str) -> bool {
    scene.starts_with("drop_")
}

/// Our metrics of one run's driver; `dt` and `mu` of the run scale Castro et al.'s lift
/// estimate.
fn our_metrics(
    scene: &str,
    m: &Motion,
    acceleration_exact: f64,
    dt: f64,
    mu: f64,
) -> Vec<(String, f64)> {
    let lift = [
        ("max_lift_mm", m.max_lift_mm()),
        ("lift_over_estimate", m.lift_over_estimate(dt, mu)),
    ];
    let mut out = vec![
        ("converged_fraction", m.converged_fraction()),
        ("residual_median", m.residual_median()),
        ("seconds_per_step_median", m.step_seconds_median()),
        ("signorini_max", m.signorini_max()),
        ("gap_lambda_max", m.gap_lambda_max()),
        ("normal_work_J", m.normal_work()),
        ("friction_ratio_max", m.friction_ratio_max()),
    ];
    match scene {
        "sliding_cube" | "sliding_cube_diagonal" => {
            out.push(("stop_time_s", m.stop_time()));
            out.push(("stop_distance_m", m.stop_distance()));
        }
        "dragged_cube" => out.push(("breakaway_time_s", m.breakaway_time())),
        "slope_15" | "slope_15_margin0" | "wall_press" => {
            out.push(("creep_mm", m.creep_mm()));
            out.push(("creep_after_1s_mm", m.creep_after_mm(1.0)));
        }
        "drop_cube" | "drop_sphere" => {
            let d = m.drop();
            out.extend(DROP.into_iter().zip([
                d.touch_time,
                d.bounce_height_mm,
                d.contact_time,
                d.penetration_max_mm,
                d.rest_penetration_mm,
            ]));
        }
        _ => {
            out.push((
                "acceleration_error",
                m.acceleration() / acceleration_exact - 1.0,
            ));
            out.push(("dissipation_angle_deg", m.dissipation_angle_median()));
        }
    }
    if !is_drop(scene) {
        out.extend(lift);
    }
    out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// What our runs give the report: the metrics, per scene its exact values, the drawn motions
/// and the closed forms they are drawn beside.
struct Ours {
    rows: Vec<Metric>,
    exact: Exact,
    traces: motions::Traces,
    closed_forms: motions::ExactMotions,
}

/// A number of a run's parameters, NaN when absent.
fn float_param(p: &toml::Table, key: &str) -> f64 {
    p.get(key).and_then(|v| v.as_float()).unwrap_or(f64::NAN)
}

/// Our runs' metrics, per scene its exact values, and the drawn motions.
fn ours(r: &mut Report) -> Result<Ours, ReportError> {
    let mut rows = Vec::new();
    let mut exact = BTreeMap::new();
    let mut traces = motions::Traces::new();
    let mut closed_forms = motions::ExactMotions::default();
    for file in OUR_CONFIGS {
        let run = r.load(file)?;
        let df = &run.steps;
        let (runs, roles, solvers) = (
            f64s(df, steps::RUN)?,
            strs(df, steps::ROLE)?,
            strs(df, steps::SOLVER)?,
        );
        let models = strs(df, steps::MODEL)?;
        let specs = run.config.driver_specs();
        let motions = Motion::all(df)?;
        for record in &run.meta.scenes {
            let scene = scene_name(&record.parameters);
            closed_forms.read(&scene, &record.constants, &record.parameters);
            let values = analytic(&scene, &record.constants, &record.parameters);
            exact.insert(scene.clone(), values.clone());
            if let Some(m) = discrete_exact(&scene, &record.constants, &record.parameters) {
                if !rows
                    .iter()
                    .any(|r: &Metric| r.scene == m.scene && r.engine == "exact")
                {
                    rows.push(m);
                }
            }
            // The span each scene simulates (a slide is shorter than a hold), for the findings.
            if let Some(d) = record.parameters.get("duration").and_then(|v| v.as_float()) {
                r.facts()
                    .num(format!("{scene}.duration_s"), d, Fmt::fixed(1).unit(" s"));
            }
            let dt = float_param(&record.parameters, "dt");
            let Some(k) = (0..df.height())
                .find(|&k| runs[k] as u64 == record.run && roles[k] == steps::ROLE_DRIVER)
            else {
                continue;
            };
            let label = solvers[k].clone();
            // A labelled driver names its pair in the config; an `[every_pair]` driver's label
            // is the pair itself (`formulation+optimizer`).
            let (formulation, optimizer) = match specs.iter().find(|s| s.name() == label) {
                Some(s) => (s.formulation.name.clone(), s.optimizer.name.clone()),
                None => label
                    .split_once('+')
                    .map(|(f, o)| (f.to_string(), o.to_string()))
                    .unwrap_or_default(),
            };
            let motion = motions.get(&(record.run, label.clone())).ok_or_else(|| {
                ReportError::MissingData(format!("rows of run {}, solver `{label}`", record.run))
            })?;
            if motions::drawn(&scene, "contactlab", &label) {
                let key = (scene.clone(), "contactlab".to_string(), label.clone());
                traces.insert(key, motions::our_trace(motion));
            }
            let acceleration = record
                .constants
                .get("acceleration_exact")
                .copied()
                .unwrap_or(f64::NAN);
            let mu = float_param(&record.parameters, "mu");
            let duration = float_param(&record.parameters, "duration");
            let measures = our_metrics(&scene, motion, acceleration, dt, mu);
            for (metric, value) in measures
                .into_iter()
                .chain([("duration_s".into(), duration)])
            {
                rows.push(Metric {
                    scene: scene.clone(),
                    engine: "contactlab".into(),
                    formulation: formulation.clone(),
                    optimizer: optimizer.clone(),
                    model: models[k].clone(),
                    label: label.clone(),
                    param: String::new(),
                    dt,
                    analytic: values.get(&metric).copied().unwrap_or(f64::NAN),
                    metric,
                    value,
                });
            }
        }
    }
    Ok(Ours {
        rows,
        exact,
        traces,
        closed_forms,
    })
}

/// A peer run that raised instead of finishing: scene, engine, configuration, its sweep value
/// (mass ratio or time step, empty otherwise) and the first line of the error.
type Failure = [String; 5];

/// What the other-engine run measured: the metrics (the setups' and the sweeps'), the drawn
/// motions and the runs that failed.
struct Peers {
    rows: Vec<Metric>,
    traces: motions::Traces,
    failures: Vec<Failure>,
    /// Why Drake has no rows (the run went without `pydrake`), when it has none.
    drake_absent: Option<String>,
}

/// MuJoCo's and Drake's measures, or why the run did not measure.
type PeerRun = Result<Peers, String>;

/// MuJoCo's and Drake's rows and traces (see [`PeerRun`]).
fn engines(r: &mut Report, root: &Path, exact: &Exact) -> Result<PeerRun, ReportError> {
    let cfg = EnginesConfig::load(&r.config_file("engines.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    if let Ok(why) = strs(&df, engines::SKIPPED) {
        return Ok(Err(why.first().cloned().unwrap_or_default()));
    }
    let mut rows = engine_rows(&df, exact)?;
    rows.extend(sweeps::peer_rows(&df)?);
    rows.extend(pile::peer_rows(&df)?);
    let drake_absent = (!strs(&df, "engine")?.iter().any(|e| e == "drake")).then(|| {
        strs(&df, "missing_modules")
            .ok()
            .and_then(|m| m.first().cloned())
            .filter(|m| !m.is_empty())
            .map_or("the harness ran without it".to_string(), |m| {
                format!("missing Python module {m}")
            })
    });
    Ok(Ok(Peers {
        rows,
        traces: motions::peer_traces(&df)?,
        failures: failures(&df)?,
        drake_absent,
    }))
}

/// The harness's records with an `error` (a run that raised: Drake's solvers throw when they do
/// not converge).
fn failures(df: &DataFrame) -> Result<Vec<Failure>, ReportError> {
    let Ok(errors) = strs(df, "error") else {
        return Ok(Vec::new());
    };
    let (scene, engine, config) = (strs(df, "scene")?, strs(df, "engine")?, strs(df, "config")?);
    let (dt, param) = (
        f64s(df, "dt")?,
        f64s(df, "param").unwrap_or_else(|_| vec![f64::NAN; df.height()]),
    );
    Ok((0..df.height())
        .filter(|&k| !errors[k].is_empty())
        .map(|k| {
            let at = if scene[k] == "tower" || scene[k] == "pile" {
                format!("{} cubes", sweeps::count_param(param[k]))
            } else if param[k].is_finite() {
                format!("ratio {}", sweeps::ratio_param(param[k]))
            } else if scene[k] == "consistency" {
                format!("dt {:e}", dt[k])
            } else {
                String::new()
            };
            let first = errors[k].lines().next().unwrap_or_default().to_string();
            [
                scene[k].clone(),
                engine[k].clone(),
                config[k].clone(),
                at,
                first,
            ]
        })
        .collect())
}

/// The peer runs that failed, one line each, so that a missing row is never read as a pass
/// (`tables.failures`); whether there were any.
fn failures_section(r: &mut Report, failed: &[Failure]) -> Result<bool, ReportError> {
    if failed.is_empty() {
        return Ok(false);
    }
    let mut t = Table::new(None)
        .md_col("scene")
        .md_col("engine")
        .md_col("configuration")
        .md_col("at")
        .md_col("error");
    for f in failed {
        t.row(vec![
            C::code(f[0].clone()),
            C::text(f[1].clone()),
            C::code(f[2].clone()),
            C::text(if f[3].is_empty() {
                "-".into()
            } else {
                f[3].clone()
            }),
            C::text(f[4].clone()),
        ])?;
    }
    r.facts()
        .num("engines.failed_runs", failed.len() as f64, Fmt::int());
    r.show_table("failures", &t)?;
    Ok(true)
}

/// MuJoCo's late stop on the sliding scenes beside the lag its soft friction predicts
/// (`stop_lag_prediction` in `experiments/peers/fidelity.py`; `tables.stop_lag`); whether
/// MuJoCo measured a lag.
fn stop_lag_section(r: &mut Report, rows: &[Metric]) -> Result<bool, ReportError> {
    let lags: Vec<&Metric> = rows
        .iter()
        .filter(|m| m.engine == "mujoco" && m.metric == "stop_lag_s")
        .collect();
    if lags.is_empty() {
        return Ok(false);
    }
    let mut t = Table::new(None)
        .md_col("scene")
        .md_col("configuration")
        .md_col("lag (ms)")
        .md_col("predicted (ms)")
        .md_col("r = d b (1/s)");
    for m in lags {
        let find = |metric: &str| {
            rows.iter()
                .find(|x| x.scene == m.scene && x.label == m.label && x.metric == metric)
                .map(|x| x.value)
        };
        let Some(predicted) = find("stop_lag_predicted_s") else {
            continue;
        };
        t.row(vec![
            C::code(m.scene.clone()),
            C::code(m.label.clone()),
            C::same(1e3 * m.value, &Fmt::fixed(1)),
            C::same(1e3 * predicted, &Fmt::fixed(1)),
            find("friction_damping_rate_per_s")
                .map_or(C::text("-"), |v| C::same(v, &Fmt::fixed(0))),
        ])?;
    }
    r.show_table("stop_lag", &t)?;
    Ok(true)
}

/// The harness's rows as metrics (its metric names are ours).
fn engine_rows(df: &DataFrame, exact: &Exact) -> Result<Vec<Metric>, ReportError> {
    let (scene, engine, config) = (strs(df, "scene")?, strs(df, "engine")?, strs(df, "config")?);
    let dt = f64s(df, "dt")?;
    let column = |name: &str| f64s(df, name).unwrap_or_else(|_| vec![f64::NAN; df.height()]);
    let names = [
        "stop_time_s",
        "stop_distance_m",
        "breakaway_time_s",
        "creep_mm",
        "creep_after_1s_mm",
        "acceleration_error",
        "max_lift_mm",
        "secure_pitch_deg",
        "secure_slip_um_s",
        "loose_pitch_deg",
        "signorini_max",
        "gap_lambda_max",
        "normal_work_J",
        "friction_ratio_max",
        "lift_over_estimate",
        "touch_time_s",
        "bounce_height_mm",
        "contact_time_s",
        "penetration_max_mm",
        "rest_penetration_mm",
        "converged_fraction",
        "seconds_per_step_median",
        "duration_s",
        "stop_lag_s",
        "stop_lag_predicted_s",
        "friction_damping_rate_per_s",
    ];
    let values: Vec<Vec<f64>> = names.iter().map(|n| column(n)).collect();
    let mut rows = Vec::new();
    for k in 0..df.height() {
        if sweeps::SWEEP_SCENES.contains(&scene[k].as_str()) || scene[k] == "pile" {
            continue;
        }
        let wanted = columns_of(&scene[k]);
        for (i, name) in names.iter().enumerate() {
            let shared = CSV_ONLY.contains(name);
            if !(wanted.contains(name) || shared) || values[i][k].is_nan() {
                continue;
            }
            let (family, model) = peer_model(&engine[k], &config[k]);
            rows.push(Metric {
                scene: scene[k].clone(),
                engine: engine[k].clone(),
                formulation: family,
                optimizer: config[k].clone(),
                model,
                label: config[k].clone(),
                param: String::new(),
                dt: dt[k],
                metric: name.to_string(),
                value: values[i][k],
                analytic: exact
                    .get(&scene[k])
                    .and_then(|e| e.get(*name))
                    .copied()
                    .unwrap_or(f64::NAN),
            });
        }
    }
    Ok(rows)
}

/// Each row's whole-step time over MuJoCo's default configuration's on the same scene.
fn time_ratios(rows: &[Metric]) -> Vec<Metric> {
    // The same scene, sweep parameter and time step.
    let key = |m: &Metric| (m.scene.clone(), m.param.clone(), m.dt.to_bits());
    let mujoco: BTreeMap<(String, String, u64), f64> = rows
        .iter()
        .filter(|m| {
            m.engine == "mujoco"
                && m.label == MUJOCO_DEFAULT
                && m.metric == "seconds_per_step_median"
        })
        .map(|m| (key(m), m.value))
        .collect();
    rows.iter()
        .filter(|m| m.metric == "seconds_per_step_median")
        .filter_map(|m| {
            let reference = mujoco.get(&key(m))?;
            Some(Metric {
                metric: "time_ratio_to_mujoco".into(),
                value: m.value / reference,
                analytic: f64::NAN,
                ..m.clone()
            })
        })
        .collect()
}

/// Which parts of the page it has, as the templates see them.
#[derive(Debug, Default, serde::Serialize)]
struct Sections {
    /// Why MuJoCo and Drake were not measured, when the engines run skipped.
    peers_absent: Option<String>,
    /// Why Drake was not measured, when the engines run went without it.
    drake_absent: Option<String>,
    /// The scenes with a table, in the page's order.
    scenes: Vec<SceneSection>,
    /// MuJoCo's late stop beside its prediction.
    stop_lag: bool,
    /// The peer runs that raised.
    failures: bool,
    /// The motions drawn beside their closed forms.
    motions: bool,
    /// The slope at its friction threshold.
    threshold: bool,
    /// The stack scenes with tables (`stack`, `stack_face`).
    stacks: Vec<String>,
    /// The tower of cubes.
    tower: bool,
    /// The pile of cubes.
    pile: bool,
    /// The time-step sweep.
    consistency: bool,
    /// Whether the grasp's consistency sweep ran (`consistency_grasp.toml`).
    consistency_grasp: bool,
    /// Whether the pile's consistency sweep ran (`consistency_pile.toml`).
    consistency_pile: bool,
}

/// One scene's table, as the templates see it (`tables.scene_<name>`).
#[derive(Debug, serde::Serialize)]
struct SceneSection {
    /// The scene.
    name: String,
    /// Ours without the prediction margin (`slope_15_margin0`, ...).
    margin0: bool,
    /// A drop (`drop_cube`, `drop_sphere`): its metrics are said once, before the first.
    drop: bool,
    /// Whether the runs recorded how long the scene was simulated (`<name>.duration_s`).
    timed: bool,
}

/// Every number of the study and what the sections draw.
struct Study {
    rows: Vec<Metric>,
    exact: Exact,
    traces: motions::Traces,
    closed_forms: motions::ExactMotions,
    failed: Vec<Failure>,
}

/// Writes `reports/fidelity/` from the runs under `root`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "fidelity")?;
    let mut sections = Sections::default();
    let study = study(&mut r, root, &mut sections)?;
    let rows = &study.rows;
    sections.scenes = scene_tables(&mut r, rows, &study.exact)?;
    sections.stop_lag = stop_lag_section(&mut r, rows)?;
    sections.failures = failures_section(&mut r, &study.failed)?;
    sections.motions = motions::section(&mut r, &study.traces, &study.closed_forms)?;
    sections.threshold = threshold::section(&mut r, rows)?;
    sections.stacks = sweeps::stack_section(&mut r, rows)?;
    sections.tower = sweeps::tower_section(&mut r, rows)?;
    sections.pile = pile::section(&mut r, rows)?;
    sections.consistency =
        sweeps::consistency_section(&mut r, rows, "consistency", "Dragged cube")?;
    sections.consistency_grasp =
        sweeps::consistency_section(&mut r, rows, sweeps::GRASP_CONSISTENCY, "Pinch grasp")?;
    sections.consistency_pile =
        sweeps::consistency_section(&mut r, rows, sweeps::PILE_CONSISTENCY, "Pile")?;
    metrics_csv(&mut r, rows)?;
    r.show("sections", sections)?;
    study_facts(&mut r, &study);
    r.finish()?;
    Ok(())
}

/// Our runs' and the peers' metrics with the derived ones (time ratios, consistency slopes);
/// notes in `sections` whether the peers measured.
fn study(r: &mut Report, root: &Path, sections: &mut Sections) -> Result<Study, ReportError> {
    let Ours {
        mut rows,
        mut exact,
        mut traces,
        closed_forms,
    } = ours(r)?;
    let (grasp_rows, grasp_exact) = grasp::ours(r)?;
    rows.extend(grasp_rows);
    exact.insert("pinch_grasp".into(), grasp_exact);
    rows.extend(sweeps::ours_stack(r, "stack.toml")?);
    rows.extend(sweeps::ours_stack(r, "tower.toml")?);
    rows.extend(pile::ours(r)?);
    rows.extend(threshold::rows(r)?);
    rows.extend(sweeps::ours_consistency(r)?);
    for scene in [sweeps::GRASP_CONSISTENCY, sweeps::PILE_CONSISTENCY] {
        rows.extend(sweeps::ours_path_consistency(r, scene)?);
    }
    let mut failed = Vec::new();
    match engines(r, root, &exact)? {
        Ok(peers) => {
            rows.extend(peers.rows);
            traces.extend(peers.traces);
            failed = peers.failures;
            r.facts().text("engines.measured", "yes");
            if let Some(why) = peers.drake_absent {
                // Findings that quote Drake are marked, not failed: Drake is optional.
                r.facts()
                    .absent(".drake.", format!("Drake not measured, {why}"));
                sections.drake_absent = Some(why);
            }
        }
        Err(why) => {
            r.facts().text("engines.measured", why.clone());
            for peer in [".mujoco.", ".drake."] {
                r.facts()
                    .absent(peer, format!("MuJoCo and Drake not measured, {why}"));
            }
            sections.peers_absent = Some(why);
        }
    }
    let ratios = time_ratios(&rows);
    rows.extend(ratios);
    let slopes = sweeps::slopes(&rows);
    rows.extend(slopes);
    rows.retain(|m| m.metric != "seconds_per_step_median" || m.engine == "contactlab");
    Ok(Study {
        rows,
        exact,
        traces,
        closed_forms,
        failed,
    })
}

/// The facts of every number, the stop test's speed and the closed forms.
fn study_facts(r: &mut Report, study: &Study) {
    let facts = r.facts();
    for m in &study.rows {
        facts.num(fact_key(m), m.value, metric_fmt(&m.metric));
    }
    // The stop and breakaway test's speed, in mm/s.
    facts.num(
        "speed_threshold_mm_s",
        1e3 * SPEED_THRESHOLD,
        Fmt::int().unit(" mm/s"),
    );
    // The closed forms, `<scene>.exact.<metric>`, for the findings to quote beside ours.
    for (scene, values) in &study.exact {
        for (metric, v) in values {
            if v.is_finite() {
                facts.num(format!("{scene}.exact.{metric}"), *v, metric_fmt(metric));
            }
        }
    }
}

/// How a metric's facts are written.
fn metric_fmt(metric: &str) -> Fmt {
    match metric {
        "converged_fraction" => Fmt::fixed(3),
        "stop_time_s" | "breakaway_time_s" | "touch_time_s" | "contact_time_s" => {
            Fmt::fixed(4).unit(" s")
        }
        "stop_distance_m" => Fmt::fixed(4).unit(" m"),
        "acceleration_error" | "residual_median" => Fmt::sci(1),
        "dissipation_angle_deg" => Fmt::fixed(2).unit(" deg"),
        "time_ratio_to_mujoco"
        | "consistency_slope"
        | sweeps::SLOPE_BEFORE_STACKING
        | "lift_over_estimate" => Fmt::fixed(2),
        "seconds_per_step_median" => Fmt::sci(2).unit(" s"),
        "iterations_mean" => Fmt::fixed(1),
        "secure_pitch_deg" | "loose_pitch_deg" => Fmt::sci(2).unit(" deg"),
        "secure_slip_um_s" => Fmt::sci(2).unit(" um/s"),
        "position_error_m_s" | sweeps::BEFORE_STACKING => Fmt::sci(2).unit(" m s"),
        sweeps::REFERENCE_STACKED => Fmt::fixed(3).unit(" s"),
        "signorini_max" | "gap_lambda_max" => Fmt::sci(1),
        "normal_work_J" => Fmt::sci(2).unit(" J"),
        "friction_ratio_max" => Fmt::fixed(3),
        "kinetic_energy_end_J" | "kinetic_energy_max_last_0_5s_J" => Fmt::sci(2).unit(" J"),
        "escaped" => Fmt::int(),
        "collapsed" => Fmt::int(),
        "own_test_failed_fraction" => Fmt::fixed(3),
        "collapse_time_ms" => Fmt::fixed(0).unit(" ms"),
        "duration_s" => Fmt::fixed(1).unit(" s"),
        "stop_lag_s" | "stop_lag_predicted_s" => Fmt::fixed(4).unit(" s"),
        "friction_damping_rate_per_s" => Fmt::fixed(1).unit(" /s"),
        _ => Fmt::sci(2).unit(" mm"),
    }
}

/// A scene's table columns: its own metrics, the contact measures (not on the grasp, whose
/// metrics are its own), then the shared ones.
fn columns_of(scene: &str) -> Vec<&'static str> {
    let own = SCENES
        .iter()
        .find(|(s, _)| *s == scene)
        .map_or(&[][..], |(_, m)| *m);
    let contact: &[&str] = if scene == "pinch_grasp" {
        &[]
    } else {
        &CONTACT
    };
    own.iter().chain(contact).chain(&SHARED).copied().collect()
}

/// The fact that names a number: `<scene>.<engine>.<label>.<metric>`, then `.ratio<r>` for
/// a stack run, `.count<n>` for a tower and `.dt<dt>` for a consistency run
/// (`stack.contactlab.coulomb+pgs.drift_mm.ratio1e6`).
fn fact_key(m: &Metric) -> String {
    let base = format!("{}.{}.{}.{}", m.scene, m.engine, m.label, m.metric);
    if m.scene == "tower" || m.scene == "pile" {
        format!("{base}.count{}", m.param)
    } else if !m.param.is_empty() {
        format!("{base}.ratio{}", m.param)
    } else if sweeps::is_consistency(&m.scene) && m.dt.is_finite() {
        format!("{base}.dt{:e}", m.dt)
    } else {
        base
    }
}

/// One table per scene (`tables.scene_<scene>`): the exact answer first, then a row per
/// engine, configuration and model; the scenes shown.
fn scene_tables(
    r: &mut Report,
    rows: &[Metric],
    exact: &Exact,
) -> Result<Vec<SceneSection>, ReportError> {
    let mut shown = Vec::new();
    for (scene, _) in SCENES {
        let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == scene).collect();
        if here.is_empty() {
            continue;
        }
        let t = scene_table(scene, &here, exact.get(scene))?;
        r.show_table(&format!("scene_{scene}"), &t)?;
        shown.push(SceneSection {
            name: scene.to_string(),
            margin0: scene.ends_with("_margin0"),
            drop: is_drop(scene),
            timed: r.facts_ref().get(&format!("{scene}.duration_s")).is_some(),
        });
    }
    Ok(shown)
}

/// How a scene table writes a metric's value.
fn scene_cell(v: f64, metric: &str) -> C {
    let fmt = match metric {
        "stop_time_s" | "breakaway_time_s" | "stop_distance_m" | "touch_time_s"
        | "contact_time_s" => Fmt::fixed(4),
        "converged_fraction" => Fmt::fixed(3),
        "time_ratio_to_mujoco" => Fmt::fixed(1),
        _ => Fmt::sci(2),
    };
    C::same(v, &fmt)
}

/// One scene's table from its rows and its exact values.
fn scene_table(
    scene: &str,
    here: &[&Metric],
    exact: Option<&BTreeMap<String, f64>>,
) -> Result<Table, ReportError> {
    let mut t = Table::new(None)
        .md_col("engine")
        .md_col("formulation / configuration")
        .md_col(steps::DRIVER)
        .md_col(steps::MODEL);
    let columns = columns_of(scene);
    for c in &columns {
        t = t.md_col(c);
    }
    let mut first = vec![C::text("exact"), C::text("-"), C::text("-"), C::text("-")];
    for c in &columns {
        let v = exact.and_then(|e| e.get(*c)).copied();
        first.push(v.map_or(C::text("-"), |v| scene_cell(v, c)));
    }
    t.row(first)?;
    for (engine, formulation, label, model) in sweeps::configurations(here) {
        let mut row = vec![
            C::text(engine.as_str()),
            C::code(formulation),
            C::code(label.as_str()),
            C::text(model),
        ];
        for c in &columns {
            let v = here
                .iter()
                .find(|m| m.engine == engine && m.label == label && m.metric == *c)
                .map(|m| m.value);
            row.push(v.map_or(C::text("-"), |v| scene_cell(v, c)));
        }
        t.row(row)?;
    }
    Ok(t)
}

/// `metrics.csv`: every number of the study, one row each.
fn metrics_csv(r: &mut Report, rows: &[Metric]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("metrics.csv"));
    for c in [
        "scene",
        "engine",
        common::FORMULATION,
        common::OPTIMIZER,
        common::MODEL,
        "param",
        "dt",
        "metric",
        "value",
        "analytic",
    ] {
        t = t.csv_col(c);
    }
    for m in rows {
        t.row(vec![
            C::text(m.scene.clone()),
            C::text(m.engine.clone()),
            C::text(m.formulation.clone()),
            C::text(if m.engine == "contactlab" {
                m.optimizer.clone()
            } else {
                m.label.clone()
            }),
            C::text(m.model.clone()),
            C::text(m.param.clone()),
            C::same(m.dt, &Fmt::sci(1)),
            C::text(m.metric.clone()),
            C::same(m.value, &Fmt::sci(4)),
            C::same(m.analytic, &Fmt::sci(4)),
        ])?;
    }
    // CSV columns only: the file, not a table of the page.
    r.show_table("metrics", &t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Facts;
    use crate::template::{render, Shown};

    /// The shipped templates rendered with `sections`, every table and plot shown as its name.
    fn page(sections: Sections) -> String {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/fidelity/templates");
        let mut shown = Shown::default();
        for s in &sections.scenes {
            let name = format!("scene_{}", s.name);
            shown.table(&name, format!("| {name} |\n")).unwrap();
        }
        let mut tables = vec!["stop_lag", "failures", "threshold", "consistency"];
        let stacks = ["stack", "stack_face"].map(|s| {
            [
                "converged_fraction",
                "drift_mm",
                "collapse_time_ms",
                "penetration_mm",
            ]
            .map(|m| format!("{s}_{m}"))
        });
        tables.extend(stacks.iter().flatten().map(String::as_str));
        let tower = [
            "tower_converged_fraction",
            "tower_drift_top_mm",
            "tower_collapse_time_ms",
            "tower_penetration_mm",
        ];
        tables.extend(tower);
        let pile = [
            "pile_converged_fraction",
            "pile_penetration_max_mm",
            "pile_kinetic_energy_max_last_0_5s_J",
            "pile_escaped",
            "pile_duration_s",
            "pile_time_ratio_to_mujoco",
        ];
        tables.extend(pile);
        for t in tables {
            shown.table(t, format!("| {t} |\n")).unwrap();
        }
        for p in [
            "sliding_energy",
            "dragged_velocity",
            "creep",
            "stack_drift",
            "stack_convergence",
            "consistency",
        ] {
            shown.plot(p, format!("{p}.svg")).unwrap();
        }
        shown.value("sections", sections).unwrap();
        render(&dir, &facts(), &shown).unwrap().unwrap().text
    }

    /// The facts the templates write, at the shipped configs' values.
    fn facts() -> Facts {
        let mut facts = Facts::new();
        facts
            .num("speed_threshold_mm_s", 1.0, Fmt::int().unit(" mm/s"))
            .num("stack.steps", 100.0, Fmt::int())
            .num(
                "threshold.holding_limit_deg",
                24.23,
                Fmt::fixed(2).unit(" degrees"),
            )
            .num("config.threshold.scene.params.mu", 0.45, Fmt::fixed(2))
            .num("config.threshold.scene.params.duration", 3.0, Fmt::int())
            .num("config.tower.sweep.count.0", 5.0, Fmt::int())
            .num("config.tower.sweep.count.1", 10.0, Fmt::int())
            .num("config.tower.scene.params.duration", 5.0, Fmt::fixed(1))
            .num("config.pile.sweep.count.0", 20.0, Fmt::int())
            .num("config.pile.sweep.count.1", 50.0, Fmt::int())
            .num("config.pile.scene.params.stop_overlap", 0.05, Fmt::fixed(2))
            .num("config.pile.scene.params.duration", 2.0, Fmt::fixed(1))
            .list(
                "config.threshold.sweep.slope_deg",
                vec![24.0, 25.0],
                Fmt::int(),
            )
            .num("config.threshold.sweep.slope_deg.0", 24.0, Fmt::int())
            .num("config.threshold.sweep.slope_deg.1", 25.0, Fmt::int());
        facts
    }

    /// Every section on: the scenes, the failed peer runs, MuJoCo's lag, both stacks.
    fn every_section() -> Sections {
        Sections {
            scenes: ["sliding_cube", "slope_15_margin0"]
                .map(|name| SceneSection {
                    name: name.into(),
                    margin0: name.ends_with("_margin0"),
                    drop: is_drop(name),
                    timed: false,
                })
                .into(),
            stop_lag: true,
            failures: true,
            motions: true,
            threshold: true,
            stacks: vec!["stack".into(), "stack_face".into()],
            tower: true,
            pile: true,
            consistency: true,
            ..Sections::default()
        }
    }

    #[test]
    fn the_shipped_templates_write_every_section_in_the_page_order() {
        let text = page(every_section());
        let order = [
            "Nine setups whose motion has a closed form",
            "the tangential speed `|(v_x, v_y)|` falls to 1 mm/s, breakaway the first time it \
             reaches 1 mm/s",
            "### `sliding_cube`\n\n| scene_sliding_cube |\n\n### `slope_15_margin0`\n\nOurs \
             with `margin = 0`",
            "| scene_slope_15_margin0 |\n\n### MuJoCo's late stop, predicted\n\nNear zero slip",
            "### Peer runs that failed\n\nThese runs raised",
            "### The motions beside their closed forms",
            "![the dragged cube's speed against time, beside the exact curve]\
             (dragged_velocity.svg)",
            "### At the friction threshold\n\nThe cube at mu = 0.45 (it holds while `tan th <= \
             mu`, up to 24.23 degrees) on 24 degrees, where it must hold, and 25 degrees, where \
             it slides at `g (sin th - mu cos th)`, 3 s each (`threshold.toml`).",
            "### `stack`\n\nA light cube under a heavy one, at rest, corner sphere on corner \
             sphere, a knife-edge balance (`stack.toml`, `experiments/scenes/src/fidelity/stack.rs`; the \
             harness's `stack`): 100 steps of 1 ms,",
            "![largest drift of the stack against the mass ratio](stack_drift.svg)",
            "### `stack_face`\n\nA light cube under a heavy one, at rest, the top cube's corner \
             spheres on the bottom cube's top face",
            "| stack_face_penetration_mm |\n\n### `tower`\n\n",
            "| tower_penetration_mm |\n\n### `pile`\n\n",
            "| pile_time_ratio_to_mujoco |\n\n### `consistency`",
            "| consistency |\n\n![position error against the time step, log-log](consistency.svg)",
        ];
        let mut at = 0;
        for want in order {
            let found = text[at..].find(want);
            assert!(found.is_some(), "`{want}` after byte {at} in\n{text}");
            at += found.unwrap_or(0);
        }
        assert!(!text.contains("not measured in this run"), "{text}");
        // One stack's plots only: the face stack has none.
        assert_eq!(text.matches("stack_drift.svg").count(), 1);
    }

    #[test]
    fn an_absent_peer_is_said_and_an_absent_section_left_out() {
        let text = page(Sections {
            drake_absent: Some("missing Python module pydrake".into()),
            ..every_section()
        });
        assert!(text.contains(
            "**Drake was not measured in this run** (missing Python module pydrake; `pip \
             install drake` adds it): its rows are absent"
        ));
        let shown = |sections: Sections| {
            let mut s = Shown::default();
            s.value("sections", sections).unwrap();
            s
        };
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/fidelity/templates");
        let bare = Sections {
            peers_absent: Some("CONTACTLAB_NO_PEERS is set".into()),
            drake_absent: Some("never shown with the line above".into()),
            ..Sections::default()
        };
        let text = render(&dir, &facts(), &shown(bare)).unwrap().unwrap().text;
        assert!(text.contains(
            "**MuJoCo and Drake were not measured in this run**: CONTACTLAB_NO_PEERS is set. \
             Only our rows are shown."
        ));
        assert!(!text.contains("never shown"), "{text}");
        assert!(
            !text.contains("###"),
            "no section without its data:\n{text}"
        );
    }
}
