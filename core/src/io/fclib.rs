//! FCLib HDF5 reader (Acary, Brémond, Koziara, Pérignon, "FCLIB: a collection of discrete 3D
//! frictional contact problems", INRIA RT-0444, 2014), pure Rust via `hdf5-reader`.
//!
//! Layout read (integer scalars are 1-element integer datasets, vectors 1-D float64):
//!
//! ```text
//! /fclib_local   spacedim (= 3), W/, vectors/q [3nc], vectors/mu [nc]
//! /fclib_global  spacedim (= 3), M/ [n x n], H/ [n x 3nc], vectors/f [n], vectors/w [3nc],
//!                vectors/mu [nc]
//! ```
//!
//! Equations: local `u = W r + q`, global `M v = H r + f`, `u = H' v + w`, contacts normal first
//! `[n, t1, t2]` (the project's convention, so nothing is permuted). `/fclib_global_rolling`
//! (spacedim 5, rolling friction) and 2D problems (spacedim 2) are rejected with a clear error;
//! the optional `V`, `R`, `G`, `s`, `b` (equality constraints) are rejected if present, since
//! the problem types cannot hold them. `/solution` and `/guesses` are ignored.
//!
//! A sparse matrix group (CSparse `cs`) holds `m` (rows), `n` (cols), `nz`, `p`, `i`, `x`:
//!
//! | `nz` | storage | `p` | `i` |
//! |---|---|---|---|
//! | `-2` | compressed rows | row pointers, `m + 1` | column indices |
//! | `-1` | compressed columns | column pointers, `n + 1` | row indices |
//! | `>= 0` | `nz` triplets, duplicates summed | column indices | row indices |
//!
//! (For triplets `fclib.h` says the opposite, but the files follow CSparse: `i` = row.)

use std::panic::AssertUnwindSafe;
use std::path::Path;

use hdf5_reader::{Dataset, Datatype, Hdf5File, OpenOptions};

use super::errors::{file_error, problem_error};

/// `(row, col, value)` entries, or the dataset at fault and what is wrong with it.
type Entries = Result<Vec<(usize, usize, f64)>, (&'static str, String)>;
use crate::error::CoreError;
use crate::problem::{GlobalProblem, LocalProblem, Matrix, Problem};

/// The most bytes one dataset may decode to (256 MiB: 32 Mi `f64`, far above the FCLib
/// collection's largest): a dataset whose declared shape needs more is refused with an error
/// naming it, before anything is allocated for it (a corrupt header can declare any shape).
pub const MAX_DATASET_BYTES: usize = 256 << 20;

/// Reads an FCLib HDF5 problem file (`/fclib_local` or `/fclib_global`) and validates it.
pub fn read_fclib(path: &Path) -> Result<Problem, CoreError> {
    let bytes = std::fs::read(path)
        .map_err(|e| file_error(path, None, format!("cannot read file: {e}")))?;
    parse_fclib(bytes, path)
}

/// Parses the bytes of an FCLib HDF5 file; `path` names it in errors.
///
/// The HDF5 parser runs under `catch_unwind`, so a corrupt file gives an error, never a panic.
pub fn parse_fclib(bytes: Vec<u8>, path: &Path) -> Result<Problem, CoreError> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| parse_unguarded(bytes, path))) {
        Ok(result) => result,
        Err(_) => Err(file_error(
            path,
            None,
            "the HDF5 parser failed on this file (corrupt or not HDF5)",
        )),
    }
}

fn parse_unguarded(bytes: Vec<u8>, path: &Path) -> Result<Problem, CoreError> {
    let options = OpenOptions::default()
        .with_max_read_bytes(MAX_DATASET_BYTES)
        .with_max_chunk_bytes(MAX_DATASET_BYTES);
    let file = Hdf5File::from_vec_with_options(bytes, options)
        .map_err(|e| file_error(path, None, format!("not a readable HDF5 file: {e}")))?;
    let (groups, _) = file
        .root_group()
        .and_then(|g| g.member_names())
        .map_err(|e| file_error(path, None, format!("cannot list the root group: {e}")))?;
    let has = |name: &str| groups.iter().any(|g| g == name);
    if has("fclib_local") {
        let r = Reader::new(file, path, "fclib_local");
        r.check_spacedim()?;
        r.reject_optional(&["V", "R", "vectors/s"])?;
        read_local(&r).map(Problem::Local)
    } else if has("fclib_global") {
        let r = Reader::new(file, path, "fclib_global");
        r.check_spacedim()?;
        r.reject_optional(&["G", "vectors/b"])?;
        read_global(&r).map(Problem::Global)
    } else if has("fclib_global_rolling") {
        Err(file_error(
            path,
            Some("fclib_global_rolling"),
            "rolling-friction problems (spacedim 5) are not supported; \
             only /fclib_local and /fclib_global (spacedim 3) are",
        ))
    } else {
        Err(file_error(
            path,
            None,
            format!(
                "no FCLib problem group: expected /fclib_local or /fclib_global, found groups {groups:?}"
            ),
        ))
    }
}

