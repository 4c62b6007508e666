//! The implicit MNCP (Mylapilli and Jain 2014, eqs. 26-35): Todorov's implicit maps per contact
//! plus the bilateral impulses `p_b`, the problem's equality rows gathered first wherever they
//! stand (the split of [`super`]'s module doc). Every other block enters by Todorov's implicit
//! map of its kind ([`crate::todorov::BlockMap`]; the kinds past the Coulomb contact are our
//! extension of his paper, see [`super`]'s module doc).
//!
//! Unknowns `x = [p_b; z(1) .. z(n_u)]`, each `z(i)` normal first here (`[z_n, z_f, z_o]`; the
//! paper's `[z_f, z_o, z_n]`, see [`ImplicitMncp::to_paper_order`]). Per contact (eq. 26, with
//! Todorov's bias `b = 0`): `F_n = max(0, -z_n)`, `s = min(1, mu F_n / |z_t|)`, `F_t = -s z_t`,
//! and `v_u = F_u + z` (eq. 27). The residual (eq. 31/32) is
//!
//! ```text
//! Phi_b = W_bb p_b + W_bu F_u(z) + q_b
//! Phi_u = W_bu' p_b + (W - I) F_u(z) - z + q
//! ```
//!
//! and the Jacobian (eq. 34) `[[W_bb, W_bu F'], [W_bu', (W - I) F' - I]]` with `F' = dF_u/dz`
//! block diagonal (eq. 35). The maps, regions, `dF/dz` blocks and kink crossings are
//! [`crate::todorov`]'s (eq. 35 is Todorov's slip-region derivative written normal last; a test
//! checks the two agree entry by entry).
//!
//! Off the Coulomb path (some non-equality block is not a three-row contact with one `mu`,
//! decided once at build) `z` holds each block's rows, `F_u(z)` is each block's map and `F'`
//! block diagonal with one `rows x rows` block per constraint ([`super::mncp_blocks`]); the
//! formulas above are unchanged.

use contactlab_core::frame;
use contactlab_core::{
    BDerivative, Constraint, Edge, LocalProblem, NonSmoothResidual, ProjectedResidual, Residual,
};
use faer::MatMut;
use nalgebra::{Matrix3, Vector3};

use super::error::MylapilliError;
use super::system::DenseSystem;
use crate::todorov::{self, Region};

/// Mylapilli and Jain's implicit MNCP residual `Phi(p_b, z)` (eq. 32).
///
/// Constructors validate their input and return errors; the accessors taking `x` expect one
/// entry per row of the problem (`n_b + 3 n_u` on Coulomb contacts) and panic on a shorter
/// slice, as the [`Residual`] methods do.
#[derive(Debug, Clone)]
pub struct ImplicitMncp {
    pub(super) sys: DenseSystem,
    /// The friction coefficient of each contact, in the problem's order, on the Coulomb path
    /// (empty off it).
    mu: Vec<f64>,
    /// Whether some non-equality block is not a Coulomb contact: then every block goes through
    /// Todorov's per-kind maps ([`super::mncp_blocks`]), decided once here so that the Coulomb
    /// path keeps its 3-vector code.
    general: bool,
}

impl ImplicitMncp {
    /// The MNCP of a local problem of blocks of any kind in any order: equality rows the
    /// bilateral `p_b`, every other block Todorov's implicit map of its kind (without equality
    /// rows exactly Todorov's eq. 15 with `b = 0`). Fails on an invalid problem (shape,
    /// non-finite entry, a block's bad parameter).
    pub fn new(problem: &LocalProblem) -> Result<ImplicitMncp, MylapilliError> {
        let sys = DenseSystem::new(problem)?;
        let general = sys.blocks.iter().any(|b| !b.constraint.is_coulomb());
        let coulomb_mu = |b: &super::system::OtherBlock| match &b.constraint {
            Constraint::Contact { mu } if !general => Some(mu[0]),
            _ => None,
        };
        let mu = sys.blocks.iter().filter_map(coulomb_mu).collect();
        Ok(ImplicitMncp { sys, mu, general })
    }

    /// The same MNCP taken through the block path (for tests comparing the two paths on
    /// Coulomb problems).
    #[cfg(test)]
    pub(super) fn with_general_path(mut self) -> ImplicitMncp {
        self.general = true;
        self.mu.clear();
        self
    }

