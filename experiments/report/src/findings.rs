//! Facts and the findings whose numbers they check.
//!
//! A report module computes *facts* (a name, a value and the format it is written in) from
//! the data and the published numbers; the people-written `findings.md` beside a paper's
//! configs quotes them through placeholders that [`fill`] replaces:
//!
//! * `{{name}}` writes the fact in its own format. For numbers that legitimately change from
//!   run to run (wall times, solver seconds, ratios of times).
//! * `{{name = 302}}`, `{{name = 83.4%}}`, `{{name = 1.3e-13 m/s}}` writes the text after `=`
//!   and checks it: the data, rounded to the written precision (the written number of decimals;
//!   the mantissa's decimals in `1.3e-13` notation), must give the written number. The unit
//!   after the number, if written, must be the fact's. A list fact is written as its numbers
//!   separated by `,`, `and` or `to` (`{{name = 99, 95, 81 and 7}}`), a range as `6-7`; a
//!   text fact (a solver's name) must be written exactly.
//!
//! A stale number ([`ReportError::StaleFinding`]), an unknown name, or a malformed placeholder
//! fails the report with the file, the line and the placeholder. `{{` always opens a
//! placeholder; names use letters, digits and `_ . - +`.
//!
//! **Absent facts.** Where a report knows that some facts cannot be computed in this run (an
//! optional peer such as Drake did not run), it says so with [`Facts::absent`]: a placeholder
//! whose name contains the pattern and that has no fact is then written as
//! `*[not measured: <reason>]*` ([`absent_note`]), its `= value` unchecked, instead of failing;
//! a paragraph (or list item) states a reason once, its later placeholders of the same reason
//! read `*[not measured]*` ([`ABSENT_AGAIN`]).
//! A fact of that name, when there is one, is still written and checked as usual; a placeholder
//! that matches no absent pattern and has no fact still fails.
//!
//! **Every number in findings is a placeholder.** A test scans every
//! `experiments/configs/*/findings.md` ([`loose_numbers`]) and fails on digits outside
//! placeholders, except the few kinds [`ALLOWED_DIGITS`] lists (a list marker, a reference
//! such as `eq. 26` or `Fig. 5`, a name in a code span such as `Rover4396`) and the constants of
//! a formula in a code span (`exp(-omega^2 dt t / 2)`). A setting is quoted from its config
//! (`{{config.table1.scene.params.h = 0.005}}`), a scene value from the run's record
//! (`{{scene.slides.v0 = 1}}`), a number from a paper, another study or an earlier run from
//! `quoted_published.csv` with its source (`{{published.band = 28}}`); the builder module says
//! how these facts are named.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::ReportError;

/// How a number is written: fixed decimals or scientific notation, an optional `+` sign, and
/// a unit appended as is (`"%"`, `" s"`, `" m/s"`).
#[derive(Debug, Clone, PartialEq)]
pub struct Fmt {
    /// Fixed or scientific, and the number of decimals.
    pub notation: Notation,
    /// Text written right after the number (include a leading space where one belongs).
    pub unit: String,
    /// Write a `+` before positive numbers.
    pub signed: bool,
}

/// Fixed decimals (`{:.d}`) or scientific notation with `d` mantissa decimals (`{:.de}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    /// `12.35` with `Fixed(2)`.
    Fixed(usize),
    /// `1.2e-4` with `Sci(1)`.
    Sci(usize),
}

impl Fmt {
    /// Fixed notation with `decimals` decimals, no unit.
    pub fn fixed(decimals: usize) -> Fmt {
        Fmt {
            notation: Notation::Fixed(decimals),
            unit: String::new(),
            signed: false,
        }
    }

    /// A whole number (fixed, no decimals).
    pub fn int() -> Fmt {
        Fmt::fixed(0)
    }

    /// Scientific notation with `decimals` mantissa decimals.
    pub fn sci(decimals: usize) -> Fmt {
        Fmt {
            notation: Notation::Sci(decimals),
            unit: String::new(),
            signed: false,
        }
    }

