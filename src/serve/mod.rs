//! The live web page of a tournament (`tournament serve`, `tournament run
//! --serve`): one self-contained page with the crosstable, the progress,
//! every running game move by move and the latest finished games, kept up
//! to date by server-sent events.
//!
//! Owns the HTTP side: listening, the routes, the event streams, and that
//! a viewer can never cost a game its time. HTTP itself (parsing requests,
//! chunked bodies, HEAD, the timeout for a request head) is the `hyper`
//! crate's, on a single-threaded `tokio` runtime: one thread serves every
//! connection, event-driven (a connection that sends half a request head
//! costs a few KB of buffer and no thread, and nothing looks at it until
//! bytes arrive or its time is up). That thread, the runtime's helper
//! threads (file reads, the report) and the thread that looks at the
//! folder all run at nice [`NICE`] (Linux's priority is per thread): the
//! referee's own threads and the bots come first, and the page gets the
//! CPU they leave. Limits a page open to a room's network needs
//! (`admission`): connections per client address and in all, a request
//! head of at most [`MAX_HEAD`] bytes within [`HEAD_TIMEOUT`], a
//! connection that moves nothing for `admission::IDLE` closed, one request
//! per connection. What is sent is held a chunk at a time (`bodies`): a
//! game's log streamed from its file, the page, the snapshot and the
//! report shared by every viewer of the same snapshot (one copy each, not
//! one per viewer). Works from the results folder alone (the referee may
//! run on another machine), only reads it, and serves only what the page
//! links (`files`: the games' logs; never the lock, its `OWNER`, the
//! config or anything outside). The data is `feed`'s, the page `page`'s,
//! the replay of a finished game the HTML report's.
//!
//! Routes: `/` the page, `/events` the stream (`event: state`, the
//! snapshot as JSON, on every change), `/state` the snapshot once,
//! `/report` the HTML report of the games so far, `/results/logs/<id>.log`
//! a game's log. Anything else: 404. Under `/seat/`, a person's private
//! page (`seat_page`), the only place anything may be posted, and only
//! with that person's key.

mod admission;
mod bodies;
pub mod feed;
pub mod files;
mod page;
mod seat_page;

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{mpsc, watch};

use crate::report::html;

use admission::{idle_out, Admission, Slot, Watched};
use bodies::{ChannelBody, FileBody};
use feed::{Feed, Numbered};

/// How often the results folder is looked at (less often when a look
/// takes long: see [`LiveServer::start`]).
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// How often a waiting look checks whether the server stops.
const STOP_CHECK: Duration = Duration::from_millis(25);
/// A comment line this often keeps idle streams open (and finds gone viewers).
const KEEPALIVE: Duration = Duration::from_secs(15);
/// The time a client has to send its whole request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head answered (longer: 431).
const MAX_HEAD: usize = 16 * 1024;
/// How long the listener waits when it cannot accept (out of files).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// The serving threads' nice value: the lowest priority there is.
const NICE: libc::c_int = 19;
/// Threads for the runtime's blocking work (file reads, the report).
const HELPERS: usize = 2;

/// What every answer carries: nothing may be loaded from elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:";

/// The body of every answer.
type Reply = BoxBody<Bytes, io::Error>;

/// A running server; it stops when dropped or [`LiveServer::stop`]ped.
pub struct LiveServer {
    addr: SocketAddr,
    feed: Arc<Feed>,
    stop: Arc<AtomicBool>,
    shutdown: watch::Sender<bool>,
    threads: Vec<JoinHandle<()>>,
}

impl LiveServer {
    /// Listens on `addr` and serves the results folder `results`.
    pub fn start(results: &Path, addr: SocketAddr) -> anyhow::Result<LiveServer> {
        LiveServer::start_with_desks(results, addr, Vec::new())
    }

