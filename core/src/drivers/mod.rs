//! Drivers (optimizers) on argmin's `Solver` trait.
