//! The one block Gauss-Seidel / SOR sweep over contacts that every per-contact method plugs
//! into: projected Gauss-Seidel with the natural-map local solve ([`super::pgs`]), and Hwangbo,
//! Lee and Hutter 2018's per-contact methods (`contactlab_formulations::hwangbo`: their PGS of
//! eqs. 17-18 and the bisection-SOR of Algorithm 2).
//!
//! One iteration is one sweep over the contacts `a = 0..nc` in order. Contact `a` sees the
//! others frozen (Hwangbo et al. eq. 5): `u_a = c_a + W_aa r_a` with
//! `c_a = q_a + sum_{b != a} W_ab r_b`. A [`ContactSolver`] returns the contact's new impulse
//! `r*_a` from `W_aa`, `c_a`, `mu_a` and the current `r_a`; the sweep relaxes it,
//! `r_a <- r_a + alpha (r*_a - r_a)` (Algorithm 2's `alpha r* + (1 - alpha) r`, written as an
//! update so that `alpha = 1` keeps the previous rounding of `pgs`), and moves on. The
//! relaxation follows a [`Relaxation`] schedule (constant for PGS; Algorithm 2 line 12 for the
//! bisection-SOR) and the run stops by a [`StopRule`]: the shared natural-map residual (`pgs`),
//! Hwangbo's PGS error (impulse change plus penetration velocity, sec. V-C) or Hwangbo's sum of
//! physical-constraint violations ([`contact_violation`], sec. III-B and V-C).
//!
//! The contact velocities `u = W r + q` are carried along the sweep rather than formed per
//! contact: contact `a` reads `c_a = u_a - W_aa r_a`, and a contact whose impulse moved by
//! `delta` adds `W e_a delta` (its block column) to `u`. A sweep then costs one block column
//! per contact that moved (none for a contact that stays open), the same products a row each
//! would cost, and the natural-map test after it needs no product with `W`. The carried `u`
//! is formed anew from `r` every 64 sweeps (`REFORM_EVERY`) and before a measure below the
//! tolerance is believed, so convergence is never decided on carried rounding.
//!
//! Each sweep reports how many contacts its local solves found opening, sticking and slipping
//! (counters `opening_contacts`, `sticking_contacts`, `slipping_contacts`, of the last sweep)
//! and how many inner steps they took over the whole solve (`local_steps`). A local solve that
//! fails stops the run with a [`Status`] naming why ([`LocalError::status`]).
//!
//! A solver that opts in ([`ContactSolver::OTHER_KINDS`]) also takes problems with other
//! constraint kinds: [`solve_sweep`] then walks every block in row order ([`kinds`]: equalities,
//! limits, friction losses, contacts of condim 1, anisotropic 3, 4, 6), with the same relaxation
//! and stop rules. The choice is made once per solve; a problem of Coulomb contacts only runs
//! the contact sweep above, unchanged.

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use nalgebra::{Matrix3, Vector2, Vector3};

use super::execute::{execute_with_clock, Clock};
use super::nncg::Conjugate;
use crate::blocks::BlockMatrix;
use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::generalized::coulomb_only;
use crate::metrics::{free_velocity_norm, natural_map_of};
use crate::problem::{LocalProblem, Matrix};
use crate::result::{Solution, SolveOptions, Status};

pub mod kinds;

/// The deadline is read at every this many contacts of a sweep ([`Clock::Driver`]).
const DEADLINE_EVERY: usize = 16;

/// The carried `u = W r + q` is formed anew from `r` every this many sweeps, so that the
/// rounding carried along (one update per moved contact) never grows past a few sweeps' worth.
const REFORM_EVERY: u64 = 64;

/// Argmin state of a sweep: the impulses `r` and the stop rule's measure as cost.
pub type SweepState = IterState<Vec<f64>, (), (), (), (), f64>;

/// A local problem split into 3x3 block rows, the layout Gauss-Seidel walks.
#[derive(Debug, Clone)]
pub struct BlockRows<'a> {
    problem: &'a LocalProblem,
    /// Off-diagonal blocks of each block row: `(b, W_ab)`, `b != a`.
    rows: Vec<Vec<(usize, Matrix3<f64>)>>,
    /// Off-diagonal blocks of each block column: `(b, W_ba)`, `b != a` (the same blocks as
    /// `rows`, turned around), for carrying `u = W r + q` along a sweep.
    cols: Vec<Vec<(usize, Matrix3<f64>)>>,
    /// Diagonal blocks `W_aa`.
    diag: Vec<Matrix3<f64>>,
    /// Their symmetric parts and, where a block is not exactly symmetric, skew parts (for
    /// [`ContactSolver::SYMMETRIC_BLOCK`] solvers; formed once per solve, not once per sweep).
    split: Vec<(Matrix3<f64>, Option<Matrix3<f64>>)>,
}

