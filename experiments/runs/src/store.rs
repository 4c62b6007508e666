//! The files a run writes and a report reads back: the rows as Parquet
//! (`data/runs/<paper>/<name>.parquet`, or one file per shard beside it), and the run's
//! `<name>.meta.json` (timing, threads, load, shard and provenance; [`RunMeta`]).
//!
//! An experiment's meta also records, per run of the sweep, what its scene was: its
//! parameters with every default filled in and the constants that follow from them (the exact
//! answer's, where the scene has one), as [`SceneRecord`]s under `"scenes"`:
//!
//! ```json
//! "scenes": [
//!   {"run": 0, "parameters": {"h": 0.001, "mu": 0.2, "v0": [2.0, 0.0, 0.0], ...},
//!    "constants": {"slide_time_exact": 0.2912..., "friction_exact": 1.962, ...}},
//!   ...
//! ]
//! ```
//!
//! So a report reads a run's scene as numbers and never parses a scene's config. JSON has no
//! infinities or NaN: a non-finite number is written as the string `"inf"`, `"-inf"` or
//! `"nan"` (as TOML spells them) and read back as that number (no scene has a text parameter
//! that could take those values), so the parameters come back as the table the scene gave.
//!
//! `--shard k/N` keeps runs whose index is `k-1 mod N`, each shard's files under
//! `<stem>.shard-k-of-N.<ext>` beside where the whole run's go; [`read_run`] stacks them back
//! in run order, and [`RunMeta::of_run`] merges their metas.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use serde::Deserialize;

pub use crate::error::StoreError;
use crate::provenance::Provenance;
use crate::scene_record::merged_scenes;
pub use crate::scene_record::SceneRecord;
pub use crate::schema::RunMeta;

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
/// the run's own `record`, plus what every run records: threads, the machine's load when it
/// ended (a wall time measured on a busy machine says little without it), the shard, and the
/// commit, compiler, CPU and date printed at the top of its report.
pub fn write_meta(
    data: &Path,
    root: &Path,
    shard: Option<(usize, usize)>,
    threads: usize,
    record: RunMeta,
) -> Result<(), StoreError> {
    let load = std::fs::read_to_string("/proc/loadavg").ok().and_then(|s| {
        s.split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
    });
    let meta = RunMeta {
        threads: Some(threads as u64),
        load_average: load,
        shard: shard.map(|(k, n)| format!("{k}/{n}")),
        // The threads the run itself ran on (a config's `threads`, or one for a timing run),
        // not those of the pool that writes the meta.
        provenance: Some(Provenance {
            threads,
            ..Provenance::capture(root)
        }),
        ..record
    };
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| StoreError::Io(std::io::Error::other(e)))?;
    std::fs::write(
        placed(&data.with_extension("meta.json"), shard),
        format!("{text}\n"),
    )?;
    Ok(())
}

impl RunMeta {
    /// The meta of a run's output `data` (`<name>.parquet`): its `<name>.meta.json`, or, for
    /// a sharded run, the shards' metas merged (runs, rows and solve seconds summed; the wall
    /// time is the longest shard's, as shards run side by side on a cluster; load and
    /// provenance of the first shard; the scenes of all shards, in run order).
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
            scenes: merged_scenes(shards.iter().flat_map(|m| m.scenes.iter().cloned())),
            shard: None,
            ..first
        }
    }

    /// The scene of the sweep's first recorded run (for a sweep without scene keys, every
    /// run's); `NotRecorded` when the meta records none.
    pub fn first_scene(&self) -> Result<&SceneRecord, StoreError> {
        self.scenes.first().ok_or_else(|| {
            StoreError::NotRecorded(
                "the run's meta records no scene parameters; run the experiment again".into(),
            )
        })
    }

    /// Reads a meta JSON file; a missing or unreadable file gives an empty meta (old runs).
    pub fn read(path: &Path) -> RunMeta {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    /// The fields of a parsed meta JSON; an empty meta when it is not one.
    pub fn from_json(v: &serde_json::Value) -> RunMeta {
        RunMeta::deserialize(v).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> SceneRecord {
        let parameters: toml::Table =
            "h = 0.001\nn_links = 12\nstiffness = inf\nv0 = [2.0, 0.0, 0.0]\n\
             scheme = \"midpoint\"\nwalls = true\nmu = 0.1"
                .parse()
                .unwrap();
        SceneRecord {
            run: 3,
            parameters,
            constants: [
                ("slide_time_exact".to_string(), 4.0 / (7.0 * 0.2 * 9.81)),
                ("nothing".to_string(), f64::NEG_INFINITY),
            ]
            .into_iter()
            .collect(),
        }
    }

    /// A record survives its JSON bit for bit, infinities included; numbers read back typed.
    #[test]
    fn scene_records_round_trip_through_json() {
        let r = record();
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        assert!(text.contains("\"stiffness\": \"inf\""), "{text}");
        let back = SceneRecord::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.number("h").unwrap(), 0.001);
        assert_eq!(back.number("n_links").unwrap(), 12.0);
        assert_eq!(back.integer("n_links").unwrap(), 12);
        assert_eq!(back.number("stiffness").unwrap(), f64::INFINITY);
        assert_eq!(back.numbers("v0").unwrap(), [2.0, 0.0, 0.0]);
        assert_eq!(
            back.constant("slide_time_exact").unwrap(),
            4.0 / (7.0 * 0.2 * 9.81)
        );
        assert_eq!(back.constant("nothing").unwrap(), f64::NEG_INFINITY);
        for e in [
            back.number("scheme").unwrap_err(),
            back.number("radius").unwrap_err(),
            back.integer("h").unwrap_err(),
            back.numbers("h").unwrap_err(),
            back.constant("rolling_speed_exact").unwrap_err(),
        ] {
            assert!(
                matches!(e, StoreError::NotRecorded(ref m) if m.contains("run 3")),
                "{e}"
            );
        }
    }

    /// A meta's scenes come back in run order, a sharded run's merged from its shards; a meta
    /// without scenes has none, and asking for its scene says so.
    #[test]
    fn metas_read_their_scenes_and_shards_merge_them() {
        let dir = std::env::temp_dir().join(format!("contactlab-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("sweep.parquet");
        let rec = |run| SceneRecord { run, ..record() };
        for (k, runs) in [(1, [0u64, 2]), (2, [1, 3])] {
            let meta = json!({
                "runs": 2,
                "scenes": runs.iter().rev().map(|&r| rec(r).to_json()).collect::<Vec<_>>(),
            });
            let path = shard_path(&data.with_extension("meta.json"), (k, 2));
            std::fs::write(path, meta.to_string()).unwrap();
        }
        let m = RunMeta::of_run(&data);
        assert_eq!(m.runs, Some(4));
        assert_eq!(
            m.scenes.iter().map(|s| s.run).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(m.first_scene().unwrap(), &rec(0));
        std::fs::remove_dir_all(&dir).unwrap();
        let old = RunMeta::from_json(&json!({"runs": 1}));
        assert!(old.scenes.is_empty());
        assert!(matches!(old.first_scene(), Err(StoreError::NotRecorded(_))));
    }

    #[test]
    fn a_metas_provenance_names_the_threads_the_run_ran_on() {
        let dir =
            std::env::temp_dir().join(format!("contactlab-store-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("timed.parquet");
        write_meta(
            &data,
            &dir,
            None,
            1,
            RunMeta {
                runs: Some(1),
                ..RunMeta::default()
            },
        )
        .unwrap();
        let m = RunMeta::of_run(&data);
        assert_eq!(m.threads, Some(1));
        assert_eq!(m.provenance.map(|p| p.threads), Some(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
