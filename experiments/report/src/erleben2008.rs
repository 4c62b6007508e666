//! The Erleben and Ortiz report (`reports/erleben2008/`): Table 1 (converged / stagnated /
//! back-tracking failed per size) and Table 2 (seconds and iterations, min / avg / max, the 4
//! PGS warm-start sweeps included) as published and as reproduced on two random families, the
//! generic drivers on the same min-map residual (with seeded bootstrap intervals), the
//! diagnostic runs behind the explanation of Table 1 ([`DIAGNOSTICS`]), and two plots.
//! Statistics: [`crate::analysis::erleben2008`].
//!
//! The paper's counts judge the Newton driver by its own stopping rule (`solver_status`:
//! `theta <= 1e-6` on the friction-pyramid problem); the exact-cone natural-map ruler of the
//! runner (`status`) is reported beside them.
//!
//! The page's prose and layout are `experiments/configs/erleben2008/templates/report.md`
//! ([`crate::template`]); this module computes its tables, plots and facts. Every fact, with
//! its value, is listed in `reports/erleben2008/facts.md`: per family (`delassus`,
//! `opentissue`, and the diagnostics' `variants`, `more_delassus`), solver and size
//! (`delassus.newton.s192.converged`), over the sizes (`delassus.newton.converged`), and the
//! paper's numbers (`published.s384.converged`).

use std::path::Path;

use contactlab_runs::schema::steps;

use super::builder::{Report, RunData};
use super::findings::{Facts, Fmt};
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use crate::analysis::erleben2008::{size_stats, MinAvgMax, SizeStats};
use crate::analysis::Spread;
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;

/// The configs of the report, in the order of its tables: the main (Delassus) family first.
pub const CONFIGS: [&str; 2] = ["tables_delassus.toml", "tables_opentissue.toml"];

/// The runs behind the explanation of Table 1, each with the key its facts go under: the
/// Newton driver's open choices on the OpenTissue problems, and more Delassus cases.
pub const DIAGNOSTICS: [(&str, &str); 2] = [
    ("variants_opentissue.toml", "variants"),
    ("more_delassus.toml", "more_delassus"),
];

/// The label of the paper's driver in the configs.
pub const NEWTON: &str = "newton";

/// One row of the paper's Tables 1-2.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedRow {
    /// Problem size.
    pub size: i64,
    /// Cases that reached the absolute tolerance.
    pub converged: u64,
    /// Cases that stagnated.
    pub stagnated: u64,
    /// Cases whose back-tracking failed.
    pub backtracking_failed: u64,
    /// Seconds per solve.
    pub seconds: MinAvgMax,
    /// Iterations per solve, the 4 PGS iterations included.
    pub iterations: MinAvgMax,
}

/// The header of `published.csv`.
pub const PUBLISHED_HEADER: [&str; 10] = [
    "size",
    "converged",
    "stagnated",
    "backtracking_failed",
    "seconds_min",
    "seconds_avg",
    "seconds_max",
    "iterations_min",
    "iterations_avg",
    "iterations_max",
];

/// Reads `published.csv` (header [`PUBLISHED_HEADER`]).
pub fn read_published(path: &Path) -> Result<Vec<PublishedRow>, ReportError> {
    read_csv_with_header(path, &PUBLISHED_HEADER)?
        .iter()
        .map(|r| {
            let num = |i: usize| number(path, r, &PUBLISHED_HEADER, i);
            Ok(PublishedRow {
                size: num(0)? as i64,
                converged: num(1)? as u64,
                stagnated: num(2)? as u64,
                backtracking_failed: num(3)? as u64,
                seconds: MinAvgMax {
                    min: num(4)?,
                    avg: num(5)?,
                    max: num(6)?,
                },
                iterations: MinAvgMax {
                    min: num(7)?,
                    avg: num(8)?,
                    max: num(9)?,
                },
            })
        })
        .collect()
}

/// One random family's run: its data and statistics.
#[derive(Debug, Clone)]
pub struct FamilyRun {
    /// The family's name for tables (`Delassus`, `OpenTissue`).
    pub family: String,
    /// The family's key in CSV files and fact names (`delassus`, `opentissue`).
    pub key: String,
    /// The config's run.
    pub run: RunData,
    /// Per (size, solver) statistics.
    pub stats: Vec<SizeStats>,
}

