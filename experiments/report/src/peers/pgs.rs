//! The section *Our PGS beside MuJoCo's PGS at the same residual* (`templates/pgs.md`):
//! `pgs_engines.toml`'s run of `experiments/peers/pgs_levels.py`. Each side solves its own
//! problem from zero (ours the rigid Coulomb problem, MuJoCo's `solver=PGS` its soft dual), and
//! both are judged by the natural map of the problem they solve relative to its value at zero;
//! per level, the fewest iterations reaching it and a solve capped there timed, interleaved.
//! Its facts are `pgs.*` (`facts.md` lists them).

use std::path::Path;

use contactlab_runs::schema::{common, gradients, problems as problem_runs};
use polars::prelude::DataFrame;

use super::common::{engines_run, quoted, RunPart};
use crate::analysis::peers::median;
use crate::analysis::{f64s, first_seen, quantile, rank_correlation, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The study's config.
pub const PGS: &str = "pgs_engines.toml";

/// What the templates see of the section.
pub(super) type Part = RunPart;

/// One (problem, level) record; NaN where a side did not reach the level.
struct Row {
    set: String,
    problem: String,
    contacts: f64,
    rows: f64,
    dofs: f64,
    level: f64,
    mujoco_iterations: f64,
    mujoco_residual: f64,
    ours_sweeps: f64,
    ratio: f64,
    nncg_sweeps: f64,
    ratio_nncg: f64,
    ours_condition: f64,
    mujoco_condition: f64,
    newton_residual: f64,
}

/// The section's facts and tables when the run is there.
pub(super) fn section(r: &mut Report, root: &Path) -> Result<Part, ReportError> {
    let (part, df) = engines_run(r, root, PGS, "pgs.", "PGS beside MuJoCo's")?;
    let Some(df) = df else {
        return Ok(part);
    };
    let rows = read_rows(&df)?;
    settings_facts(r, &df, &rows)?;
    levels_table(r, &rows)?;
    problems_table(r, &rows)?;
    Ok(part)
}

/// The run's records.
fn read_rows(df: &DataFrame) -> Result<Vec<Row>, ReportError> {
    let (set, problem) = (strs(df, "set")?, strs(df, common::PROBLEM)?);
    let num = |c: &str| f64s(df, c);
    let (contacts, rows, dofs, level) = (
        num("contacts")?,
        num(gradients::ROWS)?,
        num(problem_runs::DOFS)?,
        num("level")?,
    );
    let (mj_it, mj_res, newton, k_mj) = (
        num("mujoco_iterations")?,
        num("mujoco_residual")?,
        num("mujoco_newton_residual")?,
        num("mujoco_condition")?,
    );
    let (ours, ratio, nncg, ratio_nncg, k_ours) = (
        num("ours_sweeps")?,
        num("ratio")?,
        num("ours_nncg_sweeps")?,
        num("ratio_nncg")?,
        num("ours_condition")?,
    );
    Ok((0..df.height())
        .map(|k| Row {
            set: set[k].clone(),
            problem: problem[k].clone(),
            contacts: contacts[k],
            rows: rows[k],
            dofs: dofs[k],
            level: level[k],
            mujoco_iterations: mj_it[k],
            mujoco_residual: mj_res[k],
            ours_sweeps: ours[k],
            ratio: ratio[k],
            nncg_sweeps: nncg[k],
            ratio_nncg: ratio_nncg[k],
            ours_condition: k_ours[k],
            mujoco_condition: k_mj[k],
            newton_residual: newton[k],
        })
        .collect())
}

/// The levels in the run's order.
fn levels(rows: &[Row]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for x in rows {
        if !out.contains(&x.level) {
            out.push(x.level);
        }
    }
    out
}

/// A level as its facts and columns name it (`1e-3`).
fn level_name(level: f64) -> String {
    Fmt::sci(0).number(level)
}

/// One record per problem (its first level's), in the run's order.
fn problems(rows: &[Row]) -> Vec<&Row> {
    first_seen(rows.iter().map(|x| &x.problem))
        .into_iter()
        .filter_map(|p| rows.iter().find(|x| x.problem == p))
        .collect()
}

/// `pgs.rounds`, `pgs.max_sweeps`, `pgs.mujoco_version`, the problems and their sets, and the
/// two problems' conditioning (`pgs.ours_condition_min`/`_max`, `pgs.mujoco_condition_min`/
/// `_max`); MuJoCo's stalls: `pgs.mujoco_stalled` problems on which its PGS reached no level,
/// the residual it stopped at (`pgs.mujoco_stall_min`/`_max`), and the largest residual of
/// MuJoCo's Newton solver on the same problems (`pgs.mujoco_newton_residual_max`).
fn settings_facts(r: &mut Report, df: &DataFrame, rows: &[Row]) -> Result<(), ReportError> {
    let first = |c: &str| -> Result<f64, ReportError> {
        Ok(f64s(df, c)?
            .into_iter()
            .find(|v| v.is_finite())
            .unwrap_or(f64::NAN))
    };
    let version = strs(df, "mujoco_version")?
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    let each = problems(rows);
    let fresh = each.iter().filter(|x| x.set == "fresh").count();
    let k_ours: Vec<f64> = each.iter().map(|x| x.ours_condition).collect();
    let k_mj: Vec<f64> = each.iter().map(|x| x.mujoco_condition).collect();
    let stalled: Vec<f64> = each
        .iter()
        .filter(|p| {
            rows.iter()
                .filter(|x| x.problem == p.problem)
                .all(|x| x.mujoco_iterations.is_nan())
        })
        .map(|p| p.mujoco_residual)
        .collect();
    let sci = Fmt::sci(1);
    r.facts()
        .num("pgs.rounds", first(common::ROUNDS)?, Fmt::int())
        .num("pgs.max_sweeps", first("max_sweeps")?, Fmt::int())
        .text("pgs.mujoco_version", version)
        .num("pgs.problems", each.len() as f64, Fmt::int())
        .num("pgs.fresh_problems", fresh as f64, Fmt::int())
        .num(
            "pgs.ours_condition_min",
            quantile(&k_ours, 0.0),
            sci.clone(),
        )
        .num(
            "pgs.ours_condition_max",
            quantile(&k_ours, 1.0),
            sci.clone(),
        )
        .num(
            "pgs.mujoco_condition_min",
            quantile(&k_mj, 0.0),
            sci.clone(),
        )
        .num(
            "pgs.mujoco_condition_max",
            quantile(&k_mj, 1.0),
            sci.clone(),
        )
        .num("pgs.mujoco_stalled", stalled.len() as f64, Fmt::int())
        .num("pgs.mujoco_stall_min", quantile(&stalled, 0.0), sci.clone())
        .num("pgs.mujoco_stall_max", quantile(&stalled, 1.0), sci.clone())
        .num(
            "pgs.mujoco_newton_residual_max",
            quantile(
                &each.iter().map(|x| x.newton_residual).collect::<Vec<_>>(),
                1.0,
            ),
            sci,
        );
    Ok(())
}

/// One of our solvers at one level: its sweeps per problem (NaN where it did not reach the
/// level) and its time over MuJoCo's where both reached it.
struct SideStats {
    sweeps: Vec<f64>,
    ratios: Vec<f64>,
}

impl SideStats {
    fn of(of: &[&Row], sweeps: impl Fn(&Row) -> f64, ratio: impl Fn(&Row) -> f64) -> SideStats {
        SideStats {
            sweeps: of.iter().map(|x| sweeps(x)).collect(),
            ratios: of
                .iter()
                .map(|x| ratio(x))
                .filter(|v| v.is_finite())
                .collect(),
        }
    }

    /// How many of the ratios are at most `aim`.
    fn within(&self, aim: f64) -> usize {
        self.ratios.iter().filter(|&&v| v <= aim).count()
    }
}

/// One level's numbers over the problems (`of`): MuJoCo's iterations, each of our solvers'
/// ([`SideStats`]: plain sweeps and NNCG), and how plain sweeps rank with `W`'s conditioning.
struct LevelStats {
    problems: usize,
    mujoco: Vec<f64>,
    plain: SideStats,
    nncg: SideStats,
    corr: f64,
}

impl LevelStats {
    fn of(of: &[&Row]) -> LevelStats {
        let plain = SideStats::of(of, |x| x.ours_sweeps, |x| x.ratio);
        let k_ours: Vec<f64> = of.iter().map(|x| x.ours_condition).collect();
        LevelStats {
            problems: of.len(),
            mujoco: of.iter().map(|x| x.mujoco_iterations).collect(),
            corr: rank_correlation(&plain.sweeps, &k_ours),
            plain,
            nncg: SideStats::of(of, |x| x.nncg_sweeps, |x| x.ratio_nncg),
        }
    }

    fn reached(v: &[f64]) -> usize {
        v.iter().filter(|k| k.is_finite()).count()
    }
}

/// `pgs_levels.csv` (`tables.pgs_levels`) and per level its facts ([`level_facts`]).
fn levels_table(r: &mut Report, rows: &[Row]) -> Result<(), ReportError> {
    let aim = quoted(r, "pgs_aim")?.unwrap_or(f64::NAN);
    r.facts().num("pgs.aim", aim, Fmt::fixed(0).unit("x"));
    let (x, int) = (Fmt::fixed(2), Fmt::int());
    let mut t = Table::new(Some("pgs_levels.csv"))
        .col("residual level", "level")
        .col("problems", "problems")
        .col("MuJoCo reached", "mujoco_reached")
        .col("ours reached", "ours_reached")
        .col("both", "both")
        .col("ratio to MuJoCo", "ratio_median")
        .col("quartiles", "ratio_quartiles")
        .col("smallest", "ratio_min")
        .col("largest", "ratio_max")
        .col("within the aim", "within_aim")
        .col("MuJoCo iterations", "mujoco_iterations")
        .col("our sweeps", "ours_sweeps")
        .col("NNCG reached", "nncg_reached")
        .col("NNCG ratio", "nncg_ratio_median")
        .col("NNCG quartiles", "nncg_ratio_quartiles")
        .col("NNCG within the aim", "nncg_within_aim");
    let span = |v: &[f64]| {
        format!(
            "{} - {}",
            int.number(quantile(v, 0.0)),
            int.number(quantile(v, 1.0))
        )
    };
    for level in levels(rows) {
        let of: Vec<&Row> = rows.iter().filter(|x| x.level == level).collect();
        let st = LevelStats::of(&of);
        level_facts(r, level, &st, aim);
        let (plain, nncg) = (&st.plain, &st.nncg);
        let q = |p: f64| quantile(&plain.ratios, p);
        let qn = |p: f64| quantile(&nncg.ratios, p);
        t.row(vec![
            C::text(level_name(level)),
            C::int(st.problems as i64),
            C::int(LevelStats::reached(&st.mujoco) as i64),
            C::int(LevelStats::reached(&plain.sweeps) as i64),
            C::int(plain.ratios.len() as i64),
            C::num(median(&plain.ratios), &x, &Fmt::sci(4)),
            C::text(format!("{} - {}", x.number(q(0.25)), x.number(q(0.75)))),
            C::num(q(0.0), &x, &Fmt::sci(4)),
            C::num(q(1.0), &x, &Fmt::sci(4)),
            C::int(plain.within(aim) as i64),
            C::text(span(&st.mujoco)),
            C::text(span(&plain.sweeps)),
            C::int(LevelStats::reached(&nncg.sweeps) as i64),
            C::num(median(&nncg.ratios), &x, &Fmt::sci(4)),
            C::text(format!("{} - {}", x.number(qn(0.25)), x.number(qn(0.75)))),
            C::int(nncg.within(aim) as i64),
        ])?;
    }
    r.show_table("pgs_levels", &t)
}

/// Level `L`'s facts `pgs.<L>.*`: problems, how many MuJoCo reached and its iterations
/// (extremes), each of our solvers' ([`side_facts`]: plain sweeps as `ours_*` with unprefixed
/// ratios, NNCG as `nncg_*`), and the rank correlation of our plain sweeps with our `W`'s
/// conditioning over the problems we reached.
fn level_facts(r: &mut Report, level: f64, st: &LevelStats, aim: f64) {
    let k = format!("pgs.{}", level_name(level));
    r.facts()
        .num(format!("{k}.problems"), st.problems as f64, Fmt::int())
        .num(
            format!("{k}.mujoco_reached"),
            LevelStats::reached(&st.mujoco) as f64,
            Fmt::int(),
        )
        .num(
            format!("{k}.mujoco_iterations_min"),
            quantile(&st.mujoco, 0.0),
            Fmt::int(),
        )
        .num(
            format!("{k}.mujoco_iterations_max"),
            quantile(&st.mujoco, 1.0),
            Fmt::int(),
        )
        .num(format!("{k}.sweeps_condition_corr"), st.corr, Fmt::fixed(2));
    side_facts(r, &k, "ours", "", &st.plain, aim);
    side_facts(r, &k, "nncg", "nncg_", &st.nncg, aim);
}

/// One solver's facts at a level (`k`, `pgs.<L>`): `<name>_reached` and
/// `<name>_sweeps_min`/`_max`; where MuJoCo reached the level too, `<ratios>both`, the ratio of
/// its time to MuJoCo's (`<ratios>ratio`, `_q1`, `_q3`, `_min`, `_max`) and how many are within
/// the aim (`<ratios>within_aim`, `pgs_aim` of `quoted_published.csv`).
fn side_facts(r: &mut Report, k: &str, name: &str, ratios: &str, side: &SideStats, aim: f64) {
    let x = Fmt::fixed(2).unit("x");
    let q = |p: f64| quantile(&side.ratios, p);
    let int = Fmt::int();
    r.facts()
        .num(
            format!("{k}.{name}_reached"),
            LevelStats::reached(&side.sweeps) as f64,
            int.clone(),
        )
        .num(
            format!("{k}.{name}_sweeps_min"),
            quantile(&side.sweeps, 0.0),
            int.clone(),
        )
        .num(
            format!("{k}.{name}_sweeps_max"),
            quantile(&side.sweeps, 1.0),
            int.clone(),
        )
        .num(
            format!("{k}.{ratios}both"),
            side.ratios.len() as f64,
            int.clone(),
        )
        .num(format!("{k}.{ratios}ratio"), q(0.5), x.clone())
        .num(format!("{k}.{ratios}ratio_q1"), q(0.25), x.clone())
        .num(format!("{k}.{ratios}ratio_q3"), q(0.75), x.clone())
        .num(format!("{k}.{ratios}ratio_min"), q(0.0), x.clone())
        .num(format!("{k}.{ratios}ratio_max"), q(1.0), x)
        .num(
            format!("{k}.{ratios}within_aim"),
            side.within(aim) as f64,
            int,
        );
}

/// One problem's cell at one level: our time over MuJoCo's, or which side did not reach it.
fn ratio_cell(mujoco: f64, ours: f64, ratio: f64) -> C {
    match (mujoco.is_nan(), ours.is_nan()) {
        (false, false) => C::num(ratio, &Fmt::fixed(2), &Fmt::sci(4)),
        (true, false) => C::text("MuJoCo short"),
        (false, true) => C::text("ours short"),
        (true, true) => C::text("both short"),
    }
}

/// `pgs_problems.csv` (`tables.pgs_problems`): per problem its size, the two problems'
/// conditioning, and per level our time over MuJoCo's, or which side did not reach it.
fn problems_table(r: &mut Report, rows: &[Row]) -> Result<(), ReportError> {
    let levels = levels(rows);
    let mut t = Table::new(Some("pgs_problems.csv"))
        .col("problem set", "set")
        .col(common::PROBLEM, common::PROBLEM)
        .col("contacts", "contacts")
        .col("rows / velocities", "rows_per_dofs")
        .col("our W's condition", "ours_condition")
        .col("MuJoCo's A + R's", "mujoco_condition");
    for &level in &levels {
        let name = level_name(level);
        t = t.col(&name, &format!("ratio_{name}"));
    }
    for &level in &levels {
        let name = level_name(level);
        t = t.col(&format!("{name}, NNCG"), &format!("ratio_nncg_{name}"));
    }
    let sci = Fmt::sci(1);
    for p in problems(rows) {
        let mut cells = vec![
            C::text(&p.set),
            C::text(&p.problem),
            C::num(p.contacts, &Fmt::int(), &Fmt::int()),
            C::text(format!("{} / {}", p.rows, p.dofs)),
            C::num(p.ours_condition, &sci, &Fmt::sci(4)),
            C::num(p.mujoco_condition, &sci, &Fmt::sci(4)),
        ];
        let at = |level: f64| {
            rows.iter()
                .find(|x| x.problem == p.problem && x.level == level)
        };
        for &level in &levels {
            cells.push(at(level).map_or(C::text("-"), |x| {
                ratio_cell(x.mujoco_iterations, x.ours_sweeps, x.ratio)
            }));
        }
        for &level in &levels {
            cells.push(at(level).map_or(C::text("-"), |x| {
                ratio_cell(x.mujoco_iterations, x.nncg_sweeps, x.ratio_nncg)
            }));
        }
        t.row(cells)?;
    }
    r.show_table("pgs_problems", &t)
}
