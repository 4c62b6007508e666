//! The cross-paper matrix's report (`reports/matrix/`): success rate and median time of every
//! (formulation, driver) pair on every problem set, Dolan-More performance profiles of time and
//! iterations, and the anchors of Acary, Bremond and Huber's FCLib study (solved fractions at
//! their error measure) and of Siconos' own test expectations.
//!
//! Facts: `matrix.{problems, pairs, rows, refusals}`, `<set>.problems`,
//! `<set>.<formulation>+<optimizer>.{solved, solved_coulomb, fraction}`,
//! `<set>.best_pair`, `<set>.best_fraction`, `siconos_ci.<pair>.passed`,
//! `fclib.<FCLib set>.<pair>.{solved, files, published, limit_seconds}` and, from the run at the
//! FCLib study's time limit (`capsules_long.toml`), `capsules_long.{problems, solved,
//! time_limit, tol, error_min, error_max, iterations_min, iterations_max, seconds_solved_max}`.

use contactlab_runs::RunConfig;
use std::collections::BTreeMap;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use super::{number, read_csv_with_header, ReportError};
use crate::analysis::{f64s, quantile, strs};
use contactlab_runs::matrix::MatrixConfig;

/// The matrix config the report reads.
pub const CONFIG: &str = "matrix.toml";

/// The run of a few pairs at the FCLib study's own time limit (`capsules_long.toml`).
pub const LONG: &str = "capsules_long.toml";

/// Pairs drawn in a performance profile (the most robust ones; a profile of 36 curves is
/// unreadable).
const PROFILE_PAIRS: usize = 8;

/// One solve, as the report reads it back.
#[derive(Debug, Clone)]
struct Solve {
    set: String,
    problem: String,
    n_c: f64,
    pair: String,
    model: String,
    solved: bool,
    solved_coulomb: bool,
    refused: bool,
    seconds: f64,
    iterations: f64,
    error_siconos: f64,
    tol: f64,
}

fn read_solves(df: &polars::prelude::DataFrame) -> Result<Vec<Solve>, ReportError> {
    let (set, problem, f, o, model, status) = (
        strs(df, "problem_set")?,
        strs(df, "problem")?,
        strs(df, "formulation")?,
        strs(df, "optimizer")?,
        strs(df, "model")?,
        strs(df, "status")?,
    );
    let (n_c, solved, coulomb, seconds, iterations, err, tol) = (
        f64s(df, "n_c")?,
        f64s(df, "solved")?,
        f64s(df, "solved_coulomb")?,
        f64s(df, "seconds")?,
        f64s(df, "iterations")?,
        f64s(df, "error_siconos")?,
        f64s(df, "tol")?,
    );
    Ok((0..df.height())
        .map(|i| Solve {
            set: set[i].clone(),
            problem: problem[i].clone(),
            n_c: n_c[i],
            pair: format!("{}+{}", f[i], o[i]),
            model: model[i].clone(),
            solved: solved[i] == 1.0,
            solved_coulomb: coulomb[i] == 1.0,
            refused: status[i] == "error",
            seconds: seconds[i],
            iterations: iterations[i],
            error_siconos: err[i],
            tol: tol[i],
        })
        .collect())
}

/// Per (set, pair): what the pairs table and pairs.csv say.
#[derive(Debug, Clone, Default)]
struct PairStats {
    model: String,
    problems: usize,
    solved: usize,
    solved_coulomb: usize,
    refused: usize,
    seconds: Vec<f64>,
    iterations: Vec<f64>,
}

impl PairStats {
    fn fraction(&self) -> f64 {
        self.solved as f64 / self.problems.max(1) as f64
    }
    fn median_seconds(&self) -> f64 {
        quantile(&self.seconds, 0.5)
    }
}

/// The order of robustness: the larger solved fraction first, then the smaller median time.
fn more_robust_first(a: &PairStats, b: &PairStats) -> std::cmp::Ordering {
    b.fraction()
        .total_cmp(&a.fraction())
        .then(a.median_seconds().total_cmp(&b.median_seconds()))
}

