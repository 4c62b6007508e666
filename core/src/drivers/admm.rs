//! The proximal ADMM of Carpentier, Le Lidec and Montaut, "From compliant to rigid contact
//! simulation: a unified and efficient approach" (RSS 2024, arXiv 2405.17020; the paper's
//! Algorithm 1 and its section on the spectral update of `rho`), on the Coulomb problem in
//! contact space: find `r` in `K = prod_a K_mu_a` with `sigma = W r + q + Gamma(W r + q)` in the
//! dual cone `K*` and `r . sigma = 0`, where `Gamma(u)_a = mu_a |u_a,t| e_n` is De Saxcé's
//! correction (the paper's NCP; here without compliance, `R = 0`).
//!
//! The method, as the paper builds it:
//!
//! * **De Saxcé's change of variable** (the paper's cascade of CCPs): with the shift
//!   `s = Gamma(sigma)` frozen, the NCP is the optimality condition of the convex cone program
//!   `min_{r in K} 1/2 r' W r + r' (q + s)`; ADMM solves that program while `s` follows the
//!   current dual iterate, `s^k = Gamma(z^k)` (the correction only changes the normal
//!   component, so `Gamma(z) = Gamma(W r + q)` at a fixed point, where `z = sigma`).
//! * **The proximal term** `eta/2 |x - x^k|^2` (the proximal method of multipliers), which makes
//!   the `x` step strongly convex when `W` is singular (rigid contact: more constraints than
//!   degrees of freedom).
//! * **The ADMM splitting** `x = y`, `y in K`, with the dual `z` in the velocity space. One
//!   iteration (Algorithm 1's loop body; the dual's sign is chosen so that `z` converges to
//!   `sigma` itself):
//!   1. `s = Gamma(z)` (De Saxcé's shift);
//!   2. `x+ = (W + (rho + eta) I)^{-1} (eta x + rho y + z - q - s)` (the `x` step: the proximal
//!      least squares; one factorization of `W + (rho + eta) I`, reused until `rho` changes);
//!   3. `y+ = P_K(x+ - z / rho)` (projection onto the friction cones, contact by contact);
//!   4. `z+ = z - rho (x+ - y+)` (the dual ascent).
//!
//!   Moreau's decomposition of step 3 makes `z+ = rho (y+ - (x+ - z/rho))` lie in `K*` and be
//!   orthogonal to `y+`: every iterate has `y in K`, `z in K*`, `y . z = 0` by construction, so
//!   the paper's complementarity criterion is met at every iterate and the method converges
//!   through its primal residual `eps_p = |x - y|_inf` and dual residual
//!   `eps_d = |rho (y - y_prev) + eta (x - x_prev)|_inf`.
//! * **The spectral `rho`** (the paper's section on the update of `rho`): for a strongly convex
//!   quadratic with Hessian eigenvalues in `[m, L]`, ADMM's linear rate is best near
//!   `rho = sqrt(m L)` (Ghadimi et al.); the paper starts from `rho_0 = sqrt(m L) kappa^p0` with
//!   the condition number `kappa = L / m` and, whenever the primal and dual residuals are out
//!   of balance by more than a ratio `alpha`, multiplies `rho` by `kappa^p_inc` (primal too
//!   large) or divides it (dual too large). Here `L` and `m` are the extreme eigenvalues of the
//!   `x` step's Hessian `W + eta I`, estimated by power iteration on `W` (the largest) and on
//!   `L I - W` (the smallest, [`MinEigenvalue::Power`]) or, by default, `m = eta`
//!   ([`MinEigenvalue::Zero`]: `W` taken as singular, which rigid contact with more constraints
//!   than degrees of freedom makes it, and what the authors' implementation in Pinocchio does
//!   without compliance). The defaults are the paper's (and Pinocchio's): `eta = 1e-6`,
//!   `p0 = 0.2`, `p_inc = 0.05`, `alpha = 10`.
//!
//!   Measured on the shipped problems (FCLib, Siconos' tests and MuJoCo's steps, tolerance
//!   `1e-6`): `m = eta` needed fewer factorizations almost everywhere and fewer iterations on
//!   the large and stiff problems (Capsules, BoxesStack, the 80-body clutter), the estimated
//!   `lambda_min(W)` fewer iterations on the small Rover problems; hence the default.
//!
//! **Equilibration** (the option `equilibrate`, off by default: the paper's method runs in the
//! problem's own units). `eta`, and through `m = eta` the spectral start and factor, are
//! absolute numbers, so the method is not invariant under a change of units of the rows: on a
//! robot whose `W` has a diagonal over four decades (Adroit's light finger joints, each with a
//! friction loss, beside the ball's contacts) `rho` is far from every block's own scale and
//! moves hundreds of times a solve. With `equilibrate` the iteration runs where every block of
//! `W` has a unit mean diagonal ([`ConeScaling::equilibrated`]: one positive factor a block, so
//! every set keeps its shape and the fixed point is the problem's own; the ruler stays in the
//! problem's coordinates), and `eta = 1e-6` means the same on every problem. Measured from
//! zero at `1e-8` with 10 000 iterations: Adroit's hand before the grasp
//! (`data/problems/kinds/adroit_grasp_step.json`) from not converging to 45 iterations; the
//! robot steps of `data/mujoco_robots/` from 944 iterations and `not_finite` to 112 (Fetch),
//! from not converging to 3 710 and 4 659 (the Shadow hand), 1 325 to 270 (the stacker);
//! FCLib's Rovers two to five times fewer, Confeti-ex13 and PerioBox from not converging to 128
//! and 722. It costs elsewhere, hence off by default: BoxesStack 167 to 7 075, the Capsules and
//! the clutter steps of `data/mujoco/` 1.3 to 2.4 times more; and the scaled problem goes block
//! by block, which on Coulomb contacts costs more an iteration than the contact loops.
//!
//! The answer is `y` (in the cone by construction). Convergence is judged by the shared
//! natural-map residual of [`crate::metrics`] at `y`, every iteration, as for every driver of the
//! project; the paper's own criteria (`eps_p`, `eps_d`) drive only the `rho` update. A
//! non-symmetric `W` (FCLib's files are symmetric to about `1e-3`) is factored by LU instead of
//! Cholesky, so that the fixed point is the problem's own. The driver's inner loop allocates
//! nothing: its vectors are made once per solve, the velocity `W y` is the problem's own
//! product into one of them (the shared ruler's, so that the driver's residual is the ruler's
//! exactly), and the solve is two triangular solves in place; a refactorization (a change of
//! `rho`, two to four per solve in the paper's Table III) refills the same buffers below
//! `SMALL` (32) unknowns, where the factors are plain loops, and allocates faer's factor
//! above. With the trace off ([`SolveOptions::trace`]) an iteration builds no key-value
//! set either, and the time limit is the driver's own, read every `DEADLINE_EVERY` (8)
//! iterations below `SMALL` unknowns and every iteration above, instead of argmin's timer
//! around every one ([`Clock::Driver`]). What is left of
//! a small problem's fixed cost per iteration is argmin's: the state keeps a copy of the best
//! iterate so far.
//!
//! **Other constraint kinds** ([`crate::constraint`]: equalities, limits, friction loss, contacts
//! of condim 1, 4 and 6): the same splitting with step 3 onto each block's set and De Saxcé's
//! shift of step 1 only on the cones (`|D z_f| e_n`, one coefficient per row). On a set that is
//! not a cone (the friction loss's box) `z` is the multiplier in the normal cone of the set at
//! `y` rather than a member of a dual cone; the iteration and its stopping test are unchanged.
//!
//! Counters: `factorizations` (of `W + (rho + eta) I`), `rho_updates`, `power_iterations`.
//! Status: `converged` (natural map at most `tol`), `max_iterations`, `timeout`,
//! `not_finite` (a NaN or infinity in the iterates), `singular_system` (the factorization failed:
//! `W` is not positive semidefinite), `stagnated` (ADMM at its fixed point to rounding while the
//! natural map is above `tol`).

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use std::borrow::Cow;

