//! Issue 28, in the browser: with `run --serve`, the person of the
//! tournament (`human = true`) plays from a private page in headless
//! Chromium, by clicks on its marked legal squares, a whole game against a
//! built-in bot, at a phone's size; a square that is no legal move is
//! refused with why. Requests without the key, or with another, get 403
//! and change nothing; the public page offers no way to move and refuses
//! a POST. The screenshot is kept in `target/test-artefacts/`.

use std::time::Instant;

use crate::fixture::{wait_until, Scratch};
use crate::live_page::{artefact, assert_png, browse, http, Served};

/// A game of 6×6 between ann (in the browser) and greedy.
const TOURNAMENT: &str = r#"[tournament]
name = "browser"
size = 6
games-per-pairing = 1

[time]
move-ms = 2000

[[player]]
name = "ann"
human = true
clock-ms = 300000

[[player]]
name = "greedy"
builtin = "greedy"
"#;

/// The private link the referee printed (`http://…/seat/ann?key=…`).
fn private_link(served: &Served) -> String {
    let mut link = None;
    let found = wait_until(20, || {
        let text = served.stderr.lock().unwrap().clone();
        link = text
            .lines()
            .find_map(|l| l.strip_prefix("ann plays in the browser: "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string);
        link.is_some()
    });
    assert!(
        found,
        "no private link printed: {}",
        served.stderr.lock().unwrap()
    );
    link.unwrap()
}

/// Clicks a marked legal square whenever there is one, until the game is
/// over (or the run ended and the referee is gone).
const PLAY_ON: &str = r##"(function () {
  var b = document.body;
  if (b.getAttribute("data-over") || b.getAttribute("data-gone")) return true;
  var legal = document.querySelector("#board button.legal");
  if (legal) legal.click();
  return false;
})()"##;

/// Clicks an empty square that is not marked legal.
const CLICK_ILLEGAL: &str = r##"(function () {
  var all = document.querySelectorAll("#board button");
  for (var i = 0; i < all.length; i++) {
    var b = all[i];
    if (!b.classList.contains("legal") && !b.querySelector(".disc")) { b.click(); return b.getAttribute("data-square"); }
  }
  return null;
})()"##;

const MARKED: &str = r##"Array.prototype.map.call(document.querySelectorAll("#board button.legal"),
  function (b) { return b.getAttribute("data-square"); }).sort().join(" ")"##;

