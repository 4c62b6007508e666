//! Formulations and optimizers by name: the table `contactlab solve` and the experiment
//! runner swap entries of. A formulation lists the optimizers whose needs it meets; the
//! pairing itself is type-checked in `solve_local`, so a name pair that is listed always runs.

use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
use contactlab_core::drivers::{
    solve_least_squares, Dogleg, GaussNewtonLs, LevenbergMarquardt, ProjectedLevenbergMarquardt,
    TrustRegionSteihaug,
};
use contactlab_core::frame::{from_rotated, rotate_tangents, slip_angles, to_rotated};
use contactlab_core::metrics::{local_metrics, LocalMetrics};
use contactlab_core::{CoreError, LocalProblem, Residual, Solution, SolveOptions, Status};
use contactlab_formulations::erleben::{
    solve_minmap_newton, ConvergenceMeasure, MinMap, MinMapNewtonParams,
};
use contactlab_formulations::mylapilli::{Directions, ImplicitMncp, MlcpFb};
use contactlab_formulations::todorov::{solve_todorov, TodorovParams, TodorovSolver};
use contactlab_formulations::{ImplicitNcp, NaturalMap};
use serde::{Deserialize, Serialize};

/// One named formulation and the optimizers that can run it.
#[derive(Debug, Clone, Serialize)]
pub struct FormulationInfo {
    /// The name used on the command line.
    pub name: &'static str,
    /// One line: what it is and where it comes from.
    pub description: &'static str,
    /// Optimizer names that run it.
    pub optimizers: &'static [&'static str],
    /// Whether it solves the exact Coulomb cone (`false`: a friction pyramid, whose
    /// solutions the shared natural-map ruler may judge `inaccurate` where contacts slide).
    pub exact_cone: bool,
}

/// One named optimizer.
#[derive(Debug, Clone, Serialize)]
pub struct OptimizerInfo {
    /// The name used on the command line.
    pub name: &'static str,
    /// One line: the method and its source.
    pub description: &'static str,
}

/// Every formulation available by name.
pub const FORMULATIONS: &[FormulationInfo] = &[
    FormulationInfo {
        name: "coulomb",
        description: "the local Coulomb problem itself, solved contact by contact (no residual)",
        optimizers: &["pgs"],
        exact_cone: true,
    },
    FormulationInfo {
        name: "implicit-ncp",
        description: "Todorov 2010 implicit NCP: r(x) = (A - I) f(x) - x + v0 over unconstrained x",
        optimizers: &["todorov", "gauss-newton", "lm", "dogleg", "trust-region"],
        exact_cone: true,
    },
    FormulationInfo {
        name: "min-map",
        description: "Erleben and Ortiz: min-map H(x) of the boxed LCP with a 4-sided friction pyramid (eq. 5)",
        optimizers: &["newton", "gauss-newton", "lm", "plm", "dogleg", "trust-region"],
        exact_cone: false,
    },
    FormulationInfo {
        name: "mlcp-fb",
        description: "Mylapilli and Jain: MLCP with n_f friction directions (eq. 22) as Fischer-Burmeister equations (eq. 24)",
        optimizers: &["lm", "plm", "gauss-newton", "dogleg", "trust-region"],
        exact_cone: false,
    },
    FormulationInfo {
        name: "mncp",
        description: "Mylapilli and Jain: implicit MNCP, Todorov's maps with bilateral rows (eqs. 31, 34)",
        optimizers: &["lm", "plm", "gauss-newton", "dogleg", "trust-region"],
        exact_cone: true,
    },
    FormulationInfo {
        name: "natural-map",
        description: "FCLib natural map r - P_K(r - rho (u + mu|u_t| e_n)) as a projected residual",
        optimizers: &["gauss-newton", "lm", "plm", "dogleg", "trust-region"],
        exact_cone: true,
    },
];

