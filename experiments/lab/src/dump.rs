//! Problems out of every scene: the contact problems of chosen steps of a config's run, as the
//! solvers saw them, written as problem files (`contactlab dump`) or handed to the cross-paper
//! matrix ([`crate::matrix`]) in memory.
//!
//! A scene's step problem depends on the impulses of every earlier step, so the run is
//! simulated from its start with the config's driver (warm-started across steps as the runner
//! does), and the problems of the chosen steps are kept. The same config, run and steps give
//! the same problems bit for bit (scenes are seeded).
//!
//! Files are JSON in FCLib's fields ([`contactlab_core::io::json`]): `local` writes
//! `W, q, mu` (`u = W r + q`), `global` writes `M, H, f, w, mu` (`M v = H r + f`,
//! `u = H' v + w`) with `M = A`, `H = J'`, `f = A v*`, `w = b` of the scene's generalized
//! problem. FCLib's HDF5 is not written: a writer needs the HDF5 C library, which a fresh
//! machine does not have (the reader is pure Rust); the JSON reads back through
//! `contactlab solve` and converts to HDF5 with FCLib's own tools.

use std::path::{Path, PathBuf};

use contactlab_core::io::write_json;
use contactlab_core::{CoreError, GlobalProblem, Matrix, Problem, StepProblem};
use faer::sparse::SparseColMat;

use contactlab_runs::config::ConfigError;

use contactlab_scenes::ContactStep;

use crate::plan::{ExperimentPlan, PlannedRun};
use crate::runner::{build_scene, solve_warm, RunError, WarmMap};

/// The most steps one dump may keep (a bound on memory: a clutter step's problem is ~1 MB).
pub const MAX_DUMP_STEPS: usize = 1_000;

/// One kept step.
#[derive(Debug, Clone)]
pub struct DumpedStep {
    /// Run index in the config's expanded sweep.
    pub run: usize,
    /// Time step.
    pub step: usize,
    /// The step's problem as the solvers saw it.
    pub problem: StepProblem,
}

/// Which form a dumped file takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Contact space, `u = W r + q`.
    Local,
    /// Generalized velocities, `M v = H r + f`, `u = H' v + w` (scenes in contact space
    /// only have no global form).
    Global,
}

impl Form {
    /// `local` or `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Local => "local",
            Form::Global => "global",
        }
    }
}

impl std::str::FromStr for Form {
    type Err = String;

    fn from_str(s: &str) -> Result<Form, String> {
        match s {
            "local" => Ok(Form::Local),
            "global" => Ok(Form::Global),
            other => Err(format!("form must be `local` or `global`, got `{other}`")),
        }
    }
}

/// A config error naming `key` of the config at `config`.
pub(crate) fn invalid(config: &Path, key: &str, message: String) -> RunError {
    RunError::Config(ConfigError::Invalid {
        path: config.to_path_buf(),
        key: key.into(),
        message,
    })
}

/// The problems of `steps` of run `run` of `plan`: the run is simulated from its first step
/// with the plan's driver. Steps past the end of the run are an error naming the last step the
/// run has; steps without contacts are kept (their problem is empty).
pub fn scene_problems(
    plan: &ExperimentPlan,
    run: usize,
    steps: &[usize],
) -> Result<Vec<DumpedStep>, RunError> {
    let (cfg, config, runs) = (plan.config(), plan.path(), plan.runs());
    let planned = runs.get(run).ok_or_else(|| {
        invalid(
            config,
            "run",
            format!(
                "run {run} does not exist: the sweep has {} runs",
                runs.len()
            ),
        )
    })?;
    if steps.len() > MAX_DUMP_STEPS {
        return Err(invalid(
            config,
            "steps",
            format!("at most {MAX_DUMP_STEPS} steps per dump"),
        ));
    }
    let Some(&last) = steps.iter().max() else {
        return Ok(Vec::new());
    };
    if last >= cfg.scene.steps {
        return Err(invalid(
            config,
            "steps",
            format!(
                "step {last} is past the run's {} steps (0..{})",
                cfg.scene.steps, cfg.scene.steps
            ),
        ));
    }
    let mut kept = Vec::with_capacity(steps.len());
    let done = simulate(plan, planned, last + 1, |step, cs| {
        if steps.contains(&step) {
            kept.push(DumpedStep {
                run,
                step,
                problem: cs.problem.clone(),
            });
        }
    })?;
    if done <= last {
        return Err(invalid(
            config,
            "steps",
            format!(
                "the run ends before step {last} (it finished after step {})",
                done.saturating_sub(1)
            ),
        ));
    }
    Ok(kept)
}

