//! `tournament check-bot -- CMD…`: scripted positions against one bot, a
//! report of every protocol violation with a hint, exit status 0 only for a
//! compliant bot. The script and the judging live in `crate::checkbot`;
//! this file owns the board it checks on (the tournament's, or a
//! temporary one), the printing and the exit status.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::checkbot::{check_bot, Options, RepeatedHints};
use crate::cli::CheckBotArgs;
use crate::error::{exit, HarnessError};
use crate::mailbox::{BoardLock, LockOptions, WriteAccess};
use crate::player::{
    become_subreaper, Instance, Launch, PlayerSpec, Restart, Transport, WorkDir, BUILTINS,
};

/// Where check-bot lays out its board, so that the bot sees what it would
/// see in the tournament: the tournament's own board (the configuration's
/// `board`), under its lock, with the mailbox `players/<name>.1` that
/// `run` gives; or, with no configuration at hand or a referee running
/// on that board, a `board` folder in a fresh temporary folder (removed
/// when done) — a bot could tell that one by its path alone.
enum CheckBoard {
    Tournament(Box<BoardLock>),
    Temporary { dir: PathBuf, access: WriteAccess },
}

impl CheckBoard {
    fn choose(config: Option<&crate::config::Config>) -> Result<CheckBoard, HarnessError> {
        if let Some(c) = config {
            let taken = c
                .check_board()
                .map_err(HarnessError::ConfigFile)
                .and_then(|()| {
                    BoardLock::acquire(
                        &c.board,
                        &LockOptions {
                            stale: Duration::from_millis(c.stale_lock_ms),
                            flock: true,
                            command: "tournament check-bot".into(),
                            stale_holders: Vec::new(),
                        },
                    )
                    .map_err(HarnessError::from)
                });
            match taken {
                Ok(lock) => return Ok(CheckBoard::Tournament(Box::new(lock))),
                Err(e) => tracing::warn!(
                    "the tournament's board is not free ({e}): checking on a temporary board, whose path a bot could tell from a tournament's"
                ),
            }
        }
        let base = std::env::temp_dir();
        let made = tempfile_dir(&base).map_err(|e| {
            HarnessError::BoardUnwritable(format!(
                "cannot create a board in {}: {e}",
                base.display()
            ))
        })?;
        let board = made.join("board");
        std::fs::create_dir(&board).map_err(|e| {
            HarnessError::BoardUnwritable(format!("cannot create {}: {e}", board.display()))
        })?;
        Ok(CheckBoard::Temporary {
            access: WriteAccess::unshared(&board),
            dir: made,
        })
    }

    fn access(&self) -> &WriteAccess {
        match self {
            CheckBoard::Tournament(lock) => lock.access(),
            CheckBoard::Temporary { access, .. } => access,
        }
    }
}

