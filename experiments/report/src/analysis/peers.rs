//! The statistics of the comparison beside MuJoCo and Drake (`reports/peers/`), from three
//! kinds of run:
//!
//! - a problem-set run (`kind = "problems"`): every solver, in two layouts, on MuJoCo's exported
//!   steps, one row per (problem, solver) with the median over timed rounds ([`solves`]);
//! - other-engine runs (`kind = "engines"`): MuJoCo's constraint-solve times on the same steps
//!   ([`mujoco_solves`]) and MuJoCo's and Drake's whole steps on the same scenes
//!   ([`peer_steps`]); a run that could not measure says why in its `skipped` column
//!   ([`skipped`]);
//! - experiment sweeps of this project's scenes, whose driver rows give our whole steps
//!   ([`whole_steps`]).
//!
//! Every time is a median: per problem over rounds (the run's), then over a set's problems;
//! a ratio is taken per problem (or scene), then its median over the set.

use std::collections::BTreeMap;

use contactlab_runs::schema::{engines, problems, steps};
use polars::prelude::{DataFrame, DataType};

use super::{f64s, quantile, strs, AnalysisError};

/// The median of the finite values (NaN without any).
pub fn median(values: &[f64]) -> f64 {
    quantile(values, 0.5)
}

/// A problem's name without its file extension (`clutter_n8_..._nc20.json` -> `clutter_n8_..._nc20`),
/// as MuJoCo's harness names it.
pub fn problem_stem(name: &str) -> &str {
    name.rsplit_once('.')
        .filter(|(_, ext)| ["json", "hdf5"].contains(ext))
        .map_or(name, |(stem, _)| stem)
}

/// A solve's islands and its largest island's contacts from the run's counters: a solve that
/// did not split the problem reports neither (its counters read 0), and solved it as one island
/// of all `contacts`.
pub fn islands_of(islands: f64, largest_island: f64, contacts: usize) -> (u64, u64) {
    if islands >= 1.0 {
        (islands as u64, largest_island as u64)
    } else {
        (u64::from(contacts > 0), contacts as u64)
    }
}

