//! A person in the browser, as a seat: the live page's server shows them
//! their game on a private page (the key in its link) and posts their
//! clicks here through a channel.
//!
//! Owns the [`Desk`] between the two sides — what the person's page shows
//! (the board, the legal moves, the last move, both clocks, a note) and
//! the key that lets a request in — and the seat that waits for the
//! posted move. A square that is not a legal move is refused with why at
//! once (the page says it and the person clicks again): it never reaches
//! the core as an illegal move, a forfeit or a retry. With no legal move
//! the pass is played for the person, and the page says so. The clock and
//! every adjudication stay the core's. Must not speak HTTP (`serve` does)
//! or read the board's files.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use rand::RngCore;

use crate::game::{move_name, square_name, squares, Color, Move, Position, Square};
use crate::protocol::Request;

use super::core::{ClockReading, SeatError};
use super::person::{duration, judge_entry, reading, reply_for, Entry};
use super::seat::{PrepareError, Seat, SendError};
use super::GameClock;

/// A move the person's page posted, for the turn it was shown.
struct Posted {
    turn: u64,
    mv: Move,
}

/// Why a posted move was not taken (the page shows the words).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// Not the person's turn, or a turn already over (a late click).
    #[error("{0}")]
    NotNow(String),
    /// Not a legal move in the position shown: why, and the legal ones.
    #[error("{0}")]
    Illegal(String),
}

/// What the person's page shows, as the seat last left it.
#[derive(Default)]
struct View {
    /// Counts the requests for a move: a post names the one it answers.
    turn: u64,
    /// The board shown (the position asked in, then after the move).
    shown: Option<Position>,
    /// The position waiting for the person's move, while it waits.
    asked: Option<Position>,
    /// When the person's time for the move asked runs out.
    deadline: Option<Instant>,
    last: Option<Move>,
    color: Option<Color>,
    opponent: String,
    clocks: Option<[ClockReading; 2]>,
    /// The time per move, when the referee showed no clocks.
    move_ms: u64,
    note: String,
    over: Option<String>,
}

/// Between the server and the seat of one person in the browser: what
/// their page shows and where their moves go. Only a request that carries
/// [`Desk::key`] may read or post (the server checks it with
/// [`Desk::admits`]).
pub struct Desk {
    name: String,
    key: String,
    view: Mutex<View>,
    moves: Sender<Posted>,
}

impl Desk {
    /// The person's name (the link's path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The private key: 128 bits from the operating system, in hex.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The private link's path and query (after the server's address).
    pub fn path(&self) -> String {
        format!("/seat/{}?key={}", self.name, self.key)
    }

