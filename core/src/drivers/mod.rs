//! Drivers (optimizers) on argmin's `Solver` trait.
pub mod pgs;
