//! The cheat suite: real cheating bots (tests/fixtures/cheatbot.py) in a
//! real interpreter against the real kernel sandbox. Each cheat plays two
//! games, colours swapped, against an honest bot that thinks 30 ms a move:
//! the honest bot never forfeits, the run exits 0 with both games
//! recorded, nothing outside the board changes, no process survives.
//! Run once with the referee as the test's user (root in CI) and once as
//! an unprivileged user.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use tournament::record::GameRecord;

use crate::fixture::{project_root, tournament_bin, Scratch};

struct Cheat {
    mode: &'static str,
    /// The reason the cheat must forfeit with, in both games, if any.
    forfeits: Option<&'static str>,
    /// The reasons it may forfeit with: where the machine or the referee's
    /// user stops it (a control group's memory limit), or a move it makes
    /// on purpose.
    may_forfeit: &'static [&'static str],
    /// More lines for the cheat's `[[player]]` table.
    extra: &'static str,
    /// How many honest players it meets (the second and later ones are
    /// started afresh for every game, while the cheat may hold what all
    /// bots share).
    field: usize,
}

const fn cheat(mode: &'static str, forfeits: Option<&'static str>) -> Cheat {
    Cheat {
        mode,
        forfeits,
        may_forfeit: &[],
        extra: "",
        field: 1,
    }
}

const CHEATS: &[Cheat] = &[
    cheat("kill-others", None),
    cheat("write-others", None),
    cheat("pipe-others", None),
    cheat("hardlink-out", Some("exited")),
    cheat("owner", None),
    cheat("swap-links", None),
    cheat("setsid", None),
    cheat("memory", Some("memory")),
    cheat("disk", Some("disk")),
    cheat("spin", None),
    cheat("ptrace", None),
    cheat("escape-dir", None),
    // (10) Holds the process budget from its first NEW; honest bots are
    // started while it holds it.
    Cheat {
        mode: "hold-processes",
        forfeits: None,
        may_forfeit: &[],
        extra: "",
        field: 3,
    },
    // (11) Memory outside its address space, beyond memory-mb: stopped
    // where a control group counts it (root here), else released with it.
    Cheat {
        mode: "hold-memory",
        forfeits: None,
        may_forfeit: &["memory"],
        extra: "memory-mb = 512\ndisk-mb = 64\n",
        field: 1,
    },
    // (12) The opponent's scratch folder, the running game's log, the
    // schedule, the configuration, other mailboxes.
    cheat("read-others", None),
    // (13) Two copies of one bot, playing two games at once, talking.
    cheat("talk", None),
    // (14) /proc and a user namespace of its own.
    cheat("list-proc", None),
    // (15) In a tournament it plays a1 (check_bot_cannot_be_told_from_a_tournament
    // shows check-bot sees the same).
    Cheat {
        mode: "tell-apart",
        forfeits: None,
        may_forfeit: &["no-flips", "occupied"],
        extra: "",
        field: 1,
    },
];

/// What the referee runs as.
#[derive(Clone, Copy)]
enum Referee {
    /// The test's own user (root in CI).
    Me,
    /// `nobody`, through setpriv (needs root to set up).
    Nobody,
}

fn copy_into(dir: &Path, from: &Path) -> PathBuf {
    let to = dir.join(from.file_name().unwrap());
    std::fs::copy(from, &to).unwrap();
    std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
    to
}

/// Every process whose working folder is below `dir` or whose command
/// line holds `marker`.
fn survivors(dir: &Path, marker: &str) -> Vec<String> {
    let mut out = vec![];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_err() {
            continue;
        }
        if crate::fixture::stat_fields(&entry.path().join("stat"))
            .is_some_and(|f| f.first().is_some_and(|state| state == "Z"))
        {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        if cmdline.contains(marker) || cwd.is_some_and(|c| c.starts_with(dir)) {
            out.push(format!("{name}: {cmdline}"));
        }
    }
    out
}

