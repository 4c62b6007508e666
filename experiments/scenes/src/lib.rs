//! # contactlab-scenes
//!
//! Scenes: the physics that makes the papers' contact problems (bodies, collision, time
//! stepping and each scene's typed parameters). Nothing here knows solvers by name, runs,
//! DataFrames or reports: the lab crate (`contactlab-lab`) steps these scenes with the solvers
//! of its registry and writes what they observe.
//!
//! A [`Scene`] is a time-stepped system: at each step it states its contact problem
//! ([`ContactStep`]: the contacts, with keys that persist across steps for warm starts, and a
//! [`LocalProblem`](contactlab_core::LocalProblem) in the project's normal-first convention), takes the impulses some solver
//! found, and moves on. Experiment configs name a scene by [`SceneKind::name`] and give its
//! parameters as a TOML table, which the scene parses into its own typed config (unknown keys
//! are errors that name the key).
//!
//! Every scene module builds on the same base, each part in a module of its own: the [`Scene`]
//! trait and the step it states ([`ContactStep`], [`Contact`], [`ContactKey`], the
//! normal-first [`contact_frame`]), [`SceneError`], and a config's table
//! ([`parse_params`], [`config_table`], [`check_ranges`]), and [`SceneKind`], the registry by
//! which configs name a scene, with [`SceneConfig`], its parameters parsed and checked. This
//! root only declares the modules and re-exports their types.
//!
//! - [`balls`]: Todorov 2010, section IV: balls of different radii in a closed cube under
//!   gravity (Table 1), and the ball-drop test of Fig. 6.
//! - [`sphere`]: Mylapilli and Jain 2014, sphere on a plane (examples 1-2, Figs. 1-3): slides,
//!   then rolls; the exact answer alongside.
//! - [`pendulum`]: Mylapilli and Jain 2014, the twelve-link pendulum in minimal coordinates
//!   against a floor and a wall, with self-collisions and restitution (Figs. 4-8).
//! - [`clutter`]: Castro et al. 2022 (SAP), section VI-C: spheres and boxes dropped in four
//!   columns into a container, contacts from parry3d with box manifolds; problems in
//!   generalized velocities.
//! - [`random_lcp`]: Erleben and Ortiz, random boxed LCPs (Tables 1-2), one independent problem
//!   per step.
//! - [`spring_cylinder`]: Castro et al. 2022, section VI-B: a cylinder on the ground tied to a
//!   wall by a spring, stepped with the two-stage theta-method of [`theta`] (section II-D);
//!   the exact oscillator alongside.
//! - [`fidelity`]: the project's physical-fidelity study: a cube on corner spheres (or a
//!   sphere) sliding, dragged, on an incline or pressed to a wall, with the exact Coulomb
//!   answer and contact-level measures (Signorini, maximum dissipation, friction ratio); and
//!   [`fidelity::stack`], a light cube under a heavy one at rest, and [`fidelity::grasp`], a
//!   pinch grasp with a square-wave grip.
//! - [`quadruped`]: Hwangbo, Lee and Hutter 2018, section V-A: a quadruped with ANYmal's
//!   proportions on [`contactlab_multibody`] (floating base, twelve joints, sphere feet, box
//!   torso) in the paper's four tasks (hang, drop, random, trot); rigid contacts in
//!   generalized velocities with their contact-space form.

mod assemble;
pub mod balls;
pub mod clutter;
mod error;
pub mod fidelity;
mod kind;
mod one_body;
mod params;
pub mod pendulum;
pub mod quadruped;
pub mod random_lcp;
mod scene;
pub mod sphere;
pub mod spring_cylinder;
pub mod theta;

#[cfg(test)]
mod testing;

pub use balls::{Ball, BallsConfig, BallsInCube};
pub use clutter::{Clutter, ClutterConfig};
pub use error::SceneError;
pub use fidelity::grasp::{GraspConfig, PinchGrasp};
pub use fidelity::pile::{CubePile, PileConfig};
pub use fidelity::stack::{CubeStack, StackConfig};
pub use fidelity::{Fidelity, FidelityConfig, Setup};
pub use kind::{SceneConfig, SceneKind};
pub use params::{check_ranges, config_table, parse_params};
pub use pendulum::{Pendulum, PendulumConfig};
pub use quadruped::{Quadruped, QuadrupedConfig, Task};
pub use random_lcp::{LcpFamily, RandomLcp, RandomLcpConfig};
pub use scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};
pub use sphere::{SlideRoll, SphereConfig, SphereOnPlane};
pub use spring_cylinder::{SpringCylinder, SpringCylinderConfig, SpringCylinderExact};
pub use theta::{Scheme, Theta, ThetaSystem};