impl FamilyRun {
    /// The statistics of `solver` at `size`.
    pub fn get(&self, solver: &str, size: i64) -> Option<&SizeStats> {
        self.stats
            .iter()
            .find(|s| s.solver == solver && s.size == size)
    }

    /// Solver labels in config order: the driver, then the shadows.
    pub fn solvers(&self) -> Vec<String> {
        let c = &self.run.config;
        c.driver_specs()
            .into_iter()
            .chain(&c.shadow)
            .map(|s| s.name())
            .collect()
    }
}

/// Loads one config's run through the report; a missing file or column is `MissingData`.
pub fn load_family(r: &mut Report, config: &str) -> Result<FamilyRun, ReportError> {
    let run = r.load(config)?;
    let stats = size_stats(&run.steps).map_err(|e| match e {
        crate::analysis::AnalysisError::MissingData(what) => {
            ReportError::MissingData(format!("{} ({what})", run.data_path.display()))
        }
        other => other.into(),
    })?;
    let key = run
        .config
        .scene
        .params
        .get("family")
        .and_then(|v| v.as_str())
        .unwrap_or("delassus")
        .to_string();
    let family = match key.as_str() {
        "opentissue" => "OpenTissue".to_string(),
        "delassus" => "Delassus".to_string(),
        other => other.to_string(),
    };
    Ok(FamilyRun {
        family,
        key,
        run,
        stats,
    })
}

/// Seconds in a short engineering notation (`1.12e-4`), `-` for NaN.
fn sci() -> Fmt {
    Fmt::sci(2)
}

/// The rows of `tables.csv`: per family, size and solver; published values only on the
/// paper's driver.
pub fn tables_csv(
    published: &[PublishedRow],
    families: &[FamilyRun],
) -> Result<Table, ReportError> {
    let mut t = Table::new(Some("tables.csv"));
    for h in TABLES_CSV_HEADER {
        t = t.csv_col(h);
    }
    for f in families {
        for solver in f.solvers() {
            for p in published {
                let Some(s) = f.get(&solver, p.size) else {
                    continue;
                };
                let paper = solver == NEWTON;
                let pub_or = |v: String| C::text(if paper { v } else { String::new() });
                t.row(vec![
                    C::int(p.size),
                    C::text(format!("{}/{}", f.key, solver)),
                    pub_or(p.converged.to_string()),
                    C::int(s.stopped("converged")),
                    pub_or(format!("{:.6}", p.seconds.avg)),
                    C::text(format!("{:.6}", s.seconds.avg)),
                    pub_or(format!("{:.2}", p.iterations.avg)),
                    C::text(format!("{:.2}", s.iterations.avg)),
                ])?;
            }
        }
    }
    Ok(t)
}

/// The columns of `tables.csv`.
pub const TABLES_CSV_HEADER: [&str; 8] = [
    "size",
    "driver",
    "converged_published",
    "converged_reproduced",
    "avg_seconds_published",
    "avg_seconds_reproduced",
    "avg_iterations_published",
    "avg_iterations_reproduced",
];

/// A random family as the templates see it.
#[derive(Debug, Clone, serde::Serialize)]
struct FamilyShown {
    /// `Delassus`, `OpenTissue`.
    name: String,
    /// The key of its facts and files.
    key: String,
    /// Cases per size.
    cases: usize,
    /// Seeds of its sweep.
    seeds: usize,
}

impl FamilyShown {
    fn of(f: &FamilyRun) -> FamilyShown {
        let seeds = f.run.config.sweep.get("seed").map_or(1, Vec::len);
        FamilyShown {
            name: f.family.clone(),
            key: f.key.clone(),
            cases: f.run.config.scene.steps * seeds,
            seeds,
        }
    }
}

