//! One problem solved by name, as `contactlab solve` and the Python package do it: the solver
//! spec from a flat set of options (each routed to the plugin that has it), the generalized
//! velocity of a global problem's answer, every pair of the registry on one problem (one row
//! per pair), and the table of pairs with the reason each incompatible one cannot run.

use contactlab_core::{CoreError, GlobalProblem, StepProblem};
use contactlab_runs::schema::matrix;
use faer::linalg::solvers::Solve;
use faer::Side;
use polars::prelude::*;
use serde_json::{Map, Value};

use crate::registry::{pair_model, Registry, RegistryError, SolverSpec};

/// The iteration budget of a solve that names none (`contactlab solve`, `contactlab.solve`).
pub const SOLVE_MAX_ITER: u64 = 500;

/// The options a spec itself takes (not a plugin's): [`spec_from_options`] routes them there.
pub const SPEC_OPTIONS: [&str; 5] = ["rel_tol", "islands", "whole_below", "dense", "start"];

/// A key that names the plugin its option is for: `formulation.KEY` or `optimizer.KEY`
/// ([`spec_from_options`] routes it there without asking which plugin has it).
pub const PLUGIN_PREFIXES: [&str; 2] = ["formulation.", "optimizer."];

/// A solver spec from names, budgets and a flat set of options: the one option parser that
/// `contactlab solve` and the Python package share. A spec option ([`SPEC_OPTIONS`]) goes
/// to the spec; `formulation.KEY` and `optimizer.KEY` go to the plugin they name; any other
/// key to the formulation or the optimizer that has it (with a default). An option that
/// neither has, or that both have, is refused with a message naming it and the options that
/// exist. The spec is checked (names, pairing, option values, numbers) before it is returned.
pub fn spec_from_options(
    registry: &Registry,
    formulation: &str,
    optimizer: &str,
    tol: f64,
    max_iter: u64,
    time_limit: Option<f64>,
    options: &Map<String, Value>,
) -> Result<SolverSpec, RegistryError> {
    let mut spec = SolverSpec::new(formulation, optimizer, tol, max_iter);
    spec.time_limit = time_limit;
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let owners = Owners {
        formulation: keys(&registry.formulation(formulation)?.defaults),
        optimizer: keys(&registry.driver(optimizer)?.defaults),
    };
    for (key, value) in options {
        route_option(&mut spec, &owners, key, value)?;
    }
    registry.check(&spec)?;
    Ok(spec)
}

/// The option names each plugin of a spec has.
struct Owners {
    formulation: Vec<String>,
    optimizer: Vec<String>,
}

/// Puts one option where it belongs (see [`spec_from_options`]).
fn route_option(
    spec: &mut SolverSpec,
    owners: &Owners,
    key: &str,
    value: &Value,
) -> Result<(), RegistryError> {
    if let Some(k) = key.strip_prefix(PLUGIN_PREFIXES[0]) {
        spec.formulation.options.insert(k.into(), value.clone());
        return Ok(());
    }
    if let Some(k) = key.strip_prefix(PLUGIN_PREFIXES[1]) {
        spec.optimizer.options.insert(k.into(), value.clone());
        return Ok(());
    }
    if SPEC_OPTIONS.contains(&key) {
        return set_spec_option(spec, key, value);
    }
    let (formulation, optimizer) = (&spec.formulation.name, &spec.optimizer.name);
    let in_f = owners.formulation.iter().any(|k| k == key);
    let in_d = owners.optimizer.iter().any(|k| k == key);
    match (in_f, in_d) {
        (true, true) => Err(RegistryError::BadOption(format!(
            "option `{key}` belongs to both formulation `{formulation}` and optimizer \
             `{optimizer}`: name the plugin it is for (`formulation.{key}` or \
             `optimizer.{key}`)"
        ))),
        (true, false) => {
            spec.formulation.options.insert(key.into(), value.clone());
            Ok(())
        }
        (false, true) => {
            spec.optimizer.options.insert(key.into(), value.clone());
            Ok(())
        }
        (false, false) => {
            let list = |k: &[String]| {
                if k.is_empty() {
                    "none".to_string()
                } else {
                    k.join(", ")
                }
            };
            Err(RegistryError::BadOption(format!(
                "unknown option `{key}`: formulation `{formulation}` has {}, optimizer \
                 `{optimizer}` has {}, every solve has {}",
                list(&owners.formulation),
                list(&owners.optimizer),
                SPEC_OPTIONS.join(", ")
            )))
        }
    }
}

