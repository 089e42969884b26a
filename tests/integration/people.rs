//! Issue 28, at the terminal: a person plays a whole game against a
//! built-in bot through a real pseudo-terminal, typing what people type;
//! and on a game clock, recorded in the GGF file.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::fixture::*;

/// A pseudo-terminal pair: the side a person types on and the one the
/// program reads.
fn openpty() -> (std::fs::File, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    unsafe {
        let flags = libc::fcntl(master, libc::F_GETFL);
        libc::fcntl(master, libc::F_SETFL, flags | libc::O_NONBLOCK);
        (
            std::fs::File::from_raw_fd(master),
            OwnedFd::from_raw_fd(slave),
        )
    }
}

/// Reads what the terminal shows until `done(shown)`, or panics after
/// `secs` with what was shown.
fn read_until(
    term: &mut std::fs::File,
    shown: &mut String,
    secs: u64,
    done: impl Fn(&str) -> bool,
) {
    let end = Instant::now() + Duration::from_secs(secs);
    let mut buf = [0u8; 4096];
    while !done(shown) {
        assert!(Instant::now() < end, "stuck; the terminal shows:\n{shown}");
        match term.read(&mut buf) {
            Ok(n) if n > 0 => shown.push_str(&String::from_utf8_lossy(&buf[..n])),
            // Nothing yet (EAGAIN), or the program closed the terminal (EIO).
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

const PROMPT: &str = "your move> ";

/// Waits for the prompt after `answered` prompts were answered, or the
/// end of the last of `games` games.
fn next_prompt(
    term: &mut std::fs::File,
    shown: &mut String,
    answered: usize,
    games: usize,
) -> bool {
    read_until(term, shown, 60, |s| {
        s.matches(PROMPT).count() > answered || s.matches("game over").count() >= games
    });
    shown.matches(PROMPT).count() > answered
}

/// What a game at the terminal left: what the terminal showed, the record
/// (`--json`), the squares the person typed, and the scratch folder.
struct TerminalGame {
    shown: String,
    record: serde_json::Value,
    typed: Vec<String>,
    folder: Scratch,
}

/// Runs `tournament play ARGS --json` with its stdin and stdout on a
/// pseudo-terminal; the person first types each of `mistakes` (an entry
/// and the words it must be refused with), then the first legal move
/// shown each time (the first in capitals) until the game is over.
fn play_at_terminal(args: &[&str], mistakes: &[(&str, &str)]) -> TerminalGame {
    let s = Scratch::new();
    let mut args = args.to_vec();
    args.insert(0, "play");
    args.push("--json");
    let (shown, typed) = at_terminal(s.path(), &args, mistakes, 1, "\"id\"");
    let json = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("no record:\n{shown}"));
    let record: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    TerminalGame {
        shown,
        record,
        typed,
        folder: s,
    }
}

/// Runs `tournament ARGS` in `s` with its stdin and stdout on a
/// pseudo-terminal, the person typing `mistakes` then the first legal
/// move each time through `games` games, until the terminal shows
/// `last`; it must end well. What the terminal showed, and the squares
/// typed.
fn at_terminal(
    s: &std::path::Path,
    args: &[&str],
    mistakes: &[(&str, &str)],
    games: usize,
    last: &str,
) -> (String, Vec<String>) {
    at_terminal_leaving(s, args, mistakes, games, last, None)
}

/// [`at_terminal`]; with `leave_after` moves typed, the program is killed
/// at the next prompt (the person leaves mid-game).
fn at_terminal_leaving(
    s: &std::path::Path,
    args: &[&str],
    mistakes: &[(&str, &str)],
    games: usize,
    last: &str,
    leave_after: Option<usize>,
) -> (String, Vec<String>) {
    let (mut term, slave) = openpty();
    let out = slave.try_clone().unwrap();
    let mut child = std::process::Command::new(tournament_bin())
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .current_dir(s)
        .args(args)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::from(out))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut shown = String::new();
    let mut answered = 0;
    let mut typed = Vec::new();
    for (entry, why) in mistakes {
        assert!(
            next_prompt(&mut term, &mut shown, answered, games),
            "{shown}"
        );
        writeln!(term, "{entry}").unwrap();
        answered += 1;
        read_until(&mut term, &mut shown, 30, |s| s.contains(why));
    }
    while next_prompt(&mut term, &mut shown, answered, games) {
        if leave_after == Some(typed.len()) {
            child.kill().unwrap();
            child.wait().unwrap();
            return (shown, typed);
        }
        let before_prompt = &shown[..shown.rfind(PROMPT).unwrap()];
        let legal = before_prompt
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("legal (*): "))
            .unwrap_or_else(|| panic!("no legal moves shown before the prompt:\n{shown}"));
        let square = legal.split_whitespace().next().unwrap().trim().to_string();
        let entry = if typed.is_empty() {
            square.to_uppercase()
        } else {
            square.clone()
        };
        writeln!(term, "{entry}").unwrap();
        answered += 1;
        typed.push(square);
        assert!(typed.len() < 40 * games, "{shown}");
    }
    read_until(&mut term, &mut shown, 30, |s| s.contains(last));
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}\n{shown}");
    (shown, typed)
}

