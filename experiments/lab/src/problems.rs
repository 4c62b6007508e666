//! Running a problem-set config (`kind = "problems"`, [`contactlab_runs::problems`]): named
//! solvers timed on problem files and scene steps, one row per (problem, solver).
//!
//! Each problem is loaded once; rounds are interleaved (round after round, every problem and
//! every solver once) on the calling thread, so the machine's noise falls on all alike and no
//! solve shares the cores with another. Odd rounds take the solvers in reverse order: a solve
//! that follows one of the same formulation finds its code and data in cache, which on a
//! problem solved in tens of microseconds is worth a factor (measured: the same code path timed
//! as two rows, first and second in a fixed order, differed by up to 5x on four contacts), and
//! no row should always be the one that pays it. Reversing alone does not make it even: the
//! two layouts of one pair, the same code on a problem below the islands' threshold, still
//! differed by 5-15% on MuJoCo's four- to six-contact steps, in favour of the one listed second
//! (swapping the two rows swapped the result). So a solve whose last timing was under
//! [`WARM_UP_BELOW_SECONDS`] is preceded by an untimed solve of the same solver on the same
//! problem, from the first round on that has such a timing: the timed solve meets its own code
//! in cache, as MuJoCo's and Pinocchio's solves timed back to back in their harnesses do.
//! Every solve gets a fresh copy of the problem as loaded,
//! so no round reuses what an earlier one derived (a generalized problem's contact-space form
//! is formed inside every timed solve that needs it). A solve's time is its `seconds` (the
//! formulation's build, the start and the driver, islands included; the shared ruler's
//! judgement excluded, and run on the first round only); the row keeps the median over the
//! rounds and the first round's answer, which later rounds repeat (the solvers are
//! deterministic), with its impulses when the config asks for `answers`.
//!
//! Besides the shared ruler's metrics, a row carries the solver's *own* law's violation at its
//! answer, summed over contacts ([`contact_violation`]: Coulomb's law, Hwangbo et al. eq. 6, for
//! a rigid Coulomb-cone solver; the maximum-dissipation law, eq. 8, for a driver that imposes
//! it), and, where the config names a reference, the answer's distance to another engine's
//! ([`crate::reference`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use contactlab_core::drivers::sweep::{contact_violation, FrictionModel};
use contactlab_core::io::{read_local, read_problem};
use contactlab_core::plugin::Model;
use contactlab_core::{LocalSolve, Problem, StepProblem};
use contactlab_runs::matrix::{ProblemEntry, Source};
use contactlab_runs::problems::{ProblemForm, ProblemsConfig, WARM_UP_BELOW_SECONDS};
use contactlab_runs::schema::problems;
use nalgebra::{Matrix3, Vector3};
use polars::prelude::*;

use crate::context::Context;
use crate::reference::{MujocoAnswer, Reference};
use crate::registry::ResolvedSolver;
use crate::runner::RunError;

/// One (problem, solver) of a problem-set run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemRow {
    /// The problem's number over the sets.
    pub run: usize,
    /// The set's name.
    pub problem_set: String,
    /// The problem's name (its file name).
    pub problem: String,
    /// `local` or `global`, as the solvers got it.
    pub form: &'static str,
    /// Contacts.
    pub n_c: usize,
    /// Generalized velocities (0 for a contact-space problem).
    pub dofs: usize,
    /// The solver's label.
    pub solver: String,
    /// Formulation name.
    pub formulation: String,
    /// Driver name.
    pub optimizer: String,
    /// How the solver split the problem and stored `W`: `islands+blocks` (the default),
    /// `whole+dense`, `islands+dense` or `whole+blocks`.
    pub layout: String,
    /// The friction model the answer satisfies (the driver's own where it imposes one).
    pub model: String,
    /// Status by the shared ruler (`error` when the solve could not run).
    pub status: String,
    /// The driver's own status.
    pub solver_status: String,
    /// Iterations.
    pub iterations: u64,
    /// The shared ruler's natural-map residual.
    pub residual: f64,
    /// `max_a dist(r_a, K_mu)`.
    pub cone_violation: f64,
    /// `sum_a |r_a . u_a|`.
    pub complementarity_gap: f64,
    /// The solver's own law's violation, summed over contacts (NaN for a regularized model).
    pub own_violation: f64,
    /// Timed rounds.
    pub rounds: usize,
    /// Median seconds over the rounds.
    pub seconds: f64,
    /// Fastest round.
    pub seconds_min: f64,
    /// Median seconds of the formulation's build.
    pub build_seconds: f64,
    /// The driver's and formulation's counters.
    pub counters: BTreeMap<String, u64>,
    /// The formulation's own accuracy figures (SAP's `e_m`, `e_mu`).
    pub diagnostics: BTreeMap<String, f64>,
    /// The reference's figures for this problem and answer (empty without a reference).
    pub reference: BTreeMap<&'static str, f64>,
    /// Why the solve could not run (empty otherwise).
    pub message: String,
    /// The answer's impulses `r`, when the config keeps answers (`None` otherwise).
    pub answer: Option<Vec<f64>>,
}

