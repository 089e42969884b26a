//! check-bot: plays scripted positions against one bot and judges every
//! answer against mailbox protocol v1, with a concrete hint for each
//! violation.
//!
//! Owns: the script (which messages, which positions, in which order), the
//! judging of answers and the wording of hints. Drives a real
//! [`Instance`] so the bot runs exactly as under the referee (own process
//! group, mailbox as working directory). Returns a [`Report`] and hands each
//! finished step to a callback; printing, exit codes and the temporary board
//! belong to the command. Records no game and decides no result.
//!
//! Policy: an unknown message kind (`PING`) that is not answered `OK` is
//! only a warning, since bots written before that rule still play every
//! real game. A bot that leaves a message unanswered or writes an unreadable
//! out.txt is restarted (fresh mailbox, seq from 1, as the referee does after
//! a forfeit), gets the NEW of the game in progress again, and the script
//! goes on; after [`MAX_BROKEN`] such exchanges, or when the bot's process
//! ends on its own (other than after BYE, which is allowed), checking stops.

use std::path::Path;
use std::time::{Duration, Instant};

use rand::SeedableRng;

use crate::builtin::Strategy;
use crate::error::HarnessError;
use crate::game::{
    move_name, parse_move, replay_transcript, square_name, Color, IllegalMove, Move, Position,
};
use crate::mailbox::{
    read_limited, AnswerError, Decoded, FrameError, Message, Pending, ReadOutcome, IN_FILE,
    MAX_MESSAGE_BYTES, OUT_FILE, REFEREE,
};
use crate::player::{Instance, GRACE, LIBRARY_FALLBACK};
use crate::protocol::{Reply, Request, Verb};
use crate::record::EndReason;
use crate::referee::seat::{self, MailboxSeat, Seat, SendError};

mod hints;
pub use hints::RepeatedHints;

/// Exchanges without a usable answer after which checking stops.
pub const MAX_BROKEN: u32 = 3;

/// The longest extra wait for an answer that is late, to tell "slow" from
/// "never answers".
const LATE_GRACE: Duration = Duration::from_millis(2000);

/// How a late answer's problem starts.
const LATE_EXPECTED: &str = "an answer within";

/// The opponent named in every NEW.
const OPPONENT: &str = "random";

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

/// How the bot is timed, and the seed of the built-in opponent.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub move_ms: u64,
    pub startup_ms: u64,
    pub seed: u64,
}

/// How a step came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Not compliant, but tolerated (does not fail the bot).
    Warn,
    Fail,
    /// Nothing to check (e.g. no answer came to time or to compare).
    NotRun,
}

/// One thing that was wrong, and what to do about it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    /// The message the bot was answering (`seq N: TEXT`), if any.
    pub sent: String,
    pub expected: String,
    pub got: String,
    pub hint: String,
    /// More lines to show (e.g. the bot's last stderr lines).
    pub extra: Vec<String>,
}

/// One named check.
#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    pub verdict: Verdict,
    /// What came, in short (shown for every step).
    pub summary: String,
    pub problems: Vec<Problem>,
}

impl Step {
    /// The step as report lines (no trailing newline).
    pub fn render(&self) -> String {
        hints::render(self, &mut RepeatedHints::default())
    }

    /// Like [`Step::render`], but a hint printed before (in `repeated`)
    /// is not repeated: the problem points at its first showing.
    pub fn render_folded(&self, repeated: &mut RepeatedHints) -> String {
        hints::render(self, repeated)
    }
}

/// Every step that ran, and why checking stopped early (if it did).
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub steps: Vec<Step>,
    pub stopped: Option<String>,
}

impl Report {
    pub fn failed(&self) -> usize {
        self.count(Verdict::Fail)
    }

    pub fn warnings(&self) -> usize {
        self.count(Verdict::Warn)
    }

    fn count(&self, v: Verdict) -> usize {
        self.steps.iter().filter(|s| s.verdict == v).count()
    }