/// Sets one of the spec's own options ([`SPEC_OPTIONS`]) from its value.
fn set_spec_option(spec: &mut SolverSpec, key: &str, value: &Value) -> Result<(), RegistryError> {
    let bad = |expected: &str| {
        RegistryError::BadOption(format!("option `{key}`: expected {expected}, got {value}"))
    };
    match key {
        "rel_tol" => spec.rel_tol = value.as_f64().ok_or_else(|| bad("a number"))?,
        "islands" => spec.islands = value.as_bool().ok_or_else(|| bad("true or false"))?,
        "dense" => spec.dense = value.as_bool().ok_or_else(|| bad("true or false"))?,
        "whole_below" => {
            spec.whole_below = Some(value.as_u64().ok_or_else(|| bad("a count of contacts"))?)
        }
        "start" => {
            spec.start = serde_json::from_value(value.clone()).map_err(|e| {
                RegistryError::BadOption(format!(
                    "option `start`: {e} (one of \"default\", \"zero\", \"warm\")"
                ))
            })?
        }
        other => {
            return Err(RegistryError::BadOption(format!(
                "`{other}` is not an option of the spec ({})",
                SPEC_OPTIONS.join(", ")
            )))
        }
    }
    Ok(())
}

/// `v = M^-1 (H r + f)`: the generalized velocity of impulses `r` on a global problem (a dense
/// Cholesky factorization of `M`).
pub fn generalized_velocity(g: &GlobalProblem, r: &[f64]) -> Result<Vec<f64>, CoreError> {
    let mut rhs = vec![0.0; g.f.len()];
    g.h.mul_vec(r, &mut rhs);
    rhs.iter_mut().zip(&g.f).for_each(|(a, b)| *a += b);
    // The symmetric part, as the problem's own factorization takes it (a file's `M` may be
    // asymmetric in its last digits, which an ill-conditioned `M` amplifies).
    let m = g.m.to_dense();
    let m = faer::Mat::from_fn(m.nrows(), m.ncols(), |i, j| 0.5 * (m[(i, j)] + m[(j, i)]));
    let llt = m
        .llt(Side::Lower)
        .map_err(|e| CoreError::LinearAlgebra(format!("M is not positive definite: {e:?}")))?;
    let b = faer::Col::from_fn(rhs.len(), |i| rhs[i]);
    let v = llt.solve(&b);
    Ok((0..v.nrows()).map(|i| v[i]).collect())
}

/// One pair of the registry, compatible or not.
#[derive(Debug, Clone, PartialEq)]
pub struct PairInfo {
    /// Formulation name.
    pub formulation: &'static str,
    /// Optimizer name.
    pub optimizer: &'static str,
    /// The friction model the pair solves (`coulomb_cone`, `friction_pyramid`, `regularized`,
    /// `maximum_dissipation`).
    pub model: &'static str,
    /// Whether the optimizer can run the formulation.
    pub compatible: bool,
    /// Why it cannot (empty when it can).
    pub reason: String,
    /// The constraint kinds it takes ([`Registry::pair_kinds`]).
    pub kinds: Vec<&'static str>,
    /// The kinds it refuses, each with its reason ([`Registry::pair_refusals`]).
    pub refuses: Vec<(&'static str, String)>,
}

/// Every (formulation, optimizer) of the registry, formulations and drivers in registration
/// order: its model, and for a pair that cannot run, why.
pub fn pair_table(registry: &Registry) -> Vec<PairInfo> {
    let mut out = Vec::new();
    for f in registry.formulations() {
        for d in registry.drivers() {
            let reason = registry.incompatibility(f, d);
            out.push(PairInfo {
                formulation: f.name,
                optimizer: d.name,
                model: pair_model(f, d).as_str(),
                compatible: reason.is_none(),
                reason: reason.unwrap_or_default(),
                kinds: Registry::pair_kinds(f, d),
                refuses: Registry::pair_refusals(f, d),
            });
        }
    }
    out
}

/// One pair's solve of one problem ([`solve_all`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PairSolve {
    /// Formulation name.
    pub formulation: &'static str,
    /// Optimizer name.
    pub optimizer: &'static str,
    /// The friction model.
    pub model: String,
    /// Status by the shared ruler (`error` when the pair refused the problem).
    pub status: String,
    /// The driver's own status.
    pub solver_status: String,
    /// Iterations.
    pub iterations: u64,
    /// Seconds of the solve (the ruler excluded).
    pub seconds: f64,
    /// The natural-map residual `|F_nat| / (1 + |q|)`.
    pub residual: f64,
    /// `max_a dist(r_a, K_mu)`.
    pub cone_violation: f64,
    /// `sum_a |r_a . û_a|`.
    pub complementarity_gap: f64,
    /// Why the pair failed to run (empty otherwise).
    pub message: String,
}