/// Writes `reports/erleben2008/` from the run data under `root/data/runs/erleben2008/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "erleben2008")?;
    let published = read_published(&r.config_file("published.csv"))?;
    let families = CONFIGS
        .iter()
        .map(|c| load_family(&mut r, c))
        .collect::<Result<Vec<_>, _>>()?;
    r.show(
        "families",
        families.iter().map(FamilyShown::of).collect::<Vec<_>>(),
    )?;
    r.show(
        "sizes",
        published.iter().map(|p| p.size).collect::<Vec<_>>(),
    )?;
    table1(&mut r, &published, &families)?;
    table2(&mut r, &published, &families)?;
    every_driver(&mut r, &published, &families)?;
    let diagnostics = DIAGNOSTICS
        .iter()
        .map(|(config, key)| {
            let mut run = load_family(&mut r, config)?;
            run.key = (*key).to_string();
            Ok(run)
        })
        .collect::<Result<Vec<_>, ReportError>>()?;
    diagnostics_table(&mut r, &published, &diagnostics)?;
    plots(&mut r, &published, &families)?;
    let facts = r.facts();
    published_facts(facts, &published);
    for f in families.iter().chain(&diagnostics) {
        family_facts(facts, &published, f);
    }
    totals(facts, &families);
    r.finish()?;
    Ok(())
}

/// The whole reproduction's wall time, the Newton driver's solve seconds, and the ruler's
/// `1 + |q|` at the two largest sizes from the OpenTissue generator's `|q| ~ sqrt(n / 3)`
/// (the findings' "Two rulers").
fn totals(facts: &mut Facts, families: &[FamilyRun]) {
    for n in [192u32, 384] {
        facts.num(
            format!("opentissue.ruler_scale.s{n}"),
            1.0 + (f64::from(n) / 3.0).sqrt(),
            Fmt::int(),
        );
    }
    let total_wall: Option<f64> = families.iter().map(|f| f.run.meta.wall_seconds).sum();
    facts.num(
        "wall_total",
        total_wall.unwrap_or(f64::NAN),
        Fmt::fixed(1).unit(" s"),
    );
    let newton_seconds: f64 = families
        .iter()
        .map(|f| {
            f.stats
                .iter()
                .filter(|s| s.solver == NEWTON)
                .map(|s| s.seconds.avg * s.cases as f64)
                .sum::<f64>()
        })
        .sum();
    facts.num(
        "newton_solve_seconds",
        newton_seconds,
        Fmt::fixed(2).unit(" s"),
    );
}

/// A count read from one size's statistics.
type Count = dyn Fn(&SizeStats) -> u64;

/// Table 1: outcomes of the Newton driver per size, paper beside each family.
fn table1(
    r: &mut Report,
    published: &[PublishedRow],
    families: &[FamilyRun],
) -> Result<(), ReportError> {
    let fam_list = families
        .iter()
        .map(|f| f.family.as_str())
        .collect::<Vec<_>>()
        .join(" / ");
    let mut t = Table::new(Some("table1.csv")).col("size", "size");
    let outcomes = [
        ("converged", "converged"),
        ("stagnated", "stagnated"),
        ("back-tracking failed", "backtracking_failed"),
    ];
    for (md, csv) in outcomes {
        t = t.col(md, &format!("{csv}_published"));
        for f in families {
            t = t.col(md, &format!("{csv}_{}", f.key));
        }
    }
    let other = format!("other ({fam_list})");
    let ruler = format!("exact-cone ruler converged ({fam_list})");
    for f in families {
        t = t.col(&other, &format!("other_{}", f.key));
    }
    for f in families {
        t = t.col(&ruler, &format!("ruler_converged_{}", f.key));
    }
    for f in families {
        t = t.col("cases", &format!("cases_{}", f.key));
    }
    for p in published {
        let newton = |f: &FamilyRun, get: &dyn Fn(&SizeStats) -> u64| {
            f.get(NEWTON, p.size)
                .map_or(C::pair("-", ""), |s| C::int(get(s)))
        };
        let mut row = vec![C::int(p.size)];
        let own: [(u64, &Count); 3] = [
            (p.converged, &|s| s.stopped("converged")),
            (p.stagnated, &|s| s.stopped("stagnated")),
            (p.backtracking_failed, &|s| s.stopped("line_search_failed")),
        ];
        for (paper, get) in own {
            row.push(C::int(paper));
            row.extend(families.iter().map(|f| newton(f, get)));
        }
        row.extend(families.iter().map(|f| newton(f, &|s| s.other_stops())));
        row.extend(families.iter().map(|f| newton(f, &|s| s.ruler_converged)));
        row.extend(families.iter().map(|f| newton(f, &|s| s.cases)));
        t.row(row)?;
    }
    r.show_table("table1", &t)
}

