//! The two-stage theta-method of Castro, Permenter and Han (section II-C, eqs. 6-12, and
//! section II-D, eqs. 13-18; Algorithm 1), for systems small enough for dense matrices.
//!
//! # The scheme
//!
//! With `q0`, `v0` the state at the start of a step of size `dt` and two parameters `theta`,
//! `theta_vq` in `[0, 1]`, the mid-step quantities are (eq. 6)
//!
//! `q_theta = theta q + (1 - theta) q0`, `v_theta = theta v + (1 - theta) v0`,
//! `v_theta_vq = theta_vq v + (1 - theta_vq) v0`,
//!
//! and the step is `M(q_theta) (v - v0) = dt k(q_theta, v_theta) + J(q0)' gamma` (eq. 7) with
//! `q = q0 + dt N(q_theta) v_theta_vq` (eqs. 11-12). [`Scheme`] names the paper's four choices:
//! explicit Euler `(0, 0)`, symplectic Euler `(0, 1)`, implicit Euler `(1, 1)` and the midpoint
//! rule `(1/2, 1/2)` (second order). Combining eq. 6 with eq. 12, the mid-step configuration
//! solves `q_theta = q0 + theta dt N(q_theta) v_theta_vq` (Appendix A): [`mid_configuration`]
//! finds it by fixed-point iteration (one pass when `N` is constant).
//!
//! # Stage 1: free motion (eqs. 13-14)
//!
//! [`free_motion`] solves `m(v*) = 0`, `m(v) = M(q_theta(v)) (v - v0) - dt k(q_theta(v),
//! v_theta(v))`, by Newton's method from `v = v0`, with the matrix
//! `M(q_theta) + dt^2 theta theta_vq K_N + dt theta D_N` where `K_N = -(dk/dq) N` and
//! `D_N = -dk/dv` are the Jacobians of **all** of `k` ([`ThetaSystem::newton_jacobians`];
//! by default those of `k1`). Only the derivatives of `M` and `N` are left out (the `E` term of
//! Appendix A, `O(dt^2)`), so Newton is exact, and converges in one iteration, for constant
//! `M`, `N` and linear `k` (the spring-cylinder), and quadratically close to exact otherwise.
//! With `theta = 0` the scheme is explicit in `v*` and the first iteration is the solution.
//!
//! **Tolerance.** Newton stops when `|m(v)|_inf <= tol * s`, with the momentum scale
//! `s = max(|M (v - v0)|_inf, |M v|_inf, dt |k|_inf)` (the sizes of the terms whose round-off
//! `m` carries) and `tol = 1e-12` by default ([`ThetaOptions`]); it gives up with
//! [`ThetaError::Newton`] after `max_iterations` (20). The fixed point for `q_theta` stops when
//! an update moves it by at most `tol * max(|q0|_inf, |q_theta|_inf, dt |N v_theta_vq|_inf)`.
//!
//! # Stage 2: the contact problem (eqs. 15-18)
//!
//! `k = k1 + k2` with `k1` the forces whose Jacobians are negative definite (springs, dampers):
//! their stiffness `K = -(dk1/dq) N` and damping `D = -dk1/dv` (eqs. 16-17;
//! [`ThetaSystem::stiffness_damping`]) give the SPD approximation of `dm/dv` at `v*`,
//!
//! `A = M(q_theta(v*)) + dt^2 theta theta_vq K + dt theta D` (eq. 15),
//!
//! evaluated at `q_theta(v*)`, `v_theta(v*)`. The paper's eq. 16 writes
//! `K = -(dk1/dq) (d qdot_theta_vq / dv)`; since `d qdot_theta_vq / dv = theta_vq N`, and
//! Appendix A's `dF1/dv = -dt theta theta_vq K - theta D` shows the factor `theta_vq` exactly
//! once, `K` here is `-(dk1/dq) N` and `theta_vq` enters through eq. 15 only. `A` must be
//! symmetric (to `1e-12` relative; the two triangles are then averaged) and positive definite
//! ([`ThetaError::NotSpd`] otherwise).
//!
//! The linearised balance `A (v - v*) = J' gamma` (eq. 18) is handed out as a
//! [`GeneralizedProblem`] ([`FreeMotion::contact_problem`]) with the step `dt`, the previous
//! velocities `v0` (SAP's warm start), offset `b = 0` and each contact's model
//! ([`ContactModel`]: `mu`, `phi0`, stiffness, dissipation). **Where `J` and `phi0` are
//! evaluated**: at `q0`, as the paper does (eq. 7 writes `J(q0)`, the contact set is
//! `C(q0)`, and the compliant law's `phi(q(v))` is linearised as `phi0 + dt v_n` with `phi0 =
//! phi(q0)`, section V-A); the caller supplies both, computed from the start-of-step state.
//! Once a solver has found `gamma`, [`contact_velocities`] gives `v = v* + A^-1 J' gamma` and
//! [`positions`] the new configuration (eqs. 11-12, Algorithm 1 line 3).
//!
//! # Why dense
//!
//! The scenes that use this module have a handful of velocities (the spring-cylinder has
//! three), so `M`, `K`, `D` and `A` are nalgebra matrices; the problem handed to solvers is
//! sparse ([`to_sparse`] drops exact zeros, so a diagonal `A` stays diagonal).

use contactlab_core::{ContactModel, CoreError, GeneralizedProblem, StepContext};
use faer::sparse::{SparseColMat, Triplet};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

