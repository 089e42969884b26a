//! The sandbox a spawned bot runs in: what it may touch, how much it may
//! use, and when it may run.
//!
//! Owns: the policy for one bot instance ([`Policy`]), the once-per-run
//! look at what this machine can enforce ([`Protections`]), the command
//! that starts a bot under its warden ([`wrap`]), and the handle the
//! referee freezes and thaws it with ([`Warden`]). The warden process
//! itself (`tournament __sandbox`) lives in [`warden`].
//!
//! Must not: know about games, moves or mailbox messages, nor players
//! (`player` uses the sandbox, never the reverse); decide
//! forfeits (it reports how the bot ended and which limit it hit, the
//! referee judges).
//!
//! The layers, each best effort and each reported when missing:
//! - a PID namespace per bot whose first process is the warden: the bot
//!   cannot see or signal anything outside it, everything the bot starts
//!   (`setsid` children too) dies with the warden, and the warden dies
//!   with the referee (also after `kill -9`), so nothing is left behind;
//!   IPC, network and mount namespaces of its own beside it (System V and
//!   POSIX IPC objects die with it and reach no other bot, no network but
//!   its own unconfigured loopback, a `/proc` that shows its own processes);
//! - Landlock: reads only in the system's folders, its own program's
//!   folder and the files its command names ([`readable`]), its mailbox
//!   and scratch folder; writes only in those two, no links or renames
//!   across folders, no TCP, and (ABI ≥ 6) no signals or abstract-socket
//!   connections outside its own domain;
//! - a user id of its own when the referee runs as root ([`ids`]), a
//!   control group of its own counting its processes and all its memory
//!   where the referee may make one ([`cgroup`]), `no_new_privs`, resource
//!   limits (address space, file size, processes, no core dumps), and a
//!   seccomp filter against new namespaces, Unix sockets and keyrings;
//! - fair CPU: the whole namespace is stopped while it is not the bot's
//!   move (unless the player ponders), from [`STOP_AFTER`] its answer
//!   ([`freeze`]).

pub mod cgroup;
mod fds;
pub use crate::record::Limit;
#[cfg(unix)]
pub use fds::place_fds;
mod freeze;
pub mod ids;
pub mod warden;

pub use freeze::{Warden, STOP_AFTER};
pub use ids::{IdLease, IdRange};

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

/// How long a start waits for the machine to grant a process or thread
/// the referee needs (the probe, a bot's warden, a reader thread), before
/// the run stops (exit 11, nothing lost).
pub const MACHINE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// The hidden subcommand that runs the warden.
pub const WARDEN_ARG: &str = "__sandbox";

/// Default address-space limit per bot process, in MiB: node and ruby
/// start within 1 GiB (measured), so 2 GiB leaves a bot room to think.
pub const DEFAULT_MEMORY_MB: u64 = 2048;
/// Default limit on what a bot may write, in MiB: the largest file, and
/// the sum of its mailbox and scratch folder checked after every answer.
pub const DEFAULT_DISK_MB: u64 = 256;
/// Default limit on processes (and threads) of one bot process and what
/// it starts.
pub const DEFAULT_PROCESSES: u64 = 512;

/// The file descriptor the warden reads freeze/thaw commands from.
const CTL_FD: i32 = 3;
/// The file descriptor the warden reports the bot's end on.
const REPORT_FD: i32 = 4;
/// Where the warden holds the bot's end of an offered pipe that it reads
/// (the bot gets it at `mailbox_protocol::pipe::BOT_READS_FD`)...
const PIPE_READS_FD: i32 = 5;
/// ... and the end it writes (at `BOT_WRITES_FD`).
const PIPE_WRITES_FD: i32 = 6;

/// Per-player sandbox settings from tournament.toml.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `sandbox = false` turns it off (with a warning).
    pub enabled: bool,
    /// `ponder = true`: the bot may think on its opponent's time.
    pub ponder: bool,
    pub memory_mb: u64,
    pub disk_mb: u64,
    pub processes: u64,
    /// `user = "name"`: who the bot runs as when the referee runs as root
    /// (default: an id of its own from `ids`).
    pub user: Option<String>,
    /// `[sandbox] ids`: the user ids set aside for bots (root referee).
    pub ids: IdRange,
    /// `read = [...]`: more files and folders the bot may read.
    pub read: Vec<PathBuf>,
    /// The run's own folders (the board, the results, the configuration
    /// file): never readable, even when a bot's program sits beside them.
    pub keep_out: Vec<PathBuf>,
    /// Only the layers from before each bot was alone (a PID namespace,
    /// Landlock on writes, `nobody` as root): for the bench, which sets
    /// [`PREVIOUS_LAYERS_ENV`] to show what being alone costs. Never read
    /// from tournament.toml.
    pub previous_layers: bool,
}

