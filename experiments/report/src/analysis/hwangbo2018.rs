//! Statistics of the Hwangbo, Lee and Hutter 2018 reproduction (per-contact bisection), from
//! the runs' frames:
//!
//! - Table II and Fig. 4: seconds per 100k steps and iterations per task and solver
//!   ([`task_rows`], from the tasks run's steps);
//! - Fig. 6: how far the bisection's impulses (maximum dissipation, eq. 8) are from PGS's
//!   (Coulomb, eq. 6) on the same problems ([`model_differences`], from the model run's shadow
//!   rows);
//! - Fig. 7: the feet's penetration in the hang task (the scene's `foot_penetration`);
//! - Table I ([`method_timings`]) and the problem files ([`file_solves`]): the rows of their
//!   own runs (`kind = "single_contact"`: the methods timed on the tasks' slipping contacts;
//!   `kind = "problems"`: both drivers on the shipped files, each with its own law's
//!   violation), read as they are: the lab solved and timed, nothing here does;
//! - where PGS's time goes on the random task ([`RandomStats`]) and the tasks at 50 Hz
//!   ([`Dt50Task`]).

use contactlab_runs::schema::{problems, single_contact, steps};
use polars::prelude::DataFrame;

use super::{f64s, quantile, strs, AnalysisError};

/// One single-contact method timed on the tasks' slipping contacts (Table I): a row of the
/// `single_contact` run.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodTiming {
    /// The method's name in the config (`bisection`, `golden_section`, `analytical`).
    pub method: String,
    /// Samples timed (the same for every method).
    pub samples: usize,
    /// The median round's time per solve, microseconds.
    pub micros_median: f64,
    /// Largest `|r - r_ref| / |r_ref|` over the samples.
    pub max_error: f64,
    /// Largest `|r - r_ref|` over the samples (N s; the paper's interval is 1e-6).
    pub max_abs_error: f64,
    /// Mean inner steps per solve.
    pub mean_steps: f64,
    /// Of those, the mean evaluations spent finding the interval (NaN: no interval).
    pub mean_bracket_steps: f64,
    /// Share of samples whose interval took at most two evaluations (NaN: no interval).
    pub share_bracket_two: f64,
    /// Samples the method failed on.
    pub failures: usize,
}

/// Table I's rows, in the run's order (the config's methods).
pub fn method_timings(df: &DataFrame) -> Result<Vec<MethodTiming>, AnalysisError> {
    let method = strs(df, single_contact::METHOD)?;
    let samples = f64s(df, single_contact::SAMPLES)?;
    let us = f64s(df, single_contact::MICROS_MEDIAN)?;
    let error = f64s(df, single_contact::MAX_ERROR)?;
    let abs_error = f64s(df, single_contact::MAX_ABS_ERROR)?;
    let steps = f64s(df, single_contact::MEAN_STEPS)?;
    let bracket = f64s(df, single_contact::MEAN_BRACKET_STEPS)?;
    let two = f64s(df, single_contact::SHARE_BRACKET_TWO)?;
    let failures = f64s(df, single_contact::FAILURES)?;
    Ok((0..df.height())
        .map(|k| MethodTiming {
            method: method[k].clone(),
            samples: samples[k] as usize,
            micros_median: us[k],
            max_error: error[k],
            max_abs_error: abs_error[k],
            mean_steps: steps[k],
            mean_bracket_steps: bracket[k],
            share_bracket_two: two[k],
            failures: failures[k] as usize,
        })
        .collect())
}

/// One driver on one problem file: its own verdict and the shared Coulomb ruler's (a row of
/// the `problems` run).
#[derive(Debug, Clone, PartialEq)]
pub struct FileSolve {
    /// The file's name.
    pub file: String,
    /// Contacts.
    pub contacts: usize,
    /// The driver's label.
    pub solver: String,
    /// The driver's own status (its own test: the model's violation, or PGS's change).
    pub own_status: String,
    /// Sweeps.
    pub iterations: u64,
    /// The summed violation of the driver's own law at its answer (eq. 8 for the bisection,
    /// eq. 6 for PGS), as the bisection's stopping test measures it.
    pub own_violation: f64,
    /// The shared ruler: the Coulomb natural-map residual of the answer.
    pub coulomb_residual: f64,
}

