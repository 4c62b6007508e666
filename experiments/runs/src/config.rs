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
//! `[every_pair]` instead of (or beside) `[[drivers]]` adds one driver per compatible
//! (formulation, optimizer) pair of the registry, labelled `formulation+optimizer`, each with
//! the table's settings (`tol`, `max_iter`, `time_limit`, `start`; `max_iter_for` overrides the
//! budget per optimizer, whose iterations mean different things, or per pair,
//! `formulation+optimizer`, which wins over its optimizer's entry; `skip` leaves pairs out).
//! The lab expands it when it loads the config ([`ExperimentConfig::with_pairs`]), so a driver
//! registered later joins every such study.
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

use crate::spec::{PluginChoice, SolverSpec, Start};

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
    /// Keep every solver's per-iteration trace of every step (rows with `why = "every_step"`),
    /// for statistics over all iterations of a sweep (where Todorov's line-search steps land);
    /// about ten rows per solve, so meant for sweeps of cheap solves.
    #[serde(default)]
    pub all_traces: bool,
}

fn default_pair_tol() -> f64 {
    1e-8
}
fn default_pair_max_iter() -> u64 {
    100
}

/// `[every_pair]`: the settings every compatible pair's driver gets (see the module doc).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairTemplate {
    /// Tolerance of every pair.
    #[serde(default = "default_pair_tol")]
    pub tol: f64,
    /// Iteration budget of every pair without an entry in `max_iter_for`.
    #[serde(default = "default_pair_max_iter")]
    pub max_iter: u64,
    /// Iteration budget by optimizer name (sweeps for PGS, Newton steps for Newton), or by
    /// pair (`formulation+optimizer`), which wins over its optimizer's.
    #[serde(default)]
    pub max_iter_for: BTreeMap<String, u64>,
    /// Wall-clock limit of one solve (s).
    #[serde(default)]
    pub time_limit: Option<f64>,
    /// Initial point.
    #[serde(default)]
    pub start: Start,
    /// Pairs left out, as `formulation+optimizer`.
    #[serde(default)]
    pub skip: Vec<String>,
}

