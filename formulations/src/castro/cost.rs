//! SAP's unconstrained convex cost (Castro et al., eq. 24) as a production [`Merit`]:
//! `l_p(v) = |v - v*|_A^2 / 2 + sum_i l_R,i(y_i(v))`, `y_i = -R_i^-1 (J_i v + b_i - v^_i)`,
//! with gradient `A (v - v*) - J' gamma` (appendix D-C), the Hessian `H = A + J' G J`
//! (section IV-A), the O(n) line derivatives of section IV-C, and the unit-aware stopping
//! measure of eq. 26 with `D = diag(A)^-1/2`.
//!
//! Only the kinematic trees that some contact touches enter (Drake does this, and the paper's
//! Fig. 2 sparsity argument assumes it): the rest keep `v = v*`, which is optimal for them since
//! `A` is block diagonal by tree. The unknowns are the touched trees' velocities, tree by tree.
//!
//! # Where the time goes, and what is done about it
//!
//! Algorithm 2 spends its time in three places per Newton iteration: the projections of every
//! contact (once for the point, once per line-search trial), the Hessian's assembly and
//! factorization, and the products with `A` and `J`. So:
//!
//! - Each contact keeps its Jacobian rows densely over the velocities they touch (one or two
//!   trees), so `J v`, `J' gamma` and `J' G J` are small dense loops.
//! - The Hessian's structure is fixed when the cost is built (section IV-D: regions that switch
//!   a contact's `G` to zero leave explicit zeros), so its analysis is made once per solve.
//!   Where every touched tree is small, `H` is factored by tree blocks ([`BlockCholesky`]:
//!   blocks known before any analysis, the ordering on the tree graph, dense block kernels);
//!   otherwise by faer's general sparse Cholesky, which the driver runs
//!   ([`HessianFactorization`]).
//! - One workspace per cost holds the last evaluated point's projections (the Newton system
//!   at that point reuses them) and the line-search cache (`J dv` and the three quadratic
//!   coefficients of `|v - v*|_A^2`, made once per direction): after the build, an iteration
//!   allocates only its direction and gradient.
//! - The unknowns are laid out island by island (trees joined by contacts), and the cost is
//!   the sum of the islands' costs ([`Merit::groups`]): a driver steps each island on its own,
//!   with its own line over its own contacts, and an island that has converged rests, where one
//!   Newton step of the whole problem would factor and search every island every iteration
//!   (MuJoCo solves island by island too). The workspace re-projects only the islands whose
//!   velocities moved.
//! - The Hessian is kept across iterations: a contact adds `J_i' (G_i - G_i,old) J_i` only
//!   when its `G_i` changed (in stiction `G_i = R_i^-1`, constant), and an island none of whose
//!   contacts changed keeps its factor (MuJoCo updates its factor where few constraints
//!   change; here whole islands are refactored, blocks being small).

use std::sync::Mutex;

use contactlab_core::block_cholesky::{AnalysisMemo, BlockCholesky};
use contactlab_core::generalized::{sparse_mul_add, GeneralizedProblem};
use contactlab_core::{
    Cholesky, CoreError, LinePoint, Matrix, Merit, MeritEval, MeritHessian, Optimality, OwnNewton,
};
use faer::sparse::{SparseColMat, SymbolicSparseColMat, Triplet};
use faer::{Mat, MatMut, Side};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::projection::{ContactRegularization, Projection, Projector, SapRegion};
use super::rows::ContactRows;
use layout::BlockLayout;
use shape::{shape_of, Shaped};
pub(in crate::castro) use shape::{turned_around, Pattern};

mod layout;
mod shape;

/// Which factorization solves SAP's Newton system `H d = -grad`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HessianFactorization {
    /// Tree blocks when every touched tree has at most [`TREE_BLOCK_MAX`] velocities, else
    /// sparse.
    #[default]
    Auto,
    /// Dense blocks per kinematic tree ([`BlockCholesky`]), whatever the trees' sizes.
    TreeBlocks,
    /// faer's sparse Cholesky on the scalar pattern, run by the driver.
    Sparse,
}

/// Largest tree (in velocities) that [`HessianFactorization::Auto`] factors as a dense block:
/// a free body has 6, an arm or a legged robot 7 to a few tens; a tree of hundreds (a contact
/// problem in contact space, `A = W^-1`) keeps the sparsity inside it.
pub const TREE_BLOCK_MAX: usize = 64;

/// Where `A`'s and each contact's `J_i' G J_i` values land in the Hessian's values
/// (`usize::MAX`: not stored, the symmetric entry is).
#[derive(Debug, Clone)]
struct HessianMap {
    /// Per stored entry of `A` (column by column), its position.
    a_pos: Vec<usize>,
    /// Per contact, the stored entries of its `m x m` block, from `entry_start[i]` (the
    /// scalar pattern's map; empty with tree blocks).
    entry_start: Vec<usize>,
    entries: Vec<Entry>,
    /// Per contact, the stored blocks its `J_i' G_i J_i` lands in, from `pair_start[i]` (tree
    /// blocks only).
    pair_start: Vec<usize>,
    pairs: Vec<PairSlot>,
}

/// One block of a contact's `J_i' G_i J_i` in the tree-block factor: rows `a0..a0 + na` and
/// columns `b0..b0 + nb` of the contact's columns, stored column-major from `offset` with
/// leading dimension `na` (of a diagonal block only the lower triangle).
#[derive(Debug, Clone, Copy)]
struct PairSlot {
    a0: u32,
    na: u32,
    b0: u32,
    nb: u32,
    offset: usize,
    diagonal: bool,
}

/// One stored entry of a contact's `J_i' G_i J_i`: rows `a` and `b` of its columns, and where
/// it lands (entries the symmetric storage does not keep are left out).
#[derive(Debug, Clone, Copy)]
struct Entry {
    a: u32,
    b: u32,
    at: usize,
}

/// The Hessian's structure: tree blocks, or a scalar pattern for the driver's sparse Cholesky.
#[derive(Debug, Clone)]
enum Structure {
    Blocks,
    Sparse(SymbolicSparseColMat<usize>),
}