/// The named theta-method schemes of section II-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// `theta = theta_vq = 0` (first order, unstable for undamped oscillators).
    ExplicitEuler,
    /// `theta = 0`, `theta_vq = 1` (first order, symplectic: bounded energy error).
    SymplecticEuler,
    /// `theta = theta_vq = 1` (first order, dissipative).
    ImplicitEuler,
    /// `theta = theta_vq = 1/2` (second order, conserves a spring-mass system's energy).
    Midpoint,
}

impl Scheme {
    /// All four, in the paper's order.
    pub const ALL: [Scheme; 4] = [
        Scheme::ExplicitEuler,
        Scheme::SymplecticEuler,
        Scheme::ImplicitEuler,
        Scheme::Midpoint,
    ];

    /// The scheme's parameters.
    pub fn theta(self) -> Theta {
        let (theta, theta_vq) = match self {
            Scheme::ExplicitEuler => (0.0, 0.0),
            Scheme::SymplecticEuler => (0.0, 1.0),
            Scheme::ImplicitEuler => (1.0, 1.0),
            Scheme::Midpoint => (0.5, 0.5),
        };
        Theta { theta, theta_vq }
    }

    /// The config name (`"symplectic_euler"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::ExplicitEuler => "explicit_euler",
            Scheme::SymplecticEuler => "symplectic_euler",
            Scheme::ImplicitEuler => "implicit_euler",
            Scheme::Midpoint => "midpoint",
        }
    }

    /// The order of accuracy of the theta-method (Hairer et al., section II.7): 2 for the
    /// midpoint rule, 1 for the others.
    pub fn order(self) -> u32 {
        match self {
            Scheme::Midpoint => 2,
            _ => 1,
        }
    }
}

impl std::str::FromStr for Scheme {
    type Err = ThetaError;

    /// A scheme by its config name; the error lists the names.
    fn from_str(s: &str) -> Result<Scheme, ThetaError> {
        Scheme::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| ThetaError::UnknownScheme(s.to_string()))
    }
}

/// The two parameters of eq. 6.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theta {
    /// `theta`: where forces and the mass matrix are evaluated.
    pub theta: f64,
    /// `theta_vq`: which velocity moves the configuration (eq. 11).
    pub theta_vq: f64,
}

impl Theta {
    /// Parameters in `[0, 1]`; the error names the one out of range.
    pub fn new(theta: f64, theta_vq: f64) -> Result<Theta, ThetaError> {
        let t = Theta { theta, theta_vq };
        t.validate()?;
        Ok(t)
    }

    /// Both parameters in `[0, 1]`.
    pub fn validate(&self) -> Result<(), ThetaError> {
        for (name, value) in [("theta", self.theta), ("theta_vq", self.theta_vq)] {
            if !(0.0..=1.0).contains(&value) {
                return Err(ThetaError::Parameter { name, value });
            }
        }
        Ok(())
    }
}

impl From<Scheme> for Theta {
    fn from(s: Scheme) -> Theta {
        s.theta()
    }
}

/// Stopping rules of the two inner iterations (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThetaOptions {
    /// Relative tolerance of stage 1's momentum residual and of the `q_theta` fixed point.
    pub tol: f64,
    /// Iteration cap of each (Newton; fixed point).
    pub max_iterations: usize,
}

impl Default for ThetaOptions {
    fn default() -> Self {
        ThetaOptions {
            tol: 1e-12,
            max_iterations: 20,
        }
    }
}

