//! A bot author's first hour (issue 19): the shipped libraries do not hide
//! a bug in the bot's own move choice — check-bot fails it with a hint that
//! names the mistake, `play` warns with a count, the strict option turns it
//! into a forfeit — and the documentation's examples (tournament.toml
//! snippets, the shell bot of PROTOCOL.md) really work.

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
        let mut child = std::process::Command::new(&bin)
            .args(args)
            .current_dir(s.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let out = child.wait_with_output().unwrap();
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