/// The problem files' rows, in the run's order (files by name, solvers in the config's).
pub fn file_solves(df: &DataFrame) -> Result<Vec<FileSolve>, AnalysisError> {
    let file = strs(df, problems::PROBLEM)?;
    let contacts = f64s(df, problems::N_C)?;
    let solver = strs(df, problems::SOLVER)?;
    let status = strs(df, problems::SOLVER_STATUS)?;
    let iterations = f64s(df, problems::ITERATIONS)?;
    let own = f64s(df, problems::OWN_VIOLATION)?;
    let residual = f64s(df, problems::RESIDUAL)?;
    Ok((0..df.height())
        .map(|k| FileSolve {
            file: file[k].clone(),
            contacts: contacts[k] as usize,
            solver: solver[k].clone(),
            own_status: status[k].clone(),
            iterations: iterations[k] as u64,
            own_violation: own[k],
            coulomb_residual: residual[k],
        })
        .collect())
}

/// One (task, solver) of the tasks run (Table II, Fig. 4).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// The task.
    pub task: String,
    /// The solver's label.
    pub solver: String,
    /// Steps simulated.
    pub steps: usize,
    /// Whole-step seconds (scene and solver) per 100k steps.
    pub seconds_per_100k: f64,
    /// The solver's share of those seconds.
    pub solver_seconds_per_100k: f64,
    /// Iterations (sweeps) per step with contacts: mean and max.
    pub iterations_mean: f64,
    /// Largest iterations of a step.
    pub iterations_max: f64,
    /// Steps whose solve did not converge by the driver's own test.
    pub unconverged: usize,
    /// Iterations of every step with contacts (Fig. 4's histogram).
    pub iterations: Vec<f64>,
}

/// Per (task, solver) of a tasks frame whose sweep column `task` names the task and whose
/// drivers each advance their own copy of the scene.
pub fn task_rows(df: &DataFrame) -> Result<Vec<TaskRow>, AnalysisError> {
    let task = strs(df, "task")?;
    let solver = strs(df, steps::SOLVER)?;
    let nc = f64s(df, steps::N_C)?;
    let it = f64s(df, steps::ITERATIONS)?;
    let secs = f64s(df, steps::SECONDS)?;
    let scene = f64s(df, steps::SCENE_SECONDS)?;
    let status = strs(df, steps::SOLVER_STATUS)?;
    let mut keys: Vec<(String, String)> =
        task.iter().cloned().zip(solver.iter().cloned()).collect();
    keys.sort();
    keys.dedup();
    Ok(keys
        .into_iter()
        .map(|(t, s)| {
            let rows: Vec<usize> = (0..df.height())
                .filter(|&k| task[k] == t && solver[k] == s)
                .collect();
            let active: Vec<usize> = rows.iter().copied().filter(|&k| nc[k] > 0.0).collect();
            let iterations: Vec<f64> = active.iter().map(|&k| it[k]).collect();
            let n = rows.len().max(1) as f64;
            let solve: f64 = rows.iter().map(|&k| secs[k]).sum();
            let whole: f64 = solve + rows.iter().map(|&k| scene[k]).sum::<f64>();
            TaskRow {
                steps: rows.len(),
                seconds_per_100k: whole / n * 1e5,
                solver_seconds_per_100k: solve / n * 1e5,
                iterations_mean: iterations.iter().sum::<f64>() / iterations.len().max(1) as f64,
                iterations_max: iterations.iter().copied().fold(0.0, f64::max),
                unconverged: active.iter().filter(|&&k| status[k] != "converged").count(),
                iterations,
                task: t,
                solver: s,
            }
        })
        .collect())
}

/// One task's comparison of a shadow solver with the driver on the same steps (Fig. 6).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelDifference {
    /// The task.
    pub task: String,
    /// Per step with contacts, `|r_b - r_s| / |r_s|` (the shadow rows' `distance_to_driver`).
    pub distances: Vec<f64>,
    /// Per step with contacts, `max |u_b - u_s|` (m/s; `velocity_gap_to_driver`).
    pub velocity_gaps: Vec<f64>,
    /// Per step with contacts, whether a contact slips in the driver's or the shadow's answer
    /// (where none does, the two laws coincide and only the solvers' accuracy is measured).
    pub slipping: Vec<bool>,
}