/// What can go wrong in a theta-method step.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ThetaError {
    /// `theta` or `theta_vq` outside `[0, 1]`.
    #[error("theta-method parameter `{name}` must be in [0, 1], got {value}")]
    Parameter {
        /// `theta` or `theta_vq`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A scheme name that is not one of [`Scheme::ALL`].
    #[error("unknown theta-method scheme `{0}`; expected one of explicit_euler, symplectic_euler, implicit_euler, midpoint")]
    UnknownScheme(String),
    /// A non-positive or non-finite time step.
    #[error("time step `dt` must be positive and finite, got {0}")]
    TimeStep(f64),
    /// A vector or matrix of the wrong size.
    #[error("`{field}`: expected {expected}, found {found}")]
    Shape {
        /// What is wrong (`q0`, `v0`, `M`, `N`, `J`, ...).
        field: &'static str,
        /// The size the system implies.
        expected: String,
        /// The size given.
        found: String,
    },
    /// Stage 1's Newton iteration did not reach its tolerance.
    #[error("stage 1 (free motion, eq. 13): Newton stopped after {iterations} iterations with momentum residual {residual:.3e} above {tolerance:.3e}; a smaller `dt` helps")]
    Newton {
        /// Newton iterations taken.
        iterations: usize,
        /// `|m(v)|_inf` at the last iterate.
        residual: f64,
        /// `tol * s` at the last iterate.
        tolerance: f64,
    },
    /// The fixed point for `q_theta` did not converge.
    #[error("position update (eqs. 11-12): the fixed point for q_theta moved {step:.3e} after {iterations} iterations; a smaller `dt` helps")]
    Positions {
        /// Iterations taken.
        iterations: usize,
        /// The last update's size.
        step: f64,
    },
    /// A matrix that must be SPD (eq. 15's `A`) or invertible (Newton's) is not.
    #[error("{0}")]
    NotSpd(String),
    /// A NaN or infinity in the named quantity.
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
    /// The contact problem failed validation.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// A mechanical system in generalized coordinates `q` (`nq`) and velocities `v` (`nv`) with
/// `qdot = N(q) v` (eq. 11), mass matrix `M(q)` and non-contact forces `k(q, v)` (eq. 7).
pub trait ThetaSystem {
    /// `nq`.
    fn num_positions(&self) -> usize;
    /// `nv`.
    fn num_velocities(&self) -> usize;
    /// `M(q)` (`nv x nv`, symmetric positive definite).
    fn mass_matrix(&self, q: &DVector<f64>) -> DMatrix<f64>;
    /// `N(q)` (`nq x nv`).
    fn velocity_map(&self, q: &DVector<f64>) -> DMatrix<f64>;
    /// All non-contact generalized forces `k(q, v) = k1 + k2` (gravity, springs, dampers,
    /// gyroscopic terms).
    fn forces(&self, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64>;
    /// The stiffness `K = -(dk1/dq) N` and damping `D = -dk1/dv` of the forces `k1` with
    /// negative (semi)definite Jacobians (eqs. 16-17), both `nv x nv`, symmetric positive
    /// semidefinite; they enter `A` (eq. 15).
    fn stiffness_damping(&self, q: &DVector<f64>, v: &DVector<f64>)
        -> (DMatrix<f64>, DMatrix<f64>);
    /// `-(dk/dq) N` and `-dk/dv` of **all** of `k`, for stage 1's Newton matrix (need not be
    /// symmetric). Defaults to [`ThetaSystem::stiffness_damping`], exact when `k2` does not
    /// depend on the state (gravity).
    fn newton_jacobians(&self, q: &DVector<f64>, v: &DVector<f64>) -> (DMatrix<f64>, DMatrix<f64>) {
        self.stiffness_damping(q, v)
    }
    /// The kinematic tree of each velocity (`A` is block diagonal by tree), when known;
    /// `None` lets [`GeneralizedProblem::new`] infer it from `A`'s sparsity.
    fn trees(&self) -> Option<Vec<usize>> {
        None
    }
}

/// Stage 1's result: the free-motion velocities `v*` and the matrix `A` of eq. 15.
#[derive(Debug, Clone, PartialEq)]
pub struct FreeMotion {
    /// The scheme's parameters.
    pub theta: Theta,
    /// The time step.
    pub dt: f64,
    /// Start-of-step configuration `q0`.
    pub q0: DVector<f64>,
    /// Start-of-step velocities `v0`.
    pub v0: DVector<f64>,
    /// Free-motion velocities `v*` (`m(v*) = 0`, eq. 13).
    pub v_star: DVector<f64>,
    /// `A = M + dt^2 theta theta_vq K + dt theta D` at `v*` (eq. 15), symmetric positive
    /// definite.
    pub a: DMatrix<f64>,
    /// Newton iterations stage 1 took (one for an explicit scheme or a linear system).
    pub newton_iterations: usize,
    /// `|m(v*)|_inf / s` at the end (see the module doc).
    pub relative_residual: f64,
    trees: Option<Vec<usize>>,
}

fn check_len(field: &'static str, v: &DVector<f64>, n: usize) -> Result<(), ThetaError> {
    if v.len() != n {
        return Err(ThetaError::Shape {
            field,
            expected: format!("{n} entries"),
            found: format!("{} entries", v.len()),
        });
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(ThetaError::NonFinite(field));
    }
    Ok(())
}

fn check_shape(
    field: &'static str,
    m: &DMatrix<f64>,
    rows: usize,
    cols: usize,
) -> Result<(), ThetaError> {
    if m.nrows() != rows || m.ncols() != cols {
        return Err(ThetaError::Shape {
            field,
            expected: format!("{rows} x {cols}"),
            found: format!("{} x {}", m.nrows(), m.ncols()),
        });
    }
    if m.iter().any(|x| !x.is_finite()) {
        return Err(ThetaError::NonFinite(field));
    }
    Ok(())
}

fn check_dt(dt: f64) -> Result<(), ThetaError> {
    if dt > 0.0 && dt.is_finite() {
        Ok(())
    } else {
        Err(ThetaError::TimeStep(dt))
    }
}

/// `theta_vq v + (1 - theta_vq) v0` (eq. 6).
fn blend(w: f64, v: &DVector<f64>, v0: &DVector<f64>) -> DVector<f64> {
    v * w + v0 * (1.0 - w)
}

/// The mid-step configuration `q_theta` for end-of-step velocities `v`: the fixed point of
/// `q_theta = q0 + theta dt N(q_theta) v_theta_vq` (eqs. 6, 11-12 combined, Appendix A).
pub fn mid_configuration<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    v: &DVector<f64>,
    opts: &ThetaOptions,
) -> Result<DVector<f64>, ThetaError> {
    let w = blend(theta.theta_vq, v, v0);
    if theta.theta == 0.0 {
        return Ok(q0.clone());
    }
    let (nq, nv) = (sys.num_positions(), sys.num_velocities());
    let mut p = q0.clone();
    let mut step = f64::INFINITY;
    for _ in 0..opts.max_iterations {
        let n = sys.velocity_map(&p);
        check_shape("N", &n, nq, nv)?;
        let qdot = n * &w;
        let next = q0 + &qdot * (theta.theta * dt);
        step = (&next - &p).amax();
        let scale = q0.amax().max(next.amax()).max(dt * qdot.amax());
        p = next;
        if !step.is_finite() {
            return Err(ThetaError::NonFinite("q_theta"));
        }
        // The first pass always moves p (unless v_theta_vq = 0); a constant N makes the
        // second pass move it by exactly zero.
        if step <= opts.tol * scale {
            return Ok(p);
        }
    }
    Err(ThetaError::Positions {
        iterations: opts.max_iterations,
        step,
    })
}

/// The momentum residual of eq. 14, `m(v) = M(q_theta(v)) (v - v0) - dt k(q_theta(v),
/// v_theta(v))`, with its scale `s` (module doc) and the `q_theta`, `v_theta` it used.
#[allow(clippy::type_complexity)]
fn residual<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    v: &DVector<f64>,
    opts: &ThetaOptions,
) -> Result<(DVector<f64>, f64, DVector<f64>, DVector<f64>, DMatrix<f64>), ThetaError> {
    let nv = sys.num_velocities();
    let qt = mid_configuration(sys, theta, dt, q0, v0, v, opts)?;
    let vt = blend(theta.theta, v, v0);
    let m = sys.mass_matrix(&qt);
    check_shape("M", &m, nv, nv)?;
    let k = sys.forces(&qt, &vt);
    check_len("k", &k, nv)?;
    let inertia = &m * (v - v0);
    let scale = inertia.amax().max((&m * v).amax()).max(dt * k.amax());
    let r = inertia - k * dt;
    Ok((r, scale, qt, vt, m))
}