/// `max |a - b| / max |b|`: how far answer `a` is from answer `b`, relative to `b`'s largest
/// impulse (NaN when the lengths differ or `b` is empty).
pub fn relative_gap(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || b.is_empty() {
        return f64::NAN;
    }
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter()
        .zip(b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// One (problem, solver) row of a problem-set run, as the report reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Solve {
    /// The problem's name without its extension.
    pub problem: String,
    /// The problem set (the config's `[[sets]]` name).
    pub set: String,
    /// Contacts.
    pub contacts: usize,
    /// The solver's label.
    pub solver: String,
    /// `formulation+optimizer`: the same pair in every layout.
    pub pair: String,
    /// `islands+blocks`, `whole+dense`, ...
    pub layout: String,
    /// Status by the shared ruler.
    pub status: String,
    /// Iterations (the largest island's for a split problem).
    pub iterations: f64,
    /// Iterations summed over the islands (MuJoCo counts its own this way).
    pub island_iterations: f64,
    /// Islands solved ([`islands_of`]).
    pub islands: u64,
    /// Contacts of the largest island ([`islands_of`]).
    pub largest_island: u64,
    /// The shared ruler's natural-map residual.
    pub residual: f64,
    /// Timed rounds.
    pub rounds: usize,
    /// Median seconds over the rounds.
    pub seconds: f64,
    /// The fastest round's seconds (NaN when the run did not record it): the statistic the
    /// machine's load moves least, the code being deterministic.
    pub seconds_min: f64,
    /// Median seconds of the formulation's build.
    pub build_seconds: f64,
    /// The answer's impulses (empty when the run did not keep answers).
    pub answer: Vec<f64>,
}

impl Solve {
    /// Whether the shared ruler (a regularized model's own optimality) calls it converged.
    pub fn converged(&self) -> bool {
        self.status == "converged"
    }
}

/// The column `name`, or zeros when the run has no such counter.
fn counter_or_zero(df: &DataFrame, name: &str) -> Result<Vec<f64>, AnalysisError> {
    Ok(super::counter(df, name)?)
}

/// The rows of a problem-set run (`contactlab_lab::problems`), in the run's order.
pub fn solves(df: &DataFrame) -> Result<Vec<Solve>, AnalysisError> {
    let (problem, set, solver, f, o, layout, status) = (
        strs(df, problems::PROBLEM)?,
        strs(df, problems::PROBLEM_SET)?,
        strs(df, problems::SOLVER)?,
        strs(df, problems::FORMULATION)?,
        strs(df, problems::OPTIMIZER)?,
        strs(df, problems::LAYOUT)?,
        strs(df, problems::STATUS)?,
    );
    let (n_c, iterations, residual, rounds, seconds, build) = (
        f64s(df, problems::N_C)?,
        f64s(df, problems::ITERATIONS)?,
        f64s(df, problems::RESIDUAL)?,
        f64s(df, problems::ROUNDS)?,
        f64s(df, problems::SECONDS)?,
        f64s(df, problems::BUILD_SECONDS)?,
    );
    let (islands, largest, summed) = (
        counter_or_zero(df, "islands")?,
        counter_or_zero(df, "largest_island")?,
        counter_or_zero(df, "island_iterations")?,
    );
    let answers = answers(df)?;
    let seconds_min = if df
        .get_column_names()
        .iter()
        .any(|n| n.as_str() == problems::SECONDS_MIN)
    {
        f64s(df, problems::SECONDS_MIN)?
    } else {
        vec![f64::NAN; df.height()]
    };
    Ok((0..df.height())
        .map(|i| {
            let contacts = n_c[i] as usize;
            let (islands, largest_island) = islands_of(islands[i], largest[i], contacts);
            Solve {
                problem: problem_stem(&problem[i]).to_string(),
                set: set[i].clone(),
                contacts,
                solver: solver[i].clone(),
                pair: format!("{}+{}", f[i], o[i]),
                layout: layout[i].clone(),
                status: status[i].clone(),
                iterations: iterations[i],
                island_iterations: if summed[i] > 0.0 {
                    summed[i]
                } else {
                    iterations[i]
                },
                islands,
                largest_island,
                residual: residual[i],
                rounds: rounds[i] as usize,
                seconds: seconds[i],
                seconds_min: seconds_min[i],
                build_seconds: build[i],
                answer: answers.get(i).cloned().unwrap_or_default(),
            }
        })
        .collect())
}

/// The list column `r` (each row's impulses), empty lists where absent.
fn answers(df: &DataFrame) -> Result<Vec<Vec<f64>>, AnalysisError> {
    let Ok(col) = df.column(problems::R) else {
        return Ok(vec![Vec::new(); df.height()]);
    };
    let list = col
        .cast(&DataType::List(Box::new(DataType::Float64)))?
        .list()?
        .clone();
    Ok((0..list.len())
        .map(|i| {
            list.get_as_series(i)
                .and_then(|s| s.f64().ok().map(|v| v.iter().flatten().collect()))
                .unwrap_or_default()
        })
        .collect())
}

/// Why an other-engine run did not measure (its `skipped` column), `None` when it did.
pub fn skipped(df: &DataFrame) -> Result<Option<String>, AnalysisError> {
    if df.column(engines::SKIPPED).is_err() {
        return Ok(None);
    }
    Ok(strs(df, engines::SKIPPED)?
        .into_iter()
        .find(|s| !s.is_empty()))
}

/// MuJoCo's constraint solve of one problem (`experiments/peers/solver_times.py`).
#[derive(Debug, Clone, PartialEq)]
pub struct MujocoSolve {
    /// The problem's name (its file stem).
    pub problem: String,
    /// Median seconds of `mj_fwdConstraint`: cold (the `auto_cold_own` variant: MuJoCo's
    /// default Jacobian, warm start disabled, its own tolerance), as each of our solves starts
    /// from zero; warm-started as the run was in runs from before that variant ([`Self::cold`]).
    pub seconds: f64,
    /// Iterations, summed over MuJoCo's islands, of the same solves.
    pub iterations: f64,
    /// Whether [`Self::seconds`] are cold solves.
    pub cold: bool,
    /// Timed repeats.
    pub repeats: f64,
    /// `abs_residual_inf` (m/s): the accuracy MuJoCo reached on its own problem.
    pub abs_residual: f64,
    /// Whether the replay reproduced the exported impulses.
    pub replay_matches: bool,
    /// The speed protocol's reference (the `auto_cold` variant: MuJoCo's default Jacobian,
    /// warm start disabled, its tolerance set by the run): median seconds, NaN when the run
    /// did not time it.
    pub cold_seconds: f64,
    /// Its iterations, summed over MuJoCo's islands.
    pub cold_iterations: f64,
    /// Its `opt.tolerance`.
    pub cold_tolerance: f64,
    /// MuJoCo's version.
    pub version: String,
}

/// MuJoCo's solves by problem, from a run of `solver_times.py` (records `problems`).
pub fn mujoco_solves(df: &DataFrame) -> Result<BTreeMap<String, MujocoSolve>, AnalysisError> {
    let problem = strs(df, "problem")?;
    // The cold solve at MuJoCo's own tolerance; runs from before that variant keep their
    // warm-started times.
    let own = df.column("variants_auto_cold_own_seconds_median").is_ok();
    let (seconds_col, iterations_col) = if own {
        (
            "variants_auto_cold_own_seconds_median",
            "variants_auto_cold_own_iterations",
        )
    } else {
        ("mujoco_constraint_seconds_median", "mujoco_iterations")
    };
    let (seconds, iterations, repeats, residual) = (
        f64s(df, seconds_col)?,
        f64s(df, iterations_col)?,
        f64s(df, "repeats")?,
        f64s(df, "accuracy_abs_residual_inf")?,
    );
    let replay = strs(df, "replay_matches")?;
    let version = strs(df, "mujoco_version")?;
    // Runs from before the cold variant have no such columns.
    let optional = |name: &str| -> Result<Vec<f64>, AnalysisError> {
        if df.column(name).is_ok() {
            Ok(f64s(df, name)?)
        } else {
            Ok(vec![f64::NAN; df.height()])
        }
    };
    let (cold, cold_iterations, cold_tolerance) = (
        optional("variants_auto_cold_seconds_median")?,
        optional("variants_auto_cold_iterations")?,
        optional("variants_auto_cold_tolerance")?,
    );
    Ok((0..df.height())
        .map(|i| {
            (
                problem[i].clone(),
                MujocoSolve {
                    problem: problem[i].clone(),
                    seconds: seconds[i],
                    iterations: iterations[i],
                    cold: own,
                    repeats: repeats[i],
                    abs_residual: residual[i],
                    replay_matches: replay[i] == "true",
                    version: version[i].clone(),
                    cold_seconds: cold[i],
                    cold_iterations: cold_iterations[i],
                    cold_tolerance: cold_tolerance[i],
                },
            )
        })
        .collect())
}

/// The distinct `(set, solver)` pairs of `items`, in first-seen order: the rows of a per-set
/// summary.
pub fn set_solver_pairs<'a>(
    items: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for (set, solver) in items {
        if !keys.iter().any(|(a, b)| a == set && b == solver) {
            keys.push((set.to_string(), solver.to_string()));
        }
    }
    keys
}

/// One line per (problem set, solver): what `peers.csv` and the per-set table say.
#[derive(Debug, Clone, PartialEq)]
pub struct SetRow {
    /// The problem set.
    pub set: String,
    /// The solver's label.
    pub solver: String,
    /// Problems in the set.
    pub problems: usize,
    /// Problems it solved ([`Solve::converged`]).
    pub solved: usize,
    /// Median over the set's problems of the iterations.
    pub median_iterations: f64,
    /// Median over the set's problems of the median seconds.
    pub median_seconds: f64,
    /// The same of MuJoCo's seconds (NaN without MuJoCo's).
    pub mujoco_median_seconds: f64,
    /// Median over the set's problems of our seconds over MuJoCo's (NaN without MuJoCo's).
    pub ratio_to_mujoco: f64,
}

