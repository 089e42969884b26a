//! The pipe: the transport a bot the referee starts may take instead of
//! the move files (PROTOCOL.md, §4 "The pipe"). The referee offers two
//! inherited file descriptors, named in [`PIPE_ENV`]; a bot takes them by
//! writing [`ACCEPT`] before its first answer; from then on each message
//! is its four lines written in one write, and nothing else.
//!
//! Owns: the offer's names, reading one message from a pipe until its
//! fourth line feed within a deadline (bounded, strict: a pipe, unlike a
//! file, never holds a message half rewritten, so anything that is not one
//! message is garbage), and writing one in a single write. Must not: start
//! processes, decide whether a pipe is offered or taken (the tournament's
//! player does), or judge what an answer says.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::message::{Decoded, FrameError, Message, MAX_MESSAGE_BYTES};

/// The environment variable of the offer: `3,4`, the descriptor the bot
/// reads its messages from, then the one it writes its answers to.
pub const PIPE_ENV: &str = "TOURNAMENT_PIPE_FDS";
/// Where a bot finds the messages: its end of the referee's pipe.
pub const BOT_READS_FD: i32 = 3;
/// Where a bot writes its answers.
pub const BOT_WRITES_FD: i32 = 4;
/// What a bot writes to [`BOT_WRITES_FD`] before its first answer (in
/// `out.txt`) to take the pipe.
pub const ACCEPT: &[u8] = b"pipe\n";

/// The value of [`PIPE_ENV`] in an offer.
pub fn offer() -> String {
    format!("{BOT_READS_FD},{BOT_WRITES_FD}")
}

/// The descriptors a bot was offered, from the value of [`PIPE_ENV`]
/// (`None` if it is not two descriptor numbers).
pub fn offered(value: &str) -> Option<(i32, i32)> {
    let (r, w) = value.split_once(',')?;
    Some((r.trim().parse().ok()?, w.trim().parse().ok()?))
}

