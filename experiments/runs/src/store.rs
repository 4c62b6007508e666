//! The files a run writes and a report reads back: the rows as Parquet
//! (`data/runs/<paper>/<name>.parquet`, or one file per shard beside it), and the run's
//! `<name>.meta.json` (timing, threads, load, shard and provenance; [`RunMeta`]).
//!
//! `--shard k/N` keeps runs whose index is `k-1 mod N`, each shard's files under
//! `<stem>.shard-k-of-N.<ext>` beside where the whole run's go; [`read_run`] stacks them back
//! in run order, and [`RunMeta::of_run`] merges their metas.

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde_json::json;

use crate::provenance::Provenance;

/// Errors of reading or writing a run's files.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Building, reading or writing a DataFrame failed.
    #[error("data frame: {0}")]
    Frame(#[from] PolarsError),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A bad `--shard`.
    #[error("--shard must be k/N with 1 <= k <= N, got {0}")]
    Shard(String),
    /// A sharded run whose shards are not all there (or disagree on `N`).
    #[error("{0}")]
    Shards(String),
}

/// Parses `k/N`.
pub fn parse_shard(s: &str) -> Result<(usize, usize), StoreError> {
    let bad = || StoreError::Shard(s.to_string());
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Writes a DataFrame as Parquet, creating parent folders.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<(), StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::File::create(path)?;
    ParquetWriter::new(file).finish(df)?;
    Ok(())
}

/// Reads a Parquet file written by [`write_parquet`].
pub fn read_parquet(path: &Path) -> Result<DataFrame, StoreError> {
    let file = std::fs::File::open(path)?;
    Ok(ParquetReader::new(file).finish()?)
}

/// Where shard `k` of `n` of the output `path` goes: `<stem>.shard-k-of-n.<ext>` beside it
/// (`table1.parquet` -> `table1.shard-2-of-4.parquet`; `table1.meta.json` ->
/// `table1.shard-2-of-4.meta.json`).
pub fn shard_path(path: &Path, (k, n): (usize, usize)) -> PathBuf {
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = name.split_once('.').unwrap_or((name.as_str(), ""));
    path.with_file_name(format!("{stem}.shard-{k}-of-{n}.{ext}"))
}

/// The shard files of the output `path` present on disk, as `(k, n, file)` sorted by `k`.
pub fn shard_files(path: &Path) -> Vec<(usize, usize, PathBuf)> {
    let name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, ext) = name.split_once('.').unwrap_or((name.as_str(), ""));
    let prefix = format!("{stem}.shard-");
    let suffix = format!(".{ext}");
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut found: Vec<(usize, usize, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let file = e.ok()?.file_name().to_string_lossy().into_owned();
            let middle = file.strip_prefix(&prefix)?.strip_suffix(&suffix)?;
            let (k, n) = middle.split_once("-of-")?;
            Some((k.parse().ok()?, n.parse().ok()?, dir.join(&file)))
        })
        .collect();
    found.sort();
    found
}

/// Whether the output `path` exists, whole or as shards.
pub fn run_exists(path: &Path) -> bool {
    path.exists() || !shard_files(path).is_empty()
}

