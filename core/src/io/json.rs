//! JSON problem files: the FCLib fields, readable and writable by hand.
//!
//! A local problem (`u = W r + q`, contacts normal first `[n, t1, t2]`):
//!
//! ```json
//! {
//!   "kind": "local",
//!   "description": "optional free text, ignored",
//!   "W": [[2.0, 0.0, 0.0],
//!         [0.0, 3.0, 0.0],
//!         [0.0, 0.0, 3.0]],
//!   "q": [-1.0, 0.2, 0.0],
//!   "mu": [0.5]
//! }
//! ```
//!
//! A global problem (`M v = H r + f`, `u = H' v + w`; `H` is `n x 3nc`), here with `H` sparse:
//!
//! ```json
//! {
//!   "kind": "global",
//!   "M": [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]],
//!   "H": {"rows": 3, "cols": 3, "triplets": [[2, 0, 1.0], [0, 1, 1.0], [1, 2, 1.0]]},
//!   "f": [0.2, 0.0, -1.1962],
//!   "w": [0.0, 0.0, 0.0],
//!   "mu": [0.3]
//! }
//! ```
//!
//! A problem whose rows are other constraints than Coulomb contacts gives `constraints` in place
//! of `mu`: one block per constraint in row order, each with its kind and parameters
//! ([`crate::constraint`]), e.g. a joint limit, a contact of `condim` 4 and a friction loss
//! (`W` then `6 x 6`):
//!
//! ```json
//! "constraints": [
//!   {"kind": "limit"},
//!   {"kind": "contact", "mu": [0.8, 0.8, 0.01]},
//!   {"kind": "friction_loss", "f_max": 0.05}
//! ]
//! ```
//!
//! (`{"kind": "equality", "rows": 3}` for a connect, `{"kind": "contact", "mu": []}` for a
//! frictionless one.) Each row's target is in the offset (`q` or `w` carries `-t`).
//!
//! Rules:
//! * `kind` (`"local"` or `"global"`) may be omitted: it is inferred from `W` (local) or
//!   `M`/`H` (global). Other keys than those above are errors (they are usually typos).
//! * A matrix is either dense, row-major nested arrays (`[[row 0], [row 1], ...]`, every row
//!   the same length), or sparse, `{"rows": R, "cols": C, "triplets": [[i, j, v], ...]}` with
//!   zero-based row `i`, column `j`, duplicates summed.
//! * Vectors are arrays of numbers. JSON has no NaN or infinity; a `null` is an error.
//! * The problem is validated after reading ([`crate::LocalProblem::validate`],
//!   [`crate::GlobalProblem::validate`]); errors name the file and the field.
//!
//! [`write_json`] writes dense matrices as nested arrays and sparse ones as triplets, numbers in
//! serde_json's shortest round-trip form, so reading a written file gives the same bits.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};

use super::errors::{file_error, problem_error};
use crate::constraint::{Constraint, Constraints};
use crate::error::{CoreError, ProblemError};
use crate::problem::{rows_why, GlobalProblem, LocalProblem, Matrix, Problem};

const LOCAL_FIELDS: [&str; 4] = ["W", "q", "mu", "constraints"];
const GLOBAL_FIELDS: [&str; 6] = ["M", "H", "f", "w", "mu", "constraints"];

/// Reads a JSON problem file (format in the module doc) and validates it.
pub fn read_json(path: &Path) -> Result<Problem, CoreError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| file_error(path, None, format!("cannot read file: {e}")))?;
    parse_json(&text, path)
}

/// Parses JSON problem text; `path` names it in errors.
pub fn parse_json(text: &str, path: &Path) -> Result<Problem, CoreError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| file_error(path, None, format!("malformed JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(file_error(
            path,
            None,
            format!(
                "expected a JSON object at the top level, found {}",
                kind_of(&value)
            ),
        ));
    };
    let p = Parser { path, obj: &obj };
    p.check_keys()?;
    match p.kind()? {
        Kind::Local => p.local().map(Problem::Local),
        Kind::Global => p.global().map(Problem::Global),
    }
}

