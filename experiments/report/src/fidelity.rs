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
//! Facts for the findings: `<scene>.<engine>.<label>.<metric>` for every number of
//! `metrics.csv` (`label`: our driver's label, or the engine's configuration),
//! `<scene>.exact.<metric>` (the closed form beside them), `<scene>.duration_s` (the span
//! simulated), `speed_threshold_mm_s` (the stop and breakaway test), and `engines.measured`
//! (`yes` or why not).

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::RunConfig;
use polars::prelude::DataFrame;

use crate::analysis::fidelity::{Motion, SPEED_THRESHOLD};
use crate::analysis::{f64s, strs};
use crate::builder::Report;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};
use crate::ReportError;

mod grasp;
mod motions;
mod sweeps;

/// Our runs of the fidelity setups.
/// (The sweeps' runs, `stack.toml` and `consistency.toml`, are read by their own section.)
pub const OUR_CONFIGS: [&str; 3] = ["slides.toml", "slopes.toml", "holds.toml"];

/// The scenes in the report's order, with the metrics each one's table shows.
pub const SCENES: [(&str, &[&str]); 8] = [
    (
        "sliding_cube",
        &[
            "stop_time_s",
            "stop_distance_m",
            "max_lift_mm",
            "lift_over_estimate",
            "signorini_max",
        ],
    ),
    (
        "sliding_cube_diagonal",
        &[
            "stop_time_s",
            "stop_distance_m",
            "max_lift_mm",
            "signorini_max",
        ],
    ),
    (
        "dragged_cube",
        &["breakaway_time_s", "max_lift_mm", "signorini_max"],
    ),
    (
        "slope_15",
        &[
            "creep_mm",
            "creep_after_1s_mm",
            "max_lift_mm",
            "signorini_max",
        ],
    ),
    (
        "slope_30",
        &[
            "acceleration_error",
            "dissipation_angle_deg",
            "max_lift_mm",
            "lift_over_estimate",
            "signorini_max",
        ],
    ),
    (
        "wall_press",
        &["creep_mm", "creep_after_1s_mm", "signorini_max"],
    ),
    ("rolling_sphere", &["acceleration_error", "signorini_max"]),
    ("pinch_grasp", &grasp::METRICS),
];

/// The columns every scene's table adds after its own metrics.
const SHARED: [&str; 3] = [
    "converged_fraction",
    "residual_median",
    "time_ratio_to_mujoco",
];

/// MuJoCo's default configuration: the one every time ratio divides by.
pub const MUJOCO_DEFAULT: &str = "elliptic-impratio1-noslip0";

/// One number of the study: a row of `metrics.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// The scene (`sliding_cube`, `slope_15`, ...).
    pub scene: String,
    /// `contactlab`, `mujoco` or `drake`.
    pub engine: String,
    /// Our formulation, or the peer's configuration family (`elliptic`, `sap`, ...).
    pub formulation: String,
    /// Our optimizer, or the peer's configuration.
    pub optimizer: String,
    /// The friction model.
    pub model: String,
    /// Our driver's label, or the peer's configuration: the key of facts.
    pub label: String,
    /// A scene parameter that tells runs of a sweep apart (the stack's mass ratio, `1e3`);
    /// empty otherwise.
    pub param: String,
    /// The time step (s).
    pub dt: f64,
    /// The metric's name.
    pub metric: String,
    /// Its value.
    pub value: f64,
    /// The exact value, NaN where there is none.
    pub analytic: f64,
}

/// Per scene, the exact value of each of its metrics.
type Exact = BTreeMap<String, BTreeMap<String, f64>>;

