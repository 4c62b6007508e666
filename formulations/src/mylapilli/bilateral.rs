//! Bilateral (equality) rows: loop-closure or joint constraints whose impulses `p_b` are free
//! and whose velocity must vanish (eq. 20, first row of eq. 22; eq. 29).
//!
//! Input form: the rows sit *before* the contacts in the combined system
//!
//! ```text
//! [u_b]   [W_bb   W_bu] [p_b]   [q_b]
//! [u  ] = [W_bu'  W   ] [r  ] + [q  ],      u_b = 0,  p_b free,
//! ```
//!
//! with `W_bb = Omega_b Lambda Omega_b'` (`n_b x n_b`), `W_bu = Omega_b Lambda Omega_u'`
//! (`n_b x 3 n_u`, columns normal first per contact), `q_b = alpha_b^f dt` (eq. 20). The
//! contact-to-bilateral coupling `Omega_u Lambda Omega_b'` is `W_bu'` because `Lambda` is
//! symmetric, so it is not given separately. `W`, `q`, `mu` stay a [`LocalProblem`].

use contactlab_core::problem::{check_finite_matrix, check_finite_vec, check_symmetric};
use contactlab_core::{LocalProblem, Matrix, ProblemError};
use faer::{Mat, Side};

use super::error::{validate_problem, MylapilliError};

/// `n_b` bilateral rows coupled to a local problem's contacts (see the module doc for the
/// system they form).
#[derive(Debug, Clone)]
pub struct Bilateral {
    /// `W_bb = Omega_b Lambda Omega_b'`, `n_b x n_b`, symmetric.
    pub w_bb: Matrix,
    /// `W_bu = Omega_b Lambda Omega_u'`, `n_b x 3 n_u`, columns normal first per contact.
    pub w_bu: Matrix,
    /// `q_b = alpha_b^f dt`, the bilateral rows' velocity without impulses (`n_b`).
    pub q_b: Vec<f64>,
}

fn shape(field: &str, expected: String, found: String) -> MylapilliError {
    MylapilliError::Problem(ProblemError::Shape {
        field: field.to_string(),
        expected,
        found,
    })
}

impl Bilateral {
    /// Validated bilateral rows: `W_bb` square and symmetric (core's relative tolerance),
    /// `W_bu` with `n_b` rows, `q_b` of length `n_b`, all finite.
    pub fn new(w_bb: Matrix, w_bu: Matrix, q_b: Vec<f64>) -> Result<Bilateral, MylapilliError> {
        let b = Bilateral { w_bb, w_bu, q_b };
        b.validate()?;
        Ok(b)
    }

    /// Number of bilateral rows `n_b`.
    pub fn num_rows(&self) -> usize {
        self.q_b.len()
    }

    /// Checks the fields among themselves (see [`Bilateral::new`]).
    pub fn validate(&self) -> Result<(), MylapilliError> {
        let n_b = self.q_b.len();
        if self.w_bb.nrows() != n_b || self.w_bb.ncols() != n_b {
            return Err(shape(
                "W_bb",
                format!("{n_b}x{n_b} (n_b = len(q_b))"),
                format!("{}x{}", self.w_bb.nrows(), self.w_bb.ncols()),
            ));
        }
        if self.w_bu.nrows() != n_b || 3 * (self.w_bu.ncols() / 3) != self.w_bu.ncols() {
            return Err(shape(
                "W_bu",
                format!("{n_b} rows and 3 columns per contact"),
                format!("{}x{}", self.w_bu.nrows(), self.w_bu.ncols()),
            ));
        }
        check_finite_vec("q_b", &self.q_b)?;
        check_finite_matrix("W_bb", &self.w_bb)?;
        check_finite_matrix("W_bu", &self.w_bu)?;
        check_symmetric(
            "W_bb",
            &self.w_bb,
            contactlab_core::problem::SYMMETRY_REL_TOL,
        )?;
        Ok(())
    }

    /// Checks that `W_bu` has three columns per contact of `problem`.
    pub fn validate_against(&self, problem: &LocalProblem) -> Result<(), MylapilliError> {
        self.validate()?;
        let n = 3 * problem.num_contacts();
        if self.w_bu.ncols() != n {
            return Err(shape(
                "W_bu",
                format!("{n} columns (3 per contact, {} contacts)", n / 3),
                format!("{} columns", self.w_bu.ncols()),
            ));
        }
        Ok(())
    }

