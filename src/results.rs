//! The results folder: `games.jsonl`, one finished game per line, appended
//! and flushed as each game ends, plus the schedule it belongs to.
//!
//! Owns the files and their integrity: a line is written whole or not at
//! all (a failed write is cut back), a half line left by a crash is removed
//! on open, and a results folder never mixes two schedules. Knows nothing
//! about how games are played.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::HarnessError;
use crate::record::{check_game, GameRecord, MoveRecord, Refusal};
use crate::schedule::ScheduledGame;

/// The results file inside the results folder.
pub const GAMES_FILE: &str = "games.jsonl";
/// The schedule the results belong to.
pub const SCHEDULE_FILE: &str = "schedule.json";

/// What is stored next to the results to recognise the schedule.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredSchedule {
    pub tournament: String,
    pub size: u8,
    /// For a Swiss event: the first round (the later ones follow from the
    /// results).
    pub games: Vec<ScheduledGame>,
    /// The rounds of a Swiss event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swiss_rounds: Option<u32>,
    /// The SPRT of a two-player event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<crate::rating::sprt::Sprt>,
    /// In a share's folder (`shards/K-of-N/`): which share of the
    /// tournament its games are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Share>,
}

/// Append-only store of finished games.
#[derive(Debug)]
pub struct ResultStore {
    dir: PathBuf,
    path: PathBuf,
    file: File,
    /// Opened with `O_APPEND` (else, where the drive refuses it, each line
    /// is written at the end this store keeps).
    appends: bool,
}

/// Markers of finished games, one empty file per game id.
pub const DONE_DIR: &str = "done";
/// How long a resume waits for a drive to show what it caches.
pub const STALE_VIEW_WAIT: Duration = Duration::from_secs(45);
/// Where cut last lines of games.jsonl are set aside (appended).
pub const CUT_FILE: &str = "games.cut.jsonl";

fn unwritable(path: &Path, error: io::Error) -> HarnessError {
    HarnessError::results_unwritable(path, error)
}

/// Reads every record of a games file (see [`scan`] for what is skipped).
/// Errors name file and line.
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>, HarnessError> {
    Ok(unnumbered(scan(path, parse_whole)?))
}

/// A line read: the record, and whether it follows from its moves by the
/// rules (see [`crate::record::check_game`]).
pub type Checked = (GameRecord, Result<(), Refusal>);

/// A whole record, checked.
fn parse_whole(line: &str) -> serde_json::Result<Checked> {
    serde_json::from_str::<GameRecord>(line).map(|r| {
        let verdict = r.check();
        (r, verdict)
    })
}

/// A record as read for standings: its moves (to be checked, not kept:
/// typed, they cost no allocation each) and its transcript borrowed from
/// the line, and everything else.
#[derive(serde::Deserialize)]
struct Summary<'a> {
    id: String,
    round: u32,
    black: String,
    white: String,
    size: u8,
    opening: String,
    moves: Vec<MoveRecord>,
    result: crate::record::Winner,
    reason: crate::record::EndReason,
    #[serde(default)]
    forfeit: Option<crate::record::Forfeit>,
    discs: crate::record::DiscCount,
    discs_wof: crate::record::DiscCount,
    #[serde(borrow)]
    transcript: Cow<'a, str>,
    started: String,
    finished: String,
    time_ms: crate::record::DiscCount,
    #[serde(default)]
    swiss_round: Option<u32>,
    #[serde(default)]
    people: Vec<String>,
}

/// A record without its moves and transcript (checked with them).
pub fn parse_summary(line: &str) -> serde_json::Result<Checked> {
    let s = serde_json::from_str::<Summary>(line)?;
    let record = GameRecord {
        id: s.id,
        round: s.round,
        black: s.black,
        white: s.white,
        size: s.size,
        opening: s.opening,
        moves: Vec::new(),
        result: s.result,
        reason: s.reason,
        forfeit: s.forfeit,
        discs: s.discs,
        discs_wof: s.discs_wof,
        transcript: String::new(),
        started: s.started,
        finished: s.finished,
        time_ms: s.time_ms,
        swiss_round: s.swiss_round,
        people: s.people,
    };
    let verdict = check_game(&record, &s.transcript, &s.moves);
    Ok((record, verdict))
}

/// Like [`read_records`], but each record comes without its moves and
/// transcript: what crosstables need, read about twice as fast.
pub fn read_summaries(path: &Path) -> Result<Vec<GameRecord>, HarnessError> {
    Ok(unnumbered(scan(path, parse_summary)?))
}

