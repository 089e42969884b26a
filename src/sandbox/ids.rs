//! User ids for spawned bots when the referee runs as root: each running
//! bot process gets an id of its own from a range set aside for bots, so
//! no two bots share a process count, files or kernel objects by user.
//!
//! Owns: the range ([`IdRange`], `[sandbox] ids` in tournament.toml,
//! default [`DEFAULT_IDS`]) and leasing one id of it to one bot process at
//! a time ([`IdLease`]), across every referee on this machine (a lock file
//! per id in [`LEASE_DIR`], held while the lease lives). Must not: start
//! processes or change owners of files (the caller hands the bot's folders
//! to the id it leased).
//!
//! The ids need no entry in `/etc/passwd`: a bot running as one is "other"
//! to every file of the machine, like `nobody`, and its group is the id
//! of the same number.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// The ids bots run as by default: 65536 ids far above those of people
/// (Debian gives people 1000–59999, systemd's dynamic users sit at
/// 61184–65519, and container tools hand out 100000 onwards in blocks of
/// 65536 per user; 1,800,000,000 onwards is used by none of them).
pub const DEFAULT_IDS: IdRange = IdRange {
    first: 1_800_000_000,
    last: 1_800_065_535,
};

/// Where the lock files of leased ids live (root only).
pub const LEASE_DIR: &str = "/run/tournament-bot-ids";

/// A range of user ids set aside for bots, both ends included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRange {
    pub first: u32,
    pub last: u32,
}

impl IdRange {
    /// Reads `FIRST-LAST`: not empty, nothing below 1000 (root and the
    /// system's users), not the ids that mean "no id" (65535, 4294967295).
    pub fn parse(text: &str) -> Result<IdRange, String> {
        let (a, b) = text.split_once('-').ok_or_else(|| {
            format!("{text:?} is not FIRST-LAST (e.g. \"1800000000-1800065535\")")
        })?;
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| format!("{:?} is not a user id (0 to 4294967294)", s.trim()))
        };
        let range = IdRange {
            first: num(a)?,
            last: num(b)?,
        };
        if range.first > range.last {
            return Err(format!("{text:?}: the first id is above the last"));
        }
        if range.first < 1000 {
            return Err(format!(
                "{text:?} holds ids below 1000 (root and system users); bots need ids nobody else uses"
            ));
        }
        for bad in [65535u32, u32::MAX] {
            if range.first <= bad && bad <= range.last {
                return Err(format!(
                    "{text:?} holds {bad}, which means \"no id\" to the kernel"
                ));
            }
        }
        Ok(range)
    }
}

impl std::fmt::Display for IdRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// One id of the range, leased to one bot process: no other bot of any
/// referee on this machine gets it while this value lives.
#[derive(Debug)]
pub struct IdLease {
    id: u32,
    /// Locked while the lease lives; the file stays for the next lease
    /// (removing it would race with another referee locking it).
    _lock: File,
}

impl IdLease {
    /// Leases a free id of `range`, starting the search at a place that
    /// depends on this referee (two referees rarely try the same ids).
    pub fn take(range: IdRange) -> io::Result<IdLease> {
        std::fs::create_dir_all(LEASE_DIR)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(LEASE_DIR, std::fs::Permissions::from_mode(0o700));
        }
        let size = u64::from(range.last - range.first) + 1;
        let start = u64::from(std::process::id()).wrapping_mul(7919) % size;
        let tries = size.min(100_000);
        for k in 0..tries {
            let id = range.first + ((start + k) % size) as u32;
            if let Some(lease) = Self::try_id(Path::new(LEASE_DIR), id)? {
                return Ok(lease);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("every user id of {range} is in use by a running bot"),
        ))
    }

    fn try_id(dir: &Path, id: u32) -> io::Result<Option<IdLease>> {
        let path = dir.join(id.to_string());
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        match fs2::FileExt::try_lock_exclusive(&file) {
            Ok(()) => Ok(Some(IdLease { id, _lock: file })),
            Err(e) if e.raw_os_error() == fs2::lock_contended_error().raw_os_error() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The bot's (uid, gid): the id, and the group of the same number.
    pub fn user(&self) -> (u32, u32) {
        (self.id, self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_and_bad_ones_refused() {
        assert_eq!(
            IdRange::parse("1800000000-1800065535").unwrap(),
            DEFAULT_IDS
        );
        assert!(IdRange::parse("0-100").unwrap_err().contains("below 1000"));
        assert!(IdRange::parse("60000-70000").unwrap_err().contains("65535"));
        assert!(IdRange::parse("5000-4000").unwrap_err().contains("above"));
        assert!(IdRange::parse("5000").unwrap_err().contains("FIRST-LAST"));
    }
}
