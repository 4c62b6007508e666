//! Dense factorizations that can stop between panels: Cholesky `A = L L'` and LU with partial
//! pivoting `P A = L U`, by right-looking block elimination (Golub and Van Loan, *Matrix
//! Computations*, 4th ed.: the block Cholesky of sec. 4.2 and the block LU with partial
//! pivoting of sec. 3.4), [`PANEL`] columns at a time, asking `proceed` before each panel.
//!
//! Why: a driver with a time limit reads its deadline between iterations, but one dense
//! factorization of `n` unknowns costs `n^3 / 3` flops (seconds at a few thousand unknowns, and
//! tens of milliseconds at 360 in a debug build, where faer's generic kernels are compiled
//! without optimization), all of it before the driver could look at the clock again. Split into
//! panels, what a deadline cannot interrupt is one panel's trailing update, `O(n^2 PANEL)`:
//! a fraction `3 PANEL / n` of the factorization.
//!
//! One panel of `b` columns at column `k`, with `A = [A11 A12; A21 A22]` split at `k + b`:
//!
//! * Cholesky: `A11 = L11 L11'` (faer), `L21 = A21 L11^-T` (a triangular solve), then
//!   `A22 -= L21 L21'` on the lower triangle only;
//! * LU: the panel `[A11; A21]` factored column by column with partial pivoting (LAPACK's row
//!   swaps, applied across the whole rows), `U12 = L11^-1 A12` (unit lower solve), then
//!   `A22 -= L21 U12`.
//!
//! The kernels of each step are faer's: the answer equals faer's own factorizations to
//! rounding (tested), and in a release build the time as well (measured in the tests' notes of
//! `crate::drivers::admm`).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{
    cholesky_in_place, cholesky_in_place_scratch, LltRegularization,
};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{matmul as triangular_matmul, BlockStructure};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_unit_lower_triangular_in_place,
    solve_upper_triangular_in_place,
};
use faer::{Accum, ColMut, Mat, MatMut, MatRef, Par};

/// Columns per panel: the trailing update of one panel is what a deadline cannot interrupt.
/// 32 keeps that under a tenth of a 360-unknown factorization while faer's product kernels
/// still run at full speed on a 32-column operand.
pub const PANEL: usize = 32;

/// Why a factorization by panels stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `proceed` said no before a panel (the columns before it are factored, the rest not).
    Interrupted,
    /// Column `k` has a pivot that is not positive (Cholesky) or is zero or not finite (LU).
    Pivot(usize),
}

/// Cholesky of the symmetric matrix `a` in place: on success its lower triangle (diagonal
/// included) holds `L` with `A = L L'`; the strict upper triangle is not read and is left as
/// it was. `proceed` is asked before every panel.
pub fn llt_in_panels(
    mut a: MatMut<'_, f64>,
    mut proceed: impl FnMut() -> bool,
) -> Result<(), Stop> {
    let n = a.nrows();
    let mut buffer = MemBuffer::new(cholesky_in_place_scratch::<f64>(
        PANEL.min(n),
        Par::Seq,
        Default::default(),
    ));
    let mut k = 0;
    while k < n {
        if !proceed() {
            return Err(Stop::Interrupted);
        }
        let b = PANEL.min(n - k);
        let (mut a11, a21, a22) = split_panel(a.as_mut(), k, b);
        cholesky_in_place(
            a11.as_mut(),
            LltRegularization::default(),
            Par::Seq,
            MemStack::new(&mut buffer),
            Default::default(),
        )
        .map_err(|e| match e {
            faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } => {
                Stop::Pivot(k + index)
            }
        })?;
        if let Some(j) = (0..b).find(|&j| !(a11[(j, j)] > 0.0 && a11[(j, j)].is_finite())) {
            return Err(Stop::Pivot(k + j));
        }
        // L21 L11' = A21, i.e. L11 L21' = A21'.
        let mut a21 = a21;
        solve_lower_triangular_in_place(a11.as_ref(), a21.as_mut().transpose_mut(), Par::Seq);
        triangular_matmul(
            a22,
            BlockStructure::TriangularLower,
            Accum::Add,
            a21.as_ref(),
            BlockStructure::Rectangular,
            a21.as_ref().transpose(),
            BlockStructure::Rectangular,
            -1.0,
            Par::Seq,
        );
        k += b;
    }
    Ok(())
}

