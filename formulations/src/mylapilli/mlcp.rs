//! The MLCP with a polyhedral friction cone (Mylapilli and Jain 2014, eqs. 14-22) as the
//! Fischer-Burmeister equations `phi(z) = 0` (eqs. 23-25 and the MCP variant after eq. 25).
//!
//! Unknowns, in the paper's order (eq. 22): `z = [p_b; beta_; sigma]` with
//! `beta_ = col{[F_n(i), beta_1(i) .. beta_nf(i)]}` (eq. 15, contact-major) and
//! `sigma = col{sigma(i)}`, size `n_b + n_u (n_f + 2)`. The affine map `f(z) = M z + q_` has
//!
//! ```text
//!      [ W_bb        W_bu D_       0  ]         [ q_b    ]
//! M =  [ D_' W_bu'   D_' W D_      E^ ],  q_ =  [ D_' q  ]
//!      [ 0           E-            0  ]         [ 0      ]
//! ```
//!
//! (eq. 22 with `X Lambda X'` written in contact space), `D_ = diag{[e_n, d_1 .. d_nf]}`,
//! `E^(i) = [0, 1 .. 1]'`, `E-(i) = [mu_i, -1 .. -1]` (eq. 17). The first `n_b` rows are
//! equalities (`l = -inf, u = +inf`: `phi_i = -f_i`), the others complementarities
//! (`l = 0, u = inf`: `phi_i = phi_FB(z_i, f_i)`, eq. 24).
//!
//! Jacobian (the paper's, section "Casting the MLCP as an optimization problem"): with
//! `rho = sqrt(z_i^2 + f_i^2)`, a complementarity row is `(z_i/rho - 1) e_i' + (f_i/rho - 1) M_i`;
//! an equality row is `-M_i`. On the kink `z_i = f_i = 0` see [`KinkRule`].

use contactlab_core::{LocalProblem, ProjectedResidual, Residual};
use faer::{Mat, MatMut, MatRef};
use nalgebra::{Matrix3, Vector3};

use super::bilateral::{Bilateral, DenseSystem};
use super::directions::Directions;
use super::error::MylapilliError;

/// The Fischer-Burmeister function `phi(a, b) = sqrt(a^2 + b^2) - a - b` (eq. 24), zero exactly
/// when `a >= 0`, `b >= 0`, `a b = 0` (eq. 23).
///
/// Evaluated as `-2 a b / (sqrt(a^2 + b^2) + a + b)` when `a + b > 0` (the same function,
/// rationalized): the printed form cancels there and loses the small value `phi ~ -min(a, b)`
/// to rounding of the large one, which would keep `psi` from reaching the paper's `1e-30`.
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    let rho = a.hypot(b);
    if a + b > 0.0 {
        -2.0 * a * b / (rho + a + b)
    } else {
        rho - a - b
    }
}

/// The gradient `(d phi / d a, d phi / d b) = (a / rho - 1, b / rho - 1)` of
/// [`fischer_burmeister`], or `None` at its only kink `a = b = 0`.
pub fn fischer_burmeister_gradient(a: f64, b: f64) -> Option<(f64, f64)> {
    let rho = a.hypot(b);
    (rho > 0.0).then(|| (a / rho - 1.0, b / rho - 1.0))
}

/// Which Jacobian row a complementarity row gets on the kink `z_i = f_i(z) = 0`.
///
/// The generalized (Clarke) Jacobian of row `i` there is
/// `{(xi - 1) e_i' + (zeta - 1) M_i : xi^2 + zeta^2 <= 1}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KinkRule {
    /// `(xi, zeta) = (1, M_ii) / sqrt(1 + M_ii^2)`: the limit of the Jacobian along `e_i`
    /// (so an element of the B-subdifferential, the choice of De Luca, Facchinei and Kanzow).
    /// Its diagonal entry is the paper's, `sqrt(1 + M_ii^2) - 1 - M_ii`; its off-diagonal
    /// entries are `(M_ii / sqrt(1 + M_ii^2) - 1) M_ij`.
    #[default]
    DirectionalLimit,
    /// The paper's printed values: diagonal `sqrt(1 + M_ii^2) - 1 - M_ii`, off-diagonal `0`.
    /// This row is *not* in the generalized Jacobian when row `i` of `M` has a non-zero
    /// off-diagonal entry (which every row of this MLCP has); kept to reproduce the paper
    /// literally.
    PaperPrinted,
}

