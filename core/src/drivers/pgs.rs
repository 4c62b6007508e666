//! Projected (nonsmooth) Gauss-Seidel over contacts with the exact cone projection: the
//! baseline every paper compares against and Erleben's warm start.
//!
//! One iteration is one sweep over the contacts `a = 0..nc` in order. Contact `a` sees the
//! others frozen, `u_a = c_a + W_aa r_a` with `c_a = q_a + sum_{b != a} W_ab r_b`, and solves its
//! local Coulomb problem by the projected fixed point of the natural map (Jean and Moreau's
//! NSGS with De Saxcé's velocity):
//!
//! `r_a <- P_{K_mu}(r_a - rho_a (u_a + mu |u_a,t| e_n))`, `rho_a = 1 / lambda_max(W_aa)`,
//!
//! iterated up to `local_iterations` times (its fixed points are the local solutions for any
//! `rho_a > 0`; `rho_a` below `2 / lambda_max` makes the map a contraction on the linear part),
//! then relaxed by `omega`. Convergence is judged on the global natural-map residual of
//! [`crate::metrics`], so PGS stops by the same ruler every other solver is measured with.
//! PGS on the De Saxcé fixed point has no convergence guarantee (the friction law is
//! non-associated); when sweeps stop changing `r` first, the status is `Stagnated`.

use argmin::core::{
    Error as ArgminError, IterState, Problem, Solver, State, TerminationStatus, KV,
};
use argmin::kv;
use nalgebra::{Matrix3, Vector3};

use super::execute::execute;
use super::kit::Deadline;
use crate::cone;
use crate::error::CoreError;
use crate::metrics::natural_map_residual;
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions, Status};

/// Argmin state of PGS: the impulses `r` and the natural-map residual as cost.
pub type PgsState = IterState<Vec<f64>, (), (), (), (), f64>;

/// A local problem split into 3x3 block rows, the layout Gauss-Seidel walks.
#[derive(Debug, Clone)]
pub struct BlockRows<'a> {
    problem: &'a LocalProblem,
    /// Off-diagonal blocks of each block row: `(b, W_ab)`, `b != a`.
    rows: Vec<Vec<(usize, Matrix3<f64>)>>,
    /// Diagonal blocks `W_aa`.
    diag: Vec<Matrix3<f64>>,
    /// `rho_a = 1 / lambda_max(W_aa)`.
    rho: Vec<f64>,
}

impl<'a> BlockRows<'a> {
    /// Splits `W` into 3x3 blocks (only blocks with a nonzero entry are kept).
    pub fn new(problem: &'a LocalProblem) -> BlockRows<'a> {
        let nc = problem.num_contacts();
        let mut map = vec![std::collections::BTreeMap::<usize, Matrix3<f64>>::new(); nc];
        problem.w.for_each_entry(|i, j, v| {
            if v != 0.0 {
                map[i / 3].entry(j / 3).or_insert_with(Matrix3::zeros)[(i % 3, j % 3)] += v;
            }
        });
        let mut diag = Vec::with_capacity(nc);
        let mut rows = Vec::with_capacity(nc);
        for (a, mut m) in map.into_iter().enumerate() {
            diag.push(m.remove(&a).unwrap_or_else(Matrix3::zeros));
            rows.push(m.into_iter().collect());
        }
        let rho = diag
            .iter()
            .map(|d: &Matrix3<f64>| {
                let sym = 0.5 * (d + d.transpose());
                let lmax = sym.symmetric_eigenvalues().max();
                // A zero block (a contact that does not feel its own impulse) gets rho = 1:
                // its fixed point is then the projection of -u itself.
                if lmax > 0.0 && lmax.is_finite() {
                    1.0 / lmax
                } else {
                    1.0
                }
            })
            .collect();
        BlockRows {
            problem,
            rows,
            diag,
            rho,
        }
    }
}

/// Projected Gauss-Seidel (NSGS) over contacts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectedGaussSeidel {
    /// Fixed-point iterations of each contact's local problem per sweep.
    pub local_iterations: usize,
    /// Relaxation `omega` of the contact update (1 = plain Gauss-Seidel).
    pub omega: f64,
    #[serde(skip)]
    tol: f64,
    #[serde(skip)]
    step_tol: f64,
    #[serde(skip)]
    deadline: Deadline,
    #[serde(skip)]
    status: Option<Status>,
}