/// The records of the results folder `dir` (whole, or as summaries),
/// refused if one has the id of a game of the folder's `schedule.json`
/// (when there is one) but is another game (other size, players, round or
/// opening). Games with ids the schedule does not have (`play --json`
/// records gathered by hand) are read as they are; `run` refuses them.
///
/// A results folder played in shares (`shards/K-of-N/`, see
/// [`crate::shard`]) is read as one tournament: every share's records
/// (and the folder's own `games.jsonl`, if any), each checked against the
/// folder's schedule, a game recorded twice counted once, in the
/// schedule's order.
pub fn read_results(dir: &Path, whole: bool) -> Result<Vec<GameRecord>, HarnessError> {
    let shares = found_shares(dir)?;
    if shares.is_none() {
        return read_one_folder(dir, whole);
    }
    let mut records = read_one_folder(dir, whole)?;
    for share in shares.into_iter().flatten() {
        let share_dir = share.dir(dir);
        let path = share_dir.join(GAMES_FILE);
        let scanned = scan_records(&path, whole)?;
        if let Some(stored) = read_schedule(dir)? {
            check_records(&path, scanned.every_line(), &stored, false)?;
        }
        records.extend(unnumbered(scanned));
    }
    let mut seen = std::collections::HashSet::new();
    records.retain(|r| seen.insert(r.id.clone()));
    if let Some(stored) = read_schedule(dir)? {
        let order: std::collections::HashMap<&str, usize> = stored
            .games
            .iter()
            .enumerate()
            .map(|(i, g)| (g.id.as_str(), i))
            .collect();
        records.sort_by_key(|r| order.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
    }
    Ok(records)
}

/// Whether `dir` has any record to read: its `games.jsonl`, or a share's.
pub fn has_games(dir: &Path) -> bool {
    dir.join(GAMES_FILE).exists()
        || found_shares(dir)
            .ok()
            .flatten()
            .is_some_and(|s| s.iter().any(|s| s.dir(dir).join(GAMES_FILE).exists()))
}

/// The shares that have a folder in `dir/shards/`, if any.
pub fn found_shares(dir: &Path) -> Result<Option<Vec<crate::shard::Share>>, HarnessError> {
    let found = crate::shard::found(dir).map_err(|e| HarnessError::ScheduleChanged(e.0))?;
    Ok(found.map(|(count, indexes)| {
        indexes
            .into_iter()
            .map(|index| crate::shard::Share { index, count })
            .collect()
    }))
}

/// What every share of the results folder `dir` is doing (done, running,
/// stopped, missing), if it is played in shares.
pub fn share_states(dir: &Path) -> Result<Option<Vec<crate::shard::ShareStatus>>, HarnessError> {
    let Some((count, _)) =
        crate::shard::found(dir).map_err(|e| HarnessError::ScheduleChanged(e.0))?
    else {
        return Ok(None);
    };
    let stored = read_schedule(dir)?;
    // A Swiss schedule lists its first round; a share plays as many games
    // of every round.
    let rounds = stored
        .as_ref()
        .and_then(|s| s.swiss_rounds)
        .unwrap_or(1)
        .max(1) as usize;
    let games = stored.map(|s| s.games).unwrap_or_default();
    let decided = read_sprt_verdict(dir)?.is_some();
    let mut out = Vec::new();
    for index in 0..count {
        let share = crate::shard::Share { index, count };
        let share_dir = share.dir(dir);
        let of = share.games(&games).len() * rounds;
        let recorded = scan(&share_dir.join(GAMES_FILE), parse_summary)?
            .records
            .len();
        out.push(crate::shard::state_of(
            share,
            share_dir.is_dir(),
            recorded,
            of,
            &share_dir.join(LOCK_DIR),
            decided,
        ));
    }
    Ok(Some(out))
}

fn scan_records(path: &Path, whole: bool) -> Result<Scanned, HarnessError> {
    if whole {
        scan(path, parse_whole)
    } else {
        scan(path, parse_summary)
    }
}

/// The records of one folder's own `games.jsonl`, checked against its
/// `schedule.json`.
fn read_one_folder(dir: &Path, whole: bool) -> Result<Vec<GameRecord>, HarnessError> {
    let path = dir.join(GAMES_FILE);
    let scanned = if whole {
        scan(&path, parse_whole)?
    } else {
        scan(&path, parse_summary)?
    };
    if let Some(stored) = read_schedule(dir)? {
        check_records(&path, scanned.every_line(), &stored, false)?;
    }
    Ok(unnumbered(scanned))
}

/// The longest line read from a games file (a record is a few KB).
const MAX_RECORD_LINE: u64 = 4 * 1024 * 1024;

/// A game id as the schedule makes them (`r1.alice.bob`): letters, digits,
/// `.`, `-` and `_`, not starting with a dot, at most 200 characters. Ids
/// become file names (`done/<id>`, `live/<id>.jsonl`, `logs/<id>.log`).
pub fn check_game_id(id: &str) -> Result<(), String> {
    if id.is_empty()
        || id.len() > 200
        || id.starts_with('.')
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(format!(
            "`{id}` is not a game id (letters, digits, `.`, `-` and `_`, not starting with a dot, like r01.alice.bob)"
        ));
    }
    Ok(())
}

/// What [`scan`] found: the records with their line numbers, the lines
/// refused by the rules' replay (checked against the schedule all the
/// same: a record of another tournament stops a run whatever its moves),
/// and a cut last line if
/// there is one.
struct Scanned {
    records: Vec<(usize, GameRecord)>,
    refused: Vec<(usize, GameRecord)>,
    cut: Option<Cut>,
}

/// A last line that is not a whole record: where it starts.
#[derive(Debug, Clone, Copy)]
struct Cut {
    line: usize,
    offset: u64,
}

impl Scanned {
    /// Every record read, counted or refused, in the file's order.
    fn every_line(&self) -> Vec<&(usize, GameRecord)> {
        let mut all: Vec<_> = self.records.iter().chain(&self.refused).collect();
        if !self.refused.is_empty() {
            all.sort_by_key(|(n, _)| *n);
        }
        all
    }
}

fn unnumbered(scanned: Scanned) -> Vec<GameRecord> {
    scanned.records.into_iter().map(|(_, r)| r).collect()
}

