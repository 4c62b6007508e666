//! The speed protocol of SAP beside MuJoCo's Newton solver (`reports/peers/`, section *SAP at
//! MuJoCo's speed*): per problem, our solve time (build included) over MuJoCo's cold
//! `mj_fwdConstraint`, split into three factors whose product is the ratio, so that a miss is
//! diagnosed rather than argued:
//!
//! `T / T_mj = (T / (T - B)) x (I / I_mj) x (((T - B) / I) / (T_mj / I_mj))`,
//!
//! with `T` our median time, `B` its build (SAP's regularisation from the Delassus estimate,
//! the Hessian's analysis: MuJoCo's counterparts run outside `mj_fwdConstraint`), `I` our
//! iterations summed over islands and `I_mj` MuJoCo's, counted the same way. The first factor
//! is the build's share, the second the iteration ratio, the third the per-iteration ratio.

use std::collections::BTreeMap;

use super::peers::{median, set_solver_pairs, MujocoSolve, Solve};

/// One problem's solve beside MuJoCo's cold solve.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedRow {
    /// The problem's name.
    pub problem: String,
    /// Its problem set.
    pub set: String,
    /// Contacts.
    pub contacts: usize,
    /// Our solver's label.
    pub solver: String,
    /// Our status by the shared ruler.
    pub status: String,
    /// Our median seconds, build included.
    pub seconds: f64,
    /// Of which the build.
    pub build_seconds: f64,
    /// Our iterations summed over islands.
    pub iterations: f64,
    /// MuJoCo's cold solve: median seconds and iterations summed over its islands.
    pub mujoco_seconds: f64,
    /// MuJoCo's iterations.
    pub mujoco_iterations: f64,
    /// `T / T_mj`.
    pub ratio: f64,
    /// `T / (T - B)`.
    pub build_factor: f64,
    /// `I / I_mj`.
    pub iteration_ratio: f64,
    /// `((T - B) / I) / (T_mj / I_mj)`.
    pub per_iteration_ratio: f64,
}

/// The rows of every solve whose problem MuJoCo timed cold.
pub fn speed_rows(solves: &[Solve], mujoco: &BTreeMap<String, MujocoSolve>) -> Vec<SpeedRow> {
    solves
        .iter()
        .filter_map(|s| {
            let m = mujoco.get(&s.problem)?;
            if !(m.cold_seconds.is_finite() && m.cold_iterations > 0.0) {
                return None;
            }
            let solve = s.seconds - s.build_seconds;
            Some(SpeedRow {
                problem: s.problem.clone(),
                set: s.set.clone(),
                contacts: s.contacts,
                solver: s.solver.clone(),
                status: s.status.clone(),
                seconds: s.seconds,
                build_seconds: s.build_seconds,
                iterations: s.island_iterations,
                mujoco_seconds: m.cold_seconds,
                mujoco_iterations: m.cold_iterations,
                ratio: s.seconds / m.cold_seconds,
                build_factor: s.seconds / solve,
                iteration_ratio: s.island_iterations / m.cold_iterations,
                per_iteration_ratio: (solve / s.island_iterations)
                    / (m.cold_seconds / m.cold_iterations),
            })
        })
        .collect()
}

/// Per (set, solver): the medians over the set's problems of the ratio and of each factor,
/// and how many of its problems converged.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedSummary {
    /// The problem set.
    pub set: String,
    /// Our solver's label.
    pub solver: String,
    /// Problems.
    pub problems: usize,
    /// Of which converged.
    pub converged: usize,
    /// Median `T / T_mj`.
    pub ratio: f64,
    /// Median build factor.
    pub build_factor: f64,
    /// Median iteration ratio.
    pub iteration_ratio: f64,
    /// Median per-iteration ratio.
    pub per_iteration_ratio: f64,
    /// Median over problems of our seconds without the build over MuJoCo's.
    pub ratio_without_build: f64,
}

