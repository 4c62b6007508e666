//! The Todorov 2010 report's sections on the driver itself: where its line-search steps land on
//! the dogleg path (section IV), what its damping schedule does to the share of accepted Newton
//! points (Table 1's second row), and the size and time of its linear solves beside a pyramid
//! LCP's (section I-B's factor of 30).
//!
//! The prose is in `experiments/configs/todorov2010/templates/` (`landing.md`, `damping.md`,
//! `unknowns.md`).

use std::collections::BTreeMap;

use contactlab_runs::schema::steps;
use contactlab_runs::store::read_run;

use super::cells::{cell_key, sweep_facts, PublishedCell};
use crate::analysis::todorov2010::{
    landing, solver_summary, table1_cells, Cell, Landing, SolverSummary,
};
use crate::analysis::Spread;
use crate::builder::{Report, RunData};
use crate::error::ReportError;
use crate::findings::{Facts, Fmt};
use crate::table::{Cell as C, Table};

/// The landing section: from the Table 1 run's traces of every step, where the driver's
/// iterations went, per cell and pooled. `false` when the run kept no such traces.
pub fn landing_section(r: &mut Report, table: &RunData, driver: &str) -> Result<bool, ReportError> {
    let path = table
        .data_path
        .with_file_name(format!("{}_traces.parquet", table.config.name));
    let traces = read_run(&path)?;
    let cells = landing(&traces, &table.steps, driver)?;
    if cells.is_empty() {
        return Ok(false);
    }
    let pooled = Pooled::of(&cells);
    let mut t = landing_table();
    for c in cells.iter().chain(std::iter::once(&pooled.all)) {
        t.row(landing_row(c))?;
    }
    r.show_table("landing", &t)?;
    pooled_facts(r.facts(), &cells, &pooled);
    Ok(true)
}

/// The landing counts pooled over every cell, per `n_b` and per mu.
struct Pooled {
    all: Landing,
    by_nb: BTreeMap<i64, Landing>,
    by_mu: BTreeMap<u64, Landing>,
}

impl Pooled {
    /// Pools `cells`.
    fn of(cells: &[Landing]) -> Pooled {
        let mut p = Pooled {
            all: Landing {
                mu: f64::NAN,
                ..Landing::default()
            },
            by_nb: BTreeMap::new(),
            by_mu: BTreeMap::new(),
        };
        for c in cells {
            p.all.add(c);
            p.by_mu
                .entry(c.mu.to_bits())
                .or_insert_with(|| Landing {
                    mu: c.mu,
                    ..Landing::default()
                })
                .add(c);
            p.by_nb
                .entry(c.n_balls)
                .or_insert_with(|| Landing {
                    mu: f64::NAN,
                    n_balls: c.n_balls,
                    ..Landing::default()
                })
                .add(c);
        }
        p
    }
}

/// The landing table's columns (`landing.csv`).
fn landing_table() -> Table {
    let edges = format!("on edges (all / on {SECOND_LEG})");
    Table::new(Some("landing.csv"))
        .col("mu", "mu")
        .col("n_b", "n_b")
        .col(steps::ITERATIONS, steps::ITERATIONS)
        .col("Newton accepted", "newton_percent")
        .col("no move", "stopped_percent")
        .col("line-search steps", "line_search")
        .col("in x : x_C", "first_leg_percent")
        .col("at x_C", "at_cauchy_percent")
        .md_col("on x_C : x_N (at x_N)")
        .csv_col("second_leg_percent")
        .csv_col("at_newton_point_percent")
        .col(&edges, "on_edges_percent")
        .col(&edges, "second_leg_on_edges_percent")
}

/// The second leg of the dogleg path, as the landing table's headers write it.
const SECOND_LEG: &str = "x_C : x_N";

