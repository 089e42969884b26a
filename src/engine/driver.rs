//! An engine in the referee's seat: the referee's requests (mailbox
//! protocol v1: NEW, TURN, ILLEGAL, END) in, the engine's commands out,
//! and its answers back in the referee's words (READY, a move, OK, BYE).
//!
//! Owns: following the game from the requests (the plies since the last
//! TURN, found by `history`), remembering the engine's own move once it is
//! legal, and answering ILLEGAL (OK; the engine's board is set again) and
//! END (BYE) for it. Must not judge a move (the referee does), keep a
//! clock (the referee's deadlines do), or start or stop the process.
//!
//! The requests are read from their text here until the referee hands
//! typed requests to its seats; then this reads those instead.

use std::time::Instant;

use crate::game::{parse_board_string, parse_move, Color, Move, Position};

use super::history::plies_between;
use super::{Answer, Engine, EngineError, GameStart, Ply};

/// What the last request waits for.
#[derive(Debug)]
enum Awaiting {
    Nothing,
    /// The engine's answer (to NEW or TURN).
    Engine,
    /// An answer given for the engine (OK, BYE).
    Given(&'static str),
    /// Sending failed: the error is the answer.
    Failed(EngineError),
}

/// An engine process's side of games, one after another.
#[derive(Debug)]
pub struct EngineDriver {
    engine: Engine,
    name: String,
    size: u8,
    color: Color,
    /// The position after the last ply the driver knows.
    known: Option<Position>,
    /// Every ply of the current game so far.
    history: Vec<Ply>,
    /// The position of the TURN being answered.
    turn: Option<Position>,
    awaiting: Awaiting,
}

impl EngineDriver {
    /// Drives `engine`, which plays as the player `name`.
    pub fn new(engine: Engine, name: &str) -> EngineDriver {
        EngineDriver {
            engine,
            name: name.to_string(),
            size: 8,
            color: Color::Black,
            known: None,
            history: Vec::new(),
            turn: None,
            awaiting: Awaiting::Nothing,
        }
    }

    /// Passes one request on. Nothing fails here: a failure to write is
    /// the answer [`EngineDriver::wait`] gives.
    pub fn send(&mut self, request: &str) {
        self.awaiting = match self.translate(request) {
            Ok(a) => a,
            Err(e) => Awaiting::Failed(e),
        };
    }

    fn translate(&mut self, request: &str) -> Result<Awaiting, EngineError> {
        let words: Vec<&str> = request.split_whitespace().collect();
        match words.first().copied() {
            Some("NEW") => {
                let field = |i: usize| words.get(i).copied().unwrap_or("");
                self.color = if field(2) == "white" {
                    Color::White
                } else {
                    Color::Black
                };
                self.size = field(4).parse().unwrap_or(8);
                let me = self.name.clone();
                let other = field(3).to_string();
                let names = match self.color {
                    Color::Black => [me, other],
                    Color::White => [other, me],
                };
                self.known = None;
                self.history.clear();
                self.turn = None;
                self.engine.begin_game(&GameStart {
                    size: self.size,
                    color: self.color,
                    names,
                    move_ms: field(5).parse().unwrap_or(5000),
                })?;
                Ok(Awaiting::Engine)
            }
            Some("TURN") if words.len() >= 5 => {
                let color = if words[1] == "white" {
                    Color::White
                } else {
                    Color::Black
                };
                let pos = parse_board_string(words[2], color).map_err(|e| misread(request, e))?;
                let last = match words[3] {
                    "none" => None,
                    m => Some(parse_move(m, pos.size()).map_err(|e| misread(request, e))?),
                };
                let ms: u64 = words[4].parse().unwrap_or(5000);
                self.follow(pos, last, request)?;
                self.turn = Some(pos);
                self.engine.ask_move(&self.history, color, ms)?;
                Ok(Awaiting::Engine)
            }
            Some("ILLEGAL") => {
                // Its board may hold the refused move (GTP's genmove plays
                // it): set again before the next move.
                self.engine.forget_board();
                Ok(Awaiting::Given("OK"))
            }
            Some("END") => Ok(Awaiting::Given("BYE")),
            _ => Ok(Awaiting::Given("OK")),
        }
    }

    /// Adds the plies that lead to `pos` to the history.
    fn follow(
        &mut self,
        pos: Position,
        last: Option<Move>,
        request: &str,
    ) -> Result<(), EngineError> {
        let start = Position::start(pos.size());
        let from = self.known.unwrap_or(start);
        let plies = match plies_between(&from, &pos, last) {
            Some(p) => p,
            None => {
                // Not a continuation of what it knew: from the start.
                self.history.clear();
                plies_between(&start, &pos, last).ok_or_else(|| EngineError::Garbage {
                    command: "(the referee's TURN)".into(),
                    line: request.to_string(),
                    why: "no game leads to this position (a referee bug)".into(),
                })?
            }
        };
        self.history.extend(plies);
        self.known = Some(pos);
        Ok(())
    }

    /// The answer to the last request, until `deadline`.
    pub fn wait(&mut self, deadline: Instant) -> Result<String, EngineError> {
        match std::mem::replace(&mut self.awaiting, Awaiting::Nothing) {
            Awaiting::Nothing => Err(EngineError::Timeout {
                command: "(nothing was sent)".into(),
            }),
            Awaiting::Given(word) => Ok(word.to_string()),
            Awaiting::Failed(e) => Err(e),
            Awaiting::Engine => match self.engine.answer(deadline)? {
                Answer::Ready => Ok("READY".into()),
                Answer::Move(text) => {
                    if let Some(pos) = self.turn.take() {
                        let legal = parse_move(&text, pos.size())
                            .ok()
                            .and_then(|mv| pos.play(mv).ok().map(|(next, _)| (mv, next)));
                        if let Some((mv, next)) = legal {
                            self.history.push(Ply {
                                color: pos.to_move(),
                                mv,
                            });
                            self.known = Some(next);
                        }
                    }
                    Ok(text)
                }
            },
        }
    }

    /// Before a new game: reads the engine's answers still owed for what
    /// it was sent and nobody awaited (the game ended first, e.g. its
    /// opponent did not start, and END was answered for it), until
    /// `deadline`. False if they did not come: the engine is then to be
    /// started again, not charged with it.
    pub fn settle(&mut self, deadline: Instant) -> bool {
        self.awaiting = Awaiting::Nothing;
        self.engine.settle(deadline)
    }

    /// Says `quit` and closes the engine's input.
    pub fn quit(&mut self) {
        self.engine.quit();
    }
}

fn misread(request: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::Garbage {
        command: "(the referee's TURN)".into(),
        line: request.to_string(),
        why: format!("cannot read it: {e}"),
    }
}
