//! Row 1: the hand-off. The referee writes a TURN into a built-in bot's
//! mailbox (or its pipe), the bot answers, the referee has the move: the real referee
//! side (`player::Instance`) against the real built-in bot process. Beside
//! it, the same message's round trip through a pipe to another process
//! (`cat`): the floor any inter-process hand-off pays.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use tournament::game::{Color, Position};
use tournament::mailbox::{Message, REFEREE};
use tournament::player::{Instance, PlayerSpec, Transport};
use tournament::protocol::{Reply, Request};

use super::stats::percentile;
use super::sys::{context_switches, cpu_time, Scratch};

/// Exchanges before the timed ones (the bot's start, caches, the watcher).
const WARMUP: usize = 200;

/// p50 and p99 of one run, in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
}

fn latency(samples: &[f64]) -> Latency {
    Latency {
        p50: percentile(samples, 50.0).unwrap_or(f64::NAN),
        p99: percentile(samples, 99.0).unwrap_or(f64::NAN),
    }
}

/// One hand-off run, and where its time went (µs per move, means).
#[derive(Clone, Copy, Debug)]
pub struct Handoff {
    pub latency: Latency,
    pub mean: f64,
    /// CPU of the referee side (this process, all threads).
    pub referee_cpu: f64,
    /// CPU of the bot process (all threads).
    pub bot_cpu: f64,
    /// The referee's write of in.txt alone, p50.
    pub send_p50: f64,
    /// Context switches per move, both processes, all threads.
    pub switches: f64,
}

/// Context switches (voluntary and not) of every thread of `pid`.
fn process_switches(pid: u32) -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("status")).ok()?;
        for line in text.lines() {
            if line.starts_with("voluntary_ctxt_switches")
                || line.starts_with("nonvoluntary_ctxt_switches")
            {
                total += line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
            }
        }
    }
    Some(total)
}

