//! Hwangbo, Lee and Hutter 2018's two multi-contact drivers on the shared sweep
//! ([`contactlab_core::drivers::sweep`]), as plugins on the contact problem itself:
//!
//! - [`BisectionSor`] (`bisection-sor`, Algorithm 2): nonlinear block SOR over contacts, each
//!   contact solved by a selectable single-contact method ([`LocalMethod`]: Algorithm 1's
//!   bisection by default), relaxed by `alpha` from 1 decaying as `alpha <- alpha_min +
//!   gamma (alpha - alpha_min)` (line 12; `gamma = 0.99`, `alpha_min = 0.7`, sec. V-C),
//!   stopped when the sum of the physical-constraint violations
//!   ([`contact_violation`](contactlab_core::drivers::sweep::contact_violation): cone and
//!   penetration, Signorini complementarity, the friction law of the local method) is at most
//!   the solve's `tol` (the paper's 1e-6, N s or m/s per term); the single-contact interval
//!   tolerance is `LOCAL_TOL_FACTOR * tol` (1e-10 at the paper's 1e-6) unless `local_tol` is
//!   given.
//! - [`HwangboPgs`] (`pgs-hwangbo`, sec. IV): the per-component projected Gauss-Seidel of
//!   eqs. 17-18 with `alpha = 0.6`, stopped when the sum of the impulse changes of a sweep plus
//!   the penetration velocities is at most the solve's `tol`.
//!
//! Both measure after the sweep at the returned impulses (one product `W r`), so a converged
//! status is true of the answer. Their iteration budget is their own `max_iterations`
//! (default 50,000, above the more than 20,000 sweeps the paper's PGS took at impacts, sec.
//! VI): it replaces the solve's `max_iter`, which is sized for Newton-type drivers; the time
//! limit still holds. With the default bisection the answers satisfy the maximum-dissipation
//! model (eq. 8): where a slipping contact's normal and tangential directions are coupled
//! (`W_nt != 0`), the shared Coulomb ruler (natural map) measures the gap between the two
//! models as well as the solver's error; `local = "coulomb"` solves Coulomb's law instead.
//!
//! **Every kind** (our extension of the paper's point contacts): both drivers walk the
//! blocks of a problem in row order in the same sweep (`contactlab_core::drivers::sweep::kinds`
//! gives the per-block solves and what the stop rules read on each kind). The bisection-SOR
//! solves an equality exactly given the others (`W_bb r_b = -c_b`, LU of the block; a singular
//! block by its minimum-norm least-squares answer), a limit, a friction loss and a frictionless contact
//! by the exact 1-D solve clamped into the set, all relaxed by Algorithm 2's `alpha`; it brings
//! an anisotropic condim 3 onto its 3-row, one-`mu` single-contact methods exactly by the
//! scaling `r_i = mu_i s_i` (`W -> D W D`, unit `mu`), and refuses condim 4 and 6 (its methods
//! search a conic section of a 2-D tangential plane) and a condim 3 with one zero coefficient
//! (the scaling is singular), by the block's index, before any sweep. The PGS takes every kind
//! ([`super::pgs`]: eq. 17's steps on each, Euclidean projection onto the friction ellipse).
//! A problem of Coulomb contacts only runs the contact sweep exactly as before.

use contactlab_core::drivers::sweep::kinds::first_refused;
use contactlab_core::drivers::sweep::{
    solve_sweep, BlockSweep, ContactSolver, FrictionModel, LocalError, LocalSolution, Relaxation,
    StopRule,
};
use contactlab_core::plugin::{Driver, DriverPlugin, Model, NeedsContactProblem};
use contactlab_core::{CoreError, LocalProblem, Solution, SolveOptions};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

use super::analytical::Analytical;
use super::bisection::Bisection;
use super::coulomb::CoulombExact;
use super::golden::GoldenSection;
use super::pgs::PgsStep;

/// The single-contact method of the bisection-SOR.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocalMethod {
    /// Algorithm 1 ([`Bisection`]).
    #[default]
    Bisection,
    /// The golden-section search ([`GoldenSection`]).
    GoldenSection,
    /// The quartic closed form ([`Analytical`]).
    Analytical,
    /// Coulomb's law solved exactly ([`CoulombExact`]; not the paper's model).
    Coulomb,
}

/// A single-contact method chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HwangboLocal {
    /// Algorithm 1.
    Bisection(Bisection),
    /// Golden section.
    GoldenSection(GoldenSection),
    /// The quartic.
    Analytical(Analytical),
    /// Coulomb's law.
    Coulomb(CoulombExact),
}

impl ContactSolver for HwangboLocal {
    type Prepared = ();

    const SYMMETRIC_BLOCK: bool = true;

    const OTHER_KINDS: bool = true;

    fn prepare(&self, _w_aa: &Matrix3<f64>, _mu: f64) {}

