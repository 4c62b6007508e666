//! The natural map of a local problem's constraint blocks as a least-squares residual.
//!
//! For a local problem `u = W r + q` whose rows are constraint blocks `b`
//! ([`contactlab_core::constraint`]), each with its impulse set `C_b` and the velocity `y_b`
//! its condition pairs with `r_b`, the impulses solve the problem exactly when, for every block,
//!
//! `F_b(r) = r_b - P_{C_b}(r_b - rho_b y_b) = 0`
//!
//! for any `rho_b > 0`. On a contact with friction (`C_b` the cone `K_mu`, `y_b` De Saxcé's
//! `û_b = u_b + |D u_b,f| e_n`, `D = diag(mu_i)`) this is the natural map of FCLib RT-0444 §2
//! and Alart and Curnier 1991; on the Coulomb contact (three rows, one `mu`) it is theirs term
//! for term. The extension to the other kinds is ours, the same map with each kind's set and
//! `y_b = u_b` ([`contactlab_core::constraint`]'s table):
//!
//! | block | `F_b` |
//! |---|---|
//! | equality (`C = R^m`) | `rho_b u_b` |
//! | limit, frictionless contact (`C = R+`) | `r_b - max(0, r_b - rho_b u_b)` |
//! | friction loss (`C = [-f, f]`) | `r_b - clip(r_b - rho_b u_b, -f, f)` |
//! | contact of `condim` 3, 4, 6 with per-row `mu_i` (the elliptic cone) | `r_b - P_{K_mu}(r_b - rho_b û_b)` |
//!
//! We take `rho_b = m_b / tr(W_bb)` (`m_b` the block's rows), the inverse mean diagonal of the
//! block's own `W`, so that `r_b` and `rho_b y_b` have the same scale; it changes the
//! conditioning, never the solutions. With `r` the unknowns this is a semismooth residual
//! whose generalized Jacobian has the block rows
//!
//! `J_b = (I - D_b) E_b + rho_b D_b L_b W_b,:`,
//!
//! with `E_b` the block's own columns, `D_b = dP/dz` at `z_b = r_b - rho_b y_b`
//! ([`Constraint::project_jacobian`]; the Coulomb contact's closed form
//! [`cone::project_jacobian`]), and `L_b = I + e_n g_b'` on a cone, `g_b = (0, D^2 u_f / |D u_f|)`
//! the gradient of `|D u_f|` (taken as 0 at `u_f = 0`), `L_b = I` on the other kinds. (On an
//! equality `D_b = I`: `J_b = rho_b W_b,:`.) The solutions lie in the product of the sets, so
//! [`ProjectedResidual::project`] projects each block's impulse onto its set.

mod admm_start;
pub mod sensitivity;

use std::cell::RefCell;
use std::time::Duration;

use contactlab_core::constraint::{Constraint, EVERY_KIND};
use contactlab_core::elliptic_cone;
use contactlab_core::metrics::natural_map_residual;
use contactlab_core::plugin::{Formulation, FormulationPlugin, Model};
use contactlab_core::{
    cone, CoreError, LocalProblem, ProjectedResidual, Residual, Status, StepProblem,
};
use faer::{Mat, MatMut};
use nalgebra::{Matrix3, Vector3};

/// The natural-map residual of a local problem; unknowns are the impulses `r`.
#[derive(Debug, Clone)]
pub struct NaturalMap {
    problem: LocalProblem,
    /// `W` densified once: the Jacobian's `B W` product walks its columns.
    w: Mat<f64>,
    /// `rho_b = m_b / tr(W_bb)` per block.
    rho: Vec<f64>,
    /// The ADMM start's state between the first phase and the restarts
    /// ([`NaturalMapFormulation::admm_start_tol`]).
    admm_start: RefCell<admm_start::AdmmStart>,
}

/// A three-row block as nalgebra's vector, for the Coulomb contact's closed forms.
fn vec3(v: &[f64]) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

/// A Coulomb contact's `z = r - rho û` and `g`, the gradient of `mu |u_t|` w.r.t. `u`, in the
/// closed form of [`cone`] (the numbers of the Coulomb-only natural map, unchanged).
fn coulomb_state(mu: f64, rho: f64, r: &[f64], u: &[f64]) -> (Vector3<f64>, Vector3<f64>) {
    let ua = vec3(u);
    let z = vec3(r) - rho * cone::de_saxce(mu, ua);
    let t = ua[1].hypot(ua[2]);
    let g = if t > 0.0 {
        Vector3::new(0.0, mu * ua[1] / t, mu * ua[2] / t)
    } else {
        Vector3::zeros()
    };
    (z, g)
}

/// The Coulomb coefficient of a block that [`Constraint::is_coulomb`].
fn coulomb_mu(c: &Constraint) -> Option<f64> {
    match c {
        Constraint::Contact { mu } if c.is_coulomb() => Some(mu[0]),
        _ => None,
    }
}

