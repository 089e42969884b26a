//! Whether a game record follows from its own moves: the record replayed
//! through the rules (the `othello` crate), and its result, end reason,
//! disc counts and score compared with what that replay gives.
//!
//! Owns the question "could the referee have written this record?" and
//! nothing else: no I/O, no messages about files (the reader of
//! `games.jsonl` adds file and line), no opinion on schedules or players.
//!
//! What the referee writes, and so what is accepted: the opening's moves
//! first (marked `opening`, no time), then the bots' moves and passes, each
//! for the side to move and legal there (a pass only where the side has no
//! move; the referee's own passes marked `auto`, no time); the transcript is
//! those moves without passes. A game that ended `normal` ends on a position
//! where neither side can move, with the discs of that position, the winner
//! by them and the empties to the winner. Any other reason (`resigned`
//! too: a person's own forfeit) is a forfeit: of
//! a side named in `forfeit`, before the game was over (unless no bot moved
//! at all), the side to move for a reason only a move's answer gives
//! (timeout, an illegal or unreadable move); the discs are the position's,
//! the winner is the other side and the score is all squares to it (64-0
//! on 8×8), whatever the board shows. Times are not checked: they do not
//! change a result, and an illegal answer's time counts without a move.

use crate::game::{Color, IllegalMove, Move, NotationError, Position, Square};

use super::{DiscCount, EndReason, GameRecord, MoveRecord, Winner};

/// What is wrong with a record: the first thing the replay finds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("board size {0} is not 4, 6 or 8")]
    Size(u8),
    #[error("its opening `{opening}` breaks the rules: {why}")]
    Opening { opening: String, why: NotationError },
    #[error("move {ply} `{square}` is not a square of this board or `pass`")]
    OffBoard { ply: usize, square: Square },
    #[error("move {ply} `{mv}` is recorded for `{recorded}`, but {to_move} was to move")]
    Colour {
        ply: usize,
        mv: Move,
        recorded: Color,
        to_move: Color,
    },
    #[error("move {ply} ({color} `{mv}`) is illegal: {why}")]
    Illegal {
        ply: usize,
        color: Color,
        mv: Move,
        why: IllegalMove,
    },
    #[error("move {ply} `{mv}` {what}")]
    Marks {
        ply: usize,
        mv: Move,
        what: &'static str,
    },
    #[error("its moves stop inside its opening `{0}`")]
    OpeningCut(String),
    #[error("its transcript `{recorded}` is not its moves `{played}`")]
    Transcript { recorded: String, played: String },
    #[error("it ended `normal`, but the game is not over ({0} has a move)")]
    NotOver(Color),
    #[error("it ended `{reason}` but names no side that forfeited")]
    NoForfeit { reason: EndReason },
    #[error("it ended `normal` but names {0} as forfeiting")]
    StrayForfeit(Color),
    #[error("{color} forfeited by `{reason}` after the game was over")]
    ForfeitAfterEnd { color: Color, reason: EndReason },
    #[error("{color} forfeited by `{reason}` (an answer to a move), but {to_move} was to move")]
    ForfeitNotToMove {
        color: Color,
        reason: EndReason,
        to_move: Color,
    },
    #[error("its discs {}-{} (black-white) are not the final position's {}-{}", recorded.black, recorded.white, board.black, board.white)]
    Discs {
        recorded: DiscCount,
        board: DiscCount,
    },
    #[error("result `{recorded}` does not follow from it: {why} makes it `{expected}`")]
    Result {
        recorded: &'static str,
        expected: &'static str,
        why: String,
    },
    #[error("score {}-{} does not follow from it: {why} scores {}-{}", recorded.black, recorded.white, expected.black, expected.white)]
    Score {
        recorded: DiscCount,
        expected: DiscCount,
        why: String,
    },
}

impl GameRecord {
    /// Replays this record's own moves and transcript (see [`check_game`]).
    pub fn check(&self) -> Result<(), Refusal> {
        check_game(self, &self.transcript, &self.moves)
    }
}

/// Replays `moves` and `transcript` as the game `record` (its own moves
/// and transcript are not looked at: a reader may have skipped them), and
/// says what does not follow (see the module comment).
pub fn check_game(
    record: &GameRecord,
    transcript: &str,
    moves: &[MoveRecord],
) -> Result<(), Refusal> {
    if !crate::game::SIZES.contains(&record.size) {
        return Err(Refusal::Size(record.size));
    }
    let opening = Opening::read(&record.opening).map_err(|why| Refusal::Opening {
        opening: record.opening.clone(),
        why,
    })?;
    let end = replay(
        Position::start(record.size),
        &record.opening,
        opening,
        transcript,
        moves,
    )?;
    check_end(record, &end)
}

