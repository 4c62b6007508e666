//! Our ADMM and PGS beside Pinocchio's (`reports/peers/`, section *Beside Pinocchio's
//! solvers*): per problem, the time each solver needs to reach our natural-map residual
//! tolerance, from a cold start. Ours is a problem-set run (`pinocchio.toml`), whose solve time
//! is `seconds - build_seconds` (Pinocchio is handed `W` already formed); Pinocchio's is the
//! cheapest rung of its own tolerance ladder whose answer meets our tolerance
//! (`experiments/peers/pinocchio_solvers.py`, rows `to_tol`), or none.

use polars::prelude::DataFrame;

use super::peers::{median, problem_stem, set_solver_pairs, Solve};
use super::{f64s, strs, AnalysisError};

/// One solver's solve of one problem, to our tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct ToTol {
    /// The problem set.
    pub set: String,
    /// The problem's file stem.
    pub problem: String,
    /// The solver: ours by its label, Pinocchio's by the harness's name.
    pub solver: String,
    /// Seconds to reach the tolerance; NaN when it did not.
    pub seconds: f64,
}

impl ToTol {
    /// Whether it reached the tolerance.
    pub fn reached(&self) -> bool {
        self.seconds.is_finite()
    }
}

/// Ours, from a problem-set run's solves: the solve without forming `W`, when converged.
pub fn ours(solves: &[Solve]) -> Vec<ToTol> {
    solves
        .iter()
        .map(|s| ToTol {
            set: s.set.clone(),
            problem: problem_stem(&s.problem).to_string(),
            solver: s.solver.clone(),
            seconds: if s.converged() {
                s.seconds - s.build_seconds
            } else {
                f64::NAN
            },
        })
        .collect()
}

/// Pinocchio's, from the harness's `to_tol` rows (`seconds_to_tol` null: not reached).
pub fn theirs(df: &DataFrame) -> Result<Vec<ToTol>, AnalysisError> {
    let (row, set, problem, solver) = (
        strs(df, "row")?,
        strs(df, "set")?,
        strs(df, "problem")?,
        strs(df, "solver")?,
    );
    let seconds = f64s(df, "seconds_to_tol")?;
    Ok((0..df.height())
        .filter(|&i| row[i] == "to_tol")
        .map(|i| ToTol {
            set: set[i].clone(),
            problem: problem_stem(&problem[i]).to_string(),
            solver: solver[i].clone(),
            seconds: seconds[i],
        })
        .collect())
}

/// Per (set, solver): problems, how many reached the tolerance, the median seconds over those.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    /// The problem set.
    pub set: String,
    /// The solver.
    pub solver: String,
    /// Problems.
    pub problems: usize,
    /// Of which it reached the tolerance.
    pub reached: usize,
    /// Median seconds over the problems it reached the tolerance on.
    pub median_seconds: f64,
    /// Problems on which it was the first to reach the tolerance among all solvers.
    pub first: usize,
}

/// [`Reach`] per set and solver, in first-seen order.
pub fn reach(all: &[ToTol]) -> Vec<Reach> {
    set_solver_pairs(all.iter().map(|x| (x.set.as_str(), x.solver.as_str())))
        .into_iter()
        .map(|(set, solver)| {
            let of: Vec<&ToTol> = all
                .iter()
                .filter(|t| t.set == set && t.solver == solver)
                .collect();
            let first = of
                .iter()
                .filter(|t| {
                    t.reached() && fastest(all, &t.set, &t.problem) == Some(t.solver.as_str())
                })
                .count();
            Reach {
                problems: of.len(),
                reached: of.iter().filter(|t| t.reached()).count(),
                median_seconds: median(&of.iter().map(|t| t.seconds).collect::<Vec<_>>()),
                first,
                set,
                solver,
            }
        })
        .collect()
}

/// The solver that reached the tolerance first on one problem (`None` when none did).
fn fastest<'a>(all: &'a [ToTol], set: &str, problem: &str) -> Option<&'a str> {
    all.iter()
        .filter(|t| t.set == set && t.problem == problem && t.reached())
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds))
        .map(|t| t.solver.as_str())
}

