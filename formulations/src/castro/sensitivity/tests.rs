use super::*;
use contactlab_core::drivers::NewtonMerit;
use contactlab_core::generalized::{RowModels, StepContext};
use contactlab_core::{
    Constraint, Constraints, Driver, GlobalProblem, LocalProblem, Problem, SolveOptions, Status,
};
use faer::linalg::solvers::Solve;
use faer::sparse::{SparseColMat, Triplet};
use faer::Side;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PARAMS: RegularizationParams = RegularizationParams {
    beta: 1.0,
    sigma: 1e-3,
};

/// `nv` in 10..=15 velocities on one tree, 2 to 4 rigid Coulomb contacts, `M` symmetric
/// positive definite and `H` dense: an FCLib-like problem, near-rigid (no time step), whose
/// offsets `w` push some contacts in and pull others apart.
fn random_global(seed: u64) -> GeneralizedProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (nv, nc) = (rng.random_range(10..=15), rng.random_range(2..=4));
    let blocks = (0..nc)
        .map(|_| Constraint::coulomb(rng.random_range(0.2..1.2)))
        .collect();
    let g = crate::fixtures::global_of(nv, blocks, &mut rng, |r, rng| match r % 3 {
        0 => rng.random_range(-1.0..0.4),
        _ => rng.random_range(-0.3..0.3),
    });
    GeneralizedProblem::from_global(&g).unwrap()
}

/// A compliant step as a simulation makes one: three trees of four velocities, four contacts
/// each between one or two trees, with a time step, signed distances, stiffnesses and
/// dissipation (eq. 29's compliant and near-rigid terms both occur): SAP's own test problems.
fn compliant(seed: u64) -> GeneralizedProblem {
    crate::castro::tests::random_problem(seed, 3, 4, 4)
}

/// A MuJoCo step exported as an FCLib global problem (ten balls in a box, eleven contacts).
fn mujoco_step() -> GeneralizedProblem {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/mujoco/global/balls_in_box_n10_mu0.5_seed110_step0150_nc11.json");
    let Problem::Global(g) = contactlab_core::io::read_problem(&path).unwrap() else {
        panic!("a global problem")
    };
    GeneralizedProblem::from_global(&g).unwrap()
}

/// A change of every field, `dM` symmetric and block diagonal by tree (as `M` must stay).
struct Change {
    f: Vec<f64>,
    w: Vec<f64>,
    m: Vec<f64>,
    h: Vec<f64>,
    mu: Vec<f64>,
    /// Per row, the position error's change (on the normal rows, where the problem has a time
    /// step; zero otherwise).
    phi0: Vec<f64>,
    /// Per contact, the stiffness's and the dissipation time scale's changes, and the time
    /// step's (zero unless a test sets them).
    stiffness: Vec<f64>,
    tau_d: Vec<f64>,
    dt: f64,
}

fn change(p: &GeneralizedProblem, rng: &mut ChaCha8Rng) -> Change {
    let (nv, m, nc) = (p.num_dofs(), p.num_rows(), p.num_contacts());
    let mut r = |n: usize, s: f64| -> Vec<f64> {
        (0..n).map(|_| s * rng.random_range(-1.0..1.0)).collect()
    };
    let (f, w, h, mu) = (r(nv, 1.0), r(m, 0.3), r(nv * m, 0.3), r(nc, 0.2));
    let mut dm = r(nv * nv, 0.1);
    for i in 0..nv {
        for j in 0..nv {
            if p.tree_of[i] != p.tree_of[j] {
                dm[i * nv + j] = 0.0;
            } else if j < i {
                dm[i * nv + j] = dm[j * nv + i];
            }
        }
    }
    let phi0 = (0..m)
        .map(|k| match (k % 3, p.dt) {
            (0, Some(_)) => 1e-3 * rng.random_range(-1.0..1.0),
            _ => 0.0,
        })
        .collect();
    Change {
        f,
        w,
        m: dm,
        h,
        mu,
        phi0,
        stiffness: vec![0.0; nc],
        tau_d: vec![0.0; nc],
        dt: 0.0,
    }
}

