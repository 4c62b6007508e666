//! Cholesky factorization `H = L L'` of a symmetric positive definite matrix made of dense
//! blocks on a sparse block graph: the Hessian `A + J' G J` of a contact problem in
//! generalized velocities, whose blocks are the kinematic trees (`A` is block diagonal by
//! tree) and whose off-diagonal blocks are the pairs of trees some contact touches.
//!
//! Why not a general sparse Cholesky: the scalar pattern of such a Hessian is a union of dense
//! `n_t x n_t` blocks (6 x 6 for a free body), so the supernodes are known before any analysis,
//! the symbolic work is on the tree graph (tens of nodes, not hundreds of unknowns), and the
//! numeric work is small dense block products with no scatter through index lists. This is the
//! "dense per-tree blocks" layout MuJoCo's Newton solver exploits through its own sparse
//! Cholesky; the algorithm here is the textbook one.
//!
//! - Ordering: minimum degree on the block graph, degrees weighted by block size (George and
//!   Liu, *Computer Solution of Large Sparse Positive Definite Systems*, 1981, ch. 5), ties to
//!   the lowest index so the ordering is deterministic. Eliminating a block joins its remaining
//!   neighbours into a clique: that clique is the block's column of `L`, fill included.
//! - Numeric: right-looking block Cholesky (Golub and Van Loan, *Matrix Computations*, 4th ed.,
//!   sec. 4.2.9): factor the diagonal block, solve the column's blocks against it, update the
//!   trailing blocks `L_ij -= L_ik L_jk'`. Every update's source and target are resolved once in
//!   the analysis, so a factorization allocates nothing.
//! - Storage: one flat buffer; each block column-major; the diagonal blocks in full (only
//!   their lower triangle is read), each off-diagonal block once, in the orientation `L` has.
//! - Reuse: the analysis depends on the block graph alone, so a caller stepping a simulation
//!   keeps it across steps while the graph repeats ([`AnalysisMemo`], [`with_memo`]): the
//!   ordering is most of a small factorization's analysis, and the factor does not change.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

use crate::error::CoreError;

/// Where a block of `H` lives in the values buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSlot {
    /// Offset of the stored block's first entry.
    pub offset: usize,
    /// Leading dimension (rows) of the stored block.
    pub ld: usize,
    /// Whether the stored block is the transpose of the one asked for.
    pub transposed: bool,
}

impl BlockSlot {
    /// Index in the values buffer of entry `(r, c)` of the block asked for (`r` a row of the
    /// first block, `c` a column of the second).
    #[inline]
    pub fn at(&self, r: usize, c: usize) -> usize {
        if self.transposed {
            self.offset + r * self.ld + c
        } else {
            self.offset + c * self.ld + r
        }
    }
}

/// One trailing update `L_ij -= L_ik L_jk'` with its blocks resolved.
#[derive(Debug, Clone, Copy)]
struct Update {
    /// `L_ik` (rows of block `i`, columns of block `k`).
    src_i: usize,
    /// `L_jk`.
    src_j: usize,
    /// The target `L_ij` (or the diagonal block when `i == j`).
    dst: usize,
    /// Rows of block `i`, of block `j`, columns of block `k`.
    ni: usize,
    nj: usize,
    nk: usize,
    /// `i == j`: only the lower triangle of the target is updated.
    diagonal: bool,
}

/// An eliminated block: its diagonal and its column of `L`.
#[derive(Debug, Clone)]
struct Column {
    /// The block (index into the caller's blocks).
    block: usize,
    /// Offset of its diagonal block; its values (diagonal, then the blocks below) run to `end`.
    diag: usize,
    end: usize,
    /// The off-diagonal blocks of its column: `(block, offset)`, rows of `block`.
    below: Vec<(usize, usize)>,
    /// Its trailing updates.
    updates: std::ops::Range<usize>,
}

/// The symbolic analysis of a block Cholesky factorization: the ordering, the factor's layout
/// and every trailing update resolved. It is a pure function of the block sizes and the set of
/// coupled pairs, so one analysis serves every matrix on the same block graph
/// ([`AnalysisMemo`]).
#[derive(Debug)]
struct Analysis {
    /// First unknown of each block; block `b` is `start[b]..start[b + 1]`.
    start: Vec<usize>,
    /// Elimination position of each block.
    position: Vec<usize>,
    /// Columns of `L` in elimination order.
    columns: Vec<Column>,
    updates: Vec<Update>,
    /// Per block, its off-diagonal neighbours in `L` and their block offsets, sorted by block:
    /// the lookup behind [`BlockCholesky::slot`].
    lookup: Vec<Vec<(usize, usize)>>,
    /// Stored values, fill included.
    num_values: usize,
}