impl Drop for CheckBoard {
    fn drop(&mut self) {
        if let CheckBoard::Temporary { dir, .. } = self {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A new folder in `base` with a name like any program's temporary one.
fn tempfile_dir(base: &std::path::Path) -> std::io::Result<PathBuf> {
    let mut last = None;
    for _ in 0..100 {
        let dir = base.join(format!(
            "tmp.{:010x}",
            rand::random::<u64>() & 0xff_ffff_ffff
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
}

/// A player name for the command: the built-in's name for `tournament bot
/// NAME`, else what `play` would call that command line.
fn player_name(argv: &[String]) -> String {
    // `tournament bot greedy`: the built-in's name.
    if let [_, bot, name, ..] = argv {
        if bot == "bot" && BUILTINS.contains(&name.as_str()) {
            return name.clone();
        }
    }
    super::players::name_for(argv)
}

/// `--nboard-version`, for NBoard only.
fn engine_settings(args: &CheckBotArgs) -> anyhow::Result<crate::engine::EngineSettings> {
    let mut settings = crate::engine::EngineSettings::default();
    if let Some(v) = args.nboard_version {
        if args.protocol != crate::engine::Protocol::Nboard {
            return Err(HarnessError::Config(
                "--nboard-version is only used with --protocol nboard".into(),
            )
            .into());
        }
        settings.nboard_version = v;
    }
    Ok(settings)
}

/// `--dir` (and `--dir-writable`): a folder that exists.
fn workdir(args: &CheckBotArgs) -> anyhow::Result<Option<WorkDir>> {
    let Some(dir) = &args.dir else {
        return Ok(None);
    };
    let path = std::fs::canonicalize(dir)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| HarnessError::Config(format!("--dir {}: no such folder", dir.display())))?;
    Ok(Some(WorkDir {
        path,
        writable: args.dir_writable,
    }))
}

pub fn run(args: &CheckBotArgs) -> anyhow::Result<i32> {
    let config = super::players::optional_config(args.config.as_deref())?;
    let mut spec = PlayerSpec {
        name: player_name(&args.command),
        launch: Launch::Command(args.command.clone()),
        restart: Restart::Reuse,
        base_dir: std::env::current_dir()?,
        seed: 1,
        board_as: None,
        sandbox: crate::sandbox::Settings {
            enabled: !args.no_sandbox,
            ..Default::default()
        },
        protocol: args.protocol,
        engine: engine_settings(args)?,
        pipe: true,
        workdir: workdir(args)?,
    };
    spec.resolve().map_err(HarnessError::PlayerUnavailable)?;
    let shown = args.command.join(" ");

    become_subreaper();
    crate::interrupt::stop_at_once();
    let board = CheckBoard::choose(config.as_ref())?;
    // The bot may not read the tournament's own files, as in `run`.
    spec.sandbox.keep_out = match &config {
        Some(c) => vec![c.board.clone(), c.results.clone(), c.path.clone()],
        None => vec![board.access().board().to_path_buf()],
    };
    let sandbox =
        crate::sandbox::Statement::of(std::slice::from_ref(&spec), crate::sandbox::protections());
    let mut inst = Instance::on(Arc::new(spec), board.access(), 1).map_err(HarnessError::from)?;
    if args.protocol.is_engine() {
        return check_engine(args, inst, board.access(), &sandbox.line());
    }
    println!("check-bot: {shown}");
    println!(
        "  id {}, mailbox {}, move-ms {}, startup-ms {}",
        inst.id(),
        inst.mailbox().dir().display(),
        args.move_ms,
        args.startup_ms
    );
    println!(
        "  {} — as in a tournament: it may write only in its mailbox and $TMPDIR, and is stopped between messages (SECURITY.md)",
        sandbox.line()
    );
    let opts = Options {
        move_ms: args.move_ms,
        startup_ms: args.startup_ms,
        seed: 1,
    };
    let mut out = std::io::stdout();
    let mut repeated = RepeatedHints::default();
    let report = check_bot(&mut inst, &opts, &mut |step| {
        let _ = writeln!(out, "{}", step.render_folded(&mut repeated));
        let _ = out.flush();
    })?;
    let transport = match inst.transport() {
        Transport::Pipe => {
            "  talks through the pipe it was offered (PROTOCOL.md, \"The pipe\")".to_string()
        }
        _ => "  talks through in.txt and out.txt (it did not take the pipe it was offered: \
              PROTOCOL.md, \"The pipe\"; the Python, Ruby and JavaScript libraries take it)"
            .to_string(),
    };
    drop(inst);
    drop(board);

    println!("{transport}");
    let again = repeated.summary();
    if !again.is_empty() {
        println!("hints given more than once:");
        for line in again {
            println!("  {line}");
        }
    }
    if let Some(why) = &report.stopped {
        println!("stopped early: {why}");
    }
    println!("{}", report.summary_line());
    if report.compliant() {
        println!("{shown} follows mailbox protocol v1");
        return Ok(exit::OK);
    }
    Err(HarnessError::BotNoncompliant(format!(
        "`{shown}` does not follow mailbox protocol v1: {} (see the hints above)",
        report.summary_line()
    ))
    .into())
}

/// An engine (GTP, NBoard) is checked the way it will play: two refereed
/// games on 8×8 against the built-in weighted bot, one with each colour,
/// on one process. It follows its protocol if both end normally.
fn check_engine(
    args: &CheckBotArgs,
    mut engine: Instance,
    board: &WriteAccess,
    sandbox: &str,
) -> anyhow::Result<i32> {
    use crate::record::EndReason;
    use crate::referee::{play_game, GameSpec, Rules, TimeControl};
    let shown = args.command.join(" ");
    let protocol = args.protocol;
    println!("check-bot: {shown} ({protocol} engine)");
    println!(
        "  {sandbox}; two games on 8×8 against the built-in weighted, move-ms {}, startup-ms {}",
        args.move_ms, args.startup_ms
    );
    let mut weighted = Instance::on(Arc::new(PlayerSpec::builtin("weighted", 1)), board, 1)
        .map_err(HarnessError::from)?;
    let mut failed = 0;
    for (g, engine_black) in [true, false].into_iter().enumerate() {
        let spec = GameSpec {
            id: format!("check-{}", g + 1),
            round: 1,
            size: 8,
            opening: String::new(),
            time: TimeControl {
                move_ms: args.move_ms,
                startup_ms: args.startup_ms,
                ..TimeControl::default()
            },
            rules: Rules::default(),
        };
        let (b, w) = if engine_black {
            (&mut engine, &mut weighted)
        } else {
            (&mut weighted, &mut engine)
        };
        let r = play_game(&spec, b, w, &crate::event::Silent)?;
        let color = if engine_black { "black" } else { "white" };
        if r.reason == EndReason::Normal {
            println!(
                "  ok    game {} as {color}: {} plies, {}-{} ({})",
                g + 1,
                r.moves.len(),
                r.discs.black,
                r.discs.white,
                r.result.name()
            );
        } else {
            failed += 1;
            let f = r.forfeit.as_ref();
            println!(
                "  FAIL  game {} as {color}: {} by {}: {}",
                g + 1,
                r.reason,
                f.map_or("?", |f| f.color.name()),
                f.map_or("", |f| f.detail.as_str())
            );
            for line in f.map(|f| f.stderr_tail.clone()).unwrap_or_default() {
                println!("        stderr: {line}");
            }
        }
    }
    drop(engine);
    if failed == 0 {
        println!("{shown} follows the {protocol} protocol as the referee speaks it");
        return Ok(exit::OK);
    }
    Err(HarnessError::BotNoncompliant(format!(
        "`{shown}` did not finish {failed} of 2 games as a {protocol} engine (see above)"
    ))
    .into())
}