fn snapshot(p: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

/// Plays one cheat; returns what went wrong (empty when it gained nothing).
fn play_cheat(cheat: &Cheat, referee: Referee) -> Vec<String> {
    play_cheat_with(cheat, referee, "")
}

/// [`play_cheat`], with `extra` lines in the cheat's `[[player]]` table.
fn play_cheat_with(cheat: &Cheat, referee: Referee, extra: &str) -> Vec<String> {
    let s = Scratch::new();
    let root = s.path().to_path_buf();
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::set_permissions(&tools, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = match referee {
        Referee::Me => tournament_bin(),
        // Under /root it would be out of nobody's reach.
        Referee::Nobody => copy_into(&tools, &tournament_bin()),
    };
    let cheatbot = copy_into(&tools, &project_root().join("tests/fixtures/cheatbot.py"));
    let fakebot = copy_into(&tools, &project_root().join("tests/fixtures/fakebot.py"));
    // Something precious outside the board, and an empty folder.
    let secret = s.write("outside/secret.txt", "precious\n");
    let empty = root.join("outside/empty");
    std::fs::create_dir_all(&empty).unwrap();
    // Unique to this run of this cheat: the two suites run side by side.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let marker = format!(
        "4242.{}{}",
        std::process::id(),
        RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let arg = match cheat.mode {
        "hardlink-out" => secret.display().to_string(),
        "swap-links" => empty.display().to_string(),
        "setsid" => marker.clone(),
        // The honest bot's thinking time, which the spinner must not get.
        "spin" => "30".into(),
        _ => "-".into(),
    };
    // Against a cheat at the pipes, the honest bot is on its pipe.
    let honest = if cheat.mode == "pipe-others" {
        "pipe-ok"
    } else {
        "slow"
    };
    let extra = format!("{}{extra}", cheat.extra);
    let mut config = format!(
        "[tournament]\nname = \"cheat\"\ngames-per-pairing = 2\nconcurrency = 2\nsize = 6\n\
         [time]\nmove-ms = 10000\nstartup-ms = 10000\n[openings]\nrandom-plies = 2\nseed = 5\n\
         [[player]]\nname = \"cheat\"\ncommand = [\"python3\", \"{}\", \"{}\", \"{arg}\"]\n{extra}\n\
         [[player]]\nname = \"honest\"\ncommand = [\"python3\", \"{}\", \"{honest}\", \"30\"]\n",
        cheatbot.display(),
        cheat.mode,
        fakebot.display()
    );
    for k in 2..=cheat.field {
        config.push_str(&format!(
            "[[player]]\nname = \"honest{k}\"\nrestart = \"per-game\"\ncommand = [\"python3\", \"{}\", \"{honest}\", \"30\"]\n",
            fakebot.display()
        ));
    }
    let players = cheat.field + 1;
    let games = players * (players - 1);
    s.write("tournament.toml", &config);
    for dir in [&root, &root.join("outside")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let before = snapshot(&secret);
    let mut cmd = match referee {
        Referee::Me => Command::new(&bin),
        Referee::Nobody => {
            // The referee's own folders belong to it.
            Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&root)
                .status()
                .unwrap();
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
                .arg(&bin);
            c
        }
    };
    cmd.arg("run")
        .current_dir(&root)
        .env("NO_COLOR", "1")
        .env_remove("TOURNAMENT_LOG");
    // A binary just copied can be "busy" for a moment while another test
    // thread forks with the copy's descriptor open (setpriv then fails to
    // run it: exit 126, saying so).
    let busy = |out: &std::process::Output| {
        out.status.code() == Some(126)
            && String::from_utf8_lossy(&out.stderr).contains("Text file busy")
    };
    let ipc_before = host_ipc_objects();
    let (out, referee_pid) = (0..50)
        .find_map(|_| match run_with_pid(&mut cmd) {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(50));
                None
            }
            Ok((out, _)) if busy(&out) => {
                std::thread::sleep(Duration::from_millis(50));
                None
            }
            other => Some(other.unwrap()),
        })
        .expect("the copied binary stayed busy");
    let mut wrong = vec![];
    let ipc_after = host_ipc_objects();
    if ipc_after > ipc_before {
        wrong.push(format!(
            "System V objects were left in the machine's IPC namespace: {ipc_before} before, {ipc_after} after"
        ));
    }
    let groups = control_groups_of(referee_pid);
    if !groups.is_empty() {
        wrong.push(format!("control groups were left: {groups:?}"));
    }
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        wrong.push(format!("the run failed ({}): {stderr}", out.status));
    }
    let records: Vec<GameRecord> = std::fs::read_to_string(root.join("results/games.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    if records.len() != games {
        wrong.push(format!("{} games recorded, not {games}", records.len()));
    }
    for r in &records {
        let cheat_plays = r.black == "cheat" || r.white == "cheat";
        let forfeiter = r.forfeit.as_ref().map(|f| r.player(f.color));
        let cheat_forfeits = if cheat_plays { cheat.forfeits } else { None };
        match (&r.forfeit, cheat_forfeits) {
            (Some(f), _) if forfeiter != Some("cheat") => wrong.push(format!(
                "{}: an honest bot forfeited: {} {}",
                r.id, r.reason, f.detail
            )),
            (_, Some(reason)) if r.reason.code() != reason => wrong.push(format!(
                "{}: the cheat should forfeit `{reason}`, the game ended `{}`",
                r.id, r.reason
            )),
            (Some(f), None) if !cheat.may_forfeit.contains(&r.reason.code()) => {
                wrong.push(format!(
                    "{}: the cheat forfeited `{}` ({})",
                    r.id, r.reason, f.detail
                ))
            }
            _ => {}
        }
    }
    if snapshot(&secret) != before {
        wrong.push("a file outside the board changed".into());
    }
    if std::fs::read_dir(&empty).unwrap().count() != 0 {
        wrong.push("a folder outside the board got files".into());
    }
    for stray in [
        root.join("cheat.txt"),
        PathBuf::from("/tmp/cheat-was-here.txt"),
    ] {
        if stray.exists() {
            wrong.push(format!("the cheat wrote {}", stray.display()));
            let _ = std::fs::remove_file(&stray);
        }
    }
    // Nothing of the run is left: not the bots, not what they started.
    std::thread::sleep(Duration::from_millis(200));
    let left = survivors(&root, &marker);
    if !left.is_empty() {
        wrong.push(format!("processes survived: {left:?}"));
    }
    if cheat.mode == "spin" {
        wrong.extend(spin_share(&root));
    }
    // Every attempt on something that is not the bot's own must have been
    // refused (starting its own children is allowed).
    if cheat.mode != "setsid" {
        wrong.extend(
            log_lines(&root)
                .into_iter()
                .filter(|l| l.contains("[cheat ") && l.contains(": done"))
                .map(|l| format!("an attempt went through: {l}")),
        );
    }
    wrong
        .into_iter()
        .map(|w| format!("{}: {w}", cheat.mode))
        .collect()
}

