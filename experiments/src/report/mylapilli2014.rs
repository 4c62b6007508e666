//! The Mylapilli and Jain 2014 report (`reports/mylapilli2014/`): the paper's section
//! "Simulation results".
//!
//! * Sphere on a fixed horizontal plane, Example 1 (Fig. 2: friction directions aligned with
//!   the motion) and Example 2 (Fig. 3: directions at 45 degrees): per solver the slide time,
//!   the final rolling speed, the friction force while sliding and the largest hop, beside the
//!   exact answer (Trinkle, the paper's reference 2: `t* = 2 v0 / (7 mu g) = 0.291 s`,
//!   `5 v0 / 7 = 1.429 m/s`, `F = mu m g`), the paper's reading of its figures, and the 5.6 mm
//!   hop of the regularised solvers in `PEERS.md`; plots of `v_x`, `omega_y` (and `v_y`,
//!   `omega_x` for Example 2) against the exact solution.
//! * Twelve-link pendulum (Figs. 5-8 and the run times in the text after Fig. 8): the last
//!   link's height and vertical velocity for the five solvers, whole-run times beside the
//!   published ones, how far the trajectories drift apart, and convergence per solver.
//!
//! Data: `data/runs/mylapilli2014/{sphere_example1,sphere_example2,pendulum}.parquet`, written
//! by the configs in `experiments/configs/mylapilli2014/`; commentary written by people is
//! `experiments/configs/mylapilli2014/findings.md`, appended to the README.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use polars::prelude::*;

use super::plots::{overlay_plot, Series};
use super::{fmt, markdown_table, number, read_csv_with_header, write_csv, ReportError};
use crate::config::ExperimentConfig;
use crate::registry::SolverSpec;
use crate::runner::read_parquet;
use crate::scenes::sphere::{SlideRoll, SphereConfig};

/// Slip speed (m/s) of the touching point below which the sphere counts as rolling.
pub const SLIP_TOL: f64 = 1e-6;
/// The paper's slide time (Example 1, and the MNCP solvers of Example 2), in s.
pub const PAPER_SLIDE_TIME: f64 = 0.291;
/// The paper's rolling speed `5 v0 / 7` (m/s).
pub const PAPER_ROLL_SPEED: f64 = 1.429;
/// The paper's slide time of the MLCP solvers in Example 2 ("until t ~ 0.4 s").
pub const PAPER_EXAMPLE2_MLCP_SLIDE_TIME: f64 = 0.4;
/// The hop of a sliding sphere under MuJoCo and Drake (`PEERS.md`), in m.
pub const PEERS_HOP_M: f64 = 5.6e-3;
/// Natural-map residual below which a pendulum step counts as accurate whatever its status.
pub const ACCURATE_RESIDUAL: f64 = 1e-8;
/// Gaps (m) between last-link heights at which the pendulum drift is timed.
pub const DRIFT_THRESHOLDS: [f64; 4] = [1e-9, 1e-6, 1e-4, 1e-3];

/// The sphere configs, in example order.
const SPHERE_CONFIGS: [(u8, &str); 2] = [(1, "sphere_example1.toml"), (2, "sphere_example2.toml")];

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
    pub fn get(&self, name: &str) -> Result<&[f64], ReportError> {
        self.values
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| ReportError::MissingData(format!("column `{name}` of {}", self.solver)))
    }

    /// `MissingData` ("the `what` rows of <solver>") when the driver has no rows.
    pub fn require_rows(&self, what: &str) -> Result<(), ReportError> {
        if self.step.is_empty() {
            return Err(ReportError::MissingData(format!(
                "the {what} rows of {}",
                self.solver
            )));
        }
        Ok(())
    }
}

fn missing(name: &str) -> ReportError {
    ReportError::MissingData(format!("column `{name}` of the steps frame"))
}

