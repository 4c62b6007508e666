//! The single-contact problem of Hwangbo, Lee and Hutter 2018, sec. III-A: one contact with the
//! others frozen, `v = c + W lambda` (eq. 5; the paper's `M^-1` is our diagonal block `W_aa`),
//! normal first: `lambda = (lambda_n, lambda_t1, lambda_t2)`.
//!
//! Three cases ([`classify`]): opening (`c_n >= 0`: `lambda = 0`), sticking (the
//! zero-velocity impulse `lambda* = -W^-1 c` lies in the cone: `lambda*`), and slipping, where
//! the answer lies on the conic section of the cone `|lambda_t| = mu lambda_n` with the plane of
//! zero normal velocity ([`SlipConic`]). In polar form `lambda_t = r (cos theta, sin theta)`
//! the plane gives `r(theta)` (eq. 14) and `lambda_n = r / mu` (eq. 13 on the cone), so a
//! slipping solution is one angle. Which angle depends on the friction law: the paper's
//! maximum-dissipation model (eq. 8, as eqs. 11-12: the point of the conic closest to
//! `lambda*` in the metric `W^-1`, so `v_t` is *not* necessarily opposite to `lambda_t`) is
//! solved by [`Bisection`](super::Bisection), [`GoldenSection`](super::GoldenSection),
//! [`Analytical`](super::Analytical) and the test [`Reference`] here; Coulomb's law (eq. 6,
//! `v_t` opposite to `lambda_t`) by [`CoulombExact`](super::CoulombExact). The two coincide
//! when `W_nt = 0`.
//!
//! Every function here is allocation-free except the test [`Reference`], so the methods can be
//! timed one contact at a time ([`solve_contact`]).

use contactlab_core::drivers::sweep::{
    ContactMode, ContactSolver, FrictionModel, LocalError, LocalSolution,
};
use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

use super::planar::{self, PlanarContact};

/// A slipping contact's conic section and what the methods evaluate on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlipConic {
    /// `W_aa`, symmetrised.
    pub w: Matrix3<f64>,
    /// The free velocity `c` (`c_n < 0`: closing).
    pub c: Vector3<f64>,
    /// The friction coefficient (positive).
    pub mu: f64,
    /// The zero-velocity impulse `lambda* = -W^-1 c` (outside the cone).
    pub stick: Vector3<f64>,
    /// `W_nt = (W_n1, W_n2)`.
    w_nt: Vector2<f64>,
    /// `W_nn / mu`, eq. 14's denominator at `W_nt = 0`.
    wnn_over_mu: f64,
    /// Eq. 16's hybrid matrix `W_tt - W_tn W_nt / W_nn`: on the plane `v_t = cbar + wbar
    /// lambda_t` (the Schur complement of `W_nn`).
    wbar: Matrix2<f64>,
    /// Eq. 16's hybrid vector `c_t - W_tn c_n / W_nn`.
    cbar: Vector2<f64>,
}

impl SlipConic {
    fn new(w: Matrix3<f64>, c: Vector3<f64>, mu: f64, stick: Vector3<f64>) -> SlipConic {
        let wnn = w[(0, 0)];
        let w_tn = Vector2::new(w[(1, 0)], w[(2, 0)]);
        let w_tt = Matrix2::new(w[(1, 1)], w[(1, 2)], w[(2, 1)], w[(2, 2)]);
        SlipConic {
            w,
            c,
            mu,
            stick,
            w_nt: Vector2::new(w[(0, 1)], w[(0, 2)]),
            wnn_over_mu: wnn / mu,
            wbar: w_tt - w_tn * w_tn.transpose() / wnn,
            cbar: Vector2::new(c[1], c[2]) - w_tn * (c[0] / wnn),
        }
    }

    /// The start angle of Algorithm 1: `atan2` of the tangential part of `lambda*`, the angle of
    /// its projection onto the conic from the axis point `lambda^{T=0}`.
    pub fn theta0(&self) -> f64 {
        self.stick[2].atan2(self.stick[1])
    }

    /// Eq. 14 at the unit direction `e = (cos theta, sin theta)`:
    /// `r(theta) = -c_n / (W_nn / mu + W_n1 cos theta + W_n2 sin theta)`; not positive or not
    /// finite where the angle has no point on the conic (an open conic's gap).
    fn radius_at(&self, e: Vector2<f64>) -> f64 {
        -self.c[0] / (self.wnn_over_mu + self.w_nt.dot(&e))
    }