/// Dolan and More's profile of `costs[pair][problem]` (`NaN` where unsolved):
/// `rho_s(tau) = |{p : t_ps <= tau min_s t_ps}| / n_p`, as a step curve over `tau` in
/// `[1, tau_max]`.
pub fn performance_profile(costs: &[Vec<f64>], tau_max: f64) -> Vec<Vec<(f64, f64)>> {
    let n_p = costs.first().map_or(0, Vec::len);
    let best: Vec<f64> = (0..n_p)
        .map(|p| {
            costs
                .iter()
                .map(|c| c[p])
                .filter(|t| t.is_finite())
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    costs
        .iter()
        .map(|c| {
            let mut ratios: Vec<f64> = (0..n_p)
                .filter(|&p| c[p].is_finite() && best[p].is_finite())
                // A zero cost (no iteration needed) ties with the best.
                .map(|p| {
                    if best[p] > 0.0 {
                        c[p] / best[p]
                    } else if c[p] > 0.0 {
                        f64::INFINITY
                    } else {
                        1.0
                    }
                })
                .filter(|r| *r <= tau_max)
                .collect();
            ratios.sort_by(f64::total_cmp);
            let mut pts = vec![(1.0, 0.0)];
            for (k, r) in ratios.iter().enumerate() {
                let before = k as f64 / n_p.max(1) as f64;
                let after = (k + 1) as f64 / n_p.max(1) as f64;
                pts.push((r.max(1.0), before));
                pts.push((r.max(1.0), after));
            }
            let last = ratios.len() as f64 / n_p.max(1) as f64;
            pts.push((tau_max, last));
            pts
        })
        .collect()
}

/// Writes `reports/matrix/` from the matrix run.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "matrix",
        "The cross-paper matrix: every formulation against every driver",
        "V. Acary, M. Bremond and O. Huber, *On solving contact problems with Coulomb friction: \
         formulations and numerical comparisons*, in Advanced Topics in Nonsmooth Dynamics, \
         Springer 2018 (the error measure, the profiles and the published fractions), and the \
         five papers this project reproduces.",
    );
    let cfg_path = r.config_file(CONFIG);
    let cfg = MatrixConfig::load(&cfg_path).map_err(|e| ReportError::Published(e.to_string()))?;
    let (df, _meta) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let solves = read_solves(&df)?;
    // The pairs as the run wrote them: every problem's rows list the pairs in the registry's
    // order, so the first appearances keep it.
    let mut pairs: Vec<String> = Vec::new();
    for s in &solves {
        if !pairs.contains(&s.pair) {
            pairs.push(s.pair.clone());
        }
    }
    let sets: Vec<String> = cfg.sets.iter().map(|s| s.name.clone()).collect();

    let mut stats: BTreeMap<(String, String), PairStats> = BTreeMap::new();
    for s in &solves {
        let e = stats.entry((s.set.clone(), s.pair.clone())).or_default();
        e.model = s.model.clone();
        e.problems += 1;
        e.solved += usize::from(s.solved);
        e.solved_coulomb += usize::from(s.solved_coulomb);
        e.refused += usize::from(s.refused);
        if s.solved {
            e.seconds.push(s.seconds);
            e.iterations.push(s.iterations);
        }
    }

    let n_problems: usize = sets.iter().map(|s| problems_of(&solves, s).len()).sum();
    let refusals = solves.iter().filter(|s| s.refused).count();
    r.facts()
        .num("matrix.problems", n_problems as f64, Fmt::int())
        .num("matrix.pairs", pairs.len() as f64, Fmt::int())
        .num("matrix.rows", solves.len() as f64, Fmt::int())
        .num("matrix.refusals", refusals as f64, Fmt::int())
        .num(
            "matrix.time_limit",
            cfg.time_limit,
            Fmt::fixed(1).unit(" s"),
        )
        .num("matrix.max_iter", cfg.max_iter as f64, Fmt::int());

    r.text(&format!(
        "Every compatible (formulation, driver) pair of the registry ({} pairs) on {} problems \
         in {} sets, each solve with the same budget: {} s and {} iterations. A solve is \
         **solved** when its own model's test passes: the shared Coulomb ruler for formulations \
         of the rigid cone (FCLib's relative error `|F_nat(r)|_2 / |q|_2` at most the set's \
         tolerance, Acary et al.'s measure), the driver's own convergence for the friction \
         pyramid (`min-map`, `mlcp-fb`), SAP's regularised model and Hwangbo's maximum \
         dissipation, whose answers the rigid ruler does not measure as solutions. \
         **Coulomb-solved** applies the rigid ruler to every pair: where a model differs from \
         the rigid cone, a miss there is the model's distance from Coulomb's law, not a \
         failure of the solver. Times are per solve (the ruler excluded), release build, \
         problems spread over the run's threads. Iterations are each driver's own (a PGS sweep, \
         a Newton step), so iteration profiles compare drivers of one kind best.",
        pairs.len(),
        n_problems,
        sets.len(),
        cfg.time_limit,
        cfg.max_iter
    ));

    sets_table(&mut r, &cfg, &sets, &solves)?;
    overview_table(&mut r, &sets, &pairs, &stats)?;
    pairs_csv(&mut r, &sets, &pairs, &stats)?;
    profiles(&mut r, &sets, &pairs, &stats, &solves)?;
    fclib_anchor(&mut r, &solves)?;
    siconos_ci(&mut r, &pairs, &solves)?;
    if r.config_file(LONG).exists() {
        long_limit(&mut r, root)?;
    }
    r.finish()?;
    Ok(())
}

