//! Dense linear algebra on faer 0.24 that residuals and drivers share: inner products and
//! matrix-vector products, the Gram matrix `J'J`, and the linear solves of Newton-type steps
//! (LLT for symmetric positive definite systems, Householder QR least squares, LU with a
//! truncated-SVD fallback for square Newton systems), each refusing a numerically singular
//! system instead of returning a meaningless step. It knows no residual and no driver: the
//! residual traits' default methods use it, and so does the driver kit ([`crate::drivers::kit`]).

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::prelude::*;
use faer::{Accum, Mat, MatRef, Side};

/// Smallest accepted ratio `min L_ii^2 / max A_ii` of a Cholesky factor before the system is
/// treated as numerically singular: below it the LLT "succeeds" on rounding noise and returns
/// a huge, meaningless step.
const LLT_PIVOT_RATIO: f64 = 1e-13;

/// Smallest accepted ratio `min |R_ii| / max |R_ii|` of a QR factor (the square root of
/// [`LLT_PIVOT_RATIO`], since `cond(J'J) = cond(J)^2`).
const QR_PIVOT_RATIO: f64 = 3e-7;

/// Euclidean inner product, summed in four lanes (faster than a single running sum, and the
/// same order everywhere so that every driver rounds alike).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// Euclidean norm.
pub fn norm2(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// Max norm.
pub fn norm_inf(a: &[f64]) -> f64 {
    a.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

/// Whether every entry is finite.
pub fn all_finite(a: &[f64]) -> bool {
    a.iter().all(|x| x.is_finite())
}

/// `x + t d`.
pub fn axpy(x: &[f64], t: f64, d: &[f64]) -> Vec<f64> {
    x.iter().zip(d).map(|(xi, di)| xi + t * di).collect()
}

/// `J v`.
pub fn mat_vec(j: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; j.nrows()];
    for (c, vc) in v.iter().enumerate() {
        if *vc != 0.0 {
            for (r, o) in out.iter_mut().enumerate() {
                *o += j[(r, c)] * vc;
            }
        }
    }
    out
}

/// `J' v`.
pub fn mat_t_vec(j: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    (0..j.ncols())
        .map(|c| (0..j.nrows()).map(|r| j[(r, c)] * v[r]).sum())
        .collect()
}

/// `m` resized to `rows x cols` with its storage reused, as `Vec::resize` reuses a vector's:
/// entries where the old and new shapes overlap kept, new ones zero. A driver that forms an
/// `n x n` matrix every iteration keeps one this way instead of allocating it afresh.
pub fn resize(m: &mut Mat<f64>, rows: usize, cols: usize) {
    m.truncate(m.nrows().min(rows), m.ncols().min(cols));
    m.resize_with(rows, cols, |_, _| 0.0);
}

/// `m` resized to `rows x cols` ([`resize`]) and zeroed.
pub fn resize_zeroed(m: &mut Mat<f64>, rows: usize, cols: usize) {
    resize(m, rows, cols);
    m.fill(0.0);
}

/// `J' J`, symmetric by construction: its lower triangle by one triangular product (half a
/// dense product's flops), mirrored.
pub fn gram(j: MatRef<'_, f64>) -> Mat<f64> {
    let n = j.ncols();
    let mut g = Mat::<f64>::zeros(n, n);
    triangular::matmul(
        g.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        j.transpose(),
        BlockStructure::Rectangular,
        j,
        BlockStructure::Rectangular,
        1.0,
        Par::Seq,
    );
    for c in 1..n {
        for r in 0..c {
            g[(r, c)] = g[(c, r)];
        }
    }
    g
}

/// A faer column of a slice.
pub(crate) fn col(b: &[f64]) -> Col<f64> {
    Col::from_fn(b.len(), |i| b[i])
}

/// A faer column as a vector.
pub(crate) fn to_vec(c: &Col<f64>) -> Vec<f64> {
    (0..c.nrows()).map(|i| c[i]).collect()
}

/// Solves `A x = b` for a symmetric positive definite `A` by LLT; `None` when the factor fails
/// or is numerically singular (see `LLT_PIVOT_RATIO`).
pub fn solve_spd(a: &Mat<f64>, b: &[f64]) -> Option<Vec<f64>> {
    let n = a.nrows();
    if n == 0 {
        return Some(Vec::new());
    }
    let max_diag = (0..n).fold(0.0_f64, |m, i| m.max(a[(i, i)].abs()));
    if !(max_diag.is_finite() && max_diag > 0.0) {
        return None;
    }
    let llt = a.llt(Side::Lower).ok()?;
    let l = llt.L();
    let min_pivot = (0..n).fold(f64::INFINITY, |m, i| m.min(l[(i, i)] * l[(i, i)]));
    if min_pivot.is_nan() || min_pivot < LLT_PIVOT_RATIO * max_diag {
        return None;
    }
    let x = to_vec(&llt.solve(col(b)));
    all_finite(&x).then_some(x)
}

/// Least-squares solution of `A x ~ b` (`A` with at least as many rows as columns) by
/// Householder QR; `None` when `A` is numerically rank deficient (see `QR_PIVOT_RATIO`).
pub fn lstsq(a: &Mat<f64>, b: &[f64]) -> Option<Vec<f64>> {
    let n = a.ncols();
    if a.nrows() < n || !all_finite(b) {
        return None;
    }
    if n == 0 {
        return Some(Vec::new());
    }
    let qr = a.qr();
    let r = qr.thin_R();
    let (lo, hi) = (0..n).fold((f64::INFINITY, 0.0_f64), |(lo, hi), i| {
        (lo.min(r[(i, i)].abs()), hi.max(r[(i, i)].abs()))
    });
    if !(hi.is_finite() && hi > 0.0 && lo >= QR_PIVOT_RATIO * hi) {
        return None;
    }
    let x = to_vec(&qr.solve_lstsq(col(b)));
    all_finite(&x).then_some(x)
}

/// `[J; sqrt(mu) I]`, the Levenberg-Marquardt system as a least-squares problem.
pub fn stack_damped(j: MatRef<'_, f64>, mu: f64) -> Mat<f64> {
    let (m, n) = (j.nrows(), j.ncols());
    let s = mu.sqrt();
    Mat::from_fn(m + n, n, |r, c| {
        if r < m {
            j[(r, c)]
        } else if r - m == c {
            s
        } else {
            0.0
        }
    })
}

/// How a square Newton system `M z = rhs` is solved by `solve_square`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SquareSolve {
    /// Always the truncated-SVD pseudo-inverse (`false`: LU with partial pivoting first).
    pub svd_only: bool,
    /// Singular values below `svd_rel_tol * sigma_max` are dropped from the pseudo-inverse.
    pub svd_rel_tol: f64,
    /// LU is rejected (SVD fallback) when `min |U_ii| < lu_pivot_ratio * max |U_ii|`.
    pub lu_pivot_ratio: f64,
}

