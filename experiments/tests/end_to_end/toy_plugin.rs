//! A formulation and a driver added in this file only, registered beside the project's own:
//! they are listed, pair with what their traits allow, solve, run a config and a matrix
//! through a lab holding the extended registry, and are refused with a reason where they
//! cannot run. Nothing outside this file knows them.

use contactlab_core::drivers::kit;
use contactlab_core::plugin::{
    Driver, DriverPlugin, Formulation, FormulationPlugin, Model, NeedsResidual,
};
use contactlab_core::{
    CoreError, LocalProblem, Matrix, Residual, Solution, SolveOptions, Status, StepProblem, Trace,
    TraceRow,
};
use contactlab_experiments::cli;
use contactlab_experiments::polars::prelude::DataFrame;
use contactlab_experiments::register_formulation;
use contactlab_experiments::registry::{PluginChoice, Registry, SolverSpec};
use contactlab_experiments::store::read_run;
use contactlab_experiments::Lab;
use faer::{Mat, MatMut};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The toy formulation's residual: frictionless contact as Fischer-Burmeister equations on the
/// normal rows (`phi(r_n, u_n) = 0`) and `r_t = 0` on the tangent rows. Only a `Residual`.
struct NormalFb {
    w: Mat<f64>,
    q: Vec<f64>,
    /// Weight of the tangent rows (the toy's one option, to show options reach the build).
    tangent_weight: f64,
}

impl Residual for NormalFb {
    fn num_unknowns(&self) -> usize {
        self.q.len()
    }
    fn num_residuals(&self) -> usize {
        self.q.len()
    }
    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let n = x.len();
        for i in 0..n {
            out[i] = if i % 3 == 0 {
                let u: f64 = (0..n).map(|j| self.w[(i, j)] * x[j]).sum::<f64>() + self.q[i];
                (x[i] * x[i] + u * u).sqrt() - x[i] - u
            } else {
                self.tangent_weight * x[i]
            };
        }
    }
    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        let n = x.len();
        for i in 0..n {
            for j in 0..n {
                out[(i, j)] = 0.0;
            }
            if i % 3 != 0 {
                out[(i, i)] = self.tangent_weight;
                continue;
            }
            let u: f64 = (0..n).map(|j| self.w[(i, j)] * x[j]).sum::<f64>() + self.q[i];
            let s = (x[i] * x[i] + u * u).sqrt().max(1e-300);
            for j in 0..n {
                out[(i, j)] = (u / s - 1.0) * self.w[(i, j)];
            }
            out[(i, i)] += x[i] / s - 1.0;
        }
    }
}

/// The toy formulation as a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ToyFormulation {
    tangent_weight: f64,
}

impl Default for ToyFormulation {
    fn default() -> Self {
        ToyFormulation {
            tangent_weight: 1.0,
        }
    }
}