/// The record names `person` as black, ends normally, holds every square
/// typed, and replays by the rules to the end of a game on `size`.
fn assert_a_whole_legal_game(game: &TerminalGame, person: &str, size: u8) {
    let record = &game.record;
    assert_eq!(record["black"], person, "{record}");
    assert_eq!(record["reason"], "normal", "{record}");
    assert!(record["forfeit"].is_null(), "{record}");
    let transcript = record["transcript"].as_str().unwrap().to_string();
    for sq in &game.typed {
        assert!(transcript.contains(sq.as_str()), "{sq} not in {transcript}");
    }
    let (_, end) = othello::replay_transcript(othello::Position::start(size), &transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
}

#[test]
fn a_person_at_a_terminal_plays_a_whole_game_and_typos_are_asked_again() {
    // A typo, an occupied square and a pass with moves left: each refused
    // with why, then asked again.
    let game = play_at_terminal(
        &[
            "--black",
            "human:ann",
            "--white",
            "greedy",
            "--size",
            "6",
            "--board",
            "board",
        ],
        &[
            ("z9", "is not a square"),
            ("c3", "is taken"),
            ("pass", "you cannot pass"),
        ],
    );
    assert_a_whole_legal_game(&game, "ann", 6);
}

/// Reads the properties of the one game in a GGF file, independently of
/// the project's code: a few lines of Python, as another program would.
const GGF_READER: &str = r#"
import re, sys, json
text = open(sys.argv[1]).read().strip()
assert text.startswith("(;") and text.endswith(";)"), text
props = {}
for key, value in re.findall(r"([A-Z]+)\[([^\]]*)\]", text):
    props.setdefault(key, []).append(value)
def ms(t):
    # [h:]m:ss[.mmm] -> milliseconds
    secs = 0.0
    for part in t.split(":"):
        secs = secs * 60 + float(part)
    return round(secs * 1000)
def clock(v):
    main, inc, ext = v.split("/")
    inc, _, opts = inc.partition(",")
    return {"main_ms": ms(main), "inc_ms": ms(inc) if inc else 0, "options": opts}
out = {k: clock(props[k][0]) for k in ("TI", "TB", "TW") if k in props}
out["plies"] = len(props.get("B", [])) + len(props.get("W", []))
out["RE"] = props["RE"][0]
print(json.dumps(out))
"#;

/// The GGF file of game `id` in `results`, read by [`GGF_READER`].
fn read_ggf(results: &std::path::Path, id: &str) -> serde_json::Value {
    let ggf = results.join(format!("games/{id}.ggf"));
    let out = std::process::Command::new("python3")
        .args(["-c", GGF_READER])
        .arg(&ggf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&ggf).unwrap_or_default()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_person_on_a_game_clock_plays_a_bot_at_a_second_a_move_and_ggf_records_both() {
    // 60 s + 1 s a move for the person, 1 s a move for the bot (a limit a
    // busy machine keeps: the bot is a sandboxed process).
    let game = play_at_terminal(
        &[
            "--black",
            "human:ann",
            "--white",
            "greedy",
            "--size",
            "6",
            "--board",
            "board",
            "--move-ms",
            "1000",
            "--human-clock-ms",
            "60000",
            "--human-increment-ms",
            "1000",
        ],
        &[("z9", "is not a square")],
    );
    assert_a_whole_legal_game(&game, "ann", 6);
    // Both clocks shown before the first move: the whole minute, and the
    // bot's limit per move.
    assert!(
        game.shown
            .contains("clocks: you 1:00 left (+1 s a move) · greedy 1 s a move"),
        "{}",
        game.shown
    );
    // The time the person took is what came off the clock: every later
    // prompt shows what is left, never more than a minute plus increments.
    let lefts: Vec<&str> = game
        .shown
        .lines()
        .filter_map(|l| l.strip_prefix("clocks: you "))
        .collect();
    assert_eq!(lefts.len(), game.typed.len(), "{}", game.shown);
    let seconds = |shown: &str| -> f64 {
        let t = shown.split(" left").next().unwrap();
        match t.split_once(':') {
            Some((m, s)) => m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap(),
            None => t.trim_end_matches(" s").parse().unwrap(),
        }
    };
    for (k, left) in lefts.iter().enumerate() {
        let left = seconds(left);
        let most = 60.0 + k as f64;
        assert!(
            left <= most && left > most - 30.0,
            "move {k}: {left} s left"
        );
    }
    let id = game.record["id"].as_str().unwrap();
    let read = read_ggf(&game.folder.join("results"), id);
    assert_eq!(
        read["TB"],
        serde_json::json!({"main_ms": 60000, "inc_ms": 1000, "options": ""}),
        "{read}"
    );
    assert_eq!(
        read["TW"],
        serde_json::json!({"main_ms": 1000, "inc_ms": 1000, "options": "N1"}),
        "{read}"
    );
    assert!(read["TI"].is_null(), "{read}");
    let moves = game.record["moves"].as_array().unwrap().len();
    assert_eq!(read["plies"], moves, "{read}");
    assert!(
        !read["RE"].as_str().unwrap().contains(':'),
        "played to the end, no forfeit: {read}"
    );
}

#[test]
fn a_person_plays_their_games_of_a_run_at_the_terminal() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        r#"[tournament]
name = "class"
size = 6
games-per-pairing = 2
concurrency = 2

[time]
move-ms = 1000

[[player]]
name = "ann"
human = true
clock-ms = 60000
increment-ms = 1000

[[player]]
name = "greedy"
builtin = "greedy"
"#,
    );
    // A typo on the way is asked again, as in `play`.
    let (shown, _) = at_terminal(
        s.path(),
        &["run"],
        &[("e", "is not a square")],
        2,
        "game over",
    );
    assert!(
        shown.contains("clocks: you 1:00 left (+1 s a move) · greedy 1 s a move"),
        "{shown}"
    );
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{text}");
    let mut colours = vec![];
    for r in &records {
        assert_eq!(r["reason"], "normal", "{r}");
        let transcript = r["transcript"].as_str().unwrap();
        let (_, end) = othello::replay_transcript(othello::Position::start(6), transcript).unwrap();
        assert!(end.is_over(), "{transcript}");
        let ann = if r["black"] == "ann" { "TB" } else { "TW" };
        let bot = if ann == "TB" { "TW" } else { "TB" };
        colours.push(ann);
        let read = read_ggf(&s.join("results"), r["id"].as_str().unwrap());
        assert_eq!(read[ann]["main_ms"], 60000, "{read}");
        assert_eq!(read[ann]["inc_ms"], 1000, "{read}");
        assert_eq!(read[bot]["main_ms"], 1000, "{read}");
        assert_eq!(read[bot]["options"], "N1", "{read}");
    }
    colours.sort();
    assert_eq!(colours, ["TB", "TW"], "ann played both colours");
    // Marked as a person in every record, and in the crosstable.
    for r in &records {
        assert_eq!(r["people"], serde_json::json!(["ann"]), "{r}");
    }
    let table = std::process::Command::new(tournament_bin())
        .current_dir(s.path())
        .env("NO_COLOR", "1")
        .arg("crosstable")
        .output()
        .unwrap();
    assert!(table.status.success(), "{table:?}");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("ann (person)"), "{table}");
    assert!(!table.contains("greedy (person)"), "{table}");
    // And in the JSON crosstable and the HTML report.
    let json = std::process::Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["crosstable", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    for row in json["standings"].as_array().unwrap() {
        let person = row["player"] == "ann";
        assert_eq!(row.get("person").is_some(), person, "{row}");
        if person {
            assert_eq!(row["person"], true, "{row}");
        }
    }
    let report = std::process::Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("report")
        .output()
        .unwrap();
    assert!(report.status.success(), "{report:?}");
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    assert!(html.contains(">ann (person)</td>"), "the report marks ann");
    assert!(!html.contains("greedy (person)"), "and only ann");
}

