//! A kinematic tree described as data (TOML or JSON), before validation.
//!
//! A [`Description`] lists links; each names its parent (none: attached to the world), the
//! joint that connects them, where that joint sits in the parent's frame, the link's inertia
//! and its collision shapes. [`Description::build`] validates it into a
//! [`Model`](crate::Model). In TOML:
//!
//! ```toml
//! name = "double_pendulum"
//! gravity = [0.0, 0.0, -9.81]        # optional; this is the default
//!
//! [[links]]
//! name = "upper"
//! joint = { type = "revolute", axis = [0.0, 1.0, 0.0] }
//! translation = [0.0, 0.0, 2.0]      # joint frame in the parent's (here the world's) frame
//! rotation = { rpy = [0.0, 0.0, 0.0] }
//! mass = 1.0
//! com = [0.0, 0.0, -0.5]             # in the link frame
//! inertia = { solid_sphere = 0.05 }  # about the COM; or matrix, principal, solid_box, solid_cylinder
//! spheres = [{ radius = 0.05, offset = [0.0, 0.0, -1.0] }]
//!
//! [[links]]
//! name = "lower"
//! parent = "upper"
//! joint = { type = "revolute", axis = [0.0, 1.0, 0.0] }
//! translation = [0.0, 0.0, -1.0]
//! mass = 1.0
//! com = [0.0, 0.0, -0.5]
//! inertia = { principal = [0.1, 0.1, 0.01] }
//! ```
//!
//! The link frame is the joint frame moved by the joint: rotated by `q` about `axis`
//! (revolute), translated by `q axis` (prismatic), by the base pose (floating), or not at all
//! (fixed). Joint types: `floating` (only on a link without a parent), `revolute`,
//! `prismatic`, `fixed`. Rotations: `{ rpy = [roll, pitch, yaw] }` (URDF's fixed-axis
//! convention, `R = Rz(yaw) Ry(pitch) Rx(roll)`) or `{ quat_wxyz = [w, x, y, z] }`.

use crate::error::ModelError;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;

/// The largest robot description file [`Description::from_path`] reads (16 MiB; the shipped
/// quadruped's is a few kB).
pub const MAX_DESCRIPTION_BYTES: u64 = 16 << 20;

/// The standard gravity, `[0, 0, -9.81]` m/s^2 (`z` up).
pub const DEFAULT_GRAVITY: [f64; 3] = [0.0, 0.0, -9.81];

fn default_gravity() -> [f64; 3] {
    DEFAULT_GRAVITY
}

/// A kinematic tree as data: the serde form of a [`Model`](crate::Model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// A name for the tree (optional).
    #[serde(default)]
    pub name: String,
    /// Gravity in the world frame, m/s^2 (default `[0, 0, -9.81]`).
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// The links, in any order (parents are resolved by name).
    pub links: Vec<LinkDescription>,
}

/// One link: its joint to the parent, placement, inertia and collision shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDescription {
    /// Unique name.
    pub name: String,
    /// The parent link's name; none for a link attached to the world.
    #[serde(default)]
    pub parent: Option<String>,
    /// The joint between the parent (or world) and this link.
    pub joint: JointDescription,
    /// The joint frame's origin in the parent's frame (m).
    #[serde(default)]
    pub translation: [f64; 3],
    /// The joint frame's orientation in the parent's frame (default: identity).
    #[serde(default)]
    pub rotation: RotationDescription,
    /// Mass (kg), positive.
    pub mass: f64,
    /// The centre of mass in the link frame (m).
    #[serde(default)]
    pub com: [f64; 3],
    /// Rotational inertia about the centre of mass, in link-frame axes.
    pub inertia: InertiaDescription,
    /// Collision spheres fixed to the link.
    #[serde(default)]
    pub spheres: Vec<SphereDescription>,
    /// Collision boxes fixed to the link.
    #[serde(default)]
    pub boxes: Vec<BoxDescription>,
}

/// A joint type with its parameters (`{ type = "revolute", axis = [0, 0, 1] }`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum JointDescription {
    /// Six degrees of freedom relative to the world (a floating base).
    Floating,
    /// Rotation about `axis` (joint frame; normalised on validation).
    Revolute {
        /// The rotation axis, nonzero.
        axis: [f64; 3],
    },
    /// Translation along `axis` (joint frame; normalised on validation).
    Prismatic {
        /// The translation axis, nonzero.
        axis: [f64; 3],
    },
    /// No motion: the link is welded to its parent.
    Fixed,
}

