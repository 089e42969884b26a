//! The live page (`tournament serve`, `tournament run --serve`) as a viewer
//! meets it: over real HTTP from a raw socket (what it serves and refuses),
//! and in headless Chromium during a real run of slow bots (the boards move
//! on between two looks, the SPRT's state, the final standings at the end;
//! a referee killed mid-run shown as interrupted, not as games that never
//! end). Screenshots are kept in `target/test-artefacts/`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::fixture::{fakebot, project_root, tournament_bin, wait_until, Scratch};
use crate::records::chromium;

/// A `tournament` process that announced its live page; killed on drop.
pub(crate) struct Served {
    pub(crate) child: Child,
    /// `127.0.0.1:PORT`
    pub(crate) addr: String,
    announce: String,
    pub(crate) stderr: Arc<Mutex<String>>,
}

impl Served {
    pub(crate) fn start(s: &Scratch, args: &[&str]) -> Served {
        let mut child = Command::new(tournament_bin())
            .args(args)
            .current_dir(s.path())
            .env_remove("TOURNAMENT_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let announce = loop {
            match lines.next() {
                Some(Ok(line)) if line.starts_with("live page: ") => break line,
                Some(Ok(line)) => seen.push_str(&(line + "\n")),
                _ => panic!("no live page announced: {seen}"),
            }
        };
        let stderr = Arc::new(Mutex::new(seen));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let port = announce
            .split(':')
            .find_map(|part| {
                let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                (!digits.is_empty() && part[digits.len()..].starts_with('/')).then_some(digits)
            })
            .unwrap_or_else(|| panic!("no port in {announce}"));
        Served {
            child,
            addr: format!("127.0.0.1:{port}"),
            announce,
            stderr,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 request: (status, body). The target is sent as given,
/// `..` and all (a browser would normalise it first).
pub(crate) fn http(addr: &str, method: &str, target: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line for {target}: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The snapshot the page renders, from `/state`.
pub(crate) fn state(addr: &str) -> serde_json::Value {
    let (status, body) = http(addr, "GET", "/state");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Every file under `dir` with its length and modification time.
fn tree(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.is_dir() {
            out.extend(tree(&entry.path()));
        } else {
            out.push((entry.path(), meta.len(), meta.modified().unwrap()));
        }
    }
    out.sort();
    out
}

const SECRET: &str = "TOP-SECRET-a81c";

#[test]
fn the_live_page_serves_nothing_outside_the_results_folder_and_writes_nothing() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"Escape\"\ngames-per-pairing = 2\n\n\
         [[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n\
         [[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n",
    );
    s.run_ok(&["-q", "run"], 60);
    let secret = s.write("secret.txt", SECRET);
    std::os::unix::fs::symlink(&secret, s.join("results/link.txt")).unwrap();
    std::os::unix::fs::symlink(s.path(), s.join("results/up")).unwrap();
    let before = tree(&s.join("results"));

    let served = Served::start(&s, &["serve", "--addr", "127.0.0.1:0"]);
    assert!(
        served.announce.contains("this machine only"),
        "{}",
        served.announce
    );
    let addr = served.addr.as_str();

    // What it does serve.
    let (status, page) = http(addr, "GET", "/");
    assert_eq!(status, 200);
    assert!(page.contains("id=\"initial-state\""), "{page}");
    let st = state(addr);
    assert!(st["crosstable"]
        .as_str()
        .unwrap()
        .starts_with("<table class=\"cross\" id=\"crosstable\">"));
    assert_eq!(st["done"], 2);
    assert_eq!(st["finished"], true);
    let id = st["recent"][0]["id"].as_str().unwrap().to_string();
    let (status, log) = http(addr, "GET", &format!("/results/logs/{id}.log"));
    assert_eq!(status, 200);
    assert_eq!(
        log,
        std::fs::read_to_string(s.join(&format!("results/logs/{id}.log"))).unwrap()
    );
    let (status, report) = http(addr, "GET", "/report");
    assert_eq!(status, 200);
    assert!(report.contains(&id) && report.contains("id=\"game-list\""));

    // What it refuses: everything that would leave the folder.
    let abs = secret.display().to_string();
    let abs_encoded = abs.replace('/', "%2F");
    let attempts = [
        "/results/../secret.txt".to_string(),
        "/results/logs/../../secret.txt".to_string(),
        "/../secret.txt".to_string(),
        "/results/%2e%2e/secret.txt".to_string(),
        "/results/%2e%2e%2fsecret.txt".to_string(),
        "/results/%2E%2E%2Fsecret.txt".to_string(),
        "/results/..%2fsecret.txt".to_string(),
        "/results/..%5csecret.txt".to_string(),
        "/results/logs%2f..%2f..%2fsecret.txt".to_string(),
        "/%2e%2e/secret.txt".to_string(),
        format!("/results/{abs}"),
        format!("/results/{abs_encoded}"),
        format!("/results/%2e%2e{abs_encoded}"),
        abs.clone(),
        "/results/link.txt".to_string(),
        "/results/up/secret.txt".to_string(),
        "/results/".to_string(),
        "/results/logs".to_string(),
        "/secret.txt".to_string(),
    ];
    for target in &attempts {
        let (status, body) = http(addr, "GET", target);
        assert_ne!(status, 200, "{target} was served: {body}");
        assert!(!body.contains(SECRET), "{target} leaked the secret");
    }
    for method in ["POST", "PUT", "DELETE"] {
        let (status, _) = http(addr, method, "/results/games.jsonl");
        assert_eq!(status, 405, "{method}");
    }
    // One request per connection: asked to keep it open, it answers and
    // closes it all the same.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(kept, "GET /state HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let clock = Instant::now();
    let mut raw = Vec::new();
    kept.read_to_end(&mut raw).unwrap();
    assert!(
        clock.elapsed() < Duration::from_secs(10),
        "closed after its answer"
    );
    assert!(String::from_utf8_lossy(&raw).starts_with("HTTP/1.1 200"));
    // A request head longer than 16 KiB is refused (431, nothing else)
    // and the connection closed.
    let mut long = TcpStream::connect(addr).unwrap();
    long.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = write!(
        long,
        "GET /state HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(20_000)
    );
    let mut raw = Vec::new();
    let _ = long.read_to_end(&mut raw);
    let refused = String::from_utf8_lossy(&raw);
    assert!(
        raw.is_empty() || (refused.starts_with("HTTP/1.1 431 ") && refused.ends_with("\r\n\r\n")),
        "{refused}"
    );
    // A stream opened and dropped, then the page again: still nothing written.
    let mut events = TcpStream::connect(addr).unwrap();
    write!(events, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut first = [0u8; 64];
    events.read_exact(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first).starts_with("HTTP/1.1 200"));
    drop(events);
    assert_eq!(http(addr, "GET", "/").0, 200);
    assert_eq!(
        tree(&s.join("results")),
        before,
        "the results folder changed"
    );
    drop(served);

    // Shown to the network, it says so.
    let open = Served::start(&s, &["serve", "--addr", "0.0.0.0:0"]);
    assert!(
        open.announce.contains("read-only") && open.announce.contains("visible to the network"),
        "{}",
        open.announce
    );
}

/// Drives one headless Chromium session over `--remote-debugging-pipe`
/// (the DevTools protocol, NUL-separated JSON on fds 3 and 4): opens the
/// page once and runs `plan`'s steps in it, in order: `{"until": js}`
/// (wait for it to be true), `{"wait": secs}`, `{"size": [w, h]}` (the
/// viewport), `{"eval": js}` (its value is returned) and `{"shot": path}`.
/// One session, so what changes between two looks came over the page's
/// own event stream, not a reload.
const DRIVER: &str = r#"
import base64, json, os, subprocess, sys, time
chrome, profile, url, plan = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
to_r, to_w = os.pipe()
from_r, from_w = os.pipe()
def fds():
    os.dup2(to_r, 3)
    os.dup2(from_w, 4)
proc = subprocess.Popen([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--force-device-scale-factor=1", "--remote-debugging-pipe",
    "--user-data-dir=" + profile, "about:blank"],
    preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_r); os.close(from_w)
out, inp = os.fdopen(to_w, "wb", buffering=0), os.fdopen(from_r, "rb", buffering=0)
buf, ids = b"", [0]
def call(method, params=None, session=None):
    global buf
    ids[0] += 1
    msg = {"id": ids[0], "method": method, "params": params or {}}
    if session: msg["sessionId"] = session
    out.write(json.dumps(msg).encode() + b"\0")
    while True:
        while b"\0" not in buf:
            chunk = inp.read(65536)
            if not chunk: raise SystemExit("chromium closed the pipe")
            buf += chunk
        raw, buf = buf.split(b"\0", 1)
        reply = json.loads(raw)
        if reply.get("id") == ids[0]:
            if "error" in reply: raise SystemExit(f"{method}: {reply['error']}")
            return reply["result"]
def value(expr, session):
    r = call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    if "exceptionDetails" in r: raise SystemExit(f"{expr}: {r['exceptionDetails']}")
    return r.get("result", {}).get("value")
def probe(expr, session):
    r = call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    return None if "exceptionDetails" in r else r.get("result", {}).get("value")
try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    call("Page.enable", session=session)
    def size(w, h):
        call("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600}, session)
    size(1920, 1080)
    call("Page.navigate", {"url": url}, session)
    results = []
    for step in plan:
        if "until" in step:
            end = time.time() + step.get("secs", 30)
            # A page still loading (about:blank at first) answers with an
            # exception: not yet.
            while probe(step["until"], session) is not True:
                if time.time() > end: raise SystemExit("timed out: " + step["until"])
                time.sleep(0.1)
        elif "wait" in step:
            time.sleep(step["wait"])
        elif "size" in step:
            size(*step["size"])
        elif "eval" in step:
            results.append(value(step["eval"], session))
        elif "shot" in step:
            data = call("Page.captureScreenshot", {"format": "png"}, session)["data"]
            open(step["shot"], "wb").write(base64.b64decode(data))
    print(json.dumps(results))
finally:
    proc.kill()
    proc.wait()
"#;

/// Runs `plan` (see [`DRIVER`]) on `url`; the values of its `eval` steps.
pub(crate) fn browse(
    s: &Scratch,
    profile: &str,
    url: &str,
    plan: serde_json::Value,
) -> Vec<serde_json::Value> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(DRIVER)
        .arg(chromium())
        .arg(s.join(&format!("chromium-{profile}")))
        .arg(url)
        .arg(plan.to_string())
        .output()
        .expect("python3 (already needed by the fake bot)");
    assert!(
        out.status.success(),
        "the Chromium driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What a look at the page reads: events received, status, progress, the
/// running games (id, ply, stones drawn, discs in `data-board`), the
/// crosstable's body rows (cells' text) and the latest games listed.
const LOOK: &str = r##"JSON.stringify({
  updates: +document.body.getAttribute("data-updates"),
  status: document.getElementById("status").textContent,
  progress: document.getElementById("progress").textContent,
  games: Array.prototype.map.call(document.querySelectorAll("article.game"), function (c) {
    return [c.getAttribute("data-game-id"), +c.getAttribute("data-ply"),
            c.querySelectorAll("svg.board circle.stone").length,
            c.getAttribute("data-board").replace(/[^XO]/g, "").length];
  }),
  rows: Array.prototype.map.call(document.querySelectorAll("table#crosstable tbody tr"), function (r) {
    return Array.prototype.map.call(r.cells, function (td) { return td.textContent; });
  }),
  recent: document.querySelectorAll("#recent li").length,
  sprt: document.getElementById("sprt").textContent,
  state: document.body.getAttribute("data-state"),
  notice: document.getElementById("notice").hidden ? "" : document.getElementById("notice").textContent
})"##;

#[derive(Debug, serde::Deserialize)]
struct Look {
    updates: u32,
    status: String,
    progress: String,
    games: Vec<(String, u32, usize, usize)>,
    rows: Vec<Vec<String>>,
    recent: usize,
    sprt: String,
    state: String,
    notice: String,
}

fn looks(values: &[serde_json::Value]) -> Vec<Look> {
    values
        .iter()
        .map(|v| serde_json::from_str(v.as_str().expect("a JSON string")).unwrap())
        .collect()
}

pub(crate) fn artefact(name: &str) -> String {
    let dir = project_root().join("target/test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    let _ = std::fs::remove_file(&file);
    file.display().to_string()
}

pub(crate) fn assert_png(file: &str) {
    let bytes = std::fs::read(file).unwrap_or_else(|_| panic!("no screenshot {file}"));
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 5000,
        "{file}"
    );
}

#[test]
fn the_live_page_follows_a_run_of_slow_bots_in_headless_chromium() {
    if !crate::needs::have(&[crate::needs::CHROMIUM]) {
        return;
    }
    let s = Scratch::new();
    let bot = fakebot("slow 300");
    let argv: Vec<String> = bot.split(' ').map(|a| format!("\"{a}\"")).collect();
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"Projector\"\ngames-per-pairing = 4\nconcurrency = 2\n\n\
             [openings]\nrandom-plies = 24\nseed = 3\n\n\
             [sprt]\nelo0 = 0\nelo1 = 50\nalpha = 0.05\nbeta = 0.05\n\n\
             [[player]]\nname = \"slow-a\"\ncommand = [{argv}]\n\n\
             [[player]]\nname = \"slow-b\"\ncommand = [{argv}]\n",
            argv = argv.join(", ")
        ),
    );
    // A viewer of the folder alone (as on another machine), up before the
    // referee, and the referee's own page.
    let viewer = Served::start(
        &s,
        &["serve", "--results", "results", "--addr", "127.0.0.1:0"],
    );
    let mut run = Served::start(&s, &["run", "--serve", "127.0.0.1:0"]);
    let addr = run.addr.clone();
    assert!(
        wait_until(60, || {
            let st = state(&addr);
            st["running"]
                .as_array()
                .is_some_and(|r| r.iter().any(|g| g["last"].as_str() != Some("")))
        }),
        "no game got going: {}",
        run.stderr.lock().unwrap()
    );