/// The layout a spec asks for, as rows name it ([`ProblemRow::layout`]).
pub fn layout_name(spec: &contactlab_runs::SolverSpec) -> String {
    format!(
        "{}+{}",
        if spec.islands { "islands" } else { "whole" },
        if spec.dense { "dense" } else { "blocks" }
    )
}

/// What a problem-set run produced.
#[derive(Debug, Clone)]
pub struct ProblemsOutput {
    /// One row per (problem, solver), problems in order, solvers in the config's.
    pub rows: Vec<ProblemRow>,
    /// Problems solved.
    pub problems: usize,
    /// Problems left out because they have no contact-space form (`form = "local"`).
    pub left_out: Vec<String>,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
}

/// One loaded problem.
struct Loaded {
    entry: ProblemEntry,
    problem: StepProblem,
    form: &'static str,
    reference: Option<MujocoAnswer>,
}

/// Loads a problem file in the config's form; `None` for a file without a contact-space form
/// when the form is `local`.
fn load_file(
    path: &Path,
    form: ProblemForm,
) -> Result<Option<(StepProblem, &'static str)>, RunError> {
    let core =
        |e: contactlab_core::CoreError| RunError::Problem(format!("{}: {e}", path.display()));
    match form {
        ProblemForm::Local => Ok(read_local(path)
            .ok()
            .map(|l| (StepProblem::from(l), "local"))),
        ProblemForm::AsStored => {
            let p = read_problem(path).map_err(core)?;
            let form = match p {
                Problem::Local(_) => "local",
                Problem::Global(_) => "global",
            };
            Ok(Some((StepProblem::from_problem(&p).map_err(core)?, form)))
        }
    }
}

/// The friction law an answer of this solver satisfies, for [`own_violation`].
fn own_model(
    ctx: Context<'_>,
    solver: &ResolvedSolver,
    spec: &contactlab_runs::SolverSpec,
) -> Model {
    ctx.registry
        .model_of(&spec.formulation.name, &spec.optimizer.name)
        .unwrap_or_else(|_| solver.formulation.model())
}

/// The violation of `model`'s law at `(r, u)`, summed over contacts; NaN for a model without a
/// rigid law to check (regularized, pyramid).
fn own_violation(model: Model, problem: &StepProblem, s: &LocalSolve) -> f64 {
    let law = match model {
        Model::CoulombCone => FrictionModel::Coulomb,
        Model::MaximumDissipation => FrictionModel::MaximumDissipation,
        _ => return f64::NAN,
    };
    let Ok(local) = problem.local() else {
        return f64::NAN;
    };
    let at = |v: &[f64], a: usize| Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2]);
    (0..local.num_contacts())
        .map(|a| {
            let w: Matrix3<f64> = local.w.block3(a, a);
            contact_violation(law, &w, local.mu()[a], &at(&s.r, a), &at(&s.u, a))
        })
        .sum()
}