/// Every compatible pair of `registry` on `problem`, in registry order, each with default
/// options, tolerance `tol` on the shared ruler, `max_iter` iterations and `time_limit`
/// seconds. A pair that refuses the problem gets a row with status `error` and its message.
pub fn solve_all(
    registry: &Registry,
    problem: &StepProblem,
    tol: f64,
    max_iter: u64,
    time_limit: Option<f64>,
) -> Result<Vec<PairSolve>, RegistryError> {
    let mut rows = Vec::new();
    for pair in registry.pairs() {
        let mut spec = SolverSpec::new(pair.formulation, pair.optimizer, tol, max_iter);
        spec.time_limit = time_limit;
        // A bad budget is the caller's error, not the pair's.
        let solver = registry.resolve(&spec)?;
        let model = registry.formulation(pair.formulation)?.model.as_str();
        let row = match solver.solve(problem, None) {
            Ok(s) => PairSolve {
                formulation: pair.formulation,
                optimizer: pair.optimizer,
                model: s.model.as_str().to_string(),
                status: s.status.as_str().to_string(),
                solver_status: s.solver_status.as_str().to_string(),
                iterations: s.iterations,
                seconds: s.seconds,
                residual: s.metrics.natural_map,
                cone_violation: s.metrics.cone_violation,
                complementarity_gap: s.metrics.complementarity_gap,
                message: String::new(),
            },
            Err(e) => PairSolve {
                formulation: pair.formulation,
                optimizer: pair.optimizer,
                model: model.to_string(),
                status: "error".into(),
                solver_status: "error".into(),
                iterations: 0,
                seconds: f64::NAN,
                residual: f64::NAN,
                cone_violation: f64::NAN,
                complementarity_gap: f64::NAN,
                message: e.to_string(),
            },
        };
        rows.push(row);
    }
    Ok(rows)
}

/// [`solve_all`]'s rows as a DataFrame, one column per [`PairSolve`] field.
pub fn pair_solves_frame(rows: &[PairSolve]) -> PolarsResult<DataFrame> {
    macro_rules! col {
        ($f:ident) => {
            rows.iter().map(|r| r.$f.clone()).collect::<Vec<_>>()
        };
    }
    df!(
        matrix::FORMULATION => col!(formulation),
        matrix::OPTIMIZER => col!(optimizer),
        matrix::MODEL => col!(model),
        matrix::STATUS => col!(status),
        matrix::SOLVER_STATUS => col!(solver_status),
        matrix::ITERATIONS => col!(iterations),
        matrix::SECONDS => col!(seconds),
        matrix::RESIDUAL => col!(residual),
        matrix::CONE_VIOLATION => col!(cone_violation),
        matrix::COMPLEMENTARITY_GAP => col!(complementarity_gap),
        matrix::MESSAGE => col!(message),
    )
}

