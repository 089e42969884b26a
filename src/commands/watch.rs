//! `tournament watch [GAME]`: follows a running game from its live file,
//! redrawing the board after each move (the last one in brackets), until
//! the game ends — or until its referee is seen gone (its results lock
//! released, its pid dead, or its heartbeat still for `--wait-secs`). With
//! `--follow` it then follows the next game (of `--player`, if given) for
//! as long as the referee runs. A finished GAME is not waited for: its
//! result is shown at once, then its moves are replayed (`--pace-ms`,
//! `--step`). GAME is a game id,
//! never a path; only regular files in `<results>/live/` are opened.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cli::WatchArgs;
use crate::error::{exit, HarnessError};
use crate::game::{diagram_marked, parse_board_string, Move};
use crate::report::live::{first_line, live_dir, LiveLine};

use super::players::{optional_config, results_dir};

/// Whether a referee still holds the results folder `results`; `None`
/// while it looks alive, else why not: the readers' one rule
/// (`mailbox::RefereeWatch`; on this machine its process, elsewhere its
/// heartbeat changing on our own clock, here with `patience` as the
/// period), a lock missing for a moment allowed (a referee starting).
struct RefereeLook {
    watch: crate::mailbox::RefereeWatch,
    patience: Duration,
    missing_since: Option<Instant>,
}

impl RefereeLook {
    fn new(results: &Path, patience: Duration) -> RefereeLook {
        let lock = results.join(crate::results::LOCK_DIR);
        RefereeLook {
            watch: crate::mailbox::RefereeWatch::with_stale(&lock, patience),
            patience,
            missing_since: None,
        }
    }

    fn gone(&mut self) -> Option<String> {
        use crate::mailbox::Referee;
        let now = Instant::now();
        match self.watch.look() {
            Referee::Running => {
                self.missing_since = None;
                None
            }
            Referee::Absent => {
                let since = *self.missing_since.get_or_insert(now);
                (now - since > GONE_GRACE)
                    .then(|| "no referee holds the results folder".to_string())
            }
            Referee::Gone => Some(format!(
                "its referee is no longer running (its process on this machine ended, or, on \
                 another machine, its heartbeat stood still for {} s: --wait-secs)",
                self.patience.as_secs()
            )),
        }
    }
}

/// Whether `path` is a live file now: a regular file (not a link) that
/// opens. Opening asks the drive; a network drive's cached `stat` still
/// shows a removed file for up to 20 s (sshfs).
fn is_live(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
        && crate::input_file::open_regular(path).is_ok()
}

/// A live file read as it grows. On a local disk, plain reads of the open
/// file. On a network drive a plain read stops at the length this machine
/// cached for the file, and through sshfs's default cache that length is
/// refreshed only every 20 s while the file is merely read (`watch` showed
/// a game's moves in 20 s bursts): there every look reads the whole file
/// again through the same open file with `O_DIRECT`, which asks the server
/// for its bytes whatever length was cached, and hands on what is new. The
/// open file keeps working after the referee removes the name at the
/// game's end, so its `end` line is read too.
struct LiveTail {
    file: std::fs::File,
    direct: bool,
    /// Bytes of the file handed on so far.
    pos: usize,
    /// Bytes read but not handed on yet.
    pending: Vec<u8>,
    path: PathBuf,
    last_touch: Option<Instant>,
}

/// A live file is a few KiB (an 8x8 game ~10 KiB); a direct read beyond
/// the cached length gets at least this many bytes per request.
const DIRECT_CHUNK: usize = 64 * 1024;

impl LiveTail {
    /// `file` is open at `path`.
    fn new(file: std::fs::File, path: &Path) -> LiveTail {
        let dir = path.parent().unwrap_or(Path::new("."));
        let direct = !crate::mailbox::is_local_fs(dir) && set_direct(&file);
        LiveTail {
            file,
            direct,
            pos: 0,
            pending: Vec::new(),
            path: path.to_path_buf(),
            last_touch: None,
        }
    }

