//! The results folder: `games.jsonl`, one finished game per line, appended
//! and flushed as each game ends, plus the schedule it belongs to.
//!
//! Owns the files and their integrity: a line is written whole or not at
//! all (a failed write is cut back), a half line left by a crash is removed
//! on open, and a results folder never mixes two schedules. Knows nothing
//! about how games are played.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::HarnessError;
use crate::record::GameRecord;
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
}

/// Append-only store of finished games.
#[derive(Debug)]
pub struct ResultStore {
    dir: PathBuf,
    path: PathBuf,
    file: File,
}

/// Markers of finished games, one empty file per game id.
pub const DONE_DIR: &str = "done";
/// How long a resume waits for a drive to show what it caches.
pub const STALE_VIEW_WAIT: Duration = Duration::from_secs(45);

fn unwritable(path: &Path, error: io::Error) -> HarnessError {
    HarnessError::results_unwritable(path, error)
}

/// Reads every complete record of a games file. A final line without its
/// newline (a write cut short) is not a record. Errors name file and line.
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>, HarnessError> {
    read_lines(path, |line| serde_json::from_str::<GameRecord>(line))
}

/// A record as read for standings: everything but the moves and the
/// transcript, which are skipped while parsing (most of a line's bytes).
#[derive(serde::Deserialize)]
struct Summary {
    id: String,
    round: u32,
    black: String,
    white: String,
    size: u8,
    opening: String,
    #[serde(default)]
    #[allow(dead_code)]
    moves: Option<serde::de::IgnoredAny>,
    result: crate::record::Winner,
    reason: crate::record::EndReason,
    #[serde(default)]
    forfeit: Option<crate::record::Forfeit>,
    discs: crate::record::DiscCount,
    discs_wof: crate::record::DiscCount,
    #[serde(default)]
    #[allow(dead_code)]
    transcript: Option<serde::de::IgnoredAny>,
    started: String,
    finished: String,
    time_ms: crate::record::DiscCount,
    #[serde(default)]
    swiss_round: Option<u32>,
}

/// Like [`read_records`], but each record comes without its moves and
/// transcript: what crosstables need, read about twice as fast.
pub fn read_summaries(path: &Path) -> Result<Vec<GameRecord>, HarnessError> {
    read_lines(path, |line| {
        serde_json::from_str::<Summary>(line).map(|s| GameRecord {
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
        })
    })
}

fn read_lines(
    path: &Path,
    parse: impl Fn(&str) -> serde_json::Result<GameRecord>,
) -> Result<Vec<GameRecord>, HarnessError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(unwritable(path, e)),
    };
    let mut out = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .map_err(|e| unwritable(path, e))?;
        if read == 0 || !line.ends_with('\n') {
            break;
        }
        n += 1;
        if line.trim().is_empty() {
            continue;
        }
        let rec: GameRecord = parse(&line).map_err(|e| {
            HarnessError::Config(format!("{}:{n}: not a game record: {e}", path.display()))
        })?;
        out.push(rec);
    }
    Ok(out)
}

impl ResultStore {
    /// Opens (creating) `dir/games.jsonl` for appending and returns the
    /// records already there.
    ///
    /// Every finished game also has a marker `done/<id>`, made when its
    /// line was written. Markers are checked by opening them, which a
    /// network drive answers fresh, while it may serve a file's size from
    /// a cache (sshfs: up to 20 s) and so show a shorter games.jsonl. If a
    /// game of `scheduled` is marked done but its line is not seen, the
    /// view is stale: it is read again until it shows every marked game
    /// (up to [`STALE_VIEW_WAIT`]), and nothing is written before — not
    /// even the repair of a half-written last line, which on a stale view
    /// would cut real records.
    pub fn open(
        dir: &Path,
        scheduled: &[String],
    ) -> Result<(ResultStore, Vec<GameRecord>), HarnessError> {
        Self::open_waiting(dir, scheduled, STALE_VIEW_WAIT)
    }