/// Reads a games file: one record per line. Every record is replayed by
/// the rules ([`crate::record::check_game`]); one that does not follow
/// from its moves is skipped with a warning naming file, line and what is
/// wrong (it is not counted, and does not hide a later record of its
/// game). A second record of the same
/// id is skipped with a warning naming both lines (the first is kept). A
/// last line that is not a whole record (no newline, or not JSON: a write
/// cut short, a cut copy) is not a record: a warning says so, and
/// [`ResultStore::open`] sets it aside. Any other bad line, or an id that
/// is not a game id, is an error naming file and line. Only a regular file
/// is read (a FIFO or a device is refused at once).
fn scan(
    path: &Path,
    parse: impl Fn(&str) -> serde_json::Result<Checked>,
) -> Result<Scanned, HarnessError> {
    let file = match crate::input_file::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Scanned {
                records: vec![],
                refused: vec![],
                cut: None,
            })
        }
        Err(e) => {
            return Err(HarnessError::Config(format!(
                "{}: cannot read it: {e}",
                path.display()
            )))
        }
    };
    let bad =
        |n: usize, what: String| HarnessError::Config(format!("{}:{n}: {what}", path.display()));
    let mut records = Vec::new();
    let mut refused = Vec::new();
    let mut first_line: std::collections::HashMap<String, usize> = Default::default();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut n = 0;
    let mut offset = 0u64;
    let mut cut = None;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_RECORD_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| unwritable(path, e))?;
        if read == 0 {
            break;
        }
        n += 1;
        let at_end = reader
            .fill_buf()
            .map_err(|e| unwritable(path, e))?
            .is_empty();
        let whole = line.ends_with(b"\n");
        if !whole && !at_end {
            return Err(bad(
                n,
                format!("a line longer than {MAX_RECORD_LINE} bytes is not a game record"),
            ));
        }
        let text = String::from_utf8_lossy(&line);
        let parsed = if text.trim().is_empty() {
            None
        } else {
            Some(parse(&text))
        };
        match parsed {
            None if whole => {}
            Some(Ok((rec, verdict))) if whole => {
                check_game_id(&rec.id).map_err(|m| bad(n, m))?;
                if let Err(why) = verdict {
                    tracing::warn!("{}", refusal_message(path, n, &rec.id, &why));
                    refused.push((n, rec));
                } else if let Some(first) = first_line.get(&rec.id) {
                    tracing::warn!(
                        "{}:{n}: game {} again (first recorded at line {first}); the first is kept, this line is not counted",
                        path.display(),
                        rec.id
                    );
                } else {
                    first_line.insert(rec.id.clone(), n);
                    records.push((n, rec));
                }
            }
            Some(Err(e)) if !at_end => {
                // Where serde names no field (a value of the wrong kind),
                // the key of the value it stopped on.
                let names_one = e.to_string().contains(" field `");
                let field = field_at(&text, e.column())
                    .filter(|_| e.classify() == serde_json::error::Category::Data && !names_one)
                    .map_or(String::new(), |f| format!("field `{f}`: "));
                return Err(bad(n, format!("not a game record: {field}{e}")));
            }
            _ => {
                cut = Some(Cut { line: n, offset });
                break;
            }
        }
        offset += read as u64;
    }
    Ok(Scanned {
        records,
        refused,
        cut,
    })
}

/// The key of the value that ends at `column` (1-based, as serde_json
/// counts) of a one-line JSON object: `color` in `..."color":"purple"`
/// with the column after `"purple"`. Keys of records are plain words.
fn field_at(line: &str, column: usize) -> Option<&str> {
    let before = line.get(..column.min(line.len()))?;
    let colon = before.rfind("\":")?;
    let key = &before[..colon];
    let start = key.rfind('"')? + 1;
    let key = &key[start..];
    (!key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')).then_some(key)
}

/// What a reader says of a line the rules' replay refused.
pub fn refusal_message(path: &Path, line: usize, id: &str, why: &Refusal) -> String {
    format!(
        "{}:{line}: game {id} replayed by the rules: {why}; this line is not counted",
        path.display()
    )
}

/// Refuses records that are not games of `stored`: one with an id it has
/// but other players, round, size or opening, and (`all_ids`) one with an
/// id it does not have.
/// The games that may be marked done: the schedule's, or for a Swiss
/// event (whose games are made round by round) every marker there is.
fn expected_ids(done_dir: &Path, stored: &StoredSchedule) -> Vec<String> {
    if stored.swiss_rounds.is_none() {
        return stored.games.iter().map(|g| g.id.clone()).collect();
    }
    fs::read_dir(done_dir)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|id| check_game_id(id).is_ok())
                .collect()
        })
        .unwrap_or_default()
}

