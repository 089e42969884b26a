//! The fault suite of issue 8: what bots and a shared drive do to a running
//! tournament, with the referee on one mount ("machine A") of a real sshfs
//! share and the bots on the other ("machine B"), in both cache modes.
//!
//! Each cache mode runs three groups (games, bots, referee); each group is
//! one `#[test]` with its own drive (`scripts/shared-drive up`, `down` on
//! drop, even after a panic). The groups take a global lock, so they run one
//! after the other even under the parallel test runner. Inside a group every
//! scenario runs to its end even when an earlier one failed, prints one line
//!
//!   fault [cache] <injected> → <what happened> (<counts>)
//!
//! and the group fails at the end, naming every scenario that failed.
//! Needs root, /dev/fuse, sshfs, sshd, faketime, ruby and flock (skipped
//! with the install line without them, see `needs`); FAULTS.md holds the
//! table of results and how to run it.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tournament::game::{replay_transcript, Position};
use tournament::player::process::descendants;
use tournament::record::{EndReason, GameRecord};

use crate::fixture::{live_in_group, project_root, tournament_bin, wait_until, Scratch};
use crate::needs::{self, Need};

/// One group at a time, whatever the test runner does.
pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cache {
    No,
    Default,
}

impl Cache {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cache::No => "cache=no",
            Cache::Default => "cache=default",
        }
    }
}

// ---------------------------------------------------------------------------
// Prerequisites, the drive, background processes.

/// Everything the fault suite needs beyond cargo and python3.
fn prerequisites() -> Vec<Need> {
    let mut all = needs::SHARED_DRIVE.to_vec();
    all.extend([needs::FAKETIME, needs::RUBY]);
    all
}

/// Everything the fault suite on SMB needs beyond cargo and python3.
pub(crate) fn smb_prerequisites() -> Vec<Need> {
    let mut all = needs::SMB_DRIVE.to_vec();
    all.push(needs::RUBY);
    all
}

/// The client the two mounts of a [`Drive`] use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Client {
    Sshfs,
    /// A private Samba, mounted with smbnetfs (`scripts/shared-drive --smb`).
    Smb,
}

/// Two mounts of one folder (`scripts/shared-drive`), down on drop.
pub(crate) struct Drive {
    tmp: Option<tempfile::TempDir>,
    root: PathBuf,
    pub(crate) a: PathBuf,
    pub(crate) b: PathBuf,
    pub(crate) export: PathBuf,
    up_secs: f64,
    /// How the fault lines name it: `cache=no`, `smb cache=default`.
    label: String,
}

fn script() -> PathBuf {
    project_root().join("scripts/shared-drive")
}

impl Drive {
    /// Two sshfs mounts.
    pub(crate) fn up(cache: Cache) -> Drive {
        Drive::up_with(Client::Sshfs, cache)
    }

    /// Two smbnetfs mounts of a share of a private Samba.
    pub(crate) fn smb(cache: Cache) -> Drive {
        Drive::up_with(Client::Smb, cache)
    }

    fn up_with(client: Client, cache: Cache) -> Drive {
        let tmp = tempfile::Builder::new()
            .prefix("tournament-faults-")
            // Open to all: bots of a root referee run as `nobody`.
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .tempdir_in("/tmp")
            .expect("temp dir");
        let root = tmp.path().to_path_buf();
        let t0 = Instant::now();
        let mut up = Command::new(script());
        up.arg("up").arg(&root).arg(format!("--{}", cache.name()));
        if client == Client::Smb {
            up.arg("--smb");
        }
        let out = up.output().expect("run scripts/shared-drive");
        let env = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{up:?} failed ({}):\n{env}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // The share as each mount shows it (for smbnetfs, inside its
        // network tree), from the lines `up` prints.
        let var = |name: &str| {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("no {name} in {env}"))
        };
        Drive {
            a: var("SHARED_A"),
            b: var("SHARED_B"),
            export: var("SHARED_EXPORT"),
            root,
            tmp: Some(tmp),
            up_secs: t0.elapsed().as_secs_f64(),
            label: match client {
                Client::Sshfs => cache.name().to_string(),
                Client::Smb => format!("smb {}", cache.name()),
            },
        }
    }

    /// A fresh folder on the share, made through mount A.
    pub(crate) fn ws(&self, name: &str) -> Ws {
        let ws = Ws {
            a: self.a.join(name),
            b: self.b.join(name),
            x: self.export.join(name),
        };
        fs::create_dir_all(&ws.a).unwrap();
        ws
    }
}

impl Drop for Drive {
    fn drop(&mut self) {
        let out = Command::new(script()).arg("down").arg(&self.root).output();
        let ok = out.as_ref().is_ok_and(|o| o.status.success());
        if !ok {
            // Never delete through live mounts: keep the folder.
            let kept = self.tmp.take().map(|t| t.keep());
            eprintln!(
                "scripts/shared-drive down {} failed ({out:?}); kept {kept:?}: run `scripts/shared-drive down` on it",
                self.root.display()
            );
        }
    }
}

/// One scenario's folder on the share, as A, B and the server see it.
pub(crate) struct Ws {
    pub(crate) a: PathBuf,
    pub(crate) b: PathBuf,
    pub(crate) x: PathBuf,
}

/// A process in the background with its output in files; killed on drop.
pub(crate) struct Bg {
    child: Child,
    out: PathBuf,
    err: PathBuf,
    status: Option<ExitStatus>,
}

