//! Problems from arrays a user already holds: ndarray views in Rust, `.npy` files from NumPy.
//!
//! The same two FCLib forms as the problem files ([`crate::problem`]): local `u = W r + q`
//! (`W`, `q`, `mu`) and global `M v = H r + f`, `u = H' v + w` (`M`, `H`, `f`, `w`, `mu`),
//! contacts normal first `[n, t1, t2]`. Every problem built here is validated exactly as a file's
//! is, so a wrong shape, a NaN or a negative friction coefficient is an error naming the field.
//!
//! A NumPy user writes one `.npy` file per field into a folder (`np.save("W.npy", W)`, and so
//! on) and [`read_npy_problem`] reads the folder. The files are viewed in place, never decoded
//! into a buffer sized by their header, so a corrupt header cannot make the reader allocate more
//! than the file itself (capped at [`MAX_NPY_BYTES`]).

use std::path::Path;

use ndarray::{Array1, ArrayView1, ArrayView2};
use ndarray_npy::ViewNpyExt;

use super::errors::{file_error, problem_error};
use crate::constraint::{Constraint, Constraints};
use crate::error::{CoreError, ProblemError};
use crate::problem::{GlobalProblem, LocalProblem, Matrix, Problem};

/// The largest `.npy` file read (256 MiB, as for one FCLib dataset).
pub const MAX_NPY_BYTES: u64 = super::fclib::MAX_DATASET_BYTES as u64;

/// A dense [`Matrix`] from a 2-D view in any memory order; `field` names it in errors.
pub fn matrix_from_array(field: &str, a: ArrayView2<'_, f64>) -> Result<Matrix, ProblemError> {
    let (rows, cols) = a.dim();
    crate::problem::check_dense_size(field, rows, cols, "building a problem from an array")?;
    // `iter` walks the logical (row-major) order whatever the view's strides.
    let data: Vec<f64> = a.iter().copied().collect();
    Matrix::from_row_major(field, rows, cols, &data)
}

/// A validated local problem `u = W r + q` from views of `W` (`3nc x 3nc`), `q` (`3nc`) and
/// `mu` (`nc`).
pub fn local_from_arrays(
    w: ArrayView2<'_, f64>,
    q: ArrayView1<'_, f64>,
    mu: ArrayView1<'_, f64>,
) -> Result<LocalProblem, ProblemError> {
    LocalProblem::new(matrix_from_array("W", w)?, q.to_vec(), mu.to_vec())
}

/// A validated global problem `M v = H r + f`, `u = H' v + w` from views of `M` (`n x n`), `H`
/// (`n x 3nc`), `f` (`n`), `w` (`3nc`) and `mu` (`nc`).
pub fn global_from_arrays(
    m: ArrayView2<'_, f64>,
    h: ArrayView2<'_, f64>,
    f: ArrayView1<'_, f64>,
    w: ArrayView1<'_, f64>,
    mu: ArrayView1<'_, f64>,
) -> Result<GlobalProblem, ProblemError> {
    GlobalProblem::new(
        matrix_from_array("M", m)?,
        matrix_from_array("H", h)?,
        f.to_vec(),
        w.to_vec(),
        mu.to_vec(),
    )
}

/// A vector as an owned ndarray (impulses, velocities, a DataFrame column's values).
pub fn to_array(v: &[f64]) -> Array1<f64> {
    Array1::from(v.to_vec())
}

/// Reads a problem from a folder of `.npy` files, one per field: `W.npy`, `q.npy`, `mu.npy` for a
/// local problem, or `M.npy`, `H.npy`, `f.npy`, `w.npy`, `mu.npy` for a global one (float64,
/// little-endian, C or Fortran order, as `numpy.save` writes them). A problem of other
/// constraint kinds has `constraints.json` (a JSON problem file's `constraints` list) in place of
/// `mu.npy`.
pub fn read_npy_problem(dir: &Path) -> Result<Problem, CoreError> {
    if !dir.is_dir() {
        return Err(file_error(dir, None, "not a folder of .npy files"));
    }
    let local = dir.join("W.npy").exists();
    let global = dir.join("M.npy").exists();
    let problem = match (local, global) {
        (true, false) => {
            let (w, q) = (NpyFile::read(dir, "W")?, NpyFile::read(dir, "q")?);
            let rows = read_rows(dir)?;
            let q = q.vector()?.to_vec();
            matrix_from_array("W", w.matrix()?).and_then(|w| {
                LocalProblem::with_constraints(w, q, rows).map(Problem::Local)
            })
        }
        (false, true) => {
            let (m, h, f, w) = (
                NpyFile::read(dir, "M")?,
                NpyFile::read(dir, "H")?,
                NpyFile::read(dir, "f")?,
                NpyFile::read(dir, "w")?,
            );
            let rows = read_rows(dir)?;
            let (m, h) = (m.matrix()?, h.matrix()?);
            let (f, w) = (f.vector()?.to_vec(), w.vector()?.to_vec());
            matrix_from_array("M", m).and_then(|m| {
                let h = matrix_from_array("H", h)?;
                GlobalProblem::with_constraints(m, h, f, w, rows).map(Problem::Global)
            })
        }
        (true, true) => {
            return Err(file_error(
                dir,
                None,
                "holds both `W.npy` (local form) and `M.npy` (global form): keep one form per folder",
            ))
        }
        (false, false) => {
            return Err(file_error(
                dir,
                None,
                "holds neither `W.npy` (local form: W, q, mu) nor `M.npy` (global form: M, H, f, w, mu)",
            ))
        }
    };
    problem.map_err(|e| problem_error(dir, e))
}

