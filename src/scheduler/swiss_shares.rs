//! A Swiss event played in shares (issue 29): round `r` is paired from
//! every share's records of rounds `1..r`, once those rounds are complete
//! across all shares; each share then plays its part of round `r`.
//!
//! Owns when a round may be paired (every game of the earlier rounds is
//! recorded, whichever share played it), which shares a waiting share
//! waits for, and the waiting itself (reading the results folder now and
//! then, saying for whom it waits, giving up when the run is stopped).
//! The pairings of a round are dealt to shares as any schedule is
//! (`shard::Share::games`: pairing `p` of the round to share `p mod N`), so
//! every share computes the same pairings from the same records and
//! takes its own part. Must not play games; the pairing rule is
//! `schedule::swiss`'s.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::HarnessError;
use crate::rating::swiss::Round;
use crate::record::GameRecord;
use crate::shard::Share;

use crate::schedule::swiss::{pair_next, round_games, RoundPairing, Unpairable};

/// Whether round `round` can be paired from `records` (every share's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Every earlier round is complete: the round's pairing.
    Ready(RoundPairing),
    /// Round `round` lacks games: `recorded` of `of` are in, and the
    /// shares that have not recorded all of theirs, with their counts.
    Waiting {
        round: u32,
        recorded: usize,
        of: usize,
        /// (share, its games of the round recorded, its games of the round)
        behind: Vec<(Share, usize, usize)>,
    },
}

/// The games one round of a Swiss of `players` plays: two per pairing.
pub fn games_per_round(players: usize) -> usize {
    players / 2 * 2
}

/// Whether round `round` of a Swiss of `names` in `count` shares can be
/// paired from `records` (every share's, read together).
pub fn readiness(
    names: &[String],
    count: u32,
    records: &[GameRecord],
    round: u32,
) -> Result<Readiness, Unpairable> {
    let played = crate::rating::swiss::rounds(records);
    let per_round = games_per_round(names.len());
    for earlier in 1..round {
        let ids: HashSet<&str> = records
            .iter()
            .filter(|r| r.swiss_round == Some(earlier))
            .map(|r| r.id.as_str())
            .collect();
        if ids.len() >= per_round {
            continue;
        }
        return Ok(Readiness::Waiting {
            round: earlier,
            recorded: ids.len(),
            of: per_round,
            behind: behind(names, count, &played, earlier, &ids)?,
        });
    }
    pair_next(names, &played, round).map(Readiness::Ready)
}

/// The shares whose part of round `round` is not all in `recorded`.
fn behind(
    names: &[String],
    count: u32,
    played: &BTreeMap<u32, Round>,
    round: u32,
    recorded: &HashSet<&str>,
) -> Result<Vec<(Share, usize, usize)>, Unpairable> {
    let pairing = pair_next(names, played, round)?;
    // Ids do not depend on the opening.
    let games = round_games(names, &pairing, round, "");
    Ok((0..count)
        .map(|index| Share { index, count })
        .filter_map(|share| {
            let part = share.games(&games);
            let done = part
                .iter()
                .filter(|g| recorded.contains(g.id.as_str()))
                .count();
            (done < part.len()).then_some((share, done, part.len()))
        })
        .collect())
}

/// What a share waiting for round `round` says.
pub fn waiting_line(round: u32, readiness: &Readiness) -> String {
    let Readiness::Waiting {
        round: lacking,
        recorded,
        of,
        behind,
    } = readiness
    else {
        return format!("round {round}: ready");
    };
    let shares: Vec<String> = behind
        .iter()
        .map(|(s, done, of)| format!("share {} ({done} of {of} games)", s.name()))
        .collect();
    format!(
        "Swiss round {round}: waiting for {} to finish round {lacking} ({recorded} of {of} games \
         of round {lacking} recorded)",
        if shares.is_empty() {
            "the other shares".to_string()
        } else {
            shares.join(", ")
        }
    )
}

/// Waits until round `round` can be paired from every share's records in
/// the tournament's results folder `top`, saying every `say_every` for
/// which shares it waits (through `say`). Returns the pairing, or `None`
/// once `stop` is set (the run stops; run again, it waits again). Bots
/// are not running while it waits: it only reads the folder, once a
/// second (or with four times the reading's time between reads).
pub fn wait_for_round(
    top: &Path,
    names: &[String],
    count: u32,
    round: u32,
    stop: &AtomicBool,
    say_every: Duration,
    say: &mut dyn FnMut(&str),
) -> Result<Option<RoundPairing>, HarnessError> {
    const STEP: Duration = Duration::from_millis(100);
    let mut said: Option<Instant> = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let reading = Instant::now();
        let records = crate::results::read_results(top, false)?;
        let state = readiness(names, count, &records, round)
            .map_err(|e| HarnessError::ScheduleChanged(e.to_string()))?;
        if let Readiness::Ready(pairing) = state {
            return Ok(Some(pairing));
        }
        if said.is_none_or(|t| t.elapsed() >= say_every) {
            say(&waiting_line(round, &state));
            said = Some(Instant::now());
        }
        let pause = (reading.elapsed() * 4).max(Duration::from_secs(1));
        let mut waited = Duration::ZERO;
        while waited < pause && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(STEP);
            waited += STEP;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::record::Winner;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("p{i}")).collect()
    }

    /// The records of `games`, the first-listed player of each pairing
    /// winning.
    fn recorded(games: &[crate::schedule::ScheduledGame], round: u32) -> Vec<GameRecord> {
        games
            .iter()
            .map(|g| {
                let mut r = game(&g.black, &g.white, Winner::Black, (20, 16));
                r.id = g.id.clone();
                r.round = g.round;
                r.swiss_round = Some(round);
                r
            })
            .collect()
    }

    #[test]
    fn a_round_waits_for_every_share_of_the_rounds_before() {
        let names = names(7);
        let r1 = match readiness(&names, 3, &[], 1).unwrap() {
            Readiness::Ready(p) => p,
            other => panic!("{other:?}"),
        };
        let games = round_games(&names, &r1, 1, "");
        assert_eq!(games.len(), games_per_round(7));
        // Shares 0 and 1 have played their parts of round 1, share 2 not.
        let mut records = Vec::new();
        for k in 0..2 {
            records.extend(recorded(&Share { index: k, count: 3 }.games(&games), 1));
        }
        let state = readiness(&names, 3, &records, 2).unwrap();
        let Readiness::Waiting {
            round,
            recorded: done,
            of,
            ref behind,
        } = state
        else {
            panic!("{state:?}")
        };
        assert_eq!((round, done, of), (1, 4, 6));
        assert_eq!(behind, &vec![(Share { index: 2, count: 3 }, 0, 2)]);
        let line = waiting_line(2, &state);
        assert!(
            line.contains("waiting for share 2-of-3 (0 of 2 games)"),
            "{line}"
        );
        // Once share 2's part is in, round 2 is paired, the same from the
        // records in any order.
        records.extend(recorded(&Share { index: 2, count: 3 }.games(&games), 1));
        let a = readiness(&names, 3, &records, 2).unwrap();
        records.reverse();
        let b = readiness(&names, 3, &records, 2).unwrap();
        assert!(matches!(a, Readiness::Ready(_)), "{a:?}");
        assert_eq!(a, b);
    }

    #[test]
    fn a_stopped_run_stops_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let mut lines = Vec::new();
        let got = wait_for_round(
            dir.path(),
            &names(6),
            2,
            2,
            &stop,
            Duration::from_secs(10),
            &mut |l| lines.push(l.to_string()),
        )
        .unwrap();
        assert_eq!(got, None);
    }
}