/// Labels in order of first appearance.
fn first_seen<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in items {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// The problems of `set`, in the run's order.
fn problems_in(solves: &[Solve], set: &str) -> Vec<String> {
    first_seen(
        solves
            .iter()
            .filter(|s| s.set == set)
            .map(|s| s.problem.as_str()),
    )
}

/// Per set (in `sets`' order) and solver (in the run's order), the set's summary.
pub fn set_rows(
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    sets: &[String],
) -> Vec<SetRow> {
    let solvers = first_seen(solves.iter().map(|s| s.solver.as_str()));
    let mut out = Vec::new();
    for set in sets {
        let problems = problems_in(solves, set);
        let mj: Vec<f64> = problems
            .iter()
            .filter_map(|p| mujoco.get(p).map(|m| m.seconds))
            .collect();
        for solver in &solvers {
            let rows: Vec<&Solve> = solves
                .iter()
                .filter(|s| &s.set == set && &s.solver == solver)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let of = |f: &dyn Fn(&Solve) -> f64| -> f64 {
                median(&rows.iter().map(|s| f(s)).collect::<Vec<_>>())
            };
            out.push(SetRow {
                set: set.clone(),
                solver: solver.clone(),
                problems: rows.len(),
                solved: rows.iter().filter(|s| s.converged()).count(),
                median_iterations: of(&|s| s.iterations),
                median_seconds: of(&|s| s.seconds),
                mujoco_median_seconds: median(&mj),
                ratio_to_mujoco: of(&|s| {
                    mujoco
                        .get(&s.problem)
                        .map_or(f64::NAN, |m| s.seconds / m.seconds)
                }),
            });
        }
    }
    out
}

/// The layout of the default solve (islands, block-sparse `W`).
pub const ISLANDS: &str = "islands+blocks";
/// The layout of the baseline (the whole problem, dense `W`).
pub const WHOLE: &str = "whole+dense";

/// What islands and block-sparse `W` gain for one pair on one set: the pair's `islands+blocks`
/// solves against its `whole+dense` solves of the same problems.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutGain {
    /// The problem set.
    pub set: String,
    /// `formulation+optimizer`.
    pub pair: String,
    /// Problems solved in both layouts.
    pub problems: usize,
    /// Median over the problems of (whole, dense) seconds over (islands, blocks) seconds.
    pub gain: f64,
    /// The same by each solve's fastest round.
    pub gain_fastest: f64,
    /// Per problem, the gain by the fastest rounds.
    pub fastest_by_problem: Vec<(String, f64)>,
    /// The same with each layout's build taken out of its seconds.
    pub gain_without_build: f64,
    /// Median over the problems of the build's share of the islands layout's seconds.
    pub build_share_islands: f64,
    /// The same for the whole dense layout.
    pub build_share_dense: f64,
    /// Problems where both layouts converged.
    pub both_converged: usize,
    /// The largest [`relative_gap`] between the two layouts' answers where both converged
    /// (NaN without answers or without such a problem).
    pub answer_gap: f64,
    /// The statuses (both layouts) on the problems where not both converged, sorted, distinct.
    pub unsolved_statuses: Vec<String>,
    /// The fewest timed rounds of any of the pair's solves here.
    pub rounds_min: usize,
    /// Contacts of the set's largest problem.
    pub largest_contacts: usize,
    /// Contacts in that problem's largest island (islands layout).
    pub largest_island: u64,
}

impl LayoutGain {
    /// The problem with the smallest gain by the fastest rounds, and that gain (`None` when no
    /// problem has one).
    pub fn worst_fastest(&self) -> Option<(&str, f64)> {
        self.fastest_by_problem
            .iter()
            .filter(|(_, v)| !v.is_nan())
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(p, v)| (p.as_str(), *v))
    }
}

/// Per set (in `sets`' order) and pair (in the run's order) with both layouts, the gain of
/// islands and blocks over the whole dense problem.
pub fn layout_gains(solves: &[Solve], sets: &[String]) -> Vec<LayoutGain> {
    let pairs = first_seen(solves.iter().map(|s| s.pair.as_str()));
    let find = |set: &str, pair: &str, layout: &str, problem: &str| {
        solves
            .iter()
            .find(|s| s.set == set && s.pair == pair && s.layout == layout && s.problem == problem)
    };
    let mut out = Vec::new();
    for set in sets {
        let problems = problems_in(solves, set);
        for pair in &pairs {
            let both: Vec<(&Solve, &Solve)> = problems
                .iter()
                .filter_map(|p| Some((find(set, pair, ISLANDS, p)?, find(set, pair, WHOLE, p)?)))
                .collect();
            if both.is_empty() {
                continue;
            }
            let over = |f: &dyn Fn(&Solve, &Solve) -> f64| {
                median(&both.iter().map(|(a, b)| f(a, b)).collect::<Vec<_>>())
            };
            let after_build = |s: &Solve| s.seconds - s.build_seconds;
            let converged: Vec<&(&Solve, &Solve)> = both
                .iter()
                .filter(|(a, b)| a.converged() && b.converged())
                .collect();
            let gaps: Vec<f64> = converged
                .iter()
                .map(|(a, b)| relative_gap(&a.answer, &b.answer))
                .collect();
            let mut unsolved: Vec<String> = both
                .iter()
                .filter(|(a, b)| !(a.converged() && b.converged()))
                .flat_map(|(a, b)| [a.status.clone(), b.status.clone()])
                .collect();
            unsolved.sort();
            unsolved.dedup();
            let largest = both.iter().max_by_key(|(a, _)| a.contacts);
            out.push(LayoutGain {
                set: set.clone(),
                pair: pair.clone(),
                problems: both.len(),
                gain: over(&|a, b| b.seconds / a.seconds),
                gain_fastest: over(&|a, b| b.seconds_min / a.seconds_min),
                fastest_by_problem: both
                    .iter()
                    .map(|(a, b)| (a.problem.clone(), b.seconds_min / a.seconds_min))
                    .collect(),
                gain_without_build: over(&|a, b| after_build(b) / after_build(a)),
                build_share_islands: over(&|a, _| a.build_seconds / a.seconds),
                build_share_dense: over(&|_, b| b.build_seconds / b.seconds),
                both_converged: converged.len(),
                answer_gap: if gaps.is_empty() || gaps.iter().any(|g| g.is_nan()) {
                    f64::NAN
                } else {
                    gaps.iter().copied().fold(0.0, f64::max)
                },
                unsolved_statuses: unsolved,
                rounds_min: both
                    .iter()
                    .flat_map(|(a, b)| [a.rounds, b.rounds])
                    .min()
                    .unwrap_or(0),
                largest_contacts: largest.map_or(0, |(a, _)| a.contacts),
                largest_island: largest.map_or(0, |(a, _)| a.largest_island),
            });
        }
    }
    out
}

