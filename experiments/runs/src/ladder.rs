//! Accuracy-against-time ladders (`kind = "ladder"`): ContactBench's main plot (Le Lidec et
//! al., "Contact Models in Robotics: a Comparative Analysis", T-RO 2024, sec. VI), every
//! compatible pair on the same sampled steps of each scene's recorded trajectory, at every rung
//! of a ladder of tolerances crossed with iteration caps, started cold and warm (issue 44).
//!
//! ```toml
//! kind = "ladder"
//! paper = "fidelity-ladder"
//! name = "ladder"
//! tols = [1e-4, 1e-6, 1e-8]     # each pair's stopping tolerance and the ruler's, per rung
//! caps = [10, 50, 200]          # iteration caps (each driver's own iterations)
//! starts = ["cold", "warm"]
//! samples = 200                 # steps per scene, spread evenly over those with contacts
//! time_limit = 1.0              # seconds per solve
//! # skip = ["mlcp-fb+trust-region"]; only = [...]
//!
//! [[scenes]]
//! name = "sliding_cube"         # the scene's name in rows and plots
//! config = "experiments/configs/fidelity/slides.toml"
//! driver = "implicit-ncp+todorov"   # whose trajectory: a driver of that config
//! run = 0                       # which of that driver's runs (its sweep's parameter sets)
//! # samples = 40                # this scene's steps, when not the ladder's `samples`
//! ```
//!
//! A rung's solve is the pair at that tolerance and cap, exactly as the fidelity study's
//! `[every_pair]` builds it (the tolerance is the driver's stop and the ruler's acceptance).
//! The trajectory is the one the scene's `driver` records: every pair meets the same
//! problems, so the rungs measure the solvers and not where their own trajectories went.
//! `cold` starts from zero (the project's one meaning of cold, as for MuJoCo with its warm
//! start disabled); `warm` starts from the pair's own answer to the trajectory's previous step,
//! solved at the ladder's tightest tolerance and largest cap, mapped onto this step's contacts
//! by contact key: the start a simulator that converged on the previous step would have.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{invalid, ConfigError, OutputSection, RunConfig};

/// How a rung's solve starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LadderStart {
    /// From zero.
    Cold,
    /// From the pair's own answer to the previous step.
    Warm,
}

impl LadderStart {
    /// `cold` or `warm`.
    pub fn as_str(self) -> &'static str {
        match self {
            LadderStart::Cold => "cold",
            LadderStart::Warm => "warm",
        }
    }
}

/// One scene of a ladder: a run of an experiment config whose trajectory supplies the steps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderScene {
    /// Its name in rows and plots (`sliding_cube`, `stack`, `pile`).
    pub name: String,
    /// The experiment config (relative to the workspace root).
    pub config: PathBuf,
    /// The label of the config's driver whose trajectory supplies the steps
    /// (`formulation+optimizer` for an `[every_pair]` config).
    pub driver: String,
    /// Which of that driver's runs (its sweep's parameter sets in run order; 0 is the first).
    #[serde(default)]
    pub run: usize,
    /// Steps sampled from this scene, when not the ladder's `samples` (a scene whose solves
    /// are dear, as the pile's, takes fewer).
    #[serde(default)]
    pub samples: Option<usize>,
}

/// A whole ladder config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LadderConfig {
    /// Must be `"ladder"`.
    pub kind: String,
    /// The report it feeds (`fidelity-ladder`).
    pub paper: String,
    /// The run's name (its data file is `data/runs/<paper>/<name>.parquet`).
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// The tolerances, one rung each.
    pub tols: Vec<f64>,
    /// The iteration caps, crossed with the tolerances.
    pub caps: Vec<u64>,
    /// The starts, crossed with both.
    pub starts: Vec<LadderStart>,
    /// Steps sampled per scene.
    pub samples: usize,
    /// Seconds per solve.
    pub time_limit: f64,
    /// `formulation+optimizer` pairs to leave out.
    #[serde(default)]
    pub skip: Vec<String>,
    /// When not empty, the only pairs that run.
    #[serde(default)]
    pub only: Vec<String>,
    /// The scenes.
    pub scenes: Vec<LadderScene>,
    /// Output locations.
    #[serde(default)]
    pub output: OutputSection,
}

/// The most rungs a ladder may have (tolerances x caps x starts): a bound on the run's size.
pub const MAX_RUNGS: usize = 200;

impl RunConfig for LadderConfig {
    const KIND: &'static str = "ladder";

    fn kind(&self) -> &str {
        &self.kind
    }

    /// Tolerances, caps, starts, samples, the limit and the scenes' names (the lab checks
    /// the scenes' configs and the pairs against its registry).
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| Err(invalid(path, key, message));
        if self.tols.is_empty() || self.caps.is_empty() || self.starts.is_empty() {
            return bad(
                "tols",
                "tols, caps and starts each need at least one value".into(),
            );
        }
        if let Some(t) = self.tols.iter().find(|t| !(**t > 0.0 && t.is_finite())) {
            return bad("tols", format!("every tolerance must be positive, got {t}"));
        }
        if self.caps.contains(&0) {
            return bad("caps", "every cap must be at least 1".into());
        }
        let rungs = self.tols.len() * self.caps.len() * self.starts.len();
        if rungs > MAX_RUNGS {
            return bad(
                "tols",
                format!("{rungs} rungs (tols x caps x starts); at most {MAX_RUNGS}"),
            );
        }
        let samples_ok = |n: usize| (1..=1000).contains(&n);
        if !samples_ok(self.samples) {
            return bad(
                "samples",
                format!("must be in 1..=1000, got {}", self.samples),
            );
        }
        if !(self.time_limit > 0.0 && self.time_limit <= 3600.0) {
            return bad(
                "time_limit",
                format!("must be in (0, 3600] seconds, got {}", self.time_limit),
            );
        }
        if self.scenes.is_empty() {
            return bad("scenes", "no scene".into());
        }
        for (i, s) in self.scenes.iter().enumerate() {
            if self.scenes[..i].iter().any(|o| o.name == s.name) {
                return bad(&format!("scenes[{i}].name"), format!("`{}` twice", s.name));
            }
            if let Some(n) = s.samples.filter(|&n| !samples_ok(n)) {
                return bad(
                    &format!("scenes[{i}].samples"),
                    format!("must be in 1..=1000, got {n}"),
                );
            }
        }
        Ok(())
    }
}

