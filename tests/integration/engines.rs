//! The GTP and NBoard clients (src/engine) against real engine processes:
//! gtp-rhino (Debian's grhino, which CI installs), the test engines in
//! tests/fixtures written from the protocol descriptions, and their
//! misbehaving modes. The test plays the referee's part with the crate's
//! own rules: every engine move must be legal there.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tournament::engine::{
    Answer, Engine, EngineError, EngineSettings, GameStart, LineLink, Ply, Protocol,
};
use tournament::game::{parse_move, Color, Move, Position};

use super::fixture::project_root;

/// gtp-rhino's path: on PATH, or where Debian puts it (/usr/games, which
/// is not on every PATH).
pub fn gtp_rhino() -> PathBuf {
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("gtp-rhino"))
            .find(|p| p.is_file())
    });
    let found = on_path.unwrap_or_else(|| PathBuf::from("/usr/games/gtp-rhino"));
    assert!(
        found.is_file(),
        "gtp-rhino is not installed (apt-get install grhino; .ci/run installs it)"
    );
    found
}

pub fn fixture(name: &str) -> String {
    project_root()
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// A running engine, its client and everything it said on both pipes.
struct Running {
    child: Child,
    engine: Engine,
    lines: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(protocol: Protocol, argv: &[&str]) -> Running {
    let settings = EngineSettings {
        depth: 2,
        ..Default::default()
    };
    start_with(protocol, argv, settings)
}

fn start_with(protocol: Protocol, argv: &[&str], settings: EngineSettings) -> Running {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("engine starts");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let l = Arc::clone(&lines);
    let log: tournament::engine::LineLog =
        Arc::new(move |d, line| l.lock().unwrap().push(format!("{} {line}", d.arrow())));
    let link = LineLink::new(
        child.stdin.take().unwrap(),
        child.stdout.take().unwrap(),
        log,
    )
    .unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let (mut pipe, s) = (child.stderr.take().unwrap(), Arc::clone(&stderr));
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        s.lock().unwrap().push_str(&text);
    });
    let engine = Engine::new(protocol, link, settings).unwrap();
    Running {
        child,
        engine,
        lines,
        stderr,
    }
}

const CLOCK: u64 = 5000;

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn begin(r: &mut Running, color: Color) {
    r.engine
        .begin_game(&GameStart {
            size: 8,
            color,
            names: ["black-side".into(), "white-side".into()],
            move_ms: CLOCK,
        })
        .unwrap();
    assert_eq!(r.engine.answer(soon()), Ok(Answer::Ready), "{:?}", r.lines);
}

/// A small deterministic generator for the opponent's moves.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// Plays one game: the engine as `color`, random moves for the other side
/// (the referee passes for either side without a move). Returns the number
/// of forced passes (either side's) it was told of before one of its moves.
fn client_game(r: &mut Running, color: Color, seed: u64) -> usize {
    begin(r, color);
    let mut rng = Lcg(seed);
    let mut pos = Position::start(8);
    let mut history: Vec<Ply> = Vec::new();
    let mut engine_passes = 0;
    let mut passed = false;
    while !pos.is_over() {
        let side = pos.to_move();
        let mv = if pos.legal_moves() == 0 {
            passed = true;
            Move::Pass
        } else if side == color {
            engine_passes += usize::from(std::mem::take(&mut passed));
            r.engine.ask_move(&history, color, CLOCK).unwrap();
            let answer = r.engine.answer(soon());
            let Ok(Answer::Move(text)) = answer else {
                panic!("{answer:?}\n{:?}\n{}", r.lines, r.stderr.lock().unwrap());
            };
            let mv = parse_move(&text, 8).unwrap_or_else(|e| panic!("{text}: {e}"));
            pos.check(mv)
                .unwrap_or_else(|e| panic!("engine move {text} illegal: {e}\n{:?}", r.lines));
            mv
        } else {
            let squares = pos.legal_squares();
            Move::Play(squares[rng.next(squares.len())])
        };
        pos = pos.play(mv).unwrap().0;
        history.push(Ply { color: side, mv });
    }
    engine_passes
}

#[test]
fn gtp_rhino_plays_whole_games_in_our_notation() {
    if !crate::needs::have(&[crate::needs::GTP_RHINO]) {
        return;
    }
    let rhino = gtp_rhino();
    let mut r = start(Protocol::Gtp, &[rhino.to_str().unwrap(), "-l", "1"]);
    // Rows from the top: after black's f5, white's answers d6, f4 and f6
    // are the only legal ones (a board counted from the bottom would give
    // others).
    begin(&mut r, Color::White);
    let f5 = parse_move("f5", 8).unwrap();
    r.engine
        .ask_move(
            &[Ply {
                color: Color::Black,
                mv: f5,
            }],
            Color::White,
            CLOCK,
        )
        .unwrap();
    let Ok(Answer::Move(first)) = r.engine.answer(soon()) else {
        panic!("{:?}", r.lines);
    };
    assert!(
        ["d6", "f4", "f6"].contains(&first.to_ascii_lowercase().as_str()),
        "{first}"
    );
    // Several games on one process, both colours, until the engine has
    // been told of a forced pass (`play <color> pass`).
    let mut passes = 0;
    for seed in 0..40 {
        let color = if seed % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        passes += client_game(&mut r, color, seed);
        if passes > 0 && seed >= 3 {
            break;
        }
    }
    assert!(passes > 0, "no game had a forced pass");
    let lines = r.lines.lock().unwrap();
    assert!(lines.iter().any(|l| l == "→ list_commands"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("→ time_settings 0 5 1")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("→ time_left black 5 1")),
        "{lines:?}"
    );
    assert!(lines
        .iter()
        .any(|l| l.starts_with("→ play ") && l.ends_with(" pass")));
}

