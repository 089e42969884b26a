//! The `[[player]]` tables: names (unique, also regardless of case), how
//! each is started (`command`, `builtin` or `wait`) or whether it is a
//! person at the referee's terminal (`human = true`, at most one, with
//! their own `move-ms` or game clock `clock-ms` + `increment-ms`), its
//! sandbox limits, its protocol (`mailbox`, `gtp`, `nboard`) and engine
//! settings, its working folder (`dir`); at least two players.
//!
//! Owns those checks and their words; must not start or look for a
//! player's program (the preflight does).

use std::path::{Path, PathBuf};

use crate::engine::{EngineSettings, Protocol, NBOARD_VERSIONS};
use crate::mailbox::validate_name;
use crate::player::{absolute_anywhere, Launch, PlayerSpec, WorkDir, BUILTINS};

use super::error::{line_col, Source};
use super::raw::RawPlayer;
use super::ConfigError;

/// The players; `dir` locates relative paths, `seed` is the openings'
/// (a player's default), `size` the board's (NBoard plays 8×8 only),
/// `run` the run's own folders and files (no `read` may hold them).
pub(super) fn players(
    src: &Source<'_>,
    raw: &[RawPlayer],
    dir: &Path,
    seed: u64,
    size: u8,
    run: &[&Path],
) -> Result<Vec<PlayerSpec>, ConfigError> {
    let mut players: Vec<PlayerSpec> = Vec::new();
    // Names are unique regardless of case: on a case-insensitive drive
    // (SMB, macOS, Windows) `Random` and `random` would share a mailbox.
    let mut first_line: std::collections::HashMap<String, (usize, String)> = Default::default();
    for (i, p) in raw.iter().enumerate() {
        let key = |k: &str| format!("player[{}].{k}", i + 1);
        let name = p.name.get_ref().clone();
        validate_name(&name).map_err(|m| src.error_at(p.name.span(), Some(&key("name")), m))?;
        let line = line_col(src.text, p.name.span().start).0;
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
        let launch = match person_launch(src, p, i, &name)? {
            Some(person) => {
                if let Some(first) = players.iter().find(|q| q.is_person()) {
                    return Err(src.error_at(
                        p.human.as_ref().expect("a person says human").span(),
                        Some(&key("human")),
                        format!(
                            "player `{name}`: only one person can play at the referee's terminal, \
                             and `{}` is one already",
                            first.name
                        ),
                    ));
                }
                person
            }
            None => match (&p.command, &p.builtin, p.wait) {
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
                    format!("player `{name}` needs exactly one of `command = [...]`, `builtin = \"...\"`, `wait = true` or `human = true`"),
                ))
            }
        },
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
        let (protocol, engine) = engine_settings(src, p, i, &name, &launch, size)?;
        let pipe = !matches!(launch, Launch::Person { .. })
            && pipe_setting(src, p, i, &name, &launch, protocol)?;
        sandbox.enabled = p.sandbox.unwrap_or(true);
        sandbox.ponder = p.ponder.unwrap_or(false);
        sandbox.user = p.user.clone();
        if let Some(read) = &p.read {
            sandbox.read = read_setting(src, read, i, &name, dir, run)?;
        }
        let workdir = workdir_setting(src, p, i, &name, &launch, dir, run)?;
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
            base_dir: dir.to_path_buf(),
            seed: p.seed.unwrap_or(seed),
            board_as,
            sandbox,
            protocol,
            engine,
            pipe,
            workdir,
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
    Ok(players)
}

