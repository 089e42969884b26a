//! One module per subcommand: each turns parsed arguments into work done by
//! the library and output for the user. Dispatch lives here.

mod board;
mod bot;
mod perft;
mod play;
mod players;

use crate::cli::{BoardCommand, Cli, Command};

/// Runs the parsed command line; the error carries its exit status.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Play(args) => play::run(&args),
        Command::Board(BoardCommand::Status(args)) => board::status(&args),
        Command::Bot(args) => bot::run(&args),
        Command::Perft(args) => perft::run(&args),
    }
}
