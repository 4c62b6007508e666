//! The problem classes: `LocalProblem` (`u = W r + q`) and `GeneralizedProblem`
//! (`M v = H r + f`, `u = H' v + w`), wrapping the core's `LocalProblem` and `GlobalProblem`
//! and the `StepProblem` the lab solves (built once, so a generalized problem's contact-space
//! form is derived once for all its solves), and `read`, the core's problem-file reader.

use std::path::PathBuf;
use std::sync::Arc;

use contactlab_core::io::read_problem;
use contactlab_core::islands::{check_psd_by_island, PSD_REL_TOL};
use contactlab_core::{
    Constraint, Constraints, GeneralizedProblem, GlobalProblem, LocalProblem, Matrix, Problem,
    StepProblem,
};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{core_err, matrix, problem_err, to_python, vector};
use crate::guard::guard;

/// A matrix as a dense 2-D NumPy array.
pub fn dense<'py>(py: Python<'py>, m: &Matrix) -> Bound<'py, PyArray2<f64>> {
    let d = m.to_dense();
    Array2::from_shape_fn((d.nrows(), d.ncols()), |(i, j)| d[(i, j)]).into_pyarray(py)
}

/// A vector as a 1-D NumPy array.
pub fn array<'py>(py: Python<'py>, v: &[f64]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, v)
}

/// Checks `W` positive semidefinite island by island, as `contactlab solve` does for a
/// contact-space file.
fn check_psd(p: &LocalProblem) -> PyResult<()> {
    check_psd_by_island(p, PSD_REL_TOL).map_err(problem_err)
}

/// The rows' constraints from `mu` (Coulomb contacts) or `constraints` (a list of blocks, read
/// as a problem file's `constraints`), exactly one.
fn rows_of(
    py: Python<'_>,
    mu: Option<&Bound<'_, PyAny>>,
    constraints: Option<&Bound<'_, PyAny>>,
) -> PyResult<Constraints> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(m);
    match (mu, constraints) {
        (Some(mu), None) => Ok(Constraints::coulomb(&vector("mu", mu)?)),
        (None, Some(list)) => {
            let text: String = py
                .import("json")?
                .call_method1("dumps", (list,))?
                .extract()?;
            let blocks: Vec<Constraint> = serde_json::from_str(&text)
                .map_err(|e| bad(format!("field `constraints`: {e}")))?;
            Ok(Constraints::unchecked(blocks))
        }
        (Some(_), Some(_)) => Err(bad(
            "give `mu` (Coulomb contacts) or `constraints`, not both".into(),
        )),
        (None, None) => Err(bad(
            "field `mu`: missing (give `mu` or `constraints`)".into()
        )),
    }
}

/// Constraint blocks as Python dicts (`{"kind": "contact", "mu": [...]}`).
fn blocks_to_python<'py>(py: Python<'py>, blocks: &[Constraint]) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(blocks)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    to_python(py, &value)
}

/// A contact-space problem `u = W r + q`: Coulomb contacts normal first `[n, t1, t2]`, or any
/// constraint blocks (`constraints`).
#[pyclass(module = "contactlab", name = "LocalProblem", frozen)]
pub struct PyLocalProblem {
    pub(crate) step: Arc<StepProblem>,
}

impl PyLocalProblem {
    /// Wraps a validated problem.
    pub fn wrap(p: LocalProblem) -> PyLocalProblem {
        PyLocalProblem {
            step: Arc::new(StepProblem::local_only(p)),
        }
    }

    fn local(&self) -> PyResult<&LocalProblem> {
        self.step.local().map_err(core_err)
    }
}