fn col_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>, ReportError> {
    let c = df.column(name).map_err(|_| missing(name))?;
    Ok(c.cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

fn col_str(df: &DataFrame, name: &str) -> Result<Vec<String>, ReportError> {
    let c = df.column(name).map_err(|_| missing(name))?;
    Ok(c.cast(&DataType::String)?
        .str()?
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect())
}

/// Splits the driver rows (`role == "driver"`) of a steps frame by `solver`, in order of first
/// appearance (the config's driver order), each sorted by step, with the columns `names`.
pub fn driver_series(df: &DataFrame, names: &[&str]) -> Result<Vec<DriverSeries>, ReportError> {
    let role = col_str(df, "role")?;
    let solver = col_str(df, "solver")?;
    let step = col_f64(df, "step")?;
    let status = col_str(df, "solver_status")?;
    let cols = names
        .iter()
        .map(|n| col_f64(df, n))
        .collect::<Result<Vec<_>, _>>()?;
    let mut order: Vec<String> = Vec::new();
    let mut rows: HashMap<String, Vec<usize>> = HashMap::new();
    for i in 0..df.height() {
        if role[i] != "driver" {
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

/// The columns [`sphere_metrics`] reads.
pub const SPHERE_COLUMNS: [&str; 10] = [
    "n_c",
    "iterations",
    "z",
    "vx",
    "vy",
    "omega_x",
    "omega_y",
    "force_x",
    "force_y",
    "residual",
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
    /// Largest `|v_x - v_x exact(t)|` of the run (NaN without the exact answer).
    pub max_err_vx: f64,
    /// Largest `|omega_y - omega_y exact(t)|` of the run (NaN without the exact answer).
    pub max_err_omega_y: f64,
    /// Share of the steps with contacts that the driver's own test called converged.
    pub converged_share: f64,
    /// Mean iterations per step with contacts.
    pub mean_iterations: f64,
    /// Largest natural-map residual of the run.
    pub max_residual: f64,
}

/// Measures one driver's sphere run: `radius` to compute the slip, `h` for times, `exact` for
/// the errors against the closed form. `MissingData` when the series is empty or lacks a column.
pub fn sphere_metrics_of(
    s: &DriverSeries,
    radius: f64,
    h: f64,
    exact: Option<&SlideRoll>,
) -> Result<SphereMetrics, ReportError> {
    s.require_rows("sphere")?;
    let (vx, vy, wx, wy) = (
        s.get("vx")?,
        s.get("vy")?,
        s.get("omega_x")?,
        s.get("omega_y")?,
    );
    let (z, fx, fy) = (s.get("z")?, s.get("force_x")?, s.get("force_y")?);
    let (n_c, iters, residual) = (s.get("n_c")?, s.get("iterations")?, s.get("residual")?);
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
    let max_err = |f: &dyn Fn(usize) -> f64| match exact {
        Some(_) => (0..n).map(f).fold(0.0f64, f64::max),
        None => f64::NAN,
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
        max_err_vx: max_err(&|k| exact.map_or(f64::NAN, |e| (vx[k] - e.velocity(t[k]).x).abs())),
        max_err_omega_y: max_err(&|k| {
            exact.map_or(f64::NAN, |e| (wy[k] - e.angular_velocity(t[k]).y).abs())
        }),
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
    exact: Option<&SlideRoll>,
) -> Result<Vec<SphereMetrics>, ReportError> {
    driver_series(df, &SPHERE_COLUMNS)?
        .iter()
        .map(|s| sphere_metrics_of(s, radius, h, exact))
        .collect()
}

/// What the paper reports for a sphere solver: `(slide time, rolling speed)`, NaN where it gives
/// nothing (PATH is not in Figs. 2-3; the aligned MLCP run of Example 2 is ours; the paper
/// gives no rolling speed for the MLCP solvers of Example 2).
pub fn published_sphere(example: u8, spec: &SolverSpec) -> (f64, f64) {
    let aligned =
        spec.formulation.option("align_with_slip") == Some(&serde_json::Value::Bool(true));
    match (example, spec.formulation.name.as_str()) {
        (_, "min-map") => (f64::NAN, f64::NAN),
        (2, "mlcp-fb") if aligned => (f64::NAN, f64::NAN),
        (2, "mlcp-fb") => (PAPER_EXAMPLE2_MLCP_SLIDE_TIME, f64::NAN),
        _ => (PAPER_SLIDE_TIME, PAPER_ROLL_SPEED),
    }
}

/// The columns [`pendulum_stats`] reads.
pub const PENDULUM_COLUMNS: [&str; 8] = [
    "n_c",
    "iterations",
    "residual",
    "seconds",
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
    /// Energy after the first step (J).
    pub energy_first: f64,
    /// Largest energy of the run (J).
    pub energy_max: f64,
    /// Energy after the last step (J).
    pub energy_last: f64,
    /// Deepest overlap of the run (m).
    pub max_overlap: f64,
}

/// Convergence and cost of every driver of a pendulum steps frame, in driver order.
pub fn pendulum_stats(series: &[DriverSeries]) -> Result<Vec<PendulumStats>, ReportError> {
    series
        .iter()
        .map(|s| {
            s.require_rows("pendulum")?;
            let (n_c, it, res, sec) = (
                s.get("n_c")?,
                s.get("iterations")?,
                s.get("residual")?,
                s.get("seconds")?,
            );
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
                energy_first: energy[0],
                energy_max: energy.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                energy_last: energy[energy.len() - 1],
                max_overlap: overlap.iter().copied().fold(0.0, f64::max),
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
) -> Result<Drift, ReportError> {
    let find = |label: &String| -> Result<&[f64], ReportError> {
        series
            .iter()
            .find(|s| &s.solver == label)
            .ok_or_else(|| ReportError::MissingData(format!("the pendulum rows of {label}")))?
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

/// Published whole-run times: `(driver label, paper's solver name, seconds)`.
pub fn read_published_times(path: &Path) -> Result<Vec<(String, String, f64)>, ReportError> {
    let want = ["solver", "paper_solver", "published_seconds"];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| Ok((r[0].clone(), r[1].clone(), number(path, r, &want, 2)?)))
        .collect()
}

fn load_config(path: &Path) -> Result<ExperimentConfig, ReportError> {
    ExperimentConfig::load(path).map_err(|e| ReportError::Published(e.to_string()))
}

fn load_steps(cfg: &ExperimentConfig, root: &Path) -> Result<DataFrame, ReportError> {
    let path = cfg.data_path(root);
    if !path.exists() {
        return Err(ReportError::MissingData(path.display().to_string()));
    }
    read_parquet(&path).map_err(ReportError::from)
}

fn read_meta(cfg: &ExperimentConfig, root: &Path) -> serde_json::Value {
    std::fs::read_to_string(cfg.data_path(root).with_extension("meta.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// Every `stride`-th point of `(t, y)` so that at most `max_points` remain (plus the last).
fn thin(t: &[f64], y: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(y.len());
    let stride = n.div_ceil(max_points.max(1)).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n).step_by(stride).map(|k| (t[k], y[k])).collect();
    if n > 0 && pts.last() != Some(&(t[n - 1], y[n - 1])) {
        pts.push((t[n - 1], y[n - 1]));
    }
    pts
}

/// The largest value per window of `n / max_points` steps, at the window's last time: an
/// envelope that keeps spikes when thinning a gap series.
fn envelope(t: &[f64], y: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(y.len());
    let w = n.div_ceil(max_points.max(1)).max(1);
    (0..n)
        .step_by(w)
        .map(|k0| {
            let k1 = (k0 + w).min(n);
            (t[k1 - 1], y[k0..k1].iter().copied().fold(0.0, f64::max))
        })
        .collect()
}

fn sci(x: f64) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.1e}")
    }
}

fn secs_or_never(t: f64) -> String {
    if t.is_nan() {
        "never".into()
    } else {
        format!("{t:.3} s")
    }
}

/// Writes `reports/mylapilli2014/` from the runs under `root/data/runs/mylapilli2014/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let cfg_dir = root.join("experiments/configs/mylapilli2014");
    let out = root.join("reports/mylapilli2014");
    std::fs::create_dir_all(&out)?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Mylapilli and Jain 2014, complementarity + Levenberg-Marquardt: reproduction\n"
    );
    let _ = writeln!(
        md,
        "Generated by `just reproduce mylapilli2014` (`contactlab reproduce mylapilli2014`) from the configs in \
         `experiments/configs/mylapilli2014/`; do not edit by hand. Paper: H. Mylapilli and A. Jain, *Evaluation \
         of complementarity techniques for minimal coordinate contact dynamics*, ASME IDETC 2014 \
         (DETC2014-34322), section \"Simulation results\".\n"
    );
    let _ = writeln!(
        md,
        "Solvers, as in the paper: MLCP-FB-RLM and MLCP-FB-PLM (the MLCP with four friction directions, eq. 22, \
         as Fischer-Burmeister equations, eq. 24, under the regular and the projected Levenberg-Marquardt), \
         MNCP-RLM and MNCP-PLM (the implicit MNCP, eqs. 31-34). PATH is not available: **MinMap-Newton** \
         (Erleben and Ortiz's non-smooth Newton on the min-map of the boxed LCP, a 4-sided pyramid) stands in \
         for MLCP-PATH. Each solver advances its own copy of every run (`[[drivers]]`), warm-started from its \
         previous step.\n"
    );
    sphere_section(root, &cfg_dir, &out, &mut md)?;
    pendulum_section(root, &cfg_dir, &out, &mut md)?;
    if let Ok(findings) = std::fs::read_to_string(cfg_dir.join("findings.md")) {
        md += "\n";
        md += &findings;
    }
    std::fs::write(out.join("README.md"), md)?;
    Ok(())
}

/// The sphere part of the README, `sphere.csv` and the sphere plots.
fn sphere_section(
    root: &Path,
    cfg_dir: &Path,
    out: &Path,
    md: &mut String,
) -> Result<(), ReportError> {
    let mut csv_rows = Vec::new();
    let mut sections = String::new();
    let mut example2: Vec<(SphereMetrics, SolverSpec)> = Vec::new();
    let mut exact_t = f64::NAN;
    let mut exact_v = f64::NAN;
    let mut mu_m_g = f64::NAN;
    for (example, file) in SPHERE_CONFIGS {
        let cfg = load_config(&cfg_dir.join(file))?;
        let params = cfg
            .runs(&cfg_dir.join(file))
            .map_err(|e| ReportError::Published(e.to_string()))?;
        let params = params.first().map(|r| r.params.clone()).unwrap_or_default();
        let sc = SphereConfig::from_table(&params)
            .map_err(|e| ReportError::Published(format!("{file}: {e}")))?;
        let exact =
            SlideRoll::new(&sc).map_err(|e| ReportError::Published(format!("{file}: {e}")))?;
        exact_t = exact.slide_time();
        exact_v = exact.rolling_velocity().norm();
        mu_m_g = sc.mu * sc.mass * sc.gravity;
        let df = load_steps(&cfg, root)?;
        let series = driver_series(&df, &SPHERE_COLUMNS)?;
        let specs = cfg.driver_specs();
        let mut rows_md = Vec::new();
        let mut plot_data: Vec<(String, Vec<f64>, [Vec<f64>; 4])> = Vec::new();
        for s in &series {
            let m = sphere_metrics_of(s, sc.radius, sc.h, Some(&exact))?;
            let spec = specs
                .iter()
                .find(|d| d.name() == s.solver)
                .copied()
                .cloned()
                .unwrap_or_else(|| SolverSpec::new("?", "?", 0.0, 0));
            let (pub_t, pub_v) = published_sphere(example, &spec);
            rows_md.push(vec![
                format!("`{}`", m.solver),
                format!(
                    "{} / {} / {}",
                    fmt(m.slide_time, 3),
                    fmt(pub_t, 3),
                    fmt(exact_t, 4)
                ),
                format!(
                    "{} / {} / {}",
                    fmt(m.roll_speed, 4),
                    fmt(pub_v, 3),
                    fmt(exact_v, 4)
                ),
                format!("{} / {}", fmt(-m.friction_x, 4), fmt(mu_m_g, 4)),
                format!("{} / {}", sci(m.max_hop), fmt(PEERS_HOP_M, 4)),
                format!("{} / {}", sci(m.max_vy), sci(m.max_omega_x)),
                format!("{} / {}", sci(m.max_err_vx), sci(m.max_err_omega_y)),
                format!("{}%", fmt(100.0 * m.converged_share, 1)),
                fmt(m.mean_iterations, 2),
            ]);
            csv_rows.push(vec![
                m.solver.clone(),
                example.to_string(),
                fmt(m.slide_time, 4),
                fmt(m.roll_speed, 6),
                format!("{:.3e}", m.max_hop),
                fmt(exact_t, 6),
                fmt(exact_v, 6),
                fmt(pub_t, 3),
                fmt(pub_v, 3),
                fmt(PEERS_HOP_M, 4),
                fmt(-m.friction_x, 6),
                fmt(mu_m_g, 6),
                format!("{:.3e}", m.max_vy),
                format!("{:.3e}", m.max_omega_x),
                format!("{:.3e}", m.max_err_vx),
            ]);
            let t: Vec<f64> = s.step.iter().map(|&k| (k + 1) as f64 * sc.h).collect();
            plot_data.push((
                m.solver.clone(),
                t,
                [
                    s.get("vx")?.to_vec(),
                    s.get("omega_y")?.to_vec(),
                    s.get("vy")?.to_vec(),
                    s.get("omega_x")?.to_vec(),
                ],
            ));
            if example == 2 {
                example2.push((m, spec));
            }
        }
        let title = if example == 1 {
            "Example 1 (Fig. 2): friction directions aligned with the motion"
        } else {
            "Example 2 (Fig. 3): friction directions at 45 degrees to the motion"
        };
        let _ = writeln!(sections, "### {title}\n");
        let _ = writeln!(
            sections,
            "{} steps of {} ms. Cells: ours / the paper / exact where three values appear; friction: \
             `-F_x` averaged over the sliding steps / `mu m g`; hop: ours / MuJoCo and Drake (`PEERS.md`).\n",
            cfg.scene.steps,
            sc.h * 1e3
        );
        sections += &markdown_table(
            &[
                "solver",
                "slide time (s)",
                "rolling speed (m/s)",
                "friction while sliding (N)",
                "max hop (m)",
                "max abs v_y / omega_x",
                "max error v_x / omega_y",
                "converged (own test)",
                "iterations / step",
            ],
            &rows_md,
        );
        // Plots against the exact solution.
        let names: &[(&str, &str, usize)] = if example == 1 {
            &[("vx", "v_x (m/s)", 0), ("omega_y", "omega_y (rad/s)", 1)]
        } else {
            &[
                ("vx", "v_x (m/s)", 0),
                ("omega_y", "omega_y (rad/s)", 1),
                ("vy", "v_y (m/s)", 2),
                ("omega_x", "omega_x (rad/s)", 3),
            ]
        };
        let _ = writeln!(sections);
        for (name, label, i) in names {
            let series: Vec<Series> = plot_data
                .iter()
                .map(|(s, t, v)| {
                    (
                        s.clone(),
                        t.iter().copied().zip(v[*i].iter().copied()).collect(),
                    )
                })
                .collect();
            let times: Vec<f64> = plot_data.first().map(|p| p.1.clone()).unwrap_or_default();
            let reference: Series = (
                "exact".into(),
                times
                    .iter()
                    .map(|&t| {
                        let (v, w) = (exact.velocity(t), exact.angular_velocity(t));
                        (t, [v.x, w.y, v.y, w.x][*i])
                    })
                    .collect(),
            );
            let file = format!("sphere_example{example}_{name}.svg");
            overlay_plot(
                &out.join(&file),
                &format!("Sphere, example {example}: {label} against the exact solution"),
                "t (s)",
                label,
                Some(&reference),
                &series,
                false,
            )?;
            let _ = writeln!(sections, "![{name}, example {example}]({file})\n");
        }
    }
    write_csv(
        &out.join("sphere.csv"),
        &[
            "solver",
            "example",
            "slide_time_s",
            "roll_speed",
            "max_hop_m",
            "exact_slide_time_s",
            "exact_roll_speed",
            "published_slide_time_s",
            "published_roll_speed",
            "peers_hop_m",
            "friction_while_sliding_n",
            "exact_friction_n",
            "max_abs_vy",
            "max_abs_omega_x",
            "max_error_vx",
        ],
        &csv_rows,
    )?;
    let _ = writeln!(md, "## Sphere on a fixed horizontal plane (Figs. 1-3)\n");
    let _ = writeln!(
        md,
        "m = R = 1, v0 = (2, 0, 0), no spin, mu = 0.2, h = 1 ms, 0.6 s. Exact answer (Trinkle): slides until \
         t* = 2 v0 / (7 mu g) = {:.4} s with the friction `mu m g = {:.4} N` against the motion, then rolls at \
         5 v0 / 7 = {:.4} m/s with `omega_y = v_x / R`, at rest height. **Slide time**: the time `(k + 1) h` \
         of the first step `k` after which the slip speed of the touching point, `|v + omega x (-R e_z)|`, \
         is below {SLIP_TOL:.0e} m/s (with h = 1 ms an exact solver reaches it at the end of the step \
         containing t*, 0.292 s). **Rolling speed**: `|(v_x, v_y)|` after the last step. **Hop**: the largest \
         height of the centre above its rest height over the sliding steps. Also in [`sphere.csv`](sphere.csv) \
         (one row per solver and example).\n",
        exact_t, mu_m_g, exact_v
    );
    *md += &sections;
    // The 45-degree error, in numbers.
    let mlcp45: Vec<&(SphereMetrics, SolverSpec)> = example2
        .iter()
        .filter(|(_, s)| {
            s.formulation.name == "mlcp-fb"
                && s.formulation.option("align_with_slip") != Some(&serde_json::Value::Bool(true))
        })
        .collect();
    if !mlcp45.is_empty() {
        let _ = writeln!(md, "### The 45-degree MLCP error, quantified\n");
        for (m, _) in &mlcp45 {
            let _ = writeln!(
                md,
                "- `{}`: slides until **{} s** ({:+.0}% against t* = {:.4} s; the paper: about {} s) with a friction \
                 force of {} N = {:.3} mu m g (a square pyramid whose edge is met mid-way gives `mu m g / sqrt 2`, \
                 0.707 mu m g, hence t* x sqrt 2 = {:.4} s); largest error in v_x {} m/s; spurious |v_y| at most \
                 {} m/s and |omega_x| at most {} rad/s; final rolling speed {} m/s.",
                m.solver,
                fmt(m.slide_time, 3),
                100.0 * (m.slide_time - exact_t) / exact_t,
                exact_t,
                PAPER_EXAMPLE2_MLCP_SLIDE_TIME,
                fmt(m.friction_norm, 4),
                m.friction_norm / mu_m_g,
                exact_t * std::f64::consts::SQRT_2,
                fmt(m.max_err_vx, 3),
                sci(m.max_vy),
                sci(m.max_omega_x),
                fmt(m.roll_speed, 4),
            );
        }
        let _ = writeln!(md);
    }
    Ok(())
}

/// The pendulum part of the README, `pendulum.csv` and the pendulum plots.
fn pendulum_section(
    root: &Path,
    cfg_dir: &Path,
    out: &Path,
    md: &mut String,
) -> Result<(), ReportError> {
    let cfg = load_config(&cfg_dir.join("pendulum.toml"))?;
    let h = cfg
        .scene
        .params
        .get("h")
        .and_then(|v| v.as_float())
        .unwrap_or(1e-3);
    let df = load_steps(&cfg, root)?;
    let meta = read_meta(&cfg, root);
    let series = driver_series(&df, &PENDULUM_COLUMNS)?;
    let stats = pendulum_stats(&series)?;
    let published = read_published_times(&cfg_dir.join("pendulum_published.csv"))?;
    let specs = cfg.driver_specs();
    let group = |f: &str| -> Vec<String> {
        specs
            .iter()
            .filter(|s| s.formulation.name == f)
            .map(|s| s.name())
            .collect()
    };
    let (mlcp, mncp) = (group("mlcp-fb"), group("mncp"));
    let wall = meta.get("wall_seconds").and_then(|v| v.as_f64());
    let threads = meta.get("threads").and_then(|v| v.as_u64());
    let runs = meta.get("runs").and_then(|v| v.as_u64());
    let load = meta
        .get("load_average_1min")
        .and_then(|v| v.as_f64())
        .map_or(String::new(), |l| {
            format!(" (1-minute load average when it ended: {l:.1})")
        });
    let per_run = match (wall, threads, runs) {
        (Some(w), Some(t), Some(r)) if r > 0 => w * (t.min(r)) as f64 / r as f64,
        _ => f64::NAN,
    };

    let _ = writeln!(md, "## Twelve-link pendulum (Figs. 4-8)\n");
    let _ = writeln!(
        md,
        "Twelve 1 kg spheres (diameter 0.5 m) on pin hinges, 12 m long, pivot 10 m up, floor 0.2 m thick, wall \
         4 m to the right, mu = 0.5, restitution 0.7, initial angle pi/4 and rate 1 rad/s, h = 1 ms, {} steps \
         ({} s). The geometry readings and the restitution law are documented in \
         `experiments/src/scenes/pendulum.rs`. MLCP: four directions per contact, one against the tangential \
         contact velocity of the free motion at each step (`align_with_slip`), as in the paper.\n",
        cfg.scene.steps,
        cfg.scene.steps as f64 * h
    );

    // Times.
    let _ = writeln!(md, "### Whole-run times\n");
    let _ = writeln!(
        md,
        "The paper's times are whole 20 s simulations on its machine (dynamics, Bullet collision detection and \
         the complementarity solve). Ours: **solver** = the driver's solve times summed over the run (what the \
         five solvers differ in); the whole sweep (five runs, scene and solver, {} threads in parallel) took \
         **{}** of wall time{load}, about **{} per run**. Solver times on a shared machine move with its \
         load: compare ratios between solvers, not absolutes across machines. Also in \
         [`pendulum.csv`](pendulum.csv).\n",
        threads.map_or("?".into(), |t| t.to_string()),
        wall.map_or("not recorded".into(), |w| format!("{w:.1} s")),
        if per_run.is_nan() { "?".into() } else { format!("{per_run:.1} s") },
    );
    let fastest_pub = published.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let fastest_ours = stats
        .iter()
        .map(|s| s.solver_seconds)
        .fold(f64::INFINITY, f64::min);
    let mut time_rows = Vec::new();
    let mut csv_rows = Vec::new();
    for s in &stats {
        let p = published.iter().find(|p| p.0 == s.solver);
        let pub_s = p.map_or(f64::NAN, |p| p.2);
        let final_gap = series
            .iter()
            .filter(|o| o.solver != s.solver)
            .map(|o| -> Result<f64, ReportError> {
                let me = series
                    .iter()
                    .find(|x| x.solver == s.solver)
                    .ok_or_else(|| ReportError::MissingData(s.solver.clone()))?;
                Ok(max_gap(me.get("last_z")?, o.get("last_z")?))
            })
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .fold(0.0, f64::max);
        time_rows.push(vec![
            format!("`{}`", s.solver),
            p.map_or("-".into(), |p| p.1.clone()),
            format!("{} s ({:.2}x)", fmt(pub_s, 2), pub_s / fastest_pub),
            format!(
                "{:.2} s ({:.2}x)",
                s.solver_seconds,
                s.solver_seconds / fastest_ours
            ),
            format!(
                "{:.1}",
                1e6 * s.solver_seconds / s.contact_steps.max(1) as f64
            ),
        ]);
        csv_rows.push(vec![
            s.solver.clone(),
            p.map_or("-".into(), |p| p.1.clone()),
            fmt(pub_s, 2),
            format!("{:.3}", s.solver_seconds),
            fmt(per_run, 2),
            s.contact_steps.to_string(),
            fmt(100.0 * s.converged_share, 2),
            fmt(100.0 * s.accurate_share, 2),
            fmt(s.mean_iterations, 3),
            fmt(s.max_iterations, 0),
            format!("{:.3e}", final_gap),
            fmt(s.energy_last, 3),
        ]);
    }
    *md += &markdown_table(
        &[
            "solver",
            "paper's solver",
            "published (x fastest)",
            "ours: solver (x fastest)",
            "us / contact step",
        ],
        &time_rows,
    );
    write_csv(
        &out.join("pendulum.csv"),
        &[
            "solver",
            "paper_solver",
            "published_seconds",
            "reproduced_solver_seconds",
            "reproduced_run_seconds_mean",
            "contact_steps",
            "converged_percent",
            "accurate_percent",
            "mean_iterations",
            "max_iterations",
            "max_last_z_gap_m",
            "final_energy_j",
        ],
        &csv_rows,
    )?;

    // Convergence.
    let _ = writeln!(md, "\n### Convergence per solver\n");
    let _ = writeln!(
        md,
        "Over the steps with contacts. *Converged*: the driver's own test (`|F| <= tol`, tol = {}); *local \
         minimum*: stopped by the gradient test before that; *accurate*: natural-map residual at most \
         {ACCURATE_RESIDUAL:.0e} whatever the status.\n",
        specs.first().map_or("?".into(), |s| format!("{:.0e}", s.tol)),
    );
    let conv_rows: Vec<Vec<String>> = stats
        .iter()
        .map(|s| {
            vec![
                format!("`{}`", s.solver),
                s.contact_steps.to_string(),
                s.max_contacts.to_string(),
                format!("{}%", fmt(100.0 * s.converged_share, 2)),
                format!("{}%", fmt(100.0 * s.local_minimum_share, 2)),
                format!("{}%", fmt(100.0 * s.accurate_share, 2)),
                sci(s.max_residual),
                fmt(s.mean_iterations, 2),
                fmt(s.max_iterations, 0),
                format!(
                    "{} / {} / {}",
                    fmt(s.energy_first, 1),
                    fmt(s.energy_max, 1),
                    fmt(s.energy_last, 1)
                ),
                sci(s.max_overlap),
            ]
        })
        .collect();
    *md += &markdown_table(
        &[
            "solver",
            "contact steps",
            "max contacts",
            "converged",
            "local minimum",
            "accurate",
            "max residual",
            "iterations / step",
            "max iterations",
            "energy first / max / last (J)",
            "max overlap (m)",
        ],
        &conv_rows,
    );

    // Drift.
    let _ = writeln!(md, "\n### How far the trajectories drift apart\n");
    let labels: Vec<String> = series.iter().map(|s| s.solver.clone()).collect();
    let mut pair_rows = Vec::new();
    for a in &series {
        let mut row = vec![format!("`{}`", a.solver)];
        for b in &series {
            row.push(if a.solver == b.solver {
                "-".into()
            } else {
                format!(
                    "{} / {}",
                    sci(max_gap(a.get("last_z")?, b.get("last_z")?)),
                    sci(max_gap(a.get("last_vz")?, b.get("last_vz")?))
                )
            });
        }
        pair_rows.push(row);
    }
    let mut header = vec!["max gap last_z (m) / last_vz (m/s)".to_string()];
    header.extend(labels.iter().map(|l| format!("`{l}`")));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let _ = writeln!(
        md,
        "Largest gap over the whole run between two solvers' last-link height / vertical velocity:\n"
    );
    *md += &markdown_table(&header_refs, &pair_rows);
    let dz = drift(&series, "last_z", &mlcp, &mncp, h)?;
    let mut th_rows = Vec::new();
    for th in DRIFT_THRESHOLDS {
        th_rows.push(vec![
            format!("{th:.0e}"),
            secs_or_never(dz.first_above(&dz.within_a, th)),
            secs_or_never(dz.first_above(&dz.within_b, th)),
            secs_or_never(dz.first_above(&dz.cross_min, th)),
            secs_or_never(dz.first_above(&dz.any, th)),
        ]);
    }
    let _ = writeln!(
        md,
        "\nWhen the last-link heights first differ by more than a threshold: within the MLCP group ({}), within \
         the MNCP group ({}), between the groups (the closest cross pair), and between any two of the five:\n",
        mlcp.join(", "),
        mncp.join(", ")
    );
    *md += &markdown_table(
        &[
            "threshold (m)",
            "within MLCP",
            "within MNCP",
            "MLCP vs MNCP",
            "any pair",
        ],
        &th_rows,
    );
    let (t_sep, held) = dz.separation(10.0, 1e-6);
    let n = dz.time.len();
    let last_second = n.saturating_sub((1.0 / h).round() as usize);
    let tail_max = |v: &[f64]| v[last_second..].iter().copied().fold(0.0, f64::max);
    let _ = writeln!(
        md,
        "\n**Group separation** (the paper: \"the MLCP set of solvers showing a similar solution and MNCP set of \
         solvers showing a similar solution\" at 20 s, Figs. 6 and 8). Rule: the groups are apart at a step \
         when the closest MLCP-MNCP pair is more than 10 times farther apart than the farthest pair within \
         either group, and more than 1e-6 m. First such time: **{}**{}. Over the final second: within MLCP at \
         most {} m, within MNCP at most {} m, closest cross pair at most {} m.\n",
        secs_or_never(t_sep),
        if t_sep.is_nan() {
            String::new()
        } else {
            format!(" (the rule holds at {:.1}% of the later steps)", 100.0 * held)
        },
        sci(tail_max(&dz.within_a)),
        sci(tail_max(&dz.within_b)),
        sci(tail_max(&dz.cross_min)),
    );

    // Plots.
    let _ = writeln!(md, "### Plots\n");
    let times: Vec<Vec<f64>> = series
        .iter()
        .map(|s| s.step.iter().map(|&k| (k + 1) as f64 * h).collect())
        .collect();
    let end = times.first().and_then(|t| t.last().copied()).unwrap_or(0.0);
    let pick = |name: &str, from: f64| -> Result<Vec<Series>, ReportError> {
        series
            .iter()
            .zip(&times)
            .map(|(s, t)| {
                let v = s.get(name)?;
                let k0 = t.iter().position(|&x| x >= from).unwrap_or(0);
                Ok((s.solver.clone(), thin(&t[k0..], &v[k0..], 4000)))
            })
            .collect()
    };
    for (name, label, fig) in [
        ("last_z", "last-link height (m)", "Fig. 5"),
        ("last_vz", "last-link v_z (m/s)", "Fig. 7"),
        ("energy", "energy (J)", "energy"),
    ] {
        let file = format!("pendulum_{name}.svg");
        overlay_plot(
            &out.join(&file),
            &format!("Twelve-link pendulum: {label} ({fig})"),
            "t (s)",
            label,
            None,
            &pick(name, 0.0)?,
            false,
        )?;
        let _ = writeln!(md, "![{name}]({file})\n");
    }
    for (name, label, fig) in [
        ("last_z", "last-link height (m)", "Fig. 6"),
        ("last_vz", "last-link v_z (m/s)", "Fig. 8"),
    ] {
        let file = format!("pendulum_{name}_end.svg");
        overlay_plot(
            &out.join(&file),
            &format!("Last second: {label} ({fig})"),
            "t (s)",
            label,
            None,
            &pick(name, end - 1.0)?,
            false,
        )?;
        let _ = writeln!(md, "![{name}, last second]({file})\n");
    }
    let drift_series: Vec<Series> = vec![
        ("within MLCP".into(), envelope(&dz.time, &dz.within_a, 1000)),
        ("within MNCP".into(), envelope(&dz.time, &dz.within_b, 1000)),
        (
            "MLCP vs MNCP (closest pair)".into(),
            envelope(&dz.time, &dz.cross_min, 1000),
        ),
        ("any two of five".into(), envelope(&dz.time, &dz.any, 1000)),
    ];
    overlay_plot(
        &out.join("pendulum_drift.svg"),
        "Gap between last-link heights (largest per 20 ms)",
        "t (s)",
        "gap (m)",
        None,
        &drift_series,
        true,
    )?;
    let _ = writeln!(md, "![drift between the solvers](pendulum_drift.svg)\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sphere_frame() -> DataFrame {
        // Two solvers, four steps of h = 0.1 s, R = 1. Solver "a" slides for two steps (slip
        // 2 - 0 = 2, then 1) and rolls from step 2 (vx = omega_y = 1); it hops 1 mm once while
        // sliding and 5 mm after rolling (not counted). Solver "b" never stops slipping.
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
        )
        .unwrap()
    }

    #[test]
    fn sphere_metrics_follow_their_definitions() {
        let m = sphere_metrics(&sphere_frame(), 1.0, 0.1, None).unwrap();
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
        assert!(a.max_err_vx.is_nan());
        let b = &m[1];
        assert!(b.slide_time.is_nan());
        assert!((b.roll_speed - 2.0f64.hypot(0.5)).abs() < 1e-12);
        assert_eq!(b.max_hop, 0.0);
        assert_eq!((b.max_vy, b.max_omega_x), (0.5, 0.25));
        assert_eq!(b.converged_share, 1.0);
    }

    #[test]
    fn sphere_errors_against_the_exact_answer() {
        let cfg = SphereConfig::default();
        let exact = SlideRoll::new(&cfg).unwrap();
        // A run that follows the exact answer to the digit but is 0.01 m/s off at step 1.
        let t = |k: u64| (k + 1) as f64 * cfg.h;
        let vx: Vec<f64> = (0..3u64)
            .map(|k| exact.velocity(t(k)).x + if k == 1 { 0.01 } else { 0.0 })
            .collect();
        let wy: Vec<f64> = (0..3u64).map(|k| exact.angular_velocity(t(k)).y).collect();
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
        )
        .unwrap();
        let m = &sphere_metrics(&df, 1.0, cfg.h, Some(&exact)).unwrap()[0];
        assert!((m.max_err_vx - 0.01).abs() < 1e-12);
        assert!(m.max_err_omega_y < 1e-15);
        assert!(m.slide_time.is_nan());
    }

    #[test]
    fn missing_columns_are_missing_data() {
        let df = sphere_frame().drop("omega_y").unwrap();
        let e = sphere_metrics(&df, 1.0, 0.1, None).unwrap_err();
        assert!(
            matches!(e, ReportError::MissingData(ref s) if s.contains("omega_y")),
            "{e}"
        );
        let empty = DriverSeries {
            solver: "x".into(),
            step: vec![],
            values: HashMap::new(),
            solver_status: vec![],
        };
        assert!(matches!(
            sphere_metrics_of(&empty, 1.0, 0.1, None),
            Err(ReportError::MissingData(_))
        ));
        assert!(matches!(
            pendulum_stats(&[empty]),
            Err(ReportError::MissingData(_))
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
            Err(ReportError::MissingData(_))
        ));
    }

    #[test]
    fn published_values_follow_the_paper() {
        let mut spec = SolverSpec::new("mlcp-fb", "lm", 1e-14, 10);
        assert_eq!(published_sphere(1, &spec), (0.291, 1.429));
        let (t, v) = published_sphere(2, &spec);
        assert_eq!(t, 0.4);
        assert!(v.is_nan());
        spec.formulation = spec.formulation.with("align_with_slip", true);
        assert!(published_sphere(2, &spec).0.is_nan());
        assert!(
            published_sphere(1, &SolverSpec::new("min-map", "newton", 1e-14, 10))
                .0
                .is_nan()
        );
        assert_eq!(
            published_sphere(2, &SolverSpec::new("mncp", "plm", 1e-14, 10)),
            (0.291, 1.429)
        );
    }

    #[test]
    fn thinning_keeps_the_ends_and_envelopes_keep_spikes() {
        let t: Vec<f64> = (0..10).map(f64::from).collect();
        let mut y = vec![0.0; 10];
        y[4] = 7.0;
        let p = thin(&t, &y, 3);
        assert_eq!(p.first(), Some(&(0.0, 0.0)));
        assert_eq!(p.last(), Some(&(9.0, 0.0)));
        assert!(p.len() <= 5);
        let e = envelope(&t, &y, 2);
        assert_eq!(e, vec![(4.0, 7.0), (9.0, 0.0)]);
    }
}
