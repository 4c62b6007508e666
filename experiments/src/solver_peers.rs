//! `just peers`: every formulation's solve beside MuJoCo's constraint solver on the same
//! steps, solver against solver (issue 11).
//!
//! The problems are `data/mujoco/global/`: real steps of MuJoCo's balls-in-a-box and clutter
//! runs. MuJoCo's side is `experiments/peers/solver_times.py`, which replays each scene to the
//! exported step and times `mj_fwdConstraint` alone (its README says how), run as a child
//! process in the same run. Our side times [`ResolvedSolver::run`] from a fresh
//! [`StepProblem`] (parsing excluded; the contact-space form, the islands and the solve
//! included; the shared ruler's judgement excluded): every solver in [`SOLVERS`], with islands
//! and block-sparse `W` (the default) and, to measure their gain, on the whole problem with a
//! dense `W` (`--no-islands --dense`). Repeats are interleaved: round after round, every
//! (problem, solver, layout) once per round, so that the machine's noise falls on all alike.
//!
//! Accuracy: our solvers run to the natural-map residual [`TOLERANCE`] of the rigid problem.
//! MuJoCo solves its own regularised problem to a tolerance on a scaled cost; the physical
//! accuracy it reached is the export's `abs_residual_inf` (m/s), reported beside. The two are
//! not the same model, so the times compare solvers at comparable, stated accuracies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use contactlab_core::io::read_problem;
use contactlab_core::{GeneralizedProblem, Problem, StepProblem};

use crate::analysis::quantile;
use contactlab_lab::Lab;

use crate::registry::{Registry, ResolvedSolver, SolverSpec};
use crate::report::{fmt, markdown_table, write_csv, ReportError};
use crate::step_peers::{summary, WholeStep};

/// The natural-map residual every solver here is run to.
pub const TOLERANCE: f64 = 1e-8;

/// The wall-clock limit of one solve (s).
pub const TIME_LIMIT: f64 = 2.0;

/// Interleaved rounds for PGS (the criterion asks for at least 20).
pub const PGS_ROUNDS: usize = 20;

/// The solvers compared: every formulation with its paper's driver (and PGS, the baseline of
/// the islands criterion), as `(formulation, optimizer, max_iter)`.
pub const SOLVERS: &[(&str, &str, u64)] = &[
    ("coulomb", "pgs", 50_000),
    ("coulomb", "bisection-sor", 50_000),
    ("coulomb", "pgs-hwangbo", 50_000),
    ("implicit-ncp", "todorov", 500),
    ("min-map", "newton", 100),
    ("mncp", "plm", 500),
    ("mlcp-fb", "plm", 500),
    ("natural-map", "lm", 500),
    ("sap", "newton-merit", 100),
];

/// One exported problem.
struct Exported {
    name: String,
    set: &'static str,
    contacts: usize,
    problem: GeneralizedProblem,
}

/// MuJoCo's measured solve of one problem.
#[derive(Debug, Clone)]
struct MujocoSolve {
    seconds: f64,
    iterations: u64,
    abs_residual: f64,
    replay_matches: bool,
}

/// Our measured solves of one (problem, solver, layout).
#[derive(Debug, Clone, Default)]
struct Measured {
    seconds: Vec<f64>,
    /// The part of each solve spent building the formulation (`Outcome::build_seconds`).
    build_seconds: Vec<f64>,
    status: String,
    largest_island: u64,
    iterations: u64,
    islands: u64,
    residual: f64,
    r: Vec<f64>,
}

/// The median of the finite values (NaN without any).
fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

fn bad(what: impl std::fmt::Display) -> ReportError {
    ReportError::MissingData(what.to_string())
}

