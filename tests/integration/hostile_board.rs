//! Issue 13, the board side: bots and users that attack the board (hard
//! links, symlink swaps, a vandalised lock, files of their own in
//! `players/`), bad board paths and names, a command that is a folder, and
//! a stop while a game waits for a bot that is gone. Each test does the
//! hostile thing with real processes on real folders and checks the
//! referee's answer: a clear error with its exit code, or a recovery with
//! nothing lost and nothing outside the board changed.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::fixture::{fakebot, record_of, tournament, tournament_bin, wait_until, Scratch};

/// A tournament.toml with `players` (name, how), 4×4 games.
fn toml(players: &[(&str, &str)], extra: &str) -> String {
    let mut t = format!(
        "[tournament]\nname = \"hostile\"\nsize = 4\n{extra}\n\n[time]\nmove-ms = 3000\n\
         startup-ms = 5000\n"
    );
    for (name, how) in players {
        t.push_str(&format!("\n[[player]]\nname = \"{name}\"\n{how}\n"));
    }
    t
}

fn command(cmdline: &str) -> String {
    let parts: Vec<String> = cmdline.split(' ').map(|p| format!("{p:?}")).collect();
    format!("command = [{}]", parts.join(", "))
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn content_and_mtime(p: &Path) -> (Vec<u8>, SystemTime) {
    let m = fs::symlink_metadata(p).unwrap();
    (fs::read(p).unwrap(), m.modified().unwrap())
}

/// `play` with a misbehaving black bot against the built-in random. The
/// bot stands for one started by hand, which no sandbox holds back: it
/// runs unsandboxed (the sandbox is tested in cheats.rs).
fn play_against_random(s: &Scratch, black: &str) -> serde_json::Value {
    let out = s
        .cmd(&[
            "play",
            "--black",
            black,
            "--white",
            "random",
            "--json",
            "--board",
            "board",
            "--size",
            "6",
            "--no-sandbox",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    record_of(&out.stdout)
}

/// The mailbox folder of the command-line bot (not the built-in `random`).
fn bot_mailbox(s: &Scratch) -> String {
    let names: Vec<String> = fs::read_dir(s.join("board/players"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("random.") && !n.starts_with('.'))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names[0].clone()
}

/// Item 1: out.txt replaced by a hard link to a file elsewhere.
#[test]
fn a_hard_link_as_out_txt_is_neither_read_nor_truncated() {
    let s = Scratch::new();
    let precious = s.write("precious.txt", "hardlinked\nreferee\n2\nd3\n");
    std::thread::sleep(Duration::from_millis(20));
    let before = content_and_mtime(&precious);
    let r = play_against_random(
        &s,
        &fakebot(&format!("hardlink-out {}", precious.display())),
    );
    assert_eq!(r["reason"], "garbage", "{r}");
    let detail = r["forfeit"]["detail"].as_str().unwrap();
    assert!(detail.contains("hard link"), "{detail}");
    // After the game the referee emptied the mailbox: the linked file kept
    // its content (the referee replaced the name, it did not truncate).
    assert_eq!(
        content_and_mtime(&precious),
        before,
        "the file elsewhere changed"
    );
    let out_txt = s.join(&format!("board/players/{}/out.txt", bot_mailbox(&s)));
    assert_eq!(
        fs::read(&out_txt).unwrap(),
        b"",
        "the mailbox's out.txt is emptied"
    );
    assert_eq!(
        fs::metadata(&precious)
            .map(|m| std::os::unix::fs::MetadataExt::nlink(&m))
            .unwrap(),
        1,
        "the link in the mailbox is gone"
    );
}

/// Item 2, referee side: the mailbox folder moved away and a symlink (or
/// another folder) put in its place between two messages.
#[test]
fn a_mailbox_swapped_for_a_link_or_another_folder_is_refused() {
    use tournament::mailbox::{mailbox_dir, AnswerError, Mailbox, WriteAccess};
    let s = Scratch::new();
    fs::create_dir(s.join("board")).unwrap();
    let elsewhere = s.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("in.txt"), "keep me\n").unwrap();
    fs::write(elsewhere.join("out.txt"), "a.1\nreferee\n1\nREADY\n").unwrap();
    let before = fs::read_dir(&elsewhere).unwrap().count();
    for swap in ["symlink", "folder"] {
        let dir = mailbox_dir(&s.join("board"), swap, Some(1));
        let mb = Mailbox::open(
            &WriteAccess::unshared(&s.join("board")),
            &dir,
            &format!("{swap}.1"),
        )
        .unwrap();
        mb.send(&WriteAccess::unshared(mb.board()), 1, "NEW g a b 8 100")
            .unwrap();
        fs::rename(&dir, s.join(&format!("moved-{swap}"))).unwrap();
        if swap == "symlink" {
            std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        } else {
            fs::create_dir(&dir).unwrap();
            fs::write(
                dir.join("out.txt"),
                format!("{swap}.1\nreferee\n1\nREADY\n"),
            )
            .unwrap();
        }
        let polled = mb.poll_answer(1);
        assert!(
            matches!(polled, Err(AnswerError::Symlink(_))),
            "{swap}: {polled:?}"
        );
        let sent = mb.send(&WriteAccess::unshared(mb.board()), 2, "TURN");
        assert!(
            matches!(&sent, Err(AnswerError::Symlink(_))),
            "{swap}: {sent:?}"
        );
        assert!(
            mb.clear(&WriteAccess::unshared(mb.board())).is_err(),
            "{swap}: cleared a folder not its own"
        );
    }
    assert_eq!(
        fs::read_to_string(elsewhere.join("in.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        before,
        "nothing made there"
    );
}

/// Item 2, in a game: the bot swaps its mailbox for a symlink on its first
/// TURN; the folder the link points to is not touched.
#[test]
fn a_bot_that_swaps_its_mailbox_for_a_symlink_forfeits_and_the_target_is_untouched() {
    let s = Scratch::new();
    let target = s.join("target");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("in.txt"), "keep me\n").unwrap();
    fs::write(target.join("out.txt"), "mine\n").unwrap();
    let r = play_against_random(&s, &fakebot(&format!("symlink-dir {}", target.display())));
    assert_eq!(r["reason"], "garbage", "{r}");
    let mut names: Vec<_> = fs::read_dir(&target)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["in.txt", "out.txt"]);
    assert_eq!(
        fs::read_to_string(target.join("in.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        fs::read_to_string(target.join("out.txt")).unwrap(),
        "mine\n"
    );
}

/// Item 2, bot side: a built-in bot whose mailbox is swapped for a link to
/// a folder elsewhere (holding a new message) does not answer there.
#[test]
fn a_builtin_bot_does_not_follow_its_mailbox_swapped_for_a_link() {
    let s = Scratch::new();
    let mailbox = s.join("board/players/alice");
    fs::create_dir_all(&mailbox).unwrap();
    let elsewhere = s.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let mut bot = Command::new(tournament_bin())
        .args(["bot", "random"])
        .arg(&mailbox)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    fs::write(
        mailbox.join("in.txt"),
        "referee\nalice\n1\nNEW g1 black x 4 1000\n",
    )
    .unwrap();
    let answered = wait_until(10, || {
        fs::read_to_string(mailbox.join("out.txt")).is_ok_and(|t| t == "alice\nreferee\n1\nREADY\n")
    });
    fs::rename(&mailbox, s.join("moved")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &mailbox).unwrap();
    fs::write(
        elsewhere.join("in.txt"),
        "referee\nalice\n2\nNEW g2 black x 4 1000\n",
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = bot.kill();
    let _ = bot.wait();
    assert!(answered, "the bot answered READY in its mailbox");
    assert!(
        !elsewhere.join("out.txt").exists(),
        "the bot wrote an answer through the link"
    );
    let spares: Vec<_> = fs::read_dir(s.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(
        spares.is_empty(),
        "the bot made files outside players/: {spares:?}"
    );
}

/// Item 2, before the run: a mailbox name taken by a symlink to a folder
/// elsewhere is left alone (the next instance number is used); the run
/// plays every game and the folder elsewhere is untouched.
#[test]
fn a_mailbox_name_planted_as_a_symlink_is_skipped_and_its_target_untouched() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("rnd", "builtin = \"random\""),
                ("grd", "builtin = \"greedy\""),
            ],
            "",
        ),
    );
    let elsewhere = s.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("out.txt"), "keep me\n").unwrap();
    fs::create_dir_all(s.join("board/players")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, s.join("board/players/rnd.1")).unwrap();
    let out = s.run_ok(&["run"], 60);
    assert!(
        stderr(&out).contains("rnd.1 is a symlink: left alone"),
        "{}",
        stderr(&out)
    );
    let games = fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 1);
    assert!(games.contains("\"reason\":\"normal\""), "{games}");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 1);
    assert_eq!(
        fs::read_to_string(elsewhere.join("out.txt")).unwrap(),
        "keep me\n"
    );
    assert!(s.join("board/players/rnd.2").is_dir());
}

