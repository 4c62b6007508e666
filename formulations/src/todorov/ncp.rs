//! Todorov 2010's implicit maps `f(x)`, `v(x)` per contact (eqs. 10-14), their regions and
//! edges, and the residual `r(x) = (A - I) f(x) - x + v0` (eq. 15) with its Jacobian: the
//! formulation the module's solver and plugin work on (notation in [`super`]).

use std::sync::OnceLock;

use contactlab_core::blocks::BlockMatrix;
use contactlab_core::constraint::Constraint;
use contactlab_core::dense::resize_zeroed;
use contactlab_core::drivers::kit::gram;
use contactlab_core::residual::slopes_by_derivatives;
use contactlab_core::{
    BDerivative, Constraints, Edge, EdgeMix, LocalProblem, Matrix, NonSmoothResidual,
    NormalEquations, ProblemError, Residual,
};
use faer::{Col, Mat, MatMut};

use super::pseudo_inverse::pseudo_inverse_solve;
use nalgebra::{Matrix3, Vector3};

/// The smooth piece a contact's `x_k` lies in (paper Fig. 1C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// `x_n > b`: the contact separates, `f = 0`, `v = x`.
    Break,
    /// `|x_F| <= mu (b - x_n)`: sticking, `f = b e_n - x`, `v_F = 0`.
    Stick,
    /// Sliding: `f` on the cone boundary opposing `x_F`, `v_n = b`.
    Slip,
}

/// Relative tolerance under which a point counts as lying on an edge: the edge-aware line
/// search lands on crossings computed analytically, so only round-off separates them.
pub(super) const EDGE_TOL: f64 = 1e-12;

/// The contact's impulse `f_k(x_k)` (eqs. 10, 12, 13).
pub fn impulse(mu: f64, b: f64, x: Vector3<f64>) -> Vector3<f64> {
    let f_n = (b - x[0]).max(0.0);
    let t = x[1].hypot(x[2]);
    // s = min(1, mu f_n / |x_F|); with x_F = 0, f_F = 0 whatever s is.
    let s = if t > 0.0 {
        (mu * f_n / t).min(1.0)
    } else {
        1.0
    };
    Vector3::new(f_n, -s * x[1], -s * x[2])
}

/// The contact's velocity `v_k(x_k) = f_k(x_k) + x_k` (eq. 14).
pub fn velocity(mu: f64, b: f64, x: Vector3<f64>) -> Vector3<f64> {
    impulse(mu, b, x) + x
}

impl Region {
    /// The region of the open piece containing `x` (points on an edge get the region the
    /// inequalities below assign; use [`region_along`] to choose by direction).
    pub fn of(mu: f64, b: f64, x: Vector3<f64>) -> Region {
        if x[0] >= b {
            Region::Break
        } else if x[1].hypot(x[2]) <= mu * (b - x[0]) {
            Region::Stick
        } else {
            Region::Slip
        }
    }

    /// `df_k/dx_k` of this region's smooth piece, evaluated at `x` (the piece's formula
    /// continued to `x`, so it is also the one-sided derivative on the piece's boundary).
    pub fn df_dx(self, mu: f64, b: f64, x: Vector3<f64>) -> Matrix3<f64> {
        match self {
            Region::Break => Matrix3::zeros(),
            Region::Stick => -Matrix3::identity(),
            Region::Slip => {
                let t = x[1].hypot(x[2]);
                if t == 0.0 {
                    // Slip with x_F = 0 occurs only at the apex x_n = b, f = 0 around it in
                    // the normal direction; the tangential derivative is unbounded there, and
                    // the stick piece's derivative is the natural element to use.
                    return -Matrix3::identity();
                }
                let f_n = b - x[0];
                let e = [x[1] / t, x[2] / t];
                let mut d = Matrix3::zeros();
                d[(0, 0)] = -1.0;
                for i in 0..2 {
                    d[(1 + i, 0)] = mu * e[i];
                    for j in 0..2 {
                        let delta = if i == j { 1.0 } else { 0.0 };
                        d[(1 + i, 1 + j)] = -mu * f_n * (delta - e[i] * e[j]) / t;
                    }
                }
                d
            }
        }
    }
}

/// The region entered when leaving `x` along `dx` (the limit of `Region::of(x + eps dx)`
/// for `eps -> 0+`), decided from first-order changes of the edge functions so that points
/// lying on an edge get the piece the direction points into.
pub fn region_along(mu: f64, b: f64, x: Vector3<f64>, dx: Vector3<f64>) -> Region {
    let scale = EDGE_TOL * (1.0 + x.amax() + b.abs());
    let p = x[0] - b;
    // Plane x_n = b.
    let break_side = if p.abs() <= scale {
        dx[0] > 0.0 || (dx[0] == 0.0 && p >= 0.0)
    } else {
        p > 0.0
    };
    if break_side {
        return Region::Break;
    }
    // Cone g = mu^2 p^2 - |x_F|^2 >= 0 (with p < 0) is stick; on g = 0 use dg/deps.
    let g = mu * mu * p * p - (x[1] * x[1] + x[2] * x[2]);
    let g_scale = scale * (1.0 + mu * mu) * (1.0 + x.norm());
    let stick = if g.abs() <= g_scale {
        let dg = 2.0 * (mu * mu * p * dx[0] - x[1] * dx[1] - x[2] * dx[2]);
        dg > 0.0 || (dg == 0.0 && g >= 0.0)
    } else {
        g > 0.0
    };
    if stick {
        Region::Stick
    } else {
        Region::Slip
    }
}

/// Parameters `alpha` in `(0, 1]` at which `x + alpha dx` crosses the contact's plane or cone
/// edge (eq. 27 for the cone: `mu^2 (t_1 - b)^2 = t_2^2 + t_3^2` with `t_1 <= b`).
pub fn contact_crossings(mu: f64, b: f64, x: Vector3<f64>, dx: Vector3<f64>, out: &mut Vec<f64>) {
    let p = x[0] - b;
    let in_range = |a: f64| a > 0.0 && a <= 1.0 && a.is_finite();
    if dx[0] != 0.0 {
        let a = -p / dx[0];
        if in_range(a) {
            out.push(a);
        }
    }
    // mu^2 (p + a dp)^2 - |x_F + a d_F|^2 = qa a^2 + qb a + qc.
    let qa = mu * mu * dx[0] * dx[0] - dx[1] * dx[1] - dx[2] * dx[2];
    let qb = 2.0 * (mu * mu * p * dx[0] - x[1] * dx[1] - x[2] * dx[2]);
    let qc = mu * mu * p * p - x[1] * x[1] - x[2] * x[2];
    let mut push_root = |a: f64| {
        if in_range(a) && p + a * dx[0] <= 0.0 {
            out.push(a);
        }
    };
    let lin_scale = qb.abs().max(qc.abs()).max(f64::MIN_POSITIVE);
    if qa.abs() <= 1e-14 * lin_scale {
        if qb != 0.0 {
            push_root(-qc / qb);
        }
    } else {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            // The numerically stable pair of roots.
            let s = disc.sqrt();
            let sign = if qb >= 0.0 { 1.0 } else { -1.0 };
            let q = -0.5 * (qb + sign * s);
            if q != 0.0 {
                push_root(q / qa);
                push_root(qc / q);
            } else {
                push_root(0.0);
            }
        }
    }
}

/// Todorov's residual `D r(x)` over a local problem, `D = I` unless rescaled.
#[derive(Debug, Clone)]
pub struct ImplicitNcp {
    /// `A = K M^-1 K'`, dense.
    pub(super) a: Mat<f64>,
    /// `A` by its nonzero 3x3 blocks, on the Coulomb path when at most [`SPARSE_A`] of them
    /// are nonzero: the products with `A` the residual and the line search take (one or two
    /// per point) then cost the blocks, not `n^2`.
    a_blocks: Option<BlockMatrix>,
    /// `v0`, the velocity without contact impulses.
    pub(super) v0: Vec<f64>,
    /// Friction coefficient per contact (per block: its first coefficient, NaN off contacts).
    mu: Vec<f64>,
    /// Normal bias `b` per contact (eq. 11); per block off the Coulomb path (read by limits and
    /// contacts only).
    pub(super) b: Vec<f64>,
    /// Diagonal of the residual scaling `D` (section V-A); all ones when unscaled.
    pub(super) d: Vec<f64>,
    /// The constraint blocks when some block is not a Coulomb contact (the general path of
    /// [`super::general`]); `None` keeps the Coulomb fast path, decided once at build.
    kinds: Option<Constraints>,
    /// `M = D (A - I)` and `M'M`, formed on first use by [`ImplicitNcp::normal_matrix`]: with
    /// them `J'J` costs O(n^2) per iteration instead of a dense O(n^3) product.
    products: OnceLock<NormalProducts>,
}

