//! Another engine's answers beside problem files, for a problem-set run's `[reference]`
//! ([`crate::problems`]).
//!
//! `mujoco`: the steps MuJoCo exported (`data/mujoco/global/<name>.json`) come with MuJoCo's
//! own answer beside them (`data/mujoco/mujoco/<name>.json`): its impulses `r`, the regulariser
//! `R` and reference velocity `v_ref` of its soft-constraint model, its iterations and the
//! accuracy it reached (`checks.abs_residual_inf`, m/s). Two figures come out of it:
//!
//! - per answer, `reference_distance = max |r - r_mj| / max |r_mj|`: how far a solver's impulses
//!   are from MuJoCo's (different models: SAP's physical regularization is not MuJoCo's `R`);
//! - per problem, an oracle that checks our SAP against MuJoCo on MuJoCo's own problem: SAP's
//!   cost with MuJoCo's `R` and `v^ = v_ref` (Castro et al.'s dual, eq. 22, is then MuJoCo's
//!   primal) solved by Newton to `1e-13`; `oracle_error` is its largest impulse difference from
//!   MuJoCo's, `oracle_bound = sqrt(3 nc) acc / min R`, the difference MuJoCo's own accuracy
//!   allows.
//!
//! A problem with other rows than Coulomb contacts (the robot states of `data/mujoco_robots/`:
//! equality, limit, friction-loss rows and contacts of condim 1 and 4, every row MuJoCo has)
//! takes the same sidecar, one number per row: the distance is over every row and the oracle,
//! SAP's contact cost, is not formed (its figures are `NaN`). For the matrix,
//! [`Reference::rows`] reads MuJoCo's impulses and its velocities relative to the rigid targets
//! (`u`, where the sidecar has them) and [`MujocoRows::distances`] measures an answer against
//! both.

use std::path::{Path, PathBuf};

use contactlab_core::drivers::{solve_merit, NewtonMerit};
use contactlab_core::{SolveOptions, StepProblem};
use contactlab_formulations::castro::{ContactRegularization, SapCost};
use std::collections::BTreeMap;

use crate::runner::RunError;
use contactlab_runs::schema::common::REFERENCE_DISTANCE;

/// MuJoCo's answer row by row, as the matrix compares answers with it.
#[derive(Debug, Clone, PartialEq)]
pub struct MujocoRows {
    /// MuJoCo's impulses, one per row in the problem's order.
    pub r: Vec<f64>,
    /// The rows' velocities after MuJoCo's step relative to the rigid targets (`J v+ - t`, the
    /// problem's `u = W r + q`); empty where the sidecar has none.
    pub u: Vec<f64>,
}

impl MujocoRows {
    /// `(impulses, velocities)`: `max |r - r_mj| / max |r_mj|` and
    /// `max |u - u_mj| / max(max |u_mj|, max |q|)` over every row (`q` the free velocity: a
    /// robot at rest has `u_mj` near zero, no scale of its own); `NaN` where sizes differ or
    /// the sidecar has no velocities.
    pub fn distances(&self, r: &[f64], u: &[f64], q: &[f64]) -> (f64, f64) {
        let r_scale = max_abs(&self.r).max(f64::MIN_POSITIVE);
        let u_scale = max_abs(&self.u).max(max_abs(q)).max(f64::MIN_POSITIVE);
        let du = if self.u.is_empty() {
            f64::NAN
        } else {
            max_diff(u, &self.u) / u_scale
        };
        (max_diff(r, &self.r) / r_scale, du)
    }
}

/// Where another engine's answers are.
#[derive(Debug, Clone)]
pub struct Reference {
    dir: PathBuf,
}

/// MuJoCo's answer to one problem, with the oracle's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct MujocoAnswer {
    /// MuJoCo's impulses, normal first per contact.
    pub r: Vec<f64>,
    /// MuJoCo's iterations (the last island's count when it reports several).
    pub iterations: f64,
    /// The accuracy MuJoCo reached, `abs_residual_inf` (m/s).
    pub accuracy: f64,
    /// SAP with MuJoCo's regulariser: its largest impulse difference from MuJoCo's.
    pub oracle_error: f64,
    /// The difference MuJoCo's accuracy allows.
    pub oracle_bound: f64,
}

impl MujocoAnswer {
    /// The row figures of an answer `r` to this problem.
    pub fn figures(&self, r: &[f64]) -> BTreeMap<&'static str, f64> {
        let scale = max_abs(&self.r).max(f64::MIN_POSITIVE);
        BTreeMap::from([
            (REFERENCE_DISTANCE, max_diff(r, &self.r) / scale),
            ("reference_iterations", self.iterations),
            ("reference_accuracy", self.accuracy),
            ("oracle_error", self.oracle_error),
            ("oracle_bound", self.oracle_bound),
        ])
    }
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

