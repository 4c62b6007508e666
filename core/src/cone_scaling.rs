//! The isotropic scaling of MuJoCo's elliptic cones ([`crate::elliptic_cone`]): one change of
//! variables per frictional row that turns a cone with one coefficient per row into a cone with
//! one coefficient, for the drivers whose steps are not invariant under it (ADMM's proximal
//! least squares and Euclidean projection, [`crate::drivers::admm`]; the projected fixed point
//! of a cone block in [`crate::drivers::block_pgs`]).
//!
//! **The map.** A contact with coefficients `mu_i` and `mu_max = max_i mu_i` gets
//! `D = diag(1, d_i)`, `d_i = mu_i / mu_max` (`d_i = 1` where `mu_i = 0`: that row carries no
//! friction in either coordinate). With `r = D r'` the cone `K_mu` becomes `K_mu'`,
//! `mu'_i = mu_max` (0 where `mu_i = 0`), since `r_f,i / mu_i = r'_f,i / mu_max`. Velocities
//! map the other way, `u' = D u`, so that `r . u = r' . u'`; the problem `u = W r + q` becomes
//! `u' = W' r' + q'` with `W' = D W D`, `q' = D q`; and `|D_mu u_f| = |D_mu' u'_f|`, so De
//! Saxce's correction, the dual cone and the complementarity `K ∋ r ⟂ û ∈ K*` read the same in
//! both: `r` solves the problem exactly when `D^-1 r` solves the scaled one. Every block that
//! is not a contact keeps `d = 1`, and so does every contact with equal coefficients (every
//! FCLib problem, every Coulomb scene): the map is the identity there.
//!
//! **Why.** A hand's condim-4 contact (the Kinova Jaco's: sliding 1, torsion 0.005) is a needle
//! of a cone in its torsional row: the Euclidean projection moves a point almost only along
//! that row, while `W`'s torsional row and column are of the order of the others. ADMM on the
//! Jaco's steps did not converge in 50 000 iterations in the problem's own coordinates and took
//! 139 in the scaled ones; block PGS took 28 sweeps instead of its 500-sweep cap (measured on
//! the robot study's `jaco_grasp`, `reports/robots/`).
//!
//! The ruler is not scaled: a driver that iterates in the scaled coordinates measures its
//! residual on `D r'` in the problem's own, so that its tolerance means what it means for
//! every other driver.

use faer::Mat;

use crate::constraint::{Constraint, Constraints};
use crate::problem::{LocalProblem, Matrix};
use crate::result::Solution;

/// The diagonal `D` of a problem's rows and the constraints of the scaled problem.
#[derive(Debug, Clone)]
pub struct ConeScaling {
    d: Vec<f64>,
    constraints: Constraints,
}

/// A contact's scaled coefficients and its rows' `d` (normal first), or `None` when the
/// coefficients are already equal.
fn scale_contact(mu: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let mu_max = mu.iter().copied().fold(0.0f64, f64::max);
    let nonzero = mu.iter().filter(|&&m| m > 0.0);
    if mu_max == 0.0 || nonzero.clone().all(|&m| m == mu_max) {
        return None;
    }
    let d = std::iter::once(1.0)
        .chain(mu.iter().map(|&m| if m > 0.0 { m / mu_max } else { 1.0 }))
        .collect();
    let scaled = mu
        .iter()
        .map(|&m| if m > 0.0 { mu_max } else { 0.0 })
        .collect();
    Some((scaled, d))
}

impl ConeScaling {
    /// The scaling of `c`'s rows, `None` when it is the identity (no contact with unequal
    /// coefficients).
    pub fn of(c: &Constraints) -> Option<ConeScaling> {
        let mut d = vec![1.0; c.rows()];
        let mut blocks = Vec::with_capacity(c.len());
        let mut any = false;
        for (rows, k) in c.iter() {
            let scaled = match k {
                Constraint::Contact { mu } => scale_contact(mu),
                _ => None,
            };
            match scaled {
                Some((mu, dk)) => {
                    any = true;
                    d[rows].copy_from_slice(&dk);
                    blocks.push(Constraint::Contact { mu });
                }
                None => blocks.push(k.clone()),
            }
        }
        any.then(|| ConeScaling {
            d,
            constraints: Constraints::unchecked(blocks),
        })
    }

