//! `tournament run`: the whole tournament of a tournament.toml, resumable,
//! with live progress and the crosstable at the end.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::config::{self, Config, Format};
use crate::error::{exit, HarnessError};
use crate::event::{EventSink, Fanout};
use crate::mailbox::{BoardLock, LockError, LockOptions};
use crate::player::{become_subreaper, PlayerSpec};
use crate::referee::GameSpec;
use crate::report::{result_line, LiveFiles, LogReporter, Progress};
use crate::results::{check_schedule, ResultStore, StoredSchedule};
use crate::schedule::{self, run_games, PoolSetup, ScheduledGame};

use super::crosstable::{parse_format, render_results};

/// Drops players that cannot be started (with the install hint), or fails
/// with `--strict`. Bots started by hand are not checked.
fn preflight(config: &mut Config, strict: bool) -> Result<(), HarnessError> {
    let mut problems = Vec::new();
    config.players.retain(|p| match p.resolve() {
        Ok(_) => true,
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

pub fn run(args: &RunArgs) -> anyhow::Result<i32> {
    let format = parse_format(&args.format)?;
    let mut config = config::load(&args.config).map_err(|e| HarnessError::Config(e.to_string()))?;
    if let Some(g) = args.games_per_pairing {
        config.games_per_pairing = g.max(1);
    }
    if let Some(c) = args.concurrency {
        config.concurrency = c.max(1);
    }
    preflight(&mut config, args.strict)?;
    let games = schedule::build(&config);
    let stored = StoredSchedule {
        tournament: config.name.clone(),
        size: config.size,
        games: games.clone(),
    };

    become_subreaper();
    crate::interrupt::finish_then_stop();
    let lock = BoardLock::acquire(
        &config.board,
        &LockOptions {
            stale: Duration::from_millis(config.stale_lock_ms),
            flock: true,
            command: format!("tournament run ({})", config.name),
        },
    )
    .map_err(|e| match e {
        e @ LockError::Held { .. } => HarnessError::BoardLocked(e.to_string()),
        e => HarnessError::BoardUnwritable(e.to_string()),
    })?;
    check_schedule(&config.results, &stored)?;
    let ids: Vec<String> = games.iter().map(|g| g.id.clone()).collect();
    let (mut store, done) = ResultStore::open(&config.results, &ids)?;
    let live_page = match args.serve {
        Some(addr) => {
            let server = crate::serve::LiveServer::start(&config.results, addr)?;
            eprintln!("{}", server.announce());
            Some(server)
        }
        None => None,
    };
    let finished: std::collections::HashSet<&str> = done.iter().map(|r| r.id.as_str()).collect();
    if let Some(stray) = done.iter().find(|r| !games.iter().any(|g| g.id == r.id)) {
        return Err(HarnessError::ScheduleChanged(format!(
            "{} holds game {} which is not in this schedule",
            store.path().display(),
            stray.id
        ))
        .into());
    }
    let pending: Vec<ScheduledGame> = games
        .iter()
        .filter(|g| !finished.contains(g.id.as_str()))
        .cloned()
        .collect();
    crate::mailbox::sweep_temp_files(lock.board());
    // Live files of games a stopped run left unfinished: those games are
    // played again from the start.
    let _ = std::fs::remove_dir_all(crate::report::live::live_dir(&config.results));
    crate::logging::set_game_log_dir(Some(config.results.join("logs")));
    tracing::info!(
        "{}: {} players, {} games ({} already played), {} at a time, board {}",
        config.name,
        config.players.len(),
        games.len(),
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
    let progress = Arc::new(Progress::new(games.len() as u64, &done));
    crate::logging::set_progress_bar(Some(progress.bar().clone()));
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
    let total = games.len();
    let mut count = done.len();
    let setup = PoolSetup {
        board: lock.board(),
        concurrency: config.concurrency,
        players: &players,
        game_spec: &game_spec,
        lock: Some(&lock),
        sink: &sink,
        stop: crate::interrupt::stop_requested(),
    };
    let outcome = run_games(pending, &setup, &mut |record| {
        // A referee that lost the board records nothing more: the new
        // holder plays this game again.
        lock.ensure_held().map_err(HarnessError::LockLost)?;
        store.append(&record)?;
        // games.jsonl is the record; the GGF copy is a convenience that
        // `export` can always regenerate.
        if let Err(e) = crate::report::ggf::write_game_file(&config.results, &record) {
            tracing::warn!("cannot write the GGF file of {}: {e}", record.id);
        }
        count += 1;
        tracing::info!("[{count}/{total}] {} · {}", result_line(&record), record.id);
        Ok(())
    });
    progress.finish();
    crate::logging::set_progress_bar(None);
    // The bots are gone: their leftovers (spare files) go too.
    crate::mailbox::sweep_temp_files(lock.board());
    let left = outcome?;
    drop(lock);
    if let Some(server) = live_page {
        // The viewers keep the final standings on screen.
        server.stop();
    }

    let names: Vec<String> = config.players.iter().map(|p| p.name.clone()).collect();
    print!("{}", render_results(&config.results, &names, format)?);
    println!(
        "results: {}  logs: {}",
        store.path().display(),
        config.results.join("logs").display()
    );
    if left > 0 {
        eprintln!("stopped with {left} games left; run the same command again to resume");
        return Ok(exit::INTERRUPTED);
    }
    Ok(exit::OK)
}
