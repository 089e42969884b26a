//! Mailbox protocol v1: move files in a shared message-board folder, and the
//! referee's exclusive lock on that folder.
//!
//! Owns: the board's layout, the message codec, sending and waiting for
//! answers (referee side) and reading and answering (bot side), the lock
//! with stale-lock recovery, and the status report of a board. Knows nothing
//! about Othello: message texts are opaque strings here.

mod client;
mod doorbell;
mod files;
mod lock;
mod message;
mod status;

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

pub use client::BotMailbox;
pub use doorbell::{poll_max_for, Backoff, Doorbell, POLL_MAX, POLL_MAX_LOCAL, POLL_MIN};
pub use files::{is_symlink, read_limited, replace, replace_message, MessageFile, ReadOutcome};
pub use lock::{hostname, read_owner};
pub use lock::{may_write_board, BoardLock, LockError, LockOptions, OwnerRecord, DEFAULT_STALE};
pub use message::{Decoded, Message, MAX_MESSAGE_BYTES, REFEREE};
pub use status::{board_status, BoardStatus, MailboxStatus, OwnerLiveness};

/// The file only the referee writes.
pub const IN_FILE: &str = "in.txt";
/// The file only the bot writes.
pub const OUT_FILE: &str = "out.txt";
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
}

/// Removes temp and spare files that writers killed mid-write left in
/// `players/` (the referee's and the built-in bots'). Only while holding the board.
pub fn sweep_temp_files(board: &Path) {
    if may_write_board().is_err() {
        return;
    }
    let Ok(entries) = fs::read_dir(board.join(PLAYERS_DIR)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_temp = name.starts_with('.') && (name.contains(".tmp-") || name.ends_with(".spare"));
        if is_temp && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Why no usable answer came.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// The deadline passed; what `out.txt` held then.
    Timeout { pending: Pending },
    /// `out.txt` is not a message (binary, malformed, not a file, too big).
    Garbage(String),
    /// The answer has the awaited seq but the wrong from/to.
    WrongSender { from: String, to: String },
    /// `out.txt` or the mailbox folder is a symlink.
    Symlink(String),
    /// The caller's abort check said stop (e.g. the bot's process exited).
    Aborted(String),
    /// The harness could not read the folder.
    Io(String),
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
            AnswerError::Garbage(why) => write!(f, "garbage in out.txt: {why}"),
            AnswerError::WrongSender { from, to } => write!(
                f,
                "answer addressed from `{from}` to `{to}` (lines 1 and 2 must be the bot's id and `referee`)"
            ),
            AnswerError::Symlink(what) => write!(f, "{what} is a symlink, which is refused"),
            AnswerError::Aborted(why) => write!(f, "{why}"),
            AnswerError::Io(e) => write!(f, "cannot read the mailbox: {e}"),
        }
    }
}

/// The harness could not use a mailbox folder at all.
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error("mailbox {0} is a symlink; refusing to use it")]
    Symlink(PathBuf),
    #[error("mailbox {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// One player instance's folder, as the referee uses it.
pub struct Mailbox {
    dir: PathBuf,
    id: String,
    bell: Arc<Doorbell>,
    /// The longest sleep between two looks at `out.txt`.
    poll_max: std::time::Duration,
    /// `in.txt`, written message after message.
    writer: std::sync::Mutex<MessageFile>,
    /// On a network drive: the token in the folder's marker file.
    marker: Option<String>,
}

impl fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mailbox({})", self.dir.display())
    }
}

