//! Issue 13, results side: hostile results folders, files and command
//! lines, each reproduced as a careless or hostile user would, with the
//! right outcome checked (see FAULTS.md, "Hostile files and commands").

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::fixture::*;

/// A 4x4 tournament of `players` into `results`, on `board`.
fn toml(board: &str, results: &str, players: &[(&str, &str)]) -> String {
    let mut t = format!(
        "[tournament]\nname = \"hostile\"\nboard = \"{board}\"\nresults = \"{results}\"\n\
         games-per-pairing = 2\nsize = 4\n\n[time]\nmove-ms = 3000\nstartup-ms = 5000\n"
    );
    for (name, how) in players {
        t.push_str(&format!("\n[[player]]\nname = \"{name}\"\n{how}\n"));
    }
    t
}

fn builtins() -> Vec<(&'static str, &'static str)> {
    vec![("a", "builtin = \"random\""), ("b", "builtin = \"greedy\"")]
}

fn command(cmdline: &str) -> String {
    let parts: Vec<String> = cmdline.split(' ').map(|p| format!("{p:?}")).collect();
    format!("command = [{}]", parts.join(", "))
}

fn ids(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Item 3: two referees with different boards and one results folder.
#[test]
fn a_second_referee_on_the_same_results_folder_is_refused() {
    let s = Scratch::new();
    let slow = command(&fakebot("slow 150"));
    s.write(
        "one.toml",
        &toml(
            "board1",
            "shared",
            &[("slow", &slow), ("b", "builtin = \"greedy\"")],
        ),
    );
    s.write(
        "two.toml",
        &toml(
            "board2",
            "shared",
            &[("slow", &slow), ("b", "builtin = \"greedy\"")],
        ),
    );
    let mut first = Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["run", "--config", "one.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(20, || s
        .join("shared/live")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())));
    let out = s
        .cmd(&["run", "--config", "two.toml"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("results folder"), "{err}");
    assert!(
        err.contains(&format!("pid {}", first.id())),
        "the holder is named: {err}"
    );
    assert!(first.wait().unwrap().success());
    let text = std::fs::read_to_string(s.join("shared/games.jsonl")).unwrap();
    let got = ids(&text);
    let mut unique = got.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(got.len(), 2, "each game once: {text}");
    assert_eq!(unique.len(), 2);
}

/// Item 4: a line appended twice counts once everywhere; a record with
/// the same id from another tournament (another size) is refused.
#[test]
fn a_doubled_line_counts_once_and_a_foreign_record_is_refused() {
    let s = Scratch::new();
    s.write("tournament.toml", &toml("board", "results", &builtins()));
    s.run_ok(&["run"], 60);
    let games = s.join("results/games.jsonl");
    let text = std::fs::read_to_string(&games).unwrap();
    let first = text.lines().next().unwrap().to_string();
    std::fs::write(&games, format!("{text}{first}\n")).unwrap();
    let out = s.run_ok(&["crosstable", "--format", "json"], 30);
    let err = stderr(&out);
    assert!(err.contains("games.jsonl:3: game"), "{err}");
    assert!(err.contains("first recorded at line 1"), "{err}");
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(table["games"], 2, "{table}");
    // The resume sees both games played and adds nothing.
    s.run_ok(&["run"], 60);
    assert_eq!(std::fs::read_to_string(&games).unwrap().lines().count(), 3);
    // The same id from a 6x6 tournament.
    let mut foreign: serde_json::Value = serde_json::from_str(&first).unwrap();
    foreign["size"] = 6.into();
    let second = text.lines().nth(1).unwrap();
    std::fs::write(&games, format!("{second}\n{foreign}\n")).unwrap();
    for args in [&["crosstable"][..], &["run"], &["report"]] {
        let out = s
            .cmd(args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {err}");
        assert!(err.contains("games.jsonl:2: game"), "{err}");
        assert!(err.contains("6x6"), "{err}");
    }
}

/// Item 5: a cut last line (a crash mid-write, a cut copy) with its game
/// marked done: set aside, and the resume goes on at once.
#[test]
fn a_cut_last_line_is_set_aside_and_the_resume_goes_on() {
    let s = Scratch::new();
    s.write("tournament.toml", &toml("board", "results", &builtins()));
    s.run_ok(&["run"], 60);
    let games = s.join("results/games.jsonl");
    let text = std::fs::read_to_string(&games).unwrap();
    let cut = &text[..text.len() - 40];
    std::fs::write(&games, cut).unwrap();
    let clock = Instant::now();
    let out = s.run_ok(&["run"], 40);
    assert!(
        clock.elapsed() < Duration::from_secs(30),
        "no wait for a drive cache"
    );
    let err = stderr(&out);
    assert!(err.contains("games.cut.jsonl"), "{err}");
    assert!(err.contains("games.jsonl:2"), "the line is named: {err}");
    let after = std::fs::read_to_string(&games).unwrap();
    let mut got = ids(&after);
    got.sort();
    assert_eq!(got.len(), 2, "{after}");
    assert_ne!(got[0], got[1]);
    let aside = std::fs::read_to_string(s.join("results/games.cut.jsonl")).unwrap();
    let tail = &cut[text.lines().next().unwrap().len() + 1..];
    assert_eq!(aside, format!("{tail}\n"), "nothing lost");
}

/// Item 6: `watch` takes a game id, not a path; it stops following the
/// game of a referee killed with -9.
#[test]
fn watch_refuses_paths_and_leaves_the_game_of_a_killed_referee() {
    let s = Scratch::new();
    s.write("secret.jsonl", "{\"event\":\"start\"}\n");
    for game in ["../../secret", "/etc/passwd", "../secret"] {
        let out = s
            .cmd(&["watch", game, "--wait-secs", "1"])
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{game}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is not a game id"),
            "{}",
            stderr(&out)
        );
    }
    let log = s.join("bots.log");
    s.write(
        "tournament.toml",
        &toml(
            "board",
            "results",
            &[
                ("slow", &command(&fakebot("slow 300"))),
                ("b", "builtin = \"greedy\""),
            ],
        ),
    );
    let mut run = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .env("FAKEBOT_LOG", &log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(20, || s
        .join("results/live")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())));
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(run.id() as i32, libc::SIGKILL) };
    run.wait().unwrap();
    // Its bots (each the leader of its own group) go too.
    for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
        if let Some(pid) = line.split(' ').next().and_then(|p| p.parse::<i32>().ok()) {
            // SAFETY: a signal to the group of a bot this test started.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
    }
    let clock = Instant::now();
    let out = s
        .cmd(&["watch", "--wait-secs", "3"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("not going on"), "{text}");
    assert!(clock.elapsed() < Duration::from_secs(20));
}

