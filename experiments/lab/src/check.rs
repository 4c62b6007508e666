//! The checks a config's schema cannot make, against a registry and the scenes: whether its
//! solvers' names, pairings and options exist, whether its scene exists and takes its
//! parameters (every run's, sweep values applied), whether a matrix's `skip` names pairs,
//! whether a single-contact config's methods exist. Every error names the file and the key at
//! fault.

use contactlab_runs::RunConfig;
use std::path::Path;

use contactlab_runs::config::{ConfigError, ExperimentConfig};
use contactlab_runs::matrix::MatrixConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::single_contact::SingleContactConfig;
use contactlab_runs::SolverSpec;
use contactlab_scenes::SceneKind;

use crate::registry::{Pair, Registry};
use crate::single_contact;

fn invalid(path: &Path, key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.into(),
        key: key.into(),
        message,
    }
}

fn solver(
    registry: &Registry,
    path: &Path,
    key: &str,
    spec: &SolverSpec,
) -> Result<(), ConfigError> {
    registry
        .check(spec)
        .map_err(|e| invalid(path, key, e.to_string()))
}

/// Reads an experiment config, expands its `[every_pair]` over `registry`'s compatible pairs
/// and checks it ([`check_experiment`]).
pub fn experiment(registry: &Registry, path: &Path) -> Result<ExperimentConfig, ConfigError> {
    let pairs: Vec<(String, String)> = registry
        .pairs()
        .iter()
        .map(|p| (p.formulation.to_string(), p.optimizer.to_string()))
        .collect();
    let cfg = ExperimentConfig::load(path)?.with_pairs(&pairs, path)?;
    check_experiment(registry, &cfg, path)?;
    Ok(cfg)
}

/// Checks every solver of an experiment config against `registry`, its scene's kind, and every
/// run's scene parameters.
pub fn check_experiment(
    registry: &Registry,
    cfg: &ExperimentConfig,
    path: &Path,
) -> Result<(), ConfigError> {
    if cfg.every_pair.is_some() {
        return Err(invalid(
            path,
            "every_pair",
            "is not expanded: load the config with `Lab::experiment` (or call \
             `ExperimentConfig::with_pairs` with the registry's pairs) before running it"
                .into(),
        ));
    }
    for (key, spec) in cfg.solver_keys() {
        solver(registry, path, &key, spec)?;
    }
    let kind = SceneKind::from_name(&cfg.scene.kind)
        .map_err(|e| invalid(path, "scene.kind", e.to_string()))?;
    for run in cfg.runs(path)? {
        kind.check_params(&run.params)
            .map_err(|e| invalid(path, "scene.params / sweep", e.to_string()))?;
    }
    Ok(())
}

/// Checks a matrix's `skip` and `only` against `registry`'s pairs.
pub fn check_matrix(
    registry: &Registry,
    cfg: &MatrixConfig,
    path: &Path,
) -> Result<(), ConfigError> {
    let pairs: Vec<String> = registry.pairs().iter().map(Pair::label).collect();
    for (key, listed) in [("skip", &cfg.skip), ("only", &cfg.only)] {
        if let Some(s) = listed.iter().find(|s| !pairs.contains(s)) {
            return Err(invalid(
                path,
                key,
                format!("`{s}` is not a compatible pair; `contactlab list` names them"),
            ));
        }
    }
    Ok(())
}

/// The pairs a matrix runs: every compatible pair of `registry` (or those of `only`), in the
/// registry's order, less `skip`.
pub fn matrix_pairs(registry: &Registry, cfg: &MatrixConfig) -> Vec<Pair> {
    registry
        .pairs()
        .into_iter()
        .filter(|p| cfg.only.is_empty() || cfg.only.contains(&p.label()))
        .filter(|p| !cfg.skip.contains(&p.label()))
        .collect()
}

/// Checks every solver of a problem-set config against `registry`.
pub fn check_problems(
    registry: &Registry,
    cfg: &ProblemsConfig,
    path: &Path,
) -> Result<(), ConfigError> {
    for (i, spec) in cfg.solvers.iter().enumerate() {
        solver(registry, path, &format!("solvers[{i}]"), spec)?;
    }
    Ok(())
}

/// Checks a single-contact config against `registry` and the scenes: its simulations as an
/// experiment config ([`check_experiment`]: the driver, the scene, every run's parameters) and
/// its method names.
pub fn check_single_contact(
    registry: &Registry,
    cfg: &SingleContactConfig,
    path: &Path,
) -> Result<(), ConfigError> {
    check_experiment(registry, &cfg.simulation(), path)?;
    single_contact::methods(cfg, path).map(|_| ())
}
