//! The Coulomb friction cone and its projection.
