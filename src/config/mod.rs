//! `tournament.toml`: the tournament's definition, read with serde (kebab-
//! case keys, unknown keys rejected) and checked, with every error naming
//! the file, line, column and key and saying what was expected.
//!
//! Owns the checked definition ([`Config`]) and the order of the checks:
//! `read` reads the files, `raw` turns the text into tables (syntax and
//! type errors), and one validator per table says what is wrong with it:
//! `tournament` (with `[sprt]`), `time` (with `[rules]`), `players`,
//! `openings`, `sandbox`; `error` is the error and its position. Paths in the file
//! resolve against the file's folder. Starts nothing and writes nothing.

mod error;
mod openings;
mod players;
mod raw;
mod read;
mod sandbox;
mod time;
mod tournament;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::player::PlayerSpec;
use crate::rating::sprt::Sprt;
use crate::referee::{Rules, TimeControl};

pub use error::ConfigError;
use error::Source;
pub use openings::{check_opening, check_openings};

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

/// Where the openings come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSource {
    /// N random legal plies from the start, from a seed; each played twice
    /// (0 plies: the start position, no opening).
    Random { plies: u32, seed: u64 },
    /// Transcripts, one per line, each played twice.
    File { path: PathBuf, lines: Vec<String> },
    /// The balanced openings built into the program (the default on 8×8:
    /// `name` is the file they were made into, `openings/balanced-8.txt`),
    /// in order, each played twice.
    Shipped {
        name: &'static str,
        lines: Vec<String>,
    },
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

/// Reads and checks `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = read::config_text(path)?;
    parse(path, &text)
}

/// Checks `text` as the content of `path` (which locates relative paths
/// and the openings file), table by table.
pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let src = Source { path, text };
    let raw = raw::deserialize(&src)?;
    let dir = folder_of(path);
    let t = &raw.tournament;
    let size = tournament::size_and_counts(&src, t)?;
    let time = time::time(&src, &raw.time)?;
    let stale_lock_ms = tournament::stale_lock_ms(&src, t)?;
    let board = dir.join(t.board.get_ref());
    let results = dir.join(&t.results);
    let run: [&Path; 3] = [&board, &results, path];
    let players = players::players(&src, &raw.player, &dir, raw.openings.seed, size, &run)?;
    let gauntlet_player = tournament::gauntlet_player(&src, t, &players)?;
    let openings = openings::openings(&src, &raw.openings, &dir, size)?;
    let rounds = tournament::event_shape(&src, t, &raw.sprt, players.len())?;
    let players = sandbox::shared_settings(&src, &raw.sandbox, players, &run)?;
    let games_per_pairing = *t.games_per_pairing.get_ref();
    let sprt = openings::sprt_openings(
        &src,
        &raw.sprt,
        tournament::sprt(&raw.sprt),
        &openings,
        size,
        games_per_pairing,
    )?;
    Ok(Config {
        path: path.to_path_buf(),
        board,
        board_at: src.error_at(t.board.span(), Some("tournament.board"), String::new()),
        results,
        name: t.name.clone(),
        format: t.format,
        gauntlet_player,
        games_per_pairing,
        concurrency: *t.concurrency.get_ref(),
        size,
        stale_lock_ms,
        time,
        rules: time::rules(&raw.rules),
        openings,
        players,
        sprt,
        rounds,
        dir,
    })
}

