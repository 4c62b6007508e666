//! The lab's integration tests, one module per subject, in one test binary (each links the lab
//! and polars: separate binaries cost a link and over 100 MB of disk apiece). nextest still runs
//! every test in its own process.

mod configs;
mod engines;
mod ladder;
mod problems;
mod robots;
mod single_contact;
mod threads;
mod traces;