impl<'a> BlockRows<'a> {
    /// Splits `W` into 3x3 blocks (only blocks with a nonzero entry are kept); a `W` stored as
    /// blocks already is read as it is.
    pub fn new(problem: &'a LocalProblem) -> BlockRows<'a> {
        let nc = problem.num_contacts();
        let owned;
        let blocks = match &problem.w {
            Matrix::Blocks(b) => b,
            w => {
                owned = match w.to_blocks() {
                    Matrix::Blocks(b) => b,
                    // Not `3nc x 3nc`: `LocalProblem::validate` refuses it before any sweep.
                    _ => BlockMatrix::from_blocks(nc, Vec::new()),
                };
                &owned
            }
        };
        let mut diag = vec![Matrix3::zeros(); nc];
        let mut rows = Vec::with_capacity(nc);
        for (a, d) in diag.iter_mut().enumerate() {
            let mut row = Vec::new();
            if a < blocks.num_block_rows() {
                for (b, m) in blocks.row(a) {
                    if b == a {
                        *d = *m;
                    } else {
                        row.push((b, *m));
                    }
                }
            }
            rows.push(row);
        }
        let mut cols: Vec<Vec<(usize, Matrix3<f64>)>> = vec![Vec::new(); nc];
        for (b, row) in rows.iter().enumerate() {
            for &(a, w_ba) in row {
                cols[a].push((b, w_ba));
            }
        }
        let split = diag
            .iter()
            .map(|w| {
                let sym = 0.5 * (w + w.transpose());
                let skew = w - sym;
                (sym, (skew != Matrix3::zeros()).then_some(skew))
            })
            .collect();
        BlockRows {
            problem,
            rows,
            cols,
            diag,
            split,
        }
    }

    /// The problem.
    pub fn problem(&self) -> &'a LocalProblem {
        self.problem
    }

    /// Number of contacts.
    pub fn num_contacts(&self) -> usize {
        self.diag.len()
    }

    /// The diagonal block `W_aa`.
    pub fn diag(&self, a: usize) -> &Matrix3<f64> {
        &self.diag[a]
    }

    /// The block and free velocity contact `a`'s solver is handed: `W_aa` and `c` as they are,
    /// or, for a solver that needs a symmetric block ([`ContactSolver::SYMMETRIC_BLOCK`]), the
    /// symmetric part of `W_aa` and `c` plus the skew part times the current impulse `r_a`.
    fn local_problem<S: ContactSolver>(
        &self,
        a: usize,
        c: Vector3<f64>,
        r_a: &Vector3<f64>,
    ) -> (&Matrix3<f64>, Vector3<f64>) {
        if !S::SYMMETRIC_BLOCK {
            return (&self.diag[a], c);
        }
        match &self.split[a] {
            (sym, Some(skew)) => (sym, c + skew * r_a),
            (sym, None) => (sym, c),
        }
    }

    /// `u <- u + W e_a delta`: the contact velocities after contact `a`'s impulse moved by
    /// `delta` (column `a` of `W`, the same blocks as the rows').
    fn carry(&self, a: usize, delta: &Vector3<f64>, u: &mut [f64]) {
        let add = |u: &mut [f64], b: usize, v: Vector3<f64>| {
            u[3 * b] += v[0];
            u[3 * b + 1] += v[1];
            u[3 * b + 2] += v[2];
        };
        add(u, a, self.diag[a] * delta);
        for (b, w_ba) in &self.cols[a] {
            add(u, *b, w_ba * delta);
        }
    }

    /// `c_a = q_a + sum_{b != a} W_ab r_b`: contact `a`'s velocity with its own impulse zero.
    pub fn free_velocity(&self, a: usize, r: &[f64]) -> Vector3<f64> {
        let mut c = block(&self.problem.q, a);
        for (j, w_ab) in &self.rows[a] {
            c += w_ab * block(r, *j);
        }
        c
    }
}

/// Contact `a`'s three entries of `v`.
pub fn block(v: &[f64], a: usize) -> Vector3<f64> {
    Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2])
}

/// What a single-contact solve found the contact doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactMode {
    /// Zero impulse (the contact separates).
    Opening,
    /// Impulse strictly inside the friction cone (no slip).
    Sticking,
    /// Impulse on the cone's boundary (the contact slides).
    Slipping,
}

impl ContactMode {
    /// The mode of an impulse `r` against `K_mu`: opening at zero normal impulse, sticking
    /// strictly inside the cone, slipping on its boundary (within a relative `1e-12`).
    pub fn of(mu: f64, r: &Vector3<f64>) -> ContactMode {
        let t = crate::cone::tangential_norm(*r);
        if r[0] <= 0.0 && t == 0.0 {
            ContactMode::Opening
        } else if t < mu * r[0] * (1.0 - 1e-12) {
            ContactMode::Sticking
        } else {
            ContactMode::Slipping
        }
    }
}

