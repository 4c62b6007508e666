//! The accuracy-against-time ladder (`reports/fidelity-ladder/`): ContactBench's main plot (Le
//! Lidec et al., "Contact Models in Robotics: a Comparative Analysis", T-RO 2024, sec. VI) for
//! every compatible pair, from the run of `experiments/configs/fidelity-ladder/ladder.toml`
//! (`kind = "ladder"`, one row per scene, sampled step, pair and rung; issue 44).
//!
//! A rung is a (start, tolerance, cap); its point is the median time per solve over the sampled
//! steps against the 95th percentile of the shared ruler's residual, the one accuracy that
//! means the same for every pair (the natural map's `|F_nat| / (1 + |q|)`, zero only at the
//! Coulomb answer). A pair *reaches* an accuracy `L` at a rung when that percentile is at most
//! `L` and no solve of the rung failed; the pair that reaches it first is the one whose rung
//! has the smallest median time. ContactBench's five figures (on forces `r / dt`, the largest
//! over each step's contacts) are shown beside, per rung in `metrics.csv` and at the tightest
//! rung in a table. The page's prose is `experiments/configs/fidelity-ladder/templates/`.

use std::collections::BTreeMap;
use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::ladder::LadderConfig;
use contactlab_runs::schema::engines;
use contactlab_runs::schema::ladder as col;
use contactlab_runs::RunConfig;
use polars::prelude::DataFrame;
use serde::Serialize;

use crate::analysis::{f64s, first_seen, quantile, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::plots::{Axis, Chart, Series};
use crate::table::{Cell as C, Table};

/// The report's id, its config folder's name.
pub const PAPER: &str = "fidelity-ladder";

/// The ladder's config in that folder.
const CONFIG: &str = "ladder.toml";

/// MuJoCo's side of the ladder (`experiments/peers/ladder.py`), an engines config there.
const MUJOCO_CONFIG: &str = "mujoco.toml";

/// The engine of our pairs' rungs in `metrics.csv`.
const OURS: &str = "contactlab";

/// The columns of MuJoCo's rows of their own (`experiments/peers/ladder.py`'s records; the
/// others are the ladder's): the engine, its configuration, whether every island stopped
/// before the cap.
mod mj {
    /// The engine (`mujoco`).
    pub const ENGINE: &str = "engine";
    /// MuJoCo's configuration (`elliptic-impratio1-noslip0`, ...).
    pub const CONFIG: &str = "config";
    /// Whether every constraint island stopped before the cap.
    pub const CONVERGED: &str = "converged";
}

/// How `metrics.csv` and the fidelity study name MuJoCo's cone and model.
const MUJOCO_CONE: &str = "elliptic";
const MUJOCO_MODEL: &str = "regularized_cone";

/// ContactBench's figures, as the run names their columns, with how the page names them.
const FIGURES: [(&str, &str); 5] = [
    (col::PRIMAL, "Primal"),
    (col::DUAL, "Dual"),
    (col::COMPLEMENTARITY, "Complementarity"),
    (col::SIGNORINI, "Signorini"),
    (col::DISSIPATION, "Dissipation gap"),
];

/// Residuals below this are drawn at it (a log axis has no zero).
const FLOOR: f64 = 1e-16;

/// The most pairs one plot draws (the plots' distinct line styles).
const MAX_SERIES: usize = 20;

/// One rung of one pair on one scene, over its sampled steps.
#[derive(Debug, Clone)]
struct Rung {
    engine: String,
    scene: String,
    formulation: String,
    optimizer: String,
    model: String,
    start: String,
    tol: f64,
    cap: f64,
    steps: usize,
    failed: usize,
    converged: f64,
    seconds_median: f64,
    residual_median: f64,
    residual_p95: f64,
    figures_median: [f64; 5],
    figures_p95: [f64; 5],
}

impl Rung {
    /// `formulation+optimizer` for ours, `mujoco+<configuration>` for MuJoCo's.
    fn pair(&self) -> String {
        if self.is_ours() {
            format!("{}+{}", self.formulation, self.optimizer)
        } else {
            format!("{}+{}", self.engine, self.optimizer)
        }
    }

    fn is_ours(&self) -> bool {
        self.engine == OURS
    }

    /// Its accuracy when every solve ran, else none.
    fn accuracy(&self) -> Option<f64> {
        (self.failed == 0 && self.residual_p95.is_finite()).then_some(self.residual_p95)
    }

    fn label(&self) -> String {
        format!("{} ({}, {})", self.pair(), tol_key(self.tol), self.cap)
    }
}

/// A tolerance as metric names and facts spell it: `1e-6`.
fn tol_key(tol: f64) -> String {
    let e = tol.log10().round();
    if (10f64.powf(e) - tol).abs() <= 1e-12 * tol {
        format!("1e{}", e as i64)
    } else {
        format!("{tol:e}")
    }
}

/// A scene as the template loops over it.
#[derive(Debug, Serialize)]
struct SceneShown {
    name: String,
    /// Its sampled steps (ours).
    samples: usize,
    plots: Vec<String>,
    first: String,
    tightest: String,
}

/// Whether MuJoCo's side ran, as the template reads it.
#[derive(Debug, Serialize)]
struct MujocoShown {
    measured: bool,
    why_not: String,
}

/// Writes `reports/fidelity-ladder/` from the ladder's run under `root`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, PAPER)?;
    let cfg = LadderConfig::load(&r.config_file(CONFIG))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let mut rungs = rungs(&our_rows(&df)?);
    let mujoco = mujoco_rungs(&mut r, root)?;
    let mujoco_shown = MujocoShown {
        measured: mujoco.is_ok(),
        why_not: mujoco.as_ref().err().cloned().unwrap_or_default(),
    };
    rungs.extend(mujoco.unwrap_or_default());
    config_facts(&mut r, &cfg);
    metrics_csv(&mut r, &rungs)?;
    let mut shown = Vec::new();
    for scene in first_seen(rungs.iter().map(|x| &x.scene)) {
        let here: Vec<&Rung> = rungs.iter().filter(|x| x.scene == scene).collect();
        let mut plots = Vec::new();
        for start in first_seen(here.iter().map(|x| &x.start)) {
            let mine: Vec<&Rung> = here.iter().copied().filter(|x| x.start == start).collect();
            let name = format!("{scene}_{start}");
            pareto_plot(&mut r, &name, &scene, &start, &mine)?;
            plots.push(name);
        }
        first_table(&mut r, &scene, &cfg, &here)?;
        best_facts(&mut r, &scene, &here);
        if let Some(n) = here.iter().filter(|x| !x.is_ours()).map(|x| x.steps).max() {
            r.facts()
                .num(format!("ladder.{scene}.mujoco.steps"), n as f64, Fmt::int());
        }
        tightest_table(&mut r, &scene, &cfg, &here)?;
        shown.push(SceneShown {
            samples: here
                .iter()
                .filter(|x| x.is_ours())
                .map(|x| x.steps)
                .max()
                .unwrap_or(0),
            first: format!("{scene}_first"),
            tightest: format!("{scene}_tightest"),
            name: scene,
            plots,
        });
    }
    r.show("ladder_scenes", shown)?;
    r.show("ladder_mujoco", mujoco_shown)?;
    r.finish()?;
    Ok(())
}

