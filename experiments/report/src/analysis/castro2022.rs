//! Statistics for the Castro, Permenter and Han 2022 (SAP) report.
//!
//! * [`sphere_glide`]: Mylapilli and Jain's sliding sphere run with SAP. The convex relaxation
//!   couples slip into the normal direction: while sliding, the contact behaves as if its
//!   distance were `phi_eff = phi - (dt + tau_d) mu |v_t|` (sec. V-A), so a sliding sphere
//!   glides at a height `(dt + tau_d) mu |v_t|` above the plane (sec. VII, "Convex
//!   approximation"); the rigid contact here has `tau_d = 0`. Measured: the initial hop, and
//!   the glide height over `dt mu |slip|` while sliding.
//! * [`set_problems`]: the generalized problems exported from MuJoCo (`data/mujoco/global/`)
//!   as the problem-set run `mujoco_set.toml` solved them: SAP (`newton-merit`, `lbfgs`) and
//!   Clarabel on SAP's primal, with iterations, times, `e_m` (eq. 32), the distance of SAP's
//!   impulses to MuJoCo's (both regularised, differently) and, with MuJoCo's own regulariser,
//!   to within MuJoCo's accuracy (the oracle the run computed).
//! * [`clutter_rows`] and [`convergence_histories`]: clutter (sec. VI-C, Figs. 9-12), the
//!   histories from the traces the clutter run kept at the asked steps (Fig. 10).
//! * [`engine_steps`]: MuJoCo's and Drake's whole-step times from the peers' run.
//! * [`spring`]: the spring-cylinder (sec. VI-B): orders of accuracy and energy (Figs. 5-7),
//!   re-exported here.
//!
//! Everything here reads DataFrames of runs; nothing solves or simulates.

pub mod spring;

pub use spring::*;

use contactlab_runs::schema::{engines, problems, steps, traces};
use polars::prelude::DataFrame;

use super::{f64s, quantile, AnalysisError};

/// What the sliding sphere does under SAP.
#[derive(Debug, Clone, PartialEq)]
pub struct SphereGlide {
    /// The largest height of the sphere's bottom above the plane (m).
    pub max_hop: f64,
    /// The time of that height (s).
    pub max_hop_time: f64,
    /// First time the slip speed falls below `slip_tol` (s).
    pub slide_time: f64,
    /// The final forward speed (m/s).
    pub roll_speed: f64,
    /// Steps in contact while sliding, after the first landing, settled (`|v_z| <=`
    /// [`SETTLED_VZ`]).
    pub glide_steps: usize,
    /// Over those steps, the height over `dt mu |slip|`: mean, min, max.
    pub glide_ratio: [f64; 3],
    /// Share of sliding steps (after the first landing, slip at least `glide_min_slip`) with a
    /// contact in the problem.
    pub contact_share: f64,
}

fn glide_error(what: &str) -> AnalysisError {
    AnalysisError::MissingData(format!("sphere glide: {what}"))
}

/// Normal speed (m/s) below which a contact step has settled into the glide: the landing steps,
/// still falling into the contact, are not gliding yet.
pub const SETTLED_VZ: f64 = 0.01;

