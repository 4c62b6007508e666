//! The cross-paper matrix's config: every compatible (formulation, driver) pair of the registry
//! on shared problem sets, with the same tolerance, time limit and iteration limit per solve,
//! one tidy row per (problem, pair); the lab runs it (`contactlab_lab::matrix`) and the report
//! crate writes `reports/matrix/` from its rows.
//!
//! A matrix is declared in a TOML file (`experiments/configs/matrix/matrix.toml`):
//!
//! ```toml
//! kind = "matrix"
//! name = "matrix"
//! tol = 1e-6          # on FCLib's relative error |F_nat(r)|_2 / |q|_2 (Acary et al. 2018)
//! time_limit = 0.5    # seconds per solve
//! max_iter = 1000     # per solve
//! # only = ["coulomb+pgs"]   # run only these pairs; skip = [...] leaves pairs out
//!
//! [[sets]]
//! name = "siconos_ci"
//! tol = 1e-5                            # a set may have its own tolerance
//! files = ["data/problems/Rover1039.hdf5"]
//! dirs = ["data/problems/capsules"]     # every .hdf5 and .json file in it
//!
//! [[sets]]
//! name = "robots"
//! dirs = ["data/mujoco_robots/global"]
//! reference = "data/mujoco_robots/mujoco"  # MuJoCo's answers: distances from them per answer
//!
//! [[sets]]
//! name = "scenes"
//! scenes = [{ config = "experiments/configs/todorov2010/table1.toml", run = 0, steps = [100] }]
//! ```
//!
//! The tolerance is relative, as in the FCLib study: a solve gets the absolute bound
//! `tol |q| / (1 + |q|)` on the shared ruler (whose residual is `|F_nat| / (1 + |q|)`, see
//! `contactlab_core::metrics`), so "converged" means `|F_nat| / |q| <= tol` on every set
//! whatever its units. Each row also carries Siconos' current error,
//! `|F_nat| / max(|q|, |r|, |u|)`.
//!
//! Problems are numbered in set order, files sorted by name within a set; `--shard k/N` keeps
//! the problems whose number is `k-1 mod N` (column `run`), and shards merge back into one
//! frame ([`crate::store::read_run`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{invalid, ConfigError, OutputSection, RunConfig};

/// One scene source of a set: steps of one run of an experiment config (the lab dumps them).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSource {
    /// The experiment config (relative to the workspace root).
    pub config: PathBuf,
    /// The run of its sweep.
    #[serde(default)]
    pub run: usize,
    /// The steps whose problems are kept.
    pub steps: Vec<usize>,
}

/// One problem set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetSpec {
    /// The set's name in tables (`siconos_ci`, `mujoco`, ...).
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// The set's relative tolerance, instead of the matrix's.
    #[serde(default)]
    pub tol: Option<f64>,
    /// Problem files.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// Folders whose `.hdf5` and `.json` files are problems (not recursive).
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
    /// Problems out of this project's scenes.
    #[serde(default)]
    pub scenes: Vec<SceneSource>,
    /// A folder of another engine's answers beside the set's files (MuJoCo's: `<stem>.json`
    /// with its impulses `r` and row velocities `u`, `data/mujoco_robots/mujoco`): each answer
    /// is then measured against it, in impulses and in velocities.
    #[serde(default)]
    pub reference: Option<PathBuf>,
}

/// A whole matrix config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixConfig {
    /// Must be `"matrix"` (tells a matrix from an experiment config).
    pub kind: String,
    /// The run's name (its data file is `data/runs/matrix/<name>.parquet`).
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// Relative tolerance on FCLib's error, for every set without its own.
    pub tol: f64,
    /// SAP's relative tolerance (Castro et al. eq. 26), passed to every pair (only drivers
    /// on a merit with its own scale read it).
    #[serde(default)]
    pub rel_tol: f64,
    /// Seconds per solve.
    pub time_limit: f64,
    /// Iterations per solve.
    pub max_iter: u64,
    /// `formulation+optimizer` pairs to leave out (every compatible pair runs otherwise).
    #[serde(default)]
    pub skip: Vec<String>,
    /// When not empty, the only `formulation+optimizer` pairs that run (a study of a few
    /// pairs, such as one at a longer time limit).
    #[serde(default)]
    pub only: Vec<String>,
    /// The problem sets.
    pub sets: Vec<SetSpec>,
    /// Output locations.
    #[serde(default)]
    pub output: OutputSection,
}

/// Where a problem comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A problem file.
    File(PathBuf),
    /// Step `step` of run `run` of an experiment config.
    Scene {
        /// The config.
        config: PathBuf,
        /// The run.
        run: usize,
        /// The step.
        step: usize,
    },
}

/// One problem of the matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemEntry {
    /// Its number over all sets (the `run` column; shards split on it).
    pub index: usize,
    /// The set's position in the config.
    pub set: usize,
    /// A short name (file name, or `<config>/run<k>/step<NNNN>`).
    pub name: String,
    /// Where it comes from.
    pub source: Source,
}

impl RunConfig for MatrixConfig {
    const KIND: &'static str = "matrix";

    fn kind(&self) -> &str {
        &self.kind
    }

