//! `Solution`: the lab's `LocalSolve` of one problem with the names of its pair, its options
//! (defaults filled in), and the generalized problem it came from when it has one, for `v`.
//! Arrays are built when asked for; the trace's DataFrame once, on first access.

use std::sync::Arc;

use contactlab_core::{GlobalProblem, LocalSolve};
use contactlab_lab::frames::trace_to_dataframe;
use contactlab_lab::solve::generalized_velocity;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::arrow::to_polars;
use crate::convert::{core_err, to_python};
use crate::guard::guard;
use crate::problem::array;

/// The answer of one solve.
#[pyclass(module = "contactlab", name = "Solution", frozen)]
pub struct PySolution {
    pub(crate) solve: LocalSolve,
    pub(crate) formulation: String,
    pub(crate) optimizer: String,
    pub(crate) options: Value,
    pub(crate) optimizer_options: Value,
    pub(crate) global: Option<Arc<GlobalProblem>>,
    pub(crate) v: PyOnceLock<Option<Py<PyArray1<f64>>>>,
    pub(crate) trace: PyOnceLock<Py<PyAny>>,
}

#[pymethods]
impl PySolution {
    /// `converged` when the natural-map residual is at most `tol`; otherwise why the solver
    /// stopped (`inaccurate`, `max_iterations`, `stagnated`, `timeout`, ...).
    #[getter]
    fn status(&self) -> &'static str {
        self.solve.status.as_str()
    }

    /// The status the driver itself reported.
    #[getter]
    fn solver_status(&self) -> &'static str {
        self.solve.solver_status.as_str()
    }

    /// Impulses `r`, normal first per contact.
    #[getter]
    fn r<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, &self.solve.r)
    }

    /// Contact velocities `u = W r + q`, normal first per contact.
    #[getter]
    fn u<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, &self.solve.u)
    }

    /// Generalized velocities `v = M^-1 (H r + f)` of a generalized problem (`None` for a
    /// contact-space one), computed on first access.
    #[getter]
    fn v(&self, py: Python<'_>) -> PyResult<Option<Py<PyArray1<f64>>>> {
        let v = self.v.get_or_try_init(py, || -> PyResult<_> {
            let Some(g) = self.global.clone() else {
                return Ok(None);
            };
            let r = self.solve.r.clone();
            let v = guard(py, move || generalized_velocity(&g, &r).map_err(core_err))?;
            Ok(Some(array(py, &v).unbind()))
        })?;
        Ok(v.as_ref().map(|a| a.clone_ref(py)))
    }

    /// The state to warm-start the next solve from (`solve(..., warm=s.warm)`): one number per
    /// row in this problem's frames (the impulses, or the formulation's own unknowns).
    #[getter]
    fn warm<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, &self.solve.warm)
    }

    /// Iterations the driver performed (over all attempts).
    #[getter]
    fn iterations(&self) -> u64 {
        self.solve.iterations
    }

    /// Wall-clock seconds of the solve (the formulation's build, the start and all attempts;
    /// the shared ruler excluded).
    #[getter]
    fn seconds(&self) -> f64 {
        self.solve.seconds
    }

    /// The shared metrics of `r`: `natural_map` (the residual `tol` bounds), `cone_violation`,
    /// `dual_cone_violation`, `complementarity_gap`.
    #[getter]
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.solve.metrics;
        let d = PyDict::new(py);
        d.set_item("natural_map", m.natural_map)?;
        d.set_item("cone_violation", m.cone_violation)?;
        d.set_item("dual_cone_violation", m.dual_cone_violation)?;
        d.set_item("complementarity_gap", m.complementarity_gap)?;
        Ok(d)
    }

    /// The natural-map residual (`metrics["natural_map"]`).
    #[getter]
    fn residual(&self) -> f64 {
        self.solve.metrics.natural_map
    }

    /// The driver's and the formulation's counters (`pgs_sweeps`, `newton_accepted`, ...).
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.solve.counters {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The formulation's own accuracy figures (SAP: `e_m`, `e_mu`).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.solve.diagnostics {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// The friction model solved (`coulomb_cone`, `friction_pyramid`, `regularized`,
    /// `maximum_dissipation`).
    #[getter]
    fn model(&self) -> &'static str {
        self.solve.model.as_str()
    }

    /// The formulation's name.
    #[getter]
    fn formulation(&self) -> &str {
        &self.formulation
    }

    /// The optimizer's name.
    #[getter]
    fn optimizer(&self) -> &str {
        &self.optimizer
    }

    /// The formulation's options, defaults filled in.
    #[getter]
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.options)
    }

    /// The optimizer's options, defaults filled in.
    #[getter]
    fn optimizer_options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.optimizer_options)
    }

    /// The per-iteration trace as a polars DataFrame (`iter`, `merit`, `grad_norm`,
    /// `step_norm`, `step_kind`, `step_length`, `lambda`, `active`, `seconds`, and the
    /// driver's extra columns), built on first access.
    #[getter]
    fn trace(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let df = self.trace.get_or_try_init(py, || -> PyResult<_> {
            let df = trace_to_dataframe(&self.solve.solution.trace)
                .map_err(|e| crate::guard::SolverError::new_err(e.to_string()))?;
            to_polars(py, df)
        })?;
        Ok(df.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "Solution({}+{}: {} after {} iterations, residual {:.3e}, {:.3e} s)",
            self.formulation,
            self.optimizer,
            self.solve.status.as_str(),
            self.solve.iterations,
            self.solve.metrics.natural_map,
            self.solve.seconds
        )
    }
}
