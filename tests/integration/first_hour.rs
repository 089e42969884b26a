//! A bot author's first hour (issue 19): the shipped libraries do not hide
//! a bug in the bot's own move choice — check-bot fails it with a hint that
//! names the mistake, `play` warns with a count, the strict option turns it
//! into a forfeit —; check-bot's hints for the mistakes a beginner makes
//! (rows and columns swapped, rows from 0, the answer on stdout, a script it
//! may not execute), once each with a count; `watch` following game after
//! game; and the documentation's examples (tournament.toml snippets, the
//! minimal bots of PROTOCOL.md, the bash one too) really work.
//! Then the first hour again (issue 31): a crashing bot's stderr in `run`'s
//! output and its forfeits in the crosstable and report, printed commands
//! that work when pasted, nothing left behind by `play`, the start-up log's
//! words, the ETA, `watch` replaying a finished game, and what a seed repeats.

use std::path::Path;
use std::time::Duration;

use crate::fixture::{project_root, Scratch};
use crate::needs;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The three mistakes met in practice, in each language with a library:
/// (file, bot source, what check-bot's report must say).
const BUGGY: [(&str, &str, &[&str]); 9] = [
    (
        "swapped.rb",
        "require_relative \"mailbox\"\nMailbox.run do |turn|\n  row, col = turn.moves.keys.max.divmod(turn.size)\n  col * turn.size + row\nend\n",
        &["your code chose h3: h3 with rows and columns swapped, c8, would be legal"],
    ),
    (
        "zero.rb",
        "require_relative \"mailbox\"\nMailbox.run do |turn|\n  row, col = turn.moves.keys.first.divmod(turn.size)\n  \"#{(\"a\".ord + col).chr}#{row}\"\nend\n",
        &["your code chose d2: d3, one row lower, would be legal: rows are numbered from 1, not 0"],
    ),
    (
        "typo.rb",
        "require_relative \"mailbox\"\nMailbox.run do |turn|\n  turn.moves.keys.frist\nend\n",
        &["your move-choosing code raised an error", "raised NoMethodError: undefined method `frist'"],
    ),
    (
        "swapped.py",
        "import mailbox\ndef choose(turn):\n    row, col = divmod(max(turn.moves), turn.size)\n    return col * turn.size + row\nmailbox.run(choose)\n",
        &["your code chose h3: h3 with rows and columns swapped, c8, would be legal"],
    ),
    (
        "zero.py",
        "import mailbox\ndef choose(turn):\n    row, col = divmod(min(turn.moves), turn.size)\n    return 'abcdefgh'[col] + str(row)\nmailbox.run(choose)\n",
        &["your code chose d2: d3, one row lower, would be legal"],
    ),
    (
        "typo.py",
        "import mailbox\ndef choose(turn):\n    return max(turn.moves, key=lambda i: len(turn.moves[i].flipped))\nmailbox.run(choose)\n",
        &["raised AttributeError: 'list' object has no attribute 'flipped'"],
    ),
    (
        "swapped.js",
        "const mb = require(require('path').join(__dirname, 'mailbox.js'));\nmb.run((turn) => {\n  const i = Math.max(...turn.moves.keys());\n  return (i % turn.size) * turn.size + Math.floor(i / turn.size);\n});\n",
        &["your code chose h3: h3 with rows and columns swapped, c8, would be legal"],
    ),
    (
        "zero.js",
        "const mb = require(require('path').join(__dirname, 'mailbox.js'));\nmb.run((turn) => {\n  const i = Math.min(...turn.moves.keys());\n  return 'abcdefgh'[i % turn.size] + Math.floor(i / turn.size);\n});\n",
        &["your code chose d2: d3, one row lower, would be legal"],
    ),
    (
        "typo.js",
        "const mb = require(require('path').join(__dirname, 'mailbox.js'));\nmb.run((turn) => turn.moves.kyes().next().value);\n",
        &["threw TypeError: turn.moves.kyes is not a function"],
    ),
];

fn interpreter(file: &str) -> &'static str {
    match Path::new(file).extension().and_then(|e| e.to_str()) {
        Some("rb") => "ruby",
        Some("py") => "python3",
        _ => "node",
    }
}

/// A scratch folder with the three libraries and the buggy bots beside them.
fn buggy_bots() -> Scratch {
    let s = Scratch::new();
    for lib in ["ruby/mailbox.rb", "python/mailbox.py", "js/mailbox.js"] {
        let from = project_root().join("bots").join(lib);
        let name = Path::new(lib).file_name().unwrap();
        std::fs::copy(from, s.path().join(name)).unwrap();
    }
    for (file, source, _) in BUGGY {
        s.write(file, source);
    }
    s
}

