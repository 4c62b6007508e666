//! The MLCP with a polyhedral friction cone (Mylapilli and Jain 2014, eqs. 14-22) as the
//! Fischer-Burmeister equations `phi(z) = 0` (eqs. 23-25 and the MCP variant after eq. 25).
//!
//! Unknowns, in the paper's order (eq. 22): `z = [p_b; beta_; sigma]` with `p_b` the
//! equality rows, `beta_ = col{[F_n(i), beta_1(i) .. beta_nf(i)]}` (eq. 15, block-major) and
//! `sigma = col{sigma(i)}`, size `n_b + n_u (n_f + 2)` on the paper's contacts (the other
//! kinds' columns and slip rates: [`super`]'s module doc). The affine map `f(z) = M z + q_` has
//!
//! ```text
//!      [ W_bb        W_bu D_       0  ]         [ q_b    ]
//! M =  [ D_' W_bu'   D_' W D_      E^ ],  q_ =  [ D_' q  ]
//!      [ 0           E-            0  ]         [ 0      ]
//! ```
//!
//! (eq. 22 with `X Lambda X'` written in contact space), `D_ = diag{[e_n, d_1 .. d_nf]}`,
//! `E^(i) = [0, 1 .. 1]'`, `E-(i) = [mu_i, -1 .. -1]` (eq. 17), and on a friction loss's slip
//! row the constant `f_max` in `q_`. The first `n_b` rows are
//! equalities (`l = -inf, u = +inf`: `phi_i = -f_i`), the others complementarities
//! (`l = 0, u = inf`: `phi_i = phi_FB(z_i, f_i)`, eq. 24).
//!
//! Jacobian (the paper's, section "Casting the MLCP as an optimization problem"): with
//! `rho = sqrt(z_i^2 + f_i^2)`, a complementarity row is `(z_i/rho - 1) e_i' + (f_i/rho - 1) M_i`;
//! an equality row is `-M_i`. On the kink `z_i = f_i = 0` see [`KinkRule`].

use contactlab_core::{Constraint, LocalProblem, ProjectedResidual, Residual};
use faer::{Mat, MatMut, MatRef};
use nalgebra::Vector3;

use super::directions::Directions;
use super::error::MylapilliError;
use super::pyramids::{self, Pyramid};
use super::system::DenseSystem;

mod sensitivity;
pub use sensitivity::mlcp_sensitivity;

/// The Fischer-Burmeister function `phi(a, b) = sqrt(a^2 + b^2) - a - b` (eq. 24), zero exactly
/// when `a >= 0`, `b >= 0`, `a b = 0` (eq. 23).
///
/// Evaluated as `-2 a b / (sqrt(a^2 + b^2) + a + b)` when `a + b > 0` (the same function,
/// rationalized): the printed form cancels there and loses the small value `phi ~ -min(a, b)`
/// to rounding of the large one, which would keep `psi` from reaching the paper's `1e-30`.
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    let rho = a.hypot(b);
    if a + b > 0.0 {
        -2.0 * a * b / (rho + a + b)
    } else {
        rho - a - b
    }
}

/// The gradient `(d phi / d a, d phi / d b) = (a / rho - 1, b / rho - 1)` of
/// [`fischer_burmeister`], or `None` at its only kink `a = b = 0`.
pub fn fischer_burmeister_gradient(a: f64, b: f64) -> Option<(f64, f64)> {
    let rho = a.hypot(b);
    (rho > 0.0).then(|| (a / rho - 1.0, b / rho - 1.0))
}

