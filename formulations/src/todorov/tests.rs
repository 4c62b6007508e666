//! Todorov's implicit NCP on every constraint kind: solves judged by the shared ruler, each
//! kind's map against its law and its derivative against finite differences, the edges, the
//! general path against the Coulomb fast path, and bad input.

use super::*;
use crate::fixtures::{every_kind_file, problem_of};
use contactlab_core::constraint::{Constraint, EVERY_KIND};
use contactlab_core::metrics::natural_map_residual;
use contactlab_core::plugin::Formulation;
use contactlab_core::{
    Constraints, LocalProblem, NonSmoothResidual, Residual, SolveOptions, Status, StepProblem,
};
use faer::Mat;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One block of each kind: a 3-row equality, a limit, a friction loss, a Coulomb contact,
/// contacts of condim 4, 1 and 6, an anisotropic condim 3 and a 1- and a 6-row equality.
fn every_kind() -> Vec<Constraint> {
    vec![
        Constraint::Equality { rows: 3 },
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.3 },
        Constraint::coulomb(0.6),
        Constraint::Contact {
            mu: vec![0.9, 0.5, 0.02],
        },
        Constraint::Contact { mu: vec![] },
        Constraint::Contact {
            mu: vec![0.8, 0.8, 0.01, 0.001, 0.001],
        },
        Constraint::Contact { mu: vec![1.2, 0.4] },
        Constraint::Equality { rows: 1 },
        Constraint::Equality { rows: 6 },
    ]
}

/// Solves `p` as the lab does (the plugin's build and sticking start, Todorov's driver with
/// its defaults) and returns the impulses; the run must converge and its impulses must read
/// below `1e-8` on the shared ruler over every row.
fn solve(p: &LocalProblem, what: &str) -> Vec<f64> {
    let form = ImplicitNcpFormulation::default();
    let step: StepProblem = p.clone().into();
    let built = form.build(&step).unwrap();
    let x0 = form.default_start(&built, &step).unwrap();
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 200,
        ..SolveOptions::default()
    };
    let s = solve_todorov(&built, TodorovSolver::default(), x0, &opts).unwrap();
    let r = form.impulses(&built, &s.x);
    let u = p.velocity(&r);
    let (nm, primal, dual, gap) = p.constraints.ruler(&r, &u);
    assert!(
        s.status == Status::Converged && nm < 1e-8 && natural_map_residual(p, &r) < 1e-8,
        "{what}: {:?} after {} iterations, natural map {nm:e}",
        s.status,
        s.iterations
    );
    assert!(
        primal < 1e-8 && dual < 1e-8 && gap < 1e-8,
        "{what}: {primal:e} {dual:e} {gap:e}"
    );
    r
}

#[test]
fn each_kind_alone_is_solved_to_the_rulers_tolerance() {
    let cone = |mu: &[f64]| Constraint::Contact { mu: mu.to_vec() };
    let cases: Vec<(&str, Vec<Constraint>, (f64, f64))> = vec![
        (
            "equalities of 1 row",
            vec![Constraint::Equality { rows: 1 }; 3],
            (-1.0, 1.0),
        ),
        (
            "equalities of 3 rows",
            vec![Constraint::Equality { rows: 3 }; 2],
            (-1.0, 1.0),
        ),
        (
            "equalities of 6 rows",
            vec![Constraint::Equality { rows: 6 }; 2],
            (-1.0, 1.0),
        ),
        ("limits", vec![Constraint::Limit; 5], (-1.0, 0.5)),
        (
            "friction losses",
            vec![Constraint::FrictionLoss { f_max: 0.3 }; 4],
            (-1.0, 1.0),
        ),
        ("contacts of condim 1", vec![cone(&[]); 4], (-1.0, 0.5)),
        (
            "anisotropic contacts of condim 3",
            vec![cone(&[0.9, 0.3]); 3],
            (-1.0, 0.5),
        ),
        (
            "contacts of condim 4",
            vec![cone(&[0.9, 0.5, 0.02]); 2],
            (-1.0, 0.5),
        ),
        (
            "contacts of condim 6",
            vec![cone(&[0.8, 0.6, 0.05, 0.01, 0.02]); 2],
            (-1.0, 0.5),
        ),
    ];
    for (what, blocks, q) in cases {
        for seed in 0..3 {
            solve(&problem_of(blocks.clone(), q, seed), what);
        }
    }
}