/// Every optimizer available by name.
pub const OPTIMIZERS: &[OptimizerInfo] = &[
    OptimizerInfo { name: "pgs", description: "projected Gauss-Seidel over contacts, exact cone projection (NSGS)" },
    OptimizerInfo { name: "newton", description: "Erleben and Ortiz non-smooth Newton: B-derivative, Schur reduction, Armijo, 4 PGS warm-start sweeps" },
    OptimizerInfo { name: "todorov", description: "Todorov 2010 LM-dogleg with Jacobian selection on edges and edge-aware cubic line search" },
    OptimizerInfo { name: "gauss-newton", description: "Gauss-Newton with Armijo backtracking" },
    OptimizerInfo { name: "lm", description: "regular Levenberg-Marquardt, Mylapilli and Jain's lambda schedule" },
    OptimizerInfo { name: "plm", description: "projected Levenberg-Marquardt (Kanzow and Petra), non-monotone line search with watchdog" },
    OptimizerInfo { name: "dogleg", description: "Powell's dogleg trust region on the Gauss-Newton model" },
    OptimizerInfo { name: "trust-region", description: "trust region with a Steihaug-CG subproblem" },
];

/// Looks a formulation up by name.
pub fn formulation(name: &str) -> Option<&'static FormulationInfo> {
    FORMULATIONS.iter().find(|f| f.name == name)
}

/// Errors of name lookup and solving.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No formulation of that name.
    #[error("unknown formulation `{0}`; available: {1}")]
    UnknownFormulation(String, String),
    /// The formulation cannot be run by that optimizer.
    #[error("formulation `{formulation}` cannot be run by optimizer `{optimizer}`; it runs with: {available}")]
    Incompatible {
        /// The formulation asked for.
        formulation: String,
        /// The optimizer asked for.
        optimizer: String,
        /// The optimizers it runs with.
        available: String,
    },
    /// An option value that is out of range or does not apply.
    #[error("{0}")]
    BadOption(String),
    /// The solver failed to run at all (as opposed to running and not converging).
    #[error(transparent)]
    Core(#[from] contactlab_core::CoreError),
}

/// How a solve's unknowns are initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    /// The formulation's own default: the sticking start for `implicit-ncp` and `mncp`
    /// (Todorov section III-F), zero impulses otherwise.
    #[default]
    Default,
    /// All unknowns zero.
    Zero,
    /// Todorov's all-sticking start (implicit-ncp and mncp only).
    Sticking,
    /// The caller's previous solution, mapped onto this step's contacts (falls back to the
    /// default start for contacts without one).
    Warm,
}

fn default_tol() -> f64 {
    1e-8
}
fn default_max_iter() -> u64 {
    100
}
fn default_rcond() -> f64 {
    1e-10
}

/// A fully specified solver: formulation, optimizer, tolerances and the options the papers
/// vary. This is what experiment configs list and what `contactlab solve` builds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// A label for tables and plots (defaults to `formulation+optimizer`).
    #[serde(default)]
    pub label: Option<String>,
    /// Formulation name (see [`FORMULATIONS`]).
    pub formulation: String,
    /// Optimizer name (see [`OPTIMIZERS`]).
    pub optimizer: String,
    /// The driver's tolerance and the bound on the natural-map residual for `converged`.
    #[serde(default = "default_tol")]
    pub tol: f64,
    /// Iteration budget (per attempt when restarting).
    #[serde(default = "default_max_iter")]
    pub max_iter: u64,
    /// Initial point.
    #[serde(default)]
    pub start: Start,
    /// Solve the rescaled `D r(x) = 0`, `D` from the row sums of `A` (Todorov section V-A;
    /// implicit-ncp only).
    #[serde(default)]
    pub row_sum_scaling: bool,
    /// Restarts from a perturbed point after a local minimum (Todorov section V-A).
    #[serde(default)]
    pub restarts: u32,
    /// Relative cutoff of the pseudoinverse in the sticking start.
    #[serde(default = "default_rcond")]
    pub rcond: f64,
    /// Todorov's edge machinery on (`false`: plain LM-dogleg on the same residual).
    #[serde(default = "default_true")]
    pub edge_aware: bool,
    /// Friction directions per contact of `mlcp-fb` (Mylapilli and Jain: 4).
    #[serde(default = "default_n_f")]
    pub n_f: usize,
    /// Angle (degrees) of the first friction direction from `t1` (`mlcp-fb`; 45 with `n_f = 4`
    /// is the paper's example 2 when the motion is along a frame axis).
    #[serde(default)]
    pub theta0_deg: f64,
    /// Put the first friction direction against each contact's free tangential velocity
    /// `-q_t` instead of at `theta0_deg` (`mlcp-fb`; the paper's pendulum).
    #[serde(default)]
    pub align_with_slip: bool,
}