/// Which Jacobian row a complementarity row gets on the kink `z_i = f_i(z) = 0`.
///
/// The generalized (Clarke) Jacobian of row `i` there is
/// `{(xi - 1) e_i' + (zeta - 1) M_i : xi^2 + zeta^2 <= 1}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KinkRule {
    /// `(xi, zeta) = (1, M_ii) / sqrt(1 + M_ii^2)`: the limit of the Jacobian along `e_i`
    /// (so an element of the B-subdifferential, the choice of De Luca, Facchinei and Kanzow).
    /// Its diagonal entry is the paper's, `sqrt(1 + M_ii^2) - 1 - M_ii`; its off-diagonal
    /// entries are `(M_ii / sqrt(1 + M_ii^2) - 1) M_ij`.
    #[default]
    DirectionalLimit,
    /// The paper's printed values: diagonal `sqrt(1 + M_ii^2) - 1 - M_ii`, off-diagonal `0`.
    /// This row is *not* in the generalized Jacobian when row `i` of `M` has a non-zero
    /// off-diagonal entry (which every row of this MLCP has); kept to reproduce the paper
    /// literally.
    PaperPrinted,
}

/// The Fischer-Burmeister residual of Mylapilli and Jain's MLCP (eq. 22, eq. 24).
///
/// Constructors validate their input and return errors; the accessors taking `z` expect
/// [`MlcpFb::size`] entries and panic on a shorter slice, as the [`Residual`] methods do.
#[derive(Debug, Clone)]
pub struct MlcpFb {
    sys: DenseSystem,
    dirs: Directions,
    /// Each non-equality block's `D_(b)` and slip rate.
    pyramids: Vec<Pyramid>,
    /// `n_b` plus the length of `beta_`: the first `sigma` in `z`.
    first_sigma: usize,
    /// The MLCP matrix `M` (eq. 22).
    m: Mat<f64>,
    /// The MLCP vector `q_` (eq. 22).
    qv: Vec<f64>,
    kink: KinkRule,
}

/// `sum_k a_k b_k`, summed from the first term on in index order (the order of the paper's
/// 3-vector products, so the Coulomb contact's entries are today's to the bit).
fn dot(a: impl Iterator<Item = f64>, b: impl Iterator<Item = f64>) -> f64 {
    let mut terms = a.zip(b).map(|(x, y)| x * y);
    let first = terms.next().unwrap_or(0.0);
    terms.fold(first, |s, t| s + t)
}

impl MlcpFb {
    /// The MLCP of a local problem: every block of it, the equality rows as the paper's
    /// bilateral rows (first in `z`), `dirs` giving the friction directions of each contact
    /// block, in the problem's order.
    pub fn new(problem: &LocalProblem, dirs: Directions) -> Result<MlcpFb, MylapilliError> {
        let sys = DenseSystem::new(problem)?;
        let expected = pyramids::num_contacts(&sys.blocks);
        if dirs.num_contacts() != expected {
            return Err(MylapilliError::DirectionCount {
                expected,
                found: dirs.num_contacts(),
            });
        }
        let pyramids = pyramids::layout(&sys.blocks, &dirs, sys.n_b);
        let first_sigma = sys.n_b + pyramids.iter().map(Pyramid::num_cols).sum::<usize>();
        let n = first_sigma + pyramids.iter().filter(|p| p.sigma.is_some()).count();
        let mut mlcp = MlcpFb {
            sys,
            dirs,
            pyramids,
            first_sigma,
            m: Mat::zeros(n, n),
            qv: vec![0.0; n],
            kink: KinkRule::default(),
        };
        mlcp.fill_equality_rows();
        mlcp.fill_pyramid_rows();
        mlcp.fill_slip_rows();
        Ok(mlcp)
    }

    /// `W_bb`, `q_b`, and `W_bu D_` with its transpose (eq. 22, first row and column).
    fn fill_equality_rows(&mut self) {
        let s = &self.sys;
        for k in 0..s.n_b {
            for l in 0..s.n_b {
                self.m[(k, l)] = s.w_bb[(k, l)];
            }
            self.qv[k] = s.q_b[k];
            for p in &self.pyramids {
                for c in 0..p.num_cols() {
                    let wk = p.rows.clone().map(|j| s.w_bu[(k, j)]);
                    let v = dot(wk, p.col(c).iter().copied());
                    self.m[(k, p.start + c)] = v;
                    self.m[(p.start + c, k)] = v;
                }
            }
        }
    }