    fn open_waiting(
        dir: &Path,
        scheduled: &[String],
        wait: Duration,
    ) -> Result<(ResultStore, Vec<GameRecord>), HarnessError> {
        fs::create_dir_all(dir.join(DONE_DIR)).map_err(|e| unwritable(dir, e))?;
        let path = dir.join(GAMES_FILE);
        let started = std::time::Instant::now();
        let records = loop {
            let records = read_records(&path)?;
            let seen: std::collections::HashSet<&str> =
                records.iter().map(|r| r.id.as_str()).collect();
            let unseen = scheduled
                .iter()
                .filter(|id| !seen.contains(id.as_str()))
                .filter(|id| File::open(dir.join(DONE_DIR).join(id)).is_ok())
                .count();
            if unseen == 0 {
                break records;
            }
            if started.elapsed() >= wait {
                return Err(unwritable(
                    &path,
                    io::Error::other(format!(
                        "it shows {} games, but {unseen} more are marked done in {}: this drive \
                         serves an old view of the file (attribute caching). Mount it without \
                         attribute caching (sshfs -o cache=no, NFS actimeo=0) or resume on the \
                         machine that ran the tournament",
                        records.len(),
                        dir.join(DONE_DIR).display()
                    )),
                ));
            }
            tracing::warn!(
                "{}: waiting for this drive to show {unseen} finished games it still hides (cached file size)",
                path.display()
            );
            std::thread::sleep(Duration::from_secs(1));
        };
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| unwritable(&path, e))?;
        let len = file.metadata().map_err(|e| unwritable(&path, e))?.len();
        if len > 0 {
            let keep = complete_prefix_len(&mut file).map_err(|e| unwritable(&path, e))?;
            if keep < len {
                tracing::warn!(
                    "{}: removing {} bytes of a half-written last line",
                    path.display(),
                    len - keep
                );
                file.set_len(keep).map_err(|e| unwritable(&path, e))?;
            }
        }
        Ok((
            ResultStore {
                dir: dir.to_path_buf(),
                path,
                file,
            },
            records,
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
        let result = self
            .file
            .write_all(line.as_bytes())
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

/// Length of the file up to and including its last newline.
fn complete_prefix_len(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    let mut pos = len;
    let mut buf = [0u8; 4096];
    while pos > 0 {
        let chunk = (pos as usize).min(buf.len());
        pos -= chunk as u64;
        file.seek(SeekFrom::Start(pos))?;
        io::Read::read_exact(file, &mut buf[..chunk])?;
        if let Some(i) = buf[..chunk].iter().rposition(|&b| b == b'\n') {
            return Ok(pos + i as u64 + 1);
        }
    }
    Ok(0)
}

/// The schedule stored in results folder `dir`, if any.
pub fn stored_schedule(dir: &Path) -> Result<Option<StoredSchedule>, HarnessError> {
    let path = dir.join(SCHEDULE_FILE);
    match fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| HarnessError::Config(format!("{}: unreadable: {e}", path.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unwritable(&path, e)),
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
    match fs::read_to_string(&path) {
        Ok(text) => {
            let stored: StoredSchedule = serde_json::from_str(&text).map_err(|e| {
                HarnessError::Config(format!("{}: unreadable: {e}", path.display()))
            })?;
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
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let text = serde_json::to_string_pretty(schedule).expect("serializes");
            fs::create_dir_all(dir).map_err(|e| unwritable(dir, e))?;
            crate::mailbox::replace(dir, SCHEDULE_FILE, text.as_bytes())
                .map_err(|e| unwritable(&path, e))?;
            Ok(schedule.clone())
        }
        Err(e) => Err(unwritable(&path, e)),
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
    use crate::record::{DiscCount, EndReason, Winner};

    fn rec(id: &str) -> GameRecord {
        GameRecord {
            id: id.into(),
            round: 1,
            black: "a".into(),
            white: "b".into(),
            size: 4,
            opening: String::new(),
            moves: vec![],
            result: Winner::Black,
            reason: EndReason::Normal,
            forfeit: None,
            discs: DiscCount {
                black: 10,
                white: 6,
            },
            discs_wof: DiscCount {
                black: 10,
                white: 6,
            },
            transcript: String::new(),
            started: String::new(),
            finished: String::new(),
            time_ms: DiscCount { black: 0, white: 0 },
            swiss_round: None,
        }
    }

    #[test]
    fn appended_records_read_back_and_a_half_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut store, old) = ResultStore::open(dir.path(), &[]).unwrap();
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
        let (mut store, old) = ResultStore::open(dir.path(), &[]).unwrap();
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
    }

    #[test]
    fn summaries_are_records_without_moves() {
        let dir = tempfile::tempdir().unwrap();
        let mut full = rec("g1");
        full.moves.push(crate::record::MoveRecord {
            color: "black".into(),
            mv: "d3".into(),
            ms: 3,
            opening: false,
            auto: false,
        });
        full.transcript = "d3".into();
        {
            let (mut store, _) = ResultStore::open(dir.path(), &[]).unwrap();
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
            let (mut store, _) = ResultStore::open(dir.path(), &[]).unwrap();
            store.append(&rec("g1")).unwrap();
            store.append(&rec("g2")).unwrap();
        }
        // What a drive with a cached size shows: the first line and a half.
        let path = dir.path().join(GAMES_FILE);
        let full = fs::read_to_string(&path).unwrap();
        let first = full.lines().next().unwrap().len() + 1;
        fs::write(&path, &full[..first + 10]).unwrap();
        let ids = vec!["g1".to_string(), "g2".to_string(), "g3".to_string()];
        let err = ResultStore::open_waiting(dir.path(), &ids, Duration::ZERO).unwrap_err();
        assert!(err.to_string().contains("1 more are marked done"), "{err}");
        assert_eq!(
            fs::read(&path).unwrap().len(),
            first + 10,
            "nothing was cut"
        );
        // Once the whole file shows, the store opens and sees both games.
        fs::write(&path, &full).unwrap();
        let (_, seen) = ResultStore::open_waiting(dir.path(), &ids, Duration::ZERO).unwrap();
        assert_eq!(seen.len(), 2);
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