fn along(d: &Change) -> GeneralizedDirection<'_> {
    GeneralizedDirection {
        f: Some(&d.f),
        w: Some(&d.w),
        m: Some(&d.m),
        h: Some(&d.h),
        mu: Some(&d.mu),
        phi0: Some(&d.phi0),
        stiffness: Some(&d.stiffness),
        tau_d: Some(&d.tau_d),
        dt: Some(d.dt),
    }
}

/// `p` moved by `t` along `d`: `M + t dM`, `J + t dH'`, `v* = (M + t dM)^-1 (M v* + t df)`,
/// `b + t dw`, `mu + t dmu`, `phi0 + t dphi0`, the stiffnesses, dissipation time scales and
/// the time step moved likewise; the trees kept.
fn moved(p: &GeneralizedProblem, d: &Change, t: f64) -> GeneralizedProblem {
    let (nv, m) = (p.num_dofs(), p.num_rows());
    let a = Matrix::Sparse(p.a.clone()).to_dense();
    let j = Matrix::Sparse(p.j.clone()).to_dense();
    let a1 = Mat::from_fn(nv, nv, |r, c| a[(r, c)] + t * d.m[r * nv + c]);
    let f = &a * Col::from_fn(nv, |k| p.v_star[k]) + Col::from_fn(nv, |k| t * d.f[k]);
    let v_star = a1.llt(Side::Lower).unwrap().solve(&f);
    let mut ta = Vec::new();
    for r in 0..nv {
        for c in 0..nv {
            if p.tree_of[r] == p.tree_of[c] && a1[(r, c)] != 0.0 {
                ta.push(Triplet::new(r, c, a1[(r, c)]));
            }
        }
    }
    let mut tj = Vec::new();
    for r in 0..m {
        for c in 0..nv {
            let v = j[(r, c)] + t * d.h[c * m + r];
            if v != 0.0 {
                tj.push(Triplet::new(r, c, v));
            }
        }
    }
    let mut contacts = p.contacts.clone();
    for (i, (c, dmu)) in contacts.iter_mut().zip(&d.mu).enumerate() {
        c.mu += t * dmu;
        c.phi0 += t * d.phi0[3 * i];
        c.stiffness += t * d.stiffness[i];
        c.dissipation += t * d.tau_d[i];
    }
    GeneralizedProblem::with_rows(
        SparseColMat::try_new_from_triplets(nv, nv, &ta).unwrap(),
        SparseColMat::try_new_from_triplets(m, nv, &tj).unwrap(),
        to_vec(&v_star),
        p.b.iter().zip(&d.w).map(|(b, dw)| b + t * dw).collect(),
        RowModels::coulomb(contacts),
        StepContext {
            dt: p.dt.map(|dt| dt + t * d.dt),
            v0: None,
            tree_of: Some(p.tree_of.clone()),
        },
    )
    .unwrap()
}

/// SAP's answer with `R` and `v^` frozen at `reg`, by its Newton driver from `start` to
/// eq. 26 at `1e-14` relative: `(r, u, v)` concatenated, and each contact's region.
fn solve(
    p: &GeneralizedProblem,
    reg: &Regularization,
    start: &[f64],
) -> (Vec<f64>, Vec<SapRegion>) {
    let cost = frozen_cost(p, reg);
    let opts = SolveOptions {
        stop_tol: 0.0,
        rel_tol: 1e-14,
        max_iter: 200,
        ..SolveOptions::default()
    };
    let s = NewtonMerit::default()
        .solve(&cost, cost.restrict(start), &opts)
        .unwrap();
    assert!(
        matches!(s.status, Status::Converged | Status::Stagnated),
        "{:?}",
        s.status
    );
    let mut out = cost.impulses(&s.x);
    out.extend(cost.contact_velocities(&s.x));
    out.extend(cost.full_velocities(&s.x));
    (out, cost.regions(&s.x))
}

/// [`solve`] with `R` frozen at `reg` and the bias `v^` of `p`'s own position errors (the
/// derivative holds `R`, not `v^`, which `phi0` moves).
fn solve_biased(
    p: &GeneralizedProblem,
    reg: &Regularization,
    start: &[f64],
) -> (Vec<f64>, Vec<SapRegion>) {
    let own = regularization(p, &PARAMS).unwrap();
    let reg = Regularization {
        v_hat: own.v_hat,
        ..reg.clone()
    };
    solve(p, &reg, start)
}