#[pymethods]
impl PyLocalProblem {
    /// `LocalProblem(W, q, mu=None, check_psd=True, constraints=None)`: `W` (`m x m`, NumPy or
    /// scipy.sparse), `q` (`m`), and the rows' constraints: `mu` (one friction coefficient per
    /// Coulomb contact, `m = 3nc`) or `constraints` (a list of blocks in row order as a problem
    /// file writes them: `{"kind": "limit"}`, `{"kind": "equality", "rows": 3}`,
    /// `{"kind": "friction_loss", "f_max": 0.1}`, `{"kind": "contact", "mu": [0.8, 0.8, 0.01]}`),
    /// one of the two. Validated as a problem file is (`ValueError` naming the field); `W` is
    /// checked positive semidefinite (island by island for contacts) unless `check_psd` is false.
    #[new]
    #[pyo3(signature = (W, q, mu = None, check_psd = true, constraints = None))]
    #[allow(non_snake_case)]
    fn new(
        py: Python<'_>,
        W: &Bound<'_, PyAny>,
        q: &Bound<'_, PyAny>,
        mu: Option<&Bound<'_, PyAny>>,
        check_psd: bool,
        constraints: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyLocalProblem> {
        let rows = rows_of(py, mu, constraints)?;
        let (w, q) = (matrix("W", W)?, vector("q", q)?);
        guard(py, move || {
            let p = LocalProblem::with_constraints(w, q, rows).map_err(problem_err)?;
            if check_psd {
                self::check_psd(&p)?;
            }
            Ok(PyLocalProblem::wrap(p))
        })
    }

    /// `W` as a dense NumPy array.
    #[getter(W)]
    fn w<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(dense(py, &self.local()?.w))
    }

    /// The free velocity `q`.
    #[getter]
    fn q<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(array(py, &self.local()?.q))
    }

    /// Friction coefficients, one per contact (per block: NaN for a block that is not a
    /// contact).
    #[getter]
    fn mu<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(array(py, self.local()?.mu()))
    }

    /// The kind of each constraint block, in row order (`["limit", "contact", "contact"]`).
    #[getter]
    fn kinds(&self) -> PyResult<Vec<&'static str>> {
        Ok(self
            .local()?
            .constraints
            .blocks()
            .iter()
            .map(|b| b.kind())
            .collect())
    }

    /// The constraint blocks in row order, as a problem file's `constraints` list.
    #[getter]
    fn constraints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        blocks_to_python(py, self.local()?.constraints.blocks())
    }

    /// Number of contacts.
    #[getter]
    fn num_contacts(&self) -> usize {
        self.step.num_contacts()
    }

    /// The problem itself (already in contact space).
    fn to_local(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        format!("LocalProblem({} contacts)", self.step.num_contacts())
    }
}

/// A generalized-space problem `M v = H r + f`, `u = H' v + w` (FCLib's global form), contacts
/// normal first.
#[pyclass(module = "contactlab", name = "GeneralizedProblem", frozen)]
pub struct PyGeneralizedProblem {
    pub(crate) global: Arc<GlobalProblem>,
    pub(crate) step: Arc<StepProblem>,
}

/// What a Python-built generalized problem knows of its step beyond FCLib's fields.
#[derive(Default)]
struct StepPhysics {
    /// One position error per row.
    phi0: Option<Vec<f64>>,
    /// The time step.
    dt: Option<f64>,
    /// One rigid target velocity per row.
    target: Option<Vec<f64>>,
    /// One normal stiffness per contact (SAP's eq. 29; infinite: rigid).
    stiffness: Option<Vec<f64>>,
    /// One dissipation time scale per contact (SAP's eq. 29 and bias).
    tau_d: Option<Vec<f64>>,
}

/// Refuses a field of `v.len()` entries where `n` are expected, one per `of`.
fn sized(field: &str, v: &[f64], n: usize, of: &str) -> PyResult<()> {
    if v.len() != n {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "field `{field}`: {} entries, expected {n} (one per {of})",
            v.len()
        )));
    }
    Ok(())
}

/// Sets the contacts' stiffness (positive, `inf` rigid) and dissipation time scale (finite,
/// nonnegative) from `physics`, refusing a wrong size or value by the field's Python name.
fn set_compliance(gen: &mut GeneralizedProblem, physics: &StepPhysics) -> PyResult<()> {
    let nc = gen.num_contacts();
    let bad = |field: &str, i: usize, x: f64, want: &str| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "field `{field}`: entry {i} is {x}, expected {want}"
        ))
    };
    if let Some(k) = &physics.stiffness {
        sized("stiffness", k, nc, "contact")?;
        for (i, (c, &k)) in gen.contacts.iter_mut().zip(k).enumerate() {
            if k.is_nan() || k <= 0.0 {
                return Err(bad("stiffness", i, k, "positive (inf: rigid)"));
            }
            c.stiffness = k;
        }
    }
    if let Some(tau) = &physics.tau_d {
        sized("tau_d", tau, nc, "contact")?;
        for (i, (c, &t)) in gen.contacts.iter_mut().zip(tau).enumerate() {
            if !(t.is_finite() && t >= 0.0) {
                return Err(bad("tau_d", i, t, "finite and nonnegative"));
            }
            c.dissipation = t;
        }
    }
    Ok(())
}

