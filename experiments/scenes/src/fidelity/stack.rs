//! The ill-conditioned stack: a light cube under a heavy cube on the floor, at rest (the
//! `2cubes` scene of Le Lidec et al., "Contact Models in Robotics: a Comparative Analysis",
//! T-RO 2024, sec. VI; their Fig. 9 sweeps the mass ratio). Exact answer: nothing moves. The
//! mass ratio makes the Delassus matrix ill-conditioned: the floor contacts carry the sum of the
//! weights through a body whose own mass is `1 / ratio` of the load, which per-contact solvers
//! (PGS, bisection) propagate one sweep at a time.
//!
//! # The scene
//!
//! Two cubes of side `a` (0.2 m), each with eight corner spheres of radius `r = a / 50` (the
//! convention of [`super`]), the bottom cube's face on the floor `z = 0` (centre at `a / 2`),
//! the top cube straight above it, corner sphere on corner sphere (centre at `3 a / 2`: the
//! spheres' surfaces touch where the faces would). Masses `m_b = 1 / sqrt(ratio)` (bottom) and
//! `m_t = sqrt(ratio)` (top), so the ratio `m_t / m_b = ratio` runs from 1 (1 kg on 1 kg) to
//! 1e6 (1e3 kg on 1e-3 kg) with the geometric mean fixed at 1 kg. Friction `mu = 0.9` against
//! the floor, `0.95` between the cubes. Both start exactly at rest and touching; the study
//! runs 100 steps of 1 ms.
//!
//! The tower (`count` cubes, 5 and 10 in the study's `tower.toml`, issue 44, after
//! ContactBench's stacks): the same cubes stacked face on face, cube `k`'s centre at
//! `(k + 1/2) a`, every cube above the first of mass `sqrt(ratio)` (1 kg at the tower's ratio
//! 1); each cube touches only the floor and the cube under it (a tower that falls apart is a
//! collapse, and what happens after it is not modelled). Exact: nothing moves; the bottom
//! interface carries the weight of every cube above it.
//!
//! Two ways the top cube rests ([`Resting`]): corner sphere on corner sphere (`spheres`, the
//! default: a knife-edge balance, whose contact normals tilt as soon as the spheres slide off
//! each other's tops), or its corner spheres on the bottom cube's top face (`face`: the bottom
//! cube's upper spheres take no part, and the normals stay the face's), so that what the mass
//! ratio does is measured apart from the balance.
//!
//! # Contacts
//!
//! Floor: a sphere of world centre `c` is a contact when `c_z - r < margin`, normal `+z`,
//! point `c - r e_z` (as [`super`]). Cube on cube: a top sphere `i` and a bottom sphere `j` with
//! centres `c_i`, `c_j` are a contact when `|c_i - c_j| - 2 r < margin`, normal
//! `n = (c_i - c_j) / |c_i - c_j|` (towards the top cube, which is body `a` of
//! [`ContactKey::PairPoint`]), point the midpoint `(c_i + c_j) / 2`. The rows of `J` for a frame
//! direction `d` are `[d, (p - x_t) x d]` on the top cube's `[v, omega]` and
//! `-[d, (p - x_b) x d]` on the bottom cube's: the relative velocity of the top cube's point.
//! Contacts are rigid at their gaps (`k = inf`), as in [`super`]. On the face (`face`): a top
//! sphere `i` whose centre, in the bottom cube's frame, lies over the face's square
//! (`|x|, |y| <= a/2`, `z > 0`) is a contact when `z - a/2 - r < margin`, normal the face's
//! `q_b e_z`, point `c_i - r n`.
//!
//! # One step
//!
//! Velocities `[v_b, omega_b, v_t, omega_t]` (world), `A = diag(m_b I3, I_b I3, m_t I3, I_t I3)`
//! with `I = m a^2 / 6`; symplectic Euler in impulses as [`super`]: `v* = v + dt g`, then
//! `v = v* + A^-1 J' r`, `x += dt v`, `q = exp(dt omega) q`.
//!
//! # Observables
//!
//! `t`; `drift_bottom`, `drift_top` (the bottom and the top cube's centre's distance from its
//! start, m); `drift_max` (the largest over the cubes); `speed_max` (the largest centre speed,
//! m/s); `penetration` (the largest overlap after the step, over the
//! floor contacts and the cube-on-cube contacts, `max(0, -gap)`, m); `z_bottom`, `z_top`;
//! `offset` (the largest horizontal distance of a centre from the one under it, m); `collapsed`
//! (1 once the stack has fallen apart, by the study's test shared with the peers' harness, on
//! any cube and the one under it: the upper centre more than a corner radius `r` off the
//! lower one's horizontally, or below it, or the
//! cubes overlapping by more than a sphere's diameter, `a - (z_top - z_bottom) > 2 r`; less
//! overlap is penetration, not a collapse).
//!
//! # Constants
//!
//! Besides the masses and `drift_exact = 0`: `pair_delassus_normal`, the normal diagonal entry
//! of `W` for a contact between the cubes at rest, `(1/m_b + 1/m_t)(1 + 12 h^2 / a^2)` with
//! `h = a/2 - r`; and `sap_penetration_estimate`, the overlap at which SAP's near-rigid
//! regularisation (Castro et al. eq. 29, `R_n = beta^2 w / (4 pi^2)`, `beta = 1`, bias
//! `-phi / dt`) holds the top cube's quarter load `gamma = m_t g dt / 4` at rest,
//! `phi = dt R_n gamma`: it grows with the mass ratio (`w` with the light cube, `gamma` with the
//! heavy one), so a regularisation sized by the Delassus diagonal lets the heavy cube sink.

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::StepProblem;
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

