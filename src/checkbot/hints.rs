//! check-bot's hints that look past the one answer in front of them: the
//! likely mistake behind an illegal move (rows and columns swapped, rows
//! counted from 0, rows upside down, the other colour), a bot that printed
//! its answer on stdout, and the printing of a step with a hint that came
//! before folded to a back-reference (counted, and listed once at the end).
//!
//! Owns these wordings and the folding; judges nothing itself (the caller
//! says what was wrong) and talks to no bot.

use crate::game::{square_name, Color, IllegalMove, Position, Square};

use super::report::{Problem, Step, Verdict};

/// The likely mistake behind `sq`, illegal in `pos` for `why`, as a hint
/// start ending in `; ` (empty if nothing fits). A mistake in reading the
/// board (rows and columns swapped, rows from 0, rows upside down) is named
/// before the other colour, which is named only when none of those fits:
/// a swapped board often makes the move legal for the other side too, and
/// then the colour was not the mistake.
pub(super) fn likely_mistake(pos: &Position, sq: Square, why: IllegalMove) -> String {
    let size = pos.size();
    let color = pos.to_move();
    let name = square_name(sq);
    let legal_for = |p: &Position, s: Square| p.legal_moves() & s.bit() != 0;
    let mut guesses: Vec<String> = vec![];
    let swapped = Square::new(sq.row(), sq.col());
    if legal_for(pos, swapped) {
        guesses.push(format!(
            "{name} with rows and columns swapped, {}, would be legal: the board string is row 1 \
             first (a1 b1 c1 …), letters are columns, digits are rows (index i is column i % {size}, \
             row i / {size})",
            square_name(swapped)
        ));
    }
    if sq.row() + 1 < size && legal_for(pos, Square::new(sq.col(), sq.row() + 1)) {
        guesses.push(one_row_lower(Square::new(sq.col(), sq.row() + 1), size));
    }
    let flipped = Square::new(sq.col(), size - 1 - sq.row());
    if legal_for(pos, flipped) {
        guesses.push(format!(
            "{name} with the rows upside down, {}, would be legal: row 1 is the top row, the \
             first {size} characters of the board string",
            square_name(flipped)
        ));
    }
    if guesses.is_empty() {
        let other_side = Position::from_parts(
            pos.discs_of(Color::Black),
            pos.discs_of(Color::White),
            color.opponent(),
            size,
        );
        if other_side.is_some_and(|p| legal_for(&p, sq)) {
            guesses.push(format!(
                "{name} would be legal for {}, but you play {color}: the colour is the second \
                 word of TURN (X is black, O is white)",
                color.opponent()
            ));
        }
    }
    if guesses.is_empty() && why == IllegalMove::NoFlips {
        "a move must turn over at least one disc: a straight line of the opponent's discs \
         between the new disc and one of yours; "
            .to_string()
    } else if guesses.is_empty() {
        String::new()
    } else {
        format!("{}; ", guesses.join("; or "))
    }
}

/// `meant`, one row lower, would be legal: the 0-based rows hint.
fn one_row_lower(meant: Square, size: u8) -> String {
    format!(
        "{}, one row lower, would be legal: rows are numbered from 1, not 0 (index i is row \
         i / {size} + 1)",
        square_name(meant)
    )
}

/// For an answer in row 0 (`c0`): the 0-based rows hint, naming the move
/// one row lower when that is legal. `None` if `answer` is not in row 0.
pub(super) fn row_zero(pos: &Position, answer: &str) -> Option<String> {
    let a = answer.trim().to_ascii_lowercase();
    let (col, row) = a.split_at_checked(1)?;
    let col = col.bytes().next()?.checked_sub(b'a')?;
    if row != "0" || col >= pos.size() {
        return None;
    }
    let meant = Square::new(col, 0);
    Some(if pos.legal_moves() & meant.bit() != 0 {
        one_row_lower(meant, pos.size())
    } else {
        "rows are numbered from 1 (a1 is the top-left corner), not 0".to_string()
    })
}

