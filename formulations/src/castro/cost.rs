//! SAP's unconstrained convex cost (Castro et al., eq. 24) as a production [`Merit`]:
//! `l_p(v) = |v - v*|_A^2 / 2 + sum_i l_R,i(y_i(v))`, `y_i = -R_i^-1 (J_i v + b_i - v^_i)`,
//! with gradient `A (v - v*) - J' gamma` (appendix D-C), the sparse Hessian
//! `H = A + J' G J` (section IV-A), the O(n) line derivatives of section IV-C, and the
//! unit-aware stopping measure of eq. 26 with `D = diag(A)^-1/2`.
//!
//! Only the kinematic trees that some contact touches enter (Drake does this, and the paper's
//! Fig. 2 sparsity argument assumes it): the rest keep `v = v*`, which is optimal for them since
//! `A` is block diagonal by tree. The unknowns are the touched trees' velocities, in order.
//!
//! The Hessian's sparsity pattern is fixed when the cost is built: `A`'s pattern plus, for each
//! contact, the dense block over the velocities its Jacobian rows touch; regions that switch a
//! contact's `G` to zero leave explicit zeros, so one symbolic factorization serves every
//! Newton iteration of the step.

use std::sync::Mutex;

use contactlab_core::generalized::{sparse_mul_add, sparse_transpose_mul_add, GeneralizedProblem};
use contactlab_core::{CoreError, LinePoint, Merit, MeritEval, MeritHessian, Optimality};
use faer::sparse::{SparseColMat, SymbolicSparseColMat};
use faer::{Mat, MatMut, Side};
use nalgebra::{Matrix3, Vector3};

use super::projection::{ContactRegularization, Projection, SapRegion};

/// One contact's rows of `J` over the velocities they touch, and where its `J' G J` block lands
/// in the Hessian's values.
#[derive(Debug, Clone)]
struct ContactBlock {
    /// Reduced velocity indices the contact's three rows touch, ascending.
    cols: Vec<usize>,
    /// The three rows restricted to `cols` (row-major: `rows[r * cols.len() + k]`).
    rows: Vec<f64>,
    /// For each `(a, b)` in `cols x cols` (column-major), the index in the Hessian's values.
    pos: Vec<usize>,
}

/// What one evaluation of the contacts gives.
struct ContactState {
    projections: Vec<Projection>,
    ys: Vec<Vector3<f64>>,
}

/// The line-search cache: everything along `v + alpha dv` that does not depend on `alpha`.
#[derive(Debug, Clone)]
struct LineCache {
    v: Vec<f64>,
    dv: Vec<f64>,
    vc: Vec<f64>,
    dvc: Vec<f64>,
    /// `|v - v*|_A^2 / 2`, `dv' A (v - v*)`, `dv' A dv`.
    c0: f64,
    c1: f64,
    c2: f64,
}

/// Borrowed data of the primal problem (eq. 19), for the conic statement.
pub(super) struct PrimalParts<'a> {
    pub a: &'a SparseColMat<usize, f64>,
    pub j: &'a SparseColMat<usize, f64>,
    pub v_star: &'a [f64],
    pub offset: &'a [f64],
    pub regs: &'a [ContactRegularization],
}

/// SAP's cost on the touched trees of one step problem.
#[derive(Debug)]
pub struct SapCost {
    /// Velocity indices (into the full problem) of the unknowns.
    dofs: Vec<usize>,
    /// The full problem's `v*`.
    full_v_star: Vec<f64>,
    /// `A` restricted to the unknowns (both triangles).
    a: SparseColMat<usize, f64>,
    /// `J` restricted to the unknowns.
    j: SparseColMat<usize, f64>,
    /// `v*` restricted to the unknowns.
    v_star: Vec<f64>,
    /// `b - v^` per contact row: the constant part of `J v + b - v^`.
    offset: Vec<f64>,
    /// Per contact, `R` and `mu`.
    regs: Vec<ContactRegularization>,
    /// `D = diag(A)^-1/2` on the unknowns (eq. 25; `A = M` for explicit schemes).
    d: Vec<f64>,
    /// The Hessian's pattern.
    pattern: SymbolicSparseColMat<usize>,
    /// Where `A`'s values land in the Hessian's values.
    a_pos: Vec<usize>,
    blocks: Vec<ContactBlock>,
    /// The contact velocities' offset `b` (for reporting `v_c = J v + b`).
    b: Vec<f64>,
    line: Mutex<Option<LineCache>>,
}

