//! The formulations on every constraint kind (the bilateral rows as equality blocks, the MLCP's
//! polyhedral extension, the MNCP on Todorov's per-block maps): a child of the paper's tests,
//! whose helpers and imports it shares.

use super::*;

// ---------------------------------------------------------------- every kind

/// What a block does at a constructed solution.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Act {
    /// An equality: any impulse, zero velocity.
    Hold,
    /// A limit or contact pushing at zero velocity (a contact stuck inside its polytope); a
    /// friction loss stuck inside its box.
    Push,
    /// A limit or contact separating: zero impulse, positive normal velocity.
    Lift,
    /// A friction loss sliding forward (`j = 0`) or backward (`j = 1`); a contact sliding with
    /// its friction on polygon vertex `j < n_f`, or on the extra row pair `(j - n_f) / 2`
    /// (sign `+` for even `j - n_f`). Both the polytope's and MuJoCo's elliptic cone's
    /// solution there.
    Slide(usize),
}

/// Friction directions of the every-kind tests.
const NF: usize = 4;
/// Their offset from `t1`.
const THETA0: f64 = 0.3;

/// A contact's impulse and velocity for `act` (see [`Act`]), with `D = diag(mu)`.
fn contact_solution(mu: &[f64], act: Act, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
    let d = 1 + mu.len();
    let (mut r, mut u) = (vec![0.0; d], vec![0.0; d]);
    let fn_ = rng.random_range(0.2..1.5);
    let slip = rng.random_range(0.1..1.0);
    match act {
        Act::Lift => {
            u[0] = rng.random_range(0.1..1.0);
            u[1..]
                .iter_mut()
                .for_each(|v| *v = rng.random_range(-1.0..1.0));
        }
        Act::Push | Act::Hold => {
            r[0] = fn_;
            // |D^-1 r_f| <= 0.15 F_n: inside the polytope whatever the extra rows.
            for (k, &m) in mu.iter().enumerate() {
                r[1 + k] = fn_ * m * rng.random_range(-0.15..0.15) / (mu.len() as f64).sqrt();
            }
        }
        Act::Slide(j) if j < NF => {
            let a = THETA0 + std::f64::consts::TAU * j as f64 / NF as f64;
            let (c, s) = (a.cos(), a.sin());
            r[..3].copy_from_slice(&[fn_, fn_ * mu[0] * c, fn_ * mu[1] * s]);
            u[1] = -slip * c / mu[0];
            u[2] = -slip * s / mu[1];
        }
        Act::Slide(j) => {
            let (k, sign) = (
                2 + (j - NF) / 2,
                if (j - NF).is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                },
            );
            r[0] = fn_;
            r[1 + k] = sign * mu[k] * fn_;
            u[1 + k] = -sign * slip / mu[k];
        }
    }
    (r, u)
}

/// One block's impulse and velocity for `act`.
fn block_solution(c: &Constraint, act: Act, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
    match (c, act) {
        (Constraint::Equality { rows }, _) => {
            let r = (0..*rows).map(|_| rng.random_range(-1.0..1.0)).collect();
            (r, vec![0.0; *rows])
        }
        (Constraint::FrictionLoss { f_max }, Act::Slide(j)) => {
            let u: f64 = rng.random_range(0.1..1.0) * if j == 0 { 1.0 } else { -1.0 };
            (vec![-f_max * u.signum()], vec![u])
        }
        (Constraint::FrictionLoss { f_max }, _) => {
            (vec![f_max * rng.random_range(-0.8..0.8)], vec![0.0])
        }
        (Constraint::Contact { mu }, _) if !mu.is_empty() => contact_solution(mu, act, rng),
        // A limit or a frictionless contact.
        (_, Act::Lift) => (vec![0.0], vec![rng.random_range(0.1..1.0)]),
        _ => (vec![rng.random_range(0.2..1.5)], vec![0.0]),
    }
}

/// A problem of `blocks` with a random SPD `W` and `q = u - W r` for the constructed
/// solution `(r, u)` of `acts`. Returns the problem and `r`.
fn constructed(blocks: &[Constraint], acts: &[Act], seed: u64) -> (LocalProblem, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut r, mut u) = (Vec::new(), Vec::new());
    for (c, &act) in blocks.iter().zip(acts) {
        let (rb, ub) = block_solution(c, act, &mut rng);
        r.extend(rb);
        u.extend(ub);
    }
    let n = r.len();
    let w = random_spd(n, &mut rng);
    let q = (0..n)
        .map(|i| u[i] - (0..n).map(|j| w[(i, j)] * r[j]).sum::<f64>())
        .collect();
    let c = Constraints::new(blocks.to_vec()).unwrap();
    (
        LocalProblem::with_constraints(Matrix::Dense(w), q, c).unwrap(),
        r,
    )
}

