//! The Mylapilli and Jain 2014 report (`reports/mylapilli2014/`): the paper's section
//! "Simulation results".
//!
//! * Sphere on a fixed horizontal plane, Example 1 (Fig. 2: friction directions aligned with
//!   the motion) and Example 2 (Fig. 3: directions at 45 degrees): per solver the slide time,
//!   the final rolling speed, the friction force while sliding and the largest hop, beside the
//!   exact answer (Trinkle, the paper's reference 2), the paper's reading of its figures
//!   (`sphere_published.csv`) and the hop of the regularised solvers (`peers_published.csv`,
//!   from `docs/PEERS.md`); plots of `v_x`, `omega_y` (and `v_y`, `omega_x` for Example 2)
//!   against the exact solution.
//! * Twelve-link pendulum (Figs. 5-8 and the run times in the text after Fig. 8,
//!   `pendulum_published.csv`): the last link's height and vertical velocity for the five
//!   solvers, whole-run times beside the published ones, how far the trajectories drift apart,
//!   and convergence per solver.
//! * The same pendulum with skewed hinges (`pendulum_spatial.toml`, the scene's `hinge_skew`):
//!   the chain leaves the plane, and the same drift statistics say whether the MLCP and MNCP
//!   groups separate there.
//!
//! The scenes' parameters and the exact answer are what the runs recorded (the `.meta.json`'s
//! scene parameters and constants, and the sphere's `*_exact` columns): this module rebuilds
//! no scene.
//!
//! The page's prose and layout are the templates in `experiments/configs/mylapilli2014/
//! templates/` (`report.md` and one file per section, [`crate::template`]); this module
//! computes its tables, plots and facts (statistics: [`crate::analysis::mylapilli2014`]).
//! Every fact, with its value, is listed in `reports/mylapilli2014/facts.md`: the sphere's
//! exact answer and setup (`sphere.exact.*`, `sphere.setup.*`), per example and solver
//! (`sphere.ex2.MLCP-FB-RLM.slide_time`), the pendulum per solver and over the run
//! (`pendulum.MNCP-PLM.converged`, `pendulum.impact.gain`), the non-planar chain
//! (`spatial.*`) and the paper's numbers (`published.*`).

use std::path::Path;

use contactlab_runs::schema::steps;

use super::builder::{Report, RunData};
use super::findings::{Facts, Fmt};
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use crate::analysis::mylapilli2014::{
    drift, driver_series, largest_rise, max_gap, pendulum_stats, sphere_metrics_of, Drift,
    DriverSeries, PendulumStats, SphereMetrics, ACCURATE_RESIDUAL, PENDULUM_COLUMNS, SLIP_TOL,
    SPHERE_COLUMNS,
};
use crate::analysis::{quantile, Spread};
use crate::csv::{number, optional_number, read_csv_with_header, read_quantities};
use crate::error::ReportError;

/// Gaps (m) between last-link heights at which the pendulum drift is timed.
pub const DRIFT_THRESHOLDS: [f64; 4] = [1e-9, 1e-6, 1e-4, 1e-3];

/// The groups are apart at a step when the closest MLCP-MNCP pair is this many times farther
/// apart than the farthest pair within either group ...
const SEPARATION_FACTOR: f64 = 10.0;
/// ... and farther apart than this (m): below it the heights agree to the stopping tolerances.
const SEPARATION_FLOOR: f64 = 1e-6;

/// The last sphere is at rest once it stays this close to its rest height (m).
const REST_BAND: f64 = 1e-3;

/// The sphere configs, in example order.
const SPHERE_CONFIGS: [(u8, &str); 2] = [(1, "sphere_example1.toml"), (2, "sphere_example2.toml")];

/// A sphere run's scene as it recorded it (Mylapilli and Jain 2014, examples 1-2): its
/// parameters and the constants of Trinkle's exact answer.
#[derive(Debug, Clone, PartialEq)]
struct SphereScene {
    mass: f64,
    radius: f64,
    v0: [f64; 3],
    omega0: [f64; 3],
    mu: f64,
    h: f64,
    duration: f64,
    /// The slide time `t*`.
    slide_time_exact: f64,
    /// The rolling speed `|v(t*)|`.
    rolling_speed_exact: f64,
    /// The friction while sliding, `mu m g`.
    friction_exact: f64,
    /// The tangential diagonal of `W`, `1/m + R^2 / I`.
    w_tangent: f64,
}

/// A recorded vector parameter of three numbers.
fn vector3(run: &RunData, key: &str) -> Result<[f64; 3], ReportError> {
    let v = run.scene_value(|s| s.numbers(key))?;
    v.as_slice().try_into().map_err(|_| {
        ReportError::Published(format!(
            "{}: scene parameter `{key}` has {} numbers, not 3",
            run.file,
            v.len()
        ))
    })
}

impl SphereScene {
    /// The scene `run`'s meta recorded.
    fn read(run: &RunData) -> Result<SphereScene, ReportError> {
        let num = |k: &str| run.scene_value(|s| s.number(k));
        let constant = |k: &str| run.scene_value(|s| s.constant(k));
        Ok(SphereScene {
            mass: num("mass")?,
            radius: num("radius")?,
            v0: vector3(run, "v0")?,
            omega0: vector3(run, "omega0")?,
            mu: num("mu")?,
            h: num("h")?,
            duration: num("duration")?,
            slide_time_exact: constant("slide_time_exact")?,
            rolling_speed_exact: constant("rolling_speed_exact")?,
            friction_exact: constant("friction_exact")?,
            w_tangent: constant("w_tangent")?,
        })
    }
}

/// The pendulum run's scene as it recorded it (Mylapilli and Jain 2014, Figs. 4-8).
#[derive(Debug, Clone, PartialEq)]
struct PendulumScene {
    n_links: i64,
    link_length: f64,
    sphere_radius: f64,
    sphere_mass: f64,
    pivot_height: f64,
    floor_thickness: f64,
    wall_x: f64,
    mu: f64,
    restitution: f64,
    initial_angle: f64,
    initial_rate: f64,
    h: f64,
    /// The height of a sphere's centre resting on the floor.
    rest_height: f64,
}

impl PendulumScene {
    /// The scene `run`'s meta recorded.
    fn read(run: &RunData) -> Result<PendulumScene, ReportError> {
        let num = |k: &str| run.scene_value(|s| s.number(k));
        Ok(PendulumScene {
            n_links: run.scene_value(|s| s.integer("n_links"))?,
            link_length: num("link_length")?,
            sphere_radius: num("sphere_radius")?,
            sphere_mass: num("sphere_mass")?,
            pivot_height: num("pivot_height")?,
            floor_thickness: num("floor_thickness")?,
            wall_x: num("wall_x")?,
            mu: num("mu")?,
            restitution: num("restitution")?,
            initial_angle: num("initial_angle")?,
            initial_rate: num("initial_rate")?,
            h: num("h")?,
            rest_height: run.scene_value(|s| s.constant("rest_height"))?,
        })
    }
}

/// What the paper reports for one solver of one sphere example (NaN where it gives nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct SpherePublished {
    /// Example (1: Fig. 2, 2: Fig. 3).
    pub example: u8,
    /// The driver label in the sphere configs.
    pub solver: String,
    /// The paper's name of the solver.
    pub paper_solver: String,
    /// Slide time (s).
    pub slide_time: f64,
    /// Rolling speed (m/s).
    pub roll_speed: f64,
    /// Where in the paper the values are.
    pub source: String,
}

