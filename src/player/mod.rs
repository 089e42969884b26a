//! Player instances: a bot process (or a bot started by hand) bound to its
//! mailbox on the board, with its seq counter, its output and its lifetime.
//!
//! Owns: starting a spawned bot (working directory = its mailbox,
//! `TOURNAMENT_MAILBOX` / `TOURNAMENT_ID`, `{mailbox}` / `{id}` filled, no
//! shell), reusing it across games, restarting it when it exited, and
//! ending it (TERM, grace, KILL). Knows nothing of Othello: the referee
//! decides what to send and what an answer means.

mod output;
pub use output::LIBRARY_FALLBACK;
pub mod process;
mod spec;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use output::{BotOutput, MAX_LINES_PER_GAME, TAIL_LINES};
pub use process::{become_subreaper, ExitInfo, ProcessTree};
pub use spec::{install_hint, Launch, PlayerSpec, Restart, BUILTINS};

use crate::mailbox::{instance_id, mailbox_dir, AnswerError, Mailbox, MailboxError};

/// How long a bot gets between TERM and KILL.
pub const GRACE: Duration = Duration::from_millis(500);

/// Why an instance could not be started.
#[derive(Debug, Clone)]
pub struct StartError(pub String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One running copy of a player, with its own mailbox.
pub struct Instance {
    spec: Arc<PlayerSpec>,
    id: String,
    mailbox: Mailbox,
    seq: u64,
    process: Option<ProcessTree>,
    output: Arc<BotOutput>,
    starts: u32,
    started_at: Option<Instant>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Instance({})", self.id)
    }
}

impl Instance {
    /// Binds instance `k` of `spec` (ignored for a waiting player, which has
    /// exactly one mailbox, `players/<name>/`) to its mailbox on `board`.
    pub fn new(spec: Arc<PlayerSpec>, board: &Path, k: u32) -> Result<Instance, MailboxError> {
        let slot = (!spec.is_waiting()).then_some(k);
        let id = instance_id(&spec.name, slot);
        let mailbox = Mailbox::open(&mailbox_dir(board, &spec.name, slot), &id)?;
        // A waiting player's bot may already have answered earlier
        // messages: continue its count.
        let seq = if spec.is_waiting() {
            mailbox.last_sent_seq().unwrap_or(0)
        } else {
            0
        };
        Ok(Instance {
            output: BotOutput::new(&id),
            spec,
            id,
            mailbox,
            seq,
            process: None,
            starts: 0,
            started_at: None,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn spec(&self) -> &PlayerSpec {
        &self.spec
    }

    pub fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// How many times a process was started for this instance.
    pub fn starts(&self) -> u32 {
        self.starts
    }

    pub fn is_waiting(&self) -> bool {
        self.spec.is_waiting()
    }

    /// The process's pid, if one is running.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.pid)
    }

    /// How the process ended, if it did.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.process.as_ref().and_then(|p| p.exit.get())
    }

    /// The last stderr lines of the current game.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.output.tail()
    }

    /// How often this game the bot's library played a move the bot did not
    /// choose (its [`LIBRARY_FALLBACK`] lines).
    pub fn library_fallbacks(&self) -> u32 {
        self.output.fallbacks()
    }

    /// Every library fallback line since this instance was made.
    pub fn library_fallback_lines(&self) -> Vec<String> {
        self.output.fallback_lines()
    }

    /// Readies the instance for a game logged under `span`: starts the
    /// process if there is none or it exited. Returns true if it started one.
    pub fn prepare(&mut self, span: tracing::Span) -> Result<bool, StartError> {
        self.output.begin_game(span);
        if self.spec.is_waiting() {
            return Ok(false);
        }
        if let Some(p) = &self.process {
            if !p.has_exited() {
                return Ok(false);
            }
            tracing::debug!(bot = %self.id, "process had exited; starting a new one");
            self.stop(Duration::ZERO);
        }
        self.start()?;
        Ok(true)
    }

