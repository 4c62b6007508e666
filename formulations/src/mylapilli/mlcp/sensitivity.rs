//! The derivatives of the Fischer-Burmeister MLCP's answer (Mylapilli and Jain, eqs. 14-24: the
//! polyhedral cone of `n_f` directions) to the problem's data (issue 43), by the implicit
//! function theorem on the paper's own equations `Phi(z) = 0` at the answer `z = [p_b; beta;
//! sigma]`.
//!
//! With `w = M z + q_` the MLCP's affine part (eq. 22), row `i` of `Phi` is `-w_i` on the
//! equality rows and `phi_FB(z_i, w_i)` on the others (eq. 24), and `w` reads the data through
//! the contact velocities `u = W r + q` of the impulses `r = P z` (eq. 19: `r_b = D_(b)
//! beta_(b)`, `p_b` as it is): the equality rows read `u_b`, a direction's row `d_j' u` (plus
//! `sigma`), and a Coulomb contact's `sigma` row `mu F_n - sum_j beta_j` reads `mu`. So, with
//! `c_i = dPhi_i / dw_i` (`-1` on an equality row, `phi_FB`'s second partial on the others),
//!
//! * `B = dPhi/du = diag(c) P'`, `F_mu`: `c_s F_n` on contact `b`'s `sigma` row `s`,
//! * `J = dPhi/dz` the paper's Jacobian at `z` (its element at the FB kink, the formulation's
//!   [`KinkRule`](super::KinkRule)),
//!
//! and [`Sensitivity`] with the impulse map `P` does the rest: `J dz = -B (dq + dW r) - F_mu
//! dmu`, `dr = P dz`. The unknowns `z` are not unique where a sticking contact's friction spreads
//! over more directions than its plane needs, and [`Sensitivity::non_unique`] says so; the
//! impulses may still be.
//!
//! **Regimes and kinks.** A block is read from its pairs `(z_i, w_i)`, `w_i` in impulse units
//! (over `M_ii`; a `sigma`, a slip rate, over its block's mean direction entry): a contact or limit
//! separates where its normal pair has `w > z`, at distance `w`; a contact slides where its
//! `sigma` is positive, at the least of `F_n`, `sigma` and each direction's pair's larger member
//! (a used direction's `beta`, an unused one's `w`: sliding along a face uses two directions,
//! along a vertex one, and a pair is a kink where both vanish); a closed contact without slip
//! sticks, at the least of `F_n`, its `sigma` row's slack and its second largest `beta` (its
//! friction needs two directions to move in its plane; fewer, as at zero friction, is a kink of
//! `z`'s element, where the derivative would hold the friction to one line). A friction loss
//! slides where its `sigma` is positive and holds otherwise, at its slack to the bound and its
//! larger `beta`; a limit's and a frictionless contact's one pair as the normal's.
//!
//! Only the directions the problem fixes: a contact with per-row coefficients (whose directions
//! `(mu_1 cos a_j, mu_2 sin a_j)` move with `mu`) is refused by block, and so is a direction
//! turned with each contact's free slip (`align_with_slip`, by the caller).

use contactlab_core::{Constraint, CoreError, LocalProblem, Residual};
use faer::Mat;

use super::super::pyramids::Pyramid;
use super::{fischer_burmeister_gradient, KinkRule, MlcpFb};
use crate::natural_map::sensitivity::{refuse_unless_answer, Kink, Parts, Regime, Sensitivity};

/// The derivatives at `z`, which must answer `mlcp` (built from `problem`) to `tol`:
/// `|Phi(z)|_2 / (1 + |q|_2) <= tol`, the paper's residual on the shared ruler's scale.
pub fn mlcp_sensitivity(
    problem: &LocalProblem,
    mlcp: &MlcpFb,
    z: &[f64],
    tol: f64,
) -> Result<Sensitivity, CoreError> {
    let nz = mlcp.size();
    if z.len() != nz {
        return Err(CoreError::BadOption(format!(
            "sensitivity: the answer has {} unknowns, the MLCP {nz}",
            z.len()
        )));
    }
    refuse_scaled_directions(problem)?;
    let mut phi = vec![0.0; nz];
    mlcp.residual(z, &mut phi);
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    refuse_unless_answer(
        norm(&phi) / (1.0 + norm(&problem.q)),
        tol,
        "the unknowns do not answer the problem's FB MLCP",
        "|Phi| over 1 + |q|",
    )?;
    let n = problem.q.len();
    let mut j = Mat::zeros(nz, nz);
    mlcp.jacobian(z, j.as_mut());
    let p = Mat::from_fn(n, nz, |_, _| 0.0);
    let p = (0..nz).fold(p, |mut p, k| {
        let mut e = vec![0.0; nz];
        e[k] = 1.0;
        for (row, v) in mlcp.impulse(&e).into_iter().enumerate() {
            p[(row, k)] = v;
        }
        p
    });
    let w = mlcp.affine(z);
    let c: Vec<f64> = (0..nz).map(|i| mlcp.w_partial(i, z[i], w[i])).collect();
    let b = Mat::from_fn(nz, n, |i, k| c[i] * p[(k, i)]);
    let mut f_mu = Mat::zeros(nz, problem.constraints.len());
    let mut kinks = vec![(Regime::Sticking, f64::INFINITY); problem.constraints.len()];
    let others = problem
        .constraints
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| !matches!(c, Constraint::Equality { .. }));
    for ((block, _), pyr) in others.zip(&mlcp.pyramids) {
        if let (Some(s), Constraint::Contact { mu }) = (&pyr.sigma, &pyr.constraint) {
            if !mu.is_empty() {
                f_mu[(s.index, block)] = c[s.index] * z[pyr.start];
            }
        }
        kinks[block] = mlcp.block_kink(pyr, z, &w);
    }
    let r = mlcp.impulse(z);
    Sensitivity::from_parts(
        problem,
        &r,
        Parts {
            w: problem.w.to_dense(),
            j,
            b,
            f_mu,
            kinks,
            w_direct: Vec::new(),
            impulse_map: Some(p),
        },
    )
}

