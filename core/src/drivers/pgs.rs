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
//! then relaxed by `omega`. Before iterating, the local solve tries the two fixed points it can
//! write down (`closed_forms`, on by default): the contact opens, `r_a = 0`, exactly when
//! `c_a,n >= 0` (then `-rho (c_a + mu |c_a,t| e_n)` lies in the cone's polar, so the map sends
//! `0` to `0`), and it sticks, `r_a = -W_aa^-1 c_a`, when that impulse lies in `K_mu` (then
//! `u_a = 0` and the map leaves `r_a` unchanged). The fixed-point iterations (on MuJoCo's
//! clutter steps they had used about eight of their ten steps per contact and sweep) remain
//! for slipping contacts only; the sweep and its answers are the same method's, with exact
//! local answers where they are known. Convergence is judged on the global natural-map
//! residual of [`crate::metrics`], so PGS stops by the same ruler every other solver is
//! measured with.
//! PGS on the De Saxcé fixed point has no convergence guarantee (the friction law is
//! non-associated); when sweeps stop changing `r` first, the status is `Stagnated`.
//!
//! The sweep itself is [`super::sweep`]'s, shared with every per-contact method; this module
//! is PGS's local solve ([`NaturalMapLocal`]) and its options. Problems with other rows than
//! Coulomb contacts go block by block ([`super::block_pgs`]), with the same closed forms. With
//! `nncg`, either sweep's successive iterates are combined by the nonsmooth nonlinear conjugate
//! gradient of Silcowitz, Niebe and Erleben (2010, [`super::nncg`]): off by default, as the
//! papers' PGS has it.

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
    /// Try the opening and sticking closed forms before the fixed-point iterations.
    pub closed_forms: bool,
    /// On problems swept block by block ([`super::block_pgs`]), sweep in the coordinates where
    /// every cone is isotropic ([`crate::cone_scaling`]); Coulomb contacts are isotropic already.
    pub isotropic_cones: bool,
    /// Combine successive sweeps by the nonsmooth nonlinear conjugate gradient (NNCG) of
    /// Silcowitz, Niebe and Erleben (2010), [`super::nncg`].
    pub nncg: bool,
    /// NNCG restarts when a sweep's squared step exceeds the last one's by this factor
    /// (`beta` above it; the paper's 1, [`super::nncg::PAPER_RESTART`]).
    pub nncg_restart: f64,
}

impl Default for ProjectedGaussSeidel {
    fn default() -> Self {
        ProjectedGaussSeidel {
            local_iterations: 10,
            omega: 1.0,
            closed_forms: true,
            isotropic_cones: true,
            nncg: false,
            nncg_restart: super::nncg::PAPER_RESTART,
        }
    }
}

/// PGS's local solve: the projected fixed point of the natural map with De Saxce's velocity,
/// `r <- P_K(r - rho (u + mu |u_t| e_n))`, `rho = 1 / lambda_max(W_aa)`, at most
/// `iterations` times (Jean and Moreau's NSGS), after the opening and sticking closed forms
/// when `closed_forms` is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NaturalMapLocal {
    /// Fixed-point iterations per call (at least one).
    pub iterations: usize,
    /// Try `r = 0` and `r = -W_aa^-1 c` first (see the module's documentation).
    pub closed_forms: bool,
}

/// What PGS computes once per contact and solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PgsContact {
    /// The fixed point's step `rho_a = 1 / lambda_max(sym W_aa)`.
    pub rho: f64,
    /// `W_aa^-1`, where `W_aa` is invertible to working accuracy (the sticking closed form).
    pub w_inv: Option<Matrix3<f64>>,
}

impl NaturalMapLocal {
    /// The opening or sticking local solution, where one of them holds.
    fn closed_form(prep: &PgsContact, c: &Vector3<f64>, mu: f64) -> Option<Vector3<f64>> {
        if c[0] >= 0.0 {
            return Some(Vector3::zeros());
        }
        let r = -(prep.w_inv? * c);
        (r[0] > 0.0 && cone::tangential_norm(r) <= mu * r[0]).then_some(r)
    }
}

impl ContactSolver for NaturalMapLocal {
    type Prepared = PgsContact;