/// Item 7: commands that write a file refuse the results, the config
/// and the board, and make no missing folders.
#[test]
fn writing_commands_refuse_protected_targets_and_missing_folders() {
    let s = Scratch::new();
    let config = toml("board", "results", &builtins());
    s.write("tournament.toml", &config);
    s.run_ok(&["run"], 60);
    let games = std::fs::read(s.join("results/games.jsonl")).unwrap();
    std::os::unix::fs::symlink(s.join("results/games.jsonl"), s.join("innocent.ggf")).unwrap();
    std::fs::hard_link(s.join("tournament.toml"), s.join("hard.html")).unwrap();
    let cases: &[&[&str]] = &[
        &["export", "--ggf", "results/games.jsonl"],
        &["export", "--ggf", "results/schedule.json"],
        &["export", "--ggf", "innocent.ggf"],
        &["export", "--ggf", "board/x.ggf"],
        &["export", "--wthor", "board"],
        &["export", "--wthor", "results/done"],
        &["report", "-o", "tournament.toml"],
        &["report", "-o", "results/../tournament.toml"],
        &["report", "-o", "hard.html"],
        &["report", "-o", "results/games.jsonl"],
        &["report", "-o", "results"],
        &["export", "--ggf", "no/such/folder/all.ggf"],
        &["report", "-o", "missing/r.html"],
        &["export", "--wthor", "deep/er/w"],
    ];
    for args in cases {
        let out = s
            .cmd(args)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("will not write"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(s.join("results/games.jsonl")).unwrap(), games);
    assert_eq!(
        std::fs::read_to_string(s.join("tournament.toml")).unwrap(),
        config
    );
    for made in ["no", "missing", "deep", "board/x.ggf"] {
        assert!(!s.join(made).exists(), "{made} was created");
    }
    // What is allowed still works.
    s.run_ok(&["export", "--ggf", "all.ggf", "--wthor", "wthor"], 30);
    s.run_ok(&["report", "-o", "results/mine.html"], 30);
    s.run_ok(&["report"], 30);
}

/// Item 8 (results side): `run` removes only its own live files.
#[test]
fn run_keeps_what_a_user_put_into_the_live_folder() {
    let s = Scratch::new();
    s.write("tournament.toml", &toml("board", "results", &builtins()));
    s.write("results/live/notes.txt", "mine\n");
    // A file named like a game of the schedule, but not a live file.
    s.write("results/live/r01.a.b.jsonl", "my own data\n");
    s.write("results/live/r02.b.a.jsonl", "more of mine\n");
    s.run_ok(&["run"], 60);
    assert_eq!(
        std::fs::read_to_string(s.join("results/live/notes.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.join("results/live/r01.a.b.jsonl")).unwrap(),
        "my own data\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.join("results/live/r02.b.a.jsonl")).unwrap(),
        "more of mine\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.join("results/games.jsonl"))
            .unwrap()
            .lines()
            .count(),
        2,
        "the games were played all the same"
    );
}

/// Item 10: a device or a FIFO as the tournament file.
#[test]
fn a_device_or_fifo_as_config_is_refused_at_once() {
    let s = Scratch::new();
    let fifo = s.join("fifo.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for config in ["/dev/zero", "fifo.toml"] {
        let out = s
            .cmd(&["run", "--config", config])
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{config}: {err}");
        assert!(
            err.contains(config) && err.contains("not a regular file"),
            "{err}"
        );
    }
}

/// Item 16: a stderr flood is cut, and the game's log says how much.
#[test]
fn a_stderr_flood_is_counted_in_the_game_log() {
    let s = Scratch::new();
    let flood = format!(
        "command = [\"sh\", \"-c\", \"i=0; while [ $i -lt 3000 ]; do echo flood >&2; i=$((i+1)); done; exec {}\"]",
        fakebot("ok")
    );
    s.write(
        "tournament.toml",
        &toml(
            "board",
            "results",
            &[("flood", &flood), ("b", "builtin = \"greedy\"")],
        )
        .replace("games-per-pairing = 2", "games-per-pairing = 1"),
    );
    s.run_ok(&["run"], 60);
    let log = game_logs(&s);
    assert!(log.contains("the rest are counted, not logged"), "{log}");
    let dropped: u32 = log
        .lines()
        .find_map(|l| {
            l.split(" more lines of output were not logged")
                .next()
                .filter(|_| l.contains("were not logged"))
                .and_then(|head| head.rsplit(' ').next())
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or_else(|| panic!("no count of dropped lines: {log}"));
    assert!(dropped >= 1000, "{dropped}");
}

/// Every game log of the run in `s`, one after the other (each must be
/// UTF-8: what a bot wrote is made text).
fn game_logs(s: &Scratch) -> String {
    std::fs::read_dir(s.join("results/logs"))
        .unwrap()
        .flatten()
        .map(|e| String::from_utf8(std::fs::read(e.path()).unwrap()).unwrap())
        .collect()
}

/// Issue 26: a bot's terminal escapes (clear screen, window title, a fake
/// result line, a clipboard write) reach the game log as visible text.
#[test]
fn terminal_escapes_from_a_bot_are_logged_as_text() {
    let s = Scratch::new();
    let noisy = format!(
        "command = [\"sh\", \"-c\", \"printf '\\\\033[2J\\\\033]0;owned\\\\007\\\\rb beat a 64-0\\\\033]52;c;aGk=\\\\007 done\\\\n' >&2; exec {}\"]",
        fakebot("ok")
    );
    s.write(
        "tournament.toml",
        &toml(
            "board",
            "results",
            &[("noisy", &noisy), ("b", "builtin = \"greedy\"")],
        )
        .replace("games-per-pairing = 2", "games-per-pairing = 1"),
    );
    s.run_ok(&["run"], 60);
    let log = game_logs(&s);
    assert!(
        log.contains(
            "\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\u{d}b beat a 64-0\\u{1b}]52;c;aGk=\\u{7} done"
        ),
        "the bot's line is not in the log as text: {log}"
    );
    for c in log.chars() {
        assert!(
            !c.is_control() || c == '\n' || c == '\t',
            "a control character {c:?} reached the log: {log}"
        );
    }
}

/// Item 17: `play --move-ms 0`, and an openings file holding a whole game.
#[test]
fn zero_times_and_finished_openings_are_refused() {
    let s = Scratch::new();
    for flag in ["--move-ms", "--startup-ms"] {
        let out = s
            .cmd(&["play", "--black", "random", "--white", "greedy", flag, "0"])
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
    }
    // A whole 4x4 game: two greedy bots play it, and its transcript is
    // given as an opening.
    let out = s.run_ok(
        &[
            "play", "--black", "greedy", "--white", "greedy", "--size", "4", "--json",
        ],
        30,
    );
    let whole = record_of(&out.stdout)["transcript"]
        .as_str()
        .unwrap()
        .to_string();
    s.write("openings.txt", &format!("# a whole game\n{whole}\n"));
    s.write(
        "tournament.toml",
        &format!(
            "{}\n[openings]\nfile = \"openings.txt\"\n",
            toml("board", "results", &builtins())
        ),
    );
    let out = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("openings.txt:2"), "{err}");
    assert!(err.contains("the game is over"), "{err}");
    assert!(!s.join("results/games.jsonl").exists());
    let out = s
        .cmd(&[
            "play", "--black", "greedy", "--white", "greedy", "--size", "4", "--start", &whole,
        ])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// Item 18: an unclosed `[` on line 8 is reported at line 8.
#[test]
fn a_syntax_error_is_reported_at_its_line() {
    let s = Scratch::new();
    let text = toml("board", "results", &builtins());
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(7, "foo = [");
    s.write("tournament.toml", &(lines.join("\n") + "\n"));
    let out = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("tournament.toml:8:"), "{err}");
    assert!(err.contains("never closed"), "{err}");
}
