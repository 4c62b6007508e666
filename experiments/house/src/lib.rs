//! The house rules (issue 39): a newcomer should be able to find where a number is computed,
//! change one sentence of a report without editing Rust, and read any function on one screen
//! or two. The test `tests/house_rules.rs` (part of `cargo nextest run --workspace`, so of
//! `just test`) reads every `.rs` file of the workspace's members with `syn` (not `target/`,
//! not `fuzz/`; [`workspace`]) and lists:
//!
//! 1. **long functions and long parameter lists**: every function with a body (free, impl and
//!    trait methods, nested ones too) outside tests spanning more than
//!    [`rules::MAX_FUNCTION_LINES`] lines, from the line of its `fn` (or its visibility; doc
//!    comments and attributes not counted) to its closing brace, or taking more than
//!    [`rules::MAX_PARAMETERS`] parameters, `self` not counted. Such a function mixes
//!    concerns: it should be split, or its parameters grouped into a struct.
//! 2. **long files**: every source file, tests included, over [`rules::MAX_FILE_LINES`] lines.
//! 3. **prose in Rust**: every string literal of more than [`rules::MAX_LITERAL_WORDS`] words
//!    (split on whitespace) in `experiments/report/src` outside tests and error messages:
//!    a report's prose belongs in its template, not in `format!`. Doc comments and attributes
//!    are not literals; what counts as an error message is defined exactly in [`scan`]
//!    (`panic!`/`assert!`-family/`bail!` bodies, the arguments of `Err`, `.expect`,
//!    `.map_err`, `.ok_or`, `.ok_or_else` and of an `...Error` type's variants); `format!`,
//!    `write!` and `writeln!` elsewhere are prose.
//!
//! "Outside tests" means not inside an item or module under `#[cfg(test)]` (or
//! `#[cfg(all(test, ..))]`), not in a `#[test]` function, and not in a file under a crate's
//! `tests/` or `benches/`.
//!
//! 4. **schema names spelled out**: every string literal in `experiments/lab/src` or
//!    `experiments/report/src` outside tests and error messages equal to a fixed column name
//!    or a metadata key of the run schema (`experiments/runs/src/schema.rs`, read by
//!    [`schema`]): the lab writes runs and the report reads them through the schema's names,
//!    so a column is renamed in one place. [`rules::OTHER_MEANINGS`] lists the few literals
//!    that spell such a name with another meaning, each with what it means there.
//!
//! The templates hold themselves to the rest: a placeholder without a fact, table, plot or
//! value fails the report that renders it (`contactlab_report::template`).
//!
//! **A ratchet, not a wall.** Main carried offenders when the rules came in, and they are paid
//! off over several sessions, so `experiments/house/debt.toml` lists every current offender by
//! rule, file (from the workspace root) and item: the function's path
//! (`module::Type::method`, `<Type as Trait>::method` in a trait impl), nothing for a file,
//! or the literal's first eight words. No line numbers: an entry survives unrelated edits.
//! The test fails on any offender the file does not list (printing each with `file:line` and
//! its measure) and on any entry that no longer offends (asking for it to be deleted), so the
//! list only shrinks. It prints a summary: the offenders per rule, the report crate's size
//! and its 15 longest functions (`cargo nextest run -p contactlab-house --no-capture` shows
//! it on success).
//!
//! **Regenerating the debt.** `HOUSE_RULES_WRITE_DEBT=1 cargo nextest run -p
//! contactlab-house` rewrites `debt.toml` from the current offenders (sorted, the same text
//! for the same offenders) instead of checking it. This is for when a rule itself changes;
//! paying off debt is deleting its entry by hand.

pub mod rules;
pub mod scan;
pub mod schema;
pub mod workspace;