    // One page, two looks a few seconds apart: a board has moved on.
    let projector = artefact("live-page-projector.png");
    let phone = artefact("live-page-phone.png");
    let values = browse(
        &s,
        "live",
        &run.url(),
        serde_json::json!([
            {"until": "document.querySelectorAll('article.game[data-ply]').length > 0"},
            {"eval": LOOK},
            {"shot": projector},
            {"wait": 3},
            {"eval": LOOK},
            {"size": [412, 915]},
            {"shot": phone},
        ]),
    );
    assert_png(&projector);
    assert_png(&phone);
    let seen = looks(&values);
    for look in &seen {
        assert_eq!(look.rows.len(), 2, "a row per player: {look:?}");
        for (id, ply, stones, discs) in &look.games {
            assert_eq!(stones, discs, "{id} at ply {ply}: the board drawn");
            assert!(*discs >= 4 + 24, "{id}: the opening is on the board");
        }
    }
    let (before, after) = (&seen[0], &seen[1]);
    assert!(!before.games.is_empty(), "running games shown: {before:?}");
    assert_eq!(before.status, "Live");
    assert_eq!(before.state, "running");
    assert!(
        before.sprt.starts_with("SPRT LLR ") && before.sprt.contains("(-2.94, 2.94) [0, 50]"),
        "the SPRT in the progress: {before:?}"
    );
    let moved = before.games.iter().any(|(id, ply, _, _)| {
        after
            .games
            .iter()
            .any(|(id2, ply2, _, _)| id == id2 && ply2 > ply)
    });
    let replaced = !after.games.is_empty()
        && before
            .games
            .iter()
            .all(|(id, _, _, _)| after.games.iter().all(|(id2, _, _, _)| id != id2));
    assert!(
        moved || replaced,
        "no board moved on: {before:?} then {after:?}"
    );
    assert!(
        after.updates > before.updates,
        "the event stream pushed the change: {before:?} then {after:?}"
    );

