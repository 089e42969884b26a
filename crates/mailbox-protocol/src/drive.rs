//! What the drive under a folder allows of the file operations the
//! protocol's writers prefer, where a Windows share (SMB) differs from a
//! POSIX drive: replacing or deleting a file that someone holds open (a
//! sharing violation on SMB: `EBUSY` through the client that holds it,
//! `EEXIST` or `EBUSY` from another machine), and opening a file for
//! appending (smbnetfs, a FUSE SMB client, fails an `O_APPEND` open with
//! `EIO` and then every open of its mount for seconds).
//!
//! Owns the one answer per drive (device) in a process: told by the drive's
//! type (`/proc/self/mountinfo`: cifs, smb3, a FUSE SMB client), or learnt
//! from the first replace a drive refused ([`refused`]); said once in the
//! log; and opening a file to append to it as its drive allows
//! ([`open_for_append`]). Never probes by trying an operation that could
//! break a mount, and never writes anything itself: the writers
//! ([`crate::files`], the tournament's results and logs) ask and fall back.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What a drive allows (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drive {
    /// A file someone holds open may be renamed over or deleted (POSIX);
    /// false on SMB, where files are rewritten in place instead.
    pub replaces_open_files: bool,
    /// Files may be opened with `O_APPEND`; false through smbnetfs, where
    /// an appender writes at the end it keeps itself.
    pub appends: bool,
}

impl Drive {
    /// What a POSIX drive allows, and what an unknown drive is taken to
    /// allow until it refuses.
    pub const POSIX: Drive = Drive {
        replaces_open_files: true,
        appends: true,
    };
}

/// The drives seen so far in this process, by device number.
fn known() -> &'static Mutex<HashMap<u64, Drive>> {
    static KNOWN: OnceLock<Mutex<HashMap<u64, Drive>>> = OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

/// What the drive holding `path` (a file or folder that exists) allows.
/// A path that cannot be looked at is taken to be on a POSIX drive. (The
/// cast is for systems whose `st_dev` is narrower.)
#[allow(clippy::unnecessary_cast)]
pub fn of(path: &Path) -> Drive {
    match rustix::fs::stat(path) {
        Ok(st) => of_device(st.st_dev as u64, path),
        Err(_) => Drive::POSIX,
    }
}

/// What the drive with device number `dev` allows; `shown` names a path on
/// it for the log.
pub fn of_device(dev: u64, shown: &Path) -> Drive {
    let mut known = known().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = known.get(&dev) {
        return *d;
    }
    let fstype = mount_type(dev);
    let d = fstype.as_deref().map_or(Drive::POSIX, drive_of_type);
    if d != Drive::POSIX {
        tracing::info!(
            "{} is on an SMB share ({}): {}{}",
            shown.display(),
            fstype.as_deref().unwrap_or("?"),
            if d.replaces_open_files {
                ""
            } else {
                "a file someone holds open there can be neither replaced nor deleted, so files \
                 there are rewritten in place"
            },
            if d.appends {
                ""
            } else {
                "; this client fails an open for appending (and then every open of its mount for \
                 seconds), so files there are appended to at the end the writer keeps"
            }
        );
    }
    known.insert(dev, d);
    d
}

/// Records that the drive with device number `dev` refused to replace or
/// delete `what` because someone held it open (`e`): from now on files on
/// it are rewritten in place. Says so once.
pub fn refused(dev: u64, what: &Path, e: &io::Error) {
    let mut known = known().lock().unwrap_or_else(|e| e.into_inner());
    let d = known.entry(dev).or_insert(Drive::POSIX);
    if d.replaces_open_files {
        d.replaces_open_files = false;
        tracing::warn!(
            "the drive of {} refused to replace or delete it while someone held it open ({e}), as \
             a Windows share (SMB) does: from now on files on this drive are rewritten in place",
            what.display()
        );
    }
}

/// Whether `e`, from a rename over a file or a delete, is what a drive
/// answers when someone holds the file open (a sharing violation).
pub fn is_sharing_violation(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EBUSY) | Some(libc::EEXIST) | Some(libc::ETXTBSY)
    )
}

/// Opens `path` with `opts` to append to it, as its drive allows: with
/// `O_APPEND`, or where the drive refuses that (smbnetfs) for writing,
/// placed at the end (the caller is the file's only writer, and keeps its
/// place: after cutting the file back it seeks there). Returns the file
/// and whether it was opened with `O_APPEND`.
pub fn open_for_append(opts: &OpenOptions, path: &Path) -> io::Result<(File, bool)> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let appends = of(folder).appends;
    Ok((open_at_end(opts, path, appends)?, appends))
}