/// A person's launch (`human = true`: no program, their own time), or
/// `None` for a bot; a person's keys on a bot, or a program on a person,
/// are refused with what to do.
fn person_launch(
    src: &Source<'_>,
    p: &RawPlayer,
    i: usize,
    name: &str,
) -> Result<Option<Launch>, ConfigError> {
    let key = |k: &str| format!("player[{}].{k}", i + 1);
    let human = p.human.as_ref().filter(|h| *h.get_ref());
    let Some(human) = human else {
        let written = [
            ("move-ms", &p.move_ms),
            ("clock-ms", &p.clock_ms),
            ("increment-ms", &p.increment_ms),
        ];
        if let Some((k, v)) = written.iter().find_map(|(k, v)| v.as_ref().map(|v| (k, v))) {
            return Err(src.error_at(
                v.span(),
                Some(&key(k)),
                format!(
                    "player `{name}`: `{k}` is a person's time (with `human = true`); a bot \
                     keeps the event's time per move ([time] move-ms)"
                ),
            ));
        }
        return Ok(None);
    };
    if p.command.is_some() || p.builtin.is_some() || p.wait == Some(true) {
        return Err(src.error_at(
            human.span(),
            Some(&key("human")),
            format!(
                "player `{name}`: `human = true` is a person at the referee's terminal, who is \
                 not started: remove `command`, `builtin` or `wait`"
            ),
        ));
    }
    let move_ms = super::time::positive_ms(
        src,
        &p.move_ms,
        &key("move-ms"),
        crate::referee::person::PERSON_MOVE_MS,
    )?;
    let clock = match (&p.clock_ms, &p.increment_ms, &p.move_ms) {
        (None, Some(inc), _) => {
            return Err(src.error_at(
                inc.span(),
                Some(&key("increment-ms")),
                format!(
                    "player `{name}`: `increment-ms` is added to a game clock after each move; \
                     give the clock too (`clock-ms`)"
                ),
            ))
        }
        (Some(c), _, Some(_)) => {
            return Err(src.error_at(
                c.span(),
                Some(&key("clock-ms")),
                format!(
                    "player `{name}`: give either a time per move (`move-ms`) or a game clock \
                     (`clock-ms`), not both"
                ),
            ))
        }
        (Some(_), inc, None) => Some(crate::referee::GameClock {
            base_ms: super::time::positive_ms(src, &p.clock_ms, &key("clock-ms"), 1)?,
            increment_ms: inc.as_ref().map_or(0, |v| *v.get_ref()),
        }),
        (None, None, _) => None,
    };
    Ok(Some(Launch::Person { move_ms, clock }))
}

/// A player's `read`: files and folders (relative to the configuration's
/// folder) that exist and hold none of the run's own (`run`).
fn read_setting(
    src: &Source<'_>,
    read: &toml::Spanned<Vec<String>>,
    i: usize,
    name: &str,
    dir: &Path,
    run: &[&Path],
) -> Result<Vec<PathBuf>, ConfigError> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = Vec::new();
    for entry in read.get_ref() {
        let path = dir.join(entry);
        let wrong = if !path.exists() {
            Some("does not exist".to_string())
        } else {
            run.iter()
                .find(|own| real(own).starts_with(real(&path)))
                .map(|own| {
                    format!(
                        "holds {}, one of the run's own files (bots may not read the board, the results or the configuration)",
                        own.display()
                    )
                })
        };
        if let Some(wrong) = wrong {
            return Err(src.error_at(
                read.span(),
                Some(&format!("player[{}].read", i + 1)),
                format!(
                    "player `{name}`: {} {wrong} (read = [...] names files and folders the bot may read)",
                    path.display()
                ),
            ));
        }
        out.push(path);
    }
    Ok(out)
}

/// A player's `dir` and `dir-writable`: a folder (relative to the
/// configuration's folder) that exists and holds none of the run's own
/// (`run`), for a player whose process the referee starts.
fn workdir_setting(
    src: &Source<'_>,
    p: &RawPlayer,
    i: usize,
    name: &str,
    launch: &Launch,
    dir: &Path,
    run: &[&Path],
) -> Result<Option<WorkDir>, ConfigError> {
    let key = |k: &str| format!("player[{}].{k}", i + 1);
    let Some(d) = &p.dir else {
        if let Some(w) = &p.dir_writable {
            return Err(src.error_at(
                w.span(),
                Some(&key("dir-writable")),
                format!("player `{name}`: `dir-writable` needs `dir = \"…\"` (the folder it makes writable)"),
            ));
        }
        return Ok(None);
    };
    let fail =
        |m: String| Err(src.error_at(d.span(), Some(&key("dir")), format!("player `{name}`: {m}")));
    if !matches!(launch, Launch::Command(_)) {
        return fail(
            "`dir` is where the referee starts the player's `command`; a built-in or a bot started by hand has none (remove the line)".into(),
        );
    }
    let path = dir.join(d.get_ref());
    let real = match std::fs::canonicalize(&path) {
        Ok(r) if r.is_dir() => r,
        Ok(_) => return fail(format!("dir {} is not a folder", path.display())),
        Err(e) => return fail(format!("dir {} does not exist ({e}); `dir` is the folder its process starts in, relative to the configuration's folder", path.display())),
    };
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if let Some(own) = run.iter().find(|own| canon(own).starts_with(&real)) {
        return fail(format!(
            "dir {} holds {}, one of the run's own files (bots may not read the board, the results or the configuration): give the engine a folder of its own",
            path.display(),
            own.display()
        ));
    }
    Ok(Some(WorkDir {
        path: real,
        writable: p.dir_writable.as_ref().is_some_and(|w| *w.get_ref()),
    }))
}

