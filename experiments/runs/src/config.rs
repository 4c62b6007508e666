//! Declarative experiment configs: one TOML file per reproduced table or figure under
//! `experiments/configs/<paper>/`.
//!
//! ```toml
//! paper = "todorov2010"
//! name = "table1"
//! description = "Table 1: iterations per step and share of accepted Newton points"
//!
//! [scene]
//! kind = "balls_in_cube"     # or "ball_drop"
//! steps = 200
//! [scene.params]             # the scene's own parameters (BallsConfig fields)
//! h = 0.005
//!
//! [sweep]                    # lists; the runs are their Cartesian product
//! mu = [0.1, 0.5, 1.0, 2.0]  # every key must be a scene parameter
//! n_balls = [5, 10, 15]
//! seed = [0, 1, 2]
//!
//! [driver]                   # the solver whose impulses advance the simulation
//!                            # (or several `[[drivers]]`: the sweep runs once per driver)
//! formulation = "implicit-ncp"
//! optimizer = "todorov"
//! tol = 1e-8
//!
//! [[shadow]]                 # solvers run on the same step problems, not advancing it
//! formulation = "implicit-ncp"
//! optimizer = "lm"
//! ```
//!
//! A top-level `threads = 1` runs the sweep on that many threads whatever the lab's settings
//! (a timing beside one-threaded engines); without it the lab's settings decide.
//!
//! Every error names the file and the key that is wrong (TOML's own messages carry the line).
//!
//! This module is the schema and its structural checks (steps, sweep lists, one driver
//! table, distinct labels, the sweep's size): what a config *says*. Whether its solver names,
//! options and scene parameters exist is the lab's check (`contactlab_lab::Lab::check`), which
//! knows the registry; a report reads configs without it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::spec::SolverSpec;

/// The most runs a config may expand to (its sweep's product, times its drivers): the papers'
/// largest has 36, and every run is checked when the config is loaded.
pub const MAX_RUNS: usize = 10_000;

/// A config that cannot be used, with the file and key at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// TOML syntax or a key of the wrong type / unknown key.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (names the key and line).
        message: String,
    },
    /// A value that parses but is not usable.
    #[error("{path}: key `{key}`: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The dotted key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// A config file's text; the error names the file.
pub fn read_text(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })
}

/// One kind of run config: its `kind` key, its TOML schema (serde) and the checks serde cannot
/// make (ranges, non-empty lists, names that must differ). Every kind loads the same way, so an
/// error always names the file and the key.
pub trait RunConfig: serde::de::DeserializeOwned {
    /// What its `kind` key must say (`"experiment"`: the key is absent).
    const KIND: &'static str;

    /// What its `kind` key said.
    fn kind(&self) -> &str;

    /// The checks beyond the schema, for a parsed config or one built in code; errors name
    /// the key.
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError>;

    /// Reads a config file and checks it.
    fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::parse(&read_text(path)?, path)
    }

    /// Parses config text and checks it; `path` names it in errors.
    fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let cfg: Self = from_toml(text, path)?;
        if cfg.kind() != Self::KIND {
            return Err(invalid(
                path,
                "kind",
                format!("must be {:?}, got {:?}", Self::KIND, cfg.kind()),
            ));
        }
        cfg.check_structure(path)?;
        Ok(cfg)
    }
}

/// The error for a value that parses but is not usable.
pub fn invalid(path: &Path, key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.into(),
        key: key.into(),
        message,
    }
}

/// TOML text as a `T`; the error names the file (TOML's message names the key and the line).
pub fn from_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &Path,
) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.into(),
        message: e.to_string(),
    })
}

/// The `[scene]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneSection {
    /// Which scene, by its name (`balls_in_cube`, `clutter`, ...; the lab checks it exists).
    pub kind: String,
    /// Number of time steps per run (at most: a scene whose span follows from its parameters,
    /// the spring-cylinder's `duration`, ends a run earlier; see `Scene::finished`).
    pub steps: usize,
    /// Scene parameters; sweep keys override them per run.
    #[serde(default)]
    pub params: toml::Table,
}

/// The `[output]` table.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct OutputSection {
    /// Where the run's DataFrame goes (relative to the workspace root); defaults to
    /// `data/runs/<paper>/<name>.parquet`.
    pub data: Option<PathBuf>,
    /// Steps whose every solver's per-iteration trace is kept in `<name>_traces.parquet`,
    /// besides each run's hardest step (a convergence history a report draws).
    #[serde(default)]
    pub traces_at: Vec<usize>,
}

/// A whole experiment config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Paper key (`todorov2010`, ...).
    pub paper: String,
    /// The table or figure this config reproduces.
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// Threads the sweep's runs spread over, whatever the lab's settings (`1`: every step
    /// timed alone on one core, as one-threaded engines run); `None`: the lab's settings.
    #[serde(default)]
    pub threads: Option<usize>,
    /// The scene.
    pub scene: SceneSection,
    /// Lists of scene-parameter values; runs are their Cartesian product.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// The solver that advances the simulation (give this or `drivers`).
    #[serde(default)]
    pub driver: Option<SolverSpec>,
    /// Several solvers, each advancing its own copy of every run (`[[drivers]]`): the sweep
    /// is repeated once per driver, for comparisons whose trajectories differ.
    #[serde(default)]
    pub drivers: Vec<SolverSpec>,
    /// Solvers run on the driver's step problems, for comparison.
    #[serde(default)]
    pub shadow: Vec<SolverSpec>,
    /// Output locations.
    #[serde(default)]
    pub output: OutputSection,
}

