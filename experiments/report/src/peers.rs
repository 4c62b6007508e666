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
//! `experiments/peers/bench.py`, MuJoCo's and Drake's whole steps). An engines run that could
//! not measure (no Python, a missing package, `CONTACTLAB_NO_PEERS`) is said so on the page,
//! and its columns show `-`. The whole-step section is left out when `balls` and `clutter`
//! have not been run. The statistics are [`crate::analysis::peers`].
//!
//! Tables: per problem set and solver (`peers.csv`), what islands gain per pair (`gains.csv`),
//! per problem, solver and layout (`problems.csv`), whole steps per scene and engine
//! (`steps.csv`, and a summary per scene set), and their stages (`stages.csv`).
//!
//! Facts for the findings (`<slug>` is a label as [`slug`] writes it:
//! `coulomb+pgs (whole dense)` is `coulomb+pgs_whole_dense`): `solvers.{problems, solvers,
//! rounds, slow_seconds, slow_rounds, warm_up_ms, tol, time_limit}`; per set `<set>.{problems,
//! contacts_min, contacts_max, mujoco_ms}` and per set and solver `<set>.<slug>.{solved,
//! iterations, ms, ratio_to_mujoco}`; per set and pair (both layouts)
//! `<set>.<pair>.{gain, gain_without_build, build_share_islands, build_share_dense,
//! both_converged, answer_gap, unsolved_statuses, rounds_min, largest_island,
//! largest_contacts}`; `mujoco.{measured, version, problems, replayed, repeats,
//! abs_residual_median}`; per scene set and our solver `steps.<set>.<slug>.{scenes, contacts,
//! ms, mujoco_ms, drake_ms, ratio}`, and `steps.measured`, `steps.drake`; the stages of a whole
//! step in the private module `stages`; the speed protocol's
//! (`speed.toml`) in the private module `speed`, and Pinocchio's (`pinocchio.toml`,
//! `pinocchio_engines.toml`) in `pinocchio`.

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
    LayoutGain, MujocoSolve, PeerSteps, Solve, WholeStep,
};
use crate::analysis::quantile;
use crate::error::ReportError;
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::problems::ProblemsConfig;

/// Our solves on MuJoCo's steps.
pub const SOLVERS: &str = "solvers.toml";
/// MuJoCo's constraint solves of the same steps.
pub const MUJOCO: &str = "solvers_mujoco.toml";
/// Our whole steps and the peers' on the same scenes: (our sweep, the engines' run).
pub const STEPS: [(&str, &str); 2] = [
    ("balls.toml", "balls_engines.toml"),
    ("clutter.toml", "clutter_engines.toml"),
];

