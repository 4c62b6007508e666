//! The closed-form motions of the fidelity setups (see the parent module for the sources and
//! the notation): each is a motion of the centre of mass along one fixed direction of the
//! plane with a speed profile in time, and a spin that grows linearly (only the rolling
//! sphere spins).

use nalgebra::Vector3;

/// How the speed along the motion's direction evolves from `t = 0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Profile {
    /// At rest throughout (static friction holds).
    Rest,
    /// Starts at `v0` and decelerates at `rate` until it stops at `v0 / rate` (sliding).
    Decelerate {
        /// Initial speed (m/s).
        v0: f64,
        /// Deceleration (m/s^2), `mu g` for a sliding block.
        rate: f64,
    },
    /// Starts at rest and accelerates at `a` (an incline, a rolling sphere).
    Accelerate {
        /// Acceleration (m/s^2).
        a: f64,
    },
    /// At rest until `t0`, then `v = k (t - t0)^2` (a force growing linearly in time against
    /// kinetic friction: `m dv/dt = rate (t - t0)`, so `k = rate / (2 m)`).
    RampAfter {
        /// Breakaway time (s).
        t0: f64,
        /// `rate / (2 m)` (m/s^3).
        k: f64,
    },
}

/// One setup's exact motion: the centre moves by `distance(t)` along `direction` from its
/// start, with kinetic energy `m speed^2 / 2 + I (alpha t)^2 / 2`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactMotion {
    /// Unit direction of the motion, in the plane (plane frame).
    pub direction: Vector3<f64>,
    /// The speed profile.
    pub profile: Profile,
    /// Mass `m` (kg).
    pub mass: f64,
    /// Moment of inertia `I` about the centre (isotropic bodies only).
    pub inertia: f64,
    /// Angular acceleration `alpha` (rad/s^2) of the spin that starts at zero.
    pub alpha: f64,
}

impl ExactMotion {
    /// The time the motion stops (`Decelerate` with `rate > 0`), else infinity.
    pub fn stop_time(&self) -> f64 {
        match self.profile {
            Profile::Decelerate { v0, rate } if rate > 0.0 => v0 / rate,
            _ => f64::INFINITY,
        }
    }

    /// The speed along `direction` at time `t >= 0`.
    pub fn speed(&self, t: f64) -> f64 {
        match self.profile {
            Profile::Rest => 0.0,
            Profile::Decelerate { v0, rate } => v0 - rate * t.min(self.stop_time()),
            Profile::Accelerate { a } => a * t,
            Profile::RampAfter { t0, k } => k * (t - t0).max(0.0).powi(2),
        }
    }

    /// The distance travelled along `direction` by time `t >= 0`.
    pub fn distance(&self, t: f64) -> f64 {
        match self.profile {
            Profile::Rest => 0.0,
            Profile::Decelerate { v0, rate } => {
                let s = t.min(self.stop_time());
                v0 * s - 0.5 * rate * s * s
            }
            Profile::Accelerate { a } => 0.5 * a * t * t,
            Profile::RampAfter { t0, k } => k * (t - t0).max(0.0).powi(3) / 3.0,
        }
    }

    /// The displacement of the centre from its start at time `t` (plane frame).
    pub fn displacement(&self, t: f64) -> Vector3<f64> {
        self.distance(t) * self.direction
    }

    /// The velocity of the centre at time `t` (plane frame).
    pub fn velocity(&self, t: f64) -> Vector3<f64> {
        self.speed(t) * self.direction
    }

    /// The kinetic energy at time `t`: translation plus the spin `alpha t`.
    pub fn kinetic_energy(&self, t: f64) -> f64 {
        let spin = self.alpha * t;
        0.5 * self.mass * self.speed(t).powi(2) + 0.5 * self.inertia * spin * spin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn motion(profile: Profile) -> ExactMotion {
        ExactMotion {
            direction: Vector3::x(),
            profile,
            mass: 2.0,
            inertia: 0.5,
            alpha: 3.0,
        }
    }

    /// Distance is the integral of speed for every profile, and the energy adds the spin.
    #[test]
    fn distance_integrates_speed() {
        for p in [
            Profile::Rest,
            Profile::Decelerate { v0: 1.0, rate: 4.0 },
            Profile::Accelerate { a: 0.7 },
            Profile::RampAfter { t0: 0.2, k: 10.0 },
        ] {
            let m = motion(p);
            let d = 1e-6;
            for t in [0.1, 0.3, 0.6] {
                let rate = (m.distance(t + d) - m.distance(t - d)) / (2.0 * d);
                assert_relative_eq!(rate, m.speed(t), epsilon = 1e-7);
            }
            assert_relative_eq!(
                m.kinetic_energy(0.5),
                m.speed(0.5).powi(2) + 0.25 * 1.5 * 1.5,
                epsilon = 1e-14
            );
        }
        let stop = motion(Profile::Decelerate { v0: 1.0, rate: 4.0 });
        assert_eq!(stop.stop_time(), 0.25);
        assert_eq!(stop.speed(1.0), 0.0);
        assert_relative_eq!(stop.distance(1.0), 0.125, epsilon = 1e-15);
        assert_eq!(motion(Profile::Rest).stop_time(), f64::INFINITY);
    }
}