/// The median of the finite values of `v` (NaN when there are none).
fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// Runs a checked problem-set config (`Lab::check_problems`) on the calling thread.
pub fn run_problems(
    ctx: Context<'_>,
    cfg: &ProblemsConfig,
    path: &Path,
) -> Result<ProblemsOutput, RunError> {
    let start = std::time::Instant::now();
    let solvers = resolve_solvers(ctx, cfg)?;
    let exempt: Vec<bool> = cfg
        .solvers
        .iter()
        .map(|s| cfg.slow_exempt.contains(&s.name()))
        .collect();
    let (loaded, left_out) = load_problems(ctx, cfg, path)?;
    let mut rounds = Rounds::default();
    for round in 0..cfg.rounds {
        rounds.run(cfg, round, &solvers, &exempt, &loaded);
    }
    let rows = rows(ctx, cfg, &solvers, &loaded, rounds);
    Ok(ProblemsOutput {
        rows,
        problems: loaded.len(),
        left_out,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The config's solvers, resolved by the registry, without traces: a problems run keeps
/// answers and counters, and recording a trace would be timed with the solve
/// (`SolveOptions::trace`).
fn resolve_solvers(
    ctx: Context<'_>,
    cfg: &ProblemsConfig,
) -> Result<Vec<ResolvedSolver>, RunError> {
    cfg.solvers
        .iter()
        .map(|s| {
            let mut solver = ctx.registry.resolve(s).map_err(|source| RunError::Solver {
                run: 0,
                step: 0,
                source,
            })?;
            solver.options.trace = false;
            Ok(solver)
        })
        .collect()
}

/// The config's problems, each loaded once with its reference answer (where the config names
/// a reference), and the names of those left out for want of a contact-space form.
fn load_problems(
    ctx: Context<'_>,
    cfg: &ProblemsConfig,
    path: &Path,
) -> Result<(Vec<Loaded>, Vec<String>), RunError> {
    let entries = cfg.problems(ctx.root, path)?;
    let scenes = crate::matrix::scene_steps(ctx, &entries)?;
    let reference = cfg
        .reference
        .as_ref()
        .map(|r| Reference::mujoco(ctx.root.join(&r.dir)));
    let mut loaded = Vec::new();
    let mut left_out = Vec::new();
    for e in entries {
        let got = match &e.source {
            Source::File(f) => load_file(f, cfg.form)?,
            Source::Scene { .. } => scenes.get(&e.index).map(|p| {
                let form = if p.generalized().is_some() {
                    "global"
                } else {
                    "local"
                };
                (p.clone(), form)
            }),
        };
        let Some((problem, form)) = got else {
            left_out.push(e.name.clone());
            continue;
        };
        let answer = match (&reference, &e.source) {
            (Some(r), Source::File(f)) => Some(r.answer(f, &problem)?),
            _ => None,
        };
        loaded.push(Loaded {
            entry: e,
            problem,
            form,
            reference: answer,
        });
    }
    Ok((loaded, left_out))
}

/// What the rounds gave per (problem, solver): the first round's answer (or why the solve
/// failed) and every round's seconds and build seconds.
#[derive(Default)]
struct Rounds {
    first: BTreeMap<(usize, usize), Result<LocalSolve, String>>,
    times: BTreeMap<(usize, usize), (Vec<f64>, Vec<f64>)>,
}

impl Rounds {
    /// Round `round`: every problem, every solver once, the solvers in reverse order on odd
    /// rounds (module doc); `exempt` marks the solvers the slow cut spares.
    fn run(
        &mut self,
        cfg: &ProblemsConfig,
        round: usize,
        solvers: &[ResolvedSolver],
        exempt: &[bool],
        loaded: &[Loaded],
    ) {
        for (pi, p) in loaded.iter().enumerate() {
            for k in 0..solvers.len() {
                let si = if round.is_multiple_of(2) {
                    k
                } else {
                    solvers.len() - 1 - k
                };
                if !self.skips(cfg, round, (pi, si), exempt[si]) {
                    self.solve(&solvers[si], (pi, si), &p.problem);
                }
            }
        }
    }

    /// Whether the pair `key` sits out round `round`: its first solve failed, or its median
    /// time passed `slow_seconds` after `slow_rounds` rounds and it is not `exempt`.
    fn skips(&self, cfg: &ProblemsConfig, round: usize, key: (usize, usize), exempt: bool) -> bool {
        if self.first.get(&key).is_some_and(Result::is_err) {
            return true;
        }
        match (cfg.slow_seconds, self.times.get(&key)) {
            (Some(limit), Some((t, _))) => round >= cfg.slow_rounds && median(t) > limit && !exempt,
            _ => false,
        }
    }

    /// One timed solve of `problem` by `solver`, the pair `key`: the first is judged and kept,
    /// later ones only timed.
    fn solve(&mut self, solver: &ResolvedSolver, key: (usize, usize), problem: &StepProblem) {
        // A fast solve is preceded by one untimed, so that its code and the allocator's state
        // are its own and not the previous solver's.
        let fast = self
            .times
            .get(&key)
            .and_then(|(t, _)| t.last())
            .is_some_and(|&t| t < WARM_UP_BELOW_SECONDS);
        if fast {
            let _ = solver.run(&problem.clone(), None);
        }
        // A fresh copy: nothing an earlier round derived is reused.
        let fresh = problem.clone();
        let timed = if self.first.contains_key(&key) {
            solver
                .run(&fresh, None)
                .map(|o| (o.seconds, o.build_seconds, None))
        } else {
            solver
                .solve(&fresh, None)
                .map(|s| (s.seconds, s.build_seconds, Some(s)))
        };
        match timed {
            Ok((seconds, build, judged)) => {
                let t = self.times.entry(key).or_default();
                t.0.push(seconds);
                t.1.push(build);
                if let Some(s) = judged {
                    self.first.insert(key, Ok(s));
                }
            }
            Err(e) => {
                self.first.insert(key, Err(e.to_string()));
            }
        }
    }
}

/// The rows of the run, problems in order, solvers in the config's.
fn rows(
    ctx: Context<'_>,
    cfg: &ProblemsConfig,
    solvers: &[ResolvedSolver],
    loaded: &[Loaded],
    mut rounds: Rounds,
) -> Vec<ProblemRow> {
    let mut rows = Vec::with_capacity(loaded.len() * solvers.len());
    for (pi, p) in loaded.iter().enumerate() {
        for (si, (solver, spec)) in solvers.iter().zip(&cfg.solvers).enumerate() {
            let model = own_model(ctx, solver, spec);
            let (seconds, builds) = rounds.times.remove(&(pi, si)).unwrap_or_default();
            let mut row = ProblemRow::timed(cfg, p, spec, model, &seconds, &builds);
            match rounds.first.remove(&(pi, si)) {
                Some(Ok(s)) => row.judged(s, model, p, cfg.answers),
                Some(Err(message)) => row.message = message,
                None => row.message = "not solved".into(),
            }
            rows.push(row);
        }
    }
    rows
}

impl ProblemRow {
    /// The row of problem `p` and solver `spec` (its friction `model`) with its rounds'
    /// `seconds` and `builds`, not yet judged (status `error`, NaN figures).
    fn timed(
        cfg: &ProblemsConfig,
        p: &Loaded,
        spec: &contactlab_runs::SolverSpec,
        model: Model,
        seconds: &[f64],
        builds: &[f64],
    ) -> ProblemRow {
        ProblemRow {
            run: p.entry.index,
            problem_set: cfg.sets[p.entry.set].name.clone(),
            problem: p.entry.name.clone(),
            form: p.form,
            n_c: p.problem.num_contacts(),
            dofs: p.problem.generalized().map_or(0, |g| g.num_dofs()),
            solver: spec.name(),
            formulation: spec.formulation.name.clone(),
            optimizer: spec.optimizer.name.clone(),
            layout: layout_name(spec),
            model: model.as_str().to_string(),
            status: "error".into(),
            solver_status: "error".into(),
            iterations: 0,
            residual: f64::NAN,
            cone_violation: f64::NAN,
            complementarity_gap: f64::NAN,
            own_violation: f64::NAN,
            rounds: seconds.len(),
            seconds: median(seconds),
            seconds_min: seconds.iter().copied().fold(f64::NAN, f64::min),
            build_seconds: median(builds),
            counters: BTreeMap::new(),
            diagnostics: BTreeMap::new(),
            reference: BTreeMap::new(),
            message: String::new(),
            answer: None,
        }
    }

    /// Fills in the first round's answer `s` on problem `p`: the shared ruler's figures, the
    /// solver's own law's violation, the reference's figures and, when kept, the impulses.
    fn judged(&mut self, s: LocalSolve, model: Model, p: &Loaded, answers: bool) {
        self.own_violation = own_violation(model, &p.problem, &s);
        if let Some(a) = &p.reference {
            self.reference = a.figures(&s.r);
        }
        self.status = s.status.as_str().to_string();
        self.solver_status = s.solver_status.as_str().to_string();
        self.iterations = s.iterations;
        self.residual = s.metrics.natural_map;
        self.cone_violation = s.metrics.cone_violation;
        self.complementarity_gap = s.metrics.complementarity_gap;
        self.counters = s.counters;
        self.diagnostics = s.diagnostics;
        if answers {
            self.answer = Some(s.r);
        }
    }
}

/// The rows as a DataFrame: one column per [`ProblemRow`] field, one per counter (0 where a
/// solver did not report it), per diagnostic and per reference figure (NaN where absent), and
/// the answers' impulses as the list column `r` when rows keep them (null where a row has none).
pub fn problems_frame(rows: &[ProblemRow]) -> PolarsResult<DataFrame> {
    macro_rules! col {
        ($f:ident) => {
            rows.iter().map(|r| r.$f.clone()).collect::<Vec<_>>()
        };
    }
    let mut df = df!(
        problems::RUN => rows.iter().map(|r| r.run as u64).collect::<Vec<_>>(),
        problems::PROBLEM_SET => col!(problem_set),
        problems::PROBLEM => col!(problem),
        problems::FORM => col!(form),
        problems::N_C => rows.iter().map(|r| r.n_c as u64).collect::<Vec<_>>(),
        problems::DOFS => rows.iter().map(|r| r.dofs as u64).collect::<Vec<_>>(),
        problems::SOLVER => col!(solver),
        problems::FORMULATION => col!(formulation),
        problems::OPTIMIZER => col!(optimizer),
        problems::LAYOUT => col!(layout),
        problems::MODEL => col!(model),
        problems::STATUS => col!(status),
        problems::SOLVER_STATUS => col!(solver_status),
        problems::ITERATIONS => col!(iterations),
        problems::RESIDUAL => col!(residual),
        problems::CONE_VIOLATION => col!(cone_violation),
        problems::COMPLEMENTARITY_GAP => col!(complementarity_gap),
        problems::OWN_VIOLATION => col!(own_violation),
        problems::ROUNDS => rows.iter().map(|r| r.rounds as u64).collect::<Vec<_>>(),
        problems::SECONDS => col!(seconds),
        problems::SECONDS_MIN => col!(seconds_min),
        problems::BUILD_SECONDS => col!(build_seconds),
        problems::MESSAGE => col!(message),
    )?;
    let counters: BTreeSet<&String> = rows.iter().flat_map(|r| r.counters.keys()).collect();
    for name in counters {
        let v: Vec<u64> = rows
            .iter()
            .map(|r| r.counters.get(name).copied().unwrap_or(0))
            .collect();
        df.with_column(Column::new(name.as_str().into(), v))?;
    }
    let diagnostics: BTreeSet<&String> = rows.iter().flat_map(|r| r.diagnostics.keys()).collect();
    for name in diagnostics {
        let v: Vec<f64> = rows
            .iter()
            .map(|r| r.diagnostics.get(name).copied().unwrap_or(f64::NAN))
            .collect();
        df.with_column(Column::new(name.as_str().into(), v))?;
    }
    let figures: BTreeSet<&'static str> = rows
        .iter()
        .flat_map(|r| r.reference.keys().copied())
        .collect();
    for name in figures {
        let v: Vec<f64> = rows
            .iter()
            .map(|r| r.reference.get(name).copied().unwrap_or(f64::NAN))
            .collect();
        df.with_column(Column::new(name.into(), v))?;
    }
    if rows.iter().any(|r| r.answer.is_some()) {
        let answers: Vec<Option<Series>> = rows
            .iter()
            .map(|r| {
                r.answer
                    .as_ref()
                    .map(|a| Series::new(PlSmallStr::EMPTY, a.as_slice()))
            })
            .collect();
        let list: ListChunked = answers.into_iter().collect();
        df.with_column(Column::new(problems::R.into(), list.into_series()))?;
    }
    Ok(df)
}
