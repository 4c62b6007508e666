//! The cross-paper matrix's report (`reports/matrix/`): success rate and median time of every
//! (formulation, driver) pair on every problem set, Dolan-More performance profiles of time and
//! iterations, and the anchors of Acary, Bremond and Huber's FCLib study (solved fractions at
//! their error measure) and of Siconos' own test expectations.
//!
//! The page's prose and layout are `experiments/configs/matrix/templates/report.md` and the
//! sections it includes ([`crate::template`]); this module computes its tables, plots and facts.
//! Every fact, with its value, is listed in `reports/matrix/facts.md`.

use contactlab_runs::RunConfig;
use std::collections::BTreeMap;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use crate::analysis::{f64s, quantile, strs};
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;
use contactlab_runs::matrix::MatrixConfig;
use contactlab_runs::schema::matrix;

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
    /// The first kind the pair does not take, when it refused the problem for it.
    refused_kind: String,
    /// The answer's relative distance from the reference's impulses (`NaN` without one).
    distance_r: f64,
    /// The answer's relative distance from the reference's velocities.
    distance_u: f64,
}

/// A number column, `NaN` everywhere when the frame lacks it (a run from before the column).
fn f64s_or_nan(df: &polars::prelude::DataFrame, name: &str) -> Result<Vec<f64>, ReportError> {
    if df.column(name).is_ok() {
        Ok(f64s(df, name)?)
    } else {
        Ok(vec![f64::NAN; df.height()])
    }
}

/// A text column, empty everywhere when the frame lacks it.
fn strs_or_empty(df: &polars::prelude::DataFrame, name: &str) -> Result<Vec<String>, ReportError> {
    if df.column(name).is_ok() {
        Ok(strs(df, name)?)
    } else {
        Ok(vec![String::new(); df.height()])
    }
}

