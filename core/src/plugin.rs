//! Formulations and drivers as plugins: the types a formulation or a driver implements so that
//! it can be paired with every counterpart whose needs it meets, at compile time (the notebook
//! DSL, `contactlab_experiments::study`) and by name (the command line's registry,
//! `contactlab_experiments::registry`).
//!
//! - A [`Formulation`] turns a contact problem into the object drivers solve (its `Built`: a
//!   [`Residual`], a [`NonSmoothResidual`], a [`Merit`], or the [`LocalProblem`] itself), picks
//!   the start (Todorov's sticking start, say), maps the unknowns back to impulses, and may
//!   propose a restart when a driver gets stuck (Todorov's section V-A).
//! - A [`Driver<P>`] solves a `P`. Drivers are generic over the trait they need
//!   (`impl<R: NonSmoothResidual + ?Sized> Driver<R> for Todorov`), so `Driver<F::Built>` holds
//!   exactly when the pair can run, and the same impl serves a `dyn` trait object.
//! - For the registry, a formulation's capabilities are *detected* from its trait impls by
//!   [`views_of!`](crate::views_of) and [`provides_of!`](crate::provides_of) (no hand-kept
//!   list), and a driver names the one [`Capability`] it needs.
//!
//! [`solve_formulation`] is the one solve flow both paths share: build, start, run the driver
//! under one deadline for the whole solve (start and restarts included), restart while the
//! formulation asks, and [`judge`] the impulses by the shared ruler.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::conic_program::ConicProgram;
use crate::drivers::kit::Deadline;
use crate::metrics::{metrics_of, LocalMetrics};
use crate::{
    BDerivative, CoreError, LocalProblem, Merit, NonSmoothResidual, ProjectedResidual, Residual,
    Solution, SolveOptions, Status, StepProblem, Trace,
};

/// Solves a `P` from `x0` under `opts`.
pub trait Driver<P: ?Sized> {
    /// Runs the driver; `Err` only when it cannot run at all (a start of the wrong length, a
    /// problem it cannot take). Not converging is a [`Status`], not an error.
    fn solve(&self, problem: &P, x0: Vec<f64>, opts: &SolveOptions) -> Result<Solution, CoreError>;
}

/// The friction model a formulation's solutions satisfy, so that the shared Coulomb ruler's
/// verdict on them can be read right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Model {
    /// The rigid Coulomb cone: the shared ruler measures the formulation's own problem.
    CoulombCone,
    /// A polyhedral friction pyramid: where contacts slide, the Coulomb ruler measures the
    /// pyramid's error besides the solver's.
    FrictionPyramid,
    /// Compliant contact with regularized friction (Castro et al.'s SAP): the solver's own
    /// optimality is its convergence; the rigid Coulomb ruler measures how far the model's
    /// answer is from rigid contact, not whether the solver converged.
    Regularized,
    /// The maximum-dissipation model of Preclik (Hwangbo et al. 2018 eq. 8): where a slipping
    /// contact's normal and tangential directions are coupled, the Coulomb ruler measures the
    /// gap between the two models besides the solver's error.
    MaximumDissipation,
    /// Not declared (a formulation written in a notebook).
    Unspecified,
}

impl Model {
    /// The stable snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Model::CoulombCone => "coulomb_cone",
            Model::FrictionPyramid => "friction_pyramid",
            Model::Regularized => "regularized",
            Model::MaximumDissipation => "maximum_dissipation",
            Model::Unspecified => "unspecified",
        }
    }
}

/// How a solve's unknowns start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Init<'a> {
    /// The formulation's own start ([`Formulation::default_start`]).
    Default,
    /// All unknowns zero.
    Zero,
    /// From the previous solution's warm state ([`Formulation::warm_state`]: three numbers per
    /// contact in this problem's frames, `NaN` where a contact had none).
    Warm(&'a [f64]),
}

