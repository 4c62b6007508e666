//! Formulations and drivers as plugins: the types a formulation or a driver implements so that
//! it can be paired with every counterpart whose needs it meets, at compile time (the notebook
//! DSL, `contactlab_lab::study`) and by name (the command line's registry,
//! `contactlab_lab::registry`).
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
//! A capability (a trait a formulation can provide and a driver can need: [`Residual`], the
//! contact problem itself, a [`ConicProgram`], ...) is one row of one table, the macro
//! `__for_each_capability!` in this file. The [`Need`] enum and its names, [`Need::ALL`], the
//! [`Views`] fields, the `Needs*` [`Capability`] markers, the traits of `probe` and what
//! [`views_of!`](crate::views_of) and [`provides_of!`](crate::provides_of) expand to are all
//! generated from it: adding a capability is adding a row.
//!
//! [`solve_formulation`] is the one solve flow both paths share: build, start, run the driver
//! under one deadline for the whole solve (start and restarts included), restart while the
//! formulation asks, and [`judge`] the impulses by the shared ruler.
//!
//! [`Residual`]: crate::Residual
//! [`NonSmoothResidual`]: crate::NonSmoothResidual
//! [`Merit`]: crate::Merit
//! [`ConicProgram`]: crate::ConicProgram

use std::collections::BTreeMap;
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::constraint::{COULOMB_ONLY, EVERY_KIND};
use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::generalized::StepProblem;
use crate::metrics::{metrics_for, metrics_of, LocalMetrics};
use crate::problem::LocalProblem;
use crate::result::{Solution, SolveOptions, Status, Trace};

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
    /// From the previous solution's warm state ([`Formulation::warm_state`]: one number per
    /// row, three per Coulomb contact, in this problem's frames, `NaN` where a row had none).
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

    /// The constraint kinds it takes ([`crate::constraint::LABELS`]): the Coulomb contact
    /// (three rows, one friction coefficient) unless it says more. [`solve_formulation`]
    /// refuses a problem with a block of another kind before building anything, and the
    /// registry lists a pair's kinds from it.
    const KINDS: &'static [&'static str] = COULOMB_ONLY;

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
    /// `default()` (the default start) for the rest. The default suits formulations whose
    /// unknowns are their warm state; it asks for the default start only where a contact has no
    /// warm value, since a start can cost more than the solve (Todorov's sticking start is a
    /// pseudo-inverse of the Delassus matrix).
    fn start_from_warm(
        &self,
        built: &Self::Built,
        _problem: &StepProblem,
        warm: &[f64],
        default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
    ) -> Result<Vec<f64>, CoreError> {
        fill_finite_with(warm, self.num_unknowns(built), default)
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

    /// One number per row (three per Coulomb contact), in the problem's frames, to warm-start
    /// the next step from (default: the impulses).
    fn warm_state(&self, built: &Self::Built, x: &[f64]) -> Vec<f64> {
        self.impulses(built, x)
    }

    /// A first phase from the start `x0` before the driver runs, within `time_limit`
    /// (the natural map's ADMM start); its time counts in the solve's. The default keeps `x0`.
    fn first_phase(
        &self,
        _built: &Self::Built,
        x0: Vec<f64>,
        _time_limit: Option<std::time::Duration>,
    ) -> Result<Vec<f64>, CoreError> {
        Ok(x0)
    }

    /// The driver's iteration budget for attempt `attempt` (0 for the first) out of the
    /// solve's `max_iter`; the default gives every attempt the whole budget.
    fn attempt_budget(&self, _built: &Self::Built, _attempt: u32, max_iter: u64) -> u64 {
        max_iter
    }

    /// Counters the formulation kept while it started or restarted (the natural map's ADMM
    /// start: `admm_start_iterations`), added to the solve's counters.
    fn counters(&self, _built: &Self::Built) -> Vec<(&'static str, u64)> {
        Vec::new()
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

/// [`fill_finite`] with the default made only when needed: a `warm` of `len` entries, every
/// one finite, is the start itself and `default` is not called.
pub fn fill_finite_with(
    warm: &[f64],
    len: usize,
    default: &dyn Fn() -> Result<Vec<f64>, CoreError>,
) -> Result<Vec<f64>, CoreError> {
    if warm.len() == len && warm.iter().all(|w| w.is_finite()) {
        return Ok(warm.to_vec());
    }
    Ok(fill_finite(warm, default()?))
}

/// Below this many contacts a problem is solved whole, in the storage it came in (dense for a
/// generalized problem), whatever the layout asks: finding, splitting and solving its islands
/// one by one costs more than it saves.
///
/// Measured on MuJoCo's exported steps (`reports/peers/`, `solvers.toml`: islands with
/// block-sparse `W` against the whole problem with a dense `W`, per problem): from 4 to 20
/// contacts the whole dense problem was the faster for PGS (islands at 0.13x to 0.89x its
/// speed), bisection-SOR (0.16x to 1.17x) and the natural map with LM (0.30x to 1.10x); from 30
/// contacts islands paid for all three (up to 3.6x, 12x and 10.6x), the one exception a step of
/// 48 contacts in 20 islands of at most 4 (PGS 0.84x). The fixed cost of an island (its
/// sub-problem, its own formulation build, one driver run) is what small problems cannot repay.
pub const WHOLE_BELOW_CONTACTS: usize = 24;

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
    /// Problems of fewer contacts are solved whole rather than island by island (the layout's
    /// [`whole_below`](crate::Layout::whole_below)); a spec's `whole_below` overrides it.
    const WHOLE_BELOW: usize = WHOLE_BELOW_CONTACTS;
    /// Why it refuses the kinds it does not take ([`Formulation::KINDS`]), one sentence
    /// (`contactlab list` and the lab's refusal show it); empty only when it takes every kind,
    /// which the registry's tests check.
    const REFUSES: &'static str = "";
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

    /// The constraint kinds it takes ([`crate::constraint::LABELS`]): every kind for a driver
    /// that sees only what the formulation built; a driver that walks the problem's rows itself
    /// (the contact sweeps, ADMM) names those it walks.
    const KINDS: &'static [&'static str] = EVERY_KIND;

    /// Why it refuses the kinds it does not take, one sentence (`contactlab list` and the
    /// refusal show it); empty only when [`DriverPlugin::KINDS`] is every kind.
    const REFUSES: &'static str = "";
}

