//! SVG plots for reports (plotters, no system fonts needed).
//!
//! What a reader can trust at a glance: every series has its own colour, dash pattern and
//! marker ([`style`]: ten colours and four dash patterns give 20 distinct lines, and
//! neighbours in the legend differ in all three); logarithmic axes are real ones (plotters'
//! `.log_scale()`) with decade ticks written as papers write them (`0.1`, `1`, `10`, `10⁻⁶`); axes whose data are whole numbers
//! (iterations, steps, sizes) get whole-number ticks written without `.0`.

use std::ops::Range;
use std::path::Path;

use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::error::ReportError;

/// Named series of points.
pub type Series = (String, Vec<(f64, f64)>);

/// Ten line colours (matplotlib's "tab10" order).
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// A line's dash pattern: `(dash, gap)` in pixels, `None` for a solid line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dash(pub Option<(u32, u32)>);

/// Solid, dashed, dotted, long-dashed.
const DASHES: [Dash; 4] = [
    Dash(None),
    Dash(Some((8, 4))),
    Dash(Some((2, 3))),
    Dash(Some((16, 4))),
];

/// A point marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled triangle.
    Triangle,
    /// A cross.
    Cross,
    /// An open circle.
    Ring,
}

const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Cross,
    Marker::Ring,
];

/// How series `i` of a plot is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// Line and marker colour.
    pub color: RGBColor,
    /// Dash pattern.
    pub dash: Dash,
    /// Marker shape (on plots with markers).
    pub marker: Marker,
}

/// The style of series `i`: colour `i mod 10`, dash and marker `i mod 4`, so the first 20
/// series differ in colour or dash, the first four in all three, and consecutive series in all
/// three.
pub fn style(i: usize) -> Style {
    Style {
        color: COLORS[i % COLORS.len()],
        dash: DASHES[i % DASHES.len()],
        marker: MARKERS[i % MARKERS.len()],
    }
}

/// An axis scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (points with values `<= 0` are not drawn).
    Log,
}

/// One axis of a line chart: label, scale, and optionally the tick values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Axis label.
    pub label: String,
    /// Scale.
    pub scale: Scale,
    /// Tick values; `None` chooses them from the data ([`linear_ticks`], [`log_ticks`]).
    pub ticks: Option<Vec<f64>>,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.to_string(),
            scale: Scale::Linear,
            ticks: None,
        }
    }

    /// A logarithmic axis.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.to_string(),
            scale: Scale::Log,
            ticks: None,
        }
    }

    /// The same axis with ticks at `ticks` (e.g. the problem sizes of a sweep).
    pub fn ticks(mut self, ticks: Vec<f64>) -> Axis {
        self.ticks = Some(ticks);
        self
    }
}

/// A line chart: title, axes, whether points are marked, and an optional reference curve
/// (an exact solution) drawn black and long-dashed on top.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Mark every point (for short series).
    pub markers: bool,
    /// The reference curve.
    pub reference: Option<Series>,
    /// Legend in the upper left corner instead of the middle right (for data rising to the
    /// right).
    pub legend_upper_left: bool,
}

impl Chart {
    /// A chart with points marked and no reference curve.
    pub fn new(title: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            title: title.to_string(),
            x,
            y,
            markers: true,
            reference: None,
            legend_upper_left: false,
        }
    }

    /// The same chart with its legend in the upper left corner.
    pub fn legend_upper_left(mut self) -> Chart {
        self.legend_upper_left = true;
        self
    }

    /// The same chart without point markers (long time series).
    pub fn lines_only(mut self) -> Chart {
        self.markers = false;
        self
    }

    /// The same chart with a reference curve.
    pub fn reference(mut self, reference: Series) -> Chart {
        self.reference = Some(reference);
        self
    }

    /// Draws `series` to the SVG file `path`.
    pub fn draw(&self, path: &Path, series: &[Series]) -> Result<(), ReportError> {
        draw_lines(path, self, series)
    }
}

fn plot_err<E: std::fmt::Debug>(path: &Path) -> impl Fn(E) -> ReportError + '_ {
    move |e| ReportError::Plot(format!("{}: {e:?}", path.display()))
}

/// A line plot of several series, each point marked; `log_y` draws a logarithmic vertical
/// axis (points with `y <= 0` are not drawn).
pub fn line_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_y: bool,
) -> Result<(), ReportError> {
    let y = if log_y {
        Axis::log(y_label)
    } else {
        Axis::linear(y_label)
    };
    Chart::new(title, Axis::linear(x_label), y).draw(path, series)
}

