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
//!
//! The restart threshold is an option (PGS's `nncg_restart`, Alg. 1's 1 by default). Where the
//! sweeps drift at a nearly constant step, as they do along a grasp's internal forces (a
//! Gauss-Seidel sweep on a singular system its active set makes inconsistent translates the
//! impulses along `W`'s near-null space while the residual stays put), `beta` is 1 up to the
//! sweep's rounding and wobble, and the paper's test restarts on about every other sweep: the
//! conjugate direction never builds up. A threshold above 1 lets it build while the steps stay
//! of one length, and still restarts when a step jumps.

/// Alg. 1's restart: whenever a sweep's step is longer than the last one's (`beta > 1`).
pub const PAPER_RESTART: f64 = 1.0;

/// NNCG's memory between sweeps (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct Conjugate {
    /// The impulses before the sweep.
    before: Vec<f64>,
    /// The conjugate direction `p_k` (empty until the first sweep).
    p: Vec<f64>,
    /// `|grad f_k|^2` of the last sweep.
    grad_sq: f64,
    /// Restart when `beta` exceeds this.
    restart_above: f64,
}

impl Conjugate {
    /// An empty memory that restarts when `beta > restart_above`.
    pub(crate) fn new(restart_above: f64) -> Conjugate {
        Conjugate {
            before: Vec::new(),
            p: Vec::new(),
            grad_sq: 0.0,
            restart_above,
        }
    }

    /// Forgets every sweep (a new solve), keeping the restart threshold.
    pub(crate) fn reset(&mut self) {
        self.p.clear();
        self.grad_sq = 0.0;
    }

    /// Keeps `r`, the impulses the next sweep starts from.
    pub(crate) fn remember(&mut self, r: &[f64]) {
        self.before.clear();
        self.before.extend_from_slice(r);
    }

    /// Extrapolates the swept impulses `r` (from `self.before`) along the conjugate direction;
    /// the steps' lengths, and so `beta`, are measured with `r` mapped by the diagonal `to_own`
    /// (the problem's own coordinates, when the sweep runs in scaled ones).
    pub(crate) fn extrapolate(&mut self, r: &mut [f64], to_own: Option<&[f64]>) {
        // Multiplying by 1.0 is exact, so the sum without `to_own` is the plain one.
        let grad_sq: f64 = r
            .iter()
            .zip(&self.before)
            .enumerate()
            .map(|(i, (a, b))| (to_own.map_or(1.0, |d| d[i]) * (a - b)).powi(2))
            .sum();
        let beta = grad_sq / self.grad_sq;
        // `beta` is NaN after a sweep that moved nothing (0 / 0): restart then too.
        let restart = self.p.len() != r.len() || beta.is_nan() || beta > self.restart_above;
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
        let mut cg = Conjugate::new(PAPER_RESTART);
        cg.before = vec![0.0, 0.0];
        let mut r = vec![2.0, 0.0];
        cg.extrapolate(&mut r, None);
        assert_eq!(
            (r.as_slice(), cg.p.as_slice(), cg.grad_sq),
            (&[2.0, 0.0][..], &[2.0, 0.0][..], 4.0)
        );
        // A step of half the length: beta = 1/4.
        cg.before = vec![2.0, 0.0];
        let mut r = vec![2.0, 1.0];
        cg.extrapolate(&mut r, None);
        assert_eq!(r, vec![2.5, 1.0]);
        assert_eq!(cg.p, vec![0.5, 1.0]);
        // A longer step than the last (beta = 9): restart.
        cg.before = vec![2.5, 1.0];
        let mut r = vec![2.5, 4.0];
        cg.extrapolate(&mut r, None);
        assert_eq!(r, vec![2.5, 4.0]);
        assert_eq!(cg.p, vec![0.0, 3.0]);
    }

    /// Above the paper's threshold, a step a little longer than the last (`beta = 1.21`)
    /// extends the direction instead of restarting it; a longer one still restarts.
    #[test]
    fn a_threshold_above_one_keeps_the_direction_through_a_slightly_longer_step() {
        let mut cg = Conjugate::new(1.5);
        cg.before = vec![0.0];
        let mut r = vec![1.0];
        cg.extrapolate(&mut r, None);
        cg.before = vec![1.0];
        let mut r = vec![2.1];
        cg.extrapolate(&mut r, None);
        // beta = 1.21: r = 2.1 + 1.21 * 1, p = 1.21 * 1 + 1.1.
        assert!((r[0] - 3.31).abs() < 1e-12 && (cg.p[0] - 2.31).abs() < 1e-12);
        cg.before = vec![3.31];
        let mut r = vec![3.31 + 2.0];
        cg.extrapolate(&mut r, None);
        // beta = 4 / 1.21 > 1.5: restart, r kept and p = the step.
        assert!((r[0] - 5.31).abs() < 1e-12 && (cg.p[0] - 2.0).abs() < 1e-12);
        let mut paper = Conjugate::new(PAPER_RESTART);
        paper.before = vec![0.0];
        paper.extrapolate(&mut [1.0], None);
        paper.before = vec![1.0];
        let mut r = vec![2.1];
        paper.extrapolate(&mut r, None);
        assert!((r[0] - 2.1).abs() < 1e-15 && (paper.p[0] - 1.1).abs() < 1e-12);
    }
}
