//! The pile: `count` cubes on corner spheres dropped into a box and left to settle (issue 44,
//! after the many-contact scenes of Le Lidec et al., "Contact Models in Robotics: a Comparative
//! Analysis", T-RO 2024). Many contacts at once, impacts and a pile at rest: the questions a
//! one-body setup does not ask. There is no closed form for the motion; the exact answer's
//! properties are measured instead: no overlap, and at rest no kinetic energy.
//!
//! # The scene
//!
//! Cubes of side `a` (0.1 m) and mass `m` (1 kg, density 1000 kg/m^3, as the clutter scene's
//! boxes), inertia `m a^2 / 6`, each with the eight corner spheres of radius `r = a / 50` of
//! [`super`]; a box open at the top whose floor and four walls are planes: the floor `z = 0`
//! and the walls `x = +-L/2`, `y = +-L/2` (`container`, `L = 0.5` m), normals into the box;
//! friction `mu` (0.5) everywhere.
//!
//! Cube against box: a corner sphere of cube `i` touches the solid box of cube `j` (`i != j`);
//! boxes do not touch boxes and spheres do not touch spheres (so an edge crossing an edge
//! without a corner inside is not a contact, the corner-sphere convention's limit). Cube
//! against the container: a corner sphere touches a plane.
//!
//! # The drop: a layout without a random generator
//!
//! Cube `k` gets a slot, level by level: level `l` holds the columns `(ix, iy)` of a 3 x 3 grid
//! with `ix + iy + l` even (a checkerboard, five columns then four), at
//! `x = 0.3 L (ix - 1)`, `y = 0.3 L (iy - 1)`, `z = first_level + level_spacing l`
//! (0.15 and 0.18 m: wider than a cube's diagonal, so no two cubes overlap at the start), then a
//! jitter and an orientation from fixed low-discrepancy sequences of `k` (`frac(k c)` for
//! irrational `c`, [`layout`]): a jitter up to `a / 10` on `x` and `y`, a rotation by an angle
//! in `[-pi, pi]` about an axis spread over the sphere. No generator, so the peers' harness
//! (`experiments/peers/fidelity.py`) builds the same pile to the last bit of its arithmetic.
//! Every cube starts at rest.
//!
//! # Contacts and the step
//!
//! As [`super`]: a contact while its gap is below `margin` plus the speculative reach
//! `dt max(0, mu |v*_t| - v*_n)` at the step's free velocity (here the velocity of the touching
//! point relative to the other body); frames normal first, the normal from the box or plane
//! towards the sphere's cube; the rows of `J` give the sphere cube's point velocity minus the
//! box cube's. Sphere against box: the sphere's centre `p` in the box's frame, clamped to the
//! box, gives the nearest point `q`; outside (`p != q`) the gap is `|p - q| - r` along
//! `(p - q) / |p - q|`; inside, the nearest face's distance, negative. Symplectic Euler in
//! impulses, rigid contacts with the speculative gap, world-frame angular velocities (isotropic
//! inertia: no gyroscopic term).
//!
//! # Observables
//!
//! `t`; `x`, `y`, `z` (the pile's centre of mass, m); `kinetic_energy` (J, all cubes);
//! `speed_max` (the fastest centre, m/s); `penetration` (the largest overlap after the step,
//! sphere in box or sphere through a plane, m); `cube_contacts` (corner spheres within the
//! margin of another cube's box: cubes resting or landing on cubes); `height` (the highest
//! centre, m); `escaped` (cubes whose centre left the box).

use contactlab_core::generalized::GeneralizedProblem;
use contactlab_core::StepProblem;
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use super::cubes::{self, Cube, Found};
use super::CORNER_RADIUS_FRACTION;
use crate::assemble::Gap;
use crate::error::SceneError;
use crate::scene::{contact_frame, Contact, ContactKey, ContactStep, Scene};

