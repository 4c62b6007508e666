//! SAP's constraint-agnostic cost over every constraint kind (Castro et al., sec. III: any
//! constraint whose impulse lives in a closed convex set `C` and which is regularised by a
//! diagonal `R` enters the primal cost the same way).
//!
//! Per block `b` with rows `J_b`, regularisation `R_b` (diagonal) and bias `v^_b`:
//! `y_b = -R_b^-1 (J_b v + b_b - v^_b)`, the impulse `gamma_b = P^R_C(y_b)` (the projection
//! in `R_b`'s norm), and the block's term of the cost
//!
//! `l_b = |y_b|_R^2 / 2 - dist_R(y_b, C)^2 / 2`,
//!
//! the value of `max_{gamma in C} -gamma'(J_b v + b_b - v^_b) - gamma' R_b gamma / 2`, so that
//! `dl_b / dv = -J_b' gamma_b` and its Hessian is `J_b' G_b J_b` with `G_b = (dP/dy) R_b^-1`.
//! For a cone `C`, Moreau's decomposition makes `l_b = |gamma_b|_R^2 / 2`, eq. 24's term.
//!
//! | kind | `C` | `gamma` | `G` |
//! |---|---|---|---|
//! | equality | `R^m` | `y` | `R^-1` |
//! | limit, `condim` 1 | `R+` | `max(0, y)` | `R^-1` where `y > 0`, else 0 |
//! | friction loss | `[-f, f]` | `clip(y, -f, f)` | `R^-1` where `|y| < f`, else 0 |
//! | contact, `condim` 3, 4, 6 | `K_mu` | `R^-1/2 P_S(R^1/2 y)` | `R^-1/2 dP_S R^-1/2` |
//!
//! **Regularisation** (eqs. 29-30 where the paper has them, our extension otherwise): rows with
//! a position (equality, limit, a contact's normal) take eq. 29 row by row,
//! `R = max(beta^2 / (4 pi^2) w, 1 / (dt k (dt + tau_d)))`, with `w` the row's diagonal of
//! `W = J A^-1 J'` (a contact: `|W_bb|_F / 3` over its normal and sliding rows, the paper's
//! rms), and `v^ = -phi0 / (dt + tau_d)` (Drake's holonomic and limit constraints do the same).
//! A friction loss is dry friction: `R = sigma W_ii` (eq. 30), `v^ = 0`. A contact's sliding
//! rows take eq. 30, `R_t = sigma w`; a row with coefficient `mu_i` takes
//! `R_i = R_t mu_1^2 / mu_i^2`, which makes the cone circular in `R`'s norm (`S`, a
//! second-order cone of slope `mu_1 sqrt(R_t / R_n)`, Castro's `mu~`), so its projection and
//! derivative are closed forms; with equal sliding coefficients this is the paper's
//! `R = diag(R_n, R_t, R_t)`, and on torsional and rolling rows it makes the slip at stiction,
//! measured at the patch scale `mu_i`, the sliding slip (MuJoCo scales its elliptic `R` alike).
//! A row with `mu_i = 0` carries no impulse.
//!
//! This path solves a problem with blocks other than Coulomb contacts (robot states from the
//! MuJoCo bridge) densely: `W`'s diagonal from one Cholesky factor of `A`, the Hessian dense
//! for the driver to factor. Coulomb-only problems keep [`super::cost`]'s sparse, island-aware
//! path.

use contactlab_core::constraint::Constraint;
use contactlab_core::generalized::{sparse_mul_add, sparse_transpose_mul_add};
use contactlab_core::{
    CoreError, GeneralizedProblem, LinePoint, Merit, MeritEval, MeritHessian, Optimality, OwnNewton,
};
use faer::linalg::solvers::Solve;
use faer::{Mat, MatMut, Side};

use super::cost::{diag_inv_sqrt, eq26_optimality};
use super::params::{
    bias, compliant_regularization, near_rigid_regularization, RegularizationParams,
};

/// The most rows a contact block has (`condim` 6).
const MAX_CONTACT_ROWS: usize = 6;

