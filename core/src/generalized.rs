//! Contact problems in generalized velocities, and the step problem every solver receives.
//!
//! Castro et al.'s two-stage scheme (section II-D, eq. 18) leaves one linear balance of momentum
//! per step, `A (v - v*) = J' gamma`, with `A` symmetric positive definite and block diagonal
//! by kinematic tree, the contact Jacobian `J` (three rows per contact, **normal first** here;
//! the paper puts the normal last), the free-motion velocities `v*`, and per contact the
//! physics of its compliant law (eq. 2): friction `mu`, signed distance `phi0`, stiffness `k`
//! and dissipation time scale `tau_d`. [`GeneralizedProblem`] carries that data, sparse,
//! end to end; SAP works on it directly.
//!
//! Contact-space formulations take the Delassus form `u = W r + q` with `W = J A^-1 J'` and
//! `q = J v* + b` ([`GeneralizedProblem::to_local`]): [`StepProblem`] holds either form and
//! derives the local one on demand, once, so every formulation runs on every problem.
//!
//! FCLib's global problems (`M v = H r + f`, `u = H' v + w`) carry no stiffness, distance or
//! time step: [`GeneralizedProblem::from_global`] makes them rigid contacts (`k = inf`,
//! `phi0 = 0`, `tau_d = 0`) with the offset `b = w`, and no time step.

use std::sync::{Arc, OnceLock};

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;
use nalgebra::Matrix3;
use serde::{Deserialize, Serialize};

use crate::blocks::BlockMatrix;
use crate::disjoint_sets::DisjointSets;

use crate::constraint::{Constraint, Constraints};
use crate::error::{CoreError, ProblemError};
use crate::problem::{
    check_finite_vec, check_symmetric, Cholesky, GlobalProblem, LocalProblem, Matrix, Problem,
    SYMMETRY_REL_TOL,
};

/// One contact's physical parameters (Castro et al., eq. 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactModel {
    /// Friction coefficient `mu >= 0`.
    pub mu: f64,
    /// Signed distance at the start of the step (negative: overlap), in length units.
    pub phi0: f64,
    /// Normal stiffness `k > 0`, force per length; `f64::INFINITY` for a rigid contact.
    pub stiffness: f64,
    /// Dissipation time scale `tau_d >= 0` (Hunt-Crossley-like damping `tau_d k v_n`).
    pub dissipation: f64,
}

impl ContactModel {
    /// A rigid contact with friction `mu` at zero distance.
    pub fn rigid(mu: f64) -> ContactModel {
        ContactModel {
            mu,
            phi0: 0.0,
            stiffness: f64::INFINITY,
            dissipation: 0.0,
        }
    }
}

/// A constraint block other than a Coulomb contact (a limit, an equality, a friction loss, or
/// a contact of condim 1, 4 or 6 or per-row friction), with its physics: what SAP's
/// constraint-agnostic term needs (Castro et al., sec. V; Drake's holonomic and limit
/// constraints), and what the rigid formulations ignore but for the kind and its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockModel {
    /// The kind and its parameters.
    pub constraint: Constraint,
    /// Per row, the position error at the start of the step, in the row's units: a contact's
    /// signed distance on its normal row, a limit's distance to the limit, an equality's
    /// violation (MuJoCo's `efc_pos`); 0 on frictional and friction-loss rows. SAP drives it to
    /// zero over the step (`v^ = -phi0 / (dt + tau_d)`).
    pub phi0: Vec<f64>,
    /// Stiffness `k > 0` of the rows with a position (infinity: rigid, SAP's near-rigid term).
    pub stiffness: f64,
    /// Dissipation time scale `tau_d >= 0`.
    pub dissipation: f64,
}

impl BlockModel {
    /// A rigid block of `constraint` at zero position error.
    pub fn rigid(constraint: Constraint) -> BlockModel {
        let rows = constraint.rows();
        BlockModel {
            constraint,
            phi0: vec![0.0; rows],
            stiffness: f64::INFINITY,
            dissipation: 0.0,
        }
    }
}

/// One step's contact problem in generalized velocities: `A (v - v*) = J' gamma`, row
/// velocities `u = J v + b - t`, the Coulomb contacts' rows first (three each, normal first),
/// then the other constraint blocks' ([`GeneralizedProblem::others`]).
///
/// Two models of the position error live side by side, each named: the targets `t`, the
/// velocity the rigid formulations drive each row to (a MuJoCo state's position part of its
/// reference; zero in the scenes and FCLib files), and `phi0`, which SAP's own model drives to
/// zero over the step and which the rigid formulations ignore. SAP reads `J v + b` and `phi0`,
/// never `t`.
#[derive(Debug, Clone)]
pub struct GeneralizedProblem {
    /// `A` (`nv x nv`), symmetric positive definite, both triangles stored.
    pub a: SparseColMat<usize, f64>,
    /// `J` (`3 nc x nv`), three rows per contact, normal first.
    pub j: SparseColMat<usize, f64>,
    /// Free-motion velocities `v*` (`nv`).
    pub v_star: Vec<f64>,
    /// Row-velocity offset `b` (one per row; zero in scenes, FCLib's `w` in files).
    pub b: Vec<f64>,
    /// Per Coulomb contact, its physics; contact `i` owns rows `3i..3i+3`.
    pub contacts: Vec<ContactModel>,
    /// The other constraint blocks, in row order after the contacts' `3 nc` rows.
    pub others: Vec<BlockModel>,
    /// The rigid formulations' target velocity of each row (empty: zero everywhere).
    pub target: Vec<f64>,
    /// The time step, when the problem comes from a simulation (`None` for FCLib files: SAP
    /// then runs in its near-rigid regime).
    pub dt: Option<f64>,
    /// The previous step's velocities (SAP's warm start), when known.
    pub v0: Option<Vec<f64>>,
    /// The kinematic tree of each velocity (`nv` entries): `A` is block diagonal by tree.
    pub tree_of: Vec<usize>,
}

