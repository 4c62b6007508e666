//! The min-map reformulation `H(x) = min(x - l(x), max(x - u(x), A x + b))` (eq. 9) with the
//! friction-pyramid bounds of the paper, its pieces (eq. 10) and its generalized Jacobian:
//! what the module's Newton method and plugin solve (notation in [`super`]).

use contactlab_core::constraint::Constraint;
use contactlab_core::frame::{from_rotated, rotate_tangents, to_rotated};
use contactlab_core::{
    CoreError, LocalProblem, NonSmoothResidual, ProblemError, ProjectedResidual, Residual,
};
use faer::MatMut;
use nalgebra::Vector3;

/// Relative tolerance under which two pieces of a row count as equal when choosing the piece
/// entered along a direction ([`NonSmoothResidual::jacobian_along`]).
const TIE_TOL: f64 = 1e-12;

/// The active selection function of one row of `H` (the index sets of eq. 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    /// `L`: `H_i = x_i - l_i(x)` (the lower bound is active).
    Lower,
    /// `A`: `H_i = (A x + b)_i` (the row is free, or a tie).
    Active,
    /// `U`: `H_i = x_i - u_i(x)` (the upper bound is active).
    Upper,
}

impl Piece {
    /// Short name used in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Piece::Lower => "lower",
            Piece::Active => "active",
            Piece::Upper => "upper",
        }
    }
}

/// One row of the min-map (eq. 4): `max(x - u, min(x - l, y))` and the piece that gives it.
///
/// Ties go to [`Piece::Active`] (eq. 10 puts equality into `A`). A non-finite `x` or `y`, a
/// NaN bound, or a lower bound of `+inf`, gives `NaN`, so that drivers see it; `lower = -inf`
/// and `upper = +inf` are a free side (an equality's row is `y`).
pub fn min_map_row(x: f64, lower: f64, upper: f64, y: f64) -> (f64, Piece) {
    if !(x.is_finite() && y.is_finite() && lower < f64::INFINITY) || upper.is_nan() {
        return (f64::NAN, Piece::Active);
    }
    let a = x - lower;
    let (m, inner) = if y <= a {
        (y, Piece::Active)
    } else {
        (a, Piece::Lower)
    };
    let c = x - upper;
    if c > m {
        (c, Piece::Upper)
    } else {
        (m, inner)
    }
}

/// Everything one evaluation of the min-map gives at `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct MinMapPoint {
    /// The iterate `x`.
    pub x: Vec<f64>,
    /// `y = A x + b`.
    pub y: Vec<f64>,
    /// `H(x)` (eq. 5).
    pub h: Vec<f64>,
    /// The active piece of each row (eq. 10).
    pub pieces: Vec<Piece>,
    /// `theta = H'H / 2`.
    pub theta: f64,
}

impl MinMapPoint {
    /// `|H|_2`.
    pub fn h_norm(&self) -> f64 {
        (2.0 * self.theta).sqrt()
    }

    /// Sizes of the index sets `(|L|, |A|, |U|)`.
    pub fn set_sizes(&self) -> (usize, usize, usize) {
        self.pieces.iter().fold((0, 0, 0), |(l, a, u), p| match p {
            Piece::Lower => (l + 1, a, u),
            Piece::Active => (l, a + 1, u),
            Piece::Upper => (l, a, u + 1),
        })
    }
}

use contactlab_core::drivers::kit::dot;

/// Each row's bounds of the boxed LCP, built once from the problem's blocks (see [`super`]):
/// a row coupled to its contact's normal has `(-mu_i x_n, mu_i x_n)`, any other row constant
/// bounds. A problem of Coulomb contacts gets the paper's layout (`[n, t1, t2]` per contact),
/// the same numbers as the per-contact arithmetic, so its rows cost one table look-up.
#[derive(Debug, Clone)]
struct RowBounds {
    /// The row whose `x` scales row `i`'s bounds (its contact's normal), `i` itself for a row
    /// of constant bounds.
    normal: Vec<usize>,
    /// `mu_i` of a frictional row, 0 on every other row (eq. 9's `mu_i`).
    mu: Vec<f64>,
    /// The constant `(l_i, u_i)` of a row not coupled to a normal (unused on frictional rows).
    constant: Vec<(f64, f64)>,
    /// Whether every block is a Coulomb contact (the paper's problem).
    coulomb: bool,
}

