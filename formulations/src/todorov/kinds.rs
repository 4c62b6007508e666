//! The implicit map of one constraint block of any kind: its impulse `f_b(x_b)`, velocity
//! `v_b(x_b) = f_b(x_b) + x_b` (eq. 14 on every kind), smooth region, `df_b/dx_b`, and the edges
//! where its pieces meet (notation in [`super`]).
//!
//! Todorov's paper defines the map of a three-row Coulomb contact only (eqs. 10-13); it names
//! equality constraints once, in footnote 1 of section I-A ("represent joints with equality
//! constraints"), as part of the same development, and says nothing of joint limits, dry joint
//! friction or anisotropic cones. Each kind below is our extension, built as the paper builds
//! the contact's: `f` and `v` are functions of one unconstrained `x_b` that satisfy the kind's
//! law for every `x_b`, with `v = f + x` so that the residual keeps the form of eq. 15.
//!
//! | kind | regions | `f_b(x_b)` | `v_b(x_b)` |
//! |---|---|---|---|
//! | equality | stick only | `-x` (free) | `0` |
//! | limit, contact of condim 1 | break, stick | `max(0, b - x)` (eq. 10) | `max(b, x)` |
//! | friction loss, bound `f_max` | stick `abs(x) <= f_max`, slip | `-s x`, `s = min(1, f_max / abs(x))` | `(1 - s) x` |
//! | contact, per-row `mu_i` | break, stick, slip | below | `f + x` |
//!
//! The friction loss is eqs. 12-13 with the normal's `mu f_n` replaced by the fixed bound:
//! "friction without a normal", `-f_max sign(x)` when slipping.
//!
//! **The elliptic cone** `K_mu = {sqrt(sum (f_i / mu_i)^2) <= f_n}` (MuJoCo's, condim 3/4/6):
//! `f_n = max(0, b - x_n)` as in eq. 10, and the frictional rows split through the scaled
//! tangential coordinates `x_i / mu_i`: *stick* where `|D^-1 x_F| <= f_n` (`D = diag(mu_i)`),
//! `f_F = -x_F`, `v_F = 0`; *slip* elsewhere, `f_F = -P(x_F)` with `P` the Euclidean projection
//! onto the ellipse `{|D^-1 p| <= f_n}`: `p_i = x_i m_i / (m_i + lambda)`, `m_i = mu_i^2`, with
//! `lambda > 0` the root of `sum m_i x_i^2 / (m_i + lambda)^2 = f_n^2`. Then
//! `v_F = x_F - P(x_F) = lambda D^-2 P(x_F)` is the ellipse's outward normal at `-f_F`, which is
//! the maximal-dissipation law that De Saxce's complementarity `K_mu ∋ f ⟂ v + |D v_F| e_n ∈
//! K*_mu` states. With equal coefficients `m / (m + lambda) = mu f_n / |x_F|`: Todorov's `s`
//! (eq. 12). `v = f + x` forces this projection (no closed form once coefficients differ):
//! `lambda` is found by Newton's method on `1/|p(lambda)| - 1/f_n`, concave and increasing, so
//! that the iterates from `lambda = 0` rise monotonically to the root (exact in one step for
//! equal coefficients). A row with `mu_i = 0` carries no friction: `f_i = 0`, `v_i = x_i`.
//!
//! The slip piece's derivative follows from the implicit function theorem on
//! `phi = sum m_i x_i^2 / (m_i + lambda)^2 - f_n^2 = 0`: with `c_i = m_i / (m_i + lambda)`,
//! `w_i = m_i x_i / (m_i + lambda)^2` and `S = sum w_i x_i / (m_i + lambda)`,
//! `df_i/dx_j = -(delta_ij c_i - w_i w_j / S)` and `df_i/dx_n = w_i f_n / S`; at `f_n = 0`
//! (the apex's side of the plane) `df_i/dx_n = m_i x_i / |D x_F|`, `df_i/dx_j = 0`. For equal
//! coefficients these are Todorov's slip blocks ([`Region::df_dx`]).
//!
//! **Edges** (section III-C): the plane `x_n = b` (a limit's and a contact's), the points
//! `|x| = f_max` (a friction loss's; flat, [`EdgeKind::Plane`]) and the cone
//! `|D^-1 x_F| = b - x_n` (curved, [`EdgeKind::Cone`]); an equality has none. The edge-aware
//! line search crosses them analytically (eq. 27 with the weights `1/m_i` for the cone) and
//! projects onto the curved one (section III-D) by [`elliptic_cone::project`] in the shifted
//! coordinates `(b - x_n, x_F)`.
//!
//! A three-row contact with one coefficient takes Todorov's own functions ([`impulse`],
//! [`Region::of`], [`contact_crossings`], ...), so a Coulomb block reads the same numbers
//! through this map as through them.

