//! `just bench`: criterion timings of every paper's formulation with its own driver, and of a
//! generic driver on the same residual, on the same contact problems.
//!
//! The problems are the ones the reproductions run on, so a speed-up measured here is one the
//! reports feel:
//! - `balls15`: a step of Todorov's Table 1 scene (15 balls, `mu = 1`, seed 0), the step with
//!   the most contacts among the first 150, reached by simulating with Todorov's driver;
//! - `boxes_stack`: the FCLib problem `BoxesStack1-i100000-32` (committed under `data/problems`);
//! - `lcp96`: one of Erleben and Ortiz's random boxed LCPs of size 96 (Delassus-like family).
//!
//! Plus the kernel behind the Table 1 speed-up: Todorov's `J'J` in O(n^2) from the
//! problem-constant products, against the dense product of the formed Jacobian.
//!
//! Timings are of release builds (`cargo bench`); criterion's own reports land in
//! `target/criterion/`. No test asserts a time.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use contactlab_core::io::read_local;
use contactlab_core::{LocalProblem, Residual};
use contactlab_formulations::todorov::ImplicitNcp;
use contactlab_lab::registry::{solve_spec, SolverSpec};
use contactlab_scenes::{BallsConfig, BallsInCube, RandomLcp, RandomLcpConfig, Scene};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use faer::Mat;

/// The (formulation, optimizer) pairs timed on every problem: each paper's own driver, and a
/// generic driver on the same residual.
const PAIRS: [(&str, &str); 7] = [
    ("implicit-ncp", "todorov"),
    ("implicit-ncp", "lm"),
    ("natural-map", "lm"),
    ("coulomb", "pgs"),
    ("min-map", "newton"),
    ("mlcp-fb", "lm"),
    ("mncp", "lm"),
];

/// Todorov's Table 1 scene at its most crowded step among the first 150.
fn balls_problem() -> LocalProblem {
    let params: toml::Table = toml::from_str("n_balls = 15\nmu = 1.0\nseed = 0\nh = 0.005")
        .expect("bench scene parameters parse");
    let config = BallsConfig::from_table(&params).expect("bench scene parameters are valid");
    let mut scene = BallsInCube::random(&config).expect("bench scene builds");
    let driver = SolverSpec::new("implicit-ncp", "todorov", 1e-8, 100);
    let mut best: Option<LocalProblem> = None;
    for _ in 0..150 {
        let step = scene.contact_step().expect("bench scene steps");
        let r = if step.problem.local().unwrap().num_contacts() == 0 {
            Vec::new()
        } else {
            solve_spec(&step.problem, &driver, None)
                .expect("bench scene solves")
                .r
        };
        if best
            .as_ref()
            .is_none_or(|b| step.problem.local().unwrap().num_contacts() > b.num_contacts())
        {
            best = Some(step.problem.local().unwrap().clone());
        }
        Scene::advance(&mut scene, &step, &r).expect("bench scene advances");
    }
    best.expect("150 steps were taken")
}

fn fclib_problem() -> LocalProblem {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/problems/BoxesStack1-i100000-32.hdf5");
    read_local(&path).expect("committed FCLib problem reads")
}

fn lcp_problem() -> LocalProblem {
    let config = RandomLcpConfig {
        size: 96,
        ..RandomLcpConfig::default()
    };
    RandomLcp::new(&config)
        .and_then(|s| s.problem_at(0))
        .expect("random LCP builds")
}

fn local_solves(c: &mut Criterion) {
    let problems = [
        ("balls15", balls_problem()),
        ("boxes_stack", fclib_problem()),
        ("lcp96", lcp_problem()),
    ];
    for (name, problem) in &problems {
        let problem = &contactlab_core::StepProblem::from(problem.clone());
        let mut group = c.benchmark_group(format!("solve/{name}/nc{}", problem.num_contacts()));
        for (formulation, optimizer) in PAIRS {
            let spec = SolverSpec::new(formulation, optimizer, 1e-8, 100);
            // A pair that cannot run this problem is reported, not timed.
            if let Err(e) = solve_spec(problem, &spec, None) {
                eprintln!("skip {name} {formulation}+{optimizer}: {e}");
                continue;
            }
            let id = BenchmarkId::from_parameter(format!("{formulation}+{optimizer}"));
            group.bench_with_input(id, problem, |b, p| {
                b.iter(|| solve_spec(black_box(p), &spec, None))
            });
        }
        group.finish();
    }
}

fn todorov_normal_matrix(c: &mut Criterion) {
    let problem = balls_problem();
    let f = ImplicitNcp::new(&problem);
    let x = f.sticking_start(1e-10);
    let blocks = f.df_dx_blocks(&x, &f.regions(&x));
    let n = f.num_unknowns();
    let mut group = c.benchmark_group(format!("todorov_jtj/n{n}"));
    group.bench_function("block_o_n2", |b| {
        b.iter(|| f.normal_matrix(black_box(&blocks)))
    });
    group.bench_function("dense_o_n3", |b| {
        b.iter(|| {
            let mut j = Mat::<f64>::zeros(n, n);
            f.jacobian_from_blocks(black_box(&blocks), j.as_mut());
            j.transpose() * &j
        })
    });
    group.finish();
}

fn config() -> Criterion {
    // Short runs: the whole suite takes a few minutes on 2 cores; pass criterion's own flags
    // (e.g. `just bench -- --measurement-time 10`) for tighter intervals.
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = todorov_normal_matrix, local_solves
}
criterion_main!(benches);
