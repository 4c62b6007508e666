//! Records the version of the compiler building this crate (`CONTACTLAB_RUSTC_VERSION`), for
//! the provenance of runs (`src/provenance.rs` says why not `rustc -V` at run time).

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "rustc (version unknown)".into());
    println!("cargo:rustc-env=CONTACTLAB_RUSTC_VERSION={version}");
    // Cargo reruns build scripts when the compiler changes; nothing else affects the output.
    println!("cargo:rerun-if-changed=build.rs");
}
