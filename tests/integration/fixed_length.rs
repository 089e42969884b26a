//! Fixed-length files (PROTOCOL.md): the shipped libraries write `out.txt`
//! as a 128-byte record in place, the referee pads `in.txt` to 512 bytes
//! only for such bots, and a version 1 bot that checks the exact size of
//! `in.txt` (the bwBASIC bot as it shipped before) keeps working.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tournament::mailbox::{Mailbox, Message, WriteAccess, IN_RECORD, OUT_RECORD, REFEREE};

use crate::fixture::{project_root, wait_until, Scratch};

/// A plain version 1 bot, as PROTOCOL.md §6 writes it: exact answers,
/// written with `O_TRUNC`; it plays the first legal move.
const PLAIN_V1_BOT: &str = r#"
import os, sys, time
box = sys.argv[1]
answered = None
def first_move(board, me):
    n = round(len(board) ** 0.5)
    them = "O" if me == "X" else "X"
    for i, ch in enumerate(board):
        if ch != "-":
            continue
        r, c = divmod(i, n)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                rr, cc, seen = r + dr, c + dc, 0
                while 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == them:
                    rr, cc, seen = rr + dr, cc + dc, seen + 1
                if seen and 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == me:
                    return "abcdefgh"[c] + str(r + 1)
    return "pass"
while True:
    try:
        with open(os.path.join(box, "in.txt"), "rb") as f:
            lines = f.read(4096).decode("ascii").split("\n")
    except (OSError, UnicodeError):
        lines = []
    if len(lines) < 5 or lines[2].strip() == answered:
        time.sleep(0.005)
        continue
    my_id, seq, words = lines[1].strip(), lines[2].strip(), lines[3].strip().split(" ")
    answer = {"NEW": "READY", "END": "BYE"}.get(words[0], "OK")
    if words[0] == "TURN":
        answer = first_move(words[2], "X" if words[1] == "black" else "O")
    with open(os.path.join(box, "out.txt"), "w") as f:
        f.write(f"{my_id}\nreferee\n{seq}\n{answer}\n")
    answered = seq
"#;

/// A bot on the shipped Python library: the first legal move.
fn library_bot(s: &Scratch) -> PathBuf {
    s.write(
        "lib_bot.py",
        &format!(
            "import sys\nsys.path.insert(0, {:?})\nimport mailbox\nmailbox.run(lambda t: min(t.moves))\n",
            project_root().join("bots/python").display().to_string()
        ),
    )
}

struct Bot(Child);

impl Drop for Bot {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(script: &Path, mailbox: &Path) -> Bot {
    Bot(Command::new("python3")
        .arg(script)
        .arg(mailbox)
        .stdin(Stdio::null())
        .spawn()
        .expect("python3"))
}

fn turn_text() -> String {
    let board = tournament::game::board_string(&tournament::game::Position::start(8));
    format!("TURN black {board} none 5000")
}

fn exchange(mb: &Mailbox, seq: u64, text: &str) -> String {
    mb.send(&WriteAccess::unshared(mb.board()), seq, text)
        .unwrap();
    mb.wait_answer(seq, Instant::now() + Duration::from_secs(20), &mut || None)
        .unwrap_or_else(|e| panic!("seq {seq}: {e}"))
}

fn len_of(p: &Path) -> usize {
    std::fs::metadata(p).map_or(0, |m| m.len() as usize)
}

#[test]
fn in_txt_is_padded_only_for_a_bot_that_writes_fixed_length_answers() {
    let s = Scratch::new();
    let board = s.join("board");
    std::fs::create_dir_all(&board).unwrap();

    // The library announces itself before any message: out.txt is 128 spaces.
    let dir = board.join("players").join("alice");
    let mb = Mailbox::open(&WriteAccess::unshared(&board), &dir, "alice").unwrap();
    let _lib = start(&library_bot(&s), &dir);
    assert!(
        wait_until(20, || len_of(&dir.join("out.txt")) == OUT_RECORD),
        "the library never made out.txt {OUT_RECORD} bytes"
    );
    assert_eq!(exchange(&mb, 1, "NEW g1 black bob 8 5000"), "READY");
    let sent = std::fs::read(dir.join("in.txt")).unwrap();
    assert_eq!(sent.len(), IN_RECORD, "the first message is already padded");
    assert_eq!(
        &sent[..Message::new(REFEREE, "alice", 1, "NEW g1 black bob 8 5000")
            .encode()
            .len()],
        b"referee\nalice\n1\nNEW g1 black bob 8 5000\n"
    );
    assert_eq!(exchange(&mb, 2, &turn_text()), "d3");
    assert_eq!(len_of(&dir.join("in.txt")), IN_RECORD);
    let out = std::fs::read(dir.join("out.txt")).unwrap();
    assert_eq!(out.len(), OUT_RECORD, "out.txt keeps its fixed length");
    assert!(out.starts_with(b"alice\nreferee\n2\nd3\n"), "{out:?}");
    assert!(out[19..].iter().all(|&b| b == b' '), "padded with spaces");

    // A plain version 1 bot gets plain, exact messages.
    let dir = board.join("players").join("bob");
    let mb = Mailbox::open(&WriteAccess::unshared(&board), &dir, "bob").unwrap();
    let plain = s.write("plain_v1.py", PLAIN_V1_BOT);
    let _v1 = start(&plain, &dir);
    assert_eq!(exchange(&mb, 1, "NEW g1 white alice 8 5000"), "READY");
    assert_eq!(
        std::fs::read(dir.join("in.txt")).unwrap(),
        b"referee\nbob\n1\nNEW g1 white alice 8 5000\n"
    );
    let turn = turn_text();
    assert_eq!(exchange(&mb, 2, &turn), "d3");
    assert_eq!(
        std::fs::read(dir.join("in.txt")).unwrap(),
        Message::new(REFEREE, "bob", 2, &turn).encode().into_bytes()
    );
}

#[test]
fn a_version_1_bwbasic_bot_plays_a_library_bot() {
    if Command::new("bwbasic")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .is_err()
    {
        eprintln!("skipped: no bwbasic");
        return;
    }
    let s = Scratch::new();
    let old = project_root().join("tests/fixtures/greedy_v1.bas");
    let lib = library_bot(&s);
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"v1\"\nboard = \"board\"\nresults = \"results\"\n\
             games-per-pairing = 2\nconcurrency = 1\nsize = 4\n\n[time]\nmove-ms = 5000\n\
             startup-ms = 10000\n\n[openings]\nrandom-plies = 0\nseed = 1\n\n\
             [[player]]\nname = \"basic-v1\"\ncommand = [\"bwbasic\", {:?}]\n\n\
             [[player]]\nname = \"library\"\ncommand = [\"python3\", {:?}]\n\
             read = [{:?}]\n",
            old.display().to_string(),
            lib.display().to_string(),
            // Its library is in another folder than the bot: read allows it.
            project_root().join("bots/python").display().to_string()
        ),
    );
    s.run_ok(&["-q", "run"], 240);
    let games = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let reasons: Vec<String> = games
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["reason"].as_str().unwrap_or("?").to_string()
        })
        .collect();
    assert_eq!(reasons, ["normal", "normal"], "{games}");
}