/// The Fischer-Burmeister residual of Mylapilli and Jain's MLCP (eq. 22, eq. 24).
///
/// Constructors validate their input and return errors; the accessors taking `z` expect
/// [`MlcpFb::size`] entries and panic on a shorter slice, as the [`Residual`] methods do.
#[derive(Debug, Clone)]
pub struct MlcpFb {
    sys: DenseSystem,
    dirs: Directions,
    /// The MLCP matrix `M` (eq. 22).
    m: Mat<f64>,
    /// The MLCP vector `q_` (eq. 22).
    qv: Vec<f64>,
    kink: KinkRule,
}

impl MlcpFb {
    /// The MLCP of a local problem without bilateral rows.
    pub fn new(problem: &LocalProblem, dirs: Directions) -> Result<MlcpFb, MylapilliError> {
        MlcpFb::build(problem, None, dirs)
    }

    /// The MLCP of a local problem with `bilateral` equality rows (first in `z`).
    pub fn with_bilateral(
        problem: &LocalProblem,
        bilateral: &Bilateral,
        dirs: Directions,
    ) -> Result<MlcpFb, MylapilliError> {
        MlcpFb::build(problem, Some(bilateral), dirs)
    }

    fn build(
        problem: &LocalProblem,
        bilateral: Option<&Bilateral>,
        dirs: Directions,
    ) -> Result<MlcpFb, MylapilliError> {
        let sys = DenseSystem::new(problem, bilateral)?;
        if dirs.num_contacts() != sys.n_u {
            return Err(MylapilliError::DirectionCount {
                expected: sys.n_u,
                found: dirs.num_contacts(),
            });
        }
        let (n_b, n_u, n_f) = (sys.n_b, sys.n_u, dirs.n_f());
        let w1 = n_f + 1;
        let n = n_b + n_u * (n_f + 2);
        let beta = |i: usize, k: usize| n_b + i * w1 + k;
        let sigma = |i: usize| n_b + n_u * w1 + i;
        let mut m = Mat::<f64>::zeros(n, n);
        let mut qv = vec![0.0; n];
        // Equality block: W_bb, and W_bu D_ with its transpose (eq. 22, first row and column).
        for k in 0..n_b {
            for l in 0..n_b {
                m[(k, l)] = sys.w_bb[(k, l)];
            }
            qv[k] = sys.q_b[k];
            for i in 0..n_u {
                let wk = Vector3::new(
                    sys.w_bu[(k, 3 * i)],
                    sys.w_bu[(k, 3 * i + 1)],
                    sys.w_bu[(k, 3 * i + 2)],
                );
                for c in 0..w1 {
                    let v = wk.dot(&dirs.column(i, c));
                    m[(k, beta(i, c))] = v;
                    m[(beta(i, c), k)] = v;
                }
            }
        }
        // D_' W D_ and D_' q (eq. 22, second row).
        for i in 0..n_u {
            let qi = Vector3::new(sys.q[3 * i], sys.q[3 * i + 1], sys.q[3 * i + 2]);
            for c in 0..w1 {
                qv[beta(i, c)] = dirs.column(i, c).dot(&qi);
            }
            for j in 0..n_u {
                let wij = Matrix3::from_fn(|a, b| sys.w[(3 * i + a, 3 * j + b)]);
                for c in 0..w1 {
                    let left = wij.transpose() * dirs.column(i, c);
                    for e in 0..w1 {
                        m[(beta(i, c), beta(j, e))] = left.dot(&dirs.column(j, e));
                    }
                }
            }
            // E^ (eq. 17): sigma enters every friction-direction row of its contact.
            // E- (eq. 17): mu F_n - sum_j beta_j.
            m[(sigma(i), beta(i, 0))] = sys.mu[i];
            for c in 1..w1 {
                m[(beta(i, c), sigma(i))] = 1.0;
                m[(sigma(i), beta(i, c))] = -1.0;
            }
        }
        Ok(MlcpFb {
            sys,
            dirs,
            m,
            qv,
            kink: KinkRule::default(),
        })
    }

