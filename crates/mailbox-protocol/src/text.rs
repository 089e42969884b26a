//! The texts of mailbox protocol v1 (PROTOCOL.md, "What the referee says,
//! and what the bot answers"): the referee's requests (NEW, TURN, ILLEGAL,
//! END, and any word a later referee may add) and a bot's replies (READY, a
//! move or pass, OK, BYE), each with the one encoder and the one decoder
//! of the project.
//!
//! Owns: the words, their fields and their order on line 4 of a message.
//! Must not: read or write files (the four-line frame is
//! [`crate::message`]'s, the move files are the tournament's `mailbox`'s),
//! judge a move (the rules are the `othello` crate's), or decide a result
//! (the referee's). Anyone who needs a protocol text —
//! referee, check-bot, the built-in bots, the bench, tests — makes it here.

use std::fmt;

use othello::{
    board_string, move_name, parse_board_string, parse_move, Color, Move, NotationError, Position,
};

/// What the referee says to a bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// `NEW <game-id> <color> <opponent> <size> <move-ms>`: a game begins.
    New {
        game: String,
        color: Color,
        opponent: String,
        size: u8,
        move_ms: u64,
    },
    /// `TURN <color> <board> <last> <ms>`: the side to move of `pos` (the
    /// bot's colour) moves; `last` is the opponent's last move (`None`:
    /// nobody has moved yet); `ms` the time it has.
    Turn {
        pos: Position,
        last: Option<Move>,
        ms: u64,
    },
    /// `ILLEGAL <reason>`: the last answer was refused (retries only).
    Illegal { reason: String },
    /// `END <winner> <black-discs> <white-discs> <reason>`; `winner` is
    /// `None` for a draw; the reason may be several words.
    End {
        winner: Option<Color>,
        black: u32,
        white: u32,
        reason: String,
    },
    /// Any other text (a later referee's new kind, or check-bot's probe):
    /// a bot answers OK. Encoded as it is.
    Other(String),
}

/// What a bot answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// To NEW.
    Ready,
    /// To TURN: a square or `pass`.
    Move(Move),
    /// To ILLEGAL and to anything unknown.
    Ok,
    /// To END.
    Bye,
}

/// The kinds of request, for limits, hints and error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    New,
    Turn,
    Illegal,
    End,
    Other,
}

impl Verb {
    /// The word on the wire (`Other` has none of its own).
    pub fn word(self) -> &'static str {
        match self {
            Verb::New => "NEW",
            Verb::Turn => "TURN",
            Verb::Illegal => "ILLEGAL",
            Verb::End => "END",
            Verb::Other => "other",
        }
    }

    /// The kind of a request text, from its first word.
    pub fn of(text: &str) -> Verb {
        match text.split(' ').next().unwrap_or("") {
            "NEW" => Verb::New,
            "TURN" => Verb::Turn,
            "ILLEGAL" => Verb::Illegal,
            "END" => Verb::End,
            _ => Verb::Other,
        }
    }

    /// The reply this kind of request is answered with, in words.
    pub fn expected_reply(self) -> &'static str {
        match self {
            Verb::New => "READY",
            Verb::Turn => "a move",
            Verb::Illegal | Verb::Other => "OK",
            Verb::End => "BYE",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Why a text is not the request or reply it should be.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// A request with a field missing or unreadable.
    #[error("{verb}: field {index} ({field}) {problem}")]
    Field {
        verb: Verb,
        /// From 1, after the verb.
        index: usize,
        field: &'static str,
        problem: String,
    },
    /// A request with words after its last field.
    #[error("{verb}: {extra} word(s) after the last field")]
    Extra { verb: Verb, extra: usize },
    /// Not READY, OK, BYE, a square or `pass`.
    #[error("{text:?} is not READY, OK, BYE, a square or `pass`")]
    Reply { text: String },
}

impl ProtocolError {
    /// The kind of request this error was found in (`None` for a reply).
    pub fn verb(&self) -> Option<Verb> {
        match self {
            ProtocolError::Field { verb, .. } | ProtocolError::Extra { verb, .. } => Some(*verb),
            ProtocolError::Reply { .. } => None,
        }
    }
}

fn color_word(c: Color) -> &'static str {
    c.name()
}

fn last_word(last: Option<Move>) -> String {
    match last {
        None => "none".to_string(),
        Some(mv) => move_name(mv),
    }
}

impl Request {
    /// TURN for the side to move of `pos`.
    pub fn turn(pos: &Position, last: Option<Move>, ms: u64) -> Request {
        Request::Turn {
            pos: *pos,
            last,
            ms,
        }
    }

