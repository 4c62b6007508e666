//! # contactlab-formulations
//!
//! Each module turns a contact problem into the traits of `contactlab-core`
//! ([`contactlab_core::Residual`], [`contactlab_core::Merit`], ...), so any driver whose needs
//! a formulation meets can run it, and registers it as a plugin
//! ([`contactlab_core::plugin::FormulationPlugin`]: [`ImplicitNcpFormulation`],
//! [`MinMapFormulation`], [`MlcpFbFormulation`], [`MncpFormulation`],
//! [`NaturalMapFormulation`]). The papers' own drivers are generic: [`Todorov`] runs any
//! `NonSmoothResidual`, [`ErlebenNewton`] any `BDerivative`. Frames are normal first inside the project (see
//! `contactlab_core::frame`).
//!
//! | module | source | what it is |
//! |---|---|---|
//! | [`castro`] | Castro, Permenter and Han 2022, eqs. 18-37 | SAP: the convex primal cost in generalized velocities, analytic projection, sparse Hessian, O(n) line derivatives, regularisation from physics |
//! | [`hwangbo`] | Hwangbo, Lee and Hutter 2018, eqs. 5-18, Algorithms 1-2 | single-contact problem (opening, sticking, slipping on the conic section), bisection, golden section, quartic, exact Coulomb; `bisection-sor` and `pgs-hwangbo` drivers on the shared sweep |
//! | [`erleben`] | Erleben and Ortiz 2008, eqs. 1-11 | boxed LCP with friction-pyramid bounds, min-map `H(x)` (eq. 5), its B-derivative (eq. 9), Schur-reduced non-smooth Newton with PGS warm start, random boxed-LCP generator |
//! | [`mylapilli`] | Mylapilli and Jain 2014, eqs. 14-35 | Fischer-Burmeister MLCP with `n_f` friction directions (eqs. 22, 24) on every kind, and the implicit MNCP with bilateral (equality) rows (eqs. 31, 34) |
//! | [`natural_map`] | FCLib (Acary et al. RT-0444), Alart and Curnier 1991 | the Coulomb problem's natural map as a residual |
//! | [`todorov`] | Todorov 2010, eqs. 10-29, sections III-F and V-A | implicit NCP maps `f(x)`, `v(x)`, residual (eq. 15), edges, crossings, cone-edge projection; the edge-aware LM-dogleg on any `NonSmoothResidual`; sticking start, rescaling and restarts |
//! | [`pyramid`] | Mylapilli and Jain 2014, Example 2 | turning a friction pyramid's faces (shared by `min-map` and `mlcp-fb`) |

pub mod castro;
pub mod erleben;
#[cfg(test)]
mod fixtures;
pub mod hwangbo;
pub mod mylapilli;
pub mod natural_map;
pub mod pyramid;
pub mod todorov;

pub use castro::SapFormulation;
pub use erleben::{ErlebenNewton, MinMapFormulation};
pub use hwangbo::{BisectionSor, HwangboPgs};
pub use mylapilli::{MlcpFbFormulation, MncpFormulation};
pub use natural_map::{NaturalMap, NaturalMapFormulation};
pub use todorov::{ImplicitNcp, ImplicitNcpFormulation, Todorov};
