//! Whether a referee still holds a lock, as a reader of the folder can
//! tell: from the lock's owner record (for a results folder,
//! `<results>/lock/REFEREE/OWNER`, taken by `run` through
//! `crate::results::lock`). On this machine, by the holder's process
//! (`mailbox::holder_alive`: alive, and started before it took the lock);
//! on another machine, by its heartbeat still changing, timed on this
//! process's own clock (two machines' clocks are never compared), with the
//! lock's own staleness period.
//!
//! Owns that judgement for every reader — the live page (`serve::feed`),
//! `watch`, a share's state (`shard`) — the one rule beside the lock's own
//! staleness (`lock::judge`, which decides taking the lock over): only
//! reads the owner record (never takes, breaks or cleans the lock), and
//! does not decide what a reader shows.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{holder_alive, hostname, read_owner, DEFAULT_STALE};

/// What the results lock says about the referee.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Referee {
    /// Nobody holds the lock: no referee runs (not started, or it ended
    /// and let go).
    Absent,
    /// A referee holds it and is alive.
    Running,
    /// The lock is held by a referee that is gone: its process died (this
    /// machine), or its heartbeat stopped (another machine).
    Gone,
}

/// Watches one results folder's lock across looks.
pub struct RefereeWatch {
    lock: PathBuf,
    this_host: String,
    /// A heartbeat unchanged this long means its holder is gone, unless
    /// the holder recorded its own period (`stale_ms`).
    stale: Duration,
    /// The last (token, heartbeat) seen from another machine, and when
    /// (on our clock) it was first seen.
    last_beat: Option<((String, u64), Instant)>,
}

impl RefereeWatch {
    /// Watches the lock in folder `lock` (a results folder's `lock/`)
    /// with the lock's own staleness period.
    pub fn new(lock: &Path) -> RefereeWatch {
        RefereeWatch::with_stale(lock, DEFAULT_STALE)
    }

    pub fn with_stale(lock: &Path, stale: Duration) -> RefereeWatch {
        RefereeWatch {
            lock: lock.to_path_buf(),
            this_host: hostname(),
            stale,
            last_beat: None,
        }
    }

    /// Reads the owner record once more.
    pub fn look(&mut self) -> Referee {
        let Some(owner) = read_owner(&self.lock) else {
            self.last_beat = None;
            return Referee::Absent;
        };
        if owner.host == self.this_host {
            self.last_beat = None;
            return if holder_alive(&owner) {
                Referee::Running
            } else {
                Referee::Gone
            };
        }
        let stale = owner.stale_period(self.stale);
        let beat = (owner.token, owner.heartbeat);
        let since = match &self.last_beat {
            Some((seen, at)) if *seen == beat => *at,
            _ => {
                let now = Instant::now();
                self.last_beat = Some((beat, now));
                now
            }
        };
        if since.elapsed() < stale {
            Referee::Running
        } else {
            Referee::Gone
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mailbox::OwnerRecord;
    use crate::results::LOCK_DIR;

    fn write_owner(results: &Path, host: &str, pid: u32, heartbeat: u64) {
        let dir = results.join(LOCK_DIR).join(crate::mailbox::LOCK_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        let record = OwnerRecord {
            token: "t1".into(),
            host: host.into(),
            pid,
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            heartbeat,
            board: results.join(LOCK_DIR).display().to_string(),
            command: "tournament run".into(),
            stale_ms: 0,
        };
        std::fs::write(dir.join("OWNER"), record.encode()).unwrap();
    }

    #[test]
    fn a_holder_on_this_machine_counts_while_its_process_lives() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = RefereeWatch::new(&dir.path().join(LOCK_DIR));
        assert_eq!(watch.look(), Referee::Absent);
        write_owner(dir.path(), &hostname(), std::process::id(), 1);
        assert_eq!(watch.look(), Referee::Running);
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        write_owner(dir.path(), &hostname(), pid, 1);
        assert_eq!(watch.look(), Referee::Gone, "its process exited");
        std::fs::remove_dir_all(dir.path().join(LOCK_DIR)).unwrap();
        assert_eq!(watch.look(), Referee::Absent, "released");
    }

    #[test]
    fn a_holder_elsewhere_counts_while_its_heartbeat_changes() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch =
            RefereeWatch::with_stale(&dir.path().join(LOCK_DIR), Duration::from_millis(300));
        // Its pid means nothing here: ours, alive, must not make it count.
        write_owner(dir.path(), "another-machine", std::process::id(), 7);
        assert_eq!(watch.look(), Referee::Running, "first seen");
        std::thread::sleep(Duration::from_millis(200));
        write_owner(dir.path(), "another-machine", std::process::id(), 8);
        assert_eq!(watch.look(), Referee::Running);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(watch.look(), Referee::Running, "changed 200 ms ago");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(watch.look(), Referee::Gone, "silent for 400 ms");
        write_owner(dir.path(), "another-machine", std::process::id(), 9);
        assert_eq!(watch.look(), Referee::Running, "beating again");
    }
}
