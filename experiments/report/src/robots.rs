//! The robot study (`reports/robots/`): real robot models (dm_control's and gymnasium-robotics')
//! stepped by MuJoCo's own solver in its configurations and by this workspace's (formulation,
//! optimizer) pairs through `contactlab.mujoco.step`, on scenes that ask the field's questions
//! (does a grasp hold, does a pinch creep, does a falling humanoid keep its limits; after
//! google-deepmind/mujoco#3328 and Le Lidec et al., "Contact Models in Robotics: a Comparative
//! Analysis", T-RO 2024, who ask them of re-implemented models).
//!
//! Reads the run `study.toml` (`kind = "engines"`, `experiments/peers/robots.py`), one record per
//! (scene, engine, configuration or pair), and writes one table per scene, the speed table
//! (each pair's step against `mj_step` measured beside it), `metrics.csv` in long form
//! (`scene, engine, config, formulation, optimizer, metric, value`) and the facts the findings
//! quote. The page's prose is `experiments/configs/robots/templates/report.md`.

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::schema::{common, matrix};
use polars::prelude::DataFrame;
use serde::Serialize;

use crate::analysis::{finite_row, first_seen, float_columns, texts_or_empty};
use crate::builder::{Report, StudyRun};
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The study's run.
const STUDY: &str = "study.toml";

/// Slower than this creep (um/s) of the object in the hand is a hold (the bar).
pub const HOLD_UM_S: f64 = 1.0;

/// A pair holds its constraints when the shared ruler accepts at least this share of its steps.
pub const ACCEPTED: f64 = 0.99;

/// How a column writes its numbers in markdown (the CSV keeps every digit).
#[derive(Debug, Clone, Copy)]
enum Shown {
    /// Two significant digits, `1.2e-3`.
    Sci,
    /// A share as a percentage with one decimal.
    Percent,
    /// A whole number.
    Count,
    /// Fixed decimals.
    Fixed(usize),
}

impl Shown {
    /// The cell of `v`.
    fn cell(self, v: f64) -> C {
        let csv = Fmt::sci(6);
        match self {
            Shown::Sci => C::num(v, &Fmt::sci(1), &csv),
            Shown::Percent if v.is_nan() => C::num(v, &Fmt::int(), &csv),
            Shown::Percent => C::pair(Fmt::percent(1).show(100.0 * v), csv.number(v)),
            Shown::Count => C::num(v, &Fmt::int(), &csv),
            Shown::Fixed(d) => C::num(v, &Fmt::fixed(d), &csv),
        }
    }
}

/// The scene metrics a table shows, with their headers and formats (units in the header).
const METRICS: [(&str, &str, Shown); 8] = [
    ("slip_um_s", "slip (um/s)", Shown::Sci),
    ("slip_final_mm", "moved (mm)", Shown::Sci),
    ("rotation_deg", "turned (deg)", Shown::Fixed(1)),
    ("penetration_max_m", "penetration (m)", Shown::Sci),
    ("limit_violation_max", "limit excess", Shown::Sci),
    ("equality_violation_max", "equality error", Shown::Sci),
    ("drift_m", "drift (m)", Shown::Sci),
    ("foot_slip_mm_s", "foot slip (mm/s)", Shown::Fixed(1)),
];

/// The step statistics a table shows after the scene's metrics.
const STEPS: [(&str, &str, Shown); 5] = [
    ("accepted_fraction", "accepted", Shown::Percent),
    ("resets", "MuJoCo resets", Shown::Count),
    ("iterations_median", "iterations (median)", Shown::Fixed(0)),
    ("step_us_median", "step (us)", Shown::Fixed(0)),
    ("step_ratio_to_mj_step", "/ mj_step", Shown::Fixed(0)),
];

/// One record of the study: a scene run by MuJoCo in a configuration or by a pair.
#[derive(Debug, Clone)]
struct Run {
    scene: String,
    question: String,
    engine: String,
    config: String,
    formulation: String,
    optimizer: String,
    refused: String,
    /// The group of pairs it ran in (`core`, `papers`, `all`, `metric`, `defaults`, `custom`;
    /// empty for MuJoCo's runs).
    group: String,
    /// How the contactlab extension that stepped was compiled (`release`, `debug`).
    build: String,
    values: BTreeMap<String, f64>,
}

impl Run {
    /// `mujoco default`, `mujoco best`, or the pair `sap+newton-merit`.
    fn label(&self) -> String {
        if self.engine == "mujoco" {
            format!("MuJoCo {}", self.config)
        } else if self.config == "pair" {
            format!("{}+{}", self.formulation, self.optimizer)
        } else {
            format!("{}+{} ({})", self.formulation, self.optimizer, self.config)
        }
    }

