//! Mylapilli and Jain 2014 statistics: per driver of a sphere-on-a-plane run (examples 1-2)
//! the slide time, rolling speed, hop, friction and spurious sideways motion, and the errors
//! against Trinkle's closed form as the run recorded it (the scene's `vx_exact` and
//! `omega_y_exact` columns);
//! per driver of the twelve-link pendulum its convergence, cost and energy, how far the
//! trajectories of different solvers drift apart, and the largest one-step rise of a series
//! (the first floor impact's energy jump).

use std::collections::HashMap;

use contactlab_runs::schema::steps;
use polars::prelude::*;

use super::{f64s, strs, AnalysisError};

/// Slip speed (m/s) of the touching point below which the sphere counts as rolling.
pub const SLIP_TOL: f64 = 1e-6;
/// Natural-map residual below which a pendulum step counts as accurate whatever its status.
pub const ACCURATE_RESIDUAL: f64 = 1e-8;

/// One driver's rows of a steps frame, sorted by step: the requested float columns and the
/// driver's own status per step.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverSeries {
    /// The driver's label.
    pub solver: String,
    /// Step indices.
    pub step: Vec<u64>,
    /// Requested columns by name.
    pub values: HashMap<String, Vec<f64>>,
    /// The driver's own status per step (`no_contacts` when the step had none).
    pub solver_status: Vec<String>,
}

impl DriverSeries {
    /// A requested column; `MissingData` when it was not requested or not present.
    pub fn get(&self, name: &str) -> Result<&[f64], AnalysisError> {
        self.values.get(name).map(Vec::as_slice).ok_or_else(|| {
            AnalysisError::MissingData(format!("column `{name}` of {}", self.solver))
        })
    }

    /// `MissingData` ("the `what` rows of `<solver>`") when the driver has no rows.
    pub fn require_rows(&self, what: &str) -> Result<(), AnalysisError> {
        if self.step.is_empty() {
            return Err(AnalysisError::MissingData(format!(
                "the {what} rows of {}",
                self.solver
            )));
        }
        Ok(())
    }
}

fn missing(name: &str) -> AnalysisError {
    AnalysisError::MissingData(format!("column `{name}` of the steps frame"))
}

fn col_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>, AnalysisError> {
    df.column(name).map_err(|_| missing(name))?;
    Ok(f64s(df, name)?)
}

fn col_str(df: &DataFrame, name: &str) -> Result<Vec<String>, AnalysisError> {
    df.column(name).map_err(|_| missing(name))?;
    Ok(strs(df, name)?)
}

