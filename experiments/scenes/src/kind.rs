//! The registry of scenes by the name an experiment config gives (`[scene] kind = ...`), and
//! a scene's parameters parsed into its own typed config and checked, once, before anything
//! is built: what the lab's checked plan keeps per run and builds the scene from.

use crate::{
    BallsConfig, BallsInCube, Clutter, ClutterConfig, CubePile, CubeStack, Fidelity,
    FidelityConfig, GraspConfig, Pendulum, PendulumConfig, PileConfig, PinchGrasp, Quadruped,
    QuadrupedConfig, RandomLcp, RandomLcpConfig, Scene, SceneError, SphereConfig, SphereOnPlane,
    SpringCylinder, SpringCylinderConfig, StackConfig,
};

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
    /// The fidelity study's pile of cubes dropped into a box.
    CubePile,
}

impl SceneKind {
    /// Every scene, in the order `contactlab list` names them.
    pub const ALL: [SceneKind; 12] = [
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
        SceneKind::CubePile,
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
            SceneKind::CubePile => "cube_pile",
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

    /// Parses `params` into the scene's own config and checks it, without building the scene
    /// (but for the scenes whose check is placing their bodies: the ball drop, which must fit
    /// its cube, the pendulum and the quadruped, whose robot file is read).
    pub fn parse(self, params: &toml::Table) -> Result<SceneConfig, SceneError> {
        let cfg = match self {
            SceneKind::BallsInCube => SceneConfig::BallsInCube(BallsConfig::from_table(params)?),
            SceneKind::BallDrop => SceneConfig::BallDrop(BallsConfig::from_table(params)?),
            SceneKind::SphereOnPlane => {
                SceneConfig::SphereOnPlane(SphereConfig::from_table(params)?)
            }
            SceneKind::Pendulum => SceneConfig::Pendulum(PendulumConfig::from_table(params)?),
            SceneKind::RandomLcp => SceneConfig::RandomLcp(RandomLcpConfig::from_table(params)?),
            SceneKind::SpringCylinder => {
                SceneConfig::SpringCylinder(SpringCylinderConfig::from_table(params)?)
            }
            SceneKind::Clutter => SceneConfig::Clutter(ClutterConfig::from_table(params)?),
            SceneKind::Quadruped => SceneConfig::Quadruped(QuadrupedConfig::from_table(params)?),
            SceneKind::Fidelity => SceneConfig::Fidelity(FidelityConfig::from_table(params)?),
            SceneKind::CubeStack => SceneConfig::CubeStack(StackConfig::from_table(params)?),
            SceneKind::PinchGrasp => SceneConfig::PinchGrasp(GraspConfig::from_table(params)?),
            SceneKind::CubePile => SceneConfig::CubePile(PileConfig::from_table(params)?),
        };
        cfg.check()?;
        Ok(cfg)
    }

    /// Parses `params` into the scene's own config and checks it ([`SceneKind::parse`]).
    pub fn check_params(self, params: &toml::Table) -> Result<(), SceneError> {
        self.parse(params).map(|_| ())
    }

    /// Builds the scene from its parameters.
    pub fn build(self, params: &toml::Table) -> Result<Box<dyn Scene>, SceneError> {
        self.parse(params)?.build()
    }
}

/// A scene's parameters as its own typed config, checked: one variant per [`SceneKind`].
#[derive(Debug, Clone, PartialEq)]
pub enum SceneConfig {
    /// [`SceneKind::BallsInCube`].
    BallsInCube(BallsConfig),
    /// [`SceneKind::BallDrop`]: its `n_balls` stacked.
    BallDrop(BallsConfig),
    /// [`SceneKind::SphereOnPlane`].
    SphereOnPlane(SphereConfig),
    /// [`SceneKind::Pendulum`].
    Pendulum(PendulumConfig),
    /// [`SceneKind::RandomLcp`].
    RandomLcp(RandomLcpConfig),
    /// [`SceneKind::SpringCylinder`].
    SpringCylinder(SpringCylinderConfig),
    /// [`SceneKind::Clutter`].
    Clutter(ClutterConfig),
    /// [`SceneKind::Quadruped`].
    Quadruped(QuadrupedConfig),
    /// [`SceneKind::Fidelity`].
    Fidelity(FidelityConfig),
    /// [`SceneKind::CubeStack`].
    CubeStack(StackConfig),
    /// [`SceneKind::PinchGrasp`].
    PinchGrasp(GraspConfig),
    /// [`SceneKind::CubePile`].
    CubePile(PileConfig),
}

impl SceneConfig {
    /// Checks what the config's own ranges say; where only placing the bodies tells (the ball
    /// drop must fit its cube; the pendulum and the quadruped are assembled, the quadruped's
    /// robot file read), it places them.
    fn check(&self) -> Result<(), SceneError> {
        match self {
            SceneConfig::BallsInCube(c) => c.validate(),
            SceneConfig::BallDrop(c) => BallsInCube::ball_drop(c.n_balls, c).map(|_| ()),
            SceneConfig::SphereOnPlane(c) => c.validate(),
            SceneConfig::Pendulum(c) => Pendulum::new(c).map(|_| ()),
            SceneConfig::RandomLcp(c) => c.validate(),
            SceneConfig::SpringCylinder(c) => c.validate(),
            SceneConfig::Clutter(c) => c.validate(),
            SceneConfig::Quadruped(c) => Quadruped::new(c).map(|_| ()),
            SceneConfig::Fidelity(c) => c.resolved().validate(),
            SceneConfig::CubeStack(c) => c.validate(),
            SceneConfig::PinchGrasp(c) => c.validate(),
            SceneConfig::CubePile(c) => c.validate(),
        }
    }

    /// Builds the scene.
    pub fn build(&self) -> Result<Box<dyn Scene>, SceneError> {
        Ok(match self {
            SceneConfig::BallsInCube(c) => Box::new(BallsInCube::random(c)?),
            SceneConfig::BallDrop(c) => Box::new(BallsInCube::ball_drop(c.n_balls, c)?),
            SceneConfig::SphereOnPlane(c) => Box::new(SphereOnPlane::new(c)?),
            SceneConfig::Pendulum(c) => Box::new(Pendulum::new(c)?),
            SceneConfig::RandomLcp(c) => Box::new(RandomLcp::new(c)?),
            SceneConfig::SpringCylinder(c) => Box::new(SpringCylinder::new(c)?),
            SceneConfig::Clutter(c) => Box::new(Clutter::new(c)?),
            SceneConfig::Quadruped(c) => Box::new(Quadruped::new(c)?),
            SceneConfig::Fidelity(c) => Box::new(Fidelity::new(c)?),
            SceneConfig::CubeStack(c) => Box::new(CubeStack::new(c)?),
            SceneConfig::PinchGrasp(c) => Box::new(PinchGrasp::new(c)?),
            SceneConfig::CubePile(c) => Box::new(CubePile::new(c)?),
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
            (
                "cube_pile",
                SceneKind::CubePile,
                "count = 5",
                "mass = 0.0",
                "`mass`",
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