/// The largest share of nonzero 3x3 blocks at which `A v` goes by blocks: the block product
/// does about a quarter of faer's dense kernel's flops per second (3x3 blocks, no SIMD across
/// them), so below an eighth it wins with room; a pile's `W` has 5% (110 contacts) to 3.5%
/// (206).
const SPARSE_A: f64 = 0.125;

/// The problem-constant factors of `J'J = F'(M'M)F - F'M'D - DMF + D^2`, `M = D (A - I)`.
#[derive(Debug, Clone)]
pub(super) struct NormalProducts {
    /// `M'M`.
    pub(super) mtm: Mat<f64>,
    /// `D M = D^2 (A - I)`.
    pub(super) dm: Mat<f64>,
    /// On the Coulomb path, the contact pairs `(k, l)`, `k >= l`, where `J'J` can be nonzero
    /// whatever `F'` is: `k = l`, or a nonzero 3x3 block of `M'M` at `(k, l)` or of `DM` at
    /// `(k, l)` or `(l, k)`. Two contacts couple in `A` only through a shared body, and in
    /// `M'M` through a body two contacts away, so on a pile this is a tenth of all pairs or
    /// fewer (5% of `W`'s blocks and 9% of `W^2`'s with 110 contacts). Empty off the Coulomb
    /// path.
    pub(super) pairs: Vec<(usize, usize)>,
    /// Per pair of `pairs`, its blocks of `M'M` and `DM`, copied out once: read from the
    /// dense products every iteration they cost a tenth of a solve in cache misses (three
    /// strided columns each) on a pile of 200 contacts.
    pub(super) pair_blocks: Vec<PairBlocks>,
}

/// The problem-constant blocks one pair `(k, l)` of [`NormalProducts::pairs`] reads.
#[derive(Debug, Clone)]
pub(super) struct PairBlocks {
    /// `(M'M)_kl`.
    mtm: Matrix3<f64>,
    /// `(DM)_kl`.
    dm_kl: Matrix3<f64>,
    /// `(DM)_lk`.
    dm_lk: Matrix3<f64>,
}

/// A contact's `df/dx` block as [`ImplicitNcp::normal_matrix`] multiplies by it: a separating
/// contact's is zero and a sticking one's `-I` (eq. 10, [`Region::df_dx`]), so most of `J'J`'s
/// block products on a pile are a sign or nothing.
#[derive(Debug, Clone, Copy)]
enum Piece<'a> {
    Zero,
    MinusIdentity,
    General(&'a Matrix3<f64>),
}

impl<'a> Piece<'a> {
    fn of(f: &'a Matrix3<f64>) -> Piece<'a> {
        if *f == Matrix3::zeros() {
            Piece::Zero
        } else if *f == -Matrix3::identity() {
            Piece::MinusIdentity
        } else {
            Piece::General(f)
        }
    }

    fn is_zero(self) -> bool {
        matches!(self, Piece::Zero)
    }

    /// `m F`.
    fn right_of(self, m: &Matrix3<f64>) -> Matrix3<f64> {
        match self {
            Piece::Zero => Matrix3::zeros(),
            Piece::MinusIdentity => -m,
            Piece::General(f) => m * f,
        }
    }

    /// `F' m`.
    fn transpose_times(self, m: &Matrix3<f64>) -> Matrix3<f64> {
        match self {
            Piece::Zero => Matrix3::zeros(),
            Piece::MinusIdentity => -m,
            Piece::General(f) => f.transpose() * m,
        }
    }
}

/// The 3x3 block `(k, l)` of a matrix over contacts, read from its columns.
fn block3(m: &Mat<f64>, k: usize, l: usize) -> Matrix3<f64> {
    let col = |j: usize| &m.col_as_slice(3 * l + j)[3 * k..3 * k + 3];
    let (c0, c1, c2) = (col(0), col(1), col(2));
    Matrix3::new(
        c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2],
    )
}

/// [`NormalProducts`] from `A`'s nonzero 3x3 blocks, straight into the pairs' blocks with no
/// dense `n x n` product: `(M'M)_kl = sum_j M_jk' M_jl` over the block rows `j` that hold both
/// `k` and `l` (`M = D (A - I)`), so the cost is the sum of the squared block counts of the rows
/// (about 4,000 3x3 products with 110 contacts) where the dense product costs `n^3`, and
/// `(DM)_kl = D_k^2 (A_kl - I [k = l])`. The dense `M'M` and `DM` are left empty: zeroing and
/// faulting in two `n x n` matrices was a fifth of a one-iteration solve at 618 rows.
fn sparse_products(a: &BlockMatrix, d: &[f64]) -> NormalProducts {
    let nc = a.num_block_rows();
    let pairs = structural_pairs(a);
    let mut index = vec![usize::MAX; nc * nc];
    for (i, &(k, l)) in pairs.iter().enumerate() {
        index[k * nc + l] = i;
    }
    let zero = PairBlocks {
        mtm: Matrix3::zeros(),
        dm_kl: Matrix3::zeros(),
        dm_lk: Matrix3::zeros(),
    };
    let mut blocks = vec![zero; pairs.len()];
    let mut row: Vec<(usize, Matrix3<f64>)> = Vec::new();
    for j in 0..nc {
        let dj = Matrix3::from_diagonal(&block(d, j));
        row.clear();
        row.extend(a.row(j).map(|(b, m)| {
            let m_jb = if b == j { m - Matrix3::identity() } else { *m };
            (b, dj * m_jb)
        }));
        if !row.iter().any(|&(b, _)| b == j) {
            row.push((j, -dj));
        }
        for &(k, mk) in &row {
            // `D_j M_jk`, as the dense `DM` formed it entry by entry.
            let dm = Matrix3::from_fn(|r, c| d[3 * j + r] * mk[(r, c)]);
            // Pair `(j, k)` reads it as its `(DM)_kl`, pair `(k, j)` as its `(DM)_lk` (both
            // on the diagonal).
            if j >= k {
                blocks[index[j * nc + k]].dm_kl = dm;
            }
            if j <= k {
                blocks[index[k * nc + j]].dm_lk = dm;
            }
            for &(l, ml) in row.iter().filter(|&&(l, _)| l <= k) {
                blocks[index[k * nc + l]].mtm += mk.transpose() * ml;
            }
        }
    }
    NormalProducts {
        mtm: Mat::new(),
        dm: Mat::new(),
        pairs,
        pair_blocks: blocks,
    }
}

/// [`NormalProducts::pairs`]: the contact pairs `(k, l)`, `k >= l`, column by column, where
/// `k = l` or a 3x3 block of `mtm` at `(k, l)` or of `dm` at `(k, l)` or `(l, k)` is nonzero.
fn coupled_pairs(mtm: &Mat<f64>, dm: &Mat<f64>) -> Vec<(usize, usize)> {
    let nc = mtm.nrows() / 3;
    let nonzero = |m: &Mat<f64>, k: usize, l: usize| block3(m, k, l) != Matrix3::zeros();
    (0..nc)
        .flat_map(|l| (l..nc).map(move |k| (k, l)))
        .filter(|&(k, l)| k == l || nonzero(mtm, k, l) || nonzero(dm, k, l) || nonzero(dm, l, k))
        .collect()
}

