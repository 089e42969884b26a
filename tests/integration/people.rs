//! Issue 28, at the terminal: a person plays a whole game against a
//! built-in bot through a real pseudo-terminal, typing what people type.

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

/// Waits for the prompt after `answered` prompts were answered, or the end.
fn next_prompt(term: &mut std::fs::File, shown: &mut String, answered: usize) -> bool {
    read_until(term, shown, 60, |s| {
        s.matches(PROMPT).count() > answered || s.contains("game over")
    });
    shown.matches(PROMPT).count() > answered
}

#[test]
fn a_person_at_a_terminal_plays_a_whole_game_and_typos_are_asked_again() {
    let s = Scratch::new();
    let (mut term, slave) = openpty();
    let out = slave.try_clone().unwrap();
    let mut child = std::process::Command::new(tournament_bin())
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .current_dir(s.path())
        .args([
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
        ])
        .stdin(Stdio::from(slave))
        .stdout(Stdio::from(out))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut shown = String::new();
    let mut answered = 0;
    let mut typed = Vec::new();
    // A typo, an occupied square and a pass with moves left: each refused
    // with why, then asked again.
    for (entry, why) in [
        ("z9", "is not a square"),
        ("c3", "is taken"),
        ("pass", "you cannot pass"),
    ] {
        assert!(next_prompt(&mut term, &mut shown, answered), "{shown}");
        writeln!(term, "{entry}").unwrap();
        answered += 1;
        read_until(&mut term, &mut shown, 30, |s| s.contains(why));
    }
    // Then the first legal move each time, in capitals once, till the end.
    while next_prompt(&mut term, &mut shown, answered) {
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
        assert!(typed.len() < 40, "{shown}");
    }
    read_until(&mut term, &mut shown, 30, |s| s.contains("\"id\""));
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}\n{shown}");
    let json = shown
        .lines()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or_else(|| panic!("no record:\n{shown}"));
    let record: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert_eq!(record["black"], "ann", "{record}");
    assert_eq!(record["reason"], "normal", "{record}");
    assert!(record["forfeit"].is_null(), "{record}");
    // Every move the person typed is in the transcript, which the rules
    // replay to the end of a game.
    let transcript = record["transcript"].as_str().unwrap().to_string();
    for sq in &typed {
        assert!(transcript.contains(sq.as_str()), "{sq} not in {transcript}");
    }
    let (_, end) = othello::replay_transcript(othello::Position::start(6), &transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
}
