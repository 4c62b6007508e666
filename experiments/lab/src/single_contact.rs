//! Running a single-contact config (`kind = "single_contact"`,
//! [`contactlab_runs::single_contact`]): Hwangbo, Lee and Hutter 2018's Table I. Two phases:
//!
//! 1. **Samples** ([`slipping_samples`]): every run of the config's sweep is simulated from its
//!    start with the config's driver advancing it (as the runner does: warm-started across steps
//!    when the driver's `start` says so), and at each step's answer every contact is looked at as
//!    its own solver sees it, the others' impulses frozen: the block `W_aa`, the free velocity
//!    `c_a = u_a - W_aa r_a` and `mu_a` (sec. III-A, eq. 5). The contacts the case analysis calls
//!    slipping ([`classify`]: closing, and the sticking impulse outside the cone) are the samples,
//!    at most `samples_per_run` per run, spread evenly over the run. Runs go across the current
//!    rayon pool; their samples are stacked in run order.
//! 2. **Timing** ([`time_methods`]), on the calling thread: in each of `rounds` rounds, every
//!    method solves one batch of all samples through `black_box` (the whole single-contact
//!    solve, [`solve_contact`]: the case analysis and the slipping method, e.g. Algorithm 1's
//!    bisection on the conic's angle with the sign of the hybrid gradient of eqs. 15-16), the
//!    methods interleaved so the machine's noise falls on all of them alike; a method's time
//!    is its median round's batch time per sample. Each method's answers are then measured
//!    against the independent [`Reference`] (a dense scan of the angle polished by Newton's
//!    method), which none of the methods uses.
//!
//! One row per method: `method`, `samples`, `rounds`, `micros_median` and `micros_min` (per
//! solve), `max_error` (largest `|r - r_ref| / |r_ref|`), `max_abs_error` (N s), `mean_steps`
//! (inner steps per solve), `mean_bracket_steps` (of those, the evaluations spent finding the
//! interval: Algorithm 1's initial stepping with its start, the golden section's search of the
//! line-of-sight region; NaN for the quartic), `share_bracket_two` (the share of samples whose
//! interval took at most two evaluations: the start and one step that already crosses the
//! answer, the "converges in just two steps" of sec. VI), `failures` (samples the method
//! returned an error on) and `reference_failures` (samples the reference could not solve; left
//! out of the errors).
//!
//! The methods, by the names of `bisection-sor`'s `local` option: `bisection` ([`Bisection`],
//! Algorithm 1), `golden_section` ([`GoldenSection`]) and `analytical` ([`Analytical`], the
//! quartic), the interval methods stopped at the config's `tol` (the paper's 1e-6 N s); and
//! `golden_section_closed`, the golden section with its line-of-sight region in closed form
//! (`GoldenSection::closed_form_sight`: no search for the interval).
//! `coulomb` is refused: it solves another law (eq. 6) than the reference's (eq. 8).

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use contactlab_formulations::hwangbo::{
    classify, solve_contact, Analytical, Bisection, Case, GoldenSection, LocalMethod, Reference,
    SlipMethod,
};
use contactlab_runs::config::{ConfigError, RunSpec};
use contactlab_runs::schema::single_contact;
use contactlab_runs::single_contact::SingleContactConfig;
use nalgebra::{Matrix3, Vector3};
use polars::prelude::*;
use rayon::prelude::*;

use crate::plan::{ExperimentPlan, PlannedRun};
use crate::runner::{build_scene, solve_warm, RunError, WarmMap};

/// The median of `v` (NaN when empty): for an odd count, as the rounds are, the middle round.
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => 0.5 * (s[n / 2 - 1] + s[n / 2]),
    }
}

/// One slipping contact as its solver sees it, the other contacts' impulses frozen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlipSample {
    /// `W_aa` (normal first).
    pub w: Matrix3<f64>,
    /// `c_a = u_a - W_aa r_a`.
    pub c: Vector3<f64>,
    /// Friction coefficient.
    pub mu: f64,
}

/// What one run of the sweep gave.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSamples {
    /// The run's sweep values.
    pub spec: RunSpec,
    /// Steps simulated.
    pub steps: usize,
    /// Slipping contacts met over those steps.
    pub slipping: usize,
    /// The samples kept (at most `samples_per_run`).
    pub samples: Vec<SlipSample>,
}

/// One method timed and measured on the samples: a row of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodRow {
    /// The method's name.
    pub method: String,
    /// Samples solved per batch.
    pub samples: usize,
    /// Timed rounds.
    pub rounds: usize,
    /// The median round's batch time per sample, microseconds.
    pub micros_median: f64,
    /// The fastest round's, microseconds.
    pub micros_min: f64,
    /// Largest `|r - r_ref| / |r_ref|` over the samples.
    pub max_error: f64,
    /// Largest `|r - r_ref|` over the samples (N s).
    pub max_abs_error: f64,
    /// Mean inner steps per solve (slope or value evaluations; the quartic's root polishing),
    /// over the samples the method solved.
    pub mean_steps: f64,
    /// Mean evaluations per solve spent finding the interval (NaN: the method has none).
    pub mean_bracket_steps: f64,
    /// Share of samples whose interval took at most two evaluations (NaN: no interval).
    pub share_bracket_two: f64,
    /// Samples the method returned an error on.
    pub failures: usize,
    /// Samples the reference could not solve (left out of the errors).
    pub reference_failures: usize,
    /// Seconds of all the method's timed batches.
    pub timed_seconds: f64,
}

