//! The rules over the whole workspace, their offenders, the debt file and the ratchet between
//! them, and the summary the test prints.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::scan::{self, Scan};
use crate::schema::SCHEMA_FILE;
use crate::workspace::{self, SourceFile};

/// A function may span this many lines, first to last.
pub const MAX_FUNCTION_LINES: usize = 100;
/// A function may take this many parameters, `self` not counted.
pub const MAX_PARAMETERS: usize = 7;
/// A source file may have this many lines.
pub const MAX_FILE_LINES: usize = 1500;
/// A string literal in the prose folders may have this many words.
pub const MAX_LITERAL_WORDS: usize = 6;
/// Where prose must not be written in Rust (it lives in templates).
pub const PROSE_FOLDERS: &[&str] = &["experiments/report/src/"];
/// Where runs are written and read: a literal here must not spell a run schema's name.
pub const SCHEMA_FOLDERS: &[&str] = &["experiments/lab/src/", "experiments/report/src/"];
/// Literals that spell a schema name with another meaning, each with what it means there.
pub const OTHER_MEANINGS: &[(&str, &str, &str)] = &[
    (
        "experiments/lab/src/reference.rs",
        "r",
        "a key of MuJoCo's exported reference answer (data/mujoco), not a run column",
    ),
    (
        "experiments/lab/src/registry.rs",
        "formulation",
        "the kind of plugin an options error names",
    ),
    (
        "experiments/lab/src/registry.rs",
        "optimizer",
        "the kind of plugin an options error names",
    ),
    (
        "experiments/report/src/analysis/peers.rs",
        "problem",
        "a column of MuJoCo's harness records (experiments/peers/solver_times.py), not a run column",
    ),
    (
        "experiments/report/src/analysis/pinocchio.rs",
        "problem",
        "a column of Pinocchio's harness records (experiments/peers/pinocchio_solvers.py)",
    ),
    (
        "experiments/report/src/analysis/pinocchio.rs",
        "solver",
        "a column of Pinocchio's harness records (experiments/peers/pinocchio_solvers.py)",
    ),
    (
        "experiments/report/src/builder.rs",
        "provenance",
        "the page template's variable holding the provenance table",
    ),
    (
        "experiments/report/src/builder.rs",
        "rows",
        "the timing table's header over RunMeta::rows (a meta key has no const)",
    ),
    (
        "experiments/report/src/builder.rs",
        "runs",
        "the timing table's header over RunMeta::runs (a meta key has no const)",
    ),
    (
        "experiments/report/src/builder.rs",
        "threads",
        "the header of the provenance and timing tables' thread counts",
    ),
    (
        "experiments/report/src/erleben2008.rs",
        "driver",
        "the tables' header over each solver compared, driver or shadow",
    ),
    (
        "experiments/report/src/erleben2008.rs",
        "paper",
        "the plots' legend of the published curve",
    ),
    (
        "experiments/report/src/erleben2008.rs",
        "run",
        "diagnostics.csv's column of the config run's name, not its index",
    ),
    (
        "experiments/report/src/erleben2008.rs",
        "seconds_min",
        "a column of the paper's published.csv: a size's fastest case",
    ),
    (
        "experiments/report/src/fidelity.rs",
        "failures",
        "the name of the page's table of failed peer runs",
    ),
    (
        "experiments/report/src/hwangbo2018.rs",
        "run",
        "a header naming the config file a row comes from",
    ),
    (
        "experiments/report/src/hwangbo2018.rs",
        "tol",
        "hang_penetration.csv's column of the solver spec's tolerance",
    ),
    (
        "experiments/report/src/matrix.rs",
        "pairs",
        "the name of the page's table of pairs",
    ),
    (
        "experiments/report/src/matrix.rs",
        "solved",
        "the text of a solved problem's cell",
    ),
    (
        "experiments/report/src/mylapilli2014.rs",
        "seconds",
        "the fact `pendulum.setup.seconds`: the simulated duration",
    ),
    (
        "experiments/report/src/peers.rs",
        "scenes",
        "the steps table's header over the scenes of a set",
    ),
    (
        "experiments/report/src/peers.rs",
        "solved",
        "peers.csv's count of solved problems (a problems run has none)",
    ),
    (
        "experiments/report/src/todorov2010.rs",
        "paper",
        "the value of the fact `t1.favoured`: the paper's convention",
    ),
    (
        "experiments/report/src/todorov2010.rs",
        "runs",
        "table1.csv's and solvers.csv's count of runs per cell",
    ),
];
/// The report crate's sources, whose size and longest functions the summary shows.
pub const REPORT_SRC: &str = "experiments/report/src/";
/// A literal's name in the debt: its first this many words.
pub const LITERAL_KEY_WORDS: usize = 8;
/// The debt file, from the workspace root.
pub const DEBT_FILE: &str = "experiments/house/debt.toml";

