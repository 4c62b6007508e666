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
//! Optionally the residual is rescaled to `D r(x)` with `D` diagonal positive (section V-A,
//! the proposed recovery from local minima and preconditioning; [`ImplicitNcp::with_row_sum_scaling`]).

mod kinds;
mod ncp;
pub(crate) use ncp::block;
pub mod plugin;
pub mod solver;

pub use kinds::BlockMap;
pub use ncp::{
    contact_crossings, edge_at, edge_normal, edge_tangent_basis, impulse, project_on_cone_edge,
    pseudo_inverse_solve, region_along, velocity, EdgeKind, ImplicitNcp, Region,
};
pub use plugin::ImplicitNcpFormulation;
pub use solver::{solve_todorov, Todorov, TodorovSolver};
