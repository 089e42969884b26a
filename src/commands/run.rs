//! `tournament run`: the whole tournament of a tournament.toml, resumable,
//! with live progress and the crosstable at the end.
//!
//! Owns the command: the configuration and its share, the board and
//! results locks, recording each game, what is printed and the exit code.
//! Must not decide what a format decides: which games come next, how many
//! in all, when a rule stops the tournament are the format's scheduler's
//! (`schedule::Scheduler`, driven here); the board's lock, the instances'
//! numbers and the GGF copies are `schedule::venue`'s, shared with `play`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::config::{self, Config, Format};
use crate::error::{exit, HarnessError};
use crate::event::{EventSink, Fanout};
use crate::mailbox::{BoardLock, LockOptions};
use crate::player::{become_subreaper, PlayerSpec};
use crate::record::GameRecord;
use crate::referee::{BrowserSeat, Desk, GameSpec, PersonSeat, SideTime};
use crate::report::{result_line, LiveFiles, LogReporter, Progress};
use crate::results::{check_schedule, ResultStore, StoredSchedule};
use crate::schedule::{self, run_games, PoolSetup, ScheduledGame};
use crate::scheduler::{self, Next, Scheduler};

use super::crosstable::{parse_format, render_results};

/// Drops players that cannot be started (with the install hint), or fails
/// with `--strict`. Bots started by hand are not checked.
fn preflight(config: &mut Config, strict: bool) -> Result<(), HarnessError> {
    let mut problems = Vec::new();
    let board = config.board.clone();
    config.players.retain(|p| match startable(p, &board) {
        Ok(()) => true,
        Err(msg) => {
            problems.push(msg);
            false
        }
    });
    if problems.is_empty() {
        return Ok(());
    }
    if strict {
        return Err(HarnessError::PlayerUnavailable(problems.join("\n")));
    }
    for msg in &problems {
        tracing::warn!("skipped: {msg}");
    }
    if config.players.len() < 2 {
        return Err(HarnessError::PlayerUnavailable(format!(
            "fewer than two players can be started:\n{}",
            problems.join("\n")
        )));
    }
    if let (Format::Gauntlet, Some(g)) = (config.format, &config.gauntlet_player) {
        if config.player(g).is_none() {
            return Err(HarnessError::PlayerUnavailable(format!(
                "the gauntlet player `{g}` cannot be started:\n{}",
                problems.join("\n")
            )));
        }
    }
    Ok(())
}

/// Whether `p` can be started: its program is there and, when its bot
/// runs sandboxed as a user of its own, that user can reach the program,
/// the files its command names and the board.
fn startable(p: &crate::player::PlayerSpec, board: &std::path::Path) -> Result<(), String> {
    let argv = p.resolve()?;
    match &p.launch {
        crate::player::Launch::Command(_) if p.sandbox.enabled => {
            crate::sandbox::check_reach(&p.name, &p.sandbox, &argv, &p.base_dir, board)
        }
        _ => Ok(()),
    }
}

/// Where the person of the tournament (`human = true`) sits: in the
/// browser, through a private page, when the live page is served
/// (`--serve`); at this terminal otherwise. The desks the server shows.
#[allow(clippy::type_complexity)]
fn seat_person(
    person: Option<&crate::player::PlayerSpec>,
    in_browser: bool,
) -> anyhow::Result<(
    Option<Box<std::sync::Mutex<dyn crate::referee::Seat + Send>>>,
    Vec<std::sync::Arc<Desk>>,
)> {
    let Some((p, move_ms, clock)) = person.and_then(|p| match p.launch {
        crate::player::Launch::Person { move_ms, clock } => Some((p, move_ms, clock)),
        _ => None,
    }) else {
        return Ok((None, Vec::new()));
    };
    if in_browser {
        let (seat, desk) = BrowserSeat::open(&p.name, move_ms)
            .map_err(|e| anyhow::anyhow!("cannot draw a private key for {}: {e}", p.name))?;
        let seat = match clock {
            Some(c) => seat.with_clock(c),
            None => seat,
        };
        return Ok((Some(Box::new(std::sync::Mutex::new(seat))), vec![desk]));
    }
    let seat = PersonSeat::at_terminal(&p.name, move_ms);
    let seat = match clock {
        Some(c) => seat.with_clock(c),
        None => seat,
    };
    Ok((Some(Box::new(std::sync::Mutex::new(seat))), Vec::new()))
}

