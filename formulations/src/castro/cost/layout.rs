//! Which velocities SAP solves for, in which order, and their blocks for the factorization:
//! only the trees some contact touches, laid out island by island (trees joined by contacts).

use std::ops::Range;

use contactlab_core::disjoint_sets::DisjointSets;
use contactlab_core::generalized::GeneralizedProblem;

use crate::castro::rows::ContactRows;

/// The unknowns (the touched trees' velocities, tree by tree, ascending within a tree) and
/// their blocks for the factorization.
///
/// A block is a run of consecutive unknowns touched by the same contacts (a fundamental
/// supernode: equal columns of `J' G J`). The blocks are not the trees: MuJoCo's mass matrix of
/// a free body whose frame sits at its centre of mass is diagonal, so its six velocities are six
/// "trees" of `A`, yet every contact on the body touches all six; and a contact on an arm's
/// third link touches its first three joints only. `A`'s couplings between blocks become
/// edges of the block graph like the contacts'.
#[derive(Debug, Clone)]
pub(super) struct BlockLayout {
    /// Unknown -> velocity index of the full problem.
    pub(super) dofs: Vec<usize>,
    /// Velocity index -> unknown (`usize::MAX`: untouched).
    pub(super) map: Vec<usize>,
    /// Block `b` is unknowns `start[b]..start[b + 1]`.
    pub(super) start: Vec<usize>,
    /// Unknown -> block.
    pub(super) block_of: Vec<usize>,
    /// Velocities in the largest touched tree.
    largest_tree: usize,
    /// The islands' unknowns: trees joined by contacts, laid out island by island.
    pub(super) islands: Vec<Range<usize>>,
    /// Contact -> island (a contact that touches no unknown sits in the first).
    pub(super) contact_island: Vec<usize>,
}

impl BlockLayout {
    /// The layout of the velocities of `problem` that the contacts' `rows` touch.
    pub(super) fn touched(problem: &GeneralizedProblem, rows: &ContactRows) -> BlockLayout {
        let trees = Trees::joined(problem, rows);
        let (islands, contact_island) = trees.islands();
        let (dofs, map) = trees.unknowns(&problem.tree_of);
        let (start, block_of) = blocks(problem, &dofs);
        BlockLayout {
            dofs,
            map,
            start,
            block_of,
            largest_tree: trees.count.iter().copied().max().unwrap_or(0),
            islands,
            contact_island,
        }
    }

    /// Velocities in the largest block or touched tree, whichever is larger.
    pub(super) fn largest(&self) -> usize {
        let block = self
            .start
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0);
        block.max(self.largest_tree)
    }
}

/// The kinematic trees the contacts touch, and how the contacts join them into islands.
struct Trees {
    /// Tree -> whether a contact touches it.
    touched: Vec<bool>,
    /// Contact -> the first tree it touches (`usize::MAX`: none).
    first_tree: Vec<usize>,
    /// Tree -> its island's label.
    label: Vec<usize>,
    /// The touched trees in order of appearance, then island by island (stable).
    order: Vec<usize>,
    /// Tree -> its place in `order` (`usize::MAX`: untouched).
    index: Vec<usize>,
    /// Place in `order` -> the tree's velocities.
    count: Vec<usize>,
}

impl Trees {
    /// The touched trees of `problem`, joined when a contact touches both (`A` couples within
    /// a tree only), in the order of the unknowns.
    fn joined(problem: &GeneralizedProblem, rows: &ContactRows) -> Trees {
        let ntrees = problem.tree_of.iter().copied().max().map_or(0, |t| t + 1);
        let mut touched = vec![false; ntrees];
        // A contact's columns ascend, so its trees come in runs when trees are runs of
        // velocities: one union per run.
        let mut sets = DisjointSets::new(ntrees);
        let mut first_tree = vec![usize::MAX; rows.num()];
        for (i, first) in first_tree.iter_mut().enumerate() {
            let (cols, _) = rows.of(i);
            let mut last = usize::MAX;
            for &c in cols {
                let t = problem.tree_of[c];
                touched[t] = true;
                if t != last {
                    match *first {
                        usize::MAX => *first = t,
                        f => sets.union(f, t),
                    }
                    last = t;
                }
            }
        }
        let label = sets.labels();
        let order = in_island_order(&problem.tree_of, &touched, &label);
        let mut index = vec![usize::MAX; ntrees];
        for (k, &t) in order.iter().enumerate() {
            index[t] = k;
        }
        let mut count = vec![0; order.len()];
        for &t in &problem.tree_of {
            if touched[t] {
                count[index[t]] += 1;
            }
        }
        Trees {
            touched,
            first_tree,
            label,
            order,
            index,
            count,
        }
    }

