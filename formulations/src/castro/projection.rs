//! The per-contact analytical projection of Castro et al. (section V-A, eq. 27; appendix C) and
//! the derivatives SAP needs (appendix D, eqs. 35-37).
//!
//! `gamma = P_F(y)` is the projection of `y` onto the friction cone
//! `F = { |gamma_t| <= mu gamma_n }` in the norm of `R = diag(R_n, R_t, R_t)` (the project keeps
//! **normal first**; the paper writes `diag(R_t, R_t, R_n)`). With `y_r = |y_t|`,
//! `t = y_t / y_r`, `mu~ = mu sqrt(R_t / R_n)` and `mu^ = mu R_t / R_n`:
//!
//! * stiction, `y_r <= mu y_n`: `gamma = y`;
//! * sliding, `-mu^ y_r < y_n <= y_r / mu`: `gamma_n = (y_n + mu^ y_r) / (1 + mu~^2)`,
//!   `gamma_t = mu gamma_n t`;
//! * no contact, `y_n < -mu^ y_r`: `gamma = 0`.
//!
//! The regulariser's cost `l_R(y) = |gamma|_R^2 / 2` (eq. 35) has gradient `R gamma` and, where
//! it is twice differentiable, Hessian `R dgamma/dy`; `G = R^-1 d2l_R/dy2 R^-1 = dgamma/dy R^-1`
//! is `-dgamma/dv_c` (appendix D). On the boundaries the paper's extension is used: the
//! stiction formula on the cone's boundary (apex included), the sliding one on the polar
//! cone's boundary. A frictionless contact (`mu = 0`) has no stiction region but the ray
//! `y_t = 0`, `y_n >= 0`, which the first test puts there.

use nalgebra::{Matrix3, Vector3};

/// The smooth piece `y` lies in (appendix C's regions I, II, III).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SapRegion {
    /// `y` in the cone: `gamma = y`.
    Stiction,
    /// Between the cone and its polar: projection onto the cone's wall.
    Sliding,
    /// In the polar cone: `gamma = 0`.
    NoContact,
}

/// One contact's regularisation `R = diag(R_n, R_t, R_t)` and friction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactRegularization {
    /// Friction coefficient `mu`.
    pub mu: f64,
    /// Normal regularisation `R_n > 0`.
    pub rn: f64,
    /// Tangential regularisation `R_t > 0`.
    pub rt: f64,
}

/// The projection at one `y`: the impulse, its region, the regulariser's cost and `G`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// `gamma = P_F(y)`, normal first.
    pub gamma: Vector3<f64>,
    /// Which piece.
    pub region: SapRegion,
    /// `l_R = |gamma|_R^2 / 2`.
    pub cost: f64,
}

impl Projection {
    /// No contact: no impulse, no cost (a workspace's value before any projection).
    pub fn none() -> Projection {
        Projection {
            gamma: Vector3::zeros(),
            region: SapRegion::NoContact,
            cost: 0.0,
        }
    }
}

impl ContactRegularization {
    /// `mu^ = mu R_t / R_n`.
    pub fn mu_hat(&self) -> f64 {
        self.mu * self.rt / self.rn
    }

    /// `mu~^2 = mu^2 R_t / R_n`.
    pub fn mu_tilde2(&self) -> f64 {
        self.mu * self.mu * self.rt / self.rn
    }

    /// The region of `y`.
    pub fn region(&self, y: Vector3<f64>) -> SapRegion {
        Projector::new(*self).region(y)
    }

    /// `P_F(y)` and the cost `l_R`.
    pub fn project(&self, y: Vector3<f64>) -> Projection {
        Projector::new(*self).project(y)
    }

    /// `dgamma/dy` of the region's piece at `y` (the extension on boundaries).
    pub fn dgamma_dy(&self, y: Vector3<f64>, region: SapRegion) -> Matrix3<f64> {
        Projector::new(*self).dgamma_dy(y, region)
    }

    /// `G = dgamma/dy R^-1` (symmetric positive semidefinite), `-dgamma/dv_c`.
    pub fn g(&self, y: Vector3<f64>, region: SapRegion) -> Matrix3<f64> {
        Projector::new(*self).g(y, region)
    }

    /// `dz' G dz` at `y` in `region`, without forming `G` ([`Projector::curvature`]).
    pub fn curvature(&self, y: Vector3<f64>, region: SapRegion, dz: Vector3<f64>) -> f64 {
        Projector::new(*self).curvature(y, region, dz)
    }