/// The glide of the sphere run `df` (columns `step`, `n_c`, `z`, `vx`, `vz`, `omega_y`), radius
/// `radius`, time step `h`, friction `mu`; sliding while `|vx - R omega_y| > slip_tol`. The
/// glide ratio is taken over contact steps with `|slip| >= glide_min_slip`: near the end of
/// the slide the predicted height `dt mu |slip|` falls to the contact's static compression
/// (`R_n gamma_n dt`, below a micrometre here), which the ratio would divide by nothing.
pub fn sphere_glide(
    df: &DataFrame,
    radius: f64,
    h: f64,
    mu: f64,
    slip_tol: f64,
    glide_min_slip: f64,
) -> Result<SphereGlide, AnalysisError> {
    let z = f64s(df, "z")?;
    let vx = f64s(df, "vx")?;
    let wy = f64s(df, "omega_y")?;
    let nc = f64s(df, steps::N_C)?;
    let vz = f64s(df, "vz")?;
    let n = z.len();
    if n == 0 {
        return Err(glide_error("no steps"));
    }
    // The step's observables are the state after the step `k`: time (k + 1) h.
    let t = |k: usize| (k + 1) as f64 * h;
    let slip: Vec<f64> = (0..n).map(|k| (vx[k] - radius * wy[k]).abs()).collect();
    let (k_max, max_hop) =
        z.iter()
            .copied()
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |m, (k, v)| if v > m.1 { (k, v) } else { m },
            );
    let stop = slip.iter().position(|&s| s <= slip_tol).unwrap_or(n);
    // The first landing after the initial hop: contact again after a flight.
    let flight = nc.iter().position(|&c| c == 0.0).unwrap_or(n);
    let landing = (flight..n).find(|&k| nc[k] > 0.0).unwrap_or(n);
    let glide: Vec<f64> = (landing..stop.min(n))
        .filter(|&k| nc[k] > 0.0 && slip[k] >= glide_min_slip && vz[k].abs() <= SETTLED_VZ)
        .map(|k| z[k] / (h * mu * slip[k]))
        .collect();
    let sliding_after = (landing..stop.min(n))
        .filter(|&k| slip[k] >= glide_min_slip)
        .count()
        .max(1);
    let ratio = if glide.is_empty() {
        [f64::NAN; 3]
    } else {
        [
            glide.iter().sum::<f64>() / glide.len() as f64,
            glide.iter().copied().fold(f64::INFINITY, f64::min),
            glide.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ]
    };
    Ok(SphereGlide {
        max_hop,
        max_hop_time: t(k_max),
        slide_time: if stop < n { t(stop) } else { f64::NAN },
        roll_speed: vx[n - 1],
        glide_steps: glide.len(),
        glide_ratio: ratio,
        contact_share: glide.len() as f64 / sliding_after as f64,
    })
}

/// One solver on one problem of the MuJoCo set.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSolve {
    /// The solver's label.
    pub solver: String,
    /// The driver's own status (`error` when the solve could not run).
    pub status: String,
    /// Iterations.
    pub iterations: u64,
    /// Median seconds over the run's rounds.
    pub seconds: f64,
    /// `e_m` (eq. 32) at its answer.
    pub e_m: f64,
    /// `max |gamma - r_mujoco| / max |r_mujoco|`.
    pub distance_to_mujoco: f64,
}

/// One problem of the MuJoCo set.
#[derive(Debug, Clone, PartialEq)]
pub struct SetProblem {
    /// File stem.
    pub name: String,
    /// Contacts.
    pub contacts: usize,
    /// Generalized velocities.
    pub dofs: usize,
    /// MuJoCo's iterations on it.
    pub mujoco_iterations: f64,
    /// With MuJoCo's regulariser and `v_ref`: SAP's largest impulse error against MuJoCo's,
    /// and the bound MuJoCo's own accuracy puts on it (`sqrt(3 nc) acc / R_min`).
    pub oracle_error: f64,
    /// The bound on [`SetProblem::oracle_error`].
    pub oracle_bound: f64,
    /// The solvers with SAP's own (physical) regularisation, in the run's order.
    pub solves: Vec<SetSolve>,
}

/// A float column, NaN everywhere when the frame lacks it (a diagnostic no solver reported).
fn f64s_or_nan(df: &DataFrame, name: &str) -> Result<Vec<f64>, AnalysisError> {
    if df.column(name).is_ok() {
        Ok(f64s(df, name)?)
    } else {
        Ok(vec![f64::NAN; df.height()])
    }
}

/// A text column, empty everywhere when the frame lacks it.
fn strs_or_empty(df: &DataFrame, name: &str) -> Result<Vec<String>, AnalysisError> {
    if df.column(name).is_ok() {
        Ok(super::strs(df, name)?)
    } else {
        Ok(vec![String::new(); df.height()])
    }
}

/// The first finite value of `v` over `rows` (NaN when none is).
fn first_finite(v: &[f64], rows: &[usize]) -> f64 {
    rows.iter()
        .map(|&k| v[k])
        .find(|x| x.is_finite())
        .unwrap_or(f64::NAN)
}