impl RowBounds {
    /// The rows' bounds for `problem`'s blocks: an equality's rows free (`-inf, +inf`), a
    /// limit's and a contact's normal `(0, +inf)`, a friction loss's `(-f_max, f_max)`, a
    /// contact's frictional rows coupled to its normal by their own `mu_i`.
    fn of(problem: &LocalProblem) -> RowBounds {
        let n = problem.q.len();
        let mut b = RowBounds {
            normal: (0..n).collect(),
            mu: vec![0.0; n],
            constant: vec![(0.0, f64::INFINITY); n],
            coulomb: problem.constraints.coulomb_only(),
        };
        for (rows, c) in problem.constraints.iter() {
            let s = rows.start;
            match c {
                Constraint::Equality { .. } => {
                    rows.for_each(|i| b.constant[i] = (f64::NEG_INFINITY, f64::INFINITY))
                }
                Constraint::FrictionLoss { f_max } => b.constant[s] = (-f_max, *f_max),
                Constraint::Limit => {}
                Constraint::Contact { mu } => {
                    for (k, &m) in mu.iter().enumerate() {
                        b.normal[s + 1 + k] = s;
                        b.mu[s + 1 + k] = m;
                    }
                }
            }
        }
        b
    }
}

/// How the pyramid's faces are turned.
#[derive(Debug, Clone)]
enum Turn {
    /// A problem of Coulomb contacts, each contact's tangent axes by its angle
    /// (`contactlab_core::frame::rotate_tangents`).
    Contacts(Vec<f64>),
    /// Any other problem: the isotropic sliding pairs whose first row is `rows[k]`, each by
    /// `angles[k]` ([`super::turn`]).
    Pairs { rows: Vec<usize>, angles: Vec<f64> },
}

/// The min-map reformulation of a local problem's boxed LCP with friction-pyramid bounds;
/// the unknowns are the impulses `x = r`.
#[derive(Debug, Clone)]
pub struct MinMap {
    /// The problem in the pyramid's axes (turned when `turn` is set).
    problem: LocalProblem,
    /// How the pyramid's faces are turned from `t1`, when they are.
    turn: Option<Turn>,
    n: usize,
    /// `A = W`, dense, row-major (`a[i * n + j] = A_ij`): every product walks rows.
    a: Vec<f64>,
    /// Each row's bounds.
    bounds: RowBounds,
}

impl MinMap {
    /// Wraps a validated copy of `problem` (see [`LocalProblem::validate`]); `W` is densified
    /// once.
    pub fn new(problem: &LocalProblem) -> Result<MinMap, CoreError> {
        problem.validate()?;
        let n = problem.q.len();
        let mut a = vec![0.0; n * n];
        problem.w.for_each_entry(|i, j, v| a[i * n + j] += v);
        Ok(MinMap {
            problem: problem.clone(),
            turn: None,
            n,
            a,
            bounds: RowBounds::of(problem),
        })
    }

    /// The min-map of `problem` with the pyramid's faces turned by `angles` (per contact,
    /// radians from `t1`): the boxed LCP is posed in tangent axes turned by them
    /// (`contactlab_core::frame::rotate_tangents`), and [`MinMap::impulses`] maps its unknowns
    /// back to the problem's frames.
    pub fn turned(problem: &LocalProblem, angles: Vec<f64>) -> Result<MinMap, CoreError> {
        let rotated = rotate_tangents(problem, &angles)?;
        let mut map = MinMap::new(&rotated)?;
        map.turn = Some(Turn::Contacts(angles));
        Ok(map)
    }

