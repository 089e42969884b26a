//! The shipped bots as a user meets them: `check-bot` passes every one of
//! them and fails broken ones with a useful hint, the shipped
//! tournament.toml plays with every language, a player whose interpreter is
//! missing is skipped (or stops `--strict`), and a bot started by hand plays
//! a whole gauntlet.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use tournament::record::{EndReason, GameRecord};

use crate::fixture::{fakebot, project_root, tournament, tournament_bin, wait_until, Scratch};
use crate::needs;

/// `tournament check-bot [EXTRA…] -- CMD…` run from the project root.
fn check_bot(extra: &[&str], command: &[String]) -> std::process::Output {
    let mut c = tournament();
    c.current_dir(project_root())
        .arg("check-bot")
        .args(extra)
        .arg("--")
        .args(command)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

fn words(cmdline: &str) -> Vec<String> {
    cmdline.split(' ').map(String::from).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_bot_passes_every_shipped_bot_and_the_builtins() {
    let commands: Vec<Vec<String>> = [
        "yabasic bots/yabasic/random.yab",
        "yabasic bots/yabasic/greedy.yab",
        "bwbasic bots/bwbasic/greedy.bas",
        "ruby bots/ruby/greedy.rb",
        "ruby bots/ruby/weighted.rb",
        "node bots/js/minimax.js",
        "python3 bots/python/weighted.py",
    ]
    .iter()
    .map(|c| words(c))
    .collect();
    let mut commands = needs::keep_runnable(commands, |c| needs::interpreter_of(&c[0]));
    for builtin in ["random", "greedy", "weighted"] {
        commands.push(vec![
            tournament_bin().display().to_string(),
            "bot".into(),
            builtin.into(),
        ]);
    }
    for command in &commands {
        let out = check_bot(&[], command);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}:\n{stdout}\n{}",
            command.join(" "),
            text(&out.stderr)
        );
        assert!(stdout.contains("checks, 0 failed"), "{stdout}");
        assert!(!stdout.contains('✗'), "{stdout}");
        let basic = command[0].contains("basic");
        let way = if basic {
            "talks through in.txt and out.txt"
        } else {
            "talks through the pipe"
        };
        assert!(stdout.contains(way), "{}: {stdout}", command.join(" "));
        for step in ["NEW → READY", "ask-pass", "END → BYE", "complete 4×4 game"] {
            assert!(stdout.contains(step), "step `{step}` missing:\n{stdout}");
        }
    }
}

