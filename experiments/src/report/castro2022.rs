//! The Castro, Permenter and Han 2022 (SAP) report (`reports/castro2022/`).
//!
//! * The sliding sphere of Mylapilli and Jain with SAP (`sphere.toml`): the hop and the glide
//!   at `dt mu |v_t|` that sec. V-A predicts, beside MuJoCo's and Drake's hop (`docs/PEERS.md`).
//! * The MuJoCo set (`data/mujoco/`): SAP's Algorithm 2, L-BFGS on SAP's cost and Clarabel on
//!   SAP's primal, solved in this process when the report is generated (small problems, a few
//!   seconds), with MuJoCo's answers as an outside reference (`mujoco_set.csv`).
//!
//! Statistics: [`crate::analysis::castro2022`]. Facts: `sphere.{max_hop_mm, max_hop_time,
//! glide_ratio_mean, glide_ratio_min, glide_ratio_max, glide_steps, slide_time, roll_speed,
//! exact_slide_time, exact_roll_speed}`, `peers.sphere_hop_mm`, `set.{problems, contacts_max,
//! oracle_worst_ratio, sap_converged, sap_iterations_max, sap_e_m_max, lbfgs_converged,
//! lbfgs_iterations_median, ipm_converged, ipm_e_m_max, ipm_over_sap_median,
//! distance_median, distance_max}`.

use std::path::Path;

use super::builder::Report;
use super::findings::Fmt;
use super::table::{Cell as C, Table};
use super::ReportError;
use crate::analysis::castro2022::{mujoco_set, mujoco_set_solvers, sphere_glide, SetProblem};
use crate::analysis::quantile;
use crate::scenes::sphere::SphereConfig;

/// MuJoCo's and Drake's hop on the sliding sphere (mm), `docs/PEERS.md`.
const PEERS_SPHERE_HOP_MM: f64 = 5.6;

/// Slip (m/s) above which a contact step counts as gliding (see
/// [`crate::analysis::castro2022::sphere_glide`]).
const GLIDE_MIN_SLIP: f64 = 0.1;

/// Repeats per solver and problem of the MuJoCo set (the median time is reported).
const SET_REPEATS: usize = 5;

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
    sphere(&mut r)?;
    set(&mut r, root)?;
    r.finish()?;
    Ok(())
}

/// The sliding sphere: hop and glide.
fn sphere(r: &mut Report) -> Result<(), ReportError> {
    let run = r.load("sphere.toml")?;
    let cfg = SphereConfig::from_table(&run.config.scene.params)
        .map_err(|e| ReportError::Published(e.to_string()))?;
    let g = sphere_glide(&run.steps, cfg.radius, cfg.h, cfg.mu, 1e-6, GLIDE_MIN_SLIP)?;
    let v0 = cfg.v0[0];
    let exact_slide = 2.0 * v0 / (7.0 * cfg.mu * cfg.gravity);
    let exact_roll = 5.0 * v0 / 7.0;
    r.heading(2, "The sliding sphere: SAP's glide (sec. V-A)");
    r.text(&format!(
        "Mylapilli and Jain's Example 1 (`v0 = {v0} m/s`, `mu = {}`, `h = {} s`) with SAP. The \
         sphere's step is stated in generalized velocities with the contact's gap and `dt`, so SAP \
         runs its near-rigid regime (`k = inf`, `tau_d = 0`). Sec. V-A predicts that a sliding \
         contact acts as if its distance were `phi - (dt + tau_d) mu |v_t|`: the sphere should \
         glide at `dt mu |v_t|` above the plane, and where a step starts in touch with full slip, \
         leave it at a normal speed of about `mu |v_t|`.",
        cfg.mu, cfg.h
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
        C::same(PEERS_SPHERE_HOP_MM, &mm),
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
        1e3 * (cfg.mu * v0).powi(2) / (2.0 * cfg.gravity),
        Fmt::fixed(1).unit(" mm"),
    )
    .num(
        "peers.sphere_hop_mm",
        PEERS_SPHERE_HOP_MM,
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

/// The MuJoCo set: SAP, L-BFGS and Clarabel, and MuJoCo's answers.
fn set(r: &mut Report, root: &Path) -> Result<(), ReportError> {
    let specs = mujoco_set_solvers();
    let names: Vec<String> = specs.iter().map(|s| s.name()).collect();
    let rows = mujoco_set(&root.join("data/mujoco"), &specs, SET_REPEATS)?;
    r.heading(2, "SAP on problems exported from MuJoCo");
    r.text(&format!(
        "The {} generalized problems in `data/mujoco/global/` (MuJoCo 4.0 runs of balls in a box \
         and clutter; MuJoCo's impulses beside each). They carry no stiffness or time step, so SAP \
         runs near-rigid (`phi0 = 0`, `v^ = 0`), from `v*` (no previous step to warm-start from). \
         Solvers: `{}` (Algorithm 2, `eps_a = 1e-12`, `eps_r = 1e-8`), `{}` (L-BFGS on the same \
         cost, `eps_r = 1e-5`, at most 2000 iterations) and `{}` (Clarabel on the primal, gap and \
         feasibility tolerances `1e-10`; it cannot warm-start and its time includes its set-up). Times are medians of {SET_REPEATS} solves. `distance` is \
         `max |gamma - r_MuJoCo| / max |r_MuJoCo|`: both are regularised, differently (MuJoCo's \
         `solref`/`solimp` against eqs. 29-30), so they are close, not equal. The oracle column \
         solves SAP with MuJoCo's own regulariser and `v_ref`: then SAP's dual is MuJoCo's problem, \
         and the impulse error must be inside the ball MuJoCo's own KKT residual allows.",
        rows.len(),
        names[0],
        names[1],
        names[2]
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
        .num("set.ipm_e_m_max", max(per(ipm, &|s| s.e_m)), Fmt::sci(1))
        .num(
            "set.ipm_over_sap_median",
            quantile(&ratio, 0.5),
            Fmt::fixed(1),
        )
        .num("set.distance_median", quantile(&dist, 0.5), Fmt::sci(1))
        .num("set.distance_max", max(dist), Fmt::sci(1));
}