/// Table 2: seconds and iterations per family, paper beside ours.
fn table2(
    r: &mut Report,
    published: &[PublishedRow],
    families: &[FamilyRun],
) -> Result<(), ReportError> {
    let mam = |t: Table, md: &str, csv: &str| {
        t.col(md, &format!("{csv}_min"))
            .col(md, &format!("{csv}_avg"))
            .col(md, &format!("{csv}_max"))
    };
    for f in families {
        let mut t = Table::new(Some(&format!("table2_{}.csv", f.key))).col("size", "size");
        t = mam(t, "seconds, paper", "seconds_published");
        t = mam(t, "seconds, ours", "seconds_reproduced");
        t = mam(t, "iterations, paper", "iterations_published");
        t = mam(t, "iterations, ours", "iterations_reproduced");
        t = t
            .col("Newton iterations (avg)", "newton_iterations_avg")
            .col("avg iterations, 95% interval", "iterations_avg_low")
            .col("avg iterations, 95% interval", "iterations_avg_high")
            .csv_col("cases");
        let (it0, it2) = (Fmt::int(), Fmt::fixed(2));
        for p in published {
            let s = f.get(NEWTON, p.size);
            let g = |get: &dyn Fn(&SizeStats) -> f64| s.map_or(f64::NAN, get);
            t.row(vec![
                C::int(p.size),
                C::num(p.seconds.min, &sci(), &Fmt::fixed(6)),
                C::num(p.seconds.avg, &sci(), &Fmt::fixed(6)),
                C::num(p.seconds.max, &sci(), &Fmt::fixed(6)),
                C::num(g(&|s| s.seconds.min), &sci(), &Fmt::sci(4)),
                C::num(g(&|s| s.seconds.avg), &sci(), &Fmt::sci(4)),
                C::num(g(&|s| s.seconds.max), &sci(), &Fmt::sci(4)),
                C::same(p.iterations.min, &it0),
                C::same(p.iterations.avg, &it2),
                C::same(p.iterations.max, &it0),
                C::same(g(&|s| s.iterations.min), &it0),
                C::same(g(&|s| s.iterations.avg), &it2),
                C::same(g(&|s| s.iterations.max), &it0),
                C::same(g(&|s| s.own_iterations_avg), &it2),
                C::same(g(&|s| s.iterations_interval.0), &it2),
                C::same(g(&|s| s.iterations_interval.1), &it2),
                C::same(g(&|s| s.cases as f64), &it0),
            ])?;
        }
        r.show_table(&format!("table2_{}", f.key), &t)?;
    }
    r.show_table("tables", &tables_csv(published, families)?)
}

/// Every driver of both families on the same problems.
fn every_driver(
    r: &mut Report,
    published: &[PublishedRow],
    families: &[FamilyRun],
) -> Result<(), ReportError> {
    for f in families {
        let mut t = Table::new(Some(&format!("drivers_{}.csv", f.key)))
            .col("size", "size")
            .col("driver", "driver")
            .col("converged", "converged")
            .col("converged", "cases")
            .col("95% interval", "converged_low")
            .col("95% interval", "converged_high")
            .col("exact-cone ruler", "ruler_converged")
            .col("other stops", "other_stops")
            .col("avg iterations", "iterations_avg")
            .col("95% interval", "iterations_avg_low")
            .col("95% interval", "iterations_avg_high")
            .col("avg ms", "ms_avg")
            .col("max ms", "ms_max");
        let (f1, f2, f3) = (Fmt::fixed(1), Fmt::fixed(2), Fmt::fixed(3));
        for solver in f.solvers() {
            for p in published {
                let Some(s) = f.get(&solver, p.size) else {
                    continue;
                };
                t.row(vec![
                    C::int(p.size),
                    C::code(solver.clone()),
                    C::int(s.stopped("converged")),
                    C::int(s.cases),
                    C::same(s.converged_interval.0, &f1),
                    C::same(s.converged_interval.1, &f1),
                    C::int(s.ruler_converged),
                    C::text(s.failures()),
                    C::same(s.iterations.avg, &f2),
                    C::same(s.iterations_interval.0, &f2),
                    C::same(s.iterations_interval.1, &f2),
                    C::same(1e3 * s.seconds.avg, &f3),
                    C::same(1e3 * s.seconds.max, &f3),
                ])?;
            }
        }
        r.show_table(&format!("drivers_{}", f.key), &t)?;
    }
    Ok(())
}