fn default_dt() -> f64 {
    1e-3
}
fn default_duration() -> f64 {
    2.0
}
fn default_count() -> usize {
    20
}
fn default_side() -> f64 {
    0.1
}
fn default_mass() -> f64 {
    1.0
}
fn default_mu() -> f64 {
    0.5
}
fn default_gravity() -> f64 {
    9.81
}
fn default_margin() -> f64 {
    1e-3
}
fn default_container() -> f64 {
    0.5
}
fn default_first_level() -> f64 {
    0.15
}
fn default_level_spacing() -> f64 {
    0.18
}

/// The pile's parameters (`[scene.params]` of `kind = "cube_pile"`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PileConfig {
    /// Time step `dt` (s).
    #[serde(default = "default_dt")]
    pub dt: f64,
    /// Simulated span (s).
    #[serde(default = "default_duration")]
    pub duration: f64,
    /// How many cubes drop.
    #[serde(default = "default_count")]
    pub count: usize,
    /// Every cube's side `a` (m).
    #[serde(default = "default_side")]
    pub side: f64,
    /// Every cube's mass (kg).
    #[serde(default = "default_mass")]
    pub mass: f64,
    /// Friction everywhere.
    #[serde(default = "default_mu")]
    pub mu: f64,
    /// Gravitational acceleration `g` (m/s^2).
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// A prediction distance on top of the speculative reach (m).
    #[serde(default = "default_margin")]
    pub margin: f64,
    /// The box's inner side `L` (m).
    #[serde(default = "default_container")]
    pub container: f64,
    /// The lowest level's centre height (m).
    #[serde(default = "default_first_level")]
    pub first_level: f64,
    /// The height between levels (m).
    #[serde(default = "default_level_spacing")]
    pub level_spacing: f64,
    /// Ends the run once the largest overlap after a step passes this (m; none: never): a
    /// solver that lets cubes sink that far into each other has broken the pile, and its later
    /// steps, on a heap of interpenetrating cubes, say nothing more but cost the most.
    #[serde(default)]
    pub stop_overlap: Option<f64>,
}

impl Default for PileConfig {
    fn default() -> Self {
        PileConfig {
            dt: default_dt(),
            duration: default_duration(),
            count: default_count(),
            side: default_side(),
            mass: default_mass(),
            mu: default_mu(),
            gravity: default_gravity(),
            margin: default_margin(),
            container: default_container(),
            first_level: default_first_level(),
            level_spacing: default_level_spacing(),
            stop_overlap: None,
        }
    }
}

impl PileConfig {
    /// Parses a `[scene.params]` table; unknown keys are errors naming the key.
    pub fn from_table(params: &toml::Table) -> Result<PileConfig, SceneError> {
        crate::params::parse_params(params)
    }

