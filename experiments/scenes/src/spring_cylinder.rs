//! The spring-cylinder of Castro, Permenter and Han (section VI-B, Figs. 4-7): a cylinder on
//! the ground tied to a wall by a linear spring, stepped with the two-stage theta-method
//! ([`super::theta`], section II-D) and compliant contact; the exact answer alongside.
//!
//! # The system
//!
//! A cylinder of radius `R = 0.05 m` and mass `m = 0.5 kg` (`I = m R^2 / 2`) lies on the
//! ground `y = 0`, gravity `g` along `-y`; a spring of stiffness `k_s = 100 N/m` pulls its
//! centre towards `x = 0` (the spring's rest position). Contact stiffness `k = 1e4 N/m`,
//! dissipation time scale `tau_d = 0.02 s`, released at rest from `x0 = 0.1 m`, `dt = 0.02
//! s`, 5 s (the defaults of [`SpringCylinderConfig`] are the paper's; `mu = 0` and `mu = 1`
//! are its two cases).
//!
//! **A planar model.** Coordinates `q = [x, y, angle]` (centre, rotation about `+z`),
//! velocities `v = [v_x, v_y, omega]`, `N = I`, `M = diag(m, m, I)`, forces
//! `k(q) = [-k_s x, -m g, 0]`. The spring is the `k1` of eqs. 15-17: `K = diag(k_s, 0, 0)`,
//! `D = 0`, so `A = M + dt^2 theta theta_vq K` (gravity, constant, is `k2`). The paper's
//! cylinder "is free to rotate and translate in the plane"; nothing acts out of the plane,
//! so a 3D body would add three velocities that stay zero and an axial inertia (a length)
//! the paper does not give.
//!
//! # The contact
//!
//! One contact, the cylinder against the ground (`ContactKey::Wall { ball: 0, wall: 0 }`),
//! at every step: the ground is a line under the cylinder, the nearest point is always the
//! bottom `(x, y - R)`, and the compliant law itself switches the force off when the gap
//! opens. Frame rows `[n, t1, t2] = [+y, +x, -z]` (right-handed, normal first), `J` (at
//! `q0`; here it does not depend on `q`):
//!
//! ```text
//!        v_x  v_y  omega
//! n   [  0    1    0 ]     normal velocity v_y
//! t1  [  1    0    R ]     slip of the touching point, v_x + R omega
//! t2  [  0    0    0 ]     out of the plane: a zero row (see below)
//! ```
//!
//! The third row is zero because the planar model has no out-of-plane velocity: its impulse
//! does nothing and every solver returns zero for it (SAP: `y_t2 = 0`; a rigid Coulomb solver:
//! a decoupled row with `q = 0`). `phi0 = y - R` at `q0`, `b = 0`; the contact's model is
//! `(mu, phi0, k, tau_d)`, and rigid contact-space solvers, which ignore `phi0`, see a
//! touching contact (the cylinder never leaves the ground).
//!
//! **Initial height.** The paper does not give it; the cylinder starts at the static
//! equilibrium of the compliant contact, `y0 = R - m g / k` (`phi0 = -0.49 mm`), where SAP's
//! compliant impulse `dt k (-phi0 - (dt + tau_d) v_n)` balances gravity's `dt m g` with
//! `v_n = 0`, so the normal direction is at rest from the first step instead of ringing.
//!
//! # Energy
//!
//! `energy = kinetic + spring + vertical`: `kinetic = m (v_x^2 + v_y^2) / 2 + I omega^2 / 2`,
//! `spring = k_s x^2 / 2`, and `vertical` = gravity's `m g y` plus the contact's elastic
//! energy `k min(phi, 0)^2 / 2`, both measured from the static equilibrium `y_eq = R - m g /
//! k` (in contact, `vertical = k (y - y_eq)^2 / 2`). The contact's dissipation (`tau_d`) and
//! SAP's regularised friction are not potentials: they take energy out, as the paper's
//! Fig. 6 shows. With this reference the cylinder at rest at `x = 0` has zero energy and
//! the initial energy is `k_s x0^2 / 2 = 0.5 J`, so relative bands are relative to the
//! oscillator's energy, as in the paper (symplectic Euler's band is `dt w` wide, 28% at
//! `dt w = 0.283`).
//!
//! # The exact answer (section VI-B)
//!
//! [`SpringCylinderExact`]: with `mu = 0` the cylinder does not turn and `x(t) = x0 cos(w t)`,
//! `w = sqrt(k_s / m)` (22.2 steps of 0.02 s per period); rolling without slip, the effective
//! mass is `m + I / R^2 = 1.5 m` and `w = sqrt(k_s / (1.5 m))` (27.2 steps per period). Rolling
//! needs the friction force `k_s x / 3` at most `mu m g`: `mu >= k_s x0 / (3 m g) = 0.68`
//! ([`rolling_friction_threshold`]); between 0 and that there is no closed form. The
//! position error of section VI-B, `e_q = (1/T int_0^T (x - x_e)^2 dt)^(1/2)`, is computed by
//! the Castro report's analysis (`contactlab_report::analysis::castro2022::position_error`)
//! over the step samples of `x` and `x_exact`, and its order of accuracy is the slope of
//! `log e_q` against `log dt`.
//!
//! # Observables
//!
//! `x`, `phi` (signed distance `y - R`), `angle`, `vx`, `vy`, `omega`, `slip` (`v_x + R omega`,
//! the touching point's velocity), `energy`, `relative_energy` (`energy` over its value at
//! `t = 0`, what Figs. 5-6 plot), `kinetic_energy`, `spring_energy`, `vertical_energy` (module
//! doc above), `normal_force` and `friction_force` (the last step's impulses over `dt`, along
//! `+y` and `+x`), `x_exact` (`NaN` where there is no closed form) and `time` (`steps * dt`).
//!
//! # Run length
//!
//! The scene ends its run after `round(duration / dt)` steps ([`Scene::finished`]), so one
//! config can sweep `dt` over the same simulated span: `[scene] steps` is then an upper bound
//! that must cover the smallest `dt`.