/// What tells a rung's rows: scene, formulation, optimizer, start, and the tolerance's and
/// cap's bits.
type RungKey = (String, String, String, String, u64, u64);

/// A run's solves as the rungs need them, whichever engine ran them: one entry per row.
struct Rows {
    engine: String,
    scene: Vec<String>,
    formulation: Vec<String>,
    optimizer: Vec<String>,
    model: Vec<String>,
    start: Vec<String>,
    /// `converged`, `error` (a failed solve) or another stop.
    status: Vec<String>,
    tol: Vec<f64>,
    cap: Vec<f64>,
    seconds: Vec<f64>,
    residual: Vec<f64>,
    figures: Vec<Vec<f64>>,
}

/// The numbers every engine's rows share: tolerance, cap, time, residual and figures.
fn numbers(df: &DataFrame) -> Result<[Vec<f64>; 4], ReportError> {
    Ok([
        f64s(df, col::TOL)?,
        f64s(df, col::CAP)?,
        f64s(df, col::SECONDS)?,
        f64s(df, col::RESIDUAL)?,
    ])
}

fn figures(df: &DataFrame) -> Result<Vec<Vec<f64>>, ReportError> {
    Ok(FIGURES
        .iter()
        .map(|(c, _)| f64s(df, c))
        .collect::<Result<_, _>>()?)
}

