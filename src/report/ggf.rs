//! Game records in GGF, the Generic Game Format that Igor Durdanovic
//! defined for GGS (described at skatgame.net/mburo/ggsa/ggf): one game is
//! `(;GM[Othello]PC[..]DT[..]PB[..]PW[..]RE[..]TY[..]BO[..]B[..]W[..]…;)`,
//! and a file may hold many games, one per line.
//!
//! Owns the GGF text of a finished game and the per-game file
//! `results/games/<id>.ggf`. Must not read `games.jsonl`, judge a game or
//! change a record: it prints what the referee recorded.
//!
//! Choices, where GGF leaves room:
//! - `BO` is always the standard start position of the board size, black
//!   (`*`) to move; the opening's moves are written as ordinary moves (with
//!   time 0), so every reader sees the whole game from the start.
//! - Every ply is a `B[..]`/`W[..]` property in order, passes included
//!   (`PA`, also the referee's automatic passes). The value is
//!   `square//seconds`: no evaluation, the thinking time in seconds with
//!   three decimals (`B[d3//1.234]`).
//! - `RE` is black's disc difference with the empty squares given to the
//!   winner (the record's `discs_wof`), with three decimals: `RE[+12.000]`.
//!   A forfeit scores every square to the winner (`RE[+64.000]` on 8×8) and
//!   carries GGF's flag: `:t` (time out) for `timeout`, `no-ready` and
//!   `incomplete` (no complete answer in time); `:r` (resigned) for every
//!   other forfeit (illegal or unreadable answers, a crashed or unstartable
//!   bot), GGF having no closer word for a game given up by breaking the
//!   rules.
//! - `DT` is the start in GGF's `year.month.day_hour:minute:second.zone`
//!   form, zone `UTC`; `PC` is `tournament`; `TY` is the board size.
//! - The time control of a game with a person, where the referee writes
//!   the file right after the game (`run`, `play`; the record does not
//!   hold it, so `export` writes none, and a game of bots keeps the file
//!   `export` writes): `TI[..]` when both sides play under the same one, else
//!   `TB[..]` and `TW[..]`, in GGS's clock notation `main/increment/
//!   extension` (skatgame.net/mburo/ggsa/clock), times as `[h:]m:ss`. A
//!   game clock of 60 s plus 1 s a move is `1:00/0:01/`; a bot's limit per
//!   move is GGS's non-additive increment, `N1` (see [`clock`]): 5 s a
//!   move is `0:05/0:05,N1/`. A time that is not whole seconds keeps its
//!   milliseconds after a dot (`0:00.200`), which GGS itself never wrote.
//! - Values are plain text inside `[..]` and GGF defines no escape, so `[`,
//!   `]`, `\` and control characters in names become `_`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::game::{move_name, Color, Move, Position, Square};
use crate::record::{EndReason, GameRecord};
use crate::time_control::SideTime;

/// The folder, inside the results folder, of the per-game GGF files.
pub const GAMES_DIR: &str = "games";

/// The GGF text of one game, without a line end.
pub fn game(record: &GameRecord) -> String {
    game_timed(record, None)
}

/// The GGF text of one game with the time control of each side (black,
/// white), if known: `TI`, or `TB` and `TW`.
pub fn game_timed(record: &GameRecord, times: Option<&[SideTime; 2]>) -> String {
    let mut s = String::with_capacity(256 + record.moves.len() * 16);
    s.push_str("(;GM[Othello]PC[tournament]");
    if let Some(dt) = ggf_date(&record.started) {
        s.push_str(&format!("DT[{dt}]"));
    }
    s.push_str(&format!(
        "PB[{}]PW[{}]RE[{}]",
        value(&record.black),
        value(&record.white),
        result(record),
    ));
    match times.map(|[b, w]| (time_control(b), time_control(w))) {
        Some((b, w)) if b == w => s.push_str(&format!("TI[{b}]")),
        Some((b, w)) => s.push_str(&format!("TB[{b}]TW[{w}]")),
        None => {}
    }
    s.push_str(&format!(
        "TY[{}]BO[{}]",
        record.size,
        start_board(record.size)
    ));
    for m in &record.moves {
        let tag = match m.color {
            Color::Black => 'B',
            Color::White => 'W',
        };
        let mv = match m.mv {
            Move::Pass => "PA".to_string(),
            Move::Play(sq) => value(&sq.to_string()),
        };
        s.push_str(&format!("{tag}[{mv}//{}]", seconds(m.ms)));
    }
    s.push_str(";)");
    s
}

