//! The errors of reading and writing a run's files ([`crate::store`]).

use polars::prelude::PolarsError;

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
    /// The meta does not record what was asked of it (a run written before it did: run it
    /// again), or records it with another type.
    #[error("{0}")]
    NotRecorded(String),
}
