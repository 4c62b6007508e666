//! Analysis of run data: the statistics that reports, tests and notebooks compute from the
//! steps DataFrames the runner writes (`data/runs/<paper>/<name>.parquet`), one module per
//! paper (and one for the comparison beside MuJoCo and Drake), plus the column readers and
//! spread statistics they share.
//!
//! Nothing here writes files or formats prose: the report modules of this crate turn these
//! numbers into tables, plots and checked findings.

pub mod castro2022;
pub mod erleben2008;
pub mod fidelity;
pub mod hwangbo2018;
pub mod mylapilli2014;
pub mod peers;
pub mod pinocchio;
pub mod speed;
pub mod todorov2010;

use std::collections::BTreeMap;

pub use contactlab_runs::columns::{counter, f64s, strs, with_counters};
use polars::prelude::{DataFrame, PolarsResult};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Errors of an analysis: a missing column or series, or polars failing.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A column, a solver's rows or another piece of data the statistic needs is absent.
    #[error("{0}")]
    MissingData(String),
    /// Aggregating the DataFrame failed.
    #[error("data frame: {0}")]
    Frame(#[from] polars::prelude::PolarsError),
}

/// Minimum, mean and maximum of a sample, and its size: the spread of a per-run statistic
/// over the runs (seeds) a table cell averages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Smallest value (NaN for an empty sample).
    pub min: f64,
    /// Mean (NaN for an empty sample).
    pub mean: f64,
    /// Largest value (NaN for an empty sample).
    pub max: f64,
    /// Number of values.
    pub n: usize,
}

impl Spread {
    /// `[min, max]`, for a range fact (`6-7`).
    pub fn range(&self) -> Vec<f64> {
        vec![self.min, self.max]
    }

    /// `max - min` (NaN for an empty sample).
    pub fn width(&self) -> f64 {
        self.max - self.min
    }

    /// The spread of the finite values of `values` (NaN are left out and not counted).
    pub fn of(values: &[f64]) -> Spread {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Spread {
                min: f64::NAN,
                mean: f64::NAN,
                max: f64::NAN,
                n: 0,
            };
        }
        Spread {
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n: v.len(),
        }
    }
}

/// A text column, empty strings where the frame lacks it (a harness's record may leave a
/// field out).
pub fn texts_or_empty(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    if df.column(name).is_ok() {
        strs(df, name)
    } else {
        Ok(vec![String::new(); df.height()])
    }
}

/// Every float column of a frame by name: a harness's numbers, whatever it recorded.
pub fn float_columns(df: &DataFrame) -> PolarsResult<Vec<(String, Vec<f64>)>> {
    let mut out = Vec::new();
    for c in df.columns() {
        if c.dtype().is_float() {
            out.push((c.name().to_string(), f64s(df, c.name())?));
        }
    }
    Ok(out)
}

/// Per row, its finite numbers by column name (`columns` from [`float_columns`]).
pub fn finite_row(columns: &[(String, Vec<f64>)], row: usize) -> BTreeMap<String, f64> {
    columns
        .iter()
        .filter(|(_, v)| v[row].is_finite())
        .map(|(n, v)| (n.clone(), v[row]))
        .collect()
}

/// The distinct values in the order first met.
pub fn first_seen<'a>(values: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

/// The `q`-quantile (0 to 1) of the finite values of `values` by linear interpolation between
/// order statistics (NaN for an empty sample).
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    match v.get(i + 1) {
        Some(next) => v[i] + frac * (next - v[i]),
        None => v[i],
    }
}

/// Spearman's rank correlation of the pairs `(x_i, y_i)` whose two values are finite: the
/// Pearson correlation of their ranks, ties given their mean rank (NaN for fewer than three
/// pairs or a constant side).
pub fn rank_correlation(x: &[f64], y: &[f64]) -> f64 {
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .map(|(a, b)| (*a, *b))
        .collect();
    if pairs.len() < 3 {
        return f64::NAN;
    }
    let ranks = |v: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..v.len()).collect();
        order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        let mut r = vec![0.0; v.len()];
        let mut k = 0;
        while k < order.len() {
            let mut end = k + 1;
            while end < order.len() && v[order[end]] == v[order[k]] {
                end += 1;
            }
            let mean = (k + end - 1) as f64 / 2.0 + 1.0;
            for &i in &order[k..end] {
                r[i] = mean;
            }
            k = end;
        }
        r
    };
    let rx = ranks(pairs.iter().map(|p| p.0).collect());
    let ry = ranks(pairs.iter().map(|p| p.1).collect());
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    sxy / (sxx * syy).sqrt()
}