/// The symbolic analysis (shared) and numeric storage of a block Cholesky factorization.
#[derive(Debug, Clone)]
pub struct BlockCholesky {
    analysis: Arc<Analysis>,
    values: Vec<f64>,
}

impl BlockCholesky {
    /// The analysis for blocks of sizes `sizes` (consecutive ranges of the unknowns) coupled
    /// by the pairs `edges` (either order, repeats and self-pairs ignored).
    pub fn new(sizes: &[usize], edges: &[(usize, usize)]) -> Result<BlockCholesky, CoreError> {
        let nb = sizes.len();
        if let Some(&(a, b)) = edges.iter().find(|&&(a, b)| a >= nb || b >= nb) {
            return Err(CoreError::LinearAlgebra(format!(
                "block Cholesky: edge ({a}, {b}) names a block beyond the {nb} blocks"
            )));
        }
        let mut start = Vec::with_capacity(nb + 1);
        start.push(0);
        for &s in sizes {
            start.push(start.last().copied().unwrap_or(0) + s);
        }
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for &(a, b) in edges {
            if a != b {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
        for row in &mut adj {
            row.sort_unstable();
            row.dedup();
        }
        let (order, patterns) = minimum_degree(sizes, adj);
        let mut position = vec![0; nb];
        for (k, &b) in order.iter().enumerate() {
            position[b] = k;
        }
        // Lay out the blocks: per column, the diagonal then the blocks below it.
        let mut offset = 0;
        let mut columns = Vec::with_capacity(nb);
        let mut lookup: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nb];
        for (&b, pattern) in order.iter().zip(&patterns) {
            let diag = offset;
            offset += sizes[b] * sizes[b];
            let mut below = Vec::with_capacity(pattern.len());
            for &i in pattern {
                below.push((i, offset));
                lookup[b].push((i, offset));
                lookup[i].push((b, offset));
                offset += sizes[i] * sizes[b];
            }
            columns.push(Column {
                block: b,
                diag,
                end: offset,
                below,
                updates: 0..0,
            });
        }
        for row in &mut lookup {
            row.sort_unstable();
        }
        let mut analysis = Analysis {
            start,
            position,
            columns,
            updates: Vec::new(),
            lookup,
            num_values: offset,
        };
        analysis.resolve_updates(sizes);
        Ok(BlockCholesky {
            analysis: Arc::new(analysis),
            values: vec![0.0; offset],
        })
    }
}

impl Analysis {
    /// Resolves every trailing update's blocks (the fill makes every target exist).
    fn resolve_updates(&mut self, sizes: &[usize]) {
        let mut updates = Vec::new();
        for k in 0..self.columns.len() {
            let first = updates.len();
            let col = &self.columns[k];
            let nk = sizes[col.block];
            for (x, &(i, off_i)) in col.below.iter().enumerate() {
                for &(j, off_j) in &col.below[..=x] {
                    // The target L_hi,lo has the later-eliminated block's rows.
                    let ((hi, off_hi), (lo, off_lo)) = if self.position[i] >= self.position[j] {
                        ((i, off_i), (j, off_j))
                    } else {
                        ((j, off_j), (i, off_i))
                    };
                    let dst = if hi == lo {
                        self.columns[self.position[hi]].diag
                    } else {
                        self.stored_offset(hi, lo)
                            .expect("elimination fill makes every trailing target a stored block")
                    };
                    updates.push(Update {
                        src_i: off_hi,
                        src_j: off_lo,
                        dst,
                        ni: sizes[hi],
                        nj: sizes[lo],
                        nk,
                        diagonal: hi == lo,
                    });
                }
            }
            self.columns[k].updates = first..updates.len();
        }
        self.updates = updates;
    }

    /// Offset of the stored block between `a` and `b` (`a != b`).
    fn stored_offset(&self, a: usize, b: usize) -> Option<usize> {
        let row = &self.lookup[a];
        row.binary_search_by_key(&b, |&(n, _)| n)
            .ok()
            .map(|p| row[p].1)
    }
}

impl BlockCholesky {
    /// Number of blocks.
    pub fn num_blocks(&self) -> usize {
        self.analysis.start.len() - 1
    }

    /// Number of unknowns.
    pub fn dim(&self) -> usize {
        self.analysis.start.last().copied().unwrap_or(0)
    }

    /// Number of stored values (the factor's size, fill included).
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    /// The unknowns of block `b`.
    pub fn range(&self, b: usize) -> std::ops::Range<usize> {
        self.analysis.start[b]..self.analysis.start[b + 1]
    }