/// Fig. 6: per task, how far the shadow labelled `shadow` (PGS, say) is from the driver (the
/// bisection) on the steps with contacts, in impulses and in contact velocities. Empty when
/// the run has no such shadow.
pub fn model_differences(
    df: &DataFrame,
    shadow: &str,
) -> Result<Vec<ModelDifference>, AnalysisError> {
    let task = strs(df, "task")?;
    let role = strs(df, steps::ROLE)?;
    let solver = strs(df, steps::SOLVER)?;
    let run = f64s(df, steps::RUN)?;
    let step = f64s(df, steps::STEP)?;
    let nc = f64s(df, steps::N_C)?;
    let slipping = f64s(df, "slipping_contacts")?;
    let d = f64s(df, steps::DISTANCE_TO_DRIVER)?;
    let gap = f64s(df, steps::VELOCITY_GAP_TO_DRIVER)?;
    // The driver's slipping count per (run, step), to pair with each shadow row.
    let driver_slips: std::collections::HashMap<(u64, u64), f64> = (0..df.height())
        .filter(|&k| role[k] == steps::ROLE_DRIVER)
        .map(|k| ((run[k].to_bits(), step[k].to_bits()), slipping[k]))
        .collect();
    let mut tasks: Vec<String> = task.clone();
    tasks.sort();
    tasks.dedup();
    Ok(tasks
        .into_iter()
        .map(|t| {
            let rows: Vec<usize> = (0..df.height())
                .filter(|&k| task[k] == t && role[k] == steps::ROLE_SHADOW && solver[k] == shadow)
                .filter(|&k| nc[k] > 0.0 && d[k].is_finite() && gap[k].is_finite())
                .collect();
            ModelDifference {
                distances: rows.iter().map(|&k| d[k]).collect(),
                velocity_gaps: rows.iter().map(|&k| gap[k]).collect(),
                slipping: rows
                    .iter()
                    .map(|&k| {
                        let driver = driver_slips
                            .get(&(run[k].to_bits(), step[k].to_bits()))
                            .copied()
                            .unwrap_or(f64::NAN);
                        // A step whose driver row is missing counts as slipping: never claimed
                        // to be a step where the laws coincide.
                        slipping[k] > 0.0 || driver.is_nan() || driver > 0.0
                    })
                    .collect(),
                task: t,
            }
        })
        .filter(|m| !m.distances.is_empty())
        .collect())
}

/// The columns of a tasks frame that the random-cost table reads.
#[derive(Debug)]
pub struct RandomCols {
    /// The sweep's task per row.
    pub task: Vec<String>,
    /// The solver's label per row.
    pub solver: Vec<String>,
    /// The solver's seconds.
    pub secs: Vec<f64>,
    /// The scene's seconds (detection, dynamics, integration).
    pub scene: Vec<f64>,
    /// Sweeps of the solve.
    pub iterations: Vec<f64>,
    /// Contacts.
    pub n_c: Vec<f64>,
    /// Contacts of the torso's corners.
    pub torso: Vec<f64>,
    /// The scalar diagonal dominance of `W`.
    pub dominance: Vec<f64>,
    /// The base's height (m).
    pub height: Vec<f64>,
    /// Slipping contacts.
    pub slipping: Vec<f64>,
    /// The driver's own status.
    pub status: Vec<String>,
}

impl RandomCols {
    /// The columns of `df`.
    pub fn of(df: &DataFrame) -> Result<RandomCols, AnalysisError> {
        Ok(RandomCols {
            task: strs(df, "task")?,
            solver: strs(df, steps::SOLVER)?,
            secs: f64s(df, steps::SECONDS)?,
            scene: f64s(df, steps::SCENE_SECONDS)?,
            iterations: f64s(df, steps::ITERATIONS)?,
            n_c: f64s(df, steps::N_C)?,
            torso: f64s(df, "torso_contacts")?,
            dominance: f64s(df, "delassus_row_dominance")?,
            height: f64s(df, "base_height")?,
            slipping: f64s(df, "slipping_contacts")?,
            status: strs(df, steps::SOLVER_STATUS)?,
        })
    }

