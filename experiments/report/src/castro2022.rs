//! The Castro, Permenter and Han 2022 (SAP) report (`reports/castro2022/`). It only reads
//! runs: every number comes from a run under `data/runs/castro2022/` (rows and `.meta.json`
//! with provenance, written by `contactlab run` / `contactlab reproduce castro2022`), or from the
//! published numbers beside the configs (`experiments/configs/castro2022/*_published.csv`).
//!
//! * The spring-cylinder (sec. VI-B, Figs. 5-7; `order.toml`, `energy.toml`).
//! * The sliding sphere of Mylapilli and Jain with SAP (`sphere.toml`): the hop and the glide
//!   at `dt mu |v_t|` that sec. V-A predicts, beside MuJoCo's and Drake's hop
//!   (`sphere_published.csv`, from `docs/PEERS.md`).
//! * The MuJoCo set (`data/mujoco/`): SAP's Algorithm 2, L-BFGS on SAP's cost and Clarabel on
//!   SAP's primal, timed by the problem-set run `mujoco_set.toml` with MuJoCo's answers as an
//!   outside reference and the oracle on MuJoCo's own problem (`mujoco_set.csv`).
//! * Clutter (sec. VI-C, Figs. 9-13; `clutter.toml`), with the speed-ups the paper gives
//!   (`speedup_published.csv`) and Fig. 10's convergence histories from the traces the run keeps
//!   at steps 60 and 520 (`convergence_published.csv` for the paper's iterations).
//! * The slip parameter `sigma` (Figs. 14-15; `sigma.toml`).
//! * Beside MuJoCo and Drake: the other-engine run `peers.toml` (`experiments/peers/bench.py`)
//!   next to our clutter run; where it could not measure, the numbers of `peers_published.csv`
//!   (`docs/PEERS.md`), with the reason in the table's `source` column.
//!
//! Statistics: [`crate::analysis::castro2022`]. The page's prose and layout are
//! `experiments/configs/castro2022/templates/report.md` and the sections it includes
//! ([`crate::template`]); this module computes its tables, plots and facts. Every fact, with its
//! value, is listed in `reports/castro2022/facts.md`.

mod format;
mod peers;
mod sigma;

use contactlab_runs::{RunConfig, SolverSpec};
use std::path::Path;

use crate::analysis::castro2022::{
    clutter_rows, convergence_histories, cylinder_runs, energy_summaries, order_rows, run_where,
    set_problems, sphere_glide, ClutterRow, EnergySummary, EnergyWindows, OrderRow, PublishedOrder,
    SetProblem, SetSolve, SphereGlide,
};
use crate::analysis::quantile;
use crate::analysis::{f64s, strs};
use crate::builder::{Report, RunData};
use crate::csv::{number, read_csv_with_header, read_quantities};
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::plots::{Axis, Chart, Series};
use crate::table::{Cell as C, Table};
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::schema::{problems, steps};
use contactlab_runs::store::read_run;
use format::{plain, sci_of, seconds_cell, walls_key, walls_name};

/// Slip (m/s) above which a contact step counts as gliding (see
/// [`crate::analysis::castro2022::sphere_glide`]).
const GLIDE_MIN_SLIP: f64 = 0.1;

/// Which conditional parts of the page it has, as the templates see them.
#[derive(Debug, Default, serde::Serialize)]
struct Sections {
    /// Fig. 9 (the clutter run has 40 bodies with walls).
    fig9: bool,
    /// Fig. 10, when the clutter run kept traces at steps it reached.
    fig10: Option<Fig10>,
    /// The peers' section (the clutter run has 40 bodies with walls).
    peers: bool,
}

/// Fig. 10's part, as the templates see it.
#[derive(Debug, serde::Serialize)]
struct Fig10 {
    /// The traces' file.
    traces: String,
    /// The steps drawn.
    steps: Vec<usize>,
}

/// The MuJoCo set's three solvers by name, as the templates see them.
#[derive(Debug, serde::Serialize)]
struct SetSolvers {
    /// SAP's Algorithm 2.
    sap: String,
    /// L-BFGS on SAP's cost.
    lbfgs: String,
    /// Clarabel on SAP's primal.
    ipm: String,
}

/// Writes `reports/castro2022/` from the runs under `data/runs/castro2022/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "castro2022")?;
    let mut sections = Sections::default();
    spring(&mut r)?;
    sphere(&mut r)?;
    set(&mut r, root)?;
    let rows = clutter(&mut r, &mut sections)?;
    sigma::sigma(&mut r)?;
    sections.peers = peers::peers(&mut r, root, &rows)?;
    r.show("sections", sections)?;
    r.finish()?;
    Ok(())
}

/// The spring-cylinder (sec. VI-B): orders of accuracy and energy.
fn spring(r: &mut Report) -> Result<(), ReportError> {
    let published = published_orders(r)?;
    let order = r.load("order.toml")?;
    let energy = r.load("energy.toml")?;
    let rows = order_rows(&order.steps, &published)?;
    order_table(r, &rows)?;
    order_plot(r, &rows)?;
    let summaries = energy_summaries(&energy.steps, &EnergyWindows::default())?;
    energy_table(r, &summaries)?;
    energy_plots(r, &energy)?;
    // The span of the energy runs, in minutes.
    let minutes = energy.scene_value(|s| s.number("duration"))? / 60.0;
    let decimals = if minutes.fract() == 0.0 { 0 } else { 2 };
    r.facts()
        .num("spring.energy_minutes", minutes, Fmt::fixed(decimals));
    Ok(())
}

/// The paper's orders of accuracy, from `order_published.csv`.
fn published_orders(r: &Report) -> Result<Vec<PublishedOrder>, ReportError> {
    let parse = |what: &str, text: &str| {
        text.parse::<f64>()
            .map_err(|_| ReportError::Published(format!("{what} `{text}`")))
    };
    read_csv_with_header(
        &r.config_file("order_published.csv"),
        &["scheme", "mu", "order", "source"],
    )?
    .into_iter()
    .map(|row| {
        Ok(PublishedOrder {
            scheme: row[0].clone(),
            mu: parse("mu", &row[1])?,
            order: parse("order", &row[2])?,
        })
    })
    .collect()
}

