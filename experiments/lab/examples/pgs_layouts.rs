//! Times one solver on one problem file (global or local) in both layouts, islands+blocks and
//! whole+dense, interleaved, in release:
//!
//! ```sh
//! cargo run --release -j2 -p contactlab-lab --example pgs_layouts -- \
//!     data/mujoco/global/clutter_n80_seed7_step0120_nc146.json coulomb pgs 20
//! ```
//!
//! Arguments: the problem file, formulation (coulomb), optimizer (pgs), rounds (20), and
//! `sparse` or `dense` to time one layout only (for a profiler); the tolerance comes from the
//! environment variable `TOL` (1e-8 by default).

use std::time::Instant;

use contactlab_core::io::read_problem;
use contactlab_core::{GeneralizedProblem, Problem, StepProblem};
use contactlab_lab::registry::{Registry, SolverSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &'static str| args.get(i).map_or(d, String::as_str);
    let path = arg(
        0,
        "data/mujoco/global/clutter_n80_seed7_step0120_nc146.json",
    );
    let (f, o) = (arg(1, "coulomb"), arg(2, "pgs"));
    let tol: f64 = std::env::var("TOL").map_or(Ok(1e-8), |t| t.parse())?;
    let rounds: usize = arg(3, "20").parse()?;
    let only = args.get(4).map(String::as_str);
    let problem = read_problem(std::path::Path::new(path))?;
    let reg = Registry::standard();
    let solvers = [false, true].map(|dense| {
        let mut spec = SolverSpec::new(f, o, tol, 5000);
        spec.islands = !dense;
        spec.dense = dense;
        reg.resolve(&spec)
    });
    let mut times = [Vec::new(), Vec::new()];
    let mut iterations = [0, 0];
    for _ in 0..rounds {
        for (i, s) in solvers.iter().enumerate() {
            if only.is_some_and(|l| l != ["sparse", "dense"][i]) {
                continue;
            }
            let s = s.as_ref().map_err(|e| e.to_string())?;
            let step = match &problem {
                Problem::Global(g) => {
                    StepProblem::from_generalized(GeneralizedProblem::from_global(g)?)
                }
                Problem::Local(l) => StepProblem::local_only(l.clone()),
            };
            let clock = Instant::now();
            let out = s.run(&step, None)?;
            times[i].push(clock.elapsed().as_secs_f64());
            iterations[i] = out.iterations;
            if times[i].len() == 1 {
                println!(
                    "{:?} build {:.3} ms {:?}",
                    out.solution.status,
                    out.build_seconds * 1e3,
                    out.counters
                );
            }
        }
    }
    for t in &mut times {
        t.sort_by(f64::total_cmp);
    }
    let med = |t: &[f64]| t.get(t.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "islands+blocks {:.3} ms ({} it), whole+dense {:.3} ms ({} it), ratio {:.2}",
        med(&times[0]) * 1e3,
        iterations[0],
        med(&times[1]) * 1e3,
        iterations[1],
        med(&times[1]) / med(&times[0])
    );
    Ok(())
}
