//! `A^+ y` for the sticking start of section III-F (`f = A^+ (v - v0)`), `A` the Delassus
//! matrix: symmetric positive semidefinite, and singular on resting piles (more contact rows
//! than the bodies have velocities).
//!
//! The Cholesky factorization with diagonal pivoting, `P A P' = L L'`, takes the largest
//! remaining diagonal as each pivot, so the pivots `L_jj^2` never increase, and the first `r`
//! columns of `L` are those of any factorization stopped at step `r`. The numerical rank `r` is
//! the count of pivots above `rcond` times the first (the largest diagonal of `A`), and
//! `B = P' L_r` (`n x r`, full column rank) gives `A`'s range part as `B B'`, whose
//! pseudoinverse is `B (B'B)^-2 B'` (with `B = U S V'`, both are `U S^-2 U'`). That is one
//! pivoted Cholesky, one `r x r` product and one `r x r` Cholesky (at full rank `r = n`, two
//! triangular solves with `L` instead; and a matrix that the blocked Cholesky without pivoting
//! factors with every pivot above the cutoff is solved by that factor alone), several times
//! fewer flops than the eigendecomposition this replaced, which made the start a third of a solve on
//! clutter islands.

use contactlab_core::drivers::kit::gram;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place as llt_in_place, cholesky_in_place_scratch as llt_scratch,
};
use faer::linalg::cholesky::llt_pivoting::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::solvers::Solve;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Col, Mat, MatRef, Par, Side};

/// `A^+ y` for symmetric positive semidefinite `A` (module docs), the directions whose pivot
/// is at most `rcond` times the largest diagonal dropped. A matrix the pivoted factorization
/// refuses (a negative or non-finite diagonal: not semidefinite) is solved by
/// [`eigen_pseudo_inverse_solve`] with the same `rcond` on its eigenvalues.
pub fn pseudo_inverse_solve(a: &Mat<f64>, y: &[f64], rcond: f64) -> Vec<f64> {
    // Formed once: a singular pile's `W` goes on from the unpivoted attempt to the pivoted one.
    let s = symmetric_part(a);
    unpivoted_solve(&s, y, rcond)
        .or_else(|| pivoted_cholesky_solve(&s, y, rcond))
        .unwrap_or_else(|| eigen_pseudo_inverse_solve(a, y, rcond))
}