/// Our ladder run's rows.
fn our_rows(df: &DataFrame) -> Result<Rows, ReportError> {
    let texts = |c: &str| strs(df, c);
    let [tol, cap, seconds, residual] = numbers(df)?;
    Ok(Rows {
        engine: OURS.into(),
        scene: texts(col::SCENE)?,
        formulation: texts(col::FORMULATION)?,
        optimizer: texts(col::OPTIMIZER)?,
        model: texts(col::MODEL)?,
        start: texts(col::START)?,
        status: texts(col::STATUS)?,
        tol,
        cap,
        seconds,
        residual,
        figures: figures(df)?,
    })
}

/// MuJoCo's rungs (`mujoco.toml`'s run), or why its side was not measured (the run was
/// skipped: the facts of MuJoCo's rungs are then marked absent). Its configuration stands in
/// the optimizer's place, as in the fidelity study's `metrics.csv`.
fn mujoco_rungs(r: &mut Report, root: &Path) -> Result<Result<Vec<Rung>, String>, ReportError> {
    let cfg = EnginesConfig::load(&r.config_file(MUJOCO_CONFIG))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    if let Ok(why) = strs(&df, engines::SKIPPED) {
        let why = why.first().cloned().unwrap_or_default();
        r.facts()
            .absent(".mujoco", format!("MuJoCo's side did not run, {why}"));
        return Ok(Err(why));
    }
    let n = df.height();
    let [tol, cap, seconds, residual] = numbers(&df)?;
    let status = f64s(&df, mj::CONVERGED)?
        .iter()
        .map(|&c| if c == 1.0 { "converged" } else { "stopped" }.to_string())
        .collect();
    let rows = Rows {
        engine: strs(&df, mj::ENGINE)?.first().cloned().unwrap_or_default(),
        scene: strs(&df, col::SCENE)?,
        formulation: vec![MUJOCO_CONE.into(); n],
        optimizer: strs(&df, mj::CONFIG)?,
        model: vec![MUJOCO_MODEL.into(); n],
        start: strs(&df, col::START)?,
        status,
        tol,
        cap,
        seconds,
        residual,
        figures: figures(&df)?,
    };
    Ok(Ok(rungs(&rows)))
}

/// The rows grouped into rungs, in the order the run met them.
fn rungs(x: &Rows) -> Vec<Rung> {
    let mut groups: BTreeMap<RungKey, Vec<usize>> = BTreeMap::new();
    let mut order = Vec::new();
    for k in 0..x.scene.len() {
        let key = (
            x.scene[k].clone(),
            x.formulation[k].clone(),
            x.optimizer[k].clone(),
            x.start[k].clone(),
            x.tol[k].to_bits(),
            x.cap[k].to_bits(),
        );
        let rows = groups.entry(key.clone()).or_default();
        if rows.is_empty() {
            order.push(key);
        }
        rows.push(k);
    }
    let median = |v: &[f64], rows: &[usize]| quantile(&pick(v, rows), 0.5);
    let p95 = |v: &[f64], rows: &[usize]| quantile(&pick(v, rows), 0.95);
    order
        .into_iter()
        .map(|key| {
            let rows = &groups[&key];
            let k = rows[0];
            let failed = rows.iter().filter(|&&i| x.status[i] == "error").count();
            let converged = rows.iter().filter(|&&i| x.status[i] == "converged").count();
            Rung {
                engine: x.engine.clone(),
                scene: x.scene[k].clone(),
                formulation: x.formulation[k].clone(),
                optimizer: x.optimizer[k].clone(),
                model: rows
                    .iter()
                    .map(|&i| x.model[i].clone())
                    .find(|m| !m.is_empty())
                    .unwrap_or_default(),
                start: x.start[k].clone(),
                tol: x.tol[k],
                cap: x.cap[k],
                steps: rows.len(),
                failed,
                converged: converged as f64 / rows.len() as f64,
                seconds_median: median(&x.seconds, rows),
                residual_median: median(&x.residual, rows),
                residual_p95: p95(&x.residual, rows),
                figures_median: std::array::from_fn(|f| median(&x.figures[f], rows)),
                figures_p95: std::array::from_fn(|f| p95(&x.figures[f], rows)),
            }
        })
        .collect()
}

fn pick(v: &[f64], rows: &[usize]) -> Vec<f64> {
    rows.iter().map(|&i| v[i]).collect()
}

