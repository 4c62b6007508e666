//! SAP's tests: the cost's derivatives against finite differences, the line derivatives, the
//! solve (monotone decrease, the dual problem's optimality conditions, symbolic reuse), the
//! regularisation, bad input, and MuJoCo as an outside oracle.

use std::path::PathBuf;

use contactlab_core::block_cholesky;
use contactlab_core::drivers::newton_merit::{Backtracking, SearchKind};
use contactlab_core::drivers::{solve_merit, Clarabel, Lbfgs, NewtonMerit};
use contactlab_core::generalized::{ContactModel, GeneralizedProblem, StepContext};
use contactlab_core::plugin::{judge, solve_formulation, Driver, Formulation, Init};
use contactlab_core::{Merit, MeritHessian, OwnNewton, Problem, SolveOptions, Status, StepProblem};
use faer::linalg::solvers::SolveCore;
use faer::sparse::{SparseColMat, Triplet};
use nalgebra::Vector3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cost::{HessianFactorization, SapCost};
use super::params::{regularization, RegularizationParams};
use super::plugin::{SapBuilt, SapFormulation};
use super::projection::ContactRegularization;

/// `n_trees` rigid trees of `dofs` velocities each (random SPD blocks), `nc` contacts each
/// between one or two random trees with random Jacobian rows, compliant with a time step.
pub(super) fn random_problem(
    seed: u64,
    n_trees: usize,
    dofs: usize,
    nc: usize,
) -> GeneralizedProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nv = n_trees * dofs;
    let mut a = Vec::new();
    for t in 0..n_trees {
        let l: Vec<f64> = (0..dofs * dofs)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        for i in 0..dofs {
            for j in 0..dofs {
                let mut v: f64 = (0..dofs).map(|k| l[i * dofs + k] * l[j * dofs + k]).sum();
                if i == j {
                    v += 0.5;
                }
                a.push(Triplet::new(t * dofs + i, t * dofs + j, v));
            }
        }
    }
    let mut j = Vec::new();
    for i in 0..nc {
        let t1 = rng.random_range(0..n_trees);
        let t2 = rng.random_range(0..n_trees);
        for t in if t1 == t2 { vec![t1] } else { vec![t1, t2] } {
            for r in 0..3 {
                for c in 0..dofs {
                    j.push(Triplet::new(
                        3 * i + r,
                        t * dofs + c,
                        rng.random_range(-1.0..1.0),
                    ));
                }
            }
        }
    }
    let contacts = (0..nc)
        .map(|_| ContactModel {
            mu: rng.random_range(0.1..1.5),
            phi0: rng.random_range(-1e-3..1e-3),
            stiffness: 10f64.powf(rng.random_range(2.0..6.0)),
            dissipation: rng.random_range(0.0..0.02),
        })
        .collect();
    GeneralizedProblem::new(
        SparseColMat::try_new_from_triplets(nv, nv, &a).unwrap(),
        SparseColMat::try_new_from_triplets(3 * nc, nv, &j).unwrap(),
        (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect(),
        vec![0.0; 3 * nc],
        contacts,
        StepContext {
            dt: Some(0.01),
            ..Default::default()
        },
    )
    .unwrap()
}

fn cost_of(p: &GeneralizedProblem) -> SapCost {
    cost_with(p, HessianFactorization::Auto)
}

fn cost_with(p: &GeneralizedProblem, hessian: HessianFactorization) -> SapCost {
    SapFormulation {
        hessian,
        ..SapFormulation::default()
    }
    .build(&StepProblem::from(p.clone()))
    .map(contacts_cost)
    .unwrap()
}

/// The contact cost of a Coulomb problem's build.
fn contacts_cost(built: SapBuilt) -> SapCost {
    match built {
        SapBuilt::Contacts(c) => *c,
        SapBuilt::Blocks(_) => panic!("a Coulomb problem builds the contact cost"),
    }
}

/// A Hessian from `evaluate` as a dense matrix, whichever layout gave it.
fn dense_hessian(h: Option<MeritHessian>) -> faer::Mat<f64> {
    match h {
        Some(MeritHessian::Dense(h)) => h,
        Some(MeritHessian::Sparse(s)) => s.to_dense(),
        None => panic!("the Hessian was asked for"),
    }
}

fn random_point(cost: &SapCost, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    cost.v_star()
        .iter()
        .map(|v| v + rng.random_range(-1.0..1.0))
        .collect()
}

