//! The live view of running games for `tournament watch`: one small
//! JSON-lines file per running game in `<results>/live/`, appended as the
//! game goes and removed when it ends (its record is then in games.jsonl).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventSink};

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
    Move {
        ply: u32,
        color: String,
        #[serde(rename = "move")]
        mv: String,
        ms: u64,
        board: String,
    },
    Forfeit {
        color: String,
        reason: String,
        detail: String,
    },
    End {
        result: String,
        black: u32,
        white: u32,
        reason: String,
        summary: String,
    },
}

/// The live folder inside a results folder.
pub fn live_dir(results: &Path) -> PathBuf {
    results.join("live")
}

pub struct LiveFiles {
    dir: PathBuf,
    open: Mutex<HashMap<String, File>>,
}

impl LiveFiles {
    pub fn new(results: &Path) -> LiveFiles {
        let dir = live_dir(results);
        let _ = std::fs::create_dir_all(&dir);
        LiveFiles {
            dir,
            open: Mutex::new(HashMap::new()),
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
                let path = self.dir.join(format!("{id}.jsonl"));
                if let Ok(f) = OpenOptions::new()
                    .create(true)
                    .write(true)
                    .truncate(true)
                    .open(&path)
                {
                    self.open
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(id.to_string(), f);
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
                mv,
                ms,
                board,
                ..
            } => self.write(
                id,
                &LiveLine::Move {
                    ply: *ply,
                    color: color.name().into(),
                    mv: mv.to_string(),
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
                    color: color.name().into(),
                    mv: "pass".into(),
                    ms: 0,
                    board: board.to_string(),
                },
            ),
            Event::Forfeit {
                id,
                color,
                reason,
                detail,
            } => self.write(
                id,
                &LiveLine::Forfeit {
                    color: color.name().into(),
                    reason: reason.to_string(),
                    detail: detail.to_string(),
                },
            ),
            Event::GameOver { record } => {
                self.write(
                    &record.id,
                    &LiveLine::End {
                        result: record.result.name().into(),
                        black: record.discs_wof.black,
                        white: record.discs_wof.white,
                        reason: record.reason.to_string(),
                        summary: super::result_line(record),
                    },
                );
                self.open
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&record.id);
                let _ = std::fs::remove_file(self.dir.join(format!("{}.jsonl", record.id)));
            }
            Event::Waiting { .. } | Event::Illegal { .. } => {}
        }
    }
}
