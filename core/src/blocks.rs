//! A square matrix kept as 3x3 blocks, compressed by block row: the storage of a Delassus
//! matrix `W = J A^-1 J'` in which block `(a, b)` is non-zero only when contacts `a` and `b`
//! touch a common body (a common kinematic tree).
//!
//! A contact's three rows stay together (normal first, `[n, t1, t2]`), which is the layout a
//! per-contact sweep walks ([`crate::drivers::sweep`]) and in which `W` of a scene with many
//! separate bodies has `O(nc)` blocks instead of `nc^2`. It is one of the storages of
//! [`crate::Matrix`]; [`crate::GeneralizedProblem::to_local_blocks`] builds it from `J` and the
//! factors of `A`'s diagonal blocks without forming a dense product.

use faer::Mat;
use nalgebra::{Matrix3, Vector3};

/// A `3n x 3n` matrix stored as its non-zero 3x3 blocks, block row by block row.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockMatrix {
    /// Block rows (and columns) `n`.
    n: usize,
    /// Block row `a` holds entries `row_start[a]..row_start[a + 1]`.
    row_start: Vec<usize>,
    /// Block column of each stored block, increasing within a row.
    col: Vec<usize>,
    /// The stored blocks.
    val: Vec<Matrix3<f64>>,
}

impl BlockMatrix {
    /// A `3n x 3n` matrix from `(block row, block column, block)` triples, duplicates summed
    /// (triples outside the matrix are dropped).
    pub fn from_blocks(n: usize, mut blocks: Vec<(usize, usize, Matrix3<f64>)>) -> BlockMatrix {
        blocks.retain(|&(a, b, _)| a < n && b < n);
        blocks.sort_unstable_by_key(|&(a, b, _)| (a, b));
        let mut row_start = vec![0; n + 1];
        let mut col: Vec<usize> = Vec::with_capacity(blocks.len());
        let mut val: Vec<Matrix3<f64>> = Vec::with_capacity(blocks.len());
        let mut last: Option<(usize, usize)> = None;
        for (a, b, m) in blocks {
            if last == Some((a, b)) {
                if let Some(v) = val.last_mut() {
                    *v += m;
                }
                continue;
            }
            last = Some((a, b));
            row_start[a + 1] += 1;
            col.push(b);
            val.push(m);
        }
        for a in 0..n {
            row_start[a + 1] += row_start[a];
        }
        BlockMatrix {
            n,
            row_start,
            col,
            val,
        }
    }

    /// The non-zero 3x3 blocks of a `3n x 3n` matrix given entry by entry (`visit` calls its
    /// argument once per stored entry; entries of one position are summed, entries outside the
    /// matrix dropped). Sorting the entries costs `O(nnz log nnz)`.
    pub fn from_entries(n: usize, visit: impl FnOnce(&mut dyn FnMut(usize, usize, f64))) -> Self {
        let mut entries: Vec<(usize, usize, f64)> = Vec::new();
        visit(&mut |i, j, v| {
            if v != 0.0 && i < 3 * n && j < 3 * n {
                entries.push((i, j, v));
            }
        });
        entries.sort_unstable_by_key(|&(i, j, _)| (i / 3, j / 3));
        let mut blocks: Vec<(usize, usize, Matrix3<f64>)> = Vec::new();
        for (i, j, v) in entries {
            let (a, b) = (i / 3, j / 3);
            match blocks.last_mut() {
                Some((la, lb, m)) if *la == a && *lb == b => m[(i % 3, j % 3)] += v,
                _ => {
                    let mut m = Matrix3::zeros();
                    m[(i % 3, j % 3)] = v;
                    blocks.push((a, b, m));
                }
            }
        }
        BlockMatrix::from_blocks(n, blocks)
    }

    /// The non-zero blocks of a dense `3n x 3n` matrix.
    pub fn from_dense(d: faer::MatRef<'_, f64>) -> BlockMatrix {
        let n = d.nrows() / 3;
        let mut blocks = Vec::new();
        for a in 0..n {
            for b in 0..n {
                let m = dense_block(d, a, b);
                if m != Matrix3::zeros() {
                    blocks.push((a, b, m));
                }
            }
        }
        BlockMatrix::from_blocks(n, blocks)
    }

    /// Block rows (and block columns) `n`: the matrix is `3n x 3n`.
    pub fn num_block_rows(&self) -> usize {
        self.n
    }

    /// Number of stored blocks.
    pub fn num_blocks(&self) -> usize {
        self.val.len()
    }

