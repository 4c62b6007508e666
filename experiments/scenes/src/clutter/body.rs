//! The bodies (free spheres and boxes, their inertia and free motion) and the container.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};

use super::config::ClutterConfig;

/// A body's shape, centred on its centre of mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BodyShape {
    /// A solid sphere.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A solid box along its body axes.
    Cuboid {
        /// Half the edge lengths (m).
        half: Vector3<f64>,
    },
}

/// One free rigid body: shape, inertia and state.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidBody {
    /// Its shape.
    pub shape: BodyShape,
    /// Mass (kg).
    pub mass: f64,
    /// Principal moments of inertia about the shape's axes (kg m^2).
    pub inertia: Vector3<f64>,
    /// Centre of mass (world).
    pub x: Vector3<f64>,
    /// Orientation, body to world.
    pub q: UnitQuaternion<f64>,
    /// Linear velocity of the centre of mass (world).
    pub v: Vector3<f64>,
    /// Angular velocity (world).
    pub w: Vector3<f64>,
}

impl RigidBody {
    /// A solid sphere of `radius` and `density` at rest at `x`.
    pub fn sphere(radius: f64, density: f64, x: Vector3<f64>) -> RigidBody {
        let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        let i = 0.4 * mass * radius * radius;
        RigidBody {
            shape: BodyShape::Sphere { radius },
            mass,
            inertia: Vector3::repeat(i),
            x,
            q: UnitQuaternion::identity(),
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// A solid box of half extents `half` and `density` at rest at `x`, turned by `q`.
    pub fn cuboid(
        half: Vector3<f64>,
        density: f64,
        x: Vector3<f64>,
        q: UnitQuaternion<f64>,
    ) -> RigidBody {
        let mass = density * 8.0 * half.x * half.y * half.z;
        // (m / 12) (b^2 + c^2) with full edges b = 2 hb: (m / 3) (hb^2 + hc^2).
        let s = half.component_mul(&half);
        let inertia = Vector3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 3.0);
        RigidBody {
            shape: BodyShape::Cuboid { half },
            mass,
            inertia,
            x,
            q,
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }

    /// The radius of the smallest sphere about the centre that holds the body.
    pub fn bounding_radius(&self) -> f64 {
        match self.shape {
            BodyShape::Sphere { radius } => radius,
            BodyShape::Cuboid { half } => half.norm(),
        }
    }

    /// The rotated inertia `R diag(I) R'` (world), exactly symmetric.
    pub fn world_inertia(&self) -> Matrix3<f64> {
        self.rotated(self.inertia)
    }

    /// Its inverse `R diag(1 / I) R'`.
    pub fn world_inertia_inverse(&self) -> Matrix3<f64> {
        self.rotated(self.inertia.map(|i| 1.0 / i))
    }

    fn rotated(&self, d: Vector3<f64>) -> Matrix3<f64> {
        let r = self.q.to_rotation_matrix().into_inner();
        let m = r * Matrix3::from_diagonal(&d) * r.transpose();
        // Symmetric to the last bit, so A passes any symmetry check at any tolerance.
        (m + m.transpose()) * 0.5
    }

    /// `m |v|^2 / 2 + omega' I_w omega / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.mass * self.v.norm_squared() + 0.5 * self.w.dot(&(self.world_inertia() * self.w))
    }

    /// The largest speed of any of its points.
    pub(super) fn speed_bound(&self) -> f64 {
        self.v.norm() + self.w.norm() * self.bounding_radius()
    }

    /// Its pose for parry.
    pub(super) fn pose(&self) -> Pose {
        Pose::from_parts(
            to_parry(&self.x),
            Rotation::from_xyzw(self.q.i, self.q.j, self.q.k, self.q.w),
        )
    }

    /// The free motion of one step (module doc): `[v*, omega*]`.
    pub(super) fn free_velocity(&self, dt: f64, gravity: f64) -> [Vector3<f64>; 2] {
        let iw = self.world_inertia();
        let gyro = self.w.cross(&(iw * self.w));
        [
            self.v - Vector3::new(0.0, 0.0, dt * gravity),
            self.w - dt * (self.world_inertia_inverse() * gyro),
        ]
    }
}

/// A static obstacle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Obstacle {
    /// An axis-aligned box.
    Cuboid {
        /// Half extents (m).
        half: Vector3<f64>,
        /// Centre (m).
        center: Vector3<f64>,
    },
    /// The half-space `z <= 0`.
    Ground,
}

impl Obstacle {
    /// Distance from `p` to the obstacle (0 inside).
    pub(super) fn distance(&self, p: &Vector3<f64>) -> f64 {
        match self {
            Obstacle::Cuboid { half, center } => {
                let d = (p - center).abs() - half;
                d.map(|c| c.max(0.0)).norm()
            }
            Obstacle::Ground => p.z.max(0.0),
        }
    }
}

/// The obstacle index of the floor (floor box or ground) in
/// [`ContactKey::WallPoint`](crate::ContactKey::WallPoint); the walls are 1 to 4 (`+x`, `-x`,
/// `+y`, `-y`, the peers' order).
pub const FLOOR: usize = 0;

/// The container of `peers/scenes.py` (`_box_walls(L, t, closed=False)`): floor box with its
/// top at `z = 0`, then the walls at `+x`, `-x`, `+y`, `-y`; or the ground alone.
pub fn container(cfg: &ClutterConfig) -> Vec<Obstacle> {
    if !cfg.walls {
        return vec![Obstacle::Ground];
    }
    let (h, t) = (0.5 * cfg.container, cfg.wall_thickness);
    let cuboid = |half: [f64; 3], center: [f64; 3]| Obstacle::Cuboid {
        half: Vector3::from(half),
        center: Vector3::from(center),
    };
    vec![
        cuboid([h + t, h + t, 0.5 * t], [0.0, 0.0, -0.5 * t]),
        cuboid([0.5 * t, h + t, h], [h + 0.5 * t, 0.0, h]),
        cuboid([0.5 * t, h + t, h], [-h - 0.5 * t, 0.0, h]),
        cuboid([h, 0.5 * t, h], [0.0, h + 0.5 * t, h]),
        cuboid([h, 0.5 * t, h], [0.0, -h - 0.5 * t, h]),
    ]
}

/// A vector as parry's.
pub(super) fn to_parry(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}
