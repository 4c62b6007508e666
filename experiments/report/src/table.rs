//! Tables described once and written twice: as markdown in the README and as a CSV file.
//!
//! A [`Table`] has leaf columns, each with an optional markdown header and an optional CSV
//! name. Consecutive leaves that share a markdown header form one markdown column whose cells
//! are joined by ` / ` (the reports' "published / reproduced" cells), while the CSV keeps one
//! column per leaf, so published and reproduced values sit in adjacent CSV columns. A leaf
//! without a markdown header is CSV-only (extra precision, raw counts), one without a CSV name
//! is markdown-only (a ratio or a note).

use std::fmt::Write as _;
use std::path::Path;

use super::findings::Fmt;
use crate::error::ReportError;

/// One cell: its markdown text and its CSV text (they differ in precision or decoration).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Text in the markdown table.
    pub md: String,
    /// Text in the CSV file.
    pub csv: String,
}

impl Cell {
    /// A number written with `md` in markdown and `csv` in the CSV (`-` in markdown, empty in
    /// the CSV for NaN).
    pub fn num(v: f64, md: &Fmt, csv: &Fmt) -> Cell {
        Cell {
            md: md.show(v),
            csv: if v.is_nan() {
                String::new()
            } else {
                csv.number(v)
            },
        }
    }

    /// A number written the same way in both (the unit only in markdown).
    pub fn same(v: f64, fmt: &Fmt) -> Cell {
        Cell::num(v, fmt, fmt)
    }

    /// A whole number.
    pub fn int(v: impl Into<i128>) -> Cell {
        let s = v.into().to_string();
        Cell {
            md: s.clone(),
            csv: s,
        }
    }

    /// The same text in both.
    pub fn text(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell {
            md: s.clone(),
            csv: s,
        }
    }

    /// A label: code-quoted in markdown, plain in the CSV.
    pub fn code(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell {
            md: format!("`{s}`"),
            csv: s,
        }
    }

