//! The workspace's shape, checked so that it cannot drift silently (`docs/DESIGN.md`, "The
//! flow of data"):
//!
//! - no import loop between the modules of any crate (a module's `use` of its own ancestors,
//!   `super::` and the crate root, is containment, not a dependency, and is left out);
//! - the crate graph is the data flow: scenes never see DataFrames, the runs crate knows
//!   neither solvers nor scenes, and the reports depend on neither the formulations nor the
//!   lab, so they cannot solve; the Python package wraps the lab and reaches neither the
//!   command line nor the reports;
//! - the README's layout section names every crate of the workspace with its folder, its
//!   package name and its modules.
//!
//! The module graph is read from the source text: `use` trees and inline paths that start with
//! `crate::`, `super::` or `self::`, resolved to the longest module they name. Comments and
//! string literals are skipped; inline `mod name { ... }` blocks are followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use contactlab_experiments::toml;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A workspace member: its package name, folder and manifest.
struct Member {
    name: String,
    dir: PathBuf,
    manifest: toml::Table,
}

fn read_toml(path: &Path) -> toml::Table {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn members() -> Vec<Member> {
    let root = read_toml(&workspace().join("Cargo.toml"));
    root["workspace"]["members"]
        .as_array()
        .expect("workspace.members")
        .iter()
        .map(|m| {
            let dir = workspace().join(m.as_str().unwrap());
            let manifest = read_toml(&dir.join("Cargo.toml"));
            Member {
                name: manifest["package"]["name"].as_str().unwrap().to_string(),
                dir,
                manifest,
            }
        })
        .collect()
}

/// The normal (not dev, not build) dependencies a member names.
fn normal_deps(m: &Member) -> BTreeSet<String> {
    m.manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every package `name` reaches through normal dependencies on workspace members, and the
/// outside packages those members name directly.
fn closure(members: &[Member], name: &str) -> BTreeSet<String> {
    let by_name: BTreeMap<&str, &Member> = members.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut seen = BTreeSet::new();
    let mut stack = vec![name.to_string()];
    while let Some(n) = stack.pop() {
        let Some(m) = by_name.get(n.as_str()) else {
            continue;
        };
        for d in normal_deps(m) {
            if seen.insert(d.clone()) {
                stack.push(d);
            }
        }
    }
    seen
}

#[test]
fn the_crate_graph_is_the_data_flow() {
    let ms = members();
    let deps = |name: &str| closure(&ms, name);
    let scenes = deps("contactlab-scenes");
    assert!(
        !scenes.contains("polars") && !scenes.contains("contactlab-lab"),
        "scenes reach {scenes:?}"
    );
    let runs = deps("contactlab-runs");
    for no in [
        "contactlab-core",
        "contactlab-formulations",
        "contactlab-scenes",
        "contactlab-lab",
    ] {
        assert!(!runs.contains(no), "the runs crate reaches {no}");
    }
    let report = deps("contactlab-report");
    for no in [
        "contactlab-formulations",
        "contactlab-lab",
        "contactlab-core",
        "contactlab-scenes",
    ] {
        assert!(
            !report.contains(no),
            "the reports reach {no}: they could solve or simulate"
        );
    }
    let lab = deps("contactlab-lab");
    assert!(
        !lab.contains("contactlab-report"),
        "the lab writes runs, it never reads reports"
    );
    // The Python package wraps the lab, never the command line or the reports.
    let python = deps("contactlab-python");
    assert!(
        python.contains("contactlab-lab"),
        "the Python package wraps the lab"
    );
    for no in ["contactlab-experiments", "contactlab-report"] {
        assert!(
            !python.contains(no),
            "the Python package reaches {no}: it must wrap the lab, not the command line"
        );
    }
}

/// One crate's modules: module path (`a::b`, `` for the root) -> its file.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "bin") {
                    stack.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts
                .last()
                .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
            {
                parts.pop();
            }
            out.insert(parts.join("::"), p);
        }
    }
    out
}

/// The source without comments and the contents of string and character literals.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + close.len();
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                i += 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{..}'), or a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|k| i + 2 + k)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let c = text[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a `use` tree names, `{a, b::{c, d}}` expanded: each as its segments.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn go(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(open) = tree.find('{') {
            let head: Vec<String> = tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut p = prefix.to_vec();
            p.extend(head);
            // Split the inner list at top-level commas.
            let (mut depth, mut start) = (0, 0);
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        go(&inner[start..k], &p, out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            go(&inner[start..], &p, out);
            return;
        }
        let path = tree.split(" as ").next().unwrap_or(tree);
        let mut p = prefix.to_vec();
        p.extend(
            path.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "*")
                .map(String::from),
        );
        out.push(p);
    }
    let mut out = Vec::new();
    go(tree, &[], &mut out);
    out
}

