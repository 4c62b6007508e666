//! Report generation: `reports/<paper>/README.md` with provenance, timing, markdown tables
//! with the paper's numbers beside ours (each also written as CSV), SVG plots, and the
//! people-written findings whose numbers are checked against the data.
//!
//! [`builder::Report`] does what every report shares; each paper's module ([`todorov2010`],
//! [`erleben2008`], [`mylapilli2014`]) describes its tables, plots and facts on top of it, with
//! the statistics from [`crate::analysis`].

pub mod builder;
pub mod castro2022;
pub mod erleben2008;
pub mod findings;
pub mod hwangbo2018;
pub mod matrix;
pub mod mylapilli2014;
pub mod plots;
pub mod table;
pub mod todorov2010;

use std::fmt::Write as _;
use std::path::Path;

use crate::analysis::AnalysisError;
pub use crate::analysis::{counter, f64s, strs};

/// Errors while generating a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A run's data is missing: the experiment has not been run.
    #[error("{0}: not found; run the experiment first (`contactlab run <config>` or `just reproduce <paper>`)")]
    MissingData(String),
    /// Reading or aggregating the data failed.
    #[error("data frame: {0}")]
    Frame(#[from] polars::prelude::PolarsError),
    /// Runner-side IO failed.
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Drawing a plot failed.
    #[error("plot {0}")]
    Plot(String),
    /// A published-numbers file or a config is malformed.
    #[error("{0}")]
    Published(String),
    /// A findings file has an unknown or malformed placeholder.
    #[error("{0}")]
    Findings(String),
    /// A checked placeholder of a findings file no longer matches the data.
    #[error("{file}: `{placeholder}` is stale: the text says {written}, the data give {computed}")]
    StaleFinding {
        /// `path:line` of the placeholder.
        file: String,
        /// The placeholder as written.
        placeholder: String,
        /// The value written in the findings.
        written: String,
        /// The value computed from the data, at the written precision.
        computed: String,
    },
    /// A table was described inconsistently (a row with the wrong number of cells).
    #[error("table {0}")]
    Table(String),
}

impl From<AnalysisError> for ReportError {
    fn from(e: AnalysisError) -> ReportError {
        match e {
            AnalysisError::MissingData(what) => ReportError::MissingData(what),
            AnalysisError::Frame(e) => ReportError::Frame(e),
        }
    }
}

/// A markdown table from a header and rows of cells.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(
        s,
        "|{}|",
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

/// A CSV file from a header and rows (cells are numbers or simple words: no quoting needed,
/// and none is produced; commas in cells are rejected).
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), ReportError> {
    let mut s = header.join(",") + "\n";
    for r in rows {
        if r.iter().any(|c| c.contains(',')) {
            return Err(ReportError::Published(format!(
                "{}: a cell contains a comma: {r:?}",
                path.display()
            )));
        }
        s += &(r.join(",") + "\n");
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

/// Reads a small numeric CSV with a header into rows of strings.
pub fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), ReportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReportError::Published(format!("{}: {e}", path.display())))?;
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| ReportError::Published(format!("{}: empty", path.display())))?
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(|s| s.trim().to_string()).collect())
        .collect();
    if let Some((i, r)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != header.len())
    {
        return Err(ReportError::Published(format!(
            "{}: data row {} has {} cells, the header has {}",
            path.display(),
            i + 1,
            r.len(),
            header.len()
        )));
    }
    Ok((header, rows))
}

/// Reads a CSV of published numbers whose header must be exactly `want`.
pub fn read_csv_with_header(path: &Path, want: &[&str]) -> Result<Vec<Vec<String>>, ReportError> {
    let (header, rows) = read_csv(path)?;
    if header != want {
        return Err(ReportError::Published(format!(
            "{}: header must be {}",
            path.display(),
            want.join(",")
        )));
    }
    Ok(rows)
}

/// Cell `i` of a row read by [`read_csv_with_header`] as a number; the error names the file and
/// the column.
pub fn number(path: &Path, row: &[String], want: &[&str], i: usize) -> Result<f64, ReportError> {
    row[i].parse::<f64>().map_err(|_| {
        ReportError::Published(format!(
            "{}: `{}` in column {} is not a number",
            path.display(),
            row[i],
            want[i]
        ))
    })
}

/// Cell `i` of a row read by [`read_csv_with_header`] as a number, NaN when the cell is empty
/// (the source gives no value); the error names the file and the column.
pub fn optional_number(
    path: &Path,
    row: &[String],
    want: &[&str],
    i: usize,
) -> Result<f64, ReportError> {
    if row[i].is_empty() {
        Ok(f64::NAN)
    } else {
        number(path, row, want, i)
    }
}

/// Reads a CSV of single published numbers, `quantity,value,source` (the source names the
/// table, figure or text they come from): `quantity -> (value, source)`.
pub fn read_quantities(
    path: &Path,
) -> Result<std::collections::BTreeMap<String, (f64, String)>, ReportError> {
    let want = ["quantity", "value", "source"];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| Ok((r[0].clone(), (number(path, r, &want, 1)?, r[2].clone()))))
        .collect()
}

/// Formats a float with `digits` decimals, `-` for NaN.
pub fn fmt(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.digits$}")
    }
}
