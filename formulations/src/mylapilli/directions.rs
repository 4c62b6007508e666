//! The friction directions of the polyhedral cone (eq. 14) and the map between pyramid
//! impulses `beta_(i) = [F_n, beta_1, .., beta_nf]` and contact impulses `r_i = [r_n, r_t1, r_t2]`
//! (eqs. 15 and 19: `F_u = D_ beta_`).
//!
//! Direction `j` of contact `i` is the unit vector `d_j(i) = cos(a) t1 + sin(a) t2` with
//! `a = theta0_i + 2 pi j / n_f`, `j = 0 .. n_f - 1`, in the contact's tangent plane. The paper
//! leaves the choice open (eq. 14: "no restrictions on the number of direction vectors ... or
//! their orientation"); its examples use four directions aligned with the motion (example 1),
//! rotated by 45 degrees (example 2), or with one direction along `-v_t^-` (the pendulum, and
//! the paper's recommendation): [`Directions::uniform`], [`Directions::per_contact`],
//! [`Directions::aligned_against`].

use nalgebra::Vector3;

use super::error::MylapilliError;

/// Cosines and sines within this of 0 or 1 are snapped to the exact value, so that directions at
/// multiples of a quarter turn are the exact axes (`cos(pi / 2)` evaluates to `6e-17`, which is
/// rounding of the angle, not geometry).
const SNAP: f64 = 4.0 * f64::EPSILON;

/// The `n_f` friction directions of every contact: `d_j(i)` at angle
/// `theta0_i + 2 pi j / n_f` in the contact's `(t1, t2)` plane.
///
/// The constructors validate (`n_f >= 3`, finite angles); the maps expect a contact index below
/// [`Directions::num_contacts`] and slices of the documented lengths, and panic otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct Directions {
    n_f: usize,
    theta0: Vec<f64>,
    /// `(cos, sin)` of every direction, contact-major: entry `i * n_f + j`.
    cs: Vec<(f64, f64)>,
}

/// `(cos a, sin a)` with near-zero and near-one values snapped (see [`SNAP`]).
fn unit(a: f64) -> (f64, f64) {
    let (s, c) = a.sin_cos();
    let snap = |v: f64| {
        if v.abs() <= SNAP {
            0.0
        } else if (v.abs() - 1.0).abs() <= SNAP {
            v.signum()
        } else {
            v
        }
    };
    (snap(c), snap(s))
}

impl Directions {
    /// `n_f` directions per contact with the same offset `theta0` (radians) at every one of
    /// `num_contacts` contacts. `theta0 = 0` puts `d_0` along `t1`; with `n_f = 4`,
    /// `theta0 = pi / 4` is the paper's example 2.
    pub fn uniform(
        n_f: usize,
        theta0: f64,
        num_contacts: usize,
    ) -> Result<Directions, MylapilliError> {
        Directions::per_contact(n_f, vec![theta0; num_contacts])
    }

    /// `n_f` directions per contact with offset `theta0[i]` (radians) at contact `i`.
    pub fn per_contact(n_f: usize, theta0: Vec<f64>) -> Result<Directions, MylapilliError> {
        if n_f < 3 {
            return Err(MylapilliError::TooFewDirections(n_f));
        }
        if let Some((contact, &value)) = theta0.iter().enumerate().find(|(_, t)| !t.is_finite()) {
            return Err(MylapilliError::NonFiniteAngle { contact, value });
        }
        let step = std::f64::consts::TAU / n_f as f64;
        let cs = theta0
            .iter()
            .flat_map(|&t0| (0..n_f).map(move |j| unit(t0 + step * j as f64)))
            .collect();
        Ok(Directions { n_f, theta0, cs })
    }

    /// The paper's recommended choice (section "Friction cone discretization", and the
    /// pendulum): at each contact, `d_0` along `-v_t`, the opposite of the tangential part of
    /// `velocity` (normal first, three entries per contact; the paper uses the velocity before
    /// the impulse, `v_u^-`; callers with only a local problem may pass its free velocity `q`).
    /// Where `v_t = 0` the offset is 0 (`d_0 = t1`).
    pub fn aligned_against(n_f: usize, velocity: &[f64]) -> Result<Directions, MylapilliError> {
        Directions::per_contact(n_f, contactlab_core::frame::slip_angles(velocity)?)
    }

    /// Directions per contact.
    pub fn n_f(&self) -> usize {
        self.n_f
    }

    /// Number of contacts (the contact blocks of a problem, of any `condim`, in its order).
    pub fn num_contacts(&self) -> usize {
        self.theta0.len()
    }

    /// The offset `theta0` of contact `i`.
    pub fn theta0(&self, i: usize) -> f64 {
        self.theta0[i]
    }

