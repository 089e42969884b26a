//! One game between two players: NEW → READY, TURN / answer until neither
//! side can move, END → BYE.
//!
//! Owns: driving a game — sending what the pure [`core::GameCore`] asks
//! for through two [`Seat`]s, timing the replies and feeding them back,
//! waiting for players started by hand, restarting a player that exited
//! between games, END → BYE and retiring players — and turning what
//! happened into events and the game's record. The rules of adjudication
//! live in `core`; how a player is reached lives in `seat`. Emits events
//! and never prints; the only `Err` it returns is the harness's own
//! failure (the board lost or unwritable), never a bot's.

pub mod browser;
pub mod core;
pub mod person;
pub mod seat;

use std::time::{Duration, Instant, SystemTime};

use crate::engine::Ply;
use crate::event::{Event, EventSink};
use crate::game::{board_string, transcript, Color, Move};
use crate::player::{Instance, GRACE};
use crate::protocol::{Reply, Request};
use crate::record::{DiscCount, EndReason, Forfeit, GameRecord};

pub use self::core::{
    failure_reason, ClockReading, GameCore, Happened, Lost, Next, Outcome, SeatError,
};
pub use crate::time_control::{GameClock, SideTime, TimeControl};
pub use browser::{BrowserSeat, Desk};
pub use person::PersonSeat;
pub use seat::{GameError, MailboxSeat, PrepareError, ScriptedSeat, Seat, SendError};

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
/// How long a bot started by hand may take to answer NEW before the
/// referee says whom it waits for (a running bot answers in milliseconds).
const LATE_AFTER: Duration = Duration::from_secs(2);

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Plays one game between two player instances reached through their
/// mailboxes. Every write to the board goes through the instances' access
/// ([`Instance::on`]), checked before each write; losing the board ends
/// the game with `Err(LockLost)`. The instances carry their proof: made
/// under a tournament's lock ([`Instance::on`]) or on a board of the
/// caller's own ([`Instance::new`]: check-bot, the bench, tests).
pub fn play_game(
    spec: &GameSpec,
    black: &mut Instance,
    white: &mut Instance,
    sink: &dyn EventSink,
) -> Result<GameRecord, GameError> {
    let mut black = MailboxSeat::new(black);
    let mut white = MailboxSeat::new(white);
    play_seats(spec, [&mut black, &mut white], sink)
}

/// Plays one game between two seats (black first).
pub fn play_seats(
    spec: &GameSpec,
    seats: [&mut dyn Seat; 2],
    sink: &dyn EventSink,
) -> Result<GameRecord, GameError> {
    play_seats_timed(spec, seats, sink).map(|(record, _)| record)
}

/// [`play_seats`], with the time control each side played under (black,
/// white): the event's per move, or a seat's own (a person's game clock),
/// for the GGF file's `TI`.
pub fn play_seats_timed(
    spec: &GameSpec,
    mut seats: [&mut dyn Seat; 2],
    sink: &dyn EventSink,
) -> Result<(GameRecord, [SideTime; 2]), GameError> {
    let names = [seats[0].name().to_string(), seats[1].name().to_string()];
    let span = tracing::info_span!("game", id = %spec.id, black = %names[0], white = %names[1]);
    let _entered = span.enter();
    let started = now_rfc3339();
    let mut core = GameCore::new(spec.size, &spec.opening, spec.time, spec.rules).map_err(|e| {
        GameError::BadGame(format!("game {}: opening `{}`: {e}", spec.id, spec.opening))
    })?;
    for (color, seat) in [Color::Black, Color::White].into_iter().zip(&seats) {
        if let Some(ms) = seat.own_move_ms() {
            core.set_move_ms(color, ms);
        }
        if let Some(clock) = seat.own_clock() {
            core.set_clock(color, clock);
        }
    }
    sink.emit(&Event::GameStarted {
        id: &spec.id,
        round: spec.round,
        black: &names[0],
        white: &names[1],
        size: spec.size,
        opening: &spec.opening,
    });
    let mut driver = Driver {
        spec,
        sink,
        core: &mut core,
    };
    driver.greet(&mut seats, &names, &span)?;
    driver.play(&mut seats)?;
    let record = driver.finish(&mut seats, &names, started)?;
    sink.emit(&Event::GameOver { record: &record });
    Ok((record, core.time_controls()))
}

fn color_of(i: usize) -> Color {
    if i == 0 {
        Color::Black
    } else {
        Color::White
    }
}

