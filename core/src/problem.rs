//! Contact problems in the two FCLib forms, dense or sparse.
//!
//! * Local (contact space): `u = W r + q`, `mu` per contact, `K*_mu ∋ u + mu |u_T| e_n ⟂ r ∈ K_mu`.
//! * Global (generalized space): `M v = H r + f`, `u = H' v + w`, same cone conditions.
//!   `H` maps contact impulses to generalized impulses (it is `J'`).
//!
//! Per contact the three rows are normal first, `[n, t1, t2]` (see [`crate::frame`]).
//! Local from global: `W = H' M^-1 H`, `q = H' M^-1 f + w` ([`GlobalProblem::to_local`]).

use std::collections::HashMap;

use faer::linalg::cholesky::llt::factor::LltError as DenseLltError;
use faer::prelude::Solve;
use faer::sparse::linalg::LltError as SparseLltError;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, MatRef, Side};
use nalgebra::Matrix3;

use crate::blocks::BlockMatrix;
use crate::constraint::{Constraint, Constraints};
use crate::error::{CoreError, ProblemError};

/// Relative symmetry tolerance of [`LocalProblem::validate`] and [`GlobalProblem::validate`]:
/// `max |A_ij - A_ji| <= SYMMETRY_REL_TOL * max |A_ij|`.
///
/// Chosen by measuring all 44 `fclib_local`/`fclib_global` files of the FCLib and Siconos test
/// collection (`max |A - A'| / max |A|`; see `docs/FCLIB-BENCHMARKS.md` for the collection):
///
/// * `W` of the Siconos/Bullet problems is only roughly symmetric: RockPile_tob1 2.5e-3,
///   Capsules-* 6e-4 ... 2.1e-3, OneObject-* 4.5e-5 ... 1.2e-4, Rover* 8e-6 ... 3.2e-5;
///   every other `W` is symmetric to 1e-13 or better.
/// * `M` of the LMGC90 FEM problems (CubeH8, LMGC_GlobalFrictionContactProblem00046): 1.5e-7;
///   the other `M` to 1e-16.
///
/// A strict tolerance (1e-6) would reject 24 of the 37 local files, so the default is 1e-2: four
/// times the worst real file, and still about 100 times below a matrix that is plainly not
/// symmetric (`[[1, 2], [0, 1]]` has relative asymmetry 1). Callers that need more (e.g. a
/// method that relies on exact symmetry) call [`check_symmetric`] with their own tolerance, or
/// symmetrize. `core/tests/io.rs` (`shipped_fclib_files_all_load`) re-checks the files shipped in
/// `data/problems/`.
pub const SYMMETRY_REL_TOL: f64 = 1e-2;

/// The most entries (2^27, 1 GiB of `f64`) of a dense matrix whose size a problem's dimensions
/// set rather than its stored data (e.g. the `n x (3nc + 1)` and `3nc x 3nc` of
/// [`GlobalProblem::to_local`]): more is refused with [`ProblemError::TooLarge`] naming the
/// field, not attempted.
pub const MAX_DENSE_ENTRIES: usize = 1 << 27;

/// Fails with [`ProblemError::TooLarge`] for `field` unless a dense `rows x cols` matrix has at
/// most [`MAX_DENSE_ENTRIES`] entries; `what` says what the matrix is for.
pub fn check_dense_size(
    field: &str,
    rows: usize,
    cols: usize,
    what: &str,
) -> Result<(), ProblemError> {
    match rows.checked_mul(cols) {
        Some(n) if n <= MAX_DENSE_ENTRIES => Ok(()),
        _ => Err(ProblemError::TooLarge {
            field: field.to_string(),
            detail: format!(
                "{what} needs a dense {rows}x{cols} matrix, more than the {MAX_DENSE_ENTRIES} \
                 entries allowed (MAX_DENSE_ENTRIES)"
            ),
        }),
    }
}

/// A real matrix, dense or compressed-sparse-column.
#[derive(Debug, Clone)]
pub enum Matrix {
    /// Dense storage.
    Dense(Mat<f64>),
    /// Compressed sparse column storage.
    Sparse(SparseColMat<usize, f64>),
    /// 3x3 blocks by block row (a Delassus matrix of a scene with separate bodies; see
    /// [`crate::blocks`]).
    Blocks(BlockMatrix),
}

