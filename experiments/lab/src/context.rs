//! What the runs of a lab share, borrowed: the registry every solve resolves against, the
//! root that configs, problem files and outputs resolve against, and the run settings. The
//! runners (a config's sweep, the matrix, problem sets, dumps) take this view; the
//! [`Lab`](crate::Lab), which owns the three, sits above them and is the public API.

use std::path::Path;
use std::time::Duration;

use crate::registry::Registry;

/// The time limit of every solve in a sweep whose solver sets none, so that no step can stall
/// a run: far above any solve the papers' scenes need (the slowest take well under a second).
pub const SWEEP_TIME_LIMIT: Duration = Duration::from_secs(10);

/// A lab's registry, root and settings, borrowed.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The formulations and drivers by name.
    pub registry: &'a Registry,
    /// The root configs and outputs resolve against.
    pub root: &'a Path,
    /// The run settings.
    pub settings: &'a Settings,
}

/// What every run of a lab shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Threads a run spreads its runs or problems over; `None` for rayon's default (one per
    /// core). Timing comparisons against one-threaded engines use 1.
    pub threads: Option<usize>,
    /// Progress bars on standard error.
    pub progress: bool,
    /// The time limit of a sweep's solve whose spec sets none ([`SWEEP_TIME_LIMIT`]).
    pub sweep_time_limit: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            threads: None,
            progress: false,
            sweep_time_limit: SWEEP_TIME_LIMIT,
        }
    }
}