/// Item 8: files a user put into `players/` and into mailboxes survive a
/// run; only a real leftover of a referee is swept.
#[test]
fn a_run_deletes_only_what_a_referee_made_in_players() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("rnd", "builtin = \"random\""),
                ("grd", "builtin = \"greedy\""),
            ],
            "",
        ),
    );
    let keep = [
        ("board/players/notes.txt", "my notes\n"),
        (
            "board/players/.in.txt.tmp-1-1",
            "my notes, named like a temp file\n",
        ),
        (
            "board/players/.rnd.1.in.txt.spare",
            "not a message at all\n",
        ),
        ("board/players/rnd.1/mine.txt", "mine\n"),
        ("board/players/rnd.1/.in.txt.bak", "a backup\n"),
        ("board/players/rnd.1/.out.txt.old", "an old answer\n"),
        ("board/players/someone/in.txt", "someone's\n"),
    ];
    for (p, c) in keep {
        s.write(p, c);
    }
    // A temp file a referee killed mid-write left: the start of a message.
    let leftover = s.write("board/players/.in.txt.tmp-99999-0", "referee\nrnd.1\n3\nTU");
    s.run_ok(&["run"], 120);
    for (p, c) in keep {
        assert_eq!(
            fs::read_to_string(s.join(p)).ok().as_deref(),
            Some(c),
            "{p}"
        );
    }
    assert!(!leftover.exists(), "a referee's leftover was swept");
}

