//! Runs scheduled games on a pool of worker threads fed through a
//! crossbeam channel, each game with its own player instances.
//!
//! Owns: which game starts next (a bot started by hand, or the person at
//! the terminal, plays one game at a time), the instances of each player
//! (created as concurrency needs them, numbered by `schedule::venue`, and
//! reused from game to game), and ending every instance when the run is
//! over. Writes no results: finished records go
//! to the caller.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::error::HarnessError;
use crate::event::EventSink;
use crate::mailbox::{BoardLock, MailboxError};
use crate::player::{Instance, PlayerSpec, GRACE};
use crate::record::GameRecord;
use crate::referee::{play_seats, GameError, GameSpec, MailboxSeat, Seat};

use super::venue::Numbering;
use super::ScheduledGame;

/// Everything a run needs besides the games.
pub struct PoolSetup<'a> {
    /// The board's lock: every instance is made under it.
    pub lock: &'a BoardLock,
    pub concurrency: u32,
    pub players: &'a HashMap<String, Arc<PlayerSpec>>,
    /// The game to play for a scheduled game (size, clock, rules).
    pub game_spec: &'a (dyn Fn(&ScheduledGame) -> GameSpec + Sync),
    pub sink: &'a dyn EventSink,
    /// Set (by Ctrl-C) to start no further game.
    pub stop: &'a AtomicBool,
    /// Set when the run has its answer (an SPRT crossed a bound): start
    /// no further game either.
    pub decided: Option<&'a AtomicBool>,
    /// The person (`human = true`), at this terminal or in the browser,
    /// who sits in their games instead of their instance (which is never
    /// started).
    pub person: Option<&'a std::sync::Mutex<dyn Seat + Send>>,
}

struct Job {
    game: ScheduledGame,
    black: Instance,
    white: Instance,
}

struct Done {
    game: ScheduledGame,
    black: Instance,
    white: Instance,
    result: Result<GameRecord, HarnessError>,
}

/// Free instances per player, and the numbers of the ones to make.
struct Instances {
    free: HashMap<String, Vec<Instance>>,
    numbering: Numbering,
}

impl Instances {
    fn take(&mut self, spec: &Arc<PlayerSpec>, lock: &BoardLock) -> Result<Instance, HarnessError> {
        let board = lock.board();
        if let Some(i) = self.free.get_mut(&spec.name).and_then(Vec::pop) {
            return Ok(i);
        }
        // A spawned instance whose mailbox name someone took (a symlink,
        // a file) moves on to the next number; that name is left alone.
        // A waiting player has only its one mailbox.
        for _ in 0..16 {
            let k = self.numbering.next(board, &spec.name);
            match Instance::on(Arc::clone(spec), lock.access(), k) {
                Err(MailboxError::Symlink(p)) if !spec.is_waiting() => {
                    tracing::warn!(
                        "{} is a symlink: left alone, the next mailbox used",
                        p.display()
                    )
                }
                other => return other.map_err(HarnessError::from),
            }
        }
        Err(HarnessError::BoardUnwritable(format!(
            "no usable mailbox for `{}` in {}: each was a symlink",
            spec.name,
            board.join(crate::mailbox::PLAYERS_DIR).display()
        )))
    }

    fn give_back(&mut self, inst: Instance) {
        self.free
            .entry(inst.spec().name.clone())
            .or_default()
            .push(inst);
    }

    /// Ends every instance at once: TERM, a grace period, KILL.
    fn stop_all(&mut self) {
        let all: Vec<Instance> = self.free.drain().flat_map(|(_, v)| v).collect();
        std::thread::scope(|s| {
            for inst in all {
                // Side by side (each may take its grace); one after the
                // other where the machine refuses a thread.
                let slot = Arc::new(std::sync::Mutex::new(Some(inst)));
                let theirs = Arc::clone(&slot);
                let spawned =
                    std::thread::Builder::new().spawn_scoped(s, move || stop_now(&theirs));
                if spawned.is_err() {
                    stop_now(&slot);
                }
            }
        });
    }
}

/// Stops and drops the instance in `slot` (left empty).
fn stop_now(slot: &std::sync::Mutex<Option<Instance>>) {
    let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut inst) = taken {
        inst.stop(GRACE);
    }
}

fn worker(jobs: Receiver<Job>, done: Sender<Done>, setup: &PoolSetup<'_>) {
    for mut job in jobs {
        let spec = (setup.game_spec)(&job.game);
        let result =
            play_job(&spec, &mut job.black, &mut job.white, setup).map_err(HarnessError::from);
        let _ = done.send(Done {
            game: job.game,
            black: job.black,
            white: job.white,
            result,
        });
    }
}

