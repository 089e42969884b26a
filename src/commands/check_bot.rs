//! `tournament check-bot -- CMD…`: scripted positions against one bot, a
//! report of every protocol violation with a hint, exit status 0 only for a
//! compliant bot. The script and the judging live in `crate::checkbot`;
//! this file owns the temporary board, the printing and the exit status.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use crate::checkbot::{check_bot, Options, RepeatedHints};
use crate::cli::CheckBotArgs;
use crate::error::{exit, HarnessError};
use crate::player::{become_subreaper, Instance, Launch, PlayerSpec, Restart, Transport, BUILTINS};

/// A board folder of our own under the system's temp folder, removed when
/// dropped.
struct TempBoard(PathBuf);

impl TempBoard {
    fn create() -> Result<TempBoard, HarnessError> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for attempt in 0..100u32 {
            let dir = base.join(format!(
                "tournament-check-bot-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(TempBoard(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(HarnessError::BoardUnwritable(format!(
                        "cannot create a board in {}: {e}",
                        base.display()
                    )))
                }
            }
        }
        Err(HarnessError::BoardUnwritable(format!(
            "cannot create a board in {}: {}",
            base.display(),
            last.map_or("no free name".into(), |e| e.to_string())
        )))
    }
}

impl Drop for TempBoard {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

pub fn run(args: &CheckBotArgs) -> anyhow::Result<i32> {
    let spec = PlayerSpec {
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
        engine: Default::default(),
        pipe: true,
    };
    spec.resolve().map_err(HarnessError::PlayerUnavailable)?;
    let shown = args.command.join(" ");

    become_subreaper();
    crate::interrupt::stop_at_once();
    let board = TempBoard::create()?;
    let sandbox =
        crate::sandbox::Statement::of(std::slice::from_ref(&spec), crate::sandbox::protections());
    let mut inst = Instance::new(Arc::new(spec), &board.0, 1).map_err(HarnessError::from)?;
    if args.protocol.is_engine() {
        return check_engine(args, inst, &board.0, &sandbox.line());
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
    board: &std::path::Path,
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
    let mut weighted = Instance::new(Arc::new(PlayerSpec::builtin("weighted", 1)), board, 1)
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
                f.map_or("?", |f| f.color.as_str()),
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