/// Reads `sphere_published.csv` (`example,solver,paper_solver,slide_time_s,roll_speed,source`;
/// empty cells where the paper gives no value).
pub fn read_sphere_published(path: &Path) -> Result<Vec<SpherePublished>, ReportError> {
    let want = [
        "example",
        steps::SOLVER,
        "paper_solver",
        "slide_time_s",
        "roll_speed",
        "source",
    ];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| {
            Ok(SpherePublished {
                example: number(path, r, &want, 0)? as u8,
                solver: r[1].clone(),
                paper_solver: r[2].clone(),
                slide_time: optional_number(path, r, &want, 3)?,
                roll_speed: optional_number(path, r, &want, 4)?,
                source: r[5].clone(),
            })
        })
        .collect()
}

/// Published whole-run times: `(driver label, paper's solver name, seconds)`.
pub fn read_published_times(path: &Path) -> Result<Vec<(String, String, f64)>, ReportError> {
    let want = [steps::SOLVER, "paper_solver", "published_seconds"];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| Ok((r[0].clone(), r[1].clone(), number(path, r, &want, 2)?)))
        .collect()
}

/// Every `stride`-th point of `(t, y)` so that at most `max_points` remain (plus the last).
fn thin(t: &[f64], y: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(y.len());
    let stride = n.div_ceil(max_points.max(1)).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n).step_by(stride).map(|k| (t[k], y[k])).collect();
    if n > 0 && pts.last() != Some(&(t[n - 1], y[n - 1])) {
        pts.push((t[n - 1], y[n - 1]));
    }
    pts
}

/// The largest value per window of `n / max_points` steps, at the window's last time: an
/// envelope that keeps spikes when thinning a gap series.
fn envelope(t: &[f64], y: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(y.len());
    let w = n.div_ceil(max_points.max(1)).max(1);
    (0..n)
        .step_by(w)
        .map(|k0| {
            let k1 = (k0 + w).min(n);
            (t[k1 - 1], y[k0..k1].iter().copied().fold(0.0, f64::max))
        })
        .collect()
}

/// The sphere plots: (column, axis label, index into the exact answer's columns).
const SPHERE_PLOTS: [(&str, &str, usize); 4] = [
    ("vx", "v_x (m/s)", 0),
    ("omega_y", "omega_y (rad/s)", 1),
    ("vy", "v_y (m/s)", 2),
    ("omega_x", "omega_x (rad/s)", 3),
];

/// The pendulum's whole-run plots.
const PENDULUM_PLOTS: [(&str, &str, &str); 3] = [
    ("last_z", "last-link height (m)", "Fig. 5"),
    ("last_vz", "last-link v_z (m/s)", "Fig. 7"),
    ("energy", "energy (J)", "energy"),
];

/// The pendulum's last-second plots.
const PENDULUM_END_PLOTS: [(&str, &str, &str); 2] = [
    ("last_z", "last-link height (m)", "Fig. 6"),
    ("last_vz", "last-link v_z (m/s)", "Fig. 8"),
];

/// Numbers too small for fixed decimals: one decimal in scientific notation.
fn sci() -> Fmt {
    Fmt::sci(1)
}

/// A drift table's time: `0.144 s`, or `never` for NaN.
fn secs_or_never(t: f64) -> String {
    if t.is_nan() {
        "never".into()
    } else {
        format!("{t:.3} s")
    }
}

/// The format Rust's `{}` writes `x` in (`1`, `0.25`), for a parameter quoted as the
/// scene recorded it.
fn as_written(x: f64) -> Fmt {
    let text = x.to_string();
    Fmt::fixed(text.split_once('.').map_or(0, |(_, d)| d.len()))
}

/// Adds fact `name` = `x` in the format Rust's `{}` writes it.
fn written(facts: &mut Facts, name: &str, x: f64) {
    facts.num(name, x, as_written(x));
}

/// Writes `reports/mylapilli2014/` from the runs under `root/data/runs/mylapilli2014/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "mylapilli2014")?;
    sphere_section(&mut r)?;
    let (mlcp, mncp) = pendulum_section(&mut r)?;
    non_planar_section(&mut r, &mlcp, &mncp)?;
    r.finish()?;
    Ok(())
}

/// One sphere example as the templates see it.
#[derive(Debug, Clone, serde::Serialize)]
struct ExampleShown {
    /// 1 (Fig. 2) or 2 (Fig. 3).
    example: u8,
    /// Its plots' quantities (`vx`, `omega_y`, ...): plot `sphere_example<e>_<quantity>`.
    plots: Vec<&'static str>,
}

/// What one sphere example gives the section beside its table, plots and facts.
struct ExampleOutcome {
    shown: ExampleShown,
    max_hop: f64,
    /// Example 2's solvers that the paper calls MLCP (the 45-degree error's rows).
    mlcp_45: Vec<String>,
}

/// What every row of one sphere example shares.
struct ExampleRef<'a> {
    example: u8,
    scene: &'a SphereScene,
    /// The peers' hop (m).
    peers_hop: f64,
}

/// The sphere section's tables, plots, facts and values: per example (its table and plots)
/// and over both (`sphere.csv`, the exact answer, the 45-degree MLCP rows).
fn sphere_section(r: &mut Report) -> Result<(), ReportError> {
    let published = read_sphere_published(&r.config_file("sphere_published.csv"))?;
    let peers = read_quantities(&r.config_file("peers_published.csv"))?;
    let peers_hop = peers.get("sphere_hop_m").map(|v| v.0).ok_or_else(|| {
        ReportError::Published("peers_published.csv: no row for quantity `sphere_hop_m`".into())
    })?;
    let mut all_csv = sphere_csv();
    let mut shown = Vec::new();
    let (mut mlcp_45, mut max_hop_all, mut setup) = (Vec::new(), 0.0f64, None);
    for (example, file) in SPHERE_CONFIGS {
        let run = r.load(file)?;
        let scene = SphereScene::read(&run)?;
        let x = ExampleRef {
            example,
            scene: &scene,
            peers_hop,
        };
        let out = sphere_example(r, &run, &x, &published, &mut all_csv)?;
        max_hop_all = max_hop_all.max(out.max_hop);
        mlcp_45.extend(out.mlcp_45);
        shown.push(out.shown);
        setup = Some(scene);
    }
    r.show_table("sphere", &all_csv)?;
    r.show("sphere_examples", shown)?;
    r.show("mlcp_45", mlcp_45)?;
    let Some(sc) = setup else {
        return Ok(());
    };
    sphere_exact_facts(r.facts(), &sc);
    r.facts()
        .num("sphere.max_hop", max_hop_all, Fmt::fixed(1).unit(" m"))
        .num(
            "peers.sphere_hop_mm",
            1e3 * peers_hop,
            Fmt::fixed(1).unit(" mm"),
        );
    Ok(())
}

/// `sphere.csv`: one row per solver and example, CSV only.
fn sphere_csv() -> Table {
    let mut t = Table::new(Some("sphere.csv"));
    for h in [
        steps::SOLVER,
        "example",
        "slide_time_s",
        "roll_speed",
        "max_hop_m",
        "exact_slide_time_s",
        "exact_roll_speed",
        "published_slide_time_s",
        "published_roll_speed",
        "peers_hop_m",
        "friction_while_sliding_n",
        "exact_friction_n",
        "max_abs_vy",
        "max_abs_omega_x",
        "max_error_vx",
    ] {
        t = t.csv_col(h);
    }
    t
}

