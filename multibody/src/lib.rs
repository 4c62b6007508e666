//! Articulated rigid-body dynamics in minimal coordinates for kinematic trees, after
//! Featherstone, "Rigid Body Dynamics Algorithms" (Springer, 2008).
//!
//! A tree is data ([`Description`], TOML or JSON: links with a parent, a joint, a placement,
//! an inertia and collision shapes), validated into a [`Model`]. On a model:
//!
//! | what | function | Featherstone |
//! |---|---|---|
//! | spatial vectors, transforms, inertias | [`spatial`] | ch. 2 (eq. 2.24-2.25, 2.31-2.32, 2.63, 2.66) |
//! | joint transforms and motion subspaces | [`Joint`] | sec. 4.4, Table 4.1 |
//! | forward kinematics, body velocities | [`Model::forward_kinematics`] | sec. 4.7, eq. 4.15 |
//! | point and contact Jacobians | [`Model::point_jacobian`], [`Model::contact_jacobian`] | eq. 4.22; sec. 8.1 |
//! | inverse dynamics `tau = M a + h` | [`Model::rnea`] (RNEA) | sec. 5.3, Table 5.1 |
//! | `h(q, v)`, `g(q)` | [`Model::bias_forces`], [`Model::gravity_forces`] | sec. 6.1, eq. 6.2 |
//! | `M(q)` | [`Model::mass_matrix`] (CRBA) | sec. 6.2, Table 6.2 |
//! | forward dynamics, a free-flight step | [`Model::forward_dynamics`], [`Model::step`] | sec. 6.1, eq. 6.1 |
//! | energy and spatial momentum | [`Model::total_energy`], [`Model::momentum`] | sec. 2.13 |
//!
//! ```
//! use contactlab_multibody::{contact_frame, Model};
//! use nalgebra::{DVector, Vector3};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/robots/quadruped.toml");
//! let robot = Model::from_path(path)?;
//! assert_eq!((robot.nq(), robot.nv()), (19, 18));
//! let q = robot.neutral_configuration();
//! let v = DVector::from_element(robot.nv(), 0.1);
//! let m = robot.mass_matrix(&q); // 18 x 18, symmetric positive definite
//! let h = robot.bias_forces(&q, &v); // Coriolis, centrifugal and gravity
//! let a = robot.forward_dynamics(&q, &v, &DVector::zeros(robot.nv()))?;
//! assert!((&m * &a + &h).norm() < 1e-9); // no joint torques: M a + h = 0
//! // The left front foot's contact Jacobian against the ground (normal +z first).
//! let foot = robot.body_index("LF_foot").unwrap();
//! let j = robot.contact_jacobian(&q, foot, &Vector3::zeros(), &contact_frame(&Vector3::z()));
//! assert_eq!(j.shape(), (3, 18));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Conventions
//!
//! * World `z` up, gravity `[0, 0, -9.81]` unless the description says otherwise.
//! * Spatial vectors are angular first where they become 6-vectors (Featherstone), but the
//!   code names the halves ([`Motion::angular`], [`Motion::linear`]).
//! * `q`: per joint in body order (parents first). A floating base takes
//!   `[x, y, z, qx, qy, qz, qw]`: its origin in the world and its orientation as a unit
//!   quaternion, **scalar last**. Revolute and prismatic joints take one coordinate, fixed
//!   joints none.
//! * `v`: a floating base takes `[v; omega]`, the linear velocity of its origin and its angular
//!   velocity, **both in the base frame** (Pinocchio's free-flyer convention, linear first);
//!   then one rate per revolute or prismatic joint. `q` moves by [`Model::integrate`]
//!   (`T exp(v dt)` for a base).
//! * Accelerations `a = dv/dt` component-wise (for the base: the spatial acceleration in base
//!   coordinates, which is the time derivative of the body twist).
//! * Contact frames are normal first, `[n, t1, t2]` ([`contact_frame`]), as everywhere in the
//!   project.

#![warn(missing_docs)]

pub mod config;
pub mod description;
pub mod dynamics;
pub mod error;
pub mod kinematics;
pub mod model;
pub mod spatial;

pub use description::{
    Axis, BoxDescription, Description, InertiaDescription, JointDescription, LinkDescription,
    RotationDescription, SphereDescription, DEFAULT_GRAVITY,
};
pub use dynamics::DynamicsError;
pub use kinematics::{contact_frame, Kinematics};
pub use model::{Body, BoxShape, Joint, Model, ModelError, Sphere};
pub use spatial::{Force, Motion, SpatialInertia, Transform};