/// The line that gives a person their private link (never shown on the
/// public page).
fn private_link(addr: std::net::SocketAddr, desk: &Desk) -> String {
    let host = if addr.ip().is_unspecified() {
        format!("<this machine's address>:{}", addr.port())
    } else {
        addr.to_string()
    };
    format!(
        "{} plays in the browser: http://{host}{} (a private link: whoever has it plays for {}; \
         keep it to them)",
        desk.name(),
        desk.path(),
        desk.name()
    )
}

/// The time control of each side of a game with the person at this
/// terminal in it (for its GGF file's `TI`); `None` for a game of bots,
/// whose GGF file stays what `export` writes from the record.
fn person_times(config: &Config, record: &GameRecord) -> Option<[SideTime; 2]> {
    let bots = SideTime::PerMove {
        move_ms: config.time.move_ms,
        bank_ms: config.time.bank_ms,
    };
    let side = |name: &str| match config.player(name).map(|p| &p.launch) {
        Some(crate::player::Launch::Person { clock: Some(c), .. }) => Some(SideTime::Game(*c)),
        Some(crate::player::Launch::Person { move_ms, .. }) => Some(SideTime::PerMove {
            move_ms: *move_ms,
            bank_ms: config.time.bank_ms,
        }),
        _ => None,
    };
    let (b, w) = (side(&record.black), side(&record.white));
    (b.is_some() || w.is_some()).then(|| [b.unwrap_or(bots), w.unwrap_or(bots)])
}

/// Says once which protections the bots' sandbox lacks on this machine
/// and which players run without one.
fn announce_sandbox(config: &Config) {
    let mut spawned = false;
    for p in &config.players {
        let crate::player::Launch::Command(_) = &p.launch else {
            continue;
        };
        if !p.sandbox.enabled {
            tracing::warn!(
                "player `{}` runs without a sandbox (sandbox = false): it can do anything your user can",
                p.name
            );
            continue;
        }
        spawned = true;
    }
    if spawned {
        let prot = crate::sandbox::protections();
        for missing in prot.missing() {
            tracing::warn!("sandbox: partial: {missing}");
        }
        tracing::info!("bots' control groups: {}", prot.describe_groups());
    }
}

/// Whether `record` is a game a bot lost by being killed with the signal
/// that stops this run: a scheduler stopping a job signals every process
/// in it (Slurm's `scancel` and `scontrol requeue` send TERM to the bots
/// too, as does a Kubernetes pod's end), which is not the bot's fault.
fn killed_by_the_stop(record: &GameRecord) -> bool {
    use crate::pid::ExitInfo;
    let stopping = crate::interrupt::stop_requested().load(Ordering::SeqCst);
    let exit = record.forfeit.as_ref().and_then(|f| f.exit.clone());
    stopping
        && exit.is_some_and(|e| {
            [1, 2, 15]
                .iter()
                .any(|&s| e == ExitInfo::Signal(s).to_string())
        })
}

/// Turns `config` into its share's: the whole schedule is recorded in (or
/// checked against) the results folder, as an unsharded run does, then
/// the share's results go to `shards/K-of-N/` and its board beside the
/// tournament's. Returns the share's schedule.
fn enter_share(
    config: &mut Config,
    chosen: &crate::shard::Chosen,
    whole: &StoredSchedule,
) -> Result<StoredSchedule, HarnessError> {
    let share = chosen.share;
    let top = config.results.clone();
    crate::results::create_folder(&top)?;
    if !crate::results::read_records(&top.join(crate::results::GAMES_FILE))?.is_empty() {
        return Err(HarnessError::ScheduleChanged(format!(
            "{} holds games played whole (its games.jsonl); a share would play them again. Finish \
             it without --shard, or use another `results` folder for the shares",
            top.display()
        )));
    }
    if let Some((count, _)) =
        crate::shard::found(&top).map_err(|e| HarnessError::ScheduleChanged(e.0))?
    {
        if count != share.count {
            return Err(HarnessError::ScheduleChanged(format!(
                "{} is played in {count} shares; this is share {} ({}). Split one tournament one \
                 way: use --shard K/{count}, or another `results` folder",
                top.join(crate::shard::SHARDS_DIR).display(),
                share,
                chosen.from
            )));
        }
    }
    let full = check_schedule(&top, whole)?;
    let shards = top.join(crate::shard::SHARDS_DIR);
    let share_dir = share.dir(&top);
    for dir in [&shards, &share_dir] {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(HarnessError::results_unwritable(dir, e)),
        }
    }
    config.results = share_dir;
    config.board = share.board(&config.board);
    config.check_board().map_err(HarnessError::ConfigFile)?;
    Ok(StoredSchedule {
        games: share.games(&full.games),
        shard: Some(share),
        ..full
    })
}