    /// A value of the record (`NaN` where the scene or the engine does not have it).
    fn get(&self, key: &str) -> f64 {
        self.values.get(key).copied().unwrap_or(f64::NAN)
    }
}

/// What the page shows besides the tables.
#[derive(Debug, Default, Serialize)]
struct Sections {
    /// Why the study did not run (no Python, a missing package, `CONTACTLAB_NO_PEERS`).
    skipped: Option<String>,
    /// The scenes in run order, each with its table's name and question.
    scenes: Vec<SceneSection>,
}

/// One scene's section.
#[derive(Debug, Serialize)]
struct SceneSection {
    name: String,
    question: String,
    table: String,
    hold: bool,
    refused: Vec<String>,
}

/// Writes `reports/robots/` from the study's run under `root`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "robots")?;
    let mut sections = Sections::default();
    match r.load_study(STUDY)? {
        StudyRun::Skipped(why) => sections.skipped = Some(why),
        StudyRun::Ran(df) => {
            let runs = read_runs(&df)?;
            let built = first_text(&df, "contactlab_commit")?;
            r.facts()
                .text("robots.extension_commit", short_commit(&built));
            sections.scenes = scene_tables(&mut r, &runs)?;
            speed_table(&mut r, &runs)?;
            solve_speed_table(&mut r, &runs)?;
            metrics_csv(&mut r, &runs)?;
            study_facts(&mut r, &runs);
        }
    }
    r.show("sections", sections)?;
    r.finish()?;
    Ok(())
}

/// A text column, empty where the frame lacks it.
fn texts(df: &DataFrame, name: &str) -> Result<Vec<String>, ReportError> {
    Ok(texts_or_empty(df, name)?)
}

/// A run-wide text column's value (every record carries the same), empty when absent.
fn first_text(df: &DataFrame, name: &str) -> Result<String, ReportError> {
    Ok(texts(df, name)?.into_iter().next().unwrap_or_default())
}

/// The first 7 digits of a commit hash, or `not recorded`.
fn short_commit(built: &str) -> String {
    match built {
        "" => "not recorded".to_string(),
        b => b.chars().take(7).collect(),
    }
}

/// The study's records, every numeric column kept by name.
fn read_runs(df: &DataFrame) -> Result<Vec<Run>, ReportError> {
    let text = |n: &str| texts(df, n);
    let (scene, question, engine, config) = (
        text("scene")?,
        text("question")?,
        text("engine")?,
        text("config")?,
    );
    let (formulation, optimizer, refused, build) = (
        text(common::FORMULATION)?,
        text(common::OPTIMIZER)?,
        text("refused")?,
        text("contactlab_build")?,
    );
    let group = text("group")?;
    let numbers = float_columns(df)?;
    Ok((0..df.height())
        .map(|k| Run {
            scene: scene[k].clone(),
            question: question[k].clone(),
            engine: engine[k].clone(),
            config: config[k].clone(),
            formulation: formulation[k].clone(),
            optimizer: optimizer[k].clone(),
            refused: refused[k].clone(),
            group: group[k].clone(),
            build: build[k].clone(),
            values: finite_row(&numbers, k),
        })
        .collect())
}

/// The scenes in the order the run met them.
fn scene_names(runs: &[Run]) -> Vec<String> {
    first_seen(runs.iter().map(|x| &x.scene))
}

/// One table per scene: every MuJoCo configuration and pair that ran it, refusals listed apart.
fn scene_tables(r: &mut Report, runs: &[Run]) -> Result<Vec<SceneSection>, ReportError> {
    let mut out = Vec::new();
    for scene in scene_names(runs) {
        let of: Vec<&Run> = runs.iter().filter(|x| x.scene == scene).collect();
        let shown: Vec<&str> = METRICS
            .iter()
            .filter(|(m, _, _)| of.iter().any(|x| x.get(m).is_finite()))
            .map(|(m, _, _)| *m)
            .collect();
        let name = format!("scene_{scene}");
        let mut t = Table::new(Some(&format!("{name}.csv"))).col("engine", "engine");
        for (m, header, _) in METRICS.iter().filter(|(m, _, _)| shown.contains(m)) {
            t = t.col(header, m);
        }
        for (m, header, _) in STEPS {
            t = t.col(header, m);
        }
        for run in of.iter().filter(|x| x.refused.is_empty()) {
            let mut row = vec![C::code(run.label())];
            for (m, _, how) in METRICS.iter().filter(|(m, _, _)| shown.contains(m)) {
                row.push(how.cell(run.get(m)));
            }
            for (m, _, how) in STEPS {
                row.push(how.cell(run.get(m)));
            }
            t.row(row)?;
        }
        r.show_table(&name, &t)?;
        out.push(SceneSection {
            question: of.first().map(|x| x.question.clone()).unwrap_or_default(),
            hold: of.iter().any(|x| x.get("slip_um_s").is_finite()),
            refused: of
                .iter()
                .filter(|x| !x.refused.is_empty())
                .map(|x| format!("`{}`: {}", x.label(), x.refused))
                .collect(),
            name: scene,
            table: name,
        });
    }
    Ok(out)
}

