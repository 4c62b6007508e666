//! The constraint-agnostic cost's tests: each set's projection is the projection in `R`'s norm
//! onto its set with `G` its derivative, the cost's derivatives against finite differences,
//! eq. 24's cost reproduced on Coulomb contacts, SAP solving every kind, and bad input.

use contactlab_core::constraint::Constraint;
use contactlab_core::drivers::NewtonMerit;
use contactlab_core::elliptic_cone;
use contactlab_core::generalized::{
    BlockModel, ContactModel, GeneralizedProblem, RowModels, StepContext,
};
use contactlab_core::plugin::{solve_formulation, Driver, Formulation, Init};
use contactlab_core::{Merit, SolveOptions, Status, StepProblem};
use faer::sparse::{SparseColMat, Triplet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::super::params::RegularizationParams;
use super::super::plugin::{SapBuilt, SapFormulation};
use super::{project_soc, Block, SapBlockCost};

const PARAMS: RegularizationParams = RegularizationParams {
    beta: 1.0,
    sigma: 1e-3,
};

/// Every kind once: a Coulomb contact, then condim 4 and 6 (anisotropic), condim 1, a two-row
/// equality, a limit and a friction loss, over two random trees of four velocities.
fn every_kind(seed: u64) -> GeneralizedProblem {
    let others = vec![
        Constraint::Contact {
            mu: vec![0.8, 0.8, 0.01],
        },
        Constraint::Contact {
            mu: vec![0.5, 0.3, 0.02, 0.001, 0.002],
        },
        Constraint::Contact { mu: vec![] },
        Constraint::Equality { rows: 2 },
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.05 },
    ];
    with_blocks(others, seed)
}

/// A Coulomb contact and then `others`, random rows over two random trees of four velocities,
/// small random position errors, a time step.
fn with_blocks(others: Vec<Constraint>, seed: u64) -> GeneralizedProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (trees, dofs) = (2, 4);
    let nv = trees * dofs;
    let mut a = Vec::new();
    for t in 0..trees {
        let l: Vec<f64> = (0..dofs * dofs)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        for i in 0..dofs {
            for j in 0..dofs {
                let d = if i == j { 0.5 } else { 0.0 };
                let v: f64 = (0..dofs).map(|k| l[i * dofs + k] * l[j * dofs + k]).sum();
                a.push(Triplet::new(t * dofs + i, t * dofs + j, v + d));
            }
        }
    }
    let rows = 3 + others.iter().map(Constraint::rows).sum::<usize>();
    let j: Vec<_> = (0..rows)
        .flat_map(|r| (0..nv).map(move |c| (r, c)))
        .map(|(r, c)| Triplet::new(r, c, rng.random_range(-1.0..1.0)))
        .collect();
    let others = others
        .into_iter()
        .map(|c| {
            let mut phi0 = vec![0.0; c.rows()];
            if !matches!(c, Constraint::FrictionLoss { .. }) {
                phi0[0] = rng.random_range(-1e-3..1e-3);
            }
            BlockModel {
                phi0,
                ..BlockModel::rigid(c)
            }
        })
        .collect();
    let models = RowModels {
        contacts: vec![ContactModel {
            phi0: -1e-3,
            ..ContactModel::rigid(0.5)
        }],
        others,
        target: Vec::new(),
    };
    GeneralizedProblem::with_rows(
        SparseColMat::try_new_from_triplets(nv, nv, &a).unwrap(),
        SparseColMat::try_new_from_triplets(rows, nv, &j).unwrap(),
        (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect(),
        vec![0.0; rows],
        models,
        StepContext {
            dt: Some(0.01),
            ..Default::default()
        },
    )
    .unwrap()
}

