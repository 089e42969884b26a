//! check-bot's judging: what an answer should have been, and, when it was
//! not, the problem with a concrete hint (a move that is off the board,
//! illegal, or no square at all; a reply word that is not the one asked
//! for; an unusable out.txt; a wrong seq).
//!
//! Owns [`judge_move`] and the expectations a step asks the bot to meet;
//! must not choose the positions (the script does) nor talk to the bot
//! other than through `drive`.

use crate::error::HarnessError;
use crate::game::{move_name, parse_move, square_name, IllegalMove, Move, Position};
use crate::mailbox::{AnswerError, Decoded, FrameError, Message, Pending, REFEREE};
use crate::protocol::{Reply, Request, Verb};

use super::drive::Run;
use super::hints;
use super::report::{label, or_list, sent_line, shown, Problem, StepBuilder};

pub(super) fn legal_names(pos: &Position) -> Vec<String> {
    pos.legal_squares().into_iter().map(square_name).collect()
}

/// What a legal answer in `pos` would be, in words.
pub(super) fn legal_words(pos: &Position) -> String {
    let names = legal_names(pos);
    match names.len() {
        0 => "pass (there is no legal move)".to_string(),
        1 => format!("{} (the only legal move)", names[0]),
        _ => format!("a legal move: {}", or_list(&names)),
    }
}

/// "a legal move here is only c8" / "legal moves here: c4, d3, e6 or f5".
pub(super) fn legal_here(pos: &Position) -> String {
    let names = legal_names(pos);
    match names.len() {
        0 => "there is no legal move here: answer `pass`".to_string(),
        1 => format!("a legal move here is only {}", names[0]),
        _ => format!("legal moves here: {}", or_list(&names)),
    }
}

/// The position a TURN text describes.
pub(super) fn turn_position(text: &str) -> Option<Position> {
    match Request::decode(text) {
        Ok(Request::Turn { pos, .. }) => Some(pos),
        _ => None,
    }
}

/// Why an answer to TURN is not a legal move, and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{got}")]
pub struct BadMove {
    /// What the bot answered, in words (`d4, which already holds a disc`).
    pub got: String,
    /// The likely mistake and the legal moves.
    pub hint: String,
}

impl BadMove {
    pub(super) fn new(got: String, hint: String) -> BadMove {
        BadMove { got, hint }
    }
}

/// Judges a move answer in `pos`: `Ok(move)` if legal, else what is wrong
/// and a hint that guesses the likely mistake.
pub fn judge_move(pos: &Position, answer: &str) -> Result<Move, BadMove> {
    let size = pos.size();
    let color = pos.to_move();
    let last_col = (b'a' + size - 1) as char;
    let mv = match parse_move(answer, size) {
        Ok(mv) => mv,
        Err(crate::game::NotationError::OffBoard(_)) => {
            return Err(BadMove::new(
                format!("{answer:?} is off this {size}×{size} board"),
                format!(
                    "this board is {size}×{size}: columns a–{last_col}, rows 1–{size} (the size is \
                     in NEW, and the board string has {} characters); {}",
                    u32::from(size) * u32::from(size),
                    legal_here(pos)
                ),
            ))
        }
        Err(_) => {
            let hint = if answer.trim().is_empty() {
                format!("line 4 of out.txt must be the move; {}", legal_here(pos))
            } else if let Some(zero) = hints::row_zero(pos, answer) {
                format!("{zero}; {}", legal_here(pos))
            } else if answer.contains(' ') {
                format!(
                    "answer only the move, one word like `d3` or `pass`, nothing else on line 4; {}",
                    legal_here(pos)
                )
            } else {
                format!(
                    "answer a square as column letter and row digit, like `d3`, or `pass`; {}",
                    legal_here(pos)
                )
            };
            return Err(BadMove::new(
                format!("{answer:?}, which is not a square or `pass`"),
                hint,
            ));
        }
    };
    let sq = match (mv, pos.check(mv)) {
        (_, Ok(())) => return Ok(mv),
        (Move::Pass, Err(_)) => {
            return Err(BadMove::new(
                "pass, although a legal move exists".to_string(),
                format!(
                    "answer pass only when you have no legal move; {}",
                    legal_here(pos)
                ),
            ))
        }
        (Move::Play(sq), Err(_)) if pos.legal_moves() == 0 => {
            return Err(BadMove::new(
                format!("{} although {color} has no legal move", square_name(sq)),
                format!(
                "{color} has no legal move here (no empty square turns over a disc): answer `pass`"
            ),
            ))
        }
        (Move::Play(sq), Err(why)) => (sq, why),
    };
    let (sq, why) = sq;
    let name = square_name(sq);
    let what = match why {
        IllegalMove::Occupied => format!("{name}, which already holds a disc"),
        IllegalMove::NoFlips => format!("{name}, which turns over no disc"),
        other => format!("{name}: {other}"),
    };
    // Guess the mistake: rows and columns swapped, rows counted from 0,
    // rows upside down, the other colour.
    let guess = hints::likely_mistake(pos, sq, why);
    Err(BadMove::new(what, format!("{guess}{}", legal_here(pos))))
}