/// Per scene and pair: the step's time against `mj_step` and where it goes (MuJoCo's stages,
/// the problem formed in Python, the solve in Rust, the call, the write-back).
fn speed_table(r: &mut Report, runs: &[Run]) -> Result<(), ReportError> {
    let cols = [
        ("mj_step_us_median", "mj_step (us)"),
        ("step_us_median", "step (us)"),
        ("step_ratio_to_mj_step", "/ mj_step"),
        ("solve_us_median", "solve (us)"),
        ("forward_us_median", "MuJoCo forward (us)"),
        ("problem_us_median", "problem (us)"),
        ("call_us_median", "call (us)"),
        ("integrate_us_median", "write-back (us)"),
    ];
    let mut t = Table::new(Some("speed.csv"))
        .col("scene", "scene")
        .col("pair", "pair");
    for (csv, md) in cols {
        t = t.col(md, csv);
    }
    for run in runs
        .iter()
        .filter(|x| x.engine == "contactlab" && x.refused.is_empty())
    {
        let mut row = vec![C::code(&run.scene), C::code(run.label())];
        for (csv, _) in cols {
            row.push(Shown::Fixed(0).cell(run.get(csv)));
        }
        t.row(row)?;
    }
    r.show_table("speed", &t)
}

/// Per scene and pair, on the sampled steps (`SPEED_EVERY` in `robots.py`): the pair's solve
/// against MuJoCo's `mj_fwdConstraint` of the same state, warm and cold, interleaved within
/// the step, with the ratios as medians of the per-step ratios.
fn solve_speed_table(r: &mut Report, runs: &[Run]) -> Result<(), ReportError> {
    let cols = [
        ("speed_steps", "steps", Shown::Fixed(0)),
        (
            "mj_solve_warm_us_median",
            "MuJoCo warm (us)",
            Shown::Fixed(0),
        ),
        ("solve_warm_us_sampled_median", "warm (us)", Shown::Fixed(0)),
        ("solve_ratio_warm_median", "/ MuJoCo warm", Shown::Fixed(1)),
        (
            "mj_solve_cold_us_median",
            "MuJoCo cold (us)",
            Shown::Fixed(0),
        ),
        ("solve_cold_us_median", "cold (us)", Shown::Fixed(0)),
        ("solve_ratio_cold_median", "/ MuJoCo cold", Shown::Fixed(1)),
        (
            "mj_iterations_cold_median",
            "MuJoCo iterations (cold)",
            Shown::Fixed(0),
        ),
        (
            "iterations_cold_median",
            "iterations (cold)",
            Shown::Fixed(0),
        ),
    ];
    let mut t = Table::new(Some("solve_speed.csv"))
        .col("scene", "scene")
        .col("pair", "pair");
    for (csv, md, _) in cols {
        t = t.col(md, csv);
    }
    for run in runs
        .iter()
        .filter(|x| x.engine == "contactlab" && x.get("speed_steps") > 0.0)
    {
        let mut row = vec![C::code(&run.scene), C::code(run.label())];
        for (csv, _, shown) in cols {
            row.push(shown.cell(run.get(csv)));
        }
        t.row(row)?;
    }
    r.show_table("solve_speed", &t)
}

/// `metrics.csv`: every number of every record in long form.
fn metrics_csv(r: &mut Report, runs: &[Run]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("metrics.csv"));
    for c in [
        "scene",
        "engine",
        "config",
        common::FORMULATION,
        common::OPTIMIZER,
        "metric",
        "value",
    ] {
        t = t.csv_col(c);
    }
    for run in runs {
        for (metric, value) in &run.values {
            t.row(vec![
                C::text(&run.scene),
                C::text(&run.engine),
                C::text(&run.config),
                C::text(&run.formulation),
                C::text(&run.optimizer),
                C::text(metric),
                C::num(*value, &Fmt::sci(9), &Fmt::sci(9)),
            ])?;
        }
    }
    r.show_table("metrics", &t)
}

