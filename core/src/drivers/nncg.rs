//! The nonsmooth nonlinear conjugate gradient (NNCG) of Silcowitz, Niebe and Erleben ("A
//! nonsmooth nonlinear conjugate gradient method for interactive contact force problems", The
//! Visual Computer 26, 2010, Alg. 1), on top of any projected Gauss-Seidel sweep.
//!
//! The sweep is read as a gradient step of an unknown merit `f`: `x_k+1 = PGS(x_k)`,
//! `grad f_k+1 = -(x_k+1 - x_k)`. Successive steps are combined Fletcher-Reeves style,
//! `beta_k+1 = |grad f_k+1|^2 / |grad f_k|^2`, `x_k+1 <- x_k+1 + beta_k+1 p_k`,
//! `p_k+1 = beta_k+1 p_k - grad f_k+1`, and restarted (`p_k+1 = -grad f_k+1`) when
//! `beta_k+1 > 1`, where the steps grow. On a linear problem it acts as a conjugate gradient
//! preconditioned by the sweep; the combination vanishes with the step, so its fixed points are
//! the sweep's. Like PGS on Coulomb friction, it has no convergence proof; the solver's stopping
//! rule stays the ruler's.
//!
//! Used by [`super::sweep`] (contacts) and [`super::block_pgs`] (every constraint kind) when
//! PGS's option `nncg` is set.

/// NNCG's memory between sweeps (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Conjugate {
    /// The impulses before the sweep.
    before: Vec<f64>,
    /// The conjugate direction `p_k` (empty until the first sweep).
    p: Vec<f64>,
    /// `|grad f_k|^2` of the last sweep.
    grad_sq: f64,
}

impl Conjugate {
    /// Keeps `r`, the impulses the next sweep starts from.
    pub(crate) fn remember(&mut self, r: &[f64]) {
        self.before.clear();
        self.before.extend_from_slice(r);
    }

    /// Extrapolates the swept impulses `r` (from `self.before`) along the conjugate direction.
    pub(crate) fn extrapolate(&mut self, r: &mut [f64]) {
        let grad_sq: f64 = r
            .iter()
            .zip(&self.before)
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        let beta = grad_sq / self.grad_sq;
        // `beta` is NaN after a sweep that moved nothing (0 / 0): restart then too.
        let restart = self.p.len() != r.len() || beta.is_nan() || beta > 1.0;
        if restart {
            self.p.clear();
            self.p
                .extend(r.iter().zip(&self.before).map(|(a, b)| a - b));
        } else {
            for ((ri, pi), bi) in r.iter_mut().zip(self.p.iter_mut()).zip(&self.before) {
                let step = *ri - bi;
                *ri += beta * *pi;
                *pi = beta * *pi + step;
            }
        }
        self.grad_sq = grad_sq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The combination of Alg. 1: the first sweep and every sweep after a
    /// rise of the step (`beta > 1`) restart with `p` = the sweep's step; otherwise the sweep's
    /// answer moves by `beta p` and `p <- beta p + step`.
    #[test]
    fn nncg_extrapolates_along_fletcher_reeves_directions_and_restarts_on_a_rise() {
        let mut cg = Conjugate {
            before: vec![0.0, 0.0],
            ..Conjugate::default()
        };
        let mut r = vec![2.0, 0.0];
        cg.extrapolate(&mut r);
        assert_eq!(
            (r.as_slice(), cg.p.as_slice(), cg.grad_sq),
            (&[2.0, 0.0][..], &[2.0, 0.0][..], 4.0)
        );
        // A step of half the length: beta = 1/4.
        cg.before = vec![2.0, 0.0];
        let mut r = vec![2.0, 1.0];
        cg.extrapolate(&mut r);
        assert_eq!(r, vec![2.5, 1.0]);
        assert_eq!(cg.p, vec![0.5, 1.0]);
        // A longer step than the last (beta = 9): restart.
        cg.before = vec![2.5, 1.0];
        let mut r = vec![2.5, 4.0];
        cg.extrapolate(&mut r);
        assert_eq!(r, vec![2.5, 4.0]);
        assert_eq!(cg.p, vec![0.0, 3.0]);
    }
}
