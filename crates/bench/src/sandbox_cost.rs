//! What the bots' sandbox costs: a bot's start (spawn to READY) and a
//! whole tournament's games/s, sandbox off, with the layers from before
//! each bot was alone (`TOURNAMENT_BENCH_PREVIOUS_SANDBOX`), and on, in
//! one run.
//!
//! Owns only these rows; the sandbox itself is `tournament::sandbox`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tournament::player::{Instance, Launch, PlayerSpec, Restart};

use super::tourney::{self, Bot, Setup};
use super::{err_line, progress, sys, Place, Plan, Row, Rows, Target, Unit};

/// Starts per run and setting for the start-up rows.
const STARTS: usize = 10;

/// How the bots run in a row: no sandbox, the layers from before each bot
/// was alone, or the sandbox as it is.
#[derive(Clone, Copy)]
enum Layers {
    Off,
    Previous,
    On,
}

const LAYERS: [Layers; 3] = [Layers::Off, Layers::Previous, Layers::On];

impl Layers {
    fn name(self) -> &'static str {
        match self {
            Layers::Off => "off",
            Layers::Previous => "previous layers",
            Layers::On => "on",
        }
    }

    fn settings(self) -> tournament::sandbox::Settings {
        tournament::sandbox::Settings {
            enabled: !matches!(self, Layers::Off),
            previous_layers: matches!(self, Layers::Previous),
            ..Default::default()
        }
    }
}

/// The rows: start-up off, with the previous layers, on, and the
/// differences; games/s the same three ways, and the ratios.
pub(super) fn rows(
    plan: &Plan,
    place: &Place,
    scripts: &Path,
    python: &Result<PathBuf, String>,
    rows: &mut Rows,
) {
    let label = &place.label;
    let start = LAYERS.map(|l| {
        rows.add(Row::new(
            format!("python bot start → READY, sandbox {} ({label})", l.name()),
            Unit::Millis,
        ))
    });
    let start_cost = rows.add(
        Row::new(
            format!("sandbox start cost, on − off ({label})"),
            Unit::Millis,
        )
        .target(Target::AtMost(5.0)),
    );
    let alone_cost = rows.add(
        Row::new(
            format!("each bot alone: start cost, on − previous layers ({label})"),
            Unit::Millis,
        )
        .target(Target::AtMost(5.0)),
    );
    let rate = LAYERS.map(|l| {
        rows.add(Row::new(
            format!("python bot c=2, sandbox {} ({label})", l.name()),
            Unit::Rate("games/s"),
        ))
    });
    let ratio = rows.add(
        Row::new(
            format!("python bot c=2, sandbox on ÷ off ({label})"),
            Unit::Ratio,
        )
        .target(Target::AtLeast(0.95)),
    );
    let alone_ratio = rows.add(
        Row::new(
            format!("each bot alone: games/s on ÷ previous layers ({label})"),
            Unit::Ratio,
        )
        .target(Target::AtLeast(0.95)),
    );
    let mut all = start.to_vec();
    all.extend([start_cost, alone_cost]);
    all.extend(rate);
    all.extend([ratio, alone_ratio]);
    let python = match python {
        Ok(p) => p,
        Err(why) => return rows.fail(&all, why),
    };
    let bot = Bot::Command(vec![
        python.display().to_string(),
        scripts.join("mailbox_bot.py").display().to_string(),
    ]);
    for rep in 1..=plan.reps {
        progress(&format!(
            "sandbox cost, run {rep}/{}: {STARTS} starts and {} games each of 3 ways",
            plan.reps, plan.python_games
        ));
        let mut ms = [f64::NAN; 3];
        let mut gps = [f64::NAN; 3];
        for (i, layers) in LAYERS.into_iter().enumerate() {
            match median_start(&place.dir, python, scripts, layers) {
                Ok(v) => {
                    ms[i] = v;
                    rows.push(start[i], v);
                }
                Err(e) => rows.fail(&[start[i], start_cost, alone_cost], &err_line(&e)),
            }
            let run = sys::Scratch::new(&place.dir, "sandbox")
                .map_err(anyhow::Error::from)
                .and_then(|dir| {
                    tourney::run(
                        dir.path(),
                        &Setup {
                            players: vec![("a".into(), &bot), ("b".into(), &bot)],
                            games_per_pairing: plan.python_games,
                            concurrency: 2,
                            openings: vec![],
                            sandbox: !matches!(layers, Layers::Off),
                            previous_sandbox: matches!(layers, Layers::Previous),
                            pipe: true,
                        },
                        false,
                    )
                });
            match run {
                Ok(o) => {
                    gps[i] = o.games_per_second();
                    rows.push(rate[i], gps[i]);
                }
                Err(e) => rows.fail(&[rate[i], ratio, alone_ratio], &err_line(&e)),
            }
        }
        rows.push(start_cost, ms[2] - ms[0]);
        rows.push(alone_cost, ms[2] - ms[1]);
        rows.push(ratio, gps[2] / gps[0]);
        rows.push(alone_ratio, gps[2] / gps[1]);
    }
}

/// The median time from spawning the bot to its READY, over [`STARTS`].
fn median_start(root: &Path, python: &Path, scripts: &Path, layers: Layers) -> anyhow::Result<f64> {
    let scratch = sys::Scratch::new(root, "start")?;
    let spec = Arc::new(PlayerSpec {
        name: "starter".into(),
        launch: Launch::Command(vec![
            python.display().to_string(),
            scripts.join("mailbox_bot.py").display().to_string(),
        ]),
        restart: Restart::Reuse,
        base_dir: scratch.path().to_path_buf(),
        seed: 1,
        board_as: None,
        sandbox: layers.settings(),
        protocol: Default::default(),
        engine: Default::default(),
        pipe: true,
        workdir: None,
    });
    let board = scratch.path().join("board");
    std::fs::create_dir_all(&board)?;
    let mut times = Vec::with_capacity(STARTS);
    for k in 1..=STARTS {
        let mut bot = Instance::new(Arc::clone(&spec), &board, k as u32)?;
        let clock = Instant::now();
        bot.prepare(tracing::Span::none())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        bot.exchange(
            &super::handoff::new_request("bench-start"),
            Instant::now() + Duration::from_secs(10),
        )
        .map_err(|e| anyhow::anyhow!("the bot did not start: {e}"))?;
        times.push(clock.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
