//! Formulations and drivers by name: the runtime registry `contactlab solve`, `contactlab list`
//! and the experiment runner swap entries of.
//!
//! A formulation or a driver is a type in its own module plus one line in
//! [`Registry::standard`]. Everything else follows from that registration:
//!
//! - the name lists and descriptions ([`Registry::formulations`], [`Registry::drivers`]);
//! - which pairs run: a driver names the one [`Need`] it has ([`DriverPlugin::Needs`]), and a
//!   formulation's capabilities are *detected* from the traits its built object implements
//!   ([`register_formulation!`](crate::register_formulation) expands `views_of!` and `provides_of!` where the type is
//!   concrete); [`Registry::incompatibility`] says why a pair cannot run;
//! - the options: each plugin's own struct, deserialized with unknown fields refused, so an
//!   option that does not apply is an error naming it and the options that do;
//! - the counters: each driver reports its own into [`LocalSolve::counters`], which the runner
//!   turns into DataFrame columns.
//!
//! No linker tricks: the registry is a value built in one place, so a notebook or a test adds
//! its own plugins to a copy of it and hands it to a [`Lab`](crate::Lab), which passes it to
//! everything that solves: a config's run, the matrix, the config check, dumps
//! (`experiments/tests/end_to_end/toy_plugin.rs` runs a toy formulation and driver through all
//! of them).
//!
//! The specs a registry resolves ([`SolverSpec`], [`PluginChoice`], [`Start`]) are plain data
//! of the `contactlab-runs` crate, so that configs and reports can name solvers without being
//! able to run them.

use std::time::Duration;

use contactlab_core::constraint::LABELS;
use contactlab_core::plugin::{
    judge, solve_formulation, Capability, Driver, DriverPlugin, FormulationPlugin, Init, Model,
    Need, Outcome, Views,
};
use contactlab_core::{
    solve_by_island, CoreError, Layout, Solution, SolveOptions, StepProblem, Storage,
};
use contactlab_formulations::{
    BisectionSor, ErlebenNewton, HwangboPgs, ImplicitNcpFormulation, MinMapFormulation,
    MlcpFbFormulation, MncpFormulation, NaturalMapFormulation, SapFormulation, Todorov,
};
pub use contactlab_runs::spec::{PluginChoice, SolverSpec, Start};
use serde_json::{Map, Value};

pub use contactlab_core::plugin::{Coulomb, LocalSolve};

/// Errors of name lookup, option parsing and solving.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No formulation of that name.
    #[error("unknown formulation `{0}`; available: {1}")]
    UnknownFormulation(String, String),
    /// No optimizer of that name.
    #[error("unknown optimizer `{0}`; available: {1}")]
    UnknownOptimizer(String, String),
    /// The formulation cannot be run by that optimizer.
    #[error("formulation `{formulation}` cannot be run by optimizer `{optimizer}`: {reason}; it runs with: {available}")]
    Incompatible {
        /// The formulation asked for.
        formulation: String,
        /// The optimizer asked for.
        optimizer: String,
        /// Why not.
        reason: String,
        /// The optimizers it runs with.
        available: String,
    },
    /// An option value that is out of range or does not apply.
    #[error("{0}")]
    BadOption(String),
    /// The solver failed to run at all (as opposed to running and not converging).
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// A built formulation with its options, behind a trait object.
pub trait ErasedFormulation: Send + Sync {
    /// Its friction model.
    fn model(&self) -> Model;
    /// Its options, as they were parsed (defaults filled in).
    fn options(&self) -> Value;
    /// Below this many contacts its problems are solved whole ([`FormulationPlugin::WHOLE_BELOW`]).
    fn whole_below(&self) -> usize;
    /// The solve flow ([`solve_formulation`]) with `driver`.
    fn solve(
        &self,
        problem: &StepProblem,
        init: Init<'_>,
        driver: &dyn ErasedDriver,
        opts: &SolveOptions,
    ) -> Result<Outcome, CoreError>;
}

