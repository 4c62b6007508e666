//! Metrics of the physical-fidelity study: what a contact model does to a simulated motion,
//! measured against the motion's closed form (the setups of `contactlab_scenes::fidelity`,
//! after Le Lidec et al., "Contact Models in Robotics: a Comparative Analysis", T-RO 2024).
//!
//! Our runs give one row per step and solver with the scene's observables (`t`, `x`, `y`,
//! `speed`, `lift`, ...) and the exact motion beside them (`x_exact`, `speed_exact`, ...); the
//! run's meta gives each run's parameters and exact constants (`stop_time_exact`, ...). MuJoCo's
//! and Drake's rows come from `experiments/peers/fidelity.py`, which computes the same metrics
//! with the same definitions:
//!
//! - **stop time**: the first `t` with `|v| <= 1 mm/s` ([`SPEED_THRESHOLD`]), linearly
//!   interpolated between the two steps around the crossing; **breakaway**: the first `t` with
//!   `|v| >= 1 mm/s`, interpolated the same way. The exact breakaway by this definition is the
//!   instant the exact speed `v = (F'/2m)(t - t0)^2` reaches the threshold, `t0 + sqrt(2 m
//!   1e-3 / F')`, not the instant `t0` at which friction saturates;
//! - **stop distance**: the distance travelled at the stop time (the position at the first
//!   step at or below the threshold);
//! - **creep**: the distance between the body's final position and the exact one (which does
//!   not move), over the whole run (10 s), in mm;
//! - **creep after 1 s**: the distance moved from t = 1 s to the end, the steady part of the
//!   creep (the harness switches a slope's tangential load on at t = 0, and a compliant
//!   contact first deflects);
//! - **acceleration error**: the least-squares slope of the speed over the run, relative to
//!   the exact acceleration;
//! - **maximum lift**: the largest height of the body above its exact resting height, in mm;
//! - **lift over the estimate**: the median lift while sliding in contact over Castro et al.'s
//!   `(dt + tau_d) mu |v_t|` (sec. V-A; `tau_d = 0` here), the prediction for a convex
//!   relaxation;
//! - **residual median**: the median over the steps of the shared natural-map residual (ours
//!   only): how far the impulses are from the rigid Coulomb solution, whatever a driver's own
//!   stopping test said;
//! - **Signorini violation**: the largest over the steps of
//!   `max |lambda_n (v_n + max(gap, 0) / dt)|` over a step's contacts (a contact apart at the
//!   step's start may close its gap within the step), divided by `m g dt v_scale` with
//!   `v_scale = 1 m/s` (unit-free: the weight's impulse over one step times a unit speed; 0 when
//!   every contact is either open or meets its speculative condition). A soft or relaxed
//!   model pushes while the contact separates; MuJoCo's and Drake's rows use their contact
//!   forces times `dt` and post-step normal velocities;
//! - **dissipation angle**: the median over the steps of the largest angle between a sliding
//!   contact's friction and minus its slip velocity (ours only; 0 under Coulomb's law);
//! - **converged fraction**: the share of steps with contacts whose solve met its tolerance
//!   (the Coulomb cone by the shared natural-map ruler; a pyramid or regularised model, which
//!   that ruler does not measure, by its own test);
//! - **position error integral** (the time-step consistency sweep): `int |x - x_exact| dt` over
//!   the run, by trapezoids from `t = 0`; its slope against `dt` on log-log axes
//!   ([`log_log_slope`]) is a scheme's observed order;
//! - **grasp pitch and slip** ([`GraspRun`]): the plate's pitch gained over the first secure
//!   phase (exact 0), the largest pitch gained in the first loose phase (the plate swings down
//!   and back), and the median over the first secure phase of the largest contact slip speed,
//!   in um/s (exact 0);
//! - **stack drift and penetration** ([`StackRun`]): the largest distance a cube's centre
//!   moves from its start (and the top cube's, for the tower), and the largest overlap of a
//!   corner sphere with the floor or with the cube under it, over the run, in mm;
//! - **drops** ([`drop_metrics`]): the touch, the first sample whose lowest point is below
//!   [`TOUCH_GAP`] above the plane; the bounce, how high the lowest point rises above the plane
//!   after it; the contact time, from the touch to the last sample with `|v_z|` above
//!   [`SPEED_THRESHOLD`] (0 when the body stops at the touch); the largest and the final
//!   penetration.

use std::collections::BTreeMap;

use contactlab_runs::schema::steps;
use polars::prelude::DataFrame;

use super::{f64s, strs, AnalysisError};

/// The speed that separates rest from motion (m/s): stop and breakaway thresholds.
pub const SPEED_THRESHOLD: f64 = 1e-3;

/// A dropped body touches the plane once its lowest point is closer than this (m).
pub const TOUCH_GAP: f64 = 1e-6;

/// What a drop did (see the module doc); NaN where it never touched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drop {
    /// The time of the first sample in touch (s).
    pub touch_time: f64,
    /// The highest the lowest point rose above the plane after the touch (mm).
    pub bounce_height_mm: f64,
    /// From the touch to the last sample with `|v_z|` above [`SPEED_THRESHOLD`] (s).
    pub contact_time: f64,
    /// The largest penetration over the run (mm).
    pub penetration_max_mm: f64,
    /// The penetration at the end (mm).
    pub rest_penetration_mm: f64,
}

