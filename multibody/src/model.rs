//! The validated kinematic tree: bodies in topological order (parents first), joints, inertias.
//!
//! Featherstone's model (ch. 4, sec. 4.1-4.2): body `i` has parent `lambda(i) < i`, a joint
//! whose frame sits at `placement` in the parent's frame (`X_T`, the tree transform), the
//! joint's own transform `X_J(q_i)` and motion subspace `S_i` (sec. 4.4, Table 4.1), and a
//! spatial inertia in the body frame. The body frame is the joint frame moved by the joint.

use crate::description::{
    Axis, BoxDescription, Description, InertiaDescription, JointDescription, LinkDescription,
    RotationDescription, SphereDescription,
};
pub use crate::error::ModelError;
use crate::spatial::{Motion, SpatialInertia, Transform};
use nalgebra::{Matrix3, Quaternion, SymmetricEigen, UnitQuaternion, Vector3};
use std::collections::HashMap;

/// A joint, with its axis normalised (Featherstone Table 4.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Joint {
    /// Six degrees of freedom (`nq = 7`, `nv = 6`; see the crate docs for the conventions).
    Floating,
    /// Rotation about a unit axis of the joint frame (`nq = nv = 1`).
    Revolute {
        /// Unit axis.
        axis: Vector3<f64>,
    },
    /// Translation along a unit axis of the joint frame (`nq = nv = 1`).
    Prismatic {
        /// Unit axis.
        axis: Vector3<f64>,
    },
    /// Welded (`nq = nv = 0`).
    Fixed,
}

impl Joint {
    /// Number of configuration coordinates.
    pub fn nq(&self) -> usize {
        match self {
            Joint::Floating => 7,
            Joint::Revolute { .. } | Joint::Prismatic { .. } => 1,
            Joint::Fixed => 0,
        }
    }

    /// Number of velocity coordinates (degrees of freedom).
    pub fn nv(&self) -> usize {
        match self {
            Joint::Floating => 6,
            Joint::Revolute { .. } | Joint::Prismatic { .. } => 1,
            Joint::Fixed => 0,
        }
    }

    /// The joint transform `X_J`: the pose of the body frame in the joint frame, from this
    /// joint's slice of `q` (Featherstone Table 4.1, as a pose rather than its inverse).
    pub fn transform(&self, q: &[f64]) -> Transform {
        match self {
            Joint::Floating => {
                let quat = UnitQuaternion::new_normalize(Quaternion::new(q[6], q[3], q[4], q[5]));
                Transform::from_quaternion(&quat, Vector3::new(q[0], q[1], q[2]))
            }
            Joint::Revolute { axis } => Transform::rotation_about(axis, q[0]),
            Joint::Prismatic { axis } => Transform::translation(axis * q[0]),
            Joint::Fixed => Transform::identity(),
        }
    }

    /// Column `k` of the motion subspace `S` in body coordinates (Featherstone eq. 3.33,
    /// Table 4.1). Floating: `v = [linear; angular]` in the body frame, so columns 0-2 are
    /// pure translations and 3-5 pure rotations.
    ///
    /// # Panics
    /// If `k >= self.nv()` (a fixed joint has no columns).
    pub fn motion_subspace(&self, k: usize) -> Motion {
        match self {
            Joint::Floating if k < 6 => {
                let mut e = Vector3::zeros();
                e[k % 3] = 1.0;
                if k < 3 {
                    Motion::new(Vector3::zeros(), e)
                } else {
                    Motion::new(e, Vector3::zeros())
                }
            }
            Joint::Revolute { axis } if k == 0 => Motion::new(*axis, Vector3::zeros()),
            Joint::Prismatic { axis } if k == 0 => Motion::new(Vector3::zeros(), *axis),
            _ => panic!("joint {self:?} has no motion subspace column {k}"),
        }
    }