/// The orders of accuracy beside the paper's (`order.csv`) and their facts.
fn order_table(r: &mut Report, rows: &[OrderRow]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("order.csv"))
        .col("scheme", "scheme")
        .col("mu", "mu")
        .col("order, paper", "order_published")
        .col("order here", "order_reproduced")
        .md_col("time steps (s)");
    for o in rows {
        t.row(vec![
            C::code(o.scheme.clone()),
            C::same(o.mu, &Fmt::int()),
            C::same(o.order_published, &Fmt::int()),
            C::same(o.order_reproduced, &Fmt::fixed(2)),
            C::text(
                o.dts
                    .iter()
                    .map(|d| format!("{d:e}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ])?;
        r.facts().num(
            format!("spring.order.{}.mu{}", o.scheme, o.mu),
            o.order_reproduced,
            Fmt::fixed(2),
        );
    }
    r.show_table("order", &t)
}

/// Fig. 7: the position error against the time step, per scheme and `mu`.
fn order_plot(r: &mut Report, rows: &[OrderRow]) -> Result<(), ReportError> {
    let series: Vec<Series> = rows
        .iter()
        .map(|o| {
            (
                format!("{}, mu = {}", o.scheme, o.mu),
                o.dts
                    .iter()
                    .copied()
                    .zip(o.errors.iter().copied())
                    .collect(),
            )
        })
        .collect();
    r.show_plot(
        "spring_order",
        &Chart::new(
            "Spring-cylinder: e_q vs dt (Fig. 7)",
            Axis::log("dt (s)"),
            Axis::log("e_q (m)"),
        )
        .legend_upper_left(),
        &series,
    )
}

/// The energy bands and losses beside the paper's (`energy.csv`) and their facts.
fn energy_table(r: &mut Report, summaries: &[EnergySummary]) -> Result<(), ReportError> {
    let paper = read_csv_with_header(
        &r.config_file("energy_published.csv"),
        &["scheme", "mu", "quantity", "value", "source"],
    )?;
    let paper_value = |scheme: &str, mu: f64, quantity: &str| -> f64 {
        paper
            .iter()
            .find(|p| p[0] == scheme && p[1].parse::<f64>().ok() == Some(mu) && p[2] == quantity)
            .and_then(|p| p[3].parse().ok())
            .unwrap_or(f64::NAN)
    };
    let mut t = Table::new(Some("energy.csv"))
        .col("scheme", "scheme")
        .col("mu", "mu")
        .col("band, paper (%)", "band_percent_published")
        .col("band, first periods (%)", "band_percent")
        .col("band, whole run (%)", "band_total_percent")
        .col("E / E0 at the end", "final_energy")
        .col(
            "10% lost, paper (min)",
            "minutes_to_lose_10_percent_published",
        )
        .col("time to lose 10% (min)", "minutes_to_lose_10_percent");
    for e in summaries {
        t.row(vec![
            C::code(e.scheme.clone()),
            C::same(e.mu, &Fmt::int()),
            C::same(paper_value(&e.scheme, e.mu, "band_percent"), &Fmt::fixed(2)),
            C::same(100.0 * e.band, &Fmt::fixed(3)),
            C::same(100.0 * e.band_total, &Fmt::fixed(3)),
            C::same(e.final_energy, &Fmt::fixed(4)),
            C::same(
                paper_value(&e.scheme, e.mu, "minutes_to_lose_10_percent"),
                &Fmt::fixed(0),
            ),
            C::same(e.time_to_lose / 60.0, &Fmt::fixed(2)),
        ])?;
        let k = format!("spring.energy.{}.mu{}", e.scheme, e.mu);
        r.facts()
            .num(format!("{k}.band"), 100.0 * e.band, Fmt::fixed(2).unit("%"))
            .num(format!("{k}.final"), e.final_energy, Fmt::fixed(3))
            .num(
                format!("{k}.minutes_to_lose"),
                e.time_to_lose / 60.0,
                Fmt::fixed(1).unit(" min"),
            );
    }
    r.show_table("energy", &t)
}

/// Figs. 5-6: `E / E0` over the first 2 s, per `mu`.
fn energy_plots(r: &mut Report, energy: &RunData) -> Result<(), ReportError> {
    let runs = cylinder_runs(&energy.steps)?;
    for mu in [0.0, 1.0] {
        let series: Vec<Series> = runs
            .iter()
            .filter(|c| c.mu == mu)
            .map(|c| {
                (
                    c.scheme.clone(),
                    c.time
                        .iter()
                        .zip(&c.relative_energy)
                        .filter(|(t, _)| **t <= 2.0)
                        .map(|(t, e)| (*t, *e))
                        .collect(),
                )
            })
            .collect();
        r.show_plot(
            &format!("spring_energy_mu{mu}"),
            &Chart::new(
                &format!("Spring-cylinder energy, mu = {mu}"),
                Axis::linear("time (s)"),
                Axis::linear("E / E0"),
            )
            .lines_only(),
            &series,
        )?;
    }
    Ok(())
}

/// The exact slide time and rolling speed of the sphere (Trinkle's answer for Mylapilli and
/// Jain 2014, example 1), and MuJoCo's and Drake's hop (mm).
struct SphereReference {
    slide_time: f64,
    roll_speed: f64,
    peers_hop_mm: f64,
}

/// The sliding sphere: hop and glide. The sphere's parameters and its exact slide time and
/// rolling speed are what the run recorded in its meta.
fn sphere(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("sphere.toml")?;
    let num = |k: &str| run.scene_value(|s| s.number(k));
    let (radius, h, mu, gravity) = (num("radius")?, num("h")?, num("mu")?, num("gravity")?);
    let g = sphere_glide(&run.steps, radius, h, mu, 1e-6, GLIDE_MIN_SLIP)?;
    let published = r.config_file("sphere_published.csv");
    let peers_hop_mm = read_quantities(&published)?
        .get("peers_max_hop_mm")
        .map(|q| q.0)
        .ok_or_else(|| {
            ReportError::Published(format!("{}: no `peers_max_hop_mm`", published.display()))
        })?;
    let v0 = run
        .scene_value(|s| s.numbers("v0"))?
        .first()
        .copied()
        .ok_or_else(|| ReportError::Published("sphere.toml: an empty `v0` recorded".into()))?;
    let exact = SphereReference {
        slide_time: run.scene_value(|s| s.constant("slide_time_exact"))?,
        roll_speed: run.scene_value(|s| s.constant("rolling_speed_exact"))?,
        peers_hop_mm,
    };
    sphere_table(r, &g, &exact)?;
    sphere_facts(r, &g, &exact);
    r.facts()
        .num("sphere.v0", v0, plain(v0))
        .num("sphere.mu", mu, plain(mu))
        .num("sphere.h", h, plain(h))
        .num(
            "sphere.hop_prediction_mm",
            1e3 * (mu * v0).powi(2) / (2.0 * gravity),
            Fmt::fixed(1).unit(" mm"),
        );
    Ok(())
}

/// The sphere's hop, glide, slide time and rolling speed beside the exact answer and the
/// peers' hop (`sphere.csv`).
fn sphere_table(
    r: &mut Report,
    g: &SphereGlide,
    exact: &SphereReference,
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("sphere.csv"))
        .col("quantity", "quantity")
        .col("SAP here", "reproduced")
        .col("exact (rigid, Trinkle)", "exact")
        .col("MuJoCo / Drake (docs/PEERS.md)", "peers");
    let mm = Fmt::fixed(2);
    let s3 = Fmt::fixed(3);
    t.row(vec![
        C::text("largest hop (mm)"),
        C::same(1e3 * g.max_hop, &mm),
        C::same(0.0, &mm),
        C::same(exact.peers_hop_mm, &mm),
    ])?;
    t.row(vec![
        C::text("glide height/(dt mu |slip|) (mean)"),
        C::same(g.glide_ratio[0], &Fmt::fixed(3)),
        C::text("-"),
        C::text("-"),
    ])?;
    t.row(vec![
        C::text("slide time (s)"),
        C::same(g.slide_time, &s3),
        C::same(exact.slide_time, &s3),
        C::text("-"),
    ])?;
    t.row(vec![
        C::text("rolling speed (m/s)"),
        C::same(g.roll_speed, &Fmt::fixed(4)),
        C::same(exact.roll_speed, &Fmt::fixed(4)),
        C::text("-"),
    ])?;
    r.show_table("sphere", &t)
}

/// The sphere's facts: hop, glide, slide and roll, and the references.
fn sphere_facts(r: &mut Report, g: &SphereGlide, exact: &SphereReference) {
    let (s, mm, ms) = (
        Fmt::fixed(3).unit(" s"),
        Fmt::fixed(1).unit(" mm"),
        Fmt::fixed(4).unit(" m/s"),
    );
    r.facts()
        .num(
            "sphere.glide_min_slip",
            GLIDE_MIN_SLIP,
            Fmt::fixed(1).unit(" m/s"),
        )
        .num("sphere.max_hop_mm", 1e3 * g.max_hop, mm.clone())
        .num("sphere.max_hop_time", g.max_hop_time, s.clone())
        .num("sphere.glide_ratio_mean", g.glide_ratio[0], Fmt::fixed(3))
        .num("sphere.glide_ratio_min", g.glide_ratio[1], Fmt::fixed(3))
        .num("sphere.glide_ratio_max", g.glide_ratio[2], Fmt::fixed(3))
        .num("sphere.glide_steps", g.glide_steps as f64, Fmt::int())
        .num(
            "sphere.contact_share",
            100.0 * g.contact_share,
            Fmt::percent(0),
        )
        .num("sphere.slide_time", g.slide_time, s.clone())
        .num("sphere.roll_speed", g.roll_speed, ms.clone())
        .num("sphere.exact_slide_time", exact.slide_time, s)
        .num("sphere.exact_roll_speed", exact.roll_speed, ms)
        .num("peers.sphere_hop_mm", exact.peers_hop_mm, mm);
}

/// The solve of `solver` on `p`, if it ran.
fn solve_of<'a>(p: &'a SetProblem, solver: &str) -> Option<&'a SetSolve> {
    p.solves.iter().find(|s| s.solver == solver)
}

/// The MuJoCo set: SAP, L-BFGS and Clarabel, and MuJoCo's answers, from the problem-set run
/// `mujoco_set.toml`.
fn set(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let path = r.config_file("mujoco_set.toml");
    let cfg = ProblemsConfig::load(&path)?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let rows = set_problems(&df)?;
    // The three solvers by their drivers: SAP's Algorithm 2, L-BFGS, the interior point.
    let spec = |optimizer: &str| {
        cfg.solvers
            .iter()
            .find(|s| s.optimizer.name == optimizer)
            .ok_or_else(|| {
                ReportError::Published(format!(
                    "{}: no solver with optimizer `{optimizer}`",
                    path.display()
                ))
            })
    };
    let (sap, lbfgs, ipm) = (spec("newton-merit")?, spec("lbfgs")?, spec("clarabel")?);
    let names: Vec<String> = [sap, lbfgs, ipm].iter().map(|s| s.name()).collect();
    set_settings(r, &cfg, sap, lbfgs);
    r.show(
        "set_solvers",
        SetSolvers {
            sap: names[0].clone(),
            lbfgs: names[1].clone(),
            ipm: names[2].clone(),
        },
    )?;
    set_table(r, &rows, &names)?;
    set_facts(r, &rows, &names);
    Ok(())
}

/// The settings of the MuJoCo set's run the prose quotes: tolerances, budget, rounds.
fn set_settings(r: &mut Report, cfg: &ProblemsConfig, sap: &SolverSpec, lbfgs: &SolverSpec) {
    r.facts()
        .num("set.sap_tol", sap.tol, sci_of(sap.tol))
        .num("set.sap_rel_tol", sap.rel_tol, sci_of(sap.rel_tol))
        .num("set.lbfgs_rel_tol", lbfgs.rel_tol, sci_of(lbfgs.rel_tol))
        .num("set.lbfgs_max_iter", lbfgs.max_iter as f64, Fmt::int())
        .num("set.rounds", cfg.rounds as f64, Fmt::int())
        .num(
            "set.warm_up_ms",
            contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3,
            Fmt::int(),
        );
}

/// Every problem of the MuJoCo set with each solver's status, iterations, time and `e_m`
/// (`mujoco_set.csv`).
fn set_table(r: &mut Report, rows: &[SetProblem], names: &[String]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("mujoco_set.csv"))
        .col(problems::PROBLEM, problems::PROBLEM)
        .col("contacts", "contacts")
        .col(problems::DOFS, problems::DOFS)
        .col("MuJoCo iterations", "mujoco_iterations");
    for (label, key) in [("SAP", "sap"), ("L-BFGS", "lbfgs"), ("Clarabel", "ipm")] {
        t = t
            .col(&format!("{label} status"), &format!("{key}_status"))
            .col(&format!("{label} iterations"), &format!("{key}_iterations"))
            .col(&format!("{label} ms"), &format!("{key}_ms"))
            .col(&format!("{label} e_m"), &format!("{key}_e_m"));
    }
    t = t
        .col("SAP distance to MuJoCo", "sap_distance_to_mujoco")
        .col("oracle error / bound", "oracle_error_over_bound");
    for p in rows {
        let mut cells = vec![
            C::code(p.name.clone()),
            C::int(p.contacts as i64),
            C::int(p.dofs as i64),
            C::same(p.mujoco_iterations, &Fmt::int()),
        ];
        for n in names {
            match solve_of(p, n) {
                Some(s) => cells.extend([
                    C::text(s.status.clone()),
                    C::int(s.iterations as i64),
                    C::num(1e3 * s.seconds, &Fmt::fixed(3), &Fmt::fixed(4)),
                    C::same(s.e_m, &Fmt::sci(1)),
                ]),
                None => cells.extend((0..4).map(|_| C::text("-"))),
            }
        }
        let dist = solve_of(p, &names[0]).map_or(f64::NAN, |s| s.distance_to_mujoco);
        cells.push(C::same(dist, &Fmt::sci(2)));
        cells.push(C::same(p.oracle_error / p.oracle_bound, &Fmt::sci(1)));
        t.row(cells)?;
    }
    r.show_table("mujoco_set", &t)
}
/// The MuJoCo set's facts: convergence, iterations, accuracy, speed and distance to MuJoCo.
fn set_facts(r: &mut Report, rows: &[SetProblem], names: &[String]) {
    let per = |solver: &str, get: &dyn Fn(&SetSolve) -> f64| {
        rows.iter()
            .filter_map(|p| solve_of(p, solver).map(get))
            .collect::<Vec<f64>>()
    };
    let converged = |solver: &str| {
        per(solver, &|s| f64::from(u8::from(s.status == "converged")))
            .iter()
            .sum::<f64>()
    };
    let max = |v: Vec<f64>| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
    let (sap, lbfgs, ipm) = (&names[0], &names[1], &names[2]);
    let ratio: Vec<f64> = rows
        .iter()
        .filter_map(|p| Some(solve_of(p, ipm)?.seconds / solve_of(p, sap)?.seconds))
        .collect();
    let dist = per(sap, &|s| s.distance_to_mujoco);
    let f = r.facts();
    f.num("set.problems", rows.len() as f64, Fmt::int())
        .num(
            "set.contacts_max",
            rows.iter().map(|p| p.contacts).max().unwrap_or(0) as f64,
            Fmt::int(),
        )
        .num(
            "set.oracle_worst_ratio",
            max(rows
                .iter()
                .map(|p| p.oracle_error / p.oracle_bound)
                .collect()),
            Fmt::sci(1),
        )
        .num("set.sap_converged", converged(sap), Fmt::int())
        .num(
            "set.sap_iterations_max",
            max(per(sap, &|s| s.iterations as f64)),
            Fmt::int(),
        )
        .num("set.sap_e_m_max", max(per(sap, &|s| s.e_m)), Fmt::sci(1))
        .num("set.lbfgs_converged", converged(lbfgs), Fmt::int())
        .num(
            "set.lbfgs_iterations_median",
            quantile(&per(lbfgs, &|s| s.iterations as f64), 0.5),
            Fmt::int(),
        )
        .num("set.ipm_converged", converged(ipm), Fmt::int())
        .num(
            "set.ipm_iterations_min",
            -max(per(ipm, &|s| -(s.iterations as f64))),
            Fmt::int(),
        )
        .num(
            "set.ipm_iterations_max",
            max(per(ipm, &|s| s.iterations as f64)),
            Fmt::int(),
        )
        .num("set.ipm_e_m_max", max(per(ipm, &|s| s.e_m)), Fmt::sci(1))
        .num(
            "set.ipm_over_sap_median",
            quantile(&ratio, 0.5),
            Fmt::fixed(1),
        )
        .num("set.distance_median", quantile(&dist, 0.5), Fmt::sci(1))
        .num("set.distance_max", max(dist), Fmt::sci(1));
}