/// Friction losses with a small bound against a large drive all slide (`|r| = f_max`,
/// `u != 0`); with a large bound they all stick (`|r| < f_max`, `u = 0`).
#[test]
fn friction_losses_slide_and_stick() {
    for (what, f_max, sliding) in [("sliding", 0.01, true), ("sticking", 50.0, false)] {
        for seed in 0..3 {
            let p = problem_of(
                vec![Constraint::FrictionLoss { f_max }; 4],
                (-1.0, 1.0),
                seed,
            );
            let r = solve(&p, what);
            let u = p.velocity(&r);
            for (ri, ui) in r.iter().zip(&u) {
                if sliding {
                    assert!(
                        (ri.abs() - f_max).abs() < 1e-10 && ui.abs() > 1e-6,
                        "{r:?} {u:?}"
                    );
                    assert!(ri * ui < 0.0, "the loss opposes the motion: {r:?} {u:?}");
                } else {
                    assert!(ri.abs() < f_max && ui.abs() < 1e-8, "{r:?} {u:?}");
                }
            }
        }
    }
}

#[test]
fn a_mix_of_every_kind_is_solved_to_the_rulers_tolerance() {
    for seed in 0..8 {
        solve(&problem_of(every_kind(), (-1.0, 0.5), seed), "mix");
    }
    // The mixed problem file the CLI and the robustness sweep read.
    let p = every_kind_file();
    solve(&p, "every_kind.json");
}

/// An equality-only problem is linear: the sticking start (every block in its one region)
/// is its solution, reached in no iteration.
#[test]
fn the_sticking_start_solves_equalities() {
    let p = problem_of(
        vec![
            Constraint::Equality { rows: 6 },
            Constraint::Equality { rows: 1 },
        ],
        (-1.0, 1.0),
        4,
    );
    let f = ImplicitNcp::new(&p);
    let x0 = f.sticking_start(1e-12);
    let mut r = vec![0.0; 7];
    f.residual(&x0, &mut r);
    assert!(r.iter().all(|v| v.abs() < 1e-12), "{r:?}");
    let u = p.velocity(&f.impulses(&x0));
    assert!(u.iter().all(|v| v.abs() < 1e-12), "{u:?}");
}

/// Every kind's map meets the kind's law for every `x` (by construction, as eqs. 6, 7, 11
/// do for the contact): the pair `(f(x), v(x))` has a zero natural map and zero violations on
/// the kind's own terms of the ruler, and `v = f + x` (eq. 14).
#[test]
fn each_kinds_map_meets_its_law_for_every_x() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    for c in every_kind() {
        let n = c.rows();
        let map = BlockMap::new(&c, 0.0);
        assert_eq!(map.rows(), n);
        for _ in 0..400 {
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-3.0..3.0)).collect();
            let (mut f, mut v, mut nm) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            map.impulse(&x, &mut f);
            map.velocity(&x, &mut v);
            c.natural_map(&f, &v, &mut nm);
            let scale = 1e-12 * (1.0 + x.iter().map(|v| v.abs()).sum::<f64>());
            assert!(
                nm.iter().all(|e| e.abs() <= scale),
                "{c:?} at {x:?}: {nm:?}"
            );
            let (p, d, g) = c.violations(&f, &v);
            assert!(
                p <= scale && d <= scale && g <= 10.0 * scale,
                "{c:?} at {x:?}"
            );
            for i in 0..n {
                assert_eq!(v[i], f[i] + x[i]);
            }
        }
    }
}

/// A point's block entries that lie farther than `gap` from every edge of its block.
fn away_from_edges(map: &BlockMap<'_>, x: &[f64], gap: f64) -> bool {
    let n = x.len();
    (0..n).all(|i| {
        [gap, -gap].iter().all(|&h| {
            let mut y = x.to_vec();
            y[i] += h;
            map.region(&y) == map.region(x)
        })
    })
}

