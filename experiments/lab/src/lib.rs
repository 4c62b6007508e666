//! # contactlab-lab
//!
//! The lab: where scenes meet solvers and runs are made (see `docs/DESIGN.md`, "The flow of
//! data"):
//!
//! ```text
//! config (contactlab-runs) --Lab: registry, scenes (contactlab-scenes), runner--> data/runs/
//! ```
//!
//! - [`Lab`]: the registry, the data root and the run settings, the one value the command
//!   line, the notebooks and the Python package call;
//! - [`registry`]: formulations and drivers by name, specs resolved into solvers;
//! - [`plan`]: an experiment config checked once and made ready to run (solvers resolved,
//!   scenes parsed);
//! - [`check`]: what a matrix or problem-set config's schema cannot check, against the registry;
//! - [`context`]: the lab's registry, root and settings borrowed, as the runners take them;
//! - [`runner`]: an experiment config's sweep, step by step, one row per solve;
//! - [`matrix`]: every compatible pair on shared problem sets;
//! - [`ladder`]: every pair's accuracy against time per solve, rung by rung, on sampled steps;
//! - [`problems`]: named solvers timed on problem files, with [`reference`](mod@reference) answers of
//!   another engine beside them;
//! - [`single_contact`]: single-contact methods timed on the slipping contacts a scene meets;
//! - [`dump`]: the contact problems of chosen steps of a run, as problem files;
//! - [`engines`]: MuJoCo and Drake on the same scenes, through the Python harness;
//! - [`solve`](mod@solve): one problem by name (options routed to their plugin), the
//!   generalized velocity of an answer, every pair on one problem, the table of pairs;
//! - [`derivatives`]: the derivatives of an answer to its problem's data, by field name;
//! - [`study`]: the typed notebook DSL (a pair that cannot run does not compile);
//! - [`frames`]: core's traces as polars DataFrames.
//!
//! The reports read what a run wrote and never this crate: they cannot solve.

pub mod check;
pub mod context;
pub mod derivatives;
pub mod dump;
pub mod engines;
pub mod frames;
mod lab;
pub mod ladder;
pub mod matrix;
pub mod plan;
pub mod problems;
pub mod reference;
pub mod registry;
pub mod runner;
pub mod single_contact;
pub mod solve;
pub mod study;

pub use context::{Context, Settings};
pub use lab::{workspace_root, Lab, RunSummary};
pub use registry::{PluginChoice, Registry, RegistryError, SolverSpec, Start};

/// The core crate, re-exported for [`register_formulation!`] and for notebooks.
pub use contactlab_core;
/// The formulations crate, re-exported for notebooks.
pub use contactlab_formulations;
/// The configs and run files, re-exported for notebooks.
pub use contactlab_runs;
/// The scenes, re-exported for notebooks.
pub use contactlab_scenes;
/// The polars this crate builds its DataFrames with, re-exported so notebooks use the same one.
pub use polars;
