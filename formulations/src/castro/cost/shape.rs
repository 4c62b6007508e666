//! What of SAP's cost follows from the problem's patterns alone: which velocities are unknowns
//! and their islands ([`BlockLayout`]), the Hessian's structure (tree blocks and their
//! analysis, or a scalar pattern) and where each of `A`'s and `J_i' G_i J_i`'s values lands
//! ([`HessianMap`]). None of it reads a value, so a simulation stepping a scene keeps it from
//! one step to the next while the patterns of `J` and `A` repeat: a stepping caller's memo
//! ([`block_cholesky::with_memo`]) holds the last ones (one per island where a step is solved
//! island by island), and a build outside such a memo makes its own (a cold solve stays cold).

use contactlab_core::block_cholesky::{self, AnalysisMemo, BlockCholesky};
use contactlab_core::generalized::GeneralizedProblem;
use faer::sparse::SparseColMat;

use super::layout::BlockLayout;
use super::{
    restrict_a, scalar_pattern, tree_blocks, HessianFactorization, HessianMap, Structure,
    TREE_BLOCK_MAX,
};
use crate::castro::rows::ContactRows;

/// The pattern-only part of a [`super::SapCost`].
#[derive(Debug, Clone)]
pub(in crate::castro) struct Shape {
    pub(super) layout: BlockLayout,
    pub(super) structure: Structure,
    pub(super) map: HessianMap,
    /// The tree-block factor's analysis, with zero values.
    pub(super) chol: Option<BlockCholesky>,
    /// Island `k`'s contacts are `island_contacts[island_start[k]..island_start[k + 1]]`.
    pub(super) island_start: Vec<usize>,
    pub(super) island_contacts: Vec<usize>,
    /// Block -> its island.
    pub(super) island_of_block: Vec<usize>,
}

/// The patterns a [`Shape`] was made from: `J`'s and `A`'s, the trees and the factorization
/// asked for.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::castro) struct Key {
    j_rows: usize,
    j_col_ptr: Vec<usize>,
    j_row_idx: Vec<usize>,
    a_col_ptr: Vec<usize>,
    a_row_idx: Vec<usize>,
    tree_of: Vec<usize>,
    factorization: HessianFactorization,
}

impl Key {
    fn of(problem: &GeneralizedProblem, f: HessianFactorization) -> Key {
        let (j, a) = (problem.j.symbolic(), problem.a.symbolic());
        Key {
            j_rows: j.nrows(),
            j_col_ptr: j.col_ptr().to_vec(),
            j_row_idx: j.row_idx().to_vec(),
            a_col_ptr: a.col_ptr().to_vec(),
            a_row_idx: a.row_idx().to_vec(),
            tree_of: problem.tree_of.clone(),
            factorization: f,
        }
    }

    /// Whether `self` is the key of these patterns, without building theirs.
    fn matches(&self, problem: &GeneralizedProblem, f: HessianFactorization) -> bool {
        let (j, a) = (problem.j.symbolic(), problem.a.symbolic());
        self.factorization == f
            && self.j_rows == j.nrows()
            && self.j_col_ptr == j.col_ptr()
            && self.j_row_idx == j.row_idx()
            && self.a_col_ptr == a.col_ptr()
            && self.a_row_idx == a.row_idx()
            && self.tree_of == problem.tree_of
    }
}

/// A shape made under a memo, its key, and how its `J` was turned around (the rows' columns
/// before renaming, and each entry's place).
struct Kept {
    key: Key,
    start: Vec<usize>,
    cols: Vec<usize>,
    places: Vec<usize>,
    shape: Shape,
}

/// How a build's patterns relate to what the memo in force keeps.
pub(in crate::castro) enum Pattern {
    /// The kept shape is this problem's.
    Kept(Box<Shape>),
    /// A new pattern under a memo: its key and the places of `J`'s entries, to keep.
    New { key: Key, places: Vec<usize> },
    /// No memo in force.
    Alone,
}

