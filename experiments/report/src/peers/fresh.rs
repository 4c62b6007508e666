//! The section *SAP beside MuJoCo on fresh clutter, interleaved* (`templates/fresh.md`):
//! `fresh_engines.toml`'s run of `experiments/peers/fresh_clutter.py`, SAP's Newton and MuJoCo's
//! cold Newton timed one solve after the other in one process, on clutter states the repository
//! never stored and on its five stored steps of 80 or more contacts. Per problem the ratio of
//! the two medians; per set their median, quartiles and extremes. Its facts are `fresh.*`
//! (`facts.md` lists them).

use std::path::Path;

use contactlab_runs::schema::common;
use polars::prelude::DataFrame;

use super::common::{engines_run, ms, quoted, RunPart};
use crate::analysis::peers::median;
use crate::analysis::{f64s, first_seen, quantile, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The study's config.
pub const FRESH: &str = "fresh_engines.toml";

/// What the templates see of the section.
pub(super) type Part = RunPart;

/// One problem's record.
struct Row {
    set: String,
    problem: String,
    contacts: f64,
    mujoco_s: f64,
    mujoco_iterations: f64,
    sap_s: f64,
    sap_iterations: f64,
    status: String,
    ratio: f64,
    replay_rel_diff: f64,
}

/// The section's facts and tables when the run is there.
pub(super) fn section(r: &mut Report, root: &Path) -> Result<Part, ReportError> {
    let (part, df) = engines_run(r, root, FRESH, "fresh.", "fresh clutter")?;
    let Some(df) = df else {
        return Ok(part);
    };
    let rows = read_rows(&df)?;
    settings_facts(r, &df)?;
    sets_table(r, &rows)?;
    super::iterations::table(r, &df)?;
    problems_table(r, &rows)?;
    Ok(part)
}

/// The run's records.
fn read_rows(df: &DataFrame) -> Result<Vec<Row>, ReportError> {
    let (set, problem, status) = (
        strs(df, "set")?,
        strs(df, common::PROBLEM)?,
        strs(df, "sap_status")?,
    );
    let num = |c: &str| f64s(df, c);
    let (contacts, mj, mj_it, sap, sap_it, ratio, replay) = (
        num("contacts")?,
        num("mujoco_seconds")?,
        num("mujoco_iterations")?,
        num("sap_seconds")?,
        num("sap_iterations")?,
        num("ratio")?,
        num("replay_rel_diff")?,
    );
    Ok((0..df.height())
        .map(|k| Row {
            set: set[k].clone(),
            problem: problem[k].clone(),
            contacts: contacts[k],
            mujoco_s: mj[k],
            mujoco_iterations: mj_it[k],
            sap_s: sap[k],
            sap_iterations: sap_it[k],
            status: status[k].clone(),
            ratio: ratio[k],
            replay_rel_diff: replay[k],
        })
        .collect())
}

/// `fresh.rounds`, `fresh.rel_tol`, `fresh.min_contacts` and `fresh.mujoco_version`: the
/// protocol's settings as the run recorded them.
fn settings_facts(r: &mut Report, df: &DataFrame) -> Result<(), ReportError> {
    let first = |c: &str| -> Result<f64, ReportError> {
        Ok(f64s(df, c)?
            .into_iter()
            .find(|v| v.is_finite())
            .unwrap_or(f64::NAN))
    };
    let (rounds, rel_tol, min_contacts) = (
        first(common::ROUNDS)?,
        first("rel_tol")?,
        first("min_contacts")?,
    );
    let version = strs(df, "mujoco_version")?
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    r.facts()
        .num("fresh.rounds", rounds, Fmt::int())
        .num("fresh.rel_tol", rel_tol, Fmt::sci(0))
        .num("fresh.min_contacts", min_contacts, Fmt::int())
        .text("fresh.mujoco_version", version);
    Ok(())
}

/// `fresh_sets.csv` (`tables.fresh_sets`) and per set its facts `fresh.<set>.*`: problems,
/// SAP's converged count, the ratio's median, quartiles and extremes, its median over the
/// problems with at most the set's median contacts (`ratio_fewer`) and over those with more
/// (`ratio_more`) and whether it falls from the one to the other (`size_trend`), the problems
/// at most the
/// aim (`speed_aim_interleaved` of `quoted_published.csv`) and the replay's largest difference
/// from the stored problems.
fn sets_table(r: &mut Report, rows: &[Row]) -> Result<(), ReportError> {
    let aim = quoted(r, "speed_aim_interleaved")?.unwrap_or(f64::NAN);
    r.facts().num("fresh.aim", aim, Fmt::fixed(1).unit("x"));
    let x = Fmt::fixed(2);
    let mut t = Table::new(Some("fresh_sets.csv"))
        .col("problem set", "set")
        .col("problems", "problems")
        .col("SAP converged", "converged")
        .col("contacts", "contacts_median")
        .col("ratio to MuJoCo", "ratio_median")
        .col("quartiles", "ratio_quartiles")
        .col("smallest", "ratio_min")
        .col("largest", "ratio_max")
        .col("at most the aim", "at_most_aim");
    for set in first_seen(rows.iter().map(|x| &x.set)) {
        let of: Vec<&Row> = rows.iter().filter(|x| x.set == set).collect();
        let ratios: Vec<f64> = of.iter().map(|x| x.ratio).collect();
        let converged = of.iter().filter(|x| x.status == "converged").count();
        let within = ratios.iter().filter(|&&v| v <= aim).count();
        let contacts = median(&of.iter().map(|x| x.contacts).collect::<Vec<_>>());
        let (q1, q2, q3) = (
            quantile(&ratios, 0.25),
            median(&ratios),
            quantile(&ratios, 0.75),
        );
        let (lo, hi) = (quantile(&ratios, 0.0), quantile(&ratios, 1.0));
        let k = format!("fresh.{set}");
        r.facts()
            .num(format!("{k}.problems"), of.len() as f64, Fmt::int())
            .num(format!("{k}.converged"), converged as f64, Fmt::int())
            .num(format!("{k}.contacts_median"), contacts, Fmt::int())
            .num(format!("{k}.ratio"), q2, x.clone().unit("x"))
            .num(format!("{k}.ratio_q1"), q1, x.clone().unit("x"))
            .num(format!("{k}.ratio_q3"), q3, x.clone().unit("x"))
            .num(format!("{k}.ratio_min"), lo, x.clone().unit("x"))
            .num(format!("{k}.ratio_max"), hi, x.clone().unit("x"))
            .num(format!("{k}.at_most_aim"), within as f64, Fmt::int());
        let half = |more: bool| -> Vec<f64> {
            of.iter()
                .filter(|x| (x.contacts > contacts) == more)
                .map(|x| x.ratio)
                .collect()
        };
        let (fewer, more) = (median(&half(false)), median(&half(true)));
        let trend = if more < fewer {
            "falls"
        } else {
            "does not fall"
        };
        r.facts()
            .num(format!("{k}.ratio_fewer"), fewer, x.clone().unit("x"))
            .num(format!("{k}.ratio_more"), more, x.clone().unit("x"))
            .text(format!("{k}.size_trend"), trend);
        let replay = quantile(
            &of.iter().map(|x| x.replay_rel_diff).collect::<Vec<_>>(),
            1.0,
        );
        if replay.is_finite() {
            r.facts()
                .num(format!("{k}.replay_rel_diff"), replay, Fmt::sci(1));
        }
        t.row(vec![
            C::text(&set),
            C::int(of.len() as i64),
            C::int(converged as i64),
            C::num(contacts, &Fmt::int(), &Fmt::int()),
            C::num(q2, &x, &Fmt::sci(4)),
            C::text(format!("{} - {}", x.number(q1), x.number(q3))),
            C::num(lo, &x, &Fmt::sci(4)),
            C::num(hi, &x, &Fmt::sci(4)),
            C::int(within as i64),
        ])?;
    }
    r.show_table("fresh_sets", &t)
}

/// `fresh.csv` (`tables.fresh`): every problem's medians, iterations and ratio.
fn problems_table(r: &mut Report, rows: &[Row]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("fresh.csv"))
        .col("problem set", "set")
        .col(common::PROBLEM, common::PROBLEM)
        .col("contacts", "contacts")
        .col("MuJoCo ms", "mujoco_ms")
        .col("MuJoCo iterations", "mujoco_iterations")
        .col("SAP ms", "sap_ms")
        .col("SAP iterations", "sap_iterations")
        .col("SAP status", "sap_status")
        .col("ratio", "ratio");
    for x in rows {
        t.row(vec![
            C::text(&x.set),
            C::text(&x.problem),
            C::num(x.contacts, &Fmt::int(), &Fmt::int()),
            C::num(x.mujoco_s * 1e3, &ms(), &Fmt::sci(4)),
            C::num(x.mujoco_iterations, &Fmt::int(), &Fmt::int()),
            C::num(x.sap_s * 1e3, &ms(), &Fmt::sci(4)),
            C::num(x.sap_iterations, &Fmt::int(), &Fmt::int()),
            C::text(&x.status),
            C::num(x.ratio, &Fmt::fixed(2), &Fmt::sci(4)),
        ])?;
    }
    r.show_table("fresh", &t)
}