fn default_n_f() -> usize {
    4
}

fn default_true() -> bool {
    true
}

impl SolverSpec {
    /// A spec with default options.
    pub fn new(formulation: &str, optimizer: &str, tol: f64, max_iter: u64) -> SolverSpec {
        SolverSpec {
            label: None,
            formulation: formulation.to_string(),
            optimizer: optimizer.to_string(),
            tol,
            max_iter,
            start: Start::Default,
            row_sum_scaling: false,
            restarts: 0,
            rcond: default_rcond(),
            edge_aware: true,
            n_f: default_n_f(),
            theta0_deg: 0.0,
            align_with_slip: false,
        }
    }

    /// The label used in tables: `label`, or `formulation+optimizer`.
    pub fn name(&self) -> String {
        self.label
            .clone()
            .unwrap_or_else(|| format!("{}+{}", self.formulation, self.optimizer))
    }

    /// Checks names, the pairing and the numbers.
    pub fn validate(&self) -> Result<(), RegistryError> {
        let info = formulation(&self.formulation).ok_or_else(|| {
            RegistryError::UnknownFormulation(
                self.formulation.clone(),
                FORMULATIONS
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })?;
        if !info.optimizers.contains(&self.optimizer.as_str()) {
            return Err(RegistryError::Incompatible {
                formulation: self.formulation.clone(),
                optimizer: self.optimizer.clone(),
                available: info.optimizers.join(", "),
            });
        }
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(RegistryError::BadOption(format!(
                "tol must be positive, got {}",
                self.tol
            )));
        }
        if !(self.rcond >= 0.0 && self.rcond < 1.0) {
            return Err(RegistryError::BadOption(format!(
                "rcond must be in [0, 1), got {}",
                self.rcond
            )));
        }
        if self.start == Start::Sticking
            && !matches!(self.formulation.as_str(), "implicit-ncp" | "mncp")
        {
            return Err(RegistryError::BadOption(
                "start = \"sticking\" exists only for implicit-ncp and mncp".into(),
            ));
        }
        if (self.row_sum_scaling || self.restarts > 0 || !self.edge_aware)
            && self.formulation != "implicit-ncp"
        {
            return Err(RegistryError::BadOption(
                "row_sum_scaling, restarts and edge_aware apply only to implicit-ncp".into(),
            ));
        }
        if self.n_f != default_n_f() && self.formulation != "mlcp-fb" {
            return Err(RegistryError::BadOption(
                "n_f applies only to mlcp-fb".into(),
            ));
        }
        let turned = self.theta0_deg != 0.0 || self.align_with_slip;
        if turned && !matches!(self.formulation.as_str(), "mlcp-fb" | "min-map") {
            return Err(RegistryError::BadOption(
                "theta0_deg and align_with_slip apply only to the pyramid formulations mlcp-fb and min-map".into(),
            ));
        }
        if self.n_f < 3 {
            return Err(RegistryError::BadOption(format!(
                "n_f must be at least 3, got {}",
                self.n_f
            )));
        }
        if !self.theta0_deg.is_finite() {
            return Err(RegistryError::BadOption(format!(
                "theta0_deg must be finite, got {}",
                self.theta0_deg
            )));
        }
        Ok(())
    }
}

