//! The section *SAP at MuJoCo's speed* (`templates/speed.md`): the speed protocol's run
//! (`speed.toml`) beside MuJoCo's cold solve of the same steps (the `auto_cold` variant of
//! `solvers_mujoco.toml`), per problem and per set, with each ratio split into build share,
//! iteration ratio and per-iteration ratio ([`crate::analysis::speed`]). Its facts are
//! `speed.*` (`facts.md` lists them).

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::problems;
use contactlab_runs::RunConfig;

use super::common::{quoted, slug};
use crate::analysis::peers::{relative_gap, solves, MujocoSolve, Solve};
use crate::analysis::speed::{speed_rows, summaries, SpeedRow, SpeedSummary};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The speed protocol's config.
pub const SPEED: &str = "speed.toml";

/// The speed protocol's subject, SAP's Newton with its defaults.
const REFERENCE: &str = "sap+newton-merit";

/// Per solver other than [`REFERENCE`], the largest [`relative_gap`] of its impulses from the
/// reference's over the problems both solved (NaN when there is none).
fn answer_gaps(all: &[Solve]) -> BTreeMap<String, f64> {
    let reference: BTreeMap<&str, &Solve> = all
        .iter()
        .filter(|s| s.solver == REFERENCE && s.converged())
        .map(|s| (s.problem.as_str(), s))
        .collect();
    let mut gaps = BTreeMap::new();
    for s in all.iter().filter(|s| s.solver != REFERENCE) {
        let gap = gaps.entry(s.solver.clone()).or_insert(f64::NAN);
        if let Some(b) = reference.get(s.problem.as_str()).filter(|_| s.converged()) {
            let g = relative_gap(&s.answer, &b.answer);
            if !g.is_nan() {
                *gap = if gap.is_nan() { g } else { gap.max(g) };
            }
        }
    }
    gaps
}

/// The project's aim for SAP against MuJoCo, the `speed_aim` row of `quoted_published.csv`
/// (`None` without it: the facts that compare with it are then not made).
pub(super) fn speed_aim(r: &Report) -> Result<Option<f64>, ReportError> {
    quoted(r, "speed_aim")
}

/// What the templates see of the section.
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct Part {
    /// Whether the section is written (the speed run is there).
    pub(super) written: bool,
    /// The speed run's name.
    pub(super) run: String,
    /// Whether MuJoCo's cold solves were there, so that the ratios are.
    pub(super) ratios: bool,
}

/// The section's facts and tables when the speed run is there (with ratios when MuJoCo's cold
/// solves are there too).
pub(super) fn section(
    r: &mut Report,
    root: &Path,
    mujoco: &BTreeMap<String, MujocoSolve>,
) -> Result<Part, ReportError> {
    let file = r.config_file(SPEED);
    if !file.exists() {
        return Ok(Part::default());
    }
    let cfg = ProblemsConfig::load(&file)?;
    if !contactlab_runs::store::run_exists(&cfg.data_path(root)) {
        return Ok(Part::default());
    }
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let all = solves(&df)?;
    let rows = speed_rows(&all, mujoco);
    let ratios = !rows.is_empty();
    if ratios {
        let sums = summaries(&rows);
        speed_facts(r, &cfg, mujoco, &all, &sums)?;
        sets_table(r, &sums)?;
        problem_table(r, &rows)?;
    }
    Ok(Part {
        written: true,
        run: cfg.name.clone(),
        ratios,
    })
}

/// `speed.*`: the protocol's settings, each other way's answer gap, per set and solver the
/// ratio and its factors, and the ratio against the aim.
fn speed_facts(
    r: &mut Report,
    cfg: &ProblemsConfig,
    mujoco: &BTreeMap<String, MujocoSolve>,
    all: &[Solve],
    sums: &[SpeedSummary],
) -> Result<(), ReportError> {
    let rel_tol = cfg.solvers.first().map_or(f64::NAN, |s| s.rel_tol);
    let mj_tol = mujoco
        .values()
        .map(|m| m.cold_tolerance)
        .find(|t| t.is_finite())
        .unwrap_or(f64::NAN);
    r.facts()
        .num("speed.rel_tol", rel_tol, Fmt::sci(0))
        .num("speed.rounds", cfg.rounds as f64, Fmt::int())
        .num("speed.mujoco_tolerance", mj_tol, Fmt::sci(0));
    let aim = speed_aim(r)?;
    for (label, gap) in answer_gaps(all) {
        r.facts().num(
            format!("speed.{}.answer_gap", slug(&label)),
            gap,
            Fmt::sci(1),
        );
    }
    for s in sums {
        summary_facts(r, s, aim);
    }
    Ok(())
}

