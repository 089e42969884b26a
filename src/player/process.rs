//! Starting and stopping a bot's process tree. The only platform-specific
//! module of the harness.
//!
//! Owns: spawning in a fresh process group with stdin from /dev/null (or a
//! pipe, for an engine),
//! noticing the exit, TERM to the group, a grace period, KILL, and reaping
//! every member so nothing outlives the referee. Knows nothing about
//! mailboxes or games.

use std::collections::BTreeSet;
use std::io;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use crate::pid::ExitInfo;

/// Process groups started and not yet known to be gone: what an interrupt
/// must kill.
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// KILLs every bot process group this referee started and has not yet
/// stopped (used when the user interrupts twice, or the referee is told to
/// terminate).
pub fn kill_all() {
    #[cfg(unix)]
    for &pgid in live_groups().iter() {
        // SAFETY: killpg with a valid signal; a gone group just errors.
        unsafe {
            libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// Shared record of a child's exit, filled in by its watcher thread.
#[derive(Debug, Default)]
pub struct ExitCell {
    state: Mutex<Option<ExitInfo>>,
    changed: Condvar,
    /// What the sandbox's warden said of the bot's end, when there is one.
    report: Mutex<Option<crate::sandbox::Report>>,
}

impl ExitCell {
    pub fn get(&self) -> Option<ExitInfo> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The warden's report, once the process ended (sandboxed bots only).
    pub fn report(&self) -> Option<crate::sandbox::Report> {
        self.report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set(&self, info: ExitInfo) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(info);
        self.changed.notify_all();
    }

    /// Waits until the process has exited or `timeout` passed.
    pub fn wait(&self, timeout: Duration) -> Option<ExitInfo> {
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |s| s.is_none())
            .unwrap_or_else(|e| e.into_inner());
        guard.clone()
    }
}

/// A running bot process (the leader of its own process group).
#[derive(Debug)]
pub struct ProcessTree {
    pub pid: u32,
    pub exit: Arc<ExitCell>,
}

pub use crate::pid::{pid_alive, pid_alive_since};

/// Asks the kernel to KILL this process when its parent dies (Linux), so a
/// built-in bot never outlives a referee killed with -9.
pub fn die_with_parent() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
    }
}

static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process the reaper of orphaned descendants (Linux), so bot
/// grandchildren whose parent died are still waited for and killed by us —
/// even those that left the bot's process group (`setsid`).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer flag.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 {
            SUBREAPER.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// Every process's parent as (pid, ppid), from `/proc/*/stat` (Linux;
/// empty elsewhere).
pub fn parents() -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    #[cfg(target_os = "linux")]
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // "pid (comm) state ppid ...": the name may hold spaces and
            // parentheses, so count the fields after the last ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                out.push((pid, ppid));
            }
        }
    }
    out
}

/// Every process below `root` (children, their children, …).
pub fn descendants(root: u32) -> Vec<u32> {
    let parent_of = parents();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// KILLs and reaps our children that are not a running bot: as a
/// subreaper, those can only be what a bot left behind when it died
/// (re-parented to us), including processes that left its group.
fn kill_orphans() {
    #[cfg(target_os = "linux")]
    {
        if !SUBREAPER.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let me = std::process::id();
        // Held for the whole scan: no bot is spawned meanwhile.
        let bots = live_groups();
        for (pid, ppid) in parents() {
            if ppid == me && !bots.contains(&pid) {
                // SAFETY: KILL to a child of ours, then reap it.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                    let mut status = 0;
                    libc::waitpid(pid as libc::pid_t, &mut status, 0);
                }
                tracing::debug!(pid, "killed a process a bot left behind");
            }
        }
    }
}