/// The momentum residual `m(v)` of eq. 14 at end-of-step velocities `v` (zero at `v*`).
pub fn momentum_residual<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<DVector<f64>, ThetaError> {
    check_dt(dt)?;
    theta.validate()?;
    let nv = sys.num_velocities();
    check_len("q0", q0, sys.num_positions())?;
    check_len("v0", v0, nv)?;
    check_len("v", v, nv)?;
    residual(sys, theta, dt, q0, v0, v, &ThetaOptions::default()).map(|r| r.0)
}

/// `M + dt^2 theta theta_vq K + dt theta D` (eq. 15 with the given `K`, `D`).
fn theta_matrix(
    theta: Theta,
    dt: f64,
    m: &DMatrix<f64>,
    k: &DMatrix<f64>,
    d: &DMatrix<f64>,
) -> DMatrix<f64> {
    m + k * (dt * dt * theta.theta * theta.theta_vq) + d * (dt * theta.theta)
}

/// Stage 1: the free-motion velocities `v*` of eq. 13 (Newton, see the module doc) and
/// the matrix `A` of eq. 15 at `v*`.
pub fn free_motion<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    opts: &ThetaOptions,
) -> Result<FreeMotion, ThetaError> {
    check_dt(dt)?;
    theta.validate()?;
    let nv = sys.num_velocities();
    check_len("q0", q0, sys.num_positions())?;
    check_len("v0", v0, nv)?;
    let mut v = v0.clone();
    let mut iterations = 0;
    loop {
        let (r, scale, qt, vt, m) = residual(sys, theta, dt, q0, v0, &v, opts)?;
        let norm = r.amax();
        if !norm.is_finite() {
            return Err(ThetaError::NonFinite("stage 1 momentum residual"));
        }
        if norm <= opts.tol * scale {
            let (k, d) = sys.stiffness_damping(&qt, &vt);
            check_shape("K", &k, nv, nv)?;
            check_shape("D", &d, nv, nv)?;
            let a = spd(theta_matrix(theta, dt, &m, &k, &d))?;
            return Ok(FreeMotion {
                theta,
                dt,
                q0: q0.clone(),
                v0: v0.clone(),
                v_star: v,
                a,
                newton_iterations: iterations,
                relative_residual: if scale > 0.0 { norm / scale } else { 0.0 },
                trees: sys.trees(),
            });
        }
        if iterations >= opts.max_iterations {
            return Err(ThetaError::Newton {
                iterations,
                residual: norm,
                tolerance: opts.tol * scale,
            });
        }
        let (kn, dn) = sys.newton_jacobians(&qt, &vt);
        check_shape("K (Newton)", &kn, nv, nv)?;
        check_shape("D (Newton)", &dn, nv, nv)?;
        let g = theta_matrix(theta, dt, &m, &kn, &dn);
        let step = g.lu().solve(&(-r)).ok_or_else(|| {
            ThetaError::NotSpd(
                "stage 1: the Newton matrix M + dt^2 theta theta_vq K + dt theta D is singular"
                    .into(),
            )
        })?;
        v += step;
        iterations += 1;
    }
}

/// `A` symmetrised (after checking it is symmetric to `1e-12` relative) and checked positive
/// definite by Cholesky.
fn spd(a: DMatrix<f64>) -> Result<DMatrix<f64>, ThetaError> {
    let scale = a.amax();
    let asym = (&a - a.transpose()).amax();
    if asym > 1e-12 * scale {
        return Err(ThetaError::NotSpd(format!(
            "`A` of eq. 15 is not symmetric: max |A - A'| = {asym:.3e} (max |A| = {scale:.3e}); K and D must be symmetric"
        )));
    }
    let a = (&a + a.transpose()) * 0.5;
    if a.clone().cholesky().is_none() {
        return Err(ThetaError::NotSpd(
            "`A` of eq. 15 is not positive definite (M must be SPD, K and D positive semidefinite)"
                .into(),
        ));
    }
    Ok(a)
}