/// One solve per problem of `set` (the first pair's), in order.
fn problems_of<'a>(solves: &'a [Solve], set: &str) -> Vec<&'a Solve> {
    let mut seen: Vec<&Solve> = Vec::new();
    for s in solves.iter().filter(|s| s.set == set) {
        if !seen.iter().any(|p| p.problem == s.problem) {
            seen.push(s);
        }
    }
    seen
}

fn sets_table(
    r: &mut Report,
    cfg: &MatrixConfig,
    sets: &[String],
    solves: &[Solve],
) -> Result<(), ReportError> {
    r.heading(2, "Problem sets");
    let mut t = Table::new(Some("sets.csv"))
        .col("set", "problem_set")
        .col("problems", "problems")
        .col("contacts", "contacts")
        .col("tolerance", "tol")
        .md_col("what");
    for (i, set) in sets.iter().enumerate() {
        let ps = problems_of(solves, set);
        let nc: Vec<f64> = ps.iter().map(|p| p.n_c).collect();
        let (lo, hi) = (
            nc.iter().copied().fold(f64::INFINITY, f64::min),
            nc.iter().copied().fold(0.0, f64::max),
        );
        r.facts()
            .num(format!("{set}.problems"), ps.len() as f64, Fmt::int());
        t.row(vec![
            C::code(set.clone()),
            C::int(ps.len() as u64),
            C::text(if ps.is_empty() {
                "-".into()
            } else {
                format!("{lo}-{hi}")
            }),
            C::same(cfg.set_tol(i), &Fmt::sci(0)),
            C::text(cfg.sets[i].description.clone()),
        ])?;
    }
    r.table(&t)
}

fn overview_table(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
) -> Result<(), ReportError> {
    r.heading(2, "Every pair on every set");
    r.text(
        "Each cell: solved / problems (by the pair's own model), then the median time of the \
         solved ones in ms; `c` marks how many the rigid Coulomb ruler accepts when it differs. \
         Per set, the full numbers are in `pairs.csv`.",
    );
    let mut header: Vec<String> = vec!["pair".into(), "model".into()];
    header.extend(sets.iter().map(|s| format!("`{s}`")));
    let mut rows = Vec::new();
    for pair in pairs {
        let mut row = vec![format!("`{pair}`")];
        let mut model = String::new();
        for set in sets {
            let Some(s) = stats.get(&(set.clone(), pair.clone())) else {
                row.push("-".into());
                continue;
            };
            model = s.model.clone();
            let mut cell = format!("{}/{}", s.solved, s.problems);
            if s.solved_coulomb != s.solved {
                cell += &format!(" (c {})", s.solved_coulomb);
            }
            if s.solved > 0 {
                cell += &format!(" · {:.3}", 1e3 * s.median_seconds());
            }
            row.push(cell);
        }
        row.insert(1, model);
        rows.push(row);
    }
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    r.text(&super::markdown_table(&header_refs, &rows));
    for set in sets {
        let best = pairs
            .iter()
            .filter_map(|p| stats.get(&(set.clone(), p.clone())).map(|s| (p, s)))
            .max_by(|a, b| more_robust_first(b.1, a.1));
        if let Some((p, s)) = best {
            r.facts().text(format!("{set}.best_pair"), p.clone()).num(
                format!("{set}.best_fraction"),
                100.0 * s.fraction(),
                Fmt::percent(0),
            );
        }
        for p in pairs {
            if let Some(s) = stats.get(&(set.clone(), p.clone())) {
                r.facts()
                    .num(format!("{set}.{p}.solved"), s.solved as f64, Fmt::int())
                    .num(
                        format!("{set}.{p}.solved_coulomb"),
                        s.solved_coulomb as f64,
                        Fmt::int(),
                    )
                    .num(
                        format!("{set}.{p}.fraction"),
                        100.0 * s.fraction(),
                        Fmt::percent(0),
                    );
            }
        }
    }
    Ok(())
}

