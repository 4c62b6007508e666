//! What can be wrong with a kinematic tree's description (Featherstone's model needs a tree
//! with positive masses and physical inertias): one error type for reading a description
//! ([`crate::description`]) and for validating it into a model ([`crate::model`]).

use thiserror::Error;

/// Why a description is not a valid tree.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The reason.
        message: String,
    },
    /// The text does not parse into a description (unknown joint type, missing field, ...).
    #[error("invalid {format} description at `{path}`: {message}")]
    Parse {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The key path of the offending value (and the file, when read from one).
        path: String,
        /// The parser's message.
        message: String,
    },
    /// No links at all.
    #[error("the description has no links")]
    Empty,
    /// Two links share a name.
    #[error("two links are named `{0}`")]
    DuplicateName(String),
    /// A link names a parent that does not exist.
    #[error("link `{link}` names parent `{parent}`, which is not a link")]
    MissingParent {
        /// The link.
        link: String,
        /// The parent it names.
        parent: String,
    },
    /// Parents form a cycle (no path to the world).
    #[error("the parents of these links form a cycle: {}", links.join(" -> "))]
    Cycle {
        /// The links on the cycle, each the parent of the previous one.
        links: Vec<String>,
    },
    /// A floating joint on a link that has a parent.
    #[error("link `{0}` has a floating joint but also a parent (a floating joint attaches a link to the world)")]
    FloatingWithParent(String),
    /// A number is NaN or infinite.
    #[error("link `{link}`: {field} is not finite")]
    NonFinite {
        /// The link (or `gravity`).
        link: String,
        /// The field.
        field: String,
    },
    /// Mass zero or negative.
    #[error("link `{link}`: mass {mass} is not positive")]
    NonPositiveMass {
        /// The link.
        link: String,
        /// The mass given.
        mass: f64,
    },
    /// The inertia matrix is not symmetric.
    #[error("link `{link}`: the inertia matrix is not symmetric (asymmetry {asymmetry:e})")]
    InertiaNotSymmetric {
        /// The link.
        link: String,
        /// `max |I - I'|`.
        asymmetry: f64,
    },
    /// The inertia matrix has a non-positive eigenvalue.
    #[error("link `{link}`: the inertia matrix is not positive definite (smallest eigenvalue {min_eigenvalue:e})")]
    InertiaNotPositiveDefinite {
        /// The link.
        link: String,
        /// Its smallest eigenvalue.
        min_eigenvalue: f64,
    },
    /// The principal moments violate the triangle inequality (no mass distribution has them).
    #[error(
        "link `{link}`: principal moments {moments:?} violate the triangle inequality (a + b >= c)"
    )]
    InertiaTriangleInequality {
        /// The link.
        link: String,
        /// The principal moments, ascending.
        moments: [f64; 3],
    },
    /// A joint axis of zero length.
    #[error("link `{0}`: the joint axis is zero")]
    ZeroAxis(String),
    /// A quaternion whose norm is not 1.
    #[error("link `{link}`: quaternion norm {norm} is not 1")]
    NotUnitQuaternion {
        /// The link.
        link: String,
        /// Its norm.
        norm: f64,
    },
    /// A shape or solid dimension that is not positive.
    #[error("link `{link}`: {what} must be positive, got {value}")]
    NonPositiveDimension {
        /// The link.
        link: String,
        /// Which dimension.
        what: String,
        /// The value given.
        value: f64,
    },
}