/// The ladder's settings as facts: its tolerances, caps, samples and limit.
fn config_facts(r: &mut Report, cfg: &LadderConfig) {
    let caps: Vec<f64> = cfg.caps.iter().map(|&c| c as f64).collect();
    r.facts()
        .list("ladder.tols", cfg.tols.clone(), Fmt::sci(0))
        .list("ladder.caps", caps, Fmt::int())
        .num("ladder.samples", cfg.samples as f64, Fmt::int())
        .num(
            "ladder.time_limit",
            cfg.time_limit,
            Fmt::fixed(1).unit(" s"),
        )
        .num("ladder.scenes", cfg.scenes.len() as f64, Fmt::int());
    for scene in &cfg.scenes {
        r.facts().num(
            format!("ladder.{}.samples", scene.name),
            cfg.samples_of(scene) as f64,
            Fmt::int(),
        );
    }
}

/// `metrics.csv`: every rung's numbers in long form (`scene, engine, formulation, optimizer,
/// model, start, param, metric, value`); the cap is the `param`, the tolerance is in the
/// metric's name (`seconds_median.tol1e-6`).
fn metrics_csv(r: &mut Report, rungs: &[Rung]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("metrics.csv"));
    for c in [
        col::SCENE,
        "engine",
        col::FORMULATION,
        col::OPTIMIZER,
        col::MODEL,
        col::START,
        "param",
        "metric",
        "value",
    ] {
        t = t.csv_col(c);
    }
    for x in rungs {
        let mut values: Vec<(String, f64)> = [
            ("steps", x.steps as f64),
            ("failed", x.failed as f64),
            ("converged_fraction", x.converged),
            ("seconds_median", x.seconds_median),
            ("residual_median", x.residual_median),
            ("residual_p95", x.residual_p95),
        ]
        .into_iter()
        .map(|(m, v)| (m.to_string(), v))
        .collect();
        for (f, (name, _)) in FIGURES.iter().enumerate() {
            values.push((format!("{name}_median"), x.figures_median[f]));
            values.push((format!("{name}_p95"), x.figures_p95[f]));
        }
        for (metric, value) in values {
            t.row(vec![
                C::text(&x.scene),
                C::text(&x.engine),
                C::text(&x.formulation),
                C::text(&x.optimizer),
                C::text(&x.model),
                C::text(&x.start),
                C::int(x.cap as i128),
                C::text(format!("{metric}.tol{}", tol_key(x.tol))),
                C::num(value, &Fmt::sci(4), &Fmt::sci(4)),
            ])?;
        }
    }
    r.show_table("metrics", &t)
}

/// The rungs of `rungs` no other beats in both time and accuracy, fastest first.
fn front<'a>(rungs: &[&'a Rung]) -> Vec<&'a Rung> {
    let mut ok: Vec<&Rung> = rungs
        .iter()
        .copied()
        .filter(|x| x.accuracy().is_some() && x.seconds_median.is_finite())
        .collect();
    ok.sort_by(|a, b| {
        a.seconds_median
            .total_cmp(&b.seconds_median)
            .then(a.residual_p95.total_cmp(&b.residual_p95))
    });
    let mut out: Vec<&Rung> = Vec::new();
    for x in ok {
        if out
            .last()
            .is_none_or(|last| x.residual_p95 < last.residual_p95)
        {
            out.push(x);
        }
    }
    out
}

/// The Pareto plot of one scene and start: each pair's own front, for our pairs with a rung on
/// the front of all our pairs (fastest first) and every MuJoCo configuration, at most
/// [`MAX_SERIES`] in all.
fn pareto_plot(
    r: &mut Report,
    name: &str,
    scene: &str,
    start: &str,
    rungs: &[&Rung],
) -> Result<(), ReportError> {
    let ours: Vec<&Rung> = rungs.iter().copied().filter(|x| x.is_ours()).collect();
    let theirs = first_seen(
        rungs
            .iter()
            .filter(|x| !x.is_ours())
            .map(|x| x.pair())
            .collect::<Vec<_>>()
            .iter(),
    );
    let mut pairs: Vec<String> = Vec::new();
    for x in front(&ours) {
        if !pairs.contains(&x.pair()) {
            pairs.push(x.pair());
        }
    }
    pairs.truncate(MAX_SERIES.saturating_sub(theirs.len()));
    pairs.extend(theirs);
    let series: Vec<Series> = pairs
        .iter()
        .map(|p| {
            let mine: Vec<&Rung> = rungs.iter().copied().filter(|x| &x.pair() == p).collect();
            let points = front(&mine)
                .iter()
                .map(|x| (x.seconds_median * 1e6, x.residual_p95.max(FLOOR)))
                .collect();
            (p.clone(), points)
        })
        .collect();
    r.show_plot(
        name,
        &Chart::new(
            &format!("{scene}, {start}: accuracy against time"),
            Axis::log("median time per solve (us)"),
            Axis::log("95th percentile of the ruler's residual"),
        ),
        &series,
    )
}