/// The MuJoCo set from the rows of its problem-set run (`mujoco_set.toml`, `kind = "problems"`
/// with MuJoCo's answers as `[reference]`): one [`SetProblem`] per problem in run order, its
/// solvers in the run's order. Columns read: `run`, `problem`, `n_c`, `dofs`, `solver`,
/// `solver_status`, `iterations`, `seconds`, `e_m`, `reference_distance`,
/// `reference_iterations`, `oracle_error`, `oracle_bound`.
pub fn set_problems(df: &DataFrame) -> Result<Vec<SetProblem>, AnalysisError> {
    for c in ["oracle_error", "oracle_bound", problems::REFERENCE_DISTANCE] {
        if df.column(c).is_err() {
            return Err(AnalysisError::MissingData(format!(
                "MuJoCo set: no `{c}` column (a problem-set run without MuJoCo's answers as its reference)"
            )));
        }
    }
    let run = f64s(df, problems::RUN)?;
    let problem = super::strs(df, problems::PROBLEM)?;
    let nc = f64s(df, problems::N_C)?;
    let dofs = f64s(df, problems::DOFS)?;
    let solver = super::strs(df, problems::SOLVER)?;
    let status = super::strs(df, problems::SOLVER_STATUS)?;
    let iterations = f64s(df, problems::ITERATIONS)?;
    let seconds = f64s(df, problems::SECONDS)?;
    let e_m = f64s_or_nan(df, "e_m")?;
    let distance = f64s(df, problems::REFERENCE_DISTANCE)?;
    let mujoco_iterations = f64s_or_nan(df, "reference_iterations")?;
    let (oracle_error, oracle_bound) = (f64s(df, "oracle_error")?, f64s(df, "oracle_bound")?);
    let mut order: Vec<u64> = Vec::new();
    for r in &run {
        if !order.contains(&(*r as u64)) {
            order.push(*r as u64);
        }
    }
    Ok(order
        .into_iter()
        .map(|p| {
            let rows: Vec<usize> = (0..df.height()).filter(|&k| run[k] as u64 == p).collect();
            let k0 = rows[0];
            SetProblem {
                name: std::path::Path::new(&problem[k0])
                    .file_stem()
                    .map_or_else(|| problem[k0].clone(), |s| s.to_string_lossy().into_owned()),
                contacts: nc[k0] as usize,
                dofs: dofs[k0] as usize,
                mujoco_iterations: first_finite(&mujoco_iterations, &rows),
                oracle_error: first_finite(&oracle_error, &rows),
                oracle_bound: first_finite(&oracle_bound, &rows),
                solves: rows
                    .iter()
                    .map(|&k| SetSolve {
                        solver: solver[k].clone(),
                        status: status[k].clone(),
                        iterations: iterations[k] as u64,
                        seconds: seconds[k],
                        e_m: e_m[k],
                        distance_to_mujoco: distance[k],
                    })
                    .collect(),
            }
        })
        .collect())
}

/// One engine's whole-step time on a scene, from an other-engine run (`kind = "engines"`).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineStep {
    /// The scene (`clutter_n40`).
    pub scene: String,
    /// Bodies in it.
    pub bodies: usize,
    /// `mujoco` or `drake-sap` (the harness's engine name otherwise).
    pub engine: String,
    /// The engine's version and configuration as the harness gives them.
    pub config: String,
    /// Median wall time of a whole step (s); NaN where it failed.
    pub seconds_per_step_median: f64,
    /// Median contacts per step; NaN where it failed.
    pub contacts_per_step_median: f64,
    /// The harness's error for this engine (empty when it measured).
    pub error: String,
}

/// What an other-engine run holds: the engines' rows, or why the harness did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineRun {
    /// The harness ran: one row per engine and scene.
    Measured(Vec<EngineStep>),
    /// It could not run (its `skipped` column): why.
    Skipped(String),
}

/// The short name of an engine the harness names (`mujoco 3.3.0`, or its configuration
/// `mj_newton_elliptic`, `drake_sap_point`, where a failed row has no engine).
fn engine_name(engine: &str, config: &str) -> String {
    let e = if engine.is_empty() { config } else { engine };
    if e.starts_with("mujoco") || e.starts_with("mj_") {
        "mujoco".into()
    } else if e.starts_with("drake") {
        "drake-sap".into()
    } else {
        e.into()
    }
}

