//! The live page's markup, style and script: one self-contained page (no
//! external URL) that renders a snapshot of `feed` and re-renders on every
//! `state` event of `/events`.
//!
//! Owns the page only. Pure: [`render`] returns the text. Boards are drawn
//! by the HTML report's `drawOthelloBoard` (`report::html::BOARD_SCRIPT`),
//! finished games replayed by the report itself (`/report#game=<id>`). The
//! crosstable arrives as markup escaped by `report::html`; every other text
//! is set with `textContent`, never as markup.
//!
//! What a test can read: `<table id="crosstable">` (a row per player), one
//! `<article class="game">` per running game with `data-game-id` and
//! `data-ply`, `#progress`, `#status` (`Live`, `Between games`,
//! `Final standings` once the event is over, `Interrupted` when its
//! referee stopped or was killed with games left, `Waiting for the
//! referee`), `#notice` (what an interruption means), `#shares` (each share of a tournament played in shares: done, running,
//! stopped, missing), `#sprt` (the SPRT's
//! state, when the event has one), `#recent` (the latest finished games),
//! and on `<body>` `data-state` (the snapshot's `state`),
//! `data-updates` (events received so far) and `data-table-below` (the
//! crosstable did not fit beside the running games on a wide screen).

use crate::report::html::{escape, script_safe, BOARD_SCRIPT, BOARD_STYLE};

/// The page with `state` (a snapshot's JSON) rendered in at load.
pub fn render(state: &str) -> String {
    let title = serde_json::from_str::<serde_json::Value>(state)
        .ok()
        .and_then(|v| v["title"].as_str().map(str::to_string))
        .unwrap_or_else(|| "tournament".into());
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t} — live</title>\n<style>{BOARD_STYLE}{STYLE}</style>\n</head>\n\
         <body data-updates=\"0\">\n{BODY}\
         <script type=\"application/json\" id=\"initial-state\">{state}</script>\n\
         <script>{BOARD_SCRIPT}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        t = escape(&title),
        state = script_safe(state),
    )
}

const BODY: &str = r#"<header>
<h1 id="title"></h1>
<div class="bar"><span id="status"></span> <span id="progress"></span> <span id="eta"></span> <span id="running-count"></span> <span id="sprt"></span></div>
<div class="bar" id="shares"></div>
<p id="notice" hidden></p>
<nav><a href="/report">Every finished game (replay)</a> · <span id="connection">connecting…</span></nav>
</header>
<main>
<section id="live-games"><h2>Running games</h2><div id="running"></div><p id="no-games" class="note">No game is running.</p></section>
<aside>
<section><h2>Crosstable</h2><div id="crosstable-box"></div></section>
<section><h2>Latest games</h2><ol id="recent"></ol></section>
</aside>
</main>
"#;