/// Runs `cmd` to its end, with the pid it had.
fn run_with_pid(cmd: &mut Command) -> std::io::Result<(std::process::Output, u32)> {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let pid = child.id();
    Ok((child.wait_with_output()?, pid))
}

/// The System V segments, queues and semaphore sets of the machine's own
/// IPC namespace (a bot's own namespace is not seen here).
fn host_ipc_objects() -> usize {
    ["shm", "msg", "sem"]
        .iter()
        .map(|k| {
            std::fs::read_to_string(format!("/proc/sysvipc/{k}"))
                .map_or(0, |t| t.lines().count().saturating_sub(1))
        })
        .sum()
}

/// The control groups a referee with this pid made (`tournament-PID`,
/// in any hierarchy), if any are left.
fn control_groups_of(pid: u32) -> Vec<PathBuf> {
    fn walk(dir: &Path, name: &str, depth: u32, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if e.file_name() == name {
                out.push(e.path());
            } else if depth > 0 {
                walk(&e.path(), name, depth - 1, out);
            }
        }
    }
    let mut out = vec![];
    walk(
        Path::new("/sys/fs/cgroup"),
        &format!("tournament-{pid}"),
        4,
        &mut out,
    );
    out
}

/// Every line of the run's game logs.
fn log_lines(root: &Path) -> Vec<String> {
    let mut out = vec![];
    if let Ok(logs) = std::fs::read_dir(root.join("results/logs")) {
        for log in logs.flatten() {
            let text = std::fs::read_to_string(log.path()).unwrap_or_default();
            out.extend(text.lines().map(str::to_string));
        }
    }
    out
}

/// The spinning bot's CPU between its moves, against the wall time the
/// opponent spent meanwhile: at most 10 %.
fn spin_share(root: &Path) -> Vec<String> {
    let (mut cpu, mut wall, mut samples) = (0.0, 0.0, 0);
    for line in log_lines(root) {
        let Some(rest) = line.split("between moves: cpu ").nth(1) else {
            continue;
        };
        let nums: Vec<f64> = rest.split(' ').filter_map(|w| w.parse().ok()).collect();
        if let [c, w] = nums[..] {
            cpu += c;
            wall += w;
            samples += 1;
        }
    }
    if samples < 10 {
        return vec![format!(
            "only {samples} samples of the spinner's CPU in the logs"
        )];
    }
    let share = cpu / wall;
    if share > 0.10 {
        vec![format!(
            "the spinner used {:.0} % of a core while its opponent thought ({cpu:.0} ms of {wall:.0} ms, {samples} moves)",
            share * 100.0
        )]
    } else {
        vec![]
    }
}

