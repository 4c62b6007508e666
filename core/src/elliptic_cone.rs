//! MuJoCo's elliptic friction cone with one coefficient per frictional row, and the exact
//! Euclidean projection onto it.
//!
//! A contact of dimension `d` (MuJoCo's `condim` 3, 4 or 6) has its normal row first and
//! `d - 1` frictional rows (two tangential; then torsional; then two rolling), each with its own
//! coefficient `mu_i >= 0`. Its impulse lives in
//!
//! `K_mu = { r = (r_n, r_f) : sqrt(sum_i (r_f,i / mu_i)^2) <= r_n }`
//!
//! (MuJoCo's documentation, "Computation", elliptic cones), where a row with `mu_i = 0` carries no
//! friction (`r_f,i = 0`). The dual cone is `K*_mu = { y : |D y_f| <= y_n }`, `D = diag(mu_i)`,
//! and De Saxce's modified velocity `u + |D u_f| e_n` turns the friction law into a
//! complementarity `K_mu ∋ r ⟂ u + |D u_f| e_n ∈ K*_mu`. With two equal coefficients this is the
//! Coulomb cone of [`crate::cone`], whose closed form it reproduces.
//!
//! **The projection** (no closed form once the coefficients differ): for `z` neither in `K_mu`
//! nor in its polar cone `-K*_mu` (whose projection is the apex), the nearest point lies on the
//! boundary. The Lagrange conditions of `min |p - z|^2 / 2` subject to `|D^-1 p_f| <= p_n` give,
//! with the multiplier `lambda > 0` and `t = p_n = z_n + lambda`,
//!
//! `p_f,i = z_f,i mu_i^2 t / (mu_i^2 t + lambda)`,
//!
//! and `lambda` is the root of `g(lambda) = sum_i (z_f,i mu_i / (mu_i^2 t + lambda))^2 - 1`,
//! strictly decreasing on `lambda > max(0, -z_n)`, positive at that end (`z` is outside both
//! cones) and at most `0` at `lambda = |D z_f|`: a safeguarded Newton iteration on that bracket
//! finds it to rounding. With equal coefficients the root is
//! `lambda = (mu |z_f| - mu^2 z_n) / (1 + mu^2)`, the closed form of [`crate::cone::project`].

/// The weighted norm `|D^-1 r_f|` of a cone point's frictional rows, `None` when a row with
/// `mu_i = 0` carries friction (the point is outside the cone whatever its normal).
fn scaled_friction(mu: &[f64], rf: &[f64]) -> Option<f64> {
    let mut s = 0.0;
    for (&m, &x) in mu.iter().zip(rf) {
        if m == 0.0 {
            if x != 0.0 {
                return None;
            }
        } else {
            s += (x / m) * (x / m);
        }
    }
    Some(s.sqrt())
}

/// `|D y_f|`: the dual cone's weighted norm of the frictional rows of `y`.
pub fn dual_norm(mu: &[f64], yf: &[f64]) -> f64 {
    mu.iter()
        .zip(yf)
        .map(|(m, y)| (m * y) * (m * y))
        .sum::<f64>()
        .sqrt()
}

/// Whether `r` (normal first, `1 + mu.len()` rows) lies in `K_mu`.
pub fn contains(mu: &[f64], r: &[f64]) -> bool {
    r[0] >= 0.0 && scaled_friction(mu, &r[1..]).is_some_and(|s| s <= r[0])
}

/// Projects `z` (normal first, `1 + mu.len()` rows) onto `K_mu`, into `out`. A row with
/// `mu_i = 0` is projected to 0 and the rest onto the cone of the other rows (the cone is their
/// cone times `{0}` in that row).
pub fn project(mu: &[f64], z: &[f64], out: &mut [f64]) {
    let (zn, zf) = (z[0], &z[1..]);
    let free: f64 = mu
        .iter()
        .zip(zf)
        .filter(|(m, _)| **m != 0.0)
        .map(|(m, x)| (x / m) * (x / m))
        .sum::<f64>()
        .sqrt();
    if zn >= 0.0 && free <= zn {
        out[0] = zn;
        for ((o, &m), &x) in out[1..].iter_mut().zip(mu).zip(zf) {
            *o = if m == 0.0 { 0.0 } else { x };
        }
        return;
    }
    // The polar cone -K*: |D z_f| <= -z_n projects to the apex.
    let dz = dual_norm(mu, zf);
    if dz <= -zn {
        out.fill(0.0);
        return;
    }
    let lambda = multiplier(mu, zn, zf, dz);
    let t = zn + lambda;
    out[0] = t;
    for ((o, &m), &x) in out[1..].iter_mut().zip(mu).zip(zf) {
        let m2 = m * m;
        *o = if m2 == 0.0 {
            0.0
        } else {
            x * m2 * t / (m2 * t + lambda)
        };
    }
}

/// The root `lambda` of `g` on `(max(0, -z_n), |D z_f|]` (see the module documentation), by
/// Newton's method kept inside a shrinking bracket (bisection where a step leaves it).
fn multiplier(mu: &[f64], zn: f64, zf: &[f64], dz: f64) -> f64 {
    let (mut lo, mut hi) = ((-zn).max(0.0), dz);
    let g_and_slope = |lambda: f64| {
        let t = zn + lambda;
        let (mut g, mut dg) = (-1.0, 0.0);
        for (&m, &x) in mu.iter().zip(zf) {
            let m2 = m * m;
            if m2 == 0.0 {
                continue;
            }
            let den = m2 * t + lambda;
            let a = x * m / den;
            g += a * a;
            dg -= 2.0 * a * a * (m2 + 1.0) / den;
        }
        (g, dg)
    };
    let mut lambda = 0.5 * (lo + hi);
    for _ in 0..200 {
        let (g, dg) = g_and_slope(lambda);
        if g > 0.0 {
            lo = lambda;
        } else {
            hi = lambda;
        }
        let newton = lambda - g / dg;
        let next = if dg < 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - lambda).abs() <= 4.0 * f64::EPSILON * lambda.abs().max(f64::MIN_POSITIVE)
            || hi - lo <= 4.0 * f64::EPSILON * hi
        {
            return next;
        }
        lambda = next;
    }
    lambda
}

