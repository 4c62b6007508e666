//! The implicit MNCP off the Coulomb path: every block that is not an equality enters by
//! Todorov's implicit map of its kind ([`BlockMap`], his eqs. 10-14 and our extension of them
//! to limits, friction losses and elliptic cones, documented in [`crate::todorov`]) with the
//! bias `b = 0` of eq. 26. `F_u' = dF_u/dz` stays block diagonal, one `rows x rows` block per
//! constraint, so eq. 34 keeps its form with variable block widths.

use contactlab_core::Edge;
use faer::MatMut;

use super::mncp::ImplicitMncp;
use crate::todorov::{BlockMap, EdgeKind, Region};

/// One block's `dF_b/dz_b`: its first row among the non-equality rows, its rows, its entries
/// row-major (at most six rows).
#[derive(Debug, Clone, Copy)]
pub(super) struct DfBlock {
    start: usize,
    n: usize,
    d: [f64; 36],
}

impl DfBlock {
    fn at(&self, i: usize, j: usize) -> f64 {
        self.d[i * self.n + j]
    }
}

impl ImplicitMncp {
    /// Block `k`'s implicit map, bias 0 (eq. 26 has none).
    fn map(&self, k: usize) -> BlockMap<'_> {
        BlockMap::new(&self.sys.blocks[k].constraint, 0.0)
    }

    /// `F_u(z)` block by block, `z` the non-equality rows' unknowns.
    pub(super) fn block_impulse(&self, z: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; z.len()];
        for (k, b) in self.sys.blocks.iter().enumerate() {
            self.map(k)
                .impulse(&z[b.rows.clone()], &mut f[b.rows.clone()]);
        }
        f
    }

    /// The region of every block at `z`.
    pub(super) fn block_regions(&self, z: &[f64]) -> Vec<Region> {
        (0..self.sys.blocks.len())
            .map(|k| self.map(k).region(&z[self.sys.blocks[k].rows.clone()]))
            .collect()
    }

    /// The regions entered when leaving `z` along `dz`.
    pub(super) fn block_regions_along(&self, z: &[f64], dz: &[f64]) -> Vec<Region> {
        (0..self.sys.blocks.len())
            .map(|k| {
                let rows = self.sys.blocks[k].rows.clone();
                self.map(k).region_along(&z[rows.clone()], &dz[rows])
            })
            .collect()
    }

    /// `F_u'` of the given regions' pieces at `z`.
    pub(super) fn block_df(&self, z: &[f64], regions: &[Region]) -> Vec<DfBlock> {
        self.sys
            .blocks
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let n = b.rows.len();
                let mut d = [0.0; 36];
                self.map(k)
                    .df_dx(regions[k], &z[b.rows.clone()], &mut d[..n * n]);
                DfBlock {
                    start: b.rows.start,
                    n,
                    d,
                }
            })
            .collect()
    }

    /// Writes eq. 34, `[[W_bb, W_bu F'], [W_bu', (W - I) F' - I]]`, for the block-diagonal
    /// `F'` given by `blocks`.
    pub(super) fn block_jacobian(&self, blocks: &[DfBlock], mut out: MatMut<'_, f64>) {
        let s = &self.sys;
        let (n_b, m) = (s.n_b, s.other_rows());
        self.bilateral_columns(&mut out);
        for b in blocks {
            for c in 0..b.n {
                let col = n_b + b.start + c;
                for k in 0..n_b {
                    out[(k, col)] = (0..b.n)
                        .map(|l| s.w_bu[(k, b.start + l)] * b.at(l, c))
                        .sum();
                }
                for i in 0..m {
                    let mut v: f64 = (0..b.n).map(|l| s.w[(i, b.start + l)] * b.at(l, c)).sum();
                    if (b.start..b.start + b.n).contains(&i) {
                        v -= b.at(i - b.start, c);
                    }
                    if i == b.start + c {
                        v -= 1.0;
                    }
                    out[(n_b + i, col)] = v;
                }
            }
        }
    }

    /// Appends every block's edge crossings of `z + alpha dz` (unsorted).
    pub(super) fn block_kinks(&self, z: &[f64], dz: &[f64], out: &mut Vec<f64>) {
        for (k, b) in self.sys.blocks.iter().enumerate() {
            self.map(k)
                .crossings(&z[b.rows.clone()], &dz[b.rows.clone()], out);
        }
    }

    /// The edges the blocks of `x` lie on, tagged by block (columns offset by `n_b`).
    pub(super) fn block_edges_at(&self, x: &[f64], out: &mut Vec<Edge>) {
        let n_b = self.sys.n_b;
        for (k, b) in self.sys.blocks.iter().enumerate() {
            let map = self.map(k);
            let zb = &x[n_b + b.rows.start..n_b + b.rows.end];
            if let Some(kind) = map.edge(zb) {
                let mut normal = vec![0.0; zb.len()];
                map.edge_normal(kind, zb, &mut normal);
                out.push(Edge {
                    start: n_b + b.rows.start,
                    normal,
                    curved: kind == EdgeKind::Cone,
                    tag: k,
                });
            }
        }
    }

    /// Moves block `edge.tag` of `x` onto its curved edge (section III-D).
    pub(super) fn block_project_onto_edge(&self, edge: &Edge, x: &mut [f64]) {
        if edge.curved {
            self.map(edge.tag).project_onto_edge(&mut x[edge.columns()]);
        }
    }
}