/// One row of the landing table; `all` for a pooled mu or `n_b`.
fn landing_row(c: &Landing) -> Vec<C> {
    let (pct, f2) = (Fmt::percent(1), Fmt::fixed(2));
    let ls = c.line_search;
    let at_newton_point = Landing::percent(c.at_newton_point, ls);
    let share = |v: f64| C::num(v, &pct, &f2);
    vec![
        if c.mu.is_nan() {
            C::text("all")
        } else {
            C::same(c.mu, &Fmt::fixed(1))
        },
        if c.n_balls == 0 {
            C::text("all")
        } else {
            C::int(c.n_balls)
        },
        C::int(c.iterations),
        share(Landing::percent(c.newton, c.iterations)),
        share(Landing::percent(c.stopped, c.iterations)),
        C::int(ls),
        share(Landing::percent(c.first_leg, ls)),
        share(Landing::percent(c.at_cauchy, ls)),
        C::text(format!(
            "{} ({})",
            pct.show(c.second_leg_percent()),
            pct.show(at_newton_point)
        )),
        C::same(c.second_leg_percent(), &f2),
        C::same(at_newton_point, &f2),
        share(c.on_edges_percent()),
        share(Landing::percent(c.second_leg_on_edges, c.second_leg)),
    ]
}

/// The landing facts of every cell, pool and range.
fn pooled_facts(facts: &mut Facts, cells: &[Landing], pooled: &Pooled) {
    for c in cells {
        landing_facts(facts, &format!("landing.{}", cell_key(c.mu, c.n_balls)), c);
    }
    for (nb, c) in &pooled.by_nb {
        landing_facts(facts, &format!("landing.nb{nb}"), c);
    }
    for c in pooled.by_mu.values() {
        landing_facts(facts, &format!("landing.mu{:.1}", c.mu), c);
    }
    landing_facts(facts, "landing.all", &pooled.all);
    let spread = |f: &dyn Fn(&Landing) -> f64| {
        Spread::of(&cells.iter().map(f).collect::<Vec<f64>>()).range()
    };
    facts
        .list(
            "landing.second_leg_range",
            spread(&|c| c.second_leg_percent()),
            Fmt::percent(0),
        )
        .list(
            "landing.on_edges_range",
            spread(&|c| c.on_edges_percent()),
            Fmt::percent(0),
        );
}

/// The facts of one landing count under `key`.
fn landing_facts(facts: &mut Facts, key: &str, c: &Landing) {
    let (ls, it) = (c.line_search, c.iterations);
    let pct = Fmt::percent(1);
    facts
        .num(format!("{key}.iterations"), it as f64, Fmt::int())
        .num(format!("{key}.line_search"), ls as f64, Fmt::int())
        .num(
            format!("{key}.newton"),
            Landing::percent(c.newton, it),
            pct.clone(),
        )
        .num(
            format!("{key}.non_newton"),
            c.non_newton_percent(),
            pct.clone(),
        )
        .num(
            format!("{key}.stopped"),
            Landing::percent(c.stopped, it),
            pct.clone(),
        )
        .num(
            format!("{key}.first_leg"),
            Landing::percent(c.first_leg, ls),
            pct.clone(),
        )
        .num(
            format!("{key}.at_cauchy"),
            Landing::percent(c.at_cauchy, ls),
            pct.clone(),
        )
        .num(
            format!("{key}.second_leg"),
            c.second_leg_percent(),
            pct.clone(),
        )
        .num(
            format!("{key}.at_newton_point"),
            Landing::percent(c.at_newton_point, ls),
            pct.clone(),
        )
        .num(format!("{key}.on_edges"), c.on_edges_percent(), pct.clone())
        .num(
            format!("{key}.second_leg_on_edges"),
            Landing::percent(c.second_leg_on_edges, c.second_leg),
            pct,
        );
}

/// The run's solver labels (the driver, then the shadows in the config's order, then any other
/// label of the data) and its numbers of balls, ascending.
fn solvers_and_sizes(run: &RunData, cells: &[Cell]) -> (Vec<String>, Vec<i64>) {
    let mut solvers: Vec<String> = run
        .config
        .driver_specs()
        .iter()
        .copied()
        .chain(run.config.shadow.iter())
        .map(|s| s.name())
        .filter(|s| cells.iter().any(|c| &c.solver == s))
        .collect();
    for c in cells {
        if !solvers.contains(&c.solver) {
            solvers.push(c.solver.clone());
        }
    }
    let mut nbs: Vec<i64> = cells.iter().map(|c| c.n_balls).collect();
    nbs.sort_unstable();
    nbs.dedup();
    (solvers, nbs)
}