impl Matrix {
    /// Number of rows.
    pub fn nrows(&self) -> usize {
        match self {
            Matrix::Dense(a) => a.nrows(),
            Matrix::Sparse(a) => a.nrows(),
            Matrix::Blocks(b) => 3 * b.num_block_rows(),
        }
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        match self {
            Matrix::Dense(a) => a.ncols(),
            Matrix::Sparse(a) => a.ncols(),
            Matrix::Blocks(b) => 3 * b.num_block_rows(),
        }
    }

    /// A dense matrix from row-major data; `field` names it in the error.
    pub fn from_row_major(
        field: &str,
        rows: usize,
        cols: usize,
        data: &[f64],
    ) -> Result<Matrix, ProblemError> {
        if data.len() != rows * cols {
            return Err(ProblemError::Shape {
                field: field.to_string(),
                expected: format!("{rows}x{cols} = {} entries", rows * cols),
                found: format!("{} entries", data.len()),
            });
        }
        Ok(Matrix::Dense(Mat::from_fn(rows, cols, |i, j| {
            data[i * cols + j]
        })))
    }

    /// A sparse matrix from `(row, col, value)` triplets, duplicates summed; `field` names it
    /// in the error.
    pub fn from_triplets(
        field: &str,
        rows: usize,
        cols: usize,
        triplets: &[(usize, usize, f64)],
    ) -> Result<Matrix, ProblemError> {
        if let Some(&(i, j, _)) = triplets.iter().find(|&&(i, j, _)| i >= rows || j >= cols) {
            return Err(ProblemError::Shape {
                field: field.to_string(),
                expected: format!("indices inside {rows}x{cols}"),
                found: format!("entry at ({i}, {j})"),
            });
        }
        let t: Vec<Triplet<usize, usize, f64>> = triplets
            .iter()
            .map(|&(i, j, v)| Triplet::new(i, j, v))
            .collect();
        SparseColMat::try_new_from_triplets(rows, cols, &t)
            .map(Matrix::Sparse)
            .map_err(|e| ProblemError::Shape {
                field: field.to_string(),
                expected: format!("a valid {rows}x{cols} sparse matrix"),
                found: format!("{e:?}"),
            })
    }

    /// `out = A x`.
    pub fn mul_vec(&self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!(x.len(), self.ncols());
        debug_assert_eq!(out.len(), self.nrows());
        out.iter_mut().for_each(|o| *o = 0.0);
        match self {
            Matrix::Dense(a) => {
                // Column by column over contiguous slices (faer stores columns contiguously),
                // which the compiler vectorizes; a zero `x_j` skips its column.
                for (j, &xj) in x.iter().enumerate().take(a.ncols()) {
                    if xj != 0.0 {
                        let col = a.col_as_slice(j);
                        for (o, &aij) in out.iter_mut().zip(col) {
                            *o += aij * xj;
                        }
                    }
                }
            }
            Matrix::Sparse(a) => {
                let rows = a.symbolic().row_idx();
                let vals = a.val();
                for (j, &xj) in x.iter().enumerate() {
                    for k in a.symbolic().col_range(j) {
                        out[rows[k]] += vals[k] * xj;
                    }
                }
            }
            Matrix::Blocks(b) => b.mul_vec(x, out),
        }
    }

