//! A sphere sliding and then rolling on a fixed horizontal plane (Mylapilli and Jain 2014,
//! section "Simulation results", "Sphere on a fixed horizontal plane", examples 1 and 2, Figs.
//! 1-3; the closed-form answer is Trinkle's, the paper's reference 2).
//!
//! # The system
//!
//! A uniform solid sphere of mass `m` and radius `R` (`I = 2 m R^2 / 5`) with its centre at
//! `z = R` on the floor `z = 0`, gravity `g` along `-z`, initial velocity `v0` and spin
//! `omega0` (paper: `m = R = 1`, `v0 = (2, 0, 0)`, `omega0 = 0`, `mu = 0.2`, `g = 9.81`,
//! `h = 1 ms`, 0.6 s; these are the defaults of [`SphereConfig`]). Six velocity coordinates
//! `[v, omega]` (centre velocity, angular velocity, world frame), mass matrix
//! `M = diag(m, m, m, I, I, I)`; a sphere has no gyroscopic term. The orientation does not
//! enter the dynamics or the contact, so it is not tracked.
//!
//! # One step
//!
//! Semi-implicit Euler in impulses, as in the paper's eqs. 21/30 with `G_u = J`: with the free
//! velocity `c = [v - h g e_z, omega]`, the contact problem is `u = W r + q`, `W = J M^-1 J'`,
//! `q = J c`, then `[v, omega] = c + M^-1 J' r` and `p += h v`. The scene adds no bias and no
//! regularisation (`b = 0`): with an exact Coulomb solver the normal velocity after every step
//! is exactly zero, so the centre stays at its rest height while the sphere slides.
//!
//! # The contact
//!
//! One contact, ball 0 against the floor (`ContactKey::Wall { ball: 0, wall: 0 }`), kept in the
//! problem at every step while the gap `p_z - R` is below `margin` (so the problem exists
//! while the sphere slides or rolls, whatever the impulse). Its frame is
//! [`contact_frame`]`(+z)`, rows `[n, t1, t2] = [+z, +y, -x]`, normal first, `n` pointing from
//! the floor to the sphere; the rows of `J` for a direction `d` of the frame are `d` on `v` and
//! `-R (n x d)` on `omega` (the velocity of the touching point `p - R n`).
//!
//! **Where the motion sits in the frame** (for pyramid solvers, examples 1 and 2): the sphere
//! moves along `+x = -t2`, and friction acts along `-x = +t2`. A direction at angle `a` in the
//! `(t1, t2)` plane is `cos(a) t1 + sin(a) t2`, so the motion is at `a = -90` degrees and the
//! friction at `a = +90` degrees. Four directions at `a = 0, 90, 180, 270` degrees
//! (offset 0) contain both: the paper's example 1. An offset of 45 degrees puts every
//! direction at 45 degrees to the motion: example 2. The angle is a solver option, not a
//! scene parameter.
//!
//! # The exact answer
//!
//! [`SlideRoll`] (and the shorthands [`slide_time`], [`rolling_speed`]): the slip velocity of
//! the touching point `s = v + omega x (-R e_z)` shrinks along its own direction at the rate
//! `(1 + m R^2 / I) mu g = 7 mu g / 2` until `t* = 2 |s0| / (7 mu g)` (paper: `0.291 s`), with the
//! friction force `-mu m g s/|s|` (magnitude `mu m g`); then the sphere rolls at
//! `v = v0 - mu g t* s/|s|` (paper: `5 v0 / 7 = 1.429 m/s`, `omega_y = v_x / R`) with no friction.
//!
//! The scene reports this answer as data, so that reports compare against it without
//! rebuilding it: after every step the exact velocities at the step's end `t = steps h` are
//! observables (`vx_exact`, `vy_exact`, `omega_x_exact`, `omega_y_exact`, as the
//! spring-cylinder's `x_exact`), and its constants are the scene's
//! [`constants`](Scene::constants): `slide_time_exact` (`t*`), `rolling_speed_exact`
//! (`|v(t*)|`) and `friction_exact` (`mu m g`), beside `w_tangent`, the tangential diagonal of
//! `W = J M^-1 J'` (`1/m + R^2 / I`). Where the closed form does not apply (a vertical `v0`)
//! the exact observables are `NaN` and the exact constants absent.
//!
//! # Choices where the paper is silent
//!
//! * The time stepping (semi-implicit Euler in impulses), the contact margin (`1e-3 m`) and the
//!   frame's tangent axes (the project's [`contact_frame`]; the paper's `f, o, n` are `x, y, z`,
//!   ours are `n, t1, t2 = z, y, -x`: the same plane, another labelling).
//! * Observables: the position (`x`, `y`, and `z` as the height of the centre above its rest
//!   height, the "hop"), the velocities, the kinetic energy, the contact force of the step
//!   just taken in world axes (`force_x`, `force_y`, `force_z` = `J' r / h` restricted to the
//!   linear part; while sliding `force_x = -mu m g`, `force_z = m g`: the paper's Fig. 2(b)),
//!   and the exact velocities (above).

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::{LocalProblem, Matrix, StepProblem};
use faer::Mat;
use nalgebra::{Matrix3, Matrix3x6, Vector3, Vector6};
use serde::{Deserialize, Serialize};