/// Spawns `cmd` in a new process group, stdin from /dev/null (piped for
/// an engine that reads its commands there: `stdin_piped`), stdout and
/// stderr piped. `on_exit` runs on the watcher thread when it exits. With
/// `report` (the pipe of a sandbox warden), the exit shown is the bot's
/// own as the warden reported it, not the warden's.
pub fn spawn(
    cmd: &mut Command,
    stdin_piped: bool,
    report: Option<std::fs::File>,
    on_exit: impl FnOnce(&ExitInfo) + Send + 'static,
) -> io::Result<(ProcessTree, Child)> {
    cmd.stdin(if stdin_piped {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: only async-signal-safe calls between fork and exec: the
        // bot gets KILL if the referee dies (even by kill -9).
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                Ok(())
            });
        }
    }
    // Spawned and registered under one lock, so `kill_orphans` never sees
    // a new bot before it is known.
    let (child, pid) = {
        let mut groups = live_groups();
        let child = cmd.spawn()?;
        let pid = child.id();
        groups.insert(pid);
        (child, pid)
    };
    let exit = Arc::new(ExitCell::default());
    let cell = Arc::clone(&exit);
    let watcher = std::thread::Builder::new()
        .name(format!("bot-exit-{pid}"))
        .spawn(move || {
            let mut info = wait_pid(pid);
            if let Some(pipe) = &report {
                let r = crate::sandbox::read_report(pipe);
                if let Some(c) = r.code {
                    info = ExitInfo::Code(c);
                } else if let Some(s) = r.signal {
                    info = ExitInfo::Signal(s);
                }
                *cell.report.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            }
            cell.set(info.clone());
            on_exit(&info);
        });
    if let Err(e) = watcher {
        // Nobody would notice its end: it does not run without a watcher.
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        live_groups().remove(&pid);
        return Err(e);
    }
    Ok((ProcessTree { pid, exit }, child))
}

#[cfg(unix)]
fn wait_pid(pid: u32) -> ExitInfo {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        if rc == pid as libc::pid_t {
            if libc::WIFEXITED(status) {
                return ExitInfo::Code(libc::WEXITSTATUS(status));
            }
            if libc::WIFSIGNALED(status) {
                return ExitInfo::Signal(libc::WTERMSIG(status));
            }
            continue; // stopped/continued: keep waiting
        }
        if rc < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        // Already reaped elsewhere: the status is lost.
        return ExitInfo::Code(-1);
    }
}

#[cfg(not(unix))]
fn wait_pid(_pid: u32) -> ExitInfo {
    // Without process groups the std Child is waited by its owner instead.
    ExitInfo::Code(-1)
}

impl ProcessTree {
    pub fn has_exited(&self) -> bool {
        self.exit.get().is_some()
    }

    /// True while any process of the group (grandchildren included) lives.
    pub fn group_alive(&self) -> bool {
        #[cfg(unix)]
        {
            if self.has_exited() {
                // Only now can group members be our children (re-parented
                // orphans); before, the leader's own watcher must reap it.
                reap_group(self.pid);
            }
            // SAFETY: signal 0 to a process group only checks existence.
            unsafe { libc::killpg(self.pid as libc::pid_t, 0) == 0 }
        }
        #[cfg(not(unix))]
        {
            !self.has_exited()
        }
    }

    /// Sends `sig` to the whole group.
    #[cfg(unix)]
    fn signal_group(&self, sig: libc::c_int) {
        // SAFETY: killpg with a valid signal number; errors are ignored
        // (the group may already be gone).
        unsafe {
            libc::killpg(self.pid as libc::pid_t, sig);
        }
    }

    /// TERM to the group, up to `grace` for everything in it to exit, then
    /// KILL, and reap. Returns how the leader ended.
    pub fn terminate(&self, grace: Duration) -> Option<ExitInfo> {
        #[cfg(unix)]
        {
            if self.group_alive() {
                self.signal_group(libc::SIGTERM);
                // A stopped process cannot act on TERM until continued.
                self.signal_group(libc::SIGCONT);
                let until = Instant::now() + grace;
                while self.group_alive() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            self.kill()
        }
        #[cfg(not(unix))]
        {
            let _ = grace;
            self.exit.get()
        }
    }

    /// KILL to the whole group at once, and reap. Returns how the leader ended.
    pub fn kill(&self) -> Option<ExitInfo> {
        #[cfg(unix)]
        {
            let until = Instant::now() + Duration::from_secs(5);
            while self.group_alive() && Instant::now() < until {
                self.signal_group(libc::SIGKILL);
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let info = self.exit.wait(Duration::from_secs(5));
        if !self.group_alive() {
            live_groups().remove(&self.pid);
        }
        kill_orphans();
        info
    }
}

/// Reaps exited members of group `pgid` that were re-parented to us (as a
/// subreaper), so they do not linger as zombies. Called only after the
/// leader was reaped by its watcher thread.
#[cfg(unix)]
fn reap_group(pgid: u32) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid for any child in the group, without blocking.
        let rc = unsafe { libc::waitpid(-(pgid as libc::pid_t), &mut status, libc::WNOHANG) };
        if rc <= 0 {
            return;
        }
    }
}
