//! Problem files: FCLib HDF5 ([`fclib`]) and JSON ([`json`]) with the same field names, and
//! problems from arrays ([`arrays`]: ndarray views, a folder of NumPy `.npy` files).
//!
//! Both formats hold the two FCLib problem forms of [`crate::problem`]:
//! local `u = W r + q` (`W`, `q`, `mu`) and global `M v = H r + f`, `u = H' v + w`
//! (`M`, `H`, `f`, `w`, `mu`), contacts normal first `[n, t1, t2]`. Every problem read is
//! validated ([`LocalProblem::validate`], [`GlobalProblem::validate`]), and every error names the
//! file and, when one is at fault, the field.
//!
//! [`GlobalProblem::validate`]: crate::GlobalProblem::validate

use std::path::Path;

use crate::error::CoreError;
use crate::problem::{LocalProblem, Problem};

pub mod arrays;
mod errors;
pub mod fclib;
pub mod json;

use errors::{file_error, problem_error};

pub use arrays::{global_from_arrays, local_from_arrays, read_npy_problem};
pub use fclib::read_fclib;
pub use json::{parse_json, read_json, to_json_string, write_json};

/// Reads a problem file, choosing the format by extension: `.hdf5`/`.h5` FCLib, `.json` JSON;
/// a folder is read as `.npy` files, one per field ([`read_npy_problem`]).
pub fn read_problem(path: &Path) -> Result<Problem, CoreError> {
    if path.is_dir() {
        return read_npy_problem(path);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("hdf5") | Some("h5") => read_fclib(path),
        Some("json") => read_json(path),
        _ => Err(file_error(
            path,
            None,
            "unknown problem file extension: expected `.hdf5`/`.h5` (FCLib), `.json`, or a folder of `.npy` files",
        )),
    }
}

/// Reads a problem file as a local problem; a global problem is converted with
/// [`crate::GlobalProblem::to_local`] (errors then name the file).
pub fn read_local(path: &Path) -> Result<LocalProblem, CoreError> {
    match read_problem(path)? {
        Problem::Local(p) => Ok(p),
        Problem::Global(g) => g.to_local().map_err(|e| match e {
            CoreError::Problem(pe) => problem_error(path, pe),
            other => other,
        }),
    }
}