/// A driver with its options, behind a trait object.
pub trait ErasedDriver: Send + Sync {
    /// What it needs from a formulation.
    fn needs(&self) -> Need;
    /// Its options, as they were parsed (defaults filled in).
    fn options(&self) -> Value;
    /// Runs on the view it needs.
    fn run(
        &self,
        views: &Views<'_>,
        x0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError>;
    /// The friction law its answers satisfy when it imposes its own, at its options
    /// (bisection-SOR's local method), whatever the formulation's.
    fn model(&self) -> Option<Model>;
}

/// The detected views of a formulation's built object.
pub type ViewsFn<B> = for<'a> fn(&'a B) -> Views<'a>;

struct TypedFormulation<F: FormulationPlugin> {
    formulation: F,
    views: ViewsFn<F::Built>,
}

impl<F: FormulationPlugin> ErasedFormulation for TypedFormulation<F> {
    fn model(&self) -> Model {
        self.formulation.model()
    }

    fn options(&self) -> Value {
        serde_json::to_value(&self.formulation).unwrap_or(Value::Null)
    }

    fn whole_below(&self) -> usize {
        F::WHOLE_BELOW
    }

    fn solve(
        &self,
        problem: &StepProblem,
        init: Init<'_>,
        driver: &dyn ErasedDriver,
        opts: &SolveOptions,
    ) -> Result<Outcome, CoreError> {
        solve_formulation(&self.formulation, problem, init, opts, |built, x0, o| {
            driver.run(&(self.views)(built), x0, o)
        })
    }
}

struct TypedDriver<D>(D);

impl<D> ErasedDriver for TypedDriver<D>
where
    D: DriverPlugin + Driver<<D::Needs as Capability>::Dyn>,
{
    fn needs(&self) -> Need {
        D::Needs::NEED
    }

    fn options(&self) -> Value {
        serde_json::to_value(&self.0).unwrap_or(Value::Null)
    }

    fn run(
        &self,
        views: &Views<'_>,
        x0: Vec<f64>,
        opts: &SolveOptions,
    ) -> Result<Solution, CoreError> {
        let target = D::Needs::pick(views).ok_or_else(|| {
            CoreError::Unsupported(format!(
                "optimizer `{}` needs a {}, which this formulation does not provide",
                D::NAME,
                D::Needs::NEED.trait_name()
            ))
        })?;
        self.0.solve(target, x0, opts)
    }

    fn model(&self) -> Option<Model> {
        self.0.model()
    }
}

/// Parses a plugin's options from a JSON object; the error names the plugin and the field.
fn parse_options<T: serde::de::DeserializeOwned>(
    kind: &str,
    name: &str,
    options: &Map<String, Value>,
) -> Result<T, RegistryError> {
    serde_path_to_error::deserialize(Value::Object(options.clone())).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        RegistryError::BadOption(if path == "." {
            format!("{kind} `{name}`: {inner}")
        } else {
            format!("{kind} `{name}`: option `{path}`: {inner}")
        })
    })
}

type MakeFormulation = Box<
    dyn Fn(&Map<String, Value>) -> Result<Box<dyn ErasedFormulation>, RegistryError> + Send + Sync,
>;
type MakeDriver =
    Box<dyn Fn(&Map<String, Value>) -> Result<Box<dyn ErasedDriver>, RegistryError> + Send + Sync>;

/// A registered formulation.
pub struct FormulationEntry {
    /// The name on the command line and in configs.
    pub name: &'static str,
    /// One line: what it is and where it comes from.
    pub description: &'static str,
    /// The needs its built object meets (detected from its trait impls).
    pub provides: Vec<Need>,
    /// Its friction model with default options.
    pub model: Model,
    /// Its options with their default values.
    pub defaults: Value,
    /// The constraint kinds it takes ([`Formulation::KINDS`](contactlab_core::Formulation::KINDS)).
    pub kinds: &'static [&'static str],
    /// Why it refuses the others ([`Formulation::REFUSES`](contactlab_core::Formulation::REFUSES)).
    pub refuses: &'static str,
    make: MakeFormulation,
}

/// A registered driver.
pub struct DriverEntry {
    /// The name on the command line and in configs.
    pub name: &'static str,
    /// One line: the method and its source.
    pub description: &'static str,
    /// What it needs from a formulation.
    pub needs: Need,
    /// The friction model it imposes with default options, if its own
    /// ([`DriverPlugin::model`]).
    pub model: Option<Model>,
    /// Its options with their default values.
    pub defaults: Value,
    /// The constraint kinds it takes ([`DriverPlugin::KINDS`]).
    pub kinds: &'static [&'static str],
    /// Why it refuses the others ([`DriverPlugin::REFUSES`]).
    pub refuses: &'static str,
    make: MakeDriver,
}

