//! The HTML report: one self-contained page (inline CSS and JavaScript, no
//! external URL) with the crosstable, per-player statistics and every game
//! in a board viewer.
//!
//! Owns the page's markup, style and script. Pure: [`render`] returns the
//! text; the `report` command writes it. Must not compute standings (that is
//! `crate::rating`) or read files.
//!
//! The viewer: the games are embedded as JSON, each move with the discs
//! it turned as the `othello` crate played it (the script knows no rules:
//! it sets the played square and the turned ones), drawing an SVG board whose
//! stones are `<circle class="stone black">` / `<circle class="stone
//! white">`. It steps with the First/Prev/Next/Last buttons, ArrowLeft /
//! ArrowRight (Home / End), or by clicking a move. Ply `k` is the position
//! after the first `k` plies of the record, passes included. The page reads
//! and keeps `#game=<id>&ply=<k>` in its address, so a position can be
//! linked to (and a test can open one). Every player name and text from a
//! record is escaped; the script only ever sets text, never markup.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::game::{Color, Move, Position, Square};
use crate::rating::pairstats::PairingStats;
use crate::rating::Crosstable;
use crate::record::{EndReason, GameRecord, Winner};
use crate::report::crosstable::{
    has_byes, interval, is_swiss, legend, notes, pairing_cells, points, shown_pairings, signed,
    swiss_cells, Layout, PAIRING_HEADINGS, SWISS_HEADINGS,
};

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON that can sit inside a `<script>` element: `<`, `>` and `&` are
/// written as `\u003c`… (they only occur inside JSON strings).
fn script_json(value: &serde_json::Value) -> String {
    script_safe(&serde_json::to_string(value).expect("JSON of plain values"))
}

/// JSON text made safe to sit inside a `<script>` element (as
/// [`script_json`]).
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn percent(points: f64, games: u32) -> String {
    if games == 0 {
        String::new()
    } else {
        format!(" ({:.0} %)", 100.0 * points / games as f64)
    }
}

/// Forfeits per player, by reason: who lost a game that did not end
/// normally, and why.
pub fn forfeits_by_reason(records: &[GameRecord]) -> BTreeMap<String, BTreeMap<EndReason, u32>> {
    let mut out: BTreeMap<String, BTreeMap<EndReason, u32>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.reason != EndReason::Normal) {
        let loser = match (&r.forfeit, r.result) {
            (Some(f), _) => r.player(f.color),
            (None, Winner::Black) => &r.white,
            (None, Winner::White) => &r.black,
            (None, Winner::Draw) => continue,
        };
        *out.entry(loser.to_string())
            .or_default()
            .entry(r.reason)
            .or_default() += 1;
    }
    out
}

fn result_text(r: &GameRecord) -> String {
    let score = format!("{}-{}", r.discs_wof.black, r.discs_wof.white);
    match r.result {
        Winner::Black => format!("{score} black wins"),
        Winner::White => format!("{score} white wins"),
        Winner::Draw => format!("{score} draw"),
    }
}

/// A square as the script indexes the board: `row * size + col`.
fn cell(sq: Square, size: u8) -> u32 {
    u32::from(sq.row()) * u32::from(size) + u32::from(sq.col())
}

/// The start position as the script's cells (0 empty, 1 black, 2 white).
fn start_cells(size: u8) -> Vec<u8> {
    let pos = Position::start(size);
    (0..size)
        .flat_map(|row| (0..size).map(move |col| Square::new(col, row)))
        .map(|sq| match pos.at(sq) {
            None => 0,
            Some(Color::Black) => 1,
            Some(Color::White) => 2,
        })
        .collect()
}

