//! The referee's exclusive lock on a message board, with stale-lock recovery.
//!
//! Owns `referee.lock` (an fs2 lock: fast exclusion on one machine) and the
//! `REFEREE/` folder with its `OWNER` file (exclusion across machines, where
//! flock sees nothing): acquire by rename, a heartbeat thread, staleness
//! judged only on this process's monotonic clock, break by swapping our
//! lock in (by rename-aside where the drive cannot swap names).
//! Never compares clocks of two machines; never touches mailboxes. Works
//! through the board folder held open ([`Dir`]): follows no link in the
//! board (a `referee.lock` or `REFEREE/` that is a link is refused), and
//! deletes only lock files and folders a referee made. A holder that finds
//! its `REFEREE/` removed or its `OWNER` overwritten while its heartbeat is
//! fresh (so no other referee can have judged it stale) puts them back.
//! Owns too the proof of holding a board ([`WriteAccess`]) that every
//! write to it takes; keeps no registry of the locks a process holds.

use std::fmt;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use fs2::FileExt;

use mailbox_protocol::drive;
use mailbox_protocol::files::{cannot_exchange, Dir, ReadOutcome};

mod judge;

use judge::{Judge, Look, Step};

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
    /// Holders this process already found stale (e.g. the board's, just
    /// taken over): another lock of the same process (host, pid, start) is
    /// taken over at once, not after a second stale period. Safe: that
    /// process stopped acting on its own once its heartbeat stood still
    /// for a third of its stale period (every write to the board checks the
    /// board's lock, and so does every record added to the results).
    pub stale_holders: Vec<OwnerRecord>,
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions {
            stale: DEFAULT_STALE,
            flock: true,
            command: "tournament".into(),
            stale_holders: Vec::new(),
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
    /// The holder's stale period (its `stale-lock-ms`): another referee
    /// takes the lock over once the heartbeat has not changed this long.
    /// 0: not recorded (an older referee); the taker's own period applies.
    pub stale_ms: u64,
}

impl OwnerRecord {
    /// The record as written. The heartbeat has 20 digits (leading zeros),
    /// so every record of one holder has the same length: a reader on
    /// another machine whose drive caches the file's length (sshfs, SMB)
    /// never reads one cut short (a `stale_ms` cut from 30000 to 3000),
    /// and on SMB, where OWNER is rewritten in place, a read that races a
    /// write can only mix the heartbeat's digits.
    pub fn encode(&self) -> String {
        format!(
            "token={}\nhost={}\npid={}\nstarted={}\nheartbeat={:020}\nboard={}\ncommand={}\nstale_ms={}\n",
            self.token,
            self.host,
            self.pid,
            self.started,
            self.heartbeat,
            self.board,
            self.command,
            self.stale_ms
        )
    }

    /// How long this holder's heartbeat must stand still before the lock
    /// is taken over: its own recorded period, else `ours`.
    pub fn stale_period(&self, ours: Duration) -> Duration {
        match self.stale_ms {
            0 => ours,
            ms => Duration::from_millis(ms),
        }
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
            stale_ms: 0,
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
                "stale_ms" => r.stale_ms = v.parse().ok()?,
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
    /// The board path is not a folder a board may be made in (see
    /// [`super::check_board_path`]).
    BadBoard(String),
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
                     automatically once its heartbeat has not changed for {} s{}",
                    stale.as_secs_f64(),
                    if owner.as_ref().is_some_and(|o| o.stale_ms > 0) {
                        " (its stale-lock-ms)"
                    } else {
                        ""
                    }
                )
            }
            LockError::BadBoard(why) => write!(f, "{why}"),
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

/// The text of `REFEREE/OWNER`, read without following a link; a link, a
/// FIFO, a huge or linked file reads as garbage (never a valid record).
fn read_owner_text(board: &Path) -> io::Result<String> {
    open_lock_folder(&Dir::open(board)?).map(|(_, text)| text)
}

/// The board's lock folder, held open, and the text of its `OWNER` (told
/// as [`read_owner_text`] tells it). A referee that finds its own token
/// there holds *this* folder: opening `REFEREE/` again by name a moment
/// later may give another one.
fn open_lock_folder(board_dir: &Dir) -> io::Result<(Dir, String)> {
    let dir = board_dir.child(LOCK_DIR).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            e
        } else {
            io::Error::other(format!("{LOCK_DIR}/ is not a plain folder: {e}"))
        }
    })?;
    let text = match dir.read_limited(OWNER_FILE, 4096)? {
        ReadOutcome::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        ReadOutcome::Missing => return Err(io::ErrorKind::NotFound.into()),
        other => format!("(not an owner record: {other:?})"),
    };
    Ok((dir, text))
}

