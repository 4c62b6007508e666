//! The motions themselves, drawn beside their closed forms: the sliding cube's kinetic energy
//! against `m (v0 - mu g t)^2 / 2`, the dragged cube's speed against `(F'/2m)(t - t0)^2`, and
//! the creep on the 15 degree slope on a logarithmic axis (exact: no motion). The tables give
//! the numbers; these show where in the motion an engine departs.
//!
//! Our traces are every step of a run's rows ([`Motion`]); MuJoCo's and Drake's are every
//! tenth step, as `experiments/peers/fidelity.py` records them (`trajectory_*` columns, JSON
//! lists). The drawn configurations are the sweeps' ([`DRAWN`]): one pair per model family of
//! ours, MuJoCo's default and best, Drake's SAP and TAMSI.

use std::collections::BTreeMap;

use polars::prelude::DataFrame;

use super::sweeps::DRAWN;
use crate::analysis::fidelity::Motion;
use crate::analysis::strs;
use crate::builder::Report;
use crate::error::ReportError;
use crate::plots::{Axis, Chart, Series};

/// One drawn motion: time (s), distance from the start (m), tangential speed (m/s).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Time after t = 0.
    pub t: Vec<f64>,
    /// Distance of the centre from where it was at t = 0, in the contact plane.
    pub distance: Vec<f64>,
    /// Tangential speed.
    pub speed: Vec<f64>,
}

/// The traces of each drawn `(scene, engine, label)`.
pub type Traces = BTreeMap<(String, String, String), Trace>;

/// The scenes whose motions are drawn.
const DRAWN_SCENES: [&str; 3] = ["sliding_cube", "dragged_cube", "slope_15"];

/// Whether `(scene, engine, label)` is drawn: the only traces worth keeping.
pub fn drawn(scene: &str, engine: &str, label: &str) -> bool {
    DRAWN_SCENES.contains(&scene) && DRAWN.contains(&(engine, label))
}

/// Every tenth sample of our motion, so that ours and the peers' lines are equally dense.
const EVERY: usize = 10;

/// Our motion as a trace, every [`EVERY`]-th step, with the start prepended (a run's first
/// row is after its first step; positions are from the start, as the scene records them).
pub fn our_trace(m: &Motion) -> Trace {
    let mut tr = Trace {
        t: vec![0.0],
        distance: vec![0.0],
        speed: vec![m.speed.first().copied().unwrap_or(f64::NAN)],
    };
    for k in (EVERY - 1..m.t.len()).step_by(EVERY) {
        tr.t.push(m.t[k]);
        tr.distance.push(m.x[k].hypot(m.y[k]));
        tr.speed.push(m.speed[k]);
    }
    tr
}

/// The peers' traces of the drawn scenes from the harness's rows.
pub fn peer_traces(df: &DataFrame) -> Result<Traces, ReportError> {
    let (scene, engine, config) = (strs(df, "scene")?, strs(df, "engine")?, strs(df, "config")?);
    let column = |name: &str| strs(df, name).unwrap_or_else(|_| vec![String::new(); df.height()]);
    let (t, x, y, speed) = (
        column("trajectory_t"),
        column("trajectory_x"),
        column("trajectory_y"),
        column("trajectory_speed"),
    );
    let list = |s: &str| serde_json::from_str::<Vec<f64>>(s).unwrap_or_default();
    let mut out = Traces::new();
    for k in 0..df.height() {
        if !drawn(&scene[k], &engine[k], &config[k]) || t[k].is_empty() {
            continue;
        }
        let (xs, ys) = (list(&x[k]), list(&y[k]));
        let (x0, y0) = (
            xs.first().copied().unwrap_or(0.0),
            ys.first().copied().unwrap_or(0.0),
        );
        let trace = Trace {
            t: list(&t[k]),
            distance: xs
                .iter()
                .zip(&ys)
                .map(|(x, y)| (x - x0).hypot(y - y0))
                .collect(),
            speed: list(&speed[k]),
        };
        out.insert(
            (scene[k].clone(), engine[k].clone(), config[k].clone()),
            trace,
        );
    }
    Ok(out)
}

/// The drawn configurations' series of one scene, `value` of each sample.
fn series(traces: &Traces, scene: &str, value: impl Fn(&Trace, usize) -> f64) -> Vec<Series> {
    DRAWN
        .iter()
        .filter_map(|(engine, label)| {
            let tr = traces.get(&(scene.to_string(), engine.to_string(), label.to_string()))?;
            let points = (0..tr.t.len().min(tr.speed.len()).min(tr.distance.len()))
                .map(|k| (tr.t[k], value(tr, k)))
                .collect();
            Some((format!("{engine} {label}"), points))
        })
        .collect()
}

/// Samples of `f` over `[0, end]` for a reference curve.
fn curve(end: f64, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    (0..=200)
        .map(|k| end * k as f64 / 200.0)
        .map(|t| (t, f(t)))
        .collect()
}

/// The lowest creep drawn (mm): an exact answer's zero has no place on a log axis.
pub const CREEP_FLOOR_MM: f64 = 1e-6;

