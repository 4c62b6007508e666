//! Balls of different radii in a closed cube under gravity (Todorov 2010, section IV), and the
//! ball-drop test of Fig. 6.
//!
//! Each ball has six velocity coordinates `[v, omega]` (linear velocity of the centre, angular
//! velocity, world frame) and the diagonal mass matrix `M = diag(m, m, m, I, I, I)` of a solid
//! sphere, `I = 2 m R^2 / 5`; spheres have no gyroscopic term, so `tau` is gravity alone.
//!
//! One time step is the paper's eqs. 4-5 in contact coordinates: with `c = M qdot_t + h tau`,
//! `A = K M^-1 K'` and `v0 = K M^-1 c`, the contact problem `A f + v0 = v` under Coulomb's law is
//! solved for the impulses `f` (`f = h lambda`), then `qdot_{t+h} = M^-1 (c + K' f)` and the
//! centres move by `h v_{t+h}` (semi-implicit Euler). The normal bias is `b = 0` (section IV).
//!
//! Contacts: ball-wall and ball-ball pairs whose gap (distance of the surfaces) is below
//! `margin`. Each contact's frame is `[n, t1, t2]`, normal first as everywhere in the project,
//! `n` pointing from the second body (wall or ball `b`) to the first (ball `a`), so a positive
//! normal velocity separates. The rows of `K` for a direction `d` of the frame: ball `a` gets
//! `d` on its linear and `-R_a (n x d)` on its angular velocity (the velocity of its surface
//! point `p_a - R_a n`), ball `b` gets `-d` and `-R_b (n x d)` (its point `p_b + R_b n`).
//!
//! What the paper leaves open, and what we chose: its Matlab simulator is not published, so
//! the cube's size, the radii, densities and initial speeds are ours, picked so that the
//! average number of contacts per step lands near the paper's column labels (n_c ~ 7, 16 and 27
//! for 5, 10 and 15 balls); the report sets ours beside them. `b = 0` lets a contact found
//! with a small positive gap stop the approach there, and a contact found after a step has
//! carried the surfaces into each other keeps that overlap (it never grows); we report the
//! largest overlap rather than hide it with a position correction.

use std::collections::BTreeSet;

use contactlab_core::{LocalProblem, Matrix};

use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};
use faer::Mat;
use nalgebra::{Matrix3, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

fn default_h() -> f64 {
    0.005
}
fn default_n_balls() -> usize {
    5
}
fn default_mu() -> f64 {
    0.5
}
fn default_side() -> f64 {
    1.0
}
fn default_r_min() -> f64 {
    0.1
}
fn default_r_max() -> f64 {
    0.25
}
fn default_density() -> f64 {
    1000.0
}
fn default_v_max() -> f64 {
    1.0
}
fn default_w_max() -> f64 {
    2.0
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    1e-3
}

/// The largest accepted number of balls (the paper's scenes have at most 15; every ball is
/// allocated when the config is checked, so the cap keeps a typo from exhausting memory).
pub const MAX_BALLS: usize = 10_000;

/// The scene's parameters, as experiment configs give them (`[scene.params]` and sweep keys).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BallsConfig {
    /// Time step `h` in seconds (paper: 0.005).
    #[serde(default = "default_h")]
    pub h: f64,
    /// Number of balls `n_b`.
    #[serde(default = "default_n_balls")]
    pub n_balls: usize,
    /// Friction coefficient of every contact.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Seed of the random initial state.
    #[serde(default)]
    pub seed: u64,
    /// Edge length of the cube (m); the cube is `[0, side]^3`, gravity along `-z`.
    #[serde(default = "default_side")]
    pub side: f64,
    /// Smallest radius (m).
    #[serde(default = "default_r_min")]
    pub r_min: f64,
    /// Largest radius (m).
    #[serde(default = "default_r_max")]
    pub r_max: f64,
    /// Density of the balls (kg/m^3).
    #[serde(default = "default_density")]
    pub density: f64,
    /// Initial linear velocity components drawn uniformly from `[-v_max, v_max]` (m/s).
    #[serde(default = "default_v_max")]
    pub v_max: f64,
    /// Initial angular velocity components drawn uniformly from `[-w_max, w_max]` (rad/s).
    #[serde(default = "default_w_max")]
    pub w_max: f64,
    /// Gravitational acceleration (m/s^2).
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// Pairs closer than this gap (m) are contacts.
    #[serde(default = "default_margin")]
    pub margin: f64,
}

