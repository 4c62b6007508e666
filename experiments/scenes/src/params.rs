//! A scene's `[scene.params]` table and its typed config: [`parse_params`] reads the table
//! (unknown keys are errors that name the key), [`config_table`] writes a config back as one,
//! and [`check_ranges`] checks the numbers every config validates.

use crate::error::SceneError;

/// Deserializes a scene's `[scene.params]` table (sweep values applied) into its config type;
/// an unknown key or a value of the wrong type is an error naming the key.
pub fn parse_params<T: serde::de::DeserializeOwned>(params: &toml::Table) -> Result<T, SceneError> {
    serde_path_to_error::deserialize(toml::Value::Table(params.clone())).map_err(
        |e: serde_path_to_error::Error<toml::de::Error>| {
            let path = e.path().to_string();
            let message = e.into_inner().message().to_string();
            SceneError::Parse(if path == "." {
                message
            } else {
                format!("`{path}`: {message}")
            })
        },
    )
}

/// A scene's typed config as the TOML table it parses from, every field present (what
/// [`Scene::parameters`](crate::scene::Scene::parameters) returns; [`parse_params`] reads it back into the same config). Fields
/// that are `None` are left out; an integer beyond TOML's range is an error naming it.
pub fn config_table<T: serde::Serialize>(config: &T) -> Result<toml::Table, SceneError> {
    toml::Table::try_from(config).map_err(|e| SceneError::Parse(format!("parameters: {e}")))
}

/// Checks scene parameters' ranges: each of `positive` must be a finite number above zero,
/// each of `nonnegative` a finite number at least zero. The first offender names the error.
pub fn check_ranges(
    positive: &[(&'static str, f64)],
    nonnegative: &[(&'static str, f64)],
) -> Result<(), SceneError> {
    let bad = |key: &'static str, kind: &str, v: f64| SceneError::Param {
        key,
        message: format!("must be a {kind} number, got {v}"),
    };
    if let Some(&(key, v)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
        return Err(bad(key, "positive", v));
    }
    if let Some(&(key, v)) = nonnegative
        .iter()
        .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
    {
        return Err(bad(key, "nonnegative", v));
    }
    Ok(())
}
