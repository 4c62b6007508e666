//! The gradients study (`reports/gradients/`): the derivative of each answer to its problem's
//! data, against central finite differences of the whole solve, and what it costs beside the
//! solve (issue 43).
//!
//! Reads the run `study.toml` (`kind = "engines"`, `experiments/peers/gradients.py`), one record
//! per problem of the FCLib, MuJoCo and robot sets, and writes the accuracy table (by set and
//! regime class), the cost table, the first-order pairs' derivatives against the Newton-type
//! pair's, MuJoCo's `mjd_transitionFD` beside ours on the robot states, `metrics.csv` in long
//! form (`set, problem, derivative, metric, value`) and the facts the findings quote. The page's prose is
//! `experiments/configs/gradients/templates/report.md`.

use std::collections::BTreeMap;

use std::path::Path;

use contactlab_runs::schema::gradients as col;
use polars::prelude::DataFrame;
use serde::Serialize;

use crate::analysis::{f64s, finite_row, first_seen, float_columns, quantile, texts_or_empty};
use crate::builder::{Report, StudyRun};
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The study's run.
const STUDY: &str = "study.toml";

/// The formulations whose own derivatives the study checks, as it names them, with their
/// labels.
const PAIRS: [(&str, &str); 5] = [
    ("natural-map", "natural map (Coulomb cone)"),
    ("sap", "SAP"),
    ("pyramid", "min-map (friction pyramid)"),
    ("fb-pyramid", "FB MLCP (pyramid of four directions)"),
    ("dissipation", "bisection-SOR (maximum dissipation)"),
];

/// The first-order pairs, as the study keys their columns (`first_order_<key>_...`).
const FIRST_ORDER: [(&str, &str); 2] = [("pgs", "coulomb+pgs (NNCG)"), ("admm", "coulomb+admm")];

/// A first-order pair's derivative meets the bar when it is within this many times
/// its residual of the Newton-type pair's.
pub const FIRST_ORDER_BAR: f64 = 100.0;

/// A derivative agrees with the finite differences below this relative error (the issue's
/// median bar).
pub const AGREES: f64 = 1e-6;

/// The residual a first-order pair's bar is floored at: an answer exact to the last digit
/// (residual 0) still leaves its derivative rounding apart from another's.
pub const ROUNDING: f64 = 1e-14;

/// The problems "of at most this many velocities" of the cost bar.
pub const SMALL_VELOCITIES: f64 = 40.0;

/// One problem's record.
#[derive(Debug, Clone)]
struct Record {
    set: String,
    /// `natural-map` (the Coulomb cone's answers, by the natural map's derivative) or `sap`.
    pair: String,
    problem: String,
    status: String,
    fd: String,
    first_order_status: BTreeMap<&'static str, String>,
    values: BTreeMap<String, f64>,
}

impl Record {
    /// A value of the record (`NaN` where it has none).
    fn get(&self, key: &str) -> f64 {
        self.values.get(key).copied().unwrap_or(f64::NAN)
    }

    fn converged(&self) -> bool {
        self.status == "converged"
    }

    fn unique(&self) -> bool {
        self.get(col::NON_UNIQUE) == 0.0
    }

    /// The class the accuracy table splits by: answers with a degenerate block (whose
    /// derivative is one element of the generalized Jacobian), then the other non-unique ones,
    /// those with a sliding block, and the rest (every block sticking or separating).
    fn class(&self) -> &'static str {
        if self.get(col::BLOCKS_DEGENERATE) > 0.0 {
            "degenerate"
        } else if !self.unique() {
            "non-unique"
        } else if self.get(col::BLOCKS_SLIDING) > 0.0 {
            "sliding"
        } else {
            "sticking or separating"
        }
    }

    /// The relative error of the outputs the derivative is judged on (the study's `error`:
    /// `r`, and `v` for a generalized problem, where the impulses are unique; `v`, or `u` in
    /// contact space, where they are not: the minimum-norm `r` is not checked).
    fn error(&self) -> f64 {
        self.get(col::DERIVATIVE_ERROR)
    }

    /// Whether the record's derivative counts as checked at a unique answer: the impulses
    /// unique, no block degenerate, the finite differences consistent.
    fn checked_unique(&self) -> bool {
        self.unique() && self.class() != "degenerate" && self.fd == "consistent"
    }

    /// The velocities the cost bar counts: the generalized ones, or the rows of a
    /// contact-space problem.
    fn velocities(&self) -> f64 {
        let dofs = self.get(col::DOFS);
        if dofs.is_finite() {
            dofs
        } else {
            self.get(col::ROWS)
        }
    }

    /// The first gradient's cost: the factorization and one `vjp`.
    fn first_gradient(&self) -> f64 {
        self.get(col::FACTOR_S) + self.get(col::VJP_S)
    }
}