/// Plays one game: through both instances' mailboxes, or with the person
/// at this terminal in their place.
fn play_job(
    spec: &GameSpec,
    black: &mut Instance,
    white: &mut Instance,
    setup: &PoolSetup<'_>,
) -> Result<GameRecord, GameError> {
    let is_person = [black.spec().is_person(), white.spec().is_person()];
    let mut person = setup
        .person
        .filter(|_| is_person.contains(&true))
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
    let (mut b, mut w) = (MailboxSeat::new(black), MailboxSeat::new(white));
    let seats: [&mut dyn Seat; 2] = match person.as_deref_mut() {
        Some(p) if is_person[0] => [p, &mut w],
        Some(p) => [&mut b, p],
        None => [&mut b, &mut w],
    };
    play_seats(spec, seats, setup.sink)
}

/// Plays `games` (in order, as far as free players allow) and hands each
/// record to `on_record` as it finishes. Returns how many were not played
/// (because of a stop request).
pub fn run_games(
    games: Vec<ScheduledGame>,
    setup: &PoolSetup<'_>,
    on_record: &mut dyn FnMut(GameRecord) -> Result<(), HarnessError>,
) -> Result<usize, HarnessError> {
    let mut pending: VecDeque<ScheduledGame> = games.into();
    let mut instances = Instances {
        free: HashMap::new(),
        numbering: Numbering::on(setup.lock),
    };
    if instances.numbering.above_existing() {
        tracing::info!(
            "the board's previous referee may still be running: its bots' mailboxes are left \
             alone and new ones are used"
        );
    }
    let (job_tx, job_rx) = unbounded::<Job>();
    let (done_tx, done_rx) = unbounded::<Done>();
    let workers = setup.concurrency.max(1) as usize;
    let waiting: HashSet<&str> = setup
        .players
        .values()
        .filter(|p| p.is_waiting() || p.is_person())
        .map(|p| p.name.as_str())
        .collect();
    std::thread::scope(|scope| {
        let mut started = 0usize;
        for n in 0..workers {
            let (rx, tx) = (job_rx.clone(), done_tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("game-worker-{n}"))
                .spawn_scoped(scope, move || worker(rx, tx, setup));
            match spawned {
                Ok(_) => started += 1,
                Err(e) => {
                    tracing::warn!(
                        "the machine refused a thread for game {} of {workers} at once ({e}): {started} at once",
                        n + 1
                    );
                    break;
                }
            }
        }
        drop(done_tx);
        if started == 0 {
            return Err(HarnessError::MachineExhausted(
                "the machine refused the referee a thread to play games in".into(),
            ));
        }
        let workers = started;
        let mut busy: HashSet<String> = HashSet::new();
        let mut running = 0usize;
        let mut failure: Option<HarnessError> = None;
        loop {
            // Start what can start.
            while failure.is_none()
                && running < workers
                && !setup.stop.load(Ordering::SeqCst)
                && !setup.decided.is_some_and(|d| d.load(Ordering::SeqCst))
            {
                let next = pending.iter().position(|g| {
                    ![&g.black, &g.white]
                        .iter()
                        .any(|n| waiting.contains(n.as_str()) && busy.contains(n.as_str()))
                });
                let Some(idx) = next else { break };
                let game = pending.remove(idx).expect("index found");
                let spec_of = |name: &str| {
                    setup.players.get(name).cloned().ok_or_else(|| {
                        HarnessError::Config(format!(
                            "game {} names unknown player `{name}`",
                            game.id
                        ))
                    })
                };
                let taken = spec_of(&game.black).and_then(|b| {
                    let w = spec_of(&game.white)?;
                    let bi = instances.take(&b, setup.lock)?;
                    match instances.take(&w, setup.lock) {
                        Ok(wi) => Ok((bi, wi)),
                        Err(e) => {
                            instances.give_back(bi);
                            Err(e)
                        }
                    }
                });
                match taken {
                    Ok((black, white)) => {
                        for n in [&game.black, &game.white] {
                            if waiting.contains(n.as_str()) {
                                busy.insert(n.clone());
                            }
                        }
                        running += 1;
                        job_tx
                            .send(Job { game, black, white })
                            .expect("workers alive");
                    }
                    Err(e) => failure = Some(e),
                }
            }
            if running == 0 {
                break;
            }
            let done = done_rx.recv().expect("a worker answers");
            running -= 1;
            busy.remove(&done.game.black);
            busy.remove(&done.game.white);
            instances.give_back(done.black);
            instances.give_back(done.white);
            match done.result {
                Ok(record) => {
                    if let Err(e) = on_record(record) {
                        failure.get_or_insert(e);
                    }
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        // Bots end before their workers: a bot's parent-death signal is
        // tied to the thread that started it.
        instances.stop_all();
        drop(job_tx);
        match failure {
            Some(e) => Err(e),
            None => Ok(pending.len()),
        }
    })
}