    /// True if the bot passed every check (warnings allowed).
    pub fn compliant(&self) -> bool {
        self.failed() == 0 && self.stopped.is_none()
    }

    /// `N checks, M failed` (and the warnings, if any).
    pub fn summary_line(&self) -> String {
        let n = self.steps.len();
        let mut s = format!(
            "{n} check{}, {} failed",
            if n == 1 { "" } else { "s" },
            self.failed()
        );
        match self.warnings() {
            0 => {}
            1 => s.push_str(", 1 warning"),
            n => s.push_str(&format!(", {n} warnings")),
        }
        match self.count(Verdict::NotRun) {
            0 => {}
            n => s.push_str(&format!(", {n} not checked")),
        }
        s
    }
}

/// Plays the script against `inst` (not yet started: this starts it) and
/// returns the report; `on_step` sees each step as soon as it is judged.
/// `Err` only for the harness's own failures (the board unwritable, the bot
/// not startable).
pub fn check_bot(
    inst: &mut Instance,
    opts: &Options,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Report, HarnessError> {
    let span = tracing::info_span!("game", id = "check-bot", bot = %inst.id());
    inst.prepare(span.clone())
        .map_err(|e| HarnessError::PlayerUnavailable(e.to_string()))?;
    let mut run = Run {
        inst,
        opts: *opts,
        span,
        report: Report::default(),
        on_step,
        broken: 0,
        game_new: None,
        after_bye: false,
        last_raw: None,
        answered_any: false,
        stats: Stats::default(),
        turns_sent: vec![],
    };
    run.script()?;
    Ok(run.report)
}

/// Aggregates over every answer, for the summary checks.
#[derive(Default)]
struct Stats {
    answers: u32,
    /// Usable answers to a TURN.
    turn_answers: u32,
    seq: Vec<String>,
    framing: Vec<String>,
    late: Vec<String>,
    /// Messages after whose answer in.txt no longer held the message.
    in_written: Vec<String>,
    crlf: bool,
    slowest_ready: Option<(u64, String)>,
    slowest_other: Option<(u64, String)>,
}

/// A usable answer.
struct Answer {
    text: String,
    ms: u64,
    seq: u64,
    /// Set if it came after the limit.
    late: Option<Problem>,
}

/// A step being put together.
struct StepBuilder {
    name: String,
    summary: Vec<String>,
    problems: Vec<Problem>,
    warn_only: bool,
    /// There was nothing to check (shown as not checked, unless a problem came).
    not_run: bool,
}

impl StepBuilder {
    fn new(name: impl Into<String>) -> StepBuilder {
        StepBuilder {
            name: name.into(),
            summary: vec![],
            problems: vec![],
            warn_only: false,
            not_run: false,
        }
    }

    fn note(&mut self, text: impl Into<String>) {
        self.summary.push(text.into());
    }

    /// Nothing to check: says why.
    fn not_run(&mut self, why: impl Into<String>) {
        self.not_run = true;
        self.note(why);
    }

    fn fail(&mut self, p: Problem) {
        self.problems.push(p);
    }

    /// Takes the answer's late-problem, if any; returns the answer.
    fn took(&mut self, mut a: Answer) -> Answer {
        if let Some(p) = a.late.take() {
            self.problems.push(p);
        }
        a
    }

    fn build(self) -> Step {
        let verdict = match (self.problems.is_empty(), self.warn_only) {
            (true, _) if self.not_run => Verdict::NotRun,
            (true, _) => Verdict::Pass,
            (false, true) => Verdict::Warn,
            (false, false) => Verdict::Fail,
        };
        Step {
            name: self.name,
            verdict,
            summary: self.summary.join("; "),
            problems: self.problems,
        }
    }
}

/// One step of the script.
type StepFn<'a> = fn(&mut Run<'a>) -> Result<(), HarnessError>;

