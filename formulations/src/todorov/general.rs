//! The implicit NCP off the Coulomb fast path: the residual's impulses, `F' = df/dx`, the
//! Jacobian products and the edge hooks block by block over constraint blocks of any kind
//! ([`BlockMap`]). `F'` is block diagonal with one `rows x rows` block per constraint, so the
//! kernels of the Coulomb path (`J = D ((A - I) F' - I)`, `J'J` in O(n^2) from the
//! problem-constant `M'M`, eq. 25's slopes in O(1) per edge) carry over with variable widths.

use contactlab_core::{Constraints, Edge, EdgeMix, NormalEquations};
use faer::{Col, Mat, MatMut};

use super::kinds::BlockMap;
use super::ncp::{EdgeKind, ImplicitNcp, Region};

/// One block's `df_b/dx_b`: its first unknown, its rows, its entries row-major.
#[derive(Debug, Clone, Copy)]
pub(super) struct DfBlock {
    start: usize,
    n: usize,
    d: [f64; 36],
}

impl DfBlock {
    /// `df_b/dx_b` of `map`'s `region` piece at `x_b`, the block starting at `start`.
    fn new(map: &BlockMap<'_>, region: Region, start: usize, x: &[f64]) -> DfBlock {
        let n = x.len();
        let mut d = [0.0; 36];
        map.df_dx(region, x, &mut d[..n * n]);
        DfBlock { start, n, d }
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.d[i * self.n + j]
    }

    /// `plus * self + minus * other` (eq. 26's mixture).
    fn mix(&self, plus: f64, other: &DfBlock, minus: f64) -> DfBlock {
        let mut d = [0.0; 36];
        for (k, v) in d[..self.n * self.n].iter_mut().enumerate() {
            *v = plus * self.d[k] + minus * other.d[k];
        }
        DfBlock { d, ..*self }
    }

    /// `F_b v_b` for the block's rows of `v`.
    fn times(&self, v: &[f64], out: &mut [f64]) {
        let s = self.start;
        for i in 0..self.n {
            out[s + i] = (0..self.n).map(|j| self.at(i, j) * v[s + j]).sum();
        }
    }

    /// `F_b' v_b` for the block's rows of `v`.
    fn t_times(&self, v: &[f64], out: &mut [f64]) {
        let s = self.start;
        for j in 0..self.n {
            out[s + j] = (0..self.n).map(|i| self.at(i, j) * v[s + i]).sum();
        }
    }
}

/// `F'` block diagonal, one [`DfBlock`] per constraint block in row order.
pub(super) type BlockDiagonal = Vec<DfBlock>;

/// `F' v`.
fn f_times(f: &BlockDiagonal, v: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    f.iter().for_each(|b| b.times(v, &mut out));
    out
}

/// `src F'` (`src` square of the unknowns' size).
fn right_times_f(src: &Mat<f64>, f: &BlockDiagonal) -> Mat<f64> {
    let n = src.nrows();
    let mut out = Mat::<f64>::zeros(n, n);
    for b in f {
        for i in 0..n {
            for c in 0..b.n {
                out[(i, b.start + c)] = (0..b.n).map(|l| src[(i, b.start + l)] * b.at(l, c)).sum();
            }
        }
    }
    out
}

