//! Single-contact runs (`kind = "single_contact"`, Hwangbo et al.'s Table I): the methods timed
//! on samples built here and measured against the reference; a quadruped's slipping contacts
//! recorded and timed end to end through `Lab::run`, one row per method with its meta; and
//! refusals naming the key at fault.

use std::path::{Path, PathBuf};

use contactlab_formulations::hwangbo::{classify, Case};
use contactlab_lab::single_contact::{slip_method, time_methods, NamedMethod, SlipSample};
use contactlab_lab::Lab;
use contactlab_runs::store::{read_run, RunMeta};
use nalgebra::{Matrix3, Vector3};
use polars::prelude::*;

fn f64s(df: &DataFrame, c: &str) -> Vec<f64> {
    contactlab_runs::columns::f64s(df, c).unwrap()
}

fn strs(df: &DataFrame, c: &str) -> Vec<String> {
    contactlab_runs::columns::strs(df, c).unwrap()
}

fn named(names: &[&str]) -> Vec<NamedMethod> {
    names
        .iter()
        .map(|n| (n.to_string(), slip_method(n, 1e-6).unwrap()))
        .collect()
}

#[test]
fn every_method_is_timed_on_the_samples_and_measured_against_the_reference() {
    // A slipping contact: W anisotropic, pushed in and sideways hard.
    let w = Matrix3::new(2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5);
    let samples: Vec<SlipSample> = (0..20)
        .map(|k| SlipSample {
            w,
            c: Vector3::new(-1.0, 2.0 + 0.1 * f64::from(k), -1.0),
            mu: 0.5,
        })
        .collect();
    assert!(samples
        .iter()
        .all(|s| matches!(classify(&s.w, &s.c, s.mu), Ok(Case::Slipping(_)))));
    let rows = time_methods(
        &samples,
        &named(&["bisection", "golden_section", "analytical"]),
        3,
    );
    let names: Vec<&str> = rows.iter().map(|m| m.method.as_str()).collect();
    assert_eq!(names, ["bisection", "golden_section", "analytical"]);
    for m in &rows {
        assert_eq!((m.samples, m.rounds), (20, 3));
        assert_eq!((m.failures, m.reference_failures), (0, 0), "{}", m.method);
        assert!(m.micros_median > 0.0 && m.micros_median.is_finite());
        assert!(m.micros_min <= m.micros_median);
        assert!(m.mean_steps >= 1.0, "{}: {}", m.method, m.mean_steps);
        // The paper's interval of 1e-6 N s on impulses of order one.
        assert!(m.max_error < 1e-5, "{}: {}", m.method, m.max_error);
        assert!(m.max_abs_error < 1e-5, "{}: {}", m.method, m.max_abs_error);
    }
    // A looser interval is a larger error: the config's `tol` reaches the method.
    let loose: Vec<NamedMethod> =
        vec![("bisection".into(), slip_method("bisection", 1e-2).unwrap())];
    let l = &time_methods(&samples, &loose, 1)[0];
    assert!(l.max_abs_error > rows[0].max_abs_error && l.mean_steps < rows[0].mean_steps);
}

#[test]
fn only_the_maximum_dissipation_methods_have_names() {
    for name in ["bisection", "golden_section", "analytical"] {
        assert!(slip_method(name, 1e-6).is_ok(), "{name}");
    }
    let e = slip_method("coulomb", 1e-6).err().unwrap();
    assert!(e.contains("eq. 6") && e.contains("known:"), "{e}");
    let e = slip_method("newton", 1e-6).err().unwrap();
    assert!(
        e.contains("`newton`") && e.contains("golden_section"),
        "{e}"
    );
}

fn scratch(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "contactlab-single-contact-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("experiments/configs/p")).unwrap();
    root
}

/// Half a second of the drop: the quadruped lands at about 0.31 s, 1 m/s sideways.
const DROP: &str = "kind = \"single_contact\"\npaper = \"p\"\nname = \"table1\"\n\
    methods = [\"bisection\", \"analytical\"]\ntol = 1e-6\nsamples_per_run = 40\nrounds = 3\n\
    [scene]\nkind = \"quadruped\"\nsteps = 500\n\
    [scene.params]\ndt = 0.001\nmu = 0.8\nheight = 1.0\n\
    [sweep]\ntask = [\"drop\", \"hang\"]\n\
    [driver]\nformulation = \"coulomb\"\noptimizer = { name = \"bisection-sor\", local = \"bisection\" }\ntol = 1e-6\n";

