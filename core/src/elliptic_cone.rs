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
//!
//! Its derivatives, by the implicit function theorem on those Lagrange conditions: with respect
//! to `z` ([`project_jacobian`]) and to the coefficients ([`project_mu_derivative`], for the
//! sensitivity of an answer to `mu`).

/// The weighted norm `|D^-1 r_f|` of a cone point's frictional rows, `None` when a row with
/// `mu_i = 0` carries friction (the point is outside the cone whatever its normal).
pub fn scaled_friction(mu: &[f64], rf: &[f64]) -> Option<f64> {
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

/// The derivative `dP/dz` of the projection onto `K_mu` at `z` (normal first,
/// `d = 1 + mu.len() <= 6` rows), into `out` (row-major `d x d`).
///
/// Only the normal row and the rows with `mu_i > 0` move (a row with `mu_i = 0` is projected
/// to 0 whatever `z`: its row and column of the derivative are 0); on those rows it is
///
/// * the identity where `z` is in `K_mu` (its boundary included, as [`crate::cone`] has it);
/// * 0 where `z` is in the polar cone `-K*_mu` (it projects to the apex);
/// * elsewhere the implicit-function derivative of the projection's KKT system
///   `p - z + lambda grad g(p) = 0`, `g(p) = |D^-1 p_f| - p_n = 0` (`lambda > 0`, see the module
///   documentation): with `s = |D^-1 p_f| = p_n`, `a = D^-2 p_f / s`, `grad g = (-1, a)` and
///   `Hess g = [0, 0; 0, (D^-2 - a a') / s]`, the bordered system
///   `(I + lambda Hess g) dp + grad g dlambda = dz`, `grad g' dp = 0` gives
///   `dP/dz = M^-1 - M^-1 b b' M^-1 / (b' M^-1 b)` with `M = I + lambda Hess g`, `b = grad g`.
///
/// With two equal coefficients this is [`crate::cone::project_jacobian`]'s closed form.
pub fn project_jacobian(mu: &[f64], z: &[f64], out: &mut [f64]) {
    let d = z.len();
    out[..d * d].fill(0.0);
    let mut free = [0usize; 6];
    let k = free_rows(mu, &mut free);
    let free = &free[..k];
    match side(mu, z, free) {
        Side::Inside => free.iter().for_each(|&i| out[i * d + i] = 1.0),
        Side::Polar => {}
        Side::Boundary(dz) => boundary_jacobian(mu, z, free, dz, out),
    }
}

/// The rows the cone leaves free: the normal, then each frictional row with `mu_i > 0`, into
/// `free`; their number.
fn free_rows(mu: &[f64], free: &mut [usize; 6]) -> usize {
    let mut k = 0;
    for i in 0..=mu.len() {
        if i == 0 || mu[i - 1] != 0.0 {
            free[k] = i;
            k += 1;
        }
    }
    k
}

/// Where `z` lies for the projection onto `K_mu` (the `free` rows of [`free_rows`]).
enum Side {
    /// In `K_mu`, the rows without a coefficient not counted: the projection is `z` there.
    Inside,
    /// In the polar cone `-K*_mu`: the projection is the apex.
    Polar,
    /// Neither: the projection lies on the boundary; `|D z_f|` with it.
    Boundary(f64),
}

fn side(mu: &[f64], z: &[f64], free: &[usize]) -> Side {
    let zn = z[0];
    let scaled = free[1..]
        .iter()
        .map(|&i| (z[i] / mu[i - 1]).powi(2))
        .sum::<f64>()
        .sqrt();
    if zn >= 0.0 && scaled <= zn {
        return Side::Inside;
    }
    let dz = dual_norm(mu, &z[1..]);
    if dz <= -zn {
        Side::Polar
    } else {
        Side::Boundary(dz)
    }
}

/// The projection's KKT system on the boundary away from the apex, on the `free` rows
/// (normal first): the multiplier `lambda`, `t = p_n = s`, the projection `p` (all rows),
/// `grad g = (-1, a)` on the free rows and the bordered matrix `[M, b; b', 0]` (`k + 1`
/// square, row-major), `M = I + lambda Hess g` with `Hess g = (D^-2 - a a') / s` on the
/// frictional rows ([`project_jacobian`]).
struct Kkt {
    lambda: f64,
    t: f64,
    p: [f64; 6],
    b: [f64; 6],
    a: [f64; 49],
}

impl Kkt {
    fn new(mu: &[f64], z: &[f64], free: &[usize], dz: f64) -> Kkt {
        let k = free.len();
        let lambda = multiplier(mu, z[0], &z[1..], dz);
        let t = z[0] + lambda;
        let (mut p, mut b) = ([0.0; 6], [0.0; 6]);
        p[0] = t;
        b[0] = -1.0;
        for (j, &i) in free.iter().enumerate().skip(1) {
            let m2 = mu[i - 1] * mu[i - 1];
            p[i] = z[i] * m2 * t / (m2 * t + lambda);
            b[j] = p[i] / (m2 * t);
        }
        let m = k + 1;
        let mut a = [0.0; 49];
        for r in 0..k {
            for c in 0..k {
                let mut v = if r == c { 1.0 } else { 0.0 };
                if r > 0 && c > 0 {
                    let inv_m2 = if r == c {
                        1.0 / (mu[free[r] - 1] * mu[free[r] - 1])
                    } else {
                        0.0
                    };
                    v += lambda * (inv_m2 - b[r] * b[c]) / t;
                }
                a[r * m + c] = v;
            }
            a[r * m + k] = b[r];
            a[k * m + r] = b[r];
        }
        Kkt { lambda, t, p, b, a }
    }
}

/// [`project_jacobian`] where the projection lies on the boundary away from the apex: solves
/// the bordered KKT system on the `free` rows (normal first) for each unit `dz`.
fn boundary_jacobian(mu: &[f64], z: &[f64], free: &[usize], dz: f64, out: &mut [f64]) {
    let (d, k) = (z.len(), free.len());
    let mut kkt = Kkt::new(mu, z, free, dz);
    let m = k + 1;
    // Right-hand sides: the unit dz of each free row; the last row (grad g' dp = 0) is 0.
    let mut rhs = [0.0; 42];
    for r in 0..k {
        rhs[r * k + r] = 1.0;
    }
    solve_dense(&mut kkt.a[..m * m], &mut rhs[..m * k], m, k);
    for (r, &i) in free.iter().enumerate() {
        for (c, &j) in free.iter().enumerate() {
            out[i * d + j] = rhs[r * k + c];
        }
    }
}

/// The derivative of the projection onto `K_mu` at a fixed `z` along a change `dmu` of the
/// coefficients (one per frictional row), into `out` (`1 + mu.len()` rows).
///
/// It is 0 where `z` is in `K_mu` (the projection is `z`) or in the polar cone (the apex);
/// rows with `mu_i = 0` are projected to 0 and stay there (the one-sided choice: the
/// derivative does not open a frictionless row). On the boundary, the KKT system of
/// [`project_jacobian`] differentiated in `mu` at fixed `z`:
/// `M dp + b dlambda = -lambda (d a / d mu) dmu`, `b' dp = -(d g / d mu) dmu`, with
/// `(d g / d mu) dmu = -sum_k p_k^2 dmu_k / (mu_k^3 s)` and
/// `(d a_i / d mu) dmu = -2 p_i dmu_i / (mu_i^3 s) - (a_i / s) (d g / d mu) dmu`
/// (`s = |D^-1 p_f| = p_n` on the boundary).
pub fn project_mu_derivative(mu: &[f64], z: &[f64], dmu: &[f64], out: &mut [f64]) {
    let d = z.len();
    out[..d].fill(0.0);
    let mut free = [0usize; 6];
    let k = free_rows(mu, &mut free);
    let free = &free[..k];
    let Side::Boundary(dz) = side(mu, z, free) else {
        return;
    };
    let mut kkt = Kkt::new(mu, z, free, dz);
    let (lambda, s) = (kkt.lambda, kkt.t);
    let dg: f64 = free[1..]
        .iter()
        .map(|&i| -kkt.p[i] * kkt.p[i] * dmu[i - 1] / (mu[i - 1].powi(3) * s))
        .sum();
    let m = k + 1;
    let mut rhs = [0.0; 7];
    for (j, &i) in free.iter().enumerate().skip(1) {
        let da = -2.0 * kkt.p[i] * dmu[i - 1] / (mu[i - 1].powi(3) * s) - kkt.b[j] * dg / s;
        rhs[j] = -lambda * da;
    }
    rhs[k] = -dg;
    solve_dense(&mut kkt.a[..m * m], &mut rhs[..m], m, 1);
    for (j, &i) in free.iter().enumerate() {
        out[i] = rhs[j];
    }
}

/// Solves `A X = B` in place (`A` `n x n`, `B` `n x m`, both row-major; `X` into `B`) by
/// Gaussian elimination with partial pivoting: the bordered KKT matrix is symmetric but
/// indefinite, and at most 7 square, so no factorization of a library pays for itself.
fn solve_dense(a: &mut [f64], b: &mut [f64], n: usize, m: usize) {
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap_or(col);
        if pivot != col {
            for c in 0..n {
                a.swap(col * n + c, pivot * n + c);
            }
            for c in 0..m {
                b.swap(col * m + c, pivot * m + c);
            }
        }
        let p = a[col * n + col];
        for r in col + 1..n {
            let f = a[r * n + col] / p;
            if f == 0.0 {
                continue;
            }
            for c in col..n {
                a[r * n + c] -= f * a[col * n + c];
            }
            for c in 0..m {
                b[r * m + c] -= f * b[col * m + c];
            }
        }
    }
    for col in (0..n).rev() {
        let p = a[col * n + col];
        for c in 0..m {
            let s: f64 = (col + 1..n).map(|j| a[col * n + j] * b[j * m + c]).sum();
            b[col * m + c] = (b[col * m + c] - s) / p;
        }
    }
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
    use rand::Rng;

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

    /// Central differences of the projection at `z`, row-major.
    fn fd_jacobian(mu: &[f64], z: &[f64]) -> Vec<f64> {
        let d = z.len();
        let h = 1e-6 * (1.0 + norm(z));
        let mut j = vec![0.0; d * d];
        let (mut pp, mut pm) = (vec![0.0; d], vec![0.0; d]);
        for c in 0..d {
            let (mut zp, mut zm) = (z.to_vec(), z.to_vec());
            zp[c] += h;
            zm[c] -= h;
            project(mu, &zp, &mut pp);
            project(mu, &zm, &mut pm);
            for r in 0..d {
                j[r * d + c] = (pp[r] - pm[r]) / (2.0 * h);
            }
        }
        j
    }

    /// A point of `region` (0 inside `K_mu`, 1 in the polar cone, 2 projecting onto the
    /// boundary), built a margin away from the other regions so that a difference quotient
    /// stays on one piece.
    fn point_in(mu: &[f64], region: u8, rng: &mut impl rand::Rng) -> Vec<f64> {
        let mut z: Vec<f64> = (0..=mu.len())
            .map(|_| rng.random_range(-2.0..2.0))
            .collect();
        let scaled = scaled_friction(
            mu,
            &z[1..]
                .iter()
                .zip(mu)
                .map(|(x, m)| if *m == 0.0 { 0.0 } else { *x })
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let dz = dual_norm(mu, &z[1..]);
        z[0] = match region {
            0 => scaled / rng.random_range(0.1..0.9),
            1 => -dz / rng.random_range(0.1..0.9),
            _ => -dz + rng.random_range(0.05..0.95) * (scaled + dz),
        };
        z
    }

    /// The derivative matches central differences in each of the three regions, for `condim`
    /// 3 with equal and unequal coefficients, 4 (one with a zero torsional coefficient) and 6.
    #[test]
    fn project_jacobian_matches_finite_differences_in_every_region() {
        every_region(7, |mu, region, z, _| {
            let d = mu.len() + 1;
            let mut j = vec![0.0; d * d];
            project_jacobian(mu, z, &mut j);
            let fd = fd_jacobian(mu, z);
            for k in 0..d * d {
                assert!(
                    (j[k] - fd[k]).abs() <= 1e-5 * (1.0 + fd[k].abs()),
                    "mu {mu:?} region {region} z {z:?} entry {k}: {} vs {}",
                    j[k],
                    fd[k]
                );
            }
        });
    }

    /// Calls `check(mu, region, z, rng)` at 20 points of each region (0 inside `K_mu`, 1 in the
    /// polar cone, 2 between) of `condim` 3 cones with equal and unequal coefficients, 4 (one
    /// with a zero torsional coefficient) and 6.
    fn every_region(
        seed: u64,
        mut check: impl FnMut(&[f64], u8, &[f64], &mut rand_chacha::ChaCha8Rng),
    ) {
        use rand::SeedableRng;
        let cones: [&[f64]; 5] = [
            &[0.5, 0.5],
            &[0.3, 1.2],
            &[0.9, 0.5, 0.02],
            &[1.0, 0.4, 0.0],
            &[0.8, 0.6, 0.05, 0.01, 0.02],
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for mu in cones {
            for region in 0..3 {
                for _ in 0..20 {
                    let z = point_in(mu, region, &mut rng);
                    check(mu, region, &z, &mut rng);
                }
            }
        }
    }

    /// The derivative in `mu` matches central differences of the projection in each region
    /// (0 inside and at the apex), for the cones of the `dz` test and random directions; on the
    /// Coulomb cone it is the closed form's `mu`-derivative: for `z` sliding,
    /// `p_n = (z_n + mu |z_t|) / (1 + mu^2)` and `p_t = mu p_n z_t / |z_t|`.
    #[test]
    fn project_mu_derivative_matches_finite_differences_in_every_region() {
        let h = 1e-6;
        every_region(11, |mu, region, z, rng| {
            let d = mu.len() + 1;
            let dmu: Vec<f64> = mu
                .iter()
                .map(|m| {
                    if *m == 0.0 {
                        0.0
                    } else {
                        rng.random_range(-1.0..1.0)
                    }
                })
                .collect();
            let mut got = vec![0.0; d];
            project_mu_derivative(mu, z, &dmu, &mut got);
            let shifted = |t: f64| {
                let m: Vec<f64> = mu.iter().zip(&dmu).map(|(m, e)| m + t * e).collect();
                let mut p = vec![0.0; d];
                project(&m, z, &mut p);
                p
            };
            let (hi, lo) = (shifted(h), shifted(-h));
            for k in 0..d {
                let fd = (hi[k] - lo[k]) / (2.0 * h);
                assert!(
                    (got[k] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "mu {mu:?} region {region} z {z:?} row {k}: {} vs {fd}",
                    got[k]
                );
                if region < 2 {
                    assert_eq!(got[k], 0.0);
                }
            }
        });
        // The Coulomb closed form, differentiated by hand at mu = 0.5, z = (0.2, 1, 0).
        let (m, zn, zt) = (0.5f64, 0.2, 1.0);
        let pn = (zn + m * zt) / (1.0 + m * m);
        let dpn = (zt * (1.0 + m * m) - 2.0 * m * (zn + m * zt)) / (1.0 + m * m).powi(2);
        let mut got = [0.0; 3];
        project_mu_derivative(&[m, m], &[zn, zt, 0.0], &[1.0, 1.0], &mut got);
        assert!((got[0] - dpn).abs() < 1e-14, "{} vs {dpn}", got[0]);
        assert!((got[1] - (pn + m * dpn)).abs() < 1e-14);
        assert_eq!(got[2], 0.0);
    }

    /// Two equal (positive) coefficients: the closed form of the Coulomb cone's derivative.
    #[test]
    fn project_jacobian_with_equal_coefficients_is_the_coulomb_cones() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..500 {
            let m = rng.random_range(0.01..3.0);
            let z: Vec<f64> = (0..3).map(|_| rng.random_range(-10.0..10.0)).collect();
            let mut j = [0.0; 9];
            project_jacobian(&[m, m], &z, &mut j);
            let want = cone::project_jacobian(m, Vector3::new(z[0], z[1], z[2]));
            for r in 0..3 {
                for c in 0..3 {
                    assert!(
                        (j[3 * r + c] - want[(r, c)]).abs() <= 1e-9,
                        "mu {m} z {z:?} ({r},{c}): {} vs {}",
                        j[3 * r + c],
                        want[(r, c)]
                    );
                }
            }
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
