//! The SPRT as a run's stop rule, beside the formats that say which games
//! come next: a run (or each share of one) stops handing out games once
//! the test over every recorded pair crosses a bound. [`SprtRun`] is the
//! scheduler of an SPRT: the round robin of its pair, until the verdict.
//!
//! Owns when the test counts as decided and which verdict stands: the
//! first verdict kept in the tournament's results folder
//! (`results::keep_sprt_verdict`), so that every share and every reader
//! shows one verdict at one game count; a share's reading of the other
//! shares' records while it plays. Must not play games or print; the LLR
//! itself is `rating::sprt`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::HarnessError;
use crate::rating::pairstats::pentanomial;
use crate::rating::sprt::{Decision, Sprt, Verdict};
use crate::rating::SprtStatus;
use crate::record::GameRecord;

use super::{FixedList, Next, Scheduler};

/// The stop rule of one run of an SPRT between `first` and `second`.
pub struct SprtStop {
    test: Sprt,
    first: String,
    second: String,
    /// The tournament's results folder (for a share, the folder above
    /// `shards/`): where the verdict is kept.
    top: PathBuf,
    decided: AtomicBool,
    verdict: Mutex<Option<Verdict>>,
    note: Mutex<String>,
    /// Every share's records as last read ([`SprtStop::read_shares`]).
    shares: Mutex<Vec<GameRecord>>,
}

impl SprtStop {
    pub fn new(test: Sprt, first: &str, second: &str, top: &Path) -> SprtStop {
        SprtStop {
            test,
            first: first.to_string(),
            second: second.to_string(),
            top: top.to_path_buf(),
            decided: AtomicBool::new(false),
            verdict: Mutex::new(None),
            note: Mutex::new(SprtStatus::new(test, &[0; 5]).progress_note()),
            shares: Mutex::new(Vec::new()),
        }
    }

    /// Set once the test is decided: the pool hands out no more games.
    pub fn decided(&self) -> &AtomicBool {
        &self.decided
    }

