//! `tournament play`: one game between two players, shown live; either
//! may be a person at this terminal (`human`, `human:NAME`). With a
//! tournament file it uses that file's board and results folders, with
//! `--board` and no file that board and `./results`; with neither it plays
//! on a board folder of its own in the system's temporary folder, removed
//! afterwards, and keeps no results.
//!
//! Takes the board, numbers the instances and writes the game's GGF file
//! as `run` does (`schedule::venue`); must not keep another copy of those.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cli::PlayArgs;
use crate::error::{exit, HarnessError};
use crate::event::{EventSink, Fanout};
use crate::mailbox::{BoardLock, DEFAULT_STALE};
use crate::player::{become_subreaper, Instance};
use crate::referee::person::PERSON_MOVE_MS;
use crate::referee::{
    play_seats_timed, GameClock, GameSpec, MailboxSeat, PersonSeat, Rules, Seat, TimeControl,
};
use crate::report::{ConsoleReporter, LogReporter};
use crate::schedule::venue::Numbering;

use super::players::{optional_config, resolve};

pub fn run(args: &PlayArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let cfg = config.as_ref();
    let size = args.size.or(cfg.map(|c| c.size)).unwrap_or(8);
    crate::config::check_opening(size, &args.start)
        .map_err(|e| HarnessError::Config(format!("--start `{}`: {e}", args.start)))?;
    // `human`, `human:NAME`, or a player of the tournament file that is a
    // person (`human = true`, with their own time unless flags say).
    let configured = |text: &str| {
        cfg.and_then(|c| c.player(text))
            .and_then(|p| match p.launch {
                crate::player::Launch::Person { move_ms, clock } => {
                    Some(PersonTime { move_ms, clock })
                }
                _ => None,
            })
    };
    let people = [&args.black, &args.white]
        .map(|t| person(t).or_else(|| configured(t).map(|_| t.to_string())));
    let bot_or_stand_in = |text: &str, who: &Option<String>| match who {
        // A person's place in the bot set-up below: never started.
        Some(_) => resolve("random", None, args.seed),
        None => resolve(text, cfg, args.seed),
    };
    let mut players = [
        bot_or_stand_in(&args.black, &people[0])?,
        bot_or_stand_in(&args.white, &people[1])?,
    ];
    for p in &mut players {
        if args.no_sandbox && p.sandbox.enabled {
            p.sandbox.enabled = false;
            tracing::warn!(
                "player `{}` runs without a sandbox (--no-sandbox): it can do anything your user can",
                p.name
            );
        }
    }
    crate::player::fit_process_limits(&mut players, 2);
    let [black, white] = players.map(Arc::new);
    let defaults = cfg.map(|c| c.time).unwrap_or_default();
    let time = TimeControl {
        move_ms: args.move_ms.unwrap_or(defaults.move_ms),
        startup_ms: args.startup_ms.unwrap_or(defaults.startup_ms),
        ..defaults
    };
    let rules = Rules {
        max_retries: args
            .max_retries
            .unwrap_or(cfg.map_or(0, |c| c.rules.max_retries)),
        ask_pass: args.ask_pass || cfg.is_some_and(|c| c.rules.ask_pass),
    };
    if let (None, Some(c)) = (&args.board, cfg) {
        c.check_board().map_err(HarnessError::ConfigFile)?;
    }
    // Without a board or a tournament file, nothing is left behind in the
    // current folder: the board is a folder of its own, removed after the
    // game, and there is no results folder (the game is on the console).
    let scratch = match (&args.board, cfg) {
        (None, None) => Some(ScratchBoard::make()?),
        _ => None,
    };
    let board = match (&args.board, cfg, &scratch) {
        (Some(b), _, _) => b.clone(),
        (None, Some(c), _) => c.board.clone(),
        (None, None, Some(s)) => s.board(),
        (None, None, None) => unreachable!("made above"),
    };
    // Its log and GGF file: in the tournament's results folder, or
    // ./results beside a board given by hand; none on a board of its own.
    let results = scratch
        .is_none()
        .then(|| super::players::results_dir(None, cfg));
    let stale = args
        .stale_lock_ms
        .map(Duration::from_millis)
        .or(cfg.map(|c| Duration::from_millis(c.stale_lock_ms)))
        .unwrap_or(DEFAULT_STALE);

    become_subreaper();
    crate::interrupt::stop_at_once();
    let lock = crate::schedule::venue::take_board(&board, stale, "tournament play".into())?;
    crate::mailbox::sweep_temp_files(lock.access());
    crate::logging::set_game_log_dir(results.as_ref().map(|r| r.join("logs")));

    let id = format!(
        "play-{}-{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        std::process::id()
    );
    // As a run numbers them: after taking the board over from a referee
    // that may still run, out of the mailboxes its bots may still answer in.
    let mut numbering = Numbering::on(&lock);
    let kb = numbering.next(lock.board(), &black.name);
    let kw = numbering.next(lock.board(), &white.name);
    let person_time = PersonTime {
        move_ms: args.human_ms.unwrap_or(PERSON_MOVE_MS),
        clock: args.human_clock_ms.map(|base_ms| GameClock {
            base_ms,
            increment_ms: args.human_increment_ms.unwrap_or(0),
        }),
    };
    let flags_say = args.human_ms.is_some() || args.human_clock_ms.is_some();
    let time_of = |text: &str| match configured(text) {
        Some(own) if !flags_say => own,
        _ => person_time,
    };
    let mut b = side(&people[0], black, &lock, kb, time_of(&args.black))?;
    let mut w = side(&people[1], white, &lock, kw, time_of(&args.white))?;
    let spec = GameSpec {
        id,
        round: 1,
        size,
        opening: args.start.clone(),
        time,
        rules,
    };
    let mut sinks: Vec<Box<dyn EventSink>> = vec![Box::new(LogReporter)];
    if !args.json {
        sinks.push(Box::new(ConsoleReporter::new(std::io::stdout())));
    }
    let (record, times) = {
        let (mut bm, mut wm);
        let bs: &mut dyn Seat = match &mut b {
            Side::Person(p) => p.as_mut(),
            Side::Bot(inst) => {
                bm = MailboxSeat::new(inst);
                &mut bm
            }
        };
        let ws: &mut dyn Seat = match &mut w {
            Side::Person(p) => p.as_mut(),
            Side::Bot(inst) => {
                wm = MailboxSeat::new(inst);
                &mut wm
            }
        };
        play_seats_timed(&spec, [bs, ws], &Fanout(sinks))?
    };
    drop((b, w));
    crate::mailbox::sweep_temp_files(lock.access());
    if let Some(results) = &results {
        // The time controls of a game with a person (the record does not
        // hold them); a game of bots keeps the file `export` writes.
        let times = people.iter().any(Option::is_some).then_some(&times);
        crate::schedule::venue::write_ggf(results, &record, times);
    }
    if args.json {
        println!("{}", serde_json::to_string(&record)?);
    }
    Ok(exit::OK)
}

