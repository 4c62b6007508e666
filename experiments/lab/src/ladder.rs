//! Running a ladder config (`kind = "ladder"`, [`contactlab_runs::ladder`]): ContactBench's
//! accuracy against time per solve (Le Lidec et al., T-RO 2024), one row per (scene, sampled
//! step, pair, rung).
//!
//! Each scene's trajectory is recorded twice with its driver, as `contactlab dump` does: once
//! to find the steps with contacts, which the sample spreads over
//! ([`contactlab_runs::ladder::spread`]), and once to keep those steps and the steps before them
//! (a scene is deterministic, so the second pass meets the same problems). Then every pair
//! solves every kept step at every rung. Every solve gets a copy of the step as recorded, so no
//! rung finds what an earlier one derived (a generalized problem's contact-space form is built
//! inside each solve that needs it). A solve's time is its `seconds` (build, start and driver;
//! the shared ruler's judgement excluded). ContactBench's figures are taken on the forces
//! `r / dt` with the answer's own constraint velocities ([`contactbench_of`]).
//!
//! Pairs run in parallel on the lab's pool, each on its own scene's steps in order; a rung's
//! time is therefore measured beside another pair's solves on the other cores, as in the
//! fidelity study's sweeps.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::registry::LocalSolve;
use contactlab_core::contactbench::{contactbench_of, ContactBenchMetrics};
use contactlab_runs::ladder::{spread, LadderConfig, LadderScene, LadderStart};
use contactlab_runs::schema::ladder;
use contactlab_runs::spec::{SolverSpec, Start};
use contactlab_scenes::ContactStep;
use polars::prelude::*;
use rayon::prelude::*;

use crate::context::Context;
use crate::dump::{invalid, simulate};
use crate::plan::{ExperimentPlan, PlannedRun};
use crate::registry::{Pair, Registry};
use crate::runner::{build_scene, remember, warm_vector, RunError, WarmMap};

/// One solve of a ladder: a pair at one rung on one sampled step.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderRow {
    /// The ladder scene's name.
    pub scene: String,
    /// The step of its trajectory.
    pub step: usize,
    /// Formulation.
    pub formulation: &'static str,
    /// Driver.
    pub optimizer: &'static str,
    /// The law its answers satisfy (empty when the pair refused the step).
    pub model: &'static str,
    /// `cold` or `warm`.
    pub start: &'static str,
    /// The rung's tolerance.
    pub tol: f64,
    /// The rung's iteration cap.
    pub cap: u64,
    /// Contacts.
    pub n_c: usize,
    /// The scene's time step (s).
    pub dt: f64,
    /// Status by the shared ruler (`error` when the pair refused or failed).
    pub status: String,
    /// The driver's own status.
    pub solver_status: String,
    /// Iterations.
    pub iterations: u64,
    /// Seconds of the solve.
    pub seconds: f64,
    /// The shared ruler's natural-map residual.
    pub residual: f64,
    /// ContactBench's figures of the answer.
    pub figures: ContactBenchMetrics,
    /// Why the pair did not solve (empty otherwise).
    pub message: String,
}

/// What a ladder run produced.
#[derive(Debug, Clone)]
pub struct LadderOutput {
    /// Rows in scene order, then pair order (the registry's), then step, then rung.
    pub rows: Vec<LadderRow>,
    /// Pairs run.
    pub pairs: usize,
    /// Steps sampled, over all scenes.
    pub steps: usize,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
}

/// One scene's recorded steps: each sampled step with the step before it (when that one had
/// contacts), and the scene's time step.
struct Recorded {
    name: String,
    dt: f64,
    steps: Vec<(usize, ContactStep, Option<ContactStep>)>,
}

const NO_FIGURES: ContactBenchMetrics = ContactBenchMetrics {
    primal: f64::NAN,
    dual: f64::NAN,
    complementarity: f64::NAN,
    signorini: f64::NAN,
    dissipation: f64::NAN,
};

