//! Projected Gauss-Seidel over constraint blocks of every kind ([`crate::constraint`]): the method
//! of [`super::pgs`] on problems whose rows are MuJoCo's (equalities, limits, friction loss,
//! contacts of condim 1, 3, 4 and 6), which the contact sweep of [`super::sweep`] (three rows a
//! contact) does not walk.
//!
//! One iteration is one sweep over the blocks in row order. Block `k`, rows `R`, sees the others
//! frozen, `u_R = c_R + W_RR r_R` with `c_R = q_R + sum_{j not in R} W_Rj r_j`, and solves its
//! local problem:
//!
//! - an equality, `W_RR r_R = -c_R`, exactly (Cholesky of the block; a singular block, such as
//!   redundant rows, takes the fixed point below instead: with `C = R^m` it is a gradient step
//!   on `1/2 r' W_RR r + c' r`);
//! - a limit, a friction loss or a frictionless contact (one row, set `C` an interval):
//!   `r = P_C(-c / W_kk)`, exact;
//! - a cone: PGS's projected fixed point of the natural map,
//!   `r_R <- P_K(r_R - rho (u_R + |D u_f| e_n))`, `rho = 1 / lambda_max(W_RR)`, up to
//!   `local_iterations` times or until a step moves nothing above rounding, after the two
//!   closed forms ([`super::pgs`]'s argument, which holds for any elliptic cone): the contact
//!   opens, `r_R = 0`, when `c_n >= 0`, and sticks, `r_R = -W_RR^-1 c_R`, when that impulse lies
//!   in its cone. On a grasp most contacts stick; their fixed point, on a block whose torsional
//!   row is thousands of times stiffer than its sliding rows, crawls, and a sweep of inexact
//!   local answers stalled near 1e-4 on the Jaco hand (`closed_forms = false` keeps that).
//!
//! With `isotropic_cones` (the default) the sweep runs in the coordinates where every cone is
//! isotropic ([`crate::cone_scaling`]: `W' = D W D`, `q' = D q`, `r = D r'`): Gauss-Seidel over
//! blocks with exact local solves would not see the change, but the projected fixed point of a
//! cone block does, and on a thin cone (a hand's torsion, `mu = 0.005` beside sliding 1) it
//! otherwise crawls along the needle.
//!
//! The update is relaxed by `omega`. With `conjugate`, successive sweeps are combined by the
//! nonsmooth nonlinear conjugate gradient (NNCG) of Silcowitz, Niebe and Erleben ("A nonsmooth
//! nonlinear conjugate gradient method for interactive contact force problems", The Visual
//! Computer 26, 2010, Alg. 1; [`super::nncg`]): a grasp's rows outnumber the hand's degrees of
//! freedom, its squeeze is fixed by friction alone, and plain sweeps drift along it linearly
//! and slowly. The method has no more of a convergence proof than PGS; its fixed points are
//! PGS's (the combination vanishes with the step). The run stops when the shared ruler
//! ([`crate::metrics::natural_map_residual`]) is at most the tolerance, or when a sweep changes no
//! impulse by more than `step_tol (1 + |r|_inf)` (`Stagnated`), both in the problem's own
//! coordinates. `W` is read dense: the robot
//! problems this is for have tens to hundreds of rows.

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use faer::linalg::solvers::{Llt, Solve};
use faer::{Mat, Side};

use super::execute::{execute_with_clock, Clock};
use super::nncg::Conjugate;
use crate::cone_scaling::ConeScaling;
use crate::constraint::Constraint;
use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::metrics::natural_map_residual;
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions, Status};

/// Argmin state of a block sweep: the impulses and the ruler's natural map as cost.
pub type BlockPgsState = IterState<Vec<f64>, (), (), (), (), f64>;

/// How one block is solved, prepared once per solve.
#[derive(Debug, Clone)]
enum Local {
    /// An equality with a regular block: its Cholesky factorization.
    Exact(Llt<f64>),
    /// A one-row kind: `1 / W_kk` (0 for a row that moves nothing).
    Scalar(f64),
    /// A cone, or an equality whose block is singular: the fixed point's step
    /// `rho = 1 / lambda_max(W_RR)` and, for a cone whose block has a finite inverse,
    /// `W_RR^-1` row-major (the sticking closed form).
    FixedPoint {
        rho: f64,
        inverse: Option<Box<[f64; 36]>>,
    },
}