/// A drop's metrics from the samples' times `t`, the lowest point's heights above the plane
/// `gap` (m) and the vertical speeds `vz` (m/s).
pub fn drop_metrics(t: &[f64], gap: &[f64], vz: &[f64]) -> Drop {
    let n = t.len().min(gap.len()).min(vz.len());
    let sink = |g: f64| 1e3 * (-g).max(0.0);
    let penetration_max_mm = gap[..n].iter().map(|&g| sink(g)).fold(0.0, f64::max);
    let rest_penetration_mm = if n > 0 { sink(gap[n - 1]) } else { f64::NAN };
    let Some(k0) = (0..n).find(|&k| gap[k] < TOUCH_GAP) else {
        return Drop {
            touch_time: f64::NAN,
            bounce_height_mm: f64::NAN,
            contact_time: f64::NAN,
            penetration_max_mm,
            rest_penetration_mm,
        };
    };
    let bounce = gap[k0 + 1..n].iter().copied().fold(0.0, f64::max);
    let last_moving = (k0..n).rev().find(|&k| vz[k].abs() > SPEED_THRESHOLD);
    Drop {
        touch_time: t[k0],
        bounce_height_mm: 1e3 * bounce,
        contact_time: last_moving.map_or(0.0, |k| t[k] - t[k0]),
        penetration_max_mm,
        rest_penetration_mm,
    }
}

/// The time at which `v` first crosses `threshold` from above (`down`) or from below, linearly
/// interpolated between the samples around the crossing; NaN when it never does.
pub fn crossing(t: &[f64], v: &[f64], threshold: f64, down: bool) -> f64 {
    let past = |x: f64| if down { x <= threshold } else { x >= threshold };
    for k in 1..t.len().min(v.len()) {
        if past(v[k]) && !past(v[k - 1]) {
            let span = v[k] - v[k - 1];
            let w = if span == 0.0 {
                1.0
            } else {
                (threshold - v[k - 1]) / span
            };
            return t[k - 1] + w * (t[k] - t[k - 1]);
        }
    }
    f64::NAN
}

/// The least-squares slope of `y` against `t` (NaN for fewer than two samples).
pub fn slope(t: &[f64], y: &[f64]) -> f64 {
    let n = t.len().min(y.len());
    if n < 2 {
        return f64::NAN;
    }
    let (mt, my) = (
        t[..n].iter().sum::<f64>() / n as f64,
        y[..n].iter().sum::<f64>() / n as f64,
    );
    let cov: f64 = (0..n).map(|k| (t[k] - mt) * (y[k] - my)).sum();
    let var: f64 = (0..n).map(|k| (t[k] - mt).powi(2)).sum();
    cov / var
}

/// The upper median of `v` (NaN when empty).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Each row's status as the study judges it: the shared natural-map ruler's for the Coulomb
/// cone; a solver's own test for another model (pyramid, regularised), which that ruler does
/// not measure, as the matrix does.
fn judged_status(df: &DataFrame) -> Result<Vec<String>, AnalysisError> {
    let (ruler, own, model) = (
        strs(df, steps::STATUS)?,
        strs(df, steps::SOLVER_STATUS)?,
        strs(df, steps::MODEL)?,
    );
    Ok((0..df.height())
        .map(|k| {
            if model[k] == "coulomb_cone" || ruler[k] == "no_contacts" {
                ruler[k].clone()
            } else {
                own[k].clone()
            }
        })
        .collect())
}

/// The rows of each (run, solver) of a steps frame, in step order.
fn groups(df: &DataFrame) -> Result<BTreeMap<(u64, String), Vec<usize>>, AnalysisError> {
    let (runs, solvers, steps) = (
        f64s(df, steps::RUN)?,
        strs(df, steps::SOLVER)?,
        f64s(df, steps::STEP)?,
    );
    let mut out: BTreeMap<(u64, String), Vec<usize>> = BTreeMap::new();
    for k in 0..df.height() {
        out.entry((runs[k] as u64, solvers[k].clone()))
            .or_default()
            .push(k);
    }
    for rows in out.values_mut() {
        rows.sort_by(|&a, &b| steps[a].total_cmp(&steps[b]));
    }
    Ok(out)
}

/// The share of `status` that is `converged`, over the steps with contacts (NaN without any).
fn converged_share(status: &[String]) -> f64 {
    let with: Vec<&String> = status.iter().filter(|s| *s != "no_contacts").collect();
    if with.is_empty() {
        return f64::NAN;
    }
    with.iter().filter(|s| **s == "converged").count() as f64 / with.len() as f64
}

/// The least-squares slope of `log10 y` against `log10 x` over the points where both are
/// positive: a method's order of convergence when `y` is its error at step `x`.
pub fn log_log_slope(x: &[f64], y: &[f64]) -> f64 {
    let (lx, ly): (Vec<f64>, Vec<f64>) = x
        .iter()
        .zip(y)
        .filter(|(a, b)| **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (a.log10(), b.log10()))
        .unzip();
    slope(&lx, &ly)
}

/// The ill-conditioned stack under one solver (`contactlab_scenes::fidelity::stack`): per
/// step, the judged status, the iterations, the larger of the two cubes' drifts, the
/// penetration, whether the stack has collapsed (the scene's test, shared with the peers'
/// harness) and the time after the step.
#[derive(Debug, Clone, Default)]
pub struct StackRun {
    /// The solve's judged status per step.
    pub status: Vec<String>,
    /// Iterations per step.
    pub iterations: Vec<f64>,
    /// The largest centre drift from the start (m).
    pub drift: Vec<f64>,
    /// The top cube's drift from its start (m).
    pub drift_top: Vec<f64>,
    /// The largest overlap after the step (m).
    pub penetration: Vec<f64>,
    /// Whether the stack stood apart after the step.
    pub collapsed: Vec<bool>,
    /// Time after the step (s).
    pub t: Vec<f64>,
}

impl StackRun {
    /// Every (run, solver) of a stack steps frame.
    pub fn all(df: &DataFrame) -> Result<BTreeMap<(u64, String), StackRun>, AnalysisError> {
        let status = judged_status(df)?;
        let (iterations, most, top, penetration) = (
            f64s(df, steps::ITERATIONS)?,
            f64s(df, "drift_max")?,
            f64s(df, "drift_top")?,
            f64s(df, "penetration")?,
        );
        let (collapsed, t) = (f64s(df, "collapsed")?, f64s(df, "t")?);
        Ok(groups(df)?
            .into_iter()
            .map(|(key, rows)| {
                let pick = |v: &[f64]| rows.iter().map(|&k| v[k]).collect::<Vec<f64>>();
                let run = StackRun {
                    status: rows.iter().map(|&k| status[k].clone()).collect(),
                    iterations: pick(&iterations),
                    drift: pick(&most),
                    drift_top: pick(&top),
                    penetration: pick(&penetration),
                    collapsed: rows.iter().map(|&k| collapsed[k] > 0.5).collect(),
                    t: pick(&t),
                };
                (key, run)
            })
            .collect())
    }