/// A label as a fact name's part: letters, digits and `_ . - +` kept, any other run of
/// characters one `_`, none at either end (`coulomb+pgs (whole dense)` -> `coulomb+pgs_whole_dense`).
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || "_.-+".contains(c) {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// A number of `quoted_published.csv` by its quantity (`None` without the file or the row:
/// the facts that compare with it are then not made).
fn quoted(r: &Report, quantity: &str) -> Result<Option<f64>, ReportError> {
    let path = r.config_file(crate::builder::QUOTED);
    if !path.exists() {
        return Ok(None);
    }
    let want = ["quantity", "value", "source"];
    let rows = crate::csv::read_csv_with_header(&path, &want)?;
    rows.iter()
        .find(|row| row[0] == quantity)
        .map(|row| crate::csv::number(&path, row, &want, 1))
        .transpose()
}

/// Milliseconds with three decimals, `-` for NaN.
fn ms() -> Fmt {
    Fmt::fixed(3)
}

/// Writes `reports/peers/` from the peers' runs.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "peers",
        "Beside MuJoCo and Drake: every formulation, solver against solver and step against step",
        "E. Todorov, T. Erez and Y. Tassa, *MuJoCo: A physics engine for model-based control*, \
         IROS 2012 (MuJoCo's Newton solver on its soft contacts), and Drake's SAP (A. Castro, \
         F. Permenter and X. Han, *An unconstrained convex formulation of compliant contact*, \
         IEEE T-RO 2023), measured here beside this project's solvers.",
    );
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

    r.text(
        "Every formulation of this workspace beside MuJoCo's constraint solver on steps MuJoCo \
         exported (solver against solver), and this project's scenes beside MuJoCo's and Drake's \
         whole steps on the same scenes (step against step): both sides measured by the runs \
         listed above, on this machine, so that every ratio compares times measured side by \
         side. How each number is measured, and what they show, is written under *How it is \
         measured* and *Findings* below.",
    );
    if let Some(why) = &not_measured {
        r.text(&format!(
            "**MuJoCo's constraint solver was not measured in this run** (`{}`: {why}). Its \
             columns show `-` and no ratio to it is given; with Python's `mujoco` installed \
             (`pip install mujoco numpy`), `just peers` measures it.",
            mcfg.name
        ));
    }
    problem_facts(&mut r, &cfg, &solves, &mujoco, &not_measured, &sets);

    r.heading(2, "Per problem set");
    r.text(
        "`solved`: the natural-map residual at most the tolerance (for SAP, its own optimality: \
         its model is regularised). Times in ms: per problem the median over the timed rounds, \
         then the median over the set's problems; the ratio to MuJoCo is taken per problem, \
         then its median over the set.",
    );
    set_table(&mut r, &solves, &mujoco, &set_names)?;

    r.heading(2, "What islands and block-sparse `W` gain");
    r.text(
        "Median over each set's problems of the time of the whole problem with a dense `W` over \
         the time island by island with block-sparse `W`, same solver, same run.",
    );
    gain_table(&mut r, &solves, &sets)?;
    problems_table(&mut r, &solves, &mujoco)?;

    let fast = speed::section(&mut r, root, &mujoco)?;
    let pin = pinocchio::section(&mut r, root)?;
    // `None`: no whole steps; `Some(staged)`: written, with the stages' table or without.
    let steps = whole_step_section(&mut r, root)?;
    r.text(&format!(
        "Files: `peers.csv` (per set and solver), `gains.csv` and `gains_fastest.csv` (what \
         islands and blocks gain, per pair and set, by the rounds' median and by the fastest \
         round), `problems.csv` (per problem, solver and layout){}{}{}.",
        if fast {
            ", `speed_sets.csv` and `speed.csv` (SAP's speed protocol, per set and per problem)"
        } else {
            ""
        },
        if pin {
            ", `pinocchio.csv` (our ADMM and PGS beside Pinocchio's)"
        } else {
            ""
        },
        match steps {
            Some(true) => {
                ", `steps.csv` (whole steps, per scene and engine) and `stages.csv` (where their \
                 time goes, stage by stage)"
            }
            Some(false) => ", `steps.csv` (whole steps, per scene and engine)",
            None => "",
        }
    ));
    r.finish()?;
    Ok(())
}