#[test]
fn a_single_contact_run_records_a_scenes_slipping_contacts_and_times_every_method() {
    let root = scratch("run");
    let config = root.join("experiments/configs/p/table1.toml");
    std::fs::write(&config, DROP).unwrap();
    let lab = Lab::standard().with_root(&root);
    let summary = lab.run(&config, None, &mut Vec::new()).unwrap();
    assert_eq!((summary.runs, summary.rows), (2, 2));
    assert_eq!(summary.path, root.join("data/runs/p/table1.parquet"));
    let df = read_run(&summary.path).unwrap();
    assert_eq!(strs(&df, "method"), ["bisection", "analytical"]);
    let samples = f64s(&df, "samples");
    // The feet slip after the drop's landing; at most 40 kept per task.
    assert!(
        samples[0] > 0.0 && samples[0] <= 80.0 && samples[0] == samples[1],
        "{samples:?}"
    );
    assert_eq!(f64s(&df, "rounds"), [3.0, 3.0]);
    assert_eq!(f64s(&df, "failures"), [0.0, 0.0]);
    for (m, e) in strs(&df, "method").iter().zip(f64s(&df, "max_abs_error")) {
        assert!(e.is_finite() && e < 1e-5, "{m}: {e}");
    }
    assert!(f64s(&df, "micros_median").iter().all(|&t| t > 0.0));
    let meta = RunMeta::of_run(&summary.path);
    assert_eq!((meta.runs, meta.rows), (Some(2), Some(2)));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(summary.path.with_extension("meta.json")).unwrap(),
    )
    .unwrap();
    let per_run = json["per_run"].as_array().unwrap();
    assert_eq!(per_run[0]["sweep"]["task"], "drop");
    assert_eq!(per_run[0]["steps"], 500);
    let kept: u64 = per_run.iter().map(|r| r["samples"].as_u64().unwrap()).sum();
    assert_eq!(kept as f64, samples[0]);
    for r in per_run {
        assert!(r["samples"].as_u64() <= r["slipping"].as_u64().map(|s| s.min(40)));
    }
    // The same config, run again, records the same samples (scenes and solvers are
    // deterministic): only the timings move.
    let again = lab
        .run_single_contact(&lab.single_contact(&config).unwrap(), &config)
        .unwrap();
    assert_eq!(again.rows[0].samples as f64, samples[0]);
    assert_eq!(again.rows[0].max_error, f64s(&df, "max_error")[0]);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn single_contact_refusals_name_the_key() {
    let root = scratch("refusals");
    let config = root.join("experiments/configs/p/bad.toml");
    let run = |text: &str, shard: Option<(usize, usize)>| {
        std::fs::write(&config, text).unwrap();
        Lab::standard()
            .with_root(&root)
            .run(&config, shard, &mut Vec::new())
            .unwrap_err()
            .to_string()
    };
    let e = run(
        &DROP.replace("\"analytical\"]", "\"analytical\", \"coulomb\"]"),
        None,
    );
    assert!(e.contains("methods[2]") && e.contains("coulomb"), "{e}");
    let e = run(
        &DROP.replace(
            "optimizer = { name = \"bisection-sor\", local = \"bisection\" }",
            "optimizer = \"lm\"",
        ),
        None,
    );
    assert!(e.contains("`driver`") && e.contains("cannot be run"), "{e}");
    let e = run(
        &DROP.replace("height = 1.0", "height = 1.0\nwings = 2"),
        None,
    );
    assert!(e.contains("scene.params") && e.contains("wings"), "{e}");
    let e = run(
        &DROP.replace("\"drop\", \"hang\"", "\"drop\", \"fly\""),
        None,
    );
    assert!(e.contains("sweep") && e.contains("fly"), "{e}");
    let e = run(DROP, Some((1, 2)));
    assert!(e.contains("not sharded"), "{e}");
    assert!(!Path::new(&root.join("data/runs/p/table1.parquet")).exists());
    std::fs::remove_dir_all(&root).unwrap();
}