    /// True if `given` is the key (compared in constant time).
    pub fn admits(&self, given: &str) -> bool {
        let (a, b) = (given.as_bytes(), self.key.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    fn view(&self) -> std::sync::MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `square` for turn `turn`, if it is the person's turn and a
    /// legal move there; the words the page shows.
    /// The turn is closed at once, so a second click (or a page behind)
    /// finds it over.
    pub fn post(&self, turn: u64, square: &str) -> Result<String, Refusal> {
        let mut view = self.view();
        let Some(pos) = view.asked.filter(|_| view.turn == turn) else {
            return Err(Refusal::NotNow(
                "not your turn (or that turn is over): wait for the board to change".into(),
            ));
        };
        match judge_entry(&pos, square) {
            Entry::Move(mv) => {
                // The seat holds the receiver as long as the desk is used.
                let _ = self.moves.send(Posted { turn, mv });
                view.asked = None;
                if let (Move::Play(_), Ok((after, _))) = (mv, pos.play(mv)) {
                    view.shown = Some(after);
                    view.last = Some(mv);
                }
                view.note = format!("you played {}; {} to move", move_name(mv), view.opponent);
                Ok(format!("you played {}", move_name(mv)))
            }
            Entry::Again(why) => Err(Refusal::Illegal(why)),
            Entry::Nothing => Err(Refusal::Illegal("no square given".into())),
            // Resigning is the terminal's and the seat's (with its
            // confirmation); the page posts squares only.
            Entry::Resign => Err(Refusal::Illegal(
                "the page does not resign: tap a marked square".into(),
            )),
        }
    }

    /// What the page shows, as JSON.
    pub fn view_json(&self) -> String {
        let view = self.view();
        let you = view.color;
        let board = view.shown.map(|p| board_text(&p)).unwrap_or_default();
        let legal: Vec<String> = view
            .asked
            .map(|p| squares(p.legal_moves()).map(square_name).collect())
            .unwrap_or_default();
        let clock = |c: Option<Color>| match (view.clocks, c) {
            (Some(clocks), Some(c)) => reading(clocks[c.index()]),
            _ => format!("{} a move", duration(view.move_ms)),
        };
        let discs = view.shown.map(|p| p.discs());
        serde_json::json!({
            "name": self.name,
            "turn": view.turn,
            "size": view.shown.map_or(0, |p| p.size()),
            "board": board,
            "you": you.map(|c| c.name()),
            "disc": you.map(|c| c.disc_char().to_string()),
            "opponent": view.opponent,
            "your_turn": view.asked.is_some(),
            "legal": legal,
            "last": view.last.map(move_name),
            "clock_you": clock(you),
            "clock_opponent": clock(you.map(Color::opponent)),
            "ms_left": view.deadline.filter(|_| view.asked.is_some())
                .map(|d| d.saturating_duration_since(Instant::now()).as_millis() as u64),
            "discs": discs.map(|d| [d.black, d.white]),
            "note": view.note,
            "over": view.over,
        })
        .to_string()
    }
}

/// The board row by row: `X`, `O` or `-` per square.
fn board_text(pos: &Position) -> String {
    let n = pos.size();
    (0..n)
        .flat_map(|row| (0..n).map(move |col| Square::new(col, row)))
        .map(|sq| pos.at(sq).map_or('-', Color::disc_char))
        .collect()
}

/// A person playing through their private page: the seat's side of a
/// [`Desk`].
pub struct BrowserSeat {
    name: String,
    move_ms: u64,
    clock: Option<GameClock>,
    desk: Arc<Desk>,
    moves: Receiver<Posted>,
    asked: Option<Request>,
}

impl BrowserSeat {
    /// A person named `name` with `move_ms` per move, and the desk the
    /// server shows them (its key drawn now from the operating system).
    pub fn open(name: &str, move_ms: u64) -> Result<(BrowserSeat, Arc<Desk>), rand::Error> {
        let mut bytes = [0u8; 16];
        rand::rngs::OsRng.try_fill_bytes(&mut bytes)?;
        let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let (tx, rx) = crossbeam_channel::unbounded();
        let desk = Arc::new(Desk {
            name: name.to_string(),
            key,
            view: Mutex::new(View {
                move_ms,
                note: "waiting for your first game to start".into(),
                ..View::default()
            }),
            moves: tx,
        });
        let seat = BrowserSeat {
            name: name.to_string(),
            move_ms,
            clock: None,
            desk: Arc::clone(&desk),
            moves: rx,
            asked: None,
        };
        Ok((seat, desk))
    }

    /// The same person on a game clock.
    pub fn with_clock(mut self, clock: GameClock) -> BrowserSeat {
        self.clock = Some(clock);
        self
    }

    /// Waits for a legal move posted for this turn, or the deadline.
    fn await_move(&mut self, pos: &Position, deadline: Instant) -> Result<String, SeatError> {
        let turn = {
            let mut view = self.desk.view();
            if pos.legal_moves() == 0 {
                view.asked = None;
                view.note = "you had no legal move: passed for you".into();
                return Ok("pass".into());
            }
            view.deadline = Some(deadline);
            view.turn
        };
        // A move may be posted as soon as the turn is shown (before this
        // wait began); one posted for an earlier turn is skipped below.
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.moves.recv_timeout(wait) {
                Ok(p) if p.turn != turn => continue,
                // The desk showed it played when it took it.
                Ok(Posted { mv, .. }) => return Ok(move_name(mv)),
                Err(RecvTimeoutError::Timeout) => return Err(self.out_of_time()),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(SeatError::Exited("the person's page is gone".into()))
                }
            }
        }
    }

    fn out_of_time(&self) -> SeatError {
        let mut view = self.desk.view();
        view.asked = None;
        let detail = match self.clock {
            Some(_) => {
                view.note = "your clock ran out: the game is lost on time".into();
                "no move clicked before the game clock ran out".to_string()
            }
            None => {
                view.note = "your time for this move is over".into();
                format!("no move clicked in {}", duration(self.move_ms))
            }
        };
        SeatError::Timeout {
            partial: false,
            detail,
        }
    }

