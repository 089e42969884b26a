//! `tournament-bench`: the harness measured, as one table. Hand-off latency
//! against a pipe, whole-tournament throughput (beside rust-reversi's Arena
//! running the same Python bot), the shipped bot libraries beside the Arena
//! in their own languages, the referee's idle cost, the rules engine, and
//! memory and crosstable time at scale.
//!
//! Owns the measurements and their presentation. Changes nothing outside
//! its scratch folders (and a cached virtualenv for the peer harness).
//! A missed target is a result, not an error.

mod handoff;
mod libraries;
mod python;
mod sandbox_cost;
mod shares;
mod siege;
pub mod stats;
mod swiss;
mod sys;
pub mod table;
mod tourney;
mod viewers;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use tournament::game::{perft, Position, PUBLISHED_8X8};
use tournament::player::{Instance, Launch, PlayerSpec, Restart};
use tournament::results::{read_records, read_summaries, GAMES_FILE};

pub use table::{Row, Target, Unit};
use tourney::{Bot, Setup};

/// The `tournament` binary the throughput rows run: `$TOURNAMENT_BIN`, else
/// the one built beside this bench (`cargo build --release`).
pub fn tournament_binary() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("TOURNAMENT_BIN") {
        return Ok(PathBuf::from(path));
    }
    let me = std::env::current_exe().context("cannot find the bench's own binary")?;
    let beside = me.with_file_name("tournament");
    if !beside.is_file() {
        bail!(
            "no `tournament` binary beside {} (build both: cargo build --release; \
             or name one in TOURNAMENT_BIN)",
            me.display()
        );
    }
    Ok(beside)
}

/// How much of everything: `--quick` is a first look in under 30 s.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub quick: bool,
    pub reps: usize,
    pub handoff_moves: usize,
    pub pipe_trips: usize,
    pub builtin_games: u32,
    pub python_games: u32,
    pub idle_moves: usize,
    pub perft_depth: u32,
    pub scale_players: usize,
    pub scale_reps: usize,
    pub scale_opening_plies: usize,
    pub crosstable_games: usize,
    pub crosstable_reps: usize,
    /// Games of each run of the live page's row.
    pub viewer_games: u32,
}

impl Plan {
    pub fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                quick,
                reps: 3,
                handoff_moves: 2_000,
                pipe_trips: 2_000,
                builtin_games: 24,
                python_games: 16,
                idle_moves: 3,
                perft_depth: 11,
                scale_players: 64,
                scale_reps: 1,
                scale_opening_plies: 56,
                crosstable_games: 100_000,
                crosstable_reps: 1,
                viewer_games: 600,
            }
        } else {
            Plan {
                quick,
                reps: 5,
                handoff_moves: 10_000,
                pipe_trips: 10_000,
                builtin_games: 100,
                python_games: 100,
                idle_moves: 10,
                perft_depth: 12,
                scale_players: 64,
                scale_reps: 3,
                scale_opening_plies: 50,
                crosstable_games: 100_000,
                crosstable_reps: 3,
                viewer_games: 1000,
            }
        }
    }
}

/// Where mailboxes go: a label (`ext4 /tmp`) and the folder.
#[derive(Clone, Debug)]
struct Place {
    label: String,
    dir: PathBuf,
}

fn places() -> Vec<Place> {
    let temp = std::env::temp_dir();
    let temp_fs = sys::fs_type(&temp);
    let mut out = vec![Place {
        label: format!("{temp_fs} {}", temp.display()),
        dir: temp.clone(),
    }];
    let shm = Path::new("/dev/shm");
    if temp_fs != "tmpfs" && shm.is_dir() && sys::fs_type(shm) == "tmpfs" {
        out.push(Place {
            label: "tmpfs /dev/shm".into(),
            dir: shm.to_path_buf(),
        });
    }
    out
}

/// The rows so far, with a way to fill them.
#[derive(Default)]
struct Rows(Vec<Row>);

impl Rows {
    fn add(&mut self, row: Row) -> usize {
        self.0.push(row);
        self.0.len() - 1
    }
    fn push(&mut self, i: usize, v: f64) {
        if v.is_finite() {
            self.0[i].values.push(v);
        }
    }
    fn fail(&mut self, rows: &[usize], why: &str) {
        for &i in rows {
            if self.0[i].missing.is_none() {
                self.0[i].missing = Some(why.to_string());
            }
        }
    }
}