#[test]
fn a_person_takes_the_seat_of_a_player_started_by_hand_through_the_board() {
    let s = Scratch::new();
    s.write("tournament.toml", &ann_waits_for_greedy("class"));
    // The referee in one process, the person's seat in another: they meet
    // only through the board's files.
    let mut referee = referee_in(s.path());
    let (shown, typed) = at_terminal(
        s.path(),
        &["seat", "ann", "--games", "1"],
        &[("d33", "is not a square")],
        1,
        "game over",
    );
    assert!(!typed.is_empty(), "{shown}");
    let done = wait_until(30, || referee.try_wait().unwrap().is_some());
    if !done {
        let _ = referee.kill();
    }
    let out = referee.wait_with_output().unwrap();
    assert!(
        done && out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["reason"], "normal", "{record}");
    assert!(
        record["black"] == "ann" || record["white"] == "ann",
        "{record}"
    );
    let transcript = record["transcript"].as_str().unwrap();
    for sq in &typed {
        assert!(transcript.contains(sq.as_str()), "{sq} not in {transcript}");
    }
    let (_, end) = othello::replay_transcript(othello::Position::start(6), transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
}

#[test]
fn two_people_play_each_other_through_the_board_with_a_seat_each() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        r#"[tournament]
name = "two people"
size = 4

[openings]
random-plies = 0

[time]
move-ms = 30000
wait-ms = 60000

[[player]]
name = "ann"
wait = true

[[player]]
name = "bob"
wait = true
"#,
    );
    let mut referee = referee_in(s.path());
    // Each at their own terminal, side by side.
    let typed: Vec<Vec<String>> = std::thread::scope(|scope| {
        let seats: Vec<_> = ["ann", "bob"]
            .map(|name| {
                let s = s.path();
                scope.spawn(move || {
                    at_terminal(s, &["seat", name, "--games", "1"], &[], 1, "game over").1
                })
            })
            .into_iter()
            .collect();
        seats.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let done = wait_until(30, || referee.try_wait().unwrap().is_some());
    if !done {
        let _ = referee.kill();
    }
    let out = referee.wait_with_output().unwrap();
    assert!(
        done && out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["reason"], "normal", "{record}");
    let transcript = record["transcript"].as_str().unwrap();
    let (_, end) = othello::replay_transcript(othello::Position::start(4), transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
    // Every move of the game was typed by one of the two.
    let plies = typed.iter().map(Vec::len).sum::<usize>();
    let opening = record["opening"].as_str().unwrap().len();
    assert_eq!(
        plies,
        (transcript.len() - opening) / 2,
        "{typed:?} {transcript}"
    );
    assert!(typed.iter().all(|t| !t.is_empty()), "{typed:?}");
}

#[test]
fn a_seat_killed_mid_game_and_taken_again_continues_the_game() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        r#"[tournament]
name = "comes back"
size = 6

[openings]
random-plies = 0

[time]
move-ms = 30000
wait-ms = 60000

[[player]]
name = "ann"
wait = true

[[player]]
name = "greedy"
builtin = "greedy"
"#,
    );
    let mut referee = referee_in(s.path());
    let seat = ["seat", "ann", "--games", "1"];
    let (_, before) = at_terminal_leaving(s.path(), &seat, &[], 1, "", Some(2));
    assert_eq!(before.len(), 2);
    // Back: the move asked for while away is shown again, and the game
    // goes on to its end.
    let (shown, after) = at_terminal(s.path(), &seat, &[], 1, "game over");
    assert!(!after.is_empty(), "{shown}");
    let done = wait_until(30, || referee.try_wait().unwrap().is_some());
    if !done {
        let _ = referee.kill();
    }
    let out = referee.wait_with_output().unwrap();
    assert!(
        done && out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(record["reason"], "normal", "{record}");
    let transcript = record["transcript"].as_str().unwrap();
    let (_, end) = othello::replay_transcript(othello::Position::start(6), transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
    let ann = if record["black"] == "ann" {
        "black"
    } else {
        "white"
    };
    let ann_moves: Vec<&str> = record["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["color"] == ann && m["move"] != "pass" && m["opening"] != true)
        .map(|m| m["move"].as_str().unwrap())
        .collect();
    let typed: Vec<&str> = before.iter().chain(&after).map(String::as_str).collect();
    assert_eq!(
        ann_moves, typed,
        "every move of ann's, typed in the two sittings"
    );
}

#[test]
fn play_seats_a_person_of_the_tournament_file_with_their_own_clock() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        r#"[tournament]
name = "club"
size = 6

[time]
move-ms = 1000

[[player]]
name = "ann"
human = true
clock-ms = 90000

[[player]]
name = "greedy"
builtin = "greedy"
"#,
    );
    let (shown, typed) = at_terminal(
        s.path(),
        &["play", "--black", "ann", "--white", "greedy", "--json"],
        &[],
        1,
        "\"id\"",
    );
    assert!(
        shown.contains("clocks: you 1:30 left · greedy 1 s a move"),
        "{shown}"
    );
    let json = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("no record:\n{shown}"));
    let record: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let game = TerminalGame {
        shown,
        record,
        typed,
        folder: s,
    };
    assert_a_whole_legal_game(&game, "ann", 6);
    let read = read_ggf(
        &game.folder.join("results"),
        game.record["id"].as_str().unwrap(),
    );
    assert_eq!(
        read["TB"],
        serde_json::json!({"main_ms": 90000, "inc_ms": 0, "options": ""}),
        "{read}"
    );
}