/// The problem a block sweep walks: `W` and `q` in the coordinates swept (scaled or not), `W`
/// dense, the blocks with their rows and local solves.
#[derive(Debug, Clone)]
pub struct BlockProblem<'a> {
    /// The problem as given: the ruler measures in its coordinates.
    problem: &'a LocalProblem,
    w: Mat<f64>,
    q: Vec<f64>,
    blocks: Vec<(std::ops::Range<usize>, Constraint, Local)>,
    scaling: Option<&'a ConeScaling>,
}

impl<'a> BlockProblem<'a> {
    /// `W` dense, scaled by `scaling` when given, and each block's local solve prepared.
    pub fn new(problem: &'a LocalProblem, scaling: Option<&'a ConeScaling>) -> BlockProblem<'a> {
        let (w, q, constraints) = match scaling {
            Some(s) => (
                s.scale_w(&problem.w),
                s.to_scaled_velocity(&problem.q),
                s.constraints(),
            ),
            None => (
                problem.w.to_dense(),
                problem.q.clone(),
                &problem.constraints,
            ),
        };
        let blocks = constraints
            .iter()
            .map(|(rows, c)| {
                let local = prepare(&w, rows.clone(), c);
                (rows, c.clone(), local)
            })
            .collect();
        BlockProblem {
            problem,
            w,
            q,
            blocks,
            scaling,
        }
    }

    /// The ruler's natural map at the swept impulses `r` (`D r` in the problem's coordinates
    /// when scaled), and the largest of those impulses.
    fn measure(&self, r: &[f64]) -> (f64, f64) {
        let own: std::borrow::Cow<'_, [f64]> = match self.scaling {
            Some(s) => {
                let mut out = vec![0.0; r.len()];
                s.to_impulse(r, &mut out);
                out.into()
            }
            None => r.into(),
        };
        let r_max = own.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        (natural_map_residual(self.problem, &own), r_max)
    }
}

/// The local solve of block `c` on rows `rows` of `w`.
fn prepare(w: &Mat<f64>, rows: std::ops::Range<usize>, c: &Constraint) -> Local {
    let (s, m) = (rows.start, rows.len());
    let block = Mat::from_fn(m, m, |i, j| w[(s + i, s + j)]);
    let one_row = m == 1 && !matches!(c, Constraint::Equality { .. });
    if one_row {
        let d = block[(0, 0)];
        return Local::Scalar(if d > 0.0 { 1.0 / d } else { 0.0 });
    }
    if let Constraint::Equality { .. } = c {
        if let Ok(llt) = block.llt(Side::Lower) {
            return Local::Exact(llt);
        }
    }
    let sym = Mat::from_fn(m, m, |i, j| 0.5 * (block[(i, j)] + block[(j, i)]));
    let lambda_max = sym
        .self_adjoint_eigenvalues(Side::Lower)
        .ok()
        .and_then(|e| e.into_iter().reduce(f64::max))
        .unwrap_or(0.0);
    let rho = if lambda_max > 0.0 {
        1.0 / lambda_max
    } else {
        0.0
    };
    let inverse = matches!(c, Constraint::Contact { .. })
        .then(|| sticking_inverse(&block))
        .flatten();
    Local::FixedPoint { rho, inverse }
}

/// `W_RR^-1` row-major, where the block's LU factorization gives a finite one (the sticking
/// closed form checks its own answer's velocity, [`closed_form`]).
fn sticking_inverse(block: &Mat<f64>) -> Option<Box<[f64; 36]>> {
    let m = block.nrows();
    let inv = block.partial_piv_lu().solve(Mat::<f64>::identity(m, m));
    let mut out = [0.0; 36];
    (0..m * m).for_each(|k| out[k] = inv[(k / m, k % m)]);
    out.iter().all(|x| x.is_finite()).then(|| Box::new(out))
}