    /// Fixed with `decimals` decimals and a `%` sign (the value is already in percent).
    pub fn percent(decimals: usize) -> Fmt {
        Fmt::fixed(decimals).unit("%")
    }

    /// The same format with `unit` appended after the number.
    pub fn unit(mut self, unit: &str) -> Fmt {
        self.unit = unit.to_string();
        self
    }

    /// The same format with a `+` before positive numbers.
    pub fn signed(mut self) -> Fmt {
        self.signed = true;
        self
    }

    /// The number alone (no unit), `-` for NaN.
    pub fn number(&self, v: f64) -> String {
        if v.is_nan() {
            return "-".into();
        }
        let s = match self.notation {
            Notation::Fixed(d) => format!("{v:.d$}"),
            Notation::Sci(d) => format!("{v:.d$e}"),
        };
        if self.signed && !s.starts_with('-') {
            format!("+{s}")
        } else {
            s
        }
    }

    /// The number with its unit, `-` for NaN.
    pub fn show(&self, v: f64) -> String {
        if v.is_nan() {
            "-".into()
        } else {
            format!("{}{}", self.number(v), self.unit)
        }
    }
}

/// A fact's value: numbers written in one format, or a text.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    /// One number or a list of numbers, and how they are written.
    Numbers(Vec<f64>, Fmt),
    /// A word from the data (a solver's label).
    Text(String),
}

impl Fact {
    /// The fact in its own format: a list joined with `, ` and a final ` and `.
    pub fn show(&self) -> String {
        match self {
            Fact::Text(t) => t.clone(),
            Fact::Numbers(v, f) => {
                let items: Vec<String> = v.iter().map(|x| f.show(*x)).collect();
                match items.split_last() {
                    None => "-".into(),
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                }
            }
        }
    }
}

/// Named facts a report computed, for [`fill`], and the patterns of facts it could not compute
/// with why ([`Facts::absent`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    map: BTreeMap<String, Fact>,
    /// `(pattern, reason)`, in the order declared.
    absent: Vec<(String, String)>,
}

/// What [`fill`] writes for a placeholder without a fact whose name matches an absent pattern
/// with `reason`: `*[not measured: <reason>]*`.
pub fn absent_note(reason: &str) -> String {
    format!("*[not measured: {reason}]*")
}

/// What [`fill`] writes for an absent fact whose reason the paragraph already stated.
pub const ABSENT_AGAIN: &str = "*[not measured]*";

/// Why the placeholder `inner` is written as absent: the fact it names does not exist and an
/// absent pattern matches its name ([`Facts::absent_reason`]).
fn absent_reason_of<'f>(inner: &str, facts: &'f Facts) -> Option<&'f str> {
    let name = inner.split_once('=').map_or(inner, |(n, _)| n).trim();
    if facts.get(name).is_some() {
        return None;
    }
    facts.absent_reason(name)
}

impl Facts {
    /// No facts.
    pub fn new() -> Facts {
        Facts::default()
    }

    /// Sets the number `name` (NaN when the data lack it: writing it then shows `-`, checking
    /// it fails).
    pub fn num(&mut self, name: impl Into<String>, value: f64, fmt: Fmt) -> &mut Facts {
        self.map
            .insert(name.into(), Fact::Numbers(vec![value], fmt));
        self
    }

    /// Sets the list of numbers `name`, all written in `fmt`.
    pub fn list(&mut self, name: impl Into<String>, values: Vec<f64>, fmt: Fmt) -> &mut Facts {
        self.map.insert(name.into(), Fact::Numbers(values, fmt));
        self
    }