/// Splits the driver rows (`role == "driver"`) of a steps frame by `solver`, in order of first
/// appearance (the config's driver order), each sorted by step, with the columns `names`.
pub fn driver_series(df: &DataFrame, names: &[&str]) -> Result<Vec<DriverSeries>, AnalysisError> {
    let role = col_str(df, steps::ROLE)?;
    let solver = col_str(df, steps::SOLVER)?;
    let step = col_f64(df, steps::STEP)?;
    let status = col_str(df, steps::SOLVER_STATUS)?;
    let cols = names
        .iter()
        .map(|n| col_f64(df, n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut order: Vec<String> = Vec::new();
    let mut rows: HashMap<String, Vec<usize>> = HashMap::new();
    for i in 0..df.height() {
        if role[i] != steps::ROLE_DRIVER {
            continue;
        }
        if !rows.contains_key(&solver[i]) {
            order.push(solver[i].clone());
        }
        rows.entry(solver[i].clone()).or_default().push(i);
    }
    Ok(order
        .into_iter()
        .map(|s| {
            let mut idx = rows.remove(&s).unwrap_or_default();
            idx.sort_by(|&a, &b| step[a].total_cmp(&step[b]));
            DriverSeries {
                step: idx.iter().map(|&i| step[i] as u64).collect(),
                values: names
                    .iter()
                    .zip(&cols)
                    .map(|(n, c)| (n.to_string(), idx.iter().map(|&i| c[i]).collect()))
                    .collect(),
                solver_status: idx.iter().map(|&i| status[i].clone()).collect(),
                solver: s,
            }
        })
        .collect())
}

/// The columns [`sphere_metrics`] reads (and the report plots): the sphere's observables,
/// with the exact answer's velocities at each step's end (`NaN` where the scene has none).
pub const SPHERE_COLUMNS: [&str; 14] = [
    steps::N_C,
    steps::ITERATIONS,
    "z",
    "vx",
    "vy",
    "omega_x",
    "omega_y",
    "force_x",
    "force_y",
    steps::RESIDUAL,
    "vx_exact",
    "vy_exact",
    "omega_x_exact",
    "omega_y_exact",
];

/// One driver's sphere run, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SphereMetrics {
    /// The driver's label.
    pub solver: String,
    /// Time `(step + 1) h` of the first step after which the slip speed of the touching point
    /// is below [`SLIP_TOL`] (NaN if it never is).
    pub slide_time: f64,
    /// Horizontal speed `|(v_x, v_y)|` after the last step.
    pub roll_speed: f64,
    /// Largest height of the centre above its rest height over the sliding steps (0 if never
    /// above).
    pub max_hop: f64,
    /// Mean friction force along `x` over the sliding steps (N).
    pub friction_x: f64,
    /// Mean friction force along `y` over the sliding steps (N).
    pub friction_y: f64,
    /// Mean horizontal friction magnitude over the sliding steps (N).
    pub friction_norm: f64,
    /// Largest `|v_y|` of the run (exact: 0).
    pub max_vy: f64,
    /// Largest `|omega_x|` of the run (exact: 0).
    pub max_omega_x: f64,
    /// Largest `|v_x - vx_exact|` of the run (NaN where the run recorded no exact answer:
    /// every `vx_exact` NaN).
    pub max_err_vx: f64,
    /// Largest `|omega_y - omega_y_exact|` of the run (NaN where the run recorded no exact
    /// answer).
    pub max_err_omega_y: f64,
    /// Share of the steps with contacts that the driver's own test called converged.
    pub converged_share: f64,
    /// Mean iterations per step with contacts.
    pub mean_iterations: f64,
    /// Largest natural-map residual of the run.
    pub max_residual: f64,
}

/// Measures one driver's sphere run: `radius` to compute the slip, `h` for times; the errors
/// are against the series' exact columns. `MissingData` when the series is empty or lacks a
/// column of [`SPHERE_COLUMNS`].
pub fn sphere_metrics_of(
    s: &DriverSeries,
    radius: f64,
    h: f64,
) -> Result<SphereMetrics, AnalysisError> {
    s.require_rows("sphere")?;
    let (vx, vy, wx, wy) = (
        s.get("vx")?,
        s.get("vy")?,
        s.get("omega_x")?,
        s.get("omega_y")?,
    );
    let (z, fx, fy) = (s.get("z")?, s.get("force_x")?, s.get("force_y")?);
    let (n_c, iters, residual) = (
        s.get(steps::N_C)?,
        s.get(steps::ITERATIONS)?,
        s.get(steps::RESIDUAL)?,
    );
    let (vx_exact, wy_exact) = (s.get("vx_exact")?, s.get("omega_y_exact")?);
    let n = s.step.len();
    let t: Vec<f64> = s.step.iter().map(|&k| (k + 1) as f64 * h).collect();
    // Slip of the touching point p - R e_z: v + omega x (-R e_z) = (vx - R wy, vy + R wx, 0).
    let slip = |k: usize| (vx[k] - radius * wy[k]).hypot(vy[k] + radius * wx[k]);
    let end = (0..n).find(|&k| slip(k) < SLIP_TOL);
    let sliding = end.unwrap_or(n);
    let mean = |f: &dyn Fn(usize) -> f64| {
        if sliding == 0 {
            f64::NAN
        } else {
            (0..sliding).map(f).sum::<f64>() / sliding as f64
        }
    };
    let max_abs = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    // f64::max skips NaN: the largest error, NaN only when every step's is (no exact answer).
    let max_err = |x: &[f64], exact: &[f64]| {
        (0..n)
            .map(|k| (x[k] - exact[k]).abs())
            .fold(f64::NAN, f64::max)
    };
    let contact: Vec<usize> = (0..n).filter(|&k| n_c[k] > 0.0).collect();
    let share = |k: &[usize], f: &dyn Fn(usize) -> bool| {
        if k.is_empty() {
            f64::NAN
        } else {
            k.iter().filter(|&&i| f(i)).count() as f64 / k.len() as f64
        }
    };
    Ok(SphereMetrics {
        solver: s.solver.clone(),
        slide_time: end.map_or(f64::NAN, |k| t[k]),
        roll_speed: vx[n - 1].hypot(vy[n - 1]),
        max_hop: z[..sliding].iter().fold(0.0f64, |m, &v| m.max(v)),
        friction_x: mean(&|k| fx[k]),
        friction_y: mean(&|k| fy[k]),
        friction_norm: mean(&|k| fx[k].hypot(fy[k])),
        max_vy: max_abs(vy),
        max_omega_x: max_abs(wx),
        max_err_vx: max_err(vx, vx_exact),
        max_err_omega_y: max_err(wy, wy_exact),
        converged_share: share(&contact, &|k| s.solver_status[k] == "converged"),
        mean_iterations: if contact.is_empty() {
            f64::NAN
        } else {
            contact.iter().map(|&k| iters[k]).sum::<f64>() / contact.len() as f64
        },
        max_residual: residual.iter().copied().fold(0.0, f64::max),
    })
}

/// [`sphere_metrics_of`] for every driver of a sphere steps frame, in driver order.
pub fn sphere_metrics(
    df: &DataFrame,
    radius: f64,
    h: f64,
) -> Result<Vec<SphereMetrics>, AnalysisError> {
    driver_series(df, &SPHERE_COLUMNS)?
        .iter()
        .map(|s| sphere_metrics_of(s, radius, h))
        .collect()
}

/// The columns [`pendulum_stats`] reads.
pub const PENDULUM_COLUMNS: [&str; 9] = [
    steps::N_C,
    steps::ITERATIONS,
    steps::RESIDUAL,
    steps::SECONDS,
    steps::SCENE_SECONDS,
    "last_z",
    "last_vz",
    "energy",
    "max_overlap",
];

/// One driver's pendulum run: convergence and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct PendulumStats {
    /// The driver's label.
    pub solver: String,
    /// Steps of the run.
    pub steps: usize,
    /// Steps with contacts.
    pub contact_steps: usize,
    /// Most contacts in one step.
    pub max_contacts: usize,
    /// Share of the contact steps the driver's own test called converged.
    pub converged_share: f64,
    /// Share of the contact steps that ended as `local_minimum`.
    pub local_minimum_share: f64,
    /// Share of the contact steps with a natural-map residual at most [`ACCURATE_RESIDUAL`].
    pub accurate_share: f64,
    /// Largest natural-map residual.
    pub max_residual: f64,
    /// Mean iterations per contact step.
    pub mean_iterations: f64,
    /// Most iterations in one step.
    pub max_iterations: f64,
    /// Seconds in the solver, summed over the run.
    pub solver_seconds: f64,
    /// The driver's whole run: its solver's and its scene's seconds (collision, assembly,
    /// update) summed over the steps, both timed by the run. The paper's per-solver run time.
    pub run_seconds: f64,
    /// Energy after the first step (J).
    pub energy_first: f64,
    /// Largest energy of the run (J).
    pub energy_max: f64,
    /// Energy after the last step (J).
    pub energy_last: f64,
    /// Deepest overlap of the run (m).
    pub max_overlap: f64,
    /// The first contact step the driver's own test did not call converged, if any.
    pub first_unconverged_step: Option<u64>,
}

