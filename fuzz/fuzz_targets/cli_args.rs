//! Command-line numbers and options: the input, split at NUL bytes, is the argument list after
//! `contactlab`. Parsing must give a command or an error; for `solve`, building and checking
//! its solver spec (`--tol`, `--max-iter`, `--time-limit`, `-F`/`-O KEY=VALUE`, ...) and, for
//! `run`, the shard must too. No file is read and nothing is solved or written.
#![no_main]

use clap::Parser;
use contactlab_experiments::cli::{check_solve_args, Cli, Command};
use contactlab_experiments::registry::Registry;
use contactlab_experiments::store::parse_shard;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let args = std::iter::once("contactlab").chain(text.split('\0'));
    let Ok(cli) = Cli::try_parse_from(args) else {
        return;
    };
    match &cli.command {
        Command::Solve {
            formulation,
            optimizer,
            tol,
            max_iter,
            options,
            ..
        } => {
            let _ = check_solve_args(
                &Registry::standard(),
                formulation,
                optimizer,
                *tol,
                *max_iter,
                options,
            );
        }
        Command::Run {
            shard: Some(shard), ..
        } => {
            let _ = parse_shard(shard);
        }
        _ => {}
    }
});