    /// The share of steps with contacts whose solve converged.
    pub fn converged_fraction(&self) -> f64 {
        converged_share(&self.status)
    }

    /// The mean iterations per step.
    pub fn iterations_mean(&self) -> f64 {
        self.iterations.iter().sum::<f64>() / self.iterations.len().max(1) as f64
    }

    /// The largest drift of any cube over the run (mm).
    pub fn drift_mm(&self) -> f64 {
        1e3 * self.drift.iter().copied().fold(0.0, f64::max)
    }

    /// The largest drift of the top cube over the run (mm).
    pub fn drift_top_mm(&self) -> f64 {
        1e3 * self.drift_top.iter().copied().fold(0.0, f64::max)
    }

    /// The first step after which the stack had collapsed, if it did.
    fn collapse_step(&self) -> Option<usize> {
        self.collapsed.iter().position(|&c| c)
    }

    /// 1 when the stack collapsed during the run, else 0.
    pub fn collapsed(&self) -> f64 {
        f64::from(u8::from(self.collapse_step().is_some()))
    }

    /// The time of the first step after which the stack had collapsed (s); NaN when it stood.
    pub fn collapse_time(&self) -> f64 {
        self.collapse_step().map_or(f64::NAN, |k| self.t[k])
    }

    /// The largest penetration while the stack stood (mm): after a collapse an overlap is not a
    /// penetration. NaN when it collapsed at the first step.
    pub fn penetration_mm(&self) -> f64 {
        let standing = self.collapse_step().unwrap_or(self.penetration.len());
        let p = &self.penetration[..standing];
        if p.is_empty() {
            return f64::NAN;
        }
        1e3 * p.iter().copied().fold(0.0, f64::max)
    }
}

/// The pile under one solver (`contactlab_scenes::fidelity::pile`): per step, the judged
/// status, the time after the step, the largest overlap, the kinetic energy, the cubes that left
/// the box and the whole step's seconds.
#[derive(Debug, Clone, Default)]
pub struct PileRun {
    /// The solve's judged status per step.
    pub status: Vec<String>,
    /// Time after the step (s).
    pub t: Vec<f64>,
    /// The largest overlap after the step (m).
    pub penetration: Vec<f64>,
    /// The kinetic energy after the step (J).
    pub kinetic_energy: Vec<f64>,
    /// Cubes outside the box after the step.
    pub escaped: Vec<f64>,
    /// Whole-step seconds: the solver's and the scene's.
    pub step_seconds: Vec<f64>,
}

impl PileRun {
    /// Every (run, solver) of a pile steps frame.
    pub fn all(df: &DataFrame) -> Result<BTreeMap<(u64, String), PileRun>, AnalysisError> {
        let status = judged_status(df)?;
        let (t, penetration) = (f64s(df, "t")?, f64s(df, "penetration")?);
        let (energy, escaped) = (f64s(df, "kinetic_energy")?, f64s(df, "escaped")?);
        let (seconds, scene) = (f64s(df, steps::SECONDS)?, f64s(df, steps::SCENE_SECONDS)?);
        Ok(groups(df)?
            .into_iter()
            .map(|(key, rows)| {
                let pick = |v: &[f64]| rows.iter().map(|&k| v[k]).collect::<Vec<f64>>();
                let run = PileRun {
                    status: rows.iter().map(|&k| status[k].clone()).collect(),
                    t: pick(&t),
                    penetration: pick(&penetration),
                    kinetic_energy: pick(&energy),
                    escaped: pick(&escaped),
                    step_seconds: rows.iter().map(|&k| seconds[k] + scene[k]).collect(),
                };
                (key, run)
            })
            .collect())
    }

    /// The share of steps with contacts whose solve converged.
    pub fn converged_fraction(&self) -> f64 {
        converged_share(&self.status)
    }

    /// The largest overlap over the run (mm).
    pub fn penetration_max_mm(&self) -> f64 {
        1e3 * self.penetration.iter().copied().fold(0.0, f64::max)
    }

    /// The overlap at the end (mm).
    pub fn penetration_end_mm(&self) -> f64 {
        self.penetration.last().map_or(f64::NAN, |p| 1e3 * p)
    }

    /// The kinetic energy at the end (J).
    pub fn kinetic_energy_end(&self) -> f64 {
        self.kinetic_energy.last().copied().unwrap_or(f64::NAN)
    }

    /// The largest kinetic energy over the run's last `span` seconds (J): at rest, or not.
    pub fn kinetic_energy_max_last(&self, span: f64) -> f64 {
        let end = self.t.last().copied().unwrap_or(f64::NAN);
        (0..self.t.len())
            .filter(|&k| self.t[k] > end - span)
            .map(|k| self.kinetic_energy[k])
            .fold(f64::NAN, f64::max)
    }

    /// The cubes outside the box at the end.
    pub fn escaped_end(&self) -> f64 {
        self.escaped.last().copied().unwrap_or(f64::NAN)
    }

    /// The median whole-step time (s).
    pub fn step_seconds_median(&self) -> f64 {
        median(self.step_seconds.clone())
    }
}

/// One run of a centre-of-mass path (the pinch grasp's plate, the pile): the time after each
/// step and the position then.
#[derive(Debug, Clone, Default)]
pub struct PathRun {
    /// Time after the step (s).
    pub t: Vec<f64>,
    /// The centre of mass after the step (m).
    pub p: Vec<[f64; 3]>,
    /// When a cube first touched another (the first step after which `cube_contacts` > 0), for
    /// the scenes that record it (the pile): the end of the phase in which the cubes meet only
    /// the container.
    pub stacked: Option<f64>,
}

