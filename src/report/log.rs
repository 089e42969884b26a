//! Game events as tracing events: game start and end at info, every move at
//! debug (shown with `-v`, always in the game's log file), forfeits at warn
//! with the last lines of the bot's stderr and where the game's log is.

use crate::event::{Event, EventSink};

use super::result_line;

pub struct LogReporter;

impl EventSink for LogReporter {
    fn emit(&self, event: &Event<'_>) {
        match event {
            Event::GameStarted {
                black,
                white,
                size,
                opening,
                round,
                ..
            } => tracing::debug!(
                round,
                "game started: {black} (black) vs {white} (white), {size}x{size}, opening `{opening}`"
            ),
            Event::Waiting {
                player,
                mailbox,
                start,
                waited_secs,
                ..
            } => tracing::info!(
                "waiting {waited_secs} s for {player}, a bot started by hand, to answer NEW: is it \
                 running? Its mailbox on its machine is {mailbox}; start it there with: {start}"
            ),
            Event::Move {
                ply,
                color,
                square,
                ms,
                black,
                white,
                ..
            } => tracing::debug!(ply, color = %color, mv = %square, ms, black, white, "move"),
            Event::Pass {
                ply, color, auto, ..
            } => tracing::debug!(ply, color = %color, auto, "pass"),
            Event::Illegal {
                color,
                answer,
                reason,
                retries_left,
                ..
            } => tracing::warn!(
                "{color} answered {answer:?} ({reason}); ILLEGAL sent, {retries_left} retries left"
            ),
            Event::Forfeit {
                id,
                color,
                reason,
                detail,
                stderr_tail,
            } => tracing::warn!(
                "{color} forfeits ({reason}): {detail}{}",
                forfeit_context(id, stderr_tail)
            ),
            Event::GameOver { record } => {
                tracing::debug!(transcript = %record.transcript, "game over: {}", result_line(record))
            }
        }
    }
}

/// Stderr lines shown on the console with a forfeit (all of them are in
/// the game's log).
pub const FORFEIT_STDERR_LINES: usize = 8;
/// Characters of each such line shown on the console.
const FORFEIT_LINE_CHARS: usize = 300;

/// What follows a forfeit's line: the bot's last stderr lines (already
/// made visible, at most [`FORFEIT_STDERR_LINES`]) and the game's log.
fn forfeit_context(id: &str, stderr_tail: &[String]) -> String {
    let mut text = String::new();
    let shown = &stderr_tail[stderr_tail.len().saturating_sub(FORFEIT_STDERR_LINES)..];
    if !shown.is_empty() {
        text.push_str("\n    last lines of its stderr:");
        for line in shown {
            text.push_str("\n    | ");
            match line.char_indices().nth(FORFEIT_LINE_CHARS) {
                Some((cut, _)) => {
                    text.push_str(&line[..cut]);
                    text.push('…');
                }
                None => text.push_str(line),
            }
        }
    }
    if let Some(path) = crate::logging::game_log_path(id) {
        text.push_str(&format!("\n    the game's log: {}", path.display()));
    }
    text
}
