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
//! Statistics: [`crate::analysis::mylapilli2014`]. Facts for the findings: `sphere.exact.*`
//! (`slide_time`, `roll_speed`, `friction`, `slide_time_x_sqrt2`, `slide_time_over_sqrt2`,
//! `friction_over_sqrt2`, `friction_x_sqrt2`, `w_tangent`), per example `e` and solver `s`
//! `sphere.ex<e>.<s>.{slide_time, roll_speed, friction, friction_ratio, max_hop, max_vy,
//! max_omega_x, max_err_vx, max_err_omega_y, converged, iterations}`, `sphere.ex<e>.{exact_solvers,
//! max_err_vx, max_hop, max_sideways}`, `sphere.max_hop`, `published.sphere.ex<e>.<s>.{slide_time,
//! roll_speed}`, `peers.sphere_hop_mm`; `pendulum.<s>.{converged, unconverged, accurate,
//! local_minimum, iterations, max_iterations, max_residual, solver_seconds, x_fastest,
//! first_unconverged_time}`, `pendulum.{converged_range, unconverged_range, max_gap_z_mm,
//! max_gap_vz, first_gap.<threshold>, tail.within_mlcp, tail.within_mncp, tail.cross,
//! separation_time, slowest, fastest, slowest_over_fastest, run_spread_percent,
//! run_seconds_range, duration, impact.*, energy_max,
//! rest_from, rest_height_um.*,
//! scene_ms_per_step}`, `spatial.{hinge_skew, max_y, separation_time, separation_held,
//! tail.within_mlcp, tail.within_mncp, tail.cross, first_gap.{any, within_mlcp, within_mncp,
//! cross}.<threshold>, <s>.converged}`,
//! `published.pendulum.<s>.seconds`, `published.pendulum.{spread_percent,
//! seconds_range, ms_per_step}`.

use std::path::Path;

use super::builder::{Report, RunData};
use super::findings::{Facts, Fmt};
use super::plots::{Axis, Chart, Series};
use super::table::{Cell as C, Table};
use super::{number, optional_number, read_csv_with_header, read_quantities, ReportError};
use crate::analysis::mylapilli2014::{
    drift, driver_series, largest_rise, max_gap, pendulum_stats, sphere_metrics_of, Drift,
    DriverSeries, SphereMetrics, ACCURATE_RESIDUAL, PENDULUM_COLUMNS, SLIP_TOL, SPHERE_COLUMNS,
};
use crate::analysis::{quantile, Spread};

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
        "solver",
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
    let want = ["solver", "paper_solver", "published_seconds"];
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

/// A plot of the sphere section: file, alt text, chart and series.
type PlotSpec = (String, String, Chart, Vec<Series>);

fn sci() -> Fmt {
    Fmt::sci(1)
}

fn secs_or_never(t: f64) -> String {
    if t.is_nan() {
        "never".into()
    } else {
        format!("{t:.3} s")
    }
}

/// Writes `reports/mylapilli2014/` from the runs under `root/data/runs/mylapilli2014/`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(
        root,
        "mylapilli2014",
        "Mylapilli and Jain 2014, complementarity + Levenberg-Marquardt: reproduction",
        "H. Mylapilli and A. Jain, *Evaluation of complementarity techniques for minimal coordinate contact \
         dynamics*, ASME IDETC 2014 (DETC2014-34322), section \"Simulation results\".",
    );
    r.text(
        "Solvers, as in the paper: MLCP-FB-RLM and MLCP-FB-PLM (the MLCP with four friction directions, eq. 22, \
         as Fischer-Burmeister equations, eq. 24, under the regular and the projected Levenberg-Marquardt), \
         MNCP-RLM and MNCP-PLM (the implicit MNCP, eqs. 31-34). PATH is not available: **MinMap-Newton** \
         (Erleben and Ortiz's non-smooth Newton on the min-map of the boxed LCP, a 4-sided pyramid) stands in \
         for MLCP-PATH. Each solver advances its own copy of every run (`[[drivers]]`), warm-started from its \
         previous step.",
    );
    sphere_section(&mut r)?;
    let (mlcp, mncp) = pendulum_section(&mut r)?;
    non_planar_section(&mut r, &mlcp, &mncp)?;
    r.finish()?;
    Ok(())
}

