//! The derivatives of a generalized problem's answer to its data `f`, `w`, `M`, `H` and `mu`,
//! by the chain rule through the contact-space form the natural map solves.
//!
//! A generalized problem ([`contactlab_core::GlobalProblem`]'s fields: `M` the mass matrix, `H = J'`, `f` the
//! free impulse, `w` the rows' velocity offset) gives the contact-space data
//! `W = H' M^-1 H`, `q = H' M^-1 f + w` (less the rows' targets, which are constant), and the
//! answer's generalized velocity is `v = M^-1 (H r + f)`. With `X = M^-1 H` and
//! `e = df + dH r - dM v`, a change of the data moves the velocity's direct change by
//!
//! `dq + dW r = dH' v + X' e + dw`,
//!
//! which [`Sensitivity`] turns into `(dr, du)`, and `dv = X dr + M^-1 e`. Reverse mode, for
//! cotangents `(r̄, ū, v̄)`: `z = M^-1 v̄`; the contact-space adjoint of `(r̄ + H' z, ū)`
//! gives `g` (the gradient of `dq + dW r`) and `mū`; with `k = X g + z`,
//!
//! `f̄ = k`, `w̄ = g`, `H̄ = v g' + k r'`, `M̄ = -sym(k v')`.
//!
//! Derivatives with respect to the symmetric `M` are symmetrized as `W`'s are.

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::{Cholesky, CoreError, Matrix};
use faer::{Col, Mat};

use super::{check, to_vec, Sensitivity};

/// A change of a generalized problem's data (forward mode); a field left `None` does not move.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneralizedDirection<'a> {
    /// `df`, one entry per velocity.
    pub f: Option<&'a [f64]>,
    /// `dw`, one entry per row.
    pub w: Option<&'a [f64]>,
    /// `dM`, row-major `nv x nv` (symmetrized).
    pub m: Option<&'a [f64]>,
    /// `dH`, row-major `nv x m`.
    pub h: Option<&'a [f64]>,
    /// `dmu`, one entry per block ([`super`] says what moves).
    pub mu: Option<&'a [f64]>,
    /// `dphi0`, one entry per row: the position errors SAP's bias reads on its contacts' normal
    /// rows (the natural map's answer does not depend on them).
    pub phi0: Option<&'a [f64]>,
    /// `dk`, one entry per block: the contacts' normal stiffness, which SAP's eq. 29 reads where
    /// its compliant term wins (the rigid models do not read it).
    pub stiffness: Option<&'a [f64]>,
    /// `dtau_d`, one entry per block: the contacts' dissipation time scale (SAP's eq. 29 and
    /// bias).
    pub tau_d: Option<&'a [f64]>,
    /// `ddt`, the time step (SAP's eq. 29 and bias). The problem's `f` is held: a simulator
    /// whose free velocity moves with `dt` chains that through `f`.
    pub dt: Option<f64>,
}

impl GeneralizedDirection<'_> {
    /// Refuses compliance changes of the wrong size for `blocks` blocks, or a non-finite `ddt`.
    pub fn check_compliance(&self, blocks: usize) -> Result<(), CoreError> {
        if let Some(dk) = self.stiffness {
            check("dstiffness", dk.len(), blocks, "blocks")?;
        }
        if let Some(dtau) = self.tau_d {
            check("dtau_d", dtau.len(), blocks, "blocks")?;
        }
        match self.dt {
            Some(ddt) if !ddt.is_finite() => Err(CoreError::BadOption(format!(
                "sensitivity: `ddt` is {ddt}, not a finite number"
            ))),
            _ => Ok(()),
        }
    }

    /// `(e, c)` at an answer with impulses `r` and velocities `v`: `e = df + dH r - dM v`, the
    /// change of the momentum balance's right side `f + H r - M v`, and `c = dH' v + dw`, the
    /// contact velocities' direct change (`dM` symmetrized; sizes checked).
    pub fn changes(&self, r: &Col<f64>, v: &Col<f64>) -> Result<(Col<f64>, Col<f64>), CoreError> {
        let (nv, m) = (v.nrows(), r.nrows());
        if let Some(dphi0) = self.phi0 {
            check("dphi0", dphi0.len(), m, "rows")?;
        }
        let (mut e, mut c) = (Col::zeros(nv), Col::zeros(m));
        if let Some(df) = self.f {
            check("df", df.len(), nv, "velocities")?;
            e += Col::from_fn(nv, |i| df[i]);
        }
        if let Some(dh) = self.h {
            check("dH", dh.len(), nv * m, "entries of H (nv x m)")?;
            let dh = Mat::from_fn(nv, m, |i, j| dh[i * m + j]);
            e += &dh * r;
            c += dh.transpose() * v;
        }
        if let Some(dm) = self.m {
            check("dM", dm.len(), nv * nv, "entries of M (nv x nv)")?;
            let dm = Mat::from_fn(nv, nv, |i, j| 0.5 * (dm[i * nv + j] + dm[j * nv + i]));
            e -= &dm * v;
        }
        if let Some(dw) = self.w {
            check("dw", dw.len(), m, "rows")?;
            c += Col::from_fn(m, |i| dw[i]);
        }
        Ok((e, c))
    }
}

