//! Times Todorov's driver (Todorov 2010, section III-E) on one problem file, capped at a
//! number of iterations, and prints a fingerprint of the answer's bits, so that a change
//! meant to leave the numbers alone (buffer reuse, a kernel swapped) can be checked to leave
//! them bit for bit. Release build:
//!
//! ```sh
//! cargo run --release -j2 -p contactlab-lab --example todorov_timing -- \
//!     data/mujoco/global/clutter_n40_seed7_step0400_nc110.json 10 31
//! ```
//!
//! Arguments: the problem file, the iteration cap (10), the repeats (31; the medians of the
//! whole solve and of its build and start are printed). The tolerance is 1e-300 (it must be positive), so the cap or a local minimum
//! decides where the solve stops.

use std::path::Path;
use std::time::Instant;

use contactlab_core::io::read_problem;
use contactlab_core::{Problem, StepProblem};
use contactlab_lab::registry::{Registry, SolverSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: todorov_timing <problem> [iterations] [repeats]")?;
    let cap: u64 = args.get(1).map_or(Ok(10), |a| a.parse())?;
    let repeats: usize = args.get(2).map_or(Ok(31), |a| a.parse())?;
    // In contact space from the start, as the peers' levels study hands its problems over
    // (`to_local()` in Python), so that the build timed is the formulation's alone.
    let local = match read_problem(Path::new(path))? {
        Problem::Local(l) => l,
        Problem::Global(g) => g.to_local()?,
    };
    let rows = local.q.len();
    let problem = StepProblem::from(local);
    let solver =
        Registry::standard().resolve(&SolverSpec::new("implicit-ncp", "todorov", 1e-300, cap))?;
    let (mut seconds, mut build, mut start) = (Vec::new(), Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let clock = Instant::now();
        let s = solver.solve(&problem, None)?;
        seconds.push(clock.elapsed().as_secs_f64());
        build.push(s.build_seconds);
        start.push(s.start_seconds);
        last = Some(s);
    }
    let s = last.ok_or("no solve ran")?;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] * 1e3
    };
    let bits = s.r.iter().fold(0u64, |h, v| h.rotate_left(5) ^ v.to_bits());
    println!(
        "{rows} rows: {} iterations, {}, natural map {:.6e}, answer bits {bits:016x}, median \
         {:.3} ms (build {:.3} ms, start {:.3} ms)",
        s.iterations,
        s.status.as_str(),
        s.metrics.natural_map,
        median(&mut seconds),
        median(&mut build),
        median(&mut start),
    );
    Ok(())
}