/// One house rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    LongFunction,
    ManyParameters,
    LongFile,
    ProseLiteral,
    SchemaLiteral,
}

impl Rule {
    pub const ALL: [Rule; 5] = [
        Rule::LongFunction,
        Rule::ManyParameters,
        Rule::LongFile,
        Rule::ProseLiteral,
        Rule::SchemaLiteral,
    ];

    /// Its name in the debt file.
    pub fn key(self) -> &'static str {
        match self {
            Rule::LongFunction => "long_function",
            Rule::ManyParameters => "many_parameters",
            Rule::LongFile => "long_file",
            Rule::ProseLiteral => "prose_literal",
            Rule::SchemaLiteral => "schema_literal",
        }
    }

    fn from_key(key: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.key() == key)
    }

    /// The unit of its measure and its limit.
    fn limit(self) -> (&'static str, usize) {
        match self {
            Rule::LongFunction => ("lines", MAX_FUNCTION_LINES),
            Rule::ManyParameters => ("parameters", MAX_PARAMETERS),
            Rule::LongFile => ("lines", MAX_FILE_LINES),
            Rule::ProseLiteral => ("words", MAX_LITERAL_WORDS),
            Rule::SchemaLiteral => ("spellings", 0),
        }
    }
}

/// What identifies an offender in the debt: no line number, so that it survives unrelated
/// edits. The item is the function's path, empty for a file, or a literal's first words.
pub type Key = (Rule, String, String);

/// One breach of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offender {
    pub rule: Rule,
    pub file: String,
    pub item: String,
    pub line: usize,
    /// Lines, parameters or words.
    pub measure: usize,
}

impl Offender {
    pub fn key(&self) -> Key {
        (self.rule, self.file.clone(), self.item.clone())
    }
}

impl std::fmt::Display for Offender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.rule == Rule::SchemaLiteral {
            return write!(
                f,
                "{}:{} {} `{}`: a run schema name spelled out (name it through \
                 contactlab_runs::schema)",
                self.file,
                self.line,
                self.rule.key(),
                self.item
            );
        }
        let (unit, limit) = self.rule.limit();
        write!(
            f,
            "{}:{} {} `{}`: {} {unit} (at most {limit})",
            self.file,
            self.line,
            self.rule.key(),
            self.item,
            self.measure
        )
    }
}

/// One file as the rules see it.
#[derive(Debug)]
pub struct FileScan {
    pub file: SourceFile,
    pub lines: usize,
    /// Empty for a test file.
    pub scan: Scan,
}

/// The workspace's files, read.
#[derive(Debug)]
pub struct House {
    pub files: Vec<FileScan>,
    /// The run schema's column names and record keys ([`crate::schema`]).
    pub schema: BTreeSet<String>,
}

/// The first words of a literal, its name in the debt.
pub fn first_words(value: &str) -> String {
    let words: Vec<&str> = value.split_whitespace().collect();
    words[..words.len().min(LITERAL_KEY_WORDS)].join(" ")
}

