//! Problems whose rows are constraint blocks of every kind: validated by their rows, bad
//! parameters named, judged by the shared ruler over every block, and refused (naming the
//! kind) by a formulation that takes Coulomb contacts only.

use contactlab_core::drivers::pgs::{solve_pgs, ProjectedGaussSeidel};
use contactlab_core::error::ProblemError;
use contactlab_core::metrics::{local_metrics, metrics_of};
use contactlab_core::plugin::{solve_formulation, Formulation, Model};
use contactlab_core::{
    Constraint, Constraints, CoreError, Init, LocalProblem, Matrix, SolveOptions, StepProblem,
};

/// A limit, a 3-row Coulomb contact and a friction loss: 5 rows, `W` diagonal.
fn mixed() -> LocalProblem {
    let c = Constraints::new(vec![
        Constraint::Limit,
        Constraint::coulomb(0.5),
        Constraint::FrictionLoss { f_max: 0.2 },
    ])
    .unwrap();
    let mut w = vec![0.0; 25];
    for i in 0..5 {
        w[6 * i] = 1.0;
    }
    let w = Matrix::from_row_major("W", 5, 5, &w).unwrap();
    LocalProblem::with_constraints(w, vec![-1.0, -1.0, 2.0, 0.0, 0.5], c).unwrap()
}

