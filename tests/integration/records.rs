//! Game records out of the harness, read back by independent readers: the
//! GGF export by a parser written here from the format's description
//! (skatgame.net/mburo/ggsa/ggf), the WTHOR export by the `wthor` crate, and
//! the HTML report by headless Chromium (DOM and screenshot) against the
//! Rust engine.
//!
//! Every test makes its own results folder from real games: a four-game
//! tournament of built-in bots on 8×8, plus `tournament play` games appended
//! to it: one on 6×6 (not for WTHOR), one whose opening forces a pass, and
//! one the misbehaving test bot forfeits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tournament::game::{parse_move, Color, Move, Position, Square};
use tournament::record::{EndReason, GameRecord};
use tournament::results::read_records;

use crate::fixture::{assert_ok, fakebot, Scratch};

/// An opening after which black has no move (the referee passes for it).
const PASS_OPENING: &str = "d3c3b3b2f5a3a1c1";
/// The ply the viewer tests stop at (after the pass of `PASS_OPENING`).
const PLY: usize = 20;

/// A results folder with 7 games (see the module comment), and its records.
fn results_with_games() -> (Scratch, Vec<GameRecord>) {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        r#"
[tournament]
name = "Records test"
board = "board"
results = "results"
format = "round-robin"
games-per-pairing = 4
concurrency = 1
size = 8

[openings]
random-plies = 2
seed = 5

[[player]]
name = "random"
builtin = "random"

[[player]]
name = "greedy"
builtin = "greedy"
"#,
    );
    let out = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let garbage = fakebot("garbage");
    let extra: [&[&str]; 3] = [
        &["--black", "greedy", "--white", "random", "--size", "6"],
        &[
            "--black",
            "greedy",
            "--white",
            "random",
            "--start",
            PASS_OPENING,
        ],
        &[
            "--black",
            "random",
            "--white",
            &garbage,
            "--start",
            "f5d6c3d3c4",
        ],
    ];
    let mut lines = String::new();
    for args in extra {
        let mut all = vec!["play", "--json"];
        all.extend_from_slice(args);
        let out = s
            .cmd(&all)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "play {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().rev().find(|l| l.starts_with('{')).unwrap();
        lines.push_str(line);
        lines.push('\n');
    }
    let games = s.join("results/games.jsonl");
    let mut all = std::fs::read_to_string(&games).unwrap();
    all.push_str(&lines);
    std::fs::write(&games, all).unwrap();
    let records = read_records(&games).unwrap();
    assert_eq!(records.len(), 7);
    assert_eq!(records[4].size, 6);
    assert!(records[5].moves.iter().any(|m| m.mv == Move::Pass));
    assert_eq!(records[6].reason, EndReason::Unparseable);
    (s, records)
}

/// The position after the first `plies` plies of a record (passes count).
fn position_at(r: &GameRecord, plies: usize) -> Position {
    let mut pos = Position::start(r.size);
    for m in &r.moves[..plies] {
        pos = pos.play(m.mv).unwrap().0;
    }
    pos
}

// ---------------------------------------------------------------------------
// GGF, read by a parser written from the format description: a game is
// `(;` properties `;)`, a property is an upper-case name and a `[value]`;
// BO is `size rows… colour`, `*` black, `O` white, `-` empty, row 1 first;
// moves are `B[square/eval/time]` / `W[…]` with `PA` for a pass and the
// time in seconds; RE is the score for black, optionally `:r`, `:t`, `:s`.

#[derive(Debug)]
pub struct GgfGame {
    props: Vec<(String, String)>,
}

