//! MuJoCo and Drake on the same scenes, measured beside our runs: the project's Python harness
//! (`experiments/peers/`; `pip install mujoco drake numpy scipy`) run as a child process, its
//! JSON read back.
//!
//! [`run_engines`] runs an other-engine config (`kind = "engines"`,
//! [`contactlab_runs::engines`]) and keeps the harness's result as rows: a run with provenance
//! like any other, which a report sets beside ours. Where the harness cannot run, the run says
//! why in a `skipped` column instead of failing.
//!
//! A module of the config's `[when_missing]` is missing when Python does not import it, or when
//! `CONTACTLAB_PEERS_WITHOUT` (a comma-separated list, [`peers_without`]) names it or a package
//! holding it: the lab then adds the config's arguments for it, and every row gets a column
//! `missing_modules` that says which modules were missing and why ([`missing_module`]). The
//! modules `CONTACTLAB_PEERS_WITHOUT` names are hidden from the harness too (and from the
//! import check): a folder of stubs that raise `ModuleNotFoundError` goes first on the child's
//! `PYTHONPATH`, so a harness that imports one anyway fails as on a machine without it. A
//! module built into the interpreter cannot be hidden; a dotted name (`pydrake.all`) counts as
//! missing for `[when_missing]` but hides nothing from the harness.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use contactlab_runs::engines::{EnginesConfig, NO_PEERS, PEERS_WITHOUT};
use contactlab_runs::schema::engines;
use polars::prelude::*;
use serde_json::Value;

use crate::runner::RunError;

/// What an other-engine run produced: the rows, or why the harness could not run.
#[derive(Debug, Clone)]
pub enum EnginesOutput {
    /// The harness's records, flattened.
    Measured(DataFrame),
    /// Why it did not run.
    Skipped(String),
}

impl EnginesOutput {
    /// The rows to write: the records, or one row whose `skipped` says why.
    pub fn frame(&self) -> PolarsResult<DataFrame> {
        match self {
            EnginesOutput::Measured(df) => Ok(df.clone()),
            EnginesOutput::Skipped(why) => df!(engines::SKIPPED => [why.as_str()]),
        }
    }
}

/// Whether Python imports `module`.
pub fn python_has(module: &str) -> bool {
    python_has_with(module, &Hidden::none())
}

/// Whether `python3` with the modules of `hidden` hidden imports `module`.
fn python_has_with(module: &str, hidden: &Hidden) -> bool {
    hidden
        .python()
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The Python modules `CONTACTLAB_PEERS_WITHOUT` names: its comma-separated items, trimmed,
/// empty ones dropped (none when it is unset).
pub fn peers_without() -> Vec<String> {
    parse_peers_without(&std::env::var(PEERS_WITHOUT).unwrap_or_default())
}

/// The items of a `CONTACTLAB_PEERS_WITHOUT` value.
fn parse_peers_without(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// Why an engine run treats Python `module` as missing, or `None` when it is there:
/// `hidden by CONTACTLAB_PEERS_WITHOUT` when `without` names it or a package holding it
/// (`pydrake` hides `pydrake.all`), `does not import` when Python fails to import it.
pub fn missing_module(module: &str, without: &[String]) -> Option<String> {
    missing_module_with(module, without, &Hidden::none())
}

/// [`missing_module`], the import tried with `hidden`'s modules hidden.
fn missing_module_with(module: &str, without: &[String], hidden: &Hidden) -> Option<String> {
    let named = without.iter().any(|w| {
        module == w
            || module
                .strip_prefix(w.as_str())
                .is_some_and(|rest| rest.starts_with('.'))
    });
    if named {
        Some(format!("hidden by {PEERS_WITHOUT}"))
    } else if !python_has_with(module, hidden) {
        Some("does not import".into())
    } else {
        None
    }
}

/// A folder of stub packages that make Python fail to import the modules
/// `CONTACTLAB_PEERS_WITHOUT` names, put first on the child's `PYTHONPATH`; removed when
/// dropped.
#[derive(Debug)]
struct Hidden {
    /// The stubs' folder; `None` when nothing is hidden.
    dir: Option<std::path::PathBuf>,
}

impl Hidden {
    /// Nothing hidden.
    fn none() -> Hidden {
        Hidden { dir: None }
    }

    /// Stubs for the top-level names of `modules` (valid Python identifiers without a dot; the
    /// others hide nothing), in a fresh folder under the system's temporary one.
    fn of(modules: &[String]) -> std::io::Result<Hidden> {
        let names: Vec<&String> = modules
            .iter()
            .filter(|m| {
                let mut c = m.chars();
                c.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    && c.all(|c| c.is_alphanumeric() || c == '_')
            })
            .collect();
        if names.is_empty() {
            return Ok(Hidden::none());
        }
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "contactlab-peers-without-{}-{n}",
            std::process::id()
        ));
        let hidden = Hidden {
            dir: Some(dir.clone()),
        };
        for name in names {
            let package = dir.join(name);
            std::fs::create_dir_all(&package)?;
            std::fs::write(
                package.join("__init__.py"),
                format!(
                    "# {PEERS_WITHOUT} names `{name}`: this run plays a machine without it.\n\
                     raise ModuleNotFoundError(\"No module named '{name}' (hidden by \
                     {PEERS_WITHOUT})\", name=\"{name}\")\n"
                ),
            )?;
        }
        Ok(hidden)
    }

    /// `python3`, with the stubs first on its `PYTHONPATH` when something is hidden.
    fn python(&self) -> Command {
        let mut c = Command::new("python3");
        if let Some(dir) = &self.dir {
            let mut paths = vec![dir.clone()];
            if let Some(old) = std::env::var_os("PYTHONPATH") {
                paths.extend(std::env::split_paths(&old));
            }
            if let Ok(joined) = std::env::join_paths(paths) {
                c.env("PYTHONPATH", joined);
            }
        }
        c
    }
}