/// The base answer, its regularisation and its derivatives.
fn factored(p: &GeneralizedProblem) -> (Vec<f64>, Regularization, SapSensitivity) {
    let reg = regularization(p, &PARAMS).unwrap();
    let (x, _) = solve(p, &reg, &p.v_star);
    let v = x[x.len() - p.num_dofs()..].to_vec();
    let s = SapSensitivity::new(p, &v, &PARAMS, 1e-10).unwrap();
    (v, reg, s)
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The problems the tests run on: random near-rigid ones, compliant steps, a MuJoCo step.
fn problems() -> Vec<(String, GeneralizedProblem)> {
    let mut out: Vec<_> = (0..10)
        .map(|s| (format!("random {s}"), random_global(s)))
        .collect();
    out.extend((0..4).map(|s| (format!("compliant {s}"), compliant(20 + s))));
    out.push(("mujoco balls nc11".into(), mujoco_step()));
    out
}

/// Forward mode along `f`, `w`, `M`, `H` and `mu` at once agrees with central differences of
/// SAP's whole solve (step `1e-6`, `R` and `v^` frozen at the base problem's) in `r`, `u` and
/// `v`, to `1e-7` relative (measured: at most about `2e-8`); a problem whose regions change
/// within the step is skipped. Recomputing `R` on the perturbed problems instead would move the
/// differences by about `1e-3` relative: the freeze is a choice the test must share.
#[test]
fn forward_mode_matches_central_differences_of_saps_solve() {
    let h = 1e-6;
    let (mut compared, mut worst, mut compliant_contacts) = (0, 0.0f64, 0);
    let mut seen = std::collections::BTreeSet::new();
    for (k, (name, p)) in problems().into_iter().enumerate() {
        let (v, reg, s) = factored(&p);
        compliant_contacts += reg.near_rigid.iter().filter(|n| !**n).count();
        let d = change(&p, &mut ChaCha8Rng::seed_from_u64(300 + k as u64));
        let t = s.jvp(&along(&d)).unwrap();
        let got: Vec<f64> = t.r.iter().chain(&t.u).chain(&t.v).copied().collect();
        let (plus, rp) = solve_biased(&moved(&p, &d, h), &reg, &v);
        let (minus, rm) = solve_biased(&moved(&p, &d, -h), &reg, &v);
        if rp != s.regions() || rm != s.regions() {
            eprintln!("{name}: a region changes within the step, skipped");
            continue;
        }
        let fd: Vec<f64> = plus
            .iter()
            .zip(&minus)
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect();
        let gap: Vec<f64> = got.iter().zip(&fd).map(|(a, b)| a - b).collect();
        let rel = max_abs(&gap) / max_abs(&fd).max(1e-3);
        eprintln!("{name}: regions {:?}, relative gap {rel:.2e}", s.regions());
        assert!(rel <= 1e-7, "{name}: {got:?} against {fd:?}");
        worst = worst.max(rel);
        seen.extend(s.regions().iter().map(|r| format!("{r:?}")));
        compared += 1;
    }
    eprintln!("worst relative gap {worst:.2e} over {compared} problems");
    assert!(compared >= 12, "only {compared} problems compared");
    assert_eq!(seen.len(), 3, "regions seen: {seen:?}");
    assert!(
        compliant_contacts > 0,
        "no contact in eq. 29's compliant regime"
    );
}

/// A change of the compliance data alone: each contact's stiffness and dissipation time scale
/// by up to a fifth of their own size, the time step by up to a tenth (none without one).
fn compliance_change(p: &GeneralizedProblem, rng: &mut ChaCha8Rng) -> Change {
    let mut d = change(p, rng);
    let zero = |v: &mut Vec<f64>| v.iter_mut().for_each(|x| *x = 0.0);
    for v in [
        &mut d.f,
        &mut d.w,
        &mut d.m,
        &mut d.h,
        &mut d.mu,
        &mut d.phi0,
    ] {
        zero(v);
    }
    for (i, c) in p.contacts.iter().enumerate() {
        if c.stiffness.is_finite() {
            d.stiffness[i] = 0.2 * c.stiffness * rng.random_range(-1.0..1.0);
        }
        d.tau_d[i] = 0.2 * c.dissipation.max(1e-3) * rng.random_range(-1.0..1.0);
    }
    d.dt =
        p.dt.map_or(0.0, |dt| 0.1 * dt * rng.random_range(-1.0..1.0));
    d
}

/// Along the contacts' stiffness, dissipation time scale and the time step, the derivative is
/// the whole pipeline's: forward mode agrees with central differences of SAP's solve with eq.
/// 29's `R` and the bias recomputed on each moved problem (they do not move `w_i`), to `1e-6`
/// relative (measured: at most about `4e-8`), on steps whose contacts are compliant (eq. 29's
/// compliant term winning) and near-rigid, sliding and sticking; a step whose regions or eq.
/// 29's winning term change within the step is skipped. The step `1e-4` (of directions a fifth
/// of each datum): a sticking contact's tangential impulse `-u_t / R_t` magnifies the solve's
/// rounding by `1 / R_t` (`R_t = sigma w`), which smaller steps' differences carry.
#[test]
fn the_compliance_derivative_is_the_whole_solves() {
    let h = 1e-4;
    let (mut compared, mut compliant_seen) = (0, 0);
    for seed in 0..8 {
        let p = compliant(40 + seed);
        let (v, reg, s) = factored(&p);
        let d = compliance_change(&p, &mut ChaCha8Rng::seed_from_u64(500 + seed));
        let t = s.jvp(&along(&d)).unwrap();
        let got: Vec<f64> = t.r.iter().chain(&t.u).chain(&t.v).copied().collect();
        let end = |k: f64| {
            let q = moved(&p, &d, k);
            let own = regularization(&q, &PARAMS).unwrap();
            let same = own.near_rigid == reg.near_rigid;
            let (x, regions) = solve(&q, &own, &v);
            (x, same && regions == s.regions())
        };
        let ((plus, a), (minus, b)) = (end(h), end(-h));
        if !(a && b) {
            continue;
        }
        let fd: Vec<f64> = plus
            .iter()
            .zip(&minus)
            .map(|(x, y)| (x - y) / (2.0 * h))
            .collect();
        let gap: Vec<f64> = got.iter().zip(&fd).map(|(x, y)| x - y).collect();
        let rel = max_abs(&gap) / max_abs(&fd).max(1e-3);
        assert!(rel <= 1e-6, "seed {seed}: relative gap {rel:e}");
        assert!(max_abs(&fd) > 1e-6, "seed {seed}: the data moved nothing");
        compliant_seen += reg.near_rigid.iter().filter(|n| !**n).count();
        compared += 1;
    }
    assert!(compared >= 4, "only {compared} steps compared");
    assert!(compliant_seen > 0, "no compliant contact compared");
}

/// `<r̄, dr> + <ū, du> + <v̄, dv> = <f̄, df> + <w̄, dw> + <M̄, dM> + <H̄, dH> + <mū, dmu>`
/// `+ <phi0̄, dphi0> + <k̄, dk> + <tau_d̄, dtau_d> + dt̄ ddt`.
#[test]
fn reverse_mode_is_the_adjoint_of_forward_mode() {
    let mut worst = 0.0f64;
    for (k, (name, p)) in problems().into_iter().enumerate() {
        let (_, _, s) = factored(&p);
        let mut rng = ChaCha8Rng::seed_from_u64(400 + k as u64);
        let mut d = change(&p, &mut rng);
        let compliance = compliance_change(&p, &mut rng);
        (d.stiffness, d.tau_d, d.dt) = (compliance.stiffness, compliance.tau_d, compliance.dt);
        let (nv, m) = (p.num_dofs(), p.num_rows());
        let mut cot =
            |n: usize| -> Vec<f64> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (rb, ub, vb) = (cot(m), cot(m), cot(nv));
        let t = s.jvp(&along(&d)).unwrap();
        let g = s.vjp(&rb, &ub, &vb).unwrap();
        let left = dot(&rb, &t.r) + dot(&ub, &t.u) + dot(&vb, &t.v);
        let right = dot(&g.f, &d.f)
            + dot(&g.w, &d.w)
            + dot(&g.m, &d.m)
            + dot(&g.h, &d.h)
            + dot(&g.mu, &d.mu)
            + dot(&g.phi0, &d.phi0)
            + dot(&g.stiffness, &d.stiffness)
            + dot(&g.tau_d, &d.tau_d)
            + g.dt * d.dt;
        let rel = (left - right).abs() / left.abs().max(1.0);
        worst = worst.max(rel);
        assert!(rel <= 1e-10, "{name}: {left} {right}");
    }
    eprintln!("worst relative adjoint gap {worst:.2e}");
}

/// `dgamma/dmu` of the sliding piece agrees with central differences of the projection in `mu`
/// (the other regions' pieces do not depend on `mu`).
#[test]
fn the_projections_mu_derivative_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut checked = 0;
    for _ in 0..200 {
        let c = ContactRegularization {
            mu: rng.random_range(0.05..2.0),
            rn: 10f64.powf(rng.random_range(-3.0..1.0)),
            rt: 10f64.powf(rng.random_range(-4.0..1.0)),
        };
        let y = Vector3::new(
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
            rng.random_range(-3.0..3.0),
        );
        let h = 1e-6;
        let at = |mu: f64| ContactRegularization { mu, ..c }.project(y);
        let region = c.region(y);
        if at(c.mu + h).region != region || at(c.mu - h).region != region {
            continue;
        }
        let fd = (at(c.mu + h).gamma - at(c.mu - h).gamma) / (2.0 * h);
        let got = dgamma_dmu(&c, y, region);
        assert!(
            (got - fd).amax() <= 1e-7 * (1.0 + fd.amax()),
            "{region:?}: {got} against {fd}"
        );
        checked += usize::from(region == SapRegion::Sliding);
    }
    assert!(checked >= 50, "only {checked} sliding points");
}

