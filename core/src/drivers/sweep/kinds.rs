//! The sweep over blocks of every kind ([`crate::constraint`]), for the solvers that take them
//! ([`ContactSolver::OTHER_KINDS`]): the same Gauss-Seidel as the contact sweep, over the
//! blocks in row order, with the same relaxation schedule and stop rules. A problem of Coulomb
//! contacts only never comes here ([`super::solve_sweep`] branches once, before the run).
//!
//! Block `b` (rows `R`) sees the others frozen, `u_R = c_R + W_RR r_R` with
//! `c_R = q_R + sum_{j not in R} W_Rj r_j`, and its new impulse `r*_b` is
//!
//! - a Coulomb contact (three rows, one `mu`): the solver's [`ContactSolver::solve`], as in the
//!   contact sweep;
//! - an anisotropic contact of condim 3 (`mu_1 != mu_2`, both positive), unless the solver has
//!   its own cone rule: the scaling `r = D s`, `D = diag(1, mu_1, mu_2)`, maps `K_mu` onto the
//!   unit circular cone and `u = W r + c` onto `D u = (D W D) s + D c`. It is exact for both
//!   laws the solvers satisfy: De Saxce's `û = u + |D u_f| e_n` scales to `D û`, the dual cone
//!   `K*_mu = D^-1 K*_1` and `<r, û> = <s, D û>`, so `(r, u)` solves the elliptic law exactly
//!   when `(s, D u)` solves the unit-`mu` Coulomb law; and the kinetic energy of Hwangbo et al.'s
//!   maximum-dissipation model (eq. 12) is the same quadratic in `s`. The solver sees
//!   `(D W D, D c, mu = 1)` and its answer is scaled back. A zero coefficient makes `D`
//!   singular (that row's impulse is 0 whatever `s` is) and condim 4 and 6 have more than two
//!   frictional rows: [`scaled_refusal`] refuses both;
//! - a contact the solver takes with its own cone rule ([`ContactSolver::OWN_CONES`]):
//!   [`ContactSolver::solve_cone`];
//! - an equality: `r* = r + beta (x - r)` with `W_RR x = -c_R` solved exactly (LU with partial
//!   pivoting of the block, up to 6 rows, on the stack); a singular block (rows no velocity
//!   moves, as a planar model's weld has, or dependent rows) by its minimum-norm least-squares
//!   answer (its pseudo-inverse, [`pseudo_inverse`]): contradicting targets then leave a
//!   residual the stop rules see, never a stop of the run;
//! - a limit, a friction loss or a contact of condim 1 (one row): `r* = P_C(r + beta (x - r))`
//!   with `x = -c / W_kk` the exact 1-D solve, `P_C` the clamp to `r >= 0` or to the box
//!   `[-f_max, f_max]`; `W_kk <= 0` stops the run as a singular block.
//!
//! `beta` is the solver's [`ContactSolver::exact_step`] (1: the exact solve; a PGS's `alpha`
//! makes it eq. 17's projected step `r - alpha u / W_kk`), and the sweep's relaxation follows,
//! `r <- r + alpha_k (r* - r)`, as for the contacts.
//!
//! The stop rules read on every block: the natural map is the shared ruler's; the impulse
//! change sums `|r*_b - r_b|_2` over every block and the penetration `max(0, -u)` over every
//! unilateral row (a contact's normal row, a limit); the violation sums
//! [`contact_violation`] over the three-row contacts (of the scaled
//! variables for an anisotropic one, where it is exact by the argument above) and the norm of
//! the block's natural map over the others (zero exactly where the block's law holds: `|u_R|`
//! for an equality).

use argmin::core::{Error as ArgminError, Problem, Solver, State, TerminationStatus, KV};
use argmin::kv;
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6, LU, U6};

use super::{
    contact_violation, BlockSweep, ContactMode, ContactSolver, LocalError, ModeCounts, StopRule,
    SweepOutcome, SweepState, DEADLINE_EVERY,
};
use crate::constraint::Constraint;
use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::metrics::natural_map_residual;
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions, Status};

