//! Castro, Permenter and Han, "An Unconstrained Convex Formulation of Compliant Contact"
//! (IEEE T-RO 2022): SAP, the Semi-Analytic Primal solver.
//!
//! The step's linearised balance of momentum `A (v - v*) = J' gamma` (eq. 18) with compliant
//! contact and regularised friction becomes the unconstrained, strongly convex problem
//! `min_v l_p(v)` (eq. 24), whose optimal impulses are an analytical projection of the contact
//! velocities (eq. 27). This module gives:
//!
//! * [`projection`]: the per-contact projection `gamma = P_F(y)` in the `R` norm, its regions,
//!   cost and `G = -dgamma/dv_c` (section V-A, appendices C-D);
//! * [`params`]: the regularisation from physics (`R_n`, `R_t`, `v^`; eqs. 29-30);
//! * [`cost`]: the cost as a production [`Merit`](contactlab_core::Merit) with the sparse
//!   Hessian `A + J'GJ` (factored by body blocks, or by faer's sparse Cholesky for large trees),
//!   the O(n) line derivatives (section IV-C) and the stopping measure of eq. 26;
//! * [`blocks`]: the constraint-agnostic cost over every constraint kind (section III's form
//!   with each kind's set);
//! * [`plugin`]: `--formulation sap`. Algorithm 2 itself (Newton, exact line search on
//!   `dl/dalpha`, or Armijo backtracking) is core's `newton-merit` driver on this cost; any
//!   other `Merit` driver runs it too;
//! * `rows`: the Jacobian contact by contact (`J_i`), turned around once per build and shared
//!   by the regularisation and the cost;
//! * [`conic`]: the primal problem (eq. 19) as a conic program, so an interior-point driver
//!   (`clarabel`) solves the same problem, as the paper's comparison with Gurobi does;
//! * [`sensitivity`]: the answer's derivatives to the generalized data (`f`, `w`, `M`, `H`,
//!   `mu`) by the implicit function theorem on eq. 24's optimality, `R` and `v^` frozen.
//!
//! Convention: contact rows are normal first here (`R = diag(R_n, R_t, R_t)`); the paper writes
//! the normal last.
//!
//! # Where Drake's SAP departs from the paper, and what we follow
//!
//! Drake's implementation (`multibody/contact_solvers/sap/`) is the paper's authors' production
//! code and differs in places; we follow the paper unless said otherwise:
//!
//! * **Stopping.** Drake also stops when the cost stalls (relative change below a tolerance).
//!   We stop on eq. 26 only (`|D grad| <= eps_a + eps_r max(|D p|, |D j_c|)`), plus the
//!   driver's own `stagnated` status when a step no longer changes `v`; a stall is reported,
//!   not counted as convergence.
//! * **Line search.** Drake's exact search allows `alpha_max = 1.5`; the paper says 1.25, which
//!   is our default (`newton-merit`'s `line_search.alpha_max` changes it).
//! * **Scaling.** Both scale the optimality measure by `D = diag(A)^-1/2` (eq. 25); so do we.
//! * **Delassus estimate.** Drake takes `w_i` from the diagonal of `W_ii`, with separate normal
//!   and tangential values; we use the paper's rms `|W_ii|_F / 3` (sec. V-B; [`params`]).
//! * **Near-rigid switch.** As eq. 29 states it: `R_n` is the larger of the compliant and the
//!   near-rigid values; no switch on `tau_d`.
//! * **Other constraints.** Drake's SAP also takes joint limits, couplers, distance and weld
//!   constraints, which the paper only mentions. Here every MuJoCo kind (equality, limit,
//!   friction loss, contacts of condim 1, 4 and 6) enters the same cost by the paper's
//!   constraint-agnostic form ([`blocks`]: each set's projection in `R`'s norm, eq. 29's
//!   regularisation row by row, eq. 30's for dry friction), on a dense path sized for robot
//!   problems; Coulomb-only problems keep the sparse path below.
//! * **Islands.** The paper solves the step as one problem (its Algorithm 2: one Newton step
//!   and one line search for all unknowns), and so does `newton-merit` with `by_island = false`
//!   (castro2022's configs). The cost lays its unknowns out island by island, and by default the
//!   driver steps each island with its own line search, the stopping test staying eq. 26 on the
//!   whole ([`cost`]). Only the trees some contact touches enter the Newton system, as in Drake.

pub mod blocks;
pub mod conic;
pub mod cost;
pub mod params;
pub mod plugin;
pub mod projection;
mod rows;
pub mod sensitivity;

pub use blocks::SapBlockCost;
pub use cost::{HessianFactorization, SapCost};
pub use params::{regularization, Regularization, RegularizationParams};
pub use plugin::{SapBuilt, SapFormulation};
pub use projection::{ContactRegularization, SapRegion};

#[cfg(test)]
mod tests;
