//! Bots started by hand (`wait = true`), as in a class: what the referee
//! says while it waits for one, and when one stops in the middle of a game.
//! The referee runs for real; the bot that dies is the fake bot, the one
//! started again is the shipped Python library.

use std::fs;
use std::process::{Command, Stdio};

use tournament::record::GameRecord;

use crate::fixture::{project_root, tournament_bin, wait_until, Scratch};

/// The path alice's machine sees, and the command she starts her bot with.
const SEEN: &str = "/mnt/b/class/board/players/alice";
const START: &str = "cd /mnt/b/class/board/players/alice && python3 alice.py";

fn waiting_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("for alice, a bot started by hand, to answer NEW"))
        .map(String::from)
        .collect()
}

#[test]
fn a_hand_started_bot_is_waited_for_only_when_late_and_its_silence_is_named() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"class\"\nboard = \"board\"\nresults = \"results\"\n\
         games-per-pairing = 3\nsize = 4\n\n[time]\nmove-ms = 1500\n\n\
         [[player]]\nname = \"alice\"\nwait = true\nboard-as = \"/mnt/b/class/board\"\n\
         hand-command = \"python3 alice.py\"\n\n\
         [[player]]\nname = \"rnd\"\nbuiltin = \"random\"\n",
    );
    let err_path = s.join("run.err");
    let mut run = Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["run", "--config", "tournament.toml"])
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let stderr = || fs::read_to_string(&err_path).unwrap_or_default();
    let mailbox = s.join("board/players/alice");
    // Nobody runs alice yet: after 2 s the referee says whom it waits for.
    assert!(
        wait_until(30, || waiting_lines(&stderr()).len() == 1),
        "{}",
        stderr()
    );
    // Alice's first bot plays one move and then dies.
    let mut dying = Command::new("python3")
        .arg(project_root().join("tests/fixtures/fakebot.py"))
        .args(["exit-mid", "1"])
        .current_dir(&mailbox)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The game is forfeited; the next one waits for alice again.
    assert!(
        wait_until(60, || waiting_lines(&stderr()).len() == 2),
        "{}",
        stderr()
    );
    assert_eq!(dying.wait().unwrap().code(), Some(3), "the fake bot died");
    // Restarted by hand (the shipped library, mailbox as its argument).
    let mut again = Command::new("python3")
        .arg(project_root().join("bots/python/weighted.py"))
        .arg(&mailbox)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let done = wait_until(120, || run.try_wait().unwrap().is_some());
    let _ = run.kill();
    let status = run.wait().unwrap();
    let _ = again.kill();
    let _ = again.wait();
    let err = stderr();
    assert!(done && status.success(), "{status}: {err}");

    let records: Vec<GameRecord> = fs::read_to_string(s.join("results/games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{err}");
    // Played one after the other: the order they finished in.
    let (first, second, third) = (&records[0], &records[1], &records[2]);

    // 1. The forfeit of the bot that died names the bot started by hand,
    //    not a protocol rule.
    assert_eq!(first.reason.to_string(), "timeout", "{first:?}");
    let detail = &first.forfeit.as_ref().expect("a forfeit").detail;
    for needle in [
        "waiting for a move: alice, a bot started by hand, did not answer in time",
        "(its out.txt still answers an earlier message, seq ",
        "It may have stopped (ended, crashed, or its machine lost the share).",
        "Restart it by hand (stop it first if it still runs) and it joins the next game: ",
        START,
    ] {
        assert!(detail.contains(needle), "`{needle}` missing: {detail}");
    }
    assert!(!detail.contains("line 3 of the answer"), "{detail}");
    // ... and restarting it did make it join the next games.
    for r in [second, third] {
        assert_eq!(r.reason.to_string(), "normal", "{r:?}");
    }

    // 2. Waiting lines only for the games where alice was late (the first,
    //    and the one after she died), with her machine's path and a
    //    command to copy; none while she runs.
    let lines = waiting_lines(&err);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for (line, game) in lines.iter().zip([first, second]) {
        assert!(line.contains(&format!("id={}", game.id)), "{line}");
        assert!(
            line.contains(&format!(
                "waiting 2 s for alice, a bot started by hand, to answer NEW: is it running? \
                 Its mailbox on its machine is {SEEN}; start it there with: {START}"
            )),
            "{line}"
        );
    }
    assert!(
        !err.contains(&s.join("board/players/alice").display().to_string()),
        "the referee's own path is not what alice sees: {err}"
    );
}