    /// `out = A' x`.
    pub fn mul_transpose_vec(&self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!(x.len(), self.nrows());
        debug_assert_eq!(out.len(), self.ncols());
        match self {
            Matrix::Dense(a) => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = (0..a.nrows()).map(|i| a[(i, j)] * x[i]).sum();
                }
            }
            Matrix::Sparse(a) => {
                let rows = a.symbolic().row_idx();
                let vals = a.val();
                for (j, o) in out.iter_mut().enumerate() {
                    *o = a
                        .symbolic()
                        .col_range(j)
                        .map(|k| vals[k] * x[rows[k]])
                        .sum();
                }
            }
            Matrix::Blocks(b) => b.mul_transpose_vec(x, out),
        }
    }

    /// A compressed-sparse-column copy (explicit zeros of dense storage dropped); `field`
    /// names the matrix in the error.
    pub fn to_sparse(&self, field: &str) -> Result<SparseColMat<usize, f64>, ProblemError> {
        if let Matrix::Sparse(s) = self {
            return Ok(s.clone());
        }
        let mut t = Vec::new();
        self.for_each_entry(|i, j, v| {
            if v != 0.0 {
                t.push(Triplet::new(i, j, v));
            }
        });
        SparseColMat::try_new_from_triplets(self.nrows(), self.ncols(), &t).map_err(|e| {
            ProblemError::Shape {
                field: field.to_string(),
                expected: format!("a valid {}x{} sparse matrix", self.nrows(), self.ncols()),
                found: format!("{e:?}"),
            }
        })
    }

    /// The same matrix kept as 3x3 blocks (square matrices of `3n` rows; others are returned
    /// unchanged).
    pub fn to_blocks(&self) -> Matrix {
        if self.nrows() != self.ncols() || !self.nrows().is_multiple_of(3) {
            return self.clone();
        }
        match self {
            Matrix::Blocks(_) => self.clone(),
            Matrix::Dense(d) => Matrix::Blocks(BlockMatrix::from_dense(d.as_ref())),
            Matrix::Sparse(_) => Matrix::Blocks(BlockMatrix::from_entries(self.nrows() / 3, |v| {
                self.for_each_entry(v)
            })),
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Mat<f64> {
        match self {
            Matrix::Dense(a) => a.clone(),
            Matrix::Sparse(a) => a.to_dense(),
            Matrix::Blocks(b) => b.to_dense(),
        }
    }

    /// Visits every stored entry as `(row, col, value)`.
    pub fn for_each_entry(&self, mut visit: impl FnMut(usize, usize, f64)) {
        match self {
            Matrix::Dense(a) => {
                for j in 0..a.ncols() {
                    for i in 0..a.nrows() {
                        visit(i, j, a[(i, j)]);
                    }
                }
            }
            Matrix::Sparse(a) => {
                let rows = a.symbolic().row_idx();
                let vals = a.val();
                for j in 0..a.ncols() {
                    for k in a.symbolic().col_range(j) {
                        visit(rows[k], j, vals[k]);
                    }
                }
            }
            Matrix::Blocks(b) => b.for_each_entry(visit),
        }
    }

    /// The 3x3 block at block-row `a`, block-column `b` (rows `3a..3a+3`, cols `3b..3b+3`).
    pub fn block3(&self, a: usize, b: usize) -> Matrix3<f64> {
        let mut m = Matrix3::zeros();
        match self {
            Matrix::Dense(d) => {
                for i in 0..3 {
                    for j in 0..3 {
                        m[(i, j)] = d[(3 * a + i, 3 * b + j)];
                    }
                }
            }
            Matrix::Sparse(s) => {
                let rows = s.symbolic().row_idx();
                let vals = s.val();
                for j in 0..3 {
                    for k in s.symbolic().col_range(3 * b + j) {
                        let r = rows[k];
                        if r >= 3 * a && r < 3 * a + 3 {
                            m[(r - 3 * a, j)] += vals[k];
                        }
                    }
                }
            }
            Matrix::Blocks(w) => m = w.block(a, b),
        }
        m
    }
}

/// A contact-space ("local") problem: `u = W r + q`.
#[derive(Debug, Clone)]
pub struct LocalProblem {
    /// Delassus matrix `W` (`m x m`, `m` the constraints' rows; `3 nc` for `nc` Coulomb
    /// contacts), symmetric positive semidefinite.
    pub w: Matrix,
    /// Free velocity `q` (`m`), each row's target already subtracted.
    pub q: Vec<f64>,
    /// The constraint blocks of the rows ([`crate::constraint`]): three-row Coulomb contacts in
    /// the FCLib files and the scenes.
    pub constraints: Constraints,
}

/// `(max |A_ij - A_ji|, max |A_ij|)` over the stored entries of a square matrix.
pub fn max_asymmetry(a: &Matrix) -> (f64, f64) {
    let mut asym = 0.0_f64;
    let mut scale = 0.0_f64;
    match a {
        Matrix::Dense(d) => {
            for j in 0..d.ncols() {
                for i in 0..d.nrows() {
                    scale = scale.max(d[(i, j)].abs());
                    if i < j && j < d.nrows() && i < d.ncols() {
                        asym = asym.max((d[(i, j)] - d[(j, i)]).abs());
                    }
                }
            }
        }
        Matrix::Blocks(b) => {
            for a in 0..b.num_block_rows() {
                for (c, m) in b.row(a) {
                    let other = b.block(c, a).transpose();
                    scale = scale.max(m.amax());
                    asym = asym.max((m - other).amax());
                }
            }
        }
        Matrix::Sparse(_) => {
            let mut entries: HashMap<(usize, usize), f64> = HashMap::new();
            a.for_each_entry(|i, j, v| *entries.entry((i, j)).or_insert(0.0) += v);
            for (&(i, j), &v) in &entries {
                scale = scale.max(v.abs());
                let other = entries.get(&(j, i)).copied().unwrap_or(0.0);
                asym = asym.max((v - other).abs());
            }
        }
    }
    (asym, scale)
}

fn check_square(field: &str, a: &Matrix) -> Result<(), ProblemError> {
    if a.nrows() != a.ncols() {
        return Err(ProblemError::Shape {
            field: field.to_string(),
            expected: "a square matrix".to_string(),
            found: format!("{}x{}", a.nrows(), a.ncols()),
        });
    }
    Ok(())
}

/// Fails unless `max |A - A'| <= rel_tol * max |A|` (and `A` is square).
///
/// The tolerance is relative because FCLib scales differ by orders of magnitude; see
/// [`SYMMETRY_REL_TOL`] for the value the validating constructors use.
pub fn check_symmetric(field: &str, a: &Matrix, rel_tol: f64) -> Result<(), ProblemError> {
    check_square(field, a)?;
    let (max_asymmetry, scale) = max_asymmetry(a);
    let tolerance = rel_tol * scale;
    // NaN asymmetry (from NaN entries) is rejected too.
    if max_asymmetry.is_nan() || max_asymmetry > tolerance {
        return Err(ProblemError::NotSymmetric {
            field: field.to_string(),
            max_asymmetry,
            tolerance,
            scale,
        });
    }
    Ok(())
}

/// Fails on the first NaN or infinite entry of `a`, reported with its row-major index.
pub fn check_finite_matrix(field: &str, a: &Matrix) -> Result<(), ProblemError> {
    let ncols = a.ncols();
    let mut bad: Option<(usize, f64)> = None;
    a.for_each_entry(|i, j, v| {
        let index = i * ncols + j;
        if !v.is_finite() && bad.is_none_or(|(b, _)| index < b) {
            bad = Some((index, v));
        }
    });
    match bad {
        Some((index, value)) => Err(ProblemError::NonFinite {
            field: field.to_string(),
            index,
            value,
        }),
        None => Ok(()),
    }
}

/// Fails on the first NaN or infinite entry of `v`.
pub fn check_finite_vec(field: &str, v: &[f64]) -> Result<(), ProblemError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(ProblemError::NonFinite {
            field: field.to_string(),
            index,
            value: v[index],
        }),
        None => Ok(()),
    }
}

