//! End to end: Castro, Permenter and Han 2022, section VI-B. The shipped spring-cylinder configs
//! (cut down: fewer time steps, shorter spans) run through the runner with SAP
//! (`sap` + `newton-merit`, resolved by the registry), and the analysis reproduces the paper's
//! orders of accuracy (Fig. 7) and energy behaviour (Figs. 5-6).

use std::path::{Path, PathBuf};

use contactlab_experiments::analysis::castro2022::{
    energy_summaries, order_rows, EnergySummary, EnergyWindows, OrderRow, PublishedOrder,
};
use contactlab_experiments::config::{ExperimentConfig, RunConfig};
use contactlab_experiments::report::read_csv_with_header;
use contactlab_experiments::runner::steps_frame;
use contactlab_experiments::toml;
use contactlab_experiments::Lab;

fn shipped(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs/castro2022")
        .join(file)
}

/// The shipped config `file` with `edit` applied, parsed and checked.
fn config(file: &str, edit: impl FnOnce(&mut toml::Table)) -> ExperimentConfig {
    let mut t: toml::Table = std::fs::read_to_string(shipped(file))
        .unwrap()
        .parse()
        .unwrap();
    edit(&mut t);
    ExperimentConfig::parse(&toml::to_string(&t).unwrap(), &shipped(file)).unwrap()
}

fn section<'a>(t: &'a mut toml::Table, name: &str) -> &'a mut toml::Table {
    t.get_mut(name).unwrap().as_table_mut().unwrap()
}

fn floats(v: &[f64]) -> toml::Value {
    toml::Value::Array(v.iter().map(|x| toml::Value::Float(*x)).collect())
}

fn published_orders() -> Vec<PublishedOrder> {
    let want = ["scheme", "mu", "order", "source"];
    read_csv_with_header(&shipped("order_published.csv"), &want)
        .unwrap()
        .into_iter()
        .map(|r| PublishedOrder {
            scheme: r[0].clone(),
            mu: r[1].parse().unwrap(),
            order: r[2].parse().unwrap(),
        })
        .collect()
}

/// Fig. 7, cut down to 1 s and `dt` = 4, 2, 1 ms (the shipped config: the paper's 5 s, finer
/// steps, in release): the position error falls as `dt` for both Euler schemes and as `dt^2`
/// for the midpoint rule, with and without friction.
#[test]
fn order_study_reproduces_the_published_orders() {
    let cfg = config("order.toml", |t| {
        section(t, "sweep").insert("dt".into(), floats(&[0.004, 0.002, 0.001]));
        let scene = section(t, "scene");
        scene.insert("steps".into(), toml::Value::Integer(1000));
        let params = scene.get_mut("params").unwrap().as_table_mut().unwrap();
        params.insert("duration".into(), toml::Value::Float(1.0));
    });
    let out = Lab::standard()
        .run_experiment(&cfg, &shipped("order.toml"), None)
        .unwrap();
    let df = steps_frame(&cfg, &out).unwrap();
    // Each run stops at 1 s: 250 + 500 + 1000 steps for each of 3 schemes x 2 mu.
    assert_eq!(df.height(), 6 * 1750);
    let rows: Vec<OrderRow> = order_rows(&df, &published_orders()).unwrap();
    assert_eq!(rows.len(), 6);
    for r in &rows {
        eprintln!(
            "{:16} mu {} published {} reproduced {:.3} errors {:?}",
            r.scheme, r.mu, r.order_published, r.order_reproduced, r.errors
        );
    }
    for r in &rows {
        assert!(
            (r.order_reproduced - r.order_published).abs() <= 0.2,
            "{} mu {}: order {:.3}, published {}",
            r.scheme,
            r.mu,
            r.order_reproduced,
            r.order_published
        );
    }
    // "the error is significantly smaller when using the symplectic Euler scheme".
    let at = |s: &str, mu: f64| rows.iter().find(|r| r.scheme == s && r.mu == mu).unwrap();
    for mu in [0.0, 1.0] {
        let (sym, imp) = (at("symplectic_euler", mu), at("implicit_euler", mu));
        assert!(sym
            .errors
            .iter()
            .zip(&imp.errors)
            .all(|(s, i)| 3.0 * s < *i));
    }
    // Without friction the contact leaves `x` alone: the spring-mass's own errors, the same
    // for any mu = 0 run.
    assert!(rows.iter().all(|r| r.errors.iter().all(|e| e.is_finite())));
}