/// The sphere part of the README, `sphere.csv`, `sphere_example<e>.csv` and the sphere plots.
fn sphere_section(r: &mut Report) -> Result<(), ReportError> {
    let published = read_sphere_published(&r.config_file("sphere_published.csv"))?;
    let peers = read_quantities(&r.config_file("peers_published.csv"))?;
    let peers_hop = peers.get("sphere_hop_m").map(|v| v.0).ok_or_else(|| {
        ReportError::Published("peers_published.csv: no row for quantity `sphere_hop_m`".into())
    })?;
    let mut all_csv = Table::new(Some("sphere.csv"));
    for h in [
        "solver",
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
        all_csv = all_csv.csv_col(h);
    }
    let mut sections: Vec<(Table, String, Vec<PlotSpec>)> = Vec::new();
    let mut example2: Vec<(SphereMetrics, &SpherePublished)> = Vec::new();
    let mut setup: Option<SphereScene> = None;
    let mut max_hop_all = 0.0f64;
    for (example, file) in SPHERE_CONFIGS {
        let run = r.load(file)?;
        let sc = SphereScene::read(&run)?;
        let (exact_t, exact_v) = (sc.slide_time_exact, sc.rolling_speed_exact);
        let mu_m_g = sc.friction_exact;
        let series = driver_series(&run.steps, &SPHERE_COLUMNS)?;
        // The exact answer at each step's end, as the run recorded it (the same for every
        // driver): v_x, omega_y, v_y, omega_x, in the plots' order.
        let exact: [Vec<f64>; 4] = match series.first() {
            Some(s) => [
                s.get("vx_exact")?.to_vec(),
                s.get("omega_y_exact")?.to_vec(),
                s.get("vy_exact")?.to_vec(),
                s.get("omega_x_exact")?.to_vec(),
            ],
            None => Default::default(),
        };
        let mut t = Table::new(Some(&format!("sphere_example{example}.csv")))
            .col("solver", "solver")
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
            .col("iterations / step", "iterations_per_contact_step");
        let mut plot_data: Vec<(String, Vec<f64>, [Vec<f64>; 4])> = Vec::new();
        let facts = r.facts();
        let mut exact_solvers = 0.0;
        let mut max_err_vx = 0.0f64;
        let mut max_hop = 0.0f64;
        let mut sideways = 0.0f64;
        for s in &series {
            let m = sphere_metrics_of(s, sc.radius, sc.h)?;
            let p = published
                .iter()
                .find(|p| p.example == example && p.solver == m.solver);
            let (pub_t, pub_v) = p.map_or((f64::NAN, f64::NAN), |p| (p.slide_time, p.roll_speed));
            let (f3, f4, f6) = (Fmt::fixed(3), Fmt::fixed(4), Fmt::fixed(6));
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
                C::num(m.max_hop, &sci(), &Fmt::sci(3)),
                C::same(peers_hop, &f4),
                C::num(m.max_vy, &sci(), &Fmt::sci(3)),
                C::num(m.max_omega_x, &sci(), &Fmt::sci(3)),
                C::num(m.max_err_vx, &sci(), &Fmt::sci(3)),
                C::num(m.max_err_omega_y, &sci(), &Fmt::sci(3)),
                C::num(100.0 * m.converged_share, &Fmt::percent(1), &Fmt::fixed(2)),
                C::num(m.mean_iterations, &Fmt::fixed(2), &Fmt::fixed(4)),
            ])?;
            all_csv.row(vec![
                C::text(m.solver.clone()),
                C::int(example),
                C::same(m.slide_time, &f4),
                C::same(m.roll_speed, &f6),
                C::same(m.max_hop, &Fmt::sci(3)),
                C::same(exact_t, &f6),
                C::same(exact_v, &f6),
                C::same(pub_t, &f3),
                C::same(pub_v, &f3),
                C::same(peers_hop, &f4),
                C::same(-m.friction_x, &f6),
                C::same(mu_m_g, &f6),
                C::same(m.max_vy, &Fmt::sci(3)),
                C::same(m.max_omega_x, &Fmt::sci(3)),
                C::same(m.max_err_vx, &Fmt::sci(3)),
            ])?;
            sphere_facts(facts, example, &m, mu_m_g);
            if let Some(p) = p {
                let k = format!("published.sphere.ex{example}.{}", m.solver);
                facts
                    .num(format!("{k}.slide_time"), p.slide_time, Fmt::fixed(3))
                    .num(format!("{k}.roll_speed"), p.roll_speed, Fmt::fixed(3));
            }
            // The exact answer: slip ends in the step containing t*.
            if (m.slide_time - (exact_t / sc.h).ceil() * sc.h).abs() < 0.5 * sc.h {
                exact_solvers += 1.0;
                max_err_vx = max_err_vx.max(m.max_err_vx);
            }
            max_hop = max_hop.max(m.max_hop);
            if p.is_some_and(|p| p.paper_solver.starts_with("MLCP")) {
                sideways = sideways.max(m.max_vy).max(m.max_omega_x);
            }
            plot_data.push((
                m.solver.clone(),
                s.step.iter().map(|&k| (k + 1) as f64 * sc.h).collect(),
                [
                    s.get("vx")?.to_vec(),
                    s.get("omega_y")?.to_vec(),
                    s.get("vy")?.to_vec(),
                    s.get("omega_x")?.to_vec(),
                ],
            ));
            if example == 2 {
                if let Some(p) = p.filter(|p| p.paper_solver.starts_with("MLCP")) {
                    example2.push((m, p));
                }
            }
        }
        max_hop_all = max_hop_all.max(max_hop);
        facts
            .num(
                format!("sphere.ex{example}.exact_solvers"),
                exact_solvers,
                Fmt::int(),
            )
            .num(
                format!("sphere.ex{example}.solvers"),
                series.len() as f64,
                Fmt::int(),
            )
            .num(format!("sphere.ex{example}.max_err_vx"), max_err_vx, sci())
            .num(
                format!("sphere.ex{example}.max_hop"),
                max_hop,
                Fmt::fixed(1).unit(" m"),
            )
            .num(format!("sphere.ex{example}.max_sideways"), sideways, sci());
        let names: &[(&str, &str, usize)] = if example == 1 {
            &[("vx", "v_x (m/s)", 0), ("omega_y", "omega_y (rad/s)", 1)]
        } else {
            &[
                ("vx", "v_x (m/s)", 0),
                ("omega_y", "omega_y (rad/s)", 1),
                ("vy", "v_y (m/s)", 2),
                ("omega_x", "omega_x (rad/s)", 3),
            ]
        };
        let times: Vec<f64> = plot_data.first().map(|p| p.1.clone()).unwrap_or_default();
        let plots = names
            .iter()
            .map(|(name, label, i)| {
                let series: Vec<Series> = plot_data
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
                    &format!("Sphere, example {example}: {label} against the exact solution"),
                    Axis::linear("t (s)"),
                    Axis::linear(label),
                )
                .lines_only()
                .reference(reference);
                (
                    format!("sphere_example{example}_{name}.svg"),
                    format!("{name}, example {example}"),
                    chart,
                    series,
                )
            })
            .collect();
        let title = if example == 1 {
            "Example 1 (Fig. 2): friction directions aligned with the motion"
        } else {
            "Example 2 (Fig. 3): friction directions at 45 degrees to the motion"
        };
        let intro = format!(
            "### {title}\n\n{} steps of {} ms. Cells: ours / the paper / exact where three values appear; \
             friction: `-F_x` averaged over the sliding steps / `mu m g`; hop: ours / MuJoCo and Drake \
             (`docs/PEERS.md`). Also in [`sphere_example{example}.csv`](sphere_example{example}.csv).",
            run.config.scene.steps,
            sc.h * 1e3
        );
        sections.push((t, intro, plots));
        setup = Some(sc);
    }
    let Some(sc) = setup else {
        return Ok(());
    };
    let (exact_t, exact_v) = (sc.slide_time_exact, sc.rolling_speed_exact);
    let mu_m_g = sc.friction_exact;
    let sqrt2 = std::f64::consts::SQRT_2;
    // Tangential block of W for a solid sphere, 1/m + R^2 / I with I = 2 m R^2 / 5, as the run
    // recorded it.
    let w_tangent = sc.w_tangent;
    r.facts()
        .num("sphere.exact.slide_time", exact_t, Fmt::fixed(4).unit(" s"))
        .num(
            "sphere.exact.slide_time_step_end",
            (exact_t / sc.h).ceil() * sc.h,
            Fmt::fixed(3).unit(" s"),
        )
        .num(
            "sphere.exact.roll_speed",
            exact_v,
            Fmt::fixed(6).unit(" m/s"),
        )
        .num("sphere.exact.friction", mu_m_g, Fmt::fixed(3).unit(" N"))
        .num(
            "sphere.exact.slide_time_x_sqrt2",
            exact_t * sqrt2,
            Fmt::fixed(4).unit(" s"),
        )
        .num(
            "sphere.exact.slide_time_over_sqrt2",
            exact_t / sqrt2,
            Fmt::fixed(3).unit(" s"),
        )
        .num(
            "sphere.exact.friction_over_sqrt2",
            mu_m_g / sqrt2,
            Fmt::fixed(3).unit(" N"),
        )
        .num(
            "sphere.exact.friction_x_sqrt2",
            mu_m_g * sqrt2,
            Fmt::fixed(3).unit(" N"),
        )
        .num("sphere.exact.w_tangent", w_tangent, Fmt::fixed(1))
        .num("sphere.max_hop", max_hop_all, Fmt::fixed(1).unit(" m"))
        .num(
            "peers.sphere_hop_mm",
            1e3 * peers_hop,
            Fmt::fixed(1).unit(" mm"),
        );

    r.heading(2, "Sphere on a fixed horizontal plane (Figs. 1-3)");
    r.text(&format!(
        "m = {}, R = {}, v0 = ({}, {}, {}), omega0 = ({}, {}, {}), mu = {}, h = {} ms, {} s. Exact answer \
         (Trinkle): slides until t* = 2 |v0| / (7 mu g) = {exact_t:.4} s with the friction `mu m g = {mu_m_g:.4} N` \
         against the motion, then rolls at 5 |v0| / 7 = {exact_v:.4} m/s with `omega_y = v_x / R`, at rest height. \
         **Slide time**: the time `(k + 1) h` of the first step `k` after which the slip speed of the touching \
         point, `|v + omega x (-R e_z)|`, is below {SLIP_TOL:.0e} m/s (an exact solver reaches it at the end \
         of the step containing t*, {:.3} s). **Rolling speed**: `|(v_x, v_y)|` after the last step. **Hop**: \
         the largest height of the centre above its rest height over the sliding steps. Also in \
         [`sphere.csv`](sphere.csv) (one row per solver and example).",
        sc.mass,
        sc.radius,
        sc.v0[0],
        sc.v0[1],
        sc.v0[2],
        sc.omega0[0],
        sc.omega0[1],
        sc.omega0[2],
        sc.mu,
        sc.h * 1e3,
        sc.duration,
        (exact_t / sc.h).ceil() * sc.h,
    ));
    for (t, intro, plots) in &sections {
        r.text(intro);
        r.table(t)?;
        for (file, alt, chart, series) in plots {
            r.plot(file, alt, chart, series)?;
        }
    }
    r.table(&all_csv)?;
    if !example2.is_empty() {
        r.heading(3, "The 45-degree MLCP error, quantified");
        let mut lines = Vec::new();
        for (m, p) in &example2 {
            lines.push(format!(
                "- `{}`: slides until **{} s** ({:+.0}% against t* = {exact_t:.4} s; the paper: about {} s) with a \
                 friction force of {} N = {:.3} mu m g (a square pyramid whose edge is met mid-way gives \
                 `mu m g / sqrt 2`, {:.3} mu m g, hence t* x sqrt 2 = {:.4} s); largest error in v_x {} m/s; \
                 spurious |v_y| at most {} m/s and |omega_x| at most {} rad/s; final rolling speed {} m/s.",
                m.solver,
                Fmt::fixed(3).show(m.slide_time),
                100.0 * (m.slide_time - exact_t) / exact_t,
                Fmt::fixed(1).show(p.slide_time),
                Fmt::fixed(4).show(m.friction_norm),
                m.friction_norm / mu_m_g,
                1.0 / sqrt2,
                exact_t * sqrt2,
                Fmt::fixed(3).show(m.max_err_vx),
                sci().show(m.max_vy),
                sci().show(m.max_omega_x),
                Fmt::fixed(4).show(m.roll_speed),
            ));
        }
        r.text(&lines.join("\n"));
    }
    Ok(())
}

