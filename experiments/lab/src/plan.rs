//! An experiment config checked once against a lab and made ready to run: every solver
//! resolved against the registry (names, pairing, options, numbers; the lab's default time
//! limit applied where a spec sets none), the scene's kind found and every run's parameters
//! (sweep values applied) parsed into the scene's typed config. The runner, `contactlab dump`
//! and the single-contact timing consume the plan, so a config is checked once and its scene
//! table parsed once; what the schema alone checks stays with the config
//! ([`contactlab_runs::config`]).

use std::path::{Path, PathBuf};

use contactlab_runs::config::{ConfigError, ExperimentConfig, RunSpec};
use contactlab_runs::schema::steps;
use contactlab_runs::RunConfig;
use contactlab_scenes::{SceneConfig, SceneKind};

use crate::context::Context;
use crate::registry::ResolvedSolver;

/// A checked experiment: its config, its solvers resolved, its runs with their scenes parsed.
pub struct ExperimentPlan {
    config: ExperimentConfig,
    path: PathBuf,
    drivers: Vec<PlannedSolver>,
    shadows: Vec<PlannedSolver>,
    runs: Vec<PlannedRun>,
}

/// One solver of a plan: resolved, and the friction model its answers satisfy.
pub struct PlannedSolver {
    /// The solver, ready to solve.
    pub solver: ResolvedSolver,
    /// The name of the friction model its answers satisfy (empty when the registry does not
    /// know the pair's).
    pub model: &'static str,
}

/// One run of a plan.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// Its place in the sweep, its sweep values, its raw parameters and its driver.
    pub spec: RunSpec,
    /// Its scene's parameters parsed and checked, ready to build.
    pub scene: SceneConfig,
}

fn invalid(path: &Path, key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.into(),
        key: key.into(),
        message,
    }
}

impl ExperimentPlan {
    /// Reads the experiment config at `path`, expands its `[every_pair]` over `ctx`'s
    /// compatible pairs and plans it ([`ExperimentPlan::new`]).
    pub fn load(ctx: Context<'_>, path: &Path) -> Result<ExperimentPlan, ConfigError> {
        let pairs: Vec<(String, String)> = ctx
            .registry
            .pairs()
            .iter()
            .map(|p| (p.formulation.to_string(), p.optimizer.to_string()))
            .collect();
        let config = ExperimentConfig::load(path)?.with_pairs(&pairs, path)?;
        ExperimentPlan::new(ctx, config, path)
    }

    /// Checks `config` (read from `path`) against `ctx`'s registry and the scenes and plans it.
    /// The error names the file and the key at fault: a solver's (`driver`, `drivers[i]`,
    /// `shadow[i]`), `scene.kind`, or `scene.params / sweep` for a run whose parameters the
    /// scene refuses. An unexpanded `[every_pair]` is refused (load with `Lab::experiment`).
    pub fn new(
        ctx: Context<'_>,
        config: ExperimentConfig,
        path: &Path,
    ) -> Result<ExperimentPlan, ConfigError> {
        if config.every_pair.is_some() {
            return Err(invalid(
                path,
                "every_pair",
                "is not expanded: load the config with `Lab::experiment` (or call \
                 `ExperimentConfig::with_pairs` with the registry's pairs) before running it"
                    .into(),
            ));
        }
        let mut solvers = config
            .solver_keys()
            .into_iter()
            .map(|(key, spec)| {
                let solver = ctx
                    .registry
                    .resolve(spec)
                    .map_err(|e| invalid(path, &key, e.to_string()))?
                    .with_default_time_limit(ctx.settings.sweep_time_limit);
                let model = ctx
                    .registry
                    .model_of(&spec.formulation.name, &spec.optimizer.name)
                    .map_or("", |m| m.as_str());
                Ok(PlannedSolver { solver, model })
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        let n_drivers = config.driver_specs().len();
        if n_drivers == 0 {
            return Err(invalid(
                path,
                "driver",
                "is missing: a run needs a driver".into(),
            ));
        }
        let shadows = solvers.split_off(n_drivers);
        let kind = SceneKind::from_name(&config.scene.kind)
            .map_err(|e| invalid(path, "scene.kind", e.to_string()))?;
        let runs = config
            .runs(path)?
            .into_iter()
            .map(|spec| {
                let scene = kind
                    .parse(&spec.params)
                    .map_err(|e| invalid(path, "scene.params / sweep", e.to_string()))?;
                Ok(PlannedRun { spec, scene })
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        Ok(ExperimentPlan {
            config,
            path: path.into(),
            drivers: solvers,
            shadows,
            runs,
        })
    }

    /// The config the plan was made from.
    pub fn config(&self) -> &ExperimentConfig {
        &self.config
    }

    /// The file the config was read from (errors name it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every run of the sweep, in run order.
    pub fn runs(&self) -> &[PlannedRun] {
        &self.runs
    }

    /// The solver that advances `run`.
    pub fn driver(&self, run: &PlannedRun) -> &PlannedSolver {
        &self.drivers[run.spec.driver]
    }

    /// `run`'s solvers with their roles: its driver first, then the config's shadows.
    pub fn solvers(&self, run: &PlannedRun) -> Vec<(&PlannedSolver, &'static str)> {
        std::iter::once((self.driver(run), steps::ROLE_DRIVER))
            .chain(self.shadows.iter().map(|s| (s, steps::ROLE_SHADOW)))
            .collect()
    }
}
