//! The contract between the lab, which writes runs, and the reports and notebooks, which read
//! them: the name of every fixed column of each run kind's Parquet file, and the run's
//! metadata ([`RunMeta`], its `.meta.json`) as one typed record written and read through serde.
//!
//! The lab builds its frames with these names and the report reads columns by them, so a
//! column is renamed in one place; the house rules (`experiments/house`) fail on a string
//! literal in `experiments/lab/src` or `experiments/report/src` that spells one of these
//! names or a field of [`RunMeta`] instead of naming it through this module.
//!
//! Not here: the columns a run adds by name at run time, which belong to whoever names them
//! (a driver's counters and diagnostics such as `newton_accepted`, a scene's observables such
//! as `energy`, the sweep's keys from the config, the extra trace values a driver reports),
//! and the engine harness's records, whose columns the Python harness defines
//! (`experiments/peers/`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::provenance::Provenance;
use crate::scene_record::SceneRecord;

/// Columns shared by several run kinds, spelled once.
pub mod common {
    /// Index of the run in the expanded sweep (or of the problem in a problem set).
    pub const RUN: &str = "run";
    /// Time step index within a run.
    pub const STEP: &str = "step";
    /// The solver's label: `<formulation>+<driver>` or a named spec.
    pub const SOLVER: &str = "solver";
    /// The contact model the solve answered (`coulomb`, `pyramid`, `compliant`, ...).
    pub const MODEL: &str = "model";
    /// Contacts in the problem.
    pub const N_C: &str = "n_c";
    /// The solve's iterations.
    pub const ITERATIONS: &str = "iterations";
    /// The shared ruler's residual of the answer (natural map over `1 + |q|`).
    pub const RESIDUAL: &str = "residual";
    /// Wall seconds of the solve.
    pub const SECONDS: &str = "seconds";
    /// Seconds to build the formulation before the solve.
    pub const BUILD_SECONDS: &str = "build_seconds";
    /// The verdict of the shared ruler (`converged`, `inaccurate`, `timeout`, ...).
    pub const STATUS: &str = "status";
    /// The driver's own stopping status, as the driver reported it.
    pub const SOLVER_STATUS: &str = "solver_status";
    /// The paper whose config ran.
    pub const PAPER: &str = "paper";
    /// The config's name.
    pub const EXPERIMENT: &str = "experiment";
    /// Why a row failed or was skipped, empty when it did not.
    pub const MESSAGE: &str = "message";
    /// The formulation's registry name.
    pub const FORMULATION: &str = "formulation";
    /// The optimizer's (driver's) registry name.
    pub const OPTIMIZER: &str = "optimizer";
    /// The problem set of a problem file (`fclib`, `siconos`, `mujoco`, ...).
    pub const PROBLEM_SET: &str = "problem_set";
    /// The problem's file stem.
    pub const PROBLEM: &str = "problem";
    /// The problem's form (`contact` space or `generalized`).
    pub const FORM: &str = "form";
    /// Largest violation of the friction cone by the answer.
    pub const CONE_VIOLATION: &str = "cone_violation";
    /// The answer's complementarity gap.
    pub const COMPLEMENTARITY_GAP: &str = "complementarity_gap";
    /// Timed repetitions of a solve.
    pub const ROUNDS: &str = "rounds";
    /// An answer's distance from another engine's impulses (MuJoCo's),
    /// `max |r - r_ref| / max |r_ref|`.
    pub const REFERENCE_DISTANCE: &str = "reference_distance";
}

