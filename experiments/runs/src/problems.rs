//! Problem-set configs (`kind = "problems"`): named solvers timed on problem files (and steps
//! of scenes), one row per (problem, solver). What a report shows of a solver on a fixed set of
//! problems (Castro's MuJoCo set, Hwangbo's problem files, the peers' solver times) comes from
//! such a run, with its provenance, never from a solve at report time.
//!
//! ```toml
//! kind = "problems"
//! paper = "castro2022"
//! name = "mujoco_set"
//! description = "SAP, L-BFGS and Clarabel on MuJoCo's exported steps"
//! rounds = 5                 # timed solves per (problem, solver), interleaved; the median is kept
//! slow_seconds = 0.2         # optional: a solver slower than this (median) after
//! slow_rounds = 3            #   slow_rounds rounds stops repeating on that problem...
//! slow_exempt = ["PGS"]      #   ...unless its label is listed here (it runs every round)
//! answers = true             # optional: keep each row's impulses `r` (a list column)
//!
//! [[sets]]                   # as the matrix's sets: files, dirs, scenes
//! name = "mujoco"
//! dirs = ["data/mujoco/global"]
//!
//! [reference]                # optional: another engine's answers beside each file
//! kind = "mujoco"            # `<dir>/<file stem>.json`: MuJoCo's r, R, v_ref, accuracy
//! dir = "data/mujoco/mujoco"
//!
//! [[solvers]]                # solver specs, as a config's [driver]
//! label = "SAP"
//! formulation = "sap"
//! optimizer = "newton-merit"
//! ```
//!
//! Rounds are interleaved (round after round, every problem and solver once), so the machine's
//! noise falls on all alike; the run is sequential, on one thread, since its point is timing.
//! Every timed solve starts from the problem as loaded (nothing a previous round derived, such
//! as the contact-space form, is reused).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{invalid, ConfigError, OutputSection, RunConfig};
use crate::matrix::{list_problems, ProblemEntry, SetSpec};
use crate::spec::SolverSpec;

/// The `[reference]` table: another engine's answers beside the problem files.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSection {
    /// Which engine's export: `mujoco` (the sidecars of `data/mujoco/mujoco/`).
    pub kind: String,
    /// The folder of the answers, one `<file stem>.json` per problem file.
    pub dir: PathBuf,
}

/// Which form of a problem the solvers get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemForm {
    /// As stored: a global problem stays generalized (SAP solves it so; contact-space
    /// formulations derive `W = H' M^-1 H`).
    #[default]
    AsStored,
    /// The contact-space form: a file that does not read as a local problem (FCLib local, or
    /// global converted) is left out of the run, and the report says how many were.
    Local,
}

/// A solve whose last timing was faster than this gets an untimed warm-up solve of the same
/// solver on the same problem before each timed one (the runner's protocol,
/// `contactlab_lab::problems`; the reports state it): what the previous solver left in cache
/// moved such solves by 5-15%. Slower solves are not moved by it, and a warm-up would double
/// their cost.
pub const WARM_UP_BELOW_SECONDS: f64 = 2e-3;

/// A whole problem-set config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemsConfig {
    /// Must be `"problems"`.
    pub kind: String,
    /// Paper key (its rows go to `data/runs/<paper>/<name>.parquet`).
    pub paper: String,
    /// The table or figure this run serves.
    pub name: String,
    /// One line for the report.
    #[serde(default)]
    pub description: String,
    /// Timed solves per (problem, solver); the median time is kept.
    #[serde(default = "one")]
    pub rounds: usize,
    /// A solver whose median time after `slow_rounds` rounds exceeds this many seconds stops
    /// repeating on that problem (slow solvers take fewer rounds); `None`: every round runs.
    #[serde(default)]
    pub slow_seconds: Option<f64>,
    /// See [`ProblemsConfig::slow_seconds`].
    #[serde(default = "three")]
    pub slow_rounds: usize,
    /// Labels of solvers the slow rule never stops: they run every round (a baseline whose
    /// ratio to another layout the report states).
    #[serde(default)]
    pub slow_exempt: Vec<String>,
    /// Keep each row's impulses `r` (a list column), for reports that compare two solvers'
    /// answers on the same problem.
    #[serde(default)]
    pub answers: bool,
    /// Which form the solvers get.
    #[serde(default)]
    pub form: ProblemForm,
    /// The problem sets.
    pub sets: Vec<SetSpec>,
    /// Another engine's answers, to measure each answer's distance to.
    #[serde(default)]
    pub reference: Option<ReferenceSection>,
    /// The solvers.
    pub solvers: Vec<SolverSpec>,
    /// Output locations.
    #[serde(default)]
    pub output: OutputSection,
}

fn one() -> usize {
    1
}

fn three() -> usize {
    3
}

/// The most rounds a config may ask for.
pub const MAX_ROUNDS: usize = 1000;

impl RunConfig for ProblemsConfig {
    const KIND: &'static str = "problems";

    fn kind(&self) -> &str {
        &self.kind
    }

