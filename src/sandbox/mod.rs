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
//! - Landlock: writes only inside the bot's mailbox and scratch folder, no
//!   links or renames across folders, no TCP, and (ABI ≥ 6) no signals or
//!   abstract-socket connections outside its own domain;
//! - `no_new_privs`, resource limits (address space, file size, no core
//!   dumps, processes when the bot has a user of its own), and an
//!   unprivileged user when the referee runs as root;
//! - fair CPU: the whole namespace is stopped while it is not the bot's
//!   move (unless the player ponders), from [`STOP_AFTER`] its answer
//!   ([`freeze`]).

mod freeze;
pub mod warden;

pub use freeze::{Warden, STOP_AFTER};

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The hidden subcommand that runs the warden.
pub const WARDEN_ARG: &str = "__sandbox";

/// Default address-space limit per bot process, in MiB: node and ruby
/// start within 1 GiB (measured), so 2 GiB leaves a bot room to think.
pub const DEFAULT_MEMORY_MB: u64 = 2048;
/// Default limit on what a bot may write, in MiB: the largest file, and
/// the sum of its mailbox and scratch folder checked after every answer.
pub const DEFAULT_DISK_MB: u64 = 256;
/// Default limit on processes (and threads) of a bot's user, when bots
/// run as a user of their own.
pub const DEFAULT_PROCESSES: u64 = 512;
/// The user bots run as when the referee runs as root.
pub const DEFAULT_USER: &str = "nobody";

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
    /// `user = "name"`: who the bot runs as when the referee runs as root.
    pub user: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            ponder: false,
            memory_mb: DEFAULT_MEMORY_MB,
            disk_mb: DEFAULT_DISK_MB,
            processes: DEFAULT_PROCESSES,
            user: None,
        }
    }
}

/// What the warden applies to one bot instance (sent to it as JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Policy {
    /// The folders the bot may write in: its mailbox and its scratch folder.
    pub writable: Vec<PathBuf>,
    pub memory_mb: u64,
    pub disk_mb: u64,
    /// Set only when the bot runs as a user of its own (the count is per user).
    pub processes: Option<u64>,
    /// Run the bot as this (uid, gid).
    pub user: Option<(u32, u32)>,
    /// Try a PID namespace (with a user namespace when not root).
    pub pid_namespace: bool,
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
}

impl Report {
    /// Parses the warden's report lines (`exit N`, `signal N`, `rss K`,
    /// `error TEXT`); unknown lines are ignored.
    pub fn parse(text: &str) -> Report {
        let mut r = Report::default();
        for line in text.lines() {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            match word {
                "exit" => r.code = rest.trim().parse().ok(),
                "signal" => r.signal = rest.trim().parse().ok(),
                "rss" => r.max_rss_kib = rest.trim().parse().unwrap_or(0),
                "error" => r.start_error = Some(rest.to_string()),
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
    /// Whether a seccomp filter can keep a bot in its process group.
    pub seccomp: Result<(), String>,
    /// The referee runs as root (bots then get a user of their own).
    pub root: bool,
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
        let (pid_namespace, seccomp) = probe_warden();
        Protections {
            landlock_abi: landlock_abi(),
            pid_namespace,
            seccomp,
            root: is_root(),
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
        out
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

/// Asks a warden (`--probe`) whether this machine lets it make a PID
/// namespace and install a seccomp filter: each `Ok`, or why not.
fn probe_warden() -> (Result<(), String>, Result<(), String>) {
    if !cfg!(target_os = "linux") {
        return (Err("not Linux".into()), Err("not Linux".into()));
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
    let text = match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Err(e) => return (Err(e.clone()), Err(e)),
    };
    let answer = |what: &str| -> Result<(), String> {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(what).map(str::trim))
            .ok_or_else(|| "the probe did not say".to_string())?;
        if line == "ok" {
            Ok(())
        } else {
            Err(line.to_string())
        }
    };
    (answer("pidns "), answer("seccomp "))
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
        crate::player::process::place_fds(&mut command, fds);
    }
    Ok(Wrapped {
        command,
        warden: Warden::new(ctl_w, ponder, policy.contain_group),
        report: rep_r,
        child_ends: (ctl_r, rep_w),
    })
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

/// A bot's private scratch folder (its `TMPDIR`), removed with the value.
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
                        give_to(&path, u);
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

/// What this machine can enforce, looked at once per process.
pub fn protections() -> &'static Protections {
    static ONCE: std::sync::OnceLock<Protections> = std::sync::OnceLock::new();
    ONCE.get_or_init(Protections::probe)
}

/// The user a bot runs as: its own when the referee runs as root
/// (`user`, default [`DEFAULT_USER`]), else the referee's (`None`).
pub fn bot_user(
    player: &str,
    settings: &Settings,
    protections: &Protections,
) -> Result<Option<(u32, u32)>, String> {
    if !protections.root {
        return Ok(None);
    }
    user_under_root(player, settings)
}

/// The user a bot runs as under a root referee: `user`, default
/// [`DEFAULT_USER`]; `None` if that is root itself.
pub fn user_under_root(player: &str, settings: &Settings) -> Result<Option<(u32, u32)>, String> {
    let name = settings.user.as_deref().unwrap_or(DEFAULT_USER);
    let user = lookup_user(name).map_err(|e| format!("player `{player}`: {e} (user = ...)"))?;
    Ok((user.0 != 0).then_some(user))
}

/// A limit a bot can go over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Memory,
    Disk,
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
/// pass, in words, if any. ACLs are not looked at.
pub fn unreachable_for(path: &Path, user: (u32, u32), read: bool) -> Option<String> {
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
    let Some(user) = bot_user(player, settings, protections())? else {
        return Ok(());
    };
    let name = settings.user.as_deref().unwrap_or(DEFAULT_USER);
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
                "player `{player}` runs as user {name} (uid {}) because the referee runs as root, and {name} cannot get to {}: blocked at {blocked}. Open it to that user (e.g. chmod o+rx on the folders), put the interpreter or bot elsewhere, or set `user = \"...\"` for this player",
                user.0,
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
