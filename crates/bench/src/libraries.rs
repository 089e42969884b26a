//! The shipped bot libraries as their users get them: the same
//! first-legal-move logic in Python, Ruby and JavaScript, written on
//! `bots/<language>/mailbox.*` and played in a real `tournament run` (where
//! the libraries take the pipe they are offered; and once more with
//! `pipe = false`, through the files only), beside the same logic in the
//! same language under rust-reversi's Arena (stdin and stdout, persistent
//! processes), in one run; the BASIC bots' games/s; and each library's CPU
//! while it waits for a slow opponent (through the files, as a bot started
//! by hand waits).
//!
//! Owns only these rows and the bench bots they start (`bench/*_first.*`,
//! with copies of the libraries from `bots/` built into the binary). The
//! libraries themselves are `bots/`; changes nothing outside its scratch
//! folders.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::tourney::{self, Bot, Setup};
use super::{err_line, progress, sys, Place, Plan, Row, Rows, Target, Unit};

/// The library files and the bench bots written on them, as files: name,
/// content. Written next to the other bench scripts.
pub const FILES: [(&str, &str); 12] = [
    (
        "mailbox.py",
        include_str!("../../../bots/python/mailbox.py"),
    ),
    ("mailbox.rb", include_str!("../../../bots/ruby/mailbox.rb")),
    ("mailbox.js", include_str!("../../../bots/js/mailbox.js")),
    (
        "mailbox.yab",
        include_str!("../../../bots/yabasic/mailbox.yab"),
    ),
    (
        "greedy.yab",
        include_str!("../../../bots/yabasic/greedy.yab"),
    ),
    (
        "greedy.bas",
        include_str!("../../../bots/bwbasic/greedy.bas"),
    ),
    ("lib_first.py", include_str!("../bots/lib_first.py")),
    ("lib_first.rb", include_str!("../bots/lib_first.rb")),
    ("lib_first.js", include_str!("../bots/lib_first.js")),
    ("arena_first.py", include_str!("../bots/arena_first.py")),
    ("arena_first.rb", include_str!("../bots/arena_first.rb")),
    ("arena_first.js", include_str!("../bots/arena_first.js")),
];

