//! Player instances: a bot process (or a bot started by hand) bound to its
//! mailbox on the board, with its seq counter, its output and its lifetime;
//! or an engine process (GTP, NBoard) whose stdin/stdout carry the same
//! requests and answers through `engine::EngineDriver` (its mailbox is
//! then only its working folder).
//!
//! Owns: starting a spawned bot (working directory = its mailbox,
//! `TOURNAMENT_MAILBOX` / `TOURNAMENT_ID`, `{mailbox}` / `{id}` filled, no
//! shell), reusing it across games, restarting it when it exited, and
//! ending it (TERM, grace, KILL). How messages reach the running process
//! — its mailbox's files, the pipe it took, an engine's lines — is one
//! value, `link::Link`: never two at once. Knows nothing of Othello: the
//! referee decides what to send and what an answer means.

mod link;
mod output;
pub use output::LIBRARY_FALLBACK;
pub mod process;
mod spec;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use output::{BotOutput, MAX_LINES_PER_GAME, TAIL_LINES};
pub use process::{become_subreaper, ExitInfo, ProcessTree};
pub use spec::{
    absolute_anywhere, fit_process_limits, install_hint, mailbox_as_seen, Launch, PlayerSpec,
    Restart, WorkDir, BUILTINS,
};

use crate::engine::{Engine, EngineDriver, LineLink, LineLog};
use crate::mailbox::{
    instance_id, mailbox_dir, AnswerError, ClearError, Mailbox, MailboxError, WriteAccess,
};
use crate::protocol::Request;
use crate::sandbox::{self, Confinement, Policy, Warden};
use link::{engine_answer, BotEnds, Link, OfferedPipe};
use mailbox_protocol::pipe;
use mailbox_protocol::{Message, REFEREE};

/// How long a bot gets between TERM and KILL.
pub const GRACE: Duration = Duration::from_millis(500);

/// Why an instance could not be started, by whose failure it is: the
/// player's (its program cannot be run as configured) or the board's (its
/// mailbox could not be readied). The exit status follows the kind
/// (`From<StartError> for HarnessError`).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The player's program cannot be run as configured: not found, no
    /// interpreter, its sandbox or scratch folder not made, the spawn or
    /// its engine's pipes failed. The words say what to do.
    #[error("{0}")]
    Player(String),
    /// The machine refused the referee a process or a thread for it (the
    /// user's process limit, memory) for longer than
    /// [`sandbox::MACHINE_PATIENCE`]: not the player's doing.
    #[error("{0}")]
    MachineExhausted(String),
    /// Its mailbox could not be emptied for the new process: the board is
    /// unwritable, or no longer this referee's. (The field is not called
    /// `source`: the message already quotes it.)
    #[error("cannot clear mailbox of {id}: {error}")]
    Mailbox { id: String, error: ClearError },
}

/// Whether starting a process failed for want of the machine's resources
/// (the user's process limit, memory), not because of the program.
fn machine_refused(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::OutOfMemory
    ) || e.raw_os_error() == Some(libc::EAGAIN)
        || e.raw_os_error() == Some(libc::ENOMEM)
}

/// One running copy of a player, with its own mailbox.
pub struct Instance {
    spec: Arc<PlayerSpec>,
    id: String,
    mailbox: Mailbox,
    /// What every write to the mailbox goes through: the board lock's
    /// proof, or an unshared board's.
    access: WriteAccess,
    seq: u64,
    process: Option<ProcessTree>,
    output: Arc<BotOutput>,
    starts: u32,
    started_at: Option<Instant>,
    /// The sandbox's warden of the running process, if sandboxed.
    warden: Option<Warden>,
    /// The sandboxed process's scratch folder (its `TMPDIR`), user id and
    /// control group, while it runs.
    confinement: Option<Confinement>,
    /// Why the warden could not start the running process's program, as
    /// it said at once.
    start_failure: Option<String>,
    /// The thread reading the process's stderr (done once it ended).
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    /// When the last message was written.
    sent_at: Option<Instant>,
    /// The last message was waited for (or none was sent).
    awaited: bool,
    /// How long the bot could run since its folders were last measured.
    ran_unmeasured: Duration,
    /// How messages reach the running process (PROTOCOL.md, "The pipe";
    /// an engine's stdin/stdout).
    link: Link,
}

