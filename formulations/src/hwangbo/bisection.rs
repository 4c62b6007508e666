//! Hwangbo, Lee and Hutter 2018, Algorithm 1: bisection on the angle of the conic section for a
//! slipping contact of the maximum-dissipation model (eq. 8 as eq. 12), with the hybrid
//! gradient of eqs. 15-16 (its sign, from the division-free [`SlipConic::slope_scaled`]).
//!
//! Start at `theta0 = atan2(lambda*_t)` (the projection of the zero-velocity impulse onto the
//! conic from the axis), step against the sign `D0` of `dE/dtheta` there, growing the step by
//! `beta3` while the sign stays and shrinking it by `beta2` (and stepping back) when the new
//! point is out of the line of sight of `lambda*` or has no point on the conic (`r <= 0`);
//! once the sign flips, bisect the angle interval until the impulses at its ends are closer
//! than `tol` (N s). The answer is the conic's point at the final interval's mid-angle.
//! A bisection step finds the mid-angle's direction as the normalised sum of its ends'
//! directions ([`SlipConic::at_mid`]): a square root where `sin_cos` would cost several times
//! as much, and most of a solve's steps are bisection steps.
//!
//! One guard the paper does not spell out: a step that would take the angle `pi` or more away
//! from `theta0` is refused like a point out of sight. The conic's point opposite `lambda*`
//! through the axis (`theta0 + pi`) is never in sight (the segment to it crosses the axis
//! point `lambda^{T=0}`, inside the cone), so the visible arc lies within `theta0 +- pi`;
//! without the guard a doubled step can jump over the answer and an open conic's gap onto the
//! far end of the visible arc, where the slope has the start's sign again, and the stepping
//! circles for ever (seen on blocks of condition number 1e6).
//!
//! The paper leaves `beta1..beta3` open; ours, chosen so that the common case (the start within
//! a few degrees of the answer, sec. VI) brackets in one or two steps and a far answer (an
//! anisotropic `W`) in a handful:
//! - `beta1 = 0.05` rad (3 degrees): the first step;
//! - `beta2 = 0.5`: halve the step after a point out of sight or off the conic;
//! - `beta3 = 2`: double it while the slope keeps its sign (any angle within `log2(pi / beta1)`
//!   = 6 steps).

use contactlab_core::drivers::sweep::{ContactSolver, FrictionModel, LocalError, LocalSolution};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::single::{per_contact_solver, ConicPoint, SlipConic, SlipMethod};

/// Algorithm 1's bisection and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bisection {
    /// Stop when the impulses at the interval's ends are closer than this (N s; the paper's
    /// `gamma`, 1e-6).
    pub tol: f64,
    /// The first angle step (rad).
    pub beta1: f64,
    /// The step's factor after a point out of sight or off the conic (in `(0, 1)`).
    pub beta2: f64,
    /// The step's factor while the slope keeps its sign (at least 1).
    pub beta3: f64,
    /// Bound on slope evaluations (stepping and bisection together).
    pub max_steps: u32,
}

impl Default for Bisection {
    fn default() -> Self {
        Bisection {
            tol: 1e-6,
            beta1: 0.05,
            beta2: 0.5,
            beta3: 2.0,
            max_steps: 300,
        }
    }
}

/// Where Algorithm 1's initial stepping (lines 1-23) ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bracket {
    /// The slope vanished at the start angle: its point is the answer.
    Exact(Vector3<f64>),
    /// The slope has the start's sign `s0` at `at_p` and the other sign at `at` (the paper's
    /// `theta^p` and `theta`).
    Interval {
        /// The end with the slope's other sign.
        at: ConicPoint,
        /// The end with the start's sign.
        at_p: ConicPoint,
        /// The sign of the slope at the start angle.
        s0: f64,
    },
}

impl Bisection {
    /// Algorithm 1's initial stepping (lines 1-23): the bracket and the slope evaluations it
    /// took, the start's included (so a start whose first step already crosses the answer
    /// takes 2, the "two steps" of sec. VI).
    pub fn bracket(&self, k: &SlipConic) -> Result<(Bracket, u32), LocalError> {
        let theta_start = k.theta0();
        let mut at = k.at(theta_start).ok_or(LocalError::NoBracket(
            "the start angle has no point on the conic",
        ))?;
        let d0 = k.slope_scaled(&at);
        if d0 == 0.0 {
            return Ok((Bracket::Exact(at.lambda), 1));
        }
        if d0.is_nan() {
            return Err(LocalError::NotFinite("slope"));
        }
        let s0 = d0.signum();
        let mut alpha = -self.beta1 * s0;
        let mut steps = 1u32;
        let mut at_p;
        loop {
            steps += 1;
            if steps > self.max_steps {
                return Err(LocalError::NoBracket("the stepping found no sign change"));
            }
            at_p = at;
            let t = at.theta + alpha;
            let near = (t - theta_start).abs() < std::f64::consts::PI;
            match k.at(t) {
                Some(p) if near && k.in_sight(&p.lambda) => {
                    at = p;
                    if k.slope_scaled(&p) * s0 > 0.0 {
                        alpha *= self.beta3;
                    } else {
                        break;
                    }
                }
                _ => alpha *= self.beta2,
            }
        }
        Ok((Bracket::Interval { at, at_p, s0 }, steps))
    }
}

impl SlipMethod for Bisection {
    fn slip(&self, k: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError> {
        let (bracket, mut steps) = self.bracket(k)?;
        let (mut at, mut at_p, s0) = match bracket {
            Bracket::Exact(lambda) => return Ok((lambda, steps)),
            Bracket::Interval { at, at_p, s0 } => (at, at_p, s0),
        };
        // Bisection (lines 24-33).
        // Squared distances against `tol^2`: the same test without a square root per step.
        let tol2 = self.tol * self.tol;
        while (at_p.lambda - at.lambda).norm_squared() >= tol2 && steps < self.max_steps {
            let mid = 0.5 * (at.theta + at_p.theta);
            if mid == at.theta || mid == at_p.theta {
                break;
            }
            steps += 1;
            let m = k.at_mid(&at, &at_p).ok_or(LocalError::NoBracket(
                "a mid-angle has no point on the conic",
            ))?;
            if k.slope_scaled(&m) * s0 > 0.0 {
                at_p = m;
            } else {
                at = m;
            }
        }
        let lambda = k.at_mid(&at, &at_p).map_or(at.lambda, |m| m.lambda);
        Ok((lambda, steps))
    }

    fn bracket_steps(&self, k: &SlipConic) -> Option<u32> {
        self.bracket(k).ok().map(|(_, steps)| steps)
    }
}

per_contact_solver!(Bisection);
