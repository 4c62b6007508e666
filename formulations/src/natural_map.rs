//! The natural map of the Coulomb friction problem as a least-squares residual.
//!
//! For a local problem `u = W r + q` with De Saxcé's velocity `û_a = u_a + mu_a |u_a,t| e_n`,
//! the impulses solve the Coulomb problem exactly when, for every contact `a`,
//!
//! `F_a(r) = r_a - P_{K_mu}(r_a - rho_a û_a) = 0`  (FCLib RT-0444 §2; Alart and Curnier 1991)
//!
//! for any `rho_a > 0`. We take `rho_a = 3 / tr(W_aa)`, the inverse mean diagonal of the
//! contact's own block, so that `r_a` and `rho_a û_a` have the same scale; it changes the
//! conditioning, never the solutions. With `r` the unknowns this is a semismooth residual
//! whose generalized Jacobian is
//!
//! `J = I - D + diag(rho_a D_a (I + e_n g_a')) W`,
//!
//! with `D_a = dP/dz` at `z_a = r_a - rho_a û_a` ([`cone::project_jacobian`]) and
//! `g_a = (0, mu_a u_a,t / |u_a,t|)` the gradient of `mu |u_t|` (taken as 0 at `u_t = 0`).
//! The solutions lie in the product of cones, so [`ProjectedResidual::project`] projects each
//! contact's impulse onto its cone.

use contactlab_core::plugin::{Formulation, FormulationPlugin, Model};
use contactlab_core::{cone, CoreError, LocalProblem, ProjectedResidual, Residual, StepProblem};
use faer::{Mat, MatMut};
use nalgebra::{Matrix3, Vector3};

/// The natural-map residual of a local problem; unknowns are the impulses `r`.
#[derive(Debug, Clone)]
pub struct NaturalMap {
    problem: LocalProblem,
    /// `W` densified once: the Jacobian's `B W` product walks its columns.
    w: Mat<f64>,
    /// `rho_a = 3 / tr(W_aa)` per contact.
    rho: Vec<f64>,
}

fn block(v: &[f64], a: usize) -> Vector3<f64> {
    Vector3::new(v[3 * a], v[3 * a + 1], v[3 * a + 2])
}

impl NaturalMap {
    /// Wraps `problem`; `rho_a` defaults to `3 / tr(W_aa)` (1 where the trace is not positive).
    pub fn new(problem: &LocalProblem) -> NaturalMap {
        let w = problem.w.to_dense();
        let rho = (0..problem.num_contacts())
            .map(|a| {
                let tr = w[(3 * a, 3 * a)] + w[(3 * a + 1, 3 * a + 1)] + w[(3 * a + 2, 3 * a + 2)];
                if tr > 0.0 && tr.is_finite() {
                    3.0 / tr
                } else {
                    1.0
                }
            })
            .collect();
        NaturalMap {
            problem: problem.clone(),
            w,
            rho,
        }
    }

    /// The problem this residual was built from.
    pub fn problem(&self) -> &LocalProblem {
        &self.problem
    }

    /// `z_a = r_a - rho_a û_a` and `g_a`, the gradient of `mu |u_t|` w.r.t. `u_a`.
    fn contact_state(&self, r: &[f64], u: &[f64], a: usize) -> (Vector3<f64>, Vector3<f64>) {
        let mu = self.problem.mu()[a];
        let ua = block(u, a);
        let z = block(r, a) - self.rho[a] * cone::de_saxce(mu, ua);
        let t = ua[1].hypot(ua[2]);
        let g = if t > 0.0 {
            Vector3::new(0.0, mu * ua[1] / t, mu * ua[2] / t)
        } else {
            Vector3::zeros()
        };
        (z, g)
    }
}

impl Residual for NaturalMap {
    fn num_unknowns(&self) -> usize {
        self.problem.q.len()
    }

    fn num_residuals(&self) -> usize {
        self.problem.q.len()
    }

    fn residual(&self, x: &[f64], out: &mut [f64]) {
        let u = self.problem.velocity(x);
        for a in 0..self.problem.num_contacts() {
            let (z, _) = self.contact_state(x, &u, a);
            let f = block(x, a) - cone::project(self.problem.mu()[a], z);
            out[3 * a..3 * a + 3].copy_from_slice(f.as_slice());
        }
    }

