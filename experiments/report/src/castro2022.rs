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
//! Statistics: [`crate::analysis::castro2022`]. Facts: `sphere.{max_hop_mm, max_hop_time,
//! glide_ratio_mean, glide_ratio_min, glide_ratio_max, glide_steps, slide_time, roll_speed,
//! exact_slide_time, exact_roll_speed}`, `peers.sphere_hop_mm`, `set.{problems, contacts_max,
//! oracle_worst_ratio, sap_converged, sap_iterations_max, sap_e_m_max, lbfgs_converged,
//! lbfgs_iterations_median, ipm_converged, ipm_e_m_max, ipm_over_sap_median,
//! distance_median, distance_max}`.

use contactlab_runs::RunConfig;
use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use super::{number, read_csv_with_header, read_quantities, ReportError};
use crate::analysis::castro2022::{
    clutter_rows, convergence_histories, engine_steps, order_of_accuracy, run_where, set_problems,
    sphere_glide, ClutterRow, EngineRun, SetProblem,
};
use crate::analysis::quantile;
use crate::analysis::{f64s, strs};
use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::store::read_run;

/// Slip (m/s) above which a contact step counts as gliding (see
/// [`crate::analysis::castro2022::sphere_glide`]).
const GLIDE_MIN_SLIP: f64 = 0.1;

/// Writes `reports/castro2022/` from the runs under `data/runs/castro2022/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "castro2022",
        "Castro, Permenter and Han, SAP (the semi-analytic primal solver): reproduction",
        "A. M. Castro, F. N. Permenter and X. Han, *An Unconstrained Convex Formulation of Compliant Contact*, IEEE T-RO 2022.",
    );
    r.text(
        "SAP here is `--formulation sap` (the cost of eq. 24 with the analytic projection of \
         sec. V-A, regularisation from physics by eqs. 29-30, `beta = 1`, `sigma = 1e-3`) solved by \
         `newton-merit` (Algorithm 2: Newton on faer's sparse Cholesky with the symbolic analysis \
         kept, exact line search on `dl/dalpha`). The same cost runs under `lbfgs` (argmin's \
         L-BFGS), and its primal (eq. 19) under `clarabel` (an interior-point method, the paper's \
         Gurobi stand-in), so every comparison below is on identical problems in one process.",
    );
    spring(&mut r)?;
    sphere(&mut r)?;
    set(&mut r, root)?;
    let rows = clutter(&mut r)?;
    sigma(&mut r)?;
    peers(&mut r, root, &rows)?;
    r.finish()?;
    Ok(())
}

