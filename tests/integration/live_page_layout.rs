//! The live page and the HTML report laid out for the screens they are
//! shown on: a projector (1280×720, 1920×1080) and a phone (390×844), with
//! 12 players, in headless Chromium. Measured in the page (scroll widths,
//! bounding rectangles), and screenshots kept in `target/test-artefacts/`
//! to be looked at. Owns no helper of its own: the browser driver and the
//! served process are `live_page`'s.

use crate::fixture::{fakebot, wait_until, Scratch};
use crate::live_page::{artefact, assert_png, browse, state, Served};

const PLAYERS: usize = 12;

/// A tournament of 12 players with names as long as a class's.
fn twelve(players: impl Fn(usize) -> String, concurrency: u32) -> String {
    let mut toml = format!(
        "[tournament]\nname = \"Layout\"\ngames-per-pairing = 2\nconcurrency = {concurrency}\n\n\
         [openings]\nrandom-plies = 30\nseed = 7\n\n"
    );
    for i in 1..=PLAYERS {
        toml.push_str(&format!(
            "[[player]]\nname = \"student-player-{i:02}\"\n{}\n\n",
            players(i)
        ));
    }
    toml
}

/// What a look at the live page measures: the window, the document's
/// scroll width, the crosstable's rectangle (left, right, rows), its box's
/// (left, right: on a phone the table may scroll inside it) and each
/// running game's card (top, bottom, board's side).
const MEASURE: &str = r##"JSON.stringify((function () {
  var t = document.getElementById("crosstable"), r = t.getBoundingClientRect();
  return {
    w: window.innerWidth, h: window.innerHeight,
    scroll: document.documentElement.scrollWidth,
    table: [r.left, r.right, t.tBodies[0].rows.length],
    tableBox: (function (b) { return [b.left, b.right]; })(t.parentNode.getBoundingClientRect()),
    cards: Array.prototype.map.call(document.querySelectorAll("article.game"), function (c) {
      var b = c.getBoundingClientRect(), s = c.querySelector("svg.board").getBoundingClientRect();
      return [b.top, b.bottom, s.width];
    })
  };
})())"##;

#[derive(Debug, serde::Deserialize)]
struct Measured {
    w: f64,
    h: f64,
    scroll: f64,
    table: (f64, f64, usize),
    #[serde(rename = "tableBox")]
    table_box: (f64, f64),
    cards: Vec<(f64, f64, f64)>,
}

#[test]
fn the_live_page_fits_a_projector_and_a_phone_with_twelve_players() {
    if !crate::needs::have(&[crate::needs::CHROMIUM]) {
        return;
    }
    let s = Scratch::new();
    let bot = fakebot("slow 250");
    let argv: Vec<String> = bot.split(' ').map(|a| format!("\"{a}\"")).collect();
    let command = format!("command = [{}]", argv.join(", "));
    s.write("tournament.toml", &twelve(|_| command.clone(), 2));
    let run = Served::start(&s, &["run", "--serve", "127.0.0.1:0"]);
    let addr = run.addr.clone();
    // Finished games fill the crosstable's cells; two games are going.
    assert!(
        wait_until(120, || {
            let st = state(&addr);
            st["done"].as_u64().unwrap_or(0) >= 2
                && st["running"].as_array().is_some_and(|r| {
                    r.len() == 2 && r.iter().all(|g| g["last"].as_str() != Some(""))
                })
        }),
        "no two games going after two finished: {}",
        run.stderr.lock().unwrap()
    );
    let screens = [
        (1280, 720, "projector-720"),
        (1920, 1080, "projector-1080"),
        (390, 844, "phone"),
    ];
    let mut plan = vec![
        serde_json::json!({"until": "document.querySelectorAll('article.game[data-ply]').length === 2"}),
    ];
    let mut shots = vec![];
    for (w, h, name) in screens {
        let shot = artefact(&format!("live-page-layout-{name}.png"));
        plan.push(serde_json::json!({"size": [w, h]}));
        plan.push(serde_json::json!({"wait": 1}));
        // Measured in the same step that sees both games going (a game
        // could end between two steps).
        let measured_with_two = format!(
            "(window.__m = {MEASURE}, JSON.parse(window.__m).cards.length === 2 \
             && document.querySelectorAll('article.game[data-ply]').length === 2)"
        );
        plan.push(serde_json::json!({ "until": measured_with_two }));
        plan.push(serde_json::json!({"eval": "window.__m"}));
        plan.push(serde_json::json!({"shot": shot}));
        shots.push(shot);
    }
    let values = browse(&s, "layout", &run.url(), serde_json::Value::Array(plan));
    for shot in &shots {
        assert_png(shot);
    }
    let seen: Vec<Measured> = values
        .iter()
        .map(|v| serde_json::from_str(v.as_str().expect("a JSON string")).unwrap())
        .collect();
    for ((w, h, name), m) in screens.iter().zip(&seen) {
        assert_eq!((m.w, m.h), (f64::from(*w), f64::from(*h)), "{name}: {m:?}");
        assert!(m.scroll <= m.w, "{name}: scrolls sideways: {m:?}");
        let (left, right, rows) = m.table;
        assert_eq!(rows, PLAYERS, "{name}: a row per player: {m:?}");
        let (left, right) = if *name == "phone" {
            m.table_box
        } else {
            (left, right)
        };
        assert!(
            left >= 0.0 && right <= m.w,
            "{name}: the crosstable is cut: {m:?}"
        );
        assert_eq!(m.cards.len(), 2, "{name}: both running games: {m:?}");
        for &(top, bottom, side) in &m.cards {
            assert!(side >= 120.0, "{name}: a board too small to see: {m:?}");
            if *name != "phone" {
                assert!(
                    top >= 0.0 && bottom <= m.h,
                    "{name}: a running game below the fold: {m:?}"
                );
            }
        }
    }
}