use faer::{Accum, ColMut, ColRef, Mat, MatRef, Par};
use serde::{Deserialize, Serialize};

use super::execute::{execute_with_clock, Clock};
use super::sweep::block;
use crate::block_cholesky::{dense_backward, dense_forward, dense_llt};
use crate::cone;
use crate::cone_scaling::ConeScaling;
use crate::constraint::{Constraint, Constraints};
use crate::deadline::Deadline;
use crate::dense::{dense_lu, dense_lu_solve};
use crate::elliptic_cone;
use crate::error::CoreError;
use crate::metrics::natural_map_of;
use crate::panels::{llt_in_panels, llt_solve_in_place, lu_in_panels, lu_solve_in_place, Stop};
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions, Status};

/// Argmin state of ADMM: the impulses `y` and the natural-map residual as cost.
pub type AdmmState = IterState<Vec<f64>, (), (), (), (), f64>;

/// How `rho` moves between iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RhoUpdate {
    /// The paper's spectral rule: `rho` times or over `kappa^p_inc` when the primal and dual
    /// residuals differ by more than the ratio `alpha`.
    #[default]
    Spectral,
    /// `rho` stays at its start (one factorization per solve).
    Constant,
}

/// Where the smallest eigenvalue `m` of `W + eta I` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MinEigenvalue {
    /// `m = eta`: `W` taken as singular, as for rigid contact with more constraints than
    /// degrees of freedom (the authors' implementation in Pinocchio without compliance:
    /// `m = eta + min R`, `R = 0` here).
    #[default]
    Zero,
    /// `m = lambda_min(W) + eta`, `lambda_min(W)` by power iteration on `L I - W` (an estimate
    /// from above, clamped to `[0, L]`).
    Power,
}

/// The proximal ADMM with De Saxcé's correction and the spectral `rho` (see the module's
/// documentation), with the paper's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Admm {
    /// The proximal weight `eta` (Pinocchio's `mu_prox`), at least `1e-14`.
    pub eta: f64,
    /// The starting `rho`; `None` for the spectral start `sqrt(m L) kappa^rho_power`.
    pub rho: Option<f64>,
    /// The spectral start's power `p0` of the condition number.
    pub rho_power: f64,
    /// The spectral update's power `p_inc`: `rho` moves by a factor `kappa^p_inc`.
    pub rho_power_factor: f64,
    /// The ratio `alpha` of primal to dual residual (or back) beyond which `rho` moves.
    pub ratio_primal_dual: f64,
    /// How `rho` moves.
    pub rho_update: RhoUpdate,
    /// Where `m` comes from.
    pub min_eigenvalue: MinEigenvalue,
    /// Power iterations for each extreme eigenvalue (stopped early at a relative change
    /// below `1e-6`).
    pub power_iterations: usize,
    /// Iterate in the coordinates where every elliptic cone is isotropic
    /// ([`crate::cone_scaling`]): the identity on Coulomb contacts; on contacts with unequal
    /// coefficients (condim 4 and 6) the projection of step 3 then treats the rows alike.
    pub isotropic_cones: bool,
    /// Iterate in the coordinates where each block of `W` has a unit mean diagonal
    /// ([`ConeScaling::equilibrated`]: one positive factor per block, so every set keeps its
    /// shape and the answer is the problem's own).
    pub equilibrate: bool,
}