/// The gradient of a scalar of the answer with respect to a generalized problem's data.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralizedGradient {
    /// `f̄`, one entry per velocity.
    pub f: Vec<f64>,
    /// `w̄`, one entry per row.
    pub w: Vec<f64>,
    /// `M̄`, row-major `nv x nv`, symmetric.
    pub m: Vec<f64>,
    /// `H̄`, row-major `nv x m`.
    pub h: Vec<f64>,
    /// `mū`, one entry per block.
    pub mu: Vec<f64>,
    /// `phi0̄`, one entry per row (zero where the answer does not read the row's position
    /// error: every row for the natural map, the frictional rows for SAP).
    pub phi0: Vec<f64>,
    /// `k̄`, one entry per block (zero for the rigid models and where SAP's near-rigid term
    /// wins).
    pub stiffness: Vec<f64>,
    /// `tau_d̄`, one entry per block.
    pub tau_d: Vec<f64>,
    /// `dt̄`.
    pub dt: f64,
}

impl GeneralizedGradient {
    /// The gradient adjoint to [`GeneralizedDirection::changes`]: for `k` the gradient of the
    /// scalar with respect to `e` and `g` with respect to `c`, at impulses `r` and velocities
    /// `v`, `f̄ = k`, `w̄ = g`, `H̄ = v g' + k r'` and `M̄ = -sym(k v')`; `mū` as given.
    pub fn of_changes(
        k: &Col<f64>,
        g: &Col<f64>,
        r: &Col<f64>,
        v: &Col<f64>,
        mu: Vec<f64>,
    ) -> GeneralizedGradient {
        let (nv, m) = (v.nrows(), r.nrows());
        let h = (0..nv * m)
            .map(|idx| {
                let (i, j) = (idx / m, idx % m);
                v[i] * g[j] + k[i] * r[j]
            })
            .collect();
        let mbar = (0..nv * nv)
            .map(|idx| {
                let (i, j) = (idx / nv, idx % nv);
                -0.5 * (k[i] * v[j] + k[j] * v[i])
            })
            .collect();
        let blocks = mu.len();
        GeneralizedGradient {
            f: to_vec(k),
            w: to_vec(g),
            m: mbar,
            h,
            mu,
            phi0: vec![0.0; m],
            stiffness: vec![0.0; blocks],
            tau_d: vec![0.0; blocks],
            dt: 0.0,
        }
    }
}

/// A forward-mode answer: the changes of the impulses, the contact velocities and the
/// generalized velocities.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralizedTangent {
    /// `dr`.
    pub r: Vec<f64>,
    /// `du`.
    pub u: Vec<f64>,
    /// `dv`.
    pub v: Vec<f64>,
}

impl GeneralizedTangent {
    /// The tangent of the columns `(dr, du, dv)`.
    pub fn of(dr: &Col<f64>, du: &Col<f64>, dv: &Col<f64>) -> GeneralizedTangent {
        GeneralizedTangent {
            r: to_vec(dr),
            u: to_vec(du),
            v: to_vec(dv),
        }
    }
}

