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

use contactlab_core::block_cholesky::{dense_forward, dense_llt};
use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::CoreError;

use super::projection::ContactRegularization;

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
/// `L_t Y_it = J_it'` (no `nv x nv` matrix is formed; trees are small). This runs every step, so
/// it works in a few flat buffers.
pub fn delassus_rms(problem: &GeneralizedProblem) -> Result<Vec<f64>, CoreError> {
    let nv = problem.num_dofs();
    let ntrees = problem.tree_of.iter().copied().max().map_or(0, |t| t + 1);
    // Each velocity's place in its tree, and each tree's size.
    let mut size = vec![0usize; ntrees];
    let mut local = vec![0usize; nv];
    for (c, &t) in problem.tree_of.iter().enumerate() {
        local[c] = size[t];
        size[t] += 1;
    }
    // J's entries contact by contact (counting sort of the rows by contact).
    let nc = problem.num_contacts();
    let (cp, ri, jv) = (
        problem.j.symbolic().col_ptr(),
        problem.j.symbolic().row_idx(),
        problem.j.val(),
    );
    let mut start = vec![0usize; nc + 1];
    for &r in ri {
        start[r / 3 + 1] += 1;
    }
    for i in 0..nc {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut entries = vec![(0usize, 0usize, 0.0f64); ri.len()];
    let mut touched = vec![false; ntrees];
    for c in 0..nv {
        for k in cp[c]..cp[c + 1] {
            let i = ri[k] / 3;
            entries[next[i]] = (c, ri[k] % 3, jv[k]);
            next[i] += 1;
            touched[problem.tree_of[c]] = true;
        }
    }
    // Factor each touched tree's block of A once.
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
        let t = problem.tree_of[c];
        if offset[t] == usize::MAX {
            continue;
        }
        for k in acp[c]..acp[c + 1] {
            factors[offset[t] + local[c] * size[t] + local[ari[k]]] += av[k];
        }
    }
    for t in 0..ntrees {
        if offset[t] == usize::MAX {
            continue;
        }
        let block = &mut factors[offset[t]..offset[t] + size[t] * size[t]];
        if let Err(index) = dense_llt(block, size[t]) {
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
    // Per contact: group its entries by tree, solve L_t Y = J_it' row by row, W += Y'Y.
    let mut y: Vec<f64> = Vec::new();
    let mut out = Vec::with_capacity(nc);
    for i in 0..nc {
        let ents = &mut entries[start[i]..start[i + 1]];
        // Filled column by column, so already in order when trees are runs of velocities (a
        // multibody's layout); sorted otherwise.
        let key = |&(c, r, _): &(usize, usize, f64)| (problem.tree_of[c], local[c], r);
        if !ents.is_sorted_by_key(key) {
            ents.sort_unstable_by_key(key);
        }
        let mut w = [[0.0f64; 3]; 3];
        let mut a = 0;
        while a < ents.len() {
            let t = problem.tree_of[ents[a].0];
            let mut b = a;
            while b < ents.len() && problem.tree_of[ents[b].0] == t {
                b += 1;
            }
            let n = size[t];
            y.clear();
            y.resize(3 * n, 0.0);
            for &(c, r, v) in &ents[a..b] {
                y[r * n + local[c]] += v;
            }
            let l = &factors[offset[t]..offset[t] + n * n];
            for r in 0..3 {
                dense_forward(l, n, &mut y[r * n..(r + 1) * n]);
            }
            for r in 0..3 {
                for s in 0..3 {
                    w[r][s] += (0..n).map(|k| y[r * n + k] * y[s * n + k]).sum::<f64>();
                }
            }
            a = b;
        }
        let frob: f64 = w.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
        out.push(frob / 3.0);
    }
    Ok(out)
}

/// Eqs. 29-30 for every contact of `problem`.
pub fn regularization(
    problem: &GeneralizedProblem,
    params: &RegularizationParams,
) -> Result<Regularization, CoreError> {
    let w = delassus_rms(problem)?;
    let beta_factor = params.beta * params.beta / (4.0 * std::f64::consts::PI.powi(2));
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
        let compliant = match (problem.dt, c.stiffness.is_finite()) {
            (Some(dt), true) => 1.0 / (dt * c.stiffness * (dt + c.dissipation)),
            (_, false) => 0.0,
            (None, true) => {
                return Err(CoreError::Unsupported(format!(
                    "contact {i} has a finite stiffness {} but the problem has no time step: \
                     eq. 29 needs dt",
                    c.stiffness
                )))
            }
        };
        let near = beta_factor * wi;
        let v_hat = match problem.dt {
            Some(dt) => -c.phi0 / (dt + c.dissipation),
            None if c.phi0 == 0.0 => 0.0,
            None => {
                return Err(CoreError::Unsupported(format!(
                    "contact {i} has phi0 = {} but the problem has no time step: the bias \
                     v^ = -phi0 / (dt + tau_d) needs dt",
                    c.phi0
                )))
            }
        };
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