/// What a [`GeneralizedProblem`] knows of the simulation step it comes from, for
/// [`GeneralizedProblem::new`]; FCLib's files know none of it ([`StepContext::default`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepContext {
    /// The time step.
    pub dt: Option<f64>,
    /// The previous step's velocities (SAP's warm start).
    pub v0: Option<Vec<f64>>,
    /// The kinematic tree of each velocity; `None` infers the trees from `A`'s sparsity.
    pub tree_of: Option<Vec<usize>>,
}

/// The rows of a [`GeneralizedProblem`] beyond its dynamics: the Coulomb contacts, the other
/// blocks after them, and the rigid targets of every row (empty: zero).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowModels {
    /// Per Coulomb contact, its physics.
    pub contacts: Vec<ContactModel>,
    /// The other constraint blocks, after the contacts.
    pub others: Vec<BlockModel>,
    /// Per row, the rigid formulations' target velocity (empty: zero).
    pub target: Vec<f64>,
}

impl RowModels {
    /// Coulomb contacts only, no targets.
    pub fn coulomb(contacts: Vec<ContactModel>) -> RowModels {
        RowModels {
            contacts,
            ..Default::default()
        }
    }
}

/// Refuses constraint blocks other than Coulomb contacts where `what` holds those only,
/// naming the first.
pub fn coulomb_only(c: &Constraints, what: &str) -> Result<(), CoreError> {
    match c.first_refused(Constraint::is_coulomb) {
        None => Ok(()),
        Some(kind) => Err(CoreError::Unsupported(format!(
            "{what} holds Coulomb contacts (three rows, one friction coefficient) only; this \
             problem has {kind}"
        ))),
    }
}

/// A shape error of `field`.
fn shape(field: &str, expected: String, found: String) -> ProblemError {
    ProblemError::Shape {
        field: field.into(),
        expected,
        found,
    }
}

/// An out-of-range entry of `field`, with what it should be.
fn bad_value(field: &str, index: usize, value: f64, want: &str) -> ProblemError {
    ProblemError::Shape {
        field: field.into(),
        expected: want.into(),
        found: format!("{value} at index {index}"),
    }
}

impl GeneralizedProblem {
    /// A validated problem (see [`GeneralizedProblem::validate`]): the balance of momentum
    /// `A (v - v*) = J' gamma`, the offset `b`, the contacts' models and what is known of the
    /// simulation step (`context`; the trees inferred from `A`'s sparsity when not given).
    pub fn new(
        a: SparseColMat<usize, f64>,
        j: SparseColMat<usize, f64>,
        v_star: Vec<f64>,
        b: Vec<f64>,
        contacts: Vec<ContactModel>,
        context: StepContext,
    ) -> Result<GeneralizedProblem, CoreError> {
        GeneralizedProblem::with_rows(a, j, v_star, b, RowModels::coulomb(contacts), context)
    }

    /// [`GeneralizedProblem::new`] with constraint blocks other than Coulomb contacts and rigid
    /// targets (`rows`).
    pub fn with_rows(
        a: SparseColMat<usize, f64>,
        j: SparseColMat<usize, f64>,
        v_star: Vec<f64>,
        b: Vec<f64>,
        rows: RowModels,
        context: StepContext,
    ) -> Result<GeneralizedProblem, CoreError> {
        let StepContext { dt, v0, tree_of } = context;
        let RowModels {
            contacts,
            others,
            target,
        } = rows;
        let tree_of = match tree_of {
            Some(t) => t,
            None => components(&a),
        };
        let p = GeneralizedProblem {
            a,
            j,
            v_star,
            b,
            contacts,
            others,
            target,
            dt,
            v0,
            tree_of,
        };
        p.validate()?;
        Ok(p)
    }

    /// Number of generalized velocities `nv`.
    pub fn num_dofs(&self) -> usize {
        self.v_star.len()
    }

    /// Number of Coulomb contacts `nc`.
    pub fn num_contacts(&self) -> usize {
        self.contacts.len()
    }

    /// Number of rows of `J`: the contacts' `3 nc` and the other blocks'.
    pub fn num_rows(&self) -> usize {
        3 * self.contacts.len()
            + self
                .others
                .iter()
                .map(|o| o.constraint.rows())
                .sum::<usize>()
    }

    /// Friction coefficients, one per Coulomb contact.
    pub fn mu(&self) -> Vec<f64> {
        self.contacts.iter().map(|c| c.mu).collect()
    }

    /// Whether every row is a Coulomb contact's (the problems before the constraint kinds).
    pub fn coulomb_only(&self) -> bool {
        self.others.is_empty()
    }

    /// Every block in row order: the Coulomb contacts, then the others.
    pub fn constraints(&self) -> Constraints {
        let blocks = self
            .contacts
            .iter()
            .map(|c| Constraint::coulomb(c.mu))
            .chain(self.others.iter().map(|o| o.constraint.clone()))
            .collect();
        Constraints::unchecked(blocks)
    }