    // The end: the referee's page stops with it; the viewer's page, open
    // since before the end, shows the final standings.
    let final_shot = artefact("live-page-final.png");
    let (status, values) = std::thread::scope(|scope| {
        let watching = scope.spawn(|| {
            browse(
                &s,
                "final",
                &viewer.url(),
                serde_json::json!([
                    {"until": "document.getElementById('status').textContent === 'Final standings'", "secs": 150},
                    {"eval": LOOK},
                    {"shot": final_shot},
                ]),
            )
        });
        let clock = Instant::now();
        let status = loop {
            if let Some(st) = run.child.try_wait().unwrap() {
                break st;
            }
            assert!(
                clock.elapsed() < Duration::from_secs(120),
                "the run did not end"
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        (status, watching.join().unwrap())
    });
    assert!(status.success(), "{}", run.stderr.lock().unwrap());
    assert!(
        TcpStream::connect(&addr).is_err(),
        "run --serve stopped serving"
    );
    assert_png(&final_shot);
    let last = &looks(&values)[0];
    assert_eq!(last.progress, "4 / 4 games");
    assert!(last.games.is_empty(), "no game running: {last:?}");
    assert_eq!(last.recent, 4, "every game among the latest");
    assert!(last.updates > 0, "the end came over the event stream");
    assert_eq!(last.rows.len(), 2);
    let points: f64 = last
        .rows
        .iter()
        .map(|r| {
            assert_eq!(r[3], "4", "games of {}", r[1]);
            r[2].parse::<f64>().unwrap()
        })
        .sum();
    assert_eq!(points, 4.0, "the points of 4 games");
    // The SPRT as `crosstable` computes it from the same folder.
    let table: serde_json::Value =
        serde_json::from_slice(&s.run_ok(&["crosstable", "--format", "json"], 30).stdout).unwrap();
    let test = &table["sprt"];
    let llr: f64 = last
        .sprt
        .strip_prefix("SPRT LLR ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no LLR in {:?}", last.sprt));
    assert!(
        (llr - test["llr"].as_f64().unwrap()).abs() < 0.011,
        "page {:?}, crosstable {test}",
        last.sprt
    );
    assert_eq!(test["result"], "continue", "two pairs decide nothing");
    assert!(last.sprt.ends_with(" · continue"), "{:?}", last.sprt);
    assert_eq!(last.state, "finished");
}

#[test]
fn the_live_page_shows_a_killed_referee_as_interrupted_not_as_games_going_on() {
    if !crate::needs::have(&[crate::needs::CHROMIUM]) {
        return;
    }
    let s = Scratch::new();
    let bot = fakebot("slow 300");
    let argv: Vec<String> = bot.split(' ').map(|a| format!("\"{a}\"")).collect();
    s.write(
        "tournament.toml",
        &format!(
            "[tournament]\nname = \"Crash\"\ngames-per-pairing = 4\nconcurrency = 2\n\n\
             [openings]\nrandom-plies = 24\nseed = 5\n\n\
             [[player]]\nname = \"slow-a\"\ncommand = [{argv}]\n\n\
             [[player]]\nname = \"slow-b\"\ncommand = [{argv}]\n",
            argv = argv.join(", ")
        ),
    );
    let viewer = Served::start(
        &s,
        &["serve", "--results", "results", "--addr", "127.0.0.1:0"],
    );
    let addr = viewer.addr.clone();
    let mut referee = Command::new(tournament_bin())
        .args(["-q", "run"])
        .current_dir(s.path())
        .env_remove("TOURNAMENT_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The viewer (another process) sees the referee's games going.
    assert!(
        wait_until(60, || {
            let st = state(&addr);
            st["state"] == "running"
                && st["running"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|g| g["last"].as_str() != Some("")))
        }),
        "no game got going: {}",
        state(&addr)
    );
    referee.kill().unwrap(); // SIGKILL: no clean-up of any kind
    referee.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(s.join("results/live"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert!(!left.is_empty(), "the killed referee left its live files");

    assert!(
        wait_until(10, || state(&addr)["state"] == "interrupted"),
        "not shown as interrupted: {}",
        state(&addr)
    );
    let st = state(&addr);
    assert_eq!(st["referee"], "gone", "{st}");
    assert_eq!(st["running"].as_array().unwrap().len(), 0, "{st}");
    assert!(st["cut_short"].as_u64().unwrap() >= 1, "{st}");
    assert!(st["done"].as_u64().unwrap() < 4, "{st}");

    let shot = artefact("live-page-interrupted.png");
    let values = browse(
        &s,
        "crash",
        &viewer.url(),
        serde_json::json!([
            {"until": "document.getElementById('status').textContent === 'Interrupted'"},
            {"eval": LOOK},
            {"wait": 2},
            {"eval": LOOK},
            {"shot": shot},
        ]),
    );
    assert_png(&shot);
    for look in looks(&values) {
        assert_eq!(look.status, "Interrupted", "{look:?}");
        assert_eq!(look.state, "interrupted");
        assert!(look.games.is_empty(), "no game shown running: {look:?}");
        assert!(
            look.notice.contains("killed or crashed") && look.notice.contains("resumes"),
            "{look:?}"
        );
        assert_eq!(look.rows.len(), 2, "the crosstable stays: {look:?}");
        assert_eq!(look.sprt, "", "no SPRT in this event");
    }
}