/// The pile's count of cubes touching cubes after a step (`contactlab_scenes::fidelity::pile`).
const CUBE_CONTACTS: &str = "cube_contacts";

impl PathRun {
    /// Every run of `df` (its `t`, `x`, `y`, `z`, and `cube_contacts` where recorded), keyed by
    /// run index and solver label.
    pub fn all(df: &DataFrame) -> Result<BTreeMap<(u64, String), PathRun>, AnalysisError> {
        let (t, x, y, z) = (
            f64s(df, "t")?,
            f64s(df, "x")?,
            f64s(df, "y")?,
            f64s(df, "z")?,
        );
        let touching = match df.column(CUBE_CONTACTS) {
            Ok(_) => Some(f64s(df, CUBE_CONTACTS)?),
            Err(_) => None,
        };
        Ok(groups(df)?
            .into_iter()
            .map(|(key, rows)| {
                let stacked = touching.as_ref().and_then(|c| {
                    let k = rows.iter().find(|&&k| c[k] > 0.0)?;
                    Some(t[*k])
                });
                let run = PathRun {
                    t: rows.iter().map(|&k| t[k]).collect(),
                    p: rows.iter().map(|&k| [x[k], y[k], z[k]]).collect(),
                    stacked,
                };
                (key, run)
            })
            .collect())
    }

    /// The position at `t`, linear between the samples (the start's before the first, the
    /// end's after the last; NaN for an empty run).
    pub fn at(&self, t: f64) -> [f64; 3] {
        let n = self.t.len();
        if n == 0 {
            return [f64::NAN; 3];
        }
        let k = self.t.partition_point(|&s| s < t);
        if k == 0 {
            return self.p[0];
        }
        if k == n {
            return self.p[n - 1];
        }
        let (t0, t1) = (self.t[k - 1], self.t[k]);
        let w = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
        std::array::from_fn(|i| self.p[k - 1][i] + w * (self.p[k][i] - self.p[k - 1][i]))
    }

    /// ContactBench's consistency, `int |p(t) - p_ref(t)| dt` (m s) over this run's span: the
    /// distance at each of its samples from `reference` (linear between the reference's
    /// samples), times the step that ends there.
    pub fn distance_integral(&self, reference: &PathRun) -> f64 {
        self.distance_integral_until(reference, f64::INFINITY)
    }

    /// [`Self::distance_integral`] over the samples at or before `until` (s).
    pub fn distance_integral_until(&self, reference: &PathRun, until: f64) -> f64 {
        let mut sum = 0.0;
        let mut before = 0.0;
        for (k, &t) in self.t.iter().enumerate().take_while(|(_, &t)| t <= until) {
            let r = reference.at(t);
            let d = (0..3)
                .map(|i| (self.p[k][i] - r[i]).powi(2))
                .sum::<f64>()
                .sqrt();
            sum += d * (t - before);
            before = t;
        }
        sum
    }
}

/// An angle series made continuous: steps of more than 180 degrees are taken as wraps of 360
/// (a plate swinging past 180 degrees must not jump).
pub fn unwrap_degrees(a: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len());
    let mut shift = 0.0;
    for (k, &x) in a.iter().enumerate() {
        if k > 0 {
            let jump = x - a[k - 1];
            if jump > 180.0 {
                shift -= 360.0;
            } else if jump < -180.0 {
                shift += 360.0;
            }
        }
        out.push(x + shift);
    }
    out
}

/// The pinch grasp under one solver (`contactlab_scenes::fidelity::grasp`): per step, the time
/// after it, whether the grip was secure, the plate's pitch and the largest contact slip speed.
#[derive(Debug, Clone, Default)]
pub struct GraspRun {
    /// Time after each step (s).
    pub t: Vec<f64>,
    /// Whether the step's grip was the secure one.
    pub secure: Vec<bool>,
    /// The plate's rotation about the grip axis (degrees).
    pub pitch: Vec<f64>,
    /// The largest tangential contact speed after the step (m/s).
    pub slip: Vec<f64>,
    /// The judged status per step.
    pub status: Vec<String>,
}

impl GraspRun {
    /// Every (run, solver) of a grasp steps frame.
    pub fn all(df: &DataFrame) -> Result<BTreeMap<(u64, String), GraspRun>, AnalysisError> {
        let status = judged_status(df)?;
        let (t, secure, pitch, slip) = (
            f64s(df, "t")?,
            f64s(df, "secure")?,
            f64s(df, "pitch_deg")?,
            f64s(df, "slip_speed")?,
        );
        Ok(groups(df)?
            .into_iter()
            .map(|(key, rows)| {
                let pick = |v: &[f64]| rows.iter().map(|&k| v[k]).collect::<Vec<f64>>();
                let run = GraspRun {
                    t: pick(&t),
                    secure: rows.iter().map(|&k| secure[k] > 0.5).collect(),
                    pitch: unwrap_degrees(&pick(&pitch)),
                    slip: pick(&slip),
                    status: rows.iter().map(|&k| status[k].clone()).collect(),
                };
                (key, run)
            })
            .collect())
    }

    /// The pitch at time `at` (the last step at or before it; 0, the start, before the first).
    fn pitch_at(&self, at: f64) -> f64 {
        self.t
            .iter()
            .rposition(|&t| t <= at + 1e-9)
            .map_or(0.0, |k| self.pitch[k])
    }

    /// The pitch gained over `[from, to]` (degrees).
    pub fn pitch_change(&self, from: f64, to: f64) -> f64 {
        self.pitch_at(to) - self.pitch_at(from)
    }

    /// The largest pitch gained over `(from, to]` above the pitch at `from` (degrees): how far
    /// the plate swings down in a loose phase (it swings back).
    pub fn pitch_swing(&self, from: f64, to: f64) -> f64 {
        let start = self.pitch_at(from);
        (0..self.t.len())
            .filter(|&k| self.t[k] > from + 1e-9 && self.t[k] <= to + 1e-9)
            .map(|k| self.pitch[k] - start)
            .fold(f64::NAN, f64::max)
    }

