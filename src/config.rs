//! `tournament.toml`: the tournament's definition, read with serde (kebab-
//! case keys, unknown keys rejected) and checked, with every error naming
//! the file, line, column and key and saying what was expected.
//!
//! Owns parsing and validation; paths in the file resolve against the
//! file's folder. Starts nothing and writes nothing.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::engine::{EngineSettings, Protocol};
use crate::mailbox::{validate_name, DEFAULT_STALE};
use crate::player::{absolute_anywhere, Launch, PlayerSpec, Restart, BUILTINS};
use crate::rating::sprt::{Model, Sprt};
use crate::referee::{Rules, TimeControl};

/// The pairing format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every player against every other.
    #[default]
    RoundRobin,
    /// One player (the first, or `gauntlet-player`) against all others.
    Gauntlet,
    /// `rounds` rounds, each pairing players of equal or nearest score.
    Swiss,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    tournament: RawTournament,
    #[serde(default)]
    time: RawTime,
    #[serde(default)]
    rules: RawRules,
    #[serde(default)]
    openings: RawOpenings,
    #[serde(default)]
    player: Vec<RawPlayer>,
    sprt: Option<Spanned<RawSprt>>,
}

fn five_percent() -> Spanned<f64> {
    Spanned::new(0..0, 0.05)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSprt {
    elo0: f64,
    elo1: Spanned<f64>,
    #[serde(default = "five_percent")]
    alpha: Spanned<f64>,
    #[serde(default = "five_percent")]
    beta: Spanned<f64>,
    #[serde(default = "normalized")]
    model: Model,
}

fn normalized() -> Model {
    Model::Normalized
}

fn default_board() -> Spanned<String> {
    Spanned::new(0..0, "board".into())
}
fn default_results() -> String {
    "results".into()
}
fn one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}
fn eight() -> Spanned<u8> {
    Spanned::new(0..0, 8)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTournament {
    name: String,
    #[serde(default = "default_board")]
    board: Spanned<String>,
    #[serde(default = "default_results")]
    results: String,
    #[serde(default)]
    format: Format,
    #[serde(default)]
    gauntlet_player: Option<Spanned<String>>,
    #[serde(default = "one")]
    games_per_pairing: Spanned<u32>,
    #[serde(default = "one")]
    concurrency: Spanned<u32>,
    #[serde(default = "eight")]
    size: Spanned<u8>,
    #[serde(default)]
    stale_lock_ms: Option<Spanned<u64>>,
    #[serde(default)]
    rounds: Option<Spanned<u32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTime {
    move_ms: Option<Spanned<u64>>,
    startup_ms: Option<Spanned<u64>>,
    bank_ms: Option<u64>,
    wait_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawRules {
    #[serde(default)]
    max_retries: u32,
    #[serde(default)]
    ask_pass: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawOpenings {
    random_plies: Option<Spanned<u32>>,
    #[serde(default)]
    seed: u64,
    file: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPlayer {
    name: Spanned<String>,
    command: Option<Spanned<Vec<String>>>,
    builtin: Option<Spanned<String>>,
    wait: Option<bool>,
    #[serde(default)]
    restart: Restart,
    seed: Option<u64>,
    board_as: Option<String>,
    hand_command: Option<Spanned<String>>,
    sandbox: Option<bool>,
    ponder: Option<bool>,
    memory_mb: Option<Spanned<u64>>,
    disk_mb: Option<Spanned<u64>>,
    processes: Option<Spanned<u64>>,
    user: Option<String>,
    protocol: Option<Spanned<String>>,
    depth: Option<Spanned<u32>>,
}

/// Where the openings come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSource {
    /// N random legal plies from the start, from a seed; each played twice.
    Random { plies: u32, seed: u64 },
    /// Transcripts, one per line, each played twice.
    File { path: PathBuf, lines: Vec<String> },
}

/// A checked tournament definition.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file it was read from.
    pub path: PathBuf,
    /// The file's folder: relative paths resolve against it.
    pub dir: PathBuf,
    pub name: String,
    pub board: PathBuf,
    /// Where `board` is written (for [`Config::check_board`]'s error).
    board_at: ConfigError,
    pub results: PathBuf,
    pub format: Format,
    /// For a gauntlet: the player who meets all others.
    pub gauntlet_player: Option<String>,
    pub games_per_pairing: u32,
    pub concurrency: u32,
    pub size: u8,
    pub stale_lock_ms: u64,
    pub time: TimeControl,
    pub rules: Rules,
    pub openings: OpeningSource,
    pub players: Vec<PlayerSpec>,
    /// `[sprt]`: stop a two-player event once H0 or H1 is accepted.
    pub sprt: Option<Sprt>,
    /// Swiss rounds (`format = "swiss"`); 0 otherwise.
    pub rounds: u32,
}

/// A config error: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
    /// The offending line of the file, for display.
    pub source_line: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)?;
        if self.line > 0 && !self.source_line.is_empty() {
            write!(
                f,
                "\n{:>5} | {}\n      | {}^",
                self.line,
                self.source_line,
                " ".repeat(self.column.saturating_sub(1))
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Line and column (from 1) of byte `offset` in `src`.
fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

/// The dotted key whose value (or name) is at byte `offset`: the last
/// `[table]` / `[[array]]` header before it plus the key on its line.
fn key_at(src: &str, offset: usize) -> String {
    let mut table = String::new();
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut pos = 0;
    let mut key = String::new();
    for line in src.split_inclusive('\n') {
        let end = pos + line.len();
        let t = line.trim();
        if let Some(inner) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = inner.trim().to_string();
            let n = counts.entry(name.clone()).or_insert(0);
            *n += 1;
            table = format!("{name}[{}]", *n);
            key.clear();
        } else if let Some(inner) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            table = inner.trim().to_string();
            key.clear();
        } else if let Some((k, _)) = t.split_once('=') {
            if !t.starts_with('#') {
                key = k.trim().trim_matches('"').to_string();
            }
        }
        if offset < end {
            break;
        }
        pos = end;
    }
    match (table.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    }
}

/// The outermost array, inline table or string still open at byte `end`
/// of `text` (a small scan of TOML's brackets, quotes and comments), with
/// what it is.
fn unclosed_before(text: &str, end: usize) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    let end = end.min(bytes.len());
    let mut open: Vec<(usize, u8)> = Vec::new();
    let mut after_equals = false;
    let mut i = 0;
    while i < end {
        let b = bytes[i];
        match b {
            b'#' => {
                while i < end && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' => {
                let start = i;
                let triple = bytes[i..].starts_with(if b == b'"' { b"\"\"\"" } else { b"'''" });
                i += if triple { 3 } else { 1 };
                loop {
                    if i >= end {
                        let what = if triple {
                            "a multi-line string"
                        } else {
                            "a string"
                        };
                        return Some(
                            open.first()
                                .map_or((start, what), |&(o, c)| (o, bracket(c))),
                        );
                    }
                    let c = bytes[i];
                    if c == b'\\' && b == b'"' {
                        i += 2;
                        continue;
                    }
                    if !triple && c == b'\n' {
                        break;
                    }
                    if c == b && (!triple || bytes[i..].starts_with(&[b, b, b])) {
                        i += if triple { 3 } else { 1 };
                        break;
                    }
                    i += 1;
                }
                after_equals = false;
                continue;
            }
            b'[' | b'{' if !open.is_empty() || after_equals => open.push((i, b)),
            b']' | b'}' if !open.is_empty() => {
                open.pop();
            }
            b'=' => {
                after_equals = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            after_equals = false;
        }
        i += 1;
    }
    open.first().map(|&(o, c)| (o, bracket(c)))
}

fn bracket(c: u8) -> &'static str {
    if c == b'[' {
        "the array `[`"
    } else {
        "the inline table `{`"
    }
}

struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn error_at(
        &self,
        span: std::ops::Range<usize>,
        key: Option<&str>,
        message: String,
    ) -> ConfigError {
        let (line, column) = if span.end == 0 {
            (0, 0)
        } else {
            line_col(self.text, span.start)
        };
        let key = key.map_or_else(|| key_at(self.text, span.start), str::to_string);
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            column,
            key,
            message,
            source_line: self
                .text
                .lines()
                .nth(line.saturating_sub(1))
                .unwrap_or("")
                .to_string(),
        }
    }

    /// An error about a key that was not written at all.
    fn missing(&self, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line: 0,
            column: 0,
            key: key.to_string(),
            message,
            source_line: String::new(),
        }
    }
}