    /// Where block `(a, b)` of `H` is stored (rows of `a`, columns of `b`); `None` for two
    /// blocks the graph does not couple. Of a diagonal block only the lower triangle is read;
    /// of the pair `(a, b)`, `(b, a)` only one is stored: add each coupling once.
    pub fn slot(&self, a: usize, b: usize) -> Option<BlockSlot> {
        let na = self.analysis.start[a + 1] - self.analysis.start[a];
        let nb = self.analysis.start[b + 1] - self.analysis.start[b];
        if a == b {
            return Some(BlockSlot {
                offset: self.analysis.columns[self.analysis.position[a]].diag,
                ld: na,
                transposed: false,
            });
        }
        let offset = self.analysis.stored_offset(a, b)?;
        // The block is stored with the later-eliminated block's rows.
        Some(if self.analysis.position[a] > self.analysis.position[b] {
            BlockSlot {
                offset,
                ld: na,
                transposed: false,
            }
        } else {
            BlockSlot {
                offset,
                ld: nb,
                transposed: true,
            }
        })
    }

    /// The values buffer, to assemble `H` into (see [`BlockCholesky::slot`]).
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Sets every stored value to zero.
    pub fn clear(&mut self) {
        self.values.iter_mut().for_each(|v| *v = 0.0);
    }

    /// Factors the assembled `H` in place. `Err(b)`: the diagonal block of block `b` met a
    /// pivot that is not positive (`H` is not positive definite, to working precision).
    pub fn factor(&mut self) -> Result<(), usize> {
        self.factor_where(|_| true)
    }

    /// Copies the columns of the blocks `keep` selects from `h` (an assembled `H` in the layout
    /// of [`BlockCholesky::values_mut`], kept by the caller across factorizations) and factors
    /// them ([`BlockCholesky::factor_where`]): the other blocks keep their factor.
    pub fn factor_from(&mut self, h: &[f64], keep: impl Fn(usize) -> bool) -> Result<(), usize> {
        for col in self.analysis.columns.iter().filter(|c| keep(c.block)) {
            self.values[col.diag..col.end].copy_from_slice(&h[col.diag..col.end]);
        }
        self.factor_where(keep)
    }

    /// [`BlockCholesky::factor`] on the blocks `keep` selects, which must be a union of
    /// connected components of the block graph (islands): no update crosses between
    /// components, so the kept blocks' factor is the one [`BlockCholesky::factor`] would
    /// make, and the others' values are left as they were.
    pub fn factor_where(&mut self, keep: impl Fn(usize) -> bool) -> Result<(), usize> {
        let v = &mut self.values;
        for col in self.analysis.columns.iter().filter(|c| keep(c.block)) {
            let nk = self.analysis.start[col.block + 1] - self.analysis.start[col.block];
            if dense_llt(&mut v[col.diag..col.diag + nk * nk], nk).is_err() {
                return Err(col.block);
            }
            for &(i, off) in &col.below {
                let ni = self.analysis.start[i + 1] - self.analysis.start[i];
                let (head, tail) = v.split_at_mut(off);
                solve_below(
                    &head[col.diag..col.diag + nk * nk],
                    nk,
                    &mut tail[..ni * nk],
                    ni,
                );
            }
            for u in &self.analysis.updates[col.updates.clone()] {
                apply_update(v, u);
            }
        }
        Ok(())
    }

    /// Solves `H x = rhs` in place with the factor (after [`BlockCholesky::factor`]).
    pub fn solve_in_place(&self, rhs: &mut [f64]) {
        self.solve_in_place_where(rhs, |_| true)
    }

