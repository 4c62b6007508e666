//! Configs: any text through `ExperimentConfig::parse` (TOML, the sweep's expansion) and the
//! lab's check (the solver specs against the registry, every scene's parameter check), and
//! through `MatrixConfig::parse` and its check (the matrix's problem sets, budget and pairs),
//! must give a config or an error, never a panic, a hang or an unbounded allocation. Nothing is
//! run.
#![no_main]

use std::path::Path;

use std::sync::OnceLock;

use contactlab_experiments::config::{ExperimentConfig, RunConfig};
use contactlab_experiments::matrix::MatrixConfig;
use contactlab_experiments::Lab;
use libfuzzer_sys::fuzz_target;

static LAB: OnceLock<Lab> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lab = LAB.get_or_init(Lab::standard);
    let path = Path::new("fuzz.toml");
    if let Ok(cfg) = ExperimentConfig::parse(text, path) {
        let _ = lab.check_experiment(&cfg, path);
    }
    if let Ok(cfg) = MatrixConfig::parse(text, path) {
        let _ = lab.check_matrix(&cfg, path);
    }
});
