//! The comparison beside MuJoCo and Drake (`reports/peers/`): every formulation with its
//! paper's driver on the steps MuJoCo exported, beside MuJoCo's own constraint solve of the
//! same steps (solver against solver), in two layouts (islands with block-sparse `W`, and the
//! whole problem with a dense `W`, to measure what islands gain); and this project's scenes
//! stepped end to end beside MuJoCo's `mj_step` and Drake's SAP on the same scenes (step
//! against step).
//!
//! Data, from the configs in `experiments/configs/peers/`: `solvers` (`kind = "problems"`: our
//! solves), `solvers_mujoco` (`kind = "engines"`: `experiments/peers/solver_times.py`, MuJoCo's
//! `mj_fwdConstraint` on the same steps), `balls` and `clutter` (experiment sweeps on one
//! thread: our whole steps) with `balls_engines` and `clutter_engines` (`kind = "engines"`:
//! `experiments/peers/bench.py`, MuJoCo's and Drake's whole steps). The statistics are
//! [`crate::analysis::peers`]; the page's prose is `experiments/configs/peers/templates/`
//! (`report.md` and one template per section), which the value `sections` (`Sections`) tells
//! what ran: an engines run that could not measure (no Python, a missing package,
//! `CONTACTLAB_NO_PEERS`, `CONTACTLAB_PEERS_WITHOUT`) is said so with its reason, and a section
//! whose run is absent is left out. Fact names (`<slug>` is a label as [`slug`] writes it) are
//! listed with their values in the generated `facts.md`.

mod common;
mod fresh;
mod iterations;
mod levels;
mod pinocchio;
mod speed;
mod stages;

use contactlab_runs::RunConfig;
use std::collections::BTreeMap;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::table::{Cell as C, Table};
use crate::analysis::peers::{
    layout_gains, mujoco_solves, peer_steps, set_rows, skipped, solves, summary, whole_steps,
    LayoutGain, MujocoSolve, PeerSteps, SetSummary, Solve, WholeStep,
};
use crate::analysis::quantile;
use crate::error::ReportError;
pub use common::slug;
use common::{ms, quoted, Skipped};
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::{problems, steps};

/// Our solves on MuJoCo's steps.
pub const SOLVERS: &str = "solvers.toml";
/// MuJoCo's constraint solves of the same steps.
pub const MUJOCO: &str = "solvers_mujoco.toml";
/// Our whole steps and the peers' on the same scenes: (our sweep, the engines' run).
pub const STEPS: [(&str, &str); 2] = [
    ("balls.toml", "balls_engines.toml"),
    ("clutter.toml", "clutter_engines.toml"),
];

/// What the templates leave in or out (the value `sections`).
#[derive(Debug, Default, serde::Serialize)]
struct Sections {
    /// MuJoCo's constraint solves, when their run could not measure.
    mujoco_skipped: Option<Skipped>,
    /// Whether the gains by each solve's fastest round were written.
    gains_fastest: bool,
    /// The speed protocol's section.
    speed: speed::Part,
    /// The section beside Pinocchio.
    pinocchio: pinocchio::Part,
    /// The section on fresh clutter, timed interleaved.
    fresh: fresh::Part,
    /// Our PGS beside MuJoCo's at the same residual.
    pgs: levels::Part,
    /// Todorov's driver beside MuJoCo's Newton at the same residual.
    newton: levels::Part,
    /// The whole steps' section, when our sweeps have run.
    steps: Option<StepsPart>,
}

/// The whole steps' section, as the templates see it.
#[derive(Debug, Default, serde::Serialize)]
struct StepsPart {
    /// Whether the stages' subsection was written.
    staged: bool,
    /// What the peers' runs could not measure, in the sweeps' order.
    notes: Vec<StepNote>,
}

/// A note on a peers' run of whole steps.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum StepNote {
    /// The run measured nothing (`skipped`).
    Skipped {
        /// Our sweep.
        sweep: String,
        /// The engines' run.
        run: String,
        /// Why.
        why: String,
    },
    /// A scene failed in the run.
    Failed {
        /// The scene's config.
        config: String,
        /// The engines' run.
        run: String,
        /// The error.
        error: String,
    },
    /// Drake did not run, the config's `[when_missing]` leaving it out.
    NoDrake {
        /// The engines' run.
        run: String,
    },
}

