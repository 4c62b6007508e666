//! Erleben and Ortiz's random boxed LCPs as a scene (section "Numerical behavior and future
//! work", Tables 1-2: "random symmetric positive definite systems of increasing problem size",
//! sizes 12 to 384, 100 cases per size).
//!
//! There is no physics: every step is a fresh, independent problem from
//! [`random_boxed_lcp`]`(size, step_seed(seed, step), family)`, so that a run of `n` steps is
//! `n` test cases of one size and the runner's machinery (solvers side by side, per-step rows,
//! DataFrames) serves the paper's tables unchanged. [`Scene::advance`] only counts the step.
//!
//! * `size` is the paper's "total number of variables", `3 x contacts`; the paper's sizes are
//!   `12, 24, 48, 96, 192, 384` ([`PAPER_SIZES`]); we accept any multiple of 3 in `12..=384`.
//! * `family`: `"delassus"` (default, [`RandomProblemParams::default`]) or `"opentissue"`
//!   ([`RandomProblemParams::opentissue`]); see the generator's documentation for both.
//! * Seeds (the paper gives none): step `k` of a run with `seed = s` uses the generator seed
//!   [`step_seed`]`(s, k) = splitmix64(splitmix64(s) ^ k)` (SplitMix64's finalizer, a bijection
//!   of `u64`), so the steps of one run are distinct problems, one `(seed, step)` always gives
//!   the same problem, and any single case can be regenerated with the generator alone.
//! * Contacts: contact `i` gets the key `ContactKey::Wall { ball: i, wall: 0 }` (stable across
//!   steps, so a warm start would carry the previous, unrelated problem's answer: leave warm
//!   starts off here), the identity frame and gap 0; `free` is empty (no generalized
//!   velocities). Observable: `size`.

use contactlab_core::{CoreError, LocalProblem};
use contactlab_formulations::erleben::generator::{
    random_boxed_lcp, RandomProblemParams, PAPER_SIZES,
};
use nalgebra::Matrix3;
use serde::{Deserialize, Serialize};

use crate::error::SceneError;
use crate::scene::{Contact, ContactKey, ContactStep, Scene};

/// The smallest accepted `size` (the paper's smallest).
pub const MIN_SIZE: usize = 12;
/// The largest accepted `size` (the paper's largest).
pub const MAX_SIZE: usize = 384;

/// Which random family (`family = "delassus" | "opentissue"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
pub enum LcpFamily {
    /// `W = B B' + eps I`, contact-like (the generator's default parameters).
    #[default]
    #[serde(rename = "delassus")]
    Delassus,
    /// OpenTissue's `A = R'R + diag(d)`, `b = -r`, `mu = 1`.
    #[serde(rename = "opentissue")]
    OpenTissue,
}

impl LcpFamily {
    /// The generator's parameters of this family.
    pub fn params(self) -> RandomProblemParams {
        match self {
            LcpFamily::Delassus => RandomProblemParams::default(),
            LcpFamily::OpenTissue => RandomProblemParams::opentissue(),
        }
    }
}

fn default_size() -> usize {
    PAPER_SIZES[0]
}

/// The random-LCP parameters (`[scene.params]`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomLcpConfig {
    /// Rows of each problem, `3 x contacts`, a multiple of 3 in `12..=384` (default 12).
    #[serde(default = "default_size")]
    pub size: usize,
    /// The run's seed; step `k` uses [`step_seed`]`(seed, k)`.
    #[serde(default)]
    pub seed: u64,
    /// The random family.
    #[serde(default)]
    pub family: LcpFamily,
}

impl Default for RandomLcpConfig {
    fn default() -> Self {
        RandomLcpConfig {
            size: default_size(),
            seed: 0,
            family: LcpFamily::default(),
        }
    }
}

impl RandomLcpConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors.
    pub fn from_table(params: &toml::Table) -> Result<RandomLcpConfig, SceneError> {
        toml::Value::Table(params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SceneError::Parse(e.message().to_string()))
    }

    /// Checks `size`.
    pub fn validate(&self) -> Result<(), SceneError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.size) || !self.size.is_multiple_of(3) {
            return Err(SceneError::Param {
                key: "size",
                message: format!(
                    "must be a multiple of 3 in {MIN_SIZE}..={MAX_SIZE}, got {}",
                    self.size
                ),
            });
        }
        Ok(())
    }
}

/// SplitMix64's output function (a bijection of `u64`).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator seed of step `step` of a run seeded `seed`: `splitmix64(splitmix64(seed) ^
/// step)`; distinct for distinct steps of one run.
pub fn step_seed(seed: u64, step: u64) -> u64 {
    splitmix64(splitmix64(seed) ^ step)
}

/// A sequence of independent random boxed LCPs, one per step.
#[derive(Debug, Clone)]
pub struct RandomLcp {
    /// The parameters.
    pub config: RandomLcpConfig,
    /// Steps taken so far (the index of the next problem).
    pub step: u64,
}

