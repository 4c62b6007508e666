//! The derivatives of the maximum-dissipation model's answer to the problem's data (issue 43):
//! the fixed point of Hwangbo, Lee and Hutter's Algorithm 2, every contact solving its own
//! problem of sec. III-A with the others frozen, differentiated by the implicit function theorem
//! on the conditions that fixed point satisfies.
//!
//! Per three-row contact `a` (normal first, isotropic `mu`, `u = W r + q`, `W_aa` its block), by
//! the case the answer is in:
//!
//! * opening (`lambda = 0`): `F_a = r_a`;
//! * sticking (eq. 11's `lambda*` inside the cone): `F_a = u_a`;
//! * slipping: `F_a = (u_n, |r_t| - mu r_n, p . d)`, the plane of zero normal velocity, the
//!   cone (eq. 13) and the stationarity of eq. 12's energy on their conic: in the plane the
//!   energy's gradient is `u_t`, the conic is `|r_t| + mu (W_nt r_t + c_n) / W_nn = 0`
//!   (eq. 14) with normal `d = r_t / |r_t| + mu w / W_nn` (`w = W_tn` of `W_aa`'s symmetric
//!   part), and the minimum has `u_t` along `-d`: `p . d = 0` with `p = (-u_t2, u_t1)` (the
//!   same direction [`contact_violation`] measures).
//!
//! The third row reads `W_aa` directly, not only through `u`: its derivatives with respect to
//! `W_nn` and `W_tn` are [`WEntry`]s. Every other block (limit, friction loss, equality, a
//! frictionless contact) is solved exactly given the others by the sweep
//! ([`contactlab_core::drivers::sweep::kinds`]), as the natural map states it, and keeps the
//! natural map's rows. Where `W_nt = 0` the slipping rows are Coulomb's (`d = r_t / |r_t|`) and
//! the derivative is the natural map's.
//!
//! A frictionless contact of three rows (`mu = 0`) keeps `u_n = 0` and `r_t = 0` while it
//! touches.
//!
//! **Regimes.** Read from the answer in impulse units (`u` over `W_nn`): a contact opens where
//! `u_n / W_nn > r_n` or it carries no normal impulse, at a distance `u_n / W_nn` from closing
//! (zero where it touches without force: degenerate); a closed one is `r_n` from opening,
//! sticks where `mu r_n - |r_t|` exceeds `|u_t| / W_nn` and slides otherwise, the larger of the
//! two being its distance from the other regime.
//!
//! Refused: contacts of condim 4 and 6 and anisotropic ones (the bisection-SOR refuses the first
//! and solves the second in scaled variables, a model this derivative does not state).

use contactlab_core::constraint::Constraint;
use contactlab_core::drivers::sweep::{contact_violation, FrictionModel};
use contactlab_core::{CoreError, LocalProblem};
use nalgebra::{Matrix3, Vector2, Vector3};

use crate::natural_map::sensitivity::{
    check_answer_rows, natural_parts, refuse_unless_answer, Kink, Parts, Regime, Sensitivity,
    WEntry,
};

/// The derivatives at `r`, which must answer `problem`'s maximum-dissipation model to `tol`: the
/// largest block term of the bisection-SOR's own measure ([`violations`]) scaled as the shared
/// ruler is, over `1 + |q|_2`. The largest term, not their sum: a solve island by island stops
/// each island's sum at the tolerance, so only the terms are bounded by it over the whole
/// problem.
pub fn dissipation_sensitivity(
    problem: &LocalProblem,
    r: &[f64],
    tol: f64,
) -> Result<Sensitivity, CoreError> {
    check_answer_rows(problem, r)?;
    refuse_other_contacts(problem)?;
    let q_norm = problem.q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let largest = violations(problem, r).into_iter().fold(0.0f64, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    });
    refuse_unless_answer(
        largest / (1.0 + q_norm),
        tol,
        "the impulses do not answer the problem's maximum-dissipation model",
        "largest violation over 1 + |q|",
    )?;
    let mut parts = natural_parts(problem, r);
    let u = problem.velocity(r);
    for (block, (rows, c)) in problem.constraints.iter().enumerate() {
        if let Some(mu) = three_row_mu(c) {
            let kink = contact_rows(&mut parts, rows.start, block, mu, r, &u);
            parts.kinks[block] = kink;
        }
    }
    Sensitivity::from_parts(problem, r, parts)
}

/// Each block's term of the sweep's violation: [`contact_violation`] under maximum dissipation
/// on the three-row contacts, the norm of the block's natural map on the others (all zero
/// exactly where every block's law holds at `r`).
pub fn violations(problem: &LocalProblem, r: &[f64]) -> Vec<f64> {
    let u = problem.velocity(r);
    let w = problem.w.to_dense();
    problem
        .constraints
        .iter()
        .map(|(rows, c)| {
            let s = rows.start;
            if let Some(mu) = three_row_mu(c) {
                let w_aa = Matrix3::from_fn(|i, j| w[(s + i, s + j)]);
                let block = |v: &[f64]| Vector3::new(v[s], v[s + 1], v[s + 2]);
                return contact_violation(
                    FrictionModel::MaximumDissipation,
                    &w_aa,
                    mu,
                    &block(r),
                    &block(&u),
                );
            }
            let mut f = vec![0.0; rows.len()];
            c.natural_map(&r[rows.clone()], &u[rows.clone()], &mut f);
            f.iter().map(|x| x * x).sum::<f64>().sqrt()
        })
        .collect()
}

