//! The Go Text Protocol, version 2, as Othello engines speak it (gtp-rhino,
//! Edax `-gtp`): the referee's side of the conversation.
//!
//! What is sent: on the first game `protocol_version`, `name`, `version`
//! and `list_commands`; each game `boardsize N` and `clear_board`, then
//! `time_settings 0 <move s> 1` (byo-yomi: the move time for each move) if
//! the engine lists it; each move
//! `play <color> <vertex>` for every ply it has not heard (the opening, the
//! opponent's moves, passes, its own forced passes — a refusal of a pass is
//! logged, not held against it, as engines like gtp-rhino pass by
//! themselves and refuse `play <color> pass`), `time_left <color> <s> 1`
//! (the time this move has, bank included) if listed, then `genmove
//! <color>`; `quit` at the end.
//! Vertices are Othello squares, column letter then row number, row 1 at
//! the top (as gtp-rhino counts them); a pass is `pass`. Commands carry no
//! id. Commands are sent together and their answers read in order.
//!
//! Owns: encoding those commands and reading the answers: `=`/`?`, an
//! optional id, the text, more lines of it, and the blank line that ends
//! it. An engine may take the liberties of the specification: an id on an
//! answer, CR LF line ends, a vertex in either case, an answer of several
//! lines, bytes that are not UTF-8 in an answer the referee only logs
//! (`name`, `version`), not listing `time_settings`/`time_left`, and even
//! refusing `list_commands`; an answer whose blank line never comes ends
//! where the next answer begins. Must not judge the move it gets (the
//! referee does) or start the process.

use std::collections::VecDeque;
use std::time::Instant;

use crate::game::{parse_move, Color, Move};

use super::link::{Line, LineLink, LinkError};
use super::{news, seconds, vertex, Answer, EngineError, GameStart, Ply};

/// What an answer must be.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Want {
    /// A success; an error answer is the engine's fault.
    Success,
    /// Anything (`name`, `version`: kept for the log).
    Any,
    /// `list_commands`: the commands, one a line, until the blank line.
    Commands,
    /// `time_left`: a refusal is logged, not held against it.
    Lenient,
    /// `genmove`: a vertex, a pass or `resign`.
    Move(Color),
    /// `boardsize` + `clear_board` done: the game is ready.
    Ready,
}

#[derive(Clone, Debug)]
struct Pending {
    command: String,
    want: Want,
}

/// A GTP engine's conversation.
#[derive(Debug)]
pub struct GtpClient {
    link: LineLink,
    /// Commands it lists (`None` until `list_commands` is answered).
    commands: Option<Vec<String>>,
    hello_sent: bool,
    size: u8,
    /// The plies its board has, from the start (`None`: unknown).
    told: Option<Vec<Ply>>,
    /// The move time of the current game (for `time_settings`).
    move_ms: u64,
    pending: VecDeque<Pending>,
    /// An answer's first line was read, and not yet the blank line that
    /// ends it: lines until then are more of its text.
    open: bool,
    /// A line read ahead (the next answer's first line, met while reading
    /// `list_commands`' lines).
    held: Option<Line>,
}

impl GtpClient {
    pub fn new(link: LineLink) -> GtpClient {
        GtpClient {
            link,
            commands: None,
            hello_sent: false,
            size: 8,
            told: None,
            move_ms: 5000,
            pending: VecDeque::new(),
            open: false,
            held: None,
        }
    }

    /// Whether it listed `command` (false before `list_commands` is read).
    pub fn knows(&self, command: &str) -> bool {
        self.commands
            .as_ref()
            .is_some_and(|c| c.iter().any(|k| k == command))
    }

    fn send(&mut self, command: String, want: Want) -> Result<(), EngineError> {
        self.link.send(&command).map_err(|e| EngineError::Write {
            command: command.clone(),
            why: match e {
                LinkError::Write(why) => why,
                other => other.to_string(),
            },
        })?;
        self.pending.push_back(Pending { command, want });
        Ok(())
    }

    /// `boardsize` and `clear_board`: a fresh board of this game's size.
    fn fresh_board(&mut self, cleared: Want) -> Result<(), EngineError> {
        self.send(format!("boardsize {}", self.size), Want::Success)?;
        self.send("clear_board".into(), cleared)?;
        self.told = Some(Vec::new());
        Ok(())
    }

    fn time_settings(&mut self) -> Result<(), EngineError> {
        if self.knows("time_settings") {
            self.send(
                format!("time_settings 0 {} 1", seconds(self.move_ms)),
                Want::Lenient,
            )?;
        }
        Ok(())
    }

