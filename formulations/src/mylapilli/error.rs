//! The errors of the Mylapilli and Jain formulations' constructors, and the check every one of
//! them makes of its local problem.

use contactlab_core::{LocalProblem, ProblemError};

/// Errors of this module's constructors: invalid directions, bilateral data or problems.
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
    /// Inconsistent problem or bilateral data (shape, non-finite entry, negative friction).
    #[error("{0}")]
    Problem(#[from] ProblemError),
    /// `W_bb` is not symmetric positive definite, so the bilateral impulses cannot be
    /// eliminated.
    #[error("field `W_bb`: cannot eliminate the bilateral rows: {0}")]
    SingularBilateral(String),
}

/// Validates a local problem for this module (shapes, finite entries, `mu >= 0`).
pub(super) fn validate_problem(problem: &LocalProblem) -> Result<(), MylapilliError> {
    problem.validate()?;
    Ok(())
}