use contactlab_core::ContactModel;
use nalgebra::{DMatrix, DVector, Matrix3};
use serde::{Deserialize, Serialize};

use super::theta::{self, FreeMotion, Scheme, Theta, ThetaError, ThetaOptions, ThetaSystem};
use crate::error::SceneError;
use crate::scene::{Contact, ContactKey, ContactStep, Scene};

fn default_scheme() -> Scheme {
    Scheme::Midpoint
}
fn default_dt() -> f64 {
    0.02
}
fn default_radius() -> f64 {
    0.05
}
fn default_mass() -> f64 {
    0.5
}
fn default_spring_stiffness() -> f64 {
    100.0
}
fn default_contact_stiffness() -> f64 {
    1e4
}
fn default_dissipation() -> f64 {
    0.02
}
fn default_x0() -> f64 {
    0.1
}
fn default_gravity() -> f64 {
    9.81
}
fn default_duration() -> f64 {
    5.0
}

/// The spring-cylinder parameters (`[scene.params]`); the defaults are the paper's, with
/// `mu = 0` (its reference case) and the midpoint rule.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SpringCylinderConfig {
    /// The theta-method scheme: `"symplectic_euler"`, `"implicit_euler"`, `"midpoint"` (or
    /// `"explicit_euler"`, which the paper lists but does not run: it gains energy).
    #[serde(default = "default_scheme")]
    pub scheme: Scheme,
    /// Friction coefficient (paper: 0 and 1).
    #[serde(default)]
    pub mu: f64,
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Cylinder radius `R` (m).
    #[serde(default = "default_radius")]
    pub radius: f64,
    /// Cylinder mass `m` (kg).
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Wall spring stiffness `k_s` (N/m).
    #[serde(default = "default_spring_stiffness")]
    pub spring_stiffness: f64,
    /// Contact stiffness `k` (N/m).
    #[serde(default = "default_contact_stiffness")]
    pub contact_stiffness: f64,
    /// Contact dissipation time scale `tau_d` (s).
    #[serde(default = "default_dissipation")]
    pub dissipation: f64,
    /// Initial displacement from the spring's rest position (m).
    #[serde(default = "default_x0")]
    pub x0: f64,
    /// Gravitational acceleration (m/s^2), along `-y`.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Simulated span (s); [`SpringCylinderConfig::steps`] turns it into the step count after
    /// which the scene says it is finished (the runner's `[scene] steps` caps it).
    #[serde(default = "default_duration")]
    pub duration: f64,
}

impl Default for SpringCylinderConfig {
    fn default() -> Self {
        SpringCylinderConfig {
            scheme: default_scheme(),
            mu: 0.0,
            dt: default_dt(),
            radius: default_radius(),
            mass: default_mass(),
            spring_stiffness: default_spring_stiffness(),
            contact_stiffness: default_contact_stiffness(),
            dissipation: default_dissipation(),
            x0: default_x0(),
            gravity: default_gravity(),
            duration: default_duration(),
        }
    }
}

