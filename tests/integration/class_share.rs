//! Issue 33's class on a Windows share: the whole tournament folder (board
//! and results) on SMB (`scripts/shared-drive up --smb`: a private Samba
//! on 127.0.0.1, mounted twice with smbnetfs), the referee on mount A ("PC
//! A"), two students' bots started by hand on mount B ("PC B") on the
//! shipped libraries, a bot the referee starts on A and a built-in, in a
//! round robin.
//!
//! Each run: a second referee started on B while the first runs is refused;
//! the first is killed -9 mid-run, and the run is started again on B, which
//! here is truly another host (its own host name, in a UTS namespace), so it
//! takes the board over only once the first one's heartbeat stood still for
//! its stale period; it finishes the round robin, every game normal, none
//! lost or doubled, the games played before the kill kept as they were.
//! Someone on B follows a game with `tournament watch`, and the live page
//! served from B shows the finished event. Once with Python and Ruby
//! students, once with yabasic and bwBASIC students. Needs root, samba,
//! smbnetfs, and each student's interpreter (skipped with the install line
//! without them, see `needs`).

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::faults::{
    smb_prerequisites, tournament_cmd, tournament_on_other_host, Bg, Cache, Drive, Results, SERIAL,
};
use crate::fixture::{project_root, tournament_bin, wait_until, Scratch};
use crate::needs::{self, Need};

/// A student's bot, started by hand on B in its mailbox as B sees it.
struct Student {
    name: &'static str,
    /// The program and its arguments; `{mailbox}` is B's mailbox path.
    argv: Vec<String>,
    need: Option<Need>,
}

impl Student {
    fn start(&self, mailbox_b: &Path, logs: &Path) -> Bg {
        let fill = |a: &String| a.replace("{mailbox}", &mailbox_b.display().to_string());
        Bg::spawn(
            Command::new(fill(&self.argv[0]))
                .args(self.argv[1..].iter().map(fill))
                // bwBASIC reads its mailbox as its working directory only.
                .current_dir(mailbox_b),
            logs,
            &format!("student-{}", self.name),
        )
    }