/// Why no message came off a pipe.
#[derive(Debug, thiserror::Error)]
pub enum PipeError {
    /// The deadline passed; the bytes of a message begun, if any.
    #[error("nothing complete by the deadline")]
    Timeout { partial: Vec<u8> },
    /// The writer closed its end (its process ended); what it left unfinished.
    #[error("the pipe was closed")]
    Closed { partial: Vec<u8> },
    /// The bytes are not one message.
    #[error("{0}")]
    Garbage(String),
    /// The abort check said stop.
    #[error("{0}")]
    Aborted(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// The reading end of a pipe that carries messages, read without blocking
/// so that a deadline holds whatever the writer does.
pub struct PipeReader {
    file: File,
    buf: Vec<u8>,
}

impl PipeReader {
    pub fn new(file: File) -> io::Result<PipeReader> {
        set_nonblocking(&file)?;
        Ok(PipeReader {
            file,
            buf: Vec::with_capacity(256),
        })
    }

    /// The next message, waiting until `deadline` (for ever with `None`).
    /// `abort` is asked at least every `tick` while nothing comes and ends
    /// the wait with its reason. More than [`MAX_MESSAGE_BYTES`] without a
    /// message, or bytes that are not printable ASCII, are garbage; bytes
    /// after the fourth line feed stay for the next call ([`Self::pending`]).
    pub fn recv(
        &mut self,
        deadline: Option<Instant>,
        tick: Duration,
        abort: &mut dyn FnMut() -> Option<String>,
    ) -> Result<Message, PipeError> {
        loop {
            let closed = self.fill()?;
            if let Some(message) = self.take()? {
                return Ok(message);
            }
            if closed {
                return Err(PipeError::Closed {
                    partial: std::mem::take(&mut self.buf),
                });
            }
            if let Some(why) = abort() {
                return Err(PipeError::Aborted(why));
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left == Some(Duration::ZERO) {
                return Err(PipeError::Timeout {
                    partial: std::mem::take(&mut self.buf),
                });
            }
            poll_readable(&self.file, left.map_or(tick, |l| l.min(tick)))?;
        }
    }

    /// How many bytes came after the last message taken: a writer that
    /// has one message at a time to answer has none (the referee calls
    /// them garbage).
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Whatever the pipe holds right now, without waiting: true if it is
    /// exactly [`ACCEPT`] (the bot took the offer).
    pub fn holds_accept(&mut self) -> bool {
        let _ = self.fill();
        std::mem::take(&mut self.buf) == ACCEPT
    }

    /// Reads what the pipe holds now into the buffer (at most one byte past
    /// the limit); true if the writer closed its end.
    fn fill(&mut self) -> Result<bool, PipeError> {
        let mut chunk = [0u8; 4096];
        while self.buf.len() <= MAX_MESSAGE_BYTES {
            match self.file.read(&mut chunk) {
                Ok(0) => return Ok(true),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(false)
    }

    /// The message in the buffer, once it holds four lines; garbage as
    /// soon as the bytes cannot begin one.
    fn take(&mut self) -> Result<Option<Message>, PipeError> {
        if let Some(offset) = self.buf.iter().position(|&b| b == 0) {
            // A file may show NULs for content still arriving; a pipe never.
            return Err(garbage(FrameError::NotPrintable { byte: 0, offset }));
        }
        let end = self
            .buf
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(3)
            .map(|(i, _)| i + 1);
        let Some(end) = end else {
            return match Message::decode(&self.buf) {
                Decoded::Garbage(why) => Err(garbage(why)),
                _ => Ok(None),
            };
        };
        // What follows is the next message's (taken at the next call), or,
        // where there can be none yet, garbage: see `pending`.
        let bytes: Vec<u8> = self.buf.drain(..end).collect();
        match Message::decode(&bytes) {
            Decoded::Complete(m) => Ok(Some(m)),
            Decoded::Garbage(why) => Err(garbage(why)),
            Decoded::Incomplete => Err(PipeError::Garbage("not a message".into())),
        }
    }
}

fn garbage(why: FrameError) -> PipeError {
    PipeError::Garbage(why.to_string())
}

/// Writes `message` to a pipe in one write. On a pipe without room for it
/// (a reader that stopped reading) the write fails rather than waits: the
/// referee's end is non-blocking.
pub fn send(pipe: &File, message: &Message) -> io::Result<()> {
    let bytes = message.encode();
    let mut pipe = pipe;
    loop {
        match pipe.write(bytes.as_bytes()) {
            Ok(n) if n == bytes.len() => return Ok(()),
            Ok(n) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("only {n} of {} bytes fit", bytes.len()),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Makes this end of a pipe non-blocking: reads and writes that would wait
/// fail with `WouldBlock` instead (the other end, another process's open
/// description, stays as it is).
pub fn set_nonblocking(file: &impl AsRawFd) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor `file` owns, with flag arguments only.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Waits up to `timeout` for `file` to be readable (or closed).
fn poll_readable(file: &File, timeout: Duration) -> io::Result<()> {
    let mut fds = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    // SAFETY: poll on one valid pollfd.
    let rc = unsafe { libc::poll(&mut fds, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// A new pipe, both ends closed on exec: (reading end, writing end).
pub fn pipe() -> io::Result<(File, File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are new and ours.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader() -> (PipeReader, File) {
        let (r, w) = pipe().unwrap();
        (PipeReader::new(r).unwrap(), w)
    }

    fn recv(r: &mut PipeReader, ms: u64) -> Result<Message, PipeError> {
        let deadline = Instant::now() + Duration::from_millis(ms);
        r.recv(Some(deadline), Duration::from_millis(10), &mut || None)
    }

    #[test]
    fn a_message_in_pieces_is_read_whole() {
        let (mut r, mut w) = reader();
        let t = std::thread::spawn(move || {
            w.write_all(b"bot.1\nreferee\n7").unwrap();
            std::thread::sleep(Duration::from_millis(30));
            w.write_all(b"\nd3\r\n").unwrap();
            w
        });
        let m = recv(&mut r, 2000).unwrap();
        assert_eq!(m, Message::new("bot.1", "referee", 7, "d3"));
        drop(t.join());
    }

    #[test]
    fn anything_but_one_message_is_garbage() {
        for bad in [
            &b"bot.1\x00"[..],
            b"bot.1\nref\xffree\n",
            b"bot.1\nreferee\nseven\nd3\n",
        ] {
            let (mut r, mut w) = reader();
            w.write_all(bad).unwrap();
            let got = recv(&mut r, 200);
            assert!(
                matches!(got, Err(PipeError::Garbage(_))),
                "{bad:?}: {got:?}"
            );
        }
        let (mut r, mut w) = reader();
        w.write_all(&vec![b'a'; MAX_MESSAGE_BYTES + 10]).unwrap();
        assert!(matches!(recv(&mut r, 200), Err(PipeError::Garbage(_))));
    }

    #[test]
    fn what_follows_a_message_is_the_next_ones() {
        let (mut r, mut w) = reader();
        w.write_all(b"referee\nbot.1\n7\nNEW g\nreferee\nbot.1\n8\nEND")
            .unwrap();
        assert_eq!(recv(&mut r, 200).unwrap().seq, 7);
        assert_eq!(r.pending(), 19);
        w.write_all(b" draw\n").unwrap();
        assert_eq!(recv(&mut r, 200).unwrap().text, "END draw");
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn silence_is_a_timeout_and_a_closed_pipe_says_what_it_left() {
        let (mut r, mut w) = reader();
        w.write_all(b"bot.1\nref").unwrap();
        let start = Instant::now();
        match recv(&mut r, 50) {
            Err(PipeError::Timeout { partial }) => assert_eq!(partial, b"bot.1\nref"),
            other => panic!("{other:?}"),
        }
        assert!(start.elapsed() >= Duration::from_millis(50));
        w.write_all(b"x").unwrap();
        drop(w);
        match recv(&mut r, 1000) {
            Err(PipeError::Closed { partial }) => assert_eq!(partial, b"x"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_abort_check_ends_a_wait() {
        let (mut r, _w) = reader();
        let mut asked = 0;
        let got = r.recv(None, Duration::from_millis(5), &mut || {
            asked += 1;
            (asked == 3).then(|| "gone".to_string())
        });
        assert!(matches!(got, Err(PipeError::Aborted(ref why)) if why == "gone"));
    }

    #[test]
    fn only_the_exact_line_takes_the_offer() {
        for (bytes, taken) in [
            (&b"pipe\n"[..], true),
            (b"pipe", false),
            (b"pipe\npipe\n", false),
            (b"", false),
        ] {
            let (mut r, mut w) = reader();
            w.write_all(bytes).unwrap();
            assert_eq!(r.holds_accept(), taken, "{bytes:?}");
        }
        assert_eq!(offered(&offer()), Some((BOT_READS_FD, BOT_WRITES_FD)));
        assert_eq!(offered("3"), None);
    }

    #[test]
    fn a_full_pipe_refuses_the_message_instead_of_waiting() {
        let (_r, w) = pipe().unwrap();
        set_nonblocking(&w).unwrap();
        let m = Message::new("referee", "bot.1", 1, &"x".repeat(1000));
        let mut sent = 0;
        let err = loop {
            match send(&w, &m) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent < 10_000, "the pipe never filled");
        };
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "{err}");
    }
}
