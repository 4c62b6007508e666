//! The pinch grasp's metrics, ours (`grasp.toml`, `contactlab_scenes::fidelity::grasp`) beside
//! SAP's own slip estimate: the plate's pitch over the first secure phase (exact 0), the
//! largest pitch gained in the first loose phase (it must pitch: the loose grip is below the
//! holding threshold), the median
//! largest contact slip speed over the first secure phase (exact 0), and the converged
//! fraction. MuJoCo's and Drake's rows come from the harness with the same definitions.

use std::collections::BTreeMap;

use super::metric::Metric;
use super::sweeps::param;
use crate::analysis::fidelity::GraspRun;
use crate::builder::Report;
use crate::error::ReportError;

/// The grasp's metrics in its table's order.
pub const METRICS: [&str; 3] = ["secure_pitch_deg", "secure_slip_um_s", "loose_pitch_deg"];

/// Our grasp runs' metrics, SAP's slip estimate as an `estimate` row, and the exact values.
pub fn ours(r: &mut Report) -> Result<(Vec<Metric>, BTreeMap<String, f64>), ReportError> {
    let run = r.load("grasp.toml")?;
    let df = &run.steps;
    let model = super::sweeps::models(df)?;
    let mut rows = Vec::new();
    let mut exact = BTreeMap::new();
    exact.insert("secure_pitch_deg".to_string(), 0.0);
    exact.insert("secure_slip_um_s".to_string(), 0.0);
    for ((index, label), g) in GraspRun::all(df)? {
        let Some(record) = run.meta.scenes.iter().find(|c| c.run == index) else {
            continue;
        };
        let (period, duty, dt) = (
            param(record, "period"),
            param(record, "duty"),
            param(record, "dt"),
        );
        let secure_end = duty * period;
        let (formulation, optimizer) = super::sweeps::pair(&label);
        let base = Metric {
            scene: "pinch_grasp".into(),
            engine: "contactlab".into(),
            formulation,
            optimizer,
            model: model
                .get(&(index, label.clone()))
                .cloned()
                .unwrap_or_default(),
            label,
            param: String::new(),
            dt,
            metric: String::new(),
            value: f64::NAN,
            analytic: f64::NAN,
        };
        for (metric, value) in [
            ("secure_pitch_deg", g.pitch_change(0.0, secure_end)),
            ("secure_slip_um_s", g.secure_slip_um_s(secure_end)),
            ("loose_pitch_deg", g.pitch_swing(secure_end, period)),
            ("converged_fraction", g.converged_fraction()),
            ("duration_s", g.t.last().copied().unwrap_or(f64::NAN)),
        ] {
            rows.push(Metric {
                metric: metric.into(),
                value,
                analytic: exact.get(metric).copied().unwrap_or(f64::NAN),
                ..base.clone()
            });
        }
        if !rows.iter().any(|m| m.engine == "estimate") {
            rows.push(Metric {
                engine: "estimate".into(),
                formulation: "sap".into(),
                optimizer: String::new(),
                model: "regularized".into(),
                label: "sap-slip-eq31".into(),
                metric: "secure_slip_um_s".into(),
                value: 1e6 * param(record, "sap_slip_estimate"),
                ..base.clone()
            });
            r.facts().num(
                "pinch_grasp.exact.grip_threshold",
                param(record, "grip_threshold_exact"),
                crate::findings::Fmt::fixed(2).unit(" N"),
            );
            // How far the secure grip is above the least grip that holds.
            r.facts().num(
                "pinch_grasp.grip_over_threshold",
                param(record, "grip_high") / param(record, "grip_threshold_exact"),
                crate::findings::Fmt::fixed(1),
            );
        }
    }
    Ok((rows, exact))
}