    /// The islands' ranges of unknowns (at least one, empty when nothing is touched) and
    /// each contact's island (a contact that touches no unknown sits in the first).
    fn islands(&self) -> (Vec<Range<usize>>, Vec<usize>) {
        let (order, label) = (&self.order, &self.label);
        let mut islands = Vec::new();
        let mut island_of_tree = vec![0; self.touched.len()];
        let mut at = 0;
        for (k, &t) in order.iter().enumerate() {
            if k == 0 || label[t] != label[order[k - 1]] {
                islands.push(at..at);
            }
            at += self.count[k];
            let last = islands.len() - 1;
            islands[last].end = at;
            island_of_tree[t] = last;
        }
        if islands.is_empty() {
            islands.push(0..0);
        }
        let contact_island = self
            .first_tree
            .iter()
            .map(|&t| {
                if t == usize::MAX {
                    0
                } else {
                    island_of_tree[t]
                }
            })
            .collect();
        (islands, contact_island)
    }

    /// The unknowns (unknown -> velocity) and their map (velocity -> unknown, `usize::MAX`
    /// when untouched): a counting sort of the touched velocities by tree, stable, so that a
    /// tree's velocities stay ascending.
    fn unknowns(&self, tree_of: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let mut next = Vec::with_capacity(self.count.len());
        let mut total = 0;
        for &k in &self.count {
            next.push(total);
            total += k;
        }
        let mut dofs = vec![0; total];
        let mut map = vec![usize::MAX; tree_of.len()];
        for (c, (&t, slot)) in tree_of.iter().zip(map.iter_mut()).enumerate() {
            if self.touched[t] {
                let k = next[self.index[t]];
                next[self.index[t]] += 1;
                dofs[k] = c;
                *slot = k;
            }
        }
        (dofs, map)
    }
}

/// The touched trees in order of appearance, then island by island (a stable sort by the
/// islands' `label`).
fn in_island_order(tree_of: &[usize], touched: &[bool], label: &[usize]) -> Vec<usize> {
    let mut order = Vec::new();
    let mut seen = vec![false; touched.len()];
    for &t in tree_of {
        if touched[t] && !seen[t] {
            seen[t] = true;
            order.push(t);
        }
    }
    order.sort_by_key(|&t| label[t]);
    order
}

/// The blocks of the unknowns `dofs`: runs of consecutive unknowns touched by the same
/// contacts. Returns each block's first unknown (then the count of unknowns) and each
/// unknown's block.
fn blocks(problem: &GeneralizedProblem, dofs: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let (jcp, jri) = (
        problem.j.symbolic().col_ptr(),
        problem.j.symbolic().row_idx(),
    );
    // The contacts touching a velocity: its J column's rows over 3, deduplicated.
    let contacts = |c: usize| {
        let mut last = usize::MAX;
        jri[jcp[c]..jcp[c + 1]].iter().filter_map(move |&r| {
            let i = r / 3;
            (i != last).then(|| {
                last = i;
                i
            })
        })
    };
    let total = dofs.len();
    let mut start = vec![0];
    let mut block_of = vec![0; total];
    for k in 1..total {
        let (p, c) = (dofs[k - 1], dofs[k]);
        let same = if jcp[c] == jcp[c + 1] {
            jcp[p] == jcp[p + 1] && problem.tree_of[p] == problem.tree_of[c]
        } else {
            // Equal rows mean equal contacts (a free body's six velocities, mostly).
            jri[jcp[p]..jcp[p + 1]] == jri[jcp[c]..jcp[c + 1]] || contacts(p).eq(contacts(c))
        };
        if !same {
            start.push(k);
        }
        block_of[k] = start.len() - 1;
    }
    start.push(total);
    (start, block_of)
}
