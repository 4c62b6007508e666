//! SAP's primal problem (Castro et al., eq. 19) as a conic program, for interior-point
//! comparators (the paper's Gurobi and geodesic IPM, sec. VI-A; here Clarabel):
//!
//! `min_{v, sigma} |v - v*|_A^2 / 2 + |sigma|_R^2 / 2`
//! `s.t. g = J v + b - v^ + R sigma in F*`,
//!
//! with unknowns `x = [v; sigma]` (the touched trees' velocities, as SAP's cost has them, then
//! three impulses per contact, normal first). Clarabel's form is `A x + s = b`, `s` in second-order
//! cones with the axis first, so each contact's dual cone
//! `F*_i = { mu |g_t| <= g_n }` is written with `s_i = S_i g_i`, `S_i = diag(1, mu, mu)`:
//! `A = -S [J  R]`, `b = S (b - v^)`. With `mu = 0` the tangential rows vanish and the cone reads
//! `g_n >= 0`, which is `F*` for a frictionless contact. At the optimum `sigma = gamma`
//! (Theorem 1), so the impulses can be read from either `sigma` or `P_F(y(v))`.

use contactlab_core::conic_program::{Cone, ConicData, ConicProgram};
use contactlab_core::CoreError;
use faer::sparse::{SparseColMat, Triplet};

use super::cost::SapCost;

fn sparse(
    nrows: usize,
    ncols: usize,
    t: &[Triplet<usize, usize, f64>],
) -> Result<SparseColMat<usize, f64>, CoreError> {
    SparseColMat::try_new_from_triplets(nrows, ncols, t)
        .map_err(|e| CoreError::LinearAlgebra(format!("SAP conic program: {e:?}")))
}

impl ConicProgram for SapCost {
    fn conic_program(&self) -> Result<ConicData, CoreError> {
        let parts = self.primal_parts()?;
        let nv = parts.v_star.len();
        let m = parts.offset.len();
        let n = nv + m;
        // P = blockdiag(A, R), upper triangle.
        let mut p = Vec::new();
        let (acp, ari, aval) = (
            parts.a.symbolic().col_ptr(),
            parts.a.symbolic().row_idx(),
            parts.a.val(),
        );
        for c in 0..nv {
            for k in acp[c]..acp[c + 1] {
                if ari[k] <= c {
                    p.push(Triplet::new(ari[k], c, aval[k]));
                }
            }
        }
        let r_of = |row: usize| {
            let reg = &parts.regs[row / 3];
            if row.is_multiple_of(3) {
                reg.rn
            } else {
                reg.rt
            }
        };
        let s_of = |row: usize| {
            if row.is_multiple_of(3) {
                1.0
            } else {
                parts.regs[row / 3].mu
            }
        };
        for row in 0..m {
            p.push(Triplet::new(nv + row, nv + row, r_of(row)));
        }
        // q = [-A v*; 0].
        let mut q = vec![0.0; n];
        contactlab_core::generalized::sparse_mul_add(parts.a, parts.v_star, &mut q[..nv]);
        q[..nv].iter_mut().for_each(|v| *v = -*v);
        // A = -S [J R], b = S (b - v^).
        let mut a = Vec::new();
        let (jcp, jri, jval) = (
            parts.j.symbolic().col_ptr(),
            parts.j.symbolic().row_idx(),
            parts.j.val(),
        );
        for c in 0..nv {
            for k in jcp[c]..jcp[c + 1] {
                a.push(Triplet::new(jri[k], c, -s_of(jri[k]) * jval[k]));
            }
        }
        for row in 0..m {
            a.push(Triplet::new(row, nv + row, -s_of(row) * r_of(row)));
        }
        let b: Vec<f64> = (0..m).map(|row| s_of(row) * parts.offset[row]).collect();
        Ok(ConicData {
            p: sparse(n, n, &p)?,
            q,
            a: sparse(m, n, &a)?,
            b,
            cones: vec![Cone::SecondOrder(3); m / 3],
        })
    }

    /// The whole primal pair `[v; sigma]`: the IPM's impulses are its `sigma`, and
    /// [`SapCost::impulses`] and [`SapCost::accuracy`] read them from there (Fig. 13 measures an
    /// IPM at its own pair).
    fn unknowns_from_conic(&self, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }
}
