//! The NBoard protocol, version 2 (NBoard, NTest) or 1 (Edax `-nboard`,
//! older engines), 8×8 only: the referee's side of the conversation.
//!
//! What is sent: once `nboard V` (the player's `nboard-version`, 2 unless
//! it says 1) and `set depth D`; each game `ping N` (ready at `pong N`);
//! each move, the first time `set game <GGF>` (the players, `TI` with the
//! clock, the start position and every ply so far), then for each ply
//! since `move <sq>` (version 2) or the bare square `<sq>` (version 1),
//! squares upper case, a pass `PA`; then `ping N` and `go`. The engine
//! answers `go` with `=== <sq>[/eval/time]` or, as Edax does, `=== <sq>
//! <eval> <time>` (`PA`/`PS`/`pass` for a pass), either way in either
//! version, and does not apply its move until it is sent it. Everything before the awaited `pong N` or `=== ` (`status`,
//! `set myname`, `nodestats`, search lines, blank lines, stale answers,
//! chatter that is not UTF-8) is ignored and logged; so is anything after
//! the deadline (an engine that writes without end is out of time).
//!
//! Owns: encoding those commands and reading the answers. Must not judge
//! the move (the referee does) or start the process.

use std::collections::VecDeque;
use std::time::Instant;

use crate::game::Color;
use crate::report::ggf;

use super::link::{Line, LineLink, LinkError};
use super::{news, vertex, Answer, EngineError, EngineSettings, GameStart, Ply};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Want {
    /// `pong N`; `true` when it makes the game ready.
    Pong(u64, bool),
    /// `=== <move>…`.
    Move,
}

#[derive(Clone, Debug)]
struct Pending {
    command: String,
    want: Want,
}

/// An NBoard engine's conversation.
#[derive(Debug)]
pub struct NboardClient {
    link: LineLink,
    depth: u32,
    /// 2, or 1: `nboard 1` and bare moves.
    version: u8,
    hello_sent: bool,
    next_ping: u64,
    /// The plies its board has (`None`: it needs `set game`).
    told: Option<Vec<Ply>>,
    game: Option<GameStart>,
    pending: VecDeque<Pending>,
}

impl NboardClient {
    pub fn new(link: LineLink, settings: EngineSettings) -> NboardClient {
        NboardClient {
            link,
            depth: settings.depth,
            version: settings.nboard_version,
            hello_sent: false,
            next_ping: 1,
            told: None,
            game: None,
            pending: VecDeque::new(),
        }
    }

    fn send(&mut self, command: &str) -> Result<(), EngineError> {
        self.link.send(command).map_err(|e| EngineError::Write {
            command: short(command),
            why: match e {
                LinkError::Write(why) => why,
                other => other.to_string(),
            },
        })
    }

    fn ping(&mut self, ready: bool) -> Result<(), EngineError> {
        let n = self.next_ping;
        self.next_ping += 1;
        let command = format!("ping {n}");
        self.send(&command)?;
        self.pending.push_back(Pending {
            command,
            want: Want::Pong(n, ready),
        });
        Ok(())
    }

    pub fn begin_game(&mut self, start: &GameStart) -> Result<(), EngineError> {
        self.skip_leftovers();
        if start.size != 8 {
            // Refused at config time; here for a caller that did not check.
            return Err(EngineError::Refused {
                command: "set game".into(),
                answer: format!("NBoard plays 8×8 only, not {0}×{0}", start.size),
            });
        }
        if !self.hello_sent {
            self.hello_sent = true;
            self.send(&format!("nboard {}", self.version))?;
            self.send(&format!("set depth {}", self.depth))?;
        }
        self.told = None;
        self.game = Some(start.clone());
        self.ping(true)
    }

    pub fn ask_move(
        &mut self,
        history: &[Ply],
        _color: Color,
        _allowed_ms: u64,
    ) -> Result<(), EngineError> {
        self.skip_leftovers();
        match news(self.told.as_deref(), history) {
            Some(new) => {
                for ply in new {
                    let square = vertex(ply.mv, "PA");
                    if self.version == 1 {
                        self.send(&square)?;
                    } else {
                        self.send(&format!("move {square}"))?;
                    }
                }
            }
            None => {
                let game = self.game.as_ref().ok_or_else(|| EngineError::Write {
                    command: "set game".into(),
                    why: "no game was begun".into(),
                })?;
                let plies: Vec<_> = history.iter().map(|p| (p.color, p.mv)).collect();
                let ti = ggf::clock(game.move_ms, None);
                let text = ggf::game_so_far(
                    [&game.names[0], &game.names[1]],
                    game.size,
                    &plies,
                    Some(&ti),
                );
                self.send(&format!("set game {text}"))?;
            }
        }
        self.told = Some(history.to_vec());
        self.ping(false)?;
        self.send("go")?;
        self.pending.push_back(Pending {
            command: "go".into(),
            want: Want::Move,
        });
        Ok(())
    }

    pub fn forget_board(&mut self) {
        self.told = None;
    }

    /// Reads until every awaited line came; the last one is the answer.
    pub fn answer(&mut self, deadline: Instant) -> Result<Answer, EngineError> {
        let mut last = None;
        while let Some(p) = self.pending.front().cloned() {
            let got = self.await_line(&p, deadline);
            let got = got.inspect_err(|_| {
                self.pending.clear();
                self.told = None;
            })?;
            self.pending.pop_front();
            if let Some(a) = got {
                last = Some(a);
            }
        }
        last.ok_or_else(|| EngineError::Garbage {
            command: "(nothing)".into(),
            line: String::new(),
            why: "nothing was asked".into(),
        })
    }