/// The formulations and drivers available by name.
#[derive(Default)]
pub struct Registry {
    formulations: Vec<FormulationEntry>,
    drivers: Vec<DriverEntry>,
}

/// Registers a formulation type: its capabilities are detected here, where the type is
/// concrete. `register_formulation!(registry, MinMapFormulation)`.
#[macro_export]
macro_rules! register_formulation {
    ($registry:expr, $t:ty) => {{
        fn views<'a>(
            built: &'a <$t as $crate::contactlab_core::plugin::Formulation>::Built,
        ) -> $crate::contactlab_core::plugin::Views<'a> {
            $crate::contactlab_core::views_of!(built)
        }
        let provides = $crate::contactlab_core::provides_of!(
            <$t as $crate::contactlab_core::plugin::Formulation>::Built
        );
        $registry.add_formulation_with::<$t>(provides, views)
    }};
}

impl Registry {
    /// A registry with nothing in it.
    pub fn empty() -> Registry {
        Registry::default()
    }

    /// Every formulation and driver of the project: the one place they are registered.
    pub fn standard() -> Registry {
        let mut r = Registry::empty();
        register_formulation!(r, Coulomb);
        register_formulation!(r, ImplicitNcpFormulation);
        register_formulation!(r, MinMapFormulation);
        register_formulation!(r, MlcpFbFormulation);
        register_formulation!(r, MncpFormulation);
        register_formulation!(r, NaturalMapFormulation);
        register_formulation!(r, SapFormulation);
        r.add_driver::<contactlab_core::drivers::pgs::ProjectedGaussSeidel>()
            .add_driver::<BisectionSor>()
            .add_driver::<HwangboPgs>()
            .add_driver::<contactlab_core::drivers::Admm>()
            .add_driver::<ErlebenNewton>()
            .add_driver::<Todorov>()
            .add_driver::<contactlab_core::drivers::GaussNewtonLs>()
            .add_driver::<contactlab_core::drivers::LevenbergMarquardt>()
            .add_driver::<contactlab_core::drivers::ProjectedLevenbergMarquardt>()
            .add_driver::<contactlab_core::drivers::Dogleg>()
            .add_driver::<contactlab_core::drivers::TrustRegionSteihaug>()
            .add_driver::<contactlab_core::drivers::NewtonMerit>()
            .add_driver::<contactlab_core::drivers::Lbfgs>()
            .add_driver::<contactlab_core::drivers::Clarabel>();
        r
    }

    /// Adds a formulation whose capabilities were detected by [`register_formulation!`] (use
    /// the macro). A name already registered is replaced.
    #[doc(hidden)]
    pub fn add_formulation_with<F: FormulationPlugin>(
        &mut self,
        provides: Vec<Need>,
        views: ViewsFn<F::Built>,
    ) -> &mut Registry {
        let make: MakeFormulation = Box::new(move |options| {
            let formulation: F = parse_options("formulation", F::NAME, options)?;
            contactlab_core::plugin::Formulation::check(&formulation)?;
            Ok(Box::new(TypedFormulation { formulation, views }) as Box<dyn ErasedFormulation>)
        });
        let entry = FormulationEntry {
            name: F::NAME,
            description: F::DESCRIPTION,
            provides,
            model: contactlab_core::plugin::Formulation::model(&F::default()),
            defaults: serde_json::to_value(F::default()).unwrap_or(Value::Null),
            kinds: F::KINDS,
            refuses: F::REFUSES,
            make,
        };
        self.formulations.retain(|f| f.name != F::NAME);
        self.formulations.push(entry);
        self
    }

    /// Adds a driver. A name already registered is replaced.
    pub fn add_driver<D>(&mut self) -> &mut Registry
    where
        D: DriverPlugin + Driver<<D::Needs as Capability>::Dyn>,
    {
        let make: MakeDriver = Box::new(|options| {
            let driver: D = parse_options("optimizer", D::NAME, options)?;
            driver.check()?;
            Ok(Box::new(TypedDriver(driver)) as Box<dyn ErasedDriver>)
        });
        let entry = DriverEntry {
            name: D::NAME,
            description: D::DESCRIPTION,
            needs: D::Needs::NEED,
            model: D::default().model(),
            defaults: serde_json::to_value(D::default()).unwrap_or(Value::Null),
            kinds: D::KINDS,
            refuses: D::REFUSES,
            make,
        };
        self.drivers.retain(|d| d.name != D::NAME);
        self.drivers.push(entry);
        self
    }