/// Any other block's `z = r - rho y` (`y` the velocity [`Constraint::dual_velocity`] pairs
/// with `r`) into `z`.
fn block_point(c: &Constraint, rho: f64, r: &[f64], u: &[f64], z: &mut [f64]) {
    c.dual_velocity(u, z);
    z.iter_mut().zip(r).for_each(|(z, r)| *z = r - rho * *z);
}

/// One block's part of the generalized Jacobian: `D_b = dP/dz` (its own columns get
/// `I - D_b`) and `B_b = rho_b D_b L_b` (which multiplies the block's rows of `W`).
enum BlockJacobian {
    /// A Coulomb contact's, in nalgebra's fixed sizes (today's numbers).
    Coulomb { d: Matrix3<f64>, b: Matrix3<f64> },
    /// Any other block's, row-major `n x n` (on the heap: a six-row block's pair is ten
    /// times a Coulomb contact's).
    General { n: usize, d: Vec<f64>, b: Vec<f64> },
}

impl BlockJacobian {
    /// The block's `D_b` and `B_b` at impulses `r` and velocities `u` (its own rows).
    fn new(c: &Constraint, rho: f64, r: &[f64], u: &[f64]) -> BlockJacobian {
        if let Some(mu) = coulomb_mu(c) {
            let (z, g) = coulomb_state(mu, rho, r, u);
            let d = cone::project_jacobian(mu, z);
            let mut lift = Matrix3::identity();
            lift[(0, 1)] += g[1];
            lift[(0, 2)] += g[2];
            return BlockJacobian::Coulomb {
                d,
                b: rho * d * lift,
            };
        }
        let n = r.len();
        let mut z = [0.0; 6];
        block_point(c, rho, r, u, &mut z[..n]);
        let mut d = vec![0.0; n * n];
        c.project_jacobian(&z[..n], &mut d);
        // L = I + e_n g' changes only the normal column of D L: D L = D + (D e_n) g'.
        let g = cone_gradient(c, u);
        let mut b = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                b[i * n + j] = rho * (d[i * n + j] + d[i * n] * g[j]);
            }
        }
        BlockJacobian::General { n, d, b }
    }

    /// The block's rows of column `col` of the Jacobian into `out`, from the block's rows of
    /// that column of `W` (`wcol`; the block's rows start at `start`): `(B_b W_b,col)_i`, plus
    /// `[I - D_b]_{i, col - start}` when `col` is one of the block's own.
    fn column(&self, start: usize, col: usize, wcol: &[f64], out: &mut [f64]) {
        let own = (start..start + self.rows()).contains(&col);
        let delta = |i: usize| if i + start == col { 1.0 } else { 0.0 };
        match self {
            BlockJacobian::Coulomb { d, b } => {
                let v = b * vec3(wcol);
                for (i, o) in out.iter_mut().enumerate() {
                    let base = if own {
                        delta(i) - d[(i, col - start)]
                    } else {
                        0.0
                    };
                    *o = base + v[i];
                }
            }
            BlockJacobian::General { n, d, b } => {
                for (i, o) in out.iter_mut().enumerate() {
                    let base = if own {
                        delta(i) - d[i * n + col - start]
                    } else {
                        0.0
                    };
                    let v: f64 = (0..*n).map(|j| b[i * n + j] * wcol[j]).sum();
                    *o = base + v;
                }
            }
        }
    }

    /// The block's rows.
    fn rows(&self) -> usize {
        match self {
            BlockJacobian::Coulomb { .. } => 3,
            BlockJacobian::General { n, .. } => *n,
        }
    }
}

/// `g`, the gradient of `|D u_f|` w.r.t. a cone's `u` (`D^2 u_f / |D u_f|`, 0 at `u_f = 0`
/// where it has none), zeros for the other kinds (their `y` is `u`).
fn cone_gradient(c: &Constraint, u: &[f64]) -> [f64; 6] {
    let mut g = [0.0; 6];
    if let Constraint::Contact { mu } = c {
        let norm = elliptic_cone::dual_norm(mu, &u[1..]);
        if norm > 0.0 {
            for (i, m) in mu.iter().enumerate() {
                g[1 + i] = m * m * u[1 + i] / norm;
            }
        }
    }
    g
}

/// A contact's direction of coefficient change per unit of its `mu` (the first coefficient,
/// [`contactlab_core::Constraints::mu`]): the two tangential coefficients move together in
/// proportion (`1` and `mu_2 / mu_1`: both `1` on a Coulomb contact), the torsional and
/// rolling ones (MuJoCo's separate spin and roll frictions) stay. `None` for a block without
/// friction, or a contact whose first coefficient is zero (the derivative does not open
/// friction where there is none: the one-sided choice of [`elliptic_cone::project_mu_derivative`]).
pub(crate) fn mu_direction(c: &Constraint) -> Option<[f64; 5]> {
    let Constraint::Contact { mu } = c else {
        return None;
    };
    if mu.is_empty() || mu[0] == 0.0 {
        return None;
    }
    let mut d = [0.0; 5];
    d[0] = 1.0;
    if mu.len() > 1 {
        d[1] = mu[1] / mu[0];
    }
    Some(d)
}