impl Drop for Hidden {
    /// Removes the stubs' folder.
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs the harness of `cfg` with its arguments (those of `when_missing` added for each
/// module that is missing, [`missing_module`], named in a `missing_modules` column of every
/// row) and reads its JSON result back as rows. `CONTACTLAB_NO_PEERS`, a missing Python or a
/// failing harness give [`EnginesOutput::Skipped`] with the reason; the modules
/// `CONTACTLAB_PEERS_WITHOUT` names are missing and hidden from the harness.
pub fn run_engines(root: &Path, cfg: &EnginesConfig) -> Result<EnginesOutput, RunError> {
    if std::env::var_os(NO_PEERS).is_some() {
        return Ok(EnginesOutput::Skipped(format!("{NO_PEERS} is set")));
    }
    let out = cfg
        .data_path(root)
        .with_file_name(format!("{}_engine", cfg.name));
    std::fs::create_dir_all(&out)?;
    let mut args: Vec<String> = cfg
        .args
        .iter()
        .map(|a| cfg.substitute(a, &out, root))
        .collect();
    let without = peers_without();
    let hidden = Hidden::of(&without)?;
    let mut missing = Vec::new();
    for (module, extra) in &cfg.when_missing {
        if let Some(why) = missing_module_with(module, &without, &hidden) {
            args.extend(extra.iter().map(|a| cfg.substitute(a, &out, root)));
            missing.push(format!("{module} ({why})"));
        }
    }
    let run = hidden
        .python()
        .arg(root.join(&cfg.script))
        .args(&args)
        .output();
    let o = match run {
        Err(e) => {
            return Ok(EnginesOutput::Skipped(format!(
                "python3 could not start: {e}"
            )))
        }
        Ok(o) => o,
    };
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err.lines().last().unwrap_or("no message").trim();
        return Ok(EnginesOutput::Skipped(format!(
            "{} failed ({last}); `pip install mujoco drake numpy scipy`",
            cfg.script.display()
        )));
    }
    let text = if cfg.result.is_empty() {
        String::from_utf8_lossy(&o.stdout).into_owned()
    } else {
        let file = out.join(cfg.substitute(&cfg.result, &out, root));
        std::fs::read_to_string(&file)
            .map_err(|e| RunError::Problem(format!("{}: {e}", file.display())))?
    };
    let json: Value = serde_json::from_str(&text).map_err(|e| {
        RunError::Problem(format!("{}: output unreadable: {e}", cfg.script.display()))
    })?;
    let mut frame = records_frame(&json, &cfg.records)
        .map_err(|e| RunError::Problem(format!("{}: {e}", cfg.script.display())))?;
    if !missing.is_empty() {
        let note = missing.join("; ");
        frame.with_column(Column::new(
            "missing_modules".into(),
            vec![note.as_str(); frame.height()],
        ))?;
    }
    Ok(EnginesOutput::Measured(frame))
}

/// An object's scalar fields, nested objects flattened with `_` (lists as their JSON text).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Array(_) => {
            out.insert(prefix.to_string(), Value::String(v.to_string()));
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// The harness's records as a DataFrame: the list at `records` (the top level when empty),
/// each object flattened; the top object's other scalars repeat on every row. A column whose
/// values are all numbers (or null) is Float64, one of booleans Boolean, any other String.
pub fn records_frame(json: &Value, records: &str) -> Result<DataFrame, String> {
    let (list, top) = if records.is_empty() {
        (
            json.as_array().ok_or("the result is not a list")?,
            BTreeMap::new(),
        )
    } else {
        let list = json[records]
            .as_array()
            .ok_or_else(|| format!("no list `{records}` in the result"))?;
        let mut top = BTreeMap::new();
        if let Value::Object(m) = json {
            for (k, v) in m.iter().filter(|(k, v)| *k != records && !v.is_array()) {
                flatten(k, v, &mut top);
            }
        }
        (list, top)
    };
    let rows: Vec<BTreeMap<String, Value>> = list
        .iter()
        .map(|r| {
            let mut m = top.clone();
            flatten("", r, &mut m);
            m
        })
        .collect();
    let mut names: Vec<&String> = Vec::new();
    for r in &rows {
        for k in r.keys() {
            if !names.contains(&k) {
                names.push(k);
            }
        }
    }
    let columns: Vec<Column> = names
        .iter()
        .map(|name| {
            let values: Vec<Option<&Value>> = rows.iter().map(|r| r.get(*name)).collect();
            let present = || values.iter().flatten().filter(|v| !v.is_null());
            let col: PlSmallStr = name.as_str().into();
            if present().all(|v| v.is_number()) {
                Column::new(
                    col,
                    values
                        .iter()
                        .map(|v| v.and_then(Value::as_f64))
                        .collect::<Vec<_>>(),
                )
            } else if present().all(|v| v.is_boolean()) {
                Column::new(
                    col,
                    values
                        .iter()
                        .map(|v| v.and_then(Value::as_bool))
                        .collect::<Vec<_>>(),
                )
            } else {
                Column::new(
                    col,
                    values
                        .iter()
                        .map(|v| {
                            v.filter(|v| !v.is_null()).map(|v| match v {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            })
                        })
                        .collect::<Vec<_>>(),
                )
            }
        })
        .collect();
    DataFrame::new(rows.len(), columns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_without_names_modules_and_the_packages_they_hold() {
        assert_eq!(
            parse_peers_without(" pydrake, ,mujoco,"),
            ["pydrake", "mujoco"]
        );
        assert!(parse_peers_without("").is_empty());
        let without = parse_peers_without("pydrake");
        let hidden = format!("hidden by {PEERS_WITHOUT}");
        assert_eq!(missing_module("pydrake", &without), Some(hidden.clone()));
        assert_eq!(missing_module("pydrake.all", &without), Some(hidden));
        // A name that merely starts like a listed one is not hidden by it.
        assert_eq!(
            missing_module("pydrakes_surely_not_installed", &without).as_deref(),
            Some("does not import")
        );
    }

    #[test]
    fn records_flatten_into_typed_columns_with_the_top_scalars_repeated() {
        let json: Value = serde_json::from_str(
            r#"{"mujoco_version": "4.0.0", "problems": [
                {"problem": "a", "step": {"median_ms": 0.25}, "ok": true, "ncon": 3},
                {"problem": "b", "step": {"median_ms": 0.5}, "ok": false, "extra": null}
            ]}"#,
        )
        .unwrap();
        let df = records_frame(&json, "problems").unwrap();
        assert_eq!(df.height(), 2);
        let f = |c: &str| df.column(c).unwrap().f64().unwrap().get(1);
        assert_eq!(f("step_median_ms"), Some(0.5));
        assert_eq!(f("ncon"), None, "absent in the second record");
        let v = df.column("mujoco_version").unwrap().str().unwrap().get(1);
        assert_eq!(v, Some("4.0.0"));
        assert_eq!(df.column("ok").unwrap().bool().unwrap().get(0), Some(true));
        let list: Value =
            serde_json::from_str(r#"[{"engine": "drake", "step": {"median_ms": 4}}]"#).unwrap();
        let df = records_frame(&list, "").unwrap();
        assert_eq!(
            df.column("step_median_ms").unwrap().f64().unwrap().get(0),
            Some(4.0)
        );
        assert!(records_frame(&json, "nothing")
            .unwrap_err()
            .contains("nothing"));
        assert!(records_frame(&json, "").unwrap_err().contains("not a list"));
    }
}
