//! Castro, Permenter and Han 2022, section VI-B statistics of the spring-cylinder
//! (the `spring_cylinder` scene of `contactlab-scenes`): the position error `e_q` of each run against the exact
//! oscillator, the order of accuracy fitted over a time-step sweep (Fig. 7; the rows of
//! `reports/castro2022/order.csv`), and the energy behaviour of each scheme (Figs. 5-6: the
//! peak-to-peak band, the energy left at the end, how long it takes to lose a share of it).
//!
//! The steps frames these read come from `experiments/configs/castro2022/*.toml`: one run per
//! `(scheme, mu[, dt])`, with `scheme` and `mu` as sweep keys (hence columns) and the scene's
//! observables `time`, `x`, `x_exact` and `relative_energy`. Only the driver rows count.

use std::collections::BTreeMap;

use contactlab_runs::schema::steps;
use polars::prelude::DataFrame;

use crate::analysis::{f64s, strs, AnalysisError};

/// Section VI-B's `e_q = (1/T int_0^T (x - x_e)^2 dt)^(1/2)` from samples at equally spaced
/// times (the rectangle rule: the root mean square of the differences); `NaN` for no samples,
/// different lengths or a non-finite sample (no exact answer).
pub fn position_error(x: &[f64], x_exact: &[f64]) -> f64 {
    if x.is_empty() || x.len() != x_exact.len() {
        return f64::NAN;
    }
    let sum: f64 = x.iter().zip(x_exact).map(|(a, b)| (a - b).powi(2)).sum();
    (sum / x.len() as f64).sqrt()
}

/// The least-squares slope of `ln e` against `ln dt`: the observed order of accuracy. `None`
/// with fewer than two points, a non-positive or non-finite value, or equal time steps.
pub fn order_of_accuracy(dt: &[f64], error: &[f64]) -> Option<f64> {
    if dt.len() < 2 || dt.len() != error.len() {
        return None;
    }
    if dt.iter().chain(error).any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let n = dt.len() as f64;
    let lx: Vec<f64> = dt.iter().map(|v| v.ln()).collect();
    let ly: Vec<f64> = error.iter().map(|v| v.ln()).collect();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// One run of a spring-cylinder steps frame: its keys and the driver's series, sorted by step.
#[derive(Debug, Clone, PartialEq)]
pub struct CylinderRun {
    /// The run index.
    pub run: u64,
    /// The driver's label.
    pub solver: String,
    /// The theta-method scheme (`symplectic_euler`, `implicit_euler`, `midpoint`, ...).
    pub scheme: String,
    /// The friction coefficient.
    pub mu: f64,
    /// The time step, `time / (step + 1)` of the first row.
    pub dt: f64,
    /// Simulated time after each step.
    pub time: Vec<f64>,
    /// Position `x` after each step.
    pub x: Vec<f64>,
    /// The exact answer's `x` at the same times (`NaN` where there is none).
    pub x_exact: Vec<f64>,
    /// Total mechanical energy over its initial value after each step.
    pub relative_energy: Vec<f64>,
}

fn column_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>, AnalysisError> {
    df.column(name).map_err(|_| missing(name))?;
    Ok(f64s(df, name)?)
}

fn column_str(df: &DataFrame, name: &str) -> Result<Vec<String>, AnalysisError> {
    df.column(name).map_err(|_| missing(name))?;
    Ok(strs(df, name)?)
}

fn missing(name: &str) -> AnalysisError {
    AnalysisError::MissingData(format!(
        "column `{name}` of the spring-cylinder steps frame (sweep `scheme` and `mu` in the config)"
    ))
}

/// Splits the driver rows of a spring-cylinder steps frame into runs, in run order.
pub fn cylinder_runs(df: &DataFrame) -> Result<Vec<CylinderRun>, AnalysisError> {
    let role = column_str(df, steps::ROLE)?;
    let solver = column_str(df, steps::SOLVER)?;
    let scheme = column_str(df, "scheme")?;
    let run = column_f64(df, steps::RUN)?;
    let step = column_f64(df, steps::STEP)?;
    let mu = column_f64(df, "mu")?;
    let time = column_f64(df, "time")?;
    let x = column_f64(df, "x")?;
    let x_exact = column_f64(df, "x_exact")?;
    let energy = column_f64(df, "relative_energy")?;
    let mut rows: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for i in 0..df.height() {
        if role[i] == steps::ROLE_DRIVER {
            rows.entry(run[i] as u64).or_default().push(i);
        }
    }
    Ok(rows
        .into_iter()
        .map(|(r, mut idx)| {
            idx.sort_by(|&a, &b| step[a].total_cmp(&step[b]));
            let first = idx[0];
            let pick = |c: &[f64]| idx.iter().map(|&i| c[i]).collect::<Vec<f64>>();
            CylinderRun {
                run: r,
                solver: solver[first].clone(),
                scheme: scheme[first].clone(),
                mu: mu[first],
                dt: time[first] / (step[first] + 1.0),
                time: pick(&time),
                x: pick(&x),
                x_exact: pick(&x_exact),
                relative_energy: pick(&energy),
            }
        })
        .collect())
}

/// One point of Fig. 7: a run's position error.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorPoint {
    /// The driver's label.
    pub solver: String,
    /// The scheme.
    pub scheme: String,
    /// The friction coefficient.
    pub mu: f64,
    /// The time step.
    pub dt: f64,
    /// Steps of the run.
    pub steps: usize,
    /// `e_q` over the run ([`position_error`]; `NaN` without an exact answer).
    pub e_q: f64,
}

