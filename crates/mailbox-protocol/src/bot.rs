//! The bot's side of a mailbox: wait for a new message in `in.txt`, answer
//! in `out.txt`; or, offered a pipe by the referee that started the bot,
//! take it with the first answer and go on through it ([`crate::pipe`]).
//! Used by the built-in bots, check-bot's test doubles and any bot written
//! in Rust (`examples/first_legal.rs`).
//!
//! Owns only the bot side of the wire; it never writes `in.txt`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::doorbell::{self, Backoff, Doorbell};
use crate::files::{Dir, MessageFile, MessageReader, ReadOutcome};
use crate::message::{Decoded, Message, MAX_MESSAGE_BYTES, REFEREE};
use crate::pipe::{self, PipeError, PipeReader};
use crate::{IN_FILE, OUT_FILE};

/// A bot's mailbox: the folder (where its spare file goes too) is held open, like the referee's ([`Dir`]), so `in.txt` is
/// read and `out.txt` replaced only through them: no link is followed, a
/// FIFO or a file with more than one name is never opened for reading, and
/// no file the bot did not make is written.
pub struct BotMailbox {
    dir: PathBuf,
    /// `in.txt`, read message after message.
    reader: MessageReader,
    /// `out.txt`, written answer after answer.
    writer: MessageFile,
    poll_max: std::time::Duration,
    bell: Arc<Doorbell>,
    /// Whether every change of `in.txt` wakes the doorbell (its own
    /// inotify on a local disk): then, once the bot has looked, it waits
    /// for a change before its next look.
    queued: bool,
    looked: bool,
    last_seq: Option<u64>,
    /// The pipe the referee offered (PROTOCOL.md, "The pipe"), if any.
    pipe: Option<BotPipe>,
}

/// The bot's ends of an offered pipe.
struct BotPipe {
    reads: PipeReader,
    writes: File,
    /// Taken with the first answer: every message since came this way.
    taken: bool,
    /// The referee closed it: no message will come.
    closed: bool,
}

impl BotPipe {
    /// The pipe named in the environment, if both descriptors are pipes
    /// (a variable left over without them is ignored).
    fn offered() -> Option<BotPipe> {
        use std::os::fd::FromRawFd;
        let (r, w) = pipe::offered(&std::env::var(pipe::PIPE_ENV).ok()?)?;
        let is_fifo = |fd| {
            rustix::fs::fstat(unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) })
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_fifo())
        };
        // SAFETY: fcntl(F_GETFL) only reads the descriptor's flags.
        let mode = |fd| unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_ACCMODE;
        if r == w
            || !is_fifo(r)
            || !is_fifo(w)
            || mode(r) == libc::O_WRONLY
            || mode(w) == libc::O_RDONLY
        {
            return None;
        }
        // Once per process: a second mailbox would own (and close) the same
        // descriptors.
        static TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if TAKEN.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        // SAFETY: both descriptors were given to this process for this
        // use and checked open; a process takes them once.
        let (reads, writes) = unsafe { (File::from_raw_fd(r), File::from_raw_fd(w)) };
        // Not passed on to what the bot starts (the variable may be, and
        // then names nothing open there).
        for fd in [r, w] {
            // SAFETY: fcntl on descriptors this process owns.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        Some(BotPipe {
            reads: PipeReader::new(reads).ok()?,
            writes,
            taken: false,
            closed: false,
        })
    }
}

impl BotMailbox {
    pub fn new(dir: &Path) -> std::io::Result<BotMailbox> {
        let dir = std::fs::canonicalize(dir)?;
        let folder = Arc::new(Dir::open(&dir)?);
        // The spare stays inside the mailbox: a sandboxed bot may write
        // nowhere else, and may not move a file in from another folder.
        let tmp_dir = Arc::clone(&folder);
        let (bell, watched) = Doorbell::watching(&dir.join(IN_FILE));
        let tag = dir
            .file_name()
            .map_or_else(|| "bot".to_string(), |n| n.to_string_lossy().into_owned());
        let local = doorbell::is_local_fs(&dir);
        Ok(BotMailbox {
            writer: MessageFile::new(tmp_dir, Arc::clone(&folder), OUT_FILE, &tag),
            reader: MessageReader::new(folder, IN_FILE, local),
            poll_max: doorbell::poll_max_for(&dir, watched),
            queued: local && bell.queues_changes(),
            looked: false,
            dir,
            bell,
            last_seq: None,
            pipe: BotPipe::offered(),
        })
    }

    /// True once the referee closed the pipe the bot took: no message
    /// will come any more (the referee is gone).
    pub fn is_closed(&self) -> bool {
        self.pipe.as_ref().is_some_and(|p| p.closed)
    }

    /// The next message from the referee with a seq not yet answered, or
    /// `None` at `deadline`.
    pub fn next_message(&mut self, deadline: Option<Instant>) -> Option<Message> {
        if let Some(p) = self.pipe.as_mut().filter(|p| p.taken) {
            if p.closed {
                return None;
            }
            let tick = Duration::from_secs(3600);
            return match p.reads.recv(deadline, tick, &mut || None) {
                Ok(m) => Some(m),
                Err(PipeError::Timeout { .. }) => None,
                // The referee gone, or bytes that are no message from it.
                Err(_) => {
                    p.closed = true;
                    None
                }
            };
        }
        let mut backoff = Backoff::up_to(self.poll_max);
        // Right after an answer in.txt still holds the message answered: with
        // changes queued, the first look waits for one (a message written
        // since the last look has already rung).
        let mut look = !(self.queued && self.looked);
        loop {
            let ticket = self.bell.ticket();
            let looked_now = look;
            if look {
                self.looked = true;
                if let Ok(ReadOutcome::Bytes(b)) = self.reader.read(MAX_MESSAGE_BYTES) {
                    if let Decoded::Complete(m) = Message::decode(&b) {
                        if Some(m.seq) != self.last_seq && m.from == REFEREE {
                            return Some(m);
                        }
                    }
                }
            }
            look = true;
            let far = Instant::now() + std::time::Duration::from_secs(3600);
            let until = deadline.unwrap_or(far);
            // The deadline ends the wait only after a look.
            if looked_now && Instant::now() >= until {
                return None;
            }
            backoff.wait(&self.bell, ticket, until);
        }
    }

    /// Answers `msg` with `text`: written atomically to `out.txt`, or on
    /// the pipe once it is taken. An offered pipe is taken with the first
    /// answer (its acceptance written before the answer).
    pub fn answer(&mut self, msg: &Message, text: &str) -> std::io::Result<()> {
        let reply = Message::new(&msg.to, REFEREE, msg.seq, text);
        self.last_seq = Some(msg.seq);
        if let Some(p) = &mut self.pipe {
            if p.taken {
                return pipe::send(&p.writes, &reply);
            }
            use std::io::Write;
            p.taken = (&p.writes).write_all(pipe::ACCEPT).is_ok();
            if !p.taken {
                self.pipe = None;
            }
        }
        // A bot holds no lock: nothing gates its answers.
        self.writer.write(reply.encode().as_bytes(), &|| Ok(()))
    }
}

impl Drop for BotMailbox {
    fn drop(&mut self) {
        doorbell::unwatch(&self.dir.join(IN_FILE), &self.bell);
    }
}