/// Writes [`FILES`] into `dir`.
pub fn write_files(dir: &Path) -> std::io::Result<()> {
    for (name, text) in FILES {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// How long each library's waiting is watched (a slow opponent).
fn wait_window(plan: &Plan) -> Duration {
    Duration::from_secs(if plan.quick { 2 } else { 5 })
}

/// Games of each BASIC run (bwBASIC needs ~40 ms a move).
fn basic_games(plan: &Plan) -> u32 {
    if plan.quick {
        4
    } else {
        10
    }
}

/// One language of the comparison.
struct Lang {
    name: &'static str,
    /// The interpreter, if found.
    interpreter: Result<PathBuf, String>,
    /// The bot on the shipped library, and the Arena's bot.
    on_library: &'static str,
    on_arena: &'static str,
}

/// The first `name` on PATH.
fn on_path(name: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("no `{name}` on PATH"))
}

/// The rows of every language, the BASIC rows and the waiting rows.
pub(super) fn rows(
    plan: &Plan,
    places: &[Place],
    scripts: &Path,
    venv: Result<&PathBuf, String>,
    rows: &mut Rows,
) {
    let langs = [
        Lang {
            name: "python",
            // The Arena runs in the virtualenv's Python (rust-reversi); the
            // bots of both harnesses use that same interpreter.
            interpreter: venv.clone().cloned(),
            on_library: "lib_first.py",
            on_arena: "arena_first.py",
        },
        Lang {
            name: "ruby",
            interpreter: on_path("ruby"),
            on_library: "lib_first.rb",
            on_arena: "arena_first.rb",
        },
        Lang {
            name: "javascript",
            interpreter: on_path("node"),
            on_library: "lib_first.js",
            on_arena: "arena_first.js",
        },
    ];
    struct Ids {
        arena: usize,
        /// Per place: (ours, ratio).
        ours: Vec<(usize, usize)>,
        /// Through the files only, on the first place: (ours, ratio).
        files: (usize, usize),
        alive: bool,
        arena_alive: bool,
    }
    // 100 games even with --quick: fewer would time mostly the start of
    // the interpreters.
    let games = 100;
    let mut ids: Vec<Ids> = Vec::new();
    for lang in &langs {
        let arena = rows.add(Row::new(
            format!("{} first-move, rust-reversi Arena (pipes)", lang.name),
            Unit::Rate("games/s"),
        ));
        let mut ours = Vec::new();
        for place in places {
            let row = rows.add(Row::new(
                format!(
                    "{} first-move on bots/ library, c=2 ({})",
                    lang.name, place.label
                ),
                Unit::Rate("games/s"),
            ));
            let at_least = if place.label.starts_with("tmpfs") {
                1.0
            } else {
                0.7
            };
            let ratio = rows.add(
                Row::new(
                    format!("{} library ÷ Arena ({})", lang.name, place.label),
                    Unit::Ratio,
                )
                .target(Target::AtLeast(at_least)),
            );
            ours.push((row, ratio));
        }
        let files = (
            rows.add(Row::new(
                format!(
                    "{} first-move on bots/ library, files only (pipe = false), c=2 ({})",
                    lang.name, places[0].label
                ),
                Unit::Rate("games/s"),
            )),
            rows.add(Row::new(
                format!(
                    "{} library, files only ÷ Arena ({})",
                    lang.name, places[0].label
                ),
                Unit::Ratio,
            )),
        );
        let mut alive = true;
        let mut arena_alive = true;
        if let Err(why) = &lang.interpreter {
            let all: Vec<usize> = std::iter::once(arena)
                .chain(ours.iter().flat_map(|&(a, b)| [a, b]))
                .chain([files.0, files.1])
                .collect();
            rows.fail(&all, why);
            alive = false;
            arena_alive = false;
        }
        ids.push(Ids {
            arena,
            ours,
            files,
            alive,
            arena_alive,
        });
    }
    let arena_python = venv.clone();
    if let Err(why) = &arena_python {
        for i in &ids {
            rows.fail(&[i.arena], why);
        }
        for i in ids.iter_mut() {
            i.arena_alive = false;
        }
    }
    let basics = [
        ("yabasic", "greedy.yab", on_path("yabasic")),
        ("bwbasic", "greedy.bas", on_path("bwbasic")),
    ];
    let basic_rows: Vec<usize> = basics
        .iter()
        .map(|(name, bot, found)| {
            let row = rows.add(Row::new(
                format!(
                    "{name} {bot} vs itself, {} games, c=2 ({})",
                    basic_games(plan),
                    places[0].label
                ),
                Unit::Rate("games/s"),
            ));
            if let Err(why) = found {
                rows.fail(&[row], why);
            }
            row
        })
        .collect();
    let waiters: Vec<(&str, Result<Vec<String>, String>)> = vec![
        ("python", lib_command(&langs[0], scripts)),
        ("ruby", lib_command(&langs[1], scripts)),
        ("javascript", lib_command(&langs[2], scripts)),
        (
            "yabasic",
            basics[0].2.clone().map(|y| {
                vec![
                    y.display().to_string(),
                    scripts.join("greedy.yab").display().to_string(),
                ]
            }),
        ),
        (
            "bwbasic",
            basics[1].2.clone().map(|b| {
                vec![
                    b.display().to_string(),
                    scripts.join("greedy.bas").display().to_string(),
                ]
            }),
        ),
    ];
    let write_rows: Vec<(usize, usize)> = places
        .iter()
        .map(|place| {
            let plain = rows.add(Row::new(
                format!("answer write, O_TRUNC overwrite, p50 ({})", place.label),
                Unit::Micros,
            ));
            let fixed = rows.add(Row::new(
                format!("answer write, fixed-length in place, p50 ({})", place.label),
                Unit::Micros,
            ));
            (plain, fixed)
        })
        .collect();
    let window = wait_window(plan);
    let wait_rows: Vec<usize> = waiters
        .iter()
        .map(|(name, cmd)| {
            let row = rows.add(
                Row::new(
                    format!(
                        "{name} library waiting {} s for a move: CPU ({})",
                        window.as_secs(),
                        places[0].label
                    ),
                    Unit::Percent,
                )
                .target(Target::AtMost(1.0)),
            );
            if let Err(why) = cmd {
                rows.fail(&[row], why);
            }
            row
        })
        .collect();

    for rep in 1..=plan.reps {
        progress(&format!(
            "libraries, run {rep}/{}: {games} games per harness and language",
            plan.reps
        ));
        for (place, &(plain, fixed)) in places.iter().zip(&write_rows) {
            match answer_writes(&place.dir) {
                Ok((p, f)) => {
                    rows.push(plain, p);
                    rows.push(fixed, f);
                }
                Err(e) => rows.fail(&[plain, fixed], &err_line(&e)),
            }
        }
        for (lang, id) in langs.iter().zip(ids.iter_mut()) {
            let Ok(interp) = &lang.interpreter else {
                continue;
            };
            let mut arena_rate = f64::NAN;
            if id.arena_alive {
                let py = arena_python.as_ref().expect("checked");
                let bot = [
                    interp.display().to_string(),
                    scripts.join(lang.on_arena).display().to_string(),
                ];
                match arena(py, scripts, &bot, games) {
                    Ok(rate) => {
                        arena_rate = rate;
                        rows.push(id.arena, rate);
                    }
                    Err(e) => {
                        rows.fail(&[id.arena], &err_line(&e));
                        id.arena_alive = false;
                    }
                }
            }
            if !id.alive {
                continue;
            }
            let bot = Bot::Command(vec![
                interp.display().to_string(),
                scripts.join(lang.on_library).display().to_string(),
            ]);
            let runs = places
                .iter()
                .zip(&id.ours)
                .map(|(place, &ids)| (place, ids, true))
                .chain([(&places[0], id.files, false)]);
            for (place, (row, ratio), pipe) in runs {
                match tournament(&place.dir, &bot, games, pipe) {
                    Ok(rate) => {
                        rows.push(row, rate);
                        rows.push(ratio, rate / arena_rate);
                    }
                    Err(e) => {
                        rows.fail(&[row, ratio], &err_line(&e));
                        id.alive = false;
                    }
                }
            }
        }
        for ((_, script, found), &row) in basics.iter().zip(&basic_rows) {
            let Ok(interp) = found else { continue };
            if rows.0[row].missing.is_some() {
                continue;
            }
            let bot = Bot::Command(vec![
                interp.display().to_string(),
                scripts.join(script).display().to_string(),
            ]);
            match tournament(&places[0].dir, &bot, basic_games(plan), true) {
                Ok(rate) => rows.push(row, rate),
                Err(e) => rows.fail(&[row], &err_line(&e)),
            }
        }
        let commands: Vec<Option<&Vec<String>>> =
            waiters.iter().map(|(_, c)| c.as_ref().ok()).collect();
        match waiting_cpu(&places[0].dir, &commands, window) {
            Ok(pcts) => {
                for (&row, pct) in wait_rows.iter().zip(pcts) {
                    if let Some(p) = pct {
                        rows.push(row, p);
                    }
                }
            }
            Err(e) => rows.fail(&wait_rows, &err_line(&e)),
        }
    }
}

fn lib_command(lang: &Lang, scripts: &Path) -> Result<Vec<String>, String> {
    lang.interpreter.clone().map(|i| {
        vec![
            i.display().to_string(),
            scripts.join(lang.on_library).display().to_string(),
        ]
    })
}

/// The two ways a bot may write its answer, 2,000 times each, as the
/// libraries do it (open, one write, close): a plain overwrite with
/// `O_TRUNC`, and the 128-byte record written in place without truncating.
/// p50 of each, in µs.
fn answer_writes(root: &Path) -> anyhow::Result<(f64, f64)> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = sys::Scratch::new(root, "write")?;
    let path = dir.path().join("out.txt");
    let msg = b"alice\nreferee\n42\nd3\n";
    let mut record = msg.to_vec();
    record.resize(tournament::mailbox::OUT_RECORD, tournament::mailbox::PAD);
    let p50 = |truncate: bool, bytes: &[u8]| -> anyhow::Result<f64> {
        let mut samples = Vec::with_capacity(2000);
        for i in 0..2100 {
            let clock = Instant::now();
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(truncate)
                .mode(0o644)
                .open(&path)?;
            f.write_all(bytes)?;
            drop(f);
            if i >= 100 {
                samples.push(clock.elapsed().as_secs_f64() * 1e6);
            }
        }
        Ok(super::stats::percentile(&samples, 50.0).unwrap_or(f64::NAN))
    };
    let plain = p50(true, msg)?;
    let fixed = p50(false, &record)?;
    Ok((plain, fixed))
}