/// Convergence and cost of every driver of a pendulum steps frame, in driver order.
pub fn pendulum_stats(series: &[DriverSeries]) -> Result<Vec<PendulumStats>, AnalysisError> {
    series
        .iter()
        .map(|s| {
            s.require_rows("pendulum")?;
            let (n_c, it, res, sec) = (
                s.get(steps::N_C)?,
                s.get(steps::ITERATIONS)?,
                s.get(steps::RESIDUAL)?,
                s.get(steps::SECONDS)?,
            );
            let scene_seconds: f64 = s.get(steps::SCENE_SECONDS)?.iter().sum();
            let (energy, overlap) = (s.get("energy")?, s.get("max_overlap")?);
            let contact: Vec<usize> = (0..s.step.len()).filter(|&k| n_c[k] > 0.0).collect();
            let m = contact.len().max(1) as f64;
            let count = |f: &dyn Fn(usize) -> bool| contact.iter().filter(|&&k| f(k)).count();
            Ok(PendulumStats {
                solver: s.solver.clone(),
                steps: s.step.len(),
                contact_steps: contact.len(),
                max_contacts: n_c.iter().fold(0.0f64, |a, &b| a.max(b)) as usize,
                converged_share: count(&|k| s.solver_status[k] == "converged") as f64 / m,
                local_minimum_share: count(&|k| s.solver_status[k] == "local_minimum") as f64 / m,
                accurate_share: count(&|k| res[k] <= ACCURATE_RESIDUAL) as f64 / m,
                max_residual: contact.iter().map(|&k| res[k]).fold(0.0, f64::max),
                mean_iterations: contact.iter().map(|&k| it[k]).sum::<f64>() / m,
                max_iterations: contact.iter().map(|&k| it[k]).fold(0.0, f64::max),
                solver_seconds: sec.iter().sum(),
                run_seconds: sec.iter().sum::<f64>() + scene_seconds,
                energy_first: energy[0],
                energy_max: energy.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                energy_last: energy[energy.len() - 1],
                max_overlap: overlap.iter().copied().fold(0.0, f64::max),
                first_unconverged_step: contact
                    .iter()
                    .find(|&&k| s.solver_status[k] != "converged")
                    .map(|&k| s.step[k]),
            })
        })
        .collect()
}