/// A block's impulse set, with what its projection needs.
#[derive(Debug, Clone, PartialEq)]
enum Set {
    /// `R^m`: an equality.
    Free,
    /// `R+`: a limit or a frictionless contact.
    HalfLine,
    /// `[-f, f]`: a friction loss.
    Box(f64),
    /// The contact cone, circular in `R`'s norm with slope `mu~`; `active[i]` marks the
    /// frictional rows with a nonzero coefficient.
    Cone { slope: f64, active: Vec<bool> },
}

/// One block: its first row, its set, and per row `R` and `v^`.
#[derive(Debug, Clone)]
struct Block {
    start: usize,
    set: Set,
    r: Vec<f64>,
}

/// SAP's cost on a generalized problem with blocks of every kind (see the module doc).
#[derive(Debug, Clone)]
pub struct SapBlockCost {
    a: faer::sparse::SparseColMat<usize, f64>,
    j: faer::sparse::SparseColMat<usize, f64>,
    /// The nonzeros of each row of `J`, `(velocity, value)`, made once: the Hessian's `J' G J`
    /// reads them, so that its cost follows the rows' nonzeros and not the velocities (a
    /// humanoid's contact row touches a branch of the tree, not all of it).
    j_rows: Vec<Vec<(usize, f64)>>,
    v_star: Vec<f64>,
    a_v_star: Vec<f64>,
    /// `b - v^` per row: the constant part of `J v + b - v^`.
    offset: Vec<f64>,
    /// `b - t` per row: the row velocities the problem's conditions read on are `J v + b - t`.
    reported: Vec<f64>,
    blocks: Vec<Block>,
    /// `D = diag(A)^-1/2` (eq. 25).
    d: Vec<f64>,
}

