//! What every scene is and states: the [`Scene`] trait, a step's [`ContactStep`] (its
//! [`Contact`]s, each with a [`ContactKey`] that persists across steps, and its contact
//! problem), and the normal-first [`contact_frame`] of a contact normal.

use contactlab_core::error::CoreError;
use contactlab_core::generalized::StepProblem;
use nalgebra::{Matrix3, Vector3};

use crate::error::SceneError;

/// Identifies a contact across time steps (for warm starts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ContactKey {
    /// Body `ball` against the static obstacle `wall` (for the cube: 0: x = 0, 1: x = side,
    /// 2: y = 0, 3: y = side, 4: floor z = 0, 5: ceiling z = side).
    Wall {
        /// The moving body.
        ball: usize,
        /// The obstacle.
        wall: usize,
    },
    /// Bodies `a < b`.
    Pair {
        /// The first body (the normal points towards it).
        a: usize,
        /// The second body.
        b: usize,
    },
    /// One point of the contact manifold of body `body` and static obstacle `obstacle` (clutter:
    /// 0 the floor, 1-4 the walls); `feature` names the features in touch (the body's in the
    /// high 32 bits), so a box corner resting on a face keeps its key.
    WallPoint {
        /// The moving body.
        body: usize,
        /// The obstacle.
        obstacle: usize,
        /// The features in touch.
        feature: u64,
    },
    /// One point of the contact manifold of bodies `a < b` (the normal points towards `a`).
    PairPoint {
        /// The first body.
        a: usize,
        /// The second body.
        b: usize,
        /// The features in touch (`a`'s in the high 32 bits).
        feature: u64,
    },
}

/// One contact of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    /// Which pair.
    pub key: ContactKey,
    /// Rows `n, t1, t2` of the contact frame (world coordinates).
    pub frame: Matrix3<f64>,
    /// Gap between the surfaces at the start of the step (negative: overlap).
    pub gap: f64,
}

/// A step's contacts and its contact problem `u = W r + q` (normal first per contact).
#[derive(Debug, Clone)]
pub struct ContactStep {
    /// The contacts, in the order of the problem's blocks.
    pub contacts: Vec<Contact>,
    /// The contact problem of this step (contact space, or generalized velocities with the
    /// contact-space form derived on demand).
    pub problem: StepProblem,
    /// Generalized velocities without contact impulses (`M^-1 c`), in the scene's own layout.
    pub free: Vec<f64>,
}

impl ContactStep {
    /// The contact velocities `u = W r + q` of impulses `r`.
    pub fn velocities(&self, r: &[f64]) -> Result<Vec<f64>, CoreError> {
        self.problem.velocity(r)
    }

    /// Checks impulses a solver returned before a scene applies them: three per contact, all
    /// finite, and, when `dofs` is given, this step's free velocities of that length.
    pub fn check_impulses(&self, r: &[f64], dofs: Option<usize>) -> Result<(), SceneError> {
        let nc = self.contacts.len();
        if r.len() != 3 * nc {
            return Err(SceneError::Impulses {
                expected: 3 * nc,
                found: r.len(),
            });
        }
        if r.iter().any(|x| !x.is_finite()) {
            return Err(SceneError::NonFinite("impulses"));
        }
        match dofs {
            Some(n) if self.free.len() != n => Err(SceneError::Impulses {
                expected: n,
                found: self.free.len(),
            }),
            _ => Ok(()),
        }
    }
}

/// An orthonormal frame with rows `n, t1, t2`: `t1` is `n x e`, normalized, for the axis `e`
/// least aligned with `n` (so the frame is well conditioned and, for walls, fixed).
pub fn contact_frame(n: Vector3<f64>) -> Matrix3<f64> {
    let e = if n.x.abs() <= n.y.abs() && n.x.abs() <= n.z.abs() {
        Vector3::x()
    } else if n.y.abs() <= n.z.abs() {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = n.cross(&e).normalize();
    let t2 = n.cross(&t1);
    Matrix3::from_rows(&[n.transpose(), t1.transpose(), t2.transpose()])
}

/// A time-stepped system that produces one contact problem per step.
pub trait Scene: Send {
    /// This step's contacts and contact problem.
    fn contact_step(&self) -> Result<ContactStep, SceneError>;
    /// Applies the impulses `r` (normal first per contact, the step's frames) and advances one
    /// step; with no contacts, `r` is empty and the step is free motion.
    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError>;
    /// Named values of the state after the step, one DataFrame column each (the same names at
    /// every step).
    fn observables(&self) -> Vec<(&'static str, f64)>;
    /// The scene's parameters with every default filled in: its typed config as the
    /// `[scene.params]` table that gives it ([`config_table`](crate::params::config_table)). Runs record them in their
    /// `.meta.json`, so that reports read a run's parameters instead of parsing scene configs.
    fn parameters(&self) -> Result<toml::Table, SceneError>;
    /// Named numbers that follow from the parameters alone and that reports set beside the
    /// observables: the constants of the scene's exact answer where it has a closed form (the
    /// sphere's slide time, rolling speed and sliding friction, with an `_exact` suffix), or
    /// geometry (the pendulum's rest height). Runs record them beside the parameters. None,
    /// by default.
    fn constants(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Seconds the collision detection of the current state took, for scenes that find their
    /// contacts in a phase of their own and time it (the clutter); `None` by default. The runner
    /// reads it after `advance`, which detects the new state's contacts where a scene does so.
    fn detect_seconds(&self) -> Option<f64> {
        None
    }
    /// Whether the scene's own simulated span is over (the runner then stops the run before
    /// `[scene] steps`): for scenes whose step count follows from their parameters, such as
    /// a time-step sweep over a fixed duration. Never, by default.
    fn finished(&self) -> bool {
        false
    }
}