    /// The formulations, in registration order.
    pub fn formulations(&self) -> &[FormulationEntry] {
        &self.formulations
    }

    /// The drivers, in registration order.
    pub fn drivers(&self) -> &[DriverEntry] {
        &self.drivers
    }

    /// Looks a formulation up by name.
    pub fn formulation(&self, name: &str) -> Result<&FormulationEntry, RegistryError> {
        self.formulations
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                RegistryError::UnknownFormulation(
                    name.into(),
                    self.formulations
                        .iter()
                        .map(|f| f.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                )
            })
    }

    /// The friction law a pair's answers satisfy ([`pair_model`]), by names.
    pub fn model_of(&self, formulation: &str, optimizer: &str) -> Result<Model, RegistryError> {
        Ok(pair_model(
            self.formulation(formulation)?,
            self.driver(optimizer)?,
        ))
    }

    /// Looks a driver up by name.
    pub fn driver(&self, name: &str) -> Result<&DriverEntry, RegistryError> {
        self.drivers.iter().find(|d| d.name == name).ok_or_else(|| {
            RegistryError::UnknownOptimizer(
                name.into(),
                self.drivers
                    .iter()
                    .map(|d| d.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })
    }

    /// Every compatible (formulation, driver) pair, formulations in registration order and
    /// each one's drivers in theirs: the cross-paper matrix's columns.
    pub fn pairs(&self) -> Vec<Pair> {
        self.formulations
            .iter()
            .flat_map(|f| {
                self.drivers_for(f).into_iter().map(move |d| Pair {
                    formulation: f.name,
                    optimizer: d,
                })
            })
            .collect()
    }

    /// The drivers that run a formulation.
    pub fn drivers_for(&self, formulation: &FormulationEntry) -> Vec<&'static str> {
        self.drivers
            .iter()
            .filter(|d| formulation.provides.contains(&d.needs))
            .map(|d| d.name)
            .collect()
    }

    /// Why `driver` cannot run `formulation`, or `None` when it can.
    pub fn incompatibility(
        &self,
        formulation: &FormulationEntry,
        driver: &DriverEntry,
    ) -> Option<String> {
        (!formulation.provides.contains(&driver.needs)).then(|| {
            let provides: Vec<&str> = formulation
                .provides
                .iter()
                .map(|n| n.trait_name())
                .collect();
            format!(
                "`{}` needs a {} ({}); `{}` provides {}",
                driver.name,
                driver.needs.trait_name(),
                driver.needs.explain(),
                formulation.name,
                if provides.is_empty() {
                    "nothing a driver can take".to_string()
                } else {
                    provides.join(", ")
                }
            )
        })
    }

    /// The constraint kinds a pair takes: those both its formulation and its driver take, in
    /// [`LABELS`] order.
    pub fn pair_kinds(f: &FormulationEntry, d: &DriverEntry) -> Vec<&'static str> {
        LABELS
            .into_iter()
            .filter(|k| f.kinds.contains(k) && d.kinds.contains(k))
            .collect()
    }

    /// The constraint kinds a pair refuses, each with its reason: the formulation's
    /// ([`Formulation::REFUSES`](contactlab_core::Formulation::REFUSES)) where the formulation
    /// refuses the kind, else the driver's, named (`` `clarabel`: ... ``).
    pub fn pair_refusals(f: &FormulationEntry, d: &DriverEntry) -> Vec<(&'static str, String)> {
        LABELS
            .into_iter()
            .filter_map(|k| {
                if !f.kinds.contains(&k) {
                    Some((k, format!("`{}`: {}", f.name, f.refuses)))
                } else if !d.kinds.contains(&k) {
                    Some((k, format!("`{}`: {}", d.name, d.refuses)))
                } else {
                    None
                }
            })
            .collect()
    }

    /// Checks a spec and builds its formulation and driver with their options.
    pub fn resolve(&self, spec: &SolverSpec) -> Result<ResolvedSolver, RegistryError> {
        let f = self.formulation(&spec.formulation.name)?;
        let d = self.driver(&spec.optimizer.name)?;
        if let Some(reason) = self.incompatibility(f, d) {
            return Err(RegistryError::Incompatible {
                formulation: f.name.into(),
                optimizer: d.name.into(),
                reason,
                available: self.drivers_for(f).join(", "),
            });
        }
        spec.check_numbers().map_err(RegistryError::BadOption)?;
        let formulation = (f.make)(&spec.formulation.options)?;
        Ok(ResolvedSolver {
            label: spec.name(),
            kinds: Registry::pair_kinds(f, d),
            refusals: Registry::pair_refusals(f, d),
            layout: layout(spec, formulation.as_ref()),
            formulation,
            driver: (d.make)(&spec.optimizer.options)?,
            options: solve_options(spec),
            start: spec.start,
        })
    }

    /// Checks a spec's names, pairing, options and numbers without keeping what it builds.
    pub fn check(&self, spec: &SolverSpec) -> Result<(), RegistryError> {
        self.resolve(spec).map(|_| ())
    }

    /// Solves `problem` as `spec` says, from `warm` when `spec.start` is `Warm`.
    pub fn solve(
        &self,
        problem: &StepProblem,
        spec: &SolverSpec,
        warm: Option<&[f64]>,
    ) -> Result<LocalSolve, RegistryError> {
        Ok(self.resolve(spec)?.solve(problem, warm)?)
    }
}

