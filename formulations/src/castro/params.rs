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

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::CoreError;
use faer::linalg::solvers::Solve as _;
use faer::{Mat, Side};

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

/// The diagonal Delassus blocks' rms `w_i = |J_i A^-1 J_i'|_F / 3`, tree by tree (dense per
/// tree: trees are small, and no `nv x nv` matrix is formed).
pub fn delassus_rms(problem: &GeneralizedProblem) -> Result<Vec<f64>, CoreError> {
    let nv = problem.num_dofs();
    let ntrees = problem.tree_of.iter().copied().max().map_or(0, |t| t + 1);
    let mut tree_dofs: Vec<Vec<usize>> = vec![Vec::new(); ntrees];
    let mut local = vec![0usize; nv];
    for (c, &t) in problem.tree_of.iter().enumerate() {
        local[c] = tree_dofs[t].len();
        tree_dofs[t].push(c);
    }
    // Per contact and tree, the rows restricted to the tree: J_it (3 x n_t).
    let nc = problem.num_contacts();
    // A contact touches one or two trees: a short list beats a map (this runs every step).
    let mut jt: Vec<Vec<(usize, Mat<f64>)>> = vec![Vec::new(); nc];
    let (cp, ri, v) = (
        problem.j.symbolic().col_ptr(),
        problem.j.symbolic().row_idx(),
        problem.j.val(),
    );
    for c in 0..nv {
        let t = problem.tree_of[c];
        for k in cp[c]..cp[c + 1] {
            let (i, r) = (ri[k] / 3, ri[k] % 3);
            let blocks = &mut jt[i];
            let at = match blocks.iter().position(|(u, _)| *u == t) {
                Some(p) => p,
                None => {
                    blocks.push((t, Mat::zeros(3, tree_dofs[t].len())));
                    blocks.len() - 1
                }
            };
            blocks[at].1[(r, local[c])] += v[k];
        }
    }
    // Factor each touched tree's block of A once.
    let (acp, ari, av) = (
        problem.a.symbolic().col_ptr(),
        problem.a.symbolic().row_idx(),
        problem.a.val(),
    );
    let mut factors: Vec<Option<faer::linalg::solvers::Llt<f64>>> = vec![None; ntrees];
    for blocks in &jt {
        for &(t, _) in blocks {
            if factors[t].is_some() {
                continue;
            }
            let n = tree_dofs[t].len();
            let mut at = Mat::<f64>::zeros(n, n);
            for &c in &tree_dofs[t] {
                for k in acp[c]..acp[c + 1] {
                    at[(local[ari[k]], local[c])] += av[k];
                }
            }
            let llt = at.llt(Side::Lower).map_err(|e| {
                CoreError::Problem(contactlab_core::ProblemError::NotPositive {
                    field: "A".into(),
                    kind: "definite".into(),
                    detail: format!(
                        "the block of kinematic tree {t}: {}",
                        match e {
                            faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot {
                                index,
                            } => format!("its Cholesky factorization meets a nonpositive pivot at index {index}"),
                        }
                    ),
                })
            })?;
            factors[t] = Some(llt);
        }
    }
    Ok(jt
        .iter()
        .map(|blocks| {
            let mut w = Mat::<f64>::zeros(3, 3);
            for (t, j) in blocks {
                if let Some(f) = &factors[*t] {
                    w += j * f.solve(j.transpose().to_owned());
                }
            }
            w.norm_l2() / 3.0
        })
        .collect())
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