/// Why the scaled reduction of an anisotropic contact onto the unit cone refuses a contact with
/// coefficients `mu`, `None` when it takes it (condim 1, condim 3 with positive coefficients).
pub fn scaled_refusal(mu: &[f64]) -> Option<String> {
    match mu.len() {
        0 => None,
        2 if mu.iter().all(|&m| m > 0.0) => None,
        2 => Some(
            "one tangential coefficient is zero: the scaling r_i = mu_i s_i onto the unit cone \
             is singular there, and the single-contact method needs a 2-D tangential plane"
                .into(),
        ),
        _ => Some(format!(
            "condim {} has {} frictional rows; the single-contact method solves a 3-row contact \
             (its slip set is a conic section in a 2-D tangential plane, parametrised by one \
             angle), which torsional and rolling rows do not reduce to",
            1 + mu.len(),
            mu.len()
        )),
    }
}

/// The first block of `problem` that `solver` refuses, as `constraint i (kind): why`.
pub fn first_refused<S: ContactSolver>(solver: &S, problem: &LocalProblem) -> Option<String> {
    problem
        .constraints
        .iter()
        .enumerate()
        .find_map(|(i, (_, c))| match c {
            Constraint::Contact { mu } if !c.is_coulomb() => solver
                .refuses_contact(mu)
                .map(|why| format!("constraint {i} ({}): {why}", c.describe())),
            _ => None,
        })
}

/// How one block is solved, prepared once per solve.
#[derive(Debug, Clone)]
enum Local<P> {
    /// A three-row contact handed to [`ContactSolver::solve`]: the scaling `d` (`None` for a
    /// Coulomb contact), `mu` (1 when scaled), the block as the solver sees it (`D W D`), its
    /// symmetric part and skew part, and the solver's prepared data.
    Three {
        d: Option<Vector3<f64>>,
        mu: f64,
        w: Matrix3<f64>,
        split: (Matrix3<f64>, Option<Matrix3<f64>>),
        prepared: P,
    },
    /// A cone of the solver's own rule: its block, row-major.
    Cone([f64; 36]),
    /// A one-row kind: `1 / W_kk`, `None` when `W_kk <= 0`.
    Row(Option<f64>),
    /// An equality: its block's exact solve.
    Equality(Box<EqualitySolve>),
}

/// How an equality block is solved: LU factors of a regular block (padded with the identity),
/// or the pseudo-inverse of a singular one.
#[derive(Debug, Clone)]
pub enum EqualitySolve {
    /// The LU factors of a regular block.
    Lu(LU<f64, U6, U6>),
    /// The pseudo-inverse of a singular block (padded with zeros).
    PseudoInverse(Matrix6<f64>),
}

/// A local problem of any kinds, the layout the block sweep walks: `W` dense row-major and
/// each block's rows, constraint and prepared local solve.
#[derive(Debug, Clone)]
pub struct KindRows<'a, P> {
    problem: &'a LocalProblem,
    w: Vec<f64>,
    n: usize,
    blocks: Vec<(usize, &'a Constraint, Local<P>)>,
}

impl<'a, P> KindRows<'a, P> {
    /// `W` dense and each block's local solve prepared for `solver`.
    pub fn new<S: ContactSolver<Prepared = P>>(problem: &'a LocalProblem, solver: &S) -> Self {
        let dense = problem.w.to_dense();
        let n = dense.nrows();
        let w: Vec<f64> = (0..n * n).map(|k| dense[(k / n, k % n)]).collect();
        let blocks = problem
            .constraints
            .iter()
            .map(|(rows, c)| {
                let local = prepare(solver, &w, n, rows.start, c);
                (rows.start, c, local)
            })
            .collect();
        KindRows {
            problem,
            w,
            n,
            blocks,
        }
    }

    /// The rows' free velocity `c_R = q_R + sum_{j not in R} W_Rj r_j` of the block at rows
    /// `s..s + m`, into `c`.
    fn free_velocity(&self, s: usize, r: &[f64], c: &mut [f64]) {
        let m = c.len();
        for (i, ci) in c.iter_mut().enumerate() {
            let row = &self.w[(s + i) * self.n..(s + i + 1) * self.n];
            let before: f64 = row[..s].iter().zip(&r[..s]).map(|(a, b)| a * b).sum();
            let after: f64 = row[s + m..]
                .iter()
                .zip(&r[s + m..])
                .map(|(a, b)| a * b)
                .sum();
            *ci = self.problem.q[s + i] + before + after;
        }
    }
}