/// One solve of a local problem, judged by the shared metrics.
#[derive(Debug, Clone, Serialize)]
pub struct LocalSolve {
    /// `converged` only when the natural-map residual is at most the tolerance; otherwise
    /// why the solver stopped (`inaccurate` when its own test passed but the residual did not).
    pub status: Status,
    /// The status the driver itself reported (of the last attempt when restarting).
    pub solver_status: Status,
    /// Iterations the driver performed, over all attempts.
    pub iterations: u64,
    /// Iterations whose Newton point was accepted (Todorov's driver; 0 for others).
    pub newton_accepted: u64,
    /// Restarts used after local minima.
    pub restarts_used: u32,
    /// Wall-clock seconds of the solve, all attempts.
    pub seconds: f64,
    /// The shared metrics of the returned impulses.
    pub metrics: LocalMetrics,
    /// Three numbers per contact to warm-start the next solve from (the implicit maps'
    /// `x` for `implicit-ncp` and `mncp`, the impulses `r` otherwise).
    pub x: Vec<f64>,
    /// Impulses `r`, normal first per contact.
    pub r: Vec<f64>,
    /// Contact velocities `u = W r + q`, normal first per contact.
    pub u: Vec<f64>,
    /// The driver's result of the last attempt, trace included.
    pub solution: Solution,
}

/// Solves `problem` with the named formulation and optimizer and default options.
/// `opts.tol` bounds the natural-map residual of the answer, whatever the driver's own rule.
pub fn solve_local(
    problem: &LocalProblem,
    formulation_name: &str,
    optimizer: &str,
    opts: &SolveOptions,
) -> Result<LocalSolve, RegistryError> {
    let spec = SolverSpec::new(formulation_name, optimizer, opts.tol, opts.max_iter);
    solve_spec(problem, &spec, None)
}

