//! What splitting a tournament into shares costs on one machine (issue
//! 29): games/s of 2 shares at concurrency 1, run at once (two
//! `tournament run --shard K/2` processes), beside 1 referee at
//! concurrency 2, on the same games; and their ratio (target: within
//! 10 %).
//!
//! Owns only these rows; shares themselves are `tournament::shard`.

use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

use super::tourney::{self, Bot, Setup};
use super::{err_line, progress, sys, Place, Plan, Row, Rows, Target, Unit};

fn setup(bot: &Bot, games: u32, concurrency: u32) -> Setup<'_> {
    Setup {
        players: vec![("a".to_string(), bot), ("b".to_string(), bot)],
        games_per_pairing: games,
        concurrency,
        openings: vec![],
        sandbox: true,
        previous_sandbox: false,
        pipe: true,
    }
}

/// Games/s of `setup` played as `count` shares at once in `dir`.
fn in_shares(dir: &std::path::Path, setup: &Setup<'_>, count: u32) -> anyhow::Result<f64> {
    let config = dir.join("tournament.toml");
    std::fs::write(&config, tourney::config_text(setup))?;
    let exe = crate::tournament_binary()?;
    let clock = Instant::now();
    let mut children = Vec::new();
    for k in 0..count {
        let log = std::fs::File::create(dir.join(format!("share-{k}.log")))?;
        children.push(
            Command::new(&exe)
                .args(["-q", "run", "--config"])
                .arg(&config)
                .args(["--shard", &format!("{k}/{count}")])
                .current_dir(dir)
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .context("cannot start `tournament run --shard`")?,
        );
    }
    for (k, mut child) in children.into_iter().enumerate() {
        let status = child.wait()?;
        if !status.success() {
            let text = std::fs::read_to_string(dir.join(format!("share-{k}.log")))?;
            bail!("share {k}/{count} ended with {status}: {}", text.trim());
        }
    }
    let seconds = clock.elapsed().as_secs_f64();
    let games = tournament::results::read_results(&dir.join("results"), false)?.len();
    if games != setup.games_per_pairing as usize {
        bail!("{games} games were played, not {}", setup.games_per_pairing);
    }
    Ok(games as f64 / seconds)
}

/// The three rows, measured `plan.reps` times, alternating.
pub(super) fn rows(plan: &Plan, place: &Place, rows: &mut Rows) {
    let random = Bot::Builtin("random");
    // Ten times the throughput rows' games: a run of 100 built-in games
    // is a quarter of a second, too short to compare two of them.
    let games = plan.builtin_games * 10;
    let whole = rows.add(Row::new(
        format!("shares: 1 referee c=2, built-in random ({})", place.label),
        Unit::Rate("games/s"),
    ));
    let split = rows.add(Row::new(
        format!(
            "shares: 2 shares c=1 at once, the same games ({})",
            place.label
        ),
        Unit::Rate("games/s"),
    ));
    let ratio = rows.add(
        Row::new(
            format!("shares: 2 shares c=1 ÷ 1 referee c=2 ({})", place.label),
            Unit::Ratio,
        )
        .target(Target::AtLeast(0.9)),
    );
    for rep in 0..plan.reps {
        progress(&format!("shares: run {} of {}", rep + 1, plan.reps));
        let measured = sys::Scratch::new(&place.dir, "whole")
            .map_err(anyhow::Error::from)
            .and_then(|dir| tourney::run(dir.path(), &setup(&random, games, 2), false))
            .and_then(|one| {
                let dir = sys::Scratch::new(&place.dir, "shares")?;
                let two = in_shares(dir.path(), &setup(&random, games, 1), 2)?;
                Ok((one.games_per_second(), two))
            });
        match measured {
            Ok((one, two)) => {
                rows.push(whole, one);
                rows.push(split, two);
                rows.push(ratio, two / one);
            }
            Err(e) => {
                rows.fail(&[whole, split, ratio], &err_line(&e));
                return;
            }
        }
    }
}
