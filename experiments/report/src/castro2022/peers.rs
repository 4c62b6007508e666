//! Castro 2022's page: our clutter step beside MuJoCo's and Drake's (the peers' run
//! `peers.toml`, or `peers_published.csv` where it could not measure).

use std::path::Path;

use super::format::seconds_cell;
use crate::analysis::castro2022::{engine_steps, ClutterRow, EngineRun, EngineStep};
use crate::builder::Report;
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::RunConfig;

/// The `source` of a row the peers' run or ours measured.
const MEASURED: &str = "measured in this run";

/// The `source` of a row `peers_published.csv` gives, before why.
const NOT_MEASURED: &str = "not measured in this run";

/// Why an engine has no row in the peers' run: the start, then its name...
const NO_ROW: &str = "the peers' run has no";

/// ...and the usual cause.
const NO_PYDRAKE: &str = "bench.py leaves Drake out without pydrake";

/// Where `peers_published.csv`'s numbers come from.
const PEERS_DOC: &str = "docs/PEERS.md";

/// One engine's row of `peers_published.csv`: docs/PEERS.md's whole-step times.
pub(super) struct PublishedPeer {
    /// Bodies of the clutter scene.
    pub(super) bodies: usize,
    /// The engine (`mujoco`, `drake-sap`).
    pub(super) engine: String,
    /// How it was configured.
    pub(super) configuration: String,
    /// Median seconds per step.
    pub(super) seconds: f64,
    /// Where the number comes from.
    pub(super) source: String,
}

/// The rows of `peers_published.csv`.
pub(super) fn published_peers(r: &Report) -> Result<Vec<PublishedPeer>, ReportError> {
    let path = r.config_file("peers_published.csv");
    let want = [
        "scene",
        "bodies",
        "engine",
        "configuration",
        "ms_per_step_median",
        "source",
    ];
    read_csv_with_header(&path, &want)?
        .iter()
        .map(|row| {
            Ok(PublishedPeer {
                bodies: number(&path, row, &want, 1)? as usize,
                engine: row[2].clone(),
                configuration: row[3].clone(),
                seconds: 1e-3 * number(&path, row, &want, 4)?,
                source: row[5].clone(),
            })
        })
        .collect()
}

