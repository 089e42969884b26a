//! One game as a state machine: the position, both clocks (a limit per
//! move with the time bank, or a side's game clock with its increment),
//! retries, the pass rules and every adjudication (PROTOCOL.md and the
//! README's rules and end reasons say them to bot authors).
//!
//! Owns: what to ask whom next, and what a reply (with the time it took)
//! or a failure to reply means for the game. Pure: no I/O, no clock, no
//! processes, no events; the driver (`referee`) sends what [`Next`] says
//! through a [`Seat`](super::Seat), measures the time, and feeds the reply
//! back; what happened comes back as [`Happened`] values for it to emit.
//! Must not: wait, write, log, or know how a player is reached.

use crate::game::{replay_transcript, Color, IllegalMove, Move, NotationError, Position, Square};
use crate::protocol::{Reply, Request, Verb};
use crate::record::{DiscCount, EndReason, Limit, MoveRecord, Winner};

use super::{GameClock, Rules, SideTime, TimeControl};

/// Why a seat produced no reply: the kinds the core adjudicates. A seat
/// (mailbox, or a player over stdin/stdout) maps its own failures to these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeatError {
    /// Nothing complete by the deadline; `partial` if a reply was half
    /// written (the mailbox: out.txt without its last newline).
    #[error("{detail}")]
    Timeout { partial: bool, detail: String },
    /// What came was not a message (binary, too big, a link, unreadable).
    #[error("{0}")]
    Garbage(String),
    /// A message from or to someone else.
    #[error("{0}")]
    WrongSender(String),
    /// The player's process ended.
    #[error("{0}")]
    Exited(String),
    /// The player could not be started at all (the whole reason, as shown).
    #[error("{0}")]
    StartFailed(String),
    /// The player went over a sandbox limit.
    #[error("{detail}")]
    OverLimit { limit: Limit, detail: String },
    /// A person resigned instead of moving (the whole reason, as shown).
    #[error("{0}")]
    Resigned(String),
}

/// A forfeit: who, why, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    pub color: Color,
    pub reason: EndReason,
    pub detail: String,
}

/// What the referee must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Send `request` to the player of `color` and wait at most `limit_ms`
    /// from sending for its reply.
    Ask {
        color: Color,
        request: Request,
        limit_ms: u64,
    },
    /// The game is over (normally, or by [`GameCore::outcome`]'s forfeit).
    Over,
}

/// What a step changed, for the driver to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Happened {
    /// A move was played; `after` is the new position, `ply` counts every
    /// move and pass of the game, the opening's included.
    Moved {
        ply: u32,
        color: Color,
        square: Square,
        ms: u64,
        after: Position,
    },
    /// A pass, by the bot (`auto` false) or by the referee for it.
    Passed {
        ply: u32,
        color: Color,
        auto: bool,
        after: Position,
    },
    /// An illegal answer that is retried: ILLEGAL follows.
    Retried {
        color: Color,
        answer: String,
        reason: EndReason,
        retries_left: u32,
    },
    /// The game ends by this forfeit.
    Forfeited(Lost),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// NEW sent to both; who has answered READY.
    Greeting([bool; 2]),
    /// TURN sent to the side to move.
    Turn,
    /// ILLEGAL (for this reason) sent to the side to move, OK awaited.
    Illegal(EndReason),
    Over,
}

/// One side's clock as its player is shown it before a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockReading {
    /// A limit per move (with what is left of the bank, if there is one).
    PerMove {
        move_ms: u64,
        bank_left_ms: Option<u64>,
    },
    /// A game clock: what is left, and what each move gives back.
    Game { left_ms: u64, increment_ms: u64 },
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub result: Winner,
    pub reason: EndReason,
    /// Discs on the board at the end.
    pub discs: DiscCount,
    /// Discs with the empty squares to the winner; all of them to the
    /// winner of a forfeit.
    pub discs_wof: DiscCount,
    pub forfeit: Option<Lost>,
}

/// One game, from NEW to END.
#[derive(Clone, Debug)]
pub struct GameCore {
    /// Time per move of black and white: the event's, or a seat's own.
    move_ms: [u64; 2],
    time: TimeControl,
    rules: Rules,
    pos: Position,
    moves: Vec<MoveRecord>,
    time_used: [u64; 2],
    bank_left: [u64; 2],
    /// A side's game clock, if it plays on one (a person), and what is
    /// left on it.
    clock: [Option<GameClock>; 2],
    clock_left: [u64; 2],
    last: Option<Move>,
    retries_left: u32,
    phase: Phase,
    lost: Option<Lost>,
}