/// Writes `reports/peers/` from the peers' runs.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "peers")?;
    let cfg = ProblemsConfig::load(&r.config_file(SOLVERS))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let solves = solves(&df)?;
    let mcfg = EnginesConfig::load(&r.config_file(MUJOCO))?;
    let (mdf, _) = r.load_data(&mcfg.name, &mcfg.data_path(root))?;
    let not_measured = skipped(&mdf)?;
    let mujoco = match &not_measured {
        Some(_) => BTreeMap::new(),
        None => mujoco_solves(&mdf)?,
    };
    let sets: Vec<(String, String)> = cfg
        .sets
        .iter()
        .map(|s| (s.name.clone(), s.description.clone()))
        .collect();
    let set_names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    let mut sections = Sections {
        mujoco_skipped: not_measured
            .clone()
            .map(|why| Skipped::new(&mcfg.name, why)),
        ..Sections::default()
    };
    problem_facts(&mut r, &cfg, &solves, &mujoco, &not_measured, &sets);
    set_table(&mut r, &solves, &mujoco, &set_names)?;
    sections.gains_fastest = gain_table(&mut r, &solves, &sets)?;
    problems_table(&mut r, &solves, &mujoco)?;
    sections.speed = speed::section(&mut r, root, &mujoco)?;
    sections.fresh = fresh::section(&mut r, root)?;
    sections.pgs = levels::section(&mut r, root, &levels::PGS)?;
    sections.newton = levels::section(&mut r, root, &levels::NEWTON)?;
    sections.pinocchio = pinocchio::section(&mut r, root)?;
    sections.steps = whole_step_section(&mut r, root)?;
    r.show("sections", sections)?;
    r.finish()?;
    Ok(())
}

/// The problems of `solves` (of set `set`, or of all with `None`), by name, each once.
fn problem_names<'a>(solves: &'a [Solve], set: Option<&str>) -> Vec<&'a str> {
    let mut p: Vec<&str> = solves
        .iter()
        .filter(|s| set.is_none_or(|set| s.set == set))
        .map(|s| s.problem.as_str())
        .collect();
    p.sort();
    p.dedup();
    p
}

/// The facts of the problem-set comparison (`facts.md` lists them).
fn problem_facts(
    r: &mut Report,
    cfg: &ProblemsConfig,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    not_measured: &Option<String>,
    sets: &[(String, String)],
) {
    let set_names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    let problems = problem_names(solves, None);
    solver_facts(r, cfg, problems.len());
    set_facts(r, solves, &set_names);
    set_row_facts(r, solves, mujoco, &set_names);
    for g in layout_gains(solves, &set_names) {
        gain_facts(r, &g);
    }
    mujoco_facts(r, &problems, mujoco, not_measured);
}

/// `solvers.*`: the run's problems, solvers, rounds and settings.
fn solver_facts(r: &mut Report, cfg: &ProblemsConfig, problems: usize) {
    let tol = cfg.solvers.first().map_or(f64::NAN, |s| s.tol);
    let limit = cfg
        .solvers
        .first()
        .and_then(|s| s.time_limit)
        .unwrap_or(f64::NAN);
    r.facts()
        .num("solvers.problems", problems as f64, Fmt::int())
        .num("solvers.solvers", cfg.solvers.len() as f64, Fmt::int())
        .num("solvers.rounds", cfg.rounds as f64, Fmt::int())
        .num(
            "solvers.slow_seconds",
            cfg.slow_seconds.unwrap_or(f64::NAN),
            Fmt::fixed(1).unit(" s"),
        )
        .num("solvers.slow_rounds", cfg.slow_rounds as f64, Fmt::int())
        .num(
            "solvers.warm_up_ms",
            contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3,
            Fmt::fixed(0),
        )
        .num("solvers.tol", tol, Fmt::sci(0))
        .num("solvers.time_limit", limit, Fmt::fixed(0).unit(" s"));
}