/// How two groups of trajectories drift apart over time (one observable, aligned by step).
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Time of each step `(step + 1) h`.
    pub time: Vec<f64>,
    /// Largest gap between two members of the first group at each step.
    pub within_a: Vec<f64>,
    /// Largest gap between two members of the second group at each step.
    pub within_b: Vec<f64>,
    /// Smallest gap between a member of the first and one of the second group at each step.
    pub cross_min: Vec<f64>,
    /// Largest gap between any two trajectories (all of them, not only the groups) at each step.
    pub any: Vec<f64>,
}

impl Drift {
    /// The first time `series` exceeds `threshold` (NaN if never).
    pub fn first_above(&self, series: &[f64], threshold: f64) -> f64 {
        series
            .iter()
            .position(|&v| v > threshold)
            .map_or(f64::NAN, |k| self.time[k])
    }

    /// The first time the groups separate: the closest cross-group pair is more than
    /// `factor` times the farthest within-group pair and more than `floor` apart (NaN if
    /// never), with the share of the later steps at which that still holds.
    pub fn separation(&self, factor: f64, floor: f64) -> (f64, f64) {
        let held = |k: usize| {
            self.cross_min[k] > floor
                && self.cross_min[k] > factor * self.within_a[k].max(self.within_b[k])
        };
        let n = self.time.len();
        match (0..n).find(|&k| held(k)) {
            None => (f64::NAN, 0.0),
            Some(k0) => (
                self.time[k0],
                (k0..n).filter(|&k| held(k)).count() as f64 / (n - k0) as f64,
            ),
        }
    }
}

