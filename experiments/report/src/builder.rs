//! The one report builder every paper's report is written with.
//!
//! [`Report`] loads a paper's runs (the steps DataFrame and the `.meta.json` of each config
//! under `data/runs/<paper>/`; a missing run is [`ReportError::MissingData`]), and writes
//! `reports/<paper>/README.md` in a fixed order: the title and what generated the page, a
//! provenance block (commit, rustc, build, CPU, threads and date of every run, read from its
//! meta), a timing table, the body the paper's module adds (text, [`Table`]s written once to
//! both markdown and CSV, plots), and the people-written findings
//! `experiments/configs/<paper>/findings.md` with their placeholders filled and checked
//! against the facts the module computed (syntax in [`super::findings`]).
//!
//! Every fact, with its value, is listed in `reports/<paper>/facts.md` beside the README.
//! Facts the builder adds for every loaded run, by the config's `name`:
//! `<name>.wall_seconds`, `<name>.solve_seconds`, `<name>.load_average` (they change from run
//! to run: quote them unchecked, `{{table1.wall_seconds}}`), and `<name>.threads`,
//! `<name>.runs`, `<name>.rows`, `<name>.steps`, `<name>.seeds`.

use contactlab_runs::RunConfig;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use super::findings::{fill, Facts, Fmt};
use super::plots::{Chart, Series};
use super::table::Table;
use super::{markdown_table, ReportError};
use contactlab_runs::config::ExperimentConfig;
use contactlab_runs::store::{read_run, run_exists, RunMeta, SceneRecord};
use contactlab_runs::Provenance;
use contactlab_runs::StoreError;

/// One config's run: the config, its steps DataFrame and its meta.
#[derive(Debug, Clone)]
pub struct RunData {
    /// The config file's name in the paper's config folder (`table1.toml`).
    pub file: String,
    /// The config.
    pub config: ExperimentConfig,
    /// The steps DataFrame's file.
    pub data_path: PathBuf,
    /// One row per solve.
    pub steps: DataFrame,
    /// What the run recorded about itself.
    pub meta: RunMeta,
}

impl RunData {
    /// A value of the scene the sweep's first run recorded in its meta (its parameters and
    /// constants, [`RunMeta::first_scene`]): `get` on that [`SceneRecord`], errors naming the
    /// config (`run_data.scene_value(|s| s.number("h"))`).
    pub fn scene_value<T>(
        &self,
        get: impl FnOnce(&SceneRecord) -> Result<T, StoreError>,
    ) -> Result<T, ReportError> {
        self.meta.first_scene().and_then(get).map_err(|e| match e {
            StoreError::NotRecorded(m) => {
                StoreError::NotRecorded(format!("{}: {m}", self.file)).into()
            }
            other => other.into(),
        })
    }
}

/// A report being written: see the module documentation.
#[derive(Debug)]
pub struct Report {
    paper: String,
    title: String,
    citation: String,
    root: PathBuf,
    config_dir: PathBuf,
    out: PathBuf,
    body: String,
    facts: Facts,
    runs: Vec<(String, RunMeta)>,
}

impl Report {
    /// Starts `reports/<paper>/` under `root`: `title` for the page, `citation` names the paper.
    pub fn new(root: &Path, paper: &str, title: &str, citation: &str) -> Report {
        Report {
            paper: paper.to_string(),
            title: title.to_string(),
            citation: citation.to_string(),
            root: root.to_path_buf(),
            config_dir: root.join("experiments/configs").join(paper),
            out: root.join("reports").join(paper),
            body: String::new(),
            facts: Facts::new(),
            runs: Vec::new(),
        }
    }

    /// `experiments/configs/<paper>/`: the configs, the published numbers and the findings.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// `reports/<paper>/`.
    pub fn out_dir(&self) -> &Path {
        &self.out
    }

    /// A file of the config folder (a published-numbers CSV).
    pub fn config_file(&self, file: &str) -> PathBuf {
        self.config_dir.join(file)
    }

    /// Loads the config `file` of the paper's config folder.
    pub fn config(&self, file: &str) -> Result<ExperimentConfig, ReportError> {
        ExperimentConfig::load(&self.config_dir.join(file))
            .map_err(|e| ReportError::Published(e.to_string()))
    }