/// The derivatives of an answer to a generalized problem, whichever model it answers (the
/// natural map's by the chain rule, [`GeneralizedSensitivity`]; SAP's through its Hessian):
/// what the lab asks of either.
pub trait GeneralizedDerivative {
    /// Forward mode: `(dr, du, dv)` for a change of the data.
    fn jvp(&self, d: &GeneralizedDirection<'_>) -> Result<GeneralizedTangent, CoreError>;
    /// Reverse mode: the gradient of `<r̄, r> + <ū, u> + <v̄, v>` with respect to `f`, `w`,
    /// `M`, `H` and `mu`.
    fn vjp(
        &self,
        r_bar: &[f64],
        u_bar: &[f64],
        v_bar: &[f64],
    ) -> Result<GeneralizedGradient, CoreError>;
}

impl GeneralizedDerivative for GeneralizedSensitivity {
    /// Forward mode: `(dr, du, dv)` for a change of the data.
    fn jvp(&self, d: &GeneralizedDirection<'_>) -> Result<GeneralizedTangent, CoreError> {
        let m = self.x.ncols();
        let r = Col::from_fn(m, |i| self.local.r()[i]);
        // The direct change of the contact velocity: c + X' e = dH' v + X' e + dw.
        let (e, c) = d.changes(&r, &self.v)?;
        // The rigid model reads no stiffness, dissipation or time step: their changes move
        // nothing (sizes still checked).
        d.check_compliance(self.local.blocks())?;
        let delta = c + self.x.transpose() * &e;
        let entry = |i: usize, j: usize| self.w_entry_change(d, i, j);
        let (dr, du) = self.local.answer_change(&delta, d.mu, &entry)?;
        let dv = &self.x * &dr + self.m_solve(e);
        Ok(GeneralizedTangent::of(&dr, &du, &dv))
    }

    /// Reverse mode: the gradient of `<r̄, r> + <ū, u> + <v̄, v>` with respect to `f`, `w`,
    /// `M`, `H` and `mu`.
    fn vjp(
        &self,
        r_bar: &[f64],
        u_bar: &[f64],
        v_bar: &[f64],
    ) -> Result<GeneralizedGradient, CoreError> {
        let (nv, m) = (self.x.nrows(), self.x.ncols());
        check_cotangents((r_bar, u_bar, v_bar), nv, m)?;
        let z = self.m_solve(Col::from_fn(nv, |i| v_bar[i]));
        let rb = Col::from_fn(m, |i| r_bar[i]) + self.h.transpose() * &z;
        let (g, mu, direct) = self.local.adjoint(rb, &Col::from_fn(m, |i| u_bar[i]));
        let k = &self.x * &g + &z;
        let r = Col::from_fn(m, |i| self.local.r()[i]);
        let mut gradient = GeneralizedGradient::of_changes(&k, &g, &r, &self.v, to_vec(&mu));
        self.add_direct(&mut gradient, &direct);
        Ok(gradient)
    }
}

/// The contact-space sensitivities of a generalized problem's answer with the chain rule's
/// factors: `M`'s Cholesky factor, `H`, `X = M^-1 H` and `v`.
#[derive(Debug)]
pub struct GeneralizedSensitivity {
    local: Sensitivity,
    llt: Cholesky,
    h: Mat<f64>,
    x: Mat<f64>,
    v: Col<f64>,
}

impl GeneralizedSensitivity {
    /// The chain rule's factors for `problem`, whose contact-space form `local` differentiates
    /// (dense: `X` is `nv x m`).
    pub fn new(
        problem: &GeneralizedProblem,
        local: Sensitivity,
    ) -> Result<GeneralizedSensitivity, CoreError> {
        let (nv, m) = (problem.num_dofs(), problem.num_rows());
        if local.rows() != m {
            return Err(CoreError::BadOption(format!(
                "sensitivity: the contact-space answer has {} rows, the generalized problem {m}",
                local.rows()
            )));
        }
        // The symmetric part, as the problem's own factorization takes it: a file's `M` may be
        // asymmetric in its last digits, and on an ill-conditioned `M` one triangle alone
        // differs from it at first order (FCLib's CubeH8: asymmetry 1.5e-7, condition 1e7).
        // Sparse, as the problem factors it for `W`: `M` is block diagonal by tree.
        let llt = Cholesky::new("M", &Matrix::Sparse(problem.a.clone()))?;
        let j = Matrix::Sparse(problem.j.clone()).to_dense();
        let h = j.transpose().to_owned();
        let mut x = h.clone();
        llt.solve_in_place(x.as_mut());
        // v = M^-1 f + X r, with M^-1 f = v*.
        let r = Col::from_fn(m, |i| local.r()[i]);
        let v = Col::from_fn(nv, |i| problem.v_star[i]) + &x * &r;
        Ok(GeneralizedSensitivity {
            local,
            llt,
            h,
            x,
            v,
        })
    }

