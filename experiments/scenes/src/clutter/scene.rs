//! The scene: the bodies in their container, the simulated time, the contacts of the current
//! state, the observables, and the scene as the runner drives it (module doc of
//! [`crate::clutter`]).

use std::sync::OnceLock;

use nalgebra::{UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::body::{container, BodyShape, Obstacle, RigidBody};
use super::config::{ClutterConfig, MAX_BODIES};
use super::contacts::{detect, ClutterContact};
use crate::error::SceneError;
use crate::scene::{ContactStep, Scene};

/// Clutter: the bodies, the container and the time stepping.
#[derive(Debug, Clone)]
pub struct Clutter {
    /// The bodies.
    pub bodies: Vec<RigidBody>,
    /// The static obstacles (index 0 the floor).
    pub obstacles: Vec<Obstacle>,
    /// The parameters.
    pub config: ClutterConfig,
    /// Simulated time (s).
    pub time: f64,
    /// What the last step's slip is read from, after the step (its time is not the step's).
    pub(super) last: LastStep,
    /// The contacts of the current state, found once (contact step and observables share them),
    /// and the seconds their detection took.
    pub(super) contacts: OnceLock<(Vec<ClutterContact>, f64)>,
}

impl Clutter {
    /// The peers' layout (module doc) from `config.seed`.
    pub fn new(config: &ClutterConfig) -> Result<Clutter, SceneError> {
        config.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let c = 0.25 * config.container;
        let columns = [(-c, -c), (c, -c), (-c, c), (c, c)];
        let half = Vector3::repeat(0.5 * config.box_side);
        let mut bodies = Vec::with_capacity(config.n_bodies);
        for i in 0..config.n_bodies {
            let (cx, cy) = columns[i % 4];
            let level = i / 4;
            let z = config.first_level + config.level_spacing * level as f64;
            // Draws in the peers' order: x, y, then (boxes) angle and axis.
            let j = config.jitter;
            let mut jitter = || {
                if j > 0.0 {
                    rng.random_range(-j..=j)
                } else {
                    0.0
                }
            };
            let x = Vector3::new(cx + jitter(), cy + jitter(), z);
            if (i + level) % 2 == 0 {
                bodies.push(RigidBody::sphere(config.sphere_radius, config.density, x));
            } else {
                let angle = rng.random_range(-std::f64::consts::PI..=std::f64::consts::PI);
                // Uniform on the unit sphere (what numpy's normalized Gaussian draws).
                let cos_t: f64 = rng.random_range(-1.0..=1.0);
                let phi = rng.random_range(0.0..std::f64::consts::TAU);
                let sin_t = (1.0 - cos_t * cos_t).max(0.0).sqrt();
                let axis = Vector3::new(sin_t * phi.cos(), sin_t * phi.sin(), cos_t);
                let q = UnitQuaternion::from_scaled_axis(axis * angle);
                bodies.push(RigidBody::cuboid(half, config.density, x, q));
            }
        }
        Ok(Clutter::from_bodies(bodies, config.clone()))
    }

    /// A scene with the given bodies in `config`'s container (for tests and other layouts;
    /// `config.n_bodies` is set to their number and the layout parameters are not used).
    pub fn with_bodies(
        bodies: Vec<RigidBody>,
        config: &ClutterConfig,
    ) -> Result<Clutter, SceneError> {
        config.validate_ranges()?;
        if bodies.is_empty() || bodies.len() > MAX_BODIES {
            return Err(SceneError::Param {
                key: "n_bodies",
                message: format!("must be between 1 and {MAX_BODIES}, got {}", bodies.len()),
            });
        }
        let valid = |b: &RigidBody| {
            b.mass > 0.0
                && b.inertia.iter().all(|i| *i > 0.0 && i.is_finite())
                && [b.x, b.v, b.w]
                    .iter()
                    .all(|v| v.iter().all(|c| c.is_finite()))
                && match b.shape {
                    BodyShape::Sphere { radius } => radius > 0.0 && radius.is_finite(),
                    BodyShape::Cuboid { half } => half.iter().all(|h| *h > 0.0 && h.is_finite()),
                }
        };
        if !bodies.iter().all(valid) {
            return Err(SceneError::NonFinite(
                "bodies (or a non-positive size, mass or inertia)",
            ));
        }
        let config = ClutterConfig {
            n_bodies: bodies.len(),
            ..config.clone()
        };
        Ok(Clutter::from_bodies(bodies, config))
    }

    fn from_bodies(bodies: Vec<RigidBody>, config: ClutterConfig) -> Clutter {
        Clutter {
            bodies,
            obstacles: container(&config),
            config,
            time: 0.0,
            last: LastStep::default(),
            contacts: OnceLock::new(),
        }
    }

    /// The contacts at the current state (found on first use, then kept until the next step).
    pub fn contacts(&self) -> &[ClutterContact] {
        &self
            .contacts
            .get_or_init(|| {
                let clock = std::time::Instant::now();
                let found = detect(&self.bodies, &self.obstacles, &self.config);
                (found, clock.elapsed().as_secs_f64())
            })
            .0
    }

    /// Total kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(RigidBody::kinetic_energy).sum()
    }

    /// Potential energy `sum m g z` (J).
    pub fn potential_energy(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| b.mass * self.config.gravity * b.x.z)
            .sum()
    }

    /// The largest overlap at the current state (0 when nothing overlaps).
    pub fn max_penetration(&self) -> f64 {
        self.contacts()
            .iter()
            .map(|c| (-c.phi0).max(0.0))
            .fold(0.0, f64::max)
    }

    /// Mean and largest speed of the centres of mass.
    pub fn speeds(&self) -> (f64, f64) {
        let s = self.bodies.iter().map(|b| b.v.norm());
        let max = s.clone().fold(0.0, f64::max);
        (s.sum::<f64>() / self.bodies.len() as f64, max)
    }

    /// Mean tangential speed of the last step's pressed contacts (module doc; `NaN` if none):
    /// `|(J_i v)_t|` with the step's contacts and the new velocities, the bodies where they
    /// were at the start of the step.
    pub fn mean_slip(&self) -> f64 {
        let last = &self.last;
        let (mut slip, mut pressed) = (0.0, 0);
        for (c, _) in last
            .contacts
            .iter()
            .zip(&last.normal)
            .filter(|(_, &n)| n > 0.0)
        {
            let at = |body: usize| {
                let b = &self.bodies[body];
                b.v + b.w.cross(&(c.point - last.x[body]))
            };
            let relative = at(c.a) - c.b.map_or(Vector3::zeros(), at);
            let u = c.frame * relative;
            slip += u[1].hypot(u[2]);
            pressed += 1;
        }
        if pressed > 0 {
            slip / pressed as f64
        } else {
            f64::NAN
        }
    }

    /// Contacts pressed (positive normal impulse) in the last step.
    pub fn pressed(&self) -> usize {
        self.last.normal.iter().filter(|&&n| n > 0.0).count()
    }
}

/// The last step's contacts, normal impulses and body positions at its start.
#[derive(Debug, Clone, Default)]
pub(super) struct LastStep {
    pub(super) contacts: Vec<ClutterContact>,
    pub(super) normal: Vec<f64>,
    pub(super) x: Vec<Vector3<f64>>,
}

impl Scene for Clutter {
    /// The config, with `dissipation` resolved (`dt` when the config gives none).
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&ClutterConfig {
            dissipation: Some(self.config.tau_d()),
            ..self.config.clone()
        })
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        Clutter::contact_step(self)
    }

    /// The current state's detection (made by the `advance` that reached it).
    fn detect_seconds(&self) -> Option<f64> {
        self.contacts.get().map(|(_, seconds)| *seconds)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        Clutter::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let (mean_speed, max_speed) = self.speeds();
        vec![
            ("kinetic_energy", self.kinetic_energy()),
            ("potential_energy", self.potential_energy()),
            ("max_penetration", self.max_penetration()),
            ("contacts", self.contacts().len() as f64),
            ("pressed_contacts", self.pressed() as f64),
            ("mean_speed", mean_speed),
            ("max_speed", max_speed),
            ("mean_slip", self.mean_slip()),
        ]
    }
}