/// [`NormalProducts::pairs`] from `A`'s block pattern alone, in [`coupled_pairs`]' order:
/// `DM` has `A`'s blocks and the diagonal, and `M'M`'s block `(k, l)` can be nonzero only if
/// some block row of `M` holds both `k` and `l` ([`sparse_products`]). A superset of the numerically
/// nonzero pairs (a block that cancels to zero is formed as zeros), found without scanning the
/// dense products' `n^2` entries.
fn structural_pairs(a: &BlockMatrix) -> Vec<(usize, usize)> {
    let nc = a.num_block_rows();
    let mut coupled = vec![false; nc * nc];
    let mut row: Vec<usize> = Vec::new();
    for j in 0..nc {
        row.clear();
        row.extend(a.row(j).map(|(b, _)| b));
        if !row.contains(&j) {
            row.push(j);
        }
        for &k in &row {
            for &l in &row {
                coupled[k * nc + l] = true;
            }
        }
    }
    (0..nc)
        .flat_map(|l| (l..nc).map(move |k| (k, l)))
        .filter(|&(k, l)| coupled[k * nc + l])
        .collect()
}

/// Contact `k`'s three entries of a stacked vector.
pub(crate) fn block(v: &[f64], k: usize) -> Vector3<f64> {
    Vector3::new(v[3 * k], v[3 * k + 1], v[3 * k + 2])
}

impl ImplicitNcp {
    /// The residual of a local problem (`A = W`, `v0 = q`) with bias `b = 0`, over its
    /// constraint blocks of any kind (the Coulomb fast path when every block is a Coulomb
    /// contact).
    pub fn new(problem: &LocalProblem) -> ImplicitNcp {
        let c = &problem.constraints;
        let kinds = (!c.coulomb_only()).then(|| c.clone());
        let a = problem.w.to_dense();
        let nc = c.len() as f64;
        // An island of a split problem comes with its `W` in blocks already: no dense scan.
        let a_blocks = kinds
            .is_none()
            .then(|| match &problem.w {
                Matrix::Blocks(b) => b.clone(),
                _ => BlockMatrix::from_dense(a.as_ref()),
            })
            .filter(|b| b.num_blocks() as f64 <= SPARSE_A * nc * nc);
        ImplicitNcp {
            a,
            a_blocks,
            v0: problem.q.clone(),
            mu: problem.mu().to_vec(),
            b: vec![0.0; c.len()],
            d: vec![1.0; problem.q.len()],
            kinds,
            products: OnceLock::new(),
        }
    }

    /// The same residual with `A` dense, on the Coulomb path (for tests comparing the sparse
    /// products with the dense ones).
    #[cfg(test)]
    pub(super) fn with_dense_a(mut self) -> ImplicitNcp {
        self.a_blocks = None;
        self.products = OnceLock::new();
        self
    }

    /// The same residual taken through the general block path (for tests comparing the two
    /// paths on Coulomb problems).
    #[cfg(test)]
    pub(super) fn with_general_path(mut self) -> ImplicitNcp {
        self.kinds = Some(Constraints::coulomb(&self.mu));
        self
    }

    /// The constraint blocks when some block is not a Coulomb contact (`None` on the Coulomb
    /// path).
    pub fn constraints(&self) -> Option<&Constraints> {
        self.kinds.as_ref()
    }