/// The solves of a matrix run's frame.
fn read_solves(df: &polars::prelude::DataFrame) -> Result<Vec<Solve>, ReportError> {
    let (set, problem, f, o, model, status) = (
        strs(df, matrix::PROBLEM_SET)?,
        strs(df, matrix::PROBLEM)?,
        strs(df, matrix::FORMULATION)?,
        strs(df, matrix::OPTIMIZER)?,
        strs(df, matrix::MODEL)?,
        strs(df, matrix::STATUS)?,
    );
    let (n_c, solved, coulomb, seconds, iterations, err, tol) = (
        f64s(df, matrix::N_C)?,
        f64s(df, matrix::SOLVED)?,
        f64s(df, matrix::SOLVED_COULOMB)?,
        f64s(df, matrix::SECONDS)?,
        f64s(df, matrix::ITERATIONS)?,
        f64s(df, matrix::ERROR_SICONOS)?,
        f64s(df, matrix::TOL)?,
    );
    let (kind, dr, du) = (
        strs_or_empty(df, matrix::REFUSED_KIND)?,
        f64s_or_nan(df, matrix::REFERENCE_DISTANCE)?,
        f64s_or_nan(df, matrix::REFERENCE_DISTANCE_U)?,
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
            refused_kind: kind[i].clone(),
            distance_r: dr[i],
            distance_u: du[i],
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
    /// The share of the problems solved.
    fn fraction(&self) -> f64 {
        self.solved as f64 / self.problems.max(1) as f64
    }
    /// The median seconds of the solved ones.
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

/// Which conditional sections the page has, as the templates see them.
#[derive(Debug, serde::Serialize)]
struct Sections {
    /// The sets, in the config's order, of which some pair solves a problem (each has a
    /// `<set>.best_pair`).
    best: Vec<String>,
    /// Whether the matrix ran the `siconos_ci` set.
    siconos_ci: bool,
    /// The run at the FCLib study's time limit, when it is configured.
    long: Option<LongRun>,
    /// The sets with another engine's answers (`reference` in the config), in config order.
    reference: Vec<ReferenceSet>,
}

/// A set with another engine's answers, as its section names it.
#[derive(Debug, serde::Serialize)]
struct ReferenceSet {
    /// The set.
    set: String,
    /// The folder of the answers.
    dir: String,
    /// The table's name (`tables.reference_<set>`).
    table: String,
    /// Whether some pair answered every problem (the set then has a `closest_pair` fact).
    closest: bool,
    /// Whether some answer has a distance (the set then has a `farthest_problem` fact).
    farthest: bool,
}

/// The run of [`LONG`], as its section names it.
#[derive(Debug, serde::Serialize)]
struct LongRun {
    /// Its config file.
    file: &'static str,
    /// Its name (the CSV's and the facts').
    name: String,
    /// The pairs it runs.
    pairs: Vec<String>,
}

/// A performance profile's plot, as the templates see it.
#[derive(Debug, serde::Serialize)]
struct Profile {
    /// The problem set.
    set: String,
    /// `time` or `iterations`.
    what: &'static str,
    /// The plot's name.
    plot: String,
}

/// Writes `reports/matrix/` from the matrix run.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "matrix")?;
    let cfg_path = r.config_file(CONFIG);
    let cfg = MatrixConfig::load(&cfg_path).map_err(|e| ReportError::Published(e.to_string()))?;
    let (df, _meta) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let solves = read_solves(&df)?;
    let pairs = pairs_of(&solves);
    let sets: Vec<String> = cfg.sets.iter().map(|s| s.name.clone()).collect();
    let stats = pair_stats(&solves);
    matrix_facts(&mut r, &cfg, &sets, &pairs, &solves);
    sets_table(&mut r, &cfg, &sets, &solves)?;
    overview_table(&mut r, &sets, &pairs, &stats)?;
    pair_facts(&mut r, &sets, &pairs, &stats);
    pairs_csv(&mut r, &sets, &pairs, &stats)?;
    profiles(&mut r, &sets, &pairs, &stats, &solves)?;
    fclib_anchor(&mut r, &solves)?;
    let siconos_ci = siconos_ci(&mut r, &pairs, &solves)?;
    let long = if r.config_file(LONG).exists() {
        Some(long_limit(&mut r, root)?)
    } else {
        None
    };
    let best = sets
        .iter()
        .filter(|s| r.facts_ref().get(&format!("{s}.best_pair")).is_some())
        .cloned()
        .collect();
    let reference = reference_sets(&mut r, &cfg, &pairs, &solves)?;
    r.show(
        "sections",
        Sections {
            best,
            siconos_ci,
            long,
            reference,
        },
    )?;
    r.finish()?;
    Ok(())
}

/// The pairs as the run wrote them: every problem's rows list the pairs in the registry's
/// order, so the first appearances keep it.
fn pairs_of(solves: &[Solve]) -> Vec<String> {
    let mut pairs: Vec<String> = Vec::new();
    for s in solves {
        if !pairs.contains(&s.pair) {
            pairs.push(s.pair.clone());
        }
    }
    pairs
}

/// The statistics per (set, pair).
fn pair_stats(solves: &[Solve]) -> BTreeMap<(String, String), PairStats> {
    let mut stats: BTreeMap<(String, String), PairStats> = BTreeMap::new();
    for s in solves {
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
    stats
}

/// The whole matrix's facts: problems, pairs, rows, refusals and the budget.
fn matrix_facts(
    r: &mut Report,
    cfg: &MatrixConfig,
    sets: &[String],
    pairs: &[String],
    solves: &[Solve],
) {
    let n_problems: usize = sets.iter().map(|s| problems_of(solves, s).len()).sum();
    let refusals = solves.iter().filter(|s| s.refused).count();
    r.facts()
        .num("matrix.problems", n_problems as f64, Fmt::int())
        .num("matrix.pairs", pairs.len() as f64, Fmt::int())
        .num("matrix.sets", sets.len() as f64, Fmt::int())
        .num("matrix.rows", solves.len() as f64, Fmt::int())
        .num("matrix.refusals", refusals as f64, Fmt::int())
        .num(
            "matrix.time_limit",
            cfg.time_limit,
            Fmt::fixed(1).unit(" s"),
        )
        .num("matrix.max_iter", cfg.max_iter as f64, Fmt::int())
        .num("matrix.profile_pairs", PROFILE_PAIRS as f64, Fmt::int());
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

/// The problem sets: problems, contacts, tolerance and what each is.
fn sets_table(
    r: &mut Report,
    cfg: &MatrixConfig,
    sets: &[String],
    solves: &[Solve],
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("sets.csv"))
        .col("set", matrix::PROBLEM_SET)
        .col("problems", "problems")
        .col("contacts", "contacts")
        .col("tolerance", matrix::TOL)
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
    r.show_table("sets", &t)
}

/// Every pair on every set: solved / problems, the Coulomb ruler's count where it differs and
/// the median time of the solved ones (ms).
fn overview_table(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
) -> Result<(), ReportError> {
    let mut t = Table::new(None).md_col("pair").md_col(matrix::MODEL);
    for s in sets {
        t = t.md_col(&format!("`{s}`"));
    }
    for pair in pairs {
        let mut row = vec![C::code(pair.clone())];
        let mut model = String::new();
        for set in sets {
            let Some(s) = stats.get(&(set.clone(), pair.clone())) else {
                row.push(C::text("-"));
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
            row.push(C::text(cell));
        }
        row.insert(1, C::text(model));
        t.row(row)?;
    }
    r.show_table("overview", &t)
}

/// Per set: the most robust pair, and every pair's solved counts and fraction.
fn pair_facts(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
) {
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
}

/// `pairs.csv`: every pair's numbers per set (no markdown).
fn pairs_csv(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("pairs.csv"))
        .csv_col(matrix::PROBLEM_SET)
        .csv_col(matrix::FORMULATION)
        .csv_col(matrix::OPTIMIZER)
        .csv_col(matrix::MODEL)
        .csv_col("problems")
        .csv_col(matrix::SOLVED)
        .csv_col("median_seconds")
        .csv_col("median_iterations")
        .csv_col(matrix::SOLVED_COULOMB)
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
    r.show_table("pairs", &t)
}

/// The [`PROFILE_PAIRS`] pairs that solve the most of `set`, most robust first.
fn ranked_pairs<'a>(
    set: &str,
    pairs: &'a [String],
    stats: &BTreeMap<(String, String), PairStats>,
) -> Vec<&'a String> {
    let of = |p: &String| &stats[&(set.to_string(), p.clone())];
    let mut ranked: Vec<&String> = pairs
        .iter()
        .filter(|p| {
            stats
                .get(&(set.to_string(), (*p).clone()))
                .is_some_and(|s| s.solved > 0)
        })
        .collect();
    ranked.sort_by(|a, b| more_robust_first(of(a), of(b)));
    ranked.truncate(PROFILE_PAIRS);
    ranked
}