    /// The change of `W_ij = H_i' M^-1 H_j` (`H_i` the `i`-th column of `H`, `X = M^-1 H`):
    /// `dH_i' X_j + X_i' dH_j - X_i' dM X_j` (`dM` symmetrized), for the entries a residual
    /// reads directly (sizes were checked by [`GeneralizedDirection::changes`]).
    fn w_entry_change(&self, d: &GeneralizedDirection<'_>, i: usize, j: usize) -> f64 {
        let (nv, m) = (self.x.nrows(), self.x.ncols());
        let mut change = 0.0;
        if let Some(dh) = d.h {
            change += (0..nv)
                .map(|k| dh[k * m + i] * self.x[(k, j)] + self.x[(k, i)] * dh[k * m + j])
                .sum::<f64>();
        }
        if let Some(dm) = d.m {
            for a in 0..nv {
                for b in 0..nv {
                    let sym = 0.5 * (dm[a * nv + b] + dm[b * nv + a]);
                    change -= self.x[(a, i)] * sym * self.x[(b, j)];
                }
            }
        }
        change
    }

    /// Adds the gradient of the entries of `W` a residual reads directly to `H̄` and `M̄`, by
    /// the adjoint of [`GeneralizedSensitivity::w_entry_change`]: per `(i, j, w̄)`,
    /// `H̄_i += w̄ X_j`, `H̄_j += w̄ X_i`, `M̄ -= w̄ sym(X_i X_j')`.
    fn add_direct(&self, gradient: &mut GeneralizedGradient, direct: &[(usize, usize, f64)]) {
        let (nv, m) = (self.x.nrows(), self.x.ncols());
        for &(i, j, bar) in direct {
            for k in 0..nv {
                gradient.h[k * m + i] += bar * self.x[(k, j)];
                gradient.h[k * m + j] += bar * self.x[(k, i)];
            }
            for a in 0..nv {
                for b in 0..nv {
                    let xx = self.x[(a, i)] * self.x[(b, j)] + self.x[(b, i)] * self.x[(a, j)];
                    gradient.m[a * nv + b] -= 0.5 * bar * xx;
                }
            }
        }
    }

    /// `M^-1 x`.
    fn m_solve(&self, x: Col<f64>) -> Col<f64> {
        let mut x = x;
        self.llt.solve_in_place(x.as_mat_mut());
        x
    }

    /// The contact-space sensitivities (regimes, uniqueness).
    pub fn local(&self) -> &Sensitivity {
        &self.local
    }

    /// The generalized velocities of the answer.
    pub fn velocity(&self) -> Vec<f64> {
        to_vec(&self.v)
    }
}

/// Refuses cotangents `(r̄, ū, v̄)` of the wrong sizes for `nv` velocities and `m` rows.
pub(crate) fn check_cotangents(
    (r_bar, u_bar, v_bar): (&[f64], &[f64], &[f64]),
    nv: usize,
    m: usize,
) -> Result<(), CoreError> {
    check("r_bar", r_bar.len(), m, "rows")?;
    check("u_bar", u_bar.len(), m, "rows")?;
    check("v_bar", v_bar.len(), nv, "velocities")
}

#[cfg(test)]
mod tests;
