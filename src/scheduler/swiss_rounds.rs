//! The Swiss format's scheduler: round after round, each paired from the
//! records of the rounds before (`schedule::swiss`), a share's part of it
//! dealt as any schedule (`shard::Share::games`) once every share has
//! recorded the rounds before (`scheduler::swiss_shares`).
//!
//! Owns which round comes next and its games for this run. Must not play
//! games; the pairing rule is `schedule::swiss`'s, the waiting for shares
//! `scheduler::swiss_shares`'.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use crate::error::HarnessError;
use crate::record::GameRecord;
use crate::shard::Share;

use super::{unplayed, Next, Scheduler};
use crate::schedule::swiss::{pair_next, round_games, RoundPairing};
use crate::schedule::ScheduledGame;

/// The rounds of a Swiss of `names`, for a whole run or one share.
pub struct SwissRounds {
    names: Vec<String>,
    rounds: u32,
    /// Round r plays opening r (in turn when they are fewer).
    openings: Vec<String>,
    share: Option<Share>,
    /// Games per round this run plays.
    per_round: usize,
    /// A share dealt no pairing of the first round plays none of any.
    plays_none: bool,
    /// The tournament's results folder: every share's records.
    top: PathBuf,
    stop: &'static AtomicBool,
    /// The last round handed out.
    round: AtomicU32,
}

impl SwissRounds {
    /// `first` is this run's part of round 1 (the schedule checked against
    /// the results folder).
    pub fn new(
        names: Vec<String>,
        rounds: u32,
        openings: Vec<String>,
        first: &[ScheduledGame],
        share: Option<Share>,
        top: &Path,
        stop: &'static AtomicBool,
    ) -> SwissRounds {
        // A share plays its part of each round: as many games as of the
        // first, which its schedule lists.
        let per_round = match share {
            Some(_) => first.len(),
            None => super::swiss_shares::games_per_round(names.len()),
        };
        SwissRounds {
            plays_none: share.is_some() && first.is_empty(),
            names,
            rounds,
            openings,
            share,
            per_round,
            top: top.to_path_buf(),
            stop,
            round: AtomicU32::new(0),
        }
    }

    /// The pairing of round `round`, from the records of the earlier
    /// rounds (all played: a run with games left does not ask for the
    /// next round). A share pairs it from every share's records, once
    /// every share has recorded its part of the earlier rounds: it waits
    /// for them, saying for which every 10 s. `None`: the run was stopped
    /// while waiting.
    fn pairing(
        &self,
        records: &[GameRecord],
        round: u32,
    ) -> Result<Option<RoundPairing>, HarnessError> {
        match self.share {
            Some(share) if round > 1 => super::swiss_shares::wait_for_round(
                &self.top,
                &self.names,
                share.count,
                round,
                self.stop,
                Duration::from_secs(10),
                &mut |line| tracing::info!("share {}: {line}", share.name()),
            ),
            _ => {
                let played = crate::rating::swiss::rounds(records);
                pair_next(&self.names, &played, round)
                    .map(Some)
                    .map_err(|e| HarnessError::ScheduleChanged(e.to_string()))
            }
        }
    }
}

impl Scheduler for SwissRounds {
    fn total(&self) -> usize {
        self.rounds as usize * self.per_round
    }

    fn holds(&self, record: &GameRecord) -> bool {
        record
            .swiss_round
            .is_some_and(|n| n >= 1 && n <= self.rounds)
    }