fn random(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

#[test]
fn the_second_order_cones_projection_is_a_projection_and_its_derivative_its_jacobian() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for n in [3, 4, 6] {
        for _ in 0..200 {
            let s = rng.random_range(0.05..2.0);
            let z = random(&mut rng, n);
            let (mut p, mut jac) = (vec![0.0; n], vec![0.0; n * n]);
            project_soc(s, &z, &mut p, Some(&mut jac));
            let norm_f = |v: &[f64]| v[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
            assert!(norm_f(&p) <= s * p[0] + 1e-12, "in the cone");
            // z - p in the polar cone and orthogonal to p: the projection's conditions.
            let d: Vec<f64> = z.iter().zip(&p).map(|(a, b)| a - b).collect();
            assert!(s * norm_f(&d) <= -d[0] + 1e-12, "z - p in the polar cone");
            assert!(d.iter().zip(&p).map(|(a, b)| a * b).sum::<f64>().abs() < 1e-12);
            let h = 1e-7;
            for c in 0..n {
                let (mut zp, mut zm) = (z.clone(), z.clone());
                zp[c] += h;
                zm[c] -= h;
                let (mut pp, mut pm) = (vec![0.0; n], vec![0.0; n]);
                project_soc(s, &zp, &mut pp, None);
                project_soc(s, &zm, &mut pm, None);
                for r in 0..n {
                    let fd = (pp[r] - pm[r]) / (2.0 * h);
                    assert!((fd - jac[r * n + c]).abs() < 1e-5, "n {n} ({r}, {c})");
                }
            }
        }
    }
}

/// The blocks of [`every_kind`]'s cost, with the problem's friction coefficients.
fn blocks_and_mu(seed: u64) -> Vec<(Block, Constraint)> {
    let g = every_kind(seed);
    let cost = SapBlockCost::new(&g, &PARAMS).unwrap();
    cost.blocks
        .into_iter()
        .zip(g.constraints().blocks().to_vec())
        .collect()
}

fn in_set(c: &Constraint, gamma: &[f64]) -> bool {
    let tol = 1e-12;
    match c {
        Constraint::Equality { .. } => true,
        Constraint::Limit => gamma[0] >= 0.0,
        Constraint::FrictionLoss { f_max } => gamma[0].abs() <= f_max + tol,
        Constraint::Contact { mu } if mu.is_empty() => gamma[0] >= 0.0,
        Constraint::Contact { mu } => {
            let d = elliptic_cone::dual_norm(
                &mu.iter().map(|m| 1.0 / m).collect::<Vec<_>>(),
                &gamma[1..],
            );
            d <= gamma[0] * (1.0 + 1e-9) + tol
        }
    }
}

#[test]
fn each_blocks_impulse_is_the_projection_in_rs_norm_with_g_its_derivative() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (b, c) in blocks_and_mu(1) {
        let m = b.r.len();
        for _ in 0..100 {
            let y: Vec<f64> = random(&mut rng, m).iter().map(|v| v * 0.2).collect();
            let (mut gamma, mut g) = (vec![0.0; m], vec![0.0; m * m]);
            let l = b.project(&y, &mut gamma, Some(&mut g));
            assert!(in_set(&c, &gamma), "{c:?}: {gamma:?}");
            // Nearest in R's norm: no member of the set is closer (members sampled by
            // projecting random points Euclidean-wise).
            let dist = |p: &[f64]| (0..m).map(|i| b.r[i] * (p[i] - y[i]).powi(2)).sum::<f64>();
            for _ in 0..50 {
                let mut member = vec![0.0; m];
                c.project(&random(&mut rng, m), &mut member);
                assert!(
                    dist(&gamma) <= dist(&member) * (1.0 + 1e-9) + 1e-15,
                    "{c:?}"
                );
            }
            // dl/dy = R gamma, dgamma/dy = G R, by central differences.
            let h = 1e-7;
            for k in 0..m {
                let (mut yp, mut ym) = (y.clone(), y.clone());
                yp[k] += h;
                ym[k] -= h;
                let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
                let (lp, lm) = (b.project(&yp, &mut gp, None), b.project(&ym, &mut gm, None));
                let fd = (lp - lm) / (2.0 * h);
                assert!(
                    (fd - b.r[k] * gamma[k]).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "{c:?} dl"
                );
                for i in 0..m {
                    let fd = (gp[i] - gm[i]) / (2.0 * h);
                    let an = g[i * m + k] * b.r[k];
                    assert!(
                        (fd - an).abs() <= 1e-5 * (1.0 + an.abs()),
                        "{c:?} G ({i}, {k})"
                    );
                }
            }
            assert!(l >= 0.0 && l.is_finite());
        }
    }
}

#[test]
fn the_costs_gradient_and_hessian_match_finite_differences_on_every_kind() {
    for seed in 0..5 {
        let g = every_kind(seed);
        let cost = SapBlockCost::new(&g, &PARAMS).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let x: Vec<f64> = g
            .v_star
            .iter()
            .map(|v| v + 0.1 * rng.random_range(-1.0..1.0))
            .collect();
        let n = x.len();
        let mut grad = vec![0.0; n];
        cost.gradient(&x, &mut grad);
        let mut hess = faer::Mat::<f64>::zeros(n, n);
        cost.hessian(&x, hess.as_mut());
        let h = 1e-7;
        for k in 0..n {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[k] += h;
            xm[k] -= h;
            let fd = (cost.value(&xp) - cost.value(&xm)) / (2.0 * h);
            assert!(
                (fd - grad[k]).abs() <= 1e-5 * (1.0 + grad[k].abs()),
                "seed {seed} grad {k}"
            );
            let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
            cost.gradient(&xp, &mut gp);
            cost.gradient(&xm, &mut gm);
            for r in 0..n {
                let fd = (gp[r] - gm[r]) / (2.0 * h);
                let an = hess[(r, k)];
                assert!(
                    (fd - an).abs() <= 1e-4 * (1.0 + an.abs()),
                    "seed {seed} H ({r}, {k})"
                );
            }
        }
    }
}