/// The rows of a run of `experiments/peers/bench.py` (`peers.toml`): columns `engine`,
/// `config`, `scene`, `nbodies`, `step_median_ms`, `ncon_median` and, where an engine failed,
/// `error`; or the run's `skipped` reason.
pub fn engine_steps(df: &DataFrame) -> Result<EngineRun, AnalysisError> {
    if df.column(engines::SKIPPED).is_ok() {
        let why = super::strs(df, engines::SKIPPED)?;
        return Ok(EngineRun::Skipped(
            why.into_iter().find(|w| !w.is_empty()).unwrap_or_default(),
        ));
    }
    let engine = strs_or_empty(df, "engine")?;
    let config = strs_or_empty(df, "config")?;
    let scene = strs_or_empty(df, "scene")?;
    let error = strs_or_empty(df, "error")?;
    let bodies = f64s_or_nan(df, "nbodies")?;
    let ms = f64s_or_nan(df, "step_median_ms")?;
    let ncon = f64s_or_nan(df, "ncon_median")?;
    Ok(EngineRun::Measured(
        (0..df.height())
            .map(|k| EngineStep {
                scene: scene[k].clone(),
                bodies: if bodies[k].is_finite() {
                    bodies[k] as usize
                } else {
                    0
                },
                engine: engine_name(&engine[k], &config[k]),
                config: format!("{} {}", engine[k], config[k]).trim().to_string(),
                seconds_per_step_median: 1e-3 * ms[k],
                contacts_per_step_median: ncon[k],
                error: if error[k].is_empty() && !ms[k].is_finite() {
                    "the harness recorded no step time".into()
                } else {
                    error[k].clone()
                },
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::{df, DataFrame};

    fn frame(z: &[f64], vx: &[f64], wy: &[f64], nc: &[f64]) -> DataFrame {
        let vz = vec![0.0; z.len()];
        df!("z" => z, "vx" => vx, "vz" => vz, "omega_y" => wy, "n_c" => nc).unwrap()
    }

    #[test]
    fn the_glide_is_measured_between_the_first_landing_and_rolling() {
        // Step 0 in contact, a two-step flight, then three gliding steps at exactly
        // dt mu |slip| and one rolling step.
        let (h, mu) = (0.001, 0.2);
        let slip = [2.0, 2.0, 2.0, 1.5, 1.0, 0.5, 0.0];
        let z: Vec<f64> = [0.0, 0.004, 0.002]
            .into_iter()
            .chain(slip[3..6].iter().map(|s| h * mu * s))
            .chain([0.0])
            .collect();
        let nc = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0];
        let wy = vec![0.0; 7];
        let g = sphere_glide(&frame(&z, &slip, &wy, &nc), 1.0, h, mu, 1e-9, 0.1).unwrap();
        assert_eq!(g.max_hop, 0.004);
        assert!((g.max_hop_time - 0.002).abs() < 1e-15);
        assert_eq!(g.glide_steps, 3);
        assert!(g.glide_ratio.iter().all(|r| (r - 1.0).abs() < 1e-12));
        assert!((g.slide_time - 0.007).abs() < 1e-15);
        assert_eq!(g.contact_share, 1.0);
        assert_eq!(g.roll_speed, 0.0);
    }

    #[test]
    fn clutter_speedups_leave_out_the_shared_build_and_whole_steps_keep_it() {
        // Three steps with contacts; each solve's `seconds` includes a 0.5 ms build.
        let df = df!(
            "n_bodies" => [8i64; 6],
            "walls" => [true; 6],
            "solver" => ["SAP", "IPM", "SAP", "IPM", "SAP", "IPM"],
            "step" => [0i64, 0, 1, 1, 2, 2],
            "n_c" => [4i64; 6],
            "iterations" => [5i64, 12, 3, 11, 2, 10],
            "seconds" => [1e-3, 1e-2, 1e-3, 3e-2, 2e-3, 1e-2],
            "build_seconds" => [5e-4; 6],
            "scene_seconds" => [1e-4; 6],
            "e_m" => [1e-6; 6],
            "e_mu" => [0.0; 6],
            "solver_status" => ["converged"; 6]
        )
        .unwrap();
        let r = &clutter_rows(&df, "SAP", "IPM").unwrap()[0];
        // Solves without the build: SAP 0.5, 0.5, 1.5 ms; IPM 9.5, 29.5, 9.5 ms.
        assert!((r.speedup - 19.0).abs() < 1e-9, "{}", r.speedup);
        assert!((r.sap_seconds_median - 5e-4).abs() < 1e-15);
        assert!((r.ipm_seconds_median - 9.5e-3).abs() < 1e-15);
        assert!((r.build_seconds_median - 5e-4).abs() < 1e-15);
        // The whole step keeps the build: 1.1, 1.1, 2.1 ms.
        assert!((r.step_seconds_median - 1.1e-3).abs() < 1e-15);
    }

    #[test]
    fn clutter_rows_pair_the_solvers_step_by_step() {
        // 4 steps of one run: SAP and the IPM on each; step 0 has no contacts.
        let df = df!(
            "n_bodies" => [8i64; 8],
            "walls" => [true; 8],
            "solver" => ["SAP", "IPM", "SAP", "IPM", "SAP", "IPM", "SAP", "IPM"],
            "step" => [0i64, 0, 1, 1, 2, 2, 3, 3],
            "n_c" => [0i64, 0, 4, 4, 6, 6, 6, 6],
            "iterations" => [0i64, 0, 5, 12, 3, 11, 2, 10],
            "seconds" => [0.0, 0.0, 1e-3, 1e-2, 1e-3, 3e-2, 2e-3, 1e-2],
            "scene_seconds" => [1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4],
            "e_m" => [f64::NAN, f64::NAN, 1e-6, 1e-5, 2e-6, 3e-6, 1e-7, 2e-6],
            "e_mu" => [f64::NAN, f64::NAN, 0.0, 1e-8, 0.0, 4e-8, 0.0, 1e-8],
            "solver_status" => ["no_contacts", "no_contacts", "converged", "converged", "converged", "max_iterations", "converged", "converged"]
        )
        .unwrap();
        let rows = clutter_rows(&df, "SAP", "IPM").unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.bodies, r.walls, r.steps), (8, true, 4));
        assert_eq!(r.sap_iterations, [10.0 / 3.0, 2.5, 5.0]);
        // Ratios 10, 30, 5: median 10.
        assert!((r.speedup - 10.0).abs() < 1e-12);
        assert_eq!(r.ipm_unconverged, 1);
        assert_eq!(r.e_m_max, [2e-6, 1e-5]);
        assert!((r.e_m_mean[0] - 3.1e-6 / 3.0).abs() < 1e-18);
        assert!((r.e_m_mean[1] - 15e-6 / 3.0).abs() < 1e-18);
        assert_eq!(r.e_m_median, [1e-6, 3e-6]);
        assert_eq!(r.e_mu_max, [0.0, 4e-8]);
        assert!((r.e_mu_mean[1] - 2e-8).abs() < 1e-20);
        assert!((r.sap_seconds_median - 1e-3).abs() < 1e-15);
    }

    #[test]
    fn histories_are_the_asked_traces_of_the_chosen_run_and_solver() {
        // Two runs (8 and 40 bodies, walls); the sweep's keys pick run 1.
        let steps = df!(
            "run" => [0u64, 0, 1, 1],
            "n_bodies" => [8i64, 8, 40, 40],
            "walls" => [true; 4],
            "seed" => [0i64; 4]
        )
        .unwrap();
        let keys = [("n_bodies", "40"), ("walls", "true"), ("seed", "0")];
        assert_eq!(run_where(&steps, &keys).unwrap(), Some(1));
        assert_eq!(run_where(&steps, &[("n_bodies", "20")]).unwrap(), None);
        // Run 1's traces: SAP at the asked step 60 (twice: also the hardest step), Clarabel
        // beside it, and run 0's SAP at the same step.
        let traces = df!(
            "run" => [1u64, 1, 1, 1, 1, 1, 1, 0],
            "step" => [60u64, 60, 60, 60, 60, 60, 60, 60],
            "solver" => ["SAP", "SAP", "SAP", "SAP", "SAP", "Clarabel", "Clarabel", "SAP"],
            "why" => ["hardest", "hardest", "asked", "asked", "asked", "asked", "asked", "asked"],
            "iter" => [0u64, 1, 0, 1, 2, 0, 1, 0],
            "merit" => [3.0, 1.0, 3.0, 1.0, 0.5, 9.0, 8.0, 7.0],
            "step_length" => [None, Some(1.0), None, Some(1.0), Some(0.5), None, None, None],
            "optimality" => [Some(1.0), Some(1e-3), Some(1.0), Some(1e-3), Some(1e-9), None, None, Some(2.0)]
        )
        .unwrap();
        let h = convergence_histories(&traces, 1, "SAP").unwrap();
        assert_eq!(h.len(), 3, "{h:?}");
        assert_eq!(h.iter().map(|p| p.iteration).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(h[2].cost, 0.5);
        assert_eq!(h[2].optimality, 1e-9);
        assert!(h[0].step_length.is_nan());
        assert!(h.iter().all(|p| p.step == 60));
        assert!(convergence_histories(&traces, 1, "nobody")
            .unwrap()
            .is_empty());
    }

    #[test]
    fn the_mujoco_set_is_read_per_problem_with_its_oracle_and_solvers() {
        let df = df!(
            "run" => [0u64, 0, 1, 1],
            "problem" => ["a_nc4.json", "a_nc4.json", "b_nc9.json", "b_nc9.json"],
            "n_c" => [4u64, 4, 9, 9],
            "dofs" => [30u64, 30, 60, 60],
            "solver" => ["SAP", "Clarabel", "SAP", "Clarabel"],
            "solver_status" => ["converged", "converged", "converged", "error"],
            "iterations" => [3u64, 9, 12, 0],
            "seconds" => [1e-4, 2e-4, 3e-4, f64::NAN],
            "e_m" => [1e-13, 1e-15, 2e-12, f64::NAN],
            "reference_distance" => [0.1, 0.11, 0.2, f64::NAN],
            "reference_iterations" => [4.0, 4.0, 12.0, f64::NAN],
            "oracle_error" => [1e-9, 1e-9, 2e-9, f64::NAN],
            "oracle_bound" => [1e-8, 1e-8, 4e-8, f64::NAN]
        )
        .unwrap();
        let set = set_problems(&df).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].name, "a_nc4");
        assert_eq!((set[1].contacts, set[1].dofs), (9, 60));
        assert_eq!(set[1].mujoco_iterations, 12.0);
        assert_eq!((set[1].oracle_error, set[1].oracle_bound), (2e-9, 4e-8));
        assert_eq!(set[0].solves.len(), 2);
        assert_eq!(set[0].solves[1].solver, "Clarabel");
        assert_eq!(set[0].solves[1].iterations, 9);
        assert_eq!(set[0].solves[0].distance_to_mujoco, 0.1);
        assert_eq!(set[1].solves[1].status, "error");
        // Without MuJoCo's answers there is no oracle to read.
        let bare = df.drop("oracle_bound").unwrap();
        assert!(set_problems(&bare)
            .unwrap_err()
            .to_string()
            .contains("oracle_bound"));
    }

    #[test]
    fn engine_rows_name_their_engine_and_a_skipped_run_says_why() {
        let df = df!(
            "engine" => [Some("mujoco 3.3.0"), None],
            "config" => ["mj_newton_elliptic", "drake_sap_point"],
            "scene" => ["clutter_n40", "clutter_n40"],
            "nbodies" => [40.0, 40.0],
            "step_median_ms" => [Some(0.25), None],
            "ncon_median" => [Some(102.0), None],
            "error" => [None, Some("ImportError('pydrake')")]
        )
        .unwrap();
        let EngineRun::Measured(rows) = engine_steps(&df).unwrap() else {
            panic!("measured rows expected");
        };
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].engine, "mujoco");
        assert_eq!(rows[0].config, "mujoco 3.3.0 mj_newton_elliptic");
        assert!((rows[0].seconds_per_step_median - 2.5e-4).abs() < 1e-18);
        assert_eq!((rows[0].bodies, rows[0].error.as_str()), (40, ""));
        assert_eq!(rows[1].engine, "drake-sap");
        assert!(rows[1].error.contains("pydrake"));
        let skipped = df!("skipped" => ["CONTACTLAB_NO_PEERS is set"]).unwrap();
        assert_eq!(
            engine_steps(&skipped).unwrap(),
            EngineRun::Skipped("CONTACTLAB_NO_PEERS is set".into())
        );
    }
}