    /// [`BlockCholesky::solve_in_place`] on the blocks `keep` selects (a union of components,
    /// factored by [`BlockCholesky::factor_where`]); the other entries of `rhs` are untouched.
    pub fn solve_in_place_where(&self, rhs: &mut [f64], keep: impl Fn(usize) -> bool) {
        let v = &self.values;
        // L y = rhs, column by column in elimination order.
        for col in self.analysis.columns.iter().filter(|c| keep(c.block)) {
            let r = self.range(col.block);
            let nk = r.len();
            dense_forward(&v[col.diag..col.diag + nk * nk], nk, &mut rhs[r.clone()]);
            for &(i, off) in &col.below {
                let ri = self.range(i);
                let ni = ri.len();
                let l = &v[off..off + ni * nk];
                for c in 0..nk {
                    let y = rhs[r.start + c];
                    for (out, lv) in rhs[ri.clone()].iter_mut().zip(&l[c * ni..(c + 1) * ni]) {
                        *out -= lv * y;
                    }
                }
            }
        }
        // L' x = y, in reverse.
        for col in self.analysis.columns.iter().rev().filter(|c| keep(c.block)) {
            let r = self.range(col.block);
            let nk = r.len();
            for &(i, off) in &col.below {
                let ri = self.range(i);
                let ni = ri.len();
                let l = &v[off..off + ni * nk];
                for c in 0..nk {
                    let mut s = 0.0;
                    for (lv, x) in l[c * ni..(c + 1) * ni].iter().zip(&rhs[ri.clone()]) {
                        s += lv * x;
                    }
                    rhs[r.start + c] -= s;
                }
            }
            dense_backward(&v[col.diag..col.diag + nk * nk], nk, &mut rhs[r]);
        }
    }
}

/// How many analyses, and how many of a caller's structures, a memo keeps: a step solved
/// island by island makes one per island, and the islands of one step mostly come back in the
/// next.
pub const MEMO_ENTRIES: usize = 32;

/// The last analyses made ([`MEMO_ENTRIES`] of them) and the graphs they were made for, each
/// reused while its graph repeats: a scene's contacts join mostly the same pairs of bodies from
/// one step to the next, and the ordering is the costly part of a small factorization. Since an
/// analysis is a pure function of `(sizes, edges)` (edges as a set), reusing it cannot change a
/// factor. Beside them, a caller may keep its own structures of the last problems
/// ([`AnalysisMemo::kept`]). The oldest entry makes way for a new one.
#[derive(Default)]
pub struct AnalysisMemo {
    analyses: Vec<MemoEntry>,
    /// Where the next new analysis goes once `analyses` is full.
    next_analysis: usize,
    scratch: Vec<(usize, usize)>,
    /// A caller's own structures, of its own types.
    kept: Vec<Box<dyn Any + Send>>,
    next_kept: usize,
}

/// An analysis and its graph: the block sizes, and the edges as a set (each pair `(low, high)`,
/// sorted, self-pairs dropped).
type MemoEntry = (Vec<usize>, Vec<(usize, usize)>, Arc<Analysis>);

impl std::fmt::Debug for AnalysisMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnalysisMemo")
            .field("analyses", &self.analyses.len())
            .field("kept", &self.kept.len())
            .finish()
    }
}

/// Puts `item` in the first free place of `entries` (at most [`MEMO_ENTRIES`]), else in place
/// of the entry at `next`, which moves on round the ring.
fn ring_push<T>(entries: &mut Vec<T>, next: &mut usize, item: T) {
    if entries.len() < MEMO_ENTRIES {
        entries.push(item);
    } else {
        entries[*next] = item;
        *next = (*next + 1) % MEMO_ENTRIES;
    }
}

impl AnalysisMemo {
    /// [`BlockCholesky::new`] for `sizes` and `edges`, values zero, with the analysis reused when
    /// the memo holds one of the same graph; the flag says whether it did.
    pub fn factorization(
        &mut self,
        sizes: &[usize],
        edges: &[(usize, usize)],
    ) -> Result<(BlockCholesky, bool), CoreError> {
        self.scratch.clear();
        self.scratch.extend(
            edges
                .iter()
                .filter(|(a, b)| a != b)
                .map(|&(a, b)| (a.min(b), a.max(b))),
        );
        self.scratch.sort_unstable();
        self.scratch.dedup();
        let same = |(s, e, _): &&MemoEntry| s.as_slice() == sizes && *e == self.scratch;
        if let Some((_, _, analysis)) = self.analyses.iter().find(same) {
            let values = vec![0.0; analysis.num_values];
            let analysis = Arc::clone(analysis);
            return Ok((BlockCholesky { analysis, values }, true));
        }
        let chol = BlockCholesky::new(sizes, &self.scratch)?;
        let entry = (
            sizes.to_vec(),
            std::mem::take(&mut self.scratch),
            Arc::clone(&chol.analysis),
        );
        ring_push(&mut self.analyses, &mut self.next_analysis, entry);
        Ok((chol, false))
    }

    /// The kept structure of type `T` that `matches`, if any ([`AnalysisMemo::keep`]).
    pub fn kept<T: Any>(&mut self, matches: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.kept
            .iter_mut()
            .filter_map(|k| k.downcast_mut::<T>())
            .find(|k| matches(k))
    }

    /// Keeps `t` (in place of the oldest kept structure once the memo is full).
    pub fn keep<T: Any + Send>(&mut self, t: T) {
        ring_push(&mut self.kept, &mut self.next_kept, Box::new(t));
    }
}

thread_local! {
    /// The memo [`with_memo`] puts in force on this thread, else `None`.
    static MEMO: RefCell<Option<AnalysisMemo>> = const { RefCell::new(None) };
}

/// Runs `f` with `memo` in force on this thread ([`in_force`] lends it). For a sequence of related
/// problems, one memo each (a simulation's steps, solver by solver); not for repeated solves of
/// one problem that are timed from scratch (the speed protocol's "cold"), which pass none.
pub fn with_memo<R>(memo: &mut AnalysisMemo, f: impl FnOnce() -> R) -> R {
    /// Puts the caller's memo back, and the outer one in force, also when `f` unwinds.
    struct Restore<'a> {
        memo: &'a mut AnalysisMemo,
        outer: Option<AnalysisMemo>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let inner = MEMO.with_borrow_mut(|m| std::mem::replace(m, self.outer.take()));
            *self.memo = inner.unwrap_or_default();
        }
    }
    let outer = MEMO.with_borrow_mut(|m| m.replace(std::mem::take(memo)));
    let _restore = Restore { memo, outer };
    f()
}