fn run_suite(referee: Referee) {
    let wrong: Vec<String> = CHEATS.iter().flat_map(|c| play_cheat(c, referee)).collect();
    assert!(
        wrong.is_empty(),
        "cheats that gained something:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn cheating_bots_gain_nothing() {
    run_suite(Referee::Me);
}

#[test]
fn cheating_bots_gain_nothing_under_an_unprivileged_referee() {
    // The referee runs as `nobody` through setpriv: root sets that up.
    if !crate::needs::have(&[crate::needs::ROOT]) {
        return;
    }
    run_suite(Referee::Nobody);
}

/// The spinner's measure can fail: a bot allowed to ponder gets most of
/// its opponent's thinking time.
#[test]
fn a_pondering_spinner_is_seen_spinning() {
    let spin = cheat("spin", None);
    let wrong = play_cheat_with(&spin, Referee::Me, "ponder = true");
    assert!(
        wrong.iter().any(|w| w.contains("the spinner used")),
        "a bot with ponder = true should spin while its opponent thinks: {wrong:?}"
    );
}

/// Nothing a bot started outlives a referee killed with -9: not the bot,
/// not its `setsid` children.
#[test]
fn a_referee_killed_9_leaves_no_bot_process() {
    let s = Scratch::new();
    let root = s.path().to_path_buf();
    let marker = format!("4343.{}", std::process::id());
    let cheatbot = project_root().join("tests/fixtures/cheatbot.py");
    let fakebot = project_root().join("tests/fixtures/fakebot.py");
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"k9\"\ngames-per-pairing = 2\nconcurrency = 2\nsize = 8\n\
             [time]\nmove-ms = 10000\n[openings]\nrandom-plies = 0\nseed = 1\n\
             [[player]]\nname = \"cheat\"\ncommand = [\"python3\", \"{}\", \"setsid\", \"{marker}\"]\n\
             [[player]]\nname = \"honest\"\ncommand = [\"python3\", \"{}\", \"slow\", \"200\"]\n",
            cheatbot.display(),
            fakebot.display()
        ),
    );
    let mut child = Command::new(tournament_bin())
        .arg("run")
        .current_dir(&root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Both games under way, every setsid child started.
    let started = crate::fixture::wait_until(60, || {
        log_lines(&root)
            .iter()
            .filter(|l| l.contains("child started"))
            .count()
            >= 40
    });
    let before = survivors(&root, &marker);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(started, "the cheats did not start their children");
    assert!(
        before.len() >= 40,
        "the children were not running: {before:?}"
    );
    let gone = crate::fixture::wait_until(10, || survivors(&root, &marker).is_empty());
    assert!(gone, "left behind: {:?}", survivors(&root, &marker));
}

