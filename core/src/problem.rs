//! Contact problems in the two FCLib forms, dense or sparse.
//!
//! * Local (contact space): `u = W r + q`, `mu` per contact, `K*_mu ∋ u + mu |u_T| e_n ⟂ r ∈ K_mu`.
//! * Global (generalized space): `M v = H r + f`, `u = H' v + w`, same cone conditions.
//!   `H` maps contact impulses to generalized impulses (it is `J'`).
//!
//! Per contact the three rows are normal first, `[n, t1, t2]` (see [`crate::frame`]).
//! Local from global: `W = H' M^-1 H`, `q = H' M^-1 f + w` ([`GlobalProblem::to_local`]).

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;
use nalgebra::Matrix3;

use crate::error::ProblemError;

/// A real matrix, dense or compressed-sparse-column.
#[derive(Debug, Clone)]
pub enum Matrix {
    /// Dense storage.
    Dense(Mat<f64>),
    /// Compressed sparse column storage.
    Sparse(SparseColMat<usize, f64>),
}

impl Matrix {
    /// Number of rows.
    pub fn nrows(&self) -> usize {
        match self {
            Matrix::Dense(a) => a.nrows(),
            Matrix::Sparse(a) => a.nrows(),
        }
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        match self {
            Matrix::Dense(a) => a.ncols(),
            Matrix::Sparse(a) => a.ncols(),
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
                for j in 0..a.ncols() {
                    let xj = x[j];
                    if xj != 0.0 {
                        for (i, o) in out.iter_mut().enumerate() {
                            *o += a[(i, j)] * xj;
                        }
                    }
                }
            }
            Matrix::Sparse(a) => {
                let rows = a.symbolic().row_idx();
                let vals = a.val();
                for j in 0..a.ncols() {
                    for k in a.symbolic().col_range(j) {
                        out[rows[k]] += vals[k] * x[j];
                    }
                }
            }
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
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Mat<f64> {
        match self {
            Matrix::Dense(a) => a.clone(),
            Matrix::Sparse(a) => a.to_dense(),
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
        }
        m
    }
}

/// A contact-space ("local") problem: `u = W r + q`.
#[derive(Debug, Clone)]
pub struct LocalProblem {
    /// Delassus matrix `W` (`3 nc x 3 nc`), symmetric positive semidefinite.
    pub w: Matrix,
    /// Free contact velocity `q` (`3 nc`).
    pub q: Vec<f64>,
    /// Friction coefficient per contact (`nc`).
    pub mu: Vec<f64>,
}

impl LocalProblem {
    /// Number of contacts `nc`.
    pub fn num_contacts(&self) -> usize {
        self.mu.len()
    }

    /// `u = W r + q`.
    pub fn velocity(&self, r: &[f64]) -> Vec<f64> {
        let mut u = vec![0.0; self.q.len()];
        self.w.mul_vec(r, &mut u);
        u.iter_mut().zip(&self.q).for_each(|(ui, qi)| *ui += qi);
        u
    }
}

/// A generalized-space ("global") problem: `M v = H r + f`, `u = H' v + w`.
#[derive(Debug, Clone)]
pub struct GlobalProblem {
    /// Mass matrix `M` (`n x n`), symmetric positive definite.
    pub m: Matrix,
    /// `H = J'` (`n x 3 nc`): maps contact impulses to generalized impulses.
    pub h: Matrix,
    /// Generalized free impulse `f` (`n`).
    pub f: Vec<f64>,
    /// Contact-velocity offset `w` (`3 nc`).
    pub w: Vec<f64>,
    /// Friction coefficient per contact (`nc`).
    pub mu: Vec<f64>,
}

impl GlobalProblem {
    /// Number of contacts `nc`.
    pub fn num_contacts(&self) -> usize {
        self.mu.len()
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