/// The hint for a message left unanswered while the bot printed on stdout:
/// the referee reads only out.txt. `None` if it printed nothing.
pub(super) fn printed_on_stdout(
    id: &str,
    seq: u64,
    stdout: &[String],
) -> Option<(String, Vec<String>)> {
    let last = stdout.iter().rev().find(|l| looks_like_an_answer(l))?;
    let hint = format!(
        "nothing came in out.txt, but the bot printed {last:?} on stdout: the referee reads only \
         out.txt (stdout goes to the game log); write the four lines \"{id}\\nreferee\\n{seq}\\n\
         <answer>\\n\" to out.txt in the mailbox (the bot's working directory)"
    );
    let mut extra = vec!["last lines of its stdout:".to_string()];
    extra.extend(stdout.iter().map(|l| format!("| {l}")));
    Some((hint, extra))
}

/// Whether a stdout line looks like an answer meant for out.txt: a square,
/// `pass`, `READY`, `OK`, `BYE`, or a line of the message (`referee`).
fn looks_like_an_answer(line: &str) -> bool {
    let word = line.trim().to_ascii_lowercase();
    let square = word.len() == 2
        && matches!(word.as_bytes()[0], b'a'..=b'h')
        && matches!(word.as_bytes()[1], b'0'..=b'8');
    square || ["pass", "ready", "ok", "bye", "referee"].contains(&word.as_str())
}

/// The hints already printed in a check, to fold the ones that come again.
#[derive(Debug, Default)]
pub struct RepeatedHints {
    /// Each hint printed, how often it came, and where it was first.
    seen: Vec<(String, u32, String)>,
}

impl RepeatedHints {
    /// The hints that came more than once: `×N  hint` lines.
    pub fn summary(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|(_, n, _)| *n > 1)
            .map(|(hint, n, _)| format!("×{n}  {hint}"))
            .collect()
    }

    /// Counts `hint`; returns where it was first shown if it was.
    fn again(&mut self, hint: &str, here: &str) -> Option<(String, u32)> {
        match self.seen.iter_mut().find(|(h, _, _)| h == hint) {
            Some((_, n, first)) => {
                *n += 1;
                Some((first.clone(), *n))
            }
            None => {
                self.seen.push((hint.to_string(), 1, here.to_string()));
                None
            }
        }
    }
}

/// `seq 7` from `seq 7: TURN …`, else the step's name.
fn place(p: &Problem, step: &str) -> String {
    match p.sent.split_once(':') {
        Some((seq, _)) if seq.starts_with("seq ") => seq.to_string(),
        _ => format!("`{step}`"),
    }
}

impl Step {
    /// The step as report lines (no trailing newline).
    pub fn render(&self) -> String {
        render(self, &mut RepeatedHints::default())
    }

    /// Like [`Step::render`], but a hint printed before (in `repeated`)
    /// is not repeated: the problem points at its first showing.
    pub fn render_folded(&self, repeated: &mut RepeatedHints) -> String {
        render(self, repeated)
    }
}