/// One run: the sweep values chosen (in key order) and the scene parameters they produce.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// Position in the expanded sweep.
    pub index: usize,
    /// `(key, value)` for every sweep key.
    pub keys: Vec<(String, toml::Value)>,
    /// The scene parameters of this run (`scene.params` with the sweep values applied).
    pub params: toml::Table,
    /// Which of [`ExperimentConfig::driver_specs`] advances this run.
    pub driver: usize,
}

impl RunConfig for ExperimentConfig {
    const KIND: &'static str = "experiment";

    fn kind(&self) -> &str {
        Self::KIND
    }

    /// Steps, sweep lists, one driver table, distinct labels, the sweep's size.
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| invalid(path, key, message);
        if self.scene.steps == 0 {
            return Err(invalid("scene.steps", "must be at least 1".into()));
        }
        if self.threads == Some(0) {
            return Err(invalid("threads", "must be at least 1".into()));
        }
        for (key, values) in &self.sweep {
            if values.is_empty() {
                return Err(invalid(&format!("sweep.{key}"), "is an empty list".into()));
            }
        }
        match (&self.driver, self.drivers.is_empty()) {
            (Some(_), false) => {
                return Err(invalid(
                    "drivers",
                    "give either `driver` or `drivers`, not both".into(),
                ))
            }
            (None, true) => {
                return Err(invalid(
                    "driver",
                    "missing: give `[driver]` or `[[drivers]]`".into(),
                ))
            }
            _ => {}
        }
        for (key, spec) in self.solver_keys() {
            spec.check_numbers().map_err(|e| invalid(&key, e))?;
        }
        let mut labels: Vec<String> = self.driver_specs().iter().map(|d| d.name()).collect();
        labels.sort();
        if labels.windows(2).any(|w| w[0] == w[1]) {
            return Err(invalid(
                "drivers",
                "two drivers share a label; set `label` to tell them apart".into(),
            ));
        }
        // Expanding checks the sweep's size.
        self.runs(path).map(|_| ())
    }
}

impl ExperimentConfig {
    /// Every solver of the config with the key that names it in errors: `driver` or
    /// `drivers[i]`, then `shadow[i]`.
    pub fn solver_keys(&self) -> Vec<(String, &SolverSpec)> {
        let drivers = self.driver_specs().into_iter().enumerate().map(|(i, d)| {
            let key = if self.driver.is_some() {
                "driver".to_string()
            } else {
                format!("drivers[{i}]")
            };
            (key, d)
        });
        let shadows = self
            .shadow
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("shadow[{i}]"), s));
        drivers.chain(shadows).collect()
    }

    /// The solvers that advance runs: `[driver]`, or every `[[drivers]]` entry.
    pub fn driver_specs(&self) -> Vec<&SolverSpec> {
        self.driver.iter().chain(&self.drivers).collect()
    }

    /// The Cartesian product of the sweep lists, in a fixed order (keys sorted, last key
    /// fastest), each applied over `scene.params`, repeated per driver (driver slowest). The
    /// parameters are not checked against the scene here (the lab does).
    pub fn runs(&self, path: &Path) -> Result<Vec<RunSpec>, ConfigError> {
        let keys: Vec<&String> = self.sweep.keys().collect();
        let too_many = || ConfigError::Invalid {
            path: path.into(),
            key: "sweep".into(),
            message: format!(
                "expands to more than {MAX_RUNS} runs (MAX_RUNS; lists: {})",
                self.sweep
                    .iter()
                    .map(|(k, v)| format!("{k} {}", v.len()))
                    .collect::<Vec<_>>()
                    .join(" x ")
            ),
        };
        let total = self
            .sweep
            .values()
            .map(Vec::len)
            .chain([self.driver_specs().len().max(1)])
            .try_fold(1_usize, |acc, n| {
                acc.checked_mul(n).filter(|&t| t <= MAX_RUNS)
            })
            .ok_or_else(too_many)?;
        let per_driver: usize = self.sweep.values().map(Vec::len).product();
        let mut out = Vec::with_capacity(total);
        for index in 0..total {
            let mut rest = index % per_driver;
            let mut chosen = Vec::with_capacity(keys.len());
            for key in keys.iter().rev() {
                let values = &self.sweep[*key];
                chosen.push(((*key).clone(), values[rest % values.len()].clone()));
                rest /= values.len();
            }
            chosen.reverse();
            let mut table = self.scene.params.clone();
            for (k, v) in &chosen {
                table.insert(k.clone(), v.clone());
            }
            out.push(RunSpec {
                index,
                keys: chosen,
                params: table,
                driver: index / per_driver,
            });
        }
        Ok(out)
    }

    /// The DataFrame's path under `root` (the workspace root).
    pub fn data_path(&self, root: &Path) -> PathBuf {
        root.join(self.output.data.clone().unwrap_or_else(|| {
            PathBuf::from(format!("data/runs/{}/{}.parquet", self.paper, self.name))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str =
        "paper = \"p\"\nname = \"n\"\n[scene]\nkind = \"balls_in_cube\"\nsteps = 3\n\
        [driver]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n";

    #[test]
    fn a_config_may_fix_its_thread_count_and_zero_is_refused() {
        let p = Path::new("c.toml");
        assert_eq!(ExperimentConfig::parse(GOOD, p).unwrap().threads, None);
        let one = ExperimentConfig::parse(&format!("threads = 1\n{GOOD}"), p).unwrap();
        assert_eq!(one.threads, Some(1));
        let e = ExperimentConfig::parse(&format!("threads = 0\n{GOOD}"), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`threads`") && e.contains("at least 1"), "{e}");
    }
}
