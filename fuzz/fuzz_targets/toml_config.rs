//! Experiment configs: any text through `ExperimentConfig::parse` (TOML, the solver specs, the
//! sweep's expansion and every scene's parameter check) must give a config or an error, never
//! a panic, a hang or an unbounded allocation. Nothing is run.
#![no_main]

use std::path::Path;

use contactlab_experiments::config::ExperimentConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = ExperimentConfig::parse(text, Path::new("fuzz.toml"));
});