/// The runs behind the explanation of Table 1: per run, variant and size, how the Newton
/// driver stopped.
fn diagnostics_table(
    r: &mut Report,
    published: &[PublishedRow],
    runs: &[FamilyRun],
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("diagnostics.csv"))
        .col("run", "run")
        .col("family", "family")
        .col("variant", "variant")
        .col("size", "size")
        .col("cases", "cases")
        .col("converged", "converged")
        .col("stagnated", "stagnated")
        .col("back-tracking failed", "line_search_failed")
        .col("other", "other");
    for f in runs {
        for solver in f.solvers() {
            for p in published {
                let Some(s) = f.get(&solver, p.size) else {
                    continue;
                };
                t.row(vec![
                    C::code(f.run.config.name.clone()),
                    C::text(f.family.clone()),
                    C::code(solver.clone()),
                    C::int(p.size),
                    C::int(s.cases),
                    C::int(s.stopped("converged")),
                    C::int(s.stopped("stagnated")),
                    C::int(s.stopped("line_search_failed")),
                    C::int(s.other_stops()),
                ])?;
            }
        }
    }
    r.show_table("diagnostics", &t)
}

/// Average iterations and seconds against the size, on logarithmic size axes.
fn plots(
    r: &mut Report,
    published: &[PublishedRow],
    families: &[FamilyRun],
) -> Result<(), ReportError> {
    let sizes: Vec<f64> = published.iter().map(|p| p.size as f64).collect();
    let curve = |f: &FamilyRun, solver: &str, get: &dyn Fn(&SizeStats) -> f64| -> Vec<(f64, f64)> {
        published
            .iter()
            .filter_map(|p| f.get(solver, p.size).map(|s| (p.size as f64, get(s))))
            .collect()
    };
    let mut it_series: Vec<Series> = vec![(
        "paper".into(),
        published
            .iter()
            .map(|p| (p.size as f64, p.iterations.avg))
            .collect(),
    )];
    let mut sec_series: Vec<Series> = vec![(
        "paper (2008 laptop)".into(),
        published
            .iter()
            .map(|p| (p.size as f64, p.seconds.avg))
            .collect(),
    )];
    for f in families {
        it_series.push((
            format!("{NEWTON}, {}", f.family),
            curve(f, NEWTON, &|s| s.iterations.avg),
        ));
        sec_series.push((
            format!("{NEWTON}, {}", f.family),
            curve(f, NEWTON, &|s| s.seconds.avg),
        ));
    }
    // Every shadow of the main family (the plots' styles tell up to 20 series apart).
    if let Some(main) = families.first() {
        for solver in main.solvers().into_iter().filter(|s| s != NEWTON) {
            sec_series.push((
                format!("{solver}, {}", main.family),
                curve(main, &solver, &|s| s.seconds.avg),
            ));
        }
    }
    let size_axis = || Axis::log("size (3 x contacts)").ticks(sizes.clone());
    r.show_plot(
        "iterations_vs_size",
        &Chart::new(
            "Newton: iterations per solve, PGS included",
            size_axis(),
            Axis::linear(steps::ITERATIONS),
        )
        .legend_upper_left(),
        &it_series,
    )?;
    r.show_plot(
        "seconds_vs_size",
        &Chart::new(
            "Average seconds per solve",
            size_axis(),
            Axis::log(steps::SECONDS),
        )
        .legend_upper_left(),
        &sec_series,
    )
}