/// The capability table: one row per capability, each a trait a formulation can provide and a
/// driver can need. Every per-capability list of `plugin` follows from it: the `Need` enum,
/// `Need::ALL` (the rows' order), `Need::trait_name`, `Need::explain`, the `Views` fields and
/// `Views::provides`, the `Needs*` `Capability` markers, the `probe` traits, and the expansions
/// of `views_of!` and `provides_of!`. Adding a capability is adding a row.
///
/// A row is the `Need` variant (its doc comment is the variant's) and:
/// - `field`: its `Views` field;
/// - `marker`: its `Capability` type;
/// - `object`: the trait object (or type) drivers solve, `Capability::Dyn`;
/// - `detect`: the trait a concrete type is detected by, and how a value of it becomes the
///   `object`;
/// - `probe`, `type_probe`: the `probe` traits (found, not found) and their method, by value
///   and by type;
/// - `trait_name`, `explain`: what `Need::trait_name` and `Need::explain` return;
/// - `noun`: the view in the field's and the marker's docs ("As ...", "Needs ...").
///
/// `__for_each_capability!([path::to::callback] args)` expands to
/// `path::to::callback! { (args) row row ... }`. It is exported (hidden) because the exported
/// `views_of!` and `provides_of!` expand it in the crate that calls them, where the type is
/// concrete; it is written out, not generated, so that `$crate::__for_each_capability!` also
/// resolves inside this crate.
#[doc(hidden)]
#[macro_export]
macro_rules! __for_each_capability {
    ([$($callback:tt)*] $($args:tt)*) => {
        $($callback)*! {
            ($($args)*)

            /// A least-squares residual.
            Residual {
                field: residual,
                marker: NeedsResidual,
                object: dyn $crate::residual::Residual + 'static,
                detect: $crate::residual::Residual, |v| v,
                probe: HasResidual, LacksResidual, residual_view,
                type_probe: HasResidualT, LacksResidualT, has_residual,
                trait_name: "Residual",
                explain: "a least-squares residual F(x)",
                noun: "a [`Residual`](crate::Residual)",
            }

            /// A residual with kinks and one-sided Jacobians.
            NonSmooth {
                field: nonsmooth,
                marker: NeedsNonSmooth,
                object: dyn $crate::residual::NonSmoothResidual + 'static,
                detect: $crate::residual::NonSmoothResidual, |v| v,
                probe: HasNonSmooth, LacksNonSmooth, nonsmooth_view,
                type_probe: HasNonSmoothT, LacksNonSmoothT, has_nonsmooth,
                trait_name: "NonSmoothResidual",
                explain: "a non-smooth residual (kinks along segments, one-sided Jacobians)",
                noun: "a [`NonSmoothResidual`](crate::NonSmoothResidual)",
            }

            /// A residual with a feasible set.
            Projected {
                field: projected,
                marker: NeedsProjected,
                object: dyn $crate::residual::ProjectedResidual + 'static,
                detect: $crate::residual::ProjectedResidual, |v| v,
                probe: HasProjected, LacksProjected, projected_view,
                type_probe: HasProjectedT, LacksProjectedT, has_projected,
                trait_name: "ProjectedResidual",
                explain: "a residual with a convex feasible set to project on",
                noun: "a [`ProjectedResidual`](crate::ProjectedResidual)",
            }

            /// A residual whose one-sided Jacobian is its B-derivative, with a square Newton
            /// system.
            BDerivative {
                field: b_derivative,
                marker: NeedsBDerivative,
                object: dyn $crate::residual::BDerivative + 'static,
                detect: $crate::residual::BDerivative, |v| v,
                probe: HasBDerivative, LacksBDerivative, b_derivative_view,
                type_probe: HasBDerivativeT, LacksBDerivativeT, has_b_derivative,
                trait_name: "BDerivative",
                explain: "a residual with a B-derivative and a square Newton system",
                noun: "a [`BDerivative`](crate::BDerivative)",
            }

            /// A convex merit.
            Merit {
                field: merit,
                marker: NeedsMerit,
                object: dyn $crate::merit::Merit + 'static,
                detect: $crate::merit::Merit, |v| v,
                probe: HasMerit, LacksMerit, merit_view,
                type_probe: HasMeritT, LacksMeritT, has_merit,
                trait_name: "Merit",
                explain: "a convex merit with gradient and Hessian",
                noun: "a [`Merit`](crate::Merit)",
            }

            /// The contact problem itself (per-contact solvers such as Gauss-Seidel).
            ContactProblem {
                field: contact,
                marker: NeedsContactProblem,
                object: $crate::problem::LocalProblem,
                detect: $crate::plugin::probe::AsContactProblem, |v| v.contact_problem(),
                probe: HasContact, LacksContact, contact_view,
                type_probe: HasContactT, LacksContactT, has_contact,
                trait_name: "LocalProblem",
                explain: "the contact problem itself (W, q, mu), solved contact by contact",
                noun: "the contact problem itself",
            }

            /// A conic program (interior-point solvers).
            Conic {
                field: conic,
                marker: NeedsConic,
                object: dyn $crate::conic_program::ConicProgram + 'static,
                detect: $crate::conic_program::ConicProgram, |v| v,
                probe: HasConic, LacksConic, conic_view,
                type_probe: HasConicT, LacksConicT, has_conic,
                trait_name: "ConicProgram",
                explain: "a conic program (quadratic cost, second-order cones) for an \
                          interior-point method",
                noun: "a [`ConicProgram`](crate::ConicProgram)",
            }
        }
    };
}

