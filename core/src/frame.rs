//! Contact-frame conventions.
//!
//! Inside the project every contact owns three consecutive rows, **normal first**:
//! `[n, t1, t2]` (FCLib, Todorov 2010, Erleben). Castro et al. (SAP) and Mylapilli and Jain
//! order them **normal last**, `[t1, t2, n]`. Formulations of those papers convert at their
//! edge with these functions, which are each other's inverse.
//!
//! A contact's tangent axes may also be turned about its normal ([`rotate_tangents`]): the
//! friction pyramids of Erleben and Ortiz and of Mylapilli and Jain depend on where their faces
//! point, and this is how a pyramid formulation is solved with its faces turned (by a fixed
//! angle, or against each contact's free slip, [`slip_angles`]).

use crate::error::ProblemError;
use crate::problem::{check_finite_vec, LocalProblem, Matrix};

/// Reorders a per-contact vector from normal first `[n, t1, t2]` to normal last `[t1, t2, n]`.
pub fn to_normal_last(v: &[f64]) -> Vec<f64> {
    v.chunks_exact(3).flat_map(|c| [c[1], c[2], c[0]]).collect()
}

/// Reorders a per-contact vector from normal last `[t1, t2, n]` to normal first `[n, t1, t2]`.
pub fn to_normal_first(v: &[f64]) -> Vec<f64> {
    v.chunks_exact(3).flat_map(|c| [c[2], c[0], c[1]]).collect()
}

/// The row index, in normal-last order, of row `i` given in normal-first order.
pub fn normal_last_index(i: usize) -> usize {
    let (c, k) = (i / 3, i % 3);
    3 * c + [2, 0, 1][k]
}

/// `(cos, sin)` of each angle.
fn cos_sin(angles: &[f64]) -> Vec<(f64, f64)> {
    angles.iter().map(|a| (a.cos(), a.sin())).collect()
}

/// A per-contact vector (normal first) in tangent axes turned by `angles` (radians, from `t1`
/// towards `t2`): `v' = R' v` with `t1' = cos t1 + sin t2`, `t2' = -sin t1 + cos t2`.
pub fn to_rotated(v: &[f64], angles: &[f64]) -> Vec<f64> {
    v.chunks_exact(3)
        .zip(cos_sin(angles))
        .flat_map(|(c, (co, si))| [c[0], co * c[1] + si * c[2], -si * c[1] + co * c[2]])
        .collect()
}

/// The inverse of [`to_rotated`]: `v = R v'`.
pub fn from_rotated(v: &[f64], angles: &[f64]) -> Vec<f64> {
    v.chunks_exact(3)
        .zip(cos_sin(angles))
        .flat_map(|(c, (co, si))| [c[0], co * c[1] - si * c[2], si * c[1] + co * c[2]])
        .collect()
}

/// The local problem in tangent axes turned by `angles` (one per contact, radians):
/// `W' = R' W R`, `q' = R' q`, so that `u' = W' r' + q'` is `R' u` for `r = R r'`.
/// Solve the turned problem, then map its impulses back with [`from_rotated`].
pub fn rotate_tangents(
    problem: &LocalProblem,
    angles: &[f64],
) -> Result<LocalProblem, ProblemError> {
    let nc = problem.num_contacts();
    if angles.len() != nc {
        return Err(ProblemError::Shape {
            field: "angles".into(),
            expected: format!("{nc} entries (one per contact)"),
            found: format!("{} entries", angles.len()),
        });
    }
    check_finite_vec("angles", angles)?;
    let n = 3 * nc;
    let w = problem.w.to_dense();
    // R'W column by column, then (R'W)R row by row: both are per-contact turns.
    let mut rtw = vec![0.0; n * n];
    for j in 0..n {
        let col: Vec<f64> = (0..n).map(|i| w[(i, j)]).collect();
        for (i, v) in to_rotated(&col, angles).into_iter().enumerate() {
            rtw[i * n + j] = v;
        }
    }
    let mut wr = vec![0.0; n * n];
    for i in 0..n {
        let row = &rtw[i * n..(i + 1) * n];
        wr[i * n..(i + 1) * n].copy_from_slice(&to_rotated(row, angles));
    }
    Ok(LocalProblem::coulomb(
        Matrix::from_row_major("W", n, n, &wr)?,
        to_rotated(&problem.q, angles),
        problem.mu(),
    ))
}

