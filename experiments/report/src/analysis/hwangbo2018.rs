//! Statistics of the Hwangbo, Lee and Hutter 2018 reproduction (per-contact bisection):
//!
//! - Table I: the slipping contacts the four tasks meet ([`slipping_samples`]), and every
//!   single-contact method timed on the very same samples in interleaved batches
//!   ([`time_methods`]), with its error against the independent reference (scan + Newton);
//! - Table II and Fig. 4: seconds per 100k steps and iterations per task and solver
//!   ([`task_rows`], from the runner's frames);
//! - Fig. 6: how far the bisection's impulses (maximum dissipation, eq. 8) are from PGS's
//!   (Coulomb, eq. 6) on the same problems ([`model_differences`]);
//! - Fig. 7: the feet's penetration in the hang task (the scene's `foot_penetration`).

use std::hint::black_box;
use std::time::Instant;

use contactlab_core::drivers::sweep::{contact_violation, FrictionModel};
use contactlab_formulations::hwangbo::{
    classify, solve_contact, Analytical, Bisection, Case, GoldenSection, Reference, SlipMethod,
};
use nalgebra::{Matrix3, Vector3};
use polars::prelude::DataFrame;

use super::{f64s, quantile, strs, AnalysisError};
use contactlab_lab::registry::SolverSpec;
use contactlab_scenes::SceneKind;

/// One slipping contact as its solver sees it: the block `W_aa`, the free velocity
/// `c_a = u_a - W_aa r_a` (the other contacts' impulses included) and `mu`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlipSample {
    /// `W_aa` (normal first).
    pub w: Matrix3<f64>,
    /// `c_a`.
    pub c: Vector3<f64>,
    /// Friction coefficient.
    pub mu: f64,
}

fn bad(what: String) -> AnalysisError {
    AnalysisError::MissingData(format!("hwangbo2018: {what}"))
}

/// Simulates the quadruped with `params` for `steps` steps, `spec` advancing it, and keeps the
/// contacts that slip at the answer of each step (by [`classify`] at `c_a`), at most `keep`
/// of them, spread evenly over the run.
pub fn slipping_samples(
    params: &toml::Table,
    spec: &SolverSpec,
    steps: usize,
    keep: usize,
) -> Result<Vec<SlipSample>, AnalysisError> {
    let mut all = Vec::new();
    super::resimulate(
        "hwangbo2018",
        SceneKind::Quadruped,
        params,
        spec,
        steps,
        |_, cs, s| {
            let local = cs.problem.local().map_err(|e| bad(e.to_string()))?;
            for a in 0..local.num_contacts() {
                let w = local.w.block3(a, a);
                let at = |v: &[f64]| Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2]);
                let c = at(&s.u) - w * at(&s.r);
                let mu = local.mu[a];
                if matches!(classify(&w, &c, mu), Ok(Case::Slipping(_))) {
                    all.push(SlipSample { w, c, mu });
                }
            }
            Ok(())
        },
    )?;
    if all.len() <= keep {
        return Ok(all);
    }
    let stride = all.len() as f64 / keep as f64;
    Ok((0..keep)
        .map(|k| all[(k as f64 * stride) as usize])
        .collect())
}

/// One single-contact method timed on the samples (Table I).
#[derive(Debug, Clone, PartialEq)]
pub struct MethodTiming {
    /// `bisection`, `golden_section` or `analytical`.
    pub method: &'static str,
    /// Median over the repeats of (batch time / samples), microseconds.
    pub micros_median: f64,
    /// Largest `|r - r_ref| / |r_ref|` over the samples.
    pub max_error: f64,
    /// Largest `|r - r_ref|` over the samples (N s; the paper's interval is 1e-6).
    pub max_abs_error: f64,
    /// Mean inner steps (slope or value evaluations; the quartic's root polishing).
    pub mean_steps: f64,
    /// Samples the method failed on (an error instead of an impulse).
    pub failures: usize,
}

