//! check-bot's script: which messages it sends, in which positions (the
//! scripted transcripts), in which order, and the summary checks over
//! every answer at the end.
//!
//! Owns the steps and their names; must not talk to the bot except
//! through `drive` (`ask`, `expect_word`, `expect_move`) nor word an
//! answer's problem itself (the judge does), beyond the library-fallback
//! and summary findings that only the whole run shows.

use std::path::Path;
use std::time::Duration;

use rand::SeedableRng;

use crate::builtin::Strategy;
use crate::engine::Ply;
use crate::error::HarnessError;
use crate::game::{replay_transcript, Color, Move, Position};
use crate::mailbox::{IN_FILE, OUT_FILE};
use crate::player::LIBRARY_FALLBACK;
use crate::protocol::{Reply, Request};
use crate::record::EndReason;

use super::drive::Run;
use super::judge::{judge_move, legal_names, turn_position, BadMove};
use super::report::{brief_list, Problem, StepBuilder, LATE_EXPECTED};

/// The opponent named in every NEW.
pub(super) const OPPONENT: &str = "random";

/// 8×8, black to move with exactly one legal move (c8); white's last was h6.
pub const ONE_MOVE: &str = "e6f6d3e7g7g6e8d8g5h6";
/// 8×8, white to move and without a move: white passes, then black moves.
pub const WHITE_PASSES: &str = "c4c3d3e3f3c5c2g2b3a3a4c1a2";
/// 8×8, black to move without a legal move (the game goes on); white's last was f8.
pub const BLACK_MUST_PASS: &str = "e6f6g6g7c4h6h8f8";
/// 6×6, white to move; black's last was b6.
pub const SIX: &str = "e4c5b6";
/// 4×4, black to move; white's last was a1.
pub const FOUR: &str = "b1a1";

/// One step of the script.
pub(super) type StepFn<'a> = fn(&mut Run<'a>) -> Result<(), HarnessError>;

/// The position a transcript leads to from the start of `size`, and its
/// moves (forced passes included).
pub fn scripted(size: u8, transcript: &str) -> (Position, Vec<Move>) {
    let (moves, pos) =
        replay_transcript(Position::start(size), transcript).expect("scripted transcripts replay");
    (pos, moves)
}

/// The position `moves` (forced passes included) lead to from the start
/// of `size`, and the game's plies: each move with the colour that played
/// it, as an engine is told them.
pub fn game_of(size: u8, moves: &[Move]) -> (Position, Vec<Ply>) {
    let mut pos = Position::start(size);
    let mut plies = Vec::with_capacity(moves.len());
    for &mv in moves {
        plies.push(Ply {
            color: pos.to_move(),
            mv,
        });
        pos = pos.play(mv).expect("scripted moves are legal").0;
    }
    (pos, plies)
}

