//! Joint-space control of the quadruped: the joint layout, the nominal crouch, explicit PD
//! torques, the trot's open-loop diagonal gait and the random task's Gaussian targets.
//!
//! The paper's ANYmal drives its joints with series-elastic actuators behind a PD loop
//! (Hwangbo et al. 2018, sec. V-A; the actuator is not modelled there either). Here each joint
//! is an ideal torque source: `tau = clip(kp (q_target - q) - kd qdot, +-torque_limit)`,
//! evaluated explicitly at the start of the step and added to the free motion `v*`.

use contactlab_multibody::{Joint, Model};
use nalgebra::DVector;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::config::QuadrupedConfig;
use crate::error::SceneError;

/// The four legs' names, in the order of [`JointLayout::legs`].
pub const LEG_NAMES: [&str; 4] = ["LF", "RF", "LH", "RH"];

/// The gait phase offset of each leg (rad), in [`LEG_NAMES`] order: diagonal pairs in phase,
/// the two pairs half a cycle apart (LF with RH, RF with LH).
pub const TROT_PHASE: [f64; 4] = [0.0, std::f64::consts::PI, std::f64::consts::PI, 0.0];

/// One leg: whether it is a fore leg, and its three joints as indices into the actuated joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// Fore (LF, RF) or hind (LH, RH).
    pub fore: bool,
    /// Hip abduction/adduction, hip flexion/extension, knee: indices into the joint vectors.
    pub joints: [usize; 3],
}

/// Where the actuated (revolute) joints sit in `q` and `v`, and which joint is which.
#[derive(Debug, Clone, PartialEq)]
pub struct JointLayout {
    /// Index in `q` of each actuated joint, in body order.
    pub q: Vec<usize>,
    /// Index in `v` of each actuated joint, in body order.
    pub v: Vec<usize>,
    /// The legs, in [`LEG_NAMES`] order.
    pub legs: [Leg; 4],
}

impl JointLayout {
    /// Reads the layout from the model: every revolute joint is actuated, and each leg `X` has
    /// links `X_hip` (HAA), `X_thigh` (HFE) and `X_shank` (KFE), as `quadruped.toml` names them.
    pub fn from_model(model: &Model) -> Result<JointLayout, SceneError> {
        let mut q = Vec::new();
        let mut v = Vec::new();
        let mut names = Vec::new();
        for b in model.bodies() {
            if let Joint::Revolute { .. } = b.joint {
                q.push(b.q_offset);
                v.push(b.v_offset);
                names.push(b.name.as_str());
            }
        }
        let find = |link: String| {
            names
                .iter()
                .position(|n| *n == link)
                .ok_or_else(|| SceneError::Param {
                    key: "robot",
                    message: format!(
                        "the quadruped scene needs a revolute joint on link `{link}` \
                         (legs LF, RF, LH, RH with links X_hip, X_thigh, X_shank)"
                    ),
                })
        };
        let mut legs = [Leg {
            fore: true,
            joints: [0; 3],
        }; 4];
        for (leg, name) in legs.iter_mut().zip(LEG_NAMES) {
            *leg = Leg {
                fore: name.ends_with('F'),
                joints: [
                    find(format!("{name}_hip"))?,
                    find(format!("{name}_thigh"))?,
                    find(format!("{name}_shank"))?,
                ],
            };
        }
        Ok(JointLayout { q, v, legs })
    }

    /// Number of actuated joints.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether there are no actuated joints.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The nominal crouch (ANYmal's usual "X" stance: fore knees point back, hind knees
    /// forward): HAA 0, HFE `+-stance_hfe`, KFE `-+stance_kfe` (fore, hind). Joints not in a
    /// leg stay at 0.
    pub fn nominal(&self, cfg: &QuadrupedConfig) -> DVector<f64> {
        let mut out = DVector::zeros(self.len());
        for leg in &self.legs {
            let s = if leg.fore { 1.0 } else { -1.0 };
            out[leg.joints[1]] = s * cfg.stance_hfe;
            out[leg.joints[2]] = -s * cfg.stance_kfe;
        }
        out
    }

    /// The actuated joints' angles in `q`.
    pub fn angles(&self, q: &DVector<f64>) -> DVector<f64> {
        DVector::from_iterator(self.len(), self.q.iter().map(|&i| q[i]))
    }

    /// The actuated joints' rates in `v`.
    pub fn rates(&self, v: &DVector<f64>) -> DVector<f64> {
        DVector::from_iterator(self.len(), self.v.iter().map(|&i| v[i]))
    }

    /// Writes joint angles into `q`.
    pub fn set_angles(&self, q: &mut DVector<f64>, angles: &DVector<f64>) {
        for (k, &i) in self.q.iter().enumerate() {
            q[i] = angles[k];
        }
    }

    /// Generalized forces (`nv` entries) with `tau` on the actuated joints, zero on the base.
    pub fn generalized(&self, nv: usize, tau: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(nv);
        for (k, &i) in self.v.iter().enumerate() {
            out[i] = tau[k];
        }
        out
    }
}

/// Explicit joint PD torques, `clip(kp (target - q) - kd qdot, +-limit)`.
pub fn pd_torques(
    kp: f64,
    kd: f64,
    limit: f64,
    angles: &DVector<f64>,
    rates: &DVector<f64>,
    target: &DVector<f64>,
) -> DVector<f64> {
    DVector::from_iterator(
        angles.len(),
        (0..angles.len())
            .map(|k| (kp * (target[k] - angles[k]) - kd * rates[k]).clamp(-limit, limit)),
    )
}

/// The trot's joint targets at time `t` since the gait started (module doc of the scene):
/// each leg's phase `s = 2 pi t / gait_period + TROT_PHASE`; the hip flexes by
/// `hfe_amplitude cos s` about the crouch (a positive HFE swings the foot backwards, so the
/// foot moves forward while `sin s > 0` and pushes backwards on the ground otherwise), and the
/// knee bends further by `kfe_amplitude sin s` while `sin s > 0`, lifting the swinging foot.
/// The amplitudes ramp up linearly over the first cycle so the robot does not start with a jolt.
pub fn trot_targets(
    layout: &JointLayout,
    nominal: &DVector<f64>,
    cfg: &QuadrupedConfig,
    t: f64,
) -> DVector<f64> {
    let mut out = nominal.clone();
    let ramp = (t / cfg.gait_period).clamp(0.0, 1.0);
    let w = 2.0 * std::f64::consts::PI / cfg.gait_period;
    for (leg, phase) in layout.legs.iter().zip(TROT_PHASE) {
        let s = w * t + phase;
        let bend = if leg.fore { -1.0 } else { 1.0 };
        out[leg.joints[1]] += ramp * cfg.hfe_amplitude * s.cos();
        out[leg.joints[2]] += ramp * bend * cfg.kfe_amplitude * s.sin().max(0.0);
    }
    out
}

/// Random targets: the nominal crouch plus independent Gaussian offsets of variance
/// `variance` on every joint.
pub fn random_targets(nominal: &DVector<f64>, variance: f64, rng: &mut ChaCha8Rng) -> DVector<f64> {
    let sd = variance.sqrt();
    nominal.map(|x| x + sd * standard_normal(rng))
}

/// One standard normal sample by the Box-Muller transform (ChaCha8, the project's generator,
/// so runs repeat exactly from their seed).
pub fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    // 1 - u lies in (0, 1]: its logarithm is finite.
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}
