//! # contactlab-core: the optimization DSL
//!
//! The data flow of the workspace (see `docs/DESIGN.md`):
//!
//! ```text
//! problem (problem.rs, io/) --formulation--> Residual / Merit (residual.rs, merit.rs)
//!     --driver (drivers/)--> Solution + Trace (result.rs) --> metrics (metrics.rs)
//! ```
//!
//! Contact-frame convention, used everywhere inside the project: each contact owns three
//! consecutive rows, **normal first**, `[n, t1, t2]` (the FCLib and Todorov order). Papers that
//! put the normal last (Castro's SAP, Mylapilli and Jain) convert at their edge with
//! [`frame`].
//!
//! A formulation implements the traits it can ([`Residual`], [`NonSmoothResidual`],
//! [`ProjectedResidual`], [`Merit`]); each driver asks for exactly what it needs, so pairing a
//! formulation with a driver it cannot feed is a compile error:
//!
//! ```compile_fail
//! use contactlab_core::drivers::{solve_least_squares, LevenbergMarquardt};
//! use contactlab_core::{Merit, SolveOptions};
//! use faer::MatMut;
//!
//! /// A convex merit that is not a least-squares residual.
//! struct Quadratic;
//! impl Merit for Quadratic {
//!     fn dim(&self) -> usize { 1 }
//!     fn value(&self, x: &[f64]) -> f64 { 0.5 * x[0] * x[0] }
//!     fn gradient(&self, x: &[f64], g: &mut [f64]) { g[0] = x[0]; }
//!     fn hessian(&self, _x: &[f64], mut h: MatMut<'_, f64>) { h[(0, 0)] = 1.0; }
//! }
//! // Levenberg-Marquardt needs a `Residual`: this does not compile.
//! let _ = solve_least_squares(Quadratic, LevenbergMarquardt::default(), vec![1.0], &SolveOptions::default());
//! ```

pub mod block_cholesky;
pub mod blocks;
pub mod cone;
pub mod cone_scaling;
pub mod conic_program;
pub mod constraint;
pub mod contactbench;
pub mod deadline;
pub mod dense;
pub mod disjoint_sets;
pub mod drivers;
pub mod elliptic_cone;
pub mod error;
pub mod frame;
pub mod generalized;
pub mod io;
pub mod islands;
pub mod merit;
pub mod metrics;
pub mod panels;
pub mod plugin;
pub mod problem;
pub mod residual;
pub mod result;

pub use blocks::BlockMatrix;
pub use conic_program::{ConicData, ConicProgram};
pub use constraint::{Constraint, Constraints};
pub use error::{CoreError, ProblemError};
/// faer, whose matrix views the [`Residual`] trait takes, re-exported for notebooks.
pub use faer;
pub use generalized::{
    BlockModel, ContactModel, GeneralizedProblem, RowModels, StepContext, StepProblem, Storage,
};
pub use islands::{solve_by_island, Islands, Layout};
pub use merit::{LinePoint, Merit, MeritEval, MeritHessian, Optimality, OwnNewton};
/// nalgebra, whose 3x3 blocks the per-contact solvers take, re-exported for notebooks.
pub use nalgebra;
/// The ndarray crate problems can be built from ([`io::arrays`]), re-exported for notebooks.
pub use ndarray;
pub use plugin::{Driver, Formulation, Init, LocalSolve};
pub use problem::{Cholesky, GlobalProblem, LocalProblem, Matrix, Problem};
pub use residual::{
    BDerivative, Edge, EdgeMix, NewtonDirection, NewtonSystem, NonSmoothResidual, NormalEquations,
    ProjectedResidual, Residual,
};
pub use result::{Solution, SolveOptions, Status, Trace, TraceRow};
