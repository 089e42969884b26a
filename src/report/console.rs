//! The console view of one game for `tournament play`: each move as it is
//! played, then the final board, the result and the transcript.

use std::io::Write;
use std::sync::Mutex;

use crate::event::{Event, EventSink};
use crate::game::{diagram, parse_board_string, Color};

use super::result_line;

/// Prints to any writer (stdout for users, a buffer in tests).
pub struct ConsoleReporter<W: Write + Send> {
    out: Mutex<W>,
}

impl<W: Write + Send> ConsoleReporter<W> {
    pub fn new(out: W) -> Self {
        ConsoleReporter {
            out: Mutex::new(out),
        }
    }
}

impl<W: Write + Send> EventSink for ConsoleReporter<W> {
    fn emit(&self, event: &Event<'_>) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = match event {
            Event::GameStarted {
                id,
                black,
                white,
                size,
                opening,
                ..
            } => {
                let opening = if opening.is_empty() {
                    String::new()
                } else {
                    format!(", opening {opening}")
                };
                writeln!(
                    out,
                    "game {id}: {black} (black, X) vs {white} (white, O), {size}x{size}{opening}"
                )
            }
            Event::Waiting {
                player,
                mailbox,
                start,
                waited_secs,
                ..
            } => writeln!(
                out,
                "  waiting {waited_secs} s for {player}, started by hand (mailbox {mailbox}); \
                 start it there with: {start}"
            ),
            Event::Move {
                ply,
                color,
                square,
                ms,
                black,
                white,
                ..
            } => writeln!(
                out,
                "{ply:>4}. {:<5} {square:<4} {ms:>6} ms   X {black:>2}  O {white:>2}",
                color.name()
            ),
            Event::Pass {
                ply, color, auto, ..
            } => writeln!(
                out,
                "{ply:>4}. {:<5} pass{}",
                color.name(),
                if *auto { "   (no legal move)" } else { "" }
            ),
            Event::Illegal {
                color,
                answer,
                reason,
                retries_left,
                ..
            } => writeln!(
                out,
                "      {color} answered {answer:?}: {reason} — retry ({retries_left} left)"
            ),
            Event::Forfeit {
                color,
                reason,
                detail,
                ..
            } => writeln!(out, "      {color} forfeits: {reason}: {detail}"),
            Event::GameOver { record } => {
                if let Some(f) = record
                    .forfeit
                    .as_ref()
                    .filter(|f| !f.stderr_tail.is_empty())
                {
                    let who = record.player(f.color);
                    let _ = writeln!(out, "      last lines of {who}'s stderr:");
                    for line in &f.stderr_tail {
                        let _ = writeln!(out, "        | {line}");
                    }
                }
                let board = replay_board(record);
                writeln!(
                    out,
                    "\n{board}\nresult: {}\ndiscs on the board: X {} O {}\ntranscript: {}",
                    result_line(record),
                    record.discs.black,
                    record.discs.white,
                    if record.transcript.is_empty() {
                        "(no moves)"
                    } else {
                        &record.transcript
                    }
                )
            }
        };
        let _ = out.flush();
    }
}

/// The final position of a record, drawn.
fn replay_board(record: &crate::record::GameRecord) -> String {
    use crate::game::{replay_transcript, Position};
    match replay_transcript(Position::start(record.size), &record.transcript) {
        Ok((_, pos)) => diagram(&pos),
        Err(_) => {
            // A record always replays; this only guards a hand-edited file.
            let empty = "-".repeat(record.size as usize * record.size as usize);
            diagram(&parse_board_string(&empty, Color::Black).expect("empty board"))
        }
    }
}