/// The second-order cone `|z_f| <= s z_n` (normal first): the projection into `p` and, when
/// `jac` is given, its derivative (row-major `n x n`).
fn project_soc(s: f64, z: &[f64], p: &mut [f64], jac: Option<&mut [f64]>) {
    let n = z.len();
    let t = z[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut jac = jac;
    if let Some(j) = jac.as_deref_mut() {
        j.fill(0.0);
    }
    if t <= s * z[0] {
        p.copy_from_slice(z);
        if let Some(j) = jac {
            (0..n).for_each(|i| j[i * n + i] = 1.0);
        }
        return;
    }
    if s * t <= -z[0] {
        p.fill(0.0);
        return;
    }
    let k = 1.0 / (1.0 + s * s);
    let pn = (z[0] + s * t) * k;
    p[0] = pn;
    for i in 1..n {
        p[i] = s * pn * z[i] / t;
    }
    if let Some(j) = jac {
        j[0] = k;
        for i in 1..n {
            let ni = z[i] / t;
            j[i] = s * k * ni;
            j[i * n] = s * k * ni;
            for c in 1..n {
                let nc = z[c] / t;
                let eye = if i == c { 1.0 } else { 0.0 };
                j[i * n + c] = s * s * k * ni * nc + s * pn / t * (eye - ni * nc);
            }
        }
    }
}

impl Block {
    /// `gamma = P^R_C(y)` into `gamma`, the block's cost term, and (with `g`) `G`, row-major.
    fn project(&self, y: &[f64], gamma: &mut [f64], g: Option<&mut [f64]>) -> f64 {
        let m = y.len();
        let want_g = g.is_some();
        let mut g = g;
        if let Some(g) = g.as_deref_mut() {
            g.fill(0.0);
        }
        let mut set_g = |i: usize, c: usize, v: f64| {
            if let Some(g) = g.as_deref_mut() {
                g[i * m + c] = v;
            }
        };
        match &self.set {
            Set::Free => {
                gamma.copy_from_slice(y);
                (0..m).for_each(|i| set_g(i, i, 1.0 / self.r[i]));
                0.5 * (0..m).map(|i| self.r[i] * y[i] * y[i]).sum::<f64>()
            }
            Set::HalfLine => {
                gamma[0] = y[0].max(0.0);
                if y[0] > 0.0 {
                    set_g(0, 0, 1.0 / self.r[0]);
                }
                0.5 * self.r[0] * gamma[0] * gamma[0]
            }
            Set::Box(f) => {
                gamma[0] = y[0].clamp(-f, *f);
                if y[0].abs() < *f {
                    set_g(0, 0, 1.0 / self.r[0]);
                }
                let excess = y[0] - gamma[0];
                0.5 * self.r[0] * (y[0] * y[0] - excess * excess)
            }
            Set::Cone { slope, active } => {
                // The rows in S's coordinates `z = R^1/2 y`, the inactive ones left out; on
                // the stack, as a contact has at most `MAX_CONTACT_ROWS` (the cost refuses
                // larger ones).
                let mut rows = [0usize; MAX_CONTACT_ROWS];
                let mut k = 0;
                for i in (0..m).filter(|&i| i == 0 || active[i - 1]) {
                    rows[k] = i;
                    k += 1;
                }
                let rows = &rows[..k];
                let (mut sq, mut z) = ([0.0; MAX_CONTACT_ROWS], [0.0; MAX_CONTACT_ROWS]);
                for (a, &i) in rows.iter().enumerate() {
                    sq[a] = self.r[i].sqrt();
                    z[a] = sq[a] * y[i];
                }
                let mut p = [0.0; MAX_CONTACT_ROWS];
                let mut dp = [0.0; MAX_CONTACT_ROWS * MAX_CONTACT_ROWS];
                project_soc(
                    *slope,
                    &z[..k],
                    &mut p[..k],
                    want_g.then_some(&mut dp[..k * k]),
                );
                gamma.fill(0.0);
                for (a, &i) in rows.iter().enumerate() {
                    gamma[i] = p[a] / sq[a];
                    for (c, &jc) in rows.iter().enumerate() {
                        set_g(i, jc, dp[a * k + c] / (sq[a] * sq[c]));
                    }
                }
                0.5 * p[..k].iter().map(|x| x * x).sum::<f64>()
            }
        }
    }
}

/// Per block of `g`: its set, the kind's compliance and position error in order.
fn blocks_of(g: &GeneralizedProblem) -> Vec<(Constraint, Vec<f64>, f64, f64)> {
    let contacts = g.contacts.iter().map(|c| {
        (
            Constraint::coulomb(c.mu),
            vec![c.phi0, 0.0, 0.0],
            c.stiffness,
            c.dissipation,
        )
    });
    let others = g.others.iter().map(|o| {
        (
            o.constraint.clone(),
            o.phi0.clone(),
            o.stiffness,
            o.dissipation,
        )
    });
    contacts.chain(others).collect()
}

/// `W = J A^-1 J'` from `J` dense (`j`; robot-sized problems: one Cholesky factor of `A`): the
/// Delassus estimates of eqs. 29-30 read their rows and blocks from it.
fn delassus(g: &GeneralizedProblem, j: &Mat<f64>) -> Result<Mat<f64>, CoreError> {
    let llt = g.a.to_dense().llt(Side::Lower).map_err(|e| {
        CoreError::LinearAlgebra(format!("SAP: A is not positive definite ({e:?})"))
    })?;
    Ok(j * llt.solve(j.transpose()))
}

/// A block's set and per-row `R` (the module doc): `rigid_r(w)` is eq. 29 for a row of
/// Delassus estimate `w`, `start` the block's first row in `W`.
fn set_and_regularization(
    c: &Constraint,
    w: &Mat<f64>,
    start: usize,
    params: &RegularizationParams,
    rigid_r: impl Fn(f64) -> f64,
) -> (Set, Vec<f64>) {
    let m = c.rows();
    let w_diag = |k: usize| w[(start + k, start + k)];
    match c {
        Constraint::Equality { .. } => (Set::Free, (0..m).map(|k| rigid_r(w_diag(k))).collect()),
        Constraint::Limit => (Set::HalfLine, vec![rigid_r(w_diag(0))]),
        Constraint::FrictionLoss { f_max } => (Set::Box(*f_max), vec![params.sigma * w_diag(0)]),
        Constraint::Contact { mu } if mu.is_empty() => (Set::HalfLine, vec![rigid_r(w_diag(0))]),
        Constraint::Contact { mu } => {
            // The paper's rms over the normal and sliding rows (units of one velocity).
            let t = 3.min(m);
            let frob = (0..t)
                .flat_map(|a| (0..t).map(move |b| (a, b)))
                .map(|(a, b)| w[(start + a, start + b)].powi(2))
                .sum::<f64>()
                .sqrt();
            let wb = frob / t as f64;
            let (rn, rt) = (rigid_r(wb), params.sigma * wb);
            let mu1 = mu.iter().copied().find(|&x| x > 0.0).unwrap_or(0.0);
            let mut r = vec![rn];
            r.extend(mu.iter().map(|&mi| {
                if mi > 0.0 {
                    rt * (mu1 / mi).powi(2)
                } else {
                    rt
                }
            }));
            let active = mu.iter().map(|&mi| mi > 0.0).collect();
            let slope = mu1 * (rt / rn).sqrt();
            (Set::Cone { slope, active }, r)
        }
    }
}

impl SapBlockCost {
    /// The cost of `g` with `params` (`beta`, `sigma`); the error names what cannot be
    /// regularised (a block with a position error but no time step).
    pub fn new(g: &GeneralizedProblem, params: &RegularizationParams) -> Result<Self, CoreError> {
        let j_dense = g.j.to_dense();
        let w = delassus(g, &j_dense)?;
        let mut offset = g.b.clone();
        let mut blocks = Vec::new();
        let mut start = 0;
        for (i, (c, phi0, k, tau_d)) in blocks_of(g).into_iter().enumerate() {
            let m = c.rows();
            let name = |why: String| {
                CoreError::Unsupported(format!("SAP: block {i} ({}) {why}", c.kind()))
            };
            if matches!(c, Constraint::Contact { .. }) && m > MAX_CONTACT_ROWS {
                return Err(name(format!(
                    "has {m} rows: a contact has at most {MAX_CONTACT_ROWS} (condim 6)"
                )));
            }
            let compliant = compliant_regularization(g.dt, k, tau_d).map_err(name)?;
            // Eq. 29 for a row of Delassus estimate `wi`.
            let rigid_r = |wi: f64| near_rigid_regularization(wi, params).max(compliant);
            let (set, r) = set_and_regularization(&c, &w, start, params, rigid_r);
            if let Some(row) = r.iter().position(|x: &f64| !(*x > 0.0 && x.is_finite())) {
                return Err(CoreError::Unsupported(format!(
                    "SAP: block {i} ({}) row {row} has no positive regularisation (W's diagonal \
                     is {}): a row that no velocity moves",
                    c.kind(),
                    w[(start + row, start + row)]
                )));
            }
            // Rows with a position: an equality's, a limit's and a contact's normal.
            let positioned = match &c {
                Constraint::Equality { .. } => m,
                Constraint::FrictionLoss { .. } => 0,
                _ => 1,
            };
            for k in 0..positioned {
                offset[start + k] -= bias(phi0[k], g.dt, tau_d).map_err(name)?;
            }
            blocks.push(Block { start, set, r });
            start += m;
        }
        let mut a_v_star = vec![0.0; g.num_dofs()];
        sparse_mul_add(&g.a, &g.v_star, &mut a_v_star);
        let d = diag_inv_sqrt(&g.a);
        let reported = match g.target.is_empty() {
            true => g.b.clone(),
            false => g.b.iter().zip(&g.target).map(|(b, t)| b - t).collect(),
        };
        let j_rows = (0..j_dense.nrows())
            .map(|i| {
                (0..j_dense.ncols())
                    .filter(|&c| j_dense[(i, c)] != 0.0)
                    .map(|c| (c, j_dense[(i, c)]))
                    .collect()
            })
            .collect();
        Ok(SapBlockCost {
            a: g.a.clone(),
            j: g.j.clone(),
            j_rows,
            v_star: g.v_star.clone(),
            a_v_star,
            offset,
            reported,
            blocks,
            d,
        })
    }

    /// The unknowns' `v*` (every velocity).
    pub fn v_star(&self) -> &[f64] {
        &self.v_star
    }

    /// `J v + c` for a per-row constant `c`.
    fn rows_at(&self, v: &[f64], c: &[f64]) -> Vec<f64> {
        let mut z = c.to_vec();
        sparse_mul_add(&self.j, v, &mut z);
        z
    }

    /// The impulses `gamma(v)`, the regularisation's part of the cost, and (with `hessian`)
    /// each block's `G`, row-major, one after the other in block order ([`Self::g_blocks`]).
    fn impulses_at(&self, v: &[f64], hessian: bool) -> (Vec<f64>, f64, Vec<f64>) {
        let z = self.rows_at(v, &self.offset);
        let mut gamma = vec![0.0; z.len()];
        let mut cost = 0.0;
        let mut gs = Vec::new();
        let mut y = Vec::new();
        for b in &self.blocks {
            let m = b.r.len();
            y.clear();
            y.extend((0..m).map(|k| -z[b.start + k] / b.r[k]));
            let at = gs.len();
            if hessian {
                gs.resize(at + m * m, 0.0);
            }
            let out = &mut gamma[b.start..b.start + m];
            cost += b.project(&y, out, hessian.then_some(&mut gs[at..]));
        }
        (gamma, cost, gs)
    }

    /// Each block beside its `G` in `gs` as [`Self::impulses_at`] lays them out.
    fn g_blocks<'a>(&'a self, gs: &'a [f64]) -> impl Iterator<Item = (&'a Block, &'a [f64])> {
        self.blocks.iter().scan(0, move |at, b| {
            let m = b.r.len();
            *at += m * m;
            Some((b, &gs[*at - m * m..*at]))
        })
    }

    /// The impulses at `v` (SAP's Theorem 1: `gamma = P(y(v))`).
    pub fn impulses(&self, v: &[f64]) -> Vec<f64> {
        self.impulses_at(v, false).0
    }

    /// The row velocities the problem's conditions read on, `J v + b - t`.
    pub fn contact_velocities(&self, v: &[f64]) -> Vec<f64> {
        self.rows_at(v, &self.reported)
    }

    /// `(v - v*)' A (v - v*) / 2` from `ae = A (v - v*)`.
    fn half_quadratic(&self, v: &[f64], ae: &[f64]) -> f64 {
        let quad: f64 = v
            .iter()
            .zip(&self.v_star)
            .zip(ae)
            .map(|((a, b), c)| (a - b) * c)
            .sum();
        0.5 * quad
    }

    /// `A (v - v*)`.
    fn a_e(&self, v: &[f64]) -> Vec<f64> {
        let e: Vec<f64> = v.iter().zip(&self.v_star).map(|(a, b)| a - b).collect();
        let mut ae = vec![0.0; e.len()];
        sparse_mul_add(&self.a, &e, &mut ae);
        ae
    }
}