/// Per set: its problems and their fewest and most contacts.
fn set_facts(r: &mut Report, solves: &[Solve], set_names: &[String]) {
    let f = r.facts();
    for set in set_names {
        let contacts: Vec<f64> = solves
            .iter()
            .filter(|s| &s.set == set)
            .map(|s| s.contacts as f64)
            .collect();
        let count = problem_names(solves, Some(set)).len();
        f.num(format!("{set}.problems"), count as f64, Fmt::int())
            .num(
                format!("{set}.contacts_min"),
                contacts.iter().copied().fold(f64::NAN, f64::min),
                Fmt::int(),
            )
            .num(
                format!("{set}.contacts_max"),
                contacts.iter().copied().fold(f64::NAN, f64::max),
                Fmt::int(),
            );
    }
}

/// Per set and solver: solved, iterations, time and the ratio to MuJoCo; per set MuJoCo's time.
fn set_row_facts(
    r: &mut Report,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    set_names: &[String],
) {
    let f = r.facts();
    for row in set_rows(solves, mujoco, set_names) {
        let k = format!("{}.{}", row.set, slug(&row.solver));
        f.num(format!("{k}.solved"), row.solved as f64, Fmt::int())
            .num(format!("{k}.iterations"), row.median_iterations, Fmt::int())
            .num(
                format!("{k}.ms"),
                row.median_seconds * 1e3,
                ms().unit(" ms"),
            )
            .num(
                format!("{k}.ratio_to_mujoco"),
                row.ratio_to_mujoco,
                Fmt::fixed(1).unit("x"),
            );
        f.num(
            format!("{}.mujoco_ms", row.set),
            row.mujoco_median_seconds * 1e3,
            ms().unit(" ms"),
        );
    }
}

/// What islands gain for one set and pair, both layouts.
fn gain_facts(r: &mut Report, g: &LayoutGain) {
    let k = format!("{}.{}", g.set, slug(&g.pair));
    let x = Fmt::fixed(2).unit("x");
    let unsolved = if g.unsolved_statuses.is_empty() {
        "none".to_string()
    } else {
        g.unsolved_statuses.join(" and ")
    };
    r.facts()
        .num(format!("{k}.gain"), g.gain, x.clone())
        .num(format!("{k}.gain_fastest"), g.gain_fastest, x.clone())
        .num(
            format!("{k}.worst_fastest"),
            g.worst_fastest().map_or(f64::NAN, |w| w.1),
            x.clone(),
        )
        .text(
            format!("{k}.worst_fastest_problem"),
            g.worst_fastest().map_or("", |w| w.0),
        )
        .num(format!("{k}.gain_without_build"), g.gain_without_build, x)
        .num(
            format!("{k}.build_share_islands"),
            100.0 * g.build_share_islands,
            Fmt::percent(0),
        )
        .num(
            format!("{k}.build_share_dense"),
            100.0 * g.build_share_dense,
            Fmt::percent(0),
        )
        .num(
            format!("{k}.both_converged"),
            g.both_converged as f64,
            Fmt::int(),
        )
        .num(format!("{k}.answer_gap"), g.answer_gap, Fmt::sci(1))
        .text(format!("{k}.unsolved_statuses"), unsolved)
        .num(format!("{k}.rounds_min"), g.rounds_min as f64, Fmt::int())
        .num(
            format!("{k}.largest_island"),
            g.largest_island as f64,
            Fmt::int(),
        )
        .num(
            format!("{k}.largest_contacts"),
            g.largest_contacts as f64,
            Fmt::int(),
        );
}

/// `mujoco.*`: whether MuJoCo's solves were measured, its version, replay and accuracy.
fn mujoco_facts(
    r: &mut Report,
    problems: &[&str],
    mujoco: &BTreeMap<String, MujocoSolve>,
    not_measured: &Option<String>,
) {
    let mj: Vec<&MujocoSolve> = problems.iter().filter_map(|p| mujoco.get(*p)).collect();
    let version = mj
        .first()
        .map_or_else(|| "-".to_string(), |m| m.version.clone());
    let (count, replayed, repeats, residual) = if not_measured.is_some() {
        (f64::NAN, f64::NAN, f64::NAN, f64::NAN)
    } else {
        (
            mj.len() as f64,
            mj.iter().filter(|m| m.replay_matches).count() as f64,
            quantile(&mj.iter().map(|m| m.repeats).collect::<Vec<_>>(), 0.5),
            quantile(&mj.iter().map(|m| m.abs_residual).collect::<Vec<_>>(), 0.5),
        )
    };
    let measured = not_measured.as_ref().map_or(MEASURED.to_string(), |why| {
        format!("{NOT_MEASURED} ({why})")
    });
    // The solver-against-solver tables' MuJoCo times: cold as ours, or warm in older runs.
    let start = if mj.iter().all(|m| m.cold) {
        "cold"
    } else {
        "warm-started"
    };
    r.facts()
        .text("mujoco.measured", measured)
        .text("mujoco.start", start)
        .text("mujoco.version", version)
        .num("mujoco.problems", count, Fmt::int())
        .num("mujoco.replayed", replayed, Fmt::int())
        .num("mujoco.repeats", repeats, Fmt::int())
        .num(
            "mujoco.abs_residual_median",
            residual,
            Fmt::sci(1).unit(" m/s"),
        );
}

