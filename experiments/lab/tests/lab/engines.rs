//! Other-engine runs (`kind = "engines"`) end to end through `Lab::run`, with a stand-in
//! harness: its JSON becomes rows, a Python module it lacks adds the configured arguments, and
//! a harness that cannot run leaves a run whose `skipped` column says why.

use std::path::PathBuf;

use contactlab_lab::Lab;
use contactlab_runs::store::read_run;

fn root(tag: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("contactlab-engines-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("experiments/configs/p")).unwrap();
    std::fs::create_dir_all(root.join("harness")).unwrap();
    // A harness that reports its arguments and writes its result where it is told.
    std::fs::write(
        root.join("harness/fake.py"),
        "import json, sys\nargs = sys.argv[1:]\nout = args[args.index('--out') + 1]\n\
         rows = [{'engine': 'fake 1.0', 'step': {'median_ms': 0.5}, 'args': ' '.join(args)}]\n\
         json.dump({'version': '1.0', 'results': rows}, open(out + '/fake.json', 'w'))\n",
    )
    .unwrap();
    std::fs::write(
        root.join("experiments/configs/p/engines.toml"),
        "kind = \"engines\"\npaper = \"p\"\nname = \"engines\"\nscript = \"harness/fake.py\"\n\
         args = [\"--out\", \"{out}\", \"--tag\", \"{name}\"]\nresult = \"fake.json\"\nrecords = \"results\"\n\
         [when_missing]\nsurely_no_such_module_here = [\"--without-it\"]\n",
    )
    .unwrap();
    root
}

#[test]
fn the_harness_json_becomes_rows_and_missing_modules_add_their_arguments() {
    let root = root("rows");
    let config = root.join("experiments/configs/p/engines.toml");
    let summary = Lab::standard()
        .with_root(&root)
        .run(&config, None, &mut Vec::new())
        .unwrap();
    let df = read_run(&summary.path).unwrap();
    assert_eq!(df.height(), 1);
    let s = |c: &str| {
        df.column(c)
            .unwrap()
            .str()
            .unwrap()
            .get(0)
            .unwrap()
            .to_string()
    };
    assert_eq!(s("engine"), "fake 1.0");
    assert_eq!(s("version"), "1.0");
    assert!(
        s("args").ends_with("--tag engines --without-it"),
        "{}",
        s("args")
    );
    let ms = df.column("step_median_ms").unwrap().f64().unwrap().get(0);
    assert_eq!(ms, Some(0.5));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_harness_that_cannot_run_leaves_a_run_that_says_why() {
    let root = root("skipped");
    let config = root.join("experiments/configs/p/engines.toml");
    std::fs::write(
        root.join("harness/fake.py"),
        "raise SystemExit('no mujoco here')\n",
    )
    .unwrap();
    let summary = Lab::standard()
        .with_root(&root)
        .run(&config, None, &mut Vec::new())
        .unwrap();
    let df = read_run(&summary.path).unwrap();
    let why = df
        .column("skipped")
        .unwrap()
        .str()
        .unwrap()
        .get(0)
        .unwrap()
        .to_string();
    assert!(why.contains("no mujoco here"), "{why}");
    let meta = std::fs::read_to_string(summary.path.with_extension("meta.json")).unwrap();
    assert!(meta.contains("no mujoco here"), "{meta}");
    std::fs::remove_dir_all(&root).unwrap();
}
