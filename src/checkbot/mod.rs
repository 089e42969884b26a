//! check-bot: plays scripted positions against one bot and judges every
//! answer against mailbox protocol v1, with a concrete hint for each
//! violation.
//!
//! Owns: the entry point ([`check_bot`]) and its options; the concerns
//! live in the modules below: `script` (which messages, which positions,
//! in which order), `drive` (talking to the bot as the referee does),
//! `judge` (what an answer should have been, and the problem if it was
//! not), `report` (steps, verdicts, the report and its wordings) and
//! `hints` (hints that look past one answer, and the folding of repeated
//! ones). Drives a real [`Instance`] so the bot runs exactly as under the
//! referee (own process group, mailbox as working directory). Returns a
//! [`Report`] and hands each finished step to a callback; printing, exit
//! codes and the temporary board belong to the command
//! (`commands::check_bot`). Records no game and decides no result.
//!
//! Policy: an unknown message kind (`PING`) that is not answered `OK` is
//! only a warning, since bots written before that rule still play every
//! real game. A bot that leaves a message unanswered or writes an unreadable
//! out.txt is restarted (fresh mailbox, seq from 1, as the referee does after
//! a forfeit), gets the NEW of the game in progress again, and the script
//! goes on; after [`MAX_BROKEN`] such exchanges, or when the bot's process
//! ends on its own (other than after BYE, which is allowed), checking stops.

use crate::error::HarnessError;
use crate::player::Instance;

mod drive;
mod hints;
mod judge;
mod report;
mod script;

pub use drive::{Options, MAX_BROKEN};
pub use hints::RepeatedHints;
pub use judge::{judge_move, BadMove};
pub use report::{Problem, Report, Step, Verdict};
pub use script::{scripted, BLACK_MUST_PASS, FOUR, ONE_MOVE, SIX, STRICT_ENV, WHITE_PASSES};

use drive::{Run, Stats};

/// Plays the script against `inst` (not yet started: this starts it) and
/// returns the report; `on_step` sees each step as soon as it is judged.
/// `Err` only for the harness's own failures (the board unwritable, the bot
/// not startable).
pub fn check_bot(
    inst: &mut Instance,
    opts: &Options,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Report, HarnessError> {
    let span = tracing::info_span!("game", id = "check-bot", bot = %inst.id());
    inst.prepare(span.clone()).map_err(HarnessError::from)?;
    let mut run = Run {
        inst,
        opts: *opts,
        span,
        report: Report::default(),
        on_step,
        broken: 0,
        game_new: None,
        after_bye: false,
        last_raw: None,
        answered_any: false,
        stats: Stats::default(),
        turns_sent: vec![],
    };
    run.script()?;
    Ok(run.report)
}