/// Each kind's `df/dx` against central differences of its impulse at random points away
/// from its edges, in every region the points fall in.
#[test]
fn each_kinds_derivative_matches_central_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let h = 1e-7;
    for c in every_kind() {
        let n = c.rows();
        let map = BlockMap::new(&c, 0.15);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..300 {
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            if !away_from_edges(&map, &x, 1e-4) {
                continue;
            }
            let region = map.region(&x);
            seen.insert(region);
            let mut d = vec![0.0; n * n];
            map.df_dx(region, &x, &mut d);
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            for col in 0..n {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[col] += h;
                xm[col] -= h;
                map.impulse(&xp, &mut fp);
                map.impulse(&xm, &mut fm);
                for row in 0..n {
                    let fd = (fp[row] - fm[row]) / (2.0 * h);
                    assert!(
                        (fd - d[row * n + col]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "{c:?} {region:?} at {x:?} ({row},{col}): {fd} vs {}",
                        d[row * n + col]
                    );
                }
            }
        }
        // Every kind's non-trivial piece is checked: an equality's one, the break side of a
        // limit, the slip of a box and of a cone (stick is sampled where the cone is not thin).
        let want = match c {
            Constraint::Equality { .. } => Region::Stick,
            Constraint::FrictionLoss { .. } => Region::Slip,
            Constraint::Limit => Region::Break,
            Constraint::Contact { ref mu } if mu.is_empty() => Region::Break,
            Constraint::Contact { .. } => Region::Slip,
        };
        assert!(seen.contains(&want), "{c:?}: regions {seen:?}");
    }
}

/// Central differences of the whole residual against its Jacobian on problems of every kind
/// (an entry whose forward and backward quotients differ straddles an edge: skipped).
#[test]
fn jacobian_of_every_kind_matches_central_differences() {
    let h = 1e-7;
    for seed in 0..10 {
        let p = problem_of(every_kind(), (-1.0, 1.0), 100 + seed);
        for f in [
            ImplicitNcp::new(&p),
            ImplicitNcp::new(&p).with_row_sum_scaling(),
        ] {
            let n = p.q.len();
            let mut rng = ChaCha8Rng::seed_from_u64(200 + seed);
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.5..1.5)).collect();
            let mut j = Mat::<f64>::zeros(n, n);
            f.jacobian(&x, j.as_mut());
            let (mut r0, mut rp, mut rm) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            f.residual(&x, &mut r0);
            for c in 0..n {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[c] += h;
                xm[c] -= h;
                f.residual(&xp, &mut rp);
                f.residual(&xm, &mut rm);
                for i in 0..n {
                    let (fwd, bwd) = ((rp[i] - r0[i]) / h, (r0[i] - rm[i]) / h);
                    if (fwd - bwd).abs() > 1e-4 {
                        continue;
                    }
                    let fd = (rp[i] - rm[i]) / (2.0 * h);
                    assert!(
                        (fd - j[(i, c)]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "seed {seed} ({i},{c}): {fd} vs {}",
                        j[(i, c)]
                    );
                }
            }
        }
    }
}

/// The O(n^2) kernels of the general path (`J'J`, `J'r`, `J d`) equal the dense products of
/// its Jacobian.
#[test]
fn general_kernels_equal_the_dense_products() {
    for seed in 0..6 {
        let p = problem_of(every_kind(), (-1.0, 1.0), 300 + seed);
        for f in [
            ImplicitNcp::new(&p),
            ImplicitNcp::new(&p).with_row_sum_scaling(),
        ] {
            let n = p.q.len();
            let mut rng = ChaCha8Rng::seed_from_u64(400 + seed);
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.5..1.5)).collect();
            let dir: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut j = Mat::<f64>::zeros(n, n);
            f.jacobian(&x, j.as_mut());
            let mut r = vec![0.0; n];
            f.residual(&x, &mut r);
            let ne = f.normal_equations(&x, &r, &[], &[]);
            let jtj = j.transpose() * &j;
            let jtr = j.transpose() * faer::Col::from_fn(n, |i| r[i]);
            let jd = &j * faer::Col::from_fn(n, |i| dir[i]);
            let mut along = vec![0.0; n];
            f.derivative_along(&x, &dir, &mut along);
            for a in 0..n {
                assert!((ne.gradient[a] - jtr[a]).abs() < 1e-12, "J'r row {a}");
                assert!((along[a] - jd[a]).abs() < 1e-12, "J d row {a}");
                for b in 0..n {
                    assert!(
                        (ne.jtj[(a, b)] - jtj[(a, b)]).abs() < 1e-12,
                        "J'J ({a},{b})"
                    );
                }
            }
        }
    }
}

