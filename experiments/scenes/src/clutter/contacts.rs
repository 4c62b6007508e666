//! Collision detection: the broad phase (sweep and prune), parry's contact manifolds reduced
//! to at most [`MANIFOLD_POINTS`] points, and the contacts they make (module doc of
//! [`crate::clutter`]).

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::math::{Pose, Vector};
use parry3d_f64::query::details::{
    contact_manifold_ball_ball, contact_manifold_convex_ball, contact_manifold_cuboid_cuboid,
    contact_manifold_halfspace_pfm, NormalConstraints,
};
use parry3d_f64::query::ContactManifold;
use parry3d_f64::shape::{Ball, Cuboid, HalfSpace, PackedFeatureId};

use super::body::{to_parry, BodyShape, Obstacle, RigidBody};
use super::config::ClutterConfig;
use crate::scene::{contact_frame, ContactKey};

/// At most this many points per contact manifold.
pub const MANIFOLD_POINTS: usize = 4;
/// Manifold points closer than this (m) are one point.
const DUPLICATE_DISTANCE: f64 = 1e-7;

/// One contact point at the start of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct ClutterContact {
    /// Persistent identity.
    pub key: ContactKey,
    /// The body the normal points towards.
    pub a: usize,
    /// The other body (`None`: an obstacle).
    pub b: Option<usize>,
    /// The contact point (world): the midpoint of the two surfaces' witness points.
    pub point: Vector3<f64>,
    /// Rows `n, t1, t2` (world).
    pub frame: Matrix3<f64>,
    /// Signed distance (negative: overlap).
    pub phi0: f64,
}

/// One point of a manifold, in world coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManifoldPoint {
    /// The contact point.
    pub point: Vector3<f64>,
    /// Signed distance.
    pub phi: f64,
    /// The features in touch (the first shape's id in the high 32 bits).
    pub feature: u64,
}

/// Keeps at most [`MANIFOLD_POINTS`] of a manifold's points (normal `n`), in their given order:
/// near-duplicates merged (the deeper kept), then the deepest point, the one farthest from it in
/// the contact plane, the one spanning the largest triangle with those two, and the one adding
/// the most area outside that triangle (none if all the rest lie inside it).
pub fn reduce_manifold(points: &[ManifoldPoint], n: &Vector3<f64>) -> Vec<ManifoldPoint> {
    let mut kept = Vec::new();
    reduce_into(points, n, &mut kept);
    kept
}

/// [`reduce_manifold`] into `pts` (cleared first), allocating only when `pts` must grow.
fn reduce_into(points: &[ManifoldPoint], n: &Vector3<f64>, pts: &mut Vec<ManifoldPoint>) {
    pts.clear();
    for p in points {
        match pts
            .iter_mut()
            .find(|q| (q.point - p.point).norm() < DUPLICATE_DISTANCE)
        {
            Some(q) if p.phi < q.phi => *q = *p,
            Some(_) => {}
            None => pts.push(*p),
        }
    }
    if pts.len() <= MANIFOLD_POINTS {
        return;
    }
    // In-plane vectors and areas: the normal component does not matter for the spread.
    let flat = |d: Vector3<f64>| d - n * n.dot(&d);
    let argmax = |score: &dyn Fn(&ManifoldPoint) -> f64| {
        let mut best = (0, f64::NEG_INFINITY);
        for (i, p) in pts.iter().enumerate() {
            let s = score(p);
            if s > best.1 {
                best = (i, s);
            }
        }
        best
    };
    let i0 = argmax(&|p| -p.phi).0;
    let p0 = pts[i0].point;
    let i1 = argmax(&|p| flat(p.point - p0).norm()).0;
    let p1 = pts[i1].point;
    let i2 = argmax(&|p| n.dot(&(p1 - p0).cross(&(p.point - p0))).abs()).0;
    let p2 = pts[i2].point;
    let mut keep = [i0, i1, i2, usize::MAX];
    // Orientation of the triangle about n; a point outside edge (e0, e1) has a cross product of
    // the opposite sign.
    let sign = n.dot(&(p1 - p0).cross(&(p2 - p0))).signum();
    let outside = |p: &ManifoldPoint| {
        [(p0, p1), (p1, p2), (p2, p0)]
            .iter()
            .map(|(e0, e1)| (-sign * n.dot(&(e1 - e0).cross(&(p.point - e0)))).max(0.0))
            .sum::<f64>()
    };
    let (i3, area) = argmax(&outside);
    if area > 0.0 {
        keep[3] = i3;
    }
    keep.sort_unstable();
    let mut last = usize::MAX;
    let mut k = 0;
    for &i in keep.iter().filter(|&&i| i != usize::MAX) {
        if i != last {
            pts[k] = pts[i];
            k += 1;
            last = i;
        }
    }
    pts.truncate(k);
}