/// The steps frame of an experiment sweep (`<name>.parquet`): one row per solve of a step.
/// Besides these, the sweep's keys, one column per counter, diagnostic and scene observable.
pub mod steps {
    pub use super::common::{
        BUILD_SECONDS, EXPERIMENT, ITERATIONS, MODEL, N_C, PAPER, RESIDUAL, RUN, SECONDS, SOLVER,
        SOLVER_STATUS, STATUS, STEP,
    };
    /// The solver that drove the scene (whose answer advanced it).
    pub const DRIVER: &str = "driver";
    /// `driver` for the solver that advanced the scene, `shadow` for one solving its problems.
    pub const ROLE: &str = "role";
    /// The [`ROLE`] of the solver that advanced the scene.
    pub const ROLE_DRIVER: &str = "driver";
    /// The [`ROLE`] of a solver solving the driver's problems without advancing the scene.
    pub const ROLE_SHADOW: &str = "shadow";
    /// Unknowns of the solved problem.
    pub const UNKNOWNS: &str = "unknowns";
    /// Seconds of the scene's own work in the step (detection, assembly, advance).
    pub const SCENE_SECONDS: &str = "scene_seconds";
    /// Seconds of the scene's advance after the solve.
    pub const ADVANCE_SECONDS: &str = "advance_seconds";
    /// Seconds of collision detection in the step.
    pub const DETECT_SECONDS: &str = "detect_seconds";
    /// A shadow's relative distance to the driver's impulses.
    pub const DISTANCE_TO_DRIVER: &str = "distance_to_driver";
    /// A shadow's largest velocity gap to the driver's answer.
    pub const VELOCITY_GAP_TO_DRIVER: &str = "velocity_gap_to_driver";
    /// Symbolic analyses the solve made (a driver's counter; none where it kept the last
    /// step's).
    pub const SYMBOLIC_FACTORIZATIONS: &str = "symbolic_factorizations";
}

/// The traces frame of an experiment sweep (`<name>_traces.parquet`): one row per iteration of
/// a kept solve. Besides these, one column per extra value a driver reports.
pub mod traces {
    pub use super::common::{RUN, SOLVER, STEP};
    /// Why the solve was kept (`first`, `failed`, ...).
    pub const WHY: &str = "why";
    /// Iteration index.
    pub const ITER: &str = "iter";
    /// The driver's merit after the iteration.
    pub const MERIT: &str = "merit";
    /// Norm of the merit's gradient, null where the driver has none.
    pub const GRAD_NORM: &str = "grad_norm";
    /// Length of the step taken, null where the driver has none.
    pub const STEP_LENGTH: &str = "step_length";
    /// Levenberg-Marquardt's damping, null where the driver has none.
    pub const LAMBDA: &str = "lambda";
    /// The kind of step (`newton`, `gradient`, `dogleg`, ...).
    pub const STEP_KIND: &str = "step_kind";
}

/// The frame of a matrix run: one row per pair and problem.
pub mod matrix {
    pub use super::common::{
        COMPLEMENTARITY_GAP, CONE_VIOLATION, FORM, FORMULATION, ITERATIONS, MESSAGE, MODEL, N_C,
        OPTIMIZER, PROBLEM, PROBLEM_SET, REFERENCE_DISTANCE, RESIDUAL, RUN, SECONDS, SOLVER_STATUS,
        STATUS,
    };
    /// The answer's distance from the reference's row velocities (MuJoCo's, relative to the
    /// rigid targets), `max |u - u_ref| / max(max |u_ref|, max |q|)`; `NaN` without a reference.
    pub const REFERENCE_DISTANCE_U: &str = "reference_distance_u";
    /// The constraint kind a pair refused the problem for before it ran (empty otherwise).
    pub const REFUSED_KIND: &str = "refused_kind";
    /// The acceptance tolerance the pair was judged by.
    pub const TOL: &str = "tol";
    /// Whether the ruler accepted the answer.
    pub const SOLVED: &str = "solved";
    /// Whether the answer also solves the Coulomb problem.
    pub const SOLVED_COULOMB: &str = "solved_coulomb";
    /// FCLib's relative error of the answer.
    pub const ERROR_FCLIB: &str = "error_fclib";
    /// Siconos' error of the answer.
    pub const ERROR_SICONOS: &str = "error_siconos";
}