impl RandomLcp {
    /// A validated sequence starting at step 0.
    pub fn new(config: &RandomLcpConfig) -> Result<RandomLcp, SceneError> {
        config.validate()?;
        Ok(RandomLcp {
            config: config.clone(),
            step: 0,
        })
    }

    /// The problem of step `step` (the same for the same `seed`, `size`, `family`).
    pub fn problem_at(&self, step: u64) -> Result<LocalProblem, SceneError> {
        let c = &self.config;
        random_boxed_lcp(c.size, step_seed(c.seed, step), &c.family.params()).map_err(|e| match e {
            CoreError::Problem(p) => SceneError::Problem(p),
            other => SceneError::Param {
                key: "family",
                message: other.to_string(),
            },
        })
    }

    /// This step's problem with its placeholder contacts.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let problem = self.problem_at(self.step)?;
        let contacts = (0..problem.num_contacts())
            .map(|i| Contact {
                key: ContactKey::Wall { ball: i, wall: 0 },
                frame: Matrix3::identity(),
                gap: 0.0,
            })
            .collect();
        Ok(ContactStep {
            contacts,
            problem: problem.into(),
            free: Vec::new(),
        })
    }
}

impl Scene for RandomLcp {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        RandomLcp::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let expected = 3 * step.contacts.len();
        if r.len() != expected {
            return Err(SceneError::Impulses {
                expected,
                found: r.len(),
            });
        }
        self.step += 1;
        Ok(())
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        vec![("size", self.config.size as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w_and_q(p: &LocalProblem) -> (Vec<f64>, Vec<f64>) {
        let w = p.dense_w();
        let n = w.nrows();
        ((0..n * n).map(|k| w[(k / n, k % n)]).collect(), p.q.clone())
    }

    #[test]
    fn steps_are_distinct_and_seeds_reproduce() {
        for family in [LcpFamily::Delassus, LcpFamily::OpenTissue] {
            let cfg = RandomLcpConfig {
                size: 24,
                seed: 5,
                family,
            };
            let mut a = RandomLcp::new(&cfg).unwrap();
            let mut b = RandomLcp::new(&cfg).unwrap();
            let mut seen = Vec::new();
            for k in 0..5 {
                let sa = a.contact_step().unwrap();
                let sb = b.contact_step().unwrap();
                assert_eq!(sa.problem.local().unwrap().q.len(), 24);
                assert_eq!(sa.contacts.len(), 8);
                assert_eq!(sa.contacts[3].key, ContactKey::Wall { ball: 3, wall: 0 });
                assert_eq!(sa.contacts[3].frame, Matrix3::identity());
                assert_eq!(
                    w_and_q(sa.problem.local().unwrap()),
                    w_and_q(sb.problem.local().unwrap()),
                    "same seed, same problem at step {k}"
                );
                let this = w_and_q(sa.problem.local().unwrap());
                assert!(
                    seen.iter().all(|s| *s != this),
                    "step {k} repeats an earlier problem"
                );
                seen.push(this);
                // Exactly the generator's problem for the documented seed.
                let direct = random_boxed_lcp(24, step_seed(5, k), &family.params()).unwrap();
                assert_eq!(w_and_q(&direct), w_and_q(sa.problem.local().unwrap()));
                a.advance(&sa, &[0.0; 24]).unwrap();
                b.advance(&sb, &[0.0; 24]).unwrap();
                assert_eq!(a.step, k + 1);
            }
            let other = RandomLcp::new(&RandomLcpConfig { seed: 6, ..cfg }).unwrap();
            assert_ne!(w_and_q(&other.problem_at(0).unwrap()), seen[0]);
            assert_eq!(a.observables(), vec![("size", 24.0)]);
        }
        let mut s = RandomLcp::new(&RandomLcpConfig::default()).unwrap();
        let cs = s.contact_step().unwrap();
        assert!(s
            .advance(&cs, &[0.0; 3])
            .unwrap_err()
            .to_string()
            .contains("expected 12"));
    }

    #[test]
    fn bad_parameters_are_named_and_unknown_keys_rejected() {
        let parse = |s: &str| RandomLcpConfig::from_table(&s.parse::<toml::Table>().unwrap());
        for text in ["size = 13", "size = 9", "size = 387", "size = 0"] {
            let e = RandomLcp::new(&parse(text).unwrap())
                .unwrap_err()
                .to_string();
            assert!(e.contains("`size`"), "{text}: {e}");
        }
        let ok = parse("size = 384\nseed = 3\nfamily = \"opentissue\"").unwrap();
        assert_eq!(
            ok,
            RandomLcpConfig {
                size: 384,
                seed: 3,
                family: LcpFamily::OpenTissue
            }
        );
        assert!(ok.validate().is_ok());
        assert_eq!(parse("").unwrap(), RandomLcpConfig::default());
        let e = parse("family = \"gaussian\"").unwrap_err().to_string();
        assert!(e.contains("gaussian"), "{e}");
        let e = parse("size = 12\ncases = 100").unwrap_err().to_string();
        assert!(e.contains("cases"), "{e}");
        assert!(parse("seed = -1").is_err());
    }
}