    /// Block row `a`: its stored `(block column, block)` pairs, columns increasing.
    pub fn row(&self, a: usize) -> impl Iterator<Item = (usize, &Matrix3<f64>)> + '_ {
        let range = self.row_start[a]..self.row_start[a + 1];
        self.col[range.clone()]
            .iter()
            .copied()
            .zip(&self.val[range])
    }

    /// Block `(a, b)` (zero when not stored).
    pub fn block(&self, a: usize, b: usize) -> Matrix3<f64> {
        let range = self.row_start[a]..self.row_start[a + 1];
        match self.col[range.clone()].binary_search(&b) {
            Ok(k) => self.val[range.start + k],
            Err(_) => Matrix3::zeros(),
        }
    }

    /// `out = A x`.
    pub fn mul_vec(&self, x: &[f64], out: &mut [f64]) {
        for a in 0..self.n {
            let mut s = Vector3::zeros();
            for (b, m) in self.row(a) {
                s += m * Vector3::new(x[3 * b], x[3 * b + 1], x[3 * b + 2]);
            }
            out[3 * a..3 * a + 3].copy_from_slice(s.as_slice());
        }
    }

    /// `out = A' x`.
    pub fn mul_transpose_vec(&self, x: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = 0.0);
        for a in 0..self.n {
            let xa = Vector3::new(x[3 * a], x[3 * a + 1], x[3 * a + 2]);
            for (b, m) in self.row(a) {
                let y = m.transpose() * xa;
                for i in 0..3 {
                    out[3 * b + i] += y[i];
                }
            }
        }
    }

    /// Visits every entry of every stored block as `(row, col, value)`.
    pub fn for_each_entry(&self, mut visit: impl FnMut(usize, usize, f64)) {
        for a in 0..self.n {
            for (b, m) in self.row(a) {
                for j in 0..3 {
                    for i in 0..3 {
                        visit(3 * a + i, 3 * b + j, m[(i, j)]);
                    }
                }
            }
        }
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Mat<f64> {
        let mut d = Mat::zeros(3 * self.n, 3 * self.n);
        self.for_each_entry(|i, j, v| d[(i, j)] = v);
        d
    }

    /// The symmetric part `(A + A') / 2`, in block storage.
    pub fn symmetric_part(&self) -> BlockMatrix {
        let mut blocks = Vec::with_capacity(2 * self.val.len());
        for a in 0..self.n {
            for (b, m) in self.row(a) {
                blocks.push((a, b, 0.5 * m));
                blocks.push((b, a, 0.5 * m.transpose()));
            }
        }
        BlockMatrix::from_blocks(self.n, blocks)
    }

    /// The principal sub-matrix of the block rows and columns `keep` (in that order).
    pub fn principal(&self, keep: &[usize]) -> BlockMatrix {
        let mut new_index = vec![usize::MAX; self.n];
        for (k, &a) in keep.iter().enumerate() {
            new_index[a] = k;
        }
        let mut blocks = Vec::new();
        for (k, &a) in keep.iter().enumerate() {
            for (b, m) in self.row(a) {
                if new_index[b] != usize::MAX {
                    blocks.push((k, new_index[b], *m));
                }
            }
        }
        BlockMatrix::from_blocks(keep.len(), blocks)
    }
}

/// Block `(a, b)` of a dense `3n x 3n` matrix.
pub(crate) fn dense_block(d: faer::MatRef<'_, f64>, a: usize, b: usize) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| d[(3 * a + i, 3 * b + j)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BlockMatrix {
        let m = |s: f64| Matrix3::from_fn(|i, j| s + (3 * i + j) as f64);
        BlockMatrix::from_blocks(
            3,
            vec![
                (2, 0, m(10.0)),
                (0, 0, m(1.0)),
                (0, 2, m(20.0)),
                (0, 0, m(1.0)),
                (1, 1, m(5.0)),
            ],
        )
    }

    #[test]
    fn duplicate_blocks_are_summed_and_rows_sorted() {
        let w = sample();
        assert_eq!(w.num_blocks(), 4);
        assert_eq!(w.block(0, 0)[(0, 1)], 2.0 * (1.0 + 1.0));
        assert_eq!(w.block(1, 0), Matrix3::zeros());
        let cols: Vec<usize> = w.row(0).map(|(b, _)| b).collect();
        assert_eq!(cols, vec![0, 2]);
    }

    #[test]
    fn products_and_dense_copy_agree_with_dense_arithmetic() {
        let w = sample();
        let d = w.to_dense();
        let x: Vec<f64> = (0..9).map(|i| (i as f64 * 0.7).sin()).collect();
        let (mut y, mut yt) = (vec![0.0; 9], vec![0.0; 9]);
        w.mul_vec(&x, &mut y);
        w.mul_transpose_vec(&x, &mut yt);
        for i in 0..9 {
            let yi: f64 = (0..9).map(|j| d[(i, j)] * x[j]).sum();
            let yti: f64 = (0..9).map(|j| d[(j, i)] * x[j]).sum();
            assert!((y[i] - yi).abs() < 1e-12 && (yt[i] - yti).abs() < 1e-12);
        }
        assert_eq!(BlockMatrix::from_dense(d.as_ref()), w);
        let again = BlockMatrix::from_entries(3, |visit| w.for_each_entry(visit));
        assert_eq!(again, w);
    }

    #[test]
    fn the_symmetric_part_and_principal_blocks_are_exact() {
        let w = sample();
        let s = w.symmetric_part().to_dense();
        let d = w.to_dense();
        for i in 0..9 {
            for j in 0..9 {
                assert_eq!(s[(i, j)], 0.5 * (d[(i, j)] + d[(j, i)]));
            }
        }
        let p = w.principal(&[2, 0]);
        assert_eq!(p.block(0, 1), w.block(2, 0));
        assert_eq!(p.block(1, 0), w.block(0, 2));
        assert_eq!(p.block(1, 1), w.block(0, 0));
        assert_eq!(p.num_blocks(), 3);
    }
}