/// The diagonal block `A11` (`b x b` at `k`), the block below it `A21` and the trailing lower
/// block `A22` of one Cholesky panel.
fn split_panel(
    a: MatMut<'_, f64>,
    k: usize,
    b: usize,
) -> (MatMut<'_, f64>, MatMut<'_, f64>, MatMut<'_, f64>) {
    let (_, _, _, rest) = a.split_at_mut(k, k);
    let (a11, _, a21, a22) = rest.split_at_mut(b, b);
    (a11, a21, a22)
}

/// LU with partial pivoting of the square matrix `a` in place: on success `a` holds `L` (unit
/// lower, below the diagonal) and `U` (upper), and `pivots[k]` is the row swapped with row `k`
/// at step `k` (LAPACK's convention, applied in order: `P A = L U`). `proceed` is asked before
/// every panel.
pub fn lu_in_panels(
    a: &mut Mat<f64>,
    pivots: &mut [usize],
    mut proceed: impl FnMut() -> bool,
) -> Result<(), Stop> {
    let n = a.nrows();
    let mut l = Vec::with_capacity(n);
    let mut k = 0;
    while k < n {
        if !proceed() {
            return Err(Stop::Interrupted);
        }
        let b = PANEL.min(n - k);
        factor_lu_panel(a, k, b, pivots, &mut l)?;
        let (_, _, _, rest) = a.as_mut().split_at_mut(k, k);
        let (l11, a12, l21, a22) = rest.split_at_mut(b, b);
        let mut u12 = a12;
        solve_unit_lower_triangular_in_place(l11.as_ref(), u12.as_mut(), Par::Seq);
        matmul(a22, Accum::Add, l21.as_ref(), u12.as_ref(), -1.0, Par::Seq);
        k += b;
    }
    Ok(())
}

/// Columns `k..k + b` of `a` by unblocked elimination with partial pivoting, the row swaps
/// applied to whole rows (the columns left of the panel hold `L`, those right of it are updated
/// later by the panel's `L11` and `L21`). Works on column slices: `l` is scratch for column `j`'s
/// multipliers.
fn factor_lu_panel(
    a: &mut Mat<f64>,
    k: usize,
    b: usize,
    pivots: &mut [usize],
    l: &mut Vec<f64>,
) -> Result<(), Stop> {
    let n = a.nrows();
    for j in k..k + b {
        let col = a.col_as_slice_mut(j);
        let (p, big) = (j..n).fold((j, 0.0f64), |(p, big), i| {
            let v = col[i].abs();
            if v > big {
                (i, v)
            } else {
                (p, big)
            }
        });
        if !(big > 0.0 && big.is_finite()) {
            return Err(Stop::Pivot(j));
        }
        pivots[j] = p;
        if p != j {
            for c in 0..n {
                a.col_as_slice_mut(c).swap(j, p);
            }
        }
        let col = a.col_as_slice_mut(j);
        let inv = 1.0 / col[j];
        col[j + 1..].iter_mut().for_each(|v| *v *= inv);
        l.clear();
        l.extend_from_slice(&col[j + 1..]);
        // The rest of the panel only: the columns right of it wait for the block update.
        for c in j + 1..k + b {
            let col = a.col_as_slice_mut(c);
            let u = col[j];
            if u != 0.0 {
                col[j + 1..]
                    .iter_mut()
                    .zip(l.iter())
                    .for_each(|(v, li)| *v -= li * u);
            }
        }
    }
    Ok(())
}

/// Solves `A x = b` in place with the factor of [`llt_in_panels`].
pub fn llt_solve_in_place(l: MatRef<'_, f64>, b: &mut [f64]) {
    let mut rhs = ColMut::from_slice_mut(b).as_mat_mut();
    solve_lower_triangular_in_place(l, rhs.as_mut(), Par::Seq);
    solve_upper_triangular_in_place(l.transpose(), rhs, Par::Seq);
}

