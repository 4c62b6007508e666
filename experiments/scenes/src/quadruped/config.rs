//! The quadruped scene's parameters (`[scene.params]`), their defaults and their checks.
//!
//! Defaults follow Hwangbo, Lee and Hutter 2018, section V-A, where the paper gives a number
//! (`dt = 1 ms`, the 1 m release height, the drop's 1 m/s, the random task's 1 rad^2 and 5 s),
//! and the choices documented in the parent module otherwise.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::SceneError;
use crate::params::check_ranges;

/// The robot description the scene loads unless `robot` says otherwise (relative to the
/// workspace root).
pub const DEFAULT_ROBOT: &str = "multibody/robots/quadruped.toml";

/// Which of the paper's tasks (section V-A) the scene runs, plus `stand`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// Task 2: released at rest from `height`, joints passive, only the feet collide: the
    /// torso passes through the ground and the robot hangs from its feet.
    Hang,
    /// Task 3: released from `height` with `drop_speed` forward, joints passive, feet and torso
    /// collide; reset once the robot is at rest.
    Drop,
    /// Task 4: released from `height`, joints PD-controlled towards random targets of variance
    /// `target_variance`, feet and torso collide; reset every `reset_period`.
    Random,
    /// Task 1: a PD-tracked diagonal (trot) gait from standing, only the feet collide.
    Trot,
    /// Not one of the paper's tasks: standing on the feet, PD-held at the nominal crouch (the
    /// trot's start with no gait), for tests and as a baseline.
    Stand,
}

impl Task {
    /// Whether the torso box collides with the ground (paper: drop and random, "the maximum
    /// possible number of contacts is 8"; hang and trot: 4, the feet).
    pub fn torso_collides(self) -> bool {
        matches!(self, Task::Drop | Task::Random)
    }

    /// Whether the joints are driven by the PD controller (hang and drop are the paper's
    /// unactuated tasks, sec. V-A: "For unactuated tasks, the simulation is stable ...").
    pub fn actuated(self) -> bool {
        !matches!(self, Task::Hang | Task::Drop)
    }

    /// Whether the robot starts standing on its feet (trot, stand) rather than released from
    /// `height`.
    pub fn starts_standing(self) -> bool {
        matches!(self, Task::Trot | Task::Stand)
    }

    /// The task's name as configs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Task::Hang => "hang",
            Task::Drop => "drop",
            Task::Random => "random",
            Task::Trot => "trot",
            Task::Stand => "stand",
        }
    }
}

/// The trot's controller (`trot_controller`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrotController {
    /// The open-loop diagonal gait tracked by the joint PD law ([`super::controller::trot_targets`]).
    OpenLoop,
    /// Raibert's foot placement and virtual-model stance forces at `trot_speed` ([`super::trot`]).
    Raibert,
}

fn default_trot_controller() -> TrotController {
    TrotController::OpenLoop
}
fn default_trot_speed() -> f64 {
    1.5
}
fn default_trot_height() -> f64 {
    0.5
}
fn default_swing_height() -> f64 {
    0.08
}
fn default_raibert_gain() -> f64 {
    0.0
}
fn default_speed_gain() -> f64 {
    4.0
}
fn default_speed_integral_gain() -> f64 {
    4.0
}

fn default_task() -> Task {
    Task::Stand
}
fn default_robot() -> String {
    DEFAULT_ROBOT.into()
}
fn default_dt() -> f64 {
    1e-3
}
fn default_mu() -> f64 {
    0.8
}
fn default_height() -> f64 {
    1.0
}
fn default_drop_speed() -> f64 {
    1.0
}
fn default_kp() -> f64 {
    200.0
}
fn default_kd() -> f64 {
    4.0
}
fn default_torque_limit() -> f64 {
    40.0
}
fn default_stance_hfe() -> f64 {
    0.4
}
fn default_stance_kfe() -> f64 {
    0.8
}
fn default_target_variance() -> f64 {
    1.0
}
fn default_target_period() -> f64 {
    0.2
}
fn default_reset_period() -> f64 {
    5.0
}
fn default_rest_energy() -> f64 {
    0.01
}
fn default_rest_duration() -> f64 {
    0.1
}
fn default_drop_timeout() -> f64 {
    10.0
}
fn default_gait_period() -> f64 {
    0.5
}
fn default_hfe_amplitude() -> f64 {
    0.2
}
fn default_kfe_amplitude() -> f64 {
    0.4
}

