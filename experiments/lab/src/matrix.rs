//! Running the cross-paper matrix (its config: [`contactlab_runs::matrix`]): each problem is
//! loaded once and solved by every pair in turn; problems go across cores with rayon and come
//! back in problem order.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use contactlab_core::io::read_problem;
use contactlab_core::StepProblem;
use indicatif::{ProgressBar, ProgressStyle};
use polars::prelude::*;
use rayon::prelude::*;

use contactlab_runs::matrix::{MatrixConfig, ProblemEntry, Source};
use contactlab_runs::schema::matrix;

use crate::context::Context;
use crate::plan::ExperimentPlan;
use crate::reference::{MujocoRows, Reference};
use crate::registry::{Pair, Registry, ResolvedSolver, SolverSpec};
use crate::runner::RunError;

/// One (problem, pair) solve.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixRow {
    /// The problem's number (shards split on it).
    pub run: usize,
    /// The problem set.
    pub problem_set: String,
    /// The problem's name.
    pub problem: String,
    /// `local` or `global` (as stored: a global problem's contact-space form is derived).
    pub form: &'static str,
    /// Contacts.
    pub n_c: usize,
    /// Formulation.
    pub formulation: &'static str,
    /// Driver.
    pub optimizer: &'static str,
    /// The formulation's friction model (`coulomb_cone`, `friction_pyramid`, `regularized`,
    /// `maximum_dissipation`).
    pub model: String,
    /// The set's relative tolerance.
    pub tol: f64,
    /// The status by the shared ruler (a regularized model's own: see
    /// [`contactlab_core::plugin::judge`]); `error` when the pair refused the problem.
    pub status: String,
    /// The driver's own status.
    pub solver_status: String,
    /// Solved by its own model: the ruler's `converged` for the Coulomb cone, the driver's
    /// own for a model the ruler does not measure (pyramid, regularized, maximum dissipation).
    pub solved: bool,
    /// FCLib's error at most `tol`: solved as the rigid Coulomb problem.
    pub solved_coulomb: bool,
    /// Iterations.
    pub iterations: u64,
    /// Seconds of the solve (the ruler excluded).
    pub seconds: f64,
    /// The shared ruler's residual `|F_nat| / (1 + |q|)`.
    pub residual: f64,
    /// FCLib's (Acary et al.'s) error `|F_nat| / |q|`.
    pub error_fclib: f64,
    /// Siconos' current error `|F_nat| / max(|q|, |r|, |u|)`.
    pub error_siconos: f64,
    /// `max_a dist(r_a, K_mu)`.
    pub cone_violation: f64,
    /// `sum_a |r_a . û_a|`.
    pub complementarity_gap: f64,
    /// The answer's distance from the set's reference impulses (MuJoCo's), relative, over
    /// every row ([`MujocoRows::distances`]); `NaN` without a reference or an answer.
    pub reference_distance: f64,
    /// The answer's distance from the reference's row velocities, relative, over every row.
    pub reference_distance_u: f64,
    /// The constraint kind the pair does not take, when it refused the problem for it before
    /// running (empty otherwise).
    pub refused_kind: String,
    /// Why a pair refused the problem or the problem could not be read (empty otherwise).
    pub message: String,
}

