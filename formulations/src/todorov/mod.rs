//! Todorov 2010, implicit nonlinear complementarity.
//!
//! Contact-space problem `A f + v0 = v` (eq. 1; FCLib's `W r + q = u`), normal first per
//! contact. Each contact's impulse and velocity are functions of one unconstrained
//! `x_k = [x_n, x_F]` (eqs. 10-13), built so that the normal complementarity (eq. 11) and
//! the friction law (eq. 7) hold for every `x`:
//!
//! * `f_n = max(0, b - x_n)`, `v_n = max(b, x_n)` (eq. 10),
//! * `s = min(1, mu f_n / |x_F|)`, `f_F = -s x_F`, `v_F = (1 - s) x_F` (eqs. 12-13),
//! * hence `v(x) = f(x) + x` (eq. 14), and the residual is
//!   `r(x) = (A - I) f(x) - x + v0` (eq. 15).
//!
//! `x_k` lies in one of three smooth regions ([`Region`]): *break* (`x_n > b`, `f = 0`),
//! *stick* (`|x_F| <= mu (b - x_n)`, `f = b e_n - x`) and *slip* (the rest). The edges between
//! them are the plane `x_n = b` and the cone `mu (b - x_n) = |x_F|` (the paper's Fig. 1C).
//! The Jacobian is `J = (A - I) F' - I` with `F' = df/dx` block diagonal, one 3x3 block per
//! contact and region ([`Region::df_dx`]).
//!
//! **Every constraint kind** ([`contactlab_core::constraint`]). The paper's map is the
//! Coulomb contact's; footnote 1 (section I-A) says joints may be represented "with equality
//! constraints" in the same development, and the paper says nothing more about other kinds.
//! We extend the map block by block in the same form, `f_b(x_b)`, `v_b = f_b + x_b` meeting
//! the kind's law for every `x_b` ([`BlockMap`], the derivations in its module): an equality's
//! impulse free and velocity zero (`f = -x`), a limit and a frictionless contact eq. 10, a
//! friction loss eqs. 12-13 with the fixed bound `f_max` in place of `mu f_n`, and a contact
//! with per-row coefficients (condim 3, 4, 6) the stick/slip split of the elliptic cone in
//! the scaled tangential coordinates `x_i / mu_i`, its slip piece the projection onto the
//! ellipse. `x_b` has the block's rows, so `x` has the problem's rows and eq. 15 holds as is,
//! `F'` block diagonal with one `rows x rows` block per constraint. A problem of Coulomb
//! contacts only keeps the 3x3 path above, decided once at build; any other problem takes the
//! block path, whose edges (a limit's plane, a friction loss's `|x| = f_max`, the elliptic
//! cone) the edge-aware line search handles as the paper's.
//!
//! Optionally the residual is rescaled to `D r(x)` with `D` diagonal positive (section V-A,
//! the proposed recovery from local minima and preconditioning; [`ImplicitNcp::with_row_sum_scaling`]).

mod general;
mod kinds;
mod ncp;
pub(crate) use ncp::block;
pub mod plugin;
mod pseudo_inverse;
pub mod solver;

pub use kinds::BlockMap;
pub use ncp::{
    contact_crossings, edge_at, edge_normal, edge_tangent_basis, impulse, project_on_cone_edge,
    region_along, velocity, EdgeKind, ImplicitNcp, Region,
};
pub use plugin::ImplicitNcpFormulation;
pub use pseudo_inverse::{eigen_pseudo_inverse_solve, pseudo_inverse_solve};
pub use solver::{solve_todorov, Todorov, TodorovSolver};

#[cfg(test)]
mod tests;