/// A point that is not SAP's answer is refused: its derivative means nothing.
#[test]
fn a_point_that_is_not_the_optimum_is_refused() {
    let p = random_global(0);
    let (mut v, _, _) = factored(&p);
    v[0] += 1e-3;
    let e = SapSensitivity::new(&p, &v, &PARAMS, 1e-10)
        .unwrap_err()
        .to_string();
    assert!(e.contains("differentiate a converged solve"), "{e}");
    assert!(e.contains("eq. 26"), "{e}");
}

/// Answers, directions and cotangents of the wrong size name the field.
#[test]
fn wrong_sizes_are_refused_with_the_field() {
    let p = random_global(0);
    let (v, _, s) = factored(&p);
    let (nv, m) = (p.num_dofs(), p.num_rows());
    let e = SapSensitivity::new(&p, &v[1..], &PARAMS, 1e-10).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("`v` has {} entries", nv - 1)),
        "{e}"
    );
    let e = s
        .jvp(&GeneralizedDirection {
            h: Some(&[0.0; 3]),
            ..GeneralizedDirection::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("`dH` has 3 entries"), "{e}");
    let e = s
        .jvp(&GeneralizedDirection {
            mu: Some(&[0.0; 1]),
            ..GeneralizedDirection::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("`dmu` has 1 entries"), "{e}");
    let e = s.vjp(&vec![0.0; m], &vec![0.0; m], &[0.0; 2]).unwrap_err();
    assert!(
        e.to_string().contains(&format!(
            "`v_bar` has 2 entries, the problem {nv} velocities"
        )),
        "{e}"
    );
}

/// A problem with a constraint other than a Coulomb contact (SAP's dense block path) is
/// refused by kind.
#[test]
fn other_constraint_kinds_are_refused_by_name() {
    let blocks = vec![Constraint::coulomb(0.5), Constraint::Limit];
    let (nv, m) = (5, 4);
    let eye: Vec<f64> = (0..nv * nv)
        .map(|k| if k / nv == k % nv { 1.0 } else { 0.0 })
        .collect();
    let h: Vec<f64> = (0..nv * m).map(|k| ((k * 7) % 5) as f64 - 2.0).collect();
    let g = GlobalProblem::with_constraints(
        Matrix::from_row_major("M", nv, nv, &eye).unwrap(),
        Matrix::from_row_major("H", nv, m, &h).unwrap(),
        vec![0.1; nv],
        vec![0.0; m],
        Constraints::new(blocks).unwrap(),
    )
    .unwrap();
    let p = GeneralizedProblem::from_global(&g).unwrap();
    let e = SapSensitivity::new(&p, &p.v_star, &PARAMS, 1e-10)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("SAP's sensitivity") && e.contains("limit"),
        "{e}"
    );
}