/// A solver's given options, as the config writes them (`lambda0 = 1e-4`, `lambda_up = 100`);
/// `defaults` for none.
fn given_options(run: &RunData, label: &str) -> Vec<String> {
    let specs = run.config.driver_specs();
    let spec = specs
        .iter()
        .copied()
        .chain(run.config.shadow.iter())
        .find(|s| s.name() == label);
    let Some(spec) = spec else {
        return vec!["-".into()];
    };
    let opts: Vec<String> = spec
        .formulation
        .options
        .iter()
        .chain(spec.optimizer.options.iter())
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    if opts.is_empty() {
        vec!["defaults".into()]
    } else {
        opts
    }
}

/// A sweep's cells beside the published ones: the lookups the damping section shares.
struct Sweep<'a> {
    cells: &'a [Cell],
    published: &'a [PublishedCell],
    driver: String,
    nbs: Vec<i64>,
}

impl Sweep<'_> {
    /// The cell of solver `s` at (`mu`, `nb`).
    fn find(&self, s: &str, mu: f64, nb: i64) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.solver == s && c.mu == mu && c.n_balls == nb)
    }

    /// Published minus ours (`s`) over the cells both have, of `n_b` = `nb` when given.
    fn gaps(&self, s: &str, nb: Option<i64>) -> Spread {
        let v: Vec<f64> = self
            .published
            .iter()
            .filter(|p| nb.is_none_or(|nb| p.n_balls == nb))
            .filter_map(|p| {
                self.find(s, p.mu, p.n_balls)
                    .map(|c| p.newton_accepted - c.newton_share)
            })
            .collect();
        Spread::of(&v)
    }

    /// `f` of solver `s` minus `f` of the driver, per cell both have.
    fn changes(&self, s: &str, f: &dyn Fn(&Cell) -> f64) -> Vec<f64> {
        self.cells
            .iter()
            .filter(|c| c.solver == s)
            .filter_map(|c| {
                self.find(&self.driver, c.mu, c.n_balls)
                    .map(|d| f(c) - f(d))
            })
            .collect()
    }

    /// The mean of `f` over the cells of solver `s`.
    fn mean(&self, s: &str, f: &dyn Fn(&Cell) -> f64) -> f64 {
        let v: Vec<f64> = self.cells.iter().filter(|c| c.solver == s).map(f).collect();
        Spread::of(&v).mean
    }
}

/// The damping section: every setting of `damping.toml` on the Table 1 steps, its share of
/// accepted Newton points beside the paper's, its iterations, convergence and time.
pub fn damping_section(
    r: &mut Report,
    run: &RunData,
    published: &[PublishedCell],
) -> Result<(), ReportError> {
    let cells = table1_cells(&run.steps)?;
    let (settings, nbs) = solvers_and_sizes(run, &cells);
    let sweep = Sweep {
        cells: &cells,
        published,
        driver: run.config.driver_specs()[0].name(),
        nbs,
    };
    sweep_facts(r, run);
    let mut t = damping_table(&sweep.nbs);
    let mut newton_means = Vec::new();
    for s in &settings {
        t.row(damping_row(&sweep, s, &given_options(run, s)))?;
        setting_facts(r.facts(), &sweep, s);
        newton_means.push(sweep.mean(s, &|c| c.newton_share));
    }
    r.show_table("damping_summary", &t)?;
    let mut best: Option<(&String, f64)> = None;
    for (s, &n) in settings.iter().zip(&newton_means) {
        if best.is_none_or(|b| n > b.1) {
            best = Some((s, n));
        }
    }
    let facts = r.facts();
    facts
        .num("damping.settings", settings.len() as f64, Fmt::int())
        .num(
            "damping.newton_spread",
            Spread::of(&newton_means).width(),
            Fmt::fixed(1),
        );
    if let Some((s, _)) = best {
        facts.text("damping.best_newton", s.clone());
    }
    r.show_table("damping", &damping_cell_table(&cells, published)?)
}

/// The damping summary's columns (`damping_summary.csv`).
fn damping_table(nbs: &[i64]) -> Table {
    let nbs_label = nbs
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" / ");
    let mut t = Table::new(Some("damping_summary.csv"))
        .col("setting", "setting")
        .col("options", "options");
    for nb in nbs {
        t = t.col(
            &format!("Newton accepted (n_b = {nbs_label})"),
            &format!("newton_percent_nb{nb}"),
        );
    }
    t = t
        .md_col("gap to the paper, points")
        .csv_col("gap_mean")
        .csv_col("gap_min")
        .csv_col("gap_max");
    for nb in nbs {
        t = t.col(
            &format!("iterations (n_b = {nbs_label})"),
            &format!("iterations_nb{nb}"),
        );
    }
    t.col("converged", "converged_percent")
        .col("local minima", "local_minima")
        .col("time per solve", "microseconds_per_solve")
}