/// The options of [`super::pgs::ProjectedGaussSeidel`] a block sweep uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockPgsOptions {
    /// Fixed-point iterations of a cone block's local problem per sweep.
    pub local_iterations: usize,
    /// Relaxation `omega` of the block update.
    pub omega: f64,
    /// Sweep in the coordinates where every cone is isotropic ([`crate::cone_scaling`]).
    pub isotropic_cones: bool,
    /// Try a cone block's opening and sticking answers before its fixed point.
    pub closed_forms: bool,
    /// Combine successive sweeps by NNCG ([`super::nncg`]), restarted when `beta` exceeds the
    /// number given.
    pub conjugate: Option<f64>,
}

/// Block Gauss-Seidel over constraint blocks: an argmin solver on [`BlockProblem`].
#[derive(Debug, Clone)]
pub struct BlockPgs {
    options: BlockPgsOptions,
    stop_tol: f64,
    step_tol: f64,
    deadline: Deadline,
    status: Option<Status>,
    /// NNCG's memory, present when `options.conjugate` asks for it.
    conjugate: Option<Conjugate>,
}

impl BlockPgs {
    /// PGS over blocks with `options`' local iterations and relaxation.
    pub fn new(options: BlockPgsOptions) -> BlockPgs {
        BlockPgs {
            options,
            stop_tol: 1e-10,
            step_tol: 1e-14,
            deadline: Deadline::none(),
            status: None,
            conjugate: options.conjugate.map(Conjugate::new),
        }
    }

    /// One sweep; the largest change of an impulse (in the problem's coordinates), or `None`
    /// when the deadline cut it.
    fn sweep(&self, b: &BlockProblem<'_>, r: &mut [f64]) -> Option<f64> {
        let mut max_change = 0.0f64;
        let (mut c, mut new, mut old) = ([0.0; 6], [0.0; 6], [0.0; 6]);
        for (rows, kind, local) in &b.blocks {
            if self.deadline.expired() {
                return None;
            }
            let (s, m) = (rows.start, rows.len());
            // c_R = q_R + W_R: r - W_RR r_R.
            for (i, ci) in c[..m].iter_mut().enumerate() {
                let row = s + i;
                let outside = r
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| !(s..s + m).contains(j));
                *ci = b.q[row] + outside.map(|(j, rj)| b.w[(row, j)] * rj).sum::<f64>();
            }
            old[..m].copy_from_slice(&r[s..s + m]);
            self.local(b, (rows, kind, local), &c[..m], &old[..m], &mut new[..m]);
            for i in 0..m {
                let v = old[i] + self.options.omega * (new[i] - old[i]);
                let d = b.scaling.map_or(1.0, |sc| sc.d()[s + i]);
                max_change = max_change.max(d * (v - old[i]).abs());
                r[s + i] = v;
            }
        }
        Some(max_change)
    }

    /// A block's new impulse from its free velocity `c` and current impulse `old`.
    fn local(
        &self,
        b: &BlockProblem<'_>,
        (rows, kind, local): (&std::ops::Range<usize>, &Constraint, &Local),
        c: &[f64],
        old: &[f64],
        out: &mut [f64],
    ) {
        let (s, m) = (rows.start, rows.len());
        match local {
            Local::Scalar(inv) => kind.project(&[-c[0] * inv], out),
            Local::Exact(llt) => {
                let rhs = Mat::from_fn(m, 1, |i, _| -c[i]);
                let x = llt.solve(&rhs);
                (0..m).for_each(|i| out[i] = x[(i, 0)]);
            }
            Local::FixedPoint { rho, inverse } => {
                let sticking = inverse.as_deref().map(|inv| (inv, &b.w, s));
                if self.options.closed_forms && closed_form(kind, sticking, c, out) {
                    return;
                }
                out.copy_from_slice(old);
                let (mut u, mut y, mut z, mut prev) = ([0.0; 6], [0.0; 6], [0.0; 6], [0.0; 6]);
                for _ in 0..self.options.local_iterations.max(1) {
                    block_velocity(&b.w, s, c, out, &mut u[..m]);
                    kind.dual_velocity(&u[..m], &mut y[..m]);
                    (0..m).for_each(|i| z[i] = out[i] - rho * y[i]);
                    prev[..m].copy_from_slice(out);
                    kind.project(&z[..m], out);
                    // The contact sweep's rule: a step that moves nothing above rounding ends
                    // the local solve.
                    let (change, size) = (0..m).fold((0.0f64, 0.0f64), |(d, a), i| {
                        (d.max((out[i] - prev[i]).abs()), a.max(out[i].abs()))
                    });
                    if change <= 1e-15 * (1.0 + size) {
                        break;
                    }
                }
            }
        }
    }
}