/// `TOURNAMENT_BENCH_ONLY=handoff,perft` runs only those sections (for
/// profiling one of them); unset, all: handoff, throughput, libraries, idle,
/// sandbox, perft, scale, serve, siege, shares, swiss, swiss-event.
fn wanted(section: &str) -> bool {
    match std::env::var("TOURNAMENT_BENCH_ONLY") {
        Ok(list) if !list.trim().is_empty() => list.split(',').any(|s| s.trim() == section),
        _ => true,
    }
}

fn progress(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let t = START.get_or_init(Instant::now).elapsed().as_secs_f64();
    eprintln!("bench [{t:5.1} s] {what}");
}

fn err_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

/// Runs the bench, prints the table, and returns how many targets were
/// missed.
pub fn run(quick: bool) -> anyhow::Result<usize> {
    let plan = Plan::new(quick);
    // Built-in bots and sandbox wardens are started from the tournament
    // binary, not from this one.
    tournament::program::set(tournament_binary()?);
    let started = Instant::now();
    progress(if quick { "quick run" } else { "full run" });
    let places = places();
    let temp = &places[0];
    let mut rows = Rows::default();
    let mut notes: Vec<String> = Vec::new();

    let scripts_dir = sys::Scratch::new(&temp.dir, "scripts")?;
    python::write_scripts(scripts_dir.path()).context("writing the bench scripts")?;
    libraries::write_files(scripts_dir.path()).context("writing the library bots")?;
    let scripts = scripts_dir.path();

    // Python first (the peer harness may need a pip install): every later
    // row is measured with the same interpreter for both harnesses.
    let venv = if wanted("throughput") || wanted("idle") || wanted("libraries") {
        progress("looking for Python and rust-reversi");
        python::venv_with_rust_reversi()
    } else {
        Err(anyhow::anyhow!("not needed"))
    };
    let python: Result<PathBuf, String> = match (&venv, python::system_python()) {
        (Ok(p), _) => Ok(p.clone()),
        (Err(_), Some(p)) => Ok(p),
        (Err(e), None) => Err(err_line(e)),
    };

    if wanted("handoff") {
        handoff_rows(&plan, &places, &mut rows);
    }
    if wanted("throughput") {
        throughput_rows(
            &plan,
            &places,
            scripts,
            &python,
            venv.as_ref().map_err(err_line),
            &mut rows,
            &mut notes,
        );
    }
    if wanted("libraries") {
        libraries::rows(
            &plan,
            &places,
            scripts,
            venv.as_ref().map_err(err_line),
            &mut rows,
        );
    }
    if wanted("idle") {
        idle_row(&plan, temp, scripts, &python, &mut rows);
    }
    if wanted("sandbox") {
        sandbox_cost::rows(&plan, temp, scripts, &python, &mut rows);
    }
    if wanted("perft") {
        perft_rows(&plan, &mut rows);
    }
    if wanted("scale") {
        // --quick plays the round robin where it is fastest (on this
        // project's machines a journal-less ext4 /tmp takes 4× longer).
        let place = if quick { places.last() } else { places.first() };
        scale_rows(&plan, place.expect("one place"), &mut rows, &mut notes);
    }

    if wanted("serve") {
        viewer_rows(&plan, temp, &mut rows, &mut notes);
    }
    if wanted("siege") {
        siege_rows(&plan, temp, scripts, &mut rows, &mut notes);
    }
    if wanted("shares") {
        shares::rows(&plan, temp, &mut rows);
    }
    if wanted("swiss") {
        swiss::pairing_rows(&plan, &mut rows);
    }
    if wanted("swiss-event") {
        swiss::event_rows(&plan, temp, &mut rows);
    }

    let rows = rows.0;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "tournament-bench — {} — {}; temp folder {}",
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
        sys::machine(),
        temp.label
    )?;
    writeln!(
        out,
        "command: tournament-bench{}   ({} runs per row, {} of the round robin, {} of the big crosstable; median and min–max; took {:.0} s)",
        if quick { " --quick" } else { "" },
        plan.reps,
        plan.scale_reps,
        plan.crosstable_reps,
        started.elapsed().as_secs_f64()
    )?;
    for line in table::render(&rows) {
        writeln!(out, "{line}")?;
    }
    let missed: Vec<&str> = rows
        .iter()
        .filter(|r| r.ok() == Some(false))
        .map(|r| r.name.as_str())
        .collect();
    let judged = rows.iter().filter(|r| r.ok().is_some()).count();
    writeln!(
        out,
        "targets: {} of {judged} met{}",
        judged - missed.len(),
        if missed.is_empty() {
            String::new()
        } else {
            format!("; missed: {}", missed.join(", "))
        }
    )?;
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    Ok(missed.len())
}