/// Runs `f` on the memo [`with_memo`] put in force on this thread (`None`: none is). `f` must
/// not call [`in_force`] itself (the memo is lent to it).
pub fn in_force<R>(f: impl FnOnce(Option<&mut AnalysisMemo>) -> R) -> R {
    MEMO.with_borrow_mut(|m| f(m.as_mut()))
}

/// `L_ik <- H_ik L_kk^-T` in place (`lik`: `ni x nk`, column-major), row by row `L_kk x = h`:
/// column `c` is `(h_c - sum_{p < c} L_kk[c, p] L_ik[:, p]) / L_kk[c, c]` (a product with the
/// stored `1 / L_kk[c, c]`), whole columns at a time so that the inner loop runs down
/// contiguous memory. Free bodies' `6 x 6` blocks take a fixed-size path.
#[inline]
fn solve_below(lkk: &[f64], nk: usize, lik: &mut [f64], ni: usize) {
    if (ni, nk) == (6, 6) {
        solve_below_fixed::<6, 6>(lkk, lik);
        return;
    }
    for c in 0..nk {
        let (done, rest) = lik.split_at_mut(c * ni);
        let col = &mut rest[..ni];
        for p in 0..c {
            let l = lkk[p * nk + c];
            for (x, s) in col.iter_mut().zip(&done[p * ni..(p + 1) * ni]) {
                *x -= l * s;
            }
        }
        // The diagonal holds 1 / L_cc (dense_llt).
        let inv = lkk[c * nk + c];
        col.iter_mut().for_each(|x| *x *= inv);
    }
}

/// [`solve_below`] with the sizes known at compile time.
#[inline]
fn solve_below_fixed<const NI: usize, const NK: usize>(lkk: &[f64], lik: &mut [f64]) {
    let mut x = [[0.0; NI]; NK];
    for (c, xc) in x.iter_mut().enumerate() {
        xc.copy_from_slice(&lik[c * NI..(c + 1) * NI]);
    }
    for c in 0..NK {
        for p in 0..c {
            let l = lkk[p * NK + c];
            let xp = x[p];
            for (xc, xp) in x[c].iter_mut().zip(xp) {
                *xc -= l * xp;
            }
        }
        let inv = lkk[c * NK + c];
        x[c].iter_mut().for_each(|v| *v *= inv);
    }
    for (c, xc) in x.iter().enumerate() {
        lik[c * NI..(c + 1) * NI].copy_from_slice(xc);
    }
}

/// `dst -= src_i src_j'` (lower triangle only for a diagonal target). Blocks of a free body's
/// six velocities, the common case, take a fixed-size path the compiler unrolls.
#[inline]
fn apply_update(v: &mut [f64], u: &Update) {
    if (u.ni, u.nj, u.nk) == (6, 6, 6) {
        update_fixed::<6, 6, 6>(v, u);
        return;
    }
    let (ni, nj, nk) = (u.ni, u.nj, u.nk);
    for c in 0..nj {
        let r0 = if u.diagonal { c } else { 0 };
        for r in r0..ni {
            let mut s = 0.0;
            for p in 0..nk {
                s += v[u.src_i + p * ni + r] * v[u.src_j + p * nj + c];
            }
            v[u.dst + c * ni + r] -= s;
        }
    }
}

/// [`apply_update`] with the sizes known at compile time (the full target is updated, a
/// diagonal one too: its upper triangle is never read).
#[inline]
fn update_fixed<const NI: usize, const NJ: usize, const NK: usize>(v: &mut [f64], u: &Update) {
    let mut a = [[0.0; NI]; NK];
    let mut b = [[0.0; NJ]; NK];
    for p in 0..NK {
        a[p].copy_from_slice(&v[u.src_i + p * NI..u.src_i + (p + 1) * NI]);
        b[p].copy_from_slice(&v[u.src_j + p * NJ..u.src_j + (p + 1) * NJ]);
    }
    let dst = &mut v[u.dst..u.dst + NI * NJ];
    for c in 0..NJ {
        let mut col = [0.0; NI];
        for p in 0..NK {
            let bc = b[p][c];
            for r in 0..NI {
                col[r] += a[p][r] * bc;
            }
        }
        for r in 0..NI {
            dst[c * NI + r] -= col[r];
        }
    }
}

