//! The section *Beside Pinocchio's solvers* (`templates/pinocchio.md`): our ADMM and PGS
//! (`pinocchio.toml`) and Pinocchio's ADMM (its default rule for `rho` and the paper's spectral
//! rule) and PGS (`pinocchio_engines.toml`) on the same problems, each by the time it needs to
//! reach our natural-map residual tolerance ([`crate::analysis::pinocchio`]). Its facts are
//! `pin.*` (`facts.md` lists them).

use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::common;
use contactlab_runs::RunConfig;

use polars::prelude::DataFrame;

use super::common::{quoted, slug, Skipped};
use crate::analysis::peers::{skipped, solves};
use crate::analysis::pinocchio::{head_to_head, ours, reach, theirs, HeadToHead, Reach, ToTol};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// Our side.
pub const OURS: &str = "pinocchio.toml";
/// Pinocchio's side.
pub const THEIRS: &str = "pinocchio_engines.toml";
/// Our ADMM's label in `pinocchio.toml`.
const OUR_ADMM: &str = "coulomb+admm (whole dense)";
/// Pinocchio's ADMM variants in the harness.
const THEIR_ADMMS: [&str; 2] = ["pinocchio-admm", "pinocchio-admm-spectral"];

/// What the templates see of the section.
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct Part {
    /// Whether the section is written (our run is there).
    pub(super) ran: bool,
    /// Pinocchio's run, when it could not measure.
    pub(super) skipped: Option<Skipped>,
}

/// The section's facts and table when our run is there.
pub(super) fn section(r: &mut Report, root: &Path) -> Result<Part, ReportError> {
    let (ours_file, theirs_file) = (r.config_file(OURS), r.config_file(THEIRS));
    if !ours_file.exists() || !theirs_file.exists() {
        return Ok(Part::default());
    }
    let cfg = ProblemsConfig::load(&ours_file)?;
    if !contactlab_runs::store::run_exists(&cfg.data_path(root)) {
        return Ok(Part::default());
    }
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let mut all = ours(&solves(&df)?);
    let ecfg = EnginesConfig::load(&theirs_file)?;
    let tol = cfg.solvers.first().map_or(f64::NAN, |s| s.tol);
    r.facts().num("pin.tol", tol, Fmt::sci(0));
    let mut part = Part {
        ran: true,
        skipped: None,
    };
    let measured = if contactlab_runs::store::run_exists(&ecfg.data_path(root)) {
        let (edf, _) = r.load_data(&ecfg.name, &ecfg.data_path(root))?;
        part.skipped = skipped(&edf)?.map(|why| {
            // The findings that quote Pinocchio's numbers say why they are missing.
            r.facts()
                .absent("pin.", format!("Pinocchio not measured, {why}"));
            Skipped::new(&ecfg.name, why)
        });
        if part.skipped.is_none() {
            their_facts(r, &edf)?;
            all.extend(theirs(&edf)?);
        }
        part.skipped.is_none()
    } else {
        false
    };
    let rows = reach(&all);
    reach_table(r, &rows)?;
    if measured {
        head_to_head_facts(r, &all, &rows)?;
    }
    Ok(part)
}

/// `pin.version` and `pin.max_iter` (Pinocchio's iteration cap), from its run's data.
fn their_facts(r: &mut Report, edf: &DataFrame) -> Result<(), ReportError> {
    let version = crate::analysis::strs(edf, "pinocchio_version")?
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    let max_iter = crate::analysis::f64s(edf, "max_iter")?
        .into_iter()
        .find(|v| v.is_finite())
        .unwrap_or(f64::NAN);
    r.facts()
        .text("pin.version", version)
        .num("pin.max_iter", max_iter, Fmt::int());
    Ok(())
}

/// `pinocchio.csv` (`tables.pinocchio`) and per set and solver its facts.
fn reach_table(r: &mut Report, rows: &[Reach]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("pinocchio.csv"))
        .col("problem set", common::PROBLEM_SET)
        .col(common::SOLVER, common::SOLVER)
        .col("reached the tolerance", "reached")
        .col("problems", "problems")
        .col("median ms", "median_seconds")
        .col("first", "first");
    for row in rows {
        let k = format!("pin.{}.{}", row.set, slug(&row.solver));
        r.facts()
            .num(format!("{k}.problems"), row.problems as f64, Fmt::int())
            .num(format!("{k}.reached"), row.reached as f64, Fmt::int())
            .num(
                format!("{k}.ms"),
                row.median_seconds * 1e3,
                Fmt::fixed(3).unit(" ms"),
            )
            .num(format!("{k}.first"), row.first as f64, Fmt::int());
        t.row(vec![
            C::text(&row.set),
            C::text(&row.solver),
            C::int(row.reached as i64),
            C::int(row.problems as i64),
            C::num(row.median_seconds * 1e3, &Fmt::fixed(3), &Fmt::sci(4)),
            C::int(row.first as i64),
        ])?;
    }
    r.show_table("pinocchio", &t)
}

/// Per set the solver first to the tolerance most often, and our ADMM against each of
/// Pinocchio's (`pin.<set>.admm_vs.*`).
fn head_to_head_facts(r: &mut Report, all: &[ToTol], rows: &[Reach]) -> Result<(), ReportError> {
    r.facts().num(
        "pin.short_ms",
        crate::analysis::pinocchio::SHORT_SOLVE * 1e3,
        Fmt::fixed(1),
    );
    let mut sets: Vec<&str> = Vec::new();
    for row in rows {
        if !sets.contains(&row.set.as_str()) {
            sets.push(&row.set);
        }
    }
    let aim = quoted(r, "admm_aim")?;
    for set in sets {
        let best = rows
            .iter()
            .filter(|row| row.set == set)
            .max_by_key(|row| row.first)
            .map(|row| (row.solver.clone(), row.first));
        let (name, count) = best.unwrap_or_default();
        r.facts().text(format!("pin.{set}.first"), name).num(
            format!("pin.{set}.first_count"),
            count as f64,
            Fmt::int(),
        );
        for theirs in THEIR_ADMMS {
            admm_facts(
                r,
                &head_to_head(all, set, OUR_ADMM, theirs),
                set,
                theirs,
                aim,
            );
        }
    }
    Ok(())
}

/// Our ADMM against Pinocchio's `theirs` on `set`, and the median ratio against `aim`.
fn admm_facts(r: &mut Report, h: &HeadToHead, set: &str, theirs: &str, aim: Option<f64>) {
    let k = format!("pin.{set}.admm_vs.{}", slug(theirs));
    let x = Fmt::fixed(2).unit("x");
    r.facts()
        .num(format!("{k}.both"), h.both as f64, Fmt::int())
        .num(format!("{k}.ratio"), h.median_ratio, x.clone())
        .num(format!("{k}.short"), h.short.0 as f64, Fmt::int())
        .num(format!("{k}.ratio_short"), h.short.1, x.clone())
        .num(format!("{k}.long"), h.long.0 as f64, Fmt::int())
        .num(format!("{k}.ratio_long"), h.long.1, x);
    if let Some(aim) = aim {
        let word = if h.median_ratio <= aim {
            "within"
        } else {
            "over"
        };
        r.facts().text(format!("{k}.aim"), word);
    }
}