impl Formulation for ToyFormulation {
    type Built = NormalFb;
    fn model(&self) -> Model {
        Model::Unspecified
    }
    fn check(&self) -> Result<(), CoreError> {
        if self.tangent_weight > 0.0 {
            Ok(())
        } else {
            Err(CoreError::BadOption(format!(
                "toy option tangent_weight must be positive, got {}",
                self.tangent_weight
            )))
        }
    }
    fn build(&self, p: &StepProblem) -> Result<NormalFb, CoreError> {
        let p = p.local()?;
        Ok(NormalFb {
            w: p.w.to_dense(),
            q: p.q.clone(),
            tangent_weight: self.tangent_weight,
        })
    }
    fn num_unknowns(&self, built: &NormalFb) -> usize {
        built.num_unknowns()
    }
    fn impulses(&self, _built: &NormalFb, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

impl FormulationPlugin for ToyFormulation {
    const NAME: &'static str = "toy-fb";
    const DESCRIPTION: &'static str = "test-only: frictionless Fischer-Burmeister on normal rows";
}

/// The toy driver: undamped Newton on the normal equations, at most `max_iter` steps, with a
/// counter of its own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ToyNewton {
    /// Added to the diagonal of `J'J`.
    damping: f64,
}

impl<R: Residual + ?Sized> Driver<R> for ToyNewton {
    fn solve(&self, r: &R, mut x: Vec<f64>, opts: &SolveOptions) -> Result<Solution, CoreError> {
        let (m, n) = (r.num_residuals(), r.num_unknowns());
        let (mut f, mut j) = (vec![0.0; m], Mat::zeros(m, n));
        let mut trace = Trace::default();
        let mut status = Status::MaxIterations;
        let mut iterations = 0;
        loop {
            r.residual(&x, &mut f);
            let merit = kit::merit_of(&f);
            trace.rows.push(TraceRow {
                iter: iterations,
                merit,
                grad_norm: f64::NAN,
                step_norm: f64::NAN,
                step_kind: Some("toy".into()),
                step_length: 1.0,
                lambda: self.damping,
                active: None,
                seconds: 0.0,
                extra: Default::default(),
            });
            if kit::norm2(&f) <= opts.stop_tol {
                status = Status::Converged;
                break;
            }
            if iterations >= opts.max_iter {
                break;
            }
            r.jacobian(&x, j.as_mut());
            let mut a = kit::gram(j.as_ref());
            (0..n).for_each(|i| a[(i, i)] += self.damping);
            let g: Vec<f64> = kit::mat_t_vec(j.as_ref(), &f).iter().map(|v| -v).collect();
            let Some(d) = kit::solve_spd(&a, &g) else {
                status = Status::SingularSystem;
                break;
            };
            x = kit::axpy(&x, 1.0, &d);
            iterations += 1;
        }
        let merit = trace.rows.last().map_or(f64::NAN, |r| r.merit);
        Ok(Solution {
            x,
            status,
            iterations,
            merit,
            seconds: 0.0,
            counters: [("toy_steps".to_string(), iterations)].into(),
            trace,
        })
    }
}

impl DriverPlugin for ToyNewton {
    type Needs = NeedsResidual;
    const NAME: &'static str = "toy-newton";
    const DESCRIPTION: &'static str = "test-only: undamped Gauss-Newton";
    fn check(&self) -> Result<(), CoreError> {
        if self.damping >= 0.0 {
            Ok(())
        } else {
            Err(CoreError::BadOption(format!(
                "toy-newton option damping must be non-negative, got {}",
                self.damping
            )))
        }
    }
}

fn registry() -> Registry {
    let mut r = Registry::standard();
    register_formulation!(r, ToyFormulation);
    r.add_driver::<ToyNewton>();
    r
}

/// Two contacts: the first pushes (`r_n = 0.5`), the second separates.
fn frictionless() -> LocalProblem {
    #[rustfmt::skip]
    let w = [
        2., 0., 0., 0.5, 0., 0.,
        0., 1., 0., 0., 0., 0.,
        0., 0., 1., 0., 0., 0.,
        0.5, 0., 0., 2., 0., 0.,
        0., 0., 0., 0., 1., 0.,
        0., 0., 0., 0., 0., 1.,
    ];
    LocalProblem::coulomb(
        Matrix::from_row_major("W", 6, 6, &w).unwrap(),
        vec![-1.0, 0.0, 0.0, 0.5, 0.0, 0.0],
        &[0.0, 0.0],
    )
}

#[test]
fn the_toy_plugins_are_listed_with_what_they_pair_with_and_why_not() {
    let reg = registry();
    let mut out = Vec::new();
    cli::list_registry(&reg, true, &mut out).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert!(strings(&v["formulations"]).contains(&"toy-fb".to_string()));
    assert!(strings(&v["optimizers"]).contains(&"toy-newton".to_string()));
    let combo = |f: &str| {
        v["combinations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["formulation"] == f)
            .map(|c| strings(&c["optimizers"]))
            .unwrap()
    };
    // The toy is only a Residual: every generic least-squares driver and the toy driver, and
    // nothing that needs more.
    for d in ["gauss-newton", "lm", "dogleg", "trust-region", "toy-newton"] {
        assert!(combo("toy-fb").contains(&d.to_string()), "{d}");
    }
    for d in ["todorov", "newton", "plm", "pgs", "newton-merit"] {
        assert!(!combo("toy-fb").contains(&d.to_string()), "{d}");
    }
    // The toy driver needs a Residual: every formulation but the Coulomb problem gives one.
    for f in [
        "implicit-ncp",
        "min-map",
        "mlcp-fb",
        "mncp",
        "natural-map",
        "toy-fb",
    ] {
        assert!(combo(f).contains(&"toy-newton".to_string()), "{f}");
    }
    assert!(!combo("coulomb").contains(&"toy-newton".to_string()));
    let why = |f: &str, d: &str| {
        v["incompatible"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["formulation"] == f && c["optimizer"] == d)
            .map(|c| c["reason"].as_str().unwrap().to_string())
    };
    let r = why("toy-fb", "todorov").unwrap();
    assert!(
        r.contains("NonSmoothResidual") && r.contains("provides Residual"),
        "{r}"
    );
    let r = why("coulomb", "toy-newton").unwrap();
    assert!(
        r.contains("needs a Residual") && r.contains("LocalProblem"),
        "{r}"
    );
    assert!(why("toy-fb", "lm").is_none());
    // The text listing says the same in words, options included.
    let mut out = Vec::new();
    cli::list_registry(&reg, false, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("toy-fb") && text.contains("tangent_weight = 1.0"),
        "{text}"
    );
    assert!(
        text.contains("`todorov` needs a NonSmoothResidual"),
        "{text}"
    );
}

#[test]
fn the_toy_plugins_solve_with_each_other_and_with_the_projects_own() {
    let reg = registry();
    let p = StepProblem::from(frictionless());
    let solve = |f: PluginChoice, d: PluginChoice| {
        let mut spec = SolverSpec::new("", "", 1e-10, 100);
        spec.formulation = f;
        spec.optimizer = d;
        reg.solve(&p, &spec, None)
    };
    let check = |name: &str, r: &[f64]| {
        assert!(
            (r[0] - 0.5).abs() < 1e-9 && r[3].abs() < 1e-9,
            "{name}: {r:?}"
        );
    };
    let toy = PluginChoice::named("toy-fb");
    let s = solve(toy.clone(), PluginChoice::named("toy-newton")).unwrap();
    assert_eq!(s.status, Status::Converged);
    check("toy+toy", &s.r);
    // The driver's own counter comes through.
    assert_eq!(s.counter("toy_steps"), s.iterations);
    assert!(s.iterations > 0);
    let s = solve(
        toy.clone().with("tangent_weight", 2.0),
        PluginChoice::named("lm"),
    )
    .unwrap();
    assert_eq!(s.status, Status::Converged);
    check("toy+lm", &s.r);
    for f in ["implicit-ncp", "natural-map", "min-map"] {
        let s = solve(
            PluginChoice::named(f),
            PluginChoice::named("toy-newton").with("damping", 1e-12),
        )
        .unwrap();
        assert_eq!(s.status, Status::Converged, "{f}: {:?}", s.solution.trace);
        check(f, &s.r);
    }
    // Refused where the traits do not meet, and options checked by the plugins' own types.
    let e = solve(toy.clone(), PluginChoice::named("todorov"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot be run") && e.contains("NonSmoothResidual"),
        "{e}"
    );
    let e = solve(
        PluginChoice::named("coulomb"),
        PluginChoice::named("toy-newton"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("needs a Residual"), "{e}");
    let e = solve(toy.clone().with("n_f", 4), PluginChoice::named("lm"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("toy-fb") && e.contains("n_f") && e.contains("tangent_weight"),
        "{e}"
    );
    let e = solve(toy, PluginChoice::named("toy-newton").with("damping", -1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("damping must be non-negative"), "{e}");
    // The standard registry does not know them.
    let e = Registry::standard()
        .solve(&p, &SolverSpec::new("toy-fb", "lm", 1e-8, 10), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown formulation `toy-fb`"), "{e}");
}

/// The toy plugins through everything a lab runs: a three-step experiment config whose driver
/// and shadow are toys, and a one-problem matrix whose pairs include the toys' own, both with
/// a lab holding the extended registry. The standard lab refuses the same config by name.
#[test]
fn the_toy_plugins_run_a_config_and_a_matrix_through_an_extended_lab() {
    let root = std::env::temp_dir().join(format!("contactlab-toy-lab-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let configs = root.join("experiments/configs/toy");
    std::fs::create_dir_all(&configs).unwrap();
    // A frictionless sphere sliding on a plane: the toy's model (r_t = 0) is the exact answer.
    let config = configs.join("sphere.toml");
    std::fs::write(
        &config,
        "paper = \"toy\"\nname = \"sphere\"\n[scene]\nkind = \"sphere_on_plane\"\nsteps = 3\n\
         [scene.params]\nmu = 0.0\n[driver]\nformulation = \"toy-fb\"\noptimizer = \"toy-newton\"\n\
         tol = 1e-10\n[[shadow]]\nformulation = { name = \"toy-fb\", tangent_weight = 2.0 }\n\
         optimizer = \"lm\"\ntol = 1e-10\n",
    )
    .unwrap();
    let lab = Lab::new(registry(), &root);
    let mut out = Vec::new();
    cli::run_config(&lab, &config, None, &[], &mut out).unwrap();
    let steps = read_run(&root.join("data/runs/toy/sphere.parquet")).unwrap();
    assert_eq!(steps.height(), 6, "3 steps x (driver + shadow)");
    let solvers = strings(&steps, "solver");
    assert_eq!(
        solvers.iter().filter(|s| *s == "toy-fb+toy-newton").count(),
        3
    );
    assert_eq!(solvers.iter().filter(|s| *s == "toy-fb+lm").count(), 3);
    assert!(strings(&steps, "status").iter().all(|s| s == "converged"));
    // The toy driver's own counter became a column.
    let toy_steps = steps.column("toy_steps").unwrap().u64().unwrap();
    assert!(toy_steps.get(0).unwrap() > 0);
    // The standard lab does not know the toys: the config check names the key and the name.
    let e = Lab::standard()
        .with_root(&root)
        .run(&config, None, &mut Vec::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("driver") && e.contains("unknown formulation `toy-fb`"),
        "{e}"
    );

    // A one-problem matrix: every compatible pair of the extended registry, toys included.
    let problem = root.join("data/toy/frictionless.json");
    std::fs::create_dir_all(problem.parent().unwrap()).unwrap();
    contactlab_core::io::write_json(&contactlab_core::Problem::Local(frictionless()), &problem)
        .unwrap();
    let matrix = configs.join("matrix.toml");
    std::fs::write(
        &matrix,
        "kind = \"matrix\"\nname = \"toy\"\ntol = 1e-8\ntime_limit = 0.5\nmax_iter = 100\n\
         [[sets]]\nname = \"toy\"\nfiles = [\"data/toy/frictionless.json\"]\n",
    )
    .unwrap();
    cli::run_config(&lab, &matrix, None, &[], &mut out).unwrap();
    let rows = read_run(&root.join("data/runs/matrix/toy.parquet")).unwrap();
    assert_eq!(rows.height(), lab.registry().pairs().len());
    let pair = |f: &str, d: &str| {
        let (fs, ds, solved) = (
            strings(&rows, "formulation"),
            strings(&rows, "optimizer"),
            rows.column("solved").unwrap().bool().unwrap().clone(),
        );
        (0..rows.height())
            .find(|&i| fs[i] == f && ds[i] == d)
            .map(|i| solved.get(i).unwrap())
    };
    assert_eq!(pair("toy-fb", "toy-newton"), Some(true));
    assert_eq!(pair("natural-map", "toy-newton"), Some(true));
    assert_eq!(pair("toy-fb", "lm"), Some(true));
    assert_eq!(pair("toy-fb", "todorov"), None, "not a compatible pair");
    std::fs::remove_dir_all(&root).unwrap();
}

/// A string column as owned strings.
fn strings(df: &DataFrame, name: &str) -> Vec<String> {
    contactlab_experiments::analysis::strs(df, name).unwrap()
}