/// A player's `protocol` and `depth`: an engine protocol needs a
/// `command`; NBoard plays 8×8 only; `depth` is NBoard's.
fn engine_settings(
    src: &Source<'_>,
    p: &RawPlayer,
    i: usize,
    name: &str,
    launch: &Launch,
    size: u8,
) -> Result<(Protocol, EngineSettings), ConfigError> {
    let key = |k: &str| format!("player[{}].{k}", i + 1);
    let protocol = match &p.protocol {
        None => Protocol::Mailbox,
        Some(s) => {
            let protocol: Protocol = s.get_ref().parse().map_err(|m: String| {
                src.error_at(
                    s.span(),
                    Some(&key("protocol")),
                    format!("player `{name}`: {m}"),
                )
            })?;
            if protocol.is_engine() && !matches!(launch, Launch::Command(_)) {
                return Err(src.error_at(
                    s.span(),
                    Some(&key("protocol")),
                    format!(
                        "player `{name}`: protocol = \"{protocol}\" is spoken by an engine the referee starts; \
                         give its `command = [...]` (not `builtin` or `wait`)"
                    ),
                ));
            }
            if let Some(sizes) = protocol.sizes() {
                if !sizes.contains(&size) {
                    return Err(src.error_at(
                        s.span(),
                        Some(&key("protocol")),
                        format!(
                            "player `{name}`: {protocol} engines play 8×8 only, and this tournament's \
                             size is {size} (set `tournament.size = 8`, or leave this player out)"
                        ),
                    ));
                }
            }
            protocol
        }
    };
    let mut engine = EngineSettings::default();
    if let Some(d) = &p.depth {
        if protocol != Protocol::Nboard {
            return Err(src.error_at(
                d.span(),
                Some(&key("depth")),
                format!("player `{name}`: `depth` is only used with protocol = \"nboard\""),
            ));
        }
        if *d.get_ref() == 0 {
            return Err(src.error_at(
                d.span(),
                Some(&key("depth")),
                format!("player `{name}`: `depth` must be at least 1"),
            ));
        }
        engine.depth = *d.get_ref();
    }
    Ok((protocol, engine))
}

