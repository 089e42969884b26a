//! The file operations of the protocol, done safely on folders the referee
//! holds open: a bounded read that never follows a link, never blocks and
//! takes only a regular file with one name, and an atomic replace by a file
//! of our own + rename — or, on a drive that refuses to replace a file
//! someone holds open (a Windows share: [`crate::drive`]), a rewrite in
//! place.
//!
//! Owns the platform details of those operations ([`Dir`]: a folder held by
//! its descriptor, every name looked up relative to it, `openat`-style, with
//! no following of links), and the per-message forms that make few system
//! calls: [`MessageFile`] (a move file written message after message) and
//! [`MessageReader`] (one read look after look, the files last found held
//! open). Never follows a link, never writes into or truncates a file with
//! more than one name, and writes into a file it did not create itself only
//! where the drive refuses to replace it (SMB, which has no links); never
//! reads one it has not just found, by its name, to be a regular file with
//! one name. Knows of message content only the frame's line feeds (a
//! message written in place stays incomplete until it is whole), and
//! nothing of the board's lock: a writer's gate (the referee's lock check)
//! is asked right before a message becomes visible.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

use crate::drive::{self, Drive};
use crate::message::{Message, PAD};

/// What a bounded read found.
#[derive(Debug)]
pub enum ReadOutcome {
    Missing,
    Bytes(Vec<u8>),
    /// The path is a symlink (never followed).
    Symlink,
    /// Not a regular file (a folder, a FIFO, a device…).
    NotAFile,
    /// Larger than the limit; the size, not read.
    TooLarge(u64),
    /// A regular file with this many names (hard links): it may be a file
    /// from elsewhere linked in, so it is neither read nor written.
    Linked(u64),
}

/// A folder held open by its descriptor: names inside it are looked up
/// relative to it, so a folder renamed or swapped for a link after it was
/// opened cannot redirect what we read or write. `path` is for messages.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    /// Read files with `O_DIRECT` (a network drive: see [`Dir::read_direct`]).
    direct: std::sync::atomic::AtomicBool,
    /// The folder's device and inode, once asked: a descriptor's identity
    /// never changes, so it is `fstat`ed once, not at every check.
    id: std::sync::OnceLock<(u64, u64)>,
}

fn file_type(st: &rustix::fs::Stat) -> FileType {
    FileType::from_raw_mode(st.st_mode as rustix::fs::RawMode)
}

/// Device and inode: what a name refers to. (The casts are for systems
/// whose `stat` fields are narrower.)
#[allow(clippy::unnecessary_cast)]
fn identity(st: &rustix::fs::Stat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::RDONLY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY);

