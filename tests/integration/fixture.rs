//! A temp dir and a command builder for running `tournament` as a user would.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

/// A scratch folder that disappears with the test.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    /// Open to every user (0755): a referee running as root starts bots
    /// as `nobody`, which must reach their mailboxes in here.
    pub fn new() -> Scratch {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("tournament-test-")
            .permissions(std::fs::Permissions::from_mode(0o755))
            .tempdir()
            .expect("temp dir");
        Scratch { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    /// `tournament ARGS…` run in this folder.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = tournament();
        c.current_dir(self.path()).args(args);
        c
    }

    /// `tournament ARGS…` run to its end (at most `secs`), which must succeed.
    pub fn run_ok(&self, args: &[&str], secs: u64) -> Output {
        let out = self
            .cmd(args)
            .timeout(std::time::Duration::from_secs(secs))
            .output()
            .unwrap();
        assert_ok(&out);
        out
    }
}

/// Asserts that a command succeeded, showing its stderr if it did not.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The binary under test.
pub fn tournament() -> Command {
    let mut c = Command::cargo_bin("tournament").expect("binary");
    c.env_remove("TOURNAMENT_LOG").env("NO_COLOR", "1");
    c
}

/// The project's own folder (where the shipped bots and tournament.toml live).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The path of the `tournament` binary under test.
pub fn tournament_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("tournament")
}

/// The command line of the misbehaving test bot in `mode`.
pub fn fakebot(mode: &str) -> String {
    format!(
        "python3 {} {mode}",
        project_root().join("tests/fixtures/fakebot.py").display()
    )
}

/// Polls `cond` every 10 ms for up to `secs` seconds.
pub fn wait_until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    cond()
}

/// The fields of a `/proc/…/stat` file after the command name (state,
/// ppid, pgrp, …), or `None` when it cannot be read (the process is gone).
pub fn stat_fields(stat: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(stat).ok()?;
    // pid (comm) state ppid pgrp ...: the name may hold spaces and ')',
    // so split after the last ')'.
    let (_, rest) = text.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// Live (non-zombie) processes whose process group is `pgid`, from /proc.
pub fn live_in_group(pgid: u32) -> Vec<u32> {
    let mut out = vec![];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Some(f) = stat_fields(&entry.path().join("stat")) else {
            continue;
        };
        if f.len() > 3 && f[0] != "Z" && f[2].parse::<u32>().ok() == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

/// A game record from `tournament play --json` output.
pub fn record_of(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON record in stdout: {text}"));
    serde_json::from_str(line).unwrap()
}

/// Any user but the referee's (`nobody`), for reach checks.
pub const NOBODY: (u32, u32) = (65534, 65534);

/// The python3 interpreter itself (`sys.executable`, not a shim such as
/// pyenv's) of the first python3 on PATH that every user can run: as
/// root, bots and other users cannot enter a per-user interpreter's
/// folder (pyenv's under /root), and the referee passes over it the same way.
pub fn python3_every_user_can_run() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let pythons: Vec<PathBuf> = std::env::split_paths(&path)
        .map(|dir| dir.join("python3"))
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let out = std::process::Command::new(&p)
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()?;
            Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        })
        .filter(|exe| exe.is_file())
        .collect();
    let root = unsafe { libc::geteuid() } == 0;
    pythons
        .iter()
        .find(|exe| !root || tournament::sandbox::unreachable_for(exe, NOBODY, true).is_none())
        .unwrap_or_else(|| panic!("no python3 on PATH that every user can run: {pythons:?}"))
        .clone()
}

/// The whole records of a `games.jsonl` (none if it is missing). A last
/// line without its newline is a write in progress, which a reader polling
/// a running referee may see half done: it is left out.
pub fn whole_records(path: &Path) -> Vec<tournament::record::GameRecord> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