/// The environment variable that gives every player
/// [`Settings::previous_layers`] (the bench's comparison, nothing else).
pub const PREVIOUS_LAYERS_ENV: &str = "TOURNAMENT_BENCH_PREVIOUS_SANDBOX";

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            ponder: false,
            memory_mb: DEFAULT_MEMORY_MB,
            disk_mb: DEFAULT_DISK_MB,
            processes: DEFAULT_PROCESSES,
            user: None,
            ids: ids::DEFAULT_IDS,
            read: Vec::new(),
            keep_out: Vec::new(),
            previous_layers: std::env::var_os(PREVIOUS_LAYERS_ENV).is_some(),
        }
    }
}

/// What the warden applies to one bot instance (sent to it as JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Policy {
    /// The folders the bot may write in: its mailbox and its scratch folder.
    pub writable: Vec<PathBuf>,
    /// Beyond the system's folders, what the bot may read (and run).
    pub readable: Vec<PathBuf>,
    pub memory_mb: u64,
    pub disk_mb: u64,
    /// `RLIMIT_NPROC`: counted per user id (its own, when the referee
    /// runs as root), or per user namespace (its own, when not).
    pub processes: Option<u64>,
    /// Run the bot as this (uid, gid).
    pub user: Option<(u32, u32)>,
    /// The namespaces to make (with a user namespace when not root).
    pub namespaces: Namespaces,
    /// The `cgroup.procs` files of the bot's control groups, which the
    /// warden writes itself into before anything else.
    #[serde(default)]
    pub cgroups: Vec<PathBuf>,
    /// Apply Landlock.
    pub landlock: bool,
    /// Keep the bot's processes in its process group (seccomp).
    #[serde(default)]
    pub contain_group: bool,
    /// Hand the bot the pipe it is offered (the warden holds it at
    /// [`PIPE_READS_FD`] and [`PIPE_WRITES_FD`]).
    #[serde(default)]
    pub pipe: bool,
}

/// The namespaces a bot gets, each where this machine allows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespaces {
    /// Its own PID namespace, the warden its first process.
    pub pid: bool,
    /// Its own System V / POSIX IPC namespace.
    pub ipc: bool,
    /// Its own network namespace (a loopback that is down, nothing else).
    pub net: bool,
    /// Its own mount namespace, with a `/proc` of its PID namespace.
    pub mount: bool,
}

/// How the bot ended, as the warden saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// `Some(code)` if it exited.
    pub code: Option<i32>,
    /// `Some(sig)` if a signal ended it.
    pub signal: Option<i32>,
    /// Its peak resident memory, KiB.
    pub max_rss_kib: u64,
    /// The warden could not start it (why).
    pub start_error: Option<String>,
    /// The machine refused the warden a process for it (why): not the
    /// bot's doing.
    pub exhausted: Option<String>,
}

impl Report {
    /// Parses the warden's report lines (`started`, `exit N`, `signal N`,
    /// `rss K`, `error TEXT`, `exhausted TEXT`); unknown lines are ignored.
    pub fn parse(text: &str) -> Report {
        let mut r = Report::default();
        for line in text.lines() {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            match word {
                "exit" => r.code = rest.trim().parse().ok(),
                "signal" => r.signal = rest.trim().parse().ok(),
                "rss" => r.max_rss_kib = rest.trim().parse().unwrap_or(0),
                "error" => r.start_error = Some(rest.to_string()),
                "exhausted" => {
                    r.start_error = Some(rest.to_string());
                    r.exhausted = Some(rest.to_string());
                }
                _ => {}
            }
        }
        r
    }
}

/// What this machine and this referee can enforce, found once per run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protections {
    /// The kernel's Landlock ABI, if it has Landlock.
    pub landlock_abi: Option<i32>,
    /// Whether a PID namespace could be made (why not, otherwise).
    pub pid_namespace: Result<(), String>,
    /// Whether an IPC namespace could be made.
    pub ipc_namespace: Result<(), String>,
    /// Whether a network namespace could be made.
    pub net_namespace: Result<(), String>,
    /// Whether a mount namespace with a `/proc` of its own could be made.
    pub mount_namespace: Result<(), String>,
    /// Whether a seccomp filter can keep a bot in its process group (and
    /// away from new namespaces, Unix sockets and keyrings).
    pub seccomp: Result<(), String>,
    /// The referee runs as root (bots then get a user id of their own).
    pub root: bool,
    /// The control groups this referee may put bots in.
    pub cgroups: Result<cgroup::Hierarchy, String>,
    /// The machine refused the probe a process for as long as the referee
    /// waits (why): no bot can be started safely now.
    pub exhausted: Option<String>,
}