    /// `self` followed by one positive number per block, `s_b = 1 / sqrt(mean_i W'_ii)` over the
    /// block's rows of `W' = D W D`, so that every block of the scaled `W` has a unit mean
    /// diagonal (Jacobi's equilibration, one number per block so that each set keeps its shape:
    /// a cone is invariant under a positive factor; a friction loss's box `|r| <= f_max`
    /// becomes `|r'| <= f_max / s_b`). A block whose diagonal is not positive keeps `s_b = 1`.
    pub fn equilibrated(mut self, w: &Matrix) -> ConeScaling {
        let mut diag = vec![0.0; self.d.len()];
        w.for_each_entry(|i, j, x| {
            if i == j {
                diag[i] += x;
            }
        });
        let mut blocks = Vec::with_capacity(self.constraints.len());
        for (rows, k) in self.constraints.iter() {
            let n = rows.len() as f64;
            let mean = rows
                .clone()
                .map(|i| self.d[i] * self.d[i] * diag[i])
                .sum::<f64>()
                / n;
            let s = if mean.is_finite() && mean > 0.0 {
                1.0 / mean.sqrt()
            } else {
                1.0
            };
            self.d[rows.clone()].iter_mut().for_each(|d| *d *= s);
            blocks.push(match k {
                Constraint::FrictionLoss { f_max } => Constraint::FrictionLoss {
                    f_max: f_max / self.d[rows.start],
                },
                other => other.clone(),
            });
        }
        self.constraints = Constraints::unchecked(blocks);
        self
    }

    /// The identity map of `c`'s rows, for [`ConeScaling::equilibrated`] to start from.
    fn identity(c: &Constraints) -> ConeScaling {
        ConeScaling {
            d: vec![1.0; c.rows()],
            constraints: c.clone(),
        }
    }

    /// What a driver with the option `isotropic` iterates in: the scaling of `c` (none when the
    /// option is off or the map is the identity), followed by the equilibration of each block
    /// by `W`'s diagonal when `equilibrate` is `Some(W)`, and the start `r0` in its
    /// coordinates.
    pub fn start(
        isotropic: bool,
        equilibrate: Option<&Matrix>,
        c: &Constraints,
        r0: Vec<f64>,
    ) -> (Option<ConeScaling>, Vec<f64>) {
        let cones = isotropic.then(|| ConeScaling::of(c)).flatten();
        let scaling = match equilibrate {
            Some(w) => Some(
                cones
                    .unwrap_or_else(|| ConeScaling::identity(c))
                    .equilibrated(w),
            ),
            None => cones,
        };
        match scaling {
            Some(s) => {
                let r0 = s.to_scaled_impulse(&r0);
                (Some(s), r0)
            }
            None => (None, r0),
        }
    }

    /// A driver's answer back in the problem's coordinates, `r = D r'`, in place (nothing
    /// without a scaling).
    pub fn finish(scaling: Option<&ConeScaling>, solution: &mut Solution) {
        if let Some(s) = scaling {
            let scaled = std::mem::take(&mut solution.x);
            solution.x = vec![0.0; scaled.len()];
            s.to_impulse(&scaled, &mut solution.x);
        }
    }

    /// The diagonal `D`, one entry per row.
    pub fn d(&self) -> &[f64] {
        &self.d
    }

    /// The scaled problem's constraints: each contact's coefficients made equal to their
    /// largest (0 stays 0).
    pub fn constraints(&self) -> &Constraints {
        &self.constraints
    }