fn read_local(r: &Reader<'_>) -> Result<LocalProblem, CoreError> {
    let q = r.f64s("vectors/q")?;
    let mu = r.f64s("vectors/mu")?;
    let m = 3 * mu.len();
    let why = format!("3 x {} contacts in vectors/mu", mu.len());
    let w = r.sparse("W", (m, m), &why)?;
    LocalProblem::new(w, q, mu).map_err(|e| problem_error(r.path, e))
}

fn read_global(r: &Reader<'_>) -> Result<GlobalProblem, CoreError> {
    let f = r.f64s("vectors/f")?;
    let w = r.f64s("vectors/w")?;
    let mu = r.f64s("vectors/mu")?;
    let (n, m) = (f.len(), 3 * mu.len());
    let mm = r.sparse("M", (n, n), "n dofs = length of vectors/f")?;
    let why = format!(
        "n dofs = length of vectors/f, 3 x {} contacts in vectors/mu",
        mu.len()
    );
    let h = r.sparse("H", (n, m), &why)?;
    GlobalProblem::new(mm, h, f, w, mu).map_err(|e| problem_error(r.path, e))
}

/// Typed access to the datasets of one problem group, with errors naming the file and field.
struct Reader<'a> {
    file: Hdf5File,
    path: &'a Path,
    group: &'static str,
}

impl<'a> Reader<'a> {
    fn new(file: Hdf5File, path: &'a Path, group: &'static str) -> Reader<'a> {
        Reader { file, path, group }
    }

    fn err(&self, field: &str, message: impl Into<String>) -> CoreError {
        file_error(self.path, Some(field), message)
    }

    fn full(&self, field: &str) -> String {
        format!("/{}/{field}", self.group)
    }

    fn dataset(&self, field: &str) -> Result<Dataset, CoreError> {
        self.file.dataset(&self.full(field)).map_err(|e| {
            self.err(
                field,
                format!("cannot open dataset {}: {e}", self.full(field)),
            )
        })
    }

    fn exists(&self, field: &str) -> bool {
        let full = self.full(field);
        self.file.dataset(&full).is_ok() || self.file.group(&full).is_ok()
    }

    fn reject_optional(&self, fields: &[&str]) -> Result<(), CoreError> {
        match fields.iter().find(|f| self.exists(f)) {
            Some(f) => Err(self.err(
                f,
                "equality constraints (V/R, G, s, b) are present but not supported",
            )),
            None => Ok(()),
        }
    }

    fn check_spacedim(&self) -> Result<(), CoreError> {
        let d = self.int_scalar("spacedim")?;
        if d != 3 {
            return Err(self.err(
                "spacedim",
                format!("spacedim is {d}; only 3D problems (spacedim 3) are supported"),
            ));
        }
        Ok(())
    }

    /// A 1-D float dataset (f64, or f32 widened).
    fn f64s(&self, field: &str) -> Result<Vec<f64>, CoreError> {
        let ds = self.dataset(field)?;
        let read_err =
            |e: hdf5_reader::error::Error| self.err(field, format!("cannot read values: {e}"));
        match ds.dtype() {
            Datatype::FloatingPoint { size: 8, .. } => Ok(ds
                .read_array::<f64>()
                .map_err(read_err)?
                .iter()
                .copied()
                .collect()),
            Datatype::FloatingPoint { size: 4, .. } => Ok(ds
                .read_array::<f32>()
                .map_err(read_err)?
                .iter()
                .map(|&v| f64::from(v))
                .collect()),
            other => Err(self.err(
                field,
                format!("expected a floating-point dataset, found {other:?}"),
            )),
        }
    }

    /// A 1-D integer dataset of any width and sign, as `i64`.
    fn ints(&self, field: &str) -> Result<Vec<i64>, CoreError> {
        let ds = self.dataset(field)?;
        let read_err =
            |e: hdf5_reader::error::Error| self.err(field, format!("cannot read values: {e}"));
        macro_rules! read_as {
            ($t:ty) => {
                ds.read_array::<$t>()
                    .map_err(read_err)?
                    .iter()
                    .map(|&v| {
                        i64::try_from(v)
                            .map_err(|_| self.err(field, format!("integer {v} is out of range")))
                    })
                    .collect()
            };
        }
        match ds.dtype() {
            Datatype::FixedPoint {
                size: 1,
                signed: true,
                ..
            } => read_as!(i8),
            Datatype::FixedPoint {
                size: 1,
                signed: false,
                ..
            } => read_as!(u8),
            Datatype::FixedPoint {
                size: 2,
                signed: true,
                ..
            } => read_as!(i16),
            Datatype::FixedPoint {
                size: 2,
                signed: false,
                ..
            } => read_as!(u16),
            Datatype::FixedPoint {
                size: 4,
                signed: true,
                ..
            } => read_as!(i32),
            Datatype::FixedPoint {
                size: 4,
                signed: false,
                ..
            } => read_as!(u32),
            Datatype::FixedPoint {
                size: 8,
                signed: true,
                ..
            } => read_as!(i64),
            Datatype::FixedPoint {
                size: 8,
                signed: false,
                ..
            } => read_as!(u64),
            other => Err(self.err(
                field,
                format!("expected an integer dataset, found {other:?}"),
            )),
        }
    }

    /// An integer scalar, stored as a 1-element dataset (or a 0-d one).
    fn int_scalar(&self, field: &str) -> Result<i64, CoreError> {
        let v = self.ints(field)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(
                field,
                format!("expected a single integer, found {} values", v.len()),
            )),
        }
    }

    /// A nonnegative integer scalar that must equal `expected`.
    fn dim(&self, field: &str, expected: usize, why: &str) -> Result<usize, CoreError> {
        let v = self.int_scalar(field)?;
        if usize::try_from(v).ok() != Some(expected) {
            return Err(self.err(field, format!("is {v}, expected {expected} ({why})")));
        }
        Ok(expected)
    }

    /// A CSparse matrix group of known shape `(rows, cols)`.
    fn sparse(&self, name: &str, shape: (usize, usize), why: &str) -> Result<Matrix, CoreError> {
        let f = |d: &str| format!("{name}/{d}");
        let rows = self.dim(&f("m"), shape.0, why)?;
        let cols = self.dim(&f("n"), shape.1, why)?;
        let nz = self.int_scalar(&f("nz"))?;
        let p = self.ints(&f("p"))?;
        let i = self.ints(&f("i"))?;
        let x = self.f64s(&f("x"))?;
        let triplets = cs_triplets((rows, cols), nz, &p, &i, &x)
            .map_err(|(d, message)| self.err(&f(d), message))?;
        Matrix::from_triplets(name, rows, cols, &triplets).map_err(|e| problem_error(self.path, e))
    }
}

