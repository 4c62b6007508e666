//! Islands: the independent sub-problems of one step's contact problem.
//!
//! Two contacts interact only through the bodies they touch: block `(a, b)` of
//! `W = J A^-1 J'` is non-zero only when contacts `a` and `b` share a kinematic tree (`A` is
//! block diagonal by tree). The connected components of that graph, the islands, are
//! independent contact problems; solving them one by one and putting the answers back
//! together gives the answer of the whole problem, at the cost of the largest island instead
//! of the whole (MuJoCo splits its constraint problem the same way).
//!
//! [`Islands::of`] finds them (through the trees of a generalized problem, or through `W`'s
//! block sparsity for a contact-space one), [`Islands::split`] makes one [`StepProblem`] per
//! island in the chosen [`Storage`], and [`solve_by_island`] runs any solve flow on each and
//! merges the outcomes, so that every formulation and driver runs per island.
//! [`check_psd_by_island`] validates a file's `W` island by island.

use std::collections::BTreeMap;
use std::time::Instant;

use faer::sparse::{SparseColMat, Triplet};
use faer::Mat;
use nalgebra::Matrix3;

use crate::blocks::dense_block;
use crate::constraint::Constraint;
use crate::deadline::Deadline;
use crate::disjoint_sets::DisjointSets;
use crate::error::{CoreError, ProblemError};
use crate::generalized::{GeneralizedProblem, StepProblem, Storage};
use crate::plugin::{timed_out_at, Init, Outcome};
use crate::problem::{symmetric_part_eigenvalues, LocalProblem, Matrix};
use crate::result::{SolveOptions, Status};

pub use crate::plugin::WHOLE_BELOW_CONTACTS;

/// How a solve lays out its problem: split into islands or whole, and how `W` is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Solve each island separately.
    pub islands: bool,
    /// The storage of each (sub-)problem's `W`.
    pub storage: Storage,
    /// With `islands`, problems of fewer contacts are solved whole in the storage they came in
    /// ([`WHOLE_BELOW_CONTACTS`] by default; 0 always splits, `usize::MAX` never does).
    pub whole_below: usize,
}

impl Default for Layout {
    /// Islands, block-sparse `W`, small problems whole.
    fn default() -> Layout {
        Layout {
            islands: true,
            storage: Storage::Blocks,
            whole_below: WHOLE_BELOW_CONTACTS,
        }
    }
}

impl Layout {
    /// The whole problem with a dense `W`: the layout before islands existed.
    pub fn whole_dense() -> Layout {
        Layout {
            islands: false,
            storage: Storage::Dense,
            whole_below: 0,
        }
    }

    /// Whether a problem of `contacts` contacts is split into islands.
    pub fn splits(&self, contacts: usize) -> bool {
        self.islands && contacts > 0 && contacts >= self.whole_below
    }
}

/// The contacts of each island, in increasing order; islands ordered by their first contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Islands {
    contacts: Vec<Vec<usize>>,
    num_contacts: usize,
}

impl Islands {
    /// All `nc` contacts in one island (none for `nc = 0`).
    pub fn whole(nc: usize) -> Islands {
        Islands {
            contacts: if nc == 0 {
                Vec::new()
            } else {
                vec![(0..nc).collect()]
            },
            num_contacts: nc,
        }
    }

