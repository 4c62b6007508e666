//! The Coulomb friction cone `K_mu = { r = (r_n, r_t) : |r_t| <= mu r_n }` (normal first) and
//! the exact Euclidean projection onto it.
//!
//! The projection is the closed form for a second-order cone of half-angle `atan(mu)`
//! (e.g. Fukushima, Luo and Tseng 2002, scaled by `mu`): with `t = |z_t|`,
//!
//! * `t <= mu z_n`: `z` is inside, `P(z) = z`;
//! * `mu t <= -z_n`: `z` is in the polar cone `-K_{1/mu}`, `P(z) = 0`;
//! * otherwise the projection lies on the boundary ray through `z_t / t`:
//!   `p_n = (z_n + mu t) / (1 + mu^2)`, `p_t = mu p_n z_t / t`.
//!
//! The dual cone is `K*_mu = K_{1/mu} = { |u_t| <= u_n / mu }`.

use nalgebra::{Matrix3, Vector3};

/// `|z_t| = sqrt(z_t1^2 + z_t2^2)`. Not `f64::hypot`: its guard against overflow (beyond
/// 1e154, which no impulse or velocity reaches) made glibc's `hypot` a quarter of the
/// instructions of a PGS solve (callgrind, clutter problem of 110 contacts).
#[inline]
pub fn tangential_norm(z: Vector3<f64>) -> f64 {
    (z[1] * z[1] + z[2] * z[2]).sqrt()
}

/// Projects `z = [z_n, z_t1, z_t2]` onto `K_mu` (`mu >= 0`).
pub fn project(mu: f64, z: Vector3<f64>) -> Vector3<f64> {
    let (zn, t) = (z[0], tangential_norm(z));
    // `zn >= 0` first: with `mu = 0` and `t = 0`, `t <= mu zn` holds for a negative `zn` too
    // (`0 <= -0`), which would keep a point below the apex.
    if zn >= 0.0 && t <= mu * zn {
        z
    } else if mu * t <= -zn || t == 0.0 {
        // t == 0 here means z_n < 0: the projection onto the ray is the apex.
        Vector3::zeros()
    } else {
        let pn = (zn + mu * t) / (1.0 + mu * mu);
        let s = mu * pn / t;
        Vector3::new(pn, s * z[1], s * z[2])
    }
}

/// Projects `z` onto the dual cone `K*_mu = { |u_t| <= u_n / mu }`; for `mu = 0` the dual cone
/// is the half-space `u_n >= 0`.
pub fn project_dual(mu: f64, z: Vector3<f64>) -> Vector3<f64> {
    if mu == 0.0 {
        return Vector3::new(z[0].max(0.0), z[1], z[2]);
    }
    project(1.0 / mu, z)
}

/// The Jacobian `dP/dz` of [`project`] at `z`: an element of the Clarke Jacobian on the
/// cone's boundary and apex (the one of the piece selected by the same inequalities as
/// [`project`]).
pub fn project_jacobian(mu: f64, z: Vector3<f64>) -> Matrix3<f64> {
    let (zn, t) = (z[0], tangential_norm(z));
    if zn >= 0.0 && t <= mu * zn {
        Matrix3::identity()
    } else if mu * t <= -zn || t == 0.0 {
        Matrix3::zeros()
    } else {
        // p_n = (z_n + mu t)/(1+mu^2), p_t = mu p_n e with e = z_t/t, de/dz_t = (I - e e')/t.
        let c = 1.0 / (1.0 + mu * mu);
        let e = [z[1] / t, z[2] / t];
        let pn = c * (zn + mu * t);
        let mut j = Matrix3::zeros();
        j[(0, 0)] = c;
        j[(0, 1)] = c * mu * e[0];
        j[(0, 2)] = c * mu * e[1];
        for a in 0..2 {
            j[(1 + a, 0)] = mu * c * e[a];
            for b in 0..2 {
                let delta = if a == b { 1.0 } else { 0.0 };
                j[(1 + a, 1 + b)] = mu * (c * mu * e[a] * e[b] + pn * (delta - e[a] * e[b]) / t);
            }
        }
        j
    }
}

/// Distance from `r` to `K_mu`.
pub fn distance(mu: f64, r: Vector3<f64>) -> f64 {
    (r - project(mu, r)).norm()
}

