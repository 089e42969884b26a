//! The two file operations of the protocol, done safely: a bounded read that
//! never follows a symlink, and an atomic replace by temp file + rename.
//!
//! Owns the platform details of those two operations. Knows nothing about
//! message content.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
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
    // On sshfs an fstat goes by path: if the writer replaced the file just
    // after our open, the name is briefly gone. That is "nothing yet".
    let gone = |e: io::Error| match e.kind() {
        io::ErrorKind::NotFound => Ok(ReadOutcome::Missing),
        _ => Err(e),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return gone(e),
    };
    if !meta.is_file() {
        return Ok(ReadOutcome::NotAFile);
    }
    if meta.len() > limit as u64 {
        return Ok(ReadOutcome::TooLarge(meta.len()));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize + 1);
    if let Err(e) = file.take(limit as u64 + 1).read_to_end(&mut buf) {
        return gone(e);
    }
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

/// The identity of a file (device and inode), to tell whether a name
/// still holds the file we put there.
#[cfg(target_os = "linux")]
fn file_id(meta: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Swaps two names atomically (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: two valid NUL-terminated paths relative to the working dir.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One move file written message after message, replaced atomically each
/// time without creating a file per message.
///
/// Two files take turns: the next message is written into a spare file
/// (never visible under the move file's name while being written), then
/// the spare and the move file swap names in one step
/// (`RENAME_EXCHANGE`). A reader sees the old message or the whole new
/// one, and the name never disappears. The old message's file becomes the
/// spare; it is only rewritten for the message after next, which the
/// protocol sends only after the answer to the one between — by then no
/// reader is still reading it.
///
/// Where the drive cannot swap names (network file systems, other systems)
/// each message goes through a fresh temp file, the old file deleted, and
/// a rename ([`replace_message`]). Measured here: the swap costs ~16 µs a
/// message, a fresh file 40–80 µs on ext4, and on a journal-less ext4 the
/// inodes created and deleted per message also slow every later file
/// creation on the drive.
pub struct MessageFile {
    tmp_dir: PathBuf,
    dir: PathBuf,
    name: &'static str,
    spare_path: PathBuf,
    /// The file now under `spare_path`, ours to rewrite.
    spare: Option<fs::File>,
    /// The file we last put under the move file's name, and its identity.
    #[cfg(target_os = "linux")]
    live: Option<(fs::File, (u64, u64))>,
    /// Whether this drive swaps names; cleared on the first refusal.
    swaps: bool,
}

impl MessageFile {
    /// The move file `dir/name`, with its spare in `tmp_dir` named after `tag`.
    pub fn new(tmp_dir: &Path, dir: &Path, name: &'static str, tag: &str) -> MessageFile {
        MessageFile {
            tmp_dir: tmp_dir.to_path_buf(),
            dir: dir.to_path_buf(),
            name,
            spare_path: tmp_dir.join(format!(".{tag}.{name}.spare")),
            spare: None,
            #[cfg(target_os = "linux")]
            live: None,
            swaps: cfg!(target_os = "linux"),
        }
    }

    /// Writes `content` as the move file's new content.
    pub fn write(&mut self, content: &[u8]) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        if self.swaps {
            return self.write_by_swap(content);
        }
        replace_message(&self.tmp_dir, &self.dir, self.name, content)
    }

    #[cfg(target_os = "linux")]
    fn write_by_swap(&mut self, content: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let target = self.dir.join(self.name);
        // Someone else may have removed or replaced the move file (a new
        // instance's cleanup) or the spare: then start over with fresh ones.
        let id_at = |p: &Path| fs::symlink_metadata(p).ok().map(|m| file_id(&m));
        if let Some((_, id)) = &self.live {
            if id_at(&target) != Some(*id) {
                self.live = None;
            }
        }
        if let Some(f) = &self.spare {
            if id_at(&self.spare_path) != Some(file_id(&f.metadata()?)) {
                self.spare = None;
            }
        }
        if self.spare.is_none() {
            let _ = fs::remove_file(&self.spare_path);
            let mut opts = OpenOptions::new();
            use std::os::unix::fs::OpenOptionsExt;
            opts.read(true)
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW);
            self.spare = Some(opts.open(&self.spare_path)?);
        }
        let spare = self.spare.as_ref().expect("just made");
        spare.write_all_at(content, 0)?;
        spare.set_len(content.len() as u64)?;
        // The last look before the message becomes visible: a referee that
        // lost the board (stopped, then continued) must not write into it.
        super::lock::may_write_board().map_err(io::Error::other)?;
        let swapped = match self.live {
            Some(_) => match exchange(&self.spare_path, &target) {
                Ok(()) => true,
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
                    ) =>
                {
                    // This drive cannot swap: from now on, fresh files.
                    self.swaps = false;
                    false
                }
                Err(e) => return Err(e),
            },
            None => false,
        };
        if swapped {
            let new_live = self.spare.take().expect("written");
            let id = file_id(&new_live.metadata()?);
            self.spare = self.live.take().map(|(f, _)| f);
            self.live = Some((new_live, id));
        } else {
            // The first message (or no swapping): delete, then rename in.
            match fs::remove_file(&target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            fs::rename(&self.spare_path, &target)?;
            let new_live = self.spare.take().expect("written");
            let id = file_id(&new_live.metadata()?);
            self.live = Some((new_live, id));
        }
        Ok(())
    }
}

impl Drop for MessageFile {
    fn drop(&mut self) {
        if self.spare.is_some() {
            let _ = fs::remove_file(&self.spare_path);
        }
    }
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
    fn a_message_file_swaps_in_each_message_whole() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("box");
        fs::create_dir(&dir).unwrap();
        let mut mf = MessageFile::new(root.path(), &dir, "in.txt", "box");
        for n in 0..5 {
            let msg = format!("referee\nbox\n{n}\n{}\n", "x".repeat(10 - 2 * n));
            mf.write(msg.as_bytes()).unwrap();
            assert_eq!(fs::read_to_string(dir.join("in.txt")).unwrap(), msg);
        }
        // Removed from outside (a fresh instance's cleanup): written again.
        fs::remove_file(dir.join("in.txt")).unwrap();
        mf.write(b"after\n").unwrap();
        assert_eq!(fs::read(dir.join("in.txt")).unwrap(), b"after\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "only the move file");
        drop(mf);
        assert_eq!(
            fs::read_dir(root.path()).unwrap().count(),
            1,
            "no spare left"
        );
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
