//! Todorov's implicit NCP as a plugin (`--formulation implicit-ncp`), with the paper logic
//! around the residual: the sticking start of section III-F and the recoveries of section V-A
//! (the row-sum rescaling `D r(x) = 0` and perturbed restarts after a local minimum).

use contactlab_core::constraint::EVERY_KIND;
use contactlab_core::plugin::{Formulation, FormulationPlugin, Model};
use contactlab_core::{CoreError, Residual, Status, StepProblem};
use serde::{Deserialize, Serialize};

use super::ncp::ImplicitNcp;

/// The implicit-NCP formulation and its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImplicitNcpFormulation {
    /// Solve the rescaled `D r(x) = 0`, `D` from the row sums of `A` (section V-A).
    pub row_sum_scaling: bool,
    /// Restarts from a perturbed point after a local minimum (section V-A), at most this many.
    pub restarts: u32,
    /// Relative cutoff of the pseudoinverse in the sticking start (section III-F): pivots of
    /// `A`'s pivoted Cholesky at most `rcond` times its largest diagonal are dropped.
    pub rcond: f64,
}

impl Default for ImplicitNcpFormulation {
    fn default() -> Self {
        ImplicitNcpFormulation {
            row_sum_scaling: false,
            restarts: 0,
            rcond: 1e-10,
        }
    }
}

/// Checks a pseudoinverse cutoff option of formulation `owner`.
pub(crate) fn check_rcond(owner: &str, rcond: f64) -> Result<(), CoreError> {
    if !(0.0..1.0).contains(&rcond) {
        return Err(CoreError::BadOption(format!(
            "{owner} option rcond must be in [0, 1), got {rcond}"
        )));
    }
    Ok(())
}

impl Formulation for ImplicitNcpFormulation {
    type Built = ImplicitNcp;

    /// Every kind: each block's implicit map ([`super::BlockMap`]; the paper's contact, our
    /// extension to the other kinds in the same form, `v = f + x`).
    const KINDS: &'static [&'static str] = EVERY_KIND;

    fn model(&self) -> Model {
        Model::CoulombCone
    }

    fn check(&self) -> Result<(), CoreError> {
        check_rcond("implicit-ncp", self.rcond)
    }

    fn build(&self, problem: &StepProblem) -> Result<ImplicitNcp, CoreError> {
        let problem = problem.local()?;
        problem.validate()?;
        let f = ImplicitNcp::new(problem);
        Ok(if self.row_sum_scaling {
            f.with_row_sum_scaling()
        } else {
            f
        })
    }

    fn num_unknowns(&self, built: &ImplicitNcp) -> usize {
        built.num_unknowns()
    }

    /// Section III-F: every contact sticking, `f = A^+ (v - v0)`.
    fn default_start(&self, built: &ImplicitNcp, _p: &StepProblem) -> Result<Vec<f64>, CoreError> {
        Ok(built.sticking_start(self.rcond))
    }

    fn impulses(&self, built: &ImplicitNcp, x: &[f64]) -> Vec<f64> {
        built.impulses(x)
    }

    /// Todorov's `x` itself, one per row (three per Coulomb contact, in the contact's frame).
    fn warm_state(&self, _built: &ImplicitNcp, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }

    /// Section V-A: "restart from a perturbed point" when the driver is stuck.
    fn restart(
        &self,
        _built: &ImplicitNcp,
        x: &[f64],
        status: &Status,
        attempt: u32,
    ) -> Option<Vec<f64>> {
        let stuck = matches!(
            status,
            Status::LocalMinimum | Status::Stagnated | Status::LineSearchFailed
        );
        (stuck && attempt < self.restarts).then(|| perturbed(x, attempt + 1))
    }
}

impl FormulationPlugin for ImplicitNcpFormulation {
    const NAME: &'static str = "implicit-ncp";
    const DESCRIPTION: &'static str =
        "Todorov 2010 implicit NCP: r(x) = (A - I) f(x) - x + v0 over unconstrained x";
}

/// A deterministic perturbation of `x` for the `k`-th restart: each entry moves by up to 10%
/// of `max(|x|_inf, 1e-3)`, with signs and sizes from a fixed hash of `(k, i)`. The paper does
/// not say how to perturb; a relative, seeded one keeps runs reproducible.
pub fn perturbed(x: &[f64], k: u32) -> Vec<f64> {
    let scale = 0.1 * x.iter().fold(1e-3f64, |m, v| m.max(v.abs()));
    x.iter()
        .enumerate()
        .map(|(i, v)| {
            // SplitMix64 of (k, i): reproducible without threading an RNG through.
            let mut z = (u64::from(k) << 32 ^ i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            v + scale * u
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::LocalProblem;

    #[test]
    fn perturbations_are_small_seeded_and_differ_between_restarts() {
        let x = vec![1.0, -2.0, 0.5, 0.0];
        let (a, b) = (perturbed(&x, 1), perturbed(&x, 2));
        assert_eq!(a, perturbed(&x, 1));
        assert_ne!(a, b);
        assert!(a.iter().zip(&x).all(|(p, v)| (p - v).abs() <= 0.2 + 1e-15));
    }

    #[test]
    fn restarts_only_when_stuck_and_within_the_budget() {
        let f = ImplicitNcpFormulation {
            restarts: 2,
            ..Default::default()
        };
        let p = LocalProblem::coulomb(
            contactlab_core::Matrix::from_row_major(
                "W",
                3,
                3,
                &[1., 0., 0., 0., 1., 0., 0., 0., 1.],
            )
            .unwrap(),
            vec![-1.0, 0.0, 0.0],
            &[0.5],
        );
        let b = f.build(&p.into()).unwrap();
        let x = [0.1, 0.2, 0.3];
        assert!(f.restart(&b, &x, &Status::LocalMinimum, 0).is_some());
        assert!(f.restart(&b, &x, &Status::LocalMinimum, 2).is_none());
        assert!(f.restart(&b, &x, &Status::MaxIterations, 0).is_none());
        assert!(f.check().is_ok());
        assert!(ImplicitNcpFormulation {
            rcond: 1.5,
            ..Default::default()
        }
        .check()
        .is_err());
    }
}