/// Sends through a seat: the harness's failure is returned, the player's
/// ends the game by a forfeit (and `Ok(false)`).
fn deliver(
    core: &mut GameCore,
    seat: &mut dyn Seat,
    color: Color,
    request: &crate::protocol::Request,
) -> Result<bool, GameError> {
    match seat.send(request) {
        Ok(()) => Ok(true),
        Err(SendError::Referee(e)) => Err(e),
        Err(SendError::Refused(why)) => {
            core.undeliverable(color, &why);
            Ok(false)
        }
    }
}

struct Driver<'a> {
    spec: &'a GameSpec,
    sink: &'a dyn EventSink,
    core: &'a mut GameCore,
}

impl Driver<'_> {
    fn report(&self, happened: &[Happened]) {
        let id = &self.spec.id;
        for h in happened {
            match h {
                Happened::Moved {
                    ply,
                    color,
                    square,
                    ms,
                    after,
                } => {
                    let d = after.discs();
                    self.sink.emit(&Event::Move {
                        id,
                        ply: *ply,
                        color: *color,
                        square: *square,
                        ms: *ms,
                        black: d.black,
                        white: d.white,
                        board: &board_string(after),
                    });
                }
                Happened::Passed {
                    ply,
                    color,
                    auto,
                    after,
                } => self.sink.emit(&Event::Pass {
                    id,
                    ply: *ply,
                    color: *color,
                    auto: *auto,
                    board: &board_string(after),
                }),
                Happened::Retried {
                    color,
                    answer,
                    reason,
                    retries_left,
                } => self.sink.emit(&Event::Illegal {
                    id,
                    color: *color,
                    answer,
                    reason: *reason,
                    retries_left: *retries_left,
                }),
                // Reported with the game's end (`finish`).
                Happened::Forfeited(_) => {}
            }
        }
    }

    /// Starts (or reuses) both players, then sends both NEWs before
    /// waiting, so two slow interpreters start side by side.
    fn greet(
        &mut self,
        seats: &mut [&mut dyn Seat; 2],
        names: &[String; 2],
        span: &tracing::Span,
    ) -> Result<(), GameError> {
        let mut fresh = [false; 2];
        for (i, seat) in seats.iter_mut().enumerate() {
            match seat.prepare(span.clone()) {
                Ok(started) => fresh[i] = started,
                Err(e) => {
                    self.core.on_ready(color_of(i), Err(&e.into_seat_error()?));
                    return Ok(());
                }
            }
        }
        let new =
            |core: &GameCore, i: usize| core.new_request(&self.spec.id, color_of(i), &names[1 - i]);
        let mut sent_at = [Instant::now(); 2];
        for (i, seat) in seats.iter_mut().enumerate() {
            sent_at[i] = Instant::now();
            let request = new(self.core, i);
            if !deliver(self.core, &mut **seat, color_of(i), &request)? {
                return Ok(());
            }
        }
        for (i, seat) in seats.iter_mut().enumerate() {
            let mut answer = self.await_ready(&mut **seat, sent_at[i]);
            // A reused bot may have exited after its last BYE (allowed): it
            // is started again and asked again, once.
            if matches!(answer, Err(SeatError::Exited(_))) && !fresh[i] {
                if let Err(e) = seat::restart(&mut **seat, span.clone()) {
                    self.core.on_ready(color_of(i), Err(&e.into_seat_error()?));
                    return Ok(());
                }
                let again = Instant::now();
                let request = new(self.core, i);
                if !deliver(self.core, &mut **seat, color_of(i), &request)? {
                    return Ok(());
                }
                answer = self.await_ready(&mut **seat, again);
            }
            let happened = self.core.on_ready(color_of(i), answer.as_deref());
            if !happened.is_empty() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Waits for READY: `startup-ms`, or as long as `wait-ms` allows for a
    /// player started by hand, saying whom it waits for, where and how to
    /// start it once it is late (after 2 s), then every 10 s.
    fn await_ready(&self, seat: &mut dyn Seat, sent_at: Instant) -> Result<String, SeatError> {
        let Some(by_hand) = seat.by_hand() else {
            return seat.await_reply(sent_at + Duration::from_millis(self.core.startup_ms()));
        };
        let give_up = self
            .spec
            .time
            .wait_ms
            .map(|ms| sent_at + Duration::from_millis(ms));
        // Said only once the bot is late: a running one answers at once.
        let mut next_note = sent_at + LATE_AFTER;
        loop {
            let until = give_up.map_or(next_note, |g| next_note.min(g));
            match seat.await_reply(until) {
                Err(SeatError::Timeout { .. }) if give_up.is_none_or(|g| Instant::now() < g) => {
                    self.sink.emit(&Event::Waiting {
                        id: &self.spec.id,
                        player: seat.name(),
                        mailbox: &by_hand.mailbox,
                        start: &by_hand.start,
                        waited_secs: sent_at.elapsed().as_secs(),
                    });
                    next_note = Instant::now() + WAIT_LOG_EVERY;
                }
                other => return other,
            }
        }
    }

    /// TURN / answer (and ILLEGAL / OK) until the core says the game is over.
    fn play(&mut self, seats: &mut [&mut dyn Seat; 2]) -> Result<(), GameError> {
        if self.core.is_over() {
            return Ok(());
        }
        loop {
            let mut happened = vec![];
            let next = self.core.next(&mut happened);
            self.report(&happened);
            let Next::Ask {
                color,
                request,
                limit_ms,
            } = next
            else {
                return Ok(());
            };
            let seat = &mut *seats[color.index()];
            seat.show_clocks(self.core.clocks());
            if let Request::Turn { .. } = request {
                let plies: Vec<Ply> = self
                    .core
                    .moves()
                    .iter()
                    .map(|m| Ply {
                        color: m.color,
                        mv: m.mv,
                    })
                    .collect();
                seat.game_so_far(&plies);
            }
            let t0 = Instant::now();
            if !deliver(self.core, seat, color, &request)? {
                return Ok(());
            }
            let answer = seat.await_reply(t0 + Duration::from_millis(limit_ms));
            let ms = t0.elapsed().as_millis() as u64;
            let happened = self.core.on_reply(answer.as_deref(), ms);
            self.report(&happened);
        }
    }

    /// Scores the game, says END (and waits for BYE from players in good
    /// standing), and retires players that forfeited.
    fn finish(
        &mut self,
        seats: &mut [&mut dyn Seat; 2],
        names: &[String; 2],
        started: String,
    ) -> Result<GameRecord, GameError> {
        let spec = self.spec;
        let outcome = self.core.outcome();
        let forfeit = outcome.forfeit.as_ref().map(|l| {
            let seat = &seats[l.color.index()];
            let stderr_tail = seat.stderr_tail();
            self.sink.emit(&Event::Forfeit {
                id: &spec.id,
                color: l.color,
                reason: l.reason,
                detail: &l.detail,
                stderr_tail: &stderr_tail,
            });
            Forfeit {
                color: l.color,
                detail: l.detail.clone(),
                exit: seat.exit_info(),
                stderr_tail,
            }
        });
        // A person who resigned is still there: told END like the winner.
        let forfeiter = outcome
            .forfeit
            .as_ref()
            .filter(|l| l.reason != EndReason::Resigned)
            .map(|l| l.color);
        let end = self.core.end_request();
        let mut sent = [false; 2];
        for (i, seat) in seats.iter_mut().enumerate() {
            // A player that forfeited is ended below; one that never started
            // has nobody to tell.
            if forfeiter != Some(color_of(i)) && seat.is_reachable() {
                sent[i] = match seat.send(&end) {
                    Ok(()) => true,
                    Err(SendError::Referee(e)) => return Err(e),
                    Err(SendError::Refused(_)) => false,
                };
            }
        }
        let bye_deadline = Instant::now() + Duration::from_millis(self.core.bye_ms());
        for (i, seat) in seats.iter_mut().enumerate() {
            if forfeiter == Some(color_of(i)) {
                if let Some(exit) = seat.stop(Duration::ZERO) {
                    tracing::debug!(bot = seat.id(), "stopped after its forfeit ({exit})");
                }
                continue;
            }
            if !sent[i] {
                continue;
            }
            match seat.await_reply(bye_deadline) {
                Ok(t) if Reply::decode(&t, spec.size) == Ok(Reply::Bye) => {}
                Ok(t) => {
                    tracing::warn!(
                        bot = seat.id(),
                        "answered {t:?} to END (expected BYE); it will be restarted"
                    );
                    seat.stop(GRACE);
                }
                Err(e) => {
                    if !matches!(e, SeatError::Exited(_)) {
                        tracing::warn!(
                            bot = seat.id(),
                            "no BYE after END: {e}; it will be restarted"
                        );
                    }
                    seat.stop(GRACE);
                }
            }
            if seat.per_game() {
                seat.stop(GRACE);
            }
        }
        for (i, seat) in seats.iter().enumerate() {
            let n = seat.library_fallbacks();
            if n > 0 {
                tracing::warn!(
                    "{} ({}): {n} move{} this game played by its library, not chosen by the bot \
                     (lines `{}` in the game log)",
                    seat.id(),
                    color_of(i),
                    if n == 1 { "" } else { "s" },
                    crate::player::LIBRARY_FALLBACK
                );
            }
        }
        let moves: Vec<Move> = self.core.moves().iter().map(|m| m.mv).collect();
        let used = self.core.time_used();
        Ok(GameRecord {
            id: spec.id.clone(),
            round: spec.round,
            black: names[0].clone(),
            white: names[1].clone(),
            size: spec.size,
            opening: spec.opening.clone(),
            transcript: transcript(&moves),
            moves: self.core.moves().to_vec(),
            result: outcome.result,
            reason: outcome.reason,
            forfeit,
            discs: outcome.discs,
            discs_wof: outcome.discs_wof,
            started,
            finished: now_rfc3339(),
            time_ms: DiscCount {
                black: used[0] as u32,
                white: used[1] as u32,
            },
            swiss_round: None,
            people: seats
                .iter()
                .filter(|s| s.is_person())
                .map(|s| s.name().to_string())
                .collect(),
        })
    }
}

/// The record of a real game of `size` between two in-memory seats that
/// play their first legal move, `black` and `white`; the one of colour
/// `forfeits`, if any, is gone at NEW (an `exited` forfeit, all squares to
/// the other). For tests of readers that need records that are games.
#[cfg(test)]
pub(crate) fn scripted_record(
    id: &str,
    size: u8,
    [black, white]: [&str; 2],
    forfeits: Option<Color>,
) -> GameRecord {
    let spec = test_spec(id, size, "", Rules::default());
    let seat = |name: &str, color: Color| {
        if forfeits == Some(color) {
            ScriptedSeat::new(name, |_| Err(SeatError::Exited("ended".into())))
        } else {
            ScriptedSeat::first_legal(name)
        }
    };
    let (mut b, mut w) = (seat(black, Color::Black), seat(white, Color::White));
    play_seats(&spec, [&mut b, &mut w], &crate::event::Silent).expect("scripted seats play")
}

/// A game for tests with in-memory seats: round 1, 100 ms a move and to
/// start.
#[cfg(test)]
pub(crate) fn test_spec(id: &str, size: u8, opening: &str, rules: Rules) -> GameSpec {
    GameSpec {
        id: id.into(),
        round: 1,
        size,
        opening: opening.into(),
        time: TimeControl {
            move_ms: 100,
            startup_ms: 100,
            bank_ms: None,
            wait_ms: None,
        },
        rules,
    }
}

#[cfg(test)]
mod tests {
    //! The driver with in-memory seats: no process, no folder.

    use std::sync::Mutex;

    use super::*;
    use crate::event::Silent;
    use crate::protocol::Request;
    use crate::record::{EndReason, Winner};

    #[derive(Default)]
    struct Kept(Mutex<Vec<String>>);

    impl EventSink for Kept {
        fn emit(&self, event: &Event<'_>) {
            self.0.lock().unwrap().push(format!("{event:?}"));
        }
    }

    fn spec(size: u8, rules: Rules) -> GameSpec {
        test_spec("t1", size, "", rules)
    }

    #[test]
    fn two_scripted_seats_play_a_whole_game() {
        let (mut b, mut w) = (
            ScriptedSeat::first_legal("b"),
            ScriptedSeat::first_legal("w"),
        );
        let kept = Kept::default();
        let r = play_seats(&spec(4, Rules::default()), [&mut b, &mut w], &kept).unwrap();
        assert_eq!(r.reason, EndReason::Normal);
        assert_eq!((r.black.as_str(), r.white.as_str()), ("b", "w"));
        assert_eq!(r.discs_wof.black + r.discs_wof.white, 16);
        for (seat, color, opponent) in [(&b, Color::Black, "w"), (&w, Color::White, "b")] {
            assert_eq!(
                seat.received.first(),
                Some(&Request::New {
                    game: "t1".into(),
                    color,
                    opponent: opponent.into(),
                    size: 4,
                    move_ms: 100,
                })
            );
            assert!(matches!(seat.received.last(), Some(Request::End { .. })));
        }
        let played = r.moves.iter().filter(|m| !m.auto).count();
        let turns = b.received.len() + w.received.len() - 4;
        assert_eq!(turns, played, "one TURN per move a seat made");
        let events = kept.0.lock().unwrap();
        assert!(events.first().unwrap().starts_with("GameStarted"));
        assert!(events.last().unwrap().starts_with("GameOver"));
    }

    #[test]
    fn a_seat_gone_after_its_last_bye_is_started_again_once() {
        let mut first = true;
        let mut b = ScriptedSeat::new("b", move |req| match req {
            Request::New { .. } if std::mem::take(&mut first) => Err(SeatError::Exited(
                "the bot's process ended (exit status 0)".into(),
            )),
            Request::New { .. } => Ok("READY".into()),
            Request::Turn { pos, .. } => Ok(pos
                .legal_squares()
                .first()
                .map_or("pass".into(), |s| crate::game::square_name(*s))),
            _ => Ok("BYE".into()),
        });
        // Running from an earlier game: not fresh.
        b.prepare(tracing::Span::none()).unwrap();
        let mut w = ScriptedSeat::first_legal("w");
        let r = play_seats(&spec(4, Rules::default()), [&mut b, &mut w], &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal, "{:?}", r.forfeit);
        assert_eq!(b.starts, 2);

        // A fresh one that exits at once forfeits.
        let mut b = ScriptedSeat::new("b", |_| Err(SeatError::Exited("ended".into())));
        let mut w = ScriptedSeat::first_legal("w");
        let r = play_seats(&spec(4, Rules::default()), [&mut b, &mut w], &Silent).unwrap();
        assert_eq!((r.reason, r.result), (EndReason::Exited, Winner::White));
        assert_eq!(b.starts, 1);
    }

    #[test]
    fn a_seat_that_cannot_start_forfeits_and_the_other_is_not_asked() {
        let mut b = ScriptedSeat::first_legal("b");
        b.start_failure = Some("player `b`: cannot start `nope`".into());
        let mut w = ScriptedSeat::first_legal("w");
        let r = play_seats(&spec(4, Rules::default()), [&mut b, &mut w], &Silent).unwrap();
        assert_eq!(
            (r.reason, r.result),
            (EndReason::StartFailed, Winner::White)
        );
        assert_eq!(r.forfeit.unwrap().detail, "player `b`: cannot start `nope`");
        assert!(w.received.is_empty());
    }

    #[test]
    fn a_retried_illegal_answer_is_reported_and_the_game_goes_on() {
        let mut tried = false;
        let mut b = ScriptedSeat::new("b", move |req| match req {
            Request::Turn { .. } if !std::mem::replace(&mut tried, true) => Ok("a1".into()),
            Request::Turn { pos, .. } => Ok(pos
                .legal_squares()
                .first()
                .map_or("pass".into(), |s| crate::game::square_name(*s))),
            Request::New { .. } => Ok("READY".into()),
            Request::End { .. } => Ok("BYE".into()),
            _ => Ok("OK".into()),
        });
        let mut w = ScriptedSeat::first_legal("w");
        let kept = Kept::default();
        let rules = Rules {
            max_retries: 1,
            ask_pass: false,
        };
        let r = play_seats(&spec(4, rules), [&mut b, &mut w], &kept).unwrap();
        assert_eq!(r.reason, EndReason::Normal);
        assert_eq!(
            b.received[2],
            Request::Illegal {
                reason: "no-flips".into()
            }
        );
        let events = kept.0.lock().unwrap();
        assert_eq!(
            events.iter().filter(|e| e.starts_with("Illegal")).count(),
            1
        );
    }

    /// Input that never comes: a person who does not type.
    struct Silence;

    impl std::io::Read for Silence {
        fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
    }

    #[test]
    fn a_person_whose_game_clock_runs_out_loses_on_time() {
        let mut ann = PersonSeat::new(
            "ann",
            600_000,
            std::io::BufReader::new(Silence),
            Box::new(std::io::sink()),
        )
        .with_clock(GameClock {
            base_ms: 300,
            increment_ms: 1_000,
        });
        let mut w = ScriptedSeat::first_legal("w");
        let t0 = Instant::now();
        let (r, times) =
            play_seats_timed(&spec(8, Rules::default()), [&mut ann, &mut w], &Silent).unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "not its time per move"
        );
        assert_eq!((r.reason, r.result), (EndReason::Timeout, Winner::White));
        assert_eq!(
            r.forfeit.unwrap().detail,
            "waiting for a move: no move typed before the game clock ran out"
        );
        assert_eq!(
            times,
            [
                SideTime::Game(GameClock {
                    base_ms: 300,
                    increment_ms: 1_000
                }),
                SideTime::PerMove {
                    move_ms: 100,
                    bank_ms: None
                }
            ]
        );
        // Black never moved, so white was never asked for one.
        assert!(!w.received.iter().any(|q| matches!(q, Request::Turn { .. })));
    }

    /// A seat that plays a legal move chosen by `seed` (passing when it has
    /// none) and, at its `at`-th request, gives `failure` instead.
    fn seeded(
        name: &str,
        seed: u64,
        at: usize,
        failure: Option<Result<String, SeatError>>,
    ) -> ScriptedSeat {
        let mut n = 0usize;
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ScriptedSeat::new(name, move |req| {
            n += 1;
            if n == at {
                if let Some(f) = failure.clone() {
                    return f;
                }
            }
            Ok(match req {
                Request::New { .. } => "READY".into(),
                Request::Turn { pos, .. } => {
                    let moves = pos.legal_squares();
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    if moves.is_empty() {
                        "pass".into()
                    } else {
                        crate::game::square_name(moves[(state >> 33) as usize % moves.len()])
                    }
                }
                Request::End { .. } => "BYE".into(),
                Request::Illegal { .. } | Request::Other(_) => "OK".into(),
            })
        })
    }

    /// Issue 26: whatever the referee writes (normal ends, passes, every
    /// kind of forfeit, on every board, with and without `ask-pass`)
    /// stands up to the rules' replay that every reader of games.jsonl
    /// makes (`GameRecord::check`).
    #[test]
    fn every_record_the_referee_writes_passes_the_replay() {
        use crate::sandbox::Limit;
        let timeout = |partial| SeatError::Timeout {
            partial,
            detail: "no answer".into(),
        };
        let failures: Vec<Option<Result<String, SeatError>>> = vec![
            None,
            Some(Ok("a1".into())),
            Some(Ok("zz".into())),
            Some(Ok("pass".into())),
            Some(Ok("READY".into())),
            Some(Err(timeout(false))),
            Some(Err(timeout(true))),
            Some(Err(SeatError::Exited("ended".into()))),
            Some(Err(SeatError::Garbage("binary".into()))),
            Some(Err(SeatError::WrongSender("from x".into()))),
            Some(Err(SeatError::StartFailed("gone".into()))),
            Some(Err(SeatError::OverLimit {
                limit: Limit::Memory,
                detail: "memory".into(),
            })),
            Some(Err(SeatError::OverLimit {
                limit: Limit::Disk,
                detail: "disk".into(),
            })),
        ];
        let openings = [
            (4, ""),
            (6, "c2"),
            (8, ""),
            (8, "d3c3b3b2f5a3a1c1"),
            (8, "f5d6c3d3c4"),
        ];
        let mut reasons = std::collections::BTreeSet::new();
        let mut checked = 0;
        for (size, opening) in openings {
            for ask_pass in [false, true] {
                for (k, failure) in failures.iter().enumerate() {
                    for at in [1, 2, 5, 9, 30] {
                        for failing_black in [true, false] {
                            let seed = (k * 100 + at) as u64;
                            let (fb, fw) = if failing_black {
                                (failure.clone(), None)
                            } else {
                                (None, failure.clone())
                            };
                            let mut b = seeded("b", seed, at, fb);
                            let mut w = seeded("w", seed + 7, at, fw);
                            if at == 1 && k == 10 {
                                b.start_failure = Some("player `b`: cannot start".into());
                            }
                            let rules = Rules {
                                max_retries: (at % 2) as u32,
                                ask_pass,
                            };
                            let mut spec = spec(size, rules);
                            spec.opening = opening.into();
                            let r = play_seats(&spec, [&mut b, &mut w], &Silent).unwrap();
                            assert_eq!(r.check(), Ok(()), "{r:?}");
                            reasons.insert(r.reason);
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000);
        assert!(reasons.len() >= 13, "{reasons:?}");
    }
}