/// Maps a failure to reply to a forfeit reason; `awaited` names what was
/// due (`READY`, `a move`, `OK`).
pub fn failure_reason(err: &SeatError, awaited: &str) -> EndReason {
    match err {
        SeatError::Timeout { partial: true, .. } => EndReason::Incomplete,
        SeatError::Timeout { .. } if awaited == "READY" => EndReason::NoReady,
        SeatError::Timeout { .. } => EndReason::Timeout,
        SeatError::Garbage(_) => EndReason::Garbage,
        SeatError::WrongSender(_) => EndReason::WrongSender,
        SeatError::Exited(_) => EndReason::Exited,
        SeatError::StartFailed(_) => EndReason::StartFailed,
        SeatError::Resigned(_) => EndReason::Resigned,
        SeatError::OverLimit {
            limit: Limit::Memory,
            ..
        } => EndReason::Memory,
        SeatError::OverLimit {
            limit: Limit::Disk, ..
        } => EndReason::Disk,
    }
}

fn illegal_reason(why: IllegalMove) -> EndReason {
    match why {
        IllegalMove::OffBoard => EndReason::OffBoard,
        IllegalMove::Occupied => EndReason::Occupied,
        IllegalMove::NoFlips | IllegalMove::MustPass => EndReason::NoFlips,
        IllegalMove::PassWithMoves => EndReason::PassWithMoves,
    }
}

impl GameCore {
    /// A game of `size` from the position `opening` (a transcript) leads to.
    pub fn new(
        size: u8,
        opening: &str,
        time: TimeControl,
        rules: Rules,
    ) -> Result<GameCore, NotationError> {
        let (played, pos) = replay_transcript(Position::start(size), opening)?;
        let mut moves = Vec::with_capacity(played.len() + 64);
        let mut p = Position::start(size);
        for mv in &played {
            moves.push(MoveRecord {
                color: p.to_move(),
                mv: *mv,
                ms: 0,
                opening: true,
                auto: false,
            });
            p = p.play(*mv).expect("replayed").0;
        }
        Ok(GameCore {
            move_ms: [time.move_ms; 2],
            time,
            rules,
            pos,
            moves,
            time_used: [0, 0],
            bank_left: [time.bank_ms.unwrap_or(0); 2],
            clock: [None; 2],
            clock_left: [0; 2],
            last: played.last().copied(),
            retries_left: rules.max_retries,
            phase: Phase::Greeting([false; 2]),
            lost: None,
        })
    }

    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// Every move so far, the opening's included.
    pub fn moves(&self) -> &[MoveRecord] {
        &self.moves
    }

    /// Thinking time used per colour (black, white), in ms.
    pub fn time_used(&self) -> [u64; 2] {
        self.time_used
    }

    /// What is left of each colour's bank, in ms.
    pub fn bank_left(&self) -> [u64; 2] {
        self.bank_left
    }

    /// Both clocks (black, white) as the side to move is shown them.
    pub fn clocks(&self) -> [ClockReading; 2] {
        [0, 1].map(|i| match self.clock[i] {
            Some(c) => ClockReading::Game {
                left_ms: self.clock_left[i],
                increment_ms: c.increment_ms,
            },
            None => ClockReading::PerMove {
                move_ms: self.move_ms[i],
                bank_left_ms: self.time.bank_ms.map(|_| self.bank_left[i]),
            },
        })
    }

    /// The time control each side plays under (black, white).
    pub fn time_controls(&self) -> [SideTime; 2] {
        [0, 1].map(|i| match self.clock[i] {
            Some(c) => SideTime::Game(c),
            None => SideTime::PerMove {
                move_ms: self.move_ms[i],
                bank_ms: self.time.bank_ms,
            },
        })
    }

    pub fn is_over(&self) -> bool {
        self.phase == Phase::Over
    }

    /// The forfeit the game ended with, if any.
    pub fn forfeit(&self) -> Option<&Lost> {
        self.lost.as_ref()
    }

    /// NEW for `color`.
    pub fn new_request(&self, game: &str, color: Color, opponent: &str) -> Request {
        Request::New {
            game: game.to_string(),
            color,
            opponent: opponent.to_string(),
            size: self.pos.size(),
            move_ms: self.clock[color.index()].map_or(self.move_ms[color.index()], |c| c.base_ms),
        }
    }

    /// Gives `color` its own time per move (a person's, where the event's
    /// is a bot's): asked for in its NEW and TURNs, and charged like any.
    pub fn set_move_ms(&mut self, color: Color, ms: u64) {
        self.move_ms[color.index()] = ms;
    }

    /// Puts `color` on a game clock (a person's) instead of a limit per
    /// move: each TURN allows what is left on it, each answer is taken off
    /// it, each move it makes gives back the increment, and an answer
    /// after it ran out is a loss on time (`timeout`). The bank is not
    /// drawn on for that side.
    pub fn set_clock(&mut self, color: Color, clock: GameClock) {
        self.clock[color.index()] = Some(clock);
        self.clock_left[color.index()] = clock.base_ms;
    }

    /// The longest `color` may take for its next answer.
    fn limit_ms(&self, color: Color) -> u64 {
        let i = color.index();
        match self.clock[i] {
            Some(_) => self.clock_left[i],
            None => self.move_ms[i] + self.bank_left[i],
        }
    }

