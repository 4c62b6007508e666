//! The kinds of constraint a problem's rows can hold, as MuJoCo has them (`mjtConstraint`): one
//! block of rows per constraint, with its kind and parameters, the set its impulse lives in, the
//! Euclidean projection onto that set, and the per-block terms of the shared ruler.
//!
//! A block's rows are judged on its impulse `r` and its velocity `u` (in a local problem
//! `u = W r + q`), the constraint's target already in the offset (`q`, or `w` of a global
//! problem, carries `-t`, so that every condition reads on `u`):
//!
//! | kind | rows | impulse set `C` | condition | natural map `r - P_C(r - y)` |
//! |---|---|---|---|---|
//! | `equality` | 1 (joint, tendon), 3 (connect), 6 (weld) | `R^m` | `u = 0` | `u` |
//! | `limit` | 1 (a joint or tendon limit's active side) | `R+` | `0 <= r ⟂ u >= 0` | `r - max(0, r - u)` |
//! | `friction_loss` | 1 (a dof or tendon) | `[-f, f]` | `-u` in the normal cone of the box at `r` | `r - clip(r - u, -f, f)` |
//! | `contact`, `condim` 1 | 1 | `R+` | as a limit | `r - max(0, r - u)` |
//! | `contact`, `condim` 3, 4, 6 | `d` | `K_mu` ([`crate::elliptic_cone`]) | `K_mu ∋ r ⟂ û ∈ K*_mu`, `û = u + |D u_f| e_n` | `r - P_K(r - û)` |
//!
//! (`y = u` but for the cones, where it is De Saxce's `û`.) The friction loss is a box because
//! MuJoCo's dry joint friction bounds the impulse and opposes the motion: sliding (`u != 0`) at
//! `r = -f sign(u)`, stuck (`u = 0`) anywhere inside. A contact of `condim` 3 whose two
//! coefficients are equal is today's Coulomb cone ([`crate::cone`]), term for term.
//!
//! The other figures of the ruler, per block: the primal violation `dist(r, C)`; the dual
//! violation, the distance of `y` from the dual set (`{0}` for an equality, `R+` for a limit and
//! a frictionless contact, `K*_mu` for a cone; a box has no dual cone, its term is 0 and its
//! conditions show in the natural map and the gap); and the complementarity gap, Fenchel's
//! `|<r, y> + sigma_C(-y)|` with `sigma_C` the support function of `C` (`f |u|` for the box, 0
//! on the dual cone for the cones).

use serde::{Deserialize, Serialize};

use crate::elliptic_cone;

/// One constraint: its kind and parameters. The rows of a problem are a sequence of these
/// ([`Constraints`]), each owning consecutive rows in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Constraint {
    /// Bilateral rows, impulse free, velocity driven to its target (`u = 0` on the offset
    /// velocity): MuJoCo's `mjCNSTR_EQUALITY` (a joint or tendon equality 1 row, a connect 3, a
    /// weld 6).
    Equality {
        /// Rows, 1 to 6.
        rows: usize,
    },
    /// One unilateral row, `0 <= r ⟂ u >= 0`: MuJoCo's `mjCNSTR_LIMIT_JOINT` and
    /// `mjCNSTR_LIMIT_TENDON`, the active side's sign in `J`.
    Limit,
    /// One row with its impulse in the box `[-f_max, f_max]` opposing the motion: MuJoCo's
    /// `mjCNSTR_FRICTION_DOF` and `mjCNSTR_FRICTION_TENDON` (dry joint friction).
    FrictionLoss {
        /// The bound `f_max >= 0` (MuJoCo's `frictionloss` times the time step, in impulse
        /// units).
        f_max: f64,
    },
    /// A contact, normal row first, then one row per coefficient of `mu`: none (`condim` 1,
    /// frictionless), two tangential (3), then torsional (4), then two rolling (6); its impulse
    /// in the elliptic cone `K_mu`.
    Contact {
        /// The coefficient of each frictional row (MuJoCo's `contact.friction` expanded: sliding
        /// twice, torsional, rolling twice), each `>= 0`.
        mu: Vec<f64>,
    },
}

/// The names of the kinds, as files, `contactlab list` and the errors spell them.
pub const KIND_NAMES: [&str; 4] = ["equality", "limit", "friction_loss", "contact"];

/// What a formulation or a driver can take, by [`Constraint::label`]: the Coulomb contact
/// (three rows, one coefficient), any other contact (condim 1, 4, 6 or per-row
/// coefficients), and the other kinds.
pub const LABELS: [&str; 5] = ["coulomb", "contact", "equality", "limit", "friction_loss"];

/// The Coulomb contact alone: what every formulation and driver takes.
pub const COULOMB_ONLY: &[&str] = &["coulomb"];

/// Every kind.
pub const EVERY_KIND: &[&str] = &LABELS;