/// The spring-cylinder (sec. VI-B): orders of accuracy and energy.
fn spring(r: &mut Report) -> Result<(), ReportError> {
    use crate::analysis::castro2022::{
        cylinder_runs, energy_summaries, order_rows, EnergyWindows, PublishedOrder,
    };
    let published: Vec<PublishedOrder> = super::read_csv_with_header(
        &r.config_file("order_published.csv"),
        &["scheme", "mu", "order", "source"],
    )?
    .into_iter()
    .map(|row| {
        Ok(PublishedOrder {
            scheme: row[0].clone(),
            mu: row[1]
                .parse()
                .map_err(|_| ReportError::Published(format!("mu `{}`", row[1])))?,
            order: row[2]
                .parse()
                .map_err(|_| ReportError::Published(format!("order `{}`", row[2])))?,
        })
    })
    .collect::<Result<_, ReportError>>()?;
    let order = r.load("order.toml")?;
    let energy = r.load("energy.toml")?;
    r.heading(
        2,
        "Spring-cylinder (sec. VI-B): the theta-method's orders and energy",
    );
    r.text(
        "A cylinder on a wall spring rolling (`mu = 1`) or sliding (`mu = 0`) on compliant ground, \
         stepped by the two-stage theta-method (sec. II-D) with SAP. Orders: the slope of the \
         position error `e_q` over 5 s against `dt` (`order.toml`); energy: `E / E0` at \
         `dt = 0.02 s` over 10 minutes (`energy.toml`).",
    );
    let rows = order_rows(&order.steps, &published)?;
    let mut t = Table::new(Some("order.csv"))
        .col("scheme", "scheme")
        .col("mu", "mu")
        .col("order, paper", "order_published")
        .col("order here", "order_reproduced")
        .md_col("time steps (s)");
    for o in &rows {
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
    r.table(&t)?;
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
    r.plot(
        "spring_order.svg",
        "position error against time step (Fig. 7)",
        &Chart::new(
            "Spring-cylinder: position error e_q vs dt (Fig. 7)",
            Axis::log("dt (s)"),
            Axis::log("e_q (m)"),
        )
        .legend_upper_left(),
        &series,
    )?;
    let summaries = energy_summaries(&energy.steps, &EnergyWindows::default())?;
    let paper = super::read_csv_with_header(
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
    for e in &summaries {
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
    r.table(&t)?;
    for mu in [0.0, 1.0] {
        let runs = cylinder_runs(&energy.steps)?;
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
        r.plot(
            &format!("spring_energy_mu{mu}.svg"),
            &format!("E / E0 over the first 2 s, mu = {mu} (Figs. 5-6)"),
            &Chart::new(
                &format!("Spring-cylinder, mu = {mu}: energy, dt = 0.02 s"),
                Axis::linear("time (s)"),
                Axis::linear("E / E0"),
            )
            .lines_only(),
            &series,
        )?;
    }
    Ok(())
}

/// The sliding sphere: hop and glide. The sphere's parameters and its exact slide time and
/// rolling speed (Trinkle's answer for Mylapilli and Jain 2014, example 1) are what the run
/// recorded in its meta.
fn sphere(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("sphere.toml")?;
    let num = |k: &str| run.scene_value(|s| s.number(k));
    let (radius, h, mu, gravity) = (num("radius")?, num("h")?, num("mu")?, num("gravity")?);
    let g = sphere_glide(&run.steps, radius, h, mu, 1e-6, GLIDE_MIN_SLIP)?;
    r.facts().num(
        "sphere.glide_min_slip",
        GLIDE_MIN_SLIP,
        Fmt::fixed(1).unit(" m/s"),
    );
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
    let exact_slide = run.scene_value(|s| s.constant("slide_time_exact"))?;
    let exact_roll = run.scene_value(|s| s.constant("rolling_speed_exact"))?;
    r.heading(2, "The sliding sphere: SAP's glide (sec. V-A)");
    r.text(&format!(
        "Mylapilli and Jain's Example 1 (`v0 = {v0} m/s`, `mu = {}`, `h = {} s`) with SAP. The \
         sphere's step is stated in generalized velocities with the contact's gap and `dt`, so SAP \
         runs its near-rigid regime (`k = inf`, `tau_d = 0`). Sec. V-A predicts that a sliding \
         contact acts as if its distance were `phi - (dt + tau_d) mu |v_t|`: the sphere should \
         glide at `dt mu |v_t|` above the plane, and where a step starts in touch with full slip, \
         leave it at a normal speed of about `mu |v_t|`.",
        mu, h
    ));
    let mut t = Table::new(Some("sphere.csv"))
        .col("quantity", "quantity")
        .col("SAP here", "reproduced")
        .col("exact (rigid, Trinkle)", "exact")
        .col("MuJoCo / Drake (docs/PEERS.md)", "peers");
    let mm = Fmt::fixed(2);
    let s3 = Fmt::fixed(3);
    let ratio = Fmt::fixed(3);
    t.row(vec![
        C::text("largest hop (mm)"),
        C::same(1e3 * g.max_hop, &mm),
        C::same(0.0, &mm),
        C::same(peers_hop_mm, &mm),
    ])?;
    t.row(vec![
        C::text("glide height / (dt mu |slip|): mean over gliding steps"),
        C::same(g.glide_ratio[0], &ratio),
        C::text("-"),
        C::text("-"),
    ])?;
    t.row(vec![
        C::text("slide time (s)"),
        C::same(g.slide_time, &s3),
        C::same(exact_slide, &s3),
        C::text("-"),
    ])?;
    t.row(vec![
        C::text("rolling speed (m/s)"),
        C::same(g.roll_speed, &Fmt::fixed(4)),
        C::same(exact_roll, &Fmt::fixed(4)),
        C::text("-"),
    ])?;
    r.table(&t)?;
    let f = r.facts();
    f.num(
        "sphere.max_hop_mm",
        1e3 * g.max_hop,
        Fmt::fixed(1).unit(" mm"),
    )
    .num(
        "sphere.max_hop_time",
        g.max_hop_time,
        Fmt::fixed(3).unit(" s"),
    )
    .num("sphere.glide_ratio_mean", g.glide_ratio[0], Fmt::fixed(3))
    .num("sphere.glide_ratio_min", g.glide_ratio[1], Fmt::fixed(3))
    .num("sphere.glide_ratio_max", g.glide_ratio[2], Fmt::fixed(3))
    .num("sphere.glide_steps", g.glide_steps as f64, Fmt::int())
    .num(
        "sphere.contact_share",
        100.0 * g.contact_share,
        Fmt::percent(0),
    )
    .num("sphere.slide_time", g.slide_time, Fmt::fixed(3).unit(" s"))
    .num(
        "sphere.roll_speed",
        g.roll_speed,
        Fmt::fixed(4).unit(" m/s"),
    )
    .num(
        "sphere.exact_slide_time",
        exact_slide,
        Fmt::fixed(3).unit(" s"),
    )
    .num(
        "sphere.exact_roll_speed",
        exact_roll,
        Fmt::fixed(4).unit(" m/s"),
    )
    .num(
        "sphere.hop_prediction_mm",
        1e3 * (mu * v0).powi(2) / (2.0 * gravity),
        Fmt::fixed(1).unit(" mm"),
    )
    .num(
        "peers.sphere_hop_mm",
        peers_hop_mm,
        Fmt::fixed(1).unit(" mm"),
    );
    Ok(())
}

/// The solve of `solver` on `p`, if it ran.
fn solve_of<'a>(
    p: &'a SetProblem,
    solver: &str,
) -> Option<&'a crate::analysis::castro2022::SetSolve> {
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
    r.heading(2, "SAP on problems exported from MuJoCo");
    r.text(&format!(
        "The {} generalized problems in `data/mujoco/global/` (MuJoCo 4.0 runs of balls in a box \
         and clutter; MuJoCo's impulses beside each). They carry no stiffness or time step, so SAP \
         runs near-rigid (`phi0 = 0`, `v^ = 0`), from `v*` (no previous step to warm-start from). \
         Solvers (`mujoco_set.toml`): `{}` (Algorithm 2, `eps_a = {:e}`, `eps_r = {:e}`), `{}` \
         (L-BFGS on the same cost, `eps_r = {:e}`, at most {} iterations) and `{}` (Clarabel on \
         the primal with its default tolerances, `1e-8`, its `e_m` measured at its own primal pair \
         `(v, sigma)`; it cannot warm-start and its time includes its set-up). Times are medians \
         of {} solves in interleaved rounds (one under {:.0} ms after an untimed one of the same \
         solver, so that the previous solver's code in cache does not decide it). `distance` is \
         `max |gamma - r_MuJoCo| / max |r_MuJoCo|`: both are regularised, differently (MuJoCo's \
         `solref`/`solimp` against eqs. 29-30), so they are close, not equal. The oracle column \
         (the run's `[reference]`) solves SAP with MuJoCo's own regulariser and `v_ref`: then SAP's \
         dual is MuJoCo's problem, and the impulse error must be inside the ball MuJoCo's own KKT \
         residual allows.",
        rows.len(),
        names[0],
        sap.tol,
        sap.rel_tol,
        names[1],
        lbfgs.rel_tol,
        lbfgs.max_iter,
        names[2],
        cfg.rounds,
        contactlab_runs::problems::WARM_UP_BELOW_SECONDS * 1e3,
    ));
    let mut t = Table::new(Some("mujoco_set.csv"))
        .col("problem", "problem")
        .col("contacts", "contacts")
        .col("dofs", "dofs")
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
    let sci = Fmt::sci(1);
    let ms = Fmt::fixed(3);
    for p in &rows {
        let mut cells = vec![
            C::code(p.name.clone()),
            C::int(p.contacts as i64),
            C::int(p.dofs as i64),
            C::same(p.mujoco_iterations, &Fmt::int()),
        ];
        for n in &names {
            match solve_of(p, n) {
                Some(s) => cells.extend([
                    C::text(s.status.clone()),
                    C::int(s.iterations as i64),
                    C::num(1e3 * s.seconds, &ms, &Fmt::fixed(4)),
                    C::same(s.e_m, &sci),
                ]),
                None => cells.extend((0..4).map(|_| C::text("-"))),
            }
        }
        let dist = solve_of(p, &names[0]).map_or(f64::NAN, |s| s.distance_to_mujoco);
        cells.push(C::same(dist, &Fmt::sci(2)));
        cells.push(C::same(p.oracle_error / p.oracle_bound, &Fmt::sci(1)));
        t.row(cells)?;
    }
    r.table(&t)?;
    set_facts(r, &rows, &names);
    Ok(())
}

fn set_facts(r: &mut Report, rows: &[SetProblem], names: &[String]) {
    let per = |solver: &str, get: &dyn Fn(&crate::analysis::castro2022::SetSolve) -> f64| {
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

/// A time: milliseconds in the markdown, seconds in the CSV (the CSV headers say seconds).
fn seconds_cell(seconds: f64) -> C {
    C::pair(Fmt::fixed(3).show(1e3 * seconds), Fmt::sci(4).show(seconds))
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
fn clutter(r: &mut Report) -> Result<Vec<ClutterRow>, ReportError> {
    let run = r.load("clutter.toml")?;
    let rows = clutter_rows(&run.steps, SAP, IPM)?;
    let speedups = published_speedups(r)?;
    let published_speedup = |bodies: usize, walls: bool| {
        speedups
            .iter()
            .find(|p| p.0 == bodies && p.1 == walls)
            .map_or(f64::NAN, |p| p.2)
    };
    r.heading(2, "Clutter (sec. VI-C)");
    r.text(&format!(
        "Spheres (r = 5 cm) and 10 cm boxes dropped in four columns into the 80 cm container, with \
         and without walls, `k = 1e12`, `tau_d = dt`, `mu = 1`, `dt = 10 ms`, {} steps; contacts \
         from parry3d with up to four points per box manifold. SAP (`eps_a = 1e-16`, \
         `eps_r = 1e-5`) advances the scene, warm-started from the previous velocities; Clarabel \
         solves the very same step problems beside it (`shadow`), from scratch each time \
         (interior points cannot warm-start) and with its set-up in its time. The speed-up is the \
         median over steps of Clarabel's time over SAP's on the same problem. Both solve times \
         leave out the build of SAP's cost that both start from (`A` restricted to the touched \
         trees, the Hessian's pattern, the regularization), which has its own column; the whole \
         step keeps it. The paper's \
         speed-ups are against Gurobi, whose reported time leaves out its set-up; its text gives \
         values only at the ends of Fig. 12.",
        rows.first().map_or(0, |x| x.steps)
    ));
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
    for c in &rows {
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
            C::same(published_speedup(c.bodies, c.walls), &Fmt::int()),
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
    r.table(&t)?;
    let speed = |walls: bool| -> Series {
        (
            format!(
                "here, vs Clarabel, {}",
                if walls { "walls" } else { "no walls" }
            ),
            rows.iter()
                .filter(|c| c.walls == walls)
                .map(|c| (c.bodies as f64, c.speedup))
                .collect(),
        )
    };
    let published: Vec<Series> = [true, false]
        .into_iter()
        .map(|w| {
            (
                format!("paper, vs Gurobi, {}", if w { "walls" } else { "no walls" }),
                speedups
                    .iter()
                    .filter(|p| p.1 == w)
                    .map(|p| (p.0 as f64, p.2))
                    .collect(),
            )
        })
        .collect();
    let bodies = bodies_ticks(&rows);
    let mut series = vec![speed(true), speed(false)];
    series.extend(published);
    r.plot(
        "speedup_vs_bodies.svg",
        "speed-up of SAP over the interior point vs bodies (Fig. 12)",
        &Chart::new(
            "SAP speed-up over an interior point, per step (Fig. 12)",
            Axis::log("bodies").ticks(bodies.clone()),
            Axis::log("IPM time / SAP time"),
        ),
        &series,
    )?;
    let contacts: Vec<Series> = [true, false]
        .into_iter()
        .map(|w| {
            (
                if w { "walls" } else { "no walls" }.to_string(),
                rows.iter()
                    .filter(|c| c.walls == w)
                    .map(|c| (c.bodies as f64, c.contacts_median))
                    .collect(),
            )
        })
        .collect();
    r.plot(
        "contacts_vs_bodies.svg",
        "median contacts per step vs bodies (Fig. 11)",
        &Chart::new(
            "Contacts per step (median) vs bodies (Fig. 11)",
            Axis::log("bodies").ticks(bodies),
            Axis::log("contacts"),
        )
        .legend_upper_left(),
        &contacts,
    )?;
    fig13(r, &rows, &bodies_ticks(&rows))?;
    fig9(r, &run.steps)?;
    fig10(r, &run)?;
    clutter_facts(r, &rows);
    // The simulated span of every clutter run: its steps times its time step.
    let dt = run.scene_value(|s| s.number("dt"))?;
    r.facts().num(
        "clutter.simulated_seconds",
        run.config.scene.steps as f64 * dt,
        Fmt::int(),
    );
    Ok(rows)
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
                    format!("{who}, {}", if w { "walls" } else { "no walls" }),
                    rows.iter()
                        .filter(|c| c.walls == w)
                        .map(|c| (c.bodies as f64, what(c)))
                        .filter(|p| p.1 > 0.0 && p.1.is_finite())
                        .collect(),
                )
            })
            .collect()
    };
    let mut e_m = series(&|c| c.e_m_mean[0], "SAP");
    e_m.extend(series(&|c| c.e_m_mean[1], IPM));
    r.plot(
        "clutter_e_m.svg",
        "mean momentum error e_m per solver vs bodies (Fig. 13, top)",
        &Chart::new(
            "Mean momentum error e_m (eq. 32) vs bodies (Fig. 13)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("e_m"),
        ),
        &e_m,
    )?;
    r.plot(
        "clutter_e_mu.svg",
        "mean complementarity error e_mu of the interior point vs bodies (Fig. 13, bottom)",
        &Chart::new(
            "Mean complementarity error e_mu (eq. 33) vs bodies (Fig. 13)",
            Axis::log("bodies").ticks(bodies.to_vec()),
            Axis::log("e_mu"),
        ),
        &series(&|c| c.e_mu_mean[1], IPM),
    )
}

/// Fig. 10: SAP's convergence on steps 60 and 520 of 40 bodies with walls, from the traces the
/// clutter run keeps at the steps its `[output] traces_at` asks for; the paper's iterations from
/// `convergence_published.csv`.
fn fig10(r: &mut Report, run: &super::builder::RunData) -> Result<(), ReportError> {
    let path = r.config_file("convergence_published.csv");
    let want = ["step", "iterations", "source"];
    let published = read_csv_with_header(&path, &want)?
        .iter()
        .map(|row| {
            Ok((
                number(&path, row, &want, 0)? as usize,
                number(&path, row, &want, 1)?,
            ))
        })
        .collect::<Result<Vec<(usize, f64)>, ReportError>>()?;
    let Some(run_index) = run_where(
        &run.steps,
        &[("n_bodies", "40"), ("walls", "true"), ("seed", "0")],
    )?
    else {
        return Ok(());
    };
    let traces = read_run(
        &run.data_path
            .with_file_name(format!("{}_traces.parquet", run.config.name)),
    )?;
    let h = convergence_histories(&traces, run_index, SAP)?;
    // A cut-down run (CI) may not reach the paper's steps: draw what it reaches.
    let mut at: Vec<usize> = h.iter().map(|p| p.step).collect();
    at.sort_unstable();
    at.dedup();
    if at.is_empty() {
        return Ok(());
    }
    let mut t = Table::new(Some("convergence.csv"))
        .col("step", "step")
        .col("iterations, paper", "iterations_published")
        .col("iterations here", "iterations_reproduced")
        .col("final |D grad|", "final_optimality");
    let mut series = Vec::new();
    for &step in &at {
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
        r.facts()
            .num(
                format!("clutter.fig10.step{step}.iterations"),
                iterations as f64,
                Fmt::int(),
            )
            .num(
                format!("clutter.fig10.step{step}.step"),
                step as f64,
                Fmt::int(),
            )
            .num(
                format!("clutter.fig10.step{step}.iterations_published"),
                paper,
                Fmt::int(),
            );
    }
    r.text(&format!(
        "Fig. 10: SAP's convergence on two steps of the 40-body run with walls (the traces the \
         clutter run kept at the steps its `[output] traces_at` asks for, `{}_traces.parquet`; the \
         optimality measure is eq. 26's `|D grad l|`).",
        run.config.name
    ));
    r.table(&t)?;
    let steps = at
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" and ");
    r.plot(
        "clutter40_convergence.svg",
        &format!("SAP convergence histories on steps {steps} (Fig. 10)"),
        &Chart::new(
            "Clutter, 40 bodies, walls: SAP convergence (Fig. 10)",
            Axis::linear("iteration"),
            Axis::log("|D grad l|"),
        ),
        &series,
    )?;
    Ok(())
}