pub use super::cubes::Cube;
use super::cubes::{self, Found};
use super::CORNER_RADIUS_FRACTION;
use crate::assemble::Gap;
use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

fn default_dt() -> f64 {
    1e-3
}
fn default_duration() -> f64 {
    0.1
}
fn default_side() -> f64 {
    0.2
}
fn default_mass_ratio() -> f64 {
    1.0
}
fn default_mu_floor() -> f64 {
    0.9
}
fn default_mu_cubes() -> f64 {
    0.95
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    1e-3
}
fn default_count() -> usize {
    2
}

/// How the top cube rests on the bottom one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resting {
    /// Corner sphere on corner sphere: a knife-edge balance.
    #[default]
    Spheres,
    /// The top cube's corner spheres on the bottom cube's top face.
    Face,
}

/// The stack's parameters (`[scene.params]` of `kind = "cube_stack"`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Simulated span (s); 100 steps at the default `dt`.
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// Both cubes' side `a` (m).
    #[serde(default = "default_side")]
    pub side: f64,
    /// Top mass over bottom mass (`m_t / m_b`, at least 1 is the study's range).
    #[serde(default = "default_mass_ratio")]
    pub mass_ratio: f64,
    /// Friction between the bottom cube and the floor.
    #[serde(default = "default_mu_floor")]
    pub mu_floor: f64,
    /// Friction between the cubes.
    #[serde(default = "default_mu_cubes")]
    pub mu_cubes: f64,
    /// Gravitational acceleration `g` (m/s^2).
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// A pair of surfaces is a contact while its gap is below this (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// How each cube rests on the one below.
    #[serde(default)]
    pub resting: Resting,
    /// How many cubes stand on each other (2: the stack; more: the tower).
    #[serde(default = "default_count")]
    pub count: usize,
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            dt: default_dt(),
            duration: default_duration(),
            side: default_side(),
            mass_ratio: default_mass_ratio(),
            mu_floor: default_mu_floor(),
            mu_cubes: default_mu_cubes(),
            gravity: default_gravity(),
            margin: default_margin(),
            resting: Resting::default(),
            count: default_count(),
        }
    }
}