/// A player's `pipe`: on unless it says otherwise, and said `true` only
/// where a pipe can be offered (a mailbox bot the referee starts).
fn pipe_setting(
    src: &Source<'_>,
    p: &RawPlayer,
    i: usize,
    name: &str,
    launch: &Launch,
    protocol: Protocol,
) -> Result<bool, ConfigError> {
    let Some(pipe) = &p.pipe else {
        return Ok(!matches!(launch, Launch::Waiting { .. }) && !protocol.is_engine());
    };
    let why = if matches!(launch, Launch::Waiting { .. }) {
        "a bot started by hand may be on another machine, so it is never offered a pipe"
    } else if protocol.is_engine() {
        "an engine already talks over its stdin and stdout"
    } else {
        return Ok(*pipe.get_ref());
    };
    if !*pipe.get_ref() {
        return Ok(false);
    }
    Err(src.error_at(
        pipe.span(),
        Some(&format!("player[{}].pipe", i + 1)),
        format!("player `{name}`: `pipe = true` is for a mailbox bot the referee starts; {why} (remove the line)"),
    ))
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
    if let Some(v) = &p.nboard_version {
        let wrong = if protocol != Protocol::Nboard {
            Some("`nboard-version` is only used with protocol = \"nboard\"".to_string())
        } else if !NBOARD_VERSIONS.contains(v.get_ref()) {
            Some(format!(
                "`nboard-version` must be 1 (Edax: `nboard 1`, bare moves) or 2 (the default), not {}",
                v.get_ref()
            ))
        } else {
            None
        };
        if let Some(why) = wrong {
            return Err(src.error_at(
                v.span(),
                Some(&key("nboard-version")),
                format!("player `{name}`: {why}"),
            ));
        }
        engine.nboard_version = *v.get_ref();
    }
    Ok((protocol, engine))
}

#[cfg(test)]
mod tests {
    use crate::config::{parse, ConfigError};
    use std::path::Path;

    const TWO: &str = "[tournament]\nname = \"t\"\n\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n[[player]]\nname = \"nb\"\ncommand = [\"edax\", \"-nboard\"]\nprotocol = \"nboard\"\n";

    fn err(config: &Path, text: &str) -> ConfigError {
        parse(config, text).unwrap_err()
    }

    #[test]
    fn a_players_dir_is_found_beside_the_file_or_named_with_line_and_field() {
        let folder = tempfile::tempdir().unwrap();
        let config = folder.path().join("t.toml");
        std::fs::create_dir(folder.path().join("edax")).unwrap();
        let c = parse(&config, &format!("{TWO}dir = \"edax\"\n")).unwrap();
        let dir = c.players[1].workdir.clone().unwrap();
        assert_eq!(
            dir.path,
            std::fs::canonicalize(folder.path().join("edax")).unwrap()
        );
        assert!(!dir.writable, "readable only, unless it says so");
        let c = parse(
            &config,
            &format!("{TWO}dir = \"edax\"\ndir-writable = true\n"),
        )
        .unwrap();
        assert!(c.players[1].workdir.as_ref().unwrap().writable);
        assert_eq!(c.players[0].workdir, None);

        let e = err(&config, &format!("{TWO}dir = \"ntest\"\n"));
        assert_eq!((e.line, e.key.as_str()), (12, "player[2].dir"), "{e}");
        assert!(
            e.message.contains("ntest") && e.message.contains("does not exist"),
            "{e}"
        );
        assert!(e.to_string().contains("t.toml:12:"), "{e}");
        let e = err(&config, &format!("{TWO}dir-writable = true\n"));
        assert_eq!(e.key, "player[2].dir-writable", "{e}");
        // The folder of the configuration holds the run's own files.
        let e = err(&config, &format!("{TWO}dir = \".\"\n"));
        assert!(e.message.contains("the run's own"), "{e}");
        let builtin = TWO.replace(
            "builtin = \"random\"",
            "builtin = \"random\"\ndir = \"edax\"",
        );
        let e = err(&config, &builtin);
        assert_eq!(e.key, "player[1].dir", "{e}");
    }

    #[test]
    fn nboard_version_is_1_or_2_and_for_nboard_only() {
        let config = Path::new("t.toml");
        let c = parse(config, TWO).unwrap();
        assert_eq!(c.players[1].engine.nboard_version, 2);
        let c = parse(config, &format!("{TWO}nboard-version = 1\n")).unwrap();
        assert_eq!(c.players[1].engine.nboard_version, 1);
        let e = err(config, &format!("{TWO}nboard-version = 3\n"));
        assert_eq!(
            (e.line, e.key.as_str()),
            (12, "player[2].nboard-version"),
            "{e}"
        );
        let gtp = TWO.replace("\"nboard\"", "\"gtp\"");
        let e = err(config, &format!("{gtp}nboard-version = 1\n"));
        assert!(e.message.contains("only used with protocol"), "{e}");
    }
}