/// The `m x m` block of the dense `w` (`n` columns) at row and column `s`, row-major.
fn dense_block(w: &[f64], n: usize, s: usize, m: usize) -> [f64; 36] {
    let mut b = [0.0; 36];
    for i in 0..m {
        for j in 0..m {
            b[i * m + j] = w[(s + i) * n + s + j];
        }
    }
    b
}

/// The local solve of block `c` at row `s` of the dense `w`.
fn prepare<S: ContactSolver>(
    solver: &S,
    w: &[f64],
    n: usize,
    s: usize,
    c: &Constraint,
) -> Local<S::Prepared> {
    let m = c.rows();
    let block = dense_block(w, n, s, m);
    match c {
        Constraint::Equality { .. } => Local::Equality(Box::new(
            factor(&block, m).map_or_else(|| pseudo_inverse(&block, m), EqualitySolve::Lu),
        )),
        Constraint::Contact { mu } if mu.len() == 2 && !S::OWN_CONES => {
            let raw = Matrix3::from_row_slice(&block[..9]);
            let (d, mu) = if c.is_coulomb() {
                (None, mu[0])
            } else {
                (Some(Vector3::new(1.0, mu[0], mu[1])), 1.0)
            };
            let w = d.map_or(raw, |d| {
                Matrix3::from_diagonal(&d) * raw * Matrix3::from_diagonal(&d)
            });
            let sym = 0.5 * (w + w.transpose());
            let skew = w - sym;
            Local::Three {
                d,
                mu,
                w,
                split: (sym, (skew != Matrix3::zeros()).then_some(skew)),
                prepared: solver.prepare(&w, mu),
            }
        }
        Constraint::Contact { mu } if !mu.is_empty() => Local::Cone(block),
        _ => Local::Row((block[0] > 0.0).then(|| 1.0 / block[0])),
    }
}

/// The LU factors of the `m x m` block (row-major) padded to 6 x 6 with the identity, `None`
/// when a pivot is zero or below `1e-13` of the block's largest entry (singular to rounding).
fn factor(block: &[f64; 36], m: usize) -> Option<LU<f64, U6, U6>> {
    let a = Matrix6::from_fn(|i, j| match (i < m, j < m) {
        (true, true) => block[i * m + j],
        _ if i == j => 1.0,
        _ => 0.0,
    });
    let scale = block[..m * m].iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let lu = a.lu();
    let u = lu.u();
    let regular = scale > 0.0 && (0..m).all(|i| u[(i, i)].abs() > 1e-13 * scale);
    regular.then_some(lu)
}

/// The pseudo-inverse of the singular `m x m` block (row-major) padded to 6 x 6 with zeros,
/// from its symmetric eigendecomposition with the eigenvalues at or below `1e-13` of the largest
/// dropped: the minimum-norm least-squares solve of `W_RR x = -c_R`. A block is singular when
/// some of its rows no velocity moves (a planar model's weld) or its rows are dependent; the
/// minimum-norm answer keeps their impulses out of the null space.
fn pseudo_inverse(block: &[f64; 36], m: usize) -> EqualitySolve {
    let a = Matrix6::from_fn(|i, j| {
        if i < m && j < m {
            block[i * m + j]
        } else {
            0.0
        }
    });
    let sym = (a + a.transpose()) * 0.5;
    let eig = sym.symmetric_eigen();
    let top = eig.eigenvalues.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let inv = eig
        .eigenvalues
        .map(|l| if l.abs() > 1e-13 * top { 1.0 / l } else { 0.0 });
    EqualitySolve::PseudoInverse(
        eig.eigenvectors * Matrix6::from_diagonal(&inv) * eig.eigenvectors.transpose(),
    )
}

/// Scratch of one block: its free velocity, old and new impulses.
struct Scratch {
    c: [f64; 6],
    old: [f64; 6],
    new: [f64; 6],
}