/// CPU time of every thread of `pid` so far, from the scheduler's own
/// nanosecond counters (`/proc/PID/task/*/schedstat`).
fn process_cpu(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// The TURN the bench sends: black to move from the start position.
pub fn turn_request() -> Request {
    Request::turn(&Position::start(8), None, 5000)
}

/// The NEW of bench game `game`: black, 8×8, against `bench`.
pub fn new_request(game: &str) -> Request {
    Request::New {
        game: game.to_string(),
        color: Color::Black,
        opponent: "bench".to_string(),
        size: 8,
        move_ms: 5000,
    }
}

/// `moves` timed TURN → answer exchanges with a built-in random bot whose
/// mailbox is on a board inside `root`: through the files, or with `pipe`
/// through the pipe it takes (PROTOCOL.md, "The pipe").
pub fn handoff(root: &Path, moves: usize, pipe: bool) -> anyhow::Result<Handoff> {
    let scratch = Scratch::new(root, "handoff")?;
    let board = scratch.path().join("board");
    std::fs::create_dir_all(&board)?;
    let spec = Arc::new(PlayerSpec {
        pipe,
        ..PlayerSpec::builtin("random", 1)
    });
    let mut bot = Instance::new(spec, &board, 1).context("opening the mailbox")?;
    bot.prepare(tracing::Span::none())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let far = || Instant::now() + Duration::from_secs(10);
    let ready = bot
        .exchange(&new_request("bench-1"), far())
        .map_err(|e| anyhow::anyhow!("the built-in bot did not start: {e}"))?;
    if Reply::decode(&ready, 8) != Ok(Reply::Ready) {
        bail!("the built-in bot answered {ready:?} to NEW");
    }
    let way = if pipe {
        Transport::Pipe
    } else {
        Transport::Files
    };
    if bot.transport() != way {
        bail!(
            "the built-in bot talks through {:?}, not {way:?}",
            bot.transport()
        );
    }
    let turn = turn_request();
    let pid = bot.pid().context("the bot has no process")?;
    let mut samples = Vec::with_capacity(moves);
    let mut sends = Vec::with_capacity(moves);
    let (mut referee0, mut bot0, mut clock0) = (Duration::ZERO, None, Instant::now());
    let (mut own_switches0, mut bot_switches0) = (0, None);
    for i in 0..WARMUP + moves {
        if i == WARMUP {
            (referee0, bot0, clock0) = (cpu_time(), process_cpu(pid), Instant::now());
            (own_switches0, bot_switches0) = (context_switches(), process_switches(pid));
        }
        let clock = Instant::now();
        bot.send(&turn)
            .map_err(|e| anyhow::anyhow!("exchange {i}: {e}"))?;
        let sent = clock.elapsed();
        let answer = bot
            .wait(far())
            .map_err(|e| anyhow::anyhow!("exchange {i}: {e}"))?;
        let took = clock.elapsed();
        if answer.len() != 2 {
            bail!("exchange {i}: the bot answered {answer:?}");
        }
        if i >= WARMUP {
            samples.push(took.as_secs_f64() * 1e6);
            sends.push(sent.as_secs_f64() * 1e6);
        }
    }
    let wall = clock0.elapsed();
    let referee = cpu_time() - referee0;
    let bot_cpu = match (bot0, process_cpu(pid)) {
        (Some(a), Some(b)) => (b - a).as_secs_f64() * 1e6 / moves as f64,
        _ => f64::NAN,
    };
    let switches = match (bot_switches0, process_switches(pid)) {
        (Some(a), Some(b)) => (b - a + context_switches() - own_switches0) as f64 / moves as f64,
        _ => f64::NAN,
    };
    let _ = bot.exchange(&Request::end(2, 2, "normal"), far());
    drop(bot);
    let per_move = |d: Duration| d.as_secs_f64() * 1e6 / moves as f64;
    Ok(Handoff {
        latency: latency(&samples),
        mean: per_move(wall),
        referee_cpu: per_move(referee),
        bot_cpu,
        send_p50: percentile(&sends, 50.0).unwrap_or(f64::NAN),
        switches,
    })
}

/// `n` round trips of the TURN message (as the referee encodes it for the
/// mailbox) through `cat`: write it to the pipe, read it all back. With
/// `same_core`, this thread and `cat` are pinned to the core this thread is
/// on (Linux): no wake-up crosses cores, the floor of the machine.
pub fn pipe_round_trip(n: usize, same_core: bool) -> anyhow::Result<Latency> {
    let pin = if same_core { Pin::here() } else { None };
    if same_core && pin.is_none() {
        bail!("cannot pin to one core here");
    }
    let msg = Message::new(REFEREE, "random.1", 12, &turn_request().encode())
        .encode()
        .into_bytes();
    let mut cmd = Command::new("cat");
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(target_os = "linux")]
    if let Some(p) = &pin {
        use std::os::unix::process::CommandExt;
        let cpu = p.cpu;
        // SAFETY: only sched_setaffinity (async-signal-safe) between fork
        // and exec, on a mask built before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().context("cannot start `cat`")?;
    let mut to = child.stdin.take().context("no stdin")?;
    let mut from = child.stdout.take().context("no stdout")?;
    let mut back = vec![0u8; msg.len()];
    let mut samples = Vec::with_capacity(n);
    let result = (|| -> std::io::Result<()> {
        for i in 0..WARMUP + n {
            let clock = Instant::now();
            to.write_all(&msg)?;
            from.read_exact(&mut back)?;
            let took = clock.elapsed();
            if i >= WARMUP {
                samples.push(took.as_secs_f64() * 1e6);
            }
        }
        Ok(())
    })();
    drop(to);
    let _ = child.wait();
    drop(pin);
    result.context("pipe round trip")?;
    if back != msg {
        bail!("the pipe returned other bytes");
    }
    Ok(latency(&samples))
}

/// This thread pinned to the core it runs on, until dropped.
struct Pin {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    cpu: usize,
    #[cfg(target_os = "linux")]
    before: libc::cpu_set_t,
}

impl Pin {
    #[cfg(target_os = "linux")]
    fn here() -> Option<Pin> {
        // SAFETY: plain libc calls on sets we own.
        unsafe {
            let cpu = usize::try_from(libc::sched_getcpu()).ok()?;
            let mut before: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut before) != 0 {
                return None;
            }
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, size, &one) != 0 {
                return None;
            }
            Some(Pin { cpu, before })
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn here() -> Option<Pin> {
        None
    }
}

#[cfg(target_os = "linux")]
impl Drop for Pin {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `here`.
        unsafe {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.before);
        }
    }
}