    fn hand_command(&self) -> String {
        self.argv
            .iter()
            .filter(|a| !a.contains("{mailbox}"))
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn shipped(rel: &str) -> String {
    project_root().join(rel).display().to_string()
}

/// Alice's bot on the shipped Python library (first legal move), written
/// into `dir`.
fn alice_py(dir: &Path) -> String {
    let path = dir.join("alice.py");
    fs::write(
        &path,
        format!(
            "import sys\nsys.path.insert(0, {:?})\nimport mailbox\n\n\
             mailbox.run(lambda turn: min(turn.moves))\n",
            shipped("bots/python")
        ),
    )
    .unwrap();
    path.display().to_string()
}

const GAMES: usize = 12;

/// How the class starts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// The teacher makes the mailbox folders, the students start their
    /// bots, then the referee starts (README, "A class on a shared drive").
    BotsFirst,
    /// The referee first; the students start late, once their mailboxes
    /// are there.
    RefereeFirst,
}

/// `tournament serve` on B: the live page's state once it has the finished
/// event (all games done, no referee running), as JSON text.
fn served_state_on_b(results_b: &Path, logs: &Path) -> String {
    let mut child = Command::new(tournament_bin())
        .args(["serve", "--addr", "127.0.0.1:0", "--results"])
        .arg(results_b)
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .current_dir(logs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let announce = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.starts_with("live page: "))
        .unwrap_or_default();
    let addr = announce
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .map(String::from);
    let get = |addr: &str| -> String {
        let Ok(mut s) = TcpStream::connect(addr) else {
            return String::new();
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = write!(
            s,
            "GET /state HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        );
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text.split_once("\r\n\r\n")
            .map(|(_, body)| body.to_string())
            .unwrap_or_default()
    };
    let mut state = String::new();
    if let Some(addr) = &addr {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            state = get(addr);
            if state.contains(&format!("\"done\":{GAMES}")) {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(addr.is_some(), "serve on B announced no page: {announce:?}");
    state
}

/// The seconds between the first line of a referee's log and its first
/// line containing `needle` (by the lines' RFC 3339 timestamps).
fn secs_until(log: &str, needle: &str) -> Option<f64> {
    let at = |line: &str| humantime::parse_rfc3339_weak(line.split_whitespace().next()?).ok();
    let first = log.lines().find_map(at)?;
    let then = log.lines().find(|l| l.contains(needle)).and_then(at)?;
    Some(then.duration_since(first).ok()?.as_secs_f64())
}

fn class_on_smb(students: [Student; 2], order: Order) {
    let mut needs = smb_prerequisites();
    needs.extend(students.iter().filter_map(|s| s.need));
    needs.push(crate::needs::NODE);
    if !needs::have(&needs) {
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let logs = Scratch::new();
    let drive = Drive::smb(Cache::Default);
    let ws = drive.ws("class");
    let (a, b, x) = (&ws.a, &ws.b, &ws.x);
    let mut toml = String::from(
        "[tournament]\nname = \"class\"\nboard = \"board\"\nresults = \"results\"\n\
         games-per-pairing = 2\nconcurrency = 2\nsize = 6\nstale-lock-ms = 4000\n\n\
         [time]\nmove-ms = 5000\nwait-ms = 60000\n\n[openings]\nrandom-plies = 2\nseed = 33\n",
    );
    for s in &students {
        toml.push_str(&format!(
            "\n[[player]]\nname = \"{}\"\nwait = true\nboard-as = \"{}\"\nhand-command = \"{}\"\n",
            s.name,
            b.join("board").display(),
            s.hand_command()
        ));
    }
    // The referee's own: a bot it starts on A (through the files for its
    // first message, then its pipe) and a built-in.
    toml.push_str(&format!(
        "\n[[player]]\nname = \"js\"\ncommand = [\"node\", \"{}\"]\n",
        shipped("bots/js/minimax.js")
    ));
    toml.push_str("\n[[player]]\nname = \"grd\"\nbuiltin = \"greedy\"\n");
    fs::write(a.join("tournament.toml"), toml).unwrap();
    let (cfg_a, cfg_b) = (a.join("tournament.toml"), b.join("tournament.toml"));
    let mailbox = |root: &Path, name: &str| root.join("board/players").join(name);

    let mut bots = Vec::new();
    if order == Order::BotsFirst {
        for s in &students {
            fs::create_dir_all(mailbox(a, s.name)).unwrap();
        }
        assert!(
            wait_until(10, || students.iter().all(|s| mailbox(b, s.name).is_dir())),
            "B does not see the mailboxes made on A"
        );
        bots = students
            .iter()
            .map(|s| s.start(&mailbox(b, s.name), logs.path()))
            .collect();
    }
    let mut first = Bg::spawn(
        tournament_cmd().arg("run").arg("--config").arg(&cfg_a),
        logs.path(),
        "class-first",
    );
    if order == Order::RefereeFirst {
        assert!(
            wait_until(60, || students.iter().all(|s| mailbox(x, s.name).is_dir())),
            "no mailboxes: {}",
            first.stderr()
        );
        bots = students
            .iter()
            .map(|s| s.start(&mailbox(b, s.name), logs.path()))
            .collect();
    }
    // Someone on B follows a game.
    let mut watch = Bg::spawn(
        tournament_cmd()
            .args(["watch", "--wait-secs", "60", "--config"])
            .arg(&cfg_b),
        logs.path(),
        "class-watch",
    );
    let games = x.join("results/games.jsonl");
    let lines = || Results::read(&games).recs.len();
    assert!(
        wait_until(120, || lines() >= 1 || first.done().is_some()),
        "no game finished: {}",
        first.stderr()
    );
    // A second referee on B while the first runs: refused.
    let mut second = Bg::spawn(
        tournament_on_other_host()
            .arg("run")
            .arg("--config")
            .arg(&cfg_b),
        logs.path(),
        "class-second",
    );
    let second_code = second.wait(60);
    let second_err = second.stderr();
    // The kill comes after the game `watch` follows has ended (`watch`
    // exits then): killed mid-game, `watch` rightly says its referee
    // stopped and exits 1 — a race this check is not about (its game is
    // the newest live one when it looked, one of the first two).
    assert!(
        wait_until(120, || (lines() >= 4 && watch.done().is_some())
            || first.done().is_some()),
        "fewer than 4 games, or the watched game not over: {}",
        first.stderr()
    );
    assert!(
        first.done().is_none(),
        "the first referee ended before it was killed: {}",
        first.stderr()
    );
    first.signal(libc::SIGKILL);
    let _ = first.wait(10);
    let before = Results::read(&games);
    // Started again on B, another host.
    let mut again = Bg::spawn(
        tournament_on_other_host()
            .arg("run")
            .arg("--config")
            .arg(&cfg_b),
        logs.path(),
        "class-again",
    );
    let again_code = again.wait(300);
    let again_err = again.stderr();
    let watched = watch.wait(60);
    let watch_out = watch.stdout();
    let state = served_state_on_b(&b.join("results"), logs.path());
    let status = tournament_cmd()
        .args(["board", "status", "--config"])
        .arg(&cfg_b)
        .output()
        .unwrap();
    drop(bots);

    assert_eq!(
        second_code,
        Some(4),
        "a second referee on B while the first runs: {second_err}"
    );
    assert!(
        second_err.contains(&format!("pid {}", first.pid())),
        "the refusal names the holder: {second_err}"
    );
    assert_eq!(
        again_code,
        Some(0),
        "the run started again on B: {again_err}"
    );
    let took = secs_until(&again_err, "took over the board from a stale lock")
        .unwrap_or_else(|| panic!("B did not take the board over: {again_err}"));
    assert!(
        took >= 3.5,
        "B took the board over {took:.1} s after it started, before the 4 s stale period"
    );
    let after = Results::read(&games);
    assert_eq!(after.partial, 0, "half a line in games.jsonl");
    assert!(after.bad.is_empty(), "{:?}", after.bad);
    assert!(after.doubled().is_empty(), "doubled: {:?}", after.doubled());
    assert_eq!(after.recs.len(), GAMES, "games: {:?}", after.recs.len());
    assert!(after.not_normal().is_empty(), "{:#?}", after.not_normal());
    assert_eq!(
        after.recs[..before.recs.len()],
        before.recs[..],
        "the games played before the kill are kept as they were"
    );
    for s in &students {
        let played = after.recs.iter().filter(|r| r.color_of(s.name).is_some());
        assert_eq!(played.count(), 6, "{} plays 6 games", s.name);
    }
    assert_eq!(
        watched,
        Some(0),
        "watch on B: {watch_out}{}",
        watch.stderr()
    );
    assert!(watch_out.contains("game over: "), "watch on B: {watch_out}");
    for s in &students {
        assert!(state.contains(s.name), "the live page on B: {state}");
    }
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("owner: none"),
        "board status on B: {status}"
    );
    // Nothing the referees write through the share is left half done, and
    // no live file stays (the one `watch` held open on B, which the share
    // would not let the referee remove then, went later).
    let leftovers: Vec<PathBuf> = fs::read_dir(x.join("board/players"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".tmp-"))
        })
        .chain(
            fs::read_dir(x.join("results/live"))
                .unwrap()
                .flatten()
                .map(|e| e.path()),
        )
        .collect();
    assert!(
        leftovers.is_empty(),
        "{:?}\nthe run started again on B: {again_err}",
        leftovers
            .iter()
            .map(|p| (p, fs::read_to_string(p).unwrap_or_default()))
            .collect::<Vec<_>>()
    );
    println!(
        "class on SMB: {} games before the kill -9, the rest by the referee started again on B, \
         which took the board over {took:.1} s after it started (stale period 4 s); {GAMES} of \
         {GAMES} normal, 0 doubled",
        before.recs.len()
    );
}

#[test]
fn a_class_on_a_windows_share_with_python_and_ruby_students() {
    let logs = Scratch::new();
    let alice = alice_py(logs.path());
    class_on_smb(
        [
            Student {
                name: "alice",
                argv: vec!["python3".into(), alice, "{mailbox}".into()],
                need: None,
            },
            Student {
                name: "bob",
                argv: vec![
                    "ruby".into(),
                    shipped("bots/ruby/greedy.rb"),
                    "{mailbox}".into(),
                ],
                need: Some(crate::needs::RUBY),
            },
        ],
        Order::BotsFirst,
    );
    drop(logs);
}

#[test]
fn a_class_on_a_windows_share_with_yabasic_and_bwbasic_students() {
    class_on_smb(
        [
            Student {
                name: "carol",
                argv: vec![
                    "yabasic".into(),
                    shipped("bots/yabasic/greedy.yab"),
                    "{mailbox}".into(),
                ],
                need: Some(crate::needs::YABASIC),
            },
            Student {
                name: "dave",
                // Started in its mailbox (bwBASIC takes no argument).
                argv: vec!["bwbasic".into(), shipped("bots/bwbasic/greedy.bas")],
                need: Some(crate::needs::BWBASIC),
            },
        ],
        Order::RefereeFirst,
    );
}
