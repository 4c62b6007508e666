//! Hwangbo, Lee and Hutter 2018, sec. IV: the projected Gauss-Seidel baseline, per contact.
//!
//! Eq. 17 updates the normal impulse, then the tangential one, each by a projected step on
//! the contact's velocity: `lambda_n <- max(0, lambda_n - r_n v_n)`, then `lambda_t <-
//! P_disc(lambda_t - r_t v_t)`, the Euclidean projection onto the friction disc of radius
//! `mu lambda_n` of the new normal impulse. The steps are eq. 18's, `r_n = alpha / W_nn` and
//! `r_t = alpha / max(W_t1t1, W_t2t2)` (`alpha = 0.6` in sec. V-C). `v_t` is recomputed after
//! the normal update (Gauss-Seidel over the components, as the paper's "iteration over each
//! force component"). The relaxation is inside the steps, so the sweep runs it with `alpha`
//! 1; no Baumgarte term (the paper's Signorini condition is on velocities).

use contactlab_core::drivers::sweep::{ContactMode, ContactSolver, LocalError, LocalSolution};
use nalgebra::{Matrix3, Vector2, Vector3};

/// One contact's update of eqs. 17-18.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgsStep {
    /// Eq. 18's `alpha`.
    pub alpha: f64,
}

impl ContactSolver for PgsStep {
    /// `(r_n, r_t)` of eq. 18 (0 where the block's diagonal is not positive: that impulse
    /// component does not move its own velocity, so no step can help it).
    type Prepared = (f64, f64);

    fn prepare(&self, w: &Matrix3<f64>, _mu: f64) -> (f64, f64) {
        let step = |d: f64| if d > 0.0 { self.alpha / d } else { 0.0 };
        (step(w[(0, 0)]), step(w[(1, 1)].max(w[(2, 2)])))
    }

    fn solve(
        &self,
        &(r_n, r_t): &(f64, f64),
        w: &Matrix3<f64>,
        c: &Vector3<f64>,
        mu: f64,
        r_prev: &Vector3<f64>,
    ) -> Result<LocalSolution, LocalError> {
        let v_n = c[0] + w.row(0).dot(&r_prev.transpose());
        let lambda_n = (r_prev[0] - r_n * v_n).max(0.0);
        let lambda = Vector3::new(lambda_n, r_prev[1], r_prev[2]);
        let v = c + w * lambda;
        let t = Vector2::new(lambda[1] - r_t * v[1], lambda[2] - r_t * v[2]);
        let radius = mu * lambda_n;
        let norm = t.norm();
        let t = if norm > radius {
            t * (radius / norm)
        } else {
            t
        };
        let r = Vector3::new(lambda_n, t[0], t[1]);
        if !r.iter().all(|x| x.is_finite()) {
            return Err(LocalError::NotFinite("PGS impulse"));
        }
        Ok(LocalSolution {
            r,
            mode: ContactMode::of(mu, &r),
            steps: 1,
        })
    }
}
