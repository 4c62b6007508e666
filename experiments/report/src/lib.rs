//! # contactlab-report
//!
//! Report generation, the last stage of the data flow: `reports/<paper>/README.md` with the
//! provenance of every run it uses, markdown tables with the paper's numbers beside ours (each
//! also written as CSV), SVG plots, and the people-written findings whose numbers are checked
//! against the data.
//!
//! A report only reads: the rows and `.meta.json` of runs under `data/runs/`
//! ([`contactlab_runs::store`]), the configs, the published numbers in CSV beside them
//! (`experiments/configs/<paper>/*published*.csv`) and the findings. This crate depends on
//! neither the formulations nor the lab, so it cannot solve or simulate: every number a report
//! shows was produced by a run with its own provenance.
//!
//! [`builder::Report`] does what every report shares; each paper's module describes its tables,
//! plots and facts on top of it, with the statistics from [`analysis`]. [`PAPERS`] is the one
//! table of what can be reported (the command line dispatches from it).

pub mod analysis;
pub mod builder;
pub mod castro2022;
pub mod erleben2008;
pub mod fidelity;
pub mod findings;
pub mod hwangbo2018;
pub mod matrix;
pub mod mylapilli2014;
pub mod peers;
pub mod plots;
pub mod table;
pub mod template;
pub mod todorov2010;

use std::fmt::Write as _;
use std::path::Path;

use crate::analysis::AnalysisError;
pub use crate::analysis::{counter, f64s, strs};

/// One report the project generates: a paper of the mission, or a study across them.
#[derive(Debug, Clone, Copy)]
pub struct Paper {
    /// The key of `just reproduce <id>` and of `experiments/configs/<id>/`, `reports/<id>/`.
    pub id: &'static str,
    /// Authors, year and title (or what the study compares).
    pub title: &'static str,
    /// Writes `reports/<id>/` from the runs under the workspace root given.
    pub generate: fn(&Path) -> Result<(), ReportError>,
}

/// Every report, in the order of the mission: the five papers, then the cross-paper matrix, the
/// physical-fidelity study and the comparison beside MuJoCo and Drake.
pub const PAPERS: &[Paper] = &[
    Paper {
        id: "todorov2010",
        title: "Todorov 2010, implicit nonlinear complementarity",
        generate: todorov2010::generate,
    },
    Paper {
        id: "erleben2008",
        title: "Erleben and Ortiz, non-smooth Newton on the min-map",
        generate: erleben2008::generate,
    },
    Paper {
        id: "mylapilli2014",
        title: "Mylapilli and Jain 2014, complementarity with Levenberg-Marquardt",
        generate: mylapilli2014::generate,
    },
    Paper {
        id: "castro2022",
        title: "Castro, Permenter and Han, SAP convex compliant contact",
        generate: castro2022::generate,
    },
    Paper {
        id: "hwangbo2018",
        title: "Hwangbo, Lee and Hutter 2018, per-contact bisection",
        generate: hwangbo2018::generate,
    },
    Paper {
        id: "matrix",
        title: "every formulation against every driver on shared problem sets",
        generate: matrix::generate,
    },
    Paper {
        id: "fidelity",
        title: "what each contact model does to a motion, beside MuJoCo and Drake, against exact answers",
        generate: fidelity::generate,
    },
    Paper {
        id: "peers",
        title: "every formulation beside MuJoCo's constraint solver and Drake, solver against \
                solver and step against step",
        generate: peers::generate,
    },
];

/// The report of `id`; the error lists the ids there are.
pub fn paper(id: &str) -> Result<&'static Paper, ReportError> {
    PAPERS.iter().find(|p| p.id == id).ok_or_else(|| {
        ReportError::Unknown(format!(
            "unknown paper `{id}`; known: {}",
            PAPERS.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Errors while generating a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A run's data is missing: the experiment has not been run.
    #[error("{0}: not found; run the experiment first (`contactlab run <config>` or `just reproduce <paper>`)")]
    MissingData(String),
    /// Reading or aggregating the data failed.
    #[error("data frame: {0}")]
    Frame(#[from] polars::prelude::PolarsError),
    /// Reading a run's files failed.
    #[error(transparent)]
    Store(#[from] contactlab_runs::StoreError),
    /// A config could not be read.
    #[error(transparent)]
    Config(#[from] contactlab_runs::ConfigError),
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
    /// A report template is malformed, names what the report did not compute, or leaves
    /// something the report computed unshown.
    #[error("template {0}")]
    Template(String),
    /// A table was described inconsistently (a row with the wrong number of cells).
    #[error("table {0}")]
    Table(String),
    /// No report of that name.
    #[error("{0}")]
    Unknown(String),
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
