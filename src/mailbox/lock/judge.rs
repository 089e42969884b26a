//! The board lock's decision, without a drive: what one look at the lock
//! found goes in, what to do next comes out.
//!
//! Owns the rules of [`super::acquire_folder`]: when the lock is ours, when
//! its holder is alive (its OWNER changed while we watched), when it is
//! stale (unchanged for the holder's stale period on this process's own
//! clock, or its holder known dead), when to tell the user once, and what a
//! failed or successful break resets. Must not read or write files, sleep,
//! or read a clock: the caller passes `now`, so every rule is tested by a
//! table of looks (`tests` below) in microseconds.

use std::time::{Duration, Instant};

use super::OwnerRecord;

/// How long a lock folder without a valid owner record (damaged, or made
/// by hand) is left to a live referee to repair before it is taken over:
/// a live holder puts its record back within two heartbeats.
pub(super) const DAMAGED_WAIT: Duration = Duration::from_secs(7);

/// What one look at the board's lock found.
#[derive(Clone, Debug)]
pub(super) struct Look<'a> {
    /// The OWNER text as read ("" when there is no lock folder, a
    /// placeholder when the folder has no OWNER).
    pub text: &'a str,
    /// `text` parsed, when it is a valid owner record.
    pub owner: Option<&'a OwnerRecord>,
    /// The record carries our token and we hold the folder it is in open.
    pub ours: bool,
    /// Its holder is dead for sure: on this host with its pid gone (and the
    /// host's flock ours), or a holder this referee already judged stale.
    pub holder_dead: bool,
}

/// What to do after a look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// The lock is ours: the board is held.
    Acquired,
    /// Another referee's heartbeat moved while we watched: the board is in
    /// use. `heartbeat_age` is how long the last OWNER has been unchanged.
    Busy {
        heartbeat_age: Duration,
        stale: Duration,
    },
    /// Look again later. `announce`: tell the user (once) who holds the
    /// board and when it will be taken over.
    Wait { announce: bool, stale: Duration },
    /// The lock is stale: look once more, then break it. `unchanged_for`
    /// is how long it was seen unchanged.
    Break {
        announce: bool,
        unchanged_for: Duration,
    },
}

/// The lock's decision across looks: what was last seen, since when (our
/// clock), and whether it ever changed.
#[derive(Debug)]
pub(super) struct Judge {
    /// Our own stale period (the holder's, when its record has one, wins).
    stale: Duration,
    seen: Option<(String, Instant)>,
    changed_once: bool,
    told: bool,
}

impl Judge {
    pub fn new(stale: Duration) -> Judge {
        Judge {
            stale,
            seen: None,
            changed_once: false,
            told: false,
        }
    }

    /// The stale period for what `look` found: the holder's own, ours for
    /// a record without one, at most [`DAMAGED_WAIT`] for a damaged lock.
    pub fn stale_period(&self, look: &Look<'_>) -> Duration {
        match look.owner {
            None if !look.text.is_empty() => self.stale.min(DAMAGED_WAIT),
            Some(o) => o.stale_period(self.stale),
            None => self.stale,
        }
    }

    /// Decides what to do after `look`, made at `now`.
    pub fn step(&mut self, look: &Look<'_>, now: Instant) -> Step {
        if look.ours {
            return Step::Acquired;
        }
        let stale = self.stale_period(look);
        match &self.seen {
            Some((prev, _)) if prev == look.text => {}
            Some(_) => {
                self.changed_once = true;
                self.seen = Some((look.text.to_string(), now));
            }
            None => self.seen = Some((look.text.to_string(), now)),
        }
        let since = self.seen.as_ref().map_or(now, |s| s.1);
        if self.changed_once && !look.text.is_empty() {
            return Step::Busy {
                heartbeat_age: now - since,
                stale,
            };
        }
        let announce = !self.told && !look.text.is_empty() && !look.holder_dead;
        self.told |= announce;
        if !look.holder_dead && now - since < stale {
            return Step::Wait { announce, stale };
        }
        Step::Break {
            announce,
            unchanged_for: now - since,
        }
    }

    /// The lock changed between the look that judged it stale and the
    /// break (another breaker or a new holder was quicker): watch afresh.
    pub fn changed_under_us(&mut self) {
        self.seen = None;
        self.changed_once = false;
    }

    /// The lock was broken: watch what is on the board now afresh, and
    /// tell the user again if another holder appears.
    pub fn broke(&mut self) {
        self.changed_under_us();
        self.told = false;
    }