/// [`SpeedSummary`] per (set, solver), in first-seen order.
pub fn summaries(rows: &[SpeedRow]) -> Vec<SpeedSummary> {
    set_solver_pairs(rows.iter().map(|x| (x.set.as_str(), x.solver.as_str())))
        .into_iter()
        .map(|(set, solver)| {
            let of: Vec<&SpeedRow> = rows
                .iter()
                .filter(|r| r.set == set && r.solver == solver)
                .collect();
            let med =
                |f: &dyn Fn(&SpeedRow) -> f64| median(&of.iter().map(|r| f(r)).collect::<Vec<_>>());
            SpeedSummary {
                problems: of.len(),
                converged: of.iter().filter(|r| r.status == "converged").count(),
                ratio: med(&|r| r.ratio),
                build_factor: med(&|r| r.build_factor),
                iteration_ratio: med(&|r| r.iteration_ratio),
                per_iteration_ratio: med(&|r| r.per_iteration_ratio),
                ratio_without_build: med(&|r| (r.seconds - r.build_seconds) / r.mujoco_seconds),
                set,
                solver,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(problem: &str, seconds: f64, build: f64, iterations: f64) -> Solve {
        Solve {
            problem: problem.into(),
            set: "big".into(),
            contacts: 100,
            solver: "sap+newton-merit".into(),
            pair: "sap+newton-merit".into(),
            layout: "islands+blocks".into(),
            status: "converged".into(),
            iterations,
            island_iterations: iterations,
            islands: 1,
            largest_island: 100,
            residual: 0.0,
            rounds: 20,
            seconds,
            seconds_min: seconds,
            build_seconds: build,
            answer: Vec::new(),
        }
    }

    fn mujoco(problem: &str, cold: f64, iterations: f64) -> (String, MujocoSolve) {
        (
            problem.into(),
            MujocoSolve {
                problem: problem.into(),
                seconds: cold / 2.0,
                iterations,
                cold: true,
                repeats: 50.0,
                abs_residual: 1e-6,
                replay_matches: true,
                version: "4.0.0".into(),
                cold_seconds: cold,
                cold_iterations: iterations,
                cold_tolerance: 1e-6,
            },
        )
    }

    #[test]
    fn the_three_factors_multiply_to_the_ratio() {
        // 4 ms with 1 ms of build in 30 iterations, against 1 ms in 10: ratio 4 =
        // (4/3) x 3 x ((3/30) / (1/10) = 1).
        let mj: BTreeMap<_, _> = [mujoco("a", 1e-3, 10.0), mujoco("b", 2e-3, 20.0)].into();
        let rows = speed_rows(
            &[
                solve("a", 4e-3, 1e-3, 30.0),
                solve("b", 2e-3, 0.0, 10.0),
                solve("c", 1.0, 0.0, 1.0),
            ],
            &mj,
        );
        assert_eq!(rows.len(), 2, "a problem MuJoCo did not time has no row");
        let a = &rows[0];
        assert!((a.ratio - 4.0).abs() < 1e-12);
        assert!((a.build_factor - 4.0 / 3.0).abs() < 1e-12);
        assert!((a.iteration_ratio - 3.0).abs() < 1e-12);
        assert!((a.per_iteration_ratio - 1.0).abs() < 1e-12);
        for r in &rows {
            let product = r.build_factor * r.iteration_ratio * r.per_iteration_ratio;
            assert!((product - r.ratio).abs() < 1e-12 * r.ratio);
        }
        let s = summaries(&rows);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].problems, s[0].converged), (2, 2));
        // Ratios 4 and 1: the median of two is their mean.
        assert!((s[0].ratio - 2.5).abs() < 1e-12);
        assert!((s[0].ratio_without_build - 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_run_without_the_cold_variant_gives_no_rows() {
        let (k, mut m) = mujoco("a", 1e-3, 10.0);
        m.cold_seconds = f64::NAN;
        let mj: BTreeMap<_, _> = [(k, m)].into();
        assert!(speed_rows(&[solve("a", 1e-3, 0.0, 3.0)], &mj).is_empty());
    }
}