/// One engine's median whole step on one scene.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeStep {
    /// The scene, named as `bench.py` names it (`balls_in_box_n10_mu0.5`, `clutter_n40`).
    pub scene: String,
    /// `contactlab`, `mujoco` or `drake-sap`.
    pub engine: String,
    /// The solver (ours) or the engine's version and configuration.
    pub solver: String,
    /// Steps timed.
    pub steps: usize,
    /// Median contacts per step.
    pub contacts_median: f64,
    /// Median wall time of a whole step (s).
    pub median_seconds: f64,
    /// Where the step's time goes, when the run timed its stages apart.
    pub stages: Option<Stages>,
    /// The share of the steps with contacts whose solve made a symbolic analysis, when the
    /// run counted them (the others kept the previous step's).
    pub analysed_share: Option<f64>,
}

/// Where a whole step's time goes (s, each the median over the steps of its own part): collision
/// detection, building the contact problem (for us the scene's assembly and the formulation's
/// build; for MuJoCo the rest of `mj_fwdPosition` and the smooth dynamics), the solve, and
/// integration; with the medians of the per-step sums, whole and after collision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stages {
    /// Collision detection.
    pub collision: f64,
    /// Building the contact problem.
    pub build: f64,
    /// The constraint solve.
    pub solve: f64,
    /// Integration.
    pub integrate: f64,
    /// The whole step.
    pub total: f64,
    /// The whole step without collision detection.
    pub after_collision: f64,
}

impl Stages {
    /// The stages as `(name, seconds)`, in a step's order, the sums last.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("collision", self.collision),
            ("build", self.build),
            ("solve", self.solve),
            ("integrate", self.integrate),
            ("total", self.total),
            ("after_collision", self.after_collision),
        ]
    }
}

/// Our stages from per-step parts `(detect, scene, advance, seconds, build)` ([`Stages`]): the
/// scene's collision detection (timed by the scene inside `advance`), the rest of the scene's
/// own time before the solve plus the formulation's build, the solve without its build, and
/// `advance` without the detection. `None` when the scene did not time its detection.
fn our_stages(parts: &[[f64; 5]]) -> Option<Stages> {
    if parts.is_empty() || parts.iter().any(|p| !p[0].is_finite()) {
        return None;
    }
    let med = |f: &dyn Fn(&[f64; 5]) -> f64| median(&parts.iter().map(f).collect::<Vec<_>>());
    Some(Stages {
        collision: med(&|p| p[0]),
        build: med(&|p| (p[1] - p[2]) + p[4]),
        solve: med(&|p| p[3] - p[4]),
        integrate: med(&|p| p[2] - p[0]),
        total: med(&|p| p[1] + p[3]),
        after_collision: med(&|p| p[1] + p[3] - p[0]),
    })
}

/// One row per (scene, driver) of an experiment's steps frame: the driver's own rows (not its
/// shadows'), the median of `seconds + scene_seconds` (the solve, and the scene's collision
/// detection, assembly and update) over the run's steps.
pub fn whole_steps(df: &DataFrame) -> Result<Vec<WholeStep>, AnalysisError> {
    let role = strs(df, steps::ROLE)?;
    let solver = strs(df, steps::SOLVER)?;
    let seconds = f64s(df, steps::SECONDS)?;
    let scene_seconds = f64s(df, steps::SCENE_SECONDS)?;
    let contacts = f64s(df, steps::N_C)?;
    let scene = scene_names(df)?;
    let has = |c: &str| df.get_column_names().iter().any(|n| n.as_str() == c);
    let nan = vec![f64::NAN; df.height()];
    let build = if has(steps::BUILD_SECONDS) {
        f64s(df, steps::BUILD_SECONDS)?
    } else {
        nan.clone()
    };
    let (advance, detect) = if has(steps::ADVANCE_SECONDS) && has(steps::DETECT_SECONDS) {
        (
            f64s(df, steps::ADVANCE_SECONDS)?,
            f64s(df, steps::DETECT_SECONDS)?,
        )
    } else {
        (nan.clone(), nan)
    };
    let analysed = if has(steps::SYMBOLIC_FACTORIZATIONS) {
        f64s(df, steps::SYMBOLIC_FACTORIZATIONS)?
    } else {
        vec![f64::NAN; df.height()]
    };
    // ((scene, solver), [(step seconds, contacts, stage parts, analyses)]) in order of first
    // appearance.
    type Group = ((String, String), Vec<(f64, f64, [f64; 5], f64)>);
    let mut groups: Vec<Group> = Vec::new();
    for i in 0..df.height() {
        if role[i] != steps::ROLE_DRIVER {
            continue;
        }
        let key = (scene[i].clone(), solver[i].clone());
        let parts = [
            detect[i],
            scene_seconds[i],
            advance[i],
            seconds[i],
            build[i],
        ];
        let point = (
            seconds[i] + scene_seconds[i],
            contacts[i],
            parts,
            analysed[i],
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(point),
            None => groups.push((key, vec![point])),
        }
    }
    Ok(groups
        .into_iter()
        .map(|((scene, solver), v)| {
            let times: Vec<f64> = v.iter().map(|p| p.0).collect();
            let contacts: Vec<f64> = v.iter().map(|p| p.1).collect();
            let parts: Vec<[f64; 5]> = v.iter().map(|p| p.2).collect();
            let solved: Vec<f64> = v.iter().filter(|p| p.1 > 0.0).map(|p| p.3).collect();
            let analysed_share = (!solved.is_empty() && solved.iter().all(|a| a.is_finite()))
                .then(|| solved.iter().filter(|&&a| a > 0.0).count() as f64 / solved.len() as f64);
            WholeStep {
                scene,
                engine: "contactlab".into(),
                solver,
                steps: v.len(),
                contacts_median: median(&contacts),
                median_seconds: median(&times),
                stages: our_stages(&parts),
                analysed_share,
            }
        })
        .collect())
}

