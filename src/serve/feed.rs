//! What the live page shows, read from a results folder: the journal
//! (`games.jsonl`, read incrementally from where the last look stopped) and
//! the live files of running games (`live/<id>.jsonl`, see
//! `report::live`) and whether the referee still runs (`referee`), turned
//! into one JSON snapshot that the page renders. Live files count as
//! running games only while the referee runs: one killed leaves its files
//! behind, and the page then shows the run as interrupted, not games that
//! go on forever.
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
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use tokio::sync::watch;

use crate::game::{board_string, replay_transcript, Position};
use crate::rating::sprt::{Decision, Sprt};
use crate::rating::SprtStatus;
use crate::record::GameRecord;
use crate::report::html::crosstable_html;
use crate::report::live::{live_dir, LiveLine};
use crate::report::result_line;
use crate::results::{parse_summary, read_schedule, refusal_message, GAMES_FILE, SCHEDULE_FILE};

use crate::mailbox::{Referee, RefereeWatch};

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
                    g.last = mv.to_string();
                    g.color = color.name().into();
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

/// Where the tournament stands, as the page's status says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    /// No referee, and nothing played or scheduled yet.
    Waiting,
    /// A referee holds the results folder.
    Running,
    /// No referee, and every scheduled game is in (or the SPRT decided,
    /// or the games came without a schedule).
    Finished,
    /// No referee, and scheduled games are left: it was stopped or killed
    /// (resume with the same command).
    Interrupted,
}

/// The SPRT's state, as `run` shows it in its progress.
#[derive(Clone, Debug, Serialize)]
pub struct SprtView {
    /// `LLR 1.23 (-2.94, 2.94) [0, 50]`
    pub note: String,
    /// `H0`, `H1` or `continue`.
    pub decision: &'static str,
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
}

/// Everything the page shows at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub title: String,
    /// Games in the schedule (none before the referee wrote it).
    pub total: Option<usize>,
    pub done: usize,
    /// Estimated seconds left, from the pace of the finished games (only
    /// while a referee runs).
    pub eta_s: Option<u64>,
    pub state: RunState,
    pub referee: Referee,
    /// `state` is `finished`.
    pub finished: bool,
    /// The games that were running when the referee stopped (their live
    /// files left behind); 0 while it runs.
    pub cut_short: usize,
    /// The SPRT of a two-player event, once the schedule asks for one.
    pub sprt: Option<SprtView>,
    /// Only while a referee runs.
    pub running: Vec<RunningGame>,
    /// Newest first.
    pub recent: Vec<FinishedGame>,
    /// `<table id="crosstable">`, markup escaped by `report::html`.
    pub crosstable: String,
    pub players: usize,
    /// For a tournament played in shares: each share, `0-of-4 done (8
    /// games)`, `1-of-4 running (3/8 games)`, `2-of-4 missing`…
    pub shares: Vec<String>,
}

/// The stored schedule, as far as the page needs it.
#[derive(Default)]
struct Schedule {
    stamp: Option<(SystemTime, u64)>,
    title: Option<String>,
    players: Vec<String>,
    total: Option<usize>,
    sprt: Option<Sprt>,
    games: Vec<crate::schedule::ScheduledGame>,
}

/// What was read so far from one folder of records: the results folder
/// itself, or one of its shares (`shards/K-of-N/`, see `crate::shard`),
/// each with its own journal, live files and referee.
struct Part {
    dir: PathBuf,
    journal: Tail,
    /// Lines of the journal read so far (for messages naming a line).
    journal_lines: usize,
    /// Finished games without their moves (the page lists, the report
    /// replays: it reads the journal itself).
    records: Vec<GameRecord>,
    live: BTreeMap<PathBuf, LiveFile>,
    watch: RefereeWatch,
    referee: Referee,
}

/// The state read so far from one results folder (with its shares).
pub struct Reader {
    results: PathBuf,
    /// The folder itself first, then each share found.
    parts: Vec<Part>,
    stale: Option<Duration>,
    schedule: Schedule,
}

