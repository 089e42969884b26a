//! `tournament check-bot -- CMD…`: scripted positions against one bot.

use crate::cli::CheckBotArgs;

pub fn run(_args: &CheckBotArgs) -> anyhow::Result<i32> {
    anyhow::bail!("this command is being built")
}