/// `bench.py`'s scene name of every row: `balls_in_box_n{n}_mu{mu}` or `clutter_n{n}`.
fn scene_names(df: &DataFrame) -> Result<Vec<String>, AnalysisError> {
    let names = df.get_column_names();
    let has = |c: &str| names.iter().any(|n| n.as_str() == c);
    if has("n_balls") && has("mu") {
        let (n, mu) = (f64s(df, "n_balls")?, f64s(df, "mu")?);
        Ok(n.iter()
            .zip(&mu)
            .map(|(n, mu)| format!("balls_in_box_n{}_mu{mu:?}", *n as u64))
            .collect())
    } else if has("n_bodies") {
        Ok(f64s(df, "n_bodies")?
            .iter()
            .map(|n| format!("clutter_n{}", *n as u64))
            .collect())
    } else {
        Err(AnalysisError::MissingData(
            "whole steps: a run without n_balls/mu or n_bodies".into(),
        ))
    }
}

/// What a run of `bench.py` measured ([`peer_steps`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSteps {
    /// One whole step per engine and scene that ran.
    pub rows: Vec<WholeStep>,
    /// The engines that failed, as `(configuration, error)`.
    pub errors: Vec<(String, String)>,
}

/// The peers' whole steps from a run of `bench.py` (one record per engine and scene), and the
/// errors of the engines that failed.
pub fn peer_steps(df: &DataFrame) -> Result<PeerSteps, AnalysisError> {
    let names = df.get_column_names();
    let has = |c: &str| names.iter().any(|n| n.as_str() == c);
    let text = |c: &str| -> Result<Vec<String>, AnalysisError> {
        if has(c) {
            Ok(strs(df, c)?)
        } else {
            Ok(vec![String::new(); df.height()])
        }
    };
    let (engine, config, scene, error) = (
        text("engine")?,
        text("config")?,
        text("scene")?,
        text("error")?,
    );
    let number = |c: &str| -> Result<Vec<f64>, AnalysisError> {
        if has(c) {
            Ok(f64s(df, c)?)
        } else {
            Ok(vec![f64::NAN; df.height()])
        }
    };
    let (ms, contacts, steps) = (
        number("step_median_ms")?,
        number("ncon_median")?,
        number("nsteps")?,
    );
    // `bench.py --stages`: mj_step's stages timed one by one (ms).
    let stage = |name: &str| number(&format!("stages_{name}_median_ms"));
    let stage_ms = [
        stage("collision")?,
        stage("build")?,
        stage("solve")?,
        stage("integrate")?,
        stage("total")?,
        stage("after_collision")?,
    ];
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for i in 0..df.height() {
        if !error[i].is_empty() {
            errors.push((config[i].clone(), error[i].clone()));
            continue;
        }
        let name = if engine[i].starts_with("mujoco") {
            "mujoco"
        } else if engine[i].starts_with("drake") {
            "drake-sap"
        } else {
            return Err(AnalysisError::MissingData(format!(
                "bench.py: unknown engine `{}`",
                engine[i]
            )));
        };
        rows.push(WholeStep {
            scene: scene[i].clone(),
            engine: name.into(),
            solver: format!("{} {}", engine[i], config[i]),
            steps: if steps[i].is_finite() {
                steps[i] as usize
            } else {
                0
            },
            contacts_median: contacts[i],
            median_seconds: ms[i] * 1e-3,
            stages: stage_ms.iter().all(|s| s[i].is_finite()).then(|| Stages {
                collision: stage_ms[0][i] * 1e-3,
                build: stage_ms[1][i] * 1e-3,
                solve: stage_ms[2][i] * 1e-3,
                integrate: stage_ms[3][i] * 1e-3,
                total: stage_ms[4][i] * 1e-3,
                after_collision: stage_ms[5][i] * 1e-3,
            }),
            analysed_share: None,
        });
    }
    Ok(PeerSteps { rows, errors })
}

/// The set a scene belongs to: the twelve cells of the balls in a box form `balls_in_box`, the
/// clutter's sizes form `clutter`, any other scene is a set of its own.
pub fn scene_set(scene: &str) -> &str {
    if scene.starts_with("balls_in_box") {
        "balls_in_box"
    } else if scene.starts_with("clutter_n") {
        "clutter"
    } else {
        scene
    }
}

/// One line of the whole-step table.
#[derive(Debug, Clone, PartialEq)]
pub struct SetSummary {
    /// `balls_in_box` (its cells) or a scene of its own (`clutter_n40`).
    pub set: String,
    /// Our solver.
    pub solver: String,
    /// Scenes in the set.
    pub scenes: usize,
    /// Our median contacts per step (median over the set's scenes).
    pub contacts_median: f64,
    /// Our median step (s), median over the set's scenes.
    pub median_seconds: f64,
    /// MuJoCo's, the same way (NaN when it did not run).
    pub mujoco_median_seconds: f64,
    /// Drake's, the same way (NaN when it did not run).
    pub drake_median_seconds: f64,
    /// Median over the set's scenes of our step time over MuJoCo's.
    pub ratio_to_mujoco: f64,
    /// The smallest of those per-scene ratios.
    pub ratio_min: f64,
    /// The largest.
    pub ratio_max: f64,
}

