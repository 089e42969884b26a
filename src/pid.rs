//! Whether a process id is alive on this machine, whether it is still
//! the process seen earlier (pids are reused), and how a process ended
//! ([`ExitInfo`]).
//!
//! Owns: those questions, asked of the kernel and `/proc`, and the words
//! for a process's end. The bottom of the harness: uses no other module,
//! so the board lock (`mailbox`), the bot processes (`player`) and the
//! sandbox can all ask without depending on each other. Must not start,
//! signal (beyond signal 0) or wait for processes.

use std::io;
use std::time::Duration;

/// Whether a process with this pid exists on this machine.
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: signal 0 only checks existence and permission.
        let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
        rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether the process with this pid exists and is the one that was
/// running at `seen_at` (it started no later than that): pids are reused,
/// so a pid alone proves nothing after its process died. Where the start
/// time cannot be read, the pid alone counts.
pub fn pid_alive_since(pid: u32, seen_at: std::time::SystemTime) -> bool {
    if !pid_alive(pid) {
        return false;
    }
    match started_at(pid) {
        Some(t) => t <= seen_at + Duration::from_secs(2),
        None => true,
    }
}

/// When process `pid` started, from `/proc` (Linux).
fn started_at(pid: u32) -> Option<std::time::SystemTime> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Field 22 (starttime, clock ticks after boot): the 20th after ')'.
        let ticks: u64 = stat
            .rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(19)?
            .parse()
            .ok()?;
        let btime: u64 = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if hz <= 0 {
            return None;
        }
        let secs = btime as f64 + ticks as f64 / hz as f64;
        Some(std::time::UNIX_EPOCH + Duration::from_secs_f64(secs))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// How a process ended, in words a user understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitInfo {
    Code(i32),
    Signal(i32),
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitInfo::Code(c) => write!(f, "exit status {c}"),
            ExitInfo::Signal(s) => write!(f, "killed by signal {s}{}", signal_name(*s)),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => " (HUP)",
        2 => " (INT)",
        6 => " (ABRT)",
        9 => " (KILL)",
        11 => " (SEGV)",
        13 => " (PIPE)",
        15 => " (TERM)",
        _ => "",
    }
}
