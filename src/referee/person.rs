//! A person at the referee's terminal, as a seat: the board drawn with its
//! coordinates, the legal moves marked, the opponent's move and both
//! clocks shown (a person may play on a game clock: base plus increment);
//! squares typed in either case.
//!
//! Owns that dialogue and nothing of the game: the position comes from the
//! TURN it is sent, legality from the one rules engine, the clock and
//! every adjudication from the referee's core. What a person types that is
//! not a legal move (a typo, an occupied square, `pass` with moves left) is
//! answered with why and asked again here, so it never reaches the core as
//! an illegal move, a forfeit or a retry. A person may resign (`resign`,
//! then `yes` to confirm): the seat's answer is then
//! [`SeatError::Resigned`], which the core ends the game with. Must not
//! read the board's files or start processes.

use std::io::{BufRead, Write};
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::game::{
    diagram_marked, move_name, parse_move, square_name, squares, Color, Move, Position,
};
use crate::protocol::Request;

use super::core::{ClockReading, SeatError};
use super::seat::{PrepareError, Seat, SendError};
use super::GameClock;

/// A person's time per move when nothing else is said: ten minutes.
pub const PERSON_MOVE_MS: u64 = 600_000;

/// A person playing at this terminal: lines typed on `input`, the board
/// and prompts written to `out`.
pub struct PersonSeat {
    name: String,
    move_ms: u64,
    /// A game clock instead of the time per move, if given.
    clock: Option<GameClock>,
    /// Both clocks as the referee last showed them (black, white).
    clocks: Option<[ClockReading; 2]>,
    lines: Receiver<String>,
    out: Box<dyn Write + Send>,
    /// What the last request asks for.
    asked: Option<Request>,
    color: Option<Color>,
    opponent: String,
}

impl PersonSeat {
    /// A person named `name` reading this process's stdin and writing its
    /// stdout, with `move_ms` per move.
    pub fn at_terminal(name: &str, move_ms: u64) -> PersonSeat {
        PersonSeat::new(
            name,
            move_ms,
            std::io::BufReader::new(std::io::stdin()),
            Box::new(std::io::stdout()),
        )
    }

    /// A person reading lines from `input` (on a thread of its own, so a
    /// wait for a move has a deadline) and writing to `out`.
    pub fn new(
        name: &str,
        move_ms: u64,
        input: impl BufRead + Send + 'static,
        out: Box<dyn Write + Send>,
    ) -> PersonSeat {
        let (tx, rx) = crossbeam_channel::unbounded();
        // The reader ends with the input (or when nobody listens any more).
        let _ = std::thread::Builder::new()
            .name("person-input".into())
            .spawn(move || {
                for line in input.lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        PersonSeat {
            name: name.to_string(),
            move_ms,
            clock: None,
            clocks: None,
            lines: rx,
            out,
            asked: None,
            color: None,
            opponent: String::new(),
        }
    }

    /// The same person on a game clock: `clock.base_ms` for the game,
    /// plus `clock.increment_ms` after each move.
    pub fn with_clock(mut self, clock: GameClock) -> PersonSeat {
        self.clock = Some(clock);
        self
    }

    /// The clocks' line: the person's first, then the opponent's; the
    /// time for this move if the referee showed no clocks.
    fn clock_line(&self, you: Color, ms: u64) -> String {
        let Some(clocks) = self.clocks else {
            return format!("{} for this move\n", duration(ms));
        };
        format!(
            "clocks: you {} · {} {}\n",
            reading(clocks[you.index()]),
            self.opponent,
            reading(clocks[you.opponent().index()])
        )
    }

    fn say(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    /// The board, the opponent's last move and the legal moves, before a
    /// prompt.
    fn show_turn(&mut self, pos: &Position, last: Option<Move>, ms: u64) {
        let mut text = String::from("\n");
        if let Some(mv) = last {
            text.push_str(&format!("{} played {}\n", self.opponent, move_name(mv)));
        }
        text.push_str(&board_with_moves(pos, last));
        let d = pos.discs();
        let legal: Vec<String> = squares(pos.legal_moves()).map(square_name).collect();
        text.push_str(&format!(
            "X {} · O {} · you are {} ({})\n",
            d.black,
            d.white,
            pos.to_move().name(),
            pos.to_move().disc_char(),
        ));
        text.push_str(&self.clock_line(pos.to_move(), ms));
        if legal.is_empty() {
            text.push_str("you have no legal move: type `pass`\n");
        } else {
            text.push_str(&format!("legal (*): {}\n", legal.join(" ")));
        }
        self.say(&text);
    }

    /// Reads lines until one is a legal answer to `pos`, or the deadline.
    fn read_move(&mut self, pos: &Position, deadline: Instant) -> Result<String, SeatError> {
        loop {
            self.say("your move> ");
            let line = self.next_line(deadline)?;
            match judge_entry(pos, &line) {
                Entry::Move(mv) => return Ok(move_name(mv)),
                Entry::Resign if self.confirm_resign(deadline)? => {
                    self.say("you resigned this game\n");
                    return Err(SeatError::Resigned(format!("{} resigned", self.name)));
                }
                Entry::Resign => self.say("playing on\n"),
                Entry::Again(why) => self.say(&format!("{why}\n")),
                Entry::Nothing => {}
            }
        }
    }

    /// Asks whether `resign` was meant: only `yes` (or `y`) resigns.
    fn confirm_resign(&mut self, deadline: Instant) -> Result<bool, SeatError> {
        self.say("resign this game? type yes to resign, anything else to play on> ");
        let answer = self.next_line(deadline)?;
        Ok(matches!(
            answer.trim().to_ascii_lowercase().as_str(),
            "yes" | "y"
        ))
    }

    fn next_line(&mut self, deadline: Instant) -> Result<String, SeatError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                let detail = match self.clock {
                    Some(_) => {
                        self.say("\nyour clock ran out: the game is lost on time\n");
                        "no move typed before the game clock ran out".to_string()
                    }
                    None => {
                        self.say("\nyour time for this move is over\n");
                        format!("no move typed in {}", duration(self.move_ms))
                    }
                };
                Err(SeatError::Timeout {
                    partial: false,
                    detail,
                })
            }
            Err(RecvTimeoutError::Disconnected) => Err(SeatError::Exited(
                "the person's terminal closed (end of input)".into(),
            )),
        }
    }
}