    /// END for a finished game, from disc counts (winner by the counts).
    pub fn end(black: u32, white: u32, reason: impl Into<String>) -> Request {
        let winner = match black.cmp(&white) {
            std::cmp::Ordering::Greater => Some(Color::Black),
            std::cmp::Ordering::Less => Some(Color::White),
            std::cmp::Ordering::Equal => None,
        };
        Request::End {
            winner,
            black,
            white,
            reason: reason.into(),
        }
    }

    pub fn verb(&self) -> Verb {
        match self {
            Request::New { .. } => Verb::New,
            Request::Turn { .. } => Verb::Turn,
            Request::Illegal { .. } => Verb::Illegal,
            Request::End { .. } => Verb::End,
            Request::Other(_) => Verb::Other,
        }
    }

    /// The text of line 4.
    pub fn encode(&self) -> String {
        match self {
            Request::New {
                game,
                color,
                opponent,
                size,
                move_ms,
            } => format!(
                "NEW {game} {} {opponent} {size} {move_ms}",
                color_word(*color)
            ),
            Request::Turn { pos, last, ms } => format!(
                "TURN {} {} {} {ms}",
                color_word(pos.to_move()),
                board_string(pos),
                last_word(*last)
            ),
            Request::Illegal { reason } => format!("ILLEGAL {reason}"),
            Request::End {
                winner,
                black,
                white,
                reason,
            } => format!(
                "END {} {black} {white} {reason}",
                winner.map_or("draw", color_word)
            ),
            Request::Other(text) => text.clone(),
        }
    }

