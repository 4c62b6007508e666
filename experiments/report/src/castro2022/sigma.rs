//! Castro 2022's page: the slip parameter `sigma` (Figs. 14-15; `sigma.toml`).

use contactlab_runs::schema::steps;

use super::format::{plain, sci_of, walls_key, walls_name};
use crate::analysis::castro2022::order_of_accuracy;
use crate::analysis::{f64s, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::plots::{Axis, Chart, Series};
use crate::table::{Cell as C, Table};

/// The last steps of a sigma run whose slip counts as slip at rest.
const REST_STEPS: usize = 10;

/// The columns of a sigma run that Figs. 14-15 read.
struct SigmaColumns {
    walls: Vec<String>,
    solver: Vec<String>,
    step: Vec<f64>,
    iterations: Vec<f64>,
    contacts: Vec<f64>,
    slip: Vec<f64>,
    condition: Vec<f64>,
    condition_scaled: Vec<f64>,
}

impl SigmaColumns {
    /// Reads them from a sigma run's steps.
    fn read(df: &polars::prelude::DataFrame) -> Result<SigmaColumns, ReportError> {
        Ok(SigmaColumns {
            walls: strs(df, "walls")?,
            solver: strs(df, steps::SOLVER)?,
            step: f64s(df, steps::STEP)?,
            iterations: f64s(df, steps::ITERATIONS)?,
            contacts: f64s(df, steps::N_C)?,
            slip: f64s(df, "mean_slip")?,
            condition: f64s(df, "hessian_condition")?,
            condition_scaled: f64s(df, "hessian_condition_scaled")?,
        })
    }
}

/// One (walls, sigma) run of Figs. 14-15.
struct SigmaPoint {
    sigma: f64,
    /// Mean slip over the last [`REST_STEPS`] steps.
    at_rest: f64,
    /// Mean iterations over the steps with contacts.
    iterations: f64,
    /// cond(H): mean over the steps with contacts, and at the last of them.
    condition: [f64; 2],
    /// cond(DHD): mean over the steps with contacts.
    condition_scaled: f64,
}

/// The sigma of a driver's label (`sigma=1e-3`), NaN when it has none.
fn sigma_of(label: &str) -> f64 {
    label
        .strip_prefix("sigma=")
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The mean of the finite values, 0 for none.
fn finite_mean(values: impl Iterator<Item = f64>) -> f64 {
    let x: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// The run with `walls` and driver `label` of a sigma run of `steps` steps.
fn sigma_point(c: &SigmaColumns, walls: bool, label: &str, steps: f64) -> SigmaPoint {
    let w = walls.to_string();
    let rows: Vec<usize> = (0..c.walls.len())
        .filter(|&k| c.walls[k] == w && c.solver[k] == label)
        .collect();
    let rest = rows
        .iter()
        .filter(|&&k| c.step[k] >= steps - REST_STEPS as f64)
        .map(|&k| c.slip[k]);
    let with_contacts: Vec<usize> = rows
        .iter()
        .copied()
        .filter(|&k| c.contacts[k] > 0.0)
        .collect();
    // Iterations count every step with contacts (a NaN would show).
    let iterations = with_contacts.iter().map(|&k| c.iterations[k]).sum::<f64>()
        / with_contacts.len().max(1) as f64;
    let mean_of = |v: &[f64]| finite_mean(with_contacts.iter().map(|&k| v[k]));
    let last = with_contacts
        .iter()
        .max_by(|&&a, &&b| c.step[a].total_cmp(&c.step[b]))
        .map_or(f64::NAN, |&k| c.condition[k]);
    SigmaPoint {
        sigma: sigma_of(label),
        at_rest: finite_mean(rest),
        iterations,
        condition: [mean_of(&c.condition), last],
        condition_scaled: mean_of(&c.condition_scaled),
    }
}

/// Figs. 14-15: the slip parameter `sigma`: slip at rest against eq. 31's `sigma mu dt g`, and
/// the mean Newton iterations.
pub(super) fn sigma(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("sigma.toml")?;
    let c = SigmaColumns::read(&run.steps)?;
    let steps = run.config.scene.steps as f64;
    let num = |k: &str| run.scene_value(|s| s.number(k));
    let (dt, mu, g) = (num("dt")?, num("mu")?, num("gravity")?);
    // Eq. 31's slip per unit sigma.
    let per_sigma = mu * dt * g;
    let mut labels: Vec<String> = c.solver.clone();
    labels.sort();
    labels.dedup();
    labels.sort_by(|a, b| sigma_of(a).total_cmp(&sigma_of(b)));
    let mut t = sigma_header();
    let mut points = Vec::new();
    for walls in [true, false] {
        let pts: Vec<SigmaPoint> = labels
            .iter()
            .map(|l| sigma_point(&c, walls, l, steps))
            .collect();
        for (label, p) in labels.iter().zip(&pts) {
            t.row(sigma_row(p, walls, per_sigma))?;
            sigma_point_facts(r, walls, label, p, per_sigma);
        }
        sigma_slope_facts(r, walls, &pts);
        points.push((walls, pts));
    }
    r.show_table("sigma", &t)?;
    let sigmas: Vec<f64> = labels.iter().map(|l| sigma_of(l)).collect();
    sigma_plots(r, &points, &sigmas, per_sigma)?;
    let seconds = steps * dt;
    let (least, most) = (sigmas.first().copied(), sigmas.last().copied());
    let (least, most) = (least.unwrap_or(f64::NAN), most.unwrap_or(f64::NAN));
    r.facts()
        .num("sigma.simulated_seconds", seconds, plain(seconds))
        .num("sigma.rest_steps", REST_STEPS as f64, Fmt::int())
        .num("sigma.sigma_min", least, sci_of(least))
        .num("sigma.sigma_max", most, sci_of(most));
    Ok(())
}

/// The sigma study's columns (`sigma.csv`).
fn sigma_header() -> Table {
    Table::new(Some("sigma.csv"))
        .col("sigma", "sigma")
        .col("walls", "walls")
        .col("slip at rest (m/s)", "slip_at_rest")
        .col("sigma mu dt g (m/s)", "slip_estimate")
        .col("SAP iterations (mean)", "iterations_mean")
        .col("cond(H), mean", "hessian_condition_mean")
        .col("cond(H), last step", "hessian_condition_final")
        .col("cond(DHD), mean", "hessian_condition_scaled_mean")
}

/// The row of one (walls, sigma) run; `per_sigma` is eq. 31's slip per unit sigma.
fn sigma_row(p: &SigmaPoint, walls: bool, per_sigma: f64) -> Vec<C> {
    vec![
        C::same(p.sigma, &Fmt::sci(0)),
        C::text(walls.to_string()),
        C::same(p.at_rest, &Fmt::sci(2)),
        C::same(p.sigma * per_sigma, &Fmt::sci(2)),
        C::same(p.iterations, &Fmt::fixed(2)),
        C::same(p.condition[0], &Fmt::sci(2)),
        C::same(p.condition[1], &Fmt::sci(2)),
        C::same(p.condition_scaled, &Fmt::sci(2)),
    ]
}

/// The facts of one (walls, sigma) run: slip over eq. 31's estimate, iterations, conditions.
fn sigma_point_facts(r: &mut Report, walls: bool, label: &str, p: &SigmaPoint, per_sigma: f64) {
    let key = format!("sigma.{}.{}", walls_key(walls), label.replace('=', "_"));
    r.facts()
        .num(
            format!("{key}.slip_over_estimate"),
            p.at_rest / (p.sigma * per_sigma),
            Fmt::fixed(2),
        )
        .num(format!("{key}.iterations"), p.iterations, Fmt::fixed(1))
        .num(format!("{key}.condition"), p.condition[0], Fmt::sci(1))
        .num(
            format!("{key}.condition_scaled"),
            p.condition_scaled,
            Fmt::sci(1),
        );
}

/// Fig. 15's claim, cond ~ 1/sigma: the least-squares slopes of log cond(H) and log cond(DHD)
/// on log sigma.
fn sigma_slope_facts(r: &mut Report, walls: bool, pts: &[SigmaPoint]) {
    let x: Vec<f64> = pts.iter().map(|p| p.sigma).collect();
    let slope = |y: Vec<f64>| order_of_accuracy(&x, &y).unwrap_or(f64::NAN);
    let key = walls_key(walls);
    let plain_slope = slope(pts.iter().map(|p| p.condition[0]).collect());
    let scaled_slope = slope(pts.iter().map(|p| p.condition_scaled).collect());
    r.facts()
        .num(
            format!("sigma.{key}.condition_slope"),
            plain_slope,
            Fmt::fixed(2),
        )
        .num(
            format!("sigma.{key}.condition_scaled_slope"),
            scaled_slope,
            Fmt::fixed(2),
        );
}

/// Figs. 14-15: slip at rest, iterations and conditions against sigma.
fn sigma_plots(
    r: &mut Report,
    points: &[(bool, Vec<SigmaPoint>)],
    sigmas: &[f64],
    per_sigma: f64,
) -> Result<(), ReportError> {
    let along = |get: &dyn Fn(&SigmaPoint) -> f64, pts: &[SigmaPoint]| -> Vec<(f64, f64)> {
        pts.iter().map(|p| (p.sigma, get(p))).collect()
    };
    let mut slip: Vec<Series> = Vec::new();
    let mut iterations: Vec<Series> = Vec::new();
    let mut condition: Vec<Series> = Vec::new();
    for (walls, pts) in points {
        let name = walls_name(*walls);
        slip.push((name.to_string(), along(&|p| p.at_rest, pts)));
        iterations.push((name.to_string(), along(&|p| p.iterations, pts)));
        condition.push((format!("{name}, cond(H)"), along(&|p| p.condition[0], pts)));
        condition.push((
            format!("{name}, cond(DHD)"),
            along(&|p| p.condition_scaled, pts),
        ));
    }
    slip.push((
        "sigma mu dt g (eq. 31)".to_string(),
        sigmas.iter().map(|s| (*s, s * per_sigma)).collect(),
    ));
    let sigma_axis = || Axis::log("sigma").ticks(sigmas.to_vec());
    r.show_plot(
        "sigma_slip",
        &Chart::new(
            "Mean slip at rest (Fig. 14)",
            sigma_axis(),
            Axis::log("slip (m/s)"),
        )
        .legend_upper_left(),
        &slip,
    )?;
    r.show_plot(
        "sigma_iterations",
        &Chart::new(
            "Mean Newton iterations (Fig. 15)",
            sigma_axis(),
            Axis::linear(steps::ITERATIONS),
        ),
        &iterations,
    )?;
    r.show_plot(
        "sigma_condition",
        &Chart::new(
            "Mean cond(H) vs sigma (Fig. 15)",
            sigma_axis(),
            Axis::log("condition number"),
        ),
        &condition,
    )
}
