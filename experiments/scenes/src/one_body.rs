//! The contact problem of one free rigid body in generalized velocities `[v, omega]` (world
//! frame), shared by the scenes with a single body (the sphere on a plane, the fidelity
//! setups): `A = diag(m, m, m, I, I, I)` (a sphere or a cube: isotropic inertia), one 3x6
//! Jacobian block per contact (normal row first), the free velocity `v*`, rigid contacts at their
//! gaps (`k = inf`: SAP's near-rigid regime, Castro et al. sec. V), the time step and the current
//! velocities as the warm start.

use contactlab_core::generalized::GeneralizedProblem;
use faer::sparse::Triplet;
use nalgebra::{Matrix3x6, Vector6};

use crate::assemble::{Assembly, Gap};
use crate::error::SceneError;

/// One contact of the body: its Jacobian block (rows `[n, t1, t2]`) and its signed gap.
pub(crate) struct BodyContact {
    /// The rows that map `[v, omega]` to the contact point's velocity in the contact frame.
    pub jacobian: Matrix3x6<f64>,
    /// The signed distance to the obstacle (m).
    pub gap: f64,
}

/// The generalized problem of a body of mass and moment of inertia `[mass, inertia]` with these
/// contacts and friction `mu`, their gaps entering as `gap` says.
pub(crate) fn problem(
    [mass, inertia]: [f64; 2],
    contacts: &[BodyContact],
    free: &Vector6<f64>,
    mu: f64,
    dt: f64,
    velocity: &Vector6<f64>,
    gap: Gap,
) -> Result<GeneralizedProblem, SceneError> {
    let a: Vec<_> = (0..6)
        .map(|k| Triplet::new(k, k, if k < 3 { mass } else { inertia }))
        .collect();
    let mut jt = Vec::with_capacity(18 * contacts.len());
    for (ci, c) in contacts.iter().enumerate() {
        for r in 0..3 {
            for col in 0..6 {
                jt.push(Triplet::new(3 * ci + r, col, c.jacobian[(r, col)]));
            }
        }
    }
    Assembly {
        nv: 6,
        a,
        j: jt,
        contacts: contacts.iter().map(|c| (c.gap, mu)).collect(),
        free: free.iter().copied().collect(),
        velocity: velocity.iter().copied().collect(),
        tree_of: vec![0; 6],
        dt,
        gap,
    }
    .problem()
}
