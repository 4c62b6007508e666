//! The one report builder every paper's report is written with.
//!
//! The page around a paper's body and `facts.md` are the report crate's own templates
//! (`experiments/report/templates/page.md` and `facts.md`, [`super::template::PAGE`]); the
//! body is what the paper's templates render ([`super::template`]) from the facts, tables,
//! plots and values its module gives them ([`Report::show_table`], [`Report::show_plot`],
//! [`Report::show`]).
//!
//! [`Report`] loads a paper's runs (the steps DataFrame and the `.meta.json` of each config
//! under `data/runs/<paper>/`; a missing run is [`ReportError::MissingData`]), and writes
//! `reports/<paper>/README.md` in a fixed order: the title and what generated the page (the
//! title and the citation of the paper are [`PAPER_PAGE`] beside the paper's templates), a
//! provenance block (commit, rustc, build, CPU, threads and date of every run, read from its
//! meta; a bold warning when a commit is `+dirty`, which only `--allow-dirty` lets through), a
//! timing table, the body (its [`Table`]s written once to both markdown and CSV, its plots),
//! and the people-written findings
//! `experiments/configs/<paper>/findings.md` with their placeholders filled and checked
//! against the facts the module computed (syntax in [`super::findings`]).
//!
//! Every fact, with its value, is listed in `reports/<paper>/facts.md` beside the README.
//! Facts the builder adds for every loaded run, by the config's `name`:
//! `<name>.wall_seconds`, `<name>.solve_seconds`, `<name>.load_average` (they change from run
//! to run: quote them unchecked, `{{table1.wall_seconds}}`), and `<name>.threads`,
//! `<name>.runs`, `<name>.rows`, `<name>.steps`, `<name>.seeds`.
//!
//! Facts the builder adds for the paper's folder, so that the findings quote settings and
//! published numbers through checked placeholders too:
//!
//! * `config.<file>.<key path>`: every number (and list of numbers) of every config
//!   `experiments/configs/<paper>/<file>.toml`, keys joined with `.`, array elements by their
//!   index (`config.table1.scene.params.h`, `config.table1.sweep.mu`, `config.table1.sweep.mu.0`,
//!   `config.files.solvers.1.tol`);
//! * `scene.<name>.<key>`: every number of the scene records of a loaded run (the scene's
//!   parameters, defaults filled in, and its constants, such as exact answers) that is the same
//!   in every run of the sweep; in a sweep of at most 16 runs, the ones that differ as
//!   `scene.<name>.run<k>.<key>` (`scene.slides.run0.stop_time_exact`);
//! * `published.<quantity>`: each row of `experiments/configs/<paper>/quoted_published.csv`
//!   (`quantity,value,source`): numbers the findings quote from the paper, another study or an
//!   earlier run of this project, with where each comes from.
//!
//! **Nothing computed for nothing.** The facts the paper's module computes come in families,
//! by the first segment of their names (`delassus` of `delassus.newton.s192.converged`): a
//! grid over solvers and sizes is computed whole, and `facts.md` lists every member for the
//! next finding. `facts.md` ends with the verdict on the families, judged by the paper's
//! findings and what the templates used while rendering: the ones of which no template and no
//! finding quotes a member (the builder's own facts above are exempt), or that there are none,
//! or that there are no findings to judge by. The report crate's test `committed_reports`
//! fails on a committed report whose verdict names a family.
//!
//! Facts a report cannot compute in a run (an optional peer that did not run) are declared
//! absent with [`Facts::absent`]: the findings that quote them are marked, not failed, and
//! `facts.md` lists the absent patterns with their reasons.
//!
//! **All or nothing.** Everything a report writes (its tables' CSV files, its plots, anything a
//! module draws into [`Report::out_dir`], `facts.md` and `README.md`) goes to a staging folder
//! beside the report's, `reports/.<paper>.staging-<pid>-<n>`, and only a successful
//! [`Report::finish`] puts it in place of `reports/<paper>/`: the old folder is renamed aside,
//! the staging folder renamed to it, then the old one removed. So the report's folder holds
//! exactly what one generation wrote (a file it no longer writes is gone; nothing in a report
//! folder is written by hand: the prose is `experiments/configs/<paper>/findings.md`), and a
//! generation that fails anywhere (an error from a table, a plot, a load, a stale or unknown
//! finding, a panic) leaves `reports/<paper>/` byte for byte as it was and removes its staging
//! folder when the [`Report`] is dropped. When the findings fail, the facts this generation
//! computed, what the author of the findings needs, are kept in `reports/.<paper>.facts.md`
//! (hidden and ignored by git; a later successful generation removes it).

use contactlab_runs::RunConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use super::findings::{absent_note, fill, placeholder_names, Facts, Fmt};
use super::plots::{Chart, Series};
use super::table::Table;
use super::template::{render, render_layout, Shown, BODY, FACTS_PAGE, FOLDER, PAGE};
use crate::error::ReportError;
use crate::table::markdown_table;
use contactlab_runs::config::ExperimentConfig;
use contactlab_runs::schema::common;
use contactlab_runs::store::{read_run, run_exists, RunMeta, SceneRecord};
use contactlab_runs::Provenance;
use contactlab_runs::StoreError;

