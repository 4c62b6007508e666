//! The per-step accuracy figures of ContactBench (Q. Le Lidec, W. Jallet, L. Montaut,
//! I. Laptev, C. Schmid and J. Carpentier, "Contact Models in Robotics: a Comparative Analysis",
//! IEEE T-RO 2024), beside the shared ruler of [`crate::metrics`] (issue 44): the figures that
//! paper's accuracy-against-time plots read, so that a pair's point on our plot means what it
//! means on theirs.
//!
//! Each is taken per contact on the forces `lambda = r / dt` (independent of the time step) with
//! the contact velocity `c = u` and De Saxce's correction `Gamma(c) = (|D c_f|, 0, ...)`
//! (`mu |c_T|` on a Coulomb contact), and the step's figure is the largest over its contacts:
//!
//! * primal feasibility `dist_K(lambda)`, the distance to the friction cone;
//! * dual feasibility `dist_K*(c + Gamma(c))`, to the dual cone;
//! * complementarity `|<lambda, c + Gamma(c)>|`;
//! * Signorini `|lambda_N c_N|`;
//! * the maximum-dissipation gap `(mu lambda_N - |lambda_T|) |c_T|`, written for MuJoCo's
//!   anisotropic cones as `(lambda_N - |D^-1 lambda_f|) |D c_f|` (the same on a Coulomb contact),
//!   zero when a sliding contact's friction is on the cone's surface.
//!
//! Velocities are in the problem's own units, forces in impulse over time. Only contacts count
//! (ContactBench has no other kind): a frictionless contact has the primal, dual, complementarity
//! and Signorini figures of its normal row; equality, limit and friction-loss rows are left out.

use serde::{Deserialize, Serialize};

use crate::constraint::{Constraint, Constraints};
use crate::elliptic_cone;
use crate::error::CoreError;
use crate::problem::LocalProblem;

/// One step's ContactBench figures (see the module documentation), each the largest over the
/// step's contacts (0 without one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContactBenchMetrics {
    /// `max dist_K(lambda)`.
    pub primal: f64,
    /// `max dist_K*(c + Gamma(c))`.
    pub dual: f64,
    /// `max |<lambda, c + Gamma(c)>|`.
    pub complementarity: f64,
    /// `max |lambda_N c_N|`.
    pub signorini: f64,
    /// `max (lambda_N - |D^-1 lambda_f|) |D c_f|`.
    pub dissipation: f64,
}

/// The figures of impulses `r` for the problem `p` over a step of `dt`, refused for a `dt`
/// that is not positive and finite, or an `r` of the wrong length.
pub fn contactbench_metrics(
    p: &LocalProblem,
    r: &[f64],
    dt: f64,
) -> Result<ContactBenchMetrics, CoreError> {
    if r.len() != p.q.len() {
        return Err(CoreError::BadOption(format!(
            "ContactBench's figures: {} impulses for a problem of {} rows",
            r.len(),
            p.q.len()
        )));
    }
    contactbench_of(&p.constraints, r, &p.velocity(r), dt)
}

/// The figures of impulses `r` with their constraint velocities `u` over a step of `dt`, on
/// the blocks `constraints` (a generalized problem's, whose `u = J v + b` needs no `W`);
/// refused for a `dt` that is not positive and finite, or an `r` or `u` of the wrong length.
pub fn contactbench_of(
    constraints: &Constraints,
    r: &[f64],
    u: &[f64],
    dt: f64,
) -> Result<ContactBenchMetrics, CoreError> {
    if !(dt > 0.0 && dt.is_finite()) {
        return Err(CoreError::BadOption(format!(
            "ContactBench's figures take forces r / dt: dt = {dt} is not a positive time step"
        )));
    }
    let rows = constraints.rows();
    if r.len() != rows || u.len() != rows {
        return Err(CoreError::BadOption(format!(
            "ContactBench's figures: {} impulses and {} velocities for {rows} rows",
            r.len(),
            u.len()
        )));
    }
    let mut out = ContactBenchMetrics {
        primal: 0.0,
        dual: 0.0,
        complementarity: 0.0,
        signorini: 0.0,
        dissipation: 0.0,
    };
    for (rows, c) in constraints.iter() {
        if let Constraint::Contact { mu } = c {
            let lambda: Vec<f64> = r[rows.clone()].iter().map(|x| x / dt).collect();
            let f = contact(c, mu, &lambda, &u[rows]);
            // NaN must not hide behind `max`: a figure that is not finite stays so.
            let worse = |a: f64, b: f64| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            };
            out.primal = worse(out.primal, f[0]);
            out.dual = worse(out.dual, f[1]);
            out.complementarity = worse(out.complementarity, f[2]);
            out.signorini = worse(out.signorini, f[3]);
            out.dissipation = worse(out.dissipation, f[4]);
        }
    }
    Ok(out)
}