impl Default for BallsConfig {
    fn default() -> Self {
        BallsConfig {
            h: default_h(),
            n_balls: default_n_balls(),
            mu: default_mu(),
            seed: 0,
            side: default_side(),
            r_min: default_r_min(),
            r_max: default_r_max(),
            density: default_density(),
            v_max: default_v_max(),
            w_max: default_w_max(),
            gravity: default_gravity(),
            margin: default_margin(),
        }
    }
}

impl BallsConfig {
    /// Parses a `[scene.params]` table (with sweep values applied); unknown keys are errors.
    pub fn from_table(params: &toml::Table) -> Result<BallsConfig, SceneError> {
        toml::Value::Table(params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| SceneError::Parse(e.message().to_string()))
    }

    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), SceneError> {
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        crate::params::check_ranges(
            &[
                ("h", self.h),
                ("side", self.side),
                ("r_min", self.r_min),
                ("r_max", self.r_max),
                ("density", self.density),
            ],
            &[
                ("mu", self.mu),
                ("v_max", self.v_max),
                ("w_max", self.w_max),
                ("gravity", self.gravity),
                ("margin", self.margin),
            ],
        )?;
        if self.n_balls == 0 || self.n_balls > MAX_BALLS {
            return bad(
                "n_balls",
                format!("must be in 1..={MAX_BALLS}, got {}", self.n_balls),
            );
        }
        if self.r_min > self.r_max {
            return bad(
                "r_min",
                format!("{} exceeds r_max = {}", self.r_min, self.r_max),
            );
        }
        if 2.0 * self.r_max >= self.side {
            return bad(
                "r_max",
                format!(
                    "a ball of radius {} does not fit a cube of side {}",
                    self.r_max, self.side
                ),
            );
        }
        Ok(())
    }
}

/// One ball's geometry, inertia and state.
#[derive(Debug, Clone, PartialEq)]
pub struct Ball {
    /// Radius `R`.
    pub radius: f64,
    /// Mass `m`.
    pub mass: f64,
    /// Moment of inertia `I = 2 m R^2 / 5` about any axis through the centre.
    pub inertia: f64,
    /// Centre position.
    pub p: Vector3<f64>,
    /// Centre velocity.
    pub v: Vector3<f64>,
    /// Angular velocity.
    pub w: Vector3<f64>,
}

impl Ball {
    fn new(radius: f64, density: f64, p: Vector3<f64>) -> Ball {
        let mass = density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3);
        Ball {
            radius,
            mass,
            inertia: 0.4 * mass * radius * radius,
            p,
            v: Vector3::zeros(),
            w: Vector3::zeros(),
        }
    }
}

/// Balls in a closed cube: the state and its time stepping.
#[derive(Debug, Clone)]
pub struct BallsInCube {
    /// The balls.
    pub balls: Vec<Ball>,
    /// The parameters.
    pub config: BallsConfig,
    /// Simulated time (s).
    pub time: f64,
}

/// The walls as (inward normal, a point on the wall's plane) for a cube of side `s`.
fn walls(s: f64) -> [(Vector3<f64>, Vector3<f64>); 6] {
    let o = Vector3::zeros();
    let c = Vector3::new(s, s, s);
    [
        (Vector3::x(), o),
        (-Vector3::x(), c),
        (Vector3::y(), o),
        (-Vector3::y(), c),
        (Vector3::z(), o),
        (-Vector3::z(), c),
    ]
}

/// The 3x6 block of `K` of one contact for one ball: rows `d = n, t1, t2`; linear part
/// `sign d`, angular part `-R (n x d)` (see the module doc).
fn jacobian_block(frame: &Matrix3<f64>, radius: f64, sign: f64) -> [Matrix3<f64>; 2] {
    let n: Vector3<f64> = frame.row(0).transpose();
    let lin = frame * sign;
    let mut ang = Matrix3::zeros();
    for r in 0..3 {
        let d: Vector3<f64> = frame.row(r).transpose();
        ang.set_row(r, &(-radius * n.cross(&d)).transpose());
    }
    [lin, ang]
}

