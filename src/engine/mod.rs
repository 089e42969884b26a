//! Othello engines that speak GTP (version 2) or NBoard (version 2 or 1) over
//! stdin/stdout, driven as players: a new game, the moves since the engine
//! last heard (opening, opponent's moves, passes), its move, the clock.
//!
//! Owns: the two dialects (`gtp`, `nboard`), the line link they share
//! (`link`), keeping an engine's board in step with the game's history,
//! and turning everything an engine does wrong (an error answer, garbage,
//! silence, a closed pipe, resigning) into an [`EngineError`] naming the
//! command it answered. Must not: judge a move (the referee checks it with
//! `game`'s rules, like any bot's), decide a result, or start, sandbox or
//! stop the process (`player` does, as for any spawned bot).

pub mod driver;
pub mod gtp;
pub mod link;
pub mod nboard;

use std::time::Instant;

use crate::game::{Color, Move};

pub use driver::EngineDriver;
pub use link::{Direction, LineLink, LineLog};

/// How a player talks to the referee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Files in a mailbox folder (PROTOCOL.md).
    #[default]
    Mailbox,
    /// The Go Text Protocol, version 2, over stdin/stdout.
    Gtp,
    /// The NBoard protocol, version 2 or 1, over stdin/stdout (8×8 only).
    Nboard,
}

impl Protocol {
    /// The word of `protocol = "…"` and `--protocol`.
    pub fn word(self) -> &'static str {
        match self {
            Protocol::Mailbox => "mailbox",
            Protocol::Gtp => "gtp",
            Protocol::Nboard => "nboard",
        }
    }

    /// The board sizes an engine of this protocol can play (`None`: any).
    pub fn sizes(self) -> Option<&'static [u8]> {
        match self {
            Protocol::Nboard => Some(&[8]),
            Protocol::Mailbox | Protocol::Gtp => None,
        }
    }

    /// True for the stdin/stdout protocols.
    pub fn is_engine(self) -> bool {
        self != Protocol::Mailbox
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s {
            "mailbox" => Ok(Protocol::Mailbox),
            "gtp" => Ok(Protocol::Gtp),
            "nboard" => Ok(Protocol::Nboard),
            _ => Err(format!(
                "unknown protocol `{s}`; expected \"mailbox\", \"gtp\" or \"nboard\""
            )),
        }
    }
}

/// NBoard's `set depth` when a player does not give `depth`.
pub const DEFAULT_DEPTH: u32 = 10;

/// One ply of a game: a colour's move or pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ply {
    pub color: Color,
    pub mv: Move,
}

/// Whole seconds for a protocol that counts in seconds: rounded down, at
/// least 1 (an engine told 0 would take it as "no limit").
pub fn seconds(ms: u64) -> u64 {
    (ms / 1000).max(1)
}

/// What a game looks like to the engine when it begins.
#[derive(Clone, Debug)]
pub struct GameStart {
    pub size: u8,
    /// The engine's colour.
    pub color: Color,
    /// The players' names, black then white (NBoard's `set game`).
    pub names: [String; 2],
    /// The time for each move (NEW's `move-ms`).
    pub move_ms: u64,
}

/// What an engine answered, in the referee's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Ready for the game (GTP: the board is set; NBoard: `pong`).
    Ready,
    /// Its move as it wrote it (a square or a pass word): the referee
    /// reads and judges it like a bot's answer.
    Move(String),
}

/// What an engine did wrong, with the command it was answering.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// No (complete) answer before the deadline.
    #[error("no answer to `{command}` in time")]
    Timeout { command: String },
    /// Its stdout ended (the process exited or closed it), or its process
    /// ended while something it left behind holds its stdout open.
    #[error("it went silent for good (its output closed or its process ended) while the referee waited for the answer to `{command}`")]
    Closed { command: String },
    /// Its stdin could not be written.
    #[error("cannot send it `{command}`: {why}")]
    Write { command: String, why: String },
    /// An error answer (GTP `?`): it refused the command.
    #[error("answered `{answer}` to `{command}` (an error answer)")]
    Refused { command: String, answer: String },
    /// A line that is not an answer of its protocol.
    #[error("answered {line:?} to `{command}`: {why}")]
    Garbage {
        command: String,
        line: String,
        why: String,
    },
    /// It resigned instead of moving (GTP `resign`).
    #[error("resigned (answered `{answer}` to `{command}`)")]
    Resigned { command: String, answer: String },
}

impl EngineError {
    /// The command the engine failed to answer.
    pub fn command(&self) -> &str {
        match self {
            EngineError::Timeout { command }
            | EngineError::Closed { command }
            | EngineError::Write { command, .. }
            | EngineError::Refused { command, .. }
            | EngineError::Garbage { command, .. }
            | EngineError::Resigned { command, .. } => command,
        }
    }
}

/// The NBoard versions the referee speaks: 2 (NBoard, NTest) and 1
/// (Edax, which expects `nboard 1`, and engines that take bare moves).
pub const NBOARD_VERSIONS: [u8; 2] = [1, 2];

/// The settings a player gives its engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineSettings {
    /// NBoard's `set depth`.
    pub depth: u32,
    /// NBoard's protocol version (`nboard-version`): 2, or 1 for `nboard 1`
    /// and moves sent bare (`F5`, not `move F5`).
    pub nboard_version: u8,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            depth: DEFAULT_DEPTH,
            nboard_version: 2,
        }
    }
}

