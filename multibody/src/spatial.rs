//! Spatial (6D) vector algebra: Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 2.
//!
//! Motion vectors ([`Motion`]: angular velocity `omega` and the linear velocity `v` of the
//! body-fixed point that coincides with the frame's origin, sec. 2.2) and force vectors
//! ([`Force`]: moment `n` about the origin and force `f`, sec. 2.4) keep their two halves as
//! named 3-vectors, so no code depends on the order of a 6-vector. Where a 6-vector or a 6x6
//! matrix is needed (tests, [`SpatialInertia::to_matrix`]) the order is Featherstone's,
//! **angular first**: `[omega; v]`, `[n; f]`.
//!
//! A [`Transform`] `a_T_b` is the pose of frame `b` in frame `a`: `x_a = R x_b + p`. It acts on
//! spatial vectors in both directions:
//! * [`Transform::act_motion`] / [`Transform::act_force`]: `b` coordinates to `a` coordinates,
//!   Featherstone's `a_X_b` and `a_X_b^*`;
//! * [`Transform::inv_act_motion`] / [`Transform::inv_act_force`]: `a` to `b`, Featherstone's
//!   `b_X_a = [E 0; -E r^ E]` (eq. 2.24) with `E = R'` and `r = p`, and its dual (eq. 2.25).

use nalgebra::{Matrix3, Matrix6, Rotation3, UnitQuaternion, Vector3, Vector6};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// The skew-symmetric matrix `a^` with `a^ b = a x b` (Featherstone eq. 2.23's `r x`).
pub fn skew(a: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -a.z, a.y, a.z, 0.0, -a.x, -a.y, a.x, 0.0)
}

/// A spatial motion vector (velocity or acceleration, Featherstone sec. 2.2): `[omega; v]`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Motion {
    /// Angular part (angular velocity or acceleration).
    pub angular: Vector3<f64>,
    /// Linear part: the velocity of the body-fixed point at the frame's origin.
    pub linear: Vector3<f64>,
}

/// A spatial force vector (force or momentum, Featherstone sec. 2.4): `[n; f]`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Force {
    /// Angular part: the moment (or angular momentum) about the frame's origin.
    pub angular: Vector3<f64>,
    /// Linear part: the force (or linear momentum).
    pub linear: Vector3<f64>,
}

/// `[angular; linear]` as one 6-vector (Featherstone's order, for motions and forces alike).
fn stack(angular: &Vector3<f64>, linear: &Vector3<f64>) -> Vector6<f64> {
    Vector6::new(
        angular.x, angular.y, angular.z, linear.x, linear.y, linear.z,
    )
}

impl Motion {
    /// A motion vector from its angular and linear parts.
    pub fn new(angular: Vector3<f64>, linear: Vector3<f64>) -> Self {
        Self { angular, linear }
    }

    /// The zero motion.
    pub fn zero() -> Self {
        Self::default()
    }

    /// The 6-vector `[omega; v]` (angular first, Featherstone's order).
    pub fn to_vector(&self) -> Vector6<f64> {
        stack(&self.angular, &self.linear)
    }

    /// The spatial cross product for motions, `self x m` (Featherstone eq. 2.31).
    pub fn cross_motion(&self, m: &Motion) -> Motion {
        Motion::new(
            self.angular.cross(&m.angular),
            self.angular.cross(&m.linear) + self.linear.cross(&m.angular),
        )
    }

    /// The spatial cross product for forces, `self x* f` (Featherstone eq. 2.32).
    pub fn cross_force(&self, f: &Force) -> Force {
        Force::new(
            self.angular.cross(&f.angular) + self.linear.cross(&f.linear),
            self.angular.cross(&f.linear),
        )
    }

    /// The scalar product with a force (power, Featherstone sec. 2.5): `omega . n + v . f`.
    pub fn dot(&self, f: &Force) -> f64 {
        self.angular.dot(&f.angular) + self.linear.dot(&f.linear)
    }

    /// The velocity of the body-fixed point at `p` (same coordinates): `v + omega x p`.
    pub fn point_velocity(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.linear + self.angular.cross(p)
    }
}

impl Force {
    /// A force vector from its angular (moment) and linear (force) parts.
    pub fn new(angular: Vector3<f64>, linear: Vector3<f64>) -> Self {
        Self { angular, linear }
    }

    /// The zero force.
    pub fn zero() -> Self {
        Self::default()
    }

    /// The 6-vector `[n; f]` (angular first, Featherstone's order).
    pub fn to_vector(&self) -> Vector6<f64> {
        stack(&self.angular, &self.linear)
    }
}