    fn prepare(&self, w_aa: &Matrix3<f64>, _mu: f64) -> PgsContact {
        let sym = 0.5 * (w_aa + w_aa.transpose());
        let lmax = sym.symmetric_eigenvalues().max();
        // A zero block (a contact that does not feel its own impulse) gets rho = 1:
        // its fixed point is then the projection of -u itself.
        let rho = if lmax > 0.0 && lmax.is_finite() {
            1.0 / lmax
        } else {
            1.0
        };
        // An inverse that does not reproduce the identity to 1e-10 would put the sticking
        // answer's velocity visibly off zero: such blocks keep the iterations.
        let w_inv = w_aa
            .try_inverse()
            .filter(|inv| (w_aa * inv - Matrix3::identity()).amax() <= 1e-10);
        PgsContact { rho, w_inv }
    }

    fn solve(
        &self,
        prep: &PgsContact,
        w_aa: &Matrix3<f64>,
        c: &Vector3<f64>,
        mu: f64,
        r_prev: &Vector3<f64>,
    ) -> Result<LocalSolution, LocalError> {
        if self.closed_forms {
            if let Some(r) = Self::closed_form(prep, c, mu) {
                return Ok(LocalSolution {
                    r,
                    mode: ContactMode::of(mu, &r),
                    steps: 0,
                });
            }
        }
        let rho = &prep.rho;
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
        let sweep = BlockSweep::new(
            NaturalMapLocal {
                iterations: self.local_iterations,
                closed_forms: self.closed_forms,
            },
            Relaxation::constant(self.omega),
            StopRule::NaturalMap,
        );
        if self.nncg {
            sweep.conjugate(self.nncg_restart)
        } else {
            sweep
        }
    }
}