/// One (formulation, driver) pair by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Formulation name.
    pub formulation: &'static str,
    /// Driver name.
    pub optimizer: &'static str,
}

impl Pair {
    /// `formulation+optimizer`.
    pub fn label(&self) -> String {
        format!("{}+{}", self.formulation, self.optimizer)
    }
}

/// The layout a spec's `islands`, `whole_below` and `dense` options ask for, the
/// formulation's threshold where the spec names none.
fn layout(spec: &SolverSpec, formulation: &dyn ErasedFormulation) -> Layout {
    Layout {
        islands: spec.islands,
        whole_below: spec.whole_below.map_or(formulation.whole_below(), |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        storage: if spec.dense {
            Storage::Dense
        } else {
            Storage::Blocks
        },
    }
}

/// The friction law a pair's answers satisfy: the driver's own where it imposes one
/// (bisection-SOR: Hwangbo et al.'s maximum dissipation), else the formulation's.
pub fn pair_model(formulation: &FormulationEntry, driver: &DriverEntry) -> Model {
    driver.model.unwrap_or(formulation.model)
}

/// A spec's stopping rules and budgets, as drivers read them.
fn solve_options(spec: &SolverSpec) -> SolveOptions {
    SolveOptions {
        stop_tol: spec.tol,
        rel_tol: spec.rel_tol,
        max_iter: spec.max_iter,
        time_limit: spec.time_limit.map(Duration::from_secs_f64),
        ..SolveOptions::default()
    }
}

/// A spec whose names, pairing and options have been checked: ready to solve many problems.
pub struct ResolvedSolver {
    /// The label for tables.
    pub label: String,
    /// The constraint kinds the pair takes ([`Registry::pair_kinds`]).
    pub kinds: Vec<&'static str>,
    /// The kinds it refuses, each with its reason ([`Registry::pair_refusals`]).
    pub refusals: Vec<(&'static str, String)>,
    /// The formulation with its options.
    pub formulation: Box<dyn ErasedFormulation>,
    /// The driver with its options.
    pub driver: Box<dyn ErasedDriver>,
    /// Tolerance, iteration budget and time limit.
    pub options: SolveOptions,
    /// How solves start.
    pub start: Start,
    /// Islands or the whole problem, block-sparse or dense `W`.
    pub layout: Layout,
}

impl ResolvedSolver {
    /// Solves one problem, from `warm` (three numbers per contact, `NaN` where a contact has
    /// none) when the start is `warm`; judged by the shared ruler at the spec's tolerance.
    pub fn solve(
        &self,
        problem: &StepProblem,
        warm: Option<&[f64]>,
    ) -> Result<LocalSolve, CoreError> {
        let out = self.run(problem, warm)?;
        judge(problem, out, self.options.stop_tol)
    }

    /// The solve without the ruler: island by island as the layout says
    /// ([`solve_by_island`]), the contact-space form derived in its storage. This is what a
    /// timing of the solver measures (the shared ruler's work is not the solver's).
    pub fn run(&self, problem: &StepProblem, warm: Option<&[f64]>) -> Result<Outcome, CoreError> {
        let refused_label = std::cell::Cell::new("");
        let takes = |b: &contactlab_core::constraint::Constraint| {
            let ok = self.kinds.contains(&b.label());
            if !ok {
                refused_label.set(b.label());
            }
            ok
        };
        if let Some(kind) = problem.first_refused(takes) {
            let why = self
                .refusals
                .iter()
                .find(|(k, _)| *k == refused_label.get())
                .map_or(String::new(), |(_, why)| format!(" ({why})"));
            return Err(CoreError::Unsupported(format!(
                "{} does not take {kind}: it takes {}{why}",
                self.label,
                self.kinds.join(", ")
            )));
        }
        let init = match (self.start, warm) {
            (Start::Zero, _) => Init::Zero,
            (Start::Warm, Some(w)) => Init::Warm(w),
            _ => Init::Default,
        };
        let mut out = solve_by_island(problem, self.layout, init, &self.options, |p, init, o| {
            self.formulation.solve(p, init, self.driver.as_ref(), o)
        })?;
        // The answer is of the driver's law where it imposes one (what a derivative or a
        // report must read), else of the formulation's.
        out.model = self.driver.model().unwrap_or(out.model);
        Ok(out)
    }

    /// The same solver with another time limit (sweeps give every solve a default one).
    pub fn with_default_time_limit(mut self, limit: Duration) -> ResolvedSolver {
        self.options.time_limit.get_or_insert(limit);
        self
    }
}

/// Solves `problem` as `spec` says with the standard registry (a notebook's shortcut: the
/// lab's own paths use the registry they hold), from `warm` when `spec.start` is `Warm` (three
/// numbers per contact, `NaN` where a contact has no previous value).
pub fn solve_spec(
    problem: &StepProblem,
    spec: &SolverSpec,
    warm: Option<&[f64]>,
) -> Result<LocalSolve, RegistryError> {
    Registry::standard().solve(problem, spec, warm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::{LocalProblem, Matrix, Status};

    /// One contact, `W = I`, sliding: `q = (-1, q_t1, q_t2)`, `mu = 0.5`.
    fn sliding(q_t1: f64, q_t2: f64) -> LocalProblem {
        let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        LocalProblem::coulomb(
            Matrix::from_row_major("W", 3, 3, &eye).unwrap(),
            vec![-1.0, q_t1, q_t2],
            &[0.5],
        )
    }

    #[test]
    fn every_plugin_that_refuses_a_kind_says_why_and_every_pair_names_its_refusals() {
        let reg = Registry::standard();
        let f = reg
            .formulations()
            .iter()
            .map(|f| (f.name, f.kinds, f.refuses));
        let d = reg.drivers().iter().map(|d| (d.name, d.kinds, d.refuses));
        for (name, kinds, why) in f.chain(d) {
            let refuses_some = kinds.len() < LABELS.len();
            assert_eq!(
                refuses_some,
                !why.is_empty(),
                "{name}: takes {kinds:?}, reason {why:?}"
            );
        }
        for p in crate::solve::pair_table(&reg)
            .iter()
            .filter(|p| p.compatible)
        {
            let (f, d) = (
                reg.formulation(p.formulation).unwrap(),
                reg.driver(p.optimizer).unwrap(),
            );
            let refusals = Registry::pair_refusals(f, d);
            assert_eq!(
                p.kinds.len() + refusals.len(),
                LABELS.len(),
                "{}",
                p.formulation
            );
            assert!(refusals
                .iter()
                .all(|(k, why)| !p.kinds.contains(k) && why.len() > 20));
        }
        // Clarabel refuses, by its own reason, what SAP takes.
        let (f, d) = (
            reg.formulation("sap").unwrap(),
            reg.driver("clarabel").unwrap(),
        );
        let refusals = Registry::pair_refusals(f, d);
        assert_eq!(refusals[0].0, "contact");
        assert!(
            refusals[0].1.starts_with("`clarabel`: the conic programs"),
            "{refusals:?}"
        );
    }

    #[test]
    fn the_layout_takes_the_formulations_threshold_unless_the_spec_names_one() {
        let reg = Registry::standard();
        let whole_below = |f: &str, o: &str, w: Option<u64>| {
            let mut spec = SolverSpec::new(f, o, 1e-8, 10);
            spec.whole_below = w;
            reg.resolve(&spec).unwrap().layout.whole_below
        };
        let default = contactlab_core::islands::WHOLE_BELOW_CONTACTS;
        assert_eq!(whole_below("coulomb", "pgs", None), default);
        assert_eq!(whole_below("sap", "newton-merit", None), usize::MAX);
        assert_eq!(whole_below("sap", "newton-merit", Some(0)), 0);
        assert_eq!(whole_below("coulomb", "pgs", Some(100)), 100);
    }

    fn min_map_impulse(problem: &LocalProblem, theta0_deg: f64, align: bool) -> Vec<f64> {
        let mut spec = SolverSpec::new("min-map", "newton", 1e-12, 50);
        spec.formulation = PluginChoice::named("min-map")
            .with("theta0_deg", theta0_deg)
            .with("align_with_slip", align);
        let s = solve_spec(&problem.clone().into(), &spec, None).unwrap();
        assert_eq!(s.solver_status, Status::Converged, "{spec:?}");
        s.r
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn a_turned_min_map_pyramid_changes_the_friction_as_the_box_geometry_says() {
        let (h, s2) = (0.5, std::f64::consts::SQRT_2);
        // Slip along t1 with the box's faces on the axes: friction mu r_n straight back.
        let p = sliding(2.0, 0.0);
        assert!(close(&min_map_impulse(&p, 0.0, false), &[1.0, -h, 0.0]));
        // Faces turned 45 degrees: both turned components slide, and the box's corner gives
        // sqrt(2) mu r_n, still against the slip.
        let r = min_map_impulse(&p, 45.0, false);
        assert!(close(&r, &[1.0, -h * s2, 0.0]), "{r:?}");
        // Diagonal slip: the axis-aligned box's corner overshoots the cone by sqrt(2); faces
        // turned against the slip give the Coulomb answer mu r_n along -slip.
        let d = sliding(2.0, 2.0);
        assert!(close(&min_map_impulse(&d, 0.0, false), &[1.0, -h, -h]));
        let r = min_map_impulse(&d, 0.0, true);
        assert!(close(&r, &[1.0, -h / s2, -h / s2]), "{r:?}");
    }

    #[test]
    fn options_are_refused_where_they_mean_nothing_and_named_where_they_are_wrong() {
        let mut spec = SolverSpec::new("implicit-ncp", "todorov", 1e-8, 10);
        spec.formulation = PluginChoice::named("implicit-ncp").with("theta0_deg", 30.0);
        let e = Registry::standard().check(&spec).unwrap_err().to_string();
        assert!(
            e.contains("implicit-ncp") && e.contains("theta0_deg"),
            "{e}"
        );
        assert!(
            e.contains("restarts"),
            "the error lists the options that apply: {e}"
        );
        let mut spec = SolverSpec::new("min-map", "newton", 1e-8, 10);
        spec.formulation = PluginChoice::named("min-map").with("n_f", 6);
        let e = Registry::standard().check(&spec).unwrap_err().to_string();
        assert!(e.contains("n_f"), "{e}");
        spec.formulation = PluginChoice::named("min-map").with("align_with_slip", true);
        assert!(Registry::standard().check(&spec).is_ok());
        spec.formulation = PluginChoice::named("mlcp-fb").with("n_f", 2);
        spec.optimizer = PluginChoice::named("lm");
        let e = Registry::standard().check(&spec).unwrap_err().to_string();
        assert!(e.contains("n_f must be at least 3"), "{e}");
        spec.formulation = PluginChoice::named("mlcp-fb");
        spec.optimizer = PluginChoice::named("lm").with("lambda0", "big");
        let e = Registry::standard().check(&spec).unwrap_err().to_string();
        assert!(e.contains("optimizer `lm`") && e.contains("lambda0"), "{e}");
    }

    #[test]
    fn pairs_follow_the_traits_and_refusals_say_why() {
        let r = Registry::standard();
        let runs = |f: &str| r.drivers_for(r.formulation(f).unwrap());
        assert_eq!(
            runs("coulomb"),
            vec!["pgs", "bisection-sor", "pgs-hwangbo", "admm"]
        );
        // Todorov's driver runs every NonSmoothResidual, Erleben's Newton every BDerivative.
        assert!(runs("mncp").contains(&"todorov") && runs("mncp").contains(&"newton"));
        assert!(runs("min-map").contains(&"todorov") && runs("implicit-ncp").contains(&"newton"));
        assert!(!runs("mlcp-fb").contains(&"todorov"));
        assert!(runs("mlcp-fb").contains(&"plm") && !runs("implicit-ncp").contains(&"plm"));
        let why = r
            .incompatibility(
                r.formulation("mlcp-fb").unwrap(),
                r.driver("todorov").unwrap(),
            )
            .unwrap();
        assert!(
            why.contains("NonSmoothResidual") && why.contains("Residual, ProjectedResidual"),
            "{why}"
        );
        let e = r
            .solve(
                &sliding(1.0, 0.0).into(),
                &SolverSpec::new("coulomb", "lm", 1e-8, 10),
                None,
            )
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot be run") && e.contains("pgs"), "{e}");
    }

    #[test]
    fn hwangbos_drivers_run_by_name_with_their_options_and_counters() {
        // Two contacts, W_nt = 0 (the maximum-dissipation and Coulomb models coincide), one
        // slipping (q_t large), one sticking.
        #[rustfmt::skip]
        let w = [
            2.0, 0.0, 0.0, 0.3, 0.0, 0.0,
            0.0, 1.0, 0.2, 0.0, 0.1, 0.0,
            0.0, 0.2, 1.5, 0.0, 0.0, 0.1,
            0.3, 0.0, 0.0, 2.0, 0.0, 0.0,
            0.0, 0.1, 0.0, 0.0, 1.0, 0.0,
            0.0, 0.0, 0.1, 0.0, 0.0, 1.0,
        ];
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", 6, 6, &w).unwrap(),
            vec![-1.0, 2.0, -1.0, -1.0, 0.05, 0.0],
            &[0.5, 0.5],
        );
        let pgs = solve_spec(
            &p.clone().into(),
            &SolverSpec::new("coulomb", "pgs", 1e-12, 1000),
            None,
        )
        .unwrap();
        for local in ["bisection", "golden_section", "analytical", "coulomb"] {
            let mut spec = SolverSpec::new("coulomb", "bisection-sor", 1e-10, 10);
            spec.optimizer = PluginChoice::named("bisection-sor")
                .with("local", local)
                .with("local_tol", 1e-12);
            let s = solve_spec(&p.clone().into(), &spec, None).unwrap();
            assert_eq!(s.status, Status::Converged, "{local}: {:?}", s.counters);
            assert_eq!(s.counter("slipping_contacts"), 1, "{local}");
            assert_eq!(s.counter("sticking_contacts"), 1, "{local}");
            assert!(s.counter("local_steps") > 0 || local == "analytical");
            assert!(close(&s.r, &pgs.r), "{local}: {:?} vs {:?}", s.r, pgs.r);
        }
        let mut spec = SolverSpec::new("coulomb", "pgs-hwangbo", 1e-11, 10);
        spec.optimizer = PluginChoice::named("pgs-hwangbo").with("alpha", 0.8);
        let s = solve_spec(&p.clone().into(), &spec, None).unwrap();
        assert_eq!(s.status, Status::Converged, "{:?}", s.counters);
        assert!(s.iterations > 10, "its own budget, not the spec's 10");
        assert!(close(&s.r, &pgs.r));
        // Options are typed: a method that does not exist and an option of the other driver.
        spec.optimizer = PluginChoice::named("bisection-sor").with("local", "newton");
        let e = Registry::standard().check(&spec).unwrap_err().to_string();
        assert!(e.contains("bisection-sor") && e.contains("local"), "{e}");
        spec.optimizer = PluginChoice::named("pgs-hwangbo").with("local", "bisection");
        assert!(Registry::standard().check(&spec).is_err());
        spec.optimizer = PluginChoice::named("pgs-hwangbo").with("alpha", 3.0);
        assert!(Registry::standard()
            .check(&spec)
            .unwrap_err()
            .to_string()
            .contains("alpha"));
    }
}
