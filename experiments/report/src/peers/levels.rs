//! The sections that put our solvers beside MuJoCo's at the same residual, one per [`Study`]:
//! *Our PGS beside MuJoCo's PGS* (`templates/pgs.md`, `pgs_engines.toml`) and *Todorov's
//! driver beside MuJoCo's Newton* (`templates/newton.md`, `newton_engines.toml`), both runs of
//! `experiments/peers/levels.py`. Each side solves its own problem from zero (ours the rigid
//! Coulomb problem, MuJoCo's its soft dual), and both are judged by the natural map of the
//! problem they solve relative to its value at zero; per level, the fewest iterations reaching
//! it and a solve capped there timed, interleaved. Their facts are `pgs.*` and `newton.*`
//! (`facts.md` lists them).

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

/// One of our solvers in a study: how its columns, facts and table columns are named.
pub(super) struct Side {
    /// The run's column of its iterations (`ours_sweeps`).
    iterations: &'static str,
    /// The run's column of its time over MuJoCo's (`ratio`).
    ratio: &'static str,
    /// The run's column of its residual at the level, or the best it reached short of it
    /// (`ours_residual`).
    residual: &'static str,
    /// The prefix of its facts at a level (`ours`, `nncg`).
    name: &'static str,
    /// The prefix of its ratio facts and table columns (empty for the study's first solver).
    ratios: &'static str,
    /// Its label in the tables' headers (`NNCG`; unused for the first solver).
    label: &'static str,
}

impl Side {
    /// A study's first solver, the one its tables lead with: its columns `ratio` and
    /// `ours_residual`, its facts `ours*`, and no label of its own.
    const fn first(iterations: &'static str) -> Side {
        Side {
            iterations,
            ratio: "ratio",
            residual: "ours_residual",
            name: "ours",
            ratios: "",
            label: "",
        }
    }
}

/// One comparison of our solvers with one of MuJoCo's at the same residual.
pub(super) struct Study {
    /// The study's config.
    pub config: &'static str,
    /// Its facts' and tables' prefix (`pgs`: facts `pgs.*`, tables `pgs_levels`,
    /// `pgs_problems`).
    prefix: &'static str,
    /// What a run that did not measure was, for its absent facts.
    what: &'static str,
    /// The `quoted_published.csv` quantity of the aim on the ratio.
    aim: &'static str,
    /// What one of our iterations is called (`sweeps`, `iterations`).
    unit: &'static str,
    /// Our solvers, the first the one the tables lead with.
    sides: &'static [Side],
}

/// Our PGS beside MuJoCo's `solver=PGS`: plain sweeps and the same sweeps combined by NNCG.
pub(super) const PGS: Study = Study {
    config: "pgs_engines.toml",
    prefix: "pgs",
    what: "PGS beside MuJoCo's",
    aim: "pgs_aim",
    unit: "sweeps",
    sides: &[
        Side::first("ours_sweeps"),
        Side {
            iterations: "ours_nncg_sweeps",
            ratio: "ratio_nncg",
            residual: "ours_nncg_residual",
            name: "nncg",
            ratios: "nncg_",
            label: "NNCG",
        },
    ],
};

/// Todorov's driver on the implicit NCP beside MuJoCo's `solver=Newton`: on our rigid problem,
/// and on MuJoCo's regularised `(A + R, b)` under Coulomb's law (`soft`).
pub(super) const NEWTON: Study = Study {
    config: "newton_engines.toml",
    prefix: "newton",
    what: "Todorov's driver beside MuJoCo's Newton",
    aim: "newton_aim",
    unit: common::ITERATIONS,
    sides: &[
        Side::first("ours_iterations"),
        Side {
            iterations: "ours_soft_iterations",
            ratio: "ratio_soft",
            residual: "ours_soft_residual",
            name: "soft",
            ratios: "soft_",
            label: "on A + R",
        },
    ],
};

/// What the templates see of a section.
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
    /// Per side of the study: its iterations, its time over MuJoCo's, and its residual at the
    /// level (or the best it reached short of it).
    ours: Vec<(f64, f64, f64)>,
    ours_condition: f64,
    mujoco_condition: f64,
    newton_residual: f64,
}

/// A study's section: its facts and tables when the run is there.
pub(super) fn section(r: &mut Report, root: &Path, study: &Study) -> Result<Part, ReportError> {
    let prefix = format!("{}.", study.prefix);
    let (part, df) = engines_run(r, root, study.config, &prefix, study.what)?;
    let Some(df) = df else {
        return Ok(part);
    };
    let rows = read_rows(&df, study)?;
    settings_facts(r, &df, &rows, study)?;
    levels_table(r, &rows, study)?;
    problems_table(r, &rows, study)?;
    Ok(part)
}