/// One setting's row of the damping summary.
fn damping_row(sweep: &Sweep, s: &str, opts: &[String]) -> Vec<C> {
    // The CSV is read without quoting: its options are separated by `;`.
    let mut row = vec![
        C::code(s.to_string()),
        C::pair(opts.join(", "), opts.join("; ")),
    ];
    let summaries: Vec<_> = sweep
        .nbs
        .iter()
        .map(|nb| solver_summary(sweep.cells, s, *nb))
        .collect();
    let of = |f: &dyn Fn(&SolverSummary) -> f64| -> Vec<f64> {
        summaries
            .iter()
            .map(|m| m.as_ref().map_or(f64::NAN, f))
            .collect()
    };
    row.extend(
        of(&|m| m.newton_share)
            .into_iter()
            .map(|v| C::num(v, &Fmt::percent(0), &Fmt::fixed(2))),
    );
    let g = sweep.gaps(s, None);
    row.extend([
        C::text(format!(
            "{} ({} to {})",
            Fmt::fixed(1).show(g.mean),
            Fmt::int().show(g.min),
            Fmt::int().show(g.max)
        )),
        C::same(g.mean, &Fmt::fixed(2)),
        C::same(g.min, &Fmt::fixed(2)),
        C::same(g.max, &Fmt::fixed(2)),
    ]);
    row.extend(
        of(&|m| m.iterations)
            .into_iter()
            .map(|v| C::num(v, &Fmt::fixed(2), &Fmt::fixed(3))),
    );
    let (converged, local_minima, us) = setting_totals(sweep, s);
    row.extend([
        C::num(converged, &Fmt::percent(1), &Fmt::fixed(2)),
        C::int(local_minima as i64),
        C::num(us, &Fmt::int().unit(" us"), &Fmt::fixed(1)),
    ]);
    row
}

/// A setting's mean converged share, its local minima and its mean microseconds per solve.
fn setting_totals(sweep: &Sweep, s: &str) -> (f64, u64, f64) {
    let local_minima = sweep
        .cells
        .iter()
        .filter(|c| c.solver == s)
        .map(|c| c.local_minima)
        .sum();
    (
        sweep.mean(s, &|c| c.converged_share),
        local_minima,
        1e6 * sweep.mean(s, &|c| c.seconds_per_solve),
    )
}

/// The facts `damping.<s>.*` of setting `s`.
fn setting_facts(facts: &mut Facts, sweep: &Sweep, s: &str) {
    let (f1, pct0, pct1) = (Fmt::fixed(1), Fmt::percent(0), Fmt::percent(1));
    let k = format!("damping.{s}");
    let g = sweep.gaps(s, None);
    let iterations = sweep.mean(s, &|c| c.iterations);
    let driver_iterations = sweep.mean(&sweep.driver, &|c| c.iterations);
    let (converged, local_minima, us) = setting_totals(sweep, s);
    facts
        .num(
            format!("{k}.newton"),
            sweep.mean(s, &|c| c.newton_share),
            pct1.clone(),
        )
        .num(format!("{k}.gap"), g.mean, f1.clone())
        .list(format!("{k}.gap_range"), g.range(), Fmt::int())
        .num(
            format!("{k}.newton_change"),
            Spread::of(&sweep.changes(s, &|c| c.newton_share)).mean,
            f1.clone().signed(),
        )
        .num(
            format!("{k}.iterations_change"),
            100.0 * (iterations / driver_iterations - 1.0),
            pct0.clone().signed(),
        )
        .num(format!("{k}.converged"), converged, pct1)
        .num(format!("{k}.local_minima"), local_minima as f64, Fmt::int())
        .num(format!("{k}.us"), us, Fmt::int().unit(" us"));
    for nb in &sweep.nbs {
        if let Some(m) = solver_summary(sweep.cells, s, *nb) {
            let g = sweep.gaps(s, Some(*nb));
            facts
                .num(format!("{k}.newton.nb{nb}"), m.newton_share, pct0.clone())
                .num(format!("{k}.iterations.nb{nb}"), m.iterations, f1.clone())
                .num(format!("{k}.gap.nb{nb}"), g.mean, f1.clone())
                .list(format!("{k}.gap_range.nb{nb}"), g.range(), Fmt::int());
        }
    }
    for c in sweep.cells.iter().filter(|c| c.solver == s) {
        facts.num(
            format!("{k}.{}.newton", cell_key(c.mu, c.n_balls)),
            c.newton_share,
            pct0.clone(),
        );
    }
}

