//! Where games are played and kept, the same for `run` and `play`: the
//! board's lock taken for a command, the numbers of the players'
//! instances on that board, and the GGF copy of each record.
//!
//! Owns how a command takes a board, which `<name>.<k>` mailbox an
//! instance gets (above every one on the board after a takeover from a
//! referee that may still run), and that a GGF copy that cannot be
//! written is a warning, not a failure. Must not play games; the lock
//! itself is `mailbox::lock`'s, the GGF text `report::ggf`'s.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::error::HarnessError;
use crate::mailbox::{BoardLock, LockOptions};
use crate::record::GameRecord;
use crate::referee::SideTime;

/// Takes the lock of `board` for `command` (as the owner file names it),
/// a lock unchanged for `stale` counting as stale.
pub fn take_board(
    board: &Path,
    stale: Duration,
    command: String,
) -> Result<BoardLock, HarnessError> {
    BoardLock::acquire(
        board,
        &LockOptions {
            stale,
            flock: true,
            command,
            stale_holders: Vec::new(),
        },
    )
    .map_err(HarnessError::from)
}

/// The numbers of the instances made on one board: `<name>.1`, `<name>.2`,
/// … for each player, or above every `<name>.<k>` already on the board
/// when it was taken over from a referee that may still run (whose bots
/// may still answer in theirs).
pub struct Numbering {
    made: HashMap<String, u32>,
    above_existing: bool,
}

impl Numbering {
    /// The numbering on the board `lock` holds.
    pub fn on(lock: &BoardLock) -> Numbering {
        Numbering {
            made: HashMap::new(),
            above_existing: lock.took_over_live(),
        }
    }

    /// Whether the numbers start above the board's existing mailboxes.
    pub fn above_existing(&self) -> bool {
        self.above_existing
    }

    /// The number of `name`'s next instance on `board`.
    pub fn next(&mut self, board: &Path, name: &str) -> u32 {
        let above = self.above_existing;
        let k = self.made.entry(name.to_string()).or_insert_with(|| {
            if above {
                last_instance_on(board, name)
            } else {
                0
            }
        });
        *k += 1;
        *k
    }
}

/// The highest `k` of the `<name>.<k>` mailbox folders on the board (0 if none).
fn last_instance_on(board: &Path, name: &str) -> u32 {
    let prefix = format!("{name}.");
    std::fs::read_dir(board.join(crate::mailbox::PLAYERS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_prefix(&prefix)?
                .parse::<u32>()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

/// Writes the GGF copy of `record` in `results` (with the time controls
/// of a game with a person, which the record does not hold). games.jsonl
/// is the record; the copy is a convenience that `export` can always
/// regenerate, so a failure is only said.
pub fn write_ggf(results: &Path, record: &GameRecord, times: Option<&[SideTime; 2]>) {
    if let Err(e) = crate::report::ggf::write_game_file_timed(results, record, times) {
        tracing::warn!("cannot write the GGF file of {}: {e}", record.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_instance_is_the_highest_of_that_players_folders() {
        let board = tempfile::tempdir().unwrap();
        let players = board.path().join(crate::mailbox::PLAYERS_DIR);
        for dir in ["a.1", "a.3", "ab.7", "a.x", "a", "b.2"] {
            std::fs::create_dir_all(players.join(dir)).unwrap();
        }
        for (name, last) in [("a", 3), ("ab", 7), ("b", 2), ("c", 0)] {
            assert_eq!(last_instance_on(board.path(), name), last, "{name}");
        }
        assert_eq!(last_instance_on(&board.path().join("nowhere"), "a"), 0);
    }

    #[test]
    fn numbers_go_on_per_player_from_one_or_above_the_boards() {
        let board = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(board.path().join(crate::mailbox::PLAYERS_DIR).join("a.4"))
            .unwrap();
        let mut fresh = Numbering {
            made: HashMap::new(),
            above_existing: false,
        };
        let got: Vec<u32> = ["a", "a", "b", "a"]
            .iter()
            .map(|n| fresh.next(board.path(), n))
            .collect();
        assert_eq!(got, [1, 2, 1, 3]);
        let mut above = Numbering {
            made: HashMap::new(),
            above_existing: true,
        };
        let got: Vec<u32> = ["a", "b", "a"]
            .iter()
            .map(|n| above.next(board.path(), n))
            .collect();
        assert_eq!(got, [5, 1, 6]);
    }
}