    /// The islands of `problem`: contacts joined when they touch a common kinematic tree (a
    /// generalized problem), or when their block of `W` is non-zero (a contact-space one).
    pub fn of(problem: &StepProblem) -> Result<Islands, CoreError> {
        let nc = problem.num_contacts();
        let mut sets = DisjointSets::new(nc);
        match problem.generalized() {
            Some(g) => {
                let trees = g.tree_of.iter().max().map_or(0, |&t| t + 1);
                let mut first = vec![usize::MAX; trees];
                let (cols, rows) = (g.j.symbolic().col_ptr(), g.j.symbolic().row_idx());
                for (d, &t) in g.tree_of.iter().enumerate() {
                    for &r in &rows[cols[d]..cols[d + 1]] {
                        let c = r / 3;
                        if first[t] == usize::MAX {
                            first[t] = c;
                        } else {
                            sets.union(first[t], c);
                        }
                    }
                }
            }
            None => {
                let l = problem.local()?;
                match &l.w {
                    Matrix::Blocks(b) => {
                        for a in 0..b.num_block_rows() {
                            for (c, m) in b.row(a) {
                                if m.iter().any(|&v| v != 0.0) {
                                    sets.union(a, c);
                                }
                            }
                        }
                    }
                    // Block by block, one union per non-zero off-diagonal block (an entry
                    // at a time cost a union per entry: 150k of them for 128 contacts).
                    Matrix::Dense(d) if d.nrows() == 3 * nc && d.ncols() == 3 * nc => {
                        for b in 0..nc {
                            for a in (0..nc).filter(|&a| a != b) {
                                if dense_block(d.as_ref(), a, b) != Matrix3::zeros() {
                                    sets.union(a, b);
                                }
                            }
                        }
                    }
                    w => w.for_each_entry(|i, j, v| {
                        if v != 0.0 && i / 3 < nc && j / 3 < nc {
                            sets.union(i / 3, j / 3);
                        }
                    }),
                }
            }
        }
        Ok(Islands {
            contacts: sets.groups(),
            num_contacts: nc,
        })
    }

    /// Number of islands.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }

    /// No islands (no contacts).
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }

    /// The contacts of island `i`, increasing.
    pub fn contacts(&self, i: usize) -> &[usize] {
        &self.contacts[i]
    }

    /// Contacts in the largest island (0 without contacts).
    pub fn largest(&self) -> usize {
        self.contacts.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Island `i`'s three entries per contact of `v` (`3 nc` entries); empty when `v` has
    /// another length (a warm start that does not fit falls back to the default start).
    pub fn gather(&self, i: usize, v: &[f64]) -> Vec<f64> {
        if v.len() != 3 * self.num_contacts {
            return Vec::new();
        }
        self.contacts[i]
            .iter()
            .flat_map(|&c| v[3 * c..3 * c + 3].iter().copied())
            .collect()
    }

    /// The whole problem's vector (three entries per contact) from each island's part.
    pub fn scatter(&self, parts: &[Vec<f64>]) -> Vec<f64> {
        let mut v = vec![0.0; 3 * self.num_contacts];
        for (contacts, part) in self.contacts.iter().zip(parts) {
            for (k, &c) in contacts.iter().enumerate() {
                if let Some(p) = part.get(3 * k..3 * k + 3) {
                    v[3 * c..3 * c + 3].copy_from_slice(p);
                }
            }
        }
        v
    }

    /// One problem per island, `W` in `storage`: a generalized problem keeps its form (the
    /// velocities of the island's trees), a contact-space one takes the principal blocks of
    /// `W`; a contact-space form already at hand is split too.
    pub fn split(
        &self,
        problem: &StepProblem,
        storage: Storage,
    ) -> Result<Vec<StepProblem>, CoreError> {
        let local = match problem.generalized() {
            Some(_) => problem.local_if_formed(),
            None => Some(problem.local()?),
        };
        let w = local.map(|l| parent_w(&l.w, storage));
        (0..self.len())
            .map(|i| {
                let contacts = &self.contacts[i];
                let l = local
                    .zip(w.as_ref())
                    .map(|(l, w)| sub_local(l, w, contacts, storage));
                // One island of every contact: the problem itself, shared rather than copied
                // apart (copied only to carry a contact-space form already at hand).
                let whole = contacts.len() == problem.num_contacts();
                if whole && l.is_none() {
                    if let Some(shared) = problem.sharing_in(storage) {
                        return Ok(shared);
                    }
                }
                let sub = |g: &GeneralizedProblem| {
                    if whole {
                        Ok(g.clone())
                    } else {
                        sub_generalized(g, contacts)
                    }
                };
                Ok(match (problem.generalized(), l) {
                    (Some(g), Some(l)) => StepProblem::with_local(sub(g)?, l),
                    (Some(g), None) => StepProblem::from_generalized_in(sub(g)?, storage),
                    (None, Some(l)) => StepProblem::local_only(l),
                    (None, None) => unreachable!("a contact-space problem has its local form"),
                })
            })
            .collect()
    }
}

