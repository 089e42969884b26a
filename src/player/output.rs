//! A bot's stdout and stderr, line by line, into the log of the game its
//! instance is playing, with a per-game cap and the last lines kept.
//!
//! Owns the capture threads, the tail and the logging of an engine's
//! protocol lines (GTP, NBoard, both ways); interprets only one kind of line:
//! the shipped bot libraries' [`LIBRARY_FALLBACK`] line (the library played a
//! move the bot did not choose), which it warns about and counts. Every line
//! is made [`visible`] before it is kept anywhere: a bot's terminal escapes
//! never reach a log, a record, `watch` or the page as escapes.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Longest line kept (longer ones are cut, with a marker).
pub const MAX_LINE: usize = 2000;
/// Lines logged per game and instance before the rest are only counted.
pub const MAX_LINES_PER_GAME: u32 = 2000;
/// stderr lines kept for a game record.
pub const TAIL_LINES: usize = 20;
/// stdout lines kept (check-bot shows them to a bot that answers there).
const STDOUT_TAIL_LINES: usize = 5;

/// How the shipped libraries (bots/*/mailbox.*) start the stderr line they
/// write when the bot's own choice was not a legal move or raised, and they
/// played the first legal move instead.
pub const LIBRARY_FALLBACK: &str = "mailbox fallback:";
/// Fallback lines kept over an instance's life (for check-bot).
const FALLBACK_LINES_KEPT: usize = 200;

/// Where an instance's output goes: the current game's span and a tail.
#[derive(Debug)]
pub struct BotOutput {
    id: String,
    span: Mutex<tracing::Span>,
    tail: Mutex<VecDeque<String>>,
    /// The last stdout lines of the current game.
    stdout_tail: Mutex<VecDeque<String>>,
    lines: AtomicU32,
    dropped: AtomicU32,
    /// Library fallbacks in the current game.
    fallbacks: AtomicU32,
    /// Library fallback lines over the instance's life (the first ones).
    fallback_lines: Mutex<Vec<String>>,
}

impl BotOutput {
    pub fn new(id: &str) -> Arc<BotOutput> {
        Arc::new(BotOutput {
            id: id.to_string(),
            span: Mutex::new(tracing::Span::none()),
            tail: Mutex::new(VecDeque::new()),
            stdout_tail: Mutex::new(VecDeque::new()),
            lines: AtomicU32::new(0),
            dropped: AtomicU32::new(0),
            fallbacks: AtomicU32::new(0),
            fallback_lines: Mutex::new(Vec::new()),
        })
    }

    /// Starts a game: later lines go to `span`; the tail and cap restart.
    /// The last game's log is told how many lines its cap dropped.
    pub fn begin_game(&self, span: tracing::Span) {
        self.report_dropped();
        *self.span.lock().unwrap_or_else(|e| e.into_inner()) = span;
        self.tail.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.stdout_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.lines.store(0, Ordering::Relaxed);
        self.dropped.store(0, Ordering::Relaxed);
        self.fallbacks.store(0, Ordering::Relaxed);
    }