/// Reads and checks `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = crate::input_file::read_text(path, crate::input_file::MAX_TEXT).map_err(|e| {
        ConfigError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            key: String::new(),
            message: format!("cannot read it: {e}"),
            source_line: String::new(),
        }
    })?;
    parse(path, &text)
}

/// Checks `text` as the content of `path` (which locates relative paths).
pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let src = Source { path, text };
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let mut span = e.span().unwrap_or(0..0);
        let mut message = e.message().to_string();
        // A bracket or string left open is noticed lines later, where the
        // parser gives up: the error belongs where it was opened.
        if let Some((open, what)) = unclosed_before(text, span.start) {
            if line_col(text, open).0 < line_col(text, span.start).0 {
                message = format!(
                    "{what} opened here is never closed (the parser stopped at line {}: {})",
                    line_col(text, span.start).0,
                    message.trim()
                );
                span = open..open + 1;
            }
        }
        let key = key_at(text, span.start);
        if key.ends_with("command") && message.contains("expected a sequence") {
            message.push_str(" (write the program and its arguments as a list, e.g. [\"ruby\", \"bots/ruby/greedy.rb\"])");
        }
        if span.end == 0 {
            src.missing("", message)
        } else {
            src.error_at(span, Some(&key), message)
        }
    })?;
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let t = &raw.tournament;

    let size = *t.size.get_ref();
    if !crate::game::SIZES.contains(&size) {
        return Err(src.error_at(
            t.size.span(),
            Some("tournament.size"),
            format!("board size {size} is not allowed; expected 4, 6 or 8"),
        ));
    }
    for (key, v) in [
        ("tournament.concurrency", &t.concurrency),
        ("tournament.games-per-pairing", &t.games_per_pairing),
    ] {
        if *v.get_ref() == 0 {
            return Err(src.error_at(
                v.span(),
                Some(key),
                "expected a number of at least 1".into(),
            ));
        }
    }
    let defaults = TimeControl::default();
    let positive =
        |v: &Option<Spanned<u64>>, key: &str, default: u64| -> Result<u64, ConfigError> {
            match v {
                None => Ok(default),
                Some(s) if *s.get_ref() == 0 => Err(src.error_at(
                    s.span(),
                    Some(key),
                    "expected a time in milliseconds of at least 1".into(),
                )),
                Some(s) => Ok(*s.get_ref()),
            }
        };
    let time = TimeControl {
        move_ms: positive(&raw.time.move_ms, "time.move-ms", defaults.move_ms)?,
        startup_ms: positive(&raw.time.startup_ms, "time.startup-ms", defaults.startup_ms)?,
        bank_ms: raw.time.bank_ms,
        wait_ms: raw.time.wait_ms,
    };
    let stale_lock_ms = positive(
        &t.stale_lock_ms,
        "tournament.stale-lock-ms",
        DEFAULT_STALE.as_millis() as u64,
    )?;

    let mut players: Vec<PlayerSpec> = Vec::new();
    // Names are unique regardless of case: on a case-insensitive drive
    // (SMB, macOS, Windows) `Random` and `random` would share a mailbox.
    let mut first_line: std::collections::HashMap<String, (usize, String)> = Default::default();
    for (i, p) in raw.player.iter().enumerate() {
        let key = |k: &str| format!("player[{}].{k}", i + 1);
        let name = p.name.get_ref().clone();
        validate_name(&name).map_err(|m| src.error_at(p.name.span(), Some(&key("name")), m))?;
        let line = line_col(text, p.name.span().start).0;
        if let Some((first, as_written)) = first_line.get(&name.to_ascii_lowercase()) {
            let message = if *as_written == name {
                format!("duplicate player name `{name}` (first defined at line {first}); names must be unique")
            } else {
                format!(
                    "player name `{name}` differs from `{as_written}` (line {first}) only in case; \
                     names must differ in more than case, as their mailboxes would be one folder \
                     on a case-insensitive drive (SMB, macOS, Windows)"
                )
            };
            return Err(src.error_at(p.name.span(), Some(&key("name")), message));
        }
        first_line.insert(name.to_ascii_lowercase(), (line, name.clone()));
        let launch = match (&p.command, &p.builtin, p.wait) {
            (Some(c), None, None | Some(false)) => {
                if c.get_ref().is_empty() {
                    return Err(src.error_at(
                        c.span(),
                        Some(&key("command")),
                        "the command is empty; expected a program and its arguments, e.g. [\"ruby\", \"bots/ruby/greedy.rb\"]".into(),
                    ));
                }
                Launch::Command(c.get_ref().clone())
            }
            (None, Some(b), None | Some(false)) => {
                if !BUILTINS.contains(&b.get_ref().as_str()) {
                    return Err(src.error_at(
                        b.span(),
                        Some(&key("builtin")),
                        format!(
                            "unknown built-in bot `{}`; expected one of {}",
                            b.get_ref(),
                            BUILTINS.join(", ")
                        ),
                    ));
                }
                Launch::Builtin(b.get_ref().clone())
            }
            (None, None, Some(true)) => Launch::Waiting {
                command: p.hand_command.as_ref().map(|c| c.get_ref().trim().to_string()),
            },
            _ => {
                return Err(src.error_at(
                    p.name.span(),
                    Some(&format!("player[{}]", i + 1)),
                    format!("player `{name}` needs exactly one of `command = [...]`, `builtin = \"...\"` or `wait = true`"),
                ))
            }
        };
        if let (Some(c), false) = (&p.hand_command, p.wait == Some(true)) {
            return Err(src.error_at(
                c.span(),
                Some(&key("hand-command")),
                format!(
                    "player `{name}`: `hand-command` is how its owner starts a bot by hand; it \
                     needs `wait = true` (the referee runs `command` itself)"
                ),
            ));
        }
        let mut sandbox = crate::sandbox::Settings::default();
        for (key, value, slot) in [
            ("memory-mb", &p.memory_mb, &mut sandbox.memory_mb),
            ("disk-mb", &p.disk_mb, &mut sandbox.disk_mb),
            ("processes", &p.processes, &mut sandbox.processes),
        ] {
            if let Some(v) = value {
                if *v.get_ref() == 0 {
                    return Err(src.error_at(
                        v.span(),
                        Some(key),
                        format!("player `{name}`: `{key}` must be at least 1"),
                    ));
                }
                *slot = *v.get_ref();
            }
        }
        let (protocol, engine) = engine_settings(&src, p, i, &name, &launch, size)?;
        sandbox.enabled = p.sandbox.unwrap_or(true);
        sandbox.ponder = p.ponder.unwrap_or(false);
        sandbox.user = p.user.clone();
        // A bot started by hand sees the board on its own machine: an
        // absolute path there (even a Windows one) is kept as written.
        let board_as = p.board_as.as_ref().map(|b| {
            if matches!(launch, Launch::Waiting { .. }) && absolute_anywhere(b) {
                PathBuf::from(b)
            } else {
                dir.join(b)
            }
        });
        players.push(PlayerSpec {
            name,
            launch,
            restart: p.restart,
            base_dir: dir.clone(),
            seed: p.seed.unwrap_or(raw.openings.seed),
            board_as,
            sandbox,
            protocol,
            engine,
        });
    }
    if players.len() < 2 {
        return Err(src.missing(
            "player",
            format!(
                "a tournament needs at least two players; found {} (add [[player]] tables)",
                players.len()
            ),
        ));
    }
    let gauntlet_player = match (&t.format, &t.gauntlet_player) {
        (_, Some(g)) => {
            if !players.iter().any(|p| &p.name == g.get_ref()) {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.gauntlet-player"),
                    format!(
                        "unknown player `{}`; expected one of the [[player]] names: {}",
                        g.get_ref(),
                        players
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if t.format != Format::Gauntlet {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.gauntlet-player"),
                    "only used with format = \"gauntlet\"".into(),
                ));
            }
            Some(g.get_ref().clone())
        }
        (Format::Gauntlet, None) => Some(players[0].name.clone()),
        _ => None,
    };

    let openings = match (&raw.openings.random_plies, &raw.openings.file) {
        (Some(p), Some(f)) => {
            let _ = p;
            return Err(src.error_at(
                f.span(),
                Some("openings.file"),
                "give either `random-plies` or `file`, not both".into(),
            ));
        }
        (_, Some(f)) => {
            let file = dir.join(f.get_ref());
            let content = crate::input_file::read_text(&file, crate::input_file::MAX_TEXT)
                .map_err(|e| {
                    src.error_at(
                        f.span(),
                        Some("openings.file"),
                        format!("cannot read {}: {e}", file.display()),
                    )
                })?;
            let mut lines = Vec::new();
            for (n, line) in content.lines().enumerate() {
                let l = line.trim();
                if l.is_empty() || l.starts_with('#') {
                    continue;
                }
                crate::schedule::check_opening(size, l).map_err(|message| ConfigError {
                    file: file.clone(),
                    line: n + 1,
                    column: 1,
                    key: "opening".into(),
                    message,
                    source_line: line.to_string(),
                })?;
                lines.push(l.to_string());
            }
            if lines.is_empty() {
                return Err(src.error_at(
                    f.span(),
                    Some("openings.file"),
                    format!("{} holds no transcript", file.display()),
                ));
            }
            OpeningSource::File { path: file, lines }
        }
        (Some(p), None) => {
            let plies = *p.get_ref();
            let max = u32::from(size) * u32::from(size) - 4;
            if plies >= max {
                return Err(src.error_at(
                    p.span(),
                    Some("openings.random-plies"),
                    format!("{plies} plies fill the board; expected fewer than {max}"),
                ));
            }
            OpeningSource::Random {
                plies,
                seed: raw.openings.seed,
            }
        }
        (None, None) => OpeningSource::Random {
            plies: 0,
            seed: raw.openings.seed,
        },
    };

    let rounds = event_shape(&src, t, &raw.sprt, players.len())?;
    let sprt = raw.sprt.as_ref().map(|s| {
        let r = s.get_ref();
        Sprt {
            elo0: r.elo0,
            elo1: *r.elo1.get_ref(),
            alpha: *r.alpha.get_ref(),
            beta: *r.beta.get_ref(),
            model: r.model,
        }
    });

    Ok(Config {
        path: path.to_path_buf(),
        board: dir.join(t.board.get_ref()),
        board_at: src.error_at(t.board.span(), Some("tournament.board"), String::new()),
        results: dir.join(&t.results),
        dir,
        name: t.name.clone(),
        format: t.format,
        gauntlet_player,
        games_per_pairing: *t.games_per_pairing.get_ref(),
        concurrency: *t.concurrency.get_ref(),
        size,
        stale_lock_ms,
        time,
        rules: Rules {
            max_retries: raw.rules.max_retries,
            ask_pass: raw.rules.ask_pass,
        },
        openings,
        players,
        sprt,
        rounds,
    })
}

