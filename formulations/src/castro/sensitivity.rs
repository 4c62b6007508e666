//! The derivatives of SAP's answer to its problem's data (Castro et al.), by the implicit
//! function theorem on SAP's own optimality condition, as Drake differentiates SAP.
//!
//! **`R`'s dependence on `M` and `H` is held.** SAP's regularisation `R = diag(R_n, R_t, R_t)`
//! comes from the problem through eqs. 29-30, by the Delassus estimate
//! `w_i = |J_i A^-1 J_i'|_F / 3`, so it moves with `M` and `H`. The derivative here holds that
//! estimate at its value for the unperturbed problem: it is the derivative of eq. 24's answer
//! with `w_i` fixed, not of the whole pipeline that recomputes it (on the tests' problems the two
//! differ by about `1e-3` relative along `M` and `H`). [`frozen_cost`] builds a perturbed
//! problem's cost under the same choice, and finite differences along `M` and `H` must use it
//! to be comparable. What `R` and the bias `v^_n = -phi0 / (dt + tau_d)` (section V-A) read
//! besides, the contacts' position errors `phi0`, stiffness `k` and dissipation time scale
//! `tau_d` and the time step `dt`, is differentiated ([`Compliance`]): along those the
//! derivative is the whole pipeline's.
//!
//! Notation: the generalized data as [`GeneralizedDirection`] names them, `M = A`, `H = J'`
//! (`nv x m`, `m = 3 nc`, normal first per contact), `f = A v*`, `w = b` (the rows' offset)
//! and per contact `mu`. At SAP's answer `v` the gradient of eq. 24 vanishes:
//!
//! `M v - f - H gamma = 0`, `gamma = P_F(y)` (eq. 27), `y = -R^-1 (u - v^)`, `u = H' v + w`,
//!
//! `u` the contact velocities as SAP's plugin reports them (`J v + b`; the rigid targets are
//! not SAP's, and being constant they do not move). With `K = M + H G H'` the cost's Hessian
//! (section IV-A; the paper's `H`), `G = -dgamma/du` ([`projection`](super::projection)) and
//! `gamma_mu` the projection's derivative with respect to `mu` at fixed `y` (one 3-vector per
//! contact, [`dgamma_dmu`]), a change of the data moves the answer by, with `c = dH' v + dw`,
//!
//! `K dv = df + dH gamma - dM v + H (gamma_mu dmu - G c)`, `du = H' dv + c`,
//! `dr = gamma_mu dmu - G du`.
//!
//! The position errors `phi0` move the bias, `dv^_n = -dphi0 / (dt + tau_d)` on each contact's
//! normal row; the projection reads `u - v^`, so `c` above becomes `c - dv^` wherever it enters
//! `gamma` (not in `du`), and reverse mode adds `phi0̄_n = -(G (r̄ + H' z))_n / (dt + tau_d)` (`G`
//! symmetric). The compliance data move `v^` the same way and `R_n` by `dR_n`, which adds
//! `dgamma/dR_n dR_n` to `gamma`'s direct change beside `gamma_mu dmu`; reverse mode reads
//! `R̄_n = dgamma/dR_n . (r̄ + H' z)` per contact.
//!
//! Reverse mode, for cotangents `(r̄, ū, v̄)`: `z = K^-1 (H (ū - G r̄) + v̄)`,
//! `g = ū - G (r̄ + H' z)`, and
//!
//! `f̄ = z`, `w̄ = g`, `H̄ = z gamma' + v g'`, `M̄ = -sym(z v')`, `mū_i = gamma_mu,i . (r̄ + H' z)_i`.
//!
//! The impulses are unique (the regularisation makes eq. 24 strongly convex: `M` is positive
//! definite and `G` semidefinite), so `K` is positive definite and factored once, by SAP's own
//! path at the answer (the tree-block or sparse factor of its Newton iterations, on the trees a
//! contact touches; `M`'s factor on the others): the first derivative costs about one Newton
//! iteration more than the solve, as Drake's reuse of its last factorization does. The derivative is that of each contact's region's piece of `P_F`; on a region
//! boundary it is the one-sided derivative of the extension [`projection`](super::projection)
//! documents, and [`SapSensitivity::regions`] says where each contact is. Every velocity takes
//! part, the trees no contact touches too (there `v = v*`, and `dv = M^-1 (df - dM v)`).
//!
//! Only Coulomb contacts (SAP's sparse path); a problem with other constraint kinds (the
//! constraint-agnostic cost of [`blocks`](super::blocks)) is refused by kind.