    /// Takes `ms` off the game clock of `color`, if it has one; `Some`
    /// forfeit if its flag fell (it answered after its clock ran out).
    fn charge_clock(&mut self, color: Color, ms: u64) -> Option<Vec<Happened>> {
        let i = color.index();
        self.clock[i]?;
        if ms > self.clock_left[i] {
            let left = self.clock_left[i];
            self.clock_left[i] = 0;
            return Some(self.end_with(Lost {
                color,
                reason: EndReason::Timeout,
                detail: format!(
                    "its game clock ran out: answered after {ms} ms with {left} ms left"
                ),
            }));
        }
        self.clock_left[i] -= ms;
        None
    }

    /// The increment after a move (or a pass) `color` made itself.
    fn add_increment(&mut self, color: Color) {
        let i = color.index();
        if let Some(c) = self.clock[i] {
            self.clock_left[i] += c.increment_ms;
        }
    }

    /// How long a player gets from NEW to READY (a player started by hand
    /// may get `wait_ms` instead: the driver's choice).
    pub fn startup_ms(&self) -> u64 {
        self.time.startup_ms
    }

    fn end_with(&mut self, lost: Lost) -> Vec<Happened> {
        self.phase = Phase::Over;
        self.lost = Some(lost.clone());
        vec![Happened::Forfeited(lost)]
    }

    /// Ends the game by a forfeit the driver found (the player could not
    /// be started, or its request could not be delivered).
    pub fn forfeit_now(
        &mut self,
        color: Color,
        reason: EndReason,
        detail: String,
    ) -> Vec<Happened> {
        if self.phase == Phase::Over {
            return vec![];
        }
        self.end_with(Lost {
            color,
            reason,
            detail,
        })
    }

    /// The player of `color` could not be sent its request.
    pub fn undeliverable(&mut self, color: Color, why: &str) -> Vec<Happened> {
        self.forfeit_now(
            color,
            EndReason::Garbage,
            format!("cannot deliver its message: {why}"),
        )
    }

    /// A reply, but not the one `to` is answered with.
    fn wrong_answer(&mut self, color: Color, text: &str, to: Verb) -> Vec<Happened> {
        self.end_with(Lost {
            color,
            reason: EndReason::WrongAnswer,
            detail: format!(
                "answered {text:?} to {to}; the answer must be {}",
                to.expected_reply()
            ),
        })
    }

    fn failed(&mut self, color: Color, err: &SeatError, awaited: &str) -> Vec<Happened> {
        let detail = match err {
            SeatError::StartFailed(why) | SeatError::Resigned(why) => why.clone(),
            other => format!("waiting for {awaited}: {other}"),
        };
        let reason = failure_reason(err, awaited);
        self.end_with(Lost {
            color,
            reason,
            detail,
        })
    }

    /// The answer of `color` to its NEW.
    pub fn on_ready(&mut self, color: Color, answer: Result<&str, &SeatError>) -> Vec<Happened> {
        let Phase::Greeting(mut ready) = self.phase else {
            return vec![];
        };
        match answer {
            Ok(text) if Reply::decode(text, self.pos.size()) == Ok(Reply::Ready) => {
                ready[color.index()] = true;
                self.phase = if ready == [true; 2] {
                    Phase::Turn
                } else {
                    Phase::Greeting(ready)
                };
                vec![]
            }
            Ok(text) => self.wrong_answer(color, text, Verb::New),
            Err(e) => self.failed(color, e, "READY"),
        }
    }

    fn pass(&mut self, color: Color, auto: bool, ms: u64) -> Happened {
        self.moves.push(MoveRecord {
            color,
            mv: Move::Pass,
            ms,
            opening: false,
            auto,
        });
        self.pos = self.pos.pass_unchecked();
        self.last = Some(Move::Pass);
        Happened::Passed {
            ply: self.moves.len() as u32,
            color,
            auto,
            after: self.pos,
        }
    }

    /// What to do next. Passes for a side without a move (unless
    /// `ask-pass`), which it reports in `happened`.
    pub fn next(&mut self, happened: &mut Vec<Happened>) -> Next {
        match self.phase {
            Phase::Over => Next::Over,
            Phase::Greeting(_) => panic!("the driver asks for NEW's answers first"),
            Phase::Illegal(reason) => Next::Ask {
                color: self.pos.to_move(),
                request: Request::Illegal {
                    reason: reason.to_string(),
                },
                limit_ms: match self.clock[self.pos.to_move().index()] {
                    Some(_) => self.clock_left[self.pos.to_move().index()],
                    None => self.move_ms[self.pos.to_move().index()],
                },
            },
            Phase::Turn => {
                loop {
                    if self.pos.is_over() {
                        self.phase = Phase::Over;
                        return Next::Over;
                    }
                    if self.pos.legal_moves() == 0 && !self.rules.ask_pass {
                        let color = self.pos.to_move();
                        happened.push(self.pass(color, true, 0));
                        continue;
                    }
                    break;
                }
                let color = self.pos.to_move();
                let limit_ms = self.limit_ms(color);
                Next::Ask {
                    color,
                    request: Request::turn(&self.pos, self.last, limit_ms),
                    limit_ms,
                }
            }
        }
    }