/// The clutter config's solver labels.
const SAP: &str = "SAP";
const IPM: &str = "Clarabel";

/// The paper's speed-ups of SAP over Gurobi (Fig. 12) where its text gives one, from
/// `speedup_published.csv`: (bodies, walls, speed-up).
fn published_speedups(r: &Report) -> Result<Vec<(usize, bool, f64)>, ReportError> {
    let path = r.config_file("speedup_published.csv");
    let want = ["bodies", "walls", "speedup", "source"];
    read_csv_with_header(&path, &want)?
        .iter()
        .map(|row| {
            let walls = match row[1].as_str() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(ReportError::Published(format!(
                        "{}: walls `{other}` is neither true nor false",
                        path.display()
                    )))
                }
            };
            Ok((
                number(&path, row, &want, 0)? as usize,
                walls,
                number(&path, row, &want, 2)?,
            ))
        })
        .collect()
}

/// Clutter (sec. VI-C): SAP along the trajectory, Clarabel on the same step problems.
fn clutter(r: &mut Report, sections: &mut Sections) -> Result<Vec<ClutterRow>, ReportError> {
    let run = r.load("clutter.toml")?;
    let rows = clutter_rows(&run.steps, SAP, IPM)?;
    let speedups = published_speedups(r)?;
    clutter_table(r, &rows, &speedups)?;
    let bodies = bodies_ticks(&rows);
    speedup_plot(r, &rows, &speedups, &bodies)?;
    contacts_plot(r, &rows, &bodies)?;
    fig13(r, &rows, &bodies)?;
    sections.fig9 = fig9(r, &run.steps)?;
    sections.fig10 = fig10(r, &run)?;
    clutter_facts(r, &rows);
    // The simulated span of every clutter run: its steps times its time step.
    let dt = run.scene_value(|s| s.number("dt"))?;
    r.facts()
        .num(
            "clutter.simulated_seconds",
            run.config.scene.steps as f64 * dt,
            Fmt::int(),
        )
        .num(
            "clutter.steps",
            rows.first().map_or(0, |x| x.steps) as f64,
            Fmt::int(),
        );
    Ok(rows)
}

