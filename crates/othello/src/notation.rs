//! Othello notation: squares (`a1`…`h8`), transcripts (`f5d6c3…`) and the
//! protocol's board string (`X`, `O`, `-`, row 1 first).
//!
//! Owns: parsing and printing only. Pure: no I/O. Rules questions (is this
//! move legal?) are answered by `board`, never here.

use std::fmt;

use super::board::{Color, IllegalMove, Move, Position, Square};

/// Why a piece of notation could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotationError {
    /// Not a square, nor `pass`.
    BadSquare(String),
    /// A square outside this board's size (e.g. `h8` on 6×6).
    OffBoard(String),
    /// A transcript move at `ply` (from 1) is illegal in its position.
    IllegalInTranscript {
        ply: usize,
        text: String,
        why: IllegalMove,
    },
    /// A board string of the wrong length or with a foreign character.
    BadBoard(String),
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::BadSquare(s) => {
                write!(f, "`{s}` is not a square (a1..h8) or `pass`")
            }
            NotationError::OffBoard(s) => write!(f, "`{s}` is off this board"),
            NotationError::IllegalInTranscript { ply, text, why } => {
                write!(f, "move {ply} `{text}` is illegal: {why}")
            }
            NotationError::BadBoard(s) => write!(f, "bad board string: {s}"),
        }
    }
}

impl std::error::Error for NotationError {}

/// Parses a square like `d3` or `D3` (any case), for a board of any size up
/// to 8. Does not check the board size: see [`parse_move`].
pub fn parse_square(text: &str) -> Result<Square, NotationError> {
    let b = text.as_bytes();
    if b.len() != 2 {
        return Err(NotationError::BadSquare(text.to_string()));
    }
    let col = b[0].to_ascii_lowercase().wrapping_sub(b'a');
    let row = b[1].wrapping_sub(b'1');
    if col >= 8 || row >= 8 {
        return Err(NotationError::BadSquare(text.to_string()));
    }
    Ok(Square::new(col, row))
}

/// Parses a move for a board of `size`: a square (any case) or `pass` /
/// `PA` (any case). Surrounding whitespace is ignored.
pub fn parse_move(text: &str, size: u8) -> Result<Move, NotationError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("pass") || t.eq_ignore_ascii_case("pa") {
        return Ok(Move::Pass);
    }
    let sq = parse_square(t)?;
    if sq.col() >= size || sq.row() >= size {
        return Err(NotationError::OffBoard(t.to_string()));
    }
    Ok(Move::Play(sq))
}

/// The square in lower case, e.g. `d3`.
pub fn square_name(sq: Square) -> String {
    let mut s = String::with_capacity(2);
    s.push((b'a' + sq.col()) as char);
    s.push((b'1' + sq.row()) as char);
    s
}

/// `pass` or the square in lower case.
pub fn move_name(mv: Move) -> String {
    match mv {
        Move::Pass => "pass".to_string(),
        Move::Play(sq) => square_name(sq),
    }
}

impl fmt::Display for Square {
    /// The square in lower case, e.g. `d3` (padded as asked: `{:<4}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = [b'a' + self.col(), b'1' + self.row()];
        f.pad(std::str::from_utf8(&name).expect("ASCII"))
    }
}

impl fmt::Display for Move {
    /// `pass` or the square in lower case.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Pass => f.pad("pass"),
            Move::Play(sq) => sq.fmt(f),
        }
    }
}

/// Reads a transcript such as `f5d6c3d3` (squares run together, with or
/// without spaces, `pass`/`PA` allowed) and replays it from `start`.
/// Passes written in the transcript are accepted where forced; forced passes
/// that are not written are inserted. Returns every move played, passes
/// included, and the final position.
pub fn replay_transcript(
    start: Position,
    transcript: &str,
) -> Result<(Vec<Move>, Position), NotationError> {
    let tokens = split_transcript(transcript)?;
    let mut pos = start;
    let mut moves = Vec::with_capacity(tokens.len() + 4);
    for (i, tok) in tokens.iter().enumerate() {
        let mv = parse_move(tok, start.size())?;
        if mv == Move::Pass {
            if pos.must_pass() {
                pos = pos.pass_unchecked();
                moves.push(Move::Pass);
                continue;
            }
            return Err(NotationError::IllegalInTranscript {
                ply: i + 1,
                text: tok.clone(),
                why: IllegalMove::PassWithMoves,
            });
        }
        if pos.must_pass() {
            pos = pos.pass_unchecked();
            moves.push(Move::Pass);
        }
        match pos.play(mv) {
            Ok((next, _)) => {
                pos = next;
                moves.push(mv);
            }
            Err(why) => {
                return Err(NotationError::IllegalInTranscript {
                    ply: i + 1,
                    text: tok.clone(),
                    why,
                })
            }
        }
    }
    Ok((moves, pos))
}

fn split_transcript(text: &str) -> Result<Vec<String>, NotationError> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().take(4).collect();
        if rest.len() >= 4 && rest[..4].eq_ignore_ascii_case("pass") {
            out.push("pass".to_string());
            i += 4;
            continue;
        }
        if i + 1 < chars.len() {
            let tok: String = chars[i..i + 2].iter().collect();
            if tok.eq_ignore_ascii_case("pa") {
                out.push("pass".to_string());
            } else {
                parse_square(&tok)?;
                out.push(tok.to_ascii_lowercase());
            }
            i += 2;
        } else {
            return Err(NotationError::BadSquare(chars[i..].iter().collect()));
        }
    }
    Ok(out)
}

/// The transcript of `moves` without passes, e.g. `f5d6c3`.
pub fn transcript(moves: &[Move]) -> String {
    let mut s = String::with_capacity(moves.len() * 2);
    for mv in moves {
        if let Move::Play(sq) = mv {
            s.push_str(&square_name(*sq));
        }
    }
    s
}