    /// Number of bilateral rows `n_b`.
    pub fn num_bilateral(&self) -> usize {
        self.sys.n_b
    }

    /// Number of non-equality blocks `n_u` (the contacts of a Coulomb problem).
    pub fn num_contacts(&self) -> usize {
        self.sys.blocks.len()
    }

    /// Whether the blocks go through Todorov's per-kind maps (some non-equality block is not
    /// a Coulomb contact) rather than the Coulomb path's 3-vectors.
    pub fn is_general(&self) -> bool {
        self.general
    }

    /// Contact `i`'s `z(i)` (normal first) in `x`.
    fn z(&self, x: &[f64], i: usize) -> Vector3<f64> {
        todorov::block(&x[self.sys.n_b..], i)
    }

    /// The bilateral impulses `p_b` in `x`.
    pub fn bilateral_impulse<'x>(&self, x: &'x [f64]) -> &'x [f64] {
        &x[..self.sys.n_b]
    }

    /// The impulses `F_u(z)` of the non-equality rows (eq. 26), normal first, three per
    /// Coulomb contact (each block's rows off the Coulomb path).
    pub fn contact_impulse(&self, x: &[f64]) -> Vec<f64> {
        if self.general {
            return self.block_impulse(&x[self.sys.n_b..]);
        }
        (0..self.mu.len())
            .flat_map(|i| {
                let f = todorov::impulse(self.mu[i], 0.0, self.z(x, i));
                [f[0], f[1], f[2]]
            })
            .collect()
    }

    /// The impulse of every row of the problem, in its row order: `p_b` on the equality rows,
    /// `F_u(z)` (eq. 26) on the contacts'; for the shared metrics.
    pub fn impulse(&self, x: &[f64]) -> Vec<f64> {
        self.sys
            .scatter(self.bilateral_impulse(x), &self.contact_impulse(x))
    }

    /// The contact velocities `v_u = F_u(z) + z` the maps encode (eq. 27); equal to
    /// `W_bu' p_b + W r + q` at a solution.
    pub fn encoded_velocity(&self, x: &[f64]) -> Vec<f64> {
        self.contact_impulse(x)
            .iter()
            .zip(&x[self.sys.n_b..])
            .map(|(f, z)| f + z)
            .collect()
    }

    /// The contact velocity `u = W_bu' p_b + W r + q` at the impulses `x` encodes (eq. 30).
    pub fn contact_velocity(&self, x: &[f64]) -> Vec<f64> {
        self.sys
            .contact_velocity(self.bilateral_impulse(x), &self.contact_impulse(x))
    }

    /// The bilateral rows' velocity `u_b` at `x` (`Phi_b`, zero at a solution).
    pub fn bilateral_velocity(&self, x: &[f64]) -> Vec<f64> {
        self.sys
            .bilateral_velocity(self.bilateral_impulse(x), &self.contact_impulse(x))
    }

    /// The region (break, stick, slip) of every non-equality block at `x`.
    pub fn regions(&self, x: &[f64]) -> Vec<Region> {
        if self.general {
            return self.block_regions(&x[self.sys.n_b..]);
        }
        (0..self.mu.len())
            .map(|i| Region::of(self.mu[i], 0.0, self.z(x, i)))
            .collect()
    }

    /// Unknowns for the impulse `r` of every row (the problem's row order): `p_b` its equality
    /// rows, `z = u - r` per contact (eq. 27) at the velocity `u = W_bu' p_b + W r + q` it
    /// gives (eq. 14 on every kind: `z = v - f`). The MNCP solution when `r` is a solution;
    /// otherwise a warm start.
    pub fn unknowns_from_impulse(&self, r: &[f64]) -> Result<Vec<f64>, MylapilliError> {
        self.sys.check_rows("r", r)?;
        let (p_b, ru) = self.sys.gather(r);
        let u = self.sys.contact_velocity(&p_b, &ru);
        let mut x = p_b;
        x.extend(u.iter().zip(&ru).map(|(ui, ri)| ui - ri));
        Ok(x)
    }

    /// `x` (bilateral impulses first, then each contact's `z`) in the problem's row order: one
    /// number per row, for warm states.
    pub fn to_row_order(&self, x: &[f64]) -> Vec<f64> {
        self.sys.scatter(&x[..self.sys.n_b], &x[self.sys.n_b..])
    }

    /// The inverse of [`ImplicitMncp::to_row_order`].
    pub fn from_row_order(&self, rows: &[f64]) -> Vec<f64> {
        let (mut x, z) = self.sys.gather(rows);
        x.extend(z);
        x
    }

    /// Todorov's sticking start (his section III-F) on the whole system: the impulses that
    /// stop every row, `[p_b; r] = -A^+ [q_b; q]` (pseudoinverse cut at `rcond`), then
    /// `z = -r` per contact (eq. 27 with `v_u = 0`).
    pub fn sticking_start(&self, rcond: f64) -> Vec<f64> {
        let s = &self.sys;
        let (n_b, n) = (s.n_b, s.n_b + s.other_rows());
        let a = faer::Mat::from_fn(n, n, |i, j| match (i < n_b, j < n_b) {
            (true, true) => s.w_bb[(i, j)],
            (true, false) => s.w_bu[(i, j - n_b)],
            (false, true) => s.w_bu[(j, i - n_b)],
            (false, false) => s.w[(i - n_b, j - n_b)],
        });
        let rhs: Vec<f64> = s.q_b.iter().chain(&s.q).map(|v| -v).collect();
        let f = todorov::pseudo_inverse_solve(&a, &rhs, rcond);
        f.iter()
            .enumerate()
            .map(|(i, &v)| if i < n_b { v } else { -v })
            .collect()
    }

    /// `x` in the paper's order: `[p_b; z(i) = [z_f, z_o, z_n]]` (normal last, eq. 26).
    pub fn to_paper_order(&self, x: &[f64]) -> Vec<f64> {
        let mut out = x[..self.sys.n_b].to_vec();
        out.extend(frame::to_normal_last(&x[self.sys.n_b..]));
        out
    }

    /// The inverse of [`ImplicitMncp::to_paper_order`].
    pub fn from_paper_order(&self, z: &[f64]) -> Vec<f64> {
        let mut out = z[..self.sys.n_b].to_vec();
        out.extend(frame::to_normal_first(&z[self.sys.n_b..]));
        out
    }

    /// `dF_u/dz` blocks (eq. 35) of the given regions at `x`.
    fn blocks(&self, x: &[f64], regions: &[Region]) -> Vec<Matrix3<f64>> {
        regions
            .iter()
            .enumerate()
            .map(|(i, reg)| reg.df_dx(self.mu[i], 0.0, self.z(x, i)))
            .collect()
    }

    /// Writes the columns of `p_b` of eq. 34: `[W_bb; W_bu']`.
    pub(super) fn bilateral_columns(&self, out: &mut MatMut<'_, f64>) {
        let s = &self.sys;
        let (n_b, m) = (s.n_b, s.other_rows());
        for l in 0..n_b {
            for k in 0..n_b {
                out[(k, l)] = s.w_bb[(k, l)];
            }
            for i in 0..m {
                out[(n_b + i, l)] = s.w_bu[(l, i)];
            }
        }
    }

    /// Writes eq. 34 for block-diagonal `F'` given by `blocks`.
    fn jacobian_from_blocks(&self, blocks: &[Matrix3<f64>], mut out: MatMut<'_, f64>) {
        let (n_b, n_u) = (self.sys.n_b, self.mu.len());
        let s = &self.sys;
        self.bilateral_columns(&mut out);
        // Columns of z(j): [W_bu F'_j; (W - I) F'_j - I].
        for (j, fb) in blocks.iter().enumerate() {
            for c in 0..3 {
                let col = n_b + 3 * j + c;
                for k in 0..n_b {
                    out[(k, col)] = (0..3).map(|l| s.w_bu[(k, 3 * j + l)] * fb[(l, c)]).sum();
                }
                for i in 0..3 * n_u {
                    let mut v: f64 = (0..3).map(|l| s.w[(i, 3 * j + l)] * fb[(l, c)]).sum();
                    if i / 3 == j {
                        v -= fb[(i % 3, c)];
                    }
                    if i == 3 * j + c {
                        v -= 1.0;
                    }
                    out[(n_b + i, col)] = v;
                }
            }
        }
    }
}