    /// The reply of the side to move to the request [`next`](Self::next)
    /// asked for, `ms` after it was sent (or its failure to reply).
    pub fn on_reply(&mut self, answer: Result<&str, &SeatError>, ms: u64) -> Vec<Happened> {
        let color = self.pos.to_move();
        match self.phase {
            Phase::Turn => self.on_move(color, answer, ms),
            Phase::Illegal(_) => match answer {
                Ok(_) if self.clock[color.index()].is_some() => {
                    if let Some(lost) = self.charge_clock(color, ms) {
                        return lost;
                    }
                    self.on_ok(color, answer)
                }
                _ => self.on_ok(color, answer),
            },
            Phase::Greeting(_) | Phase::Over => vec![],
        }
    }

    /// The answer to ILLEGAL: OK, or a forfeit.
    fn on_ok(&mut self, color: Color, answer: Result<&str, &SeatError>) -> Vec<Happened> {
        match answer {
            Ok(text) if Reply::decode(text, self.pos.size()) == Ok(Reply::Ok) => {
                self.phase = Phase::Turn;
                vec![]
            }
            Ok(text) => self.wrong_answer(color, text, Verb::Illegal),
            Err(e) => self.failed(color, e, "OK"),
        }
    }

    fn on_move(
        &mut self,
        color: Color,
        answer: Result<&str, &SeatError>,
        ms: u64,
    ) -> Vec<Happened> {
        let answer = match answer {
            Ok(a) => a,
            Err(e) => return self.failed(color, e, "a move"),
        };
        let i = color.index();
        self.time_used[i] += ms;
        if let Some(lost) = self.charge_clock(color, ms) {
            return lost;
        }
        if self.clock[i].is_none() && self.time.bank_ms.is_some() && ms > self.move_ms[i] {
            let over = ms - self.move_ms[i];
            self.bank_left[i] = self.bank_left[i].saturating_sub(over);
        }
        let verdict = match Reply::decode(answer, self.pos.size()) {
            Ok(Reply::Move(mv)) => Ok(mv),
            _ => Err((EndReason::Unparseable, "not a square or `pass`".to_string())),
        }
        .and_then(|mv| {
            self.pos
                .check(mv)
                .map(|()| mv)
                .map_err(|why| (illegal_reason(why), why.to_string()))
        });
        match verdict {
            Ok(Move::Pass) => {
                self.retries_left = self.rules.max_retries;
                self.add_increment(color);
                vec![self.pass(color, false, ms)]
            }
            Ok(mv @ Move::Play(square)) => {
                self.retries_left = self.rules.max_retries;
                self.add_increment(color);
                self.pos = self.pos.play(mv).expect("checked").0;
                self.moves.push(MoveRecord {
                    color,
                    mv,
                    ms,
                    opening: false,
                    auto: false,
                });
                self.last = Some(mv);
                vec![Happened::Moved {
                    ply: self.moves.len() as u32,
                    color,
                    square,
                    ms,
                    after: self.pos,
                }]
            }
            Err((reason, why)) => {
                let detail = format!("answered {answer:?}: {why}");
                if self.retries_left == 0 {
                    return self.end_with(Lost {
                        color,
                        reason,
                        detail,
                    });
                }
                self.retries_left -= 1;
                self.phase = Phase::Illegal(reason);
                vec![Happened::Retried {
                    color,
                    answer: answer.to_string(),
                    reason,
                    retries_left: self.retries_left,
                }]
            }
        }
    }

    /// The result, once [`is_over`](Self::is_over).
    pub fn outcome(&self) -> Outcome {
        let discs = DiscCount::from(self.pos.discs());
        match &self.lost {
            None => {
                let wof = self.pos.discs_wof();
                Outcome {
                    result: Winner::from_color(wof.winner()),
                    reason: EndReason::Normal,
                    discs,
                    discs_wof: DiscCount::from(wof),
                    forfeit: None,
                }
            }
            Some(l) => Outcome {
                result: Winner::from_color(Some(l.color.opponent())),
                reason: l.reason,
                discs,
                discs_wof: DiscCount::forfeit(l.color, self.pos.size()),
                forfeit: Some(l.clone()),
            },
        }
    }

    /// END, as both players are told it.
    pub fn end_request(&self) -> Request {
        let o = self.outcome();
        Request::End {
            winner: match o.result {
                Winner::Black => Some(Color::Black),
                Winner::White => Some(Color::White),
                Winner::Draw => None,
            },
            black: o.discs_wof.black,
            white: o.discs_wof.white,
            reason: o.reason.to_string(),
        }
    }

    /// How long a player in good standing gets to answer END with BYE.
    pub fn bye_ms(&self) -> u64 {
        self.move_ms[0].min(self.move_ms[1]).max(1000)
    }
}

#[cfg(test)]
mod tests {
    //! Every rule of adjudication, as tables, without a process.

    use super::*;

    const NORMAL: TimeControl = TimeControl {
        move_ms: 500,
        startup_ms: 2000,
        bank_ms: None,
        wait_ms: None,
    };

