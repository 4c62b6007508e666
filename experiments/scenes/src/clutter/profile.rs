//! Where a run's time goes, phase by phase.

use contactlab_core::StepProblem;

use super::scene::Clutter;
use crate::error::SceneError;

/// Where one step's time went ([`profile`]), in seconds, and what the solver did.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTiming {
    /// Contacts in the step's problem.
    pub contacts: usize,
    /// Collision detection: broad and narrow phase, manifold reduction.
    pub detect: f64,
    /// Assembly of `A`, `J`, `v*` and the contact models (and their validation).
    pub assemble: f64,
    /// The solve, as the runner calls it (formulation build, driver, the shared ruler).
    pub solve: f64,
    /// `advance`: impulses through `A^-1`, the new poses.
    pub advance: f64,
    /// The driver's iterations (0 without contacts).
    pub iterations: u64,
    /// The solve's status (`no_contacts` without contacts).
    pub status: String,
    /// The largest overlap after the step.
    pub max_penetration: f64,
}

/// Runs `steps` steps of the scene, `solve` giving each step's impulses, and times each phase
/// separately, so the scene's own work can be set against the solve's (the runner times only
/// the solve). `solve` returns the impulses, the iterations and the status it reached.
pub fn profile<E: std::fmt::Display>(
    scene: &mut Clutter,
    steps: usize,
    mut solve: impl FnMut(&StepProblem) -> Result<(Vec<f64>, u64, String), E>,
) -> Result<Vec<StepTiming>, SceneError> {
    use std::time::Instant;
    let mut out = Vec::with_capacity(steps);
    for step in 0..steps {
        let t0 = Instant::now();
        let contacts = scene.contacts().len();
        let t1 = Instant::now();
        let cs = scene.contact_step()?;
        let t2 = Instant::now();
        let (r, iterations, status) = if contacts == 0 {
            (Vec::new(), 0, "no_contacts".to_string())
        } else {
            solve(&cs.problem).map_err(|e| SceneError::Solve {
                step,
                message: e.to_string(),
            })?
        };
        let t3 = Instant::now();
        scene.move_bodies(&cs, &r)?;
        let t4 = Instant::now();
        // The new state's contacts (kept for the next step; `advance` finds them too): this
        // step's detection.
        scene.contacts();
        let t5 = Instant::now();
        let max_penetration = scene.max_penetration();
        out.push(StepTiming {
            contacts,
            detect: (t1 - t0 + (t5 - t4)).as_secs_f64(),
            assemble: (t2 - t1).as_secs_f64(),
            solve: (t3 - t2).as_secs_f64(),
            advance: (t4 - t3).as_secs_f64(),
            iterations,
            status,
            max_penetration,
        });
    }
    Ok(out)
}