/// A dense matrix as sparse CSC, without its exact zeros.
pub fn to_sparse(m: &DMatrix<f64>) -> Result<SparseColMat<usize, f64>, ThetaError> {
    let mut t = Vec::new();
    for c in 0..m.ncols() {
        for r in 0..m.nrows() {
            if m[(r, c)] != 0.0 {
                t.push(Triplet::new(r, c, m[(r, c)]));
            }
        }
    }
    SparseColMat::try_new_from_triplets(m.nrows(), m.ncols(), &t)
        .map_err(|e| ThetaError::Core(CoreError::LinearAlgebra(format!("{e:?}"))))
}

impl FreeMotion {
    /// Number of velocities.
    pub fn num_velocities(&self) -> usize {
        self.v_star.len()
    }

    /// Stage 2's problem `A (v - v*) = J' gamma` (eq. 18) with `J = J(q0)` (`3 nc x nv`,
    /// rows `n, t1, t2` per contact) and each contact's model (its `phi0 = phi(q0)`), the
    /// step `dt`, `v0` and `b = 0`; `StepProblem::from` it for the registry's solvers (SAP
    /// minimises eq. 24 on it, Algorithm 1 line 2).
    pub fn contact_problem(
        &self,
        j: &DMatrix<f64>,
        contacts: Vec<ContactModel>,
    ) -> Result<GeneralizedProblem, ThetaError> {
        check_shape("J", j, 3 * contacts.len(), self.num_velocities())?;
        Ok(GeneralizedProblem::new(
            to_sparse(&self.a)?,
            to_sparse(j)?,
            self.v_star.iter().copied().collect(),
            vec![0.0; j.nrows()],
            contacts,
            StepContext {
                dt: Some(self.dt),
                v0: Some(self.v0.iter().copied().collect()),
                tree_of: self.trees.clone(),
            },
        )?)
    }
}

/// The end-of-step velocities of eq. 18, `v = v* + A^-1 J' gamma`, from a stage-2 problem
/// and the impulses a solver found (normal first per contact).
pub fn contact_velocities(
    problem: &GeneralizedProblem,
    gamma: &[f64],
) -> Result<DVector<f64>, ThetaError> {
    let nv = problem.num_dofs();
    let m = 3 * problem.num_contacts();
    if gamma.len() != m {
        return Err(ThetaError::Shape {
            field: "gamma",
            expected: format!("{m} entries (3 per contact)"),
            found: format!("{} entries", gamma.len()),
        });
    }
    if gamma.iter().any(|g| !g.is_finite()) {
        return Err(ThetaError::NonFinite("gamma"));
    }
    let mut a = DMatrix::zeros(nv, nv);
    let (cols, rows, vals) = (
        problem.a.symbolic().col_ptr(),
        problem.a.symbolic().row_idx(),
        problem.a.val(),
    );
    for c in 0..nv {
        for k in cols[c]..cols[c + 1] {
            a[(rows[k], c)] += vals[k];
        }
    }
    let mut jt_gamma = vec![0.0; nv];
    contactlab_core::generalized::sparse_transpose_mul_add(&problem.j, gamma, &mut jt_gamma);
    let chol = a.cholesky().ok_or_else(|| {
        ThetaError::NotSpd("`A` of the contact problem is not positive definite".into())
    })?;
    let dv = chol.solve(&DVector::from_vec(jt_gamma));
    Ok(DVector::from_column_slice(&problem.v_star) + dv)
}

/// The configuration at the end of the step, `q = q0 + dt N(q_theta) v_theta_vq` (eqs.
/// 11-12, Algorithm 1 line 3), for end-of-step velocities `v`.
pub fn positions<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    v: &DVector<f64>,
    opts: &ThetaOptions,
) -> Result<DVector<f64>, ThetaError> {
    check_dt(dt)?;
    theta.validate()?;
    let nv = sys.num_velocities();
    check_len("q0", q0, sys.num_positions())?;
    check_len("v0", v0, nv)?;
    check_len("v", v, nv)?;
    let qt = mid_configuration(sys, theta, dt, q0, v0, v, opts)?;
    let n = sys.velocity_map(&qt);
    check_shape("N", &n, sys.num_positions(), nv)?;
    Ok(q0 + n * blend(theta.theta_vq, v, v0) * dt)
}