    pub fn begin_game(&mut self, start: &GameStart) -> Result<(), EngineError> {
        self.skip_leftovers();
        self.size = start.size;
        self.move_ms = start.move_ms;
        if !self.hello_sent {
            self.hello_sent = true;
            self.send("protocol_version".into(), Want::Any)?;
            self.send("name".into(), Want::Any)?;
            self.send("version".into(), Want::Any)?;
            self.send("list_commands".into(), Want::Commands)?;
        }
        self.fresh_board(Want::Ready)?;
        // Before `list_commands` is read, `time_settings` is sent when it is.
        if self.commands.is_some() {
            self.time_settings()?;
        }
        Ok(())
    }

    pub fn ask_move(
        &mut self,
        history: &[Ply],
        color: Color,
        allowed_ms: u64,
    ) -> Result<(), EngineError> {
        self.skip_leftovers();
        let new: Vec<Ply> = match news(self.told.as_deref(), history) {
            Some(n) => n.to_vec(),
            None => {
                self.fresh_board(Want::Success)?;
                history.to_vec()
            }
        };
        for ply in new {
            // A pass is forced in Othello: an engine that passes by itself
            // (gtp-rhino answers `? syntax error` to `play <color> pass`)
            // is not at fault for refusing to be told.
            let want = match ply.mv {
                Move::Pass => Want::Lenient,
                Move::Play(_) => Want::Success,
            };
            self.send(
                format!("play {} {}", ply.color, vertex(ply.mv, "pass")),
                want,
            )?;
            if let Some(t) = &mut self.told {
                t.push(ply);
            }
        }
        if self.knows("time_left") {
            let secs = seconds(allowed_ms);
            self.send(format!("time_left {color} {secs} 1"), Want::Lenient)?;
        }
        self.send(format!("genmove {color}"), Want::Move(color))
    }

    pub fn forget_board(&mut self) {
        self.told = None;
    }

    /// Reads answers until the last command sent is answered.
    pub fn answer(&mut self, deadline: Instant) -> Result<Answer, EngineError> {
        let mut last = None;
        while let Some(p) = self.pending.front().cloned() {
            let reply = self.read_reply(&p, deadline).inspect_err(|_| {
                self.pending.clear();
                self.told = None;
            })?;
            self.pending.pop_front();
            if let Some(a) = self.judge(&p, reply)? {
                last = Some(a);
            }
        }
        last.ok_or_else(|| EngineError::Garbage {
            command: "(nothing)".into(),
            line: String::new(),
            why: "nothing was asked".into(),
        })
    }

    /// Reads the answers owed for commands sent and never awaited (a game
    /// that ended before its answers were read), keeping only what the
    /// conversation needs (the listed commands); false if they did not
    /// all come by `deadline`.
    pub fn settle(&mut self, deadline: Instant) -> bool {
        while let Some(p) = self.pending.front().cloned() {
            let Ok(reply) = self.read_reply(&p, deadline) else {
                self.pending.clear();
                self.told = None;
                return false;
            };
            self.pending.pop_front();
            tracing::debug!(
                "engine's owed answer to `{}` read: {}",
                p.command,
                reply.head
            );
            if p.want == Want::Commands && self.judge(&p, reply).is_err() {
                return false;
            }
        }
        self.told = None;
        true
    }

    /// What an answer means for the conversation; `Some` for the answers
    /// the referee sees.
    fn judge(&mut self, p: &Pending, reply: Reply) -> Result<Option<Answer>, EngineError> {
        if !reply.ok {
            if p.want == Want::Commands {
                // Required by GTP 2, but an engine without it still plays:
                // it is sent only what every engine knows.
                tracing::debug!("engine refused `list_commands`: {}", reply.text);
                self.commands = Some(Vec::new());
                return Ok(None);
            }
            if p.want == Want::Lenient || p.want == Want::Any {
                tracing::debug!("engine refused `{}`: {}", p.command, reply.text);
                return Ok(None);
            }
            self.pending.clear();
            self.told = None;
            return Err(EngineError::Refused {
                command: p.command.clone(),
                answer: format!("? {}", reply.text).trim_end().to_string(),
            });
        }
        match &p.want {
            Want::Success | Want::Any | Want::Lenient => Ok(None),
            Want::Ready => Ok(Some(Answer::Ready)),
            Want::Commands => {
                self.commands = Some(
                    reply
                        .text
                        .lines()
                        .map(|l| l.trim().to_string())
                        .filter(|l| !l.is_empty())
                        .collect(),
                );
                // The game's time_settings, now that it is known to be listed.
                if self.pending.iter().any(|q| q.want == Want::Ready) {
                    self.time_settings()?;
                }
                Ok(None)
            }
            Want::Move(color) => {
                if !reply.clean {
                    self.told = None;
                    return Err(EngineError::Garbage {
                        command: p.command.clone(),
                        line: reply.head,
                        why: NOT_TEXT.into(),
                    });
                }
                let text = reply.text.trim().to_string();
                if text.eq_ignore_ascii_case("resign") {
                    self.told = None;
                    return Err(EngineError::Resigned {
                        command: p.command.clone(),
                        answer: format!("= {text}"),
                    });
                }
                // genmove plays the move on the engine's own board.
                match (parse_move(&text, self.size), &mut self.told) {
                    (Ok(mv), Some(t)) => t.push(Ply { color: *color, mv }),
                    _ => self.told = None,
                }
                Ok(Some(Answer::Move(text)))
            }
        }
    }