/// An unsharded run on a results folder played in shares would play their
/// games again: refused.
fn refuse_shared(results: &std::path::Path) -> Result<(), HarnessError> {
    let Some(shares) = crate::results::found_shares(results)? else {
        return Ok(());
    };
    let Some(first) = shares.first() else {
        return Ok(());
    };
    Err(HarnessError::ScheduleChanged(format!(
        "{} is played in {} shares ({}); run each share with --shard K/{} (or as a job \
         array), or `tournament merge` them and use the merged folder",
        results.display(),
        first.count,
        results.join(crate::shard::SHARDS_DIR).display(),
        first.count
    )))
}

pub fn run(args: &RunArgs) -> anyhow::Result<i32> {
    let format = parse_format(&args.format)?;
    let mut config = config::load(&args.config).map_err(HarnessError::ConfigFile)?;
    if let Some(g) = args.games_per_pairing {
        config.games_per_pairing = g.max(1);
    }
    if let Some(c) = args.concurrency {
        config.concurrency = c.max(1);
    }
    let person = config.players.iter().find(|p| p.is_person()).cloned();
    if let Some(p) = &person {
        if config.concurrency > 1 {
            tracing::info!(
                "{} plays {}: one game at a time, so that the board shown is theirs",
                p.name,
                if args.serve.is_some() {
                    "in the browser"
                } else {
                    "at this terminal"
                }
            );
            config.concurrency = 1;
        }
    }
    config.check_board().map_err(HarnessError::ConfigFile)?;
    let chosen = crate::shard::choose(args.shard, args.shards, |k| std::env::var(k).ok())
        .map_err(|e| HarnessError::Config(e.to_string()))?;
    if let Some(c) = &chosen {
        tracing::info!(
            "share {} (0-based) of the tournament, from {}",
            c.share,
            c.from
        );
    }
    // A share that cannot start a player stops: dropping it would change
    // the schedule the other shares play.
    preflight(&mut config, args.strict || chosen.is_some())?;
    announce_sandbox(&config);
    let at_once = config.players.len() * (config.concurrency as usize).min(config.players.len());
    crate::player::fit_process_limits(&mut config.players, at_once);
    let names: Vec<String> = config.players.iter().map(|p| p.name.clone()).collect();
    let stored = StoredSchedule {
        tournament: config.name.clone(),
        size: config.size,
        games: schedule::build(&config),
        swiss_rounds: (config.format == Format::Swiss).then_some(config.rounds),
        sprt: config.sprt,
        shard: None,
    };

    super::output::check_results_folder(&config)?;
    let whole_results = config.results.clone();
    let stored = match &chosen {
        Some(c) => enter_share(&mut config, c, &stored)?,
        None => {
            refuse_shared(&config.results)?;
            stored
        }
    };
    become_subreaper();
    crate::interrupt::finish_then_stop();
    let lock = schedule::venue::take_board(
        &config.board,
        Duration::from_millis(config.stale_lock_ms),
        format!("tournament run ({})", config.name),
    )?;
    crate::results::create_folder(&config.results)?;
    let results_lock = crate::results::lock(
        &config.results,
        &LockOptions {
            stale: Duration::from_millis(config.stale_lock_ms),
            flock: true,
            command: format!(
                "tournament run ({}), board {}",
                config.name,
                lock.board().display()
            ),
            // The referee whose board lock just went stale holds no lock
            // any more: its results lock is not waited for again.
            stale_holders: lock.took_over_from().into_iter().cloned().collect(),
        },
    )?;
    let to_play = check_schedule(&config.results, &stored)?;
    let games = to_play.games.clone();
    let (mut store, done) = ResultStore::open(&config.results, &to_play)?;
    let scheduler = scheduler::for_run(
        &config,
        games.clone(),
        chosen.as_ref().map(|c| c.share),
        &whole_results,
        crate::interrupt::stop_requested(),
    );
    let (person_seat, desks) = seat_person(person.as_ref(), args.serve.is_some())?;
    let live_page = match args.serve {
        Some(addr) => {
            let server =
                crate::serve::LiveServer::start_with_desks(&config.results, addr, desks.clone())?;
            eprintln!("{}", server.announce());
            super::pasteable::network_hint(server.addr(), "--serve");
            for desk in &desks {
                eprintln!("{}", private_link(server.addr(), desk));
            }
            Some(server)
        }
        None => None,
    };
    let statement = crate::sandbox::Statement::of(&config.players, crate::sandbox::protections());
    if let Err(e) = statement.record(&config.results) {
        tracing::warn!("cannot write {}: {e}", crate::sandbox::STATEMENT_FILE);
    }
    let stray = done.iter().find(|r| !scheduler.holds(r));
    if let Some(stray) = stray {
        return Err(HarnessError::ScheduleChanged(format!(
            "{} holds game {} which is not in this schedule",
            store.path().display(),
            stray.id
        ))
        .into());
    }
    crate::mailbox::sweep_temp_files(lock.access());
    // Live files of games a stopped run left unfinished: those games are
    // played again from the start. Only a referee's own live files go.
    crate::report::live::remove_stale(&config.results, games.iter().map(|g| g.id.as_str()));
    crate::logging::set_game_log_dir(Some(config.results.join("logs")));
    let total = scheduler.total();
    tracing::info!(
        "{}: {} players, {} games ({} already played), {} at a time, board {}",
        config.name,
        config.players.len(),
        total,
        done.len(),
        config.concurrency,
        lock.board().display()
    );

    let players: HashMap<String, Arc<PlayerSpec>> = config
        .players
        .iter()
        .map(|p| (p.name.clone(), Arc::new(p.clone())))
        .collect();
    let cfg = &config;
    let game_spec = move |g: &ScheduledGame| GameSpec {
        id: g.id.clone(),
        round: g.round,
        size: cfg.size,
        opening: g.opening.clone(),
        time: cfg.time,
        rules: cfg.rules,
    };
    let progress = Arc::new(Progress::new(total as u64, &done));
    // A person at this terminal reads the board there: no progress bar
    // redrawn over it.
    if person.is_none() {
        crate::logging::set_progress_bar(Some(progress.bar().clone()));
    }
    struct Shared(Arc<Progress>);
    impl EventSink for Shared {
        fn emit(&self, e: &crate::event::Event<'_>) {
            self.0.emit(e)
        }
    }
    let sink = Fanout(vec![
        Box::new(LogReporter),
        Box::new(LiveFiles::new(&config.results)),
        Box::new(Shared(Arc::clone(&progress))) as Box<dyn EventSink>,
    ]);
    if let Some(note) = scheduler.begin(&done)? {
        progress.set_note(note);
    }
    let setup = PoolSetup {
        lock: &lock,
        concurrency: config.concurrency,
        players: &players,
        game_spec: &game_spec,
        sink: &sink,
        stop: crate::interrupt::stop_requested(),
        decided: scheduler.decided(),
        person: person_seat.as_deref(),
    };
    let openings = schedule::openings(&config);
    announce_openings(&config, &openings);
    let mut recording = Recording {
        config: &config,
        lock: &lock,
        store: &mut store,
        progress: &progress,
        scheduler: scheduler.as_ref(),
        count: done.len(),
        records: done,
        total,
        unrecorded: 0,
    };
    let watching = AtomicBool::new(true);
    let outcome = std::thread::scope(|scope| {
        let _watch_ends = WatchEnds(&watching);
        if scheduler.watches() {
            scope.spawn(|| scheduler.watch(&watching));
        }
        recording.play_through(&setup)
    })?;
    progress.finish();
    crate::logging::set_progress_bar(None);
    // The bots are gone: their leftovers (spare files) go too.
    crate::mailbox::sweep_temp_files(lock.access());
    let left = outcome?;
    drop(lock);
    if let Some(server) = live_page {
        // The viewers keep the final standings on screen.
        server.stop();
    }

    // The share's own lock goes before the shares are looked at (this
    // one is done, not running).
    drop(results_lock);
    print!("{}", render_results(&whole_results, &names, format)?);
    if chosen.is_some() {
        super::crosstable::print_share_states(&whole_results, format)?;
    }
    println!(
        "results: {}  logs: {}",
        store.path().display(),
        config.results.join("logs").display()
    );
    if let Some(line) = scheduler.conclusion() {
        println!("{line}");
        return Ok(exit::OK);
    }
    if left > 0 {
        eprintln!("stopped with {left} games left; run the same command again to resume");
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}

/// What a run has recorded, and the recording of each game it plays.
struct Recording<'a> {
    config: &'a Config,
    lock: &'a BoardLock,
    store: &'a mut ResultStore,
    progress: &'a Progress,
    scheduler: &'a dyn Scheduler,
    /// The run's records: those found at its start, then each recorded.
    records: Vec<GameRecord>,
    count: usize,
    total: usize,
    /// Games of the batch being played that were finished but not recorded.
    unrecorded: usize,
}

