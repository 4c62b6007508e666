//! The Todorov 2010 report's sections on the driver itself: where its line-search steps land on
//! the dogleg path (section IV), what its damping schedule does to the share of accepted Newton
//! points (Table 1's second row), and the size and time of its linear solves beside a pyramid
//! LCP's (section I-B's factor of 30).
//!
//! Facts: `landing.<cell|nb<n>|all>.{iterations, newton, non_newton, line_search, first_leg,
//! at_cauchy, second_leg, at_newton_point, on_edges, second_leg_on_edges, stopped}` (percent:
//! `newton`, `non_newton` and `stopped` of the iterations, the others of the line-search steps;
//! `iterations` and `line_search` counted), `landing.second_leg_range`, `landing.on_edges_range`
//! (over the cells; `landing.mu<mu>` pools the cells of one mu); per damping setting `s` of
//! `damping.toml` `damping.<s>.{newton, newton.nb<n>, <cell>.newton, gap, gap_range, gap.nb<n>,
//! gap_range.nb<n>, newton_change, iterations.nb<n>, iterations_change, converged,
//! local_minima, us}`, `damping.settings`,
//! `damping.best_newton`, `damping.newton_spread`; per solver `s` of `unknowns.toml` and `n_b`
//! `unknowns.<s>.nb<n>.{per_contact, per_solve, linear_solves, linear_solve_us,
//! linear_solve_ratio, cubed_size_ratio, exponent, iterations, converged, own_converged,
//! step_us, step_ratio}` (`exponent`: the power of the ratio of unknowns that the ratio of
//! linear-solve times is).

use std::collections::BTreeMap;

use contactlab_runs::store::read_run;

use super::{cell_key, PublishedCell};
use crate::analysis::todorov2010::{landing, solver_summary, table1_cells, Cell, Landing};
use crate::analysis::Spread;
use crate::builder::{Report, RunData};
use crate::findings::{Facts, Fmt};
use crate::table::{Cell as C, Table};
use crate::ReportError;