impl SpringCylinderConfig {
    /// Parses a `[scene.params]` table; an unknown key or a bad value is an error naming the
    /// key.
    pub fn from_table(params: &toml::Table) -> Result<SpringCylinderConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        crate::params::check_ranges(
            &[
                ("dt", self.dt),
                ("radius", self.radius),
                ("mass", self.mass),
                ("spring_stiffness", self.spring_stiffness),
                ("contact_stiffness", self.contact_stiffness),
                ("duration", self.duration),
            ],
            &[
                ("mu", self.mu),
                ("dissipation", self.dissipation),
                ("gravity", self.gravity),
            ],
        )?;
        if !self.x0.is_finite() {
            return Err(SceneError::Param {
                key: "x0",
                message: format!("must be finite, got {}", self.x0),
            });
        }
        if self.steps() == 0 {
            return Err(SceneError::Param {
                key: "duration",
                message: format!(
                    "must be at least half a time step (dt = {}), got {}",
                    self.dt, self.duration
                ),
            });
        }
        Ok(())
    }

    /// `round(duration / dt)`: the number of steps of the simulated span.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The moment of inertia about the axis, `m R^2 / 2`.
    pub fn inertia(&self) -> f64 {
        0.5 * self.mass * self.radius * self.radius
    }

    /// The signed distance at the compliant contact's static equilibrium, `-m g / k`.
    pub fn equilibrium_phi(&self) -> f64 {
        -self.mass * self.gravity / self.contact_stiffness
    }
}

/// The smallest friction coefficient with which the cylinder rolls without slipping all the
/// way: the rolling motion needs the friction force `k_s x I / (R^2 m + I)` (`k_s x / 3` for
/// a solid cylinder), at most `mu m g`, at `x = x0`.
pub fn rolling_friction_threshold(cfg: &SpringCylinderConfig) -> f64 {
    let ir2 = cfg.inertia() / (cfg.radius * cfg.radius);
    cfg.spring_stiffness * cfg.x0.abs() * ir2 / ((cfg.mass + ir2) * cfg.mass * cfg.gravity)
}

/// The exact motion of section VI-B: a spring-mass oscillator, frictionless or rolling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringCylinderExact {
    /// Initial displacement.
    pub x0: f64,
    /// Angular frequency `w`.
    pub omega: f64,
    /// Whether the cylinder rolls (else it slides without turning).
    pub rolling: bool,
    /// The radius (rolling: `omega_cylinder = -v_x / R`).
    pub radius: f64,
    /// The oscillator's energy, `k_s x0^2 / 2`.
    pub energy: f64,
}

impl SpringCylinderExact {
    /// The frictionless motion, `w = sqrt(k_s / m)`, whatever `cfg.mu`.
    pub fn frictionless(cfg: &SpringCylinderConfig) -> SpringCylinderExact {
        SpringCylinderExact {
            x0: cfg.x0,
            omega: (cfg.spring_stiffness / cfg.mass).sqrt(),
            rolling: false,
            radius: cfg.radius,
            energy: 0.5 * cfg.spring_stiffness * cfg.x0 * cfg.x0,
        }
    }

    /// The rolling motion, `w = sqrt(k_s / (m + I / R^2))`, whatever `cfg.mu`.
    pub fn rolling(cfg: &SpringCylinderConfig) -> SpringCylinderExact {
        let m_eff = cfg.mass + cfg.inertia() / (cfg.radius * cfg.radius);
        SpringCylinderExact {
            omega: (cfg.spring_stiffness / m_eff).sqrt(),
            rolling: true,
            ..SpringCylinderExact::frictionless(cfg)
        }
    }

    /// The motion `cfg` produces: frictionless for `mu = 0`, rolling for `mu` at least
    /// [`rolling_friction_threshold`]; in between (stick-slip) there is no closed form and the
    /// error names `mu`.
    pub fn new(cfg: &SpringCylinderConfig) -> Result<SpringCylinderExact, SceneError> {
        cfg.validate()?;
        let threshold = rolling_friction_threshold(cfg);
        if cfg.mu == 0.0 {
            Ok(SpringCylinderExact::frictionless(cfg))
        } else if cfg.mu >= threshold {
            Ok(SpringCylinderExact::rolling(cfg))
        } else {
            Err(SceneError::Param {
                key: "mu",
                message: format!(
                    "no closed form for 0 < mu < {threshold:.4} (the cylinder slips while it rolls); got {}",
                    cfg.mu
                ),
            })
        }
    }

