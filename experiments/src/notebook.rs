//! What the evcxr notebooks show, through evcxr's display protocol: tables as HTML, plots as
//! inline SVG, the committed report data as polars DataFrames, and DataFrame columns back as
//! ndarray.
//!
//! evcxr shows the last expression of a cell by calling its inherent `evcxr_display` method when
//! it has one; [`Html`] and [`Svg`] print their content between evcxr's
//! `EVCXR_BEGIN_CONTENT <mime>` / `EVCXR_END_CONTENT` markers, which Jupyter then renders (and
//! stores in the notebook file, so a committed notebook shows its tables and plots unexecuted).
//! Nothing of a paper's logic lives here: the statistics are [`crate::analysis`], the plots
//! [`crate::report::plots`]; this module only presents them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use contactlab_core::ndarray::Array1;
use contactlab_core::LocalSolve;
use polars::prelude::*;

use crate::report::plots::{Chart, Series};
use crate::report::ReportError;

/// An error of a notebook helper, with what it was looking for.
#[derive(Debug, thiserror::Error)]
pub enum NotebookError {
    /// No ancestor of the working directory is a contactlab checkout.
    #[error("no ancestor of {0} holds experiments/configs: run the notebook inside the contactlab checkout")]
    NoCheckout(PathBuf),
    /// A file (a report's CSV or SVG) that cannot be read.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A column missing from a DataFrame, or not numeric.
    #[error("column `{column}`: {message}")]
    Column {
        /// The column's name.
        column: String,
        /// What is wrong with it.
        message: String,
    },
    /// A plot that could not be drawn.
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// HTML that evcxr renders as such (a table, say) when it is a cell's last expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Html(pub String);

impl Html {
    /// evcxr's display hook: prints the HTML between evcxr's content markers.
    pub fn evcxr_display(&self) {
        println!(
            "EVCXR_BEGIN_CONTENT text/html\n{}\nEVCXR_END_CONTENT",
            self.0
        );
    }
}

/// An SVG image that evcxr renders inline when it is a cell's last expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Svg(pub String);

impl Svg {
    /// evcxr's display hook: prints the SVG between evcxr's content markers.
    pub fn evcxr_display(&self) {
        println!(
            "EVCXR_BEGIN_CONTENT image/svg+xml\n{}\nEVCXR_END_CONTENT",
            self.0
        );
    }

    /// An SVG file's content (a report's committed plot, say).
    pub fn from_file(path: &Path) -> Result<Svg, NotebookError> {
        std::fs::read_to_string(path)
            .map(Svg)
            .map_err(|e| NotebookError::File {
                path: path.to_path_buf(),
                message: format!("cannot read SVG: {e}"),
            })
    }

    /// Several images side by side, each `width_percent` of the cell's width (a figure's
    /// panels).
    pub fn row(images: &[Svg], width_percent: u32) -> Html {
        let mut html = String::from("<div style=\"display:flex;flex-wrap:wrap\">");
        for svg in images {
            let _ = write!(
                html,
                "<div style=\"width:{width_percent}%\">{}</div>",
                svg.0
                    .replacen("<svg ", "<svg style=\"width:100%;height:auto\" ", 1)
            );
        }
        html.push_str("</div>");
        Html(html)
    }
}

/// Draws `chart` with `series` (the same plots the reports draw) and returns the SVG.
pub fn chart(chart: &Chart, series: &[Series]) -> Result<Svg, NotebookError> {
    // plotters writes to a file: a private temporary one per process and call.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "contactlab-notebook-{}-{n}.svg",
        std::process::id()
    ));
    chart.draw(&path, series)?;
    let svg = Svg::from_file(&path);
    let _ = std::fs::remove_file(&path);
    svg
}

/// The contactlab checkout around the working directory: its first ancestor holding
/// `experiments/configs` (notebooks run from `experiments/notebooks/`).
pub fn workspace_root() -> Result<PathBuf, NotebookError> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    here.ancestors()
        .find(|p| p.join("experiments/configs").is_dir())
        .map(Path::to_path_buf)
        .ok_or(NotebookError::NoCheckout(here))
}

/// Reads a CSV file (header row, types inferred from every row) as a DataFrame.
pub fn read_csv(path: &Path) -> Result<DataFrame, NotebookError> {
    let err = |message: String| NotebookError::File {
        path: path.to_path_buf(),
        message,
    };
    if !path.is_file() {
        return Err(err("no such file".into()));
    }
    CsvReadOptions::default()
        .with_has_header(true)
        .with_infer_schema_length(None)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|r| r.finish())
        .map_err(|e| err(e.to_string()))
}

/// A committed report table, `reports/<paper>/<file>` under `root` (what `just reproduce
/// <paper>` wrote, so a notebook redraws the report without rerunning it).
pub fn report_frame(root: &Path, paper: &str, file: &str) -> Result<DataFrame, NotebookError> {
    read_csv(&root.join("reports").join(paper).join(file))
}