use super::one_body::{self, BodyContact};
use crate::assemble::Gap;
use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

fn default_mass() -> f64 {
    1.0
}
fn default_radius() -> f64 {
    1.0
}
fn default_v0() -> [f64; 3] {
    [2.0, 0.0, 0.0]
}
fn default_mu() -> f64 {
    0.2
}
fn default_gravity() -> f64 {
    9.81
}
fn default_h() -> f64 {
    0.001
}
fn default_duration() -> f64 {
    0.6
}
fn default_margin() -> f64 {
    1e-3
}

/// The sphere-on-a-plane parameters (`[scene.params]`); the defaults are the paper's.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SphereConfig {
    /// Mass `m` (kg).
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Radius `R` (m); the centre starts at `z = R`, touching the floor `z = 0`.
    #[serde(default = "default_radius")]
    pub radius: f64,
    /// Initial velocity of the centre (m/s).
    #[serde(default = "default_v0")]
    pub v0: [f64; 3],
    /// Initial angular velocity (rad/s).
    #[serde(default)]
    pub omega0: [f64; 3],
    /// Friction coefficient.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Gravitational acceleration (m/s^2), along `-z`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Time step `h` (s).
    #[serde(default = "default_h")]
    pub h: f64,
    /// Simulated span (s); [`SphereConfig::steps`] turns it into a step count (the runner's
    /// `[scene] steps` decides how many steps a run takes).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// The contact stays in the problem while the gap is below this (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
}

impl Default for SphereConfig {
    fn default() -> Self {
        SphereConfig {
            mass: default_mass(),
            radius: default_radius(),
            v0: default_v0(),
            omega0: [0.0; 3],
            mu: default_mu(),
            gravity: default_gravity(),
            h: default_h(),
            duration: default_duration(),
            margin: default_margin(),
        }
    }
}

impl SphereConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors.
    pub fn from_table(params: &toml::Table) -> Result<SphereConfig, SceneError> {
        toml::Value::Table(params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SceneError::Parse(e.message().to_string()))
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        crate::params::check_ranges(
            &[
                ("mass", self.mass),
                ("radius", self.radius),
                ("h", self.h),
                ("duration", self.duration),
            ],
            &[
                ("mu", self.mu),
                ("gravity", self.gravity),
                ("margin", self.margin),
            ],
        )?;
        if self.v0.iter().any(|v| !v.is_finite()) {
            return bad("v0", format!("must be finite, got {:?}", self.v0));
        }
        if self.omega0.iter().any(|v| !v.is_finite()) {
            return bad("omega0", format!("must be finite, got {:?}", self.omega0));
        }
        Ok(())
    }

    /// `round(duration / h)`: the number of steps of the paper's span.
    pub fn steps(&self) -> usize {
        (self.duration / self.h).round() as usize
    }

    /// The moment of inertia of the solid sphere, `2 m R^2 / 5`.
    pub fn inertia(&self) -> f64 {
        0.4 * self.mass * self.radius * self.radius
    }
}