impl Merit for SapBlockCost {
    fn dim(&self) -> usize {
        self.v_star.len()
    }

    fn value(&self, x: &[f64]) -> f64 {
        self.half_quadratic(x, &self.a_e(x)) + self.impulses_at(x, false).1
    }

    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        g.copy_from_slice(&self.a_e(x));
        let gamma = self.impulses(x);
        let neg: Vec<f64> = gamma.iter().map(|v| -v).collect();
        sparse_transpose_mul_add(&self.j, &neg, g);
    }

    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        let n = self.dim();
        let (_, _, gs) = self.impulses_at(x, true);
        h.fill(0.0);
        let (cols, rows, vals) = (
            self.a.symbolic().col_ptr(),
            self.a.symbolic().row_idx(),
            self.a.val(),
        );
        for c in 0..n {
            for e in cols[c]..cols[c + 1] {
                h[(rows[e], c)] += vals[e];
            }
        }
        // J' G J block by block, over the nonzeros of J's rows only.
        for (b, g) in self.g_blocks(&gs) {
            let m = b.r.len();
            for (p, q) in (0..m).flat_map(|p| (0..m).map(move |q| (p, q))) {
                let gpq = g[p * m + q];
                if gpq == 0.0 {
                    continue;
                }
                for &(c, jq) in &self.j_rows[b.start + q] {
                    for &(r, jp) in &self.j_rows[b.start + p] {
                        h[(r, c)] += jp * gpq * jq;
                    }
                }
            }
        }
    }

    /// The value and gradient from one `A (v - v*)` and one projection of every block (the
    /// trait's default makes each twice); the Hessian, when asked, as [`Merit::hessian`].
    fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        let ae = self.a_e(x);
        let (gamma, cost, _) = self.impulses_at(x, false);
        let value = self.half_quadratic(x, &ae) + cost;
        let mut gradient = ae;
        let neg: Vec<f64> = gamma.iter().map(|v| -v).collect();
        sparse_transpose_mul_add(&self.j, &neg, &mut gradient);
        let hessian = hessian.then(|| MeritHessian::dense_of(self, x));
        MeritEval {
            value,
            gradient,
            hessian,
        }
    }

    /// Section IV-C's line without forming the Hessian: at `v = x + alpha dx`, the quadratic
    /// part reads `A (v - v*)` and `A dx`, and each block `gamma_b` and `G_b` on its rows of
    /// `J dx`: `dl/dalpha = dx' A (v - v*) - gamma' J dx` and
    /// `d2l/dalpha2 = dx' A dx + sum_b (J_b dx)' G_b (J_b dx)`.
    fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let v: Vec<f64> = x.iter().zip(dx).map(|(a, d)| a + alpha * d).collect();
        let ae = self.a_e(&v);
        let mut a_dx = vec![0.0; dx.len()];
        sparse_mul_add(&self.a, dx, &mut a_dx);
        let mut j_dx = vec![0.0; self.offset.len()];
        sparse_mul_add(&self.j, dx, &mut j_dx);
        let (gamma, cost, gs) = self.impulses_at(&v, true);
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let blocks_curvature: f64 = self
            .g_blocks(&gs)
            .map(|(b, g)| {
                let m = b.r.len();
                let w = &j_dx[b.start..b.start + m];
                (0..m)
                    .map(|p| w[p] * (0..m).map(|q| g[p * m + q] * w[q]).sum::<f64>())
                    .sum::<f64>()
            })
            .sum();
        LinePoint {
            value: self.half_quadratic(&v, &ae) + cost,
            slope: dot(dx, &ae) - dot(&gamma, &j_dx),
            curvature: dot(dx, &a_dx) + blocks_curvature,
        }
    }

    /// SAP's own Newton system, scaled by `diag(H)^-1/2` before its Cholesky factor: robot
    /// models mix masses many decades apart (Fetch's base moves 2e8 kg against 1e-3 kg
    /// fingers), which a pivot test relative to the largest diagonal entry reads as singular;
    /// `H` is positive definite by construction (`A` is, `G` is semidefinite).
    fn newton_direction(&self, x: &[f64], g: &[f64], d: &mut [f64]) -> OwnNewton {
        let n = self.dim();
        let mut h = Mat::<f64>::zeros(n, n);
        self.hessian(x, h.as_mut());
        let s: Vec<f64> = (0..n).map(|i| 1.0 / h[(i, i)].sqrt()).collect();
        let scaled = Mat::from_fn(n, n, |i, j| s[i] * h[(i, j)] * s[j]);
        let Ok(llt) = scaled.llt(Side::Lower) else {
            return OwnNewton::NotPositiveDefinite;
        };
        let rhs = Mat::from_fn(n, 1, |i, _| -s[i] * g[i]);
        let y = llt.solve(&rhs);
        for i in 0..n {
            d[i] = s[i] * y[(i, 0)];
        }
        if d.iter().all(|v| v.is_finite()) {
            OwnNewton::Solved { analysed: false }
        } else {
            OwnNewton::NotPositiveDefinite
        }
    }

    /// Eq. 26's measure: `|D grad|` against `max(|D p|, |D j_c|)`.
    fn optimality(&self, x: &[f64], g: &[f64]) -> Optimality {
        eq26_optimality(&self.d, &self.a_v_star, &self.a_e(x), g)
    }
}

#[cfg(test)]
#[path = "blocks_tests.rs"]
mod tests;