    /// `W' = D W D`, dense. Each entry is `(d_i d_j) w_ij`, so a symmetric `W` stays exactly
    /// symmetric.
    pub fn scale_w(&self, w: &Matrix) -> Mat<f64> {
        let mut out = w.to_dense();
        for j in 0..out.ncols() {
            let dj = self.d[j];
            for (i, x) in out.col_as_slice_mut(j).iter_mut().enumerate() {
                *x *= self.d[i] * dj;
            }
        }
        out
    }

    /// A velocity in the scaled coordinates, `u' = D u`.
    pub fn to_scaled_velocity(&self, u: &[f64]) -> Vec<f64> {
        u.iter().zip(&self.d).map(|(x, d)| d * x).collect()
    }

    /// An impulse in the scaled coordinates, `r' = D^-1 r`.
    pub fn to_scaled_impulse(&self, r: &[f64]) -> Vec<f64> {
        r.iter().zip(&self.d).map(|(x, d)| x / d).collect()
    }

    /// An impulse back in the problem's coordinates, `r = D r'`, into `out`.
    pub fn to_impulse(&self, r_scaled: &[f64], out: &mut [f64]) {
        for ((o, x), d) in out.iter_mut().zip(r_scaled).zip(&self.d) {
            *o = d * x;
        }
    }

    /// The scaled problem `(D W D, D q)` with the scaled constraints, `W'` dense.
    pub fn problem(&self, p: &LocalProblem) -> LocalProblem {
        LocalProblem {
            w: Matrix::Dense(self.scale_w(&p.w)),
            q: self.to_scaled_velocity(&p.q),
            constraints: self.constraints.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::natural_map_residual;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn hand_like() -> Constraints {
        Constraints::new(vec![
            Constraint::Limit,
            Constraint::Contact {
                mu: vec![1.0, 1.0, 0.005],
            },
            Constraint::coulomb(0.7),
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.0, 0.001, 0.001],
            },
            Constraint::FrictionLoss { f_max: 0.2 },
        ])
        .unwrap()
    }

    #[test]
    fn equal_coefficients_are_the_identity() {
        let c = Constraints::new(vec![
            Constraint::coulomb(0.3),
            Constraint::Contact { mu: vec![] },
            Constraint::Contact {
                mu: vec![0.5, 0.5, 0.0],
            },
            Constraint::Equality { rows: 3 },
        ])
        .unwrap();
        assert!(ConeScaling::of(&c).is_none());
    }

    #[test]
    fn the_scaled_cones_are_isotropic_and_d_is_each_rows_ratio() {
        let s = ConeScaling::of(&hand_like()).unwrap();
        let d = s.d();
        assert_eq!(d[..5], [1.0, 1.0, 1.0, 1.0, 0.005]);
        assert_eq!(d[5..8], [1.0; 3]);
        assert_eq!(d[8..14], [1.0, 1.0, 1.0, 1.0, 0.00125, 0.00125]);
        assert_eq!(d[14], 1.0);
        let blocks = s.constraints().blocks();
        assert_eq!(
            blocks[1],
            Constraint::Contact {
                mu: vec![1.0, 1.0, 1.0]
            }
        );
        assert_eq!(
            blocks[3],
            Constraint::Contact {
                mu: vec![0.8, 0.8, 0.0, 0.8, 0.8]
            }
        );
        assert_eq!(blocks[4], Constraint::FrictionLoss { f_max: 0.2 });
    }

