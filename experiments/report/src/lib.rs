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
pub mod csv;
pub mod erleben2008;
pub mod error;
pub mod fidelity;
pub mod fidelity_ladder;
pub mod findings;
pub mod gradients;
pub mod hwangbo2018;
pub mod matrix;
pub mod mylapilli2014;
pub mod peers;
pub mod plots;
pub mod robots;
pub mod table;
pub mod template;
pub mod todorov2010;

use std::path::Path;

pub use crate::analysis::{counter, f64s, strs};
pub use crate::csv::{
    number, optional_number, read_csv, read_csv_with_header, read_quantities, write_csv,
};
pub use crate::error::ReportError;
pub use crate::table::{fmt, markdown_table};

/// One report the project generates: a paper of the mission, or a study across them.
#[derive(Debug, Clone, Copy)]
pub struct Paper {
    /// The key of `just reproduce <id>` and of `experiments/configs/<id>/`, `reports/<id>/`.
    pub id: &'static str,
    /// Authors, year and method (or what the study compares), in six words or fewer: the
    /// line `contactlab list` prints; the page's own title is in its `paper.toml`
    /// ([`builder::PAPER_PAGE`]).
    pub title: &'static str,
    /// Writes `reports/<id>/` from the runs under the workspace root given.
    pub generate: fn(&Path) -> Result<(), ReportError>,
}

/// Every report, in the order of the mission: the five papers, then the cross-paper matrix, the
/// physical-fidelity study and its accuracy-against-time ladder, the comparison beside MuJoCo and Drake, the robot study and the
/// gradients study.
pub const PAPERS: &[Paper] = &[
    Paper {
        id: "todorov2010",
        title: "Todorov 2010, implicit nonlinear complementarity",
        generate: todorov2010::generate,
    },
    Paper {
        id: "erleben2008",
        title: "Erleben and Ortiz 2008, min-map Newton",
        generate: erleben2008::generate,
    },
    Paper {
        id: "mylapilli2014",
        title: "Mylapilli and Jain 2014, Levenberg-Marquardt complementarity",
        generate: mylapilli2014::generate,
    },
    Paper {
        id: "castro2022",
        title: "Castro, Permenter and Han 2022, SAP",
        generate: castro2022::generate,
    },
    Paper {
        id: "hwangbo2018",
        title: "Hwangbo et al. 2018, per-contact bisection",
        generate: hwangbo2018::generate,
    },
    Paper {
        id: "matrix",
        title: "every formulation against every driver",
        generate: matrix::generate,
    },
    Paper {
        id: "fidelity",
        title: "each contact model against exact answers",
        generate: fidelity::generate,
    },
    Paper {
        id: fidelity_ladder::PAPER,
        title: "every pair's accuracy against its time",
        generate: fidelity_ladder::generate,
    },
    Paper {
        id: "peers",
        title: "every formulation beside MuJoCo and Drake",
        generate: peers::generate,
    },
    Paper {
        id: "robots",
        title: "real robots stepped by every pair",
        generate: robots::generate,
    },
    Paper {
        id: "gradients",
        title: "derivatives of every answer, checked",
        generate: gradients::generate,
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
