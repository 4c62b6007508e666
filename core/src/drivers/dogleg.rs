//! Powell's dogleg trust region on the Gauss-Newton model `m(p) = |F + J p|^2 / 2`.
//!
//! Method: Nocedal and Wright, *Numerical Optimization*, 2nd ed., sec. 4.1 (the dogleg path,
//! eqs. 4.15-4.16, and the Cauchy point, eq. 4.12) with the radius update of Alg. 4.1; for
//! least squares, sec. 10.3 (the model Hessian is `B = J'J`).

use argmin::core::{Error, Problem, Solver, TerminationStatus, KV};

use super::kit::{self, finish, trust_region_trial, LsPoint, RadiusRule, TrustRegionDriver};
use super::least_squares::{LeastSquares, LsState};
use super::tolerances::Tolerances;
use crate::residual::Residual;
use crate::result::Status;

/// Dogleg trust region: the Gauss-Newton point (LLT, QR fallback) when it fits in the radius,
/// else the Cauchy point or the dogleg path's crossing of the boundary.
///
/// `step_kind` is `"gauss_newton"`, `"cauchy"`, `"dogleg"` or `"rejected"`; `step_length` is the
/// trust radius the step was computed in.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dogleg {
    /// Initial radius; `None` uses `|x0|_2`, or 1 at the origin.
    pub initial_radius: Option<f64>,
    /// Acceptance and radius update.
    pub rule: RadiusRule,
    #[serde(skip)]
    radius: f64,
    #[serde(skip)]
    tol: Tolerances,
    #[serde(skip)]
    point: Option<LsPoint>,
    #[serde(skip)]
    stop: Option<Status>,
}

impl Default for Dogleg {
    /// Radius from `|x0|`, [`RadiusRule::default`] (Nocedal and Wright, Alg. 4.1).
    fn default() -> Self {
        Dogleg {
            initial_radius: None,
            rule: RadiusRule::default(),
            radius: 1.0,
            tol: Tolerances::default(),
            point: None,
            stop: None,
        }
    }
}

/// The dogleg step inside `radius` and its kind (Nocedal and Wright, sec. 4.1).
fn dogleg_step(p: &LsPoint, radius: f64) -> (Vec<f64>, &'static str) {
    let gn = kit::gauss_newton_direction(p).filter(|d| kit::dot(&p.grad, d) < 0.0);
    if let Some(b) = &gn {
        if kit::norm2(b) <= radius {
            return (b.clone(), "gauss_newton");
        }
    }
    let g = &p.grad;
    let gg = kit::dot(g, g);
    let jg = kit::mat_vec(p.jac.as_ref(), g);
    let gbg = kit::dot(&jg, &jg);
    let gnorm = gg.sqrt();
    // Minimizer of the model along -g (eq. 4.12 without the radius), unbounded if gBg = 0.
    let cauchy_len = if gbg > 0.0 {
        gg / gbg * gnorm
    } else {
        f64::INFINITY
    };
    if cauchy_len >= radius || gn.is_none() {
        let s = radius.min(cauchy_len) / gnorm;
        return (g.iter().map(|gi| -s * gi).collect(), "cauchy");
    }
    let pu: Vec<f64> = g.iter().map(|gi| -(gg / gbg) * gi).collect();
    let b = gn.unwrap_or_default();
    let diff: Vec<f64> = b.iter().zip(&pu).map(|(bi, ui)| bi - ui).collect();
    let tau = kit::to_boundary(&pu, &diff, radius).clamp(0.0, 1.0);
    (kit::axpy(&pu, tau, &diff), "dogleg")
}

impl<R: Residual> Solver<LeastSquares<R>, LsState> for Dogleg {
    fn name(&self) -> &str {
        "dogleg"
    }

    fn init(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        let (state, start, mut kv) = kit::init(problem, state, |_, _| {})?;
        (self.point, self.tol, self.stop) = (start.point, start.tol, start.stop);
        let x0 = state.param.as_deref().unwrap_or_default();
        self.radius = self
            .initial_radius
            .unwrap_or_else(|| kit::initial_radius(x0));
        kv.insert("step_length", self.radius.into());
        Ok((state, Some(kv)))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<LeastSquares<R>>,
        state: LsState,
    ) -> Result<(LsState, Option<KV>), Error> {
        let Some(p) = self.point.take() else {
            self.stop = Some(Status::NotFinite);
            return Ok((state, None));
        };
        let (s, kind) = dogleg_step(&p, self.radius);
        let (accepted, state, kv) =
            trust_region_trial(problem, state, &p, &s, kind, &self.rule, &mut self.radius)?;
        finish(self, p, accepted, &s, state, kv)
    }

    fn terminate(&mut self, _state: &LsState) -> TerminationStatus {
        kit::termination(&self.stop)
    }
}

impl TrustRegionDriver for Dogleg {
    fn set(&mut self, point: Option<LsPoint>, stop: Option<Status>) {
        (self.point, self.stop) = (point, stop);
    }
    fn tolerances(&self) -> Tolerances {
        self.tol
    }
    fn radius(&self) -> f64 {
        self.radius
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drivers::kit::tests::point;

    #[test]
    fn dogleg_picks_gauss_newton_cauchy_or_the_path() {
        let p = point(&[&[2.0, 1.0], &[0.0, 3.0], &[1.0, 1.0]], &[1.0, -2.0, 0.5]);
        let gn = kit::gauss_newton_direction(&p).unwrap();
        let gn_norm = kit::norm2(&gn);
        let (s, kind) = dogleg_step(&p, 2.0 * gn_norm);
        assert_eq!(kind, "gauss_newton");
        assert_eq!(s, gn);
        let (s, kind) = dogleg_step(&p, 1e-6);
        assert_eq!(kind, "cauchy");
        assert!((kit::norm2(&s) - 1e-6).abs() < 1e-18);
        let g = &p.grad;
        let jg = kit::mat_vec(p.jac.as_ref(), g);
        let cauchy = kit::dot(g, g) / kit::dot(&jg, &jg) * kit::norm2(g);
        let mid = 0.5 * (cauchy + gn_norm);
        let (s, kind) = dogleg_step(&p, mid);
        assert_eq!(kind, "dogleg");
        assert!((kit::norm2(&s) - mid).abs() < 1e-14);
        // The dogleg path decreases the model monotonically (Nocedal and Wright, Lemma 4.2).
        assert!(
            kit::predicted_decrease(&p, &s)
                > kit::predicted_decrease(&p, &dogleg_step(&p, cauchy).0)
        );
    }
}