#[test]
fn check_bot_fails_broken_bots_with_a_hint() {
    // (fakebot mode, texts the report must hold)
    let cases: [(&str, &[&str]); 5] = [
        (
            "garbage",
            &[
                "\"hello there\", which is not a square or `pass`",
                "answer only the move",
            ],
        ),
        (
            "pass",
            &["answer pass only when you have no legal move; a legal move here is only c8"],
        ),
        (
            "no-newline",
            &["the answer must end with a newline", "restarted the bot"],
        ),
        (
            "illegal",
            &[
                "a1, which turns over no disc",
                "a legal move here is only c8",
                "black has no legal move here (no empty square turns over a disc): answer `pass`",
            ],
        ),
        (
            "exit-mid",
            &[
                "the bot's process ended (exit status 3)",
                "| fakebot: exiting on purpose",
                "stopped early",
            ],
        ),
    ];
    for (mode, hints) in cases {
        let out = check_bot(&["--move-ms", "800"], &words(&fakebot(mode)));
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(tournament::error::exit::BOT_NONCOMPLIANT),
            "{mode}:\n{stdout}\n{stderr}"
        );
        assert!(stdout.contains('✗'), "{mode}: {stdout}");
        for hint in hints {
            assert!(stdout.contains(hint), "{mode}: `{hint}` missing:\n{stdout}");
        }
        let summary = stdout
            .lines()
            .rev()
            .find(|l| l.contains(" checks, "))
            .unwrap();
        assert!(!summary.contains(" 0 failed"), "{mode}: {summary}");
        assert!(
            stderr.contains("does not follow mailbox protocol v1"),
            "{mode}: {stderr}"
        );
    }

    // A program that is not installed is the harness's finding, not the bot's.
    let out = check_bot(&[], &words("no-such-interpreter-xyz bot.rb"));
    assert_eq!(
        out.status.code(),
        Some(tournament::error::exit::PLAYER_UNAVAILABLE)
    );
    assert!(
        text(&out.stderr).contains("`no-such-interpreter-xyz` is not on PATH"),
        "{}",
        text(&out.stderr)
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn records(results: &Path) -> Vec<GameRecord> {
    crate::fixture::whole_records(&results.join("games.jsonl"))
}

#[test]
fn the_shipped_tournament_plays_every_language() {
    if !needs::have(&[needs::RUBY, needs::YABASIC, needs::BWBASIC, needs::NODE]) {
        return;
    }
    let s = Scratch::new();
    std::fs::copy(
        project_root().join("tournament.toml"),
        s.join("tournament.toml"),
    )
    .unwrap();
    copy_tree(&project_root().join("bots"), &s.join("bots"));
    let config = tournament::config::load(&s.join("tournament.toml")).unwrap();
    let names: Vec<String> = config.players.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names.len(), 12, "{names:?}");

    let out = s
        .cmd(&["run", "--games-per-pairing", "1"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    for name in &names {
        assert!(stdout.contains(name.as_str()), "{name} missing:\n{stdout}");
    }
    let recs = records(&config.results);
    assert_eq!(
        recs.len(),
        66,
        "12 players (gtp-rhino at two levels among them), one game per pairing"
    );
    for r in &recs {
        assert!(
            !r.reason.is_protocol_violation(),
            "{} vs {}: {} {:?}",
            r.black,
            r.white,
            r.reason,
            r.forfeit
        );
    }
}

/// A folder holding only a link to python3, to use as PATH. The link
/// points at the interpreter itself (`sys.executable`), not at a shim such
/// as pyenv's, which would need a shell on PATH; and at one the bots' user
/// can run: as root the bots run as other users, who cannot enter a
/// per-user interpreter's folder (pyenv's under /root), so the first
/// python3 on PATH that every user can reach is taken, as the referee does.
fn path_with_only_python(s: &Scratch) -> PathBuf {
    let bin = s.join("path-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let python = crate::fixture::python3_every_user_can_run();
    std::os::unix::fs::symlink(python, bin.join("python3")).unwrap();
    bin
}

#[test]
fn the_readme_test_command_passes_as_root_with_a_python3_the_bots_cannot_reach_first_on_path() {
    use std::os::unix::fs::PermissionsExt;
    if !needs::have(&[needs::ROOT]) {
        return;
    }
    // A per-user interpreter (pyenv's under /root): a folder only root
    // may enter, first on PATH.
    let s = Scratch::new();
    let private = s.join("home-of-root");
    std::fs::create_dir_all(private.join("bin")).unwrap();
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    let real = text(&out.stdout).trim().to_string();
    std::os::unix::fs::symlink(&real, private.join("bin/python3")).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let reach = tournament::sandbox::unreachable_for(
        &private.join("bin/python3"),
        crate::fixture::NOBODY,
        true,
    );
    assert!(
        reach.is_some(),
        "the stand-in must be out of the bots' reach"
    );
    let path = std::env::join_paths(std::iter::once(private.join("bin")).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    // The test that failed so, run again by this test binary.
    let test = "bots::a_player_whose_interpreter_is_missing_is_skipped_with_the_install_hint";
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads", "1"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("test result: ok. 1 passed"), "{said}");
}

#[test]
fn a_player_whose_interpreter_is_missing_is_skipped_with_the_install_hint() {
    let s = Scratch::new();
    copy_tree(&project_root().join("bots/python"), &s.join("bots/python"));
    copy_tree(&project_root().join("bots/ruby"), &s.join("bots/ruby"));
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"no ruby\"\nsize = 4\n\n[time]\nmove-ms = 3000\n\n\
         [[player]]\nname = \"random\"\nbuiltin = \"random\"\n\n\
         [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\n\
         [[player]]\nname = \"python-weighted\"\ncommand = [\"python3\", \"bots/python/weighted.py\"]\n\n\
         [[player]]\nname = \"ruby-greedy\"\ncommand = [\"ruby\", \"bots/ruby/greedy.rb\"]\n",
    );
    let path = path_with_only_python(&s);

    let out = s
        .cmd(&["run"])
        .env("PATH", &path)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("apt-get install ruby"), "{stderr}");
    for name in ["random", "greedy", "python-weighted"] {
        assert!(stdout.contains(name), "{name} missing:\n{stdout}");
    }
    assert!(!stdout.contains("ruby-greedy"), "{stdout}");
    let recs = records(&s.join("results"));
    assert_eq!(recs.len(), 3, "three players, one game per pairing");
    assert!(
        recs.iter().all(|r| r.reason == EndReason::Normal),
        "{recs:?}"
    );

    let out = s
        .cmd(&["run", "--strict"])
        .env("PATH", &path)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(tournament::error::exit::PLAYER_UNAVAILABLE),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("apt-get install ruby"),
        "{}",
        text(&out.stderr)
    );
}

fn parse_time(t: &str) -> SystemTime {
    humantime::parse_rfc3339(t).unwrap_or_else(|e| panic!("{t}: {e}"))
}

#[test]
fn a_bot_started_by_hand_plays_a_whole_gauntlet() {
    if !needs::have(&[needs::RUBY]) {
        return;
    }
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"gauntlet\"\nformat = \"gauntlet\"\ngauntlet-player = \"alice\"\n\
         games-per-pairing = 2\nconcurrency = 2\nsize = 6\n\n[time]\nmove-ms = 3000\n\n\
         [openings]\nrandom-plies = 2\nseed = 5\n\n\
         [[player]]\nname = \"alice\"\nwait = true\n\n\
         [[player]]\nname = \"random\"\nbuiltin = \"random\"\n\n\
         [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\n\
         [[player]]\nname = \"weighted\"\nbuiltin = \"weighted\"\n",
    );
    let stderr_file = s.join("referee.err");
    let mut referee = Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["run"])
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(s.join("referee.out")).unwrap())
        .stderr(std::fs::File::create(&stderr_file).unwrap())
        .spawn()
        .unwrap();
    let said = |what: &str| {
        std::fs::read_to_string(&stderr_file)
            .unwrap_or_default()
            .contains(what)
    };
    // The referee waits for alice before anyone starts her.
    let waited = wait_until(20, || {
        said("s for alice, a bot started by hand, to answer NEW")
    });
    // A moment later it still waits, and nothing has been forfeited.
    std::thread::sleep(Duration::from_millis(300));
    assert!(records(&s.join("results")).is_empty());
    let mailbox = s.join("board/players/alice");
    let mut alice = Command::new("ruby")
        .arg(project_root().join("bots/ruby/greedy.rb"))
        .arg(&mailbox)
        .current_dir(project_root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = None;
    wait_until(60, || {
        status = referee.try_wait().unwrap();
        status.is_some()
    });
    if status.is_none() {
        let _ = referee.kill();
        let _ = referee.wait();
    }
    let _ = alice.kill();
    let _ = alice.wait();
    let stderr = std::fs::read_to_string(&stderr_file).unwrap_or_default();
    assert!(
        waited,
        "the referee never said it waits for alice:\n{stderr}"
    );
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{stderr}");
    let mailbox = std::fs::canonicalize(&mailbox).unwrap();
    assert!(
        stderr.contains(&mailbox.display().to_string()),
        "the wait message names the mailbox {}:\n{stderr}",
        mailbox.display()
    );

    let mut recs = records(&s.join("results"));
    assert_eq!(recs.len(), 6, "3 opponents x 2 games");
    for r in &recs {
        assert_eq!(r.reason, EndReason::Normal, "{r:?}");
        assert!(r.color_of("alice").is_some(), "{} vs {}", r.black, r.white);
    }
    // One game at a time for alice: her games never overlap.
    recs.sort_by_key(|r| parse_time(&r.started));
    for pair in recs.windows(2) {
        assert!(
            parse_time(&pair[0].finished) <= parse_time(&pair[1].started),
            "{} ({} – {}) overlaps {} ({} – {})",
            pair[0].id,
            pair[0].started,
            pair[0].finished,
            pair[1].id,
            pair[1].started,
            pair[1].finished
        );
    }
}

