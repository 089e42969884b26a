//! The referee's side of the message board: its layout, sending to a
//! mailbox and awaiting the answer, and the referee's exclusive lock on
//! the folder.
//!
//! Owns: the board's layout, sending and waiting for answers (referee
//! side), the lock with stale-lock recovery (`lock`, its decision in
//! `lock::judge`), whether a lock's holder still runs as a reader can tell
//! (`holder`), and the status report of a board; which board paths,
//! player names and game ids may become folders and files. The wire (the
//! message codec, safe file operations, the doorbell, the bot's side of a
//! mailbox) is the `mailbox-protocol` crate's, re-exported here where the
//! referee uses it. Trusts nothing found on the board. Knows nothing about
//! Othello: message texts are opaque strings here.

mod holder;
mod lock;
mod status;

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

pub use holder::{Referee, RefereeWatch};
pub use lock::{holder_alive, hostname, read_owner};
pub use lock::{
    BoardLock, LockError, LockLost, LockOptions, OwnerRecord, WriteAccess, DEFAULT_STALE, LOCK_DIR,
};
pub use mailbox_protocol::bot::BotMailbox;
pub use mailbox_protocol::doorbell::{
    is_local_fs, poll_max_for, Backoff, Doorbell, POLL_MAX, POLL_MAX_LOCAL, POLL_MIN,
};
pub use mailbox_protocol::drive;
pub use mailbox_protocol::files::{
    is_symlink, is_temp_name, read_limited, replace, replace_message, Dir, MessageFile,
    MessageReader, ReadOutcome, TargetIsSymlink,
};
pub use mailbox_protocol::message::{
    Decoded, FrameError, Message, IN_RECORD, MAX_MESSAGE_BYTES, OUT_RECORD, PAD, REFEREE,
};
use mailbox_protocol::{doorbell, files};
pub use status::{board_status, BoardStatus, MailboxStatus, OwnerLiveness};

pub use mailbox_protocol::{IN_FILE, OUT_FILE};
/// The folder of mailboxes inside a board.
pub const PLAYERS_DIR: &str = "players";
/// The referee's marker in a mailbox on a network drive (see `check_dir`).
pub const MARKER_FILE: &str = ".mailbox";
/// Longest player name (it becomes a folder name on every kind of drive).
pub const MAX_NAME_LEN: usize = 64;

/// Checks a player name: letters, digits, `-` and `_` only, 1 to 64 of them.
/// So a name can never leave the board (`..`, `/`, NUL) or collide with an
/// instance folder (`name.k`).
pub fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a player name cannot be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "player name is {} characters long; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(format!(
            "player name `{}` contains {:?}; only letters, digits, `-` and `_` are allowed",
            name.escape_debug(),
            bad
        ));
    }
    Ok(())
}

/// Whether `name` is one of the board's own entries (what a referee makes
/// in the board folder).
fn is_board_entry(name: &str) -> bool {
    name == PLAYERS_DIR
        || name == lock::LOCK_DIR
        || name == lock::FLOCK_FILE
        || name.starts_with(&format!("{}.", lock::LOCK_DIR))
}