/// The first rung of `rungs` to reach `level`: the fastest whose accuracy is within it.
fn first<'a>(rungs: &[&'a Rung], level: f64) -> Option<&'a Rung> {
    rungs
        .iter()
        .copied()
        .filter(|x| x.accuracy().is_some_and(|a| a <= level) && x.seconds_median.is_finite())
        .min_by(|a, b| a.seconds_median.total_cmp(&b.seconds_median))
}

/// `tables.<scene>_first`: per accuracy (the ladder's tolerances) and start, the pair that
/// reaches it first, its rung and its median time; and the facts
/// `ladder.<scene>.<start>.first.tol<L>` (the pair), `..first_rung.tol<L>`, `..first_us.tol<L>`
/// and `..reached.tol<L>` (how many pairs reach it).
fn first_table(
    r: &mut Report,
    scene: &str,
    cfg: &LadderConfig,
    rungs: &[&Rung],
) -> Result<(), ReportError> {
    let starts = first_seen(rungs.iter().map(|x| &x.start));
    let mut t = Table::new(Some(&format!("{scene}_first.csv"))).col("accuracy", "accuracy");
    for s in &starts {
        t = t
            .col(
                &format!("{s}: first pair (tol, cap)"),
                &format!("{s}_first"),
            )
            .csv_col(&format!("{s}_tol"))
            .csv_col(&format!("{s}_cap"))
            .col(&format!("{s}: median time (us)"), &format!("{s}_us"))
            .col(
                &format!("{s}: pairs that reach it"),
                &format!("{s}_reached"),
            );
    }
    let mut levels = cfg.tols.clone();
    levels.sort_by(|a, b| b.total_cmp(a));
    for level in levels {
        let key = tol_key(level);
        let mut cells = vec![C::text(format!("<= {key}"))];
        for s in &starts {
            // Ours only: MuJoCo's rungs are on the steps of its own trajectories.
            let mine: Vec<&Rung> = rungs
                .iter()
                .copied()
                .filter(|x| &x.start == s && x.is_ours())
                .collect();
            let reached = count_reaching(&mine, level);
            let f = format!("ladder.{scene}.{s}");
            r.facts()
                .num(format!("{f}.reached.tol{key}"), reached as f64, Fmt::int());
            match first(&mine, level) {
                Some(x) => {
                    r.facts()
                        .text(format!("{f}.first.tol{key}"), x.pair())
                        .text(
                            format!("{f}.first_rung.tol{key}"),
                            format!("{}, {}", tol_key(x.tol), x.cap),
                        )
                        .num(
                            format!("{f}.first_us.tol{key}"),
                            x.seconds_median * 1e6,
                            Fmt::sci(1).unit(" us"),
                        );
                    cells.push(C::pair(format!("`{}`", x.label()), x.pair()));
                    cells.push(C::same(x.tol, &Fmt::sci(0)));
                    cells.push(C::int(x.cap as i128));
                    cells.push(C::same(x.seconds_median * 1e6, &Fmt::sci(2)));
                }
                None => {
                    r.facts().text(format!("{f}.first.tol{key}"), "none");
                    cells.push(C::text("none"));
                    cells.push(C::same(f64::NAN, &Fmt::sci(0)));
                    cells.push(C::same(f64::NAN, &Fmt::int()));
                    cells.push(C::same(f64::NAN, &Fmt::sci(2)));
                }
            }
            cells.push(C::int(reached as i128));
        }
        t.row(cells)?;
    }
    r.show_table(&format!("{scene}_first"), &t)
}

/// `ladder.<scene>.<start>.best.<pair>`: the best accuracy each pair reaches on any rung
/// (the smallest 95th percentile of the residual of a rung without a failed solve; NaN when
/// every rung failed), which does not depend on the machine's speed.
fn best_facts(r: &mut Report, scene: &str, rungs: &[&Rung]) {
    let mut best: BTreeMap<(String, String), f64> = BTreeMap::new();
    for x in rungs {
        let b = best.entry((x.start.clone(), x.pair())).or_insert(f64::NAN);
        if let Some(a) = x.accuracy() {
            *b = if b.is_nan() { a } else { b.min(a) };
        }
    }
    for ((start, pair), value) in best {
        r.facts().num(
            format!("ladder.{scene}.{start}.best.{pair}"),
            value,
            Fmt::sci(1),
        );
    }
}

