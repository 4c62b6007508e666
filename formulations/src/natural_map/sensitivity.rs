//! Sensitivities of the natural map's answer to the problem's data, by the implicit function
//! theorem (issue 43's first part: contact space, the free velocity `q` and the Delassus
//! matrix `W`; the friction coefficients and the generalized data are to come).
//!
//! At an answer `r` of the natural map `F(r; q, W) = 0` ([`super`]: `F_b = r_b - P(r_b -
//! rho_b y_b(u))`, `u = W r + q`), a change `(dq, dW)` of the data moves the answer by `dr`
//! with
//!
//! `J dr = -B (dq + dW r)`, `du = W dr + dq + dW r`,
//!
//! `J = (I - D) + B W` the residual's generalized Jacobian and `B = blockdiag(rho_b D_b L_b)`
//! its derivative with respect to `u` (the module documentation of [`super`] has both). Where
//! `P` is differentiable at the answer (no contact on a regime boundary) and `J` is regular,
//! this is the derivative of the unique answer. The step `rho_b` cancels: `F` vanishes at the
//! answer for every `rho_b > 0`, so `D_b y_b = 0` there and `rho_b`'s dependence on `W` adds
//! nothing.
//!
//! Reverse mode: for cotangents `(r̄, ū)` of `(r, u)`, `λ = J^-T (r̄ + W ū)`,
//! `q̄ = ū - B' λ` and `W̄ = sym((ū - B' λ) r')` (the derivative with respect to a symmetric
//! `W`, `sym(G) = (G + G') / 2`; forward mode symmetrizes `dW` the same way), so that
//! `<r̄, dr> + <ū, du> = <q̄, dq> + <W̄, dW>`.
//!
//! `J` is factored once by a singular value decomposition. Where it is singular (rigid
//! impulses that are not unique: a box on a plane has twelve contact rows against six
//! velocities), the derivative is the minimum-norm element `J^+` gives, and
//! [`Sensitivity::non_unique`] says so.
//!
//! **Regimes.** The answer is differentiable where every block's `z_b = r_b - rho_b y_b` lies
//! off the kinks of its projection. [`Sensitivity::regimes`] names each block's regime from
//! `z_b` and flags it [`Regime::Degenerate`] within a margin of a kink (the rule: `10 h`
//! for a finite-difference step `h`); there `J` holds one element of the generalized Jacobian,
//! the one-sided derivative [`Constraint::project_jacobian`] documents.

use contactlab_core::constraint::Constraint;
use contactlab_core::metrics::natural_map_residual;
use contactlab_core::{elliptic_cone, CoreError, LocalProblem, Residual};
use faer::{Col, Mat};

use super::{block_point, NaturalMap};

/// Singular values of `J` below this times the largest are taken as zero.
const RANK_TOL: f64 = 1e-12;

/// Where a block's answer sits, read from `z_b = r_b - rho_b y_b` (`y_b` its paired velocity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// No impulse, the block opens (`z_b` strictly inside the polar of its set: a contact or
    /// limit separating).
    Separating,
    /// The impulse strictly inside its set, the velocity zero (a contact sticking, a limit
    /// pushing, a friction loss holding, an equality).
    Sticking,
    /// The impulse on its set's boundary, the velocity along the outward normal (a contact
    /// sliding, a friction loss at its bound).
    Sliding,
    /// Within the margin of a kink: the derivative is one element of the generalized Jacobian.
    Degenerate,
}

impl Regime {
    /// The regime's name, as reports and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Regime::Separating => "separating",
            Regime::Sticking => "sticking",
            Regime::Sliding => "sliding",
            Regime::Degenerate => "degenerate",
        }
    }
}

/// A block's regime from its `z`, with `margin` the distance to a kink under which it is
/// degenerate. On a cone the signed measures are `z_n - |D^-1 z_f|` (positive inside `K`) and
/// `-z_n - |D z_f|` (positive inside the polar cone); on a one-row set the distance of `z` to
/// its bounds.
fn regime(c: &Constraint, z: &[f64], margin: f64) -> Regime {
    let classify = |inside: f64, polar: f64| {
        if inside.abs() <= margin || polar.abs() <= margin {
            Regime::Degenerate
        } else if inside > 0.0 {
            Regime::Sticking
        } else if polar > 0.0 {
            Regime::Separating
        } else {
            Regime::Sliding
        }
    };
    match c {
        Constraint::Equality { .. } => Regime::Sticking,
        Constraint::Limit => classify(z[0], -z[0]),
        Constraint::Contact { mu } if mu.is_empty() => classify(z[0], -z[0]),
        Constraint::FrictionLoss { f_max } => {
            let inside = f_max - z[0].abs();
            // Past the bound it slides; the box has no polar region.
            classify(inside, -inside.abs() - 2.0 * margin)
        }
        Constraint::Contact { mu } => {
            let zf = &z[1..];
            // Friction on a row without a coefficient lies outside the cone at any normal.
            let scaled = elliptic_cone::scaled_friction(mu, zf).unwrap_or(f64::INFINITY);
            classify(z[0] - scaled, -z[0] - elliptic_cone::dual_norm(mu, zf))
        }
    }
}

/// The natural map's answer to a local problem, factored for its derivatives.
#[derive(Debug, Clone)]
pub struct Sensitivity {
    r: Vec<f64>,
    w: Mat<f64>,
    /// `B`, the residual's derivative with respect to `u`.
    b: Mat<f64>,
    /// `J = U S V'`: `U`, `V` and `S^+` (zero where a singular value was dropped).
    u: Mat<f64>,
    v: Mat<f64>,
    s_inv: Vec<f64>,
    /// The numerical rank of `J`.
    rank: usize,
    /// Each block's kind and `z_b = r_b - rho_b y_b` at the answer.
    constraints: Vec<Constraint>,
    z: Vec<Vec<f64>>,
}

