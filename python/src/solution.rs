//! `Solution`: the lab's `LocalSolve` of one problem with the names of its pair, its options
//! (defaults filled in), the problem it answers (for its derivatives) and the generalized
//! problem it came from when it has one, for `v`. Arrays are built when asked for; the trace's
//! DataFrame and the derivatives' factorization once, on first access.

use std::sync::{Arc, OnceLock};

use contactlab_core::contactbench::{contactbench_metrics, ContactBenchMetrics};
use contactlab_core::{CoreError, GlobalProblem, LocalSolve, StepProblem};
use contactlab_lab::derivatives::Derivatives;
use contactlab_lab::frames::trace_to_dataframe;
use contactlab_lab::solve::generalized_velocity;
use numpy::ndarray::{ArrayD, IxDyn};
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
    pub(crate) sensitivity: OnceLock<Result<Arc<Derivatives>, CoreError>>,
}

impl PySolution {
    /// The derivatives' factorization (the natural map's Jacobian at `r`), built once.
    fn sensitivity(&self, py: Python<'_>) -> PyResult<Arc<Derivatives>> {
        if let Some(s) = self.sensitivity.get() {
            return s.clone().map_err(core_err);
        }
        let (step, solve, options, tol) = (
            self.step.clone(),
            self.solve.clone(),
            self.options.clone(),
            self.tol,
        );
        let built = guard(py, move || {
            Ok(Derivatives::new(&step, &solve, &options, tol).map(Arc::new))
        })?;
        self.sensitivity
            .get_or_init(|| built)
            .clone()
            .map_err(core_err)
    }
}

/// The flat arrays of a `jvp`/`vjp` dictionary, each key one of `allowed` (matrices as
/// NumPy or scipy.sparse, read row-major).
fn fields(
    what: &str,
    d: &Bound<'_, PyDict>,
    allowed: &[&str],
) -> PyResult<Vec<(String, Vec<f64>)>> {
    d.iter()
        .map(|(k, v)| {
            let k: String = k.extract()?;
            if !allowed.contains(&k.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "{what}: no field `{k}` (the fields: {})",
                    allowed.join(", ")
                )));
            }
            let flat = if matches!(k.as_str(), "W" | "M" | "H") {
                let m = matrix(&k, &v)?.to_dense();
                let (rows, cols) = (m.nrows(), m.ncols());
                (0..rows * cols).map(|i| m[(i / cols, i % cols)]).collect()
            } else {
                vector(&k, &v)?
            };
            Ok((k, flat))
        })
        .collect()
}

/// Named flat arrays as a dict of NumPy arrays, each in its `shape`.
fn named_arrays<'py>(
    py: Python<'py>,
    named: Vec<(&'static str, Vec<f64>)>,
    shape: impl Fn(&str) -> PyResult<Vec<usize>>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, v) in named {
        let a = ArrayD::from_shape_vec(IxDyn(&shape(k)?), v)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        out.set_item(k, a.into_pyarray(py))?;
    }
    Ok(out)
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

    /// ContactBench's figures of `r` (Le Lidec et al., T-RO 2024; `core/src/contactbench.rs`)
    /// on the forces `r / dt`: `primal`, `dual`, `complementarity`, `signorini` and
    /// `dissipation`, each the largest over the contacts (`ValueError` for a `dt` that is not
    /// positive).
    fn contactbench<'py>(&self, py: Python<'py>, dt: f64) -> PyResult<Bound<'py, PyDict>> {
        let local = self.step.local().map_err(core_err)?;
        let m = contactbench_metrics(local, &self.solve.r, dt).map_err(core_err)?;
        let d = PyDict::new(py);
        put_contactbench(&d, "", &m)?;
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
        Ok(self.sensitivity(py)?.regimes(margin))
    }

    /// Forward mode: `jvp({field: direction, ...})` gives `{"r": dr, "u": du}` (and `"v": dv`
    /// for a generalized problem), the answer's change along that change of the data. The
    /// fields: `q`, `W`, `mu` for a contact-space problem; `f`, `w`, `M`, `H`, `mu`, `phi0`
    /// (one per row; only SAP's answer reads it) for a generalized one; those left out do not
    /// move (`W` and `M` symmetrized). Answers of the Coulomb cone, differentiated through its
    /// natural map; of the friction pyramid through its min-map; SAP's through its Hessian.
    fn jvp<'py>(
        &self,
        py: Python<'py>,
        direction: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sensitivity(py)?;
        let d = fields("jvp", direction, s.fields())?;
        let d: Vec<(&str, &[f64])> = d.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
        let t = s.jvp(&d).map_err(core_err)?;
        named_arrays(py, t, |k| Ok(vec![s.output_len(k).map_err(core_err)?]))
    }

    /// Reverse mode: `vjp({output: cotangent, ...})` (outputs `r`, `u`, and `v` for a
    /// generalized problem; those left out count as zero) gives the gradient of
    /// `sum <cotangent, output>` for every field of the problem, each in its shape (`W` and
    /// `M` symmetric).
    fn vjp<'py>(
        &self,
        py: Python<'py>,
        cotangent: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s = self.sensitivity(py)?;
        let c = fields("vjp", cotangent, s.outputs())?;
        let c: Vec<(&str, &[f64])> = c.iter().map(|(k, v)| (k.as_str(), &v[..])).collect();
        let g = s.vjp(&c).map_err(core_err)?;
        named_arrays(py, g, |k| s.shape(k).map_err(core_err))
    }

    /// The dense Jacobian of output `of` (`r`, `u`, `v`) with respect to field `wrt`: shape
    /// `(len(of),) + shape(wrt)`, row `i` the gradient of entry `i` (so with respect to `W` or
    /// `M` the symmetrized derivative). Costs one `vjp` per entry of the output.
    #[pyo3(signature = (wrt, of = "r"))]
    fn jacobian<'py>(&self, py: Python<'py>, wrt: &str, of: &str) -> PyResult<Bound<'py, PyAny>> {
        let s = self.sensitivity(py)?;
        let mut shape = vec![s.output_len(of).map_err(core_err)?];
        shape.extend(s.shape(wrt).map_err(core_err)?);
        let (s2, wrt2, of2) = (s.clone(), wrt.to_string(), of.to_string());
        let flat = guard(py, move || s2.jacobian(&wrt2, &of2).map_err(core_err))?;
        let a = ArrayD::from_shape_vec(IxDyn(&shape), flat)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(a.into_pyarray(py).into_any())
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

/// ContactBench's five figures into `d`, each name after `prefix` (`primal`, `dual`,
/// `complementarity`, `signorini`, `dissipation`): one spelling for `Solution.contactbench`
/// and `evaluate(..., dt=...)`.
pub(crate) fn put_contactbench(
    d: &Bound<'_, PyDict>,
    prefix: &str,
    m: &ContactBenchMetrics,
) -> PyResult<()> {
    for (name, value) in [
        ("primal", m.primal),
        ("dual", m.dual),
        ("complementarity", m.complementarity),
        ("signorini", m.signorini),
        ("dissipation", m.dissipation),
    ] {
        d.set_item(format!("{prefix}{name}"), value)?;
    }
    Ok(())
}
