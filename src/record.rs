//! The record of one finished game: what `results/games.jsonl` holds, one
//! JSON object per line, and what every report and export reads.
//!
//! Owns the record's shape and its serde form, and (`check`) whether a
//! record follows from its moves by the rules. Pure: no I/O.

use serde::{Deserialize, Serialize};

use crate::game::{Color, Discs, Move};

mod check;
pub use check::{check_game, Refusal};

/// `black`, `white` or `draw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Winner {
    Black,
    White,
    Draw,
}

impl Winner {
    pub fn from_color(c: Option<Color>) -> Winner {
        match c {
            Some(Color::Black) => Winner::Black,
            Some(Color::White) => Winner::White,
            None => Winner::Draw,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Winner::Black => "black",
            Winner::White => "white",
            Winner::Draw => "draw",
        }
    }

    /// The points `color` scored: 1, ½ or 0.
    pub fn points_for(self, color: Color) -> f64 {
        match (self, color) {
            (Winner::Draw, _) => 0.5,
            (Winner::Black, Color::Black) | (Winner::White, Color::White) => 1.0,
            _ => 0.0,
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// Neither side could move.
    Normal,
    /// A square that is occupied.
    Occupied,
    /// An empty square that flips nothing.
    NoFlips,
    /// A square outside the board.
    OffBoard,
    /// `pass` while a legal move existed.
    PassWithMoves,
    /// Text that is neither a square nor `pass`.
    Unparseable,
    /// An unexpected answer where `READY`, `OK` or a move was due.
    WrongAnswer,
    /// The move time (and time bank) ran out.
    Timeout,
    /// No `READY` within the start-up time.
    NoReady,
    /// An answer that never completed (no final newline) in time.
    Incomplete,
    /// The bot's process ended before the game did.
    Exited,
    /// `out.txt` was not a message (binary, too big, wrong seq, symlink…).
    Garbage,
    /// The answer named the wrong sender or recipient.
    WrongSender,
    /// The bot could not be started.
    StartFailed,
    /// The bot ran out of the memory its sandbox allows (`memory-mb`).
    Memory,
    /// The bot wrote more than its sandbox allows (`disk-mb`).
    Disk,
    /// A person resigned (at their seat, when asked for a move).
    Resigned,
}

impl EndReason {
    pub fn code(self) -> &'static str {
        match self {
            EndReason::Normal => "normal",
            EndReason::Occupied => "occupied",
            EndReason::NoFlips => "no-flips",
            EndReason::OffBoard => "off-board",
            EndReason::PassWithMoves => "pass-with-moves",
            EndReason::Unparseable => "unparseable",
            EndReason::WrongAnswer => "wrong-answer",
            EndReason::Timeout => "timeout",
            EndReason::NoReady => "no-ready",
            EndReason::Incomplete => "incomplete",
            EndReason::Exited => "exited",
            EndReason::Garbage => "garbage",
            EndReason::WrongSender => "wrong-sender",
            EndReason::StartFailed => "start-failed",
            EndReason::Memory => "memory",
            EndReason::Disk => "disk",
            EndReason::Resigned => "resigned",
        }
    }

    /// A forfeit for breaking the protocol or the rules (as opposed to
    /// running out of time or crashing).
    pub fn is_protocol_violation(self) -> bool {
        matches!(
            self,
            EndReason::Occupied
                | EndReason::NoFlips
                | EndReason::OffBoard
                | EndReason::PassWithMoves
                | EndReason::Unparseable
                | EndReason::WrongAnswer
                | EndReason::Incomplete
                | EndReason::Garbage
                | EndReason::WrongSender
        )
    }
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// A disc count pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscCount {
    pub black: u32,
    pub white: u32,
}

impl DiscCount {
    /// The score of a game `loser` forfeited on a board of `size`: every
    /// square to the winner (64-0 on 8×8).
    pub fn forfeit(loser: Color, size: u8) -> DiscCount {
        let all = u32::from(size) * u32::from(size);
        match loser {
            Color::Black => DiscCount {
                black: 0,
                white: all,
            },
            Color::White => DiscCount {
                black: all,
                white: 0,
            },
        }
    }
}

impl From<Discs> for DiscCount {
    fn from(d: Discs) -> Self {
        DiscCount {
            black: d.black,
            white: d.white,
        }
    }
}

/// One ply of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// `black` or `white`.
    pub color: Color,
    /// A square in lower case, or `pass` (read in any case, and `pa`, as
    /// the notation reads them).
    #[serde(rename = "move")]
    pub mv: Move,
    /// Thinking time in milliseconds (0 for opening moves and the
    /// referee's automatic passes).
    pub ms: u64,
    /// Played from the opening, not by the bot.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub opening: bool,
    /// A pass the referee made for a bot that had no move.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

/// Details of a forfeit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forfeit {
    /// Who forfeited: `black` or `white`.
    pub color: Color,
    /// What happened, in words.
    pub detail: String,
    /// How the process ended, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    /// The last lines of its stderr.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr_tail: Vec<String>,
}