    /// `y = -R^-1 (v_c - v^)` for a contact velocity `v_c` and bias `v^` (normal first).
    pub fn y_of(&self, vc: Vector3<f64>, v_hat: Vector3<f64>) -> Vector3<f64> {
        Projector::new(*self).y_of(vc - v_hat)
    }
}

/// One contact's projection with the quotients of its regularisation computed once (`1/R_n`,
/// `1/R_t`, `mu^`, `1 / (1 + mu~^2)`): SAP projects every contact at every line-search trial,
/// and the divisions were a good part of it. [`ContactRegularization`]'s methods are these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projector {
    /// The regularisation.
    pub reg: ContactRegularization,
    inv_rn: f64,
    inv_rt: f64,
    mu_hat: f64,
    /// `f = 1 / (1 + mu~^2)`.
    f: f64,
}

impl Projector {
    /// The projector of `reg`.
    pub fn new(reg: ContactRegularization) -> Projector {
        Projector {
            reg,
            inv_rn: 1.0 / reg.rn,
            inv_rt: 1.0 / reg.rt,
            mu_hat: reg.mu_hat(),
            f: 1.0 / (1.0 + reg.mu_tilde2()),
        }
    }

    /// `y = -R^-1 z` for `z = v_c - v^`.
    #[inline]
    pub fn y_of(&self, z: Vector3<f64>) -> Vector3<f64> {
        Vector3::new(
            -z[0] * self.inv_rn,
            -z[1] * self.inv_rt,
            -z[2] * self.inv_rt,
        )
    }

    /// The region of `y`.
    #[inline]
    pub fn region(&self, y: Vector3<f64>) -> SapRegion {
        self.region_at(y[0], tangent_norm(&y))
    }

    /// The region of `y` from `y_n` and `y_r = |y_t|`.
    #[inline]
    fn region_at(&self, yn: f64, yr: f64) -> SapRegion {
        // `yn >= 0` first: with mu = 0 and y_r = 0, `y_r <= mu y_n` holds for y_n < 0 too.
        if yn >= 0.0 && yr <= self.reg.mu * yn {
            SapRegion::Stiction
        } else if yn < -self.mu_hat * yr {
            SapRegion::NoContact
        } else {
            SapRegion::Sliding
        }
    }

    /// `P_F(y)` and the cost `l_R`.
    #[inline]
    pub fn project(&self, y: Vector3<f64>) -> Projection {
        let yr = tangent_norm(&y);
        let region = self.region_at(y[0], yr);
        let gamma = match region {
            SapRegion::Stiction => y,
            SapRegion::NoContact => Vector3::zeros(),
            SapRegion::Sliding => {
                let gn = (y[0] + self.mu_hat * yr) * self.f;
                let s = self.reg.mu * gn / yr;
                Vector3::new(gn, s * y[1], s * y[2])
            }
        };
        let cost = 0.5
            * (self.reg.rn * gamma[0] * gamma[0]
                + self.reg.rt * (gamma[1] * gamma[1] + gamma[2] * gamma[2]));
        Projection {
            gamma,
            region,
            cost,
        }
    }

    /// `dgamma/dy` of the region's piece at `y` (the extension on boundaries).
    pub fn dgamma_dy(&self, y: Vector3<f64>, region: SapRegion) -> Matrix3<f64> {
        match region {
            SapRegion::Stiction => Matrix3::identity(),
            SapRegion::NoContact => Matrix3::zeros(),
            SapRegion::Sliding => {
                let yr = tangent_norm(&y);
                let t = [y[1] / yr, y[2] / yr];
                let (f, mu, mu_hat) = (self.f, self.reg.mu, self.mu_hat);
                let gn = (y[0] + mu_hat * yr) * f;
                let mut d = Matrix3::zeros();
                d[(0, 0)] = f;
                for a in 0..2 {
                    d[(0, 1 + a)] = mu_hat * f * t[a];
                    d[(1 + a, 0)] = mu * f * t[a];
                    for b in 0..2 {
                        let p = t[a] * t[b];
                        let perp = if a == b { 1.0 } else { 0.0 } - p;
                        d[(1 + a, 1 + b)] = mu * (gn / yr * perp + mu_hat * f * p);
                    }
                }
                d
            }
        }
    }