/// Row 1: hand-off p50/p99 on each place, and the pipe beside it.
fn handoff_rows(plan: &Plan, places: &[Place], rows: &mut Rows) {
    let pipe50 = rows.add(Row::new(
        "pipe round trip p50 (cat, same core)",
        Unit::Micros,
    ));
    let pipe99 = rows.add(Row::new(
        "pipe round trip p99 (cat, same core)",
        Unit::Micros,
    ));
    let free50 = rows.add(Row::new(
        "pipe round trip p50 (cat, cores as scheduled)",
        Unit::Micros,
    ));
    // Each place through the files, and the pipe (its first message goes
    // through the temp folder's files, the timed ones through the pipe).
    let mut ways: Vec<(String, &Path, bool)> = places
        .iter()
        .map(|p| (format!("files, {}", p.label), p.dir.as_path(), false))
        .collect();
    if let Some(first) = places.first() {
        ways.push(("pipe".to_string(), first.dir.as_path(), true));
    }
    let mut per_place = Vec::new();
    for p in ways {
        let label = &p.0;
        let p50 = rows.add(
            Row::new(format!("hand-off p50 ({})", label), Unit::Micros)
                .target(Target::AtMost(100.0)),
        );
        let p99 = rows.add(
            Row::new(format!("hand-off p99 ({})", label), Unit::Micros)
                .target(Target::AtMost(1000.0)),
        );
        let ratio = rows.add(
            Row::new(format!("hand-off p50 ÷ pipe p50 ({})", label), Unit::Ratio)
                .target(Target::AtMost(10.0)),
        );
        let mean = rows.add(Row::new(format!("hand-off mean ({})", label), Unit::Micros));
        let referee = rows.add(Row::new("  of which referee CPU", Unit::Micros));
        let bot = rows.add(Row::new("  of which bot CPU", Unit::Micros));
        let written = if p.2 {
            "write to the pipe"
        } else {
            "write of in.txt"
        };
        let send = rows.add(Row::new(
            format!("  referee's {written}, p50"),
            Unit::Micros,
        ));
        let switches = rows.add(Row::new("  context switches per move", Unit::Plain));
        per_place.push((
            p,
            [p50, p99, ratio, mean, referee, bot, send, switches],
            true,
        ));
    }
    for rep in 1..=plan.reps {
        progress(&format!(
            "hand-off, run {rep}/{}: {} moves per place",
            plan.reps, plan.handoff_moves
        ));
        let pipe = match handoff::pipe_round_trip(plan.pipe_trips, true) {
            Ok(l) => {
                rows.push(pipe50, l.p50);
                rows.push(pipe99, l.p99);
                Some(l)
            }
            Err(e) => {
                rows.fail(&[pipe50, pipe99], &err_line(&e));
                None
            }
        };
        match handoff::pipe_round_trip(plan.pipe_trips, false) {
            Ok(l) => rows.push(free50, l.p50),
            Err(e) => rows.fail(&[free50], &err_line(&e)),
        }
        for (p, ids, alive) in per_place.iter_mut() {
            if !*alive {
                continue;
            }
            let [p50, p99, ratio, mean, referee, bot, send, switches] = *ids;
            match handoff::handoff(p.1, plan.handoff_moves, p.2) {
                Ok(h) => {
                    rows.push(p50, h.latency.p50);
                    rows.push(p99, h.latency.p99);
                    match pipe {
                        Some(pipe) => rows.push(ratio, h.latency.p50 / pipe.p50),
                        None => rows.fail(&[ratio], "no pipe measurement"),
                    }
                    rows.push(mean, h.mean);
                    rows.push(referee, h.referee_cpu);
                    rows.push(bot, h.bot_cpu);
                    rows.push(send, h.send_p50);
                    rows.push(switches, h.switches);
                }
                Err(e) => {
                    rows.fail(ids, &err_line(&e));
                    *alive = false;
                }
            }
        }
    }
}