/// A single-contact answer: the impulse, the mode, and the inner steps taken (bisection or
/// golden-section evaluations, fixed-point iterations; 0 for closed forms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalSolution {
    /// The contact's impulse `(r_n, r_t1, r_t2)`.
    pub r: Vector3<f64>,
    /// Opening, sticking or slipping.
    pub mode: ContactMode,
    /// Inner steps of the method.
    pub steps: u32,
}

/// Why a single-contact solve has no answer.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum LocalError {
    /// NaN or infinite data (`W_aa`, `c` or `mu`).
    #[error("single contact: non-finite data ({0})")]
    NotFinite(&'static str),
    /// A negative friction coefficient.
    #[error("single contact: negative friction coefficient {0}")]
    NegativeFriction(f64),
    /// `W_aa` is not positive definite where the method needs its inverse (a closing contact).
    #[error("single contact: W_aa is not positive definite")]
    SingularBlock,
    /// The search found no interval holding the slipping solution.
    #[error("single contact: no bracket of the slipping solution found ({0})")]
    NoBracket(&'static str),
    /// A block of another kind with no exact local solve: a singular equality block `W_bb` or
    /// a one-row block whose `W_kk` is not positive (the block's name says which).
    #[error("{0}: its diagonal block of W is singular, the block has no exact local solve")]
    SingularOther(&'static str),
    /// A block the solver does not take (refused before any sweep; reaching it is a bug).
    #[error("the local solver does not take a {0} block")]
    Unsupported(&'static str),
}

impl LocalError {
    /// The status a sweep stops with when a local solve fails this way.
    pub fn status(&self) -> Status {
        match self {
            LocalError::NotFinite(_) => Status::NotFinite,
            LocalError::SingularBlock | LocalError::SingularOther(_) => Status::SingularSystem,
            LocalError::NegativeFriction(_)
            | LocalError::NoBracket(_)
            | LocalError::Unsupported(_) => Status::LocalSolveFailed,
        }
    }
}

/// The friction law a per-contact solver's answers satisfy, which decides how
/// [`contact_violation`] measures a slipping contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionModel {
    /// Coulomb's law (Hwangbo et al. eq. 6): a sliding contact's tangential velocity opposes
    /// its tangential impulse.
    Coulomb,
    /// The maximum-dissipation model of Preclik (Hwangbo et al. eq. 8): the impulse minimises
    /// the contact's kinetic energy over the cone within the zero-normal-velocity plane.
    MaximumDissipation,
}

/// A per-contact solver: one contact's impulse with the others frozen.
pub trait ContactSolver {
    /// Data computed once per contact and problem (a step size, a factor of `W_aa`).
    type Prepared: Clone;

    /// Whether the method needs a symmetric `W_aa` (Hwangbo et al.'s methods search a conic
    /// section of the contact's energy, which a symmetric block defines). The sweep then hands it
    /// the symmetric part `S_aa` and moves the skew part times the contact's current impulse into
    /// `c`, so that where the sweep stops changing `r_a`, `u_a = c + S_aa r_a + K_aa r_a` is the
    /// velocity of the problem's own `W_aa` (FCLib's files are symmetric only to about 1e-3;
    /// handing the methods the symmetric part alone left Rover4396 stagnating at a violation of
    /// 2.4e-4).
    const SYMMETRIC_BLOCK: bool = false;

    /// Prepares contact data from its diagonal block and friction coefficient.
    fn prepare(&self, w_aa: &Matrix3<f64>, mu: f64) -> Self::Prepared;

    /// The contact's new impulse for `u = c + W_aa r`, from its current impulse `r_prev`.
    fn solve(
        &self,
        prepared: &Self::Prepared,
        w_aa: &Matrix3<f64>,
        c: &Vector3<f64>,
        mu: f64,
        r_prev: &Vector3<f64>,
    ) -> Result<LocalSolution, LocalError>;

    /// The friction law its answers satisfy.
    fn model(&self) -> FrictionModel {
        FrictionModel::Coulomb
    }

    /// Whether the solver takes problems with blocks other than Coulomb contacts: the sweep then
    /// walks every block in row order ([`kinds`]); `false` keeps [`solve_sweep`] Coulomb-only.
    const OTHER_KINDS: bool = false;

    /// Whether every contact that is not a Coulomb contact (but condim 1) goes to
    /// [`ContactSolver::solve_cone`]; `false` brings an anisotropic condim 3 to
    /// [`ContactSolver::solve`] by the scaling of [`kinds`] and refuses condim 4 and 6.
    const OWN_CONES: bool = false;

    /// Why the solver refuses a contact with coefficients `mu` (`condim = 1 + mu.len()`) in a
    /// problem with other kinds, `None` when it takes it ([`kinds::scaled_refusal`] unless
    /// [`ContactSolver::OWN_CONES`]).
    fn refuses_contact(&self, mu: &[f64]) -> Option<String> {
        if Self::OWN_CONES {
            None
        } else {
            kinds::scaled_refusal(mu)
        }
    }

    /// The step `beta` of the exact solves of the other kinds (equality, limit, friction loss,
    /// condim 1): `r* = P_C(r + beta (x - r))` with `x` the exact unconstrained solve, before
    /// the sweep's relaxation; 1 for an exact block solve, eq. 18's `alpha` for a PGS.
    fn exact_step(&self) -> f64 {
        1.0
    }

    /// The new impulse of a contact of the elliptic cone `K_mu` (rows `1 + mu.len()`) with
    /// `u = c + W r`, `w` its block row-major, from `r_prev`, into `out`; the mode and the
    /// inner steps. Only called when [`ContactSolver::OWN_CONES`] is set.
    fn solve_cone(
        &self,
        w: &[f64],
        c: &[f64],
        mu: &[f64],
        r_prev: &[f64],
        out: &mut [f64],
    ) -> Result<(ContactMode, u32), LocalError> {
        let _ = (w, c, mu, r_prev, out);
        Err(LocalError::Unsupported("elliptic contact"))
    }
}

/// The relaxation schedule `alpha_0 = start`, `alpha_{k+1} = min + decay (alpha_k - min)`
/// (Hwangbo et al., Algorithm 2 line 12); `decay = 1`, `start = min` is a constant `alpha`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Relaxation {
    /// `alpha` of the first sweep.
    pub start: f64,
    /// The factor `gamma` on `alpha - min` after every sweep.
    pub decay: f64,
    /// The value `alpha` decays towards.
    pub min: f64,
}

impl Relaxation {
    /// A constant relaxation `alpha`.
    pub fn constant(alpha: f64) -> Relaxation {
        Relaxation {
            start: alpha,
            decay: 1.0,
            min: alpha,
        }
    }

    /// `alpha` after one more sweep.
    pub fn next(&self, alpha: f64) -> f64 {
        self.min + self.decay * (alpha - self.min)
    }
}

/// When a sweep run stops (besides its iteration and time budgets).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    /// The shared natural-map residual of [`crate::metrics`] at most `tol` (the `pgs` driver).
    NaturalMap,
    /// Hwangbo et al.'s PGS error (sec. V-C: "summing the magnitude of the impulse updates and
    /// the norms of the penetration velocities"): `sum_a |r_a^new - r_a^old|_2 +
    /// sum_a max(0, -u_a,n)` at most `tol`, with `u = W r + q` after the sweep.
    ImpulseChange,
    /// Hwangbo et al.'s bisection error (sec. V-C: "adding the exact violations of the physical
    /// constraints"): `sum_a` [`contact_violation`] at most `tol`, with `u = W r + q` after
    /// the sweep.
    Violation,
}

