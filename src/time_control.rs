//! How much time each side of a game gets: a limit per move (a bot's,
//! with an optional bank) or a game clock (a person's), and how a side's
//! time is recorded (GGF `TI`).
//!
//! Owns: these values. Must not: run a clock or judge a timeout (the
//! referee's core does).

/// How much time a bot gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Time for each move, in milliseconds.
    pub move_ms: u64,
    /// Time from NEW to READY (a fresh interpreter starts in this time).
    pub startup_ms: u64,
    /// An extra bank per game that overtime draws on, if any.
    pub bank_ms: Option<u64>,
    /// How long to wait for a bot started by hand to answer NEW; `None`
    /// waits for as long as it takes.
    pub wait_ms: Option<u64>,
}

impl Default for TimeControl {
    fn default() -> Self {
        TimeControl {
            move_ms: 5000,
            startup_ms: 10000,
            bank_ms: None,
            wait_ms: None,
        }
    }
}

/// A game clock of one side (a person's): `base_ms` for the whole game,
/// plus `increment_ms` after each of its moves (Fischer's increment, as
/// Othello events use). Its flag falling is a loss on time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameClock {
    pub base_ms: u64,
    pub increment_ms: u64,
}

/// The time control of one side in a game, as recorded (GGF `TI`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideTime {
    /// A limit per move (a bot's), with the event's bank if any.
    PerMove { move_ms: u64, bank_ms: Option<u64> },
    /// A game clock.
    Game(GameClock),
}