impl Default for Admm {
    fn default() -> Self {
        Admm {
            eta: 1e-6,
            rho: None,
            rho_power: 0.2,
            rho_power_factor: 0.05,
            ratio_primal_dual: 10.0,
            rho_update: RhoUpdate::Spectral,
            min_eigenvalue: MinEigenvalue::Zero,
            power_iterations: 20,
            isotropic_cones: true,
            equilibrate: false,
        }
    }
}

impl Admm {
    /// Checks the option values; the error names the option and its range.
    pub fn check(&self) -> Result<(), CoreError> {
        let bad = |name: &str, range: &str, v: f64| {
            Err(CoreError::BadOption(format!(
                "admm option {name} must be {range}, got {v}"
            )))
        };
        if !(self.eta.is_finite() && self.eta >= 1e-14) {
            return bad("eta", "finite and at least 1e-14", self.eta);
        }
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && rho > 0.0) {
                return bad("rho", "finite and positive", rho);
            }
        }
        if !(self.rho_power.is_finite() && (-1.0..=1.0).contains(&self.rho_power)) {
            return bad("rho_power", "in [-1, 1]", self.rho_power);
        }
        if !(self.rho_power_factor.is_finite() && self.rho_power_factor > 0.0) {
            return bad(
                "rho_power_factor",
                "finite and positive",
                self.rho_power_factor,
            );
        }
        if !(self.ratio_primal_dual.is_finite() && self.ratio_primal_dual >= 1.0) {
            return bad(
                "ratio_primal_dual",
                "finite and at least 1",
                self.ratio_primal_dual,
            );
        }
        if self.power_iterations == 0 {
            return Err(CoreError::BadOption(
                "admm option power_iterations must be at least 1, got 0".into(),
            ));
        }
        Ok(())
    }
}

/// The factor of `W + c I`: Cholesky's `L` for a symmetric `W`, LU otherwise; in a plain
/// column-major buffer below [`SMALL`] unknowns, by panels ([`crate::panels`]) above. Every
/// kind is refilled in place at a change of `rho`.
enum Factor {
    /// `L` column-major, `n x n`.
    Small(Vec<f64>),
    /// `L U` column-major with its row swaps ([`dense_lu`]).
    SmallLu(Vec<f64>, Vec<usize>),
    /// `L` in the lower triangle ([`llt_in_panels`]).
    Llt(Mat<f64>),
    /// `L U` with its row swaps ([`lu_in_panels`]).
    Lu(Mat<f64>, Vec<usize>),
}

/// Why `W + c I` has no factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoFactor {
    /// Not positive definite (Cholesky) or singular (LU).
    Singular,
    /// The deadline passed between two panels.
    Interrupted,
}

impl From<Stop> for NoFactor {
    fn from(stop: Stop) -> NoFactor {
        match stop {
            Stop::Interrupted => NoFactor::Interrupted,
            Stop::Pivot(_) => NoFactor::Singular,
        }
    }
}

impl NoFactor {
    /// The status a solve ends with.
    fn status(self) -> Status {
        match self {
            NoFactor::Singular => Status::SingularSystem,
            NoFactor::Interrupted => Status::Timeout,
        }
    }
}

/// Below this many unknowns the factor is a plain loop in a buffer kept across
/// refactorizations, and so is the power iteration's product: faer's blocked kernels allocate
/// their factor and workspace on every call, and its LU solve a permutation workspace on every
/// solve, which on a problem of a few contacts costs more than the arithmetic (measured on
/// FCLib's one- and three-contact files, where ADMM changes `rho` a dozen times per solve, and
/// whose `W` is not exactly symmetric).
const SMALL: usize = 32;

/// Below [`SMALL`] unknowns the deadline is read every this many iterations (the driver keeps
/// its own clock, [`Clock::Driver`]): reading it costs a few percent of such an iteration.
/// Larger problems read it every iteration, where it costs nothing beside the iteration and
/// eight iterations can overrun a limit (measured: 10 ms over a 100 ms limit on 360 unknowns
/// in a debug build), and also inside the phases longer than an iteration: each product of the
/// power iteration and each panel of a factorization.
const DEADLINE_EVERY: u64 = 8;

impl Factor {
    /// Solves in place; no allocation.
    fn solve_in_place(&self, b: &mut [f64]) {
        match self {
            Factor::Small(l) => {
                let n = b.len();
                dense_forward(l, n, b);
                dense_backward(l, n, b);
            }
            Factor::SmallLu(lu, pivots) => dense_lu_solve(lu, b.len(), pivots, b),
            Factor::Llt(l) => llt_solve_in_place(l.as_ref(), b),
            Factor::Lu(lu, pivots) => lu_solve_in_place(lu.as_ref(), pivots, b),
        }
    }
}