    /// The whole file as the server has it now (direct reads from 0).
    fn read_all(&mut self) -> std::io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut all = Vec::new();
        let mut buf = vec![0u8; DIRECT_CHUNK];
        loop {
            match self.file.read_at(&mut buf, all.len() as u64) {
                Ok(0) => return Ok(all),
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Turns on `O_DIRECT` for reads of `file`; false where refused.
fn set_direct(file: &std::fs::File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, with plain integer flags.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_DIRECT) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        false
    }
}

/// Turns `O_DIRECT` off again.
fn set_direct_off(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, with plain integer flags.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

impl std::io::Read for LiveTail {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.direct {
            return std::io::Read::read(&mut self.file, buf);
        }
        if self.pending.is_empty() {
            let all = match self.read_all() {
                Ok(all) => all,
                // A drive that took the flag but refuses direct reads:
                // plain ones from where we are.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                    use std::io::Seek;
                    self.direct = false;
                    set_direct_off(&self.file);
                    self.file.seek(std::io::SeekFrom::Start(self.pos as u64))?;
                    return std::io::Read::read(&mut self.file, buf);
                }
                Err(e) => return Err(e),
            };
            if all.len() > self.pos {
                self.pending = all[self.pos..].to_vec();
            } else if all.is_empty()
                && self
                    .last_touch
                    .is_none_or(|t| t.elapsed() > Duration::from_millis(500))
            {
                // A direct read gets nothing where this machine cached the
                // length 0 (it looked between the file's creation and its
                // first line): opening the name again makes the drive look
                // at the file's length (sshfs), seen here within ~1 s.
                self.last_touch = Some(Instant::now());
                let _ = std::fs::File::open(&self.path);
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        self.pos += n;
        Ok(n)
    }
}

/// The live files in `dir` a watcher may pick: regular `.jsonl` files not
/// in `skip`, with `player` (if given) in their `start` line, newest first.
fn candidates(dir: &Path, skip: &[PathBuf], player: Option<&str>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !skip.contains(p))
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(&p).ok()?;
            (meta.file_type().is_file() && player.is_none_or(|name| plays_in(&p, name)))
                .then_some((meta.modified().ok()?, p))
        })
        .collect();
    found.sort_by(|a, b| b.cmp(a));
    found.into_iter().map(|(_, p)| p).collect()
}

/// Whether the live file at `path` is a game of `player` (its `start` line).
fn plays_in(path: &Path, player: &str) -> bool {
    matches!(
        first_line(path),
        Some(LiveLine::Start { black, white, .. }) if black == player || white == player
    )
}

/// The record of game `id` in the results folder's games.jsonl, if it was
/// played (the last one with that id), with its moves (to replay it).
fn finished(results: &Path, id: &str) -> Option<crate::record::GameRecord> {
    let path = results.join(crate::results::GAMES_FILE);
    if !path.exists() {
        return None;
    }
    crate::results::read_records(&path)
        .ok()?
        .into_iter()
        .rev()
        .find(|r| r.id == id)
}

/// Where finished games are seen, for messages.
fn finished_games_are_in(results: &Path) -> String {
    let program = super::pasteable::this_program();
    let results_option = shell_words::quote(&results.display().to_string()).into_owned();
    format!(
        "finished games: `{program} report --results {results_option}` (every game replayable \
         in {}), `{program} crosstable --results {results_option}`",
        results.join("report.html").display()
    )
}

/// For a results folder played in shares: the share to watch, said on
/// stderr — the one whose live file or record has game `id`, else the one
/// with the newest running game (of `player`), else a share whose referee
/// runs. Otherwise `results` itself. One share is watched at a time.
fn share_to_watch(results: &Path, id: Option<&str>, player: Option<&str>) -> PathBuf {
    let Ok(Some(shares)) = crate::results::found_shares(results) else {
        return results.to_path_buf();
    };
    let dirs: Vec<PathBuf> = shares.iter().map(|s| s.dir(results)).collect();
    let holds = |d: &PathBuf| match id {
        Some(id) => live_dir(d).join(format!("{id}.jsonl")).is_file() || finished(d, id).is_some(),
        None => false,
    };
    let newest = |d: &PathBuf| {
        candidates(&live_dir(d), &[], player)
            .first()
            .and_then(|p| std::fs::metadata(p).ok()?.modified().ok())
    };
    let chosen = dirs
        .iter()
        .find(|d| holds(d))
        .or_else(|| {
            dirs.iter()
                .filter(|d| id.is_none() && newest(d).is_some())
                .max_by_key(|d| newest(d))
        })
        .or_else(|| {
            dirs.iter()
                .find(|d| crate::mailbox::read_owner(&d.join(crate::results::LOCK_DIR)).is_some())
        });
    match chosen {
        Some(d) => {
            eprintln!("watching share {}", d.display());
            d.clone()
        }
        None => results.to_path_buf(),
    }
}