impl BallsInCube {
    /// Balls of radii uniform in `[r_min, r_max]`, placed uniformly at random without overlap
    /// inside the cube, with random velocities and spins; everything from `config.seed`.
    pub fn random(config: &BallsConfig) -> Result<BallsInCube, SceneError> {
        config.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let mut balls: Vec<Ball> = Vec::with_capacity(config.n_balls);
        let max_tries = 1_000 * config.n_balls;
        let mut tries = 0;
        while balls.len() < config.n_balls {
            tries += 1;
            if tries > max_tries {
                return Err(SceneError::Placement {
                    n: config.n_balls,
                    side: config.side,
                    tries: max_tries,
                });
            }
            let r = rng.random_range(config.r_min..=config.r_max);
            let mut coord = || rng.random_range(r..=config.side - r);
            let p = Vector3::new(coord(), coord(), coord());
            if balls
                .iter()
                .all(|b| (b.p - p).norm() >= b.radius + r + config.margin)
            {
                balls.push(Ball::new(r, config.density, p));
            }
        }
        let uniform = |rng: &mut ChaCha8Rng, m: f64| {
            Vector3::new(
                rng.random_range(-1.0..=1.0),
                rng.random_range(-1.0..=1.0),
                rng.random_range(-1.0..=1.0),
            ) * m
        };
        for b in &mut balls {
            b.v = uniform(&mut rng, config.v_max);
            b.w = uniform(&mut rng, config.w_max);
        }
        Ok(BallsInCube {
            balls,
            config: config.clone(),
            time: 0.0,
        })
    }

    /// Fig. 6: `n` balls stacked vertically on the cube's vertical axis, touching, at rest; the
    /// radii step evenly from `r_max` (bottom) to `r_min` (top) and the bottom ball starts a
    /// tenth of the cube's side above the floor.
    pub fn ball_drop(n: usize, config: &BallsConfig) -> Result<BallsInCube, SceneError> {
        let config = BallsConfig {
            n_balls: n,
            ..config.clone()
        };
        config.validate()?;
        let (s, mut z) = (config.side, 0.1 * config.side);
        let mut balls = Vec::with_capacity(n);
        for i in 0..n {
            let t = if n > 1 {
                i as f64 / (n - 1) as f64
            } else {
                0.0
            };
            let r = config.r_max + t * (config.r_min - config.r_max);
            z += r;
            balls.push(Ball::new(
                r,
                config.density,
                Vector3::new(0.5 * s, 0.5 * s, z),
            ));
            z += r;
        }
        if z > s {
            return Err(SceneError::Param {
                key: "side",
                message: format!(
                    "a stack of {n} balls is {z:.3} m tall, more than the cube's side {s}"
                ),
            });
        }
        Ok(BallsInCube {
            balls,
            config,
            time: 0.0,
        })
    }

    /// The contacts at the current state, in a fixed order (walls by ball, then pairs).
    pub fn contacts(&self) -> Vec<Contact> {
        let cfg = &self.config;
        let mut out = Vec::new();
        for (i, b) in self.balls.iter().enumerate() {
            for (k, (n, point)) in walls(cfg.side).iter().enumerate() {
                let gap = n.dot(&(b.p - point)) - b.radius;
                if gap < cfg.margin {
                    out.push(Contact {
                        key: ContactKey::Wall { ball: i, wall: k },
                        frame: contact_frame(*n),
                        gap,
                    });
                }
            }
        }
        for a in 0..self.balls.len() {
            for b in a + 1..self.balls.len() {
                let (ba, bb) = (&self.balls[a], &self.balls[b]);
                let d = ba.p - bb.p;
                let dist = d.norm();
                let gap = dist - ba.radius - bb.radius;
                if gap < cfg.margin && dist > 0.0 {
                    out.push(Contact {
                        key: ContactKey::Pair { a, b },
                        frame: contact_frame(d / dist),
                        gap,
                    });
                }
            }
        }
        out
    }

