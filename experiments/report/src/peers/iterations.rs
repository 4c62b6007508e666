//! What sets the iterations of the fresh-clutter comparison (`fresh_engines.toml`'s untimed
//! solves): MuJoCo's iterations at its own tolerance and at a tighter one, and SAP's at the
//! paper's friction regularisation `sigma` (eq. 30) and at the run's other values, the stopping
//! rule unchanged. Table `fresh_iterations.csv`, facts `fresh.<set>.iterations.*`.

use polars::prelude::DataFrame;

use crate::analysis::peers::median;
use crate::analysis::{f64s, first_seen, strs};
use crate::builder::Report;
use crate::error::ReportError;
use crate::findings::Fmt;
use crate::table::{Cell as C, Table};

/// The run's column of SAP's iterations at another `sigma` starts so.
const SIGMA_COLUMN: &str = "sap_iterations_sigma_";
/// The paper's `sigma` (Castro et al. 2022, eq. 30), at which the timed solves ran.
const PAPER_SIGMA: f64 = 1e-3;

/// `fresh_iterations.csv` (`tables.fresh_iterations`) and per set `S` its facts
/// `fresh.S.iterations.mujoco` and `.mujoco_tight` (MuJoCo's median island iterations at its
/// tolerance and at the tight one), `.sap_sigma_<sigma>` (SAP's median, the paper's `sigma`
/// among them) and `.sigma_trend` (whether SAP's median falls as `sigma` grows).
pub(super) fn table(r: &mut Report, df: &DataFrame) -> Result<(), ReportError> {
    let names: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let mut sigmas: Vec<(f64, String)> = names
        .iter()
        .filter_map(|n| {
            let v: f64 = n.strip_prefix(SIGMA_COLUMN)?.parse().ok()?;
            Some((v, n.clone()))
        })
        .collect();
    if sigmas.is_empty() {
        return Err(ReportError::MissingData(format!(
            "fresh_engines: no `{SIGMA_COLUMN}*` column (a run from before the untimed \
             iterations; run fresh_engines.toml again)"
        )));
    }
    sigmas.push((PAPER_SIGMA, "sap_iterations".into()));
    sigmas.sort_by(|a, b| a.0.total_cmp(&b.0));
    let tight = f64s(df, "tight_tol")?
        .into_iter()
        .find(|v| v.is_finite())
        .unwrap_or(f64::NAN);
    r.facts().num("fresh.tight_tol", tight, Fmt::sci(0)).num(
        "fresh.paper_sigma",
        PAPER_SIGMA,
        Fmt::sci(0),
    );
    let sig = |s: f64| Fmt::sci(0).number(s);
    let mut t = Table::new(Some("fresh_iterations.csv"))
        .col("problem set", "set")
        .col("MuJoCo", "mujoco")
        .col(&format!("MuJoCo, tolerance {}", sig(tight)), "mujoco_tight");
    for (s, _) in &sigmas {
        t = t.col(
            &format!("SAP, sigma {}", sig(*s)),
            &format!("sap_sigma_{}", sig(*s)),
        );
    }
    let set = strs(df, "set")?;
    let (mj, mj_tight) = (
        f64s(df, "mujoco_iterations")?,
        f64s(df, "mujoco_iterations_tight")?,
    );
    let columns: Vec<Vec<f64>> = sigmas
        .iter()
        .map(|(_, c)| f64s(df, c))
        .collect::<Result<_, _>>()?;
    for name in first_seen(&set) {
        let of = |v: &[f64]| -> f64 {
            median(
                &v.iter()
                    .zip(&set)
                    .filter(|(_, s)| **s == name)
                    .map(|(x, _)| *x)
                    .collect::<Vec<_>>(),
            )
        };
        let k = format!("fresh.{name}.iterations");
        let one = Fmt::fixed(1);
        r.facts()
            .num(format!("{k}.mujoco"), of(&mj), one.clone())
            .num(format!("{k}.mujoco_tight"), of(&mj_tight), one.clone());
        let mut cells = vec![
            C::text(&name),
            C::num(of(&mj), &one, &one),
            C::num(of(&mj_tight), &one, &one),
        ];
        let medians: Vec<f64> = columns.iter().map(|c| of(c)).collect();
        for ((s, _), m) in sigmas.iter().zip(&medians) {
            r.facts()
                .num(format!("{k}.sap_sigma_{}", sig(*s)), *m, one.clone());
            cells.push(C::num(*m, &one, &one));
        }
        let falls = medians.windows(2).all(|w| w[1] < w[0]);
        r.facts().text(
            format!("{k}.sigma_trend"),
            if falls { "falls" } else { "does not fall" },
        );
        t.row(cells)?;
    }
    r.show_table("fresh_iterations", &t)
}