impl StackConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors naming the key.
    pub fn from_table(params: &toml::Table) -> Result<StackConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        crate::params::check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration),
                ("side", self.side),
                ("mass_ratio", self.mass_ratio),
                ("gravity", self.gravity),
            ],
            &[
                ("mu_floor", self.mu_floor),
                ("mu_cubes", self.mu_cubes),
                ("margin", self.margin),
            ],
        )?;
        if self.count < 2 {
            return Err(SceneError::Param {
                key: "count",
                message: format!("a stack needs at least 2 cubes, got {}", self.count),
            });
        }
        // Spheres other than the touching ones sit at least a - 2 r away from any surface.
        let limit = self.side * (1.0 - 2.0 * CORNER_RADIUS_FRACTION);
        if self.margin >= limit {
            return Err(SceneError::Param {
                key: "margin",
                message: format!("must be below {limit} m, got {}", self.margin),
            });
        }
        Ok(())
    }

    /// The masses from the bottom up: `1 / sqrt(ratio)`, then `sqrt(ratio)` for every cube
    /// above (kg).
    pub fn masses(&self) -> Vec<f64> {
        let s = self.mass_ratio.sqrt();
        (0..self.count)
            .map(|k| if k == 0 { 1.0 / s } else { s })
            .collect()
    }

    /// The corner spheres' radius `a / 50`.
    pub fn corner_radius(&self) -> f64 {
        CORNER_RADIUS_FRACTION * self.side
    }

    /// `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
}

/// The stack (see the module doc). Body 0 is the bottom cube, body `count - 1` the top one.
#[derive(Debug, Clone)]
pub struct CubeStack {
    /// The parameters.
    pub config: StackConfig,
    /// The cubes from the bottom up.
    pub cubes: Vec<Cube>,
    /// The corner spheres' centres in a cube's frame.
    pub corners: Vec<Vector3<f64>>,
    /// Steps taken.
    pub steps: usize,
}

impl CubeStack {
    /// The stack at rest for `config`.
    pub fn new(config: &StackConfig) -> Result<CubeStack, SceneError> {
        config.validate()?;
        let a = config.side;
        let h = 0.5 * a - config.corner_radius();
        let sign = |k: usize, bit: usize| if k >> bit & 1 == 1 { h } else { -h };
        let corners = (0..8)
            .map(|k| Vector3::new(sign(k, 0), sign(k, 1), sign(k, 2)))
            .collect();
        let cubes = (config.masses().into_iter().enumerate())
            .map(|(k, m)| {
                let p = Vector3::new(0.0, 0.0, (k as f64 + 0.5) * a);
                Cube::at_rest(m, p, UnitQuaternion::identity())
            })
            .collect();
        Ok(CubeStack {
            cubes,
            corners,
            steps: 0,
            config: config.clone(),
        })
    }

    /// Sphere `k` of `body` in world coordinates.
    fn sphere(&self, body: usize, k: usize) -> Vector3<f64> {
        let c = &self.cubes[body];
        c.p + c.q * self.corners[k]
    }

    /// Every contact whose gap is below `margin` (zero: the overlapping ones).
    fn contacts(&self, margin: f64) -> Vec<Found> {
        let r = self.config.corner_radius();
        let mut out = Vec::new();
        for body in 0..self.cubes.len() {
            for k in 0..8 {
                let c = self.sphere(body, k);
                let gap = c.z - r;
                if gap < margin {
                    out.push(Found {
                        contact: Contact {
                            key: ContactKey::WallPoint {
                                body,
                                obstacle: 0,
                                feature: k as u64,
                            },
                            frame: contact_frame(Vector3::z()),
                            gap,
                        },
                        mu: self.config.mu_floor,
                        bodies: vec![(body, 1.0, c - r * Vector3::z() - self.cubes[body].p)],
                    });
                }
            }
        }
        for top in 1..self.cubes.len() {
            match self.config.resting {
                Resting::Face => self.face_contacts(top, margin, &mut out),
                Resting::Spheres => self.sphere_contacts(top, margin, &mut out),
            }
        }
        out
    }