    /// The bodies of a contact with their radii and the sign of their linear rows.
    fn bodies(&self, key: ContactKey) -> Vec<(usize, f64, f64)> {
        match key {
            ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                vec![(ball, self.balls[ball].radius, 1.0)]
            }
            ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => vec![
                (a, self.balls[a].radius, 1.0),
                (b, self.balls[b].radius, -1.0),
            ],
        }
    }

    /// Builds this step's contact problem (eqs. 4-5 in contact coordinates).
    pub fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let free: Vec<[Vector3<f64>; 2]> = self.free_velocities();
        let contacts = self.contacts();
        let nc = contacts.len();
        // K blocks per contact: (ball, [linear, angular]).
        let blocks: Vec<Vec<(usize, [Matrix3<f64>; 2])>> = contacts
            .iter()
            .map(|c| {
                self.bodies(c.key)
                    .into_iter()
                    .map(|(i, r, sign)| (i, jacobian_block(&c.frame, r, sign)))
                    .collect()
            })
            .collect();
        let mut a = Mat::<f64>::zeros(3 * nc, 3 * nc);
        let mut v0 = vec![0.0; 3 * nc];
        for (ci, bi) in blocks.iter().enumerate() {
            let mut q = Vector3::zeros();
            for (ball, [lin, ang]) in bi {
                q += lin * free[*ball][0] + ang * free[*ball][1];
            }
            v0[3 * ci..3 * ci + 3].copy_from_slice(q.as_slice());
            for (cj, bj) in blocks.iter().enumerate().skip(ci) {
                let mut block = Matrix3::zeros();
                for (ball, [lin, ang]) in bi {
                    for (ball_j, [lin_j, ang_j]) in bj {
                        if ball == ball_j {
                            let body = &self.balls[*ball];
                            block += lin * lin_j.transpose() / body.mass
                                + ang * ang_j.transpose() / body.inertia;
                        }
                    }
                }
                for r in 0..3 {
                    for c in 0..3 {
                        a[(3 * ci + r, 3 * cj + c)] = block[(r, c)];
                        a[(3 * cj + c, 3 * ci + r)] = block[(r, c)];
                    }
                }
            }
        }
        let problem = LocalProblem::new(Matrix::Dense(a), v0, vec![self.config.mu; nc])?;
        let free = free
            .iter()
            .flat_map(|[v, w]| v.iter().chain(w.iter()).copied().collect::<Vec<_>>())
            .collect();
        Ok(ContactStep {
            contacts,
            problem: problem.into(),
            free,
        })
    }

    /// `M^-1 c` per ball: velocities after gravity alone.
    fn free_velocities(&self) -> Vec<[Vector3<f64>; 2]> {
        let dv = Vector3::new(0.0, 0.0, self.config.h * self.config.gravity);
        self.balls.iter().map(|b| [b.v - dv, b.w]).collect()
    }

    /// Applies the impulses `f` (normal first per contact, the step's frames) and moves the
    /// balls: `qdot = M^-1 (c + K' f)`, `p += h v`.
    pub fn advance(&mut self, step: &ContactStep, f: &[f64]) -> Result<(), SceneError> {
        step.check_impulses(f, Some(6 * self.balls.len()))?;
        let mut vel: Vec<[Vector3<f64>; 2]> = step
            .free
            .chunks(6)
            .map(|c| {
                [
                    Vector3::new(c[0], c[1], c[2]),
                    Vector3::new(c[3], c[4], c[5]),
                ]
            })
            .collect();
        for (c, contact) in step.contacts.iter().enumerate() {
            let fc = Vector3::new(f[3 * c], f[3 * c + 1], f[3 * c + 2]);
            for (ball, r, sign) in self.bodies(contact.key) {
                let [lin, ang] = jacobian_block(&contact.frame, r, sign);
                let b = &self.balls[ball];
                vel[ball][0] += lin.transpose() * fc / b.mass;
                vel[ball][1] += ang.transpose() * fc / b.inertia;
            }
        }
        for (b, [v, w]) in self.balls.iter_mut().zip(vel) {
            b.v = v;
            b.w = w;
        }
        self.move_positions();
        Ok(())
    }

    /// A step without contacts: gravity only.
    pub fn advance_free(&mut self) {
        let free = self.free_velocities();
        for (b, [v, _]) in self.balls.iter_mut().zip(free) {
            b.v = v;
        }
        self.move_positions();
    }

    fn move_positions(&mut self) {
        let h = self.config.h;
        for b in &mut self.balls {
            b.p += h * b.v;
        }
        self.time += h;
    }

    /// `sum m |v|^2 / 2 + I |omega|^2 / 2`.
    pub fn kinetic_energy(&self) -> f64 {
        self.balls
            .iter()
            .map(|b| 0.5 * b.mass * b.v.norm_squared() + 0.5 * b.inertia * b.w.norm_squared())
            .sum()
    }

    /// Potential energy `sum m g z`.
    pub fn potential_energy(&self) -> f64 {
        self.balls
            .iter()
            .map(|b| b.mass * self.config.gravity * b.p.z)
            .sum()
    }

    /// The largest `|v_z|` over the balls.
    pub fn max_abs_vertical_velocity(&self) -> f64 {
        self.balls.iter().map(|b| b.v.z.abs()).fold(0.0, f64::max)
    }

    /// The largest overlap of two surfaces (or a ball and a wall), 0 when none overlap.
    pub fn max_overlap(&self) -> f64 {
        self.contacts()
            .iter()
            .map(|c| (-c.gap).max(0.0))
            .fold(0.0, f64::max)
    }

    /// The distinct balls that touch anything (for tests and summaries).
    pub fn touching(&self) -> BTreeSet<usize> {
        self.contacts()
            .iter()
            .flat_map(|c| match c.key {
                ContactKey::Wall { ball, .. } | ContactKey::WallPoint { body: ball, .. } => {
                    vec![ball]
                }
                ContactKey::Pair { a, b } | ContactKey::PairPoint { a, b, .. } => vec![a, b],
            })
            .collect()
    }
}