    /// The min-map of a problem of any blocks with the sliding pairs whose first row is
    /// `rows[k]` turned by `angles[k]` (radians from that row's axis), every other row as it
    /// is ([`super::turn::turn_pairs`]).
    pub fn turned_pairs(
        problem: &LocalProblem,
        rows: Vec<usize>,
        angles: Vec<f64>,
    ) -> Result<MinMap, CoreError> {
        let rotated = super::turn::turn_pairs(problem, &rows, &angles)?;
        let mut map = MinMap::new(&rotated)?;
        map.turn = Some(Turn::Pairs { rows, angles });
        Ok(map)
    }

    /// The angles of the turn of the pyramid's faces, when there is one: one per contact on a
    /// problem of Coulomb contacts, one per turned sliding pair ([`MinMap::turned_pairs`])
    /// on any other.
    pub fn turn(&self) -> Option<&[f64]> {
        match self.turn.as_ref()? {
            Turn::Contacts(a) => Some(a),
            Turn::Pairs { angles, .. } => Some(angles),
        }
    }

    /// The impulses, in the original problem's frames, that the unknowns `x` encode.
    pub fn impulses(&self, x: &[f64]) -> Vec<f64> {
        match &self.turn {
            Some(Turn::Contacts(a)) => from_rotated(x, a),
            Some(Turn::Pairs { rows, angles }) => super::turn::rotate_back(x, rows, angles),
            None => x.to_vec(),
        }
    }

    /// The unknowns for impulses `r` given in the original problem's frames.
    pub fn unknowns(&self, r: &[f64]) -> Vec<f64> {
        match &self.turn {
            Some(Turn::Contacts(a)) => to_rotated(r, a),
            Some(Turn::Pairs { rows, angles }) => super::turn::rotate(r, rows, angles),
            None => r.to_vec(),
        }
    }

    /// The problem this residual solves (in the turned axes when the pyramid is turned).
    pub fn problem(&self) -> &LocalProblem {
        &self.problem
    }