/// Solves a local problem by PGS from `r0` (zero when `None`); `opts.stop_tol` bounds the
/// natural-map residual. A problem with other constraint blocks than Coulomb contacts is swept
/// block by block ([`super::block_pgs`]), with the same options.
pub fn solve_pgs(
    problem: &LocalProblem,
    solver: ProjectedGaussSeidel,
    r0: Option<Vec<f64>>,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    if !problem.constraints.coulomb_only() {
        let options = super::block_pgs::BlockPgsOptions {
            local_iterations: solver.local_iterations,
            omega: solver.omega,
            isotropic_cones: solver.isotropic_cones,
            closed_forms: solver.closed_forms,
            conjugate: solver.nncg.then_some(solver.nncg_restart),
        };
        return super::block_pgs::solve_block_pgs(problem, options, r0, opts);
    }
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
        if !(self.nncg_restart >= 1.0 && self.nncg_restart.is_finite()) {
            return Err(CoreError::BadOption(format!(
                "pgs option nncg_restart must be finite and at least 1, got {}",
                self.nncg_restart
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metrics::local_metrics;
    use crate::problem::Matrix;
    use crate::result::Status;

    #[test]
    fn single_sliding_contact_matches_closed_form() {
        // W = diag(1, 2, 2), q = (-1, 3, 0), mu = 0.5: r_n = 1, sliding with r_t = -0.5,
        // u_t = 3 - 2*0.5 = 2 > 0.
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap();
        let p = LocalProblem::coulomb(w, vec![-1.0, 3.0, 0.0], &[0.5]);
        let opts = SolveOptions {
            stop_tol: 1e-12,
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

    /// Two contacts (`mu` 0.3 and 0.8) of a diagonally dominant SPD `W` coupled between
    /// them: the driver tests' (PGS, ADMM) small problem with interaction.
    pub(crate) fn coupled_contacts() -> LocalProblem {
        #[rustfmt::skip]
        let w = [
            2.0, 0.1, 0.0, 0.5, 0.0, 0.0,
            0.1, 2.0, 0.0, 0.0, 0.3, 0.0,
            0.0, 0.0, 2.0, 0.0, 0.0, 0.3,
            0.5, 0.0, 0.0, 2.0, 0.1, 0.0,
            0.0, 0.3, 0.0, 0.1, 2.0, 0.0,
            0.0, 0.0, 0.3, 0.0, 0.0, 2.0,
        ];
        LocalProblem::coulomb(
            Matrix::from_row_major("W", 6, 6, &w).unwrap(),
            vec![-1.0, 0.4, -0.2, -0.5, -1.0, 0.3],
            &[0.3, 0.8],
        )
    }

    #[test]
    fn coupled_contacts_converge_to_small_residual() {
        let p = coupled_contacts();
        let opts = SolveOptions {
            stop_tol: 1e-12,
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
    fn closed_forms_are_fixed_points_of_the_local_map() {
        // W_aa with normal-tangent coupling (SPD), mu = 0.6.
        let w = Matrix3::new(2.0, 0.3, -0.2, 0.3, 1.5, 0.1, -0.2, 0.1, 1.2);
        let mu = 0.6;
        let with = NaturalMapLocal {
            iterations: 10,
            closed_forms: true,
        };
        let without = NaturalMapLocal {
            closed_forms: false,
            iterations: 100_000,
        };
        let prep = with.prepare(&w, mu);
        assert!(prep.w_inv.is_some());
        let fixed_point = |r: &Vector3<f64>, c: &Vector3<f64>| {
            let u = c + w * r;
            (cone::project(mu, r - prep.rho * cone::de_saxce(mu, u)) - r).amax()
        };
        // Opening: c_n >= 0 gives r = 0 with no iteration, and 0 is the map's fixed point.
        let c_open = Vector3::new(0.0, 2.0, -1.0);
        let open = with.solve(&prep, &w, &c_open, mu, &Vector3::new(1.0, 0.1, 0.0));
        let open = open.unwrap();
        assert_eq!(
            (open.r, open.mode, open.steps),
            (Vector3::zeros(), ContactMode::Opening, 0)
        );
        assert_eq!(fixed_point(&open.r, &c_open), 0.0);
        // Sticking: a small tangential push against a large normal one.
        let c_stick = Vector3::new(-1.0, 0.05, 0.02);
        let stick = with
            .solve(&prep, &w, &c_stick, mu, &Vector3::zeros())
            .unwrap();
        assert_eq!((stick.mode, stick.steps), (ContactMode::Sticking, 0));
        assert!((c_stick + w * stick.r).amax() < 1e-15);
        assert!(fixed_point(&stick.r, &c_stick) < 1e-15);
        // Both agree with the plain iterations run to convergence.
        for c in [c_open, c_stick] {
            let slow = without.solve(&prep, &w, &c, mu, &Vector3::zeros()).unwrap();
            let fast = with.solve(&prep, &w, &c, mu, &Vector3::zeros()).unwrap();
            assert!(
                (slow.r - fast.r).amax() < 1e-12,
                "{c}: {} vs {}",
                slow.r,
                fast.r
            );
        }
        // Slipping: the sticking impulse leaves the cone, so the iterations run.
        let c_slip = Vector3::new(-1.0, 2.0, 0.0);
        let slip = with
            .solve(&prep, &w, &c_slip, mu, &Vector3::zeros())
            .unwrap();
        assert!(slip.steps > 0 && slip.mode == ContactMode::Slipping);
        // A singular block has no inverse and keeps the iterations.
        let singular = Matrix3::new(1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0);
        assert!(with.prepare(&singular, mu).w_inv.is_none());
    }

    #[test]
    fn closed_forms_change_the_work_not_the_answer() {
        // A 40-contact chain: every contact couples with its neighbours through W.
        let nc = 40;
        let n = 3 * nc;
        let mut w = vec![0.0; n * n];
        for a in 0..nc {
            for i in 0..3 {
                w[(3 * a + i) * n + 3 * a + i] = 2.0 + 0.1 * i as f64;
            }
            w[(3 * a) * n + 3 * a + 1] = 0.2;
            w[(3 * a + 1) * n + 3 * a] = 0.2;
            if a + 1 < nc {
                for i in 0..3 {
                    w[(3 * a + i) * n + 3 * (a + 1) + i] = 0.6;
                    w[(3 * (a + 1) + i) * n + 3 * a + i] = 0.6;
                }
            }
        }
        let q = (0..n)
            .map(|k| match k % 3 {
                0 => -1.0 + 0.9 * ((k as f64) * 0.37).sin(),
                _ => 0.3 * ((k as f64) * 1.3).cos(),
            })
            .collect();
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            q,
            &(0..nc).map(|a| 0.2 + 0.02 * a as f64).collect::<Vec<f64>>(),
        );
        let opts = SolveOptions {
            stop_tol: 1e-12,
            max_iter: 5000,
            ..Default::default()
        };
        let run = |closed_forms| {
            let solver = ProjectedGaussSeidel {
                closed_forms,
                ..Default::default()
            };
            solve_pgs(&p, solver, None, &opts).unwrap()
        };
        let (fast, slow) = (run(true), run(false));
        assert_eq!(fast.status, Status::Converged);
        assert_eq!(slow.status, Status::Converged);
        let gap = fast.x.iter().zip(&slow.x).map(|(a, b)| (a - b).abs());
        assert!(gap.fold(0.0, f64::max) < 1e-10);
        // The modes of the answer are all present, and the closed forms save local steps.
        let modes: Vec<_> = (0..nc)
            .map(|a| ContactMode::of(p.mu()[a], &crate::drivers::sweep::block(&fast.x, a)))
            .collect();
        assert!(modes.contains(&ContactMode::Opening) && modes.contains(&ContactMode::Sticking));
        assert!(modes.contains(&ContactMode::Slipping));
        // Here 3269 against 6742 local steps in 22 sweeps each.
        let steps = |s: &Solution| s.counters["local_steps"];
        assert!(2 * steps(&fast) < steps(&slow) && fast.iterations <= slow.iterations);
    }

    #[test]
    fn budget_and_bad_start_are_reported() {
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0.9, 0., 0.9, 1., 0., 0., 0., 1.]).unwrap();
        let p = LocalProblem::coulomb(w, vec![-1.0, 3.0, 0.0], &[0.5]);
        let opts = SolveOptions {
            stop_tol: 1e-300,
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

    /// MuJoCo's ball pit (`data/mujoco/global/balls_in_box_n15_mu1.0_seed115_step0199_nc30.json`,
    /// thirty contacts among fifteen balls in a box): plain PGS ends 2 000 sweeps above the
    /// tolerance; with NNCG combining the same sweeps it converges within them (here 667 against
    /// 8 888), to an answer the ruler accepts.
    #[test]
    fn nncg_takes_the_contact_sweep_through_a_ball_pit_it_crawls_on() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/mujoco/global/balls_in_box_n15_mu1.0_seed115_step0199_nc30.json");
        let p = crate::io::read_local(&path).unwrap();
        assert!(p.constraints.coulomb_only());
        let opts = SolveOptions {
            stop_tol: 1e-8,
            max_iter: 2_000,
            ..Default::default()
        };
        let plain = solve_pgs(&p, ProjectedGaussSeidel::default(), None, &opts).unwrap();
        assert_eq!(plain.status, Status::MaxIterations);
        let nncg = ProjectedGaussSeidel {
            nncg: true,
            ..Default::default()
        };
        let s = solve_pgs(&p, nncg, None, &opts).unwrap();
        assert_eq!(s.status, Status::Converged, "{}", s.merit);
        assert!(s.iterations < 1_000, "{}", s.iterations);
        assert!(local_metrics(&p, &s.x).natural_map <= 1e-8);
    }

    /// An NNCG restart threshold below the paper's 1 (a restart on shrinking steps) or not
    /// finite is refused by name; 1 and above pass.
    #[test]
    fn an_nncg_restart_below_one_is_refused_by_name() {
        use crate::plugin::DriverPlugin;
        for bad in [0.5, f64::NAN, f64::INFINITY] {
            let pgs = ProjectedGaussSeidel {
                nncg_restart: bad,
                ..Default::default()
            };
            let err = pgs.check().unwrap_err().to_string();
            assert!(err.contains("nncg_restart"), "{err}");
        }
        for good in [1.0, 1.5] {
            let pgs = ProjectedGaussSeidel {
                nncg_restart: good,
                ..Default::default()
            };
            assert!(pgs.check().is_ok());
        }
    }
}