impl Bg {
    pub(crate) fn spawn(cmd: &mut Command, logs: &Path, name: &str) -> Bg {
        let out = logs.join(format!("{name}.out"));
        let err = logs.join(format!("{name}.err"));
        let child = cmd
            .env_remove("TOURNAMENT_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(fs::File::create(&out).unwrap())
            .stderr(fs::File::create(&err).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        Bg {
            child,
            out,
            err,
            status: None,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn signal(&self, sig: i32) {
        // SAFETY: a signal to our own child.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    pub(crate) fn done(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().unwrap();
        }
        self.status
    }

    /// Waits up to `secs`; the exit code (`None`: still running, or a signal).
    pub(crate) fn wait(&mut self, secs: u64) -> Option<i32> {
        let until = Instant::now() + Duration::from_secs(secs);
        while self.done().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.done().and_then(|s| s.code())
    }

    pub(crate) fn stderr(&self) -> String {
        fs::read_to_string(&self.err).unwrap_or_default()
    }

    pub(crate) fn stdout(&self) -> String {
        fs::read_to_string(&self.out).unwrap_or_default()
    }
}

impl Drop for Bg {
    fn drop(&mut self) {
        if self.done().is_none() {
            self.signal(libc::SIGCONT);
            self.signal(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        fs::create_dir_all(dir).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(st.success(), "mount -t tmpfs on {}", dir.display());
        Tmpfs(dir.to_path_buf())
    }

    fn resize(&self, size: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success(), "remount {}", self.0.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

pub(crate) fn tournament_cmd() -> Command {
    let mut c = Command::new(tournament_bin());
    c.env_remove("TOURNAMENT_LOG").env("NO_COLOR", "1");
    c
}

/// Runs to the end (at most `secs`), output captured.
fn finish(cmd: &mut Command, logs: &Path, name: &str, secs: u64) -> (Option<i32>, String, String) {
    let mut bg = Bg::spawn(cmd, logs, name);
    let code = bg.wait(secs);
    assert!(
        bg.done().is_some(),
        "{name} still ran after {secs} s: {}",
        bg.stderr()
    );
    (code, bg.stdout(), bg.stderr())
}

// ---------------------------------------------------------------------------
// Config files and results.

enum How {
    Builtin(&'static str),
    /// A built-in bot kept to the files (`pipe = false`): slower.
    BuiltinOnFiles(&'static str),
    Cmd(Vec<String>),
    Wait,
}

struct P {
    name: String,
    how: How,
}

fn builtin(name: &str, which: &'static str) -> P {
    P {
        name: name.into(),
        how: How::Builtin(which),
    }
}

fn cmd(name: &str, argv: &[&str]) -> P {
    P {
        name: name.into(),
        how: How::Cmd(argv.iter().map(|s| s.to_string()).collect()),
    }
}

fn fixture(file: &str) -> String {
    project_root()
        .join("tests/fixtures")
        .join(file)
        .display()
        .to_string()
}

/// A fakebot.py player (`mode` may carry its argument: "slow 300").
fn fake(name: &str, mode: &str) -> P {
    let mut argv = vec!["python3".to_string(), fixture("fakebot.py")];
    argv.extend(mode.split(' ').map(String::from));
    P {
        name: name.into(),
        how: How::Cmd(argv),
    }
}

/// A faultbot.py player (`mode` may carry its arguments).
fn fault(name: &str, mode: &str) -> P {
    let mut argv = vec!["python3".to_string(), fixture("faultbot.py")];
    argv.extend(mode.split(' ').map(String::from));
    P {
        name: name.into(),
        how: How::Cmd(argv),
    }
}

fn waiting(name: &str) -> P {
    P {
        name: name.into(),
        how: How::Wait,
    }
}

/// Writes `<ws>/<file>` through mount A: board `board` and results
/// `results` next to it (unless `results` says otherwise), every spawned
/// bot on mount B (`board-as`). Returns the file as A and as B see it.
fn config(
    ws: &Ws,
    file: &str,
    results: &str,
    tournament: &str,
    rest: &str,
    players: &[P],
) -> (PathBuf, PathBuf) {
    let mut t = format!(
        "[tournament]\nname = \"{file}\"\nboard = \"board\"\nresults = \"{results}\"\n{tournament}\n\n{rest}\n"
    );
    let board_b = ws.b.join("board");
    for p in players {
        t.push_str(&format!("\n[[player]]\nname = \"{}\"\n", p.name));
        match &p.how {
            How::Builtin(b) => t.push_str(&format!("builtin = \"{b}\"\n")),
            How::BuiltinOnFiles(b) => t.push_str(&format!("builtin = \"{b}\"\npipe = false\n")),
            How::Cmd(argv) => {
                let parts: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
                t.push_str(&format!("command = [{}]\n", parts.join(", ")));
            }
            How::Wait => t.push_str("wait = true\n"),
        }
        if !matches!(p.how, How::Wait) {
            t.push_str(&format!("board-as = \"{}\"\n", board_b.display()));
        }
    }
    fs::write(ws.a.join(file), t).unwrap();
    (ws.a.join(file), ws.b.join(file))
}

/// games.jsonl as the server holds it.
pub(crate) struct Results {
    pub(crate) recs: Vec<GameRecord>,
    /// A last line without its newline.
    pub(crate) partial: usize,
    /// Complete lines that are not a game record.
    pub(crate) bad: Vec<String>,
}

impl Results {
    pub(crate) fn read(path: &Path) -> Results {
        let bytes = fs::read(path).unwrap_or_default();
        let mut r = Results {
            recs: vec![],
            partial: 0,
            bad: vec![],
        };
        let mut pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if let Some(last) = pieces.pop() {
            if !last.is_empty() {
                r.partial = 1;
            }
        }
        for line in pieces {
            match serde_json::from_slice::<GameRecord>(line) {
                Ok(rec) => r.recs.push(rec),
                Err(e) => r.bad.push(format!(
                    "{e}: {}",
                    String::from_utf8_lossy(&line[..line.len().min(80)])
                )),
            }
        }
        r
    }

    fn ids(&self) -> Vec<String> {
        self.recs.iter().map(|r| r.id.clone()).collect()
    }

    pub(crate) fn doubled(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut twice = BTreeSet::new();
        for id in self.ids() {
            if !seen.insert(id.clone()) {
                twice.insert(id);
            }
        }
        twice.into_iter().collect()
    }

    pub(crate) fn not_normal(&self) -> Vec<String> {
        self.recs
            .iter()
            .filter(|r| r.reason != EndReason::Normal)
            .map(|r| {
                format!(
                    "{} {}: {}",
                    r.id,
                    r.reason,
                    r.forfeit.as_ref().map_or("", |f| f.detail.as_str())
                )
            })
            .collect()
    }
}

fn lines_of(path: &Path) -> usize {
    fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// Processes whose working directory is under `dir`.
fn cwd_under(dir: &Path) -> Vec<u32> {
    let mut out = vec![];
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cwd) = fs::read_link(format!("/proc/{pid}/cwd")) {
            if cwd.starts_with(dir) {
                out.push(pid);
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    crate::fixture::stat_fields(Path::new(&format!("/proc/{pid}/stat")))
        .is_some_and(|f| f.first().is_some_and(|state| state != "Z"))
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: a signal to a process this test started (or its bot).
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

fn kill9(pid: u32) {
    signal(pid, libc::SIGKILL);
}

/// Kills a process this test started indirectly (e.g. under `faketime`)
/// if it is still there at the end of the scenario.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        if alive(self.0) {
            signal(self.0, libc::SIGCONT);
            kill9(self.0);
        }
    }
}

/// Pids logged by fakebot/faultbot (`<pid> <mode>` per start) in `mode`.
fn logged_pids(log: &Path, mode: &str) -> Vec<u32> {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (pid, m) = l.split_once(' ')?;
            (m == mode).then(|| pid.parse().ok())?
        })
        .collect()
}

fn record_of(stdout: &str) -> GameRecord {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON record in stdout: {stdout}"));
    serde_json::from_str(line).unwrap()
}

pub(crate) fn warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR ") || l.starts_with("error"))
        .map(String::from)
        .collect()
}

fn heartbeat_of(owner: &Path) -> Option<u64> {
    fs::read_to_string(owner)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("heartbeat=")?.parse().ok())
}

fn owner_pid(owner: &Path) -> Option<u32> {
    fs::read_to_string(owner)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("pid=")?.parse().ok())
}

fn token_of(owner: &Path) -> Option<String> {
    fs::read_to_string(owner)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("token=").map(String::from))
}

// ---------------------------------------------------------------------------
// Running scenarios.

struct Env<'a> {
    drive: &'a Drive,
    /// A local folder (not on the share) for logs, pid files, link targets.
    local: &'a Path,
}

struct Suite {
    /// The drive's name in the fault lines (`cache=no`, `smb cache=default`).
    label: String,
    group: &'static str,
    failed: Vec<String>,
    t0: Instant,
}

impl Suite {
    fn new(group: &'static str, drive: &Drive) -> Suite {
        println!(
            "fault [{}] {group}: drive up in {:.1} s at {}",
            drive.label,
            drive.up_secs,
            drive.root.display()
        );
        Suite {
            label: drive.label.clone(),
            group,
            failed: vec![],
            t0: Instant::now(),
        }
    }

    /// Runs one scenario; it returns "<what happened> (<counts>)".
    fn run(&mut self, injected: &str, f: impl FnOnce() -> String) {
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(f));
        let secs = t0.elapsed().as_secs_f64();
        match outcome {
            Ok(line) => println!("fault [{}] {injected} → {line} [{secs:.1} s]", self.label),
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into());
                println!(
                    "fault [{}] {injected} → FAILED: {msg} [{secs:.1} s]",
                    self.label
                );
                self.failed.push(format!("{injected}: {msg}"));
            }
        }
    }

    fn finish(self) {
        println!(
            "fault [{}] {}: {:.1} s, {} failed",
            self.label,
            self.group,
            self.t0.elapsed().as_secs_f64(),
            self.failed.len()
        );
        assert!(
            self.failed.is_empty(),
            "[{}] {} scenario(s) failed:\n- {}",
            self.label,
            self.failed.len(),
            self.failed.join("\n- ")
        );
    }
}