/// How complete the sandbox is, for the crosstable and report footers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    None,
    Partial,
    Full,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Partial => "partial",
            Level::Full => "full",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The lowest Landlock ABI with everything we ask for (signal and
/// abstract-socket scoping).
const FULL_LANDLOCK_ABI: i32 = 6;

impl Protections {
    /// Looks at the kernel and at who we are. Starts one short warden
    /// process to see whether namespaces can be made here.
    pub fn probe() -> Protections {
        // A machine short of processes would make every layer look
        // missing: the probe waits for it, as a bot's start does.
        let give_up = std::time::Instant::now() + MACHINE_PATIENCE;
        let mut pause = std::time::Duration::from_millis(20);
        let probe = loop {
            let probe = probe_warden();
            if probe.exhausted().is_none() || std::time::Instant::now() >= give_up {
                break probe;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_secs(1));
        };
        cgroup::sweep_dead_runs();
        Protections {
            landlock_abi: landlock_abi(),
            pid_namespace: probe.answer("pidns"),
            ipc_namespace: probe.answer("ipcns"),
            net_namespace: probe.answer("netns"),
            mount_namespace: probe.answer("mntns"),
            seccomp: probe.answer("seccomp"),
            root: is_root(),
            cgroups: cgroup::Hierarchy::for_this_run(),
            exhausted: probe.exhausted(),
        }
    }

    /// The namespaces a bot gets here.
    pub fn namespaces(&self) -> Namespaces {
        let pid = self.pid_namespace.is_ok();
        Namespaces {
            pid,
            ipc: self.ipc_namespace.is_ok(),
            net: self.net_namespace.is_ok(),
            // A /proc of its own needs its own PID namespace.
            mount: pid && self.mount_namespace.is_ok(),
        }
    }

    /// What is missing, one line each, in words for the user.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.landlock_abi {
            None => out.push(
                "Landlock: the kernel has none (Linux ≥ 5.13 with landlock in lsm=): bots may write anywhere their user may".into(),
            ),
            Some(abi) if abi < FULL_LANDLOCK_ABI => out.push(format!(
                "Landlock ABI {abi} < {FULL_LANDLOCK_ABI}: bots are not kept from signalling or connecting to processes of the same user outside their sandbox (a PID namespace still hides them){}",
                if abi < 4 { "; TCP is not restricted" } else { "" }
            )),
            Some(_) => {}
        }
        if let Err(why) = &self.seccomp {
            out.push(format!(
                "seccomp: {why}: a bot can leave its process group, and is then stopped between moves only through its PID namespace"
            ));
        }
        if let Err(why) = &self.pid_namespace {
            out.push(format!(
                "PID namespace: {why}: a bot's `setsid` children are ended by the referee, not by the kernel, and a bot is stopped between moves by its process group only"
            ));
        }
        if let Err(why) = &self.ipc_namespace {
            out.push(format!(
                "IPC namespace: {why}: bots share System V and POSIX IPC objects (a channel between them, and memory left behind)"
            ));
        }
        if let Err(why) = &self.net_namespace {
            out.push(format!(
                "network namespace: {why}: bots can talk to each other over UDP"
            ));
        }
        if self.pid_namespace.is_ok() {
            if let Err(why) = &self.mount_namespace {
                out.push(format!(
                    "mount namespace: {why}: /proc shows a bot every process of the machine"
                ));
            }
        }
        match &self.cgroups {
            Err(why) => out.push(format!(
                "cgroups: {why}: {}",
                if self.root {
                    "a bot's processes are limited on its own user id; its shared memory, memfds and tmpfs files are not counted against memory-mb"
                } else {
                    "a bot's processes are limited in its own user namespace, within the referee user's limit; its shared memory, memfds and tmpfs files are not counted against memory-mb"
                }
            )),
            Ok(h) => out.extend(h.missing()),
        }
        if !self.root && self.pid_namespace.is_err() {
            out.push(
                "user ids: the referee is not root and cannot make user namespaces: bots share its user and its process limit".into(),
            );
        }
        out
    }

    /// What bots are put in, for the log: the cgroup version used.
    pub fn describe_groups(&self) -> String {
        match &self.cgroups {
            Ok(h) => h.describe(),
            Err(why) => format!("no control groups ({why})"),
        }
    }

    /// Full when nothing is missing.
    pub fn level(&self) -> Level {
        if self.missing().is_empty() {
            Level::Full
        } else {
            Level::Partial
        }
    }
}

/// The running kernel's Landlock ABI version, if any.
pub fn landlock_abi() -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns
        // the ABI version (or an error).
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        (v > 0).then_some(v as i32)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

pub fn is_root() -> bool {
    #[cfg(unix)]
    // SAFETY: geteuid cannot fail.
    unsafe {
        libc::geteuid() == 0
    }
    #[cfg(not(unix))]
    false
}

/// What a warden's `--probe` said: one line per feature, `NAME ok` or
/// `NAME why not`.
struct ProbeAnswer(Result<String, String>);

impl ProbeAnswer {
    /// Why the machine refused the probe a process, if it did (the
    /// answers then say nothing of what the kernel allows).
    fn exhausted(&self) -> Option<String> {
        let text = match &self.0 {
            Ok(t) => t,
            Err(e) => e,
        };
        text.lines()
            .find(|l| {
                [
                    "os error 11",
                    "os error 12",
                    "Resource temporarily unavailable",
                ]
                .iter()
                .any(|sign| l.contains(sign))
            })
            .map(str::to_string)
    }

    fn answer(&self, what: &str) -> Result<(), String> {
        let text = self.0.as_ref().map_err(Clone::clone)?;
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(what).and_then(|r| r.strip_prefix(' ')))
            .map(str::trim)
            .ok_or_else(|| "the probe did not say".to_string())?;
        if line == "ok" {
            Ok(())
        } else {
            Err(line.to_string())
        }
    }
}

