//! Single-contact configs (`kind = "single_contact"`): the slipping contacts a scene meets,
//! recorded while a driver advances it, then every named single-contact method timed on the very
//! same contacts and measured against an independent reference, one row per method. This is
//! Hwangbo, Lee and Hutter 2018's Table I ("Computation cost of a single contact
//! optimization", sec. V-B: the bisection of Algorithm 1, with the hybrid gradient of eqs.
//! 15-16, against the golden section and the analytical quartic, on samples collected from the
//! four tasks of sec. V-A).
//!
//! ```toml
//! kind = "single_contact"
//! paper = "hwangbo2018"
//! name = "table1"
//! description = "One slipping contact, three methods (Table I)"
//! methods = ["bisection", "golden_section", "analytical"]   # timed, in this order
//! tol = 1e-6                 # the bisection's and golden section's impulse interval (N s)
//! samples_per_run = 2500     # slipping contacts kept per run, spread evenly over its steps
//! rounds = 21                # timing rounds, the methods interleaved; the median is kept
//!
//! [scene]                    # as an experiment config's: the scene, its steps per run
//! kind = "quadruped"
//! steps = 3000
//! [scene.params]
//! dt = 0.001
//!
//! [sweep]                    # lists; the runs are their Cartesian product
//! task = ["hang", "drop", "random", "trot"]
//!
//! [driver]                   # the solver whose impulses advance every run
//! formulation = "coulomb"
//! optimizer = { name = "bisection-sor", local = "bisection" }
//! tol = 1e-6
//! ```
//!
//! The scene, sweep and driver mean what they mean in an experiment config
//! ([`SingleContactConfig::simulation`] is that config); the method names are the lab's (the
//! values of `bisection-sor`'s `local` option that solve the maximum-dissipation model).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{
    invalid, ConfigError, ExperimentConfig, OutputSection, RunConfig, RunSpec, SceneSection,
};
use crate::problems::MAX_ROUNDS;
use crate::spec::SolverSpec;

/// A whole single-contact config: see the module documentation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SingleContactConfig {
    /// Must be `"single_contact"`.
    pub kind: String,
    /// Paper key (the rows go to `data/runs/<paper>/<name>.parquet`).
    pub paper: String,
    /// The table this run serves.
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// The single-contact methods timed, by name, in the rows' order.
    pub methods: Vec<String>,
    /// The impulse interval (N s) at which the interval methods stop.
    pub tol: f64,
    /// Slipping contacts kept per run (at most; spread evenly over the run when it meets more).
    pub samples_per_run: usize,
    /// Timing rounds; a method's time is the median round's.
    pub rounds: usize,
    /// The scene and its steps per run.
    pub scene: SceneSection,
    /// Lists of scene-parameter values; the runs are their Cartesian product.
    #[serde(default)]
    pub sweep: BTreeMap<String, Vec<toml::Value>>,
    /// The solver that advances every run.
    pub driver: SolverSpec,
    /// Output locations (`traces_at` is not used).
    #[serde(default)]
    pub output: OutputSection,
}

impl RunConfig for SingleContactConfig {
    const KIND: &'static str = "single_contact";

    fn kind(&self) -> &str {
        &self.kind
    }

    /// Methods, tolerance, samples and rounds (the lab checks the driver, scene and methods).
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| invalid(path, key, message);
        if self.methods.is_empty() {
            return Err(invalid("methods", "no method".into()));
        }
        let mut names = self.methods.clone();
        names.sort();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Err(invalid("methods", "a method is named twice".into()));
        }
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(invalid(
                "tol",
                format!("must be a positive number, got {}", self.tol),
            ));
        }
        if self.samples_per_run == 0 {
            return Err(invalid("samples_per_run", "must be at least 1".into()));
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(invalid(
                "rounds",
                format!("must be in 1..={MAX_ROUNDS}, got {}", self.rounds),
            ));
        }
        // The scene, sweep and driver are checked as the experiment config they make.
        self.simulation().check_structure(path)
    }
}

impl SingleContactConfig {
    /// The simulations as an experiment config: this config's scene, sweep and driver, no
    /// shadow. Its runs are this config's runs.
    pub fn simulation(&self) -> ExperimentConfig {
        ExperimentConfig {
            paper: self.paper.clone(),
            name: self.name.clone(),
            description: self.description.clone(),
            scene: self.scene.clone(),
            sweep: self.sweep.clone(),
            driver: Some(self.driver.clone()),
            drivers: Vec::new(),
            every_pair: None,
            shadow: Vec::new(),
            output: self.output.clone(),
            threads: None,
        }
    }

    /// The runs: the sweep's Cartesian product over `scene.params` ([`ExperimentConfig::runs`]).
    pub fn runs(&self, path: &Path) -> Result<Vec<RunSpec>, ConfigError> {
        self.simulation().runs(path)
    }

    /// The rows' file under `root`: `data/runs/<paper>/<name>.parquet` unless `[output]` says.
    pub fn data_path(&self, root: &Path) -> PathBuf {
        self.simulation().data_path(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "kind = \"single_contact\"\npaper = \"p\"\nname = \"n\"\n\
        methods = [\"bisection\", \"analytical\"]\ntol = 1e-6\nsamples_per_run = 10\nrounds = 3\n\
        [scene]\nkind = \"quadruped\"\nsteps = 5\n\
        [sweep]\ntask = [\"hang\", \"drop\"]\n\
        [driver]\nformulation = \"coulomb\"\noptimizer = \"bisection-sor\"\n";

    fn error(text: &str) -> String {
        SingleContactConfig::parse(text, Path::new("p.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_single_contact_config_parses_into_runs_and_its_mistakes_are_named() {
        let cfg = SingleContactConfig::parse(GOOD, Path::new("p.toml")).unwrap();
        assert_eq!(cfg.methods, ["bisection", "analytical"]);
        let runs = cfg.runs(Path::new("p.toml")).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].params["task"].as_str(), Some("drop"));
        assert_eq!(
            cfg.data_path(Path::new("/r")),
            Path::new("/r/data/runs/p/n.parquet")
        );
        let e = error(&GOOD.replace("rounds = 3", "rounds = 0"));
        assert!(e.contains("`rounds`"), "{e}");
        let e = error(&GOOD.replace("samples_per_run = 10", "samples_per_run = 0"));
        assert!(e.contains("`samples_per_run`"), "{e}");
        let e = error(&GOOD.replace("tol = 1e-6", "tol = -1.0"));
        assert!(e.contains("`tol`"), "{e}");
        let e = error(&GOOD.replace("\"analytical\"", "\"bisection\""));
        assert!(e.contains("`methods`") && e.contains("twice"), "{e}");
        let e = error(&GOOD.replace("[\"bisection\", \"analytical\"]", "[]"));
        assert!(e.contains("`methods`"), "{e}");
        let e = error(&GOOD.replace("steps = 5", "steps = 0"));
        assert!(e.contains("scene.steps"), "{e}");
        let e = error(&GOOD.replace("task = [\"hang\", \"drop\"]", "task = []"));
        assert!(e.contains("sweep.task"), "{e}");
        let e = error(&GOOD.replace("kind = \"single_contact\"", "kind = \"problems\""));
        assert!(e.contains("`kind`"), "{e}");
        let e = error(&format!("shadow = []\n{GOOD}"));
        assert!(e.contains("shadow"), "{e}");
    }
}