    /// Uses `rule` for the Jacobian rows on the Fischer-Burmeister kink.
    pub fn with_kink_rule(mut self, rule: KinkRule) -> MlcpFb {
        self.kink = rule;
        self
    }

    /// The kink rule in use.
    pub fn kink_rule(&self) -> KinkRule {
        self.kink
    }

    /// The MLCP's size `n_b + n_u (n_f + 2)` (eq. 22).
    pub fn size(&self) -> usize {
        self.qv.len()
    }

    /// Number of bilateral rows `n_b`.
    pub fn num_bilateral(&self) -> usize {
        self.sys.n_b
    }

    /// Number of contacts `n_u`.
    pub fn num_contacts(&self) -> usize {
        self.sys.n_u
    }

    /// The friction directions.
    pub fn directions(&self) -> &Directions {
        &self.dirs
    }

    /// The MLCP matrix `M` of eq. 22.
    pub fn matrix(&self) -> MatRef<'_, f64> {
        self.m.as_ref()
    }

    /// The MLCP vector `q_` of eq. 22.
    pub fn vector(&self) -> &[f64] {
        &self.qv
    }

    /// Whether row (and unknown) `i` is an equality row (a bilateral impulse, free).
    pub fn is_equality(&self, i: usize) -> bool {
        i < self.sys.n_b
    }

    /// Index in `z` of `beta_(i)[k]`: `k = 0` is `F_n(i)`, `k = 1 + j` is direction `j`.
    pub fn beta_index(&self, i: usize, k: usize) -> usize {
        self.sys.n_b + i * (self.dirs.n_f() + 1) + k
    }

    /// Index in `z` of `sigma(i)`.
    pub fn sigma_index(&self, i: usize) -> usize {
        self.sys.n_b + self.sys.n_u * (self.dirs.n_f() + 1) + i
    }

    /// `f(z) = M z + q_`.
    pub fn affine(&self, z: &[f64]) -> Vec<f64> {
        let n = self.size();
        let mut f = self.qv.clone();
        for (j, &zj) in z.iter().enumerate().take(n) {
            if zj != 0.0 {
                for (i, fi) in f.iter_mut().enumerate() {
                    *fi += self.m[(i, j)] * zj;
                }
            }
        }
        f
    }

    /// The bilateral impulses `p_b` in `z`.
    pub fn bilateral_impulse<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[..self.sys.n_b]
    }

    /// The stacked pyramid impulses `beta_` in `z`.
    pub fn pyramid<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[self.sys.n_b..self.sigma_index(0)]
    }

    /// The slip multipliers `sigma` in `z`.
    pub fn slip_rates<'z>(&self, z: &'z [f64]) -> &'z [f64] {
        &z[self.sigma_index(0)..]
    }

    /// The contact impulse `r = D_ beta_` (eq. 19), normal first, three per contact, for the
    /// shared metrics.
    pub fn impulse(&self, z: &[f64]) -> Vec<f64> {
        self.dirs.impulses(self.pyramid(z))
    }

    /// The contact velocity `u = W_bu' p_b + W r + q` at `z` (`v_u^+`, eq. 21).
    pub fn contact_velocity(&self, z: &[f64]) -> Vec<f64> {
        self.sys
            .contact_velocity(self.bilateral_impulse(z), &self.impulse(z))
    }

    /// The bilateral rows' velocity `u_b = W_bb p_b + W_bu r + q_b` at `z` (zero at a solution).
    pub fn bilateral_velocity(&self, z: &[f64]) -> Vec<f64> {
        self.sys
            .bilateral_velocity(self.bilateral_impulse(z), &self.impulse(z))
    }

    /// MLCP unknowns for given bilateral and contact impulses: `beta_` from
    /// [`Directions::pyramids`] and `sigma_i = max(0, max_j -d_j' u_t(i))`, the least `sigma`
    /// making every friction row `f >= 0`, at the velocity these impulses give. A warm start,
    /// and the MLCP solution when `r` is one (and `sigma` is unique).
    pub fn unknowns_from_impulse(
        &self,
        p_b: &[f64],
        r: &[f64],
    ) -> Result<Vec<f64>, MylapilliError> {
        let check = |field: &str, expected: usize, found: usize| {
            if expected == found {
                Ok(())
            } else {
                Err(MylapilliError::Problem(
                    contactlab_core::ProblemError::Shape {
                        field: field.into(),
                        expected: format!("{expected} entries"),
                        found: format!("{found} entries"),
                    },
                ))
            }
        };
        check("p_b", self.sys.n_b, p_b.len())?;
        check("r", 3 * self.sys.n_u, r.len())?;
        contactlab_core::problem::check_finite_vec("p_b", p_b)?;
        contactlab_core::problem::check_finite_vec("r", r)?;
        let u = self.sys.contact_velocity(p_b, r);
        let mut z = p_b.to_vec();
        z.extend(self.dirs.pyramids(r));
        for i in 0..self.sys.n_u {
            let s = (0..self.dirs.n_f())
                .map(|j| {
                    let (c, s) = self.dirs.direction(i, j);
                    -(c * u[3 * i + 1] + s * u[3 * i + 2])
                })
                .fold(0.0_f64, f64::max);
            z.push(s);
        }
        Ok(z)
    }

    /// Writes Jacobian row `i` (a complementarity row) given `z_i`, `f_i`.
    fn fb_row(&self, i: usize, a: f64, b: f64, out: &mut MatMut<'_, f64>) {
        let n = self.size();
        let (ga, gb) = match fischer_burmeister_gradient(a, b) {
            Some(g) => g,
            None => {
                let mii = self.m[(i, i)];
                let s = mii.hypot(1.0);
                match self.kink {
                    KinkRule::DirectionalLimit => (1.0 / s - 1.0, mii / s - 1.0),
                    KinkRule::PaperPrinted => {
                        for j in 0..n {
                            out[(i, j)] = 0.0;
                        }
                        out[(i, i)] = s - 1.0 - mii;
                        return;
                    }
                }
            }
        };
        for j in 0..n {
            out[(i, j)] = gb * self.m[(i, j)];
        }
        out[(i, i)] += ga;
    }
}