    /// Number of unknowns `n`, one per row (`3 nc` on a problem of Coulomb contacts).
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Row `i` of `A`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.a[i * self.n..(i + 1) * self.n]
    }

    /// `A_ij`.
    pub fn entry(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }

    /// `b` (the problem's `q`).
    pub fn b(&self) -> &[f64] {
        &self.problem.q
    }

    /// The friction coefficient acting on row `i`: its own `mu_i` on a contact's frictional
    /// rows, 0 on every other row (the paper's `mu_i` of eq. 9).
    pub fn row_mu(&self, i: usize) -> f64 {
        self.bounds.mu[i]
    }

    /// The normal row of row `i`'s contact in a problem of Coulomb contacts (`i - r` with
    /// `r = i mod 3`, eq. 8); [`MinMap::normal_row`] for any problem.
    pub fn normal_of(i: usize) -> usize {
        i - i % 3
    }

    /// The row whose `x` scales row `i`'s bounds: its contact's normal on a frictional row,
    /// `i` itself on every other row.
    pub fn normal_row(&self, i: usize) -> usize {
        self.bounds.normal[i]
    }

    /// Whether every block is a three-row Coulomb contact (the paper's problem).
    pub fn is_coulomb(&self) -> bool {
        self.bounds.coulomb
    }

    /// `(l_i(x), u_i(x))`: `(-mu_i x_n, mu_i x_n)` on a contact's frictional rows, the row's
    /// constant bounds on every other: `(0, +inf)` on a normal or a limit, `(-inf, +inf)` on an
    /// equality, `(-f_max, f_max)` on a friction loss.
    pub fn bounds(&self, x: &[f64], i: usize) -> (f64, f64) {
        let k = self.bounds.normal[i];
        if k == i {
            self.bounds.constant[i]
        } else {
            let m = self.bounds.mu[i] * x[k];
            (-m, m)
        }
    }

    /// `out = A v`.
    pub fn mul(&self, v: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = dot(self.row(i), v);
        }
    }

    /// `out = A x + b`.
    pub fn affine(&self, x: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = dot(self.row(i), x) + self.problem.q[i];
        }
    }

    /// `H` and the pieces from `x` and a given `y = A x + b`; returns `theta`.
    pub fn min_map_from(&self, x: &[f64], y: &[f64], h: &mut [f64], pieces: &mut [Piece]) -> f64 {
        let mut ss = 0.0;
        for i in 0..self.n {
            let (l, u) = self.bounds(x, i);
            let (v, p) = min_map_row(x[i], l, u, y[i]);
            h[i] = v;
            pieces[i] = p;
            ss += v * v;
        }
        let theta = 0.5 * ss;
        if theta.is_nan() {
            f64::NAN
        } else {
            theta
        }
    }

    /// Evaluates `y`, `H`, the pieces and `theta` at `x`.
    pub fn evaluate(&self, x: &[f64]) -> MinMapPoint {
        let mut y = vec![0.0; self.n];
        self.affine(x, &mut y);
        let mut h = vec![0.0; self.n];
        let mut pieces = vec![Piece::Active; self.n];
        let theta = self.min_map_from(x, &y, &mut h, &mut pieces);
        MinMapPoint {
            x: x.to_vec(),
            y,
            h,
            pieces,
            theta,
        }
    }

    /// The merit `theta(x) = H(x)'H(x) / 2`.
    pub fn theta(&self, x: &[f64]) -> f64 {
        self.evaluate(x).theta
    }

    /// Writes row `i` of the generalized Jacobian for piece `p` (eq. 9) into `out` (length n).
    pub fn jacobian_row(&self, i: usize, p: Piece, out: &mut [f64]) {
        match p {
            Piece::Active => out.copy_from_slice(self.row(i)),
            Piece::Lower | Piece::Upper => {
                out.iter_mut().for_each(|v| *v = 0.0);
                out[i] = 1.0;
                let mu = self.row_mu(i);
                if mu != 0.0 {
                    let s = if p == Piece::Lower { mu } else { -mu };
                    out[self.normal_row(i)] += s;
                }
            }
        }
    }

    /// Writes the Jacobian whose rows are given by `pieces` into `out` (`n x n`).
    pub fn jacobian_for(&self, pieces: &[Piece], mut out: MatMut<'_, f64>) {
        let mut row = vec![0.0; self.n];
        for (i, &p) in pieces.iter().enumerate() {
            self.jacobian_row(i, p, &mut row);
            for (j, v) in row.iter().enumerate() {
                out[(i, j)] = *v;
            }
        }
    }

    /// `J v` for the Jacobian whose rows are `pieces`, given `av = A v` (only its `A` rows are
    /// read).
    pub fn jacobian_times(&self, pieces: &[Piece], v: &[f64], av: &[f64], out: &mut [f64]) {
        for (i, &p) in pieces.iter().enumerate() {
            out[i] = match p {
                Piece::Active => av[i],
                Piece::Lower => v[i] + self.row_mu(i) * v[self.normal_row(i)],
                Piece::Upper => v[i] - self.row_mu(i) * v[self.normal_row(i)],
            };
        }
    }

    /// The three pieces of row `i` along `x + t dx` as `(value, slope)` pairs:
    /// `x - l`, `y`, `x - u` (`None` on an infinite side: `x - u` on a normal, a limit and an
    /// equality, `x - l` on an equality).
    #[allow(clippy::type_complexity)]
    fn pieces_along(
        &self,
        i: usize,
        x: &[f64],
        dx: &[f64],
        y: f64,
        ady: f64,
    ) -> (Option<(f64, f64)>, (f64, f64), Option<(f64, f64)>) {
        let mu = self.row_mu(i);
        let k = self.normal_row(i);
        if k == i {
            let (l, u) = self.bounds.constant[i];
            let side = |b: f64| b.is_finite().then_some((x[i] - b, dx[i]));
            (side(l), (y, ady), side(u))
        } else {
            (
                Some((x[i] + mu * x[k], dx[i] + mu * dx[k])),
                (y, ady),
                Some((x[i] - mu * x[k], dx[i] - mu * dx[k])),
            )
        }
    }
}