/// Item 9: TERM (as `timeout`, systemd or `docker stop` send it) while a
/// game waits for a hand-started bot that is gone: the run ends within the
/// grace, exit 130, the game is not recorded (played again on resume).
#[test]
fn a_term_ends_a_run_waiting_for_a_gone_bot_within_the_grace() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[("alice", "wait = true"), ("rnd", "builtin = \"random\"")],
            "",
        ),
    );
    let mut child = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(30, || s.join("board/players/alice/in.txt").exists()),
        "the game started"
    );
    let t0 = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let ended = wait_until(40, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(ended, "the run did not end after TERM");
    let waited = t0.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("did not finish within 8 s"), "{err}");
    assert!(
        waited >= Duration::from_secs(7),
        "it gave the games their grace: {waited:?}"
    );
    let games = fs::read_to_string(s.join("results/games.jsonl")).unwrap_or_default();
    assert_eq!(
        games.lines().count(),
        0,
        "the unfinished game is not recorded: {games}"
    );
}

/// Item 11: bad board paths, from tournament.toml and from `play --board`.
#[test]
fn bad_board_paths_are_refused_naming_the_line() {
    let s = Scratch::new();
    s.write("afile", "not a folder\n");
    std::os::unix::fs::symlink(s.join("nowhere"), s.join("dangling")).unwrap();
    s.write("project/notes.txt", "user files\n");
    let cases = [
        ("/", "is the root of the file system"),
        ("afile", "exists and is not a folder"),
        ("dangling", "which does not exist"),
        ("project", "holds files that are not a board's (notes.txt)"),
        ("missing/board", "its parent folder"),
    ];
    for (board, says) in cases {
        s.write(
            "tournament.toml",
            &toml(
                &[
                    ("rnd", "builtin = \"random\""),
                    ("grd", "builtin = \"greedy\""),
                ],
                &format!("board = {board:?}"),
            ),
        );
        let before = listing(s.path());
        let out = s
            .cmd(&["run"])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{board}: {err}");
        assert!(
            err.contains("tournament.toml:4:"),
            "{board}: names the line: {err}"
        );
        assert!(
            err.contains("tournament.board"),
            "{board}: names the key: {err}"
        );
        assert!(err.contains(says), "{board}: {err}");
        assert_eq!(listing(s.path()), before, "{board}: something was made");
        let out = s
            .cmd(&[
                "play", "--black", "random", "--white", "greedy", "--board", board,
            ])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "play --board {board}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(says), "{board}: {}", stderr(&out));
        assert_eq!(
            listing(s.path()),
            before,
            "play --board {board}: something was made"
        );
    }
}

/// Item 11: the results folder (or the config) inside the board, where bots
/// can write, is refused before anything is made.
#[test]
fn results_inside_the_board_are_refused() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("rnd", "builtin = \"random\""),
                ("grd", "builtin = \"greedy\""),
            ],
            "board = \"b\"\nresults = \"b/results\"",
        ),
    );
    let out = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("tournament.toml:4:9") && err.contains("is inside the board"),
        "{err}"
    );
    assert!(!s.join("b").exists(), "nothing was made");
}

