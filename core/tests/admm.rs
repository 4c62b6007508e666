//! ADMM against PGS on the shipped FCLib problems and MuJoCo's steps: where both converge, they
//! find the same impulses (the Coulomb problems here have unique answers to the tolerance).

use std::path::{Path, PathBuf};
use std::time::Duration;

use contactlab_core::drivers::admm::{solve_admm, Admm, MinEigenvalue};
use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
use contactlab_core::io::read_local;
use contactlab_core::metrics::local_metrics;
use contactlab_core::{LocalProblem, SolveOptions, Status};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(rel)
}

fn opts(tol: f64, max_iter: u64) -> SolveOptions {
    SolveOptions {
        stop_tol: tol,
        max_iter,
        time_limit: Some(Duration::from_secs(5)),
        ..Default::default()
    }
}

/// Every local problem file of a folder (global ones converted), sorted by name.
fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// A survey of ADMM (both `m` rules) and PGS on every shipped problem; run with
/// `cargo nextest run -p contactlab-core --run-ignored all survey --no-capture`.
#[test]
#[ignore]
fn survey() {
    let mut all = files("problems", "hdf5");
    all.extend(files("problems/capsules", "hdf5"));
    all.extend(files("mujoco/global", "json"));
    for f in all {
        let Ok(p) = read_local(&f) else { continue };
        if p.validate().is_err() || p.q.len() > 3000 {
            continue;
        }
        let o = opts(1e-6, 5000);
        let run = |a: &Admm| solve_admm(&p, a, None, &o).unwrap();
        let power = run(&Admm {
            min_eigenvalue: MinEigenvalue::Power,
            ..Default::default()
        });
        let zero = run(&Admm::default());
        let pgs = solve_pgs(&p, ProjectedGaussSeidel::default(), None, &o).unwrap();
        println!(
            "{:45} nc {:4} | power {:15} {:5} it {:3} fac {:8.2} ms | zero {:15} {:5} it {:3} fac {:8.2} ms | pgs {:15} {:5} it {:8.2} ms",
            f.file_name().unwrap().to_string_lossy(),
            p.mu().len(),
            power.status.as_str(),
            power.iterations,
            power.counters["factorizations"],
            1e3 * power.seconds,
            zero.status.as_str(),
            zero.iterations,
            zero.counters["factorizations"],
            1e3 * zero.seconds,
            pgs.status.as_str(),
            pgs.iterations,
            1e3 * pgs.seconds,
        );
    }
}

fn max_gap(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Both converge to `1e-10`; the velocities agree, and so do the impulses where `W` is
/// nonsingular (`unique_r`): with more constraints than degrees of freedom, `r` need not be
/// unique while `u = W r + q` is.
fn check_agrees(p: &LocalProblem, name: &str, unique_r: bool) {
    let o = opts(1e-10, 20000);
    let admm = solve_admm(p, &Admm::default(), None, &o).unwrap();
    let pgs = solve_pgs(p, ProjectedGaussSeidel::default(), None, &o).unwrap();
    assert_eq!(
        admm.status,
        Status::Converged,
        "{name}: admm {:?}",
        admm.status
    );
    assert_eq!(
        pgs.status,
        Status::Converged,
        "{name}: pgs {:?}",
        pgs.status
    );
    let m = local_metrics(p, &admm.x);
    assert!(
        m.natural_map <= 1e-10 && m.cone_violation < 1e-12,
        "{name}: {m:?}"
    );
    let (ua, up) = (p.velocity(&admm.x), p.velocity(&pgs.x));
    let u_scale = 1.0 + ua.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    assert!(
        max_gap(&ua, &up) <= 1e-6 * u_scale,
        "{name}: u gap {}",
        max_gap(&ua, &up)
    );
    if unique_r {
        let scale = 1.0 + admm.x.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let gap = max_gap(&admm.x, &pgs.x);
        assert!(gap <= 1e-6 * scale, "{name}: r gap {gap} at scale {scale}");
    }
}

#[test]
fn admm_agrees_with_pgs_where_both_converge() {
    let mut checked = 0;
    for (f, unique_r) in [
        ("problems/FC3D_Example1.hdf5", true),
        ("problems/Rover4396.hdf5", true),
        ("problems/Rover1040.hdf5", true),
        ("problems/Rover4144.hdf5", true),
        ("problems/NESpheres_10_1.hdf5", true),
        (
            "mujoco/global/balls_in_box_n15_mu1.0_seed115_step0090_nc17.json",
            false,
        ),
        ("mujoco/global/clutter_n8_seed7_step0250_nc19.json", false),
    ] {
        let p = read_local(&data(f)).unwrap();
        check_agrees(&p, f, unique_r);
        checked += 1;
    }
    assert_eq!(checked, 7);
}