/// Reads the output `path` of a run: the file itself when the run was not sharded, else every
/// shard `<stem>.shard-k-of-N.parquet` (all `N` of them, or an error naming the missing ones)
/// stacked and put back in run order (stable in `run`, so rows come out as one unsharded run
/// writes them: shards keep whole runs, and within a run the order is the runner's).
pub fn read_run(path: &Path) -> Result<DataFrame, StoreError> {
    if path.exists() {
        return read_parquet(path);
    }
    let shards = shard_files(path);
    let Some(&(_, n, _)) = shards.first() else {
        return Err(StoreError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no such run (nor shards of it)", path.display()),
        )));
    };
    if shards.iter().any(|s| s.1 != n) {
        return Err(StoreError::Shards(format!(
            "{}: shards of different splits present ({}); remove the stale ones",
            path.display(),
            shards
                .iter()
                .map(|s| format!("{}/{}", s.0, s.1))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !shards.iter().any(|s| s.0 == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(StoreError::Shards(format!(
            "{}: shard(s) {} missing; run them with --shard",
            path.display(),
            missing.join(", ")
        )));
    }
    let mut frames = shards.iter().map(|s| read_parquet(&s.2));
    let mut df = frames.next().expect("at least one shard")?;
    for f in frames {
        df.vstack_mut(&f?)?;
    }
    let sorted = df.sort(
        ["run"],
        SortMultipleOptions::default().with_maintain_order(true),
    )?;
    Ok(sorted)
}

/// Where a run's output file `path` goes: itself, or for a shard `<stem>.shard-k-of-N.<ext>`
/// (each of a shard's files under its own name; `read_run` stacks them back).
pub fn placed(path: &Path, shard: Option<(usize, usize)>) -> PathBuf {
    shard.map_or_else(|| path.to_path_buf(), |s| shard_path(path, s))
}

/// Writes the `.meta.json` of the run whose data go to `data` (the shard's own when sharded):
/// the run's own `fields`, plus what every run records: threads, the machine's load when it
/// ended (a wall time measured on a busy machine says little without it), the shard, and the
/// commit, compiler, CPU and date printed at the top of its report.
pub fn write_meta(
    data: &Path,
    root: &Path,
    shard: Option<(usize, usize)>,
    threads: usize,
    mut fields: serde_json::Value,
) -> Result<(), StoreError> {
    let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
        s.split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
    });
    if let Some(m) = fields.as_object_mut() {
        m.insert("threads".into(), json!(threads));
        m.insert("load_average_1min".into(), json!(load));
        m.insert(
            "shard".into(),
            json!(shard.map(|(k, n)| format!("{k}/{n}"))),
        );
        m.insert("provenance".into(), json!(Provenance::capture(root)));
    }
    std::fs::write(
        placed(&data.with_extension("meta.json"), shard),
        format!("{fields:#}\n"),
    )?;
    Ok(())
}

/// What a run's `.meta.json` recorded (every field `None` when the file is absent or lacks it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunMeta {
    /// Wall-clock seconds of the sweep.
    pub wall_seconds: Option<f64>,
    /// Seconds inside the solvers, summed over all solves.
    pub solve_seconds: Option<f64>,
    /// Threads the sweep ran on.
    pub threads: Option<u64>,
    /// The machine's 1-minute load average when the sweep ended.
    pub load_average: Option<f64>,
    /// Runs of the sweep.
    pub runs: Option<u64>,
    /// Rows of the steps frame.
    pub rows: Option<u64>,
    /// Commit, compiler, CPU and date of the run.
    pub provenance: Option<Provenance>,
}

impl RunMeta {
    /// The meta of a run's output `data` (`<name>.parquet`): its `<name>.meta.json`, or, for
    /// a sharded run, the shards' metas merged (runs, rows and solve seconds summed; the wall
    /// time is the longest shard's, as shards run side by side on a cluster; load and
    /// provenance of the first shard).
    pub fn of_run(data: &Path) -> RunMeta {
        let meta = data.with_extension("meta.json");
        if meta.exists() {
            return RunMeta::read(&meta);
        }
        let shards: Vec<RunMeta> = shard_files(&meta)
            .iter()
            .map(|s| RunMeta::read(&s.2))
            .collect();
        let Some(first) = shards.first().cloned() else {
            return RunMeta::default();
        };
        let sum_f = |f: fn(&RunMeta) -> Option<f64>| shards.iter().map(f).sum::<Option<f64>>();
        let sum_u = |f: fn(&RunMeta) -> Option<u64>| shards.iter().map(f).sum::<Option<u64>>();
        RunMeta {
            wall_seconds: shards
                .iter()
                .map(|m| m.wall_seconds)
                .try_fold(0.0f64, |acc, w| w.map(|w| acc.max(w))),
            solve_seconds: sum_f(|m| m.solve_seconds),
            runs: sum_u(|m| m.runs),
            rows: sum_u(|m| m.rows),
            ..first
        }
    }

    /// Reads a meta JSON file; a missing or unreadable file gives an empty meta (old runs).
    pub fn read(path: &Path) -> RunMeta {
        let v: serde_json::Value = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(serde_json::Value::Null);
        RunMeta::from_json(&v)
    }

    /// The fields of a parsed meta JSON.
    pub fn from_json(v: &serde_json::Value) -> RunMeta {
        let f = |k: &str| v.get(k).and_then(serde_json::Value::as_f64);
        let u = |k: &str| v.get(k).and_then(serde_json::Value::as_u64);
        RunMeta {
            wall_seconds: f("wall_seconds"),
            solve_seconds: f("solve_seconds"),
            threads: u("threads"),
            load_average: f("load_average_1min"),
            runs: u("runs"),
            rows: u("rows"),
            provenance: Provenance::from_meta(v),
        }
    }
}