    /// Sets the normal bias `b` per contact (eq. 11: `v_n >= b`); one finite entry per contact.
    pub fn with_bias(mut self, b: Vec<f64>) -> Result<ImplicitNcp, ProblemError> {
        if b.len() != self.mu.len() {
            return Err(ProblemError::Shape {
                field: "b".into(),
                expected: format!(
                    "{} entries (one per {})",
                    self.mu.len(),
                    if self.kinds.is_some() {
                        "block"
                    } else {
                        "contact"
                    }
                ),
                found: format!("{} entries", b.len()),
            });
        }
        if let Some((index, &value)) = b.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ProblemError::NonFinite {
                field: "b".into(),
                index,
                value,
            });
        }
        self.b = b;
        Ok(self)
    }

    /// Rescales the residual to `D r(x)` with `D_ii = 1 / sum_j |A_ij|` (section V-A: "a
    /// suitable scaling matrix D based on the row-sums of the inverse inertia matrix A").
    /// Rows whose sum vanishes keep `D_ii = 1`.
    pub fn with_row_sum_scaling(mut self) -> ImplicitNcp {
        let n = self.v0.len();
        self.d = (0..n)
            .map(|i| {
                let s: f64 = (0..n).map(|j| self.a[(i, j)].abs()).sum();
                if s > 0.0 && s.is_finite() {
                    1.0 / s
                } else {
                    1.0
                }
            })
            .collect();
        self.products = OnceLock::new();
        self
    }

    /// Number of contacts (of blocks off the Coulomb path).
    pub fn num_contacts(&self) -> usize {
        self.mu.len()
    }

    /// Friction coefficient of contact `k`.
    pub fn mu(&self, k: usize) -> f64 {
        self.mu[k]
    }

    /// Normal bias of contact `k`.
    pub fn bias(&self, k: usize) -> f64 {
        self.b[k]
    }

    /// The impulses `f(x)` of all contacts (blocks).
    pub fn impulses(&self, x: &[f64]) -> Vec<f64> {
        if let Some(c) = &self.kinds {
            return self.general_impulses(c, x);
        }
        let mut f = vec![0.0; x.len()];
        for k in 0..self.num_contacts() {
            let fk = impulse(self.mu[k], self.b[k], block(x, k));
            f[3 * k..3 * k + 3].copy_from_slice(fk.as_slice());
        }
        f
    }

    /// The velocities `v(x) = f(x) + x` of all contacts.
    pub fn velocities(&self, x: &[f64]) -> Vec<f64> {
        self.impulses(x)
            .iter()
            .zip(x)
            .map(|(f, xi)| f + xi)
            .collect()
    }

    /// The region of every contact (block) at `x`.
    pub fn regions(&self, x: &[f64]) -> Vec<Region> {
        if let Some(c) = &self.kinds {
            return self.general_regions(c, x);
        }
        (0..self.num_contacts())
            .map(|k| Region::of(self.mu[k], self.b[k], block(x, k)))
            .collect()
    }

    /// The 3x3 blocks `df_k/dx_k` of the given regions' pieces at `x` (the Coulomb path's).
    pub fn df_dx_blocks(&self, x: &[f64], regions: &[Region]) -> Vec<Matrix3<f64>> {
        regions
            .iter()
            .enumerate()
            .map(|(k, reg)| reg.df_dx(self.mu[k], self.b[k], block(x, k)))
            .collect()
    }

    /// Writes `J = D ((A - I) F' - I)` for block-diagonal `F'` given by `blocks`.
    pub fn jacobian_from_blocks(&self, blocks: &[Matrix3<f64>], mut out: MatMut<'_, f64>) {
        let n = self.v0.len();
        for (k, fb) in blocks.iter().enumerate() {
            for j in 0..3 {
                let col = 3 * k + j;
                for i in 0..n {
                    // ((A - I) F')_{i, col} = sum_l (A - I)_{i, 3k+l} F'_k[l, j].
                    let mut s = 0.0;
                    for l in 0..3 {
                        let a = self.a[(i, 3 * k + l)] - if i == 3 * k + l { 1.0 } else { 0.0 };
                        s += a * fb[(l, j)];
                    }
                    let id = if i == col { 1.0 } else { 0.0 };
                    out[(i, col)] = self.d[i] * (s - id);
                }
            }
        }
    }

    /// `A v`.
    fn a_times(&self, v: &[f64]) -> Vec<f64> {
        self.a_product(v, false)
    }

    /// `A v`, or `A' v` when `transposed`: by blocks when `A` is sparse ([`SPARSE_A`]), else
    /// by faer's dense kernel.
    fn a_product(&self, v: &[f64], transposed: bool) -> Vec<f64> {
        match &self.a_blocks {
            Some(b) => {
                let mut out = vec![0.0; v.len()];
                if transposed {
                    b.mul_transpose_vec(v, &mut out);
                } else {
                    b.mul_vec(v, &mut out);
                }
                out
            }
            None => {
                let vc = Col::from_fn(v.len(), |i| v[i]);
                let av = if transposed {
                    self.a.transpose() * vc
                } else {
                    &self.a * vc
                };
                av.iter().copied().collect()
            }
        }
    }

    /// `(A - I)' D y`: the pull-back of a residual-space vector, from which `J' y` follows block
    /// by block as `F'_k' p_k - D_k y_k`.
    pub fn pullback(&self, y: &[f64]) -> Vec<f64> {
        let n = y.len();
        let dy: Vec<f64> = (0..n).map(|i| y[i] * self.d[i]).collect();
        let atdy = self.a_product(&dy, true);
        (0..n).map(|j| atdy[j] - dy[j]).collect()
    }

    /// `J' y = F' (A - I)' D y - D y`, block by block, without forming `J`.
    pub fn jacobian_transpose_times(&self, blocks: &[Matrix3<f64>], y: &[f64]) -> Vec<f64> {
        self.jacobian_transpose_from_pullback(blocks, &self.pullback(y), y)
    }

    /// `J' y` from an already computed pull-back `p = (A - I)' D y`.
    pub fn jacobian_transpose_from_pullback(
        &self,
        blocks: &[Matrix3<f64>],
        p: &[f64],
        y: &[f64],
    ) -> Vec<f64> {
        let mut out = vec![0.0; y.len()];
        for (k, fb) in blocks.iter().enumerate() {
            let v = fb.transpose() * block(p, k);
            for l in 0..3 {
                out[3 * k + l] = v[l] - self.d[3 * k + l] * y[3 * k + l];
            }
        }
        out
    }

    /// `J dir = D ((A - I) F' dir - dir)` for block-diagonal `F'` given by `blocks`, without
    /// forming `J`.
    pub fn jacobian_times(&self, blocks: &[Matrix3<f64>], dir: &[f64]) -> Vec<f64> {
        let n = dir.len();
        let mut fd = vec![0.0; n];
        for (k, fb) in blocks.iter().enumerate() {
            let v = fb * block(dir, k);
            fd[3 * k..3 * k + 3].copy_from_slice(v.as_slice());
        }
        let afd = self.a_times(&fd);
        (0..n)
            .map(|i| self.d[i] * (afd[i] - fd[i] - dir[i]))
            .collect()
    }

    /// `J'J` for block-diagonal `F'` given by `blocks`, in O(n^2) (fewer on a sparse `A`): with `M = D (A - I)`,
    /// `J = M F' - D`, so `J'J = F''(M'M)F' - (DMF')' - DMF' + D^2`, where the
    /// problem-constant `M'M` and `DM` are formed once (one O(n^3) product per problem). Block
    /// `(k, l)` is `F_k'(M'M)_kl F_l - (DM)_kl F_l - ((DM)_lk F_k)' (+ D_k^2 on the diagonal)`,
    /// formed for `k >= l` and mirrored: `J'J` is symmetric.
    pub fn normal_matrix(&self, blocks: &[Matrix3<f64>]) -> Mat<f64> {
        let mut jtj = Mat::new();
        self.normal_matrix_into(blocks, &mut jtj);
        jtj
    }

    /// [`Self::normal_matrix`] written into `jtj`, resized to `n x n` and reusing its storage
    /// (zeroed first, so its previous entries do not matter): only the pairs of
    /// [`NormalProducts::pairs`] can be nonzero, so only they are formed, which on a pile of a
    /// hundred contacts is a tenth of the blocks.
    pub fn normal_matrix_into(&self, blocks: &[Matrix3<f64>], jtj: &mut Mat<f64>) {
        let n = self.v0.len();
        let pr = self.products();
        let pieces: Vec<Piece> = blocks.iter().map(Piece::of).collect();
        resize_zeroed(jtj, n, n);
        for (&(k, l), blocks) in pr.pairs.iter().zip(&pr.pair_blocks) {
            let (fk, fl) = (pieces[k], pieces[l]);
            if k != l && fk.is_zero() && fl.is_zero() {
                continue;
            }
            let mut b = Matrix3::zeros();
            if !(fk.is_zero() || fl.is_zero()) {
                b += fk.transpose_times(&fl.right_of(&blocks.mtm));
            }
            if !fl.is_zero() {
                b -= fl.right_of(&blocks.dm_kl);
            }
            if !fk.is_zero() {
                b -= fk.right_of(&blocks.dm_lk).transpose();
            }
            if k == l {
                for i in 0..3 {
                    b[(i, i)] += self.d[3 * k + i] * self.d[3 * k + i];
                }
            }
            for j in 0..3 {
                jtj.col_as_slice_mut(3 * l + j)[3 * k..3 * k + 3]
                    .copy_from_slice(b.column(j).as_slice());
                jtj.col_as_slice_mut(3 * k + j)[3 * l..3 * l + 3]
                    .copy_from_slice(b.row(j).transpose().as_slice());
            }
        }
    }

    /// `M'M` and `DM`, formed on first use (`M'M` by blocks when `A` is sparse:
    /// [`sparse_products`]).
    pub(super) fn products(&self) -> &NormalProducts {
        let n = self.v0.len();
        self.products.get_or_init(|| {
            if let Some(a) = &self.a_blocks {
                return sparse_products(a, &self.d);
            }
            let m =
                |i: usize, j: usize| self.d[i] * (self.a[(i, j)] - if i == j { 1.0 } else { 0.0 });
            let mtm = gram(Mat::from_fn(n, n, m).as_ref());
            let dm = Mat::from_fn(n, n, |i, j| self.d[i] * m(i, j));
            let pairs = if self.kinds.is_none() {
                coupled_pairs(&mtm, &dm)
            } else {
                Vec::new()
            };
            let pair_blocks = pairs
                .iter()
                .map(|&(k, l)| PairBlocks {
                    mtm: block3(&mtm, k, l),
                    dm_kl: block3(&dm, k, l),
                    dm_lk: block3(&dm, l, k),
                })
                .collect();
            NormalProducts {
                mtm,
                dm,
                pairs,
                pair_blocks,
            }
        })
    }

    /// The diagonal of the residual scaling `D`.
    pub fn scaling(&self) -> &[f64] {
        &self.d
    }

    /// The edge contact `k` lies on at `x_k`, if any (within round-off of an analytic crossing).
    pub fn edge_of(&self, k: usize, xk: Vector3<f64>) -> Option<EdgeKind> {
        edge_at(self.mu[k], self.b[k], xk)
    }

    /// Section III-F: all contacts sticking, `v = b e_n` per contact (`v = 0` for `b = 0`),
    /// `f = A^+ (v - v0)`, `x = v - f`. The pseudoinverse drops the directions whose pivot is
    /// at most `rcond` times `A`'s largest diagonal ([`pseudo_inverse_solve`]): resting piles
    /// make `A` singular, and without a relative cutoff the impulses blow up along the null
    /// space. Off the Coulomb path every block starts
    /// in its stick region the same way: `v = b` on the normal row of a limit or a contact,
    /// `v = 0` on the rows of an equality, a friction loss and the contacts' friction.
    pub fn sticking_start(&self, rcond: f64) -> Vec<f64> {
        let n = self.v0.len();
        if n == 0 {
            return Vec::new();
        }
        let v: Vec<f64> = match &self.kinds {
            Some(c) => sticking_velocity(c, &self.b),
            None => (0..n)
                .map(|i| if i % 3 == 0 { self.b[i / 3] } else { 0.0 })
                .collect(),
        };
        let rhs: Vec<f64> = v.iter().zip(&self.v0).map(|(vi, v0)| vi - v0).collect();
        let f = pseudo_inverse_solve(&self.a, &rhs, rcond);
        v.iter().zip(&f).map(|(vi, fi)| vi - fi).collect()
    }
}

/// The sticking start's velocity over blocks of any kind: the bias on the normal row of a
/// limit or a contact, 0 elsewhere.
fn sticking_velocity(c: &Constraints, b: &[f64]) -> Vec<f64> {
    let mut v = vec![0.0; c.rows()];
    for (k, (rows, block)) in c.iter().enumerate() {
        if matches!(block, Constraint::Limit | Constraint::Contact { .. }) {
            v[rows.start] = b[k];
        }
    }
    v
}

impl Residual for ImplicitNcp {
    fn num_unknowns(&self) -> usize {
        self.v0.len()
    }

