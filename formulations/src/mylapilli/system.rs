//! A local problem split the paper's way: its bilateral (equality) rows `p_b` first and every
//! other block after them (eq. 20 and the first row of eq. 22; eq. 29), densified once.
//!
//! An [`Equality`](contactlab_core::Constraint::Equality) block of a [`LocalProblem`] is the
//! paper's bilateral row: impulse free, velocity zero (`u = 0` on the offset velocity). MuJoCo
//! gives the blocks in any order; the split gathers the equality rows, in their order, and
//! keeps the order of the others, so that
//!
//! ```text
//! [u_b]   [W_bb   W_bu] [p_b]   [q_b]
//! [u  ] = [W_bu'  W   ] [r  ] + [q  ],      u_b = 0,  p_b free,
//! ```
//!
//! is the problem's `u = W r + q` with its rows permuted: `W_bb = Omega_b Lambda Omega_b'`,
//! `W_bu = Omega_b Lambda Omega_u'`, `q_b = alpha_b^f dt` in the paper's notation. When the
//! equality rows come first (the paper's order) the permutation is the identity.

use std::ops::Range;

use contactlab_core::{Constraint, LocalProblem};
use faer::Mat;

use super::error::MylapilliError;

/// One block that is not an equality, with its rows in the problem and in `u`'s `[r]` part.
#[derive(Debug, Clone)]
pub(crate) struct OtherBlock {
    /// The block.
    pub constraint: Constraint,
    /// Its rows in the problem's row order.
    pub orig: Range<usize>,
    /// Its rows among the non-equality rows (the rows of `W`, `q`, `r` here).
    pub rows: Range<usize>,
}

/// The split system, densified once, shared by both formulations.
#[derive(Debug, Clone)]
pub(crate) struct DenseSystem {
    /// `n_b`, the equality rows.
    pub n_b: usize,
    /// The problem's row of each entry of `p_b`.
    pub eq_rows: Vec<usize>,
    /// The other blocks, in the problem's order.
    pub blocks: Vec<OtherBlock>,
    /// `W_bb`.
    pub w_bb: Mat<f64>,
    /// `W_bu`.
    pub w_bu: Mat<f64>,
    /// `q_b`.
    pub q_b: Vec<f64>,
    /// `W` of the other rows.
    pub w: Mat<f64>,
    /// `q` of the other rows.
    pub q: Vec<f64>,
    /// The problem's total rows.
    pub rows: usize,
}

impl DenseSystem {
    /// Validates `problem` and splits it (see the module doc).
    pub fn new(problem: &LocalProblem) -> Result<DenseSystem, MylapilliError> {
        problem.validate()?;
        let mut eq_rows = Vec::new();
        let mut other_rows = Vec::new();
        let mut blocks = Vec::new();
        for (orig, c) in problem.constraints.iter() {
            if let Constraint::Equality { .. } = c {
                eq_rows.extend(orig);
            } else {
                let start = other_rows.len();
                other_rows.extend(orig.clone());
                blocks.push(OtherBlock {
                    constraint: c.clone(),
                    rows: start..other_rows.len(),
                    orig,
                });
            }
        }
        let full = problem.w.to_dense();
        let sub =
            |a: &[usize], b: &[usize]| Mat::from_fn(a.len(), b.len(), |i, j| full[(a[i], b[j])]);
        let pick = |a: &[usize]| a.iter().map(|&i| problem.q[i]).collect::<Vec<f64>>();
        let (w_bb, w_bu, q_b) = (
            sub(&eq_rows, &eq_rows),
            sub(&eq_rows, &other_rows),
            pick(&eq_rows),
        );
        // Without equality rows the permutation is the identity: no second copy of `W`.
        let (w, q) = if eq_rows.is_empty() {
            (full, problem.q.clone())
        } else {
            (sub(&other_rows, &other_rows), pick(&other_rows))
        };
        Ok(DenseSystem {
            n_b: eq_rows.len(),
            w_bb,
            w_bu,
            q_b,
            w,
            q,
            rows: problem.q.len(),
            eq_rows,
            blocks,
        })
    }

    /// The rows that are not equalities.
    pub fn other_rows(&self) -> usize {
        self.q.len()
    }

    /// Velocity of the other rows `u = W_bu' p_b + W r + q`.
    pub fn contact_velocity(&self, p_b: &[f64], r: &[f64]) -> Vec<f64> {
        let n = self.q.len();
        (0..n)
            .map(|i| {
                let wr: f64 = (0..n).map(|j| self.w[(i, j)] * r[j]).sum();
                let wp: f64 = (0..self.n_b).map(|k| self.w_bu[(k, i)] * p_b[k]).sum();
                wr + wp + self.q[i]
            })
            .collect()
    }

    /// Bilateral velocity `u_b = W_bb p_b + W_bu r + q_b`.
    pub fn bilateral_velocity(&self, p_b: &[f64], r: &[f64]) -> Vec<f64> {
        let n = self.q.len();
        (0..self.n_b)
            .map(|k| {
                let a: f64 = (0..self.n_b).map(|l| self.w_bb[(k, l)] * p_b[l]).sum();
                let b: f64 = (0..n).map(|j| self.w_bu[(k, j)] * r[j]).sum();
                a + b + self.q_b[k]
            })
            .collect()
    }

    /// Puts `p_b` and the other rows' `r` back in the problem's row order.
    pub fn scatter(&self, p_b: &[f64], r: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.rows];
        for (&row, &v) in self.eq_rows.iter().zip(p_b) {
            out[row] = v;
        }
        for b in &self.blocks {
            out[b.orig.clone()].copy_from_slice(&r[b.rows.clone()]);
        }
        out
    }

    /// The inverse of [`DenseSystem::scatter`]: `(p_b, r)` of a vector in the problem's order.
    pub fn gather(&self, full: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let p_b = self.eq_rows.iter().map(|&row| full[row]).collect();
        let mut r = vec![0.0; self.other_rows()];
        for b in &self.blocks {
            r[b.rows.clone()].copy_from_slice(&full[b.orig.clone()]);
        }
        (p_b, r)
    }

    /// Fails unless `v` has one finite entry per row of the problem.
    pub fn check_rows(&self, field: &str, v: &[f64]) -> Result<(), MylapilliError> {
        if v.len() != self.rows {
            return Err(MylapilliError::Problem(
                contactlab_core::ProblemError::Shape {
                    field: field.into(),
                    expected: format!("{} entries (one per row of the problem)", self.rows),
                    found: format!("{} entries", v.len()),
                },
            ));
        }
        contactlab_core::problem::check_finite_vec(field, v)?;
        Ok(())
    }
}