/// Removes a lock folder a referee made (`REFEREE.tmp-…`, `REFEREE.dead-…`):
/// its OWNER and a heartbeat's temp file, then the folder. Anything else in
/// it was not made by a referee: it stays, and so does the folder.
fn remove_lock_folder(board: &Path, name: &str) {
    let Ok(dir) = Dir::open(board).and_then(|b| b.child(name)) else {
        return;
    };
    // On a Windows share a file someone reads (a referee on another
    // machine looking at OWNER) cannot be removed for that moment.
    for entry in dir.names().unwrap_or_default() {
        let ours = entry == OWNER_FILE || entry.starts_with(".OWNER.tmp-");
        if ours && dir.plain_file_len(&entry).is_some() {
            let _ = drive::retrying(|| dir.remove_file(&entry));
        }
    }
    drop(dir);
    if let Ok(b) = Dir::open(board) {
        if let Err(e) = drive::retrying(|| b.remove_dir(name)) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(
                    "left {} in place: it holds files no referee made ({e})",
                    board.join(name).display()
                );
            }
        }
    }
}

/// Opens (creating it, never truncating or following a link) the
/// same-machine lock file `referee.lock`.
/// Whether the holder `o` (on this host) still runs: its pid is alive and
/// belongs to a process that started before it took the lock (a pid reused
/// since does not count).
pub fn holder_alive(o: &OwnerRecord) -> bool {
    match humantime::parse_rfc3339_weak(&o.started) {
        Ok(t) => crate::pid::pid_alive_since(o.pid, t),
        Err(_) => crate::pid::pid_alive(o.pid),
    }
}

/// How long the kernel lock of a holder whose process is gone may outlive
/// it: a child it was starting when it died holds the lock's descriptor
/// until that child's exec closes it.
const DEAD_FLOCK_WAIT: Duration = Duration::from_secs(2);

/// True once `flock` got the kernel lock that a holder which is gone (on
/// this host, by its owner record) left behind in a child it was starting,
/// within [`DEAD_FLOCK_WAIT`]. False at once for a live or foreign holder.
fn dead_holders_flock_goes(board: &Path, flock: &File) -> bool {
    let dead = read_owner(board)
        .is_some_and(|o| o.host == hostname() && o.pid != std::process::id() && !holder_alive(&o));
    if !dead {
        return false;
    }
    let until = Instant::now() + DEAD_FLOCK_WAIT;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        if flock.try_lock_exclusive().is_ok() {
            return true;
        }
    }
    false
}

fn open_flock_file(board: &Dir) -> io::Result<File> {
    use std::os::fd::AsFd;
    let path = board.path().join(FLOCK_FILE);
    let fd = rustix::fs::openat(
        board.as_fd(),
        FLOCK_FILE,
        rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::CREATE
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::CLOEXEC
            | rustix::fs::OFlags::NOCTTY,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => io::Error::other(format!(
            "{} is a symlink; the referee does not follow it (remove it: the referee makes its own)",
            path.display()
        )),
        e => io::Error::other(format!("{}: {}", path.display(), io::Error::from(e))),
    })?;
    let f = File::from(fd);
    if !f.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file (remove it: the referee makes its own)",
            path.display()
        )));
    }
    Ok(f)
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

    /// The lock was let go: every write that still asks is refused.
    fn release(&self) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            *r = Some("this referee released the board's lock".into());
        }
        self.lost.store(true, Ordering::SeqCst);
    }

    fn check(&self) -> Result<(), LockLost> {
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
        Err(LockLost(
            self.reason
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_default(),
        ))
    }
}

/// This referee no longer holds the board: why, in words. A kind of its
/// own wherever it stops a write (`mailbox::AnswerError::LockLost`,
/// `ClearError::LockLost`), never inside an `io::Error`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LockLost(pub String);

/// Proof that this process may write to a board: borrowed from the
/// [`BoardLock`] that holds it ([`BoardLock::access`]), or made for a board
/// folder this process made for itself and names to no other referee
/// ([`WriteAccess::unshared`]: check-bot's temporary board, tests). Every
/// writing function of the board (a move file, a mailbox's clean-up, the
/// sweep of leftovers) takes one, so writing without the lock does not
/// compile; each write asks [`WriteAccess::check`] first, so a referee that
/// lost the board (stopped past the stale period, then continued) never
/// touches the new holder's files.
#[derive(Clone)]
pub struct WriteAccess {
    board: PathBuf,
    /// The lock's state, shared with its heartbeat; `None` for an
    /// unshared board (nothing to lose).
    held: Option<Arc<Held>>,
}

