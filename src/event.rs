//! What happens during a game, as events: the referee emits them and
//! reporters (console, progress bar, live file, logs) consume them.
//!
//! Owns the event type and the sink trait. Emits nothing itself.

use crate::game::{Color, Square};
use crate::record::{EndReason, GameRecord};

#[derive(Clone, Debug)]
pub enum Event<'a> {
    GameStarted {
        id: &'a str,
        round: u32,
        black: &'a str,
        white: &'a str,
        size: u8,
        opening: &'a str,
    },
    /// A bot started by hand is late to answer NEW (not sent before it is).
    Waiting {
        id: &'a str,
        player: &'a str,
        /// Its mailbox as its own machine spells it (`board-as`).
        mailbox: &'a str,
        /// A command to copy for starting it there.
        start: &'a str,
        waited_secs: u64,
    },
    Move {
        id: &'a str,
        ply: u32,
        color: Color,
        square: Square,
        ms: u64,
        black: u32,
        white: u32,
        board: &'a str,
    },
    Pass {
        id: &'a str,
        ply: u32,
        color: Color,
        /// Made by the referee for a bot without a legal move.
        auto: bool,
        board: &'a str,
    },
    /// An illegal answer that is retried (max-retries).
    Illegal {
        id: &'a str,
        color: Color,
        answer: &'a str,
        reason: EndReason,
        retries_left: u32,
    },
    Forfeit {
        id: &'a str,
        color: Color,
        reason: EndReason,
        detail: &'a str,
        /// The last lines of the forfeiting bot's stderr (already made
        /// visible), oldest first.
        stderr_tail: &'a [String],
    },
    GameOver {
        record: &'a GameRecord,
    },
}

impl Event<'_> {
    pub fn game_id(&self) -> &str {
        match self {
            Event::GameStarted { id, .. }
            | Event::Waiting { id, .. }
            | Event::Move { id, .. }
            | Event::Pass { id, .. }
            | Event::Illegal { id, .. }
            | Event::Forfeit { id, .. } => id,
            Event::GameOver { record } => &record.id,
        }
    }
}

/// Anything that consumes events. Called on the referee's thread: keep it quick.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event<'_>);
}

/// Forwards every event to several sinks.
#[derive(Default)]
pub struct Fanout(pub Vec<Box<dyn EventSink>>);

impl EventSink for Fanout {
    fn emit(&self, event: &Event<'_>) {
        for sink in &self.0 {
            sink.emit(event);
        }
    }
}

/// Discards events.
pub struct Silent;

impl EventSink for Silent {
    fn emit(&self, _: &Event<'_>) {}
}
