//! [`SceneError`]: what can go wrong building, checking or advancing any scene.

use contactlab_core::error::ProblemError;

/// What can go wrong building or advancing a scene.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A parameter out of its range.
    #[error("scene parameter `{key}`: {message}")]
    Param {
        /// The parameter's name.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// Random placement could not fit the balls into the cube.
    #[error("could not place {n} balls without overlap in a cube of side {side} after {tries} tries; enlarge `side` or shrink the radii")]
    Placement {
        /// Balls asked for.
        n: usize,
        /// Cube side.
        side: f64,
        /// Attempts made.
        tries: usize,
    },
    /// The impulses handed to `advance` do not fit the step's contacts.
    #[error("impulses: expected {expected} values (3 per contact), got {found}")]
    Impulses {
        /// `3 n_c`.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// A non-finite impulse or state.
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
    /// The parameter table does not parse (unknown key, wrong type).
    #[error("scene parameters: {0}")]
    Parse(String),
    /// The contact problem failed validation.
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// The solver a caller stepped the scene with failed on a step.
    #[error("step {step}: solve: {message}")]
    Solve {
        /// The step.
        step: usize,
        /// What the solver said.
        message: String,
    },
}