/// The opening or sticking answer of a cone block, into `out`, where one of them holds: the
/// contact opens (`r = 0`) when `c_n >= 0`, and sticks (`r = -W_RR^-1 c`, `u = 0`) when that
/// impulse lies in its cone. Both are fixed points of the local map ([`super::pgs`]'s argument,
/// which holds for any elliptic cone). `sticking` is the block's inverse, `W` and the block's
/// first row. The sticking impulse takes one step of iterative refinement,
/// `r <- r - W_RR^-1 (W_RR r + c)`, so that its velocity is zero to rounding on a hand's blocks
/// (the torsional row's diagonal about a thousand times the sliding rows'), and is taken only
/// where that velocity is at most `1e-12 |c|_inf`: a block too singular for that keeps the
/// fixed point.
fn closed_form(
    kind: &Constraint,
    sticking: Option<(&[f64; 36], &Mat<f64>, usize)>,
    c: &[f64],
    out: &mut [f64],
) -> bool {
    let Constraint::Contact { mu } = kind else {
        return false;
    };
    if c[0] >= 0.0 {
        out.fill(0.0);
        return true;
    }
    let Some((inv, w, s)) = sticking else {
        return false;
    };
    let m = c.len();
    let apply = |v: &[f64], i: usize| (0..m).map(|j| inv[i * m + j] * v[j]).sum::<f64>();
    (0..m).for_each(|i| out[i] = -apply(c, i));
    let mut u = [0.0; 6];
    block_velocity(w, s, c, out, &mut u[..m]);
    (0..m).for_each(|i| out[i] -= apply(&u[..m], i));
    block_velocity(w, s, c, out, &mut u[..m]);
    let scale = c.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let still = u[..m].iter().fold(0.0f64, |a, x| a.max(x.abs()));
    still <= 1e-12 * scale && crate::elliptic_cone::contains(mu, out)
}

/// A block's velocity `u = c + W_RR r` (the block's rows starting at `s`), into `u`.
fn block_velocity(w: &Mat<f64>, s: usize, c: &[f64], r: &[f64], u: &mut [f64]) {
    let m = c.len();
    for (i, ui) in u.iter_mut().enumerate() {
        *ui = c[i] + (0..m).map(|j| w[(s + i, s + j)] * r[j]).sum::<f64>();
    }
}

impl<'a> Solver<BlockProblem<'a>, BlockPgsState> for BlockPgs {
    fn name(&self) -> &str {
        "block Gauss-Seidel over constraint blocks"
    }