/// Per scene set ([`scene_set`], in order of first appearance) and our solver, our median step
/// beside MuJoCo's and Drake's, and the median of the per-scene ratios to MuJoCo with their
/// extremes.
pub fn summary(rows: &[WholeStep]) -> Vec<SetSummary> {
    let ours = || rows.iter().filter(|r| r.engine == "contactlab");
    let sets = first_seen(ours().map(|r| scene_set(&r.scene)));
    let peer = |engine: &str, scene: &str| {
        rows.iter()
            .find(|r| r.engine == engine && r.scene == scene)
            .map(|r| r.median_seconds)
    };
    let mut out = Vec::new();
    for set in sets {
        let member = |r: &&WholeStep| scene_set(&r.scene) == set;
        for solver in first_seen(ours().filter(member).map(|r| r.solver.as_str())) {
            let mine: Vec<&WholeStep> = ours()
                .filter(member)
                .filter(|r| r.solver == solver)
                .collect();
            let collect = |f: &dyn Fn(&WholeStep) -> Option<f64>| -> Vec<f64> {
                mine.iter().filter_map(|r| f(r)).collect()
            };
            let ratios = collect(&|r| peer("mujoco", &r.scene).map(|m| r.median_seconds / m));
            out.push(SetSummary {
                set: set.clone(),
                solver,
                scenes: mine.len(),
                contacts_median: median(&collect(&|r| Some(r.contacts_median))),
                median_seconds: median(&collect(&|r| Some(r.median_seconds))),
                mujoco_median_seconds: median(&collect(&|r| peer("mujoco", &r.scene))),
                drake_median_seconds: median(&collect(&|r| peer("drake-sap", &r.scene))),
                ratio_to_mujoco: median(&ratios),
                ratio_min: quantile(&ratios, 0.0),
                ratio_max: quantile(&ratios, 1.0),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    #[allow(clippy::too_many_arguments)]
    fn solve(
        set: &str,
        problem: &str,
        contacts: usize,
        pair: &str,
        layout: &str,
        status: &str,
        seconds: f64,
        build: f64,
        answer: &[f64],
    ) -> Solve {
        Solve {
            problem: problem.into(),
            set: set.into(),
            contacts,
            solver: if layout == ISLANDS {
                pair.to_string()
            } else {
                format!("{pair} (whole dense)")
            },
            pair: pair.into(),
            layout: layout.into(),
            status: status.into(),
            iterations: 10.0,
            island_iterations: 25.0,
            islands: if layout == ISLANDS { 3 } else { 1 },
            largest_island: if layout == ISLANDS {
                contacts as u64 - 2
            } else {
                contacts as u64
            },
            residual: 1e-9,
            rounds: if status == "converged" { 20 } else { 3 },
            seconds,
            seconds_min: 0.5 * seconds,
            build_seconds: build,
            answer: answer.to_vec(),
        }
    }

    fn mujoco(problem: &str, seconds: f64) -> (String, MujocoSolve) {
        (
            problem.to_string(),
            MujocoSolve {
                problem: problem.into(),
                seconds,
                iterations: 4.0,
                cold: true,
                repeats: 50.0,
                abs_residual: 1e-6,
                replay_matches: true,
                version: "4.0.0".into(),
                cold_seconds: 2.0 * seconds,
                cold_iterations: 5.0,
                cold_tolerance: 1e-6,
            },
        )
    }

    #[test]
    fn stems_islands_and_gaps() {
        assert_eq!(problem_stem("clutter_n8_nc20.json"), "clutter_n8_nc20");
        assert_eq!(problem_stem("Rover4396.hdf5"), "Rover4396");
        assert_eq!(problem_stem("balls_mu0.5_nc4"), "balls_mu0.5_nc4");
        // A solve that split reports its counters; one that did not is one island of all.
        assert_eq!(islands_of(3.0, 201.0, 206), (3, 201));
        assert_eq!(islands_of(0.0, 0.0, 206), (1, 206));
        assert_eq!(islands_of(0.0, 0.0, 0), (0, 0));
        assert_eq!(relative_gap(&[1.0, 2.0], &[1.0, 4.0]), 0.5);
        assert_eq!(relative_gap(&[0.0], &[0.0]), 0.0);
        assert!(relative_gap(&[1.0], &[]).is_nan());
        assert!(relative_gap(&[1.0], &[1.0, 2.0]).is_nan());
    }

    #[test]
    fn set_rows_take_medians_over_problems_and_ratios_per_problem() {
        let solves = vec![
            solve("big", "a", 90, "pgs", ISLANDS, "converged", 2.0, 0.1, &[]),
            solve("big", "b", 120, "pgs", ISLANDS, "timeout", 6.0, 0.1, &[]),
            solve("big", "c", 100, "pgs", ISLANDS, "converged", 3.0, 0.1, &[]),
            solve("small", "d", 9, "pgs", ISLANDS, "converged", 1.0, 0.1, &[]),
        ];
        let mj: BTreeMap<String, MujocoSolve> =
            [mujoco("a", 1.0), mujoco("b", 1.0), mujoco("c", 0.5)].into();
        let rows = set_rows(&solves, &mj, &["small".into(), "big".into()]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].set.as_str(), rows[0].problems), ("small", 1));
        assert!(rows[0].ratio_to_mujoco.is_nan() && rows[0].mujoco_median_seconds.is_nan());
        let big = &rows[1];
        assert_eq!((big.problems, big.solved), (3, 2));
        assert_eq!(big.median_seconds, 3.0);
        assert_eq!(big.mujoco_median_seconds, 1.0);
        // Ratios 2, 6 and 6: their median, not the ratio of the medians (3).
        assert_eq!(big.ratio_to_mujoco, 6.0);
        assert_eq!(big.median_iterations, 10.0);
    }

    #[test]
    fn layout_gains_compare_the_same_pair_on_the_same_problems() {
        let solves = vec![
            solve(
                "big",
                "a",
                90,
                "pgs",
                ISLANDS,
                "converged",
                2.0,
                1.0,
                &[1.0, 2.0],
            ),
            solve(
                "big",
                "a",
                90,
                "pgs",
                WHOLE,
                "converged",
                6.0,
                2.0,
                &[1.0, 2.2],
            ),
            solve(
                "big",
                "b",
                120,
                "pgs",
                ISLANDS,
                "timeout",
                4.0,
                1.0,
                &[0.0, 1.0],
            ),
            solve(
                "big",
                "b",
                120,
                "pgs",
                WHOLE,
                "timeout",
                4.0,
                1.0,
                &[0.0, 3.0],
            ),
            solve(
                "big",
                "c",
                100,
                "pgs",
                ISLANDS,
                "converged",
                1.0,
                0.5,
                &[4.0, 0.0],
            ),
            solve(
                "big",
                "c",
                100,
                "pgs",
                WHOLE,
                "converged",
                5.0,
                1.0,
                &[4.0, 0.4],
            ),
            // A solver in one layout only has no gain.
            solve("big", "a", 90, "sap", ISLANDS, "converged", 1.0, 0.5, &[]),
        ];
        let mut solves = solves;
        // b's whole problem had one fast round: 0.5 against the islands' fastest 2.
        solves[3].seconds_min = 0.5;
        let gains = layout_gains(&solves, &["big".into()]);
        assert_eq!(gains.len(), 1);
        let g = &gains[0];
        assert_eq!((g.pair.as_str(), g.problems), ("pgs", 3));
        // Per problem 3, 1 and 5: the median.
        assert_eq!(g.gain, 3.0);
        // Without builds: 4/1, 3/3 and 4/0.5.
        assert_eq!(g.gain_without_build, 4.0);
        assert_eq!(g.build_share_islands, 0.5);
        assert_eq!(g.build_share_dense, 0.25);
        assert_eq!(g.both_converged, 2);
        // 0.2 of 2.2 on a, 0.4 of 4 on c: the larger.
        assert!((g.answer_gap - 0.1).abs() < 1e-15, "{}", g.answer_gap);
        assert_eq!(g.unsolved_statuses, ["timeout"]);
        assert_eq!(g.rounds_min, 3);
        assert_eq!((g.largest_contacts, g.largest_island), (120, 118));
        // By the fastest rounds 3, 0.25 and 5: the median, and the worst with its problem.
        assert_eq!(g.gain_fastest, 3.0);
        assert_eq!(g.worst_fastest(), Some(("b", 0.25)));
    }

    #[test]
    fn a_problem_set_frame_reads_back_with_islands_and_answers() {
        let r: ListChunked = [Some(Series::new("".into(), [1.0, 2.0])), None]
            .into_iter()
            .collect();
        let df = df!(
            "problem" => ["a.json", "a.json"],
            "problem_set" => ["s", "s"],
            "solver" => ["pgs", "pgs (whole dense)"],
            "formulation" => ["coulomb", "coulomb"],
            "optimizer" => ["pgs", "pgs"],
            "layout" => [ISLANDS, WHOLE],
            "status" => ["converged", "timeout"],
            "n_c" => [5u64, 5],
            "iterations" => [3u64, 4],
            "residual" => [1e-9, 1e-3],
            "rounds" => [20u64, 3],
            "seconds" => [0.5, 2.0],
            "build_seconds" => [0.1, 0.2],
            "islands" => [2u64, 0],
            "largest_island" => [3u64, 0],
        )
        .unwrap()
        .with_column(Column::new("r".into(), r.into_series()))
        .unwrap()
        .clone();
        let s = solves(&df).unwrap();
        assert_eq!(s[0].problem, "a");
        assert_eq!(s[0].pair, "coulomb+pgs");
        assert_eq!((s[0].islands, s[0].largest_island), (2, 3));
        assert_eq!((s[1].islands, s[1].largest_island), (1, 5));
        assert_eq!(s[0].answer, [1.0, 2.0]);
        assert!(s[1].answer.is_empty());
        assert!(s[0].converged() && !s[1].converged());
    }

    #[test]
    fn engine_runs_read_their_rows_or_why_they_did_not_measure() {
        let skipped_run = df!("skipped" => ["CONTACTLAB_NO_PEERS is set"]).unwrap();
        assert_eq!(
            skipped(&skipped_run).unwrap().as_deref(),
            Some("CONTACTLAB_NO_PEERS is set")
        );
        let mj = df!(
            "problem" => ["a", "b"],
            "mujoco_constraint_seconds_median" => [1e-5, 2e-5],
            "mujoco_iterations" => [4.0, 5.0],
            "repeats" => [50.0, 50.0],
            "accuracy_abs_residual_inf" => [1e-6, 2e-6],
            "replay_matches" => [true, false],
            "mujoco_version" => ["4.0.0", "4.0.0"],
        )
        .unwrap();
        assert_eq!(skipped(&mj).unwrap(), None);
        let m = mujoco_solves(&mj).unwrap();
        assert!(m["a"].replay_matches && !m["b"].replay_matches);
        assert_eq!((m["b"].seconds, m["b"].version.as_str()), (2e-5, "4.0.0"));
        // A run without the cold solve at MuJoCo's own tolerance keeps the warm-started times.
        assert!(!m["a"].cold);
        // With it, the tables' times and iterations are the cold solves'.
        let mut cold = mj.clone();
        for (name, values) in [
            ("variants_auto_cold_own_seconds_median", [3e-5, 4e-5]),
            ("variants_auto_cold_own_iterations", [9.0, 11.0]),
        ] {
            cold.with_column(Column::new(name.into(), values)).unwrap();
        }
        let m = mujoco_solves(&cold).unwrap();
        assert!(m["a"].cold && m["b"].cold);
        assert_eq!((m["b"].seconds, m["b"].iterations), (4e-5, 11.0));
        let bench = df!(
            "engine" => [Some("mujoco 4.0.0"), Some("drake 1.51.1"), None],
            "config" => ["mj_newton_elliptic", "drake_sap_point", "drake_sap_hydro"],
            "scene" => ["clutter_n40", "clutter_n40", "clutter_n40"],
            "step_median_ms" => [Some(0.25), Some(4.0), None],
            "ncon_median" => [Some(102.0), Some(57.0), None],
            "nsteps" => [1000.0, 1000.0, 1000.0],
            "error" => [None, None, Some("ImportError")],
            "stages_collision_median_ms" => [Some(0.05), None, None],
            "stages_build_median_ms" => [Some(0.04), None, None],
            "stages_solve_median_ms" => [Some(0.12), None, None],
            "stages_integrate_median_ms" => [Some(0.01), None, None],
            "stages_total_median_ms" => [Some(0.23), None, None],
            "stages_after_collision_median_ms" => [Some(0.18), None, None],
        )
        .unwrap();
        let PeerSteps { rows, errors } = peer_steps(&bench).unwrap();
        let st = rows[0].stages.expect("MuJoCo's stages");
        assert!((st.solve - 1.2e-4).abs() < 1e-15 && (st.after_collision - 1.8e-4).abs() < 1e-15);
        assert_eq!(rows[1].stages, None);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].engine, "mujoco");
        assert_eq!(rows[1].solver, "drake 1.51.1 drake_sap_point");
        assert!((rows[1].median_seconds - 4e-3).abs() < 1e-15);
        assert_eq!((rows[1].steps, rows[1].contacts_median), (1000, 57.0));
        assert_eq!(
            errors,
            [("drake_sap_hydro".to_string(), "ImportError".to_string())]
        );
    }

    fn row(scene: &str, engine: &str, solver: &str, s: f64) -> WholeStep {
        WholeStep {
            scene: scene.into(),
            engine: engine.into(),
            solver: solver.into(),
            steps: 1,
            contacts_median: 3.0,
            median_seconds: s,
            stages: None,
            analysed_share: None,
        }
    }

    /// Our stages: detection from the scene, the scene's time before the solve plus the
    /// formulation's build, the solve without it, `advance` without detection; medians of each.
    #[test]
    fn our_steps_split_into_stages_where_the_scene_timed_its_detection() {
        let df = df!(
            "role" => ["driver", "driver", "driver"],
            "solver" => ["sap", "sap", "sap"],
            "seconds" => [3.0, 5.0, 4.0],
            "build_seconds" => [1.0, 1.0, 2.0],
            "scene_seconds" => [10.0, 12.0, 11.0],
            "advance_seconds" => [6.0, 6.0, 7.0],
            "detect_seconds" => [2.0, 3.0, 2.5],
            "n_c" => [9u64, 9, 9],
            "n_bodies" => [40i64, 40, 40],
        )
        .unwrap();
        let s = whole_steps(&df).unwrap()[0]
            .stages
            .expect("detection was timed");
        // Per step: build (4+1, 6+1, 4+2), solve (2, 4, 2), integrate (4, 3, 4.5).
        assert_eq!(s.collision, 2.5);
        assert_eq!(s.build, 6.0);
        assert_eq!(s.solve, 2.0);
        assert_eq!(s.integrate, 4.0);
        assert_eq!(s.total, 15.0);
        assert_eq!(s.after_collision, 12.5);
        let untimed = df!(
            "role" => ["driver"], "solver" => ["pgs"], "seconds" => [1.0],
            "scene_seconds" => [1.0], "n_c" => [3u64], "n_bodies" => [40i64],
        )
        .unwrap();
        assert_eq!(whole_steps(&untimed).unwrap()[0].stages, None);
    }

    #[test]
    fn driver_rows_group_by_scene_and_solver_with_median_step_times() {
        let df = df!(
            "role" => ["driver", "driver", "driver", "shadow", "driver"],
            "solver" => ["pgs", "pgs", "pgs", "lm", "pgs"],
            "seconds" => [1.0, 2.0, 3.0, 100.0, 7.0],
            "scene_seconds" => [1.0, 1.0, 1.0, 1.0, 1.0],
            "n_c" => [2u64, 4, 6, 4, 1],
            "n_balls" => [5i64, 5, 5, 5, 10],
            "mu" => [0.5, 0.5, 0.5, 0.5, 1.0],
        )
        .unwrap();
        let rows = whole_steps(&df).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].scene, "balls_in_box_n5_mu0.5");
        assert_eq!(rows[0].steps, 3);
        assert_eq!(rows[0].median_seconds, 3.0);
        assert_eq!(rows[0].contacts_median, 4.0);
        assert_eq!(rows[1].scene, "balls_in_box_n10_mu1.0");
        assert_eq!(rows[1].median_seconds, 8.0);
        let clutter = df!(
            "role" => ["driver"], "solver" => ["sap"], "seconds" => [1.0],
            "scene_seconds" => [0.5], "n_c" => [9u64], "n_bodies" => [40i64],
        )
        .unwrap();
        assert_eq!(whole_steps(&clutter).unwrap()[0].scene, "clutter_n40");
    }

    #[test]
    fn the_clutters_sizes_form_one_set_and_other_scenes_their_own() {
        assert_eq!(scene_set("balls_in_box_n5_mu0.5"), "balls_in_box");
        assert_eq!(scene_set("clutter_n20"), "clutter");
        assert_eq!(scene_set("clutter_n80"), "clutter");
        assert_eq!(scene_set("sphere_on_plane"), "sphere_on_plane");
    }

    #[test]
    fn the_summary_takes_ratios_per_scene_then_their_median() {
        let rows = vec![
            row("balls_in_box_n5_mu0.5", "contactlab", "pgs", 4.0),
            row("balls_in_box_n5_mu0.5", "mujoco", "mj", 1.0),
            row("balls_in_box_n10_mu0.5", "contactlab", "pgs", 9.0),
            row("balls_in_box_n10_mu0.5", "mujoco", "mj", 3.0),
            row("clutter_n40", "contactlab", "sap", 2.0),
            row("clutter_n40", "mujoco", "mj", 0.5),
            row("clutter_n40", "drake-sap", "drake", 4.0),
        ];
        let s = summary(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].set.as_str(), s[0].scenes), ("balls_in_box", 2));
        assert_eq!(s[0].ratio_to_mujoco, 3.5); // median of 4 and 3
        assert_eq!((s[0].ratio_min, s[0].ratio_max), (3.0, 4.0));
        assert_eq!(s[0].median_seconds, 6.5);
        assert!(s[0].drake_median_seconds.is_nan());
        assert_eq!((s[1].set.as_str(), s[1].scenes), ("clutter", 1));
        assert_eq!(s[1].ratio_to_mujoco, 4.0);
        assert_eq!(s[1].drake_median_seconds, 4.0);
        // Without the peers' rows, their columns are NaN.
        let alone = summary(&rows[4..5]);
        assert!(alone[0].mujoco_median_seconds.is_nan() && alone[0].ratio_to_mujoco.is_nan());
    }
}