impl fmt::Debug for WriteAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.held.is_some() {
            "locked"
        } else {
            "unshared"
        };
        write!(f, "WriteAccess({}, {how})", self.board.display())
    }
}

impl WriteAccess {
    /// Access to a board folder this process made for itself and tells no
    /// other referee of (a fresh temporary folder): no lock guards it, so
    /// none can be lost. Never for a board named in a configuration.
    pub fn unshared(board: &Path) -> WriteAccess {
        WriteAccess {
            board: fs::canonicalize(board).unwrap_or_else(|_| board.to_path_buf()),
            held: None,
        }
    }

    /// The board this access is to (canonical).
    pub fn board(&self) -> &Path {
        &self.board
    }

    /// Ok while the board is still ours; otherwise why not. Asked before
    /// every write to the board.
    pub fn check(&self) -> Result<(), LockLost> {
        match &self.held {
            Some(held) => held.check(),
            None => Ok(()),
        }
    }
}

/// An exclusive hold on a board; released on drop.
pub struct BoardLock {
    board: PathBuf,
    record: OwnerRecord,
    held: Arc<Held>,
    /// The proof handed to writers (shares `held`).
    access: WriteAccess,
    stop: Option<crossbeam_channel::Sender<()>>,
    /// The heartbeat thread; it gives our lock folder back when it ends.
    heartbeat: Option<JoinHandle<OwnDir>>,
    flock: Option<File>,
    took_over_live: bool,
    took_over_from: Option<OwnerRecord>,
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
        Self::acquire_folder(board, "the board folder", opts)
    }

    /// Takes `folder` with the board's machinery, `what` naming it in the
    /// log when it is made (e.g. `the results lock folder`).
    pub fn acquire_folder(
        board: &Path,
        what: &str,
        opts: &LockOptions,
    ) -> Result<BoardLock, LockError> {
        let io_err = |e| LockError::Io(board.to_path_buf(), e);
        super::check_board_path(board).map_err(LockError::BadBoard)?;
        match fs::create_dir(board) {
            Ok(()) => tracing::info!("made {what} {}", board.display()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err(e)),
        }
        let board = fs::canonicalize(board).map_err(io_err)?;
        let board_dir = Dir::open(&board).map_err(io_err)?;
        let flock = if opts.flock {
            let f = open_flock_file(&board_dir).map_err(io_err)?;
            if f.try_lock_exclusive().is_err() && !dead_holders_flock_goes(&board, &f) {
                let owner = read_owner(&board);
                return Err(LockError::Held {
                    stale: owner
                        .as_ref()
                        .map_or(opts.stale, |o| o.stale_period(opts.stale)),
                    owner: owner.map(Box::new),
                    board,
                    heartbeat_age: Duration::ZERO,
                });
            }
            Some(f)
        } else {
            None
        };
        let mut record = OwnerRecord {
            token: new_token(),
            host: hostname(),
            pid: std::process::id(),
            started: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            heartbeat: 0,
            board: board.display().to_string(),
            command: opts.command.clone(),
            stale_ms: opts.stale.as_millis().try_into().unwrap_or(u64::MAX),
        };
        let AcquiredFolder {
            took_over_live,
            took_over_from,
            folder: lock_dir,
        } = acquire_folder(&board, &mut record, opts, flock.is_some())?;
        let own = OwnDir {
            board: board_dir,
            lock: lock_dir,
        };
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
                .spawn(move || heartbeat_loop(&board, own, &mut record, &held, every, &stopped))
                .map_err(io_err)?
        };
        tracing::debug!(board = %board.display(), token = %record.token, "board lock taken");
        Ok(BoardLock {
            access: WriteAccess {
                board: board.clone(),
                held: Some(Arc::clone(&held)),
            },
            board,
            record,
            held,
            stop: Some(stop),
            heartbeat: Some(heartbeat),
            flock,
            took_over_live,
            took_over_from,
        })
    }

    /// Ok while this referee still owns the board; otherwise why not. Every
    /// write to the board must be preceded by this check.
    pub fn ensure_held(&self) -> Result<(), LockLost> {
        self.held.check()
    }

    /// The proof of this lock that the board's writing functions take.
    pub fn access(&self) -> &WriteAccess {
        &self.access
    }

    /// Whether `access` is (a copy of) this lock's proof.
    pub fn grants(&self, access: &WriteAccess) -> bool {
        access
            .held
            .as_ref()
            .is_some_and(|h| Arc::ptr_eq(h, &self.held))
    }

    pub fn board(&self) -> &Path {
        &self.board
    }

    /// Whether this lock was taken over from a holder whose process may
    /// still run, with bots that may still answer in its mailboxes.
    pub fn took_over_live(&self) -> bool {
        self.took_over_live
    }

    /// The holder this lock was taken over from after its heartbeat stood
    /// still, if any (for [`LockOptions::stale_holders`]).
    pub fn took_over_from(&self) -> Option<&OwnerRecord> {
        self.took_over_from.as_ref()
    }

    pub fn owner(&self) -> &OwnerRecord {
        &self.record
    }
}

