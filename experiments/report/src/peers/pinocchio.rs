//! The section *Beside Pinocchio's solvers*: our ADMM and PGS (`pinocchio.toml`) and Pinocchio's
//! ADMM (its default rule for `rho` and the paper's spectral rule) and PGS
//! (`pinocchio_engines.toml`) on the same problems, each by the time it needs to reach our
//! natural-map residual tolerance ([`crate::analysis::pinocchio`]).
//!
//! Facts (`<slug>` as [`super::slug`] writes a solver): per set and solver
//! `pin.<set>.<slug>.{problems, reached, ms, first}`; per set and Pinocchio ADMM
//! `pin.<set>.admm_vs.<slug>.{both, ratio, short, ratio_short, long, ratio_long}` (short: Pinocchio's
//! solve under [`crate::analysis::pinocchio::SHORT_SOLVE`]) and `.aim` (`within` or `over`: the
//! median ratio against `admm_aim` of `quoted_published.csv`); per set `pin.<set>.first` (the solver first to the
//! tolerance on most problems) and `pin.<set>.first_count`; `pin.tol`, `pin.version`, `pin.max_iter` (Pinocchio's iteration cap).

use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::RunConfig;

use super::slug;
use crate::analysis::peers::{skipped, solves};
use crate::analysis::pinocchio::{head_to_head, ours, reach, theirs};
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

/// Writes the section when both runs are there; `false` when our run is not.
pub fn section(r: &mut Report, root: &Path) -> Result<bool, ReportError> {
    let (ours_file, theirs_file) = (r.config_file(OURS), r.config_file(THEIRS));
    if !ours_file.exists() || !theirs_file.exists() {
        return Ok(false);
    }
    let cfg = ProblemsConfig::load(&ours_file)?;
    if !contactlab_runs::store::run_exists(&cfg.data_path(root)) {
        return Ok(false);
    }
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let mut all = ours(&solves(&df)?);
    let ecfg = EnginesConfig::load(&theirs_file)?;
    r.heading(2, "Beside Pinocchio's solvers");
    let tol = cfg.solvers.first().map_or(f64::NAN, |s| s.tol);
    r.facts().num("pin.tol", tol, Fmt::sci(0));
    let measured = if contactlab_runs::store::run_exists(&ecfg.data_path(root)) {
        let (edf, _) = r.load_data(&ecfg.name, &ecfg.data_path(root))?;
        match skipped(&edf)? {
            Some(why) => {
                r.text(&format!(
                    "**Pinocchio's solvers were not measured in this run** (`{}`: {why}); with \
                     `pip install pin h5py` (Pinocchio 4.1), `just peers` measures them.",
                    ecfg.name
                ));
                false
            }
            None => {
                let version = crate::analysis::strs(&edf, "pinocchio_version")?
                    .into_iter()
                    .find(|v| !v.is_empty())
                    .unwrap_or_default();
                let max_iter = crate::analysis::f64s(&edf, "max_iter")?
                    .into_iter()
                    .find(|v| v.is_finite())
                    .unwrap_or(f64::NAN);
                r.facts()
                    .text("pin.version", version)
                    .num("pin.max_iter", max_iter, Fmt::int());
                all.extend(theirs(&edf)?);
                true
            }
        }
    } else {
        false
    };
    r.text(&format!(
        "Our ADMM and PGS (`pinocchio.toml`: the whole problem with a dense `W`, as Pinocchio's \
         `DelassusOperatorDense` gets it) and Pinocchio's ADMM (its default rule for `rho`, and \
         the paper's spectral rule) and PGS (`pinocchio_engines.toml`) on the same problems, \
         each judged by the same natural-map residual. Pinocchio's stopping tests are not that \
         residual, so each of its solvers runs over a ladder of its own tolerances and its time \
         is that of the cheapest rung whose answer meets ours; our time is the solve without \
         forming `W` (Pinocchio is handed `W`). Both sides' solves are warm in cache: \
         Pinocchio's repeats run back to back, and each of ours under {:.0} ms follows an \
         untimed one of the same solver. `first`: problems on which the solver reached the \
         tolerance before every other. Times in ms, medians over the problems a solver reached \
         the tolerance on.",
        contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3
    ));
    let rows = reach(&all);
    let mut t = Table::new(Some("pinocchio.csv"))
        .col("problem set", "problem_set")
        .col("solver", "solver")
        .col("reached the tolerance", "reached")
        .col("problems", "problems")
        .col("median ms", "median_seconds")
        .col("first", "first");
    let mut sets: Vec<String> = Vec::new();
    for row in &rows {
        if !sets.contains(&row.set) {
            sets.push(row.set.clone());
        }
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
    r.table(&t)?;
    if !measured {
        return Ok(true);
    }
    r.facts().num(
        "pin.short_ms",
        crate::analysis::pinocchio::SHORT_SOLVE * 1e3,
        Fmt::fixed(1),
    );
    for set in &sets {
        let best = rows
            .iter()
            .filter(|row| &row.set == set)
            .max_by_key(|row| row.first)
            .map(|row| (row.solver.clone(), row.first));
        let (name, count) = best.unwrap_or_default();
        r.facts().text(format!("pin.{set}.first"), name).num(
            format!("pin.{set}.first_count"),
            count as f64,
            Fmt::int(),
        );
        for theirs in THEIR_ADMMS {
            let h = head_to_head(&all, set, OUR_ADMM, theirs);
            let k = format!("pin.{set}.admm_vs.{}", slug(theirs));
            r.facts()
                .num(format!("{k}.both"), h.both as f64, Fmt::int())
                .num(
                    format!("{k}.ratio"),
                    h.median_ratio,
                    Fmt::fixed(2).unit("x"),
                )
                .num(format!("{k}.short"), h.short.0 as f64, Fmt::int())
                .num(
                    format!("{k}.ratio_short"),
                    h.short.1,
                    Fmt::fixed(2).unit("x"),
                )
                .num(format!("{k}.long"), h.long.0 as f64, Fmt::int())
                .num(format!("{k}.ratio_long"), h.long.1, Fmt::fixed(2).unit("x"));
            if let Some(aim) = super::quoted(r, "admm_aim")? {
                let word = if h.median_ratio <= aim {
                    "within"
                } else {
                    "over"
                };
                r.facts().text(format!("{k}.aim"), word);
            }
        }
    }
    Ok(true)
}