/// The items of this module that the capability table generates (the probe traits are
/// generated in `probe`).
macro_rules! capability_items {
    (() $(
        $(#[$doc:meta])*
        $need:ident {
            field: $field:ident,
            marker: $marker:ident,
            object: $object:ty,
            detect: $bound:path, |$v:ident| $conv:expr,
            probe: $has:ident, $lacks:ident, $view:ident,
            type_probe: $has_t:ident, $lacks_t:ident, $has_type:ident,
            trait_name: $trait_name:literal,
            explain: $explain:literal,
            noun: $noun:literal,
        }
    )*) => {
        /// One thing a driver can need from a formulation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Need {
            $($(#[$doc])* $need,)*
        }

        impl Need {
            /// Every need, in a fixed order (the table's).
            pub const ALL: [Need; [$(Need::$need),*].len()] = [$(Need::$need),*];

            /// The trait (or type) that provides it.
            pub fn trait_name(self) -> &'static str {
                match self {
                    $(Need::$need => $trait_name,)*
                }
            }

            /// What it is, for a reader of `contactlab list`.
            pub fn explain(self) -> &'static str {
                match self {
                    $(Need::$need => $explain,)*
                }
            }
        }

        /// What a built formulation can be viewed as: one trait object per [`Need`] it meets.
        #[derive(Clone, Copy, Default)]
        pub struct Views<'a> {
            $(
                #[doc = concat!("As ", $noun, ".")]
                pub $field: Option<&'a $object>,
            )*
        }

        impl Views<'_> {
            /// The needs these views meet, in [`Need::ALL`]'s order.
            pub fn provides(&self) -> Vec<Need> {
                [$(self.$field.is_some().then_some(Need::$need)),*]
                    .into_iter()
                    .flatten()
                    .collect()
            }
        }

        $(
            #[doc = concat!("Needs ", $noun, ".")]
            #[derive(Debug, Clone, Copy)]
            pub struct $marker;

            impl Capability for $marker {
                const NEED: Need = Need::$need;
                type Dyn = $object;
                fn pick<'a>(views: &Views<'a>) -> Option<&'a Self::Dyn> {
                    views.$field
                }
            }
        )*
    };
}

