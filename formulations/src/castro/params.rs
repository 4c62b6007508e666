//! SAP's regularisation from physics, not tuning (Castro et al., section V, eqs. 29-30).
//!
//! Per contact `i`, with the diagonal Delassus block `W_ii` estimated in O(n) tree by tree
//! (`W_ii ~ sum_t J_it A_t^-1 J_it'`, section V-B) and `w_i = |W_ii|_rms = |W_ii|_F / 3`:
//!
//! * `R_n = max(beta^2 / (4 pi^2) w_i, 1 / (dt k (dt + tau_d)))` (eq. 29): compliant with
//!   stiffness `k` when the step resolves the contact's period, near-rigid (period `beta dt`,
//!   Baumgarte-like stabilisation) otherwise. A rigid contact (`k = inf`) is near-rigid.
//! * `R_t = sigma w_i` (eq. 30): the slip at stiction is about `mu sigma g dt`.
//! * `v^_n = -phi0 / (dt + tau_d)`, `v^_t = 0` (section V-A).
//!
//! The paper's `beta = 1`, `sigma = 1e-3` are the defaults. A problem without a time step (an
//! FCLib file) is near-rigid by construction: it must have rigid contacts at `phi0 = 0`
//! (`GeneralizedProblem::from_global` makes them so), and then `v^ = 0`.
//!
//! Where Drake departs (`sap_friction_cone_constraint.cc`): it estimates `w` from the diagonal of
//! `W_ii` (norm over sqrt 3, with separate normal and tangential values); we follow the paper's
//! Frobenius-norm rms.

use contactlab_core::block_cholesky::dense_llt;
use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::CoreError;

use super::projection::ContactRegularization;
use super::rows::ContactRows;

/// `beta` and `sigma` of eqs. 29-30.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegularizationParams {
    /// Near-rigid period as a multiple of `dt` (paper: 1).
    pub beta: f64,
    /// Dimensionless friction regularisation (paper: 1e-3).
    pub sigma: f64,
}

/// What eqs. 29-30 give for one step problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Regularization {
    /// Per contact, `R` and `mu`.
    pub contacts: Vec<ContactRegularization>,
    /// Per contact, the normal bias `v^_n`.
    pub v_hat: Vec<f64>,
    /// Per contact, whether the near-rigid term of eq. 29 won.
    pub near_rigid: Vec<bool>,
    /// Per contact, `w_i`.
    pub w: Vec<f64>,
}

/// The diagonal Delassus blocks' rms `w_i = |J_i A^-1 J_i'|_F / 3`, tree by tree: with the
/// Cholesky factor `L_t` of tree `t`'s block of `A`, `W_ii = sum_t Y_it' Y_it` where
/// `Y_it = L_t^-1 J_it'` (no `nv x nv` matrix is formed; trees are small).
pub fn delassus_rms(problem: &GeneralizedProblem) -> Result<Vec<f64>, CoreError> {
    delassus_rms_of(problem, &ContactRows::of_jacobian(&problem.j))
}

/// [`delassus_rms`] from `J` turned around contact by contact. This runs every step, so it
/// works in a few flat buffers.
pub(super) fn delassus_rms_of(
    problem: &GeneralizedProblem,
    rows: &ContactRows,
) -> Result<Vec<f64>, CoreError> {
    let tree_of = &problem.tree_of;
    let factors = TreeFactors::of(problem, rows)?;
    let mut trees: Vec<usize> = Vec::new();
    let mut y: Vec<[f64; 3]> = Vec::new();
    let mut out = Vec::with_capacity(rows.num());
    for i in 0..rows.num() {
        let (cols, vals) = rows.of(i);
        trees.clear();
        for &c in cols {
            let t = tree_of[c];
            if !trees.contains(&t) {
                trees.push(t);
            }
        }
        let mut w = [[0.0f64; 3]; 3];
        for &t in &trees {
            factors.add_tree(t, tree_of, (cols, vals), &mut y, &mut w);
        }
        let frob: f64 = w.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
        out.push(frob / 3.0);
    }
    Ok(out)
}