/// The facts of the problem-set comparison (see the module documentation).
fn problem_facts(
    r: &mut Report,
    cfg: &ProblemsConfig,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    not_measured: &Option<String>,
    sets: &[(String, String)],
) {
    let set_names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    let mut problems: Vec<&str> = solves.iter().map(|s| s.problem.as_str()).collect();
    problems.sort();
    problems.dedup();
    let tol = cfg.solvers.first().map_or(f64::NAN, |s| s.tol);
    let limit = cfg
        .solvers
        .first()
        .and_then(|s| s.time_limit)
        .unwrap_or(f64::NAN);
    let f = r.facts();
    f.num("solvers.problems", problems.len() as f64, Fmt::int())
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
    for set in &set_names {
        let contacts: Vec<f64> = solves
            .iter()
            .filter(|s| &s.set == set)
            .map(|s| s.contacts as f64)
            .collect();
        let count = {
            let mut p: Vec<&str> = solves
                .iter()
                .filter(|s| &s.set == set)
                .map(|s| s.problem.as_str())
                .collect();
            p.sort();
            p.dedup();
            p.len()
        };
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
    for row in set_rows(solves, mujoco, &set_names) {
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
    for g in layout_gains(solves, &set_names) {
        let k = format!("{}.{}", g.set, slug(&g.pair));
        f.num(format!("{k}.gain"), g.gain, Fmt::fixed(2).unit("x"))
            .num(
                format!("{k}.gain_fastest"),
                g.gain_fastest,
                Fmt::fixed(2).unit("x"),
            )
            .num(
                format!("{k}.worst_fastest"),
                g.worst_fastest().map_or(f64::NAN, |w| w.1),
                Fmt::fixed(2).unit("x"),
            )
            .text(
                format!("{k}.worst_fastest_problem"),
                g.worst_fastest().map_or("", |w| w.0),
            )
            .num(
                format!("{k}.gain_without_build"),
                g.gain_without_build,
                Fmt::fixed(2).unit("x"),
            )
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
            .text(
                format!("{k}.unsolved_statuses"),
                if g.unsolved_statuses.is_empty() {
                    "none".to_string()
                } else {
                    g.unsolved_statuses.join(" and ")
                },
            )
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
    f.text(
        "mujoco.measured",
        not_measured
            .as_ref()
            .map_or("measured in this run".to_string(), |why| {
                format!("not measured in this run ({why})")
            }),
    )
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

/// `peers.csv` and the per-set table.
fn set_table(
    r: &mut Report,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
    sets: &[String],
) -> Result<(), ReportError> {
    let sci = Fmt::sci(4);
    let mut t = Table::new(Some("peers.csv"))
        .col("problem set", "problem_set")
        .col("solver", "solver")
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
    r.table(&t)
}

/// A number in `fmt`, empty for NaN (a CSV cell without a value).
fn csv_number(v: f64, fmt: &Fmt) -> String {
    if v.is_nan() {
        String::new()
    } else {
        fmt.number(v)
    }
}

/// `gains.csv` and the table of what islands and blocks gain, one row per pair; then
/// `gains_fastest.csv`, the same by each solve's fastest round, with the facts that judge it
/// (`gains.fastest_median_min` and `_at`, `gains.fastest_median_aim`: `meets` or `misses`
/// `islands_median_aim`; `gains.fastest_worst` and `_at`; `gains.fastest_below`: solves of a
/// problem below `islands_worst_aim`, both of `quoted_published.csv`).
fn gain_table(
    r: &mut Report,
    solves: &[Solve],
    sets: &[(String, String)],
) -> Result<(), ReportError> {
    let names: Vec<String> = sets.iter().map(|s| s.0.clone()).collect();
    let gains = layout_gains(solves, &names);
    let mut pairs: Vec<&str> = Vec::new();
    for g in &gains {
        if !pairs.contains(&g.pair.as_str()) {
            pairs.push(&g.pair);
        }
    }
    let table = |file: &str, of: &dyn Fn(&LayoutGain) -> f64| -> Result<Table, ReportError> {
        let mut t = Table::new(Some(file)).col("solver", "solver");
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
    };
    r.table(&table("gains.csv", &|g| g.gain)?)?;
    let Some(median_min) = gains
        .iter()
        .filter(|g| !g.gain_fastest.is_nan())
        .min_by(|a, b| a.gain_fastest.total_cmp(&b.gain_fastest))
    else {
        return Ok(());
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
    r.text(
        "The same by each solve's fastest round (the code is deterministic, so its fastest \
         round is the statistic the machine's load moves least; on solves of tens of \
         microseconds the rounds' median moves by several per cent between layouts that run \
         the same code).",
    );
    r.table(&table("gains_fastest.csv", &|g| g.gain_fastest)?)
}

/// `problems.csv`: per problem (by name), solver and layout, beside MuJoCo's solve of it.
fn problems_table(
    r: &mut Report,
    solves: &[Solve],
    mujoco: &BTreeMap<String, MujocoSolve>,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("problems.csv"));
    for c in [
        "problem",
        "problem_set",
        "contacts",
        "solver",
        "layout",
        "status",
        "iterations",
        "islands",
        "residual",
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
    r.table(&t)
}

/// The whole-step section and `steps.csv`, when our sweeps have run: `None` when it was not
/// written, else whether the stages' table was.
fn whole_step_section(r: &mut Report, root: &Path) -> Result<Option<bool>, ReportError> {
    let mut ours: Vec<WholeStep> = Vec::new();
    let mut theirs: Vec<WholeStep> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut drake_missing = false;
    let mut any = false;
    for (sweep, engines) in STEPS {
        let Some(run) = r.load_if_run(sweep)? else {
            continue;
        };
        any = true;
        ours.extend(whole_steps(&run.steps)?);
        let ecfg = EnginesConfig::load(&r.config_file(engines))?;
        let (edf, _) = r.load_data(&ecfg.name, &ecfg.data_path(root))?;
        if let Some(why) = skipped(&edf)? {
            notes.push(format!(
                "MuJoCo and Drake were not measured on `{}` in this run (`{}`: {why}).",
                run.config.name, ecfg.name
            ));
            continue;
        }
        let PeerSteps { rows, errors } = peer_steps(&edf)?;
        for (config, error) in errors {
            notes.push(format!("`{config}` failed in `{}`: {error}.", ecfg.name));
        }
        if !rows.iter().any(|w| w.engine == "drake-sap") {
            drake_missing = true;
            if ecfg.when_missing.contains_key("pydrake") {
                notes.push(format!(
                    "Drake did not run in `{}`: `pydrake` did not import, so `bench.py` ran \
                     with `--no-drake` (the config's `[when_missing]`); `pip install drake` adds \
                     its column.",
                    ecfg.name
                ));
            }
        }
        theirs.extend(rows);
    }
    if !any {
        return Ok(None);
    }
    let all: Vec<WholeStep> = ours.iter().chain(&theirs).cloned().collect();
    let sets = summary(&all);
    let f = r.facts();
    f.text(
        "steps.measured",
        if theirs.iter().any(|w| w.engine == "mujoco") {
            "measured in this run"
        } else {
            "not measured in this run"
        },
    )
    .text(
        "steps.drake",
        if drake_missing || theirs.is_empty() {
            "not measured in this run"
        } else {
            "measured in this run"
        },
    );
    for s in &sets {
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
            );
    }

    r.heading(2, "Whole steps, scene against scene");
    r.text(
        "Ours: `experiments/configs/peers/balls.toml` and `clutter.toml` run on one thread \
         (their `threads`) by the same runner as every experiment: each step's collision \
         detection, assembly, solve and update (`scene_seconds + seconds` of the driver's rows), \
         warm-started from the previous step. MuJoCo's: `mj_step` on the same scenes built by \
         `experiments/peers/bench.py` (Newton, elliptic cones, its soft contacts); Drake's: one \
         `AdvanceTo` of its SAP (point contact) per step, called from Python (`balls_engines.toml`, \
         `clutter_engines.toml` say with which parameters). The balls are the cells `(n_b, mu)` \
         of Todorov's Table 1, placed by different random generators on the two sides, so each \
         cell compares the same scene statistically. The ratio is taken per scene, then its \
         median over the set. Times in ms, medians over the steps of a run.",
    );
    for n in &notes {
        r.text(n);
    }
    let mut t = Table::new(None)
        .md_col("scene set")
        .md_col("our solver")
        .md_col("scenes")
        .md_col("our contacts per step")
        .md_col("our ms per step")
        .md_col("MuJoCo ms per step")
        .md_col("Drake ms per step")
        .md_col("ratio to MuJoCo");
    for s in &sets {
        t.row(vec![
            C::text(&s.set),
            C::text(&s.solver),
            C::int(s.scenes as u64),
            C::same(s.contacts_median, &Fmt::int()),
            C::same(s.median_seconds * 1e3, &ms()),
            C::same(s.mujoco_median_seconds * 1e3, &ms()),
            C::same(s.drake_median_seconds * 1e3, &ms()),
            C::same(s.ratio_to_mujoco, &Fmt::fixed(1)),
        ])?;
    }
    r.table(&t)?;
    let aim = speed::speed_aim(r)?;
    let staged = stages::section(r, &ours, &theirs, aim)?;
    let mut csv = Table::new(Some("steps.csv"));
    for c in [
        "scene",
        "engine",
        "solver",
        "steps",
        "contacts_median",
        "median_seconds",
    ] {
        csv = csv.csv_col(c);
    }
    // Ours first (in the sweeps' order), then the peers' per scene.
    for w in ours.iter().chain(&theirs) {
        csv.row(vec![
            C::text(&w.scene),
            C::text(&w.engine),
            C::text(&w.solver),
            C::int(w.steps as u64),
            C::text(format!("{}", w.contacts_median)),
            C::same(w.median_seconds, &Fmt::sci(4)),
        ])?;
    }
    r.table(&csv)?;
    Ok(Some(staged))
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn labels_become_fact_names() {
        assert_eq!(slug("coulomb+pgs"), "coulomb+pgs");
        assert_eq!(slug("coulomb+pgs (whole dense)"), "coulomb+pgs_whole_dense");
        assert_eq!(
            slug("sap+newton-merit (whole step)"),
            "sap+newton-merit_whole_step"
        );
        assert_eq!(slug("  a  b "), "a_b");
    }
}