/// The published numbers the findings may quote.
fn published_facts(facts: &mut Facts, published: &[PublishedRow]) {
    for p in published {
        let k = format!("published.s{}", p.size);
        facts
            .num(format!("{k}.converged"), p.converged as f64, Fmt::int())
            .num(format!("{k}.stagnated"), p.stagnated as f64, Fmt::int())
            .num(
                format!("{k}.backtracking_failed"),
                p.backtracking_failed as f64,
                Fmt::int(),
            )
            .num(
                format!("{k}.iterations_avg"),
                p.iterations.avg,
                Fmt::fixed(2),
            )
            .num(
                format!("{k}.seconds_avg_ms"),
                1e3 * p.seconds.avg,
                Fmt::int().unit(" ms"),
            );
    }
    let list = |f: &dyn Fn(&PublishedRow) -> f64| published.iter().map(f).collect::<Vec<_>>();
    facts
        .list(
            "published.converged",
            list(&|p| p.converged as f64),
            Fmt::int(),
        )
        .list(
            "published.backtracking_failed",
            list(&|p| p.backtracking_failed as f64),
            Fmt::int(),
        )
        .list(
            "published.iterations_avg",
            list(&|p| p.iterations.avg),
            Fmt::fixed(2),
        );
    if let (Some(a), Some(b)) = (published.first(), published.last()) {
        facts.num(
            "published.time_growth",
            b.seconds.avg / a.seconds.avg,
            Fmt::int(),
        );
    }
}

/// The facts of one family: per solver and size, and over the sizes.
fn family_facts(facts: &mut Facts, published: &[PublishedRow], f: &FamilyRun) {
    for solver in f.solvers() {
        let stats: Vec<&SizeStats> = published
            .iter()
            .filter_map(|p| f.get(&solver, p.size))
            .collect();
        if stats.is_empty() {
            continue;
        }
        let k = format!("{}.{solver}", f.key);
        for s in &stats {
            size_facts(facts, &k, s, f);
        }
        summary_facts(facts, &k, &stats);
    }
}

/// The facts of one solver at one size of a family (`<family>.<solver>.s<size>.*`): how its
/// solves stopped, their iterations and times, the time against Newton's at that size.
fn size_facts(facts: &mut Facts, k: &str, s: &SizeStats, f: &FamilyRun) {
    let newton_ms = f.get(NEWTON, s.size).map_or(f64::NAN, |n| n.seconds.avg);
    let ks = format!("{k}.s{}", s.size);
    facts
        .num(
            format!("{ks}.converged"),
            s.stopped("converged") as f64,
            Fmt::int(),
        )
        .num(
            format!("{ks}.stagnated"),
            s.stopped("stagnated") as f64,
            Fmt::int(),
        )
        .num(
            format!("{ks}.line_search_failed"),
            s.stopped("line_search_failed") as f64,
            Fmt::int(),
        )
        .num(format!("{ks}.other"), s.other_stops() as f64, Fmt::int())
        .num(format!("{ks}.ruler"), s.ruler_converged as f64, Fmt::int())
        .num(format!("{ks}.cases"), s.cases as f64, Fmt::int())
        .num(
            format!("{ks}.iterations_avg"),
            s.iterations.avg,
            Fmt::fixed(2),
        )
        .num(format!("{ks}.iterations_min"), s.iterations.min, Fmt::int())
        .num(format!("{ks}.iterations_max"), s.iterations.max, Fmt::int())
        .num(
            format!("{ks}.own_iterations_avg"),
            s.own_iterations_avg,
            Fmt::fixed(2),
        )
        .num(
            format!("{ks}.ms_avg"),
            1e3 * s.seconds.avg,
            Fmt::fixed(1).unit(" ms"),
        )
        .num(
            format!("{ks}.ms_max"),
            1e3 * s.seconds.max,
            Fmt::fixed(1).unit(" ms"),
        )
        .num(
            format!("{ks}.ms_vs_newton"),
            s.seconds.avg / newton_ms,
            Fmt::int(),
        );
}