/// What the page shows besides the tables.
#[derive(Debug, Default, Serialize)]
struct Sections {
    /// Why the study did not run.
    skipped: Option<String>,
}

/// Writes `reports/gradients/` from the study's run under `root`.
pub fn generate(root: &Path) -> Result<(), ReportError> {
    let mut r = Report::new(root, "gradients")?;
    let mut sections = Sections::default();
    match r.load_study(STUDY)? {
        StudyRun::Skipped(why) => sections.skipped = Some(why),
        StudyRun::Ran(df) => {
            let records = read_records(&df)?;
            accuracy_table(&mut r, &records)?;
            cost_table(&mut r, &records)?;
            first_order_table(&mut r, &records)?;
            mujoco_table(&mut r, &records)?;
            metrics_csv(&mut r, &records)?;
            facts(&mut r, &df, &records)?;
        }
    }
    r.show("sections", sections)?;
    r.finish()?;
    Ok(())
}

/// The study's records, every numeric column kept by name.
fn read_records(df: &DataFrame) -> Result<Vec<Record>, ReportError> {
    let pair = texts_or_empty(df, col::DERIVATIVE)?;
    let (set, problem, status, fd) = (
        texts_or_empty(df, col::PROBLEM_SET)?,
        texts_or_empty(df, col::PROBLEM)?,
        texts_or_empty(df, col::STATUS)?,
        texts_or_empty(df, col::FD)?,
    );
    let mut first_order: Vec<(&'static str, Vec<String>)> = Vec::new();
    for (key, _) in FIRST_ORDER {
        first_order.push((
            key,
            texts_or_empty(df, &format!("{}_{key}_status", col::FIRST_ORDER_PAIRS))?,
        ));
    }
    let numbers = float_columns(df)?;
    Ok((0..df.height())
        .map(|k| Record {
            set: set[k].clone(),
            pair: pair[k].clone(),
            problem: problem[k].clone(),
            status: status[k].clone(),
            fd: fd[k].clone(),
            first_order_status: first_order
                .iter()
                .map(|(key, v)| (*key, v[k].clone()))
                .collect(),
            values: finite_row(&numbers, k),
        })
        .collect())
}

/// The sets in the order the run met them.
fn set_names(records: &[Record]) -> Vec<String> {
    first_seen(records.iter().map(|x| &x.set))
}

/// The accuracy classes, in the table's order.
const CLASSES: [&str; 4] = [
    "sticking or separating",
    "sliding",
    "non-unique",
    "degenerate",
];

/// Per set and class: problems, those whose finite differences are consistent (checked), kinks
/// inside the step, failed differences, and the error's median, 95th percentile and maximum.
fn accuracy_table(r: &mut Report, records: &[Record]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("accuracy.csv"))
        .col("set", col::PROBLEM_SET)
        .col("differentiated", col::DERIVATIVE)
        .col("answers", "class")
        .col("problems", "problems")
        .col("checked", "checked")
        .col("kink in the step", "kinks")
        .col("differences failed", "fd_failed")
        .col("median error", "error_median")
        .col("95th percentile", "error_p95")
        .col("largest", "error_max");
    let (sci, csv, int) = (Fmt::sci(1), Fmt::sci(6), Fmt::int());
    for set in set_names(records) {
        for ((pair, label), class) in PAIRS.iter().flat_map(|p| CLASSES.map(|c| (p, c))) {
            let of: Vec<&Record> = records
                .iter()
                .filter(|x| x.set == set && x.pair == *pair && x.converged())
                .filter(|x| x.class() == class)
                .collect();
            if of.is_empty() {
                continue;
            }
            let errors = checked_errors(&of);
            let count = |fd: &str| of.iter().filter(|x| x.fd == fd).count() as f64;
            t.row(vec![
                C::code(&set),
                C::text(*label),
                C::text(class),
                C::num(of.len() as f64, &int, &int),
                C::num(errors.len() as f64, &int, &int),
                C::num(count("kink"), &int, &int),
                C::num(count("failed"), &int, &int),
                C::num(quantile(&errors, 0.5), &sci, &csv),
                C::num(quantile(&errors, 0.95), &sci, &csv),
                C::num(quantile(&errors, 1.0), &sci, &csv),
            ])?;
        }
    }
    r.show_table("accuracy", &t)
}