fn check_len(field: &str, expected: usize, found: usize, why: &str) -> Result<(), ProblemError> {
    if expected != found {
        return Err(ProblemError::Shape {
            field: field.to_string(),
            expected: format!("{expected} entries ({why})"),
            found: format!("{found} entries"),
        });
    }
    Ok(())
}

fn check_dims(
    field: &str,
    a: &Matrix,
    rows: usize,
    cols: usize,
    why: &str,
) -> Result<(), ProblemError> {
    if a.nrows() != rows || a.ncols() != cols {
        return Err(ProblemError::Shape {
            field: field.to_string(),
            expected: format!("{rows}x{cols} ({why})"),
            found: format!("{}x{}", a.nrows(), a.ncols()),
        });
    }
    Ok(())
}

/// Friction coefficients must be finite and nonnegative.
/// Checks a problem's constraint blocks: for three-row contacts, `mu` finite and nonnegative
/// with the errors of the FCLib fields (`mu`, [`ProblemError::NegativeFriction`]); any other
/// block's parameters by [`crate::constraint::Constraint::check`]
/// ([`ProblemError::BadConstraint`]).
pub fn check_constraints(c: &Constraints) -> Result<(), ProblemError> {
    let three_row_contacts = c
        .blocks()
        .iter()
        .all(|b| matches!(b, Constraint::Contact { mu } if mu.len() == 2));
    if three_row_contacts {
        check_mu(c.mu())?;
    }
    match c.first_bad() {
        Some((index, kind, message)) => Err(ProblemError::BadConstraint {
            index,
            kind: kind.to_string(),
            message,
        }),
        None => Ok(()),
    }
}