fn group(cache: Cache, name: &'static str, body: impl FnOnce(&Env<'_>, &mut Suite)) {
    group_on(Client::Sshfs, cache, name, body)
}

fn group_on(
    client: Client,
    cache: Cache,
    name: &'static str,
    body: impl FnOnce(&Env<'_>, &mut Suite),
) {
    let needs = match client {
        Client::Sshfs => prerequisites(),
        Client::Smb => smb_prerequisites(),
    };
    if !needs::have(&needs) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let local = Scratch::new();
    let drive = Drive::up_with(client, cache);
    let env = Env {
        drive: &drive,
        local: local.path(),
    };
    let mut suite = Suite::new(name, &drive);
    body(&env, &mut suite);
    suite.finish();
}

// ---------------------------------------------------------------------------
// Group 1: games across the mounts.

fn games(e: &Env<'_>, s: &mut Suite) {
    s.run(
        "100 games, referee on A, 5 bots (3 built-in, Python, Ruby) on B via board-as",
        || hundred_games(e),
    );
    games_on_b(e, s);
}

/// The games scenarios of a referee on A and someone on B (the SMB group
/// runs them too).
fn games_on_b(e: &Env<'_>, s: &mut Suite) {
    s.run(
        "a bot started by hand on B (waiting player), referee on A",
        || waiting_player(e),
    );
    s.run(
        "`tournament watch` on B follows a game the referee on A plays",
        || watch_on_b(e),
    );
}

/// The text of the one live file the server holds in `live`, if any.
fn live_text(live: &Path) -> Option<String> {
    let entry = fs::read_dir(live).ok()?.flatten().next()?;
    fs::read_to_string(entry.path()).ok()
}

/// `tournament watch` run on B follows a game of the referee on A: most of
/// its moves are shown while the game is still played, then its end.
/// (Through sshfs's default cache a plain read of the growing live file
/// stopped at the length B had cached, refreshed every 20 s: `watch` showed
/// the first moves, then nothing until the game was long over.)
fn watch_on_b(e: &Env<'_>) -> String {
    let ws = e.drive.ws("watch");
    let (cfg_a, cfg_b) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 1\nconcurrency = 1\nsize = 8",
        // From the initial position: the moves `watch` numbers are the
        // record's, one to one.
        "[time]\nmove-ms = 5000\n\n[openings]\nrandom-plies = 0",
        &[fake("steady", "ok"), fake("slowpoke", "slow 200")],
    );
    let mut run = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "watch-run",
    );
    let live = ws.x.join("results/live");
    assert!(
        wait_until(60, || live_text(&live).is_some()),
        "no live file: {}",
        run.stderr()
    );
    let mut watch = Bg::spawn(
        tournament_cmd()
            .args(["watch", "--wait-secs", "30", "--config"])
            .arg(&cfg_b),
        e.local,
        "watch-b",
    );
    let shown = |out: &str| -> Vec<usize> {
        out.lines()
            .filter_map(|l| l.strip_prefix("move ")?.split(':').next()?.parse().ok())
            .collect()
    };
    // The most moves `watch` had shown while the game was still going on:
    // its output read first, then the server's live file still without
    // an `end` line.
    let mut during = 0;
    let t0 = Instant::now();
    while watch.done().is_none() && t0.elapsed() < Duration::from_secs(120) {
        let n = shown(&watch.stdout()).into_iter().max().unwrap_or(0);
        if live_text(&live).is_some_and(|t| !t.contains("\"event\":\"end\"")) {
            during = during.max(n);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let code = watch.wait(30);
    let out = watch.stdout();
    assert_eq!(run.wait(60), Some(0), "{}", run.stderr());
    assert_eq!(code, Some(0), "watch on B: {out}{}", watch.stderr());
    assert!(out.contains("game over: "), "watch on B: {out}");
    let res = Results::read(&ws.x.join("results/games.jsonl"));
    assert_eq!(res.recs.len(), 1);
    let plies = res.recs[0].moves.len();
    assert_eq!(
        shown(&out),
        (1..=plies).collect::<Vec<_>>(),
        "watch on B showed other moves than the game's {plies}: {out}"
    );
    assert!(
        during * 2 >= plies,
        "watch on B had shown only {during} of the game's {plies} moves while it was played"
    );
    format!(
        "watch on B had shown {during} of the game's {plies} moves while it was played, \
         then all of them and its end"
    )
}

fn hundred_games(e: &Env<'_>) -> String {
    let ws = e.drive.ws("hundred");
    let root = project_root();
    let py = root.join("bots/python/weighted.py").display().to_string();
    let rb = root.join("bots/ruby/greedy.rb").display().to_string();
    let (cfg, _) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 10\nconcurrency = 8\nsize = 4",
        "[time]\nmove-ms = 5000\nstartup-ms = 15000\n\n[openings]\nrandom-plies = 2\nseed = 11",
        &[
            builtin("rnd", "random"),
            builtin("grd", "greedy"),
            builtin("wtd", "weighted"),
            cmd("py", &["python3", &py]),
            cmd("rb", &["ruby", &rb]),
        ],
    );
    let mut run = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg),
        e.local,
        "hundred",
    );
    let (mut on_b, mut on_a) = (BTreeSet::new(), BTreeSet::new());
    let t0 = Instant::now();
    while run.done().is_none() {
        on_b.extend(cwd_under(&ws.b.join("board")));
        on_a.extend(cwd_under(&ws.a.join("board")));
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "100 games took more than 300 s: {}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let secs = t0.elapsed().as_secs_f64();
    let err = run.stderr();
    assert_eq!(run.wait(0), Some(0), "{err}");
    let res = Results::read(&ws.x.join("results/games.jsonl"));
    assert_eq!(res.partial, 0, "half a line in games.jsonl");
    assert!(res.bad.is_empty(), "garbled result lines: {:?}", res.bad);
    assert_eq!(res.recs.len(), 100, "finished games");
    assert!(res.doubled().is_empty(), "doubled: {:?}", res.doubled());
    let spoiled = res.not_normal();
    assert!(
        spoiled.is_empty(),
        "{} of 100 games ended by a forfeit of a well-behaved bot, e.g. {:#?}",
        spoiled.len(),
        &spoiled[..spoiled.len().min(3)]
    );
    let mut messages = 0;
    let mut moves = 0;
    let mut slowest = 0;
    let mut slow = 0;
    for r in &res.recs {
        let (replayed, end) = replay_transcript(Position::start(r.size), &r.transcript)
            .unwrap_or_else(|e| panic!("{}: transcript {}: {e}", r.id, r.transcript));
        assert!(end.is_over(), "{}: the game ran to its end", r.id);
        assert_eq!(replayed.len(), r.moves.len(), "{}", r.id);
        assert_eq!(r.discs.black, end.discs().black, "{}", r.id);
        assert_eq!(r.discs.white, end.discs().white, "{}", r.id);
        let answered: Vec<_> = r.moves.iter().filter(|m| !m.opening && !m.auto).collect();
        moves += answered.len();
        messages += 4 + answered.len();
        for m in answered {
            slowest = slowest.max(m.ms);
            if m.ms > 500 {
                slow += 1;
            }
        }
    }
    let warned = warnings(&err);
    assert!(warned.is_empty(), "the referee warned: {warned:#?}");
    assert!(
        on_b.len() >= 5,
        "bot processes seen working on B: {on_b:?} (expected every player's)"
    );
    assert!(on_a.is_empty(), "bot processes working on A: {on_a:?}");
    format!(
        "100 of 100 games finished normally, 0 lost, 0 garbled, 0 doubled, 0 warnings \
         ({messages} messages answered, {moves} bot moves replayed legal, {} bot processes \
         seen working in B's mailboxes and 0 in A's; slowest answer {slowest} ms, {slow} \
         answers over 500 ms; {secs:.1} s)",
        on_b.len()
    )
}

