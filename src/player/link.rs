//! How messages reach a running player: exactly one way at a time — the
//! files of its mailbox, the pipe it was offered (on offer, then taken),
//! or an engine's stdin/stdout.
//!
//! Owns: the [`Link`] of an instance, the referee's ends of the offered
//! pipe and reading one answer from it, and an engine's failure to answer
//! in the mailbox's terms. Must not: start or stop processes, or judge
//! what an answer means.

use std::fs::File;
use std::time::{Duration, Instant};

use crate::engine::{EngineDriver, EngineError};
use crate::mailbox::{AnswerError, Pending};
use mailbox_protocol::pipe::{self, PipeError, PipeReader};
use mailbox_protocol::{Message, REFEREE};

use super::process::{ExitInfo, ProcessTree};

/// How messages reach the running process.
pub(super) enum Link {
    /// `in.txt` and `out.txt` in its mailbox (a bot not offered the pipe,
    /// one that kept to the files, one started by hand, or none running).
    Files,
    /// The pipe offered at its start, until its first answer says whether
    /// it took it (meanwhile messages go through the files).
    Offered(OfferedPipe),
    /// The pipe it took: messages and answers go only through it.
    Pipe(OfferedPipe),
    /// An engine's conversation (GTP, NBoard) over its stdin/stdout.
    Engine(Box<EngineDriver>),
}

/// How often a wait on the pipe looks whether the bot's process ended (its
/// pipe closes when it does, unless a process it left holds it).
const PIPE_TICK: Duration = Duration::from_millis(100);

/// The referee's ends of the pipe offered to a bot's process.
pub(super) struct OfferedPipe {
    /// Where its messages go (the bot reads the other end at fd 3).
    to_bot: File,
    /// Where its answers come from (it writes the other end at fd 4).
    from_bot: PipeReader,
    /// Why the last message could not be written (the bot closed its end),
    /// for the wait that follows.
    broken: Option<String>,
    /// The seq of a message sent and never waited for: its answer, if it
    /// comes, is passed over.
    unanswered: Option<u64>,
}

/// The bot's ends of an offered pipe: the one it reads, the one it writes.
pub(super) type BotEnds = (File, File);

impl OfferedPipe {
    /// A fresh pipe pair: the referee's ends, and the bot's.
    pub(super) fn new() -> std::io::Result<(OfferedPipe, BotEnds)> {
        let (bot_reads, to_bot) = pipe::pipe()?;
        let (from_bot, bot_writes) = pipe::pipe()?;
        pipe::set_nonblocking(&to_bot)?;
        let offered = OfferedPipe {
            to_bot,
            from_bot: PipeReader::new(from_bot)?,
            broken: None,
            unanswered: None,
        };
        Ok((offered, (bot_reads, bot_writes)))
    }

    /// The answer to message `seq`, sent and never waited for, is to be
    /// passed over if it comes.
    pub(super) fn pass_over(&mut self, seq: u64) {
        self.unanswered = Some(seq);
    }

    /// Whether the bot took the offer: it wrote the acceptance on the pipe
    /// before its first answer in `out.txt`.
    pub(super) fn accepted(&mut self) -> bool {
        self.from_bot.holds_accept()
    }