use contactlab_core::constraint::Constraint;
use contactlab_core::elliptic_cone;
use nalgebra::Vector3;

use super::ncp::{
    contact_crossings, edge_at, edge_normal, impulse, project_on_cone_edge, region_along, EdgeKind,
    Region, EDGE_TOL,
};

/// Relative tolerance under which a point lies on an edge ([`edge_at`]'s).
const EDGE_AT_TOL: f64 = 1e-10;

/// Newton iterations allowed for the slip multiplier (it needs a handful; a cap keeps bad
/// input from looping).
const MAX_MULTIPLIER_ITERATIONS: usize = 100;

/// One constraint block's implicit map: its constraint and its normal bias `b` (eq. 11; read by
/// limits and contacts, ignored by the other kinds).
#[derive(Debug, Clone, Copy)]
pub struct BlockMap<'a> {
    shape: Shape<'a>,
    bias: f64,
}

/// What a block's map is, once its constraint is read.
#[derive(Debug, Clone, Copy)]
enum Shape<'a> {
    /// An equality of so many rows: `f = -x`, `v = 0`.
    Bilateral(usize),
    /// A limit or a frictionless contact: eq. 10.
    Normal,
    /// A friction loss with its bound.
    Box(f64),
    /// A three-row contact with one coefficient: Todorov's own map.
    Coulomb(f64),
    /// A contact with per-row coefficients: the elliptic cone.
    Cone(&'a [f64]),
}

fn vec3(x: &[f64]) -> Vector3<f64> {
    Vector3::new(x[0], x[1], x[2])
}

impl<'a> BlockMap<'a> {
    /// The map of `constraint` with normal bias `bias`.
    pub fn new(constraint: &'a Constraint, bias: f64) -> BlockMap<'a> {
        let shape = match constraint {
            Constraint::Equality { rows } => Shape::Bilateral(*rows),
            Constraint::Limit => Shape::Normal,
            Constraint::FrictionLoss { f_max } => Shape::Box(*f_max),
            Constraint::Contact { mu } if mu.is_empty() => Shape::Normal,
            Constraint::Contact { mu } if constraint.is_coulomb() => Shape::Coulomb(mu[0]),
            Constraint::Contact { mu } => Shape::Cone(mu),
        };
        BlockMap { shape, bias }
    }

    /// The map of a Coulomb contact with friction `mu` and normal bias `bias` (Todorov's own).
    pub fn coulomb(mu: f64, bias: f64) -> BlockMap<'static> {
        BlockMap {
            shape: Shape::Coulomb(mu),
            bias,
        }
    }

    /// The block's rows (the length of its `x_b`).
    pub fn rows(&self) -> usize {
        match self.shape {
            Shape::Bilateral(rows) => rows,
            Shape::Normal | Shape::Box(_) => 1,
            Shape::Coulomb(_) => 3,
            Shape::Cone(mu) => 1 + mu.len(),
        }
    }