/// The cost of each of `ranked` on each problem of `set` (`NaN` where unsolved): seconds, or
/// iterations when `iterations`.
fn profile_costs(
    solves: &[Solve],
    set: &str,
    ranked: &[&String],
    iterations: bool,
) -> Vec<Vec<f64>> {
    let problems: Vec<&String> = problems_of(solves, set)
        .into_iter()
        .map(|s| &s.problem)
        .collect();
    ranked
        .iter()
        .map(|p| {
            problems
                .iter()
                .map(|prob| {
                    solves
                        .iter()
                        .find(|s| s.set == set && &&s.problem == prob && &s.pair == *p)
                        .filter(|s| s.solved)
                        .map_or(
                            f64::NAN,
                            |s| {
                                if iterations {
                                    s.iterations
                                } else {
                                    s.seconds
                                }
                            },
                        )
                })
                .collect()
        })
        .collect()
}

/// Dolan and More's profiles of time and iterations per set, for the most robust pairs.
fn profiles(
    r: &mut Report,
    sets: &[String],
    pairs: &[String],
    stats: &BTreeMap<(String, String), PairStats>,
    solves: &[Solve],
) -> Result<(), ReportError> {
    let mut shown = Vec::new();
    for set in sets {
        let ranked = ranked_pairs(set, pairs, stats);
        if ranked.is_empty() {
            continue;
        }
        for (what, iterations) in [("time", false), (matrix::ITERATIONS, true)] {
            let tau_max = 100.0;
            let curves =
                performance_profile(&profile_costs(solves, set, &ranked, iterations), tau_max);
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
            let plot = format!("profile_{what}_{set}");
            r.show_plot(&plot, &chart, &series)?;
            shown.push(Profile {
                set: set.clone(),
                what,
                plot,
            });
        }
    }
    r.show("profiles", shown)
}

/// The published fractions (lower bounds read off the FCLib study's profiles).
const FCLIB_PUBLISHED: &str = "fclib_published.csv";

/// The header of [`FCLIB_PUBLISHED`].
const FCLIB_COLUMNS: [&str; 9] = [
    "fclib_set",
    "file_prefix",
    matrix::TOL,
    "limit_seconds",
    "siconos_solver",
    "fraction_published",
    matrix::FORMULATION,
    matrix::OPTIMIZER,
    "note",
];

