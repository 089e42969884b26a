//! One game between two player instances: NEW → READY, TURN / answer until
//! neither side can move, END → BYE; the clock and every adjudication.
//!
//! Owns: the turn loop, the move clock and time bank, and turning every
//! misbehaviour into a game result (DESIGN.md §3). Emits events and never
//! prints; the only `Err` it returns is the harness's own failure (the board
//! lost or unwritable), never a bot's.

use crate::sandbox::Limit;
use std::time::{Duration, Instant, SystemTime};

use crate::error::HarnessError;
use crate::event::{Event, EventSink};
use crate::game::{
    board_string, move_name, parse_move, replay_transcript, transcript, Color, IllegalMove, Move,
    Position,
};
use crate::mailbox::{AnswerError, BoardLock, Pending};
use crate::player::{Instance, Restart, GRACE};
use crate::protocol::{Reply, Request};
use crate::record::{DiscCount, EndReason, Forfeit, GameRecord, MoveRecord, Winner};

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

/// The adjudication rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// Illegal answers answered with ILLEGAL and a new TURN before a forfeit.
    pub max_retries: u32,
    /// Ask a bot without a legal move for `pass` instead of passing for it.
    pub ask_pass: bool,
}

/// What game to play.
#[derive(Clone, Debug)]
pub struct GameSpec {
    pub id: String,
    pub round: u32,
    pub size: u8,
    /// Moves played before the bots take over (a transcript).
    pub opening: String,
    pub time: TimeControl,
    pub rules: Rules,
}

/// How often the referee says again whom it waits for.
const WAIT_LOG_EVERY: Duration = Duration::from_secs(10);

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

struct Side<'a> {
    inst: &'a mut Instance,
    color: Color,
}

/// A forfeit in the making: who, why, in words.
struct Lost {
    color: Color,
    reason: EndReason,
    detail: String,
}

fn illegal_reason(why: IllegalMove) -> EndReason {
    match why {
        IllegalMove::OffBoard => EndReason::OffBoard,
        IllegalMove::Occupied => EndReason::Occupied,
        IllegalMove::NoFlips | IllegalMove::MustPass => EndReason::NoFlips,
        IllegalMove::PassWithMoves => EndReason::PassWithMoves,
    }
}

/// Maps a failed wait to a forfeit reason; `phase` names what was awaited.
fn answer_reason(err: &AnswerError, phase: &str) -> (EndReason, String) {
    let reason = match err {
        AnswerError::Timeout {
            pending: Pending::Partial(_),
        } => EndReason::Incomplete,
        AnswerError::Timeout { .. } if phase == "READY" => EndReason::NoReady,
        AnswerError::Timeout { .. } => EndReason::Timeout,
        AnswerError::Garbage(_) | AnswerError::Symlink(_) | AnswerError::Io(_) => {
            EndReason::Garbage
        }
        AnswerError::WrongSender { .. } => EndReason::WrongSender,
        AnswerError::Aborted(_) => EndReason::Exited,
    };
    (reason, format!("waiting for {phase}: {err}"))
}

/// Plays one game. `lock` (when given) is checked before every write to
/// the board; losing it ends the game with `Err(LockLost)`.
pub fn play_game(
    spec: &GameSpec,
    black: &mut Instance,
    white: &mut Instance,
    lock: Option<&BoardLock>,
    sink: &dyn EventSink,
) -> Result<GameRecord, HarnessError> {
    let span = tracing::info_span!(
        "game",
        id = %spec.id,
        black = %black.spec().name,
        white = %white.spec().name
    );
    let _entered = span.enter();
    let started = now_rfc3339();
    let (opening_moves, opening_pos) = replay_transcript(Position::start(spec.size), &spec.opening)
        .map_err(|e| {
            HarnessError::Config(format!("game {}: opening `{}`: {e}", spec.id, spec.opening))
        })?;
    sink.emit(&Event::GameStarted {
        id: &spec.id,
        round: spec.round,
        black: &black.spec().name,
        white: &white.spec().name,
        size: spec.size,
        opening: &spec.opening,
    });
    let mut game = Game {
        spec,
        lock,
        sink,
        pos: opening_pos,
        moves: Vec::new(),
        time_used: [0, 0],
        bank_left: [spec.time.bank_ms.unwrap_or(0); 2],
        last: None,
    };
    {
        let mut p = Position::start(spec.size);
        for mv in &opening_moves {
            game.moves.push(MoveRecord {
                color: p.to_move().name().into(),
                mv: move_name(*mv),
                ms: 0,
                opening: true,
                auto: false,
            });
            p = p.play(*mv).expect("replayed").0;
            game.last = Some(*mv);
        }
    }
    let mut sides = [
        Side {
            inst: black,
            color: Color::Black,
        },
        Side {
            inst: white,
            color: Color::White,
        },
    ];
    let lost = game.run(&mut sides, &span)?;
    let record = game.finish(&mut sides, lost, started)?;
    sink.emit(&Event::GameOver { record: &record });
    Ok(record)
}