/// Simulates `planned` from its start for at most `steps` steps with the plan's driver
/// (warm-started across steps as the runner does), handing each step's contact problem to
/// `keep` before it is solved. Returns the number of steps taken: fewer than `steps` when the
/// scene finishes early.
pub(crate) fn simulate(
    plan: &ExperimentPlan,
    planned: &PlannedRun,
    steps: usize,
    mut keep: impl FnMut(usize, &ContactStep),
) -> Result<usize, RunError> {
    let run = planned.spec.index;
    let scene_err = |source| RunError::Scene { run, source };
    let mut scene = build_scene(planned)?;
    let driver = &plan.driver(planned).solver;
    let mut warm = WarmMap::new();
    for step in 0..steps {
        if scene.finished() {
            return Ok(step);
        }
        let cs = scene.contact_step().map_err(scene_err)?;
        keep(step, &cs);
        let r = if cs.contacts.is_empty() {
            Vec::new()
        } else {
            solve_warm(driver, &cs, &mut warm, run, step)?.r
        };
        scene.advance(&cs, &r).map_err(scene_err)?;
    }
    Ok(steps)
}

/// A step problem as a problem file's content in `form`.
pub fn to_problem(step: &StepProblem, form: Form) -> Result<Problem, CoreError> {
    match form {
        // The JSON writer stores block and sparse `W` alike as triplets.
        Form::Local => Ok(Problem::Local(step.local()?.clone())),
        Form::Global => {
            let g = step.generalized().ok_or_else(|| {
                CoreError::Unsupported(
                    "this scene's problems are in contact space only: dump them with --form local"
                        .into(),
                )
            })?;
            let mut f = vec![0.0; g.num_dofs()];
            contactlab_core::generalized::sparse_mul_add(&g.a, &g.v_star, &mut f);
            let h: SparseColMat<usize, f64> =
                g.j.transpose()
                    .to_col_major()
                    .map_err(|e| CoreError::Unsupported(format!("transposing J: {e:?}")))?;
            Ok(Problem::Global(GlobalProblem::new(
                Matrix::Sparse(g.a.clone()),
                Matrix::Sparse(h),
                f,
                g.b.clone(),
                g.mu(),
            )?))
        }
    }
}

/// The file name of a dumped step: `<config>-run<k>-step<NNNN>-<form>.json`.
pub fn file_name(config_name: &str, run: usize, step: usize, form: Form) -> String {
    format!(
        "{config_name}-run{run}-step{step:04}-{}.json",
        form.as_str()
    )
}

/// `contactlab dump`: writes the chosen steps' problems to `out`, one JSON file each, and
/// returns the files written.
pub fn dump(
    plan: &ExperimentPlan,
    run: usize,
    steps: &[usize],
    form: Form,
    out: &Path,
) -> Result<Vec<PathBuf>, RunError> {
    let cfg = plan.config();
    let kept = scene_problems(plan, run, steps)?;
    std::fs::create_dir_all(out)?;
    let mut written = Vec::with_capacity(kept.len());
    for k in &kept {
        let path = out.join(file_name(&cfg.name, k.run, k.step, form));
        let problem = to_problem(&k.problem, form).map_err(|e| RunError::Dump {
            step: k.step,
            message: e.to_string(),
        })?;
        write_json(&problem, &path).map_err(|e| RunError::Dump {
            step: k.step,
            message: e.to_string(),
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Parses `--steps`: comma-separated step numbers and ranges `a..b` (end excluded), e.g.
/// `10,50..53` is 10, 50, 51, 52.
pub fn parse_steps(s: &str) -> Result<Vec<usize>, String> {
    let mut steps = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("--steps: `{part}` is not a step number or a range a..b");
        if let Some((a, b)) = part.split_once("..") {
            let (a, b): (usize, usize) = (
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            );
            if b <= a || b - a > MAX_DUMP_STEPS {
                return Err(bad());
            }
            steps.extend(a..b);
        } else {
            steps.push(part.parse().map_err(|_| bad())?);
        }
        if steps.len() > MAX_DUMP_STEPS {
            return Err(format!("--steps: at most {MAX_DUMP_STEPS} steps per dump"));
        }
    }
    if steps.is_empty() {
        return Err("--steps: no step given".into());
    }
    steps.sort_unstable();
    steps.dedup();
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_as_numbers_and_ranges() {
        assert_eq!(parse_steps("10, 50..53,10").unwrap(), vec![10, 50, 51, 52]);
        assert!(parse_steps("").is_err());
        assert!(parse_steps("5..5").is_err());
        assert!(parse_steps("x").is_err());
        assert!(parse_steps("0..100000000").is_err());
    }

    #[test]
    fn file_names_carry_config_run_step_and_form() {
        assert_eq!(
            file_name("table1", 3, 7, Form::Global),
            "table1-run3-step0007-global.json"
        );
    }
}