impl Reader {
    pub fn new(results: &Path) -> Reader {
        Reader {
            results: results.to_path_buf(),
            parts: Vec::new(),
            stale: None,
            schedule: Schedule::default(),
        }
    }

    /// A reader that judges a referee on another machine gone after its
    /// heartbeat stood still for `stale` (tests).
    pub fn with_stale(results: &Path, stale: Duration) -> Reader {
        Reader {
            stale: Some(stale),
            ..Reader::new(results)
        }
    }

    /// The folders of records: the results folder and its shares.
    fn find_parts(&mut self) {
        let mut dirs = vec![self.results.clone()];
        if let Ok(Some((count, indexes))) = crate::shard::found(&self.results) {
            dirs.extend(
                indexes
                    .into_iter()
                    .map(|index| crate::shard::Share { index, count }.dir(&self.results)),
            );
        }
        for dir in dirs {
            if self.parts.iter().any(|p| p.dir == dir) {
                continue;
            }
            let watch = match self.stale {
                Some(stale) => RefereeWatch::with_stale(&dir.join(crate::results::LOCK_DIR), stale),
                None => RefereeWatch::new(&dir.join(crate::results::LOCK_DIR)),
            };
            self.parts.push(Part {
                dir,
                journal: Tail::default(),
                journal_lines: 0,
                records: Vec::new(),
                live: BTreeMap::new(),
                watch,
                referee: Referee::Absent,
            });
        }
    }

    /// Reads what changed since the last look; true if anything did. The
    /// referee first: a referee that ends writes its last game before it
    /// lets go of the lock, so a look that finds it gone also finds every
    /// game it finished.
    pub fn look(&mut self) -> bool {
        self.find_parts();
        let mut changed = false;
        for part in &mut self.parts {
            let referee = part.watch.look();
            changed |= referee != part.referee;
            part.referee = referee;
        }
        changed |= self.read_schedule();
        for part in &mut self.parts {
            changed |= part.read_journal();
            changed |= part.read_live();
        }
        changed
    }

    /// The referees of all parts as one: running while any runs.
    fn referee(&self) -> Referee {
        let states: Vec<Referee> = self.parts.iter().map(|p| p.referee).collect();
        if states.contains(&Referee::Running) {
            Referee::Running
        } else if states.contains(&Referee::Gone) {
            Referee::Gone
        } else {
            Referee::Absent
        }
    }

    /// Every part's finished games, each game once.
    fn records(&self) -> Vec<GameRecord> {
        let mut seen = std::collections::HashSet::new();
        self.parts
            .iter()
            .flat_map(|p| p.records.iter())
            .filter(|r| seen.insert(r.id.clone()))
            .cloned()
            .collect()
    }

    fn read_schedule(&mut self) -> bool {
        let path = self.results.join(SCHEDULE_FILE);
        let stamp = std::fs::metadata(&path)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if stamp == self.schedule.stamp {
            return false;
        }
        self.schedule.stamp = stamp;
        // One being written is read at the next look (its stamp changes).
        let Ok(Some(stored)) = read_schedule(&self.results) else {
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
        self.schedule.sprt = stored.sprt;
        self.schedule.games = stored.games;
        true
    }
}

impl Part {
    fn read_journal(&mut self) -> bool {
        let path = self.dir.join(GAMES_FILE);
        let lines = match self.journal.read_new(&path) {
            Some(lines) => lines,
            None => {
                // Replaced (or not there yet): start again from its top.
                let had = !self.records.is_empty() || self.journal.offset > 0;
                self.journal = Tail::default();
                self.journal_lines = 0;
                self.records.clear();
                match self.journal.read_new(&path) {
                    Some(lines) => lines,
                    None => return had,
                }
            }
        };
        let before = self.records.len();
        for line in &lines {
            self.journal_lines += 1;
            if line.is_empty() {
                continue;
            }
            // A line that is not a record is `crosstable`'s to report;
            // the page shows the others that the rules' replay accepts.
            match parse_summary(line) {
                Ok((r, Ok(()))) => self.records.push(r),
                Ok((r, Err(why))) => tracing::warn!(
                    "{}",
                    refusal_message(&path, self.journal_lines, &r.id, &why)
                ),
                Err(_) => {}
            }
        }
        self.records.len() != before
    }