/// `damping.csv`: every setting per cell, beside the published share.
fn damping_cell_table(cells: &[Cell], published: &[PublishedCell]) -> Result<Table, ReportError> {
    let mut per_cell = Table::new(Some("damping.csv"))
        .csv_col("mu")
        .csv_col("n_b")
        .csv_col("setting")
        .csv_col("newton_percent")
        .csv_col("newton_percent_published")
        .csv_col(steps::ITERATIONS)
        .csv_col("converged_percent")
        .csv_col("local_minima")
        .csv_col("microseconds_per_solve")
        .csv_col("contact_steps");
    for c in cells {
        let p = published
            .iter()
            .find(|p| p.mu == c.mu && p.n_balls == c.n_balls)
            .map_or(f64::NAN, |p| p.newton_accepted);
        per_cell.row(vec![
            C::same(c.mu, &Fmt::fixed(1)),
            C::int(c.n_balls),
            C::text(c.solver.clone()),
            C::same(c.newton_share, &Fmt::fixed(2)),
            C::same(p, &Fmt::int()),
            C::same(c.iterations, &Fmt::fixed(3)),
            C::same(c.converged_share, &Fmt::fixed(2)),
            C::int(c.local_minima as i64),
            C::same(1e6 * c.seconds_per_solve, &Fmt::fixed(1)),
            C::int(c.contact_steps as i64),
        ])?;
    }
    Ok(per_cell)
}

/// A shadow solver of `unknowns.toml` as the config gives it, for the templates.
#[derive(Debug, serde::Serialize)]
struct Shadow {
    name: String,
    formulation: String,
    options: Vec<String>,
    optimizer: String,
}

/// The pyramid comparison's driver and shadows, for the templates.
#[derive(Debug, serde::Serialize)]
struct Pyramid {
    driver: String,
    shadows: Vec<Shadow>,
}

/// One solver and `n_b` of the unknowns table, beside the driver's.
struct Unknowns {
    per_solve: f64,
    solve_ratio: f64,
    cubed: f64,
    step_ratio: f64,
    /// The power of the size ratio that the time ratio is: 3 for a cubic cost.
    exponent: f64,
}

impl Unknowns {
    /// Solver `m` against the driver `d`.
    fn of(m: &SolverSummary, d: &SolverSummary) -> Unknowns {
        let per_solve = m.unknowns_per_contact * m.contacts_per_solve;
        let size_ratio = per_solve / (d.unknowns_per_contact * d.contacts_per_solve);
        let solve_ratio = m.seconds_per_linear_solve / d.seconds_per_linear_solve;
        Unknowns {
            per_solve,
            solve_ratio,
            cubed: size_ratio.powi(3),
            step_ratio: m.seconds_per_solve / d.seconds_per_solve,
            exponent: if (size_ratio - 1.0).abs() > 1e-9 {
                solve_ratio.ln() / size_ratio.ln()
            } else {
                f64::NAN
            },
        }
    }
}

/// The unknowns section: per solver of `unknowns.toml` and `n_b`, the unknowns per contact and
/// per solve, the linear solves and their time, and the time per step, beside the driver's.
pub fn unknowns_section(r: &mut Report, run: &RunData) -> Result<(), ReportError> {
    let driver = run.config.driver_specs()[0].name();
    let cells = table1_cells(&run.steps)?;
    let (solvers, nbs) = solvers_and_sizes(run, &cells);
    sweep_facts(r, run);
    let mut t = unknowns_table();
    for s in &solvers {
        for nb in &nbs {
            let (Some(m), Some(d)) = (
                solver_summary(&cells, s, *nb),
                solver_summary(&cells, &driver, *nb),
            ) else {
                continue;
            };
            let u = Unknowns::of(&m, &d);
            t.row(unknowns_row(s, *nb, &m, &u))?;
            unknowns_facts(r.facts(), &format!("unknowns.{s}.nb{nb}"), &m, &u);
        }
    }
    r.show_table(steps::UNKNOWNS, &t)?;
    let shadows = run
        .config
        .shadow
        .iter()
        .map(|sp| Shadow {
            name: sp.name(),
            formulation: sp.formulation.name.clone(),
            options: given_options(run, &sp.name()),
            optimizer: sp.optimizer.name.clone(),
        })
        .collect();
    r.show("pyramid", Pyramid { driver, shadows })
}