    /// The joint velocity `S qdot` for this joint's slice of `v`.
    pub fn velocity(&self, v: &[f64]) -> Motion {
        match self {
            Joint::Floating => Motion::new(
                Vector3::new(v[3], v[4], v[5]),
                Vector3::new(v[0], v[1], v[2]),
            ),
            Joint::Revolute { axis } => Motion::new(axis * v[0], Vector3::zeros()),
            Joint::Prismatic { axis } => Motion::new(Vector3::zeros(), axis * v[0]),
            Joint::Fixed => Motion::zero(),
        }
    }

    /// The generalized force `S' f` for this joint, written into `out` (length `nv`).
    pub fn project_force(&self, f: &crate::spatial::Force, out: &mut [f64]) {
        match self {
            Joint::Floating => {
                out[..3].copy_from_slice(f.linear.as_slice());
                out[3..6].copy_from_slice(f.angular.as_slice());
            }
            Joint::Revolute { axis } => out[0] = axis.dot(&f.angular),
            Joint::Prismatic { axis } => out[0] = axis.dot(&f.linear),
            Joint::Fixed => {}
        }
    }
}

/// A collision sphere on a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// Radius.
    pub radius: f64,
    /// Centre in the body frame.
    pub offset: Vector3<f64>,
}

/// A collision box on a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxShape {
    /// Half extents along the box axes.
    pub half_extents: Vector3<f64>,
    /// The box's pose in the body frame.
    pub pose: Transform,
}

/// One body of a validated tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// Name (unique).
    pub name: String,
    /// Parent body index (always smaller than this body's), or none for the world.
    pub parent: Option<usize>,
    /// The joint to the parent.
    pub joint: Joint,
    /// The joint frame's pose in the parent frame (Featherstone's tree transform `X_T`).
    pub placement: Transform,
    /// Mass.
    pub mass: f64,
    /// Centre of mass in the body frame.
    pub com: Vector3<f64>,
    /// Rotational inertia about the centre of mass (body axes), symmetric positive definite.
    pub inertia_com: Matrix3<f64>,
    /// The spatial inertia about the body frame's origin.
    pub inertia: SpatialInertia,
    /// Collision spheres.
    pub spheres: Vec<Sphere>,
    /// Collision boxes.
    pub boxes: Vec<BoxShape>,
    /// Index of this joint's first coordinate in `q`.
    pub q_offset: usize,
    /// Index of this joint's first coordinate in `v`.
    pub v_offset: usize,
}

/// A validated kinematic tree (build it with [`Description::build`] or [`Model::from_description`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The tree's name.
    pub name: String,
    /// Gravity in the world frame.
    pub gravity: Vector3<f64>,
    bodies: Vec<Body>,
    nq: usize,
    nv: usize,
}

/// Refuses a non-finite number in `link`'s `field`.
fn finite(link: &str, field: &str, xs: &[f64]) -> Result<(), ModelError> {
    if xs.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(ModelError::NonFinite {
            link: link.into(),
            field: field.into(),
        })
    }
}

/// Refuses a dimension `what` of `link` that is not positive.
fn positive(link: &str, what: &str, value: f64) -> Result<(), ModelError> {
    if value > 0.0 {
        Ok(())
    } else {
        Err(ModelError::NonPositiveDimension {
            link: link.into(),
            what: what.into(),
            value,
        })
    }
}

/// A rotation matrix from roll-pitch-yaw angles or a unit quaternion (norm within `1e-6`).
fn rotation(link: &str, r: &RotationDescription) -> Result<Matrix3<f64>, ModelError> {
    match r {
        RotationDescription::Rpy(rpy) => {
            finite(link, "rotation.rpy", rpy)?;
            Ok(UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2])
                .to_rotation_matrix()
                .into_inner())
        }
        RotationDescription::QuatWxyz(w) => {
            finite(link, "rotation.quat_wxyz", w)?;
            let q = Quaternion::new(w[0], w[1], w[2], w[3]);
            let norm = q.norm();
            if (norm - 1.0).abs() > 1e-6 {
                return Err(ModelError::NotUnitQuaternion {
                    link: link.into(),
                    norm,
                });
            }
            Ok(UnitQuaternion::new_normalize(q)
                .to_rotation_matrix()
                .into_inner())
        }
    }
}