macro_rules! vector_ops {
    ($t:ident) => {
        impl Add for $t {
            type Output = $t;
            fn add(self, o: $t) -> $t {
                $t::new(self.angular + o.angular, self.linear + o.linear)
            }
        }
        impl Sub for $t {
            type Output = $t;
            fn sub(self, o: $t) -> $t {
                $t::new(self.angular - o.angular, self.linear - o.linear)
            }
        }
        impl AddAssign for $t {
            fn add_assign(&mut self, o: $t) {
                self.angular += o.angular;
                self.linear += o.linear;
            }
        }
        impl Neg for $t {
            type Output = $t;
            fn neg(self) -> $t {
                $t::new(-self.angular, -self.linear)
            }
        }
        impl Mul<f64> for $t {
            type Output = $t;
            fn mul(self, s: f64) -> $t {
                $t::new(self.angular * s, self.linear * s)
            }
        }
    };
}
vector_ops!(Motion);
vector_ops!(Force);

/// A rigid transform `a_T_b`: the pose of frame `b` in frame `a` (`x_a = rotation x_b + translation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Rotation from `b` coordinates to `a` coordinates.
    pub rotation: Matrix3<f64>,
    /// The origin of `b`, in `a` coordinates.
    pub translation: Vector3<f64>,
}

impl Default for Transform {
    fn default() -> Self {
        Self::identity()
    }
}

impl Transform {
    /// A transform from a rotation matrix and a translation.
    pub fn new(rotation: Matrix3<f64>, translation: Vector3<f64>) -> Self {
        Self {
            rotation,
            translation,
        }
    }

    /// The identity.
    pub fn identity() -> Self {
        Self::new(Matrix3::identity(), Vector3::zeros())
    }

    /// A transform from a unit quaternion and a translation.
    pub fn from_quaternion(q: &UnitQuaternion<f64>, translation: Vector3<f64>) -> Self {
        Self::new(q.to_rotation_matrix().into_inner(), translation)
    }

    /// A pure rotation by `angle` about the unit `axis` (Rodrigues).
    pub fn rotation_about(axis: &Vector3<f64>, angle: f64) -> Self {
        let r = Rotation3::from_scaled_axis(axis * angle);
        Self::new(r.into_inner(), Vector3::zeros())
    }

    /// A pure translation.
    pub fn translation(t: Vector3<f64>) -> Self {
        Self::new(Matrix3::identity(), t)
    }

    /// Composition `a_T_c = a_T_b * b_T_c`.
    pub fn compose(&self, other: &Transform) -> Transform {
        Transform::new(
            self.rotation * other.rotation,
            self.rotation * other.translation + self.translation,
        )
    }

    /// The inverse `b_T_a`.
    pub fn inverse(&self) -> Transform {
        let rt = self.rotation.transpose();
        Transform::new(rt, -(rt * self.translation))
    }

    /// A point given in `b` coordinates, in `a` coordinates.
    pub fn transform_point(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * p + self.translation
    }

    /// A motion from `b` to `a` coordinates (Featherstone's `a_X_b`).
    pub fn act_motion(&self, m: &Motion) -> Motion {
        let w = self.rotation * m.angular;
        Motion::new(w, self.rotation * m.linear + self.translation.cross(&w))
    }

    /// A motion from `a` to `b` coordinates (Featherstone's `b_X_a`, eq. 2.24).
    pub fn inv_act_motion(&self, m: &Motion) -> Motion {
        let rt = self.rotation.transpose();
        Motion::new(
            rt * m.angular,
            rt * (m.linear - self.translation.cross(&m.angular)),
        )
    }

    /// A force from `b` to `a` coordinates (Featherstone's `a_X_b^*`).
    pub fn act_force(&self, f: &Force) -> Force {
        let lin = self.rotation * f.linear;
        Force::new(
            self.rotation * f.angular + self.translation.cross(&lin),
            lin,
        )
    }

    /// A force from `a` to `b` coordinates (Featherstone's `b_X_a^*`, eq. 2.25).
    pub fn inv_act_force(&self, f: &Force) -> Force {
        let rt = self.rotation.transpose();
        Force::new(
            rt * (f.angular - self.translation.cross(&f.linear)),
            rt * f.linear,
        )
    }

    /// The 6x6 motion transform `a_X_b` (angular first), for tests and checks.
    pub fn motion_matrix(&self) -> Matrix6<f64> {
        let mut x = Matrix6::zeros();
        x.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.rotation);
        x.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.rotation);
        x.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(skew(&self.translation) * self.rotation));
        x
    }
}

/// A rigid body's spatial inertia about a frame's origin (Featherstone sec. 2.13, eq. 2.63):
/// mass `m`, first moment `h = m c` (`c` the centre of mass) and rotational inertia about the
/// origin `I_o = I_c - m c^ c^`. In this form composite inertias add ([`Add`]) and transform
/// ([`SpatialInertia::transformed`]) without dividing by the mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialInertia {
    /// Mass.
    pub mass: f64,
    /// First moment of mass about the origin, `m c`.
    pub first_moment: Vector3<f64>,
    /// Rotational inertia about the origin (not about the centre of mass).
    pub rotational: Matrix3<f64>,
}