/// The unknowns table's columns (`unknowns.csv`).
fn unknowns_table() -> Table {
    let sizes = "unknowns per contact / per solve";
    let ratios = "ratio to the driver / predicted";
    let converged = "converged (own test / ruler)";
    Table::new(Some("unknowns.csv"))
        .col(steps::SOLVER, steps::SOLVER)
        .col("n_b", "n_b")
        .col(sizes, "unknowns_per_contact")
        .col(sizes, "unknowns_per_solve")
        .col("linear solves per step", "linear_solves_per_solve")
        .col("time per linear solve", "microseconds_per_linear_solve")
        .col(ratios, "linear_solve_ratio")
        .col(ratios, "cubed_size_ratio")
        .col(steps::ITERATIONS, steps::ITERATIONS)
        .col(converged, "solver_converged_percent")
        .col(converged, "converged_percent")
        .col("time per step", "microseconds_per_step")
        .col("ratio to the driver", "step_ratio")
}

/// One row of the unknowns table: solver `s` at `nb` balls.
fn unknowns_row(s: &str, nb: i64, m: &SolverSummary, u: &Unknowns) -> Vec<C> {
    let (f1, f2) = (Fmt::fixed(1), Fmt::fixed(2));
    vec![
        C::code(s.to_string()),
        C::int(nb),
        C::num(m.unknowns_per_contact, &f1, &f2),
        C::num(u.per_solve, &f1, &f2),
        C::num(m.linear_solves_per_solve, &f1, &f2),
        C::num(
            1e6 * m.seconds_per_linear_solve,
            &f1.clone().unit(" us"),
            &f2,
        ),
        C::num(u.solve_ratio, &f1, &f2),
        C::num(u.cubed, &f1, &f2),
        C::num(m.iterations, &f2, &Fmt::fixed(3)),
        C::num(m.solver_converged_share, &Fmt::percent(1), &f2),
        C::num(m.converged_share, &Fmt::percent(1), &f2),
        C::num(1e6 * m.seconds_per_solve, &Fmt::int().unit(" us"), &f1),
        C::num(u.step_ratio, &f1, &f2),
    ]
}

/// The facts `unknowns.<s>.nb<n>.*` under `k`.
fn unknowns_facts(facts: &mut Facts, k: &str, m: &SolverSummary, u: &Unknowns) {
    let f1 = Fmt::fixed(1);
    facts
        .num(
            format!("{k}.per_contact"),
            m.unknowns_per_contact,
            f1.clone(),
        )
        .num(format!("{k}.per_solve"), u.per_solve, f1.clone())
        .num(
            format!("{k}.linear_solves"),
            m.linear_solves_per_solve,
            f1.clone(),
        )
        .num(
            format!("{k}.linear_solve_us"),
            1e6 * m.seconds_per_linear_solve,
            f1.clone().unit(" us"),
        )
        .num(format!("{k}.linear_solve_ratio"), u.solve_ratio, f1.clone())
        .num(format!("{k}.cubed_size_ratio"), u.cubed, Fmt::int())
        .num(format!("{k}.exponent"), u.exponent, f1.clone())
        .num(format!("{k}.iterations"), m.iterations, f1.clone())
        .num(format!("{k}.converged"), m.converged_share, Fmt::percent(1))
        .num(
            format!("{k}.own_converged"),
            m.solver_converged_share,
            Fmt::percent(1),
        )
        .num(
            format!("{k}.step_us"),
            1e6 * m.seconds_per_solve,
            Fmt::int().unit(" us"),
        )
        .num(format!("{k}.step_ratio"), u.step_ratio, f1);
}