impl House {
    /// Reads and parses every source file of the workspace at `root`.
    pub fn read(root: &Path) -> House {
        let files = workspace::source_files(root)
            .into_iter()
            .map(|file| {
                let text = std::fs::read_to_string(&file.path)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.rel));
                let scan = if file.test_file {
                    Scan::default()
                } else {
                    scan::scan(&text, &file.module).unwrap_or_else(|e| {
                        let at = e.span().start();
                        panic!("{}:{}:{}: {e}", file.rel, at.line, at.column + 1)
                    })
                };
                FileScan {
                    lines: text.lines().count(),
                    file,
                    scan,
                }
            })
            .collect();
        let schema_path = root.join(SCHEMA_FILE);
        let schema = std::fs::read_to_string(&schema_path)
            .map_err(|e| e.to_string())
            .and_then(|text| crate::schema::names(&text).map_err(|e| e.to_string()))
            .unwrap_or_else(|e| panic!("{SCHEMA_FILE}: {e}"));
        House { files, schema }
    }

    /// Every offender, sorted by rule, file and line.
    pub fn offenders(&self) -> Vec<Offender> {
        let mut out = Vec::new();
        for f in &self.files {
            let at = |rule, item: String, line, measure| Offender {
                rule,
                file: f.file.rel.clone(),
                item,
                line,
                measure,
            };
            if f.lines > MAX_FILE_LINES {
                out.push(at(Rule::LongFile, String::new(), 1, f.lines));
            }
            for func in &f.scan.functions {
                if func.lines() > MAX_FUNCTION_LINES {
                    let (path, line) = (func.path.clone(), func.first_line);
                    out.push(at(Rule::LongFunction, path, line, func.lines()));
                }
                if func.params > MAX_PARAMETERS {
                    let (path, line) = (func.path.clone(), func.first_line);
                    out.push(at(Rule::ManyParameters, path, line, func.params));
                }
            }
            if PROSE_FOLDERS.iter().any(|p| f.file.rel.starts_with(p)) {
                for lit in &f.scan.literals {
                    if lit.words() > MAX_LITERAL_WORDS {
                        let item = first_words(&lit.value);
                        out.push(at(Rule::ProseLiteral, item, lit.line, lit.words()));
                    }
                }
            }
            if SCHEMA_FOLDERS.iter().any(|p| f.file.rel.starts_with(p)) {
                for lit in &f.scan.literals {
                    let other = OTHER_MEANINGS
                        .iter()
                        .any(|(file, l, _)| f.file.rel == *file && lit.value == *l);
                    if self.schema.contains(&lit.value) && !other {
                        out.push(at(Rule::SchemaLiteral, lit.value.clone(), lit.line, 1));
                    }
                }
            }
        }
        out.sort_by(|a, b| (a.rule, &a.file, a.line).cmp(&(b.rule, &b.file, b.line)));
        out
    }

    /// The summary: offenders per rule, the report crate's size and its longest functions.
    pub fn summary(&self, offenders: &[Offender]) -> String {
        let count = |r: Rule| offenders.iter().filter(|o| o.rule == r).count();
        let mut s = String::from("house rules, offenders per rule:\n");
        for r in Rule::ALL {
            let (unit, limit) = r.limit();
            let _ = writeln!(
                s,
                "  {:<16} {:>5}  (over {limit} {unit})",
                r.key(),
                count(r)
            );
        }
        let report: Vec<&FileScan> = self
            .files
            .iter()
            .filter(|f| f.file.rel.starts_with(REPORT_SRC))
            .collect();
        let lines: usize = report.iter().map(|f| f.lines).sum();
        let _ = writeln!(s, "{REPORT_SRC}: {lines} lines in {} files", report.len());
        let mut functions: Vec<(&str, &scan::Function)> = report
            .iter()
            .flat_map(|f| f.scan.functions.iter().map(|g| (f.file.rel.as_str(), g)))
            .collect();
        functions.sort_by(|a, b| b.1.lines().cmp(&a.1.lines()).then(a.1.path.cmp(&b.1.path)));
        let _ = writeln!(s, "its 15 longest functions (lines):");
        for (file, g) in functions.iter().take(15) {
            let _ = writeln!(s, "  {:>4}  {}  {file}:{}", g.lines(), g.path, g.first_line);
        }
        s
    }
}

/// A string as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The debt file listing `offenders`: sorted, one entry a line, the same text for the same
/// offenders whatever their lines.
pub fn debt_toml(offenders: &[Offender]) -> String {
    let mut s = String::from(
        "# The house rules' debt: every offender main carried when the rules came in (issue 39).\n\
         # Only ever delete entries: the test fails on an offender not listed here and on an\n\
         # entry that no longer offends. Regenerated (sorted) by\n\
         # HOUSE_RULES_WRITE_DEBT=1 cargo nextest run -p contactlab-house; see the crate's doc.\n",
    );
    for rule in Rule::ALL {
        let mut keys: Vec<Key> = offenders
            .iter()
            .filter(|o| o.rule == rule)
            .map(Offender::key)
            .collect();
        keys.sort();
        let _ = write!(s, "\n{} = [\n", rule.key());
        for (_, file, item) in keys {
            if rule == Rule::LongFile {
                let _ = writeln!(s, "    {{ file = {} }},", toml_string(&file));
            } else {
                let (file, item) = (toml_string(&file), toml_string(&item));
                let _ = writeln!(s, "    {{ file = {file}, item = {item} }},");
            }
        }
        s.push_str("]\n");
    }
    s
}