/// The facts of one solver over the sizes of a family (`<family>.<solver>.*`): lists by size,
/// their ranges and totals, and the time's growth from the smallest size to the largest.
fn summary_facts(facts: &mut Facts, k: &str, stats: &[&SizeStats]) {
    let list = |g: &dyn Fn(&SizeStats) -> f64| stats.iter().map(|s| g(s)).collect::<Vec<_>>();
    let range = |v: Vec<f64>| Spread::of(&v).range();
    let converged = list(&|s| s.stopped("converged") as f64);
    let total_seconds: f64 = stats.iter().map(|s| s.seconds.avg * s.cases as f64).sum();
    facts
        .list(format!("{k}.converged"), converged.clone(), Fmt::int())
        .list(
            format!("{k}.ruler"),
            list(&|s| s.ruler_converged as f64),
            Fmt::int(),
        )
        .list(
            format!("{k}.iterations_avg"),
            list(&|s| s.iterations.avg),
            Fmt::fixed(2),
        )
        .list(
            format!("{k}.converged_range"),
            range(converged.clone()),
            Fmt::int(),
        )
        .list(
            format!("{k}.iterations_avg_range"),
            range(list(&|s| s.iterations.avg)),
            Fmt::int(),
        )
        .num(
            format!("{k}.converged_total"),
            converged.iter().sum(),
            Fmt::int(),
        )
        .num(
            format!("{k}.cases_total"),
            stats.iter().map(|s| s.cases as f64).sum(),
            Fmt::int(),
        )
        .num(
            format!("{k}.solve_seconds"),
            total_seconds,
            Fmt::fixed(1).unit(" s"),
        );
    if let (Some(a), Some(b)) = (stats.first(), stats.last()) {
        facts.num(
            format!("{k}.time_growth"),
            b.seconds.avg / a.seconds.avg,
            Fmt::int(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_numbers_parse_and_bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("erleben2008-pub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        std::fs::write(
            &good,
            format!(
                "# comment\n{}\n12,100,0,0,0.000006,0.000112,0.000389,0,5.14,9\n",
                PUBLISHED_HEADER.join(",")
            ),
        )
        .unwrap();
        let rows = read_published(&good).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].size, 12);
        assert_eq!(rows[0].converged, 100);
        assert_eq!(rows[0].iterations.avg, 5.14);
        assert_eq!(rows[0].seconds.max, 0.000389);
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, "size,converged\n12,x\n").unwrap();
        let e = read_published(&bad).unwrap_err().to_string();
        assert!(e.contains("bad.csv") && e.contains("header"), "{e}");
        shipped_page(&dir);
        let e = generate(&dir).unwrap_err().to_string();
        assert!(e.contains("published.csv"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Copies the shipped page title and citation (`templates/paper.toml`) under `root`.
    fn shipped_page(root: &Path) {
        let page = Path::new("experiments/configs/erleben2008/templates/paper.toml");
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(page);
        std::fs::create_dir_all(root.join(page).parent().unwrap()).unwrap();
        std::fs::copy(shipped, root.join(page)).unwrap();
    }

    #[test]
    fn a_root_without_run_data_is_missing_data() {
        let root = std::env::temp_dir().join(format!("erleben2008-root-{}", std::process::id()));
        let cfg = root.join("experiments/configs/erleben2008");
        shipped_page(&root);
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/erleben2008");
        for f in CONFIGS.iter().copied().chain(["published.csv"]) {
            std::fs::copy(shipped.join(f), cfg.join(f)).unwrap();
        }
        let e = generate(&root).unwrap_err();
        assert!(
            matches!(&e, ReportError::MissingData(p) if p.contains("tables_delassus.parquet")),
            "{e}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_shipped_published_file_has_the_papers_six_sizes() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/erleben2008/published.csv");
        let rows = read_published(&path).unwrap();
        let sizes: Vec<i64> = rows.iter().map(|r| r.size).collect();
        assert_eq!(sizes, [12, 24, 48, 96, 192, 384]);
        let last = &rows[5];
        assert_eq!(
            (last.converged, last.stagnated, last.backtracking_failed),
            (70, 0, 30)
        );
        assert_eq!(last.iterations.avg, 16.37);
        assert!(rows
            .iter()
            .all(|r| r.converged + r.stagnated + r.backtracking_failed == 100));
    }
}