/// The run's records.
fn read_rows(df: &DataFrame, study: &Study) -> Result<Vec<Row>, ReportError> {
    let (set, problem) = (strs(df, "set")?, strs(df, common::PROBLEM)?);
    let num = |c: &str| f64s(df, c);
    let (contacts, rows, dofs, level) = (
        num("contacts")?,
        num(gradients::ROWS)?,
        num(problem_runs::DOFS)?,
        num("level")?,
    );
    let (mj_it, mj_res, newton, k_mj, k_ours) = (
        num("mujoco_iterations")?,
        num("mujoco_residual")?,
        num("mujoco_newton_residual")?,
        num("mujoco_condition")?,
        num("ours_condition")?,
    );
    let ours = study
        .sides
        .iter()
        .map(|s| Ok((num(s.iterations)?, num(s.ratio)?, num(s.residual)?)))
        .collect::<Result<Vec<_>, ReportError>>()?;
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
            ours: ours
                .iter()
                .map(|(it, ratio, res)| (it[k], ratio[k], res[k]))
                .collect(),
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

/// `<p>.rounds`, `<p>.max_sweeps` (the cap on either side's iterations), `<p>.mujoco_version`,
/// the problems and their sets, their contact rows and velocities (`<p>.rows_min`/`_max`,
/// `<p>.dofs_min`/`_max`), and the two problems' conditioning (`<p>.ours_condition_min`/
/// `_max`, `<p>.mujoco_condition_min`/`_max`); MuJoCo's stalls: `<p>.mujoco_stalled` problems
/// on which its solver reached no level, the residual it stopped at (`<p>.mujoco_stall_min`/
/// `_max`), the same of each of our solvers (`<p>.<name>_stalled`, `<p>.<name>_stall_min`/
/// `_max`: `ours` for the first), and the largest residual of MuJoCo's Newton solver on the
/// same problems (`<p>.mujoco_newton_residual_max`); `<p>` is the study's prefix.
fn settings_facts(
    r: &mut Report,
    df: &DataFrame,
    rows: &[Row],
    study: &Study,
) -> Result<(), ReportError> {
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
    // The residual each problem stopped at where a solver reached no level (`None`: MuJoCo).
    let stalled = |side: Option<usize>| -> Vec<f64> {
        let of = |x: &Row| match side {
            None => (x.mujoco_iterations, x.mujoco_residual),
            Some(k) => (x.ours[k].0, x.ours[k].2),
        };
        each.iter()
            .filter(|p| {
                rows.iter()
                    .filter(|x| x.problem == p.problem)
                    .all(|x| of(x).0.is_nan())
            })
            .map(|p| of(p).1)
            .collect()
    };
    let mut stalls = vec![("mujoco", stalled(None))];
    stalls.extend(
        study
            .sides
            .iter()
            .enumerate()
            .map(|(k, s)| (s.name, stalled(Some(k)))),
    );
    let newton: Vec<f64> = each.iter().map(|x| x.newton_residual).collect();
    let rows_of: Vec<f64> = each.iter().map(|x| x.rows).collect();
    let dofs_of: Vec<f64> = each.iter().map(|x| x.dofs).collect();
    let p = study.prefix;
    let sci = Fmt::sci(1);
    r.facts()
        .num(format!("{p}.rounds"), first(common::ROUNDS)?, Fmt::int())
        .num(format!("{p}.max_sweeps"), first("max_sweeps")?, Fmt::int())
        .text(format!("{p}.mujoco_version"), version)
        .num(format!("{p}.problems"), each.len() as f64, Fmt::int())
        .num(format!("{p}.fresh_problems"), fresh as f64, Fmt::int());
    for (name, v) in [(gradients::ROWS, &rows_of), (problem_runs::DOFS, &dofs_of)] {
        r.facts()
            .num(format!("{p}.{name}_min"), quantile(v, 0.0), Fmt::int())
            .num(format!("{p}.{name}_max"), quantile(v, 1.0), Fmt::int());
    }
    for (name, v) in [("ours_condition", &k_ours), ("mujoco_condition", &k_mj)] {
        r.facts()
            .num(format!("{p}.{name}_min"), quantile(v, 0.0), sci.clone())
            .num(format!("{p}.{name}_max"), quantile(v, 1.0), sci.clone());
    }
    for (name, v) in &stalls {
        r.facts()
            .num(format!("{p}.{name}_stalled"), v.len() as f64, Fmt::int())
            .num(
                format!("{p}.{name}_stall_min"),
                quantile(v, 0.0),
                sci.clone(),
            )
            .num(
                format!("{p}.{name}_stall_max"),
                quantile(v, 1.0),
                sci.clone(),
            );
    }
    r.facts().num(
        format!("{p}.mujoco_newton_residual_max"),
        quantile(&newton, 1.0),
        sci,
    );
    Ok(())
}

/// One of our solvers at one level: its iterations per problem (NaN where it did not reach
/// the level) and, where MuJoCo reached it too, its time over MuJoCo's and that ratio's two
/// factors, its iterations over MuJoCo's and its time per iteration over MuJoCo's.
struct SideStats {
    iterations: Vec<f64>,
    ratios: Vec<f64>,
    iteration_ratios: Vec<f64>,
    per_iteration_ratios: Vec<f64>,
}

impl SideStats {
    /// Side `k` of the study over the problems `of`.
    fn of(of: &[&Row], k: usize) -> SideStats {
        let both: Vec<(f64, f64)> = of
            .iter()
            .filter(|x| x.ours[k].1.is_finite())
            .map(|x| (x.ours[k].1, x.ours[k].0 / x.mujoco_iterations))
            .collect();
        SideStats {
            iterations: of.iter().map(|x| x.ours[k].0).collect(),
            ratios: both.iter().map(|b| b.0).collect(),
            iteration_ratios: both.iter().map(|b| b.1).collect(),
            per_iteration_ratios: both.iter().map(|b| b.0 / b.1).collect(),
        }
    }

    /// How many of the ratios are at most `aim`.
    fn within(&self, aim: f64) -> usize {
        self.ratios.iter().filter(|&&v| v <= aim).count()
    }
}

/// One level's numbers over the problems (`of`): MuJoCo's iterations, each of our solvers'
/// ([`SideStats`], in the study's order), and how the first one's iterations rank with `W`'s
/// conditioning.
struct LevelStats {
    problems: usize,
    mujoco: Vec<f64>,
    sides: Vec<SideStats>,
    corr: f64,
}

impl LevelStats {
    fn of(of: &[&Row], study: &Study) -> LevelStats {
        let sides: Vec<SideStats> = (0..study.sides.len())
            .map(|k| SideStats::of(of, k))
            .collect();
        let k_ours: Vec<f64> = of.iter().map(|x| x.ours_condition).collect();
        LevelStats {
            problems: of.len(),
            mujoco: of.iter().map(|x| x.mujoco_iterations).collect(),
            corr: rank_correlation(&sides[0].iterations, &k_ours),
            sides,
        }
    }

    fn reached(v: &[f64]) -> usize {
        v.iter().filter(|k| k.is_finite()).count()
    }
}

/// `<p>_levels.csv` (`tables.<p>_levels`) and per level its facts ([`level_facts`]).
fn levels_table(r: &mut Report, rows: &[Row], study: &Study) -> Result<(), ReportError> {
    let aim = quoted(r, study.aim)?.unwrap_or(f64::NAN);
    let p = study.prefix;
    r.facts()
        .num(format!("{p}.aim"), aim, Fmt::fixed(0).unit("x"));
    let (x, int) = (Fmt::fixed(2), Fmt::int());
    let unit = study.unit;
    let mut t = Table::new(Some(&format!("{p}_levels.csv")))
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
        .col(&format!("our {unit}"), &format!("ours_{unit}"));
    for side in &study.sides[1..] {
        let (l, c) = (side.label, side.ratios);
        t = t
            .col(&format!("{l} reached"), &format!("{c}reached"))
            .col(&format!("{l} ratio"), &format!("{c}ratio_median"))
            .col(&format!("{l} quartiles"), &format!("{c}ratio_quartiles"))
            .col(&format!("{l} within the aim"), &format!("{c}within_aim"));
    }
    let span = |v: &[f64]| {
        format!(
            "{} - {}",
            int.number(quantile(v, 0.0)),
            int.number(quantile(v, 1.0))
        )
    };
    let quartiles = |v: &[f64]| {
        format!(
            "{} - {}",
            x.number(quantile(v, 0.25)),
            x.number(quantile(v, 0.75))
        )
    };
    for level in levels(rows) {
        let of: Vec<&Row> = rows.iter().filter(|x| x.level == level).collect();
        let st = LevelStats::of(&of, study);
        level_facts(r, level, &st, aim, study);
        let first = &st.sides[0];
        let q = |p: f64| quantile(&first.ratios, p);
        let mut cells = vec![
            C::text(level_name(level)),
            C::int(st.problems as i64),
            C::int(LevelStats::reached(&st.mujoco) as i64),
            C::int(LevelStats::reached(&first.iterations) as i64),
            C::int(first.ratios.len() as i64),
            C::num(median(&first.ratios), &x, &Fmt::sci(4)),
            C::text(quartiles(&first.ratios)),
            C::num(q(0.0), &x, &Fmt::sci(4)),
            C::num(q(1.0), &x, &Fmt::sci(4)),
            C::int(first.within(aim) as i64),
            C::text(span(&st.mujoco)),
            C::text(span(&first.iterations)),
        ];
        for other in &st.sides[1..] {
            cells.extend([
                C::int(LevelStats::reached(&other.iterations) as i64),
                C::num(median(&other.ratios), &x, &Fmt::sci(4)),
                C::text(quartiles(&other.ratios)),
                C::int(other.within(aim) as i64),
            ]);
        }
        t.row(cells)?;
    }
    r.show_table(&format!("{p}_levels"), &t)
}

/// Level `L`'s facts `<p>.<L>.*`: problems, how many MuJoCo reached and its iterations
/// (extremes), each of our solvers' ([`side_facts`]), and the rank correlation of the first
/// one's iterations with our `W`'s conditioning over the problems it reached
/// (`<unit>_condition_corr`).
fn level_facts(r: &mut Report, level: f64, st: &LevelStats, aim: f64, study: &Study) {
    let k = format!("{}.{}", study.prefix, level_name(level));
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
        .num(
            format!("{k}.{}_condition_corr", study.unit),
            st.corr,
            Fmt::fixed(2),
        );
    for (side, stats) in study.sides.iter().zip(&st.sides) {
        side_facts(r, &k, side, study.unit, stats, aim);
    }
}

/// One solver's facts at a level (`k`, `<p>.<L>`): `<name>_reached` and `<name>_<unit>_min`/
/// `_max`; where MuJoCo reached the level too, `<ratios>both`, the ratio of its time to
/// MuJoCo's (`<ratios>ratio`, `_q1`, `_q3`, `_min`, `_max`), the medians of its two factors
/// (`<ratios>iterations_ratio`, `<ratios>per_iteration_ratio`) and how many are within the aim
/// (`<ratios>within_aim`, the study's aim of `quoted_published.csv`).
fn side_facts(r: &mut Report, k: &str, side: &Side, unit: &str, stats: &SideStats, aim: f64) {
    let x = Fmt::fixed(2).unit("x");
    let q = |p: f64| quantile(&stats.ratios, p);
    let int = Fmt::int();
    let (name, ratios) = (side.name, side.ratios);
    r.facts()
        .num(
            format!("{k}.{name}_reached"),
            LevelStats::reached(&stats.iterations) as f64,
            int.clone(),
        )
        .num(
            format!("{k}.{name}_{unit}_min"),
            quantile(&stats.iterations, 0.0),
            int.clone(),
        )
        .num(
            format!("{k}.{name}_{unit}_max"),
            quantile(&stats.iterations, 1.0),
            int.clone(),
        )
        .num(
            format!("{k}.{ratios}both"),
            stats.ratios.len() as f64,
            int.clone(),
        )
        .num(format!("{k}.{ratios}ratio"), q(0.5), x.clone())
        .num(format!("{k}.{ratios}ratio_q1"), q(0.25), x.clone())
        .num(format!("{k}.{ratios}ratio_q3"), q(0.75), x.clone())
        .num(format!("{k}.{ratios}ratio_min"), q(0.0), x.clone())
        .num(format!("{k}.{ratios}ratio_max"), q(1.0), x.clone())
        .num(
            format!("{k}.{ratios}iterations_ratio"),
            median(&stats.iteration_ratios),
            x.clone(),
        )
        .num(
            format!("{k}.{ratios}per_iteration_ratio"),
            median(&stats.per_iteration_ratios),
            x,
        )
        .num(
            format!("{k}.{ratios}within_aim"),
            stats.within(aim) as f64,
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

/// `<p>_problems.csv` (`tables.<p>_problems`): per problem its size, the two problems'
/// conditioning, and per side and level our time over MuJoCo's, or which side did not reach
/// it.
fn problems_table(r: &mut Report, rows: &[Row], study: &Study) -> Result<(), ReportError> {
    let levels = levels(rows);
    let p = study.prefix;
    let mut t = Table::new(Some(&format!("{p}_problems.csv")))
        .col("problem set", "set")
        .col(common::PROBLEM, common::PROBLEM)
        .col("contacts", "contacts")
        .col("rows / velocities", "rows_per_dofs")
        .col("our W's condition", "ours_condition")
        .col("MuJoCo's A + R's", "mujoco_condition");
    for side in study.sides {
        for &level in &levels {
            let name = level_name(level);
            let head = match side.label {
                "" => name.clone(),
                l => format!("{name}, {l}"),
            };
            t = t.col(&head, &format!("ratio_{}{name}", side.ratios));
        }
    }
    let sci = Fmt::sci(1);
    for x in problems(rows) {
        let mut cells = vec![
            C::text(&x.set),
            C::text(&x.problem),
            C::num(x.contacts, &Fmt::int(), &Fmt::int()),
            C::text(format!("{} / {}", x.rows, x.dofs)),
            C::num(x.ours_condition, &sci, &Fmt::sci(4)),
            C::num(x.mujoco_condition, &sci, &Fmt::sci(4)),
        ];
        let at = |level: f64| {
            rows.iter()
                .find(|y| y.problem == x.problem && y.level == level)
        };
        for k in 0..study.sides.len() {
            for &level in &levels {
                cells.push(at(level).map_or(C::text("-"), |y| {
                    ratio_cell(y.mujoco_iterations, y.ours[k].0, y.ours[k].1)
                }));
            }
        }
        t.row(cells)?;
    }
    r.show_table(&format!("{p}_problems"), &t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    /// Two problems at two levels: MuJoCo reaches everything; our rigid run reaches nothing
    /// on `b`, the run on `A + R` everything but `b`'s finer level.
    fn newton_run() -> DataFrame {
        let nan = f64::NAN;
        df!(
            "set" => ["fresh"; 4],
            common::PROBLEM => ["a", "a", "b", "b"],
            "contacts" => [100.0; 4],
            gradients::ROWS => [300.0; 4],
            problem_runs::DOFS => [240.0; 4],
            "level" => [1e-3, 1e-6, 1e-3, 1e-6],
            "mujoco_iterations" => [2.0, 4.0, 3.0, 6.0],
            "mujoco_residual" => [1e-4, 1e-7, 1e-4, 1e-7],
            "mujoco_newton_residual" => [1e-12; 4],
            "mujoco_condition" => [1e3; 4],
            "ours_condition" => [1e2; 4],
            "ours_iterations" => [4.0, 8.0, nan, nan],
            "ratio" => [10.0, 12.0, nan, nan],
            "ours_residual" => [1e-4, 1e-7, 3e-2, 2e-2],
            "ours_soft_iterations" => [2.0, 4.0, 3.0, nan],
            "ratio_soft" => [4.0, 6.0, 5.0, nan],
            "ours_soft_residual" => [1e-4, 1e-7, 1e-4, 4e-5],
            common::ROUNDS => [7.0; 4],
            "max_sweeps" => [512.0; 4],
            "mujoco_version" => ["4.0.0"; 4],
        )
        .unwrap()
    }

    #[test]
    fn each_side_has_its_own_stalls_and_ratios() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut r = Report::new(&root, "peers").unwrap();
        let df = newton_run();
        let rows = read_rows(&df, &NEWTON).unwrap();
        settings_facts(&mut r, &df, &rows, &NEWTON).unwrap();
        levels_table(&mut r, &rows, &NEWTON).unwrap();
        let f = r.facts_ref();
        // The rigid run stalls on `b` at the best residual it saw (the first level's record).
        assert_eq!(f.value("newton.ours_stalled"), 1.0);
        assert_eq!(f.value("newton.ours_stall_max"), 3e-2);
        // The run on `A + R` reaches `b`'s coarse level: no stall.
        assert_eq!(f.value("newton.soft_stalled"), 0.0);
        assert_eq!(f.value("newton.mujoco_stalled"), 0.0);
        assert_eq!(f.value("newton.1e-6.soft_reached"), 1.0);
        assert_eq!(f.value("newton.1e-3.soft_reached"), 2.0);
        assert_eq!(f.value("newton.1e-3.soft_ratio"), 4.5);
        assert_eq!(f.value("newton.1e-3.soft_iterations_ratio"), 1.0);
        assert_eq!(f.value("newton.1e-6.ratio"), 12.0);
        assert_eq!(f.value("newton.1e-6.per_iteration_ratio"), 6.0);
    }
}