    /// Loads config `file` and its run; `MissingData` when the run's data are absent.
    pub fn load(&mut self, file: &str) -> Result<RunData, ReportError> {
        let config = self.config(file)?;
        let data_path = config.data_path(&self.root);
        let (steps, meta) = self.load_data(&config.name, &data_path)?;
        self.add_config_facts(&config);
        Ok(RunData {
            file: file.to_string(),
            config,
            data_path,
            steps,
            meta,
        })
    }

    /// Loads the run output `data_path` (whole or sharded, [`read_run`]) and its meta, and
    /// adds the run's facts under `name`; `MissingData` when neither the file nor a shard of it
    /// exists.
    pub fn load_data(
        &mut self,
        name: &str,
        data_path: &Path,
    ) -> Result<(DataFrame, RunMeta), ReportError> {
        if !run_exists(data_path) {
            return Err(ReportError::MissingData(data_path.display().to_string()));
        }
        let steps = read_run(data_path)?;
        let meta = RunMeta::of_run(data_path);
        self.add_run_facts(name, &meta);
        self.runs.push((name.to_string(), meta.clone()));
        Ok((steps, meta))
    }

    /// [`Report::load`], or `None` when the config has not been run.
    pub fn load_if_run(&mut self, file: &str) -> Result<Option<RunData>, ReportError> {
        let config = self.config(file)?;
        if run_exists(&config.data_path(&self.root)) {
            self.load(file).map(Some)
        } else {
            Ok(None)
        }
    }

    fn add_run_facts(&mut self, n: &str, meta: &RunMeta) {
        let opt = |v: Option<f64>| v.unwrap_or(f64::NAN);
        let count = |v: Option<u64>| v.map_or(f64::NAN, |x| x as f64);
        self.facts
            .num(
                format!("{n}.wall_seconds"),
                opt(meta.wall_seconds),
                Fmt::fixed(1).unit(" s"),
            )
            .num(
                format!("{n}.solve_seconds"),
                opt(meta.solve_seconds),
                Fmt::fixed(1).unit(" s"),
            )
            .num(
                format!("{n}.load_average"),
                opt(meta.load_average),
                Fmt::fixed(1),
            )
            .num(format!("{n}.threads"), count(meta.threads), Fmt::int())
            .num(format!("{n}.runs"), count(meta.runs), Fmt::int())
            .num(format!("{n}.rows"), count(meta.rows), Fmt::int());
    }

    fn add_config_facts(&mut self, cfg: &ExperimentConfig) {
        let n = &cfg.name;
        self.facts
            .num(format!("{n}.steps"), cfg.scene.steps as f64, Fmt::int())
            .num(
                format!("{n}.seeds"),
                cfg.sweep.get("seed").map_or(1, Vec::len) as f64,
                Fmt::int(),
            );
    }

    /// The facts the findings may quote; the paper's module adds its own.
    pub fn facts(&mut self) -> &mut Facts {
        &mut self.facts
    }

    /// The facts so far.
    pub fn facts_ref(&self) -> &Facts {
        &self.facts
    }

    /// A heading of `level` (2 for `##`).
    pub fn heading(&mut self, level: usize, text: &str) {
        let _ = writeln!(self.body, "{} {text}\n", "#".repeat(level.max(1)));
    }

    /// A paragraph (or any markdown block), followed by a blank line.
    pub fn text(&mut self, text: &str) {
        let _ = writeln!(self.body, "{}\n", text.trim_end());
    }

    /// A table: its markdown into the page (when it has markdown columns) and its CSV file
    /// into the report folder (when it has one).
    pub fn table(&mut self, t: &Table) -> Result<(), ReportError> {
        if t.has_markdown() {
            self.body += &t.markdown();
            self.body += "\n";
        }
        t.write_csv(&self.out)
    }

    /// Draws `chart` of `series` to `file` in the report folder and shows it with `alt` text.
    pub fn plot(
        &mut self,
        file: &str,
        alt: &str,
        chart: &Chart,
        series: &[Series],
    ) -> Result<(), ReportError> {
        std::fs::create_dir_all(&self.out)?;
        chart.draw(&self.out.join(file), series)?;
        self.image(file, alt);
        Ok(())
    }