/// Runs `pairs` on every rung of `cfg` over its scenes' sampled steps, on the current pool.
pub fn run_ladder(
    ctx: Context<'_>,
    cfg: &LadderConfig,
    pairs: &[Pair],
) -> Result<LadderOutput, RunError> {
    let start = Instant::now();
    let recorded: Vec<Recorded> = cfg
        .scenes
        .iter()
        .map(|s| record(ctx, s, cfg.samples_of(s)))
        .collect::<Result<_, _>>()?;
    let tasks: Vec<(&Recorded, &Pair)> = recorded
        .iter()
        .flat_map(|r| pairs.iter().map(move |p| (r, p)))
        .collect();
    let rows: Vec<Vec<LadderRow>> = tasks
        .par_iter()
        .map(|(rec, pair)| pair_rows(ctx.registry, cfg, rec, pair))
        .collect();
    Ok(LadderOutput {
        rows: rows.into_iter().flatten().collect(),
        pairs: pairs.len(),
        steps: recorded.iter().map(|r| r.steps.len()).sum(),
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The run of `scene`'s config that its `driver` advances: the `run`-th of that driver's.
pub(crate) fn scene_run<'p>(
    plan: &'p ExperimentPlan,
    scene: &LadderScene,
) -> Result<&'p PlannedRun, RunError> {
    let mine: Vec<&PlannedRun> = plan
        .runs()
        .iter()
        .filter(|r| plan.driver(r).solver.label == scene.driver)
        .collect();
    if mine.is_empty() {
        let labels: BTreeSet<&str> = plan
            .runs()
            .iter()
            .map(|r| plan.driver(r).solver.label.as_str())
            .collect();
        return Err(invalid(
            &scene.config,
            "driver",
            format!(
                "ladder scene `{}`: no driver `{}` in this config; its drivers are {}",
                scene.name,
                scene.driver,
                labels.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    mine.get(scene.run).copied().ok_or_else(|| {
        invalid(
            &scene.config,
            "run",
            format!(
                "ladder scene `{}`: run {} of `{}`, which has {} runs",
                scene.name,
                scene.run,
                scene.driver,
                mine.len()
            ),
        )
    })
}

/// The scene's time step, from its parameters (`dt`).
fn scene_dt(planned: &PlannedRun, scene: &LadderScene) -> Result<f64, RunError> {
    let params = build_scene(planned)?
        .parameters()
        .map_err(|source| RunError::Scene {
            run: planned.spec.index,
            source,
        })?;
    params
        .get("dt")
        .and_then(|v| v.as_float())
        .filter(|dt| *dt > 0.0 && dt.is_finite())
        .ok_or_else(|| {
            invalid(
                &scene.config,
                "scene.params.dt",
                format!(
                    "ladder scene `{}`: its scene has no positive `dt` (ContactBench's figures are on r / dt)",
                    scene.name
                ),
            )
        })
}

/// The scene's sampled steps, each with the step before it.
fn record(ctx: Context<'_>, scene: &LadderScene, samples: usize) -> Result<Recorded, RunError> {
    let plan = ExperimentPlan::load(ctx, &ctx.root.join(&scene.config))?;
    let planned = scene_run(&plan, scene)?;
    let dt = scene_dt(planned, scene)?;
    let mut with_contacts = Vec::new();
    simulate(&plan, planned, plan.config().scene.steps, |k, cs| {
        if !cs.contacts.is_empty() {
            with_contacts.push(k);
        }
    })?;
    let chosen: BTreeSet<usize> = spread(&with_contacts, samples).into_iter().collect();
    let mut steps = Vec::with_capacity(chosen.len());
    let mut previous: Option<ContactStep> = None;
    simulate(&plan, planned, plan.config().scene.steps, |k, cs| {
        if chosen.contains(&k) {
            let before = previous.take().filter(|p| !p.contacts.is_empty());
            steps.push((k, cs.clone(), before));
        }
        previous = chosen.contains(&(k + 1)).then(|| cs.clone());
    })?;
    Ok(Recorded {
        name: scene.name.clone(),
        dt,
        steps,
    })
}

/// The spec of `pair` at tolerance `tol`, cap `cap`, with the ladder's limit. A driver with
/// an iteration budget of its own (Hwangbo et al.'s sweeps, `max_iterations`, which replaces
/// the solve's `max_iter`) gets the cap there, so the cap binds every driver.
fn rung_spec(
    registry: &Registry,
    cfg: &LadderConfig,
    pair: &Pair,
    (tol, cap): (f64, u64),
    start: Start,
) -> SolverSpec {
    let mut spec = SolverSpec::new(pair.formulation, pair.optimizer, tol, cap);
    spec.time_limit = Some(cfg.time_limit);
    spec.start = start;
    let own_budget = registry
        .driver(pair.optimizer)
        .is_ok_and(|d| d.defaults.get(OWN_BUDGET).is_some());
    if own_budget {
        spec.optimizer = spec.optimizer.with(OWN_BUDGET, cap);
    }
    spec
}

/// The option of a driver whose iteration budget is its own.
const OWN_BUDGET: &str = "max_iterations";

/// Every row of one pair on one scene: per sampled step, the warm start (the pair's answer to
/// the step before, at the tightest rung), then every rung.
fn pair_rows(
    registry: &Registry,
    cfg: &LadderConfig,
    rec: &Recorded,
    pair: &Pair,
) -> Vec<LadderRow> {
    let rungs = cfg.rungs();
    let blank = |step: usize,
                 cs: &ContactStep,
                 (start, tol, cap): (LadderStart, f64, u64),
                 message: String| {
        LadderRow {
            scene: rec.name.clone(),
            step,
            formulation: pair.formulation,
            optimizer: pair.optimizer,
            model: "",
            start: start.as_str(),
            tol,
            cap,
            n_c: cs.contacts.len(),
            dt: rec.dt,
            status: "error".into(),
            solver_status: "error".into(),
            iterations: 0,
            seconds: f64::NAN,
            residual: f64::NAN,
            figures: NO_FIGURES,
            message,
        }
    };
    let (tight_tol, tight_cap) = cfg.tightest();
    let tight = registry.resolve(&rung_spec(
        registry,
        cfg,
        pair,
        (tight_tol, tight_cap),
        Start::Zero,
    ));
    let resolved: Vec<_> = rungs
        .iter()
        .map(|&(start, tol, cap)| {
            let from = match start {
                LadderStart::Cold => Start::Zero,
                LadderStart::Warm => Start::Warm,
            };
            registry.resolve(&rung_spec(registry, cfg, pair, (tol, cap), from))
        })
        .collect();
    let mut rows = Vec::with_capacity(rec.steps.len() * rungs.len());
    for (step, cs, before) in &rec.steps {
        let warm = match (&tight, before) {
            (Ok(solver), Some(b)) => {
                let mut map = WarmMap::new();
                match solver.solve(&b.problem.clone(), None) {
                    Ok(s) => {
                        remember(&b.contacts, &s.warm, &mut map);
                        Ok(warm_vector(&cs.contacts, &map))
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            (Ok(_), None) => Ok(vec![f64::NAN; 3 * cs.contacts.len()]),
            (Err(e), _) => Err(e.to_string()),
        };
        for (rung, solver) in rungs.iter().zip(&resolved) {
            let solver = match solver {
                Ok(s) => s,
                Err(e) => {
                    rows.push(blank(*step, cs, *rung, e.to_string()));
                    continue;
                }
            };
            let start = match (rung.0, &warm) {
                (LadderStart::Warm, Ok(w)) => Some(w.as_slice()),
                (LadderStart::Warm, Err(e)) => {
                    rows.push(blank(
                        *step,
                        cs,
                        *rung,
                        format!("the warm start's solve: {e}"),
                    ));
                    continue;
                }
                (LadderStart::Cold, _) => None,
            };
            let row = match solver.solve(&cs.problem.clone(), start) {
                Ok(s) => solved(blank(*step, cs, *rung, String::new()), cs, &s, rec.dt),
                Err(e) => blank(*step, cs, *rung, e.to_string()),
            };
            rows.push(row);
        }
    }
    rows
}

/// The row of a solve `s` of step `cs`: the shared ruler's judgement and ContactBench's figures.
fn solved(blank: LadderRow, cs: &ContactStep, s: &LocalSolve, dt: f64) -> LadderRow {
    let figures = cs
        .problem
        .constraints()
        .and_then(|c| contactbench_of(&c, &s.r, &s.u, dt));
    let (figures, message) = match figures {
        Ok(f) => (f, String::new()),
        Err(e) => (NO_FIGURES, e.to_string()),
    };
    LadderRow {
        model: s.model.as_str(),
        status: s.status.as_str().to_string(),
        solver_status: s.solver_status.as_str().to_string(),
        iterations: s.iterations,
        seconds: s.seconds,
        residual: s.metrics.natural_map,
        figures,
        message,
        ..blank
    }
}

/// The ladder's rows as a DataFrame, one column per [`LadderRow`] field (the figures one each).
pub fn ladder_frame(rows: &[LadderRow]) -> PolarsResult<DataFrame> {
    macro_rules! col {
        ($($f:tt)+) => {
            rows.iter().map(|r| r.$($f)+.clone()).collect::<Vec<_>>()
        };
    }
    df!(
        ladder::SCENE => col!(scene),
        ladder::STEP => rows.iter().map(|r| r.step as u64).collect::<Vec<_>>(),
        ladder::FORMULATION => col!(formulation),
        ladder::OPTIMIZER => col!(optimizer),
        ladder::MODEL => col!(model),
        ladder::START => col!(start),
        ladder::TOL => col!(tol),
        ladder::CAP => col!(cap),
        ladder::N_C => rows.iter().map(|r| r.n_c as u64).collect::<Vec<_>>(),
        ladder::DT => col!(dt),
        ladder::STATUS => col!(status),
        ladder::SOLVER_STATUS => col!(solver_status),
        ladder::ITERATIONS => col!(iterations),
        ladder::SECONDS => col!(seconds),
        ladder::RESIDUAL => col!(residual),
        ladder::PRIMAL => col!(figures.primal),
        ladder::DUAL => col!(figures.dual),
        ladder::COMPLEMENTARITY => col!(figures.complementarity),
        ladder::SIGNORINI => col!(figures.signorini),
        ladder::DISSIPATION => col!(figures.dissipation),
        ladder::MESSAGE => col!(message),
    )
}