    /// Cube `top`'s corner spheres on the corner spheres of the cube under it.
    fn sphere_contacts(&self, top: usize, margin: f64, out: &mut Vec<Found>) {
        let (r, below) = (self.config.corner_radius(), top - 1);
        for i in 0..8 {
            let ci = self.sphere(top, i);
            for j in 0..8 {
                let cj = self.sphere(below, j);
                let d = ci - cj;
                let dist = d.norm();
                let gap = dist - 2.0 * r;
                if gap >= margin || dist == 0.0 {
                    continue;
                }
                let point = 0.5 * (ci + cj);
                out.push(Found {
                    contact: Contact {
                        key: ContactKey::PairPoint {
                            a: top,
                            b: below,
                            feature: (i as u64) << 32 | j as u64,
                        },
                        frame: contact_frame(d / dist),
                        gap,
                    },
                    mu: self.config.mu_cubes,
                    bodies: vec![
                        (top, 1.0, point - self.cubes[top].p),
                        (below, -1.0, point - self.cubes[below].p),
                    ],
                });
            }
        }
    }

    /// Cube `top`'s spheres on the top face of the cube under it (see the module doc).
    fn face_contacts(&self, top: usize, margin: f64, out: &mut Vec<Found>) {
        let (r, half) = (self.config.corner_radius(), 0.5 * self.config.side);
        let below = top - 1;
        let bottom = &self.cubes[below];
        let n = bottom.q * Vector3::z();
        for i in 0..8 {
            let ci = self.sphere(top, i);
            let local = bottom.q.inverse() * (ci - bottom.p);
            let over = local.x.abs() <= half && local.y.abs() <= half && local.z > 0.0;
            let gap = local.z - half - r;
            if !over || gap >= margin {
                continue;
            }
            let point = ci - r * n;
            out.push(Found {
                contact: Contact {
                    key: ContactKey::PairPoint {
                        a: top,
                        b: below,
                        feature: i as u64,
                    },
                    frame: contact_frame(n),
                    gap,
                },
                mu: self.config.mu_cubes,
                bodies: vec![
                    (top, 1.0, point - self.cubes[top].p),
                    (below, -1.0, point - bottom.p),
                ],
            });
        }
    }

    /// Whether the stack has fallen apart: any cube off the one under it (see the module
    /// doc's `collapsed`).
    pub fn collapsed(&self) -> bool {
        let r = self.config.corner_radius();
        self.cubes.windows(2).any(|pair| {
            let (b, t) = (&pair[0], &pair[1]);
            let offset = (t.p - b.p).xy().norm();
            t.p.z < b.p.z || self.config.side - (t.p.z - b.p.z) > 2.0 * r || offset > r
        })
    }

    /// The largest horizontal offset of a cube's centre from the centre of the one under it.
    pub fn offset(&self) -> f64 {
        (self.cubes.windows(2))
            .map(|pair| (pair[1].p - pair[0].p).xy().norm())
            .fold(0.0, f64::max)
    }

    /// The largest overlap of any sphere with the floor or with the other cube.
    pub fn penetration(&self) -> f64 {
        self.contacts(0.0)
            .iter()
            .map(|f| -f.contact.gap)
            .fold(0.0, f64::max)
    }

    /// The simulated time `steps dt` (s).
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.config.dt
    }

    /// The generalized problem of these contacts (rigid at their gaps).
    fn problem(&self, found: &[Found], free: &[f64]) -> Result<GeneralizedProblem, SceneError> {
        let c = &self.config;
        cubes::problem(&self.cubes, c.side, found, free, (c.dt, Gap::Touching))
    }
}