/// Per contact, the angle (radians, from `t1`) of `-v_t`, the opposite of the tangential part
/// of `velocity` (normal first); 0 where `v_t = 0`. Turning the tangent axes by these angles
/// puts `t1'` against each contact's slip (Mylapilli and Jain's choice for the pendulum, with
/// the free velocity `q` standing in for the velocity before the impulse).
pub fn slip_angles(velocity: &[f64]) -> Result<Vec<f64>, ProblemError> {
    if !velocity.chunks_exact(3).remainder().is_empty() {
        return Err(ProblemError::Shape {
            field: "velocity".into(),
            expected: "3 entries per contact".into(),
            found: format!("{} entries", velocity.len()),
        });
    }
    check_finite_vec("velocity", velocity)?;
    Ok(velocity
        .chunks_exact(3)
        .map(|v| {
            if v[1] == 0.0 && v[2] == 0.0 {
                0.0
            } else {
                (-v[2]).atan2(-v[1])
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_inverse_and_move_the_normal() {
        let v: Vec<f64> = (0..9).map(|i| i as f64).collect();
        let last = to_normal_last(&v);
        assert_eq!(last, vec![1.0, 2.0, 0.0, 4.0, 5.0, 3.0, 7.0, 8.0, 6.0]);
        assert_eq!(to_normal_first(&last), v);
        for (i, &vi) in v.iter().enumerate() {
            assert_eq!(last[normal_last_index(i)], vi);
        }
    }

    fn problem() -> LocalProblem {
        // Two contacts, a symmetric positive definite W with every entry distinct.
        let n = 6;
        let w: Vec<f64> = (0..n * n)
            .map(|ij| {
                let (i, j) = (ij / n, ij % n);
                if i == j {
                    4.0 + i as f64
                } else {
                    0.1 * ((i + j) as f64) - 0.05 * (i.min(j) as f64)
                }
            })
            .collect();
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            vec![-1.0, 2.0, -0.5, 0.3, -0.4, 1.1],
            &[0.5, 0.8],
        )
    }

    #[test]
    fn turned_problems_give_the_turned_velocities() {
        let p = problem();
        let angles = [0.7, -2.1];
        let turned = rotate_tangents(&p, &angles).unwrap();
        let r_turned = [0.9, -0.2, 0.35, 1.3, 0.4, -0.6];
        let r = from_rotated(&r_turned, &angles);
        // u' = W' r' + q' equals R' (W r + q).
        let u_turned = turned.velocity(&r_turned);
        let expected = to_rotated(&p.velocity(&r), &angles);
        for (a, b) in u_turned.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-13, "{u_turned:?} vs {expected:?}");
        }
        assert_eq!(to_rotated(&r, &angles).len(), 6);
        for (a, b) in to_rotated(&r, &angles).iter().zip(&r_turned) {
            assert!((a - b).abs() < 1e-15);
        }
        // Normals and friction coefficients are untouched, W' stays symmetric.
        assert_eq!(turned.q[0], p.q[0]);
        assert_eq!(turned.mu(), p.mu());
        let wt = turned.w.to_dense();
        for i in 0..6 {
            for j in 0..6 {
                assert!((wt[(i, j)] - wt[(j, i)]).abs() < 1e-14);
            }
        }
    }

    #[test]
    fn slip_angles_point_t1_against_the_slip() {
        let q = [0.0, 3.0, -4.0, -1.0, 0.0, 0.0, 2.0, 0.0, 0.0];
        let a = slip_angles(&q).unwrap();
        // Contact 0 slips along (3, -4)/5: t1' must be (-3, 4)/5.
        let t1 = from_rotated(&[0.0, 1.0, 0.0], &a[..1]);
        assert!(
            (t1[1] + 0.6).abs() < 1e-15 && (t1[2] - 0.8).abs() < 1e-15,
            "{t1:?}"
        );
        assert_eq!(a[1], 0.0);
        // The turned free slip is along -t1' only.
        let turned = to_rotated(&q[..3], &a[..1]);
        assert!(
            (turned[1] + 5.0).abs() < 1e-14 && turned[2].abs() < 1e-14,
            "{turned:?}"
        );
        assert!(slip_angles(&[1.0, 2.0]).is_err());
        assert!(slip_angles(&[1.0, f64::NAN, 0.0]).is_err());
        let e = rotate_tangents(&problem(), &[0.1]).unwrap_err().to_string();
        assert!(e.contains("angles"), "{e}");
    }
}
