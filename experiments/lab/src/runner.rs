//! The experiment runner: expands a config into runs, simulates each run's scene, solves every
//! step's contact problem with the driver (whose impulses advance the scene) and the shadow
//! solvers (which see the same problems), and collects one tidy row per solve, and per run
//! what its scene was ([`SceneRecord`]: its resolved parameters and constants, which
//! [`crate::Lab::run`] writes into the run's `.meta.json`).
//!
//! Runs go across cores with rayon; rows come back in run order, so the DataFrame is the same
//! whatever the thread count. `--shard k/N` keeps runs whose index is `k-1 mod N`, so a
//! cluster's job array can split a sweep and concatenate the Parquet files
//! ([`contactlab_runs::store`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use contactlab_core::block_cholesky::{with_memo, AnalysisMemo};
use contactlab_core::ProblemError;
use contactlab_runs::config::{ConfigError, ExperimentConfig, OutputSection, RunSpec};
use contactlab_runs::schema::{steps, traces};
use contactlab_runs::store::{SceneRecord, StoreError};
use contactlab_scenes::{Contact, ContactKey, ContactStep, Scene, SceneError};
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::Vector3;
use polars::prelude::*;
use rayon::prelude::*;

use contactlab_core::Trace;

use crate::plan::{ExperimentPlan, PlannedRun};
use crate::registry::{LocalSolve, RegistryError, ResolvedSolver};

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The config is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The scene could not be built or advanced.
    #[error("run {run}: scene: {source}")]
    Scene {
        /// Run index.
        run: usize,
        /// What the scene said.
        source: SceneError,
    },
    /// A solver could not run.
    #[error("run {run}, step {step}: {source}")]
    Solver {
        /// Run index.
        run: usize,
        /// Step index.
        step: usize,
        /// What failed.
        source: RegistryError,
    },
    /// Building the DataFrame failed.
    #[error("data frame: {0}")]
    Frame(#[from] PolarsError),
    /// Reading or writing a run's files failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A dumped step could not be written.
    #[error("step {step}: {message}")]
    Dump {
        /// The step.
        step: usize,
        /// What failed.
        message: String,
    },
    /// A thread pool of the asked size could not be made.
    #[error("thread pool: {0}")]
    Threads(String),
    /// A problem file, a reference answer or another engine's output could not be read.
    #[error("{0}")]
    Problem(String),
}

/// One solve's row.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRow {
    /// Run index in the expanded sweep.
    pub run: usize,
    /// Time step.
    pub step: usize,
    /// Solver label.
    pub solver: String,
    /// `driver` or `shadow`.
    pub role: &'static str,
    /// The formulation's friction model (`coulomb_cone`, `friction_pyramid`, `regularized`,
    /// `maximum_dissipation`), so that a report can name what each solver simulates.
    pub model: &'static str,
    /// Contacts in the step's problem.
    pub n_c: usize,
    /// The formulation's unknowns in the solve (3 per contact for Todorov's `x`, `n_f + 2` per
    /// contact for the pyramid MLCP; 0 without contacts): the size of the systems it solves.
    pub unknowns: usize,
    /// Iterations (0 when there were no contacts).
    pub iterations: u64,
    /// Natural-map residual of the returned impulses.
    pub residual: f64,
    /// Seconds of the solve, the formulation's build included.
    pub seconds: f64,
    /// The part of `seconds` spent building the formulation (SAP: `A`'s restriction, the
    /// Hessian's pattern, the regularization): the same work for every driver of one
    /// formulation.
    pub build_seconds: f64,
    /// Seconds the scene spent on this step outside the solvers: building the step's problem
    /// (collision detection, assembly) and advancing with the driver's impulses. The same for
    /// every solver row of the step; a whole step of the driver is this plus its `seconds`.
    pub scene_seconds: f64,
    /// The part of `scene_seconds` spent in `advance` (moving the bodies with the driver's
    /// impulses, and in a scene that detects there, the new state's collision detection).
    pub advance_seconds: f64,
    /// The new state's collision detection, where the scene times it
    /// ([`Scene::detect_seconds`]): a part of
    /// `advance_seconds`. `NaN` otherwise.
    pub detect_seconds: f64,
    /// For a shadow: how far the driver's impulses are from this solver's on the same
    /// problem, `|r_driver - r| / |r|` (2-norms over the step; Hwangbo et al.'s Fig. 6 measure
    /// with the shadow as the reference). `NaN` for the driver and for steps without contacts.
    pub distance_to_driver: f64,
    /// For a shadow: the largest difference between the driver's contact velocities and this
    /// solver's, `max |u_driver - u|` (m/s): where impulses are not unique (more contacts than
    /// the bodies' freedoms), solvers can differ in `r` and agree in `u`. `NaN` otherwise.
    pub velocity_gap_to_driver: f64,
    /// Status by the shared ruler.
    pub status: String,
    /// The driver's own status.
    pub solver_status: String,
    /// The counters the driver and the formulation reported (`newton_accepted` from
    /// Todorov's driver, `pgs_sweeps` from Erleben's Newton, `restarts` from `implicit-ncp`,
    /// argmin's evaluation counts, ...); each becomes a column.
    pub counters: BTreeMap<String, u64>,
    /// The formulation's own accuracy figures (SAP: `e_m`, `e_mu`); each becomes a column,
    /// `NaN` for solvers without it.
    pub diagnostics: BTreeMap<String, f64>,
    /// The scene's observables after the step (the driver advanced it; shadow rows repeat
    /// them), one column each.
    pub observables: Vec<(&'static str, f64)>,
}