/// A formulation: what drivers solve, built from a step's contact problem (contact-space
/// formulations take its local form, [`StepProblem::local`]; SAP its generalized one).
pub trait Formulation {
    /// What drivers solve. Owns its data (it outlives no borrow of the problem).
    type Built;

    /// The friction model its solutions satisfy.
    fn model(&self) -> Model;

    /// Checks the option values; the error names the option.
    fn check(&self) -> Result<(), CoreError> {
        Ok(())
    }

    /// Builds the object drivers solve; the error names what is wrong with the problem.
    fn build(&self, problem: &StepProblem) -> Result<Self::Built, CoreError>;

    /// The number of unknowns of `built`.
    fn num_unknowns(&self, built: &Self::Built) -> usize;

    /// The formulation's own start (zero unless it has a better one).
    fn default_start(
        &self,
        built: &Self::Built,
        _problem: &StepProblem,
    ) -> Result<Vec<f64>, CoreError> {
        Ok(vec![0.0; self.num_unknowns(built)])
    }

    /// Unknowns from a warm state (three per contact, `NaN` where a contact had none), with
    /// `default` (the default start) for the rest. The default suits formulations whose
    /// unknowns are their warm state.
    fn start_from_warm(
        &self,
        _built: &Self::Built,
        _problem: &StepProblem,
        warm: &[f64],
        default: Vec<f64>,
    ) -> Result<Vec<f64>, CoreError> {
        Ok(fill_finite(warm, default))
    }

    /// The contact impulses `r` (normal first, three per contact) the unknowns `x` encode.
    fn impulses(&self, built: &Self::Built, x: &[f64]) -> Vec<f64>;

    /// Accuracy figures of the formulation's own model at the solution (SAP: the momentum and
    /// complementarity errors `e_m`, `e_mu`); each becomes a DataFrame column.
    fn diagnostics(&self, _built: &Self::Built, _x: &[f64]) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// The contact velocities `u = W r + q` the unknowns give, when the formulation knows them
    /// without `W` (SAP: `J v + b`); `None` lets the ruler compute them from the problem.
    fn velocities(&self, _built: &Self::Built, _x: &[f64]) -> Option<Vec<f64>> {
        None
    }

    /// Three numbers per contact, in the problem's frames, to warm-start the next step from
    /// (default: the impulses).
    fn warm_state(&self, built: &Self::Built, x: &[f64]) -> Vec<f64> {
        self.impulses(built, x)
    }

    /// After attempt `attempt` (0 for the first) ended at `x` with `status`: a new start to try
    /// (Todorov's perturbed restarts, section V-A), or `None` to stop.
    fn restart(
        &self,
        _built: &Self::Built,
        _x: &[f64],
        _status: &Status,
        _attempt: u32,
    ) -> Option<Vec<f64>> {
        None
    }
}

/// `warm` where finite and of the right length, `default` elsewhere.
pub fn fill_finite(warm: &[f64], default: Vec<f64>) -> Vec<f64> {
    if warm.len() != default.len() {
        return default;
    }
    warm.iter()
        .zip(default)
        .map(|(w, d)| if w.is_finite() { *w } else { d })
        .collect()
}

/// A formulation the registry can list and build by name: typed options (the struct itself,
/// deserialized with unknown fields refused) and a name.
pub trait FormulationPlugin:
    Formulation
    + Clone
    + std::fmt::Debug
    + Default
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// The name on the command line and in configs.
    const NAME: &'static str;
    /// One line: what it is and where it comes from.
    const DESCRIPTION: &'static str;
}