impl Sensitivity {
    /// Factors the derivatives at `r`, which must answer `problem` to `tol` on the shared ruler
    /// ([`natural_map_residual`]): the derivative of a point that is not an answer means
    /// nothing.
    pub fn new(problem: &LocalProblem, r: &[f64], tol: f64) -> Result<Sensitivity, CoreError> {
        let n = problem.q.len();
        if r.len() != n {
            return Err(CoreError::BadOption(format!(
                "sensitivity: the answer has {} impulses, the problem {n} rows",
                r.len()
            )));
        }
        let residual = natural_map_residual(problem, r);
        if residual.is_nan() || residual > tol {
            return Err(CoreError::BadOption(format!(
                "sensitivity: the impulses do not answer the problem (natural-map residual \
                 {residual:e} above {tol:e}); differentiate a converged solve"
            )));
        }
        let map = NaturalMap::new(problem);
        let mut j = Mat::zeros(n, n);
        map.jacobian(r, j.as_mut());
        let svd = j
            .svd()
            .map_err(|e| CoreError::BadOption(format!("sensitivity: SVD of J failed: {e:?}")))?;
        let s = svd.S().column_vector();
        let smax = (0..n).fold(0.0f64, |m, i| m.max(s[i]));
        let s_inv: Vec<f64> = (0..n)
            .map(|i| {
                if s[i] > RANK_TOL * smax {
                    1.0 / s[i]
                } else {
                    0.0
                }
            })
            .collect();
        let rank = s_inv.iter().filter(|x| **x > 0.0).count();
        let u = problem.velocity(r);
        let (constraints, z) = problem
            .constraints
            .iter()
            .zip(&map.rho)
            .map(|((rows, c), &rho)| {
                let mut z = vec![0.0; rows.len()];
                block_point(c, rho, &r[rows.clone()], &u[rows], &mut z);
                (c.clone(), z)
            })
            .unzip();
        Ok(Sensitivity {
            r: r.to_vec(),
            w: map.w_dense().clone(),
            b: map.velocity_jacobian(r),
            u: svd.U().to_owned(),
            v: svd.V().to_owned(),
            s_inv,
            rank,
            constraints,
            z,
        })
    }

    /// Whether `J` is singular at the answer: the impulses are then not unique, and the
    /// derivatives are the minimum-norm element.
    pub fn non_unique(&self) -> bool {
        self.rank < self.r.len()
    }

    /// The numerical rank of `J` (singular values above `1e-12` times the largest).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Each block's regime at the answer, [`Regime::Degenerate`] within `margin` of a kink.
    pub fn regimes(&self, margin: f64) -> Vec<Regime> {
        self.z
            .iter()
            .zip(&self.constraints)
            .map(|(z, c)| regime(c, z, margin))
            .collect()
    }

    /// Forward mode: `(dr, du)` for a change `dq` of the free velocity and `dw` of `W`
    /// (row-major `n x n`, symmetrized; `None` for none).
    pub fn jvp(&self, dq: &[f64], dw: Option<&[f64]>) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        let n = self.r.len();
        self.check_len("dq", dq.len(), n)?;
        let dw = dw.map(|d| self.symmetric("dW", d)).transpose()?;
        // The velocity's direct change, dq + dW r.
        let mut dv = Col::from_fn(n, |i| dq[i]);
        if let Some(dw) = &dw {
            dv += dw * Col::from_fn(n, |i| self.r[i]);
        }
        let rhs = -(&self.b * &dv);
        let dr = &self.v * self.scaled(self.u.transpose() * rhs);
        let du = &self.w * &dr + &dv;
        Ok((to_vec(&dr), to_vec(&du)))
    }

    /// Reverse mode: `(q̄, W̄)` for cotangents `r_bar` of `r` and `u_bar` of `u`, `W̄`
    /// row-major and symmetric.
    pub fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        let n = self.r.len();
        self.check_len("r_bar", r_bar.len(), n)?;
        self.check_len("u_bar", u_bar.len(), n)?;
        let ub = Col::from_fn(n, |i| u_bar[i]);
        let rhs = Col::from_fn(n, |i| r_bar[i]) + &self.w * &ub;
        let lambda = &self.u * self.scaled(self.v.transpose() * rhs);
        let g = &ub - self.b.transpose() * &lambda;
        let q_bar = to_vec(&g);
        let mut w_bar = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w_bar[i * n + j] = 0.5 * (g[i] * self.r[j] + g[j] * self.r[i]);
            }
        }
        Ok((q_bar, w_bar))
    }

    /// `S^+ x`.
    fn scaled(&self, x: Col<f64>) -> Col<f64> {
        Col::from_fn(x.nrows(), |i| self.s_inv[i] * x[i])
    }

    fn check_len(&self, what: &str, got: usize, want: usize) -> Result<(), CoreError> {
        if got == want {
            Ok(())
        } else {
            Err(CoreError::BadOption(format!(
                "sensitivity: `{what}` has {got} entries, the problem {want} rows"
            )))
        }
    }

    /// `sym(d)` of a row-major `n x n` direction.
    fn symmetric(&self, what: &str, d: &[f64]) -> Result<Mat<f64>, CoreError> {
        let n = self.r.len();
        self.check_len(what, d.len(), n * n)?;
        Ok(Mat::from_fn(n, n, |i, j| {
            0.5 * (d[i * n + j] + d[j * n + i])
        }))
    }
}

fn to_vec(c: &Col<f64>) -> Vec<f64> {
    (0..c.nrows()).map(|i| c[i]).collect()
}

#[cfg(test)]
mod tests;