    /// The median largest slip speed over the secure steps before `until` (um/s).
    pub fn secure_slip_um_s(&self, until: f64) -> f64 {
        1e6 * median(
            (0..self.t.len())
                .filter(|&k| self.secure[k] && self.t[k] <= until + 1e-9)
                .map(|k| self.slip[k])
                .collect(),
        )
    }

    /// The share of steps with contacts whose solve converged.
    pub fn converged_fraction(&self) -> f64 {
        converged_share(&self.status)
    }
}

/// One setup's motion under one solver: the per-step observables the metrics read.
#[derive(Debug, Clone, Default)]
pub struct Motion {
    /// Time after each step (s).
    pub t: Vec<f64>,
    /// Position along the motion (m) and across it.
    pub x: Vec<f64>,
    /// Position across the motion (m).
    pub y: Vec<f64>,
    /// The exact positions.
    pub x_exact: Vec<f64>,
    /// The exact positions across.
    pub y_exact: Vec<f64>,
    /// Tangential speed (m/s).
    pub speed: Vec<f64>,
    /// Height above the exact resting height (m).
    pub lift: Vec<f64>,
    /// Vertical velocity (m/s).
    pub vz: Vec<f64>,
    /// The solve's status per step (`no_contacts` without contacts): the shared ruler's for
    /// the Coulomb cone, the solver's own for another model.
    pub status: Vec<String>,
    /// Whole-step seconds: the solver's and the scene's.
    pub step_seconds: Vec<f64>,
    /// The shared natural-map residual of each solve (0 without contacts).
    pub residual: Vec<f64>,
    /// Per step, the largest angle between a sliding contact's friction and minus its slip
    /// (degrees; 0 when none slides): the maximum-dissipation check.
    pub dissipation_angle: Vec<f64>,
    /// Per step, `max |lambda_n (v_n + max(gap, 0) / dt)| / (m g dt v_scale)` over its contacts
    /// (unit-free; 0 for an exact complementarity answer): the Signorini check.
    pub signorini: Vec<f64>,
    /// Per step, `max max(gap + dt v_n, 0) lambda_n / (m g dt 1 mm)`: the position-level
    /// Signorini check.
    pub gap_lambda: Vec<f64>,
    /// Per step, `sum lambda_n v_n` over its contacts (J).
    pub normal_work: Vec<f64>,
    /// Per step, over sliding contacts, `max |lambda_t| / (mu lambda_n)` (0 when none slides).
    pub friction_ratio: Vec<f64>,
    /// The driver's own status per step (`no_contacts` without contacts), whatever the model.
    pub own_status: Vec<String>,
}

impl Motion {
    /// Every (run, solver) motion of a fidelity steps frame, each in step order; every column
    /// is read once for all of them.
    pub fn all(df: &DataFrame) -> Result<BTreeMap<(u64, String), Motion>, AnalysisError> {
        let read = |name: &str| f64s(df, name);
        let (t, x, y) = (read("t")?, read("x")?, read("y")?);
        let (x_exact, y_exact) = (read("x_exact")?, read("y_exact")?);
        let (speed, lift, residual) = (read("speed")?, read("lift")?, read(steps::RESIDUAL)?);
        let vz = read("vz")?;
        let angle = read("max_dissipation_angle_deg")?;
        let signorini = read("signorini_max")?;
        let (gap_lambda, work) = (read("gap_lambda_max")?, read("normal_work")?);
        let ratio = read("friction_ratio_max")?;
        let (seconds, scene) = (read(steps::SECONDS)?, read(steps::SCENE_SECONDS)?);
        let status = judged_status(df)?;
        let (ruler, own) = (strs(df, steps::STATUS)?, strs(df, steps::SOLVER_STATUS)?);
        Ok(groups(df)?
            .into_iter()
            .map(|(key, rows)| {
                let pick = |v: &[f64]| rows.iter().map(|&k| v[k]).collect::<Vec<f64>>();
                let motion = Motion {
                    t: pick(&t),
                    x: pick(&x),
                    y: pick(&y),
                    x_exact: pick(&x_exact),
                    y_exact: pick(&y_exact),
                    speed: pick(&speed),
                    lift: pick(&lift),
                    vz: pick(&vz),
                    status: rows.iter().map(|&k| status[k].clone()).collect(),
                    step_seconds: rows.iter().map(|&k| seconds[k] + scene[k]).collect(),
                    residual: pick(&residual),
                    dissipation_angle: pick(&angle),
                    signorini: pick(&signorini),
                    gap_lambda: pick(&gap_lambda),
                    normal_work: pick(&work),
                    friction_ratio: pick(&ratio),
                    own_status: rows
                        .iter()
                        .map(|&k| match ruler[k].as_str() {
                            "no_contacts" => ruler[k].clone(),
                            _ => own[k].clone(),
                        })
                        .collect(),
                };
                (key, motion)
            })
            .collect())
    }

    /// The stop time (s): the speed's first crossing below [`SPEED_THRESHOLD`].
    pub fn stop_time(&self) -> f64 {
        crossing(&self.t, &self.speed, SPEED_THRESHOLD, true)
    }

    /// The distance travelled (m) at the first step at or below the threshold.
    pub fn stop_distance(&self) -> f64 {
        self.speed
            .iter()
            .position(|&v| v <= SPEED_THRESHOLD)
            .map_or(f64::NAN, |k| self.x[k].hypot(self.y[k]))
    }

    /// The breakaway time (s): the speed's first crossing above [`SPEED_THRESHOLD`].
    pub fn breakaway_time(&self) -> f64 {
        crossing(&self.t, &self.speed, SPEED_THRESHOLD, false)
    }

