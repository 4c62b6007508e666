//! Forward kinematics and Jacobians (Featherstone ch. 4, sec. 4.7, and ch. 8, sec. 8.1 on
//! contact constraints: the velocity of a point of a body, `v_p = J_p v`).

use crate::model::Model;
use crate::spatial::{Motion, Transform};
use nalgebra::{DVector, Matrix3, Matrix3xX, Matrix6xX, Vector3};

/// The kinematic state of every body: poses and spatial velocities.
#[derive(Clone, Debug, PartialEq)]
pub struct Kinematics {
    /// `lambda(i)_T_i`: each body's pose in its parent's frame (the world's for roots).
    pub parent_poses: Vec<Transform>,
    /// `0_T_i`: each body's pose in the world.
    pub poses: Vec<Transform>,
    /// Each body's spatial velocity in its own coordinates (Featherstone eq. 4.15 / Table 5.1).
    pub velocities: Vec<Motion>,
}

/// The project's contact frame for a normal: the columns are `[n, t1, t2]` (normal first),
/// right-handed (`t1 x t2 = n`), with `t1` perpendicular to the world axis least aligned with `n`.
///
/// # Panics
/// If `normal` is zero (it is normalised otherwise).
pub fn contact_frame(normal: &Vector3<f64>) -> Matrix3<f64> {
    let n = normal.normalize();
    assert!(
        n.iter().all(|x| x.is_finite()),
        "the normal must be nonzero"
    );
    let k = n.iamin();
    let mut e = Vector3::zeros();
    e[k] = 1.0;
    let t1 = e.cross(&n).normalize();
    let t2 = n.cross(&t1);
    Matrix3::from_columns(&[n, t1, t2])
}

impl Model {
    /// Each body's pose in its parent's frame, `X_T X_J(q)` as a pose (Featherstone eq. 4.5).
    pub fn parent_poses(&self, q: &DVector<f64>) -> Vec<Transform> {
        assert_eq!(q.len(), self.nq(), "q has the wrong length");
        self.bodies()
            .iter()
            .map(|b| {
                let qi = &q.as_slice()[b.q_offset..b.q_offset + b.joint.nq()];
                b.placement.compose(&b.joint.transform(qi))
            })
            .collect()
    }

    /// Each body's pose in the world.
    pub fn body_poses(&self, q: &DVector<f64>) -> Vec<Transform> {
        let parent = self.parent_poses(q);
        self.world_poses(&parent)
    }

    fn world_poses(&self, parent: &[Transform]) -> Vec<Transform> {
        let mut poses: Vec<Transform> = Vec::with_capacity(parent.len());
        for (i, b) in self.bodies().iter().enumerate() {
            let t = match b.parent {
                Some(p) => poses[p].compose(&parent[i]),
                None => parent[i],
            };
            poses.push(t);
        }
        poses
    }

    /// Poses and spatial velocities of every body: `v_i = i_X_lambda v_lambda + S_i qdot_i`
    /// (Featherstone eq. 4.15, the first pass of Table 5.1).
    ///
    /// # Panics
    /// If `q` or `v` has the wrong length.
    pub fn forward_kinematics(&self, q: &DVector<f64>, v: &DVector<f64>) -> Kinematics {
        assert_eq!(v.len(), self.nv(), "v has the wrong length");
        let parent_poses = self.parent_poses(q);
        let poses = self.world_poses(&parent_poses);
        let mut velocities: Vec<Motion> = Vec::with_capacity(parent_poses.len());
        for (i, b) in self.bodies().iter().enumerate() {
            let vj = b
                .joint
                .velocity(&v.as_slice()[b.v_offset..b.v_offset + b.joint.nv()]);
            let vp = match b.parent {
                Some(p) => parent_poses[i].inv_act_motion(&velocities[p]),
                None => Motion::zero(),
            };
            velocities.push(vp + vj);
        }
        Kinematics {
            parent_poses,
            poses,
            velocities,
        }
    }

    /// The world position of a point fixed on `body` at `point` (body frame).
    pub fn point_position(
        &self,
        q: &DVector<f64>,
        body: usize,
        point: &Vector3<f64>,
    ) -> Vector3<f64> {
        self.body_poses(q)[body].transform_point(point)
    }

    /// The world-frame linear velocity of a point fixed on `body` at `point` (body frame).
    pub fn point_velocity(
        &self,
        q: &DVector<f64>,
        v: &DVector<f64>,
        body: usize,
        point: &Vector3<f64>,
    ) -> Vector3<f64> {
        let k = self.forward_kinematics(q, v);
        k.poses[body].rotation * k.velocities[body].point_velocity(point)
    }