/// The errors of the records whose finite differences are consistent.
fn checked_errors(of: &[&Record]) -> Vec<f64> {
    of.iter()
        .filter(|x| x.fd == "consistent")
        .map(|x| x.error())
        .filter(|v| v.is_finite())
        .collect()
}

/// Per set, medians over the converged problems, in microseconds: the solve, the
/// factorization, one `vjp`, the first gradient against the solve, the dense Jacobian, and
/// central differences of the same gradient (`2 n` solves); then the small problems' first
/// gradient.
fn cost_table(r: &mut Report, records: &[Record]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("cost.csv"))
        .col("set", col::PROBLEM_SET)
        .col("differentiated", col::DERIVATIVE)
        .col("problems", "problems")
        .col("solve (us)", "solve_us")
        .col("factorization (us)", "factor_us")
        .col("vjp (us)", "vjp_us")
        .col("first gradient / solve", "first_gradient_over_solve")
        .col("Jacobian of r (us)", "jacobian_us")
        .col("differences, 2n solves (us)", "fd_gradient_us")
        .col("small problems", "small_problems")
        .col("small: first gradient (us)", "small_first_gradient_us");
    let (us, csv, int, ratio) = (Fmt::fixed(0), Fmt::sci(6), Fmt::int(), Fmt::fixed(2));
    for (set, (pair, label)) in set_names(records)
        .into_iter()
        .flat_map(|s| PAIRS.map(|p| (s.clone(), p)))
    {
        let of: Vec<&Record> = records
            .iter()
            .filter(|x| x.set == set && x.pair == pair && x.converged())
            .filter(|x| x.get(col::VJP_S).is_finite())
            .collect();
        if of.is_empty() {
            continue;
        }
        let median = |f: &dyn Fn(&Record) -> f64| {
            quantile(&of.iter().map(|x| f(x)).collect::<Vec<_>>(), 0.5)
        };
        let small: Vec<f64> = of
            .iter()
            .filter(|x| x.velocities() <= SMALL_VELOCITIES)
            .map(|x| 1e6 * x.first_gradient())
            .collect();
        t.row(vec![
            C::code(&set),
            C::text(label),
            C::num(of.len() as f64, &int, &int),
            C::num(median(&|x| 1e6 * x.get(col::SOLVE_S)), &us, &csv),
            C::num(median(&|x| 1e6 * x.get(col::FACTOR_S)), &us, &csv),
            C::num(median(&|x| 1e6 * x.get(col::VJP_S)), &us, &csv),
            C::num(
                median(&|x| x.first_gradient() / x.get(col::SOLVE_S)),
                &ratio,
                &csv,
            ),
            C::num(median(&|x| 1e6 * x.get(col::JACOBIAN_S)), &us, &csv),
            C::num(median(&|x| 1e6 * x.get(col::FD_GRADIENT_S)), &us, &csv),
            C::num(small.len() as f64, &int, &int),
            C::num(quantile(&small, 0.5), &us, &csv),
        ])?;
    }
    r.show_table("cost", &t)
}

/// Whether a first-order pair's derivative meets the bar on a record: the relative gap of its
/// derivative to the Newton-type pair's, on the outputs the derivative is judged on (`r`, and
/// `v`, where the impulses are unique; `v` or `u` where not), within [`FIRST_ORDER_BAR`]
/// times its residual.
fn within_bar(x: &Record, key: &str) -> Option<bool> {
    let residual = x.get(&format!("{}_{key}_residual", col::FIRST_ORDER_PAIRS));
    let gap = x.get(&format!("{}_{key}_gap", col::FIRST_ORDER_PAIRS));
    let bar = FIRST_ORDER_BAR * residual.max(ROUNDING);
    (residual.is_finite() && gap.is_finite()).then_some(gap <= bar)
}