/// The line's value, slope and curvature (section IV-C, without forming the Hessian) are the
/// cost's value at the trial point, its gradient along `dx` and `dx' H dx`, and one
/// evaluation is the value and gradient apart, on every kind,
/// at points on either side of the sets' kinks; and a contact block of more rows than
/// condim 6 is refused by name.
#[test]
fn the_line_is_the_costs_value_slope_and_curvature_on_every_kind() {
    for seed in 0..5 {
        let g = every_kind(seed);
        let cost = SapBlockCost::new(&g, &PARAMS).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(200 + seed);
        let n = g.v_star.len();
        let x: Vec<f64> = g
            .v_star
            .iter()
            .map(|v| v + 0.1 * rng.random_range(-1.0..1.0))
            .collect();
        let dx: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        for alpha in [0.0, 0.05, 0.3, 1.0, 1.25] {
            let line = cost.along_line(&x, &dx, alpha);
            let xa: Vec<f64> = x.iter().zip(&dx).map(|(a, d)| a + alpha * d).collect();
            let mut grad = vec![0.0; n];
            cost.gradient(&xa, &mut grad);
            let mut hess = faer::Mat::<f64>::zeros(n, n);
            cost.hessian(&xa, hess.as_mut());
            let slope: f64 = grad.iter().zip(&dx).map(|(a, b)| a * b).sum();
            let curvature: f64 = (0..n)
                .flat_map(|r| (0..n).map(move |c| (r, c)))
                .map(|(r, c)| dx[r] * hess[(r, c)] * dx[c])
                .sum();
            // One evaluation gives the same bits as the value and the gradient apart.
            let e = cost.evaluate(&xa, true);
            assert_eq!((e.value, &e.gradient), (cost.value(&xa), &grad));
            assert!(e.hessian.is_some());
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
            assert!(
                close(line.value, cost.value(&xa)),
                "seed {seed} alpha {alpha}"
            );
            assert!(close(line.slope, slope), "seed {seed} alpha {alpha}: slope");
            assert!(
                close(line.curvature, curvature) && curvature > 0.0,
                "seed {seed} alpha {alpha}: curvature {} against {curvature}",
                line.curvature
            );
        }
    }
    let mut g = every_kind(0);
    g.others[0].constraint = Constraint::Contact { mu: vec![0.5; 6] };
    let err = SapBlockCost::new(&g, &PARAMS).unwrap_err().to_string();
    assert!(err.contains("has 7 rows"), "{err}");
}

#[test]
fn on_coulomb_contacts_the_block_cost_is_eq_24s() {
    // The same problem through both paths: eq. 24's sparse cost and the constraint-agnostic one.
    let mut g = every_kind(2);
    let nc_rows = 3;
    let keep: Vec<_> = {
        let (cols, rows, vals) = (
            g.j.symbolic().col_ptr(),
            g.j.symbolic().row_idx(),
            g.j.val(),
        );
        (0..g.num_dofs())
            .flat_map(|c| (cols[c]..cols[c + 1]).map(move |e| (c, e)))
            .filter(|&(_, e)| rows[e] < nc_rows)
            .map(|(c, e)| Triplet::new(rows[e], c, vals[e]))
            .collect()
    };
    g.j = SparseColMat::try_new_from_triplets(nc_rows, g.num_dofs(), &keep).unwrap();
    g.others.clear();
    g.b.truncate(nc_rows);
    g.contacts[0].stiffness = 1e5;
    g.contacts[0].dissipation = 0.01;
    let blocks = SapBlockCost::new(&g, &PARAMS).unwrap();
    let SapBuilt::Contacts(contacts) = SapFormulation::default()
        .build(&StepProblem::from(g.clone()))
        .unwrap()
    else {
        panic!("a Coulomb problem builds eq. 24's cost")
    };
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for _ in 0..20 {
        let v: Vec<f64> = g
            .v_star
            .iter()
            .map(|v| v + rng.random_range(-1.0..1.0))
            .collect();
        let x = contacts.restrict(&v);
        let full = contacts.full_velocities(&x);
        let (a, b) = (contacts.value(&x), blocks.value(&full));
        assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{a} vs {b}");
        let (ga, gb) = (contacts.impulses(&x), blocks.impulses(&full));
        for (p, q) in ga.iter().zip(&gb) {
            assert!(
                (p - q).abs() <= 1e-12 * p.abs().max(1.0),
                "{ga:?} vs {gb:?}"
            );
        }
    }
}

