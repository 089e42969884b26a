//! Test tiers: what a test needs beyond cargo and python3, and what it does
//! when that is missing.
//!
//! Owns the list of extra tools (interpreters, Chromium, networkx, the shared-drive
//! kits on sshfs and on SMB, root) with the Debian package of each, and the one rule: on a
//! machine without one, the test that needs it is skipped with ONE line on
//! the terminal naming what is missing and the `apt-get install` that
//! provides it; with `TOURNAMENT_TEST_NO_SKIP=1` (set by `.ci/run`, which
//! installs everything) the test fails instead, so CI never hides a test.
//! Must not install anything or decide what a test asserts.

use std::io::Write;
use std::path::Path;

/// The variable that turns every skip into a failure.
pub const NO_SKIP: &str = "TOURNAMENT_TEST_NO_SKIP";

/// Something a test needs that a fresh machine with cargo and python3 lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A program found on PATH, and the Debian package that provides it.
    Program(&'static str, &'static str),
    /// A file at a fixed path (e.g. `/usr/sbin/sshd`), and its package.
    File(&'static str, &'static str),
    /// A module `python3` can import, and the Debian package of it.
    PythonModule(&'static str, &'static str),
    /// Running as root (mounts, `setpriv` to another user).
    Root,
}

pub const RUBY: Need = Need::Program("ruby", "ruby");
pub const YABASIC: Need = Need::Program("yabasic", "yabasic");
pub const BWBASIC: Need = Need::Program("bwbasic", "bwbasic");
pub const NODE: Need = Need::Program("node", "nodejs");
pub const CHROMIUM: Need = Need::Program("chromium", "chromium");
pub const FAKETIME: Need = Need::Program("faketime", "faketime");
pub const ROOT: Need = Need::Root;
/// networkx, the independent matching solver the Swiss pairings are
/// checked against.
pub const NETWORKX: Need = Need::PythonModule("networkx", "python3-networkx");
/// gtp-rhino, the GTP engine of issue 16 (Debian puts it in /usr/games).
pub const GTP_RHINO: Need = Need::File("/usr/games/gtp-rhino", "grhino");

/// The two-mount shared drive of the fault suite (`scripts/shared-drive`).
/// GNU parallel (not moreutils' `parallel`, which takes other options).
pub const GNU_PARALLEL: Need = Need::Program("parallel", "parallel");

pub const SHARED_DRIVE: &[Need] = &[
    Need::Root,
    Need::File("/dev/fuse", "fuse3"),
    Need::Program("sshfs", "sshfs"),
    Need::Program("fusermount3", "fuse3"),
    Need::File("/usr/sbin/sshd", "openssh-server"),
    Need::Program("ssh", "openssh-client"),
    Need::Program("flock", "util-linux"),
];

/// The same rig on SMB (`scripts/shared-drive --smb`): a private Samba on
/// 127.0.0.1 mounted twice with smbnetfs; `unshare` gives a referee "on
/// the other machine" a host name of its own.
pub const SMB_DRIVE: &[Need] = &[
    Need::Root,
    Need::File("/dev/fuse", "fuse3"),
    Need::Program("fusermount3", "fuse3"),
    Need::File("/usr/sbin/smbd", "samba"),
    Need::Program("smbpasswd", "samba-common-bin"),
    Need::Program("smbnetfs", "smbnetfs"),
    Need::Program("unshare", "util-linux"),
];

/// The interpreter a shipped bot's command line starts with, if it is one
/// a fresh machine may lack (`python3` is assumed).
pub fn interpreter_of(command: &str) -> Option<Need> {
    match command.split_whitespace().next()? {
        "ruby" => Some(RUBY),
        "yabasic" => Some(YABASIC),
        "bwbasic" => Some(BWBASIC),
        "node" => Some(NODE),
        _ => None,
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Need {
    /// Whether this machine has it.
    pub fn present(self) -> bool {
        match self {
            Need::Program(p, _) => on_path(p),
            Need::File(f, _) => Path::new(f).exists(),
            Need::PythonModule(m, _) => std::process::Command::new("python3")
                .args(["-c", &format!("import {m}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
            Need::Root => is_root(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Need::Program(p, _) | Need::File(p, _) | Need::PythonModule(p, _) => p,
            Need::Root => "root",
        }
    }

    fn package(self) -> Option<&'static str> {
        match self {
            Need::Program(_, pkg) | Need::File(_, pkg) | Need::PythonModule(_, pkg) => Some(pkg),
            Need::Root => None,
        }
    }
}

/// What of `needs` is missing here.
pub fn missing(needs: &[Need]) -> Vec<Need> {
    let mut out: Vec<Need> = needs.iter().copied().filter(|n| !n.present()).collect();
    out.dedup();
    out
}

/// The one line a skip prints: what is missing and how to get it.
fn line(what: &str, missing: &[Need]) -> String {
    let names: Vec<&str> = missing.iter().map(|n| n.name()).collect();
    let mut packages: Vec<&str> = missing.iter().filter_map(|n| n.package()).collect();
    packages.sort_unstable();
    packages.dedup();
    let mut how = String::new();
    if !packages.is_empty() {
        how = format!("apt-get install -y {}", packages.join(" "));
    }
    if missing.contains(&Need::Root) {
        if !how.is_empty() {
            how.push_str(", and ");
        }
        how.push_str("run the tests as root");
    }
    format!(
        "skipped {what} {}: missing {} ({how})",
        test_name(),
        names.join(", ")
    )
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

/// Says (past the test harness's capture, so it shows on the terminal)
/// that `what` of the test is skipped, or fails under [`NO_SKIP`].
fn skip(what: &str, missing: &[Need]) {
    let text = line(what, missing);
    if std::env::var_os(NO_SKIP).is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("{text}; {NO_SKIP} is set, so this is a failure, not a skip");
    }
    // Straight to the stream: `eprintln!` would be captured and shown
    // only if the test failed.
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// True if everything in `needs` is here. If not, the whole test is
/// skipped: prints its one line (or panics under [`NO_SKIP`]) and returns
/// false; the test then returns at once.
pub fn have(needs: &[Need]) -> bool {
    let gone = missing(needs);
    if gone.is_empty() {
        return true;
    }
    skip("test", &gone);
    false
}

/// For a test that checks several independent cases: the cases whose
/// needs are missing are left out with one line for all of them (or a
/// panic under [`NO_SKIP`]); returns the cases to run.
pub fn keep_runnable<T>(cases: Vec<T>, need_of: impl Fn(&T) -> Option<Need>) -> Vec<T> {
    let mut gone = Vec::new();
    let mut kept = Vec::new();
    for case in cases {
        match need_of(&case) {
            Some(n) if !n.present() => {
                if !gone.contains(&n) {
                    gone.push(n);
                }
            }
            _ => kept.push(case),
        }
    }
    if !gone.is_empty() {
        skip("part of", &gone);
    }
    kept
}
