//! Embeds the commit the extension is built from as `CONTACTLAB_BUILD_COMMIT` (the module's
//! `BUILD_COMMIT`): the commit's hash, with `-dirty` when tracked files differ from it, or
//! `unknown` outside a git checkout. A study that times or measures through the extension
//! records it and refuses one built from other code than the tree it reports on (`pip install
//! ./python` builds once and the installed copy stays until the next install).

use std::process::Command;

/// The trimmed output of `git args` run in this crate's directory, if it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]);
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    let value = match (commit, dirty) {
        (Some(c), Some(false)) => c,
        (Some(c), Some(true)) => format!("{c}-dirty"),
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=CONTACTLAB_BUILD_COMMIT={value}");
    // Run again when the commit moves (HEAD, the branch it names, the index) or any source the
    // extension links changes (a dirty build becomes clean by a commit, not by an edit).
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{branch}");
        }
    }
    for source in [
        "src",
        "Cargo.toml",
        "../core/src",
        "../formulations/src",
        "../multibody/src",
        "../experiments/scenes/src",
        "../experiments/runs/src",
        "../experiments/lab/src",
        "../Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={source}");
    }
}
