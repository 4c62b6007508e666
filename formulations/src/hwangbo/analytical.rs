//! The analytical method Hwangbo, Lee and Hutter 2018 compare against (sec. V-B, Table I;
//! after Preclik, Eibl and Rüde 2017): the slipping impulse of the maximum-dissipation model
//! (eq. 12) in closed form through a quartic polynomial. Our derivation:
//!
//! In the zero-normal-velocity plane, with tangential coordinates `x = lambda_t`, the energy of
//! eq. 12 is `(x - x*)' Wbar (x - x*) / 2` (eq. 16's `Wbar`, the Schur complement of `W_nn`;
//! `x* = lambda*_t`) and the conic is `|x| = a - b . x` with `a = -mu c_n / W_nn`,
//! `b = mu W_nt / W_nn` (eq. 14). Scaled, `y = x / a`, `S = Wbar / tr(Wbar)`, `z = x* / a`:
//! minimise `(y - z)' S (y - z) / 2` subject to `q(y) = y' A y + 2 b' y - 1 = 0`,
//! `A = I - b b'` (the conic squared). Stationarity `S (y - z) + nu (A y + b) = 0` gives
//! `y(nu) = adj(S + nu A) (S z - nu b) / det(S + nu A)`, whose numerator `N(nu)` and
//! denominator `d(nu)` are quadratics; `q(y(nu)) d^2 = N' A N + 2 d b' N - d^2 = 0` is a
//! quartic in the multiplier `nu`.
//!
//! Its roots are the eigenvalues of the companion matrix (nalgebra's real Schur form of a
//! fixed 4x4 matrix: no allocation), after scaling `nu` to make the coefficients balanced and
//! dropping leading coefficients below `1e-14` of the largest (a degenerate conic lowers the
//! degree), each polished by Newton's method on the quartic. Every root's real part is a
//! candidate: `y(nu)` gives an angle, the angle a point of the conic (eq. 14, so the answer
//! lies on the cone in the plane however inexact the root), and the candidate of least energy
//! wins: the global minimum is among the stationary points, and spurious candidates (complex
//! pairs, the other branch of a hyperbola) only cost an evaluation.
//!
//! The multiplier is ill-conditioned where the conic is elongated (the map from `nu` to the
//! angle amplifies its rounding: relative errors up to 5e-7 against the reference on blocks of
//! condition number 1e6 before this step), so the winning angle gets up to `angle_steps`
//! Newton steps on eq. 15's `dE/dtheta` ([`SlipConic::slope`], second derivative by a central
//! difference), each kept only when it lowers the energy.

use contactlab_core::drivers::sweep::{ContactSolver, FrictionModel, LocalError, LocalSolution};
use nalgebra::{Matrix2, Matrix3, Matrix4, Vector2, Vector3};
use serde::{Deserialize, Serialize};

use super::single::{per_contact_solver, SlipConic, SlipMethod};

/// The quartic closed form and its root polishing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Analytical {
    /// Newton steps on the quartic per root, at most.
    pub newton_steps: u32,
    /// Newton steps on `dE/dtheta` at the winning angle, at most.
    pub angle_steps: u32,
}

impl Default for Analytical {
    fn default() -> Self {
        Analytical {
            newton_steps: 4,
            angle_steps: 2,
        }
    }
}

/// `p0 + p1 nu`.
type Lin = [f64; 2];
/// Coefficients by ascending degree.
type Quad = [f64; 3];
type Quartic = [f64; 5];

fn mul_lin(p: Lin, q: Lin) -> Quad {
    [p[0] * q[0], p[0] * q[1] + p[1] * q[0], p[1] * q[1]]
}

fn mul_quad(p: Quad, q: Quad) -> Quartic {
    let mut out = [0.0; 5];
    for (i, pi) in p.iter().enumerate() {
        for (j, qj) in q.iter().enumerate() {
            out[i + j] += pi * qj;
        }
    }
    out
}

fn add_quad(p: Quad, q: Quad, s: f64) -> Quad {
    [p[0] + s * q[0], p[1] + s * q[1], p[2] + s * q[2]]
}

/// `p(nu)` and `p'(nu)` by Horner's rule.
fn eval(p: &Quartic, nu: f64) -> (f64, f64) {
    let (mut v, mut d) = (0.0, 0.0);
    for c in p.iter().rev() {
        d = d * nu + v;
        v = v * nu + c;
    }
    (v, d)
}

/// The quartic in `nu` of the module documentation.
fn quartic(s: &Matrix2<f64>, a: &Matrix2<f64>, b: &Vector2<f64>, z: &Vector2<f64>) -> Quartic {
    let p = |i: usize, j: usize| -> Lin { [s[(i, j)], a[(i, j)]] };
    let neg = |l: Lin| -> Lin { [-l[0], -l[1]] };
    let adj = [[p(1, 1), neg(p(0, 1))], [neg(p(1, 0)), p(0, 0)]];
    let sz = s * z;
    let rhs: [Lin; 2] = [[sz[0], -b[0]], [sz[1], -b[1]]];
    let n: [Quad; 2] =
        [0, 1].map(|i| add_quad(mul_lin(adj[i][0], rhs[0]), mul_lin(adj[i][1], rhs[1]), 1.0));
    let d = add_quad(mul_lin(p(0, 0), p(1, 1)), mul_lin(p(0, 1), p(1, 0)), -1.0);
    let mut out = [0.0; 5];
    for i in 0..2 {
        for j in 0..2 {
            let t = mul_quad(n[i], n[j]);
            (0..5).for_each(|k| out[k] += a[(i, j)] * t[k]);
        }
    }
    let bn = add_quad(n[0].map(|c| c * b[0]), n[1], b[1]);
    let dbn = mul_quad(d, bn);
    let dd = mul_quad(d, d);
    (0..5).for_each(|k| out[k] += 2.0 * dbn[k] - dd[k]);
    out
}