    /// Shows an image of the report folder (drawn by the caller into [`Report::out_dir`]).
    pub fn image(&mut self, file: &str, alt: &str) {
        let _ = writeln!(self.body, "![{alt}]({file})\n");
    }

    /// The provenance block: one row per loaded run, from its meta; runs that recorded none
    /// show what this report captures now, labelled so.
    fn provenance_block(&self) -> String {
        let now = Provenance::capture(&self.root);
        let mut rows = Vec::new();
        for (name, meta) in &self.runs {
            let (p, label) = match &meta.provenance {
                Some(p) => (p.clone(), format!("`{name}`")),
                None => (
                    now.clone(),
                    format!("`{name}` (not recorded by the run; report-time capture)"),
                ),
            };
            rows.push(vec![
                label,
                format!("`{}`", p.commit),
                p.rustc,
                p.build,
                format!("{} ({} CPUs)", p.cpu, p.cpus),
                p.threads.to_string(),
                p.date,
            ]);
        }
        let mut s = String::from("## Provenance\n\n");
        s += &markdown_table(
            &[
                "run data",
                "commit",
                "compiler",
                "build",
                "CPU",
                "threads",
                "run at (UTC)",
            ],
            &rows,
        );
        let _ = writeln!(
            s,
            "\nThis page was generated at {} (UTC) from commit `{}`.\n",
            now.date, now.commit
        );
        s
    }