/// The parent's `W` to take each island's principal part of: as it is when it is kept as
/// blocks, or dense with dense parts wanted; otherwise converted to blocks once for all islands
/// (converting per island would cost the whole `W` once per island).
fn parent_w(w: &Matrix, storage: Storage) -> std::borrow::Cow<'_, Matrix> {
    match (w, storage) {
        (Matrix::Blocks(_), _) | (Matrix::Dense(_), Storage::Dense) => {
            std::borrow::Cow::Borrowed(w)
        }
        _ => std::borrow::Cow::Owned(w.to_blocks()),
    }
}

/// The contact-space problem of `contacts`: `q`, `mu` from `l`, the principal part of `w` (the
/// parent's `W` as [`parent_w`] gives it), in `storage`.
fn sub_local(l: &LocalProblem, w: &Matrix, contacts: &[usize], storage: Storage) -> LocalProblem {
    let w = match (w, storage) {
        (Matrix::Dense(d), Storage::Dense) => {
            let n = 3 * contacts.len();
            let at = |k: usize| 3 * contacts[k / 3] + k % 3;
            Matrix::Dense(Mat::from_fn(n, n, |i, j| d[(at(i), at(j))]))
        }
        (Matrix::Blocks(b), Storage::Dense) => Matrix::Dense(b.principal(contacts).to_dense()),
        (Matrix::Blocks(b), Storage::Blocks) => Matrix::Blocks(b.principal(contacts)),
        // Not `3nc x 3nc` (refused by validation before any solve): as it is.
        (w, _) => w.clone(),
    };
    let q = contacts
        .iter()
        .flat_map(|&c| l.q[3 * c..3 * c + 3].iter().copied())
        .collect();
    let mu: Vec<f64> = contacts.iter().map(|&c| l.mu()[c]).collect();
    // The parts of a validated problem are valid: no second validation.
    LocalProblem::coulomb(w, q, &mu)
}

/// The generalized problem of `contacts`: the velocities of the trees they touch, their rows
/// of `J`, `b` and models.
fn sub_generalized(
    g: &GeneralizedProblem,
    contacts: &[usize],
) -> Result<GeneralizedProblem, CoreError> {
    let nc = g.num_contacts();
    let mut row_of = vec![usize::MAX; nc];
    for (k, &c) in contacts.iter().enumerate() {
        row_of[c] = k;
    }
    let (jc, jr, jv) = (
        g.j.symbolic().col_ptr(),
        g.j.symbolic().row_idx(),
        g.j.val(),
    );
    let trees = g.tree_of.iter().max().map_or(0, |&t| t + 1);
    let mut touched = vec![false; trees];
    for (d, &t) in g.tree_of.iter().enumerate() {
        if jr[jc[d]..jc[d + 1]]
            .iter()
            .any(|&r| row_of[r / 3] != usize::MAX)
        {
            touched[t] = true;
        }
    }
    let dofs: Vec<usize> = (0..g.num_dofs())
        .filter(|&d| touched[g.tree_of[d]])
        .collect();
    let mut new_dof = vec![usize::MAX; g.num_dofs()];
    for (k, &d) in dofs.iter().enumerate() {
        new_dof[d] = k;
    }
    let (ac, ar, av) = (
        g.a.symbolic().col_ptr(),
        g.a.symbolic().row_idx(),
        g.a.val(),
    );
    let (mut a, mut j) = (Vec::new(), Vec::new());
    for (k, &d) in dofs.iter().enumerate() {
        for e in ac[d]..ac[d + 1] {
            if new_dof[ar[e]] != usize::MAX {
                a.push(Triplet::new(new_dof[ar[e]], k, av[e]));
            }
        }
        for e in jc[d]..jc[d + 1] {
            let row = row_of[jr[e] / 3];
            if row != usize::MAX {
                j.push(Triplet::new(3 * row + jr[e] % 3, k, jv[e]));
            }
        }
    }
    let sparse = |rows, t: &[Triplet<usize, usize, f64>], what: &str| {
        SparseColMat::try_new_from_triplets(rows, dofs.len(), t)
            .map_err(|e| CoreError::LinearAlgebra(format!("island {what}: {e:?}")))
    };
    let pick = |v: &[f64]| dofs.iter().map(|&d| v[d]).collect::<Vec<f64>>();
    Ok(GeneralizedProblem {
        a: sparse(dofs.len(), &a, "A")?,
        j: sparse(3 * contacts.len(), &j, "J")?,
        v_star: pick(&g.v_star),
        b: contacts
            .iter()
            .flat_map(|&c| g.b[3 * c..3 * c + 3].iter().copied())
            .collect(),
        contacts: contacts.iter().map(|&c| g.contacts[c]).collect(),
        // Islands split Coulomb problems only (`solve_by_island`).
        others: Vec::new(),
        target: if g.target.is_empty() {
            Vec::new()
        } else {
            contacts
                .iter()
                .flat_map(|&c| g.target[3 * c..3 * c + 3].iter().copied())
                .collect()
        },
        dt: g.dt,
        v0: g.v0.as_deref().map(pick),
        tree_of: dofs.iter().map(|&d| g.tree_of[d]).collect(),
    })
}

