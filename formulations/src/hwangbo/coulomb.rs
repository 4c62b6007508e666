//! The exact single-contact solve of Coulomb's law (Hwangbo, Lee and Hutter 2018, eq. 6), for
//! testing the sweep and comparing the two friction models; not one of the paper's methods.
//!
//! Opening and sticking are [`classify`](super::classify)'s. A slipping Coulomb contact lies on
//! the same conic section (cone boundary, zero normal velocity) but its tangential velocity
//! opposes its tangential impulse: at the angle `theta` of `lambda_t`, `g(theta) = e_perp . v_t
//! = 0` with `e . v_t < 0` (`e = (cos theta, sin theta)`, `v = c + W lambda`). The angle is
//! found by a scan of `g` over the full turn (from half a step before `atan2(lambda*_t)`) and bisection on each sign change where
//! `e . v_t < 0`; when there are several (Coulomb's law need not have a unique solution), the
//! one of least energy (eq. 12) is returned.

use contactlab_core::drivers::sweep::{ContactSolver, FrictionModel, LocalError, LocalSolution};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::single::{per_contact_solver, SlipConic, SlipMethod};

/// Coulomb's law for one slipping contact by scan and bisection on the slip angle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoulombExact {
    /// Scan points over the full turn.
    pub samples: u32,
}

impl Default for CoulombExact {
    fn default() -> Self {
        CoulombExact { samples: 256 }
    }
}

/// `(e_perp . v_t, e . v_t)` at `theta`, or `None` off the conic.
fn alignment(k: &SlipConic, theta: f64) -> Option<(f64, f64)> {
    let (_, lambda) = k.point(theta)?;
    let v = k.velocity(&lambda);
    let (s, c) = theta.sin_cos();
    Some((-s * v[1] + c * v[2], c * v[1] + s * v[2]))
}

impl SlipMethod for CoulombExact {
    fn model(&self) -> FrictionModel {
        FrictionModel::Coulomb
    }

    fn slip(&self, k: &SlipConic) -> Result<(Vector3<f64>, u32), LocalError> {
        let n = self.samples.max(16);
        let h = std::f64::consts::TAU / f64::from(n);
        // Half a step off the start angle: where W_tt is isotropic the answer is at theta0
        // itself, and a root on a sample would leave the sign test to rounding.
        let theta0 = k.theta0() - 0.5 * h;
        let mut steps = 0u32;
        let mut best: Option<(f64, Vector3<f64>)> = None;
        let mut prev = alignment(k, theta0);
        for i in 1..=n {
            let (lo, hi) = (theta0 + f64::from(i - 1) * h, theta0 + f64::from(i) * h);
            let next = alignment(k, hi);
            steps += 1;
            // The opposing condition `e . v_t < 0` is checked at the root, not at the
            // interval's ends: near sticking the slip is slow and changes sign close by.
            if let (Some((g_lo, _)), Some((g_hi, _))) = (prev, next) {
                if g_lo * g_hi <= 0.0 {
                    let (mut a, mut b, mut ga) = (lo, hi, g_lo);
                    for _ in 0..100 {
                        let m = 0.5 * (a + b);
                        if m == a || m == b {
                            break;
                        }
                        steps += 1;
                        let Some((gm, _)) = alignment(k, m) else {
                            break;
                        };
                        if gm * ga > 0.0 {
                            a = m;
                            ga = gm;
                        } else {
                            b = m;
                        }
                    }
                    let m = 0.5 * (a + b);
                    if let (Some((_, l)), Some((_, d))) = (k.point(m), alignment(k, m)) {
                        let e = k.energy(&l);
                        if d < 0.0 && best.is_none_or(|(be, _)| e < be) {
                            best = Some((e, l));
                        }
                    }
                }
            }
            prev = next;
        }
        best.map(|(_, l)| (l, steps)).ok_or(LocalError::NoBracket(
            "no angle where the slip opposes the impulse",
        ))
    }
}

per_contact_solver!(CoulombExact);
