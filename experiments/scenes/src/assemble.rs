//! A scene's contact problem in generalized velocities assembled from triplets: `A`, `J` (three
//! rows per contact, normal first), the free and current velocities, and rigid contacts at their
//! gaps (`k = inf`: SAP's near-rigid regime, Castro et al. sec. V), with the scene's errors. The
//! single-body, stack and grasp scenes fill one [`Assembly`] each step.

use contactlab_core::generalized::{ContactModel, GeneralizedProblem, StepContext};
use contactlab_core::{CoreError, ProblemError};
use faer::sparse::{SparseColMat, Triplet};

use crate::error::SceneError;

/// One step's problem as triplets.
pub(crate) struct Assembly {
    /// Generalized velocities `nv`.
    pub nv: usize,
    /// `A` (`nv x nv`), both triangles.
    pub a: Vec<Triplet<usize, usize, f64>>,
    /// `J` (`3 nc x nv`).
    pub j: Vec<Triplet<usize, usize, f64>>,
    /// Per contact, its gap and friction coefficient.
    pub contacts: Vec<(f64, f64)>,
    /// Free-motion velocities `v*`.
    pub free: Vec<f64>,
    /// The current velocities (SAP's warm start).
    pub velocity: Vec<f64>,
    /// The kinematic tree of each velocity.
    pub tree_of: Vec<usize>,
    /// The time step.
    pub dt: f64,
}

/// A sparse matrix from triplets; a malformed one is an error naming `field`.
fn sparse(
    rows: usize,
    cols: usize,
    t: &[Triplet<usize, usize, f64>],
    field: &str,
) -> Result<SparseColMat<usize, f64>, SceneError> {
    SparseColMat::try_new_from_triplets(rows, cols, t).map_err(|e| {
        SceneError::Problem(ProblemError::Shape {
            field: field.into(),
            expected: "a sparse matrix".into(),
            found: format!("{e:?}"),
        })
    })
}

impl Assembly {
    /// The validated generalized problem (zero offset `b`).
    pub fn problem(self) -> Result<GeneralizedProblem, SceneError> {
        let nc = self.contacts.len();
        let models = self
            .contacts
            .iter()
            .map(|&(gap, mu)| ContactModel {
                phi0: gap,
                ..ContactModel::rigid(mu)
            })
            .collect();
        GeneralizedProblem::new(
            sparse(self.nv, self.nv, &self.a, "A")?,
            sparse(3 * nc, self.nv, &self.j, "J")?,
            self.free,
            vec![0.0; 3 * nc],
            models,
            StepContext {
                dt: Some(self.dt),
                v0: Some(self.velocity),
                tree_of: Some(self.tree_of),
            },
        )
        .map_err(|e| match e {
            CoreError::Problem(p) => SceneError::Problem(p),
            other => SceneError::Problem(ProblemError::Shape {
                field: "step".into(),
                expected: "a generalized problem".into(),
                found: other.to_string(),
            }),
        })
    }
}