fn waiting_player(e: &Env<'_>) -> String {
    let ws = e.drive.ws("waiting");
    let (cfg, _) = config(
        &ws,
        "tournament.toml",
        "results",
        "format = \"gauntlet\"\ngauntlet-player = \"alice\"\ngames-per-pairing = 1\nconcurrency = 2\nsize = 4",
        "[time]\nmove-ms = 5000\nwait-ms = 60000",
        &[
            waiting("alice"),
            builtin("rnd", "random"),
            builtin("grd", "greedy"),
        ],
    );
    let mut run = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg),
        e.local,
        "waiting",
    );
    assert!(
        wait_until(30, || ws.x.join("board/players/alice").is_dir()),
        "the referee made no mailbox for alice: {}",
        run.stderr()
    );
    let mailbox_b = ws.b.join("board/players/alice");
    let alice = Bg::spawn(
        Command::new("ruby")
            .arg(project_root().join("bots/ruby/greedy.rb"))
            .arg(&mailbox_b),
        e.local,
        "alice",
    );
    let code = run.wait(120);
    drop(alice);
    assert_eq!(code, Some(0), "{}", run.stderr());
    let res = Results::read(&ws.x.join("results/games.jsonl"));
    assert_eq!(res.recs.len(), 2, "{:?}", res.ids());
    assert!(res.not_normal().is_empty(), "{:#?}", res.not_normal());
    assert!(res.recs.iter().all(|r| r.color_of("alice").is_some()));
    let moves: usize = res
        .recs
        .iter()
        .map(|r| r.moves.iter().filter(|m| !m.opening && !m.auto).count())
        .sum();
    format!(
        "2 of 2 games finished normally, alice (Ruby, started by hand with {} as its mailbox) \
         answered every message ({moves} moves)",
        mailbox_b.display()
    )
}

// ---------------------------------------------------------------------------
// Group 2: bots that misbehave, on B.

struct Bots<'a> {
    e: &'a Env<'a>,
    ws: Ws,
    cfg: PathBuf,
    /// Local files the symlinking bots point at.
    precious: PathBuf,
    elsewhere: PathBuf,
}

impl<'a> Bots<'a> {
    /// `players` in `ws`, each meeting its own well-behaved opponent
    /// (fakebot `ok`, which overwrites out.txt in place, as most
    /// hand-written bots do).
    fn on(
        e: &'a Env<'a>,
        ws: Ws,
        mut players: Vec<P>,
        precious: PathBuf,
        elsewhere: PathBuf,
    ) -> Bots<'a> {
        let opponents: Vec<P> = players
            .iter()
            .map(|p| fake(&format!("vs-{}", p.name), "ok"))
            .collect();
        players.extend(opponents);
        let (cfg, _) = config(
            &ws,
            "tournament.toml",
            "results",
            "size = 6",
            "[time]\nmove-ms = 1500",
            &players,
        );
        Bots {
            e,
            ws,
            cfg,
            precious,
            elsewhere,
        }
    }
}

impl Bots<'_> {
    fn log(&self, who: &str) -> PathBuf {
        self.e.local.join(format!("{who}.starts"))
    }

    fn play_cmd(&self, black: &str, move_ms: u64) -> Command {
        let mut c = tournament_cmd();
        c.args(["play", "--config"])
            .arg(&self.cfg)
            .args(["--black", black, "--white", &format!("vs-{black}")])
            .args(["--json", "--size", "6"])
            .args(["--move-ms", &move_ms.to_string(), "--startup-ms", "5000"])
            // These bots are killed and stopped from outside by the pids
            // they log outside their mailbox: the referee's reaction is
            // tested without the sandbox (cheats.rs tests the sandbox).
            .arg("--no-sandbox")
            .env("FAKEBOT_LOG", self.log(black))
            .env("FAULTBOT_LOG", self.log(black))
            .env("FAKEBOT_OUT", self.e.local)
            .env("FAULTBOT_OUT", self.e.local);
        c
    }

    /// One game of `black` against `vs-<black>`; the referee must carry on.
    fn play(&self, black: &str, move_ms: u64) -> (GameRecord, Duration) {
        let t0 = Instant::now();
        let (code, out, err) = finish(&mut self.play_cmd(black, move_ms), self.e.local, black, 90);
        assert_eq!(code, Some(0), "the referee carries on: {err}");
        (record_of(&out), t0.elapsed())
    }

    fn mailbox_x(&self, black: &str) -> PathBuf {
        self.ws.x.join(format!("board/players/{black}.1"))
    }
}

fn forfeit_of(r: &GameRecord) -> (String, String) {
    let f = r.forfeit.as_ref();
    (
        f.map_or(String::new(), |f| f.detail.clone()),
        f.and_then(|f| f.exit.clone()).unwrap_or_default(),
    )
}

fn assert_forfeit(r: &GameRecord, reason: EndReason) {
    assert_eq!(r.reason, reason, "{:?}", r.forfeit);
    assert_eq!(r.result.name(), "white", "the opponent wins: {r:?}");
    let all = u32::from(r.size).pow(2);
    assert_eq!(r.discs_wof.white, all, "a forfeit scores all squares");
}