    fn rules(max_retries: u32, ask_pass: bool) -> Rules {
        Rules {
            max_retries,
            ask_pass,
        }
    }

    /// A game from `opening` on 8×8 in which both have said READY.
    fn started(opening: &str, time: TimeControl, rules: Rules) -> GameCore {
        let mut g = GameCore::new(8, opening, time, rules).unwrap();
        assert!(g.on_ready(Color::Black, Ok("READY")).is_empty());
        assert!(g.on_ready(Color::White, Ok("ready")).is_empty());
        g
    }

    /// Asks the core what is next and returns the request (panics on Over).
    fn ask(g: &mut GameCore) -> (Color, Request, u64) {
        match g.next(&mut vec![]) {
            Next::Ask {
                color,
                request,
                limit_ms,
            } => (color, request, limit_ms),
            Next::Over => panic!("the game is over"),
        }
    }

    fn timeout(partial: bool) -> SeatError {
        SeatError::Timeout {
            partial,
            detail: "no answer in time".into(),
        }
    }

    fn forfeit_of(h: &[Happened]) -> Option<(Color, EndReason)> {
        h.iter().find_map(|h| match h {
            Happened::Forfeited(l) => Some((l.color, l.reason)),
            _ => None,
        })
    }

    #[test]
    fn answers_to_new_are_adjudicated() {
        let table: [(Result<&str, SeatError>, Option<EndReason>); 11] = [
            (Ok("READY"), None),
            (Ok("Ready"), None),
            (Ok("d3"), Some(EndReason::WrongAnswer)),
            (Ok("OK"), Some(EndReason::WrongAnswer)),
            (Err(timeout(false)), Some(EndReason::NoReady)),
            (Err(timeout(true)), Some(EndReason::Incomplete)),
            (
                Err(SeatError::Exited("ended".into())),
                Some(EndReason::Exited),
            ),
            (
                Err(SeatError::Garbage("binary".into())),
                Some(EndReason::Garbage),
            ),
            (
                Err(SeatError::WrongSender("from x".into())),
                Some(EndReason::WrongSender),
            ),
            (
                Err(SeatError::StartFailed("player `x`: no such file".into())),
                Some(EndReason::StartFailed),
            ),
            (
                Err(SeatError::OverLimit {
                    limit: Limit::Memory,
                    detail: "out of memory".into(),
                }),
                Some(EndReason::Memory),
            ),
        ];
        for (answer, expected) in table {
            let mut g = GameCore::new(8, "", NORMAL, rules(0, false)).unwrap();
            let h = g.on_ready(Color::White, answer.as_deref());
            assert_eq!(
                forfeit_of(&h),
                expected.map(|r| (Color::White, r)),
                "{answer:?}"
            );
            assert_eq!(g.is_over(), expected.is_some(), "{answer:?}");
        }
        // The words of a forfeit: what was answered, or what was awaited.
        let mut g = GameCore::new(8, "", NORMAL, rules(0, false)).unwrap();
        g.on_ready(Color::Black, Ok("d3"));
        assert_eq!(
            g.forfeit().unwrap().detail,
            "answered \"d3\" to NEW; the answer must be READY"
        );
        let mut g = GameCore::new(8, "", NORMAL, rules(0, false)).unwrap();
        g.on_ready(Color::Black, Err(&timeout(false)));
        assert_eq!(
            g.forfeit().unwrap().detail,
            "waiting for READY: no answer in time"
        );
        let mut g = GameCore::new(8, "", NORMAL, rules(0, false)).unwrap();
        g.on_ready(
            Color::Black,
            Err(&SeatError::StartFailed("player `x`: gone".into())),
        );
        assert_eq!(g.forfeit().unwrap().detail, "player `x`: gone");
    }

    #[test]
    fn answers_to_turn_are_adjudicated() {
        // From the start, black to move (legal: d3 c4 f5 e6).
        let table: [(Result<&str, SeatError>, Option<EndReason>); 12] = [
            (Ok("d3"), None),
            (Ok("F5"), None),
            (Ok(" e6 "), None),
            (Ok("hello there"), Some(EndReason::Unparseable)),
            (Ok(""), Some(EndReason::Unparseable)),
            (Ok("READY"), Some(EndReason::Unparseable)),
            (Ok("d4"), Some(EndReason::Occupied)),
            (Ok("a1"), Some(EndReason::NoFlips)),
            (Ok("pass"), Some(EndReason::PassWithMoves)),
            (Err(timeout(false)), Some(EndReason::Timeout)),
            (Err(timeout(true)), Some(EndReason::Incomplete)),
            (
                Err(SeatError::OverLimit {
                    limit: Limit::Disk,
                    detail: "wrote 300 MB".into(),
                }),
                Some(EndReason::Disk),
            ),
        ];
        for (answer, expected) in table {
            let mut g = started("", NORMAL, rules(0, false));
            let (color, request, _) = ask(&mut g);
            assert_eq!(color, Color::Black);
            assert_eq!(request.encode().split(' ').next(), Some("TURN"));
            let h = g.on_reply(answer.as_deref(), 10);
            assert_eq!(
                forfeit_of(&h),
                expected.map(|r| (Color::Black, r)),
                "{answer:?}"
            );
            if expected.is_none() {
                assert!(matches!(h[..], [Happened::Moved { ply: 1, .. }]), "{h:?}");
                assert_eq!(g.position().to_move(), Color::White);
            }
        }
        let mut g = started("", NORMAL, rules(0, false));
        ask(&mut g);
        g.on_reply(Ok("a1"), 10);
        assert_eq!(
            g.forfeit().unwrap().detail,
            "answered \"a1\": move flips no disc"
        );
    }