/// Solves `problem` as `spec` says, from `warm` when `spec.start` is `Warm` (a vector of the
/// formulation's unknowns, `NaN` where a contact has no previous value).
pub fn solve_spec(
    problem: &LocalProblem,
    spec: &SolverSpec,
    warm: Option<&[f64]>,
) -> Result<LocalSolve, RegistryError> {
    spec.validate()?;
    let n = problem.q.len();
    let opts = SolveOptions {
        tol: spec.tol,
        max_iter: spec.max_iter,
        ..SolveOptions::default()
    };
    let warm_or = |default: Vec<f64>| -> Vec<f64> {
        match (spec.start, warm) {
            (Start::Warm, Some(w)) if w.len() == n => w
                .iter()
                .zip(default)
                .map(|(wi, di)| if wi.is_finite() { *wi } else { di })
                .collect(),
            (Start::Zero, _) => vec![0.0; n],
            _ => default,
        }
    };
    let (solution, r, restarts_used, iterations, newton, seconds) = match spec.formulation.as_str()
    {
        "coulomb" => {
            let s = solve_pgs(
                problem,
                ProjectedGaussSeidel::default(),
                Some(warm_or(vec![0.0; n])),
                &opts,
            )?;
            let (it, sec) = (s.iterations, s.seconds);
            (s.clone(), s.x, 0, it, 0, sec)
        }
        "natural-map" => {
            let f = NaturalMap::new(problem);
            let x0 = warm_or(vec![0.0; n]);
            let s = if spec.optimizer == "plm" {
                solve_least_squares(f, ProjectedLevenbergMarquardt::default(), x0, &opts)?
            } else {
                run_least_squares(f, &spec.optimizer, x0, &opts)?
            };
            let (it, sec) = (s.iterations, s.seconds);
            (s.clone(), s.x, 0, it, 0, sec)
        }
        "implicit-ncp" => solve_implicit_ncp(problem, spec, &opts, &warm_or)?,
        "min-map" => {
            // The pyramid's faces turned (theta0_deg, or against the free slip): solve the
            // problem in turned tangent axes and map the impulses back.
            let angles = pyramid_angles(problem, spec)?;
            let turned = match &angles {
                Some(a) => Some(rotate_tangents(problem, a).map_err(CoreError::from)?),
                None => None,
            };
            let f = MinMap::new(turned.as_ref().unwrap_or(problem))?;
            let x0 = warm_or(vec![0.0; n]);
            let x0 = match &angles {
                Some(a) => to_rotated(&x0, a),
                None => x0,
            };
            let s = match spec.optimizer.as_str() {
                // `tol` bounds |H| here as for every least-squares driver; the paper's
                // `theta <= 1e-6` is `tol = sqrt(2e-6)`.
                "newton" => {
                    let params = MinMapNewtonParams {
                        measure: ConvergenceMeasure::NormH,
                        ..MinMapNewtonParams::default()
                    };
                    solve_minmap_newton(&f, &params, Some(x0), &opts)?
                }
                "plm" => solve_least_squares(f, ProjectedLevenbergMarquardt::default(), x0, &opts)?,
                other => run_least_squares(f, other, x0, &opts)?,
            };
            let r = match &angles {
                Some(a) => from_rotated(&s.x, a),
                None => s.x.clone(),
            };
            let (it, sec) = (s.iterations, s.seconds);
            (s, r, 0, it, 0, sec)
        }
        "mlcp-fb" => {
            // The same face angles as min-map's turned box: one rule for both pyramids.
            let theta0 =
                pyramid_angles(problem, spec)?.unwrap_or_else(|| vec![0.0; problem.num_contacts()]);
            let dirs = Directions::per_contact(spec.n_f, theta0)
                .map_err(|e| RegistryError::BadOption(e.to_string()))?;
            let f =
                MlcpFb::new(problem, dirs).map_err(|e| RegistryError::BadOption(e.to_string()))?;
            let z0 = match (spec.start, warm) {
                (Start::Warm, Some(_)) => f
                    .unknowns_from_impulse(&[], &warm_or(vec![0.0; n]))
                    .map_err(|e| RegistryError::BadOption(e.to_string()))?,
                _ => vec![0.0; f.num_unknowns()],
            };
            let s = if spec.optimizer == "plm" {
                solve_least_squares(f.clone(), ProjectedLevenbergMarquardt::default(), z0, &opts)?
            } else {
                run_least_squares(f.clone(), &spec.optimizer, z0, &opts)?
            };
            let r = f.impulse(&s.x);
            let (it, sec) = (s.iterations, s.seconds);
            (s, r, 0, it, 0, sec)
        }
        "mncp" => {
            let f =
                ImplicitMncp::new(problem).map_err(|e| RegistryError::BadOption(e.to_string()))?;
            let start = std::time::Instant::now();
            let x0 = warm_or(ImplicitNcp::new(problem).sticking_start(spec.rcond));
            let start_seconds = start.elapsed().as_secs_f64();
            let s = if spec.optimizer == "plm" {
                solve_least_squares(f.clone(), ProjectedLevenbergMarquardt::default(), x0, &opts)?
            } else {
                run_least_squares(f.clone(), &spec.optimizer, x0, &opts)?
            };
            let r = f.impulse(&s.x);
            let (it, sec) = (s.iterations, s.seconds + start_seconds);
            (s, r, 0, it, 0, sec)
        }
        other => unreachable!("validate() accepted unknown formulation {other}"),
    };
    let mut out = judge(problem, solution, &r, spec.tol);
    if matches!(spec.formulation.as_str(), "mlcp-fb" | "min-map") {
        // Warm-start from the impulses in the problem's own frames: the MLCP's unknowns are
        // not three per contact, and a turned min-map's are in turned axes.
        out.x = r.clone();
    }
    out.r = r;
    out.u = problem.velocity(&out.r);
    out.iterations = iterations;
    out.newton_accepted = newton;
    out.restarts_used = restarts_used;
    out.seconds = seconds;
    Ok(out)
}

/// The angles (radians, per contact) by which the pyramid formulations (`min-map`'s box,
/// `mlcp-fb`'s first direction) turn from `t1`: against each contact's free slip `-q_t` with
/// `align_with_slip`, else `theta0_deg` everywhere; `None` for no turn.
fn pyramid_angles(
    problem: &LocalProblem,
    spec: &SolverSpec,
) -> Result<Option<Vec<f64>>, RegistryError> {
    if spec.align_with_slip {
        let angles =
            slip_angles(&problem.q).map_err(|e| RegistryError::BadOption(e.to_string()))?;
        Ok(Some(angles))
    } else if spec.theta0_deg != 0.0 {
        Ok(Some(vec![
            spec.theta0_deg.to_radians();
            problem.num_contacts()
        ]))
    } else {
        Ok(None)
    }
}