/// One clutter run (bodies, walls) with SAP as the driver and an interior point on the same
/// step problems.
#[derive(Debug, Clone, PartialEq)]
pub struct ClutterRow {
    /// Bodies.
    pub bodies: usize,
    /// With the container's walls.
    pub walls: bool,
    /// Steps simulated.
    pub steps: usize,
    /// Median contacts per step.
    pub contacts_median: f64,
    /// SAP's iterations per step: mean, mean over the second half (steady state), max.
    pub sap_iterations: [f64; 3],
    /// Steps where SAP's own status was not `converged`.
    pub sap_unconverged: usize,
    /// SAP's median seconds per solve (steps with contacts), its build left out.
    pub sap_seconds_median: f64,
    /// Median seconds of SAP's build per step (`A`'s restriction, the Hessian's pattern, the
    /// regularization), which the interior point shares and `sap_seconds_median` leaves out.
    pub build_seconds_median: f64,
    /// Median seconds of a whole step (scene, build and SAP).
    pub step_seconds_median: f64,
    /// The scene's share of the whole run's time (collision, assembly, advance).
    pub scene_share: f64,
    /// The interior point's median seconds per solve, and its mean iterations.
    pub ipm_seconds_median: f64,
    /// Interior-point iterations per step, mean.
    pub ipm_iterations_mean: f64,
    /// Steps where the interior point's own status was not `converged`.
    pub ipm_unconverged: usize,
    /// Median over steps of (interior-point seconds / SAP seconds), same step problem.
    pub speedup: f64,
    /// Largest `e_m` of SAP's and of the interior point's answers.
    pub e_m_max: [f64; 2],
    /// Mean and median `e_m` over steps with contacts, SAP's and the interior point's (Fig. 13).
    pub e_m_mean: [f64; 2],
    /// Median `e_m`, SAP's and the interior point's.
    pub e_m_median: [f64; 2],
    /// Mean and largest `e_mu` (eq. 33) of SAP (zero by construction: a check) and of the
    /// interior point (Fig. 13, bottom).
    pub e_mu_mean: [f64; 2],
    /// Largest `e_mu`, SAP's and the interior point's.
    pub e_mu_max: [f64; 2],
    /// Wall seconds of SAP alone over the run (sum of solves and scene time).
    pub sap_run_seconds: f64,
}