impl Dir {
    /// Opens the folder at `path` (a path the user gave; links in it are
    /// the user's and are followed).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty())?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
            direct: Default::default(),
            id: Default::default(),
        })
    }

    /// Opens the folder `name` inside this one, refusing a link
    /// (`ELOOP`/`ENOTDIR`).
    pub fn child(&self, name: &str) -> io::Result<Dir> {
        let fd = rustix::fs::openat(&self.fd, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
            .map_err(|e| match e {
                rustix::io::Errno::LOOP => {
                    io::Error::other(format!("{} is a symlink", self.path.join(name).display()))
                }
                rustix::io::Errno::NOTDIR => io::Error::other(format!(
                    "{} is not a folder",
                    self.path.join(name).display()
                )),
                e => io::Error::from(e),
            })?;
        Ok(Dir {
            fd,
            path: self.path.join(name),
            direct: Default::default(),
            id: Default::default(),
        })
    }

    /// Opens the folder `name` inside this one, making it first if it is
    /// missing. Returns whether it was made now.
    pub fn child_or_create(&self, name: &str) -> io::Result<(Dir, bool)> {
        let made = match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) => true,
            Err(rustix::io::Errno::EXIST) => false,
            Err(e) => return Err(e.into()),
        };
        Ok((self.child(name)?, made))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// From now on read files here with `O_DIRECT`, where the drive allows
    /// it. On a network drive (sshfs, NFS) the kernel remembers a file's
    /// length for a while and a plain read stops at that length: a file
    /// another machine truncated and wrote again (a version 1 bot's
    /// overwrite of out.txt) looks empty or cut off until the cache
    /// expires. A direct read asks the server for the bytes.
    pub fn read_direct(&self) {
        self.direct
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether files here are read with `O_DIRECT` (see [`Dir::read_direct`]).
    fn is_direct(&self) -> bool {
        self.direct.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// This folder's device and inode (one `fstat`, the first time).
    fn identity(&self) -> io::Result<(u64, u64)> {
        if let Some(id) = self.id.get() {
            return Ok(*id);
        }
        let id = identity(&rustix::fs::fstat(&self.fd)?);
        Ok(*self.id.get_or_init(|| id))
    }

    /// What the drive of this folder allows ([`crate::drive`]).
    pub fn drive(&self) -> Drive {
        match self.identity() {
            Ok((dev, _)) => drive::of_device(dev, &self.path),
            Err(_) => Drive::POSIX,
        }
    }

    /// The drive refused to replace or delete `name` here because someone
    /// held it open (`e`): files on it are rewritten in place from now on.
    pub fn refused(&self, name: &str, e: &io::Error) {
        if let Ok((dev, _)) = self.identity() {
            drive::refused(dev, &self.path.join(name), e);
        }
    }

    /// Rewrites `name` here in place with `content`, for a drive that
    /// refuses to replace a file someone holds open: written over the old
    /// content from its start, then cut to the new length; made (never
    /// through a link) if missing. Only a regular file with one name is
    /// written into. A reader may meanwhile see old and new bytes mixed
    /// (the lock's OWNER keeps one length, and only its heartbeat's digits
    /// change; move files are written by [`MessageFile`], which keeps a
    /// message incomplete until it is whole).
    pub fn rewrite(&self, name: &str, content: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let (file, len) = match self.open_to_write(name)? {
            Some((file, st)) => (file, st.st_size as u64),
            None => (self.create_new(name)?, 0),
        };
        file.write_all_at(content, 0)?;
        if len > content.len() as u64 {
            file.set_len(content.len() as u64)?;
        }
        Ok(())
    }

    /// The file `name` here opened for writing (never through a link, never
    /// created, never truncated), if there is one, with its `fstat`: only a
    /// regular file with one name. Opened to read and write: smbnetfs (a
    /// FUSE SMB client) fails to cut a file opened write-only (`EIO`).
    fn open_to_write(&self, name: &str) -> io::Result<Option<(File, rustix::fs::Stat)>> {
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let st = rustix::fs::fstat(&fd)?;
        if file_type(&st) != FileType::RegularFile || st.st_nlink != 1 {
            return Err(io::Error::other(format!(
                "{} is not a plain file (a regular file with one name): not written into",
                self.path.join(name).display()
            )));
        }
        Ok(Some((File::from(fd), st)))
    }

    /// The kind and identity of `name` here, without following a link.
    fn stat_at(&self, name: &str) -> io::Result<rustix::fs::Stat> {
        Ok(rustix::fs::statat(
            &self.fd,
            name,
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    /// True if `name` here exists (of any kind; a link is not followed).
    pub fn stat_exists(&self, name: &str) -> bool {
        self.stat_at(name).is_ok()
    }

    /// True if `name` here exists and is a symlink.
    pub fn is_symlink(&self, name: &str) -> bool {
        self.stat_at(name)
            .is_ok_and(|st| file_type(&st) == FileType::Symlink)
    }

    /// True if `parent/name` is still this very folder (not removed, not
    /// renamed away, not replaced by another folder or a link). One
    /// `newfstatat` of the name: the folder's own identity is known.
    pub fn still_at(&self, parent: &Dir, name: &str) -> bool {
        let (Ok(there), Ok(me)) = (parent.stat_at(name), self.identity()) else {
            return false;
        };
        file_type(&there) == FileType::Directory && identity(&there) == me
    }

    /// Reads at most `limit` bytes of the file `name` here: never follows a
    /// link, never blocks (a FIFO), and reads only a regular file with one
    /// name.
    pub fn read_limited(&self, name: &str, limit: usize) -> io::Result<ReadOutcome> {
        // Look before opening: opening a device node can have effects.
        match self.stat_at(name) {
            Ok(st) => match file_type(&st) {
                FileType::RegularFile => {}
                FileType::Symlink => return Ok(ReadOutcome::Symlink),
                _ => return Ok(ReadOutcome::NotAFile),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ReadOutcome::Missing),
            // sshfs may fail a stat by path (B3): let the open decide.
            Err(_) => {}
        }
        match self.open_plain(name, limit)? {
            Opened::File(file, st) => read_whole(&file, st.st_size as u64, limit, self.is_direct()),
            Opened::Not(outcome) => Ok(outcome),
        }
    }

    /// Opens `name` here for reading (never through a link, never
    /// blocking) and checks what was opened: a regular file with one name
    /// and at most `limit` bytes, or what it was instead.
    fn open_plain(&self, name: &str, limit: usize) -> io::Result<Opened> {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let direct = self.is_direct();
        let opened = match rustix::fs::openat(
            &self.fd,
            name,
            if direct {
                flags | OFlags::DIRECT
            } else {
                flags
            },
            Mode::empty(),
        ) {
            Err(rustix::io::Errno::INVAL) if direct => {
                // This drive refuses direct reads: plain ones from now on.
                self.direct
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                rustix::fs::openat(&self.fd, name, flags, Mode::empty())
            }
            other => other,
        };
        let fd = match opened {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(Opened::Not(ReadOutcome::Missing)),
            Err(rustix::io::Errno::LOOP) => return Ok(Opened::Not(ReadOutcome::Symlink)),
            Err(e) => return Err(e.into()),
        };
        let st = match rustix::fs::fstat(&fd) {
            Ok(st) => st,
            Err(e) => return gone(e.into()).map(Opened::Not),
        };
        if let Some(refused) = refusal(&st, limit) {
            return Ok(Opened::Not(refused));
        }
        Ok(Opened::File(File::from(fd), st))
    }

    /// Creates a new file `name` here (never an existing one, never through
    /// a link), for reading and writing.
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        Ok(File::from(fd))
    }

    /// Removes the name `name` here (a file; a link itself, never its target).
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Removes the empty folder `name` here.
    pub fn remove_dir(&self, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)?)
    }

    /// Renames `self/from` to `to_dir/to` (replacing what `to` was).
    pub fn rename(&self, from: &str, to_dir: &Dir, to: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &to_dir.fd, to)?)
    }

    /// Swaps `self/a` and `to_dir/b` in one step (Linux
    /// `renameat2(RENAME_EXCHANGE)`): both names exist throughout. Drives
    /// that cannot (network file systems, other systems) refuse it with
    /// `EINVAL` or `ENOSYS`.
    pub fn exchange(&self, a: &str, to_dir: &Dir, b: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat_with(
            &self.fd,
            a,
            &to_dir.fd,
            b,
            RenameFlags::EXCHANGE,
        )?)
    }

    /// The names in this folder (`.` and `..` left out).
    pub fn names(&self) -> io::Result<Vec<String>> {
        let fd = rustix::fs::openat(&self.fd, ".", DIR_FLAGS, Mode::empty())?;
        let mut out = vec![];
        for entry in rustix::fs::Dir::read_from(fd.as_fd())? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        Ok(out)
    }

    /// Whether `name` here is a regular file with one name, and its size.
    pub fn plain_file_len(&self, name: &str) -> Option<u64> {
        let st = self.stat_at(name).ok()?;
        (file_type(&st) == FileType::RegularFile && st.st_nlink == 1).then_some(st.st_size as u64)
    }

    /// Replaces `name` here with `content` atomically: a file of our own,
    /// renamed over the old name. Readers see the old or the new content.
    /// On a drive that refuses to replace a file someone holds open (SMB)
    /// it is rewritten in place instead ([`Dir::rewrite`]).
    pub fn replace(&self, name: &str, content: &[u8]) -> io::Result<()> {
        swap_in(self, self, name, content, Swap::Over)
    }
}

