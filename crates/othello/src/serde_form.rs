//! The serde form of colours and moves (feature `serde`): the notation's
//! own text, `black` / `white` and `d3` / `pass`, so a record holding a
//! [`Color`] or a [`Move`] serialises to exactly what it held as text.
//!
//! Owns the (de)serialisers only: the text itself is `Color::name`,
//! `move_name` and `parse_move`'s. No board size is known here: a square
//! of 8×8 off a smaller board is read, and the rules refuse it where the
//! size is known.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

use super::board::{Color, Move};
use super::notation::{move_name, parse_move};

impl Serialize for Color {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Color {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Color, D::Error> {
        d.deserialize_str(FromText {
            expecting: "a colour: `black` or `white`",
            read: |text| match text {
                "black" => Ok(Color::Black),
                "white" => Ok(Color::White),
                _ => Err(Some(&["black", "white"])),
            },
        })
    }
}

impl Serialize for Move {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&move_name(*self))
    }
}

impl<'de> Deserialize<'de> for Move {
    /// A square or `pass` as `parse_move` reads them (any case, `pa`),
    /// without surrounding spaces.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Move, D::Error> {
        d.deserialize_str(FromText {
            expecting: "a move: a square `a1`..`h8` or `pass`",
            read: |text| {
                parse_move(text, 8)
                    .ok()
                    .filter(|_| text.trim() == text)
                    .ok_or(None)
            },
        })
    }
}

/// Reads a value from its text with `read`, which refuses a text with the
/// names it would take (an unknown variant) or without (an invalid value);
/// `expecting` says what was wanted.
struct FromText<T> {
    expecting: &'static str,
    read: fn(&str) -> Result<T, Option<&'static [&'static str]>>,
}

impl<T> Visitor<'_> for FromText<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        (self.read)(text).map_err(|names| match names {
            Some(names) => E::unknown_variant(text, names),
            None => E::invalid_value(de::Unexpected::Str(text), &self),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Square;

    #[test]
    fn colours_and_moves_are_their_text() {
        let json = serde_json::to_string(&(
            Color::Black,
            Color::White,
            Move::Pass,
            Move::Play(Square::new(3, 2)),
        ))
        .unwrap();
        assert_eq!(json, r#"["black","white","pass","d3"]"#);
        let back: (Color, Color, Move, Move) = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back,
            (
                Color::Black,
                Color::White,
                Move::Pass,
                Move::Play(Square::new(3, 2))
            )
        );
    }

    #[test]
    fn moves_read_as_the_notation_reads_them() {
        let read = |t: &str| serde_json::from_str::<Move>(t).map_err(|e| e.to_string());
        assert_eq!(read(r#""D3""#), Ok(Move::Play(Square::new(3, 2))));
        assert_eq!(read(r#""PA""#), Ok(Move::Pass));
        assert_eq!(read(r#""h8""#), Ok(Move::Play(Square::new(7, 7))));
        for bad in [r#""i9""#, r#""d3 ""#, r#""""#, r#""passe""#, "3"] {
            let e = read(bad).expect_err(bad);
            assert!(e.contains("a move: a square"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_colour_is_black_or_white_in_lower_case() {
        let e = serde_json::from_str::<Color>(r#""Black""#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown variant `Black`, expected `black` or `white` at line 1 column 7"
        );
        assert!(serde_json::from_str::<Color>(r#""purple""#).is_err());
    }
}
