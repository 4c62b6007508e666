//! How Castro 2022's page writes what its sections share: a number in the decimals Rust
//! writes it with, a time in milliseconds beside seconds, and a clutter scene with or without
//! walls.

use crate::findings::Fmt;
use crate::table::Cell as C;

/// The format that writes `x` as Rust's `{}` does (its decimals), once rounded to nine
/// decimals (`12 * 0.01` is `0.12`).
pub(super) fn plain(x: f64) -> Fmt {
    let rounded: f64 = format!("{x:.9}").parse().unwrap_or(x);
    let text = format!("{rounded}");
    Fmt::fixed(text.split_once('.').map_or(0, |(_, d)| d.len()))
}

/// The format that writes `x` as Rust's `{:e}` does: its mantissa's decimals.
pub(super) fn sci_of(x: f64) -> Fmt {
    let text = format!("{x:e}");
    let mantissa = text.split_once('e').map_or(text.as_str(), |(m, _)| m);
    Fmt::sci(mantissa.split_once('.').map_or(0, |(_, d)| d.len()))
}

/// `walls` or `no walls`, as a series names a scene.
pub(super) fn walls_name(walls: bool) -> &'static str {
    if walls {
        "walls"
    } else {
        "no walls"
    }
}

/// `walls` or `open`, as a fact names a scene.
pub(super) fn walls_key(walls: bool) -> &'static str {
    if walls {
        "walls"
    } else {
        "open"
    }
}

/// A time: milliseconds in the markdown, seconds in the CSV (the CSV headers say seconds).
pub(super) fn seconds_cell(seconds: f64) -> C {
    C::pair(Fmt::fixed(3).show(1e3 * seconds), Fmt::sci(4).show(seconds))
}