    /// The conic's point at `theta` with its radius, if the angle has one.
    pub fn point(&self, theta: f64) -> Option<(f64, Vector3<f64>)> {
        self.at(theta).map(|p| (p.r, p.lambda))
    }

    /// The conic's point at `theta`, if the angle has one, with what [`SlipConic::slope_at`]
    /// needs: one `sin_cos` serves the radius, the impulse and the slope, so a method pays
    /// for one angle once (the trigonometry is most of a step's cost).
    pub fn at(&self, theta: f64) -> Option<ConicPoint> {
        self.at_direction(theta, Vector2::from(cos_sin(theta)))
    }

    /// The conic's point at the mid-angle of two points `a` and `b` less than half a turn
    /// apart, if it has one. The bisector's direction is `(e_a + e_b) / |e_a + e_b|`: a square
    /// root instead of a `sin_cos`, the same angle up to rounding (the bisection's inner step).
    /// Near half a turn apart, where the sum cancels, the angle's `sin_cos` is used.
    pub fn at_mid(&self, a: &ConicPoint, b: &ConicPoint) -> Option<ConicPoint> {
        let theta = 0.5 * (a.theta + b.theta);
        let sum = a.e + b.e;
        let n = sum.norm();
        let e = if n > 0.5 {
            sum / n
        } else {
            Vector2::from(cos_sin(theta))
        };
        self.at_direction(theta, e)
    }

    /// The conic's point at angle `theta` whose direction `e` is already known: eq. 14's radius
    /// and the impulse on the cone (`lambda_n = r / mu`, eq. 13).
    fn at_direction(&self, theta: f64, e: Vector2<f64>) -> Option<ConicPoint> {
        let r = self.radius_at(e);
        (r > 0.0 && r.is_finite()).then(|| ConicPoint {
            theta,
            r,
            e,
            lambda: Vector3::new(r / self.mu, r * e[0], r * e[1]),
        })
    }

    /// `dE/dtheta` along the conic at `(theta, r(theta))` by eqs. 15-16's hybrid form: on the
    /// plane `dE/dlambda = v` with `v_n = 0` and `v_t = cbar + wbar lambda_t`, so `dE/dtheta =
    /// v_t . dlambda_t/dtheta` with `dlambda_t/dtheta = r' e + r e_perp`, `r' = r^2 D' / c_n`
    /// (eq. 14's derivative). Its sign is the sign Algorithm 1 bisects on; differentiating in
    /// `theta` instead of along eq. 10's `eta` fixes the orientation that the cross product
    /// leaves to the order of its factors.
    pub fn slope(&self, theta: f64, r: f64) -> f64 {
        let e = Vector2::from(cos_sin(theta));
        self.slope_along(e, r)
    }

    /// [`SlipConic::slope`] at a point from [`SlipConic::at`], without its trigonometry.
    pub fn slope_at(&self, p: &ConicPoint) -> f64 {
        self.slope_along(p.e, p.r)
    }

    /// A positive multiple of [`SlipConic::slope_at`], `D^2 / r` times it with eq. 14's
    /// denominator `D = W_nn / mu + W_nt . e` (positive wherever the angle has a point):
    /// `(D cbar - c_n wbar e) . (D e_perp - D' e)`, from `r = -c_n / D` and `r' = -r D' / D`.
    /// The same sign without a division, so a bisection step does not wait on the radius.
    pub fn slope_scaled(&self, p: &ConicPoint) -> f64 {
        let e = p.e;
        let e_perp = Vector2::new(-e[1], e[0]);
        let d = self.wnn_over_mu + self.w_nt.dot(&e);
        let d_prime = self.w_nt.dot(&e_perp);
        let dv = d * self.cbar - self.c[0] * (self.wbar * e);
        dv.dot(&(d * e_perp - d_prime * e))
    }

    /// The slope at direction `e` and radius `r`.
    fn slope_along(&self, e: Vector2<f64>, r: f64) -> f64 {
        let e_perp = Vector2::new(-e[1], e[0]);
        let vt = self.cbar + self.wbar * (r * e);
        let d_prime = self.w_nt.dot(&e_perp);
        let r_prime = r * r * d_prime / self.c[0];
        vt.dot(&(r_prime * e + r * e_perp))
    }