    fn jacobian(&self, x: &[f64], mut out: MatMut<'_, f64>) {
        let n = self.num_unknowns();
        let u = self.problem.velocity(x);
        // Per contact: I - D_a on the diagonal block, B_a = rho_a D_a (I + e_n g_a') times W's rows.
        let mut b_blocks = Vec::with_capacity(self.problem.num_contacts());
        for a in 0..self.problem.num_contacts() {
            let (z, g) = self.contact_state(x, &u, a);
            let d = cone::project_jacobian(self.problem.mu()[a], z);
            let mut lift = Matrix3::identity();
            lift[(0, 1)] += g[1];
            lift[(0, 2)] += g[2];
            b_blocks.push(self.rho[a] * d * lift);
            for i in 0..3 {
                for j in 0..3 {
                    let delta = if i == j { 1.0 } else { 0.0 };
                    // Filled here, the W part is added below.
                    out[(3 * a + i, 3 * a + j)] = delta - d[(i, j)];
                }
            }
        }
        for col in 0..n {
            for (a, b) in b_blocks.iter().enumerate() {
                let wcol = Vector3::new(
                    self.w[(3 * a, col)],
                    self.w[(3 * a + 1, col)],
                    self.w[(3 * a + 2, col)],
                );
                let v = b * wcol;
                for i in 0..3 {
                    let row = 3 * a + i;
                    let base = if col / 3 == a { out[(row, col)] } else { 0.0 };
                    out[(row, col)] = base + v[i];
                }
            }
        }
    }
}

impl ProjectedResidual for NaturalMap {
    fn project(&self, x: &mut [f64]) {
        for (a, &mu) in self.problem.mu().iter().enumerate() {
            let p = cone::project(mu, block(x, a));
            x[3 * a..3 * a + 3].copy_from_slice(p.as_slice());
        }
    }
}

/// The natural map as a plugin (`--formulation natural-map`); no options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NaturalMapFormulation {}

impl Formulation for NaturalMapFormulation {
    type Built = NaturalMap;

    fn model(&self) -> Model {
        Model::CoulombCone
    }

    fn build(&self, problem: &StepProblem) -> Result<NaturalMap, CoreError> {
        let problem = problem.local()?;
        problem.validate()?;
        Ok(NaturalMap::new(problem))
    }

    fn num_unknowns(&self, built: &NaturalMap) -> usize {
        built.num_unknowns()
    }

    fn impulses(&self, _built: &NaturalMap, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}

impl FormulationPlugin for NaturalMapFormulation {
    const NAME: &'static str = "natural-map";
    const DESCRIPTION: &'static str =
        "FCLib natural map r - P_K(r - rho (u + mu|u_t| e_n)) as a projected residual";
}

#[cfg(test)]
mod tests {
    use super::*;
    use contactlab_core::metrics::natural_map_residual;
    use contactlab_core::Matrix;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random SPD `W = L L' + I/10` of `nc` contacts with random `q` and `mu`.
    fn random_problem(nc: usize, seed: u64) -> LocalProblem {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 3 * nc;
        let l: Vec<f64> = (0..n * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                w[i * n + j] = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>()
                    + if i == j { 0.1 } else { 0.0 };
            }
        }
        LocalProblem::coulomb(
            Matrix::from_row_major("W", n, n, &w).unwrap(),
            (0..n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            &(0..nc)
                .map(|_| rng.random_range(0.1..1.0))
                .collect::<Vec<f64>>(),
        )
    }

    #[test]
    fn jacobian_matches_finite_differences_away_from_kinks() {
        for seed in 0..20 {
            let p = random_problem(3, seed);
            let f = NaturalMap::new(&p);
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let x: Vec<f64> = (0..9).map(|_| rng.random_range(-1.0..1.0)).collect();
            let n = 9;
            let mut j = Mat::<f64>::zeros(n, n);
            f.jacobian(&x, j.as_mut());
            let h = 1e-7;
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            for k in 0..n {
                let mut xp = x.clone();
                let mut xm = x.clone();
                xp[k] += h;
                xm[k] -= h;
                f.residual(&xp, &mut fp);
                f.residual(&xm, &mut fm);
                for i in 0..n {
                    let fd = (fp[i] - fm[i]) / (2.0 * h);
                    // A kink inside [x - h, x + h] would make the difference quotient lie
                    // between two pieces; random points hit one with negligible probability.
                    assert!(
                        (fd - j[(i, k)]).abs() < 1e-5 * (1.0 + fd.abs()),
                        "seed {seed} ({i},{k}): fd {fd} vs {}",
                        j[(i, k)]
                    );
                }
            }
        }
    }

    #[test]
    fn zero_exactly_at_a_known_solution_and_projection_lands_in_cone() {
        // W = I, q = (-1, 2, 0), mu = 0.5: sliding solution r = (1, -0.5, 0).
        let p = LocalProblem::coulomb(
            Matrix::from_row_major("W", 3, 3, &[1., 0., 0., 0., 1., 0., 0., 0., 1.]).unwrap(),
            vec![-1.0, 2.0, 0.0],
            &[0.5],
        );
        let f = NaturalMap::new(&p);
        let mut out = vec![1.0; 3];
        f.residual(&[1.0, -0.5, 0.0], &mut out);
        assert!(out.iter().all(|v| v.abs() < 1e-15), "{out:?}");
        assert!(natural_map_residual(&p, &[1.0, -0.5, 0.0]) < 1e-15);
        let mut x = vec![1.0, 3.0, 4.0];
        f.project(&mut x);
        assert!((x[1].hypot(x[2]) - 0.5 * x[0]).abs() < 1e-14);
    }
}