    #[test]
    fn the_board_size_limits_the_squares() {
        // h8 is off a 6×6 board: not a square there.
        let mut g = GameCore::new(6, "", NORMAL, rules(0, false)).unwrap();
        g.on_ready(Color::Black, Ok("READY"));
        g.on_ready(Color::White, Ok("READY"));
        ask(&mut g);
        let h = g.on_reply(Ok("h8"), 5);
        assert_eq!(forfeit_of(&h), Some((Color::Black, EndReason::Unparseable)));
    }

    #[test]
    fn retries_send_illegal_expect_ok_and_run_out() {
        let mut g = started("", NORMAL, rules(1, false));
        ask(&mut g);
        let h = g.on_reply(Ok("a1"), 10);
        assert_eq!(
            h,
            [Happened::Retried {
                color: Color::Black,
                answer: "a1".into(),
                reason: EndReason::NoFlips,
                retries_left: 0,
            }]
        );
        let (color, request, limit) = ask(&mut g);
        assert_eq!(
            (color, request.encode(), limit),
            (Color::Black, "ILLEGAL no-flips".to_string(), 500)
        );
        assert!(g.on_reply(Ok("ok"), 3).is_empty());
        let (_, request, _) = ask(&mut g);
        assert!(request.encode().starts_with("TURN black "));
        // The retries are spent: the next illegal answer forfeits.
        let h = g.on_reply(Ok("d4"), 10);
        assert_eq!(forfeit_of(&h), Some((Color::Black, EndReason::Occupied)));

        // A legal move gives back the retries for the next turn.
        let mut g = started("", NORMAL, rules(1, false));
        ask(&mut g);
        g.on_reply(Ok("a1"), 10);
        ask(&mut g);
        g.on_reply(Ok("OK"), 1);
        ask(&mut g);
        g.on_reply(Ok("d3"), 10);
        ask(&mut g); // white
        g.on_reply(Ok("c3"), 10);
        ask(&mut g); // black again, with its retry back
        let h = g.on_reply(Ok("a8"), 10);
        assert!(matches!(h[..], [Happened::Retried { .. }]), "{h:?}");

        // Anything but OK to ILLEGAL, or no answer, forfeits.
        for (answer, reason) in [
            (Ok("d3"), EndReason::WrongAnswer),
            (Err(timeout(false)), EndReason::Timeout),
            (Err(SeatError::Exited("gone".into())), EndReason::Exited),
        ] {
            let mut g = started("", NORMAL, rules(3, false));
            ask(&mut g);
            g.on_reply(Ok("pass"), 10);
            ask(&mut g);
            let h = g.on_reply(answer.as_deref(), 10);
            assert_eq!(forfeit_of(&h), Some((Color::Black, reason)), "{answer:?}");
        }
    }

    #[test]
    fn the_clock_and_the_bank() {
        let time = TimeControl {
            bank_ms: Some(1000),
            ..NORMAL
        };
        let mut g = started("", time, rules(0, false));
        let (_, request, limit) = ask(&mut g);
        assert_eq!(limit, 1500, "move time plus the whole bank");
        assert!(request.encode().ends_with(" none 1500"));
        g.on_reply(Ok("d3"), 800);
        assert_eq!(g.bank_left(), [700, 1000], "300 ms over the move time");
        let (_, _, limit) = ask(&mut g);
        assert_eq!(limit, 1500, "white's bank is whole");
        g.on_reply(Ok("c3"), 100);
        assert_eq!(g.bank_left(), [700, 1000], "within the move time");
        let (_, request, limit) = ask(&mut g);
        assert_eq!(limit, 1200);
        assert!(request.encode().ends_with(" c3 1200"), "{request}");
        g.on_reply(Ok("c4"), 2000);
        assert_eq!(g.bank_left(), [0, 1000], "the bank does not go below 0");
        assert_eq!(g.time_used(), [2800, 100]);

        // Without a bank the limit is the move time, and nothing is drawn.
        let mut g = started("", NORMAL, rules(0, false));
        let (_, _, limit) = ask(&mut g);
        assert_eq!(limit, 500);
        g.on_reply(Ok("d3"), 499);
        assert_eq!(g.bank_left(), [0, 0]);
        // A timeout is not counted as time used (nothing was answered).
        ask(&mut g);
        g.on_reply(Err(&timeout(false)), 500);
        assert_eq!(g.time_used(), [499, 0]);
    }

