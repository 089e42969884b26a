//! `tournament bot NAME`: a built-in bot on a mailbox.

use crate::builtin::{self, Strategy};
use crate::cli::BotArgs;
use crate::error::exit;

pub fn run(args: &BotArgs) -> anyhow::Result<i32> {
    crate::player::process::die_with_parent();
    let dir = match &args.mailbox {
        Some(d) => d.clone(),
        None => match std::env::var_os("TOURNAMENT_MAILBOX") {
            Some(d) => d.into(),
            None => std::env::current_dir()?,
        },
    };
    let strategy = Strategy::from_name(&args.name).expect("clap checked the name");
    builtin::run(strategy, args.seed, &dir, args.games)?;
    Ok(exit::OK)
}
