//! Sensitivities of the natural map's answer to the problem's data, by the implicit function
//! theorem (issue 43): in contact space the free velocity `q`, the Delassus matrix `W` and the
//! friction coefficients `mu`; a generalized problem's `f`, `w`, `M` and `H` by the chain rule
//! through them ([`generalized`]).
//!
//! At an answer `r` of the natural map `F(r; q, W, mu) = 0` ([`super`]: `F_b = r_b - P(r_b -
//! rho_b y_b(u))`, `u = W r + q`), a change `(dq, dW, dmu)` of the data moves the answer by
//! `dr` with
//!
//! `J dr = -B (dq + dW r) - F_mu dmu`, `du = W dr + dq + dW r`,
//!
//! `J = (I - D) + B W` the residual's generalized Jacobian, `B = blockdiag(rho_b D_b L_b)`
//! its derivative with respect to `u` (the module documentation of [`super`] has both) and
//! `F_mu` its derivative with respect to each contact's coefficient (one column per block,
//! [`super`]'s `block_mu_derivative`: the cone's projection and De Saxcé's term both move).
//! Where `P` is differentiable at the answer (no contact on a regime boundary) and `J` is
//! regular, this is the derivative of the unique answer. The step `rho_b` cancels: `F`
//! vanishes at the answer for every `rho_b > 0`, so `D_b y_b = 0` there and `rho_b`'s
//! dependence on `W` adds nothing.
//!
//! Reverse mode: for cotangents `(r̄, ū)` of `(r, u)`, `λ = J^-T (r̄ + W' ū)` (`W'`: a file's
//! `W` may be asymmetric in its last digits), `q̄ = ū - B' λ`, `W̄ = sym((ū - B' λ) r')` (the derivative with respect to a symmetric
//! `W`, `sym(G) = (G + G') / 2`; forward mode symmetrizes `dW` the same way) and
//! `mū = -F_mu' λ`, so that `<r̄, dr> + <ū, du> = <q̄, dq> + <W̄, dW> + <mū, dmu>`.
//!
//! **What `mu` means.** A block's `mu` is its first coefficient
//! ([`contactlab_core::Constraints::mu`]); a change of it moves the two tangential
//! coefficients together in proportion (both by `dmu` on a Coulomb contact) and leaves a
//! contact's torsional and rolling coefficients (MuJoCo's separate spin and roll frictions)
//! where they are. A block without friction (a limit, a friction loss, an equality, a
//! frictionless contact) has no `mu`: a nonzero change there is refused, and its gradient
//! entry is 0.
//!
//! `J` is factored once by a column-pivoted QR ([`min_norm`]). Where it is singular (rigid
//! impulses that are not unique: a box on a plane has twelve contact rows against six
//! velocities), the derivative is the minimum-norm element `J^+` gives, and
//! [`Sensitivity::non_unique`] says so.
//!
//! **Regimes.** The answer is differentiable where every block's `z_b = r_b - rho_b y_b` lies
//! off the kinks of its projection. [`Sensitivity::regimes`] names each block's regime from
//! `z_b` and flags it [`Regime::Degenerate`] within a margin of a kink (the issue's rule: `10 h`
//! for a finite-difference step `h`); there `J` holds one element of the generalized Jacobian,
//! the one-sided derivative [`Constraint::project_jacobian`] documents.

use contactlab_core::constraint::Constraint;
use contactlab_core::metrics::natural_map_residual;
use contactlab_core::{elliptic_cone, CoreError, LocalProblem, Residual};
use faer::{Col, Mat};

use super::{block_point, NaturalMap};
use min_norm::MinNorm;