    /// Checks, naming the field: shapes (`A` `nv x nv`, `J` `3nc x nv`, `v*`, `b`, `v0`,
    /// `tree_of`), finite entries, `mu >= 0`, `k > 0` (infinity allowed), `tau_d >= 0`, finite
    /// `phi0`, `dt > 0`, `A` symmetric and block diagonal by tree. Definiteness of `A` is checked
    /// where it is factored.
    pub fn validate(&self) -> Result<(), ProblemError> {
        self.validate_shapes()?;
        check_finite_vec("v*", &self.v_star)?;
        check_finite_vec("b", &self.b)?;
        check_finite_vec("target", &self.target)?;
        self.validate_others()?;
        for (field, m) in [("A", &self.a), ("J", &self.j)] {
            if let Some((k, v)) = m.val().iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(ProblemError::NonFinite {
                    field: field.into(),
                    index: k,
                    value: *v,
                });
            }
        }
        for (i, c) in self.contacts.iter().enumerate() {
            if !(c.mu >= 0.0 && c.mu.is_finite()) {
                return Err(bad_value("mu", i, c.mu, "finite and nonnegative"));
            }
            if c.stiffness.is_nan() || c.stiffness <= 0.0 {
                return Err(bad_value(
                    "stiffness",
                    i,
                    c.stiffness,
                    "positive (infinity: rigid)",
                ));
            }
            if !(c.dissipation >= 0.0 && c.dissipation.is_finite()) {
                return Err(bad_value(
                    "dissipation",
                    i,
                    c.dissipation,
                    "finite and nonnegative",
                ));
            }
            if !c.phi0.is_finite() {
                return Err(bad_value("phi0", i, c.phi0, "finite"));
            }
        }
        if let Some(dt) = self.dt {
            if !(dt > 0.0 && dt.is_finite()) {
                return Err(bad_value("dt", 0, dt, "positive and finite"));
            }
        }
        check_symmetric("A", &Matrix::Sparse(self.a.clone()), SYMMETRY_REL_TOL)?;
        let (cols, rows) = (self.a.symbolic().col_ptr(), self.a.symbolic().row_idx());
        for c in 0..self.v_star.len() {
            for &r in &rows[cols[c]..cols[c + 1]] {
                if self.tree_of[r] != self.tree_of[c] {
                    return Err(shape(
                        "A",
                        "block diagonal by kinematic tree".into(),
                        format!(
                            "entry ({r}, {c}) couples trees {} and {}",
                            self.tree_of[r], self.tree_of[c]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks the shapes: `A` `nv x nv`, `J` one row per row of the blocks, `b`, `target`,
    /// `tree_of` and `v0`.
    fn validate_shapes(&self) -> Result<(), ProblemError> {
        let nv = self.v_star.len();
        let nc = self.contacts.len();
        let m = self.num_rows();
        if self.a.nrows() != nv || self.a.ncols() != nv {
            return Err(shape(
                "A",
                format!("{nv} x {nv} (one row per velocity of v*)"),
                format!("{} x {}", self.a.nrows(), self.a.ncols()),
            ));
        }
        if self.j.nrows() != m || self.j.ncols() != nv {
            return Err(shape(
                "J",
                format!(
                    "{m} x {nv} (3 rows per contact, {nc} contacts, and {} rows of {} other \
                     blocks)",
                    m - 3 * nc,
                    self.others.len()
                ),
                format!("{} x {}", self.j.nrows(), self.j.ncols()),
            ));
        }
        if self.b.len() != m {
            return Err(shape(
                "b",
                format!("{m} entries (one per row of J)"),
                format!("{} entries", self.b.len()),
            ));
        }
        if !self.target.is_empty() && self.target.len() != m {
            return Err(shape(
                "target",
                format!("{m} entries (one per row of J) or none"),
                format!("{} entries", self.target.len()),
            ));
        }
        if self.tree_of.len() != nv {
            return Err(shape(
                "tree_of",
                format!("{nv} entries (one per velocity)"),
                format!("{} entries", self.tree_of.len()),
            ));
        }
        if let Some(v0) = &self.v0 {
            if v0.len() != nv {
                return Err(shape(
                    "v0",
                    format!("{nv} entries"),
                    format!("{} entries", v0.len()),
                ));
            }
            check_finite_vec("v0", v0)?;
        }
        Ok(())
    }

    /// Checks the other blocks: each kind's parameters, one finite `phi0` per row, the
    /// compliance as the contacts'.
    fn validate_others(&self) -> Result<(), ProblemError> {
        for (i, o) in self.others.iter().enumerate() {
            let block = i + self.contacts.len();
            if let Err(why) = o.constraint.check() {
                return Err(ProblemError::BadConstraint {
                    index: block,
                    kind: o.constraint.kind().into(),
                    message: why,
                });
            }
            if o.phi0.len() != o.constraint.rows() {
                return Err(shape(
                    "phi0",
                    format!(
                        "{} entries for block {block} (one per row)",
                        o.constraint.rows()
                    ),
                    format!("{} entries", o.phi0.len()),
                ));
            }
            if let Some((k, v)) = o.phi0.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(bad_value("phi0", k, *v, &format!("finite (block {block})")));
            }
            if o.stiffness.is_nan() || o.stiffness <= 0.0 {
                return Err(bad_value("stiffness", block, o.stiffness, "positive"));
            }
            if !(o.dissipation >= 0.0 && o.dissipation.is_finite()) {
                return Err(bad_value(
                    "dissipation",
                    block,
                    o.dissipation,
                    "nonnegative",
                ));
            }
        }
        Ok(())
    }

    /// Splits a problem's blocks into the Coulomb contacts that lead (rigid, with friction
    /// `mu`) and the rest, from the first block that is not one (rigid, at zero position error):
    /// a Coulomb contact after another kind is kept in its place as an `others` block.
    fn rows_of(c: &Constraints) -> RowModels {
        let lead = c.blocks().iter().take_while(|b| b.is_coulomb()).count();
        RowModels {
            contacts: c.mu()[..lead]
                .iter()
                .map(|&mu| ContactModel::rigid(mu))
                .collect(),
            others: c.blocks()[lead..]
                .iter()
                .cloned()
                .map(BlockModel::rigid)
                .collect(),
            target: Vec::new(),
        }
    }

    /// FCLib's global problem as rigid contacts: `A = (M + M') / 2`, `J = H'`, `v* = A^-1 f`,
    /// `b = w`, `k = inf`, `phi0 = 0`, `tau_d = 0`, no time step, trees from `M`'s sparsity.
    ///
    /// `A` is `M`'s symmetric part, read once here: a file's `M` may be asymmetric in its last
    /// digits (FCLib's `LMGC_GlobalFrictionContactProblem00046` in its seventh, at a condition
    /// of about `1e7`), and every formulation then sees one matrix, the one its factorizations
    /// take (a cost that multiplied by `M` as stored beside a free velocity from the symmetric
    /// part would pose a slightly different problem, at first order on such a matrix).
    pub fn from_global(g: &GlobalProblem) -> Result<GeneralizedProblem, CoreError> {
        g.validate()?;
        let chol = Cholesky::new("M", &g.m)?;
        let mut f = Mat::from_fn(g.f.len(), 1, |i, _| g.f[i]);
        chol.solve_in_place(f.as_mut());
        let v_star = (0..g.f.len()).map(|i| f[(i, 0)]).collect();
        let a = symmetric_part(&g.m.to_sparse("M")?)?;
        let mut jt = Vec::new();
        g.h.for_each_entry(|i, jj, v| {
            if v != 0.0 {
                jt.push(Triplet::new(jj, i, v));
            }
        });
        let j = SparseColMat::try_new_from_triplets(g.h.ncols(), g.h.nrows(), &jt)
            .map_err(|e| CoreError::LinearAlgebra(format!("J = H': {e:?}")))?;
        GeneralizedProblem::with_rows(
            a,
            j,
            v_star,
            g.w.clone(),
            GeneralizedProblem::rows_of(&g.constraints),
            StepContext::default(),
        )
    }

    /// A contact-space problem as a generalized one, for formulations that need one: the
    /// contact velocities are the unknowns (`v = u`, `J = I`, `b = 0`), `A = W^-1`, `v* = q`, so
    /// that `A (v - v*) = gamma` is `u = W gamma + q`. Needs `W` positive definite (FCLib's `W`
    /// often is not: the error says so); `A` is dense, one tree; contacts rigid, no time step.
    pub fn from_local(p: &LocalProblem) -> Result<GeneralizedProblem, CoreError> {
        p.validate()?;
        let n = p.q.len();
        let chol = Cholesky::new("W", &p.w)?;
        let mut inv = Mat::<f64>::identity(n, n);
        chol.solve_in_place(inv.as_mut());
        let mut a = Vec::with_capacity(n * n);
        for j in 0..n {
            for i in 0..n {
                a.push(Triplet::new(i, j, 0.5 * (inv[(i, j)] + inv[(j, i)])));
            }
        }
        let eye: Vec<_> = (0..n).map(|i| Triplet::new(i, i, 1.0)).collect();
        let sparse = |t: &[Triplet<usize, usize, f64>]| {
            SparseColMat::try_new_from_triplets(n, n, t)
                .map_err(|e| CoreError::LinearAlgebra(format!("{e:?}")))
        };
        GeneralizedProblem::with_rows(
            sparse(&a)?,
            sparse(&eye)?,
            p.q.clone(),
            vec![0.0; n],
            GeneralizedProblem::rows_of(&p.constraints),
            StepContext {
                tree_of: Some(vec![0; n]),
                ..Default::default()
            },
        )
    }

    /// The row velocities the conditions read on, `u = J v + b - t` (`t` the rigid targets).
    pub fn contact_velocity(&self, v: &[f64]) -> Vec<f64> {
        let mut out = self.b.clone();
        out.iter_mut().zip(&self.target).for_each(|(o, t)| *o -= t);
        sparse_mul_add(&self.j, v, &mut out);
        out
    }

    /// The contact-space form: `W = J A^-1 J'` (dense), `q = J v* + b - t`, every block.
    pub fn to_local(&self) -> Result<LocalProblem, CoreError> {
        let nv = self.num_dofs();
        let m = self.num_rows();
        let chol = Cholesky::new("A", &Matrix::Sparse(self.a.clone()))?;
        // X = A^-1 J', then W = J X.
        let mut x = Mat::<f64>::zeros(nv, m);
        let (cols, rows, vals) = (
            self.j.symbolic().col_ptr(),
            self.j.symbolic().row_idx(),
            self.j.val(),
        );
        for c in 0..nv {
            for k in cols[c]..cols[c + 1] {
                x[(c, rows[k])] += vals[k];
            }
        }
        chol.solve_in_place(x.as_mut());
        let mut w = Mat::<f64>::zeros(m, m);
        for c in 0..nv {
            for k in cols[c]..cols[c + 1] {
                let (r, v) = (rows[k], vals[k]);
                for col in 0..m {
                    w[(r, col)] += v * x[(c, col)];
                }
            }
        }
        let w = Mat::from_fn(m, m, |i, j| 0.5 * (w[(i, j)] + w[(j, i)]));
        let q = self.contact_velocity(&self.v_star);
        if self.coulomb_only() {
            return Ok(LocalProblem::new(Matrix::Dense(w), q, self.mu())?);
        }
        Ok(LocalProblem::with_constraints(
            Matrix::Dense(w),
            q,
            self.constraints(),
        )?)
    }

    /// The contact-space form with `W = J A^-1 J'` kept as 3x3 blocks, built tree by tree
    /// without a dense product: `A` is block diagonal by tree, so for each tree `t` with the
    /// contacts `C_t` that touch it, `W_t = J_{C_t,t} A_tt^-1 J_{C_t,t}'` adds into the blocks
    /// of the pairs in `C_t`. Block `(a, b)` is non-zero only when contacts `a` and `b` share a
    /// tree. Costs one factorization per tree (dense for trees of at most 64 velocities, sparse
    /// above) and `O(|C_t|^2)` blocks per tree; each tree's part is symmetrized like
    /// [`GeneralizedProblem::to_local`]'s `W`. Blocks are of Coulomb contacts: a problem with
    /// other blocks gets the dense form.
    pub fn to_local_blocks(&self) -> Result<LocalProblem, CoreError> {
        if !self.coulomb_only() {
            return self.to_local();
        }
        let nc = self.num_contacts();
        let trees = self.tree_of.iter().max().map_or(0, |&t| t + 1);
        let mut dofs_of: Vec<Vec<usize>> = vec![Vec::new(); trees];
        for (d, &t) in self.tree_of.iter().enumerate() {
            dofs_of[t].push(d);
        }
        let (cols, rows, vals) = (
            self.j.symbolic().col_ptr(),
            self.j.symbolic().row_idx(),
            self.j.val(),
        );
        let mut blocks = Vec::new();
        for dofs in dofs_of.iter().filter(|d| !d.is_empty()) {
            let mut contacts: Vec<usize> = dofs
                .iter()
                .flat_map(|&d| rows[cols[d]..cols[d + 1]].iter().map(|r| r / 3))
                .collect();
            contacts.sort_unstable();
            contacts.dedup();
            if contacts.is_empty() {
                continue;
            }
            let (nt, m) = (dofs.len(), 3 * contacts.len());
            // X = J_t' (nt x m), then A_tt^-1 X.
            let mut jt = Mat::<f64>::zeros(nt, m);
            for (k, &d) in dofs.iter().enumerate() {
                for e in cols[d]..cols[d + 1] {
                    let c = contacts.partition_point(|&c| c < rows[e] / 3);
                    jt[(k, 3 * c + rows[e] % 3)] += vals[e];
                }
            }
            let mut x = jt.clone();
            self.cholesky_on(dofs)?.solve_in_place(x.as_mut());
            let w_t = jt.transpose() * &x;
            for (ci, &a) in contacts.iter().enumerate() {
                for (cj, &b) in contacts.iter().enumerate() {
                    let block = Matrix3::from_fn(|i, j| {
                        let (r, c) = (3 * ci + i, 3 * cj + j);
                        0.5 * (w_t[(r, c)] + w_t[(c, r)])
                    });
                    blocks.push((a, b, block));
                }
            }
        }
        let w = BlockMatrix::from_blocks(nc, blocks);
        let q = self.contact_velocity(&self.v_star);
        Ok(LocalProblem::new(Matrix::Blocks(w), q, self.mu())?)
    }

    /// The Cholesky factor of `A`'s diagonal block of the velocities `dofs` (sorted: one tree,
    /// or any set of whole trees, as `A` is block diagonal by tree), dense up to 64 velocities.
    pub fn cholesky_on(&self, dofs: &[usize]) -> Result<Cholesky, CoreError> {
        let n = dofs.len();
        // `dofs` is sorted (collected in index order), so a velocity's place in it is a search.
        let index = |d: usize| dofs.binary_search(&d).ok();
        let (cols, rows, vals) = (
            self.a.symbolic().col_ptr(),
            self.a.symbolic().row_idx(),
            self.a.val(),
        );
        let mut t = Vec::new();
        for (k, &d) in dofs.iter().enumerate() {
            for e in cols[d]..cols[d + 1] {
                if let Some(i) = index(rows[e]) {
                    t.push((i, k, vals[e]));
                }
            }
        }
        let a_tt = if n <= 64 {
            let mut d = Mat::zeros(n, n);
            for &(i, k, v) in &t {
                d[(i, k)] += v;
            }
            Matrix::Dense(d)
        } else {
            Matrix::from_triplets("A", n, n, &t)?
        };
        Ok(Cholesky::new("A", &a_tt)?)
    }

    /// The contact-space form in `storage`.
    pub fn to_local_in(&self, storage: Storage) -> Result<LocalProblem, CoreError> {
        match storage {
            Storage::Dense => self.to_local(),
            Storage::Blocks => self.to_local_blocks(),
        }
    }
}

/// How the contact-space form's `W` is stored when it is derived or split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// A dense `3nc x 3nc` matrix (every formulation's linear algebra can use it directly).
    #[default]
    Dense,
    /// 3x3 blocks, only those of contact pairs that share a body ([`BlockMatrix`]).
    Blocks,
}

/// `out += S x` for a sparse `S`.
pub fn sparse_mul_add(s: &SparseColMat<usize, f64>, x: &[f64], out: &mut [f64]) {
    let (cols, rows, vals) = (s.symbolic().col_ptr(), s.symbolic().row_idx(), s.val());
    for (c, xc) in x.iter().enumerate() {
        if *xc != 0.0 {
            for k in cols[c]..cols[c + 1] {
                out[rows[k]] += vals[k] * xc;
            }
        }
    }
}

/// `out += S' y` for a sparse `S`.
pub fn sparse_transpose_mul_add(s: &SparseColMat<usize, f64>, y: &[f64], out: &mut [f64]) {
    let (cols, rows, vals) = (s.symbolic().col_ptr(), s.symbolic().row_idx(), s.val());
    for (c, o) in out.iter_mut().enumerate() {
        *o += (cols[c]..cols[c + 1])
            .map(|k| vals[k] * y[rows[k]])
            .sum::<f64>();
    }
}

/// `(A + A') / 2` of a square sparse matrix (its pattern the union of both triangles').
fn symmetric_part(a: &SparseColMat<usize, f64>) -> Result<SparseColMat<usize, f64>, CoreError> {
    let mut t = Vec::new();
    Matrix::Sparse(a.clone()).for_each_entry(|i, j, v| {
        if v != 0.0 {
            t.push(Triplet::new(i, j, 0.5 * v));
            t.push(Triplet::new(j, i, 0.5 * v));
        }
    });
    SparseColMat::try_new_from_triplets(a.nrows(), a.ncols(), &t)
        .map_err(|e| CoreError::LinearAlgebra(format!("(M + M') / 2: {e:?}")))
}

/// The connected components of a symmetric sparsity pattern: the trees of a block-diagonal `A`.
fn components(a: &SparseColMat<usize, f64>) -> Vec<usize> {
    let mut sets = DisjointSets::new(a.ncols());
    let (cols, rows) = (a.symbolic().col_ptr(), a.symbolic().row_idx());
    for c in 0..a.ncols() {
        for &r in &rows[cols[c]..cols[c + 1]] {
            sets.union(r, c);
        }
    }
    sets.labels()
}

/// One step's contact problem as solvers receive it: in contact space, or in generalized
/// velocities with the contact-space form derived on demand (once).
#[derive(Debug, Clone)]
pub struct StepProblem {
    // Shared: an island of every contact solves the problem itself in its own storage.
    generalized: Option<Arc<GeneralizedProblem>>,
    local: OnceLock<Result<LocalProblem, CoreError>>,
    storage: Storage,
}

impl StepProblem {
    /// A contact-space problem.
    pub fn local_only(p: LocalProblem) -> StepProblem {
        let local = OnceLock::new();
        let _ = local.set(Ok(p));
        StepProblem {
            generalized: None,
            local,
            storage: Storage::Dense,
        }
    }

    /// A problem as read from a file ([`crate::io::read_problem`]), the way `contactlab solve`
    /// solves it: a local problem as it is, a global one kept generalized
    /// ([`GeneralizedProblem::from_global`]), so SAP solves it as it is and contact-space
    /// formulations get `W = H' M^-1 H`, `q = H' M^-1 f + w`, formed once on demand.
    pub fn from_problem(p: &Problem) -> Result<StepProblem, CoreError> {
        Ok(match p {
            Problem::Local(l) => StepProblem::local_only(l.clone()),
            Problem::Global(g) => {
                StepProblem::from_generalized(GeneralizedProblem::from_global(g)?)
            }
        })
    }

    /// A problem in generalized velocities.
    pub fn from_generalized(g: GeneralizedProblem) -> StepProblem {
        StepProblem {
            generalized: Some(Arc::new(g)),
            local: OnceLock::new(),
            storage: Storage::Dense,
        }
    }

    /// Both forms, when the caller has the contact-space one already (a scene that assembles
    /// `W` itself): contact-space formulations then get exactly that `W`, and SAP the
    /// generalized data. The caller answers for their agreement (`W = J A^-1 J'`,
    /// `q = J v* + b`).
    pub fn with_local(g: GeneralizedProblem, local: LocalProblem) -> StepProblem {
        let cell = OnceLock::new();
        let _ = cell.set(Ok(local));
        StepProblem {
            generalized: Some(Arc::new(g)),
            local: cell,
            storage: Storage::Dense,
        }
    }

    /// A problem in generalized velocities whose contact-space form, when asked for, is derived
    /// in `storage` (dense, or 3x3 blocks built tree by tree).
    pub fn from_generalized_in(g: GeneralizedProblem, storage: Storage) -> StepProblem {
        StepProblem {
            generalized: Some(Arc::new(g)),
            local: OnceLock::new(),
            storage,
        }
    }

    /// The same generalized problem, shared rather than copied, its contact-space form derived
    /// in `storage` when asked for (`None` for a contact-space problem).
    pub fn sharing_in(&self, storage: Storage) -> Option<StepProblem> {
        self.generalized.as_ref().map(|g| StepProblem {
            generalized: Some(Arc::clone(g)),
            local: OnceLock::new(),
            storage,
        })
    }

    /// The contact-space form if it has been given or derived already (no work).
    pub fn local_if_formed(&self) -> Option<&LocalProblem> {
        self.local.get().and_then(|r| r.as_ref().ok())
    }

    /// The generalized form, when the problem has one.
    pub fn generalized(&self) -> Option<&GeneralizedProblem> {
        self.generalized.as_deref()
    }

    /// The contact-space form `u = W r + q` (derived from the generalized one the first time it
    /// is asked for, in the problem's [`Storage`]: dense unless made with
    /// [`StepProblem::from_generalized_in`]).
    pub fn local(&self) -> Result<&LocalProblem, CoreError> {
        let r = self.local.get_or_init(|| match &self.generalized {
            Some(g) => g.to_local_in(self.storage),
            None => Err(CoreError::Unsupported("an empty step problem".into())),
        });
        r.as_ref().map_err(Clone::clone)
    }

    /// Number of contacts.
    pub fn num_contacts(&self) -> usize {
        match &self.generalized {
            Some(g) => g.num_contacts(),
            None => self.local().map_or(0, |l| l.num_contacts()),
        }
    }

    /// The first constraint block `accepts` refuses, described (`contact (condim 4)`).
    pub fn first_refused(&self, accepts: impl Fn(&Constraint) -> bool) -> Option<String> {
        match (&self.generalized, self.local_if_formed()) {
            (Some(g), _) if g.coulomb_only() => None,
            (Some(g), _) => g.constraints().first_refused(accepts),
            (None, Some(l)) => l.constraints.first_refused(accepts),
            (None, None) => None,
        }
    }

    /// Every block in row order (the contact-space form's, or the generalized one's).
    pub fn constraints(&self) -> Result<Constraints, CoreError> {
        match (&self.generalized, self.local_if_formed()) {
            (_, Some(l)) => Ok(l.constraints.clone()),
            (Some(g), None) => Ok(g.constraints()),
            (None, None) => Ok(self.local()?.constraints.clone()),
        }
    }

    /// Friction coefficients.
    pub fn mu(&self) -> Vec<f64> {
        match &self.generalized {
            Some(g) => g.mu(),
            None => self.local().map(|l| l.mu().to_vec()).unwrap_or_default(),
        }
    }

    /// The free contact velocity `q` (`J v* + b` without forming `W`).
    pub fn free_velocity(&self) -> Result<Vec<f64>, CoreError> {
        match &self.generalized {
            Some(g) => Ok(g.contact_velocity(&g.v_star)),
            None => Ok(self.local()?.q.clone()),
        }
    }

    /// Contact velocities `u = W r + q` of impulses `r` (through `A^-1` for a generalized
    /// problem whose local form has not been formed: `u = J (v* + A^-1 J' r) + b`).
    pub fn velocity(&self, r: &[f64]) -> Result<Vec<f64>, CoreError> {
        match (&self.generalized, self.local.get()) {
            (_, Some(Ok(l))) => Ok(l.velocity(r)),
            (Some(g), _) => {
                let chol = Cholesky::new("A", &Matrix::Sparse(g.a.clone()))?;
                let nv = g.num_dofs();
                let mut jr = vec![0.0; nv];
                sparse_transpose_mul_add(&g.j, r, &mut jr);
                let mut x = Mat::from_fn(nv, 1, |i, _| jr[i]);
                chol.solve_in_place(x.as_mut());
                let v: Vec<f64> = (0..nv).map(|i| g.v_star[i] + x[(i, 0)]).collect();
                Ok(g.contact_velocity(&v))
            }
            (None, _) => Ok(self.local()?.velocity(r)),
        }
    }
}

impl From<LocalProblem> for StepProblem {
    fn from(p: LocalProblem) -> StepProblem {
        StepProblem::local_only(p)
    }
}

impl From<GeneralizedProblem> for StepProblem {
    fn from(g: GeneralizedProblem) -> StepProblem {
        StepProblem::from_generalized(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's `M` asymmetric in its last digits is read as its symmetric part, entry by entry
    /// (duplicates of the two triangles summed), and `v*` solves with that part.
    #[test]
    fn a_global_problems_mass_matrix_is_read_as_its_symmetric_part() {
        let m = [2.0, 0.5 + 1e-9, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 3.0];
        let g = GlobalProblem::new(
            Matrix::from_row_major("M", 3, 3, &m).unwrap(),
            Matrix::from_row_major("H", 3, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
                .unwrap(),
            vec![1.0, -1.0, 0.5],
            vec![0.0; 3],
            vec![0.5],
        )
        .unwrap();
        let p = GeneralizedProblem::from_global(&g).unwrap();
        let a = Matrix::Sparse(p.a.clone()).to_dense();
        for i in 0..3 {
            for j in 0..3 {
                let want = 0.5 * (m[i * 3 + j] + m[j * 3 + i]);
                assert_eq!(a[(i, j)], want, "({i}, {j})");
            }
        }
        let mut av = vec![0.0; 3];
        sparse_mul_add(&p.a, &p.v_star, &mut av);
        for (x, f) in av.iter().zip(&g.f) {
            assert!((x - f).abs() <= 1e-14, "{av:?}");
        }
    }

    /// Two free particles in 3D (trees 0 and 1), one contact between them along x, one with the
    /// ground along z.
    pub(crate) fn two_particles() -> GeneralizedProblem {
        let a = SparseColMat::try_new_from_triplets(
            6,
            6,
            &(0..6)
                .map(|i| Triplet::new(i, i, if i < 3 { 2.0 } else { 1.0 }))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        // Contact 0: particle 1 minus particle 0 along x (normal), y, z tangents.
        // Contact 1: particle 0 against the ground, normal z, tangents x, y.
        let t = [
            Triplet::new(0, 3, 1.0),
            Triplet::new(0, 0, -1.0),
            Triplet::new(1, 4, 1.0),
            Triplet::new(1, 1, -1.0),
            Triplet::new(2, 5, 1.0),
            Triplet::new(2, 2, -1.0),
            Triplet::new(3, 2, 1.0),
            Triplet::new(4, 0, 1.0),
            Triplet::new(5, 1, 1.0),
        ];
        let j = SparseColMat::try_new_from_triplets(6, 6, &t).unwrap();
        GeneralizedProblem::new(
            a,
            j,
            vec![0.5, 0.0, -1.0, -0.5, 0.2, 0.0],
            vec![0.0; 6],
            vec![ContactModel::rigid(0.5), ContactModel::rigid(0.3)],
            StepContext {
                dt: Some(0.01),
                ..Default::default()
            },
        )
        .unwrap()
    }

    /// [`two_particles`] with a limit on particle 0's `z` and a one-row equality tying the
    /// particles' `y` after the contacts, and rigid targets on every row.
    pub(crate) fn two_particles_with_blocks() -> GeneralizedProblem {
        let g = two_particles();
        let (cols, rows, vals) = (
            g.j.symbolic().col_ptr(),
            g.j.symbolic().row_idx(),
            g.j.val(),
        );
        let mut t: Vec<_> = (0..6)
            .flat_map(|c| (cols[c]..cols[c + 1]).map(move |e| (c, e)))
            .map(|(c, e)| Triplet::new(rows[e], c, vals[e]))
            .collect();
        t.push(Triplet::new(6, 2, 1.0));
        t.push(Triplet::new(7, 1, 1.0));
        t.push(Triplet::new(7, 4, -1.0));
        let j = SparseColMat::try_new_from_triplets(8, 6, &t).unwrap();
        let rows = RowModels {
            contacts: g.contacts.clone(),
            others: vec![
                BlockModel {
                    phi0: vec![-0.01],
                    ..BlockModel::rigid(Constraint::Limit)
                },
                BlockModel::rigid(Constraint::Equality { rows: 1 }),
            ],
            target: vec![0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.2, -0.3],
        };
        let context = StepContext {
            dt: g.dt,
            ..Default::default()
        };
        GeneralizedProblem::with_rows(g.a, j, g.v_star, vec![0.0; 8], rows, context).unwrap()
    }

    #[test]
    fn other_blocks_follow_the_contacts_in_the_local_form() {
        let g = two_particles_with_blocks();
        assert_eq!(g.num_rows(), 8);
        let l = g.to_local().unwrap();
        assert_eq!(l.constraints.kinds(), vec!["equality", "limit", "contact"]);
        assert_eq!(l.constraints.blocks()[2], Constraint::Limit);
        let w = l.w.to_dense();
        // The limit's row is z0 (mass 2): W = 1/2; the equality y0 - y1: 1/2 + 1.
        assert!((w[(6, 6)] - 0.5).abs() < 1e-15 && (w[(7, 7)] - 1.5).abs() < 1e-15);
        // The limit row and contact 1's normal are both z0: coupled by 1/2.
        assert!((w[(6, 3)] - 0.5).abs() < 1e-15);
        // q = J v* + b - t: the limit row's z0* = -1 less its target 0.2; y0* - y1* = -0.2 + 0.3.
        assert!((l.q[6] + 1.2).abs() < 1e-15 && (l.q[7] - 0.1).abs() < 1e-15);
        assert!(
            (l.q[3] + 1.1).abs() < 1e-15,
            "contact 1's normal target 0.1"
        );
        let s = StepProblem::from_generalized(g.clone());
        let r = [1.0, 0.5, -0.2, 2.0, 0.1, 0.0, 0.3, -0.4];
        let through_a = s.velocity(&r).unwrap();
        for (a, b) in through_a.iter().zip(l.velocity(&r)) {
            assert!((a - b).abs() < 1e-14);
        }
        assert_eq!(
            s.first_refused(Constraint::is_coulomb).as_deref(),
            Some("limit")
        );
        assert_eq!(g.to_local_blocks().unwrap().constraints, l.constraints);
    }

    #[test]
    fn local_problems_of_blocks_become_generalized_ones() {
        let eye = |n: usize| Matrix::Dense(Mat::<f64>::identity(n, n));
        // The leading Coulomb contacts stay contacts; from the first other block on, a
        // contact is an other block in its place.
        for (blocks, split) in [
            (vec![Constraint::coulomb(0.5), Constraint::Limit], (1, 1)),
            (vec![Constraint::Limit, Constraint::coulomb(0.5)], (0, 2)),
        ] {
            let c = Constraints::new(blocks).unwrap();
            let l = LocalProblem::with_constraints(eye(4), vec![0.1; 4], c.clone()).unwrap();
            let g = GeneralizedProblem::from_local(&l).unwrap();
            assert_eq!((g.num_contacts(), g.others.len()), split);
            let back = g.to_local().unwrap();
            assert_eq!(back.constraints, c);
            assert_eq!(back.q, l.q);
        }
    }

    #[test]
    fn bad_other_blocks_are_named() {
        let g = two_particles_with_blocks();
        let mut short = g.clone();
        short.others[0].phi0 = vec![];
        assert!(short.validate().unwrap_err().to_string().contains("phi0"));
        let mut nan = g.clone();
        nan.target[7] = f64::NAN;
        assert!(nan.validate().unwrap_err().to_string().contains("target"));
        let mut box_ = g.clone();
        box_.others[1].constraint = Constraint::FrictionLoss { f_max: -1.0 };
        let e = box_.validate().unwrap_err().to_string();
        assert!(e.contains("friction_loss") && e.contains("3"), "{e}");
        let mut rows = g;
        rows.others.pop();
        assert!(rows.validate().unwrap_err().to_string().contains("J"));
    }

    #[test]
    fn the_local_form_is_j_a_inverse_j_transposed() {
        let g = two_particles();
        assert_eq!(
            g.tree_of,
            vec![0, 1, 2, 3, 4, 5],
            "a diagonal A: every dof its own tree"
        );
        let l = g.to_local().unwrap();
        let w = l.w.to_dense();
        // Contact 0's normal: (-1/2)^2... W_00 = 1/2 + 1/1 = 1.5; contact 1 normal: 1/2.
        assert!((w[(0, 0)] - 1.5).abs() < 1e-15 && (w[(3, 3)] - 0.5).abs() < 1e-15);
        // Coupling: contact 0's z-tangent row (-z0 + z1) and contact 1's normal (z0): -1/2.
        assert!((w[(2, 3)] + 0.5).abs() < 1e-15);
        assert_eq!(l.q, vec![-1.0, 0.2, 1.0, -1.0, 0.5, 0.0]);
        let s = StepProblem::from_generalized(g);
        let r = [1.0, 0.5, -0.2, 2.0, 0.1, 0.0];
        let through_a = s.velocity(&r).unwrap();
        let via_w = s.local().unwrap().velocity(&r);
        for (a, b) in through_a.iter().zip(via_w) {
            assert!((a - b).abs() < 1e-14);
        }
    }

    #[test]
    fn bad_generalized_data_is_named() {
        let g = two_particles();
        let mut bad = g.clone();
        bad.contacts[1].mu = -1.0;
        assert!(bad.validate().unwrap_err().to_string().contains("mu"));
        let mut bad = g.clone();
        bad.contacts[0].stiffness = 0.0;
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("stiffness"));
        let mut bad = g.clone();
        bad.v_star.push(1.0);
        assert!(bad.validate().unwrap_err().to_string().contains("`A`"));
        let mut bad = g.clone();
        bad.dt = Some(-1.0);
        assert!(bad.validate().unwrap_err().to_string().contains("dt"));
        let mut bad = g.clone();
        bad.tree_of = vec![0, 0, 0, 1, 1, 2];
        assert!(
            bad.validate().is_ok(),
            "A is diagonal: any grouping is block diagonal"
        );
        let a = SparseColMat::try_new_from_triplets(
            6,
            6,
            &[
                (0, 0, 1.0),
                (3, 3, 1.0),
                (0, 3, 0.1),
                (3, 0, 0.1),
                (1, 1, 1.),
                (2, 2, 1.),
                (4, 4, 1.),
                (5, 5, 1.),
            ]
            .map(|(i, j, v)| Triplet::new(i, j, v)),
        )
        .unwrap();
        bad.a = a;
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("couples trees"), "{e}");
        // Not positive definite: refused where it is factored.
        let mut bad = g.clone();
        bad.a = SparseColMat::try_new_from_triplets(
            6,
            6,
            &(0..6).map(|i| Triplet::new(i, i, -1.0)).collect::<Vec<_>>(),
        )
        .unwrap();
        let e = bad.to_local().unwrap_err().to_string();
        assert!(e.contains("`A`") || e.contains("A"), "{e}");
    }

    #[test]
    fn fclib_global_problems_become_rigid_generalized_ones() {
        let m = Matrix::from_row_major("M", 2, 2, &[2.0, 0.0, 0.0, 4.0]).unwrap();
        let h = Matrix::from_row_major("H", 2, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]).unwrap();
        let g = GlobalProblem::new(m, h, vec![2.0, -4.0], vec![0.1, 0.0, 0.0], vec![0.4]).unwrap();
        let p = GeneralizedProblem::from_global(&g).unwrap();
        assert!((p.v_star[0] - 1.0).abs() < 1e-15 && (p.v_star[1] + 1.0).abs() < 1e-15);
        assert_eq!(p.contacts[0], ContactModel::rigid(0.4));
        assert_eq!(p.dt, None);
        let l = p.to_local().unwrap();
        let l2 = g.to_local().unwrap();
        assert!(l.q.iter().zip(&l2.q).all(|(a, b)| (a - b).abs() < 1e-15));
        let (w1, w2) = (l.w.to_dense(), l2.w.to_dense());
        assert!((0..3).all(|i| (0..3).all(|j| (w1[(i, j)] - w2[(i, j)]).abs() < 1e-15)));
    }
}