/// A run whose referee plays on mount A of the two-mount shared drive
/// (`scripts/shared-drive`): ann at a seat on mount B, bob at a seat on
/// mount A, and a built-in bot; every game, refereed.
const DRIVE_CLUB: &str = r#"[tournament]
name = "club on a shared drive"
size = 6
games-per-pairing = 1
concurrency = 1

[time]
move-ms = 30000
wait-ms = 60000

[[player]]
name = "ann"
wait = true

[[player]]
name = "bob"
wait = true

[[player]]
name = "greedy"
builtin = "greedy"
"#;

/// The squares `name` played in `records`, in order, passes and the
/// opening's moves left out.
fn moves_of(records: &[serde_json::Value], name: &str) -> Vec<String> {
    let mut played = vec![];
    for r in records {
        let colour = if r["black"] == name { "black" } else { "white" };
        if r["black"] != name && r["white"] != name {
            continue;
        }
        for m in r["moves"].as_array().unwrap() {
            if m["color"] == colour && m["move"] != "pass" && m["opening"] != true {
                played.push(m["move"].as_str().unwrap().to_string());
            }
        }
    }
    played
}

#[test]
fn on_two_mounts_two_people_and_a_bot_play_through_seats_and_a_seat_taken_again_continues() {
    if !crate::needs::have(crate::needs::SHARED_DRIVE) {
        return;
    }
    let _serial = crate::faults::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let drive = crate::faults::Drive::up(crate::faults::Cache::Default);
    let ws = drive.ws("club");
    std::fs::write(ws.a.join("tournament.toml"), DRIVE_CLUB).unwrap();
    // The referee on "machine A".
    let mut referee = referee_in(&ws.a);
    let t0 = Instant::now();
    // ann on mount B ("machine B"), leaving after two moves of her first
    // game and coming back; bob on mount A. Three games: ann-bob (two
    // people), ann-greedy and bob-greedy.
    let (ann, bob) = std::thread::scope(|scope| {
        let ann = scope.spawn(|| {
            let seat = ["seat", "ann", "--games", "2"];
            let (_, before) = at_terminal_leaving(&ws.b, &seat, &[], 2, "", Some(2));
            assert_eq!(before.len(), 2);
            let (shown, after) = at_terminal(&ws.b, &seat, &[], 2, "game over");
            assert!(!after.is_empty(), "{shown}");
            [before, after].concat()
        });
        let bob = scope
            .spawn(|| at_terminal(&ws.a, &["seat", "bob", "--games", "2"], &[], 2, "game over").1);
        (ann.join().unwrap(), bob.join().unwrap())
    });
    let done = wait_until(60, || referee.try_wait().unwrap().is_some());
    if !done {
        let _ = referee.kill();
    }
    let out = referee.wait_with_output().unwrap();
    eprintln!(
        "people on two mounts: 3 games in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        done && out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(ws.a.join("results/games.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{text}");
    for r in &records {
        assert_eq!(r["reason"], "normal", "{r}");
        let transcript = r["transcript"].as_str().unwrap();
        let (_, end) = othello::replay_transcript(othello::Position::start(6), transcript).unwrap();
        assert!(end.is_over(), "{transcript}");
    }
    assert!(
        records
            .iter()
            .any(|r| [&r["black"], &r["white"]] == ["ann", "bob"]
                || [&r["black"], &r["white"]] == ["bob", "ann"]),
        "the two people met: {text}"
    );
    // Every move of each person's, typed by them (ann's in two sittings).
    assert_eq!(moves_of(&records, "ann"), ann, "{text}");
    assert_eq!(moves_of(&records, "bob"), bob, "{text}");
}

/// Runs `tournament ARGS` in `dir` on a pseudo-terminal; at the first
/// prompt the person types `resign` and takes it back (`no`), at the next
/// types `resign` again and confirms (`yes`); then the terminal must show
/// `last` and the program end well. What the terminal showed.
fn resign_at_terminal(dir: &std::path::Path, args: &[&str], last: &str) -> String {
    let (mut term, slave) = openpty();
    let out = slave.try_clone().unwrap();
    let mut child = std::process::Command::new(tournament_bin())
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::from(out))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut shown = String::new();
    read_until(&mut term, &mut shown, 60, |s| s.contains(PROMPT));
    writeln!(term, "resign").unwrap();
    read_until(&mut term, &mut shown, 30, |s| {
        s.contains("resign this game?")
    });
    writeln!(term, "no").unwrap();
    read_until(&mut term, &mut shown, 30, |s| {
        s.contains("playing on") && s.matches(PROMPT).count() >= 2
    });
    writeln!(term, "RESIGN").unwrap();
    read_until(&mut term, &mut shown, 30, |s| {
        s.matches("resign this game?").count() >= 2
    });
    writeln!(term, "yes").unwrap();
    read_until(&mut term, &mut shown, 30, |s| s.contains(last));
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}\n{shown}");
    shown
}