/// A point with block `k` moved exactly onto one of its edges.
fn on_edges(p: &LocalProblem, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut x: Vec<f64> = (0..p.q.len())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    for (rows, c) in p.constraints.iter() {
        let xb = &mut x[rows];
        match c {
            Constraint::Limit => xb[0] = 0.0,
            Constraint::FrictionLoss { f_max } => xb[0] = -f_max,
            Constraint::Contact { mu } if mu.is_empty() => xb[0] = 0.0,
            // On the cone |D^-1 x_F| = -x_n (b = 0), the friction rows scaled by mu_i so
            // that x_n stays of the order of the rest.
            Constraint::Contact { mu } => {
                xb[1..].iter_mut().zip(mu).for_each(|(x, m)| *x *= m);
                let norm = super::kinds::scaled_norm(mu, &xb[1..]);
                xb[0] = -norm;
            }
            Constraint::Equality { .. } => {}
        }
    }
    x
}

/// On edges, the Jacobian taken along a direction is the one-sided derivative there: it
/// matches one-sided differences, and the edges are found with the normals the slopes use.
#[test]
fn one_sided_jacobians_on_edges_match_one_sided_differences() {
    let p = problem_of(every_kind(), (-1.0, 1.0), 7);
    let f = ImplicitNcp::new(&p);
    let n = p.q.len();
    let x = on_edges(&p, 8);
    let mut edges = Vec::new();
    f.edges_at(&x, &mut edges);
    // Every block but the equalities lies on an edge.
    assert_eq!(edges.len(), 7, "{edges:?}");
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..6 {
        let dir: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut j = Mat::<f64>::zeros(n, n);
        f.jacobian_along(&x, &dir, j.as_mut());
        let h = 1e-8;
        let xp: Vec<f64> = x.iter().zip(&dir).map(|(a, d)| a + h * d).collect();
        let (mut r0, mut r1) = (vec![0.0; n], vec![0.0; n]);
        f.residual(&x, &mut r0);
        f.residual(&xp, &mut r1);
        for i in 0..n {
            let fd = (r1[i] - r0[i]) / h;
            let jd: f64 = (0..n).map(|c| j[(i, c)] * dir[c]).sum();
            assert!(
                (fd - jd).abs() < 1e-5 * (1.0 + fd.abs()),
                "row {i}: {fd} vs {jd}"
            );
        }
    }
    // The slopes of eq. 25 are the one-sided derivatives of the merit along +-d.
    let mut r = vec![0.0; n];
    f.residual(&x, &mut r);
    let mut slopes = Vec::new();
    f.edge_slopes(&x, &r, &edges, &mut slopes);
    for (e, (d1, d2)) in edges.iter().zip(slopes) {
        let merit = |s: f64| {
            let y: Vec<f64> = x
                .iter()
                .zip(e.direction(n, s))
                .map(|(a, d)| a + 1e-8 * d)
                .collect();
            let mut ry = vec![0.0; n];
            f.residual(&y, &mut ry);
            0.5 * ry.iter().map(|v| v * v).sum::<f64>()
        };
        let m0 = 0.5 * r.iter().map(|v| v * v).sum::<f64>();
        let (fd1, fd2) = ((merit(1.0) - m0) / 1e-8, (merit(-1.0) - m0) / 1e-8);
        assert!(
            (fd1 - d1).abs() < 1e-5 * (1.0 + d1.abs()),
            "{e:?}: {fd1} vs {d1}"
        );
        assert!(
            (fd2 - d2).abs() < 1e-5 * (1.0 + d2.abs()),
            "{e:?}: {fd2} vs {d2}"
        );
    }
}