/// Our pairs beside the FCLib study's published fractions, on the files of each FCLib set
/// we have.
fn fclib_anchor(r: &mut Report, solves: &[Solve]) -> Result<(), ReportError> {
    let path = r.config_file(FCLIB_PUBLISHED);
    let rows = read_csv_with_header(&path, &FCLIB_COLUMNS)?;
    let mut t = Table::new(Some("fclib_anchor.csv"))
        .col("FCLib set", "fclib_set")
        .col("files here", "files")
        .col(matrix::TOL, matrix::TOL)
        .col("our pair", "pair")
        .col("ours solved", matrix::SOLVED)
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
                number(&path, &row, &FCLIB_COLUMNS, 3)?,
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
    r.show_table("fclib_anchor", &t)
}

/// The pairs of [`LONG`] at the study's limit, problem by problem, beside their rows of the
/// matrix at its own limit: whether the matrix's half second is why they fail.
fn long_limit(r: &mut Report, root: &Path) -> Result<LongRun, ReportError> {
    let cfg = MatrixConfig::load(&r.config_file(LONG))
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let solves = read_solves(&df)?;
    let errors = f64s(&df, matrix::ERROR_FCLIB)?;
    let mut t = Table::new(Some(&format!("{}.csv", cfg.name)))
        .col(matrix::PROBLEM, matrix::PROBLEM)
        .col("contacts", matrix::N_C)
        .col("pair", "pair")
        .col(matrix::STATUS, matrix::STATUS)
        .col(matrix::ITERATIONS, matrix::ITERATIONS)
        .col(matrix::SECONDS, matrix::SECONDS)
        .col("FCLib error", matrix::ERROR_FCLIB);
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
    r.show_table("long", &t)?;
    long_facts(r, &cfg, &solves, &errors);
    Ok(LongRun {
        file: LONG,
        name: cfg.name.clone(),
        pairs: cfg.only.clone(),
    })
}

/// The facts of the run at the study's limit (`cfg`), from its `solves` and FCLib `errors`.
fn long_facts(r: &mut Report, cfg: &MatrixConfig, solves: &[Solve], errors: &[f64]) {
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
        .num(format!("{n}.max_iter"), cfg.max_iter as f64, Fmt::int())
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
}

/// Siconos' CI expectation on its test files: NSGS variants, Alart-Curnier Newton and ADMM
/// pass every `data_collection_1` file at 1e-5 on Siconos' error. Whether the matrix ran the
/// set (the section is shown only then).
fn siconos_ci(r: &mut Report, pairs: &[String], solves: &[Solve]) -> Result<bool, ReportError> {
    let set = "siconos_ci";
    let ci: Vec<&Solve> = solves.iter().filter(|s| s.set == set).collect();
    if ci.is_empty() {
        return Ok(false);
    }
    let mut t = Table::new(Some("siconos_ci.csv"))
        .col("pair", "pair")
        .col(matrix::MODEL, matrix::MODEL)
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
    r.show_table("siconos_ci", &t)?;
    Ok(true)
}

/// Per pair on one set with a reference: what its row of the reference table says.
#[derive(Debug, Clone, Default)]
struct AgainstReference {
    model: String,
    problems: usize,
    solved: usize,
    refused: usize,
    kinds: Vec<String>,
    seconds: Vec<f64>,
    distance_r: Vec<f64>,
    distance_u: Vec<f64>,
}

impl AgainstReference {
    /// The solves of `pair` on `set`.
    fn of(solves: &[Solve], set: &str, pair: &str) -> AgainstReference {
        let mut a = AgainstReference::default();
        for s in solves.iter().filter(|s| s.set == set && s.pair == pair) {
            a.model = s.model.clone();
            a.problems += 1;
            a.solved += usize::from(s.solved);
            if !s.refused_kind.is_empty() {
                a.refused += 1;
                if !a.kinds.contains(&s.refused_kind) {
                    a.kinds.push(s.refused_kind.clone());
                }
            }
            if s.solved {
                a.seconds.push(s.seconds);
            }
            if s.distance_r.is_finite() {
                a.distance_r.push(s.distance_r);
                a.distance_u.push(s.distance_u);
            }
        }
        a
    }