/// The touched trees' blocks of `A`, dense and column-major, as Cholesky factors
/// `A_t = L L'` (section V-B's tree by tree estimate).
struct TreeFactors {
    /// Tree -> its number of velocities.
    size: Vec<usize>,
    /// Velocity -> its place in its tree.
    local: Vec<usize>,
    /// Tree -> where its block starts in `factors` (`usize::MAX`: no contact touches it).
    offset: Vec<usize>,
    /// The blocks, one after the other; a factor's diagonal holds `1 / L_kk`, so that a
    /// contact's triangular solves multiply instead of divide.
    factors: Vec<f64>,
}

impl TreeFactors {
    /// The factors of the blocks of `problem`'s `A` whose trees the contacts' `rows` touch.
    fn of(problem: &GeneralizedProblem, rows: &ContactRows) -> Result<TreeFactors, CoreError> {
        let mut blocks = TreeFactors::assembled(problem, rows);
        blocks.factor()?;
        Ok(blocks)
    }

    /// The touched trees' blocks of `A`, not yet factored.
    fn assembled(problem: &GeneralizedProblem, rows: &ContactRows) -> TreeFactors {
        let nv = problem.num_dofs();
        let tree_of = &problem.tree_of;
        let ntrees = tree_of.iter().copied().max().map_or(0, |t| t + 1);
        let mut size = vec![0usize; ntrees];
        let mut local = vec![0usize; nv];
        for (c, &t) in tree_of.iter().enumerate() {
            local[c] = size[t];
            size[t] += 1;
        }
        let mut touched = vec![false; ntrees];
        for &c in &rows.cols {
            touched[tree_of[c]] = true;
        }
        let mut offset = vec![usize::MAX; ntrees];
        let mut total = 0;
        for t in 0..ntrees {
            if touched[t] {
                offset[t] = total;
                total += size[t] * size[t];
            }
        }
        let mut factors = vec![0.0; total];
        let (acp, ari, av) = (
            problem.a.symbolic().col_ptr(),
            problem.a.symbolic().row_idx(),
            problem.a.val(),
        );
        for c in 0..nv {
            let t = tree_of[c];
            if offset[t] == usize::MAX {
                continue;
            }
            for k in acp[c]..acp[c + 1] {
                factors[offset[t] + local[c] * size[t] + local[ari[k]]] += av[k];
            }
        }
        TreeFactors {
            size,
            local,
            offset,
            factors,
        }
    }

    /// Factors each touched tree's block in place; a nonpositive pivot is an error naming the
    /// tree.
    fn factor(&mut self) -> Result<(), CoreError> {
        for t in 0..self.size.len() {
            if self.offset[t] == usize::MAX {
                continue;
            }
            let n = self.size[t];
            let block = &mut self.factors[self.offset[t]..self.offset[t] + n * n];
            if let Err(index) = dense_llt(block, n) {
                return Err(CoreError::Problem(
                    contactlab_core::ProblemError::NotPositive {
                        field: "A".into(),
                        kind: "definite".into(),
                        detail: format!(
                            "the block of kinematic tree {t}: its Cholesky factorization meets a \
                         nonpositive pivot at index {index}"
                        ),
                    },
                ));
            }
        }
        Ok(())
    }

    /// `W += Y' Y` with `Y = L_t^-1 J_it'` (three columns) for the contact whose Jacobian rows
    /// are `(cols, vals)` (three rows side by side) and its tree `t`; `y` is scratch.
    fn add_tree(
        &self,
        t: usize,
        tree_of: &[usize],
        (cols, vals): (&[usize], &[f64]),
        y: &mut Vec<[f64; 3]>,
        w: &mut [[f64; 3]; 3],
    ) {
        let (n, local, m) = (self.size[t], &self.local, cols.len());
        // J_it' over the tree's velocities, velocity by velocity (three rows side by side),
        // zero where the contact does not reach.
        y.clear();
        y.resize(n, [0.0; 3]);
        let mut first = n;
        for (k, &c) in cols.iter().enumerate() {
            if tree_of[c] == t {
                first = first.min(local[c]);
                y[local[c]] = [vals[k], vals[m + k], vals[2 * m + k]];
            }
        }
        // L Y = J_it' by forward substitution (column-major L: L_cp at p n + c), from the
        // first velocity the contact reaches (the entries above it stay zero); W += Y'Y.
        let l = &self.factors[self.offset[t]..self.offset[t] + n * n];
        for c in first..n {
            let mut s = y[c];
            for p in first..c {
                let lcp = l[p * n + c];
                for (sr, yr) in s.iter_mut().zip(&y[p]) {
                    *sr -= lcp * yr;
                }
            }
            let yc = s.map(|v| v * l[c * n + c]);
            y[c] = yc;
            for r in 0..3 {
                for q in 0..3 {
                    w[r][q] += yc[r] * yc[q];
                }
            }
        }
    }
}