use contactlab_core::generalized::{coulomb_only, sparse_mul_add, GeneralizedProblem};
use contactlab_core::{Cholesky, CoreError, Matrix};
use faer::{Col, Mat};
use nalgebra::{Matrix3, Vector3};

use super::cost::{diag_inv_sqrt, eq26_optimality, FactoredHessian, SapCost};
use super::params::{bias, regularization, Regularization, RegularizationParams};
use super::projection::{ContactRegularization, SapRegion};
use crate::natural_map::sensitivity::generalized::check_cotangents;
pub use crate::natural_map::sensitivity::generalized::{
    GeneralizedDerivative, GeneralizedDirection, GeneralizedGradient, GeneralizedTangent,
};
use crate::natural_map::sensitivity::{check, to_vec};

/// SAP's answer to a Coulomb problem, with its Hessian factored for the derivatives.
#[derive(Debug)]
pub struct SapSensitivity {
    /// `K = M + H G H'`, factored.
    llt: HessianSolve,
    /// `H = J'` (`nv x m`).
    h: Mat<f64>,
    v: Col<f64>,
    gamma: Col<f64>,
    /// `u = J v + b`.
    u: Vec<f64>,
    /// Per contact, `G_i` and `dgamma_i/dmu_i` at the answer.
    g: Vec<Matrix3<f64>>,
    gamma_mu: Vec<Vector3<f64>>,
    regions: Vec<SapRegion>,
    /// Per contact, `y`'s distance to its regions' nearest boundary.
    boundary: Vec<f64>,
    /// Per contact, `dv^_n / dphi0 = -1 / (dt + tau_d)` (section V-A's bias), `None` without a
    /// time step.
    bias_slope: Vec<Option<f64>>,
    /// Per contact, how `R_n` and `v^_n` move with its stiffness, dissipation and the time step,
    /// and `gamma`'s derivative with respect to `R_n`.
    compliance: Vec<Compliance>,
}

/// One contact's regularisation and bias as functions of its stiffness `k`, dissipation time
/// scale `tau_d` and the time step `dt` (eq. 29, section V-A), and `dgamma/dR_n` at fixed
/// `u - v^` (eq. 27's piece).
///
/// Where eq. 29's compliant term `R_n = 1 / (dt k (dt + tau_d))` wins, `dR_n/dk = -R_n / k`,
/// `dR_n/dtau_d = -R_n / (dt + tau_d)` and `dR_n/ddt = -R_n (1 / dt + 1 / (dt + tau_d))`; where
/// the near-rigid term wins (a tie included: the one-sided derivative of the side the answer
/// was computed on) `R_n` reads none of them. The bias `v^_n = -phi0 / (dt + tau_d)` moves by
/// `-v^_n / (dt + tau_d)` per unit of `tau_d` or of `dt`.
///
/// With `c = u - v^`: in stiction `gamma = -R^-1 c`, so `dgamma/dR_n = (-gamma_n / R_n, 0, 0)`;
/// sliding, `gamma_n = (-c_n + mu |c_t|) / (R_n + mu^2 R_t)` with `gamma_t` along the fixed
/// direction `-c_t / |c_t|` at `mu gamma_n`, so `dgamma/dR_n = -gamma / (R_n + mu^2 R_t)`; with
/// no contact `gamma = 0`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Compliance {
    rn_k: f64,
    rn_tau: f64,
    rn_dt: f64,
    vhat_time: f64,
    gamma_rn: Vector3<f64>,
}