/// As root, bots run as `nobody`: an interpreter first on PATH in a folder
/// nobody cannot enter (pyenv under /root) gives way to the next one on
/// PATH that nobody can reach, said once; with none, the player is
/// skipped like a missing interpreter and the run says why.
#[test]
fn an_interpreter_out_of_the_bots_reach_gives_way_to_one_in_reach() {
    // A root referee's bots run as `nobody`: the case this test is about.
    if !crate::needs::have(&[crate::needs::ROOT]) {
        return;
    }
    let s = Scratch::new();
    let root = s.path().to_path_buf();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::set_permissions(&tools, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fakebot = copy_into(&tools, &project_root().join("tests/fixtures/fakebot.py"));
    let shim = s.write(
        "private/bin/python3",
        "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n",
    );
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(root.join("private"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let player = |name: &str| {
        format!(
            "[[player]]\nname = \"{name}\"\ncommand = [\"python3\", \"{}\", \"slow\", \"1\"]\n",
            fakebot.display()
        )
    };
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"reach\"\ngames-per-pairing = 2\nsize = 6\n[time]\nmove-ms = 10000\n{}{}",
            player("a"),
            player("b")
        ),
    );
    let private_bin = root.join("private/bin").display().to_string();
    let run = |path: &str| {
        assert_cmd::Command::new(tournament_bin())
            .current_dir(&root)
            .arg("run")
            .env("PATH", path)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap()
    };

    let out = run(&format!("{private_bin}:/usr/bin:/bin"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let said = format!("{private_bin}/python3 is out of reach of the bots' user");
    assert_eq!(err.matches(&said).count(), 1, "said once: {err}");
    assert!(err.contains("bots use /usr/bin/python3"), "{err}");
    let games = std::fs::read_to_string(root.join("results/games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 2, "{games}");
    assert!(!games.contains("forfeit"), "{games}");

    std::fs::remove_dir_all(root.join("results")).unwrap();
    let out = run(&private_bin);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("runs as a user id of its own")
            && err.contains("blocked at")
            && err.contains("fewer than two players"),
        "{err}"
    );

    // The same interpreter through a link in a folder everyone may enter
    // (as a PATH of links to interpreters is made): the folder the link
    // leads into is named, not a `chmod +x` of the link.
    let _ = std::fs::remove_dir_all(root.join("results"));
    let linked = root.join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::fs::set_permissions(&linked, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&shim, linked.join("python3")).unwrap();
    let out = run(&linked.display().to_string());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains(&format!("blocked at {}", root.join("private").display())),
        "{err}"
    );
    assert!(!err.contains("chmod +x"), "{err}");
}

/// A referee that is not root, under a low process limit (`ulimit -u`),
/// against a bot that starts threads until refused: that bot gets only
/// its share, and another program of the referee's user that takes what
/// is left is waited out while it holds it; a limit too low for a game
/// stops the run with exit 11 (no panic, nothing half-recorded, no honest
/// bot charged), and the run resumed afterwards completes the tournament.
#[test]
fn a_referee_short_of_processes_waits_or_stops_without_a_panic() {
    // A user of the test's own (not nobody, whom other tests use at the
    // same time: the limit counts every process of the user).
    const UID: &str = "54321";
    if !crate::needs::have(&[crate::needs::ROOT]) {
        return;
    }
    let s = Scratch::new();
    let root = s.path().to_path_buf();
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::set_permissions(&tools, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = copy_into(&tools, &tournament_bin());
    let cheatbot = copy_into(&tools, &project_root().join("tests/fixtures/cheatbot.py"));
    let fakebot = copy_into(&tools, &project_root().join("tests/fixtures/fakebot.py"));
    // Takes every process it can until the deadline, and says `full` the
    // first time the limit refuses it one.
    let hog = s.write(
        "tools/hog.py",
        r#"import sys, threading, time
ev = threading.Event()
end = time.monotonic() + float(sys.argv[1])
full = False
while time.monotonic() < end:
    try:
        threading.Thread(target=ev.wait, daemon=True).start()
    except Exception:
        if not full:
            full = True
            print("full", flush=True)
        time.sleep(0.0002)
"#,
    );
    let mut config = format!(
        "[tournament]\nname = \"short\"\ngames-per-pairing = 2\nconcurrency = 2\nsize = 6\n\
         [time]\nmove-ms = 10000\nstartup-ms = 10000\n[openings]\nrandom-plies = 2\nseed = 5\n\
         [[player]]\nname = \"cheat\"\ncommand = [\"python3\", \"{}\", \"hold-processes\", \"3000\"]\n",
        cheatbot.display()
    );
    for k in 1..=3 {
        config.push_str(&format!(
            "[[player]]\nname = \"honest{k}\"\nrestart = \"per-game\"\ncommand = [\"python3\", \"{}\", \"slow\", \"30\"]\n",
            fakebot.display()
        ));
    }
    s.write("tournament.toml", &config);
    let own = || {
        Command::new("chown")
            .args(["-R", &format!("{UID}:{UID}")])
            .arg(&root)
            .status()
            .unwrap();
    };
    let as_user = |program: &Path, nproc: u32| {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={UID}"),
            &format!("--regid={UID}"),
            "--clear-groups",
            "--",
            "prlimit",
            &format!("--nproc={nproc}"),
            "--",
        ])
        .arg(program)
        .current_dir(&root)
        .env("NO_COLOR", "1")
        .env_remove("TOURNAMENT_LOG");
        c
    };
    let records = || crate::fixture::whole_records(&root.join("results/games.jsonl"));
    let honest_forfeits = |records: &[GameRecord]| -> Vec<String> {
        records
            .iter()
            .filter_map(|r| {
                let f = r.forfeit.as_ref()?;
                let who = r.player(f.color);
                (who != "cheat").then(|| format!("{}: {who} {} {}", r.id, r.reason, f.detail))
            })
            .collect()
    };
    let run = |hog_secs: Option<&str>, nproc: u32| {
        own();
        let child = as_user(&bin, nproc)
            .arg("run")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let holder = hog_secs.map(|secs| {
            // Once a game is recorded, another program of the same user
            // takes every process it can, and each one freed, for a while.
            assert!(
                crate::fixture::wait_until(60, || !records().is_empty()),
                "no game was recorded"
            );
            let mut h = as_user(&crate::fixture::python3_every_user_can_run(), nproc);
            h.arg(&hog).arg(secs).stdout(std::process::Stdio::piped());
            h.spawn().unwrap()
        });
        let out = child.wait_with_output().unwrap();
        let held = holder.map(|mut h| {
            let _ = h.kill();
            let said = h.wait_with_output().unwrap().stdout;
            String::from_utf8_lossy(&said).contains("full")
        });
        (out, held)
    };

    // Alone, the greedy bot gets its share and the run completes.
    let (out, _) = run(None, 200);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("gets at most"), "the share is said: {err}");
    assert_eq!(records().len(), 12);
    assert_eq!(honest_forfeits(&records()), Vec::<String>::new());

    // Another program takes every process it can for 3 s: waited out.
    std::fs::remove_dir_all(root.join("results")).unwrap();
    let (out, held) = run(Some("3"), 200);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(held, Some(true), "the other program held every process");
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(records().len(), 12);
    assert_eq!(honest_forfeits(&records()), Vec::<String>::new());

    // A limit too low for even one game: exit 11 after the wait, no
    // panic, nothing recorded for anyone; the run resumed under a
    // workable limit completes the tournament.
    std::fs::remove_dir_all(root.join("results")).unwrap();
    let (out, _) = run(None, 14);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(11), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("refused"), "{err}");
    let before = records();
    assert!(before.len() < 12, "{} games", before.len());
    assert_eq!(honest_forfeits(&before), Vec::<String>::new());
    let (out, _) = run(None, 200);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let after = records();
    assert_eq!(after.len(), 12, "nothing lost, nothing doubled");
    assert_eq!(honest_forfeits(&after), Vec::<String>::new());
}