    /// `D_' W D_` and `D_' q` (eq. 22, second row), block pair by block pair.
    fn fill_pyramid_rows(&mut self) {
        let s = &self.sys;
        for a in &self.pyramids {
            let qa = &s.q[a.rows.clone()];
            for c in 0..a.num_cols() {
                self.qv[a.start + c] = dot(a.col(c).iter().copied(), qa.iter().copied());
            }
            // A block has at most six rows: `left` lives on the stack.
            let mut left = [0.0; 6];
            for b in &self.pyramids {
                for c in 0..a.num_cols() {
                    // left = W_ab' d_c: the row vector d_c' W_ab, summed over a's rows.
                    for (l, j) in left.iter_mut().zip(b.rows.clone()) {
                        *l = dot(
                            a.rows.clone().map(|i| s.w[(i, j)]),
                            a.col(c).iter().copied(),
                        );
                    }
                    for e in 0..b.num_cols() {
                        self.m[(a.start + c, b.start + e)] =
                            dot(left.iter().copied(), b.col(e).iter().copied());
                    }
                }
            }
        }
    }

    /// `E^`, `E-` and the slip rows' constants (eq. 17-18; `f_max` on a friction loss).
    fn fill_slip_rows(&mut self) {
        for p in &self.pyramids {
            let Some(sig) = &p.sigma else { continue };
            if let Some(cn) = sig.normal {
                self.m[(sig.index, p.start)] = cn;
            }
            for c in p.first_friction..p.num_cols() {
                self.m[(p.start + c, sig.index)] = 1.0;
                self.m[(sig.index, p.start + c)] = -1.0;
            }
            self.qv[sig.index] = sig.bound;
        }
    }

    /// Uses `rule` for the Jacobian rows on the Fischer-Burmeister kink.
    pub fn with_kink_rule(mut self, rule: KinkRule) -> MlcpFb {
        self.kink = rule;
        self
    }

    /// The kink rule in use.
    pub fn kink_rule(&self) -> KinkRule {
        self.kink
    }

    /// The MLCP's size: `n_b` plus every block's columns plus one `sigma` per block with
    /// friction (`n_b + n_u (n_f + 2)` for the paper's contacts, eq. 22).
    pub fn size(&self) -> usize {
        self.qv.len()
    }

    /// Number of bilateral (equality) rows `n_b`.
    pub fn num_bilateral(&self) -> usize {
        self.sys.n_b
    }

    /// Number of contact blocks `n_u`.
    pub fn num_contacts(&self) -> usize {
        self.dirs.num_contacts()
    }

    /// The friction directions.
    pub fn directions(&self) -> &Directions {
        &self.dirs
    }