impl Compliance {
    /// Contact `i`'s slopes from the problem, its regularisation and its answer.
    fn of(
        problem: &GeneralizedProblem,
        reg: &Regularization,
        i: usize,
        (cr, region, gamma): (&ContactRegularization, SapRegion, Vector3<f64>),
    ) -> Compliance {
        let c = &problem.contacts[i];
        let mut out = Compliance::default();
        if let Some(dt) = problem.dt {
            let span = dt + c.dissipation;
            if !reg.near_rigid[i] && c.stiffness.is_finite() {
                out.rn_k = -cr.rn / c.stiffness;
                out.rn_tau = -cr.rn / span;
                out.rn_dt = -cr.rn * (1.0 / dt + 1.0 / span);
            }
            out.vhat_time = -reg.v_hat[i] / span;
        }
        out.gamma_rn = match region {
            SapRegion::NoContact => Vector3::zeros(),
            SapRegion::Stiction => Vector3::new(-gamma[0] / cr.rn, 0.0, 0.0),
            SapRegion::Sliding => -gamma / (cr.rn + cr.mu * cr.mu * cr.rt),
        };
        out
    }
}

impl SapSensitivity {
    /// The derivatives at `v`, SAP's answer to `problem` with eqs. 29-30's regularisation for
    /// `params`, to eq. 26 with `tol` ([`SapSensitivity::with_regularization`]).
    pub fn new(
        problem: &GeneralizedProblem,
        v: &[f64],
        params: &RegularizationParams,
        tol: f64,
    ) -> Result<SapSensitivity, CoreError> {
        coulomb_only(&problem.constraints(), "SAP's sensitivity")?;
        let reg = regularization(problem, params)?;
        SapSensitivity::with_regularization(problem, v, &reg, tol)
    }

    /// [`SapSensitivity::new`] at the unknowns `x` a SAP solve of `problem` ended at (its
    /// cost's layout: the velocities of the trees a contact touches), so that eq. 26 is checked
    /// where the solve checked it.
    pub fn at_unknowns(
        problem: &GeneralizedProblem,
        x: &[f64],
        params: &RegularizationParams,
        tol: f64,
    ) -> Result<SapSensitivity, CoreError> {
        coulomb_only(&problem.constraints(), "SAP's sensitivity")?;
        let reg = regularization(problem, params)?;
        let cost = frozen_cost(problem, &reg);
        let v = cost.full_velocities(x);
        SapSensitivity::with_cost(problem, &v, &reg, cost, tol)
    }

    /// [`SapSensitivity::new`] with `R` and `v^` given (eqs. 29-30's, frozen; `mu` the
    /// problem's): `v` must meet eq. 26, `|D grad| <= tol + tol max(|D p|, |D j_c|)`, over all
    /// velocities (the driver's test with `stop_tol = rel_tol = tol`: it accepts an answer
    /// solved to `tol` by either, absolute as the spec's default or relative).
    pub fn with_regularization(
        problem: &GeneralizedProblem,
        v: &[f64],
        reg: &Regularization,
        tol: f64,
    ) -> Result<SapSensitivity, CoreError> {
        coulomb_only(&problem.constraints(), "SAP's sensitivity")?;
        let nc = problem.num_contacts();
        check("regularization", reg.contacts.len(), nc, "contacts")?;
        check("v_hat", reg.v_hat.len(), nc, "contacts")?;
        SapSensitivity::with_cost(problem, v, reg, frozen_cost(problem, reg), tol)
    }

    /// [`SapSensitivity::with_regularization`] with the frozen cost already built (once per
    /// answer: building it analyses the Hessian's block structure).
    fn with_cost(
        problem: &GeneralizedProblem,
        v: &[f64],
        reg: &Regularization,
        cost: SapCost,
        tol: f64,
    ) -> Result<SapSensitivity, CoreError> {
        let (nv, nc) = (problem.num_dofs(), problem.num_contacts());
        check("v", v.len(), nv, "velocities")?;
        let x = cost.restrict(v);
        let gamma = Col::from_fn(3 * nc, {
            let g = cost.impulses(&x);
            move |k| g[k]
        });
        let h = Matrix::Sparse(problem.j.clone())
            .to_dense()
            .transpose()
            .to_owned();
        let v = Col::from_fn(nv, |k| v[k]);
        optimal(problem, &h, &v, &gamma, tol)?;
        let u = cost.contact_velocities(&x);
        let Linearised {
            g,
            gamma_mu,
            regions,
            boundary,
        } = linearised(cost.regularizations(), &reg.v_hat, &u);
        let llt = HessianSolve::new(problem, &cost, &x)?;
        // The bias is linear in `phi0`: its value at `phi0 = 1` is the slope.
        let bias_slope = problem
            .contacts
            .iter()
            .map(|c| bias(1.0, problem.dt, c.dissipation).ok())
            .collect();
        let compliance = (0..nc)
            .map(|i| {
                let gi = Vector3::new(gamma[3 * i], gamma[3 * i + 1], gamma[3 * i + 2]);
                let cr = &cost.regularizations()[i];
                Compliance::of(problem, reg, i, (cr, regions[i], gi))
            })
            .collect();
        Ok(SapSensitivity {
            llt,
            h,
            v,
            gamma,
            u,
            g,
            gamma_mu,
            regions,
            boundary,
            bias_slope,
            compliance,
        })
    }