/// The example bot of the `mailbox-protocol` crate, built by cargo for
/// this test (in the profile of the test, beside the tournament binary).
fn rust_example_bot() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(project_root()).args([
        "build",
        "-q",
        "-p",
        "mailbox-protocol",
        "--example",
        "first_legal",
    ]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    let status = build.status().unwrap();
    assert!(status.success(), "cargo build of the example bot failed");
    let bin = tournament_bin()
        .with_file_name("examples")
        .join("first_legal");
    assert!(bin.is_file(), "{} not built", bin.display());
    bin
}

/// A bot written in Rust on the `mailbox-protocol` crate alone (its
/// example, `first_legal`) passes check-bot and plays refereed games
/// without a forfeit.
#[test]
fn a_rust_bot_on_the_protocol_crate_passes_check_bot_and_plays() {
    let bot = rust_example_bot().display().to_string();
    let out = check_bot(&[], std::slice::from_ref(&bot));
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("checks, 0 failed"), "{stdout}");
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"rust\"\nformat = \"round-robin\"\ngames-per-pairing = 4\n\
             concurrency = 2\nsize = 8\n\n[time]\nmove-ms = 2000\n\n\
             [[player]]\nname = \"rust-first\"\ncommand = [\"{bot}\"]\n\n\
             [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n"
        ),
    );
    s.run_ok(&["run"], 120);
    let games = records(&s.join("results"));
    assert_eq!(games.len(), 4);
    for g in &games {
        assert_eq!(g.reason, EndReason::Normal, "{g:?}");
    }
}