    /// Sets the text `name`.
    pub fn text(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Facts {
        self.map.insert(name.into(), Fact::Text(value.into()));
        self
    }

    /// The fact `name`.
    pub fn get(&self, name: &str) -> Option<&Fact> {
        self.map.get(name)
    }

    /// The single number of fact `name` (NaN when absent, a text or a list).
    pub fn value(&self, name: &str) -> f64 {
        match self.map.get(name) {
            Some(Fact::Numbers(v, _)) if v.len() == 1 => v[0],
            _ => f64::NAN,
        }
    }

    /// Every fact name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The fact names that start with `prefix`, sorted.
    pub fn names_from<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        use std::ops::Bound;
        self.map
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .map(|(k, _)| k.as_str())
            .take_while(move |k| k.starts_with(prefix))
    }

    /// Adds every fact of `other` (replacing facts of the same name) and its absent patterns.
    pub fn extend(&mut self, other: Facts) {
        self.map.extend(other.map);
        for (pattern, reason) in other.absent {
            self.absent(pattern, reason);
        }
    }

    /// Declares the facts whose name contains `contains` absent from this run because of
    /// `reason` (`absent(".drake.", "pydrake does not import on this machine")`): a placeholder
    /// of such a name without a fact is written as [`absent_note`] by [`fill`] instead of
    /// failing. Declaring a pattern again replaces its reason; an empty pattern is ignored (it
    /// would match every name).
    pub fn absent(&mut self, contains: impl Into<String>, reason: impl Into<String>) -> &mut Facts {
        let (contains, reason) = (contains.into(), reason.into());
        if contains.is_empty() {
            return self;
        }
        match self.absent.iter_mut().find(|(p, _)| *p == contains) {
            Some(entry) => entry.1 = reason,
            None => self.absent.push((contains, reason)),
        }
        self
    }

    /// Why fact `name` is absent: the reason of the first declared pattern `name` contains,
    /// whether or not the fact exists ([`fill`] asks only for names without a fact).
    pub fn absent_reason(&self, name: &str) -> Option<&str> {
        self.absent
            .iter()
            .find(|(p, _)| name.contains(p.as_str()))
            .map(|(_, r)| r.as_str())
    }

    /// Every absent pattern with its reason, in the order declared.
    pub fn absences(&self) -> impl Iterator<Item = (&str, &str)> {
        self.absent.iter().map(|(p, r)| (p.as_str(), r.as_str()))
    }
}

/// Replaces every placeholder of `text` (the findings read from `file`) by its fact, checking
/// the written values (see the module documentation).
pub fn fill(text: &str, facts: &Facts, file: &Path) -> Result<String, ReportError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut consumed = 0usize;
    // Every bad placeholder is collected, so that one run of `contactlab report` names all the
    // lines to fix.
    let mut errors = Vec::new();
    let mut said = BTreeSet::new();
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let at = consumed + open;
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| findings_error(file, text, at, "a `{{` without its `}}`".into()))?;
        let inner = &after[..close];
        if inner.contains("{{") || inner.contains('\n') {
            return Err(findings_error(
                file,
                text,
                at,
                format!("`{{{{{inner}` does not close on its line"),
            ));
        }
        // A paragraph or a list item states each absent reason once.
        let between = &text[consumed..at];
        if between.contains("\n\n") || between.contains("\n- ") {
            said.clear();
        }
        match absent_reason_of(inner, facts) {
            Some(reason) if !said.insert(reason) => out.push_str(ABSENT_AGAIN),
            _ => match placeholder(inner, facts, file, text, at) {
                Ok(v) => out.push_str(&v),
                Err(e) => errors.push(e),
            },
        }
        consumed = at + 2 + close + 2;
        rest = &text[consumed..];
    }
    out.push_str(rest);
    match errors.len() {
        0 => Ok(out),
        1 => Err(errors.remove(0)),
        n => Err(ReportError::Findings(format!(
            "{n} placeholders fail:\n{}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        ))),
    }
}

/// The fact names the placeholders of `text` quote (`{{name}}` and `{{name = value}}`).
pub fn placeholder_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else { break };
        let inner = &after[..close];
        let name = inner.split_once('=').map_or(inner, |(n, _)| n).trim();
        if valid_name(name) {
            names.insert(name.to_string());
        }
        rest = &after[close + 2..];
    }
    names
}

