//! The harness's own failures, each with a clear message and an exit code.
//!
//! Owns: the list of user-facing error kinds and their exit statuses. A bot
//! that misbehaves is never one of these: that is a game result.

use std::path::PathBuf;

use crate::mailbox::{ClearError, LockError, MailboxError};
use crate::player::StartError;

/// Exit statuses, one per kind of failure a user can meet.
pub mod exit {
    /// Everything ran; games may have been won, lost or forfeited.
    pub const OK: i32 = 0;
    /// The harness failed for a reason not listed below (I/O, a bug).
    pub const FAILURE: i32 = 1;
    /// The command line was wrong (clap's own status).
    pub const USAGE: i32 = 2;
    /// tournament.toml (or another input file) is invalid.
    pub const CONFIG: i32 = 3;
    /// Another referee holds the board.
    pub const BOARD_LOCKED: i32 = 4;
    /// The results folder belongs to a different schedule.
    pub const SCHEDULE_CHANGED: i32 = 5;
    /// A player cannot be started (missing program or interpreter).
    pub const PLAYER_UNAVAILABLE: i32 = 6;
    /// check-bot found protocol violations.
    pub const BOT_NONCOMPLIANT: i32 = 7;
    /// This referee lost the board's lock while running.
    pub const LOCK_LOST: i32 = 8;
    /// Results could not be written (disk full, permissions).
    pub const RESULTS_UNWRITABLE: i32 = 9;
    /// The board folder could not be written (drive gone, permissions).
    pub const BOARD_UNWRITABLE: i32 = 10;
    /// The machine refused the referee a process or a thread for longer
    /// than it waits (the user's process limit, memory): nothing of the
    /// game under way was recorded; run again to resume.
    pub const MACHINE_EXHAUSTED: i32 = 11;
    /// Stopped by Ctrl-C before the work was done (resumable).
    pub const INTERRUPTED: i32 = 130;
    /// Whoever read stdout stopped reading (`tournament … | head`): stopped
    /// quietly, as a command killed by SIGPIPE would (128 + 13).
    pub const STDOUT_CLOSED: i32 = 141;
}

/// Failures of the harness itself.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{0}")]
    Config(String),
    /// tournament.toml is invalid: the file, line, column and key are
    /// kept for whoever handles the error, not only in the words.
    #[error(transparent)]
    ConfigFile(#[from] crate::config::ConfigError),
    #[error("{0}")]
    BoardLocked(String),
    #[error("{0}")]
    ScheduleChanged(String),
    #[error("{0}")]
    PlayerUnavailable(String),
    #[error("{0}")]
    BotNoncompliant(String),
    #[error(transparent)]
    LockLost(#[from] crate::mailbox::LockLost),
    /// (The field is not called `source`: the message already quotes it,
    /// and a source would be printed a second time.)
    #[error("cannot write results to {path}: {error}")]
    ResultsUnwritable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write to the board: {0}")]
    BoardUnwritable(String),
    /// The machine refused a process or thread (the words say which).
    #[error("{0}")]
    MachineExhausted(String),
    /// The board's lock was not taken: held by another referee (exit 4),
    /// a board path that is no board's (3), or the drive failed (10). The
    /// lock's error is kept whole.
    #[error("{}", board_lock_words(.0))]
    BoardLock(crate::mailbox::LockError),
    #[error("interrupted: {0}")]
    Interrupted(String),
}

impl HarnessError {
    /// A results file or folder could not be written.
    pub fn results_unwritable(path: &std::path::Path, error: std::io::Error) -> HarnessError {
        HarnessError::ResultsUnwritable {
            path: path.to_path_buf(),
            error,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            HarnessError::Config(_) | HarnessError::ConfigFile(_) => exit::CONFIG,
            HarnessError::BoardLocked(_) => exit::BOARD_LOCKED,
            HarnessError::ScheduleChanged(_) => exit::SCHEDULE_CHANGED,
            HarnessError::PlayerUnavailable(_) => exit::PLAYER_UNAVAILABLE,
            HarnessError::BotNoncompliant(_) => exit::BOT_NONCOMPLIANT,
            HarnessError::LockLost(_) => exit::LOCK_LOST,
            HarnessError::ResultsUnwritable { .. } => exit::RESULTS_UNWRITABLE,
            HarnessError::BoardUnwritable(_) => exit::BOARD_UNWRITABLE,
            HarnessError::MachineExhausted(_) => exit::MACHINE_EXHAUSTED,
            HarnessError::BoardLock(e) => match e {
                LockError::Held { .. } => exit::BOARD_LOCKED,
                LockError::BadBoard(_) => exit::CONFIG,
                LockError::Io(..) => exit::BOARD_UNWRITABLE,
            },
            HarnessError::Interrupted(_) => exit::INTERRUPTED,
        }
    }
}

/// What the user reads for a board lock not taken (the words of the kind
/// of failure it is: a drive's failure reads as any board write's).
fn board_lock_words(e: &LockError) -> String {
    match e {
        LockError::Io(..) => format!("cannot write to the board: {e}"),
        e => e.to_string(),
    }
}

impl From<crate::mailbox::LockError> for HarnessError {
    fn from(e: crate::mailbox::LockError) -> HarnessError {
        HarnessError::BoardLock(e)
    }
}

/// A mailbox folder that could not be made: the board's failure (its lock
/// lost: exit 8; anything else: 10).
impl From<MailboxError> for HarnessError {
    fn from(e: MailboxError) -> HarnessError {
        match e {
            MailboxError::LockLost(lost) => HarnessError::LockLost(lost),
            e => HarnessError::BoardUnwritable(e.to_string()),
        }
    }
}

/// A player that could not be started: the player's failure (exit 6), or,
/// when its mailbox could not be readied, the board's (8 if the lock was
/// lost, else 10).
impl From<crate::referee::GameError> for HarnessError {
    fn from(e: crate::referee::GameError) -> HarnessError {
        use crate::referee::GameError;
        match e {
            GameError::LockLost(lost) => HarnessError::LockLost(lost),
            GameError::BoardUnwritable(why) => HarnessError::BoardUnwritable(why),
            GameError::MachineExhausted(why) => HarnessError::MachineExhausted(why),
            GameError::BadGame(why) => HarnessError::Config(why),
        }
    }
}

impl From<StartError> for HarnessError {
    fn from(e: StartError) -> HarnessError {
        match e {
            StartError::Player(why) => HarnessError::PlayerUnavailable(why),
            StartError::MachineExhausted(why) => HarnessError::MachineExhausted(why),
            StartError::Mailbox {
                error: ClearError::LockLost(lost),
                ..
            } => HarnessError::LockLost(lost),
            e @ StartError::Mailbox { .. } => HarnessError::BoardUnwritable(e.to_string()),
        }
    }
}

/// The exit status for any error a command returned.
pub fn exit_code_of(err: &anyhow::Error) -> i32 {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<HarnessError>())
        .map_or(exit::FAILURE, HarnessError::exit_code)
}