/// The extreme eigenvalues of a symmetric matrix `a`, by power iteration: `(L, lambda_min)`
/// with `lambda_min` from the shifted matrix `L I - a` (`None` for it when not asked for), and
/// the iterations spent. Deterministic: the start is a fixed non-constant vector. `None` when
/// `deadline` passed before an iteration: it is read before each product from `SMALL` (32)
/// unknowns up; below, a product costs less than the clock read and is never interrupted.
pub fn extreme_eigenvalues(
    a: MatRef<'_, f64>,
    iterations: usize,
    smallest: bool,
    deadline: &Deadline,
) -> Option<(f64, Option<f64>, u64)> {
    let n = a.nrows();
    if n == 0 {
        return Some((0.0, Some(0.0), 0));
    }
    let mut spent = 0u64;
    let mut run = |shift: Option<f64>| {
        // A start with a component along every eigenvector but for a set of measure zero.
        let mut v: Vec<f64> = (0..n).map(|i| 1.0 + 0.5 * (i as f64 * 0.7).sin()).collect();
        let mut w = vec![0.0; n];
        let norm = crate::dense::norm2(&v);
        v.iter_mut().for_each(|x| *x /= norm);
        let mut lambda = 0.0f64;
        for k in 0..iterations.max(1) {
            if n >= SMALL && deadline.expired() {
                return None;
            }
            spent += 1;
            if n < SMALL {
                // faer's product costs more in dispatch than in arithmetic at these sizes.
                w.fill(0.0);
                for (j, &vj) in v.iter().enumerate() {
                    for (wi, aij) in w.iter_mut().zip(a.col(j).iter()) {
                        *wi += aij * vj;
                    }
                }
            } else {
                faer::linalg::matmul::matmul(
                    ColMut::from_slice_mut(&mut w).as_mat_mut(),
                    Accum::Replace,
                    a,
                    ColRef::from_slice(&v).as_mat(),
                    1.0,
                    Par::Seq,
                );
            }
            if let Some(s) = shift {
                w.iter_mut().zip(&v).for_each(|(wi, vi)| *wi = s * vi - *wi);
            }
            let next = crate::dense::dot(&v, &w);
            let norm = crate::dense::norm2(&w);
            if !(norm > 0.0 && norm.is_finite()) {
                lambda = next;
                break;
            }
            v.iter_mut().zip(&w).for_each(|(vi, wi)| *vi = wi / norm);
            let done = k > 0 && (next - lambda).abs() <= 1e-6 * next.abs();
            lambda = next;
            if done {
                break;
            }
        }
        Some(lambda)
    };
    let l = run(None)?.max(0.0);
    let min = match smallest {
        true => Some((l - run(Some(l))?).clamp(0.0, l)),
        false => None,
    };
    Some((l, min, spent))
}

/// The problem ADMM iterates on: `W` dense (and its symmetric part for the eigenvalues), `q`,
/// `mu`.
pub struct AdmmProblem<'a> {
    /// The problem as given: the ruler measures in its coordinates.
    problem: &'a LocalProblem,
    /// The `W` iterated on: the problem's own when it is stored dense and not scaled; a dense
    /// copy, or `D W D` ([`crate::cone_scaling`]), otherwise.
    w: Cow<'a, Mat<f64>>,
    /// The `q` iterated on: the problem's own, or `D q`.
    q: Cow<'a, [f64]>,
    symmetric: bool,
    q_norm: f64,
    /// The constraint blocks iterated on when they are not all Coulomb contacts (steps 1 and 3
    /// then go block by block, [`crate::constraint`]; the scaled blocks when `scaling` is set);
    /// `None` keeps the contact-by-contact loops.
    blocks: Option<&'a Constraints>,
    /// The isotropic scaling of the cones, `None` for the identity.
    scaling: Option<&'a ConeScaling>,
}