#[test]
fn gradient_and_hessian_match_finite_differences_inside_each_region() {
    let mut checked = 0;
    for seed in 0..20 {
        let p = random_problem(seed, 3, 3, 4);
        let cost = cost_of(&p);
        let x = random_point(&cost, 100 + seed);
        let n = x.len();
        let h = 1e-6;
        // Only points whose regions do not change within h (the derivatives jump there).
        let regions = cost.regions(&x);
        let stable = (0..n).all(|k| {
            let mut xp = x.clone();
            xp[k] += h;
            let mut xm = x.clone();
            xm[k] -= h;
            cost.regions(&xp) == regions && cost.regions(&xm) == regions
        });
        if !stable {
            continue;
        }
        let e = cost.evaluate(&x, true);
        let hd = dense_hessian(e.hessian.clone());
        // The sparse layout's assembly gives the same matrix.
        let sparse = cost_with(&p, HessianFactorization::Sparse).evaluate(&x, true);
        assert!(matches!(sparse.hessian, Some(MeritHessian::Sparse(_))));
        let hs = dense_hessian(sparse.hessian);
        for r in 0..n {
            for c in 0..n {
                assert!((hs[(r, c)] - hd[(r, c)]).abs() < 1e-12 * (1.0 + hd[(r, c)].abs()));
            }
        }
        let scale = 1.0 + e.gradient.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for k in 0..n {
            let mut xp = x.clone();
            xp[k] += h;
            let mut xm = x.clone();
            xm[k] -= h;
            let fd = (cost.value(&xp) - cost.value(&xm)) / (2.0 * h);
            assert!(
                (fd - e.gradient[k]).abs() < 1e-5 * scale,
                "seed {seed} grad {k}"
            );
            let (gp, gm) = (
                cost.evaluate(&xp, false).gradient,
                cost.evaluate(&xm, false).gradient,
            );
            for r in 0..n {
                let fd = (gp[r] - gm[r]) / (2.0 * h);
                assert!(
                    (fd - hd[(r, k)]).abs() < 1e-4 * (1.0 + hd[(r, k)].abs()),
                    "seed {seed} H({r}, {k}): {fd} vs {}",
                    hd[(r, k)]
                );
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 10,
        "only {checked} points away from region boundaries"
    );
}

#[test]
fn the_tree_block_newton_direction_solves_the_assembled_hessian() {
    for seed in 0..10 {
        let p = random_problem(40 + seed, 5, 6, 9);
        let cost = cost_with(&p, HessianFactorization::TreeBlocks);
        assert!(cost.factors_by_tree_blocks());
        let x = random_point(&cost, 500 + seed);
        let e = cost.evaluate(&x, true);
        let h = dense_hessian(e.hessian);
        let mut d = vec![0.0; x.len()];
        let own = cost.newton_direction(&x, &e.gradient, &mut d);
        assert_eq!(own, OwnNewton::Solved { analysed: true });
        // H d = -g.
        for r in 0..x.len() {
            let hd: f64 = (0..x.len()).map(|c| h[(r, c)] * d[c]).sum();
            assert!(
                (hd + e.gradient[r]).abs() < 1e-8 * (1.0 + e.gradient[r].abs()),
                "seed {seed} row {r}: {hd} vs {}",
                -e.gradient[r]
            );
        }
        // The analysis is reported once; the sparse layout leaves the system to the driver.
        let again = cost.newton_direction(&x, &e.gradient, &mut d);
        assert_eq!(again, OwnNewton::Solved { analysed: false });
        let sparse = cost_with(&p, HessianFactorization::Sparse);
        assert_eq!(
            sparse.newton_direction(&x, &e.gradient, &mut d),
            OwnNewton::NotProvided
        );
    }
}

#[test]
fn line_derivatives_agree_with_the_full_evaluation() {
    let p = random_problem(3, 4, 3, 6);
    let cost = cost_of(&p);
    let x = random_point(&cost, 7);
    let d = random_point(&cost, 8)
        .iter()
        .zip(cost.v_star())
        .map(|(a, b)| a - b)
        .collect::<Vec<_>>();
    for alpha in [0.0, 0.3, 1.0, 1.25] {
        let lp = cost.along_line(&x, &d, alpha);
        let xa: Vec<f64> = x.iter().zip(&d).map(|(a, b)| a + alpha * b).collect();
        let e = cost.evaluate(&xa, true);
        assert!((lp.value - e.value).abs() < 1e-12 * (1.0 + e.value.abs()));
        let slope: f64 = e.gradient.iter().zip(&d).map(|(g, di)| g * di).sum();
        assert!((lp.slope - slope).abs() < 1e-10 * (1.0 + slope.abs()));
        let hd = dense_hessian(e.hessian);
        let curvature: f64 = (0..d.len())
            .map(|i| d[i] * (0..d.len()).map(|j| hd[(i, j)] * d[j]).sum::<f64>())
            .sum();
        assert!((lp.curvature - curvature).abs() < 1e-10 * (1.0 + curvature.abs()));
    }
}

/// Absolute tolerance 1e-12 on `|D grad|`: the gradient's floor here is a few 1e-13 (the
/// rounding of `A (v - v*)` and `J' gamma`, which cancel at the optimum), and which side of
/// 1e-13 an iterate lands on is luck of the summation order.
fn sap_options() -> SolveOptions {
    SolveOptions {
        stop_tol: 1e-12,
        max_iter: 100,
        ..SolveOptions::default()
    }
}

/// The dual problem's optimality (eq. 22) at SAP's answer: `gamma` in the cone,
/// `g = v_c - v^ + R gamma` in the dual cone, `gamma . g = 0`, and momentum balance (eq. 18).
fn check_dual_optimality(p: &GeneralizedProblem, cost: &SapCost, x: &[f64], tol: f64) {
    let gamma = cost.impulses(x);
    let vc = cost.contact_velocities(x);
    let r = regularization(
        p,
        &RegularizationParams {
            beta: 1.0,
            sigma: 1e-3,
        },
    )
    .unwrap();
    let scale = 1.0 + gamma.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, reg) in r.contacts.iter().enumerate() {
        let gi = Vector3::new(gamma[3 * i], gamma[3 * i + 1], gamma[3 * i + 2]);
        let g = Vector3::new(
            vc[3 * i] - r.v_hat[i] + reg.rn * gi[0],
            vc[3 * i + 1] + reg.rt * gi[1],
            vc[3 * i + 2] + reg.rt * gi[2],
        );
        assert!(
            gi[1].hypot(gi[2]) <= reg.mu * gi[0] + tol * scale,
            "contact {i} cone"
        );
        assert!(
            reg.mu * g[1].hypot(g[2]) <= g[0] + tol * (1.0 + g.amax()),
            "contact {i} dual"
        );
        assert!(
            gi.dot(&g).abs() <= tol * scale * (1.0 + g.amax()),
            "contact {i} gap"
        );
    }
    let e = cost.evaluate(x, false);
    assert!(
        e.gradient.iter().all(|v| v.abs() < 1e-9 * scale),
        "momentum balance"
    );
}

#[test]
fn sap_converges_monotonically_to_the_dual_optimum_reusing_one_symbolic_factorization() {
    for seed in 0..10 {
        let p = random_problem(seed, 5, 6, 8);
        let cost = cost_of(&p);
        let s = NewtonMerit::default()
            .solve(&cost, cost.v_star().to_vec(), &sap_options())
            .unwrap();
        assert_eq!(s.status, Status::Converged, "seed {seed}: {:?}", s.trace);
        let merits = s.trace.merits();
        assert!(
            merits.windows(2).all(|w| w[1] <= w[0] + 1e-12 * w[0].abs()),
            "seed {seed}: {merits:?}"
        );
        if s.iterations > 1 {
            assert_eq!(
                s.counters.get("symbolic_factorizations"),
                Some(&1),
                "seed {seed}"
            );
            assert_eq!(
                s.counters.get("numeric_factorizations"),
                Some(&s.iterations)
            );
        }
        check_dual_optimality(&p, &cost, &s.x, 1e-8);
        // The backtracking alternative finds the same optimum.
        let mut bt = NewtonMerit::default();
        bt.search = SearchKind::Backtracking;
        bt.backtracking = Backtracking::default();
        // Backtracking resolves the decrease by values only: stop above their rounding floor.
        let opts = SolveOptions {
            stop_tol: 1e-9,
            ..sap_options()
        };
        let s2 = bt.solve(&cost, cost.v_star().to_vec(), &opts).unwrap();
        assert_eq!(s2.status, Status::Converged, "seed {seed}");
        assert!(s
            .x
            .iter()
            .zip(&s2.x)
            .all(|(a, b)| (a - b).abs() < 1e-6 * (1.0 + a.abs())));
    }
}

#[test]
fn lbfgs_reaches_newtons_optimum_without_a_hessian_and_more_iterations() {
    for seed in 0..5 {
        let p = random_problem(seed, 5, 6, 8);
        let cost = cost_of(&p);
        let newton = NewtonMerit::default()
            .solve(&cost, cost.v_star().to_vec(), &sap_options())
            .unwrap();
        // Moré-Thuente judges steps by values, whose rounding hides the decrease near the
        // optimum: stop by eq. 26's relative rule, as SAP does on clutter.
        let opts = SolveOptions {
            stop_tol: 1e-16,
            rel_tol: 1e-7,
            max_iter: 2000,
            ..SolveOptions::default()
        };
        let s = Lbfgs::default()
            .solve(&cost, cost.v_star().to_vec(), &opts)
            .unwrap();
        assert_eq!(s.status, Status::Converged, "seed {seed}");
        assert!(!s.counters.contains_key("hessian_count"), "no Hessian");
        assert!(
            s.iterations >= newton.iterations,
            "seed {seed}: L-BFGS {} vs Newton {}",
            s.iterations,
            newton.iterations
        );
        let worst =
            s.x.iter()
                .zip(&newton.x)
                .map(|(a, b)| (a - b).abs() / (1.0 + b.abs()))
                .fold(0.0f64, f64::max);
        assert!(worst < 1e-5, "seed {seed}: {worst:e}");
    }
}

#[test]
fn clarabel_on_the_primal_problem_finds_saps_optimum() {
    let ipm = Clarabel {
        tol_gap_abs: 1e-10,
        tol_gap_rel: 1e-10,
        tol_feas: 1e-10,
        ..Clarabel::default()
    };
    for seed in 0..10 {
        // Some frictionless contacts too: their cone is the half-space g_n >= 0.
        let mut p = random_problem(seed, 5, 6, 8);
        if seed % 3 == 0 {
            p.contacts[0].mu = 0.0;
        }
        let cost = cost_of(&p);
        let sap = NewtonMerit::default()
            .solve(&cost, cost.v_star().to_vec(), &sap_options())
            .unwrap();
        let s = ipm.solve(&cost, vec![], &SolveOptions::default()).unwrap();
        assert_eq!(s.status, Status::Converged, "seed {seed}");
        assert_eq!(s.counters.get("warm_start_ignored"), Some(&1));
        // The IPM returns its primal pair [v; sigma] (eq. 19).
        assert_eq!(s.x.len(), sap.x.len() + 3 * cost.num_contacts());
        let v_ipm = cost.velocities_of(&s.x);
        let scale = 1.0 + sap.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let worst = max_abs_diff(v_ipm, &sap.x);
        // An interior point's velocities carry about the square root of its gap tolerance
        // (the cost is flat to second order at the optimum): 1e-10 gives about 1e-6.
        assert!(
            worst < 1e-5 * scale,
            "seed {seed}: velocities differ by {worst:e}"
        );
        // SAP's cost at the IPM's velocities is the optimum's, from above.
        let (l_ipm, l_sap) = (cost.value(v_ipm), cost.value(&sap.x));
        assert!(
            l_ipm >= l_sap - 1e-12 * l_sap.abs() && l_ipm - l_sap <= 1e-8 * (1.0 + l_sap.abs()),
            "seed {seed}: {l_ipm} vs {l_sap}"
        );
        // Theorem 1: at the optimum sigma = gamma. The IPM's sigma is its impulse; measured at
        // its own pair it balances momentum to its feasibility tolerance, and it is not exactly
        // complementary (SAP's gamma(v) is, by construction).
        let (g_sap, g_ipm) = (cost.impulses(&sap.x), cost.impulses(&s.x));
        let g_scale = 1.0 + g_sap.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max_abs_diff(&g_ipm, &g_sap) < 1e-5 * g_scale, "seed {seed}");
        let (e_m, e_mu) = cost.accuracy(&s.x);
        assert!(e_m < 1e-7, "seed {seed}: e_m {e_m:e}");
        assert!(e_mu > 0.0 && e_mu < 1e-6, "seed {seed}: e_mu {e_mu:e}");
        let (_, e_mu_sap) = cost.accuracy(&sap.x);
        assert!(e_mu_sap < 1e-12, "seed {seed}: SAP's e_mu {e_mu_sap:e}");
    }
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn the_conic_statement_keeps_shapes_and_cones() {
    use contactlab_core::conic_program::{Cone, ConicProgram};
    let p = random_problem(4, 3, 6, 5);
    let cost = cost_of(&p);
    let c = cost.conic_program().unwrap();
    let n = cost.num_unknowns() + 3 * cost.num_contacts();
    assert_eq!(c.q.len(), n);
    assert_eq!((c.p.nrows(), c.p.ncols()), (n, n));
    assert_eq!((c.a.nrows(), c.a.ncols()), (15, n));
    assert_eq!(c.cones, vec![Cone::SecondOrder(3); 5]);
    c.validate().unwrap();
    // P holds only its upper triangle.
    let (cp, ri) = (c.p.symbolic().col_ptr(), c.p.symbolic().row_idx());
    assert!((0..n).all(|col| (cp[col]..cp[col + 1]).all(|k| ri[k] <= col)));
    let mut bad = c.clone();
    bad.q.push(0.0);
    assert!(bad.validate().unwrap_err().to_string().contains("`P`"));
}

#[test]
fn lbfgs_refuses_a_zero_memory_with_a_reason() {
    let p = random_problem(3, 2, 3, 2);
    let cost = cost_of(&p);
    let mut bad = Lbfgs::default();
    bad.memory = 0;
    let err = bad
        .solve(&cost, cost.v_star().to_vec(), &sap_options())
        .unwrap_err();
    assert!(err.to_string().contains("memory"), "{err}");
}

#[test]
fn one_driver_keeps_its_symbolic_analysis_across_steps_with_the_same_pattern() {
    let p = random_problem(21, 4, 3, 5);
    let driver = NewtonMerit::default();
    let mut symbolic = 0;
    for shift in [0.0, 0.3, -0.2] {
        let mut q = p.clone();
        q.v_star.iter_mut().for_each(|v| *v += shift);
        // The driver's kept analysis is the sparse layout's; tree blocks analyse per cost.
        let cost = cost_with(&q, HessianFactorization::Sparse);
        let s = driver
            .solve(&cost, cost.v_star().to_vec(), &sap_options())
            .unwrap();
        assert_eq!(s.status, Status::Converged);
        symbolic += s
            .counters
            .get("symbolic_factorizations")
            .copied()
            .unwrap_or(0);
    }
    assert_eq!(symbolic, 1, "one analysis for three steps of one pattern");
}

/// Tree blocks analyse per cost; a stepping caller's memo (`block_cholesky::with_memo`) keeps
/// the shape and its analysis across steps of one pattern, also when another pattern comes
/// between them. The answers are bit for bit those without it,
/// and the impulses a solve reports (kept from its last evaluation) are those recomputed from
/// its answer.
#[test]
fn tree_blocks_keep_their_shape_across_steps_under_a_memo_with_the_same_answers() {
    let (p, other) = (random_problem(21, 4, 3, 5), random_problem(22, 5, 3, 6));
    let f = SapFormulation::default();
    let mut memo = block_cholesky::AnalysisMemo::default();
    let mut symbolic = Vec::new();
    for (base, shift) in [(&p, 0.0), (&p, 0.3), (&other, 0.0), (&p, -0.2)] {
        let mut q = base.clone();
        q.v_star.iter_mut().for_each(|v| *v += shift);
        let step = StepProblem::from(q);
        let solve = || {
            solve_formulation(&f, &step, Init::Default, &sap_options(), |b, x0, o| {
                NewtonMerit::default().solve(b, x0, o)
            })
            .unwrap()
        };
        let (alone, memoized) = (solve(), block_cholesky::with_memo(&mut memo, solve));
        assert_eq!(memoized.x, alone.x);
        assert_eq!(memoized.r, alone.r);
        let recomputed = contacts_cost(f.build(&step).unwrap()).impulses(&alone.x);
        assert_eq!(alone.r, recomputed);
        let analyses = |o: &contactlab_core::plugin::Outcome| {
            o.counters
                .get("symbolic_factorizations")
                .copied()
                .unwrap_or(0)
        };
        assert_eq!(analyses(&alone), 1);
        symbolic.push(analyses(&memoized));
    }
    assert_eq!(
        symbolic,
        [1, 0, 1, 0],
        "one analysis per pattern, kept across the steps"
    );
}

#[test]
fn the_relative_stopping_rule_of_eq_26_stops_earlier_and_reports_e_m_below_it() {
    let p = random_problem(4, 5, 6, 10);
    let cost = cost_of(&p);
    let opts = SolveOptions {
        stop_tol: 1e-16,
        rel_tol: 1e-5,
        max_iter: 100,
        ..SolveOptions::default()
    };
    let s = solve_merit(&cost, NewtonMerit::default(), cost.v_star().to_vec(), &opts).unwrap();
    assert_eq!(s.status, Status::Converged);
    let (e_m, e_mu) = cost.accuracy(&s.x);
    assert!(e_m <= 1e-5, "e_m = {e_m}");
    assert!(e_mu.is_finite() && e_mu < 1e-3, "e_mu = {e_mu}");
}

#[test]
fn untouched_trees_keep_their_free_velocities() {
    let mut p = random_problem(9, 4, 3, 2);
    // Cut every contact's rows to tree 0 only: trees 1-3 are untouched.
    let j: Vec<Triplet<usize, usize, f64>> = (0..6)
        .flat_map(|r| (0..3).map(move |c| Triplet::new(r, c, 1.0 + (r * 3 + c) as f64 * 0.1)))
        .collect();
    p.j = SparseColMat::try_new_from_triplets(6, 12, &j).unwrap();
    let f = SapFormulation::default();
    let step = StepProblem::from(p.clone());
    let cost = contacts_cost(f.build(&step).unwrap());
    assert_eq!(cost.num_unknowns(), 3);
    let out = solve_formulation(&f, &step, Init::Default, &sap_options(), |b, x0, o| {
        NewtonMerit::default().solve(b, x0, o)
    })
    .unwrap();
    let full = cost.full_velocities(&out.x);
    assert_eq!(&full[3..], &p.v_star[3..]);
    let s = judge(&step, out, 1e-8).unwrap();
    assert_eq!(s.solver_status, Status::Converged);
    assert_eq!(
        s.status, s.solver_status,
        "a regularized model is judged by its own optimality"
    );
    assert!(s.diagnostics["e_m"] < 1e-10);
}

#[test]
fn the_regularization_follows_eqs_29_30() {
    // One particle of mass 2 on the ground, J = identity: W = 1/2 I, w = |W|_F / 3.
    let a = SparseColMat::try_new_from_triplets(
        3,
        3,
        &(0..3).map(|i| Triplet::new(i, i, 2.0)).collect::<Vec<_>>(),
    )
    .unwrap();
    let j = SparseColMat::try_new_from_triplets(
        3,
        3,
        &(0..3).map(|i| Triplet::new(i, i, 1.0)).collect::<Vec<_>>(),
    )
    .unwrap();
    let mut c = ContactModel {
        mu: 0.5,
        phi0: -1e-3,
        stiffness: 1e4,
        dissipation: 0.02,
    };
    let mk = |c: ContactModel, dt: Option<f64>| {
        GeneralizedProblem::new(
            a.clone(),
            j.clone(),
            vec![0.0; 3],
            vec![0.0; 3],
            vec![c],
            StepContext {
                dt,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let params = RegularizationParams {
        beta: 1.0,
        sigma: 1e-3,
    };
    let w = (3.0f64 * 0.25).sqrt() / 3.0;
    let r = regularization(&mk(c, Some(0.01)), &params).unwrap();
    assert!((r.w[0] - w).abs() < 1e-15);
    // Soft: 1 / (dt k (dt + tau_d)) = 1 / (0.01 * 1e4 * 0.03) = 1/3 beats w / (4 pi^2).
    assert!((r.contacts[0].rn - 1.0 / 3.0).abs() < 1e-12 && !r.near_rigid[0]);
    assert!((r.contacts[0].rt - 1e-3 * w).abs() < 1e-18);
    assert!((r.v_hat[0] - 1e-3 / 0.03).abs() < 1e-15);
    // Near-rigid: k = 1e12.
    c.stiffness = 1e12;
    let r = regularization(&mk(c, Some(0.01)), &params).unwrap();
    assert!((r.contacts[0].rn - w / (4.0 * std::f64::consts::PI.powi(2))).abs() < 1e-15);
    assert!(r.near_rigid[0]);
    // No time step: a finite stiffness or a nonzero distance cannot be turned into R or v^.
    let e = regularization(&mk(c, None), &params)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no time step"), "{e}");
    c.stiffness = f64::INFINITY;
    let e = regularization(&mk(c, None), &params)
        .unwrap_err()
        .to_string();
    assert!(e.contains("phi0"), "{e}");
}

#[test]
fn sap_takes_contact_space_problems_with_a_definite_w_and_refuses_others_with_a_reason() {
    let local = |w: [f64; 9]| {
        contactlab_core::LocalProblem::coulomb(
            contactlab_core::Matrix::from_row_major("W", 3, 3, &w).unwrap(),
            vec![-1.0, 0.0, 0.0],
            &[0.5],
        )
    };
    // W = I: v = u, A = I; the contact pushes with the near-rigid regularisation.
    let f = SapFormulation::default();
    let step = StepProblem::from(local([1., 0., 0., 0., 1., 0., 0., 0., 1.]));
    let out = solve_formulation(&f, &step, Init::Default, &sap_options(), |b, x0, o| {
        NewtonMerit::default().solve(b, x0, o)
    })
    .unwrap();
    assert_eq!(out.solution.status, Status::Converged);
    // Rn = w / (4 pi^2) with w = |I|_F / 3: gamma_n = 1 / (1 + Rn) (u = -1 + gamma_n, gamma = -u / Rn).
    let rn = (3.0f64).sqrt() / 3.0 / (4.0 * std::f64::consts::PI.powi(2));
    assert!((out.r[0] - 1.0 / (1.0 + rn)).abs() < 1e-12, "{:?}", out.r);
    let e = f
        .build(&StepProblem::from(local([
            1., 0., 0., 0., 0., 0., 0., 0., 1.,
        ])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("generalized velocities") && e.contains("W"),
        "{e}"
    );
    assert!(SapFormulation {
        sigma: -1.0,
        ..SapFormulation::default()
    }
    .check()
    .is_err());
    // A not positive definite on a touched tree: named.
    let mut p = random_problem(1, 2, 3, 2);
    p.a = SparseColMat::try_new_from_triplets(
        6,
        6,
        &(0..6).map(|i| Triplet::new(i, i, -1.0)).collect::<Vec<_>>(),
    )
    .unwrap();
    let e = SapFormulation::default()
        .build(&StepProblem::from(p))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`A`") || e.contains("A"), "{e}");
}

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data/mujoco")
        .join(path)
}

/// MuJoCo solves `min 1/2 r'(W + R) r + r'(q - v_ref)` over the cones: SAP's dual (eq. 22)
/// with MuJoCo's `R` and `v^ = v_ref`. Given those, SAP's impulses must be MuJoCo's, to
/// MuJoCo's own accuracy.
#[test]
fn with_mujocos_regulariser_sap_finds_mujocos_impulses() {
    for name in [
        "clutter_n8_seed7_step0100_nc20",
        "clutter_n8_seed7_step0250_nc19",
        "balls_in_box_n10_mu0.5_seed110_step0150_nc11",
        "clutter_n20_seed7_step0080_nc40",
    ] {
        let Problem::Global(g) =
            contactlab_core::io::read_problem(&data(&format!("global/{name}.json"))).unwrap()
        else {
            panic!("{name} is a global problem")
        };
        let side: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(data(&format!("mujoco/{name}.json"))).unwrap(),
        )
        .unwrap();
        let nums = |k: &str| -> Vec<f64> {
            side[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let (rr, v_ref, r_mj) = (nums("regulariser_R"), nums("v_ref"), nums("r"));
        let p = GeneralizedProblem::from_global(&g).unwrap();
        let regs: Vec<ContactRegularization> = (0..p.num_contacts())
            .map(|i| {
                assert!((rr[3 * i + 1] - rr[3 * i + 2]).abs() <= 1e-12 * rr[3 * i + 1]);
                ContactRegularization {
                    mu: p.contacts[i].mu,
                    rn: rr[3 * i],
                    rt: rr[3 * i + 1],
                }
            })
            .collect();
        let cost = SapCost::new(&p, regs, &v_ref);
        let s = NewtonMerit::default()
            .solve(&cost, cost.v_star().to_vec(), &sap_options())
            .unwrap();
        assert_eq!(s.status, Status::Converged, "{name}");
        let gamma = cost.impulses(&s.x);
        let accuracy = side["checks"]["abs_residual_inf"].as_f64().unwrap();
        let r_max = r_mj.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = gamma
            .iter()
            .zip(&r_mj)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        // MuJoCo's answer leaves a velocity residual `acc` (its own check, inf-norm). Since the
        // dual's Hessian `W + R` is at least `R_min` in every direction, an impulse error of its
        // answer is at most `|residual|_2 / R_min <= sqrt(3 nc) acc / R_min`: SAP must land
        // inside that ball around MuJoCo's impulses.
        let r_min = rr.iter().fold(f64::INFINITY, |m, v| m.min(*v));
        let bound = (r_mj.len() as f64).sqrt() * accuracy / r_min;
        assert!(
            err <= bound,
            "{name}: max |gamma - r_mujoco| = {err:.3e} > {bound:.3e} (max |r| {r_max:.3e}, MuJoCo's residual {accuracy:.1e})"
        );
    }
}

/// A particle resting on the ground: `A = diag(1, 2, 4)`, `J = I`, pushed into the ground, so
/// the contact sticks and `H = A + R^-1` is diagonal: its condition numbers are known exactly.
fn resting_particle(sigma: f64) -> (SapCost, Vec<f64>) {
    let diag = |d: [f64; 3]| {
        SparseColMat::try_new_from_triplets(
            3,
            3,
            &(0..3).map(|i| Triplet::new(i, i, d[i])).collect::<Vec<_>>(),
        )
        .unwrap()
    };
    let p = GeneralizedProblem::new(
        diag([1.0, 2.0, 4.0]),
        diag([1.0, 1.0, 1.0]),
        vec![-0.1, 0.0, 0.0],
        vec![0.0; 3],
        vec![ContactModel {
            mu: 1.0,
            phi0: 0.0,
            stiffness: 1e12,
            dissipation: 0.01,
        }],
        StepContext {
            dt: Some(0.01),
            ..Default::default()
        },
    )
    .unwrap();
    let f = SapFormulation {
        sigma,
        ..SapFormulation::default()
    };
    let cost = contacts_cost(f.build(&StepProblem::from(p)).unwrap());
    let s = NewtonMerit::default()
        .solve(&cost, cost.v_star().to_vec(), &sap_options())
        .unwrap();
    assert_eq!(s.status, Status::Converged);
    assert_eq!(cost.regions(&s.x), vec![super::SapRegion::Stiction]);
    (cost, s.x)
}

#[test]
fn the_hessian_condition_number_is_exact_on_a_diagonal_hessian_and_grows_like_one_over_sigma() {
    let mut plain = Vec::new();
    for sigma in [1e-2, 1e-3, 1e-4] {
        let (cost, x) = resting_particle(sigma);
        let r = cost.regularizations()[0];
        let h = [1.0 + 1.0 / r.rn, 2.0 + 1.0 / r.rt, 4.0 + 1.0 / r.rt];
        let expected =
            h.iter().copied().fold(0.0, f64::max) / h.iter().copied().fold(f64::INFINITY, f64::min);
        let (c, scaled) = cost.hessian_condition(&x).unwrap();
        assert!(
            (c / expected - 1.0).abs() < 1e-9,
            "sigma {sigma}: {c} vs {expected}"
        );
        assert!(
            (scaled - 1.0).abs() < 1e-9,
            "a diagonal H scales to I: {scaled}"
        );
        plain.push(c);
    }
    // Stiction: H ~ R^-1 with R_t = sigma R_n-ish (eq. 30), so each decade of sigma is a decade
    // of condition (the paper's Fig. 15), once 1/R_t dominates A.
    for w in plain.windows(2) {
        assert!((w[1] / w[0] - 10.0).abs() < 1.0, "{plain:?}");
    }
}

#[test]
fn the_condition_numbers_agree_with_an_independent_eigen_decomposition() {
    let p = random_problem(7, 3, 4, 5);
    let cost = cost_of(&p);
    let x = random_point(&cost, 3);
    let (c, scaled) = cost.hessian_condition(&x).unwrap();
    let hd = dense_hessian(cost.evaluate(&x, true).hessian);
    let n = hd.ncols();
    let h = nalgebra::DMatrix::<f64>::from_fn(n, n, |r, c| hd[(r, c)]);
    let cond = |m: &nalgebra::DMatrix<f64>| {
        let e = m.clone().symmetric_eigen().eigenvalues;
        e.max() / e.min()
    };
    assert!((c / cond(&h) - 1.0).abs() < 1e-8, "{c} vs {}", cond(&h));
    let d = nalgebra::DVector::from_iterator(n, (0..n).map(|k| 1.0 / h[(k, k)].sqrt()));
    let dhd = nalgebra::DMatrix::from_fn(n, n, |r, col| d[r] * h[(r, col)] * d[col]);
    assert!((scaled / cond(&dhd) - 1.0).abs() < 1e-8);
    // The plugin reports them only when asked.
    let f = SapFormulation {
        condition_number: true,
        ..SapFormulation::default()
    };
    let built = SapBuilt::Contacts(Box::new(cost));
    let names: Vec<&str> = f.diagnostics(&built, &x).iter().map(|d| d.0).collect();
    assert_eq!(
        names,
        [
            "e_m",
            "e_mu",
            "hessian_condition",
            "hessian_condition_scaled"
        ]
    );
    let names: Vec<&str> = SapFormulation::default()
        .diagnostics(&built, &x)
        .iter()
        .map(|d| d.0)
        .collect();
    assert_eq!(names, ["e_m", "e_mu"]);
}

fn mujoco_step(name: &str) -> GeneralizedProblem {
    let Problem::Global(g) =
        contactlab_core::io::read_problem(&data(&format!("global/{name}.json"))).unwrap()
    else {
        panic!("{name} is a global problem")
    };
    GeneralizedProblem::from_global(&g).unwrap()
}

/// A clutter step of 40 bodies whose contacts join them into 14 islands (of 14, 7, 4, 2, 2,
/// 2 bodies and eight single ones, counted from its Jacobian outside this crate): SAP's cost
/// is their sum, so its islands' lines, values and residuals add up to the whole cost's.
#[test]
fn saps_cost_separates_over_its_islands() {
    let p = mujoco_step("clutter_n40_seed7_step0090_nc83");
    let cost = cost_of(&p);
    let groups = cost.groups().to_vec();
    let mut sizes: Vec<usize> = groups.iter().map(|r| r.len()).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(sizes, [84, 42, 24, 12, 12, 12, 6, 6, 6, 6, 6, 6, 6, 6]);
    assert!(groups.windows(2).all(|w| w[0].end == w[1].start));
    assert_eq!((groups[0].start, groups[13].end), (0, cost.num_unknowns()));
    let x = random_point(&cost, 11);
    let d: Vec<f64> = random_point(&cost, 12)
        .iter()
        .zip(cost.v_star())
        .map(|(a, b)| a - b)
        .collect();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-11 * (1.0 + a.abs().max(b.abs()));
    for alpha in [0.0, 0.4, 1.0, 1.25] {
        let whole = cost.along_line(&x, &d, alpha);
        let parts: Vec<_> = (0..groups.len())
            .map(|k| cost.along_group(k, &x, &d, alpha))
            .collect();
        let sum = |f: fn(&contactlab_core::LinePoint) -> f64| parts.iter().map(f).sum::<f64>();
        assert!(close(sum(|l| l.value), whole.value), "alpha {alpha} value");
        assert!(close(sum(|l| l.slope), whole.slope), "alpha {alpha} slope");
        assert!(
            close(sum(|l| l.curvature), whole.curvature),
            "alpha {alpha} curvature"
        );
    }
    let e = cost.evaluate(&x, false);
    for k in 0..groups.len() {
        // The driver's value at the line's start is the line's, term for term.
        assert_eq!(
            cost.group_value(k, &x, &d),
            cost.along_group(k, &x, &d, 0.0).value
        );
    }
    let mut residuals = vec![0.0; groups.len()];
    cost.group_residuals(&x, &e.gradient, &mut residuals);
    let whole = cost.optimality(&x, &e.gradient).residual;
    let summed = residuals.iter().map(|r| r * r).sum::<f64>().sqrt();
    assert!(close(summed, whole), "{summed} vs {whole}");
}

/// The kept Hessian (each contact adds `J' (G - G_old) J` when its `G` changed, an island
/// whose contacts did not change keeps its factor) gives the direction a fresh assembly gives,
/// on the islands asked for, and nothing on the others.
#[test]
fn the_kept_hessian_gives_the_fresh_newton_direction_island_by_island() {
    let p = mujoco_step("clutter_n40_seed7_step0090_nc83");
    let kept = cost_of(&p);
    let n = kept.num_unknowns();
    let islands = kept.groups().to_vec();
    let mut active = vec![true; islands.len()];
    let mut d = vec![0.0; n];
    for (step, seed) in [21u64, 22, 22, 23].into_iter().enumerate() {
        let x = random_point(&kept, seed);
        let g = kept.evaluate(&x, false).gradient;
        if step == 3 {
            // Half the islands rest.
            active.iter_mut().step_by(2).for_each(|a| *a = false);
        }
        let own = kept.group_newton_direction(&x, &g, &active, &mut d);
        assert!(matches!(own, OwnNewton::Solved { .. }), "{own:?}");
        let fresh = cost_of(&p);
        let mut reference = vec![0.0; n];
        fresh.newton_direction(&x, &g, &mut reference);
        let scale = 1.0 + reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (k, r) in islands.iter().enumerate() {
            for i in r.clone() {
                let want = if active[k] { reference[i] } else { 0.0 };
                assert!(
                    (d[i] - want).abs() <= 1e-9 * scale,
                    "step {step}, island {k}, unknown {i}: {} vs {want}",
                    d[i]
                );
            }
        }
    }
}

/// Island by island (the driver's default) and all islands in one Newton step reach the same
/// optimum of the clutter step; the islands' steps are counted.
#[test]
fn sap_island_by_island_reaches_the_whole_solves_optimum() {
    let p = mujoco_step("clutter_n40_seed7_step0090_nc83");
    let cost = cost_of(&p);
    let by_island = NewtonMerit::default()
        .solve(&cost, cost.v_star().to_vec(), &sap_options())
        .unwrap();
    let mut together = NewtonMerit::default();
    together.by_island = false;
    let whole = together
        .solve(&cost_of(&p), cost.v_star().to_vec(), &sap_options())
        .unwrap();
    assert_eq!(by_island.status, Status::Converged);
    assert_eq!(whole.status, Status::Converged);
    let (a, b) = (cost.impulses(&by_island.x), cost.impulses(&whole.x));
    let scale = 1.0 + a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(
        max_abs_diff(&a, &b) <= 1e-8 * scale,
        "{}",
        max_abs_diff(&a, &b)
    );
    check_dual_optimality(&p, &cost, &by_island.x, 1e-8);
    let stepped = by_island.counters["island_iterations"];
    assert!(stepped > by_island.iterations && stepped < 14 * by_island.iterations);
}

/// `p` with its velocities renumbered by `perm` (velocity `c` becomes `perm[c]`): `A` and `J`'s
/// columns move with them, so trees that were runs of velocities interleave.
fn permuted(p: &GeneralizedProblem, perm: &[usize]) -> GeneralizedProblem {
    let nv = p.num_dofs();
    let (a, j) = (p.a.to_dense(), p.j.to_dense());
    let mut ta = Vec::new();
    for r in 0..nv {
        for c in 0..nv {
            if a[(r, c)] != 0.0 {
                ta.push(Triplet::new(perm[r], perm[c], a[(r, c)]));
            }
        }
    }
    let mut tj = Vec::new();
    for r in 0..j.nrows() {
        for c in 0..nv {
            if j[(r, c)] != 0.0 {
                tj.push(Triplet::new(r, perm[c], j[(r, c)]));
            }
        }
    }
    let mut v_star = vec![0.0; nv];
    for c in 0..nv {
        v_star[perm[c]] = p.v_star[c];
    }
    GeneralizedProblem::new(
        SparseColMat::try_new_from_triplets(nv, nv, &ta).unwrap(),
        SparseColMat::try_new_from_triplets(j.nrows(), nv, &tj).unwrap(),
        v_star,
        p.b.clone(),
        p.contacts.clone(),
        StepContext {
            dt: p.dt,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn the_delassus_estimate_is_the_rms_of_the_dense_diagonal_blocks_in_any_velocity_order() {
    let p = random_problem(11, 5, 4, 9);
    let nv = p.num_dofs();
    // W = J A^-1 J', dense, as the reference.
    let llt = p.a.to_dense().as_ref().llt(faer::Side::Lower).unwrap();
    let mut a_inv = faer::Mat::<f64>::identity(nv, nv);
    llt.solve_in_place_with_conj(faer::Conj::No, a_inv.as_mut());
    let jd = p.j.to_dense();
    let w = &jd * &a_inv * jd.transpose();
    let want: Vec<f64> = (0..p.num_contacts())
        .map(|i| {
            let frob: f64 = (0..3)
                .flat_map(|r| (0..3).map(move |s| (r, s)))
                .map(|(r, s)| w[(3 * i + r, 3 * i + s)].powi(2))
                .sum::<f64>()
                .sqrt();
            frob / 3.0
        })
        .collect();
    let close = |got: &[f64]| {
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-12 * w, "contact {i}: {g} against {w}");
        }
    };
    close(&super::params::delassus_rms(&p).unwrap());
    // Interleave the trees: velocity c of tree t goes to slot c * n_trees + t.
    let perm: Vec<usize> = (0..nv).map(|c| (c % 4) * 5 + c / 4).collect();
    let q = permuted(&p, &perm);
    assert!(q.tree_of.windows(2).any(|w| w[0] != w[1]) && q.tree_of[0] == q.tree_of[5]);
    close(&super::params::delassus_rms(&q).unwrap());
    // And the cost built on it finds the same optimum in either order.
    let (cp, cq) = (cost_of(&p), cost_of(&q));
    let (sp, sq) = (
        solve_merit(
            &cp,
            NewtonMerit::default(),
            cp.v_star().to_vec(),
            &sap_options(),
        )
        .unwrap(),
        solve_merit(
            &cq,
            NewtonMerit::default(),
            cq.v_star().to_vec(),
            &sap_options(),
        )
        .unwrap(),
    );
    let (vp, vq) = (cp.full_velocities(&sp.x), cq.full_velocities(&sq.x));
    for c in 0..nv {
        assert!((vp[c] - vq[perm[c]]).abs() < 1e-9, "velocity {c}");
    }
}