    /// `G = dgamma/dy R^-1` (symmetric positive semidefinite), `-dgamma/dv_c`.
    #[inline]
    pub fn g(&self, y: Vector3<f64>, region: SapRegion) -> Matrix3<f64> {
        match region {
            SapRegion::Stiction => {
                Matrix3::from_diagonal(&Vector3::new(self.inv_rn, self.inv_rt, self.inv_rt))
            }
            SapRegion::NoContact => Matrix3::zeros(),
            SapRegion::Sliding => {
                let r_inv = [self.inv_rn, self.inv_rt, self.inv_rt];
                let mut g = self.dgamma_dy(y, region);
                for (c, ri) in r_inv.iter().enumerate() {
                    for r in 0..3 {
                        g[(r, c)] *= ri;
                    }
                }
                g
            }
        }
    }

    /// `dz' G dz` at `y` in `region`, without forming `G` (the line search's curvature, section
    /// IV-C, once per contact and trial step). Sliding, with `u = R^-1 dz`, `t = y_t / y_r`,
    /// `f = 1 / (1 + mu~^2)`: `dz' dgamma/dy u = f dz_n (u_n + mu^ t.u_t) + mu f u_n t.dz_t
    /// + mu (gamma_n / y_r) (dz_t.u_t - t.dz_t t.u_t) + mu mu^ f t.dz_t t.u_t`.
    #[inline]
    pub fn curvature(&self, y: Vector3<f64>, region: SapRegion, dz: Vector3<f64>) -> f64 {
        let u = Vector3::new(
            dz[0] * self.inv_rn,
            dz[1] * self.inv_rt,
            dz[2] * self.inv_rt,
        );
        match region {
            SapRegion::NoContact => 0.0,
            SapRegion::Stiction => dz.dot(&u),
            SapRegion::Sliding => {
                let yr = tangent_norm(&y);
                let (t1, t2) = (y[1] / yr, y[2] / yr);
                let (f, mu, mu_hat) = (self.f, self.reg.mu, self.mu_hat);
                let gn = (y[0] + mu_hat * yr) * f;
                let tu = t1 * u[1] + t2 * u[2];
                let tz = t1 * dz[1] + t2 * dz[2];
                let zu = dz[1] * u[1] + dz[2] * u[2];
                f * dz[0] * (u[0] + mu_hat * tu)
                    + mu * f * u[0] * tz
                    + mu * gn / yr * (zu - tz * tu)
                    + mu * mu_hat * f * tz * tu
            }
        }
    }
}