    fn init(
        &mut self,
        problem: &mut Problem<BlockProblem<'a>>,
        state: BlockPgsState,
    ) -> Result<(BlockPgsState, Option<KV>), ArgminError> {
        let r = state.get_param().cloned().unwrap_or_default();
        let res = problem.problem("natural_map_count", |b| Ok(b.measure(&r).0))?;
        Ok((state.param(r).cost(res), Some(kv!("merit" => res;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<BlockProblem<'a>>,
        mut state: BlockPgsState,
    ) -> Result<(BlockPgsState, Option<KV>), ArgminError> {
        let mut r = state.take_param().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("block sweep problem missing"))?;
        if let Some(cg) = self.conjugate.as_mut() {
            cg.remember(&r);
        }
        let change = self.sweep(b, &mut r);
        if let (Some(cg), Some(_)) = (self.conjugate.as_mut(), change) {
            cg.extrapolate(&mut r, b.scaling.map(ConeScaling::d));
        }
        let (res, r_max) = b.measure(&r);
        self.status = match change {
            _ if !res.is_finite() => Some(Status::NotFinite),
            None => Some(Status::Timeout),
            Some(_) if res <= self.stop_tol => Some(Status::Converged),
            Some(d) if d <= self.step_tol * (1.0 + r_max) => Some(Status::Stagnated),
            Some(_) => None,
        };
        let step = change.unwrap_or(f64::NAN);
        let kv = kv!("merit" => res; "step_norm" => step; "step_kind" => "sweep";);
        Ok((state.param(r).cost(res), Some(kv)))
    }

    fn terminate(&mut self, _state: &BlockPgsState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// Solves a problem of any constraint blocks by block PGS from `r0` (zero when `None`) under
/// `opts`: the ruler's natural map is compared with `opts.stop_tol`, stagnation with
/// `opts.step_tol`.
pub fn solve_block_pgs(
    problem: &LocalProblem,
    options: BlockPgsOptions,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    let r0 = super::kit::start_impulses(r0, problem.q.len())?;
    let (scaling, r0) = ConeScaling::start(options.isotropic_cones, None, &problem.constraints, r0);
    let mut solver = BlockPgs::new(options);
    solver.stop_tol = opts.stop_tol;
    solver.step_tol = opts.step_tol;
    solver.deadline = Deadline::after(opts.time_limit);
    let tol = opts.stop_tol;
    let mut solution = execute_with_clock(
        BlockProblem::new(problem, scaling.as_ref()),
        solver,
        r0,
        opts,
        Clock::Driver,
        |s: &BlockPgsState| s.get_cost() <= tol,
    )?;
    ConeScaling::finish(scaling.as_ref(), &mut solution);
    Ok(solution)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraint::Constraints;
    use crate::drivers::nncg::PAPER_RESTART;
    use crate::metrics::local_metrics;
    use crate::problem::Matrix;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Every kind in one problem, `W = A A' / m + 0.2 I` (positive definite, coupled), `q`
    /// drawn so that blocks push, slide and rest.
    fn every_kind(seed: u64) -> LocalProblem {
        let c = Constraints::new(vec![
            Constraint::Equality { rows: 3 },
            Constraint::Limit,
            Constraint::FrictionLoss { f_max: 0.3 },
            Constraint::coulomb(0.6),
            Constraint::Contact {
                mu: vec![0.9, 0.5, 0.02],
            },
            Constraint::Contact { mu: vec![] },
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.01, 0.001, 0.001],
            },
        ])
        .unwrap();
        let m = c.rows();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let a: Vec<f64> = (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect();
        let w: Vec<f64> = (0..m * m)
            .map(|k| {
                let (i, j) = (k / m, k % m);
                let s: f64 = (0..m).map(|l| a[i * m + l] * a[j * m + l]).sum();
                s / m as f64 + if i == j { 0.2 } else { 0.0 }
            })
            .collect();
        let q = (0..m).map(|_| rng.random_range(-1.0..0.5)).collect();
        LocalProblem::with_constraints(Matrix::from_row_major("W", m, m, &w).unwrap(), q, c)
            .unwrap()
    }

    /// The options of PGS's defaults (ten local iterations, no relaxation).
    fn defaults() -> BlockPgsOptions {
        BlockPgsOptions {
            local_iterations: 10,
            omega: 1.0,
            isotropic_cones: true,
            closed_forms: true,
            conjugate: None,
        }
    }

    #[test]
    fn pgs_solves_a_problem_of_every_kind_to_the_rulers_tolerance() {
        for seed in 0..5 {
            let p = every_kind(seed);
            let opts = SolveOptions {
                stop_tol: 1e-10,
                max_iter: 20_000,
                ..Default::default()
            };
            let s = solve_block_pgs(&p, defaults(), None, &opts).unwrap();
            assert_eq!(s.status, Status::Converged, "seed {seed}: {:?}", s.status);
            let m = local_metrics(&p, &s.x);
            assert!(m.natural_map <= 1e-10, "seed {seed}: {m:?}");
            // Every block meets its own law at the answer: the equality's velocity, the
            // limit's and the contacts' complementarity, the box.
            let u = p.velocity(&s.x);
            for (rows, c) in p.constraints.iter() {
                let mut f = vec![0.0; rows.len()];
                c.natural_map(&s.x[rows.clone()], &u[rows.clone()], &mut f);
                let norm = f.iter().map(|x| x * x).sum::<f64>().sqrt();
                assert!(norm <= 1e-8, "seed {seed}, {}: {f:?}", c.describe());
            }
        }
    }

    /// One condim-4 contact whose sticking impulse `-W^-1 q` lies inside its cone: the closed
    /// form answers in one sweep with `u = 0` and `r = r*` to rounding; without it the fixed point is still
    /// iterating after that sweep.
    #[test]
    fn a_sticking_cone_block_is_answered_by_its_closed_form() {
        #[rustfmt::skip]
        let w = [
            2.0, 0.3, 0.1, 0.05,
            0.3, 1.5, 0.2, 0.0,
            0.1, 0.2, 1.0, 0.0,
            0.05, 0.0, 0.0, 0.01,
        ];
        // q = -W r* for r* inside the cone: (0.2/0.8)^2 + (0.1/0.8)^2 + (0.01/0.05)^2 < 1.
        let sticking = [1.0, 0.2, -0.1, 0.01];
        let q = (0..4)
            .map(|i| -(0..4).map(|j| w[4 * i + j] * sticking[j]).sum::<f64>())
            .collect();
        let w = Matrix::from_row_major("W", 4, 4, &w).unwrap();
        let c = Constraints::new(vec![Constraint::Contact {
            mu: vec![0.8, 0.8, 0.05],
        }])
        .unwrap();
        let p = LocalProblem::with_constraints(w, q, c).unwrap();
        let opts = SolveOptions {
            stop_tol: 1e-12,
            max_iter: 1,
            ..Default::default()
        };
        let s = solve_block_pgs(&p, defaults(), None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged, "{}", s.merit);
        let u = p.velocity(&s.x);
        assert!(u.iter().all(|x| x.abs() <= 1e-14), "{u:?}");
        assert!(
            crate::elliptic_cone::contains(&[0.8, 0.8, 0.05], &s.x),
            "{:?}",
            s.x
        );
        let without = BlockPgsOptions {
            closed_forms: false,
            ..defaults()
        };
        let s = solve_block_pgs(&p, without, None, &opts).unwrap();
        assert!(s.merit > 1e-6, "{}", s.merit);
    }

    /// `data/problems/kinds/<name>.json` and the ruler's tolerance 1e-8 with `sweeps` at most.
    fn kinds_problem(name: &str, sweeps: u64) -> (LocalProblem, SolveOptions) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../data/problems/kinds/{name}.json"));
        let opts = SolveOptions {
            stop_tol: 1e-8,
            max_iter: sweeps,
            ..Default::default()
        };
        (crate::io::read_local(&path).unwrap(), opts)
    }

    /// The Jaco hand's grasp (`data/problems/kinds/jaco_grasp_step.json`: five condim-4 contacts
    /// and three friction losses on nine dofs, the grasp's squeeze not fixed by `W`): plain PGS
    /// ends 2 000 sweeps above 1e-4 on the ruler, drifting along the squeeze; NNCG converges
    /// within them, and the ruler accepts its answer.
    #[test]
    fn nncg_takes_pgs_through_a_grasp_it_crawls_on() {
        let (p, opts) = kinds_problem("jaco_grasp_step", 2_000);
        let plain = solve_block_pgs(&p, defaults(), None, &opts).unwrap();
        assert_eq!(plain.status, Status::MaxIterations);
        assert!(plain.merit > 1e-4, "{}", plain.merit);
        let nncg = BlockPgsOptions {
            conjugate: Some(PAPER_RESTART),
            ..defaults()
        };
        let s = solve_block_pgs(&p, nncg, None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged, "{}", s.merit);
        assert!(local_metrics(&p, &s.x).natural_map <= 1e-8);
    }

    /// A Jaco grasp step whose sweeps drift along the squeeze
    /// (`data/problems/kinds/jaco_grasp_drift_step.json`): from zero, NNCG with the paper's
    /// restart (`beta > 1`), which the drift's nearly equal steps keep firing, ends 5 000 sweeps
    /// far above the tolerance; restarted only where `beta > 1.5` it converges within them.
    #[test]
    fn nncg_restarted_above_one_follows_a_drift_the_papers_restart_breaks() {
        let (p, opts) = kinds_problem("jaco_grasp_drift_step", 5_000);
        let with = |restart| BlockPgsOptions {
            conjugate: Some(restart),
            ..defaults()
        };
        let paper = solve_block_pgs(&p, with(PAPER_RESTART), None, &opts).unwrap();
        assert_eq!(paper.status, Status::MaxIterations);
        assert!(paper.merit > 1e-6, "{}", paper.merit);
        let s = solve_block_pgs(&p, with(1.5), None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged, "{}", s.merit);
        assert!(local_metrics(&p, &s.x).natural_map <= 1e-8);
    }
}
