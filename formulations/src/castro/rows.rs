//! The contact Jacobian contact by contact: each contact's three rows of `J` (eq. 18's `J_i`)
//! over the velocities they touch, flat across contacts.
//!
//! A scene hands `J` over column by column (faer's CSC), but everything SAP does with it is per
//! contact: the Delassus estimate of eqs. 29-30, the islands, `J_i v`, `J_i' gamma_i` and
//! `J_i' G_i J_i`. The build turns `J` around once ([`ContactRows::of_jacobian`]), and the
//! regularisation and the cost both read that copy; the cost then renames its columns to its
//! unknowns ([`ContactRows::rename_columns`]).

use faer::sparse::SparseColMat;
use nalgebra::Vector3;

/// Per contact, its Jacobian rows over the columns they touch, flat across contacts.
#[derive(Debug, Clone, Default)]
pub(super) struct ContactRows {
    /// Contact `i`'s columns are `cols[start[i]..start[i + 1]]` (ascending).
    pub start: Vec<usize>,
    pub cols: Vec<usize>,
    /// Contact `i`'s three rows over its `m` columns, row-major, from `3 start[i]`.
    pub vals: Vec<f64>,
}

impl ContactRows {
    /// `J` (`3 nc x nv`, rows normal first per contact) turned around: two passes over its
    /// entries, one to count each contact's columns and one to fill them. Columns come out
    /// ascending, since `J`'s columns are visited in order.
    pub fn of_jacobian(j: &SparseColMat<usize, f64>) -> ContactRows {
        Self::turned::<false>(j).0
    }

    /// [`ContactRows::of_jacobian`], and where each of `J`'s stored entries went in `vals`: with
    /// those places, [`ContactRows::placed`] turns around the next `J` of the same pattern in
    /// one pass.
    pub fn of_jacobian_placed(j: &SparseColMat<usize, f64>) -> (ContactRows, Vec<usize>) {
        Self::turned::<true>(j)
    }

    /// `J` turned around by the places [`ContactRows::of_jacobian_placed`] found for a `J` of
    /// the same pattern, whose rows' `start` and `cols` these are.
    pub fn placed(
        j: &SparseColMat<usize, f64>,
        (start, cols): (&[usize], &[usize]),
        places: &[usize],
    ) -> ContactRows {
        let mut vals = vec![0.0; 3 * cols.len()];
        for (&at, &v) in places.iter().zip(j.val()) {
            vals[at] += v;
        }
        ContactRows {
            start: start.to_vec(),
            cols: cols.to_vec(),
            vals,
        }
    }

    /// The two passes of [`ContactRows::of_jacobian`], keeping each entry's place when `PLACES`.
    fn turned<const PLACES: bool>(j: &SparseColMat<usize, f64>) -> (ContactRows, Vec<usize>) {
        let nc = j.nrows() / 3;
        let (jcp, jri, jv) = (j.symbolic().col_ptr(), j.symbolic().row_idx(), j.val());
        // The last column counted per contact: a column holds up to three rows of a contact.
        let mut last = vec![usize::MAX; nc];
        let mut start = vec![0usize; nc + 1];
        for c in 0..j.ncols() {
            for &r in &jri[jcp[c]..jcp[c + 1]] {
                let i = r / 3;
                if last[i] != c {
                    last[i] = c;
                    start[i + 1] += 1;
                }
            }
        }
        for i in 0..nc {
            start[i + 1] += start[i];
        }
        let total = start[nc];
        let mut cols = vec![0; total];
        let mut vals = vec![0.0; 3 * total];
        let mut places = if PLACES {
            vec![0; jv.len()]
        } else {
            Vec::new()
        };
        // The next free column per contact; `last` again marks the column being filled.
        let mut fill = start[..nc].to_vec();
        last.fill(usize::MAX);
        for c in 0..j.ncols() {
            let (mut e, end) = (jcp[c], jcp[c + 1]);
            // A contact's rows in a column mostly come together: one lookup per run of them.
            while e < end {
                let i = jri[e] / 3;
                if last[i] != c {
                    last[i] = c;
                    cols[fill[i]] = c;
                    fill[i] += 1;
                }
                let (s, m) = (start[i], start[i + 1] - start[i]);
                let at = 3 * s + (fill[i] - 1 - s);
                while e < end && jri[e] / 3 == i {
                    let place = at + (jri[e] % 3) * m;
                    vals[place] += jv[e];
                    if PLACES {
                        places[e] = place;
                    }
                    e += 1;
                }
            }
        }
        (ContactRows { start, cols, vals }, places)
    }

    /// Number of contacts.
    pub fn num(&self) -> usize {
        self.start.len() - 1
    }