impl Reference {
    /// MuJoCo's sidecars in `dir`.
    pub fn mujoco(dir: PathBuf) -> Reference {
        Reference { dir }
    }

    /// The sidecar of `file` (`<dir>/<stem>.json`), parsed, with its path for errors.
    fn sidecar(&self, file: &Path) -> Result<(serde_json::Value, PathBuf), RunError> {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = self.dir.join(format!("{stem}.json"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| RunError::Problem(format!("{}: {e}", path.display())))?;
        let side = serde_json::from_str(&text)
            .map_err(|e| RunError::Problem(format!("{}: {e}", path.display())))?;
        Ok((side, path))
    }

    /// MuJoCo's impulses and velocities for the problem of `file` (no oracle), checked to have
    /// `rows` entries.
    pub fn rows(&self, file: &Path, rows: usize) -> Result<MujocoRows, RunError> {
        let (side, path) = self.sidecar(file)?;
        let bad = |what: String| RunError::Problem(format!("{}: {what}", path.display()));
        let r = numbers(&side, "r").ok_or_else(|| bad("no array `r`".into()))?;
        let u = numbers(&side, "u").unwrap_or_default();
        if r.len() != rows || !(u.is_empty() || u.len() == rows) {
            return Err(bad(format!(
                "{} impulses and {} velocities for a problem of {rows} rows",
                r.len(),
                u.len()
            )));
        }
        Ok(MujocoRows { r, u })
    }

    /// MuJoCo's answer to the problem of `file` (its sidecar `<dir>/<stem>.json`), with the
    /// oracle solved on `problem`, which must be the file's generalized problem (the oracle only
    /// on Coulomb contacts; `NaN` otherwise, see the module documentation).
    pub fn answer(&self, file: &Path, problem: &StepProblem) -> Result<MujocoAnswer, RunError> {
        let (side, path) = self.sidecar(file)?;
        let bad = |what: String| RunError::Problem(format!("{}: {what}", path.display()));
        let field = |key: &str| numbers(&side, key).ok_or_else(|| bad(format!("no array `{key}`")));
        let (rr, v_ref, r) = (field("regulariser_R")?, field("v_ref")?, field("r")?);
        let g = problem
            .generalized()
            .ok_or_else(|| bad("the problem is not in generalized velocities".into()))?;
        let rows = g.num_rows();
        if rr.len() != rows || v_ref.len() != rows || r.len() != rows {
            return Err(bad(format!(
                "sidecar sizes disagree with the problem's {rows} rows"
            )));
        }
        let accuracy = side["checks"]["abs_residual_inf"]
            .as_f64()
            .unwrap_or(f64::NAN);
        let (oracle_error, oracle_bound) = if g.coulomb_only() {
            let impulses = oracle(g, &rr, &v_ref).map_err(|e| bad(format!("oracle solve: {e}")))?;
            let r_min = rr.iter().copied().fold(f64::INFINITY, f64::min);
            (
                max_diff(&impulses, &r),
                (r.len() as f64).sqrt() * accuracy / r_min,
            )
        } else {
            (f64::NAN, f64::NAN)
        };
        Ok(MujocoAnswer {
            oracle_error,
            oracle_bound,
            iterations: side["solver_iterations"]
                .as_array()
                .and_then(|a| a.last())
                .and_then(serde_json::Value::as_f64)
                .or_else(|| side["solver_iterations"].as_f64())
                .unwrap_or(f64::NAN),
            accuracy,
            r,
        })
    }
}

/// The array `key` of a sidecar as numbers, `None` when it has none.
fn numbers(side: &serde_json::Value, key: &str) -> Option<Vec<f64>> {
    side[key]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
}

/// SAP's impulses on MuJoCo's own problem (MuJoCo's `R` and `v^ = v_ref`) of a Coulomb-only
/// problem, solved by Newton to `1e-13`.
fn oracle(
    g: &contactlab_core::GeneralizedProblem,
    rr: &[f64],
    v_ref: &[f64],
) -> Result<Vec<f64>, contactlab_core::CoreError> {
    let regs = (0..g.num_contacts())
        .map(|i| ContactRegularization {
            mu: g.contacts[i].mu,
            rn: rr[3 * i],
            rt: rr[3 * i + 1],
        })
        .collect();
    let cost = SapCost::new(g, regs, v_ref);
    let opts = SolveOptions {
        stop_tol: 1e-13,
        max_iter: 100,
        ..SolveOptions::default()
    };
    let s = solve_merit(&cost, NewtonMerit::default(), cost.v_star().to_vec(), &opts)?;
    Ok(cost.impulses(&s.x))
}