/// The `(row, col, value)` entries of a CSparse matrix of shape `(rows, cols)` stored as
/// `nz`, `p`, `i`, `x` (table in the module doc); on error, the dataset at fault (`"p"`, `"i"`,
/// `"x"`, `"nz"`) and what is wrong.
fn cs_triplets((rows, cols): (usize, usize), nz: i64, p: &[i64], i: &[i64], x: &[f64]) -> Entries {
    match nz {
        -2 => compressed(("row", rows), ("column", cols), p, i, x, |o, inner| {
            (o, inner)
        }),
        -1 => compressed(("column", cols), ("row", rows), p, i, x, |o, inner| {
            (inner, o)
        }),
        nz if nz >= 0 => {
            // Bounded by the data actually read, so a bogus `nz` allocates nothing.
            let nz = usize::try_from(nz).unwrap_or(usize::MAX);
            for (d, len) in [("p", p.len()), ("i", i.len()), ("x", x.len())] {
                if len < nz {
                    return Err((
                        d,
                        format!("has {len} entries, fewer than nz = {nz} triplets"),
                    ));
                }
            }
            (0..nz)
                .map(|k| {
                    let r = index("i", k, i[k], rows, "row")?;
                    let c = index("p", k, p[k], cols, "column")?;
                    Ok((r, c, x[k]))
                })
                .collect()
        }
        other => Err((
            "nz",
            format!("is {other}: expected -2 (CSR), -1 (CSC) or a triplet count >= 0"),
        )),
    }
}