/// What a matrix run produced.
#[derive(Debug, Clone)]
pub struct MatrixOutput {
    /// One row per (problem, pair), problems in order, pairs in registry order.
    pub rows: Vec<MatrixRow>,
    /// Problems run.
    pub problems: usize,
    /// Pairs run.
    pub pairs: usize,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The absolute bound on the shared ruler that means FCLib's error `|F| / |q| <= tol`.
fn ruler_tol(tol: f64, q_norm: f64) -> f64 {
    // A problem with q = 0 is solved by r = 0 exactly; keep a positive bound.
    (tol * q_norm / (1.0 + q_norm)).max(f64::MIN_POSITIVE)
}

/// The worst-case time of a run: every solve using its whole limit, spread over `threads`.
pub fn worst_case_seconds(problems: usize, pairs: usize, limit: f64, threads: usize) -> f64 {
    problems as f64 * pairs as f64 * limit / threads.max(1) as f64
}

/// The matrix's problems a shard keeps (all without one), numbered over the whole matrix.
pub fn shard_problems(
    ctx: Context<'_>,
    cfg: &MatrixConfig,
    config_path: &Path,
    shard: Option<(usize, usize)>,
) -> Result<Vec<ProblemEntry>, RunError> {
    Ok(cfg
        .problems(ctx.root, config_path)?
        .into_iter()
        .filter(|p| shard.is_none_or(|(k, n)| p.index % n == k - 1))
        .collect())
}

/// Runs `pairs` on `problems` with the context's registry, on the current rayon pool.
/// [`Lab::run_matrix`](crate::Lab::run_matrix) checks the config, picks the pairs and the shard's problems.
pub fn run_matrix(
    ctx: Context<'_>,
    cfg: &MatrixConfig,
    pairs: &[Pair],
    problems: &[ProblemEntry],
) -> Result<MatrixOutput, RunError> {
    let scenes = scene_steps(ctx, problems)?;
    let bar = if ctx.settings.progress {
        ProgressBar::new(problems.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("matrix [{bar:30}] {pos}/{len} problems, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let references: Vec<Option<Reference>> = cfg
        .sets
        .iter()
        .map(|s| {
            s.reference
                .as_ref()
                .map(|d| Reference::mujoco(ctx.root.join(d)))
        })
        .collect();
    let start = Instant::now();
    let rows: Vec<Vec<MatrixRow>> = problems
        .par_iter()
        .map(|p| {
            let reference = references.get(p.set).and_then(Option::as_ref);
            let rows = solve_problem(ctx.registry, cfg, pairs, p, &scenes, reference);
            bar.inc(1);
            rows
        })
        .collect();
    bar.finish_and_clear();
    Ok(MatrixOutput {
        rows: rows.into_iter().flatten().collect(),
        problems: problems.len(),
        pairs: pairs.len(),
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The scene problems the shard needs, simulated once per (config, run).
pub(crate) fn scene_steps(
    ctx: Context<'_>,
    problems: &[ProblemEntry],
) -> Result<BTreeMap<usize, StepProblem>, RunError> {
    let mut wanted: BTreeMap<(std::path::PathBuf, usize), Vec<(usize, usize)>> = BTreeMap::new();
    for p in problems {
        if let Source::Scene { config, run, step } = &p.source {
            wanted
                .entry((config.clone(), *run))
                .or_default()
                .push((*step, p.index));
        }
    }
    let found: Vec<Result<Vec<(usize, StepProblem)>, RunError>> = wanted
        .into_par_iter()
        .map(|((config, run), steps)| {
            let numbers: Vec<usize> = steps.iter().map(|s| s.0).collect();
            let plan = ExperimentPlan::load(ctx, &config)?;
            let kept = crate::dump::scene_problems(&plan, run, &numbers)?;
            Ok(kept
                .into_iter()
                .flat_map(|k| {
                    steps
                        .iter()
                        .filter(move |s| s.0 == k.step)
                        .map(move |s| (s.1, k.problem.clone()))
                })
                .collect())
        })
        .collect();
    let mut out = BTreeMap::new();
    for f in found {
        out.extend(f?);
    }
    Ok(out)
}

fn load(
    p: &ProblemEntry,
    scenes: &BTreeMap<usize, StepProblem>,
) -> Result<(StepProblem, &'static str), String> {
    match &p.source {
        Source::File(path) => {
            let problem = read_problem(path).map_err(|e| e.to_string())?;
            let form = match problem {
                contactlab_core::Problem::Local(_) => "local",
                contactlab_core::Problem::Global(_) => "global",
            };
            Ok((
                StepProblem::from_problem(&problem).map_err(|e| e.to_string())?,
                form,
            ))
        }
        Source::Scene { .. } => scenes
            .get(&p.index)
            .map(|s| {
                (
                    s.clone(),
                    if s.generalized().is_some() {
                        "global"
                    } else {
                        "local"
                    },
                )
            })
            .ok_or_else(|| format!("{}: the scene did not produce this step", p.name)),
    }
}

/// MuJoCo's answer to a file problem of a set with a reference (`None` without one).
fn reference_rows(
    reference: Option<&Reference>,
    p: &ProblemEntry,
    rows: usize,
) -> Result<Option<MujocoRows>, String> {
    match (reference, &p.source) {
        (Some(r), Source::File(path)) => r.rows(path, rows).map(Some).map_err(|e| e.to_string()),
        _ => Ok(None),
    }
}

/// What every pair's row of one problem shares.
struct ProblemRun<'a> {
    registry: &'a Registry,
    cfg: &'a MatrixConfig,
    p: &'a ProblemEntry,
    form: &'static str,
    n_c: usize,
    tol: f64,
}

impl ProblemRun<'_> {
    /// The row of a pair that did not solve (refused, or the problem unreadable).
    fn blank(&self, pair: &Pair, message: String) -> MatrixRow {
        MatrixRow {
            model: pair_model(self.registry, pair)
                .map_or_else(String::new, |m| m.as_str().to_string()),
            run: self.p.index,
            problem_set: self.cfg.sets[self.p.set].name.clone(),
            problem: self.p.name.clone(),
            form: self.form,
            n_c: self.n_c,
            formulation: pair.formulation,
            optimizer: pair.optimizer,
            tol: self.tol,
            status: "error".into(),
            solver_status: "error".into(),
            solved: false,
            solved_coulomb: false,
            iterations: 0,
            seconds: f64::NAN,
            residual: f64::NAN,
            error_fclib: f64::NAN,
            error_siconos: f64::NAN,
            cone_violation: f64::NAN,
            complementarity_gap: f64::NAN,
            reference_distance: f64::NAN,
            reference_distance_u: f64::NAN,
            refused_kind: String::new(),
            message,
        }
    }
}

fn solve_problem(
    registry: &Registry,
    cfg: &MatrixConfig,
    pairs: &[Pair],
    p: &ProblemEntry,
    scenes: &BTreeMap<usize, StepProblem>,
    reference: Option<&Reference>,
) -> Vec<MatrixRow> {
    let mut run = ProblemRun {
        registry,
        cfg,
        p,
        form: "",
        n_c: 0,
        tol: cfg.set_tol(p.set),
    };
    let fail = |run: &ProblemRun<'_>, e: String| -> Vec<MatrixRow> {
        pairs
            .iter()
            .map(|pair| run.blank(pair, e.clone()))
            .collect()
    };
    let (problem, form) = match load(p, scenes) {
        Ok(x) => x,
        Err(e) => return fail(&run, e),
    };
    run.form = form;
    run.n_c = problem.num_contacts();
    let q = match problem.free_velocity() {
        Ok(q) => q,
        Err(e) => return fail(&run, e.to_string()),
    };
    let mujoco = match reference_rows(reference, p, q.len()) {
        Ok(m) => m,
        Err(e) => return fail(&run, e),
    };
    pairs
        .iter()
        .map(|pair| solve_pair(&run, pair, &problem, &q, mujoco.as_ref()))
        .collect()
}

/// One pair on one problem: refused before it runs when the problem has a kind the pair does
/// not take, else solved and judged by the shared ruler, and measured against the reference.
fn solve_pair(
    run: &ProblemRun<'_>,
    pair: &Pair,
    problem: &StepProblem,
    q: &[f64],
    mujoco: Option<&MujocoRows>,
) -> MatrixRow {
    let q_norm = norm(q);
    let abs_tol = ruler_tol(run.tol, q_norm);
    let mut spec = SolverSpec::new(pair.formulation, pair.optimizer, abs_tol, run.cfg.max_iter);
    spec.time_limit = Some(run.cfg.time_limit);
    spec.rel_tol = run.cfg.rel_tol;
    let resolved = match run.registry.resolve(&spec) {
        Ok(r) => r,
        Err(e) => return run.blank(pair, e.to_string()),
    };
    if let Some(kind) = refused_kind(&resolved, problem) {
        let message = format!(
            "{} does not take {kind}: it takes {}",
            resolved.label,
            resolved.kinds.join(", ")
        );
        return MatrixRow {
            refused_kind: kind,
            ..run.blank(pair, message)
        };
    }
    let s = match resolved.solve(problem, None) {
        Ok(s) => s,
        Err(e) => {
            let message = e.to_string();
            return MatrixRow {
                refused_kind: driver_refusal(&message).unwrap_or_default(),
                ..run.blank(pair, message)
            };
        }
    };
    let f_nat = s.metrics.natural_map * (1.0 + q_norm);
    let scale = q_norm.max(norm(&s.r)).max(norm(&s.u));
    let solved_coulomb = s.metrics.natural_map <= abs_tol;
    let own = s.solver_status == contactlab_core::Status::Converged;
    let model = pair_model(run.registry, pair).unwrap_or(s.model);
    let (reference_distance, reference_distance_u) =
        mujoco.map_or((f64::NAN, f64::NAN), |m| m.distances(&s.r, &s.u, q));
    MatrixRow {
        status: s.status.as_str().to_string(),
        solver_status: s.solver_status.as_str().to_string(),
        solved: if model == contactlab_core::plugin::Model::CoulombCone {
            solved_coulomb
        } else {
            own
        },
        solved_coulomb,
        model: model.as_str().to_string(),
        iterations: s.iterations,
        seconds: s.seconds,
        residual: s.metrics.natural_map,
        error_fclib: f_nat / q_norm,
        error_siconos: f_nat / scale,
        cone_violation: s.metrics.cone_violation,
        complementarity_gap: s.metrics.complementarity_gap,
        reference_distance,
        reference_distance_u,
        ..run.blank(pair, String::new())
    }
}

/// The block a driver refused at the start of its solve, when it takes the block's kind but
/// not that block (bisection-sor on contacts of condim 4 and 6: "`bisection-sor` refuses
/// constraint 3 (contact (condim 4)): why"): the block's description.
fn driver_refusal(message: &str) -> Option<String> {
    let rest = &message[message.find(" refuses constraint ")? + " refuses constraint ".len()..];
    let open = rest.find(" (")? + 2;
    let close = rest.find("): ")?;
    (open <= close).then(|| rest[open..close].to_string())
}

/// The first constraint kind of `problem` the pair does not take (`None` when it takes all).
fn refused_kind(resolved: &ResolvedSolver, problem: &StepProblem) -> Option<String> {
    problem.first_refused(|b| resolved.kinds.contains(&b.label()))
}

/// The law a pair's answers satisfy: the driver's own model when it declares one (Hwangbo et
/// al.'s bisection solves maximum dissipation, eq. 8, on the Coulomb problem's data), else the
/// formulation's; `None` when neither name resolves.
fn pair_model(registry: &Registry, pair: &Pair) -> Option<contactlab_core::plugin::Model> {
    let driver = registry.driver(pair.optimizer).ok().and_then(|d| d.model);
    let formulation = registry.formulation(pair.formulation).ok().map(|f| f.model);
    driver.or(formulation)
}

/// The matrix's rows as a DataFrame, one column per [`MatrixRow`] field.
pub fn matrix_frame(rows: &[MatrixRow]) -> PolarsResult<DataFrame> {
    macro_rules! col {
        ($f:ident) => {
            rows.iter().map(|r| r.$f.clone()).collect::<Vec<_>>()
        };
    }
    df!(
        matrix::RUN => rows.iter().map(|r| r.run as u64).collect::<Vec<_>>(),
        matrix::PROBLEM_SET => col!(problem_set),
        matrix::PROBLEM => col!(problem),
        matrix::FORM => col!(form),
        matrix::N_C => rows.iter().map(|r| r.n_c as u64).collect::<Vec<_>>(),
        matrix::FORMULATION => col!(formulation),
        matrix::OPTIMIZER => col!(optimizer),
        matrix::MODEL => col!(model),
        matrix::TOL => col!(tol),
        matrix::STATUS => col!(status),
        matrix::SOLVER_STATUS => col!(solver_status),
        matrix::SOLVED => col!(solved),
        matrix::SOLVED_COULOMB => col!(solved_coulomb),
        matrix::ITERATIONS => col!(iterations),
        matrix::SECONDS => col!(seconds),
        matrix::RESIDUAL => col!(residual),
        matrix::ERROR_FCLIB => col!(error_fclib),
        matrix::ERROR_SICONOS => col!(error_siconos),
        matrix::CONE_VIOLATION => col!(cone_violation),
        matrix::COMPLEMENTARITY_GAP => col!(complementarity_gap),
        matrix::REFERENCE_DISTANCE => col!(reference_distance),
        matrix::REFERENCE_DISTANCE_U => col!(reference_distance_u),
        matrix::REFUSED_KIND => col!(refused_kind),
        matrix::MESSAGE => col!(message),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drivers_refusal_at_the_start_names_the_block() {
        let m = "bisection-sor refuses constraint 3 (contact (condim 4)): condim 4 has 3 rows";
        assert_eq!(driver_refusal(m).as_deref(), Some("contact (condim 4)"));
        assert_eq!(driver_refusal("the line search failed (step 0)"), None);
    }

    #[test]
    fn the_ruler_bound_is_fclibs_relative_error() {
        // |F| / (1 + |q|) <= tol |q| / (1 + |q|)  <=>  |F| / |q| <= tol.
        let (tol, q) = (1e-6, 4.0);
        let f = tol * q;
        assert!((f / (1.0 + q) - ruler_tol(tol, q)).abs() < 1e-20);
        assert!(ruler_tol(1e-6, 0.0) > 0.0);
        assert_eq!(worst_case_seconds(10, 36, 0.5, 2), 90.0);
    }
}
