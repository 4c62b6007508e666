//! # contactlab-python
//!
//! The Python package `contactlab` (built by maturin as `contactlab._contactlab`): a thin
//! layer over the lab's API (`contactlab_lab`): the standard [`Lab`]'s registry solves,
//! `contactlab_lab::solve` routes options, lists pairs and runs every pair on a problem,
//! [`Lab::run`] runs configs; the core reads and validates problems. Nothing is decided here
//! that the command line decides differently: the same problem and the same spec give the same
//! bits as `contactlab solve`.
//!
//! Every call into the library runs with the GIL released and behind
//! [`std::panic::catch_unwind`], so a panic surfaces as `contactlab.SolverError` (a
//! `RuntimeError`), never as PyO3's `PanicException`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use contactlab_core::contactbench::contactbench_of;
use contactlab_core::metrics::metrics_for;
use contactlab_core::{GlobalProblem, StepProblem};
use contactlab_lab::solve::{
    pair_solves_frame, pair_table, solve_all as lab_solve_all, spec_from_options, SOLVE_MAX_ITER,
};
use contactlab_lab::{Lab, Settings};
use contactlab_runs::store::read_parquet;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

mod arrow;
mod convert;
mod guard;
mod problem;
mod solution;

use convert::{core_err, options, registry_err};
use guard::{guard, SolverError};
use problem::{PyGeneralizedProblem, PyLocalProblem};
use solution::PySolution;

/// The standard lab (the standard registry), made once.
fn lab() -> &'static Lab {
    static LAB: OnceLock<Lab> = OnceLock::new();
    LAB.get_or_init(Lab::standard)
}

/// The problem a Python object holds, as the lab solves it.
fn step_of(problem: &Bound<'_, PyAny>) -> PyResult<(Arc<StepProblem>, Option<Arc<GlobalProblem>>)> {
    if let Ok(p) = problem.cast::<PyLocalProblem>() {
        return Ok((p.get().step.clone(), None));
    }
    if let Ok(p) = problem.cast::<PyGeneralizedProblem>() {
        let p = p.get();
        return Ok((p.step.clone(), Some(p.global.clone())));
    }
    Err(PyTypeError::new_err(format!(
        "problem: expected a contactlab.LocalProblem or contactlab.GeneralizedProblem, got {}",
        problem.get_type().name()?
    )))
}

/// `solve(problem, formulation="coulomb", optimizer="pgs", tol=1e-8, max_iter=None,
/// time_limit=None, **options)`: one solve, as `contactlab solve` does it. `max_iter` defaults
/// to the command line's 500; `options` go to the formulation or the optimizer that has them
/// (`restarts=3`, `edge_aware=False`), or to the spec (`rel_tol`, `islands`, `whole_below`, `dense`,
/// `start`); `warm=` a previous solution's `warm` (one number per row, `NaN` where none) starts
/// from it (`start` becomes `"warm"` unless given); `**{"formulation.KEY": value}` names the plugin outright; an unknown one is a
/// `ValueError` naming it and those that exist (the lab's `spec_from_options`, which the
/// command line shares).
#[pyfunction]
#[pyo3(signature = (problem, formulation = "coulomb", optimizer = "pgs", tol = 1e-8, max_iter = None, time_limit = None, **options))]
// The Python signature is the API (keyword arguments with defaults), PyO3 maps it one to one;
// the GIL token comes from `problem` rather than as one more parameter.
fn solve(
    problem: &Bound<'_, PyAny>,
    formulation: &str,
    optimizer: &str,
    tol: f64,
    max_iter: Option<u64>,
    time_limit: Option<f64>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<PySolution> {
    let py = problem.py();
    let (step, global) = step_of(problem)?;
    let (warm, options) = warm_of(&step, options)?;
    let mut opts = options
        .as_ref()
        .map(self::options)
        .transpose()?
        .unwrap_or_default();
    if warm.is_some() {
        opts.entry("start").or_insert_with(|| "warm".into());
    }
    let (f, o) = (formulation.to_string(), optimizer.to_string());
    let kept = step.clone();
    let (solve, fo, oo) = guard(py, move || {
        let registry = lab().registry();
        let spec = spec_from_options(
            registry,
            &f,
            &o,
            tol,
            max_iter.unwrap_or(SOLVE_MAX_ITER),
            time_limit,
            &opts,
        )
        .map_err(registry_err)?;
        let resolved = registry.resolve(&spec).map_err(registry_err)?;
        let s = resolved.solve(&step, warm.as_deref()).map_err(core_err)?;
        Ok((s, resolved.formulation.options(), resolved.driver.options()))
    })?;
    Ok(PySolution {
        solve,
        formulation: formulation.to_string(),
        optimizer: optimizer.to_string(),
        options: fo,
        optimizer_options: oo,
        global,
        v: PyOnceLock::new(),
        trace: PyOnceLock::new(),
        step: kept,
        tol,
        sensitivity: OnceLock::new(),
    })
}

/// A warm vector and the keyword options left without it.
type WarmAndRest<'py> = (Option<Vec<f64>>, Option<Bound<'py, PyDict>>);