/// Whether [`Dir::exchange`] failed because the drive cannot swap names
/// (rather than because a name is missing or the drive failed).
pub fn cannot_exchange(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

impl AsFd for Dir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Reads at most `limit` bytes of `path` (see [`Dir::read_limited`]).
pub fn read_limited(path: &Path, limit: usize) -> io::Result<ReadOutcome> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(ReadOutcome::NotAFile);
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let dir = match Dir::open(parent) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ReadOutcome::Missing),
        Err(e) => return Err(e),
    };
    dir.read_limited(&name.to_string_lossy(), limit)
}

/// True if `path` exists and is a symlink (not followed).
pub fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// What opening a file to read gave: the file and its `fstat`, or why it
/// is not read.
enum Opened {
    File(File, rustix::fs::Stat),
    Not(ReadOutcome),
}

/// On sshfs an fstat or a read goes by path: if the writer replaced the
/// file just after our open, the name is briefly gone. That is "nothing yet".
fn gone(e: io::Error) -> io::Result<ReadOutcome> {
    match e.kind() {
        io::ErrorKind::NotFound => Ok(ReadOutcome::Missing),
        _ => Err(e),
    }
}

/// Why a file with this `stat` is not read: not a regular file, more than
/// one name, more than `limit` bytes. (The casts are for systems whose
/// `stat` fields are narrower.)
#[allow(clippy::unnecessary_cast)]
fn refusal(st: &rustix::fs::Stat, limit: usize) -> Option<ReadOutcome> {
    if file_type(st) != FileType::RegularFile {
        return Some(ReadOutcome::NotAFile);
    }
    if st.st_nlink as u64 > 1 {
        return Some(ReadOutcome::Linked(st.st_nlink as u64));
    }
    if st.st_size as u64 > limit as u64 {
        return Some(ReadOutcome::TooLarge(st.st_size as u64));
    }
    None
}

/// Reads `file` from its start, at most `limit` bytes (more is
/// `TooLarge`). `len` is its length as last seen: once that many bytes
/// came, one `pread` was enough and no second one looks for the end (a
/// writer still appending is a race a reader loses either way). A direct
/// read (a network drive) reads on to the end: there the length seen may
/// be a cached one.
fn read_whole(file: &File, len: u64, limit: usize, direct: bool) -> io::Result<ReadOutcome> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; limit + 1];
    let mut got = 0;
    loop {
        let n = match file.read_at(&mut buf[got..], got as u64) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return gone(e),
        };
        got += n;
        if got > limit {
            return Ok(ReadOutcome::TooLarge(got as u64));
        }
        if n == 0 || (!direct && got as u64 >= len) {
            break;
        }
    }
    buf.truncate(got);
    Ok(ReadOutcome::Bytes(buf))
}

/// One move file read look after look (the referee's `out.txt`, a bot's
/// `in.txt`), with the guarantees of [`Dir::read_limited`] and fewer
/// system calls: the files last found under the name stay open (at most
/// two: a writer that swaps files in alternates two), so a look at one of
/// them is a `newfstatat` of the name and one `pread`, not a stat, an
/// open, an `fstat`, two reads and a close.
///
/// The `newfstatat` of the name comes first at every look, as in
/// `read_limited`: a link, a FIFO, a device or a file with more than one
/// name is refused from it before anything is opened. A file held open is
/// read only when the name leads to that very file (same device and inode:
/// while we hold it open its inode number cannot be given to another file),
/// with one name and not too large. On a network drive (and where the
/// folder reads with `O_DIRECT`) nothing is held: each look opens the file
/// afresh, as `read_limited` does (a held file there may show a cached
/// length, and an open deleted file leaves `.nfs` files behind).
pub struct MessageReader {
    dir: Arc<Dir>,
    name: &'static str,
    hold: bool,
    /// Files found under the name, newest first, with their identity.
    held: Vec<((u64, u64), File)>,
}

impl MessageReader {
    /// Reads `dir/name`; holds files open only if `local` (a local disk,
    /// where that is safe and nothing else sees it).
    pub fn new(dir: Arc<Dir>, name: &'static str, local: bool) -> MessageReader {
        MessageReader {
            dir,
            name,
            hold: local,
            held: Vec::new(),
        }
    }