impl SpatialInertia {
    /// The inertia of a body of mass `mass` with its centre of mass at `com` and rotational
    /// inertia `inertia_com` about the centre of mass (axes of the frame).
    pub fn from_com(mass: f64, com: Vector3<f64>, inertia_com: Matrix3<f64>) -> Self {
        let cx = skew(&com);
        Self {
            mass,
            first_moment: com * mass,
            rotational: inertia_com - cx * cx * mass,
        }
    }

    /// No mass.
    pub fn zero() -> Self {
        Self {
            mass: 0.0,
            first_moment: Vector3::zeros(),
            rotational: Matrix3::zeros(),
        }
    }

    /// The centre of mass (undefined, NaN, for zero mass).
    pub fn com(&self) -> Vector3<f64> {
        self.first_moment / self.mass
    }

    /// The momentum `I m` of a body moving with `m` (Featherstone eq. 2.62-2.63):
    /// `[I_o omega + h x v; m v - h x omega]`.
    pub fn mul_motion(&self, m: &Motion) -> Force {
        Force::new(
            self.rotational * m.angular + self.first_moment.cross(&m.linear),
            m.linear * self.mass - self.first_moment.cross(&m.angular),
        )
    }

    /// This inertia, given in `b` coordinates, expressed in `a` coordinates through `a_T_b`
    /// (Featherstone eq. 2.66, `a_X_b^* I b_X_a`): with `y = R h`,
    /// `h_a = y + m p` and `I_a = R I_b R' - y^ p^ - p^ y^ - m p^ p^`.
    pub fn transformed(&self, t: &Transform) -> SpatialInertia {
        let y = t.rotation * self.first_moment;
        let px = skew(&t.translation);
        let yx = skew(&y);
        SpatialInertia {
            mass: self.mass,
            first_moment: y + t.translation * self.mass,
            rotational: t.rotation * self.rotational * t.rotation.transpose()
                - yx * px
                - px * yx
                - px * px * self.mass,
        }
    }

    /// The 6x6 matrix (angular first, Featherstone eq. 2.63), for tests and checks.
    pub fn to_matrix(&self) -> Matrix6<f64> {
        let hx = skew(&self.first_moment);
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.rotational);
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&hx);
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&hx.transpose());
        m.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(Matrix3::identity() * self.mass));
        m
    }
}

impl Add for SpatialInertia {
    type Output = SpatialInertia;
    fn add(self, o: SpatialInertia) -> SpatialInertia {
        SpatialInertia {
            mass: self.mass + o.mass,
            first_moment: self.first_moment + o.first_moment,
            rotational: self.rotational + o.rotational,
        }
    }
}

impl AddAssign for SpatialInertia {
    fn add_assign(&mut self, o: SpatialInertia) {
        *self = *self + o;
    }
}

/// The exponential map of `se(3)` for a body-frame twist held constant over unit time: the
/// displacement `b_T_b'` of a frame moving with body velocity `twist` (Featherstone sec. 4.8 on
/// integrating a floating base; the closed form is the usual one, e.g. Murray, Li and Sastry
/// 1994, eq. 2.36): `R = exp(omega^)`, `p = V v` with
/// `V = I + (1 - cos t)/t^2 omega^ + (t - sin t)/t^3 omega^2`, `t = |omega|`.
pub fn exp_se3(twist: &Motion) -> Transform {
    let w = twist.angular;
    let theta2 = w.norm_squared();
    let theta = theta2.sqrt();
    let wx = skew(&w);
    let wx2 = wx * wx;
    // Series for small angles keep the coefficients accurate to rounding.
    let (b, c) = if theta < 1e-4 {
        (
            0.5 - theta2 / 24.0 + theta2 * theta2 / 720.0,
            1.0 / 6.0 - theta2 / 120.0 + theta2 * theta2 / 5040.0,
        )
    } else {
        (
            (1.0 - theta.cos()) / theta2,
            (theta - theta.sin()) / (theta2 * theta),
        )
    };
    let v = Matrix3::identity() + wx * b + wx2 * c;
    let r = Rotation3::from_scaled_axis(w).into_inner();
    Transform::new(r, v * twist.linear)
}