    /// Writes `message` in one write. A bot that closed its end is heard of
    /// at the wait (its process may have ended: that is the better
    /// reason); one that stopped reading, so the pipe is full, is refused.
    pub(super) fn send(&mut self, message: &Message) -> Result<(), AnswerError> {
        match pipe::send(&self.to_bot, message) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.broken = Some(
                    "the bot closed fd 3, where its messages come, so the message could not be \
                     sent"
                        .to_string(),
                );
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(AnswerError::Pipe(
                format!("the bot does not read its messages: its pipe (fd 3) is full ({e})"),
            )),
            Err(e) => Err(AnswerError::Pipe(format!(
                "cannot write to the bot's pipe: {e}"
            ))),
        }
    }

    /// The answer to message `seq` of bot `id`, by `deadline`: four lines
    /// in one piece with the right sender and seq, or why not (`exited`
    /// says whether the process ended).
    pub(super) fn answer(
        &mut self,
        id: &str,
        seq: u64,
        deadline: Instant,
        process: Option<&ProcessTree>,
        exited: &mut dyn FnMut() -> Option<String>,
    ) -> Result<String, AnswerError> {
        // A closed pipe is most often a process that ended: its exit
        // status, once the watcher saw it, is the reason; else the bot
        // closed its end and lives on, which is garbage.
        let grace =
            Duration::from_millis(300).min(deadline.saturating_duration_since(Instant::now()));
        let ended = |why: String| match process.and_then(|p| p.exit.wait(grace)) {
            Some(info) => AnswerError::Aborted(format!("the bot's process ended ({info})")),
            None => AnswerError::Pipe(why),
        };
        if let Some(why) = self.broken.take() {
            return Err(ended(why));
        }
        let mut got = self.from_bot.recv(Some(deadline), PIPE_TICK, exited);
        // The answer to a message the referee sent and never waited for
        // (a NEW followed by END when the opponent failed to start) comes
        // first: it is passed over, as in out.txt a stale answer is.
        if let Ok(m) = &got {
            if self.unanswered.take() == Some(m.seq) && m.seq < seq {
                got = self.from_bot.recv(Some(deadline), PIPE_TICK, exited);
            }
        }
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match got {
            Ok(_) if self.from_bot.pending() > 0 => Err(AnswerError::Pipe(format!(
                "garbage on the pipe (fd 4): {} more bytes after the fourth line feed (one \
                 answer per message, in one write, nothing after it)",
                self.from_bot.pending()
            ))),
            Ok(m) if m.seq != seq => Err(AnswerError::Pipe(format!(
                "garbage on the pipe (fd 4): an answer to seq {}, not {seq} (line 3 must repeat \
                 the seq of the message)",
                m.seq
            ))),
            Ok(m) if m.from != id || m.to != REFEREE => Err(AnswerError::WrongSender {
                from: m.from,
                to: m.to,
            }),
            Ok(m) => Ok(m.text),
            Err(PipeError::Timeout { partial }) => Err(AnswerError::Timeout {
                pending: match partial.is_empty() {
                    true => Pending::Nothing,
                    false => Pending::PipePartial(lossy(&partial)),
                },
            }),
            Err(PipeError::Closed { .. }) => Err(ended(
                "the bot closed fd 4, its end of the pipe".to_string(),
            )),
            Err(PipeError::Garbage(why)) => Err(AnswerError::Pipe(format!(
                "garbage on the pipe (fd 4): {why}"
            ))),
            Err(PipeError::Aborted(why)) => Err(AnswerError::Aborted(why)),
            Err(PipeError::Io(e)) => Err(AnswerError::Pipe(format!("cannot read the pipe: {e}"))),
        }
    }
}

/// An engine's answer in the mailbox's terms: silence is a timeout, a
/// closed pipe the process's end (`exit`: its status, once seen), a line
/// of no protocol garbage; an error answer (GTP `?`) or `resign` is
/// returned as text for the referee to refuse, with the command it
/// answered.
pub(super) fn engine_answer(
    answer: Result<String, EngineError>,
    exit: impl FnOnce() -> Option<ExitInfo>,
) -> Result<String, AnswerError> {
    answer.or_else(|e| match e {
        EngineError::Timeout { .. } => Err(AnswerError::Timeout {
            pending: Pending::Nothing,
        }),
        EngineError::Closed { .. } | EngineError::Write { .. } => {
            Err(AnswerError::Aborted(match exit() {
                Some(info) => format!("the engine's process ended ({info}): {e}"),
                None => format!("the engine {e}"),
            }))
        }
        EngineError::Garbage { .. } => Err(AnswerError::Garbage(e.to_string())),
        EngineError::Refused { command, answer } | EngineError::Resigned { command, answer } => {
            Ok(format!("{answer} (to `{command}`)"))
        }
    })
}
