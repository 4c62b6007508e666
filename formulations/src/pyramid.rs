//! Turning a friction pyramid's faces: the choice both pyramid formulations share (Erleben and
//! Ortiz's four-sided box, Mylapilli and Jain's `n_f` directions). Mylapilli and Jain (section
//! "Example 2") show that a pyramid whose faces sit at 45 degrees to the motion slides
//! `sqrt 2` too long, and propose aligning one direction against the tangential velocity.

use contactlab_core::frame::slip_angles;
use contactlab_core::{CoreError, LocalProblem};
use serde::{Deserialize, Serialize};

/// How a pyramid's first face (or first friction direction) is turned from `t1`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PyramidTurn {
    /// Angle (degrees) of the first face from `t1`, the same at every contact.
    pub theta0_deg: f64,
    /// Turn each contact's first face against its free tangential velocity `-q_t` instead
    /// (Mylapilli and Jain's remedy; their pendulum).
    pub align_with_slip: bool,
}

impl PyramidTurn {
    /// Checks the angle.
    pub fn check(&self) -> Result<(), CoreError> {
        if !self.theta0_deg.is_finite() {
            return Err(CoreError::BadOption(format!(
                "option theta0_deg must be finite, got {}",
                self.theta0_deg
            )));
        }
        Ok(())
    }

    /// The angles (radians, per contact) of the turn on `problem`; `None` for no turn.
    pub fn angles(&self, problem: &LocalProblem) -> Result<Option<Vec<f64>>, CoreError> {
        if self.align_with_slip {
            Ok(Some(slip_angles(&problem.q)?))
        } else if self.theta0_deg != 0.0 {
            Ok(Some(vec![
                self.theta0_deg.to_radians();
                problem.num_contacts()
            ]))
        } else {
            Ok(None)
        }
    }
}