/// How many pairs have a rung that reaches `level`.
fn count_reaching(rungs: &[&Rung], level: f64) -> usize {
    let mut pairs: Vec<String> = rungs
        .iter()
        .filter(|x| x.accuracy().is_some_and(|a| a <= level))
        .map(|x| x.pair())
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs.len()
}

/// `tables.<scene>_tightest`: every pair at the tightest rung (the smallest tolerance, the
/// largest cap), cold and warm: converged fraction, median time, the residual's 95th
/// percentile and ContactBench's five figures' 95th percentiles; the facts
/// `ladder.<scene>.<start>.tightest_us.<pair>` (the median time, unchecked: a timing).
fn tightest_table(
    r: &mut Report,
    scene: &str,
    cfg: &LadderConfig,
    rungs: &[&Rung],
) -> Result<(), ReportError> {
    let (tol, cap) = cfg.tightest();
    let mut t = Table::new(Some(&format!("{scene}_tightest.csv")))
        .col("pair", "pair")
        .col("friction model", col::MODEL)
        .col("start", "start")
        .col("converged", "converged_fraction")
        .col("median time (us)", "seconds_median_us")
        .col("residual p95", "residual_p95");
    for (c, name) in FIGURES {
        t = t.col(&format!("{name} p95"), &format!("{c}_p95"));
    }
    for x in rungs.iter().filter(|x| x.tol == tol && x.cap == cap as f64) {
        r.facts().num(
            format!("ladder.{scene}.{}.tightest_us.{}", x.start, x.pair()),
            x.seconds_median * 1e6,
            Fmt::sci(1).unit(" us"),
        );
        let mut cells = vec![
            C::code(x.pair()),
            C::text(&x.model),
            C::text(&x.start),
            C::same(x.converged, &Fmt::fixed(2)),
            C::same(x.seconds_median * 1e6, &Fmt::sci(2)),
            C::same(x.residual_p95, &Fmt::sci(1)),
        ];
        for f in 0..FIGURES.len() {
            cells.push(C::same(x.figures_p95[f], &Fmt::sci(1)));
        }
        t.row(cells)?;
    }
    r.show_table(&format!("{scene}_tightest"), &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(pair: &str, seconds: f64, residual: f64) -> Rung {
        let (f, o) = pair.split_once('+').unwrap();
        Rung {
            engine: OURS.into(),
            scene: "s".into(),
            formulation: f.into(),
            optimizer: o.into(),
            model: "coulomb_cone".into(),
            start: "cold".into(),
            tol: 1e-6,
            cap: 50.0,
            steps: 3,
            failed: 0,
            converged: 1.0,
            seconds_median: seconds,
            residual_median: residual,
            residual_p95: residual,
            figures_median: [0.0; 5],
            figures_p95: [0.0; 5],
        }
    }

    #[test]
    fn the_front_keeps_only_undominated_rungs_and_the_first_is_the_fastest_within_reach() {
        let a = rung("a+x", 1e-5, 1e-4);
        let b = rung("b+y", 2e-5, 1e-8);
        let c = rung("c+z", 3e-5, 1e-6); // slower than b and less accurate: dominated
        let mut d = rung("d+w", 1e-6, 1e-12);
        d.failed = 1; // a failed solve: never on the front, never first
        let all = [&a, &b, &c, &d];
        let f: Vec<String> = front(&all).iter().map(|x| x.pair()).collect();
        assert_eq!(f, ["a+x", "b+y"]);
        assert_eq!(first(&all, 1e-4).unwrap().pair(), "a+x");
        assert_eq!(first(&all, 1e-6).unwrap().pair(), "b+y");
        assert!(first(&all, 1e-10).is_none());
        assert_eq!(count_reaching(&all, 1e-6), 2);
    }

    #[test]
    fn tolerances_are_named_by_their_decade() {
        assert_eq!(tol_key(1e-6), "1e-6");
        assert_eq!(tol_key(1e-10), "1e-10");
        assert_eq!(tol_key(3e-7), "3e-7");
    }
}