/// How messages reach a bot (PROTOCOL.md, "The pipe").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `in.txt` and `out.txt` in its mailbox.
    Files,
    /// The pipe it was offered and took.
    Pipe,
}

/// How long the answer to a first message never waited for is waited for
/// before the next message, while the pipe's offer is open.
const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// How long an engine's answers owed from its last game are awaited
/// before its next game, before it is started again instead.
const ENGINE_SETTLE: Duration = Duration::from_secs(2);

/// A sandboxed bot's folders are measured after an answer once it has had
/// this much time to write since the last look (a look costs a dozen
/// system calls; a bot writes at most a few MiB per millisecond).
const MEASURE_AFTER: Duration = Duration::from_millis(5);

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Instance({})", self.id)
    }
}

impl Instance {
    /// Binds instance `k` of `spec` to its mailbox on `board`, a folder of
    /// the caller's own that no other referee knows (check-bot's temporary
    /// board, the benchmark's, tests): its writes are guarded by no lock
    /// ([`WriteAccess::unshared`]). A tournament's board: [`Instance::on`].
    pub fn new(spec: Arc<PlayerSpec>, board: &Path, k: u32) -> Result<Instance, MailboxError> {
        Instance::on(spec, &WriteAccess::unshared(board), k)
    }

    /// Binds instance `k` of `spec` (ignored for a waiting player, which has
    /// exactly one mailbox, `players/<name>/`) to its mailbox on the board
    /// of `access`; every write to the mailbox asks `access` first.
    pub fn on(
        spec: Arc<PlayerSpec>,
        access: &WriteAccess,
        k: u32,
    ) -> Result<Instance, MailboxError> {
        let slot = (!spec.is_waiting()).then_some(k);
        let id = instance_id(&spec.name, slot);
        let mailbox = Mailbox::open(access, &mailbox_dir(access.board(), &spec.name, slot), &id)?;
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
            access: access.clone(),
            seq,
            process: None,
            starts: 0,
            started_at: None,
            warden: None,
            confinement: None,
            start_failure: None,
            stderr_reader: None,
            sent_at: None,
            awaited: true,
            ran_unmeasured: Duration::ZERO,
            link: Link::Files,
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

    /// What writes to its mailbox go through (the board lock's proof).
    pub fn access(&self) -> &WriteAccess {
        &self.access
    }

    /// The mailbox folder as the bot sees it: under the player's
    /// `board-as` if it has one (another mount of the share, another
    /// machine), else the referee's own path.
    pub fn mailbox_as_seen(&self) -> String {
        match &self.spec.board_as {
            Some(root) => mailbox_as_seen(root, &self.id),
            None => self.mailbox.dir().display().to_string(),
        }
    }

    /// The seq of the last message written to the bot.
    pub fn seq(&self) -> u64 {
        self.seq
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

    /// The last stdout lines of the current game (a bot answers in
    /// out.txt; check-bot shows these to one that printed its answer).
    pub fn stdout_tail(&self) -> Vec<String> {
        self.output.stdout_tail()
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
                if self.settle_engine() {
                    return Ok(false);
                }
                tracing::info!(bot = %self.id, "its answers owed from its last game did not come; starting it again");
            } else {
                tracing::debug!(bot = %self.id, "process had exited; starting a new one");
            }
            self.stop(Duration::ZERO);
        }
        self.start_patiently()?;
        Ok(true)
    }