    /// Eq. 12's energy `E = (lambda - lambda*)' W (lambda - lambda*) / 2` (the kinetic energy
    /// of the contact velocity in the metric `W^-1`).
    pub fn energy(&self, lambda: &Vector3<f64>) -> f64 {
        let d = lambda - self.stick;
        0.5 * d.dot(&(self.w * d))
    }

    /// The same energy for a point of the plane from its tangential part only:
    /// `(lambda_t - lambda*_t)' wbar (lambda_t - lambda*_t) / 2`.
    pub fn plane_energy(&self, lambda: &Vector3<f64>) -> f64 {
        let d = Vector2::new(lambda[1] - self.stick[1], lambda[2] - self.stick[2]);
        0.5 * d.dot(&(self.wbar * d))
    }

    /// `E(l1) - E(l2)` for two points of the plane, as `(x1 - x2)' wbar (x1 + x2 - 2 x*) / 2`:
    /// no cancellation between two nearly equal energies, so comparisons near the minimum keep
    /// their sign.
    pub fn plane_energy_difference(&self, l1: &Vector3<f64>, l2: &Vector3<f64>) -> f64 {
        let d = Vector2::new(l1[1] - l2[1], l1[2] - l2[2]);
        let s = Vector2::new(
            l1[1] + l2[1] - 2.0 * self.stick[1],
            l1[2] + l2[2] - 2.0 * self.stick[2],
        );
        0.5 * d.dot(&(self.wbar * s))
    }

    /// The line-of-sight check (sec. III-A, after Preclik): `lambda` on the cone is visible from
    /// `lambda*` when the cone's outward normal `grad h2 = (-mu^2 lambda_n, lambda_t)` (normal
    /// first, factor 2 dropped) makes `grad h2 . (lambda - lambda*) <= 0`. Algorithm 1 line 13
    /// as printed rejects the opposite sign; that would reject the visible points (at
    /// `W = I`, `c = (-1, 3, 0)`, `mu = 0.5` the solution `(1, -0.5, 0)` gives `-2.5`), so we
    /// follow the text: reject what is out of sight.
    pub fn in_sight(&self, lambda: &Vector3<f64>) -> bool {
        let g = Vector3::new(-self.mu * self.mu * lambda[0], lambda[1], lambda[2]);
        g.dot(&(lambda - self.stick)) <= 0.0
    }

    /// `v = c + W lambda`.
    pub fn velocity(&self, lambda: &Vector3<f64>) -> Vector3<f64> {
        self.c + self.w * lambda
    }

    /// The conic as `|x| = a - b . x` in the plane's tangential coordinates `x = lambda_t`:
    /// `(a, b) = (-mu c_n / W_nn, mu W_nt / W_nn)` (eq. 14 rearranged).
    pub fn focal_form(&self) -> (f64, Vector2<f64>) {
        let wnn = self.w[(0, 0)];
        (-self.mu * self.c[0] / wnn, self.mu * self.w_nt / wnn)
    }

    /// Eq. 16's hybrid matrix and vector `(wbar, cbar)`.
    pub fn hybrid(&self) -> (Matrix2<f64>, Vector2<f64>) {
        (self.wbar, self.cbar)
    }
}

/// A point of the conic at one angle, as [`SlipConic::at`] gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConicPoint {
    /// The angle of `lambda_t`.
    pub theta: f64,
    /// Eq. 14's radius `|lambda_t|` (positive).
    pub r: f64,
    /// `(cos theta, sin theta)`.
    pub e: Vector2<f64>,
    /// The impulse `(r / mu, r cos theta, r sin theta)`.
    pub lambda: Vector3<f64>,
}

/// `[cos theta, sin theta]` from one `sin_cos`.
fn cos_sin(theta: f64) -> [f64; 2] {
    let (s, co) = theta.sin_cos();
    [co, s]
}

/// What [`classify`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Case {
    /// Solved by the case analysis alone: opening, sticking, or frictionless.
    Done(LocalSolution),
    /// Slipping: the answer lies on this conic.
    Slipping(SlipConic),
    /// A closing contact whose block moves nothing along one tangential direction (a planar
    /// model's): the two-row problem of its plane ([`super::planar`]).
    Planar(PlanarContact),
}

