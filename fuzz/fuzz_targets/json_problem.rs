//! JSON problem files: any bytes through `parse_json` must give a problem or an error, never a
//! panic, a hang or an unbounded allocation. A problem read must write back and read again, and
//! a global one must convert to local and generalized form or refuse with an error (`read_local`'s and
//! `contactlab solve`'s paths).
#![no_main]

use std::path::Path;

use contactlab_core::io::{parse_json, to_json_string};
use contactlab_core::{GeneralizedProblem, Problem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.json");
    let Ok(problem) = parse_json(text, path) else {
        return;
    };
    let written = to_json_string(&problem).expect("a problem read validates, so it writes");
    parse_json(&written, path).expect("a written problem reads back");
    if let Problem::Global(g) = &problem {
        let _ = g.to_local();
        let _ = GeneralizedProblem::from_global(g);
    }
});