/// What a fact says of a peer measured in this run...
const MEASURED: &str = "measured in this run";

/// ...and of one not measured.
const NOT_MEASURED: &str = "not measured in this run";

/// `peers.csv` and the per-set table (`tables.sets`).
fn set_table(
    r: &mut Report,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    sets: &[String],
) -> Result<(), ReportError> {
    let sci = Fmt::sci(4);
    let mut t = Table::new(Some("peers.csv"))
        .col("problem set", problems::PROBLEM_SET)
        .col(problems::SOLVER, problems::SOLVER)
        .csv_col("problems")
        .col("solved", "solved")
        .md_col("median iterations")
        .col("median ms", "median_seconds")
        .col("MuJoCo median ms", "mujoco_median_seconds")
        .col("ratio to MuJoCo", "ratio_to_mujoco");
    for row in set_rows(solves, mujoco, sets) {
        t.row(vec![
            C::text(&row.set),
            C::text(&row.solver),
            C::int(row.problems as u64),
            C::pair(
                format!("{}/{}", row.solved, row.problems),
                row.solved.to_string(),
            ),
            C::same(row.median_iterations, &Fmt::int()),
            C::pair(
                ms().show(row.median_seconds * 1e3),
                sci.number(row.median_seconds),
            ),
            C::pair(
                ms().show(row.mujoco_median_seconds * 1e3),
                csv_number(row.mujoco_median_seconds, &sci),
            ),
            C::num(row.ratio_to_mujoco, &Fmt::fixed(1), &Fmt::fixed(3)),
        ])?;
    }
    r.show_table("sets", &t)
}

/// A number in `fmt`, empty for NaN (a CSV cell without a value).
fn csv_number(v: f64, fmt: &Fmt) -> String {
    if v.is_nan() {
        String::new()
    } else {
        fmt.number(v)
    }
}

/// The table `file` of what islands and blocks gain by `of`, one row per pair, one column per set.
fn gains_of(
    file: &str,
    sets: &[(String, String)],
    gains: &[LayoutGain],
    of: &dyn Fn(&LayoutGain) -> f64,
) -> Result<Table, ReportError> {
    let mut pairs: Vec<&str> = Vec::new();
    for g in gains {
        if !pairs.contains(&g.pair.as_str()) {
            pairs.push(&g.pair);
        }
    }
    let mut t = Table::new(Some(file)).col(problems::SOLVER, problems::SOLVER);
    for (name, description) in sets {
        let header = if description.is_empty() {
            name
        } else {
            description
        };
        t = t.col(header, &format!("{name}_gain"));
    }
    for pair in &pairs {
        let mut cells = vec![C::text(*pair)];
        for (name, _) in sets {
            let gain = gains
                .iter()
                .find(|g| &g.set == name && g.pair == *pair)
                .map_or(f64::NAN, of);
            cells.push(C::num(gain, &Fmt::fixed(2), &Fmt::fixed(3)));
        }
        t.row(cells)?;
    }
    Ok(t)
}

/// `gains.csv` (`tables.gains`), what islands and blocks gain, one row per pair; then
/// `gains_fastest.csv` (`tables.gains_fastest`), the same by each solve's fastest round, with
/// the facts that judge it against `islands_median_aim` and `islands_worst_aim` of
/// `quoted_published.csv`. Whether the fastest rounds' table was written.
fn gain_table(
    r: &mut Report,
    solves: &[Solve],
    sets: &[(String, String)],
) -> Result<bool, ReportError> {
    let names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    let gains = layout_gains(solves, &names);
    r.show_table("gains", &gains_of("gains.csv", sets, &gains, &|g| g.gain)?)?;
    if !fastest_facts(r, &gains)? {
        return Ok(false);
    }
    let fastest = gains_of("gains_fastest.csv", sets, &gains, &|g| g.gain_fastest)?;
    r.show_table("gains_fastest", &fastest)?;
    Ok(true)
}