impl<S: ContactSolver> BlockSweep<S> {
    /// Block `k`'s new impulse into `x.new` from `x.c` and `x.old`; the contact mode and inner
    /// steps where it is a contact.
    fn kind_local(
        &self,
        local: &Local<S::Prepared>,
        kind: &Constraint,
        x: &mut Scratch,
        m: usize,
    ) -> Result<Option<(ContactMode, u32)>, LocalError> {
        let beta = self.solver.exact_step();
        match local {
            Local::Three {
                d,
                mu,
                w,
                split,
                prepared,
            } => {
                let d = d.unwrap_or(Vector3::new(1.0, 1.0, 1.0));
                let old = Vector3::from_column_slice(&x.old[..3]).component_div(&d);
                let c = Vector3::from_column_slice(&x.c[..3]).component_mul(&d);
                let (w, c) = match (S::SYMMETRIC_BLOCK, split) {
                    (false, _) => (w, c),
                    (true, (sym, Some(skew))) => (sym, c + skew * old),
                    (true, (sym, None)) => (sym, c),
                };
                let s = self.solver.solve(prepared, w, &c, *mu, &old)?;
                x.new[..3].copy_from_slice(s.r.component_mul(&d).as_slice());
                Ok(Some((s.mode, s.steps)))
            }
            Local::Cone(w) => {
                let Constraint::Contact { mu } = kind else {
                    return Err(LocalError::Unsupported("cone of a non-contact"));
                };
                let (c, old) = (&x.c[..m], &x.old[..m]);
                self.solver
                    .solve_cone(&w[..m * m], c, mu, old, &mut x.new[..m])
                    .map(Some)
            }
            Local::Row(inv) => {
                let inv = inv.ok_or(LocalError::SingularOther(kind_name(kind)))?;
                let z = x.old[0] + beta * (-x.c[0] * inv - x.old[0]);
                kind.project(&[z], &mut x.new[..1]);
                Ok(matches!(kind, Constraint::Contact { .. }).then(|| {
                    let mode = if x.new[0] > 0.0 {
                        ContactMode::Sticking
                    } else {
                        ContactMode::Opening
                    };
                    (mode, 0)
                }))
            }
            Local::Equality(solve) => {
                let b = Vector6::from_fn(|i, _| if i < m { -x.c[i] } else { 0.0 });
                let sol = match solve.as_ref() {
                    EqualitySolve::Lu(lu) => {
                        lu.solve(&b).ok_or(LocalError::SingularOther("equality"))?
                    }
                    EqualitySolve::PseudoInverse(pinv) => pinv * b,
                };
                for i in 0..m {
                    x.new[i] = x.old[i] + beta * (sol[i] - x.old[i]);
                }
                Ok(None)
            }
        }
    }

    /// One sweep over every block in row order.
    fn kinds_sweep(&self, b: &KindRows<'_, S::Prepared>, r: &mut [f64]) -> SweepOutcome {
        let mut out = SweepOutcome {
            max_change: 0.0,
            sum_change: 0.0,
            cut: false,
            failed: None,
            modes: ModeCounts::default(),
            steps: 0,
        };
        let mut x = Scratch {
            c: [0.0; 6],
            old: [0.0; 6],
            new: [0.0; 6],
        };
        for (k, (s, kind, local)) in b.blocks.iter().enumerate() {
            if k.is_multiple_of(DEADLINE_EVERY) && self.deadline.expired() {
                out.cut = true;
                return out;
            }
            let (s, m) = (*s, kind.rows());
            b.free_velocity(s, r, &mut x.c[..m]);
            x.old[..m].copy_from_slice(&r[s..s + m]);
            let found = self.kind_local(local, kind, &mut x, m).and_then(|mode| {
                if x.new[..m].iter().all(|v| v.is_finite()) {
                    Ok(mode)
                } else {
                    Err(LocalError::NotFinite("block impulse"))
                }
            });
            match found {
                Ok(Some((mode, steps))) => {
                    count(&mut out.modes, mode);
                    out.steps += u64::from(steps);
                }
                Ok(None) => {}
                Err(e) => {
                    out.failed = Some(e);
                    return out;
                }
            }
            let mut change2 = 0.0;
            for i in 0..m {
                let v = x.old[i] + self.alpha * (x.new[i] - x.old[i]);
                let delta = v - x.old[i];
                out.max_change = out.max_change.max(delta.abs());
                change2 += delta * delta;
                r[s + i] = v;
            }
            out.sum_change += change2.sqrt();
        }
        out
    }

    /// The stop rule's measure at `r` after a sweep that changed it by `sum_change`.
    fn kinds_measure(&self, b: &KindRows<'_, S::Prepared>, r: &[f64], sum_change: f64) -> f64 {
        match self.stop {
            StopRule::NaturalMap => natural_map_residual(b.problem, r),
            StopRule::ImpulseChange => {
                let u = b.problem.velocity(r);
                let penetration: f64 = b
                    .blocks
                    .iter()
                    .filter(|(_, c, _)| unilateral(c))
                    .map(|(s, _, _)| (-u[*s]).max(0.0))
                    .sum();
                sum_change + penetration
            }
            StopRule::Violation => {
                let u = b.problem.velocity(r);
                b.blocks
                    .iter()
                    .map(|(s, c, local)| self.block_violation(*s, c, local, r, &u))
                    .sum()
            }
        }
    }