/// The numbers the findings quote from papers, other studies and earlier runs, beside the
/// configs (`quantity,value,source`).
pub const QUOTED: &str = "quoted_published.csv";

/// The page's title and citation, a TOML file (`title = ".."`, `citation = ".."`) in the
/// paper's templates folder ([`FOLDER`]): words of the page, not a config `reproduce` runs.
pub const PAPER_PAGE: &str = "paper.toml";

/// What [`PAPER_PAGE`] holds.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PaperPage {
    /// The page's heading.
    title: String,
    /// The paper (or papers) the page names under its heading.
    citation: String,
}

impl PaperPage {
    /// Reads `path`; a missing or malformed file is an error naming it.
    fn read(path: &Path) -> Result<PaperPage, ReportError> {
        let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| ReportError::Published(named(&e)))?;
        toml::from_str(&text).map_err(|e| ReportError::Published(named(&e)))
    }
}

/// The provenance label of a run that recorded none.
const NOT_RECORDED: &str = "not recorded; captured at report time";

/// Sweeps of at most this many runs get per-run `scene.<name>.run<k>.*` facts for the scene
/// values that differ between runs (a larger sweep's would swamp `facts.md`).
const SCENE_RUNS_NAMED: usize = 16;

/// The shortest text that reads back as `x`, or three mantissa decimals when that is long
/// (a derived constant): a checked placeholder is compared at its own written precision anyway.
fn natural_fmt(x: f64) -> Fmt {
    let plain = format!("{x}");
    let sci = format!("{x:e}");
    let short = if plain.len() <= sci.len() { plain } else { sci };
    if short.len() > 8 {
        Fmt::sci(3)
    } else {
        written_fmt(&short)
    }
}

/// The format a number is written in: its decimals, in scientific notation when it has an
/// exponent (`0.005` -> `Fixed(3)`, `1.5e-3` -> `Sci(1)`).
fn written_fmt(text: &str) -> Fmt {
    let t = text.trim();
    let (mantissa, sci) = match t.split_once(['e', 'E']) {
        Some((m, _)) => (m, true),
        None => (t, false),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len());
    if sci {
        Fmt::sci(decimals)
    } else {
        Fmt::fixed(decimals)
    }
}

/// Adds the number or the numbers of `value` as fact `name`, and a table's or an array's
/// items under `name.<key>` / `name.<index>`.
fn setting_facts(facts: &mut Facts, name: &str, value: &toml::Value) {
    let as_number = |v: &toml::Value| match v {
        toml::Value::Integer(i) => Some((*i as f64, Fmt::int())),
        toml::Value::Float(x) => Some((*x, natural_fmt(*x))),
        _ => None,
    };
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                setting_facts(facts, &format!("{name}.{k}"), v);
            }
        }
        toml::Value::Array(items) => {
            let numbers: Vec<(f64, Fmt)> = items.iter().filter_map(as_number).collect();
            if !items.is_empty() && numbers.len() == items.len() {
                let fmt = numbers[0].1.clone();
                facts.list(name, numbers.iter().map(|n| n.0).collect(), fmt);
            }
            for (i, v) in items.iter().enumerate() {
                setting_facts(facts, &format!("{name}.{i}"), v);
            }
        }
        v => {
            if let Some((x, fmt)) = as_number(v) {
                facts.num(name, x, fmt);
            }
        }
    }
}

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

/// The folder a report is written into until it is complete: a sibling of the report's folder,
/// renamed into its place by [`Staging::commit`] and removed when dropped uncommitted.
#[derive(Debug)]
struct Staging {
    /// `reports/.<paper>.staging-<pid>-<n>`.
    dir: PathBuf,
    /// `reports/<paper>`.
    target: PathBuf,
}

impl Staging {
    /// A staging folder for `target` (not created yet: writers create it as they write).
    fn new(target: PathBuf) -> Staging {
        Staging {
            dir: sibling(&target, "staging"),
            target,
        }
    }

