//! The scene's parameters, their checks and the quantities derived from them.

use serde::{Deserialize, Serialize};

use crate::error::SceneError;

/// The largest accepted number of links.
pub const MAX_LINKS: usize = 200;

fn default_n_links() -> usize {
    12
}
fn default_link_length() -> f64 {
    1.0
}
fn default_sphere_radius() -> f64 {
    0.25
}
fn default_sphere_mass() -> f64 {
    1.0
}
fn default_pivot_height() -> f64 {
    10.0
}
fn default_floor_thickness() -> f64 {
    0.2
}
fn default_wall_x() -> f64 {
    4.0
}
fn default_mu() -> f64 {
    0.5
}
fn default_restitution() -> f64 {
    0.7
}
fn default_initial_angle() -> f64 {
    -std::f64::consts::FRAC_PI_4
}
fn default_initial_rate() -> f64 {
    1.0
}
fn default_h() -> f64 {
    0.001
}
fn default_duration() -> f64 {
    20.0
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    0.02
}

/// The pendulum's parameters (`[scene.params]`); the defaults are the paper's (see the module
/// doc for how we read them).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PendulumConfig {
    /// Number of links `n`.
    #[serde(default = "default_n_links")]
    pub n_links: usize,
    /// Length `L` of each link, hinge to sphere centre (m).
    #[serde(default = "default_link_length")]
    pub link_length: f64,
    /// Radius `R` of each sphere (m); below `L / 2`.
    #[serde(default = "default_sphere_radius")]
    pub sphere_radius: f64,
    /// Mass `m` of each sphere (kg).
    #[serde(default = "default_sphere_mass")]
    pub sphere_mass: f64,
    /// Height of the pivot above the origin (the floor's mid-plane) (m).
    #[serde(default = "default_pivot_height")]
    pub pivot_height: f64,
    /// Thickness of the floor, centred on the origin; its top surface is at half of it (m).
    #[serde(default = "default_floor_thickness")]
    pub floor_thickness: f64,
    /// The wall's surface `x = wall_x`, to the right of the pivot at `x = 0` (m).
    #[serde(default = "default_wall_x")]
    pub wall_x: f64,
    /// Friction coefficient of every contact.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Coefficient of restitution `e` of every contact, in `[0, 1]`.
    #[serde(default = "default_restitution")]
    pub restitution: f64,
    /// Impacts slower than this (`|v-|`, m/s) do not bounce (`e = 0` for them): the usual
    /// simulator cure for resting contacts that micro-bounce. 0, the default, applies `e` at
    /// every impact, as the paper describes.
    #[serde(default)]
    pub restitution_threshold: f64,
    /// Absolute angle of every link from the downward vertical at `t = 0`, positive towards
    /// the wall (rad); the paper's pi/4 away from the wall is `-pi/4`.
    #[serde(default = "default_initial_angle")]
    pub initial_angle: f64,
    /// Rigid rotation rate of the straight chain at `t = 0`, positive towards the wall (rad/s).
    #[serde(default = "default_initial_rate")]
    pub initial_rate: f64,
    /// Time step `h` (s).
    #[serde(default = "default_h")]
    pub h: f64,
    /// Simulated span (s); [`PendulumConfig::steps`] turns it into a step count (the runner's
    /// `[scene] steps` decides how many steps a run takes).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Gravitational acceleration (m/s^2), along `-z`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Pairs closer than this gap are contacts (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// Hinge `i`'s axis turned about its link's rod by `(-1)^i hinge_skew` from the swing axis
    /// (rad). 0, the default, is the paper's planar chain; otherwise neighbouring hinges are
    /// not parallel and the chain leaves the `x-z` plane (see "The non-planar variant").
    #[serde(default)]
    pub hinge_skew: f64,
}

impl Default for PendulumConfig {
    fn default() -> Self {
        PendulumConfig {
            n_links: default_n_links(),
            link_length: default_link_length(),
            sphere_radius: default_sphere_radius(),
            sphere_mass: default_sphere_mass(),
            pivot_height: default_pivot_height(),
            floor_thickness: default_floor_thickness(),
            wall_x: default_wall_x(),
            mu: default_mu(),
            restitution: default_restitution(),
            restitution_threshold: 0.0,
            initial_angle: default_initial_angle(),
            initial_rate: default_initial_rate(),
            h: default_h(),
            duration: default_duration(),
            gravity: default_gravity(),
            margin: default_margin(),
            hinge_skew: 0.0,
        }
    }
}

impl PendulumConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors.
    pub fn from_table(params: &toml::Table) -> Result<PendulumConfig, SceneError> {
        toml::Value::Table(params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SceneError::Parse(e.message().to_string()))
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        if self.n_links == 0 || self.n_links > MAX_LINKS {
            return bad(
                "n_links",
                format!("must be in 1..={MAX_LINKS}, got {}", self.n_links),
            );
        }
        crate::params::check_ranges(
            &[
                ("link_length", self.link_length),
                ("sphere_radius", self.sphere_radius),
                ("sphere_mass", self.sphere_mass),
                ("wall_x", self.wall_x),
                ("h", self.h),
                ("duration", self.duration),
            ],
            &[
                ("floor_thickness", self.floor_thickness),
                ("mu", self.mu),
                ("restitution_threshold", self.restitution_threshold),
                ("gravity", self.gravity),
                ("margin", self.margin),
            ],
        )?;
        for (key, v) in [
            ("pivot_height", self.pivot_height),
            ("initial_angle", self.initial_angle),
            ("initial_rate", self.initial_rate),
            ("hinge_skew", self.hinge_skew),
        ] {
            if !v.is_finite() {
                return bad(key, format!("must be finite, got {v}"));
            }
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return bad(
                "restitution",
                format!("must be in [0, 1], got {}", self.restitution),
            );
        }
        if 2.0 * self.sphere_radius >= self.link_length {
            return bad(
                "sphere_radius",
                format!(
                    "adjacent spheres would overlap: 2 x {} >= link_length {}",
                    self.sphere_radius, self.link_length
                ),
            );
        }
        Ok(())
    }

    /// `round(duration / h)`: the number of steps of the paper's span.
    pub fn steps(&self) -> usize {
        (self.duration / self.h).round() as usize
    }

    /// The height of the floor's top surface, `floor_thickness / 2`.
    pub fn floor_top(&self) -> f64 {
        0.5 * self.floor_thickness
    }

    /// A sphere's moment of inertia about its centre, `2 m R^2 / 5`.
    pub fn inertia(&self) -> f64 {
        0.4 * self.sphere_mass * self.sphere_radius * self.sphere_radius
    }

    /// The restitution applied to an impact at normal velocity `v_minus`: `e`, or 0 when the
    /// impact is slower than `restitution_threshold`.
    pub fn restitution_at(&self, v_minus: f64) -> f64 {
        if v_minus.abs() < self.restitution_threshold {
            0.0
        } else {
            self.restitution
        }
    }
}