/// `file:line:` for byte offset `at` of `text`.
fn location(file: &Path, text: &str, at: usize) -> String {
    let line = text[..at].matches('\n').count() + 1;
    format!("{}:{line}", file.display())
}

fn findings_error(file: &Path, text: &str, at: usize, what: String) -> ReportError {
    ReportError::Findings(format!("{}: {what}", location(file, text, at)))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-+".contains(c))
}

/// One placeholder's replacement.
fn placeholder(
    inner: &str,
    facts: &Facts,
    file: &Path,
    text: &str,
    at: usize,
) -> Result<String, ReportError> {
    let (name, written) = match inner.split_once('=') {
        Some((n, w)) => (n.trim(), Some(w.trim())),
        None => (inner.trim(), None),
    };
    if !valid_name(name) {
        return Err(findings_error(
            file,
            text,
            at,
            format!(
                "`{{{{{inner}}}}}` is not a placeholder (`{{{{name}}}}` or `{{{{name = value}}}}`)"
            ),
        ));
    }
    if facts.get(name).is_none() {
        if let Some(reason) = facts.absent_reason(name) {
            return Ok(absent_note(reason));
        }
    }
    let fact = facts.get(name).ok_or_else(|| {
        let prefix = name.split('.').next().unwrap_or(name);
        let near: Vec<&str> = facts
            .names()
            .filter(|n| n.split('.').next() == Some(prefix))
            .take(12)
            .collect();
        findings_error(
            file,
            text,
            at,
            format!(
                "unknown placeholder `{{{{{inner}}}}}`{}",
                if near.is_empty() {
                    String::new()
                } else {
                    format!("; facts named `{prefix}.*`: {}", near.join(", "))
                }
            ),
        )
    })?;
    let Some(written) = written else {
        return Ok(fact.show());
    };
    match check(written, fact) {
        Ok(()) => Ok(written.to_string()),
        Err(computed) => Err(ReportError::StaleFinding {
            file: location(file, text, at),
            placeholder: format!("{{{{{inner}}}}}"),
            written: written.to_string(),
            computed,
        }),
    }
}

/// Checks `written` against `fact`; on a mismatch, what the data give at the written precision.
fn check(written: &str, fact: &Fact) -> Result<(), String> {
    let (values, fmt) = match fact {
        Fact::Text(t) => return if written == t { Ok(()) } else { Err(t.clone()) },
        Fact::Numbers(v, f) => (v, f),
    };
    let shown = |items: &[(String, Notation)]| -> String {
        let parts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let notation = items.get(i).map_or(fmt.notation, |x| x.1);
                Fmt {
                    notation,
                    unit: String::new(),
                    signed: false,
                }
                .show(*v)
            })
            .collect();
        format!("{}{}", parts.join(", "), fmt.unit)
    };
    let Some(items) = parse_numbers(written, fmt.unit.trim()) else {
        return Err(format!(
            "{} (the written value is not {} with the unit `{}`)",
            shown(&[]),
            if values.len() == 1 {
                "a number"
            } else {
                "a list of numbers"
            },
            fmt.unit.trim()
        ));
    };
    let same = items.len() == values.len()
        && items.iter().zip(values).all(|((w, notation), v)| {
            let data = Fmt {
                notation: *notation,
                unit: String::new(),
                signed: false,
            }
            .number(*v);
            match (w.parse::<f64>(), data.parse::<f64>()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
        });
    if same {
        Ok(())
    } else {
        Err(shown(&items))
    }
}

