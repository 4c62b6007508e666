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
//! ([`parse_params`], [`config_table`], [`check_ranges`]). This root only declares the modules,
//! re-exports their types and holds [`SceneKind`], the registry by which configs name a scene.
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
pub use fidelity::stack::{CubeStack, StackConfig};
pub use fidelity::{Fidelity, FidelityConfig, Setup};
pub use params::{check_ranges, config_table, parse_params};
pub use pendulum::{Pendulum, PendulumConfig};
pub use quadruped::{Quadruped, QuadrupedConfig, Task};
pub use random_lcp::{LcpFamily, RandomLcp, RandomLcpConfig};
pub use scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};
pub use sphere::{SlideRoll, SphereConfig, SphereOnPlane};
pub use spring_cylinder::{SpringCylinder, SpringCylinderConfig, SpringCylinderExact};
pub use theta::{Scheme, Theta, ThetaSystem};

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
