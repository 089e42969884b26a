//! The four-line message of mailbox protocol v1: from, to, seq, text.
//!
//! Owns: encoding and decoding bytes, the completeness rule and the size
//! limit. Knows nothing about files, players or moves.

use std::fmt;

/// The most a reader takes from a move file. Anything longer is garbage.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// The referee's name on the wire.
pub const REFEREE: &str = "referee";

/// The fixed length of a bot's `out.txt` written the fixed-length way
/// (PROTOCOL.md, "Fixed-length files"): the answer, then spaces, written
/// over the old content without truncating. A bot whose `out.txt` has this
/// length (before the first message, or with a padded answer) reads
/// padded `in.txt` too.
pub const OUT_RECORD: usize = 128;

/// The length the referee pads `in.txt` to for a bot that writes
/// fixed-length answers (longer messages are sent as they are). Every
/// message then has the same length, so a network drive's cached length of
/// the file, on another machine, is never shorter than the new message.
pub const IN_RECORD: usize = 512;

/// The byte a message is padded with.
pub const PAD: u8 = b' ';

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub from: String,
    pub to: String,
    pub seq: u64,
    pub text: String,
}

/// Why complete bytes are not a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("{len} bytes, more than the {MAX_MESSAGE_BYTES}-byte limit")]
    TooBig { len: usize },
    #[error("byte 0x{byte:02x} at offset {offset} is not printable ASCII")]
    NotPrintable { byte: u8, offset: usize },
    #[error("more than four lines")]
    MoreThanFourLines,
    #[error("line 3 (seq) is `{text}`, not a number")]
    BadSeq { text: String },
}

/// What a reader made of the bytes it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Fewer than four newline-terminated lines: the writer may not be done.
    Incomplete,
    Complete(Message),
    /// Complete but not a message: why.
    Garbage(FrameError),
}

impl Message {
    pub fn new(from: &str, to: &str, seq: u64, text: &str) -> Message {
        Message {
            from: from.to_string(),
            to: to.to_string(),
            seq,
            text: text.to_string(),
        }
    }

    /// The bytes as written to a move file (LF line ends).
    pub fn encode(&self) -> String {
        format!("{}\n{}\n{}\n{}\n", self.from, self.to, self.seq, self.text)
    }

    /// The bytes padded with spaces to `len` (as they are when longer).
    pub fn encode_padded(&self, len: usize) -> Vec<u8> {
        let mut bytes = self.encode().into_bytes();
        if bytes.len() < len {
            bytes.resize(len, PAD);
        }
        bytes
    }

    /// How many bytes follow the fourth line feed of `bytes` (a fixed-length
    /// writer's padding); `None` if there are not four lines.
    pub fn padding_len(bytes: &[u8]) -> Option<usize> {
        Self::line_feeds(bytes).map(|at| bytes.len() - at[3] - 1)
    }