/// The columns of `sphere_example<e>.csv` and its table.
fn sphere_example_table(example: u8) -> Table {
    Table::new(Some(&format!("sphere_example{example}.csv")))
        .col(steps::SOLVER, steps::SOLVER)
        .col("slide time (s)", "slide_time_s")
        .col("slide time (s)", "published_slide_time_s")
        .col("slide time (s)", "exact_slide_time_s")
        .col("rolling speed (m/s)", "roll_speed")
        .col("rolling speed (m/s)", "published_roll_speed")
        .col("rolling speed (m/s)", "exact_roll_speed")
        .col("friction while sliding (N)", "friction_while_sliding_n")
        .col("friction while sliding (N)", "exact_friction_n")
        .col("max hop (m)", "max_hop_m")
        .col("max hop (m)", "peers_hop_m")
        .col("max abs v_y / omega_x", "max_abs_vy")
        .col("max abs v_y / omega_x", "max_abs_omega_x")
        .col("max error v_x / omega_y", "max_error_vx")
        .col("max error v_x / omega_y", "max_error_omega_y")
        .col("converged (own test)", "converged_percent")
        .col("iterations / step", "iterations_per_contact_step")
}

/// One solver's curves of a sphere example: its label, times and the plotted columns in
/// [`SPHERE_PLOTS`] order.
type SphereCurves = (String, Vec<f64>, [Vec<f64>; 4]);

/// One sphere example: its table (and rows of `sphere.csv`), plots and facts.
fn sphere_example(
    r: &mut Report,
    run: &RunData,
    x: &ExampleRef,
    published: &[SpherePublished],
    all_csv: &mut Table,
) -> Result<ExampleOutcome, ReportError> {
    let (example, sc) = (x.example, x.scene);
    let series = driver_series(&run.steps, &SPHERE_COLUMNS)?;
    let exact = exact_curves(&series)?;
    let mut t = sphere_example_table(example);
    let mut curves: Vec<SphereCurves> = Vec::new();
    let (mut exact_solvers, mut max_err_vx, mut max_hop, mut sideways) =
        (0.0, 0.0f64, 0.0f64, 0.0f64);
    let mut mlcp_45 = Vec::new();
    for s in &series {
        let m = sphere_metrics_of(s, sc.radius, sc.h)?;
        let p = published
            .iter()
            .find(|p| p.example == example && p.solver == m.solver);
        sphere_rows(&mut t, all_csv, x, &m, p)?;
        sphere_solver_facts(r.facts(), x, &m, p);
        // The exact answer: slip ends in the step containing t*.
        let step_end = (sc.slide_time_exact / sc.h).ceil() * sc.h;
        if (m.slide_time - step_end).abs() < 0.5 * sc.h {
            exact_solvers += 1.0;
            max_err_vx = max_err_vx.max(m.max_err_vx);
        }
        max_hop = max_hop.max(m.max_hop);
        let is_mlcp = p.is_some_and(|p| p.paper_solver.starts_with("MLCP"));
        if is_mlcp {
            sideways = sideways.max(m.max_vy).max(m.max_omega_x);
            if example == 2 {
                mlcp_45.push(m.solver.clone());
            }
        }
        curves.push(solver_curves(s, sc.h)?);
    }
    let k = format!("sphere.ex{example}");
    r.facts()
        .num(format!("{k}.exact_solvers"), exact_solvers, Fmt::int())
        .num(format!("{k}.solvers"), series.len() as f64, Fmt::int())
        .num(format!("{k}.max_err_vx"), max_err_vx, sci())
        .num(format!("{k}.max_hop"), max_hop, Fmt::fixed(1).unit(" m"))
        .num(format!("{k}.max_sideways"), sideways, sci());
    written(r.facts(), &format!("{k}.step_ms"), sc.h * 1e3);
    r.show_table(&format!("sphere_example{example}"), &t)?;
    let plots = sphere_plots(r, example, &curves, &exact)?;
    Ok(ExampleOutcome {
        shown: ExampleShown { example, plots },
        max_hop,
        mlcp_45,
    })
}

/// The exact answer at each step's end, as the run recorded it (the same for every driver),
/// in [`SPHERE_PLOTS`] order.
fn exact_curves(series: &[DriverSeries]) -> Result<[Vec<f64>; 4], ReportError> {
    let Some(s) = series.first() else {
        return Ok(Default::default());
    };
    Ok([
        s.get("vx_exact")?.to_vec(),
        s.get("omega_y_exact")?.to_vec(),
        s.get("vy_exact")?.to_vec(),
        s.get("omega_x_exact")?.to_vec(),
    ])
}

/// One solver's plotted curves, at the end of each step of `h`.
fn solver_curves(s: &DriverSeries, h: f64) -> Result<SphereCurves, ReportError> {
    Ok((
        s.solver.clone(),
        s.step.iter().map(|&k| (k + 1) as f64 * h).collect(),
        [
            s.get("vx")?.to_vec(),
            s.get("omega_y")?.to_vec(),
            s.get("vy")?.to_vec(),
            s.get("omega_x")?.to_vec(),
        ],
    ))
}

/// One solver's row of its example's table and of `sphere.csv`.
fn sphere_rows(
    t: &mut Table,
    all_csv: &mut Table,
    x: &ExampleRef,
    m: &SphereMetrics,
    p: Option<&SpherePublished>,
) -> Result<(), ReportError> {
    let sc = x.scene;
    let (exact_t, exact_v, mu_m_g) = (
        sc.slide_time_exact,
        sc.rolling_speed_exact,
        sc.friction_exact,
    );
    let (pub_t, pub_v) = p.map_or((f64::NAN, f64::NAN), |p| (p.slide_time, p.roll_speed));
    let (f3, f4, f6, s3) = (Fmt::fixed(3), Fmt::fixed(4), Fmt::fixed(6), Fmt::sci(3));
    t.row(vec![
        C::code(m.solver.clone()),
        C::num(m.slide_time, &f3, &f4),
        C::num(pub_t, &f3, &f3),
        C::num(exact_t, &f4, &f6),
        C::num(m.roll_speed, &f4, &f6),
        C::num(pub_v, &f3, &f3),
        C::num(exact_v, &f4, &f6),
        C::num(-m.friction_x, &f4, &f6),
        C::num(mu_m_g, &f4, &f6),
        C::num(m.max_hop, &sci(), &s3),
        C::same(x.peers_hop, &f4),
        C::num(m.max_vy, &sci(), &s3),
        C::num(m.max_omega_x, &sci(), &s3),
        C::num(m.max_err_vx, &sci(), &s3),
        C::num(m.max_err_omega_y, &sci(), &s3),
        C::num(100.0 * m.converged_share, &Fmt::percent(1), &Fmt::fixed(2)),
        C::num(m.mean_iterations, &Fmt::fixed(2), &f4),
    ])?;
    all_csv.row(vec![
        C::text(m.solver.clone()),
        C::int(x.example),
        C::same(m.slide_time, &f4),
        C::same(m.roll_speed, &f6),
        C::same(m.max_hop, &s3),
        C::same(exact_t, &f6),
        C::same(exact_v, &f6),
        C::same(pub_t, &f3),
        C::same(pub_v, &f3),
        C::same(x.peers_hop, &f4),
        C::same(-m.friction_x, &f6),
        C::same(mu_m_g, &f6),
        C::same(m.max_vy, &s3),
        C::same(m.max_omega_x, &s3),
        C::same(m.max_err_vx, &s3),
    ])
}

