//! Each paper's formulation.