    /// At most `limit` bytes of the file (see [`Dir::read_limited`]).
    pub fn read(&mut self, limit: usize) -> io::Result<ReadOutcome> {
        if !self.hold || self.dir.is_direct() {
            self.held.clear();
            return self.dir.read_limited(self.name, limit);
        }
        let st = match self.dir.stat_at(self.name) {
            Ok(st) => st,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ReadOutcome::Missing),
            Err(_) => return self.dir.read_limited(self.name, limit),
        };
        match file_type(&st) {
            FileType::RegularFile => {}
            FileType::Symlink => return Ok(ReadOutcome::Symlink),
            _ => return Ok(ReadOutcome::NotAFile),
        }
        // More than one name, or too large: refused before anything is
        // opened (and checked again on what is opened).
        if let Some(refused) = refusal(&st, limit) {
            return Ok(refused);
        }
        let id = identity(&st);
        if let Some((_, file)) = self.held.iter().find(|(held, _)| *held == id) {
            return read_whole(file, st.st_size as u64, limit, false);
        }
        match self.dir.open_plain(self.name, limit)? {
            Opened::File(file, st) => {
                let outcome = read_whole(&file, st.st_size as u64, limit, false);
                self.held.insert(0, (identity(&st), file));
                self.held.truncate(2);
                outcome
            }
            Opened::Not(outcome) => Ok(outcome),
        }
    }
}

/// How a file of ours takes the place of the old file.
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