/// The scene's parameters, as experiment configs give them (`[scene.params]` and sweep keys).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QuadrupedConfig {
    /// The task: `hang`, `drop`, `random`, `trot` (the paper's four) or `stand`.
    #[serde(default = "default_task")]
    pub task: Task,
    /// The robot description (TOML or JSON); a relative path is taken from the workspace root.
    #[serde(default = "default_robot")]
    pub robot: String,
    /// Seed of the random task's targets.
    #[serde(default)]
    pub seed: u64,
    /// Time step (s); the paper's 1 ms.
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Friction coefficient of every contact (the paper gives none).
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Contacts are active when their gap is at most this (m); 0: only touching or
    /// penetrating ones. A positive gap is closed within the step, not crossed (module doc).
    #[serde(default)]
    pub margin: f64,
    /// Height of the base above the ground at release (m) for hang, drop and random.
    #[serde(default = "default_height")]
    pub height: f64,
    /// Forward (world `x`) speed of the base at release in the drop task (m/s).
    #[serde(default = "default_drop_speed")]
    pub drop_speed: f64,
    /// Proportional gain of the joint PD controller (N m/rad).
    #[serde(default = "default_kp")]
    pub kp: f64,
    /// Derivative gain of the joint PD controller (N m s/rad).
    #[serde(default = "default_kd")]
    pub kd: f64,
    /// Joint torques are clipped to `+-torque_limit` (N m).
    #[serde(default = "default_torque_limit")]
    pub torque_limit: f64,
    /// Viscous damping of the passive joints in hang and drop (N m s/rad; 0: the paper's
    /// frictionless joints).
    #[serde(default)]
    pub joint_damping: f64,
    /// Hip flexion of the nominal crouch (rad; fore legs `+`, hind legs `-`).
    #[serde(default = "default_stance_hfe")]
    pub stance_hfe: f64,
    /// Knee flexion of the nominal crouch (rad; fore legs `-`, hind legs `+`).
    #[serde(default = "default_stance_kfe")]
    pub stance_kfe: f64,
    /// Variance of the random task's joint targets about the nominal crouch (rad^2).
    #[serde(default = "default_target_variance")]
    pub target_variance: f64,
    /// The random task draws new targets this often (s).
    #[serde(default = "default_target_period")]
    pub target_period: f64,
    /// The random task resets this often (s); the paper's 5 s.
    #[serde(default = "default_reset_period")]
    pub reset_period: f64,
    /// The drop task counts the robot at rest below this kinetic energy (J).
    #[serde(default = "default_rest_energy")]
    pub rest_energy: f64,
    /// ... held this long (s) after it first touched the ground.
    #[serde(default = "default_rest_duration")]
    pub rest_duration: f64,
    /// The drop task resets after this long (s) even if the robot never comes to rest.
    #[serde(default = "default_drop_timeout")]
    pub drop_timeout: f64,
    /// Period of the trot's gait cycle (s).
    #[serde(default = "default_gait_period")]
    pub gait_period: f64,
    /// Amplitude of the trot's hip flexion swing (rad).
    #[serde(default = "default_hfe_amplitude")]
    pub hfe_amplitude: f64,
    /// Knee flexion that lifts a swinging foot at mid-swing (rad).
    #[serde(default = "default_kfe_amplitude")]
    pub kfe_amplitude: f64,
    /// The trot's controller: `open_loop` (joint PD on a fixed gait) or `raibert` (foot
    /// placement and stance forces at `trot_speed`).
    #[serde(default = "default_trot_controller")]
    pub trot_controller: TrotController,
    /// The `raibert` trot's commanded forward speed once ramped up (m/s; the paper's 1.5).
    #[serde(default = "default_trot_speed")]
    pub trot_speed: f64,
    /// The `raibert` trot's base height (m).
    #[serde(default = "default_trot_height")]
    pub trot_height: f64,
    /// The `raibert` trot's swing foot clearance (m).
    #[serde(default = "default_swing_height")]
    pub swing_height: f64,
    /// The `raibert` trot's foot-placement gain on the speed error (s).
    #[serde(default = "default_raibert_gain")]
    pub raibert_gain: f64,
    /// The `raibert` trot's stance force on the speed error, per unit mass (1/s).
    #[serde(default = "default_speed_gain")]
    pub speed_gain: f64,
    /// The `raibert` trot's stance force on the speed error's integral, per unit mass (1/s^2).
    #[serde(default = "default_speed_integral_gain")]
    pub speed_integral_gain: f64,
    /// Treat the controllers' damping and stiffness implicitly (the step's `A = M + dt D`,
    /// module doc of the scene); `false`: explicit torques (the default at `dt = 1 ms`).
    #[serde(default)]
    pub implicit_gains: bool,
    /// Whether the torso box collides; unset: the task's rule ([`Task::torso_collides`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torso_collides: Option<bool>,
}