    fn num_residuals(&self) -> usize {
        self.v0.len()
    }

    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let f = self.impulses(x);
        let af = self.a_times(&f);
        for i in 0..x.len() {
            // r = (A - I) f - x + v0 (eq. 15).
            out[i] = self.d[i] * (af[i] - f[i] - x[i] + self.v0[i]);
        }
    }

    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
        if let Some(c) = &self.kinds {
            let f = self.general_df(c, x, &self.general_regions(c, x));
            return self.general_jacobian(&f, out);
        }
        let blocks = self.df_dx_blocks(x, &self.regions(x));
        self.jacobian_from_blocks(&blocks, out);
    }
}

impl ImplicitNcp {
    /// The `df/dx` blocks of the pieces entered along `dx`.
    fn blocks_along(&self, x: &[f64], dx: &[f64]) -> Vec<Matrix3<f64>> {
        let regions: Vec<Region> = (0..self.num_contacts())
            .map(|k| region_along(self.mu[k], self.b[k], block(x, k), block(dx, k)))
            .collect();
        self.df_dx_blocks(x, &regions)
    }

    /// Contact `k`'s `df/dx` block on either side of an edge with normal `d` at `x_k`.
    fn sides(&self, k: usize, x: &[f64], d: Vector3<f64>) -> (Matrix3<f64>, Matrix3<f64>) {
        let (mu, b, xk) = (self.mu[k], self.b[k], block(x, k));
        (
            region_along(mu, b, xk, d).df_dx(mu, b, xk),
            region_along(mu, b, xk, -d).df_dx(mu, b, xk),
        )
    }
}

/// The edge's normal as a 3-vector (its block is one contact).
fn normal3(e: &Edge) -> Vector3<f64> {
    Vector3::new(e.normal[0], e.normal[1], e.normal[2])
}

impl NonSmoothResidual for ImplicitNcp {
    fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
        if let Some(c) = &self.kinds {
            return self.general_kinks(c, x, dx, out);
        }
        let start = out.len();
        for k in 0..self.num_contacts() {
            contact_crossings(self.mu[k], self.b[k], block(x, k), block(dx, k), out);
        }
        out[start..].sort_by(f64::total_cmp);
    }

    fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>) {
        if let Some(c) = &self.kinds {
            return self.general_jacobian(&self.general_df_along(c, x, dx), out);
        }
        let blocks = self.blocks_along(x, dx);
        self.jacobian_from_blocks(&blocks, out);
    }

    /// `J_along dx` block by block, O(n^2) without forming `J`.
    fn derivative_along(&self, x: &[f64], dx: &[f64], out: &mut [f64]) {
        if let Some(c) = &self.kinds {
            let f = self.general_df_along(c, x, dx);
            return out.copy_from_slice(&self.general_jacobian_times(&f, dx));
        }
        let blocks = self.blocks_along(x, dx);
        out.copy_from_slice(&self.jacobian_times(&blocks, dx));
    }

    /// Both slopes from one pull-back `p = (A - I)' D r` (one product with `A` where the two
    /// [`Self::derivative_along`]s take two): `r' J(s d) d = p' F'(s d) d - (D r)' d`, with
    /// `F'(s d)` the pieces entered along `s d`, block by block in O(n).
    fn slopes_through(&self, x: &[f64], f: &[f64], d: &[f64]) -> (f64, f64) {
        if self.kinds.is_some() {
            return slopes_by_derivatives(self, x, f, d);
        }
        let pull = self.pullback(f);
        let (mut before, mut after) = (0.0, 0.0);
        for k in 0..self.num_contacts() {
            let (mu, b, xk, dk) = (self.mu[k], self.b[k], block(x, k), block(d, k));
            let pk = block(&pull, k);
            let drk = block(f, k).component_mul(&block(&self.d, k)).dot(&dk);
            let slope = |side: Vector3<f64>| {
                let fd = region_along(mu, b, xk, side).df_dx(mu, b, xk) * dk;
                pk.dot(&fd) - drk
            };
            after += slope(dk);
            before += slope(-dk);
        }
        (before, after)
    }

    /// The plane `x_n = b` and the cone `mu (b - x_n) = |x_F|` of each contact, within
    /// round-off of an analytic crossing (section III-C).
    fn edges_at(&self, x: &[f64], out: &mut Vec<Edge>) {
        if let Some(c) = &self.kinds {
            return self.general_edges_at(c, x, out);
        }
        for k in 0..self.num_contacts() {
            let xk = block(x, k);
            if let Some(kind) = self.edge_of(k, xk) {
                let d = edge_normal(kind, self.mu[k], self.b[k], xk);
                out.push(Edge {
                    start: 3 * k,
                    normal: vec![d[0], d[1], d[2]],
                    curved: kind == EdgeKind::Cone,
                    tag: k,
                });
            }
        }
    }

    /// The nearest point on the cone edge (section III-D); the plane is flat.
    fn project_onto_edge(&self, edge: &Edge, x: &mut [f64]) {
        if let Some(c) = &self.kinds {
            return self.general_project_onto_edge(c, edge, x);
        }
        let k = edge.tag;
        if edge.curved {
            let p = project_on_cone_edge(self.mu[k], self.b[k], block(x, k));
            x[3 * k..3 * k + 3].copy_from_slice(p.as_slice());
        }
    }

    /// Eq. 25 in O(1) per edge from one pull-back `p = (A - I)' D r`: only contact `k`'s
    /// columns change, so `r' J_i d = p_k' F_i d - (D r)_k . d`.
    fn edge_slopes(&self, x: &[f64], f: &[f64], edges: &[Edge], out: &mut Vec<(f64, f64)>) {
        if edges.is_empty() {
            return;
        }
        if let Some(c) = &self.kinds {
            return self.general_edge_slopes(c, x, f, edges, out);
        }
        let pull = self.pullback(f);
        for e in edges {
            let k = e.tag;
            let d = normal3(e);
            let (f1, f2) = self.sides(k, x, d);
            let (pk, drk) = (
                block(&pull, k),
                block(f, k).component_mul(&block(&self.d, k)),
            );
            out.push((
                pk.dot(&(f1 * d)) - drk.dot(&d),
                -(pk.dot(&(f2 * d)) - drk.dot(&d)),
            ));
        }
    }

    /// `J'J` and `J'r` from the mixed `df/dx` blocks in O(n^2) ([`ImplicitNcp::normal_matrix`]).
    fn normal_equations(
        &self,
        x: &[f64],
        f: &[f64],
        edges: &[Edge],
        mixes: &[EdgeMix],
    ) -> NormalEquations {
        let mut out = NormalEquations::default();
        self.normal_equations_into(x, f, edges, mixes, &mut out);
        out
    }

    /// On the Coulomb path `J'J` is written into `out`'s storage ([`ImplicitNcp::normal_matrix_into`]);
    /// the general path assigns its owned result.
    fn normal_equations_into(
        &self,
        x: &[f64],
        f: &[f64],
        edges: &[Edge],
        mixes: &[EdgeMix],
        out: &mut NormalEquations,
    ) {
        if let Some(c) = &self.kinds {
            *out = self.general_normal_equations(c, x, f, edges, mixes);
            return;
        }
        let mut blocks = self.df_dx_blocks(x, &self.regions(x));
        for m in mixes {
            let e = &edges[m.edge];
            let (f1, f2) = self.sides(e.tag, x, normal3(e));
            blocks[e.tag] = m.plus * f1 + m.minus * f2;
        }
        let pull = self.pullback(f);
        out.gradient = self.jacobian_transpose_from_pullback(&blocks, &pull, f);
        self.normal_matrix_into(&blocks, &mut out.jtj);
    }
}

/// The implicit NCP is piecewise smooth, so its one-sided Jacobian is its B-derivative; the
/// Newton system is the dense default.
impl BDerivative for ImplicitNcp {}