    /// Reads the text of line 4. An unknown first word is
    /// [`Request::Other`], never an error; a known one must have its
    /// fields.
    pub fn decode(text: &str) -> Result<Request, ProtocolError> {
        let verb = Verb::of(text);
        let words: Vec<&str> = text.split(' ').skip(1).collect();
        let field = |index: usize, field: &'static str| -> Result<&str, ProtocolError> {
            words
                .get(index - 1)
                .copied()
                .filter(|w| !w.is_empty())
                .ok_or(ProtocolError::Field {
                    verb,
                    index,
                    field,
                    problem: "is missing".into(),
                })
        };
        let bad = |index: usize, field: &'static str, problem: String| ProtocolError::Field {
            verb,
            index,
            field,
            problem,
        };
        let number = |index: usize, name: &'static str| -> Result<u64, ProtocolError> {
            let w = field(index, name)?;
            w.parse::<u64>()
                .map_err(|_| bad(index, name, format!("is `{w}`, not a number")))
        };
        let color = |index: usize| -> Result<Color, ProtocolError> {
            match field(index, "color")? {
                "black" => Ok(Color::Black),
                "white" => Ok(Color::White),
                w => Err(bad(index, "color", format!("is `{w}`, not black or white"))),
            }
        };
        let exactly = |n: usize| -> Result<(), ProtocolError> {
            if words.len() > n {
                return Err(ProtocolError::Extra {
                    verb,
                    extra: words.len() - n,
                });
            }
            Ok(())
        };
        match verb {
            Verb::New => {
                let game = field(1, "game-id")?.to_string();
                let color = color(2)?;
                let opponent = field(3, "opponent")?.to_string();
                let size = number(4, "size")?;
                let size = u8::try_from(size)
                    .ok()
                    .filter(|s| matches!(s, 4 | 6 | 8))
                    .ok_or_else(|| bad(4, "size", format!("is {size}, not 4, 6 or 8")))?;
                let move_ms = number(5, "move-ms")?;
                exactly(5)?;
                Ok(Request::New {
                    game,
                    color,
                    opponent,
                    size,
                    move_ms,
                })
            }
            Verb::Turn => {
                let color = color(1)?;
                let pos = parse_board_string(field(2, "board")?, color)
                    .map_err(|e| bad(2, "board", e.to_string()))?;
                let last = match field(3, "last")? {
                    "none" => None,
                    w => {
                        Some(parse_move(w, pos.size()).map_err(|e| bad(3, "last", e.to_string()))?)
                    }
                };
                let ms = number(4, "ms")?;
                exactly(4)?;
                Ok(Request::Turn { pos, last, ms })
            }
            Verb::Illegal => Ok(Request::Illegal {
                reason: words.join(" "),
            }),
            Verb::End => {
                let winner = match field(1, "winner")? {
                    "black" => Some(Color::Black),
                    "white" => Some(Color::White),
                    "draw" => None,
                    w => {
                        return Err(bad(
                            1,
                            "winner",
                            format!("is `{w}`, not black, white or draw"),
                        ))
                    }
                };
                let black = number(2, "black-discs")? as u32;
                let white = number(3, "white-discs")? as u32;
                Ok(Request::End {
                    winner,
                    black,
                    white,
                    reason: words.get(3..).unwrap_or_default().join(" "),
                })
            }
            Verb::Other => Ok(Request::Other(text.to_string())),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

impl Reply {
    /// The text of line 4 (squares in lower case).
    pub fn encode(&self) -> String {
        match self {
            Reply::Ready => "READY".to_string(),
            Reply::Move(mv) => move_name(*mv),
            Reply::Ok => "OK".to_string(),
            Reply::Bye => "BYE".to_string(),
        }
    }

    /// Reads an answer on a board of `size`: READY, OK and BYE in any
    /// case, a square in any case or `pass`, surrounding blanks ignored.
    /// A square off this board is a [`NotationError::OffBoard`] in the
    /// error's words; anything else unreadable is [`ProtocolError::Reply`].
    pub fn decode(text: &str, size: u8) -> Result<Reply, ReplyError> {
        let t = text.trim();
        for (word, reply) in [
            ("READY", Reply::Ready),
            ("OK", Reply::Ok),
            ("BYE", Reply::Bye),
        ] {
            if t.eq_ignore_ascii_case(word) {
                return Ok(reply);
            }
        }
        match parse_move(t, size) {
            Ok(mv) => Ok(Reply::Move(mv)),
            Err(NotationError::OffBoard(s)) => Err(ReplyError::OffBoard(s)),
            Err(_) => Err(ReplyError::Unreadable(ProtocolError::Reply {
                text: text.to_string(),
            })),
        }
    }
}

/// Why an answer is no reply at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// A square, but outside this board (`h8` on 6×6).
    #[error("`{0}` is off this board")]
    OffBoard(String),
    #[error(transparent)]
    Unreadable(ProtocolError),
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use othello::parse_square;

    #[test]
    fn requests_encode_as_protocol_md_shows_and_decode_back() {
        let start = Position::start(8);
        let after_c3 = othello::replay_transcript(start, "d3c3").unwrap().1;
        let table = [
            (
                Request::New {
                    game: "g1".into(),
                    color: Color::Black,
                    opponent: "random".into(),
                    size: 8,
                    move_ms: 1000,
                },
                "NEW g1 black random 8 1000",
            ),
            (
                Request::turn(&start, None, 1000),
                "TURN black ---------------------------OX------XO--------------------------- none 1000",
            ),
            (
                Request::turn(&after_c3, Some(Move::Play(parse_square("c3").unwrap())), 1000),
                "TURN black ------------------OX-------OX------XO--------------------------- c3 1000",
            ),
            (
                Request::Illegal {
                    reason: "no-flips".into(),
                },
                "ILLEGAL no-flips",
            ),
            (Request::end(35, 29, "normal"), "END black 35 29 normal"),
            (Request::end(2, 2, "normal"), "END draw 2 2 normal"),
            (
                Request::end(0, 64, "timeout"),
                "END white 0 64 timeout",
            ),
            (Request::Other("PING check-bot".into()), "PING check-bot"),
        ];
        for (request, text) in table {
            assert_eq!(request.encode(), text);
            assert_eq!(Request::decode(text), Ok(request), "{text}");
        }
    }

    #[test]
    fn bad_requests_name_the_field() {
        let table = [
            ("NEW g1 purple x 8 1000", "field 2 (color)"),
            ("NEW g1 black x 7 1000", "field 4 (size)"),
            ("NEW g1 black x 8", "field 5 (move-ms) is missing"),
            ("NEW g1 black x 8 1000 more", "1 word(s) after"),
            ("TURN black XO none 5", "field 2 (board)"),
            (
                "TURN white ---------------------------OX------XO--------------------------- zz 5",
                "field 3 (last)",
            ),
            ("END nobody 1 2 normal", "field 1 (winner)"),
        ];
        for (text, needle) in table {
            let err = Request::decode(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn replies_decode_in_any_case_and_encode_in_lower_case_squares() {
        let d3 = Move::Play(parse_square("d3").unwrap());
        let table = [
            ("READY", Ok(Reply::Ready)),
            ("ready", Ok(Reply::Ready)),
            (" OK ", Ok(Reply::Ok)),
            ("bye", Ok(Reply::Bye)),
            ("D3", Ok(Reply::Move(d3))),
            ("pass", Ok(Reply::Move(Move::Pass))),
            ("h8", Err(ReplyError::OffBoard("h8".into()))),
        ];
        for (text, expected) in table {
            assert_eq!(Reply::decode(text, 6), expected, "{text}");
        }
        assert!(matches!(
            Reply::decode("hello there", 8),
            Err(ReplyError::Unreadable(_))
        ));
        assert_eq!(Reply::Move(d3).encode(), "d3");
        assert_eq!(Reply::Ready.encode(), "READY");
    }
}