/// One solver's per-iteration trace on one step of a run: the run's hardest step (where the
/// driver took the most iterations; every solver's trace on that same step problem is kept),
/// a step the config asks for (`[output] traces_at`), or any step when it asks for all
/// (`[output] all_traces`).
#[derive(Debug, Clone, PartialEq)]
pub struct StepTrace {
    /// Run index.
    pub run: usize,
    /// Step index.
    pub step: usize,
    /// Solver label.
    pub solver: String,
    /// `hardest`, `asked` or `every_step`.
    pub why: &'static str,
    /// The solve's trace (row 0: the start).
    pub trace: Trace,
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The run.
    pub spec: RunSpec,
    /// One row per solve.
    pub rows: Vec<StepRow>,
    /// Every solver's trace on the run's hardest step, then on the steps the config asks for,
    /// then (with `[output] all_traces`) on every step.
    pub traces: Vec<StepTrace>,
    /// The run's scene: its parameters with every default filled in and its constants
    /// ([`contactlab_scenes::Scene::parameters`], [`contactlab_scenes::Scene::constants`]).
    pub scene: SceneRecord,
}

/// Everything an experiment produced.
#[derive(Debug, Clone)]
pub struct ExperimentOutput {
    /// Per run, in run order.
    pub runs: Vec<RunOutput>,
    /// Wall-clock seconds of the whole sweep.
    pub wall_seconds: f64,
}