#[test]
fn the_gtp_test_engine_plays_whole_games() {
    let script = fixture("gtp_engine.py");
    let mut r = start(Protocol::Gtp, &["python3", &script]);
    for seed in 0..4 {
        let color = if seed % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        client_game(&mut r, color, 100 + seed);
    }
}

#[test]
fn the_nboard_test_engine_plays_whole_games_and_its_chatter_is_ignored() {
    let script = fixture("nboard_engine.py");
    let mut r = start(Protocol::Nboard, &["python3", &script]);
    let mut passes = 0;
    for seed in 0..40 {
        let color = if seed % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        passes += client_game(&mut r, color, 200 + seed);
        if passes > 0 && seed >= 3 {
            break;
        }
    }
    assert!(passes > 0, "no game had a forced pass");
    let lines = r.lines.lock().unwrap();
    assert_eq!(lines[0], "→ nboard 2", "{lines:?}");
    assert_eq!(lines[1], "→ set depth 2", "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("→ set game (;GM[Othello]")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("TI[0:05/0:05,N1/]")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l == "→ move PA"));
    assert!(
        lines.iter().any(|l| l.starts_with("← status ")),
        "{lines:?}"
    );
    // It never complained of a move it was told.
    assert!(
        !r.stderr.lock().unwrap().contains("illegal move"),
        "{}",
        r.stderr.lock().unwrap()
    );
}

#[test]
fn an_nboard_version_1_engine_plays_whole_games_told_bare_moves() {
    let script = fixture("nboard_engine.py");
    let v1 = EngineSettings {
        depth: 2,
        nboard_version: 1,
    };
    let mut r = start_with(Protocol::Nboard, &["python3", &script, "v1"], v1);
    let mut passes = 0;
    for seed in 0..40 {
        let color = [Color::Black, Color::White][seed as usize % 2];
        passes += client_game(&mut r, color, 300 + seed);
        if passes > 0 && seed >= 3 {
            break;
        }
    }
    assert!(passes > 0, "no game had a forced pass");
    let lines = r.lines.lock().unwrap();
    assert_eq!(lines[0], "→ nboard 1", "{lines:?}");
    let bare = |l: &&String| {
        let t = l.trim_start_matches("→ ");
        l.starts_with("→ ") && (t == "PA" || (t.len() == 2 && parse_move(t, 8).is_ok()))
    };
    assert!(lines.iter().filter(bare).count() > 10, "{lines:?}");
    assert!(lines.iter().any(|l| l == "→ PA"), "a pass, bare too");
    assert!(!lines.iter().any(|l| l.starts_with("→ move ")), "{lines:?}");
    // Its answers have Edax's spaces: `=== F5 -1.00 0.0`.
    assert!(lines.iter().any(|l| l.ends_with(" -1.00 0.0")), "{lines:?}");
    let stderr = r.stderr.lock().unwrap();
    assert!(!stderr.contains("illegal move"), "{stderr}");
    drop((lines, stderr));

    // Spoken to in version 2, it complains and leaves, as Edax would.
    let v2 = EngineSettings {
        depth: 2,
        nboard_version: 2,
    };
    let mut r = start_with(Protocol::Nboard, &["python3", &script, "v1"], v2);
    let start = GameStart {
        size: 8,
        color: Color::Black,
        names: ["a".into(), "b".into()],
        move_ms: CLOCK,
    };
    let _ = r.engine.begin_game(&start);
    assert!(
        matches!(r.engine.answer(soon()), Err(EngineError::Closed { .. })),
        "{:?}",
        r.lines
    );
}

/// The first answer to a move request of an engine in `mode`, as white
/// after black's f5.
fn first_answer(
    protocol: Protocol,
    script: &str,
    mode: &str,
    secs: u64,
) -> Result<Answer, EngineError> {
    let script = fixture(script);
    let mut r = start(protocol, &["python3", &script, mode]);
    begin(&mut r, Color::White);
    let history = [Ply {
        color: Color::Black,
        mv: parse_move("f5", 8).unwrap(),
    }];
    r.engine.ask_move(&history, Color::White, CLOCK).unwrap();
    r.engine.answer(Instant::now() + Duration::from_secs(secs))
}

#[test]
fn misbehaving_gtp_engines_are_told_apart() {
    let pos = Position::start(8)
        .play(parse_move("f5", 8).unwrap())
        .unwrap()
        .0;
    // A wrong move is an answer: the referee's rules refuse it.
    let Ok(Answer::Move(wrong)) = first_answer(Protocol::Gtp, "gtp_engine.py", "wrong-move", 10)
    else {
        panic!("wrong-move");
    };
    assert!(
        pos.check(parse_move(&wrong, 8).unwrap()).is_err(),
        "{wrong}"
    );
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "bad-vertex", 10),
        Ok(Answer::Move("z9".into()))
    );
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "error", 10),
        Err(EngineError::Refused {
            command: "genmove white".into(),
            answer: "? cannot think".into()
        })
    );
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "refuse-play", 10),
        Err(EngineError::Refused {
            command: "play black F5".into(),
            answer: "? illegal move".into()
        })
    );
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "resign", 10),
        Err(EngineError::Resigned {
            command: "genmove white".into(),
            answer: "= resign".into()
        })
    );
    let t0 = Instant::now();
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "hang", 1),
        Err(EngineError::Timeout {
            command: "genmove white".into()
        })
    );
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    assert_eq!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "crash", 10),
        Err(EngineError::Closed {
            command: "genmove white".into()
        })
    );
    assert!(matches!(
        first_answer(Protocol::Gtp, "gtp_engine.py", "garbage", 10),
        Err(EngineError::Garbage { ref command, .. }) if command == "genmove white"
    ));
}