/// [`position_error`] of every run (Fig. 7's points), in run order.
pub fn position_errors(df: &DataFrame) -> Result<Vec<ErrorPoint>, AnalysisError> {
    Ok(cylinder_runs(df)?
        .into_iter()
        .map(|r| ErrorPoint {
            e_q: position_error(&r.x, &r.x_exact),
            steps: r.x.len(),
            solver: r.solver,
            scheme: r.scheme,
            mu: r.mu,
            dt: r.dt,
        })
        .collect())
}

/// An order of accuracy the paper states, by scheme and friction coefficient.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedOrder {
    /// The scheme.
    pub scheme: String,
    /// The friction coefficient.
    pub mu: f64,
    /// The order.
    pub order: f64,
}

/// A row of `reports/castro2022/order.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderRow {
    /// The driver's label (one per `[[drivers]]` entry; the shipped config has one).
    pub solver: String,
    /// The scheme.
    pub scheme: String,
    /// The friction coefficient.
    pub mu: f64,
    /// The order the paper states (`NaN` where it states none).
    pub order_published: f64,
    /// The slope of `ln e_q` against `ln dt` over the sweep ([`order_of_accuracy`]; `NaN` with
    /// fewer than two time steps or without an exact answer).
    pub order_reproduced: f64,
    /// The time steps fitted.
    pub dts: Vec<f64>,
    /// Their position errors.
    pub errors: Vec<f64>,
}

/// The CSV header of [`OrderRow`]s as the report writes them.
pub const ORDER_COLUMNS: [&str; 4] = ["scheme", "mu", "order_published", "order_reproduced"];

impl OrderRow {
    /// The row's cells under [`ORDER_COLUMNS`] (orders to two decimals, `NaN` as empty).
    pub fn cells(&self) -> Vec<String> {
        let num = |v: f64| {
            if v.is_finite() {
                format!("{v:.2}")
            } else {
                String::new()
            }
        };
        vec![
            self.scheme.clone(),
            format!("{}", self.mu),
            num(self.order_published),
            num(self.order_reproduced),
        ]
    }
}