/// `S^-1 y` for `S` the symmetric part of `A`, by faer's blocked Cholesky without pivoting,
/// where it runs through with every pivot above `rcond` times the largest diagonal: then `S` is
/// taken as regular under the same cutoff, and its inverse is its pseudoinverse. `None` otherwise (a singular pile's `W` stops
/// it at a pivot of round-off size), and the pivoted factorization decides the rank. The
/// blocked factorization runs at the speed of matrix products, several times the pivoted
/// one's column-by-column updates (3 of 5 ms of the start at 618 rows); the two tests can
/// disagree only on a matrix whose conditioning is near `1 / rcond`.
fn unpivoted_solve(s: &Mat<f64>, y: &[f64], rcond: f64) -> Option<Vec<f64>> {
    let n = y.len();
    let mut l = s.clone();
    let top = (0..n).map(|i| l[(i, i)]).fold(0.0, f64::max);
    if !(top > 0.0 && top.is_finite()) {
        return None;
    }
    let mut buf = MemBuffer::new(llt_scratch::<f64>(n, Par::Seq, Default::default()));
    llt_in_place(
        l.as_mut(),
        Default::default(),
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .ok()?;
    if !(0..n).all(|j| l[(j, j)] * l[(j, j)] > rcond * top) {
        return None;
    }
    let identity: Vec<usize> = (0..n).collect();
    full_rank_solve(l.as_ref(), &identity, y)
}

/// The module's solve on `S`, the symmetric part of `A`; `None` where the pivoted
/// factorization or the `r x r` one fails.
fn pivoted_cholesky_solve(s: &Mat<f64>, y: &[f64], rcond: f64) -> Option<Vec<f64>> {
    let n = y.len();
    let mut l = s.clone();
    let top = (0..n).map(|i| l[(i, i)]).fold(0.0, f64::max);
    if top == 0.0 {
        return Some(vec![0.0; n]);
    }
    let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
    let mut buf = MemBuffer::new(cholesky_in_place_scratch::<usize, f64>(
        n,
        Par::Seq,
        Default::default(),
    ));
    let (info, _) = cholesky_in_place(
        l.as_mut(),
        &mut perm,
        &mut perm_inv,
        Par::Seq,
        MemStack::new(&mut buf),
        Default::default(),
    )
    .ok()?;
    let rank = (0..info.rank)
        .take_while(|&j| l[(j, j)] * l[(j, j)] > rcond * top)
        .count();
    if rank == n {
        return full_rank_solve(l.as_ref(), &perm, y);
    }
    // B = P' L_r: row perm[i] of B is row i of L_r.
    let b = Mat::from_fn(n, rank, |i, j| if i >= j { l[(i, j)] } else { 0.0 });
    let llt = gram(b.as_ref()).llt(Side::Lower).ok()?;
    let bty = b.transpose() * Col::from_fn(n, |i| y[perm[i]]);
    let z = llt.solve(llt.solve(&bty));
    let fp = &b * &z;
    let mut out = vec![0.0; n];
    for (i, &p) in perm.iter().enumerate() {
        out[p] = fp[i];
    }
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// `A^-1 y = P' L^-T L^-1 P y` where every pivot passed the cutoff: the pseudoinverse is the
/// inverse, and two triangular solves replace the `r x r` product and factorization (a
/// regularised `A + R` is never singular, and there they were two thirds of the start's flops).
fn full_rank_solve(l: MatRef<'_, f64>, perm: &[usize], y: &[f64]) -> Option<Vec<f64>> {
    let n = y.len();
    let mut z = Mat::from_fn(n, 1, |i, _| y[perm[i]]);
    solve_lower_triangular_in_place(l, z.as_mut(), Par::Seq);
    solve_upper_triangular_in_place(l.transpose(), z.as_mut(), Par::Seq);
    let mut out = vec![0.0; n];
    for (i, &p) in perm.iter().enumerate() {
        out[p] = z[(i, 0)];
    }
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// `(A + A') / 2`.
fn symmetric_part(a: &Mat<f64>) -> Mat<f64> {
    let n = a.nrows();
    Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

/// `A^+ y` for symmetric `A` by its eigendecomposition, dropping eigenvalues with
/// `|lambda| <= rcond * max |lambda|`: the fallback for a matrix that is not semidefinite.
pub fn eigen_pseudo_inverse_solve(a: &Mat<f64>, y: &[f64], rcond: f64) -> Vec<f64> {
    let n = y.len();
    let Ok(eig) = symmetric_part(a).self_adjoint_eigen(faer::Side::Lower) else {
        return vec![0.0; n];
    };
    let (u, s) = (eig.U(), eig.S());
    let smax = (0..n).map(|i| s[i].abs()).fold(0.0, f64::max);
    let mut out = vec![0.0; n];
    for k in 0..n {
        let lam = s[k];
        if lam.abs() <= rcond * smax || lam == 0.0 {
            continue;
        }
        let c: f64 = (0..n).map(|i| u[(i, k)] * y[i]).sum::<f64>() / lam;
        for (i, o) in out.iter_mut().enumerate() {
            *o += c * u[(i, k)];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random `n x n` PSD matrix of rank `r`, its eigenvalues spread over four decades.
    fn low_rank(n: usize, r: usize, seed: u64) -> Mat<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = Mat::from_fn(n, r, |_, j| {
            rng.random_range(-1.0..1.0) * 10f64.powf(-4.0 * j as f64 / r.max(1) as f64)
        });
        &g * g.transpose()
    }

    #[test]
    fn the_pivoted_solve_equals_the_eigendecomposition_on_singular_and_regular_matrices() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (n, r) in [(1, 1), (6, 6), (12, 7), (30, 30), (45, 20), (90, 41)] {
            let a = low_rank(n, r, n as u64);
            let y: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let fast = pseudo_inverse_solve(&a, &y, 1e-10);
            let slow = eigen_pseudo_inverse_solve(&a, &y, 1e-10);
            let scale = slow.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let gap = fast
                .iter()
                .zip(&slow)
                .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
            assert!(gap <= 1e-6 * scale, "n {n} rank {r}: {gap:e} of {scale:e}");
            // The answer lies in A's range (the minimum-norm one): A A^+ A = A.
            let fy = Col::from_fn(n, |i| fast[i]);
            let back = &a * &fy;
            let again =
                pseudo_inverse_solve(&a, &(0..n).map(|i| back[i]).collect::<Vec<_>>(), 1e-10);
            let drift = again
                .iter()
                .zip(&fast)
                .fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
            assert!(drift <= 1e-6 * scale, "n {n} rank {r}: {drift:e}");
        }
    }

    #[test]
    fn the_unpivoted_solve_takes_regular_matrices_and_leaves_singular_ones_to_the_pivoted() {
        let y: Vec<f64> = (0..12).map(|i| (i as f64).sin()).collect();
        let regular = low_rank(12, 12, 5);
        let x = unpivoted_solve(&regular, &y, 1e-10).expect("a regular matrix");
        let back = &regular * Col::from_fn(12, |i| x[i]);
        (0..12).for_each(|i| assert!((back[i] - y[i]).abs() < 1e-6, "row {i}"));
        // Rank 7 of 12: a pivot of round-off size, under the cutoff.
        assert!(unpivoted_solve(&low_rank(12, 7, 5), &y, 1e-10).is_none());
    }

    #[test]
    fn zero_and_indefinite_matrices_have_an_answer() {
        let zero = Mat::<f64>::zeros(3, 3);
        assert_eq!(
            pseudo_inverse_solve(&zero, &[1.0, 2.0, 3.0], 1e-10),
            vec![0.0; 3]
        );
        // Indefinite: diag(2, -1) falls back to the eigendecomposition, which inverts both.
        let a = Mat::from_fn(2, 2, |i, j| match (i, j) {
            (0, 0) => 2.0,
            (1, 1) => -1.0,
            _ => 0.0,
        });
        let x = pseudo_inverse_solve(&a, &[2.0, 3.0], 1e-10);
        assert!(
            (x[0] - 1.0).abs() < 1e-14 && (x[1] + 3.0).abs() < 1e-14,
            "{x:?}"
        );
    }
}