impl<'a> AdmmProblem<'a> {
    /// Borrows `W` when it is dense (forms it densely otherwise) and checks whether it is
    /// exactly symmetric. Column slices throughout: in a debug build faer's element-wise
    /// generic code (a clone, an indexed loop) costs tens of milliseconds at 360 unknowns,
    /// all of it before the driver could read its deadline.
    /// `scaling` (the cones' isotropic scaling of `problem`'s constraints, or `None`) sets the
    /// coordinates the iteration runs in.
    pub fn new(problem: &'a LocalProblem, scaling: Option<&'a ConeScaling>) -> AdmmProblem<'a> {
        let w = match (&problem.w, scaling) {
            (_, Some(s)) => Cow::Owned(s.scale_w(&problem.w)),
            (crate::problem::Matrix::Dense(w), None) => Cow::Borrowed(w),
            (other, None) => Cow::Owned(other.to_dense()),
        };
        let q = match scaling {
            Some(s) => Cow::Owned(s.to_scaled_velocity(&problem.q)),
            None => Cow::Borrowed(problem.q.as_slice()),
        };
        let blocks = match scaling {
            Some(s) => Some(s.constraints()),
            None => (!problem.constraints.coulomb_only()).then_some(&problem.constraints),
        };
        let n = w.nrows();
        let symmetric = (0..n).all(|j| {
            let col = w.col_as_slice(j);
            (0..j).all(|i| col[i] == w.col_as_slice(i)[j])
        });
        AdmmProblem {
            problem,
            w,
            q,
            symmetric,
            q_norm: crate::metrics::free_velocity_norm(&problem.q),
            blocks,
            scaling,
        }
    }

    /// The shared ruler's natural-map residual at the iterate `y`, in the problem's own
    /// coordinates, with no allocation: `r = D y` into `r` (when scaled), then `u = W r + q`
    /// into `u` by the problem's own product, in the order the ruler
    /// ([`crate::metrics::local_metrics`]) forms it, so that the driver's residual is the
    /// ruler's to the last bit and a solve the driver stops at `tol` is judged converged
    /// (column by column over `W`'s storage; a zero `r_j` skips its column).
    fn measure(&self, y: &[f64], r: &mut [f64], u: &mut [f64]) -> f64 {
        let r: &[f64] = match self.scaling {
            Some(s) => {
                s.to_impulse(y, r);
                r
            }
            None => y,
        };
        self.problem.w.mul_vec(r, u);
        u.iter_mut()
            .zip(&self.problem.q)
            .for_each(|(ui, qi)| *ui += qi);
        match self.blocks {
            // The ruler's own sum ([`crate::metrics::metrics_for`]), without its other figures.
            Some(_) => self.problem.constraints.natural_map(r, u) / (1.0 + self.q_norm),
            None => natural_map_of(self.problem.mu(), self.q_norm, r, u),
        }
    }

    /// Factors `W + c I` in the buffers of `previous` (of the same kind and size: ADMM keeps
    /// one factor per solve), reading `deadline` before every panel above [`SMALL`] unknowns.
    fn factor(
        &self,
        c: f64,
        previous: Option<Factor>,
        deadline: &Deadline,
    ) -> Result<Factor, NoFactor> {
        let n = self.w.nrows();
        if n < SMALL {
            let (mut a, mut pivots) = match previous {
                Some(Factor::Small(l)) => (l, Vec::new()),
                Some(Factor::SmallLu(lu, pivots)) => (lu, pivots),
                _ => (vec![0.0; n * n], vec![0; n]),
            };
            for j in 0..n {
                a[j * n..(j + 1) * n].copy_from_slice(self.w.col_as_slice(j));
                a[j * n + j] += c;
            }
            if self.symmetric {
                dense_llt(&mut a, n).map_err(|_| NoFactor::Singular)?;
                return Ok(Factor::Small(a));
            }
            pivots.resize(n, 0);
            dense_lu(&mut a, n, &mut pivots).map_err(|_| NoFactor::Singular)?;
            return Ok(Factor::SmallLu(a, pivots));
        }
        let (mut a, mut pivots) = match previous {
            Some(Factor::Llt(a)) => (a, Vec::new()),
            Some(Factor::Lu(a, pivots)) => (a, pivots),
            _ => (Mat::zeros(n, n), Vec::new()),
        };
        for j in 0..n {
            let col = a.col_as_slice_mut(j);
            col.copy_from_slice(self.w.col_as_slice(j));
            col[j] += c;
        }
        let proceed = || !deadline.expired();
        if self.symmetric {
            llt_in_panels(a.as_mut(), proceed)?;
            return Ok(Factor::Llt(a));
        }
        pivots.resize(n, 0);
        lu_in_panels(&mut a, &mut pivots, proceed)?;
        if !(0..n).all(|i| a[(i, i)].is_finite() && a[(i, i)] != 0.0) {
            return Err(NoFactor::Singular);
        }
        Ok(Factor::Lu(a, pivots))
    }
}

/// The vectors of one solve, made once.
struct Work {
    x: Vec<f64>,
    x_prev: Vec<f64>,
    y_prev: Vec<f64>,
    z: Vec<f64>,
    /// The right-hand side, then `x+`.
    b: Vec<f64>,
    /// The ruler's velocity `W r + q`, in the problem's coordinates.
    u: Vec<f64>,
    /// The ruler's impulse `r = D y` (unused when not scaled).
    r: Vec<f64>,
}

/// The ADMM solver state between argmin iterations.
pub struct AdmmSolver {
    options: Admm,
    stop_tol: f64,
    step_tol: f64,
    deadline: Deadline,
    rho: f64,
    kappa: f64,
    /// The spectral update's factor `kappa^p_inc`, constant over a solve.
    rho_factor: f64,
    factor: Option<Factor>,
    work: Option<Work>,
    status: Option<Status>,
    /// Whether iterations report their key values (the trace is recorded).
    trace: bool,
}

impl AdmmSolver {
    /// A solver with `options`, stopping at the natural-map residual `tol`.
    pub fn new(options: Admm) -> AdmmSolver {
        AdmmSolver {
            options,
            stop_tol: 1e-10,
            step_tol: 1e-14,
            deadline: Deadline::none(),
            rho: f64::NAN,
            kappa: f64::NAN,
            rho_factor: f64::NAN,
            factor: None,
            work: None,
            status: None,
            trace: true,
        }
    }

    /// The current `rho`.
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// The spectral start: `kappa`, `kappa^p_inc` and `rho_0` from the extreme eigenvalues of
    /// the x step's Hessian `W + eta I` (for an asymmetric `W`, of its symmetric part). `None`
    /// when the deadline passed during the power iteration.
    fn spectral_start(
        &mut self,
        p: &AdmmProblem<'_>,
        counts: &mut std::collections::HashMap<&'static str, u64>,
    ) -> Option<()> {
        let o = &self.options;
        let sym;
        let a = if p.symmetric {
            p.w.as_ref().as_ref()
        } else {
            sym = symmetric_part(&p.w);
            sym.as_ref()
        };
        let smallest = o.min_eigenvalue == MinEigenvalue::Power;
        let found = extreme_eigenvalues(a, o.power_iterations, smallest, &self.deadline);
        let (lmax, lmin, spent) = found?;
        counts.insert("power_iterations", spent);
        let big_l = lmax + o.eta;
        let m = lmin.unwrap_or(0.0) + o.eta;
        self.kappa = (big_l / m).max(1.0);
        self.rho_factor = self.kappa.powf(o.rho_power_factor);
        self.rho = o
            .rho
            .unwrap_or_else(|| (m * big_l).sqrt() * self.kappa.powf(o.rho_power));
        Some(())
    }
}

