//! Opening a file a user named or another program left (tournament.toml,
//! an openings file, games.jsonl, schedule.json): only a regular file,
//! opened without blocking (a FIFO cannot hang us), and never read past a
//! size limit (`/dev/zero` cannot fill the memory).
//!
//! Owns the opening and the bounded read; says nothing about what the
//! content means. Errors are plain `io::Error`s for the caller to place.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Largest tournament.toml, openings file or schedule.json read.
pub const MAX_TEXT: u64 = 16 * 1024 * 1024;

/// Opens `path` for reading if it is a regular file (after links). A FIFO,
/// a device or a folder is refused without waiting for a writer.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file (a pipe, socket or device)"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}"),
        ));
    }
    #[cfg(unix)]
    {
        // Reads from here on may block like any regular file's.
        use std::os::unix::io::AsRawFd;
        // SAFETY: fcntl on a descriptor we own, with plain integer flags.
        unsafe {
            let fd = file.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// The whole text of the regular file `path`, if it holds at most `limit`
/// bytes of UTF-8.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is larger than {limit} bytes"),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_folders_are_refused_at_once() {
        let e = read_text(Path::new("/dev/zero"), MAX_TEXT).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, MAX_TEXT).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_text(dir.path(), MAX_TEXT).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 100]).unwrap();
        assert!(read_text(&big, 99).is_err());
        assert_eq!(read_text(&big, 100).unwrap().len(), 100);
    }
}