/// The entries of a debt file.
pub fn parse_debt(text: &str) -> Result<Vec<Key>, String> {
    let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
    let mut keys = Vec::new();
    for (name, entries) in &table {
        let rule = Rule::from_key(name).ok_or_else(|| format!("unknown rule `{name}`"))?;
        let entries = entries
            .as_array()
            .ok_or_else(|| format!("`{name}` is not a list"))?;
        for e in entries {
            let field = |k: &str| e.get(k).and_then(|v| v.as_str()).map(String::from);
            let file = field("file").ok_or_else(|| format!("`{name}`: an entry lacks `file`"))?;
            let item = field("item").unwrap_or_default();
            keys.push((rule, file, item));
        }
    }
    Ok(keys)
}

/// The offenders against the debt: what is new, and what is paid off but still listed.
#[derive(Debug, Default)]
pub struct Ratchet {
    /// Offenders whose key occurs more often than the debt lists it (all of that key's).
    pub new: Vec<Offender>,
    /// Entries listed more often than they offend, with how many to delete.
    pub paid: Vec<(Key, usize)>,
}

impl Ratchet {
    pub fn compare(offenders: &[Offender], debt: &[Key]) -> Ratchet {
        let mut now: BTreeMap<Key, usize> = BTreeMap::new();
        for o in offenders {
            *now.entry(o.key()).or_default() += 1;
        }
        let mut listed: BTreeMap<Key, usize> = BTreeMap::new();
        for k in debt {
            *listed.entry(k.clone()).or_default() += 1;
        }
        let listed_of = |k: &Key| listed.get(k).copied().unwrap_or(0);
        let new = offenders
            .iter()
            .filter(|o| now[&o.key()] > listed_of(&o.key()))
            .cloned()
            .collect();
        let paid = listed
            .iter()
            .filter_map(|(k, &n)| {
                let left = now.get(k).copied().unwrap_or(0);
                (n > left).then(|| (k.clone(), n - left))
            })
            .collect();
        Ratchet { new, paid }
    }

    pub fn holds(&self) -> bool {
        self.new.is_empty() && self.paid.is_empty()
    }