    fn solve(
        &self,
        p: &(),
        w: &Matrix3<f64>,
        c: &Vector3<f64>,
        mu: f64,
        r: &Vector3<f64>,
    ) -> Result<LocalSolution, LocalError> {
        match self {
            HwangboLocal::Bisection(m) => m.solve(p, w, c, mu, r),
            HwangboLocal::GoldenSection(m) => m.solve(p, w, c, mu, r),
            HwangboLocal::Analytical(m) => m.solve(p, w, c, mu, r),
            HwangboLocal::Coulomb(m) => m.solve(p, w, c, mu, r),
        }
    }

    fn model(&self) -> FrictionModel {
        match self {
            HwangboLocal::Coulomb(_) => FrictionModel::Coulomb,
            _ => FrictionModel::MaximumDissipation,
        }
    }
}

/// Algorithm 2: block SOR over contacts with a single-contact method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BisectionSor {
    /// The single-contact method.
    pub local: LocalMethod,
    /// The single-contact interval tolerance of the bisection and golden section (N s); unset,
    /// [`LOCAL_TOL_FACTOR`] times the solve's `tol`.
    pub local_tol: Option<f64>,
    /// Algorithm 1's first angle step (rad; also the golden section's).
    pub beta1: f64,
    /// Algorithm 1's step factor after a point out of sight or off the conic.
    pub beta2: f64,
    /// Algorithm 1's step growth while the slope keeps its sign (also the golden section's).
    pub beta3: f64,
    /// The relaxation of the first sweep.
    pub alpha: f64,
    /// `gamma` of Algorithm 2 line 12.
    pub alpha_decay: f64,
    /// `alpha_min` of Algorithm 2 line 12.
    pub alpha_min: f64,
    /// The sweep budget (replaces the solve's `max_iter`).
    pub max_iterations: u64,
}

impl Default for BisectionSor {
    fn default() -> Self {
        let b = Bisection::default();
        BisectionSor {
            local: LocalMethod::Bisection,
            local_tol: None,
            beta1: b.beta1,
            beta2: b.beta2,
            beta3: b.beta3,
            alpha: 1.0,
            alpha_decay: 0.99,
            alpha_min: 0.7,
            max_iterations: 50_000,
        }
    }
}

/// The single-contact tolerance as a share of the sweep's when `local_tol` is unset. An impulse
/// interval `d` leaves a velocity error of about `|W_aa| d` in the violation, and `|W_aa|` of a
/// light foot is in the hundreds: with the interval equal to the sweep's `tol` (the paper's
/// 1e-6 for Table I), the quadruped's drop stagnated above `tol` on 60% of its contact steps
/// and hit 50,000 sweeps on 3%; at `1e-4 tol` every step converged, in 12 sweeps on average.
pub const LOCAL_TOL_FACTOR: f64 = 1e-4;

impl BisectionSor {
    /// The single-contact solver these options choose, `tol` the solve's (the local
    /// tolerance is `LOCAL_TOL_FACTOR * tol` when `local_tol` is unset).
    pub fn local_solver(&self, tol: f64) -> HwangboLocal {
        let local_tol = self.local_tol.unwrap_or(LOCAL_TOL_FACTOR * tol);
        match self.local {
            LocalMethod::Bisection => HwangboLocal::Bisection(Bisection {
                tol: local_tol,
                beta1: self.beta1,
                beta2: self.beta2,
                beta3: self.beta3,
                ..Bisection::default()
            }),
            LocalMethod::GoldenSection => HwangboLocal::GoldenSection(GoldenSection {
                tol: local_tol,
                beta1: self.beta1,
                beta3: self.beta3,
                ..GoldenSection::default()
            }),
            LocalMethod::Analytical => HwangboLocal::Analytical(Analytical::default()),
            LocalMethod::Coulomb => HwangboLocal::Coulomb(CoulombExact::default()),
        }
    }

    /// The sweep for a solve of tolerance `tol`: the local solver, Algorithm 2's relaxation,
    /// the violation stop.
    pub fn sweep(&self, tol: f64) -> BlockSweep<HwangboLocal> {
        BlockSweep::new(
            self.local_solver(tol),
            Relaxation {
                start: self.alpha,
                decay: self.alpha_decay,
                min: self.alpha_min,
            },
            StopRule::Violation,
        )
    }
}

/// Runs `sweep` of the driver `name` on a validated `problem` with the driver's own iteration
/// budget, after refusing, by index and reason, a block its local solver does not take.
fn run<S: ContactSolver>(
    name: &str,
    problem: &LocalProblem,
    sweep: BlockSweep<S>,
    r0: Vec<f64>,
    max_iterations: u64,
    opts: &SolveOptions,
) -> Result<Solution, CoreError> {
    problem.validate()?;
    if let Some(why) = first_refused(sweep.solver(), problem) {
        return Err(CoreError::Unsupported(format!("{name} refuses {why}")));
    }
    let opts = SolveOptions {
        max_iter: max_iterations,
        ..opts.clone()
    };
    solve_sweep(problem, sweep, Some(r0), &opts)
}

