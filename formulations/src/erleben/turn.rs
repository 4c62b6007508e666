//! Turning the pyramid's faces on a problem of any blocks: the turn of
//! [`crate::pyramid::PyramidTurn`] (`theta0_deg`, `align_with_slip`) applied to each contact's
//! sliding pair `(t1, t2)` only, when the pair is isotropic (`mu_1 = mu_2`, a Coulomb contact
//! or a condim 4 or 6 contact with MuJoCo's usual equal sliding coefficients).
//!
//! Why only that pair: a turn about the normal maps the sliding disc `|r_t| <= mu r_n` onto
//! itself, so the turned box is another box approximation of the same cone; an anisotropic
//! pair's ellipse has its own axes, and a box in turned axes would no longer approximate it,
//! so a turn asked of such a contact is refused by name. The torsional and rolling rows, and
//! every block that is not a contact with friction, have no slip direction and are left as
//! they are. On a problem of Coulomb contacts only the plugin keeps the per-contact turn of
//! `contactlab_core::frame::rotate_tangents` (the numbers of before).

use contactlab_core::constraint::Constraint;
use contactlab_core::frame::slip_angles;
use contactlab_core::{CoreError, LocalProblem, Matrix};

use crate::pyramid::PyramidTurn;

/// `v' = R' v` for the pairs starting at `rows` turned by `angles` (radians, from the pair's
/// first axis towards its second), as `contactlab_core::frame::to_rotated` turns a contact.
pub fn rotate(v: &[f64], rows: &[usize], angles: &[f64]) -> Vec<f64> {
    let mut out = v.to_vec();
    for (&k, a) in rows.iter().zip(angles) {
        let (si, co) = a.sin_cos();
        out[k] = co * v[k] + si * v[k + 1];
        out[k + 1] = -si * v[k] + co * v[k + 1];
    }
    out
}

/// The inverse of [`rotate`]: `v = R v'`.
pub fn rotate_back(v: &[f64], rows: &[usize], angles: &[f64]) -> Vec<f64> {
    let mut out = v.to_vec();
    for (&k, a) in rows.iter().zip(angles) {
        let (si, co) = a.sin_cos();
        out[k] = co * v[k] - si * v[k + 1];
        out[k + 1] = si * v[k] + co * v[k + 1];
    }
    out
}

/// The local problem with the pairs starting at `rows` turned by `angles`:
/// `W' = R' W R`, `q' = R' q`, the blocks unchanged (a turn preserves every pair's isotropic
/// bounds).
pub fn turn_pairs(
    problem: &LocalProblem,
    rows: &[usize],
    angles: &[f64],
) -> Result<LocalProblem, CoreError> {
    let n = problem.q.len();
    let w = problem.w.to_dense();
    // R'W column by column, then (R'W)R row by row (R' of each row is R applied to it).
    let mut rtw = vec![0.0; n * n];
    for j in 0..n {
        let col: Vec<f64> = (0..n).map(|i| w[(i, j)]).collect();
        for (i, v) in rotate(&col, rows, angles).into_iter().enumerate() {
            rtw[i * n + j] = v;
        }
    }
    let mut wr = vec![0.0; n * n];
    for i in 0..n {
        let row = &rtw[i * n..(i + 1) * n];
        wr[i * n..(i + 1) * n].copy_from_slice(&rotate(row, rows, angles));
    }
    Ok(LocalProblem::with_constraints(
        Matrix::from_row_major("W", n, n, &wr)?,
        rotate(&problem.q, rows, angles),
        problem.constraints.clone(),
    )?)
}

/// Turned sliding pairs: the first row of each pair, and its angle (radians).
pub type TurnedPairs = (Vec<usize>, Vec<f64>);

/// The sliding pairs `turn` turns on `problem` (a problem with a block other than a Coulomb
/// contact), as `(first rows, angles)`; `None` when `turn` asks for none.
///
/// The angle is `theta0_deg` at every pair, or with `align_with_slip` the pair's own angle of
/// `-q_t` (`contactlab_core::frame::slip_angles` of the contact's rows). A contact whose
/// sliding pair is anisotropic (`mu_1 != mu_2`) is refused, naming the block.
pub fn pairs_for(
    problem: &LocalProblem,
    turn: &PyramidTurn,
) -> Result<Option<TurnedPairs>, CoreError> {
    if !turn.align_with_slip && turn.theta0_deg == 0.0 {
        return Ok(None);
    }
    let (mut rows, mut angles) = (Vec::new(), Vec::new());
    for (b, (range, c)) in problem.constraints.iter().enumerate() {
        let Constraint::Contact { mu } = c else {
            continue;
        };
        if mu.len() < 2 {
            continue;
        }
        if mu[0] != mu[1] {
            return Err(CoreError::Unsupported(format!(
                "min-map turns a contact's pyramid (theta0_deg, align_with_slip) only about an \
                 isotropic sliding pair; constraint {b}, a {}, has mu[0] = {} != mu[1] = {}: \
                 solve it unturned",
                c.describe(),
                mu[0],
                mu[1]
            )));
        }
        let s = range.start;
        rows.push(s + 1);
        angles.push(if turn.align_with_slip {
            slip_angles(&problem.q[s..s + 3])?[0]
        } else {
            turn.theta0_deg.to_radians()
        });
    }
    Ok(Some((rows, angles)))
}
