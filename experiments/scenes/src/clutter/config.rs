//! The scene's parameters and their checks.

use serde::{Deserialize, Serialize};

use crate::error::SceneError;
use crate::params::check_ranges;

/// The largest `n_bodies` accepted (the paper goes to 160; beyond a few thousand the columns
/// are tens of metres tall).
pub const MAX_BODIES: usize = 4096;

fn default_n_bodies() -> usize {
    40
}
fn default_true() -> bool {
    true
}
fn default_dt() -> f64 {
    0.01
}
fn default_duration() -> f64 {
    10.0
}
fn default_mu() -> f64 {
    1.0
}
fn default_stiffness() -> f64 {
    1e12
}
fn default_gravity() -> f64 {
    9.81
}
fn default_density() -> f64 {
    1000.0
}
fn default_sphere_radius() -> f64 {
    0.05
}
fn default_box_side() -> f64 {
    0.1
}
fn default_container() -> f64 {
    0.8
}
fn default_wall_thickness() -> f64 {
    0.05
}
fn default_first_level() -> f64 {
    0.1
}
fn default_level_spacing() -> f64 {
    0.15
}
fn default_jitter() -> f64 {
    0.02
}
fn default_margin() -> f64 {
    1e-3
}

/// The scene's parameters, as experiment configs give them (`[scene.params]` and sweep keys).
/// Defaults: the paper's section VI-C and the peers' layout (module doc).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClutterConfig {
    /// Number of bodies (paper: 8 to 160; 40 in its Figs. 9-10).
    #[serde(default = "default_n_bodies")]
    pub n_bodies: usize,
    /// Seed of the jitter and the boxes' orientations.
    #[serde(default)]
    pub seed: u64,
    /// The container's four walls (`true`) or an open ground plane (`false`).
    #[serde(default = "default_true")]
    pub walls: bool,
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// The paper's simulated span (s); [`ClutterConfig::steps`] turns it into steps (the runner
    /// advances `[scene] steps`).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Friction coefficient of every contact.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Contact stiffness `k` (N/m); `inf` is a rigid contact.
    #[serde(default = "default_stiffness")]
    pub stiffness: f64,
    /// Dissipation time scale `tau_d` (s); `dt` when not given (the paper's choice).
    #[serde(default)]
    pub dissipation: Option<f64>,
    /// Gravitational acceleration (m/s^2), along `-z`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Density of every body (kg/m^3).
    #[serde(default = "default_density")]
    pub density: f64,
    /// Sphere radius (m).
    #[serde(default = "default_sphere_radius")]
    pub sphere_radius: f64,
    /// Box edge length (m; the boxes are cubes).
    #[serde(default = "default_box_side")]
    pub box_side: f64,
    /// Inner side of the container's square floor and height of its walls (m).
    #[serde(default = "default_container")]
    pub container: f64,
    /// Thickness of the floor box and the walls (m).
    #[serde(default = "default_wall_thickness")]
    pub wall_thickness: f64,
    /// Height of the lowest level of centres (m).
    #[serde(default = "default_first_level")]
    pub first_level: f64,
    /// Vertical distance between levels (m).
    #[serde(default = "default_level_spacing")]
    pub level_spacing: f64,
    /// Horizontal jitter of the centres, uniform in `[-jitter, jitter]` on `x` and `y` (m).
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Prediction distance (m): points this far apart are contacts (`phi0 > 0`).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// Widen the prediction by the distance each pair can close in one step (module doc).
    #[serde(default = "default_true")]
    pub speculative: bool,
}

impl Default for ClutterConfig {
    fn default() -> Self {
        ClutterConfig {
            n_bodies: default_n_bodies(),
            seed: 0,
            walls: true,
            dt: default_dt(),
            duration: default_duration(),
            mu: default_mu(),
            stiffness: default_stiffness(),
            dissipation: None,
            gravity: default_gravity(),
            density: default_density(),
            sphere_radius: default_sphere_radius(),
            box_side: default_box_side(),
            container: default_container(),
            wall_thickness: default_wall_thickness(),
            first_level: default_first_level(),
            level_spacing: default_level_spacing(),
            jitter: default_jitter(),
            margin: default_margin(),
            speculative: true,
        }
    }
}

impl ClutterConfig {
    /// Parses a `[scene.params]` table (with sweep values applied); unknown keys are errors,
    /// and a value of the wrong type is named by its key.
    pub fn from_table(params: &toml::Table) -> Result<ClutterConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// `round(duration / dt)`: the number of steps of the paper's span.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The dissipation time scale `tau_d`: the given one, else `dt`.
    pub fn tau_d(&self) -> f64 {
        self.dissipation.unwrap_or(self.dt)
    }

    /// Checks the physical parameters' ranges (the error names the key), not the layout.
    pub fn validate_ranges(&self) -> Result<(), SceneError> {
        check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration),
                ("density", self.density),
                ("sphere_radius", self.sphere_radius),
                ("box_side", self.box_side),
                ("container", self.container),
                ("wall_thickness", self.wall_thickness),
                ("first_level", self.first_level),
                ("level_spacing", self.level_spacing),
            ],
            &[
                ("mu", self.mu),
                ("gravity", self.gravity),
                ("jitter", self.jitter),
                ("margin", self.margin),
                ("dissipation", self.tau_d()),
            ],
        )?;
        // Infinity is allowed: a rigid contact (ContactModel's convention).
        if self.stiffness.is_nan() || self.stiffness <= 0.0 {
            return Err(SceneError::Param {
                key: "stiffness",
                message: format!(
                    "must be a positive number (inf: rigid), got {}",
                    self.stiffness
                ),
            });
        }
        Ok(())
    }

    /// Checks every parameter: ranges, the number of bodies, and that the initial layout is
    /// free of overlaps (columns apart and inside the walls, levels apart, the lowest level
    /// above the floor).
    pub fn validate(&self) -> Result<(), SceneError> {
        self.validate_ranges()?;
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        if self.n_bodies == 0 || self.n_bodies > MAX_BODIES {
            return bad(
                "n_bodies",
                format!("must be between 1 and {MAX_BODIES}, got {}", self.n_bodies),
            );
        }
        // A randomly turned box reaches its half diagonal from its centre.
        let r_box = 0.5 * self.box_side * 3f64.sqrt();
        let reach = r_box.max(self.sphere_radius);
        // Columns sit container/4 from the axes: neighbours are container/2 apart, the walls
        // container/4 away; both need reach + jitter < container/4.
        if reach + self.jitter >= 0.25 * self.container {
            return bad(
                "container",
                format!(
                    "columns at +-{:.3} m with jitter {} and bodies reaching {reach:.3} m from \
                     their centres overlap each other or the walls",
                    0.25 * self.container,
                    self.jitter
                ),
            );
        }
        if self.sphere_radius + r_box >= self.level_spacing {
            return bad(
                "level_spacing",
                format!(
                    "a sphere ({}) and a turned box (reach {r_box:.3}) on consecutive levels \
                     overlap at {}",
                    self.sphere_radius, self.level_spacing
                ),
            );
        }
        if self.first_level <= reach {
            return bad(
                "first_level",
                format!(
                    "bodies reaching {reach:.3} m from their centres cut the floor at {}",
                    self.first_level
                ),
            );
        }
        Ok(())
    }
}