/// What a look at the report measures: the window's width, the document's
/// scroll width and, for each table, its section's id, the table's scroll
/// width and the section's client width.
const TABLES: &str = r##"JSON.stringify([window.innerWidth, document.documentElement.scrollWidth,
  Array.prototype.map.call(document.querySelectorAll("section table"), function (t) {
    var s = t.closest("section");
    return [s.id, t.scrollWidth, s.clientWidth];
  })])"##;

#[test]
fn the_reports_tables_fit_their_sections_with_twelve_players() {
    if !crate::needs::have(&[crate::needs::CHROMIUM]) {
        return;
    }
    let s = Scratch::new();
    let bots = ["random", "greedy", "weighted"];
    s.write(
        "tournament.toml",
        &twelve(|i| format!("builtin = \"{}\"", bots[i % bots.len()]), 2),
    );
    s.run_ok(&["-q", "run"], 300);
    s.run_ok(&["report"], 60);
    let url = format!("file://{}", s.join("results/report.html").display());
    let mut tables = vec![];
    let mut plan = vec![serde_json::json!({"until": "document.readyState === 'complete'"})];
    for (w, h, name) in [
        (1280, 720, "1280"),
        (1920, 1080, "1920"),
        (390, 844, "phone"),
    ] {
        let shot = artefact(&format!("report-layout-{name}.png"));
        plan.push(serde_json::json!({"size": [w, h]}));
        plan.push(serde_json::json!({"wait": 0.5}));
        plan.push(serde_json::json!({"eval": TABLES}));
        plan.push(serde_json::json!({"shot": shot}));
        tables.push((name, shot));
    }
    let values = browse(&s, "report", &url, serde_json::Value::Array(plan));
    for ((name, shot), value) in tables.iter().zip(&values) {
        assert_png(shot);
        let (width, scroll, measured): (f64, f64, Vec<(String, f64, f64)>) =
            serde_json::from_str(value.as_str().expect("a JSON string")).unwrap();
        assert!(
            scroll <= width,
            "{name}: the page scrolls sideways: {scroll} > {width}"
        );
        let ids: Vec<&str> = measured.iter().map(|(id, _, _)| id.as_str()).collect();
        assert!(
            ids.contains(&"crosstable") && ids.contains(&"players") && ids.contains(&"games"),
            "{name}: {measured:?}"
        );
        // A phone: wider tables scroll inside their sections.
        if *name == "phone" {
            continue;
        }
        for (id, table, section) in &measured {
            assert!(
                table <= section,
                "{name}: a table sticks out of #{id} by {} px: {measured:?}",
                table - section
            );
        }
    }
}