/// The landing section: from the Table 1 run's traces of every step, where the driver's
/// iterations went, per cell and pooled. Says so and returns when the run kept no such traces.
pub fn landing_section(r: &mut Report, table: &RunData, driver: &str) -> Result<(), ReportError> {
    let path = table
        .data_path
        .with_file_name(format!("{}_traces.parquet", table.config.name));
    let traces = read_run(&path)?;
    let cells = landing(&traces, &table.steps, driver)?;
    r.heading(2, "Where the line-search steps land (section IV)");
    if cells.is_empty() {
        r.text(
            "(The Table 1 run kept no per-iteration traces of every step: set `[output] all_traces = true` \
             in `table1.toml`.)",
        );
        return Ok(());
    }
    r.text(&format!(
        "The paper: on the iterations whose Newton point was not accepted \"the solution was almost always in \
         the segment `x_C : x_N`. About half of these solutions were on edges, and the other half in smooth \
         sub-segments between edges.\" Counted here from the per-iteration traces of `{driver}` on every step \
         of the Table 1 sweep (`path_position`: where on the dogleg path `x -> x_C -> x_N` the line search's \
         best point lies; `step_kind`: `edge` when it is a kink crossing). Each row: iterations, the share \
         whose Newton point was accepted, the share that did not move (local minimum), then of the \
         line-search steps the share inside `x : x_C`, at `x_C` itself, past it on `x_C : x_N` (with, in \
         brackets, the share at `x_N` itself: rejected by the acceptance test, yet the best point of the path), and \
         at an edge crossing (of all line-search steps / of those on `x_C : x_N`). Also in \
         [`landing.csv`](landing.csv)."
    ));
    let pct = Fmt::percent(1);
    let mut t = Table::new(Some("landing.csv"))
        .col("mu", "mu")
        .col("n_b", "n_b")
        .col("iterations", "iterations")
        .col("Newton accepted", "newton_percent")
        .col("no move", "stopped_percent")
        .col("line-search steps", "line_search")
        .col("in x : x_C", "first_leg_percent")
        .col("at x_C", "at_cauchy_percent")
        .md_col("on x_C : x_N (at x_N)")
        .csv_col("second_leg_percent")
        .csv_col("at_newton_point_percent")
        .col("on edges (all / on x_C : x_N)", "on_edges_percent")
        .col(
            "on edges (all / on x_C : x_N)",
            "second_leg_on_edges_percent",
        );
    let mut all = Landing {
        mu: f64::NAN,
        ..Landing::default()
    };
    let mut by_nb: BTreeMap<i64, Landing> = BTreeMap::new();
    let mut by_mu: BTreeMap<u64, Landing> = BTreeMap::new();
    for c in &cells {
        all.add(c);
        by_mu
            .entry(c.mu.to_bits())
            .or_insert_with(|| Landing {
                mu: c.mu,
                ..Landing::default()
            })
            .add(c);
        by_nb
            .entry(c.n_balls)
            .or_insert_with(|| Landing {
                mu: f64::NAN,
                n_balls: c.n_balls,
                ..Landing::default()
            })
            .add(c);
    }
    for c in cells.iter().chain(std::iter::once(&all)) {
        let ls = c.line_search;
        let at_newton_point = Landing::percent(c.at_newton_point, ls);
        t.row(vec![
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
            C::num(
                Landing::percent(c.newton, c.iterations),
                &pct,
                &Fmt::fixed(2),
            ),
            C::num(
                Landing::percent(c.stopped, c.iterations),
                &pct,
                &Fmt::fixed(2),
            ),
            C::int(ls),
            C::num(Landing::percent(c.first_leg, ls), &pct, &Fmt::fixed(2)),
            C::num(Landing::percent(c.at_cauchy, ls), &pct, &Fmt::fixed(2)),
            C::text(format!(
                "{} ({})",
                pct.show(c.second_leg_percent()),
                pct.show(at_newton_point)
            )),
            C::same(c.second_leg_percent(), &Fmt::fixed(2)),
            C::same(at_newton_point, &Fmt::fixed(2)),
            C::num(c.on_edges_percent(), &pct, &Fmt::fixed(2)),
            C::num(
                Landing::percent(c.second_leg_on_edges, c.second_leg),
                &pct,
                &Fmt::fixed(2),
            ),
        ])?;
    }
    r.table(&t)?;
    let facts = r.facts();
    for c in &cells {
        landing_facts(facts, &format!("landing.{}", cell_key(c.mu, c.n_balls)), c);
    }
    for (nb, c) in &by_nb {
        landing_facts(facts, &format!("landing.nb{nb}"), c);
    }
    for c in by_mu.values() {
        landing_facts(facts, &format!("landing.mu{:.1}", c.mu), c);
    }
    landing_facts(facts, "landing.all", &all);
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
    Ok(())
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

/// The damping section: every setting of `damping.toml` on the Table 1 steps, its share of
/// accepted Newton points beside the paper's, its iterations, convergence and time.
pub fn damping_section(
    r: &mut Report,
    run: &RunData,
    published: &[PublishedCell],
) -> Result<(), ReportError> {
    let driver = run.config.driver_specs()[0].name();
    let cells = table1_cells(&run.steps)?;
    let (settings, nbs) = solvers_and_sizes(run, &cells);
    let cfg = &run.config;
    r.heading(2, "The damping schedule and the accepted Newton points");
    r.text(&format!(
        "The paper gives the acceptance rule (actual decrease at least 50% of the predicted one) but not the \
         schedule of `lambda`. Each setting below is Todorov's driver with the options shown (the schedule's; \
         in one row the acceptance threshold itself), the others as the driver's defaults, solving the very \
         step problems of the driver's simulation (`experiments/configs/todorov2010/damping.toml`: {} mu x {} n_b x {} seeds x {} steps, so like is \
         compared with like). Newton accepted: the share of iterations whose Newton point was accepted, \
         averaged over the mu cells, per `n_b`; gap: the published share minus ours, mean over the cells \
         (smallest to largest); iterations: Table 1's statistic averaged over mu; converged: share of the \
         solves converged by the shared ruler, mean over the cells. Per cell in [`damping.csv`](damping.csv).",
        cfg.sweep.get("mu").map_or(0, Vec::len),
        cfg.sweep.get("n_balls").map_or(0, Vec::len),
        cfg.sweep.get("seed").map_or(1, Vec::len),
        cfg.scene.steps,
    ));
    let find = |s: &str, mu: f64, nb: i64| {
        cells
            .iter()
            .find(|c| c.solver == s && c.mu == mu && c.n_balls == nb)
    };
    // Published minus ours over the cells both have, and ours minus the driver's.
    let gaps = |s: &str| -> Vec<f64> {
        published
            .iter()
            .filter_map(|p| find(s, p.mu, p.n_balls).map(|c| p.newton_accepted - c.newton_share))
            .collect()
    };
    let changes = |s: &str, f: &dyn Fn(&Cell) -> f64| -> Vec<f64> {
        cells
            .iter()
            .filter(|c| c.solver == s)
            .filter_map(|c| find(&driver, c.mu, c.n_balls).map(|d| f(c) - f(d)))
            .collect()
    };
    let mean = |v: &[f64]| Spread::of(v).mean;
    let nbs_label = nbs
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(" / ");
    let (f1, pct0, pct1) = (Fmt::fixed(1), Fmt::percent(0), Fmt::percent(1));
    let mut t = Table::new(Some("damping_summary.csv"))
        .col("setting", "setting")
        .col("options", "options");
    for nb in &nbs {
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
    for nb in &nbs {
        t = t.col(
            &format!("iterations (n_b = {nbs_label})"),
            &format!("iterations_nb{nb}"),
        );
    }
    t = t
        .col("converged", "converged_percent")
        .col("local minima", "local_minima")
        .col("time per solve", "microseconds_per_solve");
    let mut best: Option<(String, f64)> = None;
    let mut newton_means = Vec::new();
    for s in &settings {
        // The CSV is read without quoting: its options are separated by `;`.
        let opts = given_options(run, s);
        let mut row = vec![
            C::code(s.clone()),
            C::pair(opts.join(", "), opts.join("; ")),
        ];
        let sel: Vec<&Cell> = cells.iter().filter(|c| &c.solver == s).collect();
        let summaries: Vec<_> = nbs
            .iter()
            .map(|nb| solver_summary(&cells, s, *nb))
            .collect();
        for m in &summaries {
            row.push(C::num(
                m.as_ref().map_or(f64::NAN, |m| m.newton_share),
                &pct0,
                &Fmt::fixed(2),
            ));
        }
        let g = Spread::of(&gaps(s));
        row.extend([
            C::text(format!(
                "{} ({} to {})",
                f1.show(g.mean),
                Fmt::int().show(g.min),
                Fmt::int().show(g.max)
            )),
            C::same(g.mean, &Fmt::fixed(2)),
            C::same(g.min, &Fmt::fixed(2)),
            C::same(g.max, &Fmt::fixed(2)),
        ]);
        for m in &summaries {
            row.push(C::num(
                m.as_ref().map_or(f64::NAN, |m| m.iterations),
                &Fmt::fixed(2),
                &Fmt::fixed(3),
            ));
        }
        let converged = mean(&sel.iter().map(|c| c.converged_share).collect::<Vec<_>>());
        let local_minima: u64 = sel.iter().map(|c| c.local_minima).sum();
        let us = 1e6 * mean(&sel.iter().map(|c| c.seconds_per_solve).collect::<Vec<_>>());
        row.extend([
            C::num(converged, &pct1, &Fmt::fixed(2)),
            C::int(local_minima as i64),
            C::num(us, &Fmt::int().unit(" us"), &Fmt::fixed(1)),
        ]);
        t.row(row)?;

        let newton = mean(&sel.iter().map(|c| c.newton_share).collect::<Vec<_>>());
        newton_means.push(newton);
        if best.as_ref().is_none_or(|b| newton > b.1) {
            best = Some((s.clone(), newton));
        }
        let iterations = mean(&sel.iter().map(|c| c.iterations).collect::<Vec<_>>());
        let driver_iterations = mean(
            &cells
                .iter()
                .filter(|c| c.solver == driver)
                .map(|c| c.iterations)
                .collect::<Vec<_>>(),
        );
        let k = format!("damping.{s}");
        let facts = r.facts();
        facts
            .num(format!("{k}.newton"), newton, pct1.clone())
            .num(format!("{k}.gap"), g.mean, f1.clone())
            .list(format!("{k}.gap_range"), g.range(), Fmt::int())
            .num(
                format!("{k}.newton_change"),
                mean(&changes(s, &|c| c.newton_share)),
                f1.clone().signed(),
            )
            .num(
                format!("{k}.iterations_change"),
                100.0 * (iterations / driver_iterations - 1.0),
                pct0.clone().signed(),
            )
            .num(format!("{k}.converged"), converged, pct1.clone())
            .num(format!("{k}.local_minima"), local_minima as f64, Fmt::int())
            .num(format!("{k}.us"), us, Fmt::int().unit(" us"));
        for (nb, m) in nbs.iter().zip(&summaries) {
            if let Some(m) = m {
                let g = Spread::of(
                    &published
                        .iter()
                        .filter(|p| p.n_balls == *nb)
                        .filter_map(|p| {
                            find(s, p.mu, p.n_balls).map(|c| p.newton_accepted - c.newton_share)
                        })
                        .collect::<Vec<f64>>(),
                );
                facts
                    .num(format!("{k}.newton.nb{nb}"), m.newton_share, pct0.clone())
                    .num(format!("{k}.iterations.nb{nb}"), m.iterations, f1.clone())
                    .num(format!("{k}.gap.nb{nb}"), g.mean, f1.clone())
                    .list(format!("{k}.gap_range.nb{nb}"), g.range(), Fmt::int());
            }
        }
        for c in &sel {
            facts.num(
                format!("{k}.{}.newton", cell_key(c.mu, c.n_balls)),
                c.newton_share,
                pct0.clone(),
            );
        }
    }
    r.table(&t)?;
    let spread = Spread::of(&newton_means);
    let facts = r.facts();
    facts
        .num("damping.settings", settings.len() as f64, Fmt::int())
        .num("damping.newton_spread", spread.width(), f1.clone());
    if let Some((s, _)) = best {
        facts.text("damping.best_newton", s);
    }

    let mut per_cell = Table::new(Some("damping.csv"))
        .csv_col("mu")
        .csv_col("n_b")
        .csv_col("setting")
        .csv_col("newton_percent")
        .csv_col("newton_percent_published")
        .csv_col("iterations")
        .csv_col("converged_percent")
        .csv_col("local_minima")
        .csv_col("microseconds_per_solve")
        .csv_col("contact_steps");
    for c in &cells {
        let p = published
            .iter()
            .find(|p| p.mu == c.mu && p.n_balls == c.n_balls)
            .map_or(f64::NAN, |p| p.newton_accepted);
        per_cell.row(vec![
            C::same(c.mu, &f1),
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
    r.table(&per_cell)?;
    Ok(())
}

/// The unknowns section: per solver of `unknowns.toml` and `n_b`, the unknowns per contact and
/// per solve, the linear solves and their time, and the time per step, beside the driver's.
pub fn unknowns_section(r: &mut Report, run: &RunData) -> Result<(), ReportError> {
    let driver = run.config.driver_specs()[0].name();
    let cells = table1_cells(&run.steps)?;
    let (solvers, nbs) = solvers_and_sizes(run, &cells);
    let cfg = &run.config;
    r.heading(
        2,
        "Unknowns per contact: a pyramid LCP beside the implicit NCP",
    );
    // Each shadow as the config gives it: formulation, its options, optimizer.
    let shadows: Vec<String> = cfg
        .shadow
        .iter()
        .map(|sp| {
            let opts = given_options(run, &sp.name());
            format!(
                "`{}` (formulation `{}`, {}, under `{}`)",
                sp.name(),
                sp.formulation.name,
                opts.join(", "),
                sp.optimizer.name
            )
        })
        .collect();
    r.text(&format!(
        "Section I-B: an LCP with an `n_p`-sided friction pyramid has `n_p + 2` unknowns per contact (\"in \
         practice `n_p = 8` is often used\"), and since \"a direct linear solver for a system with n equations \
         takes O(n^3) time\", reducing \"the number of unknowns per contact from 10 to 3\" \"could speed things \
         up by a factor of 30\". Measured on the Table 1 steps \
         (`experiments/configs/todorov2010/unknowns.toml`: {} mu x {} n_b x {} seeds x {} steps): the driver \
         `{driver}` advances the simulation and, on the same step problems, {}. `mlcp-fb` is Mylapilli and \
         Jain's pyramid MLCP as Fischer-Burmeister equations, the route section I-B describes (`n_f` friction \
         directions, `n_f + 2` unknowns per contact). Per `n_b`, averaged over mu: unknowns per contact and \
         per solve, linear systems factored per solve, the time of one factorization and solve (LLT of the \
         damped normal equations, timed inside the driver; forming them excluded), its ratio to the driver's \
         and what a cubic cost predicts (the cube of the ratio of unknowns per solve), then Table 1's \
         iterations, the share of solves converged by the driver's own test and by the shared ruler (the \
         Coulomb cone's natural map, which a pyramid's answer generally meets only when no contact slides) \
         and the time per step (the whole solve: build, start and iterations) with its ratio to the \
         driver's. Also in [`unknowns.csv`](unknowns.csv).",
        cfg.sweep.get("mu").map_or(0, Vec::len),
        cfg.sweep.get("n_balls").map_or(0, Vec::len),
        cfg.sweep.get("seed").map_or(1, Vec::len),
        cfg.scene.steps,
        shadows.join(" and "),
    ));
    let (f1, f2) = (Fmt::fixed(1), Fmt::fixed(2));
    let mut t = Table::new(Some("unknowns.csv"))
        .col("solver", "solver")
        .col("n_b", "n_b")
        .col("unknowns per contact / per solve", "unknowns_per_contact")
        .col("unknowns per contact / per solve", "unknowns_per_solve")
        .col("linear solves per step", "linear_solves_per_solve")
        .col("time per linear solve", "microseconds_per_linear_solve")
        .col("ratio to the driver / predicted", "linear_solve_ratio")
        .col("ratio to the driver / predicted", "cubed_size_ratio")
        .col("iterations", "iterations")
        .col("converged (own test / ruler)", "solver_converged_percent")
        .col("converged (own test / ruler)", "converged_percent")
        .col("time per step", "microseconds_per_step")
        .col("ratio to the driver", "step_ratio");
    for s in &solvers {
        for nb in &nbs {
            let (Some(m), Some(d)) = (
                solver_summary(&cells, s, *nb),
                solver_summary(&cells, &driver, *nb),
            ) else {
                continue;
            };
            let per_solve = m.unknowns_per_contact * m.contacts_per_solve;
            let driver_per_solve = d.unknowns_per_contact * d.contacts_per_solve;
            let solve_ratio = m.seconds_per_linear_solve / d.seconds_per_linear_solve;
            let cubed = (per_solve / driver_per_solve).powi(3);
            let step_ratio = m.seconds_per_solve / d.seconds_per_solve;
            // The power of the size ratio that the time ratio is: 3 for a cubic cost.
            let size_ratio = per_solve / driver_per_solve;
            let exponent = if (size_ratio - 1.0).abs() > 1e-9 {
                solve_ratio.ln() / size_ratio.ln()
            } else {
                f64::NAN
            };
            t.row(vec![
                C::code(s.clone()),
                C::int(*nb),
                C::num(m.unknowns_per_contact, &f1, &f2),
                C::num(per_solve, &f1, &f2),
                C::num(m.linear_solves_per_solve, &f1, &f2),
                C::num(
                    1e6 * m.seconds_per_linear_solve,
                    &f1.clone().unit(" us"),
                    &f2,
                ),
                C::num(solve_ratio, &f1, &f2),
                C::num(cubed, &f1, &f2),
                C::num(m.iterations, &f2, &Fmt::fixed(3)),
                C::num(m.solver_converged_share, &Fmt::percent(1), &f2),
                C::num(m.converged_share, &Fmt::percent(1), &f2),
                C::num(1e6 * m.seconds_per_solve, &Fmt::int().unit(" us"), &f1),
                C::num(step_ratio, &f1, &f2),
            ])?;
            let k = format!("unknowns.{s}.nb{nb}");
            r.facts()
                .num(
                    format!("{k}.per_contact"),
                    m.unknowns_per_contact,
                    f1.clone(),
                )
                .num(format!("{k}.per_solve"), per_solve, f1.clone())
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
                .num(format!("{k}.linear_solve_ratio"), solve_ratio, f1.clone())
                .num(format!("{k}.cubed_size_ratio"), cubed, Fmt::int())
                .num(format!("{k}.exponent"), exponent, f1.clone())
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
                .num(format!("{k}.step_ratio"), step_ratio, f1.clone());
        }
    }
    r.table(&t)?;
    Ok(())
}