    /// The same, with the private pages of the people in `desks` (each
    /// reached only with its key).
    pub fn start_with_desks(
        results: &Path,
        addr: SocketAddr,
        desks: Vec<Arc<crate::referee::Desk>>,
    ) -> anyhow::Result<LiveServer> {
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(HELPERS)
            .thread_name("live-page")
            .on_thread_start(below_the_games)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot start the live page's server: {e}"))?;
        let feed = Arc::new(Feed::new(results));
        let stop = Arc::new(AtomicBool::new(false));
        let (shutdown, stopping) = watch::channel(false);
        let mut threads = Vec::new();
        {
            let (feed, stop) = (Arc::clone(&feed), Arc::clone(&stop));
            threads.push(std::thread::spawn(move || {
                below_the_games();
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
            }));
        }
        let site = Arc::new(Site {
            results: results.to_path_buf(),
            feed: Arc::clone(&feed),
            admission: Arc::new(Admission::new()),
            stopping,
            page: Mutex::new(None),
            report: tokio::sync::Mutex::new(None),
            desks: desks
                .into_iter()
                .map(|d| (d.name().to_string(), d))
                .collect(),
        });
        threads.push(std::thread::spawn(move || {
            below_the_games();
            runtime.block_on(site.listen(listener));
            // Whatever is still open (a head never finished, a viewer
            // that reads nothing) is closed with the runtime.
            runtime.shutdown_timeout(Duration::from_secs(1));
        }));
        Ok(LiveServer {
            addr,
            feed,
            stop,
            shutdown,
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
            format!("live page: {url} (this machine only)")
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
        self.shutdown.send_replace(true);
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

/// Lowers the calling thread to nice [`NICE`], so that it runs on what the
/// games leave. Linux's priority is per thread: the referee's other
/// threads and the bots keep theirs. Not SCHED_IDLE: on a machine the bots
/// keep busy, that would stop the page altogether; at nice 19 it still
/// gets a sliver (a weight of 15 against 1024 for a thread at nice 0).
fn below_the_games() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; setpriority on our own
        // thread id only changes that thread's nice value (lowering it
        // needs no privilege).
        let lowered = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICE)
        };
        if lowered != 0 {
            tracing::warn!(
                "the live page cannot lower its priority: {}",
                io::Error::last_os_error()
            );
        }
    }
}

/// What every connection needs: the folder, the feed, the limits, the
/// stop, and what is shared between the viewers of one snapshot.
struct Site {
    results: PathBuf,
    feed: Arc<Feed>,
    admission: Arc<Admission>,
    stopping: watch::Receiver<bool>,
    /// The page as rendered for the snapshot of that number.
    page: Mutex<Option<(u64, Bytes)>>,
    /// The report as rendered for the snapshot of that number (held while
    /// it is rendered, so that it is rendered once).
    report: tokio::sync::Mutex<Option<(u64, Bytes)>>,
    /// The private desks of the people playing in the browser.
    desks: seat_page::Desks,
}

impl Site {
    /// Accepts connections until the server stops; each one admitted gets
    /// a task, the others are closed at once.
    async fn listen(self: Arc<Site>, listener: std::net::TcpListener) {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("the live page cannot listen: {e}");
                return;
            }
        };
        let mut stopping = self.stopping.clone();
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = stopping.wait_for(|stop| *stop) => return,
            };
            match accepted {
                Ok((stream, peer)) => {
                    if let Some(slot) = self.admission.admit(peer.ip()) {
                        tokio::spawn(Arc::clone(&self).connection(stream, slot));
                    }
                }
                // Out of files or memory for now: wait rather than spin.
                Err(_) => tokio::time::sleep(ACCEPT_PAUSE).await,
            }
        }
    }

    /// Serves one connection's one request, until it is answered, its head
    /// is late or it moves nothing for `admission::IDLE`.
    async fn connection(self: Arc<Site>, stream: tokio::net::TcpStream, _slot: Slot) {
        let _ = stream.set_nodelay(true);
        let (io, activity) = Watched::new(stream);
        let service = service_fn(move |request| {
            let site = Arc::clone(&self);
            async move { Ok::<_, Infallible>(site.answer(request).await) }
        });
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .keep_alive(false)
            .max_buf_size(MAX_HEAD);
        let served = http.serve_connection(TokioIo::new(io), service);
        tokio::select! {
            _ = served => {}
            _ = idle_out(activity) => {}
        }
    }

    async fn answer(self: Arc<Site>, request: Request<Incoming>) -> Response<Reply> {
        if let Some(rest) = request.uri().path().strip_prefix("/seat/") {
            let query = request.uri().query().unwrap_or("");
            return seat_page::answer(&self.desks, request.method(), rest, query);
        }
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return plain(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET only\n");
        }
        match request.uri().path() {
            "/" | "/index.html" => respond(StatusCode::OK, HTML, self.page()),
            "/state" => respond(StatusCode::OK, JSON, shared(self.feed.latest().1)),
            "/events" => self.events(),
            "/report" => match self.report().await {
                Ok(page) => respond(StatusCode::OK, HTML, page),
                Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}\n")),
            },
            path => match path.strip_prefix("/results/") {
                Some(rest) => self.log(rest.to_string()).await,
                None => not_found(),
            },
        }
    }

    /// The page for the current snapshot, rendered once per snapshot.
    fn page(&self) -> Bytes {
        let (n, state) = self.feed.latest();
        let mut cached = self.page.lock().unwrap_or_else(|e| e.into_inner());
        match &*cached {
            Some((seen, page)) if *seen == n => page.clone(),
            _ => {
                let page = Bytes::from(page::render(&state));
                *cached = Some((n, page.clone()));
                page
            }
        }
    }

    /// The HTML report for the current snapshot, rendered once per
    /// snapshot by a helper thread.
    async fn report(&self) -> anyhow::Result<Bytes> {
        let (n, _) = self.feed.latest();
        let mut cached = self.report.lock().await;
        if let Some((seen, page)) = &*cached {
            if *seen == n {
                return Ok(page.clone());
            }
        }
        let (results, feed) = (self.results.clone(), Arc::clone(&self.feed));
        let page = tokio::task::spawn_blocking(move || report(&results, &feed)).await??;
        let page = Bytes::from(page);
        *cached = Some((n, page.clone()));
        Ok(page)
    }

    /// A game's log (`files` decides which), streamed from its file.
    async fn log(&self, rest: String) -> Response<Reply> {
        let root = self.results.clone();
        let found = tokio::task::spawn_blocking(move || files::resolve(&root, &rest)).await;
        let Ok(Some(path)) = found else {
            return not_found();
        };
        let Ok(file) = tokio::fs::File::open(&path).await else {
            return not_found();
        };
        let Ok(meta) = file.metadata().await else {
            return not_found();
        };
        let mut response = answer(
            StatusCode::OK,
            TEXT,
            FileBody::new(file, meta.len()).boxed(),
        );
        if let Ok(len) = HeaderValue::from_str(&meta.len().to_string()) {
            response.headers_mut().insert(header::CONTENT_LENGTH, len);
        }
        response
    }

    /// A server-sent event stream: the current snapshot, then every newer
    /// one, until the viewer leaves or the server stops; a comment line
    /// when nothing changed for [`KEEPALIVE`].
    fn events(&self) -> Response<Reply> {
        let (chunks, body) = ChannelBody::new(4);
        tokio::spawn(push_events(
            self.feed.subscribe(),
            chunks,
            self.stopping.clone(),
        ));
        let mut response = answer(StatusCode::OK, "text/event-stream", body.boxed());
        response
            .headers_mut()
            .insert("X-Accel-Buffering", HeaderValue::from_static("no"));
        response
    }
}

