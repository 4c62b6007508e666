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

use std::path::{Path, PathBuf};

use contactlab_core::drivers::{solve_merit, NewtonMerit};
use contactlab_core::{SolveOptions, StepProblem};
use contactlab_formulations::castro::{ContactRegularization, SapCost};
use std::collections::BTreeMap;

use crate::runner::RunError;

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
            ("reference_distance", max_diff(r, &self.r) / scale),
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

    /// MuJoCo's answer to the problem of `file` (its sidecar `<dir>/<stem>.json`), with the
    /// oracle solved on `problem`, which must be the file's generalized problem.
    pub fn answer(&self, file: &Path, problem: &StepProblem) -> Result<MujocoAnswer, RunError> {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = self.dir.join(format!("{stem}.json"));
        let bad = |what: String| RunError::Problem(format!("{}: {what}", path.display()));
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let side: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let numbers = |key: &str| -> Result<Vec<f64>, RunError> {
            side[key]
                .as_array()
                .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
                .ok_or_else(|| bad(format!("no array `{key}`")))
        };
        let (rr, v_ref, r) = (numbers("regulariser_R")?, numbers("v_ref")?, numbers("r")?);
        let g = problem
            .generalized()
            .ok_or_else(|| bad("the problem is not in generalized velocities".into()))?;
        let nc = g.num_contacts();
        if rr.len() != 3 * nc || v_ref.len() != rr.len() || r.len() != rr.len() {
            return Err(bad(format!(
                "sidecar sizes disagree with the problem's {nc} contacts"
            )));
        }
        let regs = (0..nc)
            .map(|i| ContactRegularization {
                mu: g.contacts[i].mu,
                rn: rr[3 * i],
                rt: rr[3 * i + 1],
            })
            .collect();
        let cost = SapCost::new(g, regs, &v_ref);
        let opts = SolveOptions {
            stop_tol: 1e-13,
            max_iter: 100,
            ..SolveOptions::default()
        };
        let s = solve_merit(&cost, NewtonMerit::default(), cost.v_star().to_vec(), &opts)
            .map_err(|e| bad(format!("oracle solve: {e}")))?;
        let accuracy = side["checks"]["abs_residual_inf"]
            .as_f64()
            .unwrap_or(f64::NAN);
        let r_min = rr.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(MujocoAnswer {
            oracle_error: max_diff(&cost.impulses(&s.x), &r),
            oracle_bound: (r.len() as f64).sqrt() * accuracy / r_min,
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