/// The order study: per `(solver, scheme, mu)`, in order of first appearance, the fitted
/// order of the position error over the time steps of the sweep, beside the published one.
/// An empty frame is `MissingData`.
pub fn order_rows(
    df: &DataFrame,
    published: &[PublishedOrder],
) -> Result<Vec<OrderRow>, AnalysisError> {
    let points = position_errors(df)?;
    if points.is_empty() {
        return Err(AnalysisError::MissingData(
            "driver rows in the spring-cylinder steps frame".into(),
        ));
    }
    let mut rows: Vec<OrderRow> = Vec::new();
    for p in points {
        let at = rows
            .iter()
            .position(|r| r.solver == p.solver && r.scheme == p.scheme && r.mu == p.mu);
        let row = match at {
            Some(i) => &mut rows[i],
            None => {
                rows.push(OrderRow {
                    order_published: published
                        .iter()
                        .find(|o| o.scheme == p.scheme && o.mu == p.mu)
                        .map_or(f64::NAN, |o| o.order),
                    solver: p.solver.clone(),
                    scheme: p.scheme.clone(),
                    mu: p.mu,
                    order_reproduced: f64::NAN,
                    dts: Vec::new(),
                    errors: Vec::new(),
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.dts.push(p.dt);
        row.errors.push(p.e_q);
    }
    for r in &mut rows {
        r.order_reproduced = order_of_accuracy(&r.dts, &r.errors).unwrap_or(f64::NAN);
    }
    Ok(rows)
}

/// One run's energy behaviour (Figs. 5-6), in units of the initial energy.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergySummary {
    /// The driver's label.
    pub solver: String,
    /// The scheme.
    pub scheme: String,
    /// The friction coefficient.
    pub mu: f64,
    /// The time step.
    pub dt: f64,
    /// Simulated span (s).
    pub duration: f64,
    /// Peak-to-peak width of `E / E0` over the first `window` seconds (the start's 1
    /// included): Fig. 5's "28% band" for symplectic Euler, Fig. 6's "0.16%" for the midpoint
    /// rule with friction.
    pub band: f64,
    /// Peak-to-peak width of `E / E0` over the whole run.
    pub band_total: f64,
    /// The mean of `E / E0` over the last `smoothing` seconds.
    pub final_energy: f64,
    /// The first time at which the mean of `E / E0` over the preceding `smoothing` seconds is
    /// at most `1 - loss` (`NaN` if it never is): Fig. 6's "10 minutes to lose 10%". Never
    /// below `smoothing`: a run that loses the share sooner (implicit Euler) reports that.
    pub time_to_lose: f64,
}

/// Window lengths and the loss share of [`energy_summaries`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyWindows {
    /// Seconds from the start over which [`EnergySummary::band`] is taken.
    pub window: f64,
    /// Seconds of the running mean that smooths the in-period oscillation (about a period).
    pub smoothing: f64,
    /// The share of the initial energy whose loss [`EnergySummary::time_to_lose`] times.
    pub loss: f64,
}

impl Default for EnergyWindows {
    /// Two seconds (4.5 frictionless or 3.7 rolling periods, Figs. 5-6 left), a 0.5 s running
    /// mean (about a period), 10% loss.
    fn default() -> Self {
        EnergyWindows {
            window: 2.0,
            smoothing: 0.5,
            loss: 0.1,
        }
    }
}

fn peak_to_peak<'a>(values: impl Iterator<Item = &'a f64>) -> f64 {
    let (lo, hi) = values.fold((1.0f64, 1.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    hi - lo
}

/// [`EnergySummary`] of one run.
pub fn energy_summary(run: &CylinderRun, w: &EnergyWindows) -> EnergySummary {
    let n = run.time.len();
    let band = peak_to_peak(
        run.time
            .iter()
            .zip(&run.relative_energy)
            .filter(|(t, _)| **t <= w.window + 0.5 * run.dt)
            .map(|(_, e)| e),
    );
    // Running mean over the preceding `smoothing` seconds (at least one sample).
    let k = ((w.smoothing / run.dt).round() as usize).max(1);
    let mut sum = 0.0;
    let mut time_to_lose = f64::NAN;
    let mut final_energy = f64::NAN;
    for i in 0..n {
        sum += run.relative_energy[i];
        if i >= k {
            sum -= run.relative_energy[i - k];
        }
        if i + 1 >= k {
            let mean = sum / k as f64;
            final_energy = mean;
            if time_to_lose.is_nan() && mean <= 1.0 - w.loss {
                time_to_lose = run.time[i];
            }
        }
    }
    EnergySummary {
        solver: run.solver.clone(),
        scheme: run.scheme.clone(),
        mu: run.mu,
        dt: run.dt,
        duration: run.time.last().copied().unwrap_or(0.0),
        band,
        band_total: peak_to_peak(run.relative_energy.iter()),
        final_energy,
        time_to_lose,
    }
}

/// [`energy_summary`] of every run of an energy-study steps frame, in run order.
pub fn energy_summaries(
    df: &DataFrame,
    w: &EnergyWindows,
) -> Result<Vec<EnergySummary>, AnalysisError> {
    Ok(cylinder_runs(df)?
        .iter()
        .map(|r| energy_summary(r, w))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    #[test]
    fn position_error_is_the_rms_difference() {
        assert_eq!(position_error(&[1.0, 2.0], &[1.0, 0.0]), 2.0f64.sqrt());
        assert!(position_error(&[], &[]).is_nan());
        assert!(position_error(&[1.0], &[1.0, 2.0]).is_nan());
        assert!(position_error(&[1.0], &[f64::NAN]).is_nan());
    }

    #[test]
    fn order_is_the_log_log_slope() {
        let dt = [0.1, 0.05, 0.025, 0.0125];
        let e2: Vec<f64> = dt.iter().map(|h| 3.0 * h * h).collect();
        assert!((order_of_accuracy(&dt, &e2).unwrap() - 2.0).abs() < 1e-12);
        let e1: Vec<f64> = dt.iter().map(|h| 0.5 * h).collect();
        assert!((order_of_accuracy(&dt, &e1).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(order_of_accuracy(&[0.1], &[1.0]), None);
        assert_eq!(order_of_accuracy(&[0.1, 0.1], &[1.0, 2.0]), None);
        assert_eq!(order_of_accuracy(&[0.1, 0.05], &[1.0, 0.0]), None);
        assert_eq!(order_of_accuracy(&[0.1, 0.05], &[1.0, f64::NAN]), None);
    }

    /// A frame as the runner writes it: two schemes x two time steps, errors `c dt^p`, plus a
    /// shadow row that must be ignored.
    fn order_frame() -> DataFrame {
        let (mut run, mut step, mut role, mut solver, mut scheme) =
            (vec![], vec![], vec![], vec![], vec![]);
        let (mut mu, mut time, mut x, mut x_exact, mut energy) =
            (vec![], vec![], vec![], vec![], vec![]);
        let cases = [
            ("symplectic_euler", 0.02, 1.0),
            ("symplectic_euler", 0.01, 1.0),
            ("midpoint", 0.02, 2.0),
            ("midpoint", 0.01, 2.0),
        ];
        for (r, (s, dt, p)) in cases.iter().enumerate() {
            let steps = (0.1 / dt) as usize;
            for k in 0..steps {
                for who in ["driver", "shadow"] {
                    run.push(r as u64);
                    step.push(k as u64);
                    role.push(who);
                    solver.push(if who == "driver" { "sap" } else { "other" });
                    scheme.push(*s);
                    mu.push(1.0);
                    time.push((k + 1) as f64 * dt);
                    x_exact.push(0.0);
                    // A constant error 7 dt^p (the shadow rows say something else).
                    x.push(if who == "driver" {
                        7.0 * dt.powf(*p)
                    } else {
                        1.0
                    });
                    energy.push(1.0);
                }
            }
        }
        df!(
            "run" => run, "step" => step, "role" => role, "solver" => solver,
            "scheme" => scheme, "mu" => mu, "time" => time, "x" => x,
            "x_exact" => x_exact, "relative_energy" => energy,
        )
        .unwrap()
    }

    #[test]
    fn order_rows_fit_each_scheme_and_take_the_published_order() {
        let published = [
            PublishedOrder {
                scheme: "midpoint".into(),
                mu: 1.0,
                order: 2.0,
            },
            PublishedOrder {
                scheme: "midpoint".into(),
                mu: 0.0,
                order: 9.0,
            },
        ];
        let rows = order_rows(&order_frame(), &published).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].scheme, "symplectic_euler");
        assert!(rows[0].order_published.is_nan());
        assert!((rows[0].order_reproduced - 1.0).abs() < 1e-9);
        assert_eq!(rows[1].scheme, "midpoint");
        assert_eq!(rows[1].order_published, 2.0);
        assert!((rows[1].order_reproduced - 2.0).abs() < 1e-9);
        assert_eq!(rows[1].dts, [0.02, 0.01]);
        assert!((rows[1].errors[1] - 7e-4).abs() < 1e-15);
        assert_eq!(rows[1].cells(), ["midpoint", "1", "2.00", "2.00"]);
        assert_eq!(rows[0].cells()[2], "");
        let points = position_errors(&order_frame()).unwrap();
        assert_eq!(points.len(), 4);
        assert_eq!(points[1].steps, 10);
        assert!((points[1].dt - 0.01).abs() < 1e-15);
    }

    #[test]
    fn missing_columns_and_empty_frames_are_named() {
        let df = order_frame().drop("scheme").unwrap();
        let e = order_rows(&df, &[]).unwrap_err().to_string();
        assert!(e.contains("`scheme`"), "{e}");
        let empty = order_frame().head(Some(0));
        assert!(order_rows(&empty, &[]).is_err());
    }

    fn run_with(dt: f64, energy: impl Fn(f64) -> f64, duration: f64) -> CylinderRun {
        let n = (duration / dt).round() as usize;
        let time: Vec<f64> = (1..=n).map(|k| k as f64 * dt).collect();
        CylinderRun {
            run: 0,
            solver: "sap".into(),
            scheme: "midpoint".into(),
            mu: 1.0,
            dt,
            relative_energy: time.iter().map(|&t| energy(t)).collect(),
            x: vec![0.0; n],
            x_exact: vec![0.0; n],
            time,
        }
    }

    #[test]
    fn energy_band_decay_and_loss_time() {
        let w = EnergyWindows::default();
        // An oscillation of +-5% around a slow decay of 1% per second.
        let r = run_with(
            0.01,
            |t| (1.0 - 0.01 * t) * (1.0 + 0.05 * (4.0 * std::f64::consts::TAU * t).sin()),
            20.0,
        );
        let s = energy_summary(&r, &w);
        // From 1.05 near t = 1/16 s down to 0.95 (1 - 0.0194) near t = 1.94 s.
        assert!((s.band - 0.118).abs() < 0.002, "{s:?}");
        assert!(s.band_total > s.band);
        // The 0.5 s mean sees whole periods of the 4 Hz oscillation: the decay alone.
        assert!(
            (s.final_energy - (1.0 - 0.01 * 19.75)).abs() < 1e-3,
            "{s:?}"
        );
        assert!((s.time_to_lose - 10.25).abs() < 0.02, "{s:?}");
        assert_eq!(s.duration, 20.0);
        // Conserved: no band, never lost.
        let c = energy_summary(&run_with(0.01, |_| 1.0, 5.0), &w);
        assert_eq!((c.band, c.band_total, c.final_energy), (0.0, 0.0, 1.0));
        assert!(c.time_to_lose.is_nan());
    }
}
