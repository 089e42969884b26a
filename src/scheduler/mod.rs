//! A scheduler per format: the one question a run asks its format, "which
//! games next, given the records so far", and whether the tournament is
//! done or stopped by a rule.
//!
//! Owns the trait ([`Scheduler`]), the fixed list of a round robin or a
//! gauntlet ([`FixedList`]), and which scheduler a tournament definition
//! gets ([`for_run`]); Swiss rounds are `scheduler::swiss_rounds`', the SPRT
//! stop rule `scheduler::sprt_stop`'s. A new format is one scheduler and a
//! line in [`for_run`]. Must not play games, write records or print
//! (a scheduler may log what a format decides: a bye, a wait).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::{Config, Format};
use crate::error::HarnessError;
use crate::record::GameRecord;
use crate::shard::Share;

pub mod sprt_stop;
pub mod swiss_rounds;
pub mod swiss_shares;

use crate::schedule::ScheduledGame;
use sprt_stop::{SprtRun, SprtStop};
use swiss_rounds::SwissRounds;

/// What a format says comes next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Play these games (none of them recorded yet), marking each record
    /// with `swiss_round` when it is set.
    Play {
        games: Vec<ScheduledGame>,
        swiss_round: Option<u32>,
    },
    /// Every game the format schedules has been handed out (or a stop
    /// rule decided the tournament).
    Done,
    /// The run was stopped while the format waited (for other shares).
    Stopped,
}

/// A format: the games of a tournament, batch after batch, from the
/// records so far. Asked again after every batch is played; shared with
/// the thread that watches other shares ([`Scheduler::watch`]).
pub trait Scheduler: Sync {
    /// How many games this run plays in all (for the progress line).
    fn total(&self) -> usize;
    /// Whether `record`, found in the results folder, is one of this
    /// tournament's games.
    fn holds(&self, record: &GameRecord) -> bool;
    /// The next games to play, given every record of this run so far.
    fn next(&self, records: &[GameRecord]) -> Result<Next, HarnessError>;
    /// Looks at the records found when the run starts; the note the
    /// progress line shows, if the format has one.
    fn begin(&self, _records: &[GameRecord]) -> Result<Option<String>, HarnessError> {
        Ok(None)
    }
    /// Looks at the records after one more was recorded; the note for the
    /// game's line and the progress line, if the format has one.
    fn recorded(&self, _records: &[GameRecord]) -> Result<Option<String>, HarnessError> {
        Ok(None)
    }
    /// Set once a stop rule decided the tournament: no game starts after.
    fn decided(&self) -> Option<&AtomicBool> {
        None
    }
    /// Whether the format reads other shares' records while games play
    /// ([`Scheduler::watch`], in a thread of its own).
    fn watches(&self) -> bool {
        false
    }
    /// Runs beside the games while `playing` is set, for a format that
    /// [`Scheduler::watches`].
    fn watch(&self, _playing: &AtomicBool) {}
    /// The line that says how a stop rule ended the tournament, if it did.
    fn conclusion(&self) -> Option<String> {
        None
    }
}

/// A round robin or a gauntlet: a list known from the start, played in
/// one batch.
pub struct FixedList {
    games: Vec<ScheduledGame>,
    handed_out: AtomicBool,
}

impl FixedList {
    pub fn new(games: Vec<ScheduledGame>) -> FixedList {
        FixedList {
            games,
            handed_out: AtomicBool::new(false),
        }
    }
}

impl Scheduler for FixedList {
    fn total(&self) -> usize {
        self.games.len()
    }

    fn holds(&self, record: &GameRecord) -> bool {
        self.games.iter().any(|g| g.id == record.id)
    }

    fn next(&self, records: &[GameRecord]) -> Result<Next, HarnessError> {
        if self.handed_out.swap(true, Ordering::SeqCst) {
            return Ok(Next::Done);
        }
        Ok(Next::Play {
            games: unplayed(&self.games, records),
            swiss_round: None,
        })
    }
}

/// The games of `batch` that `records` do not hold, in order.
pub fn unplayed(batch: &[ScheduledGame], records: &[GameRecord]) -> Vec<ScheduledGame> {
    let finished: HashSet<&str> = records.iter().map(|r| r.id.as_str()).collect();
    batch
        .iter()
        .filter(|g| !finished.contains(g.id.as_str()))
        .cloned()
        .collect()
}

/// The scheduler of `config`'s tournament for a run that plays `games`
/// (its schedule as checked against the results folder: for a share, its
/// part; for a Swiss, of the first round), as share `share` if one, with
/// the tournament's results folder `top` (where shares and the SPRT's
/// verdict are read), giving up a wait once `stop` is set.
pub fn for_run(
    config: &Config,
    games: Vec<ScheduledGame>,
    share: Option<Share>,
    top: &Path,
    stop: &'static AtomicBool,
) -> Box<dyn Scheduler> {
    let names: Vec<String> = config.players.iter().map(|p| p.name.clone()).collect();
    if config.format == Format::Swiss {
        return Box::new(SwissRounds::new(
            names,
            config.rounds,
            crate::schedule::openings(config),
            &games,
            share,
            top,
            stop,
        ));
    }
    let list = FixedList::new(games);
    match config.sprt {
        Some(test) => Box::new(SprtRun::new(
            list,
            SprtStop::new(test, &names[0], &names[1], top),
            share.is_some(),
        )),
        None => Box::new(list),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::record::Winner;

    fn listed() -> Vec<ScheduledGame> {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        crate::schedule::schedule(&names, &crate::schedule::round_robin(3), 2, &["f5".into()])
    }

    #[test]
    fn a_fixed_list_hands_out_what_is_not_recorded_once_then_is_done() {
        let games = listed();
        assert_eq!(games.len(), 6);
        let mut first = game(&games[1].black, &games[1].white, Winner::Black, (40, 24));
        first.id = games[1].id.clone();
        let list = FixedList::new(games.clone());
        assert_eq!(list.total(), 6);
        assert!(list.holds(&first));
        let Next::Play {
            games: next,
            swiss_round,
        } = list.next(&[first]).unwrap()
        else {
            panic!("a first batch")
        };
        assert_eq!(swiss_round, None);
        let ids: Vec<&str> = next.iter().map(|g| g.id.as_str()).collect();
        let expected: Vec<&str> = games
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, g)| g.id.as_str())
            .collect();
        assert_eq!(ids, expected);
        assert_eq!(list.next(&[]).unwrap(), Next::Done);
        let mut stray = game("a", "b", Winner::Black, (40, 24));
        stray.id = "r09.a.b".into();
        assert!(!list.holds(&stray));
    }
}