/// Each move of a record replayed by the rules: the cell played (`None`
/// for a pass) and the cells it turned. The list stops at the first move
/// that cannot be replayed (a damaged record), which the script reports.
fn replayed(r: &GameRecord) -> Vec<(Option<u32>, Vec<u32>)> {
    if !crate::game::SIZES.contains(&r.size) {
        return Vec::new();
    }
    let mut pos = Position::start(r.size);
    let mut out = Vec::with_capacity(r.moves.len());
    for m in &r.moves {
        let mv = m.mv;
        if pos.to_move() != m.color {
            break;
        }
        match mv {
            Move::Pass if pos.must_pass() => {
                pos = pos.pass_unchecked();
                out.push((None, Vec::new()));
            }
            Move::Pass => break,
            Move::Play(sq) => match pos.play(mv) {
                Ok((next, flips)) => {
                    let turned = crate::game::squares(flips)
                        .map(|f| cell(f, r.size))
                        .collect();
                    out.push((Some(cell(sq, r.size)), turned));
                    pos = next;
                }
                Err(_) => break,
            },
        }
    }
    out
}

/// The embedded game data the script replays.
fn games_json(records: &[GameRecord]) -> serde_json::Value {
    let games: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            let replay = replayed(r);
            let moves: Vec<serde_json::Value> = r
                .moves
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    // `s`: the cell played (-1 a pass), `f`: the cells
                    // turned; both absent from the first move the rules
                    // could not replay on.
                    let (s, f) = match replay.get(i) {
                        Some((sq, turned)) => (
                            serde_json::json!(sq.map_or(-1, i64::from)),
                            serde_json::json!(turned),
                        ),
                        None => (serde_json::Value::Null, serde_json::Value::Null),
                    };
                    serde_json::json!({
                        "m": m.mv,
                        "s": s,
                        "f": f,
                        "c": match m.color {
                            Color::Black => "b",
                            Color::White => "w",
                        },
                        "ms": m.ms,
                        "o": m.opening,
                        "a": m.auto,
                    })
                })
                .collect();
            serde_json::json!({
                "id": r.id,
                "round": r.round,
                "black": r.black,
                "white": r.white,
                "size": r.size,
                "start": start_cells(r.size),
                "moves": moves,
                "result": result_text(r),
                "reason": r.reason.code(),
                "detail": r.forfeit.as_ref().map(|f| format!("{} forfeited: {}", f.color, f.detail)),
                "started": r.started,
            })
        })
        .collect();
    serde_json::Value::Array(games)
}

/// The crosstable as an HTML `<table class="cross">`, with `id` when it is
/// not empty (the live page's `#crosstable`): the standings, in a Swiss
/// event with its Score, Buchholz and SB (and byes) before the points, in
/// the order the ranking uses them; the score matrix only where it fits
/// ([`Layout::shows_matrix`]).
pub fn crosstable_html(out: &mut String, table: &Crosstable, id: &str) {
    crosstable_html_with(out, table, id, Layout::default());
}