impl Default for SquareSolve {
    fn default() -> Self {
        SquareSolve {
            svd_only: false,
            svd_rel_tol: 1e-12,
            lu_pivot_ratio: 1e-12,
        }
    }
}

/// The solution of a square system and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct SquareSolution {
    /// `z`.
    pub z: Vec<f64>,
    /// Whether the truncated SVD was used.
    pub used_svd: bool,
    /// Numerical rank (the size unless the SVD dropped singular values).
    pub rank: usize,
}

/// Solves `M z = rhs` where `mt = M'` is given (so a row-major `M` is filled column by
/// column): LU with partial pivoting, accepted when its pivot ratio and the solve's residual
/// are sound, else the truncated-SVD pseudo-inverse (the minimum-norm least-squares solution).
/// `None` when no finite solution comes out.
pub fn solve_square_transposed(
    mt: &Mat<f64>,
    rhs: &[f64],
    how: &SquareSolve,
) -> Option<SquareSolution> {
    let n = mt.nrows();
    if n == 0 {
        return Some(SquareSolution {
            z: Vec::new(),
            used_svd: false,
            rank: 0,
        });
    }
    let b = Col::from_fn(n, |i| rhs[i]);
    if !how.svd_only {
        let lu = mt.partial_piv_lu();
        let u = lu.U();
        let (lo, hi) = (0..n).fold((f64::INFINITY, 0.0f64), |(lo, hi), i| {
            (lo.min(u[(i, i)].abs()), hi.max(u[(i, i)].abs()))
        });
        if hi.is_finite() && hi > 0.0 && lo >= how.lu_pivot_ratio * hi {
            let z = lu.solve_transpose(&b);
            let z: Vec<f64> = (0..n).map(|i| z[i]).collect();
            // Residual test `|M z - rhs| <= 1e-8 (|rhs| + |M|_max |z|_1)`: partial pivoting
            // can pass the pivot test on a matrix that is singular to working precision.
            let mz = mt.transpose() * Col::from_fn(n, |i| z[i]);
            let res = (0..n).map(|i| (mz[i] - rhs[i]).abs()).fold(0.0, f64::max);
            let scale_m = (0..n)
                .flat_map(|j| (0..n).map(move |i| (i, j)))
                .fold(0.0f64, |m, (i, j)| m.max(mt[(i, j)].abs()));
            let scale = norm_inf(rhs) + scale_m * z.iter().map(|v| v.abs()).sum::<f64>();
            if all_finite(&z) && res <= 1e-8 * scale.max(f64::MIN_POSITIVE) {
                return Some(SquareSolution {
                    z,
                    used_svd: false,
                    rank: n,
                });
            }
        }
    }
    // Truncated pseudo-inverse: M' = U S V' so M = V S U' and M^+ = U S^+ V'.
    let svd = mt.svd().ok()?;
    let s = svd.S().column_vector();
    let smax = (0..n).fold(0.0f64, |m, i| m.max(s[i]));
    if !smax.is_finite() {
        return None;
    }
    let cut = how.svd_rel_tol * smax;
    let vtb = svd.V().transpose() * &b;
    let mut w = Col::<f64>::zeros(n);
    let mut rank = 0;
    for i in 0..n {
        if s[i] > cut && s[i] > 0.0 {
            w[i] = vtb[i] / s[i];
            rank += 1;
        }
    }
    let z = svd.U() * &w;
    let z: Vec<f64> = (0..n).map(|i| z[i]).collect();
    all_finite(&z).then_some(SquareSolution {
        z,
        used_svd: true,
        rank,
    })
}