/// Runs `solve` (one solve flow, [`crate::plugin::solve_formulation`] with a driver) on each
/// island of `problem` under one deadline, island `i` (of `n_i` contacts) to the tolerance
/// `tol sqrt(n_i / nc)` so that the whole answer meets `tol`, and merges the outcomes into the
/// whole problem's:
///
/// * impulses, warm state and velocities are put back contact by contact; the unknowns `x`
///   are the islands' unknowns one after the other (a formulation's unknowns of the whole
///   problem are not defined when the islands are solved apart);
/// * the status is the first island's that did not converge (else `converged`), the trace is
///   that island's (else the one with the most iterations'), and the merit is the sum of the
///   islands' (the whole problem's merit for the separable merits here);
/// * `iterations` is the largest island's count: islands are solved independently, so it is
///   the count the slowest island needed; `island_iterations` adds them up;
/// * counters are summed, diagnostics take the worst (largest) island's value;
/// * `islands` and `largest_island` (its contacts) are counters.
///
/// A problem without contacts, or below `layout.whole_below` contacts, or with one island and
/// dense storage (or with `layout.islands` off and dense storage), or a contact-space problem
/// of one island, is passed through untouched: the path before islands existed.
pub fn solve_by_island(
    problem: &StepProblem,
    layout: Layout,
    init: Init<'_>,
    opts: &SolveOptions,
    mut solve: impl FnMut(&StepProblem, Init<'_>, &SolveOptions) -> Result<Outcome, CoreError>,
) -> Result<Outcome, CoreError> {
    let clock = Instant::now();
    // One deadline from the start: finding and splitting the islands count against the limit.
    let deadline = Deadline::after(opts.time_limit);
    let nc = problem.num_contacts();
    // Islands split Coulomb contacts (three rows each); a problem with other constraint
    // blocks is solved whole, and its formulation judges whether it takes them.
    let split = layout.splits(nc) && problem.first_refused(Constraint::is_coulomb).is_none();
    // Islands asked for, but the problem is below the layout's threshold: solved as it came.
    let small = layout.islands && !split;
    let islands = if split {
        Islands::of(problem)?
    } else {
        Islands::whole(nc)
    };
    // A contact-space problem that is one island is solved as it is, in the storage it came
    // in: converting its `W` to blocks and the formulation's copy back to dense cost more than
    // the solve of a 384-row problem, and the per-contact sweeps read a dense `W` block by
    // block anyway.
    let passthrough = islands.is_empty()
        || small
        || (islands.len() == 1
            && (layout.storage == Storage::Dense
                || problem.generalized().is_none()
                || problem
                    .local_if_formed()
                    .is_some_and(|l| matches!(l.w, Matrix::Blocks(_)))));
    if passthrough {
        return solve(problem, init, opts);
    }
    let parts = islands.split(problem, layout.storage)?;
    let mut outcomes = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let warm;
        let init_i = match init {
            Init::Warm(w) => {
                warm = islands.gather(i, w);
                Init::Warm(&warm)
            }
            other => other,
        };
        // The shared ruler and the drivers' tolerances are 2-norms over contacts: island `i`
        // of `n_i` of the `nc` contacts gets `tol sqrt(n_i / nc)`, so that the islands'
        // residuals stacked meet `tol` (with the natural map's `1 + |q_i| <= 1 + |q|`).
        let share = (islands.contacts(i).len() as f64 / nc as f64).sqrt();
        let o = SolveOptions {
            stop_tol: opts.stop_tol * share,
            time_limit: deadline.remaining(),
            ..opts.clone()
        };
        let mut out = if deadline.expired() {
            // No time left: the island is not even built (a build can cost more than a solve).
            timed_out(part)?
        } else {
            solve(part, init_i, &o)?
        };
        // The island's velocities from its own contact-space form, when the formulation formed
        // it: the ruler then needs no factorization of the whole problem.
        if out.u.is_none() {
            out.u = part.local_if_formed().map(|l| l.velocity(&out.r));
        }
        outcomes.push(out);
    }
    Ok(merge(&islands, outcomes, clock.elapsed().as_secs_f64()))
}

