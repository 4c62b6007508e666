//! End to end: sharded runs merge into the unsharded frame (experiment configs and the
//! matrix), `contactlab dump` writes what the scene solved, and `contactlab report matrix`
//! writes its tables from a small matrix.

use std::path::{Path, PathBuf};

use crate::common::{floats, ints, set, Root};
use contactlab_core::io::read_problem;
use contactlab_core::Problem;
use contactlab_experiments::dump::Form;
use contactlab_experiments::polars::prelude::*;
use contactlab_experiments::store::{read_run, shard_files};
use contactlab_experiments::toml;
use contactlab_experiments::Lab;
use contactlab_experiments::{analysis, cli};

fn shipped(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// The frame without the columns that are wall-clock times (they differ run to run).
fn untimed(df: &DataFrame) -> DataFrame {
    let keep: Vec<PlSmallStr> = df
        .get_column_names()
        .into_iter()
        .filter(|c| !c.contains("seconds"))
        .cloned()
        .collect();
    df.select(keep).unwrap()
}

/// Both frames without their timings and without the rows that hit the time limit in either:
/// a solve near its limit may stop on either side of it from run to run on a loaded machine
/// (seen in CI with other builds running), and everything else must match row for row.
fn untimed_alike(a: &DataFrame, b: &DataFrame) -> (DataFrame, DataFrame) {
    let status = |df: &DataFrame| analysis::strs(df, "status").unwrap();
    let (sa, sb) = (status(a), status(b));
    assert_eq!(sa.len(), sb.len(), "the same rows");
    let keep: Vec<bool> = sa
        .iter()
        .zip(&sb)
        .map(|(x, y)| x != "timeout" && y != "timeout")
        .collect();
    let mask = BooleanChunked::from_slice("keep".into(), &keep);
    (
        untimed(&a.filter(&mask).unwrap()),
        untimed(&b.filter(&mask).unwrap()),
    )
}

fn run(root: &Root, file: &str, shard: Option<(usize, usize)>) {
    let mut out = Vec::new();
    cli::run_config(
        &root.lab(),
        &root.config_dir().join(file),
        shard,
        &[],
        &mut out,
    )
    .unwrap();
}

#[test]
fn shards_of_an_experiment_merge_into_the_unsharded_frame() {
    let root = Root::new("todorov2010");
    root.config("table1.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(8));
        set(t, "sweep", "mu", floats(&[0.5, 1.0]));
        set(t, "sweep", "n_balls", ints(&[5]));
        set(t, "sweep", "seed", ints(&[0, 1, 2]));
    });
    let data = root.path.join("data/runs/todorov2010/table1.parquet");
    run(&root, "table1.toml", Some((1, 2)));
    // One shard alone is not a run: the error names the missing shard.
    let e = read_run(&data).unwrap_err().to_string();
    assert!(e.contains("2/2") && e.contains("missing"), "{e}");
    run(&root, "table1.toml", Some((2, 2)));
    assert_eq!(shard_files(&data).len(), 2);
    let merged = read_run(&data).unwrap();
    let traces = read_run(&data.with_file_name("table1_traces.parquet")).unwrap();
    let meta = contactlab_experiments::store::RunMeta::of_run(&data);
    assert_eq!(meta.runs, Some(6));
    assert_eq!(meta.rows, Some(merged.height() as u64));
    run(&root, "table1.toml", None);
    let whole = read_run(&data).unwrap();
    assert_eq!(whole.height(), merged.height());
    assert!(untimed(&whole).equals_missing(&untimed(&merged)));
    let whole_traces = read_run(&data.with_file_name("table1_traces.parquet")).unwrap();
    assert!(whole_traces.equals_missing(&traces));
}

