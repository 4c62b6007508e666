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
//!
//! The sweep itself is [`super::sweep`]'s, shared with every per-contact method; this module
//! is PGS's local solve ([`NaturalMapLocal`]) and its options.

use nalgebra::{Matrix3, Vector3};

use super::sweep::{
    solve_sweep, BlockSweep, ContactMode, ContactSolver, LocalError, LocalSolution, Relaxation,
    StopRule,
};
use crate::cone;
use crate::error::CoreError;
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions};

pub use super::sweep::{BlockRows, SweepState as PgsState};

/// Projected Gauss-Seidel (NSGS) over contacts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectedGaussSeidel {
    /// Fixed-point iterations of each contact's local problem per sweep.
    pub local_iterations: usize,
    /// Relaxation `omega` of the contact update (1 = plain Gauss-Seidel).
    pub omega: f64,
}

impl Default for ProjectedGaussSeidel {
    fn default() -> Self {
        ProjectedGaussSeidel {
            local_iterations: 10,
            omega: 1.0,
        }
    }
}

/// PGS's local solve: the projected fixed point of the natural map with De Saxce's velocity,
/// `r <- P_K(r - rho (u + mu |u_t| e_n))`, `rho = 1 / lambda_max(W_aa)`, at most
/// `iterations` times (Jean and Moreau's NSGS).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NaturalMapLocal {
    /// Fixed-point iterations per call (at least one).
    pub iterations: usize,
}

impl ContactSolver for NaturalMapLocal {
    /// `rho_a`.
    type Prepared = f64;

    fn prepare(&self, w_aa: &Matrix3<f64>, _mu: f64) -> f64 {
        let sym = 0.5 * (w_aa + w_aa.transpose());
        let lmax = sym.symmetric_eigenvalues().max();
        // A zero block (a contact that does not feel its own impulse) gets rho = 1:
        // its fixed point is then the projection of -u itself.
        if lmax > 0.0 && lmax.is_finite() {
            1.0 / lmax
        } else {
            1.0
        }
    }

    fn solve(
        &self,
        rho: &f64,
        w_aa: &Matrix3<f64>,
        c: &Vector3<f64>,
        mu: f64,
        r_prev: &Vector3<f64>,
    ) -> Result<LocalSolution, LocalError> {
        let mut ra = *r_prev;
        let mut steps = 0;
        for _ in 0..self.iterations.max(1) {
            steps += 1;
            let u = c + w_aa * ra;
            let next = cone::project(mu, ra - *rho * cone::de_saxce(mu, u));
            let change = (next - ra).amax();
            ra = next;
            if change <= 1e-15 * (1.0 + ra.amax()) {
                break;
            }
        }
        Ok(LocalSolution {
            r: ra,
            mode: ContactMode::of(mu, &ra),
            steps,
        })
    }
}

impl ProjectedGaussSeidel {
    /// The sweep this driver runs: the natural-map local solve, constant relaxation `omega`,
    /// stopped by the natural-map residual.
    pub fn sweep(&self) -> BlockSweep<NaturalMapLocal> {
        BlockSweep::new(
            NaturalMapLocal {
                iterations: self.local_iterations,
            },
            Relaxation::constant(self.omega),
            StopRule::NaturalMap,
        )
    }
}

/// Solves a local problem by PGS from `r0` (zero when `None`); `opts.tol` bounds the
/// natural-map residual.
pub fn solve_pgs(
    problem: &LocalProblem,
    solver: ProjectedGaussSeidel,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    solve_sweep(problem, solver.sweep(), r0, opts)
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
    use crate::result::Status;

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
