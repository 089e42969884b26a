//! An engine in the referee's seat: the referee's requests (mailbox
//! protocol v1: NEW, TURN, ILLEGAL, END) in, the engine's commands out,
//! and its answers back in the referee's words (READY, a move, OK, BYE).
//!
//! Owns: following the game (every ply so far, given with each TURN by
//! whoever plays the game: [`EngineDriver::game_so_far`]; checked to lead
//! to the TURN's position), and answering ILLEGAL (OK; the engine's board
//! is set again) and END (BYE) for it. Must not judge a move (the referee
//! does), keep a clock (the referee's deadlines do), or start or stop the
//! process.
//!
//! The requests come typed (`protocol::Request`), as the referee's core
//! made them: nothing is parsed again on the way to an engine, and no
//! move is guessed from positions.

use std::time::Instant;

use crate::game::{Color, Position};
use crate::protocol::Request;

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
    /// Every ply of the current game so far, as given for the next TURN.
    given: Option<Vec<Ply>>,
    awaiting: Awaiting,
}

impl EngineDriver {
    /// Drives `engine`, which plays as the player `name`.
    pub fn new(engine: Engine, name: &str) -> EngineDriver {
        EngineDriver {
            engine,
            name: name.to_string(),
            given: None,
            awaiting: Awaiting::Nothing,
        }
    }

    /// Every ply of the game so far, for the TURN that follows (an engine
    /// is told moves, not positions).
    pub fn game_so_far(&mut self, plies: &[Ply]) {
        self.given = Some(plies.to_vec());
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
                self.given = None;
                self.engine.begin_game(&GameStart {
                    size: *size,
                    color: *color,
                    names,
                    move_ms: *move_ms,
                })?;
                Ok(Awaiting::Engine)
            }
            Request::Turn { pos, ms, .. } => {
                let plies = self.plies_to(request, pos)?;
                self.engine.ask_move(&plies, pos.to_move(), *ms)?;
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

    /// The plies given for this TURN, once they are seen to lead to its
    /// position `pos`; a TURN without them, or with plies of another game,
    /// is the referee's bug.
    fn plies_to(&mut self, turn: &Request, pos: &Position) -> Result<Vec<Ply>, EngineError> {
        let bug = |why: &str| EngineError::Garbage {
            command: "(the referee's TURN)".into(),
            line: turn.encode(),
            why: format!("{why} (a referee bug)"),
        };
        let plies = self
            .given
            .take()
            .ok_or_else(|| bug("no moves of the game came with it"))?;
        let reached = plies.iter().try_fold(Position::start(pos.size()), |at, p| {
            (at.to_move() == p.color)
                .then(|| at.play(p.mv).ok().map(|(next, _)| next))
                .flatten()
        });
        if reached.as_ref() != Some(pos) {
            return Err(bug(
                "the moves that came with it do not lead to its position",
            ));
        }
        Ok(plies)
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
                Answer::Move(text) => Ok(text),
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

    #[test]
    fn a_turn_without_the_games_moves_or_with_another_games_is_a_referee_bug() {
        let mut d = driver();
        let soon = Instant::now() + std::time::Duration::from_secs(1);
        let start = Position::start(8);
        let turn = Request::turn(&start, None, 1000);
        let bug = |e: EngineError, why: &str| {
            assert!(
                matches!(&e, EngineError::Garbage { command, why: w, .. }
                    if command == "(the referee's TURN)" && w.contains(why) && w.contains("referee bug")),
                "{e:?}"
            );
        };
        d.send(&turn);
        bug(
            d.wait(soon).unwrap_err(),
            "no moves of the game came with it",
        );
        let d3 = crate::game::parse_move("d3", 8).unwrap();
        d.game_so_far(&[Ply {
            color: Color::Black,
            mv: d3,
        }]);
        d.send(&turn);
        bug(d.wait(soon).unwrap_err(), "do not lead to its position");
        // The moves given with the TURN before are not kept for the next.
        d.send(&turn);
        bug(
            d.wait(soon).unwrap_err(),
            "no moves of the game came with it",
        );
    }
}