    /// The MLCP matrix `M` of eq. 22.
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.m.as_ref()
    }

    /// The MLCP vector `q_` of eq. 22.
    pub fn vector(&self) -> &[f64] {
        &self.qv
    }

    /// Whether row (and unknown) `i` is an equality row (a bilateral impulse, free).
    pub fn is_equality(&self, i: usize) -> bool {
        i < self.sys.n_b
    }

    /// Index in `z` of column `k` of the `b`-th block that is not an equality (on the paper's
    /// problems the contact `b`): `k = 0` is a contact's `F_n`, `k = 1 + j` its direction `j`.
    pub fn beta_index(&self, b: usize, k: usize) -> usize {
        self.pyramids[b].start + k
    }

    /// Index in `z` of the slip rate `sigma` of the `b`-th block that is not an equality;
    /// panics when the block has none (a limit or a frictionless contact).
    pub fn sigma_index(&self, b: usize) -> usize {
        match &self.pyramids[b].sigma {
            Some(s) => s.index,
            None => panic!("block {b} has no slip rate sigma"),
        }
    }

    /// `f(z) = M z + q_`.
    pub fn affine(&self, z: &[f64]) -> Vec<f64> {
        let n = self.size();
        let mut f = self.qv.clone();
        for (j, &zj) in z.iter().enumerate().take(n) {
            if zj != 0.0 {
                for (i, fi) in f.iter_mut().enumerate() {
                    *fi += self.m[(i, j)] * zj;
                }
            }
        }
        f
    }

    /// The bilateral impulses `p_b` in `z`.
    pub fn bilateral_impulse<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[..self.sys.n_b]
    }

    /// The stacked pyramid impulses `beta_` in `z`.
    pub fn pyramid<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[self.sys.n_b..self.first_sigma]
    }

    /// The slip multipliers `sigma` in `z`.
    pub fn slip_rates<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[self.first_sigma..]
    }

    /// The impulses `r_b = D_(b) beta_(b)` (eq. 19) of the non-equality rows, in their order.
    fn other_impulse(&self, z: &[f64]) -> Vec<f64> {
        let mut r = vec![0.0; self.sys.other_rows()];
        for p in &self.pyramids {
            let beta = &z[p.start..p.start + p.num_cols()];
            p.impulse_into(beta, &mut r[p.rows.clone()]);
        }
        r
    }

    /// The impulse of every row of the problem, in its row order: `p_b` on the equality rows,
    /// `r = D_ beta_` (eq. 19) on the others; for the shared metrics.
    pub fn impulse(&self, z: &[f64]) -> Vec<f64> {
        self.sys
            .scatter(self.bilateral_impulse(z), &self.other_impulse(z))
    }

    /// The velocity of the non-equality rows, `u = W_bu' p_b + W r + q` at `z` (`v_u^+`,
    /// eq. 21), in their order (the contacts' rows on the paper's problems).
    pub fn contact_velocity(&self, z: &[f64]) -> Vec<f64> {
        self.sys
            .contact_velocity(self.bilateral_impulse(z), &self.other_impulse(z))
    }

    /// The bilateral rows' velocity `u_b = W_bb p_b + W_bu r + q_b` at `z` (zero at a solution).
    pub fn bilateral_velocity(&self, z: &[f64]) -> Vec<f64> {
        self.sys
            .bilateral_velocity(self.bilateral_impulse(z), &self.other_impulse(z))
    }

    /// MLCP unknowns for the impulse `r` of every row (the problem's row order): `p_b` its
    /// equality rows, `beta_` a decomposition of each block's impulse on its columns (see the
    /// module doc of [`super`]) and `sigma_b = max(0, max_j -d_j' u_b)`, the least `sigma`
    /// making every friction row `f >= 0`, at the velocity `r` gives. A warm start, and the
    /// MLCP solution when `r` is one (and `sigma` is unique).
    pub fn unknowns_from_impulse(&self, r: &[f64]) -> Result<Vec<f64>, MylapilliError> {
        self.sys.check_rows("r", r)?;
        let (p_b, ru) = self.sys.gather(r);
        let u = self.sys.contact_velocity(&p_b, &ru);
        let mut z = p_b;
        z.resize(self.size(), 0.0);
        for p in &self.pyramids {
            let beta = self.block_pyramid(p, &ru[p.rows.clone()]);
            z[p.start..p.start + beta.len()].copy_from_slice(&beta);
            if let Some(sig) = &p.sigma {
                let ub = &u[p.rows.clone()];
                z[sig.index] = (p.first_friction..p.num_cols())
                    .map(|k| p.negative_slip(k, ub))
                    .fold(0.0_f64, f64::max);
            }
        }
        Ok(z)
    }

    /// A decomposition `beta_(b) >= 0` of one block's impulse `r_b` on its columns (ours; the
    /// paper needs only `D_ beta_`). Coulomb contact: [`Directions::pyramid_of`]. Scaled polygon:
    /// the same on `(r_t1 / mu_1, r_t2 / mu_2)` (a row with `mu = 0` has no friction to carry).
    /// `+- mu_k e_k` and a friction loss's `+- 1`: the positive and negative parts. Limit and
    /// frictionless contact: `r` itself.
    fn block_pyramid(&self, p: &Pyramid, r: &[f64]) -> Vec<f64> {
        let mut beta = vec![0.0; p.num_cols()];
        let (Some(ci), Constraint::Contact { mu }) = (p.contact, &p.constraint) else {
            split_signs(&p.cols, r, &mut beta);
            return beta;
        };
        if mu.is_empty() {
            beta[0] = r[0];
            return beta;
        }
        let nf = self.dirs.n_f();
        let coulomb = mu.len() == 2 && mu[0] == mu[1];
        let polygon = p.num_cols() > 1 + 2 * mu.iter().skip(2).filter(|&&m| m > 0.0).count();
        let scale = |k: usize| if coulomb { 1.0 } else { mu[k] };
        let unscale = |v: f64, k: usize| if scale(k) > 0.0 { v / scale(k) } else { 0.0 };
        let t = Vector3::new(r[0], unscale(r[1], 0), unscale(r[2], 1));
        let head = self.dirs.pyramid_of(ci, t);
        let used = if polygon { nf + 1 } else { 1 };
        beta[..used].copy_from_slice(&head[..used]);
        let mut col = used;
        for (k, &m) in mu.iter().enumerate().skip(2) {
            if m > 0.0 {
                beta[col] = (r[1 + k] / m).max(0.0);
                beta[col + 1] = (-r[1 + k] / m).max(0.0);
                col += 2;
            }
        }
        beta
    }

    /// Writes Jacobian row `i` (a complementarity row) given `z_i`, `f_i`.
    fn fb_row(&self, i: usize, a: f64, b: f64, out: &mut MatMut<'_, f64>) {
        let n = self.size();
        let (ga, gb) = match fischer_burmeister_gradient(a, b) {
            Some(g) => g,
            None => {
                let mii = self.m[(i, i)];
                let s = mii.hypot(1.0);
                match self.kink {
                    KinkRule::DirectionalLimit => (1.0 / s - 1.0, mii / s - 1.0),
                    KinkRule::PaperPrinted => {
                        for j in 0..n {
                            out[(i, j)] = 0.0;
                        }
                        out[(i, i)] = s - 1.0 - mii;
                        return;
                    }
                }
            }
        };
        for j in 0..n {
            out[(i, j)] = gb * self.m[(i, j)];
        }
        out[(i, i)] += ga;
    }
}

