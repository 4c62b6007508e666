//! # contactlab-experiments
//!
//! The top of the workspace: the `contactlab` command line ([`cli`]) and the notebooks' one
//! dependency ([`notebook`] shows tables and plots through evcxr's display protocol). The
//! comparison beside MuJoCo and Drake is a report like the papers' (`contactlab reproduce
//! peers`: the configs in `experiments/configs/peers/`, the report [`report::peers`]).
//!
//! The crates below it carry the data flow of `docs/DESIGN.md`:
//!
//! ```text
//! contactlab-scenes (physics) --> contactlab-lab (registry, runner, matrix, dump, study)
//!     --> data/runs (contactlab-runs: configs and run files) --> contactlab-report
//! ```
//!
//! Their modules are re-exported here under the names the notebooks use
//! (`contactlab_experiments::registry`, `::runner`, `::report`, ...). Nothing lives only in the
//! binary: every command is a library function on a [`Lab`].

pub mod cli;
pub mod notebook;

pub use contactlab_lab::{dump, frames, registry, runner, study};
pub use contactlab_lab::{register_formulation, workspace_root, Lab, RunSummary, Settings};
pub use contactlab_report::analysis;
pub use contactlab_runs::{config, provenance, store};

/// The cross-paper matrix: its config (`contactlab-runs`) and its run (`contactlab-lab`).
pub mod matrix {
    pub use contactlab_lab::matrix::*;
    pub use contactlab_runs::matrix::*;
}

/// Problem sets (`kind = "problems"`): their config (`contactlab-runs`) and their run
/// (`contactlab-lab`).
pub mod problems {
    pub use contactlab_lab::problems::*;
    pub use contactlab_runs::problems::*;
}

/// The reports (`contactlab-report`): the builder, the plots and one module per paper.
pub use contactlab_report as report;
/// The scenes (`contactlab-scenes`).
pub use contactlab_scenes as scenes;

/// The core crate, re-exported for notebooks.
pub use contactlab_core;
/// The formulations crate, re-exported for notebooks.
pub use contactlab_formulations;
/// The polars the lab builds its DataFrames with, re-exported so notebooks use the same one.
pub use polars;
/// The toml configs are parsed with, re-exported so notebooks can edit a config's sweep.
pub use toml;