    /// Reads the answers owed for what was sent and never awaited (a game
    /// that ended before they were read); false if they did not all come
    /// by `deadline`.
    pub fn settle(&mut self, deadline: Instant) -> bool {
        while let Some(p) = self.pending.front().cloned() {
            if self.await_line(&p, deadline).is_err() {
                self.pending.clear();
                return false;
            }
            self.pending.pop_front();
        }
        true
    }

    fn await_line(
        &mut self,
        p: &Pending,
        deadline: Instant,
    ) -> Result<Option<Answer>, EngineError> {
        loop {
            let line = self.link.recv(deadline).map_err(|e| match e {
                LinkError::Timeout => EngineError::Timeout {
                    command: p.command.clone(),
                },
                _ => EngineError::Closed {
                    command: p.command.clone(),
                },
            })?;
            let said = parse_line(&line);
            if !line.clean {
                // Chatter may be in any encoding; an answer must be text.
                if said == Said::Other {
                    tracing::debug!("engine line ignored (not text): {:?}", line.text);
                    continue;
                }
                return Err(EngineError::Garbage {
                    command: p.command.clone(),
                    line: line.text,
                    why: "not text (control characters or invalid UTF-8)".into(),
                });
            }
            match (&p.want, said) {
                (Want::Pong(n, ready), Said::Pong(m)) if *n == m => {
                    return Ok(ready.then_some(Answer::Ready));
                }
                (Want::Move, Said::Move(text)) => return Ok(Some(Answer::Move(text))),
                (Want::Move, Said::BadMove(why)) => {
                    return Err(EngineError::Garbage {
                        command: p.command.clone(),
                        line: line.text,
                        why,
                    })
                }
                _ => tracing::debug!("engine line ignored: {:?}", line.text),
            }
        }
    }

    fn skip_leftovers(&mut self) {
        for line in self.link.drain() {
            tracing::debug!("engine line ignored: {:?}", line.text);
        }
    }

    pub fn quit(&mut self) {
        let _ = self.link.send("quit");
        self.link.close_input();
    }
}

/// What an engine line says, as far as the referee cares.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    Pong(u64),
    /// The move of `=== <move>[/eval/time]`, passes as `pass`.
    Move(String),
    /// `===` without a move.
    BadMove(String),
    Other,
}

fn parse_line(line: &Line) -> Said {
    let t = line.text.trim();
    let mut words = t.split_whitespace();
    match words.next() {
        Some("pong") => match words.next().and_then(|n| n.parse().ok()) {
            Some(n) => Said::Pong(n),
            None => Said::Other,
        },
        Some("===") => match words.next() {
            Some(w) => {
                let mv = w.split('/').next().unwrap_or("");
                if mv.eq_ignore_ascii_case("ps") || mv.eq_ignore_ascii_case("pa") {
                    Said::Move("pass".into())
                } else {
                    Said::Move(mv.to_string())
                }
            }
            None => Said::BadMove("`===` without a move".into()),
        },
        _ => Said::Other,
    }
}

/// A command for an error message: `set game …` without its GGF.
fn short(command: &str) -> String {
    if command.starts_with("set game") {
        "set game".into()
    } else {
        command.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(t: &str) -> Said {
        parse_line(&Line {
            text: t.into(),
            clean: true,
        })
    }

    #[test]
    fn chatter_that_is_not_text_is_ignored_and_an_answer_that_is_not_is_garbage() {
        use std::io::Write;
        let (ours, mut engine) = std::os::unix::net::UnixStream::pair().unwrap();
        let link = LineLink::new(std::io::sink(), ours, std::sync::Arc::new(|_, _| {})).unwrap();
        let settings = EngineSettings {
            depth: 4,
            nboard_version: 2,
        };
        let mut c = NboardClient::new(link, settings);
        let start = GameStart {
            size: 8,
            color: Color::Black,
            names: ["a".into(), "b".into()],
            move_ms: 5000,
        };
        let soon = || Instant::now() + std::time::Duration::from_secs(10);
        c.begin_game(&start).unwrap();
        engine
            .write_all(b"set myname Z\xe9bra\r\n\r\nstatus \x00\r\npong 1\r\n")
            .unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Ready));
        c.ask_move(&[], Color::Black, 5000).unwrap();
        engine
            .write_all(b"pong 2\nstatus Z\xe9bra thinks\n=== f5/0.50/0.01\n")
            .unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Move("f5".into())));
        c.forget_board();
        c.ask_move(&[], Color::Black, 5000).unwrap();
        engine.write_all(b"pong 3\n=== f\x005\n").unwrap();
        assert!(matches!(
            c.answer(soon()),
            Err(EngineError::Garbage { ref command, .. }) if command == "go"
        ));
    }

    #[test]
    fn engine_lines_are_read() {
        assert_eq!(said("pong 3"), Said::Pong(3));
        assert_eq!(said("=== d6"), Said::Move("d6".into()));
        assert_eq!(said("=== F5/-1.00/0.3"), Said::Move("F5".into()));
        assert_eq!(said("=== d6 -1.00 0.0"), Said::Move("d6".into()));
        assert_eq!(said("=== PA"), Said::Move("pass".into()));
        assert_eq!(said("=== ps/0"), Said::Move("pass".into()));
        assert!(matches!(said("==="), Said::BadMove(_)));
        assert_eq!(said("status Edax is thinking"), Said::Other);
        assert_eq!(said("set myname Edax6"), Said::Other);
        assert_eq!(said("pong"), Said::Other);
    }
}