/// The `warm` keyword of [`solve`] taken out of its options: one number per row (the warm state
/// of a previous [`PySolution`], `NaN` where a row has none), its length checked against the
/// problem's rows.
fn warm_of<'py>(
    step: &StepProblem,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<WarmAndRest<'py>> {
    let Some(d) = options else {
        return Ok((None, None));
    };
    let Some(w) = d.get_item("warm")? else {
        return Ok((None, Some(d.clone())));
    };
    let rest = d.copy()?;
    rest.del_item("warm")?;
    if w.is_none() {
        return Ok((None, Some(rest)));
    }
    let warm = convert::vector("warm", &w)?;
    let rows = step.constraints().map_err(core_err)?.rows();
    if warm.len() != rows {
        return Err(PyValueError::new_err(format!(
            "warm: {} numbers for a problem of {rows} rows (one per row, NaN where a row has none)",
            warm.len()
        )));
    }
    Ok((Some(warm), Some(rest)))
}

/// `solve_all(problem, tol=1e-8, max_iter=None, time_limit=10.0)`: every compatible pair
/// on `problem` with default options, one row per pair (`formulation`, `optimizer`, `model`,
/// `status`, `solver_status`, `iterations`, `seconds`, `residual`, `cone_violation`,
/// `complementarity_gap`, `message`) as a polars DataFrame.
#[pyfunction]
#[pyo3(signature = (problem, tol = 1e-8, max_iter = None, time_limit = 10.0))]
fn solve_all(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    tol: f64,
    max_iter: Option<u64>,
    time_limit: Option<f64>,
) -> PyResult<Py<PyAny>> {
    let (step, _) = step_of(problem)?;
    let frame = guard(py, move || {
        let rows = lab_solve_all(
            lab().registry(),
            &step,
            tol,
            max_iter.unwrap_or(SOLVE_MAX_ITER),
            time_limit,
        )
        .map_err(registry_err)?;
        pair_solves_frame(&rows).map_err(|e| SolverError::new_err(e.to_string()))
    })?;
    arrow::to_polars(py, frame)
}

