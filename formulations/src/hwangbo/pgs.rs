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
//!
//! **Other kinds** (our extension; the paper has point contacts with isotropic friction only).
//! Eq. 17 is a projected step per force component, and each kind's component gets the same:
//! an equality's rows `r <- r - alpha W_RR^-1 u_R` (the block solved exactly given the others,
//! relaxed by `alpha`: a per-row step on a bilateral block would not be exact where its rows
//! couple), a limit's or a frictionless contact's `r <- max(0, r - alpha u / W_kk)`, a friction
//! loss's `r <- clip(r - alpha u / W_kk, -f_max, f_max)` (the sweep's exact steps with
//! [`ContactSolver::exact_step`] `= alpha`). A contact of the elliptic cone `K_mu` (condim 3
//! with unequal coefficients, 4, 6; [`contactlab_core::elliptic_cone`]) takes eq. 17's two steps:
//! the normal one as above, then every frictional row's step `t = lambda_f - r_t v_f` with one
//! step `r_t = alpha / max_i W_ii` over the frictional rows (eq. 18's rule over all of them:
//! one scalar step keeps the fixed point a solution of the law), projected Euclidean-wise onto
//! the ellipse `{x : sum_i (x_i / mu_i)^2 <= lambda_n^2}` ([`project_ellipse`]). The Euclidean
//! projection (not the radial shrink onto the scaled disc `|x_i / mu_i| <= lambda_n`) is the one
//! whose fixed points solve the elliptic law: at a fixed point on the boundary `-v_f` is along
//! the ellipse's normal `x_i / mu_i^2`, which is De Saxce's law on `K_mu`
//! (`mu_i u_i ∝ -r_i / mu_i`), while the radial shrink's fixed points have `v_f` opposite `x`,
//! right only when the coefficients are equal. The stop rule's impulse change and penetration
//! read on every block (see `contactlab_core::drivers::sweep::kinds`).

use contactlab_core::drivers::sweep::{ContactMode, ContactSolver, LocalError, LocalSolution};
use nalgebra::{Matrix3, Vector2, Vector3};

/// One contact's update of eqs. 17-18.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgsStep {
    /// Eq. 18's `alpha`.
    pub alpha: f64,
}

/// The Euclidean projection of `t` (the frictional rows, in place) onto the ellipse
/// `{x : sum_i (x_i / mu_i)^2 <= rho^2}`, rows with `mu_i = 0` projected to 0. Outside, the
/// nearest point is `x_i = mu_i^2 t_i / (mu_i^2 + lambda)` with `lambda > 0` the root of
/// `phi(lambda) = 1 / |(mu_i t_i / (mu_i^2 + lambda))_i| - 1 / rho` (Newton, increasing in
/// `lambda`, safeguarded by bisection on `[0, |D t| / rho]`, where `phi >= 0`); returns the
/// Newton steps taken.
pub fn project_ellipse(mu: &[f64], rho: f64, t: &mut [f64]) -> u32 {
    let inside: f64 = mu
        .iter()
        .zip(t.iter())
        .filter(|(m, _)| **m > 0.0)
        .map(|(m, x)| (x / m) * (x / m))
        .sum();
    if rho <= 0.0 {
        t.fill(0.0);
        return 0;
    }
    if inside <= rho * rho {
        mu.iter()
            .zip(t.iter_mut())
            .for_each(|(m, x)| *x = if *m > 0.0 { *x } else { 0.0 });
        return 0;
    }
    let dt: f64 = mu
        .iter()
        .zip(t.iter())
        .map(|(m, x)| (m * x) * (m * x))
        .sum();
    let (mut lo, mut hi) = (0.0f64, dt.sqrt() / rho);
    let mut lambda = 0.0f64;
    let mut steps = 0;
    while steps < 200 && hi - lo > 1e-15 * hi {
        steps += 1;
        let (g, dg) = mu.iter().zip(t.iter()).filter(|(m, _)| **m > 0.0).fold(
            (0.0f64, 0.0f64),
            |(g, dg), (m, x)| {
                let e = m * m + lambda;
                let a = (m * x) * (m * x);
                (g + a / (e * e), dg + a / (e * e * e))
            },
        );
        let phi = 1.0 / g.sqrt() - 1.0 / rho;
        if phi < 0.0 {
            lo = lambda;
        } else {
            hi = lambda;
        }
        if phi == 0.0 {
            break;
        }
        // phi' = G^{-3/2} sum_i (mu_i t_i)^2 / (mu_i^2 + lambda)^3.
        let next = lambda - phi / (dg / (g * g.sqrt()));
        lambda = if next > lo && next < hi {
            next
        } else {
            0.5 * (lo + hi)
        };
    }
    mu.iter()
        .zip(t.iter_mut())
        .for_each(|(m, x)| *x *= m * m / (m * m + lambda));
    steps
}

/// The mode of an impulse `r` of the elliptic cone `K_mu`: opening at zero, sticking strictly
/// inside (within a relative `1e-12`), else slipping.
fn cone_mode(mu: &[f64], r: &[f64]) -> ContactMode {
    let f = &r[1..];
    let scaled: f64 = mu
        .iter()
        .zip(f)
        .filter(|(m, _)| **m > 0.0)
        .map(|(m, x)| (x / m) * (x / m))
        .sum::<f64>()
        .sqrt();
    if r[0] <= 0.0 && f.iter().all(|x| *x == 0.0) {
        ContactMode::Opening
    } else if scaled < r[0] * (1.0 - 1e-12) {
        ContactMode::Sticking
    } else {
        ContactMode::Slipping
    }
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

    const OTHER_KINDS: bool = true;

    const OWN_CONES: bool = true;

    fn exact_step(&self) -> f64 {
        self.alpha
    }

    /// Eq. 17 on a contact of the elliptic cone (see the module documentation).
    fn solve_cone(
        &self,
        w: &[f64],
        c: &[f64],
        mu: &[f64],
        r_prev: &[f64],
        out: &mut [f64],
    ) -> Result<(ContactMode, u32), LocalError> {
        let m = c.len();
        let step = |d: f64| if d > 0.0 { self.alpha / d } else { 0.0 };
        let velocity = |i: usize, r: &[f64]| -> f64 {
            c[i] + w[i * m..(i + 1) * m]
                .iter()
                .zip(r)
                .map(|(a, b)| a * b)
                .sum::<f64>()
        };
        out.copy_from_slice(r_prev);
        out[0] = (r_prev[0] - step(w[0]) * velocity(0, r_prev)).max(0.0);
        let w_max = (1..m)
            .map(|i| w[i * m + i])
            .fold(f64::NEG_INFINITY, f64::max);
        let r_t = step(w_max);
        let mut t = [0.0; 5];
        for i in 1..m {
            t[i - 1] = out[i] - r_t * velocity(i, out);
        }
        let steps = project_ellipse(mu, out[0], &mut t[..m - 1]);
        out[1..].copy_from_slice(&t[..m - 1]);
        if !out.iter().all(|x| x.is_finite()) {
            return Err(LocalError::NotFinite("PGS impulse"));
        }
        Ok((cone_mode(mu, out), 1 + steps))
    }
}