/// Asks a warden (`--probe`) what this machine lets it make: namespaces
/// (PID, IPC, network, mount with its own /proc) and a seccomp filter.
fn probe_warden() -> ProbeAnswer {
    if !cfg!(target_os = "linux") {
        return ProbeAnswer(Err("not Linux".into()));
    }
    let out = crate::program::to_start()
        .map_err(|e| format!("cannot find own binary: {e}"))
        .and_then(|exe| {
            Command::new(exe)
                .args([WARDEN_ARG, "--probe"])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot start the probe: {e}"))
        });
    ProbeAnswer(out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()))
}

/// Finds a user's (uid, gid) by name.
pub fn lookup_user(name: &str) -> Result<(u32, u32), String> {
    #[cfg(unix)]
    {
        let cname = std::ffi::CString::new(name).map_err(|_| format!("bad user name {name:?}"))?;
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 16384];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: getpwnam_r with valid buffers; `result` is null or `&pwd`.
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        if rc != 0 || result.is_null() {
            return Err(format!("there is no user {name:?} on this machine"));
        }
        Ok((pwd.pw_uid, pwd.pw_gid))
    }
    #[cfg(not(unix))]
    Err(format!("cannot run bots as {name:?}: not Unix"))
}

/// A bot's command wrapped in its warden, ready to spawn.
pub struct Wrapped {
    pub command: Command,
    /// The referee's freeze handle.
    pub warden: Warden,
    /// Where the warden reports how the bot ended (read after it exited).
    pub report: File,
    /// The warden's ends of the two pipes: drop them once it is spawned.
    pub child_ends: (File, File),
}

/// A command that starts `program args` under a warden applying `policy`.
/// The caller sets the working directory and environment, which the bot
/// inherits.
///
/// With `bot_pipe` (the bot's ends of the pipe it is offered: the one it
/// reads, the one it writes; `policy.pipe` set), the warden gets them at
/// [`PIPE_READS_FD`] and [`PIPE_WRITES_FD`] and hands them to the bot at
/// the descriptors the offer names (PROTOCOL.md, "The pipe").
pub fn wrap(
    program: &str,
    args: &[String],
    policy: &Policy,
    ponder: bool,
    bot_pipe: Option<(&File, &File)>,
) -> io::Result<Wrapped> {
    let exe = crate::program::to_start()?;
    let json = serde_json::to_string(policy).map_err(io::Error::other)?;
    let (ctl_r, ctl_w) = mailbox_protocol::pipe::pipe()?;
    let (rep_r, rep_w) = mailbox_protocol::pipe::pipe()?;
    mailbox_protocol::pipe::set_nonblocking(&rep_r)?;
    let mut command = Command::new(exe);
    command
        .arg(WARDEN_ARG)
        .arg(json)
        .arg("--")
        .arg(program)
        .args(args);
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut fds = vec![(ctl_r.as_raw_fd(), CTL_FD), (rep_w.as_raw_fd(), REPORT_FD)];
        if let Some((reads, writes)) = bot_pipe {
            fds.push((reads.as_raw_fd(), PIPE_READS_FD));
            fds.push((writes.as_raw_fd(), PIPE_WRITES_FD));
        }
        fds::place_fds(&mut command, fds);
    }
    Ok(Wrapped {
        command,
        warden: Warden::new(ctl_w, ponder, policy.contain_group),
        report: rep_r,
        child_ends: (ctl_r, rep_w),
    })
}

/// How a warden's start of its bot went, from its first report line.
#[derive(Debug, PartialEq, Eq)]
pub enum Started {
    /// The bot's program runs (or the warden said nothing in time: what
    /// happened is seen when it ends).
    Yes,
    /// The bot's program could not be started (the warden's words, e.g.
    /// not executable): the bot's own failure.
    Failed(String),
    /// The machine refused the warden a process for the bot (the words):
    /// try again later; not the bot's doing.
    Exhausted(String),
}

/// Waits up to `deadline` for the warden's first report line (non-blocking
/// `pipe`): [`Started::Exhausted`] when the machine refused it a process,
/// [`Started::Failed`] when the bot's program could not start, else
/// [`Started::Yes`]. Reads that line only (the rest is read when the
/// warden ends).
pub fn await_start(pipe: &File, deadline: std::time::Instant) -> Started {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut reader = pipe;
    while std::time::Instant::now() < deadline && line.len() < 4096 {
        match reader.read(&mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                #[cfg(unix)]
                {
                    use std::os::fd::AsRawFd;
                    let mut fds = [libc::pollfd {
                        fd: pipe.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    }];
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    // SAFETY: poll on one valid descriptor.
                    unsafe { libc::poll(fds.as_mut_ptr(), 1, left.as_millis().min(1000) as i32) };
                }
                #[cfg(not(unix))]
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&line);
    if let Some(why) = text.strip_prefix("exhausted ") {
        Started::Exhausted(why.to_string())
    } else if let Some(why) = text.strip_prefix("error ") {
        Started::Failed(why.to_string())
    } else {
        Started::Yes
    }
}

/// Reads what a warden reported (non-blocking: call after it exited).
pub fn read_report(mut pipe: &File) -> Report {
    let mut text = String::new();
    let mut buf = [0u8; 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        if text.len() > 64 * 1024 {
            break;
        }
    }
    Report::parse(&text)
}

/// Hands `path` to the bot's user (not following links), so it can write
/// there; a drive that cannot change owners (a network share) is left
/// as it is.
pub fn give_to(path: &Path, user: (u32, u32)) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: lchown on a NUL-terminated path.
        let rc = unsafe { libc::lchown(c.as_ptr(), user.0, user.1) };
        if rc != 0 {
            tracing::debug!(path = %path.display(), "cannot hand to the bot's user: {}", io::Error::last_os_error());
        }
    }
}