#[test]
fn misbehaving_nboard_engines_are_told_apart() {
    let Ok(Answer::Move(wrong)) =
        first_answer(Protocol::Nboard, "nboard_engine.py", "wrong-move", 10)
    else {
        panic!("wrong-move");
    };
    let pos = Position::start(8)
        .play(parse_move("f5", 8).unwrap())
        .unwrap()
        .0;
    assert!(
        pos.check(parse_move(&wrong, 8).unwrap()).is_err(),
        "{wrong}"
    );
    assert_eq!(
        first_answer(Protocol::Nboard, "nboard_engine.py", "hang", 1),
        Err(EngineError::Timeout {
            command: "go".into()
        })
    );
    assert_eq!(
        first_answer(Protocol::Nboard, "nboard_engine.py", "crash", 10),
        Err(EngineError::Closed {
            command: "go".into()
        })
    );
    assert!(matches!(
        first_answer(Protocol::Nboard, "nboard_engine.py", "garbage", 10),
        Err(EngineError::Garbage { ref command, .. }) if command == "go"
    ));
    // No pong: never ready.
    let script = fixture("nboard_engine.py");
    let mut r = start(Protocol::Nboard, &["python3", &script, "no-pong"]);
    r.engine
        .begin_game(&GameStart {
            size: 8,
            color: Color::Black,
            names: ["a".into(), "b".into()],
            move_ms: CLOCK,
        })
        .unwrap();
    assert_eq!(
        r.engine.answer(Instant::now() + Duration::from_millis(500)),
        Err(EngineError::Timeout {
            command: "ping 1".into()
        })
    );
}

// ---- Engines in the referee's games, sandboxed like any spawned bot ----

use tournament::event::Silent;
use tournament::player::{Instance, Launch, PlayerSpec, Restart};
use tournament::record::{EndReason, GameRecord};
use tournament::referee::{play_game, GameSpec, Rules, TimeControl};

use super::fixture::{tournament_bin, Scratch};

fn engine_spec(name: &str, protocol: Protocol, argv: &[&str]) -> Arc<PlayerSpec> {
    tournament::program::set(tournament_bin());
    Arc::new(PlayerSpec {
        name: name.into(),
        launch: Launch::Command(argv.iter().map(|a| a.to_string()).collect()),
        restart: Restart::Reuse,
        base_dir: project_root(),
        seed: 1,
        board_as: None,
        sandbox: Default::default(),
        protocol,
        engine: EngineSettings {
            depth: 3,
            ..Default::default()
        },
        pipe: false,
        workdir: None,
    })
}

fn builtin(name: &str) -> Arc<PlayerSpec> {
    tournament::program::set(tournament_bin());
    Arc::new(PlayerSpec {
        launch: Launch::Command(vec![
            tournament_bin().display().to_string(),
            "bot".into(),
            name.into(),
        ]),
        ..PlayerSpec::builtin(name, 1)
    })
}

fn spec(id: &str, opening: &str, move_ms: u64) -> GameSpec {
    GameSpec {
        id: id.into(),
        round: 1,
        size: 8,
        opening: opening.into(),
        time: TimeControl {
            move_ms,
            startup_ms: 5000,
            ..TimeControl::default()
        },
        rules: Rules::default(),
    }
}

fn replays(r: &GameRecord) {
    let (moves, end) =
        tournament::game::replay_transcript(Position::start(8), &r.transcript).unwrap();
    assert!(end.is_over(), "{r:?}");
    assert_eq!(moves.len(), r.moves.len());
}

#[test]
fn gtp_rhino_and_the_nboard_engine_play_refereed_games_on_one_process_each() {
    if !crate::needs::have(&[crate::needs::GTP_RHINO]) {
        return;
    }
    let s = Scratch::new();
    let rhino = gtp_rhino();
    let mut gtp = Instance::new(
        engine_spec(
            "rhino",
            Protocol::Gtp,
            &[rhino.to_str().unwrap(), "-l", "1"],
        ),
        s.path(),
        1,
    )
    .unwrap();
    let script = fixture("nboard_engine.py");
    let mut nb = Instance::new(
        engine_spec("nboard-test", Protocol::Nboard, &["python3", &script]),
        s.path(),
        1,
    )
    .unwrap();
    for (g, opening) in ["f5d6c3", "", "c4e3f6e6f5"].iter().enumerate() {
        let (b, w) = if g % 2 == 0 {
            (&mut gtp, &mut nb)
        } else {
            (&mut nb, &mut gtp)
        };
        let r = play_game(&spec(&format!("e{g}"), opening, 5000), b, w, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal, "{r:?}");
        assert!(r.transcript.starts_with(opening), "{r:?}");
        replays(&r);
    }
    assert_eq!(gtp.starts(), 1, "one gtp-rhino process for every game");
    assert_eq!(nb.starts(), 1, "one NBoard process for every game");
}