fn check_records(
    path: &Path,
    records: Vec<&(usize, GameRecord)>,
    stored: &StoredSchedule,
    all_ids: bool,
) -> Result<(), HarnessError> {
    // A Swiss schedule lists no games ahead: `run` checks their rounds.
    let all_ids = all_ids && stored.swiss_rounds.is_none();
    let games: std::collections::HashMap<&str, &ScheduledGame> =
        stored.games.iter().map(|g| (g.id.as_str(), g)).collect();
    for (n, r) in records {
        let why = match games.get(r.id.as_str()) {
            None if !all_ids => continue,
            None => "this schedule has no such game".to_string(),
            Some(_) if r.size != stored.size => {
                format!(
                    "it was played on {}x{}, this schedule's board is {}x{}",
                    r.size, r.size, stored.size, stored.size
                )
            }
            Some(g) if (g.round, &g.black, &g.white) != (r.round, &r.black, &r.white) => format!(
                "it is round {} {} vs {}; this schedule has round {} {} vs {}",
                r.round, r.black, r.white, g.round, g.black, g.white
            ),
            Some(g) if g.opening != r.opening => format!(
                "its opening is `{}`; this schedule's is `{}`",
                r.opening, g.opening
            ),
            Some(_) => continue,
        };
        return Err(HarnessError::ScheduleChanged(format!(
            "{}:{n}: game {} is not a game of the tournament `{}` ({}): {why}. It comes from another \
             tournament; move it out of this file, or use another results folder",
            path.display(),
            r.id,
            stored.tournament,
            path.with_file_name(SCHEDULE_FILE).display()
        )));
    }
    Ok(())
}

impl ResultStore {
    /// Opens (creating) `dir/games.jsonl` for appending and returns the
    /// records already there, all of them games of `stored` (anything
    /// else stops the run: exit 5, naming the line).
    ///
    /// Every finished game also has a marker `done/<id>`, made when its
    /// line was written. Markers are checked by opening them, which a
    /// network drive answers fresh, while it may serve a file's size from
    /// a cache (sshfs: up to 20 s) and so show a shorter games.jsonl. On
    /// such a drive, if a game is marked done but its line is not seen, the
    /// view may be stale: it is read again until it shows every marked game
    /// (up to [`STALE_VIEW_WAIT`]), and nothing is written before — not
    /// even the repair of a cut last line, which on a stale view would cut
    /// real records. A local disk shows what is there: a game marked done
    /// without its line (a cut or edited file) is played again.
    ///
    /// A cut last line is moved to [`CUT_FILE`] (appended, nothing lost)
    /// with a warning, and the resume goes on.
    pub fn open(
        dir: &Path,
        stored: &StoredSchedule,
    ) -> Result<(ResultStore, Vec<GameRecord>), HarnessError> {
        let wait = may_serve_stale_view(dir).then_some(STALE_VIEW_WAIT);
        Self::open_waiting(dir, stored, wait)
    }