/// The folder of the tournament file (canonical when it can be).
fn folder_of(path: &Path) -> PathBuf {
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
    std::fs::canonicalize(&dir).unwrap_or(dir)
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
    use crate::engine::Protocol;
    use crate::player::Launch;

    const BASE: &str = "[tournament]\nname = \"t\"\n\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n[[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n";

    fn err(text: &str) -> ConfigError {
        parse(Path::new("t.toml"), text).unwrap_err()
    }

    #[test]
    fn a_person_is_a_player_with_their_own_time() {
        use crate::player::Launch;
        use crate::referee::GameClock;
        let person = |keys: &str| BASE.replace("builtin = \"random\"", keys);
        let table = [
            ("human = true", 600_000, None),
            ("human = true\nmove-ms = 90000", 90_000, None),
            (
                "human = true\nclock-ms = 900000",
                600_000,
                Some((900_000, 0)),
            ),
            (
                "human = true\nclock-ms = 60000\nincrement-ms = 1000",
                600_000,
                Some((60_000, 1_000)),
            ),
        ];
        for (keys, move_ms, clock) in table {
            let c = parse(Path::new("t.toml"), &person(keys)).unwrap();
            let a = c.player("a").unwrap();
            assert!(a.is_person(), "{keys}");
            assert!(!a.pipe, "{keys}");
            assert_eq!(
                a.launch,
                Launch::Person {
                    move_ms,
                    clock: clock.map(|(base_ms, increment_ms)| GameClock {
                        base_ms,
                        increment_ms
                    })
                },
                "{keys}"
            );
            assert!(!c.player("b").unwrap().is_person());
        }
        // What is refused, where, and with what words.
        let refused = [
            (
                "human = true\nbuiltin = \"random\"",
                6,
                "player[1].human",
                "who is not started",
            ),
            (
                "human = true\nwait = true",
                6,
                "player[1].human",
                "remove `command`",
            ),
            (
                "builtin = \"random\"\nclock-ms = 1000",
                7,
                "player[1].clock-ms",
                "a bot keeps",
            ),
            (
                "builtin = \"random\"\nmove-ms = 1000",
                7,
                "player[1].move-ms",
                "a person's time",
            ),
            (
                "human = true\nincrement-ms = 1000",
                7,
                "player[1].increment-ms",
                "give the clock too",
            ),
            (
                "human = true\nmove-ms = 5\nclock-ms = 1000",
                8,
                "player[1].clock-ms",
                "not both",
            ),
            (
                "human = true\nclock-ms = 0",
                7,
                "player[1].clock-ms",
                "at least 1",
            ),
        ];
        for (keys, line, key, words) in refused {
            let e = err(&person(keys));
            assert_eq!(
                (e.line, e.key.as_str()),
                (line, key),
                "{keys}: {}",
                e.message
            );
            assert!(e.message.contains(words), "{keys}: {}", e.message);
        }
        // One terminal: one person.
        let two = BASE
            .replace("builtin = \"random\"", "human = true")
            .replace("builtin = \"greedy\"", "human = true");
        let e = err(&two);
        assert_eq!((e.line, e.key.as_str()), (10, "player[2].human"));
        assert!(e.message.contains("`a` is one already"), "{}", e.message);
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
        let e = err(&BASE.replace("builtin = \"random\"", "command = 5"));
        assert!(e.message.contains("as a list"), "{e}");
        let e = err(&BASE.replace("builtin = \"random\"", "command = [\"ruby\", 5]"));
        assert!(!e.message.contains("as a list"), "{e}");
        let e = err(&BASE.replace("builtin = \"random\"", "command = [\n  \"ruby\",\n  5,\n]"));
        assert!(!e.message.contains("as a list"), "{e}");
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

    /// An SPRT with `games-per-pairing = gpp`, `openings` (a table's
    /// body or nothing) and `extra` lines in `[sprt]`.
    fn sprt_file(gpp: u32, openings: &str, extra: &str) -> String {
        format!(
            "[tournament]\nname = \"t\"\ngames-per-pairing = {gpp}\n{openings}\n\
             [sprt]\nelo0 = 0\nelo1 = 5\n{extra}\n\
             [[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n\
             [[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n"
        )
    }

    #[test]
    fn an_sprt_whose_pairs_would_repeat_an_opening_is_refused_at_its_table() {
        // No openings (`random-plies = 0`): every pair from the initial position.
        let e = err(&sprt_file(10, "[openings]\nrandom-plies = 0\n", ""));
        assert_eq!((e.line, e.key.as_str()), (7, "sprt"), "{e}");
        assert!(e.message.contains("initial position"), "{e}");
        assert!(e.message.contains("repeat-openings = true"), "{e}");
        // 4 plies on 8x8: 244 sequences (perft 4, published), 300 pairs.
        let e = err(&sprt_file(600, "[openings]\nrandom-plies = 4\n", ""));
        assert!(e.message.contains("only 244 distinct"), "{e}");
        // Enough of them.
        let c = parse(
            Path::new("t.toml"),
            &sprt_file(488, "[openings]\nrandom-plies = 4\n", ""),
        )
        .unwrap();
        assert_eq!(c.sprt.unwrap().repeated_openings, None);
    }

    #[test]
    fn without_random_plies_or_file_8x8_plays_the_shipped_list_and_smaller_boards_random_plies() {
        let shipped = |text: &str| match parse(Path::new("t.toml"), text).unwrap().openings {
            OpeningSource::Shipped { name, lines } => (name, lines.len()),
            other => panic!("{other:?}"),
        };
        let (name, n) = shipped(&sprt_file(2, "", ""));
        assert_eq!(name, "openings/balanced-8.txt");
        assert_eq!(n, 2000);
        // A table with only a seed keeps the list (the seed is the bots').
        assert_eq!(shipped(&sprt_file(2, "[openings]\nseed = 9\n", "")).1, 2000);
        // An SPRT of up to 2000 pairs from it runs; one of more is refused.
        parse(Path::new("t.toml"), &sprt_file(4000, "", "")).unwrap();
        let e = err(&sprt_file(4002, "", ""));
        assert!(
            e.message
                .contains("the shipped openings/balanced-8.txt holds only 2000 distinct"),
            "{e}"
        );
        for (size, plies) in [(6, 4), (4, 2)] {
            let text = sprt_file(2, "", "").replace(
                "games-per-pairing = 2\n",
                &format!("games-per-pairing = 2\nsize = {size}\n"),
            );
            let c = parse(Path::new("t.toml"), &text).unwrap();
            assert_eq!(
                c.openings,
                OpeningSource::Random { plies, seed: 0 },
                "{size}"
            );
        }
    }

    #[test]
    fn repeat_openings_lets_an_sprt_repeat_them_and_its_verdicts_say_so() {
        let c = parse(
            Path::new("t.toml"),
            &sprt_file(
                20,
                "[openings]\nrandom-plies = 1\n",
                "repeat-openings = true",
            ),
        )
        .unwrap();
        let r = c.sprt.unwrap().repeated_openings.unwrap();
        assert_eq!((r.distinct, r.pairs), (4, 10));
        let status = crate::rating::SprtStatus::new(c.sprt.unwrap(), &[0; 5]);
        assert!(
            status
                .progress_note()
                .ends_with("openings repeat: 4 distinct for 10 pairs (repeat-openings = true)"),
            "{}",
            status.progress_note()
        );
    }
}