/// The name of a temp file: starts with `.`, names the target, ends in
/// `.tmp-<pid>-<n>`. [`is_temp_name`] recognises it.
fn temp_name(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether `name` is one the referee or a built-in bot gives the temp and
/// spare files of a move file in `players/`: `.in.txt.tmp-<pid>-<n>`,
/// `.in.txt.spare.tmp-<pid>-<n>` (and the same for `out.txt`), or an older
/// version's `.<mailbox>.in.txt.spare`.
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    const MOVE_FILES: [&str; 4] = ["in.txt", "out.txt", "in.txt.spare", "out.txt.spare"];
    if let Some((target, tail)) = rest.rsplit_once(".tmp-") {
        return MOVE_FILES.contains(&target)
            && tail
                .split_once('-')
                .is_some_and(|(a, b)| is_number(a) && is_number(b));
    }
    rest.strip_suffix(".spare")
        .and_then(|stem| stem.rsplit_once('.').map(|(tag, _)| tag))
        .and_then(|s| s.strip_suffix(".in").or_else(|| s.strip_suffix(".out")))
        .is_some_and(|tag| {
            !tag.is_empty()
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        })
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Replaces `dir/name` with `content` atomically: a temp file in the same
/// folder renamed over the old one. Readers see the old or the new content.
pub fn replace(dir: &Path, name: &str, content: &[u8]) -> io::Result<()> {
    Dir::open(dir)?.replace(name, content)
}

/// Replaces `dir/name` by a file of our own made in `tmp_dir` and renamed
/// over it (the name never disappears).
pub fn replace_over(tmp_dir: &Dir, dir: &Dir, name: &str, content: &[u8]) -> io::Result<()> {
    swap_in(tmp_dir, dir, name, content, Swap::Over)
}

/// Writes a move file: the temp file in `tmp_dir` (a folder on the same
/// drive that nobody watches, so watchers of `dir` see only the final
/// rename), the old file deleted, then the rename. Readers see the old
/// message, no file, or the whole new one.
pub fn replace_message(tmp_dir: &Dir, dir: &Dir, name: &str, content: &[u8]) -> io::Result<()> {
    swap_in(tmp_dir, dir, name, content, Swap::DeleteFirst)
}

fn swap_in(tmp_dir: &Dir, dir: &Dir, name: &str, content: &[u8], swap: Swap) -> io::Result<()> {
    // A file others read as a whole, on a drive that refuses to replace it
    // while one of them holds it open: rewritten in place. (A move file's
    // writer, [`MessageFile`], has its own way there.)
    let whole = swap == Swap::Over;
    if whole && !dir.drive().replaces_open_files {
        return dir.rewrite(name, content);
    }
    let tmp = temp_name(name);
    if let Err(e) = tmp_dir
        .create_new(&tmp)
        .and_then(|mut f| f.write_all(content))
    {
        let _ = tmp_dir.remove_file(&tmp);
        return Err(e);
    }
    let placed = (|| {
        if whole && tmp_dir.rename(&tmp, dir, name).is_ok() {
            return Ok(());
        }
        match dir.remove_file(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        tmp_dir.rename(&tmp, dir, name)
    })();
    match placed {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = tmp_dir.remove_file(&tmp);
            if whole && drive::is_sharing_violation(&e) {
                dir.refused(name, &e);
                return dir.rewrite(name, content);
            }
            Err(e)
        }
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
/// reader is still reading it. A file is rewritten only while it is the
/// very file we made and has no other name: one that someone linked
/// elsewhere or replaced is left alone and a fresh one made.
///
/// Where the drive cannot swap names (network file systems, other systems)
/// each message goes through a fresh temp file, the old file deleted, and
/// a rename ([`replace_message`]). Measured here: the swap costs ~16 µs a
/// message, a fresh file 40–80 µs on ext4, and on a journal-less ext4 the
/// inodes created and deleted per message also slow every later file
/// creation on the drive.
///
/// Where the drive refuses to replace or delete a file someone holds open
/// (a Windows share, [`crate::drive`]; a bot reading its `in.txt` holds
/// it), each message is written in place into one file, in three writes
/// that keep the frame incomplete (fewer than four line feeds) until the
/// message is whole: the old message's last two line feeds (and its fourth
/// line) blanked, then the new message without its fourth line feed (cut to
/// its length), then that line feed. The first two lines of two messages of
/// one move file are the same, and the third (the seq) grows by at most a
/// digit, so no read that mixes bytes of the old and the new message while
/// one of the writes lands finds four line feeds in it — save the
/// blanking's own, which gives the old message (its seq) back, its text
/// perhaps blanked. (A read that began before the second write and ended
/// after the third could, in theory; it would have to stall for the time
/// of two writes across the network in the middle of copying 512 bytes.)
pub struct MessageFile {
    tmp_dir: Arc<Dir>,
    dir: Arc<Dir>,
    name: &'static str,
    spare_name: String,
    /// The file now under `spare_name`, ours to rewrite, and its identity.
    spare: Option<(fs::File, (u64, u64))>,
    /// The file we last put under the move file's name, and its identity.
    live: Option<(fs::File, (u64, u64))>,
    /// Whether this drive swaps names; cleared on the first refusal.
    swaps: bool,
    /// Written in place: the drive refuses to replace a file someone holds
    /// open.
    in_place: Option<InPlace>,
    /// Refuse to write while the move file's name is a symlink.
    refuse_symlink: bool,
}

/// The move file written in place (see [`MessageFile`]).
#[derive(Default)]
struct InPlace {
    /// The file under the move file's name, open to write, and its
    /// identity; `None` until the first write, and after a failed one.
    file: Option<(File, (u64, u64))>,
    /// Its length as we left it.
    len: u64,
    /// Where the message we last wrote into it has its third and fourth
    /// line feeds; `None` if it holds something else (blanked whole).
    last: Option<(usize, usize)>,
}

/// The error [`MessageFile::write`] returns when the move file's name is a
/// symlink and the writer was made with [`MessageFile::refusing_symlinks`]
/// (find it with [`TargetIsSymlink::in_io`]).
#[derive(Debug)]
pub struct TargetIsSymlink;

impl std::fmt::Display for TargetIsSymlink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the move file is a symlink")
    }
}

impl std::error::Error for TargetIsSymlink {}

impl TargetIsSymlink {
    /// Whether `e` is this refusal.
    pub fn in_io(e: &io::Error) -> bool {
        e.get_ref()
            .is_some_and(|inner| inner.is::<TargetIsSymlink>())
    }
}

impl MessageFile {
    /// The move file `dir/name`, with its spare in `tmp_dir` named after `tag`.
    pub fn new(tmp_dir: Arc<Dir>, dir: Arc<Dir>, name: &'static str, tag: &str) -> MessageFile {
        MessageFile {
            tmp_dir,
            dir,
            name,
            spare_name: format!(".{tag}.{name}.spare"),
            spare: None,
            live: None,
            swaps: cfg!(target_os = "linux"),
            in_place: None,
            refuse_symlink: false,
        }
    }

    /// Lets go of the file held to write in place (if any), so that the
    /// move file can be deleted: on a drive that writes in place, a file
    /// its writer holds open cannot be.
    pub fn release(&mut self) {
        if let Some(ip) = &mut self.in_place {
            ip.file = None;
        }
    }

    /// This writer, refusing every write (with [`TargetIsSymlink`], before
    /// anything is written) while the move file's name is a symlink. The
    /// look is the one the writer makes anyway to see whether the name
    /// still holds its file: no system call more.
    pub fn refusing_symlinks(mut self) -> MessageFile {
        self.refuse_symlink = true;
        self
    }

    /// Writes `content` as the move file's new content. `gate` is asked
    /// last, right before the content becomes visible: an error from it
    /// (the referee's board lock, lost) stops the write.
    pub fn write(&mut self, content: &[u8], gate: &dyn Fn() -> io::Result<()>) -> io::Result<()> {
        if self.in_place.is_none() && !self.dir.drive().replaces_open_files {
            self.in_place = Some(InPlace::default());
        }
        if self.in_place.is_some() {
            return self.write_in_place(content, gate);
        }
        let written = if self.swaps {
            self.write_by_swap(content, gate)
        } else if self.refuse_symlink && self.dir.is_symlink(self.name) {
            Err(io::Error::other(TargetIsSymlink))
        } else {
            gate().and_then(|()| replace_message(&self.tmp_dir, &self.dir, self.name, content))
        };
        match written {
            // Someone (the bot, reading) holds the move file open and the
            // drive will not replace it: in place from now on.
            Err(e) if drive::is_sharing_violation(&e) => {
                self.dir.refused(self.name, &e);
                self.in_place = Some(InPlace::default());
                self.write_in_place(content, gate)
            }
            other => other,
        }
    }

    /// What the move file's name holds now (one `newfstatat`); refused
    /// with [`TargetIsSymlink`] if it is a symlink and this writer refuses
    /// them.
    fn look_at_target(&self) -> io::Result<Option<rustix::fs::Stat>> {
        let target = self.dir.stat_at(self.name).ok();
        if self.refuse_symlink
            && target
                .as_ref()
                .is_some_and(|st| file_type(st) == FileType::Symlink)
        {
            return Err(io::Error::other(TargetIsSymlink));
        }
        Ok(target)
    }

    /// Writes `content` in place, in the three writes described at
    /// [`MessageFile`]; `gate` is asked before the first and the last.
    fn write_in_place(
        &mut self,
        content: &[u8],
        gate: &dyn Fn() -> io::Result<()>,
    ) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let target = self.look_at_target()?;
        let ip = self.in_place.get_or_insert_with(InPlace::default);
        // Still the very file we write, with one name? Else start over
        // with what the name holds now.
        if let Some((_, id)) = &ip.file {
            if !ours_alone(&target, *id) {
                ip.file = None;
            }
        }
        if ip.file.is_none() {
            let (file, st) = open_in_place(&self.dir, self.name)?;
            ip.file = Some((file, identity(&st)));
            ip.len = st.st_size as u64;
            ip.last = None;
        }
        gate()?;
        let ends = Message::line_feeds(content);
        let (file, _) = ip.file.as_ref().expect("just opened");
        let written = (|| {
            // 1. The old message incomplete: its last two line feeds and
            // the line between them blanked (all of it, if unknown).
            let (from, to) = match ip.last {
                Some((third, fourth)) => (third as u64, fourth as u64 + 1),
                None => (0, ip.len),
            };
            let to = to.min(ip.len);
            if to > from {
                file.write_all_at(&vec![PAD; (to - from) as usize], from)?;
            }
            // 2. The new one without its fourth line feed, cut to its length.
            let mut body = content.to_vec();
            if let Some(at) = ends {
                body[at[3]] = PAD;
            }
            file.write_all_at(&body, 0)?;
            if ip.len > content.len() as u64 {
                file.set_len(content.len() as u64)?;
            }
            ip.len = content.len() as u64;
            // 3. Whole: its fourth line feed, the lock asked once more.
            if let Some(at) = ends {
                gate()?;
                file.write_all_at(b"\n", at[3] as u64)?;
            }
            Ok(())
        })();
        match written {
            Ok(()) => {
                ip.last = ends.map(|at| (at[2], at[3]));
                Ok(())
            }
            Err(e) => {
                // What the file holds now is not known: blanked whole next time.
                ip.file = None;
                Err(e)
            }
        }
    }

    fn write_by_swap(
        &mut self,
        content: &[u8],
        gate: &dyn Fn() -> io::Result<()>,
    ) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        // Someone else may have removed or replaced the move file (a new
        // instance's cleanup) or the spare, or linked one elsewhere: then
        // start over with fresh ones. One `newfstatat` of each name says
        // all of it: the name's file, its kind and how many names it has
        // (our files' identities are known since we made them).
        let target = self.look_at_target()?;
        if let Some((_, id)) = &self.live {
            if !ours_alone(&target, *id) {
                self.live = None;
            }
        }
        // The spare's length now, if it is still ours alone.
        let mut spare_len = None;
        if let Some((_, id)) = &self.spare {
            let st = self.tmp_dir.stat_at(&self.spare_name).ok();
            if ours_alone(&st, *id) {
                spare_len = st.map(|st| st.st_size as u64);
            } else {
                self.spare = None;
            }
        }
        if self.spare.is_none() {
            // A fresh spare under a fresh name: whatever holds the old name
            // is not ours to delete or rewrite.
            self.spare_name = temp_name(&format!("{}.spare", self.name));
            let f = self.tmp_dir.create_new(&self.spare_name)?;
            let id = identity(&rustix::fs::fstat(&f)?);
            self.spare = Some((f, id));
            spare_len = Some(0);
        }
        let (spare, _) = self.spare.as_ref().expect("just made");
        spare.write_all_at(content, 0)?;
        // Cut only what the old message had beyond the new one.
        if spare_len.unwrap_or(u64::MAX) > content.len() as u64 {
            spare.set_len(content.len() as u64)?;
        }
        // The last look before the message becomes visible: a referee that
        // lost the board (stopped, then continued) must not write into it.
        gate()?;
        let swapped = match self.live {
            Some(_) => match self
                .tmp_dir
                .exchange(&self.spare_name, &self.dir, self.name)
            {
                Ok(()) => true,
                Err(e) if cannot_exchange(&e) => {
                    // This drive cannot swap: from now on, fresh files.
                    self.swaps = false;
                    false
                }
                Err(e) => return Err(e),
            },
            None => false,
        };
        if swapped {
            self.live = std::mem::replace(&mut self.spare, self.live.take());
        } else {
            // The first message (or no swapping): delete, then rename in.
            match self.dir.remove_file(self.name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            self.tmp_dir
                .rename(&self.spare_name, &self.dir, self.name)?;
            self.live = self.spare.take();
        }
        Ok(())
    }
}