/// A time as a person reads it: `1:05` from a minute, `9.8 s` below.
pub(super) fn duration(ms: u64) -> String {
    if ms >= 60_000 {
        let s = ms / 1000;
        format!("{}:{:02}", s / 60, s % 60)
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{}.{} s", ms / 1000, ms % 1000 / 100)
    }
}

/// One clock as a person reads it.
pub(super) fn reading(clock: ClockReading) -> String {
    match clock {
        ClockReading::Game {
            left_ms,
            increment_ms: 0,
        } => format!("{} left", duration(left_ms)),
        ClockReading::Game {
            left_ms,
            increment_ms,
        } => format!(
            "{} left (+{} a move)",
            duration(left_ms),
            duration(increment_ms)
        ),
        ClockReading::PerMove {
            move_ms,
            bank_left_ms: Some(bank),
        } => format!("{} a move, {} bank", duration(move_ms), duration(bank)),
        ClockReading::PerMove { move_ms, .. } => format!("{} a move", duration(move_ms)),
    }
}

/// What a typed line is, for the position to move in.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// A legal move (a square, or `pass` with no square to play).
    Move(Move),
    /// Not a legal move: why, in words, and ask again.
    Again(String),
    /// An empty line: ask again, silently.
    Nothing,
    /// `resign`: asked to confirm.
    Resign,
}

/// A person's reply to the last request `asked`: READY, OK and BYE are
/// said for them; a move is `read` from them (the terminal, the page).
pub(super) fn reply_for(
    asked: Option<Request>,
    read: impl FnOnce(&Position) -> Result<String, SeatError>,
) -> Result<String, SeatError> {
    match asked {
        Some(Request::New { .. }) => Ok("READY".into()),
        Some(Request::Turn { pos, .. }) => read(&pos),
        Some(Request::End { .. }) => Ok("BYE".into()),
        Some(Request::Illegal { .. } | Request::Other(_)) | None => Ok("OK".into()),
    }
}

