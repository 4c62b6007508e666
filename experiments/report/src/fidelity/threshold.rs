//! The slope at its friction threshold (`threshold.toml`, issue 38 item 8): the cube at
//! `mu = 0.45`, which holds while `tan th <= mu` (up to 24.23 degrees), on 24 degrees (exact:
//! it holds) and 25 degrees (exact: it slides at `g (sin th - mu cos th)`), 3 s each.
//!
//! The question is whether Hwangbo et al.'s maximum dissipation explains what bisection-SOR does
//! there, as it explains its error on the 30 degree slope: the friction of a sliding corner
//! points `theta` off minus its slip (the median of the run's `max_dissipation_angle_deg` over
//! the steps on which the body moves), so along the slope friction is `mu N cos theta` and the
//! cube accelerates at `a = g (sin th - mu cos th cos theta)`, or holds when that is negative:
//! the predicted displacement after `T` is `a T^2 / 2` (the exact one with `theta = 0`). Beside
//! it, the share of steps on which the driver's own test failed (its status, whatever the
//! ruler's), which is what its non-convergence would contribute.
//!
//! Metrics (scene `threshold_<deg>`, per pair): `displacement_mm` (down the slope after 3 s),
//! `dissipation_angle_deg` (the median above), `predicted_displacement_mm` (maximum-dissipation
//! pairs only), `own_test_failed_fraction`; the exact displacement is the `analytic` value.

use contactlab_runs::schema::common;

use super::metric::Metric;
use crate::analysis::fidelity::Motion;
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The model that tilts friction off the slip.
const MAXIMUM_DISSIPATION: &str = "maximum_dissipation";

/// The displacement (m) after `t` of a cube starting at rest on a slope of `th` (radians) whose
/// friction along the slope is `mu cos(theta)` times the normal force; 0 when it holds.
pub fn slide_displacement(g: f64, th: f64, mu: f64, theta: f64, t: f64) -> f64 {
    let a = g * (th.sin() - mu * th.cos() * theta.cos());
    0.5 * a.max(0.0) * t * t
}

/// The rows of `threshold.toml`'s runs.
pub fn rows(r: &mut Report) -> Result<Vec<Metric>, ReportError> {
    let run = r.load("threshold.toml")?;
    let df = &run.steps;
    let models = super::sweeps::models(df)?;
    let mut out = Vec::new();
    for ((index, label), m) in Motion::all(df)? {
        let Some(record) = run.meta.scenes.iter().find(|c| c.run == index) else {
            continue;
        };
        let p = |k: &str| super::sweeps::param(record, k);
        let (deg, mu, g, dt) = (p("slope_deg"), p("mu"), p("gravity"), p("dt"));
        // The steepest slope the cube holds on, `atan mu`, for the section's prose.
        r.facts().num(
            "threshold.holding_limit_deg",
            mu.atan().to_degrees(),
            Fmt::fixed(2).unit(" degrees"),
        );
        let (Some(&t), Some(&x), Some(&x_exact)) = (m.t.last(), m.x.last(), m.x_exact.last())
        else {
            continue;
        };
        let model = models
            .get(&(index, label.clone()))
            .cloned()
            .unwrap_or_default();
        let theta = m.dissipation_angle_moving_median();
        let predicted = (model == MAXIMUM_DISSIPATION)
            .then(|| 1e3 * slide_displacement(g, deg.to_radians(), mu, theta.to_radians(), t));
        let (formulation, optimizer) = super::sweeps::pair(&label);
        let base = Metric {
            scene: format!("threshold_{deg:.0}"),
            engine: "contactlab".into(),
            formulation,
            optimizer,
            model,
            label,
            param: String::new(),
            dt,
            metric: String::new(),
            value: f64::NAN,
            analytic: f64::NAN,
        };
        // The scene's exact position is its start plus the exact displacement.
        let exact = slide_displacement(g, deg.to_radians(), mu, 0.0, t);
        let start = x_exact - exact;
        for (metric, value, analytic) in [
            ("displacement_mm", 1e3 * (x - start), 1e3 * exact),
            ("dissipation_angle_deg", theta, 0.0),
            (
                "predicted_displacement_mm",
                predicted.unwrap_or(f64::NAN),
                exact,
            ),
            (
                "own_test_failed_fraction",
                1.0 - m.own_converged_fraction(),
                0.0,
            ),
            ("duration_s", t, f64::NAN),
        ] {
            if value.is_nan() {
                continue;
            }
            out.push(Metric {
                metric: metric.into(),
                value,
                analytic,
                ..base.clone()
            });
        }
    }
    Ok(out)
}

/// The threshold section's table (`tables.threshold`): per slope, every pair's displacement
/// beside the exact one and the maximum-dissipation prediction; whether the run has rows.
pub fn section(r: &mut Report, rows: &[Metric]) -> Result<bool, ReportError> {
    let here: Vec<&Metric> = rows
        .iter()
        .filter(|m| m.scene.starts_with("threshold_"))
        .collect();
    if here.is_empty() {
        return Ok(false);
    }
    let mut t = Table::new(None)
        .md_col("slope")
        .md_col("pair")
        .md_col(common::MODEL)
        .md_col("displacement (mm)")
        .md_col("exact (mm)")
        .md_col("theta (deg)")
        .md_col("predicted (mm)")
        .md_col("own test failed");
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for m in &here {
        let key = (m.scene.as_str(), m.label.as_str(), m.model.as_str());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.sort_by(|a, b| a.0.cmp(b.0));
    for (scene, label, model) in keys {
        let find = |metric: &str| {
            here.iter()
                .find(|m| m.scene == scene && m.label == label && m.metric == metric)
        };
        let num =
            |metric: &str, fmt: &Fmt| find(metric).map_or(C::text("-"), |m| C::same(m.value, fmt));
        t.row(vec![
            C::text(scene.trim_start_matches("threshold_").to_string() + " deg"),
            C::code(label.to_string()),
            C::text(model.to_string()),
            num("displacement_mm", &Fmt::sci(3)),
            find("displacement_mm").map_or(C::text("-"), |m| C::same(m.analytic, &Fmt::sci(3))),
            num("dissipation_angle_deg", &Fmt::fixed(2)),
            num("predicted_displacement_mm", &Fmt::sci(3)),
            num("own_test_failed_fraction", &Fmt::fixed(3)),
        ])?;
    }
    r.show_table("threshold", &t)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tilted_friction_predicts_a_slide_where_coulomb_holds() {
        let (g, mu) = (9.81, 0.45);
        // Coulomb: 24 degrees holds, 25 slides at g (sin 25 - mu cos 25).
        assert_eq!(slide_displacement(g, 24f64.to_radians(), mu, 0.0, 3.0), 0.0);
        let th = 25f64.to_radians();
        let want = 0.5 * g * (th.sin() - mu * th.cos()) * 9.0;
        assert!((slide_displacement(g, th, mu, 0.0, 3.0) - want).abs() < 1e-12);
        // Friction tilted by 10 degrees: 24 degrees slides too.
        assert!(slide_displacement(g, 24f64.to_radians(), mu, 10f64.to_radians(), 3.0) > 0.05);
    }
}