    /// The generalized velocities `v` of the answer (eq. 24's minimiser).
    pub fn velocity(&self) -> Vec<f64> {
        to_vec(&self.v)
    }

    /// The impulses `gamma = P_F(y(v))` (eq. 27), normal first.
    pub fn impulses(&self) -> Vec<f64> {
        to_vec(&self.gamma)
    }

    /// The contact velocities `u = J v + b` (eq. 18's `v_c`), as SAP's plugin reports them.
    pub fn contact_velocity(&self) -> Vec<f64> {
        self.u.clone()
    }

    /// Each contact's region at the answer (appendix C), whose piece is differentiated.
    pub fn regions(&self) -> &[SapRegion] {
        &self.regions
    }

    /// Per contact, whether `y` lies within `margin` of a region boundary (impulse units, as
    /// `y = -R^-1 (u - v^)` is): there the derivative is the one-sided one of the region the
    /// answer sits in, and a change of the data by about `margin` may cross into another.
    pub fn degenerate(&self, margin: f64) -> Vec<bool> {
        self.boundary.iter().map(|d| *d <= margin).collect()
    }

    /// `K^-1 x`.
    fn k_solve(&self, x: Col<f64>) -> Col<f64> {
        self.llt.solve(x)
    }

    /// `G x`, block by block (appendix D's `G = -dgamma/dv_c`); `transpose`: `G' x`.
    fn g_times(&self, x: &Col<f64>, transpose: bool) -> Col<f64> {
        Col::from_fn(x.nrows(), |r| {
            let (i, p) = (r / 3, r % 3);
            (0..3)
                .map(|q| {
                    let gpq = if transpose {
                        self.g[i][(q, p)]
                    } else {
                        self.g[i][(p, q)]
                    };
                    gpq * x[3 * i + q]
                })
                .sum()
        })
    }
}

impl GeneralizedDerivative for SapSensitivity {
    /// Forward mode: `(dr, du, dv)` for a change of the data, from `K dv = -d(grad l_p)`
    /// (eq. 24's gradient, appendix D-C) with `R` and `v^` frozen.
    fn jvp(&self, d: &GeneralizedDirection<'_>) -> Result<GeneralizedTangent, CoreError> {
        let m = self.h.ncols();
        let (mut e, c) = d.changes(&self.gamma, &self.v)?;
        let mut dr = Col::zeros(m);
        if let Some(dmu) = d.mu {
            check("dmu", dmu.len(), m / 3, "contacts")?;
            dr = Col::from_fn(m, |r| self.gamma_mu[r / 3][r % 3] * dmu[r / 3]);
        }
        // `R_n` moves with the compliance data: gamma's direct change at fixed `u - v^`.
        let drn = self.regularization_change(d)?;
        for (i, (slopes, drn)) in self.compliance.iter().zip(&drn).enumerate() {
            for p in 0..3 {
                dr[3 * i + p] += slopes.gamma_rn[p] * drn;
            }
        }
        // The projection reads `u - v^`: its argument's direct change is `c - dv^`.
        let moved = &c - self.bias_change(d)?;
        e += &self.h * (&dr - self.g_times(&moved, false));
        let dv = self.k_solve(e);
        let du = self.h.transpose() * &dv + &c;
        dr -= self.g_times(&(self.h.transpose() * &dv + &moved), false);
        Ok(GeneralizedTangent::of(&dr, &du, &dv))
    }