/// The names of an answer's outputs and of a problem's fields, as the lab and the Python
/// package spell them.
pub mod names {
    /// The impulses.
    pub const R: &str = "r";
    /// The contact velocities.
    pub const U: &str = "u";
    /// The generalized velocities.
    pub const V: &str = "v";
    /// A contact-space problem's fields.
    pub const LOCAL_FIELDS: [&str; 3] = ["q", "W", "mu"];
    /// A generalized problem's fields.
    pub const GENERALIZED_FIELDS: [&str; 9] =
        ["f", "w", "M", "H", "mu", "phi0", "stiffness", "tau_d", "dt"];
    /// A contact-space answer's outputs.
    pub const LOCAL_OUTPUTS: [&str; 2] = [R, U];
    /// A generalized answer's outputs.
    pub const GENERALIZED_OUTPUTS: [&str; 3] = [R, U, V];
}

/// Diagonal entries of `J`'s pivoted `R` below this times the first are taken as zero.
const RANK_TOL: f64 = 1e-12;

/// Where a block's answer sits, read from `z_b = r_b - rho_b y_b` (`y_b` its paired velocity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// No impulse, the block opens (`z_b` strictly inside the polar of its set: a contact or
    /// limit separating).
    Separating,
    /// The impulse strictly inside its set, the velocity zero (a contact sticking, a limit
    /// pushing, a friction loss holding, an equality).
    Sticking,
    /// The impulse on its set's boundary, the velocity along the outward normal (a contact
    /// sliding, a friction loss at its bound).
    Sliding,
    /// Within the margin of a kink: the derivative is one element of the generalized Jacobian.
    Degenerate,
}

impl Regime {
    /// The regime's name, as reports and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Regime::Separating => "separating",
            Regime::Sticking => "sticking",
            Regime::Sliding => "sliding",
            Regime::Degenerate => "degenerate",
        }
    }
}

/// A block's regime off the kinks and its distance to the nearest kink, in the units of the
/// point it is read from: within a margin of it the block is [`Regime::Degenerate`].
pub type Kink = (Regime, f64);

/// A block's regime from its `z` ([`Kink`]). On a cone the signed measures are
/// `z_n - |D^-1 z_f|` (positive inside `K`) and `-z_n - |D z_f|` (positive inside the polar
/// cone); on a one-row set the distance of `z` to its bounds.
fn regime(c: &Constraint, z: &[f64]) -> Kink {
    let classify = |inside: f64, polar: f64| {
        let regime = if inside > 0.0 {
            Regime::Sticking
        } else if polar > 0.0 {
            Regime::Separating
        } else {
            Regime::Sliding
        };
        (regime, inside.abs().min(polar.abs()))
    };
    match c {
        Constraint::Equality { .. } => (Regime::Sticking, f64::INFINITY),
        Constraint::Limit => classify(z[0], -z[0]),
        Constraint::Contact { mu } if mu.is_empty() => classify(z[0], -z[0]),
        Constraint::FrictionLoss { f_max } => {
            let inside = f_max - z[0].abs();
            // Past the bound it slides; the box has no polar region.
            classify(inside, f64::NEG_INFINITY)
        }
        Constraint::Contact { mu } => {
            let zf = &z[1..];
            // Friction on a row without a coefficient lies outside the cone at any normal.
            let scaled = elliptic_cone::scaled_friction(mu, zf).unwrap_or(f64::INFINITY);
            classify(z[0] - scaled, -z[0] - elliptic_cone::dual_norm(mu, zf))
        }
    }
}

/// The derivatives of an answer to a contact-space problem, whichever model it answers (the
/// natural map's [`Sensitivity`], SAP's through its generalized form): what the lab asks of
/// either.
pub trait LocalDerivative {
    /// Forward mode: `(dr, du)` for a change of the data.
    fn jvp(&self, d: &LocalDirection<'_>) -> Result<(Vec<f64>, Vec<f64>), CoreError>;
    /// Reverse mode: the gradient of `<r̄, r> + <ū, u>` with respect to `q`, `W` and `mu`.
    fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<LocalGradient, CoreError>;
}

impl LocalDerivative for Sensitivity {
    fn jvp(&self, d: &LocalDirection<'_>) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        Sensitivity::jvp(self, d)
    }

    fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<LocalGradient, CoreError> {
        Sensitivity::vjp(self, r_bar, u_bar)
    }
}

/// What [`Sensitivity::from_parts`] factors: a residual's derivatives at its answer.
#[derive(Debug, Clone)]
pub struct Parts {
    /// `W`, dense (as the residual read it).
    pub w: Mat<f64>,
    /// `J = dF/dr` (`n x n`, one element of the generalized Jacobian).
    pub j: Mat<f64>,
    /// `B = dF/du` (`n x n`).
    pub b: Mat<f64>,
    /// `F_mu = dF/dmu` (`n x nb`, one column per block).
    pub f_mu: Mat<f64>,
    /// Each block's [`Kink`].
    pub kinks: Vec<Kink>,
    /// The residual's dependence on entries of `W` other than through `u` (none for the natural
    /// map and the pyramid; Hwangbo's slipping contacts read their block of `W`).
    pub w_direct: Vec<WEntry>,
    /// The impulses as a linear map of the residual's unknowns, `r = P x` (`n x N`), where the
    /// unknowns are not the impulses themselves (Mylapilli and Jain's MLCP: `z = [p_b; beta;
    /// sigma]`); `None`: the unknowns are `r`. `J` is then `N x N`, `B` `N x n`, `F_mu` `N x nb`.
    pub impulse_map: Option<Mat<f64>>,
}

/// One residual row's direct dependence on one entry of a symmetric `W`: the row moves by `c`
/// per unit of `(dW_ij + dW_ji) / 2`, beyond what `u = W r + q` carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WEntry {
    /// The residual's row.
    pub row: usize,
    /// The entry's row in `W`.
    pub i: usize,
    /// The entry's column in `W`.
    pub j: usize,
    /// `dF_row / dW_ij`, `W` read symmetrically.
    pub c: f64,
}

/// The gradient of a scalar with respect to the entries of `W` a residual reads directly:
/// `(i, j, w̄)` per [`WEntry`], `w̄` the derivative with respect to `(W_ij + W_ji) / 2`.
pub type DirectGradient = Vec<(usize, usize, f64)>;

/// A change of a contact-space problem's data (forward mode); a field left `None` does not
/// move.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalDirection<'a> {
    /// `dq`, one entry per row.
    pub q: Option<&'a [f64]>,
    /// `dW`, row-major `n x n` (symmetrized).
    pub w: Option<&'a [f64]>,
    /// `dmu`, one entry per block (the module documentation says what moves).
    pub mu: Option<&'a [f64]>,
}

/// The gradient of a scalar of the answer with respect to a contact-space problem's data.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalGradient {
    /// `q̄`, one entry per row.
    pub q: Vec<f64>,
    /// `W̄`, row-major `n x n`, symmetric.
    pub w: Vec<f64>,
    /// `mū`, one entry per block (0 for blocks without friction).
    pub mu: Vec<f64>,
}

/// An answer to a local problem, factored for its derivatives: the natural map's
/// ([`Sensitivity::new`]), or any residual's whose derivatives with respect to `u` and `mu` are
/// given ([`Sensitivity::from_parts`]: the friction pyramid's min-map).
#[derive(Debug, Clone)]
pub struct Sensitivity {
    r: Vec<f64>,
    w: Mat<f64>,
    /// `B`, the residual's derivative with respect to `u`.
    b: Mat<f64>,
    /// `F_mu`, the residual's derivative with respect to each block's `mu` (`n x nb`).
    f_mu: Mat<f64>,
    /// `J`, factored for its minimum-norm solutions.
    factor: MinNorm,
    /// Each block's kind, and its regime and distance to a kink at the answer.
    constraints: Vec<Constraint>,
    kinks: Vec<Kink>,
    /// The residual's direct dependence on `W`'s entries ([`Parts::w_direct`]).
    w_direct: Vec<WEntry>,
    /// `P`, where the unknowns are not the impulses ([`Parts::impulse_map`]).
    impulse_map: Option<Mat<f64>>,
}