/// The facts the findings quote: per scene, who holds the object, MuJoCo's creep in its
/// default and best configurations, the pairs the ruler accepts; over the study, the pairs
/// that run every scene and their time against `mj_step`.
fn study_facts(r: &mut Report, runs: &[Run]) {
    for scene in scene_names(runs) {
        let of: Vec<&Run> = runs.iter().filter(|x| x.scene == scene).collect();
        scene_facts(r, &scene, &of);
    }
    let pairs: Vec<&Run> = runs
        .iter()
        .filter(|x| x.engine == "contactlab" && x.refused.is_empty())
        .collect();
    let accepted = pairs
        .iter()
        .filter(|x| x.get("accepted_fraction") >= ACCEPTED)
        .count();
    let core: Vec<&&Run> = pairs.iter().filter(|x| x.group == "core").collect();
    let core_accepted = core
        .iter()
        .filter(|x| x.get("accepted_fraction") >= ACCEPTED)
        .count();
    let ratios: Vec<f64> = pairs
        .iter()
        .map(|x| x.get("step_ratio_to_mj_step"))
        .filter(|v| v.is_finite())
        .collect();
    let first = runs.first();
    let top = |k: &str| first.map_or(f64::NAN, |x| x.get(k));
    r.facts()
        .text(
            "robots.build",
            first.map_or(String::new(), |x| x.build.clone()),
        )
        .num("robots.tol", top(matrix::TOL), Fmt::sci(0))
        .num(
            "robots.time_limit",
            top("time_limit_s"),
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            "robots.first_order_budget",
            top("first_order_budget"),
            Fmt::fixed(0),
        )
        .num("robots.admm_start_tol", top("admm_start_tol"), Fmt::sci(0))
        .num(
            "robots.max_duration",
            top("max_duration_s"),
            Fmt::fixed(0).unit(" s"),
        )
        .num(
            "robots.papers_duration",
            top("papers_duration_s"),
            Fmt::fixed(0).unit(" s"),
        )
        .num("robots.pair_runs", pairs.len() as f64, Fmt::int())
        .num("robots.pair_runs_accepted", accepted as f64, Fmt::int())
        .num("robots.core_runs", core.len() as f64, Fmt::int())
        .num(
            "robots.core_runs_accepted",
            core_accepted as f64,
            Fmt::int(),
        )
        .num("robots.accepted_share", 100.0 * ACCEPTED, Fmt::percent(0))
        .num("robots.hold_um_s", HOLD_UM_S, Fmt::fixed(0).unit(" um/s"))
        .num(
            "robots.step_ratio_median",
            crate::analysis::quantile(&ratios, 0.5),
            Fmt::fixed(0),
        );
}

/// The runs that hold the scene's object: its creep below [`HOLD_UM_S`], by label.
fn holders(of: &[&Run]) -> Vec<String> {
    of.iter()
        .filter(|x| x.get("slip_um_s") < HOLD_UM_S)
        .map(|x| format!("`{}`", x.label()))
        .collect()
}

/// The pairs whose steps the shared ruler accepts at least [`ACCEPTED`] of, by label.
fn accepting(of: &[&Run]) -> Vec<String> {
    of.iter()
        .filter(|x| x.engine == "contactlab" && x.get("accepted_fraction") >= ACCEPTED)
        .map(|x| format!("`{}`", x.label()))
        .collect()
}

/// One scene's facts (see [`study_facts`]).
fn scene_facts(r: &mut Report, scene: &str, of: &[&Run]) {
    let (holders, accepted) = (holders(of), accepting(of));
    let f = r.facts();
    if of.iter().any(|x| x.get("slip_um_s").is_finite()) {
        f.text(format!("{scene}.holders"), list_or_none(&holders));
        for config in ["default", "best"] {
            if let Some(run) = of
                .iter()
                .find(|x| x.engine == "mujoco" && x.config == config)
            {
                f.num(
                    format!("{scene}.mujoco_{config}.slip_um_s"),
                    run.get("slip_um_s"),
                    Fmt::sci(1),
                );
            }
        }
    }
    f.text(format!("{scene}.accepted_pairs"), list_or_none(&accepted));
    for (key, formulation, optimizer, group) in RIGID_PAIRS {
        if let Some(share) = accepted_share(of, formulation, optimizer, group) {
            f.num(
                format!("{scene}.{key}.accepted_fraction"),
                share,
                Fmt::percent(1),
            );
        }
    }
    if let Some(sap) = of
        .iter()
        .find(|x| x.formulation == "sap" && x.config == "pair")
    {
        f.num(
            format!("{scene}.sap.accepted_fraction"),
            100.0 * sap.get("accepted_fraction"),
            Fmt::percent(1),
        );
        for start in ["warm", "cold"] {
            f.num(
                format!("{scene}.sap.solve_ratio_{start}"),
                sap.get(&format!("solve_ratio_{start}_median")),
                Fmt::fixed(1),
            );
        }
    }
}

