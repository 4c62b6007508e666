//! # contactlab-formulations
//!
//! Each module turns a contact problem into the traits of `contactlab-core`
//! ([`contactlab_core::Residual`], [`contactlab_core::Merit`], ...), so any driver whose needs
//! a formulation meets can run it. Frames are normal first inside the project (see
//! `contactlab_core::frame`).
//!
//! | module | source | what it is |
//! |---|---|---|
//! | [`natural_map`] | FCLib (Acary et al. RT-0444), Alart and Curnier 1991 | the Coulomb problem's natural map as a residual |

pub mod natural_map;

pub use natural_map::NaturalMap;
