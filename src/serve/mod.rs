//! The live web page of a tournament (`tournament serve`, `tournament run
//! --serve`): one self-contained page with the crosstable, the progress,
//! every running game move by move and the latest finished games, kept up
//! to date by server-sent events.
//!
//! Owns the HTTP side: listening, the routes, the event streams. The server
//! is the smallest that does the job on `std::net`: GET and HEAD only, one
//! request per connection, a thread per connection (an event stream holds
//! its thread; a classroom's hundred viewers are a hundred idle threads).
//! tiny_http was tried first and dropped: its worker pool queues new
//! connections behind busy workers, and with long-lived event streams
//! arriving together most of them were never served (95 of 100 in the
//! bench). Works from
//! the results folder alone (the referee may run on another machine), only
//! reads it, and serves no file outside it (`files`). The data is `feed`'s,
//! the page `page`'s, the replay of a finished game the HTML report's.
//!
//! Routes: `/` the page, `/events` the stream (`event: state`, the
//! snapshot as JSON, on every change), `/state` the snapshot once,
//! `/report` the HTML report of the games so far, `/results/<file>` a file
//! of the results folder (a game's log: `/results/logs/<id>.log`).

pub mod feed;
pub mod files;
mod page;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::report::html;
use crate::results::{read_records, GAMES_FILE};

use feed::Feed;

/// How often the results folder is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// A comment line this often keeps idle streams open (and finds gone viewers).
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How often the listener looks for new connections (it polls, so that it
/// can stop).
const ACCEPT_EVERY: Duration = Duration::from_millis(10);
/// A request head must arrive within this, and be at most this long.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_HEAD: usize = 16 * 1024;

/// What every answer carries: nothing may be loaded from elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:";

/// A running server; it stops when dropped or [`LiveServer::stop`]ped.
pub struct LiveServer {
    addr: SocketAddr,
    feed: Arc<Feed>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl LiveServer {
    /// Listens on `addr` and serves the results folder `results`.
    pub fn start(results: &Path, addr: SocketAddr) -> anyhow::Result<LiveServer> {
        let listener =
            TcpListener::bind(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let feed = Arc::new(Feed::new(results));
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        {
            let (feed, stop) = (Arc::clone(&feed), Arc::clone(&stop));
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    feed.refresh();
                    std::thread::sleep(LOOK_EVERY);
                }
                feed.wake_all();
            }));
        }
        {
            let (feed, stop) = (Arc::clone(&feed), Arc::clone(&stop));
            let results = results.to_path_buf();
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (feed, stop, results) =
                                (Arc::clone(&feed), Arc::clone(&stop), results.clone());
                            std::thread::spawn(move || {
                                if let Some(request) = Request::read(stream) {
                                    answer(request, &results, &feed, &stop);
                                }
                            });
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(ACCEPT_EVERY)
                        }
                        Err(_) => std::thread::sleep(ACCEPT_EVERY),
                    }
                }
            }));
        }
        Ok(LiveServer {
            addr,
            feed,
            stop,
            threads,
        })
    }

    /// The address it listens on (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The line that tells the user where the page is, and who can see it.
    pub fn announce(&self) -> String {
        let url = format!("http://{}/", self.addr);
        if self.addr.ip().is_loopback() {
            format!(
                "live page: {url} (this machine only; --addr 0.0.0.0:PORT shows it to the network)"
            )
        } else if self.addr.ip().is_unspecified() {
            format!(
                "live page: http://<this machine's address>:{}/ — read-only, and visible to the network: anyone who can reach this machine can watch",
                self.addr.port()
            )
        } else {
            format!("live page: {url} — read-only, and visible to the network: anyone who can reach this address can watch")
        }
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Takes a last look (the final standings), gives the viewers a moment
    /// to receive it, and stops.
    pub fn stop(mut self) {
        self.feed.refresh();
        std::thread::sleep(Duration::from_millis(300));
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.feed.wake_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shutdown();
        }
    }
}

/// One request: its method and target (as sent, still percent-encoded),
/// and the connection to answer on. One request per connection: every
/// answer closes it.
struct Request {
    method: String,
    target: String,
    stream: TcpStream,
}