fn pairs_csv(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("pairs.csv"))
        .csv_col("problem_set")
        .csv_col("formulation")
        .csv_col("optimizer")
        .csv_col("model")
        .csv_col("problems")
        .csv_col("solved")
        .csv_col("median_seconds")
        .csv_col("median_iterations")
        .csv_col("solved_coulomb")
        .csv_col("refused");
    for set in sets {
        for p in pairs {
            let Some(s) = stats.get(&(set.clone(), p.clone())) else {
                continue;
            };
            let (f, o) = p.split_once('+').unwrap_or((p.as_str(), ""));
            t.row(vec![
                C::text(set.clone()),
                C::text(f),
                C::text(o),
                C::text(s.model.clone()),
                C::int(s.problems as u64),
                C::int(s.solved as u64),
                C::same(s.median_seconds(), &Fmt::sci(3)),
                C::same(quantile(&s.iterations, 0.5), &Fmt::fixed(1)),
                C::int(s.solved_coulomb as u64),
                C::int(s.refused as u64),
            ])?;
        }
    }
    r.table(&t)
}

fn profiles(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
    solves: &[Solve],
) -> Result<(), ReportError> {
    r.heading(2, "Performance profiles");
    r.text(&format!(
        "Dolan and More's profiles as the FCLib study draws them: for each problem, a pair's \
         cost over the best pair's cost on that problem; `rho(tau)` is the share of the set's \
         problems a pair solves within `tau` times the best. Unsolved problems never count. \
         Drawn per set for the {PROFILE_PAIRS} pairs that solve the most of it (ties by median \
         time); every pair's numbers are in `pairs.csv`."
    ));
    for set in sets {
        let problems: Vec<String> = problems_of(solves, set)
            .iter()
            .map(|s| s.problem.clone())
            .collect();
        let mut ranked: Vec<&String> = pairs
            .iter()
            .filter(|p| {
                stats
                    .get(&(set.clone(), (*p).clone()))
                    .is_some_and(|s| s.solved > 0)
            })
            .collect();
        ranked.sort_by(|a, b| {
            more_robust_first(
                &stats[&(set.clone(), (*a).clone())],
                &stats[&(set.clone(), (*b).clone())],
            )
        });
        ranked.truncate(PROFILE_PAIRS);
        if ranked.is_empty() {
            continue;
        }
        for (what, cost) in [("time", 0usize), ("iterations", 1)] {
            let costs: Vec<Vec<f64>> = ranked
                .iter()
                .map(|p| {
                    problems
                        .iter()
                        .map(|prob| {
                            solves
                                .iter()
                                .find(|s| &s.set == set && &s.problem == prob && &s.pair == *p)
                                .filter(|s| s.solved)
                                .map_or(
                                    f64::NAN,
                                    |s| if cost == 0 { s.seconds } else { s.iterations },
                                )
                        })
                        .collect()
                })
                .collect();
            let tau_max = 100.0;
            let curves = performance_profile(&costs, tau_max);
            let series: Vec<Series> = ranked
                .iter()
                .zip(curves)
                .map(|(p, c)| ((*p).clone(), c))
                .collect();
            let chart = Chart::new(
                &format!("{set}: performance profile of {what}"),
                Axis::log("tau (cost / best cost)"),
                Axis::linear("share of problems solved within tau")
                    .ticks(vec![0.0, 0.25, 0.5, 0.75, 1.0]),
            )
            .lines_only();
            r.plot(
                &format!("profile_{what}_{set}.svg"),
                &format!("{set}: performance profile of {what}"),
                &chart,
                &series,
            )?;
        }
    }
    Ok(())
}

/// The published fractions (lower bounds read off the FCLib study's profiles).
const FCLIB_PUBLISHED: &str = "fclib_published.csv";