    fn read_live(&mut self) -> bool {
        let dir = live_dir(&self.dir);
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

    /// Its running games: only while its referee runs (one that is gone
    /// left its live files behind).
    fn running(&self, finished: &std::collections::HashSet<&str>) -> (Vec<RunningGame>, usize) {
        let games: Vec<RunningGame> = self
            .live
            .values()
            .filter_map(|f| f.game.clone())
            .filter(|g| !finished.contains(g.id.as_str()))
            .collect();
        if self.referee == Referee::Running {
            (games, 0)
        } else {
            (Vec::new(), games.len())
        }
    }
}

impl Reader {
    /// The page's view of what was read.
    pub fn snapshot(&self) -> Snapshot {
        let records = self.records();
        let done = records.len();
        let mut players = self.schedule.players.clone();
        for r in &records {
            for p in [&r.black, &r.white] {
                if !players.contains(p) {
                    players.push(p.clone());
                }
            }
        }
        let mut table = crate::rating::crosstable(&records, &players);
        if let Some(test) = self.schedule.sprt {
            let kept = crate::results::read_sprt_verdict(&self.results)
                .ok()
                .flatten();
            table = table.with_sprt(test, kept.as_ref());
        }
        let mut crosstable = String::new();
        crosstable_html(&mut crosstable, &table, "crosstable");
        let finished_ids: std::collections::HashSet<&str> =
            records.iter().map(|r| r.id.as_str()).collect();
        let mut running = Vec::new();
        let mut cut_short = 0;
        for part in &self.parts {
            let (games, cut) = part.running(&finished_ids);
            running.extend(games);
            cut_short += cut;
        }
        let referee = self.referee();
        if referee == Referee::Running {
            cut_short = 0;
        }
        let recent = records
            .iter()
            .rev()
            .take(RECENT)
            .map(|r| FinishedGame {
                id: r.id.clone(),
                line: result_line(r),
            })
            .collect();
        let total = self.schedule.total;
        let sprt = table.sprt.as_ref().map(sprt_view);
        let decided = table
            .sprt
            .as_ref()
            .is_some_and(|s| s.decision != Decision::Continue);
        let state = if referee == Referee::Running {
            RunState::Running
        } else if total.is_some_and(|t| t > 0 && done >= t)
            || decided
            || (total.is_none() && done > 0)
        {
            RunState::Finished
        } else if total.is_none() {
            RunState::Waiting
        } else {
            RunState::Interrupted
        };
        Snapshot {
            title: self
                .schedule
                .title
                .clone()
                .unwrap_or_else(|| "tournament".into()),
            total,
            done,
            eta_s: total
                .filter(|_| state == RunState::Running)
                .and_then(|t| eta(&records, t)),
            state,
            referee,
            finished: state == RunState::Finished,
            cut_short,
            sprt,
            running,
            recent,
            crosstable,
            players: players.len(),
            shares: self.shares(),
        }
    }

