//! Other-engine configs (`kind = "engines"`): MuJoCo and Drake on the same scenes or problems,
//! run by the project's Python harness (`experiments/peers/`) as a child process, its JSON
//! result kept as the run's rows. A comparison of times is only fair as a ratio measured in one
//! run on one machine, so a report compares a run of this kind with our run made beside it.
//!
//! ```toml
//! kind = "engines"
//! paper = "castro2022"
//! name = "peers"
//! script = "experiments/peers/bench.py"
//! # {out}: a folder for the harness's files; {name}: the config's name; {root}: the root.
//! args = ["--only", "clutter", "--nclutter", "40", "--out", "{out}", "--tag", "{name}"]
//! result = "bench_{name}.json"   # the harness's JSON, in {out}
//! records = ""                   # where the rows are: "" the JSON is a list of objects;
//!                                # a key: the list under it (the top's other scalars repeat)
//! [when_missing]                 # a Python module that may be absent, and what to add then
//! pydrake = ["--no-drake"]
//! ```
//!
//! Nested objects flatten into columns joined by `_` (`{"step": {"median_ms": 1}}` gives
//! `step_median_ms`). Where the harness cannot run (no Python, a missing package, or
//! `CONTACTLAB_NO_PEERS` set, as in CI), the run still writes its files: one row whose column
//! `skipped` says why, so that a report can say it and show published numbers instead.
//!
//! Where a module of `[when_missing]` is missing, the harness runs with the extra arguments and
//! every row gets a column `missing_modules` saying which and why (`pydrake (does not import)`).
//! `CONTACTLAB_PEERS_WITHOUT`, a comma-separated list of Python modules
//! (`CONTACTLAB_PEERS_WITHOUT=pydrake`), makes the lab treat them as missing although they are
//! installed, and hides them from the harness too: what a machine without them gets, reproduced
//! on one that has them (`CONTACTLAB_PEERS_WITHOUT=pydrake just reproduce fidelity`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{invalid, ConfigError, OutputSection, RunConfig};

/// The environment variable that skips every engine run (CI: no MuJoCo there).
pub const NO_PEERS: &str = "CONTACTLAB_NO_PEERS";

/// The environment variable naming Python modules (comma-separated) that engine runs treat as
/// missing although installed, to reproduce a machine without them (`pydrake`).
pub const PEERS_WITHOUT: &str = "CONTACTLAB_PEERS_WITHOUT";

/// A whole other-engine config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnginesConfig {
    /// Must be `"engines"`.
    pub kind: String,
    /// Paper key (its rows go to `data/runs/<paper>/<name>.parquet`).
    pub paper: String,
    /// The table or figure this run serves.
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// The harness script, relative to the root.
    pub script: PathBuf,
    /// Its arguments, with `{out}`, `{name}` and `{root}` substituted.
    #[serde(default)]
    pub args: Vec<String>,
    /// The JSON file the harness writes in `{out}` (`{name}` substituted); empty: its
    /// standard output is the JSON.
    #[serde(default)]
    pub result: String,
    /// Where the rows are in the JSON: empty for a top-level list, else the key of the list.
    #[serde(default)]
    pub records: String,
    /// Python modules that may be absent, with the arguments to add when one is.
    #[serde(default)]
    pub when_missing: BTreeMap<String, Vec<String>>,
    /// Output locations.
    #[serde(default)]
    pub output: OutputSection,
}

impl RunConfig for EnginesConfig {
    const KIND: &'static str = "engines";

    fn kind(&self) -> &str {
        &self.kind
    }

    /// The script is a Python file.
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        if self.script.extension().is_none_or(|e| e != "py") {
            return Err(invalid(
                path,
                "script",
                format!("must be a Python file, got {}", self.script.display()),
            ));
        }
        Ok(())
    }
}

impl EnginesConfig {
    /// `text` with `{out}`, `{name}` and `{root}` replaced.
    pub fn substitute(&self, text: &str, out: &Path, root: &Path) -> String {
        text.replace("{out}", &out.to_string_lossy())
            .replace("{name}", &self.name)
            .replace("{root}", &root.to_string_lossy())
    }

    /// The rows' file under `root`: `data/runs/<paper>/<name>.parquet` unless `[output]` says.
    pub fn data_path(&self, root: &Path) -> PathBuf {
        root.join(self.output.data.clone().unwrap_or_else(|| {
            PathBuf::from(format!("data/runs/{}/{}.parquet", self.paper, self.name))
        }))
    }
}
