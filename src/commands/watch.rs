//! `tournament watch [GAME]`: follows a running game from its live file,
//! redrawing the board after each move, until the game ends — or until
//! its referee is seen gone (its results lock released, its pid dead, or
//! its heartbeat still for `--wait-secs`). GAME is a game id, never a
//! path; only regular files in `<results>/live/` are opened.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cli::WatchArgs;
use crate::error::{exit, HarnessError};
use crate::game::{diagram, parse_board_string, Color};
use crate::report::live::{live_dir, LiveLine};

use super::players::{optional_config, results_dir};

/// The newest live file in `dir`, if any (regular files only: a link or
/// a pipe someone put there is not a game).
fn newest(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            meta.file_type()
                .is_file()
                .then_some((meta.modified().ok()?, e.path()))
        })
        .max()
        .map(|(_, p)| p)
}

/// Whether a referee still holds the results folder `results`; `None`
/// while it looks alive, else why not. Its heartbeat (the owner record
/// changing) is judged on our own clock: unchanged for `patience` means
/// it stopped; on this machine a dead pid says so at once.
struct RefereeWatch {
    lock_dir: PathBuf,
    patience: Duration,
    last: Option<(String, Instant)>,
    missing_since: Option<Instant>,
}

impl RefereeWatch {
    fn new(results: &Path, patience: Duration) -> RefereeWatch {
        RefereeWatch {
            lock_dir: results.join(crate::results::LOCK_DIR),
            patience,
            last: None,
            missing_since: None,
        }
    }

    fn gone(&mut self) -> Option<String> {
        let now = Instant::now();
        let Some(owner) = crate::mailbox::read_owner(&self.lock_dir) else {
            let since = *self.missing_since.get_or_insert(now);
            return (now - since > GONE_GRACE)
                .then(|| "no referee holds the results folder".to_string());
        };
        self.missing_since = None;
        if owner.host == crate::mailbox::hostname() && !crate::player::process::pid_alive(owner.pid)
        {
            return Some(format!(
                "its referee (pid {} on this machine) is no longer running",
                owner.pid
            ));
        }
        let text = owner.encode();
        match &self.last {
            Some((seen, since)) if *seen == text => (now - *since > self.patience).then(|| {
                format!(
                    "its referee ({owner}) has shown no heartbeat for {} s (--wait-secs)",
                    self.patience.as_secs()
                )
            }),
            _ => {
                self.last = Some((text, now));
                None
            }
        }
    }
}

pub fn run(args: &WatchArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    let dir = live_dir(&results);
    let give_up = Instant::now() + Duration::from_secs(args.wait_secs);
    let path = loop {
        let found = match &args.game {
            Some(id) => Some(dir.join(format!("{id}.jsonl")))
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file())),
            None => newest(&dir),
        };
        if let Some(p) = found {
            break p;
        }
        if Instant::now() >= give_up {
            let what = match &args.game {
                Some(id) => format!("game {id} is not running"),
                None => "no game is running".into(),
            };
            return Err(HarnessError::Config(format!(
                "{what} (looked in {} for {} s); finished games are in {}",
                dir.display(),
                args.wait_secs,
                results.join("games.jsonl").display()
            ))
            .into());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // Once open, the file can be read to its end even after it is removed.
    let file = crate::input_file::open_regular(&path)
        .map_err(|e| HarnessError::Config(format!("{}: cannot read it: {e}", path.display())))?;
    let mut referee = RefereeWatch::new(&results, Duration::from_secs(args.wait_secs.max(1)));
    follow(
        BufReader::new(file),
        &path,
        &mut std::io::stdout().lock(),
        &mut || referee.gone(),
    )
}

/// How long a removed live file may sit at its end without an `end` line
/// before we conclude the referee stopped mid-game.
const GONE_GRACE: Duration = Duration::from_secs(2);
/// How often, while no line comes, we look whether the referee still runs.
const LOOK_EVERY: Duration = Duration::from_millis(500);

fn follow(
    mut reader: impl BufRead,
    path: &Path,
    out: &mut impl Write,
    referee_gone: &mut impl FnMut() -> Option<String>,
) -> anyhow::Result<i32> {
    let tty = std::io::stdout().is_terminal();
    let mut header = String::new();
    let mut line = String::new();
    let mut partial = String::new();
    let mut gone_since: Option<Instant> = None;
    let mut last_look = Instant::now();
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n == 0 || !line.ends_with('\n') {
            partial.push_str(&line);
            // A referee removes the file when the game ends (after its
            // `end` line) and a new run removes what a stopped one left.
            if path.exists() {
                gone_since = None;
            } else if gone_since.get_or_insert_with(Instant::now).elapsed() > GONE_GRACE {
                writeln!(out, "the game's live file is gone without an end: the referee stopped mid-game (a resumed run plays it again)")?;
                return Ok(exit::FAILURE);
            }
            // A referee killed with -9 leaves its live file behind.
            if last_look.elapsed() >= LOOK_EVERY {
                last_look = Instant::now();
                if let Some(why) = referee_gone() {
                    writeln!(out, "this game is not going on: {why}; it stopped mid-game (a resumed run plays it again)")?;
                    return Ok(exit::FAILURE);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let full = std::mem::take(&mut partial) + &line;
        let Ok(event) = serde_json::from_str::<LiveLine>(&full) else {
            continue;
        };
        match event {
            LiveLine::Start {
                id,
                black,
                white,
                size: s,
                opening,
            } => {
                header = format!("game {id}: {black} (X) vs {white} (O), {s}x{s}");
                if !opening.is_empty() {
                    header.push_str(&format!(", opening {opening}"));
                }
                writeln!(out, "{header}")?;
            }
            LiveLine::Move {
                ply,
                color,
                mv,
                ms,
                board,
            } => {
                let to_move = if color == "black" {
                    Color::White
                } else {
                    Color::Black
                };
                let pos = parse_board_string(&board, to_move).ok();
                if tty {
                    write!(out, "\x1b[2J\x1b[H{header}\n\n")?;
                }
                if let Some(pos) = pos {
                    let d = pos.discs();
                    write!(out, "{}", diagram(&pos))?;
                    writeln!(
                        out,
                        "move {ply}: {color} {mv} ({ms} ms)   X {}  O {}\n",
                        d.black, d.white
                    )?;
                }
            }
            LiveLine::Forfeit {
                color,
                reason,
                detail,
            } => writeln!(out, "{color} forfeits ({reason}): {detail}")?,
            LiveLine::End { summary, .. } => {
                writeln!(out, "game over: {summary}")?;
                return Ok(exit::OK);
            }
        }
        out.flush()?;
    }
}