impl Residual for MlcpFb {
    fn num_unknowns(&self) -> usize {
        self.size()
    }

    fn num_residuals(&self) -> usize {
        self.size()
    }

    fn residual(&self, z: &[f64], out: &mut [f64]) {
        let f = self.affine(z);
        for (i, o) in out.iter_mut().enumerate() {
            *o = if self.is_equality(i) {
                -f[i]
            } else {
                fischer_burmeister(z[i], f[i])
            };
        }
    }

    fn jacobian(&self, z: &[f64], mut out: MatMut<'_, f64>) {
        let f = self.affine(z);
        let n = self.size();
        for i in 0..n {
            if self.is_equality(i) {
                for j in 0..n {
                    out[(i, j)] = -self.m[(i, j)];
                }
            } else {
                self.fb_row(i, z[i], f[i], &mut out);
            }
        }
    }
}

impl ProjectedResidual for MlcpFb {
    /// Projects onto `X = R^{n_b} x R_+^{n_u (n_f + 2)}`: the box of the MCP (`l = 0, u = inf`
    /// for `beta_` and `sigma`, free `p_b`), the set Kanzow and Petra's PLM keeps iterates in.
    fn project(&self, z: &mut [f64]) {
        for v in z.iter_mut().skip(self.sys.n_b) {
            *v = v.max(0.0);
        }
    }
}