/// A driver the registry can list and run by name: typed options (the struct itself) and the
/// one [`Capability`] it needs. The registry's `add_driver` also requires
/// `Self: Driver<<Self::Needs as Capability>::Dyn>`, which ties the need to the impl.
pub trait DriverPlugin:
    Clone + std::fmt::Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// What it needs from a formulation.
    type Needs: Capability;
    /// The name on the command line and in configs.
    const NAME: &'static str;
    /// One line: the method and its source.
    const DESCRIPTION: &'static str;

    /// Checks the option values; the error names the option.
    fn check(&self) -> Result<(), CoreError> {
        Ok(())
    }

    /// The friction model the driver's answers satisfy when it imposes its own whatever the
    /// formulation's (Hwangbo's bisection-SOR: maximum dissipation); `None` for drivers that
    /// solve the formulation's model.
    fn model(&self) -> Option<Model> {
        None
    }
}

/// One thing a driver can need from a formulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// A least-squares residual.
    Residual,
    /// A residual with kinks and one-sided Jacobians.
    NonSmooth,
    /// A residual with a feasible set.
    Projected,
    /// A residual whose one-sided Jacobian is its B-derivative, with a square Newton system.
    BDerivative,
    /// A convex merit.
    Merit,
    /// The contact problem itself (per-contact solvers such as Gauss-Seidel).
    ContactProblem,
    /// A conic program (interior-point solvers).
    Conic,
}

impl Need {
    /// Every need, in a fixed order.
    pub const ALL: [Need; 7] = [
        Need::Residual,
        Need::NonSmooth,
        Need::Projected,
        Need::BDerivative,
        Need::Merit,
        Need::ContactProblem,
        Need::Conic,
    ];

    /// The trait (or type) that provides it.
    pub fn trait_name(self) -> &'static str {
        match self {
            Need::Residual => "Residual",
            Need::NonSmooth => "NonSmoothResidual",
            Need::Projected => "ProjectedResidual",
            Need::BDerivative => "BDerivative",
            Need::Merit => "Merit",
            Need::ContactProblem => "LocalProblem",
            Need::Conic => "ConicProgram",
        }
    }

    /// What it is, for a reader of `contactlab list`.
    pub fn explain(self) -> &'static str {
        match self {
            Need::Residual => "a least-squares residual F(x)",
            Need::NonSmooth => "a non-smooth residual (kinks along segments, one-sided Jacobians)",
            Need::Projected => "a residual with a convex feasible set to project on",
            Need::BDerivative => "a residual with a B-derivative and a square Newton system",
            Need::Merit => "a convex merit with gradient and Hessian",
            Need::ContactProblem => {
                "the contact problem itself (W, q, mu), solved contact by contact"
            }
            Need::Conic => {
                "a conic program (quadratic cost, second-order cones) for an interior-point method"
            }
        }
    }
}

/// What a built formulation can be viewed as: one trait object per [`Need`] it meets.
#[derive(Clone, Copy, Default)]
pub struct Views<'a> {
    /// As a [`Residual`].
    pub residual: Option<&'a (dyn Residual + 'static)>,
    /// As a [`NonSmoothResidual`].
    pub nonsmooth: Option<&'a (dyn NonSmoothResidual + 'static)>,
    /// As a [`ProjectedResidual`].
    pub projected: Option<&'a (dyn ProjectedResidual + 'static)>,
    /// As a [`BDerivative`].
    pub b_derivative: Option<&'a (dyn BDerivative + 'static)>,
    /// As a [`Merit`].
    pub merit: Option<&'a (dyn Merit + 'static)>,
    /// As the contact problem itself.
    pub contact: Option<&'a LocalProblem>,
    /// As a [`ConicProgram`].
    pub conic: Option<&'a (dyn ConicProgram + 'static)>,
}

impl Views<'_> {
    /// The needs these views meet.
    pub fn provides(&self) -> Vec<Need> {
        let have = [
            self.residual.is_some(),
            self.nonsmooth.is_some(),
            self.projected.is_some(),
            self.b_derivative.is_some(),
            self.merit.is_some(),
            self.contact.is_some(),
            self.conic.is_some(),
        ];
        Need::ALL
            .iter()
            .zip(have)
            .filter(|(_, h)| *h)
            .map(|(n, _)| *n)
            .collect()
    }
}