fn bots(e: &Env<'_>, s: &mut Suite) {
    let ws = e.drive.ws("bots");
    let precious = e.local.join("outside/precious.txt");
    let elsewhere = e.local.join("outside/elsewhere");
    fs::create_dir_all(e.local.join("outside")).unwrap();
    fs::write(&precious, "precious\n").unwrap();
    for k in 1..=2 {
        let dir = PathBuf::from(format!("{}{k}", elsewhere.display()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("in.txt"), "keep me\n").unwrap();
        fs::write(dir.join("out.txt"), "mine\n").unwrap();
    }
    let mut players = vec![
        fake("victim", "slow 1500"),
        fake("stopper", "stop-self"),
        fault("quitter", "exit-before-ready"),
        fake("gc", "grandchild"),
        fault("gcs", "setsid-grandchild"),
        fault("nulbin", "nul-binary"),
        fake("big", "big"),
        fault("empty", "empty"),
        fake("nonl", "no-newline"),
        fake("crlf", "crlf-upper"),
        fake("sjis", "binary"),
        fake("symout", &format!("symlink-out {}", precious.display())),
        fault("badid", "bad-id"),
        fake("again", "ok"),
    ];
    for k in 1..=2 {
        let how = format!("symlink-dir-after 8 {}{k}", elsewhere.display());
        players.push(fault(&format!("symdir{k}"), &how));
    }
    let b = Bots::on(e, ws, players, precious, elsewhere);
    killed_and_stopped(&b, s);
    s.run("bot exits (status 5) before READY", || {
        let (r, _) = b.play("quitter", 1500);
        assert_forfeit(&r, EndReason::Exited);
        let (detail, exit) = forfeit_of(&r);
        assert_eq!(exit, "exit status 5");
        let tail = r.forfeit.as_ref().unwrap().stderr_tail.join(" | ");
        assert!(tail.contains("exiting before READY"), "{tail}");
        format!("forfeit `exited` ({detail}; exit status 5, its stderr kept in the record)")
    });
    s.run(
        "bot leaves a grandchild (`sleep 1000`, same process group)",
        || grandchild(&b, "gc", "grandchild.pid"),
    );
    s.run(
        "bot leaves a grandchild in a new session (setsid, out of its process group)",
        || grandchild(&b, "gcs", "grandchild.pid"),
    );
    for (who, injected, reason) in [
        (
            "nulbin",
            "answer: raw binary (NUL, 0xff bytes)",
            EndReason::Garbage,
        ),
        ("big", "answer: a 10 MB out.txt", EndReason::Garbage),
        ("empty", "answer: an empty out.txt", EndReason::Timeout),
        (
            "nonl",
            "answer: a move without its final newline",
            EndReason::Incomplete,
        ),
        ("sjis", "answer: Shift-JIS bytes", EndReason::Garbage),
    ] {
        s.run(injected, || {
            let (r, took) = b.play(who, 1500);
            assert_forfeit(&r, reason);
            let (detail, _) = forfeit_of(&r);
            format!(
                "forfeit `{reason}` ({detail}); referee went on, game over in {:.1} s",
                took.as_secs_f64()
            )
        });
    }
    s.run("answer: CRLF line ends, upper-case squares", || {
        let (r, _) = b.play("crlf", 1500);
        assert_eq!(r.reason, EndReason::Normal, "{:?}", r.forfeit);
        format!("accepted: game finished normally ({} moves)", r.moves.len())
    });
    s.run(
        "answer: out.txt made a symlink (to a file outside the share)",
        || symlink_out(&b),
    );
    s.run(
        "mid-game, the bot replaces its mailbox folder by a symlink (to a folder outside the share), 2 games",
        || symlink_dir(&b),
    );
    s.run(
        "two games in a row on A (`tournament play` twice) while B looks at the mailboxes: the mailbox folders removed and made again",
        || {
            // The bot's author watches the mailboxes from B (as `tournament
            // board status` on B does): B's client keeps their entries.
            let stop = Arc::new(AtomicBool::new(false));
            let looker = {
                let stop = Arc::clone(&stop);
                let players = b.ws.b.join("board/players");
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        for id in ["again.1", "vs-again.1"] {
                            let _ = fs::metadata(players.join(id).join("out.txt"));
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                })
            };
            let (first, _) = b.play("again", 1500);
            let (second, _) = b.play("again", 1500);
            stop.store(true, Ordering::SeqCst);
            looker.join().unwrap();
            let spoiled: Vec<String> = [&first, &second]
                .iter()
                .filter(|r| r.reason != EndReason::Normal)
                .map(|r| {
                    let f = r.forfeit.as_ref();
                    format!(
                        "{}: {} (its last stderr line: {})",
                        r.reason,
                        f.map_or("", |f| f.detail.as_str()),
                        f.and_then(|f| f.stderr_tail.last()).map_or("", |l| l.as_str())
                    )
                })
                .collect();
            assert!(spoiled.is_empty(), "{spoiled:#?}");
            "both games finished normally (the bots on B wrote into the new folders)".to_string()
        },
    );
    s.run(
        "names from config (../, absolute, NUL, 300 chars) and ids from a bot (`../`×1000)",
        || names(&b),
    );
}

/// A bot (`victim`, `stopper`) killed -9 and one stopped (the SMB group
/// runs them too).
fn killed_and_stopped(b: &Bots<'_>, s: &mut Suite) {
    s.run("bot killed -9 in the middle of a move", || bot_killed(b));
    s.run("bot stopped (SIGSTOP) past its move time", || {
        bot_stopped(b)
    });
}

fn bot_killed(b: &Bots<'_>) -> String {
    let log = b.log("victim");
    let mut play = Bg::spawn(&mut b.play_cmd("victim", 5000), b.e.local, "victim");
    let in_txt = b.mailbox_x("victim").join("in.txt");
    assert!(
        wait_until(30, || {
            !logged_pids(&log, "slow").is_empty()
                && fs::read_to_string(&in_txt).is_ok_and(|t| t.contains("TURN"))
        }),
        "the victim never got a TURN: {}",
        play.stderr()
    );
    // It sleeps 1.5 s on every move: kill it inside that sleep.
    std::thread::sleep(Duration::from_millis(300));
    let pid = logged_pids(&log, "slow")[0];
    kill9(pid);
    let t_kill = Instant::now();
    assert_eq!(play.wait(60), Some(0), "{}", play.stderr());
    let after = t_kill.elapsed();
    let r = record_of(&play.stdout());
    assert_forfeit(&r, EndReason::Exited);
    let (detail, exit) = forfeit_of(&r);
    assert!(exit.contains("signal 9"), "{exit}");
    assert!(
        wait_until(5, || live_in_group(pid).is_empty()),
        "group {pid} still has processes"
    );
    format!(
        "forfeit `exited` ({detail}: {exit}); game over {:.2} s after the kill (move time 5 s); \
         0 processes left in its group",
        after.as_secs_f64()
    )
}

fn bot_stopped(b: &Bots<'_>) -> String {
    let (r, took) = b.play("stopper", 1500);
    assert_forfeit(&r, EndReason::Timeout);
    let pid = logged_pids(&b.log("stopper"), "stop-self")[0];
    assert!(
        wait_until(5, || live_in_group(pid).is_empty()),
        "the stopped bot's group {pid} still has processes"
    );
    let (detail, _) = forfeit_of(&r);
    format!(
        "forfeit `timeout` ({detail}); the stopped process was killed, 0 left in its group; \
         game over in {:.1} s (move time 1.5 s)",
        took.as_secs_f64()
    )
}

fn grandchild(b: &Bots<'_>, who: &str, pid_file: &str) -> String {
    let file = b.e.local.join(pid_file);
    let _ = fs::remove_file(&file);
    let (r, _) = b.play(who, 1500);
    let gc: u32 = fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .parse()
        .unwrap();
    let gone = wait_until(3, || !alive(gc));
    if !gone {
        kill9(gc); // do not leave it behind ourselves
    }
    assert_eq!(r.reason, EndReason::Normal, "{:?}", r.forfeit);
    assert!(
        gone,
        "the grandchild (pid {gc}) outlived the referee's `tournament play`; it was re-parented \
         to init (this test killed it)"
    );
    format!("game finished normally; the grandchild (pid {gc}) was gone when the referee exited")
}

fn content_and_mtime(p: &Path) -> (Vec<u8>, SystemTime) {
    (
        fs::read(p).unwrap_or_default(),
        fs::metadata(p)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH),
    )
}

