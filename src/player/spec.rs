//! What a player is: a command to start, a built-in bot, or a bot that
//! someone starts by hand ("waiting"). Resolves programs and paths, and says
//! clearly what to install when a program is missing.
//!
//! Owns command resolution and availability checks, and what the sandbox
//! promises for a run's players (`sandbox::Statement::of`); starts
//! nothing.

use std::path::{Path, PathBuf};

use crate::sandbox::{not_executable_hint, Level, Protections, Statement};

/// The built-in bots, spawned as `tournament bot NAME`.
pub const BUILTINS: [&str; 3] = ["random", "greedy", "weighted"];

/// How a player gets to the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launch {
    /// A program and its arguments (no shell).
    Command(Vec<String>),
    /// One of [`BUILTINS`].
    Builtin(String),
    /// Started by hand on `players/<name>/`, maybe on another machine;
    /// `command` is how its owner starts it there (`hand-command`), shown
    /// in the referee's messages and never run by it.
    Waiting { command: Option<String> },
    /// A person at the referee's terminal (`human = true`): no program,
    /// so never started, sandboxed or stopped; `move_ms` per move, or a
    /// game clock.
    Person {
        move_ms: u64,
        clock: Option<crate::time_control::GameClock>,
    },
}

/// When a spawned bot process is replaced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    /// One process serves game after game (restarted only if it exits or forfeits).
    #[default]
    Reuse,
    /// A fresh process for every game.
    PerGame,
}

/// A player's own working folder (`dir`): where its process starts, so an
/// engine finds its data (NTest's `coefficients/`, Edax's `data/`) and
/// writes its book or log there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkDir {
    /// Absolute, links resolved (the sandbox's rules name real paths).
    pub path: PathBuf,
    /// `dir-writable = true`: the sandbox lets the bot write below it (it
    /// may always read it).
    pub writable: bool,
}

#[derive(Clone, Debug)]
pub struct PlayerSpec {
    pub name: String,
    pub launch: Launch,
    pub restart: Restart,
    /// The folder relative paths in the command resolve against (the
    /// config file's folder).
    pub base_dir: PathBuf,
    /// Seed given to built-in bots.
    pub seed: u64,
    /// The board folder as this bot sees it, when that differs from the
    /// referee's path (the same share mounted elsewhere): a spawned bot is
    /// started in `<board_as>/players/<id>/` and told that path; for a bot
    /// started by hand it is the path the referee's messages show (it may
    /// be another machine's path, e.g. `Z:\class\board`).
    pub board_as: Option<PathBuf>,
    /// How the bot is sandboxed (spawned commands only; built-ins are part
    /// of the referee and waiting bots are started by someone else).
    pub sandbox: crate::sandbox::Settings,
    /// How it talks to the referee: a mailbox, or (a spawned command only)
    /// GTP or NBoard over stdin/stdout.
    pub protocol: crate::engine::Protocol,
    /// What an engine is told beyond the game (NBoard's `set depth`).
    pub engine: crate::engine::EngineSettings,
    /// Offer the bot a pipe beside its mailbox (PROTOCOL.md, "The pipe"):
    /// only a mailbox bot the referee starts is offered one.
    pub pipe: bool,
    /// Where its process starts (`dir`); `None`: in its mailbox.
    pub workdir: Option<WorkDir>,
}

/// The Debian package that provides a well-known interpreter.
pub fn install_hint(program: &str) -> Option<&'static str> {
    let base = Path::new(program).file_name()?.to_str()?;
    Some(match base {
        "ruby" => "apt-get install ruby",
        "yabasic" => "apt-get install yabasic",
        "bwbasic" => "apt-get install bwbasic",
        "node" | "nodejs" => "apt-get install nodejs",
        "python3" | "python" => "apt-get install python3",
        "perl" => "apt-get install perl",
        "java" => "apt-get install default-jre",
        "gtp-rhino" => "apt-get install grhino",
        _ => return None,
    })
}

/// Whether a path is spelled the Windows way (`Z:\…`, `Z:/…`, `\\server\…`).
fn looks_like_windows(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with("\\\\")
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && (b[2] == b'\\' || b[2] == b'/'))
}

/// Whether a board path given for another machine is absolute there
/// (Unix or Windows spelling): it is then kept as written.
pub fn absolute_anywhere(path: &str) -> bool {
    path.starts_with('/') || looks_like_windows(path)
}