/// Every path of `code` of two segments or more, with the inline module (`mod tests { ... }`)
/// it sits in, relative to the file's module. A path that does not start with `crate`, `super`
/// or `self` is returned as `self::path`: it names a module only where its first segment is a
/// child module of the one it is written in (`pub use balls::Ball;`), which [`loops`] checks.
fn paths(code: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let word_at = |i: usize| -> String {
        chars[i..]
            .iter()
            .take_while(|c| is_ident(**c))
            .collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '{' {
            depth += 1;
            i += 1;
            continue;
        }
        if c == '}' {
            depth = depth.saturating_sub(1);
            while inline.last().is_some_and(|m| m.1 > depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        let boundary = i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':';
        if !boundary || !is_ident(c) {
            i += 1;
            continue;
        }
        let word = word_at(i);
        let here: Vec<String> = inline.iter().map(|m| m.0.clone()).collect();
        if word == "mod" {
            let rest: String = chars[i + 3..].iter().collect();
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| is_ident(*c))
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start().to_string();
            if after.starts_with('{') {
                inline.push((name, depth + 1));
            }
            i += 3;
            continue;
        }
        if word == "use" {
            let end = chars[i..]
                .iter()
                .position(|c| *c == ';')
                .map_or(chars.len(), |k| i + k);
            let tree: String = chars[i + 3..end].iter().collect();
            for p in expand_use(&tree) {
                if p.first()
                    .is_some_and(|s| s == "crate" || s == "super" || s == "self")
                {
                    out.push((here.clone(), p));
                } else if p.len() > 1 {
                    out.push((here.clone(), relative(p)));
                }
            }
            i = end;
            continue;
        }
        {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let w = word_at(j);
                if w.is_empty() {
                    break;
                }
                segs.push(w.clone());
                j += w.len();
                if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
                    j += 2;
                } else {
                    break;
                }
            }
            if segs.len() > 1 {
                let keyword = ["crate", "super", "self"].contains(&segs[0].as_str());
                out.push((here, if keyword { segs } else { relative(segs) }));
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// `a::b` as `self::a::b`.
fn relative(path: Vec<String>) -> Vec<String> {
    std::iter::once("self".to_string()).chain(path).collect()
}

/// Names a module re-exports (`pub use child::Item;`): module -> name -> the module the name
/// comes from.
type Reexports = BTreeMap<String, BTreeMap<String, String>>;

/// Resolves a path seen in module `at` to the module it names: the longest module prefix, or,
/// where the next segment is a name that module re-exports, the module it re-exports it from
/// (`crate::Lab` is `crate::lab::Lab`: a re-export through the crate root does not hide an
/// edge).
fn resolve(
    at: &[String],
    path: &[String],
    known: &BTreeMap<String, PathBuf>,
    reexports: &Reexports,
) -> Option<String> {
    let mut abs: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") => {
            abs = at.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            abs = at.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                abs.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    abs.extend(rest.iter().cloned());
    let n = (0..=abs.len())
        .rev()
        .find(|n| known.contains_key(&abs[..*n].join("::")))?;
    let module = abs[..n].join("::");
    match abs
        .get(n)
        .and_then(|name| reexports.get(&module)?.get(name))
    {
        Some(from) if *from != module => Some(from.clone()),
        _ => Some(module),
    }
}

/// The `pub use` items of every module, resolved to the modules they come from.
fn reexports(known: &BTreeMap<String, PathBuf>) -> Reexports {
    let mut out = Reexports::new();
    for (module, file) in known {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let at: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(String::from).collect()
        };
        for statement in code.split(';') {
            let Some(tree) = statement
                .trim()
                .strip_prefix("pub use ")
                .or_else(|| statement.trim().strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            for mut path in expand_use(tree) {
                let alias = tree
                    .rsplit(" as ")
                    .next()
                    .filter(|_| tree.contains(" as ") && !tree.contains('{'))
                    .map(|a| a.trim().to_string());
                let Some(name) = alias.or_else(|| path.last().cloned()) else {
                    continue;
                };
                if !["crate", "super", "self"].contains(&path[0].as_str()) {
                    path = relative(path);
                }
                if let Some(from) = resolve(&at, &path, known, &Reexports::new()) {
                    out.entry(module.clone()).or_default().insert(name, from);
                }
            }
        }
    }
    out
}

/// The loops among a crate's modules, each as its modules in order, with the edges' origins.
fn loops(src: &Path) -> Vec<Vec<String>> {
    let known = modules(src);
    let reexports = reexports(&known);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, file) in &known {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let base: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(String::from).collect()
        };
        for (inline, path) in paths(&code) {
            let mut at = base.clone();
            at.extend(inline);
            // An inline module (`mod tests { ... }`) is a node of its own: a test module that
            // uses what uses its parent is not a loop of the parent.
            let module = &at.join("::");
            let Some(target) = resolve(&at, &path, &known, &reexports) else {
                continue;
            };
            // `self::x::...` that does not reach a child module `x` is an item path.
            if path[0] == "self" {
                let child = at
                    .iter()
                    .chain(path.get(1))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("::");
                if !(target == child || target.starts_with(&format!("{child}::"))) {
                    continue;
                }
            }
            let ancestor = target.is_empty()
                || *module == target
                || module.starts_with(&format!("{target}::"));
            if !ancestor {
                edges.entry(module.to_string()).or_default().insert(target);
            }
        }
    }
    // Tarjan's strongly connected components.
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T<'_>, v: &str) {
        let n = t.index.len();
        t.index.insert(v.into(), n);
        t.low.insert(v.into(), n);
        t.stack.push(v.into());
        t.on.insert(v.into());
        for w in t.edges.get(v).cloned().unwrap_or_default() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges: &edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in known.keys().chain(edges.keys()) {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_crate_has_an_import_loop_between_its_modules() {
    let mut found = Vec::new();
    for m in members() {
        for l in loops(&m.dir.join("src")) {
            found.push(format!("{}: {}", m.name, l.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "module loops:\n{}", found.join("\n"));
}

#[test]
fn the_loop_check_sees_a_loop_and_ignores_containment() {
    let dir = std::env::temp_dir().join(format!("contactlab-loops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    let write = |f: &str, s: &str| std::fs::write(dir.join(f), s).unwrap();
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub use a::X;\npub struct E;\n",
    );
    write(
        "a/mod.rs",
        "pub mod c;\nuse super::E; // the root: containment\npub struct X;\n",
    );
    write(
        "a/c.rs",
        "use crate::{b::Y, E};\n/* crate::b::Z in a comment */\nfn f() -> &'static str { \"crate::b\" }\n",
    );
    write("b.rs", "pub struct Y;\nfn g() { let _ = crate::a::c::f; }\nmod tests { use super::super::a::X; }\n");
    assert_eq!(loops(&dir), vec![vec!["a::c".to_string(), "b".to_string()]]);
    // Without b's use of a::c, no loop: b -> a (a's child is not b's ancestor) and a::c -> b.
    write(
        "b.rs",
        "pub struct Y;\nmod tests { use super::super::a::X; }\n",
    );
    assert!(loops(&dir).is_empty());
    // A loop through a name the root re-exports: a uses b, and b uses `crate::X`, which is
    // a's (the root only re-exports it).
    write("a/mod.rs", "pub mod c;\nuse crate::b::Y;\npub struct X;\n");
    write("b.rs", "pub struct Y;\nfn g() -> crate::X { crate::X }\n");
    assert_eq!(loops(&dir), vec![vec!["a".to_string(), "b".to_string()]]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The README's layout section: the fenced block under `## Layout`.
fn readme_layout() -> String {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let start = readme
        .find("## Layout")
        .expect("the README has a layout section");
    let block = &readme[start..];
    let open = block.find("```").unwrap();
    let body = &block[open + 3..];
    let close = body[body.find('\n').unwrap()..].find("```").unwrap() + body.find('\n').unwrap();
    body[..close].to_string()
}

/// The README layout's entry of a folder: its line and the indented lines under it.
fn layout_entry<'a>(layout: &'a str, folder: &str) -> Option<String> {
    let lines: Vec<&'a str> = layout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.strip_prefix(folder).is_some_and(|r| r.starts_with(' ')))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| !l.starts_with(' '))
        .map_or(lines.len(), |k| start + 1 + k);
    Some(lines[start..end].join("\n"))
}

/// A crate's public modules, as `lib.rs` declares them.
fn public_modules(src: &Path) -> Vec<String> {
    std::fs::read_to_string(src.join("lib.rs"))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|r| r.strip_suffix(';'))
        .map(String::from)
        .collect()
}

#[test]
fn the_readme_layout_names_every_crate_with_its_folder_and_modules() {
    let layout = readme_layout();
    for m in members() {
        let folder = format!(
            "{}/",
            m.dir
                .strip_prefix(workspace())
                .unwrap()
                .to_string_lossy()
                .trim_start_matches("./")
        );
        let entry = layout_entry(&layout, &folder)
            .unwrap_or_else(|| panic!("the README's layout has no entry `{folder}`:\n{layout}"));
        assert!(
            entry.contains(&m.name),
            "the README's entry {folder} does not name the crate {}:\n{entry}",
            m.name
        );
        let words: BTreeSet<&str> = entry
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        for module in public_modules(&m.dir.join("src")) {
            assert!(
                words.contains(module.as_str()),
                "the README's entry {folder} does not name the module `{module}` of {}:\n{entry}",
                m.name
            );
        }
    }
    for top in ["Cargo.toml", "justfile", "data/", "reports/", "docs/"] {
        assert!(
            layout.lines().any(|l| l.starts_with(top)),
            "the README's layout lacks {top}"
        );
    }
}

/// The README's table of papers and the command line's one table (`contactlab_report::PAPERS`)
/// name the same reports: every report the command line can write is linked from the README,
/// and every report the README links is one the command line writes.
#[test]
fn the_readmes_papers_are_the_command_lines() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let linked: BTreeSet<String> = readme
        .match_indices("(reports/")
        .filter_map(|(i, _)| {
            let rest = &readme[i + "(reports/".len()..];
            rest.find("/README.md)").map(|e| rest[..e].to_string())
        })
        .collect();
    let ids: BTreeSet<String> = contactlab_experiments::report::PAPERS
        .iter()
        .map(|p| p.id.to_string())
        .collect();
    assert_eq!(linked, ids, "README links vs PAPERS");
}
