//! # contactlab-experiments
//!
//! Where problems meet people (see `docs/DESIGN.md`, "The flow of data"):
//!
//! ```text
//! scenes (physics) --config (TOML)--> runner (rayon, indicatif) --> polars DataFrames (data/)
//!     --> report (markdown + SVG + CSV, reports/<paper>/)
//! ```
//!
//! plus the registry of formulations and optimizers by name and the `contactlab` command line.
//! The command line and the notebooks call the same functions: nothing lives only in a binary.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod dump;
pub mod frames;
pub mod matrix;
pub mod notebook;
pub mod peers;
pub mod provenance;
pub mod registry;
pub mod report;
pub mod runner;
pub mod scenes;
pub mod solver_peers;
pub mod step_peers;
pub mod study;

/// The core crate, re-exported for [`register_formulation!`] and for notebooks.
pub use contactlab_core;
/// The formulations crate, re-exported for notebooks.
pub use contactlab_formulations;
/// The polars this crate builds its DataFrames with, re-exported so notebooks use the same one.
pub use polars;
/// The toml this crate parses configs with, re-exported so notebooks can edit a config's sweep.
pub use toml;
