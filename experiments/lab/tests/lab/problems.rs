//! Problem-set runs (`kind = "problems"`) end to end through `Lab::run`: rows per (problem,
//! solver), the solver's own law's violation, the timing rounds (with solvers exempt from the
//! slow rule), kept answers and layouts, MuJoCo's answers as a reference with the SAP oracle,
//! left-out files, and refusals naming the key at fault.

use std::path::{Path, PathBuf};

use contactlab_lab::Lab;
use contactlab_runs::store::{read_run, RunMeta};
use polars::prelude::*;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch root whose `data` links to the workspace's problems.
fn scratch(tag: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("contactlab-problems-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("experiments/configs/p")).unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    for d in ["problems", "mujoco"] {
        std::os::unix::fs::symlink(workspace().join("data").join(d), root.join("data").join(d))
            .unwrap();
    }
    root
}

fn f64s(df: &DataFrame, c: &str) -> Vec<f64> {
    contactlab_runs::columns::f64s(df, c).unwrap()
}

fn strs(df: &DataFrame, c: &str) -> Vec<String> {
    contactlab_runs::columns::strs(df, c).unwrap()
}

#[test]
fn a_problem_set_run_times_named_solvers_and_checks_their_own_laws() {
    let root = scratch("laws");
    let config = root.join("experiments/configs/p/files.toml");
    std::fs::write(
        &config,
        "kind = \"problems\"\npaper = \"p\"\nname = \"files\"\nrounds = 3\nform = \"local\"\n\
         [[sets]]\nname = \"shipped\"\nfiles = [\"data/problems/Rover4396.hdf5\", \
         \"data/problems/Chute-ndof-768-nc-4-3.hdf5\", \"data/problems/two_contacts.json\"]\n\
         [[solvers]]\nlabel = \"pgs\"\nformulation = \"coulomb\"\noptimizer = \"pgs\"\ntol = 1e-8\nmax_iter = 5000\n\
         [[solvers]]\nlabel = \"bisection\"\nformulation = \"coulomb\"\noptimizer = \"bisection-sor\"\ntol = 1e-8\nmax_iter = 5000\n",
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab.run(&config, None, &mut Vec::new()).unwrap();
    let df = read_run(&summary.path).unwrap();
    // The Chute file has rolling friction: no contact-space form, left out and said so.
    let meta = std::fs::read_to_string(summary.path.with_extension("meta.json")).unwrap();
    assert!(meta.contains("Chute-ndof-768-nc-4-3.hdf5"), "{meta}");
    assert_eq!(RunMeta::of_run(&summary.path).rows, Some(4));
    assert_eq!(df.height(), 4, "two problems x two solvers");
    assert_eq!(
        strs(&df, "solver"),
        ["pgs", "bisection", "pgs", "bisection"]
    );
    assert_eq!(
        strs(&df, "model")[..2],
        ["coulomb_cone", "maximum_dissipation"]
    );
    assert!(f64s(&df, "rounds").iter().all(|&r| r == 3.0));
    let (sec, min) = (f64s(&df, "seconds"), f64s(&df, "seconds_min"));
    assert!(sec.iter().zip(&min).all(|(s, m)| *m > 0.0 && m <= s));
    // Each solver meets its own law at its answer; PGS's Coulomb answer also meets the ruler.
    let (own, residual, status) = (
        f64s(&df, "own_violation"),
        f64s(&df, "residual"),
        strs(&df, "status"),
    );
    for (i, v) in own.iter().enumerate() {
        assert!(*v < 1e-5, "row {i}: own violation {v}");
    }
    assert_eq!(status[0], "converged");
    assert!(residual[0] <= 1e-8);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn mujocos_answers_are_a_reference_with_the_sap_oracle_inside_its_bound() {
    let root = scratch("mujoco");
    let config = root.join("experiments/configs/p/set.toml");
    std::fs::write(
        &config,
        "kind = \"problems\"\npaper = \"p\"\nname = \"set\"\n\
         [[sets]]\nname = \"mujoco\"\nfiles = [\"data/mujoco/global/balls_in_box_n10_mu0.5_seed110_step0050_nc4.json\"]\n\
         [reference]\nkind = \"mujoco\"\ndir = \"data/mujoco/mujoco\"\n\
         [[solvers]]\nlabel = \"SAP\"\nformulation = \"sap\"\noptimizer = \"newton-merit\"\ntol = 1e-12\nrel_tol = 1e-8\nislands = false\n",
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab.run(&config, None, &mut Vec::new()).unwrap();
    let df = read_run(&summary.path).unwrap();
    assert_eq!(df.height(), 1);
    assert_eq!(strs(&df, "form"), ["global"]);
    assert_eq!(f64s(&df, "n_c"), [4.0]);
    assert!(f64s(&df, "dofs")[0] > 0.0);
    let (err, bound) = (f64s(&df, "oracle_error")[0], f64s(&df, "oracle_bound")[0]);
    assert!(
        err.is_finite() && err <= bound,
        "oracle {err} against bound {bound}"
    );
    let d = f64s(&df, "reference_distance")[0];
    assert!(d.is_finite() && d >= 0.0);
    assert!(f64s(&df, "reference_iterations")[0] >= 1.0);
    assert!(
        f64s(&df, "e_m")[0].is_finite(),
        "SAP's own diagnostics become columns"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn sap_solves_every_problem_mujoco_exported_and_meets_the_oracle() {
    // The whole of data/mujoco/global with MuJoCo's answers (what Castro's `mujoco_set.toml`
    // times with three solvers): SAP's Algorithm 2 converges on each, and on MuJoCo's own
    // problem the oracle lands inside the ball MuJoCo's accuracy allows.
    let root = scratch("mujoco-set");
    let config = root.join("experiments/configs/p/whole_set.toml");
    std::fs::write(
        &config,
        "kind = \"problems\"\npaper = \"p\"\nname = \"whole_set\"\n\
         [[sets]]\nname = \"mujoco\"\ndirs = [\"data/mujoco/global\"]\n\
         [reference]\nkind = \"mujoco\"\ndir = \"data/mujoco/mujoco\"\n\
         [[solvers]]\nlabel = \"SAP\"\nformulation = \"sap\"\noptimizer = \"newton-merit\"\ntol = 1e-12\nrel_tol = 1e-8\nislands = false\n",
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab.run(&config, None, &mut Vec::new()).unwrap();
    let df = read_run(&summary.path).unwrap();
    assert!(df.height() >= 4, "{} problems", df.height());
    let names = strs(&df, "problem");
    let (err, bound) = (f64s(&df, "oracle_error"), f64s(&df, "oracle_bound"));
    let (e_m, distance) = (f64s(&df, "e_m"), f64s(&df, "reference_distance"));
    let status = strs(&df, "solver_status");
    for (k, name) in names.iter().enumerate() {
        assert!(
            err[k] <= bound[k],
            "{name}: oracle {} > {}",
            err[k],
            bound[k]
        );
        assert_eq!(status[k], "converged", "{name}");
        assert!(e_m[k] < 1e-7, "{name}: e_m {}", e_m[k]);
        // SAP's own regularisation is not MuJoCo's: close, not equal.
        assert!(distance[k] < 1.0, "{name}: distance {}", distance[k]);
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn exempt_solvers_run_every_round_and_answers_and_layouts_are_kept() {
    let root = scratch("exempt");
    let config = root.join("experiments/configs/p/exempt.toml");
    // Every solve is "slow" (1 ns): after one round only the exempt solver repeats.
    std::fs::write(
        &config,
        "kind = \"problems\"\npaper = \"p\"\nname = \"exempt\"\nrounds = 3\n\
         slow_seconds = 1e-9\nslow_rounds = 1\nslow_exempt = [\"coulomb+pgs\"]\nanswers = true\n\
         [[sets]]\nname = \"mujoco\"\nfiles = [\"data/mujoco/global/clutter_n8_seed7_step0100_nc20.json\"]\n\
         [[solvers]]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\ntol = 1e-8\nmax_iter = 5000\n\
         whole_below = 0\n\
         [[solvers]]\nlabel = \"coulomb+pgs (whole dense)\"\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n\
         tol = 1e-8\nmax_iter = 5000\nislands = false\ndense = true\n",
    )
    .unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab.run(&config, None, &mut Vec::new()).unwrap();
    let df = read_run(&summary.path).unwrap();
    assert_eq!(f64s(&df, "rounds"), [3.0, 1.0]);
    assert_eq!(strs(&df, "layout"), ["islands+blocks", "whole+dense"]);
    // The islands layout splits the step (a counter); the whole one reports no islands.
    let islands = f64s(&df, "islands");
    assert!(islands[0] > 1.0 && islands[1] == 0.0, "{islands:?}");
    assert_eq!(strs(&df, "status"), ["converged", "converged"]);
    let list = df.column("r").unwrap().list().unwrap().clone();
    let r: Vec<Vec<f64>> = (0..list.len())
        .map(|i| {
            let s = list.get_as_series(i).unwrap();
            s.f64().unwrap().into_no_null_iter().collect()
        })
        .collect();
    assert_eq!((r[0].len(), r[1].len()), (60, 60), "3 numbers per contact");
    let scale = r[1].iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let gap = r[0]
        .iter()
        .zip(&r[1])
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(gap <= 1e-3 * scale, "the layouts agree: {gap} of {scale}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn problem_set_refusals_name_the_key() {
    let root = scratch("refusals");
    let config = root.join("experiments/configs/p/bad.toml");
    let run = |text: &str| {
        std::fs::write(&config, text).unwrap();
        Lab::standard()
            .with_root(&root)
            .run(&config, None, &mut Vec::new())
            .unwrap_err()
            .to_string()
    };
    let head = "kind = \"problems\"\npaper = \"p\"\nname = \"bad\"\n[[sets]]\nname = \"s\"\n";
    let e = run(&format!(
        "{head}files = [\"data/problems/two_contacts.json\"]\n[[solvers]]\nformulation = \"coulomb\"\noptimizer = \"lm\"\n"
    ));
    assert!(
        e.contains("solvers[0]") && e.contains("cannot be run"),
        "{e}"
    );
    let e = run(&format!(
        "{head}files = [\"data/problems/nothing.json\"]\n[[solvers]]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n"
    ));
    assert!(
        e.contains("sets[0].files") && e.contains("nothing.json"),
        "{e}"
    );
    let e = Lab::standard()
        .with_root(&root)
        .run(&config, Some((1, 2)), &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not sharded"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}