/// A shape as parry sees it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Geom {
    Ball(Ball),
    Cuboid(Cuboid),
    Ground(HalfSpace),
}

fn from_parry(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

fn pack(f1: PackedFeatureId, f2: PackedFeatureId) -> u64 {
    (u64::from(f1.0) << 32) | u64::from(f2.0)
}

/// The narrow phase's buffers, reused from one pair to the next so that a pair allocates
/// nothing.
#[derive(Default)]
pub(super) struct Narrow {
    /// parry's manifold, cleared before each pair (parry's routines otherwise update the
    /// previous pair's points in place, persistent-manifold style).
    manifold: ContactManifold<(), ()>,
    /// The last pair's points (world), unreduced.
    pub(super) points: Vec<ManifoldPoint>,
}

/// The contact manifold of `g1` at `pose1` against `g2` at `pose2` within `prediction`: the
/// normal (world, from shape 1 towards shape 2) and the points (midpoint, signed distance,
/// features of shape 1 then shape 2), unreduced (the tests' view of [`Narrow`]).
#[cfg(test)]
pub(super) fn manifold(
    g1: Geom,
    pose1: &Pose,
    g2: Geom,
    pose2: &Pose,
    prediction: f64,
) -> Option<(Vector3<f64>, Vec<ManifoldPoint>)> {
    let mut narrow = Narrow::default();
    let n = narrow.pair(g1, pose1, g2, pose2, prediction)?;
    Some((n, narrow.points))
}

impl Narrow {
    /// [`manifold`] into `self.points`, returning the normal (`None`: no points).
    pub(super) fn pair(
        &mut self,
        g1: Geom,
        pose1: &Pose,
        g2: Geom,
        pose2: &Pose,
        prediction: f64,
    ) -> Option<Vector3<f64>> {
        // Cases with the ball or the box second are answered by swapping the shapes and
        // flipping the answer back, so each of parry's routines is called the way round it is
        // written.
        if matches!(
            (g1, g2),
            (Geom::Ball(_), Geom::Cuboid(_) | Geom::Ground(_)) | (Geom::Cuboid(_), Geom::Ground(_))
        ) {
            let n = self.pair(g2, pose2, g1, pose1, prediction)?;
            for p in &mut self.points {
                p.feature = p.feature.rotate_left(32);
            }
            return Some(-n);
        }
        let pos12 = pose1.inv_mul(pose2);
        let m = &mut self.manifold;
        m.clear();
        let none = None::<&dyn NormalConstraints>;
        match (g1, g2) {
            (Geom::Ball(b1), Geom::Ball(b2)) => {
                contact_manifold_ball_ball(&pos12, &b1, &b2, prediction, m)
            }
            (Geom::Cuboid(c1), Geom::Cuboid(c2)) => {
                contact_manifold_cuboid_cuboid(&pos12, &c1, &c2, prediction, m)
            }
            (Geom::Cuboid(c1), Geom::Ball(b2)) => {
                contact_manifold_convex_ball(&pos12, &c1, &b2, none, none, prediction, m, false)
            }
            (Geom::Ground(h1), Geom::Ball(b2)) => {
                contact_manifold_convex_ball(&pos12, &h1, &b2, none, none, prediction, m, false)
            }
            (Geom::Ground(h1), Geom::Cuboid(c2)) => {
                contact_manifold_halfspace_pfm(&pos12, &h1, &c2, 0.0, prediction, m, false)
            }
            // Two grounds; the swapped cases were answered above.
            _ => return None,
        }
        if m.points.is_empty() {
            return None;
        }
        let n = from_parry(pose1.rotation * m.local_n1);
        if !(n.iter().all(|c| c.is_finite()) && (n.norm() - 1.0).abs() < 1e-9) {
            // parry has no direction to give (coincident centres): no usable contact.
            return None;
        }
        self.points.clear();
        self.points.extend(
            m.points
                .iter()
                // Face clipping returns the whole clipped polygon; keep what is within reach.
                .filter(|c| c.dist <= prediction)
                .map(|c| ManifoldPoint {
                    point: 0.5
                        * (from_parry(*pose1 * c.local_p1) + from_parry(*pose2 * c.local_p2)),
                    phi: c.dist,
                    feature: pack(c.fid1, c.fid2),
                }),
        );
        (!self.points.is_empty()).then_some(n)
    }
}

/// Per body, how far its surface can move in one step (the speculative widening).
fn reach(bodies: &[RigidBody], cfg: &ClutterConfig) -> Vec<f64> {
    bodies
        .iter()
        .map(|b| {
            if cfg.speculative {
                cfg.dt * (b.speed_bound() + cfg.dt * cfg.gravity)
            } else {
                0.0
            }
        })
        .collect()
}

/// Pairs of bodies whose bounding spheres come within their prediction distance (`margin`
/// widened by their `reach`), `a < b`, sorted: sweep and prune along `x`.
fn candidate_pairs(bodies: &[RigidBody], margin: f64, reach: &[f64]) -> Vec<(usize, usize)> {
    let half_margin = 0.5 * margin;
    let interval: Vec<(f64, f64)> = bodies
        .iter()
        .zip(reach)
        .map(|(b, reach)| {
            let r = b.bounding_radius() + reach + half_margin;
            (b.x.x - r, b.x.x + r)
        })
        .collect();
    let mut order: Vec<usize> = (0..bodies.len()).collect();
    // Ties broken by index: a total order, so the unstable sort is deterministic.
    order.sort_unstable_by(|&i, &j| interval[i].0.total_cmp(&interval[j].0).then(i.cmp(&j)));
    let mut pairs = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let hi = interval[i].1;
        for &j in &order[k + 1..] {
            if interval[j].0 > hi {
                break;
            }
            let (a, b) = (i.min(j), i.max(j));
            let (ba, bb) = (&bodies[a], &bodies[b]);
            let limit = ba.bounding_radius() + bb.bounding_radius() + margin + reach[a] + reach[b];
            if (ba.x - bb.x).norm() <= limit {
                pairs.push((a, b));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// A body's shape as parry sees it.
pub(super) fn geom(body: &RigidBody) -> Geom {
    match body.shape {
        BodyShape::Sphere { radius } => Geom::Ball(Ball::new(radius)),
        BodyShape::Cuboid { half } => Geom::Cuboid(Cuboid::new(to_parry(&half))),
    }
}

/// The contacts of `bodies` among themselves and with the `obstacles` under `cfg`'s margin
/// and speculative widening. Narrow phase: every body against every obstacle in reach, then
/// every candidate pair.
pub(super) fn detect(
    bodies: &[RigidBody],
    obstacles: &[Obstacle],
    cfg: &ClutterConfig,
) -> Vec<ClutterContact> {
    let reach = reach(bodies, cfg);
    let poses: Vec<Pose> = bodies.iter().map(RigidBody::pose).collect();
    let mut narrow = Narrow::default();
    let mut kept = Vec::with_capacity(MANIFOLD_POINTS);
    // Room for a settled pile's contacts (about three per body) without growing.
    let mut out = Vec::with_capacity(4 * bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        let prediction = cfg.margin + reach[i];
        for (k, obstacle) in obstacles.iter().enumerate() {
            if obstacle.distance(&body.x) > body.bounding_radius() + prediction {
                continue;
            }
            let (g2, pose2) = match obstacle {
                Obstacle::Cuboid { half, center } => (
                    Geom::Cuboid(Cuboid::new(to_parry(half))),
                    Pose::from_translation(to_parry(center)),
                ),
                Obstacle::Ground => (Geom::Ground(HalfSpace::new(Vector::Z)), Pose::identity()),
            };
            if let Some(n12) = narrow.pair(geom(body), &poses[i], g2, &pose2, prediction) {
                reduce_into(&narrow.points, &-n12, &mut kept);
                push_manifold(&mut out, (i, None, k), -n12, &kept);
            }
        }
    }
    for (a, b) in candidate_pairs(bodies, cfg.margin, &reach) {
        let prediction = cfg.margin + reach[a] + reach[b];
        let (ga, gb) = (geom(&bodies[a]), geom(&bodies[b]));
        if let Some(n12) = narrow.pair(ga, &poses[a], gb, &poses[b], prediction) {
            reduce_into(&narrow.points, &-n12, &mut kept);
            push_manifold(&mut out, (a, Some(b), 0), -n12, &kept);
        }
    }
    out
}

/// Appends one manifold's points `kept` (normal `n` towards body `a`, already reduced to
/// [`MANIFOLD_POINTS`]) as contacts of `a` and `b` (or `a` and obstacle `obstacle`), keyed by
/// the bodies (or the obstacle) and the features.
fn push_manifold(
    out: &mut Vec<ClutterContact>,
    (a, b, obstacle): (usize, Option<usize>, usize),
    n: Vector3<f64>,
    kept: &[ManifoldPoint],
) {
    let frame = contact_frame(n);
    for (k, p) in kept.iter().enumerate() {
        // Features are distinct within one manifold from parry's clipping; if two ever agree,
        // the later one gets a key no feature pair can have, so keys stay unique.
        let feature = if kept[..k].iter().any(|q| q.feature == p.feature) {
            u64::MAX - k as u64
        } else {
            p.feature
        };
        let key = match b {
            Some(b) => ContactKey::PairPoint { a, b, feature },
            None => ContactKey::WallPoint {
                body: a,
                obstacle,
                feature,
            },
        };
        out.push(ClutterContact {
            key,
            a,
            b,
            point: p.point,
            frame,
            phi0: p.phi,
        });
    }
}