impl PyGeneralizedProblem {
    /// Wraps a validated problem, kept generalized as `contactlab solve` keeps a global file.
    pub fn wrap(g: GlobalProblem) -> PyResult<PyGeneralizedProblem> {
        PyGeneralizedProblem::wrap_with(g, StepPhysics::default())
    }

    /// [`PyGeneralizedProblem::wrap`] with the step's position errors, time step and targets.
    fn wrap_with(g: GlobalProblem, physics: StepPhysics) -> PyResult<PyGeneralizedProblem> {
        let mut gen = GeneralizedProblem::from_global(&g).map_err(core_err)?;
        let rows = gen.num_rows();
        let per_row = |field: &str, v: &[f64]| sized(field, v, rows, "row of H'");
        if let Some(phi0) = &physics.phi0 {
            per_row("phi0", phi0)?;
            let nc = gen.num_contacts();
            for (i, c) in gen.contacts.iter_mut().enumerate() {
                c.phi0 = phi0[3 * i];
            }
            let mut at = 3 * nc;
            for o in gen.others.iter_mut() {
                let n = o.constraint.rows();
                o.phi0.copy_from_slice(&phi0[at..at + n]);
                at += n;
            }
        }
        set_compliance(&mut gen, &physics)?;
        if let Some(t) = physics.target {
            per_row("target", &t)?;
            gen.target = t;
        }
        gen.dt = physics.dt;
        gen.validate().map_err(problem_err)?;
        Ok(PyGeneralizedProblem {
            global: Arc::new(g),
            step: Arc::new(StepProblem::from_generalized(gen)),
        })
    }
}