/// De Saxcé's modified velocity `u + mu |u_t| e_n`, which turns the Coulomb law into a
/// complementarity over the self-dual pair `K_mu`, `K*_mu`.
pub fn de_saxce(mu: f64, u: Vector3<f64>) -> Vector3<f64> {
    Vector3::new(u[0] + mu * tangential_norm(u), u[1], u[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frictionless_cone_keeps_the_apex_below_zero() {
        // mu = 0: K is the ray r_t = 0, r_n >= 0; a point straight below the apex projects to it.
        assert_eq!(
            project(0.0, Vector3::new(-0.75, 0.0, 0.0)),
            Vector3::zeros()
        );
        assert_eq!(
            project(0.0, Vector3::new(0.5, 0.0, 0.0)),
            Vector3::new(0.5, 0.0, 0.0)
        );
        assert_eq!(
            project_jacobian(0.0, Vector3::new(-0.75, 0.0, 0.0)),
            Matrix3::zeros()
        );
    }
    use proptest::prelude::*;

    fn vec3() -> impl Strategy<Value = Vector3<f64>> {
        (-10.0..10.0f64, -10.0..10.0f64, -10.0..10.0f64).prop_map(|(a, b, c)| Vector3::new(a, b, c))
    }

    proptest! {
        #[test]
        fn projection_is_in_the_cone_and_idempotent(mu in 0.0..3.0f64, z in vec3()) {
            let p = project(mu, z);
            prop_assert!(p[1].hypot(p[2]) <= mu * p[0] + 1e-12 * (1.0 + p.norm()));
            prop_assert!((project(mu, p) - p).norm() <= 1e-12 * (1.0 + p.norm()));
        }

        /// The projection onto a closed convex cone is characterised by Moreau's decomposition:
        /// `z - P(z)` lies in the polar cone and is orthogonal to `P(z)`.
        #[test]
        fn moreau_decomposition(mu in 0.01..3.0f64, z in vec3()) {
            let p = project(mu, z);
            let d = z - p;
            prop_assert!(p.dot(&d).abs() <= 1e-10 * (1.0 + z.norm_squared()));
            // -d in the dual cone K_{1/mu}.
            prop_assert!(d[1].hypot(d[2]) <= -d[0] / mu + 1e-10 * (1.0 + z.norm()));
        }

        /// Nearest point: no sampled point of the cone is closer to z than P(z).
        #[test]
        fn projection_is_nearest_point(mu in 0.0..3.0f64, z in vec3(),
                                       rn in 0.0..20.0f64, angle in 0.0..std::f64::consts::TAU, frac in 0.0..1.0f64) {
            let y = Vector3::new(rn, frac * mu * rn * angle.cos(), frac * mu * rn * angle.sin());
            prop_assert!((z - project(mu, z)).norm() <= (z - y).norm() + 1e-12);
        }

        #[test]
        fn jacobian_matches_finite_differences(mu in 0.05..3.0f64, z in vec3()) {
            let (zn, t) = (z[0], z[1].hypot(z[2]));
            // Away from the kinks |z_t| = mu z_n and mu |z_t| = -z_n, and from the axis.
            prop_assume!((t - mu * zn).abs() > 1e-3 && (mu * t + zn).abs() > 1e-3 && t > 1e-3);
            let j = project_jacobian(mu, z);
            let h = 1e-7;
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = h;
                let fd = (project(mu, z + e) - project(mu, z - e)) / (2.0 * h);
                for i in 0..3 {
                    prop_assert!((fd[i] - j[(i, k)]).abs() <= 1e-5 * (1.0 + j[(i, k)].abs()),
                        "entry ({i},{k}): fd {} vs analytic {}", fd[i], j[(i, k)]);
                }
            }
        }
    }

    #[test]
    fn known_projections() {
        // Inside, polar cone, and the boundary case of mu = 1 (the standard SOC formula).
        let z = Vector3::new(2.0, 1.0, 0.0);
        assert_eq!(project(1.0, z), z);
        assert_eq!(project(1.0, Vector3::new(-2.0, 1.0, 0.0)), Vector3::zeros());
        let p = project(1.0, Vector3::new(0.0, 2.0, 0.0));
        assert!((p - Vector3::new(1.0, 1.0, 0.0)).norm() < 1e-15);
        // mu = 0: the ray r_t = 0, r_n >= 0.
        assert_eq!(
            project(0.0, Vector3::new(3.0, 4.0, 5.0)),
            Vector3::new(3.0, 0.0, 0.0)
        );
        assert_eq!(project(0.0, Vector3::new(-3.0, 4.0, 5.0)), Vector3::zeros());
    }

    #[test]
    fn dual_cone_of_mu_is_cone_of_inverse_mu() {
        let z = Vector3::new(1.0, 3.0, 0.0);
        // |u_t| <= u_n / mu with mu = 0.25: 3 <= 4, inside.
        assert_eq!(project_dual(0.25, z), z);
        assert_eq!(
            de_saxce(0.5, Vector3::new(-1.0, 3.0, 4.0)),
            Vector3::new(1.5, 3.0, 4.0)
        );
    }
}