    /// Splits a combined system whose first `n_b` rows are bilateral (the order of the paper's
    /// `z = [p_b, ...]`) into the contact problem and the bilateral rows. `w` is
    /// `(n_b + 3 n_u)` square, `q` has `n_b + 3 n_u` entries, `mu` has `n_u`.
    pub fn split(
        w: &Matrix,
        q: &[f64],
        mu: Vec<f64>,
        n_b: usize,
    ) -> Result<(LocalProblem, Bilateral), MylapilliError> {
        let n = n_b + 3 * mu.len();
        if w.nrows() != n || w.ncols() != n {
            return Err(shape(
                "W",
                format!("{n}x{n} (n_b = {n_b} plus 3 per contact)"),
                format!("{}x{}", w.nrows(), w.ncols()),
            ));
        }
        if q.len() != n {
            return Err(shape(
                "q",
                format!("{n} entries"),
                format!("{} entries", q.len()),
            ));
        }
        let d = w.to_dense();
        let nu = n - n_b;
        let sub = |r0: usize, c0: usize, nr: usize, nc: usize| {
            Matrix::Dense(Mat::from_fn(nr, nc, |i, j| d[(r0 + i, c0 + j)]))
        };
        let problem = LocalProblem::new(sub(n_b, n_b, nu, nu), q[n_b..].to_vec(), mu)?;
        let bil = Bilateral::new(sub(0, 0, n_b, n_b), sub(0, n_b, n_b, nu), q[..n_b].to_vec())?;
        Ok((problem, bil))
    }

    /// The bilateral impulses that make `u_b = 0` for given contact impulses `r`:
    /// `p_b = -W_bb^-1 (W_bu r + q_b)`. Needs `W_bb` positive definite (the paper's `G_b` has
    /// full rank, eq. 6).
    pub fn impulse_for(&self, r: &[f64]) -> Result<Vec<f64>, MylapilliError> {
        let n_b = self.num_rows();
        if r.len() != self.w_bu.ncols() {
            return Err(shape(
                "r",
                format!("{} entries", self.w_bu.ncols()),
                format!("{} entries", r.len()),
            ));
        }
        let mut rhs = vec![0.0; n_b];
        self.w_bu.mul_vec(r, &mut rhs);
        let rhs: Vec<f64> = rhs.iter().zip(&self.q_b).map(|(a, b)| -(a + b)).collect();
        let sol = self.solve_bb(&Mat::from_fn(n_b, 1, |i, _| rhs[i]))?;
        Ok((0..n_b).map(|i| sol[(i, 0)]).collect())
    }

    /// The contact problem with the bilateral impulses eliminated (Schur complement):
    /// `W_c = W - W_bu' W_bb^-1 W_bu`, `q_c = q - W_bu' W_bb^-1 q_b`. Its solutions are the
    /// contact impulses of the combined system, so the shared metrics can judge them on it.
    pub fn eliminate(&self, problem: &LocalProblem) -> Result<LocalProblem, MylapilliError> {
        self.validate_against(problem)?;
        validate_problem(problem)?;
        let n_b = self.num_rows();
        let n = problem.q.len();
        let w_bu = self.w_bu.to_dense();
        // [X | y] = W_bb^-1 [W_bu | q_b].
        let rhs = Mat::from_fn(
            n_b,
            n + 1,
            |i, j| {
                if j < n {
                    w_bu[(i, j)]
                } else {
                    self.q_b[i]
                }
            },
        );
        let x = self.solve_bb(&rhs)?;
        let w = problem.w.to_dense();
        let wc = Mat::from_fn(n, n, |i, j| {
            let s: f64 = (0..n_b).map(|k| w_bu[(k, i)] * x[(k, j)]).sum();
            // Symmetrize: the exact Schur complement is symmetric, rounding is not.
            let s_t: f64 = (0..n_b).map(|k| w_bu[(k, j)] * x[(k, i)]).sum();
            0.5 * ((w[(i, j)] - s) + (w[(j, i)] - s_t))
        });
        let qc: Vec<f64> = (0..n)
            .map(|i| problem.q[i] - (0..n_b).map(|k| w_bu[(k, i)] * x[(k, n)]).sum::<f64>())
            .collect();
        Ok(LocalProblem::new(
            Matrix::Dense(wc),
            qc,
            problem.mu().to_vec(),
        )?)
    }

    /// `W_bb^-1 B` by Cholesky.
    fn solve_bb(&self, b: &Mat<f64>) -> Result<Mat<f64>, MylapilliError> {
        use faer::prelude::Solve;
        let n_b = self.num_rows();
        if n_b == 0 {
            return Ok(Mat::zeros(0, b.ncols()));
        }
        let w_bb = self.w_bb.to_dense();
        let sym = Mat::from_fn(n_b, n_b, |i, j| 0.5 * (w_bb[(i, j)] + w_bb[(j, i)]));
        let llt = sym
            .llt(Side::Lower)
            .map_err(|e| MylapilliError::SingularBilateral(format!("{e:?}")))?;
        let x = llt.solve(b);
        if (0..x.nrows()).any(|i| (0..x.ncols()).any(|j| !x[(i, j)].is_finite())) {
            return Err(MylapilliError::SingularBilateral(
                "the solve produced non-finite values".into(),
            ));
        }
        Ok(x)
    }
}

