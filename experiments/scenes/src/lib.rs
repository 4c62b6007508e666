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
pub mod fidelity;
mod one_body;
pub mod pendulum;
pub mod quadruped;
pub mod random_lcp;
pub mod sphere;
pub mod spring_cylinder;
pub mod theta;

#[cfg(test)]
mod testing;

use contactlab_core::StepProblem;
use nalgebra::Matrix3;

pub use balls::{Ball, BallsConfig, BallsInCube, SceneError};
pub use clutter::{Clutter, ClutterConfig};
pub use fidelity::grasp::{GraspConfig, PinchGrasp};
pub use fidelity::stack::{CubeStack, StackConfig};
pub use fidelity::{Fidelity, FidelityConfig, Setup};
pub use pendulum::{Pendulum, PendulumConfig};
pub use quadruped::{Quadruped, QuadrupedConfig, Task};
pub use random_lcp::{LcpFamily, RandomLcp, RandomLcpConfig};
pub use sphere::{SlideRoll, SphereConfig, SphereOnPlane};
pub use spring_cylinder::{SpringCylinder, SpringCylinderConfig, SpringCylinderExact};
pub use theta::{Scheme, Theta, ThetaSystem};

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
    pub fn velocities(&self, r: &[f64]) -> Result<Vec<f64>, contactlab_core::CoreError> {
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

/// Deserializes a scene's `[scene.params]` table (sweep values applied) into its config type;
/// an unknown key or a value of the wrong type is an error naming the key.
pub fn parse_params<T: serde::de::DeserializeOwned>(params: &toml::Table) -> Result<T, SceneError> {
    serde_path_to_error::deserialize(toml::Value::Table(params.clone())).map_err(
        |e: serde_path_to_error::Error<toml::de::Error>| {
            let path = e.path().to_string();
            let message = e.into_inner().message().to_string();
            SceneError::Parse(if path == "." {
                message
            } else {
                format!("`{path}`: {message}")
            })
        },
    )
}

/// A scene's typed config as the TOML table it parses from, every field present (what
/// [`Scene::parameters`] returns; [`parse_params`] reads it back into the same config). Fields
/// that are `None` are left out; an integer beyond TOML's range is an error naming it.
pub fn config_table<T: serde::Serialize>(config: &T) -> Result<toml::Table, SceneError> {
    toml::Table::try_from(config).map_err(|e| SceneError::Parse(format!("parameters: {e}")))
}

/// Checks scene parameters' ranges: each of `positive` must be a finite number above zero,
/// each of `nonnegative` a finite number at least zero. The first offender names the error.
pub fn check_ranges(
    positive: &[(&'static str, f64)],
    nonnegative: &[(&'static str, f64)],
) -> Result<(), SceneError> {
    let bad = |key: &'static str, kind: &str, v: f64| SceneError::Param {
        key,
        message: format!("must be a {kind} number, got {v}"),
    };
    if let Some(&(key, v)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
        return Err(bad(key, "positive", v));
    }
    if let Some(&(key, v)) = nonnegative
        .iter()
        .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
    {
        return Err(bad(key, "nonnegative", v));
    }
    Ok(())
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
    /// `[scene.params]` table that gives it ([`config_table`]). Runs record them in their
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

/// Which scene an experiment config names (`[scene] kind = ...`, by [`SceneKind::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SceneKind {
    /// Todorov's balls of different radii in a closed cube, random initial state.
    BallsInCube,
    /// Todorov's Fig. 6: balls stacked vertically, dropped from rest.
    BallDrop,
    /// Mylapilli and Jain's sphere sliding, then rolling, on a plane.
    SphereOnPlane,
    /// Mylapilli and Jain's twelve-link pendulum against a floor and a wall.
    Pendulum,
    /// Erleben and Ortiz's random boxed LCPs, a fresh problem per step.
    RandomLcp,
    /// Castro et al.'s spring-cylinder with the two-stage theta-method.
    SpringCylinder,
    /// Castro et al.'s clutter of spheres and boxes (section VI-C), generalized velocities.
    Clutter,
    /// Hwangbo et al.'s quadruped (section V-A): hang, drop, random or trot.
    Quadruped,
    /// The fidelity study's cube and sphere setups with closed-form answers.
    Fidelity,
    /// The fidelity study's light cube under a heavy one, at rest.
    CubeStack,
    /// The fidelity study's pinch grasp with a square-wave grip.
    PinchGrasp,
}

impl SceneKind {
    /// Every scene, in the order `contactlab list` names them.
    pub const ALL: [SceneKind; 11] = [
        SceneKind::BallsInCube,
        SceneKind::BallDrop,
        SceneKind::SphereOnPlane,
        SceneKind::Pendulum,
        SceneKind::RandomLcp,
        SceneKind::SpringCylinder,
        SceneKind::Clutter,
        SceneKind::Quadruped,
        SceneKind::Fidelity,
        SceneKind::CubeStack,
        SceneKind::PinchGrasp,
    ];

    /// The name configs use.
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::BallsInCube => "balls_in_cube",
            SceneKind::BallDrop => "ball_drop",
            SceneKind::SphereOnPlane => "sphere_on_plane",
            SceneKind::Pendulum => "pendulum",
            SceneKind::RandomLcp => "random_lcp",
            SceneKind::SpringCylinder => "spring_cylinder",
            SceneKind::Clutter => "clutter",
            SceneKind::Quadruped => "quadruped",
            SceneKind::Fidelity => "fidelity",
            SceneKind::CubeStack => "cube_stack",
            SceneKind::PinchGrasp => "pinch_grasp",
        }
    }

    /// The scene a config names; the error lists the names there are.
    pub fn from_name(name: &str) -> Result<SceneKind, SceneError> {
        SceneKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                SceneError::Parse(format!(
                    "unknown scene kind `{name}`; available: {}",
                    SceneKind::ALL.map(SceneKind::name).join(", ")
                ))
            })
    }

    /// Parses `params` into the scene's own config and checks it, without building the scene.
    pub fn check_params(self, params: &toml::Table) -> Result<(), SceneError> {
        match self {
            SceneKind::BallsInCube => BallsConfig::from_table(params)?.validate(),
            // The stack must also fit the cube, which only placing it tells.
            SceneKind::BallDrop => {
                let cfg = BallsConfig::from_table(params)?;
                BallsInCube::ball_drop(cfg.n_balls, &cfg).map(|_| ())
            }
            SceneKind::SphereOnPlane => SphereConfig::from_table(params)?.validate(),
            SceneKind::Pendulum => Pendulum::new(&PendulumConfig::from_table(params)?).map(|_| ()),
            SceneKind::RandomLcp => RandomLcpConfig::from_table(params)?.validate(),
            SceneKind::SpringCylinder => SpringCylinderConfig::from_table(params)?.validate(),
            SceneKind::Clutter => ClutterConfig::from_table(params)?.validate(),
            // Loading the robot and placing it is part of the check (the file, the height).
            SceneKind::Quadruped => {
                Quadruped::new(&QuadrupedConfig::from_table(params)?).map(|_| ())
            }
            SceneKind::Fidelity => FidelityConfig::from_table(params)?.resolved().validate(),
            SceneKind::CubeStack => StackConfig::from_table(params)?.validate(),
            SceneKind::PinchGrasp => GraspConfig::from_table(params)?.validate(),
        }
    }

    /// Builds the scene from its parameters.
    pub fn build(self, params: &toml::Table) -> Result<Box<dyn Scene>, SceneError> {
        Ok(match self {
            SceneKind::BallsInCube => {
                Box::new(BallsInCube::random(&BallsConfig::from_table(params)?)?)
            }
            SceneKind::BallDrop => {
                let cfg = BallsConfig::from_table(params)?;
                Box::new(BallsInCube::ball_drop(cfg.n_balls, &cfg)?)
            }
            SceneKind::SphereOnPlane => {
                Box::new(SphereOnPlane::new(&SphereConfig::from_table(params)?)?)
            }
            SceneKind::Pendulum => Box::new(Pendulum::new(&PendulumConfig::from_table(params)?)?),
            SceneKind::RandomLcp => {
                Box::new(RandomLcp::new(&RandomLcpConfig::from_table(params)?)?)
            }
            SceneKind::SpringCylinder => Box::new(SpringCylinder::new(
                &SpringCylinderConfig::from_table(params)?,
            )?),
            SceneKind::Clutter => Box::new(Clutter::new(&ClutterConfig::from_table(params)?)?),
            SceneKind::Quadruped => {
                Box::new(Quadruped::new(&QuadrupedConfig::from_table(params)?)?)
            }
            SceneKind::Fidelity => Box::new(Fidelity::new(&FidelityConfig::from_table(params)?)?),
            SceneKind::CubeStack => Box::new(CubeStack::new(&StackConfig::from_table(params)?)?),
            SceneKind::PinchGrasp => Box::new(PinchGrasp::new(&GraspConfig::from_table(params)?)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::SceneKind;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    /// Every scene kind: its config name parses, good parameters check and build, a bad
    /// parameter and an unknown key are errors naming the key, and a step runs. (The default
    /// ball drop, five balls up to 0.25 m, does not fit the 1 m cube: `check_params` says so.)
    #[test]
    fn every_scene_kind_parses_checks_and_builds() {
        let drop = "r_min = 0.05\nr_max = 0.1";
        let cases = [
            (
                "balls_in_cube",
                SceneKind::BallsInCube,
                "",
                "h = -1.0",
                "`h`",
                "kinetic_energy",
            ),
            (
                "ball_drop",
                SceneKind::BallDrop,
                drop,
                "",
                "`side`",
                "kinetic_energy",
            ),
            (
                "sphere_on_plane",
                SceneKind::SphereOnPlane,
                "",
                "mu = -1.0",
                "`mu`",
                "x",
            ),
            (
                "pendulum",
                SceneKind::Pendulum,
                "",
                "restitution = 2.0",
                "`restitution`",
                "last_z",
            ),
            (
                "random_lcp",
                SceneKind::RandomLcp,
                "",
                "size = 10",
                "`size`",
                "size",
            ),
            (
                "spring_cylinder",
                SceneKind::SpringCylinder,
                "scheme = \"symplectic_euler\"\nmu = 1.0",
                "dt = 0.0",
                "`dt`",
                "x",
            ),
            (
                "clutter",
                SceneKind::Clutter,
                "n_bodies = 8\nwalls = false",
                "level_spacing = 0.1",
                "`level_spacing`",
                "kinetic_energy",
            ),
            (
                "quadruped",
                SceneKind::Quadruped,
                "task = \"drop\"",
                "dt = 0.0",
                "`dt`",
                "base_height",
            ),
            (
                "fidelity",
                SceneKind::Fidelity,
                "setup = \"dragged_cube\"",
                "side = -0.2",
                "`side`",
                "t",
            ),
            (
                "cube_stack",
                SceneKind::CubeStack,
                "mass_ratio = 1000.0",
                "mass_ratio = 0.0",
                "`mass_ratio`",
                "t",
            ),
            (
                "pinch_grasp",
                SceneKind::PinchGrasp,
                "grip_high = 20.0",
                "duty = 0.0",
                "`duty`",
                "t",
            ),
        ];
        for (name, kind, good, bad, key, first_observable) in cases {
            assert_eq!(SceneKind::from_name(name).unwrap(), kind, "{name}");
            assert_eq!(kind.name(), name);
            let e = SceneKind::from_name("marbles").unwrap_err().to_string();
            assert!(e.contains("marbles") && e.contains(name), "{e}");
            assert!(kind.check_params(&table(good)).is_ok(), "{name}");
            let e = kind.check_params(&table(bad)).unwrap_err().to_string();
            assert!(e.contains(key), "{name}: {e}");
            let e = kind
                .check_params(&table("nonsense = 1"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("nonsense"), "{name}: {e}");
            let mut scene = kind.build(&table(good)).unwrap();
            // The resolved parameters build the same scene and resolve to themselves.
            let params = scene.parameters().unwrap();
            assert!(params.len() > table(good).len(), "{name}: {params:?}");
            let again = kind.build(&params).unwrap().parameters().unwrap();
            assert_eq!(again, params, "{name}");
            let step = scene.contact_step().unwrap();
            let r = vec![0.0; 3 * step.contacts.len()];
            scene.advance(&step, &r).unwrap();
            assert_eq!(
                scene.observables().first().map(|o| o.0),
                Some(first_observable),
                "{name}"
            );
        }
    }
}
