//! Conversions of core's results into polars DataFrames (polars lives here, not in `core`).

use contactlab_core::Trace;
use contactlab_runs::schema::{common, traces};
use polars::prelude::*;

/// One row per trace record: `iter`, `merit`, `grad_norm`, `step_norm`, `step_kind`,
/// `step_length`, `lambda`, `active`, `seconds`, plus one column per `extra` key (missing
/// values are null).
pub fn trace_to_dataframe(trace: &Trace) -> PolarsResult<DataFrame> {
    let rows = &trace.rows;
    let mut df = df!(
        traces::ITER => rows.iter().map(|r| r.iter).collect::<Vec<u64>>(),
        traces::MERIT => rows.iter().map(|r| r.merit).collect::<Vec<f64>>(),
        traces::GRAD_NORM => rows.iter().map(|r| r.grad_norm).collect::<Vec<f64>>(),
        "step_norm" => rows.iter().map(|r| r.step_norm).collect::<Vec<f64>>(),
        traces::STEP_KIND => rows.iter().map(|r| r.step_kind.clone()).collect::<Vec<Option<String>>>(),
        traces::STEP_LENGTH => rows.iter().map(|r| r.step_length).collect::<Vec<f64>>(),
        traces::LAMBDA => rows.iter().map(|r| r.lambda).collect::<Vec<f64>>(),
        "active" => rows.iter().map(|r| r.active).collect::<Vec<Option<u64>>>(),
        common::SECONDS => rows.iter().map(|r| r.seconds).collect::<Vec<f64>>(),
    )?;
    let keys: std::collections::BTreeSet<&String> =
        rows.iter().flat_map(|r| r.extra.keys()).collect();
    for key in keys {
        let col: Vec<Option<f64>> = rows.iter().map(|r| r.extra.get(key).copied()).collect();
        df.with_column(Column::new(key.as_str().into(), col))?;
    }
    Ok(df)
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::TraceRow;
    use std::collections::BTreeMap;

    #[test]
    fn trace_becomes_a_frame_with_its_values() {
        let row = |iter: u64, merit: f64, extra: Option<f64>| TraceRow {
            iter,
            merit,
            grad_norm: 1.0,
            step_norm: f64::NAN,
            step_kind: Some("newton".into()),
            step_length: 1.0,
            lambda: 1e-3,
            active: Some(2),
            seconds: 0.0,
            extra: extra
                .map(|v| BTreeMap::from([("newton_accepted".to_string(), v)]))
                .unwrap_or_default(),
        };
        let trace = Trace {
            rows: vec![row(0, 4.0, None), row(1, 0.5, Some(1.0))],
        };
        let df = trace_to_dataframe(&trace).unwrap();
        assert_eq!(df.height(), 2);
        let merit: Vec<f64> = df
            .column("merit")
            .unwrap()
            .f64()
            .unwrap()
            .into_no_null_iter()
            .collect();
        assert_eq!(merit, vec![4.0, 0.5]);
        let acc = df.column("newton_accepted").unwrap().f64().unwrap();
        assert_eq!(acc.get(0), None);
        assert_eq!(acc.get(1), Some(1.0));
        assert_eq!(
            df.column("step_kind").unwrap().str().unwrap().get(1),
            Some("newton")
        );
    }
}
