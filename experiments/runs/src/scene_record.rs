//! What each run of an experiment records about its scene in the run's meta (`"scenes"`; the
//! format is described in [`crate::store`]): the parameters with every default filled in and
//! the constants that follow from them, non-finite numbers spelled as TOML spells them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::json;

use crate::error::StoreError;

/// The meta's `"scenes"` as [`SceneRecord::to_json`] writes each record.
pub(crate) fn scenes_to_json<S: serde::Serializer>(
    scenes: &[SceneRecord],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(scenes.iter().map(SceneRecord::to_json))
}

/// The meta's `"scenes"` read back, sorted by run; records without a run are dropped.
pub(crate) fn scenes_from_json<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<SceneRecord>, D::Error> {
    let values = Option::<Vec<serde_json::Value>>::deserialize(d)?.unwrap_or_default();
    Ok(merged_scenes(
        values.iter().filter_map(SceneRecord::from_json),
    ))
}

/// Scene records sorted by run (stable: a run's record keeps its place among equals).
pub(crate) fn merged_scenes(records: impl Iterator<Item = SceneRecord>) -> Vec<SceneRecord> {
    let mut v: Vec<SceneRecord> = records.collect();
    v.sort_by_key(|r| r.run);
    v
}

/// What one run of an experiment recorded about its scene (the meta's `"scenes"`, module
/// documentation): the scene's parameters with every default filled in, and the named
/// constants that follow from them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SceneRecord {
    /// Run index in the expanded sweep.
    pub run: u64,
    /// The scene's parameters as its `[scene.params]` table would give them, every default
    /// filled in.
    pub parameters: toml::Table,
    /// Numbers that follow from the parameters: the exact answer's constants where the scene
    /// has a closed form (with an `_exact` suffix), or derived geometry.
    pub constants: BTreeMap<String, f64>,
}

impl SceneRecord {
    /// The record as the meta writes it: `{"run", "parameters", "constants"}`, non-finite
    /// numbers as the strings `"inf"`, `"-inf"`, `"nan"`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "run": self.run,
            "parameters": toml_to_json(&toml::Value::Table(self.parameters.clone())),
            "constants": self
                .constants
                .iter()
                .map(|(k, v)| (k.clone(), float_to_json(*v)))
                .collect::<serde_json::Map<_, _>>(),
        })
    }

    /// Reads a record written by [`SceneRecord::to_json`] (`None` without a `run`).
    pub fn from_json(v: &serde_json::Value) -> Option<SceneRecord> {
        let parameters = match v.get("parameters").map(json_to_toml) {
            Some(Some(toml::Value::Table(t))) => t,
            _ => toml::Table::new(),
        };
        let constants = v
            .get("constants")
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), json_number(v)?)))
            .collect();
        Some(SceneRecord {
            run: v.get("run")?.as_u64()?,
            parameters,
            constants,
        })
    }

    /// The number parameter `key` (a float, or an integer as a float).
    pub fn number(&self, key: &str) -> Result<f64, StoreError> {
        self.parameters
            .get(key)
            .and_then(toml_number)
            .ok_or_else(|| self.missing("number parameter", key))
    }

    /// The array-of-numbers parameter `key` (a vector such as the sphere's `v0`).
    pub fn numbers(&self, key: &str) -> Result<Vec<f64>, StoreError> {
        self.parameters
            .get(key)
            .and_then(toml::Value::as_array)
            .and_then(|a| a.iter().map(toml_number).collect())
            .ok_or_else(|| self.missing("array-of-numbers parameter", key))
    }

    /// The integer parameter `key` (a count such as the pendulum's `n_links`).
    pub fn integer(&self, key: &str) -> Result<i64, StoreError> {
        self.parameters
            .get(key)
            .and_then(toml::Value::as_integer)
            .ok_or_else(|| self.missing("integer parameter", key))
    }

    /// The constant `key`.
    pub fn constant(&self, key: &str) -> Result<f64, StoreError> {
        self.constants
            .get(key)
            .copied()
            .ok_or_else(|| self.missing("constant", key))
    }

    fn missing(&self, what: &str, key: &str) -> StoreError {
        StoreError::NotRecorded(format!(
            "run {}: the meta records no scene {what} `{key}` (run the experiment again if it \
             was written before scenes recorded it)",
            self.run
        ))
    }
}

/// A number as JSON: itself when finite, else `"inf"`, `"-inf"` or `"nan"`.
fn float_to_json(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("nan")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// A TOML value as JSON (non-finite floats as strings; datetimes as their TOML text).
fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => json!(s),
        toml::Value::Integer(i) => json!(i),
        toml::Value::Float(x) => float_to_json(*x),
        toml::Value::Boolean(b) => json!(b),
        toml::Value::Datetime(d) => json!(d.to_string()),
        toml::Value::Array(a) => a.iter().map(toml_to_json).collect(),
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// A JSON value as TOML (`None` for `null`, which TOML lacks; the strings of
/// [`float_to_json`] as their numbers).
fn json_to_toml(v: &serde_json::Value) -> Option<toml::Value> {
    Some(match v {
        serde_json::Value::Null => return None,
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => {
            number_text(s).map_or_else(|| toml::Value::String(s.clone()), toml::Value::Float)
        }
        serde_json::Value::Array(a) => {
            toml::Value::Array(a.iter().filter_map(json_to_toml).collect())
        }
        serde_json::Value::Object(o) => toml::Value::Table(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}

/// A number spelled as [`float_to_json`] writes it.
fn number_text(s: &str) -> Option<f64> {
    match s {
        "inf" | "+inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" | "+nan" | "-nan" => Some(f64::NAN),
        _ => None,
    }
}

fn json_number(v: &serde_json::Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str().and_then(number_text))
}

fn toml_number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Float(x) => Some(*x),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}
