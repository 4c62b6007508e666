//! End to end: `contactlab report` and `contactlab reproduce` refuse to stamp a report from a
//! checkout whose tracked files outside `reports/` have uncommitted changes, unless given
//! `--allow-dirty`, and a report so stamped says so in its provenance.

use std::path::Path;
use std::process::Command;

use crate::common::Root;
use contactlab_experiments::cli::{self, CliError};

/// `git` in `dir` with a throwaway identity; panics when it fails.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A one-pair matrix on one shipped file, its data run, and the root committed as a checkout.
fn committed_matrix() -> Root {
    let root = Root::new("matrix");
    std::fs::create_dir_all(root.path.join("data/problems")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/problems/FrictionContact3D_1c.hdf5"),
        root.path.join("data/problems/FrictionContact3D_1c.hdf5"),
    )
    .unwrap();
    root.write(
        "matrix.toml",
        "kind = \"matrix\"\nname = \"matrix\"\ntol = 1e-6\ntime_limit = 0.5\nmax_iter = 200\n\
         only = [\"coulomb+pgs\"]\n\n[[sets]]\nname = \"one\"\n\
         files = [\"data/problems/FrictionContact3D_1c.hdf5\"]\n",
    );
    root.copy_shipped(&["fclib_published.csv"]);
    std::fs::write(root.path.join(".gitignore"), "data/\n").unwrap();
    git(&root.path, &["init", "-q"]);
    git(&root.path, &["add", "-A"]);
    git(&root.path, &["commit", "-q", "-m", "the matrix"]);
    root.run("matrix.toml");
    root
}

fn report(root: &Root, allow_dirty: bool) -> Result<String, CliError> {
    let mut out = Vec::new();
    cli::report("matrix", &root.path, allow_dirty, &mut out)?;
    Ok(root.read("README.md"))
}

const WARNING: &str = "**Not from a committed tree.**";

#[test]
fn a_dirty_tree_is_refused_unless_allowed_and_the_report_then_says_so() {
    let root = committed_matrix();
    // Clean: the report is stamped with the bare commit and no warning.
    let md = report(&root, false).unwrap();
    assert!(md.contains("| `matrix` |") && !md.contains(WARNING), "{md}");
    assert!(!md.contains("+dirty"), "{md}");

    // A generated report is not part of the code: changing it leaves the tree clean.
    git(&root.path, &["add", "-A"]);
    git(&root.path, &["commit", "-q", "-m", "the report"]);
    let readme = root.path.join("reports/matrix/README.md");
    std::fs::write(&readme, "edited by hand\n").unwrap();
    report(&root, false).unwrap();

    // A tracked config changed: both commands refuse, naming the flag, and write nothing.
    let config = root.config_dir().join("matrix.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("# changed\n{text}")).unwrap();
    std::fs::write(&readme, "kept\n").unwrap();
    let e = report(&root, false).unwrap_err();
    assert!(matches!(e, CliError::Dirty(_)), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("--allow-dirty") && msg.contains("+dirty") && msg.contains("uncommitted"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "kept\n");
    let mut out = Vec::new();
    let e = cli::reproduce(&root.lab(), Some("matrix"), false, false, &mut out).unwrap_err();
    assert!(matches!(e, CliError::Dirty(_)), "{e}");

    // Allowed: the page names the dirty commit and says what that means.
    let md = report(&root, true).unwrap();
    assert!(md.contains("+dirty`") && md.contains(WARNING), "{md}");
}

#[test]
fn the_flag_parses_on_report_reproduce_and_peers() {
    use clap::Parser;
    for args in [
        &["contactlab", "report", "matrix", "--allow-dirty"][..],
        &["contactlab", "reproduce", "matrix", "--allow-dirty"],
        &["contactlab", "peers", "--allow-dirty"],
    ] {
        let parsed = cli::Cli::try_parse_from(args).unwrap();
        let allowed = match parsed.command {
            cli::Command::Report { allow_dirty, .. }
            | cli::Command::Reproduce { allow_dirty, .. }
            | cli::Command::Peers { allow_dirty, .. } => allow_dirty,
            _ => false,
        };
        assert!(allowed, "{args:?}");
    }
}
