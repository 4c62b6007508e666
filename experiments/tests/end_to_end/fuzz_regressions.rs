//! Inputs that crashed, hung or exhausted memory in the fuzz targets of `fuzz/` (or were
//! crafted against them), kept as regression tests on stable: each must now give an error
//! naming what is wrong.

use std::path::Path;

use clap::Parser;
use contactlab_experiments::cli::{check_solve_args, Cli, CliError, Command};
use contactlab_experiments::config::{ConfigError, ExperimentConfig, RunConfig};
use contactlab_experiments::registry::Registry;
use contactlab_experiments::Lab;

/// The `solve` arguments of a command line, checked as `contactlab solve` checks them.
fn solve_args(args: &[&str]) -> Result<(), CliError> {
    let cli = Cli::try_parse_from(std::iter::once("contactlab").chain(args.iter().copied()))
        .expect("the command line parses");
    let Command::Solve {
        formulation,
        optimizer,
        tol,
        max_iter,
        options,
        ..
    } = &cli.command
    else {
        panic!("not a solve command");
    };
    check_solve_args(
        &Registry::standard(),
        formulation,
        optimizer,
        *tol,
        *max_iter,
        options,
    )
    .map(|_| ())
}

/// The key and message of a config's `Invalid` error.
fn invalid(text: &str) -> (String, String) {
    let path = Path::new("fuzz.toml");
    let checked = ExperimentConfig::parse(text, path)
        .and_then(|cfg| Lab::standard().check_experiment(&cfg, path));
    match checked {
        Err(ConfigError::Invalid { key, message, .. }) => (key, message),
        other => panic!("expected an invalid-value error, got {other:?}"),
    }
}

const DRIVER: &str = "[driver]\nformulation = \"coulomb\"\noptimizer = \"pgs\"\n";

#[test]
fn a_time_limit_beyond_durations_range_is_an_error_not_a_panic() {
    // Panicked in Duration::from_secs_f64 ("value is either too big or NaN") when the spec was
    // resolved: --time-limit only had to be positive and finite.
    let e = solve_args(&["solve", "x.json", "--time-limit", "1e300"]).unwrap_err();
    assert!(e.to_string().contains("time_limit is too large"), "{e}");
    assert!(solve_args(&["solve", "x.json", "--time-limit", "2.5"]).is_ok());
    // The same spec from a config.
    let text = format!(
        "paper = \"p\"\nname = \"n\"\n[scene]\nkind = \"sphere_on_plane\"\nsteps = 1\n{DRIVER}time_limit = 1e300\n"
    );
    let (key, message) = invalid(&text);
    assert_eq!(key, "driver");
    assert!(message.contains("time_limit is too large"), "{message}");
}

#[test]
fn a_ball_drop_of_a_trillion_balls_is_refused_before_placing_them() {
    // ball_drop's check placed n_balls balls: 1e8 exceeded the 2 GB RSS limit, 1e12 aborted on
    // the allocation.
    let text = format!(
        "paper = \"p\"\nname = \"n\"\n[scene]\nkind = \"ball_drop\"\nsteps = 1\n[scene.params]\nn_balls = 1000000000000\n{DRIVER}"
    );
    let (key, message) = invalid(&text);
    assert_eq!(key, "scene.params / sweep");
    assert!(
        message.contains("n_balls") && message.contains("must be in 1..=10000"),
        "{message}"
    );
}

#[test]
fn a_sweep_whose_product_overflows_is_refused() {
    // Twenty lists of ten values: the product of their lengths (1e20) overflowed usize (a
    // panic in Iterator::product); smaller products past memory were allocated up front.
    let lists: String = (0..20)
        .map(|k| format!("k{k:02} = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"))
        .collect();
    let text = format!(
        "paper = \"p\"\nname = \"n\"\n[scene]\nkind = \"sphere_on_plane\"\nsteps = 1\n[sweep]\n{lists}{DRIVER}"
    );
    let (key, message) = invalid(&text);
    assert_eq!(key, "sweep");
    assert!(message.contains("more than 10000 runs"), "{message}");
}
