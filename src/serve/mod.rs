//! The live web page of a tournament (`tournament serve`, `tournament run
//! --serve`): one self-contained page with the crosstable, the progress,
//! every running game move by move and the latest finished games, kept up
//! to date by server-sent events.
//!
//! Owns the HTTP side: listening, the routes, the event streams. HTTP
//! itself (parsing requests, chunked bodies, HEAD) is the `touche` crate's;
//! this module owns only the accept loop, so that every connection gets
//! its own thread (an event stream holds its thread for as long as the
//! viewer watches: a classroom's hundred viewers are a hundred idle
//! threads, and no viewer waits behind another) and so that the server can
//! stop, and the limits a page open to a room's network needs: at most
//! [`MAX_CONNECTIONS`] at once, one request per connection (every answer
//! closes it), and a request head of at most [`MAX_HEAD`] bytes, seen
//! whole in the socket's buffer before touche reads it (touche itself
//! reads a head of any length). Works from the results folder alone (the referee may
//! run on another machine), only reads it, and serves no file outside it
//! (`files`). The data is `feed`'s, the page `page`'s, the replay of a
//! finished game the HTML report's.
//!
//! Routes: `/` the page, `/events` the stream (`event: state`, the
//! snapshot as JSON, on every change), `/state` the snapshot once,
//! `/report` the HTML report of the games so far, `/results/<file>` a file
//! of the results folder (a game's log: `/results/logs/<id>.log`).

pub mod feed;
pub mod files;
mod page;
pub mod referee;

use std::convert::Infallible;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use touche::{header, Body, Method, Request, Response, StatusCode};

use crate::report::html;

use feed::Feed;