/// The three methods of Table I with the paper's settings (interval below 1e-6 N s).
fn methods() -> [(&'static str, Box<dyn SlipMethod>); 3] {
    [
        ("bisection", Box::new(Bisection::default())),
        ("golden_section", Box::new(GoldenSection::default())),
        ("analytical", Box::new(Analytical::default())),
    ]
}

/// Times every method on `samples`: `repeats` rounds, each timing one batch of all samples
/// per method (the methods interleaved, so the machine's noise falls on all of them alike),
/// each solve through `black_box`; a method's time is the median over the rounds of batch
/// time / samples. The error is against [`Reference`], which none of the three uses.
pub fn time_methods(samples: &[SlipSample], repeats: usize) -> Vec<MethodTiming> {
    let reference: Vec<Option<Vector3<f64>>> = samples
        .iter()
        .map(|s| {
            solve_contact(&Reference::default(), &s.w, &s.c, s.mu)
                .ok()
                .map(|x| x.r)
        })
        .collect();
    let ms = methods();
    let mut per_round: Vec<Vec<f64>> = vec![Vec::with_capacity(repeats); ms.len()];
    for _ in 0..repeats.max(1) {
        for (k, (_, m)) in ms.iter().enumerate() {
            let clock = Instant::now();
            for s in samples {
                let _ = black_box(solve_contact(
                    black_box(m.as_ref()),
                    black_box(&s.w),
                    black_box(&s.c),
                    black_box(s.mu),
                ));
            }
            per_round[k].push(clock.elapsed().as_secs_f64() / samples.len().max(1) as f64);
        }
    }
    ms.iter()
        .zip(per_round)
        .map(|((name, m), times)| {
            let (mut max_error, mut max_abs_error) = (0.0f64, 0.0f64);
            let (mut steps, mut failures) = (0u64, 0usize);
            for (s, r_ref) in samples.iter().zip(&reference) {
                match (solve_contact(m.as_ref(), &s.w, &s.c, s.mu), r_ref) {
                    (Ok(x), Some(r_ref)) => {
                        let e = (x.r - r_ref).norm();
                        max_abs_error = max_abs_error.max(e);
                        max_error = max_error.max(e / r_ref.norm().max(1e-300));
                        steps += u64::from(x.steps);
                    }
                    _ => failures += 1,
                }
            }
            MethodTiming {
                method: name,
                micros_median: 1e6 * quantile(&times, 0.5),
                max_error,
                max_abs_error,
                mean_steps: steps as f64 / samples.len().max(1) as f64,
                failures,
            }
        })
        .collect()
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

/// One driver on one problem file: its own verdict and the shared Coulomb ruler's.
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
    /// The summed violation of the driver's own model at its answer (eq. 8 for the bisection,
    /// eq. 6 for PGS), as the bisection's stopping test measures it.
    pub own_violation: f64,
    /// The shared ruler: the Coulomb natural-map residual of the answer.
    pub coulomb_residual: f64,
}

/// Every local-problem file in `dir` (FCLib `.hdf5` and JSON; global ones converted), solved
/// by each of `specs` from zero: the model's own violation beside the Coulomb ruler's residual.
/// Files that do not read as a local problem are skipped (the Chute file's rolling friction).
pub fn problem_files(
    dir: &std::path::Path,
    specs: &[(SolverSpec, FrictionModel)],
) -> Result<Vec<FileSolve>, AnalysisError> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "hdf5" || e == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let Ok(local) = contactlab_core::io::read_local(&path) else {
            continue;
        };
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let problem = contactlab_core::StepProblem::from(local.clone());
        for (spec, model) in specs {
            let s = contactlab_lab::registry::solve_spec(&problem, spec, None)
                .map_err(|e| bad(format!("{name}: {e}")))?;
            let own_violation = (0..local.num_contacts())
                .map(|a| {
                    let at = |v: &[f64]| Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2]);
                    contact_violation(
                        *model,
                        &local.w.block3(a, a),
                        local.mu[a],
                        &at(&s.r),
                        &at(&s.u),
                    )
                })
                .sum();
            out.push(FileSolve {
                file: name.clone(),
                contacts: local.num_contacts(),
                solver: spec.name(),
                own_status: s.solver_status.as_str().to_string(),
                iterations: s.iterations,
                own_violation,
                coulomb_residual: s.metrics.natural_map,
            });
        }
    }
    Ok(out)
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
    fn every_method_is_timed_on_the_samples_and_measured_against_the_reference() {
        // A slipping contact: W anisotropic, pushed in and sideways hard.
        let w = Matrix3::new(2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5);
        let samples: Vec<SlipSample> = (0..20)
            .map(|k| SlipSample {
                w,
                c: Vector3::new(-1.0, 2.0 + 0.1 * k as f64, -1.0),
                mu: 0.5,
            })
            .collect();
        assert!(samples
            .iter()
            .all(|s| matches!(classify(&s.w, &s.c, s.mu), Ok(Case::Slipping(_)))));
        let t = time_methods(&samples, 3);
        let names: Vec<&str> = t.iter().map(|m| m.method).collect();
        assert_eq!(names, ["bisection", "golden_section", "analytical"]);
        for m in &t {
            assert_eq!(m.failures, 0, "{}", m.method);
            assert!(m.micros_median > 0.0 && m.micros_median.is_finite());
            // The paper's interval of 1e-6 N s on impulses of order one.
            assert!(m.max_error < 1e-5, "{}: {}", m.method, m.max_error);
        }
    }
}