/// In-place dense Cholesky of the lower triangle of an `n x n` column-major block (the upper
/// triangle is not read); `Err(j)` at a pivot `j` that is not positive. The diagonal is left
/// holding `1 / L_jj`: every use of the factor divides by its diagonal, and a multiplication
/// costs a fraction of a division (divisions were most of a small block's time).
pub fn dense_llt(a: &mut [f64], n: usize) -> Result<(), usize> {
    for j in 0..n {
        let mut d = a[j * n + j];
        for p in 0..j {
            d -= a[p * n + j] * a[p * n + j];
        }
        if !(d > 0.0 && d.is_finite()) {
            return Err(j);
        }
        let inv = 1.0 / d.sqrt();
        a[j * n + j] = inv;
        for i in j + 1..n {
            let mut s = a[j * n + i];
            for p in 0..j {
                s -= a[p * n + i] * a[p * n + j];
            }
            a[j * n + i] = s * inv;
        }
    }
    Ok(())
}

/// Solves `L y = b` in place for the factor `l` of [`dense_llt`] (its diagonal `1 / L_jj`).
pub fn dense_forward(l: &[f64], n: usize, b: &mut [f64]) {
    for c in 0..n {
        let mut s = b[c];
        for p in 0..c {
            s -= l[p * n + c] * b[p];
        }
        b[c] = s * l[c * n + c];
    }
}

/// Solves `L' x = y` in place for the factor `l` of [`dense_llt`] (its diagonal `1 / L_jj`).
pub fn dense_backward(l: &[f64], n: usize, b: &mut [f64]) {
    for c in (0..n).rev() {
        let mut s = b[c];
        for p in c + 1..n {
            s -= l[c * n + p] * b[p];
        }
        b[c] = s * l[c * n + c];
    }
}