/// The logarithm of a rotation matrix: the rotation vector `theta u` with `exp(theta u^) = r`.
/// Accurate at small angles (from the axial vector `sin(theta) u` and `cos(theta)`, not from
/// `acos` of the trace alone); near `pi` it falls back to nalgebra's axis extraction.
pub fn log_so3(r: &Matrix3<f64>) -> Vector3<f64> {
    let axial = Vector3::new(
        r[(2, 1)] - r[(1, 2)],
        r[(0, 2)] - r[(2, 0)],
        r[(1, 0)] - r[(0, 1)],
    ) * 0.5;
    let cos = ((r.trace() - 1.0) * 0.5).clamp(-1.0, 1.0);
    let sin = axial.norm();
    let theta = sin.atan2(cos);
    if theta < 1e-6 {
        axial * (1.0 + theta * theta / 6.0)
    } else if theta < std::f64::consts::PI - 1e-3 {
        axial * (theta / sin)
    } else {
        Rotation3::from_matrix_unchecked(*r).scaled_axis()
    }
}

/// The logarithm of a rigid transform: the body twist `xi` with `exp_se3(xi) = t`
/// (rotation angle below pi). Used by tests to read velocities off finite differences.
pub fn log_se3(t: &Transform) -> Motion {
    let w = log_so3(&t.rotation);
    let theta2 = w.norm_squared();
    let theta = theta2.sqrt();
    let wx = skew(&w);
    // V^-1 = I - omega^/2 + (1/t^2)(1 - (t sin t)/(2(1 - cos t))) omega^2.
    let d = if theta < 1e-4 {
        1.0 / 12.0 + theta2 / 720.0
    } else {
        (1.0 - theta * theta.sin() / (2.0 * (1.0 - theta.cos()))) / theta2
    };
    let vinv = Matrix3::identity() - wx * 0.5 + wx * wx * d;
    Motion::new(w, vinv * t.translation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn sample_transform() -> Transform {
        Transform::from_quaternion(
            &UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1),
            Vector3::new(0.4, -1.2, 0.25),
        )
    }

    #[test]
    fn motion_transform_matches_its_matrix_and_inverts() {
        let t = sample_transform();
        let m = Motion::new(Vector3::new(1.0, -2.0, 0.5), Vector3::new(0.3, 0.1, -0.8));
        let a = t.act_motion(&m);
        assert_relative_eq!(
            a.to_vector(),
            t.motion_matrix() * m.to_vector(),
            epsilon = 1e-12
        );
        let back = t.inv_act_motion(&a);
        assert_relative_eq!(back.to_vector(), m.to_vector(), epsilon = 1e-12);
        assert_relative_eq!(
            t.inverse().act_motion(&a).to_vector(),
            m.to_vector(),
            epsilon = 1e-12
        );
    }

    #[test]
    fn force_transform_is_the_dual_of_motion_transform() {
        // Power is invariant: (X m) . (X^* f) = m . f.
        let t = sample_transform();
        let m = Motion::new(Vector3::new(1.0, -2.0, 0.5), Vector3::new(0.3, 0.1, -0.8));
        let f = Force::new(Vector3::new(-0.2, 0.9, 1.5), Vector3::new(2.0, -1.0, 0.4));
        assert_relative_eq!(
            t.act_motion(&m).dot(&t.act_force(&f)),
            m.dot(&f),
            epsilon = 1e-12
        );
        assert_relative_eq!(
            t.inv_act_force(&t.act_force(&f)).to_vector(),
            f.to_vector(),
            epsilon = 1e-12
        );
    }

    #[test]
    fn inertia_transform_is_the_congruence() {
        let t = sample_transform();
        let i = SpatialInertia::from_com(
            2.5,
            Vector3::new(0.1, -0.2, 0.3),
            Matrix3::new(0.3, 0.01, 0.02, 0.01, 0.4, -0.03, 0.02, -0.03, 0.5),
        );
        let x_inv = t.inverse().motion_matrix();
        let expected = x_inv.transpose() * i.to_matrix() * x_inv;
        assert_relative_eq!(i.transformed(&t).to_matrix(), expected, epsilon = 1e-12);
    }

    #[test]
    fn exp_and_log_are_inverse_and_match_the_flow() {
        for &scale in &[1e-7, 1e-3, 0.5, 2.0] {
            let xi = Motion::new(
                Vector3::new(0.3, -0.5, 0.8) * scale,
                Vector3::new(1.0, 0.2, -0.4) * scale,
            );
            let t = exp_se3(&xi);
            assert_relative_eq!(log_se3(&t).to_vector(), xi.to_vector(), epsilon = 1e-12);
            // Flow by many small first-order steps converges to the exponential.
            let n = 20000;
            let mut acc = Transform::identity();
            for _ in 0..n {
                let s = xi * (1.0 / n as f64);
                let small = Transform::new(Matrix3::identity() + skew(&s.angular), s.linear);
                acc = acc.compose(&small);
            }
            assert_relative_eq!(
                acc.translation,
                t.translation,
                epsilon = 1e-3 * scale.max(1e-3)
            );
        }
    }
}