/// What sets a problem's row count, for shape errors: `3 per contact, nc contacts in `mu``
/// for Coulomb contacts, else the rows of the blocks.
pub(crate) fn rows_why(c: &Constraints) -> String {
    if c.blocks().iter().all(Constraint::is_coulomb) {
        format!("3 per contact, {} contacts in `mu`", c.len())
    } else {
        format!("{} rows of {} constraint blocks", c.rows(), c.len())
    }
}

fn check_mu(mu: &[f64]) -> Result<(), ProblemError> {
    check_finite_vec("mu", mu)?;
    match mu.iter().position(|&m| m < 0.0) {
        Some(contact) => Err(ProblemError::NegativeFriction {
            contact,
            value: mu[contact],
        }),
        None => Ok(()),
    }
}

/// The symmetric part `(A + A') / 2`, in the storage of `A` (square `A`).
fn symmetric_part(a: &Matrix) -> Matrix {
    match a {
        Matrix::Dense(d) => Matrix::Dense(Mat::from_fn(d.nrows(), d.ncols(), |i, j| {
            0.5 * (d[(i, j)] + d[(j, i)])
        })),
        Matrix::Blocks(b) => Matrix::Blocks(b.symmetric_part()),
        Matrix::Sparse(s) => {
            let mut t = Vec::with_capacity(2 * s.val().len());
            a.for_each_entry(|i, j, v| {
                t.push(Triplet::new(i, j, 0.5 * v));
                t.push(Triplet::new(j, i, 0.5 * v));
            });
            match SparseColMat::try_new_from_triplets(s.nrows(), s.ncols(), &t) {
                Ok(m) => Matrix::Sparse(m),
                // Only an allocation failure can get here; fall back to dense.
                Err(_) => {
                    let d = s.to_dense();
                    Matrix::Dense(Mat::from_fn(d.nrows(), d.ncols(), |i, j| {
                        0.5 * (d[(i, j)] + d[(j, i)])
                    }))
                }
            }
        }
    }
}

/// A Cholesky factorization `A = L L'` of the symmetric part of a square matrix.
#[derive(Debug)]
pub enum Cholesky {
    /// A diagonal matrix (as Siconos mass matrices are): its positive diagonal.
    Diagonal(Vec<f64>),
    /// A dense matrix's factor.
    Dense(faer::linalg::solvers::Llt<f64>),
    /// A sparse matrix's supernodal factor.
    Sparse(faer::sparse::linalg::solvers::Llt<usize, f64>),
}

impl Cholesky {
    /// Factors `(A + A') / 2`: dense LLT for dense `A`, supernodal sparse LLT for sparse `A`,
    /// and just the diagonal for a sparse diagonal `A` (a supernodal solve with many right-hand
    /// sides costs far more there).
    pub fn new(field: &str, a: &Matrix) -> Result<Cholesky, ProblemError> {
        check_square(field, a)?;
        check_finite_matrix(field, a)?;
        let not_pd = |detail: String| ProblemError::NotPositive {
            field: field.to_string(),
            kind: "definite".to_string(),
            detail,
        };
        if let Matrix::Sparse(_) = a {
            let mut diagonal = true;
            let mut d = vec![0.0; a.nrows()];
            a.for_each_entry(|i, j, v| {
                if i == j {
                    d[i] += v;
                } else if v != 0.0 {
                    diagonal = false;
                }
            });
            if diagonal {
                return match d.iter().position(|&v| v <= 0.0 || v.is_nan()) {
                    Some(i) => Err(not_pd(format!(
                        "diagonal matrix with nonpositive diagonal entry {i}: {}",
                        d[i]
                    ))),
                    None => Ok(Cholesky::Diagonal(d)),
                };
            }
        }
        match symmetric_part(a) {
            b @ Matrix::Blocks(_) => Cholesky::new(field, &Matrix::Sparse(b.to_sparse(field)?)),
            Matrix::Dense(d) => d.llt(Side::Lower).map(Cholesky::Dense).map_err(|e| match e {
                DenseLltError::NonPositivePivot { index } => not_pd(format!(
                    "the Cholesky factorization of the symmetric part meets a nonpositive pivot at index {index}"
                )),
            }),
            Matrix::Sparse(s) => s
                .sp_cholesky(Side::Lower)
                .map(Cholesky::Sparse)
                .map_err(|e| match e {
                    SparseLltError::Numeric(DenseLltError::NonPositivePivot { index }) => not_pd(
                        format!(
                            "the sparse Cholesky factorization of the symmetric part meets a nonpositive pivot at index {index} of its fill-reducing ordering"
                        ),
                    ),
                    SparseLltError::Generic(g) => {
                        not_pd(format!("the sparse Cholesky factorization failed: {g:?}"))
                    }
                }),
        }
    }