impl Residual for MlcpFb {
    fn num_unknowns(&self) -> usize {
        self.size()
    }

    fn num_residuals(&self) -> usize {
        self.size()
    }

    fn residual(&self, z: &[f64], out: &mut [f64]) {
        let f = self.affine(z);
        for (i, o) in out.iter_mut().enumerate() {
            *o = if self.is_equality(i) {
                -f[i]
            } else {
                fischer_burmeister(z[i], f[i])
            };
        }
    }

    fn jacobian(&self, z: &[f64], mut out: MatMut<'_, f64>) {
        let f = self.affine(z);
        let n = self.size();
        for i in 0..n {
            if self.is_equality(i) {
                for j in 0..n {
                    out[(i, j)] = -self.m[(i, j)];
                }
            } else {
                self.fb_row(i, z[i], f[i], &mut out);
            }
        }
    }
}

impl ProjectedResidual for MlcpFb {
    /// Projects onto `X = R^{n_b} x R_+^{n_u (n_f + 2)}`: the box of the MCP (`l = 0, u = inf`
    /// for `beta_` and `sigma`, free `p_b`), the set Kanzow and Petra's PLM keeps iterates in.
    fn project(&self, z: &mut [f64]) {
        for v in z.iter_mut().skip(self.sys.n_b) {
            *v = v.max(0.0);
        }
    }
}

/// `beta` of a one-row block: its impulse itself for one column (a limit), its positive and
/// negative parts for the two columns `+1`, `-1` of a friction loss.
fn split_signs(cols: &[f64], r: &[f64], beta: &mut [f64]) {
    if cols.len() == 1 {
        beta[0] = r[0];
    } else {
        beta[0] = r[0].max(0.0);
        beta[1] = (-r[0]).max(0.0);
    }
}