/// The physical-constraint violation of one contact with impulse `r` and velocity `u`
/// (Hwangbo et al. sec. III-B, V-C), in N s or m/s as each term is, summed:
///
/// * cone: `max(0, |r_t| - mu r_n) + max(0, -r_n)` (N s);
/// * penetration: `max(0, -u_n)` (m/s);
/// * Signorini complementarity: `min(max(r_n, 0), max(u_n, 0))` (a contact that pushes while
///   it separates: the smaller of the two);
/// * friction, only where the contact is closed, `r_n > 0` and `u_n <= r_n` (a contact whose
///   normal velocity exceeds its normal impulse separates: its impulse should vanish, which
///   the Signorini term measures, and a vanishing impulse owes no friction law): the smaller of the sticking error `|u_t|` (m/s) and the
///   slipping error `max(0, mu r_n - |r_t|) + |u_t - s d| + max(0, s)` where `d` is the unit
///   normal of the cone's section in the zero-normal-velocity plane at `r_t` and `s = u_t . d`:
///   a slipping contact's tangential velocity must point along `-d`. For Coulomb's law
///   `d = r_t / |r_t|` (the velocity opposes the impulse, eq. 6); for maximum dissipation `d`
///   is the direction of `r_t / |r_t| + mu W_tn / W_nn` (`W_tn` of the block's symmetric part),
///   the normal of the conic section
///   `|r_t| = mu (-c_n - W_nt r_t) / W_nn` (the KKT condition of eq. 12 in that plane: the
///   energy gradient, which is `u_t` there, is a nonpositive multiple of the normal).
///
/// It is zero exactly when `r` is a solution of the contact's own law with velocity `u`.
pub fn contact_violation(
    model: FrictionModel,
    w_aa: &Matrix3<f64>,
    mu: f64,
    r: &Vector3<f64>,
    u: &Vector3<f64>,
) -> f64 {
    let rt = Vector2::new(r[1], r[2]);
    let ut = Vector2::new(u[1], u[2]);
    let t = rt.norm();
    let cone = (t - mu * r[0]).max(0.0) + (-r[0]).max(0.0);
    let penetration = (-u[0]).max(0.0);
    let signorini = r[0].max(0.0).min(u[0].max(0.0));
    let friction = if r[0] > 0.0 && u[0] <= r[0] {
        let stick = ut.norm();
        let slip = if t > 0.0 {
            let mut d = rt / t;
            if model == FrictionModel::MaximumDissipation && w_aa[(0, 0)] > 0.0 {
                // The symmetric part's `W_tn`: the energy of eq. 12 sees only that part.
                let w_tn =
                    0.5 * Vector2::new(w_aa[(1, 0)] + w_aa[(0, 1)], w_aa[(2, 0)] + w_aa[(0, 2)]);
                d += mu * w_tn / w_aa[(0, 0)];
            }
            let dn = d.norm();
            if dn > 0.0 {
                let d = d / dn;
                let s = ut.dot(&d);
                (mu * r[0] - t).max(0.0) + (ut - s * d).norm() + s.max(0.0)
            } else {
                f64::INFINITY
            }
        } else {
            mu * r[0] + stick
        };
        stick.min(slip)
    } else {
        0.0
    };
    cone + penetration + signorini + friction
}