    /// Contact `i`'s columns and its `3 x m` rows.
    #[inline]
    pub fn of(&self, i: usize) -> (&[usize], &[f64]) {
        let (a, b) = (self.start[i], self.start[i + 1]);
        (&self.cols[a..b], &self.vals[3 * a..3 * b])
    }

    /// Renames every column `c` to `map[c]` and keeps each contact's columns ascending (a
    /// contact whose columns change order under `map` has its rows permuted with them).
    pub fn rename_columns(&mut self, map: &[usize]) {
        let mut order: Vec<usize> = Vec::new();
        let mut scratch: Vec<f64> = Vec::new();
        for i in 0..self.num() {
            let (a, b) = (self.start[i], self.start[i + 1]);
            let cols = &mut self.cols[a..b];
            cols.iter_mut().for_each(|c| *c = map[*c]);
            if cols.is_sorted() {
                continue;
            }
            let m = b - a;
            order.clear();
            order.extend(0..m);
            order.sort_unstable_by_key(|&k| cols[k]);
            let sorted: Vec<usize> = order.iter().map(|&k| cols[k]).collect();
            cols.copy_from_slice(&sorted);
            let rows = &mut self.vals[3 * a..3 * b];
            scratch.clear();
            scratch.extend_from_slice(rows);
            for r in 0..3 {
                for (k, &from) in order.iter().enumerate() {
                    rows[r * m + k] = scratch[r * m + from];
                }
            }
        }
    }

    /// `J_i x`.
    #[inline]
    pub fn times(&self, i: usize, x: &[f64]) -> Vector3<f64> {
        let (cols, rows) = self.of(i);
        let m = cols.len();
        let mut out = Vector3::zeros();
        for (k, &c) in cols.iter().enumerate() {
            let xc = x[c];
            out[0] += rows[k] * xc;
            out[1] += rows[m + k] * xc;
            out[2] += rows[2 * m + k] * xc;
        }
        out
    }

    /// `out -= J_i' gamma`.
    #[inline]
    pub fn sub_transpose(&self, i: usize, gamma: &Vector3<f64>, out: &mut [f64]) {
        let (cols, rows) = self.of(i);
        let m = cols.len();
        for (k, &c) in cols.iter().enumerate() {
            out[c] -= rows[k] * gamma[0] + rows[m + k] * gamma[1] + rows[2 * m + k] * gamma[2];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::sparse::Triplet;

    /// Two contacts over five columns, neither touching column 2.
    fn jacobian() -> SparseColMat<usize, f64> {
        let t = [
            (0, 0, 1.0),
            (1, 0, 2.0),
            (2, 4, 3.0),
            (3, 1, 4.0),
            (5, 3, 5.0),
            (4, 1, 6.0),
            (3, 4, 7.0),
            (0, 3, 8.0),
        ];
        let t: Vec<_> = t.iter().map(|&(r, c, v)| Triplet::new(r, c, v)).collect();
        SparseColMat::try_new_from_triplets(6, 5, &t).unwrap()
    }

    #[test]
    fn turned_around_rows_reproduce_j_x_and_j_transpose_gamma() {
        let j = jacobian();
        let rows = ContactRows::of_jacobian(&j);
        assert_eq!(rows.of(0).0, &[0, 3, 4]);
        assert_eq!(rows.of(1).0, &[1, 3, 4]);
        let dense = j.to_dense();
        let x = [0.5, -1.0, 2.0, 0.25, -3.0];
        for i in 0..2 {
            let jx = rows.times(i, &x);
            for r in 0..3 {
                let want: f64 = (0..5).map(|c| dense[(3 * i + r, c)] * x[c]).sum();
                assert_eq!(jx[r], want, "contact {i} row {r}");
            }
            let gamma = Vector3::new(1.0, -2.0, 0.5);
            let mut out = vec![0.0; 5];
            rows.sub_transpose(i, &gamma, &mut out);
            for c in 0..5 {
                let want: f64 = -(0..3)
                    .map(|r| dense[(3 * i + r, c)] * gamma[r])
                    .sum::<f64>();
                assert_eq!(out[c], want, "contact {i} column {c}");
            }
        }
    }

    #[test]
    fn renamed_columns_stay_ascending_with_their_rows() {
        let j = jacobian();
        let mut rows = ContactRows::of_jacobian(&j);
        // Reverse the columns: every contact's order flips.
        let map = [4, 3, 2, 1, 0];
        rows.rename_columns(&map);
        let dense = j.to_dense();
        for i in 0..2 {
            let (cols, vals) = rows.of(i);
            assert!(cols.is_sorted());
            let m = cols.len();
            for (k, &c) in cols.iter().enumerate() {
                let old = map.iter().position(|&n| n == c).unwrap();
                for r in 0..3 {
                    assert_eq!(vals[r * m + k], dense[(3 * i + r, old)]);
                }
            }
        }
    }
}