/// The frame of a ladder run ([`crate::ladder`]): one row per (scene, sampled step, pair,
/// rung). ContactBench's figures are on forces `r / dt`, the largest over the step's contacts
/// (`contactlab_core::contactbench`).
pub mod ladder {
    pub use super::common::{
        FORMULATION, ITERATIONS, MESSAGE, MODEL, N_C, OPTIMIZER, RESIDUAL, SECONDS, SOLVER_STATUS,
        STATUS, STEP,
    };
    /// The ladder scene's name.
    pub const SCENE: &str = "scene_name";
    /// `cold` or `warm`.
    pub const START: &str = "start_from";
    /// The rung's tolerance.
    pub const TOL: &str = "tol";
    /// The rung's iteration cap.
    pub const CAP: &str = "cap";
    /// The scene's time step (s), which turns impulses into forces.
    pub const DT: &str = "time_step";
    /// ContactBench's primal feasibility, `max dist_K(lambda)`.
    pub const PRIMAL: &str = "primal";
    /// ContactBench's dual feasibility, `max dist_K*(c + Gamma(c))`.
    pub const DUAL: &str = "dual";
    /// ContactBench's complementarity, `max |<lambda, c + Gamma(c)>|`.
    pub const COMPLEMENTARITY: &str = "complementarity";
    /// ContactBench's Signorini figure, `max |lambda_N c_N|`.
    pub const SIGNORINI: &str = "signorini";
    /// ContactBench's maximum-dissipation gap, `max (mu lambda_N - |lambda_T|) |c_T|`.
    pub const DISSIPATION: &str = "dissipation_gap";
}

/// The frame of a problems run: one row per named solver and problem file. Besides these, one
/// column per counter, diagnostic and reference figure.
pub mod problems {
    pub use super::common::{
        BUILD_SECONDS, COMPLEMENTARITY_GAP, CONE_VIOLATION, FORM, FORMULATION, ITERATIONS, MESSAGE,
        MODEL, N_C, OPTIMIZER, PROBLEM, PROBLEM_SET, REFERENCE_DISTANCE, RESIDUAL, ROUNDS, RUN,
        SECONDS, SOLVER, SOLVER_STATUS, STATUS,
    };
    /// Degrees of freedom of a generalized problem.
    pub const DOFS: &str = "dofs";
    /// The layout the formulation was built with.
    pub const LAYOUT: &str = "layout";
    /// The violation the solver's own model measures.
    pub const OWN_VIOLATION: &str = "own_violation";
    /// The fastest of the timed rounds.
    pub const SECONDS_MIN: &str = "seconds_min";
    /// The answers' impulses, a list column kept when the config asks for it.
    pub const R: &str = "r";
}

/// The frame of a single-contact run: one row per method.
pub mod single_contact {
    pub use super::common::ROUNDS;
    /// The single-contact method's name.
    pub const METHOD: &str = "method";
    /// Slipping contacts sampled.
    pub const SAMPLES: &str = "samples";
    /// Median microseconds a solve.
    pub const MICROS_MEDIAN: &str = "micros_median";
    /// Fastest microseconds a solve.
    pub const MICROS_MIN: &str = "micros_min";
    /// Largest relative impulse error against the reference.
    pub const MAX_ERROR: &str = "max_error";
    /// Largest absolute impulse error against the reference.
    pub const MAX_ABS_ERROR: &str = "max_abs_error";
    /// Mean steps of the method's iteration.
    pub const MEAN_STEPS: &str = "mean_steps";
    /// Mean steps of the bracketing phase.
    pub const MEAN_BRACKET_STEPS: &str = "mean_bracket_steps";
    /// Share of solves whose bracket took two steps.
    pub const SHARE_BRACKET_TWO: &str = "share_bracket_two";
    /// Samples the method failed.
    pub const FAILURES: &str = "failures";
    /// Samples the reference failed.
    pub const REFERENCE_FAILURES: &str = "reference_failures";
    /// Seconds inside the timed solves.
    pub const TIMED_SECONDS: &str = "timed_seconds";
}

