//! End-to-end tests of the `contactlab` commands, through the library entry points and the
//! real binary.

use std::path::PathBuf;
use std::process::Command;

use contactlab_core::io::read_problem;
use contactlab_core::Problem;
use contactlab_experiments::cli;
use contactlab_experiments::registry::{Registry, SolverSpec};
use contactlab_experiments::Lab;
use serde_json::Value;

fn problems() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/problems")
}

fn solve_json(file: &str, formulation: &str, optimizer: &str, tol: f64) -> Value {
    let mut out = Vec::new();
    cli::solve_spec(
        &Lab::standard(),
        &problems().join(file),
        &SolverSpec::new(formulation, optimizer, tol, 500),
        true,
        &mut out,
    )
    .unwrap();
    serde_json::from_slice(&out).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn pgs_solves_a_shipped_fclib_problem_and_reports_consistent_json() {
    let v = solve_json("Rover4396.hdf5", "coulomb", "pgs", 1e-8);
    assert_eq!(v["status"], "converged", "{v}");
    assert!(v["residual"].as_f64().unwrap() <= 1e-8);
    assert!(v["iterations"].as_u64().unwrap() >= 1);
    assert!(v["seconds"].as_f64().unwrap() >= 0.0);
    // u is W r + q of the file's own problem (normal first, as FCLib stores it).
    let Problem::Local(p) = read_problem(&problems().join("Rover4396.hdf5")).unwrap() else {
        panic!("Rover4396 is a local problem")
    };
    let (r, u) = (floats(&v["r"]), floats(&v["u"]));
    assert_eq!(r.len(), 3 * p.num_contacts());
    let expected = p.velocity(&r);
    for (a, b) in u.iter().zip(&expected) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()));
    }
}