    fn open_waiting(
        dir: &Path,
        stored: &StoredSchedule,
        stale_wait: Option<Duration>,
    ) -> Result<(ResultStore, Vec<GameRecord>), HarnessError> {
        let done_dir = dir.join(DONE_DIR);
        match fs::create_dir(&done_dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(unwritable(&done_dir, e)),
        }
        let path = dir.join(GAMES_FILE);
        let started = std::time::Instant::now();
        let (scanned, unseen) = loop {
            let scanned = scan(&path, parse_whole)?;
            // A refused line is there too: a drive that shows it shows
            // the file (its game is played again, below).
            let seen: std::collections::HashSet<&str> = scanned
                .records
                .iter()
                .map(|(_, r)| r.id.as_str())
                .chain(scanned.refused.iter().map(|(_, r)| r.id.as_str()))
                .collect();
            let unseen: Vec<String> = expected_ids(&done_dir, stored)
                .into_iter()
                .filter(|id| !seen.contains(id.as_str()))
                .filter(|id| File::open(done_dir.join(id)).is_ok())
                .collect();
            let Some(wait) = stale_wait.filter(|_| !unseen.is_empty()) else {
                break (scanned, unseen);
            };
            if started.elapsed() >= wait {
                return Err(unwritable(
                    &path,
                    io::Error::other(format!(
                        "it shows {} games, but {} more are marked done in {}: this drive \
                         serves an old view of the file (attribute caching). Mount it without \
                         attribute caching (sshfs -o cache=no, NFS actimeo=0) or resume on the \
                         machine that ran the tournament. If the file was cut or edited, remove \
                         the markers of the missing games from {} to play them again",
                        scanned.records.len(),
                        unseen.len(),
                        done_dir.display(),
                        done_dir.display()
                    )),
                ));
            }
            tracing::warn!(
                "{}: waiting for this drive to show {} finished games it still hides (cached file size)",
                path.display(),
                unseen.len()
            );
            std::thread::sleep(Duration::from_secs(1));
        };
        check_records(&path, scanned.every_line(), stored, true)?;
        let (mut file, appends) = crate::mailbox::drive::open_for_append(
            OpenOptions::new().create(true).read(true),
            &path,
        )
        .map_err(|e| unwritable(&path, e))?;
        if let Some(cut) = scanned.cut {
            set_aside(&mut file, &path, cut)?;
        }
        let counted: std::collections::HashSet<&str> =
            scanned.records.iter().map(|(_, r)| r.id.as_str()).collect();
        let scheduled =
            |id: &str| stored.swiss_rounds.is_some() || stored.games.iter().any(|g| g.id == id);
        for (n, id) in scanned.refused.iter().map(|(n, r)| (n, &r.id)) {
            if !counted.contains(id.as_str()) && scheduled(id) {
                tracing::warn!(
                    "{}:{n}: game {id} has no record that follows the rules; it is played again",
                    path.display()
                );
            }
        }
        for id in &unseen {
            tracing::warn!(
                "{}: game {id} is marked done ({}) but has no record (the file was cut or edited); it is played again",
                path.display(),
                done_dir.join(id).display()
            );
            let _ = fs::remove_file(done_dir.join(id));
        }
        Ok((
            ResultStore {
                dir: dir.to_path_buf(),
                path,
                file,
                appends,
            },
            unnumbered(scanned),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line, in one write. On failure
    /// (a full disk) the file is cut back so no partial line remains.
    pub fn append(&mut self, record: &GameRecord) -> Result<(), HarnessError> {
        let mut line = serde_json::to_string(record).expect("records serialize");
        line.push('\n');
        let before = self
            .file
            .metadata()
            .map_err(|e| unwritable(&self.path, e))?
            .len();
        // Handed to the kernel at once (a referee killed with -9 loses
        // nothing it wrote); not fsync'ed per game, which would cost a disk
        // flush per game and only matters if the machine loses power.
        // Without O_APPEND, at the end (also after a line was cut back).
        let placed = if self.appends {
            Ok(())
        } else {
            self.file.seek(SeekFrom::Start(before)).map(drop)
        };
        let result = placed
            .and_then(|()| self.file.write_all(line.as_bytes()))
            .and_then(|()| self.file.flush());
        if let Err(e) = result {
            let _ = self.file.set_len(before);
            return Err(unwritable(&self.path, e));
        }
        let marker = self.dir.join(DONE_DIR).join(&record.id);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&marker)
        {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(unwritable(&marker, e)),
        }
    }
}

/// Moves the cut last line of `path` (from `cut.offset` to the end) to
/// [`CUT_FILE`] beside it, appended, then cuts it off `path`.
fn set_aside(file: &mut File, path: &Path, cut: Cut) -> Result<(), HarnessError> {
    let side = path.with_file_name(CUT_FILE);
    let mut tail = Vec::new();
    file.seek(SeekFrom::Start(cut.offset))
        .and_then(|_| io::Read::read_to_end(file, &mut tail))
        .map_err(|e| unwritable(path, e))?;
    if !tail.ends_with(b"\n") {
        tail.push(b'\n');
    }
    crate::mailbox::drive::open_for_append(OpenOptions::new().create(true), &side)
        .and_then(|(mut f, _)| f.write_all(&tail))
        .map_err(|e| unwritable(&side, e))?;
    file.set_len(cut.offset).map_err(|e| unwritable(path, e))?;
    tracing::warn!(
        "{}:{}: the last line is not a whole record (a write cut short, or a cut copy); its {} bytes are set \
         aside in {}, and its game is played again",
        path.display(),
        cut.line,
        tail.len() - 1,
        side.display()
    );
    Ok(())
}

/// Whether `dir` is on a drive that may show a stale size of a file
/// (network and FUSE file systems); a local disk never does.
fn may_serve_stale_view(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: statfs fills the zeroed struct for a NUL-terminated path.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return true;
        }
        const REMOTE: [u32; 10] = [
            0x6969,      // NFS
            0x517B,      // SMB
            0xFF53_4D42, // CIFS
            0xFE53_4D42, // SMB2
            0x6573_5546, // FUSE (sshfs, …)
            0x00C3_6400, // Ceph
            0x5346_414F, // AFS
            0x0102_1997, // 9P
            0x7375_7245, // Coda
            0x564C,      // NCP
        ];
        REMOTE.contains(&(st.f_type as u32))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        true
    }
}

/// Creates the results folder `dir` if it is missing; its parent must
/// exist (a mistyped path makes no tree of folders).
pub fn create_folder(dir: &Path) -> Result<(), HarnessError> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(HarnessError::Config(format!(
            "cannot create the results folder {}: its parent folder does not exist (create it \
             first, or fix `results` in the tournament file)",
            dir.display()
        ))),
        Err(e) => Err(unwritable(dir, e)),
    }
}

/// The lock folder inside a results folder (like the board's lock).
pub const LOCK_DIR: &str = "lock";

/// Takes the results folder `dir` for this referee, with the board's lock
/// machinery (same machine and across machines on a share, a stale
/// holder taken over). Another live referee on it: exit 4, naming it.
pub fn lock(
    dir: &Path,
    opts: &crate::mailbox::LockOptions,
) -> Result<crate::mailbox::BoardLock, HarnessError> {
    use crate::mailbox::{BoardLock, LockError};
    BoardLock::acquire_folder(&dir.join(LOCK_DIR), "the results lock folder", opts).map_err(|e| {
        match e {
            LockError::Held {
                owner,
                heartbeat_age,
                stale,
                ..
            } => HarnessError::BoardLocked(format!(
            "the results folder {} is in use by another referee: {}; its heartbeat changed {:.1} s \
             ago. Two referees writing one results folder would count games twice: give this \
             tournament its own `results` folder, or wait for that referee (one that died is taken \
             over once its heartbeat has not changed for {} s)",
            dir.display(),
            owner.map_or("its owner record is unreadable".into(), |o| o.to_string()),
            heartbeat_age.as_secs_f64(),
            stale.as_secs_f64()
        )),
            // The lock's error kept whole inside (its words are the message).
            e => HarnessError::results_unwritable(dir, io::Error::other(e)),
        }
    })
}

/// The SPRT verdict a run kept in the results folder (every share's run
/// writes it in the tournament's folder, not its share's).
pub const SPRT_VERDICT_FILE: &str = "sprt-verdict.json";