/// The paper's speed-up at `bodies` with or without `walls`, NaN where its text gives none.
fn published_speedup(speedups: &[(usize, bool, f64)], bodies: usize, walls: bool) -> f64 {
    speedups
        .iter()
        .find(|p| p.0 == bodies && p.1 == walls)
        .map_or(f64::NAN, |p| p.2)
}

/// Every clutter run: contacts, both solvers' iterations, times, accuracy and the speed-up
/// beside the paper's (`clutter.csv`).
fn clutter_table(
    r: &mut Report,
    rows: &[ClutterRow],
    speedups: &[(usize, bool, f64)],
) -> Result<(), ReportError> {
    let mut t = Table::new(Some("clutter.csv"))
        .col("bodies", "bodies")
        .col("walls", "walls")
        .col("steps", "steps")
        .col("contacts (median)", "contacts_median")
        .col("SAP iterations (mean)", "sap_iterations_mean")
        .col("SAP iterations, 2nd half", "sap_iterations_steady_mean")
        .col("SAP iterations (max)", "sap_iterations_max")
        .col("SAP not converged", "sap_unconverged_steps")
        .col("SAP ms/solve (median)", "sap_seconds_per_step_median")
        .col("build ms (median)", "build_seconds_per_step_median")
        .col("whole step ms (median)", "step_seconds_median")
        .col("scene share", "scene_share")
        .col("Clarabel ms/solve (median)", "ipm_seconds_per_step_median")
        .col("Clarabel iterations (mean)", "ipm_iterations_mean")
        .col("Clarabel not converged", "ipm_unconverged_steps")
        .col("speed-up, paper (vs Gurobi)", "speedup_published_vs_gurobi")
        .col("speed-up here (vs Clarabel)", "speedup_reproduced")
        .col("SAP e_m max", "e_m_max_sap")
        .col("Clarabel e_m max", "e_m_max_ipm")
        .col("SAP e_m mean", "e_m_mean_sap")
        .col("Clarabel e_m mean", "e_m_mean_ipm")
        .col("SAP e_mu max", "e_mu_max_sap")
        .col("Clarabel e_mu mean", "e_mu_mean_ipm")
        .col("SAP run, s", "sap_run_seconds");
    for c in rows {
        t.row(vec![
            C::int(c.bodies as i64),
            C::text(c.walls.to_string()),
            C::int(c.steps as i64),
            C::same(c.contacts_median, &Fmt::int()),
            C::same(c.sap_iterations[0], &Fmt::fixed(2)),
            C::same(c.sap_iterations[1], &Fmt::fixed(2)),
            C::same(c.sap_iterations[2], &Fmt::int()),
            C::int(c.sap_unconverged as i64),
            seconds_cell(c.sap_seconds_median),
            seconds_cell(c.build_seconds_median),
            seconds_cell(c.step_seconds_median),
            C::same(c.scene_share, &Fmt::fixed(2)),
            seconds_cell(c.ipm_seconds_median),
            C::same(c.ipm_iterations_mean, &Fmt::fixed(1)),
            C::int(c.ipm_unconverged as i64),
            C::same(published_speedup(speedups, c.bodies, c.walls), &Fmt::int()),
            C::same(c.speedup, &Fmt::fixed(1)),
            C::same(c.e_m_max[0], &Fmt::sci(1)),
            C::same(c.e_m_max[1], &Fmt::sci(1)),
            C::same(c.e_m_mean[0], &Fmt::sci(1)),
            C::same(c.e_m_mean[1], &Fmt::sci(1)),
            C::same(c.e_mu_max[0], &Fmt::sci(1)),
            C::same(c.e_mu_mean[1], &Fmt::sci(1)),
            C::same(c.sap_run_seconds, &Fmt::fixed(2)),
        ])?;
    }
    r.show_table("clutter", &t)
}

