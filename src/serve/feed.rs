//! What the live page shows, read from a results folder: the journal
//! (`games.jsonl`, read incrementally from where the last look stopped) and
//! the live files of running games (`live/<id>.jsonl`, see
//! `report::live`), turned into one JSON snapshot that the page renders.
//!
//! Owns the reading and the snapshot. Only reads (the referee may run on
//! another machine and the folder sit on a shared drive, so it polls: a
//! change notification would not see another machine's writes). Complete
//! lines only: a line still being written is read at the next look. Must
//! not compute standings itself (`crate::rating`) nor render the crosstable
//! (`report::html`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::game::{board_string, replay_transcript, Position};
use crate::record::GameRecord;
use crate::report::html::crosstable_html;
use crate::report::live::{live_dir, LiveLine};
use crate::report::result_line;
use crate::results::{GAMES_FILE, SCHEDULE_FILE};

/// How many finished games the page lists.
const RECENT: usize = 12;

/// Bytes of a file read so far, and the unfinished last line.
#[derive(Default)]
struct Tail {
    offset: u64,
    partial: Vec<u8>,
}

impl Tail {
    /// The complete lines appended to `path` since the last call. `None`
    /// when the file shrank or is gone (it was replaced: read it again).
    fn read_new(&mut self, path: &Path) -> Option<Vec<String>> {
        let mut file = File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        if len < self.offset {
            return None;
        }
        if len == self.offset {
            return Some(vec![]);
        }
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut bytes = Vec::new();
        file.take(len - self.offset).read_to_end(&mut bytes).ok()?;
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let mut lines = Vec::new();
        while let Some(at) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=at).collect();
            lines.push(String::from_utf8_lossy(&line).trim().to_string());
        }
        Some(lines)
    }
}

/// A running game as its live file tells it.
#[derive(Clone, Debug, Serialize)]
pub struct RunningGame {
    pub id: String,
    pub black: String,
    pub white: String,
    pub size: u8,
    /// Plies played so far (the opening's included).
    pub ply: u32,
    /// `X`, `O` and `-` per square, row-major from a1.
    pub board: String,
    /// The last move (`d3`, `pass`) and who played it, and its time.
    pub last: String,
    pub color: String,
    pub ms: u64,
    /// A forfeit or the end, once known.
    pub note: String,
}

struct LiveFile {
    tail: Tail,
    game: Option<RunningGame>,
}

impl LiveFile {
    fn apply(&mut self, line: LiveLine) {
        match line {
            LiveLine::Start {
                id,
                black,
                white,
                size,
                opening,
            } => {
                let start = Position::start(size);
                let (ply, board) = match replay_transcript(start, &opening) {
                    Ok((moves, pos)) => (moves.len() as u32, board_string(&pos)),
                    Err(_) => (0, board_string(&start)),
                };
                self.game = Some(RunningGame {
                    id,
                    black,
                    white,
                    size,
                    ply,
                    board,
                    last: String::new(),
                    color: String::new(),
                    ms: 0,
                    note: String::new(),
                });
            }
            LiveLine::Move {
                ply,
                color,
                mv,
                ms,
                board,
            } => {
                if let Some(g) = &mut self.game {
                    g.ply = ply;
                    g.board = board;
                    g.last = mv;
                    g.color = color;
                    g.ms = ms;
                }
            }
            LiveLine::Forfeit {
                color,
                reason,
                detail,
            } => {
                if let Some(g) = &mut self.game {
                    g.note = format!("{color} forfeits ({reason}): {detail}");
                }
            }
            LiveLine::End { summary, .. } => {
                if let Some(g) = &mut self.game {
                    g.note = summary;
                }
            }
        }
    }
}

/// One line of the latest finished games.
#[derive(Clone, Debug, Serialize)]
pub struct FinishedGame {
    pub id: String,
    pub line: String,
}

/// Everything the page shows at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub title: String,
    /// Games in the schedule (none before the referee wrote it).
    pub total: Option<usize>,
    pub done: usize,
    /// Estimated seconds left, from the pace of the finished games.
    pub eta_s: Option<u64>,
    /// Every game of the schedule is in the journal.
    pub finished: bool,
    pub running: Vec<RunningGame>,
    /// Newest first.
    pub recent: Vec<FinishedGame>,
    /// `<table id="crosstable">`, markup escaped by `report::html`.
    pub crosstable: String,
    pub players: usize,
}

/// The stored schedule, as far as the page needs it.
#[derive(Default)]
struct Schedule {
    stamp: Option<(SystemTime, u64)>,
    title: Option<String>,
    players: Vec<String>,
    total: Option<usize>,
}

/// The state read so far from one results folder.
pub struct Reader {
    results: PathBuf,
    journal: Tail,
    /// Finished games without their moves (the page lists, the report
    /// replays: it reads the journal itself).
    records: Vec<GameRecord>,
    live: BTreeMap<PathBuf, LiveFile>,
    schedule: Schedule,
}