#[test]
fn check_bot_fails_a_bad_choice_the_library_covered_and_names_the_mistake() {
    let s = buggy_bots();
    let cases = needs::keep_runnable(BUGGY.to_vec(), |(file, _, _)| {
        needs::interpreter_of(interpreter(file))
    });
    for (file, _, expected) in cases {
        let out = s
            .cmd(&["check-bot", "--", interpreter(file), file])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(tournament::error::exit::BOT_NONCOMPLIANT),
            "{file}:\n{stdout}"
        );
        assert!(
            stdout.contains("✗ every move chosen by the bot itself (no library fallback):"),
            "{file}:\n{stdout}"
        );
        assert!(
            stdout.contains("moves played by the library instead"),
            "{file}:\n{stdout}"
        );
        for e in expected {
            assert!(stdout.contains(e), "{file}: `{e}` missing:\n{stdout}");
        }
        assert!(
            stdout.contains("set MAILBOX_STRICT=1 (or the library's strict option)"),
            "{file}:\n{stdout}"
        );
    }
}

#[test]
fn play_warns_about_library_fallbacks_with_a_count_and_strict_makes_them_a_forfeit() {
    if !needs::have(&[needs::RUBY, needs::NODE]) {
        return;
    }
    let s = buggy_bots();
    let out = s
        .cmd(&[
            "play",
            "--black",
            "ruby typo.rb",
            "--white",
            "greedy",
            "--size",
            "6",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "typo.1: its library played a move the bot did not choose: mailbox fallback: seq"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("moves this game played by its library, not chosen by the bot"),
        "{stderr}"
    );

    for file in ["typo.rb", "zero.py", "swapped.js"] {
        let cmd = format!("{} {file}", interpreter(file));
        let out = s
            .cmd(&["play", "--black", &cmd, "--white", "greedy", "--json"])
            .env("MAILBOX_STRICT", "1")
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let record = crate::fixture::record_of(&out.stdout);
        assert_eq!(record["result"], "white", "{file}: {record}");
        assert!(
            record["reason"] != "normal",
            "{file}: a strict bad choice forfeits: {record}"
        );
    }
}

/// The ```toml blocks of a markdown file, with the line each starts on.
fn toml_blocks(md: &str) -> Vec<(usize, String)> {
    let mut blocks = vec![];
    let mut current: Option<(usize, String)> = None;
    for (i, line) in md.lines().enumerate() {
        match &mut current {
            None if line.trim_start().starts_with("```toml") => {
                current = Some((i + 1, String::new()))
            }
            None => {}
            Some(_) if line.trim_start().starts_with("```") => blocks.push(current.take().unwrap()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    blocks
}

#[test]
fn every_tournament_toml_snippet_in_the_readmes_parses() {
    // A snippet that is only players gets a [tournament] and two others.
    const AROUND: &str = "[tournament]\nname = \"t\"\n\n[[player]]\nname = \"x1\"\nbuiltin = \"random\"\n\n[[player]]\nname = \"x2\"\nbuiltin = \"greedy\"\n\n";
    let mut seen = 0;
    for md in ["README.md", "bots/README.md"] {
        let text = std::fs::read_to_string(project_root().join(md)).unwrap();
        let blocks = toml_blocks(&text);
        assert!(!blocks.is_empty(), "{md} has no ```toml block");
        for (line, block) in blocks {
            let whole = if block.contains("[tournament]") {
                block.clone()
            } else {
                format!("{AROUND}{block}")
            };
            let path = project_root().join("tournament.toml");
            if let Err(e) = tournament::config::parse(&path, &whole) {
                panic!("{md}, the ```toml block at line {line} does not parse: {e}\n{block}");
            }
            seen += 1;
        }
    }
    assert!(seen >= 2);
}

#[test]
fn a_closed_stdout_stops_every_command_quietly() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"t\"\n\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n[[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n",
    );
    let bin = crate::fixture::tournament_bin();
    for args in [
        &["run"][..],
        &["play", "--black", "random", "--white", "greedy", "--json"],
        &["perft", "3"],
        &["crosstable"],
    ] {
        // The reader is gone before the command starts (no race with a
        // fast command that writes everything into the pipe's buffer).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(&bin)
            .args(args)
            .current_dir(s.path())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(tournament::error::exit::STDOUT_CLOSED),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

#[test]
fn help_shows_verbose_and_quiet_as_global_options_after_the_commands_own() {
    for command in ["run", "play", "check-bot", "watch"] {
        let out = crate::fixture::tournament()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = text(&out.stdout);
        let (own, global) = help
            .split_once("\nGlobal options:\n")
            .unwrap_or_else(|| panic!("{command}: no `Global options:` heading:\n{help}"));
        assert!(
            !own.contains("--verbose") && !own.contains("--quiet"),
            "{help}"
        );
        assert!(
            global.contains("-v, --verbose") && global.contains("-q, --quiet"),
            "{help}"
        );
    }
}

/// `tournament check-bot` on the misreading test bot in `mode`: its exit
/// code and report (stdout).
fn check_misread(mode: &str) -> (Option<i32>, String) {
    let s = Scratch::new();
    let bot = project_root().join("tests/fixtures/misreadbot.py");
    let out = s
        .cmd(&["check-bot", "--", "python3", bot.to_str().unwrap(), mode])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (out.status.code(), text(&out.stdout))
}

#[test]
fn check_bot_names_swapped_rows_and_columns_on_every_board_size() {
    let (code, report) = check_misread("swap");
    assert_eq!(code, Some(tournament::error::exit::BOT_NONCOMPLIANT));
    for (size, line) in [
        // 8×8, black: c8 is the only legal move; the bot answered h3.
        (
            8,
            "hint      h3 with rows and columns swapped, c8, would be legal",
        ),
        // 6×6, white (e2, e3, f4, e5 or c6): c6 swapped is f3.
        (
            6,
            "hint      f3 with rows and columns swapped, c6, would be legal",
        ),
        // 4×4, white, in the complete game.
        (4, "with rows and columns swapped, c4, would be legal"),
    ] {
        assert!(report.contains(line), "{size}×{size}: `{line}`:\n{report}");
    }
    assert!(
        !report.contains("but you play"),
        "the swap explains it, not the colour:\n{report}"
    );
}

#[test]
fn check_bot_names_rows_counted_from_zero() {
    let (code, report) = check_misread("zero");
    assert_eq!(code, Some(tournament::error::exit::BOT_NONCOMPLIANT));
    // From the start the bot answered d2 for d3; after white's pass, d0 for d1.
    for line in [
        "hint      d3, one row lower, would be legal: rows are numbered from 1, not 0",
        "got       \"d0\", which is not a square or `pass`",
        "hint      d1, one row lower, would be legal: rows are numbered from 1, not 0",
    ] {
        assert!(report.contains(line), "`{line}`:\n{report}");
    }
}

#[test]
fn check_bot_tells_a_bot_that_prints_its_answer_to_write_out_txt() {
    let (code, report) = check_misread("stdout");
    assert_eq!(code, Some(tournament::error::exit::BOT_NONCOMPLIANT));
    for line in [
        "hint      nothing came in out.txt, but the bot printed \"d3\" on stdout: the referee reads only out.txt",
        "write the four lines \"misreadbot.1\\nreferee\\n2\\n<answer>\\n\" to out.txt",
        "      last lines of its stdout:\n      | d3\n",
    ] {
        assert!(report.contains(line), "`{line}`:\n{report}");
    }
}

#[test]
fn check_bot_shows_a_repeated_hint_once_with_a_count_and_unchecked_checks_as_not_checked() {
    let (code, report) = check_misread("fromto");
    assert_eq!(code, Some(tournament::error::exit::BOT_NONCOMPLIANT));
    let hint = "lines 1 and 2 are swapped: line 1 is the sender (you, `misreadbot.1`), line 2 the recipient (`referee`)";
    assert_eq!(
        report.matches(hint).count(),
        2,
        "once in the first problem, once in the list at the end:\n{report}"
    );
    assert!(
        report.contains("hint      the same as for seq 1 (×11 so far; listed at the end)"),
        "{report}"
    );
    assert!(
        report.contains(&format!("hints given more than once:\n  ×11  {hint}\n")),
        "{report}"
    );
    for line in [
        "- seq: every answer repeats the seq of its message: no usable answer came (not checked)",
        "- timing: every answer within move-ms (2000 ms), READY within startup-ms (10000 ms): no answer came (not checked)",
        "- every move chosen by the bot itself (no library fallback): no TURN was answered (not checked)",
        "17 checks, 11 failed, 1 warning, 4 not checked",
    ] {
        assert!(report.contains(line), "`{line}`:\n{report}");
    }
    assert!(!report.contains("✓ seq:"), "{report}");
    assert!(!report.contains("slowest READY -"), "{report}");
}

#[test]
fn check_bot_says_chmod_or_name_the_interpreter_for_a_script_it_cannot_execute() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new();
    let bot = s.write(
        "bot.py",
        "#!/usr/bin/env python3\nimport time\ntime.sleep(60)\n",
    );
    let expect = "chmod +x";
    let interp = "or name its interpreter in command, e.g. [\"python3\",";
    // Without any execute bit: refused before it starts.
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = s
        .cmd(&["check-bot", "--", "./bot.py"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("is not an executable file: chmod +x ./bot.py"),
        "{stderr}"
    );
    assert!(stderr.contains(interp), "{stderr}");
    // Executable by its owner only: as root the bot runs as `nobody`, who
    // may not execute it; the start fails with the same hint.
    if unsafe { libc::geteuid() } == 0 {
        std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o744)).unwrap();
        let out = s
            .cmd(&["check-bot", "--", "./bot.py"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(!out.status.success(), "{stdout}");
        assert!(
            stdout.contains("got       the bot could not be started: cannot start `"),
            "{stdout}"
        );
        assert!(stdout.contains("Permission denied"), "{stdout}");
        assert!(
            stdout.contains(expect) && stdout.contains(interp),
            "{stdout}"
        );
    }
}

/// The minimal bots of PROTOCOL.md section 6: (heading, code), in order.
fn minimal_bots() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(project_root().join("PROTOCOL.md")).unwrap();
    let section = text
        .split("\n## 6. Minimal bots\n")
        .nth(1)
        .expect("PROTOCOL.md has section 6")
        .split("\n## ")
        .next()
        .unwrap();
    let mut bots = vec![];
    for part in section.split("\n### ").skip(1) {
        let (heading, body) = part.split_once('\n').unwrap();
        let Some(code) = body
            .split_once("```")
            .and_then(|(_, rest)| rest.split_once('\n'))
            .and_then(|(_, rest)| rest.split_once("\n```"))
            .map(|(code, _)| format!("{code}\n"))
        else {
            continue;
        };
        bots.push((heading.trim().to_string(), code));
    }
    bots
}

/// How a minimal bot of PROTOCOL.md is run: (file name, interpreter).
fn minimal_bot_file(heading: &str) -> (&'static str, &'static str) {
    match heading {
        "Python 3" => ("bot.py", "python3"),
        "Ruby" => ("bot.rb", "ruby"),
        "JavaScript (node)" => ("bot.js", "node"),
        "yabasic" => ("bot.yab", "yabasic"),
        "bash" => ("bot.sh", "bash"),
        other => panic!("PROTOCOL.md section 6 has a bot under `### {other}`: say how to run it"),
    }
}

#[test]
fn every_minimal_bot_of_protocol_md_passes_check_bot_the_bash_one_too() {
    let bots = minimal_bots();
    let headings: Vec<&str> = bots.iter().map(|(h, _)| h.as_str()).collect();
    assert!(headings.contains(&"bash"), "{headings:?}");
    let bots = crate::needs::keep_runnable(bots, |(heading, _)| {
        crate::needs::interpreter_of(minimal_bot_file(heading).1)
    });
    let s = Scratch::new();
    for (heading, code) in &bots {
        let (file, interpreter) = minimal_bot_file(heading);
        s.write(file, code);
        let out = s
            .cmd(&["check-bot", "--", interpreter, file])
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{heading}:\n{stdout}");
        assert!(
            stdout.contains("17 checks, 0 failed\n"),
            "{heading}:\n{stdout}"
        );
    }
}

#[test]
fn the_bash_bot_reading_in_txt_with_command_substitution_waits_forever_as_protocol_md_warns() {
    let (_, code) = minimal_bots()
        .into_iter()
        .find(|(h, _)| h == "bash")
        .unwrap();
    let right = "IFS= read -r -d '' msg 2>/dev/null < in.txt";
    assert!(code.contains(right), "{code}");
    let doc = std::fs::read_to_string(project_root().join("PROTOCOL.md")).unwrap();
    assert!(doc.contains("`msg=$(<in.txt)`"), "the warning is there");
    let s = Scratch::new();
    s.write("wrong.sh", &code.replace(right, "msg=$(<in.txt)"));
    let out = s
        .cmd(&[
            "check-bot",
            "--startup-ms",
            "1500",
            "--",
            "bash",
            "wrong.sh",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(tournament::error::exit::BOT_NONCOMPLIANT),
        "{stdout}"
    );
    assert!(
        stdout.contains("stopped early: the bot never answered its first NEW"),
        "{stdout}"
    );
}

#[test]
fn watch_follows_a_players_games_one_after_another_marks_the_last_move_and_answers_a_finished_game_at_once(
) {
    let s = Scratch::new();
    // Slow enough that a loaded machine cannot end a game before watch sees it.
    let slow = crate::fixture::fakebot("slow 400");
    let slow: Vec<String> = slow.split(' ').map(|w| format!("{w:?}")).collect();
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"w\"\ngames-per-pairing = 2\nconcurrency = 1\nsize = 4\n\n\
             [time]\nmove-ms = 3000\n\n\
             [[player]]\nname = \"slow\"\ncommand = [{}]\n\n\
             [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\n\
             [[player]]\nname = \"random\"\nbuiltin = \"random\"\n",
            slow.join(", ")
        ),
    );
    let mut run = std::process::Command::new(crate::fixture::tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = s
        .cmd(&["watch", "--follow", "--player", "slow", "--wait-secs", "30"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(run.wait().unwrap().success());
    let watched = text(&out.stdout);
    assert!(out.status.success(), "{watched}\n{}", text(&out.stderr));
    // slow plays 4 of the 6 games; each is followed to its end, in turn.
    let headers: Vec<&str> = watched
        .lines()
        .filter(|l| l.starts_with("game r"))
        .collect();
    assert_eq!(headers.len(), 4, "{watched}");
    assert!(headers.iter().all(|h| h.contains("slow")), "{headers:?}");
    assert_eq!(watched.matches("game over: ").count(), 4, "{watched}");
    assert_eq!(
        watched
            .matches("(--follow: waiting for the next game)")
            .count(),
        4,
        "{watched}"
    );
    assert!(
        watched.contains("no more games: no referee runs on"),
        "{watched}"
    );
    // The last move is in brackets: after `move N: black d3`, row 3 has (X) in column d.
    let mut marked = 0;
    let lines: Vec<&str> = watched.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("move ") else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (color, mv) = (words[1], words[2]);
        if mv == "pass" {
            continue;
        }
        let col = usize::from(mv.as_bytes()[0] - b'a');
        let row: usize = mv[1..].parse().unwrap();
        let board_row = lines[i - 5 + row];
        let disc = if color == "black" { 'X' } else { 'O' };
        let at = 3 + 2 * col;
        assert_eq!(
            &board_row[at - 1..at + 2],
            format!("({disc})"),
            "{line}:\n{}",
            lines[i - 5..i].join("\n")
        );
        marked += 1;
    }
    assert!(marked > 10, "{watched}");

    // A finished game: its result at once, then its replay.
    let id = headers[0]
        .strip_prefix("game ")
        .unwrap()
        .split(':')
        .next()
        .unwrap();
    let started = std::time::Instant::now();
    let out = s
        .cmd(&["watch", id, "--wait-secs", "30", "--pace-ms", "0"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not waited for: {:?}",
        started.elapsed()
    );
    assert!(
        said.starts_with(&format!("game {id} is finished: ")),
        "{said}"
    );
    assert!(said.contains("Its replay:"), "{said}");
}

#[test]
fn watch_replays_a_finished_game_in_the_terminal_at_a_pace_or_step_by_step() {
    use tournament::record::GameRecord;
    let s = class_of("games-per-pairing = 1\nsize = 4\n", TWO_BUILTINS);
    s.run_ok(&["run"], 120);
    let record: GameRecord = serde_json::from_str(
        std::fs::read_to_string(s.join("results/games.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let n = record.moves.len();
    assert!(n > 3, "{record:?}");
    let moves_shown = |said: &str| said.lines().filter(|l| l.starts_with("move ")).count();

    // At a pace: every move drawn, the pace kept, the result last.
    let started = std::time::Instant::now();
    let out = s.run_ok(&["watch", &record.id, "--pace-ms", "150"], 60);
    let took = started.elapsed();
    let said = text(&out.stdout);
    assert_eq!(moves_shown(&said), n, "{said}");
    assert!(
        took >= Duration::from_millis(150 * (n as u64 - 1)),
        "{took:?}"
    );
    let last = &record.moves[n - 1];
    assert!(
        said.contains(&format!("move {n}: {} {}", last.color, last.mv)),
        "{said}"
    );
    assert!(
        said.trim_end().ends_with(&format!(
            "game over: {}",
            tournament::report::result_line(&record)
        )),
        "{said}"
    );
    // The final board is the record's: its disc count.
    assert!(
        said.contains(&format!(
            "X {}  O {}\n",
            record.discs.black, record.discs.white
        )),
        "{said}"
    );

    // Step by step: one move per Enter.
    let out = s
        .cmd(&["watch", &record.id, "--step"])
        .write_stdin("\n".repeat(n))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(moves_shown(&said), n, "{said}");
    assert_eq!(said.matches("(Enter: next move) ").count(), n - 1, "{said}");
}

/// A scratch folder whose tournament.toml has `players` (player tables)
/// after a `[tournament]` table with `settings`.
fn class_of(settings: &str, players: &str) -> Scratch {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &format!("[tournament]\nname = \"t\"\n{settings}\n{players}"),
    );
    s
}

/// A class with a bot that dies at once with a line on stderr (and an
/// escape that must arrive visible, not as an escape), and a built-in.
fn crashing_class(games: u32) -> Scratch {
    let s = class_of(
        &format!("games-per-pairing = {games}\n"),
        "[[player]]\nname = \"crash\"\ncommand = [\"python3\", \"crash.py\"]\n\n\
         [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n",
    );
    s.write(
        "crash.py",
        "import sys\n\
         sys.stderr.write('before the crash\\n\\x1b[2Jindex 1 (=3) out of range RECOGNISABLE\\n')\n\
         sys.exit(1)\n",
    );
    s
}

#[test]
fn run_shows_a_crashing_bots_last_stderr_lines_and_its_games_log() {
    let s = crashing_class(1);
    let out = s.run_ok(&["run"], 120);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("forfeits (exited)"), "{stderr}");
    assert!(
        stderr.contains("last lines of its stderr:\n    | before the crash\n    | \\u{1b}[2Jindex 1 (=3) out of range RECOGNISABLE\n"),
        "{stderr}"
    );
    let log = s.path().join("results/logs/r01.crash.greedy.log");
    assert!(
        stderr.contains(&format!("the game's log: {}", log.display())),
        "{stderr}"
    );
    assert!(log.exists());
}

/// The command a printed line ends with (after `after`), split as a shell
/// would, with the check that `tournament` accepts it as it is.
fn pasted(stderr: &str, after: &str) -> tournament::cli::Cli {
    use clap::Parser;
    let line = stderr
        .lines()
        .find_map(|l| l.split_once(after).map(|(_, c)| c))
        .unwrap_or_else(|| panic!("no `{after}` line:\n{stderr}"));
    let words = shell_words::split(line).unwrap();
    assert_eq!(
        std::path::PathBuf::from(&words[0]),
        crate::fixture::tournament_bin(),
        "{line}"
    );
    tournament::cli::Cli::try_parse_from(&words)
        .unwrap_or_else(|e| panic!("`{line}` is refused:\n{e}"))
}

const TWO_BUILTINS: &str = "[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n\
                            [[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n";

#[test]
fn the_live_pages_hint_for_the_network_is_a_command_that_is_accepted_as_printed() {
    use std::io::BufRead;
    use tournament::cli::Command;
    let s = class_of("games-per-pairing = 1\nsize = 4\n", TWO_BUILTINS);
    let out = s.run_ok(&["run", "--serve", "127.0.0.1:0"], 120);
    let stderr = text(&out.stderr);
    let hint = "to show it to the network (anyone who can reach this machine can watch): ";
    match pasted(&stderr, hint).command {
        Command::Run(args) => {
            let addr = args.serve.expect("--serve given");
            assert!(addr.ip().is_unspecified() && addr.port() != 0, "{addr}");
        }
        other => panic!("{other:?}"),
    }
    assert!(!stderr.contains("--addr"), "`run` has no --addr:\n{stderr}");

    // `serve` says the same with its own option.
    let mut serve = std::process::Command::new(crate::fixture::tournament_bin())
        .current_dir(s.path())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    for line in std::io::BufReader::new(serve.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        said.push_str(&line);
        said.push('\n');
        if line.contains(hint) {
            break;
        }
    }
    let _ = serve.kill();
    let _ = serve.wait();
    match pasted(&said, hint).command {
        Command::Serve(args) => assert!(args.addr.ip().is_unspecified(), "{said}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_start_hint_for_a_bot_started_by_hand_works_when_pasted_into_a_shell() {
    let s = class_of(
        "games-per-pairing = 1\nsize = 4\n\n[time]\nmove-ms = 3000\n",
        "[[player]]\nname = \"student\"\nwait = true\n\
         hand-command = \"python3 students/human.py\"\n\n\
         [[player]]\nname = \"rnd\"\nbuiltin = \"random\"\n",
    );
    // The student's bot is the shipped weighted one, beside its library.
    for file in ["mailbox.py", "weighted.py"] {
        let to = if file == "weighted.py" {
            "human.py"
        } else {
            file
        };
        std::fs::create_dir_all(s.join("students")).unwrap();
        std::fs::copy(
            project_root().join("bots/python").join(file),
            s.join("students").join(to),
        )
        .unwrap();
    }
    let err_path = s.join("run.err");
    let mut run = std::process::Command::new(crate::fixture::tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .env_remove("TOURNAMENT_LOG")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let stderr = || std::fs::read_to_string(&err_path).unwrap_or_default();
    let hint = "start it there with: ";
    assert!(
        crate::fixture::wait_until(30, || stderr().contains(hint)),
        "{}",
        stderr()
    );
    let said = stderr();
    let command = said
        .lines()
        .find_map(|l| l.split_once(hint).map(|(_, c)| c.to_string()))
        .unwrap();
    // Pasted as it is, from anywhere (here: the filesystem's root).
    use std::os::unix::process::CommandExt;
    let bot = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir("/")
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let done = crate::fixture::wait_until(60, || run.try_wait().unwrap().is_some());
    let _ = run.kill();
    let status = run.wait().unwrap();
    // The shell and the bot it started.
    unsafe { libc::kill(-(bot.id() as i32), libc::SIGKILL) };
    let bot_err = bot.wait_with_output().unwrap();
    assert!(
        done && status.success(),
        "{command}\n{}\nbot: {}",
        stderr(),
        text(&bot_err.stderr)
    );
    let games = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    assert!(
        games.contains("\"reason\":\"normal\""),
        "{command}: {games}"
    );
}

#[test]
fn the_start_up_log_names_the_results_lock_as_what_it_is() {
    let s = class_of(
        "games-per-pairing = 1\nsize = 4\nboard = \"board\"\nresults = \"results\"\n",
        TWO_BUILTINS,
    );
    let out = s.run_ok(&["run"], 120);
    let stderr = text(&out.stderr);
    let board = s.path().join("board");
    let lock = s.path().join("results/lock");
    assert!(
        stderr.contains(&format!("made the board folder {}\n", board.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "made the results lock folder {}\n",
            lock.display()
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("made the board folder {}", lock.display())),
        "{stderr}"
    );
}

#[test]
fn the_progress_bar_shows_no_eta_before_a_game_has_finished() {
    if !crate::needs::have(&[crate::needs::Need::Program("script", "util-linux")]) {
        return;
    }
    let slow: Vec<String> = crate::fixture::fakebot("slow 300")
        .split(' ')
        .map(|w| format!("{w:?}"))
        .collect();
    let s = class_of(
        "games-per-pairing = 2\nconcurrency = 1\nsize = 4\n\n[time]\nmove-ms = 3000\n",
        &format!(
            "[[player]]\nname = \"slow\"\ncommand = [{}]\n\n\
             [[player]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n",
            slow.join(", ")
        ),
    );
    // On a terminal (script's), where the bar is drawn.
    let run = format!(
        "{} run",
        shell_words::quote(&crate::fixture::tournament_bin().display().to_string())
    );
    let out = std::process::Command::new("script")
        .args(["-qefc", &run, "typescript"])
        .current_dir(s.path())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let screen = std::fs::read_to_string(s.join("typescript")).unwrap_or_default();
    assert!(out.status.success(), "{screen}");
    assert!(screen.contains("0/2 games · 1 running"), "{screen}");
    assert!(!screen.contains("0/2 games · ETA"), "{screen}");
}

#[test]
fn play_without_a_tournament_file_leaves_nothing_in_the_current_folder() {
    let s = Scratch::new();
    let out = s.run_ok(
        &[
            "play", "--black", "random", "--white", "greedy", "--size", "4",
        ],
        60,
    );
    let stderr = text(&out.stderr);
    let left: Vec<_> = std::fs::read_dir(s.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}\n{stderr}");
    // Its board was a folder of its own, gone now.
    let board = stderr
        .lines()
        .find_map(|l| l.split_once("made the board folder ").map(|(_, p)| p))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(!std::path::Path::new(board).exists(), "{board}");
    assert!(
        !board.starts_with(&s.path().display().to_string()),
        "{board}"
    );
}

#[test]
fn the_readme_says_what_a_seed_repeats_and_built_in_games_do_repeat() {
    let readme = std::fs::read_to_string(project_root().join("README.md")).unwrap();
    let (_, section) = readme
        .split_once("**What a seed makes repeatable.**")
        .expect("README.md says what a seed makes repeatable");
    let section = section.split("\n\n").next().unwrap();
    for said in [
        "openings",
        "built-in bots",
        "pairings",
        "engine's own randomness",
        "timing",
    ] {
        assert!(section.contains(said), "`{said}` missing:\n{section}");
    }
    // What it promises: the same games from the same seed, whatever
    // process or order plays them.
    let games = || {
        let s = class_of(
            "games-per-pairing = 2\nconcurrency = 2\nsize = 6\n\n[openings]\nrandom-plies = 4\nseed = 7\n",
            &format!("{TWO_BUILTINS}\n[[player]]\nname = \"c\"\nbuiltin = \"weighted\"\n"),
        );
        s.run_ok(&["run"], 120);
        let mut games: Vec<(String, String)> =
            std::fs::read_to_string(s.join("results/games.jsonl"))
                .unwrap()
                .lines()
                .map(|l| {
                    let r: tournament::record::GameRecord = serde_json::from_str(l).unwrap();
                    (r.id, r.transcript)
                })
                .collect();
        games.sort();
        games
    };
    let first = games();
    assert_eq!(first.len(), 6);
    assert_eq!(first, games());
}

#[test]
fn the_crosstable_counts_forfeits_and_the_report_links_each_to_its_log() {
    let s = crashing_class(2);
    let out = s.run_ok(&["run"], 120);
    let table = text(&out.stdout);
    let header = table.lines().next().unwrap();
    assert!(header.contains("W-D-L  Forfeits  Discs"), "{table}");
    let at = header.find("Forfeits").unwrap() + "Forfeits".len();
    let forfeits_of = |name: &str| {
        let row = table.lines().find(|l| l.contains(name)).unwrap();
        row[..at].split_whitespace().last().unwrap().to_string()
    };
    assert_eq!(forfeits_of("crash"), "2", "{table}");
    assert_eq!(forfeits_of("greedy"), "0", "{table}");

    // The report beside the results: relative links to logs that exist.
    s.run_ok(&["report"], 60);
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    for id in ["r01.crash.greedy", "r02.greedy.crash"] {
        let href = format!("href=\"logs/{id}.log\">its log</a>");
        assert!(html.contains(&href), "{href} missing");
        assert!(s.join(&format!("results/logs/{id}.log")).is_file());
    }
    // Written elsewhere, the links still reach them.
    s.run_ok(&["report", "-o", "elsewhere.html"], 60);
    let html = std::fs::read_to_string(s.join("elsewhere.html")).unwrap();
    let href = format!(
        "href=\"file://{}/results/logs/r01.crash.greedy.log\"",
        s.path().display()
    );
    assert!(html.contains(&href), "{href} missing");
}

#[test]
fn the_commands_watch_names_for_finished_games_work_from_where_it_was_run() {
    let s = class_of("games-per-pairing = 1\nsize = 4\n", TWO_BUILTINS);
    s.run_ok(&["run"], 120);
    std::fs::create_dir_all(s.join("elsewhere")).unwrap();
    let out = crate::fixture::tournament()
        .current_dir(s.join("elsewhere"))
        .args(["watch", "--results", "../results", "--wait-secs", "1"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let said = text(&out.stderr);
    assert!(!out.status.success(), "no game runs: {said}");
    let commands: Vec<&str> = said
        .split_once("finished games: ")
        .unwrap_or_else(|| panic!("{said}"))
        .1
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    assert_eq!(commands.len(), 2, "{said}");
    for command in commands {
        let words = shell_words::split(command).unwrap();
        assert_eq!(
            std::path::PathBuf::from(&words[0]),
            crate::fixture::tournament_bin(),
            "{command}"
        );
        // Pasted where watch was run, each works.
        let out = std::process::Command::new(&words[0])
            .args(&words[1..])
            .current_dir(s.join("elsewhere"))
            .output()
            .unwrap();
        assert!(out.status.success(), "`{command}`: {}", text(&out.stderr));
    }
    assert!(s.join("results/report.html").is_file());
}