/// `gains.fastest_*`: the least median gain by the fastest rounds, the worst problem, and
/// both against the aims; `false` when no gain by the fastest rounds is measured.
fn fastest_facts(r: &mut Report, gains: &[LayoutGain]) -> Result<bool, ReportError> {
    let Some(median_min) = gains
        .iter()
        .filter(|g| !g.gain_fastest.is_nan())
        .min_by(|a, b| a.gain_fastest.total_cmp(&b.gain_fastest))
    else {
        return Ok(false);
    };
    let worst = gains
        .iter()
        .filter_map(|g| g.worst_fastest().map(|(problem, v)| (&g.pair, problem, v)))
        .min_by(|a, b| a.2.total_cmp(&b.2));
    let x = Fmt::fixed(2).unit("x");
    let f = r.facts();
    f.num(
        "gains.fastest_median_min",
        median_min.gain_fastest,
        x.clone(),
    )
    .text(
        "gains.fastest_median_min_at",
        format!("{} on {}", median_min.pair, median_min.set),
    );
    if let Some((pair, problem, v)) = worst {
        f.num("gains.fastest_worst", v, x)
            .text("gains.fastest_worst_at", format!("{pair} on {problem}"));
    }
    if let Some(aim) = quoted(r, "islands_median_aim")? {
        let word = if median_min.gain_fastest >= aim {
            "meets"
        } else {
            "misses"
        };
        r.facts().text("gains.fastest_median_aim", word);
    }
    if let Some(aim) = quoted(r, "islands_worst_aim")? {
        let below = gains
            .iter()
            .flat_map(|g| &g.fastest_by_problem)
            .filter(|(_, v)| *v < aim)
            .count();
        r.facts()
            .num("gains.fastest_below", below as f64, Fmt::int());
    }
    Ok(true)
}

/// `problems.csv`: per problem (by name), solver and layout, beside MuJoCo's solve of it.
fn problems_table(
    r: &mut Report,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("problems.csv"));
    for c in [
        problems::PROBLEM,
        problems::PROBLEM_SET,
        "contacts",
        problems::SOLVER,
        problems::LAYOUT,
        problems::STATUS,
        problems::ITERATIONS,
        "islands",
        problems::RESIDUAL,
        "repeats",
        "median_seconds",
        "mujoco_median_seconds",
        "mujoco_iterations",
        "ratio_to_mujoco",
    ] {
        t = t.csv_col(c);
    }
    let mut order: Vec<&Solve> = solves.iter().collect();
    // By problem name, then as the run listed the solvers.
    order.sort_by(|a, b| a.problem.cmp(&b.problem));
    for s in order {
        let m = mujoco.get(&s.problem);
        let mj_seconds = m.map_or(f64::NAN, |m| m.seconds);
        t.row(vec![
            C::text(&s.problem),
            C::text(&s.set),
            C::int(s.contacts as u64),
            C::text(&s.pair),
            C::text(&s.layout),
            C::text(&s.status),
            C::same(s.iterations, &Fmt::int()),
            C::int(s.islands),
            C::same(s.residual, &Fmt::sci(3)),
            C::int(s.rounds as u64),
            C::same(s.seconds, &Fmt::sci(4)),
            C::same(mj_seconds, &Fmt::sci(4)),
            C::same(m.map_or(f64::NAN, |m| m.iterations), &Fmt::int()),
            C::same(s.seconds / mj_seconds, &Fmt::fixed(3)),
        ])?;
    }
    r.show_table("problems", &t)
}

/// The whole steps of our sweeps and of the peers' runs, and what the runs could not measure.
#[derive(Default)]
struct Steps {
    /// Ours, in the sweeps' order.
    ours: Vec<WholeStep>,
    /// The peers'.
    theirs: Vec<WholeStep>,
    /// What the peers' runs could not measure.
    notes: Vec<StepNote>,
    /// Whether some peers' run measured without Drake.
    drake_missing: bool,
}