/// One game of the engine in `mode` as white against built-in greedy.
fn engine_forfeit(protocol: Protocol, script: &str, mode: &str) -> (GameRecord, Instance, Scratch) {
    let s = Scratch::new();
    let script = fixture(script);
    let mut engine = Instance::new(
        engine_spec("misfit", protocol, &["python3", &script, mode]),
        s.path(),
        1,
    )
    .unwrap();
    let mut greedy = Instance::new(builtin("greedy"), s.path(), 1).unwrap();
    // 4 s a move: thirteen such games run at once, and only the engine
    // that hangs may run out of time.
    let r = play_game(&spec(mode, "", 4000), &mut greedy, &mut engine, &Silent).unwrap();
    drop(greedy);
    (r, engine, s)
}

#[test]
fn misbehaving_engines_are_adjudicated_each_with_its_reason() {
    use Protocol::{Gtp, Nboard};
    let cases: &[(Protocol, &str, &str, EndReason, &str)] = &[
        (
            Gtp,
            "gtp_engine.py",
            "wrong-move",
            EndReason::NoFlips,
            "flips no disc",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "bad-vertex",
            EndReason::Unparseable,
            "\"z9\"",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "error",
            EndReason::Unparseable,
            "? cannot think (to `genmove white`)",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "refuse-play",
            EndReason::Unparseable,
            "? illegal move (to `play black",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "resign",
            EndReason::Unparseable,
            "= resign",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "hang",
            EndReason::Timeout,
            "no answer in time",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "crash",
            EndReason::Exited,
            "exit status 3",
        ),
        (
            Gtp,
            "gtp_engine.py",
            "garbage",
            EndReason::Garbage,
            "genmove white",
        ),
        (
            Nboard,
            "nboard_engine.py",
            "wrong-move",
            EndReason::NoFlips,
            "flips no disc",
        ),
        (
            Nboard,
            "nboard_engine.py",
            "hang",
            EndReason::Timeout,
            "no answer in time",
        ),
        (
            Nboard,
            "nboard_engine.py",
            "crash",
            EndReason::Exited,
            "exit status 3",
        ),
        (
            Nboard,
            "nboard_engine.py",
            "garbage",
            EndReason::Garbage,
            "`go`",
        ),
        (
            Nboard,
            "nboard_engine.py",
            "no-pong",
            EndReason::NoReady,
            "READY",
        ),
    ];
    std::thread::scope(|scope| {
        let runs: Vec<_> = cases
            .iter()
            .map(|case| scope.spawn(move || (case, engine_forfeit(case.0, case.1, case.2).0)))
            .collect();
        for run in runs {
            let ((protocol, _, mode, reason, words), r) = run.join().unwrap();
            let forfeit = r
                .forfeit
                .as_ref()
                .unwrap_or_else(|| panic!("{protocol} {mode}: {r:?}"));
            assert_eq!(r.reason, *reason, "{protocol} {mode}: {forfeit:?}");
            assert_eq!(forfeit.color, Color::White, "{protocol} {mode}");
            assert!(
                forfeit.detail.contains(words),
                "{protocol} {mode}: {:?} lacks {words:?}",
                forfeit.detail
            );
        }
    });
}

#[test]
fn an_engine_that_forfeited_is_started_again_for_its_next_game() {
    let (r, mut engine, s) = engine_forfeit(Protocol::Gtp, "gtp_engine.py", "crash");
    assert_eq!(r.reason, EndReason::Exited);
    // Its stderr (the commands it echoed) is in the record.
    let tail = &r.forfeit.as_ref().unwrap().stderr_tail;
    assert!(
        tail.iter().any(|l| l.contains("gtp_engine: genmove white")),
        "{tail:?}"
    );
    let mut greedy = Instance::new(builtin("greedy"), s.path(), 1).unwrap();
    let again = play_game(&spec("again", "", 1500), &mut greedy, &mut engine, &Silent).unwrap();
    assert_eq!(again.reason, EndReason::Exited);
    assert_eq!(engine.starts(), 2);
}

