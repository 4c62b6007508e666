//! Column readers for run frames: a column as plain `f64`s or strings whatever type the Parquet
//! file stored, and the per-driver counters that only some solvers report. The reports, the
//! lab's tests and the notebooks all read runs through these.

use polars::prelude::{Column, DataFrame, DataType, PolarsResult};

/// A DataFrame column as floats (cast from any numeric type), `NaN` for nulls.
pub fn f64s(df: &DataFrame, name: &str) -> PolarsResult<Vec<f64>> {
    Ok(df
        .column(name)?
        .cast(&DataType::Float64)?
        .f64()?
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

/// A DataFrame column as strings (cast if needed), empty for nulls.
pub fn strs(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    Ok(df
        .column(name)?
        .cast(&DataType::String)?
        .str()?
        .iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect())
}

/// A per-driver counter column (`newton_accepted`, `restarts`, `pgs_sweeps`, ...) as floats:
/// zeros where the column is absent (no solver of the run reported that counter) and for
/// nulls (a solver without that counter).
pub fn counter(df: &DataFrame, name: &str) -> PolarsResult<Vec<f64>> {
    match df.column(name) {
        Err(_) => Ok(vec![0.0; df.height()]),
        Ok(_) => Ok(f64s(df, name)?
            .into_iter()
            .map(|v| if v.is_nan() { 0.0 } else { v })
            .collect()),
    }
}

/// `df` with each counter of `names` as a Float64 column read by [`counter`] (zeros when
/// absent), so lazy aggregations can name it whatever the run reported.
pub fn with_counters(df: &DataFrame, names: &[&str]) -> PolarsResult<DataFrame> {
    let mut out = df.clone();
    for name in names {
        let values = counter(df, name)?;
        out.with_column(Column::new((*name).into(), values))?;
    }
    Ok(out)
}