    /// Takes the verdict already kept in the results folder (a resumed
    /// run's, or another share's), if there is one.
    pub fn adopt_kept(&self) -> Result<bool, HarnessError> {
        match crate::results::read_sprt_verdict(&self.top)? {
            Some(v) => {
                self.settle(v);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Reads every share's records again (a share's run does it now and
    /// then) and looks at them with the run's own.
    pub fn read_shares(&self, own: &[GameRecord]) -> Result<String, HarnessError> {
        if let Some(v) = crate::results::read_sprt_verdict(&self.top)? {
            self.settle(v);
            return Ok(self.note());
        }
        let all = crate::results::read_results(&self.top, false)?;
        *self.shares.lock().expect("shares") = all;
        self.observe(own)
    }

    /// Looks at the run's own records with every share's as last read:
    /// when the test over their pairs crosses a bound, the verdict is
    /// kept (or another share's kept one adopted) and the run stops.
    /// Returns the test's note for the progress line.
    pub fn observe(&self, own: &[GameRecord]) -> Result<String, HarnessError> {
        if self.decided.load(Ordering::SeqCst) {
            return Ok(self.note());
        }
        // Every share's records as last read, and this run's own that
        // reading did not see yet: counted where they are, never copied
        // (a run records thousands of games).
        let shares = self.shares.lock().expect("shares");
        let known: std::collections::HashSet<&str> = shares.iter().map(|r| r.id.as_str()).collect();
        let unread: Vec<&GameRecord> = own
            .iter()
            .filter(|r| !known.contains(r.id.as_str()))
            .collect();
        let games = shares.len() + unread.len();
        let penta = pentanomial(
            shares.iter().chain(unread.iter().copied()),
            &self.first,
            &self.second,
        );
        drop(shares);
        let status = SprtStatus::new(self.test, &penta);
        *self.note.lock().expect("note") = status.progress_note();
        if status.decision != Decision::Continue {
            let reached = Verdict {
                games,
                pentanomial: penta,
            };
            let kept = crate::results::keep_sprt_verdict(&self.top, &reached)?;
            self.settle(kept);
        }
        Ok(self.note())
    }

    /// The verdict that stands, with the test over its pairs.
    pub fn verdict(&self) -> Option<(Verdict, SprtStatus)> {
        let v = (*self.verdict.lock().expect("verdict"))?;
        Some((v, SprtStatus::decided(self.test, &v)))
    }

    /// The test's last note (`LLR 1.23 (-2.94, 2.94) [0, 50]`).
    pub fn note(&self) -> String {
        self.note.lock().expect("note").clone()
    }

    fn settle(&self, v: Verdict) {
        *self.note.lock().expect("note") = SprtStatus::decided(self.test, &v).progress_note();
        *self.verdict.lock().expect("verdict") = Some(v);
        self.decided.store(true, Ordering::SeqCst);
    }
}

/// The scheduler of an SPRT: the games of its pair, handed out until the
/// test is decided. The verdict stands where the test crossed its bound,
/// with the number of games then: games still running at that moment
/// finish and are recorded, but a sequential test is decided where it
/// crosses (a late game can pull the LLR back inside the bounds). A share
/// looks at every share's records and takes the verdict kept first.
pub struct SprtRun {
    pairs: FixedList,
    stop: SprtStop,
    in_shares: bool,
}

impl SprtRun {
    pub fn new(pairs: FixedList, stop: SprtStop, in_shares: bool) -> SprtRun {
        SprtRun {
            pairs,
            stop,
            in_shares,
        }
    }
}

impl Scheduler for SprtRun {
    fn total(&self) -> usize {
        self.pairs.total()
    }

    fn holds(&self, record: &GameRecord) -> bool {
        self.pairs.holds(record)
    }

    fn next(&self, records: &[GameRecord]) -> Result<Next, HarnessError> {
        if self.stop.decided().load(Ordering::SeqCst) {
            return Ok(Next::Done);
        }
        self.pairs.next(records)
    }

    fn begin(&self, records: &[GameRecord]) -> Result<Option<String>, HarnessError> {
        if self.in_shares {
            self.stop.read_shares(records)?;
        } else if !self.stop.adopt_kept()? {
            self.stop.observe(records)?;
        }
        Ok(Some(self.stop.note()))
    }

    fn recorded(&self, records: &[GameRecord]) -> Result<Option<String>, HarnessError> {
        self.stop.observe(records).map(Some)
    }

    fn decided(&self) -> Option<&AtomicBool> {
        Some(self.stop.decided())
    }

    fn watches(&self) -> bool {
        self.in_shares
    }

    /// While a share plays, reads every share's records now and then, so
    /// that the SPRT stops this share when the pairs of all shares decide
    /// it: every quarter second, or, when reading takes long (many games),
    /// with four times the reading's time between reads.
    fn watch(&self, playing: &AtomicBool) {
        const STEP: Duration = Duration::from_millis(50);
        if !self.in_shares {
            return;
        }
        while playing.load(Ordering::SeqCst) && !self.stop.decided().load(Ordering::SeqCst) {
            let reading = std::time::Instant::now();
            if let Err(e) = self.stop.read_shares(&[]) {
                tracing::warn!("the SPRT over every share: {e}");
            }
            let pause = (reading.elapsed() * 4).max(Duration::from_millis(250));
            let mut waited = Duration::ZERO;
            while waited < pause && playing.load(Ordering::SeqCst) {
                std::thread::sleep(STEP);
                waited += STEP;
            }
        }
    }

    fn conclusion(&self) -> Option<String> {
        let (verdict, status) = self.stop.verdict()?;
        Some(format!(
            "SPRT: {} accepted after {} games · {}",
            status.decision.name(),
            verdict.games,
            status.progress_note()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::sprt::Model;

    fn test() -> Sprt {
        Sprt {
            elo0: 0.0,
            elo1: 50.0,
            alpha: 0.05,
            beta: 0.05,
            model: Model::Normalized,
            repeated_openings: None,
        }
    }

    #[test]
    fn the_first_verdict_kept_stands_for_every_share() {
        let dir = tempfile::tempdir().unwrap();
        let first = SprtStop::new(test(), "a", "b", dir.path());
        let second = SprtStop::new(test(), "a", "b", dir.path());
        // Every pair won by `a`, crossing at 40 games and again at 44.
        let won = |pairs: u64| Verdict {
            games: pairs as usize * 2,
            pentanomial: [0, 0, 0, 0, pairs],
        };
        let keep = |v: Verdict| crate::results::keep_sprt_verdict(dir.path(), &v).unwrap();
        let early = won(20);
        assert_eq!(keep(early), early);
        // A later crossing elsewhere gets the verdict kept first.
        assert_eq!(keep(won(22)), early);
        assert!(!first.decided().load(Ordering::SeqCst));
        assert!(first.adopt_kept().unwrap());
        assert!(first.decided().load(Ordering::SeqCst));
        assert_eq!(first.verdict().unwrap().0, early);
        assert_eq!(first.verdict().unwrap().1.decision, Decision::H1);
        assert!(second.observe(&[]).is_ok());
        assert!(second.adopt_kept().unwrap());
        assert_eq!(second.verdict().unwrap().0.games, 40);
    }

    #[test]
    fn no_verdict_is_kept_while_the_test_continues() {
        let dir = tempfile::tempdir().unwrap();
        let stop = SprtStop::new(test(), "a", "b", dir.path());
        let note = stop.observe(&[]).unwrap();
        assert!(note.starts_with("LLR 0.00"), "{note}");
        assert!(!stop.decided().load(Ordering::SeqCst));
        assert!(stop.verdict().is_none());
        assert!(!dir.path().join(crate::results::SPRT_VERDICT_FILE).exists());
    }

    /// Records of `penta` (pairs in which `a` scored 0, ½, 1, 1½, 2
    /// against `b`), each pair's two games with colours swapped.
    fn pairs_of(penta: [u64; 5]) -> Vec<GameRecord> {
        use crate::record::Winner;
        let mut out = Vec::new();
        let mut round = 0u32;
        for (cell, &count) in penta.iter().enumerate() {
            // a's result in each game of the pair: 0 lost, 1 drawn, 2 won.
            let halves = [[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]][cell];
            for _ in 0..count {
                for h in halves {
                    round += 1;
                    let a_black = round % 2 == 1;
                    let winner = match (h, a_black) {
                        (1, _) => Winner::Draw,
                        (2, true) | (0, false) => Winner::Black,
                        _ => Winner::White,
                    };
                    let (black, white) = if a_black { ("a", "b") } else { ("b", "a") };
                    let mut r = crate::rating::tests::game(black, white, winner, (33, 31));
                    r.round = round;
                    r.id = format!("r{round}.{black}.{white}");
                    out.push(r);
                }
            }
        }
        out
    }

    /// fishtest's published test (`llr_normalized(-1.75, 0.25, …)` = 3.01,
    /// `rating::sprt`): past the upper bound ln(0.95 / 0.05) = 2.94, so
    /// the run of that SPRT hands out no more games, and says H1 with the
    /// games counted.
    #[test]
    fn the_sprt_run_is_done_once_the_bound_is_crossed() {
        let dir = tempfile::tempdir().unwrap();
        let sprt = Sprt {
            elo0: -1.75,
            elo1: 0.25,
            ..test()
        };
        let games = crate::schedule::schedule(
            &["a".to_string(), "b".to_string()],
            &crate::schedule::round_robin(2),
            4,
            &["f5".into(), "f5d6".into()],
        );
        let run = |top: &Path| {
            SprtRun::new(
                FixedList::new(games.clone()),
                SprtStop::new(sprt, "a", "b", top),
                false,
            )
        };
        let fresh = run(dir.path());
        assert!(fresh.begin(&[]).unwrap().unwrap().starts_with("LLR 0.00"));
        assert!(!fresh.decided().unwrap().load(Ordering::SeqCst));
        assert!(matches!(fresh.next(&[]).unwrap(), Next::Play { games, .. } if games.len() == 4));
        assert_eq!(fresh.conclusion(), None);

        let records = pairs_of([127, 4883, 10712, 5150, 104]);
        assert_eq!(records.len(), 41_952);
        let crossed = run(dir.path());
        let note = crossed.begin(&records).unwrap().unwrap();
        let llr: f64 = note.split(' ').nth(1).unwrap().parse().unwrap();
        assert!((llr - 3.01).abs() <= 0.01, "{note}");
        assert!(crossed.decided().unwrap().load(Ordering::SeqCst));
        assert_eq!(crossed.next(&records).unwrap(), Next::Done);
        let said = crossed.conclusion().unwrap();
        assert!(
            said.starts_with("SPRT: H1 accepted after 41952 games · LLR "),
            "{said}"
        );
        // Kept: a resumed run takes that verdict without the records.
        let resumed = run(dir.path());
        resumed.begin(&[]).unwrap();
        assert_eq!(resumed.next(&[]).unwrap(), Next::Done);
        assert_eq!(resumed.conclusion(), Some(said));
    }
}