    /// An engine's answers owed from a game that ended before they were
    /// read (its opponent did not start: its set-up commands' answers are
    /// still on its pipe) are read now, for up to [`ENGINE_SETTLE`], so
    /// none is taken for an answer of the next game. False if they did not
    /// come: the engine is started again rather than charged with it.
    fn settle_engine(&mut self) -> bool {
        if !matches!(self.link, Link::Engine(_)) {
            return true;
        }
        self.thaw();
        let settled = match &mut self.link {
            Link::Engine(e) => e.settle(Instant::now() + ENGINE_SETTLE),
            _ => true,
        };
        self.freeze();
        settled
    }

    /// Starts the process; while the machine refuses a process or a
    /// thread for it (another program holds the user's limit), tries
    /// again for up to [`sandbox::MACHINE_PATIENCE`].
    fn start_patiently(&mut self) -> Result<(), StartError> {
        let give_up = Instant::now() + sandbox::MACHINE_PATIENCE;
        let mut pause = Duration::from_millis(20);
        loop {
            match self.start() {
                Err(StartError::MachineExhausted(why)) if Instant::now() < give_up => {
                    tracing::warn!(bot = %self.id, "{why}; trying again");
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                other => return other,
            }
        }
    }

    fn start(&mut self) -> Result<(), StartError> {
        let argv = self.spec.resolve().map_err(StartError::Player)?;
        self.mailbox
            .clear(&self.access)
            .map_err(|error| StartError::Mailbox {
                id: self.id.clone(),
                error,
            })?;
        self.seq = 0;
        self.start_failure = None;
        // The bot may see the board under another path (another mount of
        // the same share): it is started there and told that path.
        let seen = PathBuf::from(self.mailbox_as_seen());
        let dir = seen.display().to_string();
        let fill = |s: &str| s.replace("{mailbox}", &dir).replace("{id}", &self.id);
        let program = fill(&argv[0]);
        let args: Vec<String> = argv[1..].iter().map(|a| fill(a)).collect();
        let sandboxed = self.spec.sandbox.enabled && matches!(self.spec.launch, Launch::Command(_));
        let (offer, bot_ends) = self.offer_pipe()?.unzip();
        let (mut cmd, report, child_ends) = if sandboxed {
            let (mut policy, confinement) = self.policy(&seen, &program, &args)?;
            policy.pipe = bot_ends.is_some();
            let ends = bot_ends.as_ref().map(|(r, w)| (r, w));
            let wrapped = sandbox::wrap(&program, &args, &policy, self.spec.sandbox.ponder, ends)
                .map_err(|e| {
                StartError::Player(format!(
                    "player `{}`: cannot make its sandbox: {e}",
                    self.spec.name
                ))
            })?;
            let mut cmd = wrapped.command;
            cmd.env("TMPDIR", confinement.scratch.path())
                .env("HOME", confinement.scratch.path());
            self.confinement = Some(confinement);
            self.warden = Some(wrapped.warden);
            (cmd, Some(wrapped.report), Some(wrapped.child_ends))
        } else {
            let mut cmd = Command::new(&program);
            cmd.args(&args);
            #[cfg(unix)]
            if let Some((reads, writes)) = &bot_ends {
                use std::os::fd::AsRawFd;
                sandbox::place_fds(
                    &mut cmd,
                    vec![
                        (reads.as_raw_fd(), pipe::BOT_READS_FD),
                        (writes.as_raw_fd(), pipe::BOT_WRITES_FD),
                    ],
                );
            }
            (cmd, None, None)
        };
        // Its own folder (`dir`) if it has one, else its mailbox.
        let cwd = self
            .spec
            .workdir
            .as_ref()
            .map_or(seen.as_path(), |w| &w.path);
        cmd.current_dir(cwd)
            .env("TOURNAMENT_MAILBOX", &dir)
            .env("TOURNAMENT_ID", &self.id);
        if offer.is_some() {
            cmd.env(pipe::PIPE_ENV, pipe::offer());
        } else {
            cmd.env_remove(pipe::PIPE_ENV);
        }
        let bell = self.mailbox.doorbell();
        let is_engine = self.spec.protocol.is_engine();
        // An engine's link hears of the exit too: its output may outlive it.
        let (exited, exit_heard) = crossbeam_channel::bounded(1);
        // The warden's first word on how the bot's start went.
        let first_word = report.as_ref().and_then(|r| r.try_clone().ok());
        let spawned = process::spawn(&mut cmd, is_engine, report, move |_| {
            bell.ring();
            let _ = exited.try_send(());
        });
        drop(child_ends);
        drop(bot_ends);
        let (tree, mut child) = spawned.map_err(|e| {
            if machine_refused(&e) {
                return StartError::MachineExhausted(format!(
                    "the machine refused the referee a process or thread for player `{}`: {e}",
                    self.spec.name
                ));
            }
            let hint = match e.kind() {
                std::io::ErrorKind::PermissionDenied => {
                    format!(": {}", sandbox::not_executable_hint(&argv[0]))
                }
                _ => String::new(),
            };
            StartError::Player(format!(
                "player `{}`: cannot start `{}`: {e}{hint}",
                self.spec.name,
                argv.join(" ")
            ))
        })?;
        if let Some(pipe) = &first_word {
            let deadline = Instant::now() + Duration::from_secs(5);
            match sandbox::await_start(pipe, deadline) {
                sandbox::Started::Exhausted(why) => {
                    tree.terminate(Duration::ZERO);
                    self.warden = None;
                    self.confinement = None;
                    return Err(StartError::MachineExhausted(format!(
                        "the machine refused a process for player `{}`: {why}",
                        self.spec.name
                    )));
                }
                // Said when it is seen to have ended (`start_error`).
                sandbox::Started::Failed(why) => self.start_failure = Some(why),
                sandbox::Started::Yes => {}
            }
        }
        let mut engine = None;
        let readers = (|| -> Result<(), StartError> {
            if is_engine {
                engine = Some(self.engine_driver(&mut child, exit_heard)?);
            } else if let Some(out) = child.stdout.take() {
                self.output
                    .capture("stdout", out)
                    .map_err(|e| self.refused_thread(e))?;
            }
            if let Some(err) = child.stderr.take() {
                self.stderr_reader = Some(
                    self.output
                        .capture("stderr", err)
                        .map_err(|e| self.refused_thread(e))?,
                );
            }
            Ok(())
        })();
        if let Err(e) = readers {
            // Not left running without its readers.
            tree.terminate(Duration::ZERO);
            self.warden = None;
            self.confinement = None;
            return Err(e);
        }
        if let Some(w) = &mut self.warden {
            w.attach(tree.pid);
        }
        tracing::debug!(bot = %self.id, pid = tree.pid, command = %argv.join(" "), "bot started");
        self.process = Some(tree);
        self.link = match (engine, offer) {
            (Some(engine), _) => Link::Engine(Box::new(engine)),
            (None, Some(offer)) => Link::Offered(offer),
            (None, None) => Link::Files,
        };
        self.starts += 1;
        self.started_at = Some(Instant::now());
        Ok(())
    }

    /// A thread the machine would not start for this player's process.
    fn refused_thread(&self, e: std::io::Error) -> StartError {
        StartError::MachineExhausted(format!(
            "the machine refused the referee a thread to read player `{}`: {e}",
            self.spec.name
        ))
    }

    /// A pipe to offer the process about to start, with the bot's ends:
    /// for a mailbox bot the referee starts whose player allows it.
    fn offer_pipe(&self) -> Result<Option<(OfferedPipe, BotEnds)>, StartError> {
        if !self.spec.pipe || self.spec.is_waiting() || self.spec.protocol.is_engine() {
            return Ok(None);
        }
        OfferedPipe::new().map(Some).map_err(|e| {
            StartError::Player(format!(
                "player `{}`: cannot make its pipe: {e}",
                self.spec.name
            ))
        })
    }

    /// How messages reach the running process now: the pipe once it took
    /// the offer, else the files.
    pub fn transport(&self) -> Transport {
        match &self.link {
            Link::Pipe(_) => Transport::Pipe,
            _ => Transport::Files,
        }
    }

    /// The conversation with a just-started engine over its stdin/stdout,
    /// every line into the game log; `exit` says when its process ended.
    fn engine_driver(
        &self,
        child: &mut std::process::Child,
        exit: crossbeam_channel::Receiver<()>,
    ) -> Result<EngineDriver, StartError> {
        let failed = |e: std::io::Error| {
            if machine_refused(&e) {
                return self.refused_thread(e);
            }
            StartError::Player(format!(
                "player `{}`: cannot talk to its engine: {e}",
                self.spec.name
            ))
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(StartError::Player(format!(
                "player `{}`: its engine has no pipes",
                self.spec.name
            )));
        };
        #[cfg(unix)]
        crate::engine::link::set_nonblocking(&stdin).map_err(failed)?;
        let output = Arc::clone(&self.output);
        let log: LineLog = Arc::new(move |d, line| output.protocol_line(d, line));
        let mut link = LineLink::new(stdin, stdout, log).map_err(failed)?;
        link.watch_exit(exit);
        let engine =
            Engine::new(self.spec.protocol, link, self.spec.engine).expect("an engine protocol");
        Ok(EngineDriver::new(engine, &self.spec.name))
    }

    /// The sandbox for a new process whose mailbox the bot sees at
    /// `seen`, running `program args`: its policy, and what it holds
    /// while it runs (scratch folder, user id, control group).
    fn policy(
        &self,
        seen: &Path,
        program: &str,
        args: &[String],
    ) -> Result<(Policy, Confinement), StartError> {
        if let Some(why) = &sandbox::protections().exhausted {
            return Err(StartError::MachineExhausted(format!(
                "the machine refused the referee a process to look at its sandbox: {why}"
            )));
        }
        let argv: Vec<String> = std::iter::once(program.to_string())
            .chain(args.iter().cloned())
            .collect();
        let (policy, confinement) = sandbox::confine(
            &self.id,
            &self.spec.sandbox,
            self.mailbox.dir(),
            seen,
            &argv,
        )
        .map_err(StartError::Player)?;
        if let Some(u) = confinement.user {
            sandbox::give_to(&self.mailbox.dir().join(crate::mailbox::OUT_FILE), u);
        }
        let mut policy = policy;
        if let Some(dir) = &self.spec.workdir {
            self.open_workdir(dir, confinement.user, &mut policy)?;
        }
        Ok((policy, confinement))
    }

    /// Lets the sandbox's rules read the player's `dir` (and write below
    /// it, with `dir-writable`); when the bot runs as a user of its own,
    /// that user must reach it by the folder's own permissions, which the
    /// referee never changes: said before it starts, not as its failure.
    fn open_workdir(
        &self,
        dir: &WorkDir,
        user: Option<(u32, u32)>,
        policy: &mut Policy,
    ) -> Result<(), StartError> {
        if let Some(u) = user {
            let blocked = sandbox::unreachable_for(&dir.path, u, true)
                .map(|at| (at, "read", "chmod o+rx"))
                .or_else(|| {
                    (dir.writable && !sandbox::writable_for(&dir.path, u))
                        .then(|| (dir.path.display().to_string(), "write in", "chmod o+rwx"))
                });
            if let Some((at, what, fix)) = blocked {
                return Err(StartError::Player(format!(
                    "player `{}`: its bot runs as user id {} (SECURITY.md), which cannot {what} its dir {}: blocked at {at} ({fix} on that folder, or give it to that user)",
                    self.spec.name,
                    u.0,
                    dir.path.display()
                )));
            }
        }
        policy.readable.push(dir.path.clone());
        if dir.writable {
            policy.writable.push(dir.path.clone());
        }
        Ok(())
    }

    /// Why the sandbox could not start the bot's program, once that is known.
    pub fn start_error(&self) -> Option<String> {
        let p = self.process.as_ref()?;
        p.exit.get()?;
        self.start_failure
            .clone()
            .or_else(|| p.exit.report()?.start_error)
    }

    /// Which of its limits the bot went over, if any, in words for the
    /// game log: what it wrote (checked while it is stopped) or how it
    /// ended (out of memory, a file too large).
    pub fn limit_breach(&self) -> Option<(sandbox::Limit, String)> {
        self.warden.as_ref()?;
        let settings = &self.spec.sandbox;
        if self.exit_info().is_some() {
            // Its last words may still be in the pipe.
            let until = Instant::now() + Duration::from_millis(300);
            while self
                .stderr_reader
                .as_ref()
                .is_some_and(|t| !t.is_finished())
                && Instant::now() < until
            {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let exit = self.process.as_ref().and_then(|p| {
            p.exit
                .get()
                .map(|info| (info, p.exit.report().unwrap_or_default()))
        });
        let written = [
            self.mailbox.dir(),
            self.confinement
                .as_ref()
                .map_or(self.mailbox.dir(), |c| c.scratch.path()),
        ];
        let oom_killed = self.confinement.as_ref().is_some_and(|c| c.oom_killed());
        sandbox::breach(
            settings,
            exit.as_ref(),
            &self.stderr_tail(),
            &written,
            oom_killed,
        )
    }

    /// Stops the sandboxed bot until its next message (not once it ended:
    /// its pids are no longer its own).
    fn freeze(&mut self) {
        if self.is_running() {
            if let Some(w) = &mut self.warden {
                w.freeze();
            }
        }
    }

    /// Lets the sandboxed bot run.
    fn thaw(&mut self) {
        if self.is_running() {
            if let Some(w) = &mut self.warden {
                w.thaw();
            }
        }
    }

    /// Every ply of the game so far, before a TURN: an engine's driver
    /// tells the engine the moves it has not heard; files and the pipe
    /// carry the position only.
    pub fn game_so_far(&mut self, plies: &[crate::engine::Ply]) {
        if let Link::Engine(engine) = &mut self.link {
            engine.game_so_far(plies);
        }
    }

    /// Writes the next message to the bot (an engine is handed the
    /// request itself); returns its seq.
    pub fn send(&mut self, request: &Request) -> Result<u64, AnswerError> {
        if !self.awaited {
            self.pass_over_unanswered();
        }
        self.awaited = false;
        self.seq += 1;
        let text = request.encode();
        tracing::trace!(bot = %self.id, seq = self.seq, "→ {text}");
        self.sent_at = Some(Instant::now());
        if let Link::Engine(_) = self.link {
            self.thaw();
            if let Link::Engine(engine) = &mut self.link {
                engine.send(request);
            }
            return Ok(self.seq);
        }
        let sent = match &mut self.link {
            Link::Pipe(p) => p.send(&Message::new(REFEREE, &self.id, self.seq, &text)),
            _ => self.mailbox.send(&self.access, self.seq, &text),
        };
        // Let go once the message is there: the bot wakes once, to a
        // message it can read (its clock started before the write).
        self.thaw();
        sent?;
        Ok(self.seq)
    }

    /// Waits for the answer to the last message until `deadline`. Ends
    /// early, with the exit status, if the bot's process exits.
    pub fn wait(&mut self, deadline: Instant) -> Result<String, AnswerError> {
        self.awaited = true;
        if let Link::Engine(_) = self.link {
            return self.wait_engine(deadline);
        }
        let process = self.process.as_ref();
        let mut exited = || {
            process
                .and_then(|p| p.exit.get())
                .map(|info| format!("the bot's process ended ({info})"))
        };
        let mut answer = match &mut self.link {
            Link::Pipe(p) => p.answer(&self.id, self.seq, deadline, process, &mut exited),
            _ => {
                let answer = self.mailbox.wait_answer(self.seq, deadline, &mut exited);
                if answer.is_ok() {
                    self.settle_offer();
                }
                answer
            }
        };
        self.freeze();
        self.ran_unmeasured += self.sent_at.map_or(Duration::ZERO, |t| t.elapsed());
        if answer.is_ok() && self.ran_unmeasured >= MEASURE_AFTER {
            self.ran_unmeasured = Duration::ZERO;
            if let Some((limit, detail)) = self.limit_breach() {
                answer = Err(AnswerError::OverLimit { limit, detail });
            }
        }
        match &answer {
            Ok(text) => tracing::trace!(bot = %self.id, seq = self.seq, "← {text}"),
            Err(e) => tracing::trace!(bot = %self.id, seq = self.seq, "← {e}"),
        }
        answer
    }

    /// Before a message that follows one never waited for: on the pipe,
    /// its answer is to be passed over; with the offer still open, the
    /// answer to that first message decides the way, so it is waited for
    /// (briefly: the bot may be slow to start, or silent), and an offer
    /// still open after that is withdrawn (a bot that says `pipe` later
    /// finds the pipe closed and keeps to the files, as the libraries do).
    fn pass_over_unanswered(&mut self) {
        match &mut self.link {
            Link::Pipe(p) => p.pass_over(self.seq),
            Link::Offered(_) => {
                let _ = self.wait(Instant::now() + SETTLE_WAIT);
                if let Link::Offered(_) = self.link {
                    tracing::debug!(bot = %self.id, "offer withdrawn: its first answer did not come");
                    self.link = Link::Files;
                }
            }
            Link::Files | Link::Engine(_) => {}
        }
    }

    /// After an answer in `out.txt`: a bot that was offered the pipe took
    /// it if it wrote the acceptance there first; otherwise the offer is
    /// withdrawn (the pipe closed).
    fn settle_offer(&mut self) {
        if !matches!(self.link, Link::Offered(_)) {
            return;
        }
        let Link::Offered(mut p) = std::mem::replace(&mut self.link, Link::Files) else {
            unreachable!("just seen on offer");
        };
        if p.accepted() {
            tracing::debug!(bot = %self.id, "took the pipe");
            self.link = Link::Pipe(p);
        } else {
            tracing::debug!(bot = %self.id, "keeps to the files");
        }
    }

    /// An engine's answer ([`engine_answer`]), its limits looked at.
    fn wait_engine(&mut self, deadline: Instant) -> Result<String, AnswerError> {
        let Link::Engine(engine) = &mut self.link else {
            unreachable!("only an engine's link is waited on here");
        };
        let answer = engine.wait(deadline);
        self.freeze();
        if let Err(e) = &answer {
            tracing::debug!(bot = %self.id, "engine: {e}");
        }
        let process = self.process.as_ref();
        let mut answer = engine_answer(answer, || {
            process.and_then(|p| p.exit.wait(Duration::from_millis(300)))
        });
        if answer.is_ok() {
            if let Some((limit, detail)) = self.limit_breach() {
                answer = Err(AnswerError::OverLimit { limit, detail });
            }
        }
        answer
    }

    /// Sends `request` and waits for the answer until `deadline`.
    pub fn exchange(
        &mut self,
        request: &Request,
        deadline: Instant,
    ) -> Result<String, AnswerError> {
        self.send(request)?;
        self.wait(deadline)
    }

    /// True if a spawned process is running.
    pub fn is_running(&self) -> bool {
        self.process.as_ref().is_some_and(|p| !p.has_exited())
    }

    /// Ends the process: TERM to its group, up to `grace`, then KILL.
    /// Nothing of its process group survives this.
    pub fn stop(&mut self, grace: Duration) -> Option<ExitInfo> {
        self.thaw();
        if let Link::Engine(mut engine) = std::mem::replace(&mut self.link, Link::Files) {
            // Asked to leave first; TERM follows if it does not.
            engine.quit();
            if let Some(p) = &self.process {
                p.exit.wait(grace.min(Duration::from_millis(200)));
            }
        }
        self.link = Link::Files;
        let tree = self.process.take()?;
        let info = tree.terminate(grace);
        self.warden = None;
        self.confinement = None;
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
            let _ = self.mailbox.clear(&self.access);
        }
    }
}
