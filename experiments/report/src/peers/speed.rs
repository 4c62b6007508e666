//! The section *SAP at MuJoCo's speed*: the speed protocol's run (`speed.toml`) beside MuJoCo's
//! cold solve of the same steps (the `auto_cold` variant of `solvers_mujoco.toml`), per problem
//! and per set, with each ratio split into build share, iteration ratio and per-iteration ratio
//! ([`crate::analysis::speed`]).
//!
//! Facts (`<slug>` as [`super::slug`] writes a label): per set and solver
//! `speed.<set>.<slug>.{problems, converged, ratio, ratio_without_build, build_factor,
//! iteration_ratio, per_iteration_ratio}`, and `speed.<set>.<slug>.aim` (`within` or
//! `short of`: the median ratio against the project's aim, `speed_aim` of
//! `quoted_published.csv`); `speed.<slug>.answer_gap` (each other way of solving against
//! SAP's default: the largest [`relative_gap`] of their impulses over the problems both solved);
//! `speed.rel_tol`, `speed.rounds` and `speed.mujoco_tolerance`.

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::RunConfig;

use super::slug;
use crate::analysis::peers::{relative_gap, solves, MujocoSolve, Solve};
use crate::analysis::speed::{speed_rows, summaries, SpeedRow};
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
    super::quoted(r, "speed_aim")
}

/// Writes the section when the speed run and MuJoCo's cold solves are there; `false` when not.
pub fn section(
    r: &mut Report,
    root: &Path,
    mujoco: &BTreeMap<String, MujocoSolve>,
) -> Result<bool, ReportError> {
    let file = r.config_file(SPEED);
    if !file.exists() {
        return Ok(false);
    }
    let cfg = ProblemsConfig::load(&file)?;
    if !contactlab_runs::store::run_exists(&cfg.data_path(root)) {
        return Ok(false);
    }
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let all = solves(&df)?;
    let rows = speed_rows(&all, mujoco);
    if rows.is_empty() {
        r.heading(2, "SAP at MuJoCo's speed");
        r.text(&format!(
            "`{}` ran, but MuJoCo's cold solve of the same steps (the `auto_cold` variant of \
             `solvers_mujoco`) was not measured in this run, so no ratio is given.",
            cfg.name
        ));
        return Ok(false);
    }
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
    let sums = summaries(&rows);
    let aim = speed_aim(r)?;
    for (label, gap) in answer_gaps(&all) {
        r.facts().num(
            format!("speed.{}.answer_gap", slug(&label)),
            gap,
            Fmt::sci(1),
        );
    }
    for s in &sums {
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
    r.heading(2, "SAP at MuJoCo's speed");
    r.text(&format!(
        "SAP's Newton against MuJoCo's Newton, which solves the same class of problem (a convex, \
         regularised primal in generalized velocities with an exact line search), by the speed \
         protocol: each of our timed solves starts from the problem as read (the build, with the \
         regularisation from the Delassus estimate and the Hessian's analysis, inside the time; \
         a solve under {:.0} ms after an untimed one of the same solver, so that its code is in \
         cache as in MuJoCo's repeats, with nothing it derived carried over), SAP's own stopping \
         test (eq. 26) at the relative tolerance of `speed.toml`; MuJoCo's `mj_fwdConstraint` \
         alone with its default Jacobian, warm start disabled and its `opt.tolerance` set to \
         the same number. Ratios per problem, then their median over the set. The ratio is the \
         product of three factors: the build's share (`T / (T - B)`), the iteration ratio (ours \
         summed over islands against MuJoCo's summed over its islands) and the per-iteration \
         ratio.",
        contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3
    ));
    let x2 = Fmt::fixed(2);
    let mut t = Table::new(Some("speed_sets.csv"))
        .col("problem set", "problem_set")
        .col("solver", "solver")
        .col("converged", "converged")
        .col("ratio to MuJoCo", "ratio")
        .col("without the build", "ratio_without_build")
        .col("= build share", "build_factor")
        .col("x iteration ratio", "iteration_ratio")
        .col("x per-iteration ratio", "per_iteration_ratio");
    for s in &sums {
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
    r.table(&t)?;
    r.text(
        "The medians of the factors need not multiply to the median ratio; per problem they do \
         (`speed.csv`).",
    );
    problem_table(r, &rows)?;
    Ok(true)
}

/// `speed.csv`: per problem and solver.
fn problem_table(r: &mut Report, rows: &[SpeedRow]) -> Result<(), ReportError> {
    let ms = Fmt::fixed(3);
    let x2 = Fmt::fixed(2);
    let sci = Fmt::sci(4);
    let mut t = Table::new(Some("speed.csv"))
        .col("problem", "problem")
        .col("contacts", "contacts")
        .col("solver", "solver")
        .col("status", "status")
        .col("ms", "seconds")
        .col("build ms", "build_seconds")
        .col("iterations", "iterations")
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
    r.table(&t)
}