    /// Whether it answered every problem (none refused, none failed to return).
    fn answered_all(&self) -> bool {
        self.problems > 0 && self.distance_r.len() == self.problems
    }
}

/// The largest finite value (`NaN` when none is).
fn finite_max(v: &[f64]) -> f64 {
    v.iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(f64::NAN, f64::max)
}

/// Every set with another engine's answers: per pair, solved and refused problems (with the
/// kinds refused), median time, and the median and largest distance of its answers from the
/// reference's in impulses and in velocities.
fn reference_sets(
    r: &mut Report,
    cfg: &MatrixConfig,
    pairs: &[String],
    solves: &[Solve],
) -> Result<Vec<ReferenceSet>, ReportError> {
    let mut out = Vec::new();
    for spec in &cfg.sets {
        let Some(dir) = &spec.reference else {
            continue;
        };
        let set = spec.name.as_str();
        let rows: Vec<(&String, AgainstReference)> = pairs
            .iter()
            .map(|p| (p, AgainstReference::of(solves, set, p)))
            .filter(|(_, a)| a.problems > 0)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let table = format!("reference_{set}");
        reference_table(r, &table, &rows)?;
        let closest = reference_facts(r, set, &rows, solves);
        let farthest = r
            .facts_ref()
            .get(&format!("{set}.reference.farthest_problem"))
            .is_some();
        out.push(ReferenceSet {
            set: set.to_string(),
            dir: dir.display().to_string(),
            table,
            closest,
            farthest,
        });
    }
    Ok(out)
}

/// The problem of `set` with the answer farthest from the reference's in impulses, and that
/// distance (no fact when no answer has one).
fn farthest_fact(r: &mut Report, set: &str, solves: &[Solve]) {
    let far = solves
        .iter()
        .filter(|s| s.set == set && s.distance_r.is_finite())
        .max_by(|a, b| a.distance_r.total_cmp(&b.distance_r));
    if let Some(s) = far {
        r.facts()
            .text(
                format!("{set}.reference.farthest_problem"),
                s.problem.clone(),
            )
            .text(format!("{set}.reference.farthest_pair"), s.pair.clone())
            .num(
                format!("{set}.reference.farthest_distance"),
                s.distance_r,
                Fmt::sci(1),
            );
    }
}

/// The problem of `set` the fewest pairs solve (by their own model; ties by name), with that
/// count and the pairs that ran.
fn hardest_fact(r: &mut Report, set: &str, solves: &[Solve]) {
    let mut by_problem: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for s in solves.iter().filter(|s| s.set == set) {
        let e = by_problem.entry(s.problem.as_str()).or_default();
        e.0 += usize::from(s.solved);
        e.1 += 1;
    }
    let hardest = by_problem.iter().min_by_key(|(_, (solved, _))| *solved);
    if let Some((problem, (solved, pairs))) = hardest {
        r.facts()
            .text(
                format!("{set}.reference.hardest_problem"),
                problem.to_string(),
            )
            .num(
                format!("{set}.reference.hardest_solved"),
                *solved as f64,
                Fmt::int(),
            )
            .num(
                format!("{set}.reference.hardest_pairs"),
                *pairs as f64,
                Fmt::int(),
            );
    }
}

/// The table of [`reference_sets`] for one set.
fn reference_table(
    r: &mut Report,
    name: &str,
    rows: &[(&String, AgainstReference)],
) -> Result<(), ReportError> {
    let mut t = Table::new(Some(&format!("{name}.csv")))
        .col("pair", "pair")
        .col(matrix::MODEL, matrix::MODEL)
        .col("solved", "solved_problems")
        .col("refused", "refused_problems")
        .col("kinds refused", "refused_kinds")
        .col("median ms", "median_ms")
        .col("impulses: median", "distance_r_median")
        .col("impulses: max", "distance_r_max")
        .col("velocities: median", "distance_u_median")
        .col("velocities: max", "distance_u_max");
    for (pair, a) in rows {
        t.row(vec![
            C::code((*pair).clone()),
            C::text(a.model.clone()),
            C::text(format!("{}/{}", a.solved, a.problems)),
            C::int(a.refused as u64),
            C::text(a.kinds.join("; ")),
            C::same(1e3 * quantile(&a.seconds, 0.5), &Fmt::fixed(3)),
            C::same(quantile(&a.distance_r, 0.5), &Fmt::sci(1)),
            C::same(finite_max(&a.distance_r), &Fmt::sci(1)),
            C::same(quantile(&a.distance_u, 0.5), &Fmt::sci(1)),
            C::same(finite_max(&a.distance_u), &Fmt::sci(1)),
        ])?;
    }
    r.show_table(name, &t)
}