    /// Reverse mode: the gradient of `<r̄, r> + <ū, u> + <v̄, v>` with respect to `f`, `w`,
    /// `M`, `H` and `mu`, the adjoint of [`SapSensitivity::jvp`] (eq. 24's optimality).
    fn vjp(
        &self,
        r_bar: &[f64],
        u_bar: &[f64],
        v_bar: &[f64],
    ) -> Result<GeneralizedGradient, CoreError> {
        let (nv, m) = (self.h.nrows(), self.h.ncols());
        check_cotangents((r_bar, u_bar, v_bar), nv, m)?;
        let (rb, ub) = (Col::from_fn(m, |i| r_bar[i]), Col::from_fn(m, |i| u_bar[i]));
        let ut = &ub - self.g_times(&rb, true);
        let z = self.k_solve(&self.h * &ut + Col::from_fn(nv, |i| v_bar[i]));
        let s = &rb + self.h.transpose() * &z;
        let g = &ub - self.g_times(&s, true);
        let mu = (0..m / 3)
            .map(|i| (0..3).map(|p| self.gamma_mu[i][p] * s[3 * i + p]).sum())
            .collect();
        let mut out = GeneralizedGradient::of_changes(&z, &g, &self.gamma, &self.v, mu);
        // `v^`'s gradient is `G' s` (the projection's argument `u - v^`); a normal row's
        // `phi0` moves its contact's `v^_n` by the bias slope.
        let vhat_bar = self.g_times(&s, true);
        for (i, slope) in self.bias_slope.iter().enumerate() {
            out.phi0[3 * i] = slope.map_or(0.0, |k| k * vhat_bar[3 * i]);
        }
        // `R_n`'s gradient is `dgamma/dR_n . s`; it and `v^_n`'s reach the compliance data.
        for (i, slopes) in self.compliance.iter().enumerate() {
            let rn_bar: f64 = (0..3).map(|p| slopes.gamma_rn[p] * s[3 * i + p]).sum();
            let vhat = vhat_bar[3 * i] * slopes.vhat_time;
            out.stiffness[i] = rn_bar * slopes.rn_k;
            out.tau_d[i] = rn_bar * slopes.rn_tau + vhat;
            out.dt += rn_bar * slopes.rn_dt + vhat;
        }
        Ok(out)
    }
}

impl SapSensitivity {
    /// `dv^` (one entry per row): on each contact's normal row `-dphi0 / (dt + tau_d)` for a
    /// change of the rows' position errors (the frictional rows' `phi0` is not read), and
    /// `-v^_n / (dt + tau_d)` per unit of `tau_d` or `dt` ([`Compliance`]). A nonzero change of
    /// `phi0` or `dt` without a time step is refused (the bias needs `dt`).
    fn bias_change(&self, d: &GeneralizedDirection<'_>) -> Result<Col<f64>, CoreError> {
        let m = self.h.ncols();
        let mut out = Col::zeros(m);
        if let Some(dphi0) = d.phi0 {
            for (i, slope) in self.bias_slope.iter().enumerate() {
                let d = dphi0[3 * i];
                match slope {
                    Some(k) => out[3 * i] = k * d,
                    None if d != 0.0 => {
                        return Err(CoreError::BadOption(format!(
                            "sensitivity: contact {i}'s `phi0` moves but the problem has no \
                             time step: SAP's bias v^ = -phi0 / (dt + tau_d) needs dt"
                        )))
                    }
                    None => {}
                }
            }
        }
        let ddt = d.dt.unwrap_or(0.0);
        for (i, slopes) in self.compliance.iter().enumerate() {
            let dtau = d.tau_d.map_or(0.0, |t| t[i]);
            out[3 * i] += slopes.vhat_time * (dtau + ddt);
        }
        Ok(out)
    }