    /// Puts the staging folder in place of the target: the old target renamed aside, the
    /// staging folder renamed to the target, the old one removed; when the second rename
    /// fails, the old target is renamed back.
    fn commit(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let old = sibling(&self.target, "old");
        let had_old = match std::fs::rename(&self.target, &old) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if let Err(e) = std::fs::rename(&self.dir, &self.target) {
            if had_old {
                let _ = std::fs::rename(&old, &self.target);
            }
            return Err(e);
        }
        if had_old {
            // What is left of the old folder is a hidden sibling; the new report is in place.
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(())
    }
}

impl Drop for Staging {
    /// Removes the staging folder: after a commit it no longer exists; without one, the
    /// generation failed or stopped and its files must not stay.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `<parent>/.<name>.<what>-<pid>-<n>` for `path` = `<parent>/<name>`, unique in this process.
fn sibling(path: &Path, what: &str) -> PathBuf {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{what}-{}-{n}", std::process::id()))
}

/// A report being written: see the module documentation.
#[derive(Debug)]
pub struct Report {
    paper: String,
    title: String,
    citation: String,
    root: PathBuf,
    config_dir: PathBuf,
    /// Where every file of this generation is written until [`Report::finish`].
    staging: Staging,
    facts: Facts,
    /// The facts this builder adds to every report (each run's, scene's, setting's and
    /// quoted number's): the paper's module computes the rest, and each of those must be used.
    provided: BTreeSet<String>,
    /// What the paper's templates show besides the facts ([`super::template`]).
    shown: Shown,
    runs: Vec<(String, RunMeta)>,
}

/// Refuses a study whose harness ran through a stale extension: `stale` is the harness's
/// reason (empty when the extension was built from the run's code).
fn stale_refused(paper: &str, stale: &str) -> Result<(), ReportError> {
    if stale.is_empty() {
        return Ok(());
    }
    Err(ReportError::StaleExtension(format!(
        "the {paper} study ran with a stale extension: {stale}"
    )))
}

/// Refuses a harness's run made through a stale extension (its `contactlab_stale` column,
/// non-empty, says why; a run without the column passes).
pub(crate) fn refuse_stale_run(paper: &str, df: &DataFrame) -> Result<(), ReportError> {
    let stale = crate::analysis::texts_or_empty(df, "contactlab_stale")?;
    stale_refused(paper, stale.first().map_or("", String::as_str))
}

/// An engines study's run as [`Report::load_study`] reads it.
#[derive(Debug)]
pub enum StudyRun {
    /// The harness's records.
    Ran(DataFrame),
    /// Why the harness did not run.
    Skipped(String),
}

impl Report {
    /// Starts `reports/<paper>/` under `root`, with the title and citation of
    /// `experiments/configs/<paper>/templates/paper.toml` ([`PAPER_PAGE`]); a missing or
    /// malformed one is [`ReportError::Published`] naming the file.
    pub fn new(root: &Path, paper: &str) -> Result<Report, ReportError> {
        let config_dir = root.join("experiments/configs").join(paper);
        let page = PaperPage::read(&config_dir.join(FOLDER).join(PAPER_PAGE))?;
        Ok(Report {
            paper: paper.to_string(),
            title: page.title,
            citation: page.citation,
            root: root.to_path_buf(),
            config_dir,
            staging: Staging::new(root.join("reports").join(paper)),
            facts: Facts::new(),
            provided: BTreeSet::new(),
            shown: Shown::default(),
            runs: Vec::new(),
        })
    }

    /// `experiments/configs/<paper>/`: the configs, the published numbers and the findings.
    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// The folder to write this report's files into: the staging folder that
    /// [`Report::finish`] puts in place of `reports/<paper>/` (not created until a file is
    /// written; create it before writing into it yourself).
    pub fn out_dir(&self) -> &Path {
        &self.staging.dir
    }

    /// `reports/<paper>/`: where the report ends up, holding the last successful generation
    /// until [`Report::finish`] replaces it.
    pub fn report_dir(&self) -> &Path {
        &self.staging.target
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
        self.provide(|r| r.add_config_facts(&config));
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
        self.provide(|r| {
            r.add_run_facts(name, &meta);
            r.add_scene_facts(name, &meta);
        });
        self.runs.push((name.to_string(), meta.clone()));
        Ok((steps, meta))
    }