/// The drift of observable `name` between group `a` and group `b` (labels) among `series`,
/// `h` for the times. `MissingData` when a label has no series or the column is absent.
pub fn drift(
    series: &[DriverSeries],
    name: &str,
    a: &[String],
    b: &[String],
    h: f64,
) -> Result<Drift, AnalysisError> {
    let find = |label: &String| -> Result<&[f64], AnalysisError> {
        series
            .iter()
            .find(|s| &s.solver == label)
            .ok_or_else(|| AnalysisError::MissingData(format!("the pendulum rows of {label}")))?
            .get(name)
    };
    let ga = a.iter().map(find).collect::<Result<Vec<_>, _>>()?;
    let gb = b.iter().map(find).collect::<Result<Vec<_>, _>>()?;
    let all = series
        .iter()
        .map(|s| s.get(name))
        .collect::<Result<Vec<_>, _>>()?;
    let n = all.iter().map(|v| v.len()).min().unwrap_or(0);
    let spread = |g: &[&[f64]], k: usize| {
        let mut m = 0.0f64;
        for (i, x) in g.iter().enumerate() {
            for y in &g[i + 1..] {
                m = m.max((x[k] - y[k]).abs());
            }
        }
        m
    };
    let cross = |k: usize| {
        let mut m = f64::INFINITY;
        for x in &ga {
            for y in &gb {
                m = m.min((x[k] - y[k]).abs());
            }
        }
        m
    };
    let step = series.first().map(|s| &s.step[..n]).unwrap_or(&[]);
    Ok(Drift {
        time: step.iter().map(|&k| (k + 1) as f64 * h).collect(),
        within_a: (0..n).map(|k| spread(&ga, k)).collect(),
        within_b: (0..n).map(|k| spread(&gb, k)).collect(),
        cross_min: (0..n).map(cross).collect(),
        any: (0..n).map(|k| spread(&all, k)).collect(),
    })
}

