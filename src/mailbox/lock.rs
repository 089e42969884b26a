//! The referee's exclusive lock on a message board, with stale-lock recovery.
//!
//! Owns `referee.lock` (an fs2 lock: fast exclusion on one machine) and the
//! `REFEREE/` folder with its `OWNER` file (exclusion across machines, where
//! flock sees nothing): acquire by rename, a heartbeat thread, staleness
//! judged only on this process's monotonic clock, break by rename-aside.
//! Never compares clocks of two machines; never touches mailboxes.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use fs2::FileExt;

use super::files::replace;

/// The lock folder inside the board.
pub const LOCK_DIR: &str = "REFEREE";
/// The owner record inside the lock folder.
pub const OWNER_FILE: &str = "OWNER";
/// The fs2 lock file inside the board.
pub const FLOCK_FILE: &str = "referee.lock";
/// A lock whose OWNER did not change for this long is stale.
pub const DEFAULT_STALE: Duration = Duration::from_secs(30);
/// How often the holder rewrites OWNER (shorter if the stale period is short).
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// How to take the lock.
#[derive(Clone, Debug)]
pub struct LockOptions {
    /// OWNER unchanged this long (on our own clock) means its holder is gone.
    pub stale: Duration,
    /// Also take the same-machine fs2 lock (off only for tests of the
    /// cross-machine folder lock, or drives where flock hangs).
    pub flock: bool,
    /// What the holder runs, shown to anyone refused (e.g. `tournament run`).
    pub command: String,
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions {
            stale: DEFAULT_STALE,
            flock: true,
            command: "tournament".into(),
        }
    }
}

impl LockOptions {
    fn heartbeat(&self) -> Duration {
        HEARTBEAT.min(self.stale / 6).max(Duration::from_millis(10))
    }

    /// How long a holder may go without a heartbeat before it stops acting.
    fn give_up(&self) -> Duration {
        self.stale / 3
    }
}

/// Who holds (or held) a board: the content of `REFEREE/OWNER`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRecord {
    pub token: String,
    pub host: String,
    pub pid: u32,
    /// Start time on the holder's own clock (shown, never compared).
    pub started: String,
    pub heartbeat: u64,
    pub board: String,
    pub command: String,
}

impl OwnerRecord {
    pub fn encode(&self) -> String {
        format!(
            "token={}\nhost={}\npid={}\nstarted={}\nheartbeat={}\nboard={}\ncommand={}\n",
            self.token, self.host, self.pid, self.started, self.heartbeat, self.board, self.command
        )
    }

    pub fn parse(text: &str) -> Option<OwnerRecord> {
        let mut r = OwnerRecord {
            token: String::new(),
            host: String::new(),
            pid: 0,
            started: String::new(),
            heartbeat: 0,
            board: String::new(),
            command: String::new(),
        };
        for line in text.lines() {
            let (k, v) = line.split_once('=')?;
            match k {
                "token" => r.token = v.to_string(),
                "host" => r.host = v.to_string(),
                "pid" => r.pid = v.parse().ok()?,
                "started" => r.started = v.to_string(),
                "heartbeat" => r.heartbeat = v.parse().ok()?,
                "board" => r.board = v.to_string(),
                "command" => r.command = v.to_string(),
                _ => {}
            }
        }
        (!r.token.is_empty()).then_some(r)
    }
}