/// `J` turned around contact by contact ([`ContactRows`]), in one pass where the memo in force
/// keeps a shape of the same patterns, and what the build then does with the shape.
pub(in crate::castro) fn turned_around(
    problem: &GeneralizedProblem,
    factorization: HessianFactorization,
) -> (ContactRows, Pattern) {
    block_cholesky::in_force(|memo| {
        let Some(memo) = memo else {
            return (ContactRows::of_jacobian(&problem.j), Pattern::Alone);
        };
        let kept = memo.kept(|k: &Kept| k.key.matches(problem, factorization));
        match kept {
            Some(k) => (
                ContactRows::placed(&problem.j, (&k.start, &k.cols), &k.places),
                Pattern::Kept(Box::new(k.shape.clone())),
            ),
            None => {
                let (rows, places) = ContactRows::of_jacobian_placed(&problem.j);
                let key = Key::of(problem, factorization);
                (rows, Pattern::New { key, places })
            }
        }
    })
}

/// What [`shape_of`] gives: the shape, `A` restricted to the unknowns, and whether the block
/// analysis was made elsewhere (kept, or reused by the memo).
pub(super) struct Shaped {
    pub(super) shape: Shape,
    pub(super) a: SparseColMat<usize, f64>,
    pub(super) reused: bool,
}

/// The shape of `problem` with its contacts' `rows` from [`turned_around`] (whose columns it
/// renames to unknowns): the kept one, or a new one, kept when a memo is in force.
pub(super) fn shape_of(
    problem: &GeneralizedProblem,
    rows: &mut ContactRows,
    factorization: HessianFactorization,
    pattern: Pattern,
) -> Shaped {
    match pattern {
        Pattern::Kept(shape) => {
            rows.rename_columns(&shape.layout.map);
            let a = restrict_a(&problem.a, &shape.layout);
            Shaped {
                shape: *shape,
                a,
                reused: true,
            }
        }
        Pattern::Alone => made(problem, rows, factorization, None),
        Pattern::New { key, places } => block_cholesky::in_force(|mut memo| {
            let (start, cols) = (rows.start.clone(), rows.cols.clone());
            let shaped = made(problem, rows, factorization, memo.as_deref_mut());
            if let Some(memo) = memo {
                memo.keep(Kept {
                    key,
                    start,
                    cols,
                    places,
                    shape: shaped.shape.clone(),
                });
            }
            shaped
        }),
    }
}

/// A new shape (its block analysis through `memo` when there is one).
fn made(
    problem: &GeneralizedProblem,
    rows: &mut ContactRows,
    factorization: HessianFactorization,
    memo: Option<&mut AnalysisMemo>,
) -> Shaped {
    let layout = BlockLayout::touched(problem, rows);
    let a = restrict_a(&problem.a, &layout);
    // Every column of a contact is a touched velocity, so every column has an unknown.
    rows.rename_columns(&layout.map);
    let blocks = match factorization {
        HessianFactorization::Auto => layout.largest() <= TREE_BLOCK_MAX,
        HessianFactorization::TreeBlocks => true,
        HessianFactorization::Sparse => false,
    };
    let (structure, map, chol, reused) = match blocks.then(|| tree_blocks(&a, rows, &layout, memo))
    {
        Some(Some((chol, reused, map))) => (Structure::Blocks, map, Some(chol), reused),
        // An analysis that fails (it cannot for edges from J) falls back to sparse.
        _ => {
            let (pattern, map) = scalar_pattern(&a, rows);
            (Structure::Sparse(pattern), map, None, false)
        }
    };
    let (island_start, island_contacts) = contacts_by_island(&layout);
    let island_of_block = layout
        .start
        .windows(2)
        .map(|w| layout.islands.partition_point(|r| r.end <= w[0]))
        .collect();
    Shaped {
        shape: Shape {
            layout,
            structure,
            map,
            chol,
            island_start,
            island_contacts,
            island_of_block,
        },
        a,
        reused,
    }
}

/// The contacts island by island: `(start, contacts)`, island `k`'s from `start[k]`.
fn contacts_by_island(layout: &BlockLayout) -> (Vec<usize>, Vec<usize>) {
    let ni = layout.islands.len();
    let mut start = vec![0; ni + 1];
    for &k in &layout.contact_island {
        start[k + 1] += 1;
    }
    for k in 0..ni {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut contacts = vec![0; layout.contact_island.len()];
    for (i, &k) in layout.contact_island.iter().enumerate() {
        contacts[fill[k]] = i;
        fill[k] += 1;
    }
    (start, contacts)
}