/// The three plots (`plots.sliding_energy`, `plots.dragged_velocity`, `plots.creep`), from
/// the traces and the closed forms; whether there was anything to draw.
pub fn section(r: &mut Report, traces: &Traces, exact: &ExactMotions) -> Result<bool, ReportError> {
    if traces.is_empty() {
        return Ok(false);
    }
    sliding_plot(r, traces, exact)?;
    dragged_plot(r, traces, exact)?;
    creep_plot(r, traces)?;
    Ok(true)
}

/// The sliding cube's kinetic energy beside `m (v0 - mu g t)^2 / 2`.
fn sliding_plot(r: &mut Report, traces: &Traces, e: &ExactMotions) -> Result<(), ReportError> {
    let energy = |v: f64| 0.5 * e.slide_mass * v * v;
    let stop = e.slide_stop;
    let slide_exact = curve(1.4 * stop, |t| {
        energy((e.slide_v0 - e.slide_decel * t).max(0.0))
    });
    r.show_plot(
        "sliding_energy",
        &Chart::new(
            "Sliding cube: kinetic energy",
            Axis::linear("t (s)"),
            Axis::linear("kinetic energy (J)"),
        )
        .lines_only()
        .reference(("exact".into(), slide_exact)),
        &clip(
            series(traces, "sliding_cube", |tr, k| energy(tr.speed[k])),
            1.4 * stop,
        ),
    )
}

/// The dragged cube's speed beside `(F'/2m)(t - t0)^2` after `t0`.
fn dragged_plot(r: &mut Report, traces: &Traces, e: &ExactMotions) -> Result<(), ReportError> {
    let (t0, rate) = (e.drag_t0, e.drag_rate);
    let drag_exact = curve(1.0, |t| 0.5 * rate * (t - t0).max(0.0).powi(2));
    r.show_plot(
        "dragged_velocity",
        &Chart::new(
            "Dragged cube: speed",
            Axis::linear("t (s)"),
            Axis::linear("speed (m/s)"),
        )
        .lines_only()
        .legend_upper_left()
        .reference(("exact".into(), drag_exact)),
        &series(traces, "dragged_cube", |tr, k| tr.speed[k]),
    )
}

/// The distance crept on the 15 degree slope, logarithmic (exact: 0, drawn at
/// [`CREEP_FLOOR_MM`]).
fn creep_plot(r: &mut Report, traces: &Traces) -> Result<(), ReportError> {
    r.show_plot(
        "creep",
        &Chart::new(
            "15 degree slope: distance moved",
            Axis::linear("t (s)"),
            Axis::log("distance moved (mm)"),
        )
        .lines_only(),
        &series(traces, "slope_15", |tr, k| {
            (1e3 * tr.distance[k]).max(CREEP_FLOOR_MM)
        }),
    )
}

/// Keeps each series' points up to `end`.
fn clip(series: Vec<Series>, end: f64) -> Vec<Series> {
    series
        .into_iter()
        .map(|(name, p)| (name, p.into_iter().filter(|(t, _)| *t <= end).collect()))
        .collect()
}

/// The closed forms the plots draw, from the runs' exact constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactMotions {
    /// The sliding cube's mass (kg).
    pub slide_mass: f64,
    /// Its initial speed (m/s).
    pub slide_v0: f64,
    /// Its deceleration `mu g` (m/s^2).
    pub slide_decel: f64,
    /// Its stop time `v0 / (mu g)` (s).
    pub slide_stop: f64,
    /// The dragged cube's breakaway instant `t0 = mu m g / F'` (s).
    pub drag_t0: f64,
    /// Its force rate over its mass, `F'/m` (m/s^3).
    pub drag_rate: f64,
}

impl Default for ExactMotions {
    /// NaN until a run's constants are read.
    fn default() -> Self {
        ExactMotions {
            slide_mass: f64::NAN,
            slide_v0: f64::NAN,
            slide_decel: f64::NAN,
            slide_stop: f64::NAN,
            drag_t0: f64::NAN,
            drag_rate: f64::NAN,
        }
    }
}

impl ExactMotions {
    /// Reads the closed form of `scene` (a sliding or the dragged cube) from its run's exact
    /// constants and parameters; other scenes leave it as it is.
    pub fn read(&mut self, scene: &str, c: &BTreeMap<String, f64>, p: &toml::Table) {
        let get = |k: &str| c.get(k).copied().unwrap_or(f64::NAN);
        let num = |k: &str| p.get(k).and_then(|v| v.as_float()).unwrap_or(f64::NAN);
        match scene {
            "sliding_cube" => {
                self.slide_decel = get("deceleration_exact");
                self.slide_stop = get("stop_time_exact");
                self.slide_v0 = self.slide_decel * self.slide_stop;
                self.slide_mass = get("friction_exact") / self.slide_decel;
            }
            "dragged_cube" => {
                self.drag_t0 = get("breakaway_time_exact");
                self.drag_rate = num("force_rate") / num("mass");
            }
            _ => {}
        }
    }
}