impl PairTemplate {
    /// The driver of one pair with these settings (labelled `formulation+optimizer`).
    pub fn spec(&self, formulation: &str, optimizer: &str) -> SolverSpec {
        SolverSpec {
            label: None,
            formulation: PluginChoice::named(formulation),
            optimizer: PluginChoice::named(optimizer),
            tol: self.tol,
            max_iter: (self.max_iter_for)
                .get(&format!("{formulation}+{optimizer}"))
                .or_else(|| self.max_iter_for.get(optimizer))
                .copied()
                .unwrap_or(self.max_iter),
            time_limit: self.time_limit,
            start: self.start,
            ..SolverSpec::new(formulation, optimizer, self.tol, self.max_iter)
        }
    }
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
    /// One more driver per compatible pair of the registry (`[every_pair]`), expanded by the
    /// lab into `drivers` ([`ExperimentConfig::with_pairs`]).
    #[serde(default)]
    pub every_pair: Option<PairTemplate>,
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
            (None, true) if self.every_pair.is_none() => {
                return Err(invalid(
                    "driver",
                    "missing: give `[driver]`, `[[drivers]]` or `[every_pair]`".into(),
                ))
            }
            (Some(_), true) if self.every_pair.is_some() => {
                return Err(invalid(
                    "every_pair",
                    "adds `[[drivers]]`: give `drivers`, not `driver`, beside it".into(),
                ))
            }
            _ => {}
        }
        for (key, spec) in self.solver_keys() {
            spec.check_numbers().map_err(|e| invalid(&key, e))?;
        }
        if let Some(t) = &self.every_pair {
            t.spec("any", "any")
                .check_numbers()
                .map_err(|e| invalid("every_pair", e))?;
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
    /// The config with `[every_pair]` expanded: one driver per pair of `pairs`
    /// (`(formulation, optimizer)`, the registry's compatible pairs in its order) not in its
    /// `skip`, appended to `drivers`; the structure is checked again (labels stay distinct).
    /// A `skip` entry that is not one of `pairs` is an error naming it.
    pub fn with_pairs(
        mut self,
        pairs: &[(String, String)],
        path: &Path,
    ) -> Result<ExperimentConfig, ConfigError> {
        let Some(template) = self.every_pair.take() else {
            return Ok(self);
        };
        let labels: Vec<String> = pairs.iter().map(|(f, o)| format!("{f}+{o}")).collect();
        if let Some(s) = template.skip.iter().find(|s| !labels.contains(s)) {
            return Err(invalid(
                path,
                "every_pair.skip",
                format!("`{s}` is not a compatible pair; `contactlab list` names them"),
            ));
        }
        for ((f, o), label) in pairs.iter().zip(&labels) {
            if !template.skip.contains(label) {
                self.drivers.push(template.spec(f, o));
            }
        }
        self.check_structure(path)?;
        Ok(self)
    }

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

    const PAIRS: &str = "paper = \"p\"\nname = \"n\"\n[scene]\nkind = \"balls_in_cube\"\n\
        steps = 3\n[every_pair]\ntol = 1e-6\nmax_iter = 50\ntime_limit = 0.5\n\
        start = \"warm\"\nmax_iter_for = { pgs = 1000 }\nskip = [\"min-map+newton\"]\n";

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(f, o)| (f.to_string(), o.to_string()))
            .collect()
    }

    /// `[every_pair]` alone is a config; expanded, it is one driver per pair not skipped, each
    /// with the template's settings and its own budget where `max_iter_for` names it.
    #[test]
    fn every_pair_expands_into_one_driver_per_pair() {
        let p = Path::new("c.toml");
        let cfg = ExperimentConfig::parse(PAIRS, p).unwrap();
        assert!(cfg.driver_specs().is_empty());
        let all = pairs(&[
            ("coulomb", "pgs"),
            ("min-map", "newton"),
            ("sap", "newton-merit"),
        ]);
        let cfg = cfg.with_pairs(&all, p).unwrap();
        assert!(cfg.every_pair.is_none());
        let names: Vec<String> = cfg.driver_specs().iter().map(|d| d.name()).collect();
        assert_eq!(names, ["coulomb+pgs", "sap+newton-merit"]);
        let (pgs, sap) = (&cfg.drivers[0], &cfg.drivers[1]);
        assert_eq!((pgs.max_iter, sap.max_iter), (1000, 50));
        assert_eq!(
            (pgs.tol, pgs.time_limit, pgs.start),
            (1e-6, Some(0.5), Start::Warm)
        );
        // Each run repeats per driver.
        assert_eq!(cfg.runs(p).unwrap().len(), 2);
        // A pair's own budget wins over its optimizer's.
        let own = PAIRS.replace("{ pgs = 1000 }", "{ pgs = 1000, \"coulomb+pgs\" = 7 }");
        let cfg = ExperimentConfig::parse(&own, p)
            .unwrap()
            .with_pairs(&all, p)
            .unwrap();
        assert_eq!(cfg.drivers[0].max_iter, 7);
    }

    /// A skipped pair that the registry does not have, a bad template number, `driver` beside
    /// `every_pair`, and a label an explicit driver already takes are errors naming the key.
    #[test]
    fn every_pair_errors_name_the_key() {
        let p = Path::new("c.toml");
        let cfg = ExperimentConfig::parse(PAIRS, p).unwrap();
        let e = cfg
            .with_pairs(&pairs(&[("coulomb", "pgs")]), p)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("every_pair.skip") && e.contains("min-map+newton"),
            "{e}"
        );
        let bad = PAIRS.replace("tol = 1e-6", "tol = -1.0");
        let e = ExperimentConfig::parse(&bad, p).unwrap_err().to_string();
        assert!(e.contains("`every_pair`") && e.contains("tol"), "{e}");
        let with_driver = format!("{GOOD}{}", &PAIRS[PAIRS.find("[every_pair]").unwrap()..]);
        let e = ExperimentConfig::parse(&with_driver, p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`every_pair`") && e.contains("`drivers`"), "{e}");
        let clash = format!("{PAIRS}[[drivers]]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n");
        let cfg = ExperimentConfig::parse(&clash, p).unwrap();
        let e = cfg
            .with_pairs(&pairs(&[("coulomb", "pgs"), ("min-map", "newton")]), p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("share a label"), "{e}");
    }
}