/// Trinkle's slide time for the paper's case (`v0` along `x`, no spin): `2 v0 / (7 mu g)`.
pub fn slide_time(v0: f64, mu: f64, gravity: f64) -> f64 {
    2.0 * v0 / (7.0 * mu * gravity)
}

/// The rolling speed after the slide for the paper's case (no initial spin): `5 v0 / 7`.
pub fn rolling_speed(v0: f64) -> f64 {
    5.0 * v0 / 7.0
}

/// The exact slide-then-roll motion of a sphere on a plane (see the module doc), for any
/// horizontal initial velocity and any initial spin.
#[derive(Debug, Clone, PartialEq)]
pub struct SlideRoll {
    /// Initial centre position.
    pub p0: Vector3<f64>,
    /// Initial centre velocity (horizontal).
    pub v0: Vector3<f64>,
    /// Initial angular velocity.
    pub omega0: Vector3<f64>,
    /// Unit direction of the initial slip (zero when the sphere starts rolling).
    pub slip_dir: Vector3<f64>,
    /// The time the slip ends (`inf` when `mu g = 0` and the sphere slips).
    pub t_star: f64,
    config: SphereConfig,
}

impl SlideRoll {
    /// The exact motion for `config`; errors when `v0` has a vertical part (the sphere would
    /// leave the plane and the closed form does not apply) or a parameter is out of range.
    pub fn new(config: &SphereConfig) -> Result<SlideRoll, SceneError> {
        config.validate()?;
        if config.v0[2] != 0.0 {
            return Err(SceneError::Param {
                key: "v0",
                message: format!(
                    "the closed form needs a horizontal v0, got v0_z = {}",
                    config.v0[2]
                ),
            });
        }
        let v0 = Vector3::from(config.v0);
        let omega0 = Vector3::from(config.omega0);
        let s0 = v0 + omega0.cross(&(-config.radius * Vector3::z()));
        let slip = s0.norm();
        let rate = (1.0 + config.mass * config.radius.powi(2) / config.inertia())
            * config.mu
            * config.gravity;
        let (slip_dir, t_star) = if slip == 0.0 {
            (Vector3::zeros(), 0.0)
        } else if rate == 0.0 {
            (s0 / slip, f64::INFINITY)
        } else {
            (s0 / slip, slip / rate)
        };
        Ok(SlideRoll {
            p0: Vector3::new(0.0, 0.0, config.radius),
            v0,
            omega0,
            slip_dir,
            t_star,
            config: config.clone(),
        })
    }

    /// The slide time `t*` (paper: `2 v0 / (7 mu g) = 0.291 s`).
    pub fn slide_time(&self) -> f64 {
        self.t_star
    }

    /// The sliding time elapsed by `t`: `min(t, t*)`, clamped at 0.
    fn sliding(&self, t: f64) -> f64 {
        t.clamp(0.0, self.t_star)
    }

    /// The centre's velocity at time `t`.
    pub fn velocity(&self, t: f64) -> Vector3<f64> {
        self.v0 - self.config.mu * self.config.gravity * self.sliding(t) * self.slip_dir
    }

    /// The angular velocity at time `t`.
    pub fn angular_velocity(&self, t: f64) -> Vector3<f64> {
        let c = &self.config;
        let alpha = c.mu * c.mass * c.gravity * c.radius / c.inertia();
        self.omega0 + alpha * self.sliding(t) * Vector3::z().cross(&self.slip_dir)
    }

    /// The centre's position at time `t`.
    pub fn position(&self, t: f64) -> Vector3<f64> {
        let ts = self.sliding(t);
        let slide = self.p0 + self.v0 * ts
            - 0.5 * self.config.mu * self.config.gravity * ts * ts * self.slip_dir;
        slide + self.velocity(t) * (t - ts).max(0.0)
    }

