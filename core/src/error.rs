//! Errors: every message names the file, the field and what is wrong.

use std::path::PathBuf;

/// A contact problem whose data is inconsistent or unusable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProblemError {
    /// A vector or matrix has the wrong size.
    #[error("field `{field}`: wrong shape: expected {expected}, found {found}")]
    Shape {
        /// The field name (`W`, `q`, `mu`, `M`, `H`, `f`, `w`).
        field: String,
        /// What the other fields imply.
        expected: String,
        /// What the field holds.
        found: String,
    },
    /// A NaN or infinite entry.
    #[error("field `{field}`: entry {index} is not finite ({value})")]
    NonFinite {
        /// The field name.
        field: String,
        /// Linear index of the entry (row-major for matrices).
        index: usize,
        /// The value found.
        value: f64,
    },
    /// A negative friction coefficient.
    #[error("field `mu`: contact {contact} has negative friction coefficient {value}")]
    NegativeFriction {
        /// Contact index.
        contact: usize,
        /// The value found.
        value: f64,
    },
    /// A constraint block whose parameters are out of range
    /// ([`Constraint::check`](crate::constraint::Constraint::check)).
    #[error("field `constraints`: constraint {index} ({kind}): {message}")]
    BadConstraint {
        /// Block index, in row order.
        index: usize,
        /// The kind's name.
        kind: String,
        /// What is wrong.
        message: String,
    },
    /// A matrix that must be symmetric is not, beyond a relative tolerance.
    #[error("field `{field}`: not symmetric: max |A - A'| = {max_asymmetry:.3e} exceeds {tolerance:.3e} (relative to max |A| = {scale:.3e})")]
    NotSymmetric {
        /// The field name.
        field: String,
        /// `max |A_ij - A_ji|`.
        max_asymmetry: f64,
        /// The allowed absolute asymmetry.
        tolerance: f64,
        /// `max |A_ij|`.
        scale: f64,
    },
    /// A matrix that must be positive (semi)definite is not.
    #[error("field `{field}`: not positive {kind}: {detail}")]
    NotPositive {
        /// The field name.
        field: String,
        /// "definite" or "semidefinite".
        kind: String,
        /// The evidence (a negative pivot or eigenvalue).
        detail: String,
    },
    /// An operation would allocate more than a documented maximum for the problem's size
    /// (e.g. [`crate::problem::MAX_DENSE_ENTRIES`]); refused instead of attempted.
    #[error("field `{field}`: too large: {detail}")]
    TooLarge {
        /// The field whose size is at fault.
        field: String,
        /// The sizes involved and the maximum.
        detail: String,
    },
}

/// Any error of this crate.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CoreError {
    /// Inconsistent problem data.
    #[error("{0}")]
    Problem(#[from] ProblemError),
    /// A problem file that cannot be read, with the field that is wrong when one is.
    #[error("{}: {}{message}", path.display(), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
    File {
        /// The file.
        path: PathBuf,
        /// The field (dataset or JSON key) at fault, when one is.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A factorization failed where the method needs it to succeed.
    #[error("linear algebra: {0}")]
    LinearAlgebra(String),
    /// The argmin executor failed.
    #[error("solver: {0}")]
    Solver(String),
    /// A request that does not fit the problem (e.g. a local-only method on a global problem).
    #[error("{0}")]
    Unsupported(String),
    /// An option value that is out of range or does not apply; the message names the option.
    #[error("{0}")]
    BadOption(String),
}

impl From<argmin::core::Error> for CoreError {
    fn from(e: argmin::core::Error) -> Self {
        CoreError::Solver(e.to_string())
    }
}
