//! A scratch workspace root for the end-to-end tests: a paper's shipped configs (cut down by
//! the test), `contactlab run` and `contactlab report` into it, and readers for what they wrote.

#![allow(dead_code)] // each test module uses its own part

use std::path::{Path, PathBuf};

use contactlab_experiments::cli::{self, CliError};
use contactlab_experiments::report::read_csv;
use contactlab_experiments::toml;
use contactlab_experiments::Lab;

/// A temporary root holding `experiments/configs/<paper>/`, `data/` and `reports/`; removed
/// when dropped.
pub struct Root {
    /// The root folder.
    pub path: PathBuf,
    /// The paper key.
    pub paper: String,
}

impl Root {
    /// A root for `paper`, unique to this test process, with the paper's report templates
    /// (they are the report's layout, not an input a test cuts down) and nothing else.
    pub fn new(paper: &str) -> Root {
        let path =
            std::env::temp_dir().join(format!("contactlab-e2e-{paper}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("experiments/configs").join(paper)).unwrap();
        let root = Root {
            path,
            paper: paper.to_string(),
        };
        let templates = root.shipped("templates");
        if templates.is_dir() {
            let into = root.config_dir().join("templates");
            std::fs::create_dir_all(&into).unwrap();
            for e in std::fs::read_dir(&templates).unwrap() {
                let from = e.unwrap().path();
                std::fs::copy(&from, into.join(from.file_name().unwrap())).unwrap();
            }
        }
        root
    }

    /// The root's config folder of the paper.
    pub fn config_dir(&self) -> PathBuf {
        self.path.join("experiments/configs").join(&self.paper)
    }

    fn shipped(&self, file: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs")
            .join(&self.paper)
            .join(file)
    }

    /// Copies shipped files of the paper's config folder (published numbers) unchanged.
    pub fn copy_shipped(&self, files: &[&str]) {
        for f in files {
            std::fs::copy(self.shipped(f), self.config_dir().join(f)).unwrap();
        }
    }

    /// Writes the shipped config `file` after `edit` (cutting its sweep down).
    pub fn config(&self, file: &str, edit: impl FnOnce(&mut toml::Table)) {
        let text = std::fs::read_to_string(self.shipped(file)).unwrap();
        let mut t: toml::Table = text.parse().unwrap();
        edit(&mut t);
        self.write(file, &toml::to_string(&t).unwrap());
    }

    /// Writes `text` to `file` of the config folder.
    pub fn write(&self, file: &str, text: &str) {
        std::fs::write(self.config_dir().join(file), text).unwrap();
    }

    /// The standard lab on this root.
    pub fn lab(&self) -> Lab {
        Lab::standard().with_root(&self.path)
    }

    /// `contactlab run` of config `file`.
    pub fn run(&self, file: &str) {
        let mut out = Vec::new();
        cli::run_config(
            &self.lab(),
            &self.config_dir().join(file),
            None,
            &[],
            &mut out,
        )
        .unwrap();
    }

    /// `contactlab report` of the paper: the README's text.
    pub fn report(&self) -> Result<String, CliError> {
        let mut out = Vec::new();
        cli::report(&self.paper, &self.path, false, &mut out)?;
        Ok(self.read("README.md"))
    }

    /// A file of `reports/<paper>/`.
    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path.join("reports").join(&self.paper).join(file)).unwrap()
    }

    /// A CSV of `reports/<paper>/`: header and rows.
    pub fn csv(&self, file: &str) -> (Vec<String>, Vec<Vec<String>>) {
        read_csv(&self.path.join("reports").join(&self.paper).join(file)).unwrap()
    }

    /// The steps DataFrame a run wrote.
    pub fn steps(&self, name: &str) -> contactlab_experiments::polars::prelude::DataFrame {
        contactlab_experiments::store::read_parquet(
            &self
                .path
                .join("data/runs")
                .join(&self.paper)
                .join(format!("{name}.parquet")),
        )
        .unwrap()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Sets `[section] key = value` of a config table.
pub fn set(t: &mut toml::Table, section: &str, key: &str, value: toml::Value) {
    t.entry(section)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap()
        .insert(key.to_string(), value);
}

/// A TOML array of floats.
pub fn floats(v: &[f64]) -> toml::Value {
    toml::Value::Array(v.iter().map(|x| toml::Value::Float(*x)).collect())
}

/// A TOML array of integers.
pub fn ints(v: &[i64]) -> toml::Value {
    toml::Value::Array(v.iter().map(|x| toml::Value::Integer(*x)).collect())
}

/// The column `name` of a CSV read by [`Root::csv`], per row.
pub fn column<'a>(csv: &'a (Vec<String>, Vec<Vec<String>>), name: &str) -> Vec<&'a str> {
    let i = csv
        .0
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", csv.0));
    csv.1.iter().map(|r| r[i].as_str()).collect()
}