/// The SPRT verdict kept in the results folder `dir`, if a run decided
/// its test. A file being written (not yet whole) reads as none.
pub fn read_sprt_verdict(dir: &Path) -> Result<Option<crate::rating::sprt::Verdict>, HarnessError> {
    let path = dir.join(SPRT_VERDICT_FILE);
    match crate::input_file::read_text(&path, crate::input_file::MAX_TEXT) {
        Ok(text) => Ok(serde_json::from_str(&text).ok()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HarnessError::Config(format!(
            "{}: cannot read it: {e}",
            path.display()
        ))),
    }
}

/// Keeps `verdict` in the results folder `dir` unless a verdict is there
/// already (another share's, reached first): returns the one kept. The
/// file appears whole (a hard link of a finished file, which fails if the
/// name exists), or, on a drive without hard links, is created only if
/// absent.
pub fn keep_sprt_verdict(
    dir: &Path,
    verdict: &crate::rating::sprt::Verdict,
) -> Result<crate::rating::sprt::Verdict, HarnessError> {
    let path = dir.join(SPRT_VERDICT_FILE);
    let unwritable = |e: io::Error| HarnessError::results_unwritable(&path, e);
    let text = serde_json::to_string(verdict).expect("a verdict serializes") + "\n";
    let temp = dir.join(format!(".{SPRT_VERDICT_FILE}.{}", std::process::id()));
    fs::write(&temp, &text).map_err(unwritable)?;
    let linked = fs::hard_link(&temp, &path);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => return Ok(*verdict),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(text.as_bytes()).map_err(unwritable)?;
                return Ok(*verdict);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(unwritable(e)),
        },
    }
    // Another share kept its verdict first: that one stands (read again
    // until whole, for a drive without hard links).
    for _ in 0..50 {
        if let Some(kept) = read_sprt_verdict(dir)? {
            return Ok(kept);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(HarnessError::Config(format!(
        "{}: holds no readable verdict",
        path.display()
    )))
}

/// The schedule stored in the results folder `dir`, if it has one.
pub fn read_schedule(dir: &Path) -> Result<Option<StoredSchedule>, HarnessError> {
    let path = dir.join(SCHEDULE_FILE);
    match crate::input_file::read_text(&path, crate::input_file::MAX_TEXT) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| HarnessError::Config(format!("{}: unreadable: {e}", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HarnessError::Config(format!(
            "{}: cannot read it: {e}",
            path.display()
        ))),
    }
}

/// Records the schedule of a new results folder, or checks that an
/// existing one has the same; a different one stops the run, except that
/// players may be added (see [`crate::schedule::with_added_players`]).
/// Returns the schedule to play.
pub fn check_schedule(
    dir: &Path,
    schedule: &StoredSchedule,
) -> Result<StoredSchedule, HarnessError> {
    let path = dir.join(SCHEDULE_FILE);
    match read_schedule(dir)? {
        Some(stored) => {
            let same_settings = stored.size == schedule.size
                && stored.sprt == schedule.sprt
                && stored.swiss_rounds.is_none()
                && schedule.swiss_rounds.is_none();
            let extended = crate::schedule::with_added_players(&stored.games, &schedule.games)
                .filter(|_| same_settings);
            let added = extended
                .as_ref()
                .is_some_and(|g| g.len() > stored.games.len());
            if let (true, Some(games)) = (added, extended.clone()) {
                let merged = StoredSchedule { games, ..stored };
                let text = serde_json::to_string_pretty(&merged).expect("serializes");
                crate::mailbox::replace(dir, SCHEDULE_FILE, text.as_bytes())
                    .map_err(|e| unwritable(&path, e))?;
                tracing::info!(
                    "players added: {} new games (only the new players' pairings)",
                    merged.games.len() - stored.games.len()
                );
                return Ok(merged);
            }
            if let Some(diff) = first_difference(&stored, schedule).filter(|_| extended.is_none()) {
                return Err(HarnessError::ScheduleChanged(format!(
                    "{} holds results of a different schedule ({diff}). The configuration changed \
                     since those games were played; mixing them would give a wrong crosstable. \
                     Use another `results` folder in tournament.toml, or move {} away to start over.",
                    dir.display(),
                    dir.display()
                )));
            }
            Ok(stored)
        }
        None => {
            let text = serde_json::to_string_pretty(schedule).expect("serializes");
            crate::mailbox::replace(dir, SCHEDULE_FILE, text.as_bytes())
                .map_err(|e| unwritable(&path, e))?;
            Ok(schedule.clone())
        }
    }
}

fn first_difference(old: &StoredSchedule, new: &StoredSchedule) -> Option<String> {
    if old.size != new.size {
        return Some(format!("board size {} then, {} now", old.size, new.size));
    }
    if old.swiss_rounds != new.swiss_rounds {
        return Some(format!(
            "Swiss rounds {:?} then, {:?} now",
            old.swiss_rounds, new.swiss_rounds
        ));
    }
    if old.sprt != new.sprt {
        return Some("different [sprt] settings".into());
    }
    if old.games.len() != new.games.len() {
        let was: std::collections::BTreeSet<&str> = old
            .games
            .iter()
            .flat_map(|g| [g.black.as_str(), g.white.as_str()])
            .collect();
        let now: std::collections::BTreeSet<&str> = new
            .games
            .iter()
            .flat_map(|g| [g.black.as_str(), g.white.as_str()])
            .collect();
        let players = if was != now {
            format!(
                "; players then: {}; now: {}",
                was.into_iter().collect::<Vec<_>>().join(", "),
                now.into_iter().collect::<Vec<_>>().join(", ")
            )
        } else {
            String::new()
        };
        return Some(format!(
            "{} games then, {} now{players}",
            old.games.len(),
            new.games.len()
        ));
    }
    old.games
        .iter()
        .zip(&new.games)
        .find(|(a, b)| a != b)
        .map(|(a, b)| {
            format!(
                "game {} (opening `{}`) then, game {} (opening `{}`) now",
                a.id, a.opening, b.id, b.opening
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real 4×4 game of a (black) against b.
    fn rec(id: &str) -> GameRecord {
        crate::referee::scripted_record(id, 4, ["a", "b"], None)
    }

    fn sched(ids: &[&str]) -> StoredSchedule {
        StoredSchedule {
            tournament: "t".into(),
            size: 4,
            games: ids
                .iter()
                .map(|id| ScheduledGame {
                    id: id.to_string(),
                    round: 1,
                    black: "a".into(),
                    white: "b".into(),
                    opening: String::new(),
                })
                .collect(),
            swiss_rounds: None,
            sprt: None,
            shard: None,
        }
    }

    #[test]
    fn appended_records_read_back_and_a_half_line_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut store, old) =
                ResultStore::open(dir.path(), &sched(&["g1", "g2", "g3"])).unwrap();
            assert!(old.is_empty());
            store.append(&rec("g1")).unwrap();
            store.append(&rec("g2")).unwrap();
        }
        // A crash mid-write leaves a partial line.
        let path = dir.path().join(GAMES_FILE);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"id\":\"g3\",\"rou").unwrap();
        drop(f);
        assert_eq!(read_records(&path).unwrap().len(), 2);
        let (mut store, old) = ResultStore::open(dir.path(), &sched(&["g1", "g2", "g3"])).unwrap();
        assert_eq!(
            old.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["g1", "g2"]
        );
        store.append(&rec("g3")).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text
            .lines()
            .all(|l| serde_json::from_str::<GameRecord>(l).is_ok()));
        assert_eq!(
            fs::read_to_string(dir.path().join(CUT_FILE)).unwrap(),
            "{\"id\":\"g3\",\"rou\n",
            "the cut line is kept aside"
        );
    }

    /// A colour or a move that is not one is no record: the error names
    /// file, line, field and what was expected, as for a bad `reason`.
    #[test]
    fn a_bad_colour_or_move_is_an_error_naming_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(GAMES_FILE);
        let good = serde_json::to_string(&rec("g1")).unwrap();
        let first_move = r#"{"color":"black","move":""#;
        assert!(good.contains(first_move), "{good}");
        let cases = [
            (
                good.replacen(r#""color":"black""#, r#""color":"purple""#, 1),
                "field `color`: unknown variant `purple`, expected `black` or `white`",
            ),
            (
                {
                    let square = good.find(first_move).unwrap() + first_move.len();
                    let mut line = good.clone();
                    line.replace_range(square..square + 2, "z9");
                    line
                },
                "field `move`: invalid value: string \"z9\", expected a move: a square `a1`..`h8` or `pass`",
            ),
            (
                good.replacen(r#""reason":"normal""#, r#""reason":"bored""#, 1),
                "field `reason`: unknown variant `bored`",
            ),
            (
                good.replacen(r#""result":"white","#, "", 1),
                "not a game record: missing field `result`",
            ),
        ];
        for (line, want) in cases {
            assert_ne!(line, good, "{want}");
            fs::write(&path, format!("{good}\n{line}\n{good}\n")).unwrap();
            let e = read_records(&path).unwrap_err().to_string();
            let at = format!("{}:2: not a game record: ", path.display());
            assert!(e.starts_with(&at), "{e}");
            assert!(e.contains(want), "{e}\nwants {want}");
            assert!(e.contains("at line 1 column"), "{e}");
        }
    }

    #[test]
    fn summaries_are_records_without_moves() {
        let dir = tempfile::tempdir().unwrap();
        let full = rec("g1");
        assert!(!full.moves.is_empty() && !full.transcript.is_empty());
        {
            let (mut store, _) = ResultStore::open(dir.path(), &sched(&["g1"])).unwrap();
            store.append(&full).unwrap();
        }
        let path = dir.path().join(GAMES_FILE);
        let summary = read_summaries(&path).unwrap().remove(0);
        let mut expected = full.clone();
        expected.moves.clear();
        expected.transcript.clear();
        assert_eq!(summary, expected);
        assert_eq!(read_records(&path).unwrap()[0], full);
    }

    #[test]
    fn a_stale_view_of_the_results_is_not_written_to() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut store, _) = ResultStore::open(dir.path(), &sched(&["g1", "g2"])).unwrap();
            store.append(&rec("g1")).unwrap();
            store.append(&rec("g2")).unwrap();
        }
        // What a drive with a cached size shows: the first line and a half.
        let path = dir.path().join(GAMES_FILE);
        let full = fs::read_to_string(&path).unwrap();
        let first = full.lines().next().unwrap().len() + 1;
        fs::write(&path, &full[..first + 10]).unwrap();
        let ids = sched(&["g1", "g2", "g3"]);
        let err = ResultStore::open_waiting(dir.path(), &ids, Some(Duration::ZERO)).unwrap_err();
        assert!(err.to_string().contains("1 more are marked done"), "{err}");
        assert_eq!(
            fs::read(&path).unwrap().len(),
            first + 10,
            "nothing was cut"
        );
        // Once the whole file shows, the store opens and sees both games.
        fs::write(&path, &full).unwrap();
        let (_, seen) = ResultStore::open_waiting(dir.path(), &ids, Some(Duration::ZERO)).unwrap();
        assert_eq!(seen.len(), 2);
    }

    /// Issue 13 item 5: on a local disk, a cut last line whose game is
    /// marked done is set aside at once and the game is played again.
    #[test]
    fn a_cut_line_of_a_marked_game_is_set_aside_on_a_local_disk() {
        let dir = tempfile::tempdir().unwrap();
        let ids = sched(&["g1", "g2", "g3"]);
        {
            let (mut store, _) = ResultStore::open(dir.path(), &ids).unwrap();
            store.append(&rec("g1")).unwrap();
            store.append(&rec("g2")).unwrap();
        }
        let path = dir.path().join(GAMES_FILE);
        let full = fs::read_to_string(&path).unwrap();
        let first = full.lines().next().unwrap().len() + 1;
        fs::write(&path, &full[..first + 10]).unwrap();
        assert!(!may_serve_stale_view(dir.path()), "a temp dir is local");
        let clock = std::time::Instant::now();
        let (mut store, seen) = ResultStore::open(dir.path(), &ids).unwrap();
        assert!(
            clock.elapsed() < STALE_VIEW_WAIT / 2,
            "no wait for a drive's cache"
        );
        assert_eq!(seen.len(), 1);
        assert_eq!(
            fs::read(&path).unwrap().len(),
            first,
            "cut back to whole lines"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join(CUT_FILE)).unwrap(),
            format!("{}\n", &full[first..first + 10])
        );
        assert!(!dir.path().join(DONE_DIR).join("g2").exists());
        store.append(&rec("g2")).unwrap();
        assert_eq!(read_records(&path).unwrap().len(), 2);
    }

    /// Issue 13 item 4: a line appended twice counts once (the first is
    /// kept); a record of another schedule (other board size, other
    /// players, an id it has not) is refused naming its line.
    #[test]
    fn duplicates_count_once_and_other_schedules_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ids = sched(&["g1", "g2"]);
        let path = dir.path().join(GAMES_FILE);
        let line = |r: &GameRecord| serde_json::to_string(r).unwrap() + "\n";
        // One record kept to compare with: its times are the clock's.
        let first = rec("g1");
        let mut second = first.clone();
        second.finished = "later".into();
        fs::write(&path, line(&first) + &line(&rec("g2")) + &line(&second)).unwrap();
        let got = read_records(&path).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], first, "the first is kept");
        let (_, seen) = ResultStore::open(dir.path(), &ids).unwrap();
        assert_eq!(seen.len(), 2);
        let other = crate::referee::scripted_record("g2", 6, ["a", "b"], None);
        fs::write(&path, line(&rec("g1")) + &line(&other)).unwrap();
        let e = ResultStore::open(dir.path(), &ids).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::SCHEDULE_CHANGED);
        assert!(e.to_string().contains("games.jsonl:2: game g2"), "{e}");
        assert!(e.to_string().contains("6x6"), "{e}");
        let mut other = rec("g2");
        other.white = "c".into();
        fs::write(&path, line(&other)).unwrap();
        let e = ResultStore::open(dir.path(), &ids).unwrap_err();
        assert!(e.to_string().contains("games.jsonl:1: game g2"), "{e}");
        fs::write(&path, line(&rec("zz"))).unwrap();
        let e = ResultStore::open(dir.path(), &ids).unwrap_err();
        assert!(e.to_string().contains("no such game"), "{e}");
        // What other commands read is checked against schedule.json: an
        // id of the schedule must be that game; other ids are read.
        check_schedule(dir.path(), &ids).unwrap();
        assert_eq!(read_results(dir.path(), false).unwrap().len(), 1);
        let other = crate::referee::scripted_record("g1", 6, ["a", "b"], None);
        fs::write(&path, line(&other)).unwrap();
        let e = read_results(dir.path(), false).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::SCHEDULE_CHANGED);
        // An id that would be a path is no game id.
        fs::write(&path, line(&rec("../../x"))).unwrap();
        let e = read_records(&path).unwrap_err();
        assert!(
            e.to_string().contains(":1: `../../x` is not a game id"),
            "{e}"
        );
        assert_eq!(e.exit_code(), crate::error::exit::CONFIG);
    }

    #[test]
    fn a_different_schedule_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let game = |id: &str| ScheduledGame {
            id: id.into(),
            round: 1,
            black: "a".into(),
            white: "b".into(),
            opening: "f5".into(),
        };
        let s1 = StoredSchedule {
            tournament: "t".into(),
            size: 8,
            games: vec![game("r1.a.b")],
            swiss_rounds: None,
            sprt: None,
            shard: None,
        };
        check_schedule(dir.path(), &s1).unwrap();
        check_schedule(dir.path(), &s1).unwrap();
        let mut s2 = s1.clone();
        s2.games.push(game("r2.b.a"));
        let e = check_schedule(dir.path(), &s2).unwrap_err();
        assert!(e.to_string().contains("1 games then, 2 now"), "{e}");
        assert_eq!(e.exit_code(), crate::error::exit::SCHEDULE_CHANGED);
    }
}
