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
//!   Hessian `A + J'GJ`, the O(n) line derivatives (section IV-C) and the stopping measure of
//!   eq. 26;
//! * [`plugin`]: `--formulation sap`. Algorithm 2 itself (Newton, exact line search on
//!   `dl/dalpha`, or Armijo backtracking) is core's `newton-merit` driver on this cost, with
//!   faer's sparse Cholesky and its symbolic analysis reused; any other `Merit` driver runs it
//!   too;
//! * [`conic`]: the primal problem (eq. 19) as a conic program, so an interior-point driver
//!   (`clarabel`) solves the same problem, as the paper's comparison with Gurobi does.
//!
//! Convention: contact rows are normal first here (`R = diag(R_n, R_t, R_t)`); the paper writes
//! the normal last.

pub mod conic;
pub mod cost;
pub mod params;
pub mod plugin;
pub mod projection;

pub use cost::SapCost;
pub use params::{regularization, Regularization, RegularizationParams};
pub use plugin::SapFormulation;
pub use projection::{ContactRegularization, SapRegion};

#[cfg(test)]
mod tests;