    fn shape(&self) -> Shape<'a> {
        self.shape
    }

    /// The impulse `f_b(x_b)` into `f` (the block's rows).
    pub fn impulse(&self, x: &[f64], f: &mut [f64]) {
        let b = self.bias;
        match self.shape() {
            Shape::Bilateral(_) => f.iter_mut().zip(x).for_each(|(f, x)| *f = -x),
            Shape::Normal => f[0] = (b - x[0]).max(0.0),
            // max/min rather than clamp: a bad bound must give a bad number, not a panic.
            Shape::Box(f_max) => f[0] = (-x[0]).max(-f_max).min(f_max),
            Shape::Coulomb(mu) => f.copy_from_slice(impulse(mu, b, vec3(x)).as_slice()),
            Shape::Cone(mu) => cone_impulse(mu, b, x, f),
        }
    }

    /// The velocity `v_b(x_b) = f_b(x_b) + x_b` (eq. 14) into `v`.
    pub fn velocity(&self, x: &[f64], v: &mut [f64]) {
        self.impulse(x, v);
        v.iter_mut().zip(x).for_each(|(v, x)| *v += x);
    }

    /// The region of the piece containing `x_b` (points on an edge get the region the
    /// inequalities assign; [`BlockMap::region_along`] chooses by direction).
    pub fn region(&self, x: &[f64]) -> Region {
        let b = self.bias;
        match self.shape() {
            Shape::Bilateral(_) => Region::Stick,
            Shape::Normal if x[0] >= b => Region::Break,
            Shape::Normal => Region::Stick,
            Shape::Box(f_max) if x[0].abs() <= f_max => Region::Stick,
            Shape::Box(_) => Region::Slip,
            Shape::Coulomb(mu) => Region::of(mu, b, vec3(x)),
            Shape::Cone(_) if x[0] >= b => Region::Break,
            Shape::Cone(mu) if scaled_norm(mu, &x[1..]) <= b - x[0] => Region::Stick,
            Shape::Cone(_) => Region::Slip,
        }
    }

    /// `df_b/dx_b` of `region`'s piece at `x_b`, row-major `rows x rows` into `out` (the
    /// piece's formula continued to `x_b`: on an edge, the one-sided derivative).
    pub fn df_dx(&self, region: Region, x: &[f64], out: &mut [f64]) {
        let n = x.len();
        out[..n * n].fill(0.0);
        let b = self.bias;
        match self.shape() {
            Shape::Bilateral(_) => (0..n).for_each(|i| out[i * n + i] = -1.0),
            Shape::Normal => out[0] = if region == Region::Break { 0.0 } else { -1.0 },
            Shape::Box(_) => out[0] = if region == Region::Stick { -1.0 } else { 0.0 },
            Shape::Coulomb(mu) => {
                let d = region.df_dx(mu, b, vec3(x));
                (0..3).for_each(|i| (0..3).for_each(|j| out[i * 3 + j] = d[(i, j)]));
            }
            Shape::Cone(mu) => cone_df_dx(mu, b, region, x, out),
        }
    }

    /// The region entered when leaving `x_b` along `dx_b` (the limit of the region of
    /// `x_b + eps dx_b` for `eps -> 0+`).
    pub fn region_along(&self, x: &[f64], dx: &[f64]) -> Region {
        let b = self.bias;
        match self.shape() {
            Shape::Bilateral(_) => Region::Stick,
            Shape::Normal if break_side(b, x, dx) => Region::Break,
            Shape::Normal => Region::Stick,
            Shape::Box(f_max) => box_region_along(f_max, x[0], dx[0]),
            Shape::Coulomb(mu) => region_along(mu, b, vec3(x), vec3(dx)),
            Shape::Cone(mu) => cone_region_along(mu, b, x, dx),
        }
    }

    /// Appends the parameters `alpha` in `(0, 1]` at which `x_b + alpha dx_b` crosses an edge
    /// of the block (unsorted).
    pub fn crossings(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
        let b = self.bias;
        let push = |target: f64, out: &mut Vec<f64>| {
            if dx[0] != 0.0 {
                let a = (target - x[0]) / dx[0];
                if in_range(a) {
                    out.push(a);
                }
            }
        };
        match self.shape() {
            Shape::Bilateral(_) => {}
            Shape::Normal => push(b, out),
            Shape::Box(0.0) => push(0.0, out),
            Shape::Box(f_max) => {
                push(f_max, out);
                push(-f_max, out);
            }
            Shape::Coulomb(mu) => contact_crossings(mu, b, vec3(x), vec3(dx), out),
            Shape::Cone(mu) => {
                push(b, out);
                cone_crossings(mu, b, x, dx, out);
            }
        }
    }

    /// The edge `x_b` lies on, if any (within round-off of an analytic crossing).
    pub fn edge(&self, x: &[f64]) -> Option<EdgeKind> {
        let b = self.bias;
        let scale = EDGE_AT_TOL * (1.0 + amax(x) + b.abs());
        match self.shape() {
            Shape::Bilateral(_) => None,
            Shape::Normal => ((x[0] - b).abs() <= scale).then_some(EdgeKind::Plane),
            Shape::Box(f_max) => {
                ((x[0].abs() - f_max).abs() <= scale * (1.0 + f_max)).then_some(EdgeKind::Plane)
            }
            Shape::Coulomb(mu) => edge_at(mu, b, vec3(x)),
            Shape::Cone(_) if (x[0] - b).abs() <= scale => Some(EdgeKind::Plane),
            Shape::Cone(mu) => {
                let norm = scaled_norm(mu, &x[1..]);
                let on = x[0] < b && ((b - x[0]) - norm).abs() <= scale * (1.0 + norm);
                on.then_some(EdgeKind::Cone)
            }
        }
    }

    /// The unit normal of edge `kind` at `x_b` into `out`, pointing into the piece on its first
    /// side (the `d` of eq. 25): into *break* for the plane, into *slip* for the cone and for
    /// a friction loss's `|x| = f_max`.
    pub fn edge_normal(&self, kind: EdgeKind, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        out[0] = 1.0;
        match (self.shape(), kind) {
            (Shape::Box(_), _) => out[0] = if x[0] < 0.0 { -1.0 } else { 1.0 },
            (Shape::Coulomb(mu), _) => {
                out.copy_from_slice(edge_normal(kind, mu, self.bias, vec3(x)).as_slice())
            }
            (Shape::Cone(mu), EdgeKind::Cone) => cone_edge_normal(mu, self.bias, x, out),
            _ => {}
        }
    }

    /// Moves `x_b` onto the block's curved edge (section III-D; only a cone has one).
    pub fn project_onto_edge(&self, x: &mut [f64]) {
        match self.shape() {
            Shape::Coulomb(mu) => {
                let p = project_on_cone_edge(mu, self.bias, vec3(x));
                x.copy_from_slice(p.as_slice());
            }
            Shape::Cone(mu) => cone_edge_projection(mu, self.bias, x),
            _ => {}
        }
    }
}