/// The rigid pair runs whose share of accepted steps the findings quote, by fact key, as
/// `(key, formulation, optimizer, group)`: the core pairs of `experiments/peers/robots.py` but
/// SAP (quoted apart; the natural map's core run has its ADMM start), projected LM on the
/// natural map without that start and Mylapilli and Jain's regular LM (papers' pairs), and
/// PGS and ADMM at their papers' defaults (`DEFAULT_PAIRS`; the core PGS combines its sweeps
/// by NNCG, the core ADMM is equilibrated at a constant `rho`).
const RIGID_PAIRS: [(&str, &str, &str, &str); 7] = [
    ("pgs", "coulomb", "pgs", "core"),
    ("admm", "coulomb", "admm", "core"),
    ("plm", "natural-map", "plm", "core"),
    ("plm_unstarted", "natural-map", "plm", "papers"),
    ("lm", "natural-map", "lm", "papers"),
    ("pgs_paper", "coulomb", "pgs", "defaults"),
    ("admm_paper", "coulomb", "admm", "defaults"),
];

/// The percentage of its steps the ruler accepts of the run of `formulation` and `optimizer`
/// in `group` (not refused), if the scene has one.
fn accepted_share(of: &[&Run], formulation: &str, optimizer: &str, group: &str) -> Option<f64> {
    of.iter()
        .find(|x| {
            x.formulation == formulation
                && x.optimizer == optimizer
                && x.group == group
                && x.refused.is_empty()
        })
        .map(|x| 100.0 * x.get("accepted_fraction"))
}

/// `a, b and c`, or `none`.
fn list_or_none(items: &[String]) -> String {
    match items {
        [] => "none".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::df;

    /// Three runs of one grasp: MuJoCo's default creeps, its best and SAP hold; PGS's ruler
    /// accepts 50% of its steps, and the bisection refused the scene.
    fn grasp() -> DataFrame {
        df!(
            "scene" => ["grasp"; 5],
            "question" => ["Does it hold?"; 5],
            "engine" => ["mujoco", "mujoco", "contactlab", "contactlab", "contactlab"],
            "config" => ["default", "best", "pair", "pair", "pair"],
            "formulation" => ["", "", "sap", "coulomb", "coulomb"],
            "optimizer" => ["", "", "newton-merit", "pgs", "bisection-sor"],
            "refused" => ["", "", "", "", "condim 4"],
            "group" => ["", "", "core", "core", "papers"],
            "slip_um_s" => [Some(1160.0), Some(0.04), Some(0.5), Some(3.0), None],
            "accepted_fraction" => [None, None, Some(1.0), Some(0.5), None],
        )
        .unwrap()
    }

    #[test]
    fn holders_and_accepting_pairs_are_read_by_their_bars() {
        let runs = read_runs(&grasp()).unwrap();
        let of: Vec<&Run> = runs.iter().collect();
        assert_eq!(holders(&of), ["`MuJoCo best`", "`sap+newton-merit`"]);
        assert_eq!(accepting(&of), ["`sap+newton-merit`"]);
        assert_eq!(runs[4].refused, "condim 4");
        assert!(runs[4].get("slip_um_s").is_nan());
        assert_eq!(
            list_or_none(&holders(&of)),
            "`MuJoCo best` and `sap+newton-merit`"
        );
        assert_eq!(list_or_none(&[]), "none");
        assert_eq!(accepted_share(&of, "coulomb", "pgs", "core"), Some(50.0));
        assert_eq!(accepted_share(&of, "coulomb", "pgs", "defaults"), None);
        let refused = accepted_share(&of, "coulomb", "bisection-sor", "papers");
        assert_eq!(refused, None, "refused");
        assert_eq!(runs[2].group, "core");
        assert_eq!(
            accepted_share(&of, "coulomb", "admm", "core"),
            None,
            "not run"
        );
    }

    #[test]
    fn a_commit_is_shown_by_its_first_seven_digits() {
        let built = format!("e237ec8{}", "0".repeat(33));
        assert_eq!(short_commit(&built), "e237ec8");
        assert_eq!(short_commit(""), "not recorded");
    }
}