impl Default for ProjectedGaussSeidel {
    fn default() -> Self {
        ProjectedGaussSeidel {
            local_iterations: 10,
            omega: 1.0,
            tol: 1e-10,
            step_tol: 1e-14,
            deadline: Deadline::none(),
            status: None,
        }
    }
}

fn block(v: &[f64], a: usize) -> Vector3<f64> {
    Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2])
}

impl ProjectedGaussSeidel {
    /// One sweep; returns the largest change of an impulse component, and whether the deadline
    /// cut the sweep short (the contacts not reached keep their impulses).
    fn sweep(&self, b: &BlockRows<'_>, r: &mut [f64]) -> (f64, bool) {
        let mut max_change: f64 = 0.0;
        for a in 0..b.diag.len() {
            if self.deadline.expired() {
                return (max_change, true);
            }
            let mu = b.problem.mu[a];
            let mut c = block(&b.problem.q, a);
            for (j, w_ab) in &b.rows[a] {
                c += w_ab * block(r, *j);
            }
            let old = block(r, a);
            let mut ra = old;
            for _ in 0..self.local_iterations.max(1) {
                let u = c + b.diag[a] * ra;
                let next = cone::project(mu, ra - b.rho[a] * cone::de_saxce(mu, u));
                let change = (next - ra).amax();
                ra = next;
                if change <= 1e-15 * (1.0 + ra.amax()) {
                    break;
                }
            }
            let ra = old + self.omega * (ra - old);
            max_change = max_change.max((ra - old).amax());
            r[3 * a..3 * a + 3].copy_from_slice(ra.as_slice());
        }
        (max_change, false)
    }
}

impl<'a> Solver<BlockRows<'a>, PgsState> for ProjectedGaussSeidel {
    fn name(&self) -> &str {
        "projected Gauss-Seidel"
    }

    fn init(
        &mut self,
        problem: &mut Problem<BlockRows<'a>>,
        state: PgsState,
    ) -> Result<(PgsState, Option<KV>), ArgminError> {
        let r = state.get_param().cloned().unwrap_or_default();
        let res = problem.problem("natural_map_count", |b| {
            Ok(natural_map_residual(b.problem, &r))
        })?;
        Ok((state.param(r).cost(res), Some(kv!("merit" => res;))))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<BlockRows<'a>>,
        mut state: PgsState,
    ) -> Result<(PgsState, Option<KV>), ArgminError> {
        let mut r = state.take_param().unwrap_or_default();
        let b = problem
            .problem
            .as_ref()
            .ok_or_else(|| ArgminError::msg("PGS problem missing"))?;
        let (change, cut) = self.sweep(b, &mut r);
        let res = natural_map_residual(b.problem, &r);
        let active = (0..b.diag.len()).filter(|&a| r[3 * a] > 0.0).count() as u64;
        let r_max = r.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        self.status = if !res.is_finite() {
            Some(Status::NotFinite)
        } else if cut {
            Some(Status::Timeout)
        } else if res <= self.tol {
            Some(Status::Converged)
        } else if change <= self.step_tol * (1.0 + r_max) {
            Some(Status::Stagnated)
        } else {
            None
        };
        let kv =
            kv!("merit" => res; "step_norm" => change; "active" => active; "step_kind" => "sweep";);
        Ok((state.param(r).cost(res), Some(kv)))
    }