    fn next(&self, records: &[GameRecord]) -> Result<Next, HarnessError> {
        let round = self.round.load(Ordering::SeqCst) + 1;
        if self.plays_none || round > self.rounds {
            return Ok(Next::Done);
        }
        let Some(pairing) = self.pairing(records, round)? else {
            return Ok(Next::Stopped);
        };
        self.round.store(round, Ordering::SeqCst);
        if let Some(b) = pairing.bye {
            tracing::info!("Swiss round {round}: bye for {}", self.names[b]);
        }
        let opening = &self.openings[(round as usize - 1) % self.openings.len()];
        let all = round_games(&self.names, &pairing, round, opening);
        let mine = match self.share {
            Some(share) => share.games(&all),
            None => all,
        };
        Ok(Next::Play {
            games: unplayed(&mine, records),
            swiss_round: Some(round),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::record::Winner;

    static NEVER: AtomicBool = AtomicBool::new(false);

    fn names() -> Vec<String> {
        ["ann", "bob", "cid", "dan", "eve"]
            .map(String::from)
            .to_vec()
    }

    /// The record of `g` in Swiss round `round`, won by `winner` 40-24.
    fn played(g: &ScheduledGame, round: u32, winner: &str) -> GameRecord {
        let side = if g.black == winner {
            Winner::Black
        } else {
            Winner::White
        };
        let mut r = game(&g.black, &g.white, side, (40, 24));
        r.id = g.id.clone();
        r.round = g.round;
        r.swiss_round = Some(round);
        r
    }

    fn batch(next: Next) -> (Vec<ScheduledGame>, Option<u32>) {
        match next {
            Next::Play { games, swiss_round } => (games, swiss_round),
            other => panic!("{other:?}"),
        }
    }

    fn pairs(games: &[ScheduledGame]) -> Vec<(String, String)> {
        games
            .iter()
            .filter(|g| g.round == 1)
            .map(|g| {
                let mut p = [g.black.clone(), g.white.clone()];
                p.sort();
                (p[0].clone(), p[1].clone())
            })
            .collect()
    }

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    /// Five players, scripted results, pairings worked out by hand from
    /// the rule (`schedule::swiss`): round 1 ranks by the list, the bye
    /// to the last (eve), the top half against the bottom half (ann-cid,
    /// bob-dan: |d − ⌊4/2⌋| = 0 each).
    #[test]
    fn the_rounds_follow_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let openings = vec!["f5".to_string(), "f5d6".to_string()];
        let swiss = SwissRounds::new(names(), 3, openings, &[], None, dir.path(), &NEVER);
        assert_eq!(swiss.total(), 12);
        let (r1, n) = batch(swiss.next(&[]).unwrap());
        assert_eq!(n, Some(1));
        assert_eq!(r1.len(), 4);
        assert!(r1.iter().all(|g| g.opening == "f5"));
        assert_eq!(pairs(&r1), vec![pair("ann", "cid"), pair("bob", "dan")]);
        // cid and dan win both games of their pairs.
        let winner = |g: &ScheduledGame| {
            if g.black == "cid" || g.white == "cid" {
                "cid"
            } else {
                "dan"
            }
        };
        let mut records: Vec<GameRecord> = r1.iter().map(|g| played(g, 1, winner(g))).collect();
        let (r2, n) = batch(swiss.next(&records).unwrap());
        assert_eq!(n, Some(2));
        assert!(r2.iter().all(|g| g.opening == "f5d6"));
        // Points: cid 1, dan 1, eve 1 (bye), ann 0, bob 0: the bye to the
        // lowest ranked without one (bob). Squared differences in half
        // points: cid-dan + eve-ann = 0 + 4, cid-eve + dan-ann = 0 + 4
        // (ann-cid is a rematch); the second number (|d − ⌊3/2⌋| in the
        // group of three, d − 1 across groups) is 0 + 0 against 1 + 1.
        assert_eq!(pairs(&r2), vec![pair("cid", "dan"), pair("ann", "eve")]);
        records.extend(r2.iter().map(|g| played(g, 2, &g.black)));
        assert!(swiss.holds(&records[5]));
        let (r3, n) = batch(swiss.next(&records).unwrap());
        assert_eq!(n, Some(3));
        // Round 3 goes back to the first opening.
        assert!(r3.iter().all(|g| g.opening == "f5"));
        assert_eq!(swiss.next(&records).unwrap(), Next::Done);
        let mut stray = records[0].clone();
        stray.swiss_round = Some(4);
        assert!(!swiss.holds(&stray));
    }

    #[test]
    fn a_resumed_round_hands_out_only_its_unrecorded_games() {
        let dir = tempfile::tempdir().unwrap();
        let swiss = SwissRounds::new(names(), 1, vec!["f5".into()], &[], None, dir.path(), &NEVER);
        let all = round_games(
            &names(),
            &crate::schedule::swiss::pair_round(&crate::schedule::swiss::History::new(5), 1)
                .unwrap(),
            1,
            "f5",
        );
        let records = vec![played(&all[0], 1, &all[0].black)];
        let (left, _) = batch(swiss.next(&records).unwrap());
        assert_eq!(left, all[1..].to_vec());
    }

    #[test]
    fn a_share_dealt_no_pairing_plays_no_round() {
        let dir = tempfile::tempdir().unwrap();
        let share = Share { index: 2, count: 3 };
        let swiss = SwissRounds::new(
            names()[..4].to_vec(),
            3,
            vec!["f5".into()],
            &[],
            Some(share),
            dir.path(),
            &NEVER,
        );
        assert_eq!(swiss.total(), 0);
        assert_eq!(swiss.next(&[]).unwrap(), Next::Done);
    }
}
