//! Islands and block-sparse Delassus matrices on real simulator problems (the MuJoCo-exported
//! clutter and balls-in-a-box steps in `data/mujoco/global/`) and on hand-made ones.

use std::path::PathBuf;
use std::time::Duration;

use contactlab_core::drivers::pgs::ProjectedGaussSeidel;
use contactlab_core::islands::{check_psd_by_island, PSD_REL_TOL, WHOLE_BELOW_CONTACTS};
use contactlab_core::plugin::{judge, solve_formulation, Coulomb};
use contactlab_core::{
    io::read_problem, Driver, GeneralizedProblem, Init, Islands, Layout, LocalProblem, Matrix,
    Problem, SolveOptions, Status, StepProblem, Storage,
};

fn mujoco(name: &str) -> GeneralizedProblem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data/mujoco/global")
        .join(name);
    match read_problem(&path).expect("shipped file reads") {
        Problem::Global(g) => GeneralizedProblem::from_global(&g).expect("valid"),
        Problem::Local(_) => panic!("the MuJoCo set is global"),
    }
}

const CLUTTER_80: &str = "clutter_n80_seed7_step0180_nc206.json";
const CLUTTER_40: &str = "clutter_n40_seed7_step0090_nc83.json";
const BALLS: &str = "balls_in_box_n15_mu1.0_seed115_step0199_nc30.json";

/// PGS through the one solve flow, on each island as `layout` says.
fn pgs(problem: &StepProblem, layout: Layout, opts: &SolveOptions) -> contactlab_core::LocalSolve {
    let driver = ProjectedGaussSeidel::default();
    let out = contactlab_core::solve_by_island(problem, layout, Init::Zero, opts, |p, init, o| {
        solve_formulation(&Coulomb {}, p, init, o, |b, x0, o| driver.solve(b, x0, o))
    })
    .expect("solves");
    judge(problem, out, opts.stop_tol).expect("judged")
}

#[test]
fn block_delassus_equals_the_dense_product() {
    for name in [CLUTTER_40, BALLS] {
        let g = mujoco(name);
        let dense = g.to_local().unwrap();
        let blocks = g.to_local_blocks().unwrap();
        assert!(matches!(blocks.w, Matrix::Blocks(_)));
        let (d, b) = (dense.w.to_dense(), blocks.w.to_dense());
        let scale = (0..d.nrows()).map(|i| d[(i, i)]).fold(0.0, f64::max);
        let mut worst = 0.0_f64;
        for i in 0..d.nrows() {
            for j in 0..d.ncols() {
                worst = worst.max((d[(i, j)] - b[(i, j)]).abs());
            }
        }
        assert!(
            worst <= 1e-12 * scale,
            "{name}: |W_dense - W_blocks| = {worst:e}"
        );
        assert_eq!(dense.q, blocks.q);
        if let Matrix::Blocks(w) = &blocks.w {
            let nc = g.num_contacts();
            assert!(
                w.num_blocks() < nc * nc,
                "{name}: {} of {} blocks stored",
                w.num_blocks(),
                nc * nc
            );
        }
    }
}

#[test]
fn islands_through_trees_match_islands_through_w() {
    for name in [CLUTTER_40, BALLS] {
        let g = mujoco(name);
        let through_trees = Islands::of(&StepProblem::from_generalized(g.clone())).unwrap();
        let through_w = Islands::of(&StepProblem::local_only(g.to_local().unwrap())).unwrap();
        assert_eq!(through_trees, through_w, "{name}");
        let covered: usize = (0..through_trees.len())
            .map(|i| through_trees.contacts(i).len())
            .sum();
        assert_eq!(covered, g.num_contacts());
    }
    // The 80-body clutter step has more than one island.
    let islands = Islands::of(&StepProblem::from_generalized(mujoco(CLUTTER_80))).unwrap();
    assert!(islands.len() > 1, "{} islands", islands.len());
}

#[test]
fn solving_by_island_gives_the_whole_problems_answer() {
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 5_000,
        ..SolveOptions::default()
    };
    for name in [CLUTTER_40, "clutter_n8_seed7_step0100_nc20.json"] {
        let g = mujoco(name);
        let whole = pgs(
            &StepProblem::from_generalized(g.clone()),
            Layout::whole_dense(),
            &opts,
        );
        // Split whatever the size (the 20-contact step is below the default threshold).
        let split = pgs(
            &StepProblem::from_generalized(g.clone()),
            Layout {
                whole_below: 0,
                ..Layout::default()
            },
            &opts,
        );
        let dense_split = pgs(
            &StepProblem::from_generalized(g.clone()),
            Layout {
                islands: true,
                storage: Storage::Dense,
                whole_below: 0,
            },
            &opts,
        );
        for s in [&whole, &split, &dense_split] {
            assert_eq!(s.status, Status::Converged, "{name}: {:?}", s.metrics);
            // The build (here forming W from J and A) is timed, inside the solve's seconds,
            // with and without islands alike.
            assert!(
                s.build_seconds > 0.0 && s.build_seconds <= s.seconds,
                "{name}: build {} s of {} s",
                s.build_seconds,
                s.seconds
            );
        }
        let scale = whole.r.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        for other in [&split, &dense_split] {
            let gap = whole
                .r
                .iter()
                .zip(&other.r)
                .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(gap <= 1e-6 * scale, "{name}: impulses differ by {gap:e}");
        }
        let islands = Islands::of(&StepProblem::from_generalized(g)).unwrap();
        assert_eq!(split.counter("islands"), islands.len() as u64);
        assert_eq!(split.counter("largest_island"), islands.largest() as u64);
        assert!(split.counter("island_iterations") >= split.iterations);
    }
}