    /// Checks every parameter's range; the error names the key.
    pub fn validate(&self) -> Result<(), SceneError> {
        crate::params::check_ranges(
            &[
                ("dt", self.dt),
                ("duration", self.duration),
                ("side", self.side),
                ("mass", self.mass),
                ("gravity", self.gravity),
                ("container", self.container),
            ],
            &[("mu", self.mu), ("margin", self.margin)],
        )?;
        let bad = |key: &'static str, message: String| Err(SceneError::Param { key, message });
        if let Some(o) = self.stop_overlap {
            if !(o.is_finite() && o > 0.0) {
                return bad(
                    "stop_overlap",
                    format!("must be a positive number, got {o}"),
                );
            }
        }
        if self.count == 0 {
            return bad("count", "must be at least 1".into());
        }
        let diagonal = 3f64.sqrt() * self.side;
        if self.level_spacing <= diagonal || self.first_level <= 0.5 * diagonal {
            return bad(
                "level_spacing",
                format!(
                    "levels must clear a cube's diagonal {diagonal} m (first_level above half of it)"
                ),
            );
        }
        // The outer columns, jittered and turned, must start inside the walls.
        if 0.3 * self.container + 0.1 * self.side + 0.5 * diagonal >= 0.5 * self.container {
            return bad(
                "container",
                format!(
                    "{} m is too narrow for cubes of {} m",
                    self.container, self.side
                ),
            );
        }
        Ok(())
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

/// The fractional part of `k c`: a low-discrepancy sequence for irrational `c`.
fn sequence(k: usize, c: f64) -> f64 {
    (k as f64 * c).fract()
}

/// Cube `k`'s starting centre and orientation (see the module doc).
pub fn layout(config: &PileConfig, k: usize) -> (Vector3<f64>, UnitQuaternion<f64>) {
    let (mut level, mut left) = (0usize, k);
    let slot = loop {
        let columns: Vec<(usize, usize)> = (0..3)
            .flat_map(|iy| (0..3).map(move |ix| (ix, iy)))
            .filter(|(ix, iy)| (ix + iy + level) % 2 == 0)
            .collect();
        if left < columns.len() {
            break columns[left];
        }
        left -= columns.len();
        level += 1;
    };
    let spread = 0.3 * config.container;
    let jitter = |c: f64| 0.1 * config.side * (2.0 * sequence(k, c) - 1.0);
    let centre = Vector3::new(
        spread * (slot.0 as f64 - 1.0) + jitter(0.414_213_562_373_095_1),
        spread * (slot.1 as f64 - 1.0) + jitter(0.732_050_807_568_877_2),
        config.first_level + config.level_spacing * level as f64,
    );
    // An axis spread over the sphere (uniform height, uniform azimuth) and an angle.
    let height = 2.0 * sequence(k, 0.754_877_666_246_692_7) - 1.0;
    let azimuth = 2.0 * std::f64::consts::PI * sequence(k, 0.569_840_290_998_053_2);
    let ring = (1.0 - height * height).sqrt();
    let axis = Vector3::new(ring * azimuth.cos(), ring * azimuth.sin(), height);
    let angle = std::f64::consts::PI * (2.0 * sequence(k, 0.618_033_988_749_894_9) - 1.0);
    (centre, UnitQuaternion::from_scaled_axis(angle * axis))
}

/// A plane of the container: `n . x = offset`, `n` into the box.
struct Plane {
    normal: Vector3<f64>,
    offset: f64,
}

/// The pile (see the module doc).
#[derive(Debug, Clone)]
pub struct CubePile {
    /// The parameters.
    pub config: PileConfig,
    /// The cubes.
    pub cubes: Vec<Cube>,
    /// The corner spheres' centres in a cube's frame.
    pub corners: Vec<Vector3<f64>>,
    /// Steps taken.
    pub steps: usize,
}

impl CubePile {
    /// The cubes at their starting slots, at rest.
    pub fn new(config: &PileConfig) -> Result<CubePile, SceneError> {
        config.validate()?;
        let h = 0.5 * config.side - config.corner_radius();
        let sign = |k: usize, bit: usize| if k >> bit & 1 == 1 { h } else { -h };
        let corners = (0..8)
            .map(|k| Vector3::new(sign(k, 0), sign(k, 1), sign(k, 2)))
            .collect();
        let cubes = (0..config.count)
            .map(|k| {
                let (p, q) = layout(config, k);
                Cube::at_rest(config.mass, p, q)
            })
            .collect();
        Ok(CubePile {
            config: config.clone(),
            cubes,
            corners,
            steps: 0,
        })
    }

    /// The container's five planes: the floor, then the walls at `x = -+L/2`, `y = -+L/2`.
    fn planes(&self) -> [Plane; 5] {
        let half = 0.5 * self.config.container;
        let wall = |normal: Vector3<f64>| Plane {
            normal,
            offset: -half,
        };
        [
            Plane {
                normal: Vector3::z(),
                offset: 0.0,
            },
            wall(Vector3::x()),
            wall(-Vector3::x()),
            wall(Vector3::y()),
            wall(-Vector3::y()),
        ]
    }

    /// Corner `k` of cube `body` in world coordinates.
    fn sphere(&self, body: usize, k: usize) -> Vector3<f64> {
        let c = &self.cubes[body];
        c.p + c.q * self.corners[k]
    }

    /// The free velocity of the point `p` of cube `body` (`v + dt g` and `omega x arm`).
    fn free_point_velocity(&self, body: usize, p: &Vector3<f64>) -> Vector3<f64> {
        let c = &self.cubes[body];
        c.v + self.config.dt * self.gravity() + c.w.cross(&(p - c.p))
    }

    /// Gravity as a vector.
    fn gravity(&self) -> Vector3<f64> {
        Vector3::new(0.0, 0.0, -self.config.gravity)
    }

    /// The speculative reach of a contact with normal `n` whose relative free velocity is `u`.
    fn reach(&self, n: &Vector3<f64>, u: &Vector3<f64>) -> f64 {
        let un = n.dot(u);
        let ut = (u - un * n).norm();
        self.config.dt * (self.config.mu * ut - un).max(0.0)
    }

    /// The gap of a sphere of centre `c` against cube `j`'s box, and the normal from the box
    /// towards the sphere (see the module doc).
    fn against_box(&self, c: &Vector3<f64>, j: usize) -> (f64, Vector3<f64>) {
        let (r, half) = (self.config.corner_radius(), 0.5 * self.config.side);
        let b = &self.cubes[j];
        let p = b.q.inverse() * (c - b.p);
        let q = p.map(|x| x.clamp(-half, half));
        let d = p - q;
        if d.norm() > 0.0 {
            return (d.norm() - r, b.q * (d / d.norm()));
        }
        // Inside: the nearest face.
        let (axis, depth) = (0..3)
            .map(|k| (k, half - p[k].abs()))
            .fold((0, f64::INFINITY), |m, x| if x.1 < m.1 { x } else { m });
        let mut n = Vector3::zeros();
        n[axis] = if p[axis] < 0.0 { -1.0 } else { 1.0 };
        (-depth - r, b.q * n)
    }

    /// Every contact whose gap is below `margin` plus its reach (`with_reach`), else below
    /// `margin` alone.
    fn contacts(&self, margin: f64, with_reach: bool) -> Vec<Found> {
        let r = self.config.corner_radius();
        let mut out = Vec::new();
        let planes = self.planes();
        for i in 0..self.cubes.len() {
            for k in 0..8 {
                let c = self.sphere(i, k);
                for (o, plane) in planes.iter().enumerate() {
                    let n = plane.normal;
                    let point = c - r * n;
                    let reach = if with_reach {
                        self.reach(&n, &self.free_point_velocity(i, &point))
                    } else {
                        0.0
                    };
                    let gap = n.dot(&c) - plane.offset - r;
                    if gap < margin + reach {
                        out.push(Found {
                            contact: Contact {
                                key: ContactKey::WallPoint {
                                    body: i,
                                    obstacle: o,
                                    feature: k as u64,
                                },
                                frame: contact_frame(n),
                                gap,
                            },
                            mu: self.config.mu,
                            bodies: vec![(i, 1.0, point - self.cubes[i].p)],
                        });
                    }
                }
                self.box_contacts(i, k, margin, with_reach, &mut out);
            }
        }
        out
    }

    /// Corner `k` of cube `i` against every other cube's box close enough to reach.
    fn box_contacts(
        &self,
        i: usize,
        k: usize,
        margin: f64,
        with_reach: bool,
        out: &mut Vec<Found>,
    ) {
        let (r, a) = (self.config.corner_radius(), self.config.side);
        let c = self.sphere(i, k);
        for j in 0..self.cubes.len() {
            // A sphere farther than the box's half diagonal plus its radius cannot touch it
            // within a step's reach (bounded by the relative speed over the step).
            let relative = (self.cubes[i].v - self.cubes[j].v).norm()
                + (self.cubes[i].w.norm() + self.cubes[j].w.norm()) * a;
            let bound = 0.5 * 3f64.sqrt() * a + r + margin + self.config.dt * (relative + 1.0);
            if j == i || (c - self.cubes[j].p).norm() > bound {
                continue;
            }
            let (gap, n) = self.against_box(&c, j);
            let point = c - r * n;
            let reach = if with_reach {
                let u = self.free_point_velocity(i, &point) - self.free_point_velocity(j, &point);
                self.reach(&n, &u)
            } else {
                0.0
            };
            if gap >= margin + reach {
                continue;
            }
            out.push(Found {
                contact: Contact {
                    key: ContactKey::PairPoint {
                        a: i,
                        b: j,
                        feature: k as u64,
                    },
                    frame: contact_frame(n),
                    gap,
                },
                mu: self.config.mu,
                bodies: vec![
                    (i, 1.0, point - self.cubes[i].p),
                    (j, -1.0, point - self.cubes[j].p),
                ],
            });
        }
    }

    /// The largest overlap of a sphere with a box or a plane.
    pub fn penetration(&self) -> f64 {
        self.contacts(0.0, false)
            .iter()
            .map(|f| -f.contact.gap)
            .fold(0.0, f64::max)
    }

    /// The kinetic energy of every cube (J).
    pub fn kinetic_energy(&self) -> f64 {
        let side = self.config.side;
        (self.cubes.iter())
            .map(|c| 0.5 * c.mass * c.v.norm_squared() + 0.5 * c.inertia(side) * c.w.norm_squared())
            .sum()
    }

    /// How many cubes' centres have left the box.
    pub fn escaped(&self) -> usize {
        let half = 0.5 * self.config.container;
        (self.cubes.iter())
            .filter(|c| c.p.x.abs() > half || c.p.y.abs() > half || c.p.z < 0.0)
            .count()
    }

    /// The pile's centre of mass (m): the mean of the cube centres, every cube of one mass. The
    /// time-step consistency sweep follows it: which cube lands where is chaotic after the
    /// first impacts, the pile's mass is not.
    pub fn centre_of_mass(&self) -> Vector3<f64> {
        let n = self.cubes.len().max(1) as f64;
        self.cubes.iter().map(|c| c.p).sum::<Vector3<f64>>() / n
    }

    /// The simulated time `steps dt` (s).
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.config.dt
    }

    /// The generalized problem of these contacts (rigid, speculative gaps).
    fn problem(&self, found: &[Found], free: &[f64]) -> Result<GeneralizedProblem, SceneError> {
        let c = &self.config;
        cubes::problem(&self.cubes, c.side, found, free, (c.dt, Gap::Speculative))
    }
}

impl Scene for CubePile {
    fn contact_step(&self) -> Result<ContactStep, SceneError> {
        let found = self.contacts(self.config.margin, true);
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
        let com = self.centre_of_mass();
        // Within the margin: touching, or overlapping (the penetration's contacts, gap < 0).
        let near = self.contacts(self.config.margin, false);
        let on_cubes = near
            .iter()
            .filter(|f| matches!(f.contact.key, ContactKey::PairPoint { .. }))
            .count();
        vec![
            ("t", self.time()),
            ("x", com.x),
            ("y", com.y),
            ("z", com.z),
            ("kinetic_energy", self.kinetic_energy()),
            (
                "speed_max",
                self.cubes.iter().map(|c| c.v.norm()).fold(0.0, f64::max),
            ),
            (
                "penetration",
                near.iter().map(|f| -f.contact.gap).fold(0.0, f64::max),
            ),
            ("cube_contacts", on_cubes as f64),
            (
                "height",
                self.cubes.iter().map(|c| c.p.z).fold(f64::MIN, f64::max),
            ),
            ("escaped", self.escaped() as f64),
        ]
    }