impl Run<'_> {
    pub(super) fn seq_hint(&mut self, seq: u64, had: u64, sent: &str) -> Problem {
        self.stats
            .seq
            .push(format!("{}: the answer had seq {had}", label(seq, sent)));
        Problem {
            sent: sent.to_string(),
            expected: format!("an answer with seq {seq} on line 3"),
            got: format!("seq {had}"),
            hint: format!(
                "line 3 of out.txt must repeat the seq from in.txt ({seq}); your answer had {had}. \
                 Copy line 3 of in.txt as text; do not count on your own"
            ),
            extra: vec![],
        }
    }

    /// Turns a failed wait into a problem with a hint.
    pub(super) fn describe_failure(
        &mut self,
        err: &AnswerError,
        kind: Verb,
        seq: u64,
        text: &str,
        ms: u64,
    ) -> Problem {
        let sent = sent_line(seq, text);
        let id = self.inst.id().to_string();
        let expected = match kind {
            Verb::Turn => turn_position(text).map_or("a move".to_string(), |p| legal_words(&p)),
            other => other.expected_reply().to_string(),
        };
        let raw = self.raw_out();
        let decoded = raw.as_deref().map(Message::decode);
        match err {
            AnswerError::Timeout {
                pending: Pending::Partial(s),
            } => {
                let lines = s.matches('\n').count();
                self.stats
                    .framing
                    .push(format!("{}: out.txt never completed", label(seq, text)));
                let hint = if lines == 3 {
                    format!(
                        "the answer must end with a newline: write {:?} in one write (the fourth \
                         line needs its line feed too)",
                        format!("{s}\n")
                    )
                } else {
                    format!(
                        "out.txt holds {lines} complete line(s); a message is four lines, each \
                         ending in a newline: your id ({id}), referee, the seq ({seq}), the answer"
                    )
                };
                Problem {
                    sent,
                    expected,
                    got: format!("{} (after {ms} ms, still incomplete)", shown(s.as_bytes())),
                    hint,
                    extra: vec![],
                }
            }
            AnswerError::Timeout { .. } => {
                if let Some(Decoded::Complete(m)) = &decoded {
                    if m.seq != seq && raw.as_ref() != self.last_raw.as_ref() {
                        return self.seq_hint(seq, m.seq, &sent);
                    }
                }
                let stdout = self.inst.stdout_tail();
                let on_stdout = hints::printed_on_stdout(&id, seq, &stdout);
                let hint = if let Some((hint, _)) = &on_stdout {
                    hint.clone()
                } else if !self.answered_any {
                    format!(
                        "the bot never wrote out.txt: it runs with its mailbox ({}) as working \
                         directory, also in $TOURNAMENT_MAILBOX; read in.txt there and write \
                         out.txt next to it",
                        self.inst.mailbox().dir().display()
                    )
                } else {
                    match kind {
                        Verb::New => format!(
                            "after BYE keep reading in.txt: the next game's NEW comes with the \
                             next seq ({seq}); notice a new message by line 3 changing (compare \
                             as text: different, not bigger)"
                        ),
                        Verb::Turn => "answer every TURN within its time (the last word of \
                                       TURN, in ms) with a square or pass"
                            .to_string(),
                        Verb::Illegal => "answer ILLEGAL with OK; a new TURN follows".to_string(),
                        Verb::End => "answer END with BYE, then wait for the next NEW".to_string(),
                        Verb::Other => "answer OK to any message you do not know: later \
                                          referees may send new kinds"
                            .to_string(),
                    }
                };
                Problem {
                    sent,
                    expected: format!("{expected} within {} ms", self.limit_for(kind)),
                    got: format!("no answer after {ms} ms"),
                    hint,
                    extra: on_stdout.map(|(_, extra)| extra).unwrap_or_default(),
                }
            }
            AnswerError::Garbage(_) | AnswerError::BadFrame(_) => {
                if let Some(Decoded::Complete(m)) = &decoded {
                    if m.seq != seq {
                        return self.seq_hint(seq, m.seq, &sent);
                    }
                }
                let (why, hint) = match err {
                    AnswerError::BadFrame(frame) => (
                        frame.to_string(),
                        match frame {
                            FrameError::MoreThanFourLines => {
                                "write exactly four lines: your id, referee, the seq, the answer \
                                 (blank lines at the end are tolerated)"
                                    .to_string()
                            }
                            FrameError::NotPrintable { .. } => {
                                "write only printable ASCII (no BOM, no other encodings)"
                                    .to_string()
                            }
                            FrameError::BadSeq { .. } => format!(
                                "line 3 must be the seq from line 3 of in.txt ({seq}), digits only"
                            ),
                            FrameError::TooBig { .. } => format!(
                                "out.txt must be a small text file of four lines: {id}, referee, \
                                 {seq}, the answer"
                            ),
                        },
                    ),
                    other => (
                        match other {
                            AnswerError::Garbage(why) => why.clone(),
                            _ => other.to_string(),
                        },
                        format!(
                            "out.txt must be a small text file of four lines: {id}, referee, \
                             {seq}, the answer"
                        ),
                    ),
                };
                self.stats
                    .framing
                    .push(format!("{}: {why}", label(seq, text)));
                Problem {
                    sent,
                    expected,
                    got: match &raw {
                        Some(r) if r.len() <= 200 => format!("{} ({why})", shown(r)),
                        _ => why.clone(),
                    },
                    hint,
                    extra: vec![],
                }
            }
            AnswerError::WrongSender { from, to } => {
                let hint = if from == REFEREE && *to == id {
                    format!(
                        "lines 1 and 2 are swapped: line 1 is the sender (you, `{id}`), line 2 \
                         the recipient (`referee`)"
                    )
                } else if *from != id {
                    format!(
                        "line 1 of out.txt must be your id exactly as line 2 of in.txt (`{id}`); \
                         your answer had `{from}`"
                    )
                } else {
                    format!("line 2 of out.txt must be `referee`; your answer had `{to}`")
                };
                self.stats
                    .framing
                    .push(format!("{}: from `{from}` to `{to}`", label(seq, text)));
                Problem {
                    sent,
                    expected: format!("from `{id}` to `referee`"),
                    got: format!("from `{from}` to `{to}`"),
                    hint,
                    extra: vec![],
                }
            }
            other => {
                self.stats
                    .framing
                    .push(format!("{}: {other}", label(seq, text)));
                Problem {
                    sent,
                    expected,
                    got: other.to_string(),
                    hint: "write out.txt as a regular file in the mailbox, overwriting it in one \
                           write; never make links or folders, never move or remove the mailbox"
                        .to_string(),
                    extra: vec![],
                }
            }
        }
    }

    /// Asks `request` and expects the reply `want` (READY, OK or BYE, any case).
    pub(super) fn expect_word(
        &mut self,
        b: &mut StepBuilder,
        request: &Request,
        want: Reply,
    ) -> Result<bool, HarnessError> {
        let text = &request.encode();
        let word = want.encode();
        match self.ask(request)? {
            Err(p) => {
                b.fail(p);
                Ok(false)
            }
            Ok(a) => {
                let a = b.took(a);
                if Reply::decode(&a.text, 8) == Ok(want) {
                    b.note(format!("{} to seq {} in {} ms", a.text, a.seq, a.ms));
                    Ok(true)
                } else {
                    let hint = match (want, request.verb()) {
                        (Reply::Ready, _) => {
                            "answer NEW with READY (and nothing else on line 4)".to_string()
                        }
                        (Reply::Ok, Verb::Illegal) => {
                            "answer ILLEGAL with OK; a fresh TURN follows".to_string()
                        }
                        (Reply::Ok, _) => "answer OK to any message you do not know".to_string(),
                        (Reply::Bye, _) => "answer END with BYE".to_string(),
                        _ => format!("answer {word}"),
                    };
                    b.fail(Problem {
                        sent: sent_line(a.seq, text),
                        expected: word.clone(),
                        got: format!("{:?}", a.text),
                        hint,
                        extra: vec![],
                    });
                    Ok(false)
                }
            }
        }
    }

    /// Sends TURN for the position `moves` lead to on `size` (told as moves
    /// to an engine) and judges the answer: a legal move (or pass where
    /// there is none). Returns the move if it was legal.
    pub(super) fn expect_move(
        &mut self,
        b: &mut StepBuilder,
        size: u8,
        moves: &[Move],
    ) -> Result<Option<Move>, HarnessError> {
        let (pos, plies) = super::script::game_of(size, moves);
        let pos = &pos;
        let turn = self.turn(pos, moves.last().copied());
        let text = turn.encode();
        self.inst.game_so_far(&plies);
        let a = match self.ask(&turn)? {
            Err(p) => {
                b.fail(p);
                return Ok(None);
            }
            Ok(a) => b.took(a),
        };
        match judge_move(pos, &a.text) {
            Ok(mv) => {
                b.note(format!("{} in {} ms", move_name(mv), a.ms));
                Ok(Some(mv))
            }
            Err(BadMove { got, hint }) => {
                b.fail(Problem {
                    sent: sent_line(a.seq, &text),
                    expected: legal_words(pos),
                    got,
                    hint,
                    extra: vec![],
                });
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkbot::script::{scripted, BLACK_MUST_PASS, ONE_MOVE, SIX};
    use crate::game::{parse_square, Square};

    fn names(pos: &Position) -> Vec<String> {
        legal_names(pos)
    }

    #[test]
    fn moves_are_judged_with_hints() {
        let start = Position::start(8);
        assert_eq!(
            judge_move(&start, "D3"),
            Ok(Move::Play(parse_square("d3").unwrap()))
        );
        let BadMove { hint, .. } = judge_move(&start, "pass").unwrap_err();
        assert!(
            hint.contains("answer pass only when you have no legal move"),
            "{hint}"
        );
        let BadMove { got, hint } = judge_move(&start, "hello there").unwrap_err();
        assert!(got.contains("not a square"), "{got}");
        assert!(hint.contains("only the move"), "{hint}");
        let BadMove { got, .. } = judge_move(&start, "d4").unwrap_err();
        assert!(got.contains("already holds a disc"), "{got}");

        let (one, _) = scripted(8, ONE_MOVE);
        let BadMove { hint, .. } = judge_move(&one, "a1").unwrap_err();
        assert!(hint.contains("a legal move here is only c8"), "{hint}");

        let (stuck, _) = scripted(8, BLACK_MUST_PASS);
        assert_eq!(judge_move(&stuck, "pass"), Ok(Move::Pass));
        let BadMove { hint, .. } = judge_move(&stuck, "a1").unwrap_err();
        assert!(hint.contains("answer `pass`"), "{hint}");

        let (six, _) = scripted(6, SIX);
        let BadMove { got, hint } = judge_move(&six, "g7").unwrap_err();
        assert!(got.contains("off this 6×6 board"), "{got}");
        assert!(hint.contains("columns a–f"), "{hint}");
    }

    #[test]
    fn likely_mistakes_are_guessed() {
        // After black f5, white to move (d6, f4 or f6); c4 is legal for
        // black only: the wrong colour.
        let (pos, _) = scripted(8, "f5");
        let BadMove { hint, .. } = judge_move(&pos, "c4").unwrap_err();
        assert!(hint.contains("but you play white"), "{hint}");
        // A legal move with rows and columns swapped.
        let legal = names(&pos);
        let transposed = legal.iter().find_map(|n| {
            let sq = parse_square(n).unwrap();
            let t = Square::new(sq.row(), sq.col());
            (pos.legal_moves() & t.bit() == 0 && pos.at(t).is_none()).then(|| square_name(t))
        });
        if let Some(t) = transposed {
            let BadMove { hint, .. } = judge_move(&pos, &t).unwrap_err();
            assert!(
                hint.contains("swapped") || hint.contains("but you play"),
                "{hint}"
            );
        }
    }
}
