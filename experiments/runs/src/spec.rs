//! A solver as configs and the command line name it: a formulation and an optimizer, each
//! with its options, plus tolerances, budgets, the start and the layout. Plain data: the lab's
//! registry (`contactlab_lab::registry`) resolves a spec into a solver and refuses names,
//! pairings and options it does not know.

use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// How a solve's unknowns are initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// The formulation's own default: the sticking start for `implicit-ncp` and `mncp`
    /// (Todorov section III-F), zero impulses otherwise.
    #[default]
    Default,
    /// All unknowns zero.
    Zero,
    /// The caller's previous solution, mapped onto this step's contacts (falls back to the
    /// default start for contacts without one).
    Warm,
}

/// A plugin by name with its options: `"min-map"`, or in TOML
/// `{ name = "min-map", theta0_deg = 45.0 }` (the options are the plugin's own, checked when
/// the spec is resolved).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginChoice {
    /// The plugin's name.
    pub name: String,
    /// Its options (those not given take their defaults).
    pub options: Map<String, Value>,
}

impl PluginChoice {
    /// A plugin by name with default options.
    pub fn named(name: &str) -> PluginChoice {
        PluginChoice {
            name: name.into(),
            options: Map::new(),
        }
    }

    /// Sets one option.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> PluginChoice {
        self.options.insert(key.into(), value.into());
        self
    }

    /// An option's value, if given.
    pub fn option(&self, key: &str) -> Option<&Value> {
        self.options.get(key)
    }
}

impl Serialize for PluginChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.options.is_empty() {
            s.serialize_str(&self.name)
        } else {
            let mut m = Map::new();
            m.insert("name".into(), Value::String(self.name.clone()));
            m.extend(self.options.clone());
            Value::Object(m).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for PluginChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(name) => Ok(PluginChoice::named(&name)),
            Value::Object(mut m) => match m.remove("name") {
                Some(Value::String(name)) => Ok(PluginChoice { name, options: m }),
                _ => Err(D::Error::custom(
                    "a plugin with options is a table with a string `name`, e.g. { name = \"min-map\", theta0_deg = 45.0 }",
                )),
            },
            other => Err(D::Error::custom(format!(
                "expected a plugin name or a table with `name` and options, found {other}"
            ))),
        }
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn default_tol() -> f64 {
    1e-8
}
fn default_max_iter() -> u64 {
    100
}

/// A fully specified solver: formulation and optimizer (each with its options), tolerances,
/// time limit and start. This is what experiment configs list and what `contactlab solve`
/// builds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// A label for tables and plots (defaults to `formulation+optimizer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The formulation.
    pub formulation: PluginChoice,
    /// The optimizer (driver).
    pub optimizer: PluginChoice,
    /// The run's tolerance: the driver's stopping tolerance
    /// ([`SolveOptions::stop_tol`](contactlab_core::SolveOptions::stop_tol), in the driver's own
    /// measure) and the shared ruler's acceptance threshold on the natural-map residual
    /// ([`judge`](contactlab_core::plugin::judge)'s `accept_tol`), set to the same number.
    #[serde(default = "default_tol")]
    pub tol: f64,
    /// Iteration budget (per attempt when restarting).
    #[serde(default = "default_max_iter")]
    pub max_iter: u64,
    /// Relative tolerance of drivers on a merit with its own scale (SAP's eq. 26: converged
    /// when `|D grad| <= tol + rel_tol max(|D p|, |D j_c|)`); 0 by default.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rel_tol: f64,
    /// Wall-clock limit of one solve in seconds (start and restarts included); every driver
    /// honours it and stops with status `timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<f64>,
    /// Initial point.
    #[serde(default)]
    pub start: Start,
    /// Solve each island of touching bodies separately (on by default; `false` solves the
    /// whole problem at once, to measure what islands gain).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub islands: bool,
    /// With `islands`, problems of fewer contacts are solved whole (default: the
    /// formulation's measured threshold, `contactlab_core::islands::WHOLE_BELOW_CONTACTS` for
    /// most; 0 splits every problem, to measure islands themselves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_below: Option<u64>,
    /// Keep `W` dense (off by default: `W` is kept as the 3x3 blocks of contact pairs that
    /// share a body; formulations that need dense linear algebra densify one island).
    #[serde(default, skip_serializing_if = "is_false")]
    pub dense: bool,
}

impl SolverSpec {
    /// A spec with default options.
    pub fn new(formulation: &str, optimizer: &str, tol: f64, max_iter: u64) -> SolverSpec {
        SolverSpec {
            label: None,
            formulation: PluginChoice::named(formulation),
            optimizer: PluginChoice::named(optimizer),
            tol,
            max_iter,
            rel_tol: 0.0,
            time_limit: None,
            start: Start::Default,
            islands: true,
            whole_below: None,
            dense: false,
        }
    }

    /// The label used in tables: `label`, or `formulation+optimizer`.
    pub fn name(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| format!("{}+{}", self.formulation.name, self.optimizer.name))
    }

    /// Checks the numbers every spec has (tolerances, time limit); the message names the
    /// field. Names and options are the registry's to check (`contactlab_lab`).
    pub fn check_numbers(&self) -> Result<(), String> {
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(format!("tol must be a positive number, got {}", self.tol));
        }
        if !(self.rel_tol >= 0.0 && self.rel_tol.is_finite()) {
            return Err(format!(
                "rel_tol must be a nonnegative number, got {}",
                self.rel_tol
            ));
        }
        if let Some(t) = self.time_limit {
            if !(t > 0.0 && t.is_finite()) {
                return Err(format!(
                    "time_limit must be a positive number of seconds, got {t}"
                ));
            }
            // The lab makes it a Duration, whose range ends near 1.8e19 s.
            if Duration::try_from_secs_f64(t).is_err() {
                return Err(format!(
                    "time_limit is too large, got {t} s (at most {:e})",
                    Duration::MAX.as_secs_f64()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_choices_read_a_name_or_a_tagged_table() {
        let spec: SolverSpec = toml::from_str(
            "formulation = { name = \"mlcp-fb\", n_f = 6 }\noptimizer = \"lm\"\ntime_limit = 0.5",
        )
        .unwrap();
        assert_eq!(spec.formulation.name, "mlcp-fb");
        assert_eq!(spec.formulation.option("n_f"), Some(&Value::from(6)));
        assert_eq!(spec.optimizer, PluginChoice::named("lm"));
        assert_eq!(spec.time_limit, Some(0.5));
        let e = toml::from_str::<SolverSpec>("formulation = { n_f = 6 }\noptimizer = \"lm\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`name`"), "{e}");
        let back: SolverSpec =
            serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
    }
}