impl GgfGame {
    fn get(&self, name: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// (colour, square or "pass", seconds) for every B/W property.
    fn moves(&self) -> Vec<(Color, String, Option<f64>)> {
        self.props
            .iter()
            .filter(|(n, _)| n == "B" || n == "W")
            .map(|(n, v)| {
                let color = if n == "B" { Color::Black } else { Color::White };
                let mut parts = v.split('/');
                let sq = parts.next().unwrap().trim().to_ascii_lowercase();
                let _eval = parts.next();
                let time = parts
                    .next()
                    .filter(|t| !t.is_empty())
                    .map(|t| t.parse::<f64>().unwrap());
                let sq = if sq == "pa" { "pass".to_string() } else { sq };
                (color, sq, time)
            })
            .collect()
    }

    /// (size, board as `*O-` row by row, side to move).
    fn board(&self) -> (u8, String, char) {
        let bo = self.get("BO").expect("BO");
        let mut tokens: Vec<&str> = bo.split_whitespace().collect();
        let size: u8 = tokens.remove(0).parse().unwrap();
        let to_move = tokens.pop().unwrap().chars().next().unwrap();
        (size, tokens.concat(), to_move)
    }

    /// (score for black, flag).
    fn result(&self) -> (f64, Option<char>) {
        let re = self.get("RE").expect("RE");
        match re.split_once(':') {
            Some((score, flag)) => (score.parse().unwrap(), flag.chars().next()),
            None => (re.parse().unwrap(), None),
        }
    }
}

pub fn parse_ggf(text: &str) -> Vec<GgfGame> {
    let mut games = vec![];
    let mut rest = text;
    while let Some(start) = rest.find("(;") {
        let body_and_more = &rest[start + 2..];
        let end = body_and_more.find(";)").expect("a game ends with ;)");
        let body = &body_and_more[..end];
        let mut props = vec![];
        let mut chars = body.char_indices().peekable();
        let mut name = String::new();
        while let Some((i, c)) = chars.next() {
            if c.is_ascii_uppercase() {
                name.push(c);
            } else if c == '[' {
                let close = body[i..].find(']').expect("value closed") + i;
                assert!(!name.is_empty(), "value without a property name at {i}");
                props.push((std::mem::take(&mut name), body[i + 1..close].to_string()));
                while chars.peek().is_some_and(|&(j, _)| j <= close) {
                    chars.next();
                }
            } else {
                assert!(c.is_whitespace(), "unexpected {c:?} in a game");
            }
        }
        games.push(GgfGame { props });
        rest = &body_and_more[end + 2..];
    }
    games
}

fn start_board_ggf(size: u8) -> String {
    let pos = Position::start(size);
    let mut s = String::new();
    for row in 0..size {
        for col in 0..size {
            s.push(match pos.at(Square::new(col, row)) {
                Some(Color::Black) => '*',
                Some(Color::White) => 'O',
                None => '-',
            });
        }
    }
    s
}

pub fn check_ggf_game(g: &GgfGame, r: &GameRecord) {
    assert_eq!(g.get("GM"), Some("Othello"), "{}", r.id);
    assert_eq!(g.get("PB"), Some(r.black.as_str()), "{}", r.id);
    assert_eq!(g.get("PW"), Some(r.white.as_str()), "{}", r.id);
    assert_eq!(g.get("TY"), Some(r.size.to_string().as_str()), "{}", r.id);
    let dt = g.get("DT").expect("DT");
    let want = format!(
        "{}.{}.{}_{}.UTC",
        &r.started[0..4],
        &r.started[5..7],
        &r.started[8..10],
        &r.started[11..19]
    );
    assert_eq!(dt, want);
    let (size, board, to_move) = g.board();
    assert_eq!(size, r.size);
    assert_eq!(board, start_board_ggf(r.size), "{}", r.id);
    assert_eq!(to_move, '*');

    // Every ply, passes included, with its colour and time.
    let moves = g.moves();
    assert_eq!(moves.len(), r.moves.len(), "{}", r.id);
    for (k, ((color, sq, secs), m)) in moves.iter().zip(&r.moves).enumerate() {
        assert_eq!(*color, m.color, "{} ply {}", r.id, k + 1);
        assert_eq!(*sq, m.mv.to_string(), "{} ply {}", r.id, k + 1);
        let secs = secs.expect("a time on every move");
        assert!(
            (secs - m.ms as f64 / 1000.0).abs() < 0.0005,
            "{} ply {}",
            r.id,
            k + 1
        );
    }
    // The moves are a legal game from BO, ending where the record ends.
    let mut pos = Position::start(size);
    for (color, sq, _) in &moves {
        assert_eq!(pos.to_move(), *color, "{}", r.id);
        let mv = parse_move(sq, size).unwrap();
        pos = pos.play(mv).unwrap().0;
    }
    let (score, flag) = g.result();
    let diff = r.discs_wof.black as f64 - r.discs_wof.white as f64;
    assert_eq!(score, diff, "{}", r.id);
    if r.reason == EndReason::Normal {
        assert_eq!(flag, None);
        assert!(pos.is_over(), "{}", r.id);
        let wof = pos.discs_wof();
        assert_eq!(score, wof.black as f64 - wof.white as f64, "{}", r.id);
    } else {
        assert_eq!(flag, Some('r'), "{}: a forfeit for a bad answer", r.id);
        assert_eq!(score.abs(), (r.size as f64).powi(2));
    }
}

#[test]
fn ggf_export_reads_back_move_for_move() {
    let (s, records) = results_with_games();
    s.run_ok(&["export", "--ggf", "all.ggf"], 30);
    let text = std::fs::read_to_string(s.join("all.ggf")).unwrap();
    assert_eq!(text.lines().count(), records.len(), "one game per line");
    let games = parse_ggf(&text);
    assert_eq!(games.len(), records.len());
    for (g, r) in games.iter().zip(&records) {
        check_ggf_game(g, r);
    }

    // The per-game files: one game each, the same text as the export's.
    for (line, r) in text.lines().zip(&records) {
        let file = s.join(&format!("results/games/{}.ggf", r.id));
        let own =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(own.trim_end(), line);
        let parsed = parse_ggf(&own);
        assert_eq!(parsed.len(), 1);
        check_ggf_game(&parsed[0], r);
    }

    // The library call the run and play commands use.
    let other = Scratch::new();
    let path = tournament::report::ggf::write_game_file(other.path(), &records[5]).unwrap();
    assert_eq!(path, other.join(&format!("games/{}.ggf", records[5].id)));
    let parsed = parse_ggf(&std::fs::read_to_string(&path).unwrap());
    check_ggf_game(&parsed[0], &records[5]);
    let leftovers: Vec<_> = std::fs::read_dir(other.join("games"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

#[test]
fn export_needs_a_format_and_a_results_folder() {
    let s = Scratch::new();
    let out = s.cmd(&["export"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ggf") && err.contains("--wthor"), "{err}");

    let out = s
        .cmd(&["export", "--ggf", "x.ggf", "--results", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("games.jsonl"));
    let out = s.cmd(&["report", "--results", "nowhere"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
}

// ---------------------------------------------------------------------------
// WTHOR, read by the `wthor` crate.

#[test]
fn wthor_export_reads_back_with_the_wthor_crate() {
    use wthor::game_archive::{BoardSize, GameArchive};
    use wthor::records::{RecordType, Records};

    let (s, records) = results_with_games();
    let out = s.run_ok(&["export", "--wthor", "wthor"], 30);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&records[4].id) && err.contains("8x8"),
        "the 6x6 game is reported as skipped: {err}"
    );

    let year = &records[0].started[..4];
    let read = |name: &str| {
        std::fs::read(s.join("wthor").join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let archive = wthor::parse::<GameArchive>(&read(&format!("WTH_{year}.wtb"))).unwrap();
    let players = wthor::parse::<Records>(&read("WTHOR.JOU")).unwrap();
    let tournaments = wthor::parse::<Records>(&read("WTHOR.TRN")).unwrap();
    assert!(matches!(players.record_type, RecordType::Players));
    assert!(matches!(tournaments.record_type, RecordType::Tournaments));
    assert_eq!(tournaments.names, ["Records test"]);
    assert_eq!(archive.metadata.board_size, BoardSize::EightSquared);
    assert_eq!(archive.metadata.year_of_games.to_string(), year);

    let eight: Vec<&GameRecord> = records.iter().filter(|r| r.size == 8).collect();
    assert_eq!(archive.games.len(), eight.len());
    for (g, r) in archive.games.iter().zip(&eight) {
        assert_eq!(g.tournament_label_number, 0);
        assert_eq!(players.names[g.black_player_number as usize], r.black);
        assert_eq!(players.names[g.white_player_number as usize], r.white);
        assert_eq!(g.real_score as u32, r.discs_wof.black, "{}", r.id);
        assert_eq!(g.theoretical_score as u32, r.discs_wof.black, "{}", r.id);
        let moves: Vec<String> = g
            .moves
            .iter()
            .map(|p| format!("{}{}", (b'a' + p.file) as char, p.rank + 1))
            .collect();
        let want: Vec<String> = r
            .moves
            .iter()
            .filter(|m| m.mv != Move::Pass)
            .map(|m| m.mv.to_string())
            .collect();
        assert_eq!(moves, want, "{}", r.id);
    }
    // The forfeit: the moves up to it and all 64 squares to the winner.
    let forfeit = archive.games.last().unwrap();
    assert_eq!(forfeit.moves.len(), 5);
    assert_eq!(forfeit.real_score, 64);
}

// ---------------------------------------------------------------------------
// The HTML report in headless Chromium.

pub(crate) fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "Chromium is needed for the HTML report test and is not installed: \
             apt-get install -y chromium"
        )
    })
}

/// Runs headless Chromium on `url` with `extra` arguments; returns stdout.
fn headless(s: &Scratch, profile: &str, extra: &[&str], url: &str) -> String {
    let mut c = assert_cmd::Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ])
    .arg(format!(
        "--user-data-dir={}",
        s.join(&format!("chromium-{profile}")).display()
    ))
    .args(extra)
    .arg(url)
    .timeout(Duration::from_secs(60));
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The text of the element with `id` in a dumped DOM.
fn element_text<'a>(dom: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\"");
    let at = dom.find(&open).unwrap_or_else(|| panic!("no #{id}"));
    let start = dom[at..].find('>').unwrap() + at + 1;
    let end = dom[start..].find('<').unwrap() + start;
    &dom[start..end]
}

/// Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) to (width, height,
/// RGB bytes) with python3's zlib, as a binary PPM.
fn png_to_rgb(png: &Path) -> (usize, usize, Vec<u8>) {
    const DECODE: &str = r#"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
out, prev, i = bytearray(), bytearray(stride), 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(w):
        out += line[x * bpp:x * bpp + 3]
sys.stdout.buffer.write(b"P6 %d %d 255\n" % (w, h) + bytes(out))
"#;
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(DECODE)
        .arg(png)
        .output()
        .expect("python3 (already needed by the fake bot)");
    assert_ok(&out);
    let ppm = out.stdout;
    let header_end = ppm.iter().position(|&b| b == b'\n').unwrap();
    let header = std::str::from_utf8(&ppm[..header_end]).unwrap();
    let f: Vec<usize> = header
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().unwrap())
        .collect();
    (f[0], f[1], ppm[header_end + 1..].to_vec())
}

/// Reads the board off a screenshot: finds the board's green, divides it
/// into `size`×`size` cells and looks at each cell's centre pixel.
fn board_in_screenshot(png: &Path, size: u8) -> Vec<Option<Color>> {
    const GREEN: [u8; 3] = [0x1f, 0x7a, 0x4d];
    let (w, h, rgb) = png_to_rgb(png);
    let px = |x: usize, y: usize| &rgb[(y * w + x) * 3..(y * w + x) * 3 + 3];
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for y in 0..h {
        for x in 0..w {
            let p = px(x, y);
            if (0..3).all(|i| p[i].abs_diff(GREEN[i]) <= 4) {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
    }
    assert!(x0 < x1 && y0 < y1, "no board green in the screenshot");
    let cell_w = (x1 - x0 + 1) as f64 / size as f64;
    let cell_h = (y1 - y0 + 1) as f64 / size as f64;
    assert!(
        (cell_w - cell_h).abs() < 2.0,
        "a square board: {cell_w} x {cell_h}"
    );
    let mut out = vec![];
    for row in 0..size as usize {
        for col in 0..size as usize {
            let x = x0 + ((col as f64 + 0.5) * cell_w) as usize;
            let y = y0 + ((row as f64 + 0.5) * cell_h) as usize;
            let p = px(x, y);
            let light = p.iter().map(|&v| v as u32).sum::<u32>() / 3;
            out.push(if light < 60 {
                Some(Color::Black)
            } else if light > 200 {
                Some(Color::White)
            } else {
                assert!(
                    (0..3).all(|i| p[i].abs_diff(GREEN[i]) <= 16),
                    "cell {col},{row}: colour {p:?} is neither stone nor board"
                );
                None
            });
        }
    }
    out
}

fn engine_board(pos: &Position) -> Vec<Option<Color>> {
    let n = pos.size();
    (0..n)
        .flat_map(|row| (0..n).map(move |col| (col, row)))
        .map(|(col, row)| pos.at(Square::new(col, row)))
        .collect()
}

/// No `src` or `href` (nor CSS `url(`/`@import`) may point off the page.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for attr in ["src=", "href="] {
        for (at, _) in lower.match_indices(attr) {
            let value = lower[at + attr.len()..].trim_start_matches(['"', '\'']);
            assert!(
                !(value.starts_with("http:")
                    || value.starts_with("https:")
                    || value.starts_with("//")),
                "external reference: {}",
                &html[at..(at + 80).min(html.len())]
            );
        }
    }
    assert!(!lower.contains("@import") && !lower.contains("url("));
    assert!(!lower.contains("<link"));
    assert!(!lower.contains("<iframe"));
}

#[test]
fn html_report_steps_through_a_game_in_headless_chromium() {
    if !crate::needs::have(&[crate::needs::CHROMIUM]) {
        return;
    }
    let (s, records) = results_with_games();
    s.run_ok(&["report", "--output", "report.html"], 30);
    let report = s.join("report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    assert_self_contained(&html);
    for r in &records {
        assert!(html.contains(&r.id), "{} is listed", r.id);
    }
    assert!(html.contains("unparseable 1"), "forfeits by reason");

    // 1. Straight to a ply through the address.
    let pass_game = &records[5];
    let want = position_at(pass_game, PLY);
    let url = format!(
        "file://{}#game={}&ply={PLY}",
        report.display(),
        pass_game.id
    );
    let dom = headless(&s, "a", &["--dump-dom"], &url);
    assert_eq!(
        count(&dom, "class=\"stone black"),
        want.discs().black as usize,
        "black stones at ply {PLY}"
    );
    assert_eq!(
        count(&dom, "class=\"stone white"),
        want.discs().white as usize,
        "white stones at ply {PLY}"
    );
    assert_eq!(
        element_text(&dom, "v-ply"),
        format!("ply {PLY} / {}", pass_game.moves.len())
    );

    // 2. Stepped by a script: every game to its end with the End key (the
    //    JavaScript move applier against the engine's final counts), then
    //    the pass game stepped with the arrow keys and buttons to PLY.
    let target = 5;
    let script = format!(
        r##"<script>
(function () {{
  function key(k) {{ document.dispatchEvent(new KeyboardEvent("keydown", {{ key: k, bubbles: true }})); }}
  function stones(c) {{ return document.querySelectorAll("#board circle.stone." + c).length; }}
  var rows = document.querySelectorAll("#game-list tbody tr"), finals = [];
  for (var i = 0; i < rows.length; i++) {{
    rows[i].click();
    key("End");
    finals.push([stones("black"), stones("white"), document.getElementById("v-error").textContent]);
  }}
  rows[{target}].click();
  for (var k = 0; k < {right}; k++) key("ArrowRight");
  for (k = 0; k < 3; k++) key("ArrowLeft");
  document.getElementById("next").click();
  document.getElementById("prev").click();
  document.getElementById("prev").click();
  key("ArrowRight");
  var pre = document.createElement("pre");
  pre.id = "test-out";
  pre.textContent = JSON.stringify(finals);
  document.body.appendChild(pre);
}})();
</script></body>"##,
        right = PLY + 3
    );
    let stepped = s.join("stepped.html");
    std::fs::write(&stepped, html.replace("</body>", &script)).unwrap();
    let url = format!("file://{}", stepped.display());
    let dom = headless(&s, "b", &["--dump-dom"], &url);
    let finals: serde_json::Value = serde_json::from_str(
        &element_text(&dom, "test-out")
            .replace("&quot;", "\"")
            .replace("&amp;", "&"),
    )
    .unwrap();
    for (r, f) in records.iter().zip(finals.as_array().unwrap()) {
        assert_eq!(f[2], "", "{}: the page replayed every move", r.id);
        assert_eq!(f[0], r.discs.black, "{}: black discs at the end", r.id);
        assert_eq!(f[1], r.discs.white, "{}: white discs at the end", r.id);
    }
    assert_eq!(
        element_text(&dom, "v-ply"),
        format!("ply {PLY} / {}", pass_game.moves.len())
    );
    assert_eq!(
        count(&dom, "class=\"stone black"),
        want.discs().black as usize
    );
    assert_eq!(
        count(&dom, "class=\"stone white"),
        want.discs().white as usize
    );

    // 3. The screenshot of the stepped page: every cell as the engine has it.
    let shot = s.join("shot.png");
    headless(
        &s,
        "c",
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1100,2200",
        ],
        &url,
    );
    let seen = board_in_screenshot(&shot, pass_game.size);
    let expected = engine_board(&want);
    let stones = |b: &[Option<Color>], c| b.iter().filter(|&&x| x == Some(c)).count();
    assert_eq!(
        stones(&seen, Color::Black),
        want.discs().black as usize,
        "black stones in the screenshot"
    );
    assert_eq!(
        stones(&seen, Color::White),
        want.discs().white as usize,
        "white stones in the screenshot"
    );
    assert_eq!(seen, expected, "the board in the screenshot");
}

#[test]
fn html_report_escapes_player_names() {
    let (s, _) = results_with_games();
    let games = s.join("results/games.jsonl");
    let evil = "<img src=x onerror=alert(1)>&\"Bo\"'";
    let text = std::fs::read_to_string(&games).unwrap().replace(
        "\"black\":\"greedy\"",
        &format!("\"black\":{}", serde_json::json!(evil)),
    );
    std::fs::write(&games, text).unwrap();
    // Renamed games are no longer the schedule's (refused by its check):
    // this folder is now a hand-made collection of games, without one.
    std::fs::remove_file(s.join("results/schedule.json")).unwrap();
    let out = s
        .cmd(&["report", "--output", "evil.html"])
        .output()
        .unwrap();
    assert_ok(&out);
    let html = std::fs::read_to_string(s.join("evil.html")).unwrap();
    assert!(!html.contains("<img"), "the name is not markup");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;&quot;Bo&quot;&#39;"));
    assert_self_contained(&html);
}

#[test]
fn ggf_names_cannot_break_a_property() {
    let (s, records) = results_with_games();
    let games = s.join("results/games.jsonl");
    let text = std::fs::read_to_string(&games)
        .unwrap()
        .replace("\"white\":\"greedy\"", "\"white\":\"gr]ee[dy\"");
    std::fs::write(&games, text).unwrap();
    // Renamed games are no longer the schedule's (refused by its check):
    // this folder is now a hand-made collection of games, without one.
    std::fs::remove_file(s.join("results/schedule.json")).unwrap();
    let out = s.cmd(&["export", "--ggf", "x.ggf"]).output().unwrap();
    assert!(out.status.success());
    let parsed = parse_ggf(&std::fs::read_to_string(s.join("x.ggf")).unwrap());
    assert_eq!(parsed.len(), records.len());
    let renamed = records.iter().position(|r| r.white == "greedy").unwrap();
    assert_eq!(parsed[renamed].get("PW"), Some("gr_ee_dy"));
    assert_eq!(parsed[renamed].moves().len(), records[renamed].moves.len());
}

// ---------------------------------------------------------------------------
// Records read back are replayed by the rules (issue 26).

/// The first three lines of games.jsonl edited by hand the way a cheat
/// would: (1) the result flipped, disc counts kept; (2) the moves (and
/// transcript) after the opening `a1h8a8h1`; (3) a score of 70-0.
/// Returns the lines.
fn edit_three_lines(s: &Scratch, records: &[GameRecord]) -> Vec<String> {
    let games = s.join("results/games.jsonl");
    let text = std::fs::read_to_string(&games).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0].reason, EndReason::Normal);
    assert_ne!(records[0].result, tournament::record::Winner::Draw);
    let flipped = if records[0].result == tournament::record::Winner::Black {
        "white"
    } else {
        "black"
    };
    lines[0]["result"] = flipped.into();
    // After the opening (the schedule's, kept): the bots' first moves.
    let opening = records[1].opening.len();
    let moves = lines[1]["moves"].as_array_mut().unwrap();
    for (m, sq) in moves[opening / 2..]
        .iter_mut()
        .zip(["a1", "h8", "a8", "h1"])
    {
        m["move"] = sq.into();
    }
    let t = &records[1].transcript;
    lines[1]["transcript"] = format!("{}a1h8a8h1{}", &t[..opening], &t[opening + 8..]).into();
    lines[2]["discs_wof"] = serde_json::json!({"black": 70, "white": 0});
    let out: Vec<String> = lines.iter().map(|v| v.to_string()).collect();
    std::fs::write(&games, out.join("\n") + "\n").unwrap();
    out
}