/// One engine process's conversation, in either dialect.
#[derive(Debug)]
pub enum Engine {
    Gtp(gtp::GtpClient),
    Nboard(nboard::NboardClient),
}

impl Engine {
    /// The client of `protocol` over `link` (`None` for the mailbox).
    pub fn new(protocol: Protocol, link: LineLink, settings: EngineSettings) -> Option<Engine> {
        match protocol {
            Protocol::Mailbox => None,
            Protocol::Gtp => Some(Engine::Gtp(gtp::GtpClient::new(link))),
            Protocol::Nboard => Some(Engine::Nboard(nboard::NboardClient::new(link, settings))),
        }
    }

    /// Sends what starts a game; [`Engine::answer`] then says `Ready`.
    pub fn begin_game(&mut self, start: &GameStart) -> Result<(), EngineError> {
        match self {
            Engine::Gtp(c) => c.begin_game(start),
            Engine::Nboard(c) => c.begin_game(start),
        }
    }

    /// Sends the plies of `history` the engine has not heard yet (all of
    /// them, from a fresh board, when its board is not a prefix of it),
    /// then asks its move as `color`, which has `allowed_ms` for it (TURN's
    /// time); [`Engine::answer`] then gives it.
    pub fn ask_move(
        &mut self,
        history: &[Ply],
        color: Color,
        allowed_ms: u64,
    ) -> Result<(), EngineError> {
        match self {
            Engine::Gtp(c) => c.ask_move(history, color, allowed_ms),
            Engine::Nboard(c) => c.ask_move(history, color, allowed_ms),
        }
    }

    /// Reads the answers to what was sent, until `deadline`; the last one
    /// is the answer.
    pub fn answer(&mut self, deadline: Instant) -> Result<Answer, EngineError> {
        match self {
            Engine::Gtp(c) => c.answer(deadline),
            Engine::Nboard(c) => c.answer(deadline),
        }
    }

    /// Forgets the engine's board: the next [`Engine::ask_move`] sets it
    /// again from the whole history (after a refused move, whose effect on
    /// the engine's board is unknown).
    pub fn forget_board(&mut self) {
        match self {
            Engine::Gtp(c) => c.forget_board(),
            Engine::Nboard(c) => c.forget_board(),
        }
    }

    /// Reads the answers still owed for what was sent and never awaited
    /// (a game that ended before this engine's answer was read), until
    /// `deadline`; false if they did not all come (the engine's state is
    /// then unknown). Nothing of it is the engine's fault.
    pub fn settle(&mut self, deadline: Instant) -> bool {
        let settled = match self {
            Engine::Gtp(c) => c.settle(deadline),
            Engine::Nboard(c) => c.settle(deadline),
        };
        self.forget_board();
        settled
    }

    /// Says goodbye (`quit`) and closes its input; waits for nothing.
    pub fn quit(&mut self) {
        match self {
            Engine::Gtp(c) => c.quit(),
            Engine::Nboard(c) => c.quit(),
        }
    }
}

/// The plies of `history` after `told`, or `None` if `told` is not where
/// `history` began (the engine's board must be set again from the start).
fn news<'h>(told: Option<&[Ply]>, history: &'h [Ply]) -> Option<&'h [Ply]> {
    let told = told?;
    if told.len() <= history.len() && history[..told.len()] == *told {
        Some(&history[told.len()..])
    } else {
        None
    }
}

/// A square as the engine protocols write it, upper case (`F5`); a pass
/// as `pass_word`.
fn vertex(mv: Move, pass_word: &str) -> String {
    match mv {
        Move::Pass => pass_word.to_string(),
        Move::Play(_) => crate::game::move_name(mv).to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_move;

    fn ply(color: Color, m: &str) -> Ply {
        Ply {
            color,
            mv: parse_move(m, 8).unwrap(),
        }
    }

    #[test]
    fn news_are_what_the_engine_has_not_heard() {
        let h = [
            ply(Color::Black, "f5"),
            ply(Color::White, "d6"),
            ply(Color::Black, "c3"),
        ];
        assert_eq!(news(Some(&h[..1]), &h), Some(&h[1..]));
        assert_eq!(news(Some(&h[..]), &h), Some(&h[3..]));
        assert_eq!(news(None, &h), None);
        let other = [ply(Color::Black, "d3")];
        assert_eq!(news(Some(&other), &h), None, "another game: set again");
        assert_eq!(news(Some(&h), &h[..2]), None, "longer than the history");
    }

    #[test]
    fn protocol_words_round_trip() {
        for p in [Protocol::Mailbox, Protocol::Gtp, Protocol::Nboard] {
            assert_eq!(p.word().parse::<Protocol>(), Ok(p));
        }
        assert!("uci".parse::<Protocol>().unwrap_err().contains("\"gtp\""));
        assert_eq!(vertex(parse_move("f5", 8).unwrap(), "PA"), "F5");
        assert_eq!(vertex(Move::Pass, "pass"), "pass");
        assert_eq!(seconds(500), 1);
        assert_eq!(seconds(5999), 5);
    }
}