    /// Plays the first legal move for whoever is to move, answering after
    /// `ms`; the forfeit, if that ends the game.
    fn answer_first_legal(g: &mut GameCore, ms: u64) -> Option<(Color, EndReason)> {
        let (_, request, _) = ask(g);
        let Request::Turn { pos, .. } = request else {
            panic!("{request}");
        };
        let sq = pos.legal_squares()[0];
        forfeit_of(&g.on_reply(Ok(&crate::game::square_name(sq)), ms))
    }

    #[test]
    fn a_game_clock_is_charged_given_its_increment_and_its_flag_falls() {
        let minute = GameClock {
            base_ms: 60_000,
            increment_ms: 1_000,
        };
        // Black on 60 s + 1 s a move answers after each time in turn
        // (white, at 200 ms a move, answers at once): what is left after
        // the last, or the move at which its flag fell.
        let table: &[(&[u64], Result<u64, usize>)] = &[
            (&[5_000], Ok(56_000)),
            (&[5_000, 5_000], Ok(52_000)),
            (&[60_000], Ok(1_000)),
            (&[60_000, 1_000], Ok(1_000)),
            (&[60_000, 1_001], Err(2)),
            (&[60_001], Err(1)),
            (&[0, 0, 0], Ok(63_000)),
        ];
        for (times, expected) in table {
            let mut g = started("", NORMAL, rules(0, false));
            g.set_clock(Color::Black, minute);
            g.set_move_ms(Color::White, 200);
            let mut outcome = Ok(0);
            for (k, ms) in times.iter().enumerate() {
                let (color, request, limit) = ask(&mut g);
                assert_eq!(color, Color::Black);
                let Request::Turn { ms: told, .. } = request else {
                    panic!("{request}");
                };
                assert_eq!(told, limit, "the TURN says what the clock allows");
                if let Some(lost) = answer_first_legal(&mut g, *ms) {
                    assert_eq!(lost, (Color::Black, EndReason::Timeout), "{times:?}");
                    outcome = Err(k + 1);
                    break;
                }
                let (_, _, white_limit) = ask(&mut g);
                assert_eq!(white_limit, 200, "white keeps its limit per move");
                assert_eq!(answer_first_legal(&mut g, 150), None);
                let ClockReading::Game { left_ms, .. } = g.clocks()[0] else {
                    panic!("black is on a clock");
                };
                outcome = Ok(left_ms);
            }
            assert_eq!(outcome, *expected, "{times:?}");
            assert_eq!(g.is_over(), expected.is_err(), "{times:?}");
        }
        // The flag's words, and the loss on time in the result.
        let mut g = started("", NORMAL, rules(0, false));
        g.set_clock(Color::Black, minute);
        answer_first_legal(&mut g, 60_001);
        assert_eq!(
            g.forfeit().unwrap().detail,
            "its game clock ran out: answered after 60001 ms with 60000 ms left"
        );
        assert_eq!(g.outcome().result, Winner::White);
        assert!(g.end_request().encode().ends_with(" timeout"));
    }

    #[test]
    fn a_game_clock_is_shown_and_recorded_beside_a_limit_per_move() {
        let time = TimeControl {
            bank_ms: Some(1000),
            ..NORMAL
        };
        let clock = GameClock {
            base_ms: 10_000,
            increment_ms: 0,
        };
        let mut g = started("", time, rules(1, false));
        g.set_clock(Color::White, clock);
        assert_eq!(
            g.time_controls(),
            [
                SideTime::PerMove {
                    move_ms: 500,
                    bank_ms: Some(1000)
                },
                SideTime::Game(clock)
            ]
        );
        assert_eq!(answer_first_legal(&mut g, 700), None);
        assert_eq!(
            g.clocks(),
            [
                ClockReading::PerMove {
                    move_ms: 500,
                    bank_left_ms: Some(800)
                },
                ClockReading::Game {
                    left_ms: 10_000,
                    increment_ms: 0
                }
            ]
        );
        // White's long answer draws on no bank; an illegal square and its
        // OK are charged to its clock too, and give back nothing.
        let (_, _, limit) = ask(&mut g);
        assert_eq!(limit, 10_000);
        assert!(matches!(
            g.on_reply(Ok("a1"), 3_000)[..],
            [Happened::Retried { .. }]
        ));
        let (_, request, limit) = ask(&mut g);
        assert_eq!(
            (request.encode(), limit),
            ("ILLEGAL no-flips".into(), 7_000)
        );
        assert!(g.on_reply(Ok("OK"), 1_000).is_empty());
        assert_eq!(answer_first_legal(&mut g, 2_000), None);
        assert_eq!(g.bank_left(), [800, 1000]);
        assert_eq!(
            g.clocks()[1],
            ClockReading::Game {
                left_ms: 4_000,
                increment_ms: 0
            }
        );
        // NEW tells a side on a clock the whole clock.
        let Request::New { move_ms, .. } = g.new_request("t", Color::White, "b") else {
            panic!()
        };
        assert_eq!(move_ms, 10_000);
    }