/// Every path under `dir`, recursively (links not followed).
fn listing(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            out.push(e.path().display().to_string());
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Item 12: a bot overwrites REFEREE/OWNER and deletes REFEREE/ during the
/// run; the referee puts its lock back and finishes every game. Then a lock
/// left damaged is taken over soon, with a message, not after 30 s silence.
#[test]
fn a_bot_that_vandalises_the_lock_does_not_stop_the_run() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                // Unsandboxed, like a bot started by hand.
                (
                    "vandal",
                    &(command(&fakebot("lock-vandal 250")) + "\nsandbox = false"),
                ),
                ("rnd", "builtin = \"random\""),
            ],
            "games-per-pairing = 2\nsize = 6",
        )
        .replace("size = 4\n", ""),
    );
    let out = s.run_ok(&["run"], 120);
    let err = stderr(&out);
    assert!(
        err.contains("was changed by someone else") || err.contains("was removed by someone else"),
        "the referee said what happened: {err}"
    );
    let games = fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 2, "{err}");
    assert!(!s.join("board/REFEREE").exists(), "the lock was released");

    // A lock left damaged by a bot (the referee that held it is gone).
    fs::create_dir(s.join("board/REFEREE")).unwrap();
    fs::write(s.join("board/REFEREE/OWNER"), "vandalised by a bot\n").unwrap();
    fs::write(
        s.join("tournament.toml"),
        fs::read_to_string(s.join("tournament.toml"))
            .unwrap()
            .replace("games-per-pairing = 2", "games-per-pairing = 3"),
    )
    .unwrap();
    fs::remove_dir_all(s.join("results")).unwrap();
    // Timed to the takeover (a valid owner record in place of the
    // vandal's), not to the end of the run's games.
    let t0 = Instant::now();
    let run = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let owner = s.join("board/REFEREE/OWNER");
    let taken = wait_until(120, || {
        fs::read_to_string(&owner).is_ok_and(|t| !t.is_empty() && !t.contains("vandalised"))
    });
    let took = t0.elapsed();
    let out = run.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("holds no valid owner record"), "{err}");
    assert!(
        taken && took < Duration::from_secs(25),
        "taken over before the 30 s stale period: {took:?}"
    );
}

/// Item 13: `referee.lock` as a symlink: refused, its target not made.
#[test]
fn a_symlinked_referee_lock_is_refused_and_its_target_not_created() {
    let s = Scratch::new();
    fs::create_dir(s.join("board")).unwrap();
    let target = s.join("outside.lock");
    std::os::unix::fs::symlink(&target, s.join("board/referee.lock")).unwrap();
    let out = s
        .cmd(&[
            "play", "--black", "random", "--white", "greedy", "--board", "board",
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(10), "{err}");
    assert!(err.contains("referee.lock is a symlink"), "{err}");
    assert!(!target.exists(), "the link's target was created");
}

/// Item 14: `command = ["/tmp"]` (a folder): caught at start; `--strict`
/// fails with exit 6; without it the player is skipped, with the reason.
#[test]
fn a_command_that_is_a_folder_is_caught_at_start() {
    let s = Scratch::new();
    let dir = s.join("a-folder");
    fs::create_dir(&dir).unwrap();
    s.write(
        "tournament.toml",
        &toml(
            &[
                (
                    "folder",
                    &format!("command = [{:?}]", dir.display().to_string()),
                ),
                ("rnd", "builtin = \"random\""),
                ("grd", "builtin = \"greedy\""),
            ],
            "",
        ),
    );
    let out = s
        .cmd(&["run", "--strict"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("player `folder`") && err.contains("is a folder, not a program"),
        "{err}"
    );
    assert!(
        !s.join("results/games.jsonl").exists(),
        "no game was played"
    );

    let out = s.run_ok(&["run"], 60);
    let err = stderr(&out);
    assert!(err.contains("skipped: player `folder`"), "{err}");
    let games = fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 1, "only rnd against grd");
    assert!(
        !games.contains("folder") && !games.contains("start-failed"),
        "{games}"
    );
}

/// Item 15: check-bot fails (exit 7) a bot that deletes its mailbox, and a
/// bot that writes into in.txt.
#[test]
fn check_bot_fails_a_bot_that_removes_its_mailbox_or_writes_into_in_txt() {
    let s = Scratch::new();
    for (mode, says) in [
        ("rm-mailbox", "removed"),
        ("write-in", "in.txt was changed"),
    ] {
        let bot = fakebot(mode);
        // As a bot started by hand would (the sandbox stops both).
        let mut args = vec!["check-bot", "--move-ms", "1500", "--no-sandbox", "--"];
        args.extend(bot.split(' '));
        let out = s
            .cmd(&args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_eq!(out.status.code(), Some(7), "{mode}: {text}");
        assert!(text.contains(says), "{mode}: {text}");
    }
}

/// Item 19: names that differ only in case are refused, naming both lines.
#[test]
fn player_names_that_differ_only_in_case_are_refused() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("Random", "builtin = \"random\""),
                ("random", "builtin = \"random\""),
            ],
            "",
        ),
    );
    let out = tournament()
        .current_dir(s.path())
        .args(["run"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("tournament.toml:15:") && err.contains("player[2].name"),
        "{err}"
    );
    assert!(
        err.contains("differs from `Random` (line 11) only in case"),
        "{err}"
    );
    assert!(!s.join("board").exists(), "nothing was made");
}
