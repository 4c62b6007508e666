//! Configurations `q` and velocities `v`: layout, the neutral configuration, integration.
//!
//! Joints take their coordinates in body order (parents first). A floating joint takes
//! `q = [x, y, z, qx, qy, qz, qw]` (the base origin in the world, then the unit quaternion of
//! the base orientation, scalar last as in Pinocchio and in nalgebra's storage) and
//! `v = [vx, vy, vz, wx, wy, wz]`: the linear velocity of the base origin and the angular
//! velocity of the base, **both in the base frame** (Pinocchio's convention). Revolute and
//! prismatic joints take one angle (rad) or displacement (m) and its rate; fixed joints none.
//! `dv/dt` (the accelerations `a` of [`crate::Model::rnea`]) is the derivative of these
//! components, so for the base it is the spatial acceleration in base coordinates.

use crate::model::{Joint, Model};
use crate::spatial::{exp_se3, Transform};
use nalgebra::{DVector, Quaternion, Rotation3, UnitQuaternion, Vector3};

impl Model {
    /// The neutral configuration: identity base pose at the origin, every joint at zero.
    pub fn neutral_configuration(&self) -> DVector<f64> {
        let mut q = DVector::zeros(self.nq());
        for b in self.bodies() {
            if b.joint == Joint::Floating {
                q[b.q_offset + 6] = 1.0;
            }
        }
        q
    }

    /// `q ⊕ v dt`: each joint moved by its velocity held constant for `dt`. A floating base
    /// moves along the exponential map of its body twist (`T <- T exp(v dt)`, exact for a
    /// constant body twist); its quaternion is renormalised. Other joints: `q + v dt`.
    ///
    /// # Panics
    /// If `q` or `v` has the wrong length.
    pub fn integrate(&self, q: &DVector<f64>, v: &DVector<f64>, dt: f64) -> DVector<f64> {
        assert_eq!(q.len(), self.nq(), "q has the wrong length");
        assert_eq!(v.len(), self.nv(), "v has the wrong length");
        let mut out = q.clone();
        for b in self.bodies() {
            let (iq, iv) = (b.q_offset, b.v_offset);
            match b.joint {
                Joint::Floating => {
                    let position = Vector3::new(q[iq], q[iq + 1], q[iq + 2]);
                    let quat = UnitQuaternion::new_normalize(Quaternion::new(
                        q[iq + 6],
                        q[iq + 3],
                        q[iq + 4],
                        q[iq + 5],
                    ));
                    let twist = b.joint.velocity(&v.as_slice()[iv..iv + 6]) * dt;
                    // T exp(twist): p + R V v dt, and the quaternion times exp(omega dt).
                    let step = exp_se3(&twist);
                    let position = position + quat * step.translation;
                    let quat = quat * UnitQuaternion::from_scaled_axis(twist.angular);
                    write_base(&mut out, iq, &position, &quat);
                }
                Joint::Revolute { .. } | Joint::Prismatic { .. } => out[iq] += v[iv] * dt,
                Joint::Fixed => {}
            }
        }
        out
    }

    /// Renormalises every floating base's quaternion (in place).
    pub fn normalize(&self, q: &mut DVector<f64>) {
        for b in self.bodies() {
            if b.joint == Joint::Floating {
                let i = b.q_offset + 3;
                let n = q.rows(i, 4).norm();
                if n > 0.0 {
                    q.rows_mut(i, 4).unscale_mut(n);
                }
            }
        }
    }

    /// The pose of the floating base whose coordinates start at `q_offset`.
    pub fn base_pose(&self, q: &DVector<f64>, q_offset: usize) -> Transform {
        Joint::Floating.transform(&q.as_slice()[q_offset..q_offset + 7])
    }
}

/// Writes a pose into a floating joint's 7 coordinates `[x, y, z, qx, qy, qz, qw]` at `offset`.
pub fn set_base_pose(q: &mut DVector<f64>, offset: usize, pose: &Transform) {
    let rot = Rotation3::from_matrix_unchecked(pose.rotation);
    let quat = UnitQuaternion::from_rotation_matrix(&rot);
    write_base(q, offset, &pose.translation, &quat);
}

/// Writes a floating joint's position and orientation at `offset` (`qw` last).
pub fn write_base(
    q: &mut DVector<f64>,
    offset: usize,
    position: &Vector3<f64>,
    orientation: &UnitQuaternion<f64>,
) {
    let c: &Quaternion<f64> = orientation.as_ref();
    let n = c.norm();
    q.rows_mut(offset, 3).copy_from(position);
    q[offset + 3] = c.i / n;
    q[offset + 4] = c.j / n;
    q[offset + 5] = c.k / n;
    q[offset + 6] = c.w / n;
}
