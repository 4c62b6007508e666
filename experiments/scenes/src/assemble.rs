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
    /// How a positive gap reaches the rigid formulations ([`Gap`]).
    pub gap: Gap,
}

/// How a contact's gap `phi0` enters the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gap {
    /// Every contact in the set touches for the rigid formulations (`b = 0`); only SAP reads
    /// `phi0`, through its bias `v^_n = -phi0 / dt`.
    Touching,
    /// A positive gap may close within the step, no more (Stewart and Trinkle's time-stepping
    /// condition `phi0 / dt + v_n >= 0`, Catto's speculative contact): the rigid formulations
    /// see `b_n = max(phi0, 0) / dt`, and SAP the rest of the gap, `phi0 = min(phi0, 0)`, so
    /// that its `J v + b - v^ = J v + phi0 / dt` is the same as with the whole gap in `phi0`.
    Speculative,
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
    /// The validated generalized problem (offset `b` by [`Gap`]).
    pub fn problem(self) -> Result<GeneralizedProblem, SceneError> {
        let nc = self.contacts.len();
        let ahead = |gap: f64| match self.gap {
            Gap::Touching => 0.0,
            Gap::Speculative => gap.max(0.0),
        };
        let models = self
            .contacts
            .iter()
            .map(|&(gap, mu)| ContactModel {
                phi0: gap - ahead(gap),
                ..ContactModel::rigid(mu)
            })
            .collect();
        let mut b = vec![0.0; 3 * nc];
        for (k, &(gap, _)) in self.contacts.iter().enumerate() {
            b[3 * k] = ahead(gap) / self.dt;
        }
        GeneralizedProblem::new(
            sparse(self.nv, self.nv, &self.a, "A")?,
            sparse(3 * nc, self.nv, &self.j, "J")?,
            self.free,
            b,
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