fn load_problems(root: &Path) -> Result<Vec<Exported>, ReportError> {
    let dir = root.join("data/mujoco/global");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            let problem = match read_problem(path).map_err(bad)? {
                Problem::Global(g) => GeneralizedProblem::from_global(&g).map_err(bad)?,
                Problem::Local(_) => return Err(bad(format!("{name}: not a global problem"))),
            };
            let contacts = problem.num_contacts();
            let set = match (name.starts_with("clutter"), contacts >= 80) {
                (true, true) => "mujoco_clutter_80plus",
                (true, false) => "mujoco_clutter_small",
                (false, _) => "mujoco_balls",
            };
            Ok(Exported {
                name,
                set,
                contacts,
                problem,
            })
        })
        .collect()
}

/// Runs `solver_times.py`; its per-problem solve by problem name.
fn mujoco_times(
    root: &Path,
    repeats: usize,
) -> Result<(BTreeMap<String, MujocoSolve>, String), ReportError> {
    let out = Command::new("python3")
        .arg(root.join("experiments/peers/solver_times.py"))
        .args(["--repeats", &repeats.to_string()])
        .arg("--data")
        .arg(root.join("data/mujoco"))
        .output()
        .map_err(|e| bad(format!("python3 could not start: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(bad(format!(
            "solver_times.py failed: {} (it needs `pip install mujoco numpy`)",
            err.lines().last().unwrap_or("no message")
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(bad)?;
    let version = v["mujoco_version"].as_str().unwrap_or("?").to_string();
    let mut map = BTreeMap::new();
    for p in v["problems"]
        .as_array()
        .ok_or_else(|| bad("no `problems`"))?
    {
        let name = p["problem"].as_str().unwrap_or_default().to_string();
        map.insert(
            name,
            MujocoSolve {
                seconds: p["mujoco_constraint_seconds_median"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                iterations: p["mujoco_iterations"].as_u64().unwrap_or(0),
                abs_residual: p["accuracy"]["abs_residual_inf"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                replay_matches: p["replay_matches"].as_bool().unwrap_or(false),
            },
        );
    }
    Ok((map, version))
}

/// The two layouts every solver runs in.
const LAYOUTS: [(&str, bool); 2] = [("islands+blocks", false), ("whole+dense", true)];

fn resolve(
    reg: &Registry,
    f: &str,
    o: &str,
    max_iter: u64,
    whole_dense: bool,
) -> Result<ResolvedSolver, ReportError> {
    let mut spec = SolverSpec::new(f, o, TOLERANCE, max_iter);
    spec.time_limit = Some(TIME_LIMIT);
    spec.islands = !whole_dense;
    spec.dense = whole_dense;
    reg.resolve(&spec).map_err(|e| bad(format!("{f}+{o}: {e}")))
}

/// Runs everything and writes `reports/peers/`: `peers.csv`, `problems.csv`, `README.md`.
pub fn run(
    lab: &Lab,
    rounds: usize,
    whole_steps: bool,
    out: &mut dyn std::io::Write,
) -> Result<PathBuf, ReportError> {
    let root = lab.root();
    let problems = load_problems(root)?;
    let reg = lab.registry();
    let solvers: Vec<(String, [ResolvedSolver; 2])> = SOLVERS
        .iter()
        .map(|&(f, o, it)| {
            Ok((
                format!("{f}+{o}"),
                [
                    resolve(reg, f, o, it, false)?,
                    resolve(reg, f, o, it, true)?,
                ],
            ))
        })
        .collect::<Result<_, ReportError>>()?;
    let worst = rounds as f64 * TIME_LIMIT * (problems.len() * solvers.len() * 2) as f64;
    writeln!(
        out,
        "peers: {} problems x {} solvers x 2 layouts, up to {rounds} interleaved rounds, {TIME_LIMIT} s limit per solve (worst case {:.0} min; slow solvers get fewer rounds)",
        problems.len(),
        solvers.len(),
        worst / 60.0
    )?;
    let (mujoco, version) = mujoco_times(root, 50)?;
    let mut measured: BTreeMap<(usize, usize, usize), Measured> = BTreeMap::new();
    for round in 0..rounds {
        for (pi, p) in problems.iter().enumerate() {
            for (si, (label, pair)) in solvers.iter().enumerate() {
                for (li, solver) in pair.iter().enumerate() {
                    let m = measured.entry((pi, si, li)).or_default();
                    // Solvers slower than 0.2 s a solve stop after 3 rounds (PGS never does).
                    let slow = median(&m.seconds) > 0.2 && !label.ends_with("+pgs");
                    if round > 0 && (slow && m.seconds.len() >= 3) {
                        continue;
                    }
                    let step = StepProblem::from_generalized(p.problem.clone());
                    let clock = Instant::now();
                    let outcome = solver.run(&step, None);
                    let seconds = clock.elapsed().as_secs_f64();
                    let outcome = outcome.map_err(|e| bad(format!("{}: {label}: {e}", p.name)))?;
                    m.seconds.push(seconds);
                    m.build_seconds.push(outcome.build_seconds);
                    if round == 0 {
                        m.islands = outcome.counters.get("islands").copied().unwrap_or(1);
                        m.largest_island = outcome
                            .counters
                            .get("largest_island")
                            .copied()
                            .unwrap_or(p.contacts as u64);
                        m.iterations = outcome.iterations;
                        let judged = contactlab_core::plugin::judge(&step, outcome, TOLERANCE)
                            .map_err(|e| bad(format!("{}: {label}: {e}", p.name)))?;
                        m.status = judged.status.as_str().to_string();
                        m.residual = judged.metrics.natural_map;
                        m.r = judged.r;
                    }
                }
            }
        }
        writeln!(out, "round {}/{rounds} done", round + 1)?;
    }
    let steps = if whole_steps {
        crate::step_peers::measure(lab, out)?
    } else {
        Vec::new()
    };
    write_report(
        root, &problems, &solvers, &measured, &mujoco, &version, &steps,
    )
}

fn write_report(
    root: &Path,
    problems: &[Exported],
    solvers: &[(String, [ResolvedSolver; 2])],
    measured: &BTreeMap<(usize, usize, usize), Measured>,
    mujoco: &BTreeMap<String, MujocoSolve>,
    version: &str,
    steps: &[WholeStep],
) -> Result<PathBuf, ReportError> {
    let dir = root.join("reports/peers");
    let mj = |p: &Exported| mujoco.get(&p.name).cloned();
    // Per problem.
    let mut per_problem = Vec::new();
    for (pi, p) in problems.iter().enumerate() {
        for (si, (label, _)) in solvers.iter().enumerate() {
            for (li, (layout, _)) in LAYOUTS.iter().enumerate() {
                let m = &measured[&(pi, si, li)];
                let (mjs, mji) = mj(p).map_or((f64::NAN, 0), |m| (m.seconds, m.iterations));
                per_problem.push(vec![
                    p.name.clone(),
                    p.set.into(),
                    p.contacts.to_string(),
                    label.clone(),
                    layout.to_string(),
                    m.status.clone(),
                    m.iterations.to_string(),
                    m.islands.to_string(),
                    format!("{:.3e}", m.residual),
                    m.seconds.len().to_string(),
                    format!("{:.4e}", median(&m.seconds)),
                    format!("{:.4e}", mjs),
                    mji.to_string(),
                    format!("{:.3}", median(&m.seconds) / mjs),
                ]);
            }
        }
    }
    write_csv(
        &dir.join("problems.csv"),
        &[
            "problem",
            "problem_set",
            "contacts",
            "solver",
            "layout",
            "status",
            "iterations",
            "islands",
            "residual",
            "repeats",
            "median_seconds",
            "mujoco_median_seconds",
            "mujoco_iterations",
            "ratio_to_mujoco",
        ],
        &per_problem,
    )?;
    // Per set and solver.
    let sets = [
        "mujoco_balls",
        "mujoco_clutter_small",
        "mujoco_clutter_80plus",
    ];
    let mut rows = Vec::new();
    let mut md_rows = Vec::new();
    let mut gain: BTreeMap<(&str, usize), f64> = BTreeMap::new();
    for set in sets {
        let idx: Vec<usize> = (0..problems.len())
            .filter(|&i| problems[i].set == set)
            .collect();
        let mj_med = median(
            &idx.iter()
                .filter_map(|&i| mj(&problems[i]).map(|m| m.seconds))
                .collect::<Vec<_>>(),
        );
        for (si, (label, _)) in solvers.iter().enumerate() {
            for li in 0..LAYOUTS.len() {
                let ms: Vec<&Measured> = idx.iter().map(|&i| &measured[&(i, si, li)]).collect();
                let solved = ms.iter().filter(|m| m.status == "converged").count();
                let med = median(&ms.iter().map(|m| median(&m.seconds)).collect::<Vec<_>>());
                let ratio = median(
                    &idx.iter()
                        .map(|&i| {
                            let t = median(&measured[&(i, si, li)].seconds);
                            mj(&problems[i]).map_or(f64::NAN, |m| t / m.seconds)
                        })
                        .collect::<Vec<_>>(),
                );
                let its = median(&ms.iter().map(|m| m.iterations as f64).collect::<Vec<_>>());
                let name = if li == 0 {
                    label.clone()
                } else {
                    format!("{label} (whole dense)")
                };
                rows.push(vec![
                    set.to_string(),
                    name.clone(),
                    idx.len().to_string(),
                    solved.to_string(),
                    format!("{med:.4e}"),
                    format!("{mj_med:.4e}"),
                    format!("{ratio:.3}"),
                ]);
                md_rows.push(vec![
                    set.to_string(),
                    name,
                    format!("{solved}/{}", idx.len()),
                    fmt(its, 0),
                    format!("{:.3}", med * 1e3),
                    format!("{:.3}", mj_med * 1e3),
                    fmt(ratio, 1),
                ]);
            }
            let g = median(
                &idx.iter()
                    .map(|&i| {
                        median(&measured[&(i, si, 1)].seconds)
                            / median(&measured[&(i, si, 0)].seconds)
                    })
                    .collect::<Vec<_>>(),
            );
            gain.insert((set, si), g);
        }
    }
    write_csv(
        &dir.join("peers.csv"),
        &[
            "problem_set",
            "solver",
            "problems",
            "solved",
            "median_seconds",
            "mujoco_median_seconds",
            "ratio_to_mujoco",
        ],
        &rows,
    )?;
    let pgs = solvers
        .iter()
        .position(|(l, _)| l == "coulomb+pgs")
        .ok_or_else(|| bad("coulomb+pgs is not in the solver list"))?;
    let big: Vec<usize> = (0..problems.len())
        .filter(|&i| problems[i].set == "mujoco_clutter_80plus")
        .collect();
    let pgs_gain = gain[&("mujoco_clutter_80plus", pgs)];
    let both_converged: Vec<usize> = big
        .iter()
        .copied()
        .filter(|&i| (0..2).all(|li| measured[&(i, pgs, li)].status == "converged"))
        .collect();
    let answer_gap = both_converged
        .iter()
        .map(|&i| {
            let (a, b) = (&measured[&(i, pgs, 0)].r, &measured[&(i, pgs, 1)].r);
            let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-300);
            a.iter()
                .zip(b)
                .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
                / scale
        })
        .fold(0.0_f64, f64::max);
    // Where the two layouts' times go: the build's share, and the gain without the builds.
    let over_big =
        |f: &dyn Fn(usize) -> f64| median(&big.iter().map(|&i| f(i)).collect::<Vec<_>>());
    let build_share = |li| {
        over_big(&|i| {
            let m = &measured[&(i, pgs, li)];
            median(&m.build_seconds) / median(&m.seconds)
        })
    };
    let after_build = |m: &Measured| median(&m.seconds) - median(&m.build_seconds);
    let gain_after_build =
        over_big(&|i| after_build(&measured[&(i, pgs, 1)]) / after_build(&measured[&(i, pgs, 0)]));
    let largest = big
        .iter()
        .max_by_key(|&&i| problems[i].contacts)
        .map(|&i| (measured[&(i, pgs, 0)].largest_island, problems[i].contacts))
        .ok_or_else(|| bad("no clutter problem with 80 or more contacts"))?;
    let pgs_rounds = big
        .iter()
        .map(|&i| measured[&(i, pgs, 0)].seconds.len())
        .min()
        .unwrap_or(0);
    let mj_acc = median(
        &problems
            .iter()
            .filter_map(|p| mj(p).map(|m| m.abs_residual))
            .collect::<Vec<_>>(),
    );
    let replayed = problems
        .iter()
        .filter(|p| mj(p).is_some_and(|m| m.replay_matches))
        .count();
    let prov = crate::provenance::Provenance::capture(root);
    let mut md = String::new();
    md += "# Beside MuJoCo's constraint solver: every formulation on MuJoCo's own steps\n\n";
    md += &format!(
        "Generated by `just peers` on {} ({} CPUs, {} build, commit {}, {}), MuJoCo {version}. Do not edit: rerun.\n\n",
        prov.cpu, prov.cpus, prov.build, prov.commit, prov.date
    );
    md += &format!(
        "**What is timed.** The {} problems of `data/mujoco/global/` are real steps of MuJoCo runs (balls in a box, clutter of 8 to 80 bodies). MuJoCo's time is `mj_fwdConstraint` alone, replayed to the same step by `experiments/peers/solver_times.py` (the replay reproduced MuJoCo's exported impulses on {replayed} of {} problems), median of 50 warm-started solves. Ours is one solve from a fresh problem (contact-space form, islands and solve; parsing and the shared ruler excluded), median over interleaved rounds ({pgs_rounds} or more for PGS). Ratios are per problem, then the median over the set: both engines measured in this run on this machine, single-threaded.\n\n",
        problems.len(),
        problems.len()
    );
    md += &format!(
        "**Accuracy.** Our solvers run to the natural-map residual {TOLERANCE:e} of the rigid problem (time limit {TIME_LIMIT} s a solve). MuJoCo solves its own regularised problem (soft contacts, `solref`, `solimp`) to a tolerance on a scaled cost; the accuracy it reached on its own optimality conditions is a median {} m/s (`abs_residual_inf` of the export). The models differ, so this compares solvers at stated accuracies, not identical answers.\n\n",
        fmt(mj_acc, 8)
    );
    md += "## Per problem set\n\n`solved`: natural-map residual at most the tolerance (for SAP, its own optimality: its model is regularised). Times in ms.\n\n";
    md += &markdown_table(
        &[
            "problem set",
            "solver",
            "solved",
            "median iterations",
            "median ms",
            "MuJoCo median ms",
            "ratio to MuJoCo",
        ],
        &md_rows,
    );
    md += "\n## What islands and block-sparse `W` gain\n\nMedian over each set's problems of (whole problem, dense `W`) time / (islands, block-sparse `W`) time, same solver, same run.\n\n";
    let gain_rows: Vec<Vec<String>> = solvers
        .iter()
        .enumerate()
        .map(|(si, (label, _))| {
            let mut r = vec![label.clone()];
            r.extend(sets.iter().map(|s| fmt(gain[&(*s, si)], 2)));
            r
        })
        .collect();
    md += &markdown_table(
        &[
            "solver",
            "balls",
            "clutter, under 80 contacts",
            "clutter, 80 or more",
        ],
        &gain_rows,
    );
    md += &format!(
        "\n**PGS on the clutter steps with 80 or more contacts** ({} problems): islands and block-sparse `W` make the median solve {:.2}x faster than the whole dense problem; the issue asked for at least 10x, which is {}. On the {} of them where both layouts converge, the two answers differ by at most {:.1e} of the largest impulse (both solved to the residual {TOLERANCE:e}, not to 1e-8 in the impulses: PGS's answers are as close as its residual makes them); on the others PGS stops at its iteration cap in both layouts. Why the gain stops there: both layouts run the same sweep, over the nonzero 3x3 blocks of `W` only (PGS's sweep kept only those before islands existed), with the same local solves; what islands and blocks remove is the dense product `J A^-1 J'` (a median {:.0}% of the whole dense solve, against {:.0}% for the blocks of every island), the dense residual product after each sweep, and the sweeps of islands that converged early. Without the builds, the gain is {:.2}x. The largest of these problems keeps {} of its {} contacts in one island.\n",
        big.len(),
        pgs_gain,
        if pgs_gain >= 10.0 { "met" } else { "not met" },
        both_converged.len(),
        answer_gap,
        100.0 * build_share(1),
        100.0 * build_share(0),
        gain_after_build,
        largest.0,
        largest.1,
    );
    if !steps.is_empty() {
        md += &whole_step_section(&dir, steps)?;
    }
    md += "\nFiles: `peers.csv` (per set and solver, the issue's columns), `problems.csv` (per problem, solver and layout)";
    md += if steps.is_empty() {
        ".\n"
    } else {
        ", `steps.csv` (whole steps, per scene and engine).\n"
    };
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("README.md");
    std::fs::write(&path, md)?;
    Ok(path)
}

/// The whole-step section of the report, and `steps.csv` beside it.
fn whole_step_section(dir: &Path, steps: &[WholeStep]) -> Result<String, ReportError> {
    std::fs::create_dir_all(dir)?;
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|r| {
            vec![
                r.scene.clone(),
                r.engine.clone(),
                r.solver.clone(),
                r.steps.to_string(),
                format!("{}", r.contacts_median),
                format!("{:.4e}", r.median_seconds),
            ]
        })
        .collect();
    write_csv(
        &dir.join("steps.csv"),
        &[
            "scene",
            "engine",
            "solver",
            "steps",
            "contacts_median",
            "median_seconds",
        ],
        &rows,
    )?;
    let ms = |s: f64| {
        if s.is_finite() {
            fmt(s * 1e3, 3)
        } else {
            "-".into()
        }
    };
    let sets = summary(steps);
    let md_rows: Vec<Vec<String>> = sets
        .iter()
        .map(|s| {
            vec![
                s.set.clone(),
                s.solver.clone(),
                s.scenes.to_string(),
                fmt(s.contacts_median, 0),
                ms(s.median_seconds),
                ms(s.mujoco_median_seconds),
                ms(s.drake_median_seconds),
                if s.ratio_to_mujoco.is_finite() {
                    fmt(s.ratio_to_mujoco, 1)
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    let drake = steps.iter().any(|r| r.engine == "drake-sap");
    let mut md = String::from("\n## Whole steps, scene against scene\n\n");
    md += "Ours: `experiments/configs/peers/{balls,clutter}.toml` run on one thread by the same runner as every experiment, each step's collision detection, assembly, solve and update (`scene_seconds + seconds`), warm-started from the previous step. MuJoCo's: `mj_step` on the same scenes built by `experiments/peers/bench.py` (Newton, elliptic cones, its soft contacts), in this run";
    md += if drake {
        "; Drake's: one `AdvanceTo` of its SAP (point contact), called from Python, with Castro et al.'s `k = 1e12`, `tau_d = h` on the clutter and Drake's default contact parameters on the balls. "
    } else {
        " (Drake was not installed: `pip install drake` adds its column). "
    };
    md += "The balls are the twelve cells (n_b, mu) of Todorov's Table 1, placed by different random generators on the two sides, so each cell compares the same scene statistically; our balls are rigid contact, solved by Todorov's driver or PGS to the residual 1e-8. The ratio is taken per scene, then its median over the set. Times in ms, medians over the steps of a run.\n\n";
    md += &markdown_table(
        &[
            "scene set",
            "our solver",
            "scenes",
            "our contacts per step",
            "our ms per step",
            "MuJoCo ms per step",
            "Drake ms per step",
            "ratio to MuJoCo",
        ],
        &md_rows,
    );
    Ok(md)
}