/// Checks a board path before anything is made there: it must be a folder
/// of its own (missing, which the referee then makes, but whose parent
/// exists; or one holding only what a referee makes there), not the root
/// of the file system or the home folder, not a file, not a dangling link.
/// The message says what is wrong and what to do.
pub fn check_board_path(board: &Path) -> Result<(), String> {
    let shown = board.display();
    let meta = match fs::metadata(board) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Ok(target) = fs::read_link(board) {
                return Err(format!(
                    "the board {shown} is a symlink to {}, which does not exist",
                    target.display()
                ));
            }
            let parent = match board.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !parent.is_dir() {
                return Err(format!(
                    "the board {shown} cannot be made: its parent folder {} does not exist \
                     (the referee makes only the board folder itself)",
                    parent.display()
                ));
            }
            return Ok(());
        }
        Err(e) => return Err(format!("the board {shown}: {e}")),
    };
    if !meta.is_dir() {
        return Err(format!(
            "the board {shown} exists and is not a folder; name a folder of its own"
        ));
    }
    let real = fs::canonicalize(board).map_err(|e| format!("the board {shown}: {e}"))?;
    let home = std::env::var_os("HOME").and_then(|h| fs::canonicalize(h).ok());
    if real.parent().is_none() || Some(&real) == home.as_ref() {
        return Err(format!(
            "the board {shown} is {}; name a folder of its own (the referee makes players/, \
             REFEREE/ and referee.lock in it)",
            if real.parent().is_none() {
                "the root of the file system"
            } else {
                "your home folder"
            }
        ));
    }
    let mut foreign: Vec<String> = fs::read_dir(&real)
        .map_err(|e| format!("the board {shown}: {e}"))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Hidden files a desktop or a network drive may make (.DS_Store,
        // .nfs…, .fuse_hidden…) are tolerated.
        .filter(|n| {
            !is_board_entry(n) && !n.starts_with('.') && n != "Thumbs.db" && n != "desktop.ini"
        })
        .collect();
    if !foreign.is_empty() {
        foreign.sort();
        let more = foreign.len().saturating_sub(3);
        foreign.truncate(3);
        return Err(format!(
            "the board {shown} holds files that are not a board's ({}{}); name a folder of its \
             own (empty, or one a referee used before)",
            foreign.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}

/// Checks a game id before it becomes a file name (`logs/<id>.log`,
/// `live/<id>.jsonl`, `done/<id>`): letters, digits, `-`, `_` and `.`, not
/// starting with a dot, 1 to 200 of them. Ids the referee makes (`r01.a.b`,
/// `play-…`) always pass; one read from a file may not.
pub fn validate_game_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 200
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "game id `{}` is not a safe file name (letters, digits, `-`, `_` and `.`, not \
             starting with a dot, at most 200)",
            id.escape_debug()
        ))
    }
}

/// The wire id of a player instance: `name.k` when spawned, `name` when waiting.
pub fn instance_id(name: &str, instance: Option<u32>) -> String {
    match instance {
        Some(k) => format!("{name}.{k}"),
        None => name.to_string(),
    }
}

/// The mailbox folder of an instance on `board`. The name must be valid.
pub fn mailbox_dir(board: &Path, name: &str, instance: Option<u32>) -> PathBuf {
    debug_assert!(validate_name(name).is_ok());
    board.join(PLAYERS_DIR).join(instance_id(name, instance))
}

/// What `out.txt` held while the answer was not there yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pending {
    /// No file, or an empty one.
    Nothing,
    /// The start of a message that is not complete (no final newline).
    Partial(String),
    /// A complete answer to another seq (an earlier one, or one left by a
    /// previous process of this mailbox).
    Stale(u64),
    /// `out.txt` could not be read (a drive's error); looked at again.
    Unreadable(String),
    /// The start of an answer on the pipe (PROTOCOL.md, "The pipe"), not
    /// finished.
    PipePartial(String),
}

/// Removes temp and spare files that writers killed mid-write left in
/// `players/` (the referee's and the built-in bots'). Only while holding the
/// board, and only files that are certainly such leftovers: a name these
/// writers give ([`is_temp_name`]), a regular file with one name, holding
/// nothing but (the start of) a message. Anything else a user put there stays.
pub fn sweep_temp_files(access: &WriteAccess) {
    if access.check().is_err() {
        return;
    }
    let Ok(players) = Dir::open(access.board()).and_then(|b| b.child(PLAYERS_DIR)) else {
        return;
    };
    for name in players.names().unwrap_or_default() {
        if !is_temp_name(&name) {
            continue;
        }
        let ours = match players.read_limited(&name, MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => is_message_start(&b),
            _ => false,
        };
        if ours {
            // Our own look may still hold it on a Windows share through
            // FUSE (its close finishes after `close` returns).
            let _ = drive::retrying(|| players.remove_file(&name));
        } else {
            tracing::debug!("left {name} in players/: not a leftover of ours");
        }
    }
}