impl Drop for BoardLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        let own = self.heartbeat.take().and_then(|h| h.join().ok());
        if self.held.check().is_ok() {
            release_folder(&self.board, &self.record.token, own.as_ref());
        }
        // A copy of its access kept elsewhere writes nothing more.
        self.held.release();
        if let Some(f) = self.flock.take() {
            let _ = fs2::FileExt::unlock(&f);
        }
    }
}

/// Our own lock folder, held open so heartbeats go into *it* even after a
/// breaker moved it aside and made a new `REFEREE/`: a holder that was
/// stopped and continued then never overwrites the new owner's record.
struct OwnDir {
    board: Dir,
    lock: Dir,
}

impl OwnDir {
    /// Replaces OWNER inside our folder (a file of ours + rename, both
    /// relative to the open folder).
    fn write_owner(&self, content: &[u8]) -> io::Result<()> {
        self.lock.replace(OWNER_FILE, content)
    }

    /// Whether `REFEREE/` on the board is still the folder we hold.
    fn in_place(&self) -> bool {
        self.lock.still_at(&self.board, LOCK_DIR)
    }

    /// Puts our lock folder back after someone removed it or put another
    /// folder without a valid record in its place (moved aside, not
    /// deleted: it is not ours).
    fn restore(&mut self, record: &OwnerRecord) -> io::Result<()> {
        let tmp_name = format!("{LOCK_DIR}.tmp-{}", record.token);
        let (tmp, _) = self.board.child_or_create(&tmp_name)?;
        tmp.replace(OWNER_FILE, record.encode().as_bytes())?;
        if self.board.stat_exists(LOCK_DIR) {
            let aside = format!("{LOCK_DIR}.foreign-{}-{}", record.token, record.heartbeat);
            self.board.rename(LOCK_DIR, &self.board, &aside)?;
            tracing::warn!(
                "moved a {LOCK_DIR}/ that was not this referee's aside to {}",
                self.board.path().join(&aside).display()
            );
        }
        self.board.rename(&tmp_name, &self.board, LOCK_DIR)?;
        self.lock = tmp;
        Ok(())
    }
}

fn shorten(text: &str) -> String {
    let t: String = text.chars().take(80).collect();
    format!("{t:?}{}", if text.chars().count() > 80 { "…" } else { "" })
}

fn heartbeat_loop(
    board: &Path,
    mut own: OwnDir,
    record: &mut OwnerRecord,
    held: &Held,
    every: Duration,
    stopped: &crossbeam_channel::Receiver<()>,
) -> OwnDir {
    loop {
        match stopped.recv_timeout(every) {
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            _ => return own,
        }
        // Never act after the give-up time: a breaker may already own it.
        if held.check().is_err() {
            return own;
        }
        record.heartbeat += 1;
        if let Err(e) = own.write_owner(record.encode().as_bytes()) {
            tracing::debug!("board heartbeat: cannot write OWNER: {e}");
        }
        // Read back by name: is the board's lock still the one we wrote?
        // Our heartbeat is fresh here (checked above), so no other referee
        // can have judged this lock stale: a record that is not ours in our
        // own folder, a damaged record, or a folder removed, is someone
        // tampering (a bot), and the lock is put back. Another referee's
        // valid record, wherever it is, is a takeover: under load a breaker
        // may judge us stale before our own give-up time has passed, and
        // two holders are worse than a run stopped by a forged record.
        let text = read_owner_text(board);
        let ours = |t: &io::Result<String>| {
            t.as_ref()
                .ok()
                .and_then(|t| OwnerRecord::parse(t))
                .is_some_and(|o| o.token == record.token)
        };
        if ours(&text) {
            *held.last_ok.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            continue;
        }
        let taker = text.as_ref().ok().and_then(|t| OwnerRecord::parse(t));
        if let Some(o) = taker {
            held.lose(format!("the board was taken over by {o}"));
            return own;
        }
        match &text {
            Err(e) if e.kind() == io::ErrorKind::NotFound => tracing::warn!(
                "the board's lock {} was removed by someone else (a bot?); this referee still \
                 holds the board and puts it back",
                board.join(LOCK_DIR).display()
            ),
            Err(e) => tracing::warn!(
                "the board's lock {} is damaged ({e}); this referee still holds the board and \
                 puts it back",
                board.join(LOCK_DIR).display()
            ),
            Ok(t) => tracing::warn!(
                "{} was changed by someone else (a bot?): it held {}; this referee still holds \
                 the board and writes it again",
                board.join(LOCK_DIR).join(OWNER_FILE).display(),
                shorten(t)
            ),
        }
        let put_back = if own.in_place() {
            own.write_owner(record.encode().as_bytes())
        } else {
            own.restore(record)
        };
        match put_back {
            Ok(()) if ours(&read_owner_text(board)) => {
                *held.last_ok.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            }
            Ok(()) => tracing::warn!("board heartbeat: the lock put back was changed again"),
            Err(e) => tracing::warn!("board heartbeat: cannot put the lock back: {e}"),
        }
    }
}

