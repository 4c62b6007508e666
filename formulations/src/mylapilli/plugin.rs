//! Mylapilli and Jain's two formulations as plugins: `--formulation mlcp-fb` (the
//! Fischer-Burmeister MLCP with `n_f` friction directions, turned by [`PyramidTurn`]) and
//! `--formulation mncp` (the implicit MNCP, started like Todorov's residual from the sticking
//! start of section III-F).

use contactlab_core::constraint::EVERY_KIND;
use contactlab_core::plugin::{
    fill_finite, fill_finite_with, Formulation, FormulationPlugin, Model,
};
use contactlab_core::{Constraint, CoreError, LocalProblem, Residual, StepProblem};
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

    /// Every kind: equality rows free (the paper's bilateral rows), limits and frictionless
    /// contacts one complementarity row, friction losses and every contact a polyhedral cone
    /// (see the module doc of [`super`]).
    const KINDS: &'static [&'static str] = EVERY_KIND;

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
        let dirs = Directions::per_contact(self.n_f, self.angles(problem)?).map_err(bad)?;
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
        _default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
    ) -> Result<Vec<f64>, CoreError> {
        let r = fill_finite(warm, vec![0.0; problem.local()?.q.len()]);
        built.unknowns_from_impulse(&r).map_err(bad)
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

    /// The first direction's angle at each contact block. On Coulomb problems min-map's turned
    /// box's rule ([`PyramidTurn::angles`], one rule for both pyramids); with other blocks the
    /// same rule read on each contact's own `(t1, t2)` rows of `q`.
    fn angles(&self, problem: &LocalProblem) -> Result<Vec<f64>, CoreError> {
        if problem.constraints.coulomb_only() {
            let turn = self.turn().angles(problem)?;
            return Ok(turn.unwrap_or_else(|| vec![0.0; problem.num_contacts()]));
        }
        // Each contact's rows are found by its block, so the blocks must be valid first.
        problem.validate()?;
        let theta0 = self.theta0_deg.to_radians();
        Ok(problem
            .constraints
            .iter()
            .filter_map(|(rows, c)| match c {
                Constraint::Contact { .. } if !self.align_with_slip => Some(theta0),
                Constraint::Contact { mu } if mu.is_empty() => Some(0.0),
                Constraint::Contact { .. } => Some(slip_angle(&problem.q[rows])),
                _ => None,
            })
            .collect())
    }
}

/// The angle of `-q_t` in a contact's `(t1, t2)` rows (0 without slip), as
/// [`contactlab_core::frame::slip_angles`] reads a Coulomb contact.
fn slip_angle(q: &[f64]) -> f64 {
    if q[1] == 0.0 && q[2] == 0.0 {
        0.0
    } else {
        (-q[2]).atan2(-q[1])
    }
}

impl FormulationPlugin for MlcpFbFormulation {
    const NAME: &'static str = "mlcp-fb";
    const DESCRIPTION: &'static str = "Mylapilli and Jain: MLCP with n_f friction directions (eq. 22) as Fischer-Burmeister equations (eq. 24)";
}

/// The implicit MNCP formulation and its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MncpFormulation {
    /// Relative cutoff of the pseudoinverse in the sticking start (Todorov section III-F), as
    /// `implicit-ncp`'s `rcond`.
    pub rcond: f64,
}

impl Default for MncpFormulation {
    fn default() -> Self {
        MncpFormulation { rcond: 1e-10 }
    }
}

impl Formulation for MncpFormulation {
    type Built = ImplicitMncp;

    /// Every kind: equality rows the paper's bilateral `p_b`, every other block Todorov's
    /// implicit map of its kind (eq. 26 for the Coulomb contact, his module's extension for
    /// limits, friction losses and elliptic cones; see the module doc of [`super`]).
    const KINDS: &'static [&'static str] = EVERY_KIND;

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

    /// Todorov's sticking start: without bilateral rows the MNCP's unknowns are his `x`
    /// (his own code, on every kind); with them the same start on the whole system
    /// ([`ImplicitMncp::sticking_start`]).
    fn default_start(
        &self,
        built: &ImplicitMncp,
        problem: &StepProblem,
    ) -> Result<Vec<f64>, CoreError> {
        let local = problem.local()?;
        if built.num_bilateral() == 0 {
            Ok(ImplicitNcp::new(local).sticking_start(self.rcond))
        } else {
            Ok(built.sticking_start(self.rcond))
        }
    }

    fn impulses(&self, built: &ImplicitMncp, x: &[f64]) -> Vec<f64> {
        built.impulse(x)
    }

    /// The unknowns themselves, in the problem's row order: `z` on the rows of every
    /// non-equality block (three per Coulomb contact, in the contact's frame) and `p_b` on the
    /// equality rows.
    fn warm_state(&self, built: &ImplicitMncp, x: &[f64]) -> Vec<f64> {
        built.to_row_order(x)
    }

    /// The warm state read back in the MNCP's order (`p_b` first), the default start where it
    /// has none (made only then: like Todorov's, it is a solve of its own).
    fn start_from_warm(
        &self,
        built: &ImplicitMncp,
        _problem: &StepProblem,
        warm: &[f64],
        default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
    ) -> Result<Vec<f64>, CoreError> {
        let in_rows = || Ok(built.to_row_order(&default()?));
        let rows = fill_finite_with(warm, self.num_unknowns(built), &in_rows)?;
        Ok(built.from_row_order(&rows))
    }
}

impl FormulationPlugin for MncpFormulation {
    const NAME: &'static str = "mncp";
    const DESCRIPTION: &'static str =
        "Mylapilli and Jain: implicit MNCP, Todorov's maps with bilateral rows (eqs. 31, 34)";
    // No REFUSES: it takes every kind.
}