/// The scene's name from a run's parameters (`slope` with its angle becomes `slope_15`).
fn scene_name(params: &toml::Table) -> String {
    let setup = params.get("setup").and_then(|v| v.as_str()).unwrap_or("");
    if setup == "slope" {
        let deg = params
            .get("slope_deg")
            .and_then(|v| v.as_float())
            .unwrap_or(f64::NAN);
        format!("slope_{deg:.0}")
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
        "slope_15" | "wall_press" => {
            out.insert("creep_mm", 0.0);
            out.insert("creep_after_1s_mm", 0.0);
        }
        _ => {
            out.insert("acceleration_error", 0.0);
            out.insert("dissipation_angle_deg", 0.0);
        }
    }
    out.insert("max_lift_mm", 0.0);
    out.insert("signorini_max", 0.0);
    out.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
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
    let mut out = vec![
        ("max_lift_mm", m.max_lift_mm()),
        ("lift_over_estimate", m.lift_over_estimate(dt, mu)),
        ("converged_fraction", m.converged_fraction()),
        ("residual_median", m.residual_median()),
        ("seconds_per_step_median", m.step_seconds_median()),
        ("signorini_max", m.signorini_max()),
    ];
    match scene {
        "sliding_cube" | "sliding_cube_diagonal" => {
            out.push(("stop_time_s", m.stop_time()));
            out.push(("stop_distance_m", m.stop_distance()));
        }
        "dragged_cube" => out.push(("breakaway_time_s", m.breakaway_time())),
        "slope_15" | "wall_press" => {
            out.push(("creep_mm", m.creep_mm()));
            out.push(("creep_after_1s_mm", m.creep_after_mm(1.0)));
        }
        _ => {
            out.push((
                "acceleration_error",
                m.acceleration() / acceleration_exact - 1.0,
            ));
            out.push(("dissipation_angle_deg", m.dissipation_angle_median()));
        }
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

/// Our runs' metrics, per scene its exact values, and the drawn motions.
fn ours(r: &mut Report) -> Result<Ours, ReportError> {
    let mut rows = Vec::new();
    let mut exact = BTreeMap::new();
    let mut traces = motions::Traces::new();
    let mut closed_forms = motions::ExactMotions::default();
    for file in OUR_CONFIGS {
        let run = r.load(file)?;
        let df = &run.steps;
        let (runs, roles, solvers) = (f64s(df, "run")?, strs(df, "role")?, strs(df, "solver")?);
        let models = strs(df, "model")?;
        let specs = run.config.driver_specs();
        let motions = Motion::all(df)?;
        for record in &run.meta.scenes {
            let scene = scene_name(&record.parameters);
            closed_forms.read(&scene, &record.constants, &record.parameters);
            let values = analytic(&scene, &record.constants, &record.parameters);
            exact.insert(scene.clone(), values.clone());
            // The span each scene simulates (a slide is shorter than a hold), for the findings.
            if let Some(d) = record.parameters.get("duration").and_then(|v| v.as_float()) {
                r.facts()
                    .num(format!("{scene}.duration_s"), d, Fmt::fixed(1).unit(" s"));
            }
            let dt = record
                .parameters
                .get("dt")
                .and_then(|v| v.as_float())
                .unwrap_or(f64::NAN);
            let Some(k) =
                (0..df.height()).find(|&k| runs[k] as u64 == record.run && roles[k] == "driver")
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
            let mu = record
                .parameters
                .get("mu")
                .and_then(|v| v.as_float())
                .unwrap_or(f64::NAN);
            for (metric, value) in our_metrics(&scene, motion, acceleration, dt, mu) {
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

/// MuJoCo's and Drake's metrics from the other-engine run (the setups' and the sweeps') with
/// their drawn motions, or why it did not measure.
type PeerRun = Result<(Vec<Metric>, motions::Traces), String>;

/// MuJoCo's and Drake's rows and traces (see [`PeerRun`]).
fn engines(r: &mut Report, root: &Path, exact: &Exact) -> Result<PeerRun, ReportError> {
    let cfg = EnginesConfig::load(&r.config_file("engines.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    if let Ok(why) = strs(&df, "skipped") {
        return Ok(Err(why.first().cloned().unwrap_or_default()));
    }
    let mut rows = engine_rows(&df, exact)?;
    rows.extend(sweeps::peer_rows(&df)?);
    Ok(Ok((rows, motions::peer_traces(&df)?)))
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
        "converged_fraction",
        "seconds_per_step_median",
    ];
    let values: Vec<Vec<f64>> = names.iter().map(|n| column(n)).collect();
    let mut rows = Vec::new();
    for k in 0..df.height() {
        if sweeps::SWEEP_SCENES.contains(&scene[k].as_str()) {
            continue;
        }
        let wanted = SCENES
            .iter()
            .find(|(s, _)| *s == scene[k])
            .map_or(&[][..], |(_, m)| *m);
        for (i, name) in names.iter().enumerate() {
            let shared = SHARED.contains(name) || *name == "seconds_per_step_median";
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

/// A peer configuration's family and friction model: MuJoCo's cones are regularised (soft
/// constraints); Drake's discrete approximations are compliant point contact.
pub(crate) fn peer_model(engine: &str, config: &str) -> (String, String) {
    match engine {
        "mujoco" => {
            let cone = config.split('-').next().unwrap_or(config).to_string();
            let model = if cone == "pyramidal" {
                "regularized_pyramid"
            } else {
                "regularized_cone"
            };
            (cone, model.into())
        }
        _ => (config.to_string(), "compliant_point".into()),
    }
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

/// Writes `reports/fidelity/` from the runs under `root`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "fidelity",
        "What each contact model does to a motion: every formulation beside MuJoCo and Drake, against exact answers",
        "the project's physical-fidelity study, after Q. Le Lidec, W. Jallet, L. Montaut, I. Laptev, C. Schmid and J. Carpentier, *Contact Models in Robotics: a Comparative Analysis*, IEEE T-RO 2024.",
    );
    r.text(
        "Seven setups whose motion has a closed form (derivations in `experiments/scenes/src/fidelity/`): a \
         0.2 m, 1 kg cube on eight corner spheres of radius a/50 sliding to a stop at 1 m/s (mu = 0.4) along x \
         and along the diagonal, the same cube dragged by F = 20 t N (stick, then slip), held on a 15 degree \
         slope and pressed against a wall (where the exact motion is no motion), sliding down a 30 degree slope, \
         and a sphere rolling down a 15 degree slope; a pinch grasp whose grip alternates between 16 N, above \
         the least grip that holds, and 1 N, below it (dt = 5 ms); then two sweeps: a light cube under a heavy \
         one at rest over mass ratios 1 to 1e6, and the dragged cube over time steps 1e-4 to 1e-1 s. dt = 1 ms \
         unless said or swept. Our side: every compatible (formulation, optimizer) pair of the registry (`[every_pair]`: a \
         driver registered later joins the study), each with its model named, warm-started from the previous \
         step, to the tolerance 1e-8, at most 0.1 s a solve (`slides.toml`, `slopes.toml`, `holds.toml`, \
         `grasp.toml`, `stack.toml`, `consistency.toml`). MuJoCo (Newton; elliptic and pyramidal cones, impratio 1 and 10, \
         with and without noslip, its default `solref`/`solimp`) and Drake (point contact; `sap`, `tamsi`, \
         `similar`, `lagged`) run the same setups in `experiments/peers/fidelity.py` (`engines.toml`), after \
         settling 0.5 s at rest. Stop: the first time the speed falls to 1 mm/s; breakaway: the first time it \
         reaches 1 mm/s (the exact one is then 10 ms after friction saturates); creep: the final distance from \
         the exact position; lift: the largest height above the resting height; `lift_over_estimate`: the \
         median lift while sliding in contact over Castro et al.'s `(dt + tau_d) mu |v_t|` (sec. V-A; our \
         contacts are rigid, tau_d = 0); acceleration error: the least-squares slope of the speed against \
         the exact acceleration, relative; `signorini_max`: the largest `|lambda_n v_n|` over a step's contacts \
         and the run, over `m g dt` times 1 m/s (unit-free; 0 for exact complementarity; MuJoCo's and Drake's \
         from their contact forces times dt and post-step normal velocities). The model column is the law a \
         pair's answers satisfy: the formulation's, or the driver's own where it imposes one (bisection-SOR: \
         Hwangbo et al.'s maximum dissipation, whatever the formulation). Our contacts exist while a corner sphere's gap is below 1 mm, so a \
         lift beyond that becomes a flight. Every number is also in [`metrics.csv`](metrics.csv), one row per \
         number.",
    );
    let Ours {
        mut rows,
        mut exact,
        mut traces,
        closed_forms,
    } = ours(&mut r)?;
    let (grasp_rows, grasp_exact) = grasp::ours(&mut r)?;
    rows.extend(grasp_rows);
    exact.insert("pinch_grasp".into(), grasp_exact);
    rows.extend(sweeps::ours_stack(&mut r)?);
    rows.extend(sweeps::ours_consistency(&mut r)?);
    match engines(&mut r, root, &exact)? {
        Ok((peers, peer_traces)) => {
            rows.extend(peers);
            traces.extend(peer_traces);
            r.facts().text("engines.measured", "yes");
        }
        Err(why) => {
            r.text(&format!(
                "**MuJoCo and Drake were not measured in this run**: {why}. Only our rows are shown."
            ));
            r.facts().text("engines.measured", why);
        }
    }
    let ratios = time_ratios(&rows);
    rows.extend(ratios);
    let slopes = sweeps::slopes(&rows);
    rows.extend(slopes);
    rows.retain(|m| m.metric != "seconds_per_step_median" || m.engine == "contactlab");
    scene_tables(&mut r, &rows, &exact)?;
    motions::section(&mut r, &traces, &closed_forms)?;
    sweeps::stack_section(&mut r, &rows)?;
    sweeps::consistency_section(&mut r, &rows)?;
    metrics_csv(&mut r, &rows)?;
    let facts = r.facts();
    for m in &rows {
        facts.num(fact_key(m), m.value, metric_fmt(&m.metric));
    }
    // The stop and breakaway test's speed, in mm/s.
    facts.num(
        "speed_threshold_mm_s",
        1e3 * SPEED_THRESHOLD,
        Fmt::int().unit(" mm/s"),
    );
    // The closed forms, `<scene>.exact.<metric>`, for the findings to quote beside ours.
    for (scene, values) in &exact {
        for (metric, v) in values {
            if v.is_finite() {
                facts.num(format!("{scene}.exact.{metric}"), *v, metric_fmt(metric));
            }
        }
    }
    r.finish()?;
    Ok(())
}

/// How a metric's facts are written.
fn metric_fmt(metric: &str) -> Fmt {
    match metric {
        "converged_fraction" => Fmt::fixed(3),
        "stop_time_s" | "breakaway_time_s" => Fmt::fixed(4).unit(" s"),
        "stop_distance_m" => Fmt::fixed(4).unit(" m"),
        "acceleration_error" | "residual_median" => Fmt::sci(1),
        "dissipation_angle_deg" => Fmt::fixed(2).unit(" deg"),
        "time_ratio_to_mujoco" | "consistency_slope" | "lift_over_estimate" => Fmt::fixed(2),
        "seconds_per_step_median" => Fmt::sci(2).unit(" s"),
        "iterations_mean" => Fmt::fixed(1),
        "secure_pitch_deg" | "loose_pitch_deg" => Fmt::sci(2).unit(" deg"),
        "secure_slip_um_s" => Fmt::sci(2).unit(" um/s"),
        "position_error_m_s" => Fmt::sci(2).unit(" m s"),
        "signorini_max" => Fmt::sci(1),
        _ => Fmt::sci(2).unit(" mm"),
    }
}

/// The fact that names a number: `<scene>.<engine>.<label>.<metric>`, then `.ratio<r>` for
/// a stack run and `.dt<dt>` for a consistency run (`stack.contactlab.coulomb+pgs.drift_mm.ratio1e6`).
fn fact_key(m: &Metric) -> String {
    let base = format!("{}.{}.{}.{}", m.scene, m.engine, m.label, m.metric);
    if !m.param.is_empty() {
        format!("{base}.ratio{}", m.param)
    } else if m.scene == "consistency" && m.dt.is_finite() {
        format!("{base}.dt{:e}", m.dt)
    } else {
        base
    }
}

/// One table per scene: the exact answer first, then a row per engine, configuration and model.
fn scene_tables(r: &mut Report, rows: &[Metric], exact: &Exact) -> Result<(), ReportError> {
    for (scene, metrics) in SCENES {
        let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == scene).collect();
        if here.is_empty() {
            continue;
        }
        r.heading(3, &format!("`{scene}`"));
        let mut t = Table::new(None)
            .md_col("engine")
            .md_col("formulation / configuration")
            .md_col("driver")
            .md_col("model");
        let columns: Vec<&str> = metrics.iter().copied().chain(SHARED).collect();
        for c in &columns {
            t = t.md_col(c);
        }
        let show = |v: f64, metric: &str| -> C {
            let fmt = match metric {
                "stop_time_s" | "breakaway_time_s" | "stop_distance_m" => Fmt::fixed(4),
                "converged_fraction" => Fmt::fixed(3),
                "time_ratio_to_mujoco" => Fmt::fixed(1),
                _ => Fmt::sci(2),
            };
            C::same(v, &fmt)
        };
        let mut first = vec![C::text("exact"), C::text("-"), C::text("-"), C::text("-")];
        for c in &columns {
            let v = exact.get(scene).and_then(|e| e.get(*c)).copied();
            first.push(v.map_or(C::text("-"), |v| show(v, c)));
        }
        t.row(first)?;
        let mut keys: Vec<(&str, &str, &str, &str)> = Vec::new();
        for m in &here {
            let key = (
                m.engine.as_str(),
                m.formulation.as_str(),
                m.label.as_str(),
                m.model.as_str(),
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        for (engine, formulation, label, model) in keys {
            let mut row = vec![
                C::text(engine),
                C::code(formulation),
                C::code(label),
                C::text(model),
            ];
            for c in &columns {
                let v = here
                    .iter()
                    .find(|m| m.engine == engine && m.label == label && m.metric == *c)
                    .map(|m| m.value);
                row.push(v.map_or(C::text("-"), |v| show(v, c)));
            }
            t.row(row)?;
        }
        r.table(&t)?;
    }
    Ok(())
}

/// `metrics.csv`: every number of the study, one row each.
fn metrics_csv(r: &mut Report, rows: &[Metric]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("metrics.csv"));
    for c in [
        "scene",
        "engine",
        "formulation",
        "optimizer",
        "model",
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
    r.table(&t)
}