impl Clone for SapCost {
    fn clone(&self) -> Self {
        SapCost {
            dofs: self.dofs.clone(),
            full_v_star: self.full_v_star.clone(),
            a: self.a.clone(),
            j: self.j.clone(),
            v_star: self.v_star.clone(),
            offset: self.offset.clone(),
            regs: self.regs.clone(),
            d: self.d.clone(),
            pattern: self.pattern.clone(),
            a_pos: self.a_pos.clone(),
            blocks: self.blocks.clone(),
            b: self.b.clone(),
            line: Mutex::new(None),
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    contactlab_core::drivers::kit::dot(a, b)
}

impl SapCost {
    /// The cost of `problem` with per-contact regularisation `regs` and biases `v_hat` (three per
    /// contact, normal first: SAP's model has only a normal bias, MuJoCo's a full one).
    pub fn new(
        problem: &GeneralizedProblem,
        regs: Vec<ContactRegularization>,
        v_hat: &[f64],
    ) -> SapCost {
        let nv = problem.num_dofs();
        // Trees touched by a contact: those of J's nonzero columns.
        let jcp = problem.j.symbolic().col_ptr();
        let ntrees = problem.tree_of.iter().copied().max().map_or(0, |t| t + 1);
        let mut touched = vec![false; ntrees];
        for c in 0..nv {
            if jcp[c + 1] > jcp[c] {
                touched[problem.tree_of[c]] = true;
            }
        }
        let dofs: Vec<usize> = (0..nv).filter(|&c| touched[problem.tree_of[c]]).collect();
        let mut map = vec![usize::MAX; nv];
        for (k, &c) in dofs.iter().enumerate() {
            map[c] = k;
        }
        let a = restrict(&problem.a, &map, &map, dofs.len(), dofs.len());
        let rows: Vec<usize> = (0..problem.j.nrows()).collect();
        let j = restrict(&problem.j, &rows, &map, problem.j.nrows(), dofs.len());
        let v_star: Vec<f64> = dofs.iter().map(|&c| problem.v_star[c]).collect();
        let offset: Vec<f64> = problem.b.iter().zip(v_hat).map(|(b, v)| b - v).collect();
        let d = diag_inv_sqrt(&a);
        let (pattern, a_pos, blocks) = hessian_pattern(&a, &j);
        SapCost {
            dofs,
            full_v_star: problem.v_star.clone(),
            a,
            j,
            v_star,
            offset,
            regs,
            d,
            pattern,
            a_pos,
            blocks,
            b: problem.b.clone(),
            line: Mutex::new(None),
        }
    }

    /// Number of unknowns (the touched trees' velocities).
    pub fn num_unknowns(&self) -> usize {
        self.dofs.len()
    }

    /// Number of contacts.
    pub fn num_contacts(&self) -> usize {
        self.regs.len()
    }

    /// The unknowns' `v*`.
    pub fn v_star(&self) -> &[f64] {
        &self.v_star
    }

    /// The unknowns' part of a full velocity vector.
    pub fn restrict(&self, full: &[f64]) -> Vec<f64> {
        self.dofs.iter().map(|&c| full[c]).collect()
    }

    /// All velocities: the unknowns `x` and `v*` for untouched trees.
    pub fn full_velocities(&self, x: &[f64]) -> Vec<f64> {
        let mut v = self.full_v_star.clone();
        let x = self.velocities_of(x);
        for (k, &c) in self.dofs.iter().enumerate() {
            v[c] = x[k];
        }
        v
    }

    /// The data of the primal problem (eq. 19) on the unknowns: `A`, `J`, `v*`, the constant
    /// `b - v^` of `J v + b - v^`, and per contact `R` and `mu`.
    pub(super) fn primal_parts(&self) -> PrimalParts<'_> {
        PrimalParts {
            a: &self.a,
            j: &self.j,
            v_star: &self.v_star,
            offset: &self.offset,
            regs: &self.regs,
        }
    }

    /// Per contact, its regularisation.
    pub fn regularizations(&self) -> &[ContactRegularization] {
        &self.regs
    }

    /// Contact velocities `v_c = J v + b`.
    pub fn contact_velocities(&self, x: &[f64]) -> Vec<f64> {
        let mut vc = self.b.clone();
        sparse_mul_add(&self.j, self.velocities_of(x), &mut vc);
        vc
    }

    /// `J v + b - v^`.
    fn biased(&self, x: &[f64]) -> Vec<f64> {
        let mut z = self.offset.clone();
        sparse_mul_add(&self.j, x, &mut z);
        z
    }

    fn project_all(&self, biased: &[f64]) -> ContactState {
        let (projections, ys) = self
            .regs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let z = Vector3::new(biased[3 * i], biased[3 * i + 1], biased[3 * i + 2]);
                let y = r.y_of(z, Vector3::zeros());
                (r.project(y), y)
            })
            .unzip();
        ContactState { projections, ys }
    }

    /// The primal pair `(v, gamma)` a solution stands for. SAP's unknowns are `v` alone, and
    /// its impulses are `gamma(v) = P_F(y(v))` (Theorem 1). An interior-point answer to eq. 19
    /// carries the primal pair `x = [v; sigma]` (see `ConicProgram::unknowns_from_conic`), and
    /// then its impulses are its own `sigma`: that is how the paper measures Gurobi and the
    /// geodesic IPM in Fig. 13 (their `e_mu` is not zero, which it would be with `P_F(y(v))`),
    /// and `P_F(y(v))` would amplify the IPM's velocity error by `R^-1`, about `1e12 dt^2`
    /// here.
    fn primal_pair<'a>(&self, x: &'a [f64]) -> (&'a [f64], Vec<f64>) {
        let nv = self.v_star.len();
        if self.regs.is_empty() || x.len() != nv + 3 * self.regs.len() {
            let st = self.project_all(&self.biased(x));
            let gamma = st
                .projections
                .iter()
                .flat_map(|p| [p.gamma[0], p.gamma[1], p.gamma[2]])
                .collect();
            (x, gamma)
        } else {
            (&x[..nv], x[nv..].to_vec())
        }
    }

    /// The velocities part of `x` (all of it unless `x` is an interior-point primal pair).
    pub fn velocities_of<'a>(&self, x: &'a [f64]) -> &'a [f64] {
        &x[..self.v_star.len().min(x.len())]
    }

    /// The impulses, normal first: `gamma(v) = P_F(y(v))`, or `sigma` of a primal pair.
    pub fn impulses(&self, x: &[f64]) -> Vec<f64> {
        self.primal_pair(x).1
    }

    /// Each contact's region at `x`.
    pub fn regions(&self, x: &[f64]) -> Vec<SapRegion> {
        let st = self.project_all(&self.biased(self.velocities_of(x)));
        st.projections.iter().map(|p| p.region).collect()
    }

    /// `A y`.
    fn a_times(&self, y: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; y.len()];
        sparse_mul_add(&self.a, y, &mut out);
        out
    }

    /// The momentum error `e_m = |D (A (v - v*) - J' gamma)| / max(|D p|, |D j_c|)` (eq. 32)
    /// and the complementarity error `e_mu = mean_i |g_i . gamma_i| / l_p` with
    /// `g_i = v_c,i - v^_i + R_i gamma_i` (eq. 33), at the primal pair `x` stands for. With
    /// SAP's own `gamma(v)`, `e_mu` is zero to round-off (the projection is complementary by
    /// construction) and `l_p` is eq. 24's cost; for a pair `(v, sigma)` it is eq. 19's
    /// objective, the same number at the optimum.
    pub fn accuracy(&self, x: &[f64]) -> (f64, f64) {
        let (v, gamma) = self.primal_pair(x);
        let e: Vec<f64> = v.iter().zip(&self.v_star).map(|(a, b)| a - b).collect();
        let ae = self.a_times(&e);
        let mut jtg = vec![0.0; v.len()];
        sparse_transpose_mul_add(&self.j, &gamma, &mut jtg);
        let gradient: Vec<f64> = ae.iter().zip(&jtg).map(|(a, b)| a - b).collect();
        let o = self.optimality(v, &gradient);
        let biased = self.biased(v);
        let nc = self.regs.len().max(1) as f64;
        let (mut sum, mut reg_cost) = (0.0, 0.0);
        for (i, r) in self.regs.iter().enumerate() {
            let gam = Vector3::new(gamma[3 * i], gamma[3 * i + 1], gamma[3 * i + 2]);
            let rg = Vector3::new(r.rn * gam[0], r.rt * gam[1], r.rt * gam[2]);
            let g = Vector3::new(biased[3 * i], biased[3 * i + 1], biased[3 * i + 2]) + rg;
            sum += g.dot(&gam).abs();
            reg_cost += 0.5 * gam.dot(&rg);
        }
        let l_p = 0.5 * dot(&e, &ae) + reg_cost;
        let e_m = if o.scale > 0.0 {
            o.residual / o.scale
        } else {
            o.residual
        };
        let e_mu = if l_p > 0.0 { sum / nc / l_p } else { 0.0 };
        (e_m, e_mu)
    }

    /// The condition numbers of the Hessian `H = A + J' G J` at `x` (Fig. 15: it grows like
    /// `1/sigma`): of `H` itself, and of `D H D` with `D = diag(H)^-1/2` (the Jacobi-scaled
    /// matrix, which leaves out the spread of the masses' own units). A diagnostic for the slip
    /// study only: it forms `H` densely and takes its eigenvalues, O(n^3), which SAP's own path
    /// never does. Infinite when `H` is singular to working precision.
    pub fn hessian_condition(&self, x: &[f64]) -> Result<(f64, f64), CoreError> {
        let v = self.velocities_of(x);
        let n = v.len();
        if n == 0 {
            return Ok((1.0, 1.0));
        }
        let mut h = Mat::<f64>::zeros(n, n);
        self.hessian(v, h.as_mut());
        let cond = |m: &Mat<f64>| -> Result<f64, CoreError> {
            let ev = m
                .self_adjoint_eigenvalues(Side::Lower)
                .map_err(|e| CoreError::LinearAlgebra(format!("SAP Hessian eigenvalues: {e:?}")))?;
            let (lo, hi) = (ev[0], ev[n - 1]);
            Ok(if lo > 0.0 { hi / lo } else { f64::INFINITY })
        };
        let plain = cond(&h)?;
        let d: Vec<f64> = (0..n)
            .map(|k| 1.0 / h[(k, k)].max(f64::MIN_POSITIVE).sqrt())
            .collect();
        let scaled = Mat::<f64>::from_fn(n, n, |r, c| d[r] * h[(r, c)] * d[c]);
        Ok((plain, cond(&scaled)?))
    }

    /// The line cache for `(x, dx)`, made if it is not the current one.
    fn line_cache(&self, x: &[f64], dx: &[f64]) -> LineCache {
        let mut guard = self.line.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = guard.as_ref() {
            if c.v == x && c.dv == dx {
                return c.clone();
            }
        }
        let e: Vec<f64> = x.iter().zip(&self.v_star).map(|(a, b)| a - b).collect();
        let ae = self.a_times(&e);
        let adv = self.a_times(dx);
        let mut dvc = vec![0.0; self.offset.len()];
        sparse_mul_add(&self.j, dx, &mut dvc);
        let c = LineCache {
            v: x.to_vec(),
            dv: dx.to_vec(),
            vc: self.biased(x),
            dvc,
            c0: 0.5 * dot(&e, &ae),
            c1: dot(dx, &ae),
            c2: dot(dx, &adv),
        };
        *guard = Some(c.clone());
        c
    }
}