/// Runs a generic least-squares driver by name on any residual.
fn run_least_squares<R: contactlab_core::Residual>(
    f: R,
    optimizer: &str,
    x0: Vec<f64>,
    opts: &SolveOptions,
) -> Result<Solution, contactlab_core::CoreError> {
    match optimizer {
        "gauss-newton" => solve_least_squares(f, GaussNewtonLs::default(), x0, opts),
        "lm" => solve_least_squares(f, LevenbergMarquardt::default(), x0, opts),
        "dogleg" => solve_least_squares(f, Dogleg::default(), x0, opts),
        "trust-region" => solve_least_squares(f, TrustRegionSteihaug::default(), x0, opts),
        other => Err(contactlab_core::CoreError::Unsupported(format!(
            "`{other}` is not a generic least-squares driver"
        ))),
    }
}

type AttemptResult = (Solution, Vec<f64>, u32, u64, u64, f64);

/// Todorov's formulation with its own driver or a generic one, with the section V-A
/// recoveries: rescaling and perturbed restarts after a local minimum.
fn solve_implicit_ncp(
    problem: &LocalProblem,
    spec: &SolverSpec,
    opts: &SolveOptions,
    warm_or: &dyn Fn(Vec<f64>) -> Vec<f64>,
) -> Result<AttemptResult, RegistryError> {
    let mut f = ImplicitNcp::new(problem);
    if spec.row_sum_scaling {
        f = f.with_row_sum_scaling();
    }
    // The sticking start (section III-F) is part of the method: its time counts.
    let start = std::time::Instant::now();
    let mut x0 = warm_or(f.sticking_start(spec.rcond));
    let (mut iterations, mut newton, mut seconds) = (0, 0, start.elapsed().as_secs_f64());
    let mut attempt = 0;
    loop {
        let s = if spec.optimizer == "todorov" {
            let params = TodorovParams {
                edge_aware: spec.edge_aware,
                ..TodorovParams::default()
            };
            solve_todorov(&f, TodorovSolver::new(params), x0, opts)?
        } else {
            run_least_squares(f.clone(), &spec.optimizer, x0, opts)?
        };
        iterations += s.iterations;
        seconds += s.seconds;
        newton += s
            .trace
            .rows
            .iter()
            .filter(|r| r.extra.get("newton_accepted") == Some(&1.0))
            .count() as u64;
        let stuck = matches!(
            s.status,
            Status::LocalMinimum | Status::Stagnated | Status::LineSearchFailed
        );
        if !stuck || attempt >= spec.restarts {
            let r = f.impulses(&s.x);
            return Ok((s, r, attempt, iterations, newton, seconds));
        }
        attempt += 1;
        x0 = perturbed(&s.x, attempt);
    }
}