impl Sensitivity {
    /// Factors the derivatives at `r`, which must answer `problem` to `tol` on the shared ruler
    /// ([`natural_map_residual`]): the derivative of a point that is not an answer means
    /// nothing.
    pub fn new(problem: &LocalProblem, r: &[f64], tol: f64) -> Result<Sensitivity, CoreError> {
        check_answer_rows(problem, r)?;
        refuse_unless_answer(
            natural_map_residual(problem, r),
            tol,
            "the impulses do not answer the problem",
            "natural-map residual",
        )?;
        Sensitivity::from_parts(problem, r, natural_parts(problem, r))
    }

    /// Factors the derivatives at `r` of a residual `F(r; u, mu)` whose Jacobian, derivatives
    /// with respect to `u = W r + q` and `mu`, and blocks' regimes at `r` are `parts` (the
    /// caller has checked that `r` is its answer).
    pub fn from_parts(
        problem: &LocalProblem,
        r: &[f64],
        parts: Parts,
    ) -> Result<Sensitivity, CoreError> {
        let Parts {
            w,
            j,
            b,
            f_mu,
            kinks,
            w_direct,
            impulse_map,
        } = parts;
        let n = r.len();
        let unknowns = impulse_map.as_ref().map_or(n, |p| p.ncols());
        let shapes = [
            (j.nrows(), unknowns),
            (j.ncols(), unknowns),
            (b.nrows(), unknowns),
            (b.ncols(), n),
            (f_mu.nrows(), unknowns),
            (w.nrows(), n),
        ];
        if shapes.iter().any(|(got, want)| got != want)
            || impulse_map.as_ref().is_some_and(|p| p.nrows() != n)
        {
            return Err(CoreError::BadOption(
                "sensitivity: the residual's derivatives do not match the answer's sizes".into(),
            ));
        }
        if !j.as_ref().is_all_finite() {
            return Err(CoreError::BadOption(
                "sensitivity: the residual's Jacobian at the answer is not finite".into(),
            ));
        }
        Ok(Sensitivity {
            r: r.to_vec(),
            w,
            b,
            f_mu,
            factor: MinNorm::new(&j, RANK_TOL),
            constraints: problem.constraints.iter().map(|(_, c)| c.clone()).collect(),
            kinks,
            w_direct,
            impulse_map,
        })
    }

    /// Whether `J` is singular at the answer: the residual's unknowns (the impulses, or what
    /// [`Parts::impulse_map`] maps to them) are then not unique, and the derivatives are the
    /// minimum-norm element.
    pub fn non_unique(&self) -> bool {
        self.factor.rank() < self.unknowns()
    }

    /// The residual's unknowns: the impulses' rows, or the columns of [`Parts::impulse_map`].
    fn unknowns(&self) -> usize {
        self.impulse_map
            .as_ref()
            .map_or(self.r.len(), |p| p.ncols())
    }

    /// The numerical rank of `J` (the diagonal of its pivoted QR's `R` above `1e-12` times
    /// the first).
    pub fn rank(&self) -> usize {
        self.factor.rank()
    }

    /// Each block's regime at the answer, [`Regime::Degenerate`] within `margin` of a kink.
    pub fn regimes(&self, margin: f64) -> Vec<Regime> {
        self.kinks
            .iter()
            .map(|&(r, d)| if d <= margin { Regime::Degenerate } else { r })
            .collect()
    }

    /// The problem's rows.
    pub fn rows(&self) -> usize {
        self.r.len()
    }

    /// The problem's constraint blocks (the length of `mu`).
    pub fn blocks(&self) -> usize {
        self.constraints.len()
    }

    /// The impulses at which the derivatives were factored.
    pub fn r(&self) -> &[f64] {
        &self.r
    }