/// A joint's unit axis from a finite nonzero vector.
fn axis(link: &str, a: &[f64; 3]) -> Result<Vector3<f64>, ModelError> {
    finite(link, "joint.axis", a)?;
    let v = Vector3::from(*a);
    let n = v.norm();
    if n == 0.0 {
        return Err(ModelError::ZeroAxis(link.into()));
    }
    Ok(v / n)
}

/// The inertia about the centre of mass, given (a matrix or principal moments) or computed from
/// a solid of `mass`: symmetric positive definite, its principal moments satisfying the
/// triangle inequality.
fn inertia_com(link: &str, mass: f64, d: &InertiaDescription) -> Result<Matrix3<f64>, ModelError> {
    let m = match d {
        InertiaDescription::Matrix(rows) => {
            let flat: Vec<f64> = rows.iter().flatten().copied().collect();
            finite(link, "inertia.matrix", &flat)?;
            let m = Matrix3::from_row_slice(&flat);
            let asymmetry = (m - m.transpose()).abs().max();
            if asymmetry > 1e-9 * m.abs().max().max(f64::MIN_POSITIVE) {
                return Err(ModelError::InertiaNotSymmetric {
                    link: link.into(),
                    asymmetry,
                });
            }
            (m + m.transpose()) * 0.5
        }
        InertiaDescription::Principal(d) => {
            finite(link, "inertia.principal", d)?;
            Matrix3::from_diagonal(&Vector3::from(*d))
        }
        InertiaDescription::SolidBox(h) => {
            finite(link, "inertia.solid_box", h)?;
            for (k, x) in h.iter().enumerate() {
                positive(link, &format!("inertia.solid_box[{k}]"), *x)?;
            }
            let [a, b, c] = h.map(|x| 4.0 * x * x);
            Matrix3::from_diagonal(&Vector3::new(b + c, a + c, a + b)) * (mass / 12.0)
        }
        InertiaDescription::SolidSphere(r) => {
            finite(link, "inertia.solid_sphere", &[*r])?;
            positive(link, "inertia.solid_sphere", *r)?;
            Matrix3::identity() * (0.4 * mass * r * r)
        }
        InertiaDescription::SolidCylinder {
            radius,
            length,
            axis,
        } => {
            finite(link, "inertia.solid_cylinder", &[*radius, *length])?;
            positive(link, "inertia.solid_cylinder.radius", *radius)?;
            positive(link, "inertia.solid_cylinder.length", *length)?;
            let along = 0.5 * mass * radius * radius;
            let across = mass * (3.0 * radius * radius + length * length) / 12.0;
            let k = match axis {
                Axis::X => 0,
                Axis::Y => 1,
                Axis::Z => 2,
            };
            let mut d = Vector3::repeat(across);
            d[k] = along;
            Matrix3::from_diagonal(&d)
        }
    };
    // Finite inputs can still overflow (a solid of 1e200 m): refuse before the eigen solve.
    finite(link, "inertia (computed)", m.as_slice())?;
    let eig = SymmetricEigen::new(m).eigenvalues;
    let mut e = [eig[0], eig[1], eig[2]];
    e.sort_by(f64::total_cmp);
    if e[0] <= 0.0 || e.iter().any(|x| x.is_nan()) {
        return Err(ModelError::InertiaNotPositiveDefinite {
            link: link.into(),
            min_eigenvalue: e[0],
        });
    }
    if e[0] + e[1] < e[2] * (1.0 - 1e-9) {
        return Err(ModelError::InertiaTriangleInequality {
            link: link.into(),
            moments: e,
        });
    }
    Ok(m)
}

