//! One module per subcommand: each turns parsed arguments into work done by
//! the library and output for the user. Dispatch lives here.

mod perft;

use crate::cli::{Cli, Command};

/// Runs the parsed command line; the error carries its exit status.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Perft(args) => perft::run(&args),
    }
}