/// The case analysis of sec. III-A and Algorithm 2 lines 3-7: opening when `c_n >= 0`
/// (`c_n = 0` too: `lambda = 0` is then a solution of either law), sticking when
/// `mu lambda*_n >= |lambda*_t|`, frictionless (`mu = 0`) with `lambda = (-c_n / W_nn, 0, 0)`,
/// otherwise slipping. A closing contact whose `W_aa` is singular along one tangential direction
/// only, with no free velocity along it (a planar model's), is [`Case::Planar`]. Errors on
/// non-finite data, a negative `mu`, and any other `W_aa` that is not positive definite at a
/// closing contact (its symmetric part is used).
pub fn classify(w: &Matrix3<f64>, c: &Vector3<f64>, mu: f64) -> Result<Case, LocalError> {
    if !mu.is_finite() {
        return Err(LocalError::NotFinite("mu"));
    }
    if mu < 0.0 {
        return Err(LocalError::NegativeFriction(mu));
    }
    if !c.iter().all(|x| x.is_finite()) {
        return Err(LocalError::NotFinite("c"));
    }
    if !w.iter().all(|x| x.is_finite()) {
        return Err(LocalError::NotFinite("W_aa"));
    }
    if c[0] >= 0.0 {
        return Ok(Case::Done(LocalSolution {
            r: Vector3::zeros(),
            mode: ContactMode::Opening,
            steps: 0,
        }));
    }
    let w = 0.5 * (w + w.transpose());
    let chol = w.cholesky();
    // No factor, or a pivot at rounding level (the factor exists but `lambda*` would be noise):
    // a planar contact is reduced to its plane; any other block keeps the paper's path.
    let scale = planar::NULL_RTOL * w.diagonal().max();
    let tiny = chol
        .as_ref()
        .is_none_or(|ch| ch.l_dirty().diagonal().map(|d| d * d).min() <= scale);
    if tiny {
        if let Some(p) = planar::reduce(&w, c, mu) {
            return Ok(Case::Planar(p));
        }
    }
    let chol = chol.ok_or(LocalError::SingularBlock)?;
    let stick = -chol.solve(c);
    if !stick.iter().all(|x| x.is_finite()) {
        return Err(LocalError::SingularBlock);
    }
    if stick[1].hypot(stick[2]) <= mu * stick[0] {
        return Ok(Case::Done(LocalSolution {
            r: stick,
            mode: ContactMode::Sticking,
            steps: 0,
        }));
    }
    if mu == 0.0 {
        return Ok(Case::Done(LocalSolution {
            r: Vector3::new(-c[0] / w[(0, 0)], 0.0, 0.0),
            mode: ContactMode::Slipping,
            steps: 0,
        }));
    }
    Ok(Case::Slipping(SlipConic::new(w, *c, mu, stick)))
}

/// A method for the slipping case: the impulse on the conic and the inner steps it took.
pub trait SlipMethod {
    /// The friction law it solves.
    fn model(&self) -> FrictionModel {
        FrictionModel::MaximumDissipation
    }

    /// The slipping impulse on `conic`.
    fn slip(&self, conic: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError>;

    /// The evaluations a bracketing method spends finding its interval on `conic` (part of
    /// [`SlipMethod::slip`]'s steps); `None` for a method without one.
    fn bracket_steps(&self, _conic: &SlipConic) -> Option<u32> {
        None
    }
}

/// One contact's impulse by `method`: [`classify`], then `method` where the contact slips.
pub fn solve_contact<M: SlipMethod + ?Sized>(
    method: &M,
    w: &Matrix3<f64>,
    c: &Vector3<f64>,
    mu: f64,
) -> Result<LocalSolution, LocalError> {
    match classify(w, c, mu)? {
        Case::Done(s) => Ok(s),
        Case::Planar(p) => p.solve(method.model()),
        Case::Slipping(conic) => {
            let (r, steps) = method.slip(&conic)?;
            if !r.iter().all(|x| x.is_finite()) {
                return Err(LocalError::NotFinite("slipping impulse"));
            }
            Ok(LocalSolution {
                r,
                mode: ContactMode::Slipping,
                steps,
            })
        }
    }
}

/// Implements [`ContactSolver`] for a [`SlipMethod`] (nothing to prepare: each call factors
/// its 3x3 block).
macro_rules! per_contact_solver {
    ($t:ty) => {
        impl ContactSolver for $t {
            type Prepared = ();

            const SYMMETRIC_BLOCK: bool = true;

            fn prepare(&self, _w_aa: &Matrix3<f64>, _mu: f64) {}

            fn solve(
                &self,
                _prepared: &(),
                w_aa: &Matrix3<f64>,
                c: &Vector3<f64>,
                mu: f64,
                _r_prev: &Vector3<f64>,
            ) -> Result<LocalSolution, LocalError> {
                $crate::hwangbo::single::solve_contact(self, w_aa, c, mu)
            }

            fn model(&self) -> FrictionModel {
                $crate::hwangbo::single::SlipMethod::model(self)
            }
        }
    };
}
pub(crate) use per_contact_solver;

/// The independent reference for tests and error measurement (not one of the paper's
/// methods): the energy of eq. 12 on a dense scan of the angle, then a safeguarded Newton
/// iteration on `dE/dtheta = v . dlambda/dtheta` (with `v = c + W lambda` in three dimensions,
/// not eq. 16's hybrid) from the best few local minima of the scan. Allocates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// Scan points over the full turn.
    pub samples: usize,
    /// Local minima of the scan that are polished.
    pub candidates: usize,
}