/// The mailbox folder `players/<id>` of a board at `board` (a path as the
/// bot's machine spells it), joined with that machine's separator.
pub fn mailbox_as_seen(board: &Path, id: &str) -> String {
    let text = board.display().to_string();
    if looks_like_windows(&text) {
        format!(
            "{}\\{}\\{id}",
            text.trim_end_matches(['\\', '/']),
            crate::mailbox::PLAYERS_DIR
        )
    } else {
        board
            .join(crate::mailbox::PLAYERS_DIR)
            .join(id)
            .display()
            .to_string()
    }
}

/// Where Debian puts games, searched after PATH.
pub const GAMES_DIR: &str = "/usr/games";

/// The first `program` on PATH (then in [`GAMES_DIR`]); for a bot that runs as a user of its own
/// (`runs_as`), the first that user can reach, so a root's own
/// interpreters (pyenv or nvm under /root) give way to the system's. A
/// program skipped that way is said once, in the log.
fn find_on_path(program: &str, runs_as: Option<(u32, u32)>) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    // Debian installs games (gtp-rhino) in /usr/games, which is not on
    // every PATH (not on root's, nor in most service environments).
    let mut found = std::env::split_paths(&path)
        .chain([PathBuf::from(GAMES_DIR)])
        .map(|dir| dir.join(program))
        .filter(|p| is_executable(p));
    let first = found.next()?;
    let Some(user) = runs_as else {
        return Some(first);
    };
    if crate::sandbox::unreachable_for(&first, user, true).is_none() {
        return Some(first);
    }
    match found.find(|p| crate::sandbox::unreachable_for(p, user, true).is_none()) {
        Some(other) => {
            static SAID: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
            let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
            if !said.contains(&first) {
                said.push(first.clone());
                tracing::info!(
                    "`{program}`: {} is out of reach of the bots' user (uid {}); bots use {}",
                    first.display(),
                    user.0,
                    other.display()
                );
            }
            Some(other)
        }
        // The reach check names where it is blocked.
        None => Some(first),
    }
}