impl ImplicitNcp {
    /// Block `k`'s map.
    fn map<'a>(&self, c: &'a Constraints, k: usize) -> BlockMap<'a> {
        BlockMap::new(&c.blocks()[k], self.b[k])
    }

    /// The impulses `f(x)` block by block.
    pub(super) fn general_impulses(&self, c: &Constraints, x: &[f64]) -> Vec<f64> {
        let mut f = vec![0.0; x.len()];
        for (k, (rows, _)) in c.iter().enumerate() {
            self.map(c, k).impulse(&x[rows.clone()], &mut f[rows]);
        }
        f
    }

    /// The region of every block at `x`.
    pub(super) fn general_regions(&self, c: &Constraints, x: &[f64]) -> Vec<Region> {
        c.iter()
            .enumerate()
            .map(|(k, (rows, _))| self.map(c, k).region(&x[rows]))
            .collect()
    }

    /// The regions entered along `dx`.
    fn general_regions_along(&self, c: &Constraints, x: &[f64], dx: &[f64]) -> Vec<Region> {
        c.iter()
            .enumerate()
            .map(|(k, (rows, _))| self.map(c, k).region_along(&x[rows.clone()], &dx[rows]))
            .collect()
    }

    /// `F'` of the given regions' pieces at `x`.
    pub(super) fn general_df(
        &self,
        c: &Constraints,
        x: &[f64],
        regions: &[Region],
    ) -> BlockDiagonal {
        c.iter()
            .enumerate()
            .map(|(k, (rows, _))| DfBlock::new(&self.map(c, k), regions[k], rows.start, &x[rows]))
            .collect()
    }

    /// `F'` of the pieces entered along `dx`.
    pub(super) fn general_df_along(&self, c: &Constraints, x: &[f64], dx: &[f64]) -> BlockDiagonal {
        self.general_df(c, x, &self.general_regions_along(c, x, dx))
    }

    /// Writes `J = D ((A - I) F' - I)`.
    pub(super) fn general_jacobian(&self, f: &BlockDiagonal, mut out: MatMut<'_, f64>) {
        let n = self.v0.len();
        let af = right_times_f(&self.a, f);
        for b in f {
            for c in 0..b.n {
                let col = b.start + c;
                for i in 0..n {
                    // (I F')_{i, col} is F' itself on the block's rows.
                    let own = if (b.start..b.start + b.n).contains(&i) {
                        b.at(i - b.start, c)
                    } else {
                        0.0
                    };
                    let id = if i == col { 1.0 } else { 0.0 };
                    out[(i, col)] = self.d[i] * (af[(i, col)] - own - id);
                }
            }
        }
    }

    /// `J dir = D ((A - I) F' dir - dir)` without forming `J`.
    pub(super) fn general_jacobian_times(&self, f: &BlockDiagonal, dir: &[f64]) -> Vec<f64> {
        let fd = f_times(f, dir);
        let afd = &self.a * Col::from_fn(fd.len(), |i| fd[i]);
        (0..dir.len())
            .map(|i| self.d[i] * (afd[i] - fd[i] - dir[i]))
            .collect()
    }

    /// `J' y = F'' p - D y` from the pull-back `p = (A - I)' D y`.
    pub(super) fn general_jt_from_pullback(
        &self,
        f: &BlockDiagonal,
        p: &[f64],
        y: &[f64],
    ) -> Vec<f64> {
        let mut out = vec![0.0; y.len()];
        f.iter().for_each(|b| b.t_times(p, &mut out));
        out.iter_mut()
            .enumerate()
            .for_each(|(i, o)| *o -= self.d[i] * y[i]);
        out
    }

    /// `J'J = F''(M'M)F' - (DMF')' - DMF' + D^2` in O(n^2) per block row (as
    /// [`ImplicitNcp::normal_matrix`] on the Coulomb path).
    pub(super) fn general_normal_matrix(&self, f: &BlockDiagonal) -> Mat<f64> {
        let n = self.v0.len();
        let pr = self.products();
        let mtm_f = right_times_f(&pr.mtm, f);
        let dm_f = right_times_f(&pr.dm, f);
        let mut jtj = Mat::<f64>::zeros(n, n);
        for b in f {
            for j in 0..n {
                for r in 0..b.n {
                    jtj[(b.start + r, j)] =
                        (0..b.n).map(|l| b.at(l, r) * mtm_f[(b.start + l, j)]).sum();
                }
            }
        }
        for j in 0..n {
            for i in 0..n {
                jtj[(i, j)] -= dm_f[(i, j)] + dm_f[(j, i)];
            }
            jtj[(j, j)] += self.d[j] * self.d[j];
        }
        jtj
    }

    /// Appends every block's crossings of `x + alpha dx`, sorted.
    pub(super) fn general_kinks(&self, c: &Constraints, x: &[f64], dx: &[f64], out: &mut Vec<f64>) {
        let start = out.len();
        for (k, (rows, _)) in c.iter().enumerate() {
            self.map(c, k).crossings(&x[rows.clone()], &dx[rows], out);
        }
        out[start..].sort_by(f64::total_cmp);
    }

    /// The edges the blocks lie on at `x`, tagged by block.
    pub(super) fn general_edges_at(&self, c: &Constraints, x: &[f64], out: &mut Vec<Edge>) {
        for (k, (rows, _)) in c.iter().enumerate() {
            let map = self.map(c, k);
            let xb = &x[rows.clone()];
            if let Some(kind) = map.edge(xb) {
                let mut normal = vec![0.0; rows.len()];
                map.edge_normal(kind, xb, &mut normal);
                out.push(Edge {
                    start: rows.start,
                    normal,
                    curved: kind == EdgeKind::Cone,
                    tag: k,
                });
            }
        }
    }

    /// Moves block `edge.tag` of `x` onto its curved edge.
    pub(super) fn general_project_onto_edge(&self, c: &Constraints, edge: &Edge, x: &mut [f64]) {
        if edge.curved {
            self.map(c, edge.tag)
                .project_onto_edge(&mut x[edge.columns()]);
        }
    }

    /// Block `edge.tag`'s `df/dx` on either side of the edge.
    fn general_sides(&self, c: &Constraints, x: &[f64], edge: &Edge) -> (DfBlock, DfBlock) {
        let map = self.map(c, edge.tag);
        let xb = &x[edge.columns()];
        let minus: Vec<f64> = edge.normal.iter().map(|v| -v).collect();
        let side = |d: &[f64]| DfBlock::new(&map, map.region_along(xb, d), edge.start, xb);
        (side(&edge.normal), side(&minus))
    }

    /// Eq. 25 in O(rows^2) per edge from one pull-back `p = (A - I)' D r`.
    pub(super) fn general_edge_slopes(
        &self,
        c: &Constraints,
        x: &[f64],
        r: &[f64],
        edges: &[Edge],
        out: &mut Vec<(f64, f64)>,
    ) {
        let pull = self.pullback(r);
        for e in edges {
            let (f1, f2) = self.general_sides(c, x, e);
            let (s, d) = (e.start, &e.normal);
            // r' J_i d = p_b' F_i d - (D r)_b . d: only the block's columns move.
            let slope = |fb: &DfBlock| {
                (0..fb.n)
                    .map(|i| {
                        let fd: f64 = (0..fb.n).map(|j| fb.at(i, j) * d[j]).sum();
                        pull[s + i] * fd - self.d[s + i] * r[s + i] * d[i]
                    })
                    .sum::<f64>()
            };
            out.push((slope(&f1), -slope(&f2)));
        }
    }

    /// `J'J` and `J'r` with the edges' blocks mixed by eq. 26.
    pub(super) fn general_normal_equations(
        &self,
        c: &Constraints,
        x: &[f64],
        r: &[f64],
        edges: &[Edge],
        mixes: &[EdgeMix],
    ) -> NormalEquations {
        let mut f = self.general_df(c, x, &self.general_regions(c, x));
        for m in mixes {
            let e = &edges[m.edge];
            let (f1, f2) = self.general_sides(c, x, e);
            f[e.tag] = f1.mix(m.plus, &f2, m.minus);
        }
        let pull = self.pullback(r);
        NormalEquations {
            gradient: self.general_jt_from_pullback(&f, &pull, r),
            jtj: self.general_normal_matrix(&f),
        }
    }
}

impl ImplicitNcp {
    /// Block `k`'s implicit map ([`BlockMap`]): its constraint with its bias (a Coulomb
    /// contact on the Coulomb path). Here, not in `ncp`, because the maps of `kinds` build on
    /// `ncp`'s Coulomb functions.
    pub fn block_map(&self, k: usize) -> BlockMap<'_> {
        match self.constraints() {
            Some(c) => BlockMap::new(&c.blocks()[k], self.bias(k)),
            None => BlockMap::coulomb(self.mu(k), self.bias(k)),
        }
    }
}