#[test]
fn dump_writes_the_problems_the_scene_solved() {
    let config = shipped("experiments/configs/todorov2010/table1.toml");
    let out = std::env::temp_dir().join(format!("contactlab-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let files = Lab::standard()
        .dump(&config, 80, &[20, 40], Form::Local, &out)
        .unwrap();
    assert_eq!(files.len(), 2);
    assert!(files[1].ends_with("table1-run80-step0040-local.json"));
    let kept = Lab::standard().scene_problems(&config, 80, &[40]).unwrap();
    let Problem::Local(p) = read_problem(&files[1]).unwrap() else {
        panic!("a local dump reads back as a local problem")
    };
    let want = kept[0].problem.local().unwrap();
    assert!(!p.mu().is_empty());
    assert_eq!(p.q, want.q);
    assert_eq!(p.mu(), want.mu());
    assert_eq!(p.w.to_dense(), want.w.to_dense());
    // Balls in a cube are in contact space only: no global form, and the error says so.
    let e = Lab::standard()
        .dump(&config, 80, &[40], Form::Global, &out)
        .unwrap_err();
    assert!(e.to_string().contains("--form local"), "{e}");
    // Past the run's end.
    let e = Lab::standard()
        .dump(&config, 80, &[5000], Form::Local, &out)
        .unwrap_err();
    assert!(e.to_string().contains("past the run"), "{e}");
    std::fs::remove_dir_all(&out).unwrap();
}

fn write_matrix(root: &Root) {
    let files = [
        "FrictionContact3D_1c.hdf5",
        "Rover1039.hdf5",
        "two_contacts.json",
    ];
    std::fs::create_dir_all(root.path.join("data/problems")).unwrap();
    for f in files {
        std::fs::copy(
            shipped(&format!("data/problems/{f}")),
            root.path.join("data/problems").join(f),
        )
        .unwrap();
    }
    // A robot state with every row MuJoCo has (a joint equality beside a contact) and MuJoCo's
    // answer to it: the reference the report measures each pair's answer against.
    for sub in ["global", "mujoco"] {
        let dir = root.path.join("data/mujoco_robots").join(sub);
        std::fs::create_dir_all(&dir).unwrap();
        let f = "manipulator_t0500ms.json";
        std::fs::copy(
            shipped(&format!("data/mujoco_robots/{sub}/{f}")),
            dir.join(f),
        )
        .unwrap();
    }
    let scene = shipped("experiments/configs/mylapilli2014/sphere_example1.toml");
    root.write(
        "matrix.toml",
        &format!(
            r#"kind = "matrix"
name = "matrix"
tol = 1e-6
time_limit = 0.5
max_iter = 200
skip = ["sap+clarabel"]

[[sets]]
name = "siconos_ci"
tol = 1e-5
files = ["data/problems/FrictionContact3D_1c.hdf5", "data/problems/Rover1039.hdf5"]

[[sets]]
name = "scenes"
files = ["data/problems/two_contacts.json"]
scenes = [{{ config = "{}", run = 0, steps = [3] }}]

[[sets]]
name = "robots"
dirs = ["data/mujoco_robots/global"]
reference = "data/mujoco_robots/mujoco"
"#,
            scene.display()
        ),
    );
    root.copy_shipped(&["fclib_published.csv"]);
}

#[test]
fn the_matrix_runs_every_pair_merges_its_shards_and_reports() {
    let root = Root::new("matrix");
    write_matrix(&root);
    let data = root.path.join("data/runs/matrix/matrix.parquet");
    run(&root, "matrix.toml", Some((1, 2)));
    run(&root, "matrix.toml", Some((2, 2)));
    let merged = read_run(&data).unwrap();
    for (_, _, f) in shard_files(&data) {
        std::fs::remove_file(f).unwrap();
    }
    run(&root, "matrix.toml", None);
    let whole = read_run(&data).unwrap();
    let (whole_t, merged_t) = untimed_alike(&whole, &merged);
    assert!(whole_t.equals_missing(&merged_t));
    // 5 problems x (36 pairs less the skipped one).
    let pairs = contactlab_experiments::registry::Registry::standard()
        .pairs()
        .len()
        - 1;
    assert_eq!(whole.height(), 5 * pairs);
    let text = |name: &str| -> Vec<String> {
        let c = whole.column(name).unwrap();
        (0..c.len())
            .map(|i| c.get(i).unwrap().str_value().into_owned())
            .collect()
    };
    let (problems, formulations, optimizers) =
        (text("problem"), text("formulation"), text("optimizer"));
    let pick = |problem: &str, pair: (&str, &str), name: &str| -> AnyValue<'static> {
        let rows: Vec<usize> = (0..whole.height())
            .filter(|&i| {
                problems[i] == problem && formulations[i] == pair.0 && optimizers[i] == pair.1
            })
            .collect();
        assert_eq!(rows.len(), 1, "{problem} {pair:?}");
        whole
            .column(name)
            .unwrap()
            .get(rows[0])
            .unwrap()
            .into_static()
    };
    // PGS solves the single contact; its Siconos error is within the set's tolerance.
    let pgs = ("coulomb", "pgs");
    assert_eq!(
        pick("FrictionContact3D_1c.hdf5", pgs, "solved"),
        AnyValue::Boolean(true)
    );
    let AnyValue::Float64(e) = pick("FrictionContact3D_1c.hdf5", pgs, "error_siconos") else {
        panic!()
    };
    assert!(e <= 1e-5);
    // Hwangbo's bisection solves maximum dissipation (the driver's model, not the
    // formulation's), so it is judged by its own test, the Coulomb ruler beside it.
    let bisection = ("coulomb", "bisection-sor");
    assert_eq!(
        pick("FrictionContact3D_1c.hdf5", bisection, "model").str_value(),
        "maximum_dissipation"
    );
    assert_eq!(
        pick("FrictionContact3D_1c.hdf5", bisection, "solved"),
        AnyValue::Boolean(
            pick("FrictionContact3D_1c.hdf5", bisection, "solver_status").str_value()
                == "converged"
        )
    );
    // The pyramid's model column, and the scene step by name.
    assert_eq!(
        pick("Rover1039.hdf5", ("min-map", "newton"), "model").str_value(),
        "friction_pyramid"
    );
    let AnyValue::UInt64(n_c) = pick("mylapilli2014/sphere_example1/run0/step0003", pgs, "n_c")
    else {
        panic!()
    };
    assert!(n_c >= 1);

    let mut out = Vec::new();
    cli::report("matrix", &root.path, false, &mut out).unwrap();
    let md = root.read("README.md");
    assert!(md.contains("## Every pair on every set"), "{md}");
    assert!(md.contains("## Siconos' own test expectations"), "{md}");
    // The page's prose comes from the shipped templates, with the run's counts and budget.
    assert!(
        md.contains(&format!("registry ({pairs} pairs) on 5 problems in 3 sets")),
        "{md}"
    );
    assert!(
        md.contains("Drawn per set for the 8 pairs that solve the most"),
        "{md}"
    );
    assert!(md.contains("![siconos_ci: performance profile of time](profile_time_siconos_ci.svg)"));
    let csv = root.csv("pairs.csv");
    assert_eq!(
        &csv.0[..8],
        [
            "problem_set",
            "formulation",
            "optimizer",
            "model",
            "problems",
            "solved",
            "median_seconds",
            "median_iterations"
        ]
    );
    assert_eq!(csv.1.len(), 3 * pairs);
    let row = csv
        .1
        .iter()
        .find(|r| r[0] == "siconos_ci" && r[1] == "coulomb" && r[2] == "pgs")
        .unwrap();
    assert_eq!((row[4].as_str(), row[5].as_str()), ("2", "2"));
    assert!(root
        .path
        .join("reports/matrix/profile_time_siconos_ci.svg")
        .exists());
    // The robot set against MuJoCo's answer, each pair at its distance from MuJoCo's.
    assert!(
        md.contains("## `robots`: against MuJoCo's own answers"),
        "{md}"
    );
    let reference = root.csv("reference_robots.csv");
    let of = |pair: &str| reference.1.iter().find(|r| r[0] == pair).unwrap().clone();
    let col = |name: &str| reference.0.iter().position(|c| c == name).unwrap();
    // Every pair run here takes the manipulator's rows (Clarabel, the one that would refuse
    // them, is skipped above), and the natural map stands where we measured it.
    let natural = of("natural-map+lm");
    assert_eq!(natural[col("refused_problems")], "0");
    let d: f64 = natural[col("distance_r_median")].parse().unwrap();
    assert!((0.07..0.078).contains(&d), "{d}");
    let refusing = reference
        .1
        .iter()
        .filter(|r| r[col("refused_problems")] == "1")
        .count();
    assert_eq!(refusing, 0);
    assert!(
        md.contains(&format!(
            "{refusing} of the {pairs} pairs refuse some problem"
        )),
        "{md}"
    );
}

#[test]
fn a_bad_matrix_config_names_the_key() {
    let root = Root::new("matrix-bad");
    // `contactlab run`'s error on a matrix config with tolerance `tol`, `top` lines after the
    // budget and `set` lines in its one set.
    let refusal = |tol: &str, top: &str, set: &str| -> String {
        root.write(
            "m.toml",
            &format!(
                "kind = \"matrix\"\nname = \"m\"\ntol = {tol}\ntime_limit = 0.5\nmax_iter = 10\n\
                 {top}[[sets]]\nname = \"a\"\n{set}"
            ),
        );
        let mut out = Vec::new();
        cli::run_config(
            &root.lab(),
            &root.config_dir().join("m.toml"),
            None,
            &[],
            &mut out,
        )
        .unwrap_err()
        .to_string()
    };
    let e = refusal("-1", "", "");
    assert!(e.contains("`tol`") && e.contains("positive"), "{e}");
    let e = refusal("1e-6", "skip = [\"sap+pgs\"]\n", "");
    assert!(
        e.contains("sap+pgs") && e.contains("not a compatible pair"),
        "{e}"
    );
    let e = refusal("1e-6", "", "files = [\"nope.hdf5\"]\n");
    assert!(
        e.contains("sets[0].files") && e.contains("nope.hdf5"),
        "{e}"
    );
}