/// Serializes a problem (after validating it, so the text always reads back).
pub fn to_json_string(problem: &Problem) -> Result<String, ProblemError> {
    let mut s = String::from("{\n");
    match problem {
        Problem::Local(p) => {
            p.validate()?;
            s.push_str("  \"kind\": \"local\",\n");
            push_matrix(&mut s, "W", &p.w);
            push_vec(&mut s, "q", &p.q, false);
            push_rows(&mut s, &p.constraints);
        }
        Problem::Global(p) => {
            p.validate()?;
            s.push_str("  \"kind\": \"global\",\n");
            push_matrix(&mut s, "M", &p.m);
            push_matrix(&mut s, "H", &p.h);
            push_vec(&mut s, "f", &p.f, false);
            push_vec(&mut s, "w", &p.w, false);
            push_rows(&mut s, &p.constraints);
        }
    }
    s.push_str("}\n");
    Ok(s)
}

/// Writes a problem as JSON (see [`to_json_string`]); errors name the file.
pub fn write_json(problem: &Problem, path: &Path) -> Result<(), CoreError> {
    let text = to_json_string(problem).map_err(|e| problem_error(path, e))?;
    std::fs::write(path, text)
        .map_err(|e| file_error(path, None, format!("cannot write file: {e}")))
}

/// A finite `f64` in serde_json's shortest round-trip form.
fn num(x: f64) -> String {
    // Finite values always serialize; `null` would only come from a non-finite value, which
    // validation excluded.
    serde_json::to_string(&x).unwrap_or_else(|_| "null".to_string())
}

/// The rows' blocks as the last field: `mu` for Coulomb contacts (FCLib's field, so that those
/// files do not change), `constraints` otherwise, one block per line.
fn push_rows(s: &mut String, c: &Constraints) {
    if c.coulomb_only() {
        push_vec(s, "mu", c.mu(), true);
        return;
    }
    let blocks: Vec<String> = c
        .blocks()
        .iter()
        .map(|b| format!("    {}", serde_json::to_string(b).unwrap_or_default()))
        .collect();
    let _ = writeln!(s, "  \"constraints\": [\n{}\n  ]", blocks.join(",\n"));
}

fn push_vec(s: &mut String, key: &str, v: &[f64], last: bool) {
    let items: Vec<String> = v.iter().map(|&x| num(x)).collect();
    let _ = writeln!(
        s,
        "  \"{key}\": [{}]{}",
        items.join(", "),
        if last { "" } else { "," }
    );
}

fn push_matrix(s: &mut String, key: &str, a: &Matrix) {
    match a {
        Matrix::Dense(d) => {
            let rows: Vec<String> = (0..d.nrows())
                .map(|i| {
                    let row: Vec<String> = (0..d.ncols()).map(|j| num(d[(i, j)])).collect();
                    format!("    [{}]", row.join(", "))
                })
                .collect();
            if rows.is_empty() {
                let _ = writeln!(s, "  \"{key}\": [],");
            } else {
                let _ = writeln!(s, "  \"{key}\": [\n{}\n  ],", rows.join(",\n"));
            }
        }
        Matrix::Sparse(_) | Matrix::Blocks(_) => {
            let mut t = Vec::new();
            a.for_each_entry(|i, j, v| t.push(format!("    [{i}, {j}, {}]", num(v))));
            let body = if t.is_empty() {
                "[]".to_string()
            } else {
                format!("[\n{}\n  ]", t.join(",\n"))
            };
            let _ = writeln!(
                s,
                "  \"{key}\": {{\"rows\": {}, \"cols\": {}, \"triplets\": {body}}},",
                a.nrows(),
                a.ncols()
            );
        }
    }
}

/// A JSON value's kind, as an error message names it ("an array").
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

enum Kind {
    Local,
    Global,
}

