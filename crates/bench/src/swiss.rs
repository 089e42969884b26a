//! Swiss at scale (issue 32): the time to pair one round of 100, 1,000
//! and 5,000 players after 4 rounds (`schedule::swiss::pair_round`, in
//! process), and a 1,000-player Swiss of 7 rounds (`tournament run`)
//! beside its games alone: its wall time less the time its 7 pairings
//! take (each round paired again, in process, from the run's own records,
//! as the run paired it; target: the Swiss within 2× of its games). For
//! scale, a gauntlet of the same 1,000 players with as many games (7 per
//! pairing, 6,993), same bots, board and concurrency: no target, as its
//! bots start 7 times less often (a Swiss player's processes last one
//! round, two games; a gauntlet's, the run).
//!
//! Owns only these rows; the pairing is `tournament::schedule::swiss`.

use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

use tournament::record::GameRecord;
use tournament::schedule::swiss::{pair_next, pair_round, History};

use super::{err_line, progress, sys, Place, Plan, Row, Rows, Target, Unit};

/// A field of `n` after 4 rounds of made-up results (the higher-ranked
/// player of a pair wins two times in three, a drawn pair one in nine).
fn field_after_four_rounds(n: usize) -> anyhow::Result<History> {
    let mut h = History::new(n);
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for round in 1..=4 {
        let p = pair_round(&h, round)?;
        for &(a, b) in &p.pairs {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let (pa, pb) = match seed % 9 {
                0 => (1.0, 1.0),
                1..=5 => (2.0, 0.0),
                _ => (0.0, 2.0),
            };
            h.add_result(a, b, pa, pb);
        }
        if let Some(b) = p.bye {
            h.add_bye(b);
        }
    }
    Ok(h)
}

/// Pairing time of round 5 for each field size.
pub(super) fn pairing_rows(plan: &Plan, rows: &mut Rows) {
    let sizes: &[usize] = if plan.quick {
        &[100, 1000]
    } else {
        &[100, 1000, 5000]
    };
    for &n in sizes {
        let row = rows.add(Row::new(
            format!(
                "swiss: pair round 5 of {} players",
                super::table::thousands(n as u64)
            ),
            Unit::Millis,
        ));
        progress(&format!("swiss: {n} players, 4 rounds"));
        let h = match field_after_four_rounds(n) {
            Ok(h) => h,
            Err(e) => {
                rows.fail(&[row], &err_line(&e));
                continue;
            }
        };
        for _ in 0..plan.scale_reps {
            let clock = Instant::now();
            match pair_round(&h, 5) {
                Ok(_) => rows.push(row, clock.elapsed().as_secs_f64() * 1e3),
                Err(e) => rows.fail(&[row], &e.to_string()),
            }
        }
    }
}

fn config(format: &str, players: usize) -> String {
    let mut t = format!(
        "[tournament]\nname = \"bench swiss\"\n{format}\nconcurrency = 2\nsize = 4\n\n\
         [time]\nmove-ms = 5000\nstartup-ms = 10000\n\n[openings]\nrandom-plies = 2\nseed = 1\n"
    );
    for k in 0..players {
        t.push_str(&format!(
            "\n[[player]]\nname = \"p{k:04}\"\nbuiltin = \"random\"\nseed = {k}\n"
        ));
    }
    t
}

/// Seconds of `tournament -q run` on `text` in a fresh folder under
/// `place`, and its records, checking that `games` games were recorded.
fn timed_run(place: &Place, text: &str, games: usize) -> anyhow::Result<(f64, Vec<GameRecord>)> {
    let dir = sys::Scratch::new(&place.dir, "swiss")?;
    let config = dir.path().join("tournament.toml");
    std::fs::write(&config, text)?;
    let log = std::fs::File::create(dir.path().join("run.log"))?;
    let clock = Instant::now();
    let status = Command::new(crate::tournament_binary()?)
        .args(["-q", "run", "--config"])
        .arg(&config)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .context("cannot start `tournament run`")?;
    let seconds = clock.elapsed().as_secs_f64();
    if !status.success() {
        let text = std::fs::read_to_string(dir.path().join("run.log")).unwrap_or_default();
        bail!("`tournament run` ended with {status}: {}", text.trim());
    }
    let records = tournament::results::read_records(
        &dir.path()
            .join("results")
            .join(tournament::results::GAMES_FILE),
    )?;
    if records.len() != games {
        bail!("{} games were played, not {games}", records.len());
    }
    Ok((seconds, records))
}

/// Seconds to pair rounds 1..=`rounds` of `n` players from `records`,
/// as `tournament run` pairs them.
fn pairing_seconds(n: usize, rounds: u32, records: &[GameRecord]) -> anyhow::Result<f64> {
    let names: Vec<String> = (0..n).map(|k| format!("p{k:04}")).collect();
    let played = tournament::rating::swiss::rounds(records);
    let clock = Instant::now();
    for round in 1..=rounds {
        pair_next(&names, &played, round)?;
    }
    Ok(clock.elapsed().as_secs_f64())
}

/// The 1,000-player Swiss of 7 rounds beside its games alone, and a
/// gauntlet of as many games.
pub(super) fn event_rows(plan: &Plan, place: &Place, rows: &mut Rows) {
    let (n, rounds) = (1000u32 as usize, 7u32);
    let swiss = rows.add(Row::new(
        format!(
            "swiss: 1,000 players × 7 rounds, 7,000 games ({})",
            place.label
        ),
        Unit::Seconds,
    ));
    let pairing = rows.add(Row::new(
        "swiss: its 7 pairings, from its records",
        Unit::Millis,
    ));
    let ratio = rows.add(
        Row::new("swiss ÷ its games alone (wall − pairings)", Unit::Ratio)
            .target(Target::AtMost(2.0)),
    );
    let gauntlet = rows.add(Row::new(
        format!(
            "gauntlet: the same 1,000 players, 6,993 games ({})",
            place.label
        ),
        Unit::Seconds,
    ));
    let beside = rows.add(Row::new("swiss ÷ gauntlet of as many games", Unit::Ratio));
    for rep in 0..plan.scale_reps {
        progress(&format!(
            "swiss: 1,000-player event, run {} of {}",
            rep + 1,
            plan.scale_reps
        ));
        let measured = timed_run(
            place,
            &config(&format!("format = \"swiss\"\nrounds = {rounds}"), n),
            n * rounds as usize,
        )
        .and_then(|(s, records)| Ok((s, pairing_seconds(n, rounds, &records)?)))
        .and_then(|(s, p)| {
            let (g, _) = timed_run(
                place,
                &config("format = \"gauntlet\"\ngames-per-pairing = 7", n),
                (n - 1) * 7,
            )?;
            Ok((s, p, g))
        });
        match measured {
            Ok((s, p, g)) => {
                rows.push(swiss, s);
                rows.push(pairing, p * 1e3);
                rows.push(ratio, s / (s - p));
                rows.push(gauntlet, g);
                rows.push(beside, s / g);
            }
            Err(e) => {
                rows.fail(&[swiss, pairing, ratio, gauntlet, beside], &err_line(&e));
                return;
            }
        }
    }
}