struct Game<'a> {
    spec: &'a GameSpec,
    lock: Option<&'a BoardLock>,
    sink: &'a dyn EventSink,
    pos: Position,
    moves: Vec<MoveRecord>,
    time_used: [u64; 2],
    bank_left: [u64; 2],
    /// The last move played (`None` before the first).
    last: Option<Move>,
}

impl Game<'_> {
    fn check_lock(&self) -> Result<(), HarnessError> {
        match self.lock {
            Some(lock) => lock.ensure_held().map_err(HarnessError::LockLost),
            None => Ok(()),
        }
    }

    fn send(&self, side: &mut Side<'_>, request: &Request) -> Result<Option<Lost>, HarnessError> {
        self.check_lock()?;
        match side.inst.send(&request.encode()) {
            Ok(_) => Ok(None),
            Err(AnswerError::Io(e)) => {
                // Refused because the board was lost meanwhile, or the drive failed.
                self.check_lock()?;
                Err(HarnessError::BoardUnwritable(e))
            }
            Err(e) => Ok(Some(Lost {
                color: side.color,
                reason: EndReason::Garbage,
                detail: format!("cannot write its in.txt: {e}"),
            })),
        }
    }

    fn lost_from(&self, side: &Side<'_>, err: &AnswerError, phase: &str) -> Lost {
        if let Some(why) = side.inst.start_error() {
            return Lost {
                color: side.color,
                reason: EndReason::StartFailed,
                detail: format!("player `{}`: {why}", side.inst.spec().name),
            };
        }
        if let Some((limit, why)) = side.inst.limit_breach() {
            return Lost {
                color: side.color,
                reason: match limit {
                    Limit::Memory => EndReason::Memory,
                    Limit::Disk => EndReason::Disk,
                },
                detail: format!("waiting for {phase}: {why}"),
            };
        }
        let (reason, detail) = answer_reason(err, phase);
        Lost {
            color: side.color,
            reason,
            detail,
        }
    }

    /// The game up to its end; `Some` if it ended by a forfeit.
    fn run(
        &mut self,
        sides: &mut [Side<'_>; 2],
        span: &tracing::Span,
    ) -> Result<Option<Lost>, HarnessError> {
        let spec = self.spec;
        // Start (or reuse) both processes, then send both NEWs before
        // waiting, so two slow interpreters start side by side.
        let mut fresh = [false; 2];
        for (i, side) in sides.iter_mut().enumerate() {
            match side.inst.prepare(span.clone()) {
                Ok(started) => fresh[i] = started,
                Err(e) => {
                    return Ok(Some(Lost {
                        color: side.color,
                        reason: EndReason::StartFailed,
                        detail: e.to_string(),
                    }))
                }
            }
        }
        let names = [
            sides[0].inst.spec().name.clone(),
            sides[1].inst.spec().name.clone(),
        ];
        let new_text = |i: usize, color: Color| Request::New {
            game: spec.id.clone(),
            color,
            opponent: names[1 - i].clone(),
            size: spec.size,
            move_ms: spec.time.move_ms,
        };
        let mut sent_at = [Instant::now(); 2];
        for (i, side) in sides.iter_mut().enumerate() {
            sent_at[i] = Instant::now();
            if let Some(lost) = self.send(side, &new_text(i, side.color))? {
                return Ok(Some(lost));
            }
        }
        for (i, side) in sides.iter_mut().enumerate() {
            let mut outcome = self.await_ready(side, sent_at[i])?;
            // A reused bot may have exited after its last BYE (allowed): it
            // is started again and asked again, once.
            if let Some(Lost {
                reason: EndReason::Exited,
                ..
            }) = outcome
            {
                if !fresh[i] {
                    tracing::debug!(
                        bot = side.inst.id(),
                        "exited between games; starting it again"
                    );
                    if let Err(e) = side.inst.prepare(span.clone()) {
                        return Ok(Some(Lost {
                            color: side.color,
                            reason: EndReason::StartFailed,
                            detail: e.to_string(),
                        }));
                    }
                    let again = Instant::now();
                    if let Some(lost) = self.send(side, &new_text(i, side.color))? {
                        return Ok(Some(lost));
                    }
                    outcome = self.await_ready(side, again)?;
                }
            }
            if let Some(lost) = outcome {
                return Ok(Some(lost));
            }
        }
        loop {
            if self.pos.is_over() {
                return Ok(None);
            }
            let color = self.pos.to_move();
            let side = &mut sides[color.index()];
            if self.pos.legal_moves() == 0 && !spec.rules.ask_pass {
                self.record_pass(color, true, 0);
                continue;
            }
            if let Some(lost) = self.one_turn(side)? {
                return Ok(Some(lost));
            }
        }
    }

    fn await_ready(
        &mut self,
        side: &mut Side<'_>,
        sent_at: Instant,
    ) -> Result<Option<Lost>, HarnessError> {
        let answer = if side.inst.is_waiting() {
            let give_up = self
                .spec
                .time
                .wait_ms
                .map(|ms| sent_at + Duration::from_millis(ms));
            loop {
                let waited = sent_at.elapsed();
                self.sink.emit(&Event::Waiting {
                    id: &self.spec.id,
                    player: &side.inst.spec().name,
                    mailbox: side.inst.mailbox().dir(),
                    waited_secs: waited.as_secs(),
                });
                let mut until = Instant::now() + WAIT_LOG_EVERY;
                if let Some(g) = give_up {
                    until = until.min(g);
                }
                match side.inst.wait(until) {
                    Err(AnswerError::Timeout { .. })
                        if give_up.is_none_or(|g| Instant::now() < g) =>
                    {
                        continue
                    }
                    other => break other,
                }
            }
        } else {
            side.inst
                .wait(sent_at + Duration::from_millis(self.spec.time.startup_ms))
        };
        Ok(match answer {
            Ok(text) if Reply::decode(&text, self.spec.size) == Ok(Reply::Ready) => None,
            Ok(text) => Some(Lost {
                color: side.color,
                reason: EndReason::WrongAnswer,
                detail: format!("answered {text:?} to NEW; the answer must be READY"),
            }),
            Err(e) => Some(self.lost_from(side, &e, "READY")),
        })
    }

    fn record_pass(&mut self, color: Color, auto: bool, ms: u64) {
        self.moves.push(MoveRecord {
            color: color.name().into(),
            mv: "pass".into(),
            ms,
            opening: false,
            auto,
        });
        self.pos = self.pos.pass_unchecked();
        self.last = Some(Move::Pass);
        let board = board_string(&self.pos);
        self.sink.emit(&Event::Pass {
            id: &self.spec.id,
            ply: self.moves.len() as u32,
            color,
            auto,
            board: &board,
        });
    }

    /// One move of the side to move: TURN, answer, adjudication, retries.
    fn one_turn(&mut self, side: &mut Side<'_>) -> Result<Option<Lost>, HarnessError> {
        let spec = self.spec;
        let color = side.color;
        let mut retries = spec.rules.max_retries;
        loop {
            let allowed = spec.time.move_ms + self.bank_left[color.index()];
            let turn = Request::turn(&self.pos, self.last, allowed);
            let t0 = Instant::now();
            if let Some(lost) = self.send(side, &turn)? {
                return Ok(Some(lost));
            }
            let answer = side.inst.wait(t0 + Duration::from_millis(allowed));
            let ms = t0.elapsed().as_millis() as u64;
            let answer = match answer {
                Ok(a) => a,
                Err(e) => return Ok(Some(self.lost_from(side, &e, "a move"))),
            };
            self.time_used[color.index()] += ms;
            if spec.time.bank_ms.is_some() && ms > spec.time.move_ms {
                let over = ms - spec.time.move_ms;
                self.bank_left[color.index()] = self.bank_left[color.index()].saturating_sub(over);
            }
            let verdict = match Reply::decode(&answer, spec.size) {
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
                    self.record_pass(color, false, ms);
                    return Ok(None);
                }
                Ok(Move::Play(sq)) => {
                    let (next, _) = self.pos.play(Move::Play(sq)).expect("checked");
                    self.pos = next;
                    let name = move_name(Move::Play(sq));
                    self.moves.push(MoveRecord {
                        color: color.name().into(),
                        mv: name.clone(),
                        ms,
                        opening: false,
                        auto: false,
                    });
                    let d = self.pos.discs();
                    let board = board_string(&self.pos);
                    self.sink.emit(&Event::Move {
                        id: &spec.id,
                        ply: self.moves.len() as u32,
                        color,
                        mv: &name,
                        ms,
                        black: d.black,
                        white: d.white,
                        board: &board,
                    });
                    self.last = Some(Move::Play(sq));
                    return Ok(None);
                }
                Err((reason, why)) => {
                    let detail = format!("answered {answer:?}: {why}");
                    if retries == 0 {
                        return Ok(Some(Lost {
                            color,
                            reason,
                            detail,
                        }));
                    }
                    retries -= 1;
                    self.sink.emit(&Event::Illegal {
                        id: &spec.id,
                        color,
                        answer: &answer,
                        reason,
                        retries_left: retries,
                    });
                    let t1 = Instant::now();
                    let illegal = Request::Illegal {
                        reason: reason.to_string(),
                    };
                    if let Some(lost) = self.send(side, &illegal)? {
                        return Ok(Some(lost));
                    }
                    match side
                        .inst
                        .wait(t1 + Duration::from_millis(spec.time.move_ms))
                    {
                        Ok(ok) if Reply::decode(&ok, spec.size) == Ok(Reply::Ok) => {}
                        Ok(other) => {
                            return Ok(Some(Lost {
                                color,
                                reason: EndReason::WrongAnswer,
                                detail: format!(
                                    "answered {other:?} to ILLEGAL; the answer must be OK"
                                ),
                            }))
                        }
                        Err(e) => return Ok(Some(self.lost_from(side, &e, "OK"))),
                    }
                }
            }
        }
    }

    /// Scores the game, says END (and waits for BYE from bots in good
    /// standing), and retires instances that forfeited.
    fn finish(
        &mut self,
        sides: &mut [Side<'_>; 2],
        lost: Option<Lost>,
        started: String,
    ) -> Result<GameRecord, HarnessError> {
        let spec = self.spec;
        let raw = self.pos.discs();
        let all = u32::from(spec.size) * u32::from(spec.size);
        let (result, reason, wof, forfeit) = match &lost {
            None => {
                let wof = self.pos.discs_wof();
                (
                    Winner::from_color(wof.winner()),
                    EndReason::Normal,
                    DiscCount::from(wof),
                    None,
                )
            }
            Some(l) => {
                let inst = &sides[l.color.index()].inst;
                let wof = match l.color {
                    Color::Black => DiscCount {
                        black: 0,
                        white: all,
                    },
                    Color::White => DiscCount {
                        black: all,
                        white: 0,
                    },
                };
                let forfeit = Forfeit {
                    color: l.color.name().into(),
                    detail: l.detail.clone(),
                    exit: inst.exit_info().map(|e| e.to_string()),
                    stderr_tail: inst.stderr_tail(),
                };
                self.sink.emit(&Event::Forfeit {
                    id: &spec.id,
                    color: l.color,
                    reason: l.reason,
                    detail: &l.detail,
                });
                (
                    Winner::from_color(Some(l.color.opponent())),
                    l.reason,
                    wof,
                    Some(forfeit),
                )
            }
        };
        let end = Request::End {
            winner: match result {
                Winner::Black => Some(Color::Black),
                Winner::White => Some(Color::White),
                Winner::Draw => None,
            },
            black: wof.black,
            white: wof.white,
            reason: reason.to_string(),
        };
        let forfeiter = lost.as_ref().map(|l| l.color);
        let mut sent = [false; 2];
        for side in sides.iter_mut() {
            // A bot that forfeited is killed below; one that never started
            // has nobody to tell.
            if forfeiter != Some(side.color) && (side.inst.is_running() || side.inst.is_waiting()) {
                sent[side.color.index()] = self.send(side, &end)?.is_none();
            }
        }
        let bye_deadline = Instant::now() + Duration::from_millis(spec.time.move_ms.max(1000));
        for side in sides.iter_mut() {
            let i = side.color.index();
            if forfeiter == Some(side.color) {
                if let Some(exit) = side.inst.stop(Duration::ZERO) {
                    tracing::debug!(bot = side.inst.id(), "stopped after its forfeit ({exit})");
                }
                continue;
            }
            if !sent[i] {
                continue;
            }
            match side.inst.wait(bye_deadline) {
                Ok(t) if Reply::decode(&t, spec.size) == Ok(Reply::Bye) => {}
                Ok(t) => {
                    tracing::warn!(
                        bot = side.inst.id(),
                        "answered {t:?} to END (expected BYE); it will be restarted"
                    );
                    side.inst.stop(GRACE);
                }
                Err(e) => {
                    if !matches!(e, AnswerError::Aborted(_)) {
                        tracing::warn!(
                            bot = side.inst.id(),
                            "no BYE after END: {e}; it will be restarted"
                        );
                    }
                    side.inst.stop(GRACE);
                }
            }
            if side.inst.spec().restart == Restart::PerGame {
                side.inst.stop(GRACE);
            }
        }
        for side in sides.iter() {
            let n = side.inst.library_fallbacks();
            if n > 0 {
                tracing::warn!(
                    "{} ({}): {n} move{} this game played by its library, not chosen by the bot \
                     (lines `{}` in the game log)",
                    side.inst.id(),
                    side.color,
                    if n == 1 { "" } else { "s" },
                    crate::player::LIBRARY_FALLBACK
                );
            }
        }
        let moves: Vec<Move> = self
            .moves
            .iter()
            .map(|m| parse_move(&m.mv, spec.size).expect("recorded moves parse"))
            .collect();
        Ok(GameRecord {
            id: spec.id.clone(),
            round: spec.round,
            black: sides[0].inst.spec().name.clone(),
            white: sides[1].inst.spec().name.clone(),
            size: spec.size,
            opening: spec.opening.clone(),
            transcript: transcript(&moves),
            moves: std::mem::take(&mut self.moves),
            result,
            reason,
            forfeit,
            discs: DiscCount::from(raw),
            discs_wof: wof,
            started,
            finished: now_rfc3339(),
            time_ms: DiscCount {
                black: self.time_used[0] as u32,
                white: self.time_used[1] as u32,
            },
            swiss_round: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_errors_map_to_reasons() {
        let table = [
            (
                AnswerError::Timeout {
                    pending: Pending::Nothing,
                },
                "a move",
                EndReason::Timeout,
            ),
            (
                AnswerError::Timeout {
                    pending: Pending::Nothing,
                },
                "READY",
                EndReason::NoReady,
            ),
            (
                AnswerError::Timeout {
                    pending: Pending::Partial("x\nreferee\n3\nd".into()),
                },
                "a move",
                EndReason::Incomplete,
            ),
            (
                AnswerError::Garbage("binary".into()),
                "a move",
                EndReason::Garbage,
            ),
            (
                AnswerError::Aborted("exit status 1".into()),
                "a move",
                EndReason::Exited,
            ),
            (
                AnswerError::WrongSender {
                    from: "a".into(),
                    to: "b".into(),
                },
                "a move",
                EndReason::WrongSender,
            ),
        ];
        for (err, phase, expected) in table {
            assert_eq!(answer_reason(&err, phase).0, expected, "{err:?}");
        }
    }
}