#[pymethods]
impl PyGeneralizedProblem {
    /// `GeneralizedProblem(M, H, f, w, mu=None, constraints=None, phi0=None, dt=None,
    /// target=None, stiffness=None, tau_d=None)`: `M` (`n x n`, symmetric positive definite),
    /// `H` (`n x m`; NumPy or scipy.sparse), `f` (`n`), `w` (`m`), the rows' constraints as
    /// `LocalProblem` takes them (`mu`, or `constraints` in row order), and what SAP's own model
    /// and the rigid targets need: `phi0` (one position error per row: a contact's signed
    /// distance on its normal row, a limit's or an equality's violation, 0 elsewhere), `dt` (the
    /// time step), `target` (one rigid target velocity per row, subtracted in `to_local`'s `q`;
    /// SAP uses `phi0` instead), and per contact SAP's `stiffness` (eq. 29; `inf`, the default,
    /// is rigid) and dissipation time scale `tau_d` (default 0). Validated as a problem file is
    /// (`ValueError` naming the field).
    #[new]
    #[allow(non_snake_case)]
    #[pyo3(signature = (M, H, f, w, mu = None, **rows))]
    fn new(
        py: Python<'_>,
        M: &Bound<'_, PyAny>,
        H: &Bound<'_, PyAny>,
        f: &Bound<'_, PyAny>,
        w: &Bound<'_, PyAny>,
        mu: Option<&Bound<'_, PyAny>>,
        rows: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyGeneralizedProblem> {
        let (m, h) = (matrix("M", M)?, matrix("H", H)?);
        let (f, w) = (vector("f", f)?, vector("w", w)?);
        let get = |key: &str| {
            rows.map(|d| d.get_item(key))
                .transpose()
                .map(Option::flatten)
        };
        if let Some(d) = rows {
            for key in d.keys() {
                let key: String = key.extract()?;
                let known = ["constraints", "phi0", "dt", "target", "stiffness", "tau_d"];
                if !known.contains(&key.as_str()) {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "unknown argument `{key}`: GeneralizedProblem takes M, H, f, w, mu, \
                         constraints, phi0, dt, target, stiffness and tau_d"
                    )));
                }
            }
        }
        let blocks = rows_of(py, mu, get("constraints")?.as_ref())?;
        let step = StepPhysics {
            phi0: get("phi0")?.map(|p| vector("phi0", &p)).transpose()?,
            dt: get("dt")?.map(|d| d.extract::<f64>()).transpose()?,
            target: get("target")?.map(|t| vector("target", &t)).transpose()?,
            stiffness: get("stiffness")?
                .map(|k| vector("stiffness", &k))
                .transpose()?,
            tau_d: get("tau_d")?.map(|t| vector("tau_d", &t)).transpose()?,
        };
        guard(py, move || {
            let g = GlobalProblem::with_constraints(m, h, f, w, blocks).map_err(problem_err)?;
            PyGeneralizedProblem::wrap_with(g, step)
        })
    }

    /// The kind of each constraint block, in row order.
    #[getter]
    fn kinds(&self) -> Vec<&'static str> {
        self.global
            .constraints
            .blocks()
            .iter()
            .map(|b| b.kind())
            .collect()
    }

    /// The constraint blocks in row order, as a problem file's `constraints` list.
    #[getter]
    fn constraints<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        blocks_to_python(py, self.global.constraints.blocks())
    }

    /// Each row's rigid target velocity (zeros when none was given).
    #[getter]
    fn target<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        match self.step.generalized() {
            Some(g) if !g.target.is_empty() => array(py, &g.target),
            Some(g) => array(py, &vec![0.0; g.num_rows()]),
            None => array(py, &[]),
        }
    }

    /// Each row's position error `phi0` (SAP's own model; zeros when none was given).
    #[getter]
    fn phi0<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let phi0: Vec<f64> = self.step.generalized().map_or_else(Vec::new, |g| {
            g.contacts
                .iter()
                .flat_map(|c| [c.phi0, 0.0, 0.0])
                .chain(g.others.iter().flat_map(|o| o.phi0.iter().copied()))
                .collect()
        });
        array(py, &phi0)
    }

    /// The time step, when given.
    #[getter]
    fn dt(&self) -> Option<f64> {
        self.step.generalized().and_then(|g| g.dt)
    }

    /// `M` as a dense NumPy array.
    #[getter(M)]
    fn m<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        dense(py, &self.global.m)
    }

    /// `H = J'` as a dense NumPy array.
    #[getter(H)]
    fn h<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        dense(py, &self.global.h)
    }

    /// The generalized free impulse `f`.
    #[getter]
    fn f<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, &self.global.f)
    }

    /// The contact-velocity offset `w`.
    #[getter]
    fn w<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, &self.global.w)
    }

    /// Friction coefficients, one per contact.
    #[getter]
    fn mu<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        array(py, self.global.mu())
    }

    /// Number of contacts.
    #[getter]
    fn num_contacts(&self) -> usize {
        self.global.num_contacts()
    }

    /// Number of generalized velocities.
    #[getter]
    fn num_dofs(&self) -> usize {
        self.global.m.nrows()
    }

    /// The contact-space form `W = H' M^-1 H`, `q = H' M^-1 f + w`: exactly the `W` and `q`
    /// the contact-space formulations solve.
    fn to_local(&self, py: Python<'_>) -> PyResult<PyLocalProblem> {
        let step = self.step.clone();
        guard(py, move || {
            let local = step.local().map_err(core_err)?.clone();
            Ok(PyLocalProblem::wrap(local))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "GeneralizedProblem({} dofs, {} contacts)",
            self.global.m.nrows(),
            self.global.num_contacts()
        )
    }
}

/// `read(path, check_psd=True)`: a problem file (FCLib HDF5 `fclib_local` or
/// `fclib_global`, JSON with the same fields, or a folder of `.npy` files) as a
/// `LocalProblem` or a `GeneralizedProblem`; errors name the file and the field.
#[pyfunction]
#[pyo3(signature = (path, check_psd = true))]
pub fn read(py: Python<'_>, path: PathBuf, check_psd: bool) -> PyResult<Py<PyAny>> {
    let problem = guard(py, move || {
        let p = read_problem(&path).map_err(core_err)?;
        if let (true, Problem::Local(l)) = (check_psd, &p) {
            check_psd_by_island(l, PSD_REL_TOL).map_err(|e| {
                core_err(contactlab_core::CoreError::File {
                    path: path.clone(),
                    field: None,
                    message: e.to_string(),
                })
            })?;
        }
        Ok(p)
    })?;
    Ok(match problem {
        Problem::Local(l) => Py::new(py, PyLocalProblem::wrap(l))?.into_any(),
        Problem::Global(g) => Py::new(py, PyGeneralizedProblem::wrap(g)?)?.into_any(),
    })
}