/// The facts of one sphere solver.
fn sphere_facts(facts: &mut Facts, example: u8, m: &SphereMetrics, mu_m_g: f64) {
    let k = format!("sphere.ex{example}.{}", m.solver);
    facts
        .num(
            format!("{k}.slide_time"),
            m.slide_time,
            Fmt::fixed(3).unit(" s"),
        )
        .num(
            format!("{k}.roll_speed"),
            m.roll_speed,
            Fmt::fixed(4).unit(" m/s"),
        )
        .num(
            format!("{k}.friction"),
            m.friction_norm,
            Fmt::fixed(4).unit(" N"),
        )
        .num(
            format!("{k}.friction_ratio"),
            m.friction_norm / mu_m_g,
            Fmt::fixed(3),
        )
        .num(format!("{k}.max_hop"), m.max_hop, sci())
        .num(format!("{k}.max_vy"), m.max_vy, sci())
        .num(format!("{k}.max_omega_x"), m.max_omega_x, sci())
        .num(format!("{k}.max_err_vx"), m.max_err_vx, sci())
        .num(format!("{k}.max_err_omega_y"), m.max_err_omega_y, sci())
        .num(
            format!("{k}.converged"),
            100.0 * m.converged_share,
            Fmt::percent(1),
        )
        .num(format!("{k}.iterations"), m.mean_iterations, Fmt::fixed(2));
}

