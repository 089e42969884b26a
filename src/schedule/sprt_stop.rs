//! The SPRT as a run's stop rule, beside the formats that say which games
//! come next: a run (or each share of one) stops handing out games once
//! the test over every recorded pair crosses a bound.
//!
//! Owns when the test counts as decided and which verdict stands: the
//! first verdict kept in the tournament's results folder
//! (`results::keep_sprt_verdict`), so that every share and every reader
//! shows one verdict at one game count. Must not play games or print;
//! the LLR itself is `rating::sprt`'s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::HarnessError;
use crate::rating::pairstats::pentanomial;
use crate::rating::sprt::{Decision, Sprt, Verdict};
use crate::rating::SprtStatus;
use crate::record::GameRecord;

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
        let early = Verdict {
            games: 40,
            pentanomial: [0, 0, 0, 0, 20],
        };
        assert_eq!(
            crate::results::keep_sprt_verdict(dir.path(), &early).unwrap(),
            early
        );
        let later = Verdict {
            games: 44,
            pentanomial: [0, 0, 0, 0, 22],
        };
        // A later crossing elsewhere gets the verdict kept first.
        assert_eq!(
            crate::results::keep_sprt_verdict(dir.path(), &later).unwrap(),
            early
        );
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
}