/// What [`acquire_folder`] got: the lock folder it holds, open (the one it
/// found its token in), and whom it took the board from.
pub struct AcquiredFolder {
    /// It took the board over from a holder whose process may still run
    /// (on another machine, or stopped): that holder's bots may still be
    /// answering in its mailboxes.
    pub took_over_live: bool,
    /// The last holder it took the board over from.
    pub took_over_from: Option<OwnerRecord>,
    pub folder: Dir,
}

/// The cross-machine part of acquiring: create-and-rename, read back, and
/// do what the [`Judge`] decides from what was read (wait, stop, break by
/// rename-aside). `flock_held` says the same-machine lock is ours, so a
/// same-host owner whose pid is gone is dead for sure.
///
/// A break that found the lock changed gives `record` a new token: the
/// folder it swapped in may have been left on the board by another
/// breaker's swap-back, and is then nobody's (see [`break_lock`]).
pub fn acquire_folder(
    board: &Path,
    record: &mut OwnerRecord,
    opts: &LockOptions,
    flock_held: bool,
) -> Result<AcquiredFolder, LockError> {
    let io_err = |e| LockError::Io(board.to_path_buf(), e);
    let board_dir = Dir::open(board).map_err(io_err)?;
    let lock_dir = board.join(LOCK_DIR);
    let look_every = (opts.stale / 20).clamp(Duration::from_millis(5), Duration::from_millis(250));
    let mut judge = Judge::new(opts.stale);
    let mut empty_tries = 0;
    let mut took_over_live = false;
    let mut took_over_from = None;
    loop {
        let tmp_name = format!("{LOCK_DIR}.tmp-{}", record.token);
        let dead_name = format!("{LOCK_DIR}.dead-{}", record.token);
        let (tmp_dir, _) = board_dir.child_or_create(&tmp_name).map_err(io_err)?;
        tmp_dir
            .replace(OWNER_FILE, record.encode().as_bytes())
            .map_err(io_err)?;
        drop(tmp_dir);
        let _ = fs::rename(board.join(&tmp_name), &lock_dir);
        // Read through the folder held open: the folder we find our token
        // in is the one we hold (and the heartbeat writes into).
        let current = open_lock_folder(&board_dir);
        remove_lock_folder(board, &tmp_name);
        let (text, folder) = match current {
            Ok((d, t)) => (t, Some(d)),
            Err(e) if e.kind() == io::ErrorKind::NotFound && board_dir.stat_exists(LOCK_DIR) => {
                // A lock folder without its OWNER: damaged (or mid-break).
                (format!("({LOCK_DIR}/ without an {OWNER_FILE} file)"), None)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // No lock folder: try again, but not forever.
                empty_tries += 1;
                if empty_tries > 200 {
                    return Err(io_err(io::Error::other(
                        "cannot create the lock folder REFEREE/ (rename keeps failing)",
                    )));
                }
                std::thread::sleep(look_every);
                (String::new(), None)
            }
            Err(e) => return Err(io_err(e)),
        };
        let owner = OwnerRecord::parse(&text);
        let known_stale = owner.as_ref().is_some_and(|o| {
            opts.stale_holders
                .iter()
                .any(|h| h.host == o.host && h.pid == o.pid && h.started == o.started)
        });
        let dead_here = owner.as_ref().is_some_and(|o| {
            flock_held && o.host == record.host && o.pid != record.pid && !holder_alive(o)
        });
        let look = Look {
            text: &text,
            owner: owner.as_ref(),
            ours: owner.as_ref().is_some_and(|o| o.token == record.token) && folder.is_some(),
            holder_dead: dead_here || known_stale,
        };
        let now = Instant::now();
        let unchanged_for = match judge.step(&look, now) {
            Step::Acquired => {
                return Ok(AcquiredFolder {
                    took_over_live,
                    took_over_from,
                    folder: folder.expect("a look that is ours holds its folder"),
                })
            }
            Step::Busy {
                heartbeat_age,
                stale,
            } => {
                return Err(LockError::Held {
                    board: board.to_path_buf(),
                    owner: owner.map(Box::new),
                    heartbeat_age,
                    stale,
                })
            }
            Step::Wait { announce, stale } => {
                if announce {
                    tell_waiting(board, &lock_dir, owner.as_ref(), &text, stale);
                }
                if empty_tries == 0 {
                    std::thread::sleep(look_every);
                }
                continue;
            }
            Step::Break {
                announce,
                unchanged_for,
            } => {
                if announce {
                    let stale = judge.stale_period(&look);
                    tell_waiting(board, &lock_dir, owner.as_ref(), &text, stale);
                }
                unchanged_for
            }
        };
        // Stale. Look once more right before acting: another breaker may
        // have taken it over a moment ago.
        let again = read_owner_text(board).unwrap_or_else(|e| {
            if e.kind() == io::ErrorKind::NotFound && board_dir.stat_exists(LOCK_DIR) {
                format!("({LOCK_DIR}/ without an {OWNER_FILE} file)")
            } else {
                String::new()
            }
        });
        if again != text {
            judge.forget_seen();
            std::thread::sleep(look_every);
            continue;
        }
        match break_lock(board, &board_dir, record, &tmp_name, &dead_name, &text) {
            Break::Done => {}
            Break::Changed => {
                // Someone else broke it or took the board a moment ago.
                // Do not rush into the gap they may be about to close:
                // look again after a pause. And under a new token: the
                // folder we swapped in and back may not have come back to
                // us. When two breakers swap at once, one's swap-back can
                // put the other's folder on the board (and take a live
                // holder's folder off it): found there later, that folder
                // must not read as ours.
                record.token = new_token();
                judge.changed_under_us();
                std::thread::sleep(look_every);
                continue;
            }
        }
        took_over_live |= owner.is_some() && (!dead_here || known_stale);
        match &owner {
            Some(o) => {
                tracing::warn!(
                    "took over the board from a stale lock: {o}, heartbeat #{} unchanged for {:.1} s{}",
                    o.heartbeat,
                    unchanged_for.as_secs_f64(),
                    if known_stale {
                        " (the same referee whose other lock just went stale)"
                    } else if dead_here {
                        " (its process is gone)"
                    } else {
                        ""
                    }
                )
            }
            None => tracing::warn!("took over a lock folder without a valid owner record"),
        }
        took_over_from = owner.clone();
        judge.broke();
    }
}