    /// Rounds, solver labels, the exempt labels and the reference (the lab checks the solvers).
    fn check_structure(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| invalid(path, key, message);
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(invalid(
                "rounds",
                format!("must be in 1..={MAX_ROUNDS}, got {}", self.rounds),
            ));
        }
        if let Some(s) = self.slow_seconds.filter(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(invalid(
                "slow_seconds",
                format!("must be a positive number of seconds, got {s}"),
            ));
        }
        if self.slow_rounds == 0 {
            return Err(invalid("slow_rounds", "must be at least 1".into()));
        }
        if self.sets.is_empty() {
            return Err(invalid("sets", "no problem set".into()));
        }
        if self.solvers.is_empty() {
            return Err(invalid("solvers", "no solver".into()));
        }
        for (i, s) in self.solvers.iter().enumerate() {
            s.check_numbers()
                .map_err(|e| invalid(&format!("solvers[{i}]"), e))?;
        }
        let mut labels: Vec<String> = self.solvers.iter().map(SolverSpec::name).collect();
        labels.sort();
        if labels.windows(2).any(|w| w[0] == w[1]) {
            return Err(invalid(
                "solvers",
                "two solvers share a label; set `label` to tell them apart".into(),
            ));
        }
        if let Some(unknown) = self.slow_exempt.iter().find(|l| !labels.contains(l)) {
            return Err(invalid(
                "slow_exempt",
                format!(
                    "`{unknown}` is no solver's label; labels: {}",
                    labels.join(", ")
                ),
            ));
        }
        if let Some(r) = &self.reference {
            if r.kind != "mujoco" {
                return Err(invalid(
                    "reference.kind",
                    format!("unknown reference `{}`; known: mujoco", r.kind),
                ));
            }
        }
        Ok(())
    }
}

impl ProblemsConfig {
    /// Every problem, numbered over the sets ([`list_problems`]).
    pub fn problems(&self, root: &Path, path: &Path) -> Result<Vec<ProblemEntry>, ConfigError> {
        list_problems(&self.sets, root, path)
    }

    /// The rows' file under `root`: `data/runs/<paper>/<name>.parquet` unless `[output]` says.
    pub fn data_path(&self, root: &Path) -> PathBuf {
        root.join(self.output.data.clone().unwrap_or_else(|| {
            PathBuf::from(format!("data/runs/{}/{}.parquet", self.paper, self.name))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "kind = \"problems\"\npaper = \"p\"\nname = \"n\"\nrounds = 3\n\
        [[sets]]\nname = \"s\"\nfiles = [\"a.json\"]\n\
        [[solvers]]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n";

    fn error(text: &str) -> String {
        ProblemsConfig::parse(text, Path::new("p.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_problem_set_config_parses_and_its_mistakes_are_named() {
        let cfg = ProblemsConfig::parse(GOOD, Path::new("p.toml")).unwrap();
        assert_eq!((cfg.rounds, cfg.form), (3, ProblemForm::AsStored));
        assert_eq!(
            cfg.data_path(Path::new("/r")),
            Path::new("/r/data/runs/p/n.parquet")
        );
        let e = error(&GOOD.replace("rounds = 3", "rounds = 0"));
        assert!(e.contains("`rounds`"), "{e}");
        let e = error(&GOOD.replace("rounds = 3", "slow_seconds = -1.0"));
        assert!(e.contains("slow_seconds"), "{e}");
        let e = error(&format!(
            "{GOOD}[[solvers]]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n"
        ));
        assert!(e.contains("share a label"), "{e}");
        let e = error(&format!(
            "{GOOD}[reference]\nkind = \"drake\"\ndir = \"d\"\n"
        ));
        assert!(e.contains("reference.kind") && e.contains("drake"), "{e}");
        let e = error(&GOOD.replace("optimizer = \"pgs\"", "optimizer = \"pgs\"\ntol = -1.0"));
        assert!(e.contains("solvers[0]") && e.contains("tol"), "{e}");
        let e = error(&GOOD.replace("kind = \"problems\"", "kind = \"matrix\""));
        assert!(e.contains("`kind`"), "{e}");
        let e = error(&GOOD.replace("rounds = 3", "rounds = 3\nslow_exempt = [\"pgs\"]"));
        assert!(
            e.contains("slow_exempt") && e.contains("coulomb+pgs"),
            "{e}"
        );
    }

    #[test]
    fn exempt_labels_and_kept_answers_are_read() {
        let text = GOOD.replace(
            "rounds = 3",
            "rounds = 3\nslow_seconds = 0.2\nslow_exempt = [\"coulomb+pgs\"]\nanswers = true",
        );
        let cfg = ProblemsConfig::parse(&text, Path::new("p.toml")).unwrap();
        assert_eq!(cfg.slow_exempt, ["coulomb+pgs"]);
        assert!(cfg.answers);
        let plain = ProblemsConfig::parse(GOOD, Path::new("p.toml")).unwrap();
        assert!(plain.slow_exempt.is_empty() && !plain.answers);
    }
}