/// The facts of one set's reference section; whether some pair answered every problem (the
/// closest of those, by its median impulse distance, is then a fact).
fn reference_facts(
    r: &mut Report,
    set: &str,
    rows: &[(&String, AgainstReference)],
    solves: &[Solve],
) -> bool {
    let refusing = rows.iter().filter(|(_, a)| a.refused > 0).count();
    let every = rows.iter().filter(|(_, a)| a.refused == 0).count();
    r.facts()
        .num(
            format!("{set}.reference.pairs"),
            rows.len() as f64,
            Fmt::int(),
        )
        .num(
            format!("{set}.reference.refusing_pairs"),
            refusing as f64,
            Fmt::int(),
        )
        .num(
            format!("{set}.reference.every_kind_pairs"),
            every as f64,
            Fmt::int(),
        );
    for (pair, a) in rows {
        r.facts()
            .num(
                format!("{set}.{pair}.refused"),
                a.refused as f64,
                Fmt::int(),
            )
            .num(
                format!("{set}.{pair}.distance_r_median"),
                quantile(&a.distance_r, 0.5),
                Fmt::sci(1),
            );
    }
    farthest_fact(r, set, solves);
    hardest_fact(r, set, solves);
    let closest = rows
        .iter()
        .filter(|(_, a)| a.answered_all())
        .min_by(|x, y| quantile(&x.1.distance_r, 0.5).total_cmp(&quantile(&y.1.distance_r, 0.5)));
    if let Some((pair, a)) = closest {
        r.facts()
            .text(format!("{set}.reference.closest_pair"), (*pair).clone())
            .num(
                format!("{set}.reference.closest_distance"),
                quantile(&a.distance_r, 0.5),
                Fmt::sci(1),
            );
    }
    closest.is_some()
}

#[cfg(test)]
mod tests {
    use super::{performance_profile, LongRun, Sections, LONG};
    use crate::findings::{Facts, Fmt};
    use crate::template::{render, Shown};

    #[test]
    fn the_shipped_templates_write_the_long_runs_section_from_its_facts() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/matrix/templates");
        let mut facts = Facts::new();
        for (name, v) in [
            ("pairs", 36.0),
            ("problems", 4.0),
            ("sets", 2.0),
            ("max_iter", 200.0),
        ] {
            facts.num(format!("matrix.{name}"), v, Fmt::int());
        }
        facts
            .num("matrix.profile_pairs", 8.0, Fmt::int())
            .num("matrix.time_limit", 0.5, Fmt::fixed(1).unit(" s"))
            .num("capsules_long.time_limit", 50.0, Fmt::int().unit(" s"))
            .num("capsules_long.max_iter", 1e6, Fmt::int())
            .num("capsules_long.tol", 1e-8, Fmt::sci(0));
        let mut shown = Shown::default();
        for t in ["sets", "overview", "fclib_anchor", "long"] {
            shown.table(t, format!("| {t} |\n")).unwrap();
        }
        shown.value("profiles", Vec::<u8>::new()).unwrap();
        let long = LongRun {
            file: LONG,
            name: "capsules_long".into(),
            pairs: vec!["coulomb+pgs".into(), "coulomb+admm".into()],
        };
        let sections = Sections {
            best: Vec::new(),
            siconos_ci: false,
            long: Some(long),
            reference: Vec::new(),
        };
        shown.value("sections", sections).unwrap();
        let page = render(&dir, &facts, &shown).unwrap().unwrap().text;
        assert!(
            page.contains(
                "## At the FCLib study's time limit\n\n`capsules_long.toml`: `coulomb+pgs`, \
             `coulomb+admm` on the same problems at 50 s per solve and 1000000 iterations (the \
             study's budget for the set; `maxiter = 1e6` there, so its time limit binds), \
             tolerance 1e-8 on FCLib's error. Also in `capsules_long.csv`.\n\n| long |\n"
            ),
            "{page}"
        );
        assert!(page.contains("budget: 0.5 s and 200 iterations."), "{page}");
        assert!(
            !page.contains("## Siconos' own test expectations"),
            "{page}"
        );
    }

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