/// Counts of the last sweep's local modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ModeCounts {
    opening: u64,
    sticking: u64,
    slipping: u64,
}

/// What one sweep did.
struct SweepOutcome {
    /// Largest change of an impulse component.
    max_change: f64,
    /// `sum_a |r_a^new - r_a^old|_2`.
    sum_change: f64,
    /// The deadline cut the sweep short.
    cut: bool,
    /// A local solve failed (the contacts after it keep their impulses).
    failed: Option<LocalError>,
    modes: ModeCounts,
    steps: u64,
}

/// Block Gauss-Seidel / SOR over contacts with a [`ContactSolver`]: an argmin solver on
/// [`BlockRows`].
#[derive(Debug, Clone)]
pub struct BlockSweep<S: ContactSolver> {
    solver: S,
    relaxation: Relaxation,
    stop: StopRule,
    stop_tol: f64,
    step_tol: f64,
    deadline: Deadline,
    alpha: f64,
    prepared: Vec<S::Prepared>,
    status: Option<Status>,
    /// NNCG's memory, when successive sweeps are combined ([`super::nncg`]).
    conjugate: Option<Conjugate>,
    /// `u = W r + q` at the current `r`, carried along the sweep contact by contact (a
    /// contact's free velocity is `u_a - W_aa r_a`, and the stopping test needs no product
    /// with `W`); formed anew from `r` every [`REFORM_EVERY`] sweeps, after NNCG moves `r`,
    /// and before a measure below the tolerance is believed.
    u: Vec<f64>,
    /// `|q|`, the natural map's scale ([`free_velocity_norm`]).
    q_norm: f64,
}

impl<S: ContactSolver> BlockSweep<S> {
    /// A sweep with `solver`, relaxed by `relaxation`, stopped by `stop` at the solve's `tol`.
    pub fn new(solver: S, relaxation: Relaxation, stop: StopRule) -> BlockSweep<S> {
        BlockSweep {
            solver,
            relaxation,
            stop,
            stop_tol: 1e-10,
            step_tol: 1e-14,
            deadline: Deadline::none(),
            alpha: relaxation.start,
            prepared: Vec::new(),
            status: None,
            conjugate: None,
            u: Vec::new(),
            q_norm: 0.0,
        }
    }

    /// The same sweep with successive sweeps combined by NNCG ([`super::nncg`]), restarted
    /// when `beta > restart_above`.
    pub fn conjugate(mut self, restart_above: f64) -> BlockSweep<S> {
        self.conjugate = Some(Conjugate::new(restart_above));
        self
    }

    /// The per-contact solver.
    pub fn solver(&self) -> &S {
        &self.solver
    }

    fn sweep(&self, b: &BlockRows<'_>, r: &mut [f64], u: &mut [f64]) -> SweepOutcome {
        let mut out = SweepOutcome {
            max_change: 0.0,
            sum_change: 0.0,
            cut: false,
            failed: None,
            modes: ModeCounts::default(),
            steps: 0,
        };
        for a in 0..b.diag.len() {
            // The clock every few contacts: read at each, it cost more than a contact's
            // projection.
            if a.is_multiple_of(DEADLINE_EVERY) && self.deadline.expired() {
                out.cut = true;
                return out;
            }
            let mu = b.problem.mu()[a];
            let old = block(r, a);
            let free = block(u, a) - b.diag[a] * old;
            let (w_aa, c) = b.local_problem::<S>(a, free, &old);
            let local = match self.solver.solve(&self.prepared[a], w_aa, &c, mu, &old) {
                Ok(s) => s,
                Err(e) => {
                    out.failed = Some(e);
                    return out;
                }
            };
            match local.mode {
                ContactMode::Opening => out.modes.opening += 1,
                ContactMode::Sticking => out.modes.sticking += 1,
                ContactMode::Slipping => out.modes.slipping += 1,
            }
            out.steps += u64::from(local.steps);
            let ra = old + self.alpha * (local.r - old);
            let delta = ra - old;
            out.max_change = out.max_change.max(delta.amax());
            out.sum_change += delta.norm();
            r[3 * a..3 * a + 3].copy_from_slice(ra.as_slice());
            if delta != Vector3::zeros() {
                b.carry(a, &delta, u);
            }
        }
        out
    }