    /// The last look before a break read something else: forget what was
    /// seen (a change seen this way is not a heartbeat of one holder).
    pub fn forget_seen(&mut self) {
        self.seen = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STALE: Duration = Duration::from_secs(30);

    fn record(token: &str, heartbeat: u64, stale_ms: u64) -> OwnerRecord {
        OwnerRecord {
            token: token.into(),
            host: "pc-a".into(),
            pid: 42,
            started: "2026-11-26T08:00:00Z".into(),
            heartbeat,
            board: "/share/board".into(),
            command: "tournament run".into(),
            stale_ms,
        }
    }

    /// One row of a table: at `at_ms` the lock read `text` (a record of
    /// `token` at `heartbeat` when `Some`), and the judge must answer
    /// `expect`.
    struct Row {
        at_ms: u64,
        lock: Lock,
        holder_dead: bool,
        expect: Expect,
    }

    #[derive(Clone, Copy)]
    enum Lock {
        /// No lock folder.
        None,
        /// A record of holder "them" at this heartbeat, with this stale-ms.
        Theirs(u64, u64),
        /// Our own record.
        Ours,
        /// A lock folder whose OWNER does not parse.
        Damaged,
    }

    #[derive(Debug, PartialEq)]
    enum Expect {
        Acquired,
        Busy,
        Wait { announce: bool },
        Break { announce: bool },
    }

    fn run(stale: Duration, rows: &[Row]) {
        let t0 = Instant::now();
        let mut judge = Judge::new(stale);
        for (i, row) in rows.iter().enumerate() {
            let rec;
            let (text, owner, ours) = match row.lock {
                Lock::None => (String::new(), None, false),
                Lock::Theirs(hb, stale_ms) => {
                    rec = record("them", hb, stale_ms);
                    (rec.encode(), Some(&rec), false)
                }
                Lock::Ours => {
                    rec = record("us", 0, 0);
                    (rec.encode(), Some(&rec), true)
                }
                Lock::Damaged => ("garbage".to_string(), None, false),
            };
            let look = Look {
                text: &text,
                owner,
                ours,
                holder_dead: row.holder_dead,
            };
            let got = match judge.step(&look, t0 + Duration::from_millis(row.at_ms)) {
                Step::Acquired => Expect::Acquired,
                Step::Busy { .. } => Expect::Busy,
                Step::Wait { announce, .. } => Expect::Wait { announce },
                Step::Break { announce, .. } => Expect::Break { announce },
            };
            assert_eq!(got, row.expect, "row {i} (at {} ms)", row.at_ms);
        }
    }

    fn row(at_ms: u64, lock: Lock, expect: Expect) -> Row {
        Row {
            at_ms,
            lock,
            holder_dead: false,
            expect,
        }
    }

    #[test]
    fn our_own_record_is_the_board_held() {
        run(STALE, &[row(0, Lock::Ours, Expect::Acquired)]);
    }

    #[test]
    fn a_heartbeat_that_moves_is_a_live_holder() {
        run(
            STALE,
            &[
                row(0, Lock::Theirs(5, 0), Expect::Wait { announce: true }),
                row(1_000, Lock::Theirs(5, 0), Expect::Wait { announce: false }),
                row(2_000, Lock::Theirs(6, 0), Expect::Busy),
            ],
        );
    }

    #[test]
    fn a_lock_unchanged_for_the_stale_period_is_broken_and_not_before() {
        run(
            STALE,
            &[
                row(0, Lock::Theirs(5, 0), Expect::Wait { announce: true }),
                row(29_999, Lock::Theirs(5, 0), Expect::Wait { announce: false }),
                row(
                    30_000,
                    Lock::Theirs(5, 0),
                    Expect::Break { announce: false },
                ),
            ],
        );
    }

    #[test]
    fn the_holders_own_stale_period_wins_over_ours() {
        // The holder recorded 60 s; ours is 30 s: at 45 s it is not stale.
        run(
            STALE,
            &[
                row(0, Lock::Theirs(5, 60_000), Expect::Wait { announce: true }),
                row(
                    45_000,
                    Lock::Theirs(5, 60_000),
                    Expect::Wait { announce: false },
                ),
                row(
                    60_000,
                    Lock::Theirs(5, 60_000),
                    Expect::Break { announce: false },
                ),
            ],
        );
        // ... and a shorter one too.
        run(
            STALE,
            &[
                row(0, Lock::Theirs(5, 2_000), Expect::Wait { announce: true }),
                row(
                    2_000,
                    Lock::Theirs(5, 2_000),
                    Expect::Break { announce: false },
                ),
            ],
        );
    }

    #[test]
    fn a_holder_known_dead_is_broken_at_once_without_a_warning() {
        run(
            STALE,
            &[Row {
                at_ms: 0,
                lock: Lock::Theirs(5, 0),
                holder_dead: true,
                expect: Expect::Break { announce: false },
            }],
        );
    }

    #[test]
    fn a_damaged_lock_waits_for_a_repair_at_most_seven_seconds() {
        run(
            STALE,
            &[
                row(0, Lock::Damaged, Expect::Wait { announce: true }),
                row(6_999, Lock::Damaged, Expect::Wait { announce: false }),
                row(7_000, Lock::Damaged, Expect::Break { announce: false }),
            ],
        );
        // With a stale period shorter than that, the shorter one.
        run(
            Duration::from_secs(1),
            &[
                row(0, Lock::Damaged, Expect::Wait { announce: true }),
                row(1_000, Lock::Damaged, Expect::Break { announce: false }),
            ],
        );
    }

    #[test]
    fn a_damaged_lock_repaired_by_its_holder_is_a_live_holder() {
        run(
            STALE,
            &[
                row(0, Lock::Damaged, Expect::Wait { announce: true }),
                row(2_000, Lock::Theirs(7, 0), Expect::Busy),
            ],
        );
    }

    #[test]
    fn no_lock_folder_is_never_busy_and_never_announced() {
        run(
            STALE,
            &[
                row(0, Lock::None, Expect::Wait { announce: false }),
                row(10, Lock::None, Expect::Wait { announce: false }),
                row(20, Lock::Ours, Expect::Acquired),
            ],
        );
    }

    #[test]
    fn a_lock_appearing_where_there_was_none_is_a_new_holder_alive() {
        // Seen empty, then a record: that is a change, and the holder made
        // it while we watched.
        run(
            STALE,
            &[
                row(0, Lock::None, Expect::Wait { announce: false }),
                row(10, Lock::Theirs(0, 0), Expect::Busy),
            ],
        );
    }

    #[test]
    fn after_a_break_that_found_the_lock_changed_the_watch_starts_over() {
        let t0 = Instant::now();
        let rec = record("them", 5, 0);
        let text = rec.encode();
        let look = Look {
            text: &text,
            owner: Some(&rec),
            ours: false,
            holder_dead: false,
        };
        let mut judge = Judge::new(STALE);
        assert!(matches!(
            judge.step(&look, t0),
            Step::Wait { announce: true, .. }
        ));
        assert!(matches!(judge.step(&look, t0 + STALE), Step::Break { .. }));
        judge.changed_under_us();
        // A newer record after the reset is watched afresh, not "changed".
        let rec2 = record("other", 0, 0);
        let text2 = rec2.encode();
        let look2 = Look {
            text: &text2,
            owner: Some(&rec2),
            ..look.clone()
        };
        let now = t0 + STALE + Duration::from_millis(1);
        assert!(matches!(
            judge.step(&look2, now),
            Step::Wait {
                announce: false,
                ..
            }
        ));
        assert!(matches!(
            judge.step(&look2, now + STALE),
            Step::Break { .. }
        ));
        // After a break that took over, a new holder is announced again.
        judge.broke();
        assert!(matches!(
            judge.step(&look, now + STALE + STALE),
            Step::Wait { announce: true, .. }
        ));
    }

    #[test]
    fn a_different_look_right_before_the_break_forgets_only_what_was_seen() {
        let t0 = Instant::now();
        let a = record("them", 5, 0);
        let b = record("them", 6, 0);
        let (ta, tb) = (a.encode(), b.encode());
        let look = |text, owner| Look {
            text,
            owner: Some(owner),
            ours: false,
            holder_dead: false,
        };
        let mut judge = Judge::new(STALE);
        judge.step(&look(&ta, &a), t0);
        assert!(matches!(
            judge.step(&look(&ta, &a), t0 + STALE),
            Step::Break { .. }
        ));
        judge.forget_seen();
        // The next look is a first sight: waited on, not "busy".
        assert!(matches!(
            judge.step(&look(&tb, &b), t0 + STALE),
            Step::Wait {
                announce: false,
                ..
            }
        ));
    }
}
