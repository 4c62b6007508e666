//! The small CSV files beside the configs (published numbers, quoted quantities) and beside
//! the reports (every table's CSV): plain comma-separated cells, no quoting.

use std::path::Path;

use crate::error::ReportError;

/// A CSV file from a header and rows (cells are numbers or simple words: no quoting needed,
/// and none is produced; commas in cells are rejected).
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), ReportError> {
    let mut s = header.join(",") + "\n";
    for r in rows {
        if r.iter().any(|c| c.contains(',')) {
            return Err(ReportError::Published(format!(
                "{}: a cell contains a comma: {r:?}",
                path.display()
            )));
        }
        s += &(r.join(",") + "\n");
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, s)?;
    Ok(())
}

/// Reads a small numeric CSV with a header into rows of strings.
pub fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), ReportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReportError::Published(format!("{}: {e}", path.display())))?;
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| ReportError::Published(format!("{}: empty", path.display())))?
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(|s| s.trim().to_string()).collect())
        .collect();
    if let Some((i, r)) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.len() != header.len())
    {
        return Err(ReportError::Published(format!(
            "{}: data row {} has {} cells, the header has {}",
            path.display(),
            i + 1,
            r.len(),
            header.len()
        )));
    }
    Ok((header, rows))
}

/// Reads a CSV of published numbers whose header must be exactly `want`.
pub fn read_csv_with_header(path: &Path, want: &[&str]) -> Result<Vec<Vec<String>>, ReportError> {
    let (header, rows) = read_csv(path)?;
    if header != want {
        return Err(ReportError::Published(format!(
            "{}: header must be {}",
            path.display(),
            want.join(",")
        )));
    }
    Ok(rows)
}

/// Cell `i` of a row read by [`read_csv_with_header`] as a number; the error names the file and
/// the column.
pub fn number(path: &Path, row: &[String], want: &[&str], i: usize) -> Result<f64, ReportError> {
    row[i].parse::<f64>().map_err(|_| {
        ReportError::Published(format!(
            "{}: `{}` in column {} is not a number",
            path.display(),
            row[i],
            want[i]
        ))
    })
}

/// Cell `i` of a row read by [`read_csv_with_header`] as a number, NaN when the cell is empty
/// (the source gives no value); the error names the file and the column.
pub fn optional_number(
    path: &Path,
    row: &[String],
    want: &[&str],
    i: usize,
) -> Result<f64, ReportError> {
    if row[i].is_empty() {
        Ok(f64::NAN)
    } else {
        number(path, row, want, i)
    }
}

/// Reads a CSV of single published numbers, `quantity,value,source` (the source names the
/// table, figure or text they come from): `quantity -> (value, source)`.
pub fn read_quantities(
    path: &Path,
) -> Result<std::collections::BTreeMap<String, (f64, String)>, ReportError> {
    let want = ["quantity", "value", "source"];
    read_csv_with_header(path, &want)?
        .iter()
        .map(|r| Ok((r[0].clone(), (number(path, r, &want, 1)?, r[2].clone()))))
        .collect()
}