    /// Overwrites `rhs` with `A^-1 rhs`.
    pub fn solve_in_place(&self, rhs: faer::MatMut<'_, f64>) {
        match self {
            Cholesky::Diagonal(d) => {
                let mut rhs = rhs;
                for c in 0..rhs.ncols() {
                    for (i, di) in d.iter().enumerate() {
                        rhs[(i, c)] /= di;
                    }
                }
            }
            Cholesky::Dense(l) => l.solve_in_place(rhs),
            Cholesky::Sparse(l) => l.solve_in_place(rhs),
        }
    }
}

/// Fails unless the symmetric part of `a` has a Cholesky factorization (is positive definite).
///
/// The error names the first nonpositive pivot (for sparse `a`, its index in the fill-reducing
/// ordering). Sparse matrices are factored sparse, so this is cheap for FCLib mass matrices.
pub fn check_positive_definite(field: &str, a: &Matrix) -> Result<(), ProblemError> {
    Cholesky::new(field, a).map(|_| ())
}

/// Fails unless the smallest eigenvalue of `(A + A') / 2` is `>= -rel_tol * max |eigenvalue|`.
///
/// Dense self-adjoint eigendecomposition (O(n^3)): meant for Delassus matrices of moderate size.
pub fn check_positive_semidefinite(
    field: &str,
    a: &Matrix,
    rel_tol: f64,
) -> Result<(), ProblemError> {
    check_square(field, a)?;
    check_finite_matrix(field, a)?;
    let not_psd = |detail: String| ProblemError::NotPositive {
        field: field.to_string(),
        kind: "semidefinite".to_string(),
        detail,
    };
    let eig = symmetric_part_eigenvalues(field, a)?;
    let (Some(&min), Some(&max)) = (eig.first(), eig.last()) else {
        return Ok(());
    };
    let scale = min.abs().max(max.abs());
    if min < -rel_tol * scale {
        return Err(not_psd(format!(
            "the smallest eigenvalue of the symmetric part is {min:.6e} < -{rel_tol:e} x max |eigenvalue| = {:.6e}",
            -rel_tol * scale
        )));
    }
    Ok(())
}

/// The eigenvalues, increasing, of the symmetric part `(A + A') / 2` of a square `A`, from a
/// dense self-adjoint decomposition (`O(n^3)`); `field` names `A` in the error.
pub(crate) fn symmetric_part_eigenvalues(
    field: &str,
    a: &Matrix,
) -> Result<Vec<f64>, ProblemError> {
    let s = symmetric_part(&Matrix::Dense(a.to_dense())).to_dense();
    s.self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| ProblemError::NotPositive {
            field: field.to_string(),
            kind: "semidefinite".to_string(),
            detail: format!("the eigenvalues of the symmetric part could not be computed: {e:?}"),
        })
}

/// `H' X` for a matrix `H` (`n x m`) and a dense `X` (`n x k`).
fn transpose_mul(h: &Matrix, x: MatRef<'_, f64>) -> Mat<f64> {
    match h {
        Matrix::Dense(d) => d.transpose() * x,
        Matrix::Blocks(b) => b.to_dense().transpose() * x,
        Matrix::Sparse(s) => {
            let rows = s.symbolic().row_idx();
            let vals = s.val();
            let mut y = Mat::<f64>::zeros(s.ncols(), x.ncols());
            for c in 0..x.ncols() {
                let xc = x.col(c);
                for j in 0..s.ncols() {
                    y[(j, c)] = s
                        .symbolic()
                        .col_range(j)
                        .map(|k| vals[k] * xc[rows[k]])
                        .sum();
                }
            }
            y
        }
    }
}

