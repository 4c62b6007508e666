//! The golden-section method Hwangbo, Lee and Hutter 2018 compare against (sec. V-B, Table I;
//! after Preclik): a golden-section search of the energy of eq. 12 over the angle of the conic
//! section, within the line-of-sight region of the zero-velocity impulse `lambda*`.
//!
//! The line-of-sight region is unimodal (sec. III-A), so it brackets the minimum; its two ends
//! are found from `theta0 = atan2(lambda*_t)` (which is in sight) by the same stepping and
//! checks as Algorithm 1 (first step `beta1`, grown by `beta3` while in sight and on the conic;
//! no derivative is used) and then refined by bisection on "in sight and on the conic" until
//! the gap is below `tol` (the "initial overhead to find the interval" of sec. VI). The search
//! then shrinks the bracket by the golden ratio, comparing energies (eq. 12 from the tangential
//! impulse alone, by their difference [`SlipConic::plane_energy_difference`], which keeps its
//! sign where two nearly equal energies would cancel), until the impulses at its ends are closer than
//! `tol` (N s), and returns the conic's point at the mid-angle.
//!
//! With `closed_form_sight` the region's ends are computed instead of searched: on the cone,
//! the line-of-sight test `grad h2 . (lambda - lambda*) <= 0` ([`SlipConic::in_sight`])
//! reduces to `|lambda*_t| cos(theta - theta0) >= mu lambda*_n` (the cone's `grad h2 . lambda`
//! vanishes), so the region is `theta0 +- acos(mu lambda*_n / |lambda*_t|)`, cut where an open
//! conic has no point (`W_nn / mu + W_nt . e <= 0`, an arc about the direction of `W_nt`).
//! One `acos` (two on an open conic) replaces the search's evaluations: the overhead of
//! finding the interval, which sec. VI calls "quite significant", drops to nothing, and what
//! remains is the golden section's own shrinking by 0.618 per evaluation.

use contactlab_core::drivers::sweep::{ContactSolver, FrictionModel, LocalError, LocalSolution};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::single::{per_contact_solver, SlipConic, SlipMethod};

/// The golden-section search and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GoldenSection {
    /// Stop when the impulses at the bracket's ends are closer than this (N s).
    pub tol: f64,
    /// The first angle step of the bracketing (rad).
    pub beta1: f64,
    /// The step's growth while the bracketing stays in sight (at least 1).
    pub beta3: f64,
    /// Bound on evaluations (bracketing and search together).
    pub max_steps: u32,
    /// Compute the line-of-sight region's ends in closed form instead of searching them.
    pub closed_form_sight: bool,
}

impl Default for GoldenSection {
    fn default() -> Self {
        GoldenSection {
            tol: 1e-6,
            beta1: 0.05,
            beta3: 2.0,
            max_steps: 400,
            closed_form_sight: false,
        }
    }
}

/// The bracket the golden section searches: its ends' angles and impulses, and the
/// evaluations spent finding it.
struct Region {
    a: f64,
    la: Vector3<f64>,
    b: f64,
    lb: Vector3<f64>,
    steps: u32,
}

/// `(sqrt(5) - 1) / 2`.
const INV_PHI: f64 = 0.618_033_988_749_894_8;

impl GoldenSection {
    /// The visible point at `theta`, if any.
    fn visible(k: &SlipConic, theta: f64) -> Option<Vector3<f64>> {
        k.point(theta).map(|(_, l)| l).filter(|l| k.in_sight(l))
    }

    /// The end of the line-of-sight region from `theta0` in direction `dir`: the last visible
    /// angle found, within `tol` of the first invisible one.
    fn sight_end(
        &self,
        k: &SlipConic,
        theta0: f64,
        lambda0: Vector3<f64>,
        dir: f64,
        steps: &mut u32,
    ) -> Result<(f64, Vector3<f64>), LocalError> {
        let (mut inside, mut lambda_in) = (theta0, lambda0);
        let mut step = self.beta1;
        let mut outside = loop {
            *steps += 1;
            if *steps > self.max_steps {
                return Err(LocalError::NoBracket(
                    "the bracketing did not leave the sight",
                ));
            }
            let t = inside + dir * step;
            // The point opposite lambda* through the axis, theta0 + pi, is never in sight
            // (see the bisection's guard): the visible arc ends before it.
            let near = (t - theta0).abs() < std::f64::consts::PI;
            match Self::visible(k, t).filter(|_| near) {
                Some(l) => {
                    inside = t;
                    lambda_in = l;
                    step *= self.beta3;
                }
                None => break t,
            }
        };
        loop {
            let gap_impulse = match k.point(outside) {
                Some((_, l)) => (l - lambda_in).norm(),
                None => f64::INFINITY,
            };
            let mid = 0.5 * (inside + outside);
            if gap_impulse < self.tol || mid == inside || mid == outside {
                break;
            }
            *steps += 1;
            if *steps > self.max_steps {
                break;
            }
            match Self::visible(k, mid).filter(|_| (mid - theta0).abs() < std::f64::consts::PI) {
                Some(l) => {
                    inside = mid;
                    lambda_in = l;
                }
                None => outside = mid,
            }
        }
        Ok((inside, lambda_in))
    }
}