    /// `x(t) = x0 cos(w t)`.
    pub fn position(&self, t: f64) -> f64 {
        self.x0 * (self.omega * t).cos()
    }

    /// `v_x(t) = -x0 w sin(w t)`.
    pub fn velocity(&self, t: f64) -> f64 {
        -self.x0 * self.omega * (self.omega * t).sin()
    }

    /// The cylinder's angular velocity: `-v_x / R` rolling, 0 sliding.
    pub fn angular_velocity(&self, t: f64) -> f64 {
        if self.rolling {
            -self.velocity(t) / self.radius
        } else {
            0.0
        }
    }

    /// The period `2 pi / w`.
    pub fn period(&self) -> f64 {
        2.0 * std::f64::consts::PI / self.omega
    }
}

/// The cylinder's dynamics as a [`ThetaSystem`]: `M = diag(m, m, I)`, `N = I`,
/// `k = [-k_s x, -m g, 0]`, `K = diag(k_s, 0, 0)`, `D = 0`, one kinematic tree.
#[derive(Debug, Clone, PartialEq)]
pub struct CylinderDynamics {
    /// Mass `m`.
    pub mass: f64,
    /// Moment of inertia `I`.
    pub inertia: f64,
    /// Spring stiffness `k_s`.
    pub spring_stiffness: f64,
    /// Gravity `g`.
    pub gravity: f64,
}

impl CylinderDynamics {
    /// The dynamics of `cfg`.
    pub fn new(cfg: &SpringCylinderConfig) -> CylinderDynamics {
        CylinderDynamics {
            mass: cfg.mass,
            inertia: cfg.inertia(),
            spring_stiffness: cfg.spring_stiffness,
            gravity: cfg.gravity,
        }
    }
}

impl ThetaSystem for CylinderDynamics {
    fn num_positions(&self) -> usize {
        3
    }

    fn num_velocities(&self) -> usize {
        3
    }

    fn mass_matrix(&self, _q: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::from_diagonal(&DVector::from_vec(vec![self.mass, self.mass, self.inertia]))
    }

    fn velocity_map(&self, _q: &DVector<f64>) -> DMatrix<f64> {
        DMatrix::identity(3, 3)
    }

    fn forces(&self, q: &DVector<f64>, _v: &DVector<f64>) -> DVector<f64> {
        DVector::from_vec(vec![
            -self.spring_stiffness * q[0],
            -self.mass * self.gravity,
            0.0,
        ])
    }

    fn stiffness_damping(
        &self,
        _q: &DVector<f64>,
        _v: &DVector<f64>,
    ) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut k = DMatrix::zeros(3, 3);
        k[(0, 0)] = self.spring_stiffness;
        (k, DMatrix::zeros(3, 3))
    }

    fn trees(&self) -> Option<Vec<usize>> {
        Some(vec![0; 3])
    }
}

fn theta_err(e: ThetaError) -> SceneError {
    match e {
        ThetaError::Parameter { name, value } => SceneError::Param {
            key: name,
            message: format!("must be in [0, 1], got {value}"),
        },
        ThetaError::UnknownScheme(name) => SceneError::Param {
            key: "scheme",
            message: format!("unknown scheme `{name}`"),
        },
        ThetaError::TimeStep(dt) => SceneError::Param {
            key: "dt",
            message: format!("must be positive and finite, got {dt}"),
        },
        ThetaError::NonFinite(what) => SceneError::NonFinite(what),
        ThetaError::Core(contactlab_core::CoreError::Problem(p)) => SceneError::Problem(p),
        // Newton or the position fixed point failed, or A lost definiteness: the time step is
        // what a user can change.
        other => SceneError::Param {
            key: "dt",
            message: other.to_string(),
        },
    }
}

/// The spring-cylinder: state and time stepping.
#[derive(Debug, Clone)]
pub struct SpringCylinder {
    /// The parameters.
    pub config: SpringCylinderConfig,
    /// The scheme's `theta`, `theta_vq`.
    pub theta: Theta,
    /// `[x, y, angle]`.
    pub q: DVector<f64>,
    /// `[v_x, v_y, omega]`.
    pub v: DVector<f64>,
    /// Steps taken.
    pub steps_taken: usize,
    /// The last step's contact impulse `[normal, tangent along +x, out of plane]`.
    pub last_impulse: [f64; 3],
    /// Stage 1's stopping rule.
    pub options: ThetaOptions,
    /// The total mechanical energy at `t = 0` (the reference of `relative_energy`).
    pub initial_energy: f64,
    dynamics: CylinderDynamics,
    exact: Option<SpringCylinderExact>,
}