/// `dF_b / dmu_b` along [`mu_direction`] at impulses `r` and velocities `u` (the block's
/// rows): with `F_b = r_b - P_{K_mu}(z_b)`, `z_b = r_b - rho_b û_b` and De Saxcé's
/// `û_n = u_n + |D u_f|`, `dF_b = -(dP/dmu) dmu + rho_b D_b e_n (d|D u_f|/dmu) dmu`, where
/// `(d|D u_f|/dmu) dmu = sum_k mu_k u_f,k^2 dmu_k / |D u_f|` (0 at `u_f = 0`).
fn block_mu_derivative(c: &Constraint, rho: f64, r: &[f64], u: &[f64]) -> [f64; 6] {
    let mut out = [0.0; 6];
    let (Some(dmu), Constraint::Contact { mu }) = (mu_direction(c), c) else {
        return out;
    };
    let n = r.len();
    let dmu = &dmu[..mu.len()];
    let mut z = [0.0; 6];
    block_point(c, rho, r, u, &mut z[..n]);
    let mut dp = [0.0; 6];
    elliptic_cone::project_mu_derivative(mu, &z[..n], dmu, &mut dp[..n]);
    let norm = elliptic_cone::dual_norm(mu, &u[1..]);
    let d_norm = if norm > 0.0 {
        (0..mu.len())
            .map(|k| mu[k] * u[1 + k] * u[1 + k] * dmu[k])
            .sum::<f64>()
            / norm
    } else {
        0.0
    };
    let mut d = [0.0; 36];
    c.project_jacobian(&z[..n], &mut d[..n * n]);
    for i in 0..n {
        out[i] = -dp[i] + rho * d[i * n] * d_norm;
    }
    out
}

impl NaturalMap {
    /// The Jacobian of a problem of Coulomb contacts only, in nalgebra's fixed sizes: the
    /// general loop's per-block dispatch in its `O(n^2)` column walk cost 4-8% of a
    /// Gauss-Newton solve on contact-only problems (measured, interleaved).
    fn coulomb_jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        let n = self.num_unknowns();
        let u = self.problem.velocity(x);
        let mu = self.problem.mu();
        // Per contact: I - D_a on the diagonal block, B_a = rho_a D_a (I + e_n g_a') times W's rows.
        let mut b_blocks = Vec::with_capacity(mu.len());
        for (a, &mu_a) in mu.iter().enumerate() {
            let rows = 3 * a..3 * a + 3;
            let (z, g) = coulomb_state(mu_a, self.rho[a], &x[rows.clone()], &u[rows]);
            let d = cone::project_jacobian(mu_a, z);
            let mut lift = Matrix3::identity();
            lift[(0, 1)] += g[1];
            lift[(0, 2)] += g[2];
            b_blocks.push(self.rho[a] * d * lift);
            for i in 0..3 {
                for j in 0..3 {
                    let delta = if i == j { 1.0 } else { 0.0 };
                    // Filled here, the W part is added below.
                    out[(3 * a + i, 3 * a + j)] = delta - d[(i, j)];
                }
            }
        }
        for col in 0..n {
            for (a, b) in b_blocks.iter().enumerate() {
                let wcol = Vector3::new(
                    self.w[(3 * a, col)],
                    self.w[(3 * a + 1, col)],
                    self.w[(3 * a + 2, col)],
                );
                let v = b * wcol;
                for i in 0..3 {
                    let row = 3 * a + i;
                    let base = if col / 3 == a { out[(row, col)] } else { 0.0 };
                    out[(row, col)] = base + v[i];
                }
            }
        }
    }

    /// The Jacobian block by block (any kinds), column by column of `W`.
    fn block_jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        let n = self.num_unknowns();
        let u = self.problem.velocity(x);
        let blocks: Vec<(usize, BlockJacobian)> = self
            .problem
            .constraints
            .iter()
            .zip(&self.rho)
            .map(|((rows, c), &rho)| {
                let j = BlockJacobian::new(c, rho, &x[rows.clone()], &u[rows.clone()]);
                (rows.start, j)
            })
            .collect();
        let (mut wcol, mut jcol) = ([0.0; 6], [0.0; 6]);
        for col in 0..n {
            for (start, b) in &blocks {
                let m = b.rows();
                for (i, w) in wcol[..m].iter_mut().enumerate() {
                    *w = self.w[(start + i, col)];
                }
                b.column(*start, col, &wcol[..m], &mut jcol[..m]);
                for (i, v) in jcol[..m].iter().enumerate() {
                    out[(start + i, col)] = *v;
                }
            }
        }
    }

    /// Wraps `problem`; `rho_b` defaults to `m_b / tr(W_bb)` (1 where the trace is not
    /// positive).
    pub fn new(problem: &LocalProblem) -> NaturalMap {
        let w = problem.w.to_dense();
        let rho = problem
            .constraints
            .iter()
            .map(|(rows, _)| {
                let m = rows.len() as f64;
                let tr: f64 = rows.map(|i| w[(i, i)]).sum();
                if tr > 0.0 && tr.is_finite() {
                    m / tr
                } else {
                    1.0
                }
            })
            .collect();
        NaturalMap {
            problem: problem.clone(),
            w,
            rho,
            admm_start: RefCell::default(),
        }
    }

    /// The problem this residual was built from.
    pub fn problem(&self) -> &LocalProblem {
        &self.problem
    }

    /// `B = blockdiag(B_b)`, `B_b = rho_b D_b L_b`, at `x`: the derivative of the residual with
    /// respect to the velocity `u = W r + q`, hence with respect to `q` (and to `W` through
    /// `dW r`), dense `n x n`.
    pub(crate) fn velocity_jacobian(&self, x: &[f64]) -> Mat<f64> {
        let n = self.num_unknowns();
        let u = self.problem.velocity(x);
        let mut out = Mat::zeros(n, n);
        for ((rows, c), &rho) in self.problem.constraints.iter().zip(&self.rho) {
            let s = rows.start;
            match BlockJacobian::new(c, rho, &x[rows.clone()], &u[rows.clone()]) {
                BlockJacobian::Coulomb { b, .. } => {
                    (0..3).for_each(|i| (0..3).for_each(|j| out[(s + i, s + j)] = b[(i, j)]));
                }
                BlockJacobian::General { n: m, b, .. } => {
                    (0..m).for_each(|i| (0..m).for_each(|j| out[(s + i, s + j)] = b[i * m + j]));
                }
            }
        }
        out
    }

    /// `dF/dmu` at `x`, dense `n x nb`: column `b` the residual's derivative along block `b`'s
    /// friction coefficient ([`block_mu_derivative`]; zero for blocks without friction).
    pub(crate) fn mu_jacobian(&self, x: &[f64]) -> Mat<f64> {
        let n = self.num_unknowns();
        let u = self.problem.velocity(x);
        let blocks = self.problem.constraints.len();
        let mut out = Mat::zeros(n, blocks);
        let iter = self.problem.constraints.iter().zip(&self.rho).enumerate();
        for (b, ((rows, c), &rho)) in iter {
            let col = block_mu_derivative(c, rho, &x[rows.clone()], &u[rows.clone()]);
            rows.clone()
                .enumerate()
                .for_each(|(i, row)| out[(row, b)] = col[i]);
        }
        out
    }
}