/// Fig. 12: the speed-up over the interior point against bodies, ours and the paper's.
fn speedup_plot(
    r: &mut Report,
    rows: &[ClutterRow],
    speedups: &[(usize, bool, f64)],
    bodies: &[f64],
) -> Result<(), ReportError> {
    let here = |walls: bool| -> Series {
        (
            format!("here, vs Clarabel, {}", walls_name(walls)),
            rows.iter()
                .filter(|c| c.walls == walls)
                .map(|c| (c.bodies as f64, c.speedup))
                .collect(),
        )
    };
    let paper = |walls: bool| -> Series {
        (
            format!("paper, vs Gurobi, {}", walls_name(walls)),
            speedups
                .iter()
                .filter(|p| p.1 == walls)
                .map(|p| (p.0 as f64, p.2))
                .collect(),
        )
    };
    r.show_plot(
        "speedup_vs_bodies",
        &Chart::new(
            "SAP speed-up per step (Fig. 12)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("IPM time / SAP time"),
        ),
        &[here(true), here(false), paper(true), paper(false)],
    )
}

/// Fig. 11: the median contacts per step against bodies.
fn contacts_plot(r: &mut Report, rows: &[ClutterRow], bodies: &[f64]) -> Result<(), ReportError> {
    let contacts: Vec<Series> = [true, false]
        .into_iter()
        .map(|w| {
            (
                walls_name(w).to_string(),
                rows.iter()
                    .filter(|c| c.walls == w)
                    .map(|c| (c.bodies as f64, c.contacts_median))
                    .collect(),
            )
        })
        .collect();
    r.show_plot(
        "contacts_vs_bodies",
        &Chart::new(
            "Median contacts per step (Fig. 11)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("contacts"),
        )
        .legend_upper_left(),
        &contacts,
    )
}

