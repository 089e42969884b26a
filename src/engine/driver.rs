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
//! The requests come typed (`protocol::Request`), as the referee's core
//! made them: nothing is parsed again on the way to an engine.

use std::time::Instant;

use crate::game::{parse_move, Color, Move, Position};
use crate::protocol::Request;

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
            known: None,
            history: Vec::new(),
            turn: None,
            awaiting: Awaiting::Nothing,
        }
    }

    /// Passes one request on. Nothing fails here: a failure to write is
    /// the answer [`EngineDriver::wait`] gives.
    pub fn send(&mut self, request: &Request) {
        self.awaiting = match self.translate(request) {
            Ok(a) => a,
            Err(e) => Awaiting::Failed(e),
        };
    }

    fn translate(&mut self, request: &Request) -> Result<Awaiting, EngineError> {
        match request {
            Request::New {
                color,
                opponent,
                size,
                move_ms,
                ..
            } => {
                let (me, them) = (self.name.clone(), opponent.clone());
                let names = match color {
                    Color::Black => [me, them],
                    Color::White => [them, me],
                };
                self.known = None;
                self.history.clear();
                self.turn = None;
                self.engine.begin_game(&GameStart {
                    size: *size,
                    color: *color,
                    names,
                    move_ms: *move_ms,
                })?;
                Ok(Awaiting::Engine)
            }
            &Request::Turn { pos, last, ms } => {
                self.follow(pos, last)?;
                self.turn = Some(pos);
                self.engine.ask_move(&self.history, pos.to_move(), ms)?;
                Ok(Awaiting::Engine)
            }
            Request::Illegal { .. } => {
                // Its board may hold the refused move (GTP's genmove plays
                // it): set again before the next move.
                self.engine.forget_board();
                Ok(Awaiting::Given("OK"))
            }
            Request::End { .. } => Ok(Awaiting::Given("BYE")),
            Request::Other(_) => Ok(Awaiting::Given("OK")),
        }
    }

    /// Adds the plies that lead to `pos` to the history.
    fn follow(&mut self, pos: Position, last: Option<Move>) -> Result<(), EngineError> {
        let start = Position::start(pos.size());
        let from = self.known.unwrap_or(start);
        let plies = match plies_between(&from, &pos, last) {
            Some(p) => p,
            None => {
                // Not a continuation of what it knew: from the start.
                self.history.clear();
                plies_between(&start, &pos, last).ok_or_else(|| EngineError::Garbage {
                    command: "(the referee's TURN)".into(),
                    line: Request::Turn { pos, last, ms: 0 }.encode(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineSettings, LineLink, Protocol};

    fn driver() -> EngineDriver {
        let link = LineLink::new(
            std::io::sink(),
            std::io::empty(),
            std::sync::Arc::new(|_, _| {}),
        )
        .unwrap();
        let engine = Engine::new(Protocol::Gtp, link, EngineSettings::default()).unwrap();
        EngineDriver::new(engine, "e")
    }

    #[test]
    fn illegal_and_end_are_answered_for_the_engine_and_a_wait_for_nothing_is_said() {
        let mut d = driver();
        let soon = Instant::now() + std::time::Duration::from_secs(1);
        assert!(
            matches!(d.wait(soon), Err(EngineError::Timeout { command }) if command == "(nothing was sent)")
        );
        d.send(&Request::Illegal {
            reason: "not your disc".into(),
        });
        assert_eq!(d.wait(soon), Ok("OK".to_string()));
        d.send(&Request::end(2, 2, "normal"));
        assert_eq!(d.wait(soon), Ok("BYE".to_string()));
    }
}
