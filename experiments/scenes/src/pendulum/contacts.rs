//! The contacts (floor, wall, non-adjacent spheres), their frames and Jacobian rows, and the
//! normal bias that carries the restitution law (module doc of [`crate::pendulum`]).

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

use super::scene::Pendulum;
use crate::scene::{Contact, ContactKey, ContactStep};

/// The obstacle index of the floor in `ContactKey::Wall`.
pub const FLOOR: usize = 0;
/// The obstacle index of the wall in `ContactKey::Wall`.
pub const WALL: usize = 1;

/// The contact frame `[n, e_y x n, e_y]` of a normal `n` in the `x-z` plane: normal first,
/// in-plane tangent, out-of-plane tangent (right-handed).
pub fn planar_frame(n: Vector3<f64>) -> Matrix3<f64> {
    let t1 = Vector3::y().cross(&n);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), Vector3::y().transpose()])
}

/// The contact frame of any normal `n`: [`planar_frame`] when `n` lies in the `x-z` plane;
/// otherwise `t1` is `e_y x n` normalised (`e_z x n` when `n` is along `e_y`) and
/// `t2 = n x t1`, which is `e_y` in the plane: the frame turns continuously out of it.
pub fn chain_frame(n: Vector3<f64>) -> Matrix3<f64> {
    if n.y == 0.0 {
        return planar_frame(n);
    }
    let t1 = Vector3::y().cross(&n);
    let t1 = if t1.norm() > 1e-9 {
        t1.normalize()
    } else {
        Vector3::z().cross(&n).normalize()
    };
    let t2 = n.cross(&t1);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), t2.transpose()])
}

/// The normal bias `s` of a contact (see the module doc): `e v-` at an impact (`v- < 0` and
/// `gap + h min(v-, v_free) <= 0`), else `gap / h` while the surfaces are apart, else 0.
pub fn normal_shift(gap: f64, v_minus: f64, v_free: f64, restitution: f64, h: f64) -> f64 {
    if v_minus < 0.0 && gap + h * v_free.min(v_minus) <= 0.0 {
        restitution * v_minus
    } else if gap > 0.0 {
        gap / h
    } else {
        0.0
    }
}

impl Pendulum {
    /// The contacts at the current state, in a fixed order: per sphere floor then wall, then
    /// the non-adjacent pairs `(a, b)`, `a < b - 1`.
    pub fn contacts(&self) -> Vec<Contact> {
        let c = &self.config;
        let r = c.sphere_radius;
        let p = self.sphere_positions();
        let mut out = Vec::new();
        for (i, pi) in p.iter().enumerate() {
            let floor_gap = pi.z - r - c.floor_top();
            if floor_gap < c.margin {
                out.push(Contact {
                    key: ContactKey::Wall {
                        ball: i,
                        wall: FLOOR,
                    },
                    frame: planar_frame(Vector3::z()),
                    gap: floor_gap,
                });
            }
            let wall_gap = c.wall_x - pi.x - r;
            if wall_gap < c.margin {
                out.push(Contact {
                    key: ContactKey::Wall {
                        ball: i,
                        wall: WALL,
                    },
                    frame: planar_frame(-Vector3::x()),
                    gap: wall_gap,
                });
            }
        }
        for a in 0..p.len() {
            for b in a + 2..p.len() {
                let d = p[a] - p[b];
                let dist = d.norm();
                let gap = dist - 2.0 * r;
                if gap < c.margin && dist > 0.0 {
                    out.push(Contact {
                        key: ContactKey::Pair { a, b },
                        frame: chain_frame(d / dist),
                        gap,
                    });
                }
            }
        }
        out
    }

    /// The `3 x n` Jacobian of the velocity of the point of sphere `sphere` at `offset` (world
    /// axes) from its centre: column `k <= i` is `J_i[k] - e_y x offset` for the planar chain,
    /// the tree's point Jacobian otherwise.
    pub fn point_jacobian(&self, sphere: usize, offset: Vector3<f64>) -> DMatrix<f64> {
        let n = self.n();
        if let Some(model) = &self.spatial {
            let poses = model.body_poses(&self.q);
            let point = poses[sphere].rotation.transpose() * offset + self.centre_in_link();
            let j = model.point_jacobian_with_poses(&poses, sphere, &point);
            return DMatrix::from_fn(3, n, |r, c| j[(r, c)]);
        }
        let jac = &self.sphere_jacobians()[sphere];
        let spin = -Vector3::y().cross(&offset);
        let mut out = DMatrix::zeros(3, n);
        for (k, col) in jac.iter().enumerate().take(sphere + 1) {
            out.set_column(k, &(col + spin));
        }
        out
    }

    /// The `3 x n` rows `[n, t1, t2]` of `J` for one contact: the frame times the velocity of
    /// the first body's touching point minus the second's.
    pub fn contact_jacobian(&self, contact: &Contact) -> DMatrix<f64> {
        let r = self.config.sphere_radius;
        let n: Vector3<f64> = contact.frame.row(0).transpose();
        let frame = DMatrix::from_fn(3, 3, |i, j| contact.frame[(i, j)]);
        let rel = match contact.key {
            ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                self.point_jacobian(ball, -r * n)
            }
            ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => {
                self.point_jacobian(a, -r * n) - self.point_jacobian(b, r * n)
            }
        };
        frame * rel
    }

    /// The stacked `3 nc x n` contact Jacobian of `contacts`.
    pub(super) fn stacked_jacobian(&self, contacts: &[Contact]) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(3 * contacts.len(), self.n());
        for (ci, c) in contacts.iter().enumerate() {
            j.view_mut((3 * ci, 0), (3, self.n()))
                .copy_from(&self.contact_jacobian(c));
        }
        j
    }

    /// The normal biases `s` of a step's contacts (see [`normal_shift`]), at the current state
    /// (the one the step was made at): `u_n - s` is the contact's true normal velocity.
    pub fn normal_shifts(&self, step: &ContactStep) -> Vec<f64> {
        let free = DVector::from_column_slice(&step.free);
        step.contacts
            .iter()
            .map(|c| {
                let jn = self.contact_jacobian(c).row(0).into_owned();
                let v_minus = (&jn * &self.qdot)[0];
                let v_free = if free.len() == self.n() {
                    (&jn * &free)[0]
                } else {
                    v_minus
                };
                normal_shift(
                    c.gap,
                    v_minus,
                    v_free,
                    self.config.restitution_at(v_minus),
                    self.config.h,
                )
            })
            .collect()
    }

    pub fn max_overlap(&self) -> f64 {
        self.contacts()
            .iter()
            .map(|c| (-c.gap).max(0.0))
            .fold(0.0, f64::max)
    }
}