impl Mailbox {
    /// Opens (creating if needed) the mailbox folder `dir` for the player
    /// whose wire id is `id`. Refuses a symlinked folder.
    pub fn open(dir: &Path, id: &str) -> Result<Mailbox, MailboxError> {
        let io_err = |source| MailboxError::Io {
            path: dir.to_path_buf(),
            source,
        };
        if let Some(parent) = dir.parent() {
            if is_symlink(parent) {
                return Err(MailboxError::Symlink(parent.to_path_buf()));
            }
            fs::create_dir_all(parent).map_err(io_err)?;
        }
        match fs::symlink_metadata(dir) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(MailboxError::Symlink(dir.to_path_buf()))
            }
            Ok(m) if !m.is_dir() => {
                return Err(io_err(io::Error::other("exists and is not a folder")))
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err(e)),
            },
            Err(e) => return Err(io_err(e)),
        }
        let dir = fs::canonicalize(dir).map_err(io_err)?;
        let bell = Doorbell::new();
        let watched = doorbell::watch(&dir.join(OUT_FILE), &bell);
        let marker = if doorbell::is_local_fs(&dir) {
            None
        } else {
            let token = format!("{:016x}\n", rand::random::<u64>());
            replace(&dir, MARKER_FILE, token.as_bytes()).map_err(io_err)?;
            Some(token)
        };
        let tmp_dir = dir.parent().unwrap_or(&dir).to_path_buf();
        let tag = dir
            .file_name()
            .map_or_else(|| id.to_string(), |n| n.to_string_lossy().into_owned());
        Ok(Mailbox {
            marker,
            writer: std::sync::Mutex::new(MessageFile::new(&tmp_dir, &dir, IN_FILE, &tag)),
            poll_max: doorbell::poll_max_for(&dir, watched),
            dir,
            id: id.to_string(),
            bell,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Rings this mailbox's doorbell: wakes a `wait_answer` to look again
    /// (used when the bot's process exits).
    pub fn doorbell(&self) -> Arc<Doorbell> {
        Arc::clone(&self.bell)
    }

    /// Refuses a mailbox folder that was replaced (by a symlink, or a
    /// different folder). On a local drive lstat tells at once; a network
    /// drive may answer lstat from a cache for many seconds (sshfs: 20 s),
    /// so there the marker file written at open is read back (reading a
    /// file's content is always fresh): a folder swapped for a link to
    /// elsewhere has no marker with our token.
    fn check_dir(&self) -> Result<(), AnswerError> {
        let replaced = || {
            AnswerError::Symlink(format!(
                "the mailbox folder {} (it was replaced)",
                self.dir.display()
            ))
        };
        if is_symlink(&self.dir) {
            return Err(replaced());
        }
        if let Some(token) = &self.marker {
            match read_limited(&self.dir.join(MARKER_FILE), 256) {
                Ok(ReadOutcome::Bytes(b)) if b == token.as_bytes() => {}
                _ => return Err(replaced()),
            }
        }
        Ok(())
    }

    /// Empties the mailbox for a fresh instance: `in.txt` deleted, `out.txt`
    /// emptied in place (not deleted: a bot on another machine may hold a
    /// cached view of that file, and re-creating it there can fail for
    /// seconds), and temp files a crashed writer left. Touches nothing else,
    /// and nothing at all once this referee lost the board.
    pub fn clear(&self) -> io::Result<()> {
        lock::may_write_board().map_err(io::Error::other)?;
        self.check_dir()
            .map_err(|e| io::Error::other(e.to_string()))?;
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours =
                name == IN_FILE || name.starts_with(".in.txt.") || name.starts_with(".out.txt.");
            if ours && entry.file_type()?.is_file() {
                fs::remove_file(entry.path())?;
            }
        }
        let out = self.dir.join(OUT_FILE);
        if fs::symlink_metadata(&out).is_ok_and(|m| m.is_file()) {
            let mut opts = fs::OpenOptions::new();
            opts.write(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.custom_flags(libc::O_NOFOLLOW);
            }
            opts.open(&out)?;
        }
        Ok(())
    }

    /// The seq of the message now in `in.txt`, if it holds a complete one
    /// (a waiting player's mailbox continues counting from it).
    pub fn last_sent_seq(&self) -> Option<u64> {
        match read_limited(&self.dir.join(IN_FILE), MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => match Message::decode(&b) {
                Decoded::Complete(m) => Some(m.seq),
                _ => None,
            },
            _ => None,
        }
    }

    /// Writes message `seq` to `in.txt` atomically.
    pub fn send(&self, seq: u64, text: &str) -> Result<(), AnswerError> {
        self.check_dir()?;
        let target = self.dir.join(IN_FILE);
        if is_symlink(&target) {
            return Err(AnswerError::Symlink(format!("{}", target.display())));
        }
        let msg = Message::new(REFEREE, &self.id, seq, text);
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write(msg.encode().as_bytes())
            .map_err(|e| AnswerError::Io(format!("writing {}: {e}", target.display())))
    }

    /// One look at `out.txt` for the answer to `seq`: `Ok(Ok(text))`,
    /// `Ok(Err(pending))` if not there yet, or why it is unusable.
    pub fn poll_answer(&self, seq: u64) -> Result<Result<String, Pending>, AnswerError> {
        self.check_dir()?;
        let path = self.dir.join(OUT_FILE);
        let bytes = match read_limited(&path, MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Missing) => return Ok(Err(Pending::Nothing)),
            Ok(ReadOutcome::Bytes(b)) => b,
            Ok(ReadOutcome::Symlink) => {
                return Err(AnswerError::Symlink(format!("{}", path.display())))
            }
            Ok(ReadOutcome::NotAFile) => {
                return Err(AnswerError::Garbage("out.txt is not a regular file".into()))
            }
            Ok(ReadOutcome::TooLarge(n)) => {
                return Err(AnswerError::Garbage(format!(
                    "out.txt is {n} bytes; a message is at most {MAX_MESSAGE_BYTES}"
                )))
            }
            // A drive's hiccup is not the bot's fault: look again.
            Err(e) => return Ok(Err(Pending::Unreadable(e.to_string()))),
        };
        match Message::decode(&bytes) {
            Decoded::Incomplete if bytes.is_empty() => Ok(Err(Pending::Nothing)),
            Decoded::Incomplete => Ok(Err(Pending::Partial(
                String::from_utf8_lossy(&bytes).into_owned(),
            ))),
            Decoded::Garbage(why) => Err(AnswerError::Garbage(why)),
            Decoded::Complete(m) if m.seq == seq => {
                if m.from != self.id || m.to != REFEREE {
                    return Err(AnswerError::WrongSender {
                        from: m.from,
                        to: m.to,
                    });
                }
                Ok(Ok(m.text))
            }
            Decoded::Complete(m) => Ok(Err(Pending::Stale(m.seq))),
        }
    }

    /// Waits for the answer to `seq` until `deadline`. Between looks it
    /// sleeps on file-system notifications with a bounded poll as fallback;
    /// `abort` is asked after every look and ends the wait with its reason.
    pub fn wait_answer(
        &self,
        seq: u64,
        deadline: Instant,
        abort: &mut dyn FnMut() -> Option<String>,
    ) -> Result<String, AnswerError> {
        let mut backoff = Backoff::up_to(self.poll_max);
        loop {
            let ticket = self.bell.ticket();
            let pending = match self.poll_answer(seq)? {
                Ok(text) => return Ok(text),
                Err(pending) => pending,
            };
            if let Some(why) = abort() {
                return Err(AnswerError::Aborted(why));
            }
            if Instant::now() >= deadline {
                return Err(AnswerError::Timeout { pending });
            }
            backoff.wait(&self.bell, ticket, deadline);
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
    fn send_then_answer() {
        let board = tempfile::tempdir().unwrap();
        let dir = mailbox_dir(board.path(), "bot", Some(1));
        let mb = Mailbox::open(&dir, "bot.1").unwrap();
        mb.send(1, "NEW g1 black x 8 100").unwrap();
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
}
