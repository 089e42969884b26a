//! `tournament bot NAME`: a built-in bot on a mailbox.

use crate::builtin::{self, Strategy};
use crate::cli::BotArgs;
use crate::error::exit;

pub fn run(args: &BotArgs) -> anyhow::Result<i32> {
    #[cfg(target_os = "linux")]
    // SAFETY: asks the kernel to kill this bot when its parent (the referee)
    // dies, so a referee killed with -9 leaves no built-in bot behind.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
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