    /// One line per share of the folder (none if it is not played in
    /// shares).
    fn shares(&self) -> Vec<String> {
        let Ok(Some((count, _))) = crate::shard::found(&self.results) else {
            return Vec::new();
        };
        let decided = crate::results::read_sprt_verdict(&self.results)
            .ok()
            .flatten()
            .is_some();
        (0..count)
            .map(|index| {
                let share = crate::shard::Share { index, count };
                let of = share.games(&self.schedule.games).len();
                let dir = share.dir(&self.results);
                let part = self.parts.iter().find(|p| p.dir == dir);
                let games = part.map_or(0, |p| p.records.len());
                let state = match part {
                    Some(p) if p.referee == Referee::Running => {
                        format!("running ({games}/{of} games)")
                    }
                    _ if games >= of || decided => format!("done ({games} games)"),
                    None => "missing".to_string(),
                    Some(p) if p.referee == Referee::Gone => {
                        format!("gone ({games}/{of} games; run it again to resume)")
                    }
                    Some(_) => format!("stopped ({games}/{of} games)"),
                };
                format!("{} {state}", share.name())
            })
            .collect()
    }
}

fn sprt_view(s: &SprtStatus) -> SprtView {
    SprtView {
        note: s.progress_note(),
        decision: s.decision.name(),
        llr: s.llr,
        lower: s.test.lower(),
        upper: s.test.upper(),
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

/// A snapshot as JSON and its number (numbers grow by one per change).
pub type Numbered = (u64, Arc<String>);

/// The latest snapshot, as JSON, numbered; viewers subscribe to it (a
/// `tokio::sync::watch` channel: a viewer that falls behind sees only the
/// newest, and waiting costs no thread).
pub struct Feed {
    latest: watch::Sender<Numbered>,
    reader: Mutex<Reader>,
}

impl Feed {
    /// A feed of `results`, with a first look already taken.
    pub fn new(results: &Path) -> Feed {
        let mut reader = Reader::new(results);
        reader.look();
        let json = serde_json::to_string(&reader.snapshot()).expect("plain values");
        Feed {
            latest: watch::Sender::new((1, Arc::new(json))),
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
        self.latest
            .send_modify(|latest| *latest = (latest.0 + 1, Arc::new(json)));
    }

    /// The current snapshot and its number.
    pub fn latest(&self) -> Numbered {
        self.latest.borrow().clone()
    }

    /// Every snapshot from now on (the current one counts as unseen).
    pub fn subscribe(&self) -> watch::Receiver<Numbered> {
        let mut rx = self.latest.subscribe();
        rx.mark_changed();
        rx
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round `round` of a against b, colours alternating by round.
    fn a_against_b(round: u32) -> crate::schedule::ScheduledGame {
        let (black, white) = if round % 2 == 1 {
            ("a", "b")
        } else {
            ("b", "a")
        };
        crate::schedule::ScheduledGame {
            id: format!("r{round}.{black}.{white}"),
            round,
            black: black.into(),
            white: white.into(),
            opening: String::new(),
        }
    }

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

    /// A live file of game `id` at ply 2 in the results folder `dir`.
    fn live_game(dir: &Path, id: &str) {
        let live = live_dir(dir);
        std::fs::create_dir_all(&live).unwrap();
        let start = LiveLine::Start {
            id: id.into(),
            black: "a".into(),
            white: "b".into(),
            size: 8,
            opening: "f5".into(),
        };
        let mv = LiveLine::Move {
            ply: 2,
            color: crate::game::Color::White,
            mv: crate::game::parse_move("d6", 8).unwrap(),
            ms: 12,
            board: "-".repeat(64),
        };
        let text = format!(
            "{}\n{}\n",
            serde_json::to_string(&start).unwrap(),
            serde_json::to_string(&mv).unwrap()
        );
        std::fs::write(live.join(format!("{id}.jsonl")), text).unwrap();
    }

    /// The results lock, taken as `run` takes it.
    fn take_lock(dir: &Path) -> crate::mailbox::BoardLock {
        crate::results::lock(dir, &crate::mailbox::LockOptions::default()).unwrap()
    }

    /// What a referee killed with its lock held leaves: an owner record
    /// of this machine naming a process that is gone.
    fn leave_dead_owner(dir: &Path) {
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id();
        gone.wait().unwrap();
        let lock = dir
            .join(crate::results::LOCK_DIR)
            .join(crate::mailbox::LOCK_DIR);
        std::fs::create_dir_all(&lock).unwrap();
        let record = crate::mailbox::OwnerRecord {
            token: "dead".into(),
            host: crate::mailbox::hostname(),
            pid,
            started: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            heartbeat: 3,
            board: dir.display().to_string(),
            command: "tournament run".into(),
            stale_ms: 0,
        };
        std::fs::write(lock.join("OWNER"), record.encode()).unwrap();
    }

    #[test]
    fn a_live_file_is_a_running_game_while_the_referee_holds_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        live_game(dir.path(), "r1.a.b");
        let mut r = Reader::new(dir.path());
        let held = take_lock(dir.path());
        assert!(r.look());
        let s = r.snapshot();
        assert_eq!((s.state, s.referee), (RunState::Running, Referee::Running));
        assert_eq!(s.running.len(), 1);
        assert_eq!(s.running[0].ply, 2);
        assert_eq!(s.running[0].last, "d6");
        assert!(!s.finished && s.total.is_none());
        assert!(!r.look(), "nothing new");
        std::fs::remove_file(live_dir(dir.path()).join("r1.a.b.jsonl")).unwrap();
        assert!(r.look());
        assert!(r.snapshot().running.is_empty());
        drop(held);
        assert!(r.look(), "the referee let go");
        assert_eq!(r.snapshot().referee, Referee::Absent);
    }

    #[test]
    fn live_files_left_by_a_killed_referee_show_an_interrupted_run() {
        let dir = tempfile::tempdir().unwrap();
        let games: Vec<crate::schedule::ScheduledGame> = (1..=4)
            .map(|round| crate::schedule::ScheduledGame {
                id: format!("r{round}.a.b"),
                round,
                black: "a".into(),
                white: "b".into(),
                opening: String::new(),
            })
            .collect();
        write_schedule(dir.path(), games, None);
        live_game(dir.path(), "r1.a.b");
        live_game(dir.path(), "r2.a.b");
        leave_dead_owner(dir.path());
        let mut r = Reader::new(dir.path());
        r.look();
        let s = r.snapshot();
        assert_eq!(s.referee, Referee::Gone);
        assert_eq!(s.state, RunState::Interrupted);
        assert!(s.running.is_empty(), "not running: {:?}", s.running);
        assert_eq!(s.cut_short, 2);
        assert_eq!(s.eta_s, None);
        assert!(!s.finished);
        // A new referee takes over: its games run again.
        std::fs::remove_dir_all(dir.path().join(crate::results::LOCK_DIR)).unwrap();
        let _held = take_lock(dir.path());
        assert!(r.look());
        let s = r.snapshot();
        assert_eq!(
            (s.state, s.running.len(), s.cut_short),
            (RunState::Running, 2, 0)
        );
    }

    /// Issue 29: a results folder played in shares is one tournament on
    /// the page: every share's games and running games, each share's state.
    #[test]
    fn the_shares_of_a_folder_are_one_tournament_on_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let game = a_against_b;
        let line = |round: u32| {
            let g = game(round);
            // A real record (the page counts only what the rules replay).
            let mut r = crate::referee::scripted_record(&g.id, 8, [&g.black, &g.white], None);
            r.round = round;
            serde_json::to_string(&r).unwrap() + "\n"
        };
        write_schedule(dir.path(), (1..=4).map(game).collect(), None);
        let share = |k| crate::shard::Share { index: k, count: 2 }.dir(dir.path());
        std::fs::create_dir_all(share(0)).unwrap();
        std::fs::create_dir_all(share(1)).unwrap();
        std::fs::write(share(0).join(GAMES_FILE), line(1) + &line(2)).unwrap();
        live_game(&share(1), "r3.a.b");
        let held = take_lock(&share(1));
        let mut r = Reader::new(dir.path());
        r.look();
        let s = r.snapshot();
        assert_eq!((s.state, s.done, s.total), (RunState::Running, 2, Some(4)));
        assert_eq!(s.running.len(), 1, "share 1's running game");
        assert_eq!(
            s.shares,
            ["0-of-2 done (2 games)", "1-of-2 running (0/2 games)"]
        );
        drop(held);
        std::fs::remove_file(live_dir(&share(1)).join("r3.a.b.jsonl")).unwrap();
        std::fs::write(share(1).join(GAMES_FILE), line(3) + &line(4)).unwrap();
        assert!(r.look());
        let s = r.snapshot();
        assert_eq!((s.state, s.done), (RunState::Finished, 4));
        assert_eq!(s.shares, ["0-of-2 done (2 games)", "1-of-2 done (2 games)"]);
    }

    fn write_schedule(dir: &Path, games: Vec<crate::schedule::ScheduledGame>, sprt: Option<Sprt>) {
        let stored = crate::results::StoredSchedule {
            tournament: "T".into(),
            size: 8,
            games,
            swiss_rounds: None,
            sprt,
            shard: None,
        };
        std::fs::write(
            dir.join(SCHEDULE_FILE),
            serde_json::to_string(&stored).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn the_sprt_is_shown_and_a_decided_one_ends_the_event() {
        let test = Sprt {
            elo0: 0.0,
            elo1: 50.0,
            alpha: 0.05,
            beta: 0.05,
            model: crate::rating::sprt::Model::Normalized,
            repeated_openings: None,
        };
        // 200 scheduled games of a against b, colours alternating by round.
        let scheduled = a_against_b;
        let played = |round: u32| {
            let g = scheduled(round);
            // a wins every game (b is gone at NEW: a real record).
            let b = if g.black == "b" {
                crate::game::Color::Black
            } else {
                crate::game::Color::White
            };
            let mut r = crate::referee::scripted_record(&g.id, 8, [&g.black, &g.white], Some(b));
            r.round = round;
            serde_json::to_string(&r).unwrap() + "\n"
        };
        let journal = |rounds: u32| (1..=rounds).map(played).collect::<String>();
        let dir = tempfile::tempdir().unwrap();
        write_schedule(dir.path(), (1..=200).map(scheduled).collect(), Some(test));

        // One pair: too early to say; no referee, games left: interrupted.
        std::fs::write(dir.path().join(GAMES_FILE), journal(2)).unwrap();
        let mut r = Reader::new(dir.path());
        r.look();
        let s = r.snapshot();
        let sprt = s.sprt.as_ref().expect("the schedule asks for an SPRT");
        assert_eq!(sprt.decision, "continue");
        assert!(sprt.llr > 0.0 && sprt.llr < sprt.upper, "{sprt:?}");
        assert!((sprt.lower + 2.944).abs() < 0.01 && (sprt.upper - 2.944).abs() < 0.01);
        assert_eq!(
            sprt.note,
            format!("LLR {:.2} (-2.94, 2.94) [0, 50]", sprt.llr)
        );
        assert_eq!(s.state, RunState::Interrupted);

        // Thirty pairs all won by a: H1, and the event is over at 60 of 200.
        std::fs::write(dir.path().join(GAMES_FILE), journal(60)).unwrap();
        let mut r = Reader::new(dir.path());
        r.look();
        let s = r.snapshot();
        assert_eq!(s.sprt.as_ref().unwrap().decision, "H1", "{:?}", s.sprt);
        assert_eq!((s.done, s.total), (60, Some(200)));
        assert_eq!(s.state, RunState::Finished);
        assert!(s.finished);
    }

    /// Issue 26: the page counts only records the rules' replay accepts
    /// (the same check as every other reader), read as they are appended.
    #[test]
    fn a_record_the_rules_refuse_is_not_on_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let good = crate::referee::scripted_record("g1", 8, ["a", "b"], None);
        let mut flipped = crate::referee::scripted_record("g2", 8, ["b", "a"], None);
        assert_ne!(flipped.result, crate::record::Winner::Draw);
        flipped.result = match flipped.result {
            crate::record::Winner::Black => crate::record::Winner::White,
            _ => crate::record::Winner::Black,
        };
        let line = |r: &GameRecord| serde_json::to_string(r).unwrap() + "\n";
        let path = dir.path().join(GAMES_FILE);
        std::fs::write(&path, line(&good) + &line(&flipped)).unwrap();
        let mut r = Reader::new(dir.path());
        r.look();
        let ids: Vec<String> = r.records().into_iter().map(|g| g.id).collect();
        assert_eq!(ids, ["g1"]);
        // Appended later, read as it comes: a good record of g2 counts.
        let again = crate::referee::scripted_record("g2", 8, ["b", "a"], None);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, line(&again).as_bytes()).unwrap();
        assert!(r.look());
        let ids: Vec<String> = r.records().into_iter().map(|g| g.id).collect();
        assert_eq!(ids, ["g1", "g2"]);
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
