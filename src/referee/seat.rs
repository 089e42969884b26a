//! A seat: the referee's view of one player in a game. The referee (and
//! check-bot) drive players only through [`Seat`]; how a request reaches a
//! player — move files in a mailbox, the pipe it was offered, GTP or
//! NBoard lines to an engine, a person at the terminal (`person`) — is the
//! seat's business.
//!
//! Owns: the trait, its mailbox implementation ([`MailboxSeat`]: a player
//! [`Instance`], whose writes go through its board access), an in-memory
//! [`ScriptedSeat`] for tests, and the driving rules shared by the referee
//! and check-bot: which send failure is whose ([`SendError`]), and the
//! restart of a player that exited after its last BYE ([`restart`]).
//! Must not: judge a reply (the core does) or decide a result.

use std::time::{Duration, Instant};

use crate::engine::Ply;
use crate::mailbox::{AnswerError, ClearError, LockLost, Pending};
use crate::player::{Instance, StartError};
use crate::protocol::Request;

use super::core::{ClockReading, SeatError};
use super::GameClock;

/// What a seat taken by hand (`tournament seat`) answers to a TURN to
/// resign the game.
pub const RESIGN: &str = "RESIGN";

/// A player started by hand, as its own machine sees it.
#[derive(Clone, Debug)]
pub struct ByHand {
    /// Its mailbox as that machine spells it (`board-as`).
    pub mailbox: String,
    /// A command to copy for starting it there.
    pub start: String,
}

/// The referee's own failure in a game, not a player's: the game cannot
/// go on and nobody forfeits. The harness turns each kind into its exit
/// code (`error::HarnessError`'s `From`).
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// The board's lock was lost (taken over as stale, or released).
    #[error(transparent)]
    LockLost(#[from] LockLost),
    /// The board cannot be written (its folder, the disk).
    #[error("{0}")]
    BoardUnwritable(String),
    /// The game cannot be set up as specified (its opening).
    #[error("{0}")]
    BadGame(String),
    /// The machine refused the referee a process or thread to start a
    /// player (not the player's doing: nobody forfeits, the game is
    /// played again on the next run).
    #[error("{0}")]
    MachineExhausted(String),
}

/// Why a player could not be readied for a game.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The referee's own failure: the game cannot be played now, and
    /// nobody forfeits.
    #[error(transparent)]
    Referee(#[from] GameError),
    /// The player's program cannot start as configured: it forfeits
    /// (`start-failed`). The words say what to do.
    #[error("{0}")]
    StartFailed(String),
}

impl PrepareError {
    /// As the core's kind, for a start that is the player's fault; a
    /// referee's failure stays one.
    pub fn into_seat_error(self) -> Result<SeatError, GameError> {
        match self {
            PrepareError::Referee(e) => Err(e),
            PrepareError::StartFailed(why) => Ok(SeatError::StartFailed(why)),
        }
    }
}

/// Why a request did not reach the player.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The referee's own failure (the board lost or unwritable): the game
    /// cannot go on, and nobody forfeits.
    #[error(transparent)]
    Referee(#[from] GameError),
    /// The player's fault (it put a link where the request goes, closed
    /// its pipe): a forfeit. The words say what was found.
    #[error("{0}")]
    Refused(String),
}