/// The protocol's board string: size×size characters, row 1 first,
/// `X` black, `O` white, `-` empty.
pub fn board_string(pos: &Position) -> String {
    let n = pos.size();
    let mut s = String::with_capacity(n as usize * n as usize);
    for row in 0..n {
        for col in 0..n {
            s.push(match pos.at(Square::new(col, row)) {
                Some(c) => c.disc_char(),
                None => '-',
            });
        }
    }
    s
}

/// Reads a board string back; the size is taken from its length (16, 36, 64).
pub fn parse_board_string(text: &str, to_move: Color) -> Result<Position, NotationError> {
    let size = match text.len() {
        16 => 4,
        36 => 6,
        64 => 8,
        n => {
            return Err(NotationError::BadBoard(format!(
                "{n} characters, expected 16, 36 or 64"
            )))
        }
    };
    let (mut black, mut white) = (0u64, 0u64);
    for (i, ch) in text.bytes().enumerate() {
        let sq = Square::new((i % size) as u8, (i / size) as u8);
        match ch {
            b'X' | b'x' => black |= sq.bit(),
            b'O' | b'o' => white |= sq.bit(),
            b'-' | b'.' => {}
            other => {
                return Err(NotationError::BadBoard(format!(
                    "character `{}` at {}",
                    other as char,
                    square_name(sq)
                )))
            }
        }
    }
    Position::from_parts(black, white, to_move, size as u8)
        .ok_or_else(|| NotationError::BadBoard("discs overlap".into()))
}

/// A human-readable diagram with coordinates, for the console.
pub fn diagram(pos: &Position) -> String {
    diagram_marked(pos, None)
}

/// [`diagram`] with the disc on `last` (the last move) in brackets:
/// ` . .(X). .`, the columns staying aligned.
pub fn diagram_marked(pos: &Position, last: Option<Square>) -> String {
    let n = pos.size();
    let mut s = String::from("  ");
    for col in 0..n {
        s.push(' ');
        s.push((b'a' + col) as char);
    }
    s.push('\n');
    for row in 0..n {
        s.push_str(&format!("{:>2}", row + 1));
        let mut closing = false;
        for col in 0..n {
            let here = Square::new(col, row);
            let marked = last == Some(here);
            s.push(match (marked, std::mem::take(&mut closing)) {
                (true, _) => '(',
                (false, true) => ')',
                (false, false) => ' ',
            });
            closing = marked;
            s.push(match pos.at(here) {
                Some(c) => c.disc_char(),
                None => '.',
            });
        }
        if closing {
            s.push(')');
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_parse_in_any_case_and_print_lower() {
        let table = [("a1", 0, 0), ("H8", 7, 7), ("d3", 3, 2), ("C4", 2, 3)];
        for (text, col, row) in table {
            let sq = parse_square(text).unwrap();
            assert_eq!((sq.col(), sq.row()), (col, row), "{text}");
            assert_eq!(square_name(sq), text.to_ascii_lowercase());
            assert_eq!(sq.to_string(), square_name(sq));
        }
        let d3 = Move::Play(Square::new(3, 2));
        assert_eq!(format!("[{d3:<4}|{:>5}]", Move::Pass), "[d3  | pass]");
        for bad in ["", "a", "a9", "i1", "a0", "1a", "d33", "pass"] {
            assert!(parse_square(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_last_move_is_marked_in_brackets_and_columns_stay_aligned() {
        let pos = Position::start(4);
        let plain = diagram(&pos);
        let marked = diagram_marked(&pos, parse_square("b2").ok());
        assert_eq!(
            marked,
            "   a b c d\n 1 . . . .\n 2 .(O)X .\n 3 . X O .\n 4 . . . .\n"
        );
        assert_eq!(plain, marked.replace(['(', ')'], " "));
        let edge = diagram_marked(&pos, parse_square("d4").ok());
        assert!(edge.ends_with(" 4 . . .(.)\n"), "{edge}");
    }

    #[test]
    fn moves_respect_the_board_size() {
        assert_eq!(parse_move(" PASS ", 8), Ok(Move::Pass));
        assert_eq!(parse_move("pa", 8), Ok(Move::Pass));
        assert_eq!(
            parse_move("f6", 6),
            Ok(Move::Play(parse_square("f6").unwrap()))
        );
        assert!(matches!(
            parse_move("g1", 6),
            Err(NotationError::OffBoard(_))
        ));
        assert!(matches!(
            parse_move("e5", 4),
            Err(NotationError::OffBoard(_))
        ));
    }

    #[test]
    fn transcript_replays_and_reprints() {
        let (moves, pos) = replay_transcript(Position::start(8), "f5d6C3 d3c4").unwrap();
        assert_eq!(moves.len(), 5);
        assert_eq!(transcript(&moves), "f5d6c3d3c4");
        assert_eq!(pos.to_move(), Color::White);
        let err = replay_transcript(Position::start(8), "f5f5").unwrap_err();
        assert!(matches!(
            err,
            NotationError::IllegalInTranscript { ply: 2, .. }
        ));
        assert!(replay_transcript(Position::start(8), "pass").is_err());
    }

    #[test]
    fn board_string_of_the_start() {
        let s = board_string(&Position::start(4));
        assert_eq!(s, "-----OX--XO-----");
        assert_eq!(
            parse_board_string(&s, Color::Black).unwrap(),
            Position::start(4)
        );
        assert!(parse_board_string("XO", Color::Black).is_err());
        assert!(parse_board_string(&"?".repeat(16), Color::Black).is_err());
    }
}
