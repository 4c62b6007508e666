//! The `contactlab` program; all logic lives in `contactlab_experiments::cli`.

use clap::Parser;
use contactlab_experiments::cli::{run, Cli};

/// Every timed solve allocates (workspaces, the answer, its trace); mimalloc keeps freed memory
/// for the next step where glibc's malloc gave it back to the kernel and faulted it in again.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    if let Err(e) = run(cli, &mut stdout.lock()) {
        eprintln!("contactlab: error: {e}");
        std::process::exit(2);
    }
}