/// Row 2: games per second of whole `tournament run`s, and the peer.
fn throughput_rows(
    plan: &Plan,
    places: &[Place],
    scripts: &Path,
    python: &Result<PathBuf, String>,
    venv: Result<&PathBuf, String>,
    rows: &mut Rows,
    notes: &mut Vec<String>,
) {
    let random = Bot::Builtin("random");
    let pair = |bot| vec![("a".to_string(), bot), ("b".to_string(), bot)];
    let py_bot = python.as_ref().ok().map(|py| {
        Bot::Command(vec![
            py.display().to_string(),
            scripts.join("mailbox_bot.py").display().to_string(),
        ])
    });

    struct Series<'a> {
        row: usize,
        place: &'a Place,
        bot: Option<&'a Bot>,
        concurrency: u32,
        games: u32,
        alive: bool,
    }
    let mut series: Vec<Series<'_>> = Vec::new();
    for (pi, place) in places.iter().enumerate() {
        // Every concurrency on the temp folder; only 2 on the others.
        let concurrencies: &[u32] = if pi == 0 { &[1, 2] } else { &[2] };
        for &c in concurrencies {
            let mut row = Row::new(
                format!("built-in random, c={c} ({})", place.label),
                Unit::Rate("games/s"),
            );
            if c == 2 {
                row = row.target(Target::AtLeast(100.0));
            }
            series.push(Series {
                row: rows.add(row),
                place,
                bot: Some(&random),
                concurrency: c,
                games: plan.builtin_games,
                alive: true,
            });
        }
    }
    let arena_row = rows.add(Row::new(
        "python bot, rust-reversi Arena (pipes)",
        Unit::Rate("games/s"),
    ));
    let mut ratio_rows = Vec::new();
    for (pi, place) in places.iter().enumerate() {
        let concurrencies: &[u32] = if pi == 0 { &[1, 2] } else { &[2] };
        for &c in concurrencies {
            let row = rows.add(Row::new(
                format!("python bot, ours c={c} ({})", place.label),
                Unit::Rate("games/s"),
            ));
            let mut ratio = Row::new(
                format!("python bot, ours c={c} ÷ Arena ({})", place.label),
                Unit::Ratio,
            );
            if c == 2 {
                ratio = ratio.target(Target::AtLeast(1.0));
            }
            ratio_rows.push((rows.add(ratio), series.len()));
            series.push(Series {
                row,
                place,
                bot: py_bot.as_ref(),
                concurrency: c,
                games: plan.python_games,
                alive: true,
            });
        }
    }
    if let Err(why) = python {
        let all: Vec<usize> = series
            .iter()
            .filter(|s| s.games == plan.python_games && s.bot.is_none())
            .map(|s| s.row)
            .collect();
        rows.fail(&all, why);
    }
    let mut arena_alive = true;
    if let Err(why) = &venv {
        rows.fail(&[arena_row], why);
        arena_alive = false;
    }

    for rep in 1..=plan.reps {
        progress(&format!(
            "throughput, run {rep}/{}: tournaments of {} built-in and {} Python games",
            plan.reps, plan.builtin_games, plan.python_games
        ));
        let mut rates = vec![f64::NAN; series.len()];
        for (k, s) in series.iter_mut().enumerate() {
            let Some(bot) = s.bot else { continue };
            if !s.alive {
                continue;
            }
            let result = sys::Scratch::new(&s.place.dir, "run")
                .map_err(anyhow::Error::from)
                .and_then(|dir| {
                    tourney::run(
                        dir.path(),
                        &Setup {
                            players: pair(bot),
                            games_per_pairing: s.games,
                            concurrency: s.concurrency,
                            openings: vec![],
                            sandbox: true,
                            previous_sandbox: false,
                            pipe: true,
                        },
                        false,
                    )
                });
            match result {
                Ok(o) => {
                    rates[k] = o.games_per_second();
                    rows.push(s.row, rates[k]);
                }
                Err(e) => {
                    rows.fail(&[s.row], &err_line(&e));
                    s.alive = false;
                }
            }
        }
        let mut arena_rate = f64::NAN;
        if arena_alive {
            match arena(venv.as_ref().expect("checked"), scripts, plan.python_games) {
                Ok((rate, inside)) => {
                    arena_rate = rate;
                    rows.push(arena_row, rate);
                    if rep == 1 {
                        notes.push(format!(
                            "Arena: {} games took {:.2} s inside play_n() ({:.0} games/s); the row times the whole Python process, as the ours rows time the whole `tournament run`",
                            plan.python_games,
                            f64::from(plan.python_games) / inside,
                            inside
                        ));
                    }
                }
                Err(e) => {
                    rows.fail(&[arena_row], &err_line(&e));
                    arena_alive = false;
                }
            }
        }
        for &(ratio_row, k) in &ratio_rows {
            if arena_rate.is_finite() && rates[k].is_finite() {
                rows.push(ratio_row, rates[k] / arena_rate);
            }
        }
    }
    for &(ratio_row, k) in &ratio_rows {
        let why = rows.0[series[k].row].missing.clone();
        let arena_why = rows.0[arena_row].missing.clone();
        if let Some(w) = why.or(arena_why) {
            rows.fail(&[ratio_row], &w);
        }
    }
}

