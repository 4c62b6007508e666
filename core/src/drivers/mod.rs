//! Drivers (optimizers) on argmin's `Solver` trait.
pub mod execute;
pub mod pgs;