impl SpringCylinder {
    /// The initial state: at rest, `x = x0`, at the compliant contact's static equilibrium
    /// height `y = R - m g / k`, unrotated.
    pub fn new(config: &SpringCylinderConfig) -> Result<SpringCylinder, SceneError> {
        config.validate()?;
        let mut scene = SpringCylinder {
            config: config.clone(),
            theta: config.scheme.theta(),
            q: DVector::from_vec(vec![
                config.x0,
                config.radius + config.equilibrium_phi(),
                0.0,
            ]),
            v: DVector::zeros(3),
            steps_taken: 0,
            last_impulse: [0.0; 3],
            options: ThetaOptions::default(),
            initial_energy: 0.0,
            dynamics: CylinderDynamics::new(config),
            exact: SpringCylinderExact::new(config).ok(),
        };
        scene.initial_energy = scene.energy();
        Ok(scene)
    }

    /// Simulated time, `steps_taken * dt` (s).
    pub fn time(&self) -> f64 {
        self.steps_taken as f64 * self.config.dt
    }

    /// `energy / initial_energy` (`NaN` when the initial energy is zero: `x0 = 0`).
    pub fn relative_energy(&self) -> f64 {
        if self.initial_energy > 0.0 {
            self.energy() / self.initial_energy
        } else {
            f64::NAN
        }
    }

    /// The contact frame, rows `[n, t1, t2] = [+y, +x, -z]`.
    pub fn frame() -> Matrix3<f64> {
        Matrix3::new(0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0)
    }

    /// The contact Jacobian (the same at every configuration): rows `n`, `t1`, `t2` of the
    /// module doc.
    pub fn jacobian(&self) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(3, 3);
        j[(0, 1)] = 1.0;
        j[(1, 0)] = 1.0;
        j[(1, 2)] = self.config.radius;
        j
    }

    /// The signed distance to the ground, `y - R`.
    pub fn phi(&self) -> f64 {
        self.q[1] - self.config.radius
    }

    /// The touching point's velocity along `+x`, `v_x + R omega`.
    pub fn slip_velocity(&self) -> f64 {
        self.v[0] + self.config.radius * self.v[2]
    }

    /// Stage 1 of this step (free motion and `A`).
    pub fn free_motion(&self) -> Result<FreeMotion, SceneError> {
        theta::free_motion(
            &self.dynamics,
            self.theta,
            self.config.dt,
            &self.q,
            &self.v,
            &self.options,
        )
        .map_err(theta_err)
    }

    /// This step's contact problem: stage 1, then eq. 18 with `J(q0)` and `phi0 = phi(q0)`.
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let fm = self.free_motion()?;
        let c = &self.config;
        let model = ContactModel {
            mu: c.mu,
            phi0: self.phi(),
            stiffness: c.contact_stiffness,
            dissipation: c.dissipation,
        };
        let problem = fm
            .contact_problem(&self.jacobian(), vec![model])
            .map_err(theta_err)?;
        Ok(ContactStep {
            contacts: vec![Contact {
                key: ContactKey::Wall { ball: 0, wall: 0 },
                frame: Self::frame(),
                gap: self.phi(),
            }],
            problem: problem.into(),
            free: fm.v_star.iter().copied().collect(),
        })
    }

    /// Applies the impulses `r` (normal first, the step's frame): `v = v* + A^-1 J' r`
    /// (eq. 18), then `q = q0 + dt N v_theta_vq` (eqs. 11-12).
    pub fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let nc = step.contacts.len();
        step.check_impulses(r, None)?;
        let g = step.problem.generalized().ok_or(SceneError::Param {
            key: "step",
            message: "not a spring-cylinder step (no generalized problem)".into(),
        })?;
        if g.num_dofs() != 3 || g.num_contacts() != nc {
            return Err(SceneError::Impulses {
                expected: 3 * g.num_contacts(),
                found: r.len(),
            });
        }
        let v = theta::contact_velocities(g, r).map_err(theta_err)?;
        let q = theta::positions(
            &self.dynamics,
            self.theta,
            self.config.dt,
            &self.q,
            &self.v,
            &v,
            &self.options,
        )
        .map_err(theta_err)?;
        if q.iter().chain(v.iter()).any(|x| !x.is_finite()) {
            return Err(SceneError::NonFinite("state"));
        }
        self.last_impulse = if nc == 1 {
            [r[0], r[1], r[2]]
        } else {
            [0.0; 3]
        };
        self.q = q;
        self.v = v;
        self.steps_taken += 1;
        Ok(())
    }

    /// `m (v_x^2 + v_y^2) / 2 + I omega^2 / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        0.5 * self.config.mass * (self.v[0].powi(2) + self.v[1].powi(2))
            + 0.5 * self.config.inertia() * self.v[2].powi(2)
    }

    /// `k_s x^2 / 2`.
    pub fn spring_energy(&self) -> f64 {
        0.5 * self.config.spring_stiffness * self.q[0].powi(2)
    }

    /// Gravity's and the contact's elastic energy, from the static equilibrium (module doc).
    pub fn vertical_energy(&self) -> f64 {
        let c = &self.config;
        let phi_eq = c.equilibrium_phi();
        let phi = self.phi();
        c.mass * c.gravity * (phi - phi_eq)
            + 0.5 * c.contact_stiffness * (phi.min(0.0).powi(2) - phi_eq * phi_eq)
    }

    /// `kinetic + spring + vertical`.
    pub fn energy(&self) -> f64 {
        self.kinetic_energy() + self.spring_energy() + self.vertical_energy()
    }

    /// The exact motion for this configuration, when there is one.
    pub fn exact(&self) -> Option<&SpringCylinderExact> {
        self.exact.as_ref()
    }
}