/// The numbers of a written value with the notation each was written in, or `None` when the
/// text is not numbers joined by `,` / `and` / `to` / a range dash, each optionally followed
/// by `unit`.
fn parse_numbers(written: &str, unit: &str) -> Option<Vec<(String, Notation)>> {
    let mut items = Vec::new();
    let mut s = written.trim();
    loop {
        let (num, notation, rest) = leading_number(s)?;
        items.push((num, notation));
        // A range dash right after the number: `6-7`.
        if let Some(r) = rest.strip_prefix('-') {
            s = r;
            continue;
        }
        let mut rest = rest.trim_start();
        if !unit.is_empty() {
            if let Some(r) = rest.strip_prefix(unit) {
                rest = r.trim_start();
            }
        }
        if rest.is_empty() {
            return Some(items);
        }
        s = [", and ", ",", "and ", "to "]
            .iter()
            .find_map(|p| rest.strip_prefix(p))?
            .trim_start();
    }
}

/// The number at the start of `s` (optional sign, digits, optional decimals, optional
/// exponent), its notation, and the text after it.
fn leading_number(s: &str) -> Option<(String, Notation, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == int_start {
        return None;
    }
    let mut decimals = 0;
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            decimals += 1;
        }
    }
    let mut notation = Notation::Fixed(decimals);
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
            notation = Notation::Sci(decimals);
        }
    }
    Some((
        s[..i].trim_start_matches('+').to_string(),
        notation,
        &s[i..],
    ))
}

/// A number typed into findings outside a placeholder, found by [`loose_numbers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LooseNumber {
    /// The line, from 1.
    pub line: usize,
    /// The number as typed (`0.92`, `1e-6`, `20,000`, `3x3`).
    pub number: String,
    /// The whole line.
    pub text: String,
}

/// What findings may hold outside placeholders although it has digits, each pattern with why
/// above it: every other number must be a placeholder, so that a changed run, config or source
/// cannot leave the prose stale. Applied in this order to each line, placeholders taken out
/// first.
pub const ALLOWED_DIGITS: &[&str] = &[
    // An ordered list's marker at the start of a line (`2. **The MLCP ...`).
    r"^\s*\d+\.\s",
    // A reference into a paper: equation, figure, table, algorithm, section, example or an
    // algorithm's line numbers, alone or as a list or range (`eq. 26`, `Figs. 5 and 7`,
    // `eqs. 29-30`, `lines 24-33`).
    r"(?i)\b(?:eqs?\.|figs?\.|tables?|algorithms?|sec\.|sections?|examples?|lines?)\s+\d+[a-z]?(?:\s*(?:-|,|and|to)\s*\d+[a-z]?)*",
    // A name in a code span: one word that starts with a letter (a file, a problem, a config's
    // label: `Rover4396`, `FrictionContact3D_1c`, `up-1000`, `floor-1e-3`).
    r"`[A-Za-z_][^`\s]*`",
];

/// Formula constants: in a code span with a letter in it, a number that does not follow
/// a comparison (`=`, `<`, `>`) is part of the formula (`exp(-omega^2 dt t / 2)`, `1 + |q|`):
/// what a formula is equal to, or compared with, is a value and must be a placeholder.
fn formula_constants(span: &str) -> String {
    let number = regex::Regex::new(r"[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?").expect("a valid pattern");
    // A span without a letter beside its numbers (`1e-8`, `[0.1, 1]`) holds values, not a
    // formula.
    if !number
        .replace_all(span, " ")
        .chars()
        .any(|c| c.is_ascii_alphabetic())
    {
        return span.to_string();
    }
    let mut out = String::with_capacity(span.len());
    let mut last = 0;
    for m in number.find_iter(span) {
        // A digit inside a word (`v0`, `n_b2`) is a name's, not a number.
        let before = span[..m.start()].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let lead = span[..m.start()]
            .trim_end()
            .trim_end_matches(['-', '+'])
            .trim_end();
        let compared = lead.ends_with(['=', '<', '>']);
        out.push_str(&span[last..m.start()]);
        out.push_str(if compared { m.as_str() } else { " " });
        last = m.end();
    }
    out.push_str(&span[last..]);
    out
}