/// Every crossing lies on an edge, and sampling a segment finds no region change that a
/// crossing does not explain (eq. 27 generalized to the elliptic cone and the box).
#[test]
fn crossings_lie_on_edges_and_explain_every_region_change() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for c in every_kind() {
        let n = c.rows();
        let map = BlockMap::new(&c, 0.1);
        for _ in 0..100 {
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            let dx: Vec<f64> = (0..n).map(|_| rng.random_range(-4.0..4.0)).collect();
            let mut alphas = Vec::new();
            map.crossings(&x, &dx, &mut alphas);
            let at = |a: f64| {
                x.iter()
                    .zip(&dx)
                    .map(|(x, d)| x + a * d)
                    .collect::<Vec<_>>()
            };
            for &a in &alphas {
                assert!(a > 0.0 && a <= 1.0);
                assert!(map.edge(&at(a)).is_some(), "{c:?}: {a} gives {:?}", at(a));
            }
            let steps = 400;
            for i in 0..steps {
                let (a0, a1) = (i as f64 / steps as f64, (i + 1) as f64 / steps as f64);
                if map.region(&at(a0)) != map.region(&at(a1)) {
                    assert!(
                        alphas.iter().any(|&a| a >= a0 - 1e-9 && a <= a1 + 1e-9),
                        "{c:?}: region change in [{a0}, {a1}] without a crossing {alphas:?}"
                    );
                }
            }
        }
    }
}

/// The projection onto the elliptic cone's edge lands on it, no sampled point of the edge is
/// nearer, and rows without friction keep their values.
#[test]
fn cone_edge_projection_lands_on_the_edge_and_is_nearest() {
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let c = Constraint::Contact {
        mu: vec![0.9, 0.4, 0.0],
    };
    let b = 0.2;
    let map = BlockMap::new(&c, b);
    for _ in 0..300 {
        let x: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
        if map.region(&x) == Region::Stick {
            continue;
        }
        let mut p = x.clone();
        map.project_onto_edge(&mut p);
        assert!(p[0] <= b && map.edge(&p).is_some(), "{x:?} -> {p:?}");
        assert_eq!(p[3], x[3]);
        let dist = |y: &[f64]| (0..3).map(|i| (x[i] - y[i]).powi(2)).sum::<f64>().sqrt();
        for _ in 0..50 {
            let (s, phi) = (
                rng.random_range(0.0..4.0),
                rng.random_range(0.0..std::f64::consts::TAU),
            );
            let y = [b - s, 0.9 * s * phi.cos(), 0.4 * s * phi.sin()];
            assert!(dist(&p) <= dist(&y) + 1e-10, "{x:?}: {p:?} vs {y:?}");
        }
    }
}

/// With equal sliding coefficients (and a torsional row without friction) the elliptic
/// cone's map is Todorov's Coulomb map: impulse, region, derivative and crossings.
#[test]
fn equal_coefficients_give_todorovs_coulomb_map() {
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let (mu, b) = (0.7, -0.1);
    let c = Constraint::Contact {
        mu: vec![mu, mu, 0.0],
    };
    let ours = BlockMap::new(&c, b);
    let todorov = BlockMap::coulomb(mu, b);
    for _ in 0..300 {
        let x: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
        let dx: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
        let (mut f4, mut f3) = ([0.0; 4], [0.0; 3]);
        ours.impulse(&x, &mut f4);
        todorov.impulse(&x[..3], &mut f3);
        assert_eq!(f4[3], 0.0);
        for i in 0..3 {
            assert!((f4[i] - f3[i]).abs() < 1e-14, "{x:?}: {f4:?} vs {f3:?}");
        }
        let region = ours.region(&x);
        assert_eq!(region, todorov.region(&x[..3]));
        let (mut d4, mut d3) = ([0.0; 16], [0.0; 9]);
        ours.df_dx(region, &x, &mut d4);
        todorov.df_dx(region, &x[..3], &mut d3);
        for i in 0..3 {
            for j in 0..3 {
                assert!(
                    (d4[4 * i + j] - d3[3 * i + j]).abs() < 1e-12,
                    "{x:?} ({i},{j})"
                );
            }
        }
        let (mut a4, mut a3) = (Vec::new(), Vec::new());
        ours.crossings(&x, &dx, &mut a4);
        todorov.crossings(&x[..3], &dx[..3], &mut a3);
        a4.sort_by(f64::total_cmp);
        a3.sort_by(f64::total_cmp);
        assert_eq!(a4.len(), a3.len(), "{a4:?} vs {a3:?}");
        assert!(a4.iter().zip(&a3).all(|(a, b)| (a - b).abs() < 1e-12));
    }
}

