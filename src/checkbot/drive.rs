//! check-bot's driving of the bot: sending a request through the
//! referee's seat, waiting for the answer with the referee's limits (and a
//! grace to tell "late" from "never"), restarting the bot after a message
//! without a usable answer or after BYE, and the running aggregates the
//! summary checks read.
//!
//! Owns the conversation with the bot and its bookkeeping ([`Run`]); must
//! not decide what a step checks (the script does) nor word what was
//! wrong beyond the exchange itself (the judge does).

use std::time::{Duration, Instant};

use crate::error::HarnessError;
use crate::mailbox::{
    read_limited, AnswerError, Decoded, Message, Pending, ReadOutcome, MAX_MESSAGE_BYTES, OUT_FILE,
};
use crate::player::{Instance, Transport, GRACE};
use crate::protocol::{Reply, Request, Verb};
use crate::record::Limit;
use crate::referee::seat::{self, MailboxSeat, Seat, SendError};

use super::report::{label, sent_line, Answer, Problem, Report, Step, StepBuilder, LATE_EXPECTED};

/// How the bot is timed, and the seed of the built-in opponent.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub move_ms: u64,
    pub startup_ms: u64,
    pub seed: u64,
}

/// Exchanges without a usable answer after which checking stops.
pub const MAX_BROKEN: u32 = 3;

/// The longest extra wait for an answer that is late, to tell "slow" from
/// "never answers".
pub(super) const LATE_GRACE: Duration = Duration::from_millis(2000);

/// Aggregates over every answer, for the summary checks.
#[derive(Default)]
pub(super) struct Stats {
    pub(super) answers: u32,
    /// Usable answers to a TURN.
    pub(super) turn_answers: u32,
    pub(super) seq: Vec<String>,
    pub(super) framing: Vec<String>,
    pub(super) late: Vec<String>,
    /// Messages after whose answer in.txt no longer held the message.
    pub(super) in_written: Vec<String>,
    pub(super) crlf: bool,
    pub(super) slowest_ready: Option<(u64, String)>,
    pub(super) slowest_other: Option<(u64, String)>,
}

pub(super) struct Run<'a> {
    pub(super) inst: &'a mut Instance,
    pub(super) opts: Options,
    pub(super) span: tracing::Span,
    pub(super) report: Report,
    pub(super) on_step: &'a mut dyn FnMut(&Step),
    /// Exchanges that ended without a usable answer and needed a restart.
    pub(super) broken: u32,
    /// The NEW of the game in progress, sent again after a restart.
    pub(super) game_new: Option<Request>,
    /// The last exchange was END → BYE (the bot may exit now).
    pub(super) after_bye: bool,
    /// out.txt as it was after the last usable answer.
    pub(super) last_raw: Option<Vec<u8>>,
    pub(super) answered_any: bool,
    pub(super) stats: Stats,
    /// Every TURN sent (seq, text), to judge the choices a library overrode.
    pub(super) turns_sent: Vec<(u64, Request)>,
}

impl Run<'_> {
    pub(super) fn stopped(&self) -> bool {
        self.report.stopped.is_some()
    }

    pub(super) fn finish(&mut self, b: StepBuilder) {
        let step = b.build();
        (self.on_step)(&step);
        self.report.steps.push(step);
    }

    pub(super) fn limit_for(&self, kind: Verb) -> u64 {
        match kind {
            Verb::New => self.opts.startup_ms,
            _ => self.opts.move_ms,
        }
    }

    pub(super) fn raw_out(&self) -> Option<Vec<u8>> {
        match read_limited(&self.inst.mailbox().dir().join(OUT_FILE), MAX_MESSAGE_BYTES) {
            Ok(ReadOutcome::Bytes(b)) => Some(b),
            _ => None,
        }
    }

    /// The bot went over a limit of its sandbox (as in a tournament, where
    /// it forfeits): checking stops there.
    fn limit_problem(&mut self, sent: String, limit: Limit, detail: String) -> Problem {
        let (what, key) = match limit {
            Limit::Memory => ("memory", "memory-mb"),
            Limit::Disk => ("disk", "disk-mb"),
        };
        self.report.stopped = Some(format!("the bot went over its sandbox's {what} limit"));
        Problem {
            sent,
            expected: format!("an answer within the sandbox's {what} limit (`{key}`)"),
            got: detail,
            hint: format!(
                "check-bot gives a bot the sandbox's default limits ({} MiB of memory, {} MiB \
                 of files), as a tournament does unless its player sets `{key}`; in a game \
                 this is a forfeit",
                crate::sandbox::DEFAULT_MEMORY_MB,
                crate::sandbox::DEFAULT_DISK_MB
            ),
            extra: vec![],
        }
    }

    pub(super) fn exit_problem(&mut self, sent: String, info: String) -> Problem {
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
    pub(super) fn restart(&mut self) -> Result<(), HarnessError> {
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
            .map_err(HarnessError::from)?;
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
    pub(super) fn send(&mut self, request: &Request) -> Result<u64, HarnessError> {
        MailboxSeat::new(self.inst)
            .send(request)
            .map_err(|e| match e {
                SendError::Referee(e) => e.into(),
                SendError::Refused(why) if self.inst.transport() == Transport::Pipe => {
                    HarnessError::BotNoncompliant(format!(
                        "cannot write to the bot's pipe: {why}; a bot reads every message from fd 3"
                    ))
                }
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
    pub(super) fn ask(
        &mut self,
        request: &Request,
    ) -> Result<Result<Answer, Problem>, HarnessError> {
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
            let partial = matches!(pending, Pending::Partial(_) | Pending::PipePartial(_));
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
            Err(AnswerError::OverLimit { limit, detail }) => {
                self.inst.stop(GRACE);
                Ok(Err(self.limit_problem(sent, limit, detail)))
            }
            Err(e) => {
                let mut p = self.describe_failure(&e, kind, seq, text, ms);
                match e {
                    // The answer was complete: the conversation goes on.
                    AnswerError::WrongSender { .. } => {}
                    AnswerError::Symlink(_)
                    | AnswerError::Io { .. }
                    | AnswerError::NotThisBoard(_) => {
                        self.inst.stop(GRACE);
                        self.report.stopped = Some(format!("the mailbox became unusable: {e}"));
                    }
                    AnswerError::Pipe(_) => {
                        self.inst.stop(GRACE);
                        self.report.stopped = Some(format!("the pipe became unusable: {e}"));
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
    pub(super) fn restart_after_bye(&mut self, info: &str) -> Result<(), HarnessError> {
        tracing::debug!("the bot exited after BYE ({info}); starting it again");
        self.last_raw = None;
        self.after_bye = false;
        seat::restart(&mut MailboxSeat::new(self.inst), self.span.clone())
            .map_err(|e| HarnessError::PlayerUnavailable(e.to_string()))
    }

    /// True if out.txt holds a complete answer, written since the last
    /// usable one, whose seq is not `seq`.
    pub(super) fn wrong_seq_written(&self, seq: u64) -> bool {
        match self.raw_out() {
            Some(raw) if Some(&raw) != self.last_raw.as_ref() => {
                matches!(Message::decode(&raw), Decoded::Complete(m) if m.seq != seq)
            }
            _ => false,
        }
    }
}
