//! The minimum-norm solutions `J^+ b` and `J^+' c` of a square matrix of numerical rank `k`,
//! by a column-pivoted (rank-revealing) QR, `J P = Q R`, with `R`'s rows past the rank dropped
//! (their diagonal is below the tolerance).
//!
//! With `T = [R11 R12]` (`R`'s first `k` rows, `R11` `k x k` upper triangular),
//! `J^+ b = P T^+ (Q' b)[..k]`. Where `k = n`, `T^+ = R^-1`. Where `k < n`, every solution of
//! `T x = c` is `x = [y - S x2; x2]` with `y = R11^-1 c` and `S = R11^-1 R12`; the shortest has
//! `x2` the least-squares solution of `[S; I] x2 = [y; 0]`, so with the thin QR
//! `[S; I] = Q_e R_e` and `N = R_e^-1 Q_e1'` (`Q_e1` the first `k` rows of `Q_e`),
//! `T^+ = Z R11^-1`, `Z = [I - S N; N]` (`n x k`); `N = (I + S'S)^-1 S'` by the normal
//! equations, whose matrix has every eigenvalue at least 1 (the QR of `[S; I]` where they
//! overflow). The adjoint is `J^+' c = Q [R11'^-1 Z' P' c; 0]`. `Q` is applied as the QR's
//! Householder reflectors, never formed, and the small least-squares problem has `n - k`
//! columns: on a contact problem whose rows outnumber the bodies' freedom this costs the
//! pivoted QR and little more, where forming `Q` and a second QR of `T'` (`n x k`) had doubled
//! it.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj,
};
use faer::linalg::solvers::{ColPivQr, Solve};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Col, Conj, Mat, MatRef, Par};

/// `J`'s column-pivoted QR, with what the minimum-norm solutions need.
#[derive(Debug, Clone)]
pub(crate) struct MinNorm {
    /// `J P = Q R` (`R` `n x n`, upper triangular).
    qr: ColPivQr<f64>,
    /// `(J P)[:, j] = J[:, perm[j]]`.
    perm: Vec<usize>,
    rank: usize,
    /// Where `k < n`: `Z` (`n x k`), so that `T^+ = Z R11^-1`.
    z: Option<Mat<f64>>,
}

impl MinNorm {
    /// Factors `j` (square), its rank the diagonal entries of `R` above `tol` times the first.
    pub(crate) fn new(j: &Mat<f64>, tol: f64) -> MinNorm {
        let n = j.nrows();
        let qr = j.col_piv_qr();
        let r = qr.R();
        let perm: Vec<usize> = qr.P().arrays().0.to_vec();
        let top = if n > 0 { r[(0, 0)].abs() } else { 0.0 };
        let rank = (0..n).filter(|&i| r[(i, i)].abs() > tol * top).count();
        let z = (rank < n).then(|| shortest(r, rank));
        MinNorm { qr, perm, rank, z }
    }

    /// The numerical rank.
    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// `J^+ b`.
    pub(crate) fn solve(&self, b: &Col<f64>) -> Col<f64> {
        let n = self.perm.len();
        let mut c = Mat::from_fn(n, 1, |i, _| b[i]);
        self.apply_q(&mut c, true);
        let y = back_substitute(self.qr.R(), Col::from_fn(self.rank, |i| c[(i, 0)]));
        let x = match &self.z {
            None => y,
            Some(z) => z * y,
        };
        let mut out = Col::zeros(n);
        for (j, &p) in self.perm.iter().enumerate() {
            out[p] = x[j];
        }
        out
    }

    /// `J^+' c`.
    pub(crate) fn solve_transpose(&self, c: &Col<f64>) -> Col<f64> {
        let n = self.perm.len();
        let w = Col::from_fn(n, |j| c[self.perm[j]]);
        let w = match &self.z {
            None => w,
            Some(z) => z.transpose() * &w,
        };
        let y = forward_substitute_transposed(self.qr.R(), w);
        let mut padded = Mat::from_fn(n, 1, |i, _| if i < self.rank { y[i] } else { 0.0 });
        self.apply_q(&mut padded, false);
        Col::from_fn(n, |i| padded[(i, 0)])
    }

    /// `x <- Q' x` (`transpose`) or `x <- Q x`, by the QR's reflectors.
    fn apply_q(&self, x: &mut Mat<f64>, transpose: bool) {
        let (basis, coeff) = (self.qr.Q_basis(), self.qr.Q_coeff());
        let (n, block) = (basis.nrows(), coeff.nrows());
        if n == 0 {
            return;
        }
        // Both directions need the same scratch: one block of reflectors by one column.
        let mut buf = MemBuffer::new(
            apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n, block, 1),
        );
        let stack = MemStack::new(&mut buf);
        let apply = if transpose {
            apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj
        } else {
            apply_block_householder_sequence_on_the_left_in_place_with_conj
        };
        apply(basis, coeff, Conj::No, x.as_mut(), Par::Seq, stack);
    }
}

