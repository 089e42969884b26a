//! Logs through tracing: the console (level from `-v`/`-q` or the
//! `TOURNAMENT_LOG` environment variable) and one file per game,
//! `<logs>/<game-id>.log`, written line by line as the game goes so
//! `tail -f` works.
//!
//! Owns only the subscriber set-up and the per-game file routing; what is
//! logged is decided where it happens.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::{span, Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{filter::LevelFilter, fmt, prelude::*, EnvFilter, Layer};

/// The environment variable that overrides `-v`/`-q`, e.g. `TOURNAMENT_LOG=debug`.
pub const ENV_FILTER: &str = "TOURNAMENT_LOG";

/// The name of the span a game runs in; its `id` field names the log file.
pub const GAME_SPAN: &str = "game";

fn game_log_dir() -> &'static Mutex<Option<PathBuf>> {
    static DIR: OnceLock<Mutex<Option<PathBuf>>> = OnceLock::new();
    DIR.get_or_init(|| Mutex::new(None))
}

/// Where games' log files go from now on (`None`: no files).
pub fn set_game_log_dir(dir: Option<PathBuf>) {
    if let Some(d) = &dir {
        let _ = std::fs::create_dir_all(d);
    }
    *game_log_dir().lock().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// Where the log of game `game` goes, when games have log files.
pub fn game_log_path(game: &str) -> Option<PathBuf> {
    game_log_dir()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|dir| dir.join(format!("{game}.log")))
}

fn progress_bar() -> &'static Mutex<Option<indicatif::ProgressBar>> {
    static BAR: OnceLock<Mutex<Option<indicatif::ProgressBar>>> = OnceLock::new();
    BAR.get_or_init(|| Mutex::new(None))
}

/// While a progress bar is shown, console log lines are printed above it.
pub fn set_progress_bar(bar: Option<indicatif::ProgressBar>) {
    *progress_bar().lock().unwrap_or_else(|e| e.into_inner()) = bar;
}

/// Prints one line to stderr, above the progress bar if one is shown.
pub fn print_line(line: &str) {
    let mut w = ConsoleWriter::default();
    let _ = writeln!(w, "{line}");
}

/// stderr, but written around the progress bar (whole lines at a time).
#[derive(Default)]
struct ConsoleWriter {
    buf: Vec<u8>,
}

impl Write for ConsoleWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let bar = progress_bar()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match bar {
            Some(bar) if !bar.is_hidden() => bar.suspend(|| std::io::stderr().write_all(&buf)),
            _ => std::io::stderr().write_all(&buf),
        }
    }
}

impl Drop for ConsoleWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The console's default filter for a verbosity.
fn console_default(verbose: u8, quiet: bool) -> &'static str {
    if quiet {
        return "warn";
    }
    match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    }
}

/// Installs the global subscriber. Safe to call more than once (later
/// calls do nothing).
pub fn init(verbose: u8, quiet: bool) {
    let filter = EnvFilter::try_from_env(ENV_FILTER)
        .unwrap_or_else(|_| EnvFilter::new(console_default(verbose, quiet)));
    let console = fmt::layer()
        .with_writer(ConsoleWriter::default)
        .with_target(false)
        .with_ansi(use_color_on_stderr())
        .with_filter(filter);
    let files = GameLogLayer.with_filter(LevelFilter::DEBUG);
    let _ = tracing_subscriber::registry()
        .with(console)
        .with(files)
        .try_init();
}

fn use_color_on_stderr() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// The open log file of one game, kept in its span.
struct GameLogFile(Arc<Mutex<File>>);

/// Routes every event inside a `game` span to that game's file.
struct GameLogLayer;

#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
    id: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "id" => self.id = Some(value.to_string()),
            name => {
                let _ = write!(self.rest, " {name}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            "id" => self.id = Some(format!("{value:?}")),
            name => {
                let _ = write!(self.rest, " {name}={value:?}");
            }
        }
    }
}

impl<S> Layer<S> for GameLogLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != GAME_SPAN {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let Some(game) = fields.id else { return };
        let Some(path) = game_log_path(&game) else {
            return;
        };
        // A game id becomes a file name only if it is a safe one, and the
        // log is never opened through a link.
        if let Err(why) = crate::mailbox::validate_game_id(&game) {
            eprintln!("warning: no game log: {why}");
            return;
        }
        let mut opts = OpenOptions::new();
        opts.create(true);
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        }
        // Appended to (a game played again adds to its log), with O_APPEND
        // where the drive allows it.
        match crate::mailbox::drive::open_for_append(&opts, &path) {
            Ok((f, _)) => {
                if let Some(span) = ctx.span(id) {
                    span.extensions_mut()
                        .insert(GameLogFile(Arc::new(Mutex::new(f))));
                }
            }
            Err(e) => eprintln!("warning: cannot open game log {}: {e}", path.display()),
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(scope) = ctx.event_scope(event) else {
            return;
        };
        for span in scope {
            let ext = span.extensions();
            let Some(GameLogFile(file)) = ext.get::<GameLogFile>() else {
                continue;
            };
            let mut fields = Fields::default();
            event.record(&mut fields);
            let meta = event.metadata();
            let line = format!(
                "{} {:>5} {}{}{}\n",
                humantime::format_rfc3339_millis(std::time::SystemTime::now()),
                meta.level(),
                if meta.target() == "bot" { "[bot] " } else { "" },
                fields.message,
                fields.rest
            );
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = f.write_all(line.as_bytes());
            return;
        }
    }
}