/// The last evaluated point and the line-search cache.
#[derive(Debug, Clone, Default)]
struct Work {
    /// The point the fields below were computed at, once `evaluated`.
    x: Vec<f64>,
    evaluated: bool,
    /// `x - v*` and `A (x - v*)`.
    e: Vec<f64>,
    ae: Vec<f64>,
    /// Per contact, `y_i` and its projection at `x`.
    ys: Vec<Vector3<f64>>,
    projections: Vec<Projection>,
    value: f64,
    /// Per island, its part of the value at `x`.
    island_value: Vec<f64>,
    /// Per island, the line `x_k + alpha dx_k` its cache is for (NaN: none), and the quadratic's
    /// coefficients on the island; `A dx` of the island being cached.
    island_line_x: Vec<f64>,
    island_line_dx: Vec<f64>,
    island_line_c: Vec<[f64; 3]>,
    scratch_adx: Vec<f64>,
    /// Per contact, `J_i x + b_i - v^_i` at `x`.
    z: Vec<Vector3<f64>>,
    /// The gradient at `x`.
    grad: Vec<f64>,
    /// The Hessian `A + sum_i J_i' G_i J_i` in the tree-block factor's layout, kept across
    /// iterations with each contact's `G_i` as added (`h_ready`: it holds them), and per island
    /// whether the factor holds this `H`'s factor: a contact whose `G_i` did not change (in
    /// stiction `G_i = R_i^-1`) adds nothing, and an island none of whose contacts changed keeps
    /// its factor.
    h: Vec<f64>,
    g_used: Vec<Matrix3<f64>>,
    h_ready: bool,
    factored: Vec<bool>,
    refactor: Vec<bool>,
    /// The line `x + alpha dx` the cache is for.
    line_x: Vec<f64>,
    line_dx: Vec<f64>,
    /// `J x + b - v^` and `J dx`, and the quadratic's `c0 + c1 alpha + c2 alpha^2 / 2`.
    line_z: Vec<Vector3<f64>>,
    line_dz: Vec<Vector3<f64>>,
    line_c: [f64; 3],
    /// The tree-block factor (tree-block structure only).
    chol: Option<BlockCholesky>,
    /// Whether the factor's analysis has been reported to a driver.
    analysis_reported: bool,
}

/// Borrowed data of the primal problem (eq. 19), for the conic statement.
pub(super) struct PrimalParts<'a> {
    pub a: &'a SparseColMat<usize, f64>,
    pub j: SparseColMat<usize, f64>,
    pub v_star: &'a [f64],
    pub offset: &'a [f64],
    pub regs: &'a [ContactRegularization],
}

/// SAP's cost on the touched trees of one step problem.
#[derive(Debug)]
pub struct SapCost {
    /// Velocity indices (into the full problem) of the unknowns, tree by tree.
    dofs: Vec<usize>,
    /// The full problem's `v*`.
    full_v_star: Vec<f64>,
    /// `A` restricted to the unknowns (both triangles).
    a: SparseColMat<usize, f64>,
    /// `A v*` on the unknowns (`p = A v = A (v - v*) + A v*` in eq. 26).
    a_v_star: Vec<f64>,
    /// `J` restricted to the unknowns, contact by contact.
    rows: ContactRows,
    /// `v*` restricted to the unknowns.
    v_star: Vec<f64>,
    /// `b - v^` per contact row: the constant part of `J v + b - v^`.
    offset: Vec<f64>,
    /// Per contact, `R` and `mu`.
    regs: Vec<ContactRegularization>,
    /// Per contact, its projection with the regularisation's quotients made once.
    projectors: Vec<Projector>,
    /// `D = diag(A)^-1/2` on the unknowns (eq. 25; `A = M` for explicit schemes).
    d: Vec<f64>,
    structure: Structure,
    map: HessianMap,
    /// The contact velocities' offset `b` (for reporting `v_c = J v + b`).
    b: Vec<f64>,
    /// The islands' unknowns (consecutive ranges; one island when nothing separates).
    islands: Vec<std::ops::Range<usize>>,
    /// Island `k`'s contacts are `island_contacts[island_start[k]..island_start[k + 1]]`.
    island_start: Vec<usize>,
    island_contacts: Vec<usize>,
    /// Block (of the tree-block factor) -> island.
    island_of_block: Vec<usize>,
    work: Mutex<Work>,
}

impl Clone for SapCost {
    fn clone(&self) -> Self {
        let work = self.work.lock().unwrap_or_else(|p| p.into_inner()).clone();
        SapCost {
            dofs: self.dofs.clone(),
            full_v_star: self.full_v_star.clone(),
            a: self.a.clone(),
            a_v_star: self.a_v_star.clone(),
            rows: self.rows.clone(),
            v_star: self.v_star.clone(),
            offset: self.offset.clone(),
            regs: self.regs.clone(),
            projectors: self.projectors.clone(),
            d: self.d.clone(),
            structure: self.structure.clone(),
            map: self.map.clone(),
            b: self.b.clone(),
            islands: self.islands.clone(),
            island_start: self.island_start.clone(),
            island_contacts: self.island_contacts.clone(),
            island_of_block: self.island_of_block.clone(),
            work: Mutex::new(work),
        }
    }
}

/// SAP's Hessian factored at a point ([`SapCost::factored_hessian`]), on the cost's unknowns.
#[derive(Debug)]
pub enum FactoredHessian {
    /// The tree-block factor.
    Blocks(BlockCholesky),
    /// The sparse Cholesky factor of the scalar pattern.
    Scalar(Cholesky),
}