/// An orthonormal basis (`w x (w - 1)`, column-major in a `Mat`) of the complement of the unit
/// vector `normal` (length `w`), from the Householder reflector that maps `normal` to a
/// multiple of `e_1`: its columns `2..w` are orthonormal and orthogonal to `normal`.
pub fn orthogonal_complement(normal: &[f64]) -> Mat<f64> {
    let w = normal.len();
    let nn = norm2(normal);
    if w == 0 || !(nn > 0.0 && nn.is_finite()) {
        return Mat::from_fn(
            w,
            w.saturating_sub(1),
            |i, j| if i == j + 1 { 1.0 } else { 0.0 },
        );
    }
    // v = n/|n| + sign(n_1) e_1 avoids cancellation; H = I - 2 v v' / v'v.
    let mut v: Vec<f64> = normal.iter().map(|x| x / nn).collect();
    let s = if v[0] >= 0.0 { 1.0 } else { -1.0 };
    v[0] += s;
    let vv = dot(&v, &v);
    Mat::from_fn(w, w - 1, |i, j| {
        let c = j + 1;
        let e = if i == c { 1.0 } else { 0.0 };
        e - 2.0 * v[i] * v[c] / vv
    })
}

/// In-place LU with partial pivoting of an `n x n` column-major buffer: `P A = L U` with `L`
/// unit lower (below the diagonal) and `U` upper, the diagonal left holding `1 / U_jj` (every
/// solve divides by it; a multiplication costs a fraction of a division). `pivots[k]` is the
/// row swapped with row `k` at step `k` (LAPACK's convention, applied in order). `Err(k)` at a
/// step `k` whose largest candidate pivot is zero or not finite. For the few unknowns of a
/// small contact problem, where a library LU's dispatch and workspace cost more than its
/// arithmetic; it allocates nothing.
pub fn dense_lu(a: &mut [f64], n: usize, pivots: &mut [usize]) -> Result<(), usize> {
    for k in 0..n {
        let (p, big) = (k..n).fold((k, 0.0f64), |(p, big), i| {
            let v = a[k * n + i].abs();
            if v > big {
                (i, v)
            } else {
                (p, big)
            }
        });
        if !(big > 0.0 && big.is_finite()) {
            return Err(k);
        }
        pivots[k] = p;
        if p != k {
            for j in 0..n {
                a.swap(j * n + k, j * n + p);
            }
        }
        let inv = 1.0 / a[k * n + k];
        a[k * n + k] = inv;
        for i in k + 1..n {
            a[k * n + i] *= inv;
        }
        for j in k + 1..n {
            let u = a[j * n + k];
            if u != 0.0 {
                for i in k + 1..n {
                    a[j * n + i] -= a[k * n + i] * u;
                }
            }
        }
    }
    Ok(())
}