/// The distinct body counts of the clutter rows, for an axis' ticks.
fn bodies_ticks(rows: &[ClutterRow]) -> Vec<f64> {
    let mut b: Vec<f64> = rows.iter().map(|c| c.bodies as f64).collect();
    b.sort_by(f64::total_cmp);
    b.dedup();
    b
}

/// Fig. 13: mean `e_m` of both solvers and mean `e_mu` of the interior point vs bodies (SAP's
/// `e_mu` is zero by construction, as in the paper, and is in the table as a check).
fn fig13(r: &mut Report, rows: &[ClutterRow], bodies: &[f64]) -> Result<(), ReportError> {
    let series = |what: &dyn Fn(&ClutterRow) -> f64, who: &str| -> Vec<Series> {
        [true, false]
            .into_iter()
            .map(|w| {
                (
                    format!("{who}, {}", walls_name(w)),
                    rows.iter()
                        .filter(|c| c.walls == w)
                        .map(|c| (c.bodies as f64, what(c)))
                        .filter(|p| p.1 > 0.0 && p.1.is_finite())
                        .collect(),
                )
            })
            .collect()
    };
    let mut e_m = series(&|c| c.e_m_mean[0], SAP);
    e_m.extend(series(&|c| c.e_m_mean[1], IPM));
    r.show_plot(
        "clutter_e_m",
        &Chart::new(
            "Mean e_m vs bodies (Fig. 13)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("e_m"),
        ),
        &e_m,
    )?;
    r.show_plot(
        "clutter_e_mu",
        &Chart::new(
            "Mean e_mu vs bodies (Fig. 13)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("e_mu"),
        ),
        &series(&|c| c.e_mu_mean[1], IPM),
    )
}

/// The paper's iterations at Fig. 10's steps, from `convergence_published.csv`: (step,
/// iterations).
fn published_convergence(r: &Report) -> Result<Vec<(usize, f64)>, ReportError> {
    let path = r.config_file("convergence_published.csv");
    let want = [steps::STEP, steps::ITERATIONS, "source"];
    read_csv_with_header(&path, &want)?
        .iter()
        .map(|row| {
            Ok((
                number(&path, row, &want, 0)? as usize,
                number(&path, row, &want, 1)?,
            ))
        })
        .collect()
}

/// Fig. 10: SAP's convergence on steps 60 and 520 of 40 bodies with walls, from the traces the
/// clutter run keeps at the steps its `[output] traces_at` asks for; the paper's iterations from
/// `convergence_published.csv`. `None` when the run has no such traces.
fn fig10(r: &mut Report, run: &RunData) -> Result<Option<Fig10>, ReportError> {
    let published = published_convergence(r)?;
    let Some(run_index) = run_where(
        &run.steps,
        &[("n_bodies", "40"), ("walls", "true"), ("seed", "0")],
    )?
    else {
        return Ok(None);
    };
    let traces = format!("{}_traces.parquet", run.config.name);
    let h = convergence_histories(
        &read_run(&run.data_path.with_file_name(&traces))?,
        run_index,
        SAP,
    )?;
    // A cut-down run (CI) may not reach the paper's steps: draw what it reaches.
    let mut steps: Vec<usize> = h.iter().map(|p| p.step).collect();
    steps.sort_unstable();
    steps.dedup();
    if steps.is_empty() {
        return Ok(None);
    }
    let mut t = Table::new(Some("convergence.csv"))
        .col(steps::STEP, steps::STEP)
        .col("iterations, paper", "iterations_published")
        .col("iterations here", "iterations_reproduced")
        .col("final |D grad|", "final_optimality");
    let mut series = Vec::new();
    for &step in &steps {
        let paper = published
            .iter()
            .find(|p| p.0 == step)
            .map_or(f64::NAN, |p| p.1);
        let pts: Vec<_> = h.iter().filter(|p| p.step == step).collect();
        let iterations = pts.last().map_or(0, |p| p.iteration);
        t.row(vec![
            C::int(step as i64),
            C::same(paper, &Fmt::int()),
            C::int(iterations as i64),
            C::same(pts.last().map_or(f64::NAN, |p| p.optimality), &Fmt::sci(1)),
        ])?;
        series.push((
            format!("step {step}"),
            pts.iter()
                .filter(|p| p.optimality.is_finite() && p.optimality > 0.0)
                .map(|p| (p.iteration as f64, p.optimality))
                .collect::<Vec<_>>(),
        ));
        let k = format!("clutter.fig10.step{step}");
        r.facts()
            .num(format!("{k}.iterations"), iterations as f64, Fmt::int())
            .num(format!("{k}.step"), step as f64, Fmt::int())
            .num(format!("{k}.iterations_published"), paper, Fmt::int());
    }
    r.show_table("convergence", &t)?;
    r.show_plot(
        "clutter40_convergence",
        &Chart::new(
            "SAP convergence, 40 bodies (Fig. 10)",
            Axis::linear("iteration"),
            Axis::log("|D grad l|"),
        ),
        &series,
    )?;
    Ok(Some(Fig10 { traces, steps }))
}