impl Default for QuadrupedConfig {
    fn default() -> Self {
        QuadrupedConfig {
            task: default_task(),
            robot: default_robot(),
            seed: 0,
            dt: default_dt(),
            mu: default_mu(),
            margin: 0.0,
            height: default_height(),
            drop_speed: default_drop_speed(),
            kp: default_kp(),
            kd: default_kd(),
            torque_limit: default_torque_limit(),
            joint_damping: 0.0,
            stance_hfe: default_stance_hfe(),
            stance_kfe: default_stance_kfe(),
            target_variance: default_target_variance(),
            target_period: default_target_period(),
            reset_period: default_reset_period(),
            rest_energy: default_rest_energy(),
            rest_duration: default_rest_duration(),
            drop_timeout: default_drop_timeout(),
            gait_period: default_gait_period(),
            hfe_amplitude: default_hfe_amplitude(),
            kfe_amplitude: default_kfe_amplitude(),
            trot_controller: default_trot_controller(),
            trot_speed: default_trot_speed(),
            trot_height: default_trot_height(),
            swing_height: default_swing_height(),
            raibert_gain: default_raibert_gain(),
            speed_gain: default_speed_gain(),
            speed_integral_gain: default_speed_integral_gain(),
            implicit_gains: false,
            torso_collides: None,
        }
    }
}

impl QuadrupedConfig {
    /// A default config for `task`.
    pub fn for_task(task: Task) -> QuadrupedConfig {
        QuadrupedConfig {
            task,
            ..QuadrupedConfig::default()
        }
    }

    /// Parses a `[scene.params]` table (with sweep values applied); unknown keys, unknown task
    /// names and values of the wrong type are errors naming the key.
    pub fn from_table(params: &toml::Table) -> Result<QuadrupedConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// Checks every number's range; the first offender names the error.
    pub fn validate(&self) -> Result<(), SceneError> {
        check_ranges(
            &[
                ("dt", self.dt),
                ("height", self.height),
                ("torque_limit", self.torque_limit),
                ("target_period", self.target_period),
                ("reset_period", self.reset_period),
                ("drop_timeout", self.drop_timeout),
                ("gait_period", self.gait_period),
                ("trot_height", self.trot_height),
            ],
            &[
                ("mu", self.mu),
                ("margin", self.margin),
                ("kp", self.kp),
                ("kd", self.kd),
                ("joint_damping", self.joint_damping),
                ("target_variance", self.target_variance),
                ("rest_energy", self.rest_energy),
                ("rest_duration", self.rest_duration),
                ("trot_speed", self.trot_speed),
                ("swing_height", self.swing_height),
                ("raibert_gain", self.raibert_gain),
                ("speed_gain", self.speed_gain),
                ("speed_integral_gain", self.speed_integral_gain),
            ],
        )?;
        for (key, v) in [
            ("drop_speed", self.drop_speed),
            ("stance_hfe", self.stance_hfe),
            ("stance_kfe", self.stance_kfe),
            ("hfe_amplitude", self.hfe_amplitude),
            ("kfe_amplitude", self.kfe_amplitude),
        ] {
            if !v.is_finite() {
                return Err(SceneError::Param {
                    key,
                    message: format!("must be a finite number, got {v}"),
                });
            }
        }
        Ok(())
    }

    /// Whether the torso box collides: `torso_collides` if set, else the task's rule.
    pub fn torso_collides(&self) -> bool {
        self.torso_collides
            .unwrap_or_else(|| self.task.torso_collides())
    }

    /// The robot file: `robot` itself when absolute, else taken from the workspace root (so
    /// the default works from a fresh clone, whatever the current directory).
    pub fn robot_path(&self) -> PathBuf {
        let p = Path::new(&self.robot);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            workspace_root().join(p)
        }
    }
}

/// The workspace root this crate was built in (`experiments/scenes/../..`), against which a
/// relative robot file resolves.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .to_path_buf()
}