    /// The rolling velocity reached at `t*` (paper: `5 v0 / 7` along `x`).
    pub fn rolling_velocity(&self) -> Vector3<f64> {
        self.velocity(self.t_star)
    }

    /// The friction force on the sphere at time `t` (world axes): `-mu m g s/|s|` while
    /// sliding (`t < t*`), zero while rolling.
    pub fn friction_force(&self, t: f64) -> Vector3<f64> {
        if t < self.t_star {
            -self.config.mu * self.config.mass * self.config.gravity * self.slip_dir
        } else {
            Vector3::zeros()
        }
    }
}

/// The sphere on the plane: state and time stepping.
#[derive(Debug, Clone)]
pub struct SphereOnPlane {
    /// The parameters.
    pub config: SphereConfig,
    /// Centre position.
    pub p: Vector3<f64>,
    /// Centre velocity.
    pub v: Vector3<f64>,
    /// Angular velocity.
    pub w: Vector3<f64>,
    /// Simulated time (s).
    pub time: f64,
    /// The contact force of the last step in world axes (`J' r / h`, linear part).
    pub last_force: Vector3<f64>,
    /// Steps taken; the exact answer is evaluated at `steps h` (not at the summed `time`, so
    /// that it is the same number as a report's `(step + 1) h`).
    pub steps: usize,
    /// The exact motion, where the closed form applies (a horizontal `v0`).
    pub exact: Option<SlideRoll>,
}

impl SphereOnPlane {
    /// The paper's initial state for `config`: centre at `(0, 0, R)`, velocity `v0`, spin
    /// `omega0`.
    pub fn new(config: &SphereConfig) -> Result<SphereOnPlane, SceneError> {
        config.validate()?;
        Ok(SphereOnPlane {
            config: config.clone(),
            p: Vector3::new(0.0, 0.0, config.radius),
            v: Vector3::from(config.v0),
            w: Vector3::from(config.omega0),
            time: 0.0,
            last_force: Vector3::zeros(),
            steps: 0,
            exact: SlideRoll::new(config).ok(),
        })
    }

    /// The rows `[n, t1, t2]` of `J` for a contact of frame `frame` on a sphere of radius
    /// `radius` below it: `d` on `v`, `-R (n x d)` on `omega`.
    pub fn contact_jacobian(frame: &Matrix3<f64>, radius: f64) -> Matrix3x6<f64> {
        let n: Vector3<f64> = frame.row(0).transpose();
        let mut j = Matrix3x6::zeros();
        for r in 0..3 {
            let d: Vector3<f64> = frame.row(r).transpose();
            let ang = -radius * n.cross(&d);
            for c in 0..3 {
                j[(r, c)] = d[c];
                j[(r, 3 + c)] = ang[c];
            }
        }
        j
    }

    /// The gap between the sphere and the floor.
    pub fn gap(&self) -> f64 {
        self.p.z - self.config.radius
    }

    /// The floor contact when the gap is below the margin.
    pub fn contacts(&self) -> Vec<Contact> {
        let gap = self.gap();
        if gap < self.config.margin {
            vec![Contact {
                key: ContactKey::Wall { ball: 0, wall: 0 },
                frame: contact_frame(Vector3::z()),
                gap,
            }]
        } else {
            Vec::new()
        }
    }

    /// The velocity of the touching point `p - R e_z` (world axes): the slip velocity.
    pub fn slip_velocity(&self) -> Vector3<f64> {
        self.v + self.w.cross(&(-self.config.radius * Vector3::z()))
    }

    /// `M^-1` as a diagonal.
    fn inverse_mass(&self) -> Vector6<f64> {
        let (im, ii) = (1.0 / self.config.mass, 1.0 / self.config.inertia());
        Vector6::new(im, im, im, ii, ii, ii)
    }

    /// The velocities `[v, omega]` after gravity alone (`M^-1 c`).
    fn free_velocity(&self) -> Vector6<f64> {
        let v = self.v - self.config.h * self.config.gravity * Vector3::z();
        Vector6::new(v.x, v.y, v.z, self.w.x, self.w.y, self.w.z)
    }