/// A finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub id: String,
    pub round: u32,
    pub black: String,
    pub white: String,
    pub size: u8,
    /// The opening's transcript (moves played before the bots took over).
    pub opening: String,
    pub moves: Vec<MoveRecord>,
    pub result: Winner,
    pub reason: EndReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forfeit: Option<Forfeit>,
    /// Discs on the final board.
    pub discs: DiscCount,
    /// Discs with the empty squares given to the winner (WOF rules); a
    /// forfeit scores all squares to the winner.
    pub discs_wof: DiscCount,
    /// The whole game as a transcript (passes omitted).
    pub transcript: String,
    /// Start and end, UTC (RFC 3339).
    pub started: String,
    pub finished: String,
    /// Total thinking time of each side, milliseconds.
    pub time_ms: DiscCount,
    /// The Swiss round the game belongs to (Swiss events only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swiss_round: Option<u32>,
    /// The players of this game who were people (`human = true`), only
    /// when one was: records of bots only stay as they were.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub people: Vec<String>,
}

impl GameRecord {
    /// The name of the player of `color`.
    pub fn player(&self, color: Color) -> &str {
        match color {
            Color::Black => &self.black,
            Color::White => &self.white,
        }
    }

    /// The colour `name` played, if it played this game.
    pub fn color_of(&self, name: &str) -> Option<Color> {
        if self.black == name {
            Some(Color::Black)
        } else if self.white == name {
            Some(Color::White)
        } else {
            None
        }
    }

    /// The winner's name, or `None` for a draw.
    pub fn winner_name(&self) -> Option<&str> {
        match self.result {
            Winner::Black => Some(&self.black),
            Winner::White => Some(&self.white),
            Winner::Draw => None,
        }
    }
}

