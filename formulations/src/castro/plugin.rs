//! SAP as a plugin (`--formulation sap`): built from a step problem's generalized form, on
//! Coulomb contacts by [`SapCost`] (sparse, by islands), on every other kind by
//! [`SapBlockCost`] (the constraint-agnostic cost).

use std::ops::Range;

use contactlab_core::constraint::EVERY_KIND;
use contactlab_core::plugin::{Formulation, FormulationPlugin, Model};
use contactlab_core::{
    ConicData, ConicProgram, CoreError, GeneralizedProblem, LinePoint, Merit, MeritEval,
    Optimality, OwnNewton, StepProblem,
};
use faer::MatMut;
use serde::{Deserialize, Serialize};

use super::blocks::SapBlockCost;
use super::cost::{turned_around, HessianFactorization, SapCost};
use super::params::{regularization_of, RegularizationParams};

/// SAP's formulation and its options (eqs. 29-30).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SapFormulation {
    /// Near-rigid period as a multiple of `dt` (paper: 1).
    pub beta: f64,
    /// Dimensionless friction regularisation: slip at stiction about `mu sigma g dt` (paper:
    /// 1e-3).
    pub sigma: f64,
    /// Also report the Hessian's condition numbers at each solution (`hessian_condition`,
    /// `hessian_condition_scaled`; Fig. 15). Off by default: it forms the Hessian densely.
    pub condition_number: bool,
    /// How the Newton system is factored: `auto` (tree blocks for small trees), `tree_blocks`
    /// or `sparse`. The same Newton steps either way, to round-off.
    pub hessian: HessianFactorization,
}

impl Default for SapFormulation {
    fn default() -> Self {
        SapFormulation {
            beta: 1.0,
            sigma: 1e-3,
            condition_number: false,
            hessian: HessianFactorization::Auto,
        }
    }
}

/// What SAP builds: the contact cost of eq. 24 for Coulomb contacts, or the
/// constraint-agnostic cost for problems with other blocks.
#[derive(Debug, Clone)]
pub enum SapBuilt {
    /// Coulomb contacts only: [`SapCost`].
    Contacts(Box<SapCost>),
    /// Any blocks: [`SapBlockCost`].
    Blocks(Box<SapBlockCost>),
}

/// `$body` with `$c` bound to the built cost, whichever it is: static dispatch, so the driver's
/// loops over eq. 24's cost inline as they did before the block cost existed.
macro_rules! on_cost {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            SapBuilt::Contacts($c) => $body,
            SapBuilt::Blocks($c) => $body,
        }
    };
}

impl Merit for SapBuilt {
    fn dim(&self) -> usize {
        on_cost!(self, c => c.dim())
    }
    fn value(&self, x: &[f64]) -> f64 {
        on_cost!(self, c => c.value(x))
    }
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        on_cost!(self, c => c.gradient(x, g))
    }
    fn hessian(&self, x: &[f64], h: MatMut<'_, f64>) {
        on_cost!(self, c => c.hessian(x, h))
    }
    fn evaluate(&self, x: &[f64], hessian: bool) -> MeritEval {
        on_cost!(self, c => c.evaluate(x, hessian))
    }
    fn optimality(&self, x: &[f64], g: &[f64]) -> Optimality {
        on_cost!(self, c => c.optimality(x, g))
    }
    fn newton_direction(&self, x: &[f64], g: &[f64], d: &mut [f64]) -> OwnNewton {
        on_cost!(self, c => c.newton_direction(x, g, d))
    }
    fn groups(&self) -> &[Range<usize>] {
        on_cost!(self, c => c.groups())
    }
    fn along_group(&self, k: usize, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        on_cost!(self, c => c.along_group(k, x, dx, alpha))
    }
    fn group_value(&self, k: usize, x: &[f64], dx: &[f64]) -> f64 {
        on_cost!(self, c => c.group_value(k, x, dx))
    }
    fn group_residuals(&self, x: &[f64], g: &[f64], residuals: &mut [f64]) {
        on_cost!(self, c => c.group_residuals(x, g, residuals))
    }
    fn group_newton_direction(
        &self,
        x: &[f64],
        g: &[f64],
        active: &[bool],
        d: &mut [f64],
    ) -> OwnNewton {
        on_cost!(self, c => c.group_newton_direction(x, g, active, d))
    }
    fn along_line(&self, x: &[f64], dx: &[f64], alpha: f64) -> LinePoint {
        on_cost!(self, c => c.along_line(x, dx, alpha))
    }
}