/// Resamples of [`bootstrap_mean_interval`] in the reports.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// A percentile bootstrap interval of the mean of `values` at `level` (0.95 for 95%):
/// `resamples` means of samples drawn with replacement by a ChaCha8 generator seeded with
/// `seed`, so the interval is the same on every machine. NaN bounds for an empty sample.
pub fn bootstrap_mean_interval(
    values: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> (f64, f64) {
    let n = values.len();
    if n == 0 || resamples == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    let at = |q: f64| means[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    (at(tail), at(1.0 - tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::df;

    #[test]
    fn rank_correlation_is_one_for_any_increasing_map_and_handles_ties() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y: Vec<f64> = x.iter().map(|v: &f64| v.powi(3) + 7.0).collect();
        assert!((rank_correlation(&x, &y) - 1.0).abs() < 1e-15);
        let down: Vec<f64> = x.iter().map(|v| -v.exp()).collect();
        assert!((rank_correlation(&x, &down) + 1.0).abs() < 1e-15);
        // scipy.stats.spearmanr([1, 2, 2, 3], [1, 3, 2, 4]) = 0.9486832980505138 (ties: mean
        // ranks 2.5); a NaN pair is left out.
        let r = rank_correlation(&[1.0, 2.0, 2.0, 3.0, f64::NAN], &[1.0, 3.0, 2.0, 4.0, 0.0]);
        assert!((r - 0.9486832980505138).abs() < 1e-12, "{r}");
        assert!(rank_correlation(&[1.0, 2.0], &[2.0, 1.0]).is_nan());
    }

    #[test]
    fn counters_read_zeros_when_absent() {
        let df = df!(
            "iterations" => [1u64, 2, 3],
            "pgs_sweeps" => [4u64, 0, 4],
            "newton_accepted" => [Some(1u64), None, Some(3)],
        )
        .unwrap();
        assert_eq!(counter(&df, "pgs_sweeps").unwrap(), [4.0, 0.0, 4.0]);
        assert_eq!(counter(&df, "restarts").unwrap(), [0.0, 0.0, 0.0]);
        assert_eq!(counter(&df, "newton_accepted").unwrap(), [1.0, 0.0, 3.0]);
        let added = with_counters(&df, &["pgs_sweeps", "restarts"]).unwrap();
        assert_eq!(f64s(&added, "pgs_sweeps").unwrap(), [4.0, 0.0, 4.0]);
        assert_eq!(f64s(&added, "restarts").unwrap(), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn spread_ignores_nan_and_counts() {
        let s = Spread::of(&[2.0, f64::NAN, 4.0, 3.0]);
        assert_eq!((s.min, s.mean, s.max, s.n), (2.0, 3.0, 4.0, 3));
        assert_eq!((s.range(), s.width()), (vec![2.0, 4.0], 2.0));
        let e = Spread::of(&[]);
        assert!(e.min.is_nan() && e.n == 0);
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [4.0, 1.0, 3.0, 2.0, f64::NAN];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn bootstrap_interval_is_seeded_and_brackets_the_mean() {
        let v: Vec<f64> = (0..40).map(|i| f64::from(i % 7)).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let a = bootstrap_mean_interval(&v, 0.95, 500, 3);
        assert_eq!(a, bootstrap_mean_interval(&v, 0.95, 500, 3));
        assert!(a.0 < mean && mean < a.1, "{a:?} around {mean}");
        assert!(a.1 - a.0 < 2.0);
        // A constant sample has a zero-width interval.
        assert_eq!(bootstrap_mean_interval(&[5.0; 9], 0.95, 100, 0), (5.0, 5.0));
        assert!(bootstrap_mean_interval(&[], 0.95, 100, 0).0.is_nan());
    }
}