/// Per set and first-order pair: problems the Newton-type pair answered, those the pair
/// converged on, its median residual, the median gap of its derivative, and how many meet the
/// bar.
fn first_order_table(r: &mut Report, records: &[Record]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("first_order.csv"))
        .col("set", col::PROBLEM_SET)
        .col("pair", "pair")
        .col("problems", "problems")
        .col("converged", "converged")
        .col("median residual", "residual_median")
        .col("median derivative gap", "gap_median")
        .col("within 100x residual", "within_bar");
    let (sci, csv, int) = (Fmt::sci(1), Fmt::sci(6), Fmt::int());
    for set in set_names(records) {
        let of: Vec<&Record> = records
            .iter()
            .filter(|x| x.set == set && x.pair == PAIRS[0].0 && x.converged())
            .collect();
        for (key, label) in FIRST_ORDER {
            let done: Vec<&&Record> = of
                .iter()
                .filter(|x| x.first_order_status.get(key).map(String::as_str) == Some("converged"))
                .collect();
            let column = |m: &str| {
                done.iter()
                    .map(|x| x.get(&format!("{}_{key}_{m}", col::FIRST_ORDER_PAIRS)))
                    .collect::<Vec<_>>()
            };
            let within = done
                .iter()
                .filter(|x| within_bar(x, key) == Some(true))
                .count();
            t.row(vec![
                C::code(&set),
                C::code(label),
                C::num(of.len() as f64, &int, &int),
                C::num(done.len() as f64, &int, &int),
                C::num(quantile(&column(col::RESIDUAL), 0.5), &sci, &csv),
                C::num(quantile(&column("gap"), 0.5), &sci, &csv),
                C::num(within as f64, &int, &int),
            ])?;
        }
    }
    r.show_table("first_order", &t)
}

/// Per robot state: our first gradient and dense Jacobian beside MuJoCo's
/// `mjd_transitionFD`, in microseconds.
fn mujoco_table(r: &mut Report, records: &[Record]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("mujoco_fd.csv"))
        .col("state", col::PROBLEM)
        .col("velocities", col::DOFS)
        .col("constraint rows", col::ROWS)
        .col("our first gradient (us)", "first_gradient_us")
        .col("our Jacobian of r (us)", "jacobian_us")
        .col("mjd_transitionFD (us)", "mujoco_transition_fd_us");
    let (us, csv, int) = (Fmt::fixed(0), Fmt::sci(6), Fmt::int());
    for x in records
        .iter()
        .filter(|x| x.get(col::MUJOCO_TRANSITION_FD_S).is_finite())
    {
        t.row(vec![
            C::code(&x.problem),
            C::num(x.get(col::DOFS), &int, &int),
            C::num(x.get(col::ROWS), &int, &int),
            C::num(1e6 * x.first_gradient(), &us, &csv),
            C::num(1e6 * x.get(col::JACOBIAN_S), &us, &csv),
            C::num(1e6 * x.get(col::MUJOCO_TRANSITION_FD_S), &us, &csv),
        ])?;
    }
    r.show_table("mujoco_fd", &t)
}

/// `metrics.csv`: every number of every record in long form, each with the derivative it is of
/// (a problem has one record per derivative).
fn metrics_csv(r: &mut Report, records: &[Record]) -> Result<(), ReportError> {
    let mut t = Table::new(Some("metrics.csv"));
    for c in [
        col::PROBLEM_SET,
        col::PROBLEM,
        col::DERIVATIVE,
        "metric",
        "value",
    ] {
        t = t.csv_col(c);
    }
    for x in records {
        for (metric, value) in &x.values {
            t.row(vec![
                C::text(&x.set),
                C::text(&x.problem),
                C::text(&x.pair),
                C::text(metric),
                C::num(*value, &Fmt::sci(9), &Fmt::sci(9)),
            ])?;
        }
    }
    r.show_table("metrics", &t)
}