/// The plots of one sphere example against the exact solution (`v_x` and `omega_y`, and
/// for Example 2 also `v_y` and `omega_x`); returns their quantities.
fn sphere_plots(
    r: &mut Report,
    example: u8,
    curves: &[SphereCurves],
    exact: &[Vec<f64>; 4],
) -> Result<Vec<&'static str>, ReportError> {
    let quantities = if example == 1 {
        &SPHERE_PLOTS[..2]
    } else {
        &SPHERE_PLOTS[..]
    };
    let times: Vec<f64> = curves.first().map(|c| c.1.clone()).unwrap_or_default();
    for (name, label, i) in quantities {
        let series: Vec<Series> = curves
            .iter()
            .map(|(s, t, v)| {
                (
                    s.clone(),
                    t.iter().copied().zip(v[*i].iter().copied()).collect(),
                )
            })
            .collect();
        let reference: Series = (
            "exact".into(),
            times
                .iter()
                .copied()
                .zip(exact[*i].iter().copied())
                .collect(),
        );
        let chart = Chart::new(
            &format!("Sphere example {example}: {label} vs exact"),
            Axis::linear("t (s)"),
            Axis::linear(label),
        )
        .lines_only()
        .reference(reference);
        r.show_plot(&format!("sphere_example{example}_{name}"), &chart, &series)?;
    }
    Ok(quantities.iter().map(|q| q.0).collect())
}

/// The facts of one sphere solver, with the paper's values for it and, for an MLCP solver
/// at 45 degrees, how far it is off.
fn sphere_solver_facts(
    facts: &mut Facts,
    x: &ExampleRef,
    m: &SphereMetrics,
    p: Option<&SpherePublished>,
) {
    let mu_m_g = x.scene.friction_exact;
    let k = format!("sphere.ex{}.{}", x.example, m.solver);
    for (name, v, fmt) in [
        ("slide_time", m.slide_time, Fmt::fixed(3).unit(" s")),
        ("roll_speed", m.roll_speed, Fmt::fixed(4).unit(" m/s")),
        ("friction", m.friction_norm, Fmt::fixed(4).unit(" N")),
        ("friction_ratio", m.friction_norm / mu_m_g, Fmt::fixed(3)),
        ("max_hop", m.max_hop, sci()),
        ("max_vy", m.max_vy, sci()),
        ("max_omega_x", m.max_omega_x, sci()),
        ("max_err_vx", m.max_err_vx, sci()),
        ("max_err_omega_y", m.max_err_omega_y, sci()),
        ("converged", 100.0 * m.converged_share, Fmt::percent(1)),
        (steps::ITERATIONS, m.mean_iterations, Fmt::fixed(2)),
    ] {
        facts.num(format!("{k}.{name}"), v, fmt);
    }
    let Some(p) = p else {
        return;
    };
    let k = format!("published.sphere.ex{}.{}", x.example, m.solver);
    facts
        .num(format!("{k}.slide_time"), p.slide_time, Fmt::fixed(3))
        .num(format!("{k}.roll_speed"), p.roll_speed, Fmt::fixed(3));
    if x.example == 2 && p.paper_solver.starts_with("MLCP") {
        let exact_t = x.scene.slide_time_exact;
        let k = format!("sphere.mlcp45.{}", m.solver);
        facts
            .num(
                format!("{k}.slide_time_change"),
                100.0 * (m.slide_time - exact_t) / exact_t,
                Fmt::percent(0).signed(),
            )
            .num(
                format!("{k}.max_err_vx"),
                m.max_err_vx,
                Fmt::fixed(3).unit(" m/s"),
            );
    }
}

/// The exact answer (Trinkle) and the setup of the sphere scene `sc`, as it recorded them.
fn sphere_exact_facts(facts: &mut Facts, sc: &SphereScene) {
    let (exact_t, exact_v, mu_m_g) = (
        sc.slide_time_exact,
        sc.rolling_speed_exact,
        sc.friction_exact,
    );
    let sqrt2 = std::f64::consts::SQRT_2;
    let secs = |d: usize| Fmt::fixed(d).unit(" s");
    let newtons = || Fmt::fixed(3).unit(" N");
    for (name, v, fmt) in [
        ("slide_time", exact_t, secs(4)),
        (
            "slide_time_step_end",
            (exact_t / sc.h).ceil() * sc.h,
            secs(3),
        ),
        ("roll_speed", exact_v, Fmt::fixed(6).unit(" m/s")),
        ("friction", mu_m_g, newtons()),
        ("slide_time_x_sqrt2", exact_t * sqrt2, secs(4)),
        ("slide_time_over_sqrt2", exact_t / sqrt2, secs(3)),
        ("friction_over_sqrt2", mu_m_g / sqrt2, newtons()),
        ("friction_x_sqrt2", mu_m_g * sqrt2, newtons()),
        ("one_over_sqrt2", 1.0 / sqrt2, Fmt::fixed(3)),
        // Tangential block of W for a solid sphere, 1/m + R^2 / I with I = 2 m R^2 / 5.
        ("w_tangent", sc.w_tangent, Fmt::fixed(1)),
    ] {
        facts.num(format!("sphere.exact.{name}"), v, fmt);
    }
    facts
        .num("sphere.slip_tol", SLIP_TOL, Fmt::sci(0))
        .num("sphere.setup.friction", mu_m_g, Fmt::fixed(4).unit(" N"))
        .num(
            "sphere.setup.roll_speed",
            exact_v,
            Fmt::fixed(4).unit(" m/s"),
        );
    for (name, x) in [
        ("mass", sc.mass),
        ("radius", sc.radius),
        ("mu", sc.mu),
        ("step_ms", sc.h * 1e3),
        ("duration", sc.duration),
    ] {
        written(facts, &format!("sphere.setup.{name}"), x);
    }
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        written(facts, &format!("sphere.setup.v0.{axis}"), sc.v0[i]);
        written(facts, &format!("sphere.setup.omega0.{axis}"), sc.omega0[i]);
    }
}