/// Bytes in regular files below `dir` (links not followed), stopping once
/// past `cap`.
pub fn bytes_below(dir: &Path, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                if let Ok(m) = e.metadata() {
                    total += m.len();
                }
            }
            if total > cap || seen > 100_000 {
                return total.max(cap + 1);
            }
        }
    }
    total
}

/// A bot's private scratch folder (its `TMPDIR` and `HOME`), removed with
/// the value.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Makes a fresh folder in the system's temp folder that only the
    /// bot's user can enter.
    pub fn create(id: &str, user: Option<(u32, u32)>) -> io::Result<Scratch> {
        let base = std::env::temp_dir();
        for _ in 0..16 {
            let path = base.join(format!("tournament-{id}-{:08x}", rand::random::<u32>()));
            let mut b = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            match b.create(&path) {
                Ok(()) => {
                    if let Some(u) = user {
                        hand_folder(&path, u);
                    }
                    return Ok(Scratch { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("cannot make a scratch folder"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // remove_dir_all does not follow symlinks the bot left there.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Lets `user` write in the folder `path` through its group (mode 0770),
/// the referee keeping it as owner: the bot cannot open its folder to
/// other bots (chmod needs the owner). A drive that cannot change owners
/// (a network share) is left as it is.
pub fn hand_folder(path: &Path, user: (u32, u32)) {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return;
        };
        // SAFETY: lchown and chmod on a NUL-terminated path; -1 keeps the owner.
        let rc = unsafe {
            let rc = libc::lchown(c.as_ptr(), u32::MAX, user.1);
            if rc == 0 {
                libc::chmod(c.as_ptr(), 0o770)
            } else {
                rc
            }
        };
        if rc != 0 {
            tracing::debug!(path = %path.display(), "cannot hand to the bot's group: {}", io::Error::last_os_error());
        }
    }
}

/// What this machine can enforce, looked at once per process.
pub fn protections() -> &'static Protections {
    PROTECTIONS.get_or_init(|| {
        let found = Protections::probe();
        // Before any bot runs that could hold the machine's threads.
        freeze::start_stopper();
        found
    })
}

static PROTECTIONS: std::sync::OnceLock<Protections> = std::sync::OnceLock::new();

/// The referee user's own process limit and how many processes and
/// threads it runs now, when its bots count against that limit: when the
/// referee is not root (bots in user namespaces of its user) and no
/// control group counts them on their own. `None` when nothing is shared
/// or the limit is infinite.
pub fn shared_process_budget() -> Option<(u64, u64)> {
    let protections = protections();
    if protections.root {
        return None;
    }
    if protections
        .cgroups
        .as_ref()
        .is_ok_and(|h| h.counts_processes())
    {
        return None;
    }
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit with a valid pointer.
        if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) } != 0
            || lim.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        Some((lim.rlim_cur, tasks_of(uid)))
    }
    #[cfg(not(unix))]
    None
}

/// How many processes and threads `uid` runs (what `RLIMIT_NPROC`
/// counts), from `/proc`.
#[cfg(unix)]
fn tasks_of(uid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if e.metadata().is_ok_and(|m| m.uid() == uid) {
            n += std::fs::read_dir(e.path().join("task")).map_or(1, |t| t.count() as u64);
        }
    }
    n
}

/// Removes this run's control groups (call when the command ends; a
/// referee killed with -9 leaves them to the next one, which removes
/// them).
pub fn finish() {
    if let Some(Ok(h)) = PROTECTIONS.get().map(|p| &p.cgroups) {
        h.remove();
    }
}

/// Who a bot runs as under a root referee, for checks made before it
/// starts: `user` if set (`None` if that is root), else the first id of
/// `ids` (every id of the range is "other" to the machine's files alike).
pub fn user_under_root(player: &str, settings: &Settings) -> Result<Option<(u32, u32)>, String> {
    let Some(name) = settings.user.as_deref() else {
        return Ok(Some((settings.ids.first, settings.ids.first)));
    };
    let user = lookup_user(name).map_err(|e| format!("player `{player}`: {e} (user = ...)"))?;
    Ok((user.0 != 0).then_some(user))
}