pub(super) fn judge_entry(pos: &Position, line: &str) -> Entry {
    let text = line.trim();
    if text.is_empty() {
        return Entry::Nothing;
    }
    if text.eq_ignore_ascii_case("resign") {
        return Entry::Resign;
    }
    let legal = pos.legal_moves();
    let legal_names = || {
        squares(legal)
            .map(square_name)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let last = (b'a' + pos.size() - 1) as char;
    match parse_move(text, pos.size()) {
        Ok(Move::Pass) if legal == 0 => Entry::Move(Move::Pass),
        Ok(Move::Pass) => Entry::Again(format!(
            "you have a move, so you cannot pass: {}",
            legal_names()
        )),
        Ok(Move::Play(sq)) if legal & sq.bit() != 0 => Entry::Move(Move::Play(sq)),
        Ok(Move::Play(sq)) if pos.at(sq).is_some() => Entry::Again(format!(
            "{} is taken; legal: {}",
            square_name(sq),
            legal_names()
        )),
        Ok(Move::Play(sq)) if legal == 0 => Entry::Again(format!(
            "{} flips nothing, and you have no move: type `pass`",
            square_name(sq)
        )),
        Ok(Move::Play(sq)) => Entry::Again(format!(
            "{} flips no disc; legal: {}",
            square_name(sq),
            legal_names()
        )),
        Err(_) => Entry::Again(format!(
            "`{}` is not a square: a column a-{last} then a row 1-{}, e.g. {}",
            text.escape_debug(),
            pos.size(),
            squares(legal).next().map_or("d3".into(), square_name)
        )),
    }
}

/// The board with its coordinates, the last move in brackets and the
/// legal moves as `*`.
fn board_with_moves(pos: &Position, last: Option<Move>) -> String {
    let last = match last {
        Some(Move::Play(sq)) => Some(sq),
        _ => None,
    };
    let mut lines: Vec<Vec<u8>> = diagram_marked(pos, last)
        .lines()
        .map(|l| l.as_bytes().to_vec())
        .collect();
    for sq in squares(pos.legal_moves()) {
        let (row, col) = (sq.row() as usize + 1, sq.col() as usize);
        if let Some(b) = lines.get_mut(row).and_then(|l| l.get_mut(3 + 2 * col)) {
            *b = b'*';
        }
    }
    let mut s = String::new();
    for l in lines {
        s.push_str(&String::from_utf8_lossy(&l));
        s.push('\n');
    }
    s
}

impl Seat for PersonSeat {
    fn name(&self) -> &str {
        &self.name
    }

    fn id(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self, _span: tracing::Span) -> Result<bool, PrepareError> {
        Ok(false)
    }

    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        match request {
            Request::New {
                color, opponent, ..
            } => {
                self.color = Some(*color);
                self.opponent = opponent.clone();
                let text = format!(
                    "{}: you play {} ({}) against {}; type a square such as d3 when asked (or `resign`)\n",
                    self.name,
                    color.name(),
                    color.disc_char(),
                    opponent
                );
                self.say(&text);
            }
            Request::Turn { pos, last, ms } => self.show_turn(pos, *last, *ms),
            Request::End {
                winner,
                black,
                white,
                reason,
            } => {
                let result = match (winner, self.color) {
                    (None, _) => "a draw".to_string(),
                    (Some(w), Some(c)) if *w == c => "you won".to_string(),
                    (Some(_), Some(_)) => "you lost".to_string(),
                    (Some(w), None) => format!("{} won", w.name()),
                };
                let text = format!("\ngame over: {result}, {black}-{white} ({reason})\n");
                self.say(&text);
            }
            Request::Illegal { .. } | Request::Other(_) => {}
        }
        self.asked = Some(request.clone());
        Ok(())
    }

    fn await_reply(&mut self, deadline: Instant) -> Result<String, SeatError> {
        let asked = self.asked.take();
        reply_for(asked, |pos| self.read_move(pos, deadline))
    }

    fn is_person(&self) -> bool {
        true
    }

    fn own_move_ms(&self) -> Option<u64> {
        Some(self.move_ms)
    }

    fn own_clock(&self) -> Option<GameClock> {
        self.clock
    }

    fn show_clocks(&mut self, clocks: [ClockReading; 2]) {
        self.clocks = Some(clocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_square;

    #[test]
    fn what_a_person_types_is_a_move_or_asked_again_with_why() {
        let start = Position::start(8);
        let table: &[(&str, Option<&str>, &str)] = &[
            ("d3", Some("d3"), ""),
            ("D3", Some("d3"), ""),
            ("  f5 ", Some("f5"), ""),
            ("d4", None, "d4 is taken; legal: d3 c4 f5 e6"),
            ("a1", None, "a1 flips no disc; legal: d3 c4 f5 e6"),
            ("pass", None, "you cannot pass"),
            (
                "z9",
                None,
                "`z9` is not a square: a column a-h then a row 1-8, e.g. d3",
            ),
            ("d33", None, "is not a square"),
            ("\u{1b}[2J", None, "`\\u{1b}[2J` is not a square"),
        ];
        for (typed, mv, why) in table {
            match (judge_entry(&start, typed), mv) {
                (Entry::Move(m), Some(want)) => assert_eq!(move_name(m), *want, "{typed}"),
                (Entry::Again(text), None) => assert!(text.contains(why), "{typed}: {text}"),
                (other, _) => panic!("{typed}: {other:?}"),
            }
        }
        assert_eq!(judge_entry(&start, "   "), Entry::Nothing);
        assert_eq!(judge_entry(&start, " Resign "), Entry::Resign);
    }

    #[test]
    fn clocks_are_shown_as_people_read_them() {
        let table = [
            (
                ClockReading::Game {
                    left_ms: 60_000,
                    increment_ms: 1_000,
                },
                "1:00 left (+1 s a move)",
            ),
            (
                ClockReading::Game {
                    left_ms: 9_850,
                    increment_ms: 0,
                },
                "9.8 s left",
            ),
            (
                ClockReading::PerMove {
                    move_ms: 200,
                    bank_left_ms: None,
                },
                "0.2 s a move",
            ),
            (
                ClockReading::PerMove {
                    move_ms: 5_000,
                    bank_left_ms: Some(125_000),
                },
                "5 s a move, 2:05 bank",
            ),
        ];
        for (clock, shown) in table {
            assert_eq!(reading(clock), shown);
        }
    }

    #[test]
    fn the_board_marks_legal_moves_and_the_last_move() {
        let pos = Position::start(8)
            .play(Move::Play(parse_square("d3").unwrap()))
            .unwrap()
            .0;
        let text = board_with_moves(&pos, Some(Move::Play(parse_square("d3").unwrap())));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "   a b c d e f g h");
        // White to move after d3: c3, e3 and c5.
        assert_eq!(lines[3], " 3 . . *(X)* . . .", "{text}");
        assert_eq!(lines[4], " 4 . . . X X . . .", "{text}");
        assert_eq!(lines[5], " 5 . . * X O . . .", "{text}");
    }
}