impl LocalProblem {
    /// A validated local problem of Coulomb contacts with friction `mu` (see
    /// [`LocalProblem::validate`]).
    pub fn new(w: Matrix, q: Vec<f64>, mu: Vec<f64>) -> Result<LocalProblem, ProblemError> {
        LocalProblem::with_constraints(w, q, Constraints::coulomb(&mu))
    }

    /// A validated local problem with any constraint blocks.
    pub fn with_constraints(
        w: Matrix,
        q: Vec<f64>,
        constraints: Constraints,
    ) -> Result<LocalProblem, ProblemError> {
        let p = LocalProblem { w, q, constraints };
        p.validate()?;
        Ok(p)
    }

    /// A local problem of Coulomb contacts with friction `mu`, not validated (for data known
    /// good, such as a scene's own).
    pub fn coulomb(w: Matrix, q: Vec<f64>, mu: &[f64]) -> LocalProblem {
        LocalProblem {
            w,
            q,
            constraints: Constraints::coulomb(mu),
        }
    }

    /// Checks, in order: the constraints' parameters ([`check_constraints`]: for Coulomb
    /// contacts, `mu` finite and nonnegative); `W` is `m x m` and `q` has `m` entries (`m` the
    /// constraints' rows, `3nc` for `nc` contacts); `W`, `q` finite; `W` symmetric to
    /// [`SYMMETRY_REL_TOL`].
    ///
    /// Definiteness is not checked here (only some methods need it): see
    /// [`check_positive_semidefinite`].
    pub fn validate(&self) -> Result<(), ProblemError> {
        check_constraints(&self.constraints)?;
        let m = self.constraints.rows();
        let why = rows_why(&self.constraints);
        check_dims("W", &self.w, m, m, &why)?;
        check_len("q", m, self.q.len(), &why)?;
        check_finite_matrix("W", &self.w)?;
        check_finite_vec("q", &self.q)?;
        check_symmetric("W", &self.w, SYMMETRY_REL_TOL)
    }

    /// The friction coefficient of each contact of a Coulomb problem (one per block:
    /// [`Constraints::mu`]).
    pub fn mu(&self) -> &[f64] {
        self.constraints.mu()
    }

    /// A dense copy of `W`.
    pub fn dense_w(&self) -> Mat<f64> {
        self.w.to_dense()
    }

    /// Number of constraint blocks: the contacts `nc` of a Coulomb problem.
    pub fn num_contacts(&self) -> usize {
        self.constraints.len()
    }

    /// `u = W r + q`.
    pub fn velocity(&self, r: &[f64]) -> Vec<f64> {
        let mut u = vec![0.0; self.q.len()];
        self.velocity_into(r, &mut u);
        u
    }

    /// [`LocalProblem::velocity`] into `u` (as long as `q`), for loops that keep their buffer.
    pub fn velocity_into(&self, r: &[f64], u: &mut [f64]) {
        self.w.mul_vec(r, u);
        u.iter_mut().zip(&self.q).for_each(|(ui, qi)| *ui += qi);
    }
}

/// A generalized-space ("global") problem: `M v = H r + f`, `u = H' v + w`.
#[derive(Debug, Clone)]
pub struct GlobalProblem {
    /// Mass matrix `M` (`n x n`), symmetric positive definite.
    pub m: Matrix,
    /// `H = J'` (`n x m`): maps constraint impulses to generalized impulses.
    pub h: Matrix,
    /// Generalized free impulse `f` (`n`).
    pub f: Vec<f64>,
    /// Velocity offset `w` (`m`, the constraints' rows), each row's target subtracted.
    pub w: Vec<f64>,
    /// The constraint blocks of the rows ([`crate::constraint`]).
    pub constraints: Constraints,
}

impl GlobalProblem {
    /// A validated global problem (see [`GlobalProblem::validate`]).
    pub fn new(
        m: Matrix,
        h: Matrix,
        f: Vec<f64>,
        w: Vec<f64>,
        mu: Vec<f64>,
    ) -> Result<GlobalProblem, ProblemError> {
        GlobalProblem::with_constraints(m, h, f, w, Constraints::coulomb(&mu))
    }

    /// A validated global problem with any constraint blocks.
    pub fn with_constraints(
        m: Matrix,
        h: Matrix,
        f: Vec<f64>,
        w: Vec<f64>,
        constraints: Constraints,
    ) -> Result<GlobalProblem, ProblemError> {
        let p = GlobalProblem {
            m,
            h,
            f,
            w,
            constraints,
        };
        p.validate()?;
        Ok(p)
    }