/// What a single-contact run produced.
#[derive(Debug, Clone)]
pub struct SingleContactOutput {
    /// Per run of the sweep, in run order.
    pub runs: Vec<RunSamples>,
    /// One row per method, in the config's order.
    pub rows: Vec<MethodRow>,
    /// Wall-clock seconds (simulation and timing).
    pub wall_seconds: f64,
}

/// A single-contact method with its name, as the rows call it.
pub type NamedMethod = (String, Box<dyn SlipMethod>);

/// A method by name ([`LocalMethod`]'s names), the interval methods stopped at `tol` (N s);
/// the error says which names there are.
pub fn slip_method(name: &str, tol: f64) -> Result<Box<dyn SlipMethod>, String> {
    let known = "known: bisection, golden_section, golden_section_closed, analytical";
    if name == "golden_section_closed" {
        return Ok(Box::new(GoldenSection {
            tol,
            closed_form_sight: true,
            ..GoldenSection::default()
        }));
    }
    let method: LocalMethod = serde_json::from_value(serde_json::Value::String(name.into()))
        .map_err(|_| format!("unknown single-contact method `{name}`; {known}"))?;
    match method {
        LocalMethod::Bisection => Ok(Box::new(Bisection {
            tol,
            ..Bisection::default()
        })),
        LocalMethod::GoldenSection => Ok(Box::new(GoldenSection {
            tol,
            ..GoldenSection::default()
        })),
        LocalMethod::Analytical => Ok(Box::new(Analytical::default())),
        LocalMethod::Coulomb => Err(format!(
            "`coulomb` solves Coulomb's law (eq. 6), not the maximum-dissipation model (eq. 8) \
             the reference solves; {known}"
        )),
    }
}

/// Every method of the config, named; the error names the key at fault.
pub fn methods(cfg: &SingleContactConfig, path: &Path) -> Result<Vec<NamedMethod>, ConfigError> {
    cfg.methods
        .iter()
        .enumerate()
        .map(|(i, name)| {
            slip_method(name, cfg.tol)
                .map(|m| (name.clone(), m))
                .map_err(|message| ConfigError::Invalid {
                    path: path.into(),
                    key: format!("methods[{i}]"),
                    message,
                })
        })
        .collect()
}

/// Simulates run `planned` of `plan` (the config's simulation, [`SingleContactConfig::simulation`])
/// with its driver and keeps its slipping contacts (see the module documentation), at most
/// `cfg.samples_per_run`, spread evenly over the run.
pub fn slipping_samples(
    plan: &ExperimentPlan,
    cfg: &SingleContactConfig,
    planned: &PlannedRun,
) -> Result<RunSamples, RunError> {
    let spec = &planned.spec;
    let run = spec.index;
    let scene_err = |source| RunError::Scene { run, source };
    let mut scene = build_scene(planned)?;
    let driver = &plan.driver(planned).solver;
    let mut warm = WarmMap::new();
    let mut all = Vec::new();
    let mut steps = 0;
    for step in 0..cfg.scene.steps {
        if scene.finished() {
            break;
        }
        let cs = scene.contact_step().map_err(scene_err)?;
        let r = if cs.contacts.is_empty() {
            Vec::new()
        } else {
            let s = solve_warm(driver, &cs, &mut warm, run, step)?;
            let local = cs.problem.local().map_err(|e| RunError::Solver {
                run,
                step,
                source: e.into(),
            })?;
            for a in 0..local.num_contacts() {
                let w = local.w.block3(a, a);
                let at = |v: &[f64]| Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2]);
                let c = at(&s.u) - w * at(&s.r);
                let mu = local.mu()[a];
                if matches!(classify(&w, &c, mu), Ok(Case::Slipping(_))) {
                    all.push(SlipSample { w, c, mu });
                }
            }
            s.r
        };
        scene.advance(&cs, &r).map_err(scene_err)?;
        steps += 1;
    }
    let slipping = all.len();
    let keep = cfg.samples_per_run;
    let samples = if slipping <= keep {
        all
    } else {
        let stride = slipping as f64 / keep as f64;
        (0..keep)
            .map(|k| all[(k as f64 * stride) as usize])
            .collect()
    };
    Ok(RunSamples {
        spec: spec.clone(),
        steps,
        slipping,
        samples,
    })
}

