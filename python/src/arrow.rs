//! polars DataFrames to Python through the Arrow PyCapsule interface: a DataFrame of the lab
//! (`contactlab_lab::frames`, `contactlab_lab::solve`) is exported as an Arrow C stream
//! (polars-arrow's own exporter), which Python polars imports with `polars.DataFrame(obj)`
//! on any object with `__arrow_c_stream__`. No pyo3-polars, so no version tie between the
//! workspace's polars and Python's.

use std::sync::Mutex;

use polars::prelude::{CompatLevel, DataFrame, PolarsResult};
use polars_arrow::array::{Array, StructArray};
use polars_arrow::datatypes::{ArrowDataType, Field};
use polars_arrow::ffi::{export_iterator, ArrowArrayStream};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// One Arrow C stream, handed out once through `__arrow_c_stream__`.
#[pyclass(module = "contactlab", name = "ArrowStream", frozen)]
pub struct ArrowStream {
    stream: Mutex<Option<ArrowArrayStream>>,
}

#[pymethods]
impl ArrowStream {
    /// The stream as a PyCapsule named `arrow_array_stream` (the Arrow PyCapsule interface);
    /// a requested schema is ignored (the columns keep their own types).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = self
            .stream
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the Arrow stream's lock is poisoned"))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this Arrow stream was consumed already"))?;
        // The consumer moves the stream out of the capsule (its `release` becomes null); one
        // left unconsumed is released when the capsule is dropped (`ArrowArrayStream: Drop`).
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

/// The DataFrame as an Arrow C stream of struct arrays, one per chunk.
fn export(mut df: DataFrame) -> PolarsResult<ArrowArrayStream> {
    df.rechunk_mut();
    let compat = CompatLevel::newest();
    let fields: Vec<Field> = df
        .columns()
        .iter()
        .map(|c| c.field().to_arrow(compat))
        .collect();
    let dtype = ArrowDataType::Struct(fields);
    let mut chunks: Vec<PolarsResult<Box<dyn Array>>> = Vec::new();
    for batch in df.iter_chunks(compat, false) {
        let height = batch.height();
        let arrays = batch.into_arrays();
        chunks.push(StructArray::try_new(dtype.clone(), height, arrays, None).map(|a| a.boxed()));
    }
    let field = Field::new("".into(), dtype, false);
    Ok(export_iterator(Box::new(chunks.into_iter()), field))
}

/// The DataFrame as a Python polars DataFrame.
pub fn to_polars(py: Python<'_>, df: DataFrame) -> PyResult<Py<PyAny>> {
    let stream = export(df).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let obj = Py::new(
        py,
        ArrowStream {
            stream: Mutex::new(Some(stream)),
        },
    )?;
    let frame = py.import("polars")?.getattr("DataFrame")?.call1((obj,))?;
    Ok(frame.unbind())
}