/// Solves `A x = b` in place for the factor of [`dense_lu`]: the row swaps, then `L` forward
/// and `U` backward, column by column.
pub fn dense_lu_solve(lu: &[f64], n: usize, pivots: &[usize], b: &mut [f64]) {
    for (k, &p) in pivots.iter().enumerate().take(n) {
        b.swap(k, p);
    }
    for c in 0..n {
        let bc = b[c];
        for i in c + 1..n {
            b[i] -= lu[c * n + i] * bc;
        }
    }
    for c in (0..n).rev() {
        let bc = b[c] * lu[c * n + c];
        b[c] = bc;
        for i in 0..c {
            b[i] -= lu[c * n + i] * bc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_lu_solves_as_faers_and_refuses_a_singular_matrix() {
        // Non-symmetric matrices that need row swaps (a zero and a small leading entry).
        for n in [1usize, 2, 3, 7, 12] {
            let a = Mat::from_fn(n, n, |i, j| {
                let v = ((3 * i + 7 * j) % 11) as f64 - 5.0 + if i == j { 0.0 } else { 0.3 };
                if i == 0 && j == 0 {
                    1e-3
                } else {
                    v
                }
            });
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.9).cos()).collect();
            let mut lu: Vec<f64> = (0..n)
                .flat_map(|j| (0..n).map(move |i| (i, j)))
                .map(|(i, j)| a[(i, j)])
                .collect();
            let mut piv = vec![0; n];
            dense_lu(&mut lu, n, &mut piv).unwrap();
            let mut x = b.clone();
            dense_lu_solve(&lu, n, &piv, &mut x);
            let reference = a.partial_piv_lu().solve(col(&b));
            for i in 0..n {
                assert!(
                    (x[i] - reference[i]).abs() <= 1e-10 * (1.0 + reference[i].abs()),
                    "n {n}, x_{i}"
                );
            }
            let ax = mat_vec(a.as_ref(), &x);
            for i in 0..n {
                assert!((ax[i] - b[i]).abs() <= 1e-11, "n {n}, residual {i}");
            }
        }
        // Two equal columns: singular at the second step at the latest.
        let mut s = vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 0.0, 1.0, 5.0];
        let mut piv = vec![0; 3];
        assert!(dense_lu(&mut s, 3, &mut piv).is_err());
        let mut nan = vec![f64::NAN, 0.0, 0.0, 1.0];
        assert_eq!(dense_lu(&mut nan, 2, &mut [0; 2]), Err(0));
    }

    #[test]
    fn orthogonal_complement_is_orthonormal_and_orthogonal_to_the_normal() {
        for n in [
            vec![1.0, 0.0, 0.0],
            vec![-0.6, 0.0, 0.8],
            vec![0.3, -0.4, 0.5, 0.1],
        ] {
            let nn = norm2(&n);
            let q = orthogonal_complement(&n);
            assert_eq!((q.nrows(), q.ncols()), (n.len(), n.len() - 1));
            for a in 0..q.ncols() {
                let ca: Vec<f64> = (0..q.nrows()).map(|i| q[(i, a)]).collect();
                assert!(dot(&ca, &n).abs() < 1e-14 * nn);
                for b in 0..q.ncols() {
                    let cb: Vec<f64> = (0..q.nrows()).map(|i| q[(i, b)]).collect();
                    let want = if a == b { 1.0 } else { 0.0 };
                    assert!((dot(&ca, &cb) - want).abs() < 1e-14);
                }
            }
        }
    }
    #[test]
    fn square_solve_uses_lu_and_falls_back_to_the_minimum_norm_svd_solution() {
        // M = [[2, 1], [0, 1]] given as M'.
        let mt = Mat::from_fn(2, 2, |i, j| [[2.0, 0.0], [1.0, 1.0]][i][j]);
        let s = solve_square_transposed(&mt, &[3.0, 1.0], &SquareSolve::default()).unwrap();
        assert!(!s.used_svd && (s.z[0] - 1.0).abs() < 1e-14 && (s.z[1] - 1.0).abs() < 1e-14);
        // Singular M = [[1, 1], [1, 1]]: z = (0.5, 0.5) is the minimum-norm solution of z1 + z2 = 1.
        let mt = Mat::from_fn(2, 2, |_, _| 1.0);
        let s = solve_square_transposed(&mt, &[1.0, 1.0], &SquareSolve::default()).unwrap();
        assert!(s.used_svd && s.rank == 1);
        assert!((s.z[0] - 0.5).abs() < 1e-12 && (s.z[1] - 0.5).abs() < 1e-12);
    }
    #[test]
    fn solve_spd_solves_and_rejects_singular_matrices() {
        let a = Mat::from_fn(2, 2, |i, j| [[4.0, 1.0], [1.0, 3.0]][i][j]);
        let x = solve_spd(&a, &[1.0, 2.0]).unwrap();
        assert!((4.0 * x[0] + x[1] - 1.0).abs() < 1e-14 && (x[0] + 3.0 * x[1] - 2.0).abs() < 1e-14);
        let s = Mat::from_fn(2, 2, |_, _| 1.0);
        assert!(solve_spd(&s, &[1.0, 1.0]).is_none());
        let nan = Mat::from_fn(2, 2, |_, _| f64::NAN);
        assert!(solve_spd(&nan, &[1.0, 1.0]).is_none());
    }
}