/// An island the deadline left no time for: zero impulses, its free velocities, `timeout`.
fn timed_out(part: &StepProblem) -> Result<Outcome, CoreError> {
    let r = vec![0.0; 3 * part.num_contacts()];
    Ok(Outcome {
        solution: timed_out_at(Vec::new()),
        x: Vec::new(),
        warm: r.clone(),
        u: Some(part.free_velocity()?),
        r,
        model: crate::plugin::Model::Unspecified,
        diagnostics: BTreeMap::new(),
        iterations: 0,
        seconds: 0.0,
        build_seconds: 0.0,
        start_seconds: 0.0,
        counters: BTreeMap::new(),
    })
}

/// The whole problem's outcome from its islands' (see [`solve_by_island`]).
fn merge(islands: &Islands, outcomes: Vec<Outcome>, seconds: f64) -> Outcome {
    let pick = outcomes
        .iter()
        .position(|o| o.solution.status != Status::Converged)
        .or_else(|| (0..outcomes.len()).max_by_key(|&i| (outcomes[i].iterations, usize::MAX - i)))
        .unwrap_or(0);
    let r = islands.scatter(&outcomes.iter().map(|o| o.r.clone()).collect::<Vec<_>>());
    let warm = islands.scatter(&outcomes.iter().map(|o| o.warm.clone()).collect::<Vec<_>>());
    let u = outcomes
        .iter()
        .map(|o| o.u.clone())
        .collect::<Option<Vec<_>>>()
        .map(|parts| islands.scatter(&parts));
    let x: Vec<f64> = outcomes.iter().flat_map(|o| o.x.iter().copied()).collect();
    let mut counters: BTreeMap<String, u64> = BTreeMap::new();
    let mut diagnostics: BTreeMap<String, f64> = BTreeMap::new();
    for o in &outcomes {
        for (k, v) in &o.counters {
            *counters.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &o.diagnostics {
            let e = diagnostics.entry(k.clone()).or_insert(f64::NEG_INFINITY);
            *e = if v.is_nan() { *v } else { e.max(*v) };
        }
    }
    let iterations = outcomes.iter().map(|o| o.iterations).max().unwrap_or(0);
    let build_seconds = outcomes.iter().map(|o| o.build_seconds).sum();
    let start_seconds = outcomes.iter().map(|o| o.start_seconds).sum();
    counters.insert(
        "island_iterations".into(),
        outcomes.iter().map(|o| o.iterations).sum(),
    );
    counters.insert("islands".into(), islands.len() as u64);
    counters.insert("largest_island".into(), islands.largest() as u64);
    let merit = outcomes.iter().map(|o| o.solution.merit).sum();
    let model = outcomes
        .iter()
        .map(|o| o.model)
        .find(|m| *m != crate::plugin::Model::Unspecified)
        .unwrap_or(crate::plugin::Model::Unspecified);
    let mut solution = outcomes
        .into_iter()
        .nth(pick)
        .map(|o| o.solution)
        // Never taken: a problem without islands is passed through, not merged.
        .unwrap_or_else(|| timed_out_at(Vec::new()));
    solution.x = x.clone();
    solution.iterations = iterations;
    solution.merit = merit;
    solution.seconds = seconds;
    solution.counters = counters.clone();
    Outcome {
        solution,
        x,
        r,
        warm,
        u,
        model,
        diagnostics,
        iterations,
        seconds,
        build_seconds,
        start_seconds,
        counters,
    }
}

/// Fails unless every island's `W` is positive semidefinite up to a relative tolerance: the
/// smallest eigenvalue of the symmetric part of each island's `W` must be at least
/// `-rel_tol` times the island's largest diagonal entry.
///
/// A singular `W` is normal (more contact rows than degrees of freedom) and FCLib files are
/// symmetric only to about 1e-3 (see [`crate::problem::SYMMETRY_REL_TOL`]), so this is an
/// eigenvalue test of the symmetric part, not a Cholesky factorization. Each island is
/// decomposed densely (`O(n^3)` in its rows): cheap for real islands, and the reason to test
/// per island. The error names `W`, the island's contacts and the eigenvalue.
pub fn check_psd_by_island(problem: &LocalProblem, rel_tol: f64) -> Result<(), ProblemError> {
    // Islands are of Coulomb contacts: a problem of other blocks is checked whole.
    if !problem.constraints.coulomb_only() {
        return crate::problem::check_positive_semidefinite("W", &problem.w, rel_tol);
    }
    let step = StepProblem::local_only(problem.clone());
    let islands = Islands::of(&step).map_err(|e| ProblemError::NotPositive {
        field: "W".into(),
        kind: "semidefinite".into(),
        detail: format!("its islands could not be found: {e}"),
    })?;
    let w = parent_w(&problem.w, Storage::Blocks);
    for i in 0..islands.len() {
        let contacts = islands.contacts(i);
        let w = sub_local(problem, &w, contacts, Storage::Blocks).w;
        let scale = (0..contacts.len())
            .flat_map(|a| {
                w.block3(a, a)
                    .diagonal()
                    .iter()
                    .map(|d| d.abs())
                    .collect::<Vec<_>>()
            })
            .fold(0.0, f64::max);
        let eig = symmetric_part_eigenvalues("W", &w)?;
        let min = eig.first().copied().unwrap_or(0.0);
        if min < -rel_tol * scale || min.is_nan() {
            let shown: Vec<String> = contacts.iter().take(8).map(usize::to_string).collect();
            return Err(ProblemError::NotPositive {
                field: "W".into(),
                kind: "semidefinite".into(),
                detail: format!(
                    "the island of contacts [{}{}] has smallest eigenvalue {min:.6e} of its symmetric part, below -{rel_tol:e} x its largest diagonal entry {scale:.6e} (a caller that means it can skip this check, e.g. `contactlab solve --no-psd-check`)",
                    shown.join(", "),
                    if contacts.len() > 8 { ", ..." } else { "" }
                ),
            });
        }
    }
    Ok(())
}

/// The relative tolerance of [`check_psd_by_island`] that `contactlab solve` uses: `1e-5` of
/// the island's largest diagonal entry. Measured on the FCLib and Siconos collection: the
/// Confeti problems (written as 8-digit text by Siconos) have smallest eigenvalues down to
/// `-4.8e-7` of that scale, every other file is at round-off or above zero, and a genuinely
/// indefinite `W` has negative eigenvalues of the order of its entries.
pub const PSD_REL_TOL: f64 = 1e-5;