impl Reader {
    pub fn new(results: &Path) -> Reader {
        Reader {
            results: results.to_path_buf(),
            journal: Tail::default(),
            records: Vec::new(),
            live: BTreeMap::new(),
            schedule: Schedule::default(),
        }
    }

    /// Reads what changed since the last look; true if anything did.
    pub fn look(&mut self) -> bool {
        let a = self.read_schedule();
        let b = self.read_journal();
        let c = self.read_live();
        a || b || c
    }

    fn read_schedule(&mut self) -> bool {
        #[derive(serde::Deserialize)]
        struct Game {
            black: String,
            white: String,
        }
        #[derive(serde::Deserialize)]
        struct Stored {
            tournament: String,
            games: Vec<Game>,
        }
        let path = self.results.join(SCHEDULE_FILE);
        let stamp = std::fs::metadata(&path)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if stamp == self.schedule.stamp {
            return false;
        }
        self.schedule.stamp = stamp;
        let Some(stored) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Stored>(&t).ok())
        else {
            return false;
        };
        let mut players: Vec<String> = Vec::new();
        for g in &stored.games {
            for p in [&g.black, &g.white] {
                if !players.contains(p) {
                    players.push(p.clone());
                }
            }
        }
        self.schedule.title = Some(stored.tournament);
        self.schedule.players = players;
        self.schedule.total = Some(stored.games.len());
        true
    }

    fn read_journal(&mut self) -> bool {
        let path = self.results.join(GAMES_FILE);
        let lines = match self.journal.read_new(&path) {
            Some(lines) => lines,
            None => {
                // Replaced (or not there yet): start again from its top.
                let had = !self.records.is_empty() || self.journal.offset > 0;
                self.journal = Tail::default();
                self.records.clear();
                match self.journal.read_new(&path) {
                    Some(lines) => lines,
                    None => return had,
                }
            }
        };
        let before = self.records.len();
        for line in lines.iter().filter(|l| !l.is_empty()) {
            // A line that is not a record is `crosstable`'s to report;
            // the page shows the others.
            if let Ok(mut r) = serde_json::from_str::<GameRecord>(line) {
                r.moves = Vec::new();
                r.transcript = String::new();
                self.records.push(r);
            }
        }
        self.records.len() != before
    }

    fn read_live(&mut self) -> bool {
        let dir = live_dir(&self.results);
        let present: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        let before = self.live.len();
        self.live.retain(|p, _| present.contains(p));
        let mut changed = self.live.len() != before;
        for path in present {
            let file = self.live.entry(path.clone()).or_insert_with(|| LiveFile {
                tail: Tail::default(),
                game: None,
            });
            let lines = match file.tail.read_new(&path) {
                Some(lines) => lines,
                None => {
                    // Rewritten for a new game under the same id.
                    file.tail = Tail::default();
                    file.game = None;
                    file.tail.read_new(&path).unwrap_or_default()
                }
            };
            for line in lines {
                if let Ok(l) = serde_json::from_str::<LiveLine>(&line) {
                    file.apply(l);
                    changed = true;
                }
            }
        }
        changed
    }

    /// The page's view of what was read.
    pub fn snapshot(&self) -> Snapshot {
        let done = self.records.len();
        let mut players = self.schedule.players.clone();
        for r in &self.records {
            for p in [&r.black, &r.white] {
                if !players.contains(p) {
                    players.push(p.clone());
                }
            }
        }
        let table = crate::rating::crosstable(&self.records, &players);
        let mut crosstable = String::new();
        crosstable_html(&mut crosstable, &table, "crosstable");
        let finished_ids: std::collections::HashSet<&str> =
            self.records.iter().map(|r| r.id.as_str()).collect();
        let running: Vec<RunningGame> = self
            .live
            .values()
            .filter_map(|f| f.game.clone())
            .filter(|g| !finished_ids.contains(g.id.as_str()))
            .collect();
        let recent = self
            .records
            .iter()
            .rev()
            .take(RECENT)
            .map(|r| FinishedGame {
                id: r.id.clone(),
                line: result_line(r),
            })
            .collect();
        let total = self.schedule.total;
        let finished = total.is_some_and(|t| t > 0 && done >= t) && running.is_empty();
        Snapshot {
            title: self
                .schedule
                .title
                .clone()
                .unwrap_or_else(|| "tournament".into()),
            total,
            done,
            eta_s: total.and_then(|t| eta(&self.records, t)),
            finished,
            running,
            recent,
            crosstable,
            players: players.len(),
        }
    }
}

