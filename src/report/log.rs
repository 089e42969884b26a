//! Game events as tracing events: game start and end at info, every move at
//! debug (shown with `-v`, always in the game's log file), forfeits at warn.

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
                mv,
                ms,
                black,
                white,
                ..
            } => tracing::debug!(ply, color = %color, mv, ms, black, white, "move"),
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
                color,
                reason,
                detail,
                ..
            } => tracing::warn!("{color} forfeits ({reason}): {detail}"),
            Event::GameOver { record } => {
                tracing::debug!(transcript = %record.transcript, "game over: {}", result_line(record))
            }
        }
    }
}