/// The column called `name`, found by comparing names one by one. Not `DataFrame::column`: in
/// evcxr every cell is its own library with its own copy of polars' hashing seeds, so a frame
/// made in one cell can fail a hashed lookup of its schema in the next (seen: "`solver` not
/// found" on a frame whose columns include `solver`).
fn find_column<'a>(df: &'a DataFrame, name: &str) -> Option<&'a Column> {
    df.columns().iter().find(|c| c.name().as_str() == name)
}

/// A numeric column as `f64` values, nulls (empty CSV cells) as NaN.
pub fn column_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>, NotebookError> {
    let err = |message: String| NotebookError::Column {
        column: name.to_string(),
        message,
    };
    let col = find_column(df, name).ok_or_else(|| {
        err(format!(
            "not in the DataFrame (columns: {})",
            df.get_column_names()
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    if !col.dtype().is_primitive_numeric() {
        return Err(err(format!("holds {}, not numbers", col.dtype())));
    }
    let cast = col
        .cast(&DataType::Float64)
        .map_err(|e| err(e.to_string()))?;
    let values = cast.f64().map_err(|e| err(e.to_string()))?;
    Ok(values.iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

/// A numeric column as an ndarray vector (for a user's own array code).
pub fn column_array(df: &DataFrame, name: &str) -> Result<Array1<f64>, NotebookError> {
    column_f64(df, name).map(Array1::from)
}

/// A string column's values (nulls as empty strings); a numeric column is written out.
pub fn column_strings(df: &DataFrame, name: &str) -> Result<Vec<String>, NotebookError> {
    let col = find_column(df, name).ok_or_else(|| NotebookError::Column {
        column: name.to_string(),
        message: "not in the DataFrame".into(),
    })?;
    Ok((0..col.len())
        .map(|i| col.get(i).map(|v| cell_text(&v)).unwrap_or_default())
        .collect())
}

/// The points `(x, y)` of two numeric columns, rows where either is NaN left out.
pub fn points(df: &DataFrame, x: &str, y: &str) -> Result<Vec<(f64, f64)>, NotebookError> {
    let (xs, ys) = (column_f64(df, x)?, column_f64(df, y)?);
    Ok(xs
        .into_iter()
        .zip(ys)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect())
}

/// One series per value of the column `group`, in order of first appearance: the points
/// `(x, y)` of its rows (rows where either is NaN left out).
pub fn series_by(
    df: &DataFrame,
    group: &str,
    x: &str,
    y: &str,
) -> Result<Vec<Series>, NotebookError> {
    let keys = column_strings(df, group)?;
    let (xs, ys) = (column_f64(df, x)?, column_f64(df, y)?);
    let mut out: Vec<Series> = Vec::new();
    for ((key, xv), yv) in keys.into_iter().zip(xs).zip(ys) {
        if !(xv.is_finite() && yv.is_finite()) {
            continue;
        }
        match out.iter_mut().find(|(name, _)| *name == key) {
            Some((_, points)) => points.push((xv, yv)),
            None => out.push((key, vec![(xv, yv)])),
        }
    }
    Ok(out)
}

/// The rows whose column `name`, written out as text, equals `value`.
pub fn rows_where(df: &DataFrame, name: &str, value: &str) -> Result<DataFrame, NotebookError> {
    let keep: Vec<bool> = column_strings(df, name)?
        .iter()
        .map(|v| v == value)
        .collect();
    let mask = BooleanChunked::from_slice("keep".into(), &keep);
    df.filter(&mask).map_err(|e| NotebookError::Column {
        column: name.to_string(),
        message: e.to_string(),
    })
}

/// A solve's merit per iteration as a plot series (a convergence history).
pub fn convergence(label: &str, solve: &LocalSolve) -> Series {
    history(label, solve, "merit")
}

/// A solve's per-iteration record `key` as a plot series over the iteration number: `merit`,
/// `grad_norm`, `step_norm`, `step_length`, `lambda`, or a column a driver adds (SAP's
/// `optimality`, eq. 26); iterations where it is missing or NaN are left out.
pub fn history(label: &str, solve: &LocalSolve, key: &str) -> Series {
    let points = solve
        .solution
        .trace
        .rows
        .iter()
        .filter_map(|r| {
            let v = match key {
                "merit" => Some(r.merit),
                "grad_norm" => Some(r.grad_norm),
                "step_norm" => Some(r.step_norm),
                "step_length" => Some(r.step_length),
                "lambda" => Some(r.lambda),
                other => r.extra.get(other).copied(),
            }?;
            v.is_finite().then_some((r.iter as f64, v))
        })
        .collect();
    (label.to_string(), points)
}

/// A DataFrame as an HTML table: numbers to four significant digits, nulls blank.
pub fn frame_html(df: &DataFrame) -> Html {
    let header: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let rows: Vec<Vec<String>> = (0..df.height())
        .map(|i| {
            df.columns()
                .iter()
                .map(|c| c.get(i).map(|v| cell_text(&v)).unwrap_or_default())
                .collect()
        })
        .collect();
    table_html(&header, &rows)
}

/// Rows of text as an HTML table (escaped), numbers right-aligned.
pub fn table_html<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> Html {
    let mut html = String::from("<table>\n<thead><tr>");
    for h in header {
        let _ = write!(html, "<th>{}</th>", escape(h.as_ref()));
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            let align = if cell.parse::<f64>().is_ok() {
                " style=\"text-align:right\""
            } else {
                ""
            };
            let _ = write!(html, "<td{align}>{}</td>", escape(cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table>");
    Html(html)
}

fn cell_text(v: &AnyValue<'_>) -> String {
    match v {
        AnyValue::Null => String::new(),
        AnyValue::String(s) => s.to_string(),
        AnyValue::StringOwned(s) => s.to_string(),
        AnyValue::Float64(x) => significant(*x, 4),
        AnyValue::Float32(x) => significant(f64::from(*x), 4),
        other => other.to_string(),
    }
}

/// `x` to `digits` significant digits: plain notation between 1e-3 and 1e6, scientific
/// otherwise, trailing zeros dropped.
pub fn significant(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-3..6).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{x:.prec$e}", prec = digits.saturating_sub(1))
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plots::Axis;

    #[test]
    fn significant_digits_in_both_notations() {
        assert_eq!(significant(0.930, 4), "0.93");
        assert_eq!(significant(1234.5678, 4), "1235");
        assert_eq!(significant(2.5229e-5, 3), "2.52e-5");
        assert_eq!(significant(-0.5, 4), "-0.5");
        assert_eq!(significant(1.0e7, 2), "1.0e7");
        assert_eq!(significant(0.0, 4), "0");
    }

    #[test]
    fn a_frame_becomes_an_escaped_html_table_with_its_values() {
        let df =
            df!("solver" => ["a<b", "pgs"], "ms" => [Some(0.25), None], "n" => [3i64, 4]).unwrap();
        let Html(h) = frame_html(&df);
        assert!(h.contains("<th>solver</th><th>ms</th><th>n</th>"), "{h}");
        assert!(
            h.contains("<td>a&lt;b</td><td style=\"text-align:right\">0.25</td>"),
            "{h}"
        );
        assert!(
            h.contains("<td>pgs</td><td></td><td style=\"text-align:right\">4</td>"),
            "{h}"
        );
        assert_eq!(h.matches("<tr>").count(), 3);
    }

    #[test]
    fn committed_report_csvs_load_and_columns_come_back_as_arrays() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let t1 = report_frame(root, "hwangbo2018", "table1.csv").unwrap();
        let methods = column_strings(&t1, "method").unwrap();
        assert_eq!(
            methods,
            [
                "bisection",
                "golden_section",
                "golden_section_closed",
                "analytical"
            ]
        );
        let published = column_array(&t1, "microseconds_published").unwrap();
        assert_eq!(published.len(), 4);
        assert_eq!(published[0], 0.58);
        // The closed-form golden section is ours, not the paper's: no published time.
        assert!(published[2].is_nan());
        let e = column_f64(&t1, "method").unwrap_err().to_string();
        assert!(e.contains("not numbers"), "{e}");
        let e = column_f64(&t1, "nope").unwrap_err().to_string();
        assert!(e.contains("microseconds_reproduced"), "{e}");
        assert!(report_frame(root, "hwangbo2018", "missing.csv").is_err());
        let t2 = report_frame(root, "hwangbo2018", "table2.csv").unwrap();
        let pgs = rows_where(&t2, "solver", "pgs").unwrap();
        assert_eq!(pgs.height(), 4);
        let by_solver = series_by(&t2, "solver", "iterations_mean", "iterations_max").unwrap();
        assert_eq!(by_solver.len(), 2);
        assert_eq!(by_solver[0].0, "bisection-sor");
        assert_eq!(by_solver[0].1.len() + by_solver[1].1.len(), 8);
    }

    #[test]
    fn histories_follow_the_solves_trace() {
        use crate::study::Study;
        use contactlab_core::{LocalProblem, Matrix};
        use contactlab_formulations::{ImplicitNcpFormulation, Todorov};
        let w = Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 2., 0., 0., 0., 2.]).unwrap();
        let p = LocalProblem::coulomb(w, vec![-1.0, 3.0, 0.0], &[0.5]);
        let s = Study::on(&p)
            .formulation(ImplicitNcpFormulation::default())
            .driver(Todorov::default())
            .tol(1e-10)
            .run()
            .unwrap();
        let (name, points) = convergence("todorov", &s);
        assert_eq!(name, "todorov");
        let rows = &s.solution.trace.rows;
        assert_eq!(points.len(), rows.len());
        assert_eq!(points[0], (0.0, rows[0].merit));
        assert!(history("todorov", &s, "no_such_column").1.is_empty());
    }

    #[test]
    fn charts_come_back_as_svg_and_display_with_evcxr_markers() {
        let c = Chart::new("t", Axis::linear("x"), Axis::log("y"));
        let svg = chart(&c, &[("s".into(), vec![(0.0, 1.0), (1.0, 0.1)])]).unwrap();
        assert!(svg.0.starts_with("<svg"), "{}", &svg.0[..40]);
        let Html(row) = Svg::row(&[svg.clone(), svg], 50);
        assert_eq!(row.matches("width:50%").count(), 2);
    }
}