const STYLE: &str = r#"
:root { --bg: #0b0d10; --ink: #f4f6f8; --muted: #b8c0c8; --line: #4a525a; --head: #1d232a; --accent: #ffd23f; }
* { box-sizing: border-box; }
body { background: var(--bg); color: var(--ink); font: 20px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 0.5rem 1.5vw 1rem; }
a { color: #8cc8ff; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.2em 1.2em; }
h1 { font-size: clamp(1.3em, 4.5vh, 2.2em); margin: 0; line-height: 1.15; overflow-wrap: anywhere; }
h2 { font-size: 1.05em; margin: 0.3em 0 0.3em; border-bottom: 2px solid var(--line); }
.bar { font-size: clamp(1em, 3vh, 1.4em); font-variant-numeric: tabular-nums; display: flex; flex-wrap: wrap; gap: 0.2em 1em; align-items: baseline; }
.bar:empty, #notice, nav { flex-basis: 100%; }
.bar:empty { display: none; }
#status { background: var(--accent); color: #000; font-weight: 700; padding: 0 0.4em; border-radius: 4px; }
#status.final { background: #3ddc84; }
#status.interrupted { background: #ff6b6b; }
#notice { font-size: 1.1em; color: #ffb3b3; border-left: 6px solid #ff6b6b; padding: 0.2em 0.6em; margin: 0.2em 0; }
.bar span:empty { display: none; }
#sprt { border: 2px solid var(--line); border-radius: 4px; padding: 0 0.4em; }
#sprt.decided { border-color: #3ddc84; color: #3ddc84; font-weight: 700; }
nav, .note, #connection { color: var(--muted); font-size: 0.8em; }
main { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 2vw; }
#running { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 320px), 1fr)); gap: 0.8rem; }
article.game { background: var(--head); border: 2px solid var(--line); border-radius: 8px; padding: 0.4rem 0.5rem; min-width: 0; }
article.game h3 { margin: 0 0 0.2em; font-size: 0.85em; overflow-wrap: anywhere; }
article.game .vs { color: var(--muted); font-weight: 400; }
article.game svg.board { width: 100%; max-width: 78vh; height: auto; margin: 0 auto; }
article.game .line { font-size: 0.85em; font-variant-numeric: tabular-nums; margin: 0.2em 0 0; }
article.game .note2 { color: var(--accent); margin: 0; font-size: 0.8em; }
article.game .note2:empty { display: none; }
article.game .note { margin: 0; font-size: 0.7em; overflow-wrap: anywhere; }
svg.board .label { fill: var(--muted); font-size: 14px; }
#crosstable-box { max-width: 100%; overflow-x: auto; }
table.cross { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: var(--fit, 0.85em); width: max-content; }
table.cross th, table.cross td { border: 1px solid var(--line); padding: 0.15em 0.35em; text-align: right; white-space: nowrap; }
table.cross th { background: var(--head); }
table.cross .l { text-align: left; }
table.cross tbody tr:first-child td { color: var(--accent); font-weight: 700; }
td.self, td.none { color: var(--muted); text-align: center; }
#recent { padding-left: 1.6em; margin: 0; font-size: 0.8em; }
#recent li { margin: 0.15em 0; overflow-wrap: anywhere; }
body[data-finished="true"] #live-games { display: none; }
@media (min-width: 900px) and (min-aspect-ratio: 1/1) {
  /* A projector or a wide screen: the page is the window's height, the
     running games' boards share what is left below the header, and the
     crosstable sits beside them (shrunk to its column's width by the
     script); nothing scrolls sideways. */
  body:not([data-finished="true"]) main { grid-template-columns: minmax(0, 1.1fr) minmax(0, 1fr); }
  body:not([data-finished="true"]) #running { grid-template-columns: repeat(var(--cols, 2), max-content); justify-content: start; }
  body:not([data-finished="true"]) article.game { width: calc(var(--board, 320px) + 1rem + 4px); }
  body:not([data-finished="true"]) article.game svg.board { width: var(--board, 320px); height: var(--board, 320px); max-width: none; }
  /* A crosstable too wide for its column even in the smallest font goes
     below the games, across the window. */
  body[data-table-below="true"]:not([data-finished="true"]) main { grid-template-columns: minmax(0, 1fr); }
}
@media (max-width: 600px) {
  body { font-size: 16px; padding: 0.5rem; }
}
"#;

const SCRIPT: &str = r##"
"use strict";
(function () {
  var CELL = 48, MARGIN = 22, updates = 0;
  function text(id, value) { document.getElementById(id).textContent = value; }
  function duration(s) {
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }
  function cellsOf(board) {
    var out = [];
    for (var i = 0; i < board.length; i++) out.push(board[i] === "X" ? 1 : board[i] === "O" ? 2 : 0);
    return out;
  }
  function squareOf(mv, n) {
    if (!mv || mv === "pass" || mv.length < 2) return -1;
    return (parseInt(mv.slice(1), 10) - 1) * n + (mv.charCodeAt(0) - 97);
  }
  function link(href, label) {
    var a = document.createElement("a");
    a.href = href; a.textContent = label;
    return a;
  }
  function logHref(id) { return "/results/logs/" + encodeURIComponent(id) + ".log"; }
  function card(g) {
    var box = document.getElementById("running");
    var cards = box.querySelectorAll("article.game");
    for (var i = 0; i < cards.length; i++) if (cards[i].getAttribute("data-game-id") === g.id) return cards[i];
    var c = document.createElement("article");
    c.className = "game";
    c.setAttribute("data-game-id", g.id);
    var h = document.createElement("h3"), b = document.createElement("span"), vs = document.createElement("span"), w = document.createElement("span");
    b.textContent = g.black + " (black)"; vs.className = "vs"; vs.textContent = " vs "; w.textContent = g.white + " (white)";
    h.appendChild(b); h.appendChild(vs); h.appendChild(w);
    c.appendChild(h);
    c.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "svg")).setAttribute("class", "board");
    var line = document.createElement("p"); line.className = "line"; c.appendChild(line);
    var note = document.createElement("p"); note.className = "note2"; c.appendChild(note);
    var links = document.createElement("p"); links.className = "note";
    links.appendChild(link(logHref(g.id), "log")); links.appendChild(document.createTextNode(" · " + g.id));
    c.appendChild(links);
    box.appendChild(c);
    return c;
  }
  function showGame(g) {
    var c = card(g);
    if (c.getAttribute("data-ply") === String(g.ply) && c.getAttribute("data-board") === g.board) return;
    c.setAttribute("data-ply", g.ply);
    c.setAttribute("data-board", g.board);
    var cells = cellsOf(g.board), black = 0, white = 0;
    cells.forEach(function (v) { if (v === 1) black++; else if (v === 2) white++; });
    drawOthelloBoard(c.querySelector("svg.board"), g.size, cells, squareOf(g.last, g.size), CELL, MARGIN);
    var last = g.last ? " · " + g.color + " " + g.last + (g.last === "pass" ? "" : " (" + g.ms + " ms)") : "";
    c.querySelector(".line").textContent = "ply " + g.ply + " · black " + black + " · white " + white + last;
    c.querySelector(".note2").textContent = g.note;
  }
  function render(s) {
    document.title = s.title + " — live";
    text("title", s.title);
    text("progress", s.done + " / " + (s.total === null ? "?" : s.total) + " games");
    text("eta", s.state === "running" && s.eta_s !== null && s.done > 0 ? "ETA " + duration(s.eta_s) : "");
    text("running-count", s.running.length ? s.running.length + " running" : "");
    var status = document.getElementById("status");
    status.textContent = {
      running: s.running.length ? "Live" : s.done ? "Between games" : "Starting",
      finished: "Final standings",
      interrupted: "Interrupted",
      waiting: "Waiting for the referee"
    }[s.state];
    status.className = s.state === "finished" ? "final" : s.state === "interrupted" ? "interrupted" : "live";
    var notice = document.getElementById("notice");
    notice.hidden = s.state !== "interrupted";
    notice.textContent = s.state !== "interrupted" ? "" :
      (s.referee === "gone" ? "The referee stopped running (killed or crashed)" : "No referee is running") +
      " with " + (s.total - s.done) + " game" + (s.total - s.done === 1 ? "" : "s") + " left" +
      (s.cut_short ? ", " + s.cut_short + " of them cut short mid-game" : "") +
      ": nothing is being played. Running the same command again resumes the tournament.";
    document.getElementById("shares").textContent = s.shares.length ? "Shares: " + s.shares.join(" · ") : "";
    var sprt = document.getElementById("sprt");
    sprt.textContent = s.sprt ? "SPRT " + s.sprt.note + " · " + (s.sprt.decision === "continue" ? "continue" : s.sprt.decision + " accepted") : "";
    sprt.className = s.sprt && s.sprt.decision !== "continue" ? "decided" : "";
    document.body.setAttribute("data-state", s.state);
    document.body.setAttribute("data-finished", s.finished ? "true" : "false");
    // Markup made and escaped by the server (report::html).
    document.getElementById("crosstable-box").innerHTML = s.crosstable;
    var ids = {};
    s.running.forEach(function (g) { ids[g.id] = true; showGame(g); });
    var cards = document.querySelectorAll("#running article.game");
    for (var i = 0; i < cards.length; i++) if (!ids[cards[i].getAttribute("data-game-id")]) cards[i].parentNode.removeChild(cards[i]);
    document.getElementById("no-games").style.display = s.running.length ? "none" : "";
    var list = document.getElementById("recent");
    while (list.firstChild) list.removeChild(list.firstChild);
    s.recent.forEach(function (r) {
      var li = document.createElement("li");
      li.appendChild(link("/report#game=" + encodeURIComponent(r.id), r.line));
      li.appendChild(document.createTextNode(" · "));
      li.appendChild(link(logHref(r.id), "log"));
      list.appendChild(li);
    });
  }
  // The crosstable's font shrinks (down to 9 px, 12 px on a phone) until
  // the table fits its column: nothing scrolls sideways on a projector.
  // One too wide for the column beside the games even then goes below
  // them, across the window; wider still (a phone, very many players), it
  // scrolls inside its box.
  function fitCrosstable() {
    var box = document.getElementById("crosstable-box"), table = box.querySelector("table");
    if (!table) return;
    if (shrinkToFit(box, table) || window.innerWidth < 900) return;
    document.body.setAttribute("data-table-below", "true");
    arrangeGames(); arrangeGames();
    shrinkToFit(box, table);
  }
  // Whether the table fits its box, in the largest font that does.
  function shrinkToFit(box, table) {
    var size = parseFloat(getComputedStyle(box).fontSize) * (document.body.getAttribute("data-finished") === "true" ? 1.3 : 0.9);
    table.style.setProperty("--fit", size + "px");
    var least = window.innerWidth < 600 ? 12 : 9;
    while (size > least && table.offsetWidth > box.clientWidth) {
      size = Math.max(least, size - 0.5);
      table.style.setProperty("--fit", size + "px");
    }
    return table.offsetWidth <= box.clientWidth;
  }
  // The running games' boards: the number of columns, and the board's side,
  // that give the largest boards with every card inside the window below
  // the header (CSS uses them on wide screens only; a phone scrolls).
  function arrangeGames() {
    var box = document.getElementById("running"), cards = box.querySelectorAll("article.game"), n = cards.length;
    if (!n) return;
    var svg = cards[0].querySelector("svg.board"), gap = 12;
    var chromeW = cards[0].offsetWidth - svg.getBoundingClientRect().width;
    var chromeH = cards[0].offsetHeight - svg.getBoundingClientRect().height;
    var w = box.clientWidth, h = window.innerHeight - (box.getBoundingClientRect().top + window.scrollY) - 12;
    var best = 1, side = 0;
    for (var cols = 1; cols <= n; cols++) {
      var rows = Math.ceil(n / cols);
      var s = Math.min((w - gap * (cols - 1)) / cols - chromeW, (h - gap * (rows - 1)) / rows - chromeH);
      if (s > side) { side = s; best = cols; }
    }
    box.style.setProperty("--cols", best);
    box.style.setProperty("--board", Math.max(120, Math.floor(side)) + "px");
  }
  function layout() {
    document.body.removeAttribute("data-table-below");
    arrangeGames(); arrangeGames(); fitCrosstable();
  }
  window.addEventListener("resize", layout);
  render(JSON.parse(document.getElementById("initial-state").textContent));
  layout();
  if (!window.EventSource) { text("connection", "this browser cannot follow live: reload to update"); return; }
  var events = new EventSource("/events");
  events.addEventListener("open", function () { text("connection", "live"); });
  events.addEventListener("error", function () { text("connection", "not connected: showing the last state received; retrying"); });
  events.addEventListener("state", function (e) {
    render(JSON.parse(e.data));
    layout();
    updates++;
    document.body.setAttribute("data-updates", updates);
    text("connection", "live");
  });
})();
"##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_cannot_end_its_script_element() {
        let state = r#"{"title":"</script><b>x</b>","running":[]}"#;
        let page = render(state);
        assert!(page.contains("<title>&lt;/script&gt;&lt;b&gt;x&lt;/b&gt; — live</title>"));
        assert_eq!(page.matches("</script>").count(), 3, "only the page's own");
    }
}
