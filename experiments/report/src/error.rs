//! What can go wrong while generating a report.

use crate::analysis::AnalysisError;

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
    /// A run measured through a Python extension built from other code than the run's commit.
    #[error("{0}")]
    StaleExtension(String),
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