struct Run<'a> {
    inst: &'a mut Instance,
    opts: Options,
    span: tracing::Span,
    report: Report,
    on_step: &'a mut dyn FnMut(&Step),
    /// Exchanges that ended without a usable answer and needed a restart.
    broken: u32,
    /// The NEW of the game in progress, sent again after a restart.
    game_new: Option<Request>,
    /// The last exchange was END → BYE (the bot may exit now).
    after_bye: bool,
    /// out.txt as it was after the last usable answer.
    last_raw: Option<Vec<u8>>,
    answered_any: bool,
    stats: Stats,
    /// Every TURN sent (seq, text), to judge the choices a library overrode.
    turns_sent: Vec<(u64, Request)>,
}

/// A readable form of bytes from a move file.
fn shown(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

fn sent_line(seq: u64, text: &str) -> String {
    format!("seq {seq}: {text}")
}

/// `seq 7 (TURN)`, for lists. `text` may be a `sent_line`.
fn label(seq: u64, text: &str) -> String {
    let text = text.strip_prefix(&format!("seq {seq}: ")).unwrap_or(text);
    format!("seq {seq} ({})", text.split(' ').next().unwrap_or(""))
}

/// The first few items, and how many more.
fn brief_list(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > SHOWN {
        s.push_str(&format!("; and {} more", items.len() - SHOWN));
    }
    s
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn legal_names(pos: &Position) -> Vec<String> {
    pos.legal_squares().into_iter().map(square_name).collect()
}

/// What a legal answer in `pos` would be, in words.
fn legal_words(pos: &Position) -> String {
    let names = legal_names(pos);
    match names.len() {
        0 => "pass (there is no legal move)".to_string(),
        1 => format!("{} (the only legal move)", names[0]),
        _ => format!("a legal move: {}", or_list(&names)),
    }
}

/// "a legal move here is only c8" / "legal moves here: c4, d3, e6 or f5".
fn legal_here(pos: &Position) -> String {
    let names = legal_names(pos);
    match names.len() {
        0 => "there is no legal move here: answer `pass`".to_string(),
        1 => format!("a legal move here is only {}", names[0]),
        _ => format!("legal moves here: {}", or_list(&names)),
    }
}

/// The position a TURN text describes.
fn turn_position(text: &str) -> Option<Position> {
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
    fn new(got: String, hint: String) -> BadMove {
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

/// The position a transcript leads to from the start of `size`, and its
/// last move (`none` if empty).
pub fn scripted(size: u8, transcript: &str) -> (Position, Option<Move>) {
    let (moves, pos) =
        replay_transcript(Position::start(size), transcript).expect("scripted transcripts replay");
    (pos, moves.last().copied())
}

impl Run<'_> {
    fn stopped(&self) -> bool {
        self.report.stopped.is_some()
    }

    fn finish(&mut self, b: StepBuilder) {
        let step = b.build();
        (self.on_step)(&step);
        self.report.steps.push(step);
    }

    fn limit_for(&self, kind: Verb) -> u64 {
        match kind {
            Verb::New => self.opts.startup_ms,
            _ => self.opts.move_ms,
        }
    }

    fn raw_out(&self) -> Option<Vec<u8>> {
        match read_limited(&self.inst.mailbox().dir().join(OUT_FILE), MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    fn exit_problem(&mut self, sent: String, info: String) -> Problem {
        if let Some(why) = self.inst.start_error() {
            // It never ran: the start error says why and what to do.
            self.report.stopped = Some(format!("the bot could not be started ({info})"));
            return Problem {
                sent,
                expected: "an answer, and the bot still running".into(),
                got: format!("the bot could not be started: {why}"),
                hint: String::new(),
                extra: vec![],
            };
        }
        let tail = self.inst.stderr_tail();
        let mut extra = vec![];
        if !tail.is_empty() {
            extra.push("last lines of its stderr:".to_string());
            extra.extend(tail.iter().map(|l| format!("| {l}")));
        }
        let why = format!("the bot's process ended ({info})");
        self.report.stopped = Some(why.clone());
        Problem {
            sent,
            expected: "an answer, and the bot still running".into(),
            got: why,
            hint: "a bot keeps running and reading in.txt until the referee stops it (TERM); \
                   its last stderr lines are below"
                .into(),
            extra,
        }
    }

    /// Kills the bot and starts a fresh one (fresh mailbox, seq from 1);
    /// sends the NEW of the game in progress (if any) again.
    fn restart(&mut self) -> Result<(), HarnessError> {
        self.inst.stop(GRACE);
        self.last_raw = None;
        self.after_bye = false;
        if self.broken >= MAX_BROKEN {
            self.report.stopped = Some(format!(
                "giving up after {} messages without a usable answer",
                self.broken
            ));
            return Ok(());
        }
        tracing::debug!("restarting the bot after a message without a usable answer");
        self.inst
            .prepare(self.span.clone())
            .map_err(|e| HarnessError::PlayerUnavailable(e.to_string()))?;
        if let Some(new) = self.game_new.clone() {
            let seq = self.send(&new)?;
            let new = new.encode();
            match self
                .inst
                .wait(Instant::now() + Duration::from_millis(self.opts.startup_ms))
            {
                Ok(a) if Reply::decode(&a, 8) == Ok(Reply::Ready) => {}
                other => {
                    let got = match other {
                        Ok(a) => format!("{a:?}"),
                        Err(e) => e.to_string(),
                    };
                    self.report.stopped = Some(format!(
                        "after a restart the bot did not answer READY to {} ({got})",
                        sent_line(seq, &new)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Sends through the referee's seat, so a failure is sorted as under
    /// the referee: the board's is the harness's, anything else the bot's.
    fn send(&mut self, request: &Request) -> Result<u64, HarnessError> {
        MailboxSeat::new(self.inst)
            .send(request)
            .map_err(|e| match e {
                SendError::Harness(e) => e,
                // Only the bot can have put a link there.
                SendError::Refused(why) => HarnessError::BotNoncompliant(format!(
                    "cannot write in.txt: {why}; bots never create, rename or link files"
                )),
            })?;
        Ok(self.inst.seq())
    }

    /// Sends `text` and waits for a usable answer. `Err` says what went
    /// wrong; after an unanswered message the bot has been restarted (or
    /// checking stopped).
    fn ask(&mut self, request: &Request) -> Result<Result<Answer, Problem>, HarnessError> {
        let kind = request.verb();
        let text = &request.encode();
        let limit = self.limit_for(kind);
        // A bot may exit after BYE; the referee then starts it again.
        if let Some(info) = self.inst.exit_info() {
            if self.after_bye && kind == Verb::New {
                self.restart_after_bye(&info.to_string())?;
            } else {
                let p = self.exit_problem(format!("(before {text})"), info.to_string());
                return Ok(Err(p));
            }
        }
        if kind == Verb::New {
            self.game_new = Some(request.clone());
        }
        let mut seq = self.send(request)?;
        let mut t0 = Instant::now();
        let mut result = self.inst.wait(t0 + Duration::from_millis(limit));
        if let Err(AnswerError::Aborted(_)) = &result {
            if self.after_bye && kind == Verb::New {
                let info = self.inst.exit_info().map_or("?".into(), |i| i.to_string());
                self.restart_after_bye(&info)?;
                seq = self.send(request)?;
                t0 = Instant::now();
                result = self.inst.wait(t0 + Duration::from_millis(limit));
            }
        }
        self.after_bye = false;
        if kind == Verb::Turn {
            self.turns_sent.push((seq, request.clone()));
        }
        let mut late = false;
        if let Err(AnswerError::Timeout { pending }) = &result {
            let partial = matches!(pending, Pending::Partial(_));
            if kind != Verb::New && !partial && !self.wrong_seq_written(seq) {
                let extra = Duration::from_millis(limit).min(LATE_GRACE);
                result = self.inst.wait(t0 + Duration::from_millis(limit) + extra);
                late = result.is_ok();
            }
        }
        let ms = t0.elapsed().as_millis() as u64;
        let sent = sent_line(seq, text);
        match result {
            Ok(answer) => {
                self.answered_any = true;
                self.stats.answers += 1;
                if kind == Verb::Turn {
                    self.stats.turn_answers += 1;
                }
                if !self.inst.mailbox().sent_intact() {
                    self.stats.in_written.push(label(seq, text));
                }
                let raw = self.raw_out();
                if raw
                    .as_ref()
                    .is_some_and(|r| r.windows(2).any(|w| w == b"\r\n"))
                {
                    self.stats.crlf = true;
                }
                self.last_raw = raw;
                let what = text.split(' ').next().unwrap_or("").to_string();
                let slot = if kind == Verb::New {
                    &mut self.stats.slowest_ready
                } else {
                    &mut self.stats.slowest_other
                };
                if slot.as_ref().is_none_or(|(m, _)| ms > *m) {
                    *slot = Some((ms, what.clone()));
                }
                let late = late.then(|| {
                    let p = Problem {
                        sent: sent.clone(),
                        expected: format!("{LATE_EXPECTED} {limit} ms"),
                        got: format!("{answer:?} after {ms} ms"),
                        hint: format!(
                            "a real game forfeits this; answer within the time ({}), and poll \
                             in.txt every few milliseconds, not seconds",
                            if kind == Verb::Turn {
                                "the last word of TURN"
                            } else {
                                "move-ms"
                            }
                        ),
                        extra: vec![],
                    };
                    self.stats
                        .late
                        .push(format!("{}: {ms} ms", label(seq, text)));
                    p
                });
                Ok(Ok(Answer {
                    text: answer,
                    ms,
                    seq,
                    late,
                }))
            }
            Err(AnswerError::Aborted(_)) => {
                let info = self.inst.exit_info().map_or("?".into(), |i| i.to_string());
                Ok(Err(self.exit_problem(sent, info)))
            }
            Err(e) => {
                let mut p = self.describe_failure(&e, kind, seq, text, ms);
                match e {
                    // The answer was complete: the conversation goes on.
                    AnswerError::WrongSender { .. } => {}
                    AnswerError::Symlink(_) | AnswerError::Io(_) => {
                        self.inst.stop(GRACE);
                        self.report.stopped = Some(format!("the mailbox became unusable: {e}"));
                    }
                    AnswerError::Timeout { .. } if kind == Verb::New && !self.answered_any => {
                        self.inst.stop(GRACE);
                        self.report.stopped =
                            Some("the bot never answered its first NEW".to_string());
                    }
                    _ => {
                        self.broken += 1;
                        self.restart()?;
                        if !self.stopped() {
                            p.extra.push(
                                "(check-bot restarted the bot: fresh mailbox, seq from 1)".into(),
                            );
                        }
                    }
                }
                Ok(Err(p))
            }
        }
    }

    /// The referee's rule: a bot gone after its last BYE is started again.
    fn restart_after_bye(&mut self, info: &str) -> Result<(), HarnessError> {
        tracing::debug!("the bot exited after BYE ({info}); starting it again");
        self.last_raw = None;
        self.after_bye = false;
        seat::restart(&mut MailboxSeat::new(self.inst), self.span.clone())
            .map_err(|e| HarnessError::PlayerUnavailable(e.to_string()))
    }

    /// True if out.txt holds a complete answer, written since the last
    /// usable one, whose seq is not `seq`.
    fn wrong_seq_written(&self, seq: u64) -> bool {
        match self.raw_out() {
            Some(raw) if Some(&raw) != self.last_raw.as_ref() => {
                matches!(Message::decode(&raw), Decoded::Complete(m) if m.seq != seq)
            }
            _ => false,
        }
    }

    fn seq_hint(&mut self, seq: u64, had: u64, sent: &str) -> Problem {
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
    fn describe_failure(
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
    fn expect_word(
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

    fn turn(&self, pos: &Position, last: Option<Move>) -> Request {
        Request::turn(pos, last, self.opts.move_ms)
    }

    /// Sends TURN for `pos` and judges the answer: a legal move (or pass
    /// where there is none). Returns the move if it was legal.
    fn expect_move(
        &mut self,
        b: &mut StepBuilder,
        pos: &Position,
        last: Option<Move>,
    ) -> Result<Option<Move>, HarnessError> {
        let turn = self.turn(pos, last);
        let text = turn.encode();
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

    fn end(pos: &Position) -> Request {
        let wof = pos.discs_wof();
        Request::End {
            winner: wof.winner(),
            black: wof.black,
            white: wof.white,
            reason: EndReason::Normal.to_string(),
        }
    }

    /// END → BYE inside a step; marks that the bot may exit now.
    fn end_game(&mut self, b: &mut StepBuilder, pos: &Position) -> Result<bool, HarnessError> {
        self.game_new = None;
        let ok = self.expect_word(b, &Self::end(pos), Reply::Bye)?;
        self.after_bye = ok;
        Ok(ok)
    }

    fn new_game(&self, game: &str, color: Color, size: u8) -> Request {
        Request::New {
            game: game.to_string(),
            color,
            opponent: OPPONENT.to_string(),
            size,
            move_ms: self.opts.move_ms,
        }
    }

    fn script(&mut self) -> Result<(), HarnessError> {
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

    fn step_new(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("NEW → READY within the start-up time (8×8, black)");
        let new = self.new_game("check-1", Color::Black, 8);
        self.expect_word(&mut b, &new, Reply::Ready)?;
        self.finish(b);
        Ok(())
    }

    fn step_start(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("TURN from the 8×8 start → a legal move");
        self.expect_move(&mut b, &Position::start(8), None)?;
        self.finish(b);
        Ok(())
    }

    fn step_illegal(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("ILLEGAL → OK, then the new TURN → a legal move");
        let illegal = Request::Illegal {
            reason: EndReason::NoFlips.to_string(),
        };
        if self.expect_word(&mut b, &illegal, Reply::Ok)? {
            self.expect_move(&mut b, &Position::start(8), None)?;
        }
        self.finish(b);
        Ok(())
    }

    fn step_unknown(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("unknown message kind (PING) → OK");
        b.warn_only = true;
        let ping = Request::Other("PING check-bot".to_string());
        self.expect_word(&mut b, &ping, Reply::Ok)?;
        self.finish(b);
        Ok(())
    }

    fn step_one_move(&mut self) -> Result<(), HarnessError> {
        let (pos, last) = scripted(8, ONE_MOVE);
        let only = legal_names(&pos).join("");
        let mut b = StepBuilder::new(format!(
            "TURN with exactly one legal move → that move ({only})"
        ));
        self.expect_move(&mut b, &pos, last)?;
        self.finish(b);
        Ok(())
    }

    fn step_after_pass(&mut self) -> Result<(), HarnessError> {
        let (pos, _) = scripted(8, WHITE_PASSES);
        let pos = pos.pass_unchecked();
        let mut b = StepBuilder::new("TURN whose <last> is pass → a legal move");
        self.expect_move(&mut b, &pos, Some(Move::Pass))?;
        self.finish(b);
        Ok(())
    }

    fn step_ask_pass(&mut self) -> Result<(), HarnessError> {
        let (pos, last) = scripted(8, BLACK_MUST_PASS);
        let mut b = StepBuilder::new("TURN without a legal move (ask-pass) → pass");
        self.expect_move(&mut b, &pos, last)?;
        self.finish(b);
        Ok(())
    }

    fn step_end(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("END → BYE");
        let (pos, _) = scripted(8, BLACK_MUST_PASS);
        self.end_game(&mut b, &pos)?;
        self.finish(b);
        Ok(())
    }

    fn step_six(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new(
            "next game (6×6, white): NEW with the next seq after END → READY, TURN → a legal move, \
             END → BYE",
        );
        let before = self.inst.starts();
        let new = self.new_game("check-2", Color::White, 6);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            if self.inst.starts() > before {
                b.note("the bot had exited after BYE (allowed) and was started again");
            }
            let (pos, last) = scripted(6, SIX);
            if self.expect_move(&mut b, &pos, last)?.is_some() {
                self.end_game(&mut b, &pos)?;
            }
        }
        self.finish(b);
        Ok(())
    }

    fn step_four(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new("4×4 as black: NEW → READY, TURN → a legal move, END → BYE");
        let new = self.new_game("check-3", Color::Black, 4);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            let (pos, last) = scripted(4, FOUR);
            if self.expect_move(&mut b, &pos, last)?.is_some() {
                self.end_game(&mut b, &pos)?;
            }
        }
        self.finish(b);
        Ok(())
    }

    fn step_full_game(&mut self) -> Result<(), HarnessError> {
        let mut b = StepBuilder::new(format!(
            "a complete 4×4 game as white against the built-in {OPPONENT}"
        ));
        let new = self.new_game("check-4", Color::White, 4);
        if self.expect_word(&mut b, &new, Reply::Ready)? {
            b.summary.clear();
            let mut rng = rand::rngs::StdRng::seed_from_u64(self.opts.seed);
            let mut pos = Position::start(4);
            let mut last = None;
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
                    last = Some(mv);
                    moves.push(mv);
                    continue;
                }
                let mut turn = StepBuilder::new("");
                let answer = self.expect_move(&mut turn, &pos, last)?;
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
                        last = Some(mv);
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
    fn step_own_choice(&mut self) -> Result<(), HarnessError> {
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

    fn fallback_problem(&self, line: &str, what: &str, turn: Option<&str>, n: usize) -> Problem {
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

    fn step_summaries(&mut self) -> Result<(), HarnessError> {
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
fn fallback_parts(line: &str) -> (Option<u64>, String) {
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
fn foreign_files(dir: &Path) -> Vec<String> {
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
    use crate::game::{parse_square, Square};

    fn names(pos: &Position) -> Vec<String> {
        legal_names(pos)
    }

    #[test]
    fn scripted_positions_are_what_their_steps_claim() {
        let (one, last) = scripted(8, ONE_MOVE);
        assert_eq!(one.to_move(), Color::Black);
        assert_eq!(names(&one), ["c8"]);
        assert_eq!(last.map(move_name).as_deref(), Some("h6"));

        let (before, _) = scripted(8, WHITE_PASSES);
        assert_eq!(before.to_move(), Color::White);
        assert!(before.must_pass());
        let after = before.pass_unchecked();
        assert!(after.legal_moves() != 0);

        let (stuck, last) = scripted(8, BLACK_MUST_PASS);
        assert_eq!(stuck.to_move(), Color::Black);
        assert!(stuck.must_pass(), "black has no move, the game goes on");
        assert_eq!(last.map(move_name).as_deref(), Some("f8"));

        let (six, last) = scripted(6, SIX);
        assert_eq!(
            (six.size(), six.to_move(), last.map(move_name).as_deref()),
            (6, Color::White, Some("b6"))
        );
        assert!(names(&six).len() > 1);

        let (four, last) = scripted(4, FOUR);
        assert_eq!(
            (four.size(), four.to_move(), last.map(move_name).as_deref()),
            (4, Color::Black, Some("a1"))
        );
        assert!(names(&four).len() > 1);
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

    #[test]
    fn steps_render_with_marks_and_hints() {
        let step = Step {
            name: "END → BYE".into(),
            verdict: Verdict::Fail,
            summary: String::new(),
            problems: vec![Problem {
                sent: "seq 8: END black 40 24 normal".into(),
                expected: "BYE".into(),
                got: "\"OK\"".into(),
                hint: "answer END with BYE".into(),
                extra: vec![],
            }],
        };
        let text = step.render();
        assert!(text.starts_with("✗ END → BYE"), "{text}");
        assert!(text.contains("hint      answer END with BYE"), "{text}");
        let report = Report {
            steps: vec![step],
            stopped: None,
        };
        assert_eq!(report.summary_line(), "1 check, 1 failed");
        assert!(!report.compliant());
        assert_eq!(or_list(&["a".into(), "b".into(), "c".into()]), "a, b or c");
    }
}