/// The sliding box's rollout and identification (`rollout.py`): marked absent where the run
/// left them out (`--no-rollout`).
fn rollout_facts(r: &mut Report, df: &DataFrame) {
    let top = |k: &str| run_wide(df, k);
    if top(col::ROLLOUT_GAP).is_nan() {
        r.facts()
            .absent("gradients.rollout", "the run left the rollout out")
            .absent("gradients.identify", "the run left the rollout out");
        return;
    }
    let percent = |v: f64| 100.0 * v;
    r.facts()
        .num(
            "gradients.rollout.horizon",
            top(col::ROLLOUT_HORIZON),
            Fmt::int(),
        )
        .num("gradients.rollout.gap", top(col::ROLLOUT_GAP), Fmt::sci(0))
        .num(
            "gradients.identify.seeds",
            top(col::IDENTIFY_SEEDS),
            Fmt::int(),
        )
        .num(
            "gradients.identify.samples",
            top(col::IDENTIFY_SAMPLES),
            Fmt::int(),
        )
        .num(
            "gradients.identify.sigma_mm",
            1e3 * top(col::IDENTIFY_SIGMA),
            Fmt::fixed(0).unit(" mm"),
        )
        .num(
            "gradients.identify.mu_error_median",
            percent(top(col::IDENTIFY_MU_ERROR_MEDIAN)),
            Fmt::percent(2),
        )
        .num(
            "gradients.identify.mu_error_max",
            percent(top(col::IDENTIFY_MU_ERROR_MAX)),
            Fmt::percent(2),
        )
        .num(
            "gradients.identify.v0_error_median",
            percent(top(col::IDENTIFY_V0_ERROR_MEDIAN)),
            Fmt::percent(2),
        )
        .num(
            "gradients.identify.iterations_median",
            top(col::IDENTIFY_ITERATIONS_MEDIAN),
            Fmt::fixed(0),
        )
        .num(
            "gradients.identify.seconds_chain",
            top(col::IDENTIFY_SECONDS_CHAIN_MEDIAN),
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            "gradients.identify.fd_seeds",
            top(col::IDENTIFY_FD_SEEDS),
            Fmt::int(),
        )
        .num(
            "gradients.identify.seconds_fd",
            top(col::IDENTIFY_SECONDS_FD_MEDIAN),
            Fmt::fixed(1).unit(" s"),
        )
        .num(
            "gradients.identify.chain_fd_mu_gap",
            top(col::IDENTIFY_CHAIN_FD_MU_GAP_MAX),
            Fmt::sci(0),
        );
}

/// A run-wide number of the study (every record repeats it), `NaN` where the run has none.
fn run_wide(df: &DataFrame, name: &str) -> f64 {
    f64s(df, name)
        .ok()
        .and_then(|v| v.first().copied())
        .unwrap_or(f64::NAN)
}

/// The run's settings the page and the findings quote.
fn settings_facts(r: &mut Report, df: &DataFrame) {
    let top = |k: &str| run_wide(df, k);
    r.facts()
        .num("gradients.tol", top(col::TOL), Fmt::sci(0))
        .num(
            "gradients.first_order_tol",
            top(col::FIRST_ORDER_TOL),
            Fmt::sci(0),
        )
        .num("gradients.h_max", top(col::H_LADDER_MAX), Fmt::sci(0))
        .num("gradients.h_min", top(col::H_LADDER_MIN), Fmt::sci(0))
        .num(
            "gradients.fd_consistent",
            top(col::FD_CONSISTENT),
            Fmt::sci(0),
        )
        .num(
            "gradients.mlcp_max_rows",
            top(col::MLCP_MAX_ROWS),
            Fmt::int(),
        )
        .num("gradients.first_order_bar", FIRST_ORDER_BAR, Fmt::int())
        .num("gradients.small_velocities", SMALL_VELOCITIES, Fmt::int());
}

/// Of converged records: the errors of those checked at a unique, non-degenerate answer, and
/// every timed one's first gradient over its solve.
fn checked_and_cost(of: &[&Record]) -> (Vec<f64>, Vec<f64>) {
    let errors = of
        .iter()
        .filter(|x| x.checked_unique())
        .map(|x| x.error())
        .filter(|v| v.is_finite())
        .collect();
    let over = of
        .iter()
        .map(|x| x.first_gradient() / x.get(col::SOLVE_S))
        .filter(|v| v.is_finite())
        .collect();
    (errors, over)
}

