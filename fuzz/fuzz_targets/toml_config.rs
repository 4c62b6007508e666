//! Configs: any text through `ExperimentConfig::parse` (TOML, the solver specs, the sweep's
//! expansion and every scene's parameter check) and through `MatrixConfig::parse` (the matrix's
//! problem sets, budget and pairs) must give a config or an error, never a panic, a hang or an
//! unbounded allocation. Nothing is run.
#![no_main]

use std::path::Path;

use contactlab_experiments::config::ExperimentConfig;
use contactlab_experiments::matrix::MatrixConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.toml");
    let _ = ExperimentConfig::parse(text, path);
    let _ = MatrixConfig::parse(text, path);
});