/// Checks `rounds` (Swiss only) and `[sprt]` (two players, sensible
/// bounds); returns the Swiss rounds (0 for other formats).
fn event_shape(
    src: &Source<'_>,
    t: &RawTournament,
    sprt: &Option<Spanned<RawSprt>>,
    players: usize,
) -> Result<u32, ConfigError> {
    let rounds = match (t.format, &t.rounds) {
        (Format::Swiss, None) => {
            return Err(src.missing(
                "tournament.rounds",
                "format = \"swiss\" needs `rounds = N` (the number of rounds)".into(),
            ))
        }
        (Format::Swiss, Some(r)) => {
            let n = *r.get_ref();
            // Without rematches a player meets at most players − 1
            // others, plus one bye in an odd field.
            let max = if players.is_multiple_of(2) {
                players - 1
            } else {
                players
            };
            if n == 0 || n as usize > max {
                return Err(src.error_at(
                    r.span(),
                    Some("tournament.rounds"),
                    format!("expected 1 to {max} rounds for {players} players (no pairing is played twice)"),
                ));
            }
            let g = &t.games_per_pairing;
            if g.span().end != 0 && *g.get_ref() != 2 {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.games-per-pairing"),
                    "a Swiss pairing is always one game pair (2 games, colours swapped); remove this key or set it to 2".into(),
                ));
            }
            n
        }
        (_, Some(r)) => {
            return Err(src.error_at(
                r.span(),
                Some("tournament.rounds"),
                "only used with format = \"swiss\"".into(),
            ))
        }
        (_, None) => 0,
    };
    if let Some(s) = sprt {
        let r = s.get_ref();
        if players != 2 || t.format == Format::Swiss {
            return Err(src.error_at(
                s.span(),
                Some("sprt"),
                format!("an SPRT compares two players in a round robin; found {players} players"),
            ));
        }
        if r.elo1.get_ref().partial_cmp(&r.elo0) != Some(std::cmp::Ordering::Greater) {
            return Err(src.error_at(
                r.elo1.span(),
                Some("sprt.elo1"),
                format!("expected elo1 greater than elo0 ({})", r.elo0),
            ));
        }
        for (key, v) in [("sprt.alpha", &r.alpha), ("sprt.beta", &r.beta)] {
            let x = *v.get_ref();
            if !(x > 0.0 && x < 0.5) {
                return Err(src.error_at(
                    v.span(),
                    Some(key),
                    format!("expected a probability between 0 and 0.5, found {x}"),
                ));
            }
        }
    }
    Ok(rounds)
}