/// Lines without point markers (for long time series), with an optional reference curve drawn
/// black and long-dashed on top (an exact solution); `log_y` as in [`line_plot`].
pub fn overlay_plot(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    reference: Option<&Series>,
    series: &[Series],
    log_y: bool,
) -> Result<(), ReportError> {
    let y = if log_y {
        Axis::log(y_label)
    } else {
        Axis::linear(y_label)
    };
    let mut chart = Chart::new(title, Axis::linear(x_label), y).lines_only();
    chart.reference = reference.cloned();
    chart.draw(path, series)
}

/// Ticks for a linear axis over `[lo, hi]`: five to ten steps of 1, 2 or 5 times a power of
/// ten; whole-number steps of at least 1 when `integer`.
pub fn linear_ticks(lo: f64, hi: f64, integer: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![];
    }
    let raw = (hi - lo) / 7.0;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * mag);
    if integer {
        step = step.round().max(1.0);
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks for a logarithmic axis over `[lo, hi]` (`lo > 0`): the decades inside, every
/// `k`-th decade when there are more than ten, and 2 and 5 times each decade when fewer
/// than two decades fall inside.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi.is_finite()) || hi <= lo {
        return vec![];
    }
    let (a, b) = (lo.log10().ceil() as i32, hi.log10().floor() as i32);
    let decades: Vec<i32> = (a..=b).collect();
    if decades.len() >= 2 {
        let every = decades.len().div_ceil(10);
        return decades.iter().step_by(every).map(|k| decade(*k)).collect();
    }
    let mut t: Vec<f64> = (a - 1..=b)
        .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * decade(k)))
        .filter(|v| *v >= lo * (1.0 - 1e-12) && *v <= hi * (1.0 + 1e-12))
        .collect();
    t.dedup();
    t
}

/// `10^k` as the nearest double (`10f64.powi(-30)` is off by an ulp).
fn decade(k: i32) -> f64 {
    format!("1e{k}").parse().unwrap_or(f64::NAN)
}

/// A tick label as this field's papers write them: on logarithmic axes plain numbers from
/// 0.01 to 1000 (`0.1`, `1`, `10`, `200`) and `10⁻³`, `2×10⁻⁶` beyond; whole numbers
/// without `.0`, otherwise as few decimals as the ticks need.
pub fn tick_label(v: f64, scale: Scale, ticks: &[f64]) -> String {
    if scale == Scale::Log {
        // Round the exponent of exact decades (log10 of 1e-3 may come out as -2.9999...).
        let k = v.log10();
        let k = if (v / 10f64.powf(k.round()) - 1.0).abs() < 1e-9 {
            k.round()
        } else {
            k.floor()
        };
        let m = v / 10f64.powf(k);
        if (m - m.round()).abs() < 1e-9 {
            return power_label(m.round(), k as i32);
        }
        // Ticks the chart chose between decades (problem sizes): as plain numbers.
        return if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2e}")
        };
    }
    let decimals = (0..=6)
        .find(|d| {
            let f = 10f64.powi(*d);
            ticks.iter().all(|t| ((t * f).round() - t * f).abs() < 1e-6)
        })
        .unwrap_or(6) as usize;
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

/// `m × 10^k` (`m` a whole number from 1 to 9) written plainly between 0.01 and 1000, else
/// with a superscript exponent.
fn power_label(m: f64, k: i32) -> String {
    if (-2..=3).contains(&k) {
        let decimals = (-k).max(0) as usize;
        return format!("{:.decimals$}", m * 10f64.powi(k));
    }
    const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let exponent: String = k
        .to_string()
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => SUPERSCRIPT[d as usize],
            None => '⁻',
        })
        .collect();
    if m == 1.0 {
        format!("10{exponent}")
    } else {
        format!("{m:.0}×10{exponent}")
    }
}

/// A plotters coordinate that maps as plotters' linear or `.log_scale()` coordinate does but
/// puts its ticks where [`linear_ticks`] / [`log_ticks`] (or the chart) say: plotters' own
/// key points are not whole numbers on integer axes, and its `with_key_points` on a linear
/// `f64` range cannot take a label formatter.
struct TickedCoord {
    map: Mapping,
    ticks: Vec<f64>,
    minor: Vec<f64>,
}

enum Mapping {
    Linear(RangedCoordf64),
    Log(LogCoord<f64>),
}

impl Ranged for TickedCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        match &self.map {
            Mapping::Linear(c) => c.map(value, limit),
            Mapping::Log(c) => c.map(value, limit),
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        match &self.map {
            Mapping::Linear(c) => c.range(),
            Mapping::Log(c) => c.range(),
        }
    }
}