/// Tells the user, once, who holds the board and when this referee takes
/// it over (`stale` from now) unless that holder's heartbeat moves.
fn tell_waiting(
    board: &Path,
    lock_dir: &Path,
    owner: Option<&OwnerRecord>,
    text: &str,
    stale: Duration,
) {
    match owner {
        Some(o) => tracing::warn!(
            "{} is locked by {o}, heartbeat #{}. Waiting for that referee: if its \
             heartbeat moves, this one stops (the board is in use); if not, this one \
             takes the board over at {} (in {:.1} s: {})",
            board.display(),
            o.heartbeat,
            humantime::format_rfc3339_seconds(SystemTime::now() + stale),
            stale.as_secs_f64(),
            if o.stale_ms > 0 {
                "the holder's stale-lock-ms"
            } else {
                "the holder recorded no stale-lock-ms; this referee's"
            }
        ),
        None => tracing::warn!(
            "the board's lock {} holds no valid owner record ({}): damaged (a bot?) or \
             made by hand; taking it over in {:.0} s unless a referee repairs it",
            lock_dir.display(),
            shorten(text),
            stale.as_secs_f64()
        ),
    }
}

/// What a breaker's attempt on a lock it judged stale came to.
enum Break {
    /// The lock judged stale is gone; where the drive swaps names, ours is
    /// in its place.
    Done,
    /// The board's lock was not the one judged (another breaker or a new
    /// holder was quicker): it is left as it was.
    Changed,
}