/// `human` or `human:NAME`: a person at this terminal, by name.
fn person(text: &str) -> Option<String> {
    let rest = text.strip_prefix("human")?;
    match rest.strip_prefix(':') {
        Some(name) if !name.trim().is_empty() => Some(name.trim().to_string()),
        _ if rest.is_empty() => Some("human".to_string()),
        _ => None,
    }
}

/// One side of the game: a person at this terminal, or a bot's instance
/// on the board.
enum Side {
    Person(Box<PersonSeat>),
    Bot(Box<Instance>),
}

/// A person's time: per move, or a game clock.
#[derive(Clone, Copy)]
struct PersonTime {
    move_ms: u64,
    clock: Option<GameClock>,
}

fn side(
    person: &Option<String>,
    spec: Arc<crate::player::PlayerSpec>,
    lock: &BoardLock,
    k: u32,
    time: PersonTime,
) -> Result<Side, HarnessError> {
    Ok(match person {
        Some(name) => {
            let seat = PersonSeat::at_terminal(name, time.move_ms);
            Side::Person(Box::new(match time.clock {
                Some(clock) => seat.with_clock(clock),
                None => seat,
            }))
        }
        None => Side::Bot(Box::new(
            Instance::on(spec, lock.access(), k).map_err(HarnessError::from)?,
        )),
    })
}

/// A board folder of `play`'s own (`<tmp>/tournament-play-<pid>-<n>/board`),
/// removed with everything in it when dropped.
struct ScratchBoard {
    dir: std::path::PathBuf,
}

impl ScratchBoard {
    fn make() -> Result<ScratchBoard, HarnessError> {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir();
        let mut n = 0u32;
        loop {
            let dir = base.join(format!("tournament-play-{}-{n}", std::process::id()));
            // Made here, never an existing folder (or a link) taken over.
            match std::fs::create_dir(&dir) {
                Ok(()) => {
                    // A bot run as another user (under root) reaches its
                    // mailbox through it.
                    let open = std::fs::Permissions::from_mode(0o755);
                    std::fs::set_permissions(&dir, open).map_err(|e| {
                        HarnessError::BoardUnwritable(format!("{}: {e}", dir.display()))
                    })?;
                    return Ok(ScratchBoard { dir });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => {
                    return Err(HarnessError::BoardUnwritable(format!(
                        "cannot make {}: {e}",
                        dir.display()
                    )))
                }
            }
        }
    }

    fn board(&self) -> std::path::PathBuf {
        self.dir.join("board")
    }
}

impl Drop for ScratchBoard {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            tracing::warn!("cannot remove {}: {e}", self.dir.display());
        }
    }
}