    /// A point `(r, u)` that meets block `k`'s law, in the regime `regime` (0 open or
    /// inactive, 1 sticking, 2 sliding on the cone's boundary with the maximum-dissipation
    /// direction `r_f = -r_n D_mu^2 u_f / |D_mu u_f|`).
    fn on_the_law(k: &Constraint, regime: usize, rng: &mut ChaCha8Rng) -> (Vec<f64>, Vec<f64>) {
        let m = k.rows();
        let (mut r, mut u) = (vec![0.0; m], vec![0.0; m]);
        let Constraint::Contact { mu } = k else {
            // A limit or a friction loss, stuck inside its set; an equality, any impulse.
            r[0] = 0.1;
            return (r, u);
        };
        let rn = rng.random_range(0.5..1.0);
        match regime {
            0 => u[0] = rng.random_range(0.1..1.0),
            1 => {
                r[0] = rn;
                for (ri, &mi) in r[1..].iter_mut().zip(mu) {
                    *ri = 0.3 * mi * rn / (mu.len() as f64).sqrt();
                }
            }
            _ => {
                r[0] = rn;
                u[1..]
                    .iter_mut()
                    .for_each(|x| *x = rng.random_range(-1.0..1.0));
                let dual = crate::elliptic_cone::dual_norm(mu, &u[1..]);
                for ((ri, &mi), &ui) in r[1..].iter_mut().zip(mu).zip(&u[1..]) {
                    *ri = -rn * mi * mi * ui / dual;
                }
            }
        }
        (r, u)
    }

    /// A point of every block of `c` on its law in `regime` ([`on_the_law`]), rows in order.
    fn every_block_on_the_law(
        c: &Constraints,
        regime: usize,
        rng: &mut ChaCha8Rng,
    ) -> (Vec<f64>, Vec<f64>) {
        let (mut r, mut u) = (vec![0.0; c.rows()], vec![0.0; c.rows()]);
        for (rows, k) in c.iter() {
            let (rk, uk) = on_the_law(k, regime, rng);
            r[rows.clone()].copy_from_slice(&rk);
            u[rows].copy_from_slice(&uk);
        }
        (r, u)
    }