    /// A block's term of the violation stop rule (see the module documentation).
    fn block_violation(
        &self,
        s: usize,
        c: &Constraint,
        local: &Local<S::Prepared>,
        r: &[f64],
        u: &[f64],
    ) -> f64 {
        let m = c.rows();
        if let Local::Three { d, mu, w, .. } = local {
            let d = d.unwrap_or(Vector3::new(1.0, 1.0, 1.0));
            let rs = Vector3::from_column_slice(&r[s..s + 3]).component_div(&d);
            let us = Vector3::from_column_slice(&u[s..s + 3]).component_mul(&d);
            return contact_violation(self.solver.model(), w, *mu, &rs, &us);
        }
        let mut f = [0.0; 6];
        c.natural_map(&r[s..s + m], &u[s..s + m], &mut f[..m]);
        f[..m].iter().map(|x| x * x).sum::<f64>().sqrt()
    }
}

/// Whether a block's first row is unilateral (a contact's normal row, a limit).
fn unilateral(c: &Constraint) -> bool {
    matches!(c, Constraint::Contact { .. } | Constraint::Limit)
}

/// A one-row block's kind as an error names it.
fn kind_name(c: &Constraint) -> &'static str {
    match c {
        Constraint::Contact { .. } => "frictionless contact",
        other => other.kind(),
    }
}

fn count(modes: &mut ModeCounts, mode: ContactMode) {
    match mode {
        ContactMode::Opening => modes.opening += 1,
        ContactMode::Sticking => modes.sticking += 1,
        ContactMode::Slipping => modes.slipping += 1,
    }
}

impl<'a, S: ContactSolver> Solver<KindRows<'a, S::Prepared>, SweepState> for BlockSweep<S> {
    fn name(&self) -> &str {
        "block Gauss-Seidel over constraint blocks"
    }

    fn init(
        &mut self,
        problem: &mut Problem<KindRows<'a, S::Prepared>>,
        state: SweepState,
    ) -> Result<(SweepState, Option<KV>), ArgminError> {
        let r = state.get_param().cloned().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("sweep problem missing"))?;
        self.alpha = self.relaxation.start;
        let res = match self.stop {
            StopRule::NaturalMap => problem.problem("natural_map_count", |b| {
                Ok(natural_map_residual(b.problem, &r))
            })?,
            _ => self.kinds_measure(b, &r, 0.0),
        };
        Ok((state.param(r).cost(res), Some(kv!("merit" => res;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<KindRows<'a, S::Prepared>>,
        mut state: SweepState,
    ) -> Result<(SweepState, Option<KV>), ArgminError> {
        let mut r = state.take_param().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("sweep problem missing"))?;
        let alpha = self.alpha;
        let out = self.kinds_sweep(b, &mut r);
        let res = self.kinds_measure(b, &r, out.sum_change);
        let active = b
            .blocks
            .iter()
            .filter(|(s, c, _)| unilateral(c) && r[*s] > 0.0)
            .count() as u64;
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

/// [`super::solve_sweep`] on a problem with other kinds than Coulomb contacts: refuses a block
/// the solver does not take (before any sweep), then sweeps every block.
pub(super) fn solve_kinds<S: ContactSolver>(
    problem: &LocalProblem,
    mut sweep: BlockSweep<S>,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    if let Some(why) = first_refused(&sweep.solver, problem) {
        return Err(CoreError::Unsupported(format!(
            "the contact sweep's local solver refuses {why}"
        )));
    }
    let r0 = super::super::kit::start_impulses(r0, problem.q.len())?;
    sweep.stop_tol = opts.stop_tol;
    sweep.step_tol = opts.step_tol;
    sweep.deadline = Deadline::after(opts.time_limit);
    let tol = opts.stop_tol;
    let rows = KindRows::new(problem, &sweep.solver);
    super::execute_with_clock(
        rows,
        sweep,
        r0,
        opts,
        super::Clock::Driver,
        |s: &SweepState| s.get_cost() <= tol,
    )
}