/// An orientation: roll-pitch-yaw or a unit quaternion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RotationDescription {
    /// `[roll, pitch, yaw]` (rad), `R = Rz(yaw) Ry(pitch) Rx(roll)` (URDF).
    Rpy([f64; 3]),
    /// A unit quaternion `[w, x, y, z]` (normalised on validation; its norm must be within 1e-6 of 1).
    QuatWxyz([f64; 4]),
}

impl Default for RotationDescription {
    fn default() -> Self {
        RotationDescription::Rpy([0.0; 3])
    }
}

/// Axes of the link frame, for shapes given along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// The `x` axis.
    X,
    /// The `y` axis.
    Y,
    /// The `z` axis.
    Z,
}

/// Rotational inertia about the centre of mass, given directly or from a solid's shape and the mass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum InertiaDescription {
    /// The full 3x3 matrix (kg m^2), rows; must be symmetric positive definite.
    Matrix([[f64; 3]; 3]),
    /// Principal moments `[ixx, iyy, izz]` about the frame's axes (kg m^2).
    Principal([f64; 3]),
    /// A solid box of uniform density with these half extents (m).
    SolidBox([f64; 3]),
    /// A solid sphere of uniform density with this radius (m).
    SolidSphere(f64),
    /// A solid cylinder of uniform density along an axis of the link frame.
    SolidCylinder {
        /// Radius (m).
        radius: f64,
        /// Length (m).
        length: f64,
        /// The cylinder's axis.
        axis: Axis,
    },
}

/// A collision sphere fixed to a link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereDescription {
    /// Radius (m), positive.
    pub radius: f64,
    /// The centre in the link frame (m).
    #[serde(default)]
    pub offset: [f64; 3],
}

/// A collision box fixed to a link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxDescription {
    /// Half extents along the box's axes (m), positive.
    pub half_extents: [f64; 3],
    /// The box centre in the link frame (m).
    #[serde(default)]
    pub translation: [f64; 3],
    /// The box orientation in the link frame.
    #[serde(default)]
    pub rotation: RotationDescription,
}

impl Description {
    /// Parses a TOML description (errors name the offending key path).
    pub fn from_toml_str(text: &str) -> Result<Self, ModelError> {
        let de = toml::Deserializer::parse(text).map_err(|e| ModelError::Parse {
            format: "TOML",
            path: String::new(),
            message: e.to_string(),
        })?;
        serde_path_to_error::deserialize(de).map_err(|e| ModelError::Parse {
            format: "TOML",
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    /// Parses a JSON description (errors name the offending key path).
    pub fn from_json_str(text: &str) -> Result<Self, ModelError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| ModelError::Parse {
            format: "JSON",
            path: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    /// Reads a description from a `.toml` or `.json` file: a regular file of at most
    /// [`MAX_DESCRIPTION_BYTES`], checked before anything is read (a config can name any path,
    /// `/dev/zero` included).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        let path = path.as_ref();
        let io = |message: String| ModelError::Io {
            path: path.display().to_string(),
            message,
        };
        let ext = path.extension().and_then(|e| e.to_str());
        if !matches!(ext, Some("toml") | Some("json")) {
            return Err(io("unknown extension (expected .toml or .json)".into()));
        }
        let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
        let meta = file.metadata().map_err(|e| io(e.to_string()))?;
        if !meta.is_file() {
            return Err(io("not a regular file".into()));
        }
        if meta.len() > MAX_DESCRIPTION_BYTES {
            return Err(io(format!(
                "{} bytes, more than the {MAX_DESCRIPTION_BYTES} a description may have \
                 (MAX_DESCRIPTION_BYTES)",
                meta.len()
            )));
        }
        let mut text = String::new();
        file.take(MAX_DESCRIPTION_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| io(e.to_string()))?;
        let in_file = |e: ModelError| match e {
            ModelError::Parse {
                format,
                path: key,
                message,
            } => ModelError::Parse {
                format,
                path: format!("{}: {key}", path.display()),
                message,
            },
            other => other,
        };
        if ext == Some("toml") {
            Self::from_toml_str(&text).map_err(in_file)
        } else {
            Self::from_json_str(&text).map_err(in_file)
        }
    }
}