/// Times every method of `methods` on `samples` in `rounds` interleaved rounds and measures
/// its answers against [`Reference`] (see the module documentation); one row per method, in
/// order.
pub fn time_methods(
    samples: &[SlipSample],
    methods: &[NamedMethod],
    rounds: usize,
) -> Vec<MethodRow> {
    let reference: Vec<Option<Vector3<f64>>> = samples
        .iter()
        .map(|s| {
            solve_contact(&Reference::default(), &s.w, &s.c, s.mu)
                .ok()
                .map(|x| x.r)
        })
        .collect();
    let n = samples.len().max(1) as f64;
    let mut per_round: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); methods.len()];
    for _ in 0..rounds.max(1) {
        for (k, (_, m)) in methods.iter().enumerate() {
            let clock = Instant::now();
            for s in samples {
                let _ = black_box(solve_contact(
                    black_box(m.as_ref()),
                    black_box(&s.w),
                    black_box(&s.c),
                    black_box(s.mu),
                ));
            }
            per_round[k].push(clock.elapsed().as_secs_f64());
        }
    }
    let reference_failures = reference.iter().filter(|r| r.is_none()).count();
    methods
        .iter()
        .zip(per_round)
        .map(|((name, m), times)| {
            let (mut max_error, mut max_abs_error) = (0.0f64, 0.0f64);
            let (mut steps, mut solved, mut failures) = (0u64, 0usize, 0usize);
            for (s, r_ref) in samples.iter().zip(&reference) {
                let Ok(x) = solve_contact(m.as_ref(), &s.w, &s.c, s.mu) else {
                    failures += 1;
                    continue;
                };
                steps += u64::from(x.steps);
                solved += 1;
                if let Some(r_ref) = r_ref {
                    let e = (x.r - r_ref).norm();
                    max_abs_error = max_abs_error.max(e);
                    max_error = max_error.max(e / r_ref.norm().max(1e-300));
                }
            }
            let brackets: Vec<u32> = samples
                .iter()
                .filter_map(|s| match classify(&s.w, &s.c, s.mu) {
                    Ok(Case::Slipping(k)) => m.bracket_steps(&k),
                    _ => None,
                })
                .collect();
            let (mean_bracket_steps, share_bracket_two) = if brackets.is_empty() {
                (f64::NAN, f64::NAN)
            } else {
                let count = brackets.len() as f64;
                (
                    brackets.iter().map(|&b| f64::from(b)).sum::<f64>() / count,
                    brackets.iter().filter(|&&b| b <= 2).count() as f64 / count,
                )
            };
            let per_sample: Vec<f64> = times.iter().map(|t| t / n).collect();
            MethodRow {
                method: name.clone(),
                samples: samples.len(),
                rounds: times.len(),
                micros_median: 1e6 * median(&per_sample),
                micros_min: 1e6 * per_sample.iter().copied().fold(f64::NAN, f64::min),
                max_error,
                max_abs_error,
                mean_steps: steps as f64 / solved.max(1) as f64,
                mean_bracket_steps,
                share_bracket_two,
                failures,
                reference_failures,
                timed_seconds: times.iter().sum(),
            }
        })
        .collect()
}

/// Runs a single-contact config whose simulation is planned as `plan`
/// ([`SingleContactConfig::simulation`], `Lab::plan`): the runs' samples on the current rayon
/// pool, then the timing on the calling thread. The method names are checked first.
pub fn run_single_contact(
    plan: &ExperimentPlan,
    cfg: &SingleContactConfig,
    path: &Path,
) -> Result<SingleContactOutput, RunError> {
    let start = Instant::now();
    let methods = methods(cfg, path)?;
    let runs = plan
        .runs()
        .par_iter()
        .map(|planned| slipping_samples(plan, cfg, planned))
        .collect::<Result<Vec<_>, _>>()?;
    let samples: Vec<SlipSample> = runs
        .iter()
        .flat_map(|r| r.samples.iter().copied())
        .collect();
    let rows = time_methods(&samples, &methods, cfg.rounds);
    Ok(SingleContactOutput {
        runs,
        rows,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The rows as a DataFrame, one column per [`MethodRow`] field.
pub fn single_contact_frame(rows: &[MethodRow]) -> PolarsResult<DataFrame> {
    macro_rules! col {
        ($f:ident) => {
            rows.iter().map(|r| r.$f.clone()).collect::<Vec<_>>()
        };
        ($f:ident as u64) => {
            rows.iter().map(|r| r.$f as u64).collect::<Vec<_>>()
        };
    }
    df!(
        single_contact::METHOD => col!(method),
        single_contact::SAMPLES => col!(samples as u64),
        single_contact::ROUNDS => col!(rounds as u64),
        single_contact::MICROS_MEDIAN => col!(micros_median),
        single_contact::MICROS_MIN => col!(micros_min),
        single_contact::MAX_ERROR => col!(max_error),
        single_contact::MAX_ABS_ERROR => col!(max_abs_error),
        single_contact::MEAN_STEPS => col!(mean_steps),
        single_contact::MEAN_BRACKET_STEPS => col!(mean_bracket_steps),
        single_contact::SHARE_BRACKET_TWO => col!(share_bracket_two),
        single_contact::FAILURES => col!(failures as u64),
        single_contact::REFERENCE_FAILURES => col!(reference_failures as u64),
        single_contact::TIMED_SECONDS => col!(timed_seconds),
    )
}