pub fn run(args: &WatchArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    let results = share_to_watch(&results, args.game.as_deref(), args.player.as_deref());
    let dir = live_dir(&results);
    let mut out = std::io::stdout().lock();
    let mut watched: Vec<PathBuf> = vec![];
    // No game shown yet (then --wait-secs bounds the wait for one).
    let mut first = true;
    // A finished game is not waited for: its record says how it ended.
    if let Some(id) = &args.game {
        let live = dir.join(format!("{id}.jsonl"));
        let running = is_live(&live);
        if !running {
            if let Some(record) = finished(&results, id) {
                writeln!(
                    out,
                    "game {id} is finished: {}. Its replay:",
                    crate::report::result_line(&record),
                )?;
                let pace = if args.step {
                    super::replay::Pace::Step
                } else {
                    super::replay::Pace::Every(Duration::from_millis(args.pace_ms))
                };
                super::replay::replay(&record, pace, std::io::stdout().is_terminal(), &mut out)?;
                if !args.follow {
                    return Ok(exit::OK);
                }
                watched.push(live);
                first = false;
            }
        }
    }
    let patience = Duration::from_secs(args.wait_secs.max(1));
    let mut referee = RefereeLook::new(&results, patience);
    loop {
        // The game asked for first; then (--follow) the newest running
        // game not watched yet, of --player if given.
        let wanted = match (&args.game, first) {
            (Some(id), true) => Some(dir.join(format!("{id}.jsonl"))),
            _ => None,
        };
        let give_up = Instant::now() + Duration::from_secs(args.wait_secs);
        let path = loop {
            let found = match &wanted {
                Some(p) => Some(p.clone()).filter(|p| is_live(p)),
                None => candidates(&dir, &watched, args.player.as_deref())
                    .into_iter()
                    .next(),
            };
            if let Some(p) = found {
                break Some(p);
            }
            // Following, a running referee is worth waiting for; after a
            // game, its end is the end.
            let alive = args.follow && referee.gone().is_none();
            if !alive && (!first || Instant::now() >= give_up) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let Some(path) = path else {
            if !first && args.follow {
                writeln!(
                    out,
                    "no more games: no referee runs on {} any more; {}",
                    results.display(),
                    finished_games_are_in(&results)
                )?;
                return Ok(exit::OK);
            }
            let what = match (&args.game, &args.player) {
                (Some(id), _) => format!("game {id} is not running"),
                (None, Some(name)) => format!("no game of {name} is running"),
                (None, None) => "no game is running".into(),
            };
            return Err(HarnessError::Config(format!(
                "{what} (looked in {} for {} s); {}",
                dir.display(),
                args.wait_secs,
                finished_games_are_in(&results)
            ))
            .into());
        };
        // Once open, the file can be read to its end even after it is removed.
        let file = match crate::input_file::open_regular(&path) {
            Ok(f) => f,
            // A listing that lags (a network drive's cache) still shows a
            // game that has ended: look for another one.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && wanted.is_none() => {
                watched.push(path);
                continue;
            }
            Err(e) => {
                return Err(HarnessError::Config(format!(
                    "{}: cannot read it: {e}",
                    path.display()
                ))
                .into())
            }
        };
        let tail = LiveTail::new(file, &path);
        let code = follow(BufReader::new(tail), &path, &mut out, &mut || {
            referee.gone()
        })?;
        watched.push(path);
        first = false;
        if !args.follow || code != exit::OK {
            return Ok(code);
        }
        writeln!(out, "(--follow: waiting for the next game)")?;
        out.flush()?;
    }
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
                let pos = parse_board_string(&board, color.opponent()).ok();
                let last = match mv {
                    Move::Play(square) => Some(square),
                    Move::Pass => None,
                };
                if tty {
                    write!(out, "\x1b[2J\x1b[H{header}\n\n")?;
                }
                if let Some(pos) = pos {
                    let d = pos.discs();
                    write!(out, "{}", diagram_marked(&pos, last))?;
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