impl Merit for SapCost {
    fn dim(&self) -> usize {
        self.dofs.len()
    }

    fn value(&self, x: &[f64]) -> f64 {
        self.evaluate(x, false).value
    }

    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        g.copy_from_slice(&self.evaluate(x, false).gradient);
    }

    /// The dense Hessian, for generic dense drivers on small problems; SAP's own path uses the
    /// sparse one from [`Merit::evaluate`].
    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        if let Some(MeritHessian::Sparse(s)) = self.evaluate(x, true).hessian {
            for c in 0..h.ncols() {
                for r in 0..h.nrows() {
                    h[(r, c)] = 0.0;
                }
            }
            let (cp, ri, v) = (s.symbolic().col_ptr(), s.symbolic().row_idx(), s.val());
            for c in 0..s.ncols() {
                for k in cp[c]..cp[c + 1] {
                    h[(ri[k], c)] += v[k];
                }
            }
        }
    }

    /// Value, gradient `A (v - v*) - J' gamma` and the sparse Hessian `A + J' G J`, from one
    /// projection of every contact.
    fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        let e: Vec<f64> = x.iter().zip(&self.v_star).map(|(a, b)| a - b).collect();
        let ae = self.a_times(&e);
        let st = self.project_all(&self.biased(x));
        let gamma: Vec<f64> = st
            .projections
            .iter()
            .flat_map(|p| [p.gamma[0], p.gamma[1], p.gamma[2]])
            .collect();
        let value = 0.5 * dot(&e, &ae) + st.projections.iter().map(|p| p.cost).sum::<f64>();
        let mut jtg = vec![0.0; x.len()];
        sparse_transpose_mul_add(&self.j, &gamma, &mut jtg);
        let gradient: Vec<f64> = ae.iter().zip(&jtg).map(|(a, b)| a - b).collect();
        let hessian = hessian.then(|| {
            let mut vals = vec![0.0; self.pattern.row_idx().len()];
            for (k, &p) in self.a_pos.iter().enumerate() {
                vals[p] += self.a.val()[k];
            }
            for (i, blk) in self.blocks.iter().enumerate() {
                let g = self.regs[i].g(st.ys[i], st.projections[i].region);
                add_jtgj(blk, &g, &mut vals);
            }
            MeritHessian::Sparse(SparseColMat::new(self.pattern.clone(), vals))
        });
        MeritEval {
            value,
            gradient,
            hessian,
        }
    }

    /// Eq. 26: `|D grad|` against `max(|D p|, |D j_c|)`, `p = A v`, `j_c = J' gamma =
    /// A (v - v*) - grad`.
    fn optimality(&self, x: &[f64], g: &[f64]) -> Optimality {
        let e: Vec<f64> = x.iter().zip(&self.v_star).map(|(a, b)| a - b).collect();
        let ae = self.a_times(&e);
        let p = self.a_times(x);
        let scaled = |f: &dyn Fn(usize) -> f64| {
            (0..x.len())
                .map(|k| (self.d[k] * f(k)).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        Optimality {
            residual: scaled(&|k| g[k]),
            scale: scaled(&|k| p[k]).max(scaled(&|k| ae[k] - g[k])),
        }
    }

    /// Section IV-C: with `dp = A dv` and `dv_c = J dv` cached for the line, each `alpha`
    /// costs one projection per contact and O(n_c) arithmetic.
    fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let c = self.line_cache(x, dx);
        let mut value = c.c0 + alpha * c.c1 + 0.5 * alpha * alpha * c.c2;
        let mut slope = c.c1 + alpha * c.c2;
        let mut curvature = c.c2;
        for (i, r) in self.regs.iter().enumerate() {
            let z = Vector3::new(
                c.vc[3 * i] + alpha * c.dvc[3 * i],
                c.vc[3 * i + 1] + alpha * c.dvc[3 * i + 1],
                c.vc[3 * i + 2] + alpha * c.dvc[3 * i + 2],
            );
            let dz = Vector3::new(c.dvc[3 * i], c.dvc[3 * i + 1], c.dvc[3 * i + 2]);
            let y = r.y_of(z, Vector3::zeros());
            let p = r.project(y);
            value += p.cost;
            slope -= dz.dot(&p.gamma);
            curvature += dz.dot(&(r.g(y, p.region) * dz));
        }
        LinePoint {
            value,
            slope,
            curvature,
        }
    }
}