/// `evaluate(problem, r, dt=None)`: the shared metrics of impulses `r` on `problem`
/// (`natural_map`, `cone_violation`, `dual_cone_violation`, `complementarity_gap`), the ruler
/// every solve is judged by: for an answer from elsewhere (MuJoCo's, say) beside the solvers'.
/// With a time step `dt`, also ContactBench's five figures of `r` (Le Lidec et al., T-RO 2024;
/// `core/src/contactbench.rs`) on the forces `r / dt`, as `Solution.contactbench(dt)` gives
/// them: `contactbench_primal`, `contactbench_dual`, `contactbench_complementarity`,
/// `contactbench_signorini` and `contactbench_dissipation` (`ValueError` for a `dt` that is not
/// positive and finite).
#[pyfunction]
#[pyo3(signature = (problem, r, dt = None))]
fn evaluate<'py>(
    py: Python<'py>,
    problem: &Bound<'py, PyAny>,
    r: &Bound<'py, PyAny>,
    dt: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let (step, _) = step_of(problem)?;
    let r = convert::vector("r", r)?;
    let blocks = step.constraints().map_err(core_err)?;
    let n = blocks.rows();
    if r.len() != n {
        return Err(convert::problem_err(contactlab_core::ProblemError::Shape {
            field: "r".into(),
            expected: format!("{n} entries (one per row, 3 per Coulomb contact)"),
            found: format!("{} entries", r.len()),
        }));
    }
    let (m, cb) = guard(py, move || {
        let u = step.velocity(&r).map_err(core_err)?;
        let q = step.free_velocity().map_err(core_err)?;
        let cb = dt
            .map(|dt| contactbench_of(&blocks, &r, &u, dt))
            .transpose()
            .map_err(core_err)?;
        // Every kind by its own block's terms (a Coulomb contact's are metrics_of's, term for term).
        Ok((metrics_for(&blocks, &q, &r, &u), cb))
    })?;
    let d = PyDict::new(py);
    d.set_item("natural_map", m.natural_map)?;
    d.set_item("cone_violation", m.cone_violation)?;
    d.set_item("dual_cone_violation", m.dual_cone_violation)?;
    d.set_item("complementarity_gap", m.complementarity_gap)?;
    if let Some(c) = cb {
        solution::put_contactbench(&d, "contactbench_", &c)?;
    }
    Ok(d)
}

/// `pairs()`: every (formulation, optimizer) of the registry as a dict with `formulation`,
/// `optimizer`, `model`, `compatible`, for a pair that cannot run the `reason`, the constraint
/// `kinds` it takes and those it `refuses` (a dict: kind to reason).
#[pyfunction]
fn pairs(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    pair_table(lab().registry())
        .into_iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("formulation", p.formulation)?;
            d.set_item("optimizer", p.optimizer)?;
            d.set_item("model", p.model)?;
            d.set_item("compatible", p.compatible)?;
            d.set_item("reason", p.reason)?;
            d.set_item("kinds", p.kinds)?;
            d.set_item("refuses", p.refuses.into_iter().collect::<HashMap<_, _>>())?;
            Ok(d)
        })
        .collect()
}

/// The workspace a config belongs to: the nearest folder above it holding
/// `experiments/configs`, else the lab's own.
fn root_of(config: &Path) -> PathBuf {
    let abs = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
    abs.ancestors()
        .find(|d| d.join("experiments/configs").is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(contactlab_lab::workspace_root)
}

/// `run(config, root=None)`: runs a TOML config as `contactlab run` does (any kind), writing
/// its rows and `.meta.json` under `root/data/runs/` (`root`: the workspace the config sits
/// in), and returns its rows as a polars DataFrame.
#[pyfunction]
#[pyo3(signature = (config, root = None))]
fn run(py: Python<'_>, config: PathBuf, root: Option<PathBuf>) -> PyResult<Py<PyAny>> {
    let frame = guard(py, move || {
        let root = root.unwrap_or_else(|| root_of(&config));
        let lab = Lab::standard().with_root(root).with_settings(Settings {
            progress: false,
            ..Settings::default()
        });
        let mut log = Vec::new();
        let summary = lab
            .run(&config, None, &mut log)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        read_parquet(&summary.path).map_err(|e| SolverError::new_err(e.to_string()))
    })?;
    arrow::to_polars(py, frame)
}

/// The extension module `contactlab._contactlab`.
#[pymodule]
fn _contactlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SolverError", m.py().get_type::<SolverError>())?;
    // Timings from a debug build are not a solver's speed: studies that time say which it was.
    m.add(
        "BUILD_PROFILE",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    )?;
    // The commit the extension was built from (`build.rs`): a study refuses a stale install.
    m.add("BUILD_COMMIT", env!("CONTACTLAB_BUILD_COMMIT"))?;
    m.add_class::<PyLocalProblem>()?;
    m.add_class::<PyGeneralizedProblem>()?;
    m.add_class::<PySolution>()?;
    m.add_class::<arrow::ArrowStream>()?;
    m.add_function(wrap_pyfunction!(problem::read, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_all, m)?)?;
    m.add_function(wrap_pyfunction!(pairs, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