/// The largest `|x_i - y_i|` of two series over their common length.
pub fn max_gap(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The largest rise of a series from one step to the next (an impact's energy jump).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rise {
    /// Step index of the value after the rise.
    pub step: u64,
    /// Value before the rise (at the previous step).
    pub before: f64,
    /// Value after the rise.
    pub after: f64,
}

/// The largest one-step rise of column `name` of a driver's series (`None` for fewer than two
/// steps or when it never rises).
pub fn largest_rise(s: &DriverSeries, name: &str) -> Result<Option<Rise>, AnalysisError> {
    let v = s.get(name)?;
    Ok((1..v.len())
        .filter(|&k| v[k] > v[k - 1])
        .max_by(|&a, &b| (v[a] - v[a - 1]).total_cmp(&(v[b] - v[b - 1])))
        .map(|k| Rise {
            step: s.step[k],
            before: v[k - 1],
            after: v[k],
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sphere_frame() -> DataFrame {
        // Two solvers, four steps of h = 0.1 s, R = 1. Solver "a" slides for two steps (slip
        // 2 - 0 = 2, then 1) and rolls from step 2 (vx = omega_y = 1); it hops 1 mm once while
        // sliding and 5 mm after rolling (not counted). Solver "b" never stops slipping. No
        // exact answer was recorded (NaN exact columns).
        df!(
            "role" => ["driver"; 8],
            "solver" => ["a", "a", "a", "a", "b", "b", "b", "b"],
            "step" => [3u64, 0, 1, 2, 0, 1, 2, 3],
            "n_c" => [1u64, 1, 1, 0, 1, 1, 1, 1],
            "iterations" => [0u64, 2, 4, 0, 1, 1, 1, 1],
            "solver_status" => ["converged", "converged", "local_minimum", "no_contacts", "converged", "converged", "converged", "converged"],
            "residual" => [0.0, 1e-15, 1e-9, 0.0, 0.0, 0.0, 0.0, 0.0],
            "z" => [0.0, 0.0, 0.001, 0.005, 0.0, 0.0, 0.0, 0.0],
            "vx" => [1.0, 2.0, 1.5, 1.0, 2.0, 2.0, 2.0, 2.0],
            "vy" => [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5],
            "omega_x" => [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25],
            "omega_y" => [1.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0],
            "force_x" => [0.0, -2.0, -1.0, 0.0, -1.0, -1.0, -1.0, -1.0],
            "force_y" => [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            "vx_exact" => [f64::NAN; 8],
            "vy_exact" => [f64::NAN; 8],
            "omega_x_exact" => [f64::NAN; 8],
            "omega_y_exact" => [f64::NAN; 8],
        )
        .unwrap()
    }

    #[test]
    fn sphere_metrics_follow_their_definitions() {
        let m = sphere_metrics(&sphere_frame(), 1.0, 0.1).unwrap();
        assert_eq!(m.len(), 2);
        let a = &m[0];
        assert_eq!(a.solver, "a");
        // Rows come back sorted by step: slip 2, 1, 0 (step 2), 0 -> rolling after step 2.
        assert!((a.slide_time - 0.3).abs() < 1e-12, "{}", a.slide_time);
        assert_eq!(a.roll_speed, 1.0);
        assert_eq!(a.max_hop, 0.001);
        assert!((a.friction_x + 1.5).abs() < 1e-12);
        assert!((a.friction_norm - 1.5).abs() < 1e-12);
        assert!((a.converged_share - 2.0 / 3.0).abs() < 1e-12);
        assert!((a.mean_iterations - 2.0).abs() < 1e-12);
        assert_eq!(a.max_residual, 1e-9);
        assert!(a.max_err_vx.is_nan() && a.max_err_omega_y.is_nan());
        let b = &m[1];
        assert!(b.slide_time.is_nan());
        assert!((b.roll_speed - 2.0f64.hypot(0.5)).abs() < 1e-12);
        assert_eq!(b.max_hop, 0.0);
        assert_eq!((b.max_vy, b.max_omega_x), (0.5, 0.25));
        assert_eq!(b.converged_share, 1.0);
    }

    #[test]
    fn sphere_errors_against_the_exact_answer() {
        // The paper's sliding phase (R = 1, mu g = 1.962, so v_x = 2 - 1.962 t and omega_y =
        // 5 mu g t / 2), h = 1 ms: a run that follows it to the digit but for v_x 0.01 m/s off
        // at step 1 and omega_y 1e-3 rad/s off at step 2.
        let h = 0.001;
        let t = |k: usize| (k + 1) as f64 * h;
        let vx_exact: Vec<f64> = (0..3).map(|k| 2.0 - 1.962 * t(k)).collect();
        let wy_exact: Vec<f64> = (0..3).map(|k| 2.5 * 1.962 * t(k)).collect();
        let vx: Vec<f64> = (0..3)
            .map(|k| vx_exact[k] + if k == 1 { 0.01 } else { 0.0 })
            .collect();
        let wy: Vec<f64> = (0..3)
            .map(|k| wy_exact[k] + if k == 2 { 1e-3 } else { 0.0 })
            .collect();
        let df = df!(
            "role" => ["driver"; 3],
            "solver" => ["s"; 3],
            "step" => [0u64, 1, 2],
            "n_c" => [1u64; 3],
            "iterations" => [1u64; 3],
            "solver_status" => ["converged"; 3],
            "residual" => [0.0; 3],
            "z" => [0.0; 3],
            "vx" => vx,
            "vy" => [0.0; 3],
            "omega_x" => [0.0; 3],
            "omega_y" => wy,
            "force_x" => [-1.962; 3],
            "force_y" => [0.0; 3],
            "vx_exact" => vx_exact,
            "vy_exact" => [0.0; 3],
            "omega_x_exact" => [0.0; 3],
            "omega_y_exact" => wy_exact,
        )
        .unwrap();
        let m = &sphere_metrics(&df, 1.0, h).unwrap()[0];
        assert!((m.max_err_vx - 0.01).abs() < 1e-12, "{}", m.max_err_vx);
        assert!(
            (m.max_err_omega_y - 1e-3).abs() < 1e-12,
            "{}",
            m.max_err_omega_y
        );
        assert!(m.slide_time.is_nan());
    }

    #[test]
    fn missing_columns_are_missing_data() {
        let df = sphere_frame().drop("omega_y").unwrap();
        let e = sphere_metrics(&df, 1.0, 0.1).unwrap_err();
        assert!(
            matches!(e, AnalysisError::MissingData(ref s) if s.contains("omega_y")),
            "{e}"
        );
        let empty = DriverSeries {
            solver: "x".into(),
            step: vec![],
            values: HashMap::new(),
            solver_status: vec![],
        };
        assert!(matches!(
            sphere_metrics_of(&empty, 1.0, 0.1),
            Err(AnalysisError::MissingData(_))
        ));
        assert!(matches!(
            pendulum_stats(&[empty]),
            Err(AnalysisError::MissingData(_))
        ));
    }

    #[test]
    fn drift_times_and_group_separation() {
        let mk = |name: &str, z: Vec<f64>| DriverSeries {
            solver: name.into(),
            step: (0..z.len() as u64).collect(),
            values: [("last_z".to_string(), z)].into_iter().collect(),
            solver_status: vec![],
        };
        // Groups {a1, a2} and {b1, b2}: they agree until step 2, then the groups split by 1e-3
        // while each group stays within 1e-6.
        let s = vec![
            mk("a1", vec![0.0, 0.0, 1.0, 1.0]),
            mk("a2", vec![0.0, 0.0, 1.0, 1.0 + 1e-6]),
            mk("b1", vec![0.0, 0.0, 1.001, 1.001]),
            mk("b2", vec![0.0, 1e-12, 1.001, 1.001]),
        ];
        let g = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let d = drift(&s, "last_z", &g(&["a1", "a2"]), &g(&["b1", "b2"]), 0.5).unwrap();
        assert_eq!(d.time, vec![0.5, 1.0, 1.5, 2.0]);
        assert!(d.first_above(&d.within_a, 1e-9) == 2.0);
        assert!(d.first_above(&d.within_b, 1e-13) == 1.0);
        assert!((d.cross_min[2] - 1e-3).abs() < 1e-12);
        assert!(d.first_above(&d.cross_min, 1e-4) == 1.5);
        assert!(d.first_above(&d.within_a, 1.0).is_nan());
        let (t, held) = d.separation(10.0, 1e-6);
        assert_eq!((t, held), (1.5, 1.0));
        assert!((d.any[3] - 1e-3).abs() < 1e-9);
        assert_eq!(max_gap(&[1.0, 2.0], &[1.5, 0.0, 9.0]), 2.0);
        assert!(matches!(
            drift(&s, "last_z", &g(&["nope"]), &g(&["b1"]), 0.5),
            Err(AnalysisError::MissingData(_))
        ));
    }

    #[test]
    fn the_largest_rise_is_found() {
        let s = DriverSeries {
            solver: "x".into(),
            step: vec![0, 1, 2, 3, 4],
            values: [("energy".to_string(), vec![10.0, 9.0, 12.0, 11.0, 11.5])]
                .into_iter()
                .collect(),
            solver_status: vec![],
        };
        assert_eq!(
            largest_rise(&s, "energy").unwrap(),
            Some(Rise {
                step: 2,
                before: 9.0,
                after: 12.0
            })
        );
        assert!(largest_rise(&s, "nope").is_err());
    }
}
