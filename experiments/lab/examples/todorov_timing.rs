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
//! Arguments: the problem file, the iteration cap (10), the repeats (31; the median is
//! printed). The tolerance is 1e-300 (it must be positive), so the cap or a local minimum
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
    let file = read_problem(Path::new(path))?;
    let rows = match &file {
        Problem::Local(l) => l.q.len(),
        Problem::Global(g) => 3 * g.num_contacts(),
    };
    let problem = StepProblem::from_problem(&file)?;
    let solver =
        Registry::standard().resolve(&SolverSpec::new("implicit-ncp", "todorov", 1e-300, cap))?;
    let mut seconds = Vec::with_capacity(repeats);
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        let s = solver.solve(&problem, None)?;
        seconds.push(start.elapsed().as_secs_f64());
        last = Some(s);
    }
    let s = last.ok_or("no solve ran")?;
    seconds.sort_by(f64::total_cmp);
    let bits = s.r.iter().fold(0u64, |h, v| h.rotate_left(5) ^ v.to_bits());
    println!(
        "{rows} rows: {} iterations, {}, natural map {:.6e}, answer bits {bits:016x}, median {:.3} ms",
        s.iterations,
        s.status.as_str(),
        s.metrics.natural_map,
        seconds[seconds.len() / 2] * 1e3
    );
    Ok(())
}