    /// What to do, for the test's failure.
    pub fn message(&self) -> String {
        let mut s = String::new();
        if !self.new.is_empty() {
            let _ = writeln!(
                s,
                "{} offender(s) of the house rules are not listed in {DEBT_FILE}:",
                self.new.len()
            );
            for o in &self.new {
                let _ = writeln!(s, "  {o}");
            }
            s.push_str(
                "Split the function or the file, group parameters into a struct, move prose to \
                 a template. A function renamed or moved keeps its debt: rename its entry. The \
                 debt only shrinks: do not list a new offender.\n",
            );
        }
        if !self.paid.is_empty() {
            let _ = writeln!(
                s,
                "{} entr(y/ies) of {DEBT_FILE} no longer offend: delete them (the debt only \
                 shrinks):",
                self.paid.len()
            );
            for ((rule, file, item), n) in &self.paid {
                let times = if *n > 1 {
                    format!(" ({n} of its entries)")
                } else {
                    String::new()
                };
                let _ = writeln!(s, "  {} {file} `{item}`{times}", rule.key());
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offender(rule: Rule, item: &str, line: usize) -> Offender {
        Offender {
            rule,
            file: "a/src/x.rs".to_string(),
            item: item.to_string(),
            line,
            measure: 120,
        }
    }

    /// A workspace of one file at `rel`, not a test file.
    fn house_of(rel: &str, source: &str) -> House {
        let file = SourceFile {
            path: rel.into(),
            rel: rel.to_string(),
            module: vec!["x".to_string()],
            test_file: false,
        };
        House {
            files: vec![FileScan {
                lines: source.lines().count(),
                scan: scan::scan(source, &file.module).unwrap(),
                file,
            }],
            schema: BTreeSet::from(["solver".to_string()]),
        }
    }

    #[test]
    fn a_schema_name_spelled_in_the_lab_or_the_report_is_flagged() {
        let source = "fn f() -> [&'static str; 2] { [\"solver\", \"solvers\"] }\n";
        let lab = house_of("experiments/lab/src/x.rs", source).offenders();
        let keys: Vec<(Rule, String)> = lab.iter().map(|o| (o.rule, o.item.clone())).collect();
        assert_eq!(keys, [(Rule::SchemaLiteral, "solver".to_string())]);
        assert!(lab[0].to_string().contains("contactlab_runs::schema"));
        // Elsewhere (the schema's own crate, the scenes) the spelling is no offence.
        assert!(house_of("experiments/runs/src/x.rs", source)
            .offenders()
            .is_empty());
    }

    /// `fn name(..) { .. }` spanning `lines` lines with `params` parameters besides `&self`.
    fn function(name: &str, lines: usize, params: usize) -> String {
        let params: Vec<String> = (0..params).map(|k| format!("p{k}: u8")).collect();
        let mut s = format!("    fn {name}(&self, {}) {{\n", params.join(", "));
        s.push_str(&"        let _ = 0;\n".repeat(lines - 2));
        s.push_str("    }\n");
        s
    }

    #[test]
    fn the_rules_flag_exactly_what_is_over_their_limits() {
        let source = format!(
            "struct S;\nimpl S {{\n{}{}{}{}}}\nfn f() -> String {{ format!(\"a b c d e {{}}\", \
             \"a b c d e f g\") }}\n",
            function("over", 101, 0),
            function("at", 100, 0),
            function("eight", 3, 8),
            function("seven", 3, 7),
        );
        let got = |rel: &str| -> Vec<(Rule, String, usize)> {
            let h = house_of(rel, &source);
            let o = h.offenders();
            o.into_iter().map(|o| (o.rule, o.item, o.measure)).collect()
        };
        let functions = vec![
            (Rule::LongFunction, "x::S::over".to_string(), 101),
            (Rule::ManyParameters, "x::S::eight".to_string(), 8),
        ];
        assert_eq!(got("core/src/x.rs"), functions);
        let mut report = functions.clone();
        report.push((Rule::ProseLiteral, "a b c d e f g".to_string(), 7));
        assert_eq!(got("experiments/report/src/x.rs"), report);
    }

    #[test]
    fn a_file_over_1500_lines_is_flagged() {
        let long = |n: usize| house_of("core/src/x.rs", &"const _: u8 = 0;\n".repeat(n));
        assert!(long(1500).offenders().is_empty());
        let o = long(1501).offenders();
        assert_eq!(o.len(), 1);
        assert_eq!(
            (o[0].rule, o[0].item.as_str(), o[0].measure),
            (Rule::LongFile, "", 1501)
        );
    }

    #[test]
    fn the_debt_file_round_trips_sorted_and_without_lines() {
        let offenders = vec![
            offender(Rule::LongFunction, "x::b", 9),
            offender(Rule::LongFunction, "x::a", 30),
            offender(Rule::LongFile, "", 1),
            offender(Rule::ProseLiteral, "say \"it\" with a \\ backslash", 4),
            offender(Rule::ProseLiteral, "say \"it\" with a \\ backslash", 5),
        ];
        let text = debt_toml(&offenders);
        assert!(text.contains(
            "long_function = [\n    { file = \"a/src/x.rs\", item = \"x::a\" },\n    \
             { file = \"a/src/x.rs\", item = \"x::b\" },\n]\n"
        ));
        let mut moved = offenders.clone();
        moved.iter_mut().for_each(|o| o.line += 7);
        assert_eq!(debt_toml(&moved), text);
        let keys = parse_debt(&text).unwrap();
        assert_eq!(keys.len(), 5);
        assert!(Ratchet::compare(&offenders, &keys).holds());
    }

    #[test]
    fn the_ratchet_fails_on_new_offenders_and_paid_entries() {
        let debt = parse_debt(&debt_toml(&[
            offender(Rule::LongFunction, "x::a", 1),
            offender(Rule::ManyParameters, "x::a", 1),
        ]))
        .unwrap();
        let now = vec![
            offender(Rule::LongFunction, "x::a", 1),
            offender(Rule::LongFunction, "x::c", 40),
        ];
        let r = Ratchet::compare(&now, &debt);
        assert_eq!(r.new, vec![now[1].clone()]);
        let paid = (
            Rule::ManyParameters,
            "a/src/x.rs".to_string(),
            "x::a".to_string(),
        );
        assert_eq!(r.paid, vec![(paid, 1)]);
        let m = r.message();
        assert!(m.contains("a/src/x.rs:40 long_function `x::c`: 120 lines (at most 100)"));
        assert!(m.contains("delete them"));
        assert!(m.contains("many_parameters a/src/x.rs `x::a`"));
    }

    #[test]
    fn an_unknown_rule_is_refused() {
        assert_eq!(
            parse_debt("long_functions = []").unwrap_err(),
            "unknown rule `long_functions`"
        );
    }

    #[test]
    fn a_literal_is_named_by_its_first_eight_words() {
        assert_eq!(first_words(" a  b\nc d e f g h i j "), "a b c d e f g h");
        assert_eq!(first_words("a b c d e f g"), "a b c d e f g");
    }
}