fn is_executable(p: &Path) -> bool {
    match std::fs::metadata(p) {
        #[cfg(unix)]
        Ok(m) => {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        Ok(m) => m.is_file(),
        Err(_) => false,
    }
}

impl PlayerSpec {
    /// A built-in bot as a player.
    pub fn builtin(name: &str, seed: u64) -> PlayerSpec {
        PlayerSpec {
            name: name.to_string(),
            launch: Launch::Builtin(name.to_string()),
            restart: Restart::Reuse,
            base_dir: PathBuf::from("."),
            seed,
            board_as: None,
            sandbox: crate::sandbox::Settings::default(),
            protocol: crate::engine::Protocol::Mailbox,
            engine: Default::default(),
            pipe: true,
            workdir: None,
        }
    }

    pub fn is_waiting(&self) -> bool {
        matches!(self.launch, Launch::Waiting { .. })
    }

    /// A person at the referee's terminal (`human = true`).
    pub fn is_person(&self) -> bool {
        matches!(self.launch, Launch::Person { .. })
    }

    /// A command to copy for starting this bot by hand in `mailbox` (as its
    /// machine spells it): `cd` into the mailbox (every library, bwBASIC
    /// too, works in its current folder), then its `hand-command` if the
    /// config gives one, with its relative paths made absolute when they
    /// name files of the config's folder (after the `cd` they would not be
    /// found).
    pub fn start_by_hand(&self, mailbox: &str) -> String {
        let cd = if looks_like_windows(mailbox) {
            format!("cd /d \"{mailbox}\"")
        } else {
            format!("cd {}", shell_words::quote(mailbox))
        };
        match &self.launch {
            Launch::Waiting {
                command: Some(command),
            } => format!("{cd} && {}", self.hand_command_from_anywhere(command)),
            _ => format!("{cd} && <the bot's command, e.g. python3 mybot.py>"),
        }
    }

    /// `hand-command` with each word that names a file or folder of the
    /// config's folder by a relative path given as an absolute one. Only on
    /// the referee's machine (no `board-as`): another machine's files are
    /// not the config folder's, and its command is shown as written.
    fn hand_command_from_anywhere(&self, command: &str) -> String {
        if self.board_as.is_some() {
            return command.to_string();
        }
        let Ok(words) = shell_words::split(command) else {
            return command.to_string();
        };
        let mut changed = false;
        let words: Vec<String> = words
            .into_iter()
            .map(|word| {
                let path = Path::new(&word);
                if word.is_empty() || word.starts_with(['-', '~']) || path.is_absolute() {
                    return word;
                }
                let here = self.base_dir.join(path);
                match (here.exists(), std::path::absolute(&here)) {
                    (true, Ok(full)) => {
                        changed = true;
                        full.display().to_string()
                    }
                    _ => word,
                }
            })
            .collect();
        if changed {
            shell_words::join(words)
        } else {
            command.to_string()
        }
    }

    /// The user this player's bot runs as when it is not the referee's
    /// (a sandboxed bot under a root referee).
    fn runs_as(&self) -> Option<(u32, u32)> {
        if !self.sandbox.enabled || !crate::sandbox::is_root() {
            return None;
        }
        crate::sandbox::user_under_root(&self.name, &self.sandbox)
            .ok()
            .flatten()
    }

    /// The program and arguments to run, paths resolved, placeholders not
    /// yet filled. Errors name the player and the command, and what to install.
    pub fn resolve(&self) -> Result<Vec<String>, String> {
        let argv = match &self.launch {
            Launch::Waiting { .. } | Launch::Person { .. } => return Ok(vec![]),
            Launch::Builtin(name) => {
                let exe = crate::program::path()
                    .map_err(|e| format!("cannot find the tournament binary: {e}"))?;
                return Ok(vec![
                    exe.display().to_string(),
                    "bot".into(),
                    name.clone(),
                    "--seed".into(),
                    self.seed.to_string(),
                ]);
            }
            Launch::Command(argv) => argv,
        };
        let shown = argv.join(" ");
        let Some(program) = argv.first() else {
            return Err(format!("player `{}`: the command is empty", self.name));
        };
        let resolved = if program.contains('/') || program.contains('\\') {
            let p = if Path::new(program).is_absolute() {
                PathBuf::from(program)
            } else {
                self.base_dir.join(program)
            };
            if !p.exists() {
                return Err(format!(
                    "player `{}`: cannot start `{shown}`: {} does not exist",
                    self.name,
                    p.display()
                ));
            }
            if p.is_dir() {
                return Err(format!(
                    "player `{}`: cannot start `{shown}`: {} is a folder, not a program",
                    self.name,
                    p.display()
                ));
            }
            if !is_executable(&p) {
                return Err(format!(
                    "player `{}`: cannot start `{shown}`: {} is not an executable file: {}",
                    self.name,
                    p.display(),
                    not_executable_hint(program)
                ));
            }
            p
        } else {
            find_on_path(program, self.runs_as()).ok_or_else(|| {
                let hint = install_hint(program)
                    .map(|h| format!(" (install it: {h})"))
                    .unwrap_or_default();
                format!(
                    "player `{}`: cannot start `{shown}`: program `{program}` is not on PATH{hint}",
                    self.name
                )
            })?
        };
        let mut out = vec![resolved.display().to_string()];
        for arg in &argv[1..] {
            let candidate = self.base_dir.join(arg);
            if !arg.contains('{') && Path::new(arg).is_relative() && candidate.exists() {
                out.push(candidate.display().to_string());
            } else {
                out.push(arg.clone());
            }
        }
        // A script argument that looks like a file but is missing is the
        // second most common mistake; say so before the interpreter does.
        if let Some(script) = argv.get(1) {
            let looks_like_file = [".rb", ".py", ".js", ".yab", ".bas", ".sh", ".pl"]
                .iter()
                .any(|ext| script.ends_with(ext));
            if looks_like_file && !script.contains('{') {
                let p = if Path::new(script).is_absolute() {
                    PathBuf::from(script)
                } else {
                    self.base_dir.join(script)
                };
                if !p.exists() {
                    return Err(format!(
                        "player `{}`: cannot start `{shown}`: {} does not exist",
                        self.name,
                        p.display()
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The command as a user wrote it, for messages.
    pub fn describe(&self) -> String {
        match &self.launch {
            Launch::Command(argv) => argv.join(" "),
            Launch::Builtin(name) => format!("built-in {name}"),
            Launch::Waiting { .. } => "started by hand (wait = true)".into(),
            Launch::Person { .. } => "a person at the referee's terminal (human = true)".into(),
        }
    }
}

/// What the sandbox promises for a run's players: computed here, where
/// players are known, so the sandbox needs to know nothing of them.
impl Statement {
    /// What a run with these players gets on this machine. Built-in bots
    /// are part of the referee; bots started by hand are not sandboxed by
    /// it (SECURITY.md says what protects them).
    pub fn of(players: &[PlayerSpec], protections: &Protections) -> Statement {
        let mut why = Vec::new();
        let (mut sandboxed, mut others) = (0, 0);
        for p in players {
            match &p.launch {
                // No program: nothing to sandbox.
                Launch::Builtin(_) | Launch::Person { .. } => {}
                Launch::Waiting { .. } => {
                    others += 1;
                    why.push(format!(
                        "{} is started by hand (not sandboxed by the referee)",
                        p.name
                    ));
                }
                Launch::Command(_) if !p.sandbox.enabled => {
                    others += 1;
                    why.push(format!("{} has sandbox = false", p.name));
                }
                Launch::Command(_) => sandboxed += 1,
            }
        }
        let missing = protections.missing();
        if sandboxed > 0 {
            why.extend(missing.iter().cloned());
        }
        let level = if others > 0 && sandboxed == 0 {
            Level::None
        } else if others > 0 || (sandboxed > 0 && !missing.is_empty()) {
            Level::Partial
        } else {
            Level::Full
        };
        Statement { level, why }
    }
}

/// Lowers the `processes` of each sandboxed player so that every bot
/// that can run at once (`at_once`) fits in the referee user's own
/// process limit, with room left for the referee's threads, when bots
/// count against that limit (a referee that is not root: each bot's user
/// namespace counts in the referee's user). Said once when lowered.
pub fn fit_process_limits(players: &mut [PlayerSpec], at_once: usize) {
    let Some((limit, used)) = crate::sandbox::shared_process_budget() else {
        return;
    };
    let at_once = at_once.max(1) as u64;
    // The referee: a few threads per bot (its exit, stdout, stderr) and
    // per game, and some to spare.
    let reserve = 32 + 4 * at_once;
    let per_bot = limit.saturating_sub(used + reserve) / at_once;
    let mut lowered = false;
    for p in players.iter_mut() {
        if matches!(p.launch, Launch::Command(_))
            && p.sandbox.enabled
            && p.sandbox.processes > per_bot
        {
            p.sandbox.processes = per_bot.max(1);
            lowered = true;
        }
    }
    if lowered {
        tracing::warn!(
            "the referee's user may run {limit} processes (ulimit -u) and runs {used}: each of the {at_once} bots that may run at once gets at most {} processes and threads (processes = ...), so that none can take the referee's{}",
            per_bot.max(1),
            if per_bot < 16 {
                "; too few for some interpreters (node starts about 10 threads): raise ulimit -u or run the referee as root"
            } else {
                ""
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(argv: &[&str], base: &Path) -> PlayerSpec {
        PlayerSpec {
            name: "p".into(),
            launch: Launch::Command(argv.iter().map(|s| s.to_string()).collect()),
            restart: Restart::Reuse,
            base_dir: base.to_path_buf(),
            seed: 1,
            board_as: None,
            sandbox: Default::default(),
            protocol: Default::default(),
            engine: Default::default(),
            pipe: true,
            workdir: None,
        }
    }

    #[test]
    fn missing_programs_are_named_with_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let err = spec(&["no-such-interpreter-xyz", "bot.rb"], dir.path())
            .resolve()
            .unwrap_err();
        assert!(
            err.contains("player `p`") && err.contains("no-such-interpreter-xyz"),
            "{err}"
        );
        assert_eq!(install_hint("/usr/bin/ruby"), Some("apt-get install ruby"));
        let err = spec(&["sh", "missing.sh"], dir.path())
            .resolve()
            .unwrap_err();
        assert!(
            err.contains("missing.sh") && err.contains("does not exist"),
            "{err}"
        );
    }

    #[test]
    fn a_bot_started_by_hand_is_shown_its_own_machines_path_and_command() {
        let alice = |command: Option<&str>| PlayerSpec {
            launch: Launch::Waiting {
                command: command.map(String::from),
            },
            ..spec(&[], Path::new("."))
        };
        let unix = mailbox_as_seen(Path::new("/mnt/b/class board"), "alice");
        assert_eq!(unix, "/mnt/b/class board/players/alice");
        assert_eq!(
            alice(Some("python3 alice.py")).start_by_hand(&unix),
            "cd '/mnt/b/class board/players/alice' && python3 alice.py"
        );
        let windows = mailbox_as_seen(Path::new("Z:\\class\\board\\"), "alice");
        assert_eq!(windows, "Z:\\class\\board\\players\\alice");
        assert_eq!(
            alice(None).start_by_hand(&windows),
            "cd /d \"Z:\\class\\board\\players\\alice\" && <the bot's command, e.g. python3 mybot.py>"
        );
        assert!(absolute_anywhere("\\\\server\\share") && absolute_anywhere("/mnt/b"));
        assert!(!absolute_anywhere("board") && !absolute_anywhere("..\\board"));
    }

    #[test]
    fn relative_paths_resolve_against_the_config_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bot.sh"), "").unwrap();
        let argv = spec(&["sh", "bot.sh", "{mailbox}", "-x"], dir.path())
            .resolve()
            .unwrap();
        assert!(argv[0].ends_with("/sh"));
        assert_eq!(argv[1], dir.path().join("bot.sh").display().to_string());
        assert_eq!(&argv[2..], &["{mailbox}", "-x"]);
    }
}