/// The referee's view of a player: send a request, await the reply before
/// a deadline, end or restart the player.
///
/// To add a player that speaks another protocol over stdin/stdout (GTP,
/// NBoard), implement this trait on a type that owns the child process:
///
/// - [`prepare`](Seat::prepare) starts the process (or keeps the running
///   one) before each game; `Ok(true)` means it was started just now.
///   A start that fails is `Err(PrepareError::StartFailed(words))` (the
///   player's fault), or `Err(PrepareError::Referee(_))` (the machine's).
/// - [`send`](Seat::send) translates a protocol v1 [`Request`] into the
///   player's own commands (NEW → `boardsize`/`clear_board` or `set game`;
///   TURN → the moves it has not heard, from the plies given just before
///   by [`game_so_far`](Seat::game_so_far), then `genmove`/`go`; END →
///   nothing or `quit`) and writes them. Write errors on a closed pipe are
///   the player's ([`SendError::Refused`]).
/// - [`await_reply`](Seat::await_reply) reads until `deadline` and answers
///   in protocol v1 words: `READY` once the player took NEW, a square or
///   `pass` for a move, `OK` for ILLEGAL, `BYE` for END. Text that is none
///   of those is returned verbatim (forfeits quote it). No reply by the
///   deadline is `SeatError::Timeout` (`partial` if a line was begun), a
///   dead process `SeatError::Exited`.
/// - [`stop`](Seat::stop) ends the process (TERM, grace, KILL); it and
///   the other methods about a process (`by_hand`, `is_reachable`,
///   `per_game`, `exit_info`, `stderr_tail`) have answers for a seat
///   without one (a person's) by default.
///
/// The clock, the bank, retries, passes and every adjudication stay in the
/// referee's core: a seat only carries messages.
pub trait Seat {
    /// The player's name as scheduled (its opponent is told it in NEW).
    fn name(&self) -> &str;
    /// This copy of the player, for logs (`greedy.1`).
    fn id(&self) -> &str;
    /// Readies the player for a game logged under `span`: starts it if it
    /// is not running. `Ok(true)` if it was started now.
    fn prepare(&mut self, span: tracing::Span) -> Result<bool, PrepareError>;
    /// Delivers one request.
    fn send(&mut self, request: &Request) -> Result<(), SendError>;
    /// Waits until `deadline` for the reply to the last request.
    fn await_reply(&mut self, deadline: Instant) -> Result<String, SeatError>;
    // What only a process (or a player started by hand) has; a person or
    // any other seat without a process keeps these answers.

    /// For a player started by hand: where it is expected and how to start
    /// it there. The referee then waits for its READY as long as `wait-ms`
    /// allows (not `startup-ms`), saying, once it is late, whom it waits
    /// for, where, and how to start it.
    fn by_hand(&self) -> Option<ByHand> {
        None
    }
    /// True if the player can be told END (running, or started by hand).
    fn is_reachable(&self) -> bool {
        true
    }
    /// Ends the player: TERM, up to `grace`, then KILL. Returns how it
    /// ended, if it was running.
    fn stop(&mut self, _grace: Duration) -> Option<String> {
        None
    }
    /// True if the player is ended after every game (`restart = "per-game"`).
    fn per_game(&self) -> bool {
        false
    }
    /// How the player's process ended, if it did (for a forfeit's record).
    fn exit_info(&self) -> Option<String> {
        None
    }
    /// Its last lines on stderr this game (for a forfeit's record).
    fn stderr_tail(&self) -> Vec<String> {
        Vec::new()
    }
    /// Moves this game that its library played instead of the bot.
    fn library_fallbacks(&self) -> u32 {
        0
    }
    /// True for a person (at a terminal or in the browser), whom records
    /// mark.
    fn is_person(&self) -> bool {
        false
    }
    /// Its own time per move, where it is not the event's (a person's).
    fn own_move_ms(&self) -> Option<u64> {
        None
    }
    /// Its own game clock, if it plays on one (a person's): the core then
    /// charges that clock instead of a limit per move.
    fn own_clock(&self) -> Option<GameClock> {
        None
    }
    /// Both clocks (black, white), just before it is asked for a move: a
    /// person's seat shows them; a bot's has nothing to do with them.
    fn show_clocks(&mut self, _clocks: [ClockReading; 2]) {}
    /// Every ply of the game so far, just before a TURN: an engine is
    /// told moves, not positions; a player that reads the position has
    /// nothing to do with them.
    fn game_so_far(&mut self, _plies: &[Ply]) {}
}

/// Starts a player again that exited between games (after its last BYE,
/// which is allowed): the referee and check-bot both do this, once, when
/// NEW finds the player gone.
pub fn restart(seat: &mut dyn Seat, span: tracing::Span) -> Result<(), PrepareError> {
    tracing::debug!(bot = seat.id(), "exited between games; starting it again");
    seat.stop(Duration::ZERO);
    seat.prepare(span).map(|_| ())
}

/// A player instance reached through its mailbox on the board; every
/// write first checks that the board is still ours (the instance's
/// [`WriteAccess`](crate::mailbox::WriteAccess)), and losing it is the
/// referee's failure, not the player's.
pub struct MailboxSeat<'a> {
    inst: &'a mut Instance,
}