/// Rows of `df` (a clutter sweep with sweep columns `n_bodies` and `walls`) per
/// (bodies, walls), SAP labelled `sap` and the interior point `ipm`.
pub fn clutter_rows(
    df: &DataFrame,
    sap: &str,
    ipm: &str,
) -> Result<Vec<ClutterRow>, AnalysisError> {
    let bodies = f64s(df, "n_bodies")?;
    let walls = super::strs(df, "walls")?;
    let solver = super::strs(df, steps::SOLVER)?;
    let step = f64s(df, steps::STEP)?;
    let nc = f64s(df, steps::N_C)?;
    let it = f64s(df, steps::ITERATIONS)?;
    let secs = f64s(df, steps::SECONDS)?;
    let scene = f64s(df, steps::SCENE_SECONDS)?;
    // The formulation's build, part of `seconds` (absent from runs made before it was
    // recorded: zero there). SAP and the interior point share it, so solver-against-solver
    // numbers leave it out and the whole step keeps it.
    let build = f64s(df, steps::BUILD_SECONDS).unwrap_or_else(|_| vec![0.0; df.height()]);
    let solve: Vec<f64> = secs.iter().zip(&build).map(|(s, b)| s - b).collect();
    let e_m = f64s(df, "e_m")?;
    let e_mu = f64s(df, "e_mu")?;
    let status = super::strs(df, steps::SOLVER_STATUS)?;
    let mut keys: Vec<(usize, bool)> = bodies
        .iter()
        .zip(&walls)
        .map(|(b, w)| (*b as usize, w == "true"))
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (b, w) in keys {
        let rows = |label: &str| -> Vec<usize> {
            (0..df.height())
                .filter(|&k| {
                    bodies[k] as usize == b && (walls[k] == "true") == w && solver[k] == label
                })
                .collect()
        };
        let (s_rows, i_rows) = (rows(sap), rows(ipm));
        if s_rows.is_empty() {
            return Err(AnalysisError::MissingData(format!(
                "clutter: no `{sap}` rows for {b} bodies, walls {w}"
            )));
        }
        let active =
            |r: &[usize]| -> Vec<usize> { r.iter().copied().filter(|&k| nc[k] > 0.0).collect() };
        let (sa, ia) = (active(&s_rows), active(&i_rows));
        let pick = |v: &[f64], r: &[usize]| -> Vec<f64> { r.iter().map(|&k| v[k]).collect() };
        let mean = |v: &[f64]| {
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let max = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::max);
        let steps = s_rows.len();
        let half: Vec<usize> = sa
            .iter()
            .copied()
            .filter(|&k| step[k] as usize >= steps / 2)
            .collect();
        let sap_it = pick(&it, &sa);
        // Same step problem: pair SAP's and the interior point's solves by step.
        let by_step: std::collections::HashMap<u64, f64> =
            ia.iter().map(|&k| (step[k] as u64, solve[k])).collect();
        let ratios: Vec<f64> = sa
            .iter()
            .filter_map(|&k| Some(by_step.get(&(step[k] as u64))? / solve[k]))
            .collect();
        let whole: Vec<f64> = s_rows.iter().map(|&k| secs[k] + scene[k]).collect();
        let scene_total: f64 = pick(&scene, &s_rows).iter().sum();
        let solve_total: f64 = pick(&secs, &s_rows).iter().sum();
        out.push(ClutterRow {
            bodies: b,
            walls: w,
            steps,
            contacts_median: quantile(&pick(&nc, &s_rows), 0.5),
            sap_iterations: [mean(&sap_it), mean(&pick(&it, &half)), max(&sap_it)],
            sap_unconverged: sa.iter().filter(|&&k| status[k] != "converged").count(),
            sap_seconds_median: quantile(&pick(&solve, &sa), 0.5),
            build_seconds_median: quantile(&pick(&build, &sa), 0.5),
            step_seconds_median: quantile(&whole, 0.5),
            scene_share: scene_total / (scene_total + solve_total),
            ipm_seconds_median: quantile(&pick(&solve, &ia), 0.5),
            ipm_iterations_mean: mean(&pick(&it, &ia)),
            ipm_unconverged: ia.iter().filter(|&&k| status[k] != "converged").count(),
            speedup: quantile(&ratios, 0.5),
            e_m_max: [max(&pick(&e_m, &sa)), max(&pick(&e_m, &ia))],
            e_m_mean: [mean(&pick(&e_m, &sa)), mean(&pick(&e_m, &ia))],
            e_m_median: [
                quantile(&pick(&e_m, &sa), 0.5),
                quantile(&pick(&e_m, &ia), 0.5),
            ],
            e_mu_mean: [mean(&pick(&e_mu, &sa)), mean(&pick(&e_mu, &ia))],
            e_mu_max: [max(&pick(&e_mu, &sa)), max(&pick(&e_mu, &ia))],
            sap_run_seconds: scene_total + solve_total,
        });
    }
    Ok(out)
}