/// The pendulum's tables, plots and facts; returns the paper's two groups (MLCP, MNCP) by
/// their labels.
fn pendulum_section(r: &mut Report) -> Result<(Vec<String>, Vec<String>), ReportError> {
    let run = r.load("pendulum.toml")?;
    let pc = PendulumScene::read(&run)?;
    let series = driver_series(&run.steps, &PENDULUM_COLUMNS)?;
    let stats = pendulum_stats(&series)?;
    let published = read_published_times(&r.config_file("pendulum_published.csv"))?;
    // The paper's two groups, by its solver names, among the solvers that ran.
    let group = |prefix: &str| -> Vec<String> {
        published
            .iter()
            .filter(|p| p.1.starts_with(prefix) && series.iter().any(|s| s.solver == p.0))
            .map(|p| p.0.clone())
            .collect()
    };
    let (mlcp, mncp) = (group("MLCP-FB"), group("MNCP"));
    pendulum_setup_facts(r.facts(), &pc, run.config.scene.steps);
    r.show_table("pendulum", &times_table(&stats, &series, &published)?)?;
    r.show_table("pendulum_convergence", &convergence_table(&stats)?)?;
    let (gaps, gap_z, gap_vz) = gaps_table(&series)?;
    r.show_table("pendulum_gaps", &gaps)?;
    let dz = drift(&series, "last_z", &mlcp, &mncp, pc.h)?;
    let parting = Parting::of(&dz, pc.h, "pendulum_drift.csv")?;
    r.show_table("pendulum_drift", &parting.table)?;
    r.show(
        "groups",
        Groups {
            mlcp: &mlcp,
            mncp: &mncp,
        },
    )?;
    for (i, thr) in DRIFT_THRESHOLDS.iter().enumerate() {
        r.facts()
            .num(format!("pendulum.drift_threshold.{i}"), *thr, Fmt::sci(0))
            .num(
                format!("pendulum.first_gap.{thr:.0e}"),
                dz.first_above(&dz.any, *thr),
                Fmt::fixed(1).unit(" s"),
            );
    }
    parting.facts(r.facts(), "pendulum");
    pendulum_facts(r.facts(), &stats, &published, pc.h);
    r.facts()
        .num(
            "pendulum.max_gap_z_mm",
            1e3 * gap_z,
            Fmt::fixed(2).unit(" mm"),
        )
        .num("pendulum.max_gap_z", gap_z, sci())
        .num("pendulum.max_gap_vz", gap_vz, Fmt::fixed(2).unit(" m/s"));
    run_facts(r.facts(), &run, &stats, pc.h);
    impact_and_hop_facts(r.facts(), &series, pc.rest_height, pc.h)?;
    pendulum_plots(r, &series, pc.h)?;
    drift_plot(
        r,
        &dz,
        "pendulum_drift",
        "Last-link height gaps (20 ms maxima)",
    )?;
    Ok((mlcp, mncp))
}

/// The paper's two groups of solvers, as the templates see them.
#[derive(Debug, serde::Serialize)]
struct Groups<'a> {
    mlcp: &'a [String],
    mncp: &'a [String],
}

/// The pendulum scene `pc` as it recorded it, run for `steps` steps.
fn pendulum_setup_facts(facts: &mut Facts, pc: &PendulumScene, steps: usize) {
    facts.num(
        "pendulum.setup.initial_angle",
        pc.initial_angle.abs(),
        Fmt::fixed(4),
    );
    for (name, x) in [
        ("links", pc.n_links as f64),
        ("sphere_mass", pc.sphere_mass),
        ("diameter", 2.0 * pc.sphere_radius),
        ("length", pc.n_links as f64 * pc.link_length),
        ("pivot_height", pc.pivot_height),
        ("floor_thickness", pc.floor_thickness),
        ("wall_x", pc.wall_x),
        ("mu", pc.mu),
        ("restitution", pc.restitution),
        ("initial_rate", pc.initial_rate.abs()),
        ("step_ms", pc.h * 1e3),
        ("seconds", steps as f64 * pc.h),
    ] {
        written(facts, &format!("pendulum.setup.{name}"), x);
    }
}

/// `pendulum.csv`: whole-run times per solver beside the published ones, and each solver's
/// convergence, iterations, largest gap to the others and final energy (CSV only).
fn times_table(
    stats: &[PendulumStats],
    series: &[DriverSeries],
    published: &[(String, String, f64)],
) -> Result<Table, ReportError> {
    let fastest_pub = published.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let fastest = stats
        .iter()
        .map(|s| s.solver_seconds)
        .fold(f64::INFINITY, f64::min);
    let fastest_run = stats
        .iter()
        .map(|s| s.run_seconds)
        .fold(f64::INFINITY, f64::min);
    let mut t = Table::new(Some("pendulum.csv"))
        .col(steps::SOLVER, steps::SOLVER)
        .col("paper's solver", "paper_solver")
        .col("published (x fastest)", "published_seconds")
        .col("ours: solver (x fastest)", "reproduced_solver_seconds")
        .md_col("us / contact step")
        .col("ours: whole run (x fastest)", "reproduced_run_seconds");
    for h in [
        "contact_steps",
        "converged_percent",
        "accurate_percent",
        "mean_iterations",
        "max_iterations",
        "max_last_z_gap_m",
        "final_energy_j",
    ] {
        t = t.csv_col(h);
    }
    let times = |s: f64, fastest: f64| format!("{s:.2} s ({:.2}x)", s / fastest);
    for s in stats {
        let p = published.iter().find(|p| p.0 == s.solver);
        let pub_s = p.map_or(f64::NAN, |p| p.2);
        t.row(vec![
            C::code(s.solver.clone()),
            C::text(p.map_or("-".into(), |p| p.1.clone())),
            C::pair(
                format!(
                    "{} s ({:.2}x)",
                    Fmt::fixed(2).show(pub_s),
                    pub_s / fastest_pub
                ),
                Fmt::fixed(2).show(pub_s),
            ),
            C::pair(
                times(s.solver_seconds, fastest),
                format!("{:.3}", s.solver_seconds),
            ),
            C::text(format!(
                "{:.1}",
                1e6 * s.solver_seconds / s.contact_steps.max(1) as f64
            )),
            C::pair(
                times(s.run_seconds, fastest_run),
                format!("{:.3}", s.run_seconds),
            ),
            C::int(s.contact_steps as u64),
            C::same(100.0 * s.converged_share, &Fmt::fixed(2)),
            C::same(100.0 * s.accurate_share, &Fmt::fixed(2)),
            C::same(s.mean_iterations, &Fmt::fixed(3)),
            C::same(s.max_iterations, &Fmt::int()),
            C::same(largest_gap_to_others(series, &s.solver)?, &Fmt::sci(3)),
            C::same(s.energy_last, &Fmt::fixed(3)),
        ])?;
    }
    Ok(t)
}

/// The largest gap in last-link height between `solver` and any other solver.
fn largest_gap_to_others(series: &[DriverSeries], solver: &str) -> Result<f64, ReportError> {
    let me = series
        .iter()
        .find(|x| x.solver == solver)
        .ok_or_else(|| ReportError::MissingData(solver.to_string()))?;
    let mut gap = 0.0f64;
    for o in series.iter().filter(|o| o.solver != solver) {
        gap = gap.max(max_gap(me.get("last_z")?, o.get("last_z")?));
    }
    Ok(gap)
}

/// `pendulum_convergence.csv`: per solver, the shares of converged, local-minimum and
/// accurate contact steps, iterations, energy and overlap.
fn convergence_table(stats: &[PendulumStats]) -> Result<Table, ReportError> {
    let pct2 = Fmt::percent(2);
    let energy = "energy first/max/last (J)";
    let mut conv = Table::new(Some("pendulum_convergence.csv"))
        .col(steps::SOLVER, steps::SOLVER)
        .col("contact steps", "contact_steps")
        .col("max contacts", "max_contacts")
        .col("converged", "converged_percent")
        .col("local minimum", "local_minimum_percent")
        .col("accurate", "accurate_percent")
        .col("max residual", "max_residual")
        .col("iterations / step", "mean_iterations")
        .col("max iterations", "max_iterations")
        .col(energy, "energy_first_j")
        .col(energy, "energy_max_j")
        .col(energy, "energy_last_j")
        .col("max overlap (m)", "max_overlap_m");
    let (f1, f3) = (Fmt::fixed(1), Fmt::fixed(3));
    for s in stats {
        conv.row(vec![
            C::code(s.solver.clone()),
            C::int(s.contact_steps as u64),
            C::int(s.max_contacts as u64),
            C::num(100.0 * s.converged_share, &pct2, &f3),
            C::num(100.0 * s.local_minimum_share, &pct2, &f3),
            C::num(100.0 * s.accurate_share, &pct2, &f3),
            C::num(s.max_residual, &sci(), &Fmt::sci(3)),
            C::num(s.mean_iterations, &Fmt::fixed(2), &Fmt::fixed(4)),
            C::same(s.max_iterations, &Fmt::int()),
            C::num(s.energy_first, &f1, &f3),
            C::num(s.energy_max, &f1, &f3),
            C::num(s.energy_last, &f1, &f3),
            C::num(s.max_overlap, &sci(), &Fmt::sci(3)),
        ])?;
    }
    Ok(conv)
}