    /// One answer: a line starting `=` or `?` (after blank lines, and after
    /// more lines of the last answer, which are logged, not read), an
    /// optional id, the text; for `list_commands` its lines up to the blank
    /// line that ends it (or to the next answer's first line, if the engine
    /// forgot the blank line). Other answers are taken at their first line
    /// and not waited for to the end: the rest is skipped with the next.
    fn read_reply(&mut self, p: &Pending, deadline: Instant) -> Result<Reply, EngineError> {
        let command = &p.command;
        let (head, ok, text) = loop {
            let line = self.next_line(command, deadline)?;
            if is_blank(&line) {
                self.open = false;
                continue;
            }
            match parse_head(&line.text) {
                Some((ok, text)) => break (line, ok, text),
                None if self.open => {
                    tracing::debug!("engine answer goes on: {:?}", line.text);
                }
                None => {
                    return Err(EngineError::Garbage {
                        command: command.clone(),
                        why: if line.clean {
                            "not a GTP answer (`= …` or `? …`)".into()
                        } else {
                            NOT_TEXT.into()
                        },
                        line: line.text,
                    })
                }
            }
        };
        self.open = true;
        let mut reply = Reply {
            ok,
            text,
            clean: head.clean,
            head: head.text,
        };
        if p.want == Want::Commands {
            loop {
                let line = self.next_line(command, deadline)?;
                if is_blank(&line) {
                    self.open = false;
                    break;
                }
                if parse_head(&line.text).is_some() {
                    self.held = Some(line);
                    self.open = false;
                    break;
                }
                reply.text.push('\n');
                reply.text.push_str(&line.text);
            }
        }
        Ok(reply)
    }

    /// The line read ahead, else the next one from the engine.
    fn next_line(&mut self, command: &str, deadline: Instant) -> Result<Line, EngineError> {
        match self.held.take() {
            Some(line) => Ok(line),
            None => self.recv(command, deadline),
        }
    }

    fn recv(&mut self, command: &str, deadline: Instant) -> Result<Line, EngineError> {
        self.link.recv(deadline).map_err(|e| match e {
            LinkError::Timeout => EngineError::Timeout {
                command: command.to_string(),
            },
            _ => EngineError::Closed {
                command: command.to_string(),
            },
        })
    }

    /// Lines nobody asked for, left from before (a blank line after the
    /// last answer, the rest of an answer of several lines, an answer sent
    /// unasked): dropped, and logged if they say something.
    fn skip_leftovers(&mut self) {
        if !self.pending.is_empty() {
            // Answers still owed, not leftovers: read in order (`settle`).
            return;
        }
        let held = self.held.take();
        for line in held.into_iter().chain(self.link.drain()) {
            if is_blank(&line) {
                self.open = false;
            } else {
                tracing::debug!("engine line outside any answer ignored: {:?}", line.text);
            }
        }
    }

    pub fn quit(&mut self) {
        let _ = self.link.send("quit");
        self.link.close_input();
    }
}

/// A read answer.
#[derive(Debug)]
struct Reply {
    ok: bool,
    text: String,
    /// Its first line as written.
    head: String,
    /// False if its first line held bytes that are not text.
    clean: bool,
}

const NOT_TEXT: &str = "not text (control characters or invalid UTF-8)";

/// An empty line, or one of white space only: the end of an answer.
fn is_blank(line: &Line) -> bool {
    line.text.trim().is_empty()
}

