//! The TOML file as written: one serde table per section, kebab-case keys,
//! unknown keys rejected, and positions kept (`Spanned`) for the values a
//! validator may have to point at; and the syntax error, placed where the
//! mistake was made (a bracket or string left open is reported where it
//! opens).
//!
//! Owns the shapes of the tables and the reading of the text into them;
//! must not judge values (the validators of each table do) nor read files.

use serde::Deserialize;
use toml::Spanned;

use crate::player::Restart;
use crate::rating::sprt::Model;

use super::error::{key_at, line_col, Source};
use super::{ConfigError, Format};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawConfig {
    pub(super) tournament: RawTournament,
    #[serde(default)]
    pub(super) time: RawTime,
    #[serde(default)]
    pub(super) rules: RawRules,
    #[serde(default)]
    pub(super) openings: RawOpenings,
    #[serde(default)]
    pub(super) player: Vec<RawPlayer>,
    pub(super) sprt: Option<Spanned<RawSprt>>,
    #[serde(default)]
    pub(super) sandbox: RawSandbox,
}

/// `[sandbox]`: what the sandbox of every spawned bot shares.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawSandbox {
    /// The user ids set aside for bots under a root referee: `FIRST-LAST`.
    pub(super) ids: Option<Spanned<String>>,
}

fn five_percent() -> Spanned<f64> {
    Spanned::new(0..0, 0.05)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawSprt {
    pub(super) elo0: f64,
    pub(super) elo1: Spanned<f64>,
    #[serde(default = "five_percent")]
    pub(super) alpha: Spanned<f64>,
    #[serde(default = "five_percent")]
    pub(super) beta: Spanned<f64>,
    #[serde(default = "normalized")]
    pub(super) model: Model,
    /// Lets the pairs of the test repeat openings (every verdict says so).
    #[serde(default)]
    pub(super) repeat_openings: bool,
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
pub(super) struct RawTournament {
    pub(super) name: String,
    #[serde(default = "default_board")]
    pub(super) board: Spanned<String>,
    #[serde(default = "default_results")]
    pub(super) results: String,
    #[serde(default)]
    pub(super) format: Format,
    #[serde(default)]
    pub(super) gauntlet_player: Option<Spanned<String>>,
    #[serde(default = "one")]
    pub(super) games_per_pairing: Spanned<u32>,
    #[serde(default = "one")]
    pub(super) concurrency: Spanned<u32>,
    #[serde(default = "eight")]
    pub(super) size: Spanned<u8>,
    #[serde(default)]
    pub(super) stale_lock_ms: Option<Spanned<u64>>,
    #[serde(default)]
    pub(super) rounds: Option<Spanned<u32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawTime {
    pub(super) move_ms: Option<Spanned<u64>>,
    pub(super) startup_ms: Option<Spanned<u64>>,
    pub(super) bank_ms: Option<u64>,
    pub(super) wait_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawRules {
    #[serde(default)]
    pub(super) max_retries: u32,
    #[serde(default)]
    pub(super) ask_pass: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawOpenings {
    pub(super) random_plies: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) seed: u64,
    pub(super) file: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawPlayer {
    pub(super) name: Spanned<String>,
    pub(super) command: Option<Spanned<Vec<String>>>,
    pub(super) builtin: Option<Spanned<String>>,
    pub(super) wait: Option<bool>,
    #[serde(default)]
    pub(super) restart: Restart,
    pub(super) seed: Option<u64>,
    pub(super) board_as: Option<String>,
    pub(super) hand_command: Option<Spanned<String>>,
    pub(super) sandbox: Option<bool>,
    pub(super) ponder: Option<bool>,
    pub(super) memory_mb: Option<Spanned<u64>>,
    pub(super) disk_mb: Option<Spanned<u64>>,
    pub(super) processes: Option<Spanned<u64>>,
    pub(super) user: Option<String>,
    pub(super) read: Option<Spanned<Vec<String>>>,
    pub(super) protocol: Option<Spanned<String>>,
    pub(super) depth: Option<Spanned<u32>>,
    pub(super) nboard_version: Option<Spanned<u8>>,
    pub(super) pipe: Option<Spanned<bool>>,
    pub(super) dir: Option<Spanned<String>>,
    pub(super) dir_writable: Option<Spanned<bool>>,
    /// A person at the referee's terminal, with their own time.
    pub(super) human: Option<Spanned<bool>>,
    pub(super) move_ms: Option<Spanned<u64>>,
    pub(super) clock_ms: Option<Spanned<u64>>,
    pub(super) increment_ms: Option<Spanned<u64>>,
}

/// `text` as the tables of a tournament file; a syntax or type error
/// names where it is.
pub(super) fn deserialize(src: &Source<'_>) -> Result<RawConfig, ConfigError> {
    let text = src.text;
    toml::from_str(text).map_err(|e| {
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
        // A command written as anything but a list (`command = "ruby
        // bot.rb"`) is told how to write it: judged from the value as
        // written, not from the parser's words.
        if key.ends_with(".command") && span.end > 0 && !written_as_array(text, span.start) {
            message.push_str(" (write the program and its arguments as a list, e.g. [\"ruby\", \"bots/ruby/greedy.rb\"])");
        }
        if span.end == 0 {
            src.missing("", message)
        } else {
            src.error_at(span, Some(&key), message)
        }
    })
}

/// Whether the last `command = …` line at or before byte `offset` writes
/// its value as an array (`[`).
fn written_as_array(text: &str, offset: usize) -> bool {
    let before = &text[..offset.min(text.len())];
    let end = text[before.len()..]
        .find('\n')
        .map_or(text.len(), |i| before.len() + i);
    text[..end]
        .lines()
        .rev()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim().trim_matches('"') == "command")
        .is_some_and(|(_, value)| value.trim_start().starts_with('['))
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