__for_each_capability!([capability_items]);

/// A need as a type: which trait object a driver takes and where it sits in [`Views`].
pub trait Capability: 'static {
    /// The need.
    const NEED: Need;
    /// The trait object (or type) the driver solves.
    type Dyn: ?Sized + 'static;
    /// The view, when the formulation provides it.
    fn pick<'a>(views: &Views<'a>) -> Option<&'a Self::Dyn>;
}

/// Autoref-based detection of the traits a concrete type implements (the macros
/// [`views_of!`](crate::views_of) and [`provides_of!`](crate::provides_of) expand to calls
/// of these methods; they must be expanded where the type is concrete). Four traits per
/// capability, generated from its row of the capability table.
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;

    use crate::problem::LocalProblem;

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

    /// The four probe traits of each row of the capability table.
    macro_rules! probe_traits {
        (() $(
            $(#[$doc:meta])*
            $need:ident {
                field: $field:ident,
                marker: $marker:ident,
                object: $object:ty,
                detect: $bound:path, |$v:ident| $conv:expr,
                probe: $has:ident, $lacks:ident, $view:ident,
                type_probe: $has_t:ident, $lacks_t:ident, $has_type:ident,
                trait_name: $trait_name:literal,
                explain: $explain:literal,
                noun: $noun:literal,
            }
        )*) => {$(
            #[doc = concat!("Found a `", $trait_name, "`: the specialised impl (matched first, on")]
            #[doc = "`&&Probe`)."]
            pub trait $has<'a> {
                /// The view.
                fn $view(&self) -> Option<&'a $object>;
            }
            impl<'a, T: $bound + 'static> $has<'a> for &Probe<'a, T> {
                fn $view(&self) -> Option<&'a $object> {
                    let $v = self.0;
                    Some($conv)
                }
            }
            #[doc = concat!("No `", $trait_name, "`: the fallback (matched after a deref).")]
            pub trait $lacks<'a> {
                /// No view.
                fn $view(&self) -> Option<&'a $object>;
            }
            impl<'a, T> $lacks<'a> for Probe<'a, T> {
                fn $view(&self) -> Option<&'a $object> {
                    None
                }
            }
            #[doc = concat!("Found a `", $trait_name, "`, by type.")]
            pub trait $has_t {
                /// Whether the type implements the trait.
                fn $has_type(&self) -> bool;
            }
            impl<T: $bound + 'static> $has_t for &TypeProbe<T> {
                fn $has_type(&self) -> bool {
                    true
                }
            }
            #[doc = concat!("No `", $trait_name, "`, by type.")]
            pub trait $lacks_t {
                /// Whether the type implements the trait.
                fn $has_type(&self) -> bool;
            }
            impl<T> $lacks_t for TypeProbe<T> {
                fn $has_type(&self) -> bool {
                    false
                }
            }
        )*};
    }

    __for_each_capability!([probe_traits]);
}