/// The GGF text of a game in progress, for an engine (NBoard's `set game`):
/// the players, the board size, `TI` when a clock is given (GGS's clock
/// notation, see [`clock`]), the standard start and every ply so far
/// (squares in upper case as NBoard writes them, passes `PA`), no result.
pub fn game_so_far(
    names: [&str; 2],
    size: u8,
    plies: &[(Color, Move)],
    ti: Option<&str>,
) -> String {
    let mut s = String::with_capacity(128 + plies.len() * 6);
    s.push_str(&format!(
        "(;GM[Othello]PC[tournament]PB[{}]PW[{}]RE[?]",
        value(names[0]),
        value(names[1])
    ));
    if let Some(ti) = ti {
        s.push_str(&format!("TI[{}]", value(ti)));
    }
    s.push_str(&format!("TY[{size}]BO[{}]", start_board(size)));
    for (color, mv) in plies {
        let tag = if *color == Color::White { 'W' } else { 'B' };
        let v = match mv {
            Move::Pass => "PA".to_string(),
            Move::Play(_) => move_name(*mv).to_ascii_uppercase(),
        };
        s.push_str(&format!("{tag}[{v}]"));
    }
    s.push_str(";)");
    s
}

/// A GGS clock (skatgame.net/mburo/ggsa/clock) for the referee's time
/// control: `ini/inc,N1/` — the first move may use the move time plus the
/// bank, and after each move the clock gets back the time spent, up to the
/// move time (GGS's non-additive increment `N`, every `1` move), which is
/// the referee's rule that only time over the move time is drawn from the
/// bank. Whole seconds, `MM:SS`.
pub fn clock(move_ms: u64, bank_ms: Option<u64>) -> String {
    let mmss = |ms: u64| {
        let s = (ms / 1000).max(1);
        format!("{}:{:02}", s / 60, s % 60)
    };
    format!(
        "{}/{},N1/",
        mmss(move_ms + bank_ms.unwrap_or(0)),
        mmss(move_ms)
    )
}

/// One side's time control in GGS's clock notation: `main/increment/`
/// for a game clock (no increment written when there is none), or, for a
/// limit per move, the whole first move's time and the non-additive
/// increment of the move time (`N1`, as [`clock`]); exact to the
/// millisecond.
pub fn time_control(time: &SideTime) -> String {
    match *time {
        SideTime::Game(c) if c.increment_ms == 0 => format!("{}//", clock_time(c.base_ms)),
        SideTime::Game(c) => format!("{}/{}/", clock_time(c.base_ms), clock_time(c.increment_ms)),
        SideTime::PerMove { move_ms, bank_ms } => format!(
            "{}/{},N1/",
            clock_time(move_ms + bank_ms.unwrap_or(0)),
            clock_time(move_ms)
        ),
    }
}

/// `[h:]m:ss`, with `.mmm` when not whole seconds.
fn clock_time(ms: u64) -> String {
    let s = ms / 1000;
    let mut text = if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    };
    if !ms.is_multiple_of(1000) {
        text.push_str(&format!(".{:03}", ms % 1000));
    }
    text
}

/// `RE`'s value: black's disc difference (winner takes the empties), with
/// `:t` after a loss on time, `:r` after a resignation or another forfeit.
pub fn result(record: &GameRecord) -> String {
    let diff = record.discs_wof.black as i64 - record.discs_wof.white as i64;
    let sign = if diff < 0 { '-' } else { '+' };
    let flag = match record.reason {
        EndReason::Normal => "",
        EndReason::Timeout | EndReason::NoReady | EndReason::Incomplete => ":t",
        EndReason::Resigned => ":r",
        _ => ":r",
    };
    format!("{sign}{}.000{flag}", diff.abs())
}

/// `BO`'s value for the standard start: `8 -------- … ---O*--- … *`.
fn start_board(size: u8) -> String {
    let pos = Position::start(size);
    let mut s = size.to_string();
    for row in 0..size {
        s.push(' ');
        for col in 0..size {
            s.push(match pos.at(Square::new(col, row)) {
                Some(Color::Black) => '*',
                Some(Color::White) => 'O',
                None => '-',
            });
        }
    }
    s.push_str(" *");
    s
}

/// Milliseconds as seconds with three decimals.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `2026-11-22T16:30:19.358Z` → `2026.11.22_16:30:19.UTC`; `None` if the
/// text does not start with an RFC 3339 date and time.
fn ggf_date(rfc3339: &str) -> Option<String> {
    let b = rfc3339.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let t = &rfc3339[..19];
    Some(format!(
        "{}.{}.{}_{}.UTC",
        &t[0..4],
        &t[5..7],
        &t[8..10],
        &t[11..19]
    ))
}

/// A property value GGF can hold: no brackets, backslashes or control
/// characters.
fn value(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, '[' | ']' | '\\') || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The file name of a game: its id with anything but letters, digits, `.`,
/// `-` and `_` replaced (and no leading dot), plus `.ggf`.
pub fn file_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with('.') {
        name.insert(0, '_');
    }
    name.push_str(".ggf");
    name
}

/// The path of a game's GGF file inside `results_dir`.
pub fn game_file_path(results_dir: &Path, id: &str) -> PathBuf {
    results_dir.join(GAMES_DIR).join(file_name(id))
}