/// The pendulum part of the README, its CSV files and plots; returns the paper's two groups
/// (MLCP, MNCP) by their labels.
fn pendulum_section(r: &mut Report) -> Result<(Vec<String>, Vec<String>), ReportError> {
    let run = r.load("pendulum.toml")?;
    let pc = PendulumScene::read(&run)?;
    let h = pc.h;
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
    let steps = run.config.scene.steps;
    let RunData { meta, config, .. } = &run;
    let per_run = match (meta.wall_seconds, meta.threads, meta.runs) {
        (Some(w), Some(t), Some(n)) if n > 0 => w * (t.min(n)) as f64 / n as f64,
        _ => f64::NAN,
    };

    r.heading(2, "Twelve-link pendulum (Figs. 4-8)");
    r.text(&format!(
        "{} spheres of {} kg (diameter {} m) on pin hinges, {} m long, pivot {} m up, floor {} m thick, wall \
         {} m to the right, mu = {}, restitution {}, initial angle {:.4} rad and rate {} rad/s, h = {} ms, {} \
         steps ({} s). The geometry readings and the restitution law are documented in \
         `experiments/scenes/src/pendulum.rs`. MLCP: four directions per contact, one against the tangential \
         contact velocity of the free motion at each step (`align_with_slip`), as in the paper.",
        pc.n_links,
        pc.sphere_mass,
        2.0 * pc.sphere_radius,
        pc.n_links as f64 * pc.link_length,
        pc.pivot_height,
        pc.floor_thickness,
        pc.wall_x,
        pc.mu,
        pc.restitution,
        pc.initial_angle.abs(),
        pc.initial_rate.abs(),
        h * 1e3,
        steps,
        steps as f64 * h
    ));

    // Times.
    r.heading(3, "Whole-run times");
    r.text(&format!(
        "The paper's times are whole 20 s simulations on its machine (dynamics, Bullet collision detection and \
         the complementarity solve). Ours: **solver** = the driver's solve times summed over the run (what the \
         five solvers differ in); the whole sweep ({} runs, scene and solver, {} threads in parallel) took \
         **{}** of wall time{}, about **{} per run**. Solver times on a shared machine move with its \
         load: compare ratios between solvers, not absolutes across machines. Also in \
         [`pendulum.csv`](pendulum.csv).",
        meta.runs.map_or("?".into(), |n| n.to_string()),
        meta.threads.map_or("?".into(), |t| t.to_string()),
        meta.wall_seconds.map_or("not recorded".into(), |w| format!("{w:.1} s")),
        meta.load_average.map_or(String::new(), |l| format!(
            " (1-minute load average when it ended: {l:.1})"
        )),
        if per_run.is_nan() { "?".into() } else { format!("{per_run:.1} s") },
    ));
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
        .col("solver", "solver")
        .col("paper's solver", "paper_solver")
        .col("published (x fastest)", "published_seconds")
        .col("ours: solver (x fastest)", "reproduced_solver_seconds")
        .md_col("us / contact step")
        .col("ours: whole run (x fastest)", "reproduced_run_seconds")
        .csv_col("contact_steps")
        .csv_col("converged_percent")
        .csv_col("accurate_percent")
        .csv_col("mean_iterations")
        .csv_col("max_iterations")
        .csv_col("max_last_z_gap_m")
        .csv_col("final_energy_j");
    for s in &stats {
        let p = published.iter().find(|p| p.0 == s.solver);
        let pub_s = p.map_or(f64::NAN, |p| p.2);
        let me = series
            .iter()
            .find(|x| x.solver == s.solver)
            .ok_or_else(|| ReportError::MissingData(s.solver.clone()))?;
        let final_gap = series
            .iter()
            .filter(|o| o.solver != s.solver)
            .map(|o| Ok(max_gap(me.get("last_z")?, o.get("last_z")?)))
            .collect::<Result<Vec<_>, ReportError>>()?
            .into_iter()
            .fold(0.0, f64::max);
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
                format!(
                    "{:.2} s ({:.2}x)",
                    s.solver_seconds,
                    s.solver_seconds / fastest
                ),
                format!("{:.3}", s.solver_seconds),
            ),
            C::text(format!(
                "{:.1}",
                1e6 * s.solver_seconds / s.contact_steps.max(1) as f64
            )),
            C::pair(
                format!(
                    "{:.2} s ({:.2}x)",
                    s.run_seconds,
                    s.run_seconds / fastest_run
                ),
                format!("{:.3}", s.run_seconds),
            ),
            C::int(s.contact_steps as u64),
            C::same(100.0 * s.converged_share, &Fmt::fixed(2)),
            C::same(100.0 * s.accurate_share, &Fmt::fixed(2)),
            C::same(s.mean_iterations, &Fmt::fixed(3)),
            C::same(s.max_iterations, &Fmt::int()),
            C::same(final_gap, &Fmt::sci(3)),
            C::same(s.energy_last, &Fmt::fixed(3)),
        ])?;
    }
    r.table(&t)?;

    // Convergence.
    r.heading(3, "Convergence per solver");
    r.text(&format!(
        "Over the steps with contacts. *Converged*: the driver's own test (`|F| <= tol`, tol = {}); *local \
         minimum*: stopped by the gradient test before that; *accurate*: natural-map residual at most \
         {ACCURATE_RESIDUAL:.0e} whatever the status. One run per solver (the scene is deterministic). Also in \
         [`pendulum_convergence.csv`](pendulum_convergence.csv).",
        config
            .driver_specs()
            .first()
            .map_or("?".into(), |s| format!("{:.0e}", s.tol)),
    ));
    let pct2 = Fmt::percent(2);
    let mut conv = Table::new(Some("pendulum_convergence.csv"))
        .col("solver", "solver")
        .col("contact steps", "contact_steps")
        .col("max contacts", "max_contacts")
        .col("converged", "converged_percent")
        .col("local minimum", "local_minimum_percent")
        .col("accurate", "accurate_percent")
        .col("max residual", "max_residual")
        .col("iterations / step", "mean_iterations")
        .col("max iterations", "max_iterations")
        .col("energy first / max / last (J)", "energy_first_j")
        .col("energy first / max / last (J)", "energy_max_j")
        .col("energy first / max / last (J)", "energy_last_j")
        .col("max overlap (m)", "max_overlap_m");
    for s in &stats {
        conv.row(vec![
            C::code(s.solver.clone()),
            C::int(s.contact_steps as u64),
            C::int(s.max_contacts as u64),
            C::num(100.0 * s.converged_share, &pct2, &Fmt::fixed(3)),
            C::num(100.0 * s.local_minimum_share, &pct2, &Fmt::fixed(3)),
            C::num(100.0 * s.accurate_share, &pct2, &Fmt::fixed(3)),
            C::num(s.max_residual, &sci(), &Fmt::sci(3)),
            C::num(s.mean_iterations, &Fmt::fixed(2), &Fmt::fixed(4)),
            C::same(s.max_iterations, &Fmt::int()),
            C::num(s.energy_first, &Fmt::fixed(1), &Fmt::fixed(3)),
            C::num(s.energy_max, &Fmt::fixed(1), &Fmt::fixed(3)),
            C::num(s.energy_last, &Fmt::fixed(1), &Fmt::fixed(3)),
            C::num(s.max_overlap, &sci(), &Fmt::sci(3)),
        ])?;
    }
    r.table(&conv)?;

    // Drift.
    r.heading(3, "How far the trajectories drift apart");
    let mut pairs =
        Table::new(Some("pendulum_gaps.csv")).col("max gap last_z (m) / last_vz (m/s)", "solver");
    for b in &series {
        pairs = pairs
            .col(
                &format!("`{}`", b.solver),
                &format!("last_z_gap_m_vs_{}", b.solver),
            )
            .col(
                &format!("`{}`", b.solver),
                &format!("last_vz_gap_vs_{}", b.solver),
            );
    }
    let (mut gap_z, mut gap_vz) = (0.0f64, 0.0f64);
    for a in &series {
        let mut row = vec![C::code(a.solver.clone())];
        for b in &series {
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
    r.text(
        "Largest gap over the whole run between two solvers' last-link height / vertical velocity (also in \
         [`pendulum_gaps.csv`](pendulum_gaps.csv)):",
    );
    r.table(&pairs)?;
    let dz = drift(&series, "last_z", &mlcp, &mncp, h)?;
    let parting = Parting::of(&dz, h, "pendulum_drift.csv")?;
    for (i, thr) in DRIFT_THRESHOLDS.iter().enumerate() {
        r.facts()
            .num(format!("pendulum.drift_threshold.{i}"), *thr, Fmt::sci(0));
        let thr = *thr;
        r.facts().num(
            format!("pendulum.first_gap.{thr:.0e}"),
            dz.first_above(&dz.any, thr),
            Fmt::fixed(1).unit(" s"),
        );
    }
    r.text(&format!(
        "When the last-link heights first differ by more than a threshold: within the MLCP group ({}), within \
         the MNCP group ({}), between the groups (the closest cross pair), and between any two of the five (also \
         in [`pendulum_drift.csv`](pendulum_drift.csv)):",
        mlcp.join(", "),
        mncp.join(", ")
    ));
    r.table(&parting.table)?;
    let (t_sep, [tail_mlcp, tail_mncp, tail_cross]) = (parting.t_sep, parting.tail);
    r.text(&format!(
        "**Group separation** (the paper: \"the MLCP set of solvers showing a similar solution and MNCP set of \
         solvers showing a similar solution\" at 20 s, Figs. 6 and 8). Rule: the groups are apart at a step \
         when the closest MLCP-MNCP pair is more than {SEPARATION_FACTOR} times farther apart than the farthest pair within \
         either group, and more than {SEPARATION_FLOOR:e} m. {}",
        parting.summary()
    ));

    // The MLCP's friction directions, as its first driver sets them.
    let mlcp_n_f = config
        .driver_specs()
        .iter()
        .find(|s| s.formulation.name == "mlcp-fb")
        .and_then(|s| s.formulation.options.get("n_f"))
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN);
    // Facts.
    let facts = r.facts();
    pendulum_facts(facts, &stats, &published, h);
    facts
        .num("pendulum.duration", steps as f64 * h, Fmt::int().unit(" s"))
        .num(
            "pendulum.max_gap_z_mm",
            1e3 * gap_z,
            Fmt::fixed(2).unit(" mm"),
        )
        .num("pendulum.max_gap_z", gap_z, sci())
        .num("pendulum.max_gap_vz", gap_vz, Fmt::fixed(2).unit(" m/s"))
        .num("pendulum.tail.within_mlcp", tail_mlcp, sci().unit(" m"))
        .num("pendulum.tail.within_mncp", tail_mncp, sci().unit(" m"))
        .num("pendulum.tail.cross", tail_cross, sci().unit(" m"))
        .num("pendulum.separation_time", t_sep, Fmt::fixed(1).unit(" s"))
        .num("pendulum.separation_factor", SEPARATION_FACTOR, Fmt::int())
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
        );
    // The scene's own cost per step: the run's time without the solver's.
    let solver_total: f64 = stats.iter().map(|s| s.solver_seconds).sum();
    let scene_ms = meta
        .wall_seconds
        .zip(meta.threads)
        .map_or(f64::NAN, |(w, t)| {
            1e3 * (w * t.min(stats.len() as u64) as f64 - solver_total)
                / (stats.len() * steps) as f64
        });
    facts.num(
        "pendulum.scene_ms_per_step",
        scene_ms,
        Fmt::fixed(2).unit(" ms"),
    );
    impact_and_hop_facts(facts, &series, pc.rest_height, h)?;

    // Plots.
    r.heading(3, "Plots");
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
    for (name, label, fig) in [
        ("last_z", "last-link height (m)", "Fig. 5"),
        ("last_vz", "last-link v_z (m/s)", "Fig. 7"),
        ("energy", "energy (J)", "energy"),
    ] {
        r.plot(
            &format!("pendulum_{name}.svg"),
            name,
            &line(&format!("Twelve-link pendulum: {label} ({fig})"), label),
            &pick(name, 0.0)?,
        )?;
    }
    for (name, label, fig) in [
        ("last_z", "last-link height (m)", "Fig. 6"),
        ("last_vz", "last-link v_z (m/s)", "Fig. 8"),
    ] {
        r.plot(
            &format!("pendulum_{name}_end.svg"),
            &format!("{name}, last second"),
            &line(&format!("Last second: {label} ({fig})"), label),
            &pick(name, end - 1.0)?,
        )?;
    }
    drift_plot(
        r,
        &dz,
        "pendulum_drift.svg",
        "drift between the solvers",
        "Gap between last-link heights (largest per 20 ms)",
    )?;
    Ok((mlcp, mncp))
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

    /// "First such time: ... Over the final second: ..." for the README.
    fn summary(&self) -> String {
        let held = if self.t_sep.is_nan() {
            String::new()
        } else {
            format!(
                " (the rule holds at {:.1}% of the later steps)",
                100.0 * self.held
            )
        };
        format!(
            "First such time: **{}**{held}. Over the final second: within MLCP at most {} m, \
             within MNCP at most {} m, closest cross pair at most {} m.",
            secs_or_never(self.t_sep),
            sci().show(self.tail[0]),
            sci().show(self.tail[1]),
            sci().show(self.tail[2]),
        )
    }
}