/// The rows' constraint blocks of a folder: `mu.npy` (Coulomb contacts, one coefficient each)
/// or `constraints.json` (a list of blocks as a JSON problem file's `constraints`), one of them.
fn read_rows(dir: &Path) -> Result<Constraints, CoreError> {
    let json = dir.join("constraints.json");
    match (dir.join("mu.npy").exists(), json.exists()) {
        (true, true) => Err(file_error(
            dir,
            Some("constraints"),
            "holds both `mu.npy` (Coulomb contacts) and `constraints.json`: keep one",
        )),
        (false, true) => {
            let len = std::fs::metadata(&json).map(|m| m.len()).unwrap_or(0);
            if len > MAX_NPY_BYTES {
                return Err(file_error(
                    &json,
                    Some("constraints"),
                    format!("file of {len} bytes exceeds the {MAX_NPY_BYTES}-byte maximum"),
                ));
            }
            let text = std::fs::read_to_string(&json)
                .map_err(|e| file_error(&json, Some("constraints"), format!("cannot read: {e}")))?;
            let blocks: Vec<Constraint> = serde_json::from_str(&text).map_err(|e| {
                file_error(
                    &json,
                    Some("constraints"),
                    format!("{e} (a list of blocks such as {{\"kind\": \"limit\"}})"),
                )
            })?;
            Ok(Constraints::unchecked(blocks))
        }
        (_, false) => Ok(Constraints::coulomb(
            &NpyFile::read(dir, "mu")?.vector()?.to_vec(),
        )),
    }
}

/// One `.npy` file's bytes, viewed (not decoded) as the array its header declares.
struct NpyFile {
    path: std::path::PathBuf,
    field: &'static str,
    bytes: Vec<u8>,
}

impl NpyFile {
    fn read(dir: &Path, field: &'static str) -> Result<NpyFile, CoreError> {
        let path = dir.join(format!("{field}.npy"));
        let err = |m: String| file_error(&path, Some(field), m);
        let len = std::fs::metadata(&path)
            .map_err(|e| err(format!("cannot read file: {e}")))?
            .len();
        if len > MAX_NPY_BYTES {
            return Err(err(format!(
                "file of {len} bytes exceeds the {MAX_NPY_BYTES}-byte maximum"
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| err(format!("cannot read file: {e}")))?;
        Ok(NpyFile { path, field, bytes })
    }

    fn error(&self, e: ndarray_npy::ViewNpyError) -> CoreError {
        file_error(
            &self.path,
            Some(self.field),
            format!("not a float64 .npy array of the expected dimension: {e}"),
        )
    }

    fn matrix(&self) -> Result<ArrayView2<'_, f64>, CoreError> {
        ArrayView2::<f64>::view_npy(&self.bytes).map_err(|e| self.error(e))
    }

    fn vector(&self) -> Result<ArrayView1<'_, f64>, CoreError> {
        ArrayView1::<f64>::view_npy(&self.bytes).map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};
    use ndarray_npy::WriteNpyExt;

    fn write(dir: &Path, field: &str, a: &impl WriteNpyExt) {
        let f = std::fs::File::create(dir.join(format!("{field}.npy"))).unwrap();
        a.write_npy(f).unwrap();
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("contactlab-npy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_local_problem_from_views_keeps_every_entry_in_row_major_order() {
        let w = array![[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 3.0]];
        let p =
            local_from_arrays(w.view(), array![-1.0, 0.5, 0.0].view(), array![0.3].view()).unwrap();
        assert_eq!(p.w.to_dense()[(0, 1)], 0.5);
        assert_eq!(p.w.to_dense()[(2, 1)], 0.2);
        assert_eq!(p.q, vec![-1.0, 0.5, 0.0]);
        // A transposed (Fortran-order) view of a symmetric matrix gives the same problem.
        let wt: Array2<f64> = w.t().to_owned();
        let pt =
            local_from_arrays(wt.t(), array![-1.0, 0.5, 0.0].view(), array![0.3].view()).unwrap();
        assert_eq!(pt.w.to_dense(), p.w.to_dense());
    }

    #[test]
    fn bad_arrays_are_refused_naming_the_field() {
        let w = Array2::<f64>::eye(3);
        let e = local_from_arrays(w.view(), array![0.0, 0.0].view(), array![0.5].view());
        assert!(e.unwrap_err().to_string().contains("`q`"));
        let e = local_from_arrays(w.view(), array![0.0, 0.0, 0.0].view(), array![-0.5].view());
        assert!(matches!(
            e,
            Err(ProblemError::NegativeFriction { contact: 0, .. })
        ));
        let mut bad = w.clone();
        bad[(1, 1)] = f64::NAN;
        let e = local_from_arrays(bad.view(), array![0.0, 0.0, 0.0].view(), array![0.5].view());
        assert!(e.unwrap_err().to_string().contains("`W`"));
    }

    #[test]
    fn an_npy_folder_gives_its_constraint_blocks_as_json() {
        let d = tmp("kinds");
        write(&d, "W", &array![[2.0, 0.0], [0.0, 1.0]]);
        write(&d, "q", &array![-1.0, 0.5]);
        let json = r#"[{"kind": "limit"}, {"kind": "friction_loss", "f_max": 0.2}]"#;
        std::fs::write(d.join("constraints.json"), json).unwrap();
        match read_npy_problem(&d).unwrap() {
            Problem::Local(p) => assert_eq!(p.constraints.kinds(), ["limit", "friction_loss"]),
            Problem::Global(_) => panic!("read as global"),
        }
        // With `mu.npy` too it is ambiguous; a bad block is named.
        write(&d, "mu", &array![0.5]);
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("keep one"), "{e}");
        std::fs::remove_file(d.join("mu.npy")).unwrap();
        std::fs::write(
            d.join("constraints.json"),
            r#"[{"kind": "limit"}, {"kind": "friction_loss", "f_max": -1}]"#,
        )
        .unwrap();
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("f_max") && e.contains("constraints"), "{e}");
    }