/// What one sandboxed bot process holds while it runs: its scratch
/// folder, its leased user id, its control group. Dropped once the
/// process is gone (its group is emptied and removed, its id freed).
#[derive(Debug)]
pub struct Confinement {
    pub scratch: Scratch,
    /// The (uid, gid) it runs as, when not the referee's.
    pub user: Option<(u32, u32)>,
    group: Option<cgroup::BotGroup>,
    _lease: Option<IdLease>,
}

impl Confinement {
    /// Whether the kernel ended a process of the bot for going over its
    /// group's memory limit.
    pub fn oom_killed(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.oom_killed())
    }
}

/// Readies one bot process's sandbox: its user id (a leased one of
/// `ids` when the referee runs as root, unless `user` names one), its
/// scratch folder, its mailbox folder handed to it (`mailbox` as the
/// referee sees it, `seen` as the bot does; the caller hands it the files
/// it must write there), its control group, and the policy
/// the warden applies. `argv` is its resolved command. The words of an
/// error say what failed.
pub fn confine(
    id: &str,
    settings: &Settings,
    mailbox: &Path,
    seen: &Path,
    argv: &[String],
) -> Result<(Policy, Confinement), String> {
    let protections = protections();
    if settings.previous_layers {
        return confine_as_before(id, settings, mailbox, seen);
    }
    let (user, lease) = if !protections.root {
        (None, None)
    } else if settings.user.is_some() {
        (user_under_root(id, settings)?, None)
    } else {
        let lease = IdLease::take(settings.ids)
            .map_err(|e| format!("cannot give {id} a user id of its own: {e}"))?;
        (Some(lease.user()), Some(lease))
    };
    let scratch = Scratch::create(id, user)
        .map_err(|e| format!("cannot make a scratch folder for {id}: {e}"))?;
    if let Some(u) = user {
        hand_folder(mailbox, u);
    }
    let group = match &protections.cgroups {
        Ok(h) => match h.group(id, settings.processes, settings.memory_mb) {
            Ok(g) => Some(g),
            Err(e) => {
                tracing::warn!("cannot make the control group of {id}: {e}");
                None
            }
        },
        Err(_) => None,
    };
    let policy = Policy {
        writable: vec![seen.to_path_buf(), scratch.path().to_path_buf()],
        readable: readable(argv, settings),
        memory_mb: settings.memory_mb,
        disk_mb: settings.disk_mb,
        processes: Some(settings.processes),
        user,
        namespaces: protections.namespaces(),
        cgroups: group.as_ref().map(|g| g.procs()).unwrap_or_default(),
        landlock: protections.landlock_abi.is_some(),
        contain_group: protections.seccomp.is_ok(),
        pipe: false,
    };
    Ok((
        policy,
        Confinement {
            scratch,
            user,
            group,
            _lease: lease,
        },
    ))
}

/// [`confine`] with the layers from before each bot was alone: a PID
/// namespace, Landlock on writes only, `nobody` as root, no control group.
fn confine_as_before(
    id: &str,
    settings: &Settings,
    mailbox: &Path,
    seen: &Path,
) -> Result<(Policy, Confinement), String> {
    let protections = protections();
    let user = if protections.root {
        lookup_user("nobody").ok()
    } else {
        None
    };
    let scratch = Scratch::create(id, user)
        .map_err(|e| format!("cannot make a scratch folder for {id}: {e}"))?;
    if let Some(u) = user {
        hand_folder(mailbox, u);
    }
    let policy = Policy {
        writable: vec![seen.to_path_buf(), scratch.path().to_path_buf()],
        readable: vec![PathBuf::from("/")],
        memory_mb: settings.memory_mb,
        disk_mb: settings.disk_mb,
        processes: user.map(|_| settings.processes),
        user,
        namespaces: Namespaces {
            pid: protections.pid_namespace.is_ok(),
            ..Namespaces::default()
        },
        cgroups: Vec::new(),
        landlock: protections.landlock_abi.is_some(),
        contain_group: protections.seccomp.is_ok(),
        pipe: false,
    };
    Ok((
        policy,
        Confinement {
            scratch,
            user,
            group: None,
            _lease: None,
        },
    ))
}

/// The system's folders every bot may read (and run programs from), where
/// they exist: programs, libraries, interpreters and their packages, the
/// system's configuration.
pub const SYSTEM_FOLDERS: [&str; 12] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/var/lib/gems",
    "/nix/store",
    "/snap",
];

