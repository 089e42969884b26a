//! One module per subcommand: each turns parsed arguments into work done by
//! the library and output for the user. Dispatch lives here.

mod board;
mod bot;
mod crosstable;
mod perft;
mod play;
mod players;
mod run;
mod watch;

use crate::cli::{BoardCommand, Cli, Command};

/// Runs the parsed command line; the error carries its exit status.
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Crosstable(args) => crosstable::run(&args),
        Command::Watch(args) => watch::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Board(BoardCommand::Status(args)) => board::status(&args),
        Command::Bot(args) => bot::run(&args),
        Command::Perft(args) => perft::run(&args),
    }
}
