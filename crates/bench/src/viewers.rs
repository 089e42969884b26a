//! What the live page's viewers cost the referee: the same tournament of
//! built-in bots played by `tournament run` alone and by `tournament run
//! --serve` with 100 viewers holding its event stream open, each reading
//! every snapshot pushed.
//!
//! Owns the viewers (plain sockets speaking just enough HTTP). The rate is
//! the referee's own: games over the span from the first game's start to
//! the last game's end in its journal, so starting and stopping the
//! process (and the page's last push) are left out of both.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use tournament::results::{read_records, GAMES_FILE};

use super::tourney::{self, Setup};

/// Viewers connected during the run with the page.
pub const VIEWERS: usize = 100;

/// One tournament's rate (games/s), the CPU time of `run` and its bots
/// per game (ms), and, with the page, the snapshots each viewer received.
pub struct Measured {
    pub rate: f64,
    pub cpu_ms_per_game: f64,
    pub snapshots: Vec<u64>,
}

/// A free loopback port (bound and let go: a small race, fine for a bench).
fn free_port() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
}

/// A viewer: connects (retrying until the server is up or `give_up`),
/// asks for `/events` and counts the snapshots until the server closes.
fn viewer(addr: SocketAddr, give_up: Instant) -> Result<u64, String> {
    let mut stream = loop {
        match TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(_) if Instant::now() < give_up => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot connect: {e}")),
        }
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
    stream
        .write_all(format!("GET /events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .map_err(|e| format!("cannot ask: {e}"))?;
    const MARK: &[u8] = b"event: state\n";
    let (mut seen, mut carry) = (0u64, Vec::new());
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if seen == 0 => return Err(format!("cannot read: {e}")),
            Err(_) => break,
        };
        carry.extend_from_slice(&buf[..n]);
        seen += carry.windows(MARK.len()).filter(|w| *w == MARK).count() as u64;
        let keep = carry.len().saturating_sub(MARK.len() - 1);
        carry.drain(..keep);
    }
    if seen == 0 {
        return Err(format!(
            "the stream ended without a snapshot: {:?}",
            String::from_utf8_lossy(&carry)
        ));
    }
    Ok(seen)
}

/// Games per second between the first start and the last end in the
/// journal of `dir`'s tournament.
pub fn journal_rate(dir: &Path) -> anyhow::Result<f64> {
    let records = read_records(&dir.join("results").join(GAMES_FILE))?;
    let parse = |t: &str| humantime::parse_rfc3339_weak(t).ok();
    let first = records.iter().filter_map(|r| parse(&r.started)).min();
    let last = records.iter().filter_map(|r| parse(&r.finished)).max();
    let (Some(first), Some(last)) = (first, last) else {
        bail!("no timed games in the journal");
    };
    let span = last.duration_since(first)?.as_secs_f64();
    Ok(records.len() as f64 / span.max(1e-3))
}

/// Plays `setup` in `dir`; with `page`, as `run --serve` with
/// [`VIEWERS`] viewers.
pub fn measure(dir: &Path, setup: &Setup<'_>, page: bool) -> anyhow::Result<Measured> {
    if !page {
        let ran = tourney::run(dir, setup, false)?;
        return Ok(Measured {
            rate: journal_rate(dir)?,
            cpu_ms_per_game: ran.cpu_s * 1000.0 / ran.games as f64,
            snapshots: vec![],
        });
    }
    let addr = free_port()?;
    let give_up = Instant::now() + Duration::from_secs(30);
    let viewers: Vec<_> = (0..VIEWERS)
        .map(|_| std::thread::spawn(move || viewer(addr, give_up)))
        .collect();
    let ran = tourney::run_with(dir, setup, false, &["--serve".into(), addr.to_string()]);
    let seen: Vec<Result<u64, String>> = viewers
        .into_iter()
        .map(|v| {
            v.join()
                .unwrap_or_else(|_| Err("the viewer panicked".into()))
        })
        .collect();
    let ran = ran.context("`tournament run --serve`")?;
    let failed: Vec<&String> = seen.iter().filter_map(|r| r.as_ref().err()).collect();
    if let Some(first) = failed.first() {
        bail!(
            "{} of {VIEWERS} viewers received nothing (the first: {first})",
            failed.len()
        );
    }
    let snapshots = seen.into_iter().flatten().collect();
    Ok(Measured {
        rate: journal_rate(dir)?,
        cpu_ms_per_game: ran.cpu_s * 1000.0 / ran.games as f64,
        snapshots,
    })
}