impl Driver<LocalProblem> for BisectionSor {
    fn solve(
        &self,
        problem: &LocalProblem,
        r0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        self.check()?;
        run(
            Self::NAME,
            problem,
            self.sweep(opts.stop_tol),
            r0,
            self.max_iterations,
            opts,
        )
    }
}

fn in_open(name: &str, x: f64, lo: f64, hi: f64) -> Result<(), CoreError> {
    if x > lo && x < hi {
        Ok(())
    } else {
        Err(CoreError::BadOption(format!(
            "option {name} must be in ({lo}, {hi}), got {x}"
        )))
    }
}

impl DriverPlugin for BisectionSor {
    type Needs = NeedsContactProblem;
    const NAME: &'static str = "bisection-sor";
    /// Refuses, at the start of a solve and by the block's index, contacts of condim 4 and 6 and
    /// a condim 3 with one zero coefficient, since Algorithm 1 searches a conic section of a 2-D
    /// tangential plane (other contacts and every other kind are taken).
    const KINDS: &'static [&'static str] = contactlab_core::constraint::EVERY_KIND;
    const DESCRIPTION: &'static str = "Hwangbo et al. 2018 Algorithm 2: block SOR over contacts with \
         the per-contact bisection (or golden section, quartic, Coulomb), maximum-dissipation model; \
         contacts of condim 4 and 6 refused (Algorithm 1 searches a 2-D tangential plane)";

    fn check(&self) -> Result<(), CoreError> {
        in_open("bisection-sor: alpha", self.alpha, 0.0, 2.0)?;
        in_open("bisection-sor: alpha_min", self.alpha_min, 0.0, 2.0)?;
        if !(0.0..=1.0).contains(&self.alpha_decay) {
            return Err(CoreError::BadOption(format!(
                "option bisection-sor: alpha_decay must be in [0, 1], got {}",
                self.alpha_decay
            )));
        }
        if let Some(t) = self.local_tol {
            in_open("bisection-sor: local_tol", t, 0.0, f64::INFINITY)?;
        }
        in_open("bisection-sor: beta1", self.beta1, 0.0, f64::INFINITY)?;
        in_open("bisection-sor: beta2", self.beta2, 0.0, 1.0)?;
        if !(self.beta3 >= 1.0 && self.beta3.is_finite()) {
            return Err(CoreError::BadOption(format!(
                "option bisection-sor: beta3 must be at least 1, got {}",
                self.beta3
            )));
        }
        if self.max_iterations == 0 {
            return Err(CoreError::BadOption(
                "option bisection-sor: max_iterations must be at least 1".into(),
            ));
        }
        Ok(())
    }

    fn model(&self) -> Option<Model> {
        (self.local != LocalMethod::Coulomb).then_some(Model::MaximumDissipation)
    }
}

/// Sec. IV: projected Gauss-Seidel over contacts, one component after the other (eqs. 17-18).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HwangboPgs {
    /// Eq. 18's `alpha`.
    pub alpha: f64,
    /// The sweep budget (replaces the solve's `max_iter`).
    pub max_iterations: u64,
}

impl Default for HwangboPgs {
    fn default() -> Self {
        HwangboPgs {
            alpha: 0.6,
            max_iterations: 50_000,
        }
    }
}

impl HwangboPgs {
    /// The sweep: eqs. 17-18 per contact, no further relaxation, the impulse-change stop.
    pub fn sweep(&self) -> BlockSweep<PgsStep> {
        BlockSweep::new(
            PgsStep { alpha: self.alpha },
            Relaxation::constant(1.0),
            StopRule::ImpulseChange,
        )
    }
}

impl Driver<LocalProblem> for HwangboPgs {
    fn solve(
        &self,
        problem: &LocalProblem,
        r0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        self.check()?;
        run(
            Self::NAME,
            problem,
            self.sweep(),
            r0,
            self.max_iterations,
            opts,
        )
    }
}

impl DriverPlugin for HwangboPgs {
    type Needs = NeedsContactProblem;
    const NAME: &'static str = "pgs-hwangbo";
    const KINDS: &'static [&'static str] = contactlab_core::constraint::EVERY_KIND;
    const DESCRIPTION: &'static str = "Hwangbo et al. 2018 sec. IV: projected Gauss-Seidel per \
         force component (eqs. 17-18, alpha 0.6), stopped on impulse change plus penetration";

    fn check(&self) -> Result<(), CoreError> {
        in_open("pgs-hwangbo: alpha", self.alpha, 0.0, 2.0)?;
        if self.max_iterations == 0 {
            return Err(CoreError::BadOption(
                "option pgs-hwangbo: max_iterations must be at least 1".into(),
            ));
        }
        Ok(())
    }
}