    /// Forward mode: `(dr, du)` for a change of the data (fields left `None` do not move;
    /// `W`'s change row-major `n x n`, symmetrized).
    pub fn jvp(&self, d: &LocalDirection<'_>) -> Result<(Vec<f64>, Vec<f64>), CoreError> {
        let n = self.r.len();
        // The velocity's direct change, dq + dW r.
        let mut delta = Col::zeros(n);
        if let Some(dq) = d.q {
            self.check_len("dq", dq.len(), n)?;
            delta += Col::from_fn(n, |i| dq[i]);
        }
        let dw = d.w.map(|dw| self.symmetric("dW", dw)).transpose()?;
        if let Some(dw) = &dw {
            delta += dw * Col::from_fn(n, |i| self.r[i]);
        }
        let entry = |i: usize, j: usize| dw.as_ref().map_or(0.0, |dw| dw[(i, j)]);
        let (dr, du) = self.answer_change(&delta, d.mu, &entry)?;
        Ok((to_vec(&dr), to_vec(&du)))
    }

    /// `(dr, du)` for a direct change `delta` of the velocity (`dq + dW r`, however the data
    /// moved), `dmu` of the coefficients and `dw(i, j)` of the entries of `W` the residual reads
    /// directly (asked for only those): `dr = -J^+ (B delta + F_mu dmu + F_W dW)`,
    /// `du = W dr + delta`.
    pub(crate) fn answer_change(
        &self,
        delta: &Col<f64>,
        dmu: Option<&[f64]>,
        dw: &dyn Fn(usize, usize) -> f64,
    ) -> Result<(Col<f64>, Col<f64>), CoreError> {
        let mut rhs = -(&self.b * delta);
        if let Some(dmu) = dmu {
            rhs -= &self.f_mu * self.mu_change(dmu)?;
        }
        for e in &self.w_direct {
            rhs[e.row] -= e.c * dw(e.i, e.j);
        }
        let dx = self.factor.solve(&rhs);
        let dr = match &self.impulse_map {
            Some(p) => p * &dx,
            None => dx,
        };
        let du = &self.w * &dr + delta;
        Ok((dr, du))
    }

    /// A change of `mu` as a column, refused where a block without friction would move.
    fn mu_change(&self, dmu: &[f64]) -> Result<Col<f64>, CoreError> {
        check("dmu", dmu.len(), self.blocks(), "constraint blocks")?;
        for (b, (c, d)) in self.constraints.iter().zip(dmu).enumerate() {
            let frictional = matches!(c, Constraint::Contact { mu } if !mu.is_empty());
            if *d != 0.0 && !frictional {
                return Err(CoreError::BadOption(format!(
                    "sensitivity: block {b} ({}) has no friction coefficient; its `mu` \
                     change must be 0",
                    c.kind()
                )));
            }
        }
        Ok(Col::from_fn(dmu.len(), |i| dmu[i]))
    }

    /// Reverse mode: the gradient of `<r̄, r> + <ū, u>` with respect to `q`, `W` (row-major,
    /// symmetric) and `mu`.
    pub fn vjp(&self, r_bar: &[f64], u_bar: &[f64]) -> Result<LocalGradient, CoreError> {
        let n = self.r.len();
        self.check_len("r_bar", r_bar.len(), n)?;
        self.check_len("u_bar", u_bar.len(), n)?;
        let (g, mu, direct) = self.adjoint(
            Col::from_fn(n, |i| r_bar[i]),
            &Col::from_fn(n, |i| u_bar[i]),
        );
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = 0.5 * (g[i] * self.r[j] + g[j] * self.r[i]);
            }
        }
        for (i, j, bar) in direct {
            w[i * n + j] += 0.5 * bar;
            w[j * n + i] += 0.5 * bar;
        }
        Ok(LocalGradient {
            q: to_vec(&g),
            w,
            mu: to_vec(&mu),
        })
    }

    /// `(g, mū, w̄)`: `λ = J^-T (r̄ + W' ū)` (`W'`: a file's `W` may be asymmetric in its
    /// last digits), `g = ū - B' λ` (the gradient of the velocity's direct change `dq + dW r`),
    /// `mū = -F_mu' λ` and the gradient of the entries of `W` the residual reads directly.
    pub(crate) fn adjoint(
        &self,
        r_bar: Col<f64>,
        u_bar: &Col<f64>,
    ) -> (Col<f64>, Col<f64>, DirectGradient) {
        let mut rhs = r_bar + self.w.transpose() * u_bar;
        if let Some(p) = &self.impulse_map {
            rhs = p.transpose() * &rhs;
        }
        let lambda = self.factor.solve_transpose(&rhs);
        let g = u_bar - self.b.transpose() * &lambda;
        let mu = -(self.f_mu.transpose() * &lambda);
        let direct = self
            .w_direct
            .iter()
            .map(|e| (e.i, e.j, -e.c * lambda[e.row]))
            .collect();
        (g, mu, direct)
    }

    fn check_len(&self, what: &str, got: usize, want: usize) -> Result<(), CoreError> {
        check(what, got, want, "rows")
    }

    /// `sym(d)` of a row-major `n x n` direction.
    fn symmetric(&self, what: &str, d: &[f64]) -> Result<Mat<f64>, CoreError> {
        let n = self.r.len();
        self.check_len(what, d.len(), n * n)?;
        Ok(Mat::from_fn(n, n, |i, j| {
            0.5 * (d[i * n + j] + d[j * n + i])
        }))
    }
}

