//! A contact whose block moves nothing along one tangential direction: the out-of-plane tangent
//! of a planar model (dm_control's stacker and manipulator move in a vertical plane; their
//! contacts keep MuJoCo's three rows). There `W_aa` is singular, the paper's sticking impulse
//! `lambda* = -W_aa^-1 c` (sec. III-A) does not exist, and the slipping conic of eq. 14 is
//! degenerate; the paper's single-contact problem assumes a regular block.
//!
//! **The reduction.** Let `e` be the tangential null direction (`W_aa e = 0`, unit, in the
//! tangent plane) with no free velocity along it (`c . e = 0`). An impulse along `e` moves
//! nothing, so it changes neither eq. 12's energy nor any velocity: both friction laws (eq. 6
//! and eq. 8) see only the normal and the in-plane tangent `t = e_perp`, where the cone's section
//! is the segment `|lambda_t| <= mu lambda_n`. The contact is then the paper's problem in two
//! dimensions, `v_2 = c_2 + W_2 lambda_2` on the rows `(n, t)`:
//!
//! - sticking when `lambda*_2 = -W_2^-1 c_2` lies in the segment;
//! - otherwise slipping at one of the segment's two ends, `lambda_t = s mu lambda_n` with
//!   `s = +-1` and `lambda_n = -c_n / (W_nn + s mu W_nt)` from `v_n = 0` (eq. 14 at the two
//!   angles the conic keeps); under maximum dissipation (eq. 8) the end of least energy
//!   `(lambda - lambda*)' W_2 (lambda - lambda*) / 2` (eq. 12), under Coulomb's law (eq. 6) the
//!   end whose tangential velocity does not point along its impulse (`s v_t <= 0`; of two, the
//!   one of least energy).
//!
//! The impulse along `e` is set to zero: any value keeping the impulse in the cone is an answer
//! of the same velocity, and zero is the least (the minimum-norm answer). A block whose null
//! direction has a normal part, more than one null direction, or a free velocity along `e` (the
//! contact slides out of the plane whatever the impulse) is not reduced: it stays
//! [`LocalError::SingularBlock`].

use contactlab_core::drivers::sweep::{ContactMode, FrictionModel, LocalError, LocalSolution};
use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

/// An eigenvalue of `W_aa` at most this fraction of its largest is a null direction: a planar
/// model's out-of-plane row is zero to rounding (relative `1e-17` on dm_control's stacker), far
/// below any conditioning of a real contact block.
pub const NULL_RTOL: f64 = 1e-12;

/// The largest normal part of a null direction that still counts as tangential, and the
/// largest free velocity along it relative to `1 + |c|`.
const TANGENTIAL_TOL: f64 = 1e-8;

/// A contact whose block has one tangential null direction, ready to be solved in two
/// dimensions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanarContact {
    /// The in-plane tangent `t` (unit, tangential coordinates), perpendicular to the null one.
    pub t: Vector2<f64>,
    /// `W_2` on the rows `(n, t)`.
    pub w: Matrix2<f64>,
    /// `c_2 = (c_n, c . t)`.
    pub c: Vector2<f64>,
    /// The friction coefficient.
    pub mu: f64,
}

/// The contact's reduction to its plane when `w` (symmetric) has exactly one null direction, it
/// is tangential and `c` has no part along it; `None` otherwise.
pub fn reduce(w: &Matrix3<f64>, c: &Vector3<f64>, mu: f64) -> Option<PlanarContact> {
    let eig = w.symmetric_eigen();
    let lmax = eig.eigenvalues.amax();
    if !(lmax > 0.0 && lmax.is_finite()) {
        return None;
    }
    let null: Vec<usize> = (0..3)
        .filter(|&i| eig.eigenvalues[i].abs() <= NULL_RTOL * lmax)
        .collect();
    let [k] = null[..] else {
        return None;
    };
    let v = eig.eigenvectors.column(k);
    let tangential = Vector2::new(v[1], v[2]);
    let norm = tangential.norm();
    if v[0].abs() > TANGENTIAL_TOL || norm == 0.0 {
        return None;
    }
    let e = tangential / norm;
    if (c[1] * e[0] + c[2] * e[1]).abs() > TANGENTIAL_TOL * (1.0 + c.norm()) {
        return None;
    }
    let t = Vector2::new(-e[1], e[0]);
    let w_tt = Matrix2::new(w[(1, 1)], w[(1, 2)], w[(2, 1)], w[(2, 2)]);
    let w_nt = w[(0, 1)] * t[0] + w[(0, 2)] * t[1];
    Some(PlanarContact {
        t,
        w: Matrix2::new(w[(0, 0)], w_nt, w_nt, t.dot(&(w_tt * t))),
        c: Vector2::new(c[0], c[1] * t[0] + c[2] * t[1]),
        mu,
    })
}

