use super::*;
use crate::fixtures::{assert_matches_differences, central, direction, moved, problem_of};
use crate::mylapilli::{paper_plm, Directions};
use crate::natural_map::sensitivity::LocalDirection;
use contactlab_core::drivers::solve_least_squares;
use contactlab_core::{Matrix, SolveOptions, Status};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Three Coulomb contacts, a limit, a friction loss and an equality on a random SPD `W`.
fn mixed(seed: u64) -> LocalProblem {
    let blocks = vec![
        Constraint::coulomb(0.5),
        Constraint::Limit,
        Constraint::coulomb(0.8),
        Constraint::FrictionLoss { f_max: 0.3 },
        Constraint::Equality { rows: 1 },
        Constraint::coulomb(0.6),
    ];
    problem_of(blocks, (-1.0, 0.5), seed)
}

/// The three contacts' `mu` moved, the other blocks' held.
fn mu_direction(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut d = vec![0.0; 6];
    for b in [0, 2, 5] {
        d[b] = 0.2 * rng.random_range(-1.0..1.0);
    }
    d
}

/// The MLCP of `p` with six directions per contact (`theta0 = 0.3` rad: no direction along an
/// axis), solved by the paper's PLM from `start` to `|Phi| <= 1e-14`: `(z, r)`.
fn solve(p: &LocalProblem, start: Option<&[f64]>) -> Option<(MlcpFb, Vec<f64>, Vec<f64>)> {
    let dirs = Directions::per_contact(6, vec![0.3; 3]).ok()?;
    let mlcp = MlcpFb::new(p, dirs).ok()?;
    let x0 = start.map_or_else(|| vec![0.0; mlcp.size()], <[f64]>::to_vec);
    let opts = SolveOptions {
        stop_tol: 1e-14,
        max_iter: 500,
        ..SolveOptions::default()
    };
    let s = solve_least_squares(mlcp.clone(), paper_plm(), x0, &opts).ok()?;
    (s.status == Status::Converged).then(|| {
        let r = mlcp.impulse(&s.x);
        (mlcp, s.x, r)
    })
}

/// Forward mode along `q`, `W` and the contacts' `mu` at once agrees with central differences
/// of the MLCP's solve in the impulses (steps `1e-6` and `1e-7` agreeing, no block within
/// `1e-5` of a kink, the unknowns unique) to `1e-6` relative, and reverse mode is its adjoint
/// to `1e-10`; sliding and sticking contacts are among those compared.
#[test]
fn the_mlcps_derivative_is_the_derivative_of_its_solve() {
    let (mut compared, mut sliding, mut sticking) = (0, 0, 0);
    for seed in 0..30 {
        let p = mixed(seed);
        let n = p.q.len();
        let Some((mlcp, z, _)) = solve(&p, None) else {
            continue;
        };
        let s = mlcp_sensitivity(&p, &mlcp, &z, 1e-12).unwrap();
        let regimes = s.regimes(1e-5);
        if s.non_unique() || regimes.contains(&Regime::Degenerate) {
            continue;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(900 + seed);
        let (dq, dw) = direction(n, &mut rng);
        let dmu = mu_direction(&mut rng);
        let at = |t: f64| moved(&p, (&dq, &dw, &dmu), t);
        let Some(fd) = central(at, |q| solve(q, Some(&z)).map(|(_, _, r)| r)) else {
            continue;
        };
        let what = format!("seed {seed}");
        assert_matches_differences(&s, (&dq, &dw, &dmu), &fd, 1e-6, &mut rng, &what);
        sliding += regimes.iter().filter(|r| **r == Regime::Sliding).count();
        sticking += regimes.iter().filter(|r| **r == Regime::Sticking).count();
        compared += 1;
    }
    assert!(compared >= 6, "only {compared} seeds compared");
    assert!(
        sliding >= 3 && sticking >= 3,
        "{sliding} sliding, {sticking} sticking"
    );
}

/// One Coulomb contact on `W = I` with four directions along the axes: pushed hard along `t1`
/// it slides on the pyramid's face along `-t1`, where `dr_t1/dmu = -r_n`; a point that is not
/// an answer and a contact with per-row coefficients are refused.
#[test]
fn the_mlcps_face_moves_with_mu_and_bad_points_are_refused() {
    let p = LocalProblem::new(
        Matrix::Dense(Mat::identity(3, 3)),
        vec![-1.0, 2.0, 0.0],
        vec![0.5],
    )
    .unwrap();
    let dirs = Directions::per_contact(4, vec![0.0]).unwrap();
    let mlcp = MlcpFb::new(&p, dirs).unwrap();
    let opts = SolveOptions {
        stop_tol: 1e-14,
        max_iter: 200,
        ..SolveOptions::default()
    };
    let z = solve_least_squares(mlcp.clone(), paper_plm(), vec![0.0; mlcp.size()], &opts)
        .unwrap()
        .x;
    let s = mlcp_sensitivity(&p, &mlcp, &z, 1e-12).unwrap();
    assert_eq!(s.regimes(1e-6), vec![Regime::Sliding]);
    let (dr, _) = s
        .jvp(&LocalDirection {
            mu: Some(&[1.0]),
            ..Default::default()
        })
        .unwrap();
    assert!((dr[1] + 1.0).abs() <= 1e-9 && dr[0].abs() <= 1e-9, "{dr:?}");
    let e = mlcp_sensitivity(&p, &mlcp, &vec![0.0; mlcp.size()], 1e-12).unwrap_err();
    assert!(e.to_string().contains("FB MLCP"), "{e}");
    let scaled = LocalProblem::with_constraints(
        Matrix::Dense(Mat::identity(3, 3)),
        vec![-1.0, 2.0, 0.0],
        contactlab_core::Constraints::new(vec![Constraint::Contact { mu: vec![0.5, 0.3] }])
            .unwrap(),
    )
    .unwrap();
    let dirs = Directions::per_contact(4, vec![0.0]).unwrap();
    let m2 = MlcpFb::new(&scaled, dirs).unwrap();
    let e = mlcp_sensitivity(&scaled, &m2, &vec![0.0; m2.size()], 1e-12).unwrap_err();
    assert!(e.to_string().contains("block 0"), "{e}");
}