/// Feeds one event stream: `retry`, then a `state` event per snapshot (the
/// newest only, when the viewer is behind). Ends when the viewer leaves,
/// the feed ends or the server stops.
async fn push_events(
    mut feed: watch::Receiver<Numbered>,
    chunks: mpsc::Sender<Bytes>,
    mut stopping: watch::Receiver<bool>,
) {
    if chunks
        .send(Bytes::from_static(b"retry: 2000\n\n"))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let next = tokio::select! {
            changed = feed.changed() => match changed {
                Ok(()) => state_event(feed.borrow_and_update().1.clone()),
                Err(_) => return,
            },
            _ = tokio::time::sleep(KEEPALIVE) => vec![Bytes::from_static(b": keep-alive\n\n")],
            _ = chunks.closed() => return,
            _ = stopping.wait_for(|stop| *stop) => return,
        };
        for chunk in next {
            if chunks.send(chunk).await.is_err() {
                return;
            }
        }
    }
}

/// One `state` event: the snapshot is one line of JSON (serde_json
/// escapes newlines), so one `data:` line carries it; the snapshot itself
/// is shared, not copied.
fn state_event(json: Arc<String>) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"event: state\ndata: "),
        shared(json),
        Bytes::from_static(b"\n\n"),
    ]
}

/// A snapshot's JSON as a body, without copying it.
fn shared(json: Arc<String>) -> Bytes {
    struct Json(Arc<String>);
    impl AsRef<[u8]> for Json {
        fn as_ref(&self) -> &[u8] {
            self.0.as_bytes()
        }
    }
    Bytes::from_owner(Json(json))
}

const TEXT: &str = "text/plain; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json; charset=utf-8";

/// An answer with the headers every answer carries.
fn answer(status: StatusCode, kind: &str, body: Reply) -> Response<Reply> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, kind)
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, POLICY)
        .header(header::REFERRER_POLICY, "no-referrer")
        .header(header::CONNECTION, "close")
        .body(body)
        .expect("valid headers")
}

fn respond(status: StatusCode, kind: &str, body: Bytes) -> Response<Reply> {
    answer(
        status,
        kind,
        Full::new(body).map_err(|never| match never {}).boxed(),
    )
}

fn plain(status: StatusCode, text: &str) -> Response<Reply> {
    respond(status, TEXT, Bytes::copy_from_slice(text.as_bytes()))
}

fn not_found() -> Response<Reply> {
    plain(StatusCode::NOT_FOUND, "not found\n")
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