/// Refuses a contact whose friction directions carry its coefficients (per-row `mu`, `condim`
/// 4 and 6): they move with `mu`, which this derivative holds.
fn refuse_scaled_directions(problem: &LocalProblem) -> Result<(), CoreError> {
    for (b, (_, c)) in problem.constraints.iter().enumerate() {
        if let Constraint::Contact { mu } = c {
            let coulomb = mu.is_empty() || (mu.len() == 2 && mu[0] == mu[1]);
            if !coulomb {
                return Err(CoreError::Unsupported(format!(
                    "sensitivity: block {b} is a contact with coefficients {mu:?}, whose MLCP \
                     directions move with them; the FB MLCP's derivative takes Coulomb contacts \
                     of one coefficient"
                )));
            }
        }
    }
    Ok(())
}

impl MlcpFb {
    /// `dPhi_i / dw_i` at `(z_i, w_i)`: `-1` on an equality row, `phi_FB`'s second partial on
    /// the others, at its kink the [`KinkRule`]'s (the element [`Residual::jacobian`] takes).
    fn w_partial(&self, i: usize, zi: f64, wi: f64) -> f64 {
        if self.is_equality(i) {
            return -1.0;
        }
        match fischer_burmeister_gradient(zi, wi) {
            Some((_, gw)) => gw,
            None => match self.kink {
                KinkRule::DirectionalLimit => {
                    let mii = self.m[(i, i)];
                    mii / mii.hypot(1.0) - 1.0
                }
                KinkRule::PaperPrinted => 0.0,
            },
        }
    }

    /// `w_i` in impulse units: over `M_ii` where it is positive.
    fn impulse_units(&self, i: usize, wi: f64) -> f64 {
        let mii = self.m[(i, i)];
        if mii > 0.0 {
            wi / mii
        } else {
            wi
        }
    }

    /// A non-equality block's regime and distance to a kink (the module documentation).
    fn block_kink(&self, p: &Pyramid, z: &[f64], w: &[f64]) -> Kink {
        let k = p.num_cols();
        let cols = p.start..p.start + k;
        let first = p.start + p.first_friction;
        let friction: Vec<usize> = (first..cols.end).collect();
        if p.first_friction == 1 {
            let (zn, wn) = (z[p.start], self.impulse_units(p.start, w[p.start]));
            if wn > zn || zn <= 0.0 {
                return (Regime::Separating, wn.max(0.0));
            }
            let Some(s) = &p.sigma else {
                return (Regime::Sticking, zn);
            };
            return self.friction_kink(&friction, s.index, z, w, zn);
        }
        match &p.sigma {
            // A friction loss: its two columns and its slip rate.
            Some(s) => self.friction_kink(&friction, s.index, z, w, f64::INFINITY),
            None => (Regime::Sticking, z[p.start]),
        }
    }

    /// The regime and distance of a block's friction columns `friction` and slip rate at `s`,
    /// capped at `cap` (a contact's normal impulse). A contact's friction needs two directions
    /// in its plane; a friction loss's one.
    fn friction_kink(&self, friction: &[usize], s: usize, z: &[f64], w: &[f64], cap: f64) -> Kink {
        let mean_diag =
            friction.iter().map(|&i| self.m[(i, i)]).sum::<f64>() / friction.len().max(1) as f64;
        let sigma = if mean_diag > 0.0 {
            z[s] / mean_diag
        } else {
            z[s]
        };
        let mut betas: Vec<(f64, usize)> = friction.iter().map(|&i| (z[i], i)).collect();
        betas.sort_by(|a, b| b.0.total_cmp(&a.0));
        if sigma > w[s] {
            // Each direction's pair is a kink only where both vanish: a used direction has
            // `w = 0` and its `beta`, an unused one `beta = 0` and its `w`.
            let pairs = friction
                .iter()
                .map(|&i| z[i].max(self.impulse_units(i, w[i])))
                .fold(f64::INFINITY, f64::min);
            return (Regime::Sliding, cap.min(sigma).min(pairs));
        }
        let needed = if cap.is_finite() { 2 } else { 1 };
        let spread = betas.get(needed - 1).map_or(0.0, |b| b.0);
        (Regime::Sticking, cap.min(w[s]).min(spread))
    }
}

#[cfg(test)]
mod tests;