#[test]
fn every_listed_combination_runs_on_a_json_problem() {
    let mut out = Vec::new();
    cli::list_registry(&Registry::standard(), true, &mut out).unwrap();
    let list: Value = serde_json::from_slice(&out).unwrap();
    // Drivers that impose a friction model of their own (Hwangbo's bisection-SOR: maximum
    // dissipation) are measured like a pyramid formulation: against their own problem.
    let own_model: Vec<&str> = list["drivers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| !d["model"].is_null())
        .map(|d| d["optimizer"].as_str().unwrap())
        .collect();
    for combo in list["combinations"].as_array().unwrap() {
        let f = combo["formulation"].as_str().unwrap();
        for o in combo["optimizers"].as_array().unwrap() {
            let o = o.as_str().unwrap();
            let v = solve_json("two_contacts.json", f, o, 1e-8);
            // A 2-contact problem with a well-conditioned W: every method must solve it.
            if combo["exact_cone"].as_bool().unwrap() && !own_model.contains(&o) {
                assert_eq!(v["status"], "converged", "{f} + {o}: {v}");
                assert!(v["residual"].as_f64().unwrap() <= 1e-8, "{f} + {o}");
                assert!(v["cone_violation"].as_f64().unwrap() <= 1e-8, "{f} + {o}");
            } else {
                // A pyramid formulation (or a driver with its own model) solves its own
                // problem; the exact-cone ruler may disagree where a contact slides, never by
                // more than the model's error.
                assert_eq!(v["solver_status"], "converged", "{f} + {o}: {v}");
                assert!(v["residual"].as_f64().unwrap() <= 0.1, "{f} + {o}: {v}");
            }
        }
    }
}

#[test]
fn list_json_has_the_three_lists() {
    let mut out = Vec::new();
    cli::list_registry(&Registry::standard(), true, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let names = |k: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert!(names("formulations").contains(&"natural-map".to_string()));
    assert!(names("optimizers").contains(&"pgs".to_string()));
    // The one table the command line dispatches from: the five papers, then the matrix and the
    // comparison beside MuJoCo and Drake.
    let papers: Vec<&str> = contactlab_experiments::report::PAPERS
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(names("papers"), papers);
    assert_eq!(
        &papers[..5],
        [
            "todorov2010",
            "erleben2008",
            "mylapilli2014",
            "castro2022",
            "hwangbo2018"
        ]
    );
    assert!(papers.contains(&"matrix") && papers.contains(&"peers"));
}

#[test]
fn bad_requests_name_what_is_wrong() {
    let mut out = Vec::new();
    let f = problems().join("two_contacts.json");
    let e = cli::solve_spec(
        &Lab::standard(),
        &f,
        &SolverSpec::new("nope", "pgs", 1e-8, 10),
        true,
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown formulation `nope`"), "{e}");
    let e = cli::solve_spec(
        &Lab::standard(),
        &f,
        &SolverSpec::new("coulomb", "lm", 1e-8, 10),
        true,
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("cannot be run by optimizer `lm`") && e.contains("pgs"),
        "{e}"
    );
    let e = cli::solve_spec(
        &Lab::standard(),
        &f,
        &SolverSpec::new("coulomb", "pgs", -1.0, 10),
        true,
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("tol must be a positive number"), "{e}");
    let missing = problems().join("does_not_exist.json");
    let e = cli::solve_spec(
        &Lab::standard(),
        &missing,
        &SolverSpec::new("coulomb", "pgs", 1e-8, 10),
        true,
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("does_not_exist.json"), "{e}");
    let e = cli::reproduce(&Lab::standard(), Some("nobody1999"), false, false, &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown paper"), "{e}");
}

#[test]
fn status_is_not_converged_when_the_budget_is_too_small() {
    let mut out = Vec::new();
    cli::solve_spec(
        &Lab::standard(),
        &problems().join("Rover4396.hdf5"),
        &SolverSpec::new("coulomb", "pgs", 1e-14, 1),
        true,
        &mut out,
    )
    .unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["status"], "max_iterations", "{v}");
}

#[test]
fn the_binary_prints_parseable_json_and_fails_cleanly() {
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let file = problems().join("two_contacts.json");
    let ok = Command::new(exe)
        .args(["solve", file.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["status"], "converged");
    let bad = Command::new(exe)
        .args(["solve", "no/such/file.hdf5"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no/such/file.hdf5"));
    let human = Command::new(exe)
        .args([
            "solve",
            file.to_str().unwrap(),
            "--formulation",
            "natural-map",
            "--optimizer",
            "lm",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("natural-map + lm: converged"), "{text}");
}

#[test]
fn a_folder_of_npy_files_solves_like_the_same_problem_as_json() {
    use contactlab_core::ndarray::{Array1, Array2};
    use ndarray_npy::WriteNpyExt;
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let file = problems().join("two_contacts.json");
    let Problem::Local(p) = read_problem(&file).unwrap() else {
        panic!("two_contacts.json is local")
    };
    let dir = std::env::temp_dir().join(format!("contactlab-cli-npy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let w = p.w.to_dense();
    let n = w.nrows();
    let save =
        |name: &str, a: &dyn Fn(std::fs::File)| a(std::fs::File::create(dir.join(name)).unwrap());
    save("W.npy", &|f| {
        Array2::from_shape_fn((n, n), |(i, j)| w[(i, j)])
            .write_npy(f)
            .unwrap()
    });
    save("q.npy", &|f| {
        Array1::from(p.q.clone()).write_npy(f).unwrap()
    });
    save("mu.npy", &|f| {
        Array1::from(p.mu().to_vec()).write_npy(f).unwrap()
    });
    let run = |path: &std::path::Path| -> Value {
        let out = Command::new(exe)
            .args(["solve", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (from_npy, from_json) = (run(&dir), run(&file));
    assert_eq!(from_npy["status"], "converged", "{from_npy}");
    assert_eq!(floats(&from_npy["r"]), floats(&from_json["r"]));
    // A folder with a negative friction coefficient is refused naming the file and the field.
    save("mu.npy", &|f| {
        Array1::from(vec![0.5, -0.1]).write_npy(f).unwrap()
    });
    let bad = Command::new(exe)
        .args(["solve", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(
        text.contains("field `mu`") && text.contains("negative"),
        "{text}"
    );
}

#[test]
fn the_papers_options_reach_the_solver_and_are_refused_where_they_mean_nothing() {
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let file = problems().join("two_contacts.json");
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["solve", file, "--json"];
        args.extend_from_slice(extra);
        Command::new(exe).args(&args).output().unwrap()
    };
    // The min-map pyramid turned against the free slip: the options are echoed and the driver
    // converges. (Its answer is a pyramid answer: the final slip of the second contact turns
    // away from its free slip through W's coupling, so the exact-cone ruler says `inaccurate`.)
    let ok = run(&[
        "--formulation",
        "min-map",
        "--optimizer",
        "newton",
        "--align-with-slip",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["options"]["align_with_slip"], true, "{v}");
    assert_eq!(v["solver_status"], "converged", "{v}");
    assert!(v["residual"].as_f64().unwrap() < 1e-3, "{v}");
    // Todorov's recoveries pass through too.
    let ok = run(&[
        "--formulation",
        "implicit-ncp",
        "--optimizer",
        "todorov",
        "--restarts",
        "2",
        "--row-sum-scaling",
    ]);
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["options"]["restarts"], 2, "{v}");
    assert_eq!(v["status"], "converged", "{v}");
    // A pyramid option on a formulation without a pyramid: exit 2, naming the option.
    let bad = run(&[
        "--formulation",
        "implicit-ncp",
        "--optimizer",
        "todorov",
        "--theta0-deg",
        "30",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("theta0_deg"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}

#[test]
fn todorovs_driver_runs_the_mncp_and_generic_options_and_time_limits_reach_the_plugins() {
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let file = problems().join("two_contacts.json");
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["solve", file, "--json"];
        args.extend_from_slice(extra);
        Command::new(exe).args(&args).output().unwrap()
    };
    let ok = run(&["--formulation", "mncp", "--optimizer", "todorov"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["status"], "converged", "{v}");
    assert_eq!(v["model"], "coulomb_cone");
    // The same residual as implicit-ncp (no bilateral rows): the same impulses.
    let same = solve_json("two_contacts.json", "implicit-ncp", "todorov", 1e-8);
    for (a, b) in floats(&v["r"]).iter().zip(floats(&same["r"])) {
        assert!((a - b).abs() < 1e-7, "{v} vs {same}");
    }
    // A driver option by key, echoed with the defaults filled in.
    let ok = run(&[
        "--formulation",
        "implicit-ncp",
        "--optimizer",
        "todorov",
        "-O",
        "edge_aware=false",
        "--time-limit",
        "5",
    ]);
    let v: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(v["optimizer_options"]["edge_aware"], false, "{v}");
    assert_eq!(v["optimizer_options"]["accept_ratio"], 0.5, "{v}");
    assert_eq!(v["time_limit"], 5.0, "{v}");
    assert!(v["counters"]["newton_accepted"].as_u64().is_some(), "{v}");
    // Wrong options and limits exit 2 and name what is wrong.
    for (args, want) in [
        (vec!["-O", "edge_awre=false"], "edge_awre"),
        (vec!["--time-limit=-1"], "time_limit"),
        (vec!["-F", "rcond=2"], "rcond"),
    ] {
        let mut a = vec!["--formulation", "implicit-ncp", "--optimizer", "todorov"];
        a.extend(args);
        let bad = run(&a);
        assert_eq!(bad.status.code(), Some(2));
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn list_names_every_incompatible_pair_with_its_reason() {
    let mut out = Vec::new();
    cli::list_registry(&Registry::standard(), true, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let (nf, nd) = (
        v["formulations"].as_array().unwrap().len(),
        v["optimizers"].as_array().unwrap().len(),
    );
    let runs: usize = v["combinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["optimizers"].as_array().unwrap().len())
        .sum();
    let refused = v["incompatible"].as_array().unwrap();
    assert_eq!(runs + refused.len(), nf * nd);
    assert!(refused
        .iter()
        .all(|r| r["reason"].as_str().unwrap().contains("needs a")));
}

#[test]
fn the_readme_table_of_pairs_matches_the_registry() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let table = readme
        .split("### Formulations against optimizers")
        .nth(1)
        .unwrap();
    let reg = contactlab_experiments::registry::Registry::standard();
    let mut seen = 0;
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let name = cells[0].trim_start_matches("| ").trim_matches('`');
        let listed: Vec<&str> = cells
            .last()
            .unwrap()
            .trim_end_matches(" |")
            .split(", ")
            .map(|s| s.trim_matches('`'))
            .collect();
        let f = reg.formulation(name).unwrap();
        assert_eq!(listed, reg.drivers_for(f), "README row for `{name}`");
        seen += 1;
    }
    assert_eq!(seen, reg.formulations().len());
}

#[test]
fn an_indefinite_w_is_refused_unless_the_check_is_turned_off() {
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let dir = std::env::temp_dir().join(format!("contactlab-psd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("indefinite.json");
    // Contact 1's block has the eigenvalue -0.5: W is symmetric, finite, and indefinite.
    std::fs::write(
        &file,
        r#"{"kind": "local", "W": [
            [2.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, -0.5, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]],
          "q": [-1.0, 0.0, 0.0, -1.0, 0.0, 0.0], "mu": [0.5, 0.5]}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let refused = Command::new(exe).args(["solve", path]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("`W`") && err.contains("semidefinite") && err.contains("[1]"),
        "{err}"
    );
    let forced = Command::new(exe)
        .args(["solve", path, "--no-psd-check", "--max-iter", "5", "--json"])
        .output()
        .unwrap();
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    let v: Value = serde_json::from_slice(&forced.stdout).unwrap();
    assert_ne!(
        v["status"], "converged",
        "no answer exists for the indefinite contact: {v}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn islands_and_dense_switches_reach_the_solve_and_agree() {
    let exe = env!("CARGO_BIN_EXE_contactlab");
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        // Above the size below which the default layout solves the whole problem.
        .join("../data/mujoco/global/clutter_n20_seed7_step0080_nc40.json");
    let run = |extra: &[&str]| -> Value {
        let o = Command::new(exe)
            .args(["solve", file.to_str().unwrap(), "--json", "--tol", "1e-10"])
            .args(["--max-iter", "20000"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let split = run(&[]);
    let whole = run(&["--no-islands", "--dense"]);
    assert_eq!(split["status"], "converged", "{split}");
    assert_eq!(whole["status"], "converged", "{whole}");
    assert!(
        split["counters"]["islands"].as_u64().unwrap() > 1,
        "{split}"
    );
    assert!(whole["counters"].get("islands").is_none(), "{whole}");
    let (a, b) = (floats(&split["r"]), floats(&whole["r"]));
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let gap = a
        .iter()
        .zip(&b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(
        gap <= 1e-6 * scale,
        "answers differ by {gap:e} of {scale:e}"
    );
}

/// `contactlab peers` is `reproduce peers`: its rounds and its whole-step switch are the
/// configs' now, and the old options are refused.
#[test]
fn peers_is_reproduce_peers_and_its_old_options_are_gone() {
    use clap::Parser;
    let parsed = cli::Cli::try_parse_from(["contactlab", "peers", "--no-progress"]).unwrap();
    assert!(matches!(
        parsed.command,
        cli::Command::Peers {
            no_progress: true,
            allow_dirty: false
        }
    ));
    for gone in [["--rounds", "3"], ["--no-whole-steps", ""]] {
        let args = ["contactlab", "peers", gone[0], gone[1]];
        let n = if gone[1].is_empty() { 3 } else { 4 };
        assert!(cli::Cli::try_parse_from(&args[..n]).is_err(), "{gone:?}");
    }
}