/// The combined system densified once, shared by both formulations.
#[derive(Debug, Clone)]
pub(crate) struct DenseSystem {
    /// `n_b`.
    pub n_b: usize,
    /// `n_u`.
    pub n_u: usize,
    /// `W_bb`.
    pub w_bb: Mat<f64>,
    /// `W_bu`.
    pub w_bu: Mat<f64>,
    /// `q_b`.
    pub q_b: Vec<f64>,
    /// `W`.
    pub w: Mat<f64>,
    /// `q`.
    pub q: Vec<f64>,
    /// `mu`.
    pub mu: Vec<f64>,
}

impl DenseSystem {
    /// Validates and densifies `problem` and the optional bilateral rows.
    pub fn new(
        problem: &LocalProblem,
        bilateral: Option<&Bilateral>,
    ) -> Result<DenseSystem, MylapilliError> {
        validate_problem(problem)?;
        let n_u = problem.num_contacts();
        let (w_bb, w_bu, q_b) = match bilateral {
            Some(b) => {
                b.validate_against(problem)?;
                (b.w_bb.to_dense(), b.w_bu.to_dense(), b.q_b.clone())
            }
            None => (Mat::zeros(0, 0), Mat::zeros(0, 3 * n_u), Vec::new()),
        };
        Ok(DenseSystem {
            n_b: q_b.len(),
            n_u,
            w_bb,
            w_bu,
            q_b,
            w: problem.w.to_dense(),
            q: problem.q.clone(),
            mu: problem.mu().to_vec(),
        })
    }

    /// Contact velocity `u = W_bu' p_b + W r + q`.
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(rows: usize, cols: usize, v: &[f64]) -> Matrix {
        Matrix::from_row_major("A", rows, cols, v).unwrap()
    }

    #[test]
    fn split_and_eliminate() {
        // n_b = 1, one contact: W_full = [[2, 1, 0, 0], [1, 3, 0, 0], [0, 0, 2, 0], [0, 0, 0, 2]].
        let w = dense(
            4,
            4,
            &[
                2., 1., 0., 0., 1., 3., 0., 0., 0., 0., 2., 0., 0., 0., 0., 2.,
            ],
        );
        let q = [1.0, -1.0, 0.5, 0.0];
        let (p, b) = Bilateral::split(&w, &q, vec![0.5], 1).unwrap();
        assert_eq!(b.num_rows(), 1);
        assert_eq!(p.q, vec![-1.0, 0.5, 0.0]);
        assert_eq!(p.w.to_dense()[(0, 0)], 3.0);
        assert_eq!(b.w_bu.to_dense()[(0, 0)], 1.0);
        let c = b.eliminate(&p).unwrap();
        // W_c[0][0] = 3 - 1 * 1 / 2 = 2.5; q_c[0] = -1 - 1 * 1 / 2 = -1.5.
        assert!((c.w.to_dense()[(0, 0)] - 2.5).abs() < 1e-15);
        assert!((c.q[0] + 1.5).abs() < 1e-15);
        assert_eq!(c.q[1], 0.5);
        // p_b for r = (1, 0, 0): -(1 * 1 + 1) / 2 = -1.
        assert!((b.impulse_for(&[1.0, 0.0, 0.0]).unwrap()[0] + 1.0).abs() < 1e-15);
    }

    #[test]
    fn bad_bilateral_data_are_errors() {
        let ok_bu = dense(1, 3, &[0.0, 0.0, 0.0]);
        assert!(Bilateral::new(dense(1, 2, &[1.0, 0.0]), ok_bu.clone(), vec![0.0]).is_err());
        assert!(Bilateral::new(dense(1, 1, &[1.0]), ok_bu.clone(), vec![0.0, 1.0]).is_err());
        assert!(matches!(
            Bilateral::new(dense(1, 1, &[1.0]), ok_bu.clone(), vec![f64::NAN]),
            Err(MylapilliError::Problem(ProblemError::NonFinite { .. }))
        ));
        let b = Bilateral::new(dense(1, 1, &[1.0]), ok_bu, vec![0.0]).unwrap();
        let two = LocalProblem::new(
            Matrix::Dense(Mat::identity(6, 6)),
            vec![0.0; 6],
            vec![0.1, 0.1],
        )
        .unwrap();
        assert!(b.validate_against(&two).is_err());
        let singular = Bilateral::new(
            dense(1, 1, &[0.0]),
            dense(1, 3, &[1.0, 0.0, 0.0]),
            vec![1.0],
        )
        .unwrap();
        assert!(matches!(
            singular.impulse_for(&[0.0; 3]),
            Err(MylapilliError::SingularBilateral(_))
        ));
    }
}
