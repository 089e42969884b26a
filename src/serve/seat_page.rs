//! The private page of a person playing in the browser (`human = true`
//! with `run --serve`): `/seat/<name>?key=K` the page, `/seat/<name>/state`
//! what it shows (JSON), `/seat/<name>/move?turn=N&square=d3` (POST) a
//! move. Every one of them needs the key of that person's desk, in the
//! query: without it, or with another, the answer is 403 and nothing
//! changes.
//!
//! Owns those routes and the page. Decides nothing about the game: the
//! desk (`referee::browser`) judges a move and the seat waits for it. The
//! public routes stay read-only (`super` refuses anything but GET there).

use std::collections::HashMap;
use std::sync::Arc;

use hyper::{Method, Response, StatusCode};

use crate::referee::browser::Refusal;
use crate::referee::Desk;

use super::{plain, respond, Reply, HTML, JSON};

/// The people's desks by name.
pub type Desks = HashMap<String, Arc<Desk>>;

/// Answers a request under `/seat/` (`rest` is the path after it).
pub fn answer(desks: &Desks, method: &Method, rest: &str, query: &str) -> Response<Reply> {
    let (name, what) = rest.split_once('/').unwrap_or((rest, ""));
    let key = param(query, "key").unwrap_or("");
    let Some(desk) = desks.get(name).filter(|d| d.admits(key)) else {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: this page needs the private link printed in the referee's terminal\n",
        );
    };
    match (method, what) {
        (&Method::GET | &Method::HEAD, "") => respond(StatusCode::OK, HTML, PAGE.into()),
        (&Method::GET | &Method::HEAD, "state") => {
            respond(StatusCode::OK, JSON, desk.view_json().into())
        }
        (&Method::POST, "move") => post_move(desk, query),
        (_, "" | "state") => plain(StatusCode::METHOD_NOT_ALLOWED, "GET only\n"),
        (_, "move") => plain(StatusCode::METHOD_NOT_ALLOWED, "POST only\n"),
        _ => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

fn post_move(desk: &Desk, query: &str) -> Response<Reply> {
    let turn = param(query, "turn").and_then(|t| t.parse::<u64>().ok());
    let (Some(turn), Some(square)) = (turn, param(query, "square")) else {
        return plain(
            StatusCode::BAD_REQUEST,
            "a move needs turn=N and square=d3\n",
        );
    };
    match desk.post(turn, square) {
        Ok(words) => plain(StatusCode::OK, &format!("{words}\n")),
        Err(e @ Refusal::NotNow(_)) => plain(StatusCode::CONFLICT, &format!("{e}\n")),
        Err(e @ Refusal::Illegal(_)) => plain(StatusCode::UNPROCESSABLE_ENTITY, &format!("{e}\n")),
    }
}

/// The value of `name` in a query string (not percent-decoded: a key, a
/// number and a square need none).
fn param<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The page: static (the key and the name are read from its own address
/// by its script, never written into it), polling `state` twice a second.
const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Your seat</title>
<style>
body{font-family:system-ui,sans-serif;margin:0 auto;padding:8px;max-width:520px;background:#f4f1ea;color:#222}
h1{font-size:1.2em;margin:.2em 0}
#board{display:grid;gap:2px;background:#1d5c33;padding:4px;border-radius:6px;width:min(96vw,480px);box-sizing:border-box;margin:0 auto}
#board button{aspect-ratio:1;min-width:0;min-height:36px;border:0;border-radius:3px;background:#2e8b57;padding:0;position:relative;font-size:.7em;color:#0b2;cursor:default}
#board button.legal{cursor:pointer;background:#3aa86a}
#board button.legal::after{content:"";position:absolute;inset:38%;border-radius:50%;background:rgba(255,255,255,.55)}
#board button.last{outline:3px solid #f5c542;outline-offset:-3px}
.disc{position:absolute;inset:10%;border-radius:50%}
.X{background:#111}.O{background:#fafafa;border:1px solid #999}
#clocks{display:flex;justify-content:space-between;gap:8px;margin:.5em 0;font-variant-numeric:tabular-nums}
#clocks div{flex:1;padding:.4em;border-radius:4px;background:#fff}
#clocks div.moving{background:#fff3c4}
#note{min-height:2.6em;margin:.5em 0;font-size:1.05em}
#refusal{color:#a00;min-height:1.3em}
</style></head>
<body data-turn="0" data-over="" data-gone="" data-played="0">
<h1 id="title">Your seat</h1>
<div id="clocks"><div id="clock-you">you</div><div id="clock-opponent">opponent</div></div>
<div id="board" role="grid" aria-label="the board"></div>
<p id="note">connecting to the referee…</p>
<p id="refusal" role="alert"></p>
<script>
(function () {
  "use strict";
  var key = new URLSearchParams(location.search).get("key") || "";
  var base = location.pathname.replace(/\/+$/, "");
  var view = null, busy = false, seen = false;
  var body = document.body, board = document.getElementById("board");
  function text(id, t) { document.getElementById(id).textContent = t; }
  function name(i, n) { return "abcdefghijklmnopqrstuvwxyz".charAt(i % n) + (Math.floor(i / n) + 1); }
  function draw(v) {
    view = v; seen = true;
    body.setAttribute("data-turn", v.turn);
    body.setAttribute("data-over", v.over ? "1" : "");
    text("title", v.name + (v.you ? " — you play " + v.you + " against " + v.opponent : ""));
    var left = v.ms_left == null ? "" : " · " + (v.ms_left / 1000).toFixed(0) + " s left to move";
    text("clock-you", "you: " + v.clock_you + (v.your_turn ? left : ""));
    text("clock-opponent", (v.opponent || "opponent") + ": " + v.clock_opponent);
    document.getElementById("clock-you").className = v.your_turn ? "moving" : "";
    var discs = v.discs && !v.over ? " (X " + v.discs[0] + " · O " + v.discs[1] + ")" : "";
    text("note", (v.over || v.note) + discs);
    var n = v.size;
    board.style.gridTemplateColumns = "repeat(" + n + ",1fr)";
    board.textContent = "";
    for (var i = 0; i < n * n; i++) {
      var sq = name(i, n), b = document.createElement("button"), c = v.board.charAt(i);
      b.type = "button";
      b.setAttribute("data-square", sq);
      b.setAttribute("aria-label", sq);
      if (v.your_turn && v.legal.indexOf(sq) >= 0) b.className = "legal";
      if (v.last === sq) b.className += " last";
      if (c === "X" || c === "O") { var d = document.createElement("span"); d.className = "disc " + c; b.appendChild(d); }
      b.addEventListener("click", play.bind(null, sq));
      board.appendChild(b);
    }
  }
  function get() {
    fetch(base + "/state?key=" + encodeURIComponent(key), { cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (v) { if (!busy) draw(v); })
      .catch(function (e) {
        if (seen) {
          body.setAttribute("data-gone", "1");
          text("note", (view && view.over ? view.over + ". " : "") + "The referee is gone: the run has ended (its results folder has the games).");
        }
        else text("note", "cannot reach the referee: " + e.message);
      });
  }
  function play(sq) {
    if (busy || !view || !view.your_turn || view.over) return;
    busy = true;
    fetch(base + "/move?key=" + encodeURIComponent(key) + "&turn=" + view.turn + "&square=" + sq, { method: "POST" })
      .then(function (r) { return r.text().then(function (t) { return [r.ok, t]; }); })
      .then(function (a) {
        text("refusal", a[0] ? "" : a[1]);
        if (a[0]) { body.setAttribute("data-played", +body.getAttribute("data-played") + 1); view.your_turn = false; }
      })
      .catch(function (e) { text("refusal", "not sent: " + e.message); })
      .then(function () { busy = false; get(); });
  }
  get();
  setInterval(get, 500);
})();
</script>
</body></html>
"##;