/// The facts the findings quote.
fn facts(r: &mut Report, df: &DataFrame, records: &[Record]) -> Result<(), ReportError> {
    let natural: Vec<&Record> = records.iter().filter(|x| x.pair == PAIRS[0].0).collect();
    let converged: Vec<&Record> = natural.iter().copied().filter(|x| x.converged()).collect();
    let (errors, over) = checked_and_cost(&converged);
    let non_unique: Vec<&Record> = converged.iter().copied().filter(|x| !x.unique()).collect();
    let nu_clean: Vec<&Record> = non_unique
        .iter()
        .copied()
        .filter(|x| x.class() == "non-unique")
        .collect();
    let nu_errors = checked_errors(&nu_clean);
    let within_solve = over.iter().filter(|v| **v <= 1.0).count();
    let small: Vec<f64> = converged
        .iter()
        .filter(|x| x.velocities() <= SMALL_VELOCITIES)
        .map(|x| 1e6 * x.first_gradient())
        .filter(|v| v.is_finite())
        .collect();
    let mujoco_set: Vec<f64> = converged
        .iter()
        .filter(|x| x.set == "mujoco")
        .map(|x| x.first_gradient() / x.get(col::SOLVE_S))
        .collect();
    let mujoco: Vec<f64> = converged
        .iter()
        .map(|x| x.get(col::MUJOCO_TRANSITION_FD_S) / x.first_gradient())
        .filter(|v| v.is_finite())
        .collect();
    let count = |fd: &str| converged.iter().filter(|x| x.fd == fd).count() as f64;
    settings_facts(r, df);
    rollout_facts(r, df);
    let f = r.facts();
    f.num("gradients.problems", natural.len() as f64, Fmt::int())
        .num("gradients.converged", converged.len() as f64, Fmt::int())
        .num("gradients.non_unique", non_unique.len() as f64, Fmt::int())
        .num("gradients.kinks", count("kink"), Fmt::int())
        .num("gradients.fd_failed", count("failed"), Fmt::int())
        .num("gradients.unique_checked", errors.len() as f64, Fmt::int())
        .num(
            "gradients.error_median",
            quantile(&errors, 0.5),
            Fmt::sci(0),
        )
        .num("gradients.error_p95", quantile(&errors, 0.95), Fmt::sci(0))
        .num(
            "gradients.non_unique_checked",
            nu_errors.len() as f64,
            Fmt::int(),
        )
        .num(
            "gradients.non_unique_error_median",
            quantile(&nu_errors, 0.5),
            Fmt::sci(0),
        )
        .num(
            "gradients.first_gradient_over_solve_median",
            quantile(&over, 0.5),
            Fmt::fixed(1),
        )
        .num("gradients.within_solve", within_solve as f64, Fmt::int())
        .num(
            "gradients.mujoco_set_first_gradient_over_solve",
            quantile(&mujoco_set, 0.5),
            Fmt::fixed(1),
        )
        .num("gradients.timed", over.len() as f64, Fmt::int())
        .num("gradients.small", small.len() as f64, Fmt::int())
        .num(
            "gradients.small_first_gradient_us",
            quantile(&small, 0.5),
            Fmt::fixed(0).unit(" us"),
        )
        .num(
            "gradients.mujoco_fd_over_ours_median",
            quantile(&mujoco, 0.5),
            Fmt::fixed(0),
        );
    other_facts(r, records);
    first_order_facts(r, &converged);
    Ok(())
}

/// The facts of each derivative but the natural map's (SAP's, the pyramid's, maximum
/// dissipation's, as the study keys
/// them: `gradients.<key>.*`): its converged answers, the checked ones' errors, the problems
/// where they disagree, and its first gradient's cost.
fn other_facts(r: &mut Report, records: &[Record]) {
    for (key, _) in &PAIRS[1..] {
        let of: Vec<&Record> = records
            .iter()
            .filter(|x| x.pair == *key && x.converged())
            .collect();
        let (errors, over) = checked_and_cost(&of);
        let beyond: Vec<&&Record> = of
            .iter()
            .filter(|x| x.checked_unique() && x.error() > AGREES)
            .collect();
        let disagreeing: Vec<String> = beyond.iter().map(|x| format!("`{}`", x.problem)).collect();
        // How many times its differences' own agreement the worst of those errors is (0 where
        // none disagrees).
        let over_fd = beyond
            .iter()
            .map(|x| x.error() / x.get(col::FD_AGREEMENT))
            .fold(0.0f64, f64::max);
        let median = |v: &[f64]| quantile(v, 0.5);
        r.facts()
            .text(
                format!("gradients.{key}.disagreeing"),
                if disagreeing.is_empty() {
                    "none".to_string()
                } else {
                    disagreeing.join(", ")
                },
            )
            .num(
                format!("gradients.{key}.converged"),
                of.len() as f64,
                Fmt::int(),
            )
            .num(
                format!("gradients.{key}.checked"),
                errors.len() as f64,
                Fmt::int(),
            )
            .num(
                format!("gradients.{key}.error_median"),
                median(&errors),
                Fmt::sci(0),
            )
            .num(
                format!("gradients.{key}.error_p95"),
                quantile(&errors, 0.95),
                Fmt::sci(0),
            )
            .num(
                format!("gradients.{key}.first_gradient_over_solve_median"),
                median(&over),
                Fmt::fixed(1),
            )
            .num(
                format!("gradients.{key}.disagreeing_over_fd_max"),
                over_fd,
                Fmt::fixed(1),
            );
    }
}

