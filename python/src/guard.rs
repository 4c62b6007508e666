//! The package's own exception, `contactlab.SolverError`, and [`guard`], which every call into
//! the library goes through: the GIL released, a panic turned into that exception.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

create_exception!(
    contactlab,
    SolverError,
    PyRuntimeError,
    "A failure inside the library (a factorization, the solver's machinery, an internal error): not bad input."
);

fn panic_message(p: Box<dyn Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs `f` with the GIL released, a panic turned into `SolverError`.
pub(crate) fn guard<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<T> {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
            Err(SolverError::new_err(format!(
                "internal error (a panic in the library, please report it): {}",
                panic_message(p)
            )))
        })
    })
}