/// Each link's parent, as an index into the description's links: names are unique, parents
/// exist, and a floating joint has none.
fn parents(d: &Description) -> Result<Vec<Option<usize>>, ModelError> {
    let mut by_name = HashMap::new();
    for (i, l) in d.links.iter().enumerate() {
        if by_name.insert(l.name.as_str(), i).is_some() {
            return Err(ModelError::DuplicateName(l.name.clone()));
        }
    }
    let mut parent_of = Vec::with_capacity(d.links.len());
    for l in &d.links {
        let p = match &l.parent {
            None => None,
            Some(p) => Some(
                *by_name
                    .get(p.as_str())
                    .ok_or_else(|| ModelError::MissingParent {
                        link: l.name.clone(),
                        parent: p.clone(),
                    })?,
            ),
        };
        if p.is_some() && l.joint == JointDescription::Floating {
            return Err(ModelError::FloatingWithParent(l.name.clone()));
        }
        parent_of.push(p);
    }
    Ok(parent_of)
}

/// Refuses a loop of parents, naming its links.
fn check_acyclic(d: &Description, parent_of: &[Option<usize>]) -> Result<(), ModelError> {
    // Walk up from each link: meeting a link already on the path closes a loop.
    for start in 0..d.links.len() {
        let mut path = vec![start];
        let mut at = start;
        while let Some(p) = parent_of[at] {
            if let Some(k) = path.iter().position(|&x| x == p) {
                let links = path[k..]
                    .iter()
                    .chain(std::iter::once(&p))
                    .map(|&i| d.links[i].name.clone())
                    .collect();
                return Err(ModelError::Cycle { links });
            }
            path.push(p);
            at = p;
        }
    }
    Ok(())
}

/// The stable topological order of acyclic `parent_of` (repeatedly the first listed link whose
/// parent is placed) and each link's place in it.
fn topological_order(parent_of: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let n = parent_of.len();
    let mut new_index = vec![usize::MAX; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n)
            .find(|&i| {
                new_index[i] == usize::MAX
                    && parent_of[i].is_none_or(|p| new_index[p] != usize::MAX)
            })
            .expect("acyclic parents always leave a placeable link");
        new_index[next] = order.len();
        order.push(next);
    }
    (order, new_index)
}

/// A link's validated body, its parent already placed, its coordinates starting at
/// `(q_offset, v_offset)`.
fn body(
    l: &LinkDescription,
    parent: Option<usize>,
    (q_offset, v_offset): (usize, usize),
) -> Result<Body, ModelError> {
    let name = l.name.as_str();
    finite(name, "translation", &l.translation)?;
    finite(name, "mass", &[l.mass])?;
    finite(name, "com", &l.com)?;
    if l.mass <= 0.0 {
        return Err(ModelError::NonPositiveMass {
            link: name.into(),
            mass: l.mass,
        });
    }
    let joint = joint(name, &l.joint)?;
    let placement = Transform::new(rotation(name, &l.rotation)?, l.translation.into());
    let com = Vector3::from(l.com);
    let inertia_com = inertia_com(name, l.mass, &l.inertia)?;
    Ok(Body {
        name: l.name.clone(),
        parent,
        joint,
        placement,
        mass: l.mass,
        com,
        inertia_com,
        inertia: SpatialInertia::from_com(l.mass, com, inertia_com),
        spheres: spheres(name, &l.spheres)?,
        boxes: boxes(name, &l.boxes)?,
        q_offset,
        v_offset,
    })
}

/// A link's joint, its axis normalised.
fn joint(link: &str, j: &JointDescription) -> Result<Joint, ModelError> {
    Ok(match j {
        JointDescription::Floating => Joint::Floating,
        JointDescription::Revolute { axis: a } => Joint::Revolute {
            axis: axis(link, a)?,
        },
        JointDescription::Prismatic { axis: a } => Joint::Prismatic {
            axis: axis(link, a)?,
        },
        JointDescription::Fixed => Joint::Fixed,
    })
}