/// Seconds left at the pace of the journal: games finished per second of
/// the referee's own clock (first start to last finish; both times are its).
fn eta(records: &[GameRecord], total: usize) -> Option<u64> {
    let left = total.checked_sub(records.len())?;
    if left == 0 {
        return Some(0);
    }
    let parse = |t: &str| humantime::parse_rfc3339_weak(t).ok();
    let first = records.iter().filter_map(|r| parse(&r.started)).min()?;
    let last = records.iter().filter_map(|r| parse(&r.finished)).max()?;
    let span = last.duration_since(first).ok()?.as_secs_f64().max(0.001);
    let per_game = span / records.len() as f64;
    Some((per_game * left as f64).round() as u64)
}

/// The latest snapshot, as JSON, numbered; viewers wait on it.
pub struct Feed {
    latest: Mutex<(u64, Arc<String>)>,
    changed: Condvar,
    reader: Mutex<Reader>,
}

impl Feed {
    /// A feed of `results`, with a first look already taken.
    pub fn new(results: &Path) -> Feed {
        let mut reader = Reader::new(results);
        reader.look();
        let json = serde_json::to_string(&reader.snapshot()).expect("plain values");
        Feed {
            latest: Mutex::new((1, Arc::new(json))),
            changed: Condvar::new(),
            reader: Mutex::new(reader),
        }
    }

    /// Looks at the folder; publishes a new snapshot if anything changed.
    pub fn refresh(&self) {
        let json = {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            if !reader.look() {
                return;
            }
            serde_json::to_string(&reader.snapshot()).expect("plain values")
        };
        let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        *latest = (latest.0 + 1, Arc::new(json));
        self.changed.notify_all();
    }

    /// The current snapshot and its number.
    pub fn latest(&self) -> (u64, Arc<String>) {
        self.latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The first snapshot newer than number `seen`, waiting at most
    /// `timeout` for it.
    pub fn newer_than(&self, seen: u64, timeout: Duration) -> Option<(u64, Arc<String>)> {
        let guard = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |l| l.0 <= seen)
            .unwrap_or_else(|e| e.into_inner());
        (guard.0 > seen).then(|| guard.clone())
    }

    /// The tournament's name, as its stored schedule gives it.
    pub fn title(&self) -> String {
        let reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        reader
            .schedule
            .title
            .clone()
            .unwrap_or_else(|| "tournament".into())
    }

    /// Wakes every waiting viewer (when the server stops).
    pub fn wake_all(&self) {
        let _guard = self.latest.lock().unwrap_or_else(|e| e.into_inner());
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_returns_complete_lines_only_and_notices_a_shorter_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        std::fs::write(&p, "one\ntw").unwrap();
        let mut t = Tail::default();
        assert_eq!(t.read_new(&p).unwrap(), vec!["one".to_string()]);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, b"o\nthree\n").unwrap();
        assert_eq!(
            t.read_new(&p).unwrap(),
            vec!["two".to_string(), "three".to_string()]
        );
        assert_eq!(t.read_new(&p).unwrap(), Vec::<String>::new());
        std::fs::write(&p, "x\n").unwrap();
        assert!(t.read_new(&p).is_none(), "a shorter file was replaced");
        assert!(Tail::default().read_new(&dir.path().join("none")).is_none());
    }

    #[test]
    fn a_live_file_becomes_a_running_game_and_its_removal_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let live = live_dir(dir.path());
        std::fs::create_dir_all(&live).unwrap();
        let start = LiveLine::Start {
            id: "r1.a.b".into(),
            black: "a".into(),
            white: "b".into(),
            size: 8,
            opening: "f5".into(),
        };
        let mv = LiveLine::Move {
            ply: 2,
            color: "white".into(),
            mv: "d6".into(),
            ms: 12,
            board: "-".repeat(64),
        };
        let text = format!(
            "{}\n{}\n",
            serde_json::to_string(&start).unwrap(),
            serde_json::to_string(&mv).unwrap()
        );
        std::fs::write(live.join("r1.a.b.jsonl"), text).unwrap();
        let mut r = Reader::new(dir.path());
        assert!(r.look());
        let s = r.snapshot();
        assert_eq!(s.running.len(), 1);
        assert_eq!(s.running[0].ply, 2);
        assert_eq!(s.running[0].last, "d6");
        assert!(!s.finished && s.total.is_none());
        assert!(!r.look(), "nothing new");
        std::fs::remove_file(live.join("r1.a.b.jsonl")).unwrap();
        assert!(r.look());
        assert!(r.snapshot().running.is_empty());
    }

    #[test]
    fn the_eta_follows_the_pace_of_the_journal() {
        let game = |started: &str, finished: &str| {
            let mut r =
                crate::rating::tests::game("a", "b", crate::record::Winner::Black, (40, 24));
            r.started = started.into();
            r.finished = finished.into();
            r
        };
        let records = vec![
            game("2026-01-01T10:00:00Z", "2026-01-01T10:00:10Z"),
            game("2026-01-01T10:00:10Z", "2026-01-01T10:00:20Z"),
        ];
        assert_eq!(eta(&records, 5), Some(30));
        assert_eq!(eta(&records, 2), Some(0));
        assert_eq!(eta(&[], 2), None);
    }
}