/// `check-bot -- python3 cheatbot.py MODE` run in `dir`.
fn check_cheatbot(dir: &Path, cheatbot: &Path, mode: &str) -> std::process::Output {
    assert_cmd::Command::new(tournament_bin())
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(["check-bot", "--"])
        .arg("python3")
        .arg(cheatbot)
        .arg(mode)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap()
}

/// check-bot stops where a bot goes over its sandbox's disk limit (in a
/// tournament, a forfeit) and says which limit, instead of blaming the
/// bot's framing of out.txt and starting it again.
#[test]
fn check_bot_stops_at_a_broken_disk_limit_and_names_it() {
    let s = Scratch::new();
    let cheatbot = copy_into(s.path(), &project_root().join("tests/fixtures/cheatbot.py"));
    // 64 MiB more in its TMPDIR at every TURN: past 256 MiB by the fifth.
    let out = check_cheatbot(s.path(), &cheatbot, "disk");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("went over its sandbox's disk limit"),
        "{text}"
    );
    assert!(text.contains("disk-mb"), "{text}");
    assert!(!text.contains("never make links or folders"), "{text}");
    assert!(!text.contains("check-bot restarted the bot"), "{text}");
}

/// (15) A bot that looks for signs of check-bot (its mailbox path, the
/// command lines it can see, its environment, the game's name) and plays
/// fair only there finds none: it plays as in a tournament, and check-bot
/// fails it — on the tournament's own board, and on a temporary one.
#[test]
fn check_bot_cannot_be_told_from_a_tournament() {
    let s = Scratch::new();
    let root = s.path().to_path_buf();
    let cheatbot = copy_into(&root, &project_root().join("tests/fixtures/cheatbot.py"));
    let check = |dir: &Path| check_cheatbot(dir, &cheatbot, "tell-apart");
    // Beside a tournament.toml: its board.
    let class = root.join("class");
    std::fs::create_dir_all(&class).unwrap();
    std::fs::write(
        class.join("tournament.toml"),
        "[tournament]\nname = \"class\"\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\
         [[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n",
    )
    .unwrap();
    for dir in [&class, &root] {
        let out = check(dir);
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(7), "{said}");
        assert!(
            !said.contains("this is check-bot"),
            "the bot saw check-bot in {}: {said}",
            dir.display()
        );
    }
    assert!(
        class.join("board/players").is_dir(),
        "checked on the tournament's board"
    );
}