    /// Tolerances, limits and sets (the lab checks `skip` against its registry's pairs).
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| invalid(path, key, message);
        let positive = |x: f64| x > 0.0 && x.is_finite();
        if !positive(self.tol) {
            return Err(invalid(
                "tol",
                format!("must be positive, got {}", self.tol),
            ));
        }
        if !(self.rel_tol >= 0.0 && self.rel_tol.is_finite()) {
            return Err(invalid(
                "rel_tol",
                format!("must be >= 0, got {}", self.rel_tol),
            ));
        }
        if !positive(self.time_limit) || self.time_limit > 3600.0 {
            return Err(invalid(
                "time_limit",
                format!("must be in (0, 3600] seconds, got {}", self.time_limit),
            ));
        }
        if self.max_iter == 0 {
            return Err(invalid("max_iter", "must be at least 1".into()));
        }
        if self.sets.is_empty() {
            return Err(invalid("sets", "no problem set".into()));
        }
        for (i, set) in self.sets.iter().enumerate() {
            if let Some(t) = set.tol.filter(|t| !positive(*t)) {
                return Err(invalid(
                    &format!("sets[{i}].tol"),
                    format!("must be positive, got {t}"),
                ));
            }
            if self.sets[..i].iter().any(|s| s.name == set.name) {
                return Err(invalid(
                    &format!("sets[{i}].name"),
                    format!("`{}` twice", set.name),
                ));
            }
        }
        Ok(())
    }
}

impl MatrixConfig {
    /// The same matrix on the named sets only (`contactlab run <matrix> --set <name>`), its
    /// rows under `<name>-<sets>`: a part run never overwrites the whole matrix's data. An
    /// unknown set name is an error naming the known ones; no name keeps every set.
    pub fn only_sets(mut self, names: &[String], path: &Path) -> Result<Self, ConfigError> {
        if names.is_empty() {
            return Ok(self);
        }
        if let Some(unknown) = names
            .iter()
            .find(|n| !self.sets.iter().any(|s| &s.name == *n))
        {
            let known: Vec<&str> = self.sets.iter().map(|s| s.name.as_str()).collect();
            return Err(invalid(
                path,
                "sets",
                format!("no set `{unknown}`; the sets are {}", known.join(", ")),
            ));
        }
        self.sets.retain(|s| names.contains(&s.name));
        self.name = format!("{}-{}", self.name, names.join("-"));
        self.output.data = None;
        Ok(self)
    }

    /// The relative tolerance of set `i`.
    pub fn set_tol(&self, i: usize) -> f64 {
        self.sets.get(i).and_then(|s| s.tol).unwrap_or(self.tol)
    }

    /// Where the run's rows go.
    pub fn data_path(&self, root: &Path) -> PathBuf {
        root.join(
            self.output.data.clone().unwrap_or_else(|| {
                PathBuf::from(format!("data/runs/matrix/{}.parquet", self.name))
            }),
        )
    }

    /// Every problem, numbered ([`list_problems`]).
    pub fn problems(&self, root: &Path, path: &Path) -> Result<Vec<ProblemEntry>, ConfigError> {
        list_problems(&self.sets, root, path)
    }
}

/// Every problem of `sets`, numbered: each set's files (sorted by name, `dirs` listed), then
/// its scene steps in the order given. A listed file or folder that does not exist is an error
/// naming it.
pub fn list_problems(
    sets: &[SetSpec],
    root: &Path,
    path: &Path,
) -> Result<Vec<ProblemEntry>, ConfigError> {
    let mut out = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let mut files = Vec::new();
        for f in &set.files {
            let full = root.join(f);
            if !full.is_file() {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    key: format!("sets[{i}].files"),
                    message: format!("{} does not exist", f.display()),
                });
            }
            files.push(full);
        }
        for d in &set.dirs {
            let read = std::fs::read_dir(root.join(d)).map_err(|e| ConfigError::Invalid {
                path: path.to_path_buf(),
                key: format!("sets[{i}].dirs"),
                message: format!("{}: {e}", d.display()),
            })?;
            files.extend(read.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| {
                p.is_file() && p.extension().is_some_and(|e| e == "hdf5" || e == "json")
            }));
        }
        files.sort_by_key(|f| f.file_name().map(|n| n.to_os_string()));
        files.dedup();
        for f in files {
            out.push(ProblemEntry {
                index: out.len(),
                set: i,
                name: f
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                source: Source::File(f),
            });
        }
        for s in &set.scenes {
            let stem = s
                .config
                .file_stem()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let paper = s
                .config
                .parent()
                .and_then(Path::file_name)
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            for &step in &s.steps {
                out.push(ProblemEntry {
                    index: out.len(),
                    set: i,
                    name: format!("{paper}/{stem}/run{}/step{step:04}", s.run),
                    source: Source::Scene {
                        config: root.join(&s.config),
                        run: s.run,
                        step,
                    },
                });
            }
        }
    }
    Ok(out)
}

/// The `kind` a config file declares at its top (`"matrix"`, `"problems"`, ...), `None` for an
/// experiment config (which has none) and for files that do not read as TOML (their loader will
/// say why).
pub fn config_kind(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .and_then(|t| t.get("kind").and_then(|k| k.as_str().map(str::to_string)))
}