/// Fig. 9: SAP's iterations and time per step over time, 40 bodies with walls.
fn fig9(r: &mut Report, df: &polars::prelude::DataFrame) -> Result<(), ReportError> {
    let bodies = f64s(df, "n_bodies")?;
    let walls = strs(df, "walls")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let it = f64s(df, "iterations")?;
    let secs = f64s(df, "seconds")?;
    let pick = |label: &str, v: &[f64], scale: f64| -> Vec<(f64, f64)> {
        (0..df.height())
            .filter(|&k| bodies[k] == 40.0 && walls[k] == "true" && solver[k] == label)
            .map(|k| (0.01 * (step[k] + 1.0), scale * v[k]))
            .collect()
    };
    let sap_it = pick(SAP, &it, 1.0);
    if sap_it.is_empty() {
        return Ok(());
    }
    r.plot(
        "clutter40_iterations.svg",
        "iterations per step, 40 bodies with walls (Fig. 9, top)",
        &Chart::new(
            "Clutter, 40 bodies, walls: iterations per step (Fig. 9)",
            Axis::linear("time (s)"),
            Axis::linear("iterations"),
        )
        .lines_only(),
        &[
            ("SAP".to_string(), sap_it),
            ("Clarabel".to_string(), pick(IPM, &it, 1.0)),
        ],
    )?;
    r.plot(
        "clutter40_time.svg",
        "solver time per step, 40 bodies with walls (Fig. 9, bottom)",
        &Chart::new(
            "Clutter, 40 bodies, walls: solver time per step (Fig. 9)",
            Axis::linear("time (s)"),
            Axis::log("ms"),
        )
        .lines_only(),
        &[
            ("SAP".to_string(), pick(SAP, &secs, 1e3)),
            ("Clarabel".to_string(), pick(IPM, &secs, 1e3)),
        ],
    )?;
    Ok(())
}