/// The gaps of `dz` over time, thinned to their envelope (log axis), as `file`.
fn drift_plot(
    r: &mut Report,
    dz: &Drift,
    file: &str,
    alt: &str,
    title: &str,
) -> Result<(), ReportError> {
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
    r.plot(file, alt, &chart, &series)?;
    Ok(())
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
    // How far the last sphere leaves the swing plane, over every solver's run.
    let mut max_y = 0.0f64;
    for s in &series {
        max_y = s.get("last_y")?.iter().fold(max_y, |m, y| m.max(y.abs()));
    }

    r.heading(3, "A non-planar chain");
    r.text(&format!(
        "The planar chain's groups cannot separate if planarity makes the pyramid exact (finding 2). To test \
         that, the same five solvers run the same scene with each hinge's axis turned about its link by \
         +-{skew} rad, alternating along the chain (`hinge_skew`, `pendulum_spatial.toml`; the scene's module \
         doc): neighbouring hinges are no longer parallel and the chain swings out of the `x-z` plane, the last \
         sphere up to **{max_y:.2} m** from it. Each contact then slips out of the plane too, where a four-sided \
         pyramid aligned with the slip is no longer the cone."
    ));
    r.text(&format!(
        "When the last-link heights first differ by more than a threshold, as for the planar chain (also in \
         [`pendulum_spatial_drift.csv`](pendulum_spatial_drift.csv)). Groups apart by the planar chain's rule \
         ({SEPARATION_FACTOR} times, above {SEPARATION_FLOOR:e} m). {}",
        parting.summary()
    ));
    r.table(&parting.table)?;
    let secs = Fmt::fixed(3).unit(" s");
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
                secs.clone(),
            );
        }
    }
    let [tail_mlcp, tail_mncp, tail_cross] = parting.tail;
    facts
        .num("spatial.hinge_skew", skew, Fmt::fixed(2).unit(" rad"))
        .num("spatial.max_y", max_y, Fmt::fixed(2).unit(" m"))
        .num("spatial.separation_time", parting.t_sep, secs)
        .num(
            "spatial.separation_held",
            100.0 * parting.held,
            Fmt::percent(1),
        )
        .num("spatial.tail.within_mlcp", tail_mlcp, sci().unit(" m"))
        .num("spatial.tail.within_mncp", tail_mncp, sci().unit(" m"))
        .num("spatial.tail.cross", tail_cross, sci().unit(" m"));
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
        "pendulum_spatial_drift.svg",
        "drift between the solvers, non-planar chain",
        "Non-planar chain: gap between last-link heights (largest per 20 ms)",
    )
}