impl GoldenSection {
    /// The line-of-sight region's ends in closed form (module doc), as angles `a < b`.
    pub fn sight_region(k: &SlipConic) -> (f64, f64) {
        use std::f64::consts::PI;
        let theta0 = k.theta0();
        let s = k.stick;
        let ratio = k.mu * s[0] / s[1].hypot(s[2]);
        let delta = if ratio <= -1.0 {
            PI
        } else {
            ratio.min(1.0).acos()
        };
        let (mut a, mut b) = (theta0 - delta, theta0 + delta);
        let (wn1, wn2) = (k.w[(0, 1)], k.w[(0, 2)]);
        let open = k.w[(0, 0)] / (k.mu * wn1.hypot(wn2));
        if open < 1.0 {
            // Points exist where cos(theta - phi) > -open, phi the direction of W_nt, taken
            // within half a turn of theta0 (which has a point).
            let gamma = (-open).acos();
            let mut phi = wn2.atan2(wn1);
            phi = theta0 + (phi - theta0 + PI).rem_euclid(2.0 * PI) - PI;
            a = a.max(phi - gamma);
            b = b.min(phi + gamma);
        }
        (a, b)
    }

    /// The region to search and the evaluations spent finding it.
    fn region(&self, k: &SlipConic) -> Result<Region, LocalError> {
        if self.closed_form_sight {
            // An end at an open conic's gap has no finite point: an infinite impulse, so
            // the stopping test waits until that end has moved inside.
            let at = |t: f64| {
                k.point(t)
                    .map_or(Vector3::repeat(f64::INFINITY), |(_, l)| l)
            };
            let (a, b) = Self::sight_region(k);
            return Ok(Region {
                a,
                la: at(a),
                b,
                lb: at(b),
                steps: 0,
            });
        }
        let theta0 = k.theta0();
        let lambda0 = Self::visible(k, theta0)
            .ok_or(LocalError::NoBracket("the start angle is not in sight"))?;
        let mut steps = 0u32;
        let (a, la) = self.sight_end(k, theta0, lambda0, -1.0, &mut steps)?;
        let (b, lb) = self.sight_end(k, theta0, lambda0, 1.0, &mut steps)?;
        Ok(Region {
            a,
            la,
            b,
            lb,
            steps,
        })
    }
}

impl SlipMethod for GoldenSection {
    fn slip(&self, k: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError> {
        let Region {
            mut a,
            mut la,
            mut b,
            mut lb,
            mut steps,
        } = self.region(k)?;
        // Inside the bracket every angle is on the conic; `None` (rounding at an open
        // conic's end) counts as an infinite energy.
        let eval = |t: f64| k.point(t).map(|(_, l)| l);
        let lower = |l1: &Option<Vector3<f64>>, l2: &Option<Vector3<f64>>| match (l1, l2) {
            (Some(l1), Some(l2)) => k.plane_energy_difference(l1, l2) < 0.0,
            (Some(_), None) => true,
            _ => false,
        };
        let mut x1 = b - INV_PHI * (b - a);
        let mut x2 = a + INV_PHI * (b - a);
        let mut l1 = eval(x1);
        let mut l2 = eval(x2);
        steps += 2;
        // An end still at infinity (a NaN or infinite distance) goes on.
        let wide = |d: f64| d.is_nan() || d >= self.tol;
        while wide((la - lb).norm()) && steps < self.max_steps && x1 < x2 {
            steps += 1;
            if lower(&l1, &l2) {
                b = x2;
                lb = l2.unwrap_or(lb);
                x2 = x1;
                l2 = l1;
                x1 = b - INV_PHI * (b - a);
                l1 = eval(x1);
            } else {
                a = x1;
                la = l1.unwrap_or(la);
                x1 = x2;
                l1 = l2;
                x2 = a + INV_PHI * (b - a);
                l2 = eval(x2);
            }
        }
        let lambda = k
            .point(0.5 * (a + b))
            .map(|(_, l)| l)
            .ok_or(LocalError::NoBracket(
                "the bracket's middle is off the conic",
            ))?;
        Ok((lambda, steps))
    }

    fn bracket_steps(&self, k: &SlipConic) -> Option<u32> {
        self.region(k).ok().map(|r| r.steps)
    }
}

per_contact_solver!(GoldenSection);