/// The final position, and what is needed to judge the end.
struct Replayed {
    pos: Position,
    /// Whether a bot played a move or a pass (not only the opening).
    bots_moved: bool,
}

/// A move of an opening transcript as written: a square, or a written
/// pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    Pass,
    Square(Square),
}

/// An opening transcript read as `replay_transcript` reads it (spaces
/// ignored, `pass`/`pa` any case, squares any case), without replaying it:
/// its moves are checked where the record plays them.
struct Opening {
    moves: Vec<Written>,
    next: usize,
}

impl Opening {
    fn read(text: &str) -> Result<Opening, NotationError> {
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut moves = Vec::with_capacity(chars.len() / 2);
        let mut i = 0;
        while i < chars.len() {
            let rest = &chars[i..];
            if starts_with_word(rest, "pass") {
                moves.push(Written::Pass);
                i += 4;
            } else if starts_with_word(rest, "pa") {
                moves.push(Written::Pass);
                i += 2;
            } else {
                let (col, row) = match chars[i..] {
                    [c, r, ..] if c.is_ascii() && r.is_ascii() => (
                        (c as u8).to_ascii_lowercase().wrapping_sub(b'a'),
                        (r as u8).wrapping_sub(b'1'),
                    ),
                    _ => (8, 8),
                };
                if col >= 8 || row >= 8 {
                    return Err(NotationError::BadSquare(rest.iter().take(2).collect()));
                }
                moves.push(Written::Square(Square::new(col, row)));
                i += 2;
            }
        }
        Ok(Opening { moves, next: 0 })
    }

    fn is_done(&self) -> bool {
        self.next == self.moves.len()
    }

    /// Whether `mv`, marked `opening`, is the opening's next move: a square
    /// as written, a written pass, or a forced pass `replay_transcript`
    /// puts before the next square.
    fn take(&mut self, mv: Move) -> bool {
        let next = self.moves.get(self.next).copied();
        match (mv, next) {
            (Move::Play(sq), Some(Written::Square(w))) if sq == w => self.next += 1,
            (Move::Pass, Some(Written::Pass)) => self.next += 1,
            (Move::Pass, Some(Written::Square(_))) => {}
            _ => return false,
        }
        true
    }
}

/// Whether `chars` start with `word`, any case.
fn starts_with_word(chars: &[char], word: &str) -> bool {
    chars.len() >= word.len()
        && chars
            .iter()
            .zip(word.chars())
            .all(|(c, w)| c.eq_ignore_ascii_case(&w))
}

fn replay(
    start: Position,
    opening_text: &str,
    mut opening: Opening,
    transcript: &str,
    moves: &[MoveRecord],
) -> Result<Replayed, Refusal> {
    let size = start.size();
    let mut pos = start;
    let mut bots_moved = false;
    // The transcript the moves make (passes left out).
    let mut played = Vec::with_capacity(transcript.len());
    for (i, m) in moves.iter().enumerate() {
        let ply = i + 1;
        let mv = m.mv;
        let marks = |what| Refusal::Marks { ply, mv, what };
        if let Move::Play(square) = mv {
            if square.col() >= size || square.row() >= size {
                return Err(Refusal::OffBoard { ply, square });
            }
        }
        let to_move = pos.to_move();
        if m.color != to_move {
            return Err(Refusal::Colour {
                ply,
                mv,
                recorded: m.color,
                to_move,
            });
        }
        if m.opening {
            if bots_moved {
                return Err(marks("is marked `opening`, but the opening is over"));
            }
            if !opening.take(mv) {
                return Err(marks(
                    "is not the opening's move there (the opening's moves come first, marked `opening`)",
                ));
            }
            if m.ms != 0 {
                return Err(marks("is the opening's but has a thinking time"));
            }
        } else if !opening.is_done() {
            return Err(Refusal::OpeningCut(opening_text.to_string()));
        }
        if m.auto && (mv != Move::Pass || m.opening || m.ms != 0) {
            return Err(marks(
                "is marked as the referee's pass (`auto`) but is not a pass without time",
            ));
        }
        // One move generation per ply: the other side's moves are looked
        // at only where this side has none.
        let legal = pos.legal_moves();
        let illegal = |why| Refusal::Illegal {
            ply,
            color: to_move,
            mv,
            why,
        };
        pos = match mv {
            Move::Play(sq) if legal & sq.bit() != 0 => {
                played.extend_from_slice(&[b'a' + sq.col(), b'1' + sq.row()]);
                pos.play_unchecked(sq, pos.flips(sq))
            }
            _ if legal == 0 && pos.is_over() => {
                return Err(marks("comes after the end of the game"))
            }
            Move::Play(_) => {
                return Err(illegal(pos.check(mv).err().unwrap_or(IllegalMove::NoFlips)))
            }
            Move::Pass if legal != 0 => return Err(illegal(IllegalMove::PassWithMoves)),
            Move::Pass => pos.pass_unchecked(),
        };
        bots_moved |= !m.opening;
    }
    if !opening.is_done() {
        return Err(Refusal::OpeningCut(opening_text.to_string()));
    }
    if played != transcript.as_bytes() {
        return Err(Refusal::Transcript {
            recorded: transcript.to_string(),
            played: String::from_utf8_lossy(&played).into_owned(),
        });
    }
    Ok(Replayed { pos, bots_moved })
}