/// Compares `(value, slope)` pairs: `Less` when `p` is below `q` just after `t = 0` along the
/// direction (values equal to [`TIE_TOL`] relative are decided by the slopes).
fn compare_along(p: (f64, f64), q: (f64, f64)) -> std::cmp::Ordering {
    let scale = TIE_TOL * (1.0 + p.0.abs() + q.0.abs());
    if (p.0 - q.0).abs() > scale {
        p.0.total_cmp(&q.0)
    } else {
        p.1.total_cmp(&q.1)
    }
}

/// The piece of `max(c, min(a, y))` entered just after `t = 0` along the direction whose
/// `(value, slope)` pairs are given (`None` for an infinite side); ties in value and slope go
/// to `A` (eq. 10).
fn piece_along(a: Option<(f64, f64)>, y: (f64, f64), c: Option<(f64, f64)>) -> (Piece, (f64, f64)) {
    use std::cmp::Ordering::{Greater, Less};
    let (inner, m) = match a {
        Some(a) if compare_along(a, y) == Less => (Piece::Lower, a),
        _ => (Piece::Active, y),
    };
    match c {
        Some(c) if compare_along(c, m) == Greater => (Piece::Upper, c),
        _ => (inner, m),
    }
}

impl Residual for MinMap {
    fn num_unknowns(&self) -> usize {
        self.n
    }

    fn num_residuals(&self) -> usize {
        self.n
    }

    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let mut y = vec![0.0; self.n];
        self.affine(x, &mut y);
        let mut pieces = vec![Piece::Active; self.n];
        self.min_map_from(x, &y, out, &mut pieces);
    }

    fn jacobian(&self, x: &[f64], out: MatMut<'_, f64>) {
        let p = self.evaluate(x);
        self.jacobian_for(&p.pieces, out);
    }
}

impl NonSmoothResidual for MinMap {
    fn kinks_on_segment(&self, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
        let n = self.n;
        let mut y = vec![0.0; n];
        self.affine(x, &mut y);
        let mut ad = vec![0.0; n];
        self.mul(dx, &mut ad);
        let start = out.len();
        for i in 0..n {
            let (a, yy, c) = self.pieces_along(i, x, dx, y[i], ad[i]);
            let mut pairs = Vec::with_capacity(3);
            if let Some(a) = a {
                pairs.push((a, yy));
            }
            if let Some(c) = c {
                pairs.push((yy, c));
                if let Some(a) = a {
                    pairs.push((a, c));
                }
            }
            for (p, q) in pairs {
                let ds = p.1 - q.1;
                if ds == 0.0 {
                    continue;
                }
                let t = (q.0 - p.0) / ds;
                if !(t > 0.0 && t <= 1.0) {
                    continue;
                }
                // A crossing is a kink only when the row's active piece changes there: compare
                // the pieces entered forwards and backwards from the crossing point.
                let at = |v: (f64, f64)| (v.0 + t * v.1, v.1);
                let back = |v: (f64, f64)| (v.0 + t * v.1, -v.1);
                let (pf, sf) = piece_along(a.map(at), at(yy), c.map(at));
                let (pb, sb) = piece_along(a.map(back), back(yy), c.map(back));
                if pf != pb && sf.1 != -sb.1 {
                    out.push(t);
                }
            }
        }
        out[start..].sort_by(f64::total_cmp);
        let mut tail: Vec<f64> = out.split_off(start);
        tail.dedup_by(|p, q| (*p - *q).abs() <= 1e-14);
        out.extend(tail);
    }

    fn jacobian_along(&self, x: &[f64], dx: &[f64], out: MatMut<'_, f64>) {
        let n = self.n;
        let mut y = vec![0.0; n];
        self.affine(x, &mut y);
        let mut ad = vec![0.0; n];
        self.mul(dx, &mut ad);
        let pieces: Vec<Piece> = (0..n)
            .map(|i| {
                let (a, yy, c) = self.pieces_along(i, x, dx, y[i], ad[i]);
                piece_along(a, yy, c).0
            })
            .collect();
        self.jacobian_for(&pieces, out);
    }
}

