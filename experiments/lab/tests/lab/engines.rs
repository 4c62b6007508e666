//! Other-engine runs (`kind = "engines"`) end to end through `Lab::run`, with a stand-in
//! harness: its JSON becomes rows, a Python module it lacks adds the configured arguments (also
//! one `CONTACTLAB_PEERS_WITHOUT` hides), and a harness that cannot run leaves a run whose
//! `skipped` column says why.

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
    assert_eq!(
        s("missing_modules"),
        "surely_no_such_module_here (does not import)"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `CONTACTLAB_PEERS_WITHOUT` plays a machine without an installed module: the lab adds the
/// module's `[when_missing]` arguments, says why in `missing_modules`, and the harness cannot
/// import it either. `colorsys` stands for `pydrake`: a pure-Python module every Python has.
#[test]
fn peers_without_treats_an_installed_module_as_missing() {
    let root = root("without");
    let config = root.join("experiments/configs/p/engines.toml");
    std::fs::write(
        root.join("harness/fake.py"),
        "import json, sys\nargs = sys.argv[1:]\nout = args[args.index('--out') + 1]\n\
         try:\n    import colorsys\n    seen = 'imported'\nexcept ModuleNotFoundError as e:\n    seen = str(e)\n\
         rows = [{'engine': 'fake', 'args': ' '.join(args), 'colorsys': seen}]\n\
         json.dump({'results': rows}, open(out + '/fake.json', 'w'))\n",
    )
    .unwrap();
    std::fs::write(
        &config,
        "kind = \"engines\"\npaper = \"p\"\nname = \"engines\"\nscript = \"harness/fake.py\"\n\
         args = [\"--out\", \"{out}\"]\nresult = \"fake.json\"\nrecords = \"results\"\n\
         [when_missing]\ncolorsys = [\"--engines\", \"without-colorsys\"]\n",
    )
    .unwrap();
    let run = || {
        let summary = Lab::standard()
            .with_root(&root)
            .run(&config, None, &mut Vec::new())
            .unwrap();
        let df = read_run(&summary.path).unwrap();
        let text = |c: &str| {
            df.column(c)
                .ok()
                .map(|c| c.str().unwrap().get(0).unwrap().to_string())
        };
        (
            text("args").unwrap(),
            text("colorsys").unwrap(),
            text("missing_modules"),
        )
    };
    // Installed and not named: no extra arguments, no note.
    std::env::remove_var("CONTACTLAB_PEERS_WITHOUT");
    let (args, seen, missing) = run();
    assert!(!args.contains("without-colorsys"), "{args}");
    assert_eq!((seen.as_str(), missing), ("imported", None));
    // Named (among blanks and another name): missing, said so, hidden from the harness.
    std::env::set_var("CONTACTLAB_PEERS_WITHOUT", " surely_not_here, colorsys,,");
    let (args, seen, missing) = run();
    std::env::remove_var("CONTACTLAB_PEERS_WITHOUT");
    assert!(args.ends_with("--engines without-colorsys"), "{args}");
    assert_eq!(
        missing.as_deref(),
        Some("colorsys (hidden by CONTACTLAB_PEERS_WITHOUT)")
    );
    assert!(
        seen.contains("No module named 'colorsys'") && seen.contains("CONTACTLAB_PEERS_WITHOUT"),
        "{seen}"
    );
    // The stubs are gone after the run.
    let stubs = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("contactlab-peers-without-{}-", std::process::id()))
        })
        .count();
    assert_eq!(stubs, 0);
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
