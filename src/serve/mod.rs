//! The live web page of a tournament (`tournament serve`, `tournament run
//! --serve`): one self-contained page with the crosstable, the progress,
//! every running game move by move and the latest finished games, kept up
//! to date by server-sent events.
//!
//! Owns the HTTP side: listening, the routes, the event streams. Works from
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

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use tiny_http::{Header, Method, Request, Response};

use crate::report::html;
use crate::results::{read_records, GAMES_FILE};

use feed::Feed;

/// How often the results folder is looked at.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// A comment line this often keeps idle streams open (and finds gone viewers).
const KEEPALIVE: Duration = Duration::from_secs(15);

/// What every answer carries: nothing may be loaded from elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:";

/// A running server; it stops when dropped or [`LiveServer::stop`]ped.
pub struct LiveServer {
    addr: SocketAddr,
    feed: Arc<Feed>,
    server: Arc<tiny_http::Server>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl LiveServer {
    /// Listens on `addr` and serves the results folder `results`.
    pub fn start(results: &Path, addr: SocketAddr) -> anyhow::Result<LiveServer> {
        let server = tiny_http::Server::http(addr)
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let addr = server
            .server_addr()
            .to_ip()
            .context("the server has no IP address")?;
        let server = Arc::new(server);
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
            let (feed, stop, server) = (Arc::clone(&feed), Arc::clone(&stop), Arc::clone(&server));
            let results = results.to_path_buf();
            threads.push(std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (feed, stop, results) =
                        (Arc::clone(&feed), Arc::clone(&stop), results.clone());
                    std::thread::spawn(move || answer(request, &results, &feed, &stop));
                }
            }));
        }
        Ok(LiveServer {
            addr,
            feed,
            server,
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
        self.server.unblock();
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

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn respond(request: Request, status: u16, kind: &str, body: Vec<u8>) {
    let response = Response::from_data(body)
        .with_status_code(status)
        .with_header(header("Content-Type", kind))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        .with_header(header("Content-Security-Policy", POLICY));
    let _ = request.respond(response);
}

fn not_found(request: Request) {
    respond(
        request,
        404,
        "text/plain; charset=utf-8",
        b"not found\n".to_vec(),
    );
}

/// The content type of a results file, by its extension.
fn kind_of(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("json" | "jsonl") => "application/json; charset=utf-8",
        Some("wtb") => "application/octet-stream",
        _ => "text/plain; charset=utf-8",
    }
}

fn answer(request: Request, results: &Path, feed: &Feed, stop: &AtomicBool) {
    if *request.method() != Method::Get && *request.method() != Method::Head {
        return respond(
            request,
            405,
            "text/plain; charset=utf-8",
            b"read-only: GET only\n".to_vec(),
        );
    }
    let url = request.url().to_string();
    let path = url.split(['?', '#']).next().unwrap_or("");
    match path {
        "/" | "/index.html" => {
            let (_, state) = feed.latest();
            respond(
                request,
                200,
                "text/html; charset=utf-8",
                page::render(&state).into_bytes(),
            );
        }
        "/state" => {
            let (_, state) = feed.latest();
            respond(
                request,
                200,
                "application/json; charset=utf-8",
                state.as_bytes().to_vec(),
            );
        }
        "/events" => stream(request, feed, stop),
        "/report" => match report(results, feed) {
            Ok(page) => respond(request, 200, "text/html; charset=utf-8", page.into_bytes()),
            Err(e) => respond(
                request,
                500,
                "text/plain; charset=utf-8",
                format!("{e:#}\n").into_bytes(),
            ),
        },
        _ => match path
            .strip_prefix("/results/")
            .and_then(|rest| files::resolve(results, rest))
        {
            Some(file) => match std::fs::read(&file) {
                Ok(body) => respond(request, 200, kind_of(&file), body),
                Err(_) => not_found(request),
            },
            None => not_found(request),
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
    let mut out = request.into_writer();
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