/// The issue's round robin: gtp-rhino level 1, the GTP test engine, the
/// NBoard test engine, a built-in bot and a Ruby mailbox bot; 20 games,
/// none forfeited, every game's GGF read back move for move, the engines'
/// protocol lines in the game logs.
#[test]
fn a_round_robin_of_engines_and_bots_plays_twenty_games_without_a_forfeit() {
    if !crate::needs::have(&[crate::needs::GTP_RHINO, crate::needs::RUBY]) {
        return;
    }
    let s = Scratch::new();
    let rhino = gtp_rhino();
    let toml = format!(
        r#"
[tournament]
name = "Engines and bots"
format = "round-robin"
games-per-pairing = 2
concurrency = 2
size = 8

[time]
move-ms = 5000
startup-ms = 10000

[openings]
random-plies = 4
seed = 7

[[player]]
name = "rhino-1"
command = ["{rhino}", "-l", "1"]
protocol = "gtp"

[[player]]
name = "gtp-test"
command = ["python3", "{gtp}"]
protocol = "gtp"

[[player]]
name = "nboard-test"
command = ["python3", "{nboard}"]
protocol = "nboard"
depth = 4

[[player]]
name = "greedy"
builtin = "greedy"

[[player]]
name = "ruby-greedy"
command = ["ruby", "{ruby}"]
"#,
        rhino = rhino.display(),
        gtp = fixture("gtp_engine.py"),
        nboard = fixture("nboard_engine.py"),
        ruby = project_root().join("bots/ruby/greedy.rb").display(),
    );
    s.write("tournament.toml", &toml);
    s.run_ok(&["run", "--strict"], 600);
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let records: Vec<GameRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 20, "10 pairings × 2 games");
    for r in &records {
        assert_eq!(r.reason, EndReason::Normal, "{}: {:?}", r.id, r.forfeit);
        let ggf = std::fs::read_to_string(s.join(&format!("results/games/{}.ggf", r.id))).unwrap();
        let games = super::records::parse_ggf(&ggf);
        assert_eq!(games.len(), 1);
        super::records::check_ggf_game(&games[0], r);
    }
    // Each engine played 8 games; its protocol lines are in their logs.
    for (name, line) in [
        ("rhino-1", "→ genmove"),
        ("gtp-test", "→ genmove"),
        ("nboard-test", "→ go"),
    ] {
        let games: Vec<_> = records
            .iter()
            .filter(|r| r.black == name || r.white == name)
            .collect();
        assert_eq!(games.len(), 8, "{name}");
        let log =
            std::fs::read_to_string(s.join(&format!("results/logs/{}.log", games[0].id))).unwrap();
        assert!(log.contains(line), "{name}: {log}");
    }
}