/// Per-solver and whole-run pendulum facts, with the published times.
fn pendulum_facts(
    facts: &mut Facts,
    stats: &[crate::analysis::mylapilli2014::PendulumStats],
    published: &[(String, String, f64)],
    h: f64,
) {
    let fastest = stats
        .iter()
        .map(|s| s.solver_seconds)
        .fold(f64::INFINITY, f64::min);
    let pct = |v: f64| 100.0 * v;
    for s in stats {
        let k = format!("pendulum.{}", s.solver);
        facts
            .num(
                format!("{k}.converged"),
                pct(s.converged_share),
                Fmt::percent(1),
            )
            .num(
                format!("{k}.unconverged"),
                100.0 - pct(s.converged_share),
                Fmt::percent(1),
            )
            .num(
                format!("{k}.accurate"),
                pct(s.accurate_share),
                Fmt::percent(1),
            )
            .num(
                format!("{k}.local_minimum"),
                pct(s.local_minimum_share),
                Fmt::percent(1),
            )
            .num(format!("{k}.iterations"), s.mean_iterations, Fmt::fixed(1))
            .num(format!("{k}.max_iterations"), s.max_iterations, Fmt::int())
            .num(format!("{k}.max_residual"), s.max_residual, sci())
            .num(
                format!("{k}.solver_seconds"),
                s.solver_seconds,
                Fmt::fixed(2).unit(" s"),
            )
            .num(
                format!("{k}.x_fastest"),
                s.solver_seconds / fastest,
                Fmt::fixed(2),
            )
            .num(
                format!("{k}.run_seconds"),
                s.run_seconds,
                Fmt::fixed(2).unit(" s"),
            )
            .num(
                format!("{k}.first_unconverged_time"),
                s.first_unconverged_step
                    .map_or(f64::NAN, |k| (k + 1) as f64 * h),
                Fmt::fixed(1).unit(" s"),
            );
    }
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
    let by_time = |max: bool| {
        stats
            .iter()
            .max_by(|a, b| {
                let o = a.solver_seconds.total_cmp(&b.solver_seconds);
                if max {
                    o
                } else {
                    o.reverse()
                }
            })
            .map(|s| (s.solver.clone(), s.solver_seconds))
    };
    if let (Some(slow), Some(fast)) = (by_time(true), by_time(false)) {
        facts
            .text("pendulum.slowest", slow.0)
            .text("pendulum.fastest", fast.0)
            .num(
                "pendulum.slowest_over_fastest",
                slow.1 / fast.1,
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