/// The [`Views`] of a value of a concrete type, detected from the traits it implements.
///
/// ```
/// use contactlab_core::plugin::Need;
/// use contactlab_core::{views_of, LocalProblem, Matrix};
/// let p = LocalProblem::coulomb(Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(), vec![-1.0, 0.0, 0.0], &[0.5]);
/// assert_eq!(views_of!(&p).provides(), vec![Need::ContactProblem]);
/// ```
#[macro_export]
macro_rules! views_of {
    ($value:expr) => {
        $crate::__for_each_capability!([$crate::__views_of] $value)
    };
}

/// The [`Need`]s a concrete type meets, detected from the traits it implements.
///
/// ```
/// use contactlab_core::plugin::{Coulomb, Formulation, Need};
/// use contactlab_core::provides_of;
/// let built = provides_of!(<Coulomb as Formulation>::Built);
/// assert_eq!(built, vec![Need::ContactProblem]);
/// ```
#[macro_export]
macro_rules! provides_of {
    ($t:ty) => {
        $crate::__for_each_capability!([$crate::__provides_of] $t)
    };
}

/// [`views_of!`](crate::views_of) on the capability table's rows: one probe per row.
#[doc(hidden)]
#[macro_export]
macro_rules! __views_of {
    (($value:expr) $(
        $(#[$doc:meta])*
        $need:ident {
            field: $field:ident,
            marker: $marker:ident,
            object: $object:ty,
            detect: $bound:path, |$v:ident| $conv:expr,
            probe: $has:ident, $lacks:ident, $view:ident,
            type_probe: $has_t:ident, $lacks_t:ident, $has_type:ident,
            trait_name: $trait_name:literal,
            explain: $explain:literal,
            noun: $noun:literal,
        }
    )*) => {{
        #[allow(unused_imports)]
        use $crate::plugin::probe::*;
        let value = $value;
        $crate::plugin::Views {
            $($field: (&&Probe(value)).$view(),)*
        }
    }};
}

/// [`provides_of!`](crate::provides_of) on the capability table's rows: one probe per row.
#[doc(hidden)]
#[macro_export]
macro_rules! __provides_of {
    (($t:ty) $(
        $(#[$doc:meta])*
        $need:ident {
            field: $field:ident,
            marker: $marker:ident,
            object: $object:ty,
            detect: $bound:path, |$v:ident| $conv:expr,
            probe: $has:ident, $lacks:ident, $view:ident,
            type_probe: $has_t:ident, $lacks_t:ident, $has_type:ident,
            trait_name: $trait_name:literal,
            explain: $explain:literal,
            noun: $noun:literal,
        }
    )*) => {{
        #[allow(unused_imports)]
        use $crate::plugin::probe::*;
        let p = TypeProbe::<$t>(::std::marker::PhantomData);
        [$((&&p).$has_type().then_some($crate::plugin::Need::$need)),*]
            .into_iter()
            .flatten()
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
    /// Seconds of the build, the start and every attempt: from the step problem to the answer
    /// (its impulses, warm state and velocities; not the diagnostics).
    pub seconds: f64,
    /// The part of `seconds` spent in the formulation's build (summed over islands): what a
    /// solver-against-solver comparison on one formulation subtracts, since every driver of
    /// that formulation pays it alike.
    pub build_seconds: f64,
    /// The part of `seconds` spent in the formulation's start (summed over islands): Todorov's
    /// sticking start is an eigendecomposition of the Delassus matrix, which no time limit
    /// interrupts.
    pub start_seconds: f64,
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
    if let Some(kind) = problem.first_refused(|b| F::KINDS.contains(&b.label())) {
        return Err(CoreError::Unsupported(format!(
            "the formulation does not take {kind}: it takes {} only (coulomb: three rows, one \
             friction coefficient)",
            F::KINDS.join(", ")
        )));
    }
    let deadline = Deadline::after(opts.time_limit);
    // The build is timed: for SAP it is more than a copy (A's pattern and the regularization
    // from the Delassus estimate), and the island flow, which builds per island, counts it
    // too, so `seconds` means the same with and without islands.
    let clock = Instant::now();
    let built = formulation.build(problem)?;
    let build_seconds = clock.elapsed().as_secs_f64();
    // A start can cost more than the build (Todorov's sticking start is an eigendecomposition
    // of the Delassus matrix): none once the time is gone.
    let started = Instant::now();
    let mut x0 = match init {
        _ if deadline.expired() => vec![0.0; formulation.num_unknowns(&built)],
        Init::Zero => vec![0.0; formulation.num_unknowns(&built)],
        Init::Default => formulation.default_start(&built, problem)?,
        Init::Warm(w) => {
            let d = || formulation.default_start(&built, problem);
            formulation.start_from_warm(&built, problem, w, &d)?
        }
    };
    if !deadline.expired() {
        x0 = formulation.first_phase(&built, x0, deadline.remaining())?;
    }
    let start_seconds = started.elapsed().as_secs_f64();
    let mut iterations = 0;
    let mut counters = BTreeMap::new();
    let mut attempt = 0u32;
    let solution = loop {
        let s = if deadline.expired() {
            timed_out_at(x0)
        } else {
            let o = SolveOptions {
                time_limit: deadline.remaining(),
                max_iter: formulation.attempt_budget(&built, attempt, opts.max_iter),
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
    for (k, v) in formulation.counters(&built) {
        *counters.entry(k.into()).or_insert(0) += v;
    }
    let x = solution.x.clone();
    let (r, warm, u) = (
        formulation.impulses(&built, &x),
        formulation.warm_state(&built, &x),
        formulation.velocities(&built, &x),
    );
    // The clock stops at the answer: the diagnostics are the formulation's report on it (for
    // SAP the primal pair's accuracy), which no engine computes in its step.
    let seconds = clock.elapsed().as_secs_f64();
    Ok(Outcome {
        r,
        warm,
        u,
        model: formulation.model(),
        diagnostics: formulation
            .diagnostics(&built, &x)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        x,
        solution,
        iterations,
        seconds,
        build_seconds,
        start_seconds,
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
    /// The part of `seconds` spent in the formulation's start (see [`Outcome::start_seconds`]).
    #[serde(default)]
    pub start_seconds: f64,
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

/// Applies the shared ruler to an outcome. `accept_tol` is the ruler's acceptance threshold,
/// one meaning for every pair: the reported status is `converged` only when the natural-map
/// residual of the impulses, `|r - P_K(r - û)| / (1 + |q|)` (dimensionless:
/// [`crate::metrics::LocalMetrics::natural_map`]), is at most `accept_tol`; a
/// driver that stopped `converged` by its own measure ([`SolveOptions::stop_tol`]) above it is
/// [`Status::Inaccurate`]. A run's `tol` sets both to the same number. The contact
/// velocities are the formulation's when it gives them, else `W r + q` of the problem.
pub fn judge(
    problem: &StepProblem,
    outcome: Outcome,
    accept_tol: f64,
) -> Result<LocalSolve, CoreError> {
    let u = match &outcome.u {
        Some(u) => u.clone(),
        None => problem.velocity(&outcome.r)?,
    };
    let q = problem.free_velocity()?;
    let metrics = match problem.local_if_formed() {
        Some(l) => metrics_for(&l.constraints, &q, &outcome.r, &u),
        None => match problem.generalized() {
            Some(g) if !g.coulomb_only() => metrics_for(&g.constraints(), &q, &outcome.r, &u),
            _ => metrics_of(&problem.mu(), &q, &outcome.r, &u),
        },
    };
    let solver_status = outcome.solution.status.clone();
    let status = if outcome.model == Model::Regularized {
        // A regularized model is judged by its own optimality (the driver's status); the
        // ruler's numbers say how far its answer is from rigid contact.
        solver_status.clone()
    } else if metrics.natural_map <= accept_tol {
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
        start_seconds: outcome.start_seconds,
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

    /// The problem itself takes every kind; the driver that walks it says which it takes
    /// (PGS and ADMM every kind, block by block; the contact sweeps Coulomb contacts only).
    const KINDS: &'static [&'static str] = EVERY_KIND;

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
    use std::collections::BTreeSet;

    use super::*;
    use crate::drivers::pgs::ProjectedGaussSeidel;
    use crate::problem::Matrix;
    use crate::residual::{ProjectedResidual, Residual};
    use faer::MatMut;

    #[test]
    fn a_full_warm_start_never_makes_the_default() {
        let calls = std::cell::Cell::new(0);
        let default = || {
            calls.set(calls.get() + 1);
            Ok(vec![7.0, 8.0, 9.0])
        };
        assert_eq!(
            fill_finite_with(&[1.0, 2.0, 3.0], 3, &default).unwrap(),
            [1.0, 2.0, 3.0]
        );
        assert_eq!(calls.get(), 0);
        assert_eq!(
            fill_finite_with(&[1.0, f64::NAN, 3.0], 3, &default).unwrap(),
            [1.0, 8.0, 3.0]
        );
        // A warm state of the wrong length is no start: the default, whole.
        assert_eq!(
            fill_finite_with(&[1.0, 2.0], 3, &default).unwrap(),
            [7.0, 8.0, 9.0]
        );
        assert_eq!(calls.get(), 2);
    }

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

    /// `NonSmooth` -> `non_smooth`: what `rename_all = "snake_case"` does.
    fn snake_case(name: &str) -> String {
        let mut s = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    s.push('_');
                }
                s.push(c.to_ascii_lowercase());
            } else {
                s.push(c);
            }
        }
        s
    }

    #[test]
    fn the_capability_table_is_consistent() {
        // `Need::ALL` holds every variant once, in declaration order: the variants' discriminants
        // are 0, 1, 2, ... (so none twice, none skipped) and the derived order follows.
        for (i, n) in Need::ALL.iter().enumerate() {
            assert_eq!(*n as usize, i, "{n:?} out of place in Need::ALL");
        }
        assert!(Need::ALL.windows(2).all(|w| w[0] < w[1]));
        // Names: distinct trait names, explanations, and serde's snake-case names.
        let trait_names: BTreeSet<_> = Need::ALL.iter().map(|n| n.trait_name()).collect();
        assert_eq!(trait_names.len(), Need::ALL.len());
        let explained: BTreeSet<_> = Need::ALL.iter().map(|n| n.explain()).collect();
        assert_eq!(explained.len(), Need::ALL.len());
        assert!(explained.iter().all(|e| !e.is_empty()));
        for n in Need::ALL {
            let json = serde_json::to_string(&n).unwrap();
            assert_eq!(json, format!("\"{}\"", snake_case(&format!("{n:?}"))));
            assert_eq!(serde_json::from_str::<Need>(&json).unwrap(), n);
        }
        // The names configs and JSON already use, in their order (a new row goes after them).
        assert_eq!(
            serde_json::to_value(&Need::ALL[..7]).unwrap(),
            serde_json::json!([
                "residual",
                "non_smooth",
                "projected",
                "b_derivative",
                "merit",
                "contact_problem",
                "conic"
            ])
        );
        // Nothing viewed, nothing provided.
        assert!(Views::default().provides().is_empty());
        // Detection by type and by value agree, and the markers pick what was detected.
        let p = sliding();
        assert_eq!(views_of!(&p).provides(), provides_of!(LocalProblem));
        assert_eq!(provides_of!(LocalProblem), vec![NeedsContactProblem::NEED]);
        assert!(std::ptr::eq(
            NeedsContactProblem::pick(&views_of!(&p)).unwrap(),
            &p
        ));
        assert_eq!(
            views_of!(&OnlyResidual).provides(),
            provides_of!(OnlyResidual)
        );
        assert_eq!(provides_of!(OnlyResidual), vec![NeedsResidual::NEED]);
        assert!(NeedsResidual::pick(&views_of!(&OnlyResidual)).is_some());
        assert!(NeedsMerit::pick(&views_of!(&OnlyResidual)).is_none());
        assert_eq!(views_of!(&Projected).provides(), provides_of!(Projected));
        assert_eq!(views_of!(&()).provides(), provides_of!(()));
        assert!(provides_of!(()).is_empty());
    }

    fn sliding() -> LocalProblem {
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap();
        LocalProblem::coulomb(w, vec![-1.0, 3.0, 0.0], &[0.5])
    }

    #[test]
    fn the_solve_flow_runs_a_driver_and_judges_by_the_shared_ruler() {
        let p = sliding();
        let opts = SolveOptions {
            stop_tol: 1e-12,
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
