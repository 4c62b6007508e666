//! End to end: `contactlab reproduce gradients` into a scratch root with `CONTACTLAB_NO_PEERS`
//! set, so that the study's Python harness is not run: the run still records why, and the page
//! says plainly that the study did not run and how to run it, with no table of numbers.

use crate::common::Root;
use contactlab_experiments::cli;

#[test]
fn the_gradients_study_without_python_says_it_did_not_run() {
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("gradients");
    // The shipped findings quote the run's facts: without the run they are marked, not failed.
    root.copy_shipped(&["study.toml", "findings.md"]);
    let mut out = Vec::new();
    cli::reproduce(&root.lab(), Some("gradients"), false, false, &mut out).unwrap();
    let page = root.read("README.md");
    assert!(
        page.contains("**The study did not run in this generation** (CONTACTLAB_NO_PEERS is set)"),
        "{page}"
    );
    assert!(page.contains("just reproduce gradients"));
    assert!(!page.contains("## Accuracy"));
}
