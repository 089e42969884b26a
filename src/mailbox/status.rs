//! `board status`: who owns a board and which mailboxes wait for an answer.
//!
//! Owns reading a board for a human; never writes anything.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::lock::{hostname, read_owner, OwnerRecord, FLOCK_FILE};
use super::{IN_FILE, OUT_FILE, PLAYERS_DIR};
use crate::pid::pid_alive;
use mailbox_protocol::files::{read_limited, ReadOutcome};
use mailbox_protocol::message::{Decoded, Message, MAX_MESSAGE_BYTES};

/// Whether the board's owner looks alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerLiveness {
    /// Its heartbeat changed while we watched.
    Alive,
    /// Its heartbeat did not change while we watched.
    Silent(Duration),
    /// Same machine, and its process is gone.
    Dead,
}

#[derive(Debug, Clone)]
pub struct MailboxStatus {
    pub folder: PathBuf,
    /// The player instance (`name.k`) or waiting player (`name`).
    pub instance: String,
    pub player: String,
    /// Last message the referee wrote: seq and text.
    pub sent: Option<(u64, String)>,
    /// Last answer: seq and text.
    pub answered: Option<(u64, String)>,
    /// Age of `in.txt` by its mtime (approximate: the writer's clock).
    pub sent_age: Option<Duration>,
}

impl MailboxStatus {
    pub fn waiting(&self) -> bool {
        match (&self.sent, &self.answered) {
            (Some((s, _)), Some((a, _))) => s != a,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct BoardStatus {
    pub board: PathBuf,
    pub owner: Option<OwnerRecord>,
    pub liveness: Option<OwnerLiveness>,
    pub mailboxes: Vec<MailboxStatus>,
}

fn read_message(path: &Path) -> Option<Message> {
    match read_limited(path, MAX_MESSAGE_BYTES) {
        Ok(ReadOutcome::Bytes(b)) => match Message::decode(&b) {
            Decoded::Complete(m) => Some(m),
            _ => None,
        },
        _ => None,
    }
}

/// Reads a board's state, watching the owner's heartbeat for up to `watch`.
pub fn board_status(board: &Path, watch: Duration) -> std::io::Result<BoardStatus> {
    let owner = read_owner(board);
    let liveness = owner.as_ref().map(|o| {
        if o.host == hostname() && !flock_held(board) && !pid_alive(o.pid) {
            return OwnerLiveness::Dead;
        }
        let start = Instant::now();
        while start.elapsed() < watch {
            std::thread::sleep(Duration::from_millis(100));
            match read_owner(board) {
                Some(now) if now.heartbeat != o.heartbeat || now.token != o.token => {
                    return OwnerLiveness::Alive
                }
                None => return OwnerLiveness::Silent(start.elapsed()),
                _ => {}
            }
        }
        OwnerLiveness::Silent(start.elapsed())
    });
    let mut mailboxes = Vec::new();
    if let Ok(entries) = fs::read_dir(board.join(PLAYERS_DIR)) {
        for entry in entries.flatten() {
            let folder = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let instance = entry.file_name().to_string_lossy().into_owned();
            let player = instance.split('.').next().unwrap_or("").to_string();
            let in_path = folder.join(IN_FILE);
            let sent = read_message(&in_path).map(|m| (m.seq, m.text));
            let answered = read_message(&folder.join(OUT_FILE)).map(|m| (m.seq, m.text));
            let sent_age = fs::symlink_metadata(&in_path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok());
            mailboxes.push(MailboxStatus {
                folder,
                instance,
                player,
                sent,
                answered,
                sent_age,
            });
        }
    }
    mailboxes.sort_by(|a, b| a.instance.cmp(&b.instance));
    Ok(BoardStatus {
        board: board.to_path_buf(),
        owner,
        liveness,
        mailboxes,
    })
}

fn flock_held(board: &Path) -> bool {
    use fs2::FileExt;
    use std::os::unix::fs::OpenOptionsExt;
    // Never through a link, never waiting on a FIFO planted there.
    let opened = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(board.join(FLOCK_FILE));
    match opened.and_then(|f| {
        if f.metadata()?.is_file() {
            Ok(f)
        } else {
            Err(std::io::ErrorKind::InvalidInput.into())
        }
    }) {
        Ok(f) => {
            let free = f.try_lock_shared().is_ok();
            if free {
                let _ = FileExt::unlock(&f);
            }
            !free
        }
        Err(_) => false,
    }
}