/// The whole steps of every sweep that ran, with the peers' on the same scenes; `None` when
/// no sweep ran.
fn load_steps(r: &mut Report, root: &Path) -> Result<Option<Steps>, ReportError> {
    let mut steps = Steps::default();
    let mut any = false;
    for (sweep, engines) in STEPS {
        let Some(run) = r.load_if_run(sweep)? else {
            continue;
        };
        any = true;
        steps.ours.extend(whole_steps(&run.steps)?);
        let ecfg = EnginesConfig::load(&r.config_file(engines))?;
        let (edf, _) = r.load_data(&ecfg.name, &ecfg.data_path(root))?;
        if let Some(why) = skipped(&edf)? {
            steps.notes.push(StepNote::Skipped {
                sweep: run.config.name.clone(),
                run: ecfg.name.clone(),
                why,
            });
            continue;
        }
        add_peer_steps(&mut steps, &ecfg, &edf)?;
    }
    Ok(any.then_some(steps))
}

/// Adds the peers' steps of the engines run `ecfg` (its data `edf`), with its failures and
/// whether Drake is missing.
fn add_peer_steps(
    steps: &mut Steps,
    ecfg: &EnginesConfig,
    edf: &polars::prelude::DataFrame,
) -> Result<(), ReportError> {
    let PeerSteps { rows, errors } = peer_steps(edf)?;
    for (config, error) in errors {
        steps.notes.push(StepNote::Failed {
            config,
            run: ecfg.name.clone(),
            error,
        });
    }
    if !rows.iter().any(|w| w.engine == "drake-sap") {
        steps.drake_missing = true;
        if ecfg.when_missing.contains_key("pydrake") {
            steps.notes.push(StepNote::NoDrake {
                run: ecfg.name.clone(),
            });
        }
    }
    steps.theirs.extend(rows);
    Ok(())
}

/// The whole-step section's facts, tables and `steps.csv`, when our sweeps have run.
fn whole_step_section(r: &mut Report, root: &Path) -> Result<Option<StepsPart>, ReportError> {
    let Some(steps) = load_steps(r, root)? else {
        return Ok(None);
    };
    let all: Vec<WholeStep> = steps.ours.iter().chain(&steps.theirs).cloned().collect();
    let sets = summary(&all);
    step_facts(r, &steps, &sets);
    steps_table(r, &sets)?;
    let aim = speed::speed_aim(r)?;
    let staged = stages::section(r, &steps.ours, &steps.theirs, aim)?;
    steps_csv(r, &steps)?;
    Ok(Some(StepsPart {
        staged,
        notes: steps.notes,
    }))
}

/// `steps.measured`, `steps.drake`, and per scene set and our solver its times and ratio.
fn step_facts(r: &mut Report, steps: &Steps, sets: &[SetSummary]) {
    let mujoco = steps.theirs.iter().any(|w| w.engine == "mujoco");
    let drake = !(steps.drake_missing || steps.theirs.is_empty());
    let said = |measured: bool| if measured { MEASURED } else { NOT_MEASURED };
    let f = r.facts();
    f.text("steps.measured", said(mujoco))
        .text("steps.drake", said(drake));
    for s in sets {
        let k = format!("steps.{}.{}", s.set, slug(&s.solver));
        f.num(format!("{k}.scenes"), s.scenes as f64, Fmt::int())
            .num(format!("{k}.contacts"), s.contacts_median, Fmt::int())
            .num(format!("{k}.ms"), s.median_seconds * 1e3, ms().unit(" ms"))
            .num(
                format!("{k}.mujoco_ms"),
                s.mujoco_median_seconds * 1e3,
                ms().unit(" ms"),
            )
            .num(
                format!("{k}.drake_ms"),
                s.drake_median_seconds * 1e3,
                ms().unit(" ms"),
            )
            .num(
                format!("{k}.ratio"),
                s.ratio_to_mujoco,
                Fmt::fixed(1).unit("x"),
            )
            .num(
                format!("{k}.ratio_min"),
                s.ratio_min,
                Fmt::fixed(1).unit("x"),
            )
            .num(
                format!("{k}.ratio_max"),
                s.ratio_max,
                Fmt::fixed(1).unit("x"),
            );
    }
}