    /// `dR_n` per contact for a change of the compliance data ([`Compliance`]); sizes checked,
    /// and a nonzero `ddt` refused where the problem has no time step.
    fn regularization_change(&self, d: &GeneralizedDirection<'_>) -> Result<Vec<f64>, CoreError> {
        d.check_compliance(self.compliance.len())?;
        let ddt = d.dt.unwrap_or(0.0);
        if ddt != 0.0 && self.bias_slope.iter().any(Option::is_none) {
            return Err(CoreError::BadOption(
                "sensitivity: `dt` moves but the problem has no time step".into(),
            ));
        }
        Ok(self
            .compliance
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let dk = d.stiffness.map_or(0.0, |k| k[i]);
                let dtau = d.tau_d.map_or(0.0, |t| t[i]);
                s.rn_k * dk + s.rn_tau * dtau + s.rn_dt * ddt
            })
            .collect())
    }
}

/// One contact's linearisation at the answer: `G_i` (appendix D), `dgamma_i/dmu_i`, the
/// region of eq. 27's piece and `y`'s distance to the nearest region boundary.
struct Linearised {
    g: Vec<Matrix3<f64>>,
    gamma_mu: Vec<Vector3<f64>>,
    regions: Vec<SapRegion>,
    boundary: Vec<f64>,
}

/// Per contact at the contact velocities `u`, with the frozen cost's `R` and `mu` (`regs`) and
/// normal biases `v_hat`.
fn linearised(regs: &[ContactRegularization], v_hat: &[f64], u: &[f64]) -> Linearised {
    let mut out = Linearised {
        g: Vec::new(),
        gamma_mu: Vec::new(),
        regions: Vec::new(),
        boundary: Vec::new(),
    };
    for (i, c) in regs.iter().enumerate() {
        let vc = Vector3::new(u[3 * i], u[3 * i + 1], u[3 * i + 2]);
        let y = c.y_of(vc, Vector3::new(v_hat[i], 0.0, 0.0));
        let region = c.region(y);
        out.g.push(c.g(y, region));
        out.gamma_mu.push(dgamma_dmu(c, y, region));
        out.regions.push(region);
        out.boundary.push(boundary_distance(c, y));
    }
    out
}

/// The Euclidean distance of `y` to the nearer of its regions' boundaries (appendix C): the
/// friction cone's wall `y_r = mu y_n` and the polar wall `y_n = -mu^ y_r`, both through the
/// apex, where the projection's derivative jumps.
fn boundary_distance(c: &ContactRegularization, y: Vector3<f64>) -> f64 {
    let (yn, yr) = (y[0], y[1].hypot(y[2]));
    let wall = |a: f64, b: f64| {
        // The distance to the ray {t (a, b) : t >= 0} in the (y_n, y_r) half-plane.
        let norm = a.hypot(b);
        let along = (yn * a + yr * b) / norm;
        if along <= 0.0 {
            yn.hypot(yr)
        } else {
            (yn * b - yr * a).abs() / norm
        }
    };
    wall(1.0, c.mu).min(wall(-c.mu_hat(), 1.0))
}

/// `K^-1` over every velocity: SAP's own factor of `K = M + H G H'` (section IV-A) on the
/// velocities of the trees a contact touches (the cost's unknowns, [`SapCost::factored_hessian`]),
/// and `M`'s on the others, where no contact adds to `K` and the two parts decouple.
#[derive(Debug)]
struct HessianSolve {
    touched: FactoredHessian,
    /// The touched velocities, in the factor's order, and the others.
    dofs: Vec<usize>,
    rest: Vec<usize>,
    /// `M` on `rest` (none when every velocity is touched).
    rest_m: Option<Cholesky>,
}

impl HessianSolve {
    /// The factors at the cost's unknowns `x`.
    fn new(problem: &GeneralizedProblem, cost: &SapCost, x: &[f64]) -> Result<Self, CoreError> {
        let dofs = cost.unknown_velocities().to_vec();
        let mut is_touched = vec![false; problem.num_dofs()];
        dofs.iter().for_each(|&d| is_touched[d] = true);
        let rest: Vec<usize> = (0..problem.num_dofs())
            .filter(|&d| !is_touched[d])
            .collect();
        let rest_m = (!rest.is_empty())
            .then(|| problem.cholesky_on(&rest))
            .transpose()?;
        Ok(HessianSolve {
            touched: cost.factored_hessian(x)?,
            dofs,
            rest,
            rest_m,
        })
    }