/// `pendulum_gaps.csv`: the largest gap between every two solvers' last-link height and
/// vertical velocity; with the largest of each over all pairs.
fn gaps_table(series: &[DriverSeries]) -> Result<(Table, f64, f64), ReportError> {
    let mut pairs = Table::new(Some("pendulum_gaps.csv"))
        .col("max gap last_z (m)/last_vz (m/s)", steps::SOLVER);
    for b in series {
        let head = format!("`{}`", b.solver);
        pairs = pairs
            .col(&head, &format!("last_z_gap_m_vs_{}", b.solver))
            .col(&head, &format!("last_vz_gap_vs_{}", b.solver));
    }
    let (mut gap_z, mut gap_vz) = (0.0f64, 0.0f64);
    for a in series {
        let mut row = vec![C::code(a.solver.clone())];
        for b in series {
            if a.solver == b.solver {
                row.push(C::pair("-", ""));
                row.push(C::pair("", ""));
                continue;
            }
            let z = max_gap(a.get("last_z")?, b.get("last_z")?);
            let vz = max_gap(a.get("last_vz")?, b.get("last_vz")?);
            gap_z = gap_z.max(z);
            gap_vz = gap_vz.max(vz);
            row.push(C::num(z, &sci(), &Fmt::sci(3)));
            row.push(C::num(vz, &sci(), &Fmt::sci(3)));
        }
        pairs.row(row)?;
    }
    Ok((pairs, gap_z, gap_vz))
}

/// The pendulum run's own facts: duration, stopping tolerance, the separation rule, unknowns
/// per contact, seconds per run and the scene's milliseconds per step.
fn run_facts(facts: &mut Facts, run: &RunData, stats: &[PendulumStats], h: f64) {
    let RunData { meta, config, .. } = run;
    let steps = config.scene.steps;
    let specs = config.driver_specs();
    // The MLCP's friction directions, as its first driver sets them.
    let mlcp_n_f = specs
        .iter()
        .find(|s| s.formulation.name == "mlcp-fb")
        .and_then(|s| s.formulation.options.get("n_f"))
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN);
    let per_run = match (meta.wall_seconds, meta.threads, meta.runs) {
        (Some(w), Some(t), Some(n)) if n > 0 => w * (t.min(n)) as f64 / n as f64,
        _ => f64::NAN,
    };
    // The scene's own cost per step: the run's time without the solver's.
    let solver_total: f64 = stats.iter().map(|s| s.solver_seconds).sum();
    let scene_ms = meta
        .wall_seconds
        .zip(meta.threads)
        .map_or(f64::NAN, |(w, t)| {
            1e3 * (w * t.min(stats.len() as u64) as f64 - solver_total)
                / (stats.len() * steps) as f64
        });
    facts
        .num("pendulum.duration", steps as f64 * h, Fmt::int().unit(" s"))
        .num(
            "pendulum.tol",
            specs.first().map_or(f64::NAN, |s| s.tol),
            Fmt::sci(0),
        )
        .num("pendulum.separation_factor", SEPARATION_FACTOR, Fmt::int())
        .num(
            "pendulum.separation_floor",
            SEPARATION_FLOOR,
            Fmt::sci(0).unit(" m"),
        )
        .num("pendulum.accurate_residual", ACCURATE_RESIDUAL, Fmt::sci(0))
        // Unknowns per contact: the MLCP's normal, `n_f` friction directions and the sliding
        // speed (eq. 11); the MNCP's normal and two tangents.
        .num(
            "pendulum.mlcp_unknowns_per_contact",
            mlcp_n_f + 2.0,
            Fmt::int(),
        )
        .num("pendulum.mncp_unknowns_per_contact", 3.0, Fmt::int())
        .num(
            "pendulum.per_run_seconds",
            per_run,
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            "pendulum.scene_ms_per_step",
            scene_ms,
            Fmt::fixed(2).unit(" ms"),
        );
}

/// The pendulum's plots: last-link height, vertical velocity and energy over the whole run
/// (Figs. 5 and 7) and over the last second (Figs. 6 and 8).
fn pendulum_plots(r: &mut Report, series: &[DriverSeries], h: f64) -> Result<(), ReportError> {
    let times: Vec<Vec<f64>> = series
        .iter()
        .map(|s| s.step.iter().map(|&k| (k + 1) as f64 * h).collect())
        .collect();
    let end = times.first().and_then(|t| t.last().copied()).unwrap_or(0.0);
    let pick = |name: &str, from: f64| -> Result<Vec<Series>, ReportError> {
        series
            .iter()
            .zip(&times)
            .map(|(s, t)| {
                let v = s.get(name)?;
                let k0 = t.iter().position(|&x| x >= from).unwrap_or(0);
                Ok((s.solver.clone(), thin(&t[k0..], &v[k0..], 4000)))
            })
            .collect()
    };
    let line = |title: &str, label: &str| {
        Chart::new(title, Axis::linear("t (s)"), Axis::linear(label)).lines_only()
    };
    for (name, label, fig) in PENDULUM_PLOTS {
        let chart = line(&format!("Twelve-link pendulum: {label} ({fig})"), label);
        r.show_plot(&format!("pendulum_{name}"), &chart, &pick(name, 0.0)?)?;
    }
    for (name, label, fig) in PENDULUM_END_PLOTS {
        let chart = line(&format!("Last second: {label} ({fig})"), label);
        r.show_plot(
            &format!("pendulum_{name}_end"),
            &chart,
            &pick(name, end - 1.0)?,
        )?;
    }
    Ok(())
}

/// How the groups' last-link heights part, shared by the planar and the non-planar chain: when
/// each gap first passes each of [`DRIFT_THRESHOLDS`] (a table), when the report's separation
/// rule first holds and on which share of the later steps, and the final second's largest gaps.
struct Parting {
    /// Threshold, then the first time within MLCP, within MNCP, between them and between any two.
    table: Table,
    /// The first step at which the groups are apart by the rule (NaN if never).
    t_sep: f64,
    /// The share of the later steps at which the rule still holds.
    held: f64,
    /// The final second's largest gap within MLCP, within MNCP and between the groups (m).
    tail: [f64; 3],
}