/// The frame of the gradients study (`experiments/peers/gradients.py`, an engines run): one
/// row per problem and derivative checked; the run-wide settings repeat on every row.
pub mod gradients {
    pub use super::common::{PROBLEM, PROBLEM_SET, RESIDUAL, STATUS};
    pub use super::matrix::TOL;
    pub use super::problems::DOFS;
    /// The derivative checked: `natural-map` (the Coulomb cone's answers), `sap`, `pyramid`
    /// or `dissipation`.
    pub const DERIVATIVE: &str = "derivative";
    /// The answer's rows.
    pub const ROWS: &str = "rows";
    /// Whether the impulses are not unique (1) or are (0).
    pub const NON_UNIQUE: &str = "non_unique";
    /// Blocks sliding at the answer.
    pub const BLOCKS_SLIDING: &str = "blocks_sliding";
    /// Blocks within the margin of a kink.
    pub const BLOCKS_DEGENERATE: &str = "blocks_degenerate";
    /// The finite differences' verdict: `consistent`, `kink` or `failed`.
    pub const FD: &str = "fd";
    /// The relative error of the derivative on the outputs checked.
    pub const DERIVATIVE_ERROR: &str = "derivative_error";
    /// How far the kept step's differences are from those at a tenth of it (relative): the
    /// differences' own accuracy.
    pub const FD_AGREEMENT: &str = "fd_agreement";
    /// Seconds: the solve, the factorization, one `vjp`, the dense Jacobian of `r`, central
    /// differences of one gradient (`2 n` solves), MuJoCo's `mjd_transitionFD`.
    pub const SOLVE_S: &str = "solve_s";
    /// See [`SOLVE_S`].
    pub const FACTOR_S: &str = "factor_s";
    /// See [`SOLVE_S`].
    pub const VJP_S: &str = "vjp_s";
    /// See [`SOLVE_S`].
    pub const JACOBIAN_S: &str = "jacobian_s";
    /// See [`SOLVE_S`].
    pub const FD_GRADIENT_S: &str = "fd_gradient_s";
    /// See [`SOLVE_S`].
    pub const MUJOCO_TRANSITION_FD_S: &str = "mujoco_transition_fd_s";
    /// The prefix of a first-order pair's columns (`first_order_pairs_<pgs|admm>_<status|
    /// residual|gap_u|gap_r>`).
    pub const FIRST_ORDER_PAIRS: &str = "first_order_pairs";
    /// The first-order pairs' tolerance.
    pub const FIRST_ORDER_TOL: &str = "first_order_tol";
    /// The largest and smallest steps of the finite differences' ladder.
    pub const H_LADDER_MAX: &str = "h_ladder_max";
    /// See [`H_LADDER_MAX`].
    pub const H_LADDER_MIN: &str = "h_ladder_min";
    /// The agreement under which two steps' differences are consistent.
    pub const FD_CONSISTENT: &str = "fd_consistent";
    /// The largest problem (rows) the FB MLCP's derivative is checked on.
    pub const MLCP_MAX_ROWS: &str = "mlcp_max_rows";
    /// The sliding box's rollout: its horizon (steps, ending 20 before the stop) and the chain
    /// rule's largest relative gap to central differences of the whole rollout.
    pub const ROLLOUT_HORIZON: &str = "rollout_horizon";
    /// See [`ROLLOUT_HORIZON`].
    pub const ROLLOUT_GAP: &str = "rollout_gap";
    /// The identification: noise seeds, samples, the noise's standard deviation (m).
    pub const IDENTIFY_SEEDS: &str = "identify_seeds";
    /// See [`IDENTIFY_SEEDS`].
    pub const IDENTIFY_SAMPLES: &str = "identify_samples";
    /// See [`IDENTIFY_SEEDS`].
    pub const IDENTIFY_SIGMA: &str = "identify_sigma";
    /// The fits by the chain rule: the relative error of `mu` (median, largest), of `v0`
    /// (median), Gauss-Newton's iterations and seconds (medians).
    pub const IDENTIFY_MU_ERROR_MEDIAN: &str = "identify_mu_error_median";
    /// See [`IDENTIFY_MU_ERROR_MEDIAN`].
    pub const IDENTIFY_MU_ERROR_MAX: &str = "identify_mu_error_max";
    /// See [`IDENTIFY_MU_ERROR_MEDIAN`].
    pub const IDENTIFY_V0_ERROR_MEDIAN: &str = "identify_v0_error_median";
    /// See [`IDENTIFY_MU_ERROR_MEDIAN`].
    pub const IDENTIFY_ITERATIONS_MEDIAN: &str = "identify_iterations_median";
    /// See [`IDENTIFY_MU_ERROR_MEDIAN`].
    pub const IDENTIFY_SECONDS_CHAIN_MEDIAN: &str = "identify_seconds_chain_median";
    /// The fits by central differences of the rollout: their seeds, median seconds, and the
    /// largest gap of their `mu` to the chain rule's fit (relative to the true `mu`).
    pub const IDENTIFY_FD_SEEDS: &str = "identify_fd_seeds";
    /// See [`IDENTIFY_FD_SEEDS`].
    pub const IDENTIFY_SECONDS_FD_MEDIAN: &str = "identify_seconds_fd_median";
    /// See [`IDENTIFY_FD_SEEDS`].
    pub const IDENTIFY_CHAIN_FD_MU_GAP_MAX: &str = "identify_chain_fd_mu_gap_max";
}