/// `y`'s distance to its regions' walls: zero on the friction cone's wall, on the polar wall
/// and at the apex; inside the cone on its axis, `mu / sqrt(1 + mu^2)` per unit of `y_n` (the
/// nearer wall); a region boundary within the margin flags the contact.
#[test]
fn a_contact_on_a_region_boundary_is_at_distance_zero() {
    let c = ContactRegularization {
        mu: 0.5,
        rn: 1.0,
        rt: 4.0,
    };
    let on_cone = Vector3::new(2.0, 1.0, 0.0);
    assert!(boundary_distance(&c, on_cone).abs() < 1e-15);
    assert_eq!(boundary_distance(&c, Vector3::zeros()), 0.0);
    let polar = Vector3::new(-c.mu_hat(), 0.0, 1.0);
    assert!(boundary_distance(&c, polar).abs() < 1e-15);
    let axis = boundary_distance(&c, Vector3::new(1.0, 0.0, 0.0));
    assert!((axis - 0.5 / 1.25f64.sqrt()).abs() < 1e-15, "{axis}");
    // A sliding y between the walls, far from both.
    let between = Vector3::new(0.0, 1.0, 0.0);
    assert_eq!(c.region(between), SapRegion::Sliding);
    assert!(boundary_distance(&c, between) > 0.3);
}