fn symlink_out(b: &Bots<'_>) -> String {
    let before = content_and_mtime(&b.precious);
    let (r, _) = b.play("symout", 1500);
    assert_forfeit(&r, EndReason::Garbage);
    assert_eq!(
        content_and_mtime(&b.precious),
        before,
        "the link target changed"
    );
    let (detail, _) = forfeit_of(&r);
    assert!(
        !detail.contains("precious"),
        "the referee read the link target: {detail}"
    );
    format!("forfeit `garbage` ({detail}); link target untouched (content and mtime), not read")
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        fs::read(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn symlink_dir(b: &Bots<'_>) -> String {
    let shown = |l: &[(String, Vec<u8>)]| {
        l.iter()
            .map(|(n, c)| format!("{n}={:?}", String::from_utf8_lossy(c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut harmed = vec![];
    let mut reasons = vec![];
    for k in 1..=2 {
        let target = PathBuf::from(format!("{}{k}", b.elsewhere.display()));
        let who = format!("symdir{k}");
        let before = listing(&target);
        let (r, _) = b.play(&who, 1500);
        let after = listing(&target);
        let (detail, _) = forfeit_of(&r);
        let is_link =
            fs::symlink_metadata(b.mailbox_x(&who)).is_ok_and(|m| m.file_type().is_symlink());
        assert!(
            is_link,
            "the bot did not replace its mailbox by a symlink: game {k} ended first ({} {:?})",
            r.reason, r.forfeit
        );
        if after != before {
            harmed.push(format!(
                "game {k}: [{}] became [{}] (forfeit `{}`: {detail})",
                shown(&before),
                shown(&after),
                r.reason
            ));
        }
        reasons.push(r.reason);
    }
    assert!(
        harmed.is_empty(),
        "the referee changed the folder the symlink points to (outside the board) in {} of 2 \
         games: {}",
        harmed.len(),
        harmed.join("; ")
    );
    assert!(
        reasons.iter().all(|r| *r == EndReason::Garbage),
        "forfeit reasons {reasons:?}"
    );
    "2 of 2 forfeit `garbage` (the mailbox folder is a symlink, refused); the link targets \
     unchanged (in.txt, out.txt kept)"
        .to_string()
}

/// Every path under `dir` (not following symlinks) whose name contains `needle`.
fn find_named(dir: &Path, needle: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name().to_string_lossy().contains(needle) {
            out.push(p.clone());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            find_named(&p, needle, out);
        }
    }
}

fn names(b: &Bots<'_>) -> String {
    let dir = b.ws.a.join("names");
    fs::create_dir_all(&dir).unwrap();
    let long = "x".repeat(300);
    let bad = [
        ("../evil", "../evil"),
        ("/abs/evil", "/abs/evil"),
        ("nul\\u0000evil", "NUL"),
        (long.as_str(), "300 characters"),
    ];
    let mut refused = 0;
    for (name, shown) in bad {
        let text = format!(
            "[tournament]\nname = \"n\"\nboard = \"board\"\nresults = \"results\"\n\n\
             [[player]]\nname = \"{name}\"\nbuiltin = \"random\"\n\n\
             [[player]]\nname = \"ok\"\nbuiltin = \"greedy\"\n"
        );
        fs::write(dir.join("t.toml"), text).unwrap();
        let (code, _, err) = finish(
            tournament_cmd()
                .args(["run", "--config"])
                .arg(dir.join("t.toml")),
            b.e.local,
            "names",
            30,
        );
        assert_eq!(code, Some(3), "name {shown}: {err}");
        assert!(err.contains("player[1].name"), "{shown}: {err}");
        refused += 1;
    }
    let left: Vec<String> = listing(&b.ws.x.join("names"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(left, ["t.toml"], "a refused config left files behind");
    let mut evil = vec![];
    for root in [&b.e.drive.export, &b.e.drive.root, Path::new("/abs")] {
        find_named(root, "evil", &mut evil);
    }
    let (r, _) = b.play("badid", 1500);
    assert_forfeit(&r, EndReason::WrongSender);
    let mut escaped = vec![];
    find_named(&b.e.drive.export, "escape", &mut escaped);
    find_named(b.e.local, "escape", &mut escaped);
    find_named(&b.e.drive.root, "escape", &mut escaped);
    assert!(evil.is_empty(), "{evil:?}");
    assert!(escaped.is_empty(), "{escaped:?}");
    format!(
        "{refused} of 4 bad names refused (exit 3, file:line:column), nothing created; the bot's \
         3 KB `../` id: forfeit `wrong-sender`, 0 files named after it anywhere"
    )
}

// ---------------------------------------------------------------------------
// Group 3: the referee and the drive.

fn referee(e: &Env<'_>, s: &mut Suite) {
    s.run(
        "referee killed -9 mid-run, resumed on the same mount (A)",
        || killed_and_resumed(e, false),
    );
    referees_on_a_and_b(e, s);
    s.run(
        "clocks skewed ±300 s (faketime) between the holder (A) and a second referee (B)",
        || clock_skew(e),
    );
    s.run(
        "results folder on a full file system (200 KB tmpfs)",
        || full_disk(e),
    );
}

/// The scenarios of referees on both machines (the SMB group runs them
/// too).
fn referees_on_a_and_b(e: &Env<'_>, s: &mut Suite) {
    s.run(
        "referee killed -9 mid-run while B watched the size of games.jsonl, resumed on the other mount (B)",
        || killed_and_resumed(e, true),
    );
    s.run(
        "a second referee on the other mount (B) while the first runs on A",
        || second_referee(e),
    );
    s.run(
        "referee stopped (SIGSTOP; its bots run on) past the stale period, a second one takes over from B, then SIGCONT",
        || stopped_and_taken_over(e),
    );
}

fn three_builtins() -> [P; 3] {
    [
        builtin("rnd", "random"),
        builtin("grd", "greedy"),
        builtin("wtd", "weighted"),
    ]
}

fn killed_and_resumed(e: &Env<'_>, other_mount: bool) -> String {
    let ws = e
        .drive
        .ws(if other_mount { "resume-b" } else { "resume-a" });
    let (cfg_a, cfg_b) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 6\nconcurrency = 2\nsize = 6",
        "[time]\nmove-ms = 5000\n\n[openings]\nrandom-plies = 2\nseed = 5",
        &three_builtins(),
    );
    let games = ws.x.join("results/games.jsonl");
    let mut run = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "killed",
    );
    // A user on B watching the size of games.jsonl (`ls -l`, a file
    // manager): B's drive client then caches its attributes.
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = other_mount.then(|| {
        let (stop, results_b) = (Arc::clone(&stop), ws.b.join("results"));
        std::thread::spawn(move || {
            let mut looks = 0;
            let games_b = results_b.join("games.jsonl");
            while !stop.load(Ordering::SeqCst) {
                if fs::metadata(&games_b).is_ok() {
                    looks += 1;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            looks
        })
    });
    // Kill it right after a game was appended, once 5 are in.
    let mut prev = 0;
    let killed_at = loop {
        let n = lines_of(&games);
        if n >= 5 && n != prev {
            run.signal(libc::SIGKILL);
            break n;
        }
        prev = n;
        assert!(
            run.done().is_none(),
            "finished before the kill: {}",
            run.stderr()
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = run.wait(10);
    stop.store(true, Ordering::SeqCst);
    let looks = watcher.map(|w| w.join().unwrap()).unwrap_or(0);
    let bots_left = wait_until(5, || cwd_under(&ws.b.join("board")).is_empty());
    let before = Results::read(&games);
    let cfg = if other_mount { &cfg_b } else { &cfg_a };
    let (code, _, err) = finish(
        tournament_cmd().arg("run").arg("--config").arg(cfg),
        e.local,
        "resumed",
        180,
    );
    assert_eq!(code, Some(0), "{err}");
    let after = Results::read(&games);
    let seen = err
        .split("games (")
        .nth(1)
        .and_then(|t| t.split(" already played").next())
        .unwrap_or("?")
        .to_string();
    assert!(
        bots_left,
        "bots outlived the killed referee: {:?}",
        cwd_under(&ws.b.join("board"))
    );
    assert_eq!(after.partial, 0);
    assert!(after.bad.is_empty(), "{:?}", after.bad);
    assert_eq!(
        after.recs[..before.recs.len()],
        before.recs[..],
        "finished games kept as they were"
    );
    assert!(
        after.doubled().is_empty(),
        "games doubled: {:?} ({} lines for 18 games; killed with {killed_at} finished, the \
         resumed referee saw {seen} already played)",
        after.doubled(),
        after.recs.len()
    );
    assert_eq!(after.recs.len(), 18, "no game lost");
    format!(
        "killed with {killed_at} games finished (bots died with it); the resumed referee on {} \
         saw {seen} already played and finished the rest: 18 of 18, 0 lost, 0 doubled{}",
        if other_mount { "B" } else { "A" },
        if other_mount {
            format!(" (B looked at the size of games.jsonl {looks} times during the run)")
        } else {
            String::new()
        }
    )
}

fn flock_n(file: &Path) -> Option<i32> {
    Command::new("flock")
        .args(["-n", "-E", "99"])
        .arg(file)
        .arg("true")
        .status()
        .ok()
        .and_then(|s| s.code())
}

/// The first referee's games (about 10 s) outlast both attempts (about
/// 2 s each on a busy machine) with room to spare.
fn second_referee(e: &Env<'_>) -> String {
    let ws = e.drive.ws("second");
    let (cfg_a, cfg_b) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 6\nconcurrency = 2\nsize = 8\nstale-lock-ms = 6000",
        "[time]\nmove-ms = 5000",
        &[fake("steady", "ok"), fake("slowpoke", "slow 150")],
    );
    let mut first = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "first",
    );
    let owner = ws.x.join("board/REFEREE/OWNER");
    assert!(
        wait_until(30, || heartbeat_of(&owner).is_some_and(|h| h >= 1)),
        "no heartbeat from the first referee: {}",
        first.stderr()
    );
    let token = token_of(&owner);
    let flock_a = flock_n(&ws.a.join("board/referee.lock"));
    let flock_b = flock_n(&ws.b.join("board/referee.lock"));
    let (run_code, _, run_err) = finish(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_b),
        e.local,
        "second-run",
        60,
    );
    let (play_code, _, play_err) = finish(
        tournament_cmd()
            .args(["play", "--black", "greedy", "--white", "random", "--board"])
            .arg(ws.b.join("board")),
        e.local,
        "second-play",
        60,
    );
    let still_running = first.done().is_none();
    let same_owner = token_of(&owner) == token;
    let code = first.wait(120);
    assert_eq!(flock_a, Some(99), "flock on A must exclude on A");
    assert_eq!(run_code, Some(4), "second `run` on B: {run_err}");
    assert_eq!(play_code, Some(4), "second `play` on B: {play_err}");
    let pid = format!("pid {}", first.pid());
    assert!(run_err.contains(&pid), "{run_err}");
    assert!(still_running, "the first referee ended before the attempts");
    assert!(same_owner, "the lock changed hands");
    assert_eq!(code, Some(0), "{}", first.stderr());
    let res = Results::read(&ws.x.join("results/games.jsonl"));
    assert_eq!(res.recs.len(), 6);
    assert!(res.not_normal().is_empty(), "{:?}", res.not_normal());
    format!(
        "both refused with exit 4 naming the holder ({pid}); `flock -n` on referee.lock: \
         refused on A, {} on B (so only the REFEREE/ folder excluded it); the first finished \
         its 6 games normally",
        if flock_b == Some(0) {
            "GRANTED"
        } else {
            "refused"
        }
    )
}

/// `tournament` as run on another machine: in a UTS namespace of its own,
/// with the host name `pc-b` (a referee checks whether a holder still runs
/// only on its own host, by name; another host's holder it judges by its
/// heartbeat alone).
pub(crate) fn tournament_on_other_host() -> Command {
    let mut c = Command::new("unshare");
    c.args(["--uts", "sh", "-c", "hostname pc-b && exec \"$0\" \"$@\""])
        .arg(tournament_bin())
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1");
    c
}

/// Two referees started at the same moment on the two mounts, the one on B
/// on another host: one takes the board, the other is refused (exit 4),
/// and every game is played once.
fn two_referees_at_once(e: &Env<'_>) -> String {
    let ws = e.drive.ws("at-once");
    // Built-ins kept to the files: slow enough that the winner still runs
    // when the loser looks.
    let on_files = |name: &str, which| P {
        name: name.into(),
        how: How::BuiltinOnFiles(which),
    };
    let (cfg_a, cfg_b) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 4\nconcurrency = 2\nsize = 6\nstale-lock-ms = 6000",
        "[time]\nmove-ms = 5000",
        &[
            on_files("o-rnd", "random"),
            on_files("o-grd", "greedy"),
            on_files("o-wtd", "weighted"),
        ],
    );
    let mut on_a = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "at-once-a",
    );
    let mut on_b = Bg::spawn(
        tournament_on_other_host()
            .arg("run")
            .arg("--config")
            .arg(&cfg_b),
        e.local,
        "at-once-b",
    );
    let (a, b) = (on_a.wait(180), on_b.wait(180));
    let (winner, loser) = match (a, b) {
        (Some(0), Some(4)) => ("A", on_b.stderr()),
        (Some(4), Some(0)) => ("B", on_a.stderr()),
        _ => panic!(
            "exits {a:?} (A) and {b:?} (B), not one 0 and one 4:\nA: {}\nB: {}",
            on_a.stderr(),
            on_b.stderr()
        ),
    };
    assert!(loser.contains("in use by another referee"), "{loser}");
    let res = Results::read(&ws.x.join("results/games.jsonl"));
    assert_eq!(res.recs.len(), 12, "{:?}", res.ids());
    assert!(res.doubled().is_empty(), "{:?}", res.doubled());
    assert!(res.not_normal().is_empty(), "{:?}", res.not_normal());
    format!(
        "the one on {winner} took the board and played 12 of 12 games, 0 doubled; the other was \
         refused with exit 4 (the board in use by another referee)"
    )
}

fn stopped_and_taken_over(e: &Env<'_>) -> String {
    let ws = e.drive.ws("takeover");
    let (cfg_a, cfg_b) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 16\nconcurrency = 2\nsize = 6\nstale-lock-ms = 4000",
        "[time]\nmove-ms = 5000\n\n[openings]\nrandom-plies = 2\nseed = 9",
        &[fake("first", "ok"), fake("second", "ok")],
    );
    let games = ws.x.join("results/games.jsonl");
    let mut first = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "stopped",
    );
    assert!(
        wait_until(60, || lines_of(&games) >= 3),
        "{}",
        first.stderr()
    );
    // Only the referee stops; the bots it started keep running and keep
    // watching their mailboxes (B9 in FAULTS.md).
    first.signal(libc::SIGSTOP);
    let running_bots = descendants(first.pid());
    let t_stop = Instant::now();
    let mailboxes = || {
        fs::read_dir(ws.x.join("board/players"))
            .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let old_mailboxes = mailboxes();
    std::thread::sleep(Duration::from_millis(600));
    let at_stop = lines_of(&games);
    let mut second = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_b),
        e.local,
        "taker",
    );
    let took = wait_until(40, || {
        second.done().is_some()
            || (second.stderr().contains("took over the board") && lines_of(&games) >= at_stop + 2)
    });
    assert!(
        took && second.done().is_none(),
        "the second referee did not take over and play: exit {:?}\n{}",
        second.done(),
        second.stderr()
    );
    let stopped_for = t_stop.elapsed();
    first.signal(libc::SIGCONT);
    let t_cont = Instant::now();
    let first_code = first.wait(30);
    let noticed = t_cont.elapsed();
    let second_code = second.wait(180);
    let res = Results::read(&games);
    let first_err = first.stderr();
    let second_err = second.stderr();
    let second_warned = warnings(&second_err);
    assert_eq!(
        first_code,
        Some(8),
        "the continued referee must stop with exit 8: {first_err}"
    );
    assert!(
        first_err.contains("no longer owns the board"),
        "{first_err}"
    );
    assert_eq!(
        second_code,
        Some(0),
        "the new holder must finish undisturbed; it says:\n{}",
        second_warned.join("\n")
    );
    assert!(res.doubled().is_empty(), "doubled: {:?}", res.doubled());
    assert!(
        res.not_normal().is_empty(),
        "games spoiled: {:#?}\nnew holder's warnings: {second_warned:#?}",
        res.not_normal()
    );
    assert_eq!(res.recs.len(), 16);
    assert!(
        second_err.contains("new ones are used"),
        "the new holder must stay out of the old bots' mailboxes:\n{second_err}"
    );
    let new_mailboxes: Vec<_> = mailboxes()
        .into_iter()
        .filter(|m| !old_mailboxes.contains(m))
        .collect();
    assert!(
        new_mailboxes.len() >= 2,
        "old {old_mailboxes:?}, new {new_mailboxes:?}"
    );
    format!(
        "stopped {:.1} s ({} bots left running) with {at_stop} games finished; B took over, \
         in new mailboxes, and played on; continued, \
         the old referee gave up after {:.2} s with exit 8 and the new one finished: 16 of 16 \
         games, 0 doubled, 0 spoiled",
        stopped_for.as_secs_f64(),
        running_bots.len(),
        noticed.as_secs_f64()
    )
}

/// `faketime` shifting the wall clock only: the monotonic clock of a
/// machine whose wall clock is wrong is still right (libfaketime would fake
/// CLOCK_MONOTONIC too, and then every timed wait of the referee hangs).
fn faketime(skew: &str) -> Command {
    let mut c = Command::new("faketime");
    c.args(["-f", skew])
        .arg(tournament_bin())
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1");
    c
}

fn clock_skew(e: &Env<'_>) -> String {
    let ws = e.drive.ws("skew");
    let (cfg_a, _) = config(
        &ws,
        "tournament.toml",
        "results",
        "games-per-pairing = 8\nconcurrency = 2\nsize = 6\nstale-lock-ms = 3000",
        "[time]\nmove-ms = 5000",
        // Kept to the files, which keeps the holder playing for the whole
        // scenario (on the pipe the built-ins finish in well under a
        // second); built-ins, because a sandboxed bot under faketime
        // cannot open libfaketime's semaphore.
        &[
            P {
                name: "s-rnd".into(),
                how: How::BuiltinOnFiles("random"),
            },
            P {
                name: "s-grd".into(),
                how: How::BuiltinOnFiles("greedy"),
            },
            P {
                name: "s-wtd".into(),
                how: How::BuiltinOnFiles("weighted"),
            },
        ],
    );
    let mut holder = Bg::spawn(
        faketime("+300s").arg("run").arg("--config").arg(&cfg_a),
        e.local,
        "skewed",
    );
    let owner = ws.x.join("board/REFEREE/OWNER");
    assert!(
        wait_until(30, || heartbeat_of(&owner).is_some_and(|h| h >= 1)),
        "no heartbeat from the skewed referee: {}",
        holder.stderr()
    );
    // `faketime` runs the referee as its child: signal the referee itself.
    let pid = owner_pid(&owner).expect("the holder's pid");
    let _reap = Reap(pid);
    let board_b = ws.b.join("board");
    let second = |skew: Option<&str>, name: &str| {
        let mut c = match skew {
            Some(s) => faketime(s),
            None => tournament_cmd(),
        };
        c.args([
            "play", "--black", "greedy", "--white", "random", "--size", "4", "--json",
        ])
        .args(["--stale-lock-ms", "3000", "--board"])
        .arg(&board_b);
        let t0 = Instant::now();
        let (code, _, err) = finish(&mut c, e.local, name, 60);
        (code, err, t0.elapsed())
    };
    let (minus_code, minus_err, _) = second(Some("-300s"), "skew-minus");
    let (plain_code, plain_err, _) = second(None, "skew-plain");
    assert!(holder.done().is_none(), "the holder ended too early");
    signal(pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(300));
    let (take_code, take_err, took) = second(Some("-300s"), "skew-take");
    signal(pid, libc::SIGCONT);
    let holder_code = holder.wait(30);
    assert_eq!(
        minus_code,
        Some(4),
        "B at -300 s vs A at +300 s: {minus_err}"
    );
    assert_eq!(plain_code, Some(4), "B on time vs A at +300 s: {plain_err}");
    assert_eq!(
        take_code,
        Some(0),
        "B at -300 s must take over the stopped holder: {take_err}"
    );
    assert!(
        take_err.contains("took over the board from a stale lock"),
        "{take_err}"
    );
    assert!(
        // At least the stale period, and nowhere near the 300 s skew (a
        // busy machine may add seconds: faketime's start, the game).
        took >= Duration::from_millis(3000) && took < Duration::from_millis(20000),
        "took over after {took:?} (stale period 3 s)"
    );
    // What the continued holder does is the SIGSTOP scenario's business
    // (exit 8 expected; 10 is the write it attempts after losing the board).
    assert!(
        matches!(holder_code, Some(8) | Some(10)),
        "the continued holder: exit {holder_code:?}: {}",
        holder.stderr()
    );
    format!(
        "holder at +300 s: refused a referee at -300 s and one on time (exit 4); stopped, it was \
         taken over by the one at -300 s after {:.1} s (stale period 3 s); continued, it stopped \
         (exit {})",
        took.as_secs_f64(),
        holder_code.unwrap_or(-1)
    )
}

fn full_disk(e: &Env<'_>) -> String {
    let ws = e.drive.ws("full");
    let results = e.local.join("full-results");
    let tmpfs = Tmpfs::mount(&results, "200k");
    let (cfg, _) = config(
        &ws,
        "tournament.toml",
        &results.display().to_string(),
        "games-per-pairing = 10\nconcurrency = 2\nsize = 8",
        "[time]\nmove-ms = 5000",
        &three_builtins(),
    );
    let games = results.join("games.jsonl");
    let (code, _, err) = finish(
        tournament_cmd().arg("run").arg("--config").arg(&cfg),
        e.local,
        "full",
        180,
    );
    let first = Results::read(&games);
    assert_eq!(code, Some(9), "exit status for unwritable results: {err}");
    let last = err.lines().last().unwrap_or("").to_string();
    assert!(
        last.contains("No space left on device") && last.contains(&results.display().to_string()),
        "{last}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(first.partial, 0, "a half-written line");
    assert!(first.bad.is_empty(), "{:?}", first.bad);
    tmpfs.resize("8m");
    let (code, _, err2) = finish(
        tournament_cmd().arg("run").arg("--config").arg(&cfg),
        e.local,
        "full-resumed",
        180,
    );
    assert_eq!(code, Some(0), "{err2}");
    let after = Results::read(&games);
    assert_eq!(after.partial, 0);
    assert!(after.doubled().is_empty(), "{:?}", after.doubled());
    assert_eq!(after.recs.len(), 30);
    drop(tmpfs);
    format!(
        "exit 9 with `{}` after {} complete lines, 0 half lines; resumed on a bigger disk: 30 of \
         30, 0 lost, 0 doubled",
        last.trim_start_matches("error: "),
        first.recs.len()
    )
}

// ---------------------------------------------------------------------------
// The tests: three groups per cache mode.

#[test]
fn cache_no_games() {
    group(Cache::No, "games", games);
}

#[test]
fn cache_no_bots() {
    group(Cache::No, "bots", bots);
}

#[test]
fn cache_no_referee() {
    group(Cache::No, "referee", referee);
}

#[test]
fn cache_default_games() {
    group(Cache::Default, "games", games);
}

#[test]
fn cache_default_bots() {
    group(Cache::Default, "bots", bots);
}

#[test]
fn cache_default_referee() {
    group(Cache::Default, "referee", referee);
}

// ---------------------------------------------------------------------------
// The groups on SMB (`scripts/shared-drive up --smb`, smbnetfs' default
// cache): the scenarios where a Windows share differs from sshfs for the
// referee and the bots (a file someone holds open can be neither replaced
// nor deleted, no O_APPEND through smbnetfs, no links). The bots' links and
// symlinked folders are sshfs's cases: SMB makes neither.

fn smb_games_and_bots(e: &Env<'_>, s: &mut Suite) {
    games_on_b(e, s);
    let unused = e.local.join("unused");
    let b = Bots::on(
        e,
        e.drive.ws("bots"),
        vec![fake("victim", "slow 1500"), fake("stopper", "stop-self")],
        unused.clone(),
        unused,
    );
    killed_and_stopped(&b, s);
}

fn smb_referee(e: &Env<'_>, s: &mut Suite) {
    referees_on_a_and_b(e, s);
    s.run(
        "two referees started at once, on A and on B (another host there)",
        || two_referees_at_once(e),
    );
}

#[test]
fn smb_cache_default_games_and_bots() {
    group_on(
        Client::Smb,
        Cache::Default,
        "games and bots",
        smb_games_and_bots,
    );
}

#[test]
fn smb_cache_default_referee() {
    group_on(Client::Smb, Cache::Default, "referee", smb_referee);
}