/// Whether `st` (what a name holds) is the regular file `id` of ours, with
/// no other name.
fn ours_alone(st: &Option<rustix::fs::Stat>, id: (u64, u64)) -> bool {
    st.as_ref().is_some_and(|st| {
        file_type(st) == FileType::RegularFile && identity(st) == id && st.st_nlink == 1
    })
}

/// The move file `name` in `dir` opened to write in place, and its
/// `fstat`: a new file of ours where the name is free, or where what holds
/// it can be deleted; else (a drive that refuses to delete a file someone
/// holds open: a bot is reading it) the file there, if it is a regular
/// file with one name.
fn open_in_place(dir: &Dir, name: &str) -> io::Result<(File, rustix::fs::Stat)> {
    let made = match dir.create_new(name) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match dir.remove_file(name) {
            Ok(()) => Some(dir.create_new(name)?),
            Err(e) if drive::is_sharing_violation(&e) => None,
            Err(e) => return Err(e),
        },
        Err(e) => return Err(e),
    };
    if let Some(f) = made {
        let st = rustix::fs::fstat(&f)?;
        return Ok((f, st));
    }
    dir.open_to_write(name)?
        .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
}

impl Drop for MessageFile {
    fn drop(&mut self) {
        // Our spare goes, if its name still holds it (and only it).
        if let Some((_, id)) = &self.spare {
            if ours_alone(&self.tmp_dir.stat_at(&self.spare_name).ok(), *id) {
                let _ = self.tmp_dir.remove_file(&self.spare_name);
            }
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
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(matches!(
            read_limited(&link, 10).unwrap(),
            ReadOutcome::Symlink
        ));
        let hard = dir.path().join("hard.txt");
        fs::hard_link(&p, &hard).unwrap();
        assert!(matches!(
            read_limited(&hard, 10).unwrap(),
            ReadOutcome::Linked(2)
        ));
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        assert!(matches!(
            read_limited(&fifo, 10).unwrap(),
            ReadOutcome::NotAFile
        ));
    }

    /// Makes a FIFO at `path`.
    fn make_fifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    /// A temp folder holding a mailbox `box/`: (the temp folder, the
    /// mailbox's path, the temp folder open, the mailbox open).
    fn mailbox_in_temp() -> (tempfile::TempDir, PathBuf, Arc<Dir>, Arc<Dir>) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("box");
        fs::create_dir(&dir).unwrap();
        let tmp = Arc::new(Dir::open(root.path()).unwrap());
        let bx = Arc::new(Dir::open(&dir).unwrap());
        (root, dir, tmp, bx)
    }