fn in_range(a: f64) -> bool {
    a > 0.0 && a <= 1.0 && a.is_finite()
}

fn amax(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// Whether leaving `x` along `dx` enters the break side of the plane `x_n = b` (points on the
/// plane choose by `dx_n`), as [`region_along`] decides it.
fn break_side(b: f64, x: &[f64], dx: &[f64]) -> bool {
    let scale = EDGE_TOL * (1.0 + amax(x) + b.abs());
    let p = x[0] - b;
    if p.abs() <= scale {
        dx[0] > 0.0 || (dx[0] == 0.0 && p >= 0.0)
    } else {
        p > 0.0
    }
}

/// A friction loss's region along `dx`: on `|x| = f_max`, moving outwards slips.
fn box_region_along(f_max: f64, x: f64, dx: f64) -> Region {
    let scale = EDGE_TOL * (1.0 + x.abs() + f_max);
    let on_edge = (x.abs() - f_max).abs() <= scale;
    if on_edge && dx != 0.0 {
        // A bound of (nearly) 0 has a stick set of one point: every direction leaves it.
        if f_max <= scale || x * dx > 0.0 {
            Region::Slip
        } else {
            Region::Stick
        }
    } else if x.abs() <= f_max {
        Region::Stick
    } else {
        Region::Slip
    }
}

/// `|D^-1 x_F|` over the rows with `mu_i > 0` (the others carry no friction).
pub(super) fn scaled_norm(mu: &[f64], xf: &[f64]) -> f64 {
    mu.iter()
        .zip(xf)
        .filter(|(m, _)| **m > 0.0)
        .map(|(m, x)| (x / m) * (x / m))
        .sum::<f64>()
        .sqrt()
}

/// The slip multiplier `lambda >= 0`: the root of `|p(lambda)| = f_n`,
/// `|p|^2 = sum m_i x_i^2 / (m_i + lambda)^2`, by Newton's method on `1/|p| - 1/f_n` from
/// `lambda = 0` (0 when `|p(0)| = |D^-1 x_F| <= f_n`, the stick side). Needs `f_n > 0`.
fn slip_multiplier(mu: &[f64], xf: &[f64], f_n: f64) -> f64 {
    let mut lambda = 0.0f64;
    for _ in 0..MAX_MULTIPLIER_ITERATIONS {
        let (mut p2, mut s3) = (0.0, 0.0);
        for (&m, &x) in mu.iter().zip(xf).filter(|(m, _)| **m > 0.0) {
            let (m2, den) = (m * m, m * m + lambda);
            p2 += m2 * x * x / (den * den);
            s3 += m2 * x * x / (den * den * den);
        }
        let p = p2.sqrt();
        if p <= f_n || s3 <= 0.0 {
            return lambda;
        }
        let step = (p / f_n - 1.0) * p2 / s3;
        lambda += step;
        if step.is_nan() || step <= 4.0 * f64::EPSILON * lambda {
            return lambda;
        }
    }
    lambda
}

/// The elliptic cone's impulse (see the module documentation) into `f`.
fn cone_impulse(mu: &[f64], b: f64, x: &[f64], f: &mut [f64]) {
    f.fill(0.0);
    let f_n = (b - x[0]).max(0.0);
    if f_n.is_nan() || f_n <= 0.0 {
        return;
    }
    f[0] = f_n;
    let xf = &x[1..];
    let lambda = if scaled_norm(mu, xf) <= f_n {
        0.0
    } else {
        slip_multiplier(mu, xf, f_n)
    };
    for ((fi, &m), &xi) in f[1..].iter_mut().zip(mu).zip(xf) {
        if m > 0.0 {
            let m2 = m * m;
            *fi = -xi * m2 / (m2 + lambda);
        }
    }
}

/// The elliptic cone's `df/dx` of `region`'s piece at `x` into `out` (zeroed by the caller).
fn cone_df_dx(mu: &[f64], b: f64, region: Region, x: &[f64], out: &mut [f64]) {
    let n = x.len();
    if region == Region::Break {
        return;
    }
    out[0] = -1.0;
    let free = |i: usize| mu[i - 1] > 0.0;
    if region == Region::Stick {
        (1..n)
            .filter(|&i| free(i))
            .for_each(|i| out[i * n + i] = -1.0);
        return;
    }
    let f_n = b - x[0];
    if f_n.is_nan() || f_n <= 0.0 {
        // The slip piece continued to the plane: lambda -> infinity, f_F -> 0 and only the
        // normal direction moves it, df_i/dx_n = m_i x_i / |D x_F|.
        let dx = elliptic_cone::dual_norm(mu, &x[1..]);
        if dx == 0.0 {
            // The apex, where the tangential derivative is unbounded: Todorov's choice, the
            // stick piece's derivative.
            (1..n)
                .filter(|&i| free(i))
                .for_each(|i| out[i * n + i] = -1.0);
            return;
        }
        (1..n)
            .filter(|&i| free(i))
            .for_each(|i| out[i * n] = mu[i - 1] * mu[i - 1] * x[i] / dx);
        return;
    }
    let lambda = slip_multiplier(mu, &x[1..], f_n);
    let (mut c, mut w) = ([0.0; 6], [0.0; 6]);
    let mut s = 0.0;
    for i in (1..n).filter(|&i| free(i)) {
        let (m2, xi) = (mu[i - 1] * mu[i - 1], x[i]);
        let den = m2 + lambda;
        c[i] = m2 / den;
        w[i] = m2 * xi / (den * den);
        s += w[i] * xi / den;
    }
    if s.is_nan() || s <= 0.0 {
        (1..n)
            .filter(|&i| free(i))
            .for_each(|i| out[i * n + i] = -1.0);
        return;
    }
    for i in (1..n).filter(|&i| free(i)) {
        out[i * n] = w[i] * f_n / s;
        for j in (1..n).filter(|&j| free(j)) {
            let delta = if i == j { c[i] } else { 0.0 };
            out[i * n + j] = -(delta - w[i] * w[j] / s);
        }
    }
}

/// The elliptic cone's region along `dx` (the plane first, then the cone
/// `h = (b - x_n) - |D^-1 x_F| >= 0`, on which the sign of `dh` decides).
fn cone_region_along(mu: &[f64], b: f64, x: &[f64], dx: &[f64]) -> Region {
    if break_side(b, x, dx) {
        return Region::Break;
    }
    let norm = scaled_norm(mu, &x[1..]);
    let h = (b - x[0]) - norm;
    let tol = EDGE_TOL * (1.0 + amax(x) + b.abs() + norm);
    let stick = if h.abs() <= tol {
        let dnorm = if norm > 0.0 {
            mu.iter()
                .zip(&x[1..])
                .zip(&dx[1..])
                .filter(|((m, _), _)| **m > 0.0)
                .map(|((m, xi), di)| xi * di / (m * m))
                .sum::<f64>()
                / norm
        } else {
            scaled_norm(mu, &dx[1..])
        };
        let dh = -dx[0] - dnorm;
        dh > 0.0 || (dh == 0.0 && h >= 0.0)
    } else {
        h > 0.0
    };
    if stick {
        Region::Stick
    } else {
        Region::Slip
    }
}

/// Appends where `x + alpha dx` crosses the cone `(b - x_n)^2 = sum x_i^2 / m_i`, `x_n <= b`
/// (eq. 27 with the weights `1 / m_i`).
fn cone_crossings(mu: &[f64], b: f64, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
    let p = x[0] - b;
    let (mut qa, mut qb, mut qc) = (dx[0] * dx[0], 2.0 * p * dx[0], p * p);
    for ((&m, &xi), &di) in mu.iter().zip(&x[1..]).zip(&dx[1..]) {
        if m > 0.0 {
            let w = 1.0 / (m * m);
            qa -= w * di * di;
            qb -= 2.0 * w * xi * di;
            qc -= w * xi * xi;
        }
    }
    let mut push_root = |a: f64| {
        if in_range(a) && p + a * dx[0] <= 0.0 {
            out.push(a);
        }
    };
    let lin_scale = qb.abs().max(qc.abs()).max(f64::MIN_POSITIVE);
    if qa.abs() <= 1e-14 * lin_scale {
        if qb != 0.0 {
            push_root(-qc / qb);
        }
        return;
    }
    let disc = qb * qb - 4.0 * qa * qc;
    if disc >= 0.0 {
        // The numerically stable pair of roots.
        let q = -0.5 * (qb + qb.signum() * disc.sqrt());
        if q != 0.0 {
            push_root(q / qa);
            push_root(qc / q);
        } else {
            push_root(0.0);
        }
    }
}

/// The cone edge's unit normal into slip, `(b - x_n, x_i / m_i)` normalized (`e_n` where it
/// vanishes), into `out` (zeroed but for `out[0] = 1`).
fn cone_edge_normal(mu: &[f64], b: f64, x: &[f64], out: &mut [f64]) {
    out[0] = b - x[0];
    for ((o, &m), &xi) in out[1..].iter_mut().zip(mu).zip(&x[1..]) {
        *o = if m > 0.0 { xi / (m * m) } else { 0.0 };
    }
    let len = out.iter().map(|v| v * v).sum::<f64>().sqrt();
    if len > 0.0 && len.is_finite() {
        out.iter_mut().for_each(|v| *v /= len);
    } else {
        out.fill(0.0);
        out[0] = 1.0;
    }
}

/// Moves `x` onto the cone edge `|D^-1 x_F| = b - x_n`: from outside the cone (where a step in
/// the edge's tangent space lands, the stick set being convex) its nearest point, the elliptic
/// cone's projection in the coordinates `(b - x_n, x_F)`; from inside (round-off only) along
/// the normal row, `x_n = b - |D^-1 x_F|`, a point of the edge though not the nearest. Rows
/// with `mu_i = 0` are not part of the edge's geometry and keep their values.
fn cone_edge_projection(mu: &[f64], b: f64, x: &mut [f64]) {
    let n = x.len();
    let norm = scaled_norm(mu, &x[1..]);
    if norm <= b - x[0] {
        x[0] = b - norm;
        return;
    }
    let mut w = [0.0; 6];
    w[0] = b - x[0];
    for i in 1..n {
        w[i] = if mu[i - 1] > 0.0 { x[i] } else { 0.0 };
    }
    let mut p = [0.0; 6];
    elliptic_cone::project(mu, &w[..n], &mut p[..n]);
    x[0] = b - p[0];
    for i in (1..n).filter(|&i| mu[i - 1] > 0.0) {
        x[i] = p[i];
    }
}
