//! Accuracy metrics shared by all solvers.