    fn parameters(&self) -> Result<toml::Table, SceneError> {
        crate::params::config_table(&self.config)
    }

    fn constants(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("kinetic_energy_exact", 0.0),
            ("penetration_exact", 0.0),
            // The weight of one cube over one step: the scale of a resting contact's impulse.
            (
                "cube_weight_impulse",
                self.config.mass * self.config.gravity * self.config.dt,
            ),
        ]
    }

    fn finished(&self) -> bool {
        let broken = (self.config.stop_overlap).is_some_and(|o| self.penetration() > o);
        self.steps >= self.config.steps() || broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pile(count: usize) -> CubePile {
        CubePile::new(&PileConfig {
            count,
            ..PileConfig::default()
        })
        .unwrap()
    }

    /// The layout puts every cube inside the box, clear of the floor, the walls and every other
    /// cube (no contact at all at the start), five columns then four per level.
    #[test]
    fn the_cubes_start_apart_inside_the_box() {
        let p = pile(50);
        assert!(p.contacts(1e-3, false).is_empty());
        assert_eq!(p.escaped(), 0);
        let level = |k: usize| ((p.cubes[k].p.z - 0.15) / 0.18).round() as usize;
        assert_eq!((level(4), level(5), level(8), level(9)), (0, 1, 1, 2));
        // The same layout twice: nothing random.
        let again = pile(50);
        assert!(p
            .cubes
            .iter()
            .zip(&again.cubes)
            .all(|(a, b)| a.p == b.p && a.q == b.q));
    }

    /// Before the first contact the pile's centre of mass falls as one body under symplectic
    /// Euler, `z_k = z_0 - g dt^2 k (k + 1) / 2`, and is what the `x`, `y`, `z` observables
    /// report.
    #[test]
    fn the_centre_of_mass_falls_freely_before_the_first_contact() {
        let mut p = pile(20);
        let (g, dt) = (p.config.gravity, p.config.dt);
        let start = p.centre_of_mass();
        let steps = 10;
        for _ in 0..steps {
            let step = p.contact_step().unwrap();
            assert!(step.contacts.is_empty());
            p.advance(&step, &[]).unwrap();
        }
        let k = steps as f64;
        let fallen = Vector3::new(
            start.x,
            start.y,
            start.z - g * dt * dt * k * (k + 1.0) / 2.0,
        );
        assert!((p.centre_of_mass() - fallen).norm() < 1e-14);
        let seen: std::collections::BTreeMap<_, _> = p.observables().into_iter().collect();
        assert_eq!(
            [seen["x"], seen["y"], seen["z"]],
            [fallen.x, fallen.y, p.centre_of_mass().z]
        );
    }

    /// `stop_overlap` ends the run once a sphere sinks that far into a box, and not before;
    /// it must be positive.
    #[test]
    fn a_broken_pile_stops_at_its_overlap_bound() {
        let mut p = CubePile::new(&PileConfig {
            count: 2,
            stop_overlap: Some(0.01),
            ..PileConfig::default()
        })
        .unwrap();
        assert!(!p.finished());
        p.cubes[1].p = p.cubes[0].p + Vector3::new(0.0, 0.0, 0.05);
        assert!(p.penetration() > 0.01 && p.finished());
        let bad = PileConfig {
            stop_overlap: Some(-1.0),
            ..PileConfig::default()
        };
        assert!(matches!(
            CubePile::new(&bad),
            Err(SceneError::Param {
                key: "stop_overlap",
                ..
            })
        ));
    }

    /// A sphere against a box: outside along the nearest point, inside through the nearest face,
    /// the normal pointing from the box to the sphere.
    #[test]
    fn a_sphere_meets_a_box_at_its_nearest_point() {
        let mut p = pile(2);
        p.cubes[1].p = Vector3::zeros();
        p.cubes[1].q = UnitQuaternion::identity();
        let r = p.config.corner_radius();
        let (gap, n) = p.against_box(&Vector3::new(0.0, 0.0, 0.06 + r), 1);
        assert!((gap - 0.01).abs() < 1e-15 && (n - Vector3::z()).norm() < 1e-15);
        let (gap, n) = p.against_box(&Vector3::new(0.06, 0.06, 0.0), 1);
        assert!((gap - (2f64.sqrt() * 0.01 - r)).abs() < 1e-15);
        assert!((n - Vector3::new(1.0, 1.0, 0.0) / 2f64.sqrt()).norm() < 1e-15);
        let (gap, n) = p.against_box(&Vector3::new(0.0, -0.048, 0.01), 1);
        assert!((gap - (-0.002 - r)).abs() < 1e-15 && (n + Vector3::y()).norm() < 1e-15);
    }

    /// Two cubes resting face on face on the floor: the impulses that carry their weights make
    /// every contact velocity zero, and the rows of a pair contact give the relative velocity.
    #[test]
    fn a_cube_on_a_cube_is_held_by_its_corner_spheres() {
        let mut p = pile(2);
        let (a, r) = (p.config.side, p.config.corner_radius());
        for (k, cube) in p.cubes.iter_mut().enumerate() {
            cube.p = Vector3::new(0.0, 0.0, (k as f64 + 0.5) * a);
            cube.q = UnitQuaternion::identity();
        }
        // Face on face, each cube's corner spheres touch the other's box (eight pair contacts,
        // gap 0): the top cube's carry its weight, the bottom cube's none.
        let step = p.contact_step().unwrap();
        assert!(step.contacts.iter().all(|c| c.gap.abs() < 1e-15 && r > 0.0));
        let floor = step
            .contacts
            .iter()
            .filter(|c| matches!(c.key, ContactKey::WallPoint { .. }));
        let pairs = step
            .contacts
            .iter()
            .filter(|c| matches!(c.key, ContactKey::PairPoint { .. }));
        assert_eq!((floor.count(), pairs.count()), (4, 8));
        // The observables count the eight as cubes on cubes, and see no overlap.
        let seen: std::collections::BTreeMap<_, _> = p.observables().into_iter().collect();
        assert_eq!(
            (seen["cube_contacts"], seen["penetration"]),
            (8.0, p.penetration())
        );
        let w = p.config.mass * p.config.gravity * p.config.dt;
        let impulses: Vec<f64> = step
            .contacts
            .iter()
            .flat_map(|c| {
                let load = match c.key {
                    ContactKey::WallPoint { .. } => 0.5 * w,
                    ContactKey::PairPoint { a: 1, .. } => 0.25 * w,
                    _ => 0.0,
                };
                [load, 0.0, 0.0]
            })
            .collect();
        let u = step.velocities(&impulses).unwrap();
        assert!(u.iter().all(|x| x.abs() < 1e-12), "{u:?}");
    }

    /// Dropped, eight cubes (two levels) land and come to rest inside the box in a second with
    /// almost no overlap (SAP, near-rigid).
    #[test]
    fn eight_cubes_settle_in_the_box() {
        let spec = crate::testing::TestSolver::new("sap", "newton-merit", 1e-8, 200);
        let mut p = CubePile::new(&PileConfig {
            count: 8,
            duration: 1.0,
            ..PileConfig::default()
        })
        .unwrap();
        let mut warm: Option<Vec<f64>> = None;
        let mut most = 0.0f64;
        while !p.finished() {
            let cs = p.contact_step().unwrap();
            let w = warm.filter(|w| w.len() == 3 * cs.contacts.len());
            let sol = spec.solve(&cs.problem, w.as_deref());
            p.advance(&cs, &sol.r).unwrap();
            most = most.max(p.penetration());
            warm = Some(sol.r);
        }
        let (ke, escaped) = (p.kinetic_energy(), p.escaped());
        eprintln!(
            "pile: ke {ke:.3e} J, penetration {most:.3e} m, height {:.3}",
            p.cubes.iter().map(|c| c.p.z).fold(0.0, f64::max)
        );
        assert_eq!(escaped, 0);
        assert!(ke < 1e-2, "{ke}");
        assert!(most < 2e-3, "{most}");
    }

    /// Bad parameters name the key.
    #[test]
    fn bad_parameters_name_the_key() {
        for (text, key) in [
            ("count = 0", "count"),
            ("level_spacing = 0.1", "level_spacing"),
            ("container = 0.2", "container"),
            ("mu = -1.0", "mu"),
            ("heap = 1", "heap"),
        ] {
            let e = PileConfig::from_table(&text.parse().unwrap())
                .and_then(|c| c.validate())
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
    }
}
