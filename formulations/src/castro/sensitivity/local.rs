//! SAP's derivatives on a contact-space problem (Castro et al.), by the chain rule through the
//! generalized form SAP solves it in.
//!
//! SAP takes a contact-space problem `(W, q, mu)` as the generalized one of
//! [`GeneralizedProblem::from_local`]: the contact velocities are the unknowns, `A = W^-1`,
//! `J = I`, `b = 0`, `v* = q` (so `f = A v* = W^-1 q`). A change `(dq, dW, dmu)` of the
//! contact-space data is the generalized change
//!
//! `dA = -A dW A`, `df = dA q + A dq`, `dJ = 0`, `db = 0`, the same `dmu`,
//!
//! and reverse mode maps the generalized gradient back: `q̄ = A f̄`,
//! `W̄ = -A sym(M̄ + f̄ q') A`. `R` (eqs. 29-30, here from `W`'s own diagonal blocks) and `v^`
//! are frozen, as in [`SapSensitivity`]. The outputs are `r` and `u` (`v = u`).

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::{CoreError, LocalProblem, Matrix};
use faer::{Col, Mat};

use super::{GeneralizedDerivative, GeneralizedDirection, SapSensitivity};
use crate::castro::params::RegularizationParams;
use crate::natural_map::sensitivity::{
    check, to_vec, LocalDerivative, LocalDirection, LocalGradient,
};

/// SAP's answer to a contact-space problem, factored for its derivatives.
#[derive(Debug)]
pub struct SapLocalSensitivity {
    inner: SapSensitivity,
    /// `A = W^-1` (symmetric).
    a: Mat<f64>,
    q: Col<f64>,
}

impl SapLocalSensitivity {
    /// The derivatives at the unknowns `x` a SAP solve of `problem` ended at (the contact
    /// velocities), checked against eq. 26 to `tol` ([`SapSensitivity::at_unknowns`]). Needs
    /// `W` positive definite, as SAP's solve does.
    pub fn at_unknowns(
        problem: &LocalProblem,
        x: &[f64],
        params: &RegularizationParams,
        tol: f64,
    ) -> Result<SapLocalSensitivity, CoreError> {
        let g = GeneralizedProblem::from_local(problem)?;
        let inner = SapSensitivity::at_unknowns(&g, x, params, tol)?;
        Ok(SapLocalSensitivity {
            inner,
            a: Matrix::Sparse(g.a.clone()).to_dense(),
            q: Col::from_fn(problem.q.len(), |i| problem.q[i]),
        })
    }

    /// The generalized derivatives this chain goes through (regions, degenerate contacts).
    pub fn generalized(&self) -> &SapSensitivity {
        &self.inner
    }

    /// The problem's rows.
    pub fn rows(&self) -> usize {
        self.q.nrows()
    }

    /// Forward mode: `(dr, du)` for a change of the data (fields left `None` do not move; `W`'s
    /// change row-major `n x n`, symmetrized).
    pub fn jvp(&self, d: &LocalDirection<'_>) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        let n = self.rows();
        let mut df = Col::zeros(n);
        if let Some(dq) = d.q {
            check("dq", dq.len(), n, "rows")?;
            df += &self.a * Col::from_fn(n, |i| dq[i]);
        }
        let mut da = None;
        if let Some(dw) = d.w {
            check("dW", dw.len(), n * n, "rows squared")?;
            let dw = Mat::from_fn(n, n, |i, j| 0.5 * (dw[i * n + j] + dw[j * n + i]));
            let dm = -(&self.a * dw * &self.a);
            df += &dm * &self.q;
            da = Some((0..n * n).map(|k| dm[(k / n, k % n)]).collect::<Vec<f64>>());
        }
        let df = to_vec(&df);
        let t = self.inner.jvp(&GeneralizedDirection {
            f: Some(&df),
            w: None,
            m: da.as_deref(),
            h: None,
            mu: d.mu,
            phi0: None,
            ..Default::default()
        })?;
        Ok((t.r, t.u))
    }

    /// Reverse mode: the gradient of `<r̄, r> + <ū, u>` with respect to `q`, `W` and `mu`, the
    /// adjoint of [`SapLocalSensitivity::jvp`].
    pub fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<LocalGradient, CoreError> {
        let n = self.rows();
        let g = self.inner.vjp(r_bar, u_bar, &vec![0.0; n])?;
        let f_bar = Col::from_fn(n, |i| g.f[i]);
        let x = Mat::from_fn(n, n, |i, j| {
            let s = |i: usize, j: usize| g.m[i * n + j] + f_bar[i] * self.q[j];
            0.5 * (s(i, j) + s(j, i))
        });
        let w_bar = -(&self.a * x * &self.a);
        Ok(LocalGradient {
            q: to_vec(&(&self.a * &f_bar)),
            w: (0..n * n).map(|k| w_bar[(k / n, k % n)]).collect(),
            mu: g.mu,
        })
    }
}

impl LocalDerivative for SapLocalSensitivity {
    fn jvp(&self, d: &LocalDirection<'_>) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        SapLocalSensitivity::jvp(self, d)
    }

    fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<LocalGradient, CoreError> {
        SapLocalSensitivity::vjp(self, r_bar, u_bar)
    }
}