/// What a bot may read beyond [`SYSTEM_FOLDERS`] and its own mailbox and
/// scratch folder: the folder of each file its command names (its
/// program, its script: the libraries beside them load), or only the file
/// where that folder holds one of the run's own folders (a bot beside
/// tournament.toml); each folder its command names that holds none of
/// them; the installation its program comes from, when that is not a
/// system folder (the folder above its `bin/`, e.g. a pyenv or nvm
/// under a home); and what `read` adds.
pub fn readable(argv: &[String], settings: &Settings) -> Vec<PathBuf> {
    let keep_out: Vec<PathBuf> = settings.keep_out.iter().map(|p| absolute(p)).collect();
    let holds_run = |dir: &Path| keep_out.iter().any(|k| k.starts_with(dir));
    let system = |p: &Path| SYSTEM_FOLDERS.iter().any(|s| p.starts_with(s));
    let mut out: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !system(&p) && !out.contains(&p) {
            out.push(p);
        }
    };
    for (i, arg) in argv.iter().enumerate() {
        let named = Path::new(arg);
        if !named.is_absolute() {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(named) else {
            continue;
        };
        if real.is_dir() {
            if !holds_run(&real) {
                add(real);
            }
            continue;
        }
        let mut folders = vec![real.parent().map(Path::to_path_buf)];
        if i == 0 {
            // The program as named (a shim) and as found (its target).
            folders.push(installation_of(named));
            folders.push(installation_of(&real));
        }
        let mut file_only = false;
        for folder in folders.into_iter().flatten() {
            if holds_run(&folder) {
                file_only = true;
            } else {
                add(folder);
            }
        }
        if file_only {
            add(real);
        }
    }
    for p in &settings.read {
        add(absolute(p));
    }
    out
}

/// The installation a program outside the system's folders belongs to:
/// the folder above its `bin/` (or pyenv's `shims/`).
fn installation_of(program: &Path) -> Option<PathBuf> {
    let folder = program.parent()?;
    let name = folder.file_name()?.to_str()?;
    matches!(name, "bin" | "shims").then(|| folder.parent().map(Path::to_path_buf))?
}

/// `p` with links resolved where it exists, else as it is.
fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// What bots print when an allocation fails (Python, Ruby, node, C++, C).
const OUT_OF_MEMORY: [&str; 7] = [
    "memoryerror",
    "nomemoryerror",
    "out of memory",
    "cannot allocate memory",
    "failed to allocate memory",
    "allocation failed",
    "bad_alloc",
];

/// What to do about a bot program that may not be executed (no execute
/// bit, or none for the user the bot runs as): one wording wherever
/// starting it fails that way (the warden's exec, and `player` starting
/// an unsandboxed bot or resolving its command).
pub fn not_executable_hint(program: &str) -> String {
    let interpreter = match Path::new(program).extension().and_then(|e| e.to_str()) {
        Some("rb") => "ruby",
        Some("js") => "node",
        Some("yab") => "yabasic",
        Some("bas") => "bwbasic",
        Some("sh") => "bash",
        _ => "python3",
    };
    format!(
        "chmod +x {program} (for every user: as root, bots run as `nobody`), or name its \
         interpreter in command, e.g. [\"{interpreter}\", \"{program}\"]"
    )
}

/// Which limit a bot went over, judged from what it wrote (`written`:
/// its folders) and, once it ended, from how it ended and its last
/// stderr lines.
pub fn breach(
    settings: &Settings,
    exit: Option<&(crate::pid::ExitInfo, Report)>,
    stderr_tail: &[String],
    written: &[&Path],
    oom_killed: bool,
) -> Option<(Limit, String)> {
    let cap = settings.disk_mb.saturating_mul(1 << 20);
    let mut total = 0u64;
    for dir in written {
        total = total.saturating_add(bytes_below(dir, cap));
    }
    if total > cap {
        return Some((
            Limit::Disk,
            format!(
                "wrote {} MiB into its mailbox and scratch folder, over its limit of {} MiB (disk-mb)",
                total >> 20,
                settings.disk_mb
            ),
        ));
    }
    let (info, report) = exit?;
    if oom_killed {
        return Some((
            Limit::Memory,
            format!(
                "ran out of memory: all its processes together (shared memory and memfds included) went over its limit of {} MiB (memory-mb), and the kernel ended one; it ended ({info})",
                settings.memory_mb
            ),
        ));
    }
    let tail = stderr_tail.join("\n").to_lowercase();
    #[cfg(unix)]
    let too_large = matches!(info, crate::pid::ExitInfo::Signal(s) if *s == libc::SIGXFSZ);
    #[cfg(not(unix))]
    let too_large = false;
    if too_large || tail.contains("file too large") {
        return Some((
            Limit::Disk,
            format!(
                "a file it wrote grew past its limit of {} MiB (disk-mb); it ended ({info})",
                settings.disk_mb
            ),
        ));
    }
    let peak_mib = report.max_rss_kib >> 10;
    if OUT_OF_MEMORY.iter().any(|p| tail.contains(p)) || peak_mib * 4 >= settings.memory_mb * 3 {
        return Some((
            Limit::Memory,
            format!(
                "ran out of memory: its limit is {} MiB per process (memory-mb), its peak was {peak_mib} MiB resident; it ended ({info})",
                settings.memory_mb
            ),
        ));
    }
    None
}

/// Whether `user` can reach `path` through the permission bits of every
/// folder above it (and read it, when `read`): the first place it cannot
/// pass, in words, if any. A link is followed: the folders above the file
/// it leads to count too (a link on PATH into pyenv's folder under /root).
/// ACLs are not looked at.
pub fn unreachable_for(path: &Path, user: (u32, u32), read: bool) -> Option<String> {
    first_block(path, user, read).or_else(|| {
        let real = std::fs::canonicalize(path).ok()?;
        (real != path)
            .then(|| first_block(&real, user, read))
            .flatten()
    })
}