    /// The stop rule's measure at `r` (velocities `u`) after a sweep that changed it by
    /// `sum_change`.
    fn measure(&self, b: &BlockRows<'_>, r: &[f64], u: &[f64], sum_change: f64) -> f64 {
        match self.stop {
            StopRule::NaturalMap => natural_map_of(b.problem.mu(), self.q_norm, r, u),
            StopRule::ImpulseChange => {
                sum_change + (0..b.diag.len()).map(|a| (-u[3 * a]).max(0.0)).sum::<f64>()
            }
            StopRule::Violation => {
                let model = self.solver.model();
                (0..b.diag.len())
                    .map(|a| {
                        contact_violation(
                            model,
                            &b.diag[a],
                            b.problem.mu()[a],
                            &block(r, a),
                            &block(u, a),
                        )
                    })
                    .sum()
            }
        }
    }
}

impl<'a, S: ContactSolver> Solver<BlockRows<'a>, SweepState> for BlockSweep<S> {
    fn name(&self) -> &str {
        "block Gauss-Seidel over contacts"
    }

    fn init(
        &mut self,
        problem: &mut Problem<BlockRows<'a>>,
        state: SweepState,
    ) -> Result<(SweepState, Option<KV>), ArgminError> {
        let r = state.get_param().cloned().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("sweep problem missing"))?;
        self.prepared = (0..b.diag.len())
            .map(|a| self.solver.prepare(&b.diag[a], b.problem.mu()[a]))
            .collect();
        self.alpha = self.relaxation.start;
        if let Some(cg) = self.conjugate.as_mut() {
            cg.reset();
        }
        self.u = vec![0.0; r.len()];
        b.problem.velocity_into(&r, &mut self.u);
        self.q_norm = free_velocity_norm(&b.problem.q);
        // No sweep has changed anything yet: the start's measure has no impulse change.
        let res = match self.stop {
            StopRule::NaturalMap => problem.problem("natural_map_count", |b| {
                Ok(self.measure(b, &r, &self.u, 0.0))
            })?,
            _ => self.measure(b, &r, &self.u, 0.0),
        };
        Ok((state.param(r).cost(res), Some(kv!("merit" => res;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<BlockRows<'a>>,
        mut state: SweepState,
    ) -> Result<(SweepState, Option<KV>), ArgminError> {
        let mut r = state.take_param().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("sweep problem missing"))?;
        let alpha = self.alpha;
        if let Some(cg) = self.conjugate.as_mut() {
            cg.remember(&r);
        }
        let mut u = std::mem::take(&mut self.u);
        let out = self.sweep(b, &mut r, &mut u);
        let mut exact = false;
        if let Some(cg) = self
            .conjugate
            .as_mut()
            .filter(|_| !out.cut && out.failed.is_none())
        {
            cg.extrapolate(&mut r, None);
            b.problem.velocity_into(&r, &mut u);
            exact = true;
        }
        if !exact && (state.get_iter() + 1).is_multiple_of(REFORM_EVERY) {
            b.problem.velocity_into(&r, &mut u);
            exact = true;
        }
        let mut res = self.measure(b, &r, &u, out.sum_change);
        if !exact && res <= self.stop_tol {
            // Carried rounding must not decide convergence: the test is repeated on `W r + q`.
            b.problem.velocity_into(&r, &mut u);
            res = self.measure(b, &r, &u, out.sum_change);
        }
        self.u = u;
        let active = (0..b.diag.len()).filter(|&a| r[3 * a] > 0.0).count() as u64;
        let kv = self.conclude(&mut problem.counts, &out, res, &r, active, alpha);
        Ok((state.param(r).cost(res), Some(kv)))
    }

    fn terminate(&mut self, _state: &SweepState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

impl<S: ContactSolver> BlockSweep<S> {
    /// After a sweep `out` that left `r` (`active` unilateral blocks pushing) and the measure
    /// `res`: the status, the next `alpha`, the counts; the iteration's key-values.
    fn conclude(
        &mut self,
        counts: &mut std::collections::HashMap<&'static str, u64>,
        out: &SweepOutcome,
        res: f64,
        r: &[f64],
        active: u64,
        alpha: f64,
    ) -> KV {
        let r_max = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        self.status = if let Some(e) = out.failed {
            Some(e.status())
        } else if !res.is_finite() {
            Some(Status::NotFinite)
        } else if out.cut {
            Some(Status::Timeout)
        } else if res <= self.stop_tol {
            Some(Status::Converged)
        } else if out.max_change <= self.step_tol * (1.0 + r_max) {
            Some(Status::Stagnated)
        } else {
            None
        };
        self.alpha = self.relaxation.next(alpha);
        counts.insert("opening_contacts", out.modes.opening);
        counts.insert("sticking_contacts", out.modes.sticking);
        counts.insert("slipping_contacts", out.modes.slipping);
        *counts.entry("local_steps").or_insert(0) += out.steps;
        let mut kv = kv!(
            "merit" => res;
            "step_norm" => out.max_change;
            "active" => active;
            "step_kind" => "sweep";
        );
        if self.stop != StopRule::NaturalMap {
            kv.insert("alpha", alpha.into());
            kv.insert("slipping", out.modes.slipping.into());
        }
        kv
    }
}

/// Solves a local problem by sweeps of `sweep` from `r0` (zero when `None`) under `opts`: the
/// stop rule's measure is compared with `opts.stop_tol`, stagnation with `opts.step_tol`.
pub fn solve_sweep<S: ContactSolver>(
    problem: &LocalProblem,
    mut sweep: BlockSweep<S>,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    if S::OTHER_KINDS && !problem.constraints.coulomb_only() {
        return kinds::solve_kinds(problem, sweep, r0, opts);
    }
    coulomb_only(&problem.constraints, "the contact sweep")?;
    let r0 = super::kit::start_impulses(r0, problem.q.len())?;
    sweep.stop_tol = opts.stop_tol;
    sweep.step_tol = opts.step_tol;
    sweep.deadline = Deadline::after(opts.time_limit);
    let tol = opts.stop_tol;
    // The sweep keeps the time limit itself (it cuts a sweep short at the deadline).
    execute_with_clock(
        BlockRows::new(problem),
        sweep,
        r0,
        opts,
        Clock::Driver,
        |s: &SweepState| s.get_cost() <= tol,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `n` contacts, each coupled to the next by a non-symmetric-looking but
    /// symmetric block (normal-tangent terms included), diagonally dominant, some pushed
    /// apart (`q_n > 0`) so that sweeps leave them at zero.
    fn chain(n: usize) -> LocalProblem {
        let m = 3 * n;
        let mut w = vec![0.0; m * m];
        for a in 0..n {
            for i in 0..3 {
                w[(3 * a + i) * m + 3 * a + i] = 3.0 + 0.1 * (a % 4) as f64;
            }
            w[(3 * a) * m + 3 * a + 1] = 0.2;
            w[(3 * a + 1) * m + 3 * a] = 0.2;
            if a + 1 < n {
                let c = [[0.6, 0.1, -0.2], [0.3, 0.4, 0.0], [0.0, -0.1, 0.5]];
                for (i, row) in c.iter().enumerate() {
                    for (j, v) in row.iter().enumerate() {
                        w[(3 * a + i) * m + 3 * (a + 1) + j] = *v;
                        w[(3 * (a + 1) + j) * m + 3 * a + i] = *v;
                    }
                }
            }
        }
        let q = (0..m)
            .map(|k| match k % 3 {
                0 if (k / 3) % 5 == 4 => 0.5,
                0 => -1.0 - 0.1 * (k / 3) as f64,
                1 => 0.3 * ((k / 3) % 3) as f64,
                _ => -0.2,
            })
            .collect();
        let mu: Vec<f64> = (0..n).map(|a| 0.2 + 0.1 * (a % 5) as f64).collect();
        LocalProblem::coulomb(Matrix::from_row_major("W", m, m, &w).unwrap(), q, &mu)
    }

    #[test]
    fn the_carried_velocity_is_w_r_plus_q_and_each_contact_sees_its_free_velocity() {
        let p = chain(12);
        let b = BlockRows::new(&p);
        let mut sweep = super::super::pgs::ProjectedGaussSeidel::default().sweep();
        sweep.prepared = (0..b.diag.len())
            .map(|a| sweep.solver.prepare(&b.diag[a], p.mu()[a]))
            .collect();
        let mut r = vec![0.0; p.q.len()];
        let mut u = p.velocity(&r);
        for _ in 0..20 {
            // Before each sweep, every contact's free velocity from `u` is the rows' sum.
            for a in 0..b.num_contacts() {
                let carried = block(&u, a) - b.diag(a) * block(&r, a);
                assert!((carried - b.free_velocity(a, &r)).amax() < 1e-13);
            }
            sweep.sweep(&b, &mut r, &mut u);
            let exact = p.velocity(&r);
            let scale = exact.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            let gap = u
                .iter()
                .zip(&exact)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(gap <= 1e-14 * scale, "carried u off by {gap}");
        }
        // Some contacts opened and stayed open (their updates were skipped), and the sweeps
        // went somewhere.
        assert!((0..12).any(|a| block(&r, a) == Vector3::zeros()));
        assert!(r.iter().any(|x| *x != 0.0));
    }

    #[test]
    fn pgs_with_the_carried_velocity_converges_by_the_shared_ruler() {
        let p = chain(12);
        let opts = SolveOptions {
            stop_tol: 1e-12,
            max_iter: 500,
            ..Default::default()
        };
        let pgs = super::super::pgs::ProjectedGaussSeidel::default();
        let s = super::super::pgs::solve_pgs(&p, pgs, None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged);
        // The stop was decided on `W r + q` formed anew: the ruler agrees.
        let ruler = crate::metrics::natural_map_residual(&p, &s.x);
        assert!(ruler <= 1e-12, "ruler {ruler}");
        assert!((ruler - s.merit).abs() <= 1e-15);
    }

    #[test]
    fn algorithm_2_relaxation_decays_to_its_minimum() {
        let s = Relaxation {
            start: 1.0,
            decay: 0.99,
            min: 0.7,
        };
        let mut a = s.start;
        for _ in 0..2000 {
            a = s.next(a);
        }
        assert!((s.next(1.0) - 0.997).abs() < 1e-15);
        assert!((a - 0.7).abs() < 1e-9);
        assert_eq!(Relaxation::constant(0.6).next(0.6), 0.6);
    }

    #[test]
    fn modes_follow_the_cone() {
        assert_eq!(
            ContactMode::of(0.5, &Vector3::zeros()),
            ContactMode::Opening
        );
        assert_eq!(
            ContactMode::of(0.5, &Vector3::new(1.0, 0.2, 0.0)),
            ContactMode::Sticking
        );
        assert_eq!(
            ContactMode::of(0.5, &Vector3::new(1.0, 0.3, 0.4)),
            ContactMode::Slipping
        );
    }

    #[test]
    fn violation_is_zero_at_solutions_of_each_law_and_positive_elsewhere() {
        // W with normal-tangent coupling; a slipping impulse on the cone with u_n = 0.
        let w = Matrix3::new(2.0, 0.4, 0.0, 0.4, 1.0, 0.0, 0.0, 0.0, 1.0);
        let mu = 0.5;
        let r = Vector3::new(1.0, -0.5, 0.0);
        // Coulomb: u_t along -r_t.
        let u = Vector3::new(0.0, 0.7, 0.0);
        assert_eq!(
            contact_violation(FrictionModel::Coulomb, &w, mu, &r, &u),
            0.0
        );
        // Maximum dissipation: d = (-1, 0) + 0.5 * (0.4, 0) / 2 = (-0.9, 0): same direction.
        assert!(contact_violation(FrictionModel::MaximumDissipation, &w, mu, &r, &u) < 1e-15);
        let r2 = Vector3::new(1.0, -0.3, 0.4);
        let d_c = Vector2::new(-0.6, 0.8);
        let d_m = (d_c + Vector2::new(0.1, 0.0)).normalize();
        let u_c = Vector3::new(0.0, -0.6 * -1.5, 0.8 * -1.5);
        let u_m = Vector3::new(0.0, -1.5 * d_m[0], -1.5 * d_m[1]);
        assert!(contact_violation(FrictionModel::Coulomb, &w, mu, &r2, &u_c) < 1e-15);
        assert!(contact_violation(FrictionModel::MaximumDissipation, &w, mu, &r2, &u_m) < 1e-15);
        assert!(contact_violation(FrictionModel::Coulomb, &w, mu, &r2, &u_m) > 1e-3);
        assert!(contact_violation(FrictionModel::MaximumDissipation, &w, mu, &r2, &u_c) > 1e-3);
        // Penetration, a pushing-while-separating contact, a sticking contact that slides,
        // and an impulse outside the cone.
        let m = FrictionModel::Coulomb;
        let open = Vector3::zeros();
        assert_eq!(
            contact_violation(m, &w, mu, &open, &Vector3::new(-0.1, 3.0, 0.0)),
            0.1
        );
        assert_eq!(
            contact_violation(
                m,
                &w,
                mu,
                &Vector3::new(0.2, 0.0, 0.0),
                &Vector3::new(0.3, 0.0, 0.0)
            ),
            0.2
        );
        assert!(
            (contact_violation(
                m,
                &w,
                mu,
                &Vector3::new(1.0, 0.1, 0.0),
                &Vector3::new(0.0, 0.0, 0.01)
            ) - 0.01)
                .abs()
                < 1e-15
        );
        assert!(
            (contact_violation(
                m,
                &w,
                mu,
                &Vector3::new(1.0, 0.0, 0.7),
                &Vector3::new(0.0, 0.0, -1.0)
            ) - 0.2)
                .abs()
                < 1e-15
        );
    }
}