/// The drawn range of an axis over `values` and its ticks.
fn coord(axis: &Axis, values: &[f64]) -> TickedCoord {
    let finite: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
        .collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match axis.scale {
        Scale::Log => {
            // Explicit ticks (problem sizes): the data's range widened by 15% each way.
            if let Some(ticks) = &axis.ticks {
                let (lo, hi) = if lo.is_finite() {
                    (lo / 1.15, hi * 1.15)
                } else {
                    (1.0, 10.0)
                };
                return TickedCoord {
                    map: Mapping::Log((lo..hi).log_scale().into()),
                    ticks: ticks.clone(),
                    minor: vec![],
                };
            }
            // Otherwise whole decades, ticked at the decades.
            let (mut a, mut b) = if lo.is_finite() {
                (lo.log10().floor(), hi.log10().ceil())
            } else {
                (0.0, 1.0)
            };
            if b <= a {
                a -= 1.0;
                b += 1.0;
            }
            let (lo, hi) = (decade(a as i32), decade(b as i32));
            // Minor grid lines at 2..9 times each decade, where they stay readable.
            let minor = if b - a <= 6.0 {
                (a as i32..b as i32)
                    .flat_map(|k| (2..10).map(move |m| f64::from(m) * 10f64.powi(k)))
                    .collect()
            } else {
                vec![]
            };
            TickedCoord {
                map: Mapping::Log((lo..hi).log_scale().into()),
                ticks: log_ticks(lo, hi),
                minor,
            }
        }
        Scale::Linear => {
            let integer = !finite.is_empty() && finite.iter().all(|v| v.fract() == 0.0);
            let (lo, hi) = padded(lo, hi);
            let ticks = axis
                .ticks
                .clone()
                .unwrap_or_else(|| linear_ticks(lo, hi, integer));
            TickedCoord {
                map: Mapping::Linear((lo..hi).into()),
                ticks,
                minor: vec![],
            }
        }
    }
}