/// Breaks the board's lock whose OWNER read `judged`.
///
/// Where the drive swaps names, our own lock folder (`tmp_name`) and the
/// board's swap in one step, and we look at what we took: the stale lock
/// is deleted, anything else swapped back. The board is never without a
/// lock meanwhile, so no racer can put its lock into a gap while the lock
/// we took by mistake — a holder that has already told its caller it holds
/// the board — is out of place. Elsewhere (network drives) the lock is
/// moved aside to `dead_name`, looked at, and put back if it was not the
/// one judged; a racer's lock put in that moment stays, and the holder
/// moved aside learns it at its next heartbeat.
fn break_lock(
    board: &Path,
    board_dir: &Dir,
    record: &OwnerRecord,
    tmp_name: &str,
    dead_name: &str,
    judged: &str,
) -> Break {
    let ours = board_dir
        .child_or_create(tmp_name)
        .and_then(|(tmp, _)| tmp.replace(OWNER_FILE, record.encode().as_bytes()));
    let swapped = match ours.and_then(|()| board_dir.exchange(tmp_name, board_dir, LOCK_DIR)) {
        Ok(()) => true,
        Err(e) if cannot_exchange(&e) => false,
        Err(_) => {
            remove_lock_folder(board, tmp_name);
            return Break::Changed;
        }
    };
    if swapped {
        if lock_folder_text(board_dir, tmp_name) != judged {
            if let Err(e) = board_dir.exchange(tmp_name, board_dir, LOCK_DIR) {
                tracing::warn!("could not swap back a lock taken by mistake: {e}");
            }
            remove_lock_folder(board, tmp_name);
            return Break::Changed;
        }
        // The stale lock goes where a moved-aside one goes (files in it
        // that no referee made keep it there).
        let stale = match board_dir.rename(tmp_name, board_dir, dead_name) {
            Ok(()) => dead_name,
            Err(_) => tmp_name,
        };
        remove_lock_folder(board, stale);
        return Break::Done;
    }
    remove_lock_folder(board, tmp_name);
    if board_dir.rename(LOCK_DIR, board_dir, dead_name).is_err() {
        return Break::Changed;
    }
    if lock_folder_text(board_dir, dead_name) != judged {
        if let Err(e) = board_dir.rename(dead_name, board_dir, LOCK_DIR) {
            tracing::warn!("could not restore a lock moved aside: {e}");
        }
        return Break::Changed;
    }
    remove_lock_folder(board, dead_name);
    Break::Done
}