    /// This step's contact problem: `W = J M^-1 J'`, `q = J c`, no bias.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let contacts = self.contacts();
        let free = self.free_velocity();
        let nc = contacts.len();
        let mut w = Mat::<f64>::zeros(3 * nc, 3 * nc);
        let mut q = vec![0.0; 3 * nc];
        let inv = self.inverse_mass();
        for (ci, c) in contacts.iter().enumerate() {
            let j = Self::contact_jacobian(&c.frame, self.config.radius);
            let jm = j * nalgebra::Matrix6::from_diagonal(&inv);
            let block = jm * j.transpose();
            let qc = j * free;
            for r in 0..3 {
                q[3 * ci + r] = qc[r];
                for s in 0..3 {
                    // Exactly symmetric: average the two products of the same numbers.
                    w[(3 * ci + r, 3 * ci + s)] = 0.5 * (block[(r, s)] + block[(s, r)]);
                }
            }
        }
        let problem = LocalProblem::new(Matrix::Dense(w), q, vec![self.config.mu; nc])?;
        let generalized = self.generalized(&contacts, &free)?;
        Ok(ContactStep {
            contacts,
            problem: StepProblem::with_local(generalized, problem),
            free: free.iter().copied().collect(),
        })
    }

    /// The same step in generalized velocities `[v, omega]` (for SAP), see [`one_body`].
    fn generalized(
        &self,
        contacts: &[Contact],
        free: &Vector6<f64>,
    ) -> Result<GeneralizedProblem, SceneError> {
        let body: Vec<BodyContact> = contacts
            .iter()
            .map(|c| BodyContact {
                jacobian: Self::contact_jacobian(&c.frame, self.config.radius),
                gap: c.gap,
            })
            .collect();
        let velocity = Vector6::new(self.v.x, self.v.y, self.v.z, self.w.x, self.w.y, self.w.z);
        let (m, i) = (self.config.mass, self.config.inertia());
        one_body::problem(
            [m, i],
            &body,
            free,
            self.config.mu,
            self.config.h,
            &velocity,
            Gap::Touching,
        )
    }

    /// Applies the impulses `r` (normal first, the step's frame) and moves the sphere:
    /// `[v, omega] = c + M^-1 J' r`, `p += h v`.
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        step.check_impulses(r, Some(6))?;
        let mut vel = Vector6::from_column_slice(&step.free);
        let inv = self.inverse_mass();
        let mut impulse = Vector6::zeros();
        for (ci, c) in step.contacts.iter().enumerate() {
            let j = Self::contact_jacobian(&c.frame, self.config.radius);
            impulse += j.transpose() * Vector3::new(r[3 * ci], r[3 * ci + 1], r[3 * ci + 2]);
        }
        vel += impulse.component_mul(&inv);
        self.v = Vector3::new(vel[0], vel[1], vel[2]);
        self.w = Vector3::new(vel[3], vel[4], vel[5]);
        self.last_force = Vector3::new(impulse[0], impulse[1], impulse[2]) / self.config.h;
        self.p += self.config.h * self.v;
        self.time += self.config.h;
        self.steps += 1;
        Ok(())
    }

    /// `m |v|^2 / 2 + I |omega|^2 / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.config.mass * self.v.norm_squared()
            + 0.5 * self.config.inertia() * self.w.norm_squared()
    }
}