    /// The run of an engines study (`config`, a `kind = "engines"` config of this paper, its
    /// harness a Python study): [`StudyRun::Skipped`] with the reason where the harness did not
    /// run, every fact then marked absent (the findings quote the run's facts: marked, not
    /// failed); refused where the harness ran through a stale extension (its
    /// `contactlab_stale`, non-empty, says why), so that such a run stays out of a report.
    pub fn load_study(&mut self, config: &str) -> Result<StudyRun, ReportError> {
        let cfg = contactlab_runs::engines::EnginesConfig::load(&self.config_file(config))?;
        let (df, _) = self.load_data(&cfg.name, &cfg.data_path(&self.root))?;
        if let Ok(why) = crate::analysis::strs(&df, contactlab_runs::schema::engines::SKIPPED) {
            let why = why.first().cloned().unwrap_or_default();
            self.facts()
                .absent(".", format!("the study did not run, {why}"));
            return Ok(StudyRun::Skipped(why));
        }
        refuse_stale_run(&self.paper, &df)?;
        Ok(StudyRun::Ran(df))
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

    /// Runs `add` and records the facts it added as the builder's own ([`Report::provided`]).
    fn provide<T>(&mut self, add: impl FnOnce(&mut Report) -> T) -> T {
        let before: BTreeSet<String> = self.facts.names().map(str::to_string).collect();
        let out = add(self);
        let added: Vec<String> = self
            .facts
            .names()
            .filter(|n| !before.contains(*n))
            .map(str::to_string)
            .collect();
        self.provided.extend(added);
        out
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

    /// The `scene.<name>.*` facts of a run's scene records (see the module documentation).
    fn add_scene_facts(&mut self, name: &str, meta: &RunMeta) {
        let mut values: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
        for scene in &meta.scenes {
            let params = scene.parameters.iter().filter_map(|(k, v)| {
                v.as_float()
                    .or(v.as_integer().map(|i| i as f64))
                    .map(|x| (k, x))
            });
            let constants = scene.constants.iter().map(|(k, v)| (k, *v));
            for (k, x) in params.chain(constants) {
                values.entry(k.clone()).or_default().push((scene.run, x));
            }
        }
        for (key, runs) in values {
            let same = runs.iter().all(|(_, x)| x.to_bits() == runs[0].1.to_bits());
            if same && runs.len() == meta.scenes.len() {
                self.facts.num(
                    format!("scene.{name}.{key}"),
                    runs[0].1,
                    natural_fmt(runs[0].1),
                );
            } else if meta.scenes.len() <= SCENE_RUNS_NAMED {
                for (run, x) in runs {
                    self.facts
                        .num(format!("scene.{name}.run{run}.{key}"), x, natural_fmt(x));
                }
            }
        }
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

    /// Gives the templates table `name` (`{{ tables.<name> }}`, when it has markdown
    /// columns) and writes its CSV file into the report folder (when it has one).
    pub fn show_table(&mut self, name: &str, t: &Table) -> Result<(), ReportError> {
        t.write_csv(self.out_dir())?;
        if t.has_markdown() {
            self.shown.table(name, t.markdown())?;
        }
        Ok(())
    }

    /// Draws `chart` of `series` to `<name>.svg` in the report folder and gives the templates
    /// the file's name as plot `name` (`![what it shows]({{ plots.<name> }})`).
    pub fn show_plot(
        &mut self,
        name: &str,
        chart: &Chart,
        series: &[Series],
    ) -> Result<(), ReportError> {
        std::fs::create_dir_all(self.out_dir())?;
        chart.draw(&self.out_dir().join(format!("{name}.svg")), series)?;
        self.show_drawn(name)
    }

    /// Gives the templates plot `name` that the caller drew itself into `<name>.svg` of
    /// [`Report::out_dir`] (a chart kind [`Chart`] does not draw, such as a histogram).
    pub fn show_drawn(&mut self, name: &str) -> Result<(), ReportError> {
        self.shown.plot(name, format!("{name}.svg"))
    }

    /// Gives the templates `value` as `name` (rows to loop over, a record).
    pub fn show(&mut self, name: &str, value: impl serde::Serialize) -> Result<(), ReportError> {
        self.shown.value(name, value)
    }

    /// The provenance table (one row per loaded run, from its meta; a run that recorded none
    /// shows what this report captures now, labelled so), the capture of now, and whether a
    /// commit is `+dirty`.
    fn provenance(&self) -> (String, Provenance, bool) {
        let now = Provenance::capture(&self.root);
        let rows: Vec<Vec<String>> = self
            .runs
            .iter()
            .map(|(name, meta)| {
                let (p, label) = match &meta.provenance {
                    Some(p) => (p.clone(), format!("`{name}`")),
                    None => (now.clone(), format!("`{name}` ({NOT_RECORDED})")),
                };
                vec![
                    label,
                    format!("`{}`", p.commit),
                    p.rustc,
                    p.build,
                    format!("{} ({} CPUs)", p.cpu, p.cpus),
                    p.threads.to_string(),
                    p.date,
                ]
            })
            .collect();
        let header = [
            "run data",
            "commit",
            "compiler",
            "build",
            "CPU",
            "threads",
            "run at (UTC)",
        ];
        let dirty = std::iter::once(now.commit.as_str())
            .chain(
                self.runs
                    .iter()
                    .filter_map(|(_, m)| m.provenance.as_ref().map(|p| p.commit.as_str())),
            )
            .any(contactlab_runs::provenance::is_dirty);
        (markdown_table(&header, &rows), now, dirty)
    }

    /// The timing table: per run, its size and times as the run recorded them.
    fn timing_table(&self) -> String {
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
        let header = [
            "run data",
            "runs",
            "rows",
            "wall time",
            "in solvers",
            "threads",
            "load average",
        ];
        markdown_table(&header, &rows)
    }

    /// `facts.md`: every fact the findings may quote, with its value in its own format, for
    /// the people who write the findings ([`FACTS_PAGE`]), and once the page is rendered, the
    /// module's fact families no template or finding quotes (`None` when there are no
    /// findings to judge by).
    fn facts_page(&self, families: Option<Option<Vec<String>>>) -> Result<String, ReportError> {
        let rows: Vec<Vec<String>> = self
            .facts
            .names()
            .filter_map(|n| self.facts.get(n).map(|f| vec![format!("`{n}`"), f.show()]))
            .collect();
        let absent: Vec<Vec<String>> = self
            .facts
            .absences()
            .map(|(pattern, reason)| vec![format!("`{pattern}`"), reason.to_string()])
            .collect();
        render_layout(
            FACTS_PAGE,
            serde_json::json!({
                (common::PAPER): self.paper,
                "facts": markdown_table(&["name", "value"], &rows),
                "absent": (!absent.is_empty())
                    .then(|| markdown_table(&["name contains", "reason"], &absent)),
                "absent_note": absent_note("<reason>"),
                "families": families.map(|judged| serde_json::json!({
                    "judged": judged.is_some(),
                    "unquoted": judged.map(|f| f.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
                })),
            }),
        )
    }

    /// The `config.*` facts of every config of the paper's folder (see the module
    /// documentation).
    fn add_setting_facts(&mut self) -> Result<(), ReportError> {
        let Ok(dir) = std::fs::read_dir(&self.config_dir) else {
            return Ok(());
        };
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path)?;
            let table: toml::Table = text
                .parse()
                .map_err(|e| ReportError::Published(format!("{}: {e}", path.display())))?;
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            setting_facts(
                &mut self.facts,
                &format!("config.{stem}"),
                &toml::Value::Table(table),
            );
        }
        Ok(())
    }

    /// The `published.*` facts of `quoted_published.csv`, each written as the file writes it;
    /// a name the paper's module already set is an error (one number, one source).
    fn add_quoted_facts(&mut self) -> Result<(), ReportError> {
        let path = self.config_dir.join(QUOTED);
        if !path.exists() {
            return Ok(());
        }
        let want = ["quantity", "value", "source"];
        for row in crate::csv::read_csv_with_header(&path, &want)? {
            let value = crate::csv::number(&path, &row, &want, 1)?;
            let name = format!("published.{}", row[0]);
            if self.facts.get(&name).is_some() {
                return Err(ReportError::Published(format!(
                    "{}: `{}` is already a fact of the report",
                    path.display(),
                    row[0]
                )));
            }
            if row[2].is_empty() {
                return Err(ReportError::Published(format!(
                    "{}: `{}` has no source",
                    path.display(),
                    row[0]
                )));
            }
            self.facts.num(name, value, written_fmt(&row[1]));
        }
        Ok(())
    }

    /// The body the paper's templates render, empty for a paper without them; an error when
    /// the module gave the templates something to show but the paper has none.
    fn render_templates(&self) -> Result<(String, BTreeSet<String>), ReportError> {
        match render(&self.config_dir.join(FOLDER), &self.facts, &self.shown)? {
            Some(page) => Ok((page.text, page.used_facts)),
            None if !self.shown.is_empty() => Err(ReportError::Template(format!(
                "{}: the report shows tables, plots or values but has no `{FOLDER}/{BODY}`",
                self.config_dir.display()
            ))),
            None => Ok((String::new(), BTreeSet::new())),
        }
    }

    /// The families of facts the paper's module computed (a family: the facts whose names
    /// share their first segment, `delassus` of `delassus.newton.s192.converged`) of which
    /// neither a template nor a finding quotes a member, sorted. Nothing is computed for
    /// nothing: a family is computed to be shown. Within a quoted family, every member is the
    /// vocabulary `facts.md` lists for the next finding (a grid over solvers and sizes is
    /// computed whole). The builder's own facts (runs, scenes, settings, quoted published
    /// numbers) are not the module's and are exempt.
    fn unused_families(&self, templates: &BTreeSet<String>, findings: &str) -> Vec<String> {
        let family = |n: &str| n.split('.').next().unwrap_or(n).to_string();
        let quoted: BTreeSet<String> = placeholder_names(findings)
            .iter()
            .chain(templates)
            .map(|n| family(n))
            .collect();
        let computed: BTreeSet<String> = self
            .facts
            .names()
            .filter(|n| !self.provided.contains(*n))
            .map(family)
            .collect();
        computed.difference(&quoted).cloned().collect()
    }

    /// Writes `facts.md`, then `README.md` (header, provenance, timing, body, filled findings),
    /// puts the generation in place of `reports/<paper>/` and returns the README's path there.
    /// A stale or unknown findings placeholder fails before anything is put in place (the
    /// facts are then in `reports/.<paper>.facts.md`); see the module documentation.
    pub fn finish(mut self) -> Result<PathBuf, ReportError> {
        self.provide(Report::add_setting_facts)?;
        self.provide(Report::add_quoted_facts)?;
        // The facts first: when a finding is stale, they are what its author needs.
        let out = self.out_dir().to_path_buf();
        std::fs::create_dir_all(&out)?;
        let facts_page = self.facts_page(None)?;
        std::fs::write(out.join("facts.md"), &facts_page)?;
        let failed_facts = self
            .staging
            .target
            .with_file_name(format!(".{}.facts.md", self.paper));
        let (body, used) = match self.render_templates() {
            Ok(body) => body,
            Err(e) => {
                let _ = std::fs::write(&failed_facts, &facts_page);
                return Err(e);
            }
        };
        let findings_path = self.config_dir.join("findings.md");
        // The findings' verdict on the fact families is judged by the findings read here: a
        // generation without them has nothing to judge by. It goes on the facts page, where a
        // test holds the committed reports to it (a test's cut-down run, with findings of its
        // own, quotes less and is not held).
        let (findings, unquoted) = match std::fs::read_to_string(&findings_path) {
            Ok(text) => {
                let shown = Path::new("experiments/configs")
                    .join(&self.paper)
                    .join("findings.md");
                match fill(&text, &self.facts, &shown) {
                    Ok(filled) => (Some(filled), Some(self.unused_families(&used, &text))),
                    Err(e) => {
                        let _ = std::fs::write(&failed_facts, &facts_page);
                        return Err(e);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (None, None),
            Err(e) => return Err(ReportError::Io(e)),
        };
        std::fs::write(out.join("facts.md"), self.facts_page(Some(unquoted))?)?;
        let (provenance, now, dirty) = self.provenance();
        let md = render_layout(
            PAGE,
            serde_json::json!({
                "title": self.title,
                (common::PAPER): self.paper,
                "citation": self.citation,
                "provenance": provenance,
                "now": { "date": now.date, "commit": now.commit },
                "dirty": dirty,
                "timing": self.timing_table(),
                "body": body,
                "findings": findings,
            }),
        )?;
        std::fs::write(out.join("README.md"), md)?;
        self.staging.commit()?;
        let _ = std::fs::remove_file(&failed_facts);
        Ok(self.staging.target.join("README.md"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_run_with_a_stale_extension_is_refused() {
        assert!(stale_refused("robots", "").is_ok());
        let err = stale_refused("robots", "built from commit 0123456789").unwrap_err();
        assert!(err.to_string().contains("0123456789"), "{err}");
        assert!(err.to_string().contains("the robots study"), "{err}");
    }
    use crate::table::Cell;

    /// A root with the toy paper's config folder and its page, titled `Toy`.
    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("contactlab-builder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("experiments/configs/toy").join(FOLDER)).unwrap();
        page(&d, "title = \"Toy\"\ncitation = \"-\"\n");
        d
    }

    /// Writes the toy paper's `paper.toml`.
    fn page(root: &Path, text: &str) {
        let path = root
            .join("experiments/configs/toy")
            .join(FOLDER)
            .join(PAPER_PAGE);
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_report_has_header_provenance_timing_body_and_checked_findings() {
        let root = scratch("ok");
        std::fs::write(
            root.join("experiments/configs/toy/findings.md"),
            "## Findings\n\nThe answer is {{answer = 42}} and took {{wall}}.\n",
        )
        .unwrap();
        page(
            &root,
            "title = \"Toy: reproduction\"\ncitation = 'A. Author, *Toy*, \"Toys\", 2024.'\n",
        );
        let mut r = Report::new(&root, "toy").unwrap();
        r.facts()
            .num("answer", 41.7, Fmt::int())
            .num("wall", 1.25, Fmt::fixed(2).unit(" s"));
        let templates = root.join("experiments/configs/toy").join(FOLDER);
        std::fs::create_dir_all(&templates).unwrap();
        std::fs::write(templates.join(BODY), "## Table\n\n{{ tables.t }}\n").unwrap();
        let mut t = Table::new(Some("t.csv"))
            .col("x", "x_published")
            .col("x", "x_reproduced");
        t.row(vec![Cell::int(1u8), Cell::int(2u8)]).unwrap();
        r.show_table("t", &t).unwrap();
        let path = r.finish().unwrap();
        let md = std::fs::read_to_string(&path).unwrap();
        let order = [
            "# Toy: reproduction\n",
            "Paper: A. Author, *Toy*, \"Toys\", 2024.\n",
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
    fn a_missing_or_malformed_page_file_is_an_error_naming_it() {
        let root = scratch("page");
        let file = Path::new("experiments/configs/toy/templates/paper.toml");
        for text in [
            "title = \"Toy\"\n",
            "title = \"Toy\"\ncitation = \"-\"\nauthor = \"A.\"\n",
            "title = \"Toy\ncitation = \"-\"\n",
        ] {
            page(&root, text);
            let e = Report::new(&root, "toy").unwrap_err();
            assert!(
                matches!(&e, ReportError::Published(m) if m.contains(file.to_str().unwrap())),
                "{e}"
            );
        }
        std::fs::remove_file(root.join(file)).unwrap();
        let e = Report::new(&root, "toy").unwrap_err().to_string();
        assert!(e.contains(file.to_str().unwrap()), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn config_settings_and_quoted_numbers_are_checked_facts() {
        let root = scratch("settings");
        let dir = root.join("experiments/configs/toy");
        std::fs::write(
            dir.join("run.toml"),
            "[scene.params]\nh = 0.005\n[sweep]\nmu = [0.1, 2.0]\n[[drivers]]\ntol = 1e-8\n",
        )
        .unwrap();
        std::fs::write(
            dir.join(QUOTED),
            "quantity,value,source\nband,28,the paper's Fig. 5\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("findings.md"),
            "h {{config.run.scene.params.h = 0.005}}, mu {{config.run.sweep.mu = 0.1 and 2}}, \
             the second {{config.run.sweep.mu.1 = 2.0}}, tol {{config.run.drivers.0.tol = 1e-8}}, \
             paper {{published.band = 28}}%.\n",
        )
        .unwrap();
        let path = Report::new(&root, "toy").unwrap().finish().unwrap();
        let md = std::fs::read_to_string(path).unwrap();
        assert!(
            md.contains("h 0.005, mu 0.1 and 2, the second 2.0, tol 1e-8, paper 28%."),
            "{md}"
        );
        // A stale setting fails like a stale fact; a quoted number needs its source.
        std::fs::write(
            dir.join("findings.md"),
            "{{config.run.scene.params.h = 0.004}}\n",
        )
        .unwrap();
        let e = Report::new(&root, "toy").unwrap().finish().unwrap_err();
        assert!(e.to_string().contains("0.004"), "{e}");
        std::fs::write(dir.join(QUOTED), "quantity,value,source\nband,28,\n").unwrap();
        let e = Report::new(&root, "toy").unwrap().finish().unwrap_err();
        assert!(e.to_string().contains("no source"), "{e}");
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
        let mut r = Report::new(&root, "toy").unwrap();
        r.facts().num("lm", 302.0, Fmt::int());
        let e = r.finish().unwrap_err().to_string();
        assert!(
            e.contains("experiments/configs/toy/findings.md:1")
                && e.contains("301")
                && e.contains("302"),
            "{e}"
        );
        assert!(!root.join("reports/toy").exists());
        // The facts the author needs to fix the finding are kept beside the report's folder.
        let facts = std::fs::read_to_string(root.join("reports/.toy.facts.md")).unwrap();
        assert!(facts.contains("| `lm` | 302 |"), "{facts}");
        assert_eq!(entries(&root.join("reports")), [".toy.facts.md"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// The names in `dir`, sorted.
    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Every file under `dir` with its bytes, by path relative to `dir`.
    fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                } else {
                    let bytes = std::fs::read(&path).unwrap();
                    files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), bytes);
                }
            }
        }
        files
    }

    #[test]
    fn the_facts_page_names_the_fact_families_no_template_or_finding_quotes() {
        let root = scratch("unused");
        page(&root, "title = \"Toy\"\ncitation = \"-\"\n");
        let templates = root.join("experiments/configs/toy").join(FOLDER);
        std::fs::create_dir_all(&templates).unwrap();
        std::fs::write(templates.join(BODY), "{{ grid.a.x }}\n").unwrap();
        std::fs::write(
            root.join("experiments/configs/toy/findings.md"),
            "Quoted: {{quoted.y}}.\n",
        )
        .unwrap();
        let report = |orphan: bool| {
            let mut r = Report::new(&root, "toy").unwrap();
            // A grid is quoted through one member; the builder's own facts are exempt.
            r.facts()
                .num("grid.a.x", 1.0, Fmt::int())
                .num("grid.b.x", 2.0, Fmt::int())
                .num("quoted.y", 3.0, Fmt::int());
            r.provide(|r| {
                r.facts().num("run.rows", 4.0, Fmt::int());
            });
            if orphan {
                r.facts().num("orphan.z", 5.0, Fmt::int());
            }
            r.finish()
        };
        let facts = || std::fs::read_to_string(root.join("reports/toy/facts.md")).unwrap();
        report(false).unwrap();
        assert!(
            facts().contains("## Families of facts\n\nEvery family"),
            "{}",
            facts()
        );
        report(true).unwrap();
        assert!(
            facts().contains("Quoted by no template and no finding: `orphan`."),
            "{}",
            facts()
        );
        // Without findings there is nothing to judge by.
        std::fs::remove_file(root.join("experiments/configs/toy/findings.md")).unwrap();
        std::fs::write(templates.join(BODY), "{{ grid.a.x }} {{ quoted.y }}\n").unwrap();
        report(true).unwrap();
        assert!(facts().contains("Not judged: the paper has no findings."));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A toy report with one table (`t.csv`, `x` in its cell), one plot (`p.svg`) and a fact,
    /// shown by a one-line template.
    fn toy(root: &Path, x: u8) -> Report {
        let templates = root.join("experiments/configs/toy").join(FOLDER);
        std::fs::create_dir_all(&templates).unwrap();
        std::fs::write(
            templates.join(BODY),
            "{{ tables.t }}\n![a line]({{ plots.p }})\n",
        )
        .unwrap();
        let mut r = Report::new(root, "toy").unwrap();
        r.facts().num("answer", f64::from(x), Fmt::int());
        let mut t = Table::new(Some("t.csv")).col("x", "x");
        t.row(vec![Cell::int(x)]).unwrap();
        r.show_table("t", &t).unwrap();
        let chart = Chart::new(
            "toy",
            crate::plots::Axis::linear("x"),
            crate::plots::Axis::linear("y"),
        );
        r.show_plot(
            "p",
            &chart,
            &[("line".to_string(), vec![(0.0, 0.0), (1.0, f64::from(x))])],
        )
        .unwrap();
        r
    }

    #[test]
    fn a_failed_generation_leaves_the_report_folder_as_it_was_and_a_good_one_replaces_it() {
        let root = scratch("atomic");
        let findings = root.join("experiments/configs/toy/findings.md");
        let reports = root.join("reports");
        let folder = reports.join("toy");
        std::fs::write(&findings, "The answer is {{answer = 1}}.\n").unwrap();
        let first = toy(&root, 1);
        // Until `finish`, nothing is in the report's folder: the files go to the staging one.
        assert!(first.out_dir().join("t.csv").exists() && !folder.exists());
        assert_eq!(first.report_dir(), folder);
        // A file this generation writes and the next does not.
        std::fs::write(first.out_dir().join("only_once.txt"), "old").unwrap();
        assert_eq!(first.finish().unwrap(), folder.join("README.md"));
        let before = snapshot(&folder);
        let names: Vec<&str> = before.keys().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            names,
            ["README.md", "facts.md", "only_once.txt", "p.svg", "t.csv"]
        );
        assert_eq!(entries(&reports), ["toy"]);

        // Stale findings: the new table and plot were written, then the findings failed.
        let e = toy(&root, 2).finish().unwrap_err();
        assert!(matches!(e, ReportError::StaleFinding { .. }), "{e}");
        assert_eq!(snapshot(&folder), before, "the old report, byte for byte");
        assert_eq!(
            entries(&reports),
            [".toy.facts.md", "toy"],
            "no staging folder"
        );

        // An unknown finding, and an error from a table (a row of the wrong width) that the
        // module returns before `finish`: the same.
        std::fs::write(&findings, "{{answer = 2}} {{no_such_fact}}\n").unwrap();
        assert!(toy(&root, 2).finish().is_err());
        assert_eq!(snapshot(&folder), before);
        let failed_in_the_body = || -> Result<PathBuf, ReportError> {
            let mut r = toy(&root, 2);
            let mut t = Table::new(Some("bad.csv")).col("x", "x");
            t.row(vec![Cell::int(1u8), Cell::int(2u8)])?;
            r.show_table("bad", &t)?;
            r.finish()
        };
        assert!(matches!(failed_in_the_body(), Err(ReportError::Table(_))));
        assert_eq!(snapshot(&folder), before);
        assert_eq!(entries(&reports), [".toy.facts.md", "toy"]);

        // A good generation replaces the folder: the file it no longer writes is gone, the
        // failed generation's facts too.
        std::fs::write(&findings, "The answer is {{answer = 2}}.\n").unwrap();
        toy(&root, 2).finish().unwrap();
        let after = snapshot(&folder);
        let names: Vec<&str> = after.keys().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(names, ["README.md", "facts.md", "p.svg", "t.csv"]);
        assert_eq!(after[Path::new("t.csv")], b"x\n2\n");
        assert_ne!(after[Path::new("p.svg")], before[Path::new("p.svg")]);
        assert!(
            String::from_utf8_lossy(&after[Path::new("README.md")]).contains("The answer is 2.")
        );
        assert_eq!(entries(&reports), ["toy"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn absent_facts_mark_their_findings_and_are_listed_on_the_facts_page() {
        let root = scratch("absent");
        std::fs::write(
            root.join("experiments/configs/toy/findings.md"),
            "MuJoCo {{lift.mujoco = 1.5}}, Drake {{lift.drake.sap = 6.0}}.\n",
        )
        .unwrap();
        let mut r = Report::new(&root, "toy").unwrap();
        r.facts()
            .num("lift.mujoco", 1.5, Fmt::fixed(1))
            .absent(".drake.", "Drake did not run: `pydrake` does not import");
        let md = std::fs::read_to_string(r.finish().unwrap()).unwrap();
        assert!(
            md.contains(
                "MuJoCo 1.5, Drake *[not measured: Drake did not run: `pydrake` does not import]*."
            ),
            "{md}"
        );
        let facts = std::fs::read_to_string(root.join("reports/toy/facts.md")).unwrap();
        assert!(
            facts.contains("## Absent in this run")
                && facts.contains("| `.drake.` | Drake did not run: `pydrake` does not import |"),
            "{facts}"
        );
        // Without absent patterns the facts page has no such section.
        Report::new(&root, "toy").unwrap().finish().unwrap_err();
        std::fs::write(root.join("experiments/configs/toy/findings.md"), "none\n").unwrap();
        Report::new(&root, "toy").unwrap().finish().unwrap();
        let facts = std::fs::read_to_string(root.join("reports/toy/facts.md")).unwrap();
        assert!(!facts.contains("Absent"), "{facts}");
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
        let mut r = Report::new(&root, "toy").unwrap();
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