/// What the OWNER of the lock folder `name` on the board says, told the
/// way `read_owner_text` tells it to a breaker.
fn lock_folder_text(board_dir: &Dir, name: &str) -> String {
    match board_dir
        .child(name)
        .and_then(|d| d.read_limited(OWNER_FILE, 4096))
    {
        Ok(ReadOutcome::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
        Ok(ReadOutcome::Missing) => format!("({LOCK_DIR}/ without an {OWNER_FILE} file)"),
        Ok(other) => format!("(not an owner record: {other:?})"),
        Err(_) => String::new(),
    }
}

/// Removes our lock folder, making sure it is ours first.
fn release_folder(board: &Path, token: &str, own: Option<&OwnDir>) {
    // Our own folder, even if someone overwrote its OWNER a moment ago.
    let in_place = own.is_some_and(OwnDir::in_place);
    let lock_dir = board.join(LOCK_DIR);
    let aside_name = format!("{LOCK_DIR}.dead-{token}");
    let aside = board.join(&aside_name);
    if drive::retrying(|| fs::rename(&lock_dir, &aside)).is_err() {
        return;
    }
    let ours = in_place
        || match Dir::open(&aside).and_then(|d| d.read_limited(OWNER_FILE, 4096)) {
            Ok(ReadOutcome::Bytes(b)) => {
                OwnerRecord::parse(&String::from_utf8_lossy(&b)).is_some_and(|o| o.token == token)
            }
            _ => false,
        };
    if ours {
        remove_lock_folder(board, &aside_name);
    } else {
        let _ = fs::rename(&aside, &lock_dir);
    }
}

#[cfg(test)]
mod tests {
    use super::judge::DAMAGED_WAIT;
    use super::*;

    fn opts(stale_ms: u64) -> LockOptions {
        LockOptions {
            stale: Duration::from_millis(stale_ms),
            flock: true,
            command: "test".into(),
            stale_holders: Vec::new(),
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
            stale_ms: 4000,
        };
        assert_eq!(OwnerRecord::parse(&r.encode()), Some(r));
        assert_eq!(OwnerRecord::parse("garbage"), None);
    }

    fn record(token: &str) -> OwnerRecord {
        OwnerRecord {
            token: token.into(),
            host: "h".into(),
            pid: 1,
            started: "2026-01-01T00:00:00Z".into(),
            heartbeat: 0,
            board: "/b".into(),
            command: "test".into(),
            stale_ms: 1000,
        }
    }

    #[test]
    fn a_breaker_that_finds_a_fresh_lock_leaves_no_moment_for_a_racer() {
        // Seen once in CI: two breakers judged one lock stale; the first
        // broke it and took the board, the second then moved that fresh
        // lock aside to look at it, and in that moment a third put its own
        // lock in: two holders. Here a holder's fresh lock is on the board,
        // a breaker whose judgment is out of date tries to break it again
        // and again, and a racer tries all the while to put its lock in.
        let dir = tempfile::tempdir().unwrap();
        let board = Dir::open(dir.path()).unwrap();
        let (held, _) = board.child_or_create(LOCK_DIR).unwrap();
        held.replace(OWNER_FILE, record("holder").encode().as_bytes())
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let racer = {
            let (path, stop) = (dir.path().to_path_buf(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let board = Dir::open(&path).unwrap();
                let (tmp, _) = board.child_or_create("REFEREE.tmp-racer").unwrap();
                tmp.replace(OWNER_FILE, record("racer").encode().as_bytes())
                    .unwrap();
                while !stop.load(Ordering::SeqCst) {
                    if board.rename("REFEREE.tmp-racer", &board, LOCK_DIR).is_ok() {
                        return true;
                    }
                }
                false
            })
        };
        for _ in 0..3000 {
            let outcome = break_lock(
                dir.path(),
                &board,
                &record("breaker"),
                "REFEREE.tmp-breaker",
                "REFEREE.dead-breaker",
                "the record the breaker judged stale",
            );
            assert!(matches!(outcome, Break::Changed));
        }
        stop.store(true, Ordering::SeqCst);
        assert!(!racer.join().unwrap(), "the racer put its lock in");
        assert_eq!(read_owner(dir.path()).unwrap().token, "holder");
        assert!(held.still_at(&board, LOCK_DIR));
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
    fn heartbeat_advances_and_a_removed_or_overwritten_lock_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let lock = BoardLock::acquire(dir.path(), &opts(600)).unwrap();
        std::thread::sleep(Duration::from_millis(350));
        let beat = read_owner(dir.path()).unwrap().heartbeat;
        assert!(beat >= 2, "heartbeat {beat}");
        assert!(lock.ensure_held().is_ok());
        let token = lock.owner().token.clone();
        let ours = || read_owner(dir.path()).is_some_and(|o| o.token == token);
        // Removed (a bot deletes REFEREE/): put back within two beats.
        fs::remove_dir_all(dir.path().join(LOCK_DIR)).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        assert!(ours(), "REFEREE/ was not put back");
        assert!(lock.ensure_held().is_ok());
        // Overwritten with junk, and with another referee's record in our
        // own folder: written again, the lock stays held.
        fs::write(dir.path().join(LOCK_DIR).join(OWNER_FILE), "junk").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(ours(), "OWNER was not written again");
        let mut forged = lock.owner().clone();
        forged.token = "forged".into();
        fs::write(dir.path().join(LOCK_DIR).join(OWNER_FILE), forged.encode()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(ours(), "a forged OWNER was kept");
        assert!(lock.ensure_held().is_ok());
        drop(lock);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "only referee.lock is left"
        );
    }

    #[test]
    fn a_stopped_holder_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let lock = BoardLock::acquire(dir.path(), &opts(600)).unwrap();
        // As if stopped past the give-up time (no heartbeat since).
        *lock.held.last_ok.lock().unwrap() = Instant::now() - Duration::from_secs(1);
        let why = lock.ensure_held().unwrap_err();
        assert!(why.0.contains("no heartbeat"), "{why}");
    }

    #[test]
    fn a_damaged_lock_is_taken_over_soon_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(LOCK_DIR)).unwrap();
        fs::write(
            dir.path().join(LOCK_DIR).join(OWNER_FILE),
            "overwritten by a bot",
        )
        .unwrap();
        fs::write(
            dir.path().join(LOCK_DIR).join("notes.txt"),
            "not a referee's",
        )
        .unwrap();
        let t0 = Instant::now();
        let lock = BoardLock::acquire(dir.path(), &opts(60_000)).unwrap();
        assert!(t0.elapsed() < Duration::from_secs(9), "{:?}", t0.elapsed());
        assert!(t0.elapsed() >= DAMAGED_WAIT, "{:?}", t0.elapsed());
        assert_eq!(read_owner(dir.path()).unwrap().token, lock.owner().token);
        // The old folder held a file no referee made: it is kept, aside.
        let kept: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("REFEREE.dead-"))
            .collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            fs::read_to_string(kept[0].path().join("notes.txt")).unwrap(),
            "not a referee's"
        );
    }

    #[test]
    fn a_linked_referee_lock_is_refused_and_its_target_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("board");
        fs::create_dir(&board).unwrap();
        let target = dir.path().join("outside.lock");
        std::os::unix::fs::symlink(&target, board.join(FLOCK_FILE)).unwrap();
        let err = BoardLock::acquire(&board, &opts(3000)).unwrap_err();
        assert!(
            err.to_string().contains("referee.lock is a symlink"),
            "{err}"
        );
        assert!(!target.exists(), "the link's target was made");
        assert!(!board.join(LOCK_DIR).exists());
    }
}
