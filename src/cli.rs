//! The command line, as clap derive types. Nothing here runs anything.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "tournament",
    version,
    about = "Othello tournaments between bots written in any language",
    long_about = "Runs Othello tournaments between bots written in any language. \
                  Bots talk to the referee through move files in a shared \
                  message-board folder (mailbox protocol v1, see PROTOCOL.md)."
)]
pub struct Cli {
    /// More log output (-v: every move, -vv: protocol messages).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Less log output (warnings and errors only).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count the leaves of the game tree from the start position.
    Perft(PerftArgs),
}

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Deepest depth to count (every depth from 1 up to it is printed).
    pub depth: u32,
    /// Board size: 4, 6 or 8.
    #[arg(long, default_value_t = 8, value_parser = parse_size)]
    pub size: u8,
}

/// Accepts 4, 6 or 8.
pub fn parse_size(text: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(n) if crate::game::SIZES.contains(&n) => Ok(n),
        _ => Err(format!("board size must be 4, 6 or 8, not `{text}`")),
    }
}

/// Where a config file is looked for when none is given.
pub fn default_config() -> PathBuf {
    PathBuf::from("tournament.toml")
}
