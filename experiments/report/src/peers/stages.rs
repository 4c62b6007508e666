//! The subsection *Where a whole step's time goes* (`templates/stages.md`): the whole steps of
//! the scenes that both sides timed stage by stage ([`Stages`]: ours from the runner's and the
//! scene's clocks, MuJoCo's from `bench.py --stages`, its stages called one by one), as ms and
//! as us per contact (the engines find different numbers of contacts on the same scene), with
//! the ratio to MuJoCo per stage, and per scene set (the clutter's sizes) each stage's median
//! over the set's scenes with the ratio's extremes. Its facts are `steps.<scene>.<slug>.stage.*`
//! and `steps.<set>.<slug>.stage.*` (`facts.md` lists them).

use contactlab_runs::schema::steps;

use super::common::{ms, slug};
use crate::analysis::peers::{median, scene_set, Stages, WholeStep};
use crate::analysis::quantile;
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

/// Our step on a scene with its stages, beside MuJoCo's step on the same scene with its own.
type Paired<'a> = (&'a WholeStep, Stages, &'a WholeStep, Stages);

/// Our steps with their stages beside MuJoCo's step on the same scene.
fn pairs<'a>(ours: &'a [WholeStep], theirs: &'a [WholeStep]) -> Vec<Paired<'a>> {
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
    analysed_facts(r, &rows);
    stages_table(r, &rows)?;
    sets_table(r, &rows, aim)?;
    Ok(true)
}

/// How often our build made a new symbolic analysis rather than keep the previous step's:
/// `steps.<scene>.<slug>.analysed_pct` per scene and, per scene set, its extremes
/// `steps.<set>.<slug>.analysed_pct_min` and `_max` (where the run counted analyses).
fn analysed_facts(r: &mut Report, rows: &[Paired<'_>]) {
    let pct = Fmt::fixed(0).unit("%");
    let mut sets: Vec<(String, Vec<f64>)> = Vec::new();
    for (o, ..) in rows {
        let Some(share) = o.analysed_share else {
            continue;
        };
        let key = format!("steps.{}.{}", scene_set(&o.scene), slug(&o.solver));
        r.facts().num(
            format!("steps.{}.{}.analysed_pct", o.scene, slug(&o.solver)),
            100.0 * share,
            pct.clone(),
        );
        match sets.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(100.0 * share),
            None => sets.push((key, vec![100.0 * share])),
        }
    }
    for (key, v) in sets {
        r.facts()
            .num(
                format!("{key}.analysed_pct_min"),
                quantile(&v, 0.0),
                pct.clone(),
            )
            .num(
                format!("{key}.analysed_pct_max"),
                quantile(&v, 1.0),
                pct.clone(),
            );
    }
}

/// One stage over a set's scenes: medians of our time, MuJoCo's and the ratio, its extremes.
struct SetStage {
    set: String,
    solver: String,
    scenes: usize,
    stage: &'static str,
    ms: f64,
    mujoco_ms: f64,
    ratio: f64,
    ratio_min: f64,
    ratio_max: f64,
}

/// Per scene set ([`scene_set`]) and our solver, each stage over the set's scenes.
fn set_stages(rows: &[Paired<'_>]) -> Vec<SetStage> {
    let key = |o: &'_ WholeStep| (scene_set(&o.scene).to_string(), o.solver.clone());
    let mut keys = Vec::new();
    for (o, ..) in rows {
        if !keys.contains(&key(o)) {
            keys.push(key(o));
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let of: Vec<_> = rows.iter().filter(|(o, ..)| key(o) == k).collect();
        let (o, first, ..) = of[0];
        for (i, (stage, _)) in first.named().into_iter().enumerate() {
            let pick =
                |f: &dyn Fn(&Paired<'_>) -> f64| -> Vec<f64> { of.iter().map(|x| f(x)).collect() };
            let ours = pick(&|(_, m, _, _)| m.named()[i].1);
            let theirs = pick(&|(_, _, _, j)| j.named()[i].1);
            let ratios = pick(&|(_, m, _, j)| m.named()[i].1 / j.named()[i].1);
            out.push(SetStage {
                set: scene_set(&o.scene).to_string(),
                solver: o.solver.clone(),
                scenes: of.len(),
                stage,
                ms: median(&ours) * 1e3,
                mujoco_ms: median(&theirs) * 1e3,
                ratio: median(&ratios),
                ratio_min: quantile(&ratios, 0.0),
                ratio_max: quantile(&ratios, 1.0),
            });
        }
    }
    out
}

/// `stages_sets.csv` (`tables.stages_sets`) and its facts `steps.<set>.<slug>.stage.*`, with
/// the median after collision against the aim.
fn sets_table(r: &mut Report, rows: &[Paired<'_>], aim: Option<f64>) -> Result<(), ReportError> {
    let mut t = Table::new(Some("stages_sets.csv"))
        .col("scene set", "set")
        .col("our solver", steps::SOLVER)
        .col("scenes in the set", "scene_count")
        .col("stage", "stage")
        .col("our ms", "ms")
        .col("MuJoCo ms", "mujoco_ms")
        .col("ratio", "ratio")
        .col("smallest", "ratio_min")
        .col("largest", "ratio_max");
    let x = Fmt::fixed(1).unit("x");
    for s in set_stages(rows) {
        let k = format!("steps.{}.{}.stage.{}", s.set, slug(&s.solver), s.stage);
        r.facts()
            .num(format!("{k}.ms"), s.ms, ms().unit(" ms"))
            .num(format!("{k}.mujoco_ms"), s.mujoco_ms, ms().unit(" ms"))
            .num(format!("{k}.ratio"), s.ratio, x.clone())
            .num(format!("{k}.ratio_min"), s.ratio_min, x.clone())
            .num(format!("{k}.ratio_max"), s.ratio_max, x.clone());
        if let (Some(aim), "after_collision") = (aim, s.stage) {
            let word = if s.ratio <= aim { "within" } else { "over" };
            r.facts().text(format!("{k}.aim"), word);
        }
        t.row(vec![
            C::text(&s.set),
            C::text(&s.solver),
            C::int(s.scenes as u64),
            C::text(label(s.stage)),
            C::same(s.ms, &ms()),
            C::same(s.mujoco_ms, &ms()),
            C::same(s.ratio, &Fmt::fixed(2)),
            C::same(s.ratio_min, &Fmt::fixed(2)),
            C::same(s.ratio_max, &Fmt::fixed(2)),
        ])?;
    }
    r.show_table("stages_sets", &t)
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
fn stages_table(r: &mut Report, rows: &[Paired<'_>]) -> Result<(), ReportError> {
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