impl fmt::Display for OwnerRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` on host {} (pid {}), board {}, since {} (its clock)",
            self.command, self.host, self.pid, self.board, self.started
        )
    }
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another referee holds the board and looks alive.
    Held {
        board: PathBuf,
        owner: Option<Box<OwnerRecord>>,
        /// Time since we last saw OWNER change (on our clock).
        heartbeat_age: Duration,
        stale: Duration,
    },
    Io(PathBuf, io::Error),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Held {
                board,
                owner,
                heartbeat_age,
                stale,
            } => {
                write!(
                    f,
                    "the board {} is in use by another referee: ",
                    board.display()
                )?;
                match owner {
                    Some(o) => write!(
                        f,
                        "{o}; its heartbeat #{} changed {:.1} s ago",
                        o.heartbeat,
                        heartbeat_age.as_secs_f64()
                    )?,
                    None => write!(f, "its owner record is unreadable")?,
                }
                write!(
                    f,
                    ". Wait for it to finish or stop it; a referee that died is taken over \
                     automatically once its heartbeat has not changed for {} s",
                    stale.as_secs_f64()
                )
            }
            LockError::Io(path, e) => write!(f, "cannot lock the board at {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for LockError {}

/// This machine's host name.
pub fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes a
        // NUL-terminated name into it (truncating if needed).
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            return String::from_utf8_lossy(&buf[..end]).into_owned();
        }
    }
    std::env::var("HOSTNAME")
        .or_else(|_| std::env::var("COMPUTERNAME"))
        .unwrap_or_else(|_| "unknown-host".into())
}

fn new_token() -> String {
    format!("{:016x}{:08x}", rand::random::<u64>(), std::process::id())
}

fn read_owner_text(board: &Path) -> io::Result<String> {
    fs::read_to_string(board.join(LOCK_DIR).join(OWNER_FILE))
}

/// Reads the current owner of a board, if any.
pub fn read_owner(board: &Path) -> Option<OwnerRecord> {
    read_owner_text(board)
        .ok()
        .and_then(|t| OwnerRecord::parse(&t))
}

/// Holder state shared with the heartbeat thread.
struct Held {
    lost: AtomicBool,
    reason: Mutex<Option<String>>,
    last_ok: Mutex<Instant>,
    give_up: Duration,
}

impl Held {
    fn lose(&self, why: String) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            tracing::error!("this referee no longer owns the board: {why}; it stops acting");
            *r = Some(why);
        }
        self.lost.store(true, Ordering::SeqCst);
    }

    fn check(&self) -> Result<(), String> {
        if !self.lost.load(Ordering::SeqCst) {
            let since = self
                .last_ok
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed();
            if since <= self.give_up {
                return Ok(());
            }
            self.lose(format!(
                "no heartbeat for {:.1} s (the process was stopped or the drive did not answer); \
                 another referee may have taken over",
                since.as_secs_f64()
            ));
        }
        Err(self
            .reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_default())
    }
}

/// The locks this process holds, so that every write to a board (a move
/// file, a mailbox clean-up) can first ask whether it still may.
static HELD: Mutex<Vec<std::sync::Weak<Held>>> = Mutex::new(Vec::new());

/// Ok while every board lock this process holds is still ours (or it holds
/// none); otherwise why not. Checked before every write to a board, so a
/// referee that lost the board (stopped past the stale period, then
/// continued) never touches the new holder's files.
pub fn may_write_board() -> Result<(), String> {
    let held: Vec<Arc<Held>> = HELD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .collect();
    held.iter().try_for_each(|h| h.check())
}

/// An exclusive hold on a board; released on drop.
pub struct BoardLock {
    board: PathBuf,
    record: OwnerRecord,
    held: Arc<Held>,
    stop: Option<crossbeam_channel::Sender<()>>,
    heartbeat: Option<JoinHandle<()>>,
    flock: Option<File>,
    took_over_live: bool,
}

impl fmt::Debug for BoardLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BoardLock({}, {})",
            self.board.display(),
            self.record.token
        )
    }
}

impl BoardLock {
    /// Takes the board, creating its folder if needed. Refuses (with who
    /// holds it) if another live referee does; takes over a stale lock.
    pub fn acquire(board: &Path, opts: &LockOptions) -> Result<BoardLock, LockError> {
        let io_err = |e| LockError::Io(board.to_path_buf(), e);
        fs::create_dir_all(board).map_err(io_err)?;
        let board = fs::canonicalize(board).map_err(io_err)?;
        let flock = if opts.flock {
            let f = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(board.join(FLOCK_FILE))
                .map_err(io_err)?;
            if f.try_lock_exclusive().is_err() {
                return Err(LockError::Held {
                    owner: read_owner(&board).map(Box::new),
                    board,
                    heartbeat_age: Duration::ZERO,
                    stale: opts.stale,
                });
            }
            Some(f)
        } else {
            None
        };
        let record = OwnerRecord {
            token: new_token(),
            host: hostname(),
            pid: std::process::id(),
            started: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            heartbeat: 0,
            board: board.display().to_string(),
            command: opts.command.clone(),
        };
        let took_over_live = acquire_folder(&board, &record, opts, flock.is_some())?;
        let own = OwnDir::open(&board.join(LOCK_DIR)).map_err(io_err)?;
        let held = Arc::new(Held {
            lost: AtomicBool::new(false),
            reason: Mutex::new(None),
            last_ok: Mutex::new(Instant::now()),
            give_up: opts.give_up(),
        });
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let heartbeat = {
            let (board, mut record, held) = (board.clone(), record.clone(), Arc::clone(&held));
            let every = opts.heartbeat();
            std::thread::Builder::new()
                .name("board-heartbeat".into())
                .spawn(move || heartbeat_loop(&board, &own, &mut record, &held, every, &stopped))
                .map_err(io_err)?
        };
        {
            let mut all = HELD.lock().unwrap_or_else(|e| e.into_inner());
            all.retain(|w| w.strong_count() > 0);
            all.push(Arc::downgrade(&held));
        }
        tracing::debug!(board = %board.display(), token = %record.token, "board lock taken");
        Ok(BoardLock {
            board,
            record,
            held,
            stop: Some(stop),
            heartbeat: Some(heartbeat),
            flock,
            took_over_live,
        })
    }

    /// Ok while this referee still owns the board; otherwise why not. Every
    /// write to the board must be preceded by this check.
    pub fn ensure_held(&self) -> Result<(), String> {
        self.held.check()
    }

    pub fn board(&self) -> &Path {
        &self.board
    }

    /// Whether this lock was taken over from a holder whose process may
    /// still run, with bots that may still answer in its mailboxes.
    pub fn took_over_live(&self) -> bool {
        self.took_over_live
    }

    pub fn owner(&self) -> &OwnerRecord {
        &self.record
    }
}

impl Drop for BoardLock {
    fn drop(&mut self) {
        HELD.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|w| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), Arc::as_ptr(&self.held)));
        drop(self.stop.take());
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        if self.held.check().is_ok() {
            release_folder(&self.board, &self.record.token);
        }
        if let Some(f) = self.flock.take() {
            let _ = fs2::FileExt::unlock(&f);
        }
    }
}

/// Our own lock folder, held open so heartbeats go into *it* even after a
/// breaker moved it aside and made a new `REFEREE/`: a holder that was
/// stopped and continued then never overwrites the new owner's record.
struct OwnDir {
    #[cfg(unix)]
    dir: File,
    #[cfg(not(unix))]
    path: PathBuf,
}

impl OwnDir {
    fn open(lock_dir: &Path) -> io::Result<OwnDir> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let dir = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                .open(lock_dir)?;
            Ok(OwnDir { dir })
        }
        #[cfg(not(unix))]
        {
            Ok(OwnDir {
                path: lock_dir.to_path_buf(),
            })
        }
    }

    /// Replaces OWNER inside our folder (temp file + rename, both relative
    /// to the open folder).
    fn write_owner(&self, content: &[u8], token: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::ffi::CString;
            use std::os::unix::io::{AsRawFd, FromRawFd};
            let fd = self.dir.as_raw_fd();
            let tmp = CString::new(format!(".OWNER.tmp-{token}")).map_err(io::Error::other)?;
            let owner = CString::new(OWNER_FILE).map_err(io::Error::other)?;
            // SAFETY: openat on our directory fd with a valid name; the
            // returned fd is owned by the File made from it.
            let raw = unsafe {
                libc::openat(
                    fd,
                    tmp.as_ptr(),
                    libc::O_WRONLY
                        | libc::O_CREAT
                        | libc::O_TRUNC
                        | libc::O_NOFOLLOW
                        | libc::O_CLOEXEC,
                    0o644,
                )
            };
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut f = unsafe { File::from_raw_fd(raw) };
            std::io::Write::write_all(&mut f, content)?;
            drop(f);
            // SAFETY: renameat within our directory fd, valid names.
            if unsafe { libc::renameat(fd, tmp.as_ptr(), fd, owner.as_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
        #[cfg(not(unix))]
        {
            let _ = token;
            replace(&self.path, OWNER_FILE, content)
        }
    }
}

fn heartbeat_loop(
    board: &Path,
    own: &OwnDir,
    record: &mut OwnerRecord,
    held: &Held,
    every: Duration,
    stopped: &crossbeam_channel::Receiver<()>,
) {
    loop {
        match stopped.recv_timeout(every) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        // Never act after the give-up time: a breaker may already own it.
        if held.check().is_err() {
            return;
        }
        record.heartbeat += 1;
        if let Err(e) = own.write_owner(record.encode().as_bytes(), &record.token) {
            tracing::warn!("board heartbeat: cannot write OWNER: {e}");
            continue;
        }
        // Read back by name: is the board's lock still the one we wrote?
        match read_owner_text(board) {
            Ok(text) => match OwnerRecord::parse(&text) {
                Some(o) if o.token == record.token => {
                    *held.last_ok.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
                }
                Some(o) => {
                    held.lose(format!("the board was taken over by {o}"));
                    return;
                }
                None => {
                    held.lose("the lock's OWNER file is unreadable".into());
                    return;
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A breaker may have moved it aside for a moment to look at
                // it (and puts a live lock back): not a loss yet. Staying
                // gone past the give-up time is (see `Held::check`).
                tracing::debug!("board heartbeat: REFEREE/OWNER is missing; retrying");
            }
            Err(e) => tracing::warn!("board heartbeat: cannot read OWNER: {e}"),
        }
    }
}

/// The cross-machine part of acquiring: create-and-rename, read back, judge
/// staleness, break by rename-aside. `flock_held` says the same-machine
/// lock is ours, so a same-host owner whose pid is gone is dead for sure.
/// Returns whether it took the board over from a holder whose process may
/// still run (on another machine, or stopped): that holder's bots may still
/// be answering in its mailboxes.
pub fn acquire_folder(
    board: &Path,
    record: &OwnerRecord,
    opts: &LockOptions,
    flock_held: bool,
) -> Result<bool, LockError> {
    let io_err = |e| LockError::Io(board.to_path_buf(), e);
    let lock_dir = board.join(LOCK_DIR);
    let tmp = board.join(format!("{LOCK_DIR}.tmp-{}", record.token));
    let dead = board.join(format!("{LOCK_DIR}.dead-{}", record.token));
    let look_every = (opts.stale / 20).clamp(Duration::from_millis(5), Duration::from_millis(250));
    // What we last saw in OWNER, since when (our clock), and whether we have
    // seen it change at all.
    let mut seen: Option<(String, Instant)> = None;
    let mut changed_once = false;
    let mut empty_tries = 0;
    let mut took_over_live = false;
    loop {
        let _ = fs::create_dir(&tmp);
        replace(&tmp, OWNER_FILE, record.encode().as_bytes()).map_err(io_err)?;
        let _ = fs::rename(&tmp, &lock_dir);
        let current = read_owner_text(board);
        let _ = fs::remove_dir_all(&tmp);
        let text = match current {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // No lock folder (or one without OWNER): try again, but not forever.
                empty_tries += 1;
                if empty_tries > 200 {
                    return Err(io_err(io::Error::other(
                        "cannot create the lock folder REFEREE/ (rename keeps failing)",
                    )));
                }
                std::thread::sleep(look_every);
                String::new()
            }
            Err(e) => return Err(io_err(e)),
        };
        let owner = OwnerRecord::parse(&text);
        if owner.as_ref().is_some_and(|o| o.token == record.token) {
            return Ok(took_over_live);
        }
        let now = Instant::now();
        let dead_here = owner.as_ref().is_some_and(|o| {
            flock_held
                && o.host == record.host
                && o.pid != record.pid
                && !crate::player::process::pid_alive(o.pid)
        });
        match &seen {
            Some((prev, _)) if *prev == text => {}
            Some(_) => {
                changed_once = true;
                seen = Some((text.clone(), now));
            }
            None => seen = Some((text.clone(), now)),
        }
        let since = seen.as_ref().map_or(now, |s| s.1);
        if changed_once && !text.is_empty() {
            return Err(LockError::Held {
                board: board.to_path_buf(),
                owner: owner.map(Box::new),
                heartbeat_age: now - since,
                stale: opts.stale,
            });
        }
        if !dead_here && now - since < opts.stale {
            if empty_tries == 0 {
                std::thread::sleep(look_every);
            }
            continue;
        }
        // Stale. Look once more right before acting: another breaker may
        // have taken it over a moment ago.
        if read_owner_text(board).unwrap_or_default() != text {
            seen = None;
            std::thread::sleep(look_every);
            continue;
        }
        // Move it aside, make sure it is what we judged, then delete.
        if fs::rename(&lock_dir, &dead).is_err() {
            // Someone else moved it first. Do not rush into the gap they
            // may be about to close: look again after a pause.
            seen = None;
            std::thread::sleep(look_every);
            continue;
        }
        let aside = fs::read_to_string(dead.join(OWNER_FILE)).unwrap_or_default();
        if aside != text {
            // It changed under us (a heartbeat, or another breaker's lock): put it back.
            if let Err(e) = fs::rename(&dead, &lock_dir) {
                tracing::warn!("could not restore a lock moved aside: {e}");
            }
            seen = None;
            changed_once = false;
            std::thread::sleep(look_every);
            continue;
        }
        let _ = fs::remove_dir_all(&dead);
        took_over_live |= owner.is_some() && !dead_here;
        match &owner {
            Some(o) => {
                tracing::warn!(
                "took over the board from a stale lock: {o}, heartbeat #{} unchanged for {:.1} s{}",
                o.heartbeat,
                (now - since).as_secs_f64(),
                if dead_here { " (its process is gone)" } else { "" }
            )
            }
            None => tracing::warn!("removed a lock folder without an owner record"),
        }
        seen = None;
        changed_once = false;
    }
}

/// Removes our lock folder, making sure it is ours first.
fn release_folder(board: &Path, token: &str) {
    let lock_dir = board.join(LOCK_DIR);
    let aside = board.join(format!("{LOCK_DIR}.dead-{token}"));
    if fs::rename(&lock_dir, &aside).is_err() {
        return;
    }
    let ours = fs::read_to_string(aside.join(OWNER_FILE))
        .ok()
        .and_then(|t| OwnerRecord::parse(&t))
        .is_some_and(|o| o.token == token);
    if ours {
        let _ = fs::remove_dir_all(&aside);
    } else {
        let _ = fs::rename(&aside, &lock_dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(stale_ms: u64) -> LockOptions {
        LockOptions {
            stale: Duration::from_millis(stale_ms),
            flock: true,
            command: "test".into(),
        }
    }

    #[test]
    fn owner_record_round_trips() {
        let r = OwnerRecord {
            token: "abc".into(),
            host: "h".into(),
            pid: 42,
            started: "2026-01-01T00:00:00Z".into(),
            heartbeat: 7,
            board: "/b".into(),
            command: "tournament run".into(),
        };
        assert_eq!(OwnerRecord::parse(&r.encode()), Some(r));
        assert_eq!(OwnerRecord::parse("garbage"), None);
    }

    #[test]
    fn second_holder_in_the_same_process_is_refused_then_allowed_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = BoardLock::acquire(dir.path(), &opts(3000)).unwrap();
        let err = BoardLock::acquire(dir.path(), &opts(3000)).unwrap_err();
        assert!(matches!(err, LockError::Held { .. }), "{err}");
        assert!(err.to_string().contains(&hostname()), "{err}");
        drop(first);
        assert!(!dir.path().join(LOCK_DIR).exists());
        BoardLock::acquire(dir.path(), &opts(3000)).unwrap();
    }

    #[test]
    fn heartbeat_advances_and_a_removed_lock_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let lock = BoardLock::acquire(dir.path(), &opts(600)).unwrap();
        std::thread::sleep(Duration::from_millis(350));
        let beat = read_owner(dir.path()).unwrap().heartbeat;
        assert!(beat >= 2, "heartbeat {beat}");
        assert!(lock.ensure_held().is_ok());
        fs::remove_dir_all(dir.path().join(LOCK_DIR)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let why = lock.ensure_held().unwrap_err();
        assert!(why.contains("no heartbeat"), "{why}");
    }
}