impl Request {
    /// Reads the request line and headers (at most [`MAX_HEAD`] bytes);
    /// `None` for anything that is not an HTTP request.
    fn read(mut stream: TcpStream) -> Option<Request> {
        stream.set_nonblocking(false).ok()?;
        stream.set_read_timeout(Some(READ_TIMEOUT)).ok()?;
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 || head.len() + n > MAX_HEAD {
                return None;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&head);
        let mut first = head.lines().next()?.split(' ');
        let (method, target, version) = (first.next()?, first.next()?, first.next()?);
        if !version.starts_with("HTTP/1.") {
            return None;
        }
        Some(Request {
            method: method.to_string(),
            target: target.to_string(),
            stream,
        })
    }

    fn respond(mut self, status: u16, kind: &str, body: &[u8]) {
        let reason = match status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            _ => "Internal Server Error",
        };
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
             Content-Security-Policy: {POLICY}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = self.stream.write_all(head.as_bytes());
        if self.method != "HEAD" {
            let _ = self.stream.write_all(body);
        }
        let _ = self.stream.flush();
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";

/// The content type of a results file, by its extension.
fn kind_of(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => HTML,
        Some("json" | "jsonl") => "application/json; charset=utf-8",
        Some("wtb") => "application/octet-stream",
        _ => TEXT,
    }
}

fn answer(request: Request, results: &Path, feed: &Feed, stop: &AtomicBool) {
    if request.method != "GET" && request.method != "HEAD" {
        return request.respond(405, TEXT, b"read-only: GET only\n");
    }
    let path = request.target.split(['?', '#']).next().unwrap_or("");
    match path {
        "/" | "/index.html" => {
            let (_, state) = feed.latest();
            request.respond(200, HTML, page::render(&state).as_bytes());
        }
        "/state" => {
            let (_, state) = feed.latest();
            request.respond(200, "application/json; charset=utf-8", state.as_bytes());
        }
        "/events" => stream(request, feed, stop),
        "/report" => match report(results, feed) {
            Ok(page) => request.respond(200, HTML, page.as_bytes()),
            Err(e) => request.respond(500, TEXT, format!("{e:#}\n").as_bytes()),
        },
        _ => match path
            .strip_prefix("/results/")
            .and_then(|rest| files::resolve(results, rest))
        {
            Some(file) => match std::fs::read(&file) {
                Ok(body) => request.respond(200, kind_of(&file), &body),
                Err(_) => request.respond(404, TEXT, b"not found\n"),
            },
            None => request.respond(404, TEXT, b"not found\n"),
        },
    }
}

/// The HTML report of the games finished so far (their replays).
fn report(results: &Path, feed: &Feed) -> anyhow::Result<String> {
    let records = read_records(&results.join(GAMES_FILE))?;
    let players: Vec<String> = Vec::new();
    let table = crate::rating::crosstable(&records, &players);
    let title = feed.title();
    let generated = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    Ok(html::render(&title, &generated, &records, &table))
}

/// A server-sent event stream: the current snapshot, then every newer one,
/// until the viewer leaves or the server stops.
fn stream(request: Request, feed: &Feed, stop: &AtomicBool) {
    let mut out = request.stream;
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\nX-Accel-Buffering: no\r\n\r\nretry: 2000\n\n";
    if out
        .write_all(head.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return;
    }
    let (mut seen, mut state) = feed.latest();
    loop {
        if write_event(&mut out, &state).is_err() {
            return;
        }
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match feed.newer_than(seen, KEEPALIVE) {
                Some((n, s)) => {
                    (seen, state) = (n, s);
                    break;
                }
                None if stop.load(Ordering::Relaxed) => return,
                None => {
                    if out
                        .write_all(b": keep-alive\n\n")
                        .and_then(|_| out.flush())
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    }
}

fn write_event(out: &mut impl Write, json: &str) -> std::io::Result<()> {
    // The snapshot is one line of JSON (serde_json escapes newlines).
    out.write_all(b"event: state\ndata: ")?;
    out.write_all(json.as_bytes())?;
    out.write_all(b"\n\n")?;
    out.flush()
}

/// Checks the results folder `serve` was given: a file there is a
/// mistake; a folder not there yet is fine (the referee makes it), and
/// the returned note says so.
pub fn check_results_folder(results: &Path) -> anyhow::Result<Option<String>> {
    if results.is_dir() {
        return Ok(None);
    }
    if results.exists() {
        return Err(crate::error::HarnessError::Config(format!(
            "{} is not a folder: pass the results folder of a tournament with --results",
            results.display()
        ))
        .into());
    }
    Ok(Some(format!(
        "{} does not exist yet: the page fills in once the referee writes it",
        results.display()
    )))
}