/// Minimum-degree elimination of the block graph: the order, and per eliminated block its
/// neighbours at elimination (its column of `L`, fill included), sorted.
fn minimum_degree(sizes: &[usize], mut adj: Vec<Vec<usize>>) -> (Vec<usize>, Vec<Vec<usize>>) {
    let nb = sizes.len();
    let mut alive = vec![true; nb];
    let mut order = Vec::with_capacity(nb);
    let mut patterns = Vec::with_capacity(nb);
    let weight = |row: &Vec<usize>| row.iter().map(|&n| sizes[n]).sum::<usize>();
    // Each block's degree in unknowns, kept current: only the eliminated block's neighbours'
    // rows change.
    let mut degree: Vec<usize> = adj.iter().map(weight).collect();
    for _ in 0..nb {
        let Some(b) = (0..nb)
            .filter(|&b| alive[b])
            .min_by_key(|&b| (degree[b], b))
        else {
            break;
        };
        alive[b] = false;
        let nbrs = std::mem::take(&mut adj[b]);
        for &n in &nbrs {
            // Remove b, add the rest of the clique.
            let row = &mut adj[n];
            row.retain(|&m| m != b);
            row.extend(nbrs.iter().copied().filter(|&m| m != n));
            row.sort_unstable();
            row.dedup();
            degree[n] = weight(row);
        }
        order.push(b);
        patterns.push(nbrs);
    }
    (order, patterns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random SPD matrix on a block graph: `B'B + I` restricted to the coupled blocks would
    /// not be SPD, so build `sum_e C_e' C_e + I` with each `C_e` over one edge's two blocks.
    fn random_problem(rng: &mut ChaCha8Rng, sizes: &[usize], edges: &[(usize, usize)]) -> Mat<f64> {
        let start: Vec<usize> = std::iter::once(0)
            .chain(sizes.iter().scan(0, |s, &n| {
                *s += n;
                Some(*s)
            }))
            .collect();
        let n = start[sizes.len()];
        let mut h = Mat::<f64>::identity(n, n);
        for &(a, b) in edges {
            let idx: Vec<usize> = (start[a]..start[a + 1])
                .chain(start[b]..start[b + 1])
                .collect();
            for _ in 0..3 {
                let row: Vec<f64> = idx.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
                for (x, &p) in idx.iter().enumerate() {
                    for (y, &q) in idx.iter().enumerate() {
                        h[(p, q)] += row[x] * row[y];
                    }
                }
            }
        }
        h
    }

    fn assemble(chol: &mut BlockCholesky, h: &Mat<f64>, sizes: &[usize], edges: &[(usize, usize)]) {
        chol.clear();
        let mut pairs: Vec<(usize, usize)> = (0..sizes.len()).map(|b| (b, b)).collect();
        for &(a, b) in edges {
            if a != b && !pairs.contains(&(a, b)) && !pairs.contains(&(b, a)) {
                pairs.push((a, b));
            }
        }
        for (a, b) in pairs {
            let slot = chol.slot(a, b).expect("coupled blocks are stored");
            let (ra, rb) = (chol.range(a), chol.range(b));
            for (r, p) in ra.clone().enumerate() {
                for (c, q) in rb.clone().enumerate() {
                    let at = slot.at(r, c);
                    chol.values_mut()[at] = h[(p, q)];
                }
            }
        }
    }

    fn check(seed: u64, sizes: &[usize], edges: &[(usize, usize)]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let h = random_problem(&mut rng, sizes, edges);
        let n = h.nrows();
        let mut chol = BlockCholesky::new(sizes, edges).unwrap();
        assert_eq!(chol.dim(), n);
        assemble(&mut chol, &h, sizes, edges);
        chol.factor().unwrap();
        let x_true: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut rhs: Vec<f64> = (0..n)
            .map(|r| (0..n).map(|c| h[(r, c)] * x_true[c]).sum())
            .collect();
        chol.solve_in_place(&mut rhs);
        for (a, b) in rhs.iter().zip(&x_true) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b} (seed {seed})");
        }
    }

    #[test]
    fn solves_a_chain_a_star_and_a_cycle_of_mixed_block_sizes() {
        // Chain: no fill. Star: the hub goes last under minimum degree. Cycle: fill.
        check(1, &[6, 6, 6, 6], &[(0, 1), (1, 2), (2, 3)]);
        check(2, &[6, 1, 3, 6, 2], &[(0, 1), (0, 2), (0, 3), (0, 4)]);
        check(
            3,
            &[2, 3, 4, 5, 6],
            &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)],
        );
        // Disconnected blocks and repeated or reversed edges.
        check(4, &[6, 6, 1], &[(1, 0), (0, 1), (1, 1)]);
    }

    #[test]
    fn solves_random_block_graphs() {
        for seed in 0..40u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
            let nb = rng.random_range(1..25);
            let sizes: Vec<usize> = (0..nb).map(|_| rng.random_range(1..8)).collect();
            let ne = rng.random_range(0..3 * nb);
            let edges: Vec<(usize, usize)> = (0..ne)
                .map(|_| (rng.random_range(0..nb), rng.random_range(0..nb)))
                .collect();
            check(seed, &sizes, &edges);
        }
    }

    /// A factor of `h` on `(sizes, edges)` from `chol`, and its solution of `h x = rhs`.
    fn factored(
        mut chol: BlockCholesky,
        h: &Mat<f64>,
        sizes: &[usize],
        edges: &[(usize, usize)],
        rhs: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        assemble(&mut chol, h, sizes, edges);
        chol.factor().unwrap();
        let mut x = rhs.to_vec();
        chol.solve_in_place(&mut x);
        (chol.values, x)
    }

    /// The memo hands back the analysis of the same graph however its edges are listed
    /// (reordered, reversed, repeated, with self-pairs), and the factor and solution it gives
    /// are bit for bit those of a fresh analysis; another graph gets a fresh one.
    #[test]
    fn a_memo_reuses_the_analysis_of_the_same_graph_and_factors_alike() {
        let sizes = [6, 6, 6, 3, 6];
        let edges = [(0, 1), (1, 2), (2, 0), (3, 4), (1, 4)];
        let listed_otherwise = [(4, 1), (2, 1), (1, 1), (0, 2), (1, 0), (4, 3), (2, 1)];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let h = random_problem(&mut rng, &sizes, &edges);
        let rhs: Vec<f64> = (0..h.nrows()).map(|i| (i as f64 * 0.3).cos()).collect();
        let fresh = factored(
            BlockCholesky::new(&sizes, &edges).unwrap(),
            &h,
            &sizes,
            &edges,
            &rhs,
        );
        let mut memo = AnalysisMemo::default();
        let (first, reused) = memo.factorization(&sizes, &edges).unwrap();
        assert!(!reused);
        assert_eq!(factored(first, &h, &sizes, &edges, &rhs), fresh);
        let (again, reused) = memo.factorization(&sizes, &listed_otherwise).unwrap();
        assert!(reused);
        assert_eq!(factored(again, &h, &sizes, &edges, &rhs), fresh);
        // One edge fewer, then other sizes: each a new analysis, which then serves again.
        let fewer = &edges[..4];
        let (_, reused) = memo.factorization(&sizes, fewer).unwrap();
        assert!(!reused);
        let (_, reused) = memo.factorization(&[6, 6, 6, 3, 5], fewer).unwrap();
        assert!(!reused);
        let (_, reused) = memo.factorization(&[6, 6, 6, 3, 5], fewer).unwrap();
        assert!(reused);
        assert!(memo.factorization(&sizes, &[(0, 5)]).is_err());
        // The memo holds its last MEMO_ENTRIES graphs: the first is still there after three
        // others, and gone after MEMO_ENTRIES more.
        assert!(memo.factorization(&sizes, &edges).unwrap().1);
        for k in 0..MEMO_ENTRIES {
            let chain: Vec<(usize, usize)> = (0..k % 4).map(|b| (b, b + 1)).collect();
            let sizes = [1 + k / 4, 6, 6, 6, 6];
            memo.factorization(&sizes, &chain).unwrap();
        }
        assert!(!memo.factorization(&sizes, &edges).unwrap().1);
    }

    /// A caller's kept structures are found by type and by their own test, the oldest making
    /// way once the memo is full.
    #[test]
    fn a_memo_keeps_a_callers_structures_by_type_and_test() {
        let mut memo = AnalysisMemo::default();
        memo.keep(7usize);
        memo.keep("seven");
        assert_eq!(memo.kept(|&k: &usize| k == 7).copied(), Some(7));
        assert_eq!(memo.kept(|&k: &usize| k == 8), None);
        assert_eq!(memo.kept(|_: &&str| true).copied(), Some("seven"));
        for k in 0..MEMO_ENTRIES {
            memo.keep(100 + k);
        }
        assert_eq!(memo.kept(|&k: &usize| k == 7), None);
        assert!(memo
            .kept(|&k: &usize| k == 100 + MEMO_ENTRIES - 1)
            .is_some());
    }

    /// A memo is in force only inside `with_memo`, it outlives the call, and a call that
    /// unwinds leaves the thread with no memo in force.
    #[test]
    fn analyses_are_reused_only_where_a_memo_is_in_force() {
        let (sizes, edges) = ([6, 6], [(0, 1)]);
        // A build's analysis: through the memo in force, else anew.
        let reused = || {
            in_force(|m| match m {
                Some(memo) => memo.factorization(&sizes, &edges).unwrap().1,
                None => BlockCholesky::new(&sizes, &edges).map(|_| false).unwrap(),
            })
        };
        assert!(!reused() && !reused());
        let mut memo = AnalysisMemo::default();
        assert_eq!(with_memo(&mut memo, || (reused(), reused())), (false, true));
        assert!(with_memo(&mut memo, reused));
        assert!(!reused());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_memo(&mut memo, || panic!("inside"))
        }));
        assert!(unwound.is_err());
        assert!(!reused() && !reused());
        assert!(with_memo(&mut memo, reused));
    }

    /// Two components, {0, 1, 3} and {2, 4}: factoring and solving one of them gives its part
    /// of the whole solution and leaves the other's right-hand side as it was.
    #[test]
    fn one_component_factors_and_solves_on_its_own() {
        let (sizes, edges) = ([6, 3, 6, 2, 6], [(0, 1), (3, 1), (0, 3), (2, 4)]);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let h = random_problem(&mut rng, &sizes, &edges);
        let n = h.nrows();
        let rhs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.71).cos()).collect();
        let mut whole = BlockCholesky::new(&sizes, &edges).unwrap();
        assemble(&mut whole, &h, &sizes, &edges);
        whole.factor().unwrap();
        let mut x = rhs.clone();
        whole.solve_in_place(&mut x);
        let keep = |b: usize| [0, 1, 3].contains(&b);
        let mut part = BlockCholesky::new(&sizes, &edges).unwrap();
        assemble(&mut part, &h, &sizes, &edges);
        part.factor_where(keep).unwrap();
        let mut y = rhs.clone();
        part.solve_in_place_where(&mut y, keep);
        for b in 0..sizes.len() {
            for i in part.range(b) {
                let want = if keep(b) { x[i] } else { rhs[i] };
                assert!(
                    (y[i] - want).abs() < 1e-12,
                    "block {b}, entry {i}: {} vs {want}",
                    y[i]
                );
            }
        }
    }

    #[test]
    fn refuses_an_indefinite_matrix_naming_the_block() {
        let mut chol = BlockCholesky::new(&[2, 2], &[(0, 1)]).unwrap();
        // H = [[I, 2I], [2I, I]] is indefinite: the second block's pivot goes negative.
        for b in 0..2 {
            let s = chol.slot(b, b).unwrap();
            for i in 0..2 {
                let at = s.at(i, i);
                chol.values_mut()[at] = 1.0;
            }
        }
        let s = chol.slot(0, 1).unwrap();
        for i in 0..2 {
            let at = s.at(i, i);
            chol.values_mut()[at] = 2.0;
        }
        let failed = chol.factor().unwrap_err();
        assert!(failed < 2);
    }

    #[test]
    fn refuses_an_edge_beyond_the_blocks() {
        let e = BlockCholesky::new(&[3, 3], &[(0, 2)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("edge (0, 2)") && e.contains("2 blocks"), "{e}");
    }

    #[test]
    fn uncoupled_blocks_have_no_slot() {
        let chol = BlockCholesky::new(&[3, 3, 3], &[(0, 1)]).unwrap();
        assert!(chol.slot(0, 2).is_none());
        assert!(chol.slot(0, 1).is_some() && chol.slot(1, 0).is_some());
        // The two orientations name the same entries.
        let (a, b) = (chol.slot(0, 1).unwrap(), chol.slot(1, 0).unwrap());
        assert_eq!(a.at(2, 1), b.at(1, 2));
    }
}