impl Run<'_> {
    pub(super) fn turn(&self, pos: &Position, last: Option<Move>) -> Request {
        Request::turn(pos, last, self.opts.move_ms)
    }

    pub(super) fn end(pos: &Position) -> Request {
        let wof = pos.discs_wof();
        Request::End {
            winner: wof.winner(),
            black: wof.black,
            white: wof.white,
            reason: EndReason::Normal.to_string(),
        }
    }

    /// END → BYE inside a step; marks that the bot may exit now.
    pub(super) fn end_game(
        &mut self,
        b: &mut StepBuilder,
        pos: &Position,
    ) -> Result<bool, HarnessError> {
        self.game_new = None;
        let ok = self.expect_word(b, &Self::end(pos), Reply::Bye)?;
        self.after_bye = ok;
        Ok(ok)
    }

    /// The NEW of the script's game `round`, named as a tournament names
    /// its games (`r01.alice.random`): the bot cannot tell the two apart.
    pub(super) fn new_game(&self, round: u32, color: Color, size: u8) -> Request {
        let me = self.inst.spec().name.as_str();
        let (black, white) = match color {
            Color::Black => (me, OPPONENT),
            Color::White => (OPPONENT, me),
        };
        Request::New {
            game: format!("r{round:02}.{black}.{white}"),
            color,
            opponent: OPPONENT.to_string(),
            size,
            move_ms: self.opts.move_ms,
        }
    }

    pub(super) fn script(&mut self) -> Result<(), HarnessError> {
        let steps: [StepFn<'_>; 13] = [
            Self::step_new,
            Self::step_start,
            Self::step_illegal,
            Self::step_unknown,
            Self::step_one_move,
            Self::step_after_pass,
            Self::step_ask_pass,
            Self::step_end,
            Self::step_six,
            Self::step_four,
            Self::step_full_game,
            Self::step_own_choice,
            Self::step_summaries,
        ];
        for step in steps {
            if self.stopped() {
                break;
            }
            step(self)?;
        }
        Ok(())
    }

    pub(super) fn step_new(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("NEW → READY within the start-up time (8×8, black)");
        let new = self.new_game(1, Color::Black, 8);
        self.expect_word(&mut b, &new, Reply::Ready)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_start(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("TURN from the 8×8 start → a legal move");
        self.expect_move(&mut b, 8, &[])?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_illegal(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("ILLEGAL → OK, then the new TURN → a legal move");
        let illegal = Request::Illegal {
            reason: EndReason::NoFlips.to_string(),
        };
        if self.expect_word(&mut b, &illegal, Reply::Ok)? {
            self.expect_move(&mut b, 8, &[])?;
        }
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_unknown(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("unknown message kind (PING) → OK");
        b.warn_only = true;
        let ping = Request::Other("PING".to_string());
        self.expect_word(&mut b, &ping, Reply::Ok)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_one_move(&mut self) -> Result<(), HarnessError> {
        let (pos, moves) = scripted(8, ONE_MOVE);
        let only = legal_names(&pos).join("");
        let mut b = StepBuilder::new(format!(
            "TURN with exactly one legal move → that move ({only})"
        ));
        self.expect_move(&mut b, 8, &moves)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_after_pass(&mut self) -> Result<(), HarnessError> {
        let (_, mut moves) = scripted(8, WHITE_PASSES);
        moves.push(Move::Pass);
        let mut b = StepBuilder::new("TURN whose <last> is pass → a legal move");
        self.expect_move(&mut b, 8, &moves)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_ask_pass(&mut self) -> Result<(), HarnessError> {
        let (_, moves) = scripted(8, BLACK_MUST_PASS);
        let mut b = StepBuilder::new("TURN without a legal move (ask-pass) → pass");
        self.expect_move(&mut b, 8, &moves)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_end(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("END → BYE");
        let (pos, _) = scripted(8, BLACK_MUST_PASS);
        self.end_game(&mut b, &pos)?;
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_six(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new(
            "next game (6×6, white): NEW with the next seq after END → READY, TURN → a legal move, \
             END → BYE",
        );
        let before = self.inst.starts();
        let new = self.new_game(2, Color::White, 6);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            if self.inst.starts() > before {
                b.note("the bot had exited after BYE (allowed) and was started again");
            }
            let (pos, moves) = scripted(6, SIX);
            if self.expect_move(&mut b, 6, &moves)?.is_some() {
                self.end_game(&mut b, &pos)?;
            }
        }
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_four(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("4×4 as black: NEW → READY, TURN → a legal move, END → BYE");
        let new = self.new_game(3, Color::Black, 4);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            let (pos, moves) = scripted(4, FOUR);
            if self.expect_move(&mut b, 4, &moves)?.is_some() {
                self.end_game(&mut b, &pos)?;
            }
        }
        self.finish(b);
        Ok(())
    }

    pub(super) fn step_full_game(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new(format!(
            "a complete 4×4 game as white against the built-in {OPPONENT}"
        ));
        let new = self.new_game(4, Color::White, 4);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            b.summary.clear();
            let mut rng = rand::rngs::StdRng::seed_from_u64(self.opts.seed);
            let mut pos = Position::start(4);
            let mut moves = vec![];
            let mut ok = true;
            let (mut late_seen, mut late_more) = (false, 0);
            while !pos.is_over() {
                if pos.to_move() == Color::Black || pos.must_pass() {
                    let mv = if pos.to_move() == Color::Black {
                        Strategy::Random.choose(&pos, &mut rng)
                    } else {
                        Move::Pass // the referee passes for a bot without a move
                    };
                    pos = pos.play(mv).expect("the built-in plays legal moves").0;
                    moves.push(mv);
                    continue;
                }
                let mut turn = StepBuilder::new("");
                let answer = self.expect_move(&mut turn, 4, &moves)?;
                for p in turn.problems {
                    // Show the first late answer; count the others.
                    if p.expected.starts_with(LATE_EXPECTED) && late_seen {
                        late_more += 1;
                    } else {
                        late_seen |= p.expected.starts_with(LATE_EXPECTED);
                        b.problems.push(p);
                    }
                }
                match answer {
                    Some(mv) => {
                        pos = pos.play(mv).expect("judged legal").0;
                        moves.push(mv);
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            let played: String = crate::game::transcript(&moves);
            let mut summary = if ok {
                let end = Self::end(&pos);
                let bye = self.end_game(&mut b, &pos)?;
                format!("{played}, then {end}{}", if bye { " → BYE" } else { "" })
            } else {
                format!("stopped after {played}")
            };
            if late_more > 0 {
                summary.push_str(&format!(" ({late_more} more answers were late too)"));
            }
            b.summary = vec![summary];
        }
        self.finish(b);
        Ok(())
    }

    /// Fails for every move the bot's library played instead of the bot's
    /// own choice (its `mailbox fallback:` lines on stderr).
    pub(super) fn step_own_choice(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("every move chosen by the bot itself (no library fallback)");
        // stderr is read on its own thread: give it a moment to catch up.
        std::thread::sleep(Duration::from_millis(200));
        let lines = self.inst.library_fallback_lines();
        if lines.is_empty() && self.stats.turn_answers == 0 {
            b.not_run("no TURN was answered");
        } else if lines.is_empty() {
            b.note(format!("no `{LIBRARY_FALLBACK}` line on stderr"));
        } else {
            let n = lines.len();
            b.note(format!(
                "{n} move{} played by the library instead",
                if n == 1 { "" } else { "s" }
            ));
            let mut seen: Vec<String> = vec![];
            for line in &lines {
                let (seq, what) = fallback_parts(line);
                // One problem per different mistake, the first three.
                let shape: String = what
                    .split(['(', ';', ':'])
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .take(2)
                    .collect();
                if seen.contains(&shape) || seen.len() == 3 {
                    continue;
                }
                seen.push(shape);
                let turn = seq.and_then(|q| {
                    self.turns_sent
                        .iter()
                        .rev()
                        .find(|(s, _)| *s == q)
                        .map(|(_, t)| t.encode())
                });
                b.fail(self.fallback_problem(line, &what, turn.as_deref(), n));
            }
        }
        self.finish(b);
        Ok(())
    }

    pub(super) fn fallback_problem(
        &self,
        line: &str,
        what: &str,
        turn: Option<&str>,
        n: usize,
    ) -> Problem {
        let sent = turn.map(|t| t.to_string()).unwrap_or_default();
        let chosen = what.split(" returned ").nth(1).map(|rest| {
            rest.split([',', ' '])
                .next()
                .unwrap_or("")
                .trim_matches(['"', '\''])
                .to_string()
        });
        let hint = match (chosen, turn.and_then(turn_position)) {
            (Some(answer), Some(pos)) => match judge_move(&pos, &answer) {
                Err(BadMove { hint, .. }) => format!("your code chose {answer}: {hint}"),
                Ok(_) => format!("your code chose {answer}, which the library did not accept"),
            },
            (Some(answer), None) => {
                format!("your code chose {answer}, which is not a legal move")
            }
            (None, _) => {
                "your move-choosing code raised an error (its message is below)".to_string()
            }
        };
        Problem {
            sent,
            expected: "a legal move chosen by the bot".into(),
            got: format!(
                "the library played the first legal move instead ({n} time{} in all)",
                if n == 1 { "" } else { "s" }
            ),
            hint: format!(
                "{hint}. The library keeps the game going, but your strategy is not what plays; \
                 set {STRICT_ENV}=1 (or the library's strict option) to stop at the first one"
            ),
            extra: vec![format!("| {line}")],
        }
    }

    pub(super) fn step_summaries(&mut self) -> Result<(), HarnessError> {
        let id = self.inst.id().to_string();
        let answers = self.stats.answers;

        let mut b = StepBuilder::new("seq: every answer repeats the seq of its message");
        if self.stats.seq.is_empty() && answers == 0 {
            b.not_run("no usable answer came");
        } else if self.stats.seq.is_empty() {
            b.note(format!("{answers} answers"));
        } else {
            b.fail(Problem {
                got: brief_list(&self.stats.seq),
                hint: "line 3 of out.txt is the seq of the message you answer, copied from line 3 \
                       of in.txt; the next game's NEW goes on counting"
                    .into(),
                ..Problem::default()
            });
        }
        self.finish(b);

        let mut b = StepBuilder::new(format!(
            "framing: from = {id}, to = referee, four newline-terminated lines"
        ));
        if self.stats.framing.is_empty() && answers == 0 {
            b.not_run("no answer came");
        } else if self.stats.framing.is_empty() {
            b.note(if self.stats.crlf {
                "CRLF line ends (accepted)".to_string()
            } else {
                "LF line ends".to_string()
            });
        } else {
            b.fail(Problem {
                got: brief_list(&self.stats.framing),
                hint: format!(
                    "write \"{id}\\nreferee\\n<seq>\\n<answer>\\n\" in one write; every line, the \
                     last one too, ends in a newline"
                ),
                ..Problem::default()
            });
        }
        self.finish(b);

        let mut b = StepBuilder::new(format!(
            "timing: every answer within move-ms ({} ms), READY within startup-ms ({} ms)",
            self.opts.move_ms, self.opts.startup_ms
        ));
        match (&self.stats.slowest_ready, &self.stats.slowest_other) {
            (None, None) if self.stats.late.is_empty() => b.not_run("no answer came"),
            (ready, other) => {
                let slow = |s: &Option<(u64, String)>, none: &str| {
                    s.as_ref()
                        .map(|(ms, what)| format!("{ms} ms ({what})"))
                        .unwrap_or_else(|| none.into())
                };
                b.note(format!(
                    "slowest READY {}, slowest other answer {}",
                    slow(ready, "(none came)"),
                    slow(other, "(none came)")
                ))
            }
        }
        if !self.stats.late.is_empty() {
            b.fail(Problem {
                got: brief_list(&self.stats.late),
                hint: "answer within the time of each message (TURN says it as its last word); \
                       poll in.txt every few milliseconds"
                    .into(),
                ..Problem::default()
            });
        }
        self.finish(b);

        let mut b = StepBuilder::new("in.txt: the bot only reads it");
        if self.stats.in_written.is_empty() && answers == 0 {
            b.not_run("no answer came");
        } else if self.stats.in_written.is_empty() {
            b.note("in.txt held each message until the referee replaced it");
        } else {
            b.fail(Problem {
                got: format!(
                    "in.txt was changed, replaced or removed after answering {}",
                    brief_list(&self.stats.in_written)
                ),
                hint: "in.txt is the referee's: open it for reading only; write your answer to \
                       out.txt"
                    .into(),
                ..Problem::default()
            });
        }
        self.finish(b);

        let mut b = StepBuilder::new("mailbox: the bot wrote only out.txt");
        b.warn_only = true;
        let others = foreign_files(self.inst.mailbox().dir());
        if others.is_empty() {
            b.note("nothing else created");
        } else {
            b.fail(Problem {
                got: format!("also found: {}", others.join(", ")),
                hint: "bots only read in.txt and overwrite out.txt; write logs to stderr instead \
                       (the referee keeps them in the game's log)"
                    .into(),
                ..Problem::default()
            });
        }
        self.finish(b);
        Ok(())
    }
}

/// The environment variable that makes the shipped libraries end the bot
/// instead of falling back (see bots/README.md).
pub const STRICT_ENV: &str = "MAILBOX_STRICT";

/// A library fallback line's seq and what it says after `seq N: `.
pub(super) fn fallback_parts(line: &str) -> (Option<u64>, String) {
    let rest = line.strip_prefix(LIBRARY_FALLBACK).unwrap_or(line).trim();
    match rest
        .strip_prefix("seq ")
        .and_then(|r| r.split_once(':'))
        .and_then(|(n, what)| Some((n.trim().parse().ok()?, what.trim())))
    {
        Some((seq, what)) => (Some(seq), what.to_string()),
        None => (None, rest.to_string()),
    }
}

/// Files in a mailbox other than the two move files and the referee's temp files.
pub(super) fn foreign_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut out: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != IN_FILE && n != OUT_FILE && !n.starts_with(".in.txt"))
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::move_name;

    fn names(pos: &Position) -> Vec<String> {
        legal_names(pos)
    }

    #[test]
    fn scripted_positions_are_what_their_steps_claim() {
        let (one, moves) = scripted(8, ONE_MOVE);
        assert_eq!(one.to_move(), Color::Black);
        assert_eq!(names(&one), ["c8"]);
        assert_eq!(moves.last().copied().map(move_name).as_deref(), Some("h6"));
        assert_eq!(game_of(8, &moves).0, one, "its plies lead to it");

        let (before, _) = scripted(8, WHITE_PASSES);
        assert_eq!(before.to_move(), Color::White);
        assert!(before.must_pass());
        let after = before.pass_unchecked();
        assert!(after.legal_moves() != 0);

        let (stuck, moves) = scripted(8, BLACK_MUST_PASS);
        assert_eq!(stuck.to_move(), Color::Black);
        assert!(stuck.must_pass(), "black has no move, the game goes on");
        assert_eq!(moves.last().copied().map(move_name).as_deref(), Some("f8"));

        let (six, moves) = scripted(6, SIX);
        assert_eq!(
            (
                six.size(),
                six.to_move(),
                moves.last().copied().map(move_name).as_deref()
            ),
            (6, Color::White, Some("b6"))
        );
        assert!(names(&six).len() > 1);

        let (four, moves) = scripted(4, FOUR);
        assert_eq!(
            (
                four.size(),
                four.to_move(),
                moves.last().copied().map(move_name).as_deref()
            ),
            (4, Color::Black, Some("a1"))
        );
        assert!(names(&four).len() > 1);
    }
}