    /// The distance (mm) between the final position and the exact one.
    pub fn creep_mm(&self) -> f64 {
        match (self.x.last(), self.y.last()) {
            (Some(x), Some(y)) => {
                let (xe, ye) = (
                    self.x_exact.last().copied().unwrap_or(0.0),
                    self.y_exact.last().copied().unwrap_or(0.0),
                );
                1e3 * (x - xe).hypot(y - ye)
            }
            _ => f64::NAN,
        }
    }

    /// The distance (mm) moved from time `from` to the end: the steady creep, without the
    /// transient of the load's first moments.
    pub fn creep_after_mm(&self, from: f64) -> f64 {
        let Some(k) = self.t.iter().position(|&t| t >= from) else {
            return f64::NAN;
        };
        let last = self.x.len() - 1;
        1e3 * (self.x[last] - self.x[k]).hypot(self.y[last] - self.y[k])
    }

    /// The least-squares acceleration over the run (m/s^2).
    pub fn acceleration(&self) -> f64 {
        slope(&self.t, &self.speed)
    }

    /// A drop's metrics: the lift is the lowest point's height (the body falls flat).
    pub fn drop(&self) -> Drop {
        drop_metrics(&self.t, &self.lift, &self.vz)
    }

    /// The largest lift above the resting height (mm).
    pub fn max_lift_mm(&self) -> f64 {
        1e3 * self.lift.iter().copied().fold(0.0, f64::max)
    }

    /// The share of steps with contacts whose solve converged.
    pub fn converged_fraction(&self) -> f64 {
        converged_share(&self.status)
    }

    /// The median, over the steps with contacts that slide (above 1 cm/s), of the lift over
    /// Castro et al.'s estimate for a convex relaxation, `dt mu |v_t|` (sec. V-A, with
    /// `tau_d = 0`: the scene's contacts are rigid); NaN when no step slides in contact. About
    /// 1 for SAP's model, about 0 for an exact complementarity model.
    pub fn lift_over_estimate(&self, dt: f64, mu: f64) -> f64 {
        median(
            (0..self.lift.len())
                .filter(|&k| self.status[k] != "no_contacts" && self.speed[k] > 1e-2)
                .map(|k| self.lift[k] / (dt * mu * self.speed[k]))
                .collect(),
        )
    }

    /// The integral over the run of `|x - x_exact|` (m s), by trapezoids from `t = 0`, where
    /// the body starts on its exact path: the time-step consistency error.
    pub fn position_error_integral(&self) -> f64 {
        let mut total = 0.0;
        let (mut t0, mut e0) = (0.0, 0.0);
        for k in 0..self.t.len() {
            let e = (self.x[k] - self.x_exact[k]).abs();
            total += 0.5 * (e + e0) * (self.t[k] - t0);
            (t0, e0) = (self.t[k], e);
        }
        total
    }

    /// The median natural-map residual over the steps with contacts: how far each step's
    /// impulses are from the rigid Coulomb solution, whatever the driver's own test said.
    pub fn residual_median(&self) -> f64 {
        median(
            (0..self.residual.len())
                .filter(|&k| self.status[k] != "no_contacts")
                .map(|k| self.residual[k])
                .collect(),
        )
    }

    /// The median over the steps of the largest angle between friction and minus the slip
    /// (degrees): 0 for Coulomb's law, which puts friction opposite the slip.
    pub fn dissipation_angle_median(&self) -> f64 {
        median(self.dissipation_angle.clone())
    }

    /// The median, over the steps on which the body moves (`speed > 1e-6` m/s), of the largest
    /// angle between a sliding contact's friction and minus its slip (degrees); NaN when it
    /// never moves.
    pub fn dissipation_angle_moving_median(&self) -> f64 {
        let moving: Vec<f64> = (0..self.speed.len())
            .filter(|&k| self.speed[k] > 1e-6)
            .map(|k| self.dissipation_angle[k])
            .collect();
        if moving.is_empty() {
            return f64::NAN;
        }
        median(moving)
    }

    /// The largest Signorini measure over the run (unit-free, see [`Motion::signorini`]).
    pub fn signorini_max(&self) -> f64 {
        self.signorini.iter().copied().fold(0.0, f64::max)
    }

    /// The largest position-level Signorini product over the run (unit-free).
    pub fn gap_lambda_max(&self) -> f64 {
        self.gap_lambda.iter().copied().fold(0.0, f64::max)
    }

    /// The work of the normal impulses at the velocities they leave, summed over the run (J).
    pub fn normal_work(&self) -> f64 {
        self.normal_work.iter().sum()
    }

    /// The largest friction over its Coulomb bound on a sliding contact over the run.
    pub fn friction_ratio_max(&self) -> f64 {
        self.friction_ratio.iter().copied().fold(0.0, f64::max)
    }

    /// The share of steps with contacts on which the driver's own test passed.
    pub fn own_converged_fraction(&self) -> f64 {
        converged_share(&self.own_status)
    }

    /// The median whole-step time (s).
    pub fn step_seconds_median(&self) -> f64 {
        median(self.step_seconds.clone())
    }
}

#[cfg(test)]
mod path_tests {
    use super::PathRun;
    use contactlab_runs::schema::steps;
    use polars::prelude::{Column, DataFrame};

    /// A run that records `cube_contacts` knows when a cube first touched a cube; one that
    /// does not, never.
    #[test]
    fn a_path_knows_when_the_cubes_first_stacked() {
        let column = |name: &str, v: Vec<f64>| Column::new(name.into(), v);
        let mut df = DataFrame::new(
            4,
            vec![
                column(steps::RUN, vec![0.0; 4]),
                Column::new(steps::SOLVER.into(), vec!["a"; 4]),
                column(steps::STEP, vec![3.0, 0.0, 1.0, 2.0]),
                column("t", vec![0.4, 0.1, 0.2, 0.3]),
                column("x", vec![0.0; 4]),
                column("y", vec![0.0; 4]),
                column("z", vec![0.0; 4]),
            ],
        )
        .unwrap();
        let key = (0, "a".to_string());
        assert_eq!(PathRun::all(&df).unwrap()[&key].stacked, None);
        df.with_column(column("cube_contacts", vec![5.0, 0.0, 0.0, 2.0]))
            .unwrap();
        let run = &PathRun::all(&df).unwrap()[&key];
        assert_eq!(
            (run.stacked, run.t.clone()),
            (Some(0.3), vec![0.1, 0.2, 0.3, 0.4])
        );
    }