impl Parting {
    /// The parting of `dz` (steps of `h`), its table written to `csv`.
    fn of(dz: &Drift, h: f64, csv: &str) -> Result<Parting, ReportError> {
        let mut table = Table::new(Some(csv))
            .col("threshold (m)", "threshold_m")
            .col("within MLCP", "within_mlcp_s")
            .col("within MNCP", "within_mncp_s")
            .col("MLCP vs MNCP", "mlcp_vs_mncp_s")
            .col("any pair", "any_pair_s");
        let time_cell = |t: f64| {
            let raw = if t.is_nan() {
                String::new()
            } else {
                format!("{t:.3}")
            };
            C::pair(secs_or_never(t), raw)
        };
        for thr in DRIFT_THRESHOLDS {
            table.row(vec![
                C::text(format!("{thr:.0e}")),
                time_cell(dz.first_above(&dz.within_a, thr)),
                time_cell(dz.first_above(&dz.within_b, thr)),
                time_cell(dz.first_above(&dz.cross_min, thr)),
                time_cell(dz.first_above(&dz.any, thr)),
            ])?;
        }
        let (t_sep, held) = dz.separation(SEPARATION_FACTOR, SEPARATION_FLOOR);
        let last_second = dz.time.len().saturating_sub((1.0 / h).round() as usize);
        let tail_max = |v: &[f64]| v[last_second..].iter().copied().fold(0.0, f64::max);
        Ok(Parting {
            table,
            t_sep,
            held,
            tail: [
                tail_max(&dz.within_a),
                tail_max(&dz.within_b),
                tail_max(&dz.cross_min),
            ],
        })
    }

    /// `<chain>.separation_time`, `.separation_held` and `.tail.{within_mlcp, within_mncp,
    /// cross}`: what the templates' `parting` macro writes.
    fn facts(&self, facts: &mut Facts, chain: &str) {
        let [within_mlcp, within_mncp, cross] = self.tail;
        facts
            .num(
                format!("{chain}.separation_time"),
                self.t_sep,
                Fmt::fixed(3).unit(" s"),
            )
            .num(
                format!("{chain}.separation_held"),
                100.0 * self.held,
                Fmt::percent(1),
            )
            .num(
                format!("{chain}.tail.within_mlcp"),
                within_mlcp,
                sci().unit(" m"),
            )
            .num(
                format!("{chain}.tail.within_mncp"),
                within_mncp,
                sci().unit(" m"),
            )
            .num(format!("{chain}.tail.cross"), cross, sci().unit(" m"));
    }
}

/// The gaps of `dz` over time, thinned to their envelope (log axis), as plot `name`.
fn drift_plot(r: &mut Report, dz: &Drift, name: &str, title: &str) -> Result<(), ReportError> {
    let series: Vec<Series> = vec![
        ("within MLCP".into(), envelope(&dz.time, &dz.within_a, 1000)),
        ("within MNCP".into(), envelope(&dz.time, &dz.within_b, 1000)),
        (
            "MLCP vs MNCP (closest pair)".into(),
            envelope(&dz.time, &dz.cross_min, 1000),
        ),
        ("any two of five".into(), envelope(&dz.time, &dz.any, 1000)),
    ];
    let chart = Chart::new(title, Axis::linear("t (s)"), Axis::log("gap (m)")).lines_only();
    r.show_plot(name, &chart, &series)
}

/// The same five solvers on the chain with skewed hinges (`pendulum_spatial.toml`, the
/// scene's `hinge_skew`): do the MLCP and MNCP groups separate once the motion leaves the
/// plane? The same drift statistics and separation rule as the planar chain's.
fn non_planar_section(r: &mut Report, mlcp: &[String], mncp: &[String]) -> Result<(), ReportError> {
    let run = r.load("pendulum_spatial.toml")?;
    let pc = PendulumScene::read(&run)?;
    let skew = run.scene_value(|s| s.number("hinge_skew"))?;
    let mut names = PENDULUM_COLUMNS.to_vec();
    names.push("last_y");
    let series = driver_series(&run.steps, &names)?;
    let stats = pendulum_stats(&series)?;
    let dz = drift(&series, "last_z", mlcp, mncp, pc.h)?;
    let parting = Parting::of(&dz, pc.h, "pendulum_spatial_drift.csv")?;
    r.show_table("pendulum_spatial_drift", &parting.table)?;
    // How far the last sphere leaves the swing plane, over every solver's run.
    let mut max_y = 0.0f64;
    for s in &series {
        max_y = s.get("last_y")?.iter().fold(max_y, |m, y| m.max(y.abs()));
    }
    let facts = r.facts();
    for thr in DRIFT_THRESHOLDS {
        for (key, gaps) in [
            ("any", &dz.any),
            ("within_mlcp", &dz.within_a),
            ("within_mncp", &dz.within_b),
            ("cross", &dz.cross_min),
        ] {
            facts.num(
                format!("spatial.first_gap.{key}.{thr:.0e}"),
                dz.first_above(gaps, thr),
                Fmt::fixed(3).unit(" s"),
            );
        }
    }
    parting.facts(facts, "spatial");
    written(facts, "spatial.setup.hinge_skew", skew);
    facts
        .num("spatial.hinge_skew", skew, Fmt::fixed(2).unit(" rad"))
        .num("spatial.max_y", max_y, Fmt::fixed(2).unit(" m"));
    for s in &stats {
        facts.num(
            format!("spatial.{}.converged", s.solver),
            100.0 * s.converged_share,
            Fmt::percent(1),
        );
    }
    drift_plot(
        r,
        &dz,
        "pendulum_spatial_drift",
        "Non-planar: height gaps (20 ms maxima)",
    )
}

/// Per-solver and whole-run pendulum facts, with the published times.
fn pendulum_facts(
    facts: &mut Facts,
    stats: &[PendulumStats],
    published: &[(String, String, f64)],
    h: f64,
) {
    let fastest = stats
        .iter()
        .map(|s| s.solver_seconds)
        .fold(f64::INFINITY, f64::min);
    for s in stats {
        solver_facts(facts, s, fastest, h);
    }
    let pct = |v: f64| 100.0 * v;
    let range = |v: Vec<f64>| Spread::of(&v).range();
    facts
        .list(
            "pendulum.converged_range",
            range(stats.iter().map(|s| pct(s.converged_share)).collect()),
            Fmt::fixed(1),
        )
        .list(
            "pendulum.unconverged_range",
            range(
                stats
                    .iter()
                    .map(|s| 100.0 - pct(s.converged_share))
                    .collect(),
            ),
            Fmt::fixed(1),
        )
        .num(
            "pendulum.first_unconverged_time",
            stats
                .iter()
                .filter_map(|s| s.first_unconverged_step)
                .min()
                .map_or(f64::NAN, |k| (k + 1) as f64 * h),
            Fmt::fixed(1).unit(" s"),
        );
    speed_facts(facts, stats);
    published_time_facts(facts, published, h);
}

/// One pendulum solver's facts (`pendulum.<solver>.*`); `fastest` is the fastest solver's
/// seconds.
fn solver_facts(facts: &mut Facts, s: &PendulumStats, fastest: f64, h: f64) {
    let k = format!("pendulum.{}", s.solver);
    let (pct, secs) = (Fmt::percent(1), Fmt::fixed(2).unit(" s"));
    let converged = 100.0 * s.converged_share;
    let first_unconverged = s
        .first_unconverged_step
        .map_or(f64::NAN, |k| (k + 1) as f64 * h);
    for (name, v, fmt) in [
        ("converged", converged, pct.clone()),
        ("unconverged", 100.0 - converged, pct.clone()),
        ("accurate", 100.0 * s.accurate_share, pct.clone()),
        ("local_minimum", 100.0 * s.local_minimum_share, pct),
        (steps::ITERATIONS, s.mean_iterations, Fmt::fixed(1)),
        ("max_iterations", s.max_iterations, Fmt::int()),
        ("max_residual", s.max_residual, sci()),
        ("solver_seconds", s.solver_seconds, secs.clone()),
        ("x_fastest", s.solver_seconds / fastest, Fmt::fixed(2)),
        ("run_seconds", s.run_seconds, secs),
        (
            "first_unconverged_time",
            first_unconverged,
            Fmt::fixed(1).unit(" s"),
        ),
    ] {
        facts.num(format!("{k}.{name}"), v, fmt);
    }
}