/// One Arena run of `games` games: (games/s timed around the process,
/// rate inside `play_n`).
fn arena(python: &Path, scripts: &Path, games: u32) -> anyhow::Result<(f64, f64)> {
    let (rate, v) = libraries::arena_run(python, scripts, &[], games)?;
    let inside = v["play_n_seconds"].as_f64().unwrap_or(f64::NAN);
    Ok((rate, f64::from(games) / inside))
}

/// Row 3: the referee's CPU while a bot thinks 200 ms per move.
fn idle_row(
    plan: &Plan,
    place: &Place,
    scripts: &Path,
    python: &Result<PathBuf, String>,
    rows: &mut Rows,
) {
    let row = rows.add(
        Row::new(
            format!("idle: referee CPU, bot 200 ms/move ({})", place.label),
            Unit::Percent,
        )
        .target(Target::AtMost(1.0)),
    );
    let python = match python {
        Ok(p) => p,
        Err(why) => return rows.fail(&[row], why),
    };
    for rep in 1..=plan.reps {
        progress(&format!(
            "idle cost, run {rep}/{}: {} moves of 200 ms",
            plan.reps, plan.idle_moves
        ));
        match idle_once(&place.dir, python, scripts, plan.idle_moves) {
            Ok(pct) => rows.push(row, pct),
            Err(e) => return rows.fail(&[row], &err_line(&e)),
        }
    }
}