    /// Different texts in markdown and in the CSV (an empty markdown text is left out of its
    /// column's ` / ` join).
    pub fn pair(md: impl Into<String>, csv: impl Into<String>) -> Cell {
        Cell {
            md: md.into(),
            csv: csv.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Leaf {
    md: Option<String>,
    csv: Option<String>,
}

/// A table: leaf columns, rows of cells, and the CSV file it is written to (if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    csv_file: Option<String>,
    leaves: Vec<Leaf>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// An empty table written to `csv_file` in the report folder (`None`: markdown only).
    pub fn new(csv_file: Option<&str>) -> Table {
        Table {
            csv_file: csv_file.map(str::to_string),
            leaves: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Adds a leaf column shown under markdown header `md` and named `csv` in the CSV.
    pub fn col(mut self, md: &str, csv: &str) -> Table {
        self.leaves.push(Leaf {
            md: Some(md.to_string()),
            csv: Some(csv.to_string()),
        });
        self
    }

    /// Adds a markdown-only leaf.
    pub fn md_col(mut self, md: &str) -> Table {
        self.leaves.push(Leaf {
            md: Some(md.to_string()),
            csv: None,
        });
        self
    }

    /// Adds a CSV-only leaf.
    pub fn csv_col(mut self, csv: &str) -> Table {
        self.leaves.push(Leaf {
            md: None,
            csv: Some(csv.to_string()),
        });
        self
    }

    /// The CSV file name, if the table has one.
    pub fn csv_file(&self) -> Option<&str> {
        self.csv_file.as_deref()
    }

    /// Adds a row: one cell per leaf, in leaf order.
    pub fn row(&mut self, cells: Vec<Cell>) -> Result<(), ReportError> {
        if cells.len() != self.leaves.len() {
            return Err(ReportError::Table(format!(
                "{}: a row has {} cells for {} columns",
                self.csv_file.as_deref().unwrap_or("markdown table"),
                cells.len(),
                self.leaves.len()
            )));
        }
        self.rows.push(cells);
        Ok(())
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Markdown columns: a header and the leaf indices it joins.
    fn md_columns(&self) -> Vec<(String, Vec<usize>)> {
        let mut cols: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, leaf) in self.leaves.iter().enumerate() {
            let Some(h) = &leaf.md else { continue };
            match cols.last_mut() {
                Some((last, idx)) if last == h => idx.push(i),
                _ => cols.push((h.clone(), vec![i])),
            }
        }
        cols
    }

    /// Whether the table has markdown columns.
    pub fn has_markdown(&self) -> bool {
        self.leaves.iter().any(|l| l.md.is_some())
    }

    /// The markdown table (empty when no leaf has a markdown header).
    pub fn markdown(&self) -> String {
        let cols = self.md_columns();
        if cols.is_empty() {
            return String::new();
        }
        let header: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| {
                cols.iter()
                    .map(|(_, idx)| {
                        // An empty part (a pair's unused half) is left out of the join.
                        idx.iter()
                            .map(|&i| r[i].md.as_str())
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join(" / ")
                    })
                    .collect()
            })
            .collect();
        markdown_table(&header, &rows)
    }

    /// The CSV header and rows (CSV leaves only).
    pub fn csv(&self) -> (Vec<&str>, Vec<Vec<String>>) {
        let keep: Vec<usize> = (0..self.leaves.len())
            .filter(|&i| self.leaves[i].csv.is_some())
            .collect();
        let header = keep
            .iter()
            .filter_map(|&i| self.leaves[i].csv.as_deref())
            .collect();
        let rows = self
            .rows
            .iter()
            .map(|r| keep.iter().map(|&i| r[i].csv.clone()).collect())
            .collect();
        (header, rows)
    }

    /// Writes the CSV into `dir` (nothing when the table has no CSV file).
    pub fn write_csv(&self, dir: &Path) -> Result<(), ReportError> {
        let Some(file) = &self.csv_file else {
            return Ok(());
        };
        let (header, rows) = self.csv();
        crate::csv::write_csv(&dir.join(file), &header, &rows)
    }
}

/// A markdown table from a header and rows of cells.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(
        s,
        "|{}|",
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for r in rows {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

/// Formats a float with `digits` decimals, `-` for NaN.
pub fn fmt(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "-".into()
    } else {
        format!("{x:.digits$}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_description_two_renderings() {
        let pct = Fmt::percent(0);
        let mut t = Table::new(Some("t.csv"))
            .col("mu", "mu")
            .col("iterations", "iterations_published")
            .col("iterations", "iterations_reproduced")
            .csv_col("runs")
            .md_col("difference");
        t.row(vec![
            Cell::same(0.5, &Fmt::fixed(1)),
            Cell::same(2.6, &Fmt::fixed(1)),
            Cell::num(2.4, &Fmt::fixed(2), &Fmt::fixed(3)),
            Cell::int(10u32),
            Cell::same(-7.7, &pct.clone().signed()),
        ])
        .unwrap();
        t.row(vec![
            Cell::same(1.0, &Fmt::fixed(1)),
            Cell::same(f64::NAN, &Fmt::fixed(1)),
            Cell::num(3.0, &Fmt::fixed(2), &Fmt::fixed(3)),
            Cell::int(9u32),
            Cell::text("-"),
        ])
        .unwrap();
        assert_eq!(
            t.markdown(),
            "| mu | iterations | difference |\n|---|---|---|\n| 0.5 | 2.6 / 2.40 | -8% |\n| 1.0 | - / 3.00 | - |\n"
        );
        let (header, rows) = t.csv();
        assert_eq!(
            header,
            [
                "mu",
                "iterations_published",
                "iterations_reproduced",
                "runs"
            ]
        );
        assert_eq!(rows[0], ["0.5", "2.6", "2.400", "10"]);
        assert_eq!(rows[1], ["1.0", "", "3.000", "9"]);
        assert!(t.row(vec![Cell::text("x")]).is_err());
    }

    #[test]
    fn csv_only_tables_have_no_markdown() {
        let mut t = Table::new(Some("x.csv")).csv_col("a");
        t.row(vec![Cell::int(1u8)]).unwrap();
        assert!(!t.has_markdown());
        assert_eq!(t.markdown(), "");
    }
}