impl LadderConfig {
    /// The tightest tolerance and the largest cap: the warm start's previous-step solve.
    pub fn tightest(&self) -> (f64, u64) {
        let tol = self.tols.iter().copied().fold(f64::INFINITY, f64::min);
        let cap = self.caps.iter().copied().max().unwrap_or(1);
        (tol, cap)
    }

    /// Every rung, `(start, tol, cap)`: starts slowest, then tolerances, then caps, each in
    /// the config's order.
    pub fn rungs(&self) -> Vec<(LadderStart, f64, u64)> {
        let mut out = Vec::new();
        for &s in &self.starts {
            for &t in &self.tols {
                for &c in &self.caps {
                    out.push((s, t, c));
                }
            }
        }
        out
    }

    /// The steps sampled from `scene`: its own `samples`, else the ladder's.
    pub fn samples_of(&self, scene: &LadderScene) -> usize {
        scene.samples.unwrap_or(self.samples)
    }

    /// Where the run's rows go.
    pub fn data_path(&self, root: &Path) -> PathBuf {
        root.join(self.output.data.clone().unwrap_or_else(|| {
            PathBuf::from(format!("data/runs/{}/{}.parquet", self.paper, self.name))
        }))
    }
}

/// `samples` steps spread evenly over `candidates` (sorted), first and last included; all of
/// them when there are no more than `samples`.
pub fn spread(candidates: &[usize], samples: usize) -> Vec<usize> {
    let n = candidates.len();
    if n <= samples {
        return candidates.to_vec();
    }
    if samples == 1 {
        return vec![candidates[0]];
    }
    // Index k of n: round(k (n - 1) / (samples - 1)), strictly increasing since n > samples.
    (0..samples)
        .map(|k| candidates[(k * (n - 1) + (samples - 1) / 2) / (samples - 1)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "kind = \"ladder\"\npaper = \"fidelity-ladder\"\nname = \"l\"\n\
        tols = [1e-4, 1e-8]\ncaps = [10, 200]\nstarts = [\"cold\", \"warm\"]\nsamples = 5\n\
        time_limit = 1.0\n[[scenes]]\nname = \"a\"\nconfig = \"x.toml\"\ndriver = \"d\"\n";

    #[test]
    fn a_ladder_parses_and_crosses_its_rungs() {
        let cfg = LadderConfig::parse(GOOD, Path::new("l.toml")).unwrap();
        let rungs = cfg.rungs();
        assert_eq!(rungs.len(), 8);
        assert_eq!(rungs[0], (LadderStart::Cold, 1e-4, 10));
        assert_eq!(rungs[7], (LadderStart::Warm, 1e-8, 200));
        assert_eq!(cfg.tightest(), (1e-8, 200));
        assert_eq!(cfg.samples_of(&cfg.scenes[0]), 5);
        let own = GOOD.replace("driver = \"d\"\n", "driver = \"d\"\nsamples = 3\n");
        let own = LadderConfig::parse(&own, Path::new("l.toml")).unwrap();
        assert_eq!(own.samples_of(&own.scenes[0]), 3);
        assert!(cfg
            .data_path(Path::new("/r"))
            .ends_with("data/runs/fidelity-ladder/l.parquet"));
    }

    #[test]
    fn bad_ladders_name_their_key() {
        for (from, to, key) in [
            ("tols = [1e-4, 1e-8]", "tols = [0.0]", "tols"),
            ("caps = [10, 200]", "caps = [0]", "caps"),
            ("samples = 5", "samples = 0", "samples"),
            (
                "driver = \"d\"\n",
                "driver = \"d\"\nsamples = 2000\n",
                "scenes[0].samples",
            ),
            ("time_limit = 1.0", "time_limit = -1.0", "time_limit"),
            ("starts = [\"cold\", \"warm\"]", "starts = []", "tols"),
        ] {
            let text = GOOD.replace(from, to);
            let e = LadderConfig::parse(&text, Path::new("l.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{to}: {e}");
        }
        let twice =
            format!("{GOOD}[[scenes]]\nname = \"a\"\nconfig = \"y.toml\"\ndriver = \"d\"\n");
        let e = LadderConfig::parse(&twice, Path::new("l.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("scenes[1].name"), "{e}");
        let e = LadderConfig::parse(&GOOD.replace("\"warm\"", "\"hot\""), Path::new("l"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("hot"), "{e}");
    }

    #[test]
    fn the_spread_keeps_both_ends_and_is_even() {
        let c: Vec<usize> = (10..110).collect();
        let s = spread(&c, 5);
        assert_eq!(s, vec![10, 35, 60, 84, 109]);
        assert_eq!(spread(&c[..3], 5), vec![10, 11, 12]);
        assert_eq!(spread(&c, 1), vec![10]);
        let s = spread(&c, 99);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && s.len() == 99);
    }
}
