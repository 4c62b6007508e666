//! The end-to-end tests of the `contactlab` commands and the papers' reports, one module per
//! command or paper, in one test binary: each of them links the whole lab and polars (about
//! 300 MB in a debug build), and seventeen such binaries filled a CI machine's disk. nextest
//! still runs every test in its own process.

mod common;

mod architecture;
mod castro2022;
mod castro2022_clutter;
mod castro2022_report;
mod cli;
mod dirty_tree;
mod erleben2008;
mod every_file;
mod fidelity;
mod fidelity_ladder;
mod fuzz_regressions;
mod gradients;
mod hwangbo2018_report;
mod matrix;
mod mylapilli2014;
mod peers;
mod robots;
mod time_limit;
mod todorov2010;
mod toy_plugin;
