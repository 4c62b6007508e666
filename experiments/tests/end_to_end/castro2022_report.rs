//! End to end: every shipped Castro (SAP) config cut down to seconds, `contactlab run` on each,
//! then `contactlab report castro2022`, checking the CSVs the README promises (exact columns) and
//! some of their values. The peers' harness does not run here (`CONTACTLAB_NO_PEERS`): the
//! peers' run records why, and the report's rows come from `peers_published.csv` and say so.

use std::path::Path;

use crate::common::{column, ints, set, Root};
use contactlab_experiments::toml;

#[test]
fn cut_down_castro_configs_run_and_report_the_issues_csvs() {
    std::env::set_var("CONTACTLAB_NO_PEERS", "1");
    let root = Root::new("castro2022");
    root.copy_shipped(&[
        "order_published.csv",
        "energy_published.csv",
        "sphere_published.csv",
        "speedup_published.csv",
        "convergence_published.csv",
        "peers_published.csv",
    ]);
    // Three small problems of the MuJoCo set (the whole set takes minutes in a debug build).
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mujoco");
    for sub in ["global", "mujoco"] {
        let to = root.path.join("data/mujoco").join(sub);
        std::fs::create_dir_all(&to).unwrap();
        for name in [
            "balls_in_box_n5_mu1.0_seed105_step0180_nc5",
            "balls_in_box_n10_mu0.5_seed110_step0050_nc4",
            "clutter_n8_seed7_step0250_nc19",
        ] {
            let f = format!("{name}.json");
            std::fs::copy(data.join(sub).join(&f), to.join(&f)).unwrap();
        }
    }
    root.config("sphere.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(120));
    });
    let duration = |t: &mut toml::Table, seconds: f64| {
        t["scene"]["params"]
            .as_table_mut()
            .unwrap()
            .insert("duration".into(), toml::Value::Float(seconds));
    };
    root.config("order.toml", |t| duration(t, 0.5));
    root.config("energy.toml", |t| duration(t, 2.0));
    root.config("clutter.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(12));
        set(
            t,
            "sweep",
            "n_bodies",
            toml::Value::Array(vec![toml::Value::Integer(8), toml::Value::Integer(40)]),
        );
        // Fig. 10's histories at steps the cut-down run reaches.
        set(t, "output", "traces_at", ints(&[10, 11]));
    });
    root.config("mujoco_set.toml", |t| {
        t.insert("rounds".into(), toml::Value::Integer(1));
    });
    root.config("peers.toml", |_| {});
    root.config("sigma.toml", |t| {
        set(t, "scene", "steps", toml::Value::Integer(12));
        t["scene"]["params"]
            .as_table_mut()
            .unwrap()
            .insert("n_bodies".into(), toml::Value::Integer(8));
    });
    for f in [
        "sphere.toml",
        "order.toml",
        "energy.toml",
        "clutter.toml",
        "sigma.toml",
        "mujoco_set.toml",
        "peers.toml",
    ] {
        root.run(f);
    }
    let readme = root.report().unwrap();
    assert!(readme.contains("## Clutter (sec. VI-C)"));
    // The templates' prose with the cut-down runs' numbers.
    for want in [
        "The 3 generalized problems in `data/mujoco/global/`",
        "`dt = 10 ms`, 12 steps;",
        "\n8 clutter bodies, with and without walls, 0.12 s, SAP with `sigma` from 1e-5 to 1e-1",
        "the position error `e_q` over 0.5 s against `dt`",
        "![SAP convergence histories on steps 10 and 11 (Fig. 10)](clutter40_convergence.svg)",
    ] {
        assert!(readme.contains(want), "`{want}` in\n{readme}");
    }

    let order = root.csv("order.csv");
    assert_eq!(
        order.0,
        ["scheme", "mu", "order_published", "order_reproduced"]
    );
    assert_eq!(order.1.len(), 6);
    // The midpoint rule's order stays near 2 even over half a second.
    let schemes = column(&order, "scheme");
    let reproduced = column(&order, "order_reproduced");
    for (s, o) in schemes.iter().zip(&reproduced) {
        let o: f64 = o.parse().unwrap();
        if *s == "midpoint" {
            assert!((o - 2.0).abs() < 0.3, "midpoint order {o}");
        }
    }

    let clutter = root.csv("clutter.csv");
    for want in [
        "bodies",
        "walls",
        "steps",
        "sap_iterations_mean",
        "sap_iterations_steady_mean",
        "sap_iterations_max",
        "sap_seconds_per_step_median",
        "ipm_seconds_per_step_median",
        "speedup_published_vs_gurobi",
        "speedup_reproduced",
        "e_m_max_sap",
        "e_m_max_ipm",
        "e_m_mean_sap",
        "e_m_mean_ipm",
        "e_mu_max_sap",
        "e_mu_mean_ipm",
    ] {
        assert!(
            clutter.0.iter().any(|c| c == want),
            "clutter.csv lacks {want}"
        );
    }
    assert_eq!(
        clutter.1.len(),
        4,
        "8 and 40 bodies, with and without walls"
    );
    for e in column(&clutter, "e_m_max_sap") {
        assert!(
            e.parse::<f64>().unwrap() <= 1e-5 * 1.0001,
            "SAP stops at eps_r = 1e-5: {e}"
        );
    }
    // The interior point, measured at its own primal pair, is at least as accurate (Fig. 13).
    for e in column(&clutter, "e_m_max_ipm") {
        assert!(e.parse::<f64>().unwrap() <= 1e-5, "Clarabel's e_m {e}");
    }
    for e in column(&clutter, "e_mu_max_sap") {
        assert!(e.parse::<f64>().unwrap() <= 1e-12, "SAP's e_mu {e}");
    }

    let peers = root.csv("peers.csv");
    assert_eq!(
        peers.0,
        [
            "scene",
            "bodies",
            "engine",
            "seconds_per_step_median",
            "contacts_per_step_median",
            "source"
        ]
    );
    let engines = column(&peers, "engine");
    assert_eq!(engines, ["contactlab-sap", "mujoco", "drake-sap"]);
    for source in &column(&peers, "source")[1..] {
        assert!(
            source.contains("docs/PEERS.md") && source.contains("CONTACTLAB_NO_PEERS is set"),
            "{source}"
        );
    }

    // Fig. 10 from the traces the clutter run kept at the asked steps of 40 bodies with walls.
    let convergence = root.csv("convergence.csv");
    assert_eq!(column(&convergence, "step"), ["10", "11"]);
    for it in column(&convergence, "iterations_reproduced") {
        assert!(it.parse::<u64>().unwrap() >= 1, "{it}");
    }

    let sigma = root.csv("sigma.csv");
    assert_eq!(sigma.1.len(), 10, "five sigmas, with and without walls");
    // Fig. 15: the condition number falls as sigma grows (rows sorted by sigma per walls).
    let cond: Vec<f64> = column(&sigma, "hessian_condition_scaled_mean")
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    for half in cond.chunks(5) {
        assert!(half.windows(2).all(|w| w[1] < w[0]), "{cond:?}");
    }

    let set = root.csv("mujoco_set.csv");
    assert_eq!(set.1.len(), 3);
    assert!(column(&set, "sap_status").iter().all(|s| *s == "converged"));
    // Sphere: the glide ratio is about one.
    let sphere = root.csv("sphere.csv");
    assert!(sphere.1.iter().any(|r| r[0].starts_with("glide height")));
}