/// The frame of an engines run: the harness's records, or this one column when it did not run.
pub mod engines {
    /// Why the harness did not run (the frame's only column then).
    pub const SKIPPED: &str = "skipped";
}

/// What one run of a single-contact sweep recorded (the meta's `per_run`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSample {
    /// Run index in the expanded sweep.
    pub run: u64,
    /// The sweep keys of the run and their values.
    pub sweep: BTreeMap<String, serde_json::Value>,
    /// Steps the scene took.
    pub steps: u64,
    /// Slipping contacts the scene produced.
    pub slipping: u64,
    /// Of those, the ones sampled.
    pub samples: u64,
}

/// A run's `.meta.json`: what every run records (timing, threads, load, shard, provenance)
/// and what its kind adds; every field `None` (or empty) where a run did not record it, so
/// older runs still read. Written by [`crate::store::write_meta`] from the lab's record, read
/// back by [`RunMeta::of_run`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunMeta {
    /// The paper whose config ran (`matrix` for a matrix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper: Option<String>,
    /// The config's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// Runs of the sweep (problems of a problem or matrix run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    /// Rows of the frame written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Wall-clock seconds of the sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// Seconds inside the solvers, summed over all solves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solve_seconds: Option<f64>,
    /// Timed repetitions of each solve (problems and single-contact runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u64>,
    /// Slipping contacts sampled per method (single-contact runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    /// Pairs of the matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u64>,
    /// Problem files a problems run left out (no contact-space form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<Vec<String>>,
    /// Each run of a single-contact sweep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_run: Option<Vec<RunSample>>,
    /// Why an engines run did not run its harness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Threads the sweep ran on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// The machine's 1-minute load average when the sweep ended.
    #[serde(rename = "load_average_1min")]
    pub load_average: Option<f64>,
    /// `k/N` for one shard of a sharded run.
    pub shard: Option<String>,
    /// Commit, compiler, CPU and date of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// Each run's scene, in run order (empty for a matrix and for runs written before scenes
    /// were recorded).
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::scene_record::scenes_to_json",
        deserialize_with = "crate::scene_record::scenes_from_json"
    )]
    pub scenes: Vec<SceneRecord>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meta_round_trips_and_an_older_one_reads_with_what_it_has() {
        let meta = RunMeta {
            paper: Some("hwangbo2018".into()),
            runs: Some(2),
            left_out: Some(vec!["Rover4396".into()]),
            per_run: Some(vec![RunSample {
                run: 1,
                sweep: BTreeMap::from([("mu".to_string(), serde_json::json!(0.5))]),
                steps: 10,
                slipping: 4,
                samples: 3,
            }]),
            load_average: Some(0.5),
            ..RunMeta::default()
        };
        let text = serde_json::to_string(&meta).unwrap();
        assert_eq!(serde_json::from_str::<RunMeta>(&text).unwrap(), meta);
        // Absent kinds' fields are not written; the load and shard always are.
        assert!(!text.contains("skipped") && text.contains("\"shard\":null"));
        // Keys this version does not know are ignored; absent ones are None.
        let old: RunMeta =
            serde_json::from_str(r#"{"wall_seconds": 2.5, "threads": 2, "legacy": 1}"#).unwrap();
        assert_eq!(old.wall_seconds, Some(2.5));
        assert_eq!(old.threads, Some(2));
        assert_eq!(old.runs, None);
    }
}