/// Every number of `text` (a findings file) outside placeholders and outside what
/// [`ALLOWED_DIGITS`] and formula constants allow, line by line.
pub fn loose_numbers(text: &str) -> Vec<LooseNumber> {
    let placeholder = regex::Regex::new(r"\{\{[^}]*\}\}").expect("a valid pattern");
    let allowed: Vec<regex::Regex> = ALLOWED_DIGITS
        .iter()
        .map(|p| regex::Regex::new(p).expect("a valid pattern"))
        .collect();
    let code = regex::Regex::new(r"`[^`]*`").expect("a valid pattern");
    // A number starts at a digit that is not inside a word (a name's digits are).
    let number =
        regex::Regex::new(r"(?:^|[^A-Za-z0-9_])([0-9][0-9.,]*(?:[eE][-+]?[0-9]+)?[0-9A-Za-z%]*)")
            .expect("a valid pattern");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = placeholder.replace_all(line, " ").into_owned();
        for a in &allowed {
            rest = a.replace_all(&rest, " ").into_owned();
        }
        rest = code
            .replace_all(&rest, |c: &regex::Captures<'_>| formula_constants(&c[0]))
            .into_owned();
        for c in number.captures_iter(&rest) {
            out.push(LooseNumber {
                line: i + 1,
                number: c[1].trim_end_matches([',', '.']).to_string(),
                text: line.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts {
        let mut f = Facts::new();
        f.num("restarts.local_minima", 302.0, Fmt::int())
            .num("restarts.converged", 83.4123, Fmt::percent(1))
            .num("ratio", 1.8444, Fmt::fixed(2))
            .num("err", 1.34e-13, Fmt::sci(1).unit(" m/s"))
            .num("wall", 28.174, Fmt::fixed(1).unit(" s"))
            .num("gap", -0.004, Fmt::fixed(1))
            .num("missing", f64::NAN, Fmt::fixed(1))
            .list("converged", vec![99.0, 95.0, 81.0, 7.0], Fmt::int())
            .list("range", vec![5.9, 6.7], Fmt::int())
            .text("slowest", "MLCP-FB-PLM");
        f
    }

    fn run(text: &str) -> Result<String, ReportError> {
        fill(text, &facts(), Path::new("configs/p/findings.md"))
    }

    #[test]
    fn correct_values_pass_and_are_written_as_written() {
        let out = run(
            "Restarts leave {{restarts.local_minima = 302}} minima and converge in \
                       {{ restarts.converged = 83.4% }}; error {{err = 1.3e-13 m/s}}, \
                       {{ratio = 1.84}} times, {{ratio = 1.8}} rounded, {{gap = 0.0}}, \
                       counts {{converged = 99, 95, 81 and 7}}, about {{range = 6-7}}, \
                       slowest {{slowest = MLCP-FB-PLM}}.",
        )
        .unwrap();
        assert_eq!(
            out,
            "Restarts leave 302 minima and converge in 83.4%; error 1.3e-13 m/s, 1.84 times, \
             1.8 rounded, 0.0, counts 99, 95, 81 and 7, about 6-7, slowest MLCP-FB-PLM."
        );
    }

    #[test]
    fn unchecked_placeholders_use_the_facts_format() {
        let out = run("took {{wall}} ({{ratio}}x); {{converged}}; {{missing}}; {{err}}").unwrap();
        assert_eq!(out, "took 28.2 s (1.84x); 99, 95, 81 and 7; -; 1.3e-13 m/s");
    }

    #[test]
    fn a_stale_number_fails_naming_file_line_placeholder_and_both_values() {
        let e = run("intro\nRestarts leave {{restarts.local_minima = 301}} minima.").unwrap_err();
        match &e {
            ReportError::StaleFinding {
                file,
                placeholder,
                written,
                computed,
            } => {
                assert_eq!(file, "configs/p/findings.md:2");
                assert_eq!(placeholder, "{{restarts.local_minima = 301}}");
                assert_eq!((written.as_str(), computed.as_str()), ("301", "302"));
            }
            other => panic!("{other}"),
        }
        let msg = e.to_string();
        assert!(
            msg.contains("findings.md:2") && msg.contains("301") && msg.contains("302"),
            "{msg}"
        );
        // A stale ratio: written as 2.1 where the data give 1.84.
        let e = run("{{ratio = 2.1}}").unwrap_err().to_string();
        assert!(e.contains("2.1") && e.contains("1.8"), "{e}");
        // Precision is the written one: 83.41% is checked to two decimals.
        assert!(run("{{restarts.converged = 83.41%}}").is_ok());
        assert!(run("{{restarts.converged = 83.42%}}").is_err());
        assert!(run("{{err = 1.4e-13}}").is_err());
        assert!(run("{{converged = 99, 95, 81 and 8}}").is_err());
        assert!(run("{{converged = 99, 95, 81}}").is_err());
        assert!(run("{{slowest = MNCP-PLM}}").is_err());
        assert!(run("{{missing = 1.0}}").is_err());
    }

    #[test]
    fn wrong_units_unknown_names_and_malformed_placeholders_fail() {
        let e = run("{{wall = 28.2 ms}}").unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
        let e = run("x\n\nsee {{restarts.localminima = 302}}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("findings.md:3")
                && e.contains("unknown placeholder")
                && e.contains("restarts.local_minima"),
            "{e}"
        );
        let e = run("open {{ratio = 1.84 and more").unwrap_err().to_string();
        assert!(e.contains("without its"), "{e}");
        let e = run("{{two words}}").unwrap_err().to_string();
        assert!(e.contains("not a placeholder"), "{e}");
        let e = run("{{ratio\n}}").unwrap_err().to_string();
        assert!(e.contains("does not close on its line"), "{e}");
    }

    #[test]
    fn absent_facts_are_written_as_marked_notes_and_their_values_go_unchecked() {
        let mut f = facts();
        f.absent(".drake.", "Drake did not run (`pydrake` does not import)")
            .num("stack.drake.sap.drift_mm", 0.12, Fmt::fixed(2));
        let out = fill(
            "Drake lifts {{sliding_cube.drake.sap.max_lift_mm = 5.99e0 mm}} and \
             {{slope_30.drake.tamsi.max_lift_mm}}; MuJoCo {{ratio = 1.84}}; measured \
             {{stack.drake.sap.drift_mm = 0.12}}.",
            &f,
            Path::new("configs/p/findings.md"),
        )
        .unwrap();
        let note = "*[not measured: Drake did not run (`pydrake` does not import)]*";
        assert_eq!(
            out,
            format!("Drake lifts {note} and {ABSENT_AGAIN}; MuJoCo 1.84; measured 0.12.")
        );
        // A new paragraph or list item states the reason again.
        let out = fill(
            "- {{a.drake.x}} {{b.drake.y}}\n- {{c.drake.z}}\n\n{{d.drake.w}}",
            &f,
            Path::new("configs/p/findings.md"),
        )
        .unwrap();
        assert_eq!(out, format!("- {note} {ABSENT_AGAIN}\n- {note}\n\n{note}"));
        // A fact that exists is still checked, even under an absent pattern.
        let e = fill(
            "{{stack.drake.sap.drift_mm = 0.13}}",
            &f,
            Path::new("configs/p/findings.md"),
        )
        .unwrap_err();
        assert!(matches!(e, ReportError::StaleFinding { .. }), "{e}");
        // The first pattern a name contains gives the reason; a pattern declared again
        // replaces its reason; an empty pattern matches nothing.
        f.absent("sap", "second")
            .absent(".drake.", "again")
            .absent("", "all");
        assert_eq!(f.absent_reason("x.drake.sap"), Some("again"));
        assert_eq!(f.absent_reason("x.mujoco.sap"), Some("second"));
        assert_eq!(f.absent_reason("ratio"), None);
        assert_eq!(
            f.absences().collect::<Vec<_>>(),
            [(".drake.", "again"), ("sap", "second")]
        );
        // `extend` carries the absent patterns over.
        let mut g = Facts::new();
        g.extend(f);
        assert_eq!(g.absent_reason("a.drake.b"), Some("again"));
    }

    #[test]
    fn a_name_that_matches_no_absent_pattern_still_fails() {
        let mut f = facts();
        f.absent(".drake.", "no pydrake");
        let e = fill(
            "{{a.drake.b}} then {{a.mujoco.b = 1}} and {{ratio = 1.84}}",
            &f,
            Path::new("configs/p/findings.md"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("unknown placeholder `{{a.mujoco.b = 1}}`") && !e.contains("drake"),
            "{e}"
        );
        // A malformed placeholder is not rescued by a pattern it contains either.
        let e = fill("{{x .drake. y}}", &f, Path::new("f.md")).unwrap_err();
        assert!(e.to_string().contains("not a placeholder"), "{e}");
    }

    #[test]
    fn every_number_in_every_findings_file_is_a_placeholder() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut files: Vec<_> = std::fs::read_dir(&configs)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path().join("findings.md")))
            .filter(|p| p.exists())
            .collect();
        files.sort();
        assert!(files.len() >= 8, "{files:?}");
        let mut loose = Vec::new();
        for file in &files {
            let paper = file
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy();
            let text = std::fs::read_to_string(file).unwrap();
            for n in loose_numbers(&text) {
                let line = n.text.trim();
                loose.push(format!(
                    "experiments/configs/{paper}/findings.md:{}: `{}` in: {line}",
                    n.line, n.number
                ));
            }
        }
        assert!(
            loose.is_empty(),
            "numbers typed outside placeholders (quote a fact, a `config.*` setting or a \
             `published.*` number; see ALLOWED_DIGITS for what may stay):\n{}",
            loose.join("\n")
        );
    }

    #[test]
    fn the_scan_flags_values_and_lets_references_names_and_formulas_pass() {
        let found = |text: &str| -> Vec<String> {
            loose_numbers(text).into_iter().map(|n| n.number).collect()
        };
        assert!(
            found("see eq. 26, Figs. 5 and 7, eqs. 29-30, Table 1, Algorithm 2 lines 1-23")
                .is_empty()
        );
        assert!(found("`Rover4396`, `FrictionContact3D_1c`, `up-1000`, n_b, t1, v0").is_empty());
        assert!(found("2. **A list item** with `exp(-omega^2 dt t / 2)` and `1 + |q|`").is_empty());
        assert!(found("took {{wall}} and {{n = 12}} steps").is_empty());
        assert_eq!(found("took 0.92 us, 2.3 times"), ["0.92", "2.3"]);
        assert_eq!(
            found("at `tol = 1e-13` with `w = 2.095`"),
            ["1e-13", "2.095"]
        );
        assert_eq!(
            found("a bare `1e-8`, `[0.1, 1]` and a 3x3 block"),
            ["1e-8", "0.1", "1", "3x3"]
        );
        assert_eq!(found("line one\nsize-384 in 10% of steps").len(), 2);
        assert_eq!(loose_numbers("a\nb 12")[0].line, 2);
    }

    #[test]
    fn formats_write_signs_units_and_nan() {
        assert_eq!(Fmt::percent(0).signed().show(21.4), "+21%");
        assert_eq!(Fmt::percent(0).signed().show(-57.0), "-57%");
        assert_eq!(Fmt::sci(2).show(1.12e-4), "1.12e-4");
        assert_eq!(Fmt::fixed(1).unit(" s").show(f64::NAN), "-");
        assert_eq!(Fact::Numbers(vec![1.0, 2.0], Fmt::int()).show(), "1 and 2");
    }
}