#[test]
fn a_person_plays_a_whole_game_in_the_browser_by_clicks_and_nobody_else_can_move() {
    let s = Scratch::new();
    s.write("tournament.toml", TOURNAMENT);
    let served = Served::start(&s, &["run", "--serve", "127.0.0.1:0"]);
    let link = private_link(&served);
    let addr = served.addr.clone();
    let (path, key) = {
        let p = link
            .split_once(&addr)
            .expect("the link is on the served address")
            .1;
        let key = p
            .split_once("key=")
            .expect("a key in the link")
            .1
            .to_string();
        (p.to_string(), key)
    };
    assert_eq!(key.len(), 32, "128 bits in hex: {key}");
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{key}");

    // Wait for ann's first turn (ann may play white: greedy moves first).
    let state = |k: &str| http(&addr, "GET", &format!("/seat/ann/state?key={k}"));
    let mut view = serde_json::Value::Null;
    assert!(
        wait_until(30, || {
            let (status, body) = state(&key);
            view = serde_json::from_str(&body).unwrap_or_default();
            status == 200 && view["your_turn"] == true
        }),
        "ann is never asked to move: {view}"
    );
    let turn = view["turn"].as_u64().unwrap();
    let square = view["legal"][0].as_str().unwrap().to_string();

    // Without the key, or with another: 403, and nothing played.
    let games = s.join("results/games.jsonl");
    let before = std::fs::read(&games).ok();
    let wrong = "0".repeat(32);
    for target in [
        format!("/seat/ann/move?turn={turn}&square={square}"),
        format!("/seat/ann/move?key={wrong}&turn={turn}&square={square}"),
        format!(
            "/seat/ann/move?key={}&turn={turn}&square={square}",
            &key[..31]
        ),
        format!("/seat/greedy/move?key={key}&turn={turn}&square={square}"),
    ] {
        let (status, body) = http(&addr, "POST", &target);
        assert_eq!(status, 403, "{target}: {body}");
    }
    for target in [
        "/seat/ann".to_string(),
        format!("/seat/ann?key={wrong}"),
        "/seat/ann/state".to_string(),
        format!("/seat/ann/state?key={wrong}"),
    ] {
        let (status, body) = http(&addr, "GET", &target);
        assert_eq!(status, 403, "{target}: {body}");
        assert!(!body.contains("board"), "{target}: {body}");
    }
    let (_, body) = state(&key);
    let after: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(after["turn"], turn, "a refused request played: {after}");
    assert_eq!(after["your_turn"], true, "{after}");
    assert_eq!(std::fs::read(&games).ok(), before, "games.jsonl changed");

    // The public page: no way to move, and no key or link on it.
    for target in ["/", "/state", "/report"] {
        let (status, body) = http(&addr, "GET", target);
        assert_eq!(status, 200, "{target}");
        assert!(!body.contains(&key), "{target} shows the key");
        assert!(!body.contains("/seat/"), "{target} links a seat");
        for way in ["<form", "\"POST\"", "'POST'"] {
            assert!(!body.contains(way), "{target} has {way}");
        }
    }
    for target in ["/", "/state", "/events", "/seat"] {
        let (status, _) = http(&addr, "POST", target);
        assert!(status == 405 || status == 404, "POST {target}: {status}");
    }

    // In Chromium at a phone's size: the marked squares are the legal
    // ones; a square that is none is refused with why; then clicks play
    // the game to its end.
    let shot = artefact("browser-seat-phone.png");
    let started = Instant::now();
    let looks = browse(
        &s,
        "seat",
        &format!("http://{addr}{path}"),
        serde_json::json!([
            {"size": [390, 844]},
            {"until": "document.querySelectorAll('#board button.legal').length > 0"},
            {"eval": MARKED},
            {"eval": "document.body.getAttribute('data-turn')"},
            {"eval": "JSON.stringify([innerWidth, document.documentElement.scrollWidth, document.querySelector('#board button').getBoundingClientRect().width])"},
            {"shot": shot},
            {"eval": CLICK_ILLEGAL},
            {"until": "document.getElementById('refusal').textContent.length > 0"},
            {"eval": "document.getElementById('refusal').textContent"},
            {"until": PLAY_ON, "secs": 240},
            {"eval": "document.body.getAttribute('data-played')"},
            {"eval": "document.getElementById('note').textContent"},
        ]),
    );
    let (marked, shown_turn) = (looks[0].as_str().unwrap(), looks[1].as_str().unwrap());
    let mut legal: Vec<&str> = view["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    legal.sort();
    assert_eq!(shown_turn, turn.to_string());
    assert_eq!(
        marked,
        legal.join(" "),
        "the marked squares are the legal ones"
    );
    let (width, scroll, cell): (f64, f64, f64) =
        serde_json::from_str(looks[2].as_str().unwrap()).unwrap();
    assert!(
        scroll <= width,
        "no sideways scrolling on a phone: {scroll} > {width}"
    );
    assert!(cell >= 36.0, "a tap target of {cell}px");
    assert_png(&shot);
    let refused = looks[3]
        .as_str()
        .unwrap_or_else(|| panic!("no empty unmarked square: {looks:?}"));
    let why = looks[4].as_str().unwrap();
    assert!(
        why.contains(refused) && why.contains("legal:"),
        "refused with why: {why}"
    );
    let clicked: usize = looks[5].as_str().unwrap().parse().unwrap();
    eprintln!(
        "played by {clicked} clicks in {:.1?}; last note: {}",
        started.elapsed(),
        looks[6]
    );

    // The run ends by itself, with one normal game that names ann and has
    // as many moves of hers as the page clicked.
    let mut child = served;
    assert!(
        wait_until(30, || child.child.try_wait().unwrap().is_some()),
        "the run did not end"
    );
    let text = std::fs::read_to_string(&games).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{text}");
    let r = &records[0];
    assert_eq!(r["reason"], "normal", "{r}");
    let ann = if r["black"] == "ann" {
        "black"
    } else {
        "white"
    };
    assert!(r["black"] == "ann" || r["white"] == "ann", "{r}");
    let transcript = r["transcript"].as_str().unwrap();
    let (_, end) = othello::replay_transcript(othello::Position::start(6), transcript).unwrap();
    assert!(end.is_over(), "{transcript}");
    let hers = r["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["color"] == ann && m["move"] != "pass" && m["opening"] != true)
        .count();
    assert_eq!(hers, clicked, "each of her moves was a click: {r}");
    drop(child);
}