impl FactoredHessian {
    /// Overwrites `rhs` (one entry per unknown) with `H^-1 rhs`.
    pub fn solve_in_place(&self, rhs: &mut [f64]) {
        match self {
            FactoredHessian::Blocks(c) => c.solve_in_place(rhs),
            FactoredHessian::Scalar(c) => {
                let n = rhs.len();
                c.solve_in_place(MatMut::from_column_major_slice_mut(rhs, n, 1));
            }
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    contactlab_core::drivers::kit::dot(a, b)
}

/// `z` as a vector.
#[inline]
fn v3(z: &[f64], i: usize) -> Vector3<f64> {
    Vector3::new(z[3 * i], z[3 * i + 1], z[3 * i + 2])
}

impl SapCost {
    /// The cost of `problem` with per-contact regularisation `regs` and biases `v_hat` (three per
    /// contact, normal first: SAP's model has only a normal bias, MuJoCo's a full one), its
    /// Newton system factored as [`HessianFactorization::Auto`] chooses.
    pub fn new(
        problem: &GeneralizedProblem,
        regs: Vec<ContactRegularization>,
        v_hat: &[f64],
    ) -> SapCost {
        SapCost::with_factorization(problem, regs, v_hat, HessianFactorization::Auto)
    }

    /// [`SapCost::new`] with the factorization chosen.
    pub fn with_factorization(
        problem: &GeneralizedProblem,
        regs: Vec<ContactRegularization>,
        v_hat: &[f64],
        factorization: HessianFactorization,
    ) -> SapCost {
        let turned = turned_around(problem, factorization);
        SapCost::from_rows(problem, turned, regs, v_hat, factorization)
    }

    /// [`SapCost::with_factorization`] from `J` already turned around contact by contact
    /// (the build shares it with the regularisation), with what the memo in force keeps of its
    /// patterns ([`Pattern`]).
    pub(super) fn from_rows(
        problem: &GeneralizedProblem,
        (mut rows, pattern): (ContactRows, Pattern),
        regs: Vec<ContactRegularization>,
        v_hat: &[f64],
        factorization: HessianFactorization,
    ) -> SapCost {
        let nv = problem.num_dofs();
        let Shaped { shape, a, reused } = shape_of(problem, &mut rows, factorization, pattern);
        let layout = shape.layout;
        let n = layout.dofs.len();
        let v_star: Vec<f64> = layout.dofs.iter().map(|&c| problem.v_star[c]).collect();
        let mut a_v_star = vec![0.0; n];
        sparse_mul_add(&a, &v_star, &mut a_v_star);
        let offset: Vec<f64> = problem.b.iter().zip(v_hat).map(|(b, v)| b - v).collect();
        let d = diag_inv_sqrt(&a);
        let nc = regs.len();
        let ni = layout.islands.len();
        let work = Work {
            e: vec![0.0; n],
            ae: vec![0.0; n],
            ys: vec![Vector3::zeros(); nc],
            projections: vec![Projection::none(); nc],
            island_value: vec![0.0; ni],
            island_line_x: vec![f64::NAN; n],
            island_line_dx: vec![f64::NAN; n],
            island_line_c: vec![[0.0; 3]; ni],
            scratch_adx: vec![0.0; n],
            z: vec![Vector3::zeros(); nc],
            grad: vec![0.0; n],
            g_used: vec![Matrix3::zeros(); nc],
            factored: vec![false; ni],
            refactor: vec![false; ni],
            line_z: vec![Vector3::zeros(); nc],
            line_dz: vec![Vector3::zeros(); nc],
            chol: shape.chol,
            // A reused analysis was not made for this problem: no direction reports one.
            analysis_reported: reused,
            ..Work::default()
        };
        debug_assert_eq!(nv, problem.v_star.len());
        SapCost {
            dofs: layout.dofs,
            full_v_star: problem.v_star.clone(),
            a,
            a_v_star,
            rows,
            v_star,
            offset,
            projectors: regs.iter().copied().map(Projector::new).collect(),
            regs,
            d,
            structure: shape.structure,
            map: shape.map,
            b: problem.b.clone(),
            islands: layout.islands,
            island_start: shape.island_start,
            island_contacts: shape.island_contacts,
            island_of_block: shape.island_of_block,
            work: Mutex::new(work),
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

    /// Whether the Newton system is factored by tree blocks (else by the driver's sparse
    /// Cholesky).
    pub fn factors_by_tree_blocks(&self) -> bool {
        matches!(self.structure, Structure::Blocks)
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
    pub(super) fn primal_parts(&self) -> Result<PrimalParts<'_>, CoreError> {
        let mut t = Vec::with_capacity(self.rows.vals.len());
        for i in 0..self.rows.num() {
            let (cols, rows) = self.rows.of(i);
            let m = cols.len();
            for r in 0..3 {
                for (k, &c) in cols.iter().enumerate() {
                    t.push(Triplet::new(3 * i + r, c, rows[r * m + k]));
                }
            }
        }
        let j = SparseColMat::try_new_from_triplets(3 * self.regs.len(), self.dofs.len(), &t)
            .map_err(|e| CoreError::LinearAlgebra(format!("SAP's J: {e:?}")))?;
        Ok(PrimalParts {
            a: &self.a,
            j,
            v_star: &self.v_star,
            offset: &self.offset,
            regs: &self.regs,
        })
    }

    /// Per contact, its regularisation.
    pub fn regularizations(&self) -> &[ContactRegularization] {
        &self.regs
    }

    /// Contact velocities `v_c = J v + b`.
    pub fn contact_velocities(&self, x: &[f64]) -> Vec<f64> {
        let v = self.velocities_of(x);
        (0..self.regs.len())
            .flat_map(|i| {
                let z = self.rows.times(i, v) + v3(&self.b, i);
                [z[0], z[1], z[2]]
            })
            .collect()
    }

    /// `J_i v + b_i - v^_i`.
    #[inline]
    fn biased(&self, i: usize, v: &[f64]) -> Vector3<f64> {
        self.rows.times(i, v) + v3(&self.offset, i)
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
            let gamma = self
                .projectors
                .iter()
                .enumerate()
                .flat_map(|(i, r)| {
                    let g = r.project(r.y_of(self.biased(i, x))).gamma;
                    [g[0], g[1], g[2]]
                })
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
        self.kept_impulses(x)
            .unwrap_or_else(|| self.primal_pair(x).1)
    }

    /// `gamma(v)` from the last evaluation when it was at `v` (a driver's last act is to
    /// evaluate its answer): the same projections of the same `y`, not recomputed.
    fn kept_impulses(&self, v: &[f64]) -> Option<Vec<f64>> {
        let w = self.lock();
        let kept = w.evaluated && v.len() == self.v_star.len() && w.x == v;
        kept.then(|| {
            w.projections
                .iter()
                .flat_map(|p| [p.gamma[0], p.gamma[1], p.gamma[2]])
                .collect()
        })
    }

    /// Each contact's region at `x`.
    pub fn regions(&self, x: &[f64]) -> Vec<SapRegion> {
        let v = self.velocities_of(x);
        self.projectors
            .iter()
            .enumerate()
            .map(|(i, r)| r.region(r.y_of(self.biased(i, v))))
            .collect()
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
        let mut gradient = ae.clone();
        for i in 0..self.regs.len() {
            self.rows.sub_transpose(i, &v3(&gamma, i), &mut gradient);
        }
        let o = self.optimality_with(&ae, &gradient);
        let nc = self.regs.len().max(1) as f64;
        let (mut sum, mut reg_cost) = (0.0, 0.0);
        for (i, r) in self.regs.iter().enumerate() {
            let gam = v3(&gamma, i);
            let rg = Vector3::new(r.rn * gam[0], r.rt * gam[1], r.rt * gam[2]);
            let g = self.biased(i, v) + rg;
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

    /// The velocities (indices into the full problem) of the unknowns, in the unknowns' order.
    pub fn unknown_velocities(&self) -> &[usize] {
        &self.dofs
    }

    /// The Hessian `H = A + J' G J` at `x`, factored by SAP's own path: the tree-block factor
    /// where the cost factors by tree blocks, else the sparse Cholesky of its scalar pattern.
    /// For the derivatives at an answer ([`super::sensitivity`]), which solve with `H` once per
    /// product: one factorization costs about one Newton iteration of the solve.
    pub fn factored_hessian(&self, x: &[f64]) -> Result<FactoredHessian, CoreError> {
        let not_pd = |detail: String| {
            CoreError::LinearAlgebra(format!("SAP's Hessian is not positive definite: {detail}"))
        };
        let mut guard = self.lock();
        self.evaluate_into(x, &mut guard);
        let w = &mut *guard;
        match &self.structure {
            Structure::Blocks => match self.factor_tree_blocks(w) {
                None => Err(CoreError::LinearAlgebra(
                    "SAP's tree-block factor is missing".into(),
                )),
                Some(Err(b)) => Err(not_pd(format!("a pivot of tree block {b}"))),
                Some(Ok(chol)) => Ok(FactoredHessian::Blocks(chol.clone())),
            },
            Structure::Sparse(pattern) => {
                let h = Matrix::Sparse(self.sparse_hessian(pattern, w));
                Cholesky::new("SAP's Hessian", &h)
                    .map(FactoredHessian::Scalar)
                    .map_err(|e| not_pd(e.to_string()))
            }
        }
    }

    /// Assembles `A + J' G J` at the workspace's point into the kept tree-block factor and
    /// factors it (`None` without one; `Err(b)`: block `b` met a pivot that is not positive).
    fn factor_tree_blocks<'w>(&self, w: &'w mut Work) -> Option<Result<&'w BlockCholesky, usize>> {
        let chol = w.chol.as_mut()?;
        chol.clear();
        self.assemble(&w.ys, &w.projections, chol.values_mut(), None);
        w.factored.iter_mut().for_each(|f| *f = false);
        Some(chol.factor().map(|()| &*chol))
    }

    /// `A + J' G J` at the workspace's point on the scalar pattern `pattern`.
    fn sparse_hessian(
        &self,
        pattern: &SymbolicSparseColMat<usize>,
        w: &Work,
    ) -> SparseColMat<usize, f64> {
        let mut vals = vec![0.0; pattern.row_idx().len()];
        self.assemble(&w.ys, &w.projections, &mut vals, None);
        SparseColMat::new(pattern.clone(), vals)
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

    /// Projects every contact at `x` into `w` (value, `A (x - v*)`, `y`, projections), island
    /// by island, skipping the islands whose unknowns `w` already holds.
    fn evaluate_into(&self, x: &[f64], w: &mut Work) {
        // A cost with no unknowns still projects its contacts once.
        let fresh = !w.evaluated || w.x.len() != x.len();
        if !fresh && w.x == x {
            return;
        }
        w.evaluated = true;
        if fresh {
            w.x.clear();
            w.x.extend_from_slice(x);
        }
        for (k, r) in self.islands.iter().enumerate() {
            if !fresh && w.x[r.clone()] == x[r.clone()] {
                continue;
            }
            w.x[r.clone()].copy_from_slice(&x[r.clone()]);
            // A (x - v*) from x - v* (not A x - A v*, which loses the digits of a small
            // difference near the optimum, where the gradient is that difference).
            for c in r.clone() {
                w.e[c] = x[c] - self.v_star[c];
            }
            self.a_times_on(r.clone(), &w.e, &mut w.ae);
            let mut value = 0.5 * dot(&w.e[r.clone()], &w.ae[r.clone()]);
            for &i in self.contacts_of(k) {
                let p = &self.projectors[i];
                let z = self.biased(i, x);
                w.z[i] = z;
                let y = p.y_of(z);
                let proj = p.project(y);
                value += proj.cost;
                w.ys[i] = y;
                w.projections[i] = proj;
            }
            w.island_value[k] = value;
            // -J' gamma first, then A (x - v*) added: the two nearly cancel at the optimum,
            // and summing each on its own keeps the gradient's floor at the rounding of its
            // terms.
            w.grad[r.clone()].iter_mut().for_each(|v| *v = 0.0);
            for &i in self.contacts_of(k) {
                let p = &w.projections[i];
                if p.region != SapRegion::NoContact {
                    self.rows.sub_transpose(i, &p.gamma, &mut w.grad);
                }
            }
            for c in r.clone() {
                w.grad[c] += w.ae[c];
            }
        }
        w.value = w.island_value.iter().sum();
    }

    /// Island `k`'s contacts.
    fn contacts_of(&self, k: usize) -> &[usize] {
        &self.island_contacts[self.island_start[k]..self.island_start[k + 1]]
    }

    /// `out[r] = A y[r]` for the unknowns `r` of whole trees (`A` couples within a tree only).
    fn a_times_on(&self, r: std::ops::Range<usize>, y: &[f64], out: &mut [f64]) {
        let (cp, ri, v) = (
            self.a.symbolic().col_ptr(),
            self.a.symbolic().row_idx(),
            self.a.val(),
        );
        out[r.clone()].iter_mut().for_each(|o| *o = 0.0);
        for c in r {
            for k in cp[c]..cp[c + 1] {
                out[ri[k]] += v[k] * y[c];
            }
        }
    }

    /// Makes island `k`'s line cache for `(x, dx)` if it is not the current one: the
    /// quadratic's coefficients on the island and its contacts' `J x + b - v^` and `J dx`,
    /// from the workspace's `x - v*`, `A (x - v*)` and `J x + b - v^` at `x`.
    fn island_line_cache(&self, k: usize, x: &[f64], dx: &[f64], w: &mut Work) {
        let r = self.islands[k].clone();
        if w.island_line_x[r.clone()] == x[r.clone()]
            && w.island_line_dx[r.clone()] == dx[r.clone()]
        {
            return;
        }
        // The driver starts its lines at the point it evaluated; any other start is evaluated.
        if !w.evaluated || w.x.len() != x.len() || w.x[r.clone()] != x[r.clone()] {
            self.evaluate_into(x, w);
        }
        self.a_times_on(r.clone(), dx, &mut w.scratch_adx);
        let (e, ae, adx) = (&w.e[r.clone()], &w.ae[r.clone()], &w.scratch_adx[r.clone()]);
        w.island_line_c[k] = [
            0.5 * dot(e, ae),
            dot(&dx[r.clone()], ae),
            dot(&dx[r.clone()], adx),
        ];
        for &i in self.contacts_of(k) {
            w.line_z[i] = w.z[i];
            w.line_dz[i] = self.rows.times(i, dx);
        }
        w.island_line_x[r.clone()].copy_from_slice(&x[r.clone()]);
        w.island_line_dx[r.clone()].copy_from_slice(&dx[r]);
    }

    /// The gradient `A (x - v*) - J' gamma` from an evaluated workspace.
    fn gradient_from(&self, w: &Work, g: &mut [f64]) {
        g.copy_from_slice(&w.grad);
    }

    /// Adds `A` and every contact's `J_i' G_i J_i` at the workspace's point into `vals`, on the
    /// islands `active` marks (all when `None`).
    fn assemble(
        &self,
        ys: &[Vector3<f64>],
        projections: &[Projection],
        vals: &mut [f64],
        active: Option<&[bool]>,
    ) {
        let mut gj = Vec::new();
        for k in 0..self.islands.len() {
            if active.is_some_and(|a| !a[k]) {
                continue;
            }
            self.add_a(k, vals);
            for &i in self.contacts_of(k) {
                if projections[i].region == SapRegion::NoContact {
                    continue;
                }
                let g = self.projectors[i].g(ys[i], projections[i].region);
                let (cols, rows) = self.rows.of(i);
                g_times_rows(cols.len(), rows, &g, &mut gj);
                if self.map.pairs.is_empty() {
                    let entries =
                        &self.map.entries[self.map.entry_start[i]..self.map.entry_start[i + 1]];
                    add_jtgj(cols.len(), rows, &gj, entries, vals);
                } else {
                    let pairs = &self.map.pairs[self.map.pair_start[i]..self.map.pair_start[i + 1]];
                    add_jtgj_blocks(cols.len(), rows, &gj, pairs, vals);
                }
            }
        }
    }

    /// Adds island `k`'s part of `A` into `vals`.
    fn add_a(&self, k: usize, vals: &mut [f64]) {
        let acp = self.a.symbolic().col_ptr();
        let r = &self.islands[k];
        for e in acp[r.start]..acp[r.end] {
            let p = self.map.a_pos[e];
            if p != usize::MAX {
                vals[p] += self.a.val()[e];
            }
        }
    }

    /// The scaled optimality of eq. 26 from `A (v - v*)` and the gradient.
    fn optimality_with(&self, ae: &[f64], g: &[f64]) -> Optimality {
        eq26_optimality(&self.d, &self.a_v_star, ae, g)
    }

    /// Section IV-C at `alpha` from a line cache: the quadratic `c0 + c1 alpha + c2 alpha^2 / 2`
    /// and, per contact of `contacts`, one projection at `z + alpha dz`.
    fn line_point(
        &self,
        w: &Work,
        [c0, c1, c2]: [f64; 3],
        contacts: impl Iterator<Item = usize>,
        alpha: f64,
    ) -> LinePoint {
        let mut value = c0 + alpha * c1 + 0.5 * alpha * alpha * c2;
        let mut slope = c1 + alpha * c2;
        let mut curvature = c2;
        for i in contacts {
            let r = &self.projectors[i];
            let dz = w.line_dz[i];
            let y = r.y_of(w.line_z[i] + alpha * dz);
            let p = r.project(y);
            if p.region == SapRegion::NoContact {
                continue;
            }
            value += p.cost;
            slope -= dz.dot(&p.gamma);
            curvature += r.curvature(y, p.region, dz);
        }
        LinePoint {
            value,
            slope,
            curvature,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Work> {
        self.work.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes the line cache for `(x, dx)` if it is not the current one.
    fn line_cache(&self, x: &[f64], dx: &[f64], w: &mut Work) {
        if w.line_x.len() == x.len() && w.line_x == x && w.line_dx == dx {
            return;
        }
        self.evaluate_into(x, w);
        let adx = self.a_times(dx);
        w.line_c = [0.5 * dot(&w.e, &w.ae), dot(dx, &w.ae), dot(dx, &adx)];
        for i in 0..self.regs.len() {
            w.line_z[i] = w.z[i];
            w.line_dz[i] = self.rows.times(i, dx);
        }
        w.line_x.clear();
        w.line_x.extend_from_slice(x);
        w.line_dx.clear();
        w.line_dx.extend_from_slice(dx);
    }
}

impl Merit for SapCost {
    fn dim(&self) -> usize {
        self.dofs.len()
    }

    fn value(&self, x: &[f64]) -> f64 {
        let mut w = self.lock();
        self.evaluate_into(x, &mut w);
        w.value
    }

    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        let mut w = self.lock();
        self.evaluate_into(x, &mut w);
        self.gradient_from(&w, g);
    }

    /// The dense Hessian, for generic dense drivers and diagnostics on small problems.
    fn hessian(&self, x: &[f64], mut h: MatMut<'_, f64>) {
        let mut w = self.lock();
        self.evaluate_into(x, &mut w);
        for c in 0..h.ncols() {
            for r in 0..h.nrows() {
                h[(r, c)] = 0.0;
            }
        }
        let (acp, ari, av) = (
            self.a.symbolic().col_ptr(),
            self.a.symbolic().row_idx(),
            self.a.val(),
        );
        for c in 0..self.a.ncols() {
            for k in acp[c]..acp[c + 1] {
                h[(ari[k], c)] += av[k];
            }
        }
        for (i, r) in self.projectors.iter().enumerate() {
            let g = r.g(w.ys[i], w.projections[i].region);
            let (cols, rows) = self.rows.of(i);
            let m = cols.len();
            for (b, &cb) in cols.iter().enumerate() {
                for (a, &ca) in cols.iter().enumerate() {
                    let mut v = 0.0;
                    for p in 0..3 {
                        for q in 0..3 {
                            v += rows[p * m + a] * g[(p, q)] * rows[q * m + b];
                        }
                    }
                    h[(ca, cb)] += v;
                }
            }
        }
    }

    /// Value, gradient and, with `hessian`, `A + J' G J` from one projection of every contact:
    /// sparse on the scalar pattern, or dense when the cost factors by tree blocks (its own
    /// Newton path, [`Merit::newton_direction`], never forms it).
    fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        let mut gradient = vec![0.0; x.len()];
        let value = {
            let mut w = self.lock();
            self.evaluate_into(x, &mut w);
            self.gradient_from(&w, &mut gradient);
            w.value
        };
        let hessian = hessian.then(|| match &self.structure {
            Structure::Sparse(pattern) => {
                MeritHessian::Sparse(self.sparse_hessian(pattern, &self.lock()))
            }
            Structure::Blocks => MeritHessian::dense_of(self, x),
        });
        MeritEval {
            value,
            gradient,
            hessian,
        }
    }

    /// With tree blocks: assemble `A + J' G J` at `x` into the kept analysis, factor, solve.
    fn newton_direction(&self, x: &[f64], g: &[f64], d: &mut [f64]) -> OwnNewton {
        if !self.factors_by_tree_blocks() {
            return OwnNewton::NotProvided;
        }
        let mut guard = self.lock();
        self.evaluate_into(x, &mut guard);
        let w = &mut *guard;
        let chol = match self.factor_tree_blocks(w) {
            None => return OwnNewton::NotProvided,
            Some(Err(_)) => return OwnNewton::NotPositiveDefinite,
            Some(Ok(chol)) => chol,
        };
        for (dk, gk) in d.iter_mut().zip(g) {
            *dk = -gk;
        }
        chol.solve_in_place(d);
        let analysed = !w.analysis_reported;
        w.analysis_reported = true;
        OwnNewton::Solved { analysed }
    }

    /// Eq. 26: `|D grad|` against `max(|D p|, |D j_c|)`, `p = A v`, `j_c = J' gamma =
    /// A (v - v*) - grad`.
    fn optimality(&self, x: &[f64], g: &[f64]) -> Optimality {
        let mut w = self.lock();
        self.evaluate_into(x, &mut w);
        self.optimality_with(&w.ae, g)
    }

    /// Section IV-C: with `dp = A dv` and `dv_c = J dv` cached for the line, each `alpha`
    /// costs one projection per contact and O(n_c) arithmetic.
    fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let mut w = self.lock();
        self.line_cache(x, dx, &mut w);
        self.line_point(&w, w.line_c, 0..self.projectors.len(), alpha)
    }

    /// The islands: the cost is a sum over them (`A` is block diagonal by tree, and each
    /// contact's term depends on the trees it touches only), so their Newton systems and lines
    /// are independent. None when there is one.
    fn groups(&self) -> &[std::ops::Range<usize>] {
        if self.islands.len() > 1 {
            &self.islands
        } else {
            &[]
        }
    }

    /// Section IV-C's line on island `k` alone: its quadratic and its contacts.
    fn along_group(&self, k: usize, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        let mut w = self.lock();
        self.island_line_cache(k, x, dx, &mut w);
        let c = w.island_line_c[k];
        self.line_point(&w, c, self.contacts_of(k).iter().copied(), alpha)
    }

    /// Island `k`'s value at `x`, as the workspace summed it (the same sum as
    /// `along_group(k, x, dx, 0)`, term for term).
    fn group_value(&self, k: usize, x: &[f64], _dx: &[f64]) -> f64 {
        let mut w = self.lock();
        let r = self.islands[k].clone();
        if w.x.len() != x.len() || w.x[r.clone()] != x[r] {
            self.evaluate_into(x, &mut w);
        }
        w.island_value[k]
    }

    /// Eq. 26's residual `|D grad|` island by island.
    fn group_residuals(&self, _x: &[f64], g: &[f64], residuals: &mut [f64]) {
        for (out, r) in residuals.iter_mut().zip(&self.islands) {
            *out = r
                .clone()
                .map(|k| (self.d[k] * g[k]).powi(2))
                .sum::<f64>()
                .sqrt();
        }
    }

    /// With tree blocks, on the active islands: bring the kept `H` up to date (a contact adds
    /// `J_i' (G_i - G_i,old) J_i` when its `G_i` changed), refactor the islands whose `H`
    /// changed, and solve on them.
    fn group_newton_direction(
        &self,
        x: &[f64],
        g: &[f64],
        active: &[bool],
        d: &mut [f64],
    ) -> OwnNewton {
        if !self.factors_by_tree_blocks() {
            return OwnNewton::NotProvided;
        }
        let mut guard = self.lock();
        self.evaluate_into(x, &mut guard);
        let w = &mut *guard;
        let Some(chol) = w.chol.as_mut() else {
            return OwnNewton::NotProvided;
        };
        if !w.h_ready {
            w.h.clear();
            w.h.resize(chol.num_values(), 0.0);
            for k in 0..self.islands.len() {
                self.add_a(k, &mut w.h);
            }
            w.g_used.iter_mut().for_each(|g| *g = Matrix3::zeros());
            w.factored.iter_mut().for_each(|f| *f = false);
            w.h_ready = true;
        }
        let mut gj = Vec::new();
        for (k, &on) in active.iter().enumerate() {
            let mut changed = false;
            if on {
                for &i in self.contacts_of(k) {
                    let p = &w.projections[i];
                    let gi = match p.region {
                        SapRegion::NoContact => Matrix3::zeros(),
                        region => self.projectors[i].g(w.ys[i], region),
                    };
                    if gi != w.g_used[i] {
                        let (cols, rows) = self.rows.of(i);
                        g_times_rows(cols.len(), rows, &(gi - w.g_used[i]), &mut gj);
                        let pairs =
                            &self.map.pairs[self.map.pair_start[i]..self.map.pair_start[i + 1]];
                        add_jtgj_blocks(cols.len(), rows, &gj, pairs, &mut w.h);
                        w.g_used[i] = gi;
                        changed = true;
                    }
                }
            }
            w.refactor[k] = on && (changed || !w.factored[k]);
        }
        let refactor = &w.refactor;
        let factored = chol.factor_from(&w.h, |b| refactor[self.island_of_block[b]]);
        for (f, &r) in w.factored.iter_mut().zip(refactor) {
            if r {
                *f = factored.is_ok();
            }
        }
        if factored.is_err() {
            return OwnNewton::NotPositiveDefinite;
        }
        d.iter_mut().for_each(|v| *v = 0.0);
        for (r, _) in self.islands.iter().zip(active).filter(|(_, &a)| a) {
            for k in r.clone() {
                d[k] = -g[k];
            }
        }
        chol.solve_in_place_where(d, |b| active[self.island_of_block[b]]);
        let analysed = !w.analysis_reported;
        w.analysis_reported = true;
        OwnNewton::Solved { analysed }
    }
}

/// `gj = G_i J_i` (`J_i`: `3 x m` row-major, `gj` likewise).
fn g_times_rows(m: usize, rows: &[f64], g: &Matrix3<f64>, gj: &mut Vec<f64>) {
    gj.clear();
    gj.resize(3 * m, 0.0);
    for r in 0..3 {
        for k in 0..m {
            gj[r * m + k] =
                g[(r, 0)] * rows[k] + g[(r, 1)] * rows[m + k] + g[(r, 2)] * rows[2 * m + k];
        }
    }
}

/// Adds `J_i' G_i J_i` to `vals` at the stored entries, from `gj = G_i J_i`.
fn add_jtgj(m: usize, rows: &[f64], gj: &[f64], entries: &[Entry], vals: &mut [f64]) {
    for e in entries {
        let (a, b) = (e.a as usize, e.b as usize);
        vals[e.at] += rows[a] * gj[b] + rows[m + a] * gj[m + b] + rows[2 * m + a] * gj[2 * m + b];
    }
}

/// Adds `J_i' G_i J_i` to `vals` block by block (each stored block contiguous), from
/// `gj = G_i J_i`.
fn add_jtgj_blocks(m: usize, rows: &[f64], gj: &[f64], pairs: &[PairSlot], vals: &mut [f64]) {
    let (j0, j1, j2) = (&rows[..m], &rows[m..2 * m], &rows[2 * m..3 * m]);
    let (g0, g1, g2) = (&gj[..m], &gj[m..2 * m], &gj[2 * m..3 * m]);
    for p in pairs {
        let (a0, na, b0, nb) = (p.a0 as usize, p.na as usize, p.b0 as usize, p.nb as usize);
        for c in 0..nb {
            let (x0, x1, x2) = (g0[b0 + c], g1[b0 + c], g2[b0 + c]);
            let first = if p.diagonal { c } else { 0 };
            let col = &mut vals[p.offset + c * na..p.offset + (c + 1) * na];
            for r in first..na {
                col[r] += j0[a0 + r] * x0 + j1[a0 + r] * x1 + j2[a0 + r] * x2;
            }
        }
    }
}

/// `A` on the unknowns. `A` couples velocities of one tree only, and the layout keeps a tree's
/// velocities in their order, so each column's mapped rows stay ascending.
fn restrict_a(a: &SparseColMat<usize, f64>, layout: &BlockLayout) -> SparseColMat<usize, f64> {
    let (cp, ri, v) = (a.symbolic().col_ptr(), a.symbolic().row_idx(), a.val());
    let n = layout.dofs.len();
    let mut col_ptr = Vec::with_capacity(n + 1);
    col_ptr.push(0);
    let mut row_idx = Vec::new();
    let mut vals = Vec::new();
    for &c in &layout.dofs {
        for k in cp[c]..cp[c + 1] {
            let r = layout.map[ri[k]];
            if r != usize::MAX {
                row_idx.push(r);
                vals.push(v[k]);
            }
        }
        col_ptr.push(row_idx.len());
    }
    let pattern = SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
    SparseColMat::new(pattern, vals)
}

/// Eq. 26's measure with `D = diag(A)^-1/2` (`d`): the residual `|D grad|` and the scale
/// `max(|D p|, |D j_c|)`, from `A (v - v*)` (`ae`), `A v*` and the gradient `g = A (v - v*) -
/// J' gamma` (so `p = ae + A v*` and `j_c = ae - g`).
pub(super) fn eq26_optimality(d: &[f64], a_v_star: &[f64], ae: &[f64], g: &[f64]) -> Optimality {
    let (mut r2, mut p2, mut j2) = (0.0, 0.0, 0.0);
    for k in 0..g.len() {
        let dk = d[k];
        r2 += (dk * g[k]).powi(2);
        p2 += (dk * (ae[k] + a_v_star[k])).powi(2);
        j2 += (dk * (ae[k] - g[k])).powi(2);
    }
    Optimality {
        residual: r2.sqrt(),
        scale: p2.sqrt().max(j2.sqrt()),
    }
}

/// `diag(A)^-1/2` (1 where the diagonal is not positive).
pub(super) fn diag_inv_sqrt(a: &SparseColMat<usize, f64>) -> Vec<f64> {
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

/// The block analysis of `H = A + J' G J` (blocks: [`BlockLayout`]'s; edges: the pairs of blocks
/// a contact or `A` couples) and where `A`'s and each contact's values land. The lower triangle
/// of a diagonal block and one orientation of each coupled pair are stored.
fn tree_blocks(
    a: &SparseColMat<usize, f64>,
    rows: &ContactRows,
    layout: &BlockLayout,
    memo: Option<&mut AnalysisMemo>,
) -> Option<(BlockCholesky, bool, HessianMap)> {
    let sizes: Vec<usize> = layout.start.windows(2).map(|w| w[1] - w[0]).collect();
    let mut edges = Vec::new();
    let mut blocks: Vec<usize> = Vec::new();
    for i in 0..rows.num() {
        let (cols, _) = rows.of(i);
        // Columns ascend and trees are contiguous: consecutive distinct blocks.
        blocks.clear();
        blocks.extend(cols.iter().map(|&c| layout.block_of[c]));
        blocks.dedup();
        for x in 0..blocks.len() {
            for y in x + 1..blocks.len() {
                edges.push((blocks[x], blocks[y]));
            }
        }
    }
    let (acp, ari) = (a.symbolic().col_ptr(), a.symbolic().row_idx());
    for c in 0..a.ncols() {
        for &r in &ari[acp[c]..acp[c + 1]] {
            if layout.block_of[r] != layout.block_of[c] {
                edges.push((layout.block_of[r], layout.block_of[c]));
            }
        }
    }
    // Reused where a stepping caller put its memo in force (`block_cholesky::with_memo`).
    let (chol, reused) = match memo {
        Some(memo) => memo.factorization(&sizes, &edges),
        None => BlockCholesky::new(&sizes, &edges).map(|c| (c, false)),
    }
    .ok()?;
    // Consecutive entries mostly fall in the same pair of blocks: keep the last slot found.
    let last = std::cell::Cell::new((usize::MAX, usize::MAX, None));
    let entry = |r: usize, c: usize| -> usize {
        let (br, bc) = (layout.block_of[r], layout.block_of[c]);
        let (lr, lc) = (r - layout.start[br], c - layout.start[bc]);
        let slot = match last.get() {
            (a, b, slot) if (a, b) == (br, bc) => slot,
            _ => {
                let slot = chol.slot(br, bc);
                last.set((br, bc, slot));
                slot
            }
        };
        match slot {
            Some(s) if br == bc && lr >= lc => s.at(lr, lc),
            Some(s) if br != bc && !s.transposed => s.at(lr, lc),
            _ => usize::MAX,
        }
    };
    let mut a_pos = Vec::with_capacity(ari.len());
    for c in 0..a.ncols() {
        for &r in &ari[acp[c]..acp[c + 1]] {
            a_pos.push(entry(r, c));
        }
    }
    let (pair_start, pairs) = contact_pairs(rows, layout, &chol)?;
    Some((
        chol,
        reused,
        HessianMap {
            a_pos,
            entry_start: Vec::new(),
            entries: Vec::new(),
            pair_start,
            pairs,
        },
    ))
}

/// Per contact, the stored blocks of its `J_i' G_i J_i`: its columns are whole blocks (a block
/// is a run of unknowns touched by the same contacts), and each pair of them lands in the one
/// stored orientation of its block of `H`.
fn contact_pairs(
    rows: &ContactRows,
    layout: &BlockLayout,
    chol: &BlockCholesky,
) -> Option<(Vec<usize>, Vec<PairSlot>)> {
    let mut pair_start = Vec::with_capacity(rows.num() + 1);
    pair_start.push(0);
    let mut pairs = Vec::new();
    let mut parts: Vec<(usize, usize, usize)> = Vec::new();
    for i in 0..rows.num() {
        let (cols, _) = rows.of(i);
        parts.clear();
        for (k, &c) in cols.iter().enumerate() {
            let b = layout.block_of[c];
            match parts.last_mut() {
                Some((last, _, n)) if *last == b => *n += 1,
                _ => parts.push((b, k, 1)),
            }
        }
        for x in 0..parts.len() {
            for y in 0..=x {
                let ((bx, kx, nx), (by, ky, ny)) = (parts[x], parts[y]);
                // The stored orientation: rows of the block whose slot is not transposed.
                let s = chol.slot(bx, by)?;
                let (rows_part, cols_part) = if x == y || !s.transposed {
                    ((kx, nx), (ky, ny))
                } else {
                    ((ky, ny), (kx, nx))
                };
                let (rb, cb) = if x == y || !s.transposed {
                    (bx, by)
                } else {
                    (by, bx)
                };
                let slot = chol.slot(rb, cb)?;
                if rows_part.1 != chol.range(rb).len() || cols_part.1 != chol.range(cb).len() {
                    return None;
                }
                pairs.push(PairSlot {
                    a0: rows_part.0 as u32,
                    na: rows_part.1 as u32,
                    b0: cols_part.0 as u32,
                    nb: cols_part.1 as u32,
                    offset: slot.offset,
                    diagonal: x == y,
                });
            }
        }
        pair_start.push(pairs.len());
    }
    Some((pair_start, pairs))
}

/// Per contact, the stored entries of its `m x m` block by `entry(row, col)` (`usize::MAX`:
/// not stored).
fn contact_entries(
    rows: &ContactRows,
    entry: impl Fn(usize, usize) -> usize,
) -> (Vec<usize>, Vec<Entry>) {
    let mut entry_start = Vec::with_capacity(rows.num() + 1);
    entry_start.push(0);
    let mut entries = Vec::new();
    for i in 0..rows.num() {
        let (cols, _) = rows.of(i);
        for (b, &cb) in cols.iter().enumerate() {
            for (a, &ca) in cols.iter().enumerate() {
                let at = entry(ca, cb);
                if at != usize::MAX {
                    entries.push(Entry {
                        a: a as u32,
                        b: b as u32,
                        at,
                    });
                }
            }
        }
        entry_start.push(entries.len());
    }
    (entry_start, entries)
}

/// The scalar pattern of `H` (`A`'s plus each contact's dense block, both triangles), for the
/// driver's sparse Cholesky, and where the values land.
fn scalar_pattern(
    a: &SparseColMat<usize, f64>,
    rows: &ContactRows,
) -> (SymbolicSparseColMat<usize>, HessianMap) {
    let n = a.ncols();
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
    for i in 0..rows.num() {
        let (cols, _) = rows.of(i);
        for &b in cols {
            pat[b].extend_from_slice(cols);
        }
    }
    let mut col_ptr = vec![0usize; n + 1];
    let mut row_idx = Vec::new();
    for (c, rws) in pat.iter_mut().enumerate() {
        rws.sort_unstable();
        rws.dedup();
        row_idx.extend_from_slice(rws);
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
    let (entry_start, entries) = contact_entries(rows, position);
    let pattern = SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
    (
        pattern,
        HessianMap {
            a_pos,
            entry_start,
            entries,
            pair_start: Vec::new(),
            pairs: Vec::new(),
        },
    )
}