/// Writes `results_dir/games/<id>.ggf` (one line) atomically: a temporary
/// file in the same folder, flushed to disk, then renamed over the target.
pub fn write_game_file(results_dir: &Path, record: &GameRecord) -> io::Result<PathBuf> {
    write_game_file_timed(results_dir, record, None)
}

/// [`write_game_file`] with each side's time control (`TI`, `TB`, `TW`).
pub fn write_game_file_timed(
    results_dir: &Path,
    record: &GameRecord,
    times: Option<&[SideTime; 2]>,
) -> io::Result<PathBuf> {
    let path = game_file_path(results_dir, &record.id);
    match fs::create_dir(results_dir.join(GAMES_DIR)) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let mut text = game_timed(record, times);
    text.push('\n');
    write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// Writes `bytes` to `path` through a temporary sibling and a rename, so a
/// reader sees the old file or the whole new one, never a part. Not
/// fsync'ed: games.jsonl is the record, and `export` regenerates these.
/// The folder must exist.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    crate::mailbox::replace(&dir, &name, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{DiscCount, MoveRecord, Winner};

    fn mv(color: Color, m: &str, ms: u64) -> MoveRecord {
        MoveRecord {
            color,
            mv: crate::game::parse_move(m, 8).unwrap(),
            ms,
            opening: false,
            auto: false,
        }
    }

    fn record() -> GameRecord {
        GameRecord {
            id: "r01.a.b".into(),
            round: 1,
            black: "a".into(),
            white: "b[x]".into(),
            size: 8,
            opening: String::new(),
            moves: vec![mv(Color::Black, "d3", 1234), mv(Color::White, "pass", 0)],
            result: Winner::Black,
            reason: EndReason::Normal,
            forfeit: None,
            discs: DiscCount {
                black: 38,
                white: 20,
            },
            discs_wof: DiscCount {
                black: 44,
                white: 20,
            },
            transcript: "d3".into(),
            started: "2026-11-22T16:30:19.358Z".into(),
            finished: String::new(),
            time_ms: DiscCount { black: 0, white: 0 },
            swiss_round: None,
            people: Vec::new(),
        }
    }

    #[test]
    fn a_game_in_ggf() {
        let g = game(&record());
        assert_eq!(
            g,
            "(;GM[Othello]PC[tournament]DT[2026.11.22_16:30:19.UTC]PB[a]PW[b_x_]\
             RE[+24.000]TY[8]BO[8 -------- -------- -------- ---O*--- ---*O--- \
             -------- -------- -------- *]B[d3//1.234]W[PA//0.000];)"
        );
    }

    #[test]
    fn time_controls_are_written_as_ggs_clocks() {
        use crate::time_control::GameClock;
        let clock = |base_ms, increment_ms| {
            SideTime::Game(GameClock {
                base_ms,
                increment_ms,
            })
        };
        let per_move = |move_ms, bank_ms| SideTime::PerMove { move_ms, bank_ms };
        let table = [
            (clock(60_000, 1_000), "1:00/0:01/"),
            (clock(900_000, 0), "15:00//"),
            (clock(5_400_000, 30_000), "1:30:00/0:30/"),
            (per_move(200, None), "0:00.200/0:00.200,N1/"),
            (per_move(5_000, Some(60_000)), "1:05/0:05,N1/"),
        ];
        for (time, text) in table {
            assert_eq!(time_control(&time), text);
        }
        // One TI when both sides play under the same control, else TB and TW.
        let r = record();
        let same = game_timed(&r, Some(&[per_move(5_000, None); 2]));
        assert!(same.contains("RE[+24.000]TI[0:05/0:05,N1/]TY[8]"), "{same}");
        let two = game_timed(&r, Some(&[clock(60_000, 1_000), per_move(200, None)]));
        assert!(
            two.contains("TB[1:00/0:01/]TW[0:00.200/0:00.200,N1/]TY[8]"),
            "{two}"
        );
        assert!(!two.contains("TI["), "{two}");
    }

    #[test]
    fn forfeits_carry_the_flag() {
        let mut r = record();
        r.discs_wof = DiscCount {
            black: 0,
            white: 64,
        };
        r.reason = EndReason::Timeout;
        assert_eq!(result(&r), "-64.000:t");
        r.reason = EndReason::Garbage;
        assert_eq!(result(&r), "-64.000:r");
        r.reason = EndReason::Normal;
        r.discs_wof = DiscCount {
            black: 32,
            white: 32,
        };
        assert_eq!(result(&r), "+0.000");
    }

    #[test]
    fn dates_and_file_names() {
        assert_eq!(
            ggf_date("2026-01-02T03:04:05Z").unwrap(),
            "2026.01.02_03:04:05.UTC"
        );
        assert_eq!(ggf_date("yesterday"), None);
        assert_eq!(file_name("r01.a.b"), "r01.a.b.ggf");
        assert_eq!(file_name("../x"), "_.._x.ggf");
        assert_eq!(file_name(""), "_.ggf");
        assert_eq!(start_board(4), "4 ---- -O*- -*O- ---- *");
    }
}
