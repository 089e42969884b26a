//! The two file operations of the protocol, done safely: a bounded read that
//! never follows a symlink, and an atomic replace by temp file + rename.
//!
//! Owns the platform details of those two operations. Knows nothing about
//! message content.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a bounded read found.
#[derive(Debug)]
pub enum ReadOutcome {
    Missing,
    Bytes(Vec<u8>),
    /// The path is a symlink (never followed).
    Symlink,
    /// Not a regular file (a folder, a FIFO…).
    NotAFile,
    /// Larger than the limit; the size, not read.
    TooLarge(u64),
}

fn open_nofollow(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO planted as a move file must not hang.
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    {
        if fs::symlink_metadata(path)?.file_type().is_symlink() {
            return Err(io::Error::other("symlink"));
        }
    }
    opts.open(path)
}

fn is_symlink_error(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        e.to_string() == "symlink"
    }
}

/// Reads at most `limit` bytes of `path` without following a symlink.
pub fn read_limited(path: &Path, limit: usize) -> io::Result<ReadOutcome> {
    let file = match open_nofollow(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ReadOutcome::Missing),
        Err(e) if is_symlink_error(&e) => return Ok(ReadOutcome::Symlink),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(ReadOutcome::NotAFile);
    }
    if meta.len() > limit as u64 {
        return Ok(ReadOutcome::TooLarge(meta.len()));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize + 1);
    file.take(limit as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() > limit {
        return Ok(ReadOutcome::TooLarge(buf.len() as u64));
    }
    Ok(ReadOutcome::Bytes(buf))
}

/// True if `path` exists and is a symlink (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// How a temp file takes the place of the old file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Swap {
    /// Rename over the old file (delete and rename where the drive refuses):
    /// the name never disappears. For files a referee re-reads as a whole
    /// (the lock's OWNER, schedule.json).
    Over,
    /// Delete the old file, then rename: readers may briefly find no file,
    /// which for a move file means "nothing yet". On ext4 this is four
    /// times faster than renaming over the old file, which makes ext4 start
    /// writing the new file's data to disk at once (its `auto_da_alloc`
    /// safeguard): about 130 µs per message on this project's machines.
    DeleteFirst,
}

/// Replaces `dir/name` with `content` atomically: a temp file in the same
/// folder renamed over the old one. Readers see the old or the new content.
pub fn replace(dir: &Path, name: &str, content: &[u8]) -> io::Result<()> {
    swap_in(dir, dir, name, content, Swap::Over)
}

/// Writes a move file: the temp file in `tmp_dir` (a folder on the same
/// drive that nobody watches, so watchers of `dir` see only the final
/// rename), the old file deleted, then the rename. Readers see the old
/// message, no file, or the whole new one.
pub fn replace_message(tmp_dir: &Path, dir: &Path, name: &str, content: &[u8]) -> io::Result<()> {
    swap_in(tmp_dir, dir, name, content, Swap::DeleteFirst)
}

fn swap_in(tmp_dir: &Path, dir: &Path, name: &str, content: &[u8], swap: Swap) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tmp = tmp_dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let target = dir.join(name);
    let result = (|| {
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NOFOLLOW);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(content)?;
        drop(f);
        if swap == Swap::Over {
            if let Ok(()) = fs::rename(&tmp, &target) {
                return Ok(());
            }
        }
        match fs::remove_file(&target) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        assert!(matches!(
            read_limited(&p, 10).unwrap(),
            ReadOutcome::Missing
        ));
        fs::write(&p, "hello").unwrap();
        assert!(matches!(read_limited(&p, 10).unwrap(), ReadOutcome::Bytes(b) if b == b"hello"));
        assert!(matches!(
            read_limited(&p, 3).unwrap(),
            ReadOutcome::TooLarge(5)
        ));
        assert!(matches!(
            read_limited(dir.path(), 3).unwrap(),
            ReadOutcome::NotAFile
        ));
        #[cfg(unix)]
        {
            let link = dir.path().join("link.txt");
            std::os::unix::fs::symlink(&p, &link).unwrap();
            assert!(matches!(
                read_limited(&link, 10).unwrap(),
                ReadOutcome::Symlink
            ));
        }
    }

    #[test]
    fn replace_swaps_content_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        replace(dir.path(), "in.txt", b"one").unwrap();
        replace(dir.path(), "in.txt", b"two").unwrap();
        assert_eq!(fs::read(dir.path().join("in.txt")).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