impl Residual for NaturalMap {
    fn num_unknowns(&self) -> usize {
        self.problem.q.len()
    }

    fn num_residuals(&self) -> usize {
        self.problem.q.len()
    }

    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let u = self.problem.velocity(x);
        for ((rows, c), &rho) in self.problem.constraints.iter().zip(&self.rho) {
            let (r, ub) = (&x[rows.clone()], &u[rows.clone()]);
            let f = &mut out[rows];
            if let Some(mu) = coulomb_mu(c) {
                let (z, _) = coulomb_state(mu, rho, r, ub);
                f.copy_from_slice((vec3(r) - cone::project(mu, z)).as_slice());
            } else if let Constraint::Equality { .. } = c {
                // `r - (r - rho u)`, without the rounding of the subtractions.
                f.iter_mut().zip(ub).for_each(|(f, u)| *f = rho * u);
            } else {
                let n = r.len();
                let (mut z, mut p) = ([0.0; 6], [0.0; 6]);
                block_point(c, rho, r, ub, &mut z[..n]);
                c.project(&z[..n], &mut p[..n]);
                f.iter_mut()
                    .zip(r.iter().zip(&p))
                    .for_each(|(f, (r, p))| *f = r - p);
            }
        }
    }

    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
        if self.problem.constraints.coulomb_only() {
            self.coulomb_jacobian(x, out)
        } else {
            self.block_jacobian(x, out)
        }
    }

    /// The shared ruler itself, `|r - P_K(r - û)| / (1 + |q|)` ([`natural_map_residual`]):
    /// this residual's `rho_b` scaling leaves it above or below the ruler by up to
    /// `max(rho_b, 1 / rho_b)`, so a driver that stopped on `|F|` could call an answer
    /// `converged` that the ruler rejects (or iterate past one it accepts).
    fn stop_measure(&self, x: &[f64], _f: &[f64]) -> f64 {
        natural_map_residual(&self.problem, x)
    }
}

impl ProjectedResidual for NaturalMap {
    fn project(&self, x: &mut [f64]) {
        let mut z = [0.0; 6];
        for (rows, c) in self.problem.constraints.iter() {
            let xb = &mut x[rows];
            if let Some(mu) = coulomb_mu(c) {
                xb.copy_from_slice(cone::project(mu, vec3(xb)).as_slice());
            } else {
                let z = &mut z[..xb.len()];
                z.copy_from_slice(xb);
                c.project(z, xb);
            }
        }
    }
}