    /// Library fallback lines seen this game.
    pub fn fallbacks(&self) -> u32 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Library fallback lines since the instance was made (at most
    /// [`FALLBACK_LINES_KEPT`]), oldest first.
    pub fn fallback_lines(&self) -> Vec<String> {
        self.fallback_lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The last stderr lines of this game.
    pub fn tail(&self) -> Vec<String> {
        self.tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// The last stdout lines of this game.
    pub fn stdout_tail(&self) -> Vec<String> {
        self.stdout_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Lines not logged this game because of the cap.
    pub fn dropped(&self) -> u32 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Logs (in the current game's log) how many lines the cap dropped.
    fn report_dropped(&self) {
        let dropped = self.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let span = self.span.lock().unwrap_or_else(|e| e.into_inner()).clone();
            tracing::warn!(
                parent: &span,
                bot = %self.id,
                "{dropped} more lines of output were not logged (at most {MAX_LINES_PER_GAME} lines per game)"
            );
        }
    }

    fn line(&self, stream: &'static str, line: String) {
        if stream == "stderr" {
            let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line.clone());
            drop(tail);
            if line.starts_with(LIBRARY_FALLBACK) {
                self.fallback(&line);
            }
        } else {
            let mut tail = self.stdout_tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.len() == STDOUT_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line.clone());
        }
        let n = self.lines.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_LINES_PER_GAME {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            if n == MAX_LINES_PER_GAME {
                let span = self.span.lock().unwrap_or_else(|e| e.into_inner()).clone();
                tracing::warn!(
                    parent: &span,
                    bot = %self.id,
                    "{MAX_LINES_PER_GAME} lines of output this game: the rest are counted, not logged"
                );
            }
            return;
        }
        let span = self.span.lock().unwrap_or_else(|e| e.into_inner()).clone();
        tracing::debug!(target: "bot", parent: &span, bot = %self.id, stream, "{line}");
    }

    /// One line of an engine's protocol (GTP, NBoard), either way, into the
    /// current game's log (under the same cap as its output).
    pub fn protocol_line(&self, direction: crate::engine::Direction, line: &str) {
        self.line(
            "protocol",
            format!("{} {}", direction.arrow(), visible(line)),
        );
    }

    /// The first fallback of a game is a warning on the console (the rest are
    /// in the game log, and counted for [`BotOutput::fallbacks`]).
    fn fallback(&self, line: &str) {
        let n = self.fallbacks.fetch_add(1, Ordering::Relaxed) + 1;
        let mut kept = self
            .fallback_lines
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if kept.len() < FALLBACK_LINES_KEPT {
            kept.push(line.to_string());
        }
        drop(kept);
        if n == 1 {
            let span = self.span.lock().unwrap_or_else(|e| e.into_inner()).clone();
            tracing::warn!(
                parent: &span,
                "{}: its library played a move the bot did not choose: {line}",
                self.id
            );
        }
    }

    /// Reads `pipe` to its end on a thread, one line at a time.
    pub fn capture(
        self: &Arc<Self>,
        stream: &'static str,
        mut pipe: impl Read + Send + 'static,
    ) -> std::io::Result<JoinHandle<()>> {
        let out = Arc::clone(self);
        std::thread::Builder::new()
            .name(format!("bot-{stream}"))
            .spawn(move || {
                let mut buf = [0u8; 8192];
                let mut line: Vec<u8> = Vec::new();
                let mut cut = false;
                loop {
                    let n = match pipe.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    for &b in &buf[..n] {
                        if b == b'\n' {
                            out.line(stream, finish(&mut line, cut));
                            cut = false;
                        } else if line.len() < MAX_LINE {
                            line.push(b);
                        } else {
                            cut = true;
                        }
                    }
                }
                if !line.is_empty() {
                    out.line(stream, finish(&mut line, cut));
                }
            })
    }
}

impl Drop for BotOutput {
    /// The instance is gone (its output read to the end): its last game's
    /// log still learns what the cap dropped.
    fn drop(&mut self) {
        self.report_dropped();
    }
}

/// Text a bot wrote, shown as text: every control character but the tab
/// (C0, DEL, C1: terminal escapes, carriage returns that overwrite a line,
/// bells) and every character that reorders or hides text (bidirectional
/// overrides and isolates, zero-width joiners and marks) becomes a visible
/// `\u{..}`, so `tail -f` of a log, `watch` and the page show what the bot
/// wrote and cannot be made to clear a screen, set a title, fake a result
/// line or write the clipboard (OSC 52). A backslash stays as it is: the
/// escape only has to be visible, not reversible.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn hidden(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

fn finish(line: &mut Vec<u8>, cut: bool) -> String {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let mut s = visible(&String::from_utf8_lossy(line));
    if cut {
        s.push_str(" […cut]");
    }
    line.clear();
    s
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn terminal_escapes_and_reordering_become_visible_text() {
        let cases = [
            ("\x1b[2J\x1b[Hclear", "\\u{1b}[2J\\u{1b}[Hclear"),
            ("\x1b]52;c;aGk=\x07", "\\u{1b}]52;c;aGk=\\u{7}"),
            ("fake\rline", "fake\\u{d}line"),
            ("\u{9b}31m", "\\u{9b}31m"),
            ("a\u{202e}cba", "a\\u{202e}cba"),
            ("\x7f", "\\u{7f}"),
            ("eval\t+12 d4 c3", "eval\t+12 d4 c3"),
            ("été ✓ 黒", "été ✓ 黒"),
        ];
        for (raw, shown) in cases {
            assert_eq!(visible(raw), shown, "{raw:?}");
        }
    }
}
