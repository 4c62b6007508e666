//! Python values to the core's and the lab's types: NumPy arrays and `scipy.sparse` matrices
//! to `contactlab_core::Matrix` and vectors (validated by the core, so errors name the field
//! as the command line's do), keyword options to the JSON values plugin options are parsed
//! from, and the errors of the core and the lab to Python exceptions.

use contactlab_core::io::arrays::matrix_from_array;
use contactlab_core::{CoreError, Matrix, ProblemError};
use contactlab_lab::RegistryError;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Value};

use crate::guard::SolverError;

/// A core error as the Python exception for it: bad data (a field, a file, an option) is a
/// `ValueError`; a failure of the solver's own machinery is a `SolverError`.
pub fn core_err(e: CoreError) -> PyErr {
    match e {
        CoreError::Problem(_) | CoreError::File { .. } | CoreError::BadOption(_) => {
            PyValueError::new_err(e.to_string())
        }
        CoreError::LinearAlgebra(_) | CoreError::Solver(_) | CoreError::Unsupported(_) => {
            SolverError::new_err(e.to_string())
        }
    }
}

/// A registry error: names, pairings and options are the caller's (`ValueError`), the rest
/// as [`core_err`].
pub fn registry_err(e: RegistryError) -> PyErr {
    match e {
        RegistryError::Core(c) => core_err(c),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Inconsistent problem data: a `ValueError` naming the field.
pub fn problem_err(e: ProblemError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `numpy.asarray(obj, dtype=float64)`, or a `TypeError` naming the field.
fn as_float_array<'py>(field: &str, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    py.import("numpy")?
        .call_method1("asarray", (obj, "float64"))
        .map_err(|e| {
            PyTypeError::new_err(format!(
                "field `{field}`: expected an array of numbers, got {} ({e})",
                type_name(obj)
            ))
        })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A vector field from anything NumPy reads as a 1-D float array.
pub fn vector(field: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let a = as_float_array(field, obj)?;
    let a: PyReadonlyArray1<'_, f64> = a.extract().map_err(|_| {
        let ndim = a
            .getattr("ndim")
            .and_then(|n| n.extract::<usize>())
            .unwrap_or(0);
        problem_err(ProblemError::Shape {
            field: field.into(),
            expected: "a 1-D array".into(),
            found: format!("a {ndim}-D array"),
        })
    })?;
    Ok(a.as_array().iter().copied().collect())
}

/// A matrix field from a 2-D NumPy array (dense) or a `scipy.sparse` matrix or array
/// (sparse, duplicates summed).
pub fn matrix(field: &str, obj: &Bound<'_, PyAny>) -> PyResult<Matrix> {
    if obj.hasattr("tocoo")? && obj.hasattr("nnz")? {
        let coo = obj.call_method0("tocoo")?;
        let (rows, cols): (usize, usize) = coo.getattr("shape")?.extract()?;
        let index = |name: &str| -> PyResult<Vec<usize>> {
            let a = coo.getattr(name)?.call_method1("astype", ("int64",))?;
            let a: PyReadonlyArray1<'_, i64> = a.extract()?;
            Ok(a.as_array().iter().map(|&i| i.max(0) as usize).collect())
        };
        let (i, j) = (index("row")?, index("col")?);
        let v = vector(field, &coo.getattr("data")?)?;
        let triplets: Vec<(usize, usize, f64)> = i
            .into_iter()
            .zip(j)
            .zip(v)
            .map(|((i, j), v)| (i, j, v))
            .collect();
        return Matrix::from_triplets(field, rows, cols, &triplets).map_err(problem_err);
    }
    let a = as_float_array(field, obj)?;
    let a: PyReadonlyArray2<'_, f64> = a.extract().map_err(|_| {
        let ndim = a
            .getattr("ndim")
            .and_then(|n| n.extract::<usize>())
            .unwrap_or(0);
        problem_err(ProblemError::Shape {
            field: field.into(),
            expected: "a 2-D matrix".into(),
            found: format!("a {ndim}-D array"),
        })
    })?;
    matrix_from_array(field, a.as_array()).map_err(problem_err)
}

/// A Python value as JSON, for plugin options: bool, int, float, str, and lists and dicts of
/// those (NumPy scalars through `item()`).
pub fn json_value(key: &str, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(i) => Value::from(i),
            Err(_) => Value::from(obj.extract::<u64>()?),
        });
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Value::from(obj.extract::<f64>()?));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Value::String(obj.extract()?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: Vec<Value> = obj
            .try_iter()?
            .map(|x| json_value(key, &x?))
            .collect::<PyResult<_>>()?;
        return Ok(Value::Array(items));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(Value::Object(options(d)?));
    }
    if obj.hasattr("item")? && obj.hasattr("dtype")? {
        return json_value(key, &obj.call_method0("item")?);
    }
    Err(PyTypeError::new_err(format!(
        "option `{key}`: expected a bool, number, string, list or dict, got {}",
        type_name(obj)
    )))
}

/// Keyword options as a JSON object.
pub fn options(d: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut m = Map::new();
    for (k, v) in d.iter() {
        let k: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("option names must be strings"))?;
        let value = json_value(&k, &v)?;
        m.insert(k, value);
    }
    Ok(m)
}

/// A JSON value as a Python object (options with their defaults, counters).
pub fn to_python<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let json = py.import("json")?;
    json.call_method1("loads", (v.to_string(),))
}