/// [`open_for_append`] on a drive that `appends` or not. Without
/// `O_APPEND` the file is opened to read too: smbnetfs fails to find the
/// end of a file opened write-only (`lseek` gives `EIO` when it must ask
/// the server, and the mount then fails every open for seconds).
fn open_at_end(opts: &OpenOptions, path: &Path, appends: bool) -> io::Result<File> {
    let mut opts = opts.clone();
    if appends {
        opts.append(true);
    } else {
        opts.read(true).write(true);
    }
    let mut file = opts.open(path)?;
    if !appends {
        file.seek(SeekFrom::End(0))?;
    }
    Ok(file)
}

/// Runs `op` again while it fails with a sharing violation (someone, a
/// reader, holds the file open for a moment), for up to a second; then
/// gives its last result. For the clean-ups that must not give up at the
/// first try on a Windows share (a lock released, its files removed).
pub fn retrying<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let until = Instant::now() + Duration::from_secs(1);
    let mut pause = Duration::from_millis(5);
    loop {
        match op() {
            Err(e) if is_sharing_violation(&e) && Instant::now() < until => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// What a drive of file-system type `fstype` (as `/proc/self/mountinfo`
/// names it) allows.
fn drive_of_type(fstype: &str) -> Drive {
    let smb = matches!(fstype, "cifs" | "smb3" | "smbfs")
        || fstype
            .strip_prefix("fuse.")
            .is_some_and(|client| client.contains("smb"));
    Drive {
        replaces_open_files: !smb,
        appends: fstype != "fuse.smbnetfs",
    }
}

/// The file-system type of the mount whose device number is `dev`.
#[cfg(target_os = "linux")]
fn mount_type(dev: u64) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = format!(
        "{}:{}",
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t)
    );
    text.lines()
        .rev()
        .filter(|line| line.split(' ').nth(2) == Some(want.as_str()))
        .find_map(|line| line.split(" - ").nth(1)?.split(' ').next())
        .map(String::from)
}

#[cfg(not(target_os = "linux"))]
fn mount_type(_dev: u64) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smb_clients_are_told_by_their_type() {
        for t in ["cifs", "smb3", "fuse.smbnetfs", "fuse.smb4k"] {
            assert!(!drive_of_type(t).replaces_open_files, "{t}");
        }
        assert!(!drive_of_type("fuse.smbnetfs").appends);
        assert!(drive_of_type("cifs").appends);
        for t in ["ext4", "tmpfs", "nfs4", "fuse.sshfs", "xfs"] {
            assert_eq!(drive_of_type(t), Drive::POSIX, "{t}");
        }
    }

    #[test]
    fn a_local_folder_allows_everything_and_a_refusal_is_remembered() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(of(dir.path()), Drive::POSIX);
        assert!(mount_type(rustix::fs::stat(dir.path()).unwrap().st_dev as u64).is_some());
        // A device number no mount has: learnt from its refusal.
        let dev = u64::MAX - 7;
        assert!(of_device(dev, dir.path()).replaces_open_files);
        refused(dev, dir.path(), &io::Error::from_raw_os_error(libc::EBUSY));
        assert!(!of_device(dev, dir.path()).replaces_open_files);
        assert!(of_device(dev, dir.path()).appends);
    }

    #[test]
    fn an_appender_writes_at_the_end_either_way() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "one\n").unwrap();
        let mut opts = OpenOptions::new();
        opts.create(true);
        let (mut f, appends) = open_for_append(&opts, &path).unwrap();
        assert!(appends, "a local disk appends");
        f.write_all(b"two\n").unwrap();
        // As on a drive that refuses O_APPEND.
        let mut f = open_at_end(&opts, &path, false).unwrap();
        f.write_all(b"three\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\ntwo\nthree\n");
        let made = dir.path().join("new");
        open_at_end(&opts, &made, false)
            .unwrap()
            .write_all(b"x\n")
            .unwrap();
        assert_eq!(std::fs::read_to_string(&made).unwrap(), "x\n");
    }

    #[test]
    fn a_clean_up_is_tried_again_while_the_file_is_held_only() {
        let mut tries = 0;
        let r: io::Result<()> = retrying(|| {
            tries += 1;
            if tries < 3 {
                Err(io::Error::from_raw_os_error(libc::EBUSY))
            } else {
                Ok(())
            }
        });
        assert!(r.is_ok());
        assert_eq!(tries, 3);
        let mut tries = 0;
        let r: io::Result<()> = retrying(|| {
            tries += 1;
            Err(io::Error::from_raw_os_error(libc::ENOENT))
        });
        assert!(r.is_err());
        assert_eq!(tries, 1, "another failure is not tried again");
    }

    #[test]
    fn sharing_violations_are_told_from_other_failures() {
        for e in [libc::EBUSY, libc::EEXIST, libc::ETXTBSY] {
            assert!(is_sharing_violation(&io::Error::from_raw_os_error(e)));
        }
        for e in [libc::ENOENT, libc::EACCES, libc::EIO] {
            assert!(!is_sharing_violation(&io::Error::from_raw_os_error(e)));
        }
    }
}
