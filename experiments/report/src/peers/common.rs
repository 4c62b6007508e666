//! What the sections of the page beside MuJoCo and Drake share: a label as a fact name's
//! part, milliseconds, a number of `quoted_published.csv`, and an engines run that did not
//! measure.

use std::path::Path;

use contactlab_runs::engines::EnginesConfig;
use contactlab_runs::RunConfig;
use polars::prelude::DataFrame;

use crate::analysis::peers::skipped;
use crate::builder::{Report, QUOTED};
use crate::csv::{number, read_csv_with_header};
use crate::error::ReportError;
use crate::findings::Fmt;

/// A label as a fact name's part: letters, digits and `_ . - +` kept, any other run of
/// characters one `_`, none at either end (`coulomb+pgs (whole dense)` -> `coulomb+pgs_whole_dense`).
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || "_.-+".contains(c) {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// A number of `quoted_published.csv` by its quantity (`None` without the file or the row:
/// the facts that compare with it are then not made).
pub(super) fn quoted(r: &Report, quantity: &str) -> Result<Option<f64>, ReportError> {
    let path = r.config_file(QUOTED);
    if !path.exists() {
        return Ok(None);
    }
    let want = ["quantity", "value", "source"];
    let rows = read_csv_with_header(&path, &want)?;
    rows.iter()
        .find(|row| row[0] == quantity)
        .map(|row| number(&path, row, &want, 1))
        .transpose()
}

/// Milliseconds with three decimals, `-` for NaN.
pub(super) fn ms() -> Fmt {
    Fmt::fixed(3)
}

/// An engines run that did not measure, and why (its `skipped` row).
#[derive(Debug, Clone, serde::Serialize)]
pub(super) struct Skipped {
    /// The run's name.
    run: String,
    /// Why it did not measure.
    why: String,
}

impl Skipped {
    /// Run `run` did not measure, for `why`.
    pub(super) fn new(run: &str, why: String) -> Skipped {
        Skipped {
            run: run.to_string(),
            why,
        }
    }
}

/// What the templates see of a section with one engines run.
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct RunPart {
    /// Whether the section is written (the run is there).
    pub(super) ran: bool,
    /// The run, when it could not measure.
    pub(super) skipped: Option<Skipped>,
}

/// The run of the engines config `config` (of this report's configs), as a section reads it:
/// the section's part, and the run's data when it measured (refused when stale,
/// [`crate::builder::refuse_stale_run`]). A run that could not measure marks the facts
/// starting `prefix` absent (`what` not measured, and why).
pub(super) fn engines_run(
    r: &mut Report,
    root: &Path,
    config: &str,
    prefix: &str,
    what: &str,
) -> Result<(RunPart, Option<DataFrame>), ReportError> {
    let file = r.config_file(config);
    if !file.exists() {
        return Ok((RunPart::default(), None));
    }
    let cfg = EnginesConfig::load(&file)?;
    if !contactlab_runs::store::run_exists(&cfg.data_path(root)) {
        return Ok((RunPart::default(), None));
    }
    let (df, _) = r.load_data(&cfg.name, &cfg.data_path(root))?;
    if let Some(why) = skipped(&df)? {
        r.facts()
            .absent(prefix, format!("{what} not measured, {why}"));
        let part = RunPart {
            ran: true,
            skipped: Some(Skipped::new(&cfg.name, why)),
        };
        return Ok((part, None));
    }
    crate::builder::refuse_stale_run("peers", &df)?;
    let part = RunPart {
        ran: true,
        skipped: None,
    };
    Ok((part, Some(df)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_fact_names() {
        assert_eq!(slug("coulomb+pgs"), "coulomb+pgs");
        assert_eq!(slug("coulomb+pgs (whole dense)"), "coulomb+pgs_whole_dense");
        assert_eq!(
            slug("sap+newton-merit (whole step)"),
            "sap+newton-merit_whole_step"
        );
        assert_eq!(slug("  a  b "), "a_b");
    }
}