/// What every reader must say of the three edited lines.
fn assert_names_the_edited_lines(what: &str, stderr: &str) {
    let wanted = [
        ("games.jsonl:1: game", "result `"),
        ("games.jsonl:2: game", "(black `a1`) is illegal"),
        ("games.jsonl:3: game", "score 70-0 does not follow"),
    ];
    for (at, why) in wanted {
        let line = stderr
            .lines()
            .find(|l| l.contains(at))
            .unwrap_or_else(|| panic!("{what}: nothing about {at}:\n{stderr}"));
        assert!(line.contains(why), "{what}: {line}");
        assert!(line.contains("this line is not counted"), "{what}: {line}");
    }
}

#[test]
fn edited_records_are_named_and_not_counted() {
    let (s, records) = results_with_games();
    edit_three_lines(&s, &records);
    let good = &records[3..];

    // crosstable: the totals are those of the four good lines.
    let out = s.run_ok(&["crosstable", "--format", "json"], 30);
    assert_names_the_edited_lines("crosstable", &String::from_utf8_lossy(&out.stderr));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(table["games"], good.len());
    for row in table["standings"].as_array().unwrap() {
        let name = row["player"].as_str().unwrap();
        let played: Vec<&GameRecord> = good.iter().filter(|r| r.color_of(name).is_some()).collect();
        let points: f64 = played
            .iter()
            .map(|r| r.result.points_for(r.color_of(name).unwrap()))
            .sum();
        assert_eq!(row["games"], played.len(), "{name}: {row}");
        assert_eq!(row["points"].as_f64().unwrap(), points, "{name}: {row}");
    }

    // export: GGF and WTHOR hold the good games only.
    let out = s.run_ok(&["export", "--ggf", "all.ggf", "--wthor", "wthor"], 30);
    assert_names_the_edited_lines("export", &String::from_utf8_lossy(&out.stderr));
    let ggf = parse_ggf(&std::fs::read_to_string(s.join("all.ggf")).unwrap());
    assert_eq!(ggf.len(), good.len());
    for (g, r) in ggf.iter().zip(good) {
        check_ggf_game(g, r);
    }

    // report: the page lists the good games only.
    let out = s.run_ok(&["report"], 30);
    assert_names_the_edited_lines("report", &String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    for r in &records[..3] {
        assert!(!html.contains(&r.id), "{} is in the report", r.id);
    }
    for r in good {
        assert!(html.contains(&r.id), "{} is not in the report", r.id);
    }

    // run (resume): the three games have no record that counts; they
    // are played again and the file ends with their new records.
    let games = s.join("results/games.jsonl");
    let text = std::fs::read_to_string(&games).unwrap();
    let tournament_lines: Vec<&str> = text.lines().take(4).collect();
    std::fs::write(&games, tournament_lines.join("\n") + "\n").unwrap();
    let out = s.run_ok(&["run"], 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_names_the_edited_lines("run", &err);
    for (n, r) in records[..3].iter().enumerate() {
        let at = format!(
            "games.jsonl:{}: game {} has no record that follows the rules; it is played again",
            n + 1,
            r.id
        );
        assert!(err.contains(&at), "run does not say {at}:\n{err}");
    }
    let after = read_records(&games).unwrap();
    assert_eq!(after.len(), 4, "every game counted once");
    let text = std::fs::read_to_string(&games).unwrap();
    assert_eq!(
        text.lines().count(),
        7,
        "the edited lines stay, three new ones follow"
    );
    let ids: Vec<&str> = after.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids[0], records[3].id);
    for r in &records[..3] {
        assert!(
            ids[1..].contains(&r.id.as_str()),
            "{} not played again",
            r.id
        );
    }
    for r in &after {
        assert_eq!(r.check(), Ok(()));
    }
    // A second resume has nothing to play.
    let out = s.run_ok(&["run"], 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("played again"), "{err}");
    let out = s.run_ok(&["crosstable", "--format", "json"], 30);
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(table["games"], 4);
}
