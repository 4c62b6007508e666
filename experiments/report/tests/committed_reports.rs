//! The committed reports against the verdict their generation wrote on `facts.md`: no report
//! may compute a family of facts that no template and no finding quotes
//! (`contactlab_report::builder`, "Nothing computed for nothing").

use std::path::Path;

/// The heading of the verdict on `facts.md` (`experiments/report/templates/facts.md`).
const VERDICT: &str = "## Families of facts";
/// How the verdict starts when it names families nobody quotes.
const UNQUOTED: &str = "Quoted by no template and no finding:";

#[test]
fn no_committed_report_computes_a_fact_family_nobody_quotes() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut papers: Vec<_> = std::fs::read_dir(&reports)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("facts.md").exists())
        .collect();
    papers.sort();
    assert!(!papers.is_empty(), "no report under {}", reports.display());
    let (mut unquoted, mut unjudged) = (Vec::new(), Vec::new());
    for paper in &papers {
        let facts = std::fs::read_to_string(paper.join("facts.md")).unwrap();
        let name = paper.file_name().unwrap().to_string_lossy().into_owned();
        match facts.split_once(VERDICT) {
            None => unjudged.push(name),
            Some((_, verdict)) => {
                if let Some(line) = verdict.lines().find(|l| l.starts_with(UNQUOTED)) {
                    unquoted.push(format!("{name}: {line}"));
                }
            }
        }
    }
    // A report generated before the verdict existed carries none: it is judged at its next
    // generation (`just reproduce <paper>`).
    println!("generated before the verdict: {unjudged:?}");
    assert!(unquoted.is_empty(), "{}", unquoted.join("\n"));
}