#[test]
fn a_problem_of_mixed_blocks_is_shaped_by_its_rows_and_its_parameters_are_checked() {
    let p = mixed();
    assert_eq!((p.num_contacts(), p.constraints.rows()), (3, 5));
    // Four entries of q for five rows: the message says where five comes from.
    let e = LocalProblem::with_constraints(p.w.clone(), vec![0.0; 4], p.constraints.clone())
        .unwrap_err()
        .to_string();
    assert!(e.contains("5 rows of 3 constraint blocks"), "{e}");
    let bad = Constraints::unchecked(vec![Constraint::FrictionLoss { f_max: f64::NAN }]);
    let e = LocalProblem::with_constraints(
        Matrix::from_row_major("W", 1, 1, &[1.0]).unwrap(),
        vec![0.0],
        bad,
    )
    .unwrap_err();
    assert!(
        matches!(e, ProblemError::BadConstraint { index: 0, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("friction_loss") && e.to_string().contains("NaN"),
        "{e}"
    );
    // Coulomb contacts keep the FCLib fields' errors.
    let e = LocalProblem::new(
        Matrix::from_row_major("W", 3, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap(),
        vec![0.0; 3],
        vec![-0.1],
    )
    .unwrap_err();
    assert!(
        matches!(e, ProblemError::NegativeFriction { contact: 0, .. }),
        "{e}"
    );
}

#[test]
fn the_ruler_judges_every_block_and_reads_zero_at_the_solution() {
    let p = mixed();
    // With W = I each block decouples: the limit pushes (r = 1, u = 0); the contact slides
    // (q_t = 2 against mu r_n = 0.5: r = (1, -0.5, 0), u = (0, 1.5, 0)); the friction loss
    // slides forward (r = -0.2, u = 0.3).
    let r = [1.0, 1.0, -0.5, 0.0, -0.2];
    let m = local_metrics(&p, &r);
    assert!(m.natural_map < 1e-15, "{m:?}");
    assert!(m.cone_violation < 1e-15 && m.dual_cone_violation < 1e-15);
    assert!(m.complementarity_gap < 1e-15, "{m:?}");
    // The friction loss pushing with the motion is caught.
    let wrong = [1.0, 1.0, -0.5, 0.0, 0.2];
    assert!(local_metrics(&p, &wrong).natural_map > 0.1);
    // A Coulomb problem's numbers are those of the contacts' own sums, bit for bit.
    let c = LocalProblem::new(
        Matrix::from_row_major("W", 3, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap(),
        vec![-1.0, 2.0, 0.0],
        vec![0.5],
    )
    .unwrap();
    let r = [0.9, -0.4, 0.1];
    assert_eq!(
        local_metrics(&c, &r),
        metrics_of(&[0.5], &c.q, &r, &c.velocity(&r))
    );
}

/// A formulation that solves the contact-space problem by PGS, taking Coulomb contacts only
/// (the default of [`Formulation::KINDS`]).
struct Plain;

impl Formulation for Plain {
    type Built = LocalProblem;
    fn model(&self) -> Model {
        Model::CoulombCone
    }
    fn build(&self, problem: &StepProblem) -> Result<LocalProblem, CoreError> {
        Ok(problem.local()?.clone())
    }
    fn num_unknowns(&self, built: &LocalProblem) -> usize {
        built.q.len()
    }
    fn impulses(&self, _built: &LocalProblem, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

#[test]
fn a_formulation_refuses_a_kind_it_does_not_take_naming_it() {
    let step = StepProblem::local_only(mixed());
    let e = solve_formulation(
        &Plain,
        &step,
        Init::Zero,
        &SolveOptions::default(),
        |p, x, o| solve_pgs(p, ProjectedGaussSeidel::default(), Some(x), o),
    )
    .expect_err("refused");
    let text = e.to_string();
    assert!(text.contains("does not take limit"), "{text}");
    // The same formulation solves a Coulomb problem.
    let coulomb = StepProblem::local_only(LocalProblem::coulomb(
        Matrix::from_row_major("W", 3, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap(),
        vec![-1.0, 2.0, 0.0],
        &[0.5],
    ));
    assert!(solve_formulation(
        &Plain,
        &coulomb,
        Init::Zero,
        &SolveOptions::default(),
        |p, x, o| { solve_pgs(p, ProjectedGaussSeidel::default(), Some(x), o) }
    )
    .is_ok());
}

#[test]
fn json_files_carry_the_blocks_and_read_back_bit_for_bit() {
    use contactlab_core::io::json::{parse_json, to_json_string};
    use contactlab_core::Problem;
    use std::path::Path;
    let p = mixed();
    let text = to_json_string(&Problem::Local(p.clone())).unwrap();
    assert!(
        text.contains("\"constraints\"") && !text.contains("\"mu\": ["),
        "{text}"
    );
    assert!(
        text.contains(r#"{"kind":"friction_loss","f_max":0.2}"#),
        "{text}"
    );
    let Problem::Local(back) = parse_json(&text, Path::new("mixed.json")).unwrap() else {
        panic!("not local")
    };
    assert_eq!(back.constraints, p.constraints);
    assert_eq!(back.q, p.q);
    // A Coulomb problem keeps FCLib's `mu`.
    let c = LocalProblem::new(
        Matrix::from_row_major("W", 3, 3, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).unwrap(),
        vec![-1.0, 2.0, 0.0],
        vec![0.5],
    )
    .unwrap();
    let text = to_json_string(&Problem::Local(c)).unwrap();
    assert!(
        text.contains("\"mu\": [0.5]") && !text.contains("constraints"),
        "{text}"
    );
    // Errors name the file and the field.
    let both = r#"{"W": [[1.0]], "q": [0.0], "mu": [], "constraints": [{"kind": "limit"}]}"#;
    let e = parse_json(both, Path::new("both.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("both.json") && e.contains("not both"), "{e}");
    let unknown = r#"{"W": [[1.0]], "q": [0.0], "constraints": [{"kind": "spring"}]}"#;
    let e = parse_json(unknown, Path::new("u.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("constraints") && e.contains("spring"), "{e}");
    let negative =
        r#"{"W": [[1.0]], "q": [0.0], "constraints": [{"kind": "friction_loss", "f_max": -1}]}"#;
    let e = parse_json(negative, Path::new("n.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("constraints") && e.contains("f_max") && e.contains("-1"),
        "{e}"
    );
    let short = r#"{"W": [[1.0]], "q": [0.0], "constraints": [{"kind": "equality", "rows": 3}]}"#;
    let e = parse_json(short, Path::new("s.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("3 rows of 1 constraint blocks"), "{e}");
}

#[test]
fn the_pgs_driver_sweeps_blocks_and_the_contact_sweep_refuses_them() {
    use contactlab_core::drivers::sweep::solve_sweep;
    let p = mixed();
    let opts = SolveOptions {
        stop_tol: 1e-12,
        max_iter: 1000,
        ..Default::default()
    };
    let pgs = ProjectedGaussSeidel::default();
    let s = solve_pgs(&p, pgs.clone(), None, &opts).unwrap();
    assert_eq!(s.status, contactlab_core::Status::Converged);
    assert!(local_metrics(&p, &s.x).natural_map <= 1e-12);
    let e = solve_sweep(&p, pgs.sweep(), None, &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit"), "{e}");
}

#[test]
fn redundant_equalities_are_solved_when_consistent_and_end_with_a_status_when_not() {
    // A weld and a connect closing one loop give equal rows: W = J J' with J = [1 0; 1 0] is
    // singular. Consistent targets (q = (-1, -1)) have a family of answers with r1 + r2 = 1;
    // contradicting ones (q = (-1, -2)) have none.
    let c = Constraints::new(vec![
        Constraint::Equality { rows: 1 },
        Constraint::Equality { rows: 1 },
    ])
    .unwrap();
    let w = Matrix::from_row_major("W", 2, 2, &[1.0, 1.0, 1.0, 1.0]).unwrap();
    let opts = SolveOptions {
        stop_tol: 1e-12,
        max_iter: 200,
        ..Default::default()
    };
    let consistent =
        LocalProblem::with_constraints(w.clone(), vec![-1.0, -1.0], c.clone()).unwrap();
    let s = solve_pgs(&consistent, ProjectedGaussSeidel::default(), None, &opts).unwrap();
    assert_eq!(s.status, contactlab_core::Status::Converged);
    assert!((s.x[0] + s.x[1] - 1.0).abs() < 1e-12, "{:?}", s.x);
    let contradicting = LocalProblem::with_constraints(w, vec![-1.0, -2.0], c).unwrap();
    let s = solve_pgs(&contradicting, ProjectedGaussSeidel::default(), None, &opts).unwrap();
    assert_ne!(s.status, contactlab_core::Status::Converged);
    assert!(local_metrics(&contradicting, &s.x).natural_map > 0.1);
}

#[test]
fn admm_solves_a_problem_of_mixed_blocks_to_the_rulers_tolerance() {
    use contactlab_core::drivers::admm::solve_admm;
    use contactlab_core::drivers::Admm;
    // Coupled: W = A A' / 5 + 0.3 I over the mixed blocks, q from a fixed draw.
    let c = mixed().constraints;
    let a = [
        0.3, -0.7, 0.2, 0.9, -0.1, 0.5, 0.1, -0.4, 0.6, 0.2, -0.8, 0.3, 0.7, -0.2, 0.1, 0.4, 0.6,
        -0.5, 0.2, -0.3, 0.1, 0.9, -0.6, 0.4, 0.8,
    ];
    let w: Vec<f64> = (0..25)
        .map(|k| {
            let (i, j) = (k / 5, k % 5);
            let s: f64 = (0..5).map(|l| a[i * 5 + l] * a[j * 5 + l]).sum();
            s / 5.0 + if i == j { 0.3 } else { 0.0 }
        })
        .collect();
    let p = LocalProblem::with_constraints(
        Matrix::from_row_major("W", 5, 5, &w).unwrap(),
        vec![-1.0, -0.8, 0.6, -0.2, 0.4],
        c,
    )
    .unwrap();
    let opts = SolveOptions {
        stop_tol: 1e-10,
        max_iter: 20_000,
        ..Default::default()
    };
    let s = solve_admm(&p, &Admm::default(), None, &opts).unwrap();
    assert_eq!(
        s.status,
        contactlab_core::Status::Converged,
        "{:?}",
        s.status
    );
    let m = local_metrics(&p, &s.x);
    assert!(m.natural_map <= 1e-10, "{m:?}");
    // PGS finds the same answer (W positive definite: it is unique).
    let g = solve_pgs(&p, ProjectedGaussSeidel::default(), None, &opts).unwrap();
    let gap =
        s.x.iter()
            .zip(&g.x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
    assert!(gap <= 1e-7, "ADMM {:?} against PGS {:?}", s.x, g.x);
}