impl<'a> MailboxSeat<'a> {
    pub fn new(inst: &'a mut Instance) -> MailboxSeat<'a> {
        MailboxSeat { inst }
    }

    pub fn instance(&self) -> &Instance {
        self.inst
    }

    fn check_lock(&self) -> Result<(), GameError> {
        self.inst.access().check().map_err(GameError::LockLost)
    }

    /// The mailbox's failure to answer as the core's kind, after what the
    /// sandbox knows (a start that failed, a limit broken) which explains
    /// it better.
    fn seat_error(&self, err: AnswerError) -> SeatError {
        if let Some(why) = self.inst.start_error() {
            return SeatError::StartFailed(format!("player `{}`: {why}", self.inst.spec().name));
        }
        if let AnswerError::OverLimit { limit, detail } = err {
            return SeatError::OverLimit { limit, detail };
        }
        if let Some((limit, why)) = self.inst.limit_breach() {
            return SeatError::OverLimit { limit, detail: why };
        }
        if let AnswerError::Garbage(why) = &err {
            if self.inst.spec().protocol.is_engine() {
                // An engine's line on its stdout, not a file: said as it is.
                return SeatError::Garbage(why.clone());
            }
        }
        if self.inst.is_waiting() {
            if let Some(detail) = self.hand_started_silence(&err) {
                return SeatError::Timeout {
                    partial: false,
                    detail,
                };
            }
        }
        seat_error_of(err)
    }

    /// Why a bot started by hand said nothing in time, for its forfeit:
    /// most often its process is simply gone, which the referee cannot see
    /// on another machine. `None` for an answer that was there but
    /// incomplete, or another failure.
    fn hand_started_silence(&self, err: &AnswerError) -> Option<String> {
        let AnswerError::Timeout { pending } = err else {
            return None;
        };
        let seen = match pending {
            Pending::Nothing => String::new(),
            Pending::Stale(seq) => {
                format!(" (its out.txt still answers an earlier message, seq {seq})")
            }
            Pending::Unreadable(e) => format!(" (its out.txt could not be read: {e})"),
            Pending::Partial(_) | Pending::PipePartial(_) => return None,
        };
        let mailbox = self.inst.mailbox_as_seen();
        Some(format!(
            "{}, a bot started by hand, did not answer in time{seen}. It may have stopped \
             (ended, crashed, or its machine lost the share). Restart it by hand (stop it first \
             if it still runs) and it joins the next game: {}",
            self.inst.spec().name,
            self.inst.spec().start_by_hand(&mailbox)
        ))
    }
}

/// The core's kind of a mailbox failure to answer.
pub fn seat_error_of(err: AnswerError) -> SeatError {
    let detail = err.to_string();
    match err {
        AnswerError::Timeout {
            pending: Pending::Partial(_) | Pending::PipePartial(_),
        } => SeatError::Timeout {
            partial: true,
            detail,
        },
        AnswerError::Timeout { .. } => SeatError::Timeout {
            partial: false,
            detail,
        },
        AnswerError::Garbage(_)
        | AnswerError::BadFrame(_)
        | AnswerError::Symlink(_)
        | AnswerError::Pipe(_)
        | AnswerError::Io { .. }
        | AnswerError::NotThisBoard(_)
        | AnswerError::LockLost(_) => SeatError::Garbage(detail),
        AnswerError::OverLimit { limit, detail } => SeatError::OverLimit { limit, detail },
        AnswerError::WrongSender { .. } => SeatError::WrongSender(detail),
        AnswerError::Aborted(_) => SeatError::Exited(detail),
    }
}

impl Seat for MailboxSeat<'_> {
    fn name(&self) -> &str {
        &self.inst.spec().name
    }

    fn id(&self) -> &str {
        self.inst.id()
    }

    fn prepare(&mut self, span: tracing::Span) -> Result<bool, PrepareError> {
        self.inst.prepare(span).map_err(|e| match e {
            StartError::MachineExhausted(why) => GameError::MachineExhausted(why).into(),
            StartError::Mailbox {
                error: ClearError::LockLost(lost),
                ..
            } => GameError::LockLost(lost).into(),
            // Its mailbox could not be emptied while the board is still
            // ours: what is in it is the player's (its last process could
            // write there, a folder in the place of out.txt), so the
            // player forfeits rather than let one bot stop every game.
            e => PrepareError::StartFailed(e.to_string()),
        })
    }