impl Scene for SpringCylinder {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        SpringCylinder::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        SpringCylinder::advance(self, step, r)
    }

    fn finished(&self) -> bool {
        self.steps_taken >= self.config.steps()
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let dt = self.config.dt;
        let time = self.time();
        vec![
            ("x", self.q[0]),
            ("phi", self.phi()),
            ("angle", self.q[2]),
            ("vx", self.v[0]),
            ("vy", self.v[1]),
            ("omega", self.v[2]),
            ("slip", self.slip_velocity()),
            ("energy", self.energy()),
            ("relative_energy", self.relative_energy()),
            ("kinetic_energy", self.kinetic_energy()),
            ("spring_energy", self.spring_energy()),
            ("vertical_energy", self.vertical_energy()),
            ("normal_force", self.last_impulse[0] / dt),
            ("friction_force", self.last_impulse[1] / dt),
            ("x_exact", self.exact.map_or(f64::NAN, |e| e.position(time))),
            ("time", time),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn defaults_are_the_papers_setup() {
        let c = SpringCylinderConfig::from_table(&table("")).unwrap();
        assert_eq!(c, SpringCylinderConfig::default());
        assert_eq!(
            (c.radius, c.mass, c.spring_stiffness, c.contact_stiffness),
            (0.05, 0.5, 100.0, 1e4)
        );
        assert_eq!((c.dissipation, c.x0, c.dt, c.mu), (0.02, 0.1, 0.02, 0.0));
        assert_eq!((c.scheme, c.steps()), (Scheme::Midpoint, 250));
        // Section VI-B: about 22 steps per frictionless period, 27 rolling.
        let per_period = |e: SpringCylinderExact| e.period() / c.dt;
        assert!((per_period(SpringCylinderExact::frictionless(&c)) - 22.2).abs() < 0.05);
        assert!((per_period(SpringCylinderExact::rolling(&c)) - 27.2).abs() < 0.05);
        assert!((rolling_friction_threshold(&c) - 0.6796).abs() < 1e-4);
        assert!((c.equilibrium_phi() + 4.905e-4).abs() < 1e-12);
    }

    /// Every bad value is an error naming its key, never a panic.
    #[test]
    fn bad_parameters_are_errors_naming_the_key() {
        for (text, key) in [
            ("spring_stiffness = -100.0", "`spring_stiffness`"),
            ("contact_stiffness = 0.0", "`contact_stiffness`"),
            ("contact_stiffness = inf", "`contact_stiffness`"),
            ("dt = 0.0", "`dt`"),
            ("dt = -0.01", "`dt`"),
            ("dt = nan", "`dt`"),
            ("mass = nan", "`mass`"),
            ("radius = -0.05", "`radius`"),
            ("mu = -1.0", "`mu`"),
            ("mu = nan", "`mu`"),
            ("dissipation = -0.1", "`dissipation`"),
            ("gravity = -9.81", "`gravity`"),
            ("x0 = inf", "`x0`"),
            ("duration = 0.005", "`duration`"),
            ("scheme = \"leapfrog\"", "`scheme`"),
            ("scheme = 2", "`scheme`"),
            ("dt = \"small\"", "`dt`"),
            ("stiffness = 1.0", "stiffness"),
        ] {
            let e = SpringCylinderConfig::from_table(&table(text))
                .and_then(|c| c.validate().map(|_| c))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
            let e = SpringCylinderConfig::from_table(&table(text))
                .and_then(|c| SpringCylinder::new(&c).map(|_| ()));
            assert!(e.is_err(), "{text}");
        }
        let e = SpringCylinderConfig::from_table(&table("scheme = \"leapfrog\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("midpoint"), "lists the schemes: {e}");
    }

    #[test]
    fn the_exact_answer_exists_for_frictionless_and_rolling_only() {
        let c = |mu: f64| SpringCylinderConfig {
            mu,
            ..Default::default()
        };
        let free = SpringCylinderExact::new(&c(0.0)).unwrap();
        assert!(!free.rolling && (free.omega - 200f64.sqrt()).abs() < 1e-12);
        assert_eq!(free.angular_velocity(0.3), 0.0);
        let roll = SpringCylinderExact::new(&c(1.0)).unwrap();
        assert!(roll.rolling && (roll.omega - (100.0f64 / 0.75).sqrt()).abs() < 1e-12);
        assert_eq!(roll.position(0.0), 0.1);
        let t = 0.37;
        assert!((roll.angular_velocity(t) + roll.velocity(t) / 0.05).abs() < 1e-12);
        assert_eq!(roll.energy, 0.5);
        let e = SpringCylinderExact::new(&c(0.3)).unwrap_err().to_string();
        assert!(e.contains("`mu`") && e.contains("0.67"), "{e}");
    }

    #[test]
    fn initial_state_frame_and_jacobian() {
        let s = SpringCylinder::new(&SpringCylinderConfig::default()).unwrap();
        assert!((s.energy() - 0.5).abs() < 1e-15 && s.relative_energy() == 1.0);
        assert!(s.vertical_energy().abs() < 1e-15);
        assert!((s.phi() - s.config.equilibrium_phi()).abs() < 1e-15);
        let f = SpringCylinder::frame();
        assert!((f * f.transpose() - Matrix3::identity()).norm() < 1e-15);
        assert!((f.determinant() - 1.0).abs() < 1e-15, "right-handed");
        let j = s.jacobian();
        // Normal: v_y; first tangent (+x): v_x + R omega; second: nothing in the plane.
        assert_eq!(
            j.row(0).iter().copied().collect::<Vec<_>>(),
            [0.0, 1.0, 0.0]
        );
        assert_eq!(
            j.row(1).iter().copied().collect::<Vec<_>>(),
            [1.0, 0.0, 0.05]
        );
        assert_eq!(
            j.row(2).iter().copied().collect::<Vec<_>>(),
            [0.0, 0.0, 0.0]
        );
    }

    /// The step problem is eq. 18 with eq. 15's `A`, the free motion of stage 1 and the
    /// contact's model at `q0`, for every scheme.
    #[test]
    fn contact_step_is_eq_18() {
        for scheme in Scheme::ALL {
            let cfg = SpringCylinderConfig {
                scheme,
                mu: 1.0,
                ..Default::default()
            };
            let s = SpringCylinder::new(&cfg).unwrap();
            let step = s.contact_step().unwrap();
            assert_eq!(step.contacts.len(), 1);
            assert_eq!(step.contacts[0].gap, s.phi());
            let g = step.problem.generalized().unwrap();
            let t = scheme.theta();
            let dt = cfg.dt;
            let k_eff = dt * dt * t.theta * t.theta_vq * cfg.spring_stiffness;
            let a = theta_dense(g);
            let want = [cfg.mass + k_eff, cfg.mass, cfg.inertia()];
            for (i, w) in want.iter().enumerate() {
                assert!((a[(i, i)] - w).abs() < 1e-15, "{scheme:?}: A[{i}{i}]");
            }
            assert_eq!(a.iter().filter(|x| **x != 0.0).count(), 3, "diagonal");
            // v*_x from the spring (from rest: -dt k_s x_theta / (m + k_eff)), v*_y = -g dt.
            let vx = -dt * cfg.spring_stiffness * cfg.x0 / (cfg.mass + k_eff);
            assert!((g.v_star[0] - vx).abs() < 1e-15, "{scheme:?}");
            assert!((g.v_star[1] + cfg.gravity * dt).abs() < 1e-15);
            assert_eq!(g.v_star[2], 0.0);
            assert_eq!(g.contacts[0].phi0, s.phi());
            assert_eq!(
                (
                    g.contacts[0].mu,
                    g.contacts[0].stiffness,
                    g.contacts[0].dissipation
                ),
                (1.0, 1e4, 0.02)
            );
            assert_eq!((g.dt, g.v0.as_deref()), (Some(dt), Some(&[0.0; 3][..])));
        }
    }

    fn theta_dense(g: &contactlab_core::GeneralizedProblem) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(3, 3);
        let (cp, ri, v) = (
            g.a.symbolic().col_ptr(),
            g.a.symbolic().row_idx(),
            g.a.val(),
        );
        for c in 0..3 {
            for k in cp[c]..cp[c + 1] {
                a[(ri[k], c)] = v[k];
            }
        }
        a
    }

    /// With the compliant law's equilibrium impulse `dt m g` along the normal and nothing
    /// else, the cylinder is a spring-mass in `x`, stays at its height and does not turn; the
    /// run ends after `duration / dt` steps.
    #[test]
    fn advance_with_the_equilibrium_impulse_is_the_free_oscillator() {
        let cfg = SpringCylinderConfig {
            scheme: Scheme::Midpoint,
            duration: 1.0,
            ..Default::default()
        };
        let mut s = SpringCylinder::new(&cfg).unwrap();
        let r = [cfg.dt * cfg.mass * cfg.gravity, 0.0, 0.0];
        while !s.finished() {
            let step = s.contact_step().unwrap();
            s.advance(&step, &r).unwrap();
        }
        assert_eq!(s.steps_taken, 50);
        assert!((s.time() - 1.0).abs() < 1e-15);
        assert!(s.v[1].abs() < 1e-13 && s.v[2] == 0.0, "{}", s.v);
        assert!((s.phi() - cfg.equilibrium_phi()).abs() < 1e-15);
        // The midpoint rule conserves the oscillator's energy.
        assert!((s.relative_energy() - 1.0).abs() < 1e-12);
        let obs = s.observables();
        let get = |n: &str| obs.iter().find(|o| o.0 == n).unwrap().1;
        assert_eq!(get("time"), s.time());
        assert_eq!(get("x"), s.q[0]);
        assert!((get("normal_force") - cfg.mass * cfg.gravity).abs() < 1e-12);
        let exact = SpringCylinderExact::frictionless(&cfg).position(1.0);
        assert_eq!(get("x_exact"), exact);
        // The midpoint rule turns the oscillator's phase by `phi`, `tan(phi / 2) = w dt / 2`,
        // per step (its energy is exact): 50 steps are `x0 cos(50 phi)`.
        let w = (cfg.spring_stiffness / cfg.mass).sqrt();
        let phi = 2.0 * (w * cfg.dt / 2.0).atan();
        assert!((get("x") - 0.1 * (50.0 * phi).cos()).abs() < 1e-12);
        assert!(
            (get("x") - exact).abs() > 1e-3,
            "a coarse step: visibly off the exact answer"
        );
        let names: Vec<&str> = obs.iter().map(|o| o.0).collect();
        assert_eq!(
            names,
            [
                "x",
                "phi",
                "angle",
                "vx",
                "vy",
                "omega",
                "slip",
                "energy",
                "relative_energy",
                "kinetic_energy",
                "spring_energy",
                "vertical_energy",
                "normal_force",
                "friction_force",
                "x_exact",
                "time"
            ]
        );
    }

    #[test]
    fn advance_refuses_bad_impulses() {
        let mut s = SpringCylinder::new(&SpringCylinderConfig::default()).unwrap();
        let step = s.contact_step().unwrap();
        assert!(matches!(
            s.advance(&step, &[0.0; 2]),
            Err(SceneError::Impulses {
                expected: 3,
                found: 2
            })
        ));
        assert!(matches!(
            s.advance(&step, &[f64::NAN, 0.0, 0.0]),
            Err(SceneError::NonFinite(_))
        ));
        assert_eq!(s.steps_taken, 0);
    }
}