    #[test]
    fn a_path_against_itself_is_consistent_and_an_offset_costs_its_length_times_the_span() {
        let fine = PathRun {
            t: (1..=1000).map(|k| k as f64 * 1e-3).collect(),
            p: (1..=1000).map(|k| [k as f64 * 1e-3, 0.0, 0.0]).collect(),
            stacked: None,
        };
        let coarse = PathRun {
            t: (1..=10).map(|k| k as f64 * 0.1).collect(),
            p: (1..=10).map(|k| [k as f64 * 0.1, 0.0, 0.002]).collect(),
            stacked: None,
        };
        // On the reference's line, 2 mm above it, for 1 s: 2e-3 m s; for its first 0.3 s,
        // 6e-4 m s (the samples at 0.1, 0.2 and 0.3 s).
        assert!((coarse.distance_integral(&fine) - 2e-3).abs() < 1e-12);
        assert!((coarse.distance_integral_until(&fine, 0.3 + 1e-12) - 6e-4).abs() < 1e-12);
        assert!(fine.distance_integral(&fine) == 0.0);
        // Between the samples the reference is linear.
        assert!((fine.at(0.0105)[0] - 0.0105).abs() < 1e-15);
        assert_eq!(fine.at(5.0), [1.0, 0.0, 0.0]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drop lands at the first sample within 1 um of the plane; after it the bounce is the
    /// highest rise above the plane, the contact time runs to the last sample still moving
    /// faster than 1 mm/s, and a body that stops at the touch has a contact time of 0.
    #[test]
    fn drop_metrics_follow_their_definitions() {
        let t = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
        let gap = [0.05, -2e-3, 1e-3, -5e-4, -4e-4, -4e-4];
        let vz = [-1.0, -0.5, 0.2, -0.01, 5e-4, 0.0];
        let d = drop_metrics(&t, &gap, &vz);
        assert_eq!(d.touch_time, 0.2);
        assert!((d.bounce_height_mm - 1.0).abs() < 1e-12);
        assert!((d.contact_time - 0.2).abs() < 1e-12);
        assert!((d.penetration_max_mm - 2.0).abs() < 1e-12);
        assert!((d.rest_penetration_mm - 0.4).abs() < 1e-12);
        let rigid = drop_metrics(
            &t,
            &[0.05, 0.0, 0.0, 0.0, 0.0, 0.0],
            &[-1.0, -1.4, 0.0, 0.0, 0.0, 0.0],
        );
        assert_eq!((rigid.bounce_height_mm, rigid.contact_time), (0.0, 0.0));
        assert_eq!(rigid.penetration_max_mm, 0.0);
        assert!(drop_metrics(&t, &[1.0; 6], &vz).touch_time.is_nan());
    }

    #[test]
    fn crossings_interpolate_between_the_samples_around_them() {
        let t = [0.0, 1.0, 2.0, 3.0];
        let v = [1.0, 0.5, 0.0, 0.0];
        assert!((crossing(&t, &v, 0.25, true) - 1.5).abs() < 1e-12);
        assert!(crossing(&t, &v, 2.0, true).is_nan(), "never above to cross");
        let up = [0.0, 0.0, 2.0, 4.0];
        assert!((crossing(&t, &up, 1.0, false) - 1.5).abs() < 1e-12);
        assert!(crossing(&t, &up, 5.0, false).is_nan());
    }

    #[test]
    fn the_slope_of_a_line_is_its_acceleration() {
        let t: Vec<f64> = (0..50).map(|k| 0.01 * k as f64).collect();
        let v: Vec<f64> = t.iter().map(|t| 0.3 + 0.657 * t).collect();
        assert!((slope(&t, &v) - 0.657).abs() < 1e-12);
        assert!(slope(&[1.0], &[2.0]).is_nan());
    }

    #[test]
    fn a_first_order_error_has_log_log_slope_one() {
        let dt = [1e-4, 1e-3, 1e-2, 1e-1];
        let err: Vec<f64> = dt.iter().map(|h| 0.87 * h).collect();
        assert!((log_log_slope(&dt, &err) - 1.0).abs() < 1e-12);
        let quad: Vec<f64> = dt.iter().map(|h| 3.0 * h * h).collect();
        assert!((log_log_slope(&dt, &quad) - 2.0).abs() < 1e-12);
        // Zeros (an exact answer) are left out rather than sent to minus infinity.
        assert!((log_log_slope(&[1e-3, 1e-2, 1e-1], &[0.0, 1e-2, 1e-1]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_position_error_integral_is_a_trapezoid_rule_from_zero() {
        let m = Motion {
            t: vec![1.0, 2.0],
            x: vec![1.0, 3.0],
            x_exact: vec![0.0, 0.0],
            ..Motion::default()
        };
        // |e| = 0, 1, 3 at t = 0, 1, 2: 0.5 + 2.
        assert!((m.position_error_integral() - 2.5).abs() < 1e-12);
    }

    #[test]
    fn unwrapping_keeps_a_swing_past_180_degrees_continuous() {
        let a = unwrap_degrees(&[170.0, 179.0, -178.0, -160.0, 175.0]);
        assert_eq!(a, [170.0, 179.0, 182.0, 200.0, 175.0]);
    }

    #[test]
    fn a_grasp_run_measures_pitch_and_secure_slip() {
        let g = GraspRun {
            t: vec![1.0, 2.0, 3.0, 4.0],
            secure: vec![true, true, false, false],
            pitch: vec![0.1, 0.2, 5.0, 9.0],
            slip: vec![1e-6, 3e-6, 1e-2, 1e-2],
            status: vec!["converged".into(); 4],
        };
        assert!((g.pitch_change(0.0, 2.0) - 0.2).abs() < 1e-12);
        assert!((g.pitch_change(2.0, 4.0) - 8.8).abs() < 1e-12);
        let swing = GraspRun {
            pitch: vec![0.1, 0.2, 9.0, 5.0],
            ..g.clone()
        };
        assert!((swing.pitch_swing(2.0, 4.0) - 8.8).abs() < 1e-12);
        assert!(
            (g.secure_slip_um_s(2.0) - 3.0).abs() < 1e-9,
            "the upper median"
        );
        assert_eq!(g.converged_fraction(), 1.0);
    }

    /// The pile's measures: the largest and the last overlap, the energy at the end and its
    /// largest over the last span, the cubes out at the end.
    #[test]
    fn a_pile_run_measures_overlap_energy_and_escapes() {
        let p = PileRun {
            status: vec![
                "converged".into(),
                "converged".into(),
                "max_iterations".into(),
            ],
            t: vec![0.5, 1.0, 1.5],
            penetration: vec![1e-4, 3e-4, 2e-4],
            kinetic_energy: vec![5.0, 0.2, 0.1],
            escaped: vec![0.0, 0.0, 1.0],
            step_seconds: vec![1.0, 3.0, 2.0],
        };
        assert!((p.converged_fraction() - 2.0 / 3.0).abs() < 1e-15);
        assert!((p.penetration_max_mm() - 0.3).abs() < 1e-12);
        assert!((p.penetration_end_mm() - 0.2).abs() < 1e-12);
        assert_eq!(p.kinetic_energy_end(), 0.1);
        assert_eq!(p.kinetic_energy_max_last(0.6), 0.2);
        assert_eq!(p.escaped_end(), 1.0);
        assert_eq!(p.step_seconds_median(), 2.0);
    }

    #[test]
    fn a_stack_run_measures_drift_penetration_and_convergence() {
        let s = StackRun {
            status: vec!["converged".into(), "max_iterations".into()],
            iterations: vec![2.0, 4.0],
            drift: vec![1e-6, 3e-6],
            drift_top: vec![1e-6, 2e-6],
            penetration: vec![2e-6, 1e-6],
            collapsed: vec![false, false],
            t: vec![1e-3, 2e-3],
        };
        assert_eq!(s.converged_fraction(), 0.5);
        assert_eq!(s.iterations_mean(), 3.0);
        assert!((s.drift_mm() - 3e-3).abs() < 1e-15);
        assert!((s.drift_top_mm() - 2e-3).abs() < 1e-15);
        assert!((s.penetration_mm() - 2e-3).abs() < 1e-15);
        assert_eq!(s.collapsed(), 0.0);
        assert!(s.collapse_time().is_nan());
        // Collapsed after the second step: the overlap then is not a penetration.
        let fell = StackRun {
            penetration: vec![2e-6, 9e-3],
            collapsed: vec![false, true],
            ..s
        };
        assert_eq!(fell.collapsed(), 1.0);
        assert_eq!(fell.collapse_time(), 2e-3);
        assert!((fell.penetration_mm() - 2e-3).abs() < 1e-15);
    }

    #[test]
    fn a_motion_measures_stop_creep_lift_and_convergence() {
        let m = Motion {
            t: vec![0.1, 0.2, 0.3],
            x: vec![0.05, 0.09, 0.1],
            y: vec![0.0, 0.0, 0.002],
            x_exact: vec![0.1, 0.1, 0.1],
            y_exact: vec![0.0, 0.0, 0.0],
            speed: vec![0.4, 0.002, 0.0],
            lift: vec![0.0, 1e-4, 5e-5],
            vz: vec![0.0, 0.0, 0.0],
            status: vec![
                "converged".into(),
                "no_contacts".into(),
                "max_iterations".into(),
            ],
            step_seconds: vec![3.0, 1.0, 2.0],
            residual: vec![1e-9, 0.0, 1e-3],
            dissipation_angle: vec![0.0, 11.0, 12.0],
            signorini: vec![1e-9, 0.0, 4e-3],
            gap_lambda: vec![0.0, 0.0, 0.25],
            normal_work: vec![1e-3, 0.0, -2e-4],
            friction_ratio: vec![1.0, 0.0, 0.9],
            own_status: vec![
                "max_iterations".into(),
                "no_contacts".into(),
                "max_iterations".into(),
            ],
        };
        let want = 0.2 + 0.1 * (0.002 - 1e-3) / 0.002;
        assert!((m.stop_time() - want).abs() < 1e-12);
        assert!((m.stop_distance() - 0.1_f64.hypot(0.002)).abs() < 1e-12);
        assert!((m.creep_mm() - 2.0).abs() < 1e-9);
        assert!((m.creep_after_mm(0.2) - 0.01_f64.hypot(0.002) * 1e3).abs() < 1e-9);
        assert!(m.creep_after_mm(1.0).is_nan());
        assert!((m.max_lift_mm() - 0.1).abs() < 1e-12);
        assert_eq!(m.converged_fraction(), 0.5);
        // Sliding in contact: only the first step (0.4 m/s); 0 / (1e-3 0.5 0.4).
        assert_eq!(m.lift_over_estimate(1e-3, 0.5), 0.0);
        let lifted = Motion {
            lift: vec![2e-4, 1e-4, 5e-5],
            ..m.clone()
        };
        assert!((lifted.lift_over_estimate(1e-3, 0.5) - 1.0).abs() < 1e-12);
        assert_eq!(m.step_seconds_median(), 2.0);
        assert_eq!(m.signorini_max(), 4e-3);
        assert_eq!(m.gap_lambda_max(), 0.25);
        assert!((m.normal_work() - 8e-4).abs() < 1e-18);
        assert_eq!(m.friction_ratio_max(), 1.0);
        // The driver's own test failed on both steps with contacts, whatever the ruler said.
        assert_eq!(m.own_converged_fraction(), 0.0);
        assert_eq!(
            m.residual_median(),
            1e-3,
            "the upper median of the steps with contacts"
        );
    }
}