impl Recording<'_> {
    /// Plays the scheduler's games, batch after batch, until it is done,
    /// a batch leaves games (the run was stopped) or a game fails.
    /// `Ok(Ok(left))`: the games left; `Ok(Err(_))`: a game's failure (the
    /// caller cleans up, then fails); `Err(_)`: the format could not say
    /// what comes next.
    fn play_through(
        &mut self,
        setup: &PoolSetup<'_>,
    ) -> Result<Result<usize, HarnessError>, HarnessError> {
        let mut left = 0;
        loop {
            let (pending, swiss_round) = match self.scheduler.next(&self.records)? {
                Next::Play { games, swiss_round } => (games, swiss_round),
                Next::Done => return Ok(Ok(left)),
                // Stopped while waiting for the other shares.
                Next::Stopped => return Ok(Ok(left + self.total.saturating_sub(self.count))),
            };
            match run_games(pending, setup, &mut |r| self.record(r, swiss_round)) {
                Ok(n) => left += n + std::mem::take(&mut self.unrecorded),
                Err(e) => return Ok(Err(e)),
            }
            if left > 0 {
                return Ok(Ok(left));
            }
        }
    }

    /// Records one finished game of Swiss round `swiss_round` (if any),
    /// unless a bot lost it to the signal that stops the run.
    fn record(
        &mut self,
        mut record: GameRecord,
        swiss_round: Option<u32>,
    ) -> Result<(), HarnessError> {
        // A referee that lost the board records nothing more: the new
        // holder plays this game again.
        self.lock.ensure_held().map_err(HarnessError::LockLost)?;
        if swiss_round.is_some() {
            record.swiss_round = swiss_round;
        }
        if killed_by_the_stop(&record) {
            tracing::warn!(
                "{}: not recorded: a bot was killed by the signal that stops this run (a \
                 scheduler signals every process of a job); it is played again on resume",
                record.id
            );
            self.unrecorded += 1;
            return Ok(());
        }
        let writing = crate::interrupt::recording();
        self.store.append(&record)?;
        drop(writing);
        let times = person_times(self.config, &record);
        schedule::venue::write_ggf(&self.config.results, &record, times.as_ref());
        self.count += 1;
        self.records.push(record);
        let record = self.records.last().expect("just pushed");
        let (count, total) = (self.count, self.total);
        let mut line = format!("[{count}/{total}] {} · {}", result_line(record), record.id);
        if let Some(note) = self.scheduler.recorded(&self.records)? {
            line.push_str(&format!(" · {note}"));
            self.progress.set_note(note);
        }
        tracing::info!("{line}");
        Ok(())
    }
}

/// Ends the scheduler's watch ([`crate::scheduler::Scheduler::watch`])
/// however the games end.
struct WatchEnds<'a>(&'a AtomicBool);

impl Drop for WatchEnds<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Says how many distinct openings the games start from (a statistic over
/// games that repeat one position counts the same game twice).
fn announce_openings(config: &Config, openings: &[String]) {
    let distinct = openings.iter().collect::<HashSet<_>>().len();
    let source = match &config.openings {
        crate::config::OpeningSource::Random { plies: 0, .. } => {
            "the initial position: random-plies = 0".to_string()
        }
        crate::config::OpeningSource::Random { plies, seed } => {
            format!("{plies} random plies, seed {seed}")
        }
        crate::config::OpeningSource::File { path, .. } => path.display().to_string(),
        crate::config::OpeningSource::Shipped { name, .. } => {
            format!("the balanced openings shipped with the program, {name}")
        }
    };
    let repeats = match config.sprt.and_then(|t| t.repeated_openings) {
        Some(r) => format!("; {}", r.caveat()),
        None => String::new(),
    };
    tracing::info!(
        "openings: {distinct} distinct ({source}), each played by both colours{repeats}"
    );
}