/// The solve time (s) that splits a head-to-head: below it a solve is mostly fixed cost
/// (setup, the first factorization, the executor), above it mostly iterations.
pub const SHORT_SOLVE: f64 = 1e-4;

/// One solver against another on a set: the problems both reach the tolerance on, and the
/// median over those of the first's time over the second's, overall and split by whether the
/// second's time is below [`SHORT_SOLVE`].
#[derive(Debug, Clone, PartialEq)]
pub struct HeadToHead {
    /// The problem set.
    pub set: String,
    /// Problems both reached the tolerance on.
    pub both: usize,
    /// Median of `seconds(a) / seconds(b)` over them.
    pub median_ratio: f64,
    /// Of those, the problems `b` solves in under [`SHORT_SOLVE`], and the median ratio there.
    pub short: (usize, f64),
    /// The others, and the median ratio there.
    pub long: (usize, f64),
}

/// `a` against `b` on `set`.
pub fn head_to_head(all: &[ToTol], set: &str, a: &str, b: &str) -> HeadToHead {
    let pairs: Vec<(f64, f64)> = all
        .iter()
        .filter(|t| t.set == set && t.solver == a && t.reached())
        .filter_map(|ta| {
            all.iter()
                .find(|tb| tb.set == set && tb.solver == b && tb.problem == ta.problem)
                .filter(|tb| tb.reached())
                .map(|tb| (ta.seconds / tb.seconds, tb.seconds))
        })
        .collect();
    let part = |short: bool| {
        let r: Vec<f64> = pairs
            .iter()
            .filter(|(_, t)| (*t < SHORT_SOLVE) == short)
            .map(|(r, _)| *r)
            .collect();
        (r.len(), median(&r))
    };
    let ratios: Vec<f64> = pairs.iter().map(|(r, _)| *r).collect();
    HeadToHead {
        set: set.into(),
        both: ratios.len(),
        median_ratio: median(&ratios),
        short: part(true),
        long: part(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(problem: &str, solver: &str, seconds: f64) -> ToTol {
        ToTol {
            set: "s".into(),
            problem: problem.into(),
            solver: solver.into(),
            seconds,
        }
    }

    #[test]
    fn reach_counts_first_places_and_medians_over_reached_problems() {
        let all = vec![
            t("p1", "ours", 1.0),
            t("p1", "theirs", 2.0),
            t("p2", "ours", 4.0),
            t("p2", "theirs", 3.0),
            t("p3", "ours", f64::NAN),
            t("p3", "theirs", 5.0),
        ];
        let r = reach(&all);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (
                r[0].solver.as_str(),
                r[0].problems,
                r[0].reached,
                r[0].first
            ),
            ("ours", 3, 2, 1)
        );
        assert_eq!((r[1].reached, r[1].first), (3, 2));
        assert!((r[0].median_seconds - 2.5).abs() < 1e-12);
        assert!((r[1].median_seconds - 3.0).abs() < 1e-12);
        // Head to head on the problems both reach: 1/2 and 4/3, median their mean.
        let h = head_to_head(&all, "s", "ours", "theirs");
        assert_eq!(h.both, 2);
        assert!((h.median_ratio - (0.5 + 4.0 / 3.0) / 2.0).abs() < 1e-12);
        // Their times (2 s and 3 s) are both long solves.
        assert_eq!(h.short.0, 0);
        assert!(h.short.1.is_nan());
        assert_eq!(h.long.0, 2);
        // A problem they solve in 50 us, where ours takes 150 us, is a short one.
        let mut more = all.clone();
        more.push(t("p4", "ours", 1.5e-4));
        more.push(t("p4", "theirs", 5e-5));
        let h = head_to_head(&more, "s", "ours", "theirs");
        assert_eq!((h.both, h.short.0, h.long.0), (3, 1, 2));
        assert!((h.short.1 - 3.0).abs() < 1e-12);
    }
}