/// A limit of its sandbox a bot can go over (recorded as
/// [`EndReason::Memory`] or [`EndReason::Disk`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Memory,
    Disk,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_move;

    /// Lines of games.jsonl as the version before typed colours and moves
    /// wrote them (`tournament run`, built-in bots, 6×6, `[openings]
    /// seed = 3`, random-plies = 2: an opening and the referee's pass), and
    /// `tournament play --json` against a Python bot that exits with a
    /// line on stderr (a forfeit).
    const WRITTEN_BEFORE: [&str; 2] = [
        r#"{"id":"r02.random2.greedy","round":2,"black":"random2","white":"greedy","size":6,"opening":"c2d2","moves":[{"color":"black","move":"c2","ms":0,"opening":true},{"color":"white","move":"d2","ms":0,"opening":true},{"color":"black","move":"e1","ms":0},{"color":"white","move":"d1","ms":0},{"color":"black","move":"e4","ms":0},{"color":"white","move":"d5","ms":0},{"color":"black","move":"e6","ms":0},{"color":"white","move":"b4","ms":0},{"color":"black","move":"b3","ms":0},{"color":"white","move":"a4","ms":0},{"color":"black","move":"a2","ms":0},{"color":"white","move":"f1","ms":0},{"color":"black","move":"b1","ms":0},{"color":"white","move":"b2","ms":0},{"color":"black","move":"e2","ms":0},{"color":"white","move":"b5","ms":0},{"color":"black","move":"a5","ms":0},{"color":"white","move":"c1","ms":0},{"color":"black","move":"a3","ms":0},{"color":"white","move":"a1","ms":0},{"color":"black","move":"c5","ms":0},{"color":"white","move":"a6","ms":0},{"color":"black","move":"b6","ms":0},{"color":"white","move":"c6","ms":0},{"color":"black","move":"d6","ms":0},{"color":"white","move":"f6","ms":0},{"color":"black","move":"f2","ms":0},{"color":"white","move":"f3","ms":0},{"color":"black","move":"f4","ms":0},{"color":"white","move":"e3","ms":0},{"color":"black","move":"pass","ms":0,"auto":true},{"color":"white","move":"f5","ms":0}],"result":"white","reason":"normal","discs":{"black":2,"white":33},"discs_wof":{"black":2,"white":34},"transcript":"c2d2e1d1e4d5e6b4b3a4a2f1b1b2e2b5a5c1a3a1c5a6b6c6d6f6f2f3f4e3f5","started":"2026-11-26T17:51:38.190Z","finished":"2026-11-26T17:51:38.192Z","time_ms":{"black":0,"white":0}}"#,
        r#"{"id":"play-1795715588-14539","round":1,"black":"greedy","white":"crash","size":8,"opening":"","moves":[{"color":"black","move":"e6","ms":0},{"color":"white","move":"f4","ms":34},{"color":"black","move":"c3","ms":0},{"color":"white","move":"c4","ms":30},{"color":"black","move":"d3","ms":0},{"color":"white","move":"c6","ms":30},{"color":"black","move":"b3","ms":0},{"color":"white","move":"d6","ms":30},{"color":"black","move":"e3","ms":0},{"color":"white","move":"f6","ms":30},{"color":"black","move":"c7","ms":0}],"result":"black","reason":"exited","forfeit":{"color":"white","detail":"waiting for a move: the bot's process ended (exit status 3)","exit":"exit status 3","stderr_tail":["giving up here"]},"discs":{"black":11,"white":4},"discs_wof":{"black":64,"white":0},"transcript":"e6f4c3c4d3c6b3d6e3f6c7","started":"2026-11-26T17:53:08.240Z","finished":"2026-11-26T17:53:08.513Z","time_ms":{"black":0,"white":154}}"#,
    ];

    #[test]
    fn records_of_the_previous_version_read_typed_and_write_back_byte_for_byte() {
        for line in WRITTEN_BEFORE {
            let r: GameRecord = serde_json::from_str(line).unwrap();
            assert_eq!(r.check(), Ok(()), "{}", r.id);
            assert_eq!(serde_json::to_string(&r).unwrap(), line);
        }
        let normal: GameRecord = serde_json::from_str(WRITTEN_BEFORE[0]).unwrap();
        let square = |t| parse_move(t, 6).unwrap();
        assert_eq!(
            normal.moves[0],
            MoveRecord {
                color: Color::Black,
                mv: square("c2"),
                ms: 0,
                opening: true,
                auto: false
            }
        );
        let pass = normal.moves.iter().find(|m| m.auto).unwrap();
        assert_eq!((pass.color, pass.mv), (Color::Black, Move::Pass));
        assert_eq!(normal.moves.last().unwrap().color, Color::White);
        let crash: GameRecord = serde_json::from_str(WRITTEN_BEFORE[1]).unwrap();
        let forfeit = crash.forfeit.as_ref().unwrap();
        assert_eq!(forfeit.color, Color::White);
        assert_eq!(crash.player(forfeit.color), "crash");
        assert_eq!(forfeit.stderr_tail, ["giving up here"]);
    }

    /// A move in any case, or `pa`, as a hand may write it, reads as the
    /// notation reads it and is written the way the referee writes it.
    #[test]
    fn a_move_written_by_hand_reads_as_the_notation_reads_it() {
        let hand = WRITTEN_BEFORE[0]
            .replacen(r#""move":"e1""#, r#""move":"E1""#, 1)
            .replacen(r#""move":"pass""#, r#""move":"PA""#, 1);
        assert_ne!(hand, WRITTEN_BEFORE[0]);
        let r: GameRecord = serde_json::from_str(&hand).unwrap();
        assert_eq!(r.check(), Ok(()));
        assert_eq!(serde_json::to_string(&r).unwrap(), WRITTEN_BEFORE[0]);
    }
}