/// The natural map as a plugin (`--formulation natural-map`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NaturalMapFormulation {
    /// When set, the driver starts where proximal ADMM, run from the given start, first reads
    /// at most this on the shared ruler (the module `admm_start` says why); `None` (the
    /// default): the driver starts at the given point.
    pub admm_start_tol: Option<f64>,
    /// The most iterations of each ADMM phase (the solve's time limit bounds them too).
    pub admm_start_iterations: u64,
    /// When the driver fails after an ADMM start: how many times ADMM goes on from its last
    /// point to a tolerance ten times tighter and the driver starts again from there.
    pub admm_restarts: u32,
    /// The driver's iterations in each attempt after an ADMM start while restarts remain (the
    /// last has the solve's whole budget): from a point ADMM brought close, Newton converges in
    /// a few iterations or crawls, and a crawl's iterations are better spent on ADMM.
    pub admm_attempt_iterations: u64,
}

impl Default for NaturalMapFormulation {
    /// No ADMM start; when one is asked for, at most 10 000 iterations per phase (Siconos' CI
    /// budget for its ADMM; the time limit bounds them too), 6 restarts (the last phase a
    /// million times tighter than the first) and 150 driver iterations per attempt. Measured on
    /// the robot study's hands (5 000 steps each, from 1e-4): with 1 000 ADMM iterations and
    /// no attempt budget the Jaco had 4 974 steps accepted and Adroit 4 908-4 976 (its failures
    /// at the time limit); with 1 000 and 50, 4 914 and 4 947; with 10 000 and 150, 4 995 and
    /// 4 993.
    fn default() -> Self {
        NaturalMapFormulation {
            admm_start_tol: None,
            admm_start_iterations: 10_000,
            admm_restarts: 6,
            admm_attempt_iterations: 150,
        }
    }
}

impl Formulation for NaturalMapFormulation {
    type Built = NaturalMap;