/// The directions of the every-kind tests for `p`'s contact blocks.
fn kind_dirs(p: &LocalProblem) -> Directions {
    let contacts = p
        .constraints
        .blocks()
        .iter()
        .filter(|b| matches!(b, Constraint::Contact { .. }))
        .count();
    Directions::uniform(NF, THETA0, contacts).unwrap()
}

/// The per-kind cases: a name, the blocks (equality rows anywhere, as MuJoCo orders them) and
/// what each does at the constructed solution.
fn kind_cases() -> Vec<(&'static str, Vec<Constraint>, Vec<Act>)> {
    use Act::*;
    let eq = |rows| Constraint::Equality { rows };
    let fl = |f_max| Constraint::FrictionLoss { f_max };
    let ct = |mu: &[f64]| Constraint::Contact { mu: mu.to_vec() };
    vec![
        (
            "equality (1 row)",
            vec![Constraint::coulomb(0.5), eq(1)],
            vec![Push, Hold],
        ),
        (
            "equality (3 rows)",
            vec![eq(3), Constraint::coulomb(0.4)],
            vec![Hold, Slide(1)],
        ),
        (
            "equality (6 rows)",
            vec![Constraint::coulomb(0.5), eq(6), Constraint::coulomb(0.7)],
            vec![Lift, Hold, Slide(3)],
        ),
        ("limit", vec![Constraint::Limit; 3], vec![Push, Lift, Push]),
        (
            "friction loss",
            vec![fl(0.3), fl(0.5), fl(0.2)],
            vec![Slide(0), Push, Slide(1)],
        ),
        (
            "contact (condim 1)",
            vec![ct(&[]), ct(&[])],
            vec![Push, Lift],
        ),
        (
            "contact (condim 3, anisotropic)",
            vec![ct(&[0.9, 0.5]), ct(&[0.3, 0.7]), ct(&[0.6, 0.2])],
            vec![Slide(1), Push, Lift],
        ),
        (
            "contact (condim 4)",
            vec![
                ct(&[0.9, 0.5, 0.05]),
                ct(&[0.8, 0.8, 0.02]),
                ct(&[0.5, 0.7, 0.1]),
            ],
            vec![Slide(NF), Push, Slide(2)],
        ),
        (
            "contact (condim 6)",
            vec![
                ct(&[0.8, 0.8, 0.01, 0.02, 0.03]),
                ct(&[0.6, 0.6, 0.02, 0.01, 0.01]),
                ct(&[0.5, 0.9, 0.05, 0.01, 0.01]),
            ],
            vec![Slide(NF + 3), Push, Slide(0)],
        ),
        (
            "every kind",
            vec![
                eq(3),
                Constraint::Limit,
                fl(0.3),
                Constraint::coulomb(0.6),
                ct(&[0.9, 0.5, 0.02]),
                ct(&[]),
                ct(&[0.8, 0.8, 0.01, 0.001, 0.001]),
                eq(1),
            ],
            vec![Hold, Push, Slide(0), Slide(2), Push, Lift, Push, Hold],
        ),
    ]
}

/// Asserts that `r` passes the shared ruler of `p` on every row, block by block.
fn assert_ruler(p: &LocalProblem, r: &[f64], tol: f64, what: &str) {
    let m = local_metrics(p, r);
    assert!(
        m.natural_map <= tol && m.cone_violation <= tol && m.dual_cone_violation <= tol,
        "{what}: {m:?}"
    );
    assert!(m.complementarity_gap <= tol, "{what}: {m:?}");
    let u = p.velocity(r);
    for (rows, c) in p.constraints.iter() {
        let mut f = vec![0.0; rows.len()];
        c.natural_map(&r[rows.clone()], &u[rows.clone()], &mut f);
        let norm = f.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(norm <= tol, "{what}, {}: {f:?}", c.describe());
    }
}