#[test]
fn check_bot_checks_an_engine_by_its_protocol() {
    if !crate::needs::have(&[crate::needs::GTP_RHINO]) {
        return;
    }
    let s = Scratch::new();
    let rhino = gtp_rhino();
    let out = s
        .cmd(&[
            "check-bot",
            "--protocol",
            "gtp",
            "--",
            rhino.to_str().unwrap(),
            "-l",
            "1",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(stdout.matches("  ok    game").count(), 2, "{stdout}");
    let script = fixture("nboard_engine.py");
    let out = s
        .cmd(&[
            "check-bot",
            "--protocol",
            "nboard",
            "--",
            "python3",
            &script,
            "wrong-move",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(tournament::error::exit::BOT_NONCOMPLIANT),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL  game 1 as black: no-flips"),
        "{stdout}"
    );
    // An engine of NBoard version 1 that reads its data from its working
    // directory: checked with --nboard-version and --dir as it will play.
    s.write("home/coefficients/weights.txt", "1\n");
    let home = s.join("home").display().to_string();
    let engine = fixture("dir_engine.py");
    let check = |extra: &[&str]| {
        let mut args = vec!["check-bot", "--protocol", "nboard"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "python3", &engine, "nboard_engine.py", "v1"]);
        let out = s
            .cmd(&args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), stdout)
    };
    let (code, stdout) = check(&["--nboard-version", "1", "--dir", &home]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(stdout.matches("  ok    game").count(), 2, "{stdout}");
    let (code, stdout) = check(&["--nboard-version", "1"]);
    assert_eq!(
        code,
        Some(tournament::error::exit::BOT_NONCOMPLIANT),
        "{stdout}"
    );
}

// ---- Engines written independently from the protocol descriptions ----
//
// tests/fixtures/gtp_engine_alt.js (node) and nboard_engine_alt.rb (ruby)
// were written from the GTP 2 and NBoard descriptions, not from the
// referee's clients, and take the liberties those allow (`liberal`); their
// hostile modes are what an engine author could do to the referee.

fn alt_gtp(mode: &str) -> Vec<String> {
    vec!["node".into(), fixture("gtp_engine_alt.js"), mode.into()]
}

fn alt_nboard(mode: &str) -> Vec<String> {
    vec!["ruby".into(), fixture("nboard_engine_alt.rb"), mode.into()]
}

/// One game of the engine `argv` as white against built-in greedy, with
/// `move_ms` a move; how long it took.
fn alt_game(
    protocol: Protocol,
    argv: &[String],
    sandboxed: bool,
    move_ms: u64,
) -> (GameRecord, Duration) {
    let s = Scratch::new();
    tournament::program::set(tournament_bin());
    let player = Arc::new(PlayerSpec {
        name: "alt".into(),
        launch: Launch::Command(argv.to_vec()),
        restart: Restart::Reuse,
        base_dir: project_root(),
        seed: 1,
        board_as: None,
        sandbox: tournament::sandbox::Settings {
            enabled: sandboxed,
            ..Default::default()
        },
        protocol,
        engine: EngineSettings {
            depth: 3,
            ..Default::default()
        },
        pipe: false,
        workdir: None,
    });
    let mut engine = Instance::new(player, s.path(), 1).unwrap();
    let mut greedy = Instance::new(builtin("greedy"), s.path(), 1).unwrap();
    let t0 = Instant::now();
    let r = play_game(
        &spec(&argv[2], "", move_ms),
        &mut greedy,
        &mut engine,
        &Silent,
    )
    .unwrap();
    (r, t0.elapsed())
}

/// The independent engines, every liberty on, beside gtp-rhino and a
/// built-in in a real `tournament run`: 20 games, none forfeited, and
/// their logs show the liberties were taken (an id on a GTP answer, an
/// answer of two lines, NBoard chatter in Latin-1).
#[test]
fn independent_engines_taking_every_liberty_play_a_tournament_without_a_forfeit() {
    use crate::needs::{GTP_RHINO, NODE, RUBY};
    if !crate::needs::have(&[NODE, RUBY, GTP_RHINO]) {
        return;
    }
    let s = Scratch::new();
    let toml = format!(
        r#"
[tournament]
name = "Independent engines"
format = "round-robin"
games-per-pairing = 2
concurrency = 2
size = 8

[time]
move-ms = 5000
startup-ms = 10000

[openings]
random-plies = 4
seed = 11

[[player]]
name = "rhino-1"
command = ["{rhino}", "-l", "1"]
protocol = "gtp"

[[player]]
name = "gtp-alt"
command = ["node", "{gtp}", "liberal"]
protocol = "gtp"

[[player]]
name = "nboard-alt"
command = ["ruby", "{nboard}", "liberal"]
protocol = "nboard"
depth = 4

[[player]]
name = "nboard-edax-style"
command = ["ruby", "{nboard}", "liberal,edax"]
protocol = "nboard"

[[player]]
name = "greedy"
builtin = "greedy"
"#,
        rhino = gtp_rhino().display(),
        gtp = fixture("gtp_engine_alt.js"),
        nboard = fixture("nboard_engine_alt.rb"),
    );
    s.write("tournament.toml", &toml);
    s.run_ok(&["run", "--strict"], 900);
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let records: Vec<GameRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 20, "10 pairings × 2 games");
    for r in &records {
        assert_eq!(r.reason, EndReason::Normal, "{}: {:?}", r.id, r.forfeit);
        replays(r);
    }
    // Every protocol line of `name`'s instance, over all its games (its
    // first words to the engine are in its first game's log).
    let log_of = |name: &str| {
        let tag = format!(" bot={name}.1 stream=protocol");
        let mut lines = String::new();
        for r in records
            .iter()
            .filter(|r| r.black == name || r.white == name)
        {
            let log =
                std::fs::read_to_string(s.join(&format!("results/logs/{}.log", r.id))).unwrap();
            for line in log.lines().filter(|l| l.contains(&tag)) {
                lines.push_str(line);
                lines.push('\n');
            }
        }
        lines
    };
    let gtp = log_of("gtp-alt");
    assert!(gtp.contains("← =0   2"), "an id on an answer: {gtp}");
    assert!(gtp.contains("← node v"), "version's second line: {gtp}");
    assert!(gtp.contains("→ genmove"), "{gtp}");
    assert!(!gtp.contains("→ time_left"), "not listed, not sent: {gtp}");
    let nboard = log_of("nboard-alt");
    assert!(nboard.contains("← set myname"), "{nboard}");
    assert!(
        nboard.contains("bra-like engine"),
        "Latin-1 chatter: {nboard}"
    );
    assert!(log_of("nboard-edax-style").contains(" 0.50 0.0"));
}

#[test]
fn check_bot_passes_the_independent_engines() {
    use crate::needs::{NODE, RUBY};
    if !crate::needs::have(&[NODE, RUBY]) {
        return;
    }
    let s = Scratch::new();
    for (protocol, argv) in [
        ("gtp", alt_gtp("liberal")),
        ("nboard", alt_nboard("liberal,edax")),
    ] {
        let mut args = vec!["check-bot", "--protocol", protocol, "--"];
        args.extend(argv.iter().map(String::as_str));
        let out = s
            .cmd(&args)
            .timeout(Duration::from_secs(180))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{protocol}: {stdout}");
        assert_eq!(stdout.matches("  ok    game").count(), 2, "{stdout}");
    }
}

/// What an engine author could do to the referee: each ends as a result
/// with its reason, in bounded time, and an engine whose misbehaviour
/// does not touch the protocol still plays.
#[test]
fn hostile_engines_end_as_results_with_their_reasons() {
    use crate::needs::{NODE, RUBY};
    use Protocol::{Gtp, Nboard};
    if !crate::needs::have(&[NODE, RUBY]) {
        return;
    }
    // (protocol, argv, sandboxed, move-ms, reason, words in the detail,
    // longest the game may take)
    type Case = (
        Protocol,
        Vec<String>,
        bool,
        u64,
        EndReason,
        &'static str,
        u64,
    );
    let cases: Vec<Case> = vec![
        // Lines without end: out of protocol at once (GTP), or out of
        // time without holding the referee or its memory (NBoard).
        (
            Gtp,
            alt_gtp("flood"),
            true,
            1500,
            EndReason::Garbage,
            "\"flood line\" to `genmove white`",
            60,
        ),
        (
            Nboard,
            alt_nboard("flood"),
            true,
            1500,
            EndReason::Timeout,
            "no answer in time",
            60,
        ),
        // A line that never ends, or a huge one.
        (
            Gtp,
            alt_gtp("endless-line"),
            true,
            1500,
            EndReason::Timeout,
            "no answer in time",
            60,
        ),
        (
            Nboard,
            alt_nboard("endless-line"),
            true,
            1500,
            EndReason::Timeout,
            "no answer in time",
            60,
        ),
        (
            Gtp,
            alt_gtp("huge-line"),
            true,
            1500,
            EndReason::Garbage,
            "[…cut]",
            60,
        ),
        // A move for the other colour.
        (
            Gtp,
            alt_gtp("other-color"),
            true,
            1500,
            EndReason::NoFlips,
            "flips no disc",
            60,
        ),
        (
            Nboard,
            alt_nboard("other-color"),
            true,
            1500,
            EndReason::NoFlips,
            "flips no disc",
            60,
        ),
        // A move in out.txt and on stderr, nothing on stdout.
        (
            Gtp,
            alt_gtp("other-channel"),
            true,
            1500,
            EndReason::Timeout,
            "no answer in time",
            60,
        ),
        (
            Nboard,
            alt_nboard("other-channel"),
            true,
            1500,
            EndReason::Timeout,
            "no answer in time",
            60,
        ),
        // Ended, but a child it left keeps its stdout open (no sandbox, so
        // nothing kills the child with it): its end is seen at once, not
        // after the move time.
        (
            Gtp,
            alt_gtp("linger-crash"),
            false,
            30_000,
            EndReason::Exited,
            "exit status 4",
            20,
        ),
        (
            Nboard,
            alt_nboard("linger-crash"),
            false,
            30_000,
            EndReason::Exited,
            "exit status 4",
            20,
        ),
        // Answers before being asked, a NUL in a status line: NBoard's
        // ping/pong keeps it in step, chatter is not an answer.
        (
            Nboard,
            alt_nboard("early"),
            true,
            3000,
            EndReason::Normal,
            "",
            120,
        ),
        (
            Nboard,
            alt_nboard("binary-status"),
            true,
            3000,
            EndReason::Normal,
            "",
            120,
        ),
        // A child in a session of its own, left running: not the game's
        // business.
        (
            Gtp,
            alt_gtp("setsid-linger"),
            false,
            3000,
            EndReason::Normal,
            "",
            120,
        ),
    ];
    let results: Vec<_> = cases
        .chunks(4)
        .flat_map(|batch| {
            std::thread::scope(|scope| {
                let runs: Vec<_> = batch
                    .iter()
                    .map(|c| scope.spawn(move || (c, alt_game(c.0, &c.1, c.2, c.3))))
                    .collect();
                runs.into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for ((protocol, argv, _, _, reason, words, most), (r, took)) in results {
        let what = format!("{protocol} {}", argv[2]);
        assert_eq!(r.reason, *reason, "{what}: {:?}", r.forfeit);
        assert!(took < Duration::from_secs(*most), "{what} took {took:?}");
        match &r.forfeit {
            Some(f) => {
                assert_eq!(f.color, Color::White, "{what}");
                assert!(
                    f.detail.contains(words),
                    "{what}: {:?} lacks {words:?}",
                    f.detail
                );
                assert!(!f.detail.contains("out.txt"), "{what}: {:?}", f.detail);
            }
            None => replays(&r),
        }
    }
}

/// Issue 30: gtp-rhino, white against a bot that exits at start (its
/// answers to the set-up commands stay unread on its pipe), then a game
/// against built-in greedy, twenty times over: it never forfeits, and its
/// one process serves every game (the answers it owed were read before
/// its next game, not taken for that game's).
#[test]
fn gtp_rhino_after_an_opponent_that_exits_at_start_never_forfeits() {
    if !crate::needs::have(&[crate::needs::GTP_RHINO]) {
        return;
    }
    let s = Scratch::new();
    let rhino = gtp_rhino();
    let mut gtp = Instance::new(
        engine_spec(
            "rhino",
            Protocol::Gtp,
            &[rhino.to_str().unwrap(), "-l", "1"],
        ),
        s.path(),
        1,
    )
    .unwrap();
    let quitter = Arc::new(PlayerSpec {
        protocol: Protocol::Mailbox,
        pipe: false,
        ..(*engine_spec(
            "quitter",
            Protocol::Mailbox,
            &["python3", "-c", "import time; time.sleep(0.2)"],
        ))
        .clone()
    });
    let mut quitter = Instance::new(quitter, s.path(), 1).unwrap();
    let mut greedy = Instance::new(builtin("greedy"), s.path(), 1).unwrap();
    let t0 = Instant::now();
    for g in 0..20 {
        let gone = play_game(
            &spec(&format!("q{g}"), "", 1500),
            &mut quitter,
            &mut gtp,
            &Silent,
        )
        .unwrap();
        let f = gone.forfeit.as_ref().expect("the quitter forfeits");
        assert_eq!(f.color, Color::Black, "{gone:?}");
        let (b, w) = if g % 2 == 0 {
            (&mut gtp, &mut greedy)
        } else {
            (&mut greedy, &mut gtp)
        };
        let r = play_game(&spec(&format!("r{g}"), "", 1500), b, w, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal, "game {g}: {:?}", r.forfeit);
        replays(&r);
    }
    assert_eq!(gtp.starts(), 1, "drained, not started again");
    eprintln!("40 games in {:?}", t0.elapsed());
}

/// A tournament of `players` (the [[player]] tables of players wrapped by
/// dir_engine.py, which reads `coefficients/weights.txt` from its working
/// directory as NTest and Edax read theirs) and built-in greedy, in a
/// scratch folder holding `engine-home` with those weights (open to every
/// user's writes by its permissions when `open`). Returns the records, the
/// engine's folder and the scratch.
fn dir_tournament(players: &str, open: bool) -> (Vec<GameRecord>, PathBuf, Scratch) {
    let s = Scratch::new();
    s.write("engine-home/coefficients/weights.txt", "0.5 0.25\n");
    let home = s.join("engine-home");
    if open {
        use std::os::unix::fs::PermissionsExt;
        // As root the bot runs as a user of its own: the folder's own
        // permissions let it write (the referee never changes them).
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let toml = format!(
        r#"
[tournament]
name = "At home"
format = "round-robin"
games-per-pairing = 2
size = 8

[time]
move-ms = 2000
startup-ms = 5000

{players}

[[player]]
name = "greedy"
builtin = "greedy"
"#
    );
    s.write("tournament.toml", &toml);
    let _ = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let text = std::fs::read_to_string(s.join("results/games.jsonl")).unwrap();
    let records = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (records, home, s)
}

/// The NBoard version-1 engine of dir_engine.py, with `more` lines.
fn at_home(more: &str) -> String {
    format!(
        "[[player]]\nname = \"at-home\"\ncommand = [\"python3\", \"{}\", \"nboard_engine.py\", \"v1\"]\nprotocol = \"nboard\"\nnboard-version = 1\n{more}\n",
        fixture("dir_engine.py")
    )
}

#[test]
fn an_engine_that_reads_its_data_from_its_dir_plays_there_and_forfeits_without_it() {
    // In its own folder, which it may write: it plays, and logs there.
    let writable = at_home("dir = \"engine-home\"\ndir-writable = true");
    let (records, home, _s) = dir_tournament(&writable, true);
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r.reason, EndReason::Normal, "{}: {:?}", r.id, r.forfeit);
        replays(r);
    }
    let log = std::fs::read_to_string(home.join("nboard_engine.py.log")).unwrap_or_default();
    assert!(
        log.contains("nboard_engine.py started with weights '0.5 0.25'"),
        "{log:?}"
    );

    // Readable only (the default): it plays, and writes nothing there
    // where the sandbox's rules hold (Landlock).
    let (records, home, _s) = dir_tournament(&at_home("dir = \"engine-home\""), true);
    for r in &records {
        assert_eq!(r.reason, EndReason::Normal, "{}: {:?}", r.id, r.forfeit);
    }
    if tournament::sandbox::protections().landlock_abi.is_some() {
        assert!(
            !home.join("nboard_engine.py.log").exists(),
            "written without dir-writable"
        );
    }

    // Without `dir` it starts in its mailbox, finds no data and leaves:
    // each of its games is its forfeit.
    let (records, _home, _s) = dir_tournament(&at_home(""), false);
    assert_eq!(records.len(), 2);
    for r in &records {
        let f = r.forfeit.as_ref().expect("a forfeit");
        let engine_color = if r.black == "at-home" {
            Color::Black
        } else {
            Color::White
        };
        assert_eq!(f.color, engine_color, "{r:?}");
        assert!(
            f.stderr_tail
                .iter()
                .any(|l| l.contains("unable to find coefficients/weights.txt")),
            "{f:?}"
        );
    }
}

/// `dir` is where every kind of player starts: a GTP engine and a mailbox
/// bot (which finds its mailbox in TOURNAMENT_MAILBOX) read their data
/// there too, and play.
#[test]
fn a_gtp_engine_and_a_mailbox_bot_start_in_their_dir_too() {
    let wrapper = fixture("dir_engine.py");
    let weighted = project_root().join("bots/python/weighted.py");
    let players = format!(
        r#"
[[player]]
name = "gtp-at-home"
command = ["python3", "{wrapper}", "gtp_engine.py"]
protocol = "gtp"
dir = "engine-home"
dir-writable = true

[[player]]
name = "bot-at-home"
command = ["python3", "{wrapper}", "{weighted}"]
dir = "engine-home"
dir-writable = true
"#,
        weighted = weighted.display()
    );
    let (records, home, _s) = dir_tournament(&players, true);
    assert_eq!(records.len(), 6, "3 pairings × 2 games");
    for r in &records {
        assert_eq!(r.reason, EndReason::Normal, "{}: {:?}", r.id, r.forfeit);
    }
    for target in ["gtp_engine.py", "weighted.py"] {
        let log = std::fs::read_to_string(home.join(format!("{target}.log"))).unwrap_or_default();
        assert!(
            log.contains(&format!("{target} started")),
            "{target}: {log:?}"
        );
    }
}