/// Whether `bytes` is empty or (the start of) a message from the referee
/// or a player instance: what a temp or spare file of ours may hold.
fn is_message_start(bytes: &[u8]) -> bool {
    if matches!(Message::decode(bytes), Decoded::Garbage(_)) {
        return false;
    }
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    let first = first.trim_end_matches('\r');
    let sender = first.split_once('.').map_or(first, |(name, k)| {
        if k.bytes().all(|b| b.is_ascii_digit()) {
            name
        } else {
            "."
        }
    });
    first.is_empty() || REFEREE.starts_with(first) || validate_name(sender).is_ok()
}

/// Why no usable answer came.
#[derive(Debug)]
pub enum AnswerError {
    /// The deadline passed; what `out.txt` held then.
    Timeout { pending: Pending },
    /// `out.txt` is not a file to read (not a regular file, too big, linked).
    Garbage(String),
    /// `out.txt`'s bytes are not a message (binary, more than four lines, a
    /// bad seq).
    BadFrame(FrameError),
    /// The answer has the awaited seq but the wrong from/to.
    WrongSender { from: String, to: String },
    /// `out.txt` or the mailbox folder is a symlink, or the folder was
    /// replaced or removed: what was found.
    Symlink(String),
    /// The caller's abort check said stop (e.g. the bot's process exited).
    Aborted(String),
    /// The harness could not write the mailbox: what it was doing, and
    /// the drive's error.
    Io { doing: String, source: io::Error },
    /// The mailbox is not on the board the caller may write.
    NotThisBoard(MailboxError),
    /// The bot went over a limit of its sandbox: which, in words for the
    /// game log.
    OverLimit {
        limit: crate::record::Limit,
        detail: String,
    },
    /// This referee lost the board: it wrote nothing.
    LockLost(LockLost),
    /// What came on the bot's pipe is not its answer, or the pipe cannot
    /// take the message (the bot stopped reading it): what was found.
    Pipe(String),
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerError::Timeout {
                pending: Pending::Nothing,
            } => write!(f, "no answer in time"),
            AnswerError::Timeout {
                pending: Pending::Partial(s),
            } => write!(
                f,
                "the answer never completed: out.txt held {s:?} (every line, the last one too, must end in a newline)"
            ),
            AnswerError::Timeout {
                pending: Pending::Stale(seq),
            } => write!(
                f,
                "no answer in time: out.txt still held an answer to seq {seq} (line 3 of the answer must repeat the seq of in.txt)"
            ),
            AnswerError::Timeout {
                pending: Pending::Unreadable(e),
            } => write!(f, "no answer in time (out.txt could not be read: {e})"),
            AnswerError::Timeout {
                pending: Pending::PipePartial(s),
            } => write!(
                f,
                "the answer never completed: the pipe (fd 4) gave {s:?} (an answer is four lines, each ending in a newline, in one write)"
            ),
            AnswerError::Garbage(why) => write!(f, "garbage in out.txt: {why}"),
            AnswerError::BadFrame(why) => write!(f, "garbage in out.txt: {why}"),
            AnswerError::WrongSender { from, to } => write!(
                f,
                "answer addressed from `{from}` to `{to}` (lines 1 and 2 must be the bot's id and `referee`)"
            ),
            AnswerError::Symlink(what) => write!(f, "{what}, which is refused"),
            AnswerError::Aborted(why) => write!(f, "{why}"),
            AnswerError::Io { doing, source } => {
                write!(f, "cannot write the mailbox: {doing}: {source}")
            }
            AnswerError::NotThisBoard(e) => write!(f, "{e}"),
            AnswerError::OverLimit { detail, .. } => write!(f, "{detail}"),
            AnswerError::LockLost(why) => write!(f, "the board is no longer ours: {why}"),
            AnswerError::Pipe(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for AnswerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnswerError::Io { source, .. } => Some(source),
            AnswerError::NotThisBoard(e) => Some(e),
            AnswerError::LockLost(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a mailbox could not be readied for a fresh instance.
#[derive(Debug, thiserror::Error)]
pub enum ClearError {
    /// This referee lost the board: it touched nothing.
    #[error("the board is no longer ours: {0}")]
    LockLost(#[from] LockLost),
    /// The mailbox could not be emptied (the drive, or what the bot left
    /// there: a folder in the place of `out.txt`, a link).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The harness could not use a mailbox folder at all.
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error("mailbox {0} is a symlink; refusing to use it")]
    Symlink(PathBuf),
    #[error("mailbox {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("mailbox {path} is not on the board {board} this referee may write")]
    NotThisBoard { path: PathBuf, board: PathBuf },
    /// This referee lost the board: it made nothing.
    #[error("the board is no longer ours: {0}")]
    LockLost(#[from] LockLost),
}

/// One player instance's folder, as the referee uses it. The board, its
/// `players/` and the mailbox folder are held open ([`Dir`]); every file is
/// reached through them, never by a path that a link could redirect.
pub struct Mailbox {
    dir: PathBuf,
    id: String,
    /// The folder's name in `players/`.
    name: String,
    board: Dir,
    players: Arc<Dir>,
    folder: Arc<Dir>,
    bell: Arc<Doorbell>,
    /// The longest sleep between two looks at `out.txt`.
    poll_max: std::time::Duration,
    /// `in.txt`, written message after message, and the last message.
    writer: std::sync::Mutex<(MessageFile, Vec<u8>)>,
    /// `out.txt`, read look after look.
    reader: std::sync::Mutex<MessageReader>,
    /// Whether every change of `out.txt` wakes the doorbell (its own
    /// inotify, on a local disk): then a wait for an answer sleeps before
    /// its first look, since the answer to a message just sent cannot be
    /// there before it rings.
    queued: bool,
    /// On a network drive: the token in the folder's marker file.
    marker: Option<String>,
    /// How the bot writes `out.txt`, so how `in.txt` is written for it.
    format: std::sync::atomic::AtomicU8,
}

/// What the referee knows of how a bot writes `out.txt` (PROTOCOL.md,
/// "Fixed-length files"); the referee writes `in.txt` the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Format {
    /// Not seen yet: `out.txt` is looked at before the next message.
    Unknown = 0,
    /// Plain v1: exact messages, `in.txt` too.
    Plain = 1,
    /// Fixed-length answers: `in.txt` is padded to [`IN_RECORD`] bytes.
    Padded = 2,
}

impl Format {
    fn from_u8(v: u8) -> Format {
        match v {
            1 => Format::Plain,
            2 => Format::Padded,
            _ => Format::Unknown,
        }
    }
}

impl fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mailbox({})", self.dir.display())
    }
}

impl Mailbox {
    /// Opens (creating if needed, under `access`) the mailbox folder `dir`
    /// (`<board>/players/<folder>`, on the board of `access`) for the
    /// player whose wire id is `id`. Refuses a `players/` or mailbox folder
    /// that is a symlink or not a folder; the board folder itself must exist.
    pub fn open(access: &WriteAccess, dir: &Path, id: &str) -> Result<Mailbox, MailboxError> {
        let io_err = |source| MailboxError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let (Some(players_path), Some(name)) = (dir.parent(), dir.file_name()) else {
            return Err(io_err(io::Error::other("not a mailbox path")));
        };
        let name = name.to_string_lossy().into_owned();
        let board_path = players_path
            .parent()
            .ok_or_else(|| io_err(io::Error::other("not a mailbox path")))?;
        let board_path = fs::canonicalize(board_path).map_err(io_err)?;
        if board_path != access.board() {
            return Err(MailboxError::NotThisBoard {
                path: dir.to_path_buf(),
                board: access.board().to_path_buf(),
            });
        }
        access.check()?;
        let board = Dir::open(&board_path).map_err(io_err)?;
        if board.is_symlink(PLAYERS_DIR) {
            return Err(MailboxError::Symlink(board_path.join(PLAYERS_DIR)));
        }
        let (players, _) = board.child_or_create(PLAYERS_DIR).map_err(io_err)?;
        if players.is_symlink(&name) {
            return Err(MailboxError::Symlink(dir.to_path_buf()));
        }
        let (folder, _) = players.child_or_create(&name).map_err(io_err)?;
        let dir = folder.path().to_path_buf();
        let (bell, watched) = Doorbell::watching(&dir.join(OUT_FILE));
        let marker = if doorbell::is_local_fs(&dir) {
            None
        } else {
            folder.read_direct();
            let token = format!("{:016x}\n", rand::random::<u64>());
            folder
                .replace(MARKER_FILE, token.as_bytes())
                .map_err(io_err)?;
            Some(token)
        };
        let (players, folder) = (Arc::new(players), Arc::new(folder));
        let writer = MessageFile::new(Arc::clone(&players), Arc::clone(&folder), IN_FILE, &name)
            .refusing_symlinks();
        let local = marker.is_none();
        let reader = MessageReader::new(Arc::clone(&folder), OUT_FILE, local);
        Ok(Mailbox {
            reader: std::sync::Mutex::new(reader),
            queued: local && bell.queues_changes(),
            marker,
            format: std::sync::atomic::AtomicU8::new(Format::Unknown as u8),
            writer: std::sync::Mutex::new((writer, Vec::new())),
            poll_max: doorbell::poll_max_for(&dir, watched),
            dir,
            id: id.to_string(),
            name,
            board,
            players,
            folder,
            bell,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The board this mailbox is on (canonical).
    pub fn board(&self) -> &Path {
        self.board.path()
    }

    /// Rings this mailbox's doorbell: wakes a `wait_answer` to look again
    /// (used when the bot's process exits).
    pub fn doorbell(&self) -> Arc<Doorbell> {
        Arc::clone(&self.bell)
    }

    /// Refuses a mailbox folder (or `players/`) that was replaced (by a
    /// symlink, or a different folder), moved away or removed: the names
    /// must still lead to the folders we hold. A network drive may answer
    /// such lookups from a cache for many seconds (sshfs: 20 s), so there
    /// the marker file written at open is read back too (reading a file's
    /// content is always fresh): a folder swapped for a link to elsewhere
    /// has no marker with our token.
    fn check_dir(&self) -> Result<(), AnswerError> {
        let replaced = || {
            AnswerError::Symlink(if self.players.is_symlink(&self.name) {
                format!("the mailbox folder {} is a symlink", self.dir.display())
            } else {
                format!(
                    "the mailbox folder {} was replaced, moved or removed",
                    self.dir.display()
                )
            })
        };
        if !self.folder.still_at(&self.players, &self.name)
            || !self.players.still_at(&self.board, PLAYERS_DIR)
        {
            return Err(replaced());
        }
        if let Some(token) = &self.marker {
            match self.folder.read_limited(MARKER_FILE, 256) {
                Ok(ReadOutcome::Bytes(b)) if b == token.as_bytes() => {}
                _ => return Err(replaced()),
            }
        }
        Ok(())
    }

    /// Readies the mailbox for a fresh instance: `in.txt` (the referee's)
    /// deleted, and a non-empty `out.txt` replaced by an empty file of the
    /// referee's (never truncated or written: it may be a file linked in
    /// from elsewhere; and not just deleted, because a bot on another
    /// machine may hold a cached view of that name, and re-creating it
    /// there can fail for seconds). On a drive that refuses to delete or
    /// replace a file someone holds open (SMB, which has no links), one
    /// held open is blanked (`in.txt`) or cut to nothing (`out.txt`) in
    /// place instead. Touches nothing else, and nothing at all once this
    /// referee lost the board.
    pub fn clear(&self, access: &WriteAccess) -> Result<(), ClearError> {
        self.check_access(access).map_err(|e| match e {
            AnswerError::LockLost(lost) => ClearError::LockLost(lost),
            e => ClearError::Io(io::Error::other(e)),
        })?;
        self.check_dir().map_err(io::Error::other)?;
        // Our own hold on in.txt (written in place) would keep it.
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .release();
        match self.folder.remove_file(IN_FILE) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            // Someone holds it open on a drive that will not delete it
            // then (SMB): blanked, which reads as no message.
            Err(e) if drive::is_sharing_violation(&e) => {
                self.folder.refused(IN_FILE, &e);
                let len = self.folder.plain_file_len(IN_FILE).unwrap_or(0);
                self.folder.rewrite(IN_FILE, &vec![PAD; len as usize])?;
            }
            Err(e) => return Err(e.into()),
        }
        if self.folder.plain_file_len(OUT_FILE) != Some(0)
            && !matches!(
                self.folder.read_limited(OUT_FILE, 0),
                Ok(ReadOutcome::Missing)
            )
        {
            files::replace_over(&self.players, &self.folder, OUT_FILE, b"")?;
        }
        self.set_format(Format::Unknown);
        Ok(())
    }

    /// How this mailbox's bot writes `out.txt`, as last seen.
    pub fn format(&self) -> Format {
        Format::from_u8(self.format.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn set_format(&self, f: Format) {
        self.format
            .store(f as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Before the first message (and after a clear): whether
    /// `out.txt` already has the fixed length of a bot that writes
    /// fixed-length files (it says so at start, before any message).
    fn learn_format(&self) -> Format {
        let f = match self.folder.read_limited(OUT_FILE, MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b))
                if b.len() == OUT_RECORD
                    && (Message::is_blank(&b) || Message::padding_len(&b).unwrap_or(0) > 0) =>
            {
                Format::Padded
            }
            _ => Format::Plain,
        };
        self.set_format(f);
        f
    }

    /// The seq of the message now in `in.txt`, if it holds a complete one
    /// (a waiting player's mailbox continues counting from it).
    pub fn last_sent_seq(&self) -> Option<u64> {
        match self.folder.read_limited(IN_FILE, MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => match Message::decode(&b) {
                Decoded::Complete(m) => Some(m.seq),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `in.txt` still holds exactly the last message this referee
    /// wrote (a bot never writes into it, nor removes it).
    pub fn sent_intact(&self) -> bool {
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        match self.folder.read_limited(IN_FILE, MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => b == w.1,
            _ => false,
        }
    }

    /// Refuses a write under `access` if it is not to this mailbox's
    /// board, or the board is no longer ours.
    fn check_access(&self, access: &WriteAccess) -> Result<(), AnswerError> {
        if access.board() != self.board.path() {
            return Err(AnswerError::NotThisBoard(MailboxError::NotThisBoard {
                path: self.dir.clone(),
                board: access.board().to_path_buf(),
            }));
        }
        access.check().map_err(AnswerError::LockLost)
    }

    /// Writes message `seq` to `in.txt` atomically, under `access` (asked
    /// first, and again right before the message becomes visible).
    pub fn send(&self, access: &WriteAccess, seq: u64, text: &str) -> Result<(), AnswerError> {
        self.check_access(access)?;
        self.check_dir()?;
        let target = self.dir.join(IN_FILE);
        let format = match self.format() {
            Format::Unknown => self.learn_format(),
            f => f,
        };
        let msg = Message::new(REFEREE, &self.id, seq, text);
        let msg = match format {
            Format::Padded => msg.encode_padded(IN_RECORD),
            _ => msg.encode().into_bytes(),
        };
        let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        // The writer refuses an in.txt that is a symlink (from the look at
        // the name it makes anyway) before writing anything.
        // The gate keeps a lost lock here, as its kind: the writer (of the
        // protocol crate, which knows no lock) only hears that it closed.
        let lost = std::cell::RefCell::new(None);
        let gate = || {
            access.check().map_err(|why| {
                *lost.borrow_mut() = Some(why);
                io::Error::other("the board's lock is no longer held")
            })
        };
        w.0.write(&msg, &gate).map_err(|e| match lost.take() {
            Some(why) => AnswerError::LockLost(why),
            None if TargetIsSymlink::in_io(&e) => {
                AnswerError::Symlink(format!("{} is a symlink", target.display()))
            }
            None => AnswerError::Io {
                doing: format!("writing {}", target.display()),
                source: e,
            },
        })?;
        w.1 = msg;
        Ok(())
    }

    /// One look at `out.txt` for the answer to `seq`, the mailbox folder
    /// checked first ([`Mailbox::check_dir`]): `Ok(Ok(text))`,
    /// `Ok(Err(pending))` if not there yet, or why it is unusable.
    pub fn poll_answer(&self, seq: u64) -> Result<Result<String, Pending>, AnswerError> {
        self.check_dir()?;
        self.look(seq)
    }

    /// `out.txt` as the reader finds it now.
    fn read_out(&self) -> io::Result<ReadOutcome> {
        self.reader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .read(MAX_MESSAGE_BYTES)
    }

    /// [`Mailbox::poll_answer`] without the folder check.
    fn look(&self, seq: u64) -> Result<Result<String, Pending>, AnswerError> {
        let path = self.dir.join(OUT_FILE);
        let bytes = match self.read_out() {
            Ok(ReadOutcome::Missing) => return Ok(Err(Pending::Nothing)),
            Ok(ReadOutcome::Bytes(b)) => b,
            Ok(ReadOutcome::Symlink) => {
                return Err(AnswerError::Symlink(format!(
                    "{} is a symlink",
                    path.display()
                )))
            }
            Ok(ReadOutcome::NotAFile) => {
                return Err(AnswerError::Garbage("out.txt is not a regular file".into()))
            }
            Ok(ReadOutcome::TooLarge(n)) => {
                return Err(AnswerError::Garbage(format!(
                    "out.txt is {n} bytes; a message is at most {MAX_MESSAGE_BYTES}"
                )))
            }
            Ok(ReadOutcome::Linked(n)) => {
                return Err(AnswerError::Garbage(format!(
                    "out.txt has {n} names (a hard link to a file elsewhere?); it must be a file \
                     of its own, so it was neither read nor changed"
                )))
            }
            // A drive's hiccup is not the bot's fault: look again.
            Err(e) => return Ok(Err(Pending::Unreadable(e.to_string()))),
        };
        match Message::decode(&bytes) {
            Decoded::Incomplete if bytes.is_empty() || Message::is_blank(&bytes) => {
                Ok(Err(Pending::Nothing))
            }
            Decoded::Incomplete => Ok(Err(Pending::Partial(
                String::from_utf8_lossy(&bytes).into_owned(),
            ))),
            Decoded::Garbage(why) => Err(AnswerError::BadFrame(why)),
            Decoded::Complete(m) if m.seq == seq => {
                if m.from != self.id || m.to != REFEREE {
                    return Err(AnswerError::WrongSender {
                        from: m.from,
                        to: m.to,
                    });
                }
                let padded = Message::padding_len(&bytes).unwrap_or(0) > 0;
                if padded {
                    // Written over the old answer in place: a read that
                    // raced the write could mix old and new bytes. The
                    // same bytes read twice are whole.
                    match self.read_out() {
                        Ok(ReadOutcome::Bytes(again)) if again == bytes => {}
                        _ => {
                            return Ok(Err(Pending::Partial(
                                String::from_utf8_lossy(&bytes).into_owned(),
                            )))
                        }
                    }
                }
                self.set_format(if padded {
                    Format::Padded
                } else {
                    Format::Plain
                });
                Ok(Ok(m.text))
            }
            Decoded::Complete(m) => Ok(Err(Pending::Stale(m.seq))),
        }
    }

    /// Waits for the answer to `seq` until `deadline`. Between looks it
    /// sleeps on file-system notifications with a bounded poll as fallback;
    /// `abort` is asked after every look and ends the wait with its reason.
    ///
    /// The mailbox folder is checked ([`Mailbox::check_dir`]) once per
    /// answer, not at every look: before the wait ends, whatever ends it
    /// (an answer, an unusable `out.txt`, the abort, the deadline; a
    /// swapped folder wins over all of them, as when every look checked),
    /// and at looks after a sleep that ran out without a ring (a folder
    /// swapped while the bot thinks is refused within one poll, as before).
    /// The looks a ring brings (the answer's, the bot's own writes) make no
    /// `stat` of the folders. `send` checked them right before.
    pub fn wait_answer(
        &self,
        seq: u64,
        deadline: Instant,
        abort: &mut dyn FnMut() -> Option<String>,
    ) -> Result<String, AnswerError> {
        let mut backoff = Backoff::up_to(self.poll_max);
        // With changes queued, sleep first: `out.txt` still holds the old
        // answer, and a new one rings however soon it comes.
        let mut look = !self.queued;
        let mut check = false;
        loop {
            let ticket = self.bell.ticket();
            if look {
                if check {
                    self.check_dir()?;
                }
                let pending = match self.look(seq) {
                    Ok(Err(pending)) => pending,
                    Ok(Ok(text)) => {
                        self.check_dir()?;
                        return Ok(text);
                    }
                    Err(e) => {
                        self.check_dir()?;
                        return Err(e);
                    }
                };
                if let Some(why) = abort() {
                    self.check_dir()?;
                    return Err(AnswerError::Aborted(why));
                }
                if Instant::now() >= deadline {
                    self.check_dir()?;
                    // The bot may not read padded messages after all (a
                    // waiting player's program swapped for a plain v1 bot):
                    // plain messages until it shows otherwise.
                    self.set_format(Format::Plain);
                    return Err(AnswerError::Timeout { pending });
                }
            }
            look = true;
            check = !backoff.wait(&self.bell, ticket, deadline);
        }
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        doorbell::unwatch(&self.dir.join(OUT_FILE), &self.bell);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for ok in ["alice", "greedy-ruby", "Bot_2", &"x".repeat(64)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "..",
            "../etc",
            "/abs",
            "a.b",
            "a b",
            "nul\0",
            "é",
            &"x".repeat(65),
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn game_ids_are_checked() {
        for ok in ["r01.alice.bob", "play-1700000000-42", "r1.a-b.c_d"] {
            assert!(validate_game_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "/abs",
            "a/b",
            "a\\b",
            ".hidden",
            "nul\0",
            "a b",
            &"x".repeat(201),
        ] {
            assert!(validate_game_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn send_then_answer() {
        let board = tempfile::tempdir().unwrap();
        let dir = mailbox_dir(board.path(), "bot", Some(1));
        let access = WriteAccess::unshared(board.path());
        let mb = Mailbox::open(&access, &dir, "bot.1").unwrap();
        mb.send(&access, 1, "NEW g1 black x 8 100").unwrap();
        assert_eq!(mb.last_sent_seq(), Some(1));
        assert_eq!(mb.poll_answer(1).unwrap(), Err(Pending::Nothing));
        fs::write(dir.join(OUT_FILE), "bot.1\nreferee\n1\nREADY\n").unwrap();
        assert_eq!(mb.poll_answer(1).unwrap(), Ok("READY".to_string()));
        assert_eq!(mb.poll_answer(2).unwrap(), Err(Pending::Stale(1)));
        fs::write(dir.join(OUT_FILE), "other\nreferee\n2\nd3\n").unwrap();
        assert!(matches!(
            mb.poll_answer(2),
            Err(AnswerError::WrongSender { .. })
        ));
    }

    #[test]
    fn writes_need_the_access_of_this_board_while_it_is_held() {
        let board = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let dir = mailbox_dir(board.path(), "bot", Some(1));
        let elsewhere = WriteAccess::unshared(other.path());
        assert!(matches!(
            Mailbox::open(&elsewhere, &dir, "bot.1"),
            Err(MailboxError::NotThisBoard { .. })
        ));
        let lock = BoardLock::acquire(board.path(), &LockOptions::default()).unwrap();
        let access = lock.access().clone();
        let mb = Mailbox::open(&access, &dir, "bot.1").unwrap();
        mb.send(&access, 1, "NEW").unwrap();
        assert!(mb.send(&elsewhere, 2, "NEW").is_err());
        drop(lock);
        // A copy of a released lock's access writes nothing.
        assert!(matches!(
            mb.send(&access, 2, "NEW"),
            Err(AnswerError::LockLost(_))
        ));
        assert!(matches!(
            mb.clear(&access).unwrap_err(),
            ClearError::LockLost(_)
        ));
        assert_eq!(mb.last_sent_seq(), Some(1));
    }
}
