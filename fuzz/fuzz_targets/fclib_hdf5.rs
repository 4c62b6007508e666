//! FCLib HDF5 problem files: any bytes through `parse_fclib` (the HDF5 parser included) must
//! give a problem or an error, never a panic, a hang or an unbounded allocation; a global
//! problem must convert to local and generalized form or refuse with an error (`read_local`'s and
//! `contactlab solve`'s paths).
#![no_main]

use std::path::Path;

use contactlab_core::io::fclib::parse_fclib;
use contactlab_core::{GeneralizedProblem, Problem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Problem::Global(g)) = parse_fclib(data.to_vec(), Path::new("fuzz.hdf5")) {
        let _ = g.to_local();
        let _ = GeneralizedProblem::from_global(&g);
    }
});