impl Residual for ImplicitMncp {
    fn num_unknowns(&self) -> usize {
        self.sys.n_b + self.sys.other_rows()
    }

    fn num_residuals(&self) -> usize {
        self.sys.n_b + self.sys.other_rows()
    }

    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let n_b = self.sys.n_b;
        let p_b = self.bilateral_impulse(x);
        let f = self.contact_impulse(x);
        // Eq. 31: Phi_b = u_b, Phi_u = u - F - z.
        let ub = self.sys.bilateral_velocity(p_b, &f);
        let u = self.sys.contact_velocity(p_b, &f);
        out[..n_b].copy_from_slice(&ub);
        for (i, o) in out[n_b..].iter_mut().enumerate() {
            *o = u[i] - f[i] - x[n_b + i];
        }
    }

    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
        if self.general {
            let z = &x[self.sys.n_b..];
            let blocks = self.block_df(z, &self.block_regions(z));
            return self.block_jacobian(&blocks, out);
        }
        let blocks = self.blocks(x, &self.regions(x));
        self.jacobian_from_blocks(&blocks, out);
    }
}

impl NonSmoothResidual for ImplicitMncp {
    fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
        let start = out.len();
        let n_b = self.sys.n_b;
        if self.general {
            self.block_kinks(&x[n_b..], &dx[n_b..], out);
        }
        for i in 0..self.mu.len() {
            todorov::contact_crossings(
                self.mu[i],
                0.0,
                self.z(x, i),
                todorov::block(&dx[n_b..], i),
                out,
            );
        }
        out[start..].sort_by(f64::total_cmp);
    }

    fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>) {
        let n_b = self.sys.n_b;
        if self.general {
            let z = &x[n_b..];
            let blocks = self.block_df(z, &self.block_regions_along(z, &dx[n_b..]));
            return self.block_jacobian(&blocks, out);
        }
        let regions: Vec<Region> = (0..self.mu.len())
            .map(|i| {
                todorov::region_along(self.mu[i], 0.0, self.z(x, i), todorov::block(&dx[n_b..], i))
            })
            .collect();
        let blocks = self.blocks(x, &regions);
        self.jacobian_from_blocks(&blocks, out);
    }

    /// Todorov's plane and cone edges of each contact's `z` (with `b = 0`), and off the
    /// Coulomb path each block's edges (a limit's plane, a friction loss's `abs(z) = f_max`,
    /// the elliptic cone), so Todorov's driver mixes Jacobians and restricts steps on the
    /// MNCP as on his own residual.
    fn edges_at(&self, x: &[f64], out: &mut Vec<Edge>) {
        if self.general {
            return self.block_edges_at(x, out);
        }
        let n_b = self.sys.n_b;
        for i in 0..self.mu.len() {
            let (mu, z) = (self.mu[i], self.z(x, i));
            if let Some(kind) = todorov::edge_at(mu, 0.0, z) {
                let d = todorov::edge_normal(kind, mu, 0.0, z);
                out.push(Edge {
                    start: n_b + 3 * i,
                    normal: vec![d[0], d[1], d[2]],
                    curved: kind == todorov::EdgeKind::Cone,
                    tag: i,
                });
            }
        }
    }

    fn project_onto_edge(&self, edge: &Edge, x: &mut [f64]) {
        if self.general {
            return self.block_project_onto_edge(edge, x);
        }
        if edge.curved {
            let i = edge.tag;
            let p = todorov::project_on_cone_edge(self.mu[i], 0.0, self.z(x, i));
            x[edge.columns()].copy_from_slice(p.as_slice());
        }
    }
}

/// Piecewise smooth like Todorov's residual: the one-sided Jacobian is the B-derivative, and
/// Erleben and Ortiz's Newton runs on the dense square system.
impl BDerivative for ImplicitMncp {}

impl ProjectedResidual for ImplicitMncp {
    /// The identity: the MNCP's unknowns are unconstrained (`z` by Todorov's construction,
    /// `p_b` free), and the paper's PLM box states no constraint set.
    fn project(&self, _x: &mut [f64]) {}
}