/// The conic statement (eq. 19) is of Coulomb contacts; a problem with other blocks is refused.
impl ConicProgram for SapBuilt {
    fn conic_program(&self) -> Result<ConicData, CoreError> {
        match self {
            SapBuilt::Contacts(c) => c.conic_program(),
            SapBuilt::Blocks(_) => Err(CoreError::Unsupported(
                "SAP's conic statement (eq. 19) is written for Coulomb contacts; this problem \
                 has other constraint blocks (solve it with newton-merit)"
                    .into(),
            )),
        }
    }
    fn unknowns_from_conic(&self, x: &[f64]) -> Vec<f64> {
        match self {
            SapBuilt::Contacts(c) => c.unknowns_from_conic(x),
            SapBuilt::Blocks(_) => x.to_vec(),
        }
    }
}

impl Formulation for SapFormulation {
    type Built = SapBuilt;

    /// Every kind: Coulomb contacts by eq. 24's cost, the others by the constraint-agnostic
    /// one ([`SapBlockCost`]).
    const KINDS: &'static [&'static str] = EVERY_KIND;

    fn model(&self) -> Model {
        Model::Regularized
    }

    fn check(&self) -> Result<(), CoreError> {
        for (name, v) in [("beta", self.beta), ("sigma", self.sigma)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(CoreError::BadOption(format!(
                    "sap option {name} must be a positive number, got {v}"
                )));
            }
        }
        Ok(())
    }

    /// From the generalized form; a contact-space problem is taken as one with `A = W^-1`,
    /// `J = I` ([`GeneralizedProblem::from_local`]), which needs `W` positive definite.
    fn build(&self, problem: &StepProblem) -> Result<SapBuilt, CoreError> {
        let owned;
        let g = match problem.generalized() {
            Some(g) => g,
            None => {
                owned = GeneralizedProblem::from_local(problem.local()?).map_err(|e| {
                    CoreError::Unsupported(format!(
                        "SAP works in generalized velocities; this problem has only its \
                         contact-space form, and taking A = W^-1 failed: {e}"
                    ))
                })?;
                &owned
            }
        };
        let params = RegularizationParams {
            beta: self.beta,
            sigma: self.sigma,
        };
        if !g.coulomb_only() {
            return Ok(SapBuilt::Blocks(Box::new(SapBlockCost::new(g, &params)?)));
        }
        // J turned around once, for the regularisation and the cost (in one pass where a
        // stepping caller's memo keeps the last step's patterns).
        let (rows, pattern) = turned_around(g, self.hessian);
        let r = regularization_of(g, &rows, &params).map_err(|e| match problem.generalized() {
            Some(_) => e,
            // W passed its Cholesky test but is so close to singular that W^-1 fails its own.
            None => CoreError::Unsupported(format!(
                "SAP works in generalized velocities; this problem has only its contact-space \
                 form, and A = W^-1 is not usable (W is numerically singular): {e}"
            )),
        })?;
        let v_hat: Vec<f64> = r.v_hat.iter().flat_map(|&vn| [vn, 0.0, 0.0]).collect();
        Ok(SapBuilt::Contacts(Box::new(SapCost::from_rows(
            g,
            (rows, pattern),
            r.contacts,
            &v_hat,
            self.hessian,
        ))))
    }

    fn num_unknowns(&self, built: &SapBuilt) -> usize {
        built.dim()
    }

    /// The previous step's velocities (section IV: SAP warm-starts from them), else `v*`.
    fn default_start(
        &self,
        built: &SapBuilt,
        problem: &StepProblem,
    ) -> Result<Vec<f64>, CoreError> {
        let v0 = problem.generalized().and_then(|g| g.v0.as_ref());
        Ok(match (built, v0) {
            (SapBuilt::Contacts(c), Some(v0)) => c.restrict(v0),
            (SapBuilt::Contacts(c), None) => c.v_star().to_vec(),
            (SapBuilt::Blocks(_), Some(v0)) => v0.clone(),
            (SapBuilt::Blocks(b), None) => b.v_star().to_vec(),
        })
    }

    /// SAP's warm start is the previous velocities, which the problem carries: a per-contact
    /// warm state does not apply.
    fn start_from_warm(
        &self,
        _built: &SapBuilt,
        _problem: &StepProblem,
        _warm: &[f64],
        default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
    ) -> Result<Vec<f64>, CoreError> {
        default()
    }

    fn impulses(&self, built: &SapBuilt, x: &[f64]) -> Vec<f64> {
        match built {
            SapBuilt::Contacts(c) => c.impulses(x),
            SapBuilt::Blocks(b) => b.impulses(x),
        }
    }

    fn velocities(&self, built: &SapBuilt, x: &[f64]) -> Option<Vec<f64>> {
        Some(match built {
            SapBuilt::Contacts(c) => c.contact_velocities(x),
            SapBuilt::Blocks(b) => b.contact_velocities(x),
        })
    }

    /// Eqs. 32-33's errors and, when asked, the Hessian's condition numbers (Coulomb contacts).
    fn diagnostics(&self, built: &SapBuilt, x: &[f64]) -> Vec<(&'static str, f64)> {
        let SapBuilt::Contacts(built) = built else {
            return Vec::new();
        };
        let (e_m, e_mu) = built.accuracy(x);
        let mut out = vec![("e_m", e_m), ("e_mu", e_mu)];
        if self.condition_number {
            // A failed eigen-decomposition is reported as NaN, not as a failed solve.
            let (plain, scaled) = built.hessian_condition(x).unwrap_or((f64::NAN, f64::NAN));
            out.push(("hessian_condition", plain));
            out.push(("hessian_condition_scaled", scaled));
        }
        out
    }
}