#[cfg(test)]
mod config_error_tests {
    use super::*;
    use crate::config::ConfigError;

    #[test]
    fn a_config_error_keeps_its_place_to_the_top_and_exits_3() {
        let cause = ConfigError {
            file: "t.toml".into(),
            line: 7,
            column: 3,
            key: "size".into(),
            message: "must be 4, 6 or 8".into(),
            source_line: "size = 5".into(),
        };
        let err: anyhow::Error = HarnessError::from(cause.clone()).into();
        assert_eq!(exit_code_of(&err), exit::CONFIG);
        match err.downcast_ref::<HarnessError>() {
            Some(HarnessError::ConfigFile(kept)) => assert_eq!(kept, &cause),
            other => panic!("{other:?}"),
        }
        assert_eq!(err.to_string(), cause.to_string());
    }

    #[test]
    fn exit_statuses_come_from_the_kinds_of_lower_errors() {
        use std::path::Path;
        let lost = crate::mailbox::LockLost("no heartbeat for 31.0 s".into());
        let exit_of = |e: HarnessError| exit_code_of(&anyhow::Error::from(e));
        let held = LockError::Held {
            board: "/b".into(),
            owner: None,
            heartbeat_age: std::time::Duration::ZERO,
            stale: std::time::Duration::from_secs(30),
        };
        assert_eq!(exit_of(held.into()), exit::BOARD_LOCKED);
        assert_eq!(
            exit_of(LockError::BadBoard("the board / is the root".into()).into()),
            exit::CONFIG
        );
        let io = LockError::Io(Path::new("/b").into(), std::io::Error::other("EIO"));
        let words = HarnessError::from(io).to_string();
        assert!(words.starts_with("cannot write to the board: "), "{words}");
        assert_eq!(
            exit_of(LockError::Io("/b".into(), std::io::Error::other("EIO")).into()),
            exit::BOARD_UNWRITABLE
        );
        assert_eq!(
            exit_of(MailboxError::LockLost(lost.clone()).into()),
            exit::LOCK_LOST
        );
        assert_eq!(
            exit_of(MailboxError::Symlink("/b/players/x.1".into()).into()),
            exit::BOARD_UNWRITABLE
        );
        let start = |error| StartError::Mailbox {
            id: "x.1".into(),
            error,
        };
        match HarnessError::from(start(ClearError::LockLost(lost.clone()))) {
            HarnessError::LockLost(kept) => assert_eq!(kept, lost),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            exit_of(start(std::io::Error::other("EIO").into()).into()),
            exit::BOARD_UNWRITABLE
        );
        assert_eq!(
            exit_of(StartError::Player("no ruby".into()).into()),
            exit::PLAYER_UNAVAILABLE
        );
    }
}