    /// Whether step `k` stopped at the sweep cap.
    pub fn capped(&self, k: usize) -> bool {
        self.status[k] == "max_iterations"
    }

    /// The mean sweeps of the steps of `set` that did not reach the cap (NaN for none).
    pub fn sweeps(&self, set: &[usize]) -> f64 {
        let v: Vec<f64> = set
            .iter()
            .filter(|&&k| !self.capped(k))
            .map(|&k| self.iterations[k])
            .collect();
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    }

    /// The median of `v` over the steps of `set`.
    pub fn median(set: &[usize], v: &[f64]) -> f64 {
        quantile(&set.iter().map(|&k| v[k]).collect::<Vec<_>>(), 0.5)
    }
}

/// One solver's steps of the random task in one run, as the random-cost table shows them.
#[derive(Debug, Clone)]
pub struct RandomStats {
    /// Steps with contacts.
    pub steps: usize,
    /// Of which with a torso corner on the ground.
    pub torso_steps: usize,
    /// Mean sweeps off the cap, torso steps.
    pub sweeps_torso: f64,
    /// Mean sweeps off the cap, feet-only steps.
    pub sweeps_feet: f64,
    /// The solver time's share on torso steps.
    pub share_torso: f64,
    /// Steps at the sweep cap.
    pub capped: usize,
    /// The solver time's share at the cap.
    pub share_capped: f64,
    /// Whole-step seconds per 100k steps (NaN for a shadow).
    pub s100k: f64,
    /// Solver seconds per 100k steps.
    pub solver_s100k: f64,
    /// Whole-step seconds per 100k steps off the cap (NaN for a shadow).
    pub s100k_uncapped: f64,
    /// Solver seconds per 100k steps off the cap.
    pub solver_s100k_uncapped: f64,
    /// Median scalar dominance at the cap.
    pub dominance_capped: f64,
    /// Median scalar dominance, all steps with contacts.
    pub dominance_all: f64,
    /// Median contacts at the cap.
    pub contacts_capped: f64,
    /// Median slipping contacts at the cap.
    pub slipping_capped: f64,
    /// Median base height at the cap (m).
    pub height_capped: f64,
    /// Median base height, all steps with contacts (m).
    pub height_all: f64,
}

impl RandomStats {
    /// The statistics of `solver` on the random task of `c`, whose task row is `row`; a
    /// `shadowing` run's rows carry no scene time (only its solver time is comparable).
    pub fn of(c: &RandomCols, solver: &str, row: Option<&TaskRow>, shadowing: bool) -> RandomStats {
        let all: Vec<usize> = (0..c.task.len())
            .filter(|&k| c.task[k] == "random" && c.solver[k] == solver)
            .collect();
        let ks: Vec<usize> = all.iter().copied().filter(|&k| c.n_c[k] > 0.0).collect();
        let on_torso: Vec<usize> = ks.iter().copied().filter(|&k| c.torso[k] > 0.0).collect();
        let feet_only: Vec<usize> = ks.iter().copied().filter(|&k| c.torso[k] == 0.0).collect();
        let capped: Vec<usize> = ks.iter().copied().filter(|&k| c.capped(k)).collect();
        let total: f64 = ks.iter().map(|&k| c.secs[k]).sum();
        // `+ 0.0` turns the empty sum's -0.0 into 0.
        let share = |set: &[usize]| set.iter().map(|&k| c.secs[k]).sum::<f64>() / total + 0.0;
        let (s100k, solver_s100k) = row.map_or((f64::NAN, f64::NAN), |x| {
            let whole = if shadowing {
                f64::NAN
            } else {
                x.seconds_per_100k
            };
            (whole, x.solver_seconds_per_100k)
        });
        // Seconds per 100k without the capped steps.
        let uncapped: Vec<usize> = all.iter().copied().filter(|&k| !c.capped(k)).collect();
        let per_100k = |f: &dyn Fn(usize) -> f64| {
            uncapped.iter().map(|&k| f(k)).sum::<f64>() / uncapped.len().max(1) as f64 * 1e5
        };
        let s100k_uncapped = if shadowing {
            f64::NAN
        } else {
            per_100k(&|k| c.secs[k] + c.scene[k])
        };
        let median = RandomCols::median;
        RandomStats {
            steps: ks.len(),
            torso_steps: on_torso.len(),
            sweeps_torso: c.sweeps(&on_torso),
            sweeps_feet: c.sweeps(&feet_only),
            share_torso: share(&on_torso),
            capped: capped.len(),
            share_capped: share(&capped),
            s100k,
            solver_s100k,
            s100k_uncapped,
            solver_s100k_uncapped: per_100k(&|k| c.secs[k]),
            dominance_capped: median(&capped, &c.dominance),
            dominance_all: median(&ks, &c.dominance),
            contacts_capped: median(&capped, &c.n_c),
            slipping_capped: median(&capped, &c.slipping),
            height_capped: median(&capped, &c.height),
            height_all: median(&ks, &c.height),
        }
    }
}