    /// `(cos, sin)` of direction `j` of contact `i`: `d_j(i) = cos t1 + sin t2`.
    pub fn direction(&self, i: usize, j: usize) -> (f64, f64) {
        self.cs[i * self.n_f + j]
    }

    /// Column `k` of contact `i`'s `D_(i) = [e_n, d_1 .. d_nf]` (eq. 15) in the normal-first
    /// frame: `k = 0` is the normal `(1, 0, 0)`, `k = 1 + j` is `(0, cos, sin)` of direction `j`.
    pub fn column(&self, i: usize, k: usize) -> Vector3<f64> {
        if k == 0 {
            Vector3::new(1.0, 0.0, 0.0)
        } else {
            let (c, s) = self.direction(i, k - 1);
            Vector3::new(0.0, c, s)
        }
    }

    /// Contact `i`'s impulse `r_i = D_(i) beta_(i)` (eq. 15) from `beta_(i) = [F_n, beta_1 ..
    /// beta_nf]` (normal first, length `n_f + 1`).
    pub fn impulse_of(&self, i: usize, beta: &[f64]) -> Vector3<f64> {
        debug_assert_eq!(beta.len(), self.n_f + 1);
        let mut r = Vector3::new(beta[0], 0.0, 0.0);
        for j in 0..self.n_f {
            let (c, s) = self.direction(i, j);
            r[1] += c * beta[1 + j];
            r[2] += s * beta[1 + j];
        }
        r
    }

    /// The system impulse `F_u = D_ beta_` (eq. 19), normal first, three per contact, from the
    /// stacked `beta_ = col{beta_(i)}` (length `n_u (n_f + 1)`).
    pub fn impulses(&self, beta: &[f64]) -> Vec<f64> {
        let w = self.n_f + 1;
        (0..self.num_contacts())
            .flat_map(|i| {
                let r = self.impulse_of(i, &beta[i * w..(i + 1) * w]);
                [r[0], r[1], r[2]]
            })
            .collect()
    }

    /// A pyramid decomposition of contact `i`'s impulse: `F_n = r_n`, and `r_t` written on the
    /// two directions that bracket its angle with non-negative weights (all other `beta_j = 0`).
    /// For the regular polygon this is the decomposition with the least `sum_j beta_j`, so `r_i`
    /// lies in the polyhedral cone exactly when `sum_j beta_j <= mu r_n`. The paper needs only
    /// the forward map `D_ beta_`; this inverse is ours (for warm starts and tests).
    pub fn pyramid_of(&self, i: usize, r: Vector3<f64>) -> Vec<f64> {
        let n_f = self.n_f;
        let mut beta = vec![0.0; n_f + 1];
        beta[0] = r[0];
        let (t1, t2) = (r[1], r[2]);
        if t1 == 0.0 && t2 == 0.0 {
            return beta;
        }
        let step = std::f64::consts::TAU / n_f as f64;
        let a = (t2.atan2(t1) - self.theta0[i]).rem_euclid(std::f64::consts::TAU);
        let j = ((a / step).floor() as usize).min(n_f - 1);
        let k = (j + 1) % n_f;
        let (cj, sj) = self.direction(i, j);
        let (ck, sk) = self.direction(i, k);
        // Solve t = b_j d_j + b_k d_k (Cramer's rule; det = sin(2 pi / n_f) > 0 for n_f >= 3).
        let det = cj * sk - sj * ck;
        let bj = (t1 * sk - t2 * ck) / det;
        let bk = (cj * t2 - sj * t1) / det;
        // Only rounding makes them negative (the angle lies in the sector between d_j and d_k).
        beta[1 + j] = bj.max(0.0);
        beta[1 + k] += bk.max(0.0);
        beta
    }