    /// The map carries cone membership and solutions both ways: a point is in `K_mu` exactly
    /// when its scaled point is in `K_mu'`, and with `W = I` and `q = u - r` for points built
    /// on each block's law (open, sticking, sliding), `r` solves the problem and `D^-1 r` the
    /// scaled one, both to rounding.
    #[test]
    fn membership_and_solutions_map_both_ways() {
        let c = hand_like();
        let s = ConeScaling::of(&c).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let r: Vec<f64> = (0..c.rows()).map(|_| rng.random_range(-1.0..1.0)).collect();
            let rs = s.to_scaled_impulse(&r);
            for ((rows, k), (_, ks)) in c.iter().zip(s.constraints().iter()) {
                if let (Constraint::Contact { mu }, Constraint::Contact { mu: mus }) = (k, ks) {
                    assert_eq!(
                        crate::elliptic_cone::contains(mu, &r[rows.clone()]),
                        crate::elliptic_cone::contains(mus, &rs[rows.clone()]),
                    );
                }
            }
        }
        let m = c.rows();
        let mut w = Mat::<f64>::zeros(m, m);
        (0..m).for_each(|i| w[(i, i)] = 1.0);
        for regime in 0..3 {
            let (r, u) = every_block_on_the_law(&c, regime, &mut rng);
            let p = LocalProblem {
                w: Matrix::Dense(w.clone()),
                q: u.iter().zip(&r).map(|(ui, ri)| ui - ri).collect(),
                constraints: c.clone(),
            };
            assert!(natural_map_residual(&p, &r) <= 1e-14, "regime {regime}");
            let rs = s.to_scaled_impulse(&r);
            let res = natural_map_residual(&s.problem(&p), &rs);
            assert!(res <= 1e-14, "regime {regime}: {res}");
            let mut back = vec![0.0; m];
            s.to_impulse(&rs, &mut back);
            assert!(back.iter().zip(&r).all(|(a, b)| (a - b).abs() <= 1e-15));
        }
    }

    /// On a `W` whose blocks span four decades, the equilibration gives every block of
    /// `D W D` a unit mean diagonal, divides a friction loss's bound by its row's `d`, and
    /// carries solutions both ways (each block's law built as above, plus the friction loss at
    /// its bound with the velocity pushing out).
    #[test]
    fn equilibrated_blocks_have_unit_diagonals_and_keep_solutions() {
        let c = hand_like();
        let m = c.rows();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let a: Vec<f64> = (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect();
        let spread: Vec<f64> = c
            .iter()
            .enumerate()
            .flat_map(|(b, (rows, _))| std::iter::repeat_n(10f64.powi(b as i32 - 2), rows.len()))
            .collect();
        let w = Mat::from_fn(m, m, |i, j| {
            let bbt: f64 = (0..m).map(|k| a[i * m + k] * a[j * m + k]).sum();
            spread[i] * (bbt + if i == j { 1.0 } else { 0.0 }) * spread[j]
        });
        let wm = Matrix::Dense(w);
        let s = ConeScaling::of(&c).unwrap().equilibrated(&wm);
        let ws = s.scale_w(&wm);
        for (rows, _) in s.constraints().iter() {
            let mean = rows.clone().map(|i| ws[(i, i)]).sum::<f64>() / rows.len() as f64;
            assert!((mean - 1.0).abs() <= 1e-12, "block at {rows:?}: {mean}");
        }
        let last = m - 1;
        assert_eq!(
            s.constraints().blocks()[4],
            Constraint::FrictionLoss {
                f_max: 0.2 / s.d()[last]
            }
        );
        for regime in 0..3 {
            let (mut r, mut u) = every_block_on_the_law(&c, regime, &mut rng);
            if regime == 2 {
                (r[last], u[last]) = (0.2, -0.5);
            }
            let mut wr = vec![0.0; m];
            wm.mul_vec(&r, &mut wr);
            let p = LocalProblem {
                w: wm.clone(),
                q: u.iter().zip(&wr).map(|(ui, x)| ui - x).collect(),
                constraints: c.clone(),
            };
            assert!(natural_map_residual(&p, &r) <= 1e-13, "regime {regime}");
            let res = natural_map_residual(&s.problem(&p), &s.to_scaled_impulse(&r));
            assert!(res <= 1e-13, "regime {regime}: {res}");
        }
    }

    /// Equilibration alone (equal coefficients, or the isotropic map off) still scales.
    #[test]
    fn equilibration_scales_where_the_cones_need_none() {
        let c = Constraints::new(vec![Constraint::coulomb(0.5), Constraint::Limit]).unwrap();
        let w = Mat::from_fn(4, 4, |i, j| {
            if i == j {
                [4.0, 4.0, 4.0, 0.25][i]
            } else {
                0.0
            }
        });
        let (s, r0) = ConeScaling::start(false, Some(&Matrix::Dense(w)), &c, vec![1.0; 4]);
        let s = s.expect("a scaling");
        assert_eq!(s.d(), [0.5, 0.5, 0.5, 2.0]);
        assert_eq!(r0, [2.0, 2.0, 2.0, 0.5]);
        assert!(ConeScaling::start(false, None, &c, vec![1.0; 4])
            .0
            .is_none());
    }

    #[test]
    fn scaled_w_is_d_w_d_and_stays_symmetric() {
        let c = hand_like();
        let s = ConeScaling::of(&c).unwrap();
        let m = c.rows();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let a: Vec<f64> = (0..m * m).map(|_| rng.random_range(-1.0..1.0)).collect();
        let w = Mat::from_fn(m, m, |i, j| a[i * m + j] + a[j * m + i]);
        let ws = s.scale_w(&Matrix::Dense(w.clone()));
        for i in 0..m {
            for j in 0..m {
                assert_eq!(ws[(i, j)], ws[(j, i)]);
                let want = s.d()[i] * w[(i, j)] * s.d()[j];
                assert!((ws[(i, j)] - want).abs() <= 1e-15 * want.abs().max(1.0));
            }
        }
    }
}