    /// What the desk shows once `request` is sent.
    fn show(&self, request: &Request) {
        let mut view = self.desk.view();
        match request {
            Request::New {
                color, opponent, ..
            } => {
                view.color = Some(*color);
                view.opponent = opponent.clone();
                view.over = None;
                view.last = None;
                view.clocks = None;
                view.note = format!(
                    "a new game: you play {} ({}) against {opponent}",
                    color.name(),
                    color.disc_char()
                );
            }
            Request::Turn { pos, last, ms } => {
                view.turn += 1;
                view.shown = Some(*pos);
                view.asked = Some(*pos);
                view.last = *last;
                view.move_ms = *ms;
                view.note = match last {
                    Some(Move::Pass) => format!("{} passed: your move", view.opponent),
                    Some(mv) => format!("{} played {}: your move", view.opponent, move_name(*mv)),
                    None => "your move".into(),
                };
            }
            Request::End {
                winner,
                black,
                white,
                reason,
            } => {
                view.asked = None;
                let result = match (winner, view.color) {
                    (None, _) => "a draw".to_string(),
                    (Some(w), Some(c)) if *w == c => "you won".to_string(),
                    (Some(_), Some(_)) => "you lost".to_string(),
                    (Some(w), None) => format!("{} won", w.name()),
                };
                let over = format!("game over: {result}, {black}-{white} ({reason})");
                view.note = over.clone();
                view.over = Some(over);
            }
            Request::Illegal { .. } | Request::Other(_) => {}
        }
    }
}

impl Seat for BrowserSeat {
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
        self.show(request);
        self.asked = Some(request.clone());
        Ok(())
    }

    fn await_reply(&mut self, deadline: Instant) -> Result<String, SeatError> {
        let asked = self.asked.take();
        reply_for(asked, |pos| self.await_move(pos, deadline))
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
        self.desk.view().clocks = Some(clocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn turn(seat: &mut BrowserSeat, pos: &Position) {
        seat.send(&Request::Turn {
            pos: *pos,
            last: None,
            ms: 60_000,
        })
        .unwrap();
    }

    #[test]
    fn a_posted_legal_square_is_the_reply_and_others_are_refused_with_why() {
        let (mut seat, desk) = BrowserSeat::open("ann", 60_000).unwrap();
        assert_eq!(desk.key().len(), 32);
        assert!(desk.admits(desk.key()));
        assert!(!desk.admits("") && !desk.admits(&"0".repeat(32)));
        let start = Position::start(8);
        assert!(matches!(desk.post(0, "d3"), Err(Refusal::NotNow(_))));
        turn(&mut seat, &start);
        let n: u64 = serde_json::from_str::<serde_json::Value>(&desk.view_json()).unwrap()["turn"]
            .as_u64()
            .unwrap();
        assert!(matches!(desk.post(n + 1, "d3"), Err(Refusal::NotNow(_))));
        let refused = desk.post(n, "a1").unwrap_err();
        assert!(refused.to_string().contains("flips no disc"), "{refused}");
        assert!(matches!(desk.post(n, "d4"), Err(Refusal::Illegal(_))));
        desk.post(n, "D3").unwrap();
        assert!(
            matches!(desk.post(n, "c4"), Err(Refusal::NotNow(_))),
            "a second click finds the turn over"
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(seat.await_reply(deadline).unwrap(), "d3");
        let view: serde_json::Value = serde_json::from_str(&desk.view_json()).unwrap();
        assert_eq!(view["your_turn"], false);
        assert_eq!(view["last"], "d3");
    }

    #[test]
    fn no_legal_move_is_passed_for_the_person_and_no_click_is_a_timeout() {
        let (mut seat, desk) = BrowserSeat::open("ann", 50).unwrap();
        // Black to move with no legal move: only white discs.
        let stuck = Position::from_parts(0, 1, Color::Black, 8).unwrap();
        turn(&mut seat, &stuck);
        assert_eq!(seat.await_reply(Instant::now()).unwrap(), "pass");
        assert!(desk.view_json().contains("passed for you"));
        turn(&mut seat, &Position::start(8));
        let late = seat.await_reply(Instant::now() + Duration::from_millis(50));
        assert!(matches!(late, Err(SeatError::Timeout { .. })), "{late:?}");
    }
}