    /// A global problem of Coulomb contacts with friction `mu`, not validated (for data known
    /// good).
    pub fn coulomb(m: Matrix, h: Matrix, f: Vec<f64>, w: Vec<f64>, mu: &[f64]) -> GlobalProblem {
        GlobalProblem {
            m,
            h,
            f,
            w,
            constraints: Constraints::coulomb(mu),
        }
    }

    /// The friction coefficient of each contact of a Coulomb problem ([`Constraints::mu`]).
    pub fn mu(&self) -> &[f64] {
        self.constraints.mu()
    }

    /// Checks, in order: the constraints' parameters ([`check_constraints`]); `M` square
    /// (`n x n`), `H` `n x m`, `f` `n` entries, `w` `m` entries (`m` the constraints' rows, `3nc`
    /// for `nc` contacts); all entries finite; `M` symmetric to [`SYMMETRY_REL_TOL`].
    ///
    /// Definiteness of `M` is not checked here: see [`check_positive_definite`] (and
    /// [`GlobalProblem::to_local`], which needs it).
    pub fn validate(&self) -> Result<(), ProblemError> {
        check_constraints(&self.constraints)?;
        let rows = self.constraints.rows();
        check_square("M", &self.m)?;
        let n = self.m.nrows();
        let why = rows_why(&self.constraints);
        check_dims("H", &self.h, n, rows, &format!("{n} dofs from `M`, {why}"))?;
        check_len("f", n, self.f.len(), &format!("{n} dofs from `M`"))?;
        check_len("w", rows, self.w.len(), &why)?;
        check_finite_matrix("M", &self.m)?;
        check_finite_matrix("H", &self.h)?;
        check_finite_vec("f", &self.f)?;
        check_finite_vec("w", &self.w)?;
        check_symmetric("M", &self.m, SYMMETRY_REL_TOL)
    }

    /// The equivalent local problem: `W = H' M^-1 H`, `q = H' M^-1 f + w`.
    ///
    /// `M^-1` is applied through a Cholesky factorization of `(M + M') / 2` (sparse
    /// supernodal for sparse `M`, dense otherwise); a non-SPD `M` gives
    /// [`ProblemError::NotPositive`] for field `M`. The result `W` is dense (a Delassus matrix is
    /// dense in general) and exactly symmetric: it is replaced by `(W + W') / 2` to remove
    /// round-off. Costs one solve with `3nc + 1` right-hand sides, `n x (3nc + 1)` dense memory;
    /// a problem for which that or `3nc x 3nc` exceeds [`MAX_DENSE_ENTRIES`] is refused with
    /// [`ProblemError::TooLarge`] (field `H`, or `W` for the result).
    pub fn to_local(&self) -> Result<LocalProblem, CoreError> {
        self.validate()?;
        let n = self.m.nrows();
        let m = self.w.len();
        let what = "converting to a local problem";
        check_dense_size("H", n, m + 1, what)?;
        check_dense_size("W", m, m, what)?;
        let chol = Cholesky::new("M", &self.m)?;
        let mut x = Mat::<f64>::zeros(n, m + 1);
        self.h.for_each_entry(|i, j, v| x[(i, j)] += v);
        for (i, fi) in self.f.iter().enumerate() {
            x[(i, m)] = *fi;
        }
        chol.solve_in_place(x.as_mut());
        let y = transpose_mul(&self.h, x.as_ref());
        let w = Mat::from_fn(m, m, |i, j| 0.5 * (y[(i, j)] + y[(j, i)]));
        let q = (0..m).map(|i| y[(i, m)] + self.w[i]).collect();
        Ok(LocalProblem::with_constraints(
            Matrix::Dense(w),
            q,
            self.constraints.clone(),
        )?)
    }

    /// Number of constraint blocks: the contacts `nc` of a Coulomb problem.
    pub fn num_contacts(&self) -> usize {
        self.constraints.len()
    }
}

/// Either form, as read from a file.
#[derive(Debug, Clone)]
pub enum Problem {
    /// Contact-space problem.
    Local(LocalProblem),
    /// Generalized-space problem.
    Global(GlobalProblem),
}