    fn terminate(&mut self, _state: &PgsState) -> TerminationStatus {
        self.status
            .as_ref()
            .map(Status::to_termination)
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// Solves a local problem by PGS from `r0` (zero when `None`); `opts.tol` bounds the
/// natural-map residual.
pub fn solve_pgs(
    problem: &LocalProblem,
    mut solver: ProjectedGaussSeidel,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    let n = problem.q.len();
    let r0 = r0.unwrap_or_else(|| vec![0.0; n]);
    if r0.len() != n {
        return Err(CoreError::Unsupported(format!(
            "initial impulses have {} entries, the problem has {n}",
            r0.len()
        )));
    }
    solver.tol = opts.tol;
    solver.step_tol = opts.step_tol;
    solver.deadline = Deadline::after(opts.time_limit);
    let tol = opts.tol;
    execute(BlockRows::new(problem), solver, r0, opts, |s: &PgsState| {
        s.get_cost() <= tol
    })
}

impl crate::plugin::Driver<LocalProblem> for ProjectedGaussSeidel {
    fn solve(
        &self,
        problem: &LocalProblem,
        r0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        solve_pgs(problem, self.clone(), Some(r0), opts)
    }
}

impl crate::plugin::DriverPlugin for ProjectedGaussSeidel {
    type Needs = crate::plugin::NeedsContactProblem;
    const NAME: &'static str = "pgs";
    const DESCRIPTION: &'static str =
        "projected Gauss-Seidel over contacts, exact cone projection (NSGS)";

    fn check(&self) -> Result<(), CoreError> {
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(CoreError::BadOption(format!(
                "pgs option omega must be in (0, 2), got {}",
                self.omega
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::local_metrics;
    use crate::problem::Matrix;

    #[test]
    fn single_sliding_contact_matches_closed_form() {
        // W = diag(1, 2, 2), q = (-1, 3, 0), mu = 0.5: r_n = 1, sliding with r_t = -0.5,
        // u_t = 3 - 2*0.5 = 2 > 0.
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap();
        let p = LocalProblem {
            w,
            q: vec![-1.0, 3.0, 0.0],
            mu: vec![0.5],
        };
        let opts = SolveOptions {
            tol: 1e-12,
            max_iter: 50,
            ..Default::default()
        };
        let s = solve_pgs(&p, ProjectedGaussSeidel::default(), None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged);
        assert!(
            (s.x[0] - 1.0).abs() < 1e-10 && (s.x[1] + 0.5).abs() < 1e-10 && s.x[2].abs() < 1e-12
        );
        assert!(s.trace.len() as u64 == s.iterations + 1);
    }

    #[test]
    fn coupled_contacts_converge_to_small_residual() {
        // A diagonally dominant SPD W with coupling between two contacts.
        #[rustfmt::skip]
        let w = [
            2.0, 0.1, 0.0, 0.5, 0.0, 0.0,
            0.1, 2.0, 0.0, 0.0, 0.3, 0.0,
            0.0, 0.0, 2.0, 0.0, 0.0, 0.3,
            0.5, 0.0, 0.0, 2.0, 0.1, 0.0,
            0.0, 0.3, 0.0, 0.1, 2.0, 0.0,
            0.0, 0.0, 0.3, 0.0, 0.0, 2.0,
        ];
        let p = LocalProblem {
            w: Matrix::from_row_major("W", 6, 6, &w).unwrap(),
            q: vec![-1.0, 0.4, -0.2, -0.5, -1.0, 0.3],
            mu: vec![0.3, 0.8],
        };
        let opts = SolveOptions {
            tol: 1e-12,
            max_iter: 200,
            ..Default::default()
        };
        let s = solve_pgs(&p, ProjectedGaussSeidel::default(), None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged);
        let m = local_metrics(&p, &s.x);
        assert!(m.natural_map <= 1e-12 && m.cone_violation < 1e-12 && m.complementarity_gap < 1e-9);
        // The residual trace ends at the reported merit.
        assert_eq!(s.trace.rows.last().unwrap().merit, s.merit);
    }

    #[test]
    fn budget_and_bad_start_are_reported() {
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0.9, 0., 0.9, 1., 0., 0., 0., 1.]).unwrap();
        let p = LocalProblem {
            w,
            q: vec![-1.0, 3.0, 0.0],
            mu: vec![0.5],
        };
        let opts = SolveOptions {
            tol: 1e-300,
            max_iter: 1,
            ..Default::default()
        };
        let solver = ProjectedGaussSeidel {
            local_iterations: 1,
            ..Default::default()
        };
        let s = solve_pgs(&p, solver, None, &opts).unwrap();
        assert_eq!(s.status, Status::MaxIterations);
        assert!(solve_pgs(
            &p,
            ProjectedGaussSeidel::default(),
            Some(vec![0.0; 2]),
            &opts
        )
        .is_err());
    }
}
