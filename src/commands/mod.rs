//! One module per subcommand: each turns parsed arguments into work done by
//! the library and output for the user. Dispatch lives here.

mod board;
mod bot;
mod check_bot;
mod crosstable;
mod export;
mod merge;
mod output;
mod pasteable;
mod perft;
mod play;
mod players;
mod replay;
mod report;
mod run;
mod seat;
mod serve;
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
        Command::CheckBot(args) => check_bot::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Perft(args) => perft::run(&args),
        Command::Merge(args) => merge::run(&args),
        Command::Seat(args) => seat::run(&args),
    }
}