impl FormulationPlugin for SapFormulation {
    const NAME: &'static str = "sap";
    const DESCRIPTION: &'static str = "Castro et al. SAP: unconstrained convex primal cost in generalized velocities (eq. 24), compliant contact, regularized friction";
    /// Never split: SAP's cost separates over its islands inside one build (`cost.rs`: one
    /// factor of per-body blocks, the islands' lines and residuals apart), and the Newton
    /// driver steps each island on its own (`NewtonMerit::by_island`), so splitting adds only a
    /// build per island. Measured on MuJoCo's exported steps (`reports/peers/`, islands against
    /// the whole problem per problem, before the driver stepped islands): islands at 0.18x to
    /// 0.78x the whole problem's speed from 4 to 48 contacts, 0.74x to 1.10x from 83 to 206.
    const WHOLE_BELOW: usize = usize::MAX;
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::plugin::Formulation;

    /// Siconos' NESpheres_30_1: its `W` passes a Cholesky test but is so close to singular that
    /// `A = W^-1` fails its own. The refusal says so instead of naming an inner field `A` and
    /// a debug-printed pivot error (found by `experiments/tests/end_to_end/every_file.rs`).
    #[test]
    fn a_numerically_singular_w_is_refused_in_words() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/problems/NESpheres_30_1.hdf5");
        let local = contactlab_core::io::read_local(&path).unwrap();
        let e = SapFormulation::default()
            .build(&StepProblem::from(local))
            .map(|_| ())
            .expect_err("W^-1 is not positive definite")
            .to_string();
        assert!(
            e.contains("SAP works in generalized velocities")
                && e.contains("A = W^-1")
                && e.contains("numerically singular")
                && e.contains("nonpositive pivot at index"),
            "{e}"
        );
        assert!(!e.contains("NonPositivePivot"), "{e}");
    }
}