/// Solves `A x = b` in place with the factor and row swaps of [`lu_in_panels`].
pub fn lu_solve_in_place(lu: MatRef<'_, f64>, pivots: &[usize], b: &mut [f64]) {
    for (k, &p) in pivots.iter().enumerate() {
        b.swap(k, p);
    }
    let mut rhs = ColMut::from_slice_mut(b).as_mat_mut();
    solve_unit_lower_triangular_in_place(lu, rhs.as_mut(), Par::Seq);
    solve_upper_triangular_in_place(lu, rhs, Par::Seq);
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::prelude::Solve;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, seed: u64) -> Mat<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Mat::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0))
    }

    /// `G G' / n + I`: symmetric positive definite.
    fn spd(n: usize, seed: u64) -> Mat<f64> {
        let g = random(n, seed);
        let mut a = &g * g.transpose() * (1.0 / n as f64);
        for i in 0..n {
            a[(i, i)] += 1.0;
        }
        a
    }

    fn rhs(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 1.0 + 0.5 * (i as f64 * 0.37).sin())
            .collect()
    }

    /// `|A x - b|_inf / |b|_inf`.
    fn residual(a: &Mat<f64>, x: &[f64], b: &[f64]) -> f64 {
        let n = a.nrows();
        let r = (0..n)
            .map(|i| ((0..n).map(|j| a[(i, j)] * x[j]).sum::<f64>() - b[i]).abs())
            .fold(0.0, f64::max);
        r / b.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    #[test]
    fn the_panelled_cholesky_is_fasers_to_rounding_at_every_size() {
        // Below one panel, on a panel boundary, and with a ragged last panel.
        for n in [1, 5, PANEL, PANEL + 1, 3 * PANEL + 7] {
            let a = spd(n, n as u64);
            let mut l = a.clone();
            llt_in_panels(l.as_mut(), || true).unwrap();
            let theirs = a.llt(faer::Side::Lower).unwrap();
            let lt = theirs.L();
            for j in 0..n {
                for i in j..n {
                    assert!((l[(i, j)] - lt[(i, j)]).abs() <= 1e-12, "n {n} ({i}, {j})");
                }
            }
            let b = rhs(n);
            let mut x = b.clone();
            llt_solve_in_place(l.as_ref(), &mut x);
            assert!(residual(&a, &x, &b) < 1e-12, "n {n}");
        }
    }

    #[test]
    fn the_panelled_lu_solves_as_fasers_at_every_size() {
        for n in [1, 5, PANEL, PANEL + 1, 3 * PANEL + 7] {
            let a = random(n, 100 + n as u64);
            let mut lu = a.clone();
            let mut pivots = vec![0; n];
            lu_in_panels(&mut lu, &mut pivots, || true).unwrap();
            let b = rhs(n);
            let mut x = b.clone();
            lu_solve_in_place(lu.as_ref(), &pivots, &mut x);
            let theirs = a
                .partial_piv_lu()
                .solve(faer::Mat::from_fn(n, 1, |i, _| b[i]));
            let gap = (0..n).fold(0.0f64, |m, i| m.max((x[i] - theirs[(i, 0)]).abs()));
            let scale = (0..n).fold(1.0f64, |m, i| m.max(theirs[(i, 0)].abs()));
            assert!(gap <= 1e-9 * scale, "n {n}: {gap}");
            assert!(residual(&a, &x, &b) < 1e-10, "n {n}");
        }
    }

    #[test]
    fn a_factorization_stops_before_the_panel_proceed_refuses() {
        let n = 3 * PANEL + 7;
        let a = spd(n, 7);
        for stop_at in 0..4 {
            let mut asked = 0;
            let mut l = a.clone();
            let out = llt_in_panels(l.as_mut(), || {
                asked += 1;
                asked <= stop_at
            });
            assert_eq!(out, Err(Stop::Interrupted));
            assert_eq!(asked, stop_at + 1);
            // Untouched after the panels done: the trailing block is updated, not factored.
            let mut lu = a.clone();
            let mut pivots = vec![0; n];
            let mut asked = 0;
            let out = lu_in_panels(&mut lu, &mut pivots, || {
                asked += 1;
                asked <= stop_at
            });
            assert_eq!(out, Err(Stop::Interrupted));
            assert_eq!(asked, stop_at + 1);
        }
    }

    #[test]
    fn an_indefinite_or_singular_matrix_is_refused_with_its_column() {
        let n = PANEL + 5;
        let mut a = spd(n, 3);
        // A negative pivot in the second panel.
        a[(PANEL + 2, PANEL + 2)] = -50.0;
        assert_eq!(
            llt_in_panels(a.clone().as_mut(), || true),
            Err(Stop::Pivot(PANEL + 2))
        );
        let mut nan = spd(n, 4);
        nan[(3, 3)] = f64::NAN;
        assert!(matches!(
            llt_in_panels(nan.as_mut(), || true),
            Err(Stop::Pivot(_))
        ));
        // A zero column: singular, exactly (elimination keeps it zero).
        let mut s = random(n, 5);
        for i in 0..n {
            s[(i, PANEL + 1)] = 0.0;
        }
        let mut pivots = vec![0; n];
        assert!(matches!(
            lu_in_panels(&mut s, &mut pivots, || true),
            Err(Stop::Pivot(_))
        ));
    }
}