/// games/s of a two-player `tournament run` of `bot` against itself, c=2,
/// no openings, spawned sandboxed as users' bots are; offered the pipe, or
/// (`pipe` false) talking through the files only.
fn tournament(root: &Path, bot: &Bot, games: u32, pipe: bool) -> anyhow::Result<f64> {
    let dir = sys::Scratch::new(root, "lib")?;
    let o = tourney::run(
        dir.path(),
        &Setup {
            players: vec![("a".to_string(), bot), ("b".to_string(), bot)],
            games_per_pairing: games,
            concurrency: 2,
            openings: vec![],
            sandbox: true,
            previous_sandbox: false,
            pipe,
        },
        false,
    )?;
    Ok(o.games_per_second())
}

/// One Arena run of `games` games of `bot` against itself, timed around
/// the whole Python process (as a `tournament run` is timed): games/s.
fn arena(python: &Path, scripts: &Path, bot: &[String], games: u32) -> anyhow::Result<f64> {
    arena_run(python, scripts, bot, games).map(|(rate, _)| rate)
}

/// Runs `arena_peer.py` for `games` games (of `bot`, or its own bot when
/// empty): games/s around the process, and what the script printed.
pub(super) fn arena_run(
    python: &Path,
    scripts: &Path,
    bot: &[String],
    games: u32,
) -> anyhow::Result<(f64, serde_json::Value)> {
    let clock = Instant::now();
    let out = Command::new(python)
        .arg(scripts.join("arena_peer.py"))
        .arg(games.to_string())
        .args(bot)
        .stdin(Stdio::null())
        .output()
        .context("cannot start the Arena script")?;
    let seconds = clock.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "Arena script failed: {}",
            err.lines().last().unwrap_or("no output")
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).context("Arena output")?;
    let stats: Vec<u64> = serde_json::from_value(v["stats"].clone()).unwrap_or_default();
    if stats.iter().sum::<u64>() != u64::from(games) {
        bail!("the Arena played {stats:?}, not {games} games");
    }
    Ok((f64::from(games) / seconds, v))
}

