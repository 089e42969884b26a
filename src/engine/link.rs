//! A line link to an engine's process: lines written to its stdin, lines
//! read from its stdout on a thread of their own, each awaited until a
//! deadline. Every line, both ways, goes to the link's [`LineLog`] (the
//! game log).
//!
//! Owns: the framing (a line ends at LF; a CR before it is dropped; a line
//! longer than [`MAX_LINE`] is cut), the reader thread, the deadlines, and
//! noticing text that is not text (NUL, other control characters, invalid
//! UTF-8). An engine cannot make the referee wait past a deadline or hold
//! more than [`QUEUED_LINES`] of its lines (a flood blocks the engine, not
//! the referee), and a process that ended is noticed even when something it
//! left behind keeps its output open. Must not: interpret a line (that is
//! the dialects' work, in `gtp` and `nboard`), or start, stop or signal the
//! process.

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TryRecvError};

/// Longest line kept from an engine (longer ones are cut).
pub const MAX_LINE: usize = 4096;

/// Lines read from an engine and not yet taken, at most: the reader waits
/// (and the engine with it, on its full pipe) until the referee takes some.
pub const QUEUED_LINES: usize = 1024;

/// How long the lines an engine wrote before its process ended may take to
/// arrive, once the end is known (its output may stay open, held by a
/// process it left behind).
pub const EXIT_GRACE: Duration = Duration::from_millis(200);

/// Which way a line went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Written by the referee to the engine's stdin.
    ToEngine,
    /// Read from the engine's stdout.
    FromEngine,
}

impl Direction {
    /// `→` or `←`, as the game log shows it.
    pub fn arrow(self) -> &'static str {
        match self {
            Direction::ToEngine => "→",
            Direction::FromEngine => "←",
        }
    }
}

/// Where the lines of a link are told (the game log of the instance).
pub type LineLog = Arc<dyn Fn(Direction, &str) + Send + Sync>;

/// A line read from the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The line, without its line end (lossy UTF-8).
    pub text: String,
    /// False if it held bytes no text protocol has: NUL or another control
    /// character (tab aside), or invalid UTF-8.
    pub clean: bool,
}

/// Why no line came.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// The deadline passed first.
    #[error("no line in time")]
    Timeout,
    /// The engine's stdout ended (its process exited or closed it), or its
    /// process ended and nothing more came.
    #[error("its output ended")]
    Closed,
    /// Its stdin cannot be written (the process ended or does not read).
    #[error("cannot write to it: {0}")]
    Write(String),
}

enum Incoming {
    Line(Line),
    End,
}

/// The two pipes of one engine process.
pub struct LineLink {
    stdin: Option<Box<dyn Write + Send>>,
    lines: Receiver<Incoming>,
    log: LineLog,
    ended: bool,
    /// Says once that the process ended (see [`LineLink::watch_exit`]).
    exit: Option<Receiver<()>>,
    /// When the process is known to have ended: the last moment its lines
    /// are waited for.
    gone_by: Option<Instant>,
}

impl std::fmt::Debug for LineLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LineLink(ended: {})", self.ended)
    }
}

impl LineLink {
    /// A link writing to `stdin` and reading `stdout` (on a new thread).
    pub fn new(
        stdin: impl Write + Send + 'static,
        stdout: impl Read + Send + 'static,
        log: LineLog,
    ) -> io::Result<LineLink> {
        let (tx, rx) = crossbeam_channel::bounded(QUEUED_LINES);
        let reader_log = Arc::clone(&log);
        std::thread::Builder::new()
            .name("engine-stdout".into())
            .spawn(move || {
                read_lines(
                    stdout,
                    |line| {
                        reader_log(Direction::FromEngine, &line.text);
                        tx.send(Incoming::Line(line)).is_ok()
                    },
                    || {
                        let _ = tx.send(Incoming::End);
                    },
                )
            })?;
        Ok(LineLink {
            stdin: Some(Box::new(stdin)),
            lines: rx,
            log,
            ended: false,
            exit: None,
            gone_by: None,
        })
    }

    /// Makes [`LineLink::recv`] end with `Closed` once `exit` says the
    /// process ended and its last lines (within [`EXIT_GRACE`]) are taken,
    /// even if its output stays open.
    pub fn watch_exit(&mut self, exit: Receiver<()>) {
        self.exit = Some(exit);
    }

    /// Writes `line` and a line end, at once (a pipe that is full because
    /// the engine does not read is an error, not a wait).
    pub fn send(&mut self, line: &str) -> Result<(), LinkError> {
        (self.log)(Direction::ToEngine, line);
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(LinkError::Write("its input is closed".into()));
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = stdin.write_all(&bytes).and_then(|()| stdin.flush());
        written.map_err(|e| {
            self.stdin = None;
            LinkError::Write(if e.kind() == io::ErrorKind::WouldBlock {
                "it does not read its input (the pipe is full)".into()
            } else {
                e.to_string()
            })
        })
    }

    /// The next line, waiting until `deadline`. Past the deadline nothing
    /// is taken (an engine that writes without end cannot hold the referee).
    pub fn recv(&mut self, deadline: Instant) -> Result<Line, LinkError> {
        loop {
            if self.ended {
                return Err(LinkError::Closed);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(LinkError::Timeout);
            }
            let until = self.gone_by.map_or(deadline, |t| t.min(deadline));
            let exit = self.exit.clone().unwrap_or_else(crossbeam_channel::never);
            crossbeam_channel::select! {
                recv(self.lines) -> got => match got {
                    Ok(Incoming::Line(line)) => return Ok(line),
                    Ok(Incoming::End) | Err(_) => self.ended = true,
                },
                recv(exit) -> _ => {
                    self.exit = None;
                    self.gone_by = Some(Instant::now() + EXIT_GRACE);
                }
                default(until.saturating_duration_since(now)) => {
                    if self.gone_by.is_some_and(|t| Instant::now() >= t) {
                        self.ended = true;
                    } else {
                        return Err(LinkError::Timeout);
                    }
                }
            }
        }
    }