/// SAP's own factor on the touched trees and `M`'s on the others solve with `K = M + H G H'`
/// formed densely, to rounding: on trees small enough for the tree-block factor, on a tree too
/// large for it (the sparse factor), and where a tree no contact touches keeps `K = M`.
#[test]
fn the_hessian_solve_is_k_inverse() {
    let mut cases = problems();
    cases.push((
        "a tree of 70 velocities".into(),
        crate::castro::tests::random_problem(5, 2, 70, 3),
    ));
    let untouched = {
        let mut p = compliant(30);
        // A fourth tree of two velocities that no contact touches.
        let nv = p.num_dofs();
        let mut a = triplets(&p.a);
        a.extend((0..2).map(|k| Triplet::new(nv + k, nv + k, 2.0 + k as f64)));
        p.a = SparseColMat::try_new_from_triplets(nv + 2, nv + 2, &a).unwrap();
        p.j = SparseColMat::try_new_from_triplets(p.j.nrows(), nv + 2, &triplets(&p.j)).unwrap();
        p.v_star.extend([0.1, -0.2]);
        p.tree_of.extend([p.tree_of.iter().max().unwrap() + 1; 2]);
        p
    };
    cases.push(("an untouched tree".into(), untouched));
    for (name, p) in cases {
        let (_, _, s) = factored(&p);
        let nv = p.num_dofs();
        let mut k = p.a.to_dense()
            + &s.h
                * Mat::from_fn(s.h.ncols(), nv, |r, c| {
                    let (i, a) = (r / 3, r % 3);
                    (0..3)
                        .map(|b| s.g[i][(a, b)] * s.h[(c, 3 * i + b)])
                        .sum::<f64>()
                });
        k = Mat::from_fn(nv, nv, |r, c| 0.5 * (k[(r, c)] + k[(c, r)]));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let x = Col::from_fn(nv, |_| rng.random_range(-1.0..1.0));
        let got = s.k_solve(x.clone());
        let back = &k * &got;
        let gap = (0..nv).fold(0.0f64, |m, i| m.max((back[i] - x[i]).abs()));
        assert!(gap <= 1e-9, "{name}: |K K^-1 x - x| = {gap}");
    }
}

/// A sparse matrix's stored entries.
fn triplets(m: &SparseColMat<usize, f64>) -> Vec<Triplet<usize, usize, f64>> {
    let (cols, rows, vals) = (m.symbolic().col_ptr(), m.symbolic().row_idx(), m.val());
    (0..m.ncols())
        .flat_map(|c| (cols[c]..cols[c + 1]).map(move |k| Triplet::new(rows[k], c, vals[k])))
        .collect()
}