    #[test]
    fn npy_folders_read_back_both_forms() {
        let d = tmp("local");
        write(
            &d,
            "W",
            &array![[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]],
        );
        write(&d, "q", &array![-1.0, 3.0, 0.0]);
        write(&d, "mu", &array![0.5]);
        match read_npy_problem(&d).unwrap() {
            Problem::Local(p) => {
                assert_eq!(p.q, vec![-1.0, 3.0, 0.0]);
                assert_eq!(p.w.to_dense()[(1, 1)], 2.0);
            }
            Problem::Global(_) => panic!("local expected"),
        }
        let g = tmp("global");
        write(&g, "M", &(Array2::<f64>::eye(6) * 2.0));
        write(
            &g,
            "H",
            &Array2::<f64>::from_shape_fn((6, 3), |(i, j)| (i == j) as u8 as f64),
        );
        write(&g, "f", &Array1::<f64>::zeros(6));
        write(&g, "w", &array![0.0, 0.0, 0.0]);
        write(&g, "mu", &array![0.2]);
        let Problem::Global(p) = read_npy_problem(&g).unwrap() else {
            panic!("global expected")
        };
        assert_eq!(p.m.nrows(), 6);
        assert_eq!(p.h.ncols(), 3);
    }

    #[test]
    fn bad_npy_files_are_errors_naming_the_file_and_field() {
        let d = tmp("bad");
        write(&d, "W", &array![1.0, 2.0, 3.0]); // 1-D where a matrix belongs
        write(&d, "q", &array![0.0, 0.0, 0.0]);
        write(&d, "mu", &array![0.5]);
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("W.npy") && e.contains("field `W`"), "{e}");
        // A truncated file and a file that is not .npy at all.
        let bytes = std::fs::read(d.join("q.npy")).unwrap();
        std::fs::write(d.join("q.npy"), &bytes[..bytes.len() - 4]).unwrap();
        write(&d, "W", &Array2::<f64>::eye(3));
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("field `q`"), "{e}");
        std::fs::write(d.join("q.npy"), b"not numpy").unwrap();
        assert!(read_npy_problem(&d).is_err());
        // Integers are refused, not reinterpreted.
        write(&d, "q", &array![0i64, 0, 0]);
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("field `q`"), "{e}");
        // A header declaring a huge shape over a few bytes: an error, and nothing allocated for
        // it (the file is viewed, not decoded).
        let dict =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }";
        let mut header = dict.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0u8; 64]);
        std::fs::write(d.join("W.npy"), &bytes).unwrap();
        write(&d, "q", &array![0.0, 0.0, 0.0]);
        let e = read_npy_problem(&d).unwrap_err().to_string();
        assert!(e.contains("field `W`"), "{e}");
        assert!(read_npy_problem(&d.join("missing")).is_err());
        assert!(read_npy_problem(&tmp("empty")).is_err());
    }
}
