//! The `contactlab` program; all logic lives in `contactlab_experiments::cli`.

use clap::Parser;
use contactlab_experiments::cli::{run, Cli};

fn main() {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    if let Err(e) = run(cli, &mut stdout.lock()) {
        eprintln!("contactlab: error: {e}");
        std::process::exit(2);
    }
}