/// `|y_t| = sqrt(y_t1^2 + y_t2^2)` without `hypot`'s care for overflow: `y` is a velocity over a
/// regularisation, far below `1e150`, and this runs for every contact at every trial step.
#[inline]
fn tangent_norm(y: &Vector3<f64>) -> f64 {
    (y[1] * y[1] + y[2] * y[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reg() -> impl Strategy<Value = ContactRegularization> {
        (0.0..2.0f64, 1e-3..10.0f64, 1e-4..10.0f64).prop_map(|(mu, rn, rt)| ContactRegularization {
            mu,
            rn,
            rt,
        })
    }

    fn vec3() -> impl Strategy<Value = Vector3<f64>> {
        (-3.0..3.0f64, -3.0..3.0f64, -3.0..3.0f64).prop_map(|(a, b, c)| Vector3::new(a, b, c))
    }

    fn r_dot(c: &ContactRegularization, a: Vector3<f64>, b: Vector3<f64>) -> f64 {
        c.rn * a[0] * b[0] + c.rt * (a[1] * b[1] + a[2] * b[2])
    }

    fn in_cone(mu: f64, g: Vector3<f64>, tol: f64) -> bool {
        g[0] >= -tol && g[1].hypot(g[2]) <= mu * g[0] + tol
    }

    proptest! {
        /// The projection lands in the cone and is the R-nearest point of it: the variational
        /// inequality `(y - gamma)' R (z - gamma) <= 0` holds for cone points `z`, and the
        /// Moreau decomposition holds in the R metric: `(y - gamma)' R gamma = 0`, and `R (y -
        /// gamma)` lies in the polar cone (`-R (y - gamma)` in the dual cone `|u_t| <= u_n / mu`).
        #[test]
        fn projection_is_the_r_metric_projection(c in reg(), y in vec3(), zs in proptest::collection::vec(vec3(), 8)) {
            let p = c.project(y);
            let scale = 1.0 + y.amax();
            prop_assert!(in_cone(c.mu, p.gamma, 1e-12 * scale));
            let e = y - p.gamma;
            prop_assert!(r_dot(&c, e, p.gamma).abs() <= 1e-10 * scale * scale * (c.rn + c.rt));
            for z in zs {
                // A cone point from an arbitrary vector: |z_t| <= mu z_n.
                let zn = z[0].abs();
                let (theta, rho) = (z[2].atan2(z[1]), (z[1].hypot(z[2]) / 3.0).min(1.0));
                let zc = Vector3::new(zn, c.mu * zn * rho * theta.cos(), c.mu * zn * rho * theta.sin());
                prop_assert!(r_dot(&c, e, zc - p.gamma) <= 1e-9 * scale * (1.0 + zn) * (c.rn + c.rt));
            }
            let w = -Vector3::new(c.rn * e[0], c.rt * e[1], c.rt * e[2]);
            prop_assert!(c.mu * w[1].hypot(w[2]) <= w[0] + 1e-9 * scale * (c.rn + c.rt));
        }

        /// Inside each region: `grad l_R = R gamma` and `dgamma/dy` match finite differences,
        /// and `G` is symmetric positive semidefinite.
        #[test]
        fn derivatives_match_finite_differences(c in reg(), y in vec3()) {
            let p = c.project(y);
            let h = 1e-6 * (1.0 + y.amax());
            // Skip points within h of a region boundary: the derivatives jump there.
            let same = (0..3).all(|k| {
                let mut d = Vector3::zeros();
                d[k] = h;
                c.region(y + d) == p.region && c.region(y - d) == p.region
            });
            prop_assume!(same && y[1].hypot(y[2]) > 10.0 * h);
            let d = c.dgamma_dy(y, p.region);
            let rg = Vector3::new(c.rn * p.gamma[0], c.rt * p.gamma[1], c.rt * p.gamma[2]);
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = h;
                let (a, b) = (c.project(y + e), c.project(y - e));
                let fd_cost = (a.cost - b.cost) / (2.0 * h);
                prop_assert!((fd_cost - rg[k]).abs() <= 1e-5 * (1.0 + rg.amax()), "grad {k}: {fd_cost} vs {}", rg[k]);
                let fd_col = (a.gamma - b.gamma) / (2.0 * h);
                for r in 0..3 {
                    prop_assert!((fd_col[r] - d[(r, k)]).abs() <= 1e-5 * (1.0 + d.amax()), "dgamma ({r}, {k})");
                }
            }
            let g = c.g(y, p.region);
            prop_assert!((g - g.transpose()).amax() <= 1e-10 * (1.0 + g.amax()));
            // The line search's curvature without G is dz' G dz.
            for dz in [Vector3::new(0.3, -1.2, 0.7), y, Vector3::new(-2.0, 0.1, 0.0)] {
                let direct = dz.dot(&(g * dz));
                prop_assert!((c.curvature(y, p.region, dz) - direct).abs() <= 1e-10 * (1.0 + direct.abs()));
            }
            let eig = g.symmetric_eigenvalues();
            prop_assert!(eig.min() >= -1e-10 * (1.0 + eig.amax()));
        }
    }

    #[test]
    fn the_three_regions_give_the_papers_formulas() {
        let c = ContactRegularization {
            mu: 0.5,
            rn: 2.0,
            rt: 0.5,
        };
        // Stiction: y itself.
        let y = Vector3::new(2.0, 0.6, -0.8);
        assert_eq!(c.project(y).gamma, y);
        // Sliding: mu^ = 0.125, mu~^2 = 0.0625; y_r = 5, y_n = 1:
        // gamma_n = (1 + 0.625) / 1.0625, gamma_t = 0.5 gamma_n (0.6, 0.8).
        let y = Vector3::new(1.0, 3.0, 4.0);
        let p = c.project(y);
        let gn = 1.625 / 1.0625;
        assert_eq!(p.region, SapRegion::Sliding);
        assert!((p.gamma - Vector3::new(gn, 0.5 * gn * 0.6, 0.5 * gn * 0.8)).amax() < 1e-15);
        // No contact: y_n below -mu^ y_r.
        assert_eq!(
            c.project(Vector3::new(-1.0, 3.0, 4.0)).gamma,
            Vector3::zeros()
        );
        // Frictionless, straight below the apex: no contact (not stiction through -0).
        let f = ContactRegularization { mu: 0.0, ..c };
        assert_eq!(f.region(Vector3::new(-1.0, 0.0, 0.0)), SapRegion::NoContact);
        // The apex belongs to stiction (the cone's boundary), whose G is R^-1.
        assert_eq!(c.region(Vector3::zeros()), SapRegion::Stiction);
        let g = c.g(Vector3::zeros(), SapRegion::Stiction);
        assert_eq!(g, Matrix3::from_diagonal(&Vector3::new(0.5, 2.0, 2.0)));
    }
}