impl PlanarContact {
    /// The three-row impulse of a two-row one `(lambda_n, lambda_t)`: zero along the null
    /// direction.
    fn lift(&self, l: Vector2<f64>) -> Vector3<f64> {
        Vector3::new(l[0], l[1] * self.t[0], l[1] * self.t[1])
    }

    /// The contact's impulse under `model` (a closing contact: `c_n < 0`), see the module's
    /// documentation. `SingularBlock` when `W_2` is not positive definite.
    pub fn solve(&self, model: FrictionModel) -> Result<LocalSolution, LocalError> {
        let chol = self.w.cholesky().ok_or(LocalError::SingularBlock)?;
        let stick = -chol.solve(&self.c);
        if !stick.iter().all(|x| x.is_finite()) {
            return Err(LocalError::SingularBlock);
        }
        let done = |l: Vector2<f64>, mode| LocalSolution {
            r: self.lift(l),
            mode,
            steps: 0,
        };
        if stick[1].abs() <= self.mu * stick[0] {
            return Ok(done(stick, ContactMode::Sticking));
        }
        if self.mu == 0.0 {
            let l = Vector2::new(-self.c[0] / self.w[(0, 0)], 0.0);
            return Ok(done(l, ContactMode::Slipping));
        }
        self.slip(stick, model)
            .map(|l| done(l, ContactMode::Slipping))
            .ok_or(LocalError::NoBracket(
                "planar contact: no end of the segment",
            ))
    }