/// The slowest and fastest solver, their ratio, and how far the whole-run times spread.
fn speed_facts(facts: &mut Facts, stats: &[PendulumStats]) {
    let by_time =
        |a: &&PendulumStats, b: &&PendulumStats| a.solver_seconds.total_cmp(&b.solver_seconds);
    // The last of the slowest and the last of the fastest, as `max_by` picks them.
    let slowest = stats.iter().max_by(by_time);
    let fastest = stats.iter().max_by(|a, b| by_time(b, a));
    if let (Some(slow), Some(fast)) = (slowest, fastest) {
        facts
            .text("pendulum.slowest", slow.solver.clone())
            .text("pendulum.fastest", fast.solver.clone())
            .num(
                "pendulum.slowest_over_fastest",
                slow.solver_seconds / fast.solver_seconds,
                Fmt::fixed(1),
            );
    }
    let runs = Spread::of(&stats.iter().map(|s| s.run_seconds).collect::<Vec<_>>());
    facts
        .num(
            "pendulum.run_spread_percent",
            100.0 * (runs.max / runs.min - 1.0),
            Fmt::percent(0),
        )
        .list(
            "pendulum.run_seconds_range",
            vec![runs.min, runs.max],
            Fmt::fixed(2),
        );
}

/// The paper's whole-run times (`published.pendulum.*`), for steps of `h`.
fn published_time_facts(facts: &mut Facts, published: &[(String, String, f64)], h: f64) {
    let times = Spread::of(&published.iter().map(|p| p.2).collect::<Vec<_>>());
    let (lo, hi) = (times.min, times.max);
    for p in published {
        facts.num(
            format!("published.pendulum.{}.seconds", p.0),
            p.2,
            Fmt::fixed(2).unit(" s"),
        );
    }
    facts
        .num(
            "published.pendulum.spread_percent",
            100.0 * (hi / lo - 1.0),
            Fmt::percent(0),
        )
        .list(
            "published.pendulum.seconds_range",
            vec![lo, hi],
            Fmt::fixed(1),
        )
        .num(
            "published.pendulum.ms_per_step",
            1e3 * lo / (20.0 / h),
            Fmt::fixed(1).unit(" ms"),
        );
}

/// The first floor impact's energy jump (the same for every solver, as the findings say) and
/// the hops of the last sphere once it rests on the floor (its centre at `rest` then).
fn impact_and_hop_facts(
    facts: &mut Facts,
    series: &[DriverSeries],
    rest: f64,
    h: f64,
) -> Result<(), ReportError> {
    let mut rises = Vec::new();
    for s in series {
        if let Some(rise) = largest_rise(s, "energy")? {
            rises.push(rise);
        }
    }
    let energy_max = series
        .iter()
        .map(|s| {
            s.get("energy")
                .map(|e| e.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        })
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    facts.num("pendulum.energy_max", energy_max, Fmt::int().unit(" J"));
    let spread = |f: &dyn Fn(&crate::analysis::mylapilli2014::Rise) -> f64| {
        Spread::of(&rises.iter().map(f).collect::<Vec<_>>()).width()
    };
    if let Some(first) = rises.first() {
        facts
            .num("pendulum.impact.step", first.step as f64, Fmt::int())
            .num(
                "pendulum.impact.time",
                (first.step + 1) as f64 * h,
                Fmt::fixed(3).unit(" s"),
            )
            .num(
                "pendulum.impact.before",
                first.before,
                Fmt::int().unit(" J"),
            )
            .num("pendulum.impact.after", first.after, Fmt::int().unit(" J"))
            .num(
                "pendulum.impact.gain",
                first.after - first.before,
                Fmt::int().unit(" J"),
            )
            .num(
                "pendulum.impact.step_spread",
                spread(&|r| r.step as f64),
                Fmt::int(),
            )
            .num(
                "pendulum.impact.gain_spread",
                spread(&|r| r.after - r.before),
                Fmt::fixed(1).unit(" J"),
            );
    }
    // Once the last sphere stays within 1 mm of its rest height, how high it keeps hopping.
    let mut heights = Vec::new();
    let mut rest_from = f64::NAN;
    for s in series {
        let z = s.get("last_z")?;
        let Some(k0) = (0..z.len()).find(|&k| z[k..].iter().all(|&v| v - rest < REST_BAND)) else {
            continue;
        };
        // NaN.min(t) is t: the earliest time over the solvers.
        rest_from = rest_from.min((s.step[k0] + 1) as f64 * h);
        heights.extend(z[k0..].iter().map(|v| v - rest));
    }
    let um = |q: f64| 1e6 * quantile(&heights, q);
    facts
        .num("pendulum.rest_from", rest_from, Fmt::fixed(1).unit(" s"))
        .num("pendulum.rest_height_um.p10", um(0.1), Fmt::int())
        .num("pendulum.rest_height_um.p90", um(0.9), Fmt::int())
        .num("pendulum.rest_height_um.max", um(1.0), Fmt::int())
        .num("pendulum.rest_band_mm", 1e3 * REST_BAND, Fmt::int());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_published_files_follow_the_paper() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/mylapilli2014");
        let s = read_sphere_published(&dir.join("sphere_published.csv")).unwrap();
        let get = |e: u8, solver: &str| {
            s.iter()
                .find(|p| p.example == e && p.solver == solver)
                .unwrap()
        };
        assert_eq!(
            (
                get(1, "MLCP-FB-RLM").slide_time,
                get(1, "MLCP-FB-RLM").roll_speed
            ),
            (0.291, 1.429)
        );
        let m = get(2, "MLCP-FB-PLM");
        assert_eq!(m.slide_time, 0.4);
        assert!(m.roll_speed.is_nan() && m.source.contains("Fig. 3"));
        assert_eq!(get(2, "MNCP-PLM").slide_time, 0.291);
        assert!(
            !s.iter().any(|p| p.solver.starts_with("MinMap")),
            "PATH is not in the figures"
        );
        let peers = read_quantities(&dir.join("peers_published.csv")).unwrap();
        assert_eq!(peers["sphere_hop_m"].0, 5.6e-3);
        let times = read_published_times(&dir.join("pendulum_published.csv")).unwrap();
        assert_eq!(times.len(), 5);
    }

    #[test]
    fn thinning_keeps_the_ends_and_envelopes_keep_spikes() {
        let t: Vec<f64> = (0..10).map(f64::from).collect();
        let mut y = vec![0.0; 10];
        y[4] = 7.0;
        let p = thin(&t, &y, 3);
        assert_eq!(p.first(), Some(&(0.0, 0.0)));
        assert_eq!(p.last(), Some(&(9.0, 0.0)));
        assert!(p.len() <= 5);
        let e = envelope(&t, &y, 2);
        assert_eq!(e, vec![(4.0, 7.0), (9.0, 0.0)]);
    }
}