/// Euclidean projection of one contact's `(x_n, x_t1, x_t2)` onto the friction pyramid
/// `{x_n >= 0, |x_t1| <= mu x_n, |x_t2| <= mu x_n}`.
///
/// The pyramid is symmetric under `x_tk -> -x_tk`, so the projection of `(n, |t1|, |t2|)` is
/// computed and the signs restored. Its candidates are the point itself, its projections onto
/// each of the two faces `s_k = mu n` and onto the edge `s_1 = s_2 = mu n`, and the apex; the
/// projection is the nearest feasible candidate (the projection onto a polyhedral cone lies
/// in the relative interior of one of its faces, where it is the projection onto that face's
/// span).
pub fn project_pyramid(mu: f64, v: Vector3<f64>) -> Vector3<f64> {
    let (n, s1, s2) = (v[0], v[1].abs(), v[2].abs());
    let mu = mu.max(0.0);
    let feasible = |c: &(f64, f64, f64)| {
        let tol = 1e-14 * (1.0 + c.0.abs() + c.1 + c.2);
        c.0 >= -tol && c.1 <= mu * c.0 + tol && c.2 <= mu * c.0 + tol
    };
    let mut cands: Vec<(f64, f64, f64)> = vec![(n, s1, s2)];
    let d1 = 1.0 + mu * mu;
    let p1 = (n + mu * s1) / d1;
    cands.push((p1, mu * p1, s2));
    let p2 = (n + mu * s2) / d1;
    cands.push((p2, s1, mu * p2));
    let p12 = (n + mu * s1 + mu * s2) / (1.0 + 2.0 * mu * mu);
    cands.push((p12, mu * p12, mu * p12));
    // Face n = 0 (only feasible for mu = 0 through the edge, but harmless) and the apex.
    cands.push((0.0, 0.0, 0.0));
    let mut best = (0.0, 0.0, 0.0);
    let mut best_d = f64::INFINITY;
    for c in cands.iter().filter(|c| feasible(c)) {
        let d = (c.0 - n).powi(2) + (c.1 - s1).powi(2) + (c.2 - s2).powi(2);
        if d < best_d {
            best_d = d;
            best = *c;
        }
    }
    // Remove the round-off the feasibility tolerance admitted.
    let pn = best.0.max(0.0);
    let (t1, t2) = (best.1.min(mu * pn), best.2.min(mu * pn));
    Vector3::new(pn, t1.copysign(v[1]), t2.copysign(v[2]))
}

impl ProjectedResidual for MinMap {
    /// Projects each contact onto its friction pyramid and every other block onto its set
    /// (a friction loss's box, a limit's half-line; an equality is free): every zero of `H`
    /// lies in their product (a zero row forces `x_n >= 0` and `l(x) <= x <= u(x)`).
    fn project(&self, x: &mut [f64]) {
        if self.bounds.coulomb {
            for (a, &mu) in self.problem.mu().iter().enumerate() {
                let p = project_pyramid(mu, Vector3::new(x[3 * a], x[3 * a + 1], x[3 * a + 2]));
                x[3 * a..3 * a + 3].copy_from_slice(p.as_slice());
            }
            return;
        }
        let mut z = [0.0; 6];
        for (rows, c) in self.problem.constraints.iter() {
            let z = &mut z[..rows.len()];
            z.copy_from_slice(&x[rows.clone()]);
            c.project_pyramid(z, &mut x[rows]);
        }
    }
}

/// Checks an initial point's length against the problem.
pub(crate) fn check_start(x0: &[f64], n: usize) -> Result<(), CoreError> {
    if x0.len() != n {
        return Err(CoreError::Problem(ProblemError::Shape {
            field: "x0".to_string(),
            expected: format!("{n} entries (one per row)"),
            found: format!("{} entries", x0.len()),
        }));
    }
    Ok(())
}