impl Default for Reference {
    fn default() -> Self {
        Reference {
            samples: 4096,
            candidates: 3,
        }
    }
}

impl Reference {
    /// `dE/dtheta` from the three-dimensional velocity.
    fn slope(conic: &SlipConic, theta: f64) -> f64 {
        let Some((r, lambda)) = conic.point(theta) else {
            return f64::NAN;
        };
        let (s, co) = theta.sin_cos();
        let d_prime = -conic.w[(0, 1)] * s + conic.w[(0, 2)] * co;
        let r_prime = r * r * d_prime / conic.c[0];
        let dlambda = Vector3::new(
            r_prime / conic.mu,
            r_prime * co - r * s,
            r_prime * s + r * co,
        );
        conic.velocity(&lambda).dot(&dlambda)
    }

    /// Safeguarded Newton on the slope in `[lo, hi]` from the conic's angle `theta`: a step
    /// that leaves the bracket, or lands off the conic, is replaced by a bisection step.
    fn polish(conic: &SlipConic, mut lo: f64, mut hi: f64, mut theta: f64) -> f64 {
        let mut last = theta;
        for _ in 0..200 {
            let g = Self::slope(conic, theta);
            if g.is_nan() {
                // Off the conic: that side of the bracket ends here.
                if theta > last {
                    hi = theta;
                } else {
                    lo = theta;
                }
                theta = 0.5 * (last + theta);
                continue;
            }
            last = theta;
            if g == 0.0 {
                break;
            }
            if g < 0.0 {
                lo = theta;
            } else {
                hi = theta;
            }
            let h = 1e-7 * (hi - lo).max(1e-12);
            let dg = (Self::slope(conic, theta + h) - Self::slope(conic, theta - h)) / (2.0 * h);
            let mut next = theta - g / dg;
            if !(next > lo && next < hi) {
                next = 0.5 * (lo + hi);
            }
            let done = (next - theta).abs() <= 1e-15 * (1.0 + theta.abs())
                || hi - lo <= 4.0 * f64::EPSILON * (1.0 + theta.abs());
            theta = next;
            if done {
                break;
            }
        }
        if conic.point(theta).is_some() {
            theta
        } else {
            last
        }
    }
}

impl SlipMethod for Reference {
    fn slip(&self, conic: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError> {
        let n = self.samples.max(16);
        let h = std::f64::consts::TAU / n as f64;
        let theta0 = conic.theta0();
        let e: Vec<f64> = (0..n)
            .map(|k| {
                conic
                    .point(theta0 + k as f64 * h)
                    .map_or(f64::INFINITY, |(_, l)| conic.energy(&l))
            })
            .collect();
        let mut minima: Vec<usize> = (0..n)
            .filter(|&k| e[k].is_finite() && e[k] <= e[(k + n - 1) % n] && e[k] <= e[(k + 1) % n])
            .collect();
        minima.sort_by(|a, b| e[*a].total_cmp(&e[*b]));
        let mut best: Option<(f64, Vector3<f64>)> = None;
        for &k in minima.iter().take(self.candidates.max(1)) {
            let t = theta0 + k as f64 * h;
            let t = Self::polish(conic, t - h, t + h, t);
            if let Some((_, l)) = conic.point(t) {
                let en = conic.energy(&l);
                if best.is_none_or(|(b, _)| en < b) {
                    best = Some((en, l));
                }
            }
        }
        best.map(|(_, l)| (l, n as u32))
            .ok_or(LocalError::NoBracket(
                "the scan found no point of the conic",
            ))
    }
}

per_contact_solver!(Reference);