    /// Calls `f(column, s)` for every degree of freedom on the path from `body` to the world,
    /// with `s` that column of the motion subspace in world coordinates (Featherstone eq. 4.22's
    /// nonzero columns, the body Jacobian in world coordinates).
    fn for_each_world_column(
        &self,
        poses: &[Transform],
        body: usize,
        mut f: impl FnMut(usize, Motion),
    ) {
        let mut at = Some(body);
        while let Some(j) = at {
            let b = &self.bodies()[j];
            for c in 0..b.joint.nv() {
                f(
                    b.v_offset + c,
                    poses[j].act_motion(&b.joint.motion_subspace(c)),
                );
            }
            at = b.parent;
        }
    }

    /// The 6 x nv Jacobian of `body`'s spatial velocity in its own coordinates (rows angular
    /// first): `v_body = J v`.
    pub fn body_jacobian(&self, q: &DVector<f64>, body: usize) -> Matrix6xX<f64> {
        let poses = self.body_poses(q);
        let mut j = Matrix6xX::zeros(self.nv());
        let tk = poses[body];
        self.for_each_world_column(&poses, body, |c, s| {
            j.set_column(c, &tk.inv_act_motion(&s).to_vector());
        });
        j
    }

    /// The 3 x nv Jacobian of the world-frame velocity of a point fixed on `body` at `point`
    /// (body frame): `v_p = J_p v`. Column `c` is `s_lin + s_ang x p` for the world-coordinate
    /// motion subspace column `s` of every joint between the body and the world.
    pub fn point_jacobian(
        &self,
        q: &DVector<f64>,
        body: usize,
        point: &Vector3<f64>,
    ) -> Matrix3xX<f64> {
        let poses = self.body_poses(q);
        self.point_jacobian_with_poses(&poses, body, point)
    }

    /// [`Model::point_jacobian`] from world poses already computed ([`Model::body_poses`]).
    pub fn point_jacobian_with_poses(
        &self,
        poses: &[Transform],
        body: usize,
        point: &Vector3<f64>,
    ) -> Matrix3xX<f64> {
        let p = poses[body].transform_point(point);
        let mut j = Matrix3xX::zeros(self.nv());
        self.for_each_world_column(poses, body, |c, s| {
            j.set_column(c, &s.point_velocity(&p));
        });
        j
    }

    /// The 3 x nv contact Jacobian of a point fixed on `body` at `point` (body frame) in the
    /// contact frame `frame` (columns `[n, t1, t2]`, world coordinates, e.g. from
    /// [`contact_frame`]): rows are the normal, then the two tangential velocities, `frame' J_p`.
    pub fn contact_jacobian(
        &self,
        q: &DVector<f64>,
        body: usize,
        point: &Vector3<f64>,
        frame: &Matrix3<f64>,
    ) -> Matrix3xX<f64> {
        frame.transpose() * self.point_jacobian(q, body, point)
    }

    /// The 3 x nv contact Jacobian of a contact between two bodies: the velocity of the point
    /// `point_a` on `body_a` relative to the point `point_b` on `body_b` (body frames), in the
    /// contact frame `frame` (columns `[n, t1, t2]`, world coordinates): `frame' (J_a - J_b)`.
    /// With `n` pointing from `b` towards `a`, a positive normal velocity separates them.
    pub fn relative_contact_jacobian(
        &self,
        q: &DVector<f64>,
        (body_a, point_a): (usize, &Vector3<f64>),
        (body_b, point_b): (usize, &Vector3<f64>),
        frame: &Matrix3<f64>,
    ) -> Matrix3xX<f64> {
        let poses = self.body_poses(q);
        let ja = self.point_jacobian_with_poses(&poses, body_a, point_a);
        let jb = self.point_jacobian_with_poses(&poses, body_b, point_b);
        frame.transpose() * (ja - jb)
    }

    /// The world position of the centre of mass of the whole tree.
    pub fn center_of_mass(&self, q: &DVector<f64>) -> Vector3<f64> {
        let poses = self.body_poses(q);
        let weighted: Vector3<f64> = self
            .bodies()
            .iter()
            .zip(&poses)
            .map(|(b, t)| t.transform_point(&b.com) * b.mass)
            .sum();
        weighted / self.total_mass()
    }
}