/// `= text`, `=12 text`, `? message`: (success, text); `None` for other
/// lines.
fn parse_head(line: &str) -> Option<(bool, String)> {
    let t = line.replace('\t', " ");
    let ok = match t.chars().next()? {
        '=' => true,
        '?' => false,
        _ => return None,
    };
    let rest = t[1..].trim_start_matches(|c: char| c.is_ascii_digit());
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some((ok, rest.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn answers_are_read_with_or_without_an_id() {
        assert_eq!(parse_head("= D3"), Some((true, "D3".into())));
        assert_eq!(parse_head("=12 pass"), Some((true, "pass".into())));
        assert_eq!(parse_head("="), Some((true, "".into())));
        assert_eq!(parse_head("=\td3"), Some((true, "d3".into())));
        assert_eq!(
            parse_head("? illegal move"),
            Some((false, "illegal move".into()))
        );
        assert_eq!(parse_head("=D3"), None, "the text follows a space");
        assert_eq!(parse_head("D3"), None);
    }

    /// A client whose engine's output is written by the test.
    fn client() -> (GtpClient, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let link = LineLink::new(std::io::sink(), ours, Arc::new(|_, _| {})).unwrap();
        (GtpClient::new(link), theirs)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    #[test]
    fn liberal_answers_are_framed_by_their_blank_lines() {
        let (mut c, mut engine) = client();
        let start = GameStart {
            size: 8,
            color: Color::White,
            names: ["a".into(), "b".into()],
            move_ms: 5000,
        };
        c.begin_game(&start).unwrap();
        // protocol_version (with an id), name (not UTF-8), version (two
        // lines), list_commands (no blank line at its end), boardsize,
        // clear_board; CR LF throughout.
        engine
            .write_all(
                b"=0 2\r\n\r\n= Z\xe9bra\r\n\r\n= 1.0\r\nbuilt today\r\n\r\n\
                  = protocol_version\r\nboardsize\r\nplay\r\ngenmove\r\n=\r\n\r\n=\r\n\r\n",
            )
            .unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Ready));
        assert!(c.knows("genmove"));
        assert!(!c.knows("time_left"), "not listed: not sent");
        let f5 = Ply {
            color: Color::Black,
            mv: parse_move("f5", 8).unwrap(),
        };
        c.ask_move(&[f5], Color::White, 5000).unwrap();
        // play's answer, then genmove's in lower case, on two lines.
        engine.write_all(b"=\n\n=7 d6\nsure\n\n").unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Move("d6".into())));
        // The next move's answers come after that one's last lines.
        let d6 = Ply {
            color: Color::White,
            mv: parse_move("d6", 8).unwrap(),
        };
        let c3 = Ply {
            color: Color::Black,
            mv: parse_move("c3", 8).unwrap(),
        };
        c.ask_move(&[f5, d6, c3], Color::White, 5000).unwrap();
        engine.write_all(b"=\n\n= PASS\n\n").unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Move("PASS".into())));
    }

    #[test]
    fn answers_owed_from_a_game_that_ended_early_are_settled_not_taken_for_the_next() {
        let (mut c, mut engine) = client();
        let start = GameStart {
            size: 8,
            color: Color::White,
            names: ["a".into(), "b".into()],
            move_ms: 5000,
        };
        // A game whose set-up answers nobody read (its opponent left).
        c.begin_game(&start).unwrap();
        engine
            .write_all(b"= 2\n\n= rhino\n\n= 1\n\n= boardsize\ngenmove\n\n=\n\n=\n\n")
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(c.settle(soon()));
        assert!(c.knows("genmove"), "what it listed is kept");
        // The next game's answers are its own.
        c.begin_game(&start).unwrap();
        engine.write_all(b"=\n\n=\n\n").unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Ready));
        // Owed answers that never come: not settled (it is started again).
        c.begin_game(&start).unwrap();
        assert!(!c.settle(Instant::now() + Duration::from_millis(50)));
    }

    #[test]
    fn an_engine_without_list_commands_is_sent_no_time_commands() {
        let (mut c, mut engine) = client();
        let start = GameStart {
            size: 8,
            color: Color::Black,
            names: ["a".into(), "b".into()],
            move_ms: 5000,
        };
        c.begin_game(&start).unwrap();
        engine
            .write_all(b"= 2\n\n= x\n\n= 1\n\n? unknown command\n\n=\n\n=\n\n")
            .unwrap();
        assert_eq!(c.answer(soon()), Ok(Answer::Ready));
        assert!(!c.knows("time_settings"));
    }

    #[test]
    fn a_move_that_is_not_text_is_garbage_and_other_lines_are_not_answers() {
        let (mut c, mut engine) = client();
        c.told = Some(Vec::new());
        c.ask_move(&[], Color::Black, 5000).unwrap();
        engine.write_all(b"= d\x003\n\n").unwrap();
        assert!(matches!(
            c.answer(soon()),
            Err(EngineError::Garbage { ref why, .. }) if why == NOT_TEXT
        ));
        c.told = Some(Vec::new());
        c.ask_move(&[], Color::Black, 5000).unwrap();
        engine.write_all(b"D3\n\n").unwrap();
        assert!(matches!(
            c.answer(soon()),
            Err(EngineError::Garbage { ref line, .. }) if line == "D3"
        ));
    }
}