    fn game_so_far(&mut self, plies: &[Ply]) {
        self.inst.game_so_far(plies);
    }

    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        self.check_lock()?;
        match self.inst.send(request) {
            Ok(_) => Ok(()),
            Err(AnswerError::LockLost(lost)) => Err(GameError::LockLost(lost).into()),
            Err(AnswerError::Io { doing, source }) => {
                // Refused because the board was lost meanwhile, or the drive failed.
                self.check_lock()?;
                Err(GameError::BoardUnwritable(format!("{doing}: {source}")).into())
            }
            Err(AnswerError::NotThisBoard(e)) => {
                Err(GameError::BoardUnwritable(e.to_string()).into())
            }
            Err(e) => Err(SendError::Refused(e.to_string())),
        }
    }

    fn await_reply(&mut self, deadline: Instant) -> Result<String, SeatError> {
        let reply = self.inst.wait(deadline).map_err(|e| self.seat_error(e))?;
        // Only a seat taken by hand (`tournament seat`) may resign; from
        // a bot the referee started, the word stays an unparseable move.
        if self.inst.is_waiting() && reply.trim() == RESIGN {
            return Err(SeatError::Resigned(format!(
                "{} resigned at their seat",
                self.inst.spec().name
            )));
        }
        Ok(reply)
    }

    fn by_hand(&self) -> Option<ByHand> {
        self.inst.is_waiting().then(|| {
            let mailbox = self.inst.mailbox_as_seen();
            let start = self.inst.spec().start_by_hand(&mailbox);
            ByHand { mailbox, start }
        })
    }

    fn is_reachable(&self) -> bool {
        self.inst.is_running() || self.inst.is_waiting()
    }

    fn stop(&mut self, grace: Duration) -> Option<String> {
        self.inst.stop(grace).map(|e| e.to_string())
    }

    fn per_game(&self) -> bool {
        self.inst.spec().restart == crate::player::Restart::PerGame
    }

    fn exit_info(&self) -> Option<String> {
        self.inst.exit_info().map(|e| e.to_string())
    }

    fn stderr_tail(&self) -> Vec<String> {
        self.inst.stderr_tail()
    }

    fn library_fallbacks(&self) -> u32 {
        self.inst.library_fallbacks()
    }
}

/// How a [`ScriptedSeat`] answers a request.
pub type Script = dyn FnMut(&Request) -> Result<String, SeatError> + Send;

/// A player in memory, for tests of the referee without a process: it
/// answers each request with what its script says, at once.
pub struct ScriptedSeat {
    name: String,
    script: Box<Script>,
    pending: Option<Result<String, SeatError>>,
    /// Every request it was sent, in order.
    pub received: Vec<Request>,
    /// How many times it was started.
    pub starts: u32,
    /// Fails `prepare` with this, if set.
    pub start_failure: Option<String>,
    running: bool,
}

impl ScriptedSeat {
    /// A player named `name` that answers with `script`.
    pub fn new(
        name: &str,
        script: impl FnMut(&Request) -> Result<String, SeatError> + Send + 'static,
    ) -> ScriptedSeat {
        ScriptedSeat {
            name: name.to_string(),
            script: Box::new(script),
            pending: None,
            received: vec![],
            starts: 0,
            start_failure: None,
            running: false,
        }
    }

    /// A well-behaved player: READY, the first legal move (or pass), OK, BYE.
    pub fn first_legal(name: &str) -> ScriptedSeat {
        ScriptedSeat::new(name, |request| {
            Ok(match request {
                Request::New { .. } => "READY".into(),
                Request::Turn { pos, .. } => pos
                    .legal_squares()
                    .first()
                    .map_or("pass".to_string(), |sq| crate::game::square_name(*sq)),
                Request::End { .. } => "BYE".into(),
                Request::Illegal { .. } | Request::Other(_) => "OK".into(),
            })
        })
    }
}

impl Seat for ScriptedSeat {
    fn name(&self) -> &str {
        &self.name
    }

    fn id(&self) -> &str {
        &self.name
    }

    fn prepare(&mut self, _span: tracing::Span) -> Result<bool, PrepareError> {
        if let Some(why) = &self.start_failure {
            return Err(PrepareError::StartFailed(why.clone()));
        }
        if self.running {
            return Ok(false);
        }
        self.running = true;
        self.starts += 1;
        Ok(true)
    }

    fn send(&mut self, request: &Request) -> Result<(), SendError> {
        self.received.push(request.clone());
        self.pending = Some((self.script)(request));
        Ok(())
    }

    fn await_reply(&mut self, _deadline: Instant) -> Result<String, SeatError> {
        self.pending.take().unwrap_or(Err(SeatError::Timeout {
            partial: false,
            detail: "no answer in time".into(),
        }))
    }

    fn is_reachable(&self) -> bool {
        self.running
    }

    fn stop(&mut self, _grace: Duration) -> Option<String> {
        let was = std::mem::replace(&mut self.running, false);
        was.then(|| "stopped".to_string())
    }
}