    /// The timing table: per run, its size and times as the run recorded them.
    fn timing_block(&self) -> String {
        let opt = |v: Option<f64>, d: usize, unit: &str| {
            v.map_or("not recorded".into(), |x| format!("{x:.d$}{unit}"))
        };
        let int = |v: Option<u64>| v.map_or("-".into(), |x| x.to_string());
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|(name, m)| {
                vec![
                    format!("`{name}`"),
                    int(m.runs),
                    int(m.rows),
                    opt(m.wall_seconds, 1, " s"),
                    opt(m.solve_seconds, 1, " s"),
                    int(m.threads),
                    opt(m.load_average, 1, ""),
                ]
            })
            .collect();
        let mut s = String::from("## Timing\n\n");
        s += "Wall time of each sweep and the time inside the solvers summed over all solves, as the run \
              recorded them; the machine's 1-minute load average when the sweep ended (above the number \
              of cores, the wall time was shared with other work).\n\n";
        s += &markdown_table(
            &[
                "run data",
                "runs",
                "rows",
                "wall time",
                "in solvers",
                "threads",
                "load average",
            ],
            &rows,
        );
        s + "\n"
    }

    /// `facts.md`: every fact the findings may quote, with its value in its own format, for
    /// the people who write the findings.
    fn facts_page(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .facts
            .names()
            .filter_map(|n| self.facts.get(n).map(|f| vec![format!("`{n}`"), f.show()]))
            .collect();
        format!(
            "# Facts of the {} report\n\nGenerated with `README.md`: every value \
             `experiments/configs/{}/findings.md` may quote, as `{{{{name}}}}` (filled in this format) \
             or `{{{{name = value}}}}` (checked at the written precision).\n\n{}",
            self.paper,
            self.paper,
            markdown_table(&["name", "value"], &rows)
        )
    }

    /// Writes `facts.md`, then `README.md` (header, provenance, timing, body, filled findings)
    /// and returns its path; a stale or unknown findings placeholder fails before the README is
    /// written.
    pub fn finish(self) -> Result<PathBuf, ReportError> {
        // The facts first: when a finding is stale, they are what its author needs.
        std::fs::create_dir_all(&self.out)?;
        std::fs::write(self.out.join("facts.md"), self.facts_page())?;
        let findings_path = self.config_dir.join("findings.md");
        let findings = match std::fs::read_to_string(&findings_path) {
            Ok(text) => {
                let shown = Path::new("experiments/configs")
                    .join(&self.paper)
                    .join("findings.md");
                Some(fill(&text, &self.facts, &shown)?)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ReportError::Io(e)),
        };
        let mut md = String::new();
        let _ = writeln!(md, "# {}\n", self.title);
        let _ = writeln!(
            md,
            "Generated by `just reproduce {p}` (`contactlab reproduce {p}`) from the configs in \
             `experiments/configs/{p}/`; do not edit by hand. Paper: {}\n",
            self.citation,
            p = self.paper
        );
        md += &self.provenance_block();
        md += &self.timing_block();
        md += &self.body;
        if let Some(f) = findings {
            md += "\n";
            md += &f;
        }
        let path = self.out.join("README.md");
        std::fs::write(&path, md)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Cell;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("contactlab-builder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("experiments/configs/toy")).unwrap();
        d
    }

    #[test]
    fn a_report_has_header_provenance_timing_body_and_checked_findings() {
        let root = scratch("ok");
        std::fs::write(
            root.join("experiments/configs/toy/findings.md"),
            "## Findings\n\nThe answer is {{answer = 42}} and took {{wall}}.\n",
        )
        .unwrap();
        let mut r = Report::new(&root, "toy", "Toy: reproduction", "A. Author, *Toy*, 2024.");
        r.facts()
            .num("answer", 41.7, Fmt::int())
            .num("wall", 1.25, Fmt::fixed(2).unit(" s"));
        r.heading(2, "Table");
        let mut t = Table::new(Some("t.csv"))
            .col("x", "x_published")
            .col("x", "x_reproduced");
        t.row(vec![Cell::int(1u8), Cell::int(2u8)]).unwrap();
        r.table(&t).unwrap();
        let path = r.finish().unwrap();
        let md = std::fs::read_to_string(&path).unwrap();
        let order = [
            "# Toy: reproduction",
            "Paper: A. Author",
            "## Provenance",
            "## Timing",
            "## Table",
            "| 1 / 2 |",
            "The answer is 42 and took 1.25 s.",
        ];
        let mut at = 0;
        for o in order {
            let i = md[at..]
                .find(o)
                .unwrap_or_else(|| panic!("`{o}` after byte {at}:\n{md}"));
            at += i;
        }
        assert_eq!(
            std::fs::read_to_string(root.join("reports/toy/t.csv")).unwrap(),
            "x_published,x_reproduced\n1,2\n"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_stale_finding_fails_the_report_and_writes_nothing() {
        let root = scratch("stale");
        std::fs::write(
            root.join("experiments/configs/toy/findings.md"),
            "Restarts leave {{lm = 301}} local minima.\n",
        )
        .unwrap();
        let mut r = Report::new(&root, "toy", "Toy", "-");
        r.facts().num("lm", 302.0, Fmt::int());
        let e = r.finish().unwrap_err().to_string();
        assert!(
            e.contains("experiments/configs/toy/findings.md:1")
                && e.contains("301")
                && e.contains("302"),
            "{e}"
        );
        assert!(!root.join("reports/toy/README.md").exists());
        let facts = std::fs::read_to_string(root.join("reports/toy/facts.md")).unwrap();
        assert!(facts.contains("| `lm` | 302 |"), "{facts}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn missing_runs_are_missing_data_and_metas_are_optional() {
        let root = scratch("missing");
        std::fs::write(
            root.join("experiments/configs/toy/a.toml"),
            "paper = \"toy\"\nname = \"a\"\n[scene]\nkind = \"sphere_on_plane\"\nsteps = 3\n\
             [driver]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n",
        )
        .unwrap();
        let mut r = Report::new(&root, "toy", "Toy", "-");
        let e = r.load("a.toml").unwrap_err();
        assert!(
            matches!(&e, ReportError::MissingData(p) if p.ends_with("data/runs/toy/a.parquet")),
            "{e}"
        );
        assert!(r.load_if_run("a.toml").unwrap().is_none());
        assert_eq!(RunMeta::read(&root.join("nope.json")), RunMeta::default());
        let m = RunMeta::from_json(&serde_json::json!({"wall_seconds": 2.5, "threads": 2}));
        assert_eq!(
            (m.wall_seconds, m.threads, m.provenance),
            (Some(2.5), Some(2), None)
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