/// The whole steps per scene set and our solver (`tables.steps`).
fn steps_table(r: &mut Report, sets: &[SetSummary]) -> Result<(), ReportError> {
    let mut t = Table::new(None)
        .md_col("scene set")
        .md_col("our solver")
        .md_col("scenes")
        .md_col("our contacts per step")
        .md_col("our ms per step")
        .md_col("MuJoCo ms per step")
        .md_col("Drake ms per step")
        .md_col("ratio to MuJoCo")
        .md_col("smallest")
        .md_col("largest");
    for s in sets {
        t.row(vec![
            C::text(&s.set),
            C::text(&s.solver),
            C::int(s.scenes as u64),
            C::same(s.contacts_median, &Fmt::int()),
            C::same(s.median_seconds * 1e3, &ms()),
            C::same(s.mujoco_median_seconds * 1e3, &ms()),
            C::same(s.drake_median_seconds * 1e3, &ms()),
            C::same(s.ratio_to_mujoco, &Fmt::fixed(1)),
            C::same(s.ratio_min, &Fmt::fixed(1)),
            C::same(s.ratio_max, &Fmt::fixed(1)),
        ])?;
    }
    r.show_table("steps", &t)
}

/// `steps.csv`: ours first (in the sweeps' order), then the peers' per scene.
fn steps_csv(r: &mut Report, steps: &Steps) -> Result<(), ReportError> {
    let mut csv = Table::new(Some("steps.csv"));
    for c in [
        "scene",
        "engine",
        steps::SOLVER,
        "steps",
        "contacts_median",
        "median_seconds",
    ] {
        csv = csv.csv_col(c);
    }
    for w in steps.ours.iter().chain(&steps.theirs) {
        csv.row(vec![
            C::text(&w.scene),
            C::text(&w.engine),
            C::text(&w.solver),
            C::int(w.steps as u64),
            C::text(format!("{}", w.contacts_median)),
            C::same(w.median_seconds, &Fmt::sci(4)),
        ])?;
    }
    r.show_table("steps_csv", &csv)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Facts;
    use crate::template::{render, Shown};
    use std::path::Path;

    /// Every table the module can show.
    const TABLES: [&str; 16] = [
        "sets",
        "gains",
        "gains_fastest",
        "speed_sets",
        "speed",
        "fresh_sets",
        "fresh_iterations",
        "fresh",
        "pgs_levels",
        "pgs_problems",
        "newton_levels",
        "newton_problems",
        "pinocchio",
        "steps",
        "stages_sets",
        "stages",
    ];

    /// The page the shipped templates write with `sections` and `tables`.
    fn page(sections: Sections, tables: &[&str]) -> String {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/peers/templates");
        let mut shown = Shown::default();
        for t in tables {
            shown.table(t, format!("| {t} |\n")).unwrap();
        }
        shown.value("sections", sections).unwrap();
        let mut facts = Facts::new();
        facts.num(
            "solvers.warm_up_ms",
            contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3,
            Fmt::fixed(0),
        );
        render(&dir, &facts, &shown).unwrap().unwrap().text
    }

    /// Every section measured, as the shipped runs are (`reports/peers/README.md`).
    fn all_measured() -> Sections {
        Sections {
            mujoco_skipped: None,
            gains_fastest: true,
            speed: speed::Part {
                written: true,
                run: "speed".into(),
                ratios: true,
            },
            fresh: fresh::Part {
                ran: true,
                skipped: None,
            },
            pgs: levels::Part {
                ran: true,
                skipped: None,
            },
            newton: levels::Part {
                ran: true,
                skipped: None,
            },
            pinocchio: pinocchio::Part {
                ran: true,
                skipped: None,
            },
            steps: Some(StepsPart {
                staged: true,
                notes: Vec::new(),
            }),
        }
    }

    #[test]
    fn the_shipped_templates_write_every_measured_section_as_the_committed_page() {
        let page = page(all_measured(), &TABLES);
        let committed = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/peers/README.md"),
        )
        .unwrap();
        // As reports/peers/README.md writes them from the shipped runs.
        for want in [
            "a solve under 2 ms after an untimed one of the same solver, so that its code is in \
             cache as in MuJoCo's repeats",
            "The medians of the factors need not multiply to the median ratio; per problem they \
             do (`speed.csv`).",
            "Pinocchio's repeats run back to back, and each of ours under 2 ms follows an \
             untimed one of the same solver.",
            "### Where a whole step's time goes\n\nThe same steps, stage by stage.",
            "Per scene set, each stage's median over the set's scenes (our time, MuJoCo's and \
             the ratio), with the smallest and largest of the per-scene ratios:",
            "Scene by scene:",
            "One MuJoCo solve and one of SAP's alternate, each after an untimed solve of its \
             own, so that a change in the machine's load moves both sides alike;",
            ", `speed_sets.csv` and `speed.csv` (SAP's speed protocol, per set and per problem), \
             `fresh_sets.csv` and `fresh.csv` (SAP beside MuJoCo on fresh clutter, timed \
             interleaved, per set and per problem), `pgs_levels.csv` and `pgs_problems.csv` \
             (our PGS beside MuJoCo's at the same residual, per level and per problem), \
             `newton_levels.csv` and `newton_problems.csv` (Todorov's driver beside MuJoCo's \
             Newton at the same residual, per level and per problem), `pinocchio.csv` (our ADMM and PGS beside Pinocchio's), `steps.csv` (whole steps, \
             per scene and engine), `stages_sets.csv` and `stages.csv` (where their time goes, \
             stage by stage, per scene set and per scene).",
        ] {
            assert!(page.contains(want), "`{want}` in\n{page}");
            assert!(committed.contains(want), "`{want}` in the committed page");
        }
        for left_out in ["was not measured", "not measured in this run", "ran, but"] {
            assert!(!page.contains(left_out), "`{left_out}` in\n{page}");
        }
    }

    #[test]
    fn the_shipped_templates_say_what_a_peers_run_could_not_measure() {
        let mut sections = all_measured();
        sections.pinocchio.skipped = Some(Skipped::new("pinocchio_engines", "no pin".into()));
        sections.fresh.skipped = Some(Skipped::new("fresh_engines", "no mujoco".into()));
        sections.pgs.skipped = Some(Skipped::new("pgs_engines", "no mujoco".into()));
        sections.newton.skipped = Some(Skipped::new("newton_engines", "no mujoco".into()));
        sections.steps = Some(StepsPart {
            staged: false,
            notes: vec![
                StepNote::Failed {
                    config: "clutter_n40".into(),
                    run: "clutter_engines".into(),
                    error: "boom".into(),
                },
                StepNote::NoDrake {
                    run: "balls_engines".into(),
                },
            ],
        });
        // A skipped fresh run computes none of its tables; no stages without the staged run.
        let shown: Vec<&str> = TABLES
            .into_iter()
            .filter(|t| {
                ![
                    "fresh_sets",
                    "fresh_iterations",
                    "fresh",
                    "pgs_levels",
                    "pgs_problems",
                    "newton_levels",
                    "newton_problems",
                    "stages_sets",
                    "stages",
                ]
                .contains(t)
            })
            .collect();
        let page = page(sections, &shown);
        for want in [
            "**The fresh clutter was not measured in this run** (`fresh_engines`: no mujoco); \
             with Python's `mujoco` and the contactlab package installed, `just peers` measures \
             it.",
            "**Pinocchio's solvers were not measured in this run** (`pinocchio_engines`: no \
             pin); with `pip install pin h5py`",
            "\n\n`clutter_n40` failed in `clutter_engines`: boom.\n\nDrake did not run in \
             `balls_engines`: `pydrake` did not import, so `bench.py` ran with `--no-drake` (the \
             config's `[when_missing]`); `pip install drake` adds its column.\n\n| steps |",
            "`steps.csv` (whole steps, per scene and engine).",
        ] {
            assert!(page.contains(want), "`{want}` in\n{page}");
        }
        assert!(!page.contains("Where a whole step's time goes"), "{page}");
        assert!(!page.contains("fresh_sets.csv"), "{page}");
        assert!(
            page.contains(
                "**Our PGS was not measured beside MuJoCo's in this run** (`pgs_engines`: no \
                 mujoco); with Python's `mujoco` and the contactlab package installed, `just \
                 peers` measures it."
            ) && !page.contains("pgs_levels.csv"),
            "{page}"
        );
        assert!(
            page.contains(
                "**Todorov's driver was not measured beside MuJoCo's Newton in this run** \
                 (`newton_engines`: no mujoco); with Python's `mujoco` and the contactlab package \
                 installed, `just peers` measures it."
            ) && !page.contains("newton_levels.csv"),
            "{page}"
        );
    }
}