/// The natural map's derivatives at `r` (not checked to be an answer): its generalized
/// Jacobian, `B`, `F_mu` and each block's regime from `z_b` (the module documentation).
pub(crate) fn natural_parts(problem: &LocalProblem, r: &[f64]) -> Parts {
    let n = problem.q.len();
    let map = NaturalMap::new(problem);
    let mut j = Mat::zeros(n, n);
    map.jacobian(r, j.as_mut());
    let u = problem.velocity(r);
    let kinks = problem
        .constraints
        .iter()
        .zip(&map.rho)
        .map(|((rows, c), &rho)| {
            let mut z = vec![0.0; rows.len()];
            block_point(c, rho, &r[rows.clone()], &u[rows], &mut z);
            regime(c, &z)
        })
        .collect();
    let (b, f_mu) = (map.velocity_jacobian(r), map.mu_jacobian(r));
    Parts {
        w: map.w,
        j,
        b,
        f_mu,
        kinks,
        w_direct: Vec::new(),
        impulse_map: None,
    }
}

/// Refuses impulses `r` of another length than `problem`'s rows.
pub(crate) fn check_answer_rows(problem: &LocalProblem, r: &[f64]) -> Result<(), CoreError> {
    let n = problem.q.len();
    if r.len() != n {
        return Err(CoreError::BadOption(format!(
            "sensitivity: the answer has {} impulses, the problem {n} rows",
            r.len()
        )));
    }
    Ok(())
}

/// Refuses a point whose `residual` on its model's own `measure` is not finite or above `tol`
/// (`what`: what does not answer which model): the derivative of a point that is not an answer
/// means nothing.
pub(crate) fn refuse_unless_answer(
    residual: f64,
    tol: f64,
    what: &str,
    measure: &str,
) -> Result<(), CoreError> {
    if residual.is_nan() || residual > tol {
        return Err(CoreError::BadOption(format!(
            "sensitivity: {what} ({measure} {residual:e} above {tol:e}); differentiate a \
             converged solve"
        )));
    }
    Ok(())
}

/// Refuses a direction or cotangent of the wrong length, naming it and what it should match.
pub(crate) fn check(what: &str, got: usize, want: usize, of: &str) -> Result<(), CoreError> {
    if got == want {
        Ok(())
    } else {
        Err(CoreError::BadOption(format!(
            "sensitivity: `{what}` has {got} entries, the problem {want} {of}"
        )))
    }
}

/// A column as a vector.
pub(crate) fn to_vec(c: &Col<f64>) -> Vec<f64> {
    (0..c.nrows()).map(|i| c[i]).collect()
}

pub mod generalized;
mod min_norm;

#[cfg(test)]
mod tests;