/// One contact's five figures, in the order of [`ContactBenchMetrics`]: the first three are the
/// shared ruler's terms of the block ([`Constraint::violations`]) on the forces.
fn contact(c: &Constraint, mu: &[f64], lambda: &[f64], vel: &[f64]) -> [f64; 5] {
    let (primal, dual, complementarity) = c.violations(lambda, vel);
    // Friction on a row without a coefficient lies outside the cone: no dissipation gap there
    // (the primal figure already counts it).
    let dissipation = match elliptic_cone::scaled_friction(mu, &lambda[1..]) {
        Some(s) if !mu.is_empty() => {
            (lambda[0] - s).max(0.0) * elliptic_cone::dual_norm(mu, &vel[1..])
        }
        _ => 0.0,
    };
    [
        primal,
        dual,
        complementarity,
        (lambda[0] * vel[0]).abs(),
        dissipation,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Matrix;

    fn one(q: [f64; 3], mu: f64) -> LocalProblem {
        LocalProblem::new(
            Matrix::Dense(faer::Mat::identity(3, 3)),
            q.to_vec(),
            vec![mu],
        )
        .unwrap()
    }

    /// The Coulomb answers of one contact on `W = I` meet every figure: sticking
    /// (`r = -q` inside the cone), sliding (`r_t = -mu r_n` along the slip), separating.
    #[test]
    fn coulomb_answers_meet_every_figure() {
        let cases = [
            ([-1.0, 0.1, 0.0], [1.0, -0.1, 0.0]),
            ([-1.0, 2.0, 0.0], [1.0, -0.5, 0.0]),
            ([1.0, 0.3, -0.2], [0.0, 0.0, 0.0]),
        ];
        for (q, r) in cases {
            let m = contactbench_metrics(&one(q, 0.5), &r, 0.01).unwrap();
            for (name, v) in [
                ("primal", m.primal),
                ("dual", m.dual),
                ("complementarity", m.complementarity),
                ("signorini", m.signorini),
                ("dissipation", m.dissipation),
            ] {
                assert!(v.abs() <= 1e-12, "{q:?} {name}: {v}");
            }
        }
    }

    /// Each figure by hand where the answer is wrong, on forces `r / dt`: friction inside the
    /// cone while sliding (the dissipation gap `(mu lambda_N - |lambda_T|) |c_T|`), friction
    /// outside it (the primal distance), a pushing normal that opens (Signorini and the
    /// complementarity of the normal row), and a refused `dt`.
    #[test]
    fn each_figure_by_hand() {
        let dt = 0.01;
        let p = one([-1.0, 2.0, 0.0], 0.5);
        // Too little friction: r = (1, -0.2, 0), u = (0, 1.8, 0).
        let m = contactbench_metrics(&p, &[1.0, -0.2, 0.0], dt).unwrap();
        assert!(
            (m.dissipation - (0.5 * 100.0 - 20.0) * 1.8).abs() <= 1e-9,
            "{m:?}"
        );
        assert!(m.primal <= 1e-12);
        // Too much: |r_t| = 0.8 > mu r_n = 0.5; the distance of (100, -80) to the cone of 0.5.
        let m = contactbench_metrics(&p, &[1.0, -0.8, 0.0], dt).unwrap();
        let want = (80.0 - 0.5 * 100.0) / (1.0f64 + 0.25).sqrt();
        assert!((m.primal - want).abs() <= 1e-9, "{m:?} {want}");
        assert_eq!(m.dissipation, 0.0);
        // A normal impulse on a separating contact: u_n = 1 + 0.5 = 1.5 with lambda_N = 50.
        let q = one([1.0, 0.0, 0.0], 0.5);
        let m = contactbench_metrics(&q, &[0.5, 0.0, 0.0], dt).unwrap();
        assert!((m.signorini - 50.0 * 1.5).abs() <= 1e-9, "{m:?}");
        assert!((m.complementarity - 50.0 * 1.5).abs() <= 1e-9, "{m:?}");
        assert!(contactbench_metrics(&q, &[0.5, 0.0, 0.0], 0.0).is_err());
        let m = contactbench_metrics(&q, &[f64::NAN, 0.0, 0.0], dt).unwrap();
        assert!(m.primal.is_nan() && m.signorini.is_nan(), "{m:?}");
        assert!(contactbench_metrics(&q, &[0.5, 0.0], dt).is_err());
    }

    /// On constraints and velocities the figures are those of the problem's own `u = W r + q`,
    /// and a velocity of the wrong length is refused.
    #[test]
    fn the_figures_of_given_velocities_are_the_problems() {
        let p = one([-1.0, 2.0, 0.0], 0.5);
        let r = [1.0, -0.3, 0.1];
        let u = p.velocity(&r);
        let a = contactbench_metrics(&p, &r, 0.01).unwrap();
        let b = contactbench_of(&p.constraints, &r, &u, 0.01).unwrap();
        assert_eq!(a, b);
        assert!(a.dissipation > 0.0);
        assert!(contactbench_of(&p.constraints, &r, &u[..2], 0.01).is_err());
    }
}