    /// [`Directions::pyramid_of`] for every contact: the stacked `beta_` of `r` (normal first,
    /// three per contact).
    pub fn pyramids(&self, r: &[f64]) -> Vec<f64> {
        (0..self.num_contacts())
            .flat_map(|i| self.pyramid_of(i, Vector3::new(r[3 * i], r[3 * i + 1], r[3 * i + 2])))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::f64::consts::{FRAC_1_SQRT_2, FRAC_PI_4, PI};

    #[test]
    fn quarter_turns_are_exact_axes_and_45_degrees_is_diagonal() {
        let d = Directions::uniform(4, 0.0, 1).unwrap();
        let got: Vec<(f64, f64)> = (0..4).map(|j| d.direction(0, j)).collect();
        assert_eq!(got, vec![(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]);
        let d45 = Directions::uniform(4, FRAC_PI_4, 1).unwrap();
        let (c, s) = d45.direction(0, 1);
        assert!((c + FRAC_1_SQRT_2).abs() < 1e-15 && (s - FRAC_1_SQRT_2).abs() < 1e-15);
        assert_eq!(d45.column(0, 0), Vector3::new(1.0, 0.0, 0.0));
    }

    #[test]
    fn invalid_directions_are_errors() {
        assert_eq!(
            Directions::uniform(2, 0.0, 1),
            Err(MylapilliError::TooFewDirections(2))
        );
        assert!(matches!(
            Directions::per_contact(4, vec![0.0, f64::NAN]),
            Err(MylapilliError::NonFiniteAngle { contact: 1, .. })
        ));
        assert!(Directions::aligned_against(4, &[0.0, 1.0]).is_err());
        assert!(Directions::aligned_against(4, &[0.0, f64::INFINITY, 0.0]).is_err());
    }

    #[test]
    fn aligned_against_puts_d0_opposite_the_slip() {
        let v = [-1.0, 3.0, 4.0, 0.5, 0.0, 0.0, 0.0, 2.0, 0.0];
        let d = Directions::aligned_against(5, &v).unwrap();
        let (c, s) = d.direction(0, 0);
        assert!((c + 0.6).abs() < 1e-15 && (s + 0.8).abs() < 1e-15);
        // No slip: d_0 = t1.
        assert_eq!(d.direction(1, 0), (1.0, 0.0));
        // Slip along +t1: d_0 = -t1 (theta0 = atan2(-0, -2) = -pi, exact after snapping).
        assert_eq!(d.direction(2, 0), (-1.0, 0.0));
        assert!((d.theta0(2).abs() - PI).abs() < 1e-15);
    }

    proptest! {
        /// r -> beta_ -> r is the identity, beta_ >= 0, and r is in the polyhedral cone
        /// (sum beta <= mu r_n) exactly when it is inside the polygon inscribed in the cone.
        #[test]
        fn impulse_to_pyramid_round_trip(n_f in 3usize..9, theta0 in -7.0..7.0f64,
                                         rn in 0.0..3.0f64, t1 in -3.0..3.0f64, t2 in -3.0..3.0f64) {
            let d = Directions::uniform(n_f, theta0, 1).unwrap();
            let r = Vector3::new(rn, t1, t2);
            let beta = d.pyramid_of(0, r);
            prop_assert!(beta.iter().all(|&b| b >= 0.0) || rn < 0.0);
            prop_assert!((d.impulse_of(0, &beta) - r).norm() <= 1e-12 * (1.0 + r.norm()));
            prop_assert!(beta[1..].iter().filter(|&&b| b > 0.0).count() <= 2);
            // The pyramid's gauge: sum beta = |r_t| / (radius of the polygon in r_t's direction),
            // between |r_t| (on a vertex) and |r_t| / cos(pi / n_f) (mid-edge).
            let s: f64 = beta[1..].iter().sum();
            let tn = t1.hypot(t2);
            let c = (PI / n_f as f64).cos();
            prop_assert!(s >= tn - 1e-12 && s <= tn / c + 1e-12);
        }

        /// beta_ supported on two adjacent directions -> r -> beta_ is the identity.
        #[test]
        fn pyramid_to_impulse_round_trip(n_f in 3usize..9, theta0 in -7.0..7.0f64, j in 0usize..9,
                                         a in 0.01..2.0f64, b in 0.01..2.0f64, rn in 0.0..3.0f64) {
            let j = j % n_f;
            let d = Directions::uniform(n_f, theta0, 2).unwrap();
            let mut beta = vec![0.0; 2 * (n_f + 1)];
            beta[n_f + 1] = rn;
            beta[n_f + 2 + j] = a;
            beta[n_f + 2 + (j + 1) % n_f] = b;
            let r = d.impulses(&beta);
            prop_assert_eq!(&r[0..3], &[0.0, 0.0, 0.0]);
            let back = d.pyramids(&r);
            for (x, y) in back.iter().zip(&beta) {
                prop_assert!((x - y).abs() <= 1e-12, "{:?} vs {:?}", back, beta);
            }
        }

        /// Any beta_ >= 0 with sum beta <= mu F_n maps into the Coulomb cone (the polygon is
        /// inscribed in the circle).
        #[test]
        fn pyramid_impulses_lie_in_the_coulomb_cone(n_f in 3usize..9, theta0 in -7.0..7.0f64,
                                                    mu in 0.0..2.0f64, fnorm in 0.0..3.0f64,
                                                    w in proptest::collection::vec(0.0..1.0f64, 9)) {
            let d = Directions::uniform(n_f, theta0, 1).unwrap();
            let total: f64 = w[..n_f].iter().sum::<f64>().max(1e-300);
            let mut beta = vec![fnorm];
            beta.extend(w[..n_f].iter().map(|x| x / total * mu * fnorm));
            let r = d.impulse_of(0, &beta);
            prop_assert!(r[1].hypot(r[2]) <= mu * r[0] + 1e-12);
        }
    }
}