    /// The slipping end of the segment (see the module's documentation), `None` when neither
    /// end has a positive normal impulse.
    fn slip(&self, stick: Vector2<f64>, model: FrictionModel) -> Option<Vector2<f64>> {
        let energy = |l: &Vector2<f64>| 0.5 * (l - stick).dot(&(self.w * (l - stick)));
        let ends = [1.0, -1.0].map(|s: f64| {
            let ln = -self.c[0] / (self.w[(0, 0)] + s * self.mu * self.w[(0, 1)]);
            let l = Vector2::new(ln, s * self.mu * ln);
            let vt = self.c[1] + self.w[(1, 0)] * l[0] + self.w[(1, 1)] * l[1];
            (ln > 0.0 && ln.is_finite()).then_some((l, s * vt))
        });
        let valid = ends.iter().flatten();
        let least = |it: &mut dyn Iterator<Item = &(Vector2<f64>, f64)>| {
            it.min_by(|a, b| energy(&a.0).total_cmp(&energy(&b.0)))
                .map(|x| x.0)
        };
        match model {
            FrictionModel::MaximumDissipation => least(&mut valid.clone()),
            FrictionModel::Coulomb => {
                let scale = 1e-12 * (1.0 + self.c.amax());
                least(&mut valid.clone().filter(|x| x.1 <= scale))
                    .or_else(|| valid.min_by(|a, b| a.1.total_cmp(&b.1)).map(|x| x.0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hwangbo::single::{solve_contact, Reference};
    use crate::hwangbo::{Bisection, CoulombExact};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A planar block: `W = A A'` with `A` of rank two whose null direction is the tangent at
    /// `angle`, and `c` with no part along it.
    fn planar_block(rng: &mut ChaCha8Rng) -> (Matrix3<f64>, Vector3<f64>, Vector2<f64>) {
        let angle: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let e = Vector2::new(angle.cos(), angle.sin());
        let t = Vector3::new(0.0, -e[1], e[0]);
        let n = Vector3::new(1.0, 0.0, 0.0);
        let mut a = Matrix3::zeros();
        for (j, basis) in [n, t].iter().enumerate() {
            for i in 0..3 {
                a[(i, j)] = basis[i];
            }
        }
        let mix = Matrix3::new(
            rng.random_range(0.5..2.0),
            rng.random_range(-0.5..0.5),
            0.0,
            rng.random_range(-0.5..0.5),
            rng.random_range(0.5..2.0),
            0.0,
            0.0,
            0.0,
            0.0,
        );
        let b = a * mix;
        let w = b * b.transpose();
        let ct: f64 = rng.random_range(-3.0..3.0);
        let c = Vector3::new(rng.random_range(-1.0..-0.1), -e[1] * ct, e[0] * ct);
        (w, c, e)
    }

    /// On random planar blocks, under both laws: the answer has nothing along the null
    /// direction, lies in the cone, closes the normal velocity, and (regularising the null
    /// direction by `1e-9`, where the paper's methods apply) is the limit of the regular
    /// answers to `1e-6`; under Coulomb's law a slipping contact's velocity opposes its impulse.
    #[test]
    fn planar_contacts_are_the_limit_of_regular_ones() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut modes = [0usize; 2];
        for _ in 0..300 {
            let (w, c, e) = planar_block(&mut rng);
            let mu = rng.random_range(0.1..1.0);
            let p = reduce(&w, &c, mu).expect("one tangential null direction");
            let reg = w + 1e-9 * Matrix3::identity();
            for model in [FrictionModel::MaximumDissipation, FrictionModel::Coulomb] {
                let s = p.solve(model).unwrap();
                let r = s.r;
                assert!((r[1] * e[0] + r[2] * e[1]).abs() <= 1e-12, "{r}");
                assert!(r[1].hypot(r[2]) <= mu * r[0] * (1.0 + 1e-12), "{r}");
                let v = c + w * r;
                assert!(v[0].abs() <= 1e-10 * (1.0 + c.norm()), "{v}");
                let regular = match model {
                    FrictionModel::MaximumDissipation => {
                        solve_contact(&Reference::default(), &reg, &c, mu)
                    }
                    FrictionModel::Coulomb => solve_contact(&CoulombExact::default(), &reg, &c, mu),
                }
                .unwrap();
                assert!(
                    (regular.r - r).amax() <= 1e-6 * (1.0 + r.amax()),
                    "{r} against {}",
                    regular.r
                );
                if s.mode == ContactMode::Slipping && model == FrictionModel::Coulomb {
                    assert!(v[1] * r[1] + v[2] * r[2] <= 1e-10);
                }
                modes[usize::from(s.mode == ContactMode::Slipping)] += 1;
            }
        }
        assert!(
            modes[0] > 50 && modes[1] > 50,
            "both regimes met: {modes:?}"
        );
    }

    #[test]
    fn the_bisection_solves_a_planar_contact_through_its_reduction() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (w, c, _) = planar_block(&mut rng);
        let s = solve_contact(&Bisection::default(), &w, &c, 0.5).unwrap();
        let p = reduce(&w, &c, 0.5).unwrap();
        assert_eq!(s.r, p.solve(FrictionModel::MaximumDissipation).unwrap().r);
    }

    #[test]
    fn blocks_that_are_not_planar_are_not_reduced() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let (w, c, e) = planar_block(&mut rng);
        // A free velocity out of the plane: the contact slides along e whatever the impulse.
        let off = c + Vector3::new(0.0, e[0], e[1]);
        assert!(reduce(&w, &off, 0.5).is_none());
        // A regular block, a zero block, and a normal null direction.
        assert!(reduce(&Matrix3::identity(), &c, 0.5).is_none());
        assert!(reduce(&Matrix3::zeros(), &c, 0.5).is_none());
        let normal_null = Matrix3::from_diagonal(&Vector3::new(0.0, 1.0, 2.0));
        assert!(reduce(&normal_null, &Vector3::new(0.0, 0.3, 0.1), 0.5).is_none());
    }
}