/// A kinetic energy no run of the robot reaches unless it has blown up (J; 35 kg at 24 m/s).
pub const BLOW_UP_JOULES: f64 = 1e4;

/// The columns of the 50 Hz run that the 50 Hz table reads.
#[derive(Debug)]
pub struct Dt50Cols {
    /// The sweep's task per row.
    pub task: Vec<String>,
    /// The step's status (`diverged`).
    pub status: Vec<String>,
    /// The deepest penetration (m).
    pub pen: Vec<f64>,
    /// The feet's mean penetration (m).
    pub foot: Vec<f64>,
    /// The base's height (m).
    pub z: Vec<f64>,
    /// The base's forward position (m).
    pub x: Vec<f64>,
    /// Kinetic energy (J).
    pub ke: Vec<f64>,
    /// Contacts.
    pub n_c: Vec<f64>,
}

impl Dt50Cols {
    /// The columns of `df`.
    pub fn of(df: &DataFrame) -> Result<Dt50Cols, AnalysisError> {
        Ok(Dt50Cols {
            task: strs(df, "task")?,
            status: strs(df, steps::STATUS)?,
            pen: f64s(df, "max_penetration")?,
            foot: f64s(df, "foot_penetration")?,
            z: f64s(df, "base_height")?,
            x: f64s(df, "base_x")?,
            ke: f64s(df, "kinetic_energy")?,
            n_c: f64s(df, steps::N_C)?,
        })
    }
}

/// One task at 50 Hz: how far it ran and, when it did not diverge, its magnitudes.
#[derive(Debug, Clone)]
pub struct Dt50Task {
    /// Steps run.
    pub steps: usize,
    /// Diverged steps.
    pub diverged: usize,
    /// Steps with a non-finite observable.
    pub non_finite: usize,
    /// When the run diverged (s; NaN when it did not).
    pub diverged_at: f64,
    /// The most contacts of a step before the energy passed [`BLOW_UP_JOULES`].
    pub contacts_before: f64,
    /// The deepest penetration (mm; NaN for a diverged run).
    pub max_pen: f64,
    /// The feet's largest mean penetration (mm).
    pub max_foot: f64,
    /// The lowest base height (m).
    pub min_z: f64,
    /// The largest kinetic energy (J).
    pub max_ke: f64,
    /// The mean forward speed (m/s).
    pub speed: f64,
}

