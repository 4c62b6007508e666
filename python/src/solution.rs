//! `Solution`: the lab's `LocalSolve` of one problem with the names of its pair, its options
//! (defaults filled in), the problem it answers (for its derivatives) and the generalized
//! problem it came from when it has one, for `v`. Arrays are built when asked for; the trace's
//! DataFrame and the derivatives' factorization once, on first access.

use std::sync::{Arc, OnceLock};

use contactlab_core::{CoreError, GlobalProblem, LocalSolve, StepProblem};
use contactlab_lab::frames::trace_to_dataframe;
use contactlab_lab::solve::{generalized_velocity, sensitivity, Sensitivity};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::arrow::to_polars;
use crate::convert::{core_err, matrix, to_python, vector};
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
    /// The problem solved and the solve's tolerance, for the derivatives.
    pub(crate) step: Arc<StepProblem>,
    pub(crate) tol: f64,
    pub(crate) sensitivity: OnceLock<Result<Arc<Sensitivity>, CoreError>>,
}

impl PySolution {
    /// The derivatives' factorization (the natural map's Jacobian at `r`), built once.
    fn sensitivity(&self, py: Python<'_>) -> PyResult<Arc<Sensitivity>> {
        if let Some(s) = self.sensitivity.get() {
            return s.clone().map_err(core_err);
        }
        let (step, model, r, tol) = (
            self.step.clone(),
            self.solve.model,
            self.solve.r.clone(),
            self.tol,
        );
        let built = guard(py, move || {
            Ok(sensitivity(&step, model, &r, tol).map(Arc::new))
        })?;
        self.sensitivity
            .get_or_init(|| built)
            .clone()
            .map_err(core_err)
    }
}

/// The arrays of a `jvp`/`vjp` dictionary, each key one of `allowed`.
fn fields<'py>(
    what: &str,
    d: &Bound<'py, PyDict>,
    allowed: &[&str],
) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    d.iter()
        .map(|(k, v)| {
            let k: String = k.extract()?;
            if allowed.contains(&k.as_str()) {
                Ok((k, v))
            } else {
                Err(PyValueError::new_err(format!(
                    "{what}: no field `{k}` (the fields: {})",
                    allowed.join(", ")
                )))
            }
        })
        .collect()
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

    /// Whether the impulses are not unique at the answer (the natural map's Jacobian is
    /// singular there): the derivatives are then the minimum-norm ones.
    #[getter]
    fn non_unique(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.sensitivity(py)?.non_unique())
    }

    /// Each constraint block's regime at the answer (`separating`, `sticking`, `sliding`), or
    /// `degenerate` within `margin` of a kink of the answer (in impulse units; `10 h` for a
    /// finite-difference step `h`), where the derivative is one element of the generalized
    /// Jacobian.
    #[pyo3(signature = (margin = 1e-6))]
    fn regimes(&self, py: Python<'_>, margin: f64) -> PyResult<Vec<&'static str>> {
        let s = self.sensitivity(py)?;
        Ok(s.regimes(margin).into_iter().map(|r| r.name()).collect())
    }

    /// Forward mode: `jvp({"q": dq, "W": dW})` (either may be left out) gives
    /// `{"r": dr, "u": du}`, the answer's change along that change of the data (`dW`
    /// symmetrized). Contact-space problems, answers of the Coulomb cone.
    fn jvp<'py>(
        &self,
        py: Python<'py>,
        direction: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sensitivity(py)?;
        let n = self.solve.r.len();
        let (mut dq, mut dw): (Vec<f64>, Option<Vec<f64>>) = (vec![0.0; n], None);
        for (k, v) in fields("jvp", direction, &["q", "W"])? {
            if k == "q" {
                dq = vector("q", &v)?;
            } else {
                let m = matrix("W", &v)?.to_dense();
                let (rows, cols) = (m.nrows(), m.ncols());
                dw = Some((0..rows * cols).map(|k| m[(k / cols, k % cols)]).collect());
            }
        }
        let (dr, du) = s.jvp(&dq, dw.as_deref()).map_err(core_err)?;
        let out = PyDict::new(py);
        out.set_item("r", array(py, &dr))?;
        out.set_item("u", array(py, &du))?;
        Ok(out)
    }

    /// Reverse mode: `vjp({"r": r_bar, "u": u_bar})` (either may be left out) gives
    /// `{"q": q_bar, "W": W_bar}`, the gradient of `<r_bar, r> + <u_bar, u>` with respect to
    /// the data (`W_bar` symmetric).
    fn vjp<'py>(
        &self,
        py: Python<'py>,
        cotangent: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sensitivity(py)?;
        let n = self.solve.r.len();
        let (mut rb, mut ub) = (vec![0.0; n], vec![0.0; n]);
        for (k, v) in fields("vjp", cotangent, &["r", "u"])? {
            if k == "r" {
                rb = vector("r", &v)?;
            } else {
                ub = vector("u", &v)?;
            }
        }
        let (qb, wb) = s.vjp(&rb, &ub).map_err(core_err)?;
        let out = PyDict::new(py);
        out.set_item("q", array(py, &qb))?;
        let wb =
            Array2::from_shape_vec((n, n), wb).map_err(|e| PyValueError::new_err(e.to_string()))?;
        out.set_item("W", wb.into_pyarray(py))?;
        Ok(out)
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