impl Config {
    /// Checks the board folder before a referee uses it (see
    /// [`crate::mailbox::check_board_path`]); the error points at `board`
    /// in the file.
    pub fn check_board(&self) -> Result<(), ConfigError> {
        let at = |message| ConfigError {
            message,
            ..self.board_at.clone()
        };
        // Bots can write anywhere in the board: the results and this file
        // must not be there.
        let real = |p: &Path| {
            let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            std::fs::canonicalize(&p).unwrap_or_else(|_| {
                p.parent()
                    .and_then(|d| std::fs::canonicalize(d).ok())
                    .map_or_else(|| p.clone(), |d| d.join(p.file_name().unwrap_or_default()))
            })
        };
        crate::mailbox::check_board_path(&self.board).map_err(at)?;
        let board = real(&self.board);
        for (what, path) in [
            ("the results folder", &self.results),
            ("this file", &self.path),
        ] {
            if real(path).starts_with(&board) {
                return Err(at(format!(
                    "{what} {} is inside the board {}, where bots can write; keep it outside",
                    path.display(),
                    self.board.display()
                )));
            }
        }
        Ok(())
    }

    pub fn player(&self, name: &str) -> Option<&PlayerSpec> {
        self.players.iter().find(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[tournament]\nname = \"t\"\n\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n[[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n";

    fn err(text: &str) -> ConfigError {
        parse(Path::new("t.toml"), text).unwrap_err()
    }

    #[test]
    fn a_minimal_file_gets_the_defaults() {
        let c = parse(Path::new("t.toml"), BASE).unwrap();
        assert_eq!(c.size, 8);
        assert_eq!(c.concurrency, 1);
        assert_eq!(c.format, Format::RoundRobin);
        assert_eq!(c.players.len(), 2);
        assert_eq!(c.time, TimeControl::default());
    }

    #[test]
    fn errors_name_line_column_and_key() {
        let table: &[(&str, usize, usize, &str, &str)] = &[
            (
                "[tournament]\nname = \"t\"\nconcurency = 2\n",
                3,
                1,
                "tournament.concurency",
                "unknown field `concurency`",
            ),
            (
                "[tournament]\nname = \"t\"\nconcurrency = \"two\"\n",
                3,
                15,
                "tournament.concurrency",
                "expected u32",
            ),
            (
                "[tournament]\nname = \"t\"\nsize = 7\n",
                3,
                8,
                "tournament.size",
                "expected 4, 6 or 8",
            ),
            (
                "[tournament]\nname = \"t\"\nformat = \"knockout\"\n",
                3,
                10,
                "tournament.format",
                "expected one of `round-robin`, `gauntlet`, `swiss`",
            ),
        ];
        for (text, line, col, key, msg) in table {
            let e = err(text);
            assert_eq!((e.line, e.column), (*line, *col), "{e}");
            assert_eq!(e.key, *key, "{e}");
            assert!(e.message.contains(msg), "{e}");
            assert!(e.to_string().starts_with("t.toml:"), "{e}");
        }
    }

    #[test]
    fn an_unclosed_bracket_is_reported_where_it_opens() {
        // Line 8 opens an array that never closes; the parser notices later.
        let text = BASE.replace("\"random\"\n\n", "\"random\"\n\nfoo = [\n");
        assert_eq!(text.lines().nth(7), Some("foo = ["));
        let e = err(&text);
        assert_eq!((e.line, e.column), (8, 7), "{e}");
        assert_eq!(e.key, "player[1].foo", "{e}");
        assert!(e.message.contains("never closed"), "{e}");
        // The same for an inline table and a string; a bracket closed on a
        // later line is no error, nor one inside a string or a comment.
        let e = err("[tournament]\nname = \"t\"\nx = { a = 1,\n\n\ny = 2\n");
        assert_eq!(e.line, 3, "{e}");
        let e = err("[tournament]\nname = \"\"\"t\n\n\n");
        assert_eq!(e.line, 2, "{e}");
        let ok = BASE.replace(
            "name = \"t\"",
            "name = \"t [\" # a [ comment\nconcurrency = [\n2]",
        );
        let e = err(&ok);
        assert!(e.message.contains("expected u32"), "{e}");
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn engine_players_are_checked_with_file_line_and_field() {
        let gtp = format!(
            "{BASE}\n[[player]]\nname = \"rhino\"\ncommand = [\"gtp-rhino\", \"-l\", \"1\"]\nprotocol = \"gtp\"\n"
        );
        let c = parse(Path::new("t.toml"), &gtp).unwrap();
        assert_eq!(c.players[2].protocol, Protocol::Gtp);
        assert_eq!(c.players[0].protocol, Protocol::Mailbox);
        let nboard = format!(
            "{BASE}\n[[player]]\nname = \"nb\"\ncommand = [\"edax\", \"-nboard\"]\nprotocol = \"nboard\"\ndepth = 6\n"
        );
        let c = parse(Path::new("t.toml"), &nboard).unwrap();
        assert_eq!(c.players[2].engine.depth, 6);
        // NBoard on 6×6: refused where the protocol is written.
        let e = err(&nboard.replace("name = \"t\"", "name = \"t\"\nsize = 6"));
        assert_eq!(e.key, "player[3].protocol", "{e}");
        assert_eq!(e.line, 16, "{e}");
        assert!(
            e.message.contains("8×8 only") && e.message.contains("size is 6"),
            "{e}"
        );
        assert!(e.to_string().starts_with("t.toml:16:"), "{e}");
        // An unknown protocol, an engine protocol without a command, depth
        // without NBoard.
        let e = err(&gtp.replace("\"gtp\"", "\"uci\""));
        assert_eq!(e.key, "player[3].protocol", "{e}");
        assert!(
            e.message
                .contains("expected \"mailbox\", \"gtp\" or \"nboard\""),
            "{e}"
        );
        let e = err(&format!(
            "{BASE}\n[[player]]\nname = \"c\"\nbuiltin = \"random\"\nprotocol = \"gtp\"\n"
        ));
        assert!(e.message.contains("give its `command"), "{e}");
        let e = err(&gtp.replace("protocol = \"gtp\"", "protocol = \"gtp\"\ndepth = 3"));
        assert_eq!(e.key, "player[3].depth", "{e}");
        assert!(
            e.message.contains("only used with protocol = \"nboard\""),
            "{e}"
        );
    }

    #[test]
    fn players_are_checked() {
        let dup = format!("{BASE}\n[[player]]\nname = \"a\"\nbuiltin = \"weighted\"\n");
        let e = err(&dup);
        assert_eq!(e.key, "player[3].name");
        assert!(
            e.message
                .contains("duplicate player name `a` (first defined at line 5)"),
            "{e}"
        );
        let e = err(&BASE.replace("builtin = \"random\"", "builtin = \"randm\""));
        assert!(e.message.contains("unknown built-in bot `randm`"), "{e}");
        let e = err(&BASE.replace("name = \"a\"", "name = \"../evil\""));
        assert!(e.message.contains("only letters, digits"), "{e}");
        let e = err(&BASE.replace("builtin = \"random\"", "builtin = \"random\"\nwait = true"));
        assert!(e.message.contains("exactly one of"), "{e}");
        let e = err(&BASE.replace("builtin = \"random\"", "command = \"ruby x.rb\""));
        assert!(e.message.contains("as a list"), "{e}");
    }

    #[test]
    fn a_bot_started_by_hand_keeps_its_machines_board_path_and_command() {
        let text = BASE.replace(
            "builtin = \"random\"",
            "wait = true\nboard-as = 'Z:\\class\\board'\nhand-command = 'python3 a.py'",
        );
        let c = parse(Path::new("/cfg/t.toml"), &text).unwrap();
        let a = c.player("a").unwrap();
        assert_eq!(a.board_as.as_deref(), Some(Path::new("Z:\\class\\board")));
        assert_eq!(
            a.launch,
            Launch::Waiting {
                command: Some("python3 a.py".into())
            }
        );
        let e = err(&BASE.replace(
            "builtin = \"random\"",
            "builtin = \"random\"\nhand-command = \"x\"",
        ));
        assert_eq!(
            (e.line, e.key.as_str()),
            (7, "player[1].hand-command"),
            "{e}"
        );
        assert!(e.message.contains("needs `wait = true`"), "{e}");
    }

    #[test]
    fn gauntlet_player_must_exist() {
        let text = BASE.replace(
            "name = \"t\"",
            "name = \"t\"\nformat = \"gauntlet\"\ngauntlet-player = \"zed\"",
        );
        let e = err(&text);
        assert_eq!(e.key, "tournament.gauntlet-player");
        assert_eq!(e.line, 4);
        assert!(e.message.contains("unknown player `zed`"), "{e}");
    }
}