/// A contact of three rows with one coefficient: the model's point contacts.
fn three_row_mu(c: &Constraint) -> Option<f64> {
    match c {
        Constraint::Contact { mu } if mu.len() == 2 && mu[0] == mu[1] => Some(mu[0]),
        _ => None,
    }
}

/// Refuses the contacts this derivative does not state (see the module documentation).
fn refuse_other_contacts(problem: &LocalProblem) -> Result<(), CoreError> {
    for (b, (_, c)) in problem.constraints.iter().enumerate() {
        if let Constraint::Contact { mu } = c {
            if !mu.is_empty() && three_row_mu(c).is_none() {
                return Err(CoreError::Unsupported(format!(
                    "sensitivity: block {b} is a contact with coefficients {mu:?}; the \
                     maximum-dissipation derivative takes three-row contacts of one coefficient"
                )));
            }
        }
    }
    Ok(())
}

/// Writes contact `block`'s rows `s..s + 3` of `J`, `B`, `F_mu` and its [`WEntry`]s for the
/// case its answer is in, and returns its regime.
fn contact_rows(parts: &mut Parts, s: usize, block: usize, mu: f64, r: &[f64], u: &[f64]) -> Kink {
    let n = r.len();
    for k in s..s + 3 {
        for col in 0..n {
            parts.j[(k, col)] = 0.0;
            parts.b[(k, col)] = 0.0;
        }
        parts.f_mu[(k, block)] = 0.0;
    }
    let wnn = parts.w[(s, s)];
    let scale = if wnn > 0.0 { wnn } else { 1.0 };
    let (open, closed) = (u[s] / scale, r[s]);
    if open > closed || closed <= 0.0 {
        for k in s..s + 3 {
            parts.j[(k, k)] = 1.0;
        }
        return (Regime::Separating, open.max(0.0));
    }
    let rt = Vector2::new(r[s + 1], r[s + 2]);
    let ut = Vector2::new(u[s + 1], u[s + 2]);
    let inside = mu * r[s] - rt.norm();
    let slip = ut.norm() / scale;
    if mu == 0.0 {
        // Frictionless: the normal row touches, the tangential impulses vanish.
        parts.b[(s, s)] = 1.0;
        add_bw(parts, s, s..s + 1);
        parts.j[(s + 1, s + 1)] = 1.0;
        parts.j[(s + 2, s + 2)] = 1.0;
        return (Regime::Sliding, closed);
    }
    if inside > slip {
        for k in s..s + 3 {
            parts.b[(k, k)] = 1.0;
        }
        add_bw(parts, s, s..s + 3);
        return (Regime::Sticking, closed.min(inside));
    }
    slipping_rows(parts, s, block, mu, (r, u));
    (Regime::Sliding, closed.min(slip))
}

/// The slipping rows `(u_n, |r_t| - mu r_n, p . d)` (see the module documentation).
fn slipping_rows(parts: &mut Parts, s: usize, block: usize, mu: f64, (r, u): (&[f64], &[f64])) {
    let w = &parts.w;
    let wnn = w[(s, s)];
    let w_tn = 0.5 * Vector2::new(w[(s + 1, s)] + w[(s, s + 1)], w[(s + 2, s)] + w[(s, s + 2)]);
    let rt = Vector2::new(r[s + 1], r[s + 2]);
    let a = rt.norm();
    let e = rt / a;
    let k = mu / wnn;
    let d = e + k * w_tn;
    let p = Vector2::new(-u[s + 2], u[s + 1]);
    // u_n = 0.
    parts.b[(s, s)] = 1.0;
    // |r_t| - mu r_n = 0.
    parts.j[(s + 1, s)] = -mu;
    parts.j[(s + 1, s + 1)] = e[0];
    parts.j[(s + 1, s + 2)] = e[1];
    parts.f_mu[(s + 1, block)] = -r[s];
    // p . d = 0: d(p . d)/du_t = (d_2, -d_1); d/dr_t through e = r_t / |r_t|.
    parts.b[(s + 2, s + 1)] = d[1];
    parts.b[(s + 2, s + 2)] = -d[0];
    let de = (p - e * e.dot(&p)) / a;
    parts.j[(s + 2, s + 1)] = de[0];
    parts.j[(s + 2, s + 2)] = de[1];
    parts.f_mu[(s + 2, block)] = p.dot(&w_tn) / wnn;
    let row = s + 2;
    parts.w_direct.extend([
        WEntry {
            row,
            i: s + 1,
            j: s,
            c: k * p[0],
        },
        WEntry {
            row,
            i: s + 2,
            j: s,
            c: k * p[1],
        },
        WEntry {
            row,
            i: s,
            j: s,
            c: -k * p.dot(&w_tn) / wnn,
        },
    ]);
    add_bw(parts, s, [s, s + 2].into_iter());
}

/// Adds `B W` to `J` on `rows` of the contact whose rows start at `s` (the residual's
/// dependence on `r` through `u = W r + q`; `B` is nonzero on the block's columns only).
fn add_bw(parts: &mut Parts, s: usize, rows: impl Iterator<Item = usize>) {
    let n = parts.j.ncols();
    for i in rows {
        for k in s..s + 3 {
            let b = parts.b[(i, k)];
            if b != 0.0 {
                for col in 0..n {
                    parts.j[(i, col)] += b * parts.w[(k, col)];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