fn fclib_anchor(r: &mut Report, solves: &[Solve]) -> Result<(), ReportError> {
    let path = r.config_file(FCLIB_PUBLISHED);
    let want = [
        "fclib_set",
        "file_prefix",
        "tol",
        "limit_seconds",
        "siconos_solver",
        "fraction_published",
        "formulation",
        "optimizer",
        "note",
    ];
    let rows = read_csv_with_header(&path, &want)?;
    r.heading(2, "Beside the FCLib study");
    r.text(
        "Acary, Bremond and Huber solved whole FCLib sets with Siconos; their solved fractions \
         below are lower bounds read off their performance profiles (`../shared` digest, \
         `experiments/configs/matrix/fclib_published.csv`), at their time limits of 50-200 s \
         per problem, where ours is the matrix's limit. We have only a few files of each set \
         (named by the file prefix), so a fraction here is a handful of problems, not a set. \
         The counterpart is the Siconos solver closest to ours; `note` says where they differ.",
    );
    let mut t = Table::new(Some("fclib_anchor.csv"))
        .col("FCLib set", "fclib_set")
        .col("files here", "files")
        .col("tol", "tol")
        .col("our pair", "pair")
        .col("ours solved", "solved")
        .col("Siconos solver", "siconos_solver")
        .col("published (at least)", "fraction_published")
        .col("note", "note");
    for row in rows {
        let tol: f64 = row[2]
            .parse()
            .map_err(|_| ReportError::Published(format!("{}: tol `{}`", path.display(), row[2])))?;
        let published: f64 = row[5].parse().map_err(|_| {
            ReportError::Published(format!("{}: fraction `{}`", path.display(), row[5]))
        })?;
        let pair = format!("{}+{}", row[6], row[7]);
        let mine: Vec<&Solve> = solves
            .iter()
            .filter(|s| {
                s.problem.starts_with(&row[1])
                    && s.pair == pair
                    && (s.tol - tol).abs() <= 1e-12 * tol
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        let solved = mine.iter().filter(|s| s.solved_coulomb).count();
        let key = format!("fclib.{}.{}", row[0], pair);
        r.facts()
            .num(format!("{key}.solved"), solved as f64, Fmt::int())
            .num(format!("{key}.files"), mine.len() as f64, Fmt::int())
            .num(
                format!("{key}.published"),
                100.0 * published,
                Fmt::percent(0),
            )
            .num(
                format!("{key}.limit_seconds"),
                number(&path, &row, &want, 3)?,
                Fmt::int().unit(" s"),
            );
        t.row(vec![
            C::text(row[0].clone()),
            C::int(mine.len() as u64),
            C::same(tol, &Fmt::sci(0)),
            C::code(pair),
            C::text(format!("{solved}/{}", mine.len())),
            C::text(row[4].clone()),
            C::same(published, &Fmt::fixed(2)),
            C::text(row[8].clone()),
        ])?;
    }
    r.table(&t)
}

/// The pairs of [`LONG`] at the study's limit, problem by problem, beside their rows of the
/// matrix at its own limit: whether the matrix's half second is why they fail.
fn long_limit(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let cfg = MatrixConfig::load(&r.config_file(LONG))
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let solves = read_solves(&df)?;
    let errors = f64s(&df, "error_fclib")?;
    r.heading(2, "At the FCLib study's time limit");
    r.text(&format!(
        "`{LONG}`: {} on the same problems at {} s per solve and {} iterations (the study's \
         budget for the set; `maxiter = 1e6` there, so its time limit binds), tolerance {:e} \
         on FCLib's error. Also in `{}.csv`.",
        cfg.only
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
        cfg.time_limit,
        cfg.max_iter,
        cfg.tol,
        cfg.name
    ));
    let mut t = Table::new(Some(&format!("{}.csv", cfg.name)))
        .col("problem", "problem")
        .col("contacts", "n_c")
        .col("pair", "pair")
        .col("status", "status")
        .col("iterations", "iterations")
        .col("seconds", "seconds")
        .col("FCLib error", "error_fclib");
    for (s, e) in solves.iter().zip(&errors) {
        t.row(vec![
            C::text(s.problem.clone()),
            C::int(s.n_c as u64),
            C::code(s.pair.clone()),
            C::text(if s.solved { "solved" } else { "not solved" }),
            C::int(s.iterations as u64),
            C::same(s.seconds, &Fmt::fixed(2)),
            C::same(*e, &Fmt::sci(1)),
        ])?;
    }
    r.table(&t)?;
    let n = &cfg.name;
    let finite: Vec<f64> = errors.iter().copied().filter(|e| e.is_finite()).collect();
    let solved: Vec<&Solve> = solves.iter().filter(|s| s.solved).collect();
    let fmin = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::min);
    let fmax = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::max);
    let iterations: Vec<f64> = solves.iter().map(|s| s.iterations).collect();
    let seconds: Vec<f64> = solved.iter().map(|s| s.seconds).collect();
    r.facts()
        .num(format!("{n}.problems"), solves.len() as f64, Fmt::int())
        .num(format!("{n}.solved"), solved.len() as f64, Fmt::int())
        .num(
            format!("{n}.time_limit"),
            cfg.time_limit,
            Fmt::int().unit(" s"),
        )
        .num(format!("{n}.tol"), cfg.tol, Fmt::sci(0))
        .num(format!("{n}.error_min"), fmin(&finite), Fmt::sci(1))
        .num(format!("{n}.error_max"), fmax(&finite), Fmt::sci(1))
        .num(format!("{n}.iterations_min"), fmin(&iterations), Fmt::int())
        .num(format!("{n}.iterations_max"), fmax(&iterations), Fmt::int())
        .num(
            format!("{n}.seconds_solved_max"),
            fmax(&seconds),
            Fmt::fixed(1).unit(" s"),
        );
    Ok(())
}

