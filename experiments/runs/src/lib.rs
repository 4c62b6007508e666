//! # contactlab-runs
//!
//! What a run is, on paper and on disk: the declarative configs (`experiments/configs/`),
//! the solver specs they name, and the files a run leaves (`data/runs/<paper>/<name>.parquet`
//! with its `.meta.json`). The lab (`contactlab-lab`) executes configs and writes these files;
//! the reports (`contactlab-report`) read them. This crate knows neither solvers nor scenes:
//! it cannot run anything, which is what lets a report depend on it and stay a pure reader.
//!
//! ```text
//! config (TOML) --lab: registry, scenes, runner--> data/runs/<paper>/<name>.parquet + .meta.json
//!     --report--> reports/<paper>/
//! ```

pub mod config;
pub mod matrix;
pub mod provenance;
pub mod spec;
pub mod store;

pub use config::{ConfigError, ExperimentConfig, RunSpec};
pub use matrix::MatrixConfig;
pub use provenance::Provenance;
pub use spec::{PluginChoice, SolverSpec, Start};
pub use store::{RunMeta, SceneRecord, StoreError};
