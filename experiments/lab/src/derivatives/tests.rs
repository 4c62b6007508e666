use super::*;
use crate::registry::Registry;
use crate::solve::sliding_contact as sliding;
use crate::solve::spec_from_options;
use contactlab_core::GeneralizedProblem;
use serde_json::Map;

fn entry<'a>(named: &'a [Named], key: &str) -> &'a [f64] {
    &named.iter().find(|(k, _)| *k == key).unwrap().1
}

/// `step` solved by `formulation` with `optimizer` to `1e-12`, and the formulation's options.
fn solved(step: &StepProblem, formulation: &str, optimizer: &str) -> (LocalSolve, Value) {
    let reg = Registry::standard();
    let spec =
        spec_from_options(&reg, formulation, optimizer, 1e-12, 200, None, &Map::new()).unwrap();
    let resolved = reg.resolve(&spec).unwrap();
    let s = resolved.solve(step, None).unwrap();
    assert_eq!(s.status, contactlab_core::Status::Converged);
    (s, resolved.formulation.options())
}

/// The natural map's derivatives of `step`'s answer by Gauss-Newton.
fn derivatives(step: &StepProblem) -> Derivatives {
    let (s, options) = solved(step, "natural-map", "gauss-newton");
    Derivatives::new(step, &s, &options, 1e-12).unwrap()
}

/// The sliding contact's answer (`r = (1, -0.5, 0)`) moves with its load and its coefficient
/// as the closed form says (`r_n = -q_n`, `r_t = -mu r_n`); the Jacobian's rows are the unit
/// cotangents' gradients and its columns the unit directions' tangents.
#[test]
fn an_answers_derivative_is_the_closed_forms() {
    let d = derivatives(&sliding());
    assert_eq!(d.regimes(1e-9), [Regime::Sliding.name()]);
    let t = d.jvp(&[("q", &[1.0, 0.0, 0.0])]).unwrap();
    let (dr, du) = (entry(&t, "r"), entry(&t, "u"));
    let want = [-1.0, 0.5, 0.0];
    assert!((0..3).all(|i| (dr[i] - want[i]).abs() <= 1e-12), "{dr:?}");
    // The contact keeps touching: its normal velocity stays zero.
    assert!(du[0].abs() <= 1e-12, "{du:?}");
    // d r_t / d mu = -r_n = -1.
    let jac = d.jacobian("mu", "r").unwrap();
    assert_eq!(jac.len(), 3);
    assert!((jac[1] + 1.0).abs() <= 1e-12, "{jac:?}");
    let jq = d.jacobian("q", "u").unwrap();
    for k in 0..3 {
        let mut e = [0.0; 3];
        e[k] = 1.0;
        let t = d.jvp(&[("q", &e)]).unwrap();
        let col = entry(&t, "u");
        assert!((0..3).all(|i| (jq[i * 3 + k] - col[i]).abs() <= 1e-12));
    }
    assert_eq!(d.jacobian("W", "r").unwrap().len(), 27);
}

/// A generalized problem answers for `f`, `w`, `M`, `H`, `mu` and the output `v`; its
/// Jacobian's columns are forward mode's tangents, and `q` is not one of its fields.
#[test]
fn a_generalized_problems_fields_are_its_own() {
    let g = GeneralizedProblem::from_local(sliding().local().unwrap()).unwrap();
    let step = StepProblem::from_generalized(g);
    let d = derivatives(&step);
    assert_eq!(d.fields(), GENERALIZED_FIELDS);
    assert_eq!(d.shape("H").unwrap().len(), 2);
    let t = d.jvp(&[("w", &[1.0, 0.0, 0.0])]).unwrap();
    let dv = entry(&t, "v");
    assert_eq!(dv.len(), d.output_len("v").unwrap());
    let jac = d.jacobian("w", "v").unwrap();
    assert!((0..dv.len()).all(|i| (jac[i * 3] - dv[i]).abs() <= 1e-12));
    assert!(dv.iter().any(|x| x.abs() > 0.1), "{dv:?}");
    let g = d.vjp(&[("v", &vec![1.0; dv.len()])]).unwrap();
    assert_eq!(entry(&g, "f").len(), dv.len());
    let e = d.jvp(&[("q", &[1.0, 0.0, 0.0])]).unwrap_err();
    assert!(e.to_string().contains("no field `q`"), "{e}");
}