/// A deterministic perturbation of `x` for the `k`-th restart: each entry moves by up to 10%
/// of `max(|x|_inf, 1e-3)`, with signs and sizes from a fixed hash of `(k, i)`.
fn perturbed(x: &[f64], k: u32) -> Vec<f64> {
    let scale = 0.1 * x.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    x.iter()
        .enumerate()
        .map(|(i, v)| {
            // SplitMix64 of (k, i): reproducible without threading an RNG through.
            let mut z = (u64::from(k) << 32 ^ i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            v + scale * u
        })
        .collect()
}

/// Applies the shared ruler to impulses `r`: the reported status is `converged` only when
/// their natural-map residual is at most `tol`.
pub fn judge(problem: &LocalProblem, solution: Solution, r: &[f64], tol: f64) -> LocalSolve {
    let metrics = local_metrics(problem, r);
    let solver_status = solution.status.clone();
    let status = if metrics.natural_map <= tol {
        Status::Converged
    } else if solver_status == Status::Converged {
        Status::Inaccurate
    } else {
        solver_status.clone()
    };
    LocalSolve {
        status,
        solver_status,
        iterations: solution.iterations,
        newton_accepted: 0,
        restarts_used: 0,
        seconds: solution.seconds,
        metrics,
        x: solution.x.clone(),
        u: problem.velocity(r),
        r: r.to_vec(),
        solution,
    }
}

/// One paper of the mission and whether `contactlab reproduce` can run it yet.
#[derive(Debug, Clone, Serialize)]
pub struct PaperInfo {
    /// The key used by `just reproduce <paper>`.
    pub id: &'static str,
    /// Authors, year and title.
    pub title: &'static str,
    /// Whether its config -> data -> report pipeline exists.
    pub reproducible: bool,
}

/// The five papers, in the order of the mission.
pub const PAPERS: &[PaperInfo] = &[
    PaperInfo {
        id: "todorov2010",
        title: "Todorov 2010, implicit nonlinear complementarity",
        reproducible: true,
    },
    PaperInfo {
        id: "erleben2008",
        title: "Erleben and Ortiz, non-smooth Newton on the min-map",
        reproducible: true,
    },
    PaperInfo {
        id: "mylapilli2014",
        title: "Mylapilli and Jain 2014, complementarity with Levenberg-Marquardt",
        reproducible: true,
    },
    PaperInfo {
        id: "castro2022",
        title: "Castro, Permenter and Han, SAP convex compliant contact",
        reproducible: false,
    },
    PaperInfo {
        id: "hwangbo2018",
        title: "Hwangbo, Lee and Hutter 2018, per-contact bisection",
        reproducible: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::Matrix;

    /// One contact, `W = I`, sliding: `q = (-1, q_t1, q_t2)`, `mu = 0.5`.
    fn sliding(q_t1: f64, q_t2: f64) -> LocalProblem {
        let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        LocalProblem {
            w: Matrix::from_row_major("W", 3, 3, &eye).unwrap(),
            q: vec![-1.0, q_t1, q_t2],
            mu: vec![0.5],
        }
    }

    fn min_map_impulse(problem: &LocalProblem, theta0_deg: f64, align: bool) -> Vec<f64> {
        let mut spec = SolverSpec::new("min-map", "newton", 1e-12, 50);
        spec.theta0_deg = theta0_deg;
        spec.align_with_slip = align;
        let s = solve_spec(problem, &spec, None).unwrap();
        assert_eq!(s.solver_status, Status::Converged, "{spec:?}");
        s.r
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn a_turned_min_map_pyramid_changes_the_friction_as_the_box_geometry_says() {
        let (h, s2) = (0.5, std::f64::consts::SQRT_2);
        // Slip along t1 with the box's faces on the axes: friction mu r_n straight back.
        let p = sliding(2.0, 0.0);
        assert!(close(&min_map_impulse(&p, 0.0, false), &[1.0, -h, 0.0]));
        // Faces turned 45 degrees: both turned components slide, and the box's corner gives
        // sqrt(2) mu r_n, still against the slip.
        let r = min_map_impulse(&p, 45.0, false);
        assert!(close(&r, &[1.0, -h * s2, 0.0]), "{r:?}");
        // Diagonal slip: the axis-aligned box's corner overshoots the cone by sqrt(2); faces
        // turned against the slip give the Coulomb answer mu r_n along -slip.
        let d = sliding(2.0, 2.0);
        assert!(close(&min_map_impulse(&d, 0.0, false), &[1.0, -h, -h]));
        let r = min_map_impulse(&d, 0.0, true);
        assert!(close(&r, &[1.0, -h / s2, -h / s2]), "{r:?}");
    }

    #[test]
    fn pyramid_options_are_refused_where_they_mean_nothing() {
        let mut spec = SolverSpec::new("implicit-ncp", "todorov", 1e-8, 10);
        spec.theta0_deg = 30.0;
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains("theta0_deg"), "{e}");
        let mut spec = SolverSpec::new("min-map", "newton", 1e-8, 10);
        spec.n_f = 6;
        let e = spec.validate().unwrap_err().to_string();
        assert!(e.contains("n_f"), "{e}");
        spec.n_f = 4;
        spec.align_with_slip = true;
        assert!(spec.validate().is_ok());
    }
}
