//! The subsection *Where a whole step's time goes* (`templates/stages.md`): the whole steps of
//! the scenes that both sides timed stage by stage ([`Stages`]: ours from the runner's and the
//! scene's clocks, MuJoCo's from `bench.py --stages`, its stages called one by one), as ms and
//! as us per contact (the engines find different numbers of contacts on the same scene), with
//! the ratio to MuJoCo per stage. Its facts are `steps.<scene>.<slug>.stage.*` (`facts.md`
//! lists them).

use contactlab_runs::schema::steps;

use super::common::{ms, slug};
use crate::analysis::peers::{Stages, WholeStep};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// A stage's name in the table.
fn label(stage: &str) -> &'static str {
    match stage {
        "collision" => "collision detection",
        "build" => "building the problem",
        "solve" => "the solve",
        "integrate" => "integration",
        "total" => "the whole step",
        _ => "after collision",
    }
}

/// Our steps with their stages beside MuJoCo's step on the same scene.
fn pairs<'a>(
    ours: &'a [WholeStep],
    theirs: &'a [WholeStep],
) -> Vec<(&'a WholeStep, Stages, &'a WholeStep, Stages)> {
    ours.iter()
        .filter_map(|o| {
            let mj = theirs
                .iter()
                .find(|t| t.engine == "mujoco" && t.scene == o.scene)?;
            Some((o, o.stages?, mj, mj.stages?))
        })
        .collect()
}

/// The subsection's facts and `stages.csv` (`tables.stages`) when some scene was timed by
/// stage on both sides; whether it was.
pub fn section(
    r: &mut Report,
    ours: &[WholeStep],
    theirs: &[WholeStep],
    aim: Option<f64>,
) -> Result<bool, ReportError> {
    let rows = pairs(ours, theirs);
    if rows.is_empty() {
        return Ok(false);
    }
    for (o, mine, _, mj) in &rows {
        stage_facts(r, o, mine, mj, aim);
    }
    stages_table(r, &rows)?;
    Ok(true)
}

/// Per stage of our step `o` (stages `mine`) beside MuJoCo's (`mj`): times, ratio and aim.
fn stage_facts(r: &mut Report, o: &WholeStep, mine: &Stages, mj: &Stages, aim: Option<f64>) {
    let k = format!("steps.{}.{}.stage", o.scene, slug(&o.solver));
    for ((name, s), (_, m)) in mine.named().into_iter().zip(mj.named()) {
        r.facts()
            .num(format!("{k}.{name}.ms"), s * 1e3, ms().unit(" ms"))
            .num(format!("{k}.{name}.mujoco_ms"), m * 1e3, ms().unit(" ms"))
            .num(format!("{k}.{name}.ratio"), s / m, Fmt::fixed(1).unit("x"));
    }
    if let Some(aim) = aim {
        let after = mine.after_collision / mj.after_collision;
        let word = if after <= aim { "within" } else { "over" };
        r.facts().text(format!("{k}.after_collision.aim"), word);
    }
}

/// `stages.csv`: per scene and stage, ours beside MuJoCo's.
fn stages_table(
    r: &mut Report,
    rows: &[(&WholeStep, Stages, &WholeStep, Stages)],
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("stages.csv"))
        .col("scene", "scene")
        .col("our solver", steps::SOLVER)
        .col("stage", "stage")
        .col("our ms", "ms")
        .col("our us per contact", "us_per_contact")
        .col("MuJoCo ms", "mujoco_ms")
        .col("MuJoCo us per contact", "mujoco_us_per_contact")
        .col("ratio", "ratio");
    for (o, mine, m_step, mj) in rows {
        let (nc, mj_nc) = (o.contacts_median, m_step.contacts_median);
        for ((name, s), (_, m)) in mine.named().into_iter().zip(mj.named()) {
            t.row(vec![
                C::text(&o.scene),
                C::text(&o.solver),
                C::text(label(name)),
                C::same(s * 1e3, &ms()),
                C::same(s * 1e6 / nc, &Fmt::fixed(2)),
                C::same(m * 1e3, &ms()),
                C::same(m * 1e6 / mj_nc, &Fmt::fixed(2)),
                C::same(s / m, &Fmt::fixed(2)),
            ])?;
        }
    }
    r.show_table("stages", &t)
}
