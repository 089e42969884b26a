//! `watch GAME` on a finished game: its record replayed on the terminal,
//! board after board (the last move in brackets), at a pace or one move
//! per Enter, then its result.
//!
//! Owns only the drawing of a record's moves; finding the record and
//! following running games are `watch`'s. Reads only the record (and,
//! with `--step`, stdin).

use std::io::{BufRead, Write};
use std::time::Duration;

use crate::game::{diagram_marked, Move, Position};
use crate::record::GameRecord;

/// How the moves follow one another.
#[derive(Clone, Copy, Debug)]
pub enum Pace {
    /// This long between moves (zero: all at once).
    Every(Duration),
    /// The next move when Enter is pressed (a line on stdin).
    Step,
}

/// Replays `record` on `out`; `clear` clears the screen before each board
/// (on a terminal).
pub fn replay(
    record: &GameRecord,
    pace: Pace,
    clear: bool,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let header = format!(
        "game {}: {} (X) vs {} (O), {}x{}",
        record.id, record.black, record.white, record.size, record.size
    );
    let mut input = std::io::stdin().lock();
    let mut pos = Position::start(record.size);
    writeln!(out, "{header}")?;
    for (i, m) in record.moves.iter().enumerate() {
        let mv = m.mv;
        let (next, last) = match mv {
            Move::Pass => (pos.pass_unchecked(), None),
            Move::Play(sq) => match pos.play(mv) {
                Ok((next, _)) => (next, Some(sq)),
                Err(why) => {
                    writeln!(
                        out,
                        "move {}: {} {} is not legal here: {why}",
                        i + 1,
                        m.color,
                        m.mv
                    )?;
                    break;
                }
            },
        };
        pos = next;
        if i > 0 {
            match pace {
                Pace::Every(d) => std::thread::sleep(d),
                Pace::Step => {
                    write!(out, "(Enter: next move) ")?;
                    out.flush()?;
                    let mut line = String::new();
                    if input.read_line(&mut line)? == 0 {
                        // stdin ended: the rest at once.
                    }
                }
            }
        }
        if clear {
            write!(out, "\x1b[2J\x1b[H{header}\n\n")?;
        }
        let d = pos.discs();
        let how = if m.opening {
            " (opening)".to_string()
        } else if m.auto {
            " (no legal move)".to_string()
        } else {
            format!(" ({} ms)", m.ms)
        };
        write!(out, "{}", diagram_marked(&pos, last))?;
        writeln!(
            out,
            "move {}: {} {}{how}   X {}  O {}\n",
            i + 1,
            m.color,
            m.mv,
            d.black,
            d.white
        )?;
        out.flush()?;
    }
    if let Some(f) = &record.forfeit {
        writeln!(
            out,
            "{} forfeits ({}): {}",
            f.color, record.reason, f.detail
        )?;
    }
    writeln!(out, "game over: {}", crate::report::result_line(record))?;
    out.flush()
}
