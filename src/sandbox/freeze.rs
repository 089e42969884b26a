//! Fair CPU: the referee's handle on a running warden ([`Warden`]) that
//! stops a bot, with everything it started, while it is not its move,
//! and lets it run again with its next message.
//!
//! Owns: when a bot is stopped and continued, and the one background
//! thread (the stopper) that stops bots a moment after they answered.
//!
//! Must not: know about games or messages (the player says when a move
//! ends and the next begins), or signal a group it has not found below
//! its own warden.
//!
//! A bot is stopped [`STOP_AFTER`] its answer, not at once: most
//! opponents answer sooner than that, and then the bot is never stopped
//! and never continued, so a fast game pays no signal per move. A bot
//! still gets no CPU while its opponent thinks longer than that, which is
//! when it would matter.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// How long a bot may still run after its answer before it is stopped
/// (at most [`TICK`] later). Against an opponent that thinks 30 ms this is
/// at most 7 % of its time, 5 % on average.
pub const STOP_AFTER: Duration = Duration::from_millis(1);

/// The stopper looks at its queue at most once per tick, whatever the
/// number of moves per second: one wake-up stops or lets go every bot
/// that came due meanwhile.
const TICK: Duration = Duration::from_millis(1);

/// The referee's end of a running warden: freeze and thaw the bot.
///
/// The warden stops and continues every process of the bot's namespace
/// (`S`/`C` on its pipe); the bot's own process group is also signalled
/// directly, so the bot is let go without waiting for the warden to wake.
#[derive(Debug)]
pub struct Warden {
    ponder: bool,
    shared: Arc<Mutex<Target>>,
}

/// What a stop or continue acts on, and where the bot stands.
#[derive(Debug)]
struct Target {
    ctl: File,
    /// The warden process (the leader of the group the referee started).
    leader: Option<u32>,
    /// The bot's own process group, once found below the warden.
    bot_group: Option<i32>,
    /// The bot cannot leave its group (seccomp): signalling the group is
    /// enough, without the warden's sweep of the namespace.
    contained: bool,
    phase: Phase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// Answered; the stopper stops it unless it is thawed first. The
    /// number tells this wait from earlier ones still queued.
    Stopping(u64),
    Stopped,
}

impl Warden {
    /// A handle on the warden that reads `ctl`; `contained` when the bot
    /// cannot leave its process group.
    pub(super) fn new(ctl: File, ponder: bool, contained: bool) -> Warden {
        let target = Target {
            ctl,
            leader: None,
            bot_group: None,
            contained,
            phase: Phase::Running,
        };
        Warden {
            ponder,
            shared: Arc::new(Mutex::new(target)),
        }
    }

    /// Tells the handle which process is the warden.
    pub fn attach(&mut self, leader: u32) {
        lock(&self.shared).leader = Some(leader);
    }

    /// The bot answered: it is stopped, with everything it started,
    /// [`STOP_AFTER`] from now unless it is thawed first (unless it
    /// ponders). A warden that is gone is not an error: the bot's end is
    /// seen elsewhere.
    pub fn freeze(&mut self) {
        if self.ponder {
            return;
        }
        let mut target = lock(&self.shared);
        if target.phase == Phase::Running {
            let Some(stopper) = stopper() else {
                // No thread to stop it later: stopped now (it loses the
                // moments after its answer, nothing else).
                target.stop();
                return;
            };
            let ticket = next_ticket();
            target.phase = Phase::Stopping(ticket);
            drop(target);
            stopper.push(
                Instant::now() + STOP_AFTER,
                Arc::downgrade(&self.shared),
                ticket,
            );
        }
    }

    /// Lets the bot run again (nothing to do if it was not stopped yet).
    pub fn thaw(&mut self) {
        let mut target = lock(&self.shared);
        if target.phase == Phase::Stopped {
            target.cont();
        }
        target.phase = Phase::Running;
    }
}

impl Target {
    /// Stops the bot now.
    fn stop(&mut self) {
        let direct = self.signal_bot_group(SIGSTOP);
        if !(direct && self.contained) {
            let _ = self.ctl.write_all(b"S");
        }
        self.phase = Phase::Stopped;
    }

    /// Continues a stopped bot.
    fn cont(&mut self) {
        if !(self.contained && self.bot_group.is_some()) {
            let _ = self.ctl.write_all(b"C");
        }
        self.signal_bot_group(SIGCONT);
    }

    /// Signals the bot's own group; false if it could not be found.
    fn signal_bot_group(&mut self, sig: i32) -> bool {
        #[cfg(unix)]
        {
            if self.bot_group.is_none() {
                self.bot_group = self.leader.and_then(bot_group_below);
            }
            if let Some(g) = self.bot_group {
                // SAFETY: killpg to the bot's group, which the warden made
                // and which lives as long as the bot (a gone one errors).
                return unsafe { libc::killpg(g, sig) } == 0;
            }
            false
        }
        #[cfg(not(unix))]
        {
            let _ = sig;
            false
        }
    }
}

fn lock(shared: &Mutex<Target>) -> std::sync::MutexGuard<'_, Target> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn next_ticket() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A bot to stop at a time, if it still waits with that ticket.
type Due = (Instant, Weak<Mutex<Target>>, u64);

/// The background thread that stops answered bots once their
/// [`STOP_AFTER`] is up. Every entry waits the same time, so the queue is
/// in order of due time; the thread is woken only when the queue was
/// empty, and a bot thawed in time costs it nothing but a look.
struct Stopper {
    queue: Mutex<VecDeque<Due>>,
    wake: Condvar,
}

