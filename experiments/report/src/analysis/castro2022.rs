//! Statistics for the Castro, Permenter and Han 2022 (SAP) report.
//!
//! * [`sphere_glide`]: Mylapilli and Jain's sliding sphere run with SAP. The convex relaxation
//!   couples slip into the normal direction: while sliding, the contact behaves as if its
//!   distance were `phi_eff = phi - (dt + tau_d) mu |v_t|` (sec. V-A), so a sliding sphere
//!   glides at a height `(dt + tau_d) mu |v_t|` above the plane (sec. VII, "Convex
//!   approximation"); the rigid contact here has `tau_d = 0`. Measured: the initial hop, and
//!   the glide height over `dt mu |slip|` while sliding.
//! * [`mujoco_set`]: the generalized problems exported from MuJoCo (`data/mujoco/global/`)
//!   solved by SAP (`newton-merit`, `lbfgs`) and Clarabel on SAP's primal, with iterations,
//!   times, `e_m` (eq. 32), and the distance of SAP's impulses to MuJoCo's (both regularised,
//!   differently) and, with MuJoCo's own regulariser, to within MuJoCo's accuracy.
//! * [`clutter_rows`] and [`histories`]: clutter (sec. VI-C, Figs. 9-12).
//! * [`spring`]: the spring-cylinder (sec. VI-B): orders of accuracy and energy (Figs. 5-7),
//!   re-exported here.

pub mod spring;

pub use spring::*;

use std::path::{Path, PathBuf};

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::{Problem, StepProblem};
use contactlab_formulations::castro::{ContactRegularization, SapCost};
use polars::prelude::DataFrame;

use super::{f64s, quantile, AnalysisError};
use contactlab_lab::registry::{solve_spec, PluginChoice, SolverSpec};

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
    let nc = f64s(df, "n_c")?;
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
    /// The driver's own status.
    pub status: String,
    /// Iterations.
    pub iterations: u64,
    /// Median seconds over the repeats.
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
    /// The solvers with SAP's own (physical) regularisation.
    pub solves: Vec<SetSolve>,
}

/// The solvers run on the MuJoCo set, each on the whole problem (islands off): SAP's
/// Algorithm 2, L-BFGS on SAP's cost, and Clarabel on SAP's primal with its default tolerances
/// (`1e-8`), measured at its own primal pair.
pub fn mujoco_set_solvers() -> Vec<SolverSpec> {
    let mut newton = SolverSpec::new("sap", "newton-merit", 1e-12, 100);
    newton.label = Some("SAP".into());
    newton.rel_tol = 1e-8;
    let mut lbfgs = SolverSpec::new("sap", "lbfgs", 1e-12, 2000);
    lbfgs.label = Some("SAP-LBFGS".into());
    lbfgs.rel_tol = 1e-5;
    let mut ipm = SolverSpec::new("sap", "clarabel", 1e-12, 200);
    ipm.label = Some("Clarabel".into());
    ipm.optimizer = PluginChoice::named("clarabel");
    let mut specs = vec![newton, lbfgs, ipm];
    // Whole problems, as the paper (and Drake) solve a step, like the clutter config: per
    // island L-BFGS converges on more of the set, which is the islands' merit, not SAP's.
    for s in &mut specs {
        s.islands = false;
    }
    specs
}

fn sidecar(path: &Path) -> Result<serde_json::Value, AnalysisError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AnalysisError::MissingData(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| AnalysisError::MissingData(format!("{}: {e}", path.display())))
}