impl Dt50Task {
    /// Task `name` of `c`, run at step `dt`.
    pub fn of(c: &Dt50Cols, name: &str, dt: f64) -> Dt50Task {
        let all: Vec<usize> = (0..c.task.len()).filter(|&k| c.task[k] == name).collect();
        let diverged = all.iter().filter(|&&k| c.status[k] == "diverged").count();
        let non_finite = all
            .iter()
            .filter(|&&k| {
                ![c.pen[k], c.foot[k], c.z[k], c.x[k], c.ke[k]]
                    .iter()
                    .all(|v| v.is_finite())
            })
            .count();
        let bad = diverged + non_finite > 0;
        // A run that diverged: when, and the most contacts of any step before its kinetic
        // energy first passed BLOW_UP_JOULES (none: the controller blew up in the air, before
        // the contact solver had anything to do); its magnitudes are left out.
        let (diverged_at, contacts_before) = if bad {
            let blow_up = all
                .iter()
                .position(|&k| c.ke[k].is_nan() || c.ke[k] >= BLOW_UP_JOULES)
                .unwrap_or(all.len());
            (
                all.len() as f64 * dt,
                all[..blow_up].iter().map(|&k| c.n_c[k]).fold(0.0, f64::max),
            )
        } else {
            (f64::NAN, f64::NAN)
        };
        let ks: &[usize] = if bad { &[] } else { &all };
        let fold = |v: &[f64], scale: f64, f: fn(f64, f64) -> f64| {
            ks.iter().map(|&k| scale * v[k]).fold(f64::NAN, f)
        };
        let speed = match (ks.first(), ks.last()) {
            (Some(&a), Some(&b)) if b > a => (c.x[b] - c.x[a]) / ((b - a) as f64 * dt),
            _ => f64::NAN,
        };
        Dt50Task {
            steps: all.len(),
            diverged,
            non_finite,
            diverged_at,
            contacts_before,
            max_pen: fold(&c.pen, 1e3, f64::max),
            max_foot: fold(&c.foot, 1e3, f64::max),
            min_z: fold(&c.z, 1.0, f64::min),
            max_ke: fold(&c.ke, 1.0, f64::max),
            speed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::df;

    #[test]
    fn task_rows_scale_to_100k_steps_and_keep_the_iterations() {
        let df = df!(
            "task" => ["hang", "hang", "hang", "drop"],
            "solver" => ["b", "b", "b", "b"],
            "n_c" => [0i64, 4, 4, 2],
            "iterations" => [0i64, 3, 5, 7],
            "seconds" => [0.0, 2e-6, 4e-6, 1e-6],
            "scene_seconds" => [1e-5, 1e-5, 1e-5, 2e-5],
            "solver_status" => ["no_contacts", "converged", "max_iterations", "converged"]
        )
        .unwrap();
        let rows = task_rows(&df).unwrap();
        assert_eq!(rows.len(), 2);
        let hang = rows.iter().find(|r| r.task == "hang").unwrap();
        assert_eq!(hang.steps, 3);
        assert!((hang.seconds_per_100k - (3e-5 + 6e-6) / 3.0 * 1e5).abs() < 1e-12);
        assert!((hang.solver_seconds_per_100k - 0.2).abs() < 1e-12);
        assert_eq!((hang.iterations_mean, hang.iterations_max), (4.0, 5.0));
        assert_eq!(hang.unconverged, 1);
        assert_eq!(hang.iterations, vec![3.0, 5.0]);
    }

    #[test]
    fn table_one_and_the_files_read_their_runs_rows() {
        let t1 = df!(
            "method" => ["bisection", "analytical"],
            "samples" => [40u64, 40],
            "rounds" => [3u64, 3],
            "micros_median" => [0.5, 1.5],
            "max_error" => [1e-3, 1e-9],
            "max_abs_error" => [4e-7, 2e-9],
            "mean_steps" => [17.5, 12.0],
            "mean_bracket_steps" => [4.3, f64::NAN],
            "share_bracket_two" => [0.1, f64::NAN],
            "failures" => [0u64, 1]
        )
        .unwrap();
        let m = method_timings(&t1).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].mean_bracket_steps, m[0].share_bracket_two),
            (4.3, 0.1)
        );
        assert!(m[1].mean_bracket_steps.is_nan());
        assert_eq!(
            (m[1].method.as_str(), m[1].samples, m[1].failures),
            ("analytical", 40, 1)
        );
        assert_eq!((m[0].micros_median, m[0].mean_steps), (0.5, 17.5));
        let files = df!(
            "problem" => ["a.hdf5", "a.hdf5"],
            "n_c" => [3u64, 3],
            "solver" => ["bisection-sor", "pgs"],
            "solver_status" => ["converged", "max_iterations"],
            "iterations" => [4u64, 50000],
            "own_violation" => [1e-7, 2e-6],
            "residual" => [3e-3, 1e-6]
        )
        .unwrap();
        let f = file_solves(&files).unwrap();
        assert_eq!(f[1].solver, "pgs");
        assert_eq!(
            (f[1].own_status.as_str(), f[1].iterations),
            ("max_iterations", 50000)
        );
        assert_eq!((f[0].contacts, f[0].coulomb_residual), (3, 3e-3));
        assert!(
            method_timings(&files).is_err(),
            "a frame without the columns is refused"
        );
    }
}