/// SAP's answer is differentiated through its own optimality at the unknowns its solve ended
/// at: a sliding contact on a generalized problem answers for every field, its impulses
/// unique, and reverse mode is the adjoint of forward mode.
#[test]
fn saps_answer_is_differentiated_at_its_own_unknowns() {
    let g = GeneralizedProblem::from_local(sliding().local().unwrap()).unwrap();
    let step = StepProblem::from_generalized(g);
    let (s, options) = solved(&step, "sap", "newton-merit");
    let d = Derivatives::new(&step, &s, &options, 1e-12).unwrap();
    assert!(matches!(d, Derivatives::Sap(_)) && !d.non_unique());
    assert_eq!(d.regimes(0.0).len(), 1);
    let (df, rb) = ([0.3, -0.2, 0.1], [1.0, 0.5, -0.4]);
    let t = d.jvp(&[("f", &df)]).unwrap();
    let g = d.vjp(&[("r", &rb)]).unwrap();
    let left: f64 = rb.iter().zip(entry(&t, "r")).map(|(a, b)| a * b).sum();
    let right: f64 = df.iter().zip(entry(&g, "f")).map(|(a, b)| a * b).sum();
    assert!(left.abs() > 1e-6);
    assert!(
        (left - right).abs() <= 1e-12 * left.abs().max(1.0),
        "{left} {right}"
    );
}

/// The friction pyramid's answer (the min-map's Newton) is differentiated through the min-map:
/// on the sliding contact, which slides along a face of the pyramid as of the cone, its
/// impulses' derivative along `mu` is the face's, `dr_t1/dmu = -r_n`.
#[test]
fn the_pyramids_answer_is_differentiated_through_the_min_map() {
    let (s, options) = solved(&sliding(), "min-map", "newton");
    let d = Derivatives::new(&sliding(), &s, &options, 1e-12).unwrap();
    assert_eq!(d.regimes(1e-9), vec!["sliding"]);
    let t = d.jvp(&[("mu", &[1.0])]).unwrap();
    let r = entry(&t, "r");
    assert!((r[1] + s.r[0]).abs() <= 1e-9, "{r:?} {:?}", s.r);
}

/// The FB MLCP's answer (Mylapilli and Jain's pyramid, four directions along the axes) is
/// differentiated through its own equations at its unknowns: on the sliding contact, along a
/// face of its pyramid, `dr_t1/dmu = -r_n`; with its directions turned by each contact's slip
/// it is refused.
#[test]
fn the_fb_mlcps_answer_is_differentiated_through_its_own_equations() {
    let (s, options) = solved(&sliding(), "mlcp-fb", "plm");
    let d = Derivatives::new(&sliding(), &s, &options, 1e-10).unwrap();
    assert_eq!(d.regimes(1e-9), vec!["sliding"]);
    let t = d.jvp(&[("mu", &[1.0])]).unwrap();
    let r = entry(&t, "r");
    assert!((r[1] + s.r[0]).abs() <= 1e-8, "{r:?} {:?}", s.r);
    let mut turned = options.clone();
    turned["align_with_slip"] = serde_json::json!(true);
    let e = Derivatives::new(&sliding(), &s, &turned, 1e-10).unwrap_err();
    assert!(e.to_string().contains("another model"), "{e}");
}

/// The bisection-SOR's answer (maximum dissipation) is differentiated through its fixed
/// point's conditions: on the uncoupled sliding contact, where the model is Coulomb's, the
/// impulses move along `mu` as the natural map's do, `dr_t1/dmu = -r_n`.
#[test]
fn the_bisections_answer_is_differentiated_through_maximum_dissipation() {
    let (s, options) = solved(&sliding(), "coulomb", "bisection-sor");
    assert_eq!(s.model, Model::MaximumDissipation);
    let d = Derivatives::new(&sliding(), &s, &options, 1e-12).unwrap();
    assert_eq!(d.regimes(1e-9), vec!["sliding"]);
    let t = d.jvp(&[("mu", &[1.0])]).unwrap();
    let r = entry(&t, "r");
    assert!((r[1] + s.r[0]).abs() <= 1e-9, "{r:?} {:?}", s.r);
}