fn idle_once(root: &Path, python: &Path, scripts: &Path, moves: usize) -> anyhow::Result<f64> {
    let scratch = sys::Scratch::new(root, "idle")?;
    let spec = Arc::new(PlayerSpec {
        name: "slow".into(),
        launch: Launch::Command(vec![
            python.display().to_string(),
            scripts.join("mailbox_bot.py").display().to_string(),
            "--delay-ms".into(),
            "200".into(),
        ]),
        restart: Restart::Reuse,
        base_dir: scratch.path().to_path_buf(),
        seed: 1,
        board_as: None,
        sandbox: Default::default(),
        protocol: Default::default(),
        engine: Default::default(),
        pipe: true,
        workdir: None,
    });
    let board = scratch.path().join("board");
    std::fs::create_dir_all(&board)?;
    let mut bot = Instance::new(spec, &board, 1)?;
    bot.prepare(tracing::Span::none())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let deadline = || Instant::now() + Duration::from_secs(10);
    bot.exchange(&handoff::new_request("bench-idle"), deadline())
        .map_err(|e| anyhow::anyhow!("the slow bot did not start: {e}"))?;
    let turn = handoff::turn_request();
    let cpu = sys::cpu_time();
    let clock = Instant::now();
    for _ in 0..moves {
        bot.exchange(&turn, deadline())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let wall = clock.elapsed().as_secs_f64();
    let used = (sys::cpu_time() - cpu).as_secs_f64();
    Ok(used / wall * 100.0)
}

/// Row 4: perft from the start position, one core.
fn perft_rows(plan: &Plan, rows: &mut Rows) {
    let d = plan.perft_depth;
    let expected = PUBLISHED_8X8[d as usize - 1] as f64;
    // perft(12) must take ≤ 10 s: at another depth, the same speed.
    let limit = 10.0 * expected / PUBLISHED_8X8[11] as f64;
    let count = rows
        .add(Row::new(format!("perft({d}) leaves"), Unit::Count).target(Target::Exactly(expected)));
    let time = rows.add(
        Row::new(format!("perft({d}) time, one core"), Unit::Seconds).target(Target::AtMost(limit)),
    );
    let speed = rows.add(Row::new(
        format!("perft({d}) speed"),
        Unit::MegaRate("leaves/s"),
    ));
    for rep in 1..=plan.reps {
        progress(&format!("perft({d}), run {rep}/{}", plan.reps));
        let clock = Instant::now();
        let leaves = perft(&Position::start(8), d);
        let secs = clock.elapsed().as_secs_f64();
        rows.push(count, leaves as f64);
        rows.push(time, secs);
        rows.push(speed, leaves as f64 / secs / 1e6);
    }
}

/// Row 6: the live page's cost to the referee: built-in bots, c=2, by
/// `run` alone and by `run --serve` with 100 viewers on its event stream.
fn viewer_rows(plan: &Plan, place: &Place, rows: &mut Rows, notes: &mut Vec<String>) {
    let n = viewers::VIEWERS;
    let games = plan.viewer_games;
    let alone = rows.add(Row::new(
        format!(
            "live page: {games} built-in games, c=2, no page ({})",
            place.label
        ),
        Unit::Rate("games/s"),
    ));
    let watched = rows.add(Row::new(
        format!("live page: the same with run --serve + {n} SSE viewers"),
        Unit::Rate("games/s"),
    ));
    let ratio = rows.add(
        Row::new(format!("live page: {n} viewers ÷ none"), Unit::Ratio)
            .target(Target::AtLeast(0.9)),
    );
    let pushed = rows.add(Row::new("  snapshots each viewer received", Unit::Plain));
    let cpu_alone = rows.add(Row::new(
        "live page: CPU of run + its bots per game, no page",
        Unit::Millis,
    ));
    let cpu_watched = rows.add(Row::new(
        format!("live page: the same with run --serve + {n} SSE viewers"),
        Unit::Millis,
    ));
    let cpu_ratio = rows.add(Row::new(
        format!("live page: CPU per game, {n} viewers ÷ none"),
        Unit::Ratio,
    ));
    let random = Bot::Builtin("random");
    let setup = Setup {
        players: vec![("a".to_string(), &random), ("b".to_string(), &random)],
        games_per_pairing: games,
        concurrency: 2,
        openings: vec![],
        sandbox: true,
        previous_sandbox: false,
        pipe: true,
    };
    for rep in 1..=plan.reps {
        progress(&format!(
            "live page, run {rep}/{}: {games} games without, then with {n} viewers",
            plan.reps
        ));
        let mut rate = [f64::NAN; 2];
        let mut cpu = [f64::NAN; 2];
        for (k, page) in [false, true].into_iter().enumerate() {
            let result = sys::Scratch::new(&place.dir, "viewers")
                .map_err(anyhow::Error::from)
                .and_then(|dir| viewers::measure(dir.path(), &setup, page));
            match result {
                Ok(m) => {
                    rate[k] = m.rate;
                    cpu[k] = m.cpu_ms_per_game;
                    rows.push(if page { watched } else { alone }, m.rate);
                    rows.push(
                        if page { cpu_watched } else { cpu_alone },
                        m.cpu_ms_per_game,
                    );
                    if page {
                        let mut s = m.snapshots;
                        s.sort_unstable();
                        rows.push(pushed, s[s.len() / 2] as f64);
                    }
                }
                Err(e) => {
                    let why = err_line(&e);
                    notes.push(format!("live page, run {rep}: {why}"));
                    let cpu_row = if page { cpu_watched } else { cpu_alone };
                    rows.fail(
                        &[
                            if page { watched } else { alone },
                            ratio,
                            pushed,
                            cpu_row,
                            cpu_ratio,
                        ],
                        &why,
                    );
                }
            }
        }
        rows.push(ratio, rate[1] / rate[0]);
        rows.push(cpu_ratio, cpu[1] / cpu[0]);
    }
}

/// Row 7: what a siege of the live page costs the games: Python bots of
/// 150 ms a move (70 ms CPU) under `run --serve`, without visitors and
/// with stalled connections and slow readers of a 4 MB log (`siege`).
fn siege_rows(
    plan: &Plan,
    place: &Place,
    scripts: &Path,
    rows: &mut Rows,
    notes: &mut Vec<String>,
) {
    let games = siege::GAMES;
    let under = format!(
        "+ {} stalled heads + {} slow readers of a 4 MB log",
        siege::STALLED,
        siege::READERS
    );
    let rate = [
        rows.add(Row::new(
            format!(
                "live page siege: {games} games of 150 ms bots (70 ms CPU), c=2, run --serve, no visitors ({})",
                place.label
            ),
            Unit::Rate("games/s"),
        )),
        rows.add(Row::new(format!("live page siege: the same {under}"), Unit::Rate("games/s"))),
    ];
    let p95 = [
        rows.add(Row::new(
            "  moves' 95th percentile, no visitors",
            Unit::Millis,
        )),
        rows.add(Row::new(
            "  moves' 95th percentile, under siege",
            Unit::Millis,
        )),
    ];
    let slowest = [
        rows.add(Row::new("  slowest move, no visitors", Unit::Millis)),
        rows.add(Row::new("  slowest move, under siege", Unit::Millis)),
    ];
    let cpu = [
        rows.add(Row::new(
            "  referee's own CPU per game, no visitors",
            Unit::Millis,
        )),
        rows.add(Row::new(
            "  referee's own CPU per game, under siege",
            Unit::Millis,
        )),
    ];
    let lost = [
        rows.add(
            Row::new("  games forfeited, no visitors", Unit::Count).target(Target::Exactly(0.0)),
        ),
        rows.add(
            Row::new("  games forfeited, under siege", Unit::Count).target(Target::Exactly(0.0)),
        ),
    ];
    let rss = [
        rows.add(Row::new("  referee peak RSS, no visitors", Unit::MiB)),
        rows.add(
            Row::new("  referee peak RSS, under siege", Unit::MiB).target(Target::AtMost(64.0)),
        ),
    ];
    for rep in 1..=plan.reps.min(3) {
        for (k, besieged) in [false, true].into_iter().enumerate() {
            progress(&format!(
                "live page siege, run {rep}/{}: {games} games {}",
                plan.reps.min(3),
                if besieged {
                    "under siege"
                } else {
                    "without visitors"
                }
            ));
            let result = sys::Scratch::new(&place.dir, "siege")
                .map_err(anyhow::Error::from)
                .and_then(|dir| siege::measure(dir.path(), scripts, besieged));
            match result {
                Ok(m) => {
                    rows.push(rate[k], m.rate);
                    rows.push(p95[k], m.p95_move_ms);
                    rows.push(slowest[k], m.max_move_ms);
                    rows.push(cpu[k], m.referee_cpu_ms_per_game);
                    rows.push(lost[k], m.forfeits as f64);
                    rows.push(rss[k], m.peak_rss_mib);
                }
                Err(e) => {
                    let why = err_line(&e);
                    notes.push(format!("live page siege, run {rep}: {why}"));
                    rows.fail(
                        &[rate[k], p95[k], slowest[k], cpu[k], lost[k], rss[k]],
                        &why,
                    );
                }
            }
        }
    }
}

/// Row 5: a 64-player round robin of built-in bots (peak memory), and the
/// crosstable of its results and of 100,000 games.
fn scale_rows(plan: &Plan, place: &Place, rows: &mut Rows, notes: &mut Vec<String>) {
    let n = plan.scale_players;
    let games = n * (n - 1) / 2;
    let label = format!("{n}-player round robin ({})", place.label);
    let rss = rows.add(
        Row::new(format!("{label}: referee peak RSS"), Unit::MiB).target(Target::AtMost(50.0)),
    );
    let tree = rows.add(Row::new(
        format!("{label}: referee + bots, peak PSS sum"),
        Unit::MiB,
    ));
    let wall = rows.add(Row::new(
        format!("{label}: {games} games, wall time"),
        Unit::Seconds,
    ));
    let small = rows.add(Row::new(
        format!("crosstable of those {games} games"),
        Unit::Millis,
    ));
    let big = rows.add(
        Row::new(
            format!(
                "crosstable of {} games (read + compute)",
                table::thousands(plan.crosstable_games as u64)
            ),
            Unit::Millis,
        )
        .target(Target::AtMost(1000.0)),
    );
    let big_compute = rows.add(Row::new(
        format!(
            "crosstable of {} games (compute only)",
            table::thousands(plan.crosstable_games as u64)
        ),
        Unit::Millis,
    ));
    let big_replay = rows.add(Row::new(
        format!(
            "  of which the rules' replay of {} records (issue 26)",
            table::thousands(plan.crosstable_games as u64)
        ),
        Unit::Millis,
    ));
    let names: Vec<String> = (1..=n).map(|i| format!("p{i:02}")).collect();
    let random = Bot::Builtin("random");
    let opening = tourney::near_end_opening(plan.scale_opening_plies);
    let mut kept: Option<sys::Scratch> = None;
    for rep in 1..=plan.scale_reps {
        progress(&format!(
            "scale, run {rep}/{}: {label}, {games} games from a {}-ply opening",
            plan.scale_reps,
            opening.len() / 2
        ));
        let result = sys::Scratch::new(&place.dir, "scale")
            .map_err(anyhow::Error::from)
            .and_then(|dir| {
                let o = tourney::run(
                    dir.path(),
                    &Setup {
                        players: names.iter().map(|p| (p.clone(), &random)).collect(),
                        games_per_pairing: 1,
                        concurrency: 2,
                        openings: vec![opening.clone()],
                        sandbox: true,
                        previous_sandbox: false,
                        pipe: true,
                    },
                    true,
                )?;
                Ok((dir, o))
            });
        match result {
            Ok((dir, o)) => {
                let peak = o.sampled.unwrap_or_default();
                let own = if peak.own_hwm_kib > 0 {
                    peak.own_hwm_kib
                } else {
                    o.maxrss_kib
                };
                rows.push(rss, own as f64 / 1024.0);
                rows.push(tree, peak.tree_pss_kib as f64 / 1024.0);
                rows.push(wall, o.seconds);
                if rep == 1 {
                    notes.push(format!(
                        "{label}: up to {} bot processes alive at once; wait4 peak RSS {:.1} MiB (the referee or its largest bot)",
                        peak.descendants,
                        o.maxrss_kib as f64 / 1024.0
                    ));
                }
                kept = Some(dir);
            }
            Err(e) => {
                rows.fail(
                    &[rss, tree, wall, small, big, big_compute, big_replay],
                    &err_line(&e),
                );
                return;
            }
        }
    }
    let Some(dir) = kept else { return };
    let games_file = dir.path().join("results").join(GAMES_FILE);
    for rep in 1..=plan.crosstable_reps {
        progress(&format!(
            "crosstable, run {rep}/{}: {} games",
            plan.crosstable_reps, plan.crosstable_games
        ));
        match crosstable_times(&games_file, &names, plan.crosstable_games) {
            Ok(t) => {
                rows.push(small, t.small * 1e3);
                rows.push(big, t.big_total * 1e3);
                rows.push(big_compute, t.big_compute * 1e3);
                rows.push(big_replay, t.big_replay * 1e3);
            }
            Err(e) => {
                rows.fail(&[small, big, big_compute, big_replay], &err_line(&e));
                return;
            }
        }
    }
}

struct CrosstableTimes {
    small: f64,
    big_total: f64,
    big_compute: f64,
    /// `GameRecord::check` of as many records, what reading adds to each.
    big_replay: f64,
}

/// Times the crosstable of `games_file` (read + compute), then of its
/// records repeated to `total` games (written to a file first, untimed).
fn crosstable_times(
    games_file: &Path,
    names: &[String],
    total: usize,
) -> anyhow::Result<CrosstableTimes> {
    use std::io::BufWriter;
    let clock = Instant::now();
    let records = read_summaries(games_file)?;
    let table = tournament::rating::crosstable(&records, names);
    let small = clock.elapsed().as_secs_f64();
    if table.games != records.len() || records.is_empty() {
        bail!(
            "the crosstable counted {} of {} games",
            table.games,
            records.len()
        );
    }
    let dir = games_file.parent().context("no results folder")?;
    let big_file = dir.join("big-games.jsonl");
    // The big file holds whole records, moves and all, as a run writes them.
    let full = read_records(games_file)?;
    {
        let mut w = BufWriter::new(std::fs::File::create(&big_file)?);
        for k in 0..total {
            let mut r = full[k % full.len()].clone();
            r.id = format!("{}.{k}", r.id);
            serde_json::to_writer(&mut w, &r)?;
            w.write_all(b"\n")?;
        }
        w.flush()?;
    }
    let clock = Instant::now();
    for k in 0..total {
        if let Err(e) = full[k % full.len()].check() {
            bail!(
                "record {} refused by the rules' replay: {e}",
                full[k % full.len()].id
            );
        }
    }
    let replay = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let big = read_summaries(&big_file)?;
    let read = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let table = tournament::rating::crosstable(&big, names);
    let compute = clock.elapsed().as_secs_f64();
    std::fs::remove_file(&big_file)?;
    if table.games != total {
        bail!("the crosstable counted {} of {total} games", table.games);
    }
    Ok(CrosstableTimes {
        small,
        big_total: read + compute,
        big_compute: compute,
        big_replay: replay,
    })
}