/// The real parts of the quartic's roots (four; padded with zeros when the degree is lower),
/// or `None` when the polynomial is zero or constant.
fn roots(p: &Quartic) -> Option<[f64; 4]> {
    let big = p.iter().fold(0.0f64, |m, c| m.max(c.abs()));
    if !(big > 0.0 && big.is_finite()) {
        return None;
    }
    let deg = (1..5).rev().find(|&k| p[k].abs() > 1e-14 * big)?;
    // Scale nu = sigma m so that the lowest and highest kept coefficients match in size.
    let low = (0..deg).find(|&k| p[k] != 0.0).unwrap_or(deg);
    let sigma = if low < deg {
        (p[low].abs() / p[deg].abs()).powf(1.0 / (deg - low) as f64)
    } else {
        1.0
    };
    let sigma = if sigma > 0.0 && sigma.is_finite() {
        sigma
    } else {
        1.0
    };
    // Monic coefficients in m, padded to degree 4 with zero roots.
    let mut monic = [0.0; 4];
    for k in 0..deg {
        monic[4 - deg + k] = p[k] * sigma.powi(k as i32) / (p[deg] * sigma.powi(deg as i32));
    }
    let mut companion = Matrix4::zeros();
    for i in 1..4 {
        companion[(i, i - 1)] = 1.0;
    }
    for i in 0..4 {
        companion[(i, 3)] = -monic[i];
    }
    let ev = companion.complex_eigenvalues();
    Some([0, 1, 2, 3].map(|i| ev[i].re * sigma))
}

impl SlipMethod for Analytical {
    fn slip(&self, k: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError> {
        let (a, b) = k.focal_form();
        let (wbar, _) = k.hybrid();
        let scale = wbar.trace();
        if !(a > 0.0 && scale > 0.0) {
            return Err(LocalError::SingularBlock);
        }
        let s = wbar / scale;
        let am = Matrix2::identity() - b * b.transpose();
        let z = Vector2::new(k.stick[1], k.stick[2]) / a;
        let q = quartic(&s, &am, &b, &z);
        let nus = roots(&q).ok_or(LocalError::NoBracket("the quartic vanishes"))?;
        let mut steps = 0u32;
        let mut best: Option<(f64, f64, Vector3<f64>)> = None;
        for mut nu in nus {
            for _ in 0..self.newton_steps {
                let (v, d) = eval(&q, nu);
                if d == 0.0 || v == 0.0 {
                    break;
                }
                steps += 1;
                let next = nu - v / d;
                if !next.is_finite() {
                    break;
                }
                let done = (next - nu).abs() <= 4.0 * f64::EPSILON * nu.abs();
                nu = next;
                if done {
                    break;
                }
            }
            let p = s + nu * am;
            let det = p.determinant();
            if det == 0.0 || !det.is_finite() {
                continue;
            }
            let rhs = s * z - nu * b;
            let y0 = p[(1, 1)] * rhs[0] - p[(0, 1)] * rhs[1];
            let y1 = -p[(1, 0)] * rhs[0] + p[(0, 0)] * rhs[1];
            // det's sign flips the direction: y = (y0, y1) / det.
            let theta = (y1 / det).atan2(y0 / det);
            if let Some((_, l)) = k.point(theta) {
                let e = k.plane_energy(&l);
                if best.is_none_or(|(be, _, _)| e < be) {
                    best = Some((e, theta, l));
                }
            }
        }
        let (_, mut theta, mut lambda) = best.ok_or(LocalError::NoBracket(
            "no root of the quartic is on the conic",
        ))?;
        for _ in 0..self.angle_steps {
            let Some((r, _)) = k.point(theta) else { break };
            let g = k.slope(theta, r);
            let h = 1e-6;
            let (Some((rp, _)), Some((rm, _))) = (k.point(theta + h), k.point(theta - h)) else {
                break;
            };
            let dg = (k.slope(theta + h, rp) - k.slope(theta - h, rm)) / (2.0 * h);
            let next = theta - g / dg;
            if !(dg > 0.0 && next.is_finite() && (next - theta).abs() < 0.1) {
                break;
            }
            steps += 1;
            match k.point(next) {
                Some((_, l)) if k.plane_energy_difference(&l, &lambda) <= 0.0 => {
                    theta = next;
                    lambda = l;
                }
                _ => break,
            }
        }
        Ok((lambda, steps))
    }
}

per_contact_solver!(Analytical);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quartic_vanishes_at_the_multiplier_of_a_circle() {
        // S = I, A = I (b = 0), z = (2, 0): y(nu) = z / (1 + nu) on |y| = 1 at nu = 1 and -3.
        let q = quartic(
            &Matrix2::identity(),
            &Matrix2::identity(),
            &Vector2::zeros(),
            &Vector2::new(2.0, 0.0),
        );
        for nu in [1.0, -3.0] {
            assert!(eval(&q, nu).0.abs() < 1e-12, "{q:?}");
        }
        let mut r = roots(&q).unwrap();
        r.sort_by(f64::total_cmp);
        assert!(
            (r[0] + 3.0).abs() < 1e-9 && (r[3] - 1.0).abs() < 1e-9,
            "{r:?}"
        );
    }
}