#[test]
fn sap_solves_every_kind_to_its_optimality_with_impulses_in_their_sets() {
    let f = SapFormulation::default();
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 100,
        ..SolveOptions::default()
    };
    for seed in 0..5 {
        let g = every_kind(seed);
        let step = StepProblem::from(g.clone());
        let out = solve_formulation(&f, &step, Init::Default, &opts, |b, x0, o| {
            NewtonMerit::default().solve(b, x0, o)
        })
        .unwrap();
        assert_eq!(out.solution.status, Status::Converged, "seed {seed}");
        let constraints = g.constraints();
        for (rows, c) in constraints.iter() {
            assert!(in_set(c, &out.r[rows.clone()]), "seed {seed} {c:?}");
        }
        // Momentum balance (eq. 18) at the answer: A (v - v*) = J' gamma.
        let cost = SapBlockCost::new(&g, &PARAMS).unwrap();
        let mut grad = vec![0.0; g.num_dofs()];
        cost.gradient(&out.x, &mut grad);
        let o = cost.optimality(&out.x, &grad);
        assert!(o.residual <= 1e-10 * (1.0 + o.scale), "seed {seed}: {o:?}");
        // The row velocities are J v + b - t: with no targets, J v.
        let u = out.u.as_ref().unwrap();
        let jv = g.contact_velocity(&out.x);
        assert!(u.iter().zip(&jv).all(|(a, b)| (a - b).abs() < 1e-14));
    }
}

#[test]
fn sap_solves_each_kind_on_its_own_beside_a_contact() {
    let kinds = [
        Constraint::Equality { rows: 1 },
        Constraint::Equality { rows: 6 },
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.02 },
        Constraint::Contact { mu: vec![] },
        Constraint::Contact { mu: vec![0.9, 0.4] },
        Constraint::Contact {
            mu: vec![0.6, 0.6, 0.01],
        },
        Constraint::Contact {
            mu: vec![0.6, 0.6, 0.01, 0.002, 0.002],
        },
    ];
    let f = SapFormulation::default();
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 100,
        ..SolveOptions::default()
    };
    for (k, kind) in kinds.iter().enumerate() {
        let mut g = with_blocks(vec![kind.clone()], 10 + k as u64);
        // A centimetre of penetration or violation, so that the block pushes at the answer.
        if !matches!(kind, Constraint::FrictionLoss { .. }) {
            g.others[0].phi0[0] = -0.01;
        }
        let out = solve_formulation(
            &f,
            &StepProblem::from(g.clone()),
            Init::Default,
            &opts,
            |b, x0, o| NewtonMerit::default().solve(b, x0, o),
        )
        .unwrap();
        assert_eq!(out.solution.status, Status::Converged, "{kind:?}");
        let rows = 3..3 + kind.rows();
        assert!(in_set(kind, &out.r[rows]), "{kind:?}: {:?}", out.r);
        // The block acts: its impulse is the projection of its y at the answer, not zero.
        assert!(
            out.r[3..].iter().any(|x| x.abs() > 1e-9),
            "{kind:?}: {:?}",
            out.r
        );
    }
}

#[test]
fn a_position_error_without_a_time_step_and_a_row_nothing_moves_are_refused() {
    let mut g = every_kind(0);
    g.dt = None;
    let e = SapBlockCost::new(&g, &PARAMS).unwrap_err().to_string();
    assert!(
        e.contains("position error") && e.contains("no time step"),
        "{e}"
    );
    let mut g = every_kind(0);
    let rows = g.num_rows();
    let keep: Vec<_> = {
        let (cols, r, vals) = (
            g.j.symbolic().col_ptr(),
            g.j.symbolic().row_idx(),
            g.j.val(),
        );
        (0..g.num_dofs())
            .flat_map(|c| (cols[c]..cols[c + 1]).map(move |e| (c, e)))
            .filter(|&(_, e)| r[e] != rows - 2)
            .map(|(c, e)| Triplet::new(r[e], c, vals[e]))
            .collect()
    };
    g.j = SparseColMat::try_new_from_triplets(rows, g.num_dofs(), &keep).unwrap();
    let e = SapBlockCost::new(&g, &PARAMS).unwrap_err().to_string();
    assert!(
        e.contains("limit") && e.contains("no velocity moves"),
        "{e}"
    );
}

#[test]
fn sap_takes_every_kind_and_the_conic_statement_says_it_does_not() {
    assert_eq!(
        SapFormulation::KINDS,
        contactlab_core::constraint::EVERY_KIND
    );
    let built = SapFormulation::default()
        .build(&StepProblem::from(every_kind(0)))
        .unwrap();
    assert!(matches!(built, SapBuilt::Blocks(_)));
    let e = contactlab_core::ConicProgram::conic_program(&built)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Coulomb contacts") && e.contains("newton-merit"),
        "{e}"
    );
}