/// Siconos' CI expectation on its test files: NSGS variants, Alart-Curnier Newton and ADMM
/// pass every `data_collection_1` file at 1e-5 on Siconos' error.
fn siconos_ci(r: &mut Report, pairs: &[String], solves: &[Solve]) -> Result<(), ReportError> {
    let set = "siconos_ci";
    let ci: Vec<&Solve> = solves.iter().filter(|s| s.set == set).collect();
    if ci.is_empty() {
        return Ok(());
    }
    r.heading(2, "Siconos' own test expectations");
    r.text(
        "Siconos' CI (`numerics_tests.cmake`) expects its NSGS variants, the Alart-Curnier \
         Newton and ADMM to pass every file of this set at 1e-5 on Siconos' error \
         `|F_nat| / max(|q|, |r|, |u|)` (with up to 10,000 iterations; here the matrix's budget). \
         Each pair below, by that error; our closest counterparts are `coulomb+pgs` (NSGS with \
         a projected fixed-point local solve) and the natural-map drivers (Newton-type on the \
         natural map, where Siconos' CI runs Alart-Curnier's). A pair whose model is not the rigid \
         cone (a friction pyramid, SAP's regularisation, maximum dissipation) solves another \
         problem: where contacts slide, its answer misses Coulomb's law by the models' \
         difference, so its count here measures the model, not the solver.",
    );
    let mut t = Table::new(Some("siconos_ci.csv"))
        .col("pair", "pair")
        .col("model", "model")
        .col("passed", "passed")
        .col("files", "files")
        .col("failed files (first 4)", "failed");
    for p in pairs {
        let mine: Vec<&&Solve> = ci.iter().filter(|s| &s.pair == p).collect();
        if mine.is_empty() {
            continue;
        }
        let pass = |s: &Solve| s.error_siconos <= s.tol;
        let failed: Vec<String> = mine
            .iter()
            .filter(|s| !pass(s))
            .map(|s| s.problem.clone())
            .collect();
        let passed = mine.len() - failed.len();
        r.facts()
            .num(format!("{set}.{p}.passed"), passed as f64, Fmt::int());
        t.row(vec![
            C::code(p.clone()),
            C::text(mine[0].model.clone()),
            C::int(passed as u64),
            C::int(mine.len() as u64),
            C::text(failed.iter().take(4).cloned().collect::<Vec<_>>().join(" ")),
        ])?;
    }
    r.table(&t)
}

#[cfg(test)]
mod tests {
    use super::performance_profile;

    #[test]
    fn a_profile_counts_problems_within_tau_of_the_best() {
        // Pair 0 is best on problem 0, pair 1 on problem 1 (twice as fast), pair 1 fails on 2.
        let costs = vec![vec![1.0, 2.0, 3.0], vec![2.0, 1.0, f64::NAN]];
        let c = performance_profile(&costs, 10.0);
        let at = |curve: &Vec<(f64, f64)>, tau: f64| {
            curve
                .iter()
                .filter(|(t, _)| *t <= tau)
                .map(|p| p.1)
                .fold(0.0, f64::max)
        };
        // rho_0(1) = 2/3 (problems 0 and 2), rho_0(2) = 1; rho_1(1) = 1/3, rho_1(2) = 2/3.
        assert!((at(&c[0], 1.0) - 2.0 / 3.0).abs() < 1e-12);
        assert!((at(&c[0], 2.0) - 1.0).abs() < 1e-12);
        assert!((at(&c[1], 1.0) - 1.0 / 3.0).abs() < 1e-12);
        assert!((at(&c[1], 9.0) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(c[1].last().unwrap(), &(10.0, 2.0 / 3.0));
    }
}