/// One set and solver's ratio, its factors, and the ratio against `aim`.
fn summary_facts(r: &mut Report, s: &SpeedSummary, aim: Option<f64>) {
    let k = format!("speed.{}.{}", s.set, slug(&s.solver));
    let x = Fmt::fixed(1).unit("x");
    r.facts()
        .num(format!("{k}.problems"), s.problems as f64, Fmt::int())
        .num(format!("{k}.converged"), s.converged as f64, Fmt::int())
        .num(format!("{k}.ratio"), s.ratio, x.clone())
        .num(
            format!("{k}.ratio_without_build"),
            s.ratio_without_build,
            x.clone(),
        )
        .num(
            format!("{k}.build_factor"),
            s.build_factor,
            Fmt::fixed(2).unit("x"),
        )
        .num(
            format!("{k}.iteration_ratio"),
            s.iteration_ratio,
            Fmt::fixed(2).unit("x"),
        )
        .num(format!("{k}.per_iteration_ratio"), s.per_iteration_ratio, x);
    if let Some(aim) = aim {
        let word = if s.ratio <= aim { "within" } else { "short of" };
        r.facts().text(format!("{k}.aim"), word);
    }
}

/// `speed_sets.csv`: per set and solver (`tables.speed_sets`).
fn sets_table(r: &mut Report, sums: &[SpeedSummary]) -> Result<(), ReportError> {
    let x2 = Fmt::fixed(2);
    let mut t = Table::new(Some("speed_sets.csv"))
        .col("problem set", problems::PROBLEM_SET)
        .col(problems::SOLVER, problems::SOLVER)
        .col("converged", "converged")
        .col("ratio to MuJoCo", "ratio")
        .col("without the build", "ratio_without_build")
        .col("= build share", "build_factor")
        .col("x iteration ratio", "iteration_ratio")
        .col("x per-iteration ratio", "per_iteration_ratio");
    for s in sums {
        t.row(vec![
            C::text(&s.set),
            C::text(&s.solver),
            C::text(format!("{}/{}", s.converged, s.problems)),
            C::num(s.ratio, &x2, &Fmt::fixed(4)),
            C::num(s.ratio_without_build, &x2, &Fmt::fixed(4)),
            C::num(s.build_factor, &x2, &Fmt::fixed(4)),
            C::num(s.iteration_ratio, &x2, &Fmt::fixed(4)),
            C::num(s.per_iteration_ratio, &x2, &Fmt::fixed(4)),
        ])?;
    }
    r.show_table("speed_sets", &t)
}

/// `speed.csv`: per problem and solver (`tables.speed`).
fn problem_table(r: &mut Report, rows: &[SpeedRow]) -> Result<(), ReportError> {
    let ms = Fmt::fixed(3);
    let x2 = Fmt::fixed(2);
    let sci = Fmt::sci(4);
    let mut t = Table::new(Some("speed.csv"))
        .col(problems::PROBLEM, problems::PROBLEM)
        .col("contacts", "contacts")
        .col(problems::SOLVER, problems::SOLVER)
        .col(problems::STATUS, problems::STATUS)
        .col("ms", problems::SECONDS)
        .col("build ms", problems::BUILD_SECONDS)
        .col(problems::ITERATIONS, problems::ITERATIONS)
        .col("MuJoCo ms", "mujoco_seconds")
        .col("MuJoCo iterations", "mujoco_iterations")
        .col("ratio", "ratio")
        .col("build share", "build_factor")
        .col("iteration ratio", "iteration_ratio")
        .col("per-iteration ratio", "per_iteration_ratio");
    for s in rows {
        t.row(vec![
            C::text(&s.problem),
            C::num(s.contacts as f64, &Fmt::int(), &Fmt::int()),
            C::text(&s.solver),
            C::text(&s.status),
            C::num(s.seconds * 1e3, &ms, &sci),
            C::num(s.build_seconds * 1e3, &ms, &sci),
            C::num(s.iterations, &Fmt::int(), &Fmt::int()),
            C::num(s.mujoco_seconds * 1e3, &ms, &sci),
            C::num(s.mujoco_iterations, &Fmt::int(), &Fmt::int()),
            C::num(s.ratio, &x2, &Fmt::fixed(4)),
            C::num(s.build_factor, &x2, &Fmt::fixed(4)),
            C::num(s.iteration_ratio, &x2, &Fmt::fixed(4)),
            C::num(s.per_iteration_ratio, &x2, &Fmt::fixed(4)),
        ])?;
    }
    r.show_table("speed", &t)
}