    /// Where the four line feeds that end the frame's lines are in
    /// `bytes` (the first four), if there are four: the completeness rule
    /// counts them, so a writer that puts the fourth last keeps a message
    /// incomplete until it is whole.
    pub fn line_feeds(bytes: &[u8]) -> Option<[usize; 4]> {
        let mut at = [0; 4];
        let mut seen = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' {
                at[seen] = i;
                seen += 1;
                if seen == 4 {
                    return Some(at);
                }
            }
        }
        None
    }

    /// Whether `bytes` is only padding: what a fixed-length writer leaves
    /// before its first answer (no message yet).
    pub fn is_blank(bytes: &[u8]) -> bool {
        !bytes.is_empty() && bytes.iter().all(|&b| b == PAD)
    }

    /// Reads a message. LF and CRLF line ends are both accepted; trailing
    /// blank lines after the fourth line are tolerated.
    pub fn decode(bytes: &[u8]) -> Decoded {
        if bytes.len() > MAX_MESSAGE_BYTES {
            return Decoded::Garbage(FrameError::TooBig { len: bytes.len() });
        }
        // Split into complete lines; the remainder (no newline yet) is a
        // line still being written.
        let mut lines: Vec<&[u8]> = Vec::with_capacity(4);
        let mut rest = bytes;
        while lines.len() < 4 {
            match rest.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let line = &rest[..i];
                    lines.push(line.strip_suffix(b"\r").unwrap_or(line));
                    rest = &rest[i + 1..];
                }
                None => break,
            }
        }
        // A byte that is not printable ASCII is garbage even before the
        // message is complete: no prefix of a valid message contains one.
        // NUL is the exception: it is what a network drive shows for a file
        // whose new length it knows before its content (sshfs with attribute
        // caching), so NULs alone mean a message still arriving.
        let printable = |b: u8| b == b'\n' || b == b'\r' || b == b'\t' || (0x20..0x7f).contains(&b);
        if let Some(bad) = bytes.iter().position(|&b| !printable(b) && b != 0) {
            return Decoded::Garbage(FrameError::NotPrintable {
                byte: bytes[bad],
                offset: bad,
            });
        }
        if bytes.contains(&0) {
            return Decoded::Incomplete;
        }
        if lines.len() < 4 {
            return Decoded::Incomplete;
        }
        if !rest.iter().all(|b| b.is_ascii_whitespace()) {
            return Decoded::Garbage(FrameError::MoreThanFourLines);
        }
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        let seq_text = text(lines[2]);
        let seq = match seq_text.parse::<u64>() {
            Ok(n) if !seq_text.is_empty() && seq_text.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Decoded::Garbage(FrameError::BadSeq { text: seq_text }),
        };
        Decoded::Complete(Message {
            from: text(lines[0]),
            to: text(lines[1]),
            seq,
            text: text(lines[3]),
        })
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}→{} #{} {}", self.from, self.to, self.seq, self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(from: &str, to: &str, seq: u64, text: &str) -> Decoded {
        Decoded::Complete(Message::new(from, to, seq, text))
    }

    #[test]
    fn decodes_by_the_completeness_rule() {
        let table: &[(&[u8], Decoded)] = &[
            (b"", Decoded::Incomplete),
            (b"bot\nreferee\n3\nd3", Decoded::Incomplete),
            (b"bot\nreferee\n3", Decoded::Incomplete),
            (b"\0\0\0\0\0\0\0\0", Decoded::Incomplete),
            (b"bot\nreferee\n3\nd3\n\0\0", Decoded::Incomplete),
            (
                b"bot\nreferee\n3\nd3\n",
                complete("bot", "referee", 3, "d3"),
            ),
            (
                b"bot\r\nreferee\r\n3\r\nD3\r\n",
                complete("bot", "referee", 3, "D3"),
            ),
            (
                b"bot\nreferee\n3\nd3\n\n",
                complete("bot", "referee", 3, "d3"),
            ),
            (
                b"bot\nreferee\n12\nTURN black ---- none 5\n",
                complete("bot", "referee", 12, "TURN black ---- none 5"),
            ),
        ];
        for (bytes, expected) in table {
            assert_eq!(
                &Message::decode(bytes),
                expected,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn garbage_is_named() {
        let garbage: &[&[u8]] = &[
            b"bot\nreferee\nthree\nd3\n",
            b"bot\nreferee\n-1\nd3\n",
            b"bot\nreferee\n3\nd3\nextra\n",
            b"\x82\xa0\x82\xa2\n",
            b"bot\nref\xff",
            b"\0\xff\0binary\0\x01\x02\n",
        ];
        for bytes in garbage {
            assert!(
                matches!(Message::decode(bytes), Decoded::Garbage(_)),
                "{bytes:?}"
            );
        }
        let big = vec![b'a'; MAX_MESSAGE_BYTES + 1];
        assert!(matches!(Message::decode(&big), Decoded::Garbage(_)));
    }

    #[test]
    fn padded_messages_decode_as_the_message() {
        let m = Message::new(REFEREE, "alice", 41, "TURN black ---- none 5");
        let bytes = m.encode_padded(IN_RECORD);
        assert_eq!(bytes.len(), IN_RECORD);
        assert_eq!(Message::decode(&bytes), Decoded::Complete(m.clone()));
        assert_eq!(
            Message::padding_len(&bytes),
            Some(IN_RECORD - m.encode().len())
        );
        assert_eq!(Message::padding_len(m.encode().as_bytes()), Some(0));
        assert_eq!(Message::padding_len(b"a\nb\n3\n"), None);
        let long = Message::new(REFEREE, "alice", 1, &"x".repeat(600));
        assert_eq!(long.encode_padded(IN_RECORD), long.encode().into_bytes());
        assert!(Message::is_blank(&[PAD; OUT_RECORD]));
        assert!(!Message::is_blank(b""));
        assert_eq!(Message::decode(&[PAD; OUT_RECORD]), Decoded::Incomplete);
    }

    #[test]
    fn encode_then_decode_is_identity() {
        let m = Message::new(REFEREE, "greedy.1", 7, "NEW g1 black random 8 5000");
        assert_eq!(Message::decode(m.encode().as_bytes()), Decoded::Complete(m));
    }
}
