//! What a siege of the live page costs the games: a `tournament run
//! --serve` of two Python bots that take 150 ms a move (70 ms of it CPU),
//! played without visitors and then while [`STALLED`] connections send
//! half a request head and never finish it and [`READERS`] viewers read a
//! 4 MB game log a kilobyte every 100 ms.
//!
//! Owns the siege (plain sockets from many loopback addresses, as from many
//! machines, so that the limit per client address does not turn it away)
//! and the figures: games/s from the journal, the moves' 95th percentile
//! and slowest time, the games forfeited, the referee's own CPU time per
//! game, the referee's peak RSS.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use socket2::{Domain, Socket, Type};

use tournament::results::{read_records, GAMES_FILE};

use super::stats::percentile;
use super::tourney::{self, Bot, Setup};

/// Connections that send half a request head, held open throughout.
pub const STALLED: usize = 1024;
/// Slow readers of the big log, held open throughout.
pub const READERS: usize = 300;
/// The size of the log they read.
const LOG_BYTES: usize = 4 * 1024 * 1024;
/// Games of the two bots (two at a time).
pub const GAMES: u32 = 4;

/// One run's figures.
pub struct Measured {
    pub rate: f64,
    pub p95_move_ms: f64,
    /// The slowest move's time (the bots' limit is `move-ms` = 5000).
    pub max_move_ms: f64,
    pub forfeits: usize,
    /// The referee's own CPU time (its threads, the page's among them;
    /// not its bots') per game.
    pub referee_cpu_ms_per_game: f64,
    pub peak_rss_mib: f64,
}

/// Plays the bots' tournament in `dir` with `run --serve`; with `siege`,
/// under it.
pub fn measure(dir: &Path, scripts: &Path, siege: bool) -> anyhow::Result<Measured> {
    // `python3` by name: the referee picks one the bots' users can reach.
    let bot = Bot::Command(vec![
        "python3".into(),
        scripts.join("mailbox_bot.py").display().to_string(),
        "--cpu-ms".into(),
        "70".into(),
        "--delay-ms".into(),
        "80".into(),
    ]);
    let setup = Setup {
        players: vec![("a".to_string(), &bot), ("b".to_string(), &bot)],
        games_per_pairing: GAMES,
        concurrency: 2,
        openings: vec![],
        sandbox: true,
        previous_sandbox: false,
        pipe: true,
    };
    let addr = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let besieger = siege.then(|| {
        let (stop, log) = (Arc::clone(&stop), dir.join("results/logs/siege.log"));
        std::thread::spawn(move || besiege(addr, &log, &stop))
    });
    let ran = tourney::run_with(dir, &setup, true, &["--serve".into(), addr.to_string()]);
    stop.store(true, Ordering::Relaxed);
    if let Some(b) = besieger {
        b.join()
            .map_err(|_| anyhow::anyhow!("the siege panicked"))?
            .context("the siege")?;
    }
    let ran = ran.context("`tournament run --serve`")?;
    let records = read_records(&dir.join("results").join(GAMES_FILE))?;
    let moves: Vec<f64> = records
        .iter()
        .flat_map(|r| r.moves.iter())
        .filter(|m| !m.opening && !m.auto)
        .map(|m| m.ms as f64)
        .collect();
    Ok(Measured {
        rate: super::viewers::journal_rate(dir)?,
        p95_move_ms: percentile(&moves, 95.0).unwrap_or(f64::NAN),
        max_move_ms: moves.iter().copied().fold(f64::NAN, f64::max),
        referee_cpu_ms_per_game: ran.sampled.map_or(f64::NAN, |s| s.own_cpu_s) * 1000.0
            / records.len().max(1) as f64,
        forfeits: records.iter().filter(|r| r.forfeit.is_some()).count(),
        peak_rss_mib: ran.sampled.map_or(0, |s| s.own_hwm_kib) as f64 / 1024.0,
    })
}

/// Holds the siege of the page at `addr` until `stop`: waits for it to
/// listen, writes the big log at `log`, opens every connection, keeps the
/// readers reading and opens again what the server closes.
fn besiege(addr: SocketAddr, log: &PathBuf, stop: &AtomicBool) -> anyhow::Result<()> {
    let give_up = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(addr).is_err() {
        if Instant::now() > give_up || stop.load(Ordering::Relaxed) {
            bail!("the page never listened on {addr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::create_dir_all(log.parent().expect("in logs/"))?;
    let line = "a line of a chatty bot's stderr, as its game log keeps it ...\n";
    std::fs::write(log, line.repeat(LOG_BYTES / line.len() + 1))?;
    let stalled_from = |i: usize| Ipv4Addr::new(127, 0, 1, 1 + (i / 16) as u8);
    let reader_from = |i: usize| Ipv4Addr::new(127, 0, 2, 1 + (i / 10) as u8);
    const HALF_HEAD: &str = "GET /state HTTP/1.1\r\nHost: siege\r\nX-Never: ends";
    const READ_LOG: &str = "GET /results/logs/siege.log HTTP/1.1\r\nHost: siege\r\n\r\n";
    let mut stalled: Vec<Option<TcpStream>> = (0..STALLED)
        .map(|i| open(stalled_from(i), addr, HALF_HEAD))
        .collect();
    let mut readers: Vec<Option<TcpStream>> = (0..READERS)
        .map(|i| open(reader_from(i), addr, READ_LOG))
        .collect();
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        for (i, slot) in readers.iter_mut().enumerate() {
            if slot.as_mut().is_none_or(|s| closed(s, 1024)) {
                *slot = open(reader_from(i), addr, READ_LOG);
            }
        }
        if round.is_multiple_of(10) {
            for (i, slot) in stalled.iter_mut().enumerate() {
                if slot.as_mut().is_none_or(|s| closed(s, 1)) {
                    *slot = open(stalled_from(i), addr, HALF_HEAD);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// A connection from loopback address `from` that has sent `head`.
fn open(from: Ipv4Addr, to: SocketAddr, head: &str) -> Option<TcpStream> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
    socket
        .bind(&SocketAddr::V4(SocketAddrV4::new(from, 0)).into())
        .ok()?;
    socket.connect(&to.into()).ok()?;
    let mut stream: TcpStream = socket.into();
    stream.write_all(head.as_bytes()).ok()?;
    stream.set_nonblocking(true).ok()?;
    Some(stream)
}

/// Takes at most `sip` bytes; whether the server closed the connection.
fn closed(stream: &mut TcpStream, sip: usize) -> bool {
    let mut buf = vec![0u8; sip];
    match stream.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    }
}