#[test]
fn problems_below_the_threshold_are_solved_whole() {
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 5_000,
        ..SolveOptions::default()
    };
    let g = mujoco("clutter_n8_seed7_step0100_nc20.json");
    assert!(g.num_contacts() < WHOLE_BELOW_CONTACTS);
    let p = || StepProblem::from_generalized(g.clone());
    assert!(Islands::of(&p()).unwrap().len() > 1);
    let default = pgs(&p(), Layout::default(), &opts);
    let whole = pgs(&p(), Layout::whole_dense(), &opts);
    // The same path as the whole dense layout: the same answer to the last bit, no islands.
    assert_eq!(default.r, whole.r);
    assert_eq!(default.counter("islands"), 0);
    let at = |whole_below| Layout {
        whole_below,
        ..Layout::default()
    };
    assert!(!at(21).splits(20) && at(20).splits(20) && at(0).splits(1));
    assert!(!at(0).splits(0) && !Layout::whole_dense().splits(100));
}

#[test]
fn warm_starts_are_split_and_put_back_by_contact() {
    let g = mujoco(CLUTTER_80);
    let p = StepProblem::from_generalized(g);
    let islands = Islands::of(&p).unwrap();
    let v: Vec<f64> = (0..3 * p.num_contacts()).map(|i| i as f64).collect();
    let parts: Vec<Vec<f64>> = (0..islands.len()).map(|i| islands.gather(i, &v)).collect();
    assert_eq!(islands.scatter(&parts), v);
    assert!(
        islands.gather(0, &[1.0]).is_empty(),
        "a warm start of the wrong length is dropped"
    );
}

/// One island of every contact (the whole step) is the problem itself, shared and not
/// copied, whose contact-space form is derived in the storage asked for; islands of some
/// contacts are copies of their part.
#[test]
fn the_island_of_every_contact_shares_the_problem() {
    let p = StepProblem::from_generalized(mujoco(CLUTTER_40));
    let parts = Islands::whole(p.num_contacts())
        .split(&p, Storage::Blocks)
        .unwrap();
    assert_eq!(parts.len(), 1);
    assert!(std::ptr::eq(
        parts[0].generalized().unwrap(),
        p.generalized().unwrap()
    ));
    assert!(parts[0].local_if_formed().is_none());
    assert!(matches!(parts[0].local().unwrap().w, Matrix::Blocks(_)));
    assert!(
        p.local_if_formed().is_none(),
        "the parent's form stays unformed"
    );
    let islands = Islands::of(&p).unwrap();
    assert!(islands.len() > 1);
    for (i, part) in islands
        .split(&p, Storage::Blocks)
        .unwrap()
        .iter()
        .enumerate()
    {
        assert!(!std::ptr::eq(
            part.generalized().unwrap(),
            p.generalized().unwrap()
        ));
        assert_eq!(part.num_contacts(), islands.contacts(i).len());
    }
}

#[test]
fn an_expired_time_limit_stops_every_island() {
    let opts = SolveOptions {
        time_limit: Some(Duration::ZERO),
        ..SolveOptions::default()
    };
    let s = pgs(
        &StepProblem::from_generalized(mujoco(CLUTTER_80)),
        Layout::default(),
        &opts,
    );
    assert_eq!(s.solver_status, Status::Timeout);
}

/// Two decoupled contacts: `W = diag(W_0, W_1)`.
fn two_islands(w1: [f64; 9]) -> LocalProblem {
    let mut d = vec![0.0; 36];
    let w0 = [2.0, 0.1, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0];
    for i in 0..3 {
        for j in 0..3 {
            d[i * 6 + j] = w0[3 * i + j];
            d[(i + 3) * 6 + j + 3] = w1[3 * i + j];
        }
    }
    LocalProblem::new(
        Matrix::from_row_major("W", 6, 6, &d).unwrap(),
        vec![-1.0, 0.2, 0.0, -0.5, 0.0, 0.1],
        vec![0.5, 0.5],
    )
    .unwrap()
}

#[test]
fn an_indefinite_island_is_refused_by_name_and_a_singular_one_is_not() {
    let psd = two_islands([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    check_psd_by_island(&psd, PSD_REL_TOL).expect("singular W is fine");
    let bad = two_islands([1.0, 0.0, 0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0]);
    let e = check_psd_by_island(&bad, PSD_REL_TOL)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`W`") || e.contains("W"), "{e}");
    assert!(e.contains("[1]"), "names the island's contacts: {e}");
    assert!(e.contains("-5.0"), "gives the eigenvalue: {e}");
    // A negative eigenvalue at round-off level passes.
    let tiny = two_islands([1.0, 0.0, 0.0, 0.0, -1e-7, 0.0, 0.0, 0.0, 1.0]);
    check_psd_by_island(&tiny, PSD_REL_TOL).expect("round-off is tolerated");
}

#[test]
fn shipped_mujoco_problems_are_positive_semidefinite_per_island() {
    for name in [CLUTTER_40, BALLS] {
        check_psd_by_island(&mujoco(name).to_local_blocks().unwrap(), PSD_REL_TOL)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
