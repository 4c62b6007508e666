//! SVG plots for reports.

use std::path::Path;

use plotters::prelude::*;

use super::ReportError;

/// Named series of points.
pub type Series = (String, Vec<(f64, f64)>);

/// Eight distinguishable line colours (matplotlib's "tab10" order).
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn plot_err<E: std::fmt::Debug>(path: &Path) -> impl Fn(E) -> ReportError + '_ {
    move |e| ReportError::Plot(format!("{}: {e:?}", path.display()))
}

/// A line plot of several series, each point marked; `log_y` plots `log10(y)` (points with
/// `y <= 0` dropped).
pub fn line_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_y: bool,
) -> Result<(), ReportError> {
    let axes = Axes::new(title, x_label, y_label, log_y);
    lines(path, &axes, None, series, true)
}

/// Lines without point markers (for long time series), with an optional reference curve drawn
/// black and dashed on top (an exact solution); `log_y` plots `log10(y)` (points with `y <= 0`
/// dropped).
pub fn overlay_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    reference: Option<&Series>,
    series: &[Series],
    log_y: bool,
) -> Result<(), ReportError> {
    let axes = Axes::new(title, x_label, y_label, log_y);
    lines(path, &axes, reference, series, false)
}

/// Title, axis labels and scale of a line chart.
struct Axes<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    log_y: bool,
}

impl<'a> Axes<'a> {
    fn new(title: &'a str, x_label: &'a str, y_label: &'a str, log_y: bool) -> Axes<'a> {
        Axes {
            title,
            x_label,
            y_label,
            log_y,
        }
    }
}

/// The one line-chart drawer behind [`line_plot`] and [`overlay_plot`].
fn lines(
    path: &Path,
    axes: &Axes<'_>,
    reference: Option<&Series>,
    series: &[Series],
    markers: bool,
) -> Result<(), ReportError> {
    let log_y = axes.log_y;
    let keep = |p: &(f64, f64)| !log_y || p.1 > 0.0;
    let map = |(x, y): (f64, f64)| (x, if log_y { y.log10() } else { y });
    let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let prepared: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .chain(reference)
        .map(|(n, p)| {
            let pts = p.iter().copied().filter(keep).map(map).filter(finite);
            (n.clone(), pts.collect())
        })
        .collect();
    let all = prepared.iter().flat_map(|(_, p)| p.iter());
    let (x0, x1) = bounds(all.clone().map(|p| p.0));
    let (y0, y1) = bounds(all.map(|p| p.1));
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(axes.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(plot_err(path))?;
    let y_desc = if log_y {
        format!("log10 {}", axes.y_label)
    } else {
        axes.y_label.to_string()
    };
    chart
        .configure_mesh()
        .x_desc(axes.x_label)
        .y_desc(y_desc)
        .draw()
        .map_err(plot_err(path))?;
    for (i, (name, data)) in prepared.iter().take(series.len()).enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
            .map_err(plot_err(path))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        if markers {
            chart
                .draw_series(
                    data.iter()
                        .map(|&(x, y)| Circle::new((x, y), 2, color.filled())),
                )
                .map_err(plot_err(path))?;
        }
    }
    if let Some((name, data)) = prepared.get(series.len()).filter(|_| reference.is_some()) {
        chart
            .draw_series(DashedLineSeries::new(
                data.clone(),
                6,
                4,
                BLACK.stroke_width(2),
            ))
            .map_err(plot_err(path))?
            .label(name.clone())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err(path))?;
    root.present().map_err(plot_err(path))?;
    Ok(())
}

/// A bar histogram of integer counts: bar at `k` has the number of values equal to `k`.
pub fn histogram(
    path: &Path,
    title: &str,
    x_label: &str,
    values: &[u64],
) -> Result<(), ReportError> {
    let max = values.iter().copied().max().unwrap_or(0);
    let mut counts = vec![0u64; max as usize + 1];
    for &v in values {
        counts[v as usize] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(1).max(1);
    let root = SVGBackend::new(path, (720, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0u64..max + 1).into_segmented(), 0u64..top + top / 10 + 1)
        .map_err(plot_err(path))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("steps")
        .draw()
        .map_err(plot_err(path))?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .style(COLORS[0].filled())
                .margin(2)
                .data(values.iter().map(|&v| (v, 1u64))),
        )
        .map_err(plot_err(path))?;
    root.present().map_err(plot_err(path))?;
    Ok(())
}

fn bounds(it: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = it.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}