impl Scene for BallsInCube {
    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        BallsInCube::contact_step(self)
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        if step.contacts.is_empty() && r.is_empty() {
            self.advance_free();
            Ok(())
        } else {
            BallsInCube::advance(self, step, r)
        }
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("kinetic_energy", self.kinetic_energy()),
            ("potential_energy", self.potential_energy()),
            ("max_abs_vz", self.max_abs_vertical_velocity()),
            ("max_overlap", self.max_overlap()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn two_balls_touching() -> BallsInCube {
        let cfg = BallsConfig {
            mu: 0.7,
            ..BallsConfig::default()
        };
        let mut a = Ball::new(0.2, 1000.0, Vector3::new(0.4, 0.5, 0.35));
        let mut b = Ball::new(
            0.1,
            500.0,
            Vector3::new(0.4 + 0.3 * 0.6, 0.5, 0.35 + 0.3 * 0.8),
        );
        a.v = Vector3::new(0.3, -0.2, 0.1);
        a.w = Vector3::new(1.0, 2.0, -0.5);
        b.v = Vector3::new(-0.4, 0.5, 0.2);
        b.w = Vector3::new(-1.5, 0.3, 0.7);
        BallsInCube {
            balls: vec![a, b],
            config: cfg,
            time: 0.0,
        }
    }

    #[test]
    fn frames_are_orthonormal_and_normal_first() {
        for n in [
            Vector3::z(),
            -Vector3::x(),
            Vector3::new(0.3, -0.5, 0.8).normalize(),
        ] {
            let f = contact_frame(n);
            assert_relative_eq!(f * f.transpose(), Matrix3::identity(), epsilon = 1e-14);
            assert_relative_eq!(f.row(0).transpose(), n, epsilon = 1e-15);
            assert_relative_eq!(f.determinant(), 1.0, epsilon = 1e-14);
        }
    }

    #[test]
    fn jacobian_rows_give_the_relative_velocity_of_the_surface_points() {
        let s = two_balls_touching();
        let cs = s.contact_step().unwrap();
        let c = cs
            .contacts
            .iter()
            .find(|c| matches!(c.key, ContactKey::Pair { .. }))
            .unwrap();
        let (a, b) = (&s.balls[0], &s.balls[1]);
        let n: Vector3<f64> = c.frame.row(0).transpose();
        // n points from b to a; the touching points are p_a - R_a n and p_b + R_b n.
        assert_relative_eq!(n, (a.p - b.p).normalize(), epsilon = 1e-14);
        let va = a.v + a.w.cross(&(-a.radius * n));
        let vb = b.v + b.w.cross(&(b.radius * n));
        let expected = c.frame * (va - vb);
        let [la, aa] = jacobian_block(&c.frame, a.radius, 1.0);
        let [lb, ab] = jacobian_block(&c.frame, b.radius, -1.0);
        let got = la * a.v + aa * a.w + lb * b.v + ab * b.w;
        assert_relative_eq!(got, expected, epsilon = 1e-13);
    }

    #[test]
    fn delassus_matrix_is_k_minv_kt_and_v0_is_the_free_contact_velocity() {
        let s = two_balls_touching();
        let cs = s.contact_step().unwrap();
        assert_eq!(cs.contacts.len(), 1, "{:?}", cs.contacts);
        // Probe A column by column: a unit impulse e_j changes the contact velocity by A e_j.
        let mut probe = s.clone();
        for j in 0..3 {
            let mut f = vec![0.0; 3];
            f[j] = 1.0;
            probe.balls = s.balls.clone();
            probe.advance(&cs, &f).unwrap();
            let (a, b) = (&probe.balls[0], &probe.balls[1]);
            let n: Vector3<f64> = cs.contacts[0].frame.row(0).transpose();
            let rel = cs.contacts[0].frame
                * ((a.v + a.w.cross(&(-a.radius * n))) - (b.v + b.w.cross(&(b.radius * n))));
            let v = cs.velocities(&f).unwrap();
            for i in 0..3 {
                assert_relative_eq!(rel[i], v[i], epsilon = 1e-12);
            }
        }
        // Symmetric positive definite for one contact between two free balls.
        let a = cs.problem.local().unwrap().dense_w();
        for i in 0..3 {
            assert!(a[(i, i)] > 0.0);
            for j in 0..3 {
                assert_relative_eq!(a[(i, j)], a[(j, i)], epsilon = 1e-15);
            }
        }
    }

    #[test]
    fn impulses_conserve_momentum_between_balls() {
        let s = two_balls_touching();
        let cs = s.contact_step().unwrap();
        let mut t = s.clone();
        t.advance(&cs, &[2.0, 0.5, -0.3]).unwrap();
        let momentum = |s: &BallsInCube| s.balls.iter().map(|b| b.mass * b.v).sum::<Vector3<f64>>();
        let gravity = Vector3::new(0.0, 0.0, -s.config.h * s.config.gravity)
            * s.balls.iter().map(|b| b.mass).sum::<f64>();
        assert_relative_eq!(momentum(&t), momentum(&s) + gravity, epsilon = 1e-12);
    }

    #[test]
    fn random_scenes_are_seeded_valid_and_inside_the_cube() {
        let cfg = BallsConfig {
            n_balls: 15,
            seed: 7,
            ..BallsConfig::default()
        };
        let a = BallsInCube::random(&cfg).unwrap();
        let b = BallsInCube::random(&cfg).unwrap();
        assert_eq!(a.balls, b.balls);
        let c = BallsInCube::random(&BallsConfig {
            seed: 8,
            ..cfg.clone()
        })
        .unwrap();
        assert_ne!(a.balls, c.balls);
        for (i, x) in a.balls.iter().enumerate() {
            assert!(x.radius >= cfg.r_min && x.radius <= cfg.r_max);
            assert!((0..3).all(|k| x.p[k] >= x.radius && x.p[k] <= cfg.side - x.radius));
            for y in &a.balls[i + 1..] {
                assert!((x.p - y.p).norm() >= x.radius + y.radius);
            }
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = BallsInCube::random(&BallsConfig {
            mu: -0.1,
            ..BallsConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("`mu`"), "{e}");
        let e = BallsInCube::random(&BallsConfig {
            h: f64::NAN,
            ..BallsConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("`h`"), "{e}");
        let e = BallsInCube::random(&BallsConfig {
            r_max: 0.6,
            ..BallsConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("`r_max`"), "{e}");
        let e = BallsInCube::random(&BallsConfig {
            n_balls: 60,
            r_min: 0.2,
            ..BallsConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("could not place 60 balls"), "{e}");
        let mut s = two_balls_touching();
        let cs = s.contact_step().unwrap();
        assert!(s
            .advance(&cs, &[1.0])
            .unwrap_err()
            .to_string()
            .contains("expected 3"));
        assert!(s.advance(&cs, &[f64::NAN, 0.0, 0.0]).is_err());
    }

    #[test]
    fn a_free_ball_falls_under_gravity() {
        let cfg = BallsConfig {
            n_balls: 1,
            ..BallsConfig::default()
        };
        let mut s = BallsInCube::ball_drop(1, &cfg).unwrap();
        s.balls[0].p.z = 0.6;
        assert!(s.contacts().is_empty());
        s.advance_free();
        assert_relative_eq!(s.balls[0].v.z, -cfg.h * cfg.gravity, epsilon = 1e-15);
        assert_relative_eq!(
            s.balls[0].p.z,
            0.6 - cfg.h * cfg.h * cfg.gravity,
            epsilon = 1e-15
        );
    }

    #[test]
    fn the_drop_stack_touches_and_fits() {
        let s = BallsInCube::ball_drop(
            5,
            &BallsConfig {
                r_min: 0.05,
                r_max: 0.1,
                ..BallsConfig::default()
            },
        )
        .unwrap();
        assert_eq!(s.balls.len(), 5);
        let pairs = s
            .contacts()
            .iter()
            .filter(|c| matches!(c.key, ContactKey::Pair { .. }))
            .count();
        assert_eq!(pairs, 4, "each ball touches the next");
        assert!(
            BallsInCube::ball_drop(5, &BallsConfig::default()).is_err(),
            "5 balls of up to 0.25 m do not fit 1 m"
        );
    }
}