#[test]
fn mlcp_maps_between_impulses_and_unknowns_on_every_kind() {
    for (name, blocks, acts) in kind_cases() {
        for seed in 0..4 {
            let (p, r) = constructed(&blocks, &acts, 1000 + seed);
            let m = MlcpFb::new(&p, kind_dirs(&p)).unwrap();
            // r -> z -> r is the identity, and z solves the MLCP: the constructed solutions lie
            // on the polytope's vertices or inside it, where it and the ellipse agree.
            let z = m.unknowns_from_impulse(&r).unwrap();
            assert!(max_abs_diff(&m.impulse(&z), &r) < 1e-13, "{name}");
            let phi = residual_of(&m, &z);
            assert!(
                phi.iter().all(|v| v.abs() < 1e-12),
                "{name} {seed}: {phi:?}"
            );
            assert!(z[m.num_bilateral()..].iter().all(|&v| v >= 0.0), "{name}");
            assert_ruler(&p, &r, 1e-12, name);
        }
    }
}

#[test]
fn mlcp_layout_of_every_kind() {
    let (p, _) = constructed(&kind_cases()[9].1, &kind_cases()[9].2, 7);
    let m = MlcpFb::new(&p, kind_dirs(&p)).unwrap();
    // p_b: 3 + 1 equality rows. beta_: limit 1, friction loss 2, Coulomb 1 + 4, anisotropic
    // condim 4: 1 + 4 + 2, condim 1: 1, condim 6: 1 + 4 + 6. sigma: friction loss and the three
    // frictional contacts.
    assert_eq!(m.num_bilateral(), 4);
    assert_eq!(m.size(), 4 + (1 + 2 + 5 + 7 + 1 + 11) + 4);
    assert_eq!(m.num_contacts(), 4);
    let mm = m.matrix();
    let qv = m.vector();
    // The friction loss (block 1 among the non-equalities): E- = [-1, -1], bound f_max = 0.3.
    let s = m.sigma_index(1);
    assert_eq!(qv[s], 0.3);
    assert_eq!(
        (mm[(s, m.beta_index(1, 0))], mm[(s, m.beta_index(1, 1))]),
        (-1.0, -1.0)
    );
    assert_eq!(mm[(m.beta_index(1, 0), s)], 1.0);
    // The anisotropic condim 4 contact: E- = [1, -1 ..], and its torsion pair +- mu_3 e_3.
    let s = m.sigma_index(3);
    assert_eq!(mm[(s, m.beta_index(3, 0))], 1.0);
    assert_eq!(mm[(s, m.beta_index(3, 6))], -1.0);
    // The Coulomb contact keeps the paper's E- = [mu, -1 ..].
    assert_eq!(mm[(m.sigma_index(2), m.beta_index(2, 0))], 0.6);
    // The projected LM's box: p_b free, everything else >= 0.
    let mut z = vec![-1.0; m.size()];
    m.project(&mut z);
    assert!(z[..4].iter().all(|&v| v == -1.0) && z[4..].iter().all(|&v| v == 0.0));
}

#[test]
fn mlcp_solves_every_kind_to_the_rulers_tolerance() {
    // No stationarity or step test: the tiny rolling coefficients (0.001) scale their
    // directions' columns, so |J' F| falls below core's 1e-14 while |F| is still 1e-8.
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-13,
        grad_tol: 0.0,
        step_tol: 0.0,
        ..SolveOptions::default()
    };
    for (name, blocks, acts) in kind_cases() {
        for seed in 0..3 {
            let (p, _) = constructed(&blocks, &acts, 2000 + seed);
            let m = MlcpFb::new(&p, kind_dirs(&p)).unwrap();
            let x0 = vec![0.0; m.size()];
            // The paper's two optimizers (Gauss-Newton, not the paper's, stalls on the mixed
            // problem: its Jacobian is singular where a split such as beta_+ - beta_- is free).
            let runs = [
                ("rlm", solve_with(m.clone(), paper_rlm(), x0.clone(), &opts)),
                ("plm", solve_with(m.clone(), paper_plm(), x0.clone(), &opts)),
            ];
            for (driver, s) in runs {
                let what = format!("{name} seed {seed} {driver}");
                assert_eq!(s.status, Status::Converged, "{what}: {:?}", s.status);
                assert_ruler(&p, &m.impulse(&s.x), 1e-10, &what);
                if driver == "plm" {
                    // PLM keeps its iterates in the MCP's box, every kind's.
                    assert!(s.x[m.num_bilateral()..].iter().all(|&v| v >= 0.0), "{what}");
                }
            }
        }
    }
}