/// On a contact-space problem SAP's derivative goes through the generalized form it solves
/// (`A = W^-1`, `J = I`, `v* = q`): along `q` it is the generalized derivative along
/// `f = A q`'s change `A dq`, and it names the contact-space fields.
#[test]
fn saps_contact_space_derivative_is_its_generalized_forms() {
    let local = sliding();
    let (s, options) = solved(&local, "sap", "newton-merit");
    let d = Derivatives::new(&local, &s, &options, 1e-12).unwrap();
    assert!(matches!(d, Derivatives::SapLocal(_)));
    assert_eq!(d.fields(), &LOCAL_FIELDS);
    let g = GeneralizedProblem::from_local(local.local().unwrap()).unwrap();
    let step = StepProblem::from_generalized(g.clone());
    let (sg, options) = solved(&step, "sap", "newton-merit");
    let dg = Derivatives::new(&step, &sg, &options, 1e-12).unwrap();
    let dq = [0.3, -0.2, 0.1];
    let a = contactlab_core::Matrix::Sparse(g.a.clone()).to_dense();
    let df: Vec<f64> = (0..3)
        .map(|i| (0..3).map(|j| a[(i, j)] * dq[j]).sum())
        .collect();
    let (t, tg) = (
        d.jvp(&[("q", &dq)]).unwrap(),
        dg.jvp(&[("f", &df)]).unwrap(),
    );
    for out in ["r", "u"] {
        let gap = entry(&t, out)
            .iter()
            .zip(entry(&tg, out))
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(gap <= 1e-9, "{out}: {gap}");
    }
    assert!(entry(&t, "r").iter().any(|x| x.abs() > 1e-6));
}

/// Another model, a point that is not an answer (a natural map's answer taken for SAP's: it
/// has no SAP options), an unknown field or output and a cotangent of the wrong size are
/// refused with the reason.
#[test]
fn bad_requests_are_refused_with_the_reason() {
    let (good, options) = solved(&sliding(), "natural-map", "gauss-newton");
    let as_model = |model: Model| LocalSolve {
        model,
        ..good.clone()
    };
    let e =
        Derivatives::new(&sliding(), &as_model(Model::Unspecified), &options, 1e-12).unwrap_err();
    assert!(e.to_string().contains("Coulomb cone"), "{e}");
    let turned = serde_json::json!({ "theta0_deg": 45.0 });
    let e = Derivatives::new(
        &sliding(),
        &as_model(Model::FrictionPyramid),
        &turned,
        1e-12,
    )
    .unwrap_err();
    assert!(e.to_string().contains("another model"), "{e}");
    let e =
        Derivatives::new(&sliding(), &as_model(Model::Regularized), &options, 1e-12).unwrap_err();
    assert!(e.to_string().contains("option `beta` is missing"), "{e}");
    let far = LocalSolve {
        r: vec![0.0; 3],
        ..good.clone()
    };
    let e = Derivatives::new(&sliding(), &far, &options, 1e-12).unwrap_err();
    assert!(e.to_string().contains("converged solve"), "{e}");
    let d = Derivatives::new(&sliding(), &good, &options, 1e-12).unwrap();
    let e = d.jvp(&[("f_max", &[1.0])]).unwrap_err();
    assert!(
        e.to_string().contains("parameter of the friction loss"),
        "{e}"
    );
    let e = d.jvp(&[("M", &[1.0])]).unwrap_err();
    assert!(
        e.to_string()
            .contains("a contact-space problem has no field `M`"),
        "{e}"
    );
    assert!(d
        .vjp(&[("v", &[1.0])])
        .unwrap_err()
        .to_string()
        .contains("no output `v`"));
    let e = d.vjp(&[("r", &[1.0])]).unwrap_err();
    assert!(e.to_string().contains("has 1 entries, the answer 3"), "{e}");
    assert!(d.jacobian("f", "r").is_err());
}
