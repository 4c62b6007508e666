//! # contactlab-runs
//!
//! What a run is, on paper and on disk: the declarative configs (`experiments/configs/`) of
//! every kind ([`config`]: a scene's sweep; [`matrix`]: every pair on problem sets;
//! [`problems`]: named solvers timed on problem files; [`single_contact`]: single-contact
//! methods timed on the slipping contacts of a scene; [`engines`]: MuJoCo and Drake through
//! the Python harness), the solver specs they name ([`spec`]), the files a run leaves
//! ([`store`]: `data/runs/<paper>/<name>.parquet` with its `.meta.json` and [`provenance`]) and
//! the readers of their columns ([`columns`]), and the contract between writer and readers:
//! every fixed column's name and the typed metadata ([`schema`]). The lab (`contactlab-lab`) executes configs and writes these files;
//! the reports (`contactlab-report`) read them. This crate knows neither solvers nor scenes:
//! it cannot run anything, which is what lets a report depend on it and stay a pure reader.
//!
//! ```text
//! config (TOML) --lab: registry, scenes, runner--> data/runs/<paper>/<name>.parquet + .meta.json
//!     --report--> reports/<paper>/
//! ```

pub mod columns;
pub mod config;
pub mod engines;
pub mod error;
pub mod ladder;
pub mod matrix;
pub mod problems;
pub mod provenance;
pub mod scene_record;
pub mod schema;
pub mod single_contact;
pub mod spec;
pub mod store;

pub use config::{ConfigError, ExperimentConfig, RunConfig, RunSpec};
pub use matrix::MatrixConfig;
pub use provenance::Provenance;
pub use spec::{PluginChoice, SolverSpec, Start};
pub use store::{RunMeta, SceneRecord, StoreError};
