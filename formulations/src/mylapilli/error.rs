//! The errors of the Mylapilli and Jain formulations' constructors.

use contactlab_core::ProblemError;

/// Errors of this module's constructors: invalid directions, problems or kinds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MylapilliError {
    /// Fewer than three friction directions: they would not positively span the tangent plane.
    #[error("n_f = {0}: the polyhedral friction cone needs at least 3 directions per contact")]
    TooFewDirections(usize),
    /// A direction angle that is NaN or infinite.
    #[error("theta0 of contact {contact} is not finite ({value})")]
    NonFiniteAngle {
        /// Contact index.
        contact: usize,
        /// The value found.
        value: f64,
    },
    /// The directions were built for a different number of contacts than the problem has.
    #[error("directions are given for {found} contacts, the problem has {expected}")]
    DirectionCount {
        /// Contacts in the problem.
        expected: usize,
        /// Contacts in the directions.
        found: usize,
    },
    /// An inconsistent problem (shape, non-finite entry, negative friction, a block's bad
    /// parameter such as a negative `f_max`).
    #[error("{0}")]
    Problem(#[from] ProblemError),
}