/// The step as report lines (no trailing newline). A problem whose hint was
/// printed before (counted in `repeated`) shows what was sent and what came,
/// and points at the first one instead of repeating its hint.
pub(super) fn render(step: &Step, repeated: &mut RepeatedHints) -> String {
    let mark = match step.verdict {
        Verdict::Pass => "✓",
        Verdict::Warn => "!",
        Verdict::Fail => "✗",
        Verdict::NotRun => "-",
    };
    let mut s = format!("{mark} {}", step.name);
    if !step.summary.is_empty() {
        s.push_str(": ");
        s.push_str(&step.summary);
    }
    match step.verdict {
        Verdict::Warn => s.push_str(" (warning only)"),
        Verdict::NotRun => s.push_str(" (not checked)"),
        Verdict::Pass | Verdict::Fail => {}
    }
    for p in &step.problems {
        let again = if p.hint.is_empty() {
            None
        } else {
            repeated.again(&p.hint, &place(p, &step.name))
        };
        let hint = match &again {
            Some((first, n)) => format!("the same as for {first} (×{n} so far; listed at the end)"),
            None => p.hint.clone(),
        };
        let expected = if again.is_some() { "" } else { &p.expected };
        for (label, text) in [
            ("sent", p.sent.as_str()),
            ("expected", expected),
            ("got", p.got.as_str()),
            ("hint", hint.as_str()),
        ] {
            if !text.is_empty() {
                s.push_str(&format!("\n    {label:<9} {text}"));
            }
        }
        for line in &p.extra {
            s.push_str(&format!("\n      {line}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkbot::scripted;
    use crate::game::parse_square;

    #[test]
    fn swapped_rows_and_columns_are_named_before_the_other_colour_on_every_size() {
        // Each scripted position, answered with a legal move's mirror
        // image (rows and columns swapped) wherever that is not legal.
        let mut tried = [0; 3];
        for (size, moves) in [(8, "f5d6c3"), (8, "f5f6e6"), (6, "e4c5b6"), (4, "b1a1")] {
            let (pos, _) = scripted(size, moves);
            for sq in (0..size * size).map(|i| Square::new(i % size, i / size)) {
                let t = Square::new(sq.row(), sq.col());
                if pos.legal_moves() & sq.bit() == 0 || pos.legal_moves() & t.bit() != 0 {
                    continue;
                }
                let why = pos.check(crate::game::Move::Play(t)).unwrap_err();
                let hint = likely_mistake(&pos, t, why);
                assert!(
                    hint.starts_with(&format!(
                        "{} with rows and columns swapped, {}, would be legal",
                        square_name(t),
                        square_name(sq)
                    )),
                    "{size}×{size} {moves}: {hint}"
                );
                assert!(!hint.contains("but you play"), "{hint}");
                tried[usize::from(size / 2 - 2)] += 1;
            }
        }
        assert!(tried.iter().all(|&n| n > 0), "sizes 4, 6, 8: {tried:?}");
    }

    #[test]
    fn the_other_colour_is_named_when_nothing_else_fits() {
        // After black f5, white to move (d6, f4 or f6); c4 is black's.
        let (pos, _) = scripted(8, "f5");
        let c4 = parse_square("c4").unwrap();
        let why = pos.check(crate::game::Move::Play(c4)).unwrap_err();
        let hint = likely_mistake(&pos, c4, why);
        assert!(
            hint.starts_with("c4 would be legal for black, but you play white"),
            "{hint}"
        );
    }

    #[test]
    fn row_zero_names_the_move_one_row_lower() {
        // d3 is legal from the start; e1 is not.
        let start = Position::start(8);
        let (pos, _) = scripted(8, "f5d6c3d3c4f4f6f3e6e7");
        let legal_row_one = (0..8)
            .map(|c| Square::new(c, 0))
            .find(|s| pos.legal_moves() & s.bit() != 0);
        if let Some(sq) = legal_row_one {
            let answer = format!("{}0", &square_name(sq)[..1]);
            let hint = row_zero(&pos, &answer).unwrap();
            assert!(
                hint.starts_with(&format!(
                    "{}, one row lower, would be legal",
                    square_name(sq)
                )),
                "{hint}"
            );
        }
        assert_eq!(
            row_zero(&start, "e0").as_deref(),
            Some("rows are numbered from 1 (a1 is the top-left corner), not 0")
        );
        assert_eq!(row_zero(&start, "e5"), None);
        assert_eq!(row_zero(&start, "z0"), None);
    }

    #[test]
    fn a_hint_that_comes_again_is_folded_and_counted() {
        let problem = |seq: u32| Problem {
            sent: format!("seq {seq}: TURN black …"),
            expected: "from `bot.1` to `referee`".into(),
            got: "from `referee` to `bot.1`".into(),
            hint: "lines 1 and 2 are swapped".into(),
            extra: vec![],
        };
        let step = |seq| Step {
            name: "a step".into(),
            verdict: Verdict::Fail,
            summary: String::new(),
            problems: vec![problem(seq)],
        };
        let mut repeated = RepeatedHints::default();
        let first = render(&step(1), &mut repeated);
        assert!(
            first.contains("hint      lines 1 and 2 are swapped"),
            "{first}"
        );
        let second = render(&step(2), &mut repeated);
        assert!(!second.contains("lines 1 and 2 are swapped"), "{second}");
        assert!(!second.contains("expected"), "{second}");
        assert!(
            second.contains("hint      the same as for seq 1 (×2 so far; listed at the end)"),
            "{second}"
        );
        render(&step(3), &mut repeated);
        assert_eq!(repeated.summary(), ["×3  lines 1 and 2 are swapped"]);
    }
}
