//! The wall-clock [`Deadline`] of one solve: the drivers, the plugin flow
//! ([`crate::plugin`]) and the islands ([`crate::islands`]) check it inside their loops.

use std::time::{Duration, Instant};

/// A wall-clock deadline for one solve, derived from
/// [`SolveOptions::time_limit`](crate::SolveOptions::time_limit). argmin checks its own timeout
/// only between iterations; drivers also check this inside their loops (line searches, damping
/// retries, sweeps, restarts), so that a solve ends close to its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// No deadline.
    pub fn none() -> Deadline {
        Deadline(None)
    }

    /// `limit` from now (`None`: no deadline).
    pub fn after(limit: Option<Duration>) -> Deadline {
        Deadline(limit.and_then(|l| Instant::now().checked_add(l)))
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        self.0.is_some_and(|t| Instant::now() >= t)
    }

    /// Time left (zero once expired); `None` without a deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.0.map(|t| t.saturating_duration_since(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_expires_and_none_never_does() {
        assert!(!Deadline::none().expired());
        assert_eq!(Deadline::none().remaining(), None);
        assert!(Deadline::after(Some(Duration::ZERO)).expired());
        assert!(!Deadline::after(Some(Duration::from_secs(3600))).expired());
    }
}