/// Eq. 29's compliant term of a row with a position, `1 / (dt k (dt + tau_d))` for stiffness
/// `k` and dissipation `tau_d` (0 for a rigid row, `k = inf`). `Err` says why (for the caller
/// to name the row) when a finite stiffness has no time step.
pub(super) fn compliant_regularization(dt: Option<f64>, k: f64, tau_d: f64) -> Result<f64, String> {
    match (dt, k.is_finite()) {
        (Some(dt), true) => Ok(1.0 / (dt * k * (dt + tau_d))),
        (_, false) => Ok(0.0),
        (None, true) => Err(format!(
            "has a finite stiffness {k} but the problem has no time step: eq. 29 needs dt"
        )),
    }
}

/// Eq. 29's near-rigid term for a Delassus estimate `w`, `beta^2 / (4 pi^2) w`; `R` is the
/// larger of it and [`compliant_regularization`].
pub(super) fn near_rigid_regularization(w: f64, params: &RegularizationParams) -> f64 {
    params.beta * params.beta / (4.0 * std::f64::consts::PI.powi(2)) * w
}

/// The bias `v^ = -phi0 / (dt + tau_d)` of a row with position error `phi0` (section V-A);
/// `Err` says why when `phi0` is not zero and there is no time step.
pub(super) fn bias(phi0: f64, dt: Option<f64>, tau_d: f64) -> Result<f64, String> {
    match dt {
        Some(dt) => Ok(-phi0 / (dt + tau_d)),
        None if phi0 == 0.0 => Ok(0.0),
        None => Err(format!(
            "has a position error phi0 = {phi0} but the problem has no time step: the bias \
             v^ = -phi0 / (dt + tau_d) needs dt"
        )),
    }
}

/// Eqs. 29-30 for every contact of `problem`.
pub fn regularization(
    problem: &GeneralizedProblem,
    params: &RegularizationParams,
) -> Result<Regularization, CoreError> {
    regularization_of(problem, &ContactRows::of_jacobian(&problem.j), params)
}

/// [`regularization`] from `J` turned around contact by contact.
pub(super) fn regularization_of(
    problem: &GeneralizedProblem,
    rows: &ContactRows,
    params: &RegularizationParams,
) -> Result<Regularization, CoreError> {
    let w = delassus_rms_of(problem, rows)?;
    let mut out = Regularization {
        contacts: Vec::with_capacity(w.len()),
        v_hat: Vec::with_capacity(w.len()),
        near_rigid: Vec::with_capacity(w.len()),
        w: w.clone(),
    };
    for (i, (c, &wi)) in problem.contacts.iter().zip(&w).enumerate() {
        if !(wi > 0.0 && wi.is_finite()) {
            return Err(CoreError::Unsupported(format!(
                "contact {i}: its Jacobian rows give no Delassus block (w = {wi}): SAP's \
                 regularisation (eqs. 29-30) needs the contact to move some velocity"
            )));
        }
        let compliant = compliant_regularization(problem.dt, c.stiffness, c.dissipation)
            .map_err(|why| CoreError::Unsupported(format!("contact {i} {why}")))?;
        let near = near_rigid_regularization(wi, params);
        let v_hat = bias(c.phi0, problem.dt, c.dissipation)
            .map_err(|why| CoreError::Unsupported(format!("contact {i} {why}")))?;
        out.contacts.push(ContactRegularization {
            mu: c.mu,
            rn: near.max(compliant),
            rt: params.sigma * wi,
        });
        out.v_hat.push(v_hat);
        out.near_rigid.push(near >= compliant);
    }
    Ok(out)
}