fn clutter_facts(r: &mut Report, rows: &[ClutterRow]) {
    let f = r.facts();
    for c in rows {
        let k = format!(
            "clutter.n{}.{}",
            c.bodies,
            if c.walls { "walls" } else { "open" }
        );
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

/// One engine's row of `peers_published.csv`: docs/PEERS.md's whole-step times.
struct PublishedPeer {
    bodies: usize,
    engine: String,
    configuration: String,
    seconds: f64,
    source: String,
}

fn published_peers(r: &Report) -> Result<Vec<PublishedPeer>, ReportError> {
    let path = r.config_file("peers_published.csv");
    let want = [
        "scene",
        "bodies",
        "engine",
        "configuration",
        "ms_per_step_median",
        "source",
    ];
    read_csv_with_header(&path, &want)?
        .iter()
        .map(|row| {
            Ok(PublishedPeer {
                bodies: number(&path, row, &want, 1)? as usize,
                engine: row[2].clone(),
                configuration: row[3].clone(),
                seconds: 1e-3 * number(&path, row, &want, 4)?,
                source: row[5].clone(),
            })
        })
        .collect()
}

/// Per-step time on clutter with 40 bodies and walls beside MuJoCo's and Drake's, from the
/// other-engine run `peers.toml`; where it did not measure an engine, `peers_published.csv`'s
/// number with the reason in the `source` column.
fn peers(r: &mut Report, root: &Path, rows: &[ClutterRow]) -> Result<(), ReportError> {
    let Some(ours) = rows.iter().find(|c| c.bodies == 40 && c.walls) else {
        return Ok(());
    };
    let cfg = EnginesConfig::load(&r.config_file("peers.toml"))?;
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    let run = engine_steps(&df)?;
    let published: Vec<PublishedPeer> = published_peers(r)?
        .into_iter()
        .filter(|p| p.bodies == ours.bodies)
        .collect();
    let measured: Vec<_> = match &run {
        EngineRun::Measured(m) => m.iter().filter(|e| e.bodies == ours.bodies).collect(),
        EngineRun::Skipped(_) => Vec::new(),
    };
    let mut engines: Vec<&str> = published.iter().map(|p| p.engine.as_str()).collect();
    for m in &measured {
        if !engines.contains(&m.engine.as_str()) {
            engines.push(&m.engine);
        }
    }
    r.heading(2, "Beside MuJoCo and Drake (clutter, 40 bodies, walls)");
    r.text(
        "Whole-step wall time, median over the run: ours is collision detection, assembly, SAP \
         and the update (`seconds + scene_seconds` of the run); MuJoCo's is `mj_step` (Newton, \
         elliptic cones, soft contacts by its own `solref`/`solimp`); Drake's is one \
         `AdvanceTo` of its SAP with the paper's `k = 1e12`, `tau_d = h`, called from Python \
         (`experiments/peers/bench.py`, run by `peers.toml`). Drake gives one contact point per \
         shape pair, MuJoCo up to four per box pair, we up to four: contacts per step are beside \
         the times. Our run shares the machine's two cores with the sweep's other run. An engine \
         the peers' run did not measure shows docs/PEERS.md's number (`peers_published.csv`, with \
         its own configuration) and says why.",
    );
    let mut t = Table::new(Some("peers.csv"))
        .col("scene", "scene")
        .col("bodies", "bodies")
        .col("engine", "engine")
        .md_col("configuration")
        .col("ms per step (median)", "seconds_per_step_median")
        .col("contacts per step (median)", "contacts_per_step_median")
        .col("source", "source");
    let scene = format!("clutter_n{}", ours.bodies);
    t.row(vec![
        C::code(scene.clone()),
        C::int(ours.bodies as i64),
        C::code("contactlab-sap"),
        C::text("SAP + newton-merit, eps_r = 1e-5"),
        seconds_cell(ours.step_seconds_median),
        C::same(ours.contacts_median, &Fmt::int()),
        C::text("measured in this run"),
    ])?;
    let mut times = Vec::new();
    let mut not_measured = Vec::new();
    for engine in engines {
        let m = measured.iter().find(|m| m.engine == engine);
        if let Some(m) = m.filter(|m| m.error.is_empty()) {
            t.row(vec![
                C::code(m.scene.clone()),
                C::int(m.bodies as i64),
                C::code(engine),
                C::text(m.config.clone()),
                seconds_cell(m.seconds_per_step_median),
                C::same(m.contacts_per_step_median, &Fmt::int()),
                C::text("measured in this run"),
            ])?;
            times.push((engine.to_string(), m.seconds_per_step_median));
            continue;
        }
        not_measured.push(engine);
        let Some(p) = published.iter().find(|p| p.engine == engine) else {
            continue;
        };
        let why = match (&run, m) {
            (EngineRun::Skipped(why), _) => why.clone(),
            (EngineRun::Measured(_), Some(m)) => m.error.clone(),
            (EngineRun::Measured(_), None) => format!(
                "the peers' run has no {engine} row; bench.py leaves Drake out without pydrake"
            ),
        };
        t.row(vec![
            C::code(scene.clone()),
            C::int(p.bodies as i64),
            C::code(engine),
            C::text(p.configuration.clone()),
            seconds_cell(p.seconds),
            C::same(f64::NAN, &Fmt::int()),
            // CSV cells carry no commas.
            C::text(format!(
                "{} (not measured in this run: {})",
                p.source,
                why.replace(',', ";")
            )),
        ])?;
        times.push((engine.to_string(), p.seconds));
    }
    r.table(&t)?;
    let time_of = |engine: &str| {
        times
            .iter()
            .find(|(e, _)| e == engine)
            .map_or(f64::NAN, |p| p.1)
    };
    let f = r.facts();
    f.num(
        "peers.drake_over_ours",
        time_of("drake-sap") / ours.step_seconds_median,
        Fmt::fixed(1),
    )
    .num(
        "peers.ours_over_mujoco",
        ours.step_seconds_median / time_of("mujoco"),
        Fmt::fixed(1),
    )
    .text(
        "peers.source",
        if not_measured.is_empty() {
            "measured in this run".to_string()
        } else if times.len() == not_measured.len() {
            "taken from docs/PEERS.md (not measured in this run)".to_string()
        } else {
            format!(
                "measured in this run; {} taken from docs/PEERS.md",
                not_measured.join(" and ")
            )
        },
    );
    Ok(())
}

/// Figs. 14-15: the slip parameter `sigma`: slip at rest against eq. 31's `sigma mu dt g`, and
/// the mean Newton iterations.
fn sigma(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("sigma.toml")?;
    let df = &run.steps;
    let walls = strs(df, "walls")?;
    let solver = strs(df, "solver")?;
    let step = f64s(df, "step")?;
    let it = f64s(df, "iterations")?;
    let nc = f64s(df, "n_c")?;
    let slip = f64s(df, "mean_slip")?;
    let cond = f64s(df, "hessian_condition")?;
    let cond_scaled = f64s(df, "hessian_condition_scaled")?;
    let steps = run.config.scene.steps as f64;
    let num = |k: &str| run.scene_value(|s| s.number(k));
    let (dt, mu, g) = (num("dt")?, num("mu")?, num("gravity")?);
    let mut labels: Vec<String> = solver.clone();
    labels.sort();
    labels.dedup();
    let sigma_of = |label: &str| -> f64 {
        label
            .strip_prefix("sigma=")
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    labels.sort_by(|a, b| sigma_of(a).total_cmp(&sigma_of(b)));
    r.heading(2, "The slip parameter sigma (Figs. 14-15)");
    r.text(
        "40 clutter bodies, with and without walls, 10 s, SAP with `sigma` from 1e-5 to 1e-1 (each \
         value advances its own copy of the scene). Slip at rest: the mean slip speed over the \
         pressed contacts, averaged over the last 10 steps; the estimate of eq. 31 is \
         `v_s = sigma mu dt g`. Iterations: mean Newton iterations over the steps with contacts. \
         Condition: of SAP's Hessian `H = A + J' G J` at each step's solution (a dense \
         eigen-decomposition, for this study only), its mean over the steps with contacts and its \
         value at the last step (the paper plots the final configuration's); `scaled` is \
         `D H D` with `D = diag(H)^-1/2`, which leaves out the spread of masses and inertias.",
    );
    let mut t = Table::new(Some("sigma.csv"))
        .col("sigma", "sigma")
        .col("walls", "walls")
        .col("slip at rest (m/s)", "slip_at_rest")
        .col("sigma mu dt g (m/s)", "slip_estimate")
        .col("SAP iterations (mean)", "iterations_mean")
        .col("cond(H), mean", "hessian_condition_mean")
        .col("cond(H), last step", "hessian_condition_final")
        .col("cond(DHD), mean", "hessian_condition_scaled_mean");
    let mut slip_series = Vec::new();
    let mut it_series = Vec::new();
    let mut cond_series = Vec::new();
    for w in ["true", "false"] {
        let (mut sl, mut itp, mut cp, mut cps) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for label in &labels {
            let rows: Vec<usize> = (0..df.height())
                .filter(|&k| walls[k] == w && &solver[k] == label)
                .collect();
            let rest: Vec<f64> = rows
                .iter()
                .filter(|&&k| step[k] >= steps - 10.0)
                .map(|&k| slip[k])
                .filter(|v| v.is_finite())
                .collect();
            let active: Vec<f64> = rows
                .iter()
                .filter(|&&k| nc[k] > 0.0)
                .map(|&k| it[k])
                .collect();
            let at_rest = rest.iter().sum::<f64>() / rest.len().max(1) as f64;
            let iters = active.iter().sum::<f64>() / active.len().max(1) as f64;
            let with_contacts: Vec<usize> = rows.iter().copied().filter(|&k| nc[k] > 0.0).collect();
            let mean_of = |v: &[f64]| {
                let x: Vec<f64> = with_contacts
                    .iter()
                    .map(|&k| v[k])
                    .filter(|c| c.is_finite())
                    .collect();
                x.iter().sum::<f64>() / x.len().max(1) as f64
            };
            let (cond_mean, cond_scaled_mean) = (mean_of(&cond), mean_of(&cond_scaled));
            let cond_final = with_contacts
                .iter()
                .max_by(|&&a, &&b| step[a].total_cmp(&step[b]))
                .map_or(f64::NAN, |&k| cond[k]);
            let sg = sigma_of(label);
            t.row(vec![
                C::same(sg, &Fmt::sci(0)),
                C::text(w),
                C::same(at_rest, &Fmt::sci(2)),
                C::same(sg * mu * dt * g, &Fmt::sci(2)),
                C::same(iters, &Fmt::fixed(2)),
                C::same(cond_mean, &Fmt::sci(2)),
                C::same(cond_final, &Fmt::sci(2)),
                C::same(cond_scaled_mean, &Fmt::sci(2)),
            ])?;
            let key = format!(
                "sigma.{}.{}",
                if w == "true" { "walls" } else { "open" },
                label.replace('=', "_")
            );
            r.facts()
                .num(
                    format!("{key}.slip_over_estimate"),
                    at_rest / (sg * mu * dt * g),
                    Fmt::fixed(2),
                )
                .num(format!("{key}.iterations"), iters, Fmt::fixed(1))
                .num(format!("{key}.condition"), cond_mean, Fmt::sci(1))
                .num(
                    format!("{key}.condition_scaled"),
                    cond_scaled_mean,
                    Fmt::sci(1),
                );
            sl.push((sg, at_rest));
            itp.push((sg, iters));
            cp.push((sg, cond_mean));
            cps.push((sg, cond_scaled_mean));
        }
        let name = if w == "true" { "walls" } else { "no walls" };
        slip_series.push((name.to_string(), sl));
        it_series.push((name.to_string(), itp));
        // Fig. 15's claim, cond ~ 1/sigma: the least-squares slope of log cond on log sigma.
        let slope = |pts: &[(f64, f64)]| {
            let (x, y): (Vec<f64>, Vec<f64>) = pts.iter().copied().unzip();
            order_of_accuracy(&x, &y).unwrap_or(f64::NAN)
        };
        let key = if w == "true" { "walls" } else { "open" };
        r.facts()
            .num(
                format!("sigma.{key}.condition_slope"),
                slope(&cp),
                Fmt::fixed(2),
            )
            .num(
                format!("sigma.{key}.condition_scaled_slope"),
                slope(&cps),
                Fmt::fixed(2),
            );
        cond_series.push((format!("{name}, cond(H)"), cp));
        cond_series.push((format!("{name}, cond(DHD)"), cps));
    }
    r.table(&t)?;
    let sigmas: Vec<f64> = labels.iter().map(|l| sigma_of(l)).collect();
    slip_series.push((
        "sigma mu dt g (eq. 31)".to_string(),
        sigmas.iter().map(|s| (*s, s * mu * dt * g)).collect(),
    ));
    r.plot(
        "sigma_slip.svg",
        "mean slip at rest vs sigma (Fig. 14)",
        &Chart::new(
            "Clutter, 40 bodies: mean slip at rest vs sigma (Fig. 14)",
            Axis::log("sigma").ticks(sigmas.clone()),
            Axis::log("slip (m/s)"),
        )
        .legend_upper_left(),
        &slip_series,
    )?;
    r.plot(
        "sigma_iterations.svg",
        "mean SAP iterations vs sigma (Fig. 15, left)",
        &Chart::new(
            "Clutter, 40 bodies: mean Newton iterations vs sigma (Fig. 15)",
            Axis::log("sigma").ticks(sigmas.clone()),
            Axis::linear("iterations"),
        ),
        &it_series,
    )?;
    r.plot(
        "sigma_condition.svg",
        "mean condition number of SAP's Hessian vs sigma (Fig. 15, right)",
        &Chart::new(
            "Clutter, 40 bodies: mean cond(H) vs sigma (Fig. 15)",
            Axis::log("sigma").ticks(sigmas),
            Axis::log("condition number"),
        ),
        &cond_series,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_published_files_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let r = Report::new(&root, "castro2022", "t", "c");
        assert_eq!(
            published_speedups(&r).unwrap(),
            [
                (8, true, 25.0),
                (8, false, 50.0),
                (80, true, 1.0),
                (80, false, 10.0)
            ]
        );
        let peers = published_peers(&r).unwrap();
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