/// One whole step without contact (`gamma = 0`, so `v = v*`): stage 1, then the position
/// update. Returns `(q, v)`.
pub fn free_step<S: ThetaSystem + ?Sized>(
    sys: &S,
    theta: Theta,
    dt: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
    opts: &ThetaOptions,
) -> Result<(DVector<f64>, DVector<f64>), ThetaError> {
    let fm = free_motion(sys, theta, dt, q0, v0, opts)?;
    let q = positions(sys, theta, dt, q0, v0, &fm.v_star, opts)?;
    Ok((q, fm.v_star))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root-mean-square difference of two series of equal length.
    fn position_error(x: &[f64], x_exact: &[f64]) -> f64 {
        let sum: f64 = x.iter().zip(x_exact).map(|(a, b)| (a - b).powi(2)).sum();
        (sum / x.len() as f64).sqrt()
    }

    /// The least-squares slope of `ln e` against `ln dt`: the observed order.
    fn order_of_accuracy(dt: &[f64], error: &[f64]) -> Option<f64> {
        let n = dt.len() as f64;
        let (lx, ly): (Vec<f64>, Vec<f64>) =
            dt.iter().zip(error).map(|(d, e)| (d.ln(), e.ln())).unzip();
        let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
        let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
        let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
        (sxx > 0.0).then(|| sxy / sxx)
    }

    /// `m x'' = -k x`: the spring is `k1` (`K = k`, `D = 0`).
    struct Oscillator {
        m: f64,
        k: f64,
    }

    impl ThetaSystem for Oscillator {
        fn num_positions(&self) -> usize {
            1
        }
        fn num_velocities(&self) -> usize {
            1
        }
        fn mass_matrix(&self, _q: &DVector<f64>) -> DMatrix<f64> {
            DMatrix::from_element(1, 1, self.m)
        }
        fn velocity_map(&self, _q: &DVector<f64>) -> DMatrix<f64> {
            DMatrix::identity(1, 1)
        }
        fn forces(&self, q: &DVector<f64>, _v: &DVector<f64>) -> DVector<f64> {
            DVector::from_element(1, -self.k * q[0])
        }
        fn stiffness_damping(
            &self,
            _q: &DVector<f64>,
            _v: &DVector<f64>,
        ) -> (DMatrix<f64>, DMatrix<f64>) {
            (DMatrix::from_element(1, 1, self.k), DMatrix::zeros(1, 1))
        }
    }

    /// The paper's frictionless spring-mass: `m = 0.5`, `k_s = 100`, `w = sqrt(200)`.
    const OSC: Oscillator = Oscillator { m: 0.5, k: 100.0 };

    fn v1(x: f64) -> DVector<f64> {
        DVector::from_element(1, x)
    }

    /// `(x, v)` after every step of `n` free steps from `(x0, 0)`.
    fn free_run(sys: &dyn ThetaSystem, scheme: Scheme, dt: f64, n: usize) -> Vec<(f64, f64)> {
        let (mut q, mut v) = (v1(0.1), v1(0.0));
        let opts = ThetaOptions::default();
        (0..n)
            .map(|_| {
                (q, v) = free_step(sys, scheme.theta(), dt, &q, &v, &opts).unwrap();
                (q[0], v[0])
            })
            .collect()
    }

    fn energy(x: f64, v: f64) -> f64 {
        0.5 * OSC.m * v * v + 0.5 * OSC.k * x * x
    }

    #[test]
    fn schemes_have_the_papers_parameters_and_names() {
        let got: Vec<(&str, f64, f64, u32)> = Scheme::ALL
            .iter()
            .map(|s| (s.name(), s.theta().theta, s.theta().theta_vq, s.order()))
            .collect();
        assert_eq!(
            got,
            [
                ("explicit_euler", 0.0, 0.0, 1),
                ("symplectic_euler", 0.0, 1.0, 1),
                ("implicit_euler", 1.0, 1.0, 1),
                ("midpoint", 0.5, 0.5, 2),
            ]
        );
        #[derive(Deserialize)]
        struct S {
            scheme: Scheme,
        }
        for s in Scheme::ALL {
            let parsed: S = toml::from_str(&format!("scheme = \"{}\"", s.name())).unwrap();
            assert_eq!(parsed.scheme, s);
            assert_eq!(s.name().parse::<Scheme>().unwrap(), s);
            assert_eq!(Theta::from(s), s.theta());
        }
        let e = "leapfrog".parse::<Scheme>().unwrap_err().to_string();
        assert!(e.contains("leapfrog") && e.contains("midpoint"), "{e}");
        assert!(toml::from_str::<S>("scheme = \"leapfrog\"").is_err());
        assert!(matches!(
            Theta::new(0.5, 1.5),
            Err(ThetaError::Parameter {
                name: "theta_vq",
                value: 1.5
            })
        ));
        assert!(Theta::new(f64::NAN, 0.0).is_err());
        assert_eq!(Theta::new(0.25, 0.75).unwrap().theta, 0.25);
    }

    /// One step of each scheme is the textbook recurrence for `x'' = -w^2 x`, `A` is eq. 15's
    /// `m + dt^2 theta theta_vq k`, and Newton is exact in one iteration (linear forces).
    #[test]
    fn one_step_of_each_scheme_is_its_recurrence() {
        let (dt, x0, v0) = (0.02, 0.1, -0.3);
        let w2 = OSC.k / OSC.m;
        let opts = ThetaOptions::default();
        for s in Scheme::ALL {
            let fm = free_motion(&OSC, s.theta(), dt, &v1(x0), &v1(v0), &opts).unwrap();
            let x = positions(&OSC, s.theta(), dt, &v1(x0), &v1(v0), &fm.v_star, &opts).unwrap();
            let (x1, vs) = (x[0], fm.v_star[0]);
            let (ex, ev) = match s {
                Scheme::ExplicitEuler => (x0 + dt * v0, v0 - dt * w2 * x0),
                Scheme::SymplecticEuler => {
                    let v = v0 - dt * w2 * x0;
                    (x0 + dt * v, v)
                }
                // [1, -dt; dt w2, 1] [x; v] = [x0; v0].
                Scheme::ImplicitEuler => {
                    let det = 1.0 + dt * dt * w2;
                    ((x0 + dt * v0) / det, (v0 - dt * w2 * x0) / det)
                }
                // x = x0 + dt (v0 + v) / 2, v = v0 - dt w2 (x0 + x) / 2.
                Scheme::Midpoint => {
                    let c = dt * dt * w2 / 4.0;
                    let v = (v0 * (1.0 - c) - dt * w2 * x0) / (1.0 + c);
                    (x0 + dt * (v0 + v) / 2.0, v)
                }
            };
            assert!((x1 - ex).abs() < 1e-15 && (vs - ev).abs() < 1e-14, "{s:?}");
            let t = s.theta();
            let a = OSC.m + dt * dt * t.theta * t.theta_vq * OSC.k;
            assert!((fm.a[(0, 0)] - a).abs() < 1e-15, "{s:?}");
            assert_eq!(fm.newton_iterations, 1, "{s:?}");
            assert!(fm.relative_residual < 1e-14, "{s:?}");
            let m = momentum_residual(&OSC, t, dt, &v1(x0), &v1(v0), &fm.v_star).unwrap();
            assert!(m[0].abs() < 1e-15, "{s:?}: {m}");
        }
    }

    /// Contact-free spring-mass against `x0 cos(w t)` over 1 s: the position error falls as
    /// `dt` for the Euler schemes and `dt^2` for the midpoint rule. (Implicit Euler's
    /// amplitude decays as `exp(-w^2 dt t / 2)`: its error is first order only once that
    /// exponent is small, `dt << 2 / (w^2 T)`; with `T = 5 s` and `dt = 0.02` its local slope is
    /// 0.14. Over 1 s, 4 to 1 ms are in the asymptotic range for every scheme.)
    #[test]
    fn free_spring_mass_orders_of_accuracy() {
        let w = (OSC.k / OSC.m).sqrt();
        let (t_end, dts) = (1.0, [0.004, 0.002, 0.001]);
        for (s, order) in [
            (Scheme::SymplecticEuler, 1.0),
            (Scheme::ImplicitEuler, 1.0),
            (Scheme::Midpoint, 2.0),
        ] {
            let errors: Vec<f64> = dts
                .iter()
                .map(|&dt: &f64| {
                    let n = (t_end / dt).round() as usize;
                    let run = free_run(&OSC, s, dt, n);
                    let x: Vec<f64> = run.iter().map(|p| p.0).collect();
                    let exact: Vec<f64> =
                        (1..=n).map(|k| 0.1 * (w * k as f64 * dt).cos()).collect();
                    position_error(&x, &exact)
                })
                .collect();
            let p = order_of_accuracy(&dts, &errors).unwrap();
            eprintln!("{s:?}: order {p:.3}, errors {errors:?}");
            assert!(
                (p - order).abs() < 0.2,
                "{s:?}: order {p}, errors {errors:?}"
            );
        }
    }

    /// Section VI-B, Fig. 5 (`dt = 0.02`, 22 steps per period): the midpoint rule conserves
    /// the energy, implicit Euler loses the factor `1 + (w dt)^2` every step, symplectic Euler
    /// stays in a band `w dt` wide (the paper's 28%), explicit Euler gains `1 + (w dt)^2`.
    #[test]
    fn free_spring_mass_energy_behaviour() {
        let dt = 0.02;
        let wdt2 = dt * dt * OSC.k / OSC.m;
        let e0 = energy(0.1, 0.0);
        let n = 5000; // 100 s, about 225 periods
        let rel = |s: Scheme| -> Vec<f64> {
            free_run(&OSC, s, dt, n)
                .iter()
                .map(|&(x, v)| energy(x, v) / e0)
                .collect()
        };
        let mid = rel(Scheme::Midpoint);
        assert!(mid.iter().all(|e| (e - 1.0).abs() < 1e-12));
        let imp = rel(Scheme::ImplicitEuler);
        assert!((imp[0] - 1.0 / (1.0 + wdt2)).abs() < 1e-14);
        assert!(imp
            .windows(2)
            .all(|p| (p[1] / p[0] * (1.0 + wdt2) - 1.0).abs() < 1e-12));
        // "dissipates the initial energy in just a few periods": below 1% within 3 periods.
        assert!(imp[3 * 22] < 0.01, "{}", imp[3 * 22]);
        let sym = rel(Scheme::SymplecticEuler);
        let (lo, hi) = sym
            .iter()
            .fold((1.0f64, 1.0f64), |(l, h), &e| (l.min(e), h.max(e)));
        let band = hi - lo;
        assert!((band - 0.2886).abs() < 1e-3, "band {band}");
        assert!(((band / (wdt2.sqrt())) - 1.0).abs() < 0.03);
        // Bounded: the last 1000 steps span the same band as the first 1000.
        let span = |e: &[f64]| {
            e.iter().fold(0.0f64, |m, &x| m.max(x)) - e.iter().fold(2.0f64, |m, &x| m.min(x))
        };
        assert!((span(&sym[..1000]) - span(&sym[n - 1000..])).abs() < 1e-3);
        let exp = rel(Scheme::ExplicitEuler);
        assert!(exp
            .windows(2)
            .all(|p| (p[1] / p[0] / (1.0 + wdt2) - 1.0).abs() < 1e-12));
    }

    /// A pendulum (`k = -m g l sin q` in `k2`) with a configuration-dependent `N(q) = 1 + q^2`:
    /// Newton reaches the tolerance on the nonlinear eq. 13, and the new configuration solves
    /// `q = q0 + dt N(q_theta) v_theta_vq` with `q_theta = theta q + (1 - theta) q0`.
    #[test]
    fn nonlinear_forces_and_velocity_map() {
        struct Pendulum;
        impl ThetaSystem for Pendulum {
            fn num_positions(&self) -> usize {
                1
            }
            fn num_velocities(&self) -> usize {
                1
            }
            fn mass_matrix(&self, _q: &DVector<f64>) -> DMatrix<f64> {
                DMatrix::from_element(1, 1, 2.0)
            }
            fn velocity_map(&self, q: &DVector<f64>) -> DMatrix<f64> {
                DMatrix::from_element(1, 1, 1.0 + q[0] * q[0])
            }
            fn forces(&self, q: &DVector<f64>, _v: &DVector<f64>) -> DVector<f64> {
                v1(-2.0 * 9.81 * q[0].sin())
            }
            fn stiffness_damping(
                &self,
                _q: &DVector<f64>,
                _v: &DVector<f64>,
            ) -> (DMatrix<f64>, DMatrix<f64>) {
                (DMatrix::zeros(1, 1), DMatrix::zeros(1, 1))
            }
            fn newton_jacobians(
                &self,
                q: &DVector<f64>,
                _v: &DVector<f64>,
            ) -> (DMatrix<f64>, DMatrix<f64>) {
                let n = 1.0 + q[0] * q[0];
                (
                    DMatrix::from_element(1, 1, 2.0 * 9.81 * q[0].cos() * n),
                    DMatrix::zeros(1, 1),
                )
            }
        }
        let (dt, q0, v0) = (0.05, v1(1.0), v1(0.5));
        let opts = ThetaOptions::default();
        for s in [Scheme::ImplicitEuler, Scheme::Midpoint] {
            let t = s.theta();
            let fm = free_motion(&Pendulum, t, dt, &q0, &v0, &opts).unwrap();
            assert!(fm.newton_iterations <= 6, "{s:?}: {}", fm.newton_iterations);
            assert!(fm.relative_residual <= 1e-12);
            // A is the mass matrix alone: the pendulum force is k2.
            assert_eq!(fm.a[(0, 0)], 2.0);
            let q = positions(&Pendulum, t, dt, &q0, &v0, &fm.v_star, &opts).unwrap();
            let qt = t.theta * q[0] + (1.0 - t.theta) * q0[0];
            let vq = t.theta_vq * fm.v_star[0] + (1.0 - t.theta_vq) * v0[0];
            let expect = q0[0] + dt * (1.0 + qt * qt) * vq;
            assert!((q[0] - expect).abs() < 1e-12, "{s:?}: {} vs {expect}", q[0]);
        }
    }

    #[test]
    fn the_contact_problem_is_eq_18() {
        let dt = 0.01;
        let fm = free_motion(
            &OSC,
            Scheme::Midpoint.theta(),
            dt,
            &v1(0.1),
            &v1(0.0),
            &ThetaOptions::default(),
        )
        .unwrap();
        let model = ContactModel {
            mu: 0.5,
            phi0: -1e-3,
            stiffness: 1e4,
            dissipation: 0.01,
        };
        let j = DMatrix::from_column_slice(3, 1, &[0.0, 1.0, 0.0]);
        let p = fm.contact_problem(&j, vec![model]).unwrap();
        assert_eq!((p.num_dofs(), p.num_contacts()), (1, 1));
        assert_eq!(p.v_star, [fm.v_star[0]]);
        assert_eq!(p.v0.as_deref(), Some(&[0.0][..]));
        assert_eq!(p.dt, Some(dt));
        assert_eq!(p.contacts, [model]);
        // v = v* + A^-1 J' gamma.
        let v = contact_velocities(&p, &[0.0, 0.2, 0.0]).unwrap();
        assert!((v[0] - (fm.v_star[0] + 0.2 / fm.a[(0, 0)])).abs() < 1e-15);
        let e = contact_velocities(&p, &[0.0]).unwrap_err().to_string();
        assert!(e.contains("gamma"), "{e}");
        let e = contact_velocities(&p, &[0.0, f64::NAN, 0.0]).unwrap_err();
        assert!(matches!(e, ThetaError::NonFinite("gamma")), "{e}");
        let e = fm
            .contact_problem(&DMatrix::zeros(2, 1), vec![model])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`J`"), "{e}");
    }

    #[test]
    fn bad_inputs_are_errors_naming_the_quantity() {
        let opts = ThetaOptions::default();
        let t = Scheme::Midpoint.theta();
        for dt in [0.0, -0.1, f64::NAN, f64::INFINITY] {
            let e = free_motion(&OSC, t, dt, &v1(0.0), &v1(0.0), &opts).unwrap_err();
            assert!(matches!(e, ThetaError::TimeStep(_)), "{e}");
            assert!(e.to_string().contains("`dt`"));
        }
        let e = free_motion(&OSC, t, 0.01, &DVector::zeros(2), &v1(0.0), &opts).unwrap_err();
        assert!(e.to_string().contains("`q0`"), "{e}");
        let e = free_motion(&OSC, t, 0.01, &v1(0.0), &v1(f64::NAN), &opts).unwrap_err();
        assert!(matches!(e, ThetaError::NonFinite("v0")), "{e}");
        let bad = Theta {
            theta: 2.0,
            theta_vq: 0.5,
        };
        let e = free_motion(&OSC, bad, 0.01, &v1(0.0), &v1(0.0), &opts).unwrap_err();
        assert!(e.to_string().contains("`theta`"), "{e}");
        // A negative spring makes A indefinite for a large enough step.
        let soft = Oscillator { m: 1.0, k: -1e4 };
        let e = free_motion(
            &soft,
            Scheme::ImplicitEuler.theta(),
            0.1,
            &v1(0.1),
            &v1(0.0),
            &opts,
        )
        .unwrap_err();
        assert!(matches!(e, ThetaError::NotSpd(_)), "{e}");
    }
}