    /// Every kind: each block's natural map with its own set (see the module documentation).
    const KINDS: &'static [&'static str] = EVERY_KIND;

    fn model(&self) -> Model {
        Model::CoulombCone
    }

    fn check(&self) -> Result<(), CoreError> {
        match self.admm_start_tol {
            Some(t) if !(t > 0.0 && t.is_finite()) => Err(CoreError::BadOption(format!(
                "natural-map option admm_start_tol must be a positive number, got {t}"
            ))),
            _ if self.admm_attempt_iterations == 0 => Err(CoreError::BadOption(
                "natural-map option admm_attempt_iterations must be at least 1, got 0".into(),
            )),
            _ => Ok(()),
        }
    }

    fn build(&self, problem: &StepProblem) -> Result<NaturalMap, CoreError> {
        let problem = problem.local()?;
        problem.validate()?;
        Ok(NaturalMap::new(problem))
    }

    fn first_phase(
        &self,
        built: &NaturalMap,
        x0: Vec<f64>,
        time_limit: Option<Duration>,
    ) -> Result<Vec<f64>, CoreError> {
        let Some(tol) = self.admm_start_tol else {
            return Ok(x0);
        };
        built.admm_start.borrow_mut().first(
            &built.problem,
            x0,
            tol,
            self.admm_start_iterations,
            time_limit,
        )
    }

    /// After an ADMM start, a failed driver starts again from ADMM's point a decade tighter,
    /// at most `admm_restarts` times (not after a timeout).
    fn restart(
        &self,
        built: &NaturalMap,
        _x: &[f64],
        status: &Status,
        attempt: u32,
    ) -> Option<Vec<f64>> {
        self.admm_start_tol?;
        let failed = !matches!(status, Status::Converged | Status::Timeout);
        if !failed || attempt >= self.admm_restarts {
            return None;
        }
        built
            .admm_start
            .borrow_mut()
            .tighter(&built.problem, self.admm_start_iterations)
    }

    /// After an ADMM start, `admm_attempt_iterations` for every attempt but the last.
    fn attempt_budget(&self, _built: &NaturalMap, attempt: u32, max_iter: u64) -> u64 {
        match self.admm_start_tol {
            Some(_) if attempt < self.admm_restarts => max_iter.min(self.admm_attempt_iterations),
            _ => max_iter,
        }
    }

    fn counters(&self, built: &NaturalMap) -> Vec<(&'static str, u64)> {
        match self.admm_start_tol {
            Some(_) => vec![(
                "admm_start_iterations",
                built.admm_start.borrow().iterations(),
            )],
            None => Vec::new(),
        }
    }

    fn num_unknowns(&self, built: &NaturalMap) -> usize {
        built.num_unknowns()
    }

    fn impulses(&self, _built: &NaturalMap, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

impl FormulationPlugin for NaturalMapFormulation {
    const NAME: &'static str = "natural-map";
    const DESCRIPTION: &'static str = "natural map r - P_C(r - rho y) per constraint block \
         (FCLib's on the cones, y = u + |D u_f| e_n) as a projected residual";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{every_kind_file, problem_of};
    use contactlab_core::{Matrix, SolveOptions, Status};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random SPD `W = L L' + I/10` of `nc` contacts with random `q` and `mu`.
    fn random_problem(nc: usize, seed: u64) -> LocalProblem {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 3 * nc;
        let l: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>()
                    + if i == j { 0.1 } else { 0.0 };
            }
        }
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            &(0..nc)
                .map(|_| rng.random_range(0.1..1.0))
                .collect::<Vec<f64>>(),
        )
    }

    #[test]
    fn the_coulomb_jacobian_is_the_block_jacobian_bit_for_bit() {
        for seed in 0..20 {
            let p = random_problem(5, seed);
            let nm = NaturalMap::new(&p);
            let mut rng = ChaCha8Rng::seed_from_u64(50 + seed);
            let x: Vec<f64> = (0..15).map(|_| rng.random_range(-1.0..1.0)).collect();
            let (mut fast, mut general) = (Mat::zeros(15, 15), Mat::zeros(15, 15));
            nm.coulomb_jacobian(&x, fast.as_mut());
            nm.block_jacobian(&x, general.as_mut());
            assert_eq!(fast, general, "seed {seed}");
        }
    }

    /// `data/problems/kinds/jaco_grasp_step.json` as a local problem and as a step.
    fn jaco_grasp_step() -> (LocalProblem, StepProblem) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/problems/kinds/jaco_grasp_step.json");
        let p = contactlab_core::io::read_local(&path).unwrap();
        let step = StepProblem::from(p.clone());
        (p, step)
    }

    /// A grasp step (the Jaco's, `data/problems/kinds/jaco_grasp_step.json`: 23 rows on 9
    /// degrees of freedom): projected LM alone ends its budget far from a solution; after the
    /// ADMM start it converges, the ruler accepts its answer, and the counters say how many
    /// ADMM iterations the start took.
    #[test]
    fn the_admm_start_takes_projected_lm_to_a_grasps_solution() {
        use contactlab_core::drivers::{solve_least_squares, ProjectedLevenbergMarquardt};
        use contactlab_core::plugin::{solve_formulation, Init};
        let (p, step) = jaco_grasp_step();
        let opts = SolveOptions {
            max_iter: 500,
            stop_tol: 1e-8,
            ..SolveOptions::default()
        };
        let run = |f: &NaturalMapFormulation| {
            solve_formulation(f, &step, Init::Zero, &opts, |b: &NaturalMap, x0, o| {
                solve_least_squares(b.clone(), ProjectedLevenbergMarquardt::default(), x0, o)
            })
            .unwrap()
        };
        let plain = run(&NaturalMapFormulation::default());
        assert_ne!(plain.solution.status, Status::Converged);
        assert!(natural_map_residual(&p, &plain.r) > 1e-4);
        assert!(!plain.counters.contains_key("admm_start_iterations"));
        let started = run(&NaturalMapFormulation {
            admm_start_tol: Some(1e-4),
            ..NaturalMapFormulation::default()
        });
        assert_eq!(started.solution.status, Status::Converged);
        assert!(natural_map_residual(&p, &started.r) <= 1e-8);
        assert!(started.solution.iterations <= 10);
        let admm = started.counters["admm_start_iterations"];
        assert!(admm > 0 && admm <= 1000, "{admm}");
        // A bad tolerance is an error naming the option.
        let bad = NaturalMapFormulation {
            admm_start_tol: Some(-1.0),
            ..NaturalMapFormulation::default()
        };
        let e = solve_formulation(&bad, &step, Init::Zero, &opts, |b: &NaturalMap, x0, o| {
            solve_least_squares(b.clone(), ProjectedLevenbergMarquardt::default(), x0, o)
        })
        .unwrap_err();
        assert!(e.to_string().contains("admm_start_tol"), "{e}");
    }

    /// The restarts after an ADMM start: only with the start asked for, only after a failure
    /// that is not a timeout, at most `admm_restarts` times, each from ADMM's own point.
    #[test]
    fn a_failed_driver_restarts_from_a_tighter_admm_phase() {
        let (p, step) = jaco_grasp_step();
        let plain = NaturalMapFormulation::default();
        let started = NaturalMapFormulation {
            admm_start_tol: Some(1e-3),
            admm_restarts: 2,
            ..NaturalMapFormulation::default()
        };
        let built = started.build(&step).unwrap();
        let x0 = vec![0.0; p.q.len()];
        let first = started.first_phase(&built, x0.clone(), None).unwrap();
        let after_first = natural_map_residual(&p, &first);
        assert!(after_first <= 1e-3, "{after_first}");
        let x = vec![0.0; p.q.len()];
        assert!(plain
            .restart(&built, &x, &Status::MaxIterations, 0)
            .is_none());
        assert!(started.restart(&built, &x, &Status::Converged, 0).is_none());
        assert!(started.restart(&built, &x, &Status::Timeout, 0).is_none());
        assert!(started
            .restart(&built, &x, &Status::LocalMinimum, 2)
            .is_none());
        let again = started
            .restart(&built, &x, &Status::LocalMinimum, 0)
            .unwrap();
        let after_second = natural_map_residual(&p, &again);
        assert!(after_second <= 1e-4, "{after_second}");
        let counted = started.counters(&built);
        assert_eq!(counted.len(), 1);
        assert!(counted[0].1 > 0);
        assert!(plain.counters(&built).is_empty());
        // Every attempt but the last gets the attempt budget; without the start, all the
        // solve's.
        assert_eq!(started.attempt_budget(&built, 0, 500), 150);
        assert_eq!(started.attempt_budget(&built, 1, 500), 150);
        assert_eq!(started.attempt_budget(&built, 2, 500), 500);
        assert_eq!(started.attempt_budget(&built, 0, 20), 20);
        assert_eq!(plain.attempt_budget(&built, 0, 500), 500);
    }

    /// One block of each kind: a 3-row equality, a limit, a friction loss, a Coulomb contact,
    /// contacts of condim 4, 1 and 6.
    fn every_kind() -> Vec<Constraint> {
        vec![
            Constraint::Equality { rows: 3 },
            Constraint::Limit,
            Constraint::FrictionLoss { f_max: 0.3 },
            Constraint::coulomb(0.6),
            Constraint::Contact {
                mu: vec![0.9, 0.5, 0.02],
            },
            Constraint::Contact { mu: vec![] },
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.01, 0.001, 0.001],
            },
        ]
    }

    /// Solves `p`'s natural map from zero with Gauss-Newton and with LM; each must converge
    /// and its impulses must read below `1e-8` on the shared ruler (`rho = 1`, every row).
    fn solves_with_gauss_newton_and_lm(p: &LocalProblem, what: &str) -> Vec<Vec<f64>> {
        use contactlab_core::drivers::{solve_least_squares, GaussNewtonLs, LevenbergMarquardt};
        let opts = SolveOptions {
            max_iter: 200,
            stop_tol: 1e-12,
            ..SolveOptions::default()
        };
        let x0 = vec![0.0; p.q.len()];
        let f = NaturalMap::new(p);
        let runs = [
            (
                "gauss-newton",
                solve_least_squares(&f, GaussNewtonLs::default(), x0.clone(), &opts),
            ),
            (
                "lm",
                solve_least_squares(&f, LevenbergMarquardt::default(), x0, &opts),
            ),
        ];
        let mut answers = Vec::new();
        for (driver, run) in runs {
            let s = run.unwrap();
            let u = p.velocity(&s.x);
            let (nm, primal, dual, gap) = p.constraints.ruler(&s.x, &u);
            assert!(
                s.status == Status::Converged && nm < 1e-8 && natural_map_residual(p, &s.x) < 1e-8,
                "{what}, {driver}: {:?} after {} iterations, natural map {nm:e}",
                s.status,
                s.iterations
            );
            assert!(
                primal < 1e-8 && dual < 1e-8 && gap < 1e-8,
                "{what}, {driver}: {primal:e} {dual:e} {gap:e}"
            );
            answers.push(s.x);
        }
        answers
    }

    #[test]
    fn gauss_newton_and_lm_solve_each_kind_alone() {
        let cases: Vec<(&str, Vec<Constraint>, (f64, f64))> = vec![
            (
                "equalities of 1 row",
                vec![Constraint::Equality { rows: 1 }; 3],
                (-1.0, 1.0),
            ),
            (
                "equalities of 3 rows",
                vec![Constraint::Equality { rows: 3 }; 2],
                (-1.0, 1.0),
            ),
            ("limits", vec![Constraint::Limit; 5], (-1.0, 0.5)),
            (
                "frictionless contacts",
                vec![Constraint::Contact { mu: vec![] }; 4],
                (-1.0, 0.5),
            ),
            (
                "contacts of condim 4",
                vec![
                    Constraint::Contact {
                        mu: vec![0.9, 0.5, 0.02]
                    };
                    2
                ],
                (-1.0, 0.5),
            ),
            (
                "contacts of condim 6",
                vec![
                    Constraint::Contact {
                        mu: vec![0.8, 0.6, 0.05, 0.01, 0.02]
                    };
                    2
                ],
                (-1.0, 0.5),
            ),
        ];
        for (what, blocks, q) in cases {
            for seed in 0..3 {
                solves_with_gauss_newton_and_lm(&problem_of(blocks.clone(), q, seed), what);
            }
        }
    }

    /// Friction losses with a small bound against a large drive all slide (`|r| = f_max`,
    /// `u != 0`); with a large bound they all stick (`|r| < f_max`, `u = 0`).
    #[test]
    fn gauss_newton_and_lm_solve_friction_losses_sliding_and_sticking() {
        for (what, f_max, sliding) in [("sliding", 0.01, true), ("sticking", 50.0, false)] {
            for seed in 0..3 {
                let p = problem_of(
                    vec![Constraint::FrictionLoss { f_max }; 4],
                    (-1.0, 1.0),
                    seed,
                );
                for r in solves_with_gauss_newton_and_lm(&p, what) {
                    let u = p.velocity(&r);
                    for (ri, ui) in r.iter().zip(&u) {
                        if sliding {
                            assert!(
                                (ri.abs() - f_max).abs() < 1e-10 && ui.abs() > 1e-6,
                                "{r:?} {u:?}"
                            );
                        } else {
                            assert!(ri.abs() < f_max && ui.abs() < 1e-8, "{r:?} {u:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gauss_newton_and_lm_solve_a_mix_of_every_kind() {
        for seed in 0..5 {
            solves_with_gauss_newton_and_lm(&problem_of(every_kind(), (-1.0, 0.5), seed), "mix");
        }
        // The mixed problem file the CLI and the robustness sweep read.
        let p = every_kind_file();
        solves_with_gauss_newton_and_lm(&p, "every_kind.json");
    }

    /// The generalized Jacobian of the residual on a problem of every kind matches central
    /// differences at random points (away from the kinks: random points hit none).
    #[test]
    fn jacobian_of_every_kind_matches_finite_differences() {
        for seed in 0..20 {
            let p = problem_of(every_kind(), (-1.0, 1.0), 200 + seed);
            let f = NaturalMap::new(&p);
            let n = p.q.len();
            let mut rng = ChaCha8Rng::seed_from_u64(300 + seed);
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            assert_jacobian_is_central_differences(&f, &x, seed);
        }
    }

    /// The projection puts each block in its set: a friction loss in its box, a limit in
    /// `R+`, a cone's impulse in the cone, an equality's untouched.
    #[test]
    fn projection_puts_each_block_in_its_set() {
        let p = problem_of(every_kind(), (-1.0, 1.0), 9);
        let f = NaturalMap::new(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let x0: Vec<f64> = (0..p.q.len())
            .map(|_| rng.random_range(-3.0..3.0))
            .collect();
        let mut x = x0.clone();
        f.project(&mut x);
        for (rows, c) in p.constraints.iter() {
            let (_, primal, _, _) = contactlab_core::Constraints::new(vec![c.clone()])
                .unwrap()
                .ruler(&x[rows.clone()], &vec![0.0; rows.len()]);
            assert!(primal < 1e-12, "{c:?}: {:?}", &x[rows.clone()]);
            if let Constraint::Equality { .. } = c {
                assert_eq!(x[rows.clone()], x0[rows]);
            }
        }
    }

    #[test]
    fn jacobian_matches_finite_differences_away_from_kinks() {
        for seed in 0..20 {
            let p = random_problem(3, seed);
            let f = NaturalMap::new(&p);
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let x: Vec<f64> = (0..9).map(|_| rng.random_range(-1.0..1.0)).collect();
            assert_jacobian_is_central_differences(&f, &x, seed);
        }
    }

    /// `f`'s Jacobian at `x` against central differences of its residual, entry by entry to
    /// `1e-5 (1 + |fd|)`. A kink inside `[x - h, x + h]` would make the difference quotient lie
    /// between two pieces; random points hit one with negligible probability.
    fn assert_jacobian_is_central_differences(f: &NaturalMap, x: &[f64], seed: u64) {
        let n = x.len();
        let mut j = Mat::<f64>::zeros(n, n);
        f.jacobian(x, j.as_mut());
        let h = 1e-7;
        let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
        for k in 0..n {
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[k] += h;
            xm[k] -= h;
            f.residual(&xp, &mut fp);
            f.residual(&xm, &mut fm);
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (fd - j[(i, k)]).abs() < 1e-5 * (1.0 + fd.abs()),
                    "seed {seed} ({i},{k}): fd {fd} vs {}",
                    j[(i, k)]
                );
            }
        }
    }

    #[test]
    fn zero_exactly_at_a_known_solution_and_projection_lands_in_cone() {
        // W = I, q = (-1, 2, 0), mu = 0.5: sliding solution r = (1, -0.5, 0).
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(),
            vec![-1.0, 2.0, 0.0],
            &[0.5],
        );
        let f = NaturalMap::new(&p);
        let mut out = vec![1.0; 3];
        f.residual(&[1.0, -0.5, 0.0], &mut out);
        assert!(out.iter().all(|v| v.abs() < 1e-15), "{out:?}");
        assert!(natural_map_residual(&p, &[1.0, -0.5, 0.0]) < 1e-15);
        let mut x = vec![1.0, 3.0, 4.0];
        f.project(&mut x);
        assert!((x[1].hypot(x[2]) - 0.5 * x[0]).abs() < 1e-14);
    }

    /// `random_problem` with `W` and `q` multiplied by `s`: the same impulses solve it, `F` is
    /// unchanged (`rho_b` scales by `1 / s`), the ruler's velocities grow by `s`.
    fn scaled(p: &LocalProblem, s: f64) -> LocalProblem {
        let n = p.q.len();
        let dense = p.dense_w();
        let w: Vec<f64> = (0..n * n).map(|k| s * dense[(k / n, k % n)]).collect();
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            p.q.iter().map(|q| s * q).collect(),
            p.mu(),
        )
    }

    #[test]
    fn the_stop_measure_is_the_ruler_itself() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let kinds = problem_of(every_kind(), (-1.0, 1.0), 11);
        for p in [
            random_problem(4, 3),
            scaled(&random_problem(4, 3), 1e3),
            kinds,
        ] {
            let nm = NaturalMap::new(&p);
            let x: Vec<f64> = (0..p.q.len())
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let mut f = vec![0.0; p.q.len()];
            nm.residual(&x, &mut f);
            assert_eq!(nm.stop_measure(&x, &f), natural_map_residual(&p, &x));
        }
    }
}
