//! The derivatives of the friction pyramid's answer to the problem's data (issue 43), by the
//! implicit function theorem on Erleben and Ortiz's min-map at the answer: the model every pair
//! that solves the pyramid answers (the min-map's Newton, Mylapilli and Jain's Fischer-Burmeister
//! MLCP), differentiated through the pyramid's own equations, as the Coulomb cone's answers are
//! through the natural map.
//!
//! With `y = W x + q`, `H_i(x) = max(x_i - u_i(x), min(x_i - l_i(x), y_i))` (eq. 5) and its
//! Jacobian element `J` of eq. 9 ([`MinMap::jacobian_for`]), a change `(dq, dW, dmu)` of the data
//! moves the answer by `J dx = -B (dq + dW x) - H_mu dmu` with
//!
//! * `B = dH/dy`: `1` on the rows whose active piece is `y` (the set `A` of eq. 10), else `0`;
//! * `H_mu = dH/dmu`: on a frictional row `i` of block `b` whose bound is active,
//!   `d(x_i -+ mu_i x_n) = -+ x_n dmu_i` (`+` on `L`, where `l_i = -mu_i x_n`), with the natural
//!   map's convention for a block's `mu`: its two sliding rows move in proportion, its torsional
//!   and rolling rows stay ([`crate::natural_map::sensitivity`]).
//!
//! The velocities follow, `du = W dx + dq + dW x`; the rest (minimum-norm `dx` where `J` is
//! singular, reverse mode, the generalized chain rule) is [`Sensitivity`]'s.
//!
//! **Regimes.** Per block from its rows' pieces: a contact whose normal row is on its lower
//! bound (`x_n = 0`) separates, one whose sliding rows are all on `y` sticks, else it slides (a
//! limit or frictionless contact as a normal row; a friction loss holds on `y`, slides on a
//! bound; an equality holds). A row's distance to a kink is the gap between its active piece and
//! the nearest competing one, `|(x - l) - y'|` and `|min(x - l, y') - (x - u)|` with
//! `y' = y / W_ii` (impulse units, as the natural map's `z = r - rho y` reads); a block's the least of
//! its rows' (a separated contact's: its normal row's, since its sliding rows' bounds meet at the
//! apex and tie there whatever the data).
//!
//! Only the pyramid whose faces lie along the problem's tangent axes: a turned pyramid (the
//! min-map's `theta0_deg`, `align_with_slip`) is another model, refused by the caller.

use contactlab_core::constraint::Constraint;
use contactlab_core::metrics::pyramid_local_metrics;
use contactlab_core::{CoreError, LocalProblem};
use faer::Mat;

use super::minmap::{MinMap, Piece};
use crate::natural_map::mu_direction;
use crate::natural_map::sensitivity::{
    check_answer_rows, refuse_unless_answer, Parts, Regime, Sensitivity,
};

/// The derivatives at `r`, which must answer `problem`'s friction pyramid to `tol` on the
/// pyramid's ruler ([`pyramid_local_metrics`]).
pub fn pyramid_sensitivity(
    problem: &LocalProblem,
    r: &[f64],
    tol: f64,
) -> Result<Sensitivity, CoreError> {
    check_answer_rows(problem, r)?;
    refuse_unless_answer(
        pyramid_local_metrics(problem, r).natural_map,
        tol,
        "the impulses do not answer the problem's friction pyramid",
        "natural-map residual",
    )?;
    let n = problem.q.len();
    let map = MinMap::new(problem)?;
    let point = map.evaluate(r);
    let mut j = Mat::zeros(n, n);
    map.jacobian_for(&point.pieces, j.as_mut());
    let b = Mat::from_fn(n, n, |i, k| {
        f64::from(u8::from(i == k && point.pieces[i] == Piece::Active))
    });
    let mut f_mu = Mat::zeros(n, problem.constraints.len());
    let mut kinks = Vec::with_capacity(problem.constraints.len());
    for (block, (rows, c)) in problem.constraints.iter().enumerate() {
        if let Some(d) = mu_direction(c) {
            for k in 1..=2.min(rows.len() - 1) {
                let i = rows.start + k;
                let xn = r[map.normal_row(i)];
                let side = match point.pieces[i] {
                    Piece::Lower => xn,
                    Piece::Upper => -xn,
                    Piece::Active => 0.0,
                };
                f_mu[(i, block)] = side * d[k - 1];
            }
        }
        // A separated contact's sliding rows sit at the collapsed pyramid's apex, where their
        // two bounds tie whatever `x_t`; with `x_n` held at zero by its own row the tie moves
        // nothing, and only the normal row's gap counts.
        let separated = point.pieces[rows.start] == Piece::Lower;
        let counted = if separated {
            rows.start..rows.start + 1
        } else {
            rows.clone()
        };
        let gaps = counted.map(|i| {
            let (l, u) = map.bounds(r, i);
            // `y` in impulse units, as the natural map reads its `z = r - rho y`.
            let wii = map.entry(i, i);
            let y = point.y[i] / if wii > 0.0 { wii } else { 1.0 };
            let (lower, upper) = (r[i] - l, r[i] - u);
            (lower - y).abs().min((lower.min(y) - upper).abs())
        });
        let gap = gaps.fold(f64::INFINITY, |a, g| if g.is_nan() { a } else { a.min(g) });
        kinks.push((regime(c, &point.pieces[rows]), gap));
    }
    let w = problem.w.to_dense();
    Sensitivity::from_parts(
        problem,
        r,
        Parts {
            w,
            j,
            b,
            f_mu,
            kinks,
            w_direct: Vec::new(),
            impulse_map: None,
        },
    )
}