/// `(W + W') / 2`, column slice by column slice.
fn symmetric_part(w: &Mat<f64>) -> Mat<f64> {
    let n = w.nrows();
    let mut sym = Mat::zeros(n, n);
    for j in 0..n {
        let col = sym.col_as_slice_mut(j);
        for (i, s) in col.iter_mut().enumerate() {
            *s = 0.5 * (w.col_as_slice(j)[i] + w.col_as_slice(i)[j]);
        }
    }
    sym
}

/// `s_a = mu_a |z_a,t| e_n`, the De Saxcé shift of the dual (step 1), subtracted from `b`.
fn subtract_de_saxce(mu: &[f64], z: &[f64], b: &mut [f64]) {
    for (a, &m) in mu.iter().enumerate() {
        b[3 * a] -= m * cone::tangential_norm(block(z, a));
    }
}

/// The De Saxcé shift of step 1 block by block: `|D z_f| e_n` for a cone (elliptic, one
/// coefficient per row), none for the other kinds, whose sets are not cones of friction.
fn subtract_de_saxce_blocks(c: &Constraints, z: &[f64], b: &mut [f64]) {
    for (rows, k) in c.iter() {
        if let Constraint::Contact { mu } = k {
            if !mu.is_empty() {
                b[rows.start] -= elliptic_cone::dual_norm(mu, &z[rows.start + 1..rows.end]);
            }
        }
    }
}

/// The start block by block: `y0 = P_C(x0)` and `z0` the De Saxcé velocity of `y0` projected
/// onto each cone's dual (for the other kinds, the velocity itself), in the iterated
/// coordinates (`u' = D u` when scaled). Returns the ruler's residual at `y0`.
fn start_blocks(c: &Constraints, p: &AdmmProblem<'_>, y: &mut [f64], work: &mut Work) -> f64 {
    let mut out = [0.0; 6];
    for (rows, k) in c.iter() {
        k.project(&y[rows.clone()], &mut out[..rows.len()]);
        y[rows.clone()].copy_from_slice(&out[..rows.len()]);
    }
    let res = p.measure(y, &mut work.r, &mut work.u);
    if let Some(s) = p.scaling {
        work.u.iter_mut().zip(s.d()).for_each(|(u, d)| *u *= d);
    }
    let mut hat = [0.0; 6];
    for (rows, k) in c.iter() {
        let m = rows.len();
        match k {
            Constraint::Contact { mu } if !mu.is_empty() => {
                elliptic_cone::de_saxce(mu, &work.u[rows.clone()], &mut hat[..m]);
                elliptic_cone::project_dual(mu, &hat[..m], &mut out[..m]);
                work.z[rows].copy_from_slice(&out[..m]);
            }
            _ => work.z[rows.clone()].copy_from_slice(&work.u[rows]),
        }
    }
    res
}

/// The paper's residuals of one iteration, in the infinity norm.
struct Residuals {
    /// `eps_p = |x+ - y+|`.
    primal: f64,
    /// `eps_d = |rho (y+ - y) + eta (x+ - x)|`.
    dual: f64,
    /// `|y+ - y|`, the step that tells stagnation.
    step: f64,
}

impl Work {
    /// Steps 1 and 2: `b = eta x + rho y + z - q - s` with De Saxcé's shift `s = Gamma(z)`,
    /// then `x+ = (W + (rho + eta) I)^{-1} b` by the current factor, in place.
    fn x_step(&mut self, p: &AdmmProblem<'_>, factor: &Factor, y: &[f64], (eta, rho): (f64, f64)) {
        let (problem, blocks) = (p.problem, p.blocks);
        self.x_prev.copy_from_slice(&self.x);
        let q: &[f64] = &p.q;
        let rhs = self.b.iter_mut().zip(&self.x).zip(y).zip(&self.z).zip(q);
        for ((((b, x), yi), z), qi) in rhs {
            *b = eta * x + rho * yi + z - qi;
        }
        match blocks {
            Some(c) => subtract_de_saxce_blocks(c, &self.z, &mut self.b),
            None => subtract_de_saxce(problem.mu(), &self.z, &mut self.b),
        }
        factor.solve_in_place(&mut self.b);
        self.x.copy_from_slice(&self.b);
    }