/// `[lo, hi]` widened by 5% on each side (by 0.5 around a single value).
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 * hi.abs().max(1e-300) {
        let d = if lo == 0.0 { 0.5 } else { 0.5 * lo.abs() };
        return (lo - d, hi + d);
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

/// The one line-chart drawer behind [`Chart::draw`], [`line_plot`] and [`overlay_plot`].
fn draw_lines(path: &Path, chart: &Chart, series: &[Series]) -> Result<(), ReportError> {
    let keep = |a: &Axis, v: f64| v.is_finite() && (a.scale == Scale::Linear || v > 0.0);
    let prepared: Vec<Vec<(f64, f64)>> = series
        .iter()
        .chain(chart.reference.as_ref())
        .map(|(_, p)| {
            p.iter()
                .copied()
                .filter(|&(x, y)| keep(&chart.x, x) && keep(&chart.y, y))
                .collect()
        })
        .collect();
    let xs: Vec<f64> = prepared.iter().flatten().map(|p| p.0).collect();
    let ys: Vec<f64> = prepared.iter().flatten().map(|p| p.1).collect();
    let (xc, yc) = (coord(&chart.x, &xs), coord(&chart.y, &ys));
    let (x_ticks, y_ticks) = (xc.ticks.clone(), yc.ticks.clone());
    let root = SVGBackend::new(path, (760, 440)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(xc, yc)
        .map_err(plot_err(path))?;
    let (xs_, ys_) = (chart.x.scale, chart.y.scale);
    let x_fmt = move |v: &f64| tick_label(*v, xs_, &x_ticks);
    let y_fmt = move |v: &f64| tick_label(*v, ys_, &y_ticks);
    ctx.configure_mesh()
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(plot_err(path))?;
    for (i, ((name, _), data)) in series.iter().zip(&prepared).enumerate() {
        let s = style(i);
        let line = s.color.stroke_width(2);
        let anno = match s.dash.0 {
            None => ctx.draw_series(LineSeries::new(data.clone(), line)),
            Some((d, g)) => ctx.draw_series(DashedLineSeries::new(data.clone(), d, g, line)),
        }
        .map_err(plot_err(path))?;
        // The legend shows the line in its dash (solid: one 24-pixel dash).
        let (d, g) = s.dash.0.unwrap_or((24, 0));
        anno.label(name.clone())
            .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 24, y)], d, g, line));
        if chart.markers {
            let pts = data.iter().copied();
            let fill = s.color.filled();
            match s.marker {
                Marker::Circle => ctx.draw_series(pts.map(|p| Circle::new(p, 3, fill))),
                Marker::Triangle => ctx.draw_series(pts.map(|p| TriangleMarker::new(p, 4, fill))),
                Marker::Cross => {
                    ctx.draw_series(pts.map(|p| Cross::new(p, 3, s.color.stroke_width(2))))
                }
                Marker::Ring => {
                    ctx.draw_series(pts.map(|p| Circle::new(p, 3, s.color.stroke_width(1))))
                }
            }
            .map_err(plot_err(path))?;
        }
    }
    if let (Some((name, _)), Some(data)) = (&chart.reference, prepared.get(series.len())) {
        let line = BLACK.stroke_width(2);
        ctx.draw_series(DashedLineSeries::new(data.clone(), 12, 5, line))
            .map_err(plot_err(path))?
            .label(name.clone())
            .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 24, y)], 12, 5, line));
    }
    ctx.configure_series_labels()
        .position(if chart.legend_upper_left {
            SeriesLabelPosition::UpperLeft
        } else {
            SeriesLabelPosition::MiddleRight
        })
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
    let root = SVGBackend::new(path, (760, 440)).into_drawing_area();
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
    // One bar per bin, in bin order: plotters' `Histogram` sums its data in a `HashMap`, whose
    // order would change the SVG's bytes from one generation to the next.
    for (bin, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
        chart
            .draw_series(
                Histogram::vertical(&chart)
                    .style(COLORS[0].filled())
                    .margin(2)
                    .data(std::iter::once((bin as u64, count))),
            )
            .map_err(plot_err(path))?;
    }
    root.present().map_err(plot_err(path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_series_are_distinct_and_neighbours_differ_in_everything() {
        let styles: Vec<Style> = (0..20).map(style).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert!(a.color != b.color || a.dash != b.dash, "{a:?} {b:?}");
            }
        }
        for w in styles.windows(2) {
            assert!(
                w[0].color != w[1].color && w[0].dash != w[1].dash && w[0].marker != w[1].marker
            );
        }
        // A plot of up to four series differs in every attribute.
        for (i, a) in styles[..4].iter().enumerate() {
            for b in &styles[i + 1..4] {
                assert!(a.color != b.color && a.dash != b.dash && a.marker != b.marker);
            }
        }
    }

    #[test]
    fn linear_ticks_are_round_and_whole_on_integer_axes() {
        assert_eq!(linear_ticks(-0.15, 3.15, true), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            linear_ticks(0.0, 200.0, true),
            [0.0, 50.0, 100.0, 150.0, 200.0]
        );
        let t = linear_ticks(0.0, 1.0, false);
        assert_eq!(t.len(), 6, "{t:?}");
        assert!((t[1] - 0.2).abs() < 1e-12);
        assert!(linear_ticks(1.0, 1.0, false).is_empty());
        let labels: Vec<String> = [0.0, 1.0, 2.0]
            .iter()
            .map(|v| tick_label(*v, Scale::Linear, &[0.0, 1.0, 2.0]))
            .collect();
        assert_eq!(labels, ["0", "1", "2"]);
        let t = [0.0, 0.2, 0.4];
        assert_eq!(tick_label(0.2, Scale::Linear, &t), "0.2");
        assert_eq!(tick_label(-0.0, Scale::Linear, &t), "0.0");
    }

    #[test]
    fn log_ticks_are_decades_labelled_as_papers_write_them() {
        assert_eq!(log_ticks(1e-3, 1.0), [1e-3, 1e-2, 1e-1, 1.0]);
        let labels: Vec<String> = log_ticks(1e-3, 1e1)
            .iter()
            .map(|v| tick_label(*v, Scale::Log, &[]))
            .collect();
        assert_eq!(labels, ["10⁻³", "0.01", "0.1", "1", "10"]);
        let big: Vec<String> = [1e3, 1e4, 1e12, 2e-6]
            .iter()
            .map(|v| tick_label(*v, Scale::Log, &[]))
            .collect();
        assert_eq!(big, ["1000", "10⁴", "10¹²", "2×10⁻⁶"]);
        // Thirty-one decades: every fourth.
        let t = log_ticks(1e-30, 1.0);
        assert!(t.len() <= 11 && t[0] == 1e-30, "{t:?}");
        // Less than two decades: 1, 2, 5 steps.
        assert_eq!(log_ticks(1.5, 12.0), [2.0, 5.0, 10.0]);
        assert_eq!(tick_label(2e-3, Scale::Log, &[]), "2×10⁻³");
        assert_eq!(tick_label(0.05, Scale::Log, &[]), "0.05");
        assert_eq!(tick_label(384.0, Scale::Log, &[]), "384");
    }

    #[test]
    fn charts_draw_log_axes_with_decade_labels() {
        let dir = std::env::temp_dir().join(format!("contactlab-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.svg");
        let series: Vec<Series> = (0..12)
            .map(|i| {
                let pts = (0..20u32)
                    .map(|k| (f64::from(k), 10f64.powf(-f64::from(k) / 4.0 - f64::from(i))))
                    .collect();
                (format!("s{i}"), pts)
            })
            .collect();
        line_plot(&path, "merit", "iteration", "merit", &series, true).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        // plotters writes each label on its own line inside its <text> element.
        let label = |l: &str| svg.contains(&format!(">\n{l}\n</text>"));
        assert!(label("10⁻⁴") && label("1"), "decade labels");
        assert!(!label("-4.0") && !label("-4"), "no log10 values as labels");
        assert!(label("15") && !label("15.0"), "integer x ticks");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