/// A need as a type: which trait object a driver takes and where it sits in [`Views`].
pub trait Capability: 'static {
    /// The need.
    const NEED: Need;
    /// The trait object (or type) the driver solves.
    type Dyn: ?Sized + 'static;
    /// The view, when the formulation provides it.
    fn pick<'a>(views: &Views<'a>) -> Option<&'a Self::Dyn>;
}

macro_rules! capability {
    ($(#[$doc:meta] $name:ident => $need:ident, $field:ident, $dyn:ty;)*) => {$(
        #[$doc]
        #[derive(Debug, Clone, Copy)]
        pub struct $name;
        impl Capability for $name {
            const NEED: Need = Need::$need;
            type Dyn = $dyn;
            fn pick<'a>(views: &Views<'a>) -> Option<&'a Self::Dyn> {
                views.$field
            }
        }
    )*};
}

capability! {
    /// Needs a [`Residual`].
    NeedsResidual => Residual, residual, dyn Residual;
    /// Needs a [`NonSmoothResidual`].
    NeedsNonSmooth => NonSmooth, nonsmooth, dyn NonSmoothResidual;
    /// Needs a [`ProjectedResidual`].
    NeedsProjected => Projected, projected, dyn ProjectedResidual;
    /// Needs a [`BDerivative`].
    NeedsBDerivative => BDerivative, b_derivative, dyn BDerivative;
    /// Needs a [`Merit`].
    NeedsMerit => Merit, merit, dyn Merit;
    /// Needs the contact problem itself.
    NeedsContactProblem => ContactProblem, contact, LocalProblem;
    /// Needs a [`ConicProgram`].
    NeedsConic => Conic, conic, dyn ConicProgram;
}