/// One iteration of a solver's history on one step (Fig. 10).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    /// The step.
    pub step: usize,
    /// Iteration (0: the start).
    pub iteration: u64,
    /// The cost.
    pub cost: f64,
    /// The optimality measure `|D grad l|` of eq. 26 (NaN where not recorded).
    pub optimality: f64,
    /// The line search's step length (NaN where not recorded).
    pub step_length: f64,
}

/// The run of a sweep whose keys take the given values, compared as text (`("n_bodies",
/// "40")`, `("walls", "true")`), from the steps DataFrame's `run` and sweep columns; `None`
/// when no run matches.
pub fn run_where(steps: &DataFrame, keys: &[(&str, &str)]) -> Result<Option<u64>, AnalysisError> {
    let run = f64s(steps, steps::RUN)?;
    let columns = keys
        .iter()
        .map(|(k, v)| Ok((super::strs(steps, k)?, *v)))
        .collect::<Result<Vec<_>, AnalysisError>>()?;
    Ok((0..steps.height())
        .find(|&i| columns.iter().all(|(c, v)| c[i] == *v))
        .map(|i| run[i] as u64))
}

/// `solver`'s per-iteration histories on the steps the config asked traces for
/// (`[output] traces_at`, rows with `why = "asked"`) in run `run`, from the run's traces
/// DataFrame (`<name>_traces.parquet`: `run`, `step`, `solver`, `why`, `iter`, `merit`,
/// `step_length` and SAP's `optimality`), in the frame's order (step by step, iterations
/// ascending): Fig. 10's convergence histories.
pub fn convergence_histories(
    traces: &DataFrame,
    run: u64,
    solver: &str,
) -> Result<Vec<HistoryPoint>, AnalysisError> {
    let runs = f64s(traces, traces::RUN)?;
    let step = f64s(traces, traces::STEP)?;
    let solvers = super::strs(traces, traces::SOLVER)?;
    let why = super::strs(traces, traces::WHY)?;
    let iter = f64s(traces, traces::ITER)?;
    let merit = f64s(traces, traces::MERIT)?;
    let step_length = f64s_or_nan(traces, traces::STEP_LENGTH)?;
    let optimality = f64s_or_nan(traces, "optimality")?;
    Ok((0..traces.height())
        .filter(|&k| runs[k] as u64 == run && solvers[k] == solver && why[k] == "asked")
        .map(|k| HistoryPoint {
            step: step[k] as usize,
            iteration: iter[k] as u64,
            cost: merit[k],
            optimality: optimality[k],
            step_length: step_length[k],
        })
        .collect())
}