/// Adds `J_i' G J_i` to the Hessian's values at the block's positions.
fn add_jtgj(blk: &ContactBlock, g: &Matrix3<f64>, vals: &mut [f64]) {
    let m = blk.cols.len();
    // G J_i (3 x m), then J_i' (G J_i).
    let mut gj = vec![0.0; 3 * m];
    for r in 0..3 {
        for k in 0..m {
            gj[r * m + k] = (0..3).map(|s| g[(r, s)] * blk.rows[s * m + k]).sum();
        }
    }
    for b in 0..m {
        for a in 0..m {
            let v: f64 = (0..3).map(|r| blk.rows[r * m + a] * gj[r * m + b]).sum();
            vals[blk.pos[b * m + a]] += v;
        }
    }
}

/// `S[rows, cols]` with index maps (`usize::MAX`: dropped).
fn restrict(
    s: &SparseColMat<usize, f64>,
    row_map: &[usize],
    col_map: &[usize],
    nrows: usize,
    ncols: usize,
) -> SparseColMat<usize, f64> {
    let (cp, ri, v) = (s.symbolic().col_ptr(), s.symbolic().row_idx(), s.val());
    let mut t = Vec::new();
    for c in 0..s.ncols() {
        if col_map[c] == usize::MAX {
            continue;
        }
        for k in cp[c]..cp[c + 1] {
            if row_map[ri[k]] != usize::MAX {
                t.push(faer::sparse::Triplet::new(row_map[ri[k]], col_map[c], v[k]));
            }
        }
    }
    SparseColMat::try_new_from_triplets(nrows, ncols, &t).expect("indices come from a valid matrix")
}