fn numbers(v: &serde_json::Value, key: &str, path: &Path) -> Result<Vec<f64>, AnalysisError> {
    v[key]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
        .ok_or_else(|| AnalysisError::MissingData(format!("{}: no array `{key}`", path.display())))
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

/// SAP with MuJoCo's regulariser `R` and `v^ = v_ref` (MuJoCo's own problem, SAP's dual
/// eq. 22): its largest impulse error against MuJoCo's `r`, and MuJoCo's accuracy bound.
fn oracle(
    g: &GeneralizedProblem,
    side: &serde_json::Value,
    path: &Path,
) -> Result<(f64, f64), AnalysisError> {
    let rr = numbers(side, "regulariser_R", path)?;
    let v_ref = numbers(side, "v_ref", path)?;
    let r_mj = numbers(side, "r", path)?;
    if rr.len() != 3 * g.num_contacts() || v_ref.len() != rr.len() || r_mj.len() != rr.len() {
        return Err(AnalysisError::MissingData(format!(
            "{}: sidecar sizes disagree with the problem's {} contacts",
            path.display(),
            g.num_contacts()
        )));
    }
    let regs = (0..g.num_contacts())
        .map(|i| ContactRegularization {
            mu: g.contacts[i].mu,
            rn: rr[3 * i],
            rt: rr[3 * i + 1],
        })
        .collect();
    let cost = SapCost::new(g, regs, &v_ref);
    let opts = contactlab_core::SolveOptions {
        tol: 1e-13,
        max_iter: 100,
        ..Default::default()
    };
    let s = contactlab_core::drivers::solve_merit(
        &cost,
        contactlab_core::drivers::NewtonMerit::default(),
        cost.v_star().to_vec(),
        &opts,
    )
    .map_err(|e| AnalysisError::MissingData(format!("{}: oracle solve: {e}", path.display())))?;
    let err = max_diff(&cost.impulses(&s.x), &r_mj);
    let acc = side["checks"]["abs_residual_inf"]
        .as_f64()
        .unwrap_or(f64::NAN);
    let r_min = rr.iter().copied().fold(f64::INFINITY, f64::min);
    Ok((err, (r_mj.len() as f64).sqrt() * acc / r_min))
}

/// Every problem of `dir/global/*.json` with its sidecar `dir/mujoco/<name>.json`, solved by
/// `solvers` (each `repeats` times for the median time), in file-name order.
pub fn mujoco_set(
    dir: &Path,
    solvers: &[SolverSpec],
    repeats: usize,
) -> Result<Vec<SetProblem>, AnalysisError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("global"))
        .map_err(|e| AnalysisError::MissingData(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let side_path = dir.join("mujoco").join(format!("{name}.json"));
        let side = sidecar(&side_path)?;
        let bad = |e: &dyn std::fmt::Display| {
            AnalysisError::MissingData(format!("{}: {e}", file.display()))
        };
        let Problem::Global(global) =
            contactlab_core::io::read_problem(&file).map_err(|e| bad(&e))?
        else {
            return Err(bad(&"not a global problem"));
        };
        let g = GeneralizedProblem::from_global(&global).map_err(|e| bad(&e))?;
        let (oracle_error, oracle_bound) = oracle(&g, &side, &side_path)?;
        let r_mj = numbers(&side, "r", &side_path)?;
        let step = StepProblem::from(g.clone());
        let mut solves = Vec::new();
        for spec in solvers {
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..repeats.max(1) {
                let s = solve_spec(&step, spec, None).map_err(|e| bad(&e))?;
                times.push(s.seconds);
                last = Some(s);
            }
            let Some(s) = last else { continue };
            solves.push(SetSolve {
                solver: spec.name(),
                status: s.solver_status.as_str().to_string(),
                iterations: s.iterations,
                seconds: quantile(&times, 0.5),
                e_m: s.diagnostics.get("e_m").copied().unwrap_or(f64::NAN),
                distance_to_mujoco: max_diff(&s.r, &r_mj) / max_abs(&r_mj).max(f64::MIN_POSITIVE),
            });
        }
        out.push(SetProblem {
            name,
            contacts: g.num_contacts(),
            dofs: g.num_dofs(),
            mujoco_iterations: side["solver_iterations"]
                .as_array()
                .and_then(|a| a.last())
                .and_then(serde_json::Value::as_f64)
                .or_else(|| side["solver_iterations"].as_f64())
                .unwrap_or(f64::NAN),
            oracle_error,
            oracle_bound,
            solves,
        });
    }
    Ok(out)
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
    fn histories_keep_the_asked_steps_with_a_decreasing_cost() {
        let spec = SolverSpec::new("sap", "newton-merit", 1e-12, 100);
        let h = histories(
            contactlab_scenes::SceneKind::SphereOnPlane,
            &toml::Table::new(),
            &spec,
            &[0, 2],
        )
        .unwrap();
        for step in [0, 2] {
            let pts: Vec<&HistoryPoint> = h.iter().filter(|p| p.step == step).collect();
            assert!(pts.len() >= 2, "step {step}: {pts:?}");
            assert_eq!(pts[0].iteration, 0);
            assert!(pts
                .windows(2)
                .all(|w| w[1].cost <= w[0].cost + 1e-12 * w[0].cost.abs()));
            assert!(pts.last().unwrap().optimality <= 1e-12);
        }
        assert!(h.iter().all(|p| p.step == 0 || p.step == 2));
    }

    #[test]
    fn the_mujoco_set_in_the_repository_is_solved_and_matches_the_oracle() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/mujoco");
        let mut newton = SolverSpec::new("sap", "newton-merit", 1e-12, 100);
        newton.rel_tol = 1e-8;
        let rows = mujoco_set(&dir, &[newton], 1).unwrap();
        assert!(rows.len() >= 4);
        for p in &rows {
            assert!(p.oracle_error <= p.oracle_bound, "{}", p.name);
            let s = &p.solves[0];
            assert_eq!(s.status, "converged", "{}", p.name);
            assert!(s.e_m < 1e-7, "{}: {}", p.name, s.e_m);
            // SAP's own regularisation is not MuJoCo's: close, not equal.
            assert!(s.distance_to_mujoco < 1.0, "{}", p.name);
        }
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
    let solver = super::strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let nc = f64s(df, "n_c")?;
    let it = f64s(df, "iterations")?;
    let secs = f64s(df, "seconds")?;
    let scene = f64s(df, "scene_seconds")?;
    // The formulation's build, part of `seconds` (absent from runs made before it was
    // recorded: zero there). SAP and the interior point share it, so solver-against-solver
    // numbers leave it out and the whole step keeps it.
    let build = f64s(df, "build_seconds").unwrap_or_else(|_| vec![0.0; df.height()]);
    let solve: Vec<f64> = secs.iter().zip(&build).map(|(s, b)| s - b).collect();
    let e_m = f64s(df, "e_m")?;
    let e_mu = f64s(df, "e_mu")?;
    let status = super::strs(df, "solver_status")?;
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
    /// The optimality measure `|D grad l|` of eq. 26 (NaN at the start when not recorded).
    pub optimality: f64,
    /// The line search's step length.
    pub step_length: f64,
}

/// Simulates `kind` with `params` for `max(at) + 1` steps, `spec` advancing it, and keeps the
/// solver's per-iteration history at the steps `at` (Fig. 10's convergence histories).
pub fn histories(
    kind: contactlab_scenes::SceneKind,
    params: &toml::Table,
    spec: &SolverSpec,
    at: &[usize],
) -> Result<Vec<HistoryPoint>, AnalysisError> {
    let last = at.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    super::resimulate("histories", kind, params, spec, last + 1, |step, _, s| {
        if at.contains(&step) {
            out.extend(s.solution.trace.rows.iter().map(|row| HistoryPoint {
                step,
                iteration: row.iter,
                cost: row.merit,
                optimality: row.extra.get("optimality").copied().unwrap_or(f64::NAN),
                step_length: row.step_length,
            }));
        }
        Ok(())
    })?;
    Ok(out)
}