/// A block's regime from its rows' pieces (see the module documentation).
fn regime(c: &Constraint, pieces: &[Piece]) -> Regime {
    let bound = |p: &Piece| *p != Piece::Active;
    match c {
        Constraint::Equality { .. } => Regime::Sticking,
        Constraint::FrictionLoss { .. } if bound(&pieces[0]) => Regime::Sliding,
        Constraint::FrictionLoss { .. } => Regime::Sticking,
        _ if pieces[0] == Piece::Lower => Regime::Separating,
        Constraint::Contact { mu }
            if !mu.is_empty() && pieces[1..3.min(pieces.len())].iter().any(bound) =>
        {
            Regime::Sliding
        }
        _ => Regime::Sticking,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{
        assert_matches_differences, central, direction, mixed_mu_direction, moved, solved_mixed,
    };
    use crate::natural_map::sensitivity::LocalDirection;
    use contactlab_core::drivers::{solve_least_squares, GaussNewtonLs};
    use contactlab_core::{Matrix, SolveOptions, Status};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The pyramid's answer by Gauss-Newton on the min-map from `start`, to `1e-13`.
    fn solve(p: &LocalProblem, start: &[f64]) -> Option<Vec<f64>> {
        let opts = SolveOptions {
            max_iter: 200,
            stop_tol: 1e-13,
            ..SolveOptions::default()
        };
        let map = MinMap::new(p).ok()?;
        let s = solve_least_squares(map, GaussNewtonLs::default(), start.to_vec(), &opts).ok()?;
        (s.status == Status::Converged).then_some(s.x)
    }

    /// Forward mode along `q`, `W` and the contacts' `mu` at once agrees with central
    /// differences of the pyramid's solve (steps `1e-6` and `1e-7` agreeing: no piece changes
    /// inside the step) to `1e-7` relative, and reverse mode is its adjoint to `1e-10`.
    #[test]
    fn the_pyramids_derivative_is_the_derivative_of_its_solve() {
        let mut compared = 0;
        for (seed, p, n, r) in solved_mixed(0..16, solve) {
            let s = pyramid_sensitivity(&p, &r, 1e-12).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(300 + seed);
            let (dq, dw) = direction(n, &mut rng);
            let dmu = mixed_mu_direction(&mut rng);
            let at = |t: f64| moved(&p, (&dq, &dw, &dmu), t);
            let Some(fd) = central(at, |q| solve(q, &r)) else {
                continue;
            };
            if s.non_unique() {
                continue;
            }
            let what = format!("seed {seed}");
            assert_matches_differences(&s, (&dq, &dw, &dmu), &fd, 1e-7, &mut rng, &what);
            compared += 1;
        }
        assert!(compared >= 8, "only {compared} seeds compared");
    }

    /// One Coulomb contact on `W = I`: pushed in with a small tangential push it sticks, with a
    /// large one it slides on the pyramid's face with `dr_t1/dmu = -r_n` (the face
    /// `r_t1 = -mu r_n` moves with `mu`), pulled apart it separates; an answer that is not one is
    /// refused.
    #[test]
    fn the_pyramids_regimes_and_the_face_that_moves_with_mu() {
        let one = |q: [f64; 3]| {
            LocalProblem::new(
                Matrix::Dense(faer::Mat::identity(3, 3)),
                q.to_vec(),
                vec![0.5],
            )
            .unwrap()
        };
        let cases = [
            ([-1.0, 0.1, 0.0], [1.0, -0.1, 0.0], Regime::Sticking),
            ([-1.0, 2.0, 0.0], [1.0, -0.5, 0.0], Regime::Sliding),
            ([1.0, 0.3, 0.0], [0.0, 0.0, 0.0], Regime::Separating),
        ];
        for (q, r, want) in cases {
            let s = pyramid_sensitivity(&one(q), &r, 1e-12).unwrap();
            assert_eq!(s.regimes(1e-6), vec![want], "{q:?}");
        }
        let s = pyramid_sensitivity(&one([-1.0, 2.0, 0.0]), &[1.0, -0.5, 0.0], 1e-12).unwrap();
        let (dr, _) = s
            .jvp(&LocalDirection {
                mu: Some(&[1.0]),
                ..Default::default()
            })
            .unwrap();
        assert!(
            (dr[1] + 1.0).abs() <= 1e-12 && dr[0].abs() <= 1e-12,
            "{dr:?}"
        );
        let e = pyramid_sensitivity(&one([-1.0, 2.0, 0.0]), &[1.0, 0.0, 0.0], 1e-12).unwrap_err();
        assert!(e.to_string().contains("friction pyramid"), "{e}");
    }
}