/// `diag(A)^-1/2` (1 where the diagonal is not positive).
fn diag_inv_sqrt(a: &SparseColMat<usize, f64>) -> Vec<f64> {
    let (cp, ri, v) = (a.symbolic().col_ptr(), a.symbolic().row_idx(), a.val());
    (0..a.ncols())
        .map(|c| {
            let d: f64 = (cp[c]..cp[c + 1])
                .filter(|&k| ri[k] == c)
                .map(|k| v[k])
                .sum();
            if d > 0.0 {
                1.0 / d.sqrt()
            } else {
                1.0
            }
        })
        .collect()
}

/// The Hessian's pattern (`A`'s plus each contact's dense block), where `A`'s values land, and
/// each contact's block.
fn hessian_pattern(
    a: &SparseColMat<usize, f64>,
    j: &SparseColMat<usize, f64>,
) -> (SymbolicSparseColMat<usize>, Vec<usize>, Vec<ContactBlock>) {
    let n = a.ncols();
    let nc = j.nrows() / 3;
    // Per contact: the columns its rows touch and the rows' values there.
    let (jcp, jri, jv) = (j.symbolic().col_ptr(), j.symbolic().row_idx(), j.val());
    let mut cols: Vec<Vec<usize>> = vec![Vec::new(); nc];
    for c in 0..n {
        for &r in &jri[jcp[c]..jcp[c + 1]] {
            let i = r / 3;
            if cols[i].last() != Some(&c) {
                cols[i].push(c);
            }
        }
    }
    let mut rows: Vec<Vec<f64>> = cols.iter().map(|cs| vec![0.0; 3 * cs.len()]).collect();
    for c in 0..n {
        for k in jcp[c]..jcp[c + 1] {
            let (i, r) = (jri[k] / 3, jri[k] % 3);
            let m = cols[i].len();
            if let Ok(p) = cols[i].binary_search(&c) {
                rows[i][r * m + p] += jv[k];
            }
        }
    }
    // Column sets of the pattern: rows pushed unsorted, then sorted and deduplicated once (a
    // set per column was about 5% of a clutter step in tree inserts and allocations).
    let (acp, ari) = (a.symbolic().col_ptr(), a.symbolic().row_idx());
    let mut pat: Vec<Vec<usize>> = (0..n)
        .map(|c| {
            let mut v = Vec::with_capacity(acp[c + 1] - acp[c] + 1);
            v.push(c);
            v.extend_from_slice(&ari[acp[c]..acp[c + 1]]);
            v
        })
        .collect();
    for cs in &cols {
        for &b in cs {
            pat[b].extend_from_slice(cs);
        }
    }
    let mut col_ptr = vec![0usize; n + 1];
    let mut row_idx = Vec::new();
    for (c, rows) in pat.iter_mut().enumerate() {
        rows.sort_unstable();
        rows.dedup();
        row_idx.extend_from_slice(rows);
        col_ptr[c + 1] = row_idx.len();
    }
    let position = |r: usize, c: usize| -> usize {
        col_ptr[c]
            + row_idx[col_ptr[c]..col_ptr[c + 1]]
                .binary_search(&r)
                .expect("the entry is in the pattern by construction")
    };
    let mut a_pos = Vec::with_capacity(ari.len());
    for c in 0..n {
        for &r in &ari[acp[c]..acp[c + 1]] {
            a_pos.push(position(r, c));
        }
    }
    let blocks = cols
        .into_iter()
        .zip(rows)
        .map(|(cs, rws)| {
            let pos = cs
                .iter()
                .flat_map(|&b| cs.iter().map(move |&a| (a, b)))
                .map(|(a, b)| position(a, b))
                .collect();
            ContactBlock {
                cols: cs,
                rows: rws,
                pos,
            }
        })
        .collect();
    let pattern = SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
    (pattern, a_pos, blocks)
}