    /// 8×8, black to move without a legal move; white can move.
    const BLACK_MUST_PASS: &str = "e6f6g6g7c4h6h8f8";

    #[test]
    fn the_referee_passes_for_a_side_without_a_move() {
        let mut g = started(BLACK_MUST_PASS, NORMAL, rules(0, false));
        let mut happened = vec![];
        let Next::Ask { color, request, .. } = g.next(&mut happened) else {
            panic!("not over");
        };
        assert_eq!(color, Color::White, "black was passed for");
        assert!(matches!(
            happened[..],
            [Happened::Passed {
                color: Color::Black,
                auto: true,
                ply: 9,
                ..
            }]
        ));
        assert!(
            request.encode().contains(" pass "),
            "last is pass: {request}"
        );
        let last = g.moves().last().unwrap();
        assert!(last.auto && last.mv == Move::Pass && last.ms == 0);
    }

    #[test]
    fn with_ask_pass_the_side_without_a_move_must_say_pass() {
        let table = [
            ("pass", None),
            ("PASS", None),
            ("d3", Some(EndReason::NoFlips)),
            ("xyz", Some(EndReason::Unparseable)),
        ];
        for (answer, expected) in table {
            let mut g = started(BLACK_MUST_PASS, NORMAL, rules(0, true));
            let (color, _, _) = ask(&mut g);
            assert_eq!(color, Color::Black, "asked although it has no move");
            let h = g.on_reply(Ok(answer), 20);
            assert_eq!(
                forfeit_of(&h),
                expected.map(|r| (Color::Black, r)),
                "{answer}"
            );
            if expected.is_none() {
                assert!(matches!(h[..], [Happened::Passed { auto: false, .. }]));
                assert_eq!(g.moves().last().unwrap().ms, 20);
            }
        }
    }

    #[test]
    fn a_game_ends_when_neither_side_can_move_and_is_scored_winner_take_empties() {
        // 4×4: play the first legal move each turn until the end.
        let mut g = GameCore::new(4, "", NORMAL, rules(0, false)).unwrap();
        g.on_ready(Color::Black, Ok("READY"));
        g.on_ready(Color::White, Ok("READY"));
        let mut turns = 0;
        loop {
            match g.next(&mut vec![]) {
                Next::Over => break,
                Next::Ask { request, .. } => {
                    let Request::Turn { pos, .. } = request else {
                        panic!("{request}");
                    };
                    let sq = pos.legal_squares()[0];
                    g.on_reply(Ok(&crate::game::square_name(sq)), 1);
                    turns += 1;
                }
            }
        }
        assert!(g.is_over() && g.position().is_over());
        assert!(turns > 4);
        let o = g.outcome();
        assert_eq!(o.reason, EndReason::Normal);
        assert_eq!(o.forfeit, None);
        assert_eq!(o.discs_wof.black + o.discs_wof.white, 16);
        assert_eq!(
            o.result,
            Winner::from_color(g.position().discs_wof().winner())
        );
        let end = g.end_request().encode();
        assert!(end.starts_with("END ") && end.ends_with(" normal"), "{end}");
    }

    #[test]
    fn a_forfeit_gives_every_square_to_the_opponent() {
        let mut g = started("", NORMAL, rules(0, false));
        ask(&mut g);
        g.on_reply(Ok("d3"), 5);
        ask(&mut g);
        g.on_reply(
            Err(&SeatError::Exited(
                "the bot's process ended (exit status 1)".into(),
            )),
            5,
        );
        assert!(g.is_over());
        assert_eq!(g.next(&mut vec![]), Next::Over);
        let o = g.outcome();
        assert_eq!(o.result, Winner::Black);
        assert_eq!(o.reason, EndReason::Exited);
        assert_eq!((o.discs_wof.black, o.discs_wof.white), (64, 0));
        assert_eq!((o.discs.black, o.discs.white), (4, 1));
        assert_eq!(g.end_request().encode(), "END black 64 0 exited");
    }

    #[test]
    fn an_undeliverable_request_is_the_players_forfeit() {
        let mut g = started("", NORMAL, rules(0, false));
        let h = g.undeliverable(Color::Black, "in.txt is a symlink");
        assert_eq!(forfeit_of(&h), Some((Color::Black, EndReason::Garbage)));
        assert_eq!(
            g.forfeit().unwrap().detail,
            "cannot deliver its message: in.txt is a symlink"
        );
        // Only the first forfeit counts.
        assert!(g.undeliverable(Color::White, "again").is_empty());
        assert_eq!(g.outcome().result, Winner::White);
    }

    #[test]
    fn the_opening_is_recorded_and_its_last_move_sent() {
        let mut g = started("f5d6", NORMAL, rules(0, false));
        assert_eq!(g.moves().len(), 2);
        assert!(g.moves().iter().all(|m| m.opening && m.ms == 0));
        let (color, request, _) = ask(&mut g);
        assert_eq!(color, Color::Black);
        assert!(request.encode().contains(" d6 "), "{request}");
        assert!(GameCore::new(8, "a1", NORMAL, rules(0, false)).is_err());
    }
}