/// A bot started by [`waiting_cpu`].
struct Running {
    child: Child,
    dir: PathBuf,
}

/// CPU time so far of `pid`: all its threads (the scheduler's nanosecond
/// counters) and the children it has waited for (bwBASIC's `sleep`s).
fn tree_cpu(pid: u32) -> Option<Duration> {
    let mut ns = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let text = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
        ns += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(") ")?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 16 and 17 of stat (cutime, cstime) are 13 and 14 after the name.
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_nanos(ns) + Duration::from_millis(ticks * 1000 / hz))
}

/// Starts every command in a mailbox of its own under `root` (its working
/// directory, and its first argument), gives it a NEW, and once it answered
/// READY and had a second to finish starting (node's worker thread, JIT),
/// a TURN; from its answer on measures its CPU over `window` while no
/// further message comes: the library waiting for an opponent that thinks.
/// One percentage per command (None where there is no command).
fn waiting_cpu(
    root: &Path,
    commands: &[Option<&Vec<String>>],
    window: Duration,
) -> anyhow::Result<Vec<Option<f64>>> {
    let scratch = sys::Scratch::new(root, "waiting")?;
    let mut running: Vec<Option<Running>> = Vec::new();
    let result = (|| -> anyhow::Result<Vec<Option<f64>>> {
        for (k, cmd) in commands.iter().enumerate() {
            let Some(cmd) = cmd else {
                running.push(None);
                continue;
            };
            let dir = scratch.path().join(format!("w{k}"));
            std::fs::create_dir_all(&dir)?;
            let child = Command::new(&cmd[0])
                .args(&cmd[1..])
                .arg(&dir)
                .current_dir(&dir)
                .env("TOURNAMENT_MAILBOX", &dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .with_context(|| format!("cannot start {}", cmd.join(" ")))?;
            let msg = format!("referee\nw{k}\n1\nNEW bench-wait black slow 8 5000\n");
            std::fs::write(dir.join(".in.tmp"), msg)?;
            std::fs::rename(dir.join(".in.tmp"), dir.join("in.txt"))?;
            running.push(Some(Running { child, dir }));
        }
        answered(&mut running, "\n1\nREADY\n")?;
        std::thread::sleep(Duration::from_secs(1));
        for (k, r) in running.iter().enumerate() {
            let Some(r) = r else { continue };
            let msg = format!(
                "referee\nw{k}\n2\nTURN black {} none 5000\n",
                tournament::game::board_string(&tournament::game::Position::start(8))
            );
            std::fs::write(r.dir.join(".in.tmp"), msg)?;
            std::fs::rename(r.dir.join(".in.tmp"), r.dir.join("in.txt"))?;
        }
        answered(&mut running, "\n2\n")?;
        let before: Vec<Option<Duration>> = running
            .iter()
            .map(|r| r.as_ref().and_then(|r| tree_cpu(r.child.id())))
            .collect();
        let clock = Instant::now();
        std::thread::sleep(window);
        let wall = clock.elapsed().as_secs_f64();
        Ok(running
            .iter()
            .zip(before)
            .map(|(r, b)| {
                let after = tree_cpu(r.as_ref()?.child.id())?;
                Some((after - b?).as_secs_f64() / wall * 100.0)
            })
            .collect())
    })();
    for r in running.iter_mut().flatten() {
        let _ = r.child.kill();
        let _ = r.child.wait();
    }
    result
}

/// Waits until every running bot's out.txt holds `answer` (within 20 s).
fn answered(running: &mut [Option<Running>], answer: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    for r in running.iter_mut().flatten() {
        loop {
            let out = std::fs::read(r.dir.join("out.txt")).unwrap_or_default();
            if String::from_utf8_lossy(&out).contains(answer) {
                break;
            }
            if let Some(status) = r.child.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = r.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                bail!(
                    "a waiting bot ended ({status}): {}",
                    err.lines().last().unwrap_or("")
                );
            }
            if Instant::now() > deadline {
                bail!("no answer in {} within 20 s", r.dir.display());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    Ok(())
}