/// The general block path, run on Coulomb contacts, gives the fast path's numbers: the
/// residual bit for bit, the Jacobian's products to rounding, the same kinks and edges.
#[test]
fn the_general_path_on_coulomb_contacts_is_the_fast_path() {
    let p = problem_of(
        vec![Constraint::coulomb(0.5), Constraint::coulomb(1.1)],
        (-1.0, 0.5),
        1,
    );
    let fast = ImplicitNcp::new(&p).with_bias(vec![0.05, -0.1]).unwrap();
    let general = fast.clone().with_general_path();
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    for _ in 0..20 {
        let x: Vec<f64> = (0..6).map(|_| rng.random_range(-1.0..1.0)).collect();
        let dx: Vec<f64> = (0..6).map(|_| rng.random_range(-2.0..2.0)).collect();
        let (mut a, mut b) = (vec![0.0; 6], vec![0.0; 6]);
        fast.residual(&x, &mut a);
        general.residual(&x, &mut b);
        assert_eq!(a, b);
        let ne = |f: &ImplicitNcp| f.normal_equations(&x, &a, &[], &[]);
        let (n1, n2) = (ne(&fast), ne(&general));
        for i in 0..6 {
            assert!((n1.gradient[i] - n2.gradient[i]).abs() < 1e-13);
            for j in 0..6 {
                assert!((n1.jtj[(i, j)] - n2.jtj[(i, j)]).abs() < 1e-13);
            }
        }
        let (mut k1, mut k2) = (Vec::new(), Vec::new());
        fast.kinks_on_segment(&x, &dx, &mut k1);
        general.kinks_on_segment(&x, &dx, &mut k2);
        assert_eq!(k1, k2);
    }
    assert_eq!(fast.sticking_start(1e-12), general.sticking_start(1e-12));
}

#[test]
fn bad_input_is_a_clear_error_and_nothing_panics() {
    assert_eq!(ImplicitNcpFormulation::KINDS, EVERY_KIND);
    let form = ImplicitNcpFormulation::default();
    let good = problem_of(every_kind(), (-1.0, 0.5), 3);
    // A negative friction-loss bound, a NaN coefficient, a NaN in q: refused at build by name.
    let with_blocks = |blocks: Vec<Constraint>| {
        let mut p = good.clone();
        p.constraints = Constraints::unchecked(blocks);
        p
    };
    let mut blocks = every_kind();
    blocks[2] = Constraint::FrictionLoss { f_max: -0.3 };
    let err = form
        .build(&with_blocks(blocks).into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("f_max") && err.contains("-0.3"), "{err}");
    let mut blocks = every_kind();
    blocks[4] = Constraint::Contact {
        mu: vec![0.9, f64::NAN, 0.02],
    };
    let err = form
        .build(&with_blocks(blocks).into())
        .unwrap_err()
        .to_string();
    assert!(err.contains("mu[1]"), "{err}");
    let mut nan_q = good.clone();
    nan_q.q[5] = f64::NAN;
    assert!(form.build(&nan_q.into()).is_err());
    // A bias of the wrong length names the blocks.
    let err = ImplicitNcp::new(&good)
        .with_bias(vec![0.0; 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("one per block"), "{err}");
    // Non-finite unknowns give non-finite residuals and a solve that stops, no panic.
    let f = ImplicitNcp::new(&good);
    let n = good.q.len();
    let mut out = vec![0.0; n];
    f.residual(&vec![f64::NAN; n], &mut out);
    assert!(out.iter().any(|v| v.is_nan()));
    let s = solve_todorov(
        &f,
        TodorovSolver::default(),
        vec![f64::NAN; n],
        &SolveOptions::default(),
    )
    .unwrap();
    assert_ne!(s.status, Status::Converged);
    // Unchecked bad blocks evaluated directly: finite garbage or NaN, never a panic.
    let bad = Constraint::FrictionLoss { f_max: f64::NAN };
    let mut fb = [0.0];
    BlockMap::new(&bad, 0.0).impulse(&[0.5], &mut fb);
    let bad = Constraint::Contact {
        mu: vec![f64::NAN, 1.0],
    };
    let mut fc = [0.0; 3];
    BlockMap::new(&bad, 0.0).impulse(&[-1.0, 2.0, 1.0], &mut fc);
}
