//! The min-map as a plugin (`--formulation min-map`): Erleben and Ortiz's boxed LCP with a
//! four-sided friction pyramid, whose faces may be turned ([`PyramidTurn`]), on every
//! constraint kind (its rows' bounds in [`super`]).

use contactlab_core::constraint::EVERY_KIND;
use contactlab_core::plugin::{Formulation, FormulationPlugin, Model};
use contactlab_core::{CoreError, StepProblem};
use serde::{Deserialize, Serialize};

use super::minmap::MinMap;
use crate::pyramid::PyramidTurn;

/// The min-map formulation and its options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MinMapFormulation {
    /// Angle (degrees) of the pyramid's first face from `t1` ([`PyramidTurn::theta0_deg`]).
    pub theta0_deg: f64,
    /// Turn each contact's faces against its free slip ([`PyramidTurn::align_with_slip`]).
    pub align_with_slip: bool,
}

impl MinMapFormulation {
    /// The turn of the pyramid's faces these options ask for.
    pub fn turn(&self) -> PyramidTurn {
        PyramidTurn {
            theta0_deg: self.theta0_deg,
            align_with_slip: self.align_with_slip,
        }
    }
}

impl Formulation for MinMapFormulation {
    type Built = MinMap;

    /// Every kind is a boxed-LCP row: an equality free, a limit and a frictionless contact
    /// `x >= 0`, a friction loss a constant box, a contact's frictional rows its pyramid.
    const KINDS: &'static [&'static str] = EVERY_KIND;

    fn model(&self) -> Model {
        Model::FrictionPyramid
    }

    fn check(&self) -> Result<(), CoreError> {
        self.turn().check()
    }

    fn build(&self, problem: &StepProblem) -> Result<MinMap, CoreError> {
        let problem = problem.local()?;
        if !problem.constraints.coulomb_only() {
            // Validated first, so that a bad block is named as such and not as a turn's error.
            problem.validate()?;
            return match super::turn::pairs_for(problem, &self.turn())? {
                Some((rows, angles)) => MinMap::turned_pairs(problem, rows, angles),
                None => MinMap::new(problem),
            };
        }
        match self.turn().angles(problem)? {
            Some(a) => MinMap::turned(problem, a),
            None => MinMap::new(problem),
        }
    }

    fn num_unknowns(&self, built: &MinMap) -> usize {
        built.dim()
    }

    /// The warm state is the impulses in the problem's frames: map them into the pyramid's.
    fn start_from_warm(
        &self,
        built: &MinMap,
        _problem: &StepProblem,
        warm: &[f64],
        default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
    ) -> Result<Vec<f64>, CoreError> {
        let r = contactlab_core::plugin::fill_finite(warm, built.impulses(&default()?));
        Ok(built.unknowns(&r))
    }

    fn impulses(&self, built: &MinMap, x: &[f64]) -> Vec<f64> {
        built.impulses(x)
    }
}

impl FormulationPlugin for MinMapFormulation {
    const NAME: &'static str = "min-map";
    const DESCRIPTION: &'static str =
        "Erleben and Ortiz: min-map H(x) of the boxed LCP with a 4-sided friction pyramid (eq. 5), row by row on every kind";
    // No REFUSES: it takes every kind.
}