/// A link's spheres: finite offsets, positive radii.
fn spheres(link: &str, ss: &[SphereDescription]) -> Result<Vec<Sphere>, ModelError> {
    let mut spheres = Vec::new();
    for s in ss {
        finite(link, "spheres.offset", &s.offset)?;
        finite(link, "spheres.radius", &[s.radius])?;
        positive(link, "spheres.radius", s.radius)?;
        spheres.push(Sphere {
            radius: s.radius,
            offset: s.offset.into(),
        });
    }
    Ok(spheres)
}

/// A link's boxes: finite poses, positive half extents, valid rotations.
fn boxes(link: &str, bs: &[BoxDescription]) -> Result<Vec<BoxShape>, ModelError> {
    let mut boxes = Vec::new();
    for b in bs {
        finite(link, "boxes.half_extents", &b.half_extents)?;
        finite(link, "boxes.translation", &b.translation)?;
        for (k, x) in b.half_extents.iter().enumerate() {
            positive(link, &format!("boxes.half_extents[{k}]"), *x)?;
        }
        boxes.push(BoxShape {
            half_extents: b.half_extents.into(),
            pose: Transform::new(rotation(link, &b.rotation)?, b.translation.into()),
        });
    }
    Ok(boxes)
}

impl Description {
    /// Validates the description into a [`Model`] (here, not in the description module: the description is data and knows no model) (see [`ModelError`] for what is refused).
    pub fn build(&self) -> Result<Model, ModelError> {
        Model::from_description(self)
    }
}

impl Model {
    /// Validates a description: unique names, existing parents, no cycles, floating joints
    /// only at the world, finite numbers, positive masses and dimensions, unit quaternions,
    /// nonzero axes, inertias symmetric positive definite with principal moments satisfying
    /// the triangle inequality. Bodies are ordered parents first, keeping the description's
    /// order where it allows (repeatedly the first listed link whose parent is placed).
    pub fn from_description(d: &Description) -> Result<Model, ModelError> {
        finite("gravity", "gravity", &d.gravity)?;
        if d.links.is_empty() {
            return Err(ModelError::Empty);
        }
        let parent_of = parents(d)?;
        check_acyclic(d, &parent_of)?;
        let (order, new_index) = topological_order(&parent_of);
        let mut bodies = Vec::with_capacity(order.len());
        let (mut nq, mut nv) = (0, 0);
        for &i in &order {
            let parent = parent_of[i].map(|p| new_index[p]);
            let body = body(&d.links[i], parent, (nq, nv))?;
            nq += body.joint.nq();
            nv += body.joint.nv();
            bodies.push(body);
        }
        Ok(Model {
            name: d.name.clone(),
            gravity: d.gravity.into(),
            bodies,
            nq,
            nv,
        })
    }

    /// Reads and validates a `.toml` or `.json` description.
    pub fn from_path(path: impl AsRef<std::path::Path>) -> Result<Model, ModelError> {
        Description::from_path(path)?.build()
    }

    /// The bodies, parents before children.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// Number of bodies.
    pub fn num_bodies(&self) -> usize {
        self.bodies.len()
    }

    /// Length of the configuration vector `q`.
    pub fn nq(&self) -> usize {
        self.nq
    }

    /// Length of the velocity vector `v` (degrees of freedom).
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// The index of the body with this name.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// The total mass.
    pub fn total_mass(&self) -> f64 {
        self.bodies.iter().map(|b| b.mass).sum()
    }

    /// Whether body `ancestor` is `body` or on its path to the world.
    pub fn is_ancestor(&self, ancestor: usize, body: usize) -> bool {
        let mut at = Some(body);
        while let Some(i) = at {
            if i == ancestor {
                return true;
            }
            if i < ancestor {
                return false;
            }
            at = self.bodies[i].parent;
        }
        false
    }
}