/// How often the results folder is looked at (less often when a look
/// takes long: see [`LiveServer::start`]).
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// How often a waiting look checks whether the server stops.
const STOP_CHECK: Duration = Duration::from_millis(25);
/// A comment line this often keeps idle streams open (and finds gone viewers).
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How often the listener looks for new connections (it polls, so that it
/// can stop).
const ACCEPT_EVERY: Duration = Duration::from_millis(10);
/// A connection that sends no request for this long is closed (it frees
/// its thread); a viewer that reads nothing for this long is dropped.
const IDLE: Duration = Duration::from_secs(30);
/// The longest request head answered.
const MAX_HEAD: usize = 16 * 1024;
/// Connections open at once; more are closed unanswered.
const MAX_CONNECTIONS: usize = 1024;

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
                    let clock = Instant::now();
                    feed.refresh();
                    // A snapshot grows with the journal (about 2 ms for
                    // 1000 games of two players on the bench machine): at
                    // most a tenth of this thread's time goes to looking,
                    // whatever the size.
                    let until = clock + LOOK_EVERY.max(clock.elapsed() * 10);
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        std::thread::sleep(STOP_CHECK);
                    }
                }
                feed.wake_all();
            }));
        }
        {
            let site = Site {
                results: results.to_path_buf(),
                feed: Arc::clone(&feed),
                stop: Arc::clone(&stop),
            };
            let open = Arc::new(AtomicUsize::new(0));
            threads.push(std::thread::spawn(move || {
                while !site.stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                                open.fetch_sub(1, Ordering::SeqCst);
                                continue; // dropped: closed
                            }
                            let (site, done) = (site.clone(), Arc::clone(&open));
                            let spawned = std::thread::Builder::new().spawn(move || {
                                site.serve(stream);
                                done.fetch_sub(1, Ordering::SeqCst);
                            });
                            if spawned.is_err() {
                                // No thread to be had: the connection is
                                // closed, the server goes on.
                                open.fetch_sub(1, Ordering::SeqCst);
                            }
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

/// What every connection's thread needs: the folder, the feed, the stop.
#[derive(Clone)]
struct Site {
    results: PathBuf,
    feed: Arc<Feed>,
    stop: Arc<AtomicBool>,
}

impl Site {
    /// Answers the one request of a connection, in this thread (an event
    /// stream: until the viewer leaves or the server stops).
    fn serve(self, stream: TcpStream) {
        if stream.set_nonblocking(false).is_err()
            || stream.set_write_timeout(Some(IDLE)).is_err()
            || stream.set_read_timeout(Some(IDLE)).is_err()
            || !head_arrives(&stream)
        {
            return;
        }
        let _ = touche::Server::builder()
            .read_timeout(IDLE)
            .nodelay(true)
            .from_connections(std::iter::once(stream))
            .serve_single_thread(|request: Request<Body>| {
                Ok::<_, Infallible>(self.answer(&request))
            });
    }

    fn answer(&self, request: &Request<Body>) -> Response<Body> {
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET only\n");
        }
        match request.uri().path() {
            "/" | "/index.html" => {
                let (_, state) = self.feed.latest();
                respond(StatusCode::OK, HTML, page::render(&state).into_bytes())
            }
            "/state" => {
                let (_, state) = self.feed.latest();
                respond(StatusCode::OK, JSON, state.as_bytes().to_vec())
            }
            "/events" => self.events(),
            "/report" => match report(&self.results, &self.feed) {
                Ok(page) => respond(StatusCode::OK, HTML, page.into_bytes()),
                Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}\n")),
            },
            path => match path
                .strip_prefix("/results/")
                .and_then(|rest| files::resolve(&self.results, rest))
            {
                Some(file) => match std::fs::read(&file) {
                    Ok(body) => respond(StatusCode::OK, kind_of(&file), body),
                    Err(_) => plain(StatusCode::NOT_FOUND, "not found\n"),
                },
                None => plain(StatusCode::NOT_FOUND, "not found\n"),
            },
        }
    }

    /// A server-sent event stream: the current snapshot, then every newer
    /// one, until the viewer leaves or the server stops. Chunked, each
    /// event its own chunk (touche sends each chunk as it comes); closed at
    /// its end.
    fn events(&self) -> Response<Body> {
        let events = EventStream {
            feed: Arc::clone(&self.feed),
            stop: Arc::clone(&self.stop),
            seen: None,
        };
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-store")
            .header(header::TRANSFER_ENCODING, "chunked")
            .header(header::CONNECTION, "close")
            .header("X-Accel-Buffering", "no")
            .body(Body::from_iter(events))
            .expect("valid headers")
    }
}

/// Whether a whole request head (up to its blank line) of at most
/// [`MAX_HEAD`] bytes arrives within [`IDLE`]; looks without taking it
/// (`peek`), so touche reads it afterwards. A longer head, a closed or
/// silent connection: false.
fn head_arrives(stream: &TcpStream) -> bool {
    let mut buf = vec![0u8; MAX_HEAD];
    let until = Instant::now() + IDLE;
    loop {
        // Blocks while nothing is there (up to the read timeout); returns
        // at once with what is there.
        let n = match stream.peek(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let head = &buf[..n];
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            return true;
        }
        if n == buf.len() || Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The chunks of an event stream: blocks in `next` until there is
/// something to send; ends when the server stops.
struct EventStream {
    feed: Arc<Feed>,
    stop: Arc<AtomicBool>,
    /// The number of the last snapshot sent (`None`: nothing sent yet).
    seen: Option<u64>,
}

impl Iterator for EventStream {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let Some(seen) = self.seen else {
            let (n, state) = self.feed.latest();
            self.seen = Some(n);
            return Some(event(b"retry: 2000\n\n", &state));
        };
        match self.feed.newer_than(seen, KEEPALIVE) {
            _ if self.stop.load(Ordering::Relaxed) => None,
            Some((n, state)) => {
                self.seen = Some(n);
                Some(event(b"", &state))
            }
            None => Some(b": keep-alive\n\n".to_vec()),
        }
    }
}

/// `before`, then one `state` event. The snapshot is one line of JSON
/// (serde_json escapes newlines), so one `data:` line carries it.
fn event(before: &[u8], json: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(before.len() + json.len() + 24);
    out.extend_from_slice(before);
    out.extend_from_slice(b"event: state\ndata: ");
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(b"\n\n");
    out
}

const TEXT: &str = "text/plain; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json; charset=utf-8";

fn respond(status: StatusCode, kind: &str, body: Vec<u8>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, kind)
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, POLICY)
        .header(header::CONNECTION, "close")
        .body(Body::from(body))
        .expect("valid headers")
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    respond(status, TEXT, text.as_bytes().to_vec())
}

/// The content type of a results file, by its extension.
fn kind_of(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => HTML,
        Some("json" | "jsonl") => JSON,
        Some("wtb") => "application/octet-stream",
        _ => TEXT,
    }
}

/// The HTML report of the games finished so far (their replays).
fn report(results: &Path, feed: &Feed) -> anyhow::Result<String> {
    let records = crate::results::read_results(results, true)?;
    let players: Vec<String> = Vec::new();
    let table = crate::rating::crosstable(&records, &players);
    let title = feed.title();
    let generated = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    Ok(html::render(&title, &generated, &records, &table))
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