impl Scene for CubeStack {
    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let found = self.contacts(self.config.margin);
        let free = cubes::free_velocity(&self.cubes, self.config.gravity, self.config.dt);
        let problem = self.problem(&found, &free)?;
        Ok(ContactStep {
            contacts: found.into_iter().map(|f| f.contact).collect(),
            problem: StepProblem::from(problem),
            free,
        })
    }

    fn advance(&mut self, step: &ContactStep, r: &[f64]) -> Result<(), SceneError> {
        let c = &self.config;
        cubes::advance(&mut self.cubes, c.side, c.dt, step, r)?;
        self.steps += 1;
        Ok(())
    }

    fn observables(&self) -> Vec<(&'static str, f64)> {
        let (b, t) = (&self.cubes[0], &self.cubes[self.cubes.len() - 1]);
        let drift = |c: &Cube| (c.p - c.start).norm();
        vec![
            ("t", self.time()),
            ("drift_bottom", drift(b)),
            ("drift_top", drift(t)),
            (
                "drift_max",
                self.cubes.iter().map(drift).fold(0.0, f64::max),
            ),
            (
                "speed_max",
                self.cubes.iter().map(|c| c.v.norm()).fold(0.0, f64::max),
            ),
            ("penetration", self.penetration()),
            ("z_bottom", b.p.z),
            ("z_top", t.p.z),
            ("offset", self.offset()),
            ("collapsed", f64::from(u8::from(self.collapsed()))),
        ]
    }

    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        let masses = self.config.masses();
        let (mb, mt) = (masses[0], masses[1]);
        // The load on the bottom cube: every cube above it.
        let above: f64 = masses[1..].iter().sum();
        let c = &self.config;
        // The normal diagonal entry of W = J A^-1 J' for a contact between the cubes at rest:
        // each cube contributes 1/m for the translation and |arm x n|^2 / I = 2 h^2 6 / (m a^2)
        // for the rotation (arm (+-h, +-h, -+a/2), n = e_z, h = a/2 - r).
        let h = 0.5 * c.side - c.corner_radius();
        let w = (1.0 / mb + 1.0 / mt) * (1.0 + 12.0 * h * h / (c.side * c.side));
        let load = 0.25 * above * c.gravity * c.dt;
        vec![
            ("mass_bottom", mb),
            ("mass_top", mt),
            ("drift_exact", 0.0),
            // Each floor contact carries a quarter of every weight at rest.
            ("floor_load_exact", 0.25 * (mb + above) * c.gravity),
            ("pair_delassus_normal", w),
            // SAP's near-rigid regularisation R_n = beta^2 w / (4 pi^2) (Castro et al. eq. 29,
            // beta = 1) with the bias -phi / dt holds the top cube's quarter load gamma at rest
            // with the overlap phi = dt R_n gamma (m): a heavy cube on a light one sinks in.
            (
                "sap_penetration_estimate",
                c.dt * w / (4.0 * std::f64::consts::PI.powi(2)) * load,
            ),
        ]
    }

    fn finished(&self) -> bool {
        self.steps >= self.config.steps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(ratio: f64) -> CubeStack {
        CubeStack::new(&StackConfig {
            mass_ratio: ratio,
            ..StackConfig::default()
        })
        .unwrap()
    }

    /// The impulses that hold the stack at rest exactly: a quarter of both loads on each floor
    /// contact and of the top cube's on each cube-on-cube contact, over one step.
    fn static_impulses(step: &ContactStep, config: &StackConfig) -> Vec<f64> {
        let masses = config.masses();
        let g = config.gravity * config.dt;
        step.contacts
            .iter()
            .flat_map(|c| {
                let above = match c.key {
                    ContactKey::PairPoint { a, .. } => a,
                    _ => 0,
                };
                [0.25 * masses[above..].iter().sum::<f64>() * g, 0.0, 0.0]
            })
            .collect()
    }

    /// At rest the stack has four floor contacts and four sphere pairs, all at zero gap, and
    /// the exact static impulses (a quarter of each load per contact, over one step) make every
    /// contact velocity zero: `u = W r + q = 0`.
    #[test]
    fn static_impulses_hold_the_stack_exactly() {
        for ratio in [1.0, 1e3, 1e6] {
            let s = stack(ratio);
            let step = s.contact_step().unwrap();
            assert_eq!(step.contacts.len(), 8, "ratio {ratio}");
            assert!(step.contacts.iter().all(|c| c.gap.abs() < 1e-15));
            let (mb, mt) = (s.config.masses()[0], s.config.masses()[1]);
            let g = s.config.gravity * s.config.dt;
            let r = static_impulses(&step, &s.config);
            let u = step.velocities(&r).unwrap();
            let scale = (mb + mt) * g;
            assert!(
                u.iter().all(|x| x.abs() < 1e-9 * scale.max(1.0)),
                "ratio {ratio}: {u:?}"
            );
            let mut moved = s.clone();
            moved.advance(&step, &r).unwrap();
            let obs = moved.observables();
            let get = |k: &str| obs.iter().find(|o| o.0 == k).unwrap().1;
            assert!(get("drift_top") < 1e-12 && get("drift_bottom") < 1e-12);
            assert!(get("penetration") < 1e-12);
        }
    }

    /// The Jacobian of a cube-on-cube contact gives the top sphere's velocity relative to the
    /// bottom one's: move the top cube up by `v` and the normal row reads `v`; move both
    /// together and it reads zero.
    #[test]
    fn pair_rows_measure_relative_velocity() {
        let s = stack(10.0);
        let step = s.contact_step().unwrap();
        let g = step.problem.generalized().unwrap();
        let dense = g.j.to_dense();
        let pair = step
            .contacts
            .iter()
            .position(|c| matches!(c.key, ContactKey::PairPoint { .. }))
            .unwrap();
        let mut up = [0.0; 12];
        up[8] = 0.3;
        let n: f64 = (0..12).map(|c| dense[(3 * pair, c)] * up[c]).sum();
        assert!((n - 0.3).abs() < 1e-12);
        let mut both = [0.0; 12];
        both[2] = 0.3;
        both[8] = 0.3;
        let n: f64 = (0..12).map(|c| dense[(3 * pair, c)] * both[c]).sum();
        assert!(n.abs() < 1e-12);
        assert_eq!(contact_frame(Vector3::z()), step.contacts[pair].frame);
    }

    /// Without contact impulses the stack falls freely; the penetration then grows as
    /// `g dt^2` after one step.
    #[test]
    fn without_impulses_the_stack_sinks_by_g_dt_squared() {
        let mut s = stack(1.0);
        let step = s.contact_step().unwrap();
        let r = vec![0.0; 3 * step.contacts.len()];
        s.advance(&step, &r).unwrap();
        let expect = s.config.gravity * s.config.dt * s.config.dt;
        assert!(
            (s.penetration() - expect).abs() < 1e-15,
            "{}",
            s.penetration()
        );
    }

    /// The pair contact's Delassus diagonal is the one of the step's own `W`, and the SAP
    /// penetration estimate grows with the mass ratio.
    #[test]
    fn the_pair_delassus_constant_matches_the_step() {
        let s = stack(100.0);
        let step = s.contact_step().unwrap();
        let pair = step
            .contacts
            .iter()
            .position(|c| matches!(c.key, ContactKey::PairPoint { .. }))
            .unwrap();
        let local = step.problem.local().unwrap();
        let w = local.dense_w()[(3 * pair, 3 * pair)];
        let get = |s: &CubeStack, k: &str| s.constants().iter().find(|c| c.0 == k).unwrap().1;
        assert!(
            (get(&s, "pair_delassus_normal") - w).abs() < 1e-9 * w,
            "{w}"
        );
        assert!(
            get(&stack(1e6), "sap_penetration_estimate")
                > 1e3 * get(&stack(1.0), "sap_penetration_estimate")
        );
    }

    /// On the face the top cube rests on four face contacts at zero gap under the bottom
    /// cube's top spheres' places, the exact static impulses hold it, and moving the top cube
    /// sideways keeps the face's normal (a sphere pair's would tilt).
    #[test]
    fn on_the_face_the_normals_stay_vertical() {
        let config = StackConfig {
            mass_ratio: 1e3,
            resting: Resting::Face,
            ..StackConfig::default()
        };
        let mut s = CubeStack::new(&config).unwrap();
        let step = s.contact_step().unwrap();
        assert_eq!(step.contacts.len(), 8);
        assert!(step.contacts.iter().all(|c| c.gap.abs() < 1e-15));
        let (mb, mt) = (config.masses()[0], config.masses()[1]);
        let g = config.gravity * config.dt;
        let u = step.velocities(&static_impulses(&step, &config)).unwrap();
        assert!(u.iter().all(|x| x.abs() < 1e-9 * (mb + mt) * g), "{u:?}");
        s.cubes[1].p.x += 2e-3;
        let moved = s.contact_step().unwrap();
        let pairs: Vec<_> = moved
            .contacts
            .iter()
            .filter(|c| matches!(c.key, ContactKey::PairPoint { .. }))
            .collect();
        assert_eq!(pairs.len(), 4);
        assert!(pairs.iter().all(|c| c.frame == contact_frame(Vector3::z())));
        let mut spheres = CubeStack::new(&StackConfig::default()).unwrap();
        spheres.cubes[1].p.x += 2e-3;
        let tilted = spheres.contact_step().unwrap();
        let pairs: Vec<_> = tilted
            .contacts
            .iter()
            .filter(|c| matches!(c.key, ContactKey::PairPoint { .. }))
            .collect();
        assert_eq!(pairs.len(), 4);
        assert!(pairs.iter().all(|c| c.frame != contact_frame(Vector3::z())));
    }

    /// The collapse test: standing at rest, collapsed when the top cube is a corner radius off,
    /// below the bottom one, or sunk by more than a sphere's diameter.
    #[test]
    fn a_collapse_is_told_from_a_penetration() {
        let s = stack(1e3);
        assert!(!s.collapsed());
        let r = s.config.corner_radius();
        let with = |f: &dyn Fn(&mut CubeStack)| {
            let mut t = s.clone();
            f(&mut t);
            t.collapsed()
        };
        assert!(!with(&|t| t.cubes[1].p.x += 0.9 * r));
        assert!(with(&|t| t.cubes[1].p.x += 1.1 * r));
        assert!(!with(&|t| t.cubes[1].p.z -= 1.9 * r));
        assert!(with(&|t| t.cubes[1].p.z -= 2.1 * r));
        assert!(with(&|t| t.cubes[1].p.z = t.cubes[0].p.z - 1e-3));
    }

    /// A tower of five cubes face on face: four floor contacts and four face contacts per
    /// cube above the first, all at zero gap; the exact static impulses (a quarter of the
    /// weight above each interface) hold it; one cube slid off the one under it is a collapse
    /// wherever it is in the tower.
    #[test]
    fn a_tower_stands_on_its_faces() {
        let config = StackConfig {
            count: 5,
            resting: Resting::Face,
            ..StackConfig::default()
        };
        let s = CubeStack::new(&config).unwrap();
        let step = s.contact_step().unwrap();
        assert_eq!(step.contacts.len(), 4 + 4 * 4);
        assert!(step.contacts.iter().all(|c| c.gap.abs() < 1e-15));
        let u = step.velocities(&static_impulses(&step, &config)).unwrap();
        assert!(u.iter().all(|x| x.abs() < 1e-12), "{u:?}");
        let get = |k: &str| s.constants().iter().find(|c| c.0 == k).unwrap().1;
        assert!((get("floor_load_exact") - 0.25 * 5.0 * 9.81).abs() < 1e-12);
        assert!(!s.collapsed());
        let mut slid = s.clone();
        slid.cubes[2].p.x += 1.1 * config.corner_radius();
        assert!(slid.collapsed());
        let mut moved = s.clone();
        moved
            .advance(&step, &static_impulses(&step, &config))
            .unwrap();
        let obs = moved.observables();
        let value = |k: &str| obs.iter().find(|o| o.0 == k).unwrap().1;
        assert!(value("drift_max") < 1e-12 && value("penetration") < 1e-12);
        let e = CubeStack::new(&StackConfig {
            count: 1,
            ..StackConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("count"), "{e}");
    }

    /// Bad parameters name the key.
    #[test]
    fn bad_parameters_name_the_key() {
        let e = StackConfig::from_table(&"mass_ratio = -1.0".parse().unwrap())
            .and_then(|c| c.validate())
            .unwrap_err()
            .to_string();
        assert!(e.contains("mass_ratio"), "{e}");
        let e = StackConfig::from_table(&"margin = 1.0".parse().unwrap())
            .and_then(|c| c.validate())
            .unwrap_err()
            .to_string();
        assert!(e.contains("margin"), "{e}");
        let e = StackConfig::from_table(&"heavy = 1.0".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("heavy"), "{e}");
    }
}