/// The stopper, started on first use, before any bot could hold the
/// machine's threads ([`start_stopper`]); `None` while the machine
/// refuses its thread (asked again next time).
fn stopper() -> Option<&'static Stopper> {
    static STOPPER: Mutex<Option<&'static Stopper>> = Mutex::new(None);
    let mut slot = STOPPER.lock().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        let s: &'static Stopper = Box::leak(Box::new(Stopper {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
        }));
        match std::thread::Builder::new()
            .name("bot-stopper".into())
            .spawn(move || s.run())
        {
            Ok(_) => *slot = Some(s),
            Err(e) => tracing::warn!(
                "cannot start the thread that stops bots between moves ({e}): answered bots are stopped at once"
            ),
        }
    }
    *slot
}

/// Starts the thread that stops bots between moves now, while the
/// machine still grants threads (a run calls this before its first bot).
pub fn start_stopper() {
    stopper();
}

impl Stopper {
    fn push(&self, due: Instant, target: Weak<Mutex<Target>>, ticket: u64) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let was_empty = queue.is_empty();
        queue.push_back((due, target, ticket));
        drop(queue);
        if was_empty {
            self.wake.notify_one();
        }
    }

    fn run(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let mut next_look = Instant::now();
        loop {
            let Some(&(due, _, _)) = queue.front() else {
                queue = self.wake.wait(queue).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            let now = Instant::now();
            let look = due.max(next_look);
            if look > now {
                queue = self
                    .wake
                    .wait_timeout(queue, look - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            next_look = now + TICK;
            let split = queue.partition_point(|&(due, _, _)| due <= now);
            let came_due: Vec<Due> = queue.drain(..split).collect();
            drop(queue);
            for (_, target, ticket) in came_due {
                if let Some(shared) = target.upgrade() {
                    let mut target = lock(&shared);
                    if target.phase == Phase::Stopping(ticket) {
                        target.stop();
                    }
                }
            }
            queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(unix)]
const SIGSTOP: i32 = libc::SIGSTOP;
#[cfg(unix)]
const SIGCONT: i32 = libc::SIGCONT;
#[cfg(not(unix))]
const SIGSTOP: i32 = 19;
#[cfg(not(unix))]
const SIGCONT: i32 = 18;

/// The first process below `leader` (its child or grandchild) that leads
/// its own process group: the bot, which the warden puts in a group of
/// its own. Linux only (`/proc/PID/task/PID/children`).
fn bot_group_below(leader: u32) -> Option<i32> {
    let children = |pid: u32| -> Vec<u32> {
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let leads_group = |pid: u32| -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // "pid (comm) state ppid pgrp …": fields after the last ')'.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(2))
            .and_then(|g| g.parse::<u32>().ok())
            == Some(pid)
    };
    let mut level = vec![leader];
    for _ in 0..2 {
        let next: Vec<u32> = level.iter().flat_map(|&p| children(p)).collect();
        if let Some(&bot) = next.iter().find(|&&p| leads_group(p)) {
            return Some(bot as i32);
        }
        level = next;
    }
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::process::{Child, Command};

    /// A stand-in warden: a process whose child leads a group of its own.
    /// The caller kills and waits for both.
    #[allow(clippy::zombie_processes)]
    fn leader_with_bot() -> (Child, i32) {
        let leader = Command::new("python3")
            .args([
                "-c",
                "import os,subprocess; subprocess.Popen(['sleep','30'], preexec_fn=os.setpgrp).wait()",
            ])
            .spawn()
            .expect("python3 runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(g) = bot_group_below(leader.id()) {
                return (leader, g);
            }
            assert!(
                Instant::now() < deadline,
                "the bot below the leader never appeared"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn state(pid: i32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let rest = stat.rsplit_once(')').unwrap().1;
        rest.trim_start().chars().next().unwrap()
    }

    fn handle(leader: u32) -> Warden {
        let ctl = File::create("/dev/null").unwrap();
        let mut w = Warden::new(ctl, false, true);
        w.attach(leader);
        w
    }

    #[test]
    fn an_answered_bot_is_stopped_soon_after_and_continued_by_its_next_message() {
        let (mut leader, bot) = leader_with_bot();
        let mut w = handle(leader.id());
        w.freeze();
        std::thread::sleep(STOP_AFTER * 50);
        assert_eq!(
            state(bot),
            'T',
            "stopped once its opponent took longer than STOP_AFTER"
        );
        w.thaw();
        std::thread::sleep(Duration::from_millis(20));
        assert_ne!(state(bot), 'T', "continued by thaw");
        leader.kill().unwrap();
        unsafe { libc::killpg(bot, libc::SIGKILL) };
        let _ = leader.wait();
    }

    #[test]
    fn a_bot_thawed_within_stop_after_is_never_stopped() {
        let (mut leader, bot) = leader_with_bot();
        let mut w = handle(leader.id());
        for _ in 0..100 {
            w.freeze();
            w.thaw();
        }
        std::thread::sleep(STOP_AFTER * 50);
        assert_ne!(state(bot), 'T', "a thaw before STOP_AFTER cancels the stop");
        let ponders = &mut Warden::new(File::create("/dev/null").unwrap(), true, true);
        ponders.attach(leader.id());
        ponders.freeze();
        std::thread::sleep(STOP_AFTER * 50);
        assert_ne!(state(bot), 'T', "a pondering bot is never stopped");
        leader.kill().unwrap();
        unsafe { libc::killpg(bot, libc::SIGKILL) };
        let _ = leader.wait();
    }
}