/// Reasons given only for the answer to a TURN (or to the ILLEGAL after
/// one): the side that forfeits was the side to move.
fn answers_a_move(reason: EndReason) -> bool {
    matches!(
        reason,
        EndReason::Occupied
            | EndReason::NoFlips
            | EndReason::OffBoard
            | EndReason::PassWithMoves
            | EndReason::Unparseable
            | EndReason::Timeout
    )
}

fn check_end(record: &GameRecord, end: &Replayed) -> Result<(), Refusal> {
    let pos = end.pos;
    let board = DiscCount::from(pos.discs());
    if record.discs != board {
        return Err(Refusal::Discs {
            recorded: record.discs,
            board,
        });
    }
    let forfeiter = match (&record.forfeit, record.reason) {
        (None, EndReason::Normal) => None,
        (Some(f), EndReason::Normal) => return Err(Refusal::StrayForfeit(f.color)),
        (None, reason) => return Err(Refusal::NoForfeit { reason }),
        (Some(f), reason) => {
            let color = f.color;
            if pos.is_over() && end.bots_moved {
                return Err(Refusal::ForfeitAfterEnd { color, reason });
            }
            if answers_a_move(reason) && color != pos.to_move() {
                return Err(Refusal::ForfeitNotToMove {
                    color,
                    reason,
                    to_move: pos.to_move(),
                });
            }
            Some(color)
        }
    };
    let (winner, score, why) = match forfeiter {
        None => {
            if !pos.is_over() {
                let side = if pos.legal_moves() != 0 {
                    pos.to_move()
                } else {
                    pos.to_move().opponent()
                };
                return Err(Refusal::NotOver(side));
            }
            let wof = pos.discs_wof();
            (
                Winner::from_color(wof.winner()),
                DiscCount::from(wof),
                format!(
                    "the final position (black {}, white {}; empties to the winner)",
                    board.black, board.white
                ),
            )
        }
        Some(color) => {
            let score = DiscCount::forfeit(color, record.size);
            (
                Winner::from_color(Some(color.opponent())),
                score,
                format!(
                    "{color}'s forfeit (`{}`, all squares to the winner)",
                    record.reason
                ),
            )
        }
    };
    if record.result != winner {
        return Err(Refusal::Result {
            recorded: record.result.name(),
            expected: winner.name(),
            why,
        });
    }
    if record.discs_wof != score {
        return Err(Refusal::Score {
            recorded: record.discs_wof,
            expected: score,
            why,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Real records from the referee (scripted seats, no process), edited
    //! the way a hand in games.jsonl would.

    use super::*;
    use crate::event::Silent;
    use crate::game::parse_move;
    use crate::record::Forfeit;
    use crate::referee::{play_seats, test_spec, Rules, ScriptedSeat, SeatError};

    fn played_from(size: u8, opening: &str) -> GameRecord {
        played(size, opening, None)
    }

    fn played(size: u8, opening: &str, white_exits_at: Option<usize>) -> GameRecord {
        let spec = test_spec("g", size, opening, Rules::default());
        let mut b = ScriptedSeat::first_legal("b");
        let mut w = match white_exits_at {
            None => ScriptedSeat::first_legal("w"),
            Some(at) => {
                let mut n = 0;
                ScriptedSeat::new("w", move |req| {
                    n += 1;
                    if n == at {
                        return Err(SeatError::Exited("ended".into()));
                    }
                    Ok(match req {
                        crate::protocol::Request::New { .. } => "READY".into(),
                        crate::protocol::Request::Turn { pos, .. } => pos
                            .legal_squares()
                            .first()
                            .map_or("pass".into(), |s| crate::game::square_name(*s)),
                        _ => "BYE".into(),
                    })
                })
            }
        };
        let r = play_seats(&spec, [&mut b, &mut w], &Silent).unwrap();
        assert_eq!(r.check(), Ok(()));
        r
    }

    fn refused(r: &GameRecord) -> String {
        r.check().expect_err("refused").to_string()
    }

    #[test]
    fn a_flipped_result_with_its_discs_kept_is_refused() {
        let mut r = played(8, "", None);
        assert_eq!(r.reason, EndReason::Normal);
        assert_ne!(r.result, Winner::Draw, "first-legal on 8x8 is no draw");
        r.result = match r.result {
            Winner::Black => Winner::White,
            _ => Winner::Black,
        };
        let e = refused(&r);
        assert!(e.starts_with("result `"), "{e}");
        assert!(e.contains("does not follow"), "{e}");
    }

    #[test]
    fn an_impossible_score_and_wrong_discs_are_refused() {
        let good = played(8, "", None);
        let mut r = good.clone();
        r.discs_wof = DiscCount {
            black: 70,
            white: 0,
        };
        assert!(
            refused(&r).starts_with("score 70-0 does not follow"),
            "{}",
            refused(&r)
        );
        let mut r = good.clone();
        r.discs.black += 1;
        assert!(refused(&r).starts_with("its discs"), "{}", refused(&r));
        // A forfeit's score is all squares to the winner, nothing else.
        let mut r = played(6, "", Some(4));
        assert_eq!((r.reason, r.result), (EndReason::Exited, Winner::Black));
        assert_eq!((r.discs_wof.black, r.discs_wof.white), (36, 0));
        r.discs_wof = DiscCount {
            black: 20,
            white: 16,
        };
        assert!(
            refused(&r).contains("white's forfeit (`exited`"),
            "{}",
            refused(&r)
        );
    }

    #[test]
    fn an_illegal_transcript_is_refused_with_its_ply() {
        let mut r = played(8, "", None);
        for (m, sq) in r.moves.iter_mut().zip(["a1", "h8", "a8", "h1"]) {
            m.mv = parse_move(sq, 8).unwrap();
        }
        r.transcript = format!("a1h8a8h1{}", &r.transcript[8..]);
        assert_eq!(
            refused(&r),
            "move 1 (black `a1`) is illegal: move flips no disc"
        );
        // The transcript alone edited: it is not the moves.
        let mut r = played(8, "", None);
        r.transcript.replace_range(0..2, "a1");
        assert!(
            refused(&r).starts_with("its transcript `a1"),
            "{}",
            refused(&r)
        );
    }

    #[test]
    fn colours_passes_and_the_end_follow_the_position() {
        let good = played(8, "d3c3b3b2f5a3a1c1", None);
        let pass = good.moves.iter().position(|m| m.mv == Move::Pass).unwrap();
        assert!(
            good.moves[pass].auto,
            "the referee's pass after the opening"
        );
        let mut r = good.clone();
        r.moves[10].color = r.moves[10].color.opponent();
        assert!(refused(&r).starts_with("move 11 "), "{}", refused(&r));
        assert!(refused(&r).contains("was to move"), "{}", refused(&r));
        // A pass where a move exists.
        let mut r = good.clone();
        r.moves.insert(
            12,
            MoveRecord {
                color: r.moves[12].color,
                mv: Move::Pass,
                ms: 0,
                opening: false,
                auto: true,
            },
        );
        assert!(
            refused(&r).contains("pass while a legal move exists"),
            "{}",
            refused(&r)
        );
        // Moves cut short: `normal` on a game that is not over.
        let mut r = good.clone();
        let last = r.moves.pop().unwrap();
        r.transcript
            .truncate(r.transcript.len() - 2 * usize::from(last.mv != Move::Pass));
        assert!(
            refused(&r).contains("not over") || refused(&r).starts_with("its discs"),
            "{}",
            refused(&r)
        );
        // A move after the end.
        let mut r = good.clone();
        r.moves.push(MoveRecord {
            color: Color::Black,
            mv: Move::Pass,
            ms: 0,
            opening: false,
            auto: true,
        });
        assert!(refused(&r).contains("after the end"), "{}", refused(&r));
        // The opening's moves must be the opening.
        let mut r = good.clone();
        r.opening = "f5".into();
        assert!(refused(&r).contains("opening"), "{}", refused(&r));
        let mut r = good.clone();
        r.size = 5;
        assert_eq!(refused(&r), "board size 5 is not 4, 6 or 8");
    }

    #[test]
    fn forfeits_name_a_side_that_could_forfeit() {
        let good = played(8, "", Some(7));
        assert_eq!(good.reason, EndReason::Exited);
        let mut r = good.clone();
        r.forfeit = None;
        assert!(refused(&r).contains("names no side"), "{}", refused(&r));
        let mut r = good.clone();
        r.reason = EndReason::Normal;
        assert!(
            refused(&r).contains("names white as forfeiting"),
            "{}",
            refused(&r)
        );
        // A timeout is the side to move's; black just moved.
        let mut r = good.clone();
        assert_eq!(r.moves.last().unwrap().color, Color::Black);
        r.reason = EndReason::Timeout;
        assert_eq!(r.check(), Ok(()), "white was to move: its timeout stands");
        // A person's resignation is their forfeit, read back like one.
        let mut resigned = good.clone();
        resigned.reason = EndReason::Resigned;
        assert_eq!(
            resigned.check(),
            Ok(()),
            "white resigned: the record stands"
        );
        let json = serde_json::to_string(&resigned).unwrap();
        assert!(json.contains(r#""reason":"resigned""#), "{json}");
        let back: GameRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back.reason, EndReason::Resigned);
        r.forfeit = Some(Forfeit {
            color: Color::Black,
            ..r.forfeit.clone().unwrap()
        });
        r.result = Winner::White;
        r.discs_wof = DiscCount {
            black: 0,
            white: 64,
        };
        assert!(
            refused(&r).contains("but white was to move"),
            "{}",
            refused(&r)
        );
        // A forfeit after the game was over: a finished game made a forfeit.
        let mut r = played(8, "", None);
        r.reason = EndReason::Exited;
        r.forfeit = Some(good.forfeit.clone().unwrap());
        r.result = Winner::Black;
        r.discs_wof = DiscCount {
            black: 64,
            white: 0,
        };
        assert!(
            refused(&r).contains("after the game was over"),
            "{}",
            refused(&r)
        );
    }

    /// Openings as a schedule may write them: a forced pass inserted or
    /// written, any case, spaces; the referee's records of them stand.
    #[test]
    fn openings_with_passes_and_any_spelling_stand() {
        let must_pass = "e6f6g6g7c4h6h8f8";
        let (_, pos) = crate::game::replay_transcript(Position::start(8), must_pass).unwrap();
        let after = pos.pass_unchecked();
        let white = crate::game::square_name(after.legal_squares()[0]);
        for opening in [
            format!("{must_pass}{white}"),
            format!("{must_pass}pass{white}"),
            format!("{} PA {}", must_pass.to_uppercase(), white.to_uppercase()),
            format!("{must_pass}pass"),
        ] {
            let r = played_from(8, &opening);
            let passes = r
                .moves
                .iter()
                .filter(|m| m.opening && m.mv == Move::Pass)
                .count();
            assert_eq!(passes, 1, "{opening}: {:?}", r.moves);
            assert_eq!(r.check(), Ok(()), "{opening}");
            // The opening's pass left out of the moves: not the opening.
            let mut cut = r.clone();
            let at = cut.moves.iter().position(|m| m.mv == Move::Pass).unwrap();
            cut.moves.remove(at);
            assert!(cut.check().is_err(), "{opening}");
        }
        let mut r = played_from(8, &format!("{must_pass}{white}"));
        r.opening = must_pass.to_string();
        assert!(refused(&r).contains("opening"), "{}", refused(&r));
        r.opening = "zz".into();
        assert!(
            refused(&r).starts_with("its opening `zz` breaks the rules"),
            "{}",
            refused(&r)
        );
    }
}
