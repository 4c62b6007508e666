//! The checks a matrix or problem-set config's schema cannot make, against a registry: whether
//! its solvers' names, pairings and options exist, whether a matrix's `skip` and `only` name
//! pairs. (An experiment config is checked by planning it, [`crate::plan`].) Every error names
//! the file and the key at fault.

use std::path::Path;

use contactlab_runs::config::ConfigError;
use contactlab_runs::matrix::MatrixConfig;
use contactlab_runs::problems::ProblemsConfig;
use contactlab_runs::SolverSpec;

use crate::registry::{Pair, Registry};

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

/// Checks a matrix's `skip` and `only` against `registry`'s pairs.
pub fn check_matrix(
    registry: &Registry,
    cfg: &MatrixConfig,
    path: &Path,
) -> Result<(), ConfigError> {
    check_pairs(registry, &cfg.skip, &cfg.only, path)
}

/// Checks a run's `skip` and `only` lists against `registry`'s compatible pairs.
pub fn check_pairs(
    registry: &Registry,
    skip: &[String],
    only: &[String],
    path: &Path,
) -> Result<(), ConfigError> {
    let pairs: Vec<String> = registry.pairs().iter().map(Pair::label).collect();
    for (key, listed) in [("skip", skip), ("only", only)] {
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
    select_pairs(registry, &cfg.skip, &cfg.only)
}

/// Every compatible pair of `registry` (or those of `only`), in the registry's order, less
/// `skip`.
pub fn select_pairs(registry: &Registry, skip: &[String], only: &[String]) -> Vec<Pair> {
    registry
        .pairs()
        .into_iter()
        .filter(|p| only.is_empty() || only.contains(&p.label()))
        .filter(|p| !skip.contains(&p.label()))
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