/// Per-step time on clutter with 40 bodies and walls beside MuJoCo's and Drake's, from the
/// other-engine run `peers.toml`; where it did not measure an engine, `peers_published.csv`'s
/// number with the reason in the `source` column. `false` when our clutter run has no 40
/// bodies with walls (no section then).
pub(super) fn peers(r: &mut Report, root: &Path, rows: &[ClutterRow]) -> Result<bool, ReportError> {
    let Some(ours) = rows.iter().find(|c| c.bodies == 40 && c.walls) else {
        return Ok(false);
    };
    let cfg = EnginesConfig::load(&r.config_file("peers.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let run = engine_steps(&df)?;
    let published: Vec<PublishedPeer> = published_peers(r)?
        .into_iter()
        .filter(|p| p.bodies == ours.bodies)
        .collect();
    let measured: Vec<&EngineStep> = match &run {
        EngineRun::Measured(m) => m.iter().filter(|e| e.bodies == ours.bodies).collect(),
        EngineRun::Skipped(_) => Vec::new(),
    };
    let scene = format!("clutter_n{}", ours.bodies);
    let mut t = peers_header();
    t.row(vec![
        C::code(scene.clone()),
        C::int(ours.bodies as i64),
        C::code("contactlab-sap"),
        C::text("SAP + newton-merit, eps_r = 1e-5"),
        seconds_cell(ours.step_seconds_median),
        C::same(ours.contacts_median, &Fmt::int()),
        C::text(MEASURED),
    ])?;
    let mut times = Vec::new();
    let mut not_measured = Vec::new();
    for engine in peer_engines(&published, &measured) {
        let m = measured.iter().copied().find(|m| m.engine == engine);
        if let Some(m) = m.filter(|m| m.error.is_empty()) {
            t.row(measured_peer_row(m))?;
            times.push((engine, m.seconds_per_step_median));
            continue;
        }
        not_measured.push(engine.clone());
        let Some(p) = published.iter().find(|p| p.engine == engine) else {
            continue;
        };
        let why = why_not_measured(&run, m, &engine);
        t.row(published_peer_row(&scene, p, &why))?;
        times.push((engine, p.seconds));
    }
    r.show_table("peers", &t)?;
    peers_facts(r, ours, &times, &not_measured);
    Ok(true)
}

/// The engines of the peers' table: the published ones, then any other the run measured.
fn peer_engines(published: &[PublishedPeer], measured: &[&EngineStep]) -> Vec<String> {
    let mut engines: Vec<String> = published.iter().map(|p| p.engine.clone()).collect();
    for m in measured {
        if !engines.contains(&m.engine) {
            engines.push(m.engine.clone());
        }
    }
    engines
}

/// The peers' table's columns (`peers.csv`).
fn peers_header() -> Table {
    Table::new(Some("peers.csv"))
        .col("scene", "scene")
        .col("bodies", "bodies")
        .col("engine", "engine")
        .md_col("configuration")
        .col("ms per step (median)", "seconds_per_step_median")
        .col("contacts per step (median)", "contacts_per_step_median")
        .col("source", "source")
}

/// The row of an engine the peers' run measured.
fn measured_peer_row(m: &EngineStep) -> Vec<C> {
    vec![
        C::code(m.scene.clone()),
        C::int(m.bodies as i64),
        C::code(m.engine.clone()),
        C::text(m.config.clone()),
        seconds_cell(m.seconds_per_step_median),
        C::same(m.contacts_per_step_median, &Fmt::int()),
        C::text(MEASURED),
    ]
}

/// The row of an engine `peers_published.csv` gives, saying `why` the run did not measure it.
fn published_peer_row(scene: &str, p: &PublishedPeer, why: &str) -> Vec<C> {
    vec![
        C::code(scene.to_string()),
        C::int(p.bodies as i64),
        C::code(p.engine.clone()),
        C::text(p.configuration.clone()),
        seconds_cell(p.seconds),
        C::same(f64::NAN, &Fmt::int()),
        // CSV cells carry no commas.
        C::text(format!(
            "{} ({NOT_MEASURED}: {})",
            p.source,
            why.replace(',', ";")
        )),
    ]
}

/// Why the peers' run did not measure `engine`: the run's reason for skipping, the engine's
/// error, or that it has no row.
fn why_not_measured(run: &EngineRun, m: Option<&EngineStep>, engine: &str) -> String {
    match (run, m) {
        (EngineRun::Skipped(why), _) => why.clone(),
        (EngineRun::Measured(_), Some(m)) => m.error.clone(),
        (EngineRun::Measured(_), None) => {
            format!("{NO_ROW} {engine} row; {NO_PYDRAKE}")
        }
    }
}

/// The peers' facts: Drake over ours, ours over MuJoCo, and where the numbers come from.
fn peers_facts(
    r: &mut Report,
    ours: &ClutterRow,
    times: &[(String, f64)],
    not_measured: &[String],
) {
    let time_of = |engine: &str| {
        times
            .iter()
            .find(|(e, _)| e == engine)
            .map_or(f64::NAN, |p| p.1)
    };
    let source = if not_measured.is_empty() {
        MEASURED.to_string()
    } else if times.len() == not_measured.len() {
        format!("taken from {PEERS_DOC} ({NOT_MEASURED})")
    } else {
        format!(
            "{MEASURED}; {} taken from {PEERS_DOC}",
            not_measured.join(" and ")
        )
    };
    r.facts()
        .num(
            "peers.drake_over_ours",
            time_of("drake-sap") / ours.step_seconds_median,
            Fmt::fixed(1),
        )
        .num(
            "peers.ours_over_mujoco",
            ours.step_seconds_median / time_of("mujoco"),
            Fmt::fixed(1),
        )
        .text("peers.source", source);
}