/// [`crosstable_html`] laid out by `layout`.
pub fn crosstable_html_with(out: &mut String, table: &Crosstable, id: &str, layout: Layout) {
    let n = table.standings.len();
    let matrix = layout.shows_matrix(n);
    let swiss = is_swiss(table);
    let byes = has_byes(table);
    out.push_str("<table class=\"cross\"");
    if !id.is_empty() {
        let _ = write!(out, " id=\"{}\"", escape(id));
    }
    out.push_str("><thead><tr><th>#</th><th class=\"l\">Player</th>");
    if swiss {
        for h in SWISS_HEADINGS {
            let _ = write!(out, "<th>{h}</th>");
        }
    }
    if byes {
        out.push_str("<th>Byes</th>");
    }
    out.push_str("<th>Points</th><th>Games</th><th>W-D-L</th><th>Discs</th><th>Elo</th>");
    if matrix {
        for k in 1..=n {
            let _ = write!(out, "<th>{k}</th>");
        }
    }
    out.push_str("</tr></thead><tbody>\n");
    for (i, s) in table.standings.iter().enumerate() {
        let elo = if s.elo_error.is_finite() {
            format!(
                "{} ± {}",
                signed(s.elo.round() as i64),
                s.elo_error.round() as i64
            )
        } else {
            format!("{} ± ∞", signed(s.elo.round() as i64))
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"l\">{}</td>",
            s.rank,
            escape(&crate::report::crosstable::shown_name(table, &s.player))
        );
        if swiss {
            for c in swiss_cells(s) {
                let _ = write!(out, "<td>{c}</td>");
            }
        }
        if byes {
            let _ = write!(out, "<td>{}</td>", s.swiss.as_ref().map_or(0, |w| w.byes));
        }
        let _ = write!(
            out,
            "<td>{}</td><td>{}</td><td>{}-{}-{}</td><td>{}</td><td>{}</td>",
            points(s.points),
            s.games,
            s.wins,
            s.draws,
            s.losses,
            signed(s.disc_diff),
            escape(&elo)
        );
        for j in (0..n).filter(|_| matrix) {
            let cell = if i == j {
                "<td class=\"self\">·</td>".to_string()
            } else {
                match table.matrix[i][j] {
                    Some((p, g)) => format!("<td>{}/{g}</td>", points(p)),
                    None => "<td class=\"none\">-</td>".to_string(),
                }
            };
            out.push_str(&cell);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// The pairings' statistics as `<table class="pairings">`.
fn pairings_html(out: &mut String, pairings: &[&PairingStats]) {
    out.push_str("<table class=\"pairings\"><thead><tr>");
    for (k, h) in PAIRING_HEADINGS.iter().enumerate() {
        let class = if k < 2 { " class=\"l\"" } else { "" };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for p in pairings {
        out.push_str("<tr>");
        for (k, c) in pairing_cells(p).iter().enumerate() {
            let class = if k < 2 { " class=\"l\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// The statistics section: the SPRT, the pairings nearest in ranking
/// (every pairing in a closed `<details>` when some were left out) and the
/// legend of the pairings; nothing without either.
fn statistics_html(out: &mut String, table: &Crosstable) {
    let notes = notes(table);
    let (shown, left) = shown_pairings(table, Layout::default());
    if notes.is_empty() && shown.is_empty() {
        return;
    }
    out.push_str("<section id=\"statistics\"><h2>Statistics</h2>\n");
    if !notes.is_empty() {
        out.push_str("<ul class=\"statistics\">\n");
        for d in notes {
            let _ = writeln!(out, "<li>{}</li>", escape(&d));
        }
        out.push_str("</ul>\n");
    }
    if !shown.is_empty() {
        pairings_html(out, &shown);
        if left > 0 {
            let _ = writeln!(
                out,
                "<details class=\"all-pairings\"><summary>All {} pairings ({left} more)</summary>",
                table.pairings.len()
            );
            let (all, _) = shown_pairings(table, Layout { full: true });
            pairings_html(out, &all);
            out.push_str("</details>\n");
        }
        out.push_str("<p class=\"note\">Pairs: colour-swapped game pairs, counted by the first player's score 0, ½, 1, 1½, 2. Elo (pairs): the first's rating minus the second's from their own pairs alone; compare the gap between their Elo in the crosstable (one fit over all games, each player against the field's average, pulled toward 0). Disc margins per game; both with their 95 % intervals. LOS: likelihood of superiority.</p>\n");
    }
    out.push_str("</section>\n");
}

fn players_html(out: &mut String, table: &Crosstable, records: &[GameRecord]) {
    let forfeits = forfeits_by_reason(records);
    out.push_str("<table class=\"stats\"><thead><tr><th class=\"l\">Player</th><th>Games</th><th>Points</th><th>As black</th><th>As white</th><th>Avg discs</th><th>Disc margin</th><th>Forfeits</th><th class=\"l\">Forfeits by reason</th></tr></thead><tbody>\n");
    for s in &table.standings {
        let (bp, bg) = s.score_as_black;
        let (wp, wg) = s.score_as_white;
        let reasons = forfeits
            .get(&s.player)
            .map(|m| {
                m.iter()
                    .map(|(reason, n)| format!("{reason} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}/{}{}</td><td>{}/{}{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            escape(&s.player),
            s.games,
            points(s.points),
            points(bp),
            bg,
            percent(bp, bg),
            points(wp),
            wg,
            percent(wp, wg),
            s.avg_discs,
            s.disc_margin.as_ref().map_or("–".to_string(), interval),
            s.forfeits,
            escape(&reasons)
        );
    }
    out.push_str("</tbody></table>\n");
}

fn games_list_html(out: &mut String, records: &[GameRecord], logs: &str) {
    out.push_str("<table class=\"games\" id=\"game-list\"><thead><tr><th>#</th><th class=\"l\">Game</th><th>Round</th><th class=\"l\">Black</th><th class=\"l\">White</th><th>Size</th><th>Plies</th><th class=\"l\">Result</th><th class=\"l\">End</th></tr></thead><tbody>\n");
    for (i, r) in records.iter().enumerate() {
        let end = match &r.forfeit {
            Some(f) => format!("{} ({} forfeited: {})", r.reason, f.color, f.detail),
            None => r.reason.to_string(),
        };
        let _ = writeln!(
            out,
            "<tr data-game=\"{i}\"><td>{}</td><td class=\"l\"><a href=\"#game={}\">{}</a></td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            i + 1,
            escape(&encode_fragment(&r.id)),
            escape(&r.id),
            r.round,
            escape(&r.black),
            escape(&r.white),
            r.size,
            r.moves.len(),
            escape(&result_text(r)),
            escape(&end) + &log_link(r, logs)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// After a forfeit's end: a link to the game's log, `<logs><id>.log`.
fn log_link(r: &GameRecord, logs: &str) -> String {
    if r.forfeit.is_none() {
        return String::new();
    }
    format!(
        " · <a class=\"log\" data-log=\"{}\" href=\"{}{}.log\">its log</a>",
        escape(&r.id),
        escape(logs),
        escape(&encode_fragment(&r.id))
    )
}

/// On the live page's `/report`, the logs are served at `/results/logs/`.
const LOG_LINKS_SCRIPT: &str = r#"
if (location.pathname === "/report") {
  for (const a of document.querySelectorAll("a.log")) {
    a.href = "/results/logs/" + encodeURIComponent(a.dataset.log) + ".log";
  }
}
"#;

/// Percent-encodes what `encodeURIComponent` would (for links the script
/// reads back with `decodeURIComponent`).
pub(crate) fn encode_fragment(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The whole page. `title` names the tournament, `generated` says when;
/// forfeits link to their logs in `logs/` beside the page.
pub fn render(title: &str, generated: &str, records: &[GameRecord], table: &Crosstable) -> String {
    render_with_logs(title, generated, records, table, "logs/")
}

/// [`render`], with the games' logs at `logs` (an address ending in `/`).
pub fn render_with_logs(
    title: &str,
    generated: &str,
    records: &[GameRecord],
    table: &Crosstable,
    logs: &str,
) -> String {
    let mut out = String::with_capacity(32 * 1024 + records.len() * 2048);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t} — report</title>\n<style>{STYLE}{BOARD_STYLE}</style>\n</head>\n<body>\n\
         <header><h1>{t}</h1><p class=\"meta\">{n} games · {p} players · generated {g}</p>\n\
         <nav><a href=\"#crosstable\">Crosstable</a> · <a href=\"#players\">Players</a> · <a href=\"#games\">Games</a></nav></header>\n",
        t = escape(title),
        n = records.len(),
        p = table.standings.len(),
        g = escape(generated),
    );
    out.push_str("<section id=\"crosstable\"><h2>Crosstable</h2>\n");
    if table.standings.is_empty() {
        out.push_str("<p>No games yet.</p>\n");
    } else {
        crosstable_html(&mut out, table, "");
        out.push_str(&format!(
            "<p class=\"note\">{}</p>\n",
            escape(&legend(table, Layout::default()).join(" "))
        ));
    }
    out.push_str("</section>\n<section id=\"players\"><h2>Players</h2>\n");
    players_html(&mut out, table, records);
    out.push_str("<p class=\"note\">As black / as white: points / games. Average discs with the empty squares given to the winner; disc margin: own minus opponent's per game, with its 95 % interval. Forfeits: games lost other than by a normal end.</p>\n</section>\n");
    statistics_html(&mut out, table);
    out.push_str("<section id=\"games\"><h2>Games</h2>\n");
    if records.is_empty() {
        out.push_str("<p>No games yet.</p>\n");
    } else {
        out.push_str(VIEWER);
        games_list_html(&mut out, records, logs);
    }
    out.push_str("</section>\n");
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"games-data\">{}</script>\n<script>{BOARD_SCRIPT}</script>\n<script>{SCRIPT}</script>\n<script>{LOG_LINKS_SCRIPT}</script>\n</body>\n</html>\n",
        script_json(&games_json(records))
    );
    out
}

const STYLE: &str = r#"
:root { --ink: #1d232a; --muted: #5b6570; --line: #d5dbe1; --head: #eef2f5; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); margin: 0 auto; max-width: 1100px; padding: 1em 1.5em 3em; }
h1 { margin: 0.2em 0; font-size: 1.7em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid var(--line); padding-bottom: 0.2em; }
.meta, .note { color: var(--muted); }
.note { font-size: 0.9em; }
nav a { color: #17589b; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid var(--line); padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
th { background: var(--head); }
.l { text-align: left; }
td.self, td.none { color: var(--muted); text-align: center; }
table.games td.l:last-child, table.stats td.l:last-child { white-space: normal; }
/* The crosstable fits its section: compact cells, and the players' names
   and the headers wrap before the table would stick out. */
table.cross { font-size: 0.93em; }
table.cross th, table.cross td { padding: 0.2em 0.35em; }
table.cross th, table.cross td.l { white-space: normal; }
/* A phone: a table wider than the screen scrolls inside its section; the
   page itself never scrolls sideways. */
@media (max-width: 700px) {
  body { padding: 0.5em 0.6em 2em; }
  section { overflow-x: auto; }
  table.cross th, table.cross td.l { white-space: nowrap; }
}
tr.current td { background: #fff6d6; }
#game-list a { color: #17589b; }
#viewer { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; margin: 1em 0; }
#viewer .side { flex: 1; min-width: 260px; }
#viewer h3 { margin: 0 0 0.3em; font-size: 1.1em; }
#v-controls { margin: 0.5em 0; display: flex; gap: 0.4em; align-items: center; flex-wrap: wrap; }
#v-controls button { font: inherit; padding: 0.2em 0.8em; cursor: pointer; }
#v-ply { min-width: 7em; text-align: center; font-variant-numeric: tabular-nums; }
#v-moves { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.9em; line-height: 1.7; max-height: 18em; overflow-y: auto; }
#v-moves span { cursor: pointer; padding: 0 0.25em; border-radius: 3px; }
#v-moves span.op { color: var(--muted); }
#v-moves span.now { background: #ffd866; }
#v-error { color: #b00020; }
"#;

/// The style of an SVG board drawn by [`BOARD_SCRIPT`] (also the live
/// page's, `crate::serve`).
pub const BOARD_STYLE: &str = r#"
svg.board { display: block; }
svg.board .bg { fill: #1f7a4d; }
svg.board .grid { stroke: #0e4a2c; stroke-width: 1; }
svg.board .label { font: 12px sans-serif; fill: #5b6570; }
svg.board .stone.black { fill: #000000; }
svg.board .stone.white { fill: #ffffff; stroke: #444; stroke-width: 1; }
svg.board .stone.last { stroke: #e4352b; stroke-width: 3; }
"#;

/// `drawOthelloBoard(svg, n, cells, last, cell, margin)`: draws an `n`×`n`
/// board into the `<svg>` element `svg`: `cells[i]` is 0 (empty), 1 (black)
/// or 2 (white) for square `i` (row-major from a1), `last` the square
/// ringed as the last move (-1: none), `cell` and `margin` sizes in SVG
/// units. The report's viewer and the live page (`crate::serve`) both draw
/// with it.
pub const BOARD_SCRIPT: &str = r##"
"use strict";
function drawOthelloBoard(svg, n, cells, last, CELL, MARGIN) {
  var SVG = "http://www.w3.org/2000/svg", i;
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  var full = n * CELL + 2 * MARGIN;
  svg.setAttribute("width", full); svg.setAttribute("height", full);
  svg.setAttribute("viewBox", "0 0 " + full + " " + full);
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  el("rect", {"class": "bg", x: MARGIN, y: MARGIN, width: n * CELL, height: n * CELL}, svg);
  for (i = 0; i <= n; i++) {
    el("line", {"class": "grid", x1: MARGIN + i * CELL, y1: MARGIN, x2: MARGIN + i * CELL, y2: MARGIN + n * CELL}, svg);
    el("line", {"class": "grid", x1: MARGIN, y1: MARGIN + i * CELL, x2: MARGIN + n * CELL, y2: MARGIN + i * CELL}, svg);
  }
  for (i = 0; i < n; i++) {
    var t = el("text", {"class": "label", x: MARGIN + i * CELL + CELL / 2, y: MARGIN - 6, "text-anchor": "middle"}, svg);
    t.textContent = String.fromCharCode(97 + i);
    t = el("text", {"class": "label", x: MARGIN - 8, y: MARGIN + i * CELL + CELL / 2 + 4, "text-anchor": "middle"}, svg);
    t.textContent = String(i + 1);
  }
  for (i = 0; i < n * n; i++) {
    if (!cells[i]) continue;
    var cls = "stone " + (cells[i] === 1 ? "black" : "white") + (i === last ? " last" : "");
    el("circle", {"class": cls, cx: MARGIN + (i % n) * CELL + CELL / 2, cy: MARGIN + Math.floor(i / n) * CELL + CELL / 2, r: CELL * 0.42}, svg);
  }
}
"##;

const VIEWER: &str = r#"<div id="viewer">
<svg id="board" class="board" role="img" aria-label="board"></svg>
<div class="side">
<h3 id="v-title"></h3>
<div id="v-info"></div>
<div id="v-controls"><button id="first" title="First (Home)">|&lt;</button><button id="prev" title="Previous (ArrowLeft)">&lt;</button><span id="v-ply"></span><button id="next" title="Next (ArrowRight)">&gt;</button><button id="last" title="Last (End)">&gt;|</button></div>
<div id="v-count"></div>
<div id="v-error"></div>
<div id="v-moves"></div>
<p class="note">Arrow keys step through the game; click a move to jump to it, a game below to open it.</p>
</div>
</div>
"#;

const SCRIPT: &str = r##"
"use strict";
(function () {
  var games = JSON.parse(document.getElementById("games-data").textContent);
  if (!games.length) return;
  var CELL = 48, MARGIN = 22;
  var current = 0, ply = 0, boards = [], replayError = "";

  // The positions after each ply, from the moves as the referee's rules
  // played them (`s` the cell played, -1 a pass; `f` the cells turned).
  function replay(g) {
    var b = g.start.slice(), out = [b], i;
    replayError = "";
    for (i = 0; i < g.moves.length; i++) {
      var m = g.moves[i];
      if (m.s === null || m.f === null) { replayError = "ply " + (i + 1) + " (" + m.m + ") cannot be replayed"; break; }
      if (m.s >= 0) {
        var me = m.c === "w" ? 2 : 1;
        b = b.slice();
        b[m.s] = me;
        m.f.forEach(function (k) { b[k] = me; });
      }
      out.push(b);
    }
    return out;
  }
  function lastSquare(g, p) {
    if (p < 1) return -1;
    var m = g.moves[p - 1];
    return m.s === null ? -1 : m.s;
  }
  function drawBoard() {
    var g = games[current], b = boards[Math.min(ply, boards.length - 1)];
    drawOthelloBoard(document.getElementById("board"), g.size, b, lastSquare(g, ply), CELL, MARGIN);
  }
  function text(id, value) { document.getElementById(id).textContent = value; }
  function show() {
    var g = games[current], b = boards[Math.min(ply, boards.length - 1)];
    drawBoard();
    var black = 0, white = 0;
    b.forEach(function (v) { if (v === 1) black++; else if (v === 2) white++; });
    var what = "start position";
    if (ply > 0) {
      var m = g.moves[ply - 1];
      what = (m.c === "w" ? "white " : "black ") + m.m + (m.o ? " (opening)" : m.a ? " (automatic)" : " (" + m.ms + " ms)");
    }
    text("v-ply", "ply " + ply + " / " + g.moves.length);
    text("v-count", "black " + black + " · white " + white + " · " + what);
    text("v-error", replayError);
    var spans = document.getElementById("v-moves").children;
    for (var i = 0; i < spans.length; i++) spans[i].className = (g.moves[i].o ? "op" : "") + (i === ply - 1 ? " now" : "");
    var rows = document.querySelectorAll("#game-list tbody tr");
    for (i = 0; i < rows.length; i++) rows[i].className = (i === current ? "current" : "");
    var hash = "#game=" + encodeURIComponent(g.id) + "&ply=" + ply;
    if (location.hash !== hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function open(index, atPly) {
    current = index;
    var g = games[current];
    boards = replay(g);
    text("v-title", g.id + " · round " + g.round + " · " + g.size + "×" + g.size);
    text("v-info", g.black + " (black) vs " + g.white + " (white): " + g.result + ", " + g.reason + (g.detail ? " — " + g.detail : ""));
    var list = document.getElementById("v-moves");
    while (list.firstChild) list.removeChild(list.firstChild);
    g.moves.forEach(function (m, i) {
      var s = document.createElement("span");
      s.textContent = (i + 1) + "." + (m.c === "w" ? "W" : "B") + " " + m.m;
      s.addEventListener("click", function () { go(i + 1); });
      list.appendChild(s);
      list.appendChild(document.createTextNode(" "));
    });
    go(atPly);
  }
  function go(p) {
    ply = Math.max(0, Math.min(p, games[current].moves.length));
    show();
  }
  function fromHash() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) {
        try { params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); } catch (e) {}
      }
    });
    if (params.game === undefined) return false;
    var index = -1;
    games.forEach(function (g, i) { if (g.id === params.game) index = i; });
    if (index < 0) return false;
    var p = parseInt(params.ply, 10);
    if (index !== current || !boards.length) open(index, isNaN(p) ? 0 : p); else go(isNaN(p) ? 0 : p);
    return true;
  }
  document.getElementById("first").addEventListener("click", function () { go(0); });
  document.getElementById("prev").addEventListener("click", function () { go(ply - 1); });
  document.getElementById("next").addEventListener("click", function () { go(ply + 1); });
  document.getElementById("last").addEventListener("click", function () { go(games[current].moves.length); });
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowRight") { go(ply + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { go(ply - 1); e.preventDefault(); }
    else if (e.key === "Home") { go(0); e.preventDefault(); }
    else if (e.key === "End") { go(games[current].moves.length); e.preventDefault(); }
  });
  window.addEventListener("hashchange", function () {
    if (fromHash()) document.getElementById("viewer").scrollIntoView();
  });
  var rows = document.querySelectorAll("#game-list tbody tr");
  Array.prototype.forEach.call(rows, function (row) {
    row.addEventListener("click", function (e) {
      if (e.target.tagName === "A") return;
      open(parseInt(row.getAttribute("data-game"), 10), 0);
      document.getElementById("viewer").scrollIntoView();
    });
  });
  if (fromHash()) document.getElementById("viewer").scrollIntoView();
  else open(0, 0);
})();
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_script_ends() {
        assert_eq!(
            escape("<b>\"x\" & 'y'</b>"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"
        );
        let v = serde_json::json!({"name": "</script><!--"});
        let s = script_json(&v);
        assert!(!s.contains('<'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        assert_eq!(encode_fragment("r01.a b/é"), "r01.a%20b%2F%C3%A9");
    }

    fn record(moves: &[(&str, &str)]) -> GameRecord {
        serde_json::from_value(serde_json::json!({
            "id": "g", "round": 1, "black": "a", "white": "b", "size": 8,
            "opening": "", "result": "black", "reason": "normal",
            "discs": {"black": 0, "white": 0}, "discs_wof": {"black": 0, "white": 0},
            "transcript": "", "started": "", "finished": "",
            "time_ms": {"black": 0, "white": 0},
            "moves": moves.iter().map(|(c, m)| serde_json::json!({
                "color": c, "move": m, "ms": 0, "opening": false, "auto": false
            })).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn the_script_gets_each_move_with_the_discs_it_turned() {
        // d3 (row 2, col 3 = cell 19) turns d4 (cell 27); c3 by white
        // (cell 18) turns d4 back; then a move onto a taken square.
        let r = record(&[("black", "d3"), ("white", "c3"), ("black", "d4")]);
        assert_eq!(
            replayed(&r),
            vec![(Some(19), vec![27]), (Some(18), vec![27])],
            "stops at d4, which the rules refuse"
        );
        assert_eq!(
            start_cells(4),
            vec![0, 0, 0, 0, 0, 2, 1, 0, 0, 1, 2, 0, 0, 0, 0, 0]
        );
        // Out of turn, or a pass with a move at hand: not replayed.
        assert!(replayed(&record(&[("white", "d3")])).is_empty());
        assert!(replayed(&record(&[("black", "pass")])).is_empty());
        let json = games_json(&[r]);
        let moves = &json[0]["moves"];
        assert_eq!(moves[1]["f"], serde_json::json!([27]));
        assert_eq!(moves[2]["s"], serde_json::Value::Null);
    }

    /// The live page's and the report's crosstable: a matrix column per
    /// player up to the limit, none beyond it unless asked.
    #[test]
    fn a_big_field_gets_standings_without_the_matrix() {
        use crate::report::crosstable::MATRIX_MAX_PLAYERS;
        let table_of = |n: usize| {
            let mut records = Vec::new();
            for i in 1..n {
                let mut r = record(&[]);
                r.black = format!("p{i}");
                r.white = "p0".to_string();
                records.push(r);
            }
            crate::rating::crosstable(&records, &[])
        };
        let columns = |html: &str| {
            html.split("</thead>")
                .next()
                .unwrap()
                .matches("<th>")
                .count()
        };
        let mut small = String::new();
        crosstable_html(&mut small, &table_of(MATRIX_MAX_PLAYERS), "crosstable");
        // #, Points, Games, W-D-L, Discs, Elo and one per player.
        assert_eq!(columns(&small), 6 + MATRIX_MAX_PLAYERS);
        let big_table = table_of(MATRIX_MAX_PLAYERS + 1);
        let mut big = String::new();
        crosstable_html(&mut big, &big_table, "crosstable");
        assert_eq!(columns(&big), 6);
        assert!(!big.contains("class=\"self\""));
        assert_eq!(big.matches("<tr><td>").count(), MATRIX_MAX_PLAYERS + 1);
        let mut full = String::new();
        crosstable_html_with(&mut full, &big_table, "", Layout { full: true });
        assert_eq!(columns(&full), 7 + MATRIX_MAX_PLAYERS);
    }
}