    fn start(&mut self) -> Result<(), StartError> {
        let argv = self.spec.resolve().map_err(StartError)?;
        self.mailbox
            .clear()
            .map_err(|e| StartError(format!("cannot clear mailbox of {}: {e}", self.id)))?;
        self.seq = 0;
        // The bot may see the board under another path (another mount of
        // the same share): it is started there and told that path.
        let seen = match &self.spec.board_as {
            Some(root) => root.join(crate::mailbox::PLAYERS_DIR).join(&self.id),
            None => self.mailbox.dir().to_path_buf(),
        };
        let dir = seen.display().to_string();
        let fill = |s: &str| s.replace("{mailbox}", &dir).replace("{id}", &self.id);
        let mut cmd = Command::new(fill(&argv[0]));
        cmd.args(argv[1..].iter().map(|a| fill(a)))
            .current_dir(&seen)
            .env("TOURNAMENT_MAILBOX", &dir)
            .env("TOURNAMENT_ID", &self.id);
        let bell = self.mailbox.doorbell();
        let (tree, mut child) = process::spawn(&mut cmd, move |_| bell.ring()).map_err(|e| {
            StartError(format!(
                "player `{}`: cannot start `{}`: {e}",
                self.spec.name,
                argv.join(" ")
            ))
        })?;
        if let Some(out) = child.stdout.take() {
            let _ = self.output.capture("stdout", out);
        }
        if let Some(err) = child.stderr.take() {
            let _ = self.output.capture("stderr", err);
        }
        tracing::debug!(bot = %self.id, pid = tree.pid, command = %argv.join(" "), "bot started");
        self.process = Some(tree);
        self.starts += 1;
        self.started_at = Some(Instant::now());
        Ok(())
    }

    /// Writes the next message to the bot; returns its seq.
    pub fn send(&mut self, text: &str) -> Result<u64, AnswerError> {
        self.seq += 1;
        tracing::trace!(bot = %self.id, seq = self.seq, "→ {text}");
        self.mailbox.send(self.seq, text)?;
        Ok(self.seq)
    }

    /// Waits for the answer to the last message until `deadline`. Ends
    /// early, with the exit status, if the bot's process exits.
    pub fn wait(&mut self, deadline: Instant) -> Result<String, AnswerError> {
        let process = self.process.as_ref();
        let mut exited = || {
            process
                .and_then(|p| p.exit.get())
                .map(|info| format!("the bot's process ended ({info})"))
        };
        let answer = self.mailbox.wait_answer(self.seq, deadline, &mut exited);
        match &answer {
            Ok(text) => tracing::trace!(bot = %self.id, seq = self.seq, "← {text}"),
            Err(e) => tracing::trace!(bot = %self.id, seq = self.seq, "← {e}"),
        }
        answer
    }

    /// Sends `text` and waits for the answer until `deadline`.
    pub fn exchange(&mut self, text: &str, deadline: Instant) -> Result<String, AnswerError> {
        self.send(text)?;
        self.wait(deadline)
    }

    /// True if a spawned process is running.
    pub fn is_running(&self) -> bool {
        self.process.as_ref().is_some_and(|p| !p.has_exited())
    }

    /// Ends the process: TERM to its group, up to `grace`, then KILL.
    /// Nothing of its process group survives this.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitInfo> {
        let tree = self.process.take()?;
        let info = tree.terminate(grace);
        tracing::debug!(bot = %self.id, "bot stopped ({})", info.as_ref().map_or("?".into(), |i| i.to_string()));
        info
    }

    /// The process tree, for tests and diagnostics.
    pub fn process(&self) -> Option<&ProcessTree> {
        self.process.as_ref()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.stop(GRACE);
        // A spawned instance's mailbox is emptied but kept: a bot on another
        // machine may hold a cached view of the folder, and a folder deleted
        // and made again can be unusable there for seconds. A waiting
        // player's mailbox is left as it is, so its seq goes on counting.
        if !self.spec.is_waiting() {
            let _ = self.mailbox.clear();
        }
    }
}