#[test]
fn mncp_solves_equality_rows_of_1_3_and_6_rows_in_any_order() {
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-13,
        ..SolveOptions::default()
    };
    for (name, blocks, acts) in kind_cases().into_iter().take(3) {
        for seed in 0..3 {
            let (p, r) = constructed(&blocks, &acts, 3000 + seed);
            let n = ImplicitMncp::new(&p).unwrap();
            // The constructed impulses are a Coulomb solution: the residual vanishes there.
            let x = n.unknowns_from_impulse(&r).unwrap();
            assert!(
                residual_of(&n, &x).iter().all(|v| v.abs() < 1e-12),
                "{name}"
            );
            assert!(max_abs_diff(&n.impulse(&x), &r) < 1e-13);
            let starts = [vec![0.0; n.num_unknowns()], n.sticking_start(1e-10)];
            for x0 in starts {
                for (driver, s) in three_drivers(&n, &x0, &opts) {
                    let what = format!("{name} seed {seed} {driver}");
                    assert_eq!(s.status, Status::Converged, "{what}: {:?}", s.status);
                    assert_ruler(&p, &n.impulse(&s.x), 1e-10, &what);
                }
            }
        }
    }
}

#[test]
fn mncp_unknowns_do_not_depend_on_where_the_equality_rows_stand() {
    // The same system with its bilateral row first and between the two contacts.
    let first = random_system(1, 2, 21);
    let perm = [1, 2, 3, 0, 4, 5, 6];
    let w = first.w.to_dense();
    let moved = LocalProblem::with_constraints(
        Matrix::Dense(Mat::from_fn(7, 7, |i, j| w[(perm[i], perm[j])])),
        perm.iter().map(|&i| first.q[i]).collect(),
        Constraints::new(vec![
            Constraint::coulomb(contact_mu(&first)[0]),
            Constraint::Equality { rows: 1 },
            Constraint::coulomb(contact_mu(&first)[1]),
        ])
        .unwrap(),
    )
    .unwrap();
    let (a, b) = (
        ImplicitMncp::new(&first).unwrap(),
        ImplicitMncp::new(&moved).unwrap(),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let x: Vec<f64> = (0..7).map(|_| rng.random_range(-1.0..1.0)).collect();
    assert_eq!(residual_of(&a, &x), residual_of(&b, &x));
    assert_eq!(jacobian_of(&a, &x), jacobian_of(&b, &x));
    let (ra, rb) = (a.impulse(&x), b.impulse(&x));
    assert!(perm.iter().enumerate().all(|(i, &k)| rb[i] == ra[k]));
    assert_eq!(b.from_row_order(&b.to_row_order(&x)), x);
    let m = MlcpFb::new(&moved, Directions::uniform(4, 0.0, 2).unwrap()).unwrap();
    let ma = MlcpFb::new(&first, Directions::uniform(4, 0.0, 2).unwrap()).unwrap();
    assert_eq!(m.matrix(), ma.matrix());
    assert_eq!(m.vector(), ma.vector());
}

#[test]
fn mlcp_jacobian_matches_finite_differences_on_every_kind() {
    let (mut checked, mut total) = (0, 0);
    for (name, blocks, acts) in kind_cases() {
        for seed in 0..3 {
            let (p, _) = constructed(&blocks, &acts, 4000 + seed);
            let m = MlcpFb::new(&p, kind_dirs(&p)).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let z: Vec<f64> = (0..m.size()).map(|_| rng.random_range(-1.0..1.0)).collect();
            let f = m.affine(&z);
            let j = jacobian_of(&m, &z);
            total += m.size();
            for i in 0..m.size() {
                if !m.is_equality(i) && z[i].hypot(f[i]) < 1e-3 {
                    continue;
                }
                for c in 0..m.size() {
                    let d = fd(&m, &z, i, c, 1e-7);
                    assert!(
                        (d - j[(i, c)]).abs() < 1e-6 * (1.0 + d.abs()),
                        "{name} seed {seed} ({i},{c}): fd {d} vs {}",
                        j[(i, c)]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(10 * checked >= 9 * total, "{checked} of {total} rows");
}

#[test]
fn bad_input_of_every_kind_is_an_error() {
    let (p, _) = constructed(&kind_cases()[9].1, &kind_cases()[9].2, 5);
    let dirs = kind_dirs(&p);
    // A negative or NaN friction loss bound, NaN in W, a bad contact coefficient.
    for bad in [
        Constraint::FrictionLoss { f_max: -1.0 },
        Constraint::FrictionLoss { f_max: f64::NAN },
    ] {
        let mut q = p.clone();
        let mut blocks = q.constraints.blocks().to_vec();
        blocks[2] = bad;
        q.constraints = Constraints::unchecked(blocks);
        let e = MlcpFb::new(&q, dirs.clone()).unwrap_err();
        assert!(matches!(
            e,
            MylapilliError::Problem(ProblemError::BadConstraint { index: 2, .. })
        ));
        assert!(e.to_string().contains("f_max"), "{e}");
    }
    let mut nan = p.clone();
    nan.w = Matrix::Dense(Mat::from_fn(nan.q.len(), nan.q.len(), |i, j| {
        if (i, j) == (5, 5) {
            f64::NAN
        } else {
            p.w.to_dense()[(i, j)]
        }
    }));
    assert!(MlcpFb::new(&nan, dirs.clone()).is_err());
    // Directions for another number of contact blocks.
    assert!(matches!(
        MlcpFb::new(&p, Directions::uniform(4, 0.0, 7).unwrap()),
        Err(MylapilliError::DirectionCount {
            expected: 4,
            found: 7
        })
    ));
    // The MNCP takes every kind, and refuses the same bad input by name.
    assert!(ImplicitMncp::new(&p).unwrap().is_general());
    for bad in [
        Constraint::FrictionLoss { f_max: -1.0 },
        Constraint::FrictionLoss { f_max: f64::NAN },
    ] {
        let mut q = p.clone();
        let mut blocks = q.constraints.blocks().to_vec();
        blocks[2] = bad;
        q.constraints = Constraints::unchecked(blocks);
        let e = ImplicitMncp::new(&q).unwrap_err();
        assert!(matches!(
            e,
            MylapilliError::Problem(ProblemError::BadConstraint { index: 2, .. })
        ));
        assert!(e.to_string().contains("f_max"), "{e}");
    }
    assert!(matches!(
        ImplicitMncp::new(&nan),
        Err(MylapilliError::Problem(ProblemError::NonFinite { .. }))
    ));
    let mut neg_mu = p.clone();
    let mut blocks = neg_mu.constraints.blocks().to_vec();
    blocks[4] = Constraint::Contact {
        mu: vec![0.9, -0.5, 0.02],
    };
    neg_mu.constraints = Constraints::unchecked(blocks);
    assert!(matches!(
        ImplicitMncp::new(&neg_mu),
        Err(MylapilliError::Problem(ProblemError::BadConstraint {
            index: 4,
            ..
        }))
    ));
}

#[test]
fn plugins_take_their_kinds_and_round_trip_warm_states() {
    use contactlab_core::constraint::EVERY_KIND;
    use contactlab_core::plugin::{solve_formulation, Formulation, Init};
    use contactlab_core::{CoreError, StepProblem};
    assert_eq!(MlcpFbFormulation::KINDS, EVERY_KIND);
    assert_eq!(MncpFormulation::KINDS, EVERY_KIND);
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-13,
        grad_tol: 0.0,
        step_tol: 0.0,
        ..SolveOptions::default()
    };
    let (p, _) = constructed(&kind_cases()[9].1, &kind_cases()[9].2, 11);
    let step = StepProblem::from(p.clone());
    // The constructed solution's directions; turned against the slip instead, the sliding
    // Coulomb contact's friction leaves its vertex and the answer is the pyramid's, not the
    // ellipse's: the ruler is checked on the first only.
    for align_with_slip in [false, true] {
        let f = MlcpFbFormulation {
            align_with_slip,
            theta0_deg: THETA0.to_degrees(),
            ..MlcpFbFormulation::default()
        };
        for init in [Init::Default, Init::Zero] {
            let out = solve_formulation(&f, &step, init, &opts, |b: &MlcpFb, x0, o| {
                solve_least_squares(b.clone(), paper_plm(), x0, o)
            })
            .unwrap();
            assert_eq!(out.r.len(), p.q.len());
            assert_eq!(out.solution.status, Status::Converged);
            if !align_with_slip {
                assert_ruler(&p, &out.r, 1e-10, "mlcp-fb plugin");
            }
            // From its own answer the warm start is already a solution.
            let warm = solve_formulation(&f, &step, Init::Warm(&out.warm), &opts, |b, x0, o| {
                solve_least_squares(b.clone(), paper_plm(), x0, o)
            })
            .unwrap();
            assert!(
                warm.solution.iterations <= 2,
                "{}",
                warm.solution.iterations
            );
        }
    }
    // The MNCP takes the mixed problem of every kind and the equality-and-Coulomb one.
    let (pe, _) = constructed(&kind_cases()[2].1, &kind_cases()[2].2, 12);
    for (what, pk) in [("mncp plugin, every kind", p.clone()), ("mncp plugin", pe)] {
        let step = StepProblem::from(pk.clone());
        let out = solve_formulation(
            &MncpFormulation::default(),
            &step,
            Init::Default,
            &opts,
            |b: &ImplicitMncp, x0, o| solve_least_squares(b.clone(), paper_plm(), x0, o),
        )
        .unwrap();
        assert_ruler(&pk, &out.r, 1e-10, what);
        assert_eq!(out.warm.len(), pk.q.len());
        let warm = solve_formulation(
            &MncpFormulation::default(),
            &step,
            Init::Warm(&out.warm),
            &opts,
            |b: &ImplicitMncp, x0, o| solve_least_squares(b.clone(), paper_plm(), x0, o),
        )
        .unwrap();
        assert!(
            warm.solution.iterations <= 1,
            "{what}: {}",
            warm.solution.iterations
        );
    }
    // Bad input is an error before building, never a panic.
    let mut bad = p.clone();
    let mut blocks = bad.constraints.blocks().to_vec();
    blocks[2] = Constraint::FrictionLoss { f_max: -0.3 };
    bad.constraints = Constraints::unchecked(blocks);
    let e = solve_formulation(
        &MncpFormulation::default(),
        &StepProblem::from(bad),
        Init::Default,
        &opts,
        |b: &ImplicitMncp, x0, o| solve_least_squares(b.clone(), paper_plm(), x0, o),
    );
    assert!(matches!(e, Err(CoreError::Problem(_))), "{e:?}");
}

// ---------------------------------------------------------------- the MNCP on every kind

/// The every-kind cases without equality rows: Todorov's implicit NCP is the same residual.
fn kind_cases_without_equalities() -> Vec<(&'static str, Vec<Constraint>, Vec<Act>)> {
    kind_cases()
        .into_iter()
        .map(|(name, blocks, acts)| {
            let (b, a): (Vec<_>, Vec<_>) = blocks
                .into_iter()
                .zip(acts)
                .filter(|(c, _)| !matches!(c, Constraint::Equality { .. }))
                .unzip();
            (name, b, a)
        })
        .collect()
}

/// The largest entry of `a - b`.
fn max_mat_diff(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
    let mut m = 0.0f64;
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            m = m.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    m
}

/// Todorov's driver with its defaults on `res` from `x0`.
fn todorov_driver<R: NonSmoothResidual>(res: &R, x0: Vec<f64>, opts: &SolveOptions) -> Solution {
    todorov::solve_todorov(res, todorov::TodorovSolver::default(), x0, opts).expect("solver error")
}

#[test]
fn mncp_solves_every_kind_with_the_papers_drivers_and_todorovs() {
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-13,
        grad_tol: 0.0,
        step_tol: 0.0,
        ..SolveOptions::default()
    };
    for (name, blocks, acts) in kind_cases() {
        for seed in 0..3 {
            let (p, r) = constructed(&blocks, &acts, 5000 + seed);
            let n = ImplicitMncp::new(&p).unwrap();
            // The constructed impulses solve every kind's law: z = u - r is a root (eq. 14).
            let x = n.unknowns_from_impulse(&r).unwrap();
            let phi = residual_of(&n, &x);
            assert!(phi.iter().all(|v| v.abs() < 1e-12), "{name}: {phi:?}");
            assert!(max_abs_diff(&n.impulse(&x), &r) < 1e-13, "{name}");
            let x0 = n.sticking_start(1e-10);
            let runs = [
                ("rlm", solve_with(n.clone(), paper_rlm(), x0.clone(), &opts)),
                ("plm", solve_with(n.clone(), paper_plm(), x0.clone(), &opts)),
                ("todorov", todorov_driver(&n, x0.clone(), &opts)),
            ];
            for (driver, s) in runs {
                let what = format!("{name} seed {seed} {driver}");
                assert_eq!(s.status, Status::Converged, "{what}: {:?}", s.status);
                assert_ruler(&p, &n.impulse(&s.x), 1e-10, &what);
            }
        }
    }
}

#[test]
fn mncp_jacobian_matches_finite_differences_on_every_kind() {
    let (mut checked, mut total) = (0, 0);
    for (name, blocks, acts) in kind_cases() {
        for seed in 0..3 {
            let (p, _) = constructed(&blocks, &acts, 6000 + seed);
            let n = ImplicitMncp::new(&p).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let x: Vec<f64> = (0..n.num_unknowns())
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let j = jacobian_of(&n, &x);
            let h = 1e-7;
            for c in 0..n.num_unknowns() {
                total += 1;
                // Only columns whose difference stays in every block's piece.
                let mut xs = [x.clone(), x.clone()];
                xs[0][c] += h;
                xs[1][c] -= h;
                if xs.iter().any(|y| n.regions(y) != n.regions(&x)) {
                    continue;
                }
                for i in 0..n.num_residuals() {
                    let d = fd(&n, &x, i, c, h);
                    assert!(
                        (d - j[(i, c)]).abs() < 1e-6 * (1.0 + d.abs()),
                        "{name} seed {seed} ({i},{c}): fd {d} vs {}",
                        j[(i, c)]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(10 * checked >= 9 * total, "{checked} of {total} columns");
}

#[test]
fn mncp_one_sided_jacobians_on_every_kinds_edges_match_one_sided_differences() {
    // The mixed problem; each block in turn put on an edge of its own.
    let (p, _) = constructed(&kind_cases()[9].1, &kind_cases()[9].2, 17);
    let n = ImplicitMncp::new(&p).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let base: Vec<f64> = (0..n.num_unknowns())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    // Rows of the non-equality blocks after p_b (4 rows): limit 0, friction loss 1 (f_max
    // 0.3), Coulomb 2..5, condim 4 5..9, condim 1 9, condim 6 10..16.
    let nb = n.num_bilateral();
    let on_edges: Vec<(usize, Vec<f64>)> = vec![
        (nb, vec![0.0]),
        (nb + 1, vec![0.3]),
        (nb + 2, vec![-0.5, 0.6 * 0.3, 0.6 * 0.4]),
        (nb + 5, vec![-1.0, 0.9 * 0.6, 0.5 * 0.8, 0.0]),
        (nb + 9, vec![0.0]),
    ];
    let mut declared = 0;
    for (start, zb) in on_edges {
        let mut x = base.clone();
        x[start..start + zb.len()].copy_from_slice(&zb);
        let mut edges = Vec::new();
        n.edges_at(&x, &mut edges);
        let e = edges.iter().find(|e| e.start == start).expect("an edge");
        declared += 1;
        for sign in [1.0, -1.0] {
            let d = e.direction(x.len(), sign);
            let mut ja = Mat::zeros(x.len(), x.len());
            n.jacobian_along(&x, &d, ja.as_mut());
            let h = 1e-7;
            let xp: Vec<f64> = x.iter().zip(&d).map(|(a, b)| a + h * b).collect();
            let (f0, f1) = (residual_of(&n, &x), residual_of(&n, &xp));
            for i in 0..x.len() {
                let fd = (f1[i] - f0[i]) / h;
                let an: f64 = (0..x.len()).map(|c| ja[(i, c)] * d[c]).sum();
                assert!(
                    (fd - an).abs() < 1e-5,
                    "edge at {start} side {sign}: {fd} vs {an}"
                );
            }
        }
    }
    assert_eq!(declared, 5);
}

#[test]
fn mncp_without_equality_rows_is_todorovs_implicit_ncp_on_every_kind() {
    let opts = SolveOptions {
        max_iter: 300,
        stop_tol: 1e-12,
        ..SolveOptions::default()
    };
    for (name, blocks, acts) in kind_cases_without_equalities() {
        let (p, _) = constructed(&blocks, &acts, 7000);
        let (ours, his) = (ImplicitMncp::new(&p).unwrap(), ImplicitNcp::new(&p));
        assert_eq!(ours.num_bilateral(), 0);
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let x: Vec<f64> = (0..p.q.len())
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        assert!(max_abs_diff(&residual_of(&ours, &x), &residual_of(&his, &x)) < 1e-13);
        let (ja, jb) = (jacobian_of(&ours, &x), jacobian_of(&his, &x));
        assert!(max_mat_diff(&ja, &jb) < 1e-13, "{name}");
        assert_eq!(ours.impulse(&x), his.impulses(&x), "{name}");
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        let dx: Vec<f64> = x.iter().map(|v| -2.0 * v).collect();
        ours.kinks_on_segment(&x, &dx, &mut ka);
        his.kinks_on_segment(&x, &dx, &mut kb);
        assert_eq!(ka, kb, "{name}");
        // Both from Todorov's sticking start with his driver: the same answer.
        let x0 = his.sticking_start(1e-10);
        let (sa, sb) = (
            todorov_driver(&ours, x0.clone(), &opts),
            todorov_driver(&his, x0, &opts),
        );
        assert_eq!(sa.status, Status::Converged, "{name}");
        assert_eq!(sb.status, Status::Converged, "{name}");
        assert!(
            max_abs_diff(&ours.impulse(&sa.x), &his.impulses(&sb.x)) < 1e-9,
            "{name}"
        );
        assert_ruler(&p, &ours.impulse(&sa.x), 1e-10, name);
    }
}

#[test]
fn mncp_coulomb_path_is_decided_at_build_and_the_block_path_agrees_with_it() {
    let p = random_system(2, 3, 31);
    let fast = ImplicitMncp::new(&p).unwrap();
    assert!(!fast.is_general());
    let general = fast.clone().with_general_path();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..20 {
        let x: Vec<f64> = (0..fast.num_unknowns())
            .map(|_| rng.random_range(-1.5..1.5))
            .collect();
        let dx: Vec<f64> = (0..x.len()).map(|_| rng.random_range(-2.0..2.0)).collect();
        assert!(max_abs_diff(&residual_of(&fast, &x), &residual_of(&general, &x)) < 1e-14);
        assert!(max_mat_diff(&jacobian_of(&fast, &x), &jacobian_of(&general, &x)) < 1e-14);
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        fast.kinks_on_segment(&x, &dx, &mut ka);
        general.kinks_on_segment(&x, &dx, &mut kb);
        assert_eq!(ka, kb);
        assert_eq!(fast.regions(&x), general.regions(&x));
    }
}

#[test]
fn mncp_runs_every_driver_it_pairs_with_on_a_mixed_problem() {
    use contactlab_core::plugin::{Driver, Formulation};
    use contactlab_core::StepProblem;
    // A limit, a friction loss, a Coulomb contact, a condim 4 contact and a 3-row equality
    // on a coupled diagonal-dominant W: every driver the lab pairs the MNCP with, from the
    // plugin's sticking start.
    let c = Constraints::new(vec![
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.2 },
        Constraint::coulomb(0.5),
        Constraint::Equality { rows: 3 },
        Constraint::Contact {
            mu: vec![0.7, 0.7, 0.01],
        },
    ])
    .unwrap();
    let m = c.rows();
    let w = Mat::from_fn(m, m, |i, j| {
        if i == j {
            2.0
        } else {
            0.1 / (1.0 + (i as f64 - j as f64).abs())
        }
    });
    let q = (0..m)
        .map(|i| if i % 3 == 0 { -1.0 } else { 0.4 })
        .collect();
    let p = LocalProblem::with_constraints(Matrix::Dense(w), q, c).unwrap();
    let form = MncpFormulation::default();
    let step = StepProblem::from(p.clone());
    let n = form.build(&step).unwrap();
    let x0 = form.default_start(&n, &step).unwrap();
    let opts = SolveOptions {
        max_iter: 2000,
        stop_tol: 1e-10,
        ..SolveOptions::default()
    };
    let newton = crate::erleben::ErlebenNewton::default();
    let runs = [
        (
            "gauss-newton",
            GaussNewtonLs::default().solve(&n, x0.clone(), &opts),
        ),
        (
            "lm",
            LevenbergMarquardt::default().solve(&n, x0.clone(), &opts),
        ),
        (
            "plm",
            ProjectedLevenbergMarquardt::default().solve(&n, x0.clone(), &opts),
        ),
        ("dogleg", Dogleg::default().solve(&n, x0.clone(), &opts)),
        (
            "trust-region",
            TrustRegionSteihaug::default().solve(&n, x0.clone(), &opts),
        ),
        ("todorov", Ok(todorov_driver(&n, x0.clone(), &opts))),
        ("newton", newton.solve(&n, x0.clone(), &opts)),
    ];
    for (driver, s) in runs {
        let s = s.unwrap();
        assert_eq!(s.status, Status::Converged, "{driver}: {:?}", s.status);
        assert_ruler(&p, &form.impulses(&n, &s.x), 1e-10, driver);
    }
}