/// Per first-order pair: the answers it converged on, those within the bar, and the misses
/// where the answer is unique and no block degenerate (where the bar should hold).
fn first_order_facts(r: &mut Report, converged: &[&Record]) {
    let f = r.facts();
    for (key, _) in FIRST_ORDER {
        let judged: Vec<(&&Record, bool)> = converged
            .iter()
            .filter_map(|x| within_bar(x, key).map(|b| (x, b)))
            .collect();
        let clean_misses: Vec<String> = judged
            .iter()
            .filter(|(x, b)| !b && x.unique() && x.class() != "degenerate")
            .map(|(x, _)| format!("`{}`", x.problem))
            .collect();
        let within = judged.iter().filter(|(_, b)| *b).count();
        f.num(
            format!("gradients.{key}.converged"),
            judged.len() as f64,
            Fmt::int(),
        )
        .num(
            format!("gradients.{key}.within_bar"),
            within as f64,
            Fmt::int(),
        )
        .text(
            format!("gradients.{key}.unique_misses"),
            if clean_misses.is_empty() {
                "none".to_string()
            } else {
                clean_misses.join(", ")
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(values: &[(&str, f64)]) -> Record {
        Record {
            set: "mujoco".into(),
            pair: PAIRS[0].0.into(),
            problem: "p".into(),
            status: "converged".into(),
            fd: "consistent".into(),
            first_order_status: BTreeMap::new(),
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    /// A degenerate block puts an answer in its own class, unique or not; then non-unique
    /// answers; then a sliding block outranks sticking and separating ones.
    #[test]
    fn records_are_classed_by_uniqueness_then_their_worst_regime() {
        let base = [
            (col::NON_UNIQUE, 0.0),
            (col::BLOCKS_SLIDING, 2.0),
            (col::BLOCKS_DEGENERATE, 0.0),
        ];
        assert_eq!(record(&base).class(), "sliding");
        let mut degenerate = base;
        degenerate[2].1 = 1.0;
        assert_eq!(record(&degenerate).class(), "degenerate");
        let mut both = degenerate;
        both[0].1 = 1.0;
        assert_eq!(record(&both).class(), "degenerate");
        let mut non_unique = base;
        non_unique[0].1 = 1.0;
        assert_eq!(record(&non_unique).class(), "non-unique");
        assert_eq!(
            record(&[("non_unique", 0.0)]).class(),
            "sticking or separating"
        );
    }

    /// A first-order pair meets the bar when its derivative's gap on the checked outputs is
    /// within a hundred times its residual; without the numbers it is not judged.
    #[test]
    fn the_first_order_bar_is_a_hundred_residuals() {
        let x = record(&[
            ("first_order_pairs_pgs_residual", 1e-9),
            ("first_order_pairs_pgs_gap", 2e-7),
        ]);
        assert_eq!(within_bar(&x, "pgs"), Some(false));
        let y = record(&[
            ("first_order_pairs_pgs_residual", 1e-9),
            ("first_order_pairs_pgs_gap", 5e-8),
        ]);
        assert_eq!(within_bar(&y, "pgs"), Some(true));
        // An exact answer (residual 0) is judged at rounding.
        let exact = record(&[
            ("first_order_pairs_pgs_residual", 0.0),
            ("first_order_pairs_pgs_gap", 3e-16),
        ]);
        assert_eq!(within_bar(&exact, "pgs"), Some(true));
        assert_eq!(within_bar(&y, "admm"), None);
    }
}