/// Fig. 9: SAP's iterations and time per step over time, 40 bodies with walls; `false` when
/// the run has none.
fn fig9(r: &mut Report, df: &polars::prelude::DataFrame) -> Result<bool, ReportError> {
    let bodies = f64s(df, "n_bodies")?;
    let walls = strs(df, "walls")?;
    let solver = strs(df, steps::SOLVER)?;
    let step = f64s(df, steps::STEP)?;
    let it = f64s(df, steps::ITERATIONS)?;
    let secs = f64s(df, steps::SECONDS)?;
    let pick = |label: &str, v: &[f64], scale: f64| -> Vec<(f64, f64)> {
        (0..df.height())
            .filter(|&k| bodies[k] == 40.0 && walls[k] == "true" && solver[k] == label)
            .map(|k| (0.01 * (step[k] + 1.0), scale * v[k]))
            .collect()
    };
    let sap_it = pick(SAP, &it, 1.0);
    if sap_it.is_empty() {
        return Ok(false);
    }
    r.show_plot(
        "clutter40_iterations",
        &Chart::new(
            "Clutter-40 iterations per step (Fig. 9)",
            Axis::linear("time (s)"),
            Axis::linear(steps::ITERATIONS),
        )
        .lines_only(),
        &[
            (SAP.to_string(), sap_it),
            (IPM.to_string(), pick(IPM, &it, 1.0)),
        ],
    )?;
    r.show_plot(
        "clutter40_time",
        &Chart::new(
            "Clutter-40 solver time (Fig. 9)",
            Axis::linear("time (s)"),
            Axis::log("ms"),
        )
        .lines_only(),
        &[
            (SAP.to_string(), pick(SAP, &secs, 1e3)),
            (IPM.to_string(), pick(IPM, &secs, 1e3)),
        ],
    )?;
    Ok(true)
}
/// Per clutter run: SAP's iterations, speed-up, build share, contacts, times and accuracy;
/// and the extremes over all runs.
fn clutter_facts(r: &mut Report, rows: &[ClutterRow]) {
    let f = r.facts();
    for c in rows {
        let k = format!("clutter.n{}.{}", c.bodies, walls_key(c.walls));
        f.num(
            format!("{k}.iterations_mean"),
            c.sap_iterations[0],
            Fmt::fixed(2),
        )
        .num(
            format!("{k}.iterations_steady"),
            c.sap_iterations[1],
            Fmt::fixed(2),
        )
        .num(
            format!("{k}.iterations_max"),
            c.sap_iterations[2],
            Fmt::int(),
        )
        .num(
            format!("{k}.sap_unconverged"),
            c.sap_unconverged as f64,
            Fmt::int(),
        )
        .num(format!("{k}.speedup"), c.speedup, Fmt::fixed(1))
        .num(
            format!("{k}.build_share"),
            100.0 * c.build_seconds_median / c.step_seconds_median,
            Fmt::percent(0),
        )
        .num(format!("{k}.contacts"), c.contacts_median, Fmt::int())
        .num(
            format!("{k}.sap_run_seconds"),
            c.sap_run_seconds,
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            format!("{k}.step_ms"),
            1e3 * c.step_seconds_median,
            Fmt::fixed(2).unit(" ms"),
        )
        .num(
            format!("{k}.scene_share"),
            100.0 * c.scene_share,
            Fmt::percent(0),
        )
        .num(format!("{k}.e_m_max_sap"), c.e_m_max[0], Fmt::sci(1))
        .num(format!("{k}.e_m_max_ipm"), c.e_m_max[1], Fmt::sci(1))
        .num(format!("{k}.e_m_mean_sap"), c.e_m_mean[0], Fmt::sci(1))
        .num(format!("{k}.e_m_mean_ipm"), c.e_m_mean[1], Fmt::sci(1))
        .num(format!("{k}.e_mu_mean_ipm"), c.e_mu_mean[1], Fmt::sci(1))
        .num(
            format!("{k}.ipm_unconverged"),
            c.ipm_unconverged as f64,
            Fmt::int(),
        );
    }
    let most = |v: &dyn Fn(&ClutterRow) -> f64| rows.iter().map(v).fold(f64::NAN, f64::max);
    f.num(
        "clutter.e_m_max_sap_all",
        most(&|c| c.e_m_max[0]),
        Fmt::sci(1),
    )
    .num(
        "clutter.e_m_max_ipm_all",
        most(&|c| c.e_m_max[1]),
        Fmt::sci(1),
    )
    .num(
        "clutter.e_mu_max_sap_all",
        most(&|c| c.e_mu_max[0]),
        Fmt::sci(0),
    )
    .num(
        "clutter.e_mu_mean_ipm_max",
        most(&|c| c.e_mu_mean[1]),
        Fmt::sci(1),
    );
    let small: Vec<f64> = rows
        .iter()
        .filter(|c| c.bodies <= 40)
        .map(|c| c.speedup)
        .collect();
    f.num(
        "clutter.speedup_min_to_40",
        small.iter().copied().fold(f64::INFINITY, f64::min),
        Fmt::fixed(1),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Facts;
    use crate::template::{render, Shown};

    /// The facts the templates write, at the shipped configs' values.
    fn shipped_facts() -> Facts {
        let mut f = Facts::new();
        for (name, v) in [
            ("config.order.scene.params.duration", 5.0),
            ("spring.energy_minutes", 10.0),
            ("sphere.v0", 2.0),
            ("set.problems", 15.0),
            ("set.lbfgs_max_iter", 2000.0),
            ("set.rounds", 5.0),
            ("set.warm_up_ms", 2.0),
            ("config.clutter.scene.params.mu", 1.0),
            ("clutter.steps", 1000.0),
            ("config.sigma.scene.params.n_bodies", 40.0),
            ("sigma.simulated_seconds", 10.0),
            ("sigma.rest_steps", 10.0),
        ] {
            f.num(name, v, Fmt::int());
        }
        for (name, v) in [
            ("config.energy.scene.params.dt", 0.02),
            ("sphere.mu", 0.2),
            ("sphere.h", 0.001),
        ] {
            f.num(name, v, plain(v));
        }
        for (name, v) in [
            ("set.sap_tol", 1e-12),
            ("set.sap_rel_tol", 1e-8),
            ("set.lbfgs_rel_tol", 1e-5),
            ("config.clutter.scene.params.stiffness", 1e12),
            ("config.clutter.driver.tol", 1e-16),
            ("config.clutter.driver.rel_tol", 1e-5),
            ("sigma.sigma_min", 1e-5),
            ("sigma.sigma_max", 1e-1),
        ] {
            f.num(name, v, sci_of(v));
        }
        f
    }

    #[test]
    fn the_shipped_templates_write_the_shipped_settings_and_leave_out_what_did_not_run() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/castro2022/templates");
        let mut shown = Shown::default();
        for t in [
            "order",
            "energy",
            "sphere",
            "mujoco_set",
            "clutter",
            "sigma",
        ] {
            shown.table(t, format!("| {t} |\n")).unwrap();
        }
        for p in [
            "spring_order",
            "spring_energy_mu0",
            "spring_energy_mu1",
            "speedup_vs_bodies",
            "contacts_vs_bodies",
            "clutter_e_m",
            "clutter_e_mu",
            "sigma_slip",
            "sigma_iterations",
            "sigma_condition",
        ] {
            shown.plot(p, format!("{p}.svg")).unwrap();
        }
        let solvers = SetSolvers {
            sap: "SAP".into(),
            lbfgs: "SAP-LBFGS".into(),
            ipm: "Clarabel".into(),
        };
        shown.value("set_solvers", solvers).unwrap();
        shown.value("sections", Sections::default()).unwrap();
        let page = render(&dir, &shipped_facts(), &shown)
            .unwrap()
            .unwrap()
            .text;
        // As reports/castro2022/README.md writes them from the shipped configs.
        for want in [
            "over 5 s against `dt` (`order.toml`); energy: `E / E0` at `dt = 0.02 s` over 10 \
             minutes (`energy.toml`).",
            "(`v0 = 2 m/s`, `mu = 0.2`, `h = 0.001 s`)",
            "The 15 generalized problems",
            "`SAP` (Algorithm 2, `eps_a = 1e-12`, `eps_r = 1e-8`), `SAP-LBFGS` (L-BFGS on the \
             same cost, `eps_r = 1e-5`, at most 2000 iterations) and `Clarabel`",
            "Times are medians of 5 solves in interleaved rounds (one under 2 ms",
            "`k = 1e12`, `tau_d = dt`, `mu = 1`, `dt = 10 ms`, 1000 steps;",
            "SAP (`eps_a = 1e-16`, `eps_r = 1e-5`) advances",
            "\n40 clutter bodies, with and without walls, 10 s, SAP with `sigma` from 1e-5 to \
             1e-1",
            "averaged over the last 10 steps;",
            "| sigma |\n\n![mean slip at rest vs sigma (Fig. 14)](sigma_slip.svg)",
        ] {
            assert!(page.contains(want), "`{want}` in\n{page}");
        }
        for left_out in ["Fig. 9", "Fig. 10:", "## Beside MuJoCo and Drake"] {
            assert!(!page.contains(left_out), "`{left_out}` in\n{page}");
        }
    }

    #[test]
    fn the_shipped_published_files_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let r = Report::new(&root, "castro2022").unwrap();
        assert_eq!(
            published_speedups(&r).unwrap(),
            [
                (8, true, 25.0),
                (8, false, 50.0),
                (80, true, 1.0),
                (80, false, 10.0)
            ]
        );
        let peers = peers::published_peers(&r).unwrap();
        let ms: Vec<(usize, &str, f64)> = peers
            .iter()
            .map(|p| (p.bodies, p.engine.as_str(), 1e3 * p.seconds))
            .collect();
        for (want, got) in [
            (40, "mujoco", 0.097),
            (40, "drake-sap", 2.54),
            (80, "mujoco", 1.86),
            (80, "drake-sap", 12.8),
        ]
        .iter()
        .zip(&ms)
        {
            assert_eq!((want.0, want.1), (got.0, got.1));
            assert!((want.2 - got.2).abs() < 1e-12, "{ms:?}");
        }
        assert!(peers.iter().all(|p| p.source.contains("docs/PEERS.md")));
        let q = read_quantities(&r.config_file("sphere_published.csv")).unwrap();
        assert_eq!(q["peers_max_hop_mm"].0, 5.6);
        let want = ["step", "iterations", "source"];
        let fig10 =
            read_csv_with_header(&r.config_file("convergence_published.csv"), &want).unwrap();
        let steps: Vec<(&str, &str)> = fig10
            .iter()
            .map(|row| (row[0].as_str(), row[1].as_str()))
            .collect();
        assert_eq!(steps, [("60", "21"), ("520", "5")]);
        assert!(fig10.iter().all(|row| row[2].contains("Fig. 10")));
    }
}