/// On a contact-space problem (SAP's generalized form `A = W^-1`, `J = I`, `v* = q`), forward
/// mode along `q`, `W` and `mu` at once agrees with central differences of SAP's solve of the
/// moved problems (`R` frozen at the base problem's), and reverse mode is its adjoint.
#[test]
fn on_a_contact_space_problem_the_chain_through_w_inverse_holds() {
    use super::local::SapLocalSensitivity;
    use crate::natural_map::sensitivity::LocalDirection;
    let h = 1e-6;
    let mut compared = 0;
    for seed in 0..6 {
        let local = random_local(seed);
        let n = local.q.len();
        let w = local.w.to_dense();
        let base = GeneralizedProblem::from_local(&local).unwrap();
        let reg = regularization(&base, &PARAMS).unwrap();
        let (x0, regions) = solve(&base, &reg, &base.v_star);
        let s = SapLocalSensitivity::at_unknowns(&local, &x0[2 * n..], &PARAMS, 1e-10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(600 + seed);
        let dq: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let e = Mat::from_fn(n, n, |_, _| rng.random_range(-0.1..0.1));
        let dw_m = &e * &w + &w * e.transpose();
        let dw: Vec<f64> = (0..n * n).map(|k| dw_m[(k / n, k % n)]).collect();
        let dmu: Vec<f64> = (0..n / 3).map(|_| rng.random_range(-0.1..0.1)).collect();
        let moved = |t: f64| {
            let w_t = Mat::from_fn(n, n, |i, j| w[(i, j)] + t * dw_m[(i, j)]);
            let q_t = (0..n).map(|i| local.q[i] + t * dq[i]).collect();
            let mu_t = local
                .mu()
                .iter()
                .zip(&dmu)
                .map(|(m, d)| m + t * d)
                .collect();
            let l = LocalProblem::new(Matrix::Dense(w_t), q_t, mu_t).unwrap();
            solve(
                &GeneralizedProblem::from_local(&l).unwrap(),
                &reg,
                &x0[2 * n..],
            )
        };
        let ((plus, rp), (minus, rm)) = (moved(h), moved(-h));
        if rp != regions || rm != regions {
            continue;
        }
        let d = LocalDirection {
            q: Some(&dq),
            w: Some(&dw),
            mu: Some(&dmu),
        };
        let (dr, du) = s.jvp(&d).unwrap();
        let got: Vec<f64> = dr.iter().chain(&du).copied().collect();
        let fd: Vec<f64> = (0..2 * n)
            .map(|k| (plus[k] - minus[k]) / (2.0 * h))
            .collect();
        let gap = got
            .iter()
            .zip(&fd)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(gap <= 1e-6 * max_abs(&fd).max(1.0), "seed {seed}: {gap:e}");
        let (rb, ub): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|_| (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
            .unzip();
        let g = s.vjp(&rb, &ub).unwrap();
        let left = dot(&rb, &dr) + dot(&ub, &du);
        let right = dot(&g.q, &dq) + dot(&g.w, &dw) + dot(&g.mu, &dmu);
        assert!(
            (left - right).abs() <= 1e-10 * left.abs().max(1.0),
            "seed {seed}: {left} {right}"
        );
        compared += 1;
    }
    assert!(compared >= 4, "only {compared} problems kept their regions");
}

/// Three or four rigid Coulomb contacts on a positive definite `W` (SAP's contact-space form
/// needs one), offsets pushing some contacts in and pulling others apart.
fn random_local(seed: u64) -> LocalProblem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 3 * rng.random_range(3..=4);
    let l = Mat::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    let mut w = &l * l.transpose() * (1.0 / n as f64);
    (0..n).for_each(|i| w[(i, i)] += 0.3);
    let q = (0..n)
        .map(|r| match r % 3 {
            0 => rng.random_range(-1.0..0.4),
            _ => rng.random_range(-0.3..0.3),
        })
        .collect();
    let mu = (0..n / 3).map(|_| rng.random_range(0.2..1.2)).collect();
    LocalProblem::new(Matrix::Dense(w), q, mu).unwrap()
}