/// The edge a contact with friction `mu` and bias `b` lies on at `x`, if any (within round-off
/// of an analytic crossing, which is where the edge-aware line search lands).
pub fn edge_at(mu: f64, b: f64, x: Vector3<f64>) -> Option<EdgeKind> {
    let scale = 1e-10 * (1.0 + x.amax() + b.abs());
    if (x[0] - b).abs() <= scale {
        Some(EdgeKind::Plane)
    } else if x[0] < b && (mu * (b - x[0]) - x[1].hypot(x[2])).abs() <= scale * (1.0 + mu) {
        Some(EdgeKind::Cone)
    } else {
        None
    }
}

/// The unit normal of an edge at `x_k`, pointing into the piece on its "first" side: into
/// *break* for the plane, into *slip* for the cone (the `d` of eq. 25).
pub fn edge_normal(kind: EdgeKind, mu: f64, b: f64, x: Vector3<f64>) -> Vector3<f64> {
    match kind {
        EdgeKind::Plane => Vector3::new(1.0, 0.0, 0.0),
        EdgeKind::Cone => {
            // Stick is g = mu^2 (x_n - b)^2 - |x_F|^2 >= 0 with x_n < b; slip lies along -grad g.
            let n = Vector3::new(-mu * mu * (x[0] - b), x[1], x[2]);
            let len = n.norm();
            if len > 0.0 {
                n / len
            } else {
                Vector3::new(1.0, 0.0, 0.0)
            }
        }
    }
}

/// The nearest point to `x` on the cone edge `mu (b - x_n) = |x_F|` (section III-D).
///
/// The paper reduces this to the roots of a quadratic via Lagrange multipliers; the same point
/// follows from geometry: the nearest point lies in the half-plane through the cone's axis and
/// `x`, on the generator ray from the apex `(b, 0, 0)` along `(-1, mu e) / sqrt(1 + mu^2)`,
/// `e = x_F / |x_F|`, at the clamped orthogonal projection onto that ray. On the axis
/// (`x_F = 0`) every generator is equally near; we take `e = t1`.
pub fn project_on_cone_edge(mu: f64, b: f64, x: Vector3<f64>) -> Vector3<f64> {
    let t = x[1].hypot(x[2]);
    let e = if t > 0.0 {
        [x[1] / t, x[2] / t]
    } else {
        [1.0, 0.0]
    };
    let norm = (1.0 + mu * mu).sqrt();
    let s = ((b - x[0]) + mu * t).max(0.0) / norm;
    Vector3::new(b - s / norm, s * mu / norm * e[0], s * mu / norm * e[1])
}

/// The 3x2 basis of the tangent space of an edge at `x` (section III-D, eq. 29).
///
/// Plane edge: `[[0, 0], [1, 0], [0, 1]]`. Cone edge: the generator through `x`,
/// `(x_n - b, x_2, x_3)`, and the circumferential direction `(0, -x_3, x_2)`. Eq. 29 prints the
/// first column as `(mu (x_1 - b), x_2, x_3)`, which is tangent to the cone only for `mu = 1`
/// (its product with the cone's normal `(mu^2 (x_1 - b), -x_2, -x_3)` is
/// `(mu - 1) |x_F|^2`); we use the generator, which spans the same space the paper intends.
pub fn edge_tangent_basis(kind: EdgeKind, b: f64, x: Vector3<f64>) -> nalgebra::Matrix3x2<f64> {
    match kind {
        EdgeKind::Plane => nalgebra::Matrix3x2::new(0.0, 0.0, 1.0, 0.0, 0.0, 1.0),
        EdgeKind::Cone => nalgebra::Matrix3x2::new(x[0] - b, 0.0, x[1], -x[2], x[2], x[1]),
    }
}