/// The record of a game `person` (black or white) resigned at their
/// first move: a loss named `resigned`, every square to the opponent,
/// a record the reader accepts, and GGF's `RE` ending `:r`.
fn assert_resigned(record: &serde_json::Value, person: &str, results: &std::path::Path) {
    let colour = if record["black"] == person {
        "black"
    } else {
        "white"
    };
    let winner = if colour == "black" { "white" } else { "black" };
    assert_eq!(record["reason"], "resigned", "{record}");
    assert_eq!(record["result"], winner, "{record}");
    assert_eq!(record["forfeit"]["color"], colour, "{record}");
    assert!(
        record["forfeit"]["detail"]
            .as_str()
            .unwrap()
            .contains("resigned"),
        "{record}"
    );
    assert_eq!(record["discs_wof"][colour], 0, "{record}");
    let re = read_ggf(results, record["id"].as_str().unwrap())["RE"].clone();
    assert!(re.as_str().unwrap().ends_with(":r"), "{re}");
}

#[test]
fn a_person_may_resign_at_the_terminal_after_saying_yes() {
    let s = Scratch::new();
    let shown = resign_at_terminal(
        s.path(),
        &[
            "play",
            "--black",
            "human:ann",
            "--white",
            "greedy",
            "--size",
            "6",
            "--board",
            "board",
            "--json",
        ],
        "\"id\"",
    );
    assert!(shown.contains("you resigned this game"), "{shown}");
    assert!(shown.contains("game over: you lost"), "{shown}");
    let json = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("no record:\n{shown}"));
    let record: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_resigned(&record, "ann", &s.join("results"));
    // Taken back, then confirmed, at the same prompt: ann resigned at her
    // first move, so no move of hers is in the record.
    let ann_moves = record["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["color"] == "black" && m["opening"] != true)
        .count();
    assert_eq!(ann_moves, 0, "{record}");
}

