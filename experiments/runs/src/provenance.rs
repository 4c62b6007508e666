//! Where a run's numbers come from: the commit of the checkout, the compiler, the build
//! profile, the CPU, the threads and the date. `contactlab run` captures it into each run's
//! `<name>.meta.json`; the reports print it from there.
//!
//! The rustc version is the one that compiled this crate, recorded by `build.rs` at build
//! time (`CONTACTLAB_RUSTC_VERSION`): running `rustc -V` at run time would name whatever
//! toolchain is on `PATH`, which need not be the one that built the binary (a rustup
//! override, a binary copied to a cluster node without Rust). The commit is read with `git`
//! at run time from the workspace root: in the normal flow (`just reproduce`, `cargo run`)
//! cargo rebuilds the binary from that same checkout right before it runs.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The conditions of one run (or of a report, when its runs recorded none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Short commit hash of the checkout, `+dirty` when tracked files had changes;
    /// `unknown` outside a git checkout.
    pub commit: String,
    /// `rustc -V` of the compiler that built the binary.
    pub rustc: String,
    /// `release` or `debug` (whether debug assertions were compiled in).
    pub build: String,
    /// CPU model (`/proc/cpuinfo`), `unknown` where it cannot be read.
    pub cpu: String,
    /// Logical CPUs of the machine.
    pub cpus: usize,
    /// Threads of the rayon pool the sweep ran on.
    pub threads: usize,
    /// UTC date and time, RFC 3339 to the second.
    pub date: String,
}

impl Provenance {
    /// The conditions now, with the commit of the git checkout at `root`.
    pub fn capture(root: &Path) -> Provenance {
        Provenance {
            commit: commit(root),
            rustc: env!("CONTACTLAB_RUSTC_VERSION").to_string(),
            build: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .to_string(),
            cpu: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            threads: rayon::current_num_threads(),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }
    }

    /// The provenance recorded in a run's meta JSON (`"provenance": {...}`), if any.
    pub fn from_meta(meta: &serde_json::Value) -> Option<Provenance> {
        serde_json::from_value(meta.get("provenance")?.clone()).ok()
    }

    /// One line: `commit abc1234+dirty, rustc 1.85.0 (...), release build, <cpu> (2 CPUs),
    /// 2 threads, 2026-11-23T11:25:00Z`.
    pub fn summary(&self) -> String {
        format!(
            "commit `{}`, {}, {} build, {} ({} CPUs), {} threads, {}",
            self.commit, self.rustc, self.build, self.cpu, self.cpus, self.threads, self.date
        )
    }
}

/// The commit of the checkout at `root` as the provenance records it ([`Provenance::commit`]),
/// without capturing the rest.
pub fn tree_commit(root: &Path) -> String {
    commit(root)
}

/// Whether a recorded commit says the tree had uncommitted changes (or its state could not be
/// read): `abc1234+dirty`, `abc1234+unknown-status`.
pub fn is_dirty(commit: &str) -> bool {
    commit.ends_with("+dirty") || commit.ends_with("+unknown-status")
}

/// `git rev-parse --short HEAD` at `root`, with `+dirty` when `git status` lists changed
/// tracked files (untracked files cannot enter the build without a tracked file changing).
/// The generated reports are left out: `contactlab reproduce` rewrites them between the runs
/// of one reproduction, and they feed no run.
fn commit(root: &Path) -> String {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        None => "unknown".into(),
        Some(hash) => match git(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            ".",
            ":(exclude)reports",
        ]) {
            Some(s) if s.is_empty() => hash,
            Some(_) => format!("{hash}+dirty"),
            None => format!("{hash}+unknown-status"),
        },
    }
}

/// The first `model name` of `/proc/cpuinfo` (Linux), else `unknown`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| parse_cpu_model(&s))
        .unwrap_or_else(|| "unknown".into())
}

/// The value of the first `model name` line of a `/proc/cpuinfo` text.
fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "model name").then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_fills_every_field_and_round_trips_through_the_meta() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let p = Provenance::capture(&root);
        assert!(p.rustc.starts_with("rustc "), "{}", p.rustc);
        assert_eq!(p.build == "debug", cfg!(debug_assertions));
        assert!(p.threads >= 1 && !p.cpu.is_empty());
        // RFC 3339 UTC to the second: 2026-11-23T11:25:00Z.
        assert_eq!(p.date.len(), 20, "{}", p.date);
        assert!(p.date.ends_with('Z') && p.date.as_bytes()[10] == b'T');
        let meta = serde_json::json!({"wall_seconds": 1.0, "provenance": p});
        assert_eq!(Provenance::from_meta(&meta), Some(p.clone()));
        assert_eq!(Provenance::from_meta(&serde_json::json!({})), None);
        let s = p.summary();
        assert!(
            s.contains(&p.commit) && s.contains("debug build") && s.contains(&p.date),
            "{s}"
        );
    }

    #[test]
    fn commits_outside_a_checkout_are_unknown() {
        let dir = std::env::temp_dir().join(format!("contactlab-prov-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A temp dir may sit inside some other checkout; only a plain directory says unknown.
        if Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .is_ok_and(|o| !o.status.success())
        {
            assert_eq!(commit(&dir), "unknown");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dirty_commits_are_told_from_clean_ones() {
        assert!(is_dirty("abc1234+dirty") && is_dirty("abc1234+unknown-status"));
        assert!(!is_dirty("abc1234") && !is_dirty("unknown"));
    }

    #[test]
    fn cpu_model_is_the_first_model_name() {
        let text = "processor\t: 0\nvendor_id\t: X\nmodel name\t: AMD  EPYC 7B13\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(parse_cpu_model(text).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(parse_cpu_model("nothing"), None);
    }
}
