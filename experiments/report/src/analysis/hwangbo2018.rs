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
//!   violation), read as they are: the lab solved and timed, nothing here does.

use polars::prelude::DataFrame;

use super::{f64s, strs, AnalysisError};

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
    let method = strs(df, "method")?;
    let samples = f64s(df, "samples")?;
    let us = f64s(df, "micros_median")?;
    let error = f64s(df, "max_error")?;
    let abs_error = f64s(df, "max_abs_error")?;
    let steps = f64s(df, "mean_steps")?;
    let bracket = f64s(df, "mean_bracket_steps")?;
    let two = f64s(df, "share_bracket_two")?;
    let failures = f64s(df, "failures")?;
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
    let file = strs(df, "problem")?;
    let contacts = f64s(df, "n_c")?;
    let solver = strs(df, "solver")?;
    let status = strs(df, "solver_status")?;
    let iterations = f64s(df, "iterations")?;
    let own = f64s(df, "own_violation")?;
    let residual = f64s(df, "residual")?;
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
    let solver = strs(df, "solver")?;
    let nc = f64s(df, "n_c")?;
    let it = f64s(df, "iterations")?;
    let secs = f64s(df, "seconds")?;
    let scene = f64s(df, "scene_seconds")?;
    let status = strs(df, "solver_status")?;
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
    let role = strs(df, "role")?;
    let solver = strs(df, "solver")?;
    let run = f64s(df, "run")?;
    let step = f64s(df, "step")?;
    let nc = f64s(df, "n_c")?;
    let slipping = f64s(df, "slipping_contacts")?;
    let d = f64s(df, "distance_to_driver")?;
    let gap = f64s(df, "velocity_gap_to_driver")?;
    // The driver's slipping count per (run, step), to pair with each shadow row.
    let driver_slips: std::collections::HashMap<(u64, u64), f64> = (0..df.height())
        .filter(|&k| role[k] == "driver")
        .map(|k| ((run[k].to_bits(), step[k].to_bits()), slipping[k]))
        .collect();
    let mut tasks: Vec<String> = task.clone();
    tasks.sort();
    tasks.dedup();
    Ok(tasks
        .into_iter()
        .map(|t| {
            let rows: Vec<usize> = (0..df.height())
                .filter(|&k| task[k] == t && role[k] == "shadow" && solver[k] == shadow)
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