/// The two kinds of edges (Fig. 1C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// The plane `x_n = b` between break and the other regions.
    Plane,
    /// The cone `mu (b - x_n) = |x_F|` between stick and slip.
    Cone,
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::Matrix;
    use proptest::prelude::*;

    fn vec3(r: f64) -> impl Strategy<Value = Vector3<f64>> {
        (-r..r, -r..r, -r..r).prop_map(|(a, b, c)| Vector3::new(a, b, c))
    }

    proptest! {
        /// Eqs. 6, 7, 11 hold for every x by construction, and v matches eqs. 10 and 13.
        #[test]
        fn complementarity_by_construction(mu in 0.0..3.0f64, b in -0.5..0.5f64, x in vec3(5.0)) {
            let f = impulse(mu, b, x);
            let v = velocity(mu, b, x);
            let tol = 1e-12 * (1.0 + x.norm());
            // Eq. 11: f_n >= 0, v_n >= b, f_n (v_n - b) = 0.
            prop_assert!(f[0] >= 0.0 && v[0] >= b - tol && (f[0] * (v[0] - b)).abs() <= tol);
            // Eq. 10 and 13 directly.
            prop_assert!((v[0] - x[0].max(b)).abs() <= tol);
            let t = x[1].hypot(x[2]);
            let s = if t > 0.0 { (mu * f[0] / t).min(1.0) } else { 1.0 };
            prop_assert!((v[1] - (1.0 - s) * x[1]).abs() <= tol && (v[2] - (1.0 - s) * x[2]).abs() <= tol);
            // Eq. 7: inside the cone, v_F parallel to f_F and opposing it.
            prop_assert!(f[1].hypot(f[2]) <= mu * f[0] + tol);
            prop_assert!((v[1] * f[2] - v[2] * f[1]).abs() <= tol * (1.0 + x.norm()));
            prop_assert!(v[1] * f[1] + v[2] * f[2] <= tol);
            // Eq. 14.
            prop_assert!((v - (f + x)).norm() <= tol);
        }

        /// Every crossing returned lies on the plane or the cone (eq. 27).
        #[test]
        fn crossings_lie_on_an_edge(mu in 0.05..3.0f64, b in -0.5..0.5f64, x in vec3(3.0), dx in vec3(6.0)) {
            let mut alphas = Vec::new();
            contact_crossings(mu, b, x, dx, &mut alphas);
            for a in alphas {
                prop_assert!(a > 0.0 && a <= 1.0);
                let y = x + a * dx;
                let on_plane = (y[0] - b).abs() <= 1e-9 * (1.0 + y.norm());
                let on_cone = (mu * (b - y[0]) - y[1].hypot(y[2])).abs() <= 1e-9 * (1.0 + y.norm()) * (1.0 + mu);
                prop_assert!(on_plane || on_cone, "alpha {} gives {:?}", a, y);
            }
        }

        /// Crossings are exactly the points where the region changes: sampling the segment
        /// finely finds no region change that a crossing does not explain.
        #[test]
        fn crossings_explain_every_region_change(mu in 0.05..3.0f64, x in vec3(3.0), dx in vec3(6.0)) {
            let b = 0.0;
            let mut alphas = Vec::new();
            contact_crossings(mu, b, x, dx, &mut alphas);
            let n = 400;
            for i in 0..n {
                let (a0, a1) = (i as f64 / n as f64, (i + 1) as f64 / n as f64);
                if Region::of(mu, b, x + a0 * dx) != Region::of(mu, b, x + a1 * dx) {
                    prop_assert!(alphas.iter().any(|&a| a >= a0 - 1e-9 && a <= a1 + 1e-9),
                        "region change in [{}, {}] without a crossing {:?}", a0, a1, alphas);
                }
            }
        }

        /// The cone-edge projection is the nearest point of the edge: no sampled point of the
        /// cone surface is closer.
        #[test]
        fn cone_edge_projection_is_nearest(mu in 0.05..3.0f64, b in -0.5..0.5f64, x in vec3(3.0),
                                           s in 0.0..10.0f64, phi in 0.0..std::f64::consts::TAU) {
            let p = project_on_cone_edge(mu, b, x);
            prop_assert!((mu * (b - p[0]) - p[1].hypot(p[2])).abs() <= 1e-12 * (1.0 + p.norm()));
            let y = Vector3::new(b - s, mu * s * phi.cos(), mu * s * phi.sin());
            prop_assert!((x - p).norm() <= (x - y).norm() + 1e-12);
        }

        /// Both columns of the cone basis are tangent to the cone at points on it.
        #[test]
        fn cone_basis_is_tangent(mu in 0.05..3.0f64, b in -0.5..0.5f64, s in 0.01..5.0f64, phi in 0.0..std::f64::consts::TAU) {
            let x = Vector3::new(b - s, mu * s * phi.cos(), mu * s * phi.sin());
            let normal = Vector3::new(mu * mu * (x[0] - b), -x[1], -x[2]);
            let basis = edge_tangent_basis(EdgeKind::Cone, b, x);
            for c in 0..2 {
                prop_assert!(normal.dot(&basis.column(c)).abs() <= 1e-10 * (1.0 + x.norm_squared()));
            }
        }
    }

    fn random_problem(nc: usize, seed: u64) -> LocalProblem {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let n = 3 * nc;
        let l: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        factored_problem(&l, nc, n, n as f64, &mut rng)
    }

    /// `W = K K' / div` for the row-major `3 nc x cols` factor `k`, with `q` in `[-1, 1]` and `mu`
    /// in `[0.1, 2]` drawn from `rng` after it.
    fn factored_problem(
        k: &[f64],
        nc: usize,
        cols: usize,
        div: f64,
        rng: &mut rand_chacha::ChaCha8Rng,
    ) -> LocalProblem {
        use rand::Rng;
        let n = 3 * nc;
        let w: Vec<f64> = (0..n * n)
            .map(|ij| {
                let (i, j) = (ij / n, ij % n);
                (0..cols)
                    .map(|d| k[i * cols + d] * k[j * cols + d])
                    .sum::<f64>()
                    / div
            })
            .collect();
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            &(0..nc)
                .map(|_| rng.random_range(0.1..2.0))
                .collect::<Vec<f64>>(),
        )
    }

    /// `nc` contacts in a chain of `nc + 1` bodies, contact `k` between bodies `k` and `k + 1`:
    /// `W = K K'` with random 3x6 blocks, so `W`'s block `(k, l)` is nonzero for `|k - l| <= 1`
    /// and `W^2`'s for `|k - l| <= 2`, as on a pile.
    fn chain_problem(nc: usize, seed: u64) -> LocalProblem {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (n, dofs) = (3 * nc, 6 * (nc + 1));
        let mut k = vec![0.0; n * dofs];
        for c in 0..nc {
            for i in 0..3 {
                for j in 6 * c..6 * c + 12 {
                    k[(3 * c + i) * dofs + j] = rng.random_range(-1.0..1.0);
                }
            }
        }
        factored_problem(&k, nc, dofs, 1.0, &mut rng)
    }

    #[test]
    fn a_sparse_a_goes_by_blocks_with_the_dense_answers() {
        use rand::{Rng, SeedableRng};
        let nc = 30;
        let p = chain_problem(nc, 3);
        let plain = ImplicitNcp::new(&p);
        for r in [plain.clone(), plain.with_row_sum_scaling()] {
            assert!(r.a_blocks.is_some(), "a chain's W is 10% blocks");
            // (k, l), k >= l, |k - l| <= 2: 30 + 29 + 28; found from A's block pattern, they
            // are the pairs a scan of the dense products finds.
            let pr = r.products();
            assert_eq!(pr.pairs.len(), 87);
            let dense = r.clone().with_dense_a();
            let dp = dense.products();
            assert_eq!(pr.pairs, dp.pairs);
            for (s, d) in pr.pair_blocks.iter().zip(&dp.pair_blocks) {
                assert!((s.mtm - d.mtm).amax() < 1e-12 * (1.0 + d.mtm.amax()));
                assert_eq!((s.dm_kl, s.dm_lk), (d.dm_kl, d.dm_lk));
            }
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
            let blocks: Vec<Matrix3<f64>> = (0..nc)
                .map(|k| match k % 3 {
                    0 => Matrix3::zeros(),
                    1 => -Matrix3::identity(),
                    _ => Matrix3::from_fn(|_, _| rng.random_range(-1.0..1.0)),
                })
                .collect();
            let n = 3 * nc;
            let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut j = Mat::<f64>::zeros(n, n);
            r.jacobian_from_blocks(&blocks, j.as_mut());
            let jtj = j.transpose() * &j;
            let jy = &j * Col::from_fn(n, |i| y[i]);
            let jty = j.transpose() * Col::from_fn(n, |i| y[i]);
            let (fast, fast_jy, fast_jty) = (
                r.normal_matrix(&blocks),
                r.jacobian_times(&blocks, &y),
                r.jacobian_transpose_times(&blocks, &y),
            );
            let close = |a: f64, b: f64| (a - b).abs() < 1e-11 * (1.0 + a.abs());
            for a in 0..n {
                assert!(
                    close(jy[a], fast_jy[a]) && close(jty[a], fast_jty[a]),
                    "row {a}"
                );
                (0..n).for_each(|b| assert!(close(jtj[(a, b)], fast[(a, b)]), "({a}, {b})"));
            }
            // r(x) = D ((A - I) f(x) - x + v0), with A dense.
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let f = r.impulses(&x);
            let af = &r.a * Col::from_fn(n, |i| f[i]);
            let mut res = vec![0.0; n];
            r.residual(&x, &mut res);
            for i in 0..n {
                let want = r.d[i] * (af[i] - f[i] - x[i] + r.v0[i]);
                assert!(close(want, res[i]), "residual row {i}");
            }
        }
        assert!(
            ImplicitNcp::new(&random_problem(30, 3)).a_blocks.is_none(),
            "dense W"
        );
    }

    #[test]
    fn jacobian_matches_finite_differences_away_from_edges() {
        use rand::{Rng, SeedableRng};
        let mut checked = 0;
        for seed in 0..40 {
            let p = random_problem(3, seed);
            let r = ImplicitNcp::new(&p)
                .with_bias(vec![0.0, 0.1, -0.1])
                .unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1000 + seed);
            let x: Vec<f64> = (0..9).map(|_| rng.random_range(-2.0..2.0)).collect();
            let h = 1e-7;
            // Skip points within a few h of an edge, where the difference quotient straddles two pieces.
            let near_edge = (0..3).any(|k| {
                let xk = block(&x, k);
                (xk[0] - r.bias(k)).abs() < 1e-4
                    || (r.mu(k) * (r.bias(k) - xk[0]) - xk[1].hypot(xk[2])).abs() < 1e-4
            });
            if near_edge {
                continue;
            }
            let mut j = Mat::<f64>::zeros(9, 9);
            r.jacobian(&x, j.as_mut());
            let (mut fp, mut fm) = (vec![0.0; 9], vec![0.0; 9]);
            for c in 0..9 {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[c] += h;
                xm[c] -= h;
                r.residual(&xp, &mut fp);
                r.residual(&xm, &mut fm);
                for i in 0..9 {
                    let fd = (fp[i] - fm[i]) / (2.0 * h);
                    assert!(
                        (fd - j[(i, c)]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "seed {seed} ({i},{c}) fd {fd} vs {}",
                        j[(i, c)]
                    );
                }
            }
            checked += 1;
        }
        assert!(checked >= 30, "only {checked} points were away from edges");
    }

    #[test]
    fn normal_matrix_and_gradient_match_the_dense_products() {
        use rand::{Rng, SeedableRng};
        for seed in 0..6 {
            let p = random_problem(4, seed);
            let plain = ImplicitNcp::new(&p);
            for r in [plain.clone(), plain.with_row_sum_scaling()] {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(50 + seed);
                // Arbitrary 3x3 blocks: the identity must hold for any block-diagonal F'; the
                // break and stick pieces' zero and `-I`, which `normal_matrix` takes apart,
                // among them (contacts 0 and 3 share a kind, so every pair of kinds meets).
                let blocks: Vec<Matrix3<f64>> = (0..4u64)
                    .map(|k| match (k + seed) % 3 {
                        0 => Matrix3::zeros(),
                        1 => -Matrix3::identity(),
                        _ => Matrix3::from_fn(|_, _| rng.random_range(-1.0..1.0)),
                    })
                    .collect();
                let y: Vec<f64> = (0..12).map(|_| rng.random_range(-1.0..1.0)).collect();
                let mut j = Mat::<f64>::zeros(12, 12);
                r.jacobian_from_blocks(&blocks, j.as_mut());
                let jtj = j.transpose() * &j;
                let fast = r.normal_matrix(&blocks);
                // Into a buffer a previous iteration left full (the zero blocks of this F'
                // must be written, not inherited).
                let mut reused = Mat::<f64>::from_fn(12, 12, |_, _| 7.0);
                r.normal_matrix_into(&blocks, &mut reused);
                assert_eq!(
                    reused, fast,
                    "seed {seed}: a reused buffer gives the same J'J"
                );
                let jty = j.transpose() * Col::from_fn(12, |i| y[i]);
                let fast_g = r.jacobian_transpose_times(&blocks, &y);
                let jd = &j * Col::from_fn(12, |i| y[i]);
                let fast_jd = r.jacobian_times(&blocks, &y);
                for a in 0..12 {
                    assert!((jty[a] - fast_g[a]).abs() < 1e-12, "J'y row {a}");
                    assert!((jd[a] - fast_jd[a]).abs() < 1e-12, "Jy row {a}");
                    for b in 0..12 {
                        assert!(
                            (jtj[(a, b)] - fast[(a, b)]).abs() < 1e-12,
                            "seed {seed} J'J ({a},{b}): {} vs {}",
                            jtj[(a, b)],
                            fast[(a, b)]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_bias_of_the_wrong_length_or_not_finite_is_an_error() {
        let p = random_problem(2, 1);
        let err = ImplicitNcp::new(&p).with_bias(vec![0.0]).unwrap_err();
        assert!(
            err.to_string().contains("field `b`") && err.to_string().contains("2 entries"),
            "{err}"
        );
        let err = ImplicitNcp::new(&p)
            .with_bias(vec![0.0, f64::NAN])
            .unwrap_err();
        assert!(err.to_string().contains("entry 1 is not finite"), "{err}");
        assert!(ImplicitNcp::new(&p).with_bias(vec![0.1, -0.1]).is_ok());
    }

    #[test]
    fn one_sided_jacobians_on_an_edge_match_one_sided_differences() {
        let p = random_problem(2, 7);
        let r = ImplicitNcp::new(&p);
        // Contact 0 exactly on its cone (mu (0 - x_n) = |x_F|), contact 1 sliding.
        let mu0 = p.mu()[0];
        let x = vec![-1.0, 0.6 * mu0, 0.8 * mu0, -0.2, 3.0, 0.5];
        for dir in [
            vec![0.3, -0.2, 0.1, 0.0, 0.0, 0.0],
            vec![-0.3, 0.4, 0.4, 0.0, 0.0, 0.0],
        ] {
            let mut j = Mat::<f64>::zeros(6, 6);
            r.jacobian_along(&x, &dir, j.as_mut());
            let h = 1e-7;
            let xp: Vec<f64> = x.iter().zip(&dir).map(|(a, d)| a + h * d).collect();
            let (mut f0, mut f1) = (vec![0.0; 6], vec![0.0; 6]);
            r.residual(&x, &mut f0);
            r.residual(&xp, &mut f1);
            for i in 0..6 {
                let fd = (f1[i] - f0[i]) / h;
                let jd: f64 = (0..6).map(|c| j[(i, c)] * dir[c]).sum();
                assert!(
                    (fd - jd).abs() < 1e-5 * (1.0 + fd.abs()),
                    "dir {dir:?} row {i}: {fd} vs {jd}"
                );
            }
        }
    }

    #[test]
    fn slopes_through_a_point_from_the_pullback_equal_the_directional_derivatives_and_differences()
    {
        let p = random_problem(3, 11);
        for r in [
            ImplicitNcp::new(&p),
            ImplicitNcp::new(&p).with_row_sum_scaling(),
        ] {
            let mu0 = p.mu()[0];
            // Contact 0 on its cone, contact 1 on its plane (b = 0), contact 2 sliding: the
            // two sides differ on the first two.
            let x = vec![-1.0, 0.6 * mu0, 0.8 * mu0, 0.0, 0.3, -0.1, -0.2, 3.0, 0.5];
            let mut f = vec![0.0; 9];
            r.residual(&x, &mut f);
            for d in [
                vec![0.3, -0.2, 0.1, 0.5, 0.1, 0.0, 0.2, -0.1, 0.3],
                vec![-0.3, 0.4, 0.4, -0.5, 0.0, 0.2, 0.0, 0.0, -0.4],
            ] {
                let (before, after) = r.slopes_through(&x, &f, &d);
                let (b0, a0) = slopes_by_derivatives(&r, &x, &f, &d);
                assert!((before - b0).abs() < 1e-12 && (after - a0).abs() < 1e-12);
                // One-sided differences of the merit |r|^2 / 2 along d.
                let merit = |t: f64| {
                    let xt: Vec<f64> = x.iter().zip(&d).map(|(a, v)| a + t * v).collect();
                    let mut ft = vec![0.0; 9];
                    r.residual(&xt, &mut ft);
                    0.5 * ft.iter().map(|v| v * v).sum::<f64>()
                };
                let h = 1e-7;
                let (fd_after, fd_before) =
                    ((merit(h) - merit(0.0)) / h, (merit(0.0) - merit(-h)) / h);
                assert!(
                    (fd_after - after).abs() < 1e-5 * (1.0 + after.abs()),
                    "{fd_after} vs {after}"
                );
                assert!(
                    (fd_before - before).abs() < 1e-5 * (1.0 + before.abs()),
                    "{fd_before} vs {before}"
                );
                assert!(
                    (before - after).abs() > 1e-6,
                    "the point is on a kink of this direction"
                );
            }
        }
    }

    #[test]
    fn residual_vanishes_at_a_known_solution_and_sticking_start_solves_sticking_problems() {
        // One sliding contact: A = I, v0 = (-1, 2, 0), mu = 0.5: f = (1, -0.5, 0), v = (0, 1.5, 0).
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(),
            vec![-1.0, 2.0, 0.0],
            &[0.5],
        );
        let r = ImplicitNcp::new(&p);
        // x = v - f (eq. 14).
        let x = [-1.0, 2.0, 0.0];
        let mut out = [1.0; 3];
        r.residual(&x, &mut out);
        assert!(out.iter().all(|v| v.abs() < 1e-15), "{out:?}");
        assert_eq!(r.impulses(&x), vec![1.0, -0.5, 0.0]);
        // A sticking problem: the sticking start is its solution.
        let stick = LocalProblem {
            q: vec![-1.0, 0.1, 0.0],
            ..p.clone()
        };
        let rs = ImplicitNcp::new(&stick);
        let x0 = rs.sticking_start(1e-12);
        rs.residual(&x0, &mut out);
        assert!(out.iter().all(|v| v.abs() < 1e-14), "{out:?}");
    }

    #[test]
    fn sticking_start_survives_a_singular_delassus_matrix() {
        // Two identical contact rows (a resting pile's redundancy): A is singular.
        let n = 6;
        let mut w = vec![0.0; n * n];
        for i in 0..3 {
            for (a, b) in [(i, i), (i, i + 3), (i + 3, i), (i + 3, i + 3)] {
                w[a * n + b] = 1.0;
            }
        }
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            vec![-1.0, 0.0, 0.0, -1.0, 0.0, 0.0],
            &[0.5, 0.5],
        );
        let x0 = ImplicitNcp::new(&p).sticking_start(1e-10);
        // The minimum-norm split shares the load: f_n = 0.5 each, finite.
        assert!(
            (x0[0] + 0.5).abs() < 1e-12 && (x0[3] + 0.5).abs() < 1e-12,
            "{x0:?}"
        );
    }

    #[test]
    fn row_sum_scaling_scales_rows() {
        let p = random_problem(2, 3);
        let plain = ImplicitNcp::new(&p);
        let scaled = plain.clone().with_row_sum_scaling();
        let x = vec![0.3; 6];
        let (mut a, mut b) = (vec![0.0; 6], vec![0.0; 6]);
        plain.residual(&x, &mut a);
        scaled.residual(&x, &mut b);
        let w = p.w.to_dense();
        for i in 0..6 {
            let s: f64 = (0..6).map(|j| w[(i, j)].abs()).sum();
            assert!((b[i] - a[i] / s).abs() < 1e-14);
        }
    }
}
