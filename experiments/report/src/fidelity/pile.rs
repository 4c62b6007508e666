//! The pile: cubes dropped into a box and left to settle (`pile.toml`, the harness's `pile`;
//! issue 44, after ContactBench's many-contact scenes), ours beside MuJoCo's and Drake's, one
//! column of tables per cube count ([`crate::analysis::fidelity::PileRun`] for ours, the
//! harness's `pile_metrics` for theirs: the same definitions).

use polars::prelude::DataFrame;

use super::sweeps::{self, count_param, models, pair, param};
use super::Metric;
use crate::analysis::fidelity::PileRun;
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;

/// The last span over which the pile should be at rest (s).
pub const REST_SPAN: f64 = 0.5;

/// Each run's metrics: name, and the exact value (NaN: none).
pub const METRICS: [(&str, f64); 8] = [
    ("converged_fraction", f64::NAN),
    ("penetration_max_mm", 0.0),
    ("penetration_end_mm", 0.0),
    ("kinetic_energy_end_J", 0.0),
    ("kinetic_energy_max_last_0_5s_J", 0.0),
    ("escaped", 0.0),
    ("seconds_per_step_median", f64::NAN),
    ("duration_s", f64::NAN),
];

/// Our pile runs' metrics.
pub fn ours(r: &mut Report) -> Result<Vec<Metric>, ReportError> {
    let run = r.load("pile.toml")?;
    let model = models(&run.steps)?;
    let mut rows = Vec::new();
    for ((index, label), p) in PileRun::all(&run.steps)? {
        let Some(record) = run.meta.scenes.iter().find(|c| c.run == index) else {
            continue;
        };
        let (formulation, optimizer) = pair(&label);
        let count = record
            .parameters
            .get("count")
            .and_then(|v| v.as_integer())
            .unwrap_or(0);
        let values = [
            p.converged_fraction(),
            p.penetration_max_mm(),
            p.penetration_end_mm(),
            p.kinetic_energy_end(),
            p.kinetic_energy_max_last(REST_SPAN),
            p.escaped_end(),
            p.step_seconds_median(),
            p.t.last().copied().unwrap_or(f64::NAN),
        ];
        for ((metric, analytic), value) in METRICS.into_iter().zip(values) {
            if value.is_nan() {
                continue;
            }
            rows.push(Metric {
                scene: "pile".into(),
                engine: "contactlab".into(),
                formulation: formulation.clone(),
                optimizer: optimizer.clone(),
                model: model
                    .get(&(index, label.clone()))
                    .cloned()
                    .unwrap_or_default(),
                label: label.clone(),
                param: count_param(count as f64),
                dt: param(record, "dt"),
                metric: metric.into(),
                value,
                analytic,
            });
        }
    }
    Ok(rows)
}

/// The harness's pile records as metrics (its columns are named as ours).
pub fn peer_rows(df: &DataFrame) -> Result<Vec<Metric>, ReportError> {
    let names: Vec<(&str, &str, f64, f64)> = METRICS
        .iter()
        .map(|&(m, exact)| (m, m, 1.0, exact))
        .collect();
    sweeps::harness_rows(df, |s| s == "pile", &names)
}

/// The pile's tables (`tables.pile_<metric>`), a column per cube count; whether it ran.
pub fn section(r: &mut Report, rows: &[Metric]) -> Result<bool, ReportError> {
    let here: Vec<&Metric> = rows.iter().filter(|m| m.scene == "pile").collect();
    if here.is_empty() {
        return Ok(false);
    }
    let columns = sweeps::count_columns(&here);
    let metrics = [
        ("converged_fraction", Fmt::fixed(3)),
        ("penetration_max_mm", Fmt::sci(1)),
        ("kinetic_energy_max_last_0_5s_J", Fmt::sci(1)),
        ("escaped", Fmt::int()),
        ("duration_s", Fmt::fixed(3)),
        ("time_ratio_to_mujoco", Fmt::fixed(1)),
    ];
    sweeps::sweep_tables(r, "pile", &here, &columns, &metrics)?;
    Ok(true)
}
