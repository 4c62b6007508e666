//! Mylapilli and Jain's two formulations as plugins: `--formulation mlcp-fb` (the
//! Fischer-Burmeister MLCP with `n_f` friction directions, turned by [`PyramidTurn`]) and
//! `--formulation mncp` (the implicit MNCP, started like Todorov's residual from the sticking
//! start of section III-F).

use contactlab_core::plugin::{fill_finite, Formulation, FormulationPlugin, Model};
use contactlab_core::{CoreError, Residual, StepProblem};
use serde::{Deserialize, Serialize};

use super::directions::Directions;
use super::error::MylapilliError;
use super::mlcp::MlcpFb;
use super::mncp::ImplicitMncp;
use crate::pyramid::PyramidTurn;
use crate::todorov::ImplicitNcp;

fn bad(e: MylapilliError) -> CoreError {
    match e {
        MylapilliError::Problem(p) => CoreError::Problem(p),
        other => CoreError::BadOption(other.to_string()),
    }
}

/// The FB-MLCP formulation and its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MlcpFbFormulation {
    /// Friction directions per contact (the paper: 4).
    pub n_f: usize,
    /// Angle (degrees) of the first direction from `t1` ([`PyramidTurn::theta0_deg`]; 45 with
    /// `n_f = 4` is the paper's Example 2 when the motion is along a frame axis).
    pub theta0_deg: f64,
    /// Put the first direction against each contact's free slip `-q_t`
    /// ([`PyramidTurn::align_with_slip`]; the paper's pendulum).
    pub align_with_slip: bool,
}

impl Default for MlcpFbFormulation {
    fn default() -> Self {
        MlcpFbFormulation {
            n_f: 4,
            theta0_deg: 0.0,
            align_with_slip: false,
        }
    }
}

impl Formulation for MlcpFbFormulation {
    type Built = MlcpFb;

    fn model(&self) -> Model {
        Model::FrictionPyramid
    }

    fn check(&self) -> Result<(), CoreError> {
        if self.n_f < 3 {
            return Err(CoreError::BadOption(format!(
                "mlcp-fb option n_f must be at least 3, got {}",
                self.n_f
            )));
        }
        self.turn().check()
    }

    fn build(&self, problem: &StepProblem) -> Result<MlcpFb, CoreError> {
        let problem = problem.local()?;
        // The same face angles as min-map's turned box: one rule for both pyramids.
        let theta0 = self
            .turn()
            .angles(problem)?
            .unwrap_or_else(|| vec![0.0; problem.num_contacts()]);
        let dirs = Directions::per_contact(self.n_f, theta0).map_err(bad)?;
        MlcpFb::new(problem, dirs).map_err(bad)
    }

    fn num_unknowns(&self, built: &MlcpFb) -> usize {
        built.num_unknowns()
    }

    /// The warm state is the impulses: the MLCP's unknowns follow from them (eq. 19 inverted).
    fn start_from_warm(
        &self,
        built: &MlcpFb,
        problem: &StepProblem,
        warm: &[f64],
        _default: Vec<f64>,
    ) -> Result<Vec<f64>, CoreError> {
        let r = fill_finite(warm, vec![0.0; 3 * problem.num_contacts()]);
        built.unknowns_from_impulse(&[], &r).map_err(bad)
    }

    fn impulses(&self, built: &MlcpFb, x: &[f64]) -> Vec<f64> {
        built.impulse(x)
    }
}

impl MlcpFbFormulation {
    /// The turn of the first direction these options ask for.
    pub fn turn(&self) -> PyramidTurn {
        PyramidTurn {
            theta0_deg: self.theta0_deg,
            align_with_slip: self.align_with_slip,
        }
    }
}

impl FormulationPlugin for MlcpFbFormulation {
    const NAME: &'static str = "mlcp-fb";
    const DESCRIPTION: &'static str = "Mylapilli and Jain: MLCP with n_f friction directions (eq. 22) as Fischer-Burmeister equations (eq. 24)";
    const REFUSES: &'static str =
        "its polyhedral cone (eqs. 14-22) is that of a three-row Coulomb contact";
}

/// The implicit MNCP formulation and its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MncpFormulation {
    /// Relative cutoff of the pseudoinverse in the sticking start (Todorov section III-F).
    pub rcond: f64,
}

impl Default for MncpFormulation {
    fn default() -> Self {
        MncpFormulation { rcond: 1e-10 }
    }
}

impl Formulation for MncpFormulation {
    type Built = ImplicitMncp;

    fn model(&self) -> Model {
        Model::CoulombCone
    }

    fn check(&self) -> Result<(), CoreError> {
        crate::todorov::plugin::check_rcond("mncp", self.rcond)
    }

    fn build(&self, problem: &StepProblem) -> Result<ImplicitMncp, CoreError> {
        let problem = problem.local()?;
        ImplicitMncp::new(problem).map_err(bad)
    }

    fn num_unknowns(&self, built: &ImplicitMncp) -> usize {
        built.num_unknowns()
    }

    /// Todorov's sticking start: without bilateral rows the MNCP's unknowns are his `x`.
    fn default_start(
        &self,
        _built: &ImplicitMncp,
        problem: &StepProblem,
    ) -> Result<Vec<f64>, CoreError> {
        Ok(ImplicitNcp::new(problem.local()?).sticking_start(self.rcond))
    }

    fn impulses(&self, built: &ImplicitMncp, x: &[f64]) -> Vec<f64> {
        built.impulse(x)
    }

    /// The unknowns `z` themselves, three per contact in the contact's frame.
    fn warm_state(&self, _built: &ImplicitMncp, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

impl FormulationPlugin for MncpFormulation {
    const NAME: &'static str = "mncp";
    const DESCRIPTION: &'static str =
        "Mylapilli and Jain: implicit MNCP, Todorov's maps with bilateral rows (eqs. 31, 34)";
    const REFUSES: &'static str =
        "it reuses Todorov's implicit maps, which are those of a three-row Coulomb contact";
}