/// Whether `user` may create files in the folder `dir` by its permission
/// bits (write and search), the folders above it aside.
pub fn writable_for(dir: &Path, user: (u32, u32)) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = std::fs::metadata(dir) else {
            return false;
        };
        let mode = m.mode();
        let bits = if m.uid() == user.0 {
            mode >> 6
        } else if m.gid() == user.1 {
            mode >> 3
        } else {
            mode
        };
        bits & 0o3 == 0o3
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, user);
        true
    }
}

/// [`unreachable_for`] along `path` as it is spelled.
fn first_block(path: &Path, user: (u32, u32), read: bool) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let allowed = |m: &std::fs::Metadata, bit: u32| {
            let mode = m.mode();
            if m.uid() == user.0 {
                mode & (bit << 6) != 0
            } else if m.gid() == user.1 {
                mode & (bit << 3) != 0
            } else {
                mode & bit != 0
            }
        };
        let mut here = PathBuf::new();
        let components: Vec<_> = path.components().collect();
        for (i, c) in components.iter().enumerate() {
            here.push(c);
            let last = i + 1 == components.len();
            let Ok(m) = std::fs::metadata(&here) else {
                return None; // what does not exist is reported elsewhere
            };
            if m.is_dir() && !allowed(&m, 0o1) {
                return Some(format!(
                    "{} (mode {:o}, owner uid {})",
                    here.display(),
                    m.mode() & 0o7777,
                    m.uid()
                ));
            }
            if last && read && !allowed(&m, 0o4) {
                return Some(format!(
                    "{} (mode {:o}, owner uid {})",
                    here.display(),
                    m.mode() & 0o7777,
                    m.uid()
                ));
            }
        }
        None
    }
    #[cfg(not(unix))]
    {
        let _ = (path, user, read);
        None
    }
}

/// Checks, before any game, that a bot that will run as its own user can
/// reach its program, the files its command names and its mailbox.
pub fn check_reach(
    player: &str,
    settings: &Settings,
    argv: &[String],
    base_dir: &Path,
    board: &Path,
) -> Result<(), String> {
    if !protections().root {
        return Ok(());
    }
    let Some(user) = user_under_root(player, settings)? else {
        return Ok(());
    };
    let name = match settings.user.as_deref() {
        Some(name) => format!("user {name} (uid {})", user.0),
        None => format!(
            "a user id of its own (one of {}, `[sandbox] ids`)",
            settings.ids
        ),
    };
    let mut paths: Vec<(PathBuf, bool)> = vec![(board.to_path_buf(), false)];
    for (i, a) in argv.iter().enumerate() {
        let p = base_dir.join(a);
        if (i == 0 || a.contains('/') || p.exists()) && p.exists() {
            paths.push((std::fs::canonicalize(&p).unwrap_or(p), true));
        }
    }
    for (p, read) in paths {
        if let Some(blocked) = unreachable_for(&p, user, read) {
            return Err(format!(
                "player `{player}` runs as {name} because the referee runs as root, and that user cannot get to {}: blocked at {blocked}. Open it to every user (e.g. chmod o+rx on the folders), put the interpreter or bot elsewhere, or set `user = \"...\"` for this player",
                p.display()
            ));
        }
    }
    Ok(())
}

/// The file in the results folder that says how the bots were sandboxed.
pub const STATEMENT_FILE: &str = "sandbox.json";

/// How the bots of a run were sandboxed, for the crosstable and report
/// footers: the level and why it is not full.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    pub level: Level,
    pub why: Vec<String>,
}

impl Statement {
    /// The weaker of two statements (a resumed run keeps the worst).
    pub fn weaker(self, other: Statement) -> Statement {
        match self.level.cmp(&other.level) {
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Equal => {
                let mut why = self.why;
                for w in other.why {
                    if !why.contains(&w) {
                        why.push(w);
                    }
                }
                Statement {
                    level: self.level,
                    why,
                }
            }
        }
    }

    /// One line: `sandbox: partial (why; why)`.
    pub fn line(&self) -> String {
        if self.why.is_empty() {
            format!("sandbox: {}", self.level)
        } else {
            format!("sandbox: {} ({})", self.level, self.why.join("; "))
        }
    }

    /// Reads the statement a run left in `results`, if any.
    pub fn read(results: &Path) -> Option<Statement> {
        let text = std::fs::read_to_string(results.join(STATEMENT_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes it to `results`, merged with what an earlier run wrote.
    pub fn record(self, results: &Path) -> io::Result<Statement> {
        let merged = match Statement::read(results) {
            Some(old) => self.weaker(old),
            None => self,
        };
        let text = serde_json::to_string_pretty(&merged).map_err(io::Error::other)?;
        std::fs::write(results.join(STATEMENT_FILE), text + "\n")?;
        Ok(merged)
    }
}
