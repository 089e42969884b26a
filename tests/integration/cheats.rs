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
}

const CHEATS: &[Cheat] = &[
    Cheat {
        mode: "kill-others",
        forfeits: None,
    },
    Cheat {
        mode: "write-others",
        forfeits: None,
    },
    Cheat {
        mode: "pipe-others",
        forfeits: None,
    },
    Cheat {
        mode: "hardlink-out",
        forfeits: Some("exited"),
    },
    Cheat {
        mode: "owner",
        forfeits: None,
    },
    Cheat {
        mode: "swap-links",
        forfeits: None,
    },
    Cheat {
        mode: "setsid",
        forfeits: None,
    },
    Cheat {
        mode: "memory",
        forfeits: Some("memory"),
    },
    Cheat {
        mode: "disk",
        forfeits: Some("disk"),
    },
    Cheat {
        mode: "spin",
        forfeits: None,
    },
    Cheat {
        mode: "ptrace",
        forfeits: None,
    },
    Cheat {
        mode: "escape-dir",
        forfeits: None,
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
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
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
    let config = format!(
        "[tournament]\nname = \"cheat\"\ngames-per-pairing = 2\nconcurrency = 2\nsize = 6\n\
         [time]\nmove-ms = 10000\nstartup-ms = 10000\n[openings]\nrandom-plies = 2\nseed = 5\n\
         [[player]]\nname = \"cheat\"\ncommand = [\"python3\", \"{}\", \"{}\", \"{arg}\"]\n{extra}\n\
         [[player]]\nname = \"honest\"\ncommand = [\"python3\", \"{}\", \"{honest}\", \"30\"]\n",
        cheatbot.display(),
        cheat.mode,
        fakebot.display()
    );
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
    let out = (0..50)
        .find_map(|_| match cmd.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(50));
                None
            }
            Ok(out) if busy(&out) => {
                std::thread::sleep(Duration::from_millis(50));
                None
            }
            other => Some(other.unwrap()),
        })
        .expect("the copied binary stayed busy");
    let mut wrong = vec![];
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        wrong.push(format!("the run failed ({}): {stderr}", out.status));
    }
    let records: Vec<GameRecord> = std::fs::read_to_string(root.join("results/games.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    if records.len() != 2 {
        wrong.push(format!("{} games recorded, not 2", records.len()));
    }
    for r in &records {
        let cheat_color = if r.black == "cheat" { "black" } else { "white" };
        match (&r.forfeit, cheat.forfeits) {
            (Some(f), _) if f.color != cheat_color => wrong.push(format!(
                "{}: the honest bot forfeited: {} {}",
                r.id, r.reason, f.detail
            )),
            (_, Some(reason)) if r.reason.code() != reason => wrong.push(format!(
                "{}: the cheat should forfeit `{reason}`, the game ended `{}`",
                r.id, r.reason
            )),
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
    let spin = Cheat {
        mode: "spin",
        forfeits: None,
    };
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
        err.contains("runs as user nobody")
            && err.contains("blocked at")
            && err.contains("fewer than two players"),
        "{err}"
    );
}