    /// Steps 3 and 4 block by block, onto each block's set ([`Constraint::project`]): ADMM on a
    /// convex set other than a cone is the same splitting, `z` then the multiplier in the
    /// normal cone of the set at `y`.
    fn y_z_step_blocks(&mut self, c: &Constraints, y: &mut [f64], eta: f64, rho: f64) -> Residuals {
        self.y_prev.copy_from_slice(y);
        let mut r = Residuals {
            primal: 0.0,
            dual: 0.0,
            step: 0.0,
        };
        let (mut v, mut ya) = ([0.0; 6], [0.0; 6]);
        for (rows, k) in c.iter() {
            let m = rows.len();
            for (i, j) in rows.clone().enumerate() {
                v[i] = self.x[j] - self.z[j] / rho;
            }
            k.project(&v[..m], &mut ya[..m]);
            for (i, j) in rows.enumerate() {
                let (xj, yj) = (self.x[j], ya[i]);
                self.z[j] -= rho * (xj - yj);
                let dy = yj - self.y_prev[j];
                let dx = xj - self.x_prev[j];
                r.primal = r.primal.max((xj - yj).abs());
                r.dual = r.dual.max((rho * dy + eta * dx).abs());
                r.step = r.step.max(dy.abs());
                y[j] = yj;
            }
        }
        r
    }

    /// Steps 3 and 4, contact by contact: `y+ = P_K(x+ - z / rho)` and
    /// `z+ = z - rho (x+ - y+)`; `y` becomes `y+`. Returns the step's residuals.
    fn y_z_step(&mut self, mu: &[f64], y: &mut [f64], eta: f64, rho: f64) -> Residuals {
        self.y_prev.copy_from_slice(y);
        let mut r = Residuals {
            primal: 0.0,
            dual: 0.0,
            step: 0.0,
        };
        for (a, &m) in mu.iter().enumerate() {
            let xa = block(&self.x, a);
            let za = block(&self.z, a);
            let ya = cone::project(m, xa - za / rho);
            let za = za - rho * (xa - ya);
            let dy = ya - block(&self.y_prev, a);
            let dx = xa - block(&self.x_prev, a);
            r.primal = r.primal.max((xa - ya).amax());
            r.dual = r.dual.max((rho * dy + eta * dx).amax());
            r.step = r.step.max(dy.amax());
            y[3 * a..3 * a + 3].copy_from_slice(ya.as_slice());
            self.z[3 * a..3 * a + 3].copy_from_slice(za.as_slice());
        }
        r
    }
}

impl AdmmSolver {
    /// The status after iteration `iter`: not finite, converged (the natural map `res` at most
    /// the tolerance), stagnated (ADMM at its fixed point to rounding) or out of time; `None`
    /// to go on.
    fn judge(&self, res: f64, r: &Residuals, y: &[f64], iter: u64) -> Option<Status> {
        let y_max = crate::dense::norm_inf(y);
        if !res.is_finite() || !r.primal.is_finite() || !r.dual.is_finite() {
            Some(Status::NotFinite)
        } else if res <= self.stop_tol {
            Some(Status::Converged)
        } else if r.step <= self.step_tol * (1.0 + y_max)
            && r.primal <= self.step_tol * (1.0 + y_max)
        {
            Some(Status::Stagnated)
        } else if (y.len() >= SMALL || iter.is_multiple_of(DEADLINE_EVERY))
            && self.deadline.expired()
        {
            Some(Status::Timeout)
        } else {
            None
        }
    }

    /// The spectral update of `rho` (the paper's section on it): times `kappa^p_inc` when the
    /// primal residual exceeds `alpha` times the dual, divided by it in the opposite case, and
    /// then one refactorization of `W + (rho + eta) I`. Returns the new `rho` when it changed
    /// (a bad one ends the solve as not finite instead).
    fn update_rho(
        &mut self,
        p: &AdmmProblem<'_>,
        counts: &mut std::collections::HashMap<&'static str, u64>,
        r: &Residuals,
    ) -> Option<f64> {
        let (rho, eta, ratio) = (self.rho, self.options.eta, self.options.ratio_primal_dual);
        let next = if r.primal > ratio * r.dual {
            rho * self.rho_factor
        } else if r.dual > ratio * r.primal {
            rho / self.rho_factor
        } else {
            rho
        };
        if next == rho {
            return None;
        }
        if !next.is_finite() || next <= 0.0 {
            self.status = Some(Status::NotFinite);
            return None;
        }
        self.rho = next;
        *counts.entry("factorizations").or_insert(0) += 1;
        *counts.entry("rho_updates").or_insert(0) += 1;
        match p.factor(next + eta, self.factor.take(), &self.deadline) {
            Ok(f) => self.factor = Some(f),
            Err(e) => self.status = Some(e.status()),
        }
        Some(next)
    }
}

impl<'a> Solver<AdmmProblem<'a>, AdmmState> for AdmmSolver {
    fn name(&self) -> &str {
        "proximal ADMM (Carpentier, Le Lidec and Montaut 2024)"
    }

