//! Hwangbo, Lee and Hutter 2018, "Per-contact iteration method for solving contact dynamics"
//! (RA-L 3(2)): the single-contact problem (sec. III-A, eqs. 5-16) and its methods, and the
//! two multi-contact drivers (Algorithm 2 and the PGS of sec. IV, eqs. 17-18).
//!
//! | module | what |
//! |---|---|
//! | [`single`] | the cases (opening, sticking, slipping) and the conic section of eqs. 13-16; the independent [`Reference`] (scan + Newton) |
//! | [`bisection`] | Algorithm 1: bisection on the angle with the hybrid gradient of eqs. 15-16 |
//! | [`golden`] | the golden-section search over the line-of-sight region (sec. V-B) |
//! | [`analytical`] | the quartic closed form (sec. V-B), companion-matrix roots polished by Newton |
//! | [`coulomb`] | Coulomb's law (eq. 6) solved exactly for one contact, for tests and model comparisons |
//! | [`planar`] | a contact whose block is singular along one tangent (a planar model's), reduced to the problem of its plane |
//! | [`pgs`] | the per-component PGS update of eqs. 17-18, extended to the elliptic cones (Euclidean projection onto the friction ellipse) |
//! | [`driver`] | `bisection-sor` (Algorithm 2) and `pgs-hwangbo` (sec. IV) as registered drivers, on every constraint kind (bisection-sor: contacts of condim 1 and 3 only) |
//!
//! Every single-contact method is a small type implementing
//! [`ContactSolver`](contactlab_core::drivers::sweep::ContactSolver), plugged into the one
//! sweep of `contactlab_core::drivers::sweep`; each is also callable alone, allocation-free,
//! through [`solve_contact`] (for batch timing).

pub mod analytical;
pub mod bisection;
pub mod coulomb;
pub mod driver;
pub mod golden;
pub mod pgs;
pub mod planar;
pub mod sensitivity;
pub mod single;
#[cfg(test)]
mod tests;

pub use analytical::Analytical;
pub use bisection::Bisection;
pub use coulomb::CoulombExact;
pub use driver::{BisectionSor, HwangboLocal, HwangboPgs, LocalMethod};
pub use golden::GoldenSection;
pub use pgs::PgsStep;
pub use single::{classify, solve_contact, Case, Reference, SlipConic, SlipMethod};
