//! The workspace's source files: every `.rs` file under a member's folder (the root
//! `Cargo.toml`'s `workspace.members`), skipping `target/`, `fuzz/`, hidden folders and the
//! folders of other members (`experiments/` holds `experiments/report/`: each file belongs to
//! the innermost member).

use std::path::{Path, PathBuf};

/// One `.rs` file of a member.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Where it is on disk.
    pub path: PathBuf,
    /// Its path from the workspace root, `/`-separated: the file's name in the rules.
    pub rel: String,
    /// Its module path in its crate (`src/analysis/mod.rs` -> `analysis`, `src/lib.rs` ->
    /// nothing, `build.rs` -> `build`, `tests/a/b.rs` -> `tests::a::b`).
    pub module: Vec<String>,
    /// Under its crate's `tests/` or `benches/`: test code whole.
    pub test_file: bool,
}

/// The workspace root: two folders above this crate.
pub fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    here.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", here.display()))
}

/// The members' folders, as the root manifest lists them.
pub fn members(root: &Path) -> Vec<String> {
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let members = table["workspace"]["members"]
        .as_array()
        .expect("workspace.members is a list");
    members
        .iter()
        .map(|m| {
            let m = m.as_str().expect("a member is a folder");
            assert!(!m.contains('*'), "member globs are not read: {m}");
            m.trim_end_matches('/').to_string()
        })
        .collect()
}

/// A file's module path from its path inside its crate.
pub fn module_path(in_crate: &str) -> Vec<String> {
    let mut parts: Vec<String> = in_crate
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.first().is_some_and(|p| p == "src") {
        parts.remove(0);
        if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
            parts.clear();
        }
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Every `.rs` file of every member, sorted by path.
pub fn source_files(root: &Path) -> Vec<SourceFile> {
    let members = members(root);
    let member_dirs: Vec<PathBuf> = members.iter().map(|m| root.join(m)).collect();
    let mut files = Vec::new();
    for (member, dir) in members.iter().zip(&member_dirs) {
        let mut found = Vec::new();
        walk(dir, dir, &member_dirs, &mut found);
        for path in found {
            let in_crate = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let rel = if member == "." {
                in_crate.clone()
            } else {
                format!("{member}/{in_crate}")
            };
            files.push(SourceFile {
                path,
                test_file: in_crate.starts_with("tests/") || in_crate.starts_with("benches/"),
                module: module_path(&in_crate),
                rel,
            });
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    files
}

fn walk(dir: &Path, member: &Path, members: &[PathBuf], out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let skipped = name == "target"
                || name == "fuzz"
                || name.starts_with('.')
                || (path != member && members.contains(&path));
            if !skipped {
                walk(&path, member, members, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_paths_follow_rusts_file_layout() {
        let m = |p: &str| module_path(p).join("::");
        assert_eq!(m("src/lib.rs"), "");
        assert_eq!(m("src/main.rs"), "");
        assert_eq!(m("src/analysis/mod.rs"), "analysis");
        assert_eq!(m("src/analysis/fidelity.rs"), "analysis::fidelity");
        assert_eq!(m("src/bin/contactlab.rs"), "bin::contactlab");
        assert_eq!(m("build.rs"), "build");
        assert_eq!(m("tests/end_to_end/main.rs"), "tests::end_to_end::main");
    }

    #[test]
    fn every_member_is_walked_once() {
        let root = root();
        let files = source_files(&root);
        let lib = |rel: &str| files.iter().filter(|f| f.rel == rel).count();
        assert_eq!(lib("experiments/report/src/lib.rs"), 1);
        assert_eq!(lib("experiments/house/src/scan.rs"), 1);
        assert!(files.iter().all(|f| !f.rel.starts_with("fuzz/")));
        assert!(files.iter().all(|f| !f.rel.contains("target/")));
        assert!(files
            .iter()
            .any(|f| f.test_file && f.rel.starts_with("experiments/tests/")));
    }
}