#[test]
fn a_person_at_a_seat_resigns_through_the_board_and_the_results_read_back() {
    let s = Scratch::new();
    s.write("tournament.toml", &ann_waits_for_greedy("gives up"));
    let mut referee = referee_in(s.path());
    let shown = resign_at_terminal(s.path(), &["seat", "ann", "--games", "1"], "game over");
    assert!(shown.contains("you lost"), "{shown}");
    assert!(shown.contains("(resigned)"), "{shown}");
    let done = wait_until(30, || referee.try_wait().unwrap().is_some());
    if !done {
        let _ = referee.kill();
    }
    let out = referee.wait_with_output().unwrap();
    assert!(
        done && out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_resigned(&record, "ann", &s.join("results"));
    assert!(
        !text.contains("\"people\""),
        "no `human = true` player: {text}"
    );
    // The results, read again (every record replayed), count the loss.
    let table = std::process::Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["crosstable", "--format", "json"])
        .output()
        .unwrap();
    assert!(table.status.success(), "{table:?}");
    let table: serde_json::Value = serde_json::from_slice(&table.stdout).unwrap();
    let greedy = table["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["player"] == "greedy")
        .unwrap_or_else(|| panic!("{table}"));
    assert_eq!(greedy["wins"], 1, "{table}");
}

/// `tournament run` in `dir`, its output piped.
fn referee_in(dir: &std::path::Path) -> std::process::Child {
    std::process::Command::new(tournament_bin())
        .env_remove("TOURNAMENT_LOG")
        .current_dir(dir)
        .arg("run")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A 6×6 event `name` of `ann`, started by hand (a seat), against the
/// built-in greedy, with time for a person.
fn ann_waits_for_greedy(name: &str) -> String {
    format!(
        "[tournament]\nname = \"{name}\"\nsize = 6\n\n[time]\nmove-ms = 30000\nwait-ms = 60000\n\n\
         [[player]]\nname = \"ann\"\nwait = true\n\n[[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n"
    )
}