fn energy(duration: f64) -> Vec<EnergySummary> {
    let cfg = config("energy.toml", |t| {
        let scene = section(t, "scene");
        scene.insert("steps".into(), toml::Value::Integer(100_000));
        scene
            .get_mut("params")
            .unwrap()
            .as_table_mut()
            .unwrap()
            .insert("duration".into(), toml::Value::Float(duration));
    });
    let out = Lab::standard()
        .run_experiment(&cfg, &shipped("energy.toml"), None)
        .unwrap();
    let df = steps_frame(&cfg, &out).unwrap();
    let s = energy_summaries(&df, &EnergyWindows::default()).unwrap();
    for e in &s {
        eprintln!(
            "{:16} mu {}: band {:.4}% (whole run {:.4}%), final {:.6}, 10% lost at {:.1} s",
            e.scheme,
            e.mu,
            100.0 * e.band,
            100.0 * e.band_total,
            e.final_energy,
            e.time_to_lose
        );
    }
    s
}

/// Figs. 5-6 over the first 10 s (the shipped config: the paper's 10 minutes, in release): midpoint conserves the frictionless energy and keeps the
/// rolling one within a small band, symplectic Euler stays in a band `w dt` wide, implicit
/// Euler loses almost all of it within a few periods.
#[test]
fn energy_study_reproduces_figs_5_and_6() {
    let s = energy(10.0);
    assert_eq!(s.len(), 6);
    let at = |scheme: &str, mu: f64| s.iter().find(|e| e.scheme == scheme && e.mu == mu).unwrap();
    // Fig. 5 (mu = 0).
    assert!(at("midpoint", 0.0).band_total < 1e-9);
    let sym = at("symplectic_euler", 0.0);
    assert!((sym.band - 0.2886).abs() < 2e-3, "{sym:?}");
    assert!((sym.band_total - sym.band).abs() < 1e-3, "bounded: {sym:?}");
    assert!(at("implicit_euler", 0.0).final_energy < 1e-3);
    // Fig. 6 (mu = 1, rolling): w dt = 0.231.
    let mid = at("midpoint", 1.0);
    assert!(mid.band < 2e-3, "{mid:?}");
    let sym = at("symplectic_euler", 1.0);
    assert!((sym.band - 0.233).abs() < 0.01, "{sym:?}");
    assert!(at("implicit_euler", 1.0).final_energy < 0.01);
}

/// The shipped configs load (every run's parameters checked), sweep the three schemes at
/// mu = 0 and 1, and the published numbers name every (scheme, mu) the order study runs.
#[test]
fn shipped_configs_and_published_numbers_load() {
    for file in ["energy.toml", "order.toml"] {
        let cfg = ExperimentConfig::load(&shipped(file)).unwrap();
        assert_eq!(cfg.paper, "castro2022");
        let runs = cfg.runs(&shipped(file)).unwrap();
        assert_eq!(runs.len(), if file == "order.toml" { 18 } else { 6 });
        assert_eq!(
            cfg.sweep["scheme"],
            ["symplectic_euler", "implicit_euler", "midpoint"].map(toml::Value::from)
        );
    }
    let published = published_orders();
    assert_eq!(published.len(), 6);
    for scheme in ["symplectic_euler", "implicit_euler", "midpoint"] {
        for mu in [0.0, 1.0] {
            let o = published
                .iter()
                .find(|o| o.scheme == scheme && o.mu == mu)
                .unwrap();
            assert_eq!(o.order, if scheme == "midpoint" { 2.0 } else { 1.0 });
        }
    }
    let want = ["scheme", "mu", "quantity", "value", "source"];
    let energy = read_csv_with_header(&shipped("energy_published.csv"), &want).unwrap();
    let value = |s: &str, mu: &str, q: &str| -> f64 {
        energy
            .iter()
            .find(|r| r[0] == s && r[1] == mu && r[2] == q)
            .unwrap()[3]
            .parse()
            .unwrap()
    };
    assert_eq!(value("symplectic_euler", "0", "band_percent"), 28.0);
    assert_eq!(value("midpoint", "1", "band_percent"), 0.16);
    assert_eq!(value("midpoint", "1", "minutes_to_lose_10_percent"), 10.0);
}