/// Field access on the top-level object, with errors naming the file and field.
struct Parser<'a> {
    path: &'a Path,
    obj: &'a Map<String, Value>,
}

impl Parser<'_> {
    /// An error naming the file and `field`.
    fn err(&self, field: &str, message: impl Into<String>) -> CoreError {
        file_error(self.path, Some(field), message)
    }

    /// Every top-level key is a known field, and `description` a string.
    fn check_keys(&self) -> Result<(), CoreError> {
        for key in self.obj.keys() {
            let known = key == "kind"
                || key == "description"
                || LOCAL_FIELDS.contains(&key.as_str())
                || GLOBAL_FIELDS.contains(&key.as_str());
            if !known {
                return Err(self.err(
                    key,
                    "unknown field; expected `kind`, `description`, local `W`, `q`, `mu` \
                     or global `M`, `H`, `f`, `w`, `mu` (or `constraints` for `mu`)",
                ));
            }
        }
        if let Some(d) = self.obj.get("description") {
            if !d.is_string() {
                return Err(self.err(
                    "description",
                    format!("expected a string, found {}", kind_of(d)),
                ));
            }
        }
        Ok(())
    }

    /// The problem's kind, given or inferred from its matrices; the other kind's fields are errors.
    fn kind(&self) -> Result<Kind, CoreError> {
        let has = |k: &str| self.obj.contains_key(k);
        let kind = match self.obj.get("kind") {
            Some(Value::String(s)) if s == "local" => Kind::Local,
            Some(Value::String(s)) if s == "global" => Kind::Global,
            Some(other) => {
                return Err(self.err(
                    "kind",
                    format!("expected \"local\" or \"global\", found {other}"),
                ))
            }
            None => match (has("W"), has("M") || has("H")) {
                (true, false) => Kind::Local,
                (false, true) => Kind::Global,
                (true, true) => {
                    return Err(self.err(
                        "kind",
                        "missing, and cannot be inferred: both `W` (local) and `M`/`H` (global) are present",
                    ))
                }
                (false, false) => {
                    return Err(self.err(
                        "kind",
                        "missing, and cannot be inferred: neither `W` (local) nor `M`/`H` (global) is present",
                    ))
                }
            },
        };
        let (name, own): (&str, &[&str]) = match kind {
            Kind::Local => ("local", &LOCAL_FIELDS),
            Kind::Global => ("global", &GLOBAL_FIELDS),
        };
        let stray = LOCAL_FIELDS
            .iter()
            .chain(GLOBAL_FIELDS.iter())
            .find(|k| has(k) && !own.contains(k));
        if let Some(k) = stray {
            return Err(self.err(k, format!("does not belong to a {name} problem")));
        }
        Ok(kind)
    }

    /// The field `key`, an error listing the `kind`'s `fields` when it is missing.
    fn get(&self, key: &str, kind: &str, fields: &[&str]) -> Result<&Value, CoreError> {
        self.obj.get(key).ok_or_else(|| {
            let list: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            self.err(
                key,
                format!("missing (a {kind} problem needs {})", list.join(", ")),
            )
        })
    }

    /// A number as `f64` (`null` is an error); `what` names the entry in errors.
    fn number(&self, field: &str, what: &str, v: &Value) -> Result<f64, CoreError> {
        match v {
            Value::Number(n) => n
                .as_f64()
                .ok_or_else(|| self.err(field, format!("{what} is not representable as f64"))),
            Value::Null => Err(self.err(
                field,
                format!(
                    "{what} is null (JSON has no NaN or infinity; every entry must be a number)"
                ),
            )),
            other => Err(self.err(
                field,
                format!("{what} is not a number (found {})", kind_of(other)),
            )),
        }
    }

    /// An array of numbers.
    fn vector(&self, field: &str, v: &Value) -> Result<Vec<f64>, CoreError> {
        let Value::Array(items) = v else {
            return Err(self.err(
                field,
                format!("expected an array of numbers, found {}", kind_of(v)),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(k, x)| self.number(field, &format!("entry {k}"), x))
            .collect()
    }

    /// A zero-based index below `bound`; `what` names it in errors.
    fn index(&self, field: &str, what: &str, v: &Value, bound: usize) -> Result<usize, CoreError> {
        let i = v.as_u64().ok_or_else(|| {
            self.err(
                field,
                format!("{what} must be a nonnegative integer, found {v}"),
            )
        })?;
        match usize::try_from(i) {
            Ok(i) if i < bound => Ok(i),
            _ => Err(self.err(field, format!("{what} {i} is outside 0..{bound}"))),
        }
    }

    /// A dense or triplet matrix; `shape` is what the vectors imply, checked before any
    /// allocation sized by the file.
    fn matrix(
        &self,
        field: &str,
        v: &Value,
        shape: (usize, usize),
        why: &str,
    ) -> Result<Matrix, CoreError> {
        match v {
            Value::Array(rows) => self.dense(field, rows, shape, why),
            Value::Object(m) => self.sparse(field, m, shape, why),
            other => Err(self.err(
                field,
                format!(
                    "expected a matrix (nested arrays, or {{\"rows\", \"cols\", \"triplets\"}}), found {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// The error of a matrix whose shape is `found` where the vectors imply `shape` (`why`).
    fn shape_error(
        &self,
        field: &str,
        shape: (usize, usize),
        why: &str,
        found: String,
    ) -> CoreError {
        problem_error(
            self.path,
            ProblemError::Shape {
                field: field.to_string(),
                expected: format!("{}x{} ({why})", shape.0, shape.1),
                found,
            },
        )
    }

    /// A dense matrix: row-major nested arrays, every row the same length.
    fn dense(
        &self,
        field: &str,
        rows: &[Value],
        shape: (usize, usize),
        why: &str,
    ) -> Result<Matrix, CoreError> {
        let mut data = Vec::new();
        let mut ncols = None;
        for (r, row) in rows.iter().enumerate() {
            let Value::Array(entries) = row else {
                return Err(self.err(
                    field,
                    format!(
                        "row {r} is {}; a dense matrix is an array of rows (arrays of numbers)",
                        kind_of(row)
                    ),
                ));
            };
            let c = *ncols.get_or_insert(entries.len());
            if entries.len() != c {
                return Err(self.err(
                    field,
                    format!("row {r} has {} entries, row 0 has {c}", entries.len()),
                ));
            }
            for (j, x) in entries.iter().enumerate() {
                data.push(self.number(field, &format!("entry ({r}, {j})"), x)?);
            }
        }
        let (nr, nc) = (rows.len(), ncols.unwrap_or(0));
        if (nr, nc) != shape {
            return Err(self.shape_error(field, shape, why, format!("{nr}x{nc}")));
        }
        Matrix::from_row_major(field, nr, nc, &data).map_err(|e| problem_error(self.path, e))
    }

    /// A sparse matrix, `{"rows", "cols", "triplets"}`: its dimensions are checked against
    /// `shape` before its triplets are read.
    fn sparse(
        &self,
        field: &str,
        m: &Map<String, Value>,
        shape: (usize, usize),
        why: &str,
    ) -> Result<Matrix, CoreError> {
        if let Some(k) = m
            .keys()
            .find(|k| !["rows", "cols", "triplets"].contains(&k.as_str()))
        {
            return Err(self.err(
                field,
                format!(
                    "unknown key `{k}` in a sparse matrix; expected `rows`, `cols`, `triplets`"
                ),
            ));
        }
        let dim = |key: &str| -> Result<u64, CoreError> {
            let d = m
                .get(key)
                .ok_or_else(|| self.err(field, format!("sparse matrix without `{key}`")))?;
            d.as_u64().ok_or_else(|| {
                self.err(
                    field,
                    format!("`{key}` must be a nonnegative integer, found {d}"),
                )
            })
        };
        let (nr, nc) = (dim("rows")?, dim("cols")?);
        if usize::try_from(nr).ok() != Some(shape.0) || usize::try_from(nc).ok() != Some(shape.1) {
            return Err(self.shape_error(field, shape, why, format!("{nr}x{nc}")));
        }
        let Some(Value::Array(items)) = m.get("triplets") else {
            return Err(self.err(
                field,
                "sparse matrix without a `triplets` array of [row, col, value]",
            ));
        };
        let t = self.triplets(field, items, shape)?;
        Matrix::from_triplets(field, shape.0, shape.1, &t).map_err(|e| problem_error(self.path, e))
    }

    /// A sparse matrix's `[row, col, value]` triplets, each index within `shape`.
    fn triplets(
        &self,
        field: &str,
        items: &[Value],
        shape: (usize, usize),
    ) -> Result<Vec<(usize, usize, f64)>, CoreError> {
        let mut t = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let triple = match item {
                Value::Array(a) if a.len() == 3 => a,
                _ => {
                    return Err(self.err(
                        field,
                        format!("triplet {k} is not a [row, col, value] array: {item}"),
                    ))
                }
            };
            let i = self.index(field, &format!("triplet {k}: row"), &triple[0], shape.0)?;
            let j = self.index(field, &format!("triplet {k}: column"), &triple[1], shape.1)?;
            let x = self.number(field, &format!("triplet {k}: value"), &triple[2])?;
            t.push((i, j, x));
        }
        Ok(t)
    }

    /// A local problem, `u = W r + q`, shapes from `mu`.
    fn local(&self) -> Result<LocalProblem, CoreError> {
        let get = |k: &str| self.get(k, "local", &LOCAL_FIELDS);
        let c = self.constraints("local")?;
        let q = self.vector("q", get("q")?)?;
        let m = c.rows();
        let w = self.matrix("W", get("W")?, (m, m), &rows_why(&c))?;
        LocalProblem::with_constraints(w, q, c).map_err(|e| problem_error(self.path, e))
    }

    /// A global problem, `M v = H r + f`, `u = H' v + w`, shapes from the rows and `f`.
    fn global(&self) -> Result<GlobalProblem, CoreError> {
        let get = |k: &str| self.get(k, "global", &GLOBAL_FIELDS);
        let c = self.constraints("global")?;
        let f = self.vector("f", get("f")?)?;
        let w = self.vector("w", get("w")?)?;
        let (n, m) = (f.len(), c.rows());
        let mm = self.matrix("M", get("M")?, (n, n), &format!("{n} dofs from `f`"))?;
        let why = format!("{n} dofs from `f`, {}", rows_why(&c));
        let h = self.matrix("H", get("H")?, (n, m), &why)?;
        GlobalProblem::with_constraints(mm, h, f, w, c).map_err(|e| problem_error(self.path, e))
    }

    /// The rows' constraint blocks: `mu` (Coulomb contacts, one coefficient each) or
    /// `constraints` (a list of blocks, [`crate::constraint::Constraint`]), exactly one.
    fn constraints(&self, kind: &str) -> Result<Constraints, CoreError> {
        match (self.obj.get("mu"), self.obj.get("constraints")) {
            (Some(mu), None) => Ok(Constraints::coulomb(&self.vector("mu", mu)?)),
            (None, Some(list)) => {
                let blocks: Vec<Constraint> =
                    serde_json::from_value(list.clone()).map_err(|e| {
                        self.err(
                            "constraints",
                            format!(
                                "{e} (a list of blocks such as {{\"kind\": \"limit\"}}, \
                                 {{\"kind\": \"contact\", \"mu\": [0.5, 0.5]}})"
                            ),
                        )
                    })?;
                Ok(Constraints::unchecked(blocks))
            }
            (Some(_), Some(_)) => Err(self.err(
                "constraints",
                "give `mu` (Coulomb contacts) or `constraints`, not both",
            )),
            (None, None) => Err(self.err(
                "mu",
                format!("missing (a {kind} problem needs `mu` or `constraints`)"),
            )),
        }
    }
}
