//! Problems of every constraint kind that the formulations' tests share: the random problem of
//! given blocks, and the mixed problem file that the command line and the robustness sweep read.

use contactlab_core::{Constraint, Constraints, GlobalProblem, LocalProblem, Matrix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A random SPD `W = A A' / m + I/5` over the rows of `blocks`, with `q` uniform in `[lo, hi)`
/// per row.
pub(crate) fn problem_of(blocks: Vec<Constraint>, q: (f64, f64), seed: u64) -> LocalProblem {
    let c = Constraints::new(blocks).unwrap();
    let m = c.rows();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a: Vec<f64> = (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect();
    let w: Vec<f64> = (0..m * m)
        .map(|k| {
            let (i, j) = (k / m, k % m);
            let s: f64 = (0..m).map(|l| a[i * m + l] * a[j * m + l]).sum();
            s / m as f64 + if i == j { 0.2 } else { 0.0 }
        })
        .collect();
    let q = (0..m).map(|_| rng.random_range(q.0..q.1)).collect();
    LocalProblem::with_constraints(Matrix::from_row_major("W", m, m, &w).unwrap(), q, c).unwrap()
}

/// A random generalized problem on one tree of `nv` velocities over the rows of `blocks`:
/// `M = L L' / nv + I / 2` (`L` uniform in `[-1, 1]`), `H` dense uniform in `[-1, 1]`, `f`
/// uniform in `[-1, 1]` and row `i`'s offset `w_i = w_of(i, rng)`, all drawn from `rng`.
pub(crate) fn global_of(
    nv: usize,
    blocks: Vec<Constraint>,
    rng: &mut ChaCha8Rng,
    mut w_of: impl FnMut(usize, &mut ChaCha8Rng) -> f64,
) -> GlobalProblem {
    let c = Constraints::new(blocks).unwrap();
    let m = c.rows();
    let l: Vec<f64> = (0..nv * nv).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mass: Vec<f64> = (0..nv * nv)
        .map(|k| {
            let (i, j) = (k / nv, k % nv);
            let s: f64 = (0..nv).map(|p| l[i * nv + p] * l[j * nv + p]).sum();
            s / nv as f64 + if i == j { 0.5 } else { 0.0 }
        })
        .collect();
    let h: Vec<f64> = (0..nv * m).map(|_| rng.random_range(-1.0..1.0)).collect();
    let f = (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect();
    let w = (0..m).map(|i| w_of(i, rng)).collect();
    GlobalProblem::with_constraints(
        Matrix::from_row_major("M", nv, nv, &mass).unwrap(),
        Matrix::from_row_major("H", nv, m, &h).unwrap(),
        f,
        w,
        c,
    )
    .unwrap()
}

/// `data/problems/kinds/every_kind.json`, the mixed problem file the command line and the
/// robustness sweep read.
pub(crate) fn every_kind_file() -> LocalProblem {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/problems/kinds/every_kind.json");
    let contactlab_core::Problem::Local(p) = contactlab_core::io::read_problem(&path).unwrap()
    else {
        panic!("every_kind.json is a local problem")
    };
    p
}

/// `c` with each block's `mu` moved by `t dmu_b` the way the sensitivities document: the tangential
/// coefficients together, in proportion.
pub(crate) fn shifted(c: &Constraints, dmu: &[f64], t: f64) -> Vec<Constraint> {
    c.blocks()
        .iter()
        .zip(dmu)
        .map(|(b, d)| match b {
            Constraint::Contact { mu } if !mu.is_empty() && mu[0] != 0.0 => {
                let mut m = mu.clone();
                let ratio = mu[1] / mu[0];
                m[0] += t * d;
                m[1] += t * d * ratio;
                Constraint::Contact { mu: m }
            }
            other => other.clone(),
        })
        .collect()
}

/// Coulomb contacts, a condim-4 contact, a limit and a friction loss on a random SPD `W`.
pub(crate) fn mixed(seed: u64) -> LocalProblem {
    let blocks = vec![
        Constraint::coulomb(0.5),
        Constraint::coulomb(0.8),
        Constraint::Contact {
            mu: vec![0.9, 0.5, 0.02],
        },
        Constraint::Limit,
        Constraint::FrictionLoss { f_max: 0.3 },
    ];
    problem_of(blocks, (-1.0, 0.5), seed)
}

/// `p` with `q + t dq`, `W + t dW` and `mu + t dmu`.
pub(crate) fn moved(
    p: &LocalProblem,
    (dq, dw, dmu): (&[f64], &[f64], &[f64]),
    t: f64,
) -> LocalProblem {
    let n = p.q.len();
    let w = p.w.to_dense();
    let w: Vec<f64> = (0..n * n).map(|k| w[(k / n, k % n)] + t * dw[k]).collect();
    let q = p.q.iter().zip(dq).map(|(q, d)| q + t * d).collect();
    let c = Constraints::new(shifted(&p.constraints, dmu, t)).unwrap();
    LocalProblem::with_constraints(Matrix::from_row_major("W", n, n, &w).unwrap(), q, c).unwrap()
}

/// A random change of `mu` for [`mixed`]: its three contacts move, the limit and the friction
/// loss have none.
pub(crate) fn mixed_mu_direction(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut d: Vec<f64> = (0..3).map(|_| 0.2 * rng.random_range(-1.0..1.0)).collect();
    d.extend([0.0, 0.0]);
    d
}

/// A random direction `(dq, dW)`, `dW` symmetric.
pub(crate) fn direction(n: usize, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
    let dq = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut dw = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let x = 0.1 * rng.random_range(-1.0..1.0);
            dw[i * n + j] = x;
            dw[j * n + i] = x;
        }
    }
    (dq, dw)
}

/// The [`mixed`] problems of `seeds` that `solve` answers from zero, each with its seed, its
/// rows and its answer.
pub(crate) fn solved_mixed(
    seeds: std::ops::Range<u64>,
    solve: impl Fn(&LocalProblem, &[f64]) -> Option<Vec<f64>>,
) -> impl Iterator<Item = (u64, LocalProblem, usize, Vec<f64>)> {
    seeds.filter_map(move |seed| {
        let p = mixed(seed);
        let n = p.q.len();
        solve(&p, &vec![0.0; n]).map(|r| (seed, p, n, r))
    })
}

/// Central differences of `solve` along `at(t)` with the steps `1e-6` and `1e-7`: `None` where
/// a solve fails or the two disagree by more than `1e-4` relative (a kink inside the step).
pub(crate) fn central<P>(
    at: impl Fn(f64) -> P,
    solve: impl Fn(&P) -> Option<Vec<f64>>,
) -> Option<Vec<f64>> {
    let diff = |h: f64| {
        let (plus, minus) = (solve(&at(h))?, solve(&at(-h))?);
        Some(
            plus.iter()
                .zip(&minus)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect::<Vec<f64>>(),
        )
    };
    let (coarse, fine) = (diff(1e-6)?, diff(1e-7)?);
    let scale = max_abs(&coarse).max(1e-3);
    let smooth = coarse
        .iter()
        .zip(&fine)
        .all(|(a, b)| (a - b).abs() <= 1e-4 * scale);
    smooth.then_some(coarse)
}

/// `|v|_inf`.
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Asserts that `s`'s forward mode along `(dq, dW, dmu)` is within `tol` of the differences
/// `fd` of the impulses (relative to their size, floored at `1e-3`), and that its reverse mode is
/// the adjoint of it to `1e-10` for cotangents drawn from `rng`; `what` names the case.
pub(crate) fn assert_matches_differences(
    s: &crate::natural_map::sensitivity::Sensitivity,
    (dq, dw, dmu): (&[f64], &[f64], &[f64]),
    fd: &[f64],
    tol: f64,
    rng: &mut ChaCha8Rng,
    what: &str,
) {
    let d = crate::natural_map::sensitivity::LocalDirection {
        q: Some(dq),
        w: Some(dw),
        mu: Some(dmu),
    };
    let (dr, du) = s.jvp(&d).unwrap();
    let scale = max_abs(fd).max(1e-3);
    let gap = dr
        .iter()
        .zip(fd)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(gap <= tol * scale, "{what}: {gap:e} of {scale:e}");
    let n = dr.len();
    let (rb, ub): (Vec<f64>, Vec<f64>) = (0..n)
        .map(|_| (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
        .unzip();
    let g = s.vjp(&rb, &ub).unwrap();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let left = dot(&rb, &dr) + dot(&ub, &du);
    let right = dot(&g.q, dq) + dot(&g.w, dw) + dot(&g.mu, dmu);
    assert!(
        (left - right).abs() <= 1e-10 * left.abs().max(1.0),
        "{what}: {left} {right}"
    );
}

/// A change of every field of a global problem, `dM` symmetric; a block without friction keeps
/// its `mu`.
pub(crate) struct GlobalChange {
    pub f: Vec<f64>,
    pub w: Vec<f64>,
    pub m: Vec<f64>,
    pub h: Vec<f64>,
    pub mu: Vec<f64>,
}

impl GlobalChange {
    /// A random change of `g`'s fields drawn from `rng` (`f`, `w`, `H`, `mu`, then `M`).
    pub(crate) fn of(g: &GlobalProblem, rng: &mut ChaCha8Rng) -> GlobalChange {
        let (nv, m) = (g.f.len(), g.w.len());
        let mut r = |n: usize, s: f64| -> Vec<f64> {
            (0..n).map(|_| s * rng.random_range(-1.0..1.0)).collect()
        };
        let blocks = g.constraints.blocks();
        let (f, w, h, mut mu) = (r(nv, 1.0), r(m, 1.0), r(nv * m, 0.3), r(blocks.len(), 0.2));
        let mut dm = r(nv * nv, 0.1);
        for i in 0..nv {
            for j in 0..i {
                dm[i * nv + j] = dm[j * nv + i];
            }
        }
        for (d, b) in mu.iter_mut().zip(blocks) {
            if !matches!(b, Constraint::Contact { mu } if !mu.is_empty()) {
                *d = 0.0;
            }
        }
        GlobalChange { f, w, m: dm, h, mu }
    }

    /// `g` moved by `t` along the change.
    pub(crate) fn moved(&self, g: &GlobalProblem, t: f64) -> GlobalProblem {
        let (nv, m) = (g.f.len(), g.w.len());
        let plus = |a: &Matrix, da: &[f64], rows: usize, cols: usize| {
            let a = a.to_dense();
            let v: Vec<f64> = (0..rows * cols)
                .map(|k| a[(k / cols, k % cols)] + t * da[k])
                .collect();
            Matrix::from_row_major("X", rows, cols, &v).unwrap()
        };
        let add = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x + t * y).collect();
        GlobalProblem::with_constraints(
            plus(&g.m, &self.m, nv, nv),
            plus(&g.h, &self.h, nv, m),
            add(&g.f, &self.f),
            add(&g.w, &self.w),
            Constraints::new(shifted(&g.constraints, &self.mu, t)).unwrap(),
        )
        .unwrap()
    }

    /// The change as forward mode reads it.
    pub(crate) fn along(
        &self,
    ) -> crate::natural_map::sensitivity::generalized::GeneralizedDirection<'_> {
        crate::natural_map::sensitivity::generalized::GeneralizedDirection {
            f: Some(&self.f),
            w: Some(&self.w),
            m: Some(&self.m),
            h: Some(&self.h),
            mu: Some(&self.mu),
            ..Default::default()
        }
    }
}
