//! The live view of running games for `tournament watch`: one small
//! JSON-lines file per running game in `<results>/live/`, appended as the
//! game goes and removed when it ends (its record is then in games.jsonl).
//!
//! Removes only its own files: those it created (checked by identity
//! before removing), and at the start of a run the leftovers of a stopped
//! one (a scheduled game's name, starting with that game's `start` line,
//! or holding no more than its beginning: a referee killed as it made it).
//! Anything else a user put there is left alone, and never overwritten.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventSink};
use crate::game::{Color, Move};
use crate::record::{EndReason, Winner};

/// One line of a live file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum LiveLine {
    Start {
        id: String,
        black: String,
        white: String,
        size: u8,
        opening: String,
    },
    /// A move or a pass (`"move":"pass"`, no time).
    Move {
        ply: u32,
        color: Color,
        #[serde(rename = "move")]
        mv: Move,
        ms: u64,
        board: String,
    },
    Forfeit {
        color: Color,
        reason: EndReason,
        detail: String,
    },
    End {
        result: Winner,
        black: u32,
        white: u32,
        reason: EndReason,
        summary: String,
    },
}

/// The live folder inside a results folder.
pub fn live_dir(results: &Path) -> PathBuf {
    results.join("live")
}

/// The live file of game `id` inside the live folder `dir`.
fn live_file(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.jsonl"))
}

/// The first line of the live file at `path`, if it is a regular file
/// (not a link) whose first line (read up to 64 KiB) is a live line.
pub fn first_line(path: &Path) -> Option<LiveLine> {
    serde_json::from_str(&head(path)?).ok()
}

/// The first line of the regular file (not a link) at `path`, with its
/// newline if it has one, read up to 64 KiB.
fn head(path: &Path) -> Option<String> {
    use std::io::{BufRead, BufReader, Read};
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let file = crate::input_file::open_regular(path).ok()?;
    let mut first = String::new();
    BufReader::new(file.take(64 * 1024))
        .read_line(&mut first)
        .ok()?;
    Some(first)
}

/// How game `id`'s `start` line begins (its tag, then its id).
fn start_tag(id: &str) -> String {
    let id = serde_json::to_string(id).expect("serializes");
    format!(r#"{{"event":"start","id":{id}"#)
}

/// Whether `path` is a live file this program wrote for game `id`: its
/// first line is that game's `start`, or it holds no more than the start
/// of that line (empty, or cut: a referee killed as it made the file).
fn is_ours(path: &Path, id: &str) -> bool {
    let Some(first) = head(path) else {
        return false;
    };
    if first.ends_with('\n') {
        return matches!(serde_json::from_str(&first), Ok(LiveLine::Start { id: i, .. }) if i == id);
    }
    let tag = start_tag(id);
    tag.starts_with(&first) || first.starts_with(&tag)
}

/// Removes the live files a stopped run left for the games of `ids` (they
/// are played again from the start); anything else in the folder stays.
pub fn remove_stale<'a>(results: &Path, ids: impl IntoIterator<Item = &'a str>) {
    let dir = live_dir(results);
    for id in ids {
        remove_leftover(&live_file(&dir, id), id, true);
    }
}

/// Removes the live file at `path` a stopped run left for game `id`, if
/// it is one; if `retry`, tried again for a second while the drive says
/// someone holds it: on a Windows share through FUSE (smbnetfs) our own
/// look at its first line may still hold it, its close being finished
/// after `close` returns. Whether the name is free now.
fn remove_leftover(path: &Path, id: &str, retry: bool) -> bool {
    use crate::mailbox::drive;
    if !is_ours(path, id) {
        return false;
    }
    let removed = if retry {
        drive::retrying(|| std::fs::remove_file(path))
    } else {
        std::fs::remove_file(path)
    };
    match removed {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(
                "cannot remove the live file a stopped run left, {}: {e}",
                path.display()
            );
            false
        }
    }
}

/// Removes the live file `path` if the name still holds the file `id`
/// (ours). Gives it back if a reader held it open and the drive would not
/// remove it then (a Windows share), trying for a second first if `retry`.
fn remove_ours(path: PathBuf, id: (u64, u64), retry: bool) -> Option<(PathBuf, (u64, u64))> {
    use crate::mailbox::drive;
    let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| identity(&m) == id);
    if !ours {
        return None;
    }
    let removed = if retry {
        drive::retrying(|| std::fs::remove_file(&path))
    } else {
        std::fs::remove_file(&path)
    };
    match removed {
        Err(e) if drive::is_sharing_violation(&e) => Some((path, id)),
        _ => None,
    }
}

/// (device, inode) of an open file or a path, to remove only our own.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