/// One Coulomb contact sliding on `W = I` (`q = (-1, 2, 0)`, `mu = 0.5`: its answer is
/// `r = (1, -0.5, 0)`), the lab's tests' smallest problem.
#[cfg(test)]
pub(crate) fn sliding_contact() -> StepProblem {
    use contactlab_core::{LocalProblem, Matrix};
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    StepProblem::local_only(LocalProblem::coulomb(
        Matrix::from_row_major("W", 3, 3, &eye).unwrap(),
        vec![-1.0, 2.0, 0.0],
        &[0.5],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::{LocalProblem, Matrix};

    use super::sliding_contact as sliding;

    #[test]
    fn options_go_to_the_plugin_that_has_them_and_unknown_ones_are_named() {
        let reg = Registry::standard();
        let mut o = Map::new();
        o.insert("restarts".into(), 2.into());
        o.insert("edge_aware".into(), false.into());
        o.insert("rel_tol".into(), 1e-3.into());
        o.insert("whole_below".into(), 0.into());
        let spec =
            spec_from_options(&reg, "implicit-ncp", "todorov", 1e-8, 50, Some(1.0), &o).unwrap();
        assert_eq!(spec.whole_below, Some(0));
        let mut bad = Map::new();
        bad.insert("whole_below".into(), 1.5.into());
        let e = spec_from_options(&reg, "coulomb", "pgs", 1e-8, 50, None, &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`whole_below`") && e.contains("1.5"), "{e}");
        assert_eq!(spec.formulation.option("restarts"), Some(&Value::from(2)));
        assert_eq!(
            spec.optimizer.option("edge_aware"),
            Some(&Value::from(false))
        );
        assert_eq!(spec.rel_tol, 1e-3);
        assert_eq!(spec.time_limit, Some(1.0));
        let mut o = Map::new();
        o.insert("theta0_deg".into(), 30.0.into());
        let e = spec_from_options(&reg, "implicit-ncp", "todorov", 1e-8, 50, None, &o)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown option `theta0_deg`") && e.contains("restarts"),
            "{e}"
        );
        // A prefix names the plugin: the option goes there unasked, and the plugin judges it.
        let mut o = Map::new();
        o.insert("formulation.restarts".into(), 3.into());
        o.insert("optimizer.edge_aware".into(), true.into());
        let spec = spec_from_options(&reg, "implicit-ncp", "todorov", 1e-8, 50, None, &o).unwrap();
        assert_eq!(spec.formulation.option("restarts"), Some(&Value::from(3)));
        assert_eq!(
            spec.optimizer.option("edge_aware"),
            Some(&Value::from(true))
        );
        let mut o = Map::new();
        o.insert("optimizer.restarts".into(), 3.into());
        let e = spec_from_options(&reg, "implicit-ncp", "todorov", 1e-8, 50, None, &o)
            .unwrap_err()
            .to_string();
        assert!(e.contains("restarts") && e.contains("todorov"), "{e}");
        let e = spec_from_options(&reg, "coulomb", "nope", 1e-8, 50, None, &Map::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown optimizer `nope`"), "{e}");
    }

    #[test]
    fn every_pair_solves_a_sliding_contact_or_says_why_not() {
        let reg = Registry::standard();
        let rows = solve_all(&reg, &sliding(), 1e-10, 200, Some(5.0)).unwrap();
        assert_eq!(rows.len(), reg.pairs().len());
        let pgs = rows
            .iter()
            .find(|r| r.formulation == "coulomb" && r.optimizer == "pgs")
            .unwrap();
        assert_eq!(pgs.status, "converged");
        assert!(pgs.residual <= 1e-10);
        let frame = pair_solves_frame(&rows).unwrap();
        assert_eq!(frame.height(), rows.len());
        let table = pair_table(&reg);
        assert_eq!(
            table.iter().filter(|p| p.compatible).count(),
            reg.pairs().len()
        );
        assert!(table.iter().all(|p| p.compatible == p.reason.is_empty()));
    }

    /// Two equal equality rows (a weld and a connect closing one loop: `W = [1 1; 1 1]`,
    /// singular), with targets that agree (`q = (-1, -1)`: every `r1 + r2 = 1` solves it) or
    /// contradict (`q = (-1, -2)`: nothing does).
    fn redundant(q: [f64; 2]) -> StepProblem {
        use contactlab_core::{Constraint, Constraints};
        let c = Constraints::new(vec![Constraint::Equality { rows: 1 }; 2]).unwrap();
        let w = Matrix::from_row_major("W", 2, 2, &[1.0, 1.0, 1.0, 1.0]).unwrap();
        StepProblem::local_only(LocalProblem::with_constraints(w, q.to_vec(), c).unwrap())
    }

    #[test]
    fn every_pair_answers_redundant_equalities_or_says_why_not() {
        let reg = Registry::standard();
        let consistent = solve_all(&reg, &redundant([-1.0, -1.0]), 1e-10, 500, Some(5.0)).unwrap();
        let contradicting =
            solve_all(&reg, &redundant([-1.0, -2.0]), 1e-10, 500, Some(5.0)).unwrap();
        for r in consistent.iter().chain(&contradicting) {
            let who = format!("{}+{}", r.formulation, r.optimizer);
            if r.status == "error" {
                // Refused by kind, or (SAP, which needs A = W^-1) by W's singularity, in words.
                assert!(
                    r.message.contains("does not take equality")
                        || r.message.contains("numerically singular")
                        || r.message.contains("positive definite"),
                    "{who}: {}",
                    r.message
                );
            }
        }
        for r in consistent.iter().filter(|r| r.status == "converged") {
            // The ruler's residual on the equalities is |r1 + r2 - 1|.
            assert!(r.residual <= 1e-10, "{}+{}", r.formulation, r.optimizer);
        }
        let converged: Vec<_> = consistent
            .iter()
            .filter(|r| r.status == "converged")
            .map(|r| (r.formulation, r.optimizer))
            .collect();
        for pair in [
            ("coulomb", "pgs"),
            ("coulomb", "admm"),
            ("natural-map", "gauss-newton"),
        ] {
            assert!(converged.contains(&pair), "{pair:?} among {converged:?}");
        }
        let none: Vec<_> = contradicting
            .iter()
            .filter(|r| r.status == "converged")
            .map(|r| (r.formulation, r.optimizer))
            .collect();
        assert!(none.is_empty(), "contradicting targets converged: {none:?}");
    }

    /// A limit, a friction loss and a contact of condim 4 beside a Coulomb contact, `W`
    /// diagonal-dominant and coupled.
    fn mixed() -> StepProblem {
        use contactlab_core::{Constraint, Constraints};
        let c = Constraints::new(vec![
            Constraint::Limit,
            Constraint::FrictionLoss { f_max: 0.2 },
            Constraint::coulomb(0.5),
            Constraint::Contact {
                mu: vec![0.7, 0.7, 0.01],
            },
        ])
        .unwrap();
        let m = c.rows();
        let w: Vec<f64> = (0..m * m)
            .map(|k| {
                let (i, j) = (k / m, k % m);
                if i == j {
                    2.0
                } else {
                    0.1 / (1.0 + (i as f64 - j as f64).abs())
                }
            })
            .collect();
        let q = (0..m)
            .map(|i| if i % 3 == 0 { -1.0 } else { 0.4 })
            .collect();
        StepProblem::local_only(
            LocalProblem::with_constraints(Matrix::from_row_major("W", m, m, &w).unwrap(), q, c)
                .unwrap(),
        )
    }

    #[test]
    fn every_pair_solves_a_problem_of_other_kinds_or_names_the_kind_it_does_not_take() {
        let reg = Registry::standard();
        let rows = solve_all(&reg, &mixed(), 1e-10, 2000, Some(5.0)).unwrap();
        let pgs = rows
            .iter()
            .find(|r| r.formulation == "coulomb" && r.optimizer == "pgs")
            .unwrap();
        assert_eq!(pgs.status, "converged", "{}", pgs.message);
        assert!(pgs.residual <= 1e-10);
        let admm = rows
            .iter()
            .find(|r| r.formulation == "coulomb" && r.optimizer == "admm")
            .unwrap();
        assert_eq!(admm.status, "converged", "{}", admm.message);
        // A pair refuses before it runs, naming the first block it does not take and why: by
        // its declared kinds, or (bisection-sor on the condim-4 contact) by its driver's check
        // before the first sweep.
        let refused_at_start = |r: &PairSolve| {
            r.optimizer == "bisection-sor"
                && r.message
                    .contains("refuses constraint 3 (contact (condim 4))")
        };
        for r in rows
            .iter()
            .filter(|r| r.status == "error" && !refused_at_start(r))
        {
            assert!(
                r.message.contains("does not take") && r.message.contains("(`"),
                "{}+{}: {}",
                r.formulation,
                r.optimizer,
                r.message
            );
        }
        // Every pair the table says takes every kind runs, and the rigid ones reach the ruler's
        // tolerance (SAP's regularized answer is judged by its own optimality).
        let table = pair_table(&reg);
        let every: Vec<_> = table
            .iter()
            .filter(|p| p.compatible && p.kinds.len() == contactlab_core::constraint::LABELS.len())
            .map(|p| (p.formulation, p.optimizer))
            .collect();
        for p in ["natural-map", "implicit-ncp"] {
            assert!(every.iter().any(|e| e.0 == p), "{p} takes every kind");
        }
        let solved: Vec<_> = rows
            .iter()
            .filter(|r| r.status != "error" || refused_at_start(r))
            .map(|r| (r.formulation, r.optimizer))
            .collect();
        assert_eq!(solved, every);
        assert!(rows.iter().any(refused_at_start));
        // (L-BFGS on SAP's cost stagnates short of eq. 26 at this 1e-10: not asked of it here.)
        for r in rows
            .iter()
            .filter(|r| r.status != "error" && r.optimizer != "lbfgs")
        {
            let pair = format!("{}+{}: {}", r.formulation, r.optimizer, r.message);
            assert_eq!(r.status, "converged", "{pair}");
            if r.formulation != "sap" {
                assert!(r.residual <= 1e-10, "{pair}: {}", r.residual);
            }
        }
    }
}