/// `Z = [I - S N; N]` for `T = [R11 R12]`, `R11` the leading `k x k` of `r` (see the module
/// doc): `S = R11^-1 R12`, `[S; I] = Q_e R_e`, `N = R_e^-1 Q_e1'`.
fn shortest(r: MatRef<'_, f64>, k: usize) -> Mat<f64> {
    let n = r.nrows();
    let f = n - k;
    let mut s = r.get(..k, k..).to_owned();
    solve_upper_triangular_in_place(r.get(..k, ..k), s.as_mut(), Par::Seq);
    // N = (I + S'S)^-1 S', the normal equations of [S; I] x2 = [y; 0]: I + S'S has every
    // eigenvalue at least 1, and a pivoted QR keeps S's entries moderate. Where S is so large
    // that its square overflows, the least-squares problem's own QR.
    let mut g = s.transpose() * &s;
    for i in 0..f {
        g[(i, i)] += 1.0;
    }
    let n_mat = match g.llt(faer::Side::Lower) {
        Ok(l) if g.is_all_finite() => l.solve(s.transpose()),
        _ => least_squares_operator(&s),
    };
    let sn = &s * &n_mat;
    Mat::from_fn(n, k, |i, c| {
        if i < k {
            f64::from(u8::from(i == c)) - sn[(i, c)]
        } else {
            n_mat[(i - k, c)]
        }
    })
}

/// `N = R_e^-1 Q_e1'` from the thin QR `[S; I] = Q_e R_e`.
fn least_squares_operator(s: &Mat<f64>) -> Mat<f64> {
    let (k, f) = (s.nrows(), s.ncols());
    let e = Mat::from_fn(k + f, f, |i, j| {
        if i < k {
            s[(i, j)]
        } else {
            f64::from(u8::from(i - k == j))
        }
    });
    let qr = e.qr();
    let qe = qr.compute_thin_Q();
    let mut n_mat = qe.get(..k, ..).transpose().to_owned();
    solve_upper_triangular_in_place(qr.thin_R(), n_mat.as_mut(), Par::Seq);
    n_mat
}

/// `R11^-1 c` for `R11` the leading `c.nrows()` square of the upper triangular `r`.
fn back_substitute(r: MatRef<'_, f64>, mut c: Col<f64>) -> Col<f64> {
    let k = c.nrows();
    solve_upper_triangular_in_place(r.get(..k, ..k), c.as_mat_mut(), Par::Seq);
    c
}

/// `R11'^-1 c` for `R11` the leading `c.nrows()` square of the upper triangular `r`.
fn forward_substitute_transposed(r: MatRef<'_, f64>, mut c: Col<f64>) -> Col<f64> {
    let k = c.nrows();
    solve_lower_triangular_in_place(r.get(..k, ..k).transpose(), c.as_mat_mut(), Par::Seq);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random(n: usize, rank: usize, seed: u64) -> Mat<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a = Mat::from_fn(n, rank, |_, _| rng.random_range(-1.0..1.0));
        let b = Mat::from_fn(rank, n, |_, _| rng.random_range(-1.0..1.0));
        &a * &b
    }

    /// Against the singular value decomposition's pseudo-inverse, for full and deficient
    /// ranks: `J^+ b` and `J^+' c` agree to rounding, and the rank is found.
    #[test]
    fn min_norm_solutions_are_the_pseudo_inverses() {
        for (n, rank, seed) in [(6, 6, 1), (9, 5, 2), (12, 11, 3), (7, 1, 4), (60, 41, 5)] {
            let j = random(n, rank, seed);
            let m = MinNorm::new(&j, 1e-12);
            assert_eq!(m.rank(), rank, "n {n}");
            let svd = j.svd().unwrap();
            let s = svd.S().column_vector();
            let smax = (0..n).fold(0.0f64, |a, i| a.max(s[i]));
            let pinv = |x: &Col<f64>, t: bool| {
                let (u, v) = if t {
                    (svd.V(), svd.U())
                } else {
                    (svd.U(), svd.V())
                };
                let y = u.transpose() * x;
                let y = Col::from_fn(n, |i| {
                    if s[i] > 1e-12 * smax {
                        y[i] / s[i]
                    } else {
                        0.0
                    }
                });
                v * y
            };
            let mut rng = ChaCha8Rng::seed_from_u64(10 + seed);
            let b = Col::from_fn(n, |_| rng.random_range(-1.0..1.0));
            for t in [false, true] {
                let got = if t {
                    m.solve_transpose(&b)
                } else {
                    m.solve(&b)
                };
                let want = pinv(&b, t);
                let gap = (0..n).fold(0.0f64, |a, i| a.max((got[i] - want[i]).abs()));
                let size = (0..n).fold(0.0f64, |a, i| a.max(want[i].abs()));
                assert!(
                    gap <= 1e-9 * size.max(1.0),
                    "n {n} rank {rank} t {t}: {gap}"
                );
            }
        }
    }

    /// The fallback least-squares operator (the QR of `[S; I]`) is the normal equations' one.
    #[test]
    fn the_least_squares_fallback_is_the_normal_equations() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let s = Mat::from_fn(9, 4, |_, _| rng.random_range(-3.0..3.0));
        let mut g = s.transpose() * &s;
        for i in 0..4 {
            g[(i, i)] += 1.0;
        }
        let want = g.llt(faer::Side::Lower).unwrap().solve(s.transpose());
        let got = least_squares_operator(&s);
        let gap = (0..4).fold(0.0f64, |a, i| {
            (0..9).fold(a, |a, j| a.max((got[(i, j)] - want[(i, j)]).abs()))
        });
        assert!(gap <= 1e-12, "{gap}");
    }
}