impl Scene for SphereOnPlane {
    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        SphereOnPlane::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        SphereOnPlane::advance(self, step, r)
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let t = self.steps as f64 * self.config.h;
        let (exact_v, exact_w) = self.exact.as_ref().map_or(
            (Vector3::repeat(f64::NAN), Vector3::repeat(f64::NAN)),
            |e| (e.velocity(t), e.angular_velocity(t)),
        );
        vec![
            ("x", self.p.x),
            ("y", self.p.y),
            ("z", self.p.z - self.config.radius),
            ("vx", self.v.x),
            ("vy", self.v.y),
            ("vz", self.v.z),
            ("omega_x", self.w.x),
            ("omega_y", self.w.y),
            ("omega_z", self.w.z),
            ("kinetic_energy", self.kinetic_energy()),
            ("force_x", self.last_force.x),
            ("force_y", self.last_force.y),
            ("force_z", self.last_force.z),
            ("vx_exact", exact_v.x),
            ("vy_exact", exact_v.y),
            ("omega_x_exact", exact_w.x),
            ("omega_y_exact", exact_w.y),
        ]
    }

    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    /// `slide_time_exact`, `rolling_speed_exact`, `friction_exact` where the closed form
    /// applies, and `w_tangent` (see the module documentation).
    fn constants(&self) -> Vec<(&'static str, f64)> {
        let c = &self.config;
        let mut out = Vec::new();
        if let Some(e) = &self.exact {
            out.extend([
                ("slide_time_exact", e.slide_time()),
                ("rolling_speed_exact", e.rolling_velocity().norm()),
                ("friction_exact", c.mu * c.mass * c.gravity),
            ]);
        }
        out.push((
            "w_tangent",
            1.0 / c.mass + c.radius * c.radius / c.inertia(),
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestSolver;
    use approx::assert_relative_eq;

    #[test]
    fn the_frame_puts_the_motion_along_minus_t2() {
        let f = contact_frame(Vector3::z());
        assert_relative_eq!(f.row(0).transpose(), Vector3::z());
        assert_relative_eq!(f.row(1).transpose(), Vector3::y());
        assert_relative_eq!(f.row(2).transpose(), -Vector3::x());
    }

    #[test]
    fn jacobian_rows_give_the_contact_point_velocity() {
        let mut s = SphereOnPlane::new(&SphereConfig {
            radius: 0.7,
            ..SphereConfig::default()
        })
        .unwrap();
        s.v = Vector3::new(0.3, -1.2, 0.05);
        s.w = Vector3::new(2.0, -0.4, 1.5);
        let cs = s.contact_step().unwrap();
        assert_eq!(cs.contacts.len(), 1);
        let c = &cs.contacts[0];
        let j = SphereOnPlane::contact_jacobian(&c.frame, 0.7);
        let got = j * Vector6::new(s.v.x, s.v.y, s.v.z, s.w.x, s.w.y, s.w.z);
        let point = s.v + s.w.cross(&(-0.7 * Vector3::z()));
        assert_relative_eq!(got, c.frame * point, epsilon = 1e-14);
        // q is the contact velocity of the free motion; W is J M^-1 J'.
        let free = Vector6::from_column_slice(&cs.free);
        let q = j * free;
        for r in 0..3 {
            assert_relative_eq!(cs.problem.local().unwrap().q[r], q[r], epsilon = 1e-14);
        }
        let m = nalgebra::Matrix6::from_diagonal(&s.inverse_mass());
        let w = j * m * j.transpose();
        let wd = cs.problem.local().unwrap().dense_w();
        for r in 0..3 {
            for k in 0..3 {
                assert_relative_eq!(wd[(r, k)], w[(r, k)], epsilon = 1e-14);
                assert_eq!(wd[(r, k)], wd[(k, r)]);
            }
        }
    }

    #[test]
    fn exact_solution_matches_the_paper() {
        let c = SphereConfig::default();
        let e = SlideRoll::new(&c).unwrap();
        assert_relative_eq!(e.slide_time(), 4.0 / (7.0 * 0.2 * 9.81), epsilon = 1e-15);
        assert_relative_eq!(e.slide_time(), slide_time(2.0, 0.2, 9.81), epsilon = 1e-15);
        assert!((e.slide_time() - 0.291).abs() < 5e-4);
        assert_relative_eq!(
            e.rolling_velocity(),
            Vector3::new(rolling_speed(2.0), 0.0, 0.0),
            epsilon = 1e-14
        );
        assert!((rolling_speed(2.0) - 1.429).abs() < 5e-4);
        // Rolling: the touching point is at rest, omega_y = v_x / R.
        let t = 0.5;
        assert_relative_eq!(
            e.angular_velocity(t).y,
            e.velocity(t).x / c.radius,
            epsilon = 1e-14
        );
        assert_relative_eq!(
            e.friction_force(0.1),
            Vector3::new(-0.2 * 9.81, 0.0, 0.0),
            epsilon = 1e-14
        );
        assert_eq!(e.friction_force(0.3), Vector3::zeros());
        // Position is the integral of velocity.
        let d = 1e-6;
        for t in [0.1, 0.4] {
            assert_relative_eq!(
                (e.position(t + d) - e.position(t - d)) / (2.0 * d),
                e.velocity(t),
                epsilon = 1e-8
            );
        }
        assert!(SlideRoll::new(&SphereConfig {
            v0: [1.0, 0.0, 0.5],
            ..c
        })
        .unwrap_err()
        .to_string()
        .contains("`v0`"));
    }

    /// The exact answer as data: the observables at the step's end `steps h` and the constants,
    /// the very numbers of [`SlideRoll`]; the parameters are the config with its defaults.
    #[test]
    fn the_exact_answer_is_recorded_as_observables_and_constants() {
        let cfg = SphereConfig {
            v0: [1.5, 0.5, 0.0],
            omega0: [0.0, 0.0, 2.0],
            ..SphereConfig::default()
        };
        let exact = SlideRoll::new(&cfg).unwrap();
        let mut s = SphereOnPlane::new(&cfg).unwrap();
        for _ in 0..3 {
            let cs = s.contact_step().unwrap();
            s.advance(&cs, &[0.0; 3]).unwrap();
        }
        let obs = s.observables();
        let get = |name: &str| obs.iter().find(|o| o.0 == name).unwrap().1;
        let (v, w) = (
            exact.velocity(3.0 * cfg.h),
            exact.angular_velocity(3.0 * cfg.h),
        );
        assert_eq!(
            [
                get("vx_exact"),
                get("vy_exact"),
                get("omega_x_exact"),
                get("omega_y_exact")
            ],
            [v.x, v.y, w.x, w.y]
        );
        assert!(get("vy_exact") > 0.0 && get("omega_x_exact") < 0.0);
        let c: Vec<(&str, f64)> = s.constants();
        assert_eq!(
            c,
            [
                ("slide_time_exact", exact.slide_time()),
                ("rolling_speed_exact", exact.rolling_velocity().norm()),
                ("friction_exact", 0.2 * 9.81),
                ("w_tangent", 3.5),
            ]
        );
        let p = s.parameters().unwrap();
        assert_eq!(SphereConfig::from_table(&p).unwrap(), cfg);
        assert_eq!(p["h"].as_float(), Some(0.001));
        assert_eq!(p.len(), 9, "every field, defaults included: {p:?}");
    }

    /// Simulates the paper's run with `spec`; returns (slide time, rolling speed, max hop,
    /// max |v_y| + |omega_x|).
    fn simulate(spec: &TestSolver) -> (f64, f64, f64, f64) {
        let cfg = SphereConfig::default();
        let mut s = SphereOnPlane::new(&cfg).unwrap();
        let mut slide_end = None;
        let mut hop: f64 = 0.0;
        let mut lateral: f64 = 0.0;
        for _ in 0..cfg.steps() {
            let cs = s.contact_step().unwrap();
            assert_eq!(
                cs.contacts.len(),
                1,
                "the contact stays in the problem at t = {}",
                s.time
            );
            let sol = spec.solve(&cs.problem, None);
            assert!(
                sol.metrics.natural_map <= 1e-10,
                "{} at t = {}: {:?}",
                spec.name(),
                s.time,
                sol.status
            );
            s.advance(&cs, &sol.r).unwrap();
            hop = hop.max((s.p.z - cfg.radius).abs());
            lateral = lateral.max(s.v.y.abs() + s.w.x.abs());
            if slide_end.is_none() && s.slip_velocity().norm() < 1e-9 {
                slide_end = Some(s.time);
            }
            if slide_end.is_none() {
                // While sliding the friction is mu m g, against the motion.
                assert_relative_eq!(
                    s.last_force.x,
                    -cfg.mu * cfg.mass * cfg.gravity,
                    epsilon = 1e-8
                );
            }
        }
        (
            slide_end.expect("the sphere stops slipping"),
            s.v.x,
            hop,
            lateral,
        )
    }

    #[test]
    fn exact_solvers_reproduce_the_slide_and_roll() {
        let exact = SlideRoll::new(&SphereConfig::default()).unwrap();
        for spec in [
            TestSolver::new("implicit-ncp", "todorov", 1e-12, 100),
            TestSolver::new("coulomb", "pgs", 1e-12, 100),
        ] {
            let (t_slide, v_roll, hop, lateral) = simulate(&spec);
            eprintln!("{}: slide {t_slide:.4} s, roll {v_roll:.6} m/s, hop {hop:.3e}, lateral {lateral:.3e}", spec.name());
            assert!(
                (t_slide - exact.slide_time()).abs() <= 2e-3,
                "{}: {t_slide}",
                spec.name()
            );
            assert!((t_slide - 0.291).abs() <= 2e-3);
            assert!(
                (v_roll - 1.429).abs() <= 0.005 * 1.429,
                "{}: {v_roll}",
                spec.name()
            );
            assert!(
                (v_roll - exact.rolling_velocity().x).abs() <= 1e-8,
                "{}: {v_roll}",
                spec.name()
            );
            assert!(hop < 1e-9, "{}: hop {hop}", spec.name());
            assert!(lateral < 1e-9, "{}: lateral {lateral}", spec.name());
        }
    }

    #[test]
    fn bad_parameters_are_named_and_unknown_keys_rejected() {
        let parse = |s: &str| SphereConfig::from_table(&s.parse::<toml::Table>().unwrap());
        let e = parse("mu = 0.3\nspin = 1.0").unwrap_err().to_string();
        assert!(e.contains("spin"), "{e}");
        assert_eq!(parse("v0 = [1.0, 0.5, 0.0]").unwrap().v0, [1.0, 0.5, 0.0]);
        for (text, key) in [
            ("mu = -0.1", "`mu`"),
            ("h = 0.0", "`h`"),
            ("radius = -1.0", "`radius`"),
            ("mass = 0.0", "`mass`"),
            ("gravity = -9.81", "`gravity`"),
            ("margin = -1.0", "`margin`"),
            ("duration = 0.0", "`duration`"),
            ("v0 = [1.0, nan, 0.0]", "`v0`"),
            ("omega0 = [inf, 0.0, 0.0]", "`omega0`"),
        ] {
            let e = parse(text).unwrap().validate().unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        let mut s = SphereOnPlane::new(&SphereConfig::default()).unwrap();
        let cs = s.contact_step().unwrap();
        assert!(s
            .advance(&cs, &[1.0])
            .unwrap_err()
            .to_string()
            .contains("expected 3"));
        assert!(s.advance(&cs, &[f64::NAN, 0.0, 0.0]).is_err());
    }

    #[test]
    fn a_lifted_sphere_falls_freely() {
        let cfg = SphereConfig {
            v0: [0.0, 0.0, 1.0],
            ..SphereConfig::default()
        };
        let mut s = SphereOnPlane::new(&cfg).unwrap();
        s.p.z = 2.0;
        let cs = s.contact_step().unwrap();
        assert!(cs.contacts.is_empty());
        s.advance(&cs, &[]).unwrap();
        assert_relative_eq!(s.v.z, 1.0 - cfg.h * cfg.gravity, epsilon = 1e-15);
        assert_eq!(s.observables().len(), 17);
        // A vertical v0: no closed form, so no exact answer.
        let get = |name: &str| s.observables().iter().find(|o| o.0 == name).unwrap().1;
        assert!(get("vx_exact").is_nan() && get("omega_y_exact").is_nan());
        assert_eq!(
            s.constants().iter().map(|c| c.0).collect::<Vec<_>>(),
            ["w_tangent"]
        );
    }
}