/// Runs the plan (the shard's part of it), in parallel on the current rayon pool, with an
/// optional progress bar.
pub fn run_experiment(
    plan: &ExperimentPlan,
    shard: Option<(usize, usize)>,
    progress: bool,
) -> Result<ExperimentOutput, RunError> {
    let runs: Vec<&PlannedRun> = plan
        .runs()
        .iter()
        .filter(|r| shard.is_none_or(|(k, n)| r.spec.index % n == k - 1))
        .collect();
    let bar = if progress {
        ProgressBar::new(runs.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} elapsed, eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let cfg = plan.config();
    bar.set_prefix(format!("{}/{}", cfg.paper, cfg.name));
    let start = Instant::now();
    let results: Vec<Result<RunOutput, RunError>> = runs
        .par_iter()
        .map(|run| {
            let out = run_one(plan, run);
            bar.inc(1);
            out
        })
        .collect();
    bar.finish_and_clear();
    let runs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(ExperimentOutput {
        runs,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Per-solver warm-start memory: each contact's unknowns as a world-frame vector, by contact
/// key (a ball-ball frame turns between steps; storing world vectors carries the value over).
pub type WarmMap = HashMap<ContactKey, Vector3<f64>>;

/// The previous step's unknowns in this step's frames, `NaN` for new contacts.
pub fn warm_vector(contacts: &[Contact], warm: &WarmMap) -> Vec<f64> {
    contacts
        .iter()
        .flat_map(|c| {
            warm.get(&c.key)
                .map_or([f64::NAN; 3], |w| (c.frame * w).into())
        })
        .collect()
}

/// Solves step `step` of run `run` with `solver`, started from the previous step's answer kept
/// in `warm` (contacts matched by key), and keeps this step's answer there for the next.
pub fn solve_warm(
    solver: &ResolvedSolver,
    cs: &ContactStep,
    warm: &mut WarmMap,
    run: usize,
    step: usize,
) -> Result<LocalSolve, RunError> {
    let s = solver
        .solve(&cs.problem, Some(&warm_vector(&cs.contacts, warm)))
        .map_err(|e| RunError::Solver {
            run,
            step,
            source: e.into(),
        })?;
    remember(&cs.contacts, &s.warm, warm);
    Ok(s)
}

/// Keeps `x` (three numbers per contact, in each contact's frame) as world vectors by key.
pub fn remember(contacts: &[Contact], x: &[f64], warm: &mut WarmMap) {
    warm.clear();
    for (a, c) in contacts.iter().enumerate() {
        let local = Vector3::new(x[3 * a], x[3 * a + 1], x[3 * a + 2]);
        warm.insert(c.key, c.frame.transpose() * local);
    }
}

/// Builds run `run`'s scene from its checked config.
pub fn build_scene(planned: &PlannedRun) -> Result<Box<dyn Scene>, RunError> {
    planned.scene.build().map_err(|source| RunError::Scene {
        run: planned.spec.index,
        source,
    })
}

/// Simulates one run of `plan` with its solvers.
pub fn run_one(plan: &ExperimentPlan, planned: &PlannedRun) -> Result<RunOutput, RunError> {
    let (cfg, spec) = (plan.config(), &planned.spec);
    let run = spec.index;
    let scene_err = |source| RunError::Scene { run, source };
    let mut scene = build_scene(planned)?;
    let record = SceneRecord {
        run: run as u64,
        parameters: scene.parameters().map_err(scene_err)?,
        constants: scene
            .constants()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    };
    let solvers: Vec<RunSolver> = plan
        .solvers(planned)
        .into_iter()
        .map(|(s, role)| (&s.solver, role, s.model))
        .collect();
    let mut warm: Vec<WarmMap> = vec![HashMap::new(); solvers.len()];
    let mut memos: Vec<AnalysisMemo> = solvers.iter().map(|_| AnalysisMemo::default()).collect();
    let mut kept = KeptTraces::default();
    let mut rows = Vec::with_capacity(cfg.scene.steps * solvers.len());
    for step in 0..cfg.scene.steps {
        if scene.finished() {
            break;
        }
        let clock = Instant::now();
        let cs = match scene.contact_step() {
            Ok(cs) => cs,
            Err(e) if diverged(&e) => {
                rows.extend(diverged_rows(run, step, &solvers, scene.as_ref()));
                break;
            }
            Err(e) => return Err(scene_err(e)),
        };
        let contact_seconds = clock.elapsed().as_secs_f64();
        let solved = solve_step(&solvers, &cs, (&mut warm, &mut memos), run, step)?;
        let driver_iterations = solved.rows.first().map_or(0, |r| r.iterations);
        kept.keep(&cfg.output, step, solved.traces, driver_iterations);
        let clock = Instant::now();
        match scene.advance(&cs, &solved.driver_r) {
            Ok(()) => {}
            Err(e) if diverged(&e) => {
                rows.extend(diverged_rows(run, step, &solvers, scene.as_ref()));
                break;
            }
            Err(e) => return Err(scene_err(e)),
        }
        let advance_seconds = clock.elapsed().as_secs_f64();
        let detect_seconds = scene.detect_seconds().unwrap_or(f64::NAN);
        let observables = scene.observables();
        for mut r in solved.rows {
            r.observables = observables.clone();
            r.scene_seconds = contact_seconds + advance_seconds;
            r.advance_seconds = advance_seconds;
            r.detect_seconds = detect_seconds;
            rows.push(r);
        }
    }
    Ok(RunOutput {
        spec: spec.clone(),
        rows,
        traces: kept.into_traces(),
        scene: record,
    })
}

/// A run's solver: resolved, its role (the driver or a shadow) and the name of the friction
/// model its answers satisfy (empty when the registry does not know it).
type RunSolver<'a> = (&'a ResolvedSolver, &'static str, &'static str);

/// What every solver made of one step problem.
struct SolvedStep {
    /// Their rows, without the scene's figures (which come after the advance).
    rows: Vec<StepRow>,
    /// Their traces (none without contacts).
    traces: Vec<StepTrace>,
    /// The driver's impulses, which advance the scene (empty without contacts).
    driver_r: Vec<f64>,
}

/// Every solver on the step problem `cs`, warm started from its own previous step and with its
/// own memo of block analyses (`block_cholesky::with_memo`).
fn solve_step(
    solvers: &[RunSolver<'_>],
    cs: &ContactStep,
    (warm, memos): (&mut [WarmMap], &mut [AnalysisMemo]),
    run: usize,
    step: usize,
) -> Result<SolvedStep, RunError> {
    let n_c = cs.contacts.len();
    let mut step_rows = Vec::with_capacity(solvers.len());
    let mut driver_r = Vec::new();
    let mut driver_u = Vec::new();
    let mut traces = Vec::with_capacity(solvers.len());
    for (i, (solver, role, model)) in solvers.iter().enumerate() {
        if n_c == 0 {
            step_rows.push(empty_row(run, step, &solver.label, role, model));
            continue;
        }
        // A run's steps are related problems: each solver reuses its block analysis while the
        // contacts join the same pairs of bodies, as its warm start carries its impulses.
        let s = with_memo(&mut memos[i], || {
            solve_warm(solver, cs, &mut warm[i], run, step)
        })?;
        let to_driver = if i == 0 {
            (f64::NAN, f64::NAN)
        } else {
            (
                relative_distance(&driver_r, &s.r),
                largest_gap(&driver_u, &s.u),
            )
        };
        traces.push(StepTrace {
            run,
            step,
            solver: solver.label.clone(),
            why: "hardest",
            trace: s.solution.trace.clone(),
        });
        step_rows.push(solved_row(
            run,
            step,
            (solver, role, model),
            n_c,
            &s,
            to_driver,
        ));
        if i == 0 {
            driver_r = s.r;
            driver_u = s.u;
        }
    }
    Ok(SolvedStep {
        rows: step_rows,
        traces,
        driver_r,
    })
}

/// The row of `solver`'s solve `s` of a step with `n_c` contacts, `to_driver` its answer's
/// distance and velocity gap to the driver's (NaN for the driver); the scene's figures are
/// the caller's.
fn solved_row(
    run: usize,
    step: usize,
    (solver, role, model): (&ResolvedSolver, &'static str, &'static str),
    n_c: usize,
    s: &LocalSolve,
    (distance_to_driver, velocity_gap_to_driver): (f64, f64),
) -> StepRow {
    StepRow {
        n_c,
        unknowns: s.x.len(),
        iterations: s.iterations,
        residual: s.metrics.natural_map,
        seconds: s.seconds,
        build_seconds: s.build_seconds,
        distance_to_driver,
        velocity_gap_to_driver,
        status: s.status.as_str().to_string(),
        solver_status: s.solver_status.as_str().to_string(),
        counters: s.counters.clone(),
        diagnostics: s.diagnostics.clone(),
        ..empty_row(run, step, &solver.label, role, model)
    }
}

/// The traces a run keeps ([`StepTrace`]): those of the step whose driver took the most
/// iterations, then the steps the config asks for, then every step when it asks for all.
#[derive(Default)]
struct KeptTraces {
    hardest: Vec<StepTrace>,
    hardest_iterations: u64,
    asked: Vec<StepTrace>,
    every: Vec<StepTrace>,
}

impl KeptTraces {
    /// Keeps what `output` asks of step `step`'s `traces`, the driver having taken
    /// `driver_iterations`.
    fn keep(
        &mut self,
        output: &OutputSection,
        step: usize,
        traces: Vec<StepTrace>,
        driver_iterations: u64,
    ) {
        if output.traces_at.contains(&step) {
            self.asked.extend(traces.iter().map(|t| StepTrace {
                why: "asked",
                ..t.clone()
            }));
        }
        if output.all_traces {
            self.every.extend(traces.iter().map(|t| StepTrace {
                why: "every_step",
                ..t.clone()
            }));
        }
        if driver_iterations > self.hardest_iterations {
            self.hardest_iterations = driver_iterations;
            self.hardest = traces;
        }
    }

    /// The kept traces: the hardest step's, the asked ones, every step's.
    fn into_traces(self) -> Vec<StepTrace> {
        let mut out = self.hardest;
        out.extend(self.asked);
        out.extend(self.every);
        out
    }
}

/// `|a - b| / |b|` (2-norms); `NaN` when the lengths differ, 0 when both are zero.
fn relative_distance(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let norm = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    if diff == 0.0 {
        0.0
    } else {
        diff / norm
    }
}

/// `max |a - b|`; `NaN` when the lengths differ.
fn largest_gap(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// Whether a scene error means the motion blew up: a state, free velocity or impulse that is
/// no longer finite. The run then ends at that step with a `diverged` row per solver (what
/// the driver's impulses did to the motion is a finding the study reports), where any other
/// scene error (a bad parameter, a malformed problem) still fails the sweep.
fn diverged(e: &SceneError) -> bool {
    matches!(
        e,
        SceneError::NonFinite(_) | SceneError::Problem(ProblemError::NonFinite { .. })
    )
}

/// One `diverged` row per solver at `step`, with the scene's observables as they are.
fn diverged_rows(
    run: usize,
    step: usize,
    solvers: &[RunSolver<'_>],
    scene: &dyn Scene,
) -> Vec<StepRow> {
    let observables = scene.observables();
    solvers
        .iter()
        .map(|(solver, role, model)| StepRow {
            status: "diverged".into(),
            solver_status: "diverged".into(),
            observables: observables.clone(),
            ..empty_row(run, step, &solver.label, role, model)
        })
        .collect()
}

/// The row of a solver at a step without contacts (`no_contacts`: no solve, no figures).
fn empty_row(
    run: usize,
    step: usize,
    solver: &str,
    role: &'static str,
    model: &'static str,
) -> StepRow {
    StepRow {
        run,
        step,
        solver: solver.to_string(),
        role,
        model,
        n_c: 0,
        unknowns: 0,
        iterations: 0,
        residual: 0.0,
        seconds: 0.0,
        build_seconds: 0.0,
        scene_seconds: 0.0,
        advance_seconds: 0.0,
        detect_seconds: f64::NAN,
        distance_to_driver: f64::NAN,
        velocity_gap_to_driver: f64::NAN,
        status: "no_contacts".into(),
        solver_status: "no_contacts".into(),
        counters: BTreeMap::new(),
        diagnostics: BTreeMap::new(),
        observables: Vec::new(),
    }
}

/// A sweep value as a polars column of the right type.
fn sweep_column(name: &str, values: Vec<&toml::Value>) -> PolarsResult<Column> {
    let name: PlSmallStr = name.into();
    Ok(if values.iter().all(|v| v.is_integer()) {
        Column::new(
            name,
            values.iter().map(|v| v.as_integer()).collect::<Vec<_>>(),
        )
    } else if values.iter().all(|v| v.is_float() || v.is_integer()) {
        Column::new(
            name,
            values
                .iter()
                .map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
                .collect::<Vec<_>>(),
        )
    } else if values.iter().all(|v| v.is_bool()) {
        Column::new(name, values.iter().map(|v| v.as_bool()).collect::<Vec<_>>())
    } else {
        // Strings as themselves (a scheme name), anything else in TOML syntax.
        Column::new(
            name,
            values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect::<Vec<_>>(),
        )
    })
}

/// The tidy steps DataFrame: config keys (`paper`, `experiment`, the sweep keys), then one row
/// per solve with the [`StepRow`] fields, one column per counter and per scene observable.
pub fn steps_frame(cfg: &ExperimentConfig, out: &ExperimentOutput) -> PolarsResult<DataFrame> {
    let rows: Vec<(&RunOutput, &StepRow)> = out
        .runs
        .iter()
        .flat_map(|r| r.rows.iter().map(move |row| (r, row)))
        .collect();
    let mut df = df!(
        steps::PAPER => rows.iter().map(|_| cfg.paper.clone()).collect::<Vec<_>>(),
        steps::ROLE_DRIVER => rows.iter().map(|(run, _)| cfg.driver_specs()[run.spec.driver].name()).collect::<Vec<_>>(),
        steps::EXPERIMENT => rows.iter().map(|_| cfg.name.clone()).collect::<Vec<_>>(),
        steps::RUN => rows.iter().map(|(_, r)| r.run as u64).collect::<Vec<_>>(),
        steps::STEP => rows.iter().map(|(_, r)| r.step as u64).collect::<Vec<_>>(),
        steps::SOLVER => rows.iter().map(|(_, r)| r.solver.clone()).collect::<Vec<_>>(),
        steps::ROLE => rows.iter().map(|(_, r)| r.role).collect::<Vec<_>>(),
        steps::MODEL => rows.iter().map(|(_, r)| r.model).collect::<Vec<_>>(),
        steps::N_C => rows.iter().map(|(_, r)| r.n_c as u64).collect::<Vec<_>>(),
        steps::UNKNOWNS => rows.iter().map(|(_, r)| r.unknowns as u64).collect::<Vec<_>>(),
        steps::ITERATIONS => rows.iter().map(|(_, r)| r.iterations).collect::<Vec<_>>(),
        steps::RESIDUAL => rows.iter().map(|(_, r)| r.residual).collect::<Vec<_>>(),
        steps::SECONDS => rows.iter().map(|(_, r)| r.seconds).collect::<Vec<_>>(),
        steps::BUILD_SECONDS => rows.iter().map(|(_, r)| r.build_seconds).collect::<Vec<_>>(),
        steps::SCENE_SECONDS => rows.iter().map(|(_, r)| r.scene_seconds).collect::<Vec<_>>(),
        steps::ADVANCE_SECONDS => rows.iter().map(|(_, r)| r.advance_seconds).collect::<Vec<_>>(),
        steps::DETECT_SECONDS => rows.iter().map(|(_, r)| r.detect_seconds).collect::<Vec<_>>(),
        steps::DISTANCE_TO_DRIVER => rows.iter().map(|(_, r)| r.distance_to_driver).collect::<Vec<_>>(),
        steps::VELOCITY_GAP_TO_DRIVER => rows.iter().map(|(_, r)| r.velocity_gap_to_driver).collect::<Vec<_>>(),
        steps::STATUS => rows.iter().map(|(_, r)| r.status.clone()).collect::<Vec<_>>(),
        steps::SOLVER_STATUS => rows.iter().map(|(_, r)| r.solver_status.clone()).collect::<Vec<_>>(),
    )?;
    // One column per counter any solver reported; 0 where a solver did not report it.
    let counters: BTreeSet<&String> = rows.iter().flat_map(|(_, r)| r.counters.keys()).collect();
    for name in counters {
        let values: Vec<u64> = rows
            .iter()
            .map(|(_, r)| r.counters.get(name).copied().unwrap_or(0))
            .collect();
        df.with_column(Column::new(name.as_str().into(), values))?;
    }
    let diagnostics: BTreeSet<&String> = rows
        .iter()
        .flat_map(|(_, r)| r.diagnostics.keys())
        .collect();
    for name in diagnostics {
        let values: Vec<f64> = rows
            .iter()
            .map(|(_, r)| r.diagnostics.get(name).copied().unwrap_or(f64::NAN))
            .collect();
        df.with_column(Column::new(name.as_str().into(), values))?;
    }
    let names: Vec<&'static str> = rows
        .first()
        .map(|(_, r)| r.observables.iter().map(|o| o.0).collect())
        .unwrap_or_default();
    for (k, name) in names.iter().enumerate() {
        let values: Vec<f64> = rows
            .iter()
            .map(|(_, r)| r.observables.get(k).map_or(f64::NAN, |o| o.1))
            .collect();
        df.with_column(Column::new((*name).into(), values))?;
    }
    for key in cfg.sweep.keys() {
        let values: Vec<&toml::Value> = rows
            .iter()
            .map(|(run, _)| {
                &run.spec
                    .keys
                    .iter()
                    .find(|(k, _)| k == key)
                    .expect("every run has every sweep key")
                    .1
            })
            .collect();
        df.with_column(sweep_column(key, values)?)?;
    }
    Ok(df)
}

/// A trace value a driver reported, `None` (null) for the NaN of one it did not.
fn reported(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The kept traces ([`StepTrace`]): `run`, `step`, `solver`, `why`, then per iteration `iter`,
/// `merit`, `grad_norm`, `step_length`, `lambda`, `step_kind`, and one column per `extra` value
/// a driver reports (SAP's `optimality`, Todorov's `path_position`); null where a row has none.
pub fn traces_frame(out: &ExperimentOutput) -> PolarsResult<DataFrame> {
    let rows: Vec<(&StepTrace, &contactlab_core::TraceRow)> = out
        .runs
        .iter()
        .flat_map(|r| r.traces.iter())
        .flat_map(|t| t.trace.rows.iter().map(move |row| (t, row)))
        .collect();
    let mut df = df!(
        traces::RUN => rows.iter().map(|(t, _)| t.run as u64).collect::<Vec<_>>(),
        traces::STEP => rows.iter().map(|(t, _)| t.step as u64).collect::<Vec<_>>(),
        traces::SOLVER => rows.iter().map(|(t, _)| t.solver.clone()).collect::<Vec<_>>(),
        traces::WHY => rows.iter().map(|(t, _)| t.why).collect::<Vec<_>>(),
        traces::ITER => rows.iter().map(|(_, r)| r.iter).collect::<Vec<_>>(),
        traces::MERIT => rows.iter().map(|(_, r)| r.merit).collect::<Vec<_>>(),
        traces::GRAD_NORM => rows.iter().map(|(_, r)| reported(r.grad_norm)).collect::<Vec<_>>(),
        traces::STEP_LENGTH => rows.iter().map(|(_, r)| reported(r.step_length)).collect::<Vec<_>>(),
        traces::LAMBDA => rows.iter().map(|(_, r)| reported(r.lambda)).collect::<Vec<_>>(),
        traces::STEP_KIND => rows.iter().map(|(_, r)| r.step_kind.clone()).collect::<Vec<_>>(),
    )?;
    // argmin's own `time` is a wall-clock reading: a trace keeps what the solve computed.
    let extras: BTreeSet<&String> = rows
        .iter()
        .flat_map(|(_, r)| r.extra.keys())
        .filter(|k| *k != "time")
        .collect();
    for name in extras {
        let v: Vec<Option<f64>> = rows
            .iter()
            .map(|(_, r)| r.extra.get(name).copied().and_then(reported))
            .collect();
        df.with_column(Column::new(name.as_str().into(), v))?;
    }
    Ok(df)
}

#[cfg(test)]
mod tests {
    use super::{largest_gap, relative_distance};

    #[test]
    fn the_distance_to_the_driver_is_relative_to_the_shadows_impulses() {
        assert_eq!(relative_distance(&[1.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(relative_distance(&[0.0, 0.0], &[0.0, 0.0]), 0.0);
        // |(3, 4) - (0, 8)| / |(0, 8)| = 5 / 8.
        assert!((relative_distance(&[3.0, 4.0], &[0.0, 8.0]) - 0.625).abs() < 1e-15);
        assert!(relative_distance(&[1.0], &[1.0, 2.0]).is_nan());
        assert_eq!(relative_distance(&[1.0], &[0.0]), f64::INFINITY);
        assert_eq!(largest_gap(&[1.0, -2.0], &[1.5, 1.0]), 3.0);
        assert!(largest_gap(&[1.0], &[]).is_nan());
    }
}