    fn init(
        &mut self,
        problem: &mut Problem<AdmmProblem<'a>>,
        state: AdmmState,
    ) -> Result<(AdmmState, Option<KV>), ArgminError> {
        let x0 = state.get_param().cloned().unwrap_or_default();
        let p = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("admm problem missing"))?;
        let n = x0.len();
        let mut work = Work {
            x: x0.clone(),
            x_prev: vec![0.0; n],
            y_prev: vec![0.0; n],
            z: vec![0.0; n],
            b: vec![0.0; n],
            u: vec![0.0; n],
            r: vec![0.0; if p.scaling.is_some() { n } else { 0 }],
        };
        // y0 = P_K(x0); z0 = P_K*(sigma(y0)), the De Saxcé velocity of the start.
        let mut y = x0;
        let res = match p.blocks {
            Some(c) => start_blocks(c, p, &mut y, &mut work),
            None => {
                for (a, &mu) in p.problem.mu().iter().enumerate() {
                    let r = cone::project(mu, block(&y, a));
                    y[3 * a..3 * a + 3].copy_from_slice(r.as_slice());
                }
                let res = p.measure(&y, &mut work.r, &mut work.u);
                for (a, &mu) in p.problem.mu().iter().enumerate() {
                    let sigma = cone::de_saxce(mu, block(&work.u, a));
                    let z = cone::project_dual(mu, sigma);
                    work.z[3 * a..3 * a + 3].copy_from_slice(z.as_slice());
                }
                res
            }
        };
        // The phases longer than an iteration read the deadline inside: each product of the
        // power iteration, each panel of the factorization.
        let factor = match self.spectral_start(p, &mut problem.counts) {
            Some(()) => p.factor(self.rho + self.options.eta, None, &self.deadline),
            None => Err(NoFactor::Interrupted),
        };
        problem.counts.insert("factorizations", 1);
        problem.counts.insert("rho_updates", 0);
        self.status = if let Err(e) = factor {
            Some(e.status())
        } else if !res.is_finite() || !self.rho.is_finite() {
            Some(Status::NotFinite)
        } else if res <= self.stop_tol {
            Some(Status::Converged)
        } else {
            None
        };
        self.factor = factor.ok();
        self.work = Some(work);
        let kv = kv!(
            "merit" => res;
            "rho" => self.rho;
            "kappa" => self.kappa;
        );
        Ok((state.param(y).cost(res), Some(kv)))
    }

    /// One iteration of Algorithm 1 (steps 1 to 4), the shared natural map at `y+`, the
    /// status and, while the solve goes on, the spectral update of `rho`.
    fn next_iter(
        &mut self,
        problem: &mut Problem<AdmmProblem<'a>>,
        mut state: AdmmState,
    ) -> Result<(AdmmState, Option<KV>), ArgminError> {
        let mut y = state.take_param().unwrap_or_default();
        let p = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("admm problem missing"))?;
        let (Some(w), Some(factor)) = (self.work.as_mut(), self.factor.as_ref()) else {
            // No factor: `init` ended the solve (its status says why).
            self.status.get_or_insert(Status::SingularSystem);
            let res = state.get_cost();
            return Ok((state.param(y).cost(res), None));
        };
        let (eta, rho) = (self.options.eta, self.rho);
        w.x_step(p, factor, &y, (eta, rho));
        let r = match p.blocks {
            Some(c) => w.y_z_step_blocks(c, &mut y, eta, rho),
            None => w.y_z_step(p.problem.mu(), &mut y, eta, rho),
        };
        let res = p.measure(&y, &mut w.r, &mut w.u);
        // Without a trace nobody reads the key values: building them (a string per key) would
        // cost more than a small problem's iteration.
        let mut kv: Option<KV> = self.trace.then(|| {
            kv!(
                "merit" => res;
                "step_norm" => r.step;
                "step_kind" => "admm";
                "rho" => rho;
                "primal" => r.primal;
                "dual" => r.dual;
                "active" => p.problem.constraints.iter().filter(|(rows, _)| y[rows.start] > 0.0).count() as u64;
            )
        });
        self.status = self.judge(res, &r, &y, state.get_iter());
        if self.status.is_none() && self.options.rho_update == RhoUpdate::Spectral {
            let next = self.update_rho(p, &mut problem.counts, &r);
            if let (Some(next), Some(kv)) = (next, kv.as_mut()) {
                kv.insert("rho_next", next.into());
            }
        }
        Ok((state.param(y).cost(res), kv))
    }

    fn terminate(&mut self, _state: &AdmmState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// Solves a local problem by ADMM from `r0` (zero when `None`) under `opts`: the natural-map
/// residual is compared with `opts.stop_tol`, stagnation with `opts.step_tol`; bad options are an
/// error.
pub fn solve_admm(
    problem: &LocalProblem,
    options: &Admm,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    options.check()?;
    let r0 = super::kit::start_impulses(r0, problem.q.len())?;
    let equilibrate = options.equilibrate.then_some(&problem.w);
    let (scaling, r0) = ConeScaling::start(
        options.isotropic_cones,
        equilibrate,
        &problem.constraints,
        r0,
    );
    let mut solver = AdmmSolver::new(options.clone());
    solver.stop_tol = opts.stop_tol;
    solver.step_tol = opts.step_tol;
    solver.deadline = Deadline::after(opts.time_limit);
    solver.trace = opts.trace;
    let tol = opts.stop_tol;
    let mut solution = execute_with_clock(
        AdmmProblem::new(problem, scaling.as_ref()),
        solver,
        r0,
        opts,
        Clock::Driver,
        |s: &AdmmState| s.get_cost() <= tol,
    )?;
    ConeScaling::finish(scaling.as_ref(), &mut solution);
    Ok(solution)
}

impl crate::plugin::Driver<LocalProblem> for Admm {
    fn solve(
        &self,
        problem: &LocalProblem,
        r0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        solve_admm(problem, self, Some(r0), opts)
    }
}

impl crate::plugin::DriverPlugin for Admm {
    type Needs = crate::plugin::NeedsContactProblem;
    const NAME: &'static str = "admm";
    const DESCRIPTION: &'static str =
        "proximal ADMM with De Saxce's correction and the spectral rho (Carpentier, Le Lidec and Montaut 2024)";

    fn check(&self) -> Result<(), CoreError> {
        Admm::check(self)
    }
}

#[cfg(test)]
mod tests;