/// Entries of a compressed matrix: pointers `p` over the `outer` rows or columns, indices `i`
/// into the `inner` ones; `place(outer, inner)` gives `(row, col)`.
fn compressed(
    (outer_kind, n_outer): (&str, usize),
    (inner_kind, n_inner): (&str, usize),
    p: &[i64],
    i: &[i64],
    x: &[f64],
    place: impl Fn(usize, usize) -> (usize, usize),
) -> Entries {
    if p.len() != n_outer + 1 {
        return Err((
            "p",
            format!(
                "has {} entries, expected {} ({outer_kind} pointers of {n_outer} {outer_kind}s)",
                p.len(),
                n_outer + 1
            ),
        ));
    }
    if p[0] != 0 {
        return Err(("p", format!("starts at {}, expected 0", p[0])));
    }
    if let Some(k) = (0..n_outer).find(|&k| p[k + 1] < p[k]) {
        return Err((
            "p",
            format!("decreases at entry {}: {} < {}", k + 1, p[k + 1], p[k]),
        ));
    }
    // p is nondecreasing from 0, so every pointer fits in usize.
    let ptr = |k: usize| usize::try_from(p[k]).unwrap_or(usize::MAX);
    let nnz = ptr(n_outer);
    for (d, len) in [("i", i.len()), ("x", x.len())] {
        if len < nnz {
            return Err((
                d,
                format!("has {len} entries, fewer than the {nnz} nonzeros the pointers imply"),
            ));
        }
    }
    let mut t = Vec::with_capacity(nnz);
    for outer in 0..n_outer {
        for k in ptr(outer)..ptr(outer + 1) {
            let inner = index("i", k, i[k], n_inner, inner_kind)?;
            let (r, c) = place(outer, inner);
            t.push((r, c, x[k]));
        }
    }
    Ok(t)
}

/// Checks a stored index `v` (entry `k` of dataset `d`) against `bound`.
fn index(
    d: &'static str,
    k: usize,
    v: i64,
    bound: usize,
    kind: &str,
) -> Result<usize, (&'static str, String)> {
    match usize::try_from(v) {
        Ok(u) if u < bound => Ok(u),
        _ => Err((
            d,
            format!("entry {k}: {kind} index {v} is outside 0..{bound}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::cs_triplets;

    #[test]
    fn csr_reads_p_as_row_pointers() {
        // [[1, 0, 2], [0, 3, 0]] in CSR.
        let t = cs_triplets((2, 3), -2, &[0, 2, 3], &[0, 2, 1], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(t, vec![(0, 0, 1.0), (0, 2, 2.0), (1, 1, 3.0)]);
    }

    #[test]
    fn csc_reads_p_as_column_pointers() {
        // [[1, 0, 2], [0, 3, 0]] in CSC.
        let t = cs_triplets((2, 3), -1, &[0, 1, 2, 3], &[0, 1, 0], &[1.0, 3.0, 2.0]).unwrap();
        assert_eq!(t, vec![(0, 0, 1.0), (1, 1, 3.0), (0, 2, 2.0)]);
    }

    #[test]
    fn triplets_read_i_as_row_and_p_as_column() {
        // H-like 4x2: entry (3, 1) only fits with i = row, p = column.
        let t = cs_triplets((4, 2), 2, &[1, 0], &[3, 2], &[5.0, 6.0]).unwrap();
        assert_eq!(t, vec![(3, 1, 5.0), (2, 0, 6.0)]);
        // Extra capacity beyond nz (nzmax > nz) is ignored.
        let t = cs_triplets((4, 2), 1, &[1, 0, 9], &[3, 9, 9], &[5.0, 6.0, 7.0]).unwrap();
        assert_eq!(t, vec![(3, 1, 5.0)]);
    }

    #[test]
    fn bad_storage_names_the_dataset() {
        let e = |r: super::Entries| r.unwrap_err();
        let (d, m) = e(cs_triplets((2, 3), -2, &[0, 2], &[0, 2], &[1.0, 2.0]));
        assert_eq!(d, "p");
        assert!(m.contains("expected 3"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), -2, &[0, 2, 1], &[0, 2], &[1.0, 2.0]));
        assert_eq!(d, "p");
        assert!(m.contains("decreases at entry 2"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), -2, &[1, 2, 2], &[0, 2], &[1.0, 2.0]));
        assert_eq!(d, "p");
        assert!(m.contains("starts at 1"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), -2, &[0, 1, 2], &[0, 3], &[1.0, 2.0]));
        assert_eq!(d, "i");
        assert!(m.contains("column index 3 is outside 0..3"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), -2, &[0, 1, 3], &[0, 1, 2], &[1.0, 2.0]));
        assert_eq!(d, "x");
        assert!(m.contains("fewer than the 3 nonzeros"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), 2, &[0, 3], &[0, 1], &[1.0, 2.0]));
        assert_eq!(d, "p");
        assert!(m.contains("column index 3"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), 2, &[0, 1], &[0, -1], &[1.0, 2.0]));
        assert_eq!(d, "i");
        assert!(m.contains("row index -1"), "{m}");
        let (d, m) = e(cs_triplets((2, 3), 5, &[0, 1], &[0, 1], &[1.0, 2.0]));
        assert_eq!(d, "p");
        assert!(m.contains("fewer than nz = 5"), "{m}");
        let (d, _) = e(cs_triplets((2, 3), -3, &[], &[], &[]));
        assert_eq!(d, "nz");
    }
}