    #[test]
    fn a_message_file_swaps_in_each_message_whole() {
        let (root, dir, tmp, bx) = mailbox_in_temp();
        let mut mf = MessageFile::new(tmp, bx, "in.txt", "box");
        for n in 0..5 {
            let msg = format!("referee\nbox\n{n}\n{}\n", "x".repeat(10 - 2 * n));
            mf.write(msg.as_bytes(), &|| Ok(())).unwrap();
            assert_eq!(fs::read_to_string(dir.join("in.txt")).unwrap(), msg);
        }
        // Removed from outside (a fresh instance's cleanup): written again.
        fs::remove_file(dir.join("in.txt")).unwrap();
        mf.write(b"after\n", &|| Ok(())).unwrap();
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
    fn a_linked_move_file_is_never_written_again() {
        let (root, dir, tmp, bx) = mailbox_in_temp();
        let mut mf = MessageFile::new(tmp, bx, "in.txt", "box");
        mf.write(b"one\n", &|| Ok(())).unwrap();
        mf.write(b"two\n", &|| Ok(())).unwrap();
        // Someone links both our files (the move file and the spare) elsewhere.
        let outside = root.path().join("outside.txt");
        fs::hard_link(dir.join("in.txt"), &outside).unwrap();
        for n in 3..8 {
            mf.write(format!("{n}\n").as_bytes(), &|| Ok(())).unwrap();
            assert_eq!(
                fs::read(dir.join("in.txt")).unwrap(),
                format!("{n}\n").as_bytes()
            );
        }
        assert_eq!(
            fs::read(&outside).unwrap(),
            b"two\n",
            "the linked file is not ours to write"
        );
    }

    #[test]
    fn a_message_reader_holding_files_refuses_what_read_limited_refuses() {
        let (root, dir, tmp, bx) = mailbox_in_temp();
        let mut reader = MessageReader::new(Arc::clone(&bx), "in.txt", true);
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::Missing));
        // Swapped in message after message: the two files stay open and
        // each look reads the one the name leads to now.
        let mut mf = MessageFile::new(tmp, Arc::clone(&bx), "in.txt", "box");
        for n in 0..6 {
            let msg = format!("message {n}{}\n", "!".repeat(n % 3));
            mf.write(msg.as_bytes(), &|| Ok(())).unwrap();
            assert!(
                matches!(reader.read(64).unwrap(), ReadOutcome::Bytes(b) if b == msg.as_bytes()),
                "{msg}"
            );
        }
        assert!(reader.held.len() <= 2);
        // A held file given a second name, grown too large, or replaced by
        // a link or a FIFO: refused as by read_limited.
        let p = dir.join("in.txt");
        let outside = root.path().join("outside.txt");
        fs::hard_link(&p, &outside).unwrap();
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::Linked(2)));
        fs::remove_file(&outside).unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(&[b'x'; 100])
            .unwrap();
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::TooLarge(_)));
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&outside, &p).unwrap();
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::Symlink));
        fs::remove_file(&p).unwrap();
        make_fifo(&p);
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::NotAFile));
        fs::remove_file(&p).unwrap();
        // A plain overwrite in place (a v1 bot) is read through the held file.
        fs::write(&p, "one\n").unwrap();
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::Bytes(b) if b == b"one\n"));
        fs::write(&p, "two!\n").unwrap();
        assert!(matches!(reader.read(64).unwrap(), ReadOutcome::Bytes(b) if b == b"two!\n"));
    }

    #[test]
    fn a_writer_refusing_symlinks_writes_nothing_through_one() {
        let (root, dir, tmp, bx) = mailbox_in_temp();
        let mut mf = MessageFile::new(tmp, bx, "in.txt", "box").refusing_symlinks();
        mf.write(b"one\n", &|| Ok(())).unwrap();
        mf.write(b"two, longer\n", &|| Ok(())).unwrap();
        mf.write(b"3\n", &|| Ok(())).unwrap();
        assert_eq!(fs::read(dir.join("in.txt")).unwrap(), b"3\n");
        let target = root.path().join("target.txt");
        fs::write(&target, "keep\n").unwrap();
        fs::remove_file(dir.join("in.txt")).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("in.txt")).unwrap();
        let e = mf.write(b"four\n", &|| Ok(())).unwrap_err();
        assert!(TargetIsSymlink::in_io(&e), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"keep\n");
        assert!(is_symlink(&dir.join("in.txt")));
    }

    use crate::message::Decoded;

    impl MessageFile {
        /// This writer writing in place, as on a drive that refuses to
        /// replace a file someone holds open.
        fn in_place(mut self) -> MessageFile {
            self.in_place = Some(InPlace::default());
            self
        }
    }

    /// Message `seq` of the referee to `box`, padded to the fixed length
    /// or not.
    fn to_box(seq: u64, text: &str, padded: bool) -> Vec<u8> {
        let m = Message::new(crate::message::REFEREE, "box", seq, text);
        if padded {
            m.encode_padded(crate::message::IN_RECORD)
        } else {
            m.encode().into_bytes()
        }
    }

    #[test]
    fn a_message_written_in_place_is_incomplete_until_its_last_write() {
        use std::cell::Cell;
        let (_root, dir, tmp, bx) = mailbox_in_temp();
        let path = dir.join("in.txt");
        // An earlier referee's message is there: blanked whole first.
        fs::write(&path, to_box(7, "END draw 2 2 normal", false)).unwrap();
        let mut mf = MessageFile::new(tmp, bx, "in.txt", "box").in_place();
        let messages = [
            (8, "NEW g1 black x 8 100", false),
            (9, "TURN black ---------------------------OX------XO--------------------------- none 100", true),
            (10, "END draw 32 32 normal", true),
            (11, "NEW g2 white y 8 100", false),
        ];
        for (seq, text, padded) in messages {
            let bytes = to_box(seq, text, padded);
            let gates = Cell::new(0);
            mf.write(&bytes, &|| {
                let now = fs::read(&path).unwrap();
                if gates.get() == 1 {
                    // Right before its fourth line feed: the new message,
                    // at its length, and not complete.
                    assert_eq!(Message::decode(&now), Decoded::Incomplete, "seq {seq}");
                    assert_eq!(now.len(), bytes.len(), "seq {seq}");
                }
                gates.set(gates.get() + 1);
                Ok(())
            })
            .unwrap();
            assert_eq!(
                gates.get(),
                2,
                "the gate is asked before the first and last write"
            );
            assert_eq!(fs::read(&path).unwrap(), bytes, "seq {seq}");
        }
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no other file");
    }

    #[test]
    fn no_read_that_mixes_two_states_of_an_in_place_write_is_a_third_message() {
        // The states a move file goes through while message `new` is
        // written over `old` in place (MessageFile's doc), and every read
        // that takes the bytes before some offset from one state and the
        // rest from the next (either way round): each is incomplete, or one
        // of the two messages, or the old seq (its text perhaps blanked).
        fn mix(a: &[u8], b: &[u8], p: usize) -> Vec<u8> {
            (0..a.len().max(b.len()))
                .map_while(|i| if i < p { a.get(i) } else { b.get(i) }.copied())
                .collect()
        }
        let texts = [
            "d3",
            "TURN black ---------------------------OX------XO--------------------------- none 100",
            "END black 33 31 normal",
            "",
        ];
        for (old_seq, new_seq) in [(8, 9), (9, 10), (99, 100), (41, 42)] {
            for old_text in texts {
                for new_text in texts {
                    for (old_pad, new_pad) in
                        [(false, false), (true, true), (false, true), (true, false)]
                    {
                        let old = to_box(old_seq, old_text, old_pad);
                        let new = to_box(new_seq, new_text, new_pad);
                        let (o, n) = (
                            Message::line_feeds(&old).unwrap(),
                            Message::line_feeds(&new).unwrap(),
                        );
                        let mut blanked = old.clone();
                        blanked[o[2]..=o[3]].fill(PAD);
                        let mut body = new.clone();
                        body[n[3]] = PAD;
                        let mut over = blanked.clone();
                        over.resize(over.len().max(body.len()), PAD);
                        over[..body.len()].copy_from_slice(&body);
                        let states = [old.clone(), blanked, over, body, new.clone()];
                        for w in states.windows(2) {
                            for p in 0..=w[0].len().max(w[1].len()) {
                                for read in [mix(&w[0], &w[1], p), mix(&w[1], &w[0], p)] {
                                    match Message::decode(&read) {
                                        Decoded::Incomplete => {}
                                        Decoded::Complete(m)
                                            if m.seq == old_seq
                                                || m == Message::new(
                                                    crate::message::REFEREE,
                                                    "box",
                                                    new_seq,
                                                    new_text,
                                                ) => {}
                                        other => panic!(
                                            "{old_seq}->{new_seq} {old_text:?}->{new_text:?}: read \
                                             {:?} gave {other:?}",
                                            String::from_utf8_lossy(&read)
                                        ),
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_rewrite_in_place_writes_over_and_cuts_only_a_plain_file() {
        let root = tempfile::tempdir().unwrap();
        let d = Dir::open(root.path()).unwrap();
        let p = root.path().join("OWNER");
        d.rewrite("OWNER", b"a longer first content\n").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"a longer first content\n");
        d.rewrite("OWNER", b"short\n").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"short\n");
        fs::hard_link(&p, root.path().join("linked")).unwrap();
        assert!(d.rewrite("OWNER", b"through a link\n").is_err());
        assert_eq!(fs::read(root.path().join("linked")).unwrap(), b"short\n");
        let outside = root.path().join("outside");
        fs::write(&outside, "keep\n").unwrap();
        std::os::unix::fs::symlink(&outside, root.path().join("sym")).unwrap();
        assert!(d.rewrite("sym", b"through a symlink\n").is_err());
        assert_eq!(fs::read(&outside).unwrap(), b"keep\n");
    }

    #[test]
    fn temp_names_are_recognised() {
        for yes in [
            ".in.txt.tmp-12-0",
            ".box.1.in.txt.spare",
            ".out.txt.tmp-1-2",
            ".in.txt.spare.tmp-3-4",
        ] {
            assert!(is_temp_name(yes), "{yes}");
        }
        for no in [
            "in.txt",
            "notes.txt",
            ".in.txt.tmp-",
            ".x.tmp-1-1",
            ".in.txt.tmp-a-1",
            ".spare",
            ".in.txt.spare",
            "alice",
            ".bashrc",
            ".a b.in.txt.spare",
        ] {
            assert!(!is_temp_name(no), "{no}");
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