impl Constraint {
    /// A frictional point contact of three rows with isotropic friction `mu`: the only kind of
    /// the FCLib files and of every problem before the constraint kinds.
    pub fn coulomb(mu: f64) -> Constraint {
        Constraint::Contact { mu: vec![mu, mu] }
    }

    /// The kind's name ([`KIND_NAMES`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Constraint::Equality { .. } => KIND_NAMES[0],
            Constraint::Limit => KIND_NAMES[1],
            Constraint::FrictionLoss { .. } => KIND_NAMES[2],
            Constraint::Contact { .. } => KIND_NAMES[3],
        }
    }

    /// What a plugin must take to take this block ([`LABELS`]): `coulomb` for a Coulomb
    /// contact, else the kind's name.
    pub fn label(&self) -> &'static str {
        if self.is_coulomb() {
            LABELS[0]
        } else {
            self.kind()
        }
    }

    /// The kind's name with its size where it has one (`contact (condim 4)`, `equality (6 rows)`),
    /// as a refusal names it.
    pub fn describe(&self) -> String {
        match self {
            Constraint::Equality { rows: 1 } => "equality (1 row)".to_string(),
            Constraint::Equality { rows } => format!("equality ({rows} rows)"),
            Constraint::Contact { mu } => format!("contact (condim {})", 1 + mu.len()),
            other => other.kind().to_string(),
        }
    }

    /// The rows the constraint owns.
    pub fn rows(&self) -> usize {
        match self {
            Constraint::Equality { rows } => *rows,
            Constraint::Limit | Constraint::FrictionLoss { .. } => 1,
            Constraint::Contact { mu } => 1 + mu.len(),
        }
    }

    /// Whether this is a three-row contact with equal coefficients, the Coulomb contact every
    /// formulation takes.
    pub fn is_coulomb(&self) -> bool {
        matches!(self, Constraint::Contact { mu } if mu.len() == 2 && mu[0] == mu[1])
    }

    /// Checks the parameters: an equality of 1 to 6 rows, a friction loss bound finite and
    /// `>= 0`, a contact of `condim` 1, 3, 4 or 6 with finite coefficients `>= 0`. The message
    /// names the parameter and the value.
    pub fn check(&self) -> Result<(), String> {
        match self {
            Constraint::Equality { rows } if !(1..=6).contains(rows) => Err(format!(
                "an equality has 1 to 6 rows (joint or tendon 1, connect 3, weld 6), got {rows}"
            )),
            Constraint::FrictionLoss { f_max } if !(f_max.is_finite() && *f_max >= 0.0) => Err(
                format!("a friction loss's bound f_max must be finite and >= 0, got {f_max}"),
            ),
            Constraint::Contact { mu } if ![0, 2, 3, 5].contains(&mu.len()) => Err(format!(
                "a contact has condim 1, 3, 4 or 6 (0, 2, 3 or 5 coefficients), got {} \
                 coefficients",
                mu.len()
            )),
            Constraint::Contact { mu } => {
                match mu.iter().position(|m| !(m.is_finite() && *m >= 0.0)) {
                    Some(i) => Err(format!(
                        "a contact's friction coefficient mu[{i}] must be finite and >= 0, got {}",
                        mu[i]
                    )),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Projects `z` (this constraint's rows) onto its impulse set `C`, into `out`.
    pub fn project(&self, z: &[f64], out: &mut [f64]) {
        match self {
            Constraint::Equality { .. } => out.copy_from_slice(z),
            Constraint::Limit => out[0] = z[0].max(0.0),
            Constraint::FrictionLoss { f_max } => out[0] = z[0].clamp(-f_max, *f_max),
            Constraint::Contact { mu } if mu.is_empty() => out[0] = z[0].max(0.0),
            Constraint::Contact { mu } => elliptic_cone::project(mu, z, out),
        }
    }

    /// The derivative `dP_C/dz` of [`Constraint::project`] at `z`, into `out` (row-major
    /// `rows x rows`): the identity for an equality (`C = R^m`); for a limit and a frictionless
    /// contact `1` where `z > 0`, else `0`; for a friction loss `1` strictly inside the box
    /// (`|z| < f_max`), else `0`; for a cone [`elliptic_cone::project_jacobian`]. At a kink
    /// (`z = 0`, `|z| = f_max`, the cones' boundaries) it is one of the one-sided derivatives,
    /// an element of the generalized Jacobian that semismooth Newton methods need.
    pub fn project_jacobian(&self, z: &[f64], out: &mut [f64]) {
        let n = z.len();
        let step = |inside: bool| if inside { 1.0 } else { 0.0 };
        match self {
            Constraint::Equality { .. } => {
                out[..n * n].fill(0.0);
                (0..n).for_each(|i| out[i * n + i] = 1.0);
            }
            Constraint::Limit => out[0] = step(z[0] > 0.0),
            Constraint::FrictionLoss { f_max } => out[0] = step(z[0].abs() < *f_max),
            Constraint::Contact { mu } if mu.is_empty() => out[0] = step(z[0] > 0.0),
            Constraint::Contact { mu } => elliptic_cone::project_jacobian(mu, z, out),
        }
    }

    /// The velocity the natural map pairs with `r`: `u`, or De Saxce's `û` for a cone.
    pub fn dual_velocity(&self, u: &[f64], out: &mut [f64]) {
        match self {
            Constraint::Contact { mu } if !mu.is_empty() => elliptic_cone::de_saxce(mu, u, out),
            _ => out.copy_from_slice(u),
        }
    }

    /// The natural map `r - P_C(r - y)` of this block's impulse `r` and velocity `u`, into
    /// `out` (see the module documentation).
    pub fn natural_map(&self, r: &[f64], u: &[f64], out: &mut [f64]) {
        if let Constraint::Equality { .. } = self {
            // `r - (r - u)`, without the rounding of the subtractions.
            out.copy_from_slice(u);
            return;
        }
        let mut y = [0.0; 6];
        let y = &mut y[..r.len()];
        self.dual_velocity(u, y);
        let mut z = [0.0; 6];
        let z = &mut z[..r.len()];
        z.iter_mut()
            .zip(r.iter().zip(y.iter()))
            .for_each(|(z, (r, y))| *z = r - y);
        self.project(z, out);
        out.iter_mut().zip(r).for_each(|(o, r)| *o = r - *o);
    }

    /// The block's figures of the ruler: `(dist(r, C), dual violation, complementarity gap)`
    /// (see the module documentation).
    pub fn violations(&self, r: &[f64], u: &[f64]) -> (f64, f64, f64) {
        let n = r.len();
        let mut p = [0.0; 6];
        self.project(r, &mut p[..n]);
        let primal = distance(r, &p[..n]);
        let mut y = [0.0; 6];
        self.dual_velocity(u, &mut y[..n]);
        let y = &y[..n];
        let inner: f64 = r.iter().zip(y).map(|(a, b)| a * b).sum();
        let (dual, gap) = match self {
            Constraint::Equality { .. } => (norm(y), inner.abs()),
            Constraint::Limit => ((-y[0]).max(0.0), inner.abs()),
            Constraint::FrictionLoss { f_max } => (0.0, (inner + f_max * y[0].abs()).abs()),
            Constraint::Contact { mu } if mu.is_empty() => ((-y[0]).max(0.0), inner.abs()),
            Constraint::Contact { mu } => {
                let mut d = [0.0; 6];
                elliptic_cone::project_dual(mu, y, &mut d[..n]);
                (distance(y, &d[..n]), inner.abs())
            }
        };
        (primal, dual, gap)
    }
}

/// The friction-pyramid model of the kinds (Erleben and Ortiz 2008's boxed LCP, extended row by
/// row; [`crate::metrics::pyramid_metrics_for`]): every kind keeps its set and terms but a
/// contact with friction, whose set is the pyramid `P_mu = {r_n >= 0, |r_i| <= mu_i r_n}` (the
/// box approximation of `K_mu`) and whose conditions are, row by row, a limit's on the normal
/// row and a friction loss's with the bound `mu_i r_n` on each frictional row (no De Saxce
/// term: the boxed LCP pairs `r` with `u` itself).
impl Constraint {
    /// Projects `z` onto the kind's set in the pyramid model, into `out`: [`Constraint::project`]
    /// but for a contact with friction, projected onto `P_mu` ([`project_row_pyramid`]).
    pub fn project_pyramid(&self, z: &[f64], out: &mut [f64]) {
        match self {
            Constraint::Contact { mu } if !mu.is_empty() => project_row_pyramid(mu, z, out),
            _ => self.project(z, out),
        }
    }

    /// The pyramid model's natural map of impulse `r` and velocity `u`, into `out`: a contact
    /// with friction's rows are `r_n - max(0, r_n - u_n)` and
    /// `r_i - clip(r_i - u_i, -mu_i r_n+, mu_i r_n+)` (`r_n+ = max(r_n, 0)`: the boxed LCP's
    /// `x - mid(l, x - y, u)`, which is its min-map wherever `r_n >= 0`); every other kind's
    /// is [`Constraint::natural_map`].
    pub fn pyramid_natural_map(&self, r: &[f64], u: &[f64], out: &mut [f64]) {
        let Constraint::Contact { mu } = self else {
            return self.natural_map(r, u, out);
        };
        out[0] = r[0] - (r[0] - u[0]).max(0.0);
        let rn = r[0].max(0.0);
        for (i, m) in mu.iter().enumerate() {
            let f = m * rn;
            out[1 + i] = r[1 + i] - (r[1 + i] - u[1 + i]).max(-f).min(f);
        }
    }

    /// The block's figures of the pyramid ruler, `(dist(r, P), dual violation, gap)`: every
    /// kind's [`Constraint::violations`] but a contact with friction's, which are its rows'
    /// as a limit's and friction losses' with `f_i = mu_i r_n+` (the dual violation
    /// `max(0, -u_n)`, the gap `|r_n u_n| + sum_i |r_i u_i + f_i |u_i||`), and its distance
    /// from `P_mu`.
    pub fn pyramid_violations(&self, r: &[f64], u: &[f64]) -> (f64, f64, f64) {
        let Constraint::Contact { mu } = self else {
            return self.violations(r, u);
        };
        let n = r.len();
        let mut p = [0.0; 6];
        self.project_pyramid(r, &mut p[..n]);
        let rn = r[0].max(0.0);
        let gap = (r[0] * u[0]).abs()
            + mu.iter()
                .enumerate()
                .map(|(i, m)| (r[1 + i] * u[1 + i] + m * rn * u[1 + i].abs()).abs())
                .sum::<f64>();
        (distance(r, &p[..n]), (-u[0]).max(0.0), gap)
    }
}

/// Euclidean projection of `z` (normal first, then one row per coefficient of `mu`) onto the
/// pyramid `{z_n >= 0, |z_i| <= mu_i z_n}`, into `out`.
///
/// For a fixed normal `t >= 0` the nearest point clips each row to `[-mu_i t, mu_i t]`, at the
/// cost `f(t) = (t - z_n)^2 + sum_i max(0, |z_i| - mu_i t)^2`, convex in `t` with
/// `f'(t) = 2 (t - z_n) - 2 sum_i mu_i max(0, |z_i| - mu_i t)`. Its root lies between the
/// breakpoints `|z_i| / mu_i`: with the rows whose breakpoint exceeds `t` as the active set
/// `A`, `t = (z_n + sum_A mu_i |z_i|) / (1 + sum_A mu_i^2)`. The candidates are those of the
/// active sets made of the `k` largest breakpoints (`k = 0..m`) and `t = 0`, and the projection
/// is the candidate of least `f` (the minimiser is one of them; taking the least `f` rather
/// than testing each candidate's consistency is immune to ties).
pub fn project_row_pyramid(mu: &[f64], z: &[f64], out: &mut [f64]) {
    let m = mu.len();
    let cost = |t: f64| {
        let s: f64 = (0..m)
            .map(|i| (z[1 + i].abs() - mu[i] * t).max(0.0).powi(2))
            .sum();
        (t - z[0]).powi(2) + s
    };
    // Rows with a breakpoint (mu_i > 0), largest breakpoint first (at most five: a plain
    // insertion sort).
    let mut order = [0usize; 5];
    let mut k = 0;
    for i in (0..m).filter(|&i| mu[i] > 0.0) {
        let b = z[1 + i].abs() / mu[i];
        let mut j = k;
        while j > 0 && z[1 + order[j - 1]].abs() / mu[order[j - 1]] < b {
            order[j] = order[j - 1];
            j -= 1;
        }
        order[j] = i;
        k += 1;
    }
    let (mut best, mut best_cost) = (0.0, cost(0.0));
    let (mut num, mut den) = (z[0], 1.0);
    for step in 0..=k {
        if step > 0 {
            let i = order[step - 1];
            num += mu[i] * z[1 + i].abs();
            den += mu[i] * mu[i];
        }
        let t = (num / den).max(0.0);
        let c = cost(t);
        if c < best_cost {
            (best, best_cost) = (t, c);
        }
    }
    out[0] = best;
    for (i, m) in mu.iter().enumerate() {
        let f = m * best;
        out[1 + i] = z[1 + i].max(-f).min(f);
    }
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The constraints of a problem, in row order: each block with the first row it owns.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    blocks: Vec<Constraint>,
    starts: Vec<usize>,
    rows: usize,
    /// Per block, its first friction coefficient (0 for a frictionless contact, NaN for a
    /// block that is not a contact): the `mu` of a Coulomb problem, read without a copy.
    mu: Vec<f64>,
}

/// Equal when their blocks are (the rest follows from them; `mu`'s NaN would not compare).
impl PartialEq for Constraints {
    fn eq(&self, other: &Constraints) -> bool {
        self.blocks == other.blocks
    }
}

/// A block's first friction coefficient ([`Constraints::mu`]).
fn first_mu(b: &Constraint) -> f64 {
    match b {
        Constraint::Contact { mu } => mu.first().copied().unwrap_or(0.0),
        _ => f64::NAN,
    }
}

impl Constraints {
    /// The blocks in row order, each checked ([`Constraint::check`]); the error names the block
    /// by its index and kind.
    pub fn new(blocks: Vec<Constraint>) -> Result<Constraints, String> {
        let c = Constraints::unchecked(blocks);
        c.check()?;
        Ok(c)
    }

    /// The blocks in row order, their parameters not checked (the problem's validation checks
    /// them, [`Constraints::check`]).
    pub fn unchecked(blocks: Vec<Constraint>) -> Constraints {
        let mut starts = Vec::with_capacity(blocks.len());
        let mut rows = 0;
        for b in &blocks {
            starts.push(rows);
            rows += b.rows();
        }
        let mu = blocks.iter().map(first_mu).collect();
        Constraints {
            blocks,
            starts,
            rows,
            mu,
        }
    }

    /// Checks every block's parameters ([`Constraint::check`]); the error names the block by
    /// its index and kind.
    pub fn check(&self) -> Result<(), String> {
        for (i, b) in self.blocks.iter().enumerate() {
            b.check()
                .map_err(|e| format!("constraint {i} ({}): {e}", b.kind()))?;
        }
        Ok(())
    }

    /// The first block whose parameters are out of range, as `(index, kind, message)`.
    pub fn first_bad(&self) -> Option<(usize, &'static str, String)> {
        self.blocks
            .iter()
            .enumerate()
            .find_map(|(i, b)| b.check().err().map(|e| (i, b.kind(), e)))
    }

    /// Per block, its first friction coefficient: for the Coulomb problems every formulation
    /// takes ([`Constraints::coulomb_only`]), the friction coefficient of each contact (0 for a
    /// frictionless contact, NaN for a block that is not a contact).
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }

    /// The blocks, in row order.
    pub fn blocks(&self) -> &[Constraint] {
        &self.blocks
    }

    /// Three-row Coulomb contacts with the friction coefficients `mu`, one per contact (the
    /// problems of FCLib and of every scene before the constraint kinds). Unchecked values are
    /// the problem's own check's to refuse.
    pub fn coulomb(mu: &[f64]) -> Constraints {
        Constraints {
            blocks: mu.iter().map(|&m| Constraint::coulomb(m)).collect(),
            starts: (0..mu.len()).map(|a| 3 * a).collect(),
            rows: 3 * mu.len(),
            mu: mu.to_vec(),
        }
    }

    /// The total number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Each block with the range of rows it owns, in row order.
    pub fn iter(&self) -> impl Iterator<Item = (std::ops::Range<usize>, &Constraint)> {
        self.blocks
            .iter()
            .zip(&self.starts)
            .map(|(b, &s)| (s..s + b.rows(), b))
    }

    /// Whether every block is a three-row Coulomb contact ([`Constraint::is_coulomb`]): the
    /// problems every formulation takes.
    pub fn coulomb_only(&self) -> bool {
        self.blocks.iter().all(Constraint::is_coulomb)
    }

    /// The first block that `accepts` refuses, described ([`Constraint::describe`]) for the
    /// refusal's message.
    pub fn first_refused(&self, accepts: impl Fn(&Constraint) -> bool) -> Option<String> {
        self.blocks
            .iter()
            .find(|b| !accepts(b))
            .map(Constraint::describe)
    }

    /// The distinct kinds present, in [`KIND_NAMES`] order.
    pub fn kinds(&self) -> Vec<&'static str> {
        KIND_NAMES
            .into_iter()
            .filter(|k| self.blocks.iter().any(|b| b.kind() == *k))
            .collect()
    }

    /// The natural map over every block, `|r - P_C(r - y)|_2`, of impulses `r` and velocities
    /// `u` (see the module documentation; not yet divided by `1 + |q|`).
    pub fn natural_map(&self, r: &[f64], u: &[f64]) -> f64 {
        let mut nm2 = 0.0;
        let mut f = [0.0; 6];
        for (rows, b) in self.iter() {
            let (rb, ub) = (&r[rows.clone()], &u[rows]);
            let fb = &mut f[..rb.len()];
            b.natural_map(rb, ub, fb);
            nm2 += fb.iter().map(|x| x * x).sum::<f64>();
        }
        nm2.sqrt()
    }

    /// The shared ruler over every block: `(|r - P_C(r - y)|_2, max dist(r, C), max dual
    /// violation, sum of the gaps)` of impulses `r` and velocities `u` (see the module
    /// documentation; the natural map is not yet divided by `1 + |q|`).
    pub fn ruler(&self, r: &[f64], u: &[f64]) -> (f64, f64, f64, f64) {
        let (mut primal, mut dual, mut gap) = (0.0f64, 0.0f64, 0.0);
        for (rows, b) in self.iter() {
            let (p, d, g) = b.violations(&r[rows.clone()], &u[rows]);
            primal = primal.max(p);
            dual = dual.max(d);
            gap += g;
        }
        (self.natural_map(r, u), primal, dual, gap)
    }
}

/// The friction-pyramid model's ruler over every block (see [`Constraint::project_pyramid`]).
impl Constraints {
    /// `|F_P(r, u)|_2`, the pyramid model's natural map over every block
    /// ([`Constraint::pyramid_natural_map`]; not yet divided by `1 + |q|`).
    pub fn pyramid_natural_map(&self, r: &[f64], u: &[f64]) -> f64 {
        let mut nm2 = 0.0;
        let mut f = [0.0; 6];
        for (rows, b) in self.iter() {
            let fb = &mut f[..rows.len()];
            b.pyramid_natural_map(&r[rows.clone()], &u[rows], fb);
            nm2 += fb.iter().map(|x| x * x).sum::<f64>();
        }
        nm2.sqrt()
    }

    /// The pyramid model's ruler, `(|F_P|_2, max dist(r, P), max dual violation, sum of the
    /// gaps)`, as [`Constraints::ruler`] is the cone's.
    pub fn pyramid_ruler(&self, r: &[f64], u: &[f64]) -> (f64, f64, f64, f64) {
        let (mut primal, mut dual, mut gap) = (0.0f64, 0.0f64, 0.0);
        for (rows, b) in self.iter() {
            let (p, d, g) = b.pyramid_violations(&r[rows.clone()], &u[rows]);
            primal = primal.max(p);
            dual = dual.max(d);
            gap += g;
        }
        (self.pyramid_natural_map(r, u), primal, dual, gap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cone;
    use nalgebra::Vector3;
    use proptest::prelude::*;

    fn any_constraint() -> impl Strategy<Value = Constraint> {
        prop_oneof![
            (1usize..=6).prop_map(|rows| Constraint::Equality { rows }),
            Just(Constraint::Limit),
            (0.0..5.0f64).prop_map(|f_max| Constraint::FrictionLoss { f_max }),
            prop_oneof![Just(0usize), Just(2), Just(3), Just(5)].prop_flat_map(|k| {
                proptest::collection::vec(0.0..2.0f64, k).prop_map(|mu| Constraint::Contact { mu })
            }),
        ]
    }

    fn with_rows() -> impl Strategy<Value = (Constraint, Vec<f64>, Vec<f64>)> {
        any_constraint().prop_flat_map(|c| {
            let n = c.rows();
            (
                Just(c),
                proptest::collection::vec(-5.0..5.0f64, n),
                proptest::collection::vec(-5.0..5.0f64, n),
            )
        })
    }

    proptest! {
        /// Every kind's projection is the Euclidean projection onto a closed convex set: its
        /// value is in the set, it is idempotent, and no point of the set sampled along the
        /// segment to another projected point is nearer.
        #[test]
        fn each_projection_projects_onto_its_set((c, z, w) in with_rows()) {
            let n = z.len();
            let (mut p, mut p2, mut q) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            c.project(&z, &mut p);
            c.project(&p, &mut p2);
            prop_assert!(distance(&p, &p2) <= 1e-9 * (1.0 + norm(&z)));
            c.project(&w, &mut q);
            for k in 0..=10 {
                let s = k as f64 / 10.0;
                let y: Vec<f64> = p.iter().zip(&q).map(|(a, b)| (1.0 - s) * a + s * b).collect();
                prop_assert!(distance(&z, &p) <= distance(&z, &y) + 1e-9 * (1.0 + norm(&z)));
            }
        }

        /// At a solution built by construction (r in C, y in the dual set, complementary), the
        /// natural map and every figure of the ruler vanish.
        #[test]
        fn complementary_pairs_have_zero_natural_map((c, a, b) in with_rows()) {
            // r = P_C(a), and a velocity making r a solution: y = r - a when C is a cone
            // (Moreau: a - P_C(a) is in the polar cone, so y = P_C(a) - a is in the dual), the
            // normal cone's direction for the box.
            let n = a.len();
            let mut r = vec![0.0; n];
            c.project(&a, &mut r);
            let y: Vec<f64> = r.iter().zip(&a).map(|(r, a)| r - a).collect();
            // u from y: invert De Saxce where it applies (u_n = y_n - |D y_f|, same friction rows).
            let mut u = y.clone();
            if let Constraint::Contact { mu } = &c {
                if !mu.is_empty() {
                    u[0] -= elliptic_cone::dual_norm(mu, &y[1..]);
                }
            }
            let mut f = vec![0.0; n];
            c.natural_map(&r, &u, &mut f);
            let scale = 1.0 + norm(&a);
            prop_assert!(norm(&f) <= 1e-9 * scale, "{c:?}: F = {f:?}");
            let (p, d, g) = c.violations(&r, &u);
            prop_assert!(p <= 1e-9 * scale && d <= 1e-9 * scale && g <= 1e-8 * scale * scale,
                "{c:?}: {p} {d} {g}");
            let _ = b;
        }
    }

    proptest! {
        /// The pyramid model's projection of every kind is the Euclidean projection onto its
        /// set: in the set (a contact's `|r_i| <= mu_i r_n`), idempotent, and nearer than any
        /// point sampled along the segment to another projected point.
        #[test]
        fn each_pyramid_projection_projects_onto_its_set((c, z, w) in with_rows()) {
            let n = z.len();
            let (mut p, mut p2, mut q) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            c.project_pyramid(&z, &mut p);
            c.project_pyramid(&p, &mut p2);
            let tol = 1e-9 * (1.0 + norm(&z));
            prop_assert!(distance(&p, &p2) <= tol);
            if let Constraint::Contact { mu } = &c {
                if !mu.is_empty() {
                    prop_assert!(p[0] >= 0.0);
                    for (i, m) in mu.iter().enumerate() {
                        prop_assert!(p[1 + i].abs() <= m * p[0] + tol);
                    }
                }
            }
            c.project_pyramid(&w, &mut q);
            for k in 0..=10 {
                let s = k as f64 / 10.0;
                let y: Vec<f64> = p.iter().zip(&q).map(|(a, b)| (1.0 - s) * a + s * b).collect();
                prop_assert!(distance(&z, &p) <= distance(&z, &y) + tol);
            }
        }

        /// At a solution of the pyramid model built by construction the pyramid ruler
        /// vanishes: `r = P(a)`, and on a contact's frictional rows `u_i = r_i - a_i` (`<= 0`
        /// at the upper bound, `>= 0` at the lower, 0 inside), its normal `u_n = 0` where
        /// `r_n > 0`, else `-a_n >= 0`; every other kind as for the cone.
        #[test]
        fn pyramid_solutions_have_a_zero_pyramid_ruler((c, a, _b) in with_rows()) {
            let n = a.len();
            let mut r = vec![0.0; n];
            c.project_pyramid(&a, &mut r);
            let mut u: Vec<f64> = r.iter().zip(&a).map(|(r, a)| r - a).collect();
            if matches!(&c, Constraint::Contact { mu } if !mu.is_empty()) && r[0] > 0.0 {
                u[0] = 0.0;
            }
            let mut f = vec![0.0; n];
            c.pyramid_natural_map(&r, &u, &mut f);
            let scale = 1.0 + norm(&a);
            prop_assert!(norm(&f) <= 1e-9 * scale, "{c:?}: F = {f:?}");
            let (p, d, g) = c.pyramid_violations(&r, &u);
            prop_assert!(p <= 1e-9 * scale && d <= 1e-9 * scale && g <= 1e-8 * scale * scale,
                "{c:?}: {p} {d} {g}");
        }
    }

    #[test]
    fn the_pyramid_ruler_on_known_points() {
        // (0, 1, 0) onto the pyramid of mu = (1, 1): the face r_t1 = r_n at (1/2, 1/2, 0).
        let c = Constraint::coulomb(1.0);
        let mut p = [0.0; 3];
        c.project_pyramid(&[0.0, 1.0, 0.0], &mut p);
        assert!(distance(&p, &[0.5, 0.5, 0.0]) < 1e-15, "{p:?}");
        // A pyramid's corner is outside the cone: sliding diagonally at r = (1, mu, mu) with
        // u opposing it row by row is a pyramid solution, not a Coulomb one.
        let (r, u) = ([1.0, 0.5, 0.5], [0.0, -1.0, -1.0]);
        let c = Constraint::coulomb(0.5);
        let mut f = [0.0; 3];
        c.pyramid_natural_map(&r, &u, &mut f);
        assert_eq!(f, [0.0; 3]);
        assert_eq!(c.pyramid_violations(&r, &u), (0.0, 0.0, 0.0));
        c.natural_map(&r, &u, &mut f);
        assert!(norm(&f) > 0.1, "{f:?}");
        // condim 4: the torsional row at its bound mu_3 r_n opposing a spin.
        let c = Constraint::Contact {
            mu: vec![0.5, 0.5, 0.1],
        };
        let (r, u) = ([2.0, 0.0, 0.3, 0.2], [0.0, 0.0, 0.0, -4.0]);
        let mut f = [0.0; 4];
        c.pyramid_natural_map(&r, &u, &mut f);
        assert_eq!(f, [0.0; 4]);
        // The torsion pushing with the spin instead: row 3 is `0.2 - clip(4.2, -0.2, 0.2)`
        // off by 0.4, and its gap term |r u + f |u|| is 1.6.
        let u = [0.0, 0.0, 0.0, 4.0];
        c.pyramid_natural_map(&r, &u, &mut f);
        assert!((f[3] - 0.4).abs() < 1e-15 && f[..3] == [0.0; 3], "{f:?}");
        let (_, d, g) = c.pyramid_violations(&r, &u);
        assert!(d == 0.0 && (g - 1.6).abs() < 1e-15, "{g}");
        // Every other kind: the cone model's terms.
        let fl = Constraint::FrictionLoss { f_max: 1.0 };
        assert_eq!(
            fl.pyramid_violations(&[1.0], &[0.3]),
            fl.violations(&[1.0], &[0.3])
        );
        let blocks =
            Constraints::new(vec![Constraint::Equality { rows: 2 }, Constraint::Limit]).unwrap();
        let (r, u) = ([1.0, 2.0, 0.5], [0.1, -0.2, 0.3]);
        assert_eq!(blocks.pyramid_ruler(&r, &u), blocks.ruler(&r, &u));
    }

    /// Every kind's derivative of the projection matches central differences at random
    /// points away from its kinks (an entry whose forward and backward quotients differ has a
    /// kink within the step, where the derivative is one of two one-sided ones: it is skipped).
    #[test]
    fn each_projection_jacobian_matches_finite_differences() {
        use rand::{Rng, SeedableRng};
        let kinds = [
            Constraint::Equality { rows: 1 },
            Constraint::Equality { rows: 6 },
            Constraint::Limit,
            Constraint::FrictionLoss { f_max: 0.7 },
            Constraint::Contact { mu: vec![] },
            Constraint::coulomb(0.6),
            Constraint::Contact {
                mu: vec![0.9, 0.5, 0.02],
            },
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.01, 0.001, 0.001],
            },
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let h = 1e-7;
        for c in &kinds {
            let n = c.rows();
            for _ in 0..50 {
                let z: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
                let mut j = vec![0.0; n * n];
                c.project_jacobian(&z, &mut j);
                let (mut pp, mut pm, mut p0) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                c.project(&z, &mut p0);
                for col in 0..n {
                    let (mut zp, mut zm) = (z.clone(), z.clone());
                    zp[col] += h;
                    zm[col] -= h;
                    c.project(&zp, &mut pp);
                    c.project(&zm, &mut pm);
                    for row in 0..n {
                        let (fwd, bwd) = ((pp[row] - p0[row]) / h, (p0[row] - pm[row]) / h);
                        if (fwd - bwd).abs() > 1e-4 {
                            continue;
                        }
                        let fd = 0.5 * (fwd + bwd);
                        assert!(
                            (j[row * n + col] - fd).abs() < 1e-5,
                            "{c:?} at {z:?} ({row},{col}): {} vs {fd}",
                            j[row * n + col]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn coulomb_blocks_match_todays_natural_map() {
        let c = Constraint::coulomb(0.5);
        let (r, u) = ([1.0, 0.3, -0.2], [0.1, 1.5, 0.4]);
        let mut f = [0.0; 3];
        c.natural_map(&r, &u, &mut f);
        let want = Vector3::from(r)
            - cone::project(
                0.5,
                Vector3::from(r) - cone::de_saxce(0.5, Vector3::from(u)),
            );
        for i in 0..3 {
            assert!((f[i] - want[i]).abs() < 1e-15, "{f:?} vs {want:?}");
        }
    }

    #[test]
    fn each_kind_on_a_known_point() {
        let mut f = [0.0; 1];
        // A limit pushing while the row separates: violates complementarity by min(r, u).
        Constraint::Limit.natural_map(&[2.0], &[0.5], &mut f);
        assert_eq!(f, [0.5]);
        // A friction loss sliding forward (u > 0) must hold r = -f_max.
        let fl = Constraint::FrictionLoss { f_max: 1.0 };
        fl.natural_map(&[-1.0], &[0.3], &mut f);
        assert_eq!(f, [0.0]);
        // Pushing forward instead: the natural map is the distance to the answer's set, here
        // `r - clip(r - u) = 1 - 0.7`.
        fl.natural_map(&[1.0], &[0.3], &mut f);
        assert!((f[0] - 0.3).abs() < 1e-15, "{f:?}");
        assert_eq!(fl.violations(&[-1.0], &[0.3]), (0.0, 0.0, 0.0));
        // Stuck inside the box: u = 0.
        fl.natural_map(&[0.4], &[0.0], &mut f);
        assert_eq!(f, [0.0]);
        // An equality's natural map is its velocity.
        let mut f3 = [0.0; 3];
        Constraint::Equality { rows: 3 }.natural_map(&[5.0, -1.0, 2.0], &[0.1, 0.0, -0.2], &mut f3);
        assert_eq!(f3, [0.1, 0.0, -0.2]);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Constraints::new(vec![
            Constraint::coulomb(0.5),
            Constraint::FrictionLoss { f_max: -1.0 },
        ])
        .unwrap_err();
        assert!(
            e.contains("constraint 1 (friction_loss)") && e.contains("-1"),
            "{e}"
        );
        let e = Constraint::Contact {
            mu: vec![1.0, f64::NAN, 0.1],
        }
        .check()
        .unwrap_err();
        assert!(e.contains("mu[1]") && e.contains("NaN"), "{e}");
        assert!(Constraint::Contact { mu: vec![1.0] }.check().is_err());
        assert!(Constraint::Equality { rows: 7 }.check().is_err());
        let ok = Constraints::new(vec![
            Constraint::Equality { rows: 6 },
            Constraint::Limit,
            Constraint::Contact {
                mu: vec![1.0, 1.0, 0.01],
            },
        ])
        .unwrap();
        assert_eq!(ok.rows(), 11);
        assert_eq!(ok.kinds(), ["equality", "limit", "contact"]);
        assert!(!ok.coulomb_only());
        assert_eq!(
            ok.first_refused(Constraint::is_coulomb).as_deref(),
            Some("equality (6 rows)")
        );
        assert!(Constraints::coulomb(&[0.3, 0.5]).coulomb_only());
        let ranges: Vec<_> = ok.iter().map(|(r, _)| r).collect();
        assert_eq!(ranges, [0..6, 6..7, 7..11]);
    }
}