    /// Lines already read and not yet taken (leftovers of an earlier
    /// exchange): taken and returned, without waiting, and no more than
    /// were there when it began (an engine writing without end cannot keep
    /// it going).
    pub fn drain(&mut self) -> Vec<Line> {
        let mut out = Vec::new();
        for _ in 0..self.lines.len() {
            match self.lines.try_recv() {
                Ok(Incoming::Line(l)) => out.push(l),
                Ok(Incoming::End) | Err(TryRecvError::Disconnected) => {
                    self.ended = true;
                    break;
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        out
    }

    /// Closes the engine's stdin (it reads end-of-file).
    pub fn close_input(&mut self) {
        self.stdin = None;
    }
}

/// Reads `pipe` to its end, calling `line` for each line (until it returns
/// false) and `end` once at the end.
fn read_lines(mut pipe: impl Read, mut line: impl FnMut(Line) -> bool, end: impl FnOnce()) {
    let mut buf = [0u8; 8192];
    let mut cur: Vec<u8> = Vec::new();
    let mut cut = false;
    'outer: loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                if !line(finish(&mut cur, cut)) {
                    break 'outer;
                }
                cut = false;
            } else if cur.len() < MAX_LINE {
                cur.push(b);
            } else {
                cut = true;
            }
        }
    }
    if !cur.is_empty() {
        line(finish(&mut cur, cut));
    }
    end();
}

fn finish(cur: &mut Vec<u8>, cut: bool) -> Line {
    if cur.last() == Some(&b'\r') {
        cur.pop();
    }
    let utf8 = std::str::from_utf8(cur).is_ok();
    let controls = cur.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f);
    let mut text = String::from_utf8_lossy(cur).into_owned();
    if cut {
        text.push_str(" […cut]");
    }
    cur.clear();
    Line {
        text,
        clean: utf8 && !controls,
    }
}

/// Makes a pipe's writes fail with `WouldBlock` instead of waiting when it
/// is full, so an engine that stops reading cannot stall the referee.
#[cfg(unix)]
pub use mailbox_protocol::pipe::set_nonblocking;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn quiet() -> LineLog {
        Arc::new(|_, _| {})
    }

    #[test]
    fn lines_are_framed_and_checked() {
        let input: &[u8] = b"= D3\r\n\nbin\x00ary\nlast";
        let mut link = LineLink::new(io::sink(), input, quiet()).unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        let got: Vec<Line> = (0..4).map(|_| link.recv(until).unwrap()).collect();
        assert_eq!(got[0].text, "= D3");
        assert!(got[0].clean);
        assert_eq!(got[1].text, "");
        assert!(!got[2].clean, "a NUL is not text");
        assert_eq!(got[3].text, "last");
        assert_eq!(link.recv(until), Err(LinkError::Closed));
    }

    #[test]
    fn a_silent_pipe_times_out() {
        let (r, _w) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut link = LineLink::new(io::sink(), r, quiet()).unwrap();
        let t0 = Instant::now();
        let got = link.recv(t0 + Duration::from_millis(50));
        assert_eq!(got, Err(LinkError::Timeout));
        assert!(t0.elapsed() >= Duration::from_millis(50));
    }

    /// Lines without end, as fast as they can be read.
    struct Endless;
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = if i % 8 == 7 { b'\n' } else { b'x' };
            }
            Ok(buf.len())
        }
    }

    #[test]
    fn a_flood_holds_neither_the_reader_past_its_deadline_nor_memory() {
        let mut link = LineLink::new(io::sink(), Endless, quiet()).unwrap();
        let t0 = Instant::now();
        let until = t0 + Duration::from_millis(100);
        let mut taken = 0u64;
        while link.recv(until).is_ok() {
            taken += 1;
        }
        assert!(taken > 0);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_eq!(link.recv(until), Err(LinkError::Timeout));
        assert!(link.lines.len() <= QUEUED_LINES);
        let drained = link.drain().len();
        assert!(drained <= QUEUED_LINES, "{drained}");
    }

    #[test]
    fn an_ended_process_is_noticed_though_its_output_stays_open() {
        use std::os::unix::net::UnixStream;
        // `_held` keeps the output open, as a child the engine left would.
        let (r, mut held) = UnixStream::pair().unwrap();
        let mut link = LineLink::new(io::sink(), r, quiet()).unwrap();
        let (tx, rx) = crossbeam_channel::bounded(1);
        link.watch_exit(rx);
        // Its last line, written just before it ended, still comes.
        held.write_all(b"= D3\n").unwrap();
        tx.send(()).unwrap();
        let t0 = Instant::now();
        let far = t0 + Duration::from_secs(30);
        assert_eq!(link.recv(far).unwrap().text, "= D3");
        assert_eq!(link.recv(far), Err(LinkError::Closed));
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert_eq!(link.recv(far), Err(LinkError::Closed));
    }

    #[test]
    fn every_line_is_logged_both_ways() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let log: LineLog =
            Arc::new(move |d, l| s.lock().unwrap().push(format!("{} {l}", d.arrow())));
        let mut link = LineLink::new(io::sink(), &b"=\n"[..], log).unwrap();
        link.send("clear_board").unwrap();
        link.recv(Instant::now() + Duration::from_secs(5)).unwrap();
        let seen = seen.lock().unwrap();
        assert!(seen.contains(&"→ clear_board".to_string()), "{seen:?}");
        assert!(seen.contains(&"← =".to_string()), "{seen:?}");
    }
}