/// Projects `y` onto the dual cone `K*_mu` into `out`, by Moreau's decomposition:
/// `P_K*(y) = y + P_K(-y)`.
/// `y` has at most six rows (`condim` 6).
pub fn project_dual(mu: &[f64], y: &[f64], out: &mut [f64]) {
    let mut neg = [0.0; 6];
    let neg = &mut neg[..y.len()];
    neg.iter_mut().zip(y).for_each(|(n, v)| *n = -v);
    project(mu, neg, out);
    out.iter_mut().zip(y).for_each(|(o, v)| *o += v);
}

/// De Saxce's modified velocity `u + |D u_f| e_n`, into `out`.
pub fn de_saxce(mu: &[f64], u: &[f64], out: &mut [f64]) {
    out.copy_from_slice(u);
    out[0] += dual_norm(mu, &u[1..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cone;
    use nalgebra::Vector3;
    use proptest::prelude::*;

    fn norm(v: &[f64]) -> f64 {
        v.iter().map(|x| x * x).sum::<f64>().sqrt()
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// A cone of dimension 3, 4 or 6 with some coefficients zero, and a point.
    fn cone_and_point() -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
        prop_oneof![Just(2usize), Just(3), Just(5)].prop_flat_map(|k| {
            (
                proptest::collection::vec(prop_oneof![1 => Just(0.0), 6 => 0.001..3.0f64], k),
                proptest::collection::vec(-10.0..10.0f64, k + 1),
            )
        })
    }

    proptest! {
        /// Moreau: `p = P_K(z)` is in `K`, `z - p` is in the polar cone `-K*` and orthogonal to
        /// `p`; together these characterise the Euclidean projection onto a closed convex cone.
        #[test]
        fn the_projection_is_the_euclidean_projection((mu, z) in cone_and_point()) {
            let mut p = vec![0.0; z.len()];
            project(&mu, &z, &mut p);
            let scale = 1.0 + norm(&z);
            let s = scaled_friction(&mu, &p[1..]);
            prop_assert!(p[0] >= 0.0 && s.is_some_and(|s| s <= p[0] * (1.0 + 1e-12) + 1e-12 * scale),
                "p = {p:?} not in the cone {mu:?}");
            let d: Vec<f64> = z.iter().zip(&p).map(|(a, b)| a - b).collect();
            prop_assert!(dual_norm(&mu, &d[1..]) <= -d[0] + 1e-9 * scale, "z - p = {d:?} not polar");
            prop_assert!(dot(&p, &d).abs() <= 1e-9 * scale * scale);
            let mut again = vec![0.0; z.len()];
            project(&mu, &p, &mut again);
            prop_assert!(norm(&again.iter().zip(&p).map(|(a, b)| a - b).collect::<Vec<_>>()) <= 1e-9 * scale);
        }

        /// Two equal coefficients: the Coulomb cone's closed form.
        #[test]
        fn equal_coefficients_give_the_coulomb_cone(m in 0.0..3.0f64, z in proptest::collection::vec(-10.0..10.0f64, 3)) {
            let mut p = vec![0.0; 3];
            project(&[m, m], &z, &mut p);
            let want = cone::project(m, Vector3::new(z[0], z[1], z[2]));
            for i in 0..3 {
                prop_assert!((p[i] - want[i]).abs() <= 1e-12 * (1.0 + norm(&z)), "{p:?} vs {want:?}");
            }
        }

        /// The dual projection lands in `K*`, and De Saxce's velocity of a `u` with `u_n >= 0`
        /// is in `K*` (`u_n + |D u_f| >= |D u_f|`).
        #[test]
        fn dual_projection_and_de_saxce((mu, y) in cone_and_point()) {
            let mut p = vec![0.0; y.len()];
            project_dual(&mu, &y, &mut p);
            prop_assert!(dual_norm(&mu, &p[1..]) <= p[0] + 1e-9 * (1.0 + norm(&y)));
            let mut hat = vec![0.0; y.len()];
            let u: Vec<f64> = std::iter::once(y[0].abs()).chain(y[1..].iter().copied()).collect();
            de_saxce(&mu, &u, &mut hat);
            let mut q = vec![0.0; y.len()];
            project_dual(&mu, &hat, &mut q);
            prop_assert!(norm(&q.iter().zip(&hat).map(|(a, b)| a - b).collect::<Vec<_>>()) <= 1e-9 * (1.0 + norm(&y)));
        }
    }

    #[test]
    fn a_zero_coefficient_row_carries_no_friction() {
        // Torsional coefficient 0: the cone is flat in that row.
        let mu = [1.0, 1.0, 0.0];
        assert!(!contains(&mu, &[1.0, 0.1, 0.1, 0.01]));
        let mut p = [0.0; 4];
        project(&mu, &[1.0, 0.1, 0.1, 0.5], &mut p);
        assert_eq!(p, [1.0, 0.1, 0.1, 0.0]);
        // Below the apex: the apex.
        project(&mu, &[-1.0, 0.1, 0.1, 5.0], &mut p);
        assert_eq!(p, [0.0; 4]);
    }
}
