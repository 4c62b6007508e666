//! MuJoCo and Drake on the same scenes, measured beside our runs: `experiments/peers/bench.py`
//! (the project's copy of the peers harness; `pip install mujoco drake numpy scipy`) run as a
//! child process, its JSON read back.
//!
//! A comparison of times is only fair as a ratio measured in one run on one machine, so the
//! report that needs the peers runs them while it is generated. Where Python or the packages are
//! missing, or `CONTACTLAB_NO_PEERS` is set (CI), the rows fall back to the numbers in
//! `docs/PEERS.md`, and their `source` says so and why.

use std::path::Path;
use std::process::Command;

/// One engine's time on one scene.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerTime {
    /// The scene (`clutter_n40`).
    pub scene: String,
    /// Bodies in it.
    pub bodies: usize,
    /// `mujoco` or `drake-sap`.
    pub engine: String,
    /// The engine's version and configuration.
    pub config: String,
    /// Median wall time of a whole step (s).
    pub seconds_per_step_median: f64,
    /// Median contacts per step.
    pub contacts_per_step_median: f64,
    /// `measured in this run` or where the number comes from.
    pub source: String,
}

/// `docs/PEERS.md`'s clutter rows (median ms per step): (bodies, MuJoCo, Drake SAP).
const PUBLISHED_CLUTTER_MS: [(usize, f64, f64); 2] = [(40, 0.097, 2.54), (80, 1.86, 12.8)];

/// The fallback rows for clutter with `bodies` bodies, with `why` in their source.
pub fn published_clutter(bodies: usize, why: &str) -> Vec<PeerTime> {
    PUBLISHED_CLUTTER_MS
        .iter()
        .filter(|(n, _, _)| *n == bodies)
        .flat_map(|&(n, mj, dk)| {
            [
                ("mujoco", "MuJoCo 4.0 Newton elliptic", mj),
                (
                    "drake-sap",
                    "Drake 1.51 SAP point contact, its default parameters",
                    dk,
                ),
            ]
            .map(|(engine, config, ms)| PeerTime {
                scene: format!("clutter_n{n}"),
                bodies: n,
                engine: engine.into(),
                config: config.into(),
                seconds_per_step_median: ms * 1e-3,
                contacts_per_step_median: f64::NAN,
                source: format!("docs/PEERS.md (not measured in this run: {why})"),
            })
        })
        .collect()
}

/// Reads the harness's JSON (a list of result objects).
pub fn parse_bench(json: &str) -> Result<Vec<PeerTime>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let list = v.as_array().ok_or("bench output is not a list")?;
    let mut out = Vec::new();
    for r in list {
        if let Some(e) = r.get("error") {
            return Err(format!("{}: {e}", r["config"]));
        }
        let engine = r["engine"].as_str().unwrap_or_default();
        let name = if engine.starts_with("mujoco") {
            "mujoco"
        } else if engine.starts_with("drake") {
            "drake-sap"
        } else {
            return Err(format!("unknown engine `{engine}`"));
        };
        let num = |a: &str, b: &str| r[a][b].as_f64().ok_or(format!("no `{a}.{b}` for {engine}"));
        out.push(PeerTime {
            scene: r["scene"].as_str().unwrap_or_default().to_string(),
            bodies: r["nbodies"].as_u64().unwrap_or(0) as usize,
            engine: name.into(),
            config: format!("{engine} {}", r["config"].as_str().unwrap_or_default()),
            seconds_per_step_median: num("step", "median_ms")? * 1e-3,
            contacts_per_step_median: num("ncon", "median")?,
            source: "measured in this run".into(),
        });
    }
    Ok(out)
}

/// Runs the harness on clutter with `bodies` bodies (MuJoCo's Newton with elliptic cones, Drake's
/// SAP with the paper's `k = 1e12`, `tau_d = h`), writing its JSON under `out_dir`; the
/// published rows when it cannot run.
pub fn measure_clutter(root: &Path, bodies: usize, out_dir: &Path) -> Vec<PeerTime> {
    if std::env::var_os("CONTACTLAB_NO_PEERS").is_some() {
        return published_clutter(bodies, "CONTACTLAB_NO_PEERS is set");
    }
    let n = bodies.to_string();
    let args = [
        "--only",
        "clutter",
        "--nclutter",
        &n,
        "--configs",
        "mj_newton_elliptic",
        "--drake-paper-params",
    ];
    match run_bench(root, &args, &format!("clutter{bodies}"), out_dir) {
        Ok(rows) => rows,
        Err(why) => published_clutter(bodies, &why),
    }
}

/// Runs `experiments/peers/bench.py` with `args`, its JSON written to
/// `out_dir/bench_<tag>.json` and read back; the error says why it could not run.
pub fn run_bench(
    root: &Path,
    args: &[&str],
    tag: &str,
    out_dir: &Path,
) -> Result<Vec<PeerTime>, String> {
    let script = root.join("experiments/peers/bench.py");
    let run = Command::new("python3")
        .arg(&script)
        .args(args)
        .arg("--out")
        .arg(out_dir)
        .args(["--tag", tag])
        .output();
    match run {
        Err(e) => Err(format!("python3 could not start: {e}")),
        Ok(o) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err
                .lines()
                .last()
                .unwrap_or("no message")
                .trim()
                .to_string();
            Err(format!(
                "bench.py failed ({last}); `pip install mujoco drake numpy scipy`"
            ))
        }
        Ok(_) => std::fs::read_to_string(out_dir.join(format!("bench_{tag}.json")))
            .map_err(|e| e.to_string())
            .and_then(|s| parse_bench(&s))
            .map_err(|e| format!("bench.py output unreadable: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_output_is_read_and_a_failure_is_an_error() {
        let json = r#"[{"engine": "mujoco 4.0.0", "config": "mj_newton_elliptic",
            "step": {"median_ms": 0.25}, "ncon": {"median": 102.0}, "scene": "clutter_n40",
            "nbodies": 40},
            {"engine": "drake 1.51.1", "config": "drake_sap_point_k1e12_taud_h",
            "step": {"median_ms": 4.0}, "ncon": {"median": 57.0}, "scene": "clutter_n40",
            "nbodies": 40}]"#;
        let rows = parse_bench(json).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].engine, "mujoco");
        assert!((rows[1].seconds_per_step_median - 4e-3).abs() < 1e-15);
        assert_eq!(rows[1].contacts_per_step_median, 57.0);
        let bad = r#"[{"config": "drake_sap_point", "error": "ImportError"}]"#;
        assert!(parse_bench(bad).unwrap_err().contains("ImportError"));
    }

    #[test]
    fn without_the_harness_the_rows_come_from_peers_md_and_say_so() {
        let rows = published_clutter(40, "CONTACTLAB_NO_PEERS is set");
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.source.contains("docs/PEERS.md")));
        assert!((rows[0].seconds_per_step_median - 0.097e-3).abs() < 1e-15);
        assert!(published_clutter(7, "x").is_empty());
    }
}