    /// `K^-1 x`.
    fn solve(&self, x: Col<f64>) -> Col<f64> {
        let mut out = x;
        let mut part: Vec<f64> = self.dofs.iter().map(|&d| out[d]).collect();
        self.touched.solve_in_place(&mut part);
        self.dofs.iter().zip(&part).for_each(|(&d, &p)| out[d] = p);
        if let Some(m) = &self.rest_m {
            let mut part = Col::from_fn(self.rest.len(), |k| out[self.rest[k]]);
            m.solve_in_place(part.as_mat_mut());
            self.rest
                .iter()
                .enumerate()
                .for_each(|(k, &d)| out[d] = part[k]);
        }
        out
    }
}

/// SAP's cost (eq. 24) of `problem` with `R` and `v^` frozen at `reg` and each contact's `mu`
/// the problem's: the cost [`SapSensitivity`] differentiates, for perturbed problems too.
pub fn frozen_cost(problem: &GeneralizedProblem, reg: &Regularization) -> SapCost {
    let v_hat: Vec<f64> = reg.v_hat.iter().flat_map(|&vn| [vn, 0.0, 0.0]).collect();
    SapCost::new(problem, frozen(problem, reg), &v_hat)
}

/// Eqs. 29-30's `R` from `reg` with the problem's `mu`.
fn frozen(problem: &GeneralizedProblem, reg: &Regularization) -> Vec<ContactRegularization> {
    reg.contacts
        .iter()
        .zip(&problem.contacts)
        .map(|(r, c)| ContactRegularization { mu: c.mu, ..*r })
        .collect()
}

/// `dgamma/dmu` at fixed `y` of eq. 27's piece for `region`: zero in stiction and no contact;
/// sliding, with `rho = R_t / R_n`, `f = 1 / (1 + mu^2 rho)`, `dgamma_n/dmu = rho f (y_r - 2 mu
/// gamma_n)` and `dgamma_t/dmu = (gamma_n + mu dgamma_n/dmu) t`.
pub fn dgamma_dmu(c: &ContactRegularization, y: Vector3<f64>, region: SapRegion) -> Vector3<f64> {
    if region != SapRegion::Sliding {
        return Vector3::zeros();
    }
    let yr = y[1].hypot(y[2]);
    let rho = c.rt / c.rn;
    let f = 1.0 / (1.0 + c.mu * c.mu * rho);
    let gn = (y[0] + c.mu * rho * yr) * f;
    let dgn = rho * f * (yr - 2.0 * c.mu * gn);
    let dgt = (gn + c.mu * dgn) / yr;
    Vector3::new(dgn, dgt * y[1], dgt * y[2])
}

/// Eq. 26 at `v` over every velocity, `|D grad| <= tol + tol max(|D p|, |D j_c|)` with
/// `grad = A (v - v*) - J' gamma`; refuses a point that is not SAP's answer.
fn optimal(
    problem: &GeneralizedProblem,
    h: &Mat<f64>,
    v: &Col<f64>,
    gamma: &Col<f64>,
    tol: f64,
) -> Result<(), CoreError> {
    let nv = v.nrows();
    let times_a = |x: &[f64]| {
        let mut out = vec![0.0; nv];
        sparse_mul_add(&problem.a, x, &mut out);
        out
    };
    let ae = times_a(&to_vec(&(v - Col::from_fn(nv, |k| problem.v_star[k]))));
    let grad = Col::from_fn(nv, |k| ae[k]) - h * gamma;
    let o = eq26_optimality(
        &diag_inv_sqrt(&problem.a),
        &times_a(&problem.v_star),
        &ae,
        &to_vec(&grad),
    );
    if o.met(tol, tol) {
        Ok(())
    } else {
        Err(CoreError::BadOption(format!(
            "sensitivity: `v` is not SAP's answer (eq. 26: |D grad| = {:e} above {tol:e} x \
             {:e}); differentiate a converged solve",
            o.residual, o.scale
        )))
    }
}

pub mod local;

#[cfg(test)]
mod tests;
