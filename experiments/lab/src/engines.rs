//! MuJoCo and Drake on the same scenes, measured beside our runs: the project's Python harness
//! (`experiments/peers/`; `pip install mujoco drake numpy scipy`) run as a child process, its
//! JSON read back.
//!
//! [`run_engines`] runs an other-engine config (`kind = "engines"`,
//! [`contactlab_runs::engines`]) and keeps the harness's result as rows: a run with provenance
//! like any other, which a report sets beside ours. Where the harness cannot run, the run says
//! why in a `skipped` column instead of failing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use contactlab_runs::engines::{EnginesConfig, NO_PEERS};
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
            EnginesOutput::Skipped(why) => df!("skipped" => [why.as_str()]),
        }
    }
}

/// Whether Python imports `module`.
pub fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the harness of `cfg` with its arguments (those of `when_missing` added for each
/// module Python lacks) and reads its JSON result back as rows. `CONTACTLAB_NO_PEERS`, a
/// missing Python or a failing harness give [`EnginesOutput::Skipped`] with the reason.
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
    for (module, extra) in &cfg.when_missing {
        if !python_has(module) {
            args.extend(extra.iter().map(|a| cfg.substitute(a, &out, root)));
        }
    }
    let run = Command::new("python3")
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
    Ok(EnginesOutput::Measured(
        records_frame(&json, &cfg.records)
            .map_err(|e| RunError::Problem(format!("{}: {e}", cfg.script.display())))?,
    ))
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
