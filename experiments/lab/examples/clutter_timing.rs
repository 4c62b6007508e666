//! Times the clutter scene (Castro et al. 2022, section VI-C) under SAP phase by phase:
//! collision detection, assembly, solve, advance. Release build:
//!
//! ```sh
//! cargo run --release -j2 -p contactlab-lab --example clutter_timing -- 40 walls 1000
//! ```
//!
//! Arguments (all optional): number of bodies (40), `walls` or `ground` (walls), steps (1000),
//! seed (0), `rel_tol` (1e-5: the paper's eq. 26 with `eps_r = 1e-5`).

use std::time::Instant;

use contactlab_lab::registry::{Registry, SolverSpec};
use contactlab_scenes::clutter::{profile, Clutter, ClutterConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let n_bodies: usize = arg(0).map_or(Ok(40), str::parse)?;
    let walls = arg(1).is_none_or(|w| w != "ground");
    let steps: usize = arg(2).map_or(Ok(1000), str::parse)?;
    let seed: u64 = arg(3).map_or(Ok(0), str::parse)?;
    let rel_tol: f64 = arg(4).map_or(Ok(1e-5), str::parse)?;
    let mut spec = SolverSpec::new("sap", "newton-merit", 1e-16, 100);
    spec.rel_tol = rel_tol;
    let solver = Registry::standard().resolve(&spec)?;
    let mut scene = Clutter::new(&ClutterConfig {
        n_bodies,
        walls,
        seed,
        ..ClutterConfig::default()
    })?;
    let start = Instant::now();
    let log = profile(&mut scene, steps, |p| {
        solver
            .solve(p, None)
            .map(|s| (s.r, s.iterations, s.status.as_str().to_string()))
    })?;
    let wall = start.elapsed().as_secs_f64();
    let solved: Vec<_> = log.iter().filter(|s| s.contacts > 0).collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let its: Vec<f64> = solved.iter().map(|s| s.iterations as f64).collect();
    let tail: Vec<f64> = log[steps / 2..]
        .iter()
        .filter(|s| s.contacts > 0)
        .map(|s| s.iterations as f64)
        .collect();
    let sum =
        |f: fn(&contactlab_scenes::clutter::StepTiming) -> f64| log.iter().map(f).sum::<f64>();
    let (detect, assemble, solve, advance) = (
        sum(|s| s.detect),
        sum(|s| s.assemble),
        sum(|s| s.solve),
        sum(|s| s.advance),
    );
    let total = detect + assemble + solve + advance;
    let max = solved.iter().map(|s| s.iterations).max().unwrap_or(0);
    let argmax = solved.iter().find(|s| s.iterations == max);
    let not_converged = solved.iter().filter(|s| s.status != "converged").count();
    println!(
        "clutter: {n_bodies} bodies, {}, seed {seed}, {steps} steps of 10 ms, SAP rel_tol {rel_tol}",
        if walls { "walls" } else { "ground" }
    );
    println!(
        "wall time {wall:.3} s for {:.2} simulated s; steps with contacts {}",
        steps as f64 * 0.01,
        solved.len()
    );
    println!(
        "iterations: mean {:.2}, steady state (last half) {:.2}, max {max} ({:?}), at the cap (100) {}, not converged {not_converged}",
        mean(&its),
        mean(&tail),
        argmax.map(|s| s.contacts),
        solved.iter().filter(|s| s.iterations >= 100).count(),
    );
    println!(
        "time: detect {:.3} s ({:.1}%), assemble {:.3} s ({:.1}%), solve {:.3} s ({:.1}%), advance {:.3} s ({:.1}%)",
        detect,
        100.0 * detect / total,
        assemble,
        100.0 * assemble / total,
        solve,
        100.0 * solve / total,
        advance,
        100.0 * advance / total
    );
    let last = log.last().map_or(0, |s| s.contacts);
    let max_pen = log.iter().map(|s| s.max_penetration).fold(0.0, f64::max);
    println!(
        "contacts at the end {last}, max over steps {}; largest overlap {max_pen:.3e} m; kinetic energy at the end {:.3e} J; mean slip {:.3e} m/s",
        log.iter().map(|s| s.contacts).max().unwrap_or(0),
        scene.kinetic_energy(),
        scene.mean_slip()
    );
    // CLUTTER_STEPS=1: one line per step (step, contacts, iterations, status, seconds of
    // detection, assembly and solve, largest overlap after the step).
    if std::env::var_os("CLUTTER_STEPS").is_some() {
        for (k, s) in log.iter().enumerate() {
            println!(
                "{k} {} {} {} {:.3e} {:.3e} {:.3e} {:.3e}",
                s.contacts,
                s.iterations,
                s.status,
                s.detect,
                s.assemble,
                s.solve,
                s.max_penetration
            );
        }
    }
    Ok(())
}
