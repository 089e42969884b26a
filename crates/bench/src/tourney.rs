//! Whole tournaments as a user runs them: a `tournament run` subprocess on
//! a generated tournament.toml, timed from start to exit (bot start-up,
//! results, logs and the final crosstable included).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use tournament::game::{transcript, Move, Position};
use tournament::results::{read_records, GAMES_FILE};

use super::sys::{wait_rusage, MemoryPeak, Sampler};

/// How a player is written into the generated tournament.toml.
pub enum Bot {
    Builtin(&'static str),
    Command(Vec<String>),
}

pub struct Setup<'a> {
    /// Player names and what they are.
    pub players: Vec<(String, &'a Bot)>,
    pub games_per_pairing: u32,
    pub concurrency: u32,
    /// Fixed openings (transcripts); none: every game from the start.
    pub openings: Vec<String>,
    /// Spawned bots run sandboxed (the default of tournament.toml).
    pub sandbox: bool,
    /// ... with only the layers from before each bot was alone
    /// (`tournament::sandbox::PREVIOUS_LAYERS_ENV`).
    pub previous_sandbox: bool,
    /// Spawned bots are offered the pipe (the default of tournament.toml);
    /// without, they talk through the files only.
    pub pipe: bool,
}

pub struct Outcome {
    pub games: usize,
    pub seconds: f64,
    /// Peak memory of the referee process (from `wait4`).
    pub maxrss_kib: u64,
    /// CPU seconds of the referee and the processes it waited for (its
    /// bots), from `wait4`.
    pub cpu_s: f64,
    /// Sampled memory, when asked for.
    pub sampled: Option<MemoryPeak>,
}

impl Outcome {
    pub fn games_per_second(&self) -> f64 {
        self.games as f64 / self.seconds
    }
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The tournament.toml of `setup`.
pub fn config_text(setup: &Setup<'_>) -> String {
    let mut t = String::new();
    let _ = write!(
        t,
        "[tournament]\nname = \"bench\"\nboard = \"board\"\nresults = \"results\"\n\
         games-per-pairing = {}\nconcurrency = {}\nsize = 8\n\n\
         [time]\nmove-ms = 5000\nstartup-ms = 10000\n\n",
        setup.games_per_pairing, setup.concurrency
    );
    if setup.openings.is_empty() {
        t.push_str("[openings]\nrandom-plies = 0\nseed = 1\n");
    } else {
        t.push_str("[openings]\nfile = \"openings.txt\"\nseed = 1\n");
    }
    for (name, bot) in &setup.players {
        let _ = write!(t, "\n[[player]]\nname = \"{name}\"\n");
        match bot {
            Bot::Builtin(b) => {
                let _ = writeln!(t, "builtin = \"{b}\"");
            }
            Bot::Command(argv) => {
                let list: Vec<String> = argv.iter().map(|a| toml_string(a)).collect();
                let _ = writeln!(t, "command = [{}]", list.join(", "));
                if !setup.sandbox {
                    t.push_str("sandbox = false\n");
                }
                if !setup.pipe {
                    t.push_str("pipe = false\n");
                }
            }
        }
    }
    t
}

/// Runs `setup` in the folder `dir` (which must be empty or fresh) with
/// `tournament -q run`, and checks that every game was played.
pub fn run(dir: &Path, setup: &Setup<'_>, sample: bool) -> anyhow::Result<Outcome> {
    run_with(dir, setup, sample, &[])
}

/// [`run`] with `extra` arguments after `run --config FILE`.
pub fn run_with(
    dir: &Path,
    setup: &Setup<'_>,
    sample: bool,
    extra: &[String],
) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(dir)?;
    let config = dir.join("tournament.toml");
    std::fs::write(&config, config_text(setup))?;
    if !setup.openings.is_empty() {
        std::fs::write(dir.join("openings.txt"), setup.openings.join("\n") + "\n")?;
    }
    let exe = crate::tournament_binary()?;
    let log = dir.join("run.log");
    let out = std::fs::File::create(&log)?;
    let clock = Instant::now();
    let mut command = Command::new(exe);
    if setup.previous_sandbox {
        command.env(tournament::sandbox::PREVIOUS_LAYERS_ENV, "1");
    } else {
        command.env_remove(tournament::sandbox::PREVIOUS_LAYERS_ENV);
    }
    let mut child = command
        .args(["-q", "run", "--config"])
        .arg(&config)
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .context("cannot start `tournament run`")?;
    let sampler = sample.then(|| Sampler::start(child.id(), Duration::from_millis(20)));
    let ended = wait_rusage(&mut child)?;
    let seconds = clock.elapsed().as_secs_f64();
    let sampled = sampler.map(Sampler::finish);
    if ended.code != Some(0) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        bail!(
            "`tournament run` ended with {:?}: {}",
            ended.code,
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        );
    }
    let results = dir.join("results");
    let games = read_records(&results.join(GAMES_FILE))?.len();
    let n = setup.players.len() as u32;
    let expected = (n * (n - 1) / 2 * setup.games_per_pairing) as usize;
    if games != expected {
        bail!("{games} games were played, not {expected}");
    }
    Ok(Outcome {
        games,
        seconds,
        maxrss_kib: ended.maxrss_kib,
        cpu_s: ended.cpu_s,
        sampled,
    })
}

/// A transcript of `plies` moves from the start (the first legal move each
/// time, forced passes skipped): the "near the end" opening of the scale
/// run, leaving `60 - plies` squares for the bots. Stops early if the game
/// would end.
pub fn near_end_opening(plies: usize) -> String {
    let mut pos = Position::start(8);
    let mut moves = Vec::new();
    while moves.len() < plies {
        if pos.must_pass() {
            pos = pos.pass_unchecked();
            continue;
        }
        let Some(&sq) = pos.legal_squares().first() else {
            break;
        };
        let (next, _) = pos.play(Move::Play(sq)).expect("a legal square");
        if next.is_over() {
            break;
        }
        pos = next;
        moves.push(Move::Play(sq));
    }
    transcript(&moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tournament::game::replay_transcript;

    #[test]
    fn the_scale_opening_replays_and_leaves_a_game() {
        let t = near_end_opening(50);
        let (moves, pos) = replay_transcript(Position::start(8), &t).unwrap();
        assert!(moves.len() >= 48, "{t}");
        assert!(!pos.is_over());
    }

    #[test]
    fn the_generated_config_quotes_commands() {
        let py = Bot::Command(vec!["py thon".into(), "a\"b.py".into()]);
        let rnd = Bot::Builtin("random");
        let text = config_text(&Setup {
            players: vec![("a".into(), &py), ("b".into(), &rnd)],
            games_per_pairing: 2,
            concurrency: 1,
            openings: vec![],
            sandbox: true,
            previous_sandbox: false,
            pipe: true,
        });
        assert!(
            text.contains(r#"command = ["py thon", "a\"b.py"]"#),
            "{text}"
        );
        assert!(text.contains("builtin = \"random\""));
    }
}