/// Autoref-based detection of the traits a concrete type implements (the macros
/// [`views_of!`](crate::views_of) and [`provides_of!`](crate::provides_of) expand to calls
/// of these methods; they must be expanded where the type is concrete).
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;

    use crate::conic_program::ConicProgram;
    use crate::{BDerivative, LocalProblem, Merit, NonSmoothResidual, ProjectedResidual, Residual};

    /// A value being probed.
    pub struct Probe<'a, T>(pub &'a T);

    /// A type being probed.
    pub struct TypeProbe<T>(pub PhantomData<T>);

    /// What counts as "the contact problem itself".
    pub trait AsContactProblem {
        /// The problem.
        fn contact_problem(&self) -> &LocalProblem;
    }

    impl AsContactProblem for LocalProblem {
        fn contact_problem(&self) -> &LocalProblem {
            self
        }
    }

    macro_rules! probe {
        ($has:ident, $lacks:ident, $has_t:ident, $lacks_t:ident, $method:ident, $tmethod:ident,
         $bound:path, $dyn:ty, |$v:ident| $conv:expr) => {
            /// Found: the specialised impl (matched first, on `&&Probe`).
            pub trait $has<'a> {
                /// The view.
                fn $method(&self) -> Option<&'a $dyn>;
            }
            impl<'a, T: $bound + 'static> $has<'a> for &Probe<'a, T> {
                fn $method(&self) -> Option<&'a $dyn> {
                    let $v = self.0;
                    Some($conv)
                }
            }
            /// Not found: the fallback (matched after a deref).
            pub trait $lacks<'a> {
                /// No view.
                fn $method(&self) -> Option<&'a $dyn>;
            }
            impl<'a, T> $lacks<'a> for Probe<'a, T> {
                fn $method(&self) -> Option<&'a $dyn> {
                    None
                }
            }
            /// Found, by type.
            pub trait $has_t {
                /// Whether the type implements the trait.
                fn $tmethod(&self) -> bool;
            }
            impl<T: $bound + 'static> $has_t for &TypeProbe<T> {
                fn $tmethod(&self) -> bool {
                    true
                }
            }
            /// Not found, by type.
            pub trait $lacks_t {
                /// Whether the type implements the trait.
                fn $tmethod(&self) -> bool;
            }
            impl<T> $lacks_t for TypeProbe<T> {
                fn $tmethod(&self) -> bool {
                    false
                }
            }
        };
    }

    probe!(
        HasResidual,
        LacksResidual,
        HasResidualT,
        LacksResidualT,
        residual_view,
        has_residual,
        Residual,
        (dyn Residual + 'static),
        |v| v
    );
    probe!(
        HasNonSmooth,
        LacksNonSmooth,
        HasNonSmoothT,
        LacksNonSmoothT,
        nonsmooth_view,
        has_nonsmooth,
        NonSmoothResidual,
        (dyn NonSmoothResidual + 'static),
        |v| v
    );
    probe!(
        HasProjected,
        LacksProjected,
        HasProjectedT,
        LacksProjectedT,
        projected_view,
        has_projected,
        ProjectedResidual,
        (dyn ProjectedResidual + 'static),
        |v| v
    );
    probe!(
        HasBDerivative,
        LacksBDerivative,
        HasBDerivativeT,
        LacksBDerivativeT,
        b_derivative_view,
        has_b_derivative,
        BDerivative,
        (dyn BDerivative + 'static),
        |v| v
    );
    probe!(
        HasMerit,
        LacksMerit,
        HasMeritT,
        LacksMeritT,
        merit_view,
        has_merit,
        Merit,
        (dyn Merit + 'static),
        |v| v
    );
    probe!(
        HasConic,
        LacksConic,
        HasConicT,
        LacksConicT,
        conic_view,
        has_conic,
        ConicProgram,
        (dyn ConicProgram + 'static),
        |v| v
    );
    probe!(
        HasContact,
        LacksContact,
        HasContactT,
        LacksContactT,
        contact_view,
        has_contact,
        AsContactProblem,
        LocalProblem,
        |v| v.contact_problem()
    );
}

/// The [`Views`] of a value of a concrete type, detected from the traits it implements.
///
/// ```
/// use contactlab_core::plugin::Need;
/// use contactlab_core::{views_of, LocalProblem, Matrix};
/// let p = LocalProblem { w: Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(), q: vec![-1.0, 0.0, 0.0], mu: vec![0.5] };
/// assert_eq!(views_of!(&p).provides(), vec![Need::ContactProblem]);
/// ```
#[macro_export]
macro_rules! views_of {
    ($value:expr) => {{
        #[allow(unused_imports)]
        use $crate::plugin::probe::*;
        let value = $value;
        $crate::plugin::Views {
            residual: (&&Probe(value)).residual_view(),
            nonsmooth: (&&Probe(value)).nonsmooth_view(),
            projected: (&&Probe(value)).projected_view(),
            b_derivative: (&&Probe(value)).b_derivative_view(),
            merit: (&&Probe(value)).merit_view(),
            contact: (&&Probe(value)).contact_view(),
            conic: (&&Probe(value)).conic_view(),
        }
    }};
}

/// The [`Need`]s a concrete type meets, detected from the traits it implements.
#[macro_export]
macro_rules! provides_of {
    ($t:ty) => {{
        #[allow(unused_imports)]
        use $crate::plugin::probe::*;
        let p = TypeProbe::<$t>(::std::marker::PhantomData);
        let have = [
            (&&p).has_residual(),
            (&&p).has_nonsmooth(),
            (&&p).has_projected(),
            (&&p).has_b_derivative(),
            (&&p).has_merit(),
            (&&p).has_contact(),
            (&&p).has_conic(),
        ];
        $crate::plugin::Need::ALL
            .iter()
            .zip(have)
            .filter(|(_, h)| *h)
            .map(|(n, _)| *n)
            .collect::<::std::vec::Vec<$crate::plugin::Need>>()
    }};
}

/// What the solve flow produced, before judging.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The last attempt's result, trace included.
    pub solution: Solution,
    /// The formulation's unknowns at the end.
    pub x: Vec<f64>,
    /// The impulses they encode.
    pub r: Vec<f64>,
    /// The warm state for the next step.
    pub warm: Vec<f64>,
    /// The contact velocities, when the formulation knows them.
    pub u: Option<Vec<f64>>,
    /// The formulation's model.
    pub model: Model,
    /// The formulation's own accuracy figures.
    pub diagnostics: BTreeMap<String, f64>,
    /// Iterations over all attempts.
    pub iterations: u64,
    /// Seconds of the build, the start and every attempt: from the step problem to the answer.
    pub seconds: f64,
    /// The part of `seconds` spent in the formulation's build (summed over islands): what a
    /// solver-against-solver comparison on one formulation subtracts, since every driver of
    /// that formulation pays it alike.
    pub build_seconds: f64,
    /// The drivers' counters summed over attempts, plus the formulation's (`restarts`).
    pub counters: BTreeMap<String, u64>,
}

/// The one solve flow: builds `formulation` on `problem`, starts as `init` says, runs `run`
/// (a driver) under one deadline for the whole solve, and restarts while the formulation asks
/// and time remains. A solve whose time is gone before the driver starts ends with
/// [`Status::Timeout`] at the start.
pub fn solve_formulation<F: Formulation>(
    formulation: &F,
    problem: &StepProblem,
    init: Init<'_>,
    opts: &SolveOptions,
    mut run: impl FnMut(&F::Built, Vec<f64>, &SolveOptions) -> Result<Solution, CoreError>,
) -> Result<Outcome, CoreError> {
    formulation.check()?;
    let deadline = Deadline::after(opts.time_limit);
    // The build is timed: for SAP it is more than a copy (A's pattern and the regularization
    // from the Delassus estimate), and the island flow, which builds per island, counts it
    // too, so `seconds` means the same with and without islands.
    let clock = Instant::now();
    let built = formulation.build(problem)?;
    let build_seconds = clock.elapsed().as_secs_f64();
    let mut x0 = match init {
        Init::Zero => vec![0.0; formulation.num_unknowns(&built)],
        Init::Default => formulation.default_start(&built, problem)?,
        Init::Warm(w) => {
            let d = formulation.default_start(&built, problem)?;
            formulation.start_from_warm(&built, problem, w, d)?
        }
    };
    let mut iterations = 0;
    let mut counters = BTreeMap::new();
    let mut attempt = 0u32;
    let solution = loop {
        let s = if deadline.expired() {
            timed_out_at(x0)
        } else {
            let o = SolveOptions {
                time_limit: deadline.remaining(),
                ..opts.clone()
            };
            run(&built, x0, &o)?
        };
        iterations += s.iterations;
        for (k, v) in &s.counters {
            *counters.entry(k.clone()).or_insert(0) += v;
        }
        match formulation.restart(&built, &s.x, &s.status, attempt) {
            Some(x) if !deadline.expired() => {
                attempt += 1;
                x0 = x;
            }
            _ => break s,
        }
    };
    if attempt > 0 {
        counters.insert("restarts".into(), u64::from(attempt));
    }
    let x = solution.x.clone();
    Ok(Outcome {
        r: formulation.impulses(&built, &x),
        warm: formulation.warm_state(&built, &x),
        u: formulation.velocities(&built, &x),
        model: formulation.model(),
        diagnostics: formulation
            .diagnostics(&built, &x)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        x,
        solution,
        iterations,
        seconds: clock.elapsed().as_secs_f64(),
        build_seconds,
        counters,
    })
}

/// A solve that never started: the time limit ran out first.
pub(crate) fn timed_out_at(x: Vec<f64>) -> Solution {
    Solution {
        x,
        status: Status::Timeout,
        iterations: 0,
        merit: f64::NAN,
        seconds: 0.0,
        counters: BTreeMap::new(),
        trace: Trace::default(),
    }
}

/// One solve of a local problem, judged by the shared metrics.
#[derive(Debug, Clone, Serialize)]
pub struct LocalSolve {
    /// `converged` only when the natural-map residual is at most the tolerance; otherwise
    /// why the solver stopped (`inaccurate` when its own test passed but the residual did not).
    pub status: Status,
    /// The status the driver itself reported (of the last attempt when restarting).
    pub solver_status: Status,
    /// Iterations the driver performed, over all attempts.
    pub iterations: u64,
    /// Wall-clock seconds of the solve: the formulation's build, the start and all attempts.
    pub seconds: f64,
    /// The part of `seconds` spent in the formulation's build.
    pub build_seconds: f64,
    /// The shared metrics of the returned impulses.
    pub metrics: LocalMetrics,
    /// The formulation's model.
    pub model: Model,
    /// The formulation's own accuracy figures (SAP: `e_m`, `e_mu`).
    pub diagnostics: BTreeMap<String, f64>,
    /// The drivers' and the formulation's counters (`newton_accepted`, `pgs_sweeps`,
    /// `restarts`, argmin's evaluation counts, ...).
    pub counters: BTreeMap<String, u64>,
    /// The formulation's unknowns.
    pub x: Vec<f64>,
    /// Three numbers per contact to warm-start the next solve from.
    pub warm: Vec<f64>,
    /// Impulses `r`, normal first per contact.
    pub r: Vec<f64>,
    /// Contact velocities `u = W r + q`, normal first per contact.
    pub u: Vec<f64>,
    /// The driver's result of the last attempt, trace included.
    #[serde(skip)]
    pub solution: Solution,
}

impl LocalSolve {
    /// A counter's value (0 when the driver does not report it).
    pub fn counter(&self, name: &str) -> u64 {
        self.counters.get(name).copied().unwrap_or(0)
    }
}

/// Applies the shared ruler to an outcome: the reported status is `converged` only when the
/// natural-map residual of its impulses is at most `tol`. The contact velocities are the
/// formulation's when it gives them, else `W r + q` of the problem.
pub fn judge(problem: &StepProblem, outcome: Outcome, tol: f64) -> Result<LocalSolve, CoreError> {
    let u = match &outcome.u {
        Some(u) => u.clone(),
        None => problem.velocity(&outcome.r)?,
    };
    let metrics = metrics_of(&problem.mu(), &problem.free_velocity()?, &outcome.r, &u);
    let solver_status = outcome.solution.status.clone();
    let status = if outcome.model == Model::Regularized {
        // A regularized model is judged by its own optimality (the driver's status); the
        // ruler's numbers say how far its answer is from rigid contact.
        solver_status.clone()
    } else if metrics.natural_map <= tol {
        Status::Converged
    } else if solver_status == Status::Converged {
        Status::Inaccurate
    } else {
        solver_status.clone()
    };
    Ok(LocalSolve {
        status,
        solver_status,
        iterations: outcome.iterations,
        seconds: outcome.seconds,
        build_seconds: outcome.build_seconds,
        metrics,
        counters: outcome.counters,
        model: outcome.model,
        diagnostics: outcome.diagnostics,
        u,
        x: outcome.x,
        warm: outcome.warm,
        r: outcome.r,
        solution: outcome.solution,
    })
}

/// The local Coulomb problem itself, for drivers that solve it contact by contact (projected
/// Gauss-Seidel; Hwangbo's per-contact solvers). Its unknowns are the impulses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coulomb {}

impl Formulation for Coulomb {
    type Built = LocalProblem;

    fn model(&self) -> Model {
        Model::CoulombCone
    }

    fn build(&self, problem: &StepProblem) -> Result<LocalProblem, CoreError> {
        let p = problem.local()?;
        p.validate()?;
        Ok(p.clone())
    }

    fn num_unknowns(&self, built: &LocalProblem) -> usize {
        built.q.len()
    }

    fn impulses(&self, _built: &LocalProblem, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

impl FormulationPlugin for Coulomb {
    const NAME: &'static str = "coulomb";
    const DESCRIPTION: &'static str =
        "the local Coulomb problem itself, solved contact by contact (no residual)";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drivers::pgs::ProjectedGaussSeidel;
    use crate::{Matrix, ProjectedResidual};
    use faer::MatMut;

    struct OnlyResidual;
    impl Residual for OnlyResidual {
        fn num_unknowns(&self) -> usize {
            1
        }
        fn num_residuals(&self) -> usize {
            1
        }
        fn residual(&self, x: &[f64], out: &mut [f64]) {
            out[0] = x[0];
        }
        fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
            out[(0, 0)] = 1.0;
        }
    }
    struct Projected;
    impl Residual for Projected {
        fn num_unknowns(&self) -> usize {
            1
        }
        fn num_residuals(&self) -> usize {
            1
        }
        fn residual(&self, x: &[f64], out: &mut [f64]) {
            out[0] = x[0];
        }
        fn jacobian(&self, _x: &[f64], mut out: MatMut<'_, f64>) {
            out[(0, 0)] = 1.0;
        }
    }
    impl ProjectedResidual for Projected {
        fn project(&self, x: &mut [f64]) {
            x[0] = x[0].max(0.0);
        }
    }

    #[test]
    fn capabilities_are_detected_from_trait_impls() {
        assert_eq!(provides_of!(OnlyResidual), vec![Need::Residual]);
        assert_eq!(
            provides_of!(Projected),
            vec![Need::Residual, Need::Projected]
        );
        assert_eq!(provides_of!(LocalProblem), vec![Need::ContactProblem]);
        let v = views_of!(&Projected);
        assert_eq!(v.provides(), vec![Need::Residual, Need::Projected]);
        let mut x = [-1.0];
        v.projected.unwrap().project(&mut x);
        assert_eq!(x, [0.0]);
    }

    fn sliding() -> LocalProblem {
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap();
        LocalProblem {
            w,
            q: vec![-1.0, 3.0, 0.0],
            mu: vec![0.5],
        }
    }

    #[test]
    fn the_solve_flow_runs_a_driver_and_judges_by_the_shared_ruler() {
        let p = sliding();
        let opts = SolveOptions {
            tol: 1e-12,
            max_iter: 50,
            ..Default::default()
        };
        let pgs = ProjectedGaussSeidel::default();
        let sp = StepProblem::from(p.clone());
        let out = solve_formulation(&Coulomb {}, &sp, Init::Zero, &opts, |b, x0, o| {
            pgs.solve(b, x0, o)
        })
        .unwrap();
        let s = judge(&sp, out, 1e-10).unwrap();
        assert_eq!(s.status, Status::Converged);
        assert!((s.r[0] - 1.0).abs() < 1e-10 && (s.r[1] + 0.5).abs() < 1e-10);
        assert_eq!(s.warm, s.r);
        assert!((s.u[1] - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_solve_without_time_left_times_out_at_its_start() {
        let p = sliding();
        let opts = SolveOptions {
            time_limit: Some(std::time::Duration::ZERO),
            ..Default::default()
        };
        let out = solve_formulation(&Coulomb {}, &p.into(), Init::Zero, &opts, |_, _, _| {
            panic!("the driver must not start")
        })
        .unwrap();
        assert_eq!(out.solution.status, Status::Timeout);
        assert_eq!(out.x, vec![0.0; 3]);
    }

    #[test]
    fn warm_values_fill_only_where_finite() {
        assert_eq!(
            fill_finite(&[1.0, f64::NAN, 3.0], vec![0.0; 3]),
            vec![1.0, 0.0, 3.0]
        );
        assert_eq!(fill_finite(&[1.0], vec![0.0; 3]), vec![0.0; 3]);
    }
}