pub struct LiveFiles {
    dir: PathBuf,
    open: Mutex<HashMap<String, File>>,
    /// Files of finished games that could not be removed because a reader
    /// held them open (a Windows share refuses then), with their identity:
    /// tried again at the next game's end and at the end of the run.
    unremoved: Mutex<Vec<(PathBuf, (u64, u64))>>,
}

impl LiveFiles {
    pub fn new(results: &Path) -> LiveFiles {
        let dir = live_dir(results);
        let _ = std::fs::create_dir(&dir);
        LiveFiles {
            dir,
            open: Mutex::new(HashMap::new()),
            unremoved: Mutex::new(Vec::new()),
        }
    }

    fn write(&self, id: &str, line: &LiveLine) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = open.get_mut(id) {
            let mut text = serde_json::to_string(line).expect("serializes");
            text.push('\n');
            let _ = f.write_all(text.as_bytes());
        }
    }
}

impl Drop for LiveFiles {
    fn drop(&mut self) {
        let unremoved = self.unremoved.get_mut().unwrap_or_else(|e| e.into_inner());
        for (path, id) in std::mem::take(unremoved) {
            remove_ours(path, id, true);
        }
    }
}

impl EventSink for LiveFiles {
    fn emit(&self, event: &Event<'_>) {
        match event {
            Event::GameStarted {
                id,
                black,
                white,
                size,
                opening,
                ..
            } => {
                // A new file, never one that is there: a user's file (or a
                // link) of that name stays as it is, and the game has no
                // live view. A stopped run's file of this game that could
                // not be removed at the start is removed now if it can be
                // at once (a game's start is not held up).
                let path = live_file(&self.dir, id);
                let mut opts = OpenOptions::new();
                opts.write(true).create_new(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    opts.custom_flags(libc::O_NOFOLLOW);
                }
                let created = match opts.open(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        if remove_leftover(&path, id, false) {
                            opts.open(&path)
                        } else {
                            Err(e)
                        }
                    }
                    other => other,
                };
                match created {
                    Ok(f) => {
                        self.open
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id.to_string(), f);
                    }
                    Err(e) => tracing::warn!(
                        "no live view of game {id} for `watch`: cannot create {}: {e}",
                        path.display()
                    ),
                }
                self.write(
                    id,
                    &LiveLine::Start {
                        id: id.to_string(),
                        black: black.to_string(),
                        white: white.to_string(),
                        size: *size,
                        opening: opening.to_string(),
                    },
                );
            }
            Event::Move {
                id,
                ply,
                color,
                square,
                ms,
                board,
                ..
            } => self.write(
                id,
                &LiveLine::Move {
                    ply: *ply,
                    color: *color,
                    mv: Move::Play(*square),
                    ms: *ms,
                    board: board.to_string(),
                },
            ),
            Event::Pass {
                id,
                ply,
                color,
                board,
                ..
            } => self.write(
                id,
                &LiveLine::Move {
                    ply: *ply,
                    color: *color,
                    mv: Move::Pass,
                    ms: 0,
                    board: board.to_string(),
                },
            ),
            Event::Forfeit {
                id,
                color,
                reason,
                detail,
                ..
            } => self.write(
                id,
                &LiveLine::Forfeit {
                    color: *color,
                    reason: *reason,
                    detail: detail.to_string(),
                },
            ),
            Event::GameOver { record } => {
                self.write(
                    &record.id,
                    &LiveLine::End {
                        result: record.result,
                        black: record.discs_wof.black,
                        white: record.discs_wof.white,
                        reason: record.reason,
                        summary: super::result_line(record),
                    },
                );
                let mine = self
                    .open
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&record.id);
                // Removed only if the name still holds the file we wrote;
                // closed first (on a Windows share our own hold would keep
                // it). One a reader holds is removed later.
                if let Some(id) = mine.and_then(|f| f.metadata().ok()).map(|m| identity(&m)) {
                    let mut unremoved = self.unremoved.lock().unwrap_or_else(|e| e.into_inner());
                    let mut still: Vec<_> = std::mem::take(&mut *unremoved)
                        .into_iter()
                        .filter_map(|(path, id)| remove_ours(path, id, false))
                        .collect();
                    still.extend(remove_ours(live_file(&self.dir, &record.id), id, false));
                    *unremoved = still;
                }
            }
            Event::Waiting { .. } | Event::Illegal { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_move;

    /// Live lines as the version before typed colours and moves wrote them:
    /// the first three copied from a live file of `tournament run` (6×6,
    /// a Python bot), the forfeit and the end as its `LiveLine` wrote them
    /// (a line that is removed with its file at once).
    const WRITTEN_BEFORE: [&str; 5] = [
        r#"{"event":"start","id":"r01.greedy.slow-python","black":"greedy","white":"slow-python","size":6,"opening":"c2d2"}"#,
        r#"{"event":"move","ply":3,"color":"black","move":"e2","ms":0,"board":"--------XXX---XX----XO--------------"}"#,
        r#"{"event":"move","ply":9,"color":"black","move":"pass","ms":0,"board":"---O-O--XXXO--XX-O--XXX-------------"}"#,
        r#"{"event":"forfeit","color":"white","reason":"no-flips","detail":"answered \"a1\": move flips no disc"}"#,
        r#"{"event":"end","result":"black","black":36,"white":0,"reason":"no-flips","summary":"greedy (black) beat slow-python (white) 36-0 (no-flips)"}"#,
    ];

    fn started(id: &str) -> Event<'_> {
        Event::GameStarted {
            id,
            round: 1,
            black: "a",
            white: "b",
            size: 6,
            opening: "",
        }
    }

    /// A live file a stopped run left (not removed at the start: on a
    /// Windows share our own look may hold it for a moment) is replaced
    /// when its game starts again; a user's file of a game's name is not.
    #[test]
    fn a_stopped_runs_live_file_is_replaced_when_its_game_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let live = LiveFiles::new(dir.path());
        let left = live_file(&live.dir, "r1.a.b");
        let stale = WRITTEN_BEFORE[0].replace("r01.greedy.slow-python", "r1.a.b") + "\n";
        std::fs::write(&left, stale + WRITTEN_BEFORE[1] + "\n").unwrap();
        // Killed as it made the file: empty, or its start line cut.
        let empty = live_file(&live.dir, "r3.a.b");
        std::fs::write(&empty, "").unwrap();
        let cut = live_file(&live.dir, "r4.a.b");
        std::fs::write(&cut, r#"{"event":"start","id":"r4.a.b","bl"#).unwrap();
        let users = live_file(&live.dir, "r2.a.b");
        std::fs::write(&users, "my notes\n").unwrap();
        // Another game's start (cut) or a line with no newline of a user's.
        let other = live_file(&live.dir, "r5.a.b");
        std::fs::write(&other, r#"{"event":"start","id":"r5.a.bc""#).unwrap();
        let unended = live_file(&live.dir, "r6.a.b");
        std::fs::write(&unended, "notes").unwrap();

        for id in ["r1.a.b", "r2.a.b", "r3.a.b", "r4.a.b", "r5.a.b", "r6.a.b"] {
            live.emit(&started(id));
        }

        for (path, id) in [(&left, "r1.a.b"), (&empty, "r3.a.b"), (&cut, "r4.a.b")] {
            let now = std::fs::read_to_string(path).unwrap();
            assert_eq!(now.lines().count(), 1, "{now}");
            assert!(matches!(first_line(path), Some(LiveLine::Start { id: i, .. }) if i == id));
        }
        assert_eq!(std::fs::read_to_string(&users).unwrap(), "my notes\n");
        assert_eq!(
            std::fs::read_to_string(&other).unwrap(),
            r#"{"event":"start","id":"r5.a.bc""#
        );
        assert_eq!(std::fs::read_to_string(&unended).unwrap(), "notes");
        let open = live.open.lock().unwrap();
        assert!(["r2.a.b", "r5.a.b", "r6.a.b"]
            .iter()
            .all(|id| !open.contains_key(*id)));
    }

    /// The tag a cut file is known by is how a start line begins.
    #[test]
    fn a_start_line_begins_with_its_games_start_tag() {
        let line = LiveLine::Start {
            id: "r1.\"a\".b".into(),
            black: "a".into(),
            white: "b".into(),
            size: 8,
            opening: String::new(),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.starts_with(&start_tag("r1.\"a\".b")), "{text}");
        assert!(text.len() > start_tag("r1.\"a\".b").len());
    }

    #[test]
    fn live_lines_of_the_previous_version_read_typed_and_write_back_byte_for_byte() {
        let lines: Vec<LiveLine> = WRITTEN_BEFORE
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for (line, text) in lines.iter().zip(WRITTEN_BEFORE) {
            assert_eq!(serde_json::to_string(line).unwrap(), text);
        }
        assert!(matches!(
            &lines[1],
            LiveLine::Move { color: Color::Black, mv, .. } if *mv == parse_move("e2", 6).unwrap()
        ));
        assert!(matches!(
            lines[2],
            LiveLine::Move {
                color: Color::Black,
                mv: Move::Pass,
                ..
            }
        ));
        assert!(matches!(
            lines[3],
            LiveLine::Forfeit {
                color: Color::White,
                reason: EndReason::NoFlips,
                ..
            }
        ));
        assert!(matches!(
            lines[4],
            LiveLine::End {
                result: Winner::Black,
                reason: EndReason::NoFlips,
                ..
            }
        ));
    }
}
