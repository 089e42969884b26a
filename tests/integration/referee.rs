//! The referee against real processes: built-in bots on every size, bot
//! processes reused across games, and every kind of misbehaviour
//! adjudicated while the referee carries on.

use std::sync::Arc;

use tournament::event::Silent;
use tournament::game::{replay_transcript, Position};
use tournament::player::{Instance, Launch, PlayerSpec, Restart, Transport};
use tournament::record::{EndReason, Winner};
use tournament::referee::{play_game, GameSpec, Rules, TimeControl};

use crate::fixture::{
    assert_ok, fakebot, live_in_group, project_root, record_of, tournament_bin, Scratch,
};
use crate::needs;

fn play(s: &Scratch, black: &str, white: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "play", "--black", black, "--white", white, "--json", "--board", "board",
    ];
    args.extend_from_slice(extra);
    s.cmd(&args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn builtin_games_replay_with_the_recorded_result_on_every_size() {
    for size in ["4", "6", "8"] {
        let s = Scratch::new();
        let out = play(&s, "greedy", "random", &["--size", size]);
        assert_ok(&out);
        let r = record_of(&out.stdout);
        assert_eq!(r["reason"], "normal");
        let n: u8 = size.parse().unwrap();
        let (moves, end) =
            replay_transcript(Position::start(n), r["transcript"].as_str().unwrap()).unwrap();
        assert!(end.is_over(), "size {size}: the game ran to the end");
        assert_eq!(moves.len(), r["moves"].as_array().unwrap().len());
        let wof = end.discs_wof();
        assert_eq!(r["discs_wof"]["black"], wof.black);
        assert_eq!(r["discs_wof"]["white"], wof.white);
        assert_eq!(r["discs"]["black"], end.discs().black);
        let winner = match wof.winner() {
            Some(tournament::game::Color::Black) => "black",
            Some(tournament::game::Color::White) => "white",
            None => "draw",
        };
        assert_eq!(r["result"], winner);
    }
}

/// A spec for the fake bot, run through `env` so each start is logged.
/// Not sandboxed: the log and the pids it writes are outside its mailbox
/// and must be the machine's (the sandbox is tested in cheats.rs).
fn fake_spec(name: &str, mode: &str, log: &std::path::Path, restart: Restart) -> Arc<PlayerSpec> {
    tournament::program::set(tournament_bin());
    let fake = project_root().join("tests/fixtures/fakebot.py");
    Arc::new(PlayerSpec {
        name: name.into(),
        launch: Launch::Command(vec![
            "env".into(),
            format!("FAKEBOT_LOG={}", log.display()),
            "python3".into(),
            fake.display().to_string(),
            mode.into(),
        ]),
        restart,
        base_dir: project_root(),
        seed: 1,
        board_as: None,
        sandbox: tournament::sandbox::Settings {
            enabled: false,
            ..Default::default()
        },
        protocol: Default::default(),
        engine: Default::default(),
        pipe: true,
        workdir: None,
    })
}

fn builtin_spec(name: &str) -> Arc<PlayerSpec> {
    let argv = [
        tournament_bin().display().to_string(),
        "bot".into(),
        name.into(),
    ];
    command_spec(name, &argv)
}

/// A spawned bot with the default sandbox (the warden is the tournament
/// binary's: games are played in this test process).
fn command_spec(name: &str, argv: &[String]) -> Arc<PlayerSpec> {
    tournament::program::set(tournament_bin());
    Arc::new(PlayerSpec {
        name: name.into(),
        launch: Launch::Command(argv.to_vec()),
        restart: Restart::Reuse,
        base_dir: project_root(),
        seed: 1,
        board_as: None,
        sandbox: Default::default(),
        protocol: Default::default(),
        engine: Default::default(),
        pipe: true,
        workdir: None,
    })
}

fn game(id: &str, size: u8) -> GameSpec {
    GameSpec {
        id: id.into(),
        round: 1,
        size,
        opening: String::new(),
        time: TimeControl {
            move_ms: 3000,
            startup_ms: 5000,
            ..TimeControl::default()
        },
        rules: Rules::default(),
    }
}

fn starts_logged(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn one_bot_process_serves_several_games() {
    let s = Scratch::new();
    let log = s.join("starts.log");
    let mut fake =
        Instance::new(fake_spec("fake", "ok", &log, Restart::Reuse), s.path(), 1).unwrap();
    let mut other = Instance::new(builtin_spec("random"), s.path(), 1).unwrap();
    for g in 0..3 {
        let (b, w) = if g % 2 == 0 {
            (&mut fake, &mut other)
        } else {
            (&mut other, &mut fake)
        };
        let r = play_game(&game(&format!("g{g}"), 6), b, w, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal, "{r:?}");
    }
    assert_eq!(fake.starts(), 1);
    assert_eq!(other.starts(), 1);
    assert_eq!(starts_logged(&log), 1, "the fake bot was started once");
}

#[test]
fn a_bot_that_exits_after_each_game_is_restarted_and_plays_them_all() {
    let s = Scratch::new();
    let log = s.join("starts.log");
    let spec = fake_spec("quitter", "exit-after-game", &log, Restart::Reuse);
    let mut fake = Instance::new(spec, s.path(), 1).unwrap();
    let mut other = Instance::new(builtin_spec("greedy"), s.path(), 1).unwrap();
    for g in 0..3 {
        let r = play_game(&game(&format!("q{g}"), 4), &mut fake, &mut other, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal, "game {g}: {r:?}");
    }
    assert_eq!(starts_logged(&log), 3);
    assert_eq!(fake.starts(), 3);
}

#[test]
fn restart_per_game_starts_a_fresh_process_every_game() {
    let s = Scratch::new();
    let log = s.join("starts.log");
    let mut fake = Instance::new(
        fake_spec("fresh", "ok", &log, Restart::PerGame),
        s.path(),
        1,
    )
    .unwrap();
    let mut other = Instance::new(builtin_spec("greedy"), s.path(), 1).unwrap();
    for g in 0..2 {
        let r = play_game(&game(&format!("p{g}"), 4), &mut other, &mut fake, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::Normal);
    }
    assert_eq!(starts_logged(&log), 2);
}

/// Plays the fake bot in `mode` as black against random and returns the record.
fn misbehave(mode: &str, extra: &[&str]) -> serde_json::Value {
    let s = Scratch::new();
    let mut args = vec!["--move-ms", "1500", "--startup-ms", "3000"];
    args.extend_from_slice(extra);
    let out = play(&s, &fakebot(mode), "random", &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{mode}: the referee carries on: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    record_of(&out.stdout)
}

fn assert_forfeit(mode: &str, reason: &str) -> serde_json::Value {
    let r = misbehave(mode, &[]);
    assert_eq!(r["reason"], reason, "{mode}: {r}");
    assert_eq!(r["result"], "white", "{mode}: the opponent wins");
    assert_eq!(r["forfeit"]["color"], "black", "{mode}");
    let all = r["size"].as_u64().unwrap().pow(2);
    assert_eq!(
        r["discs_wof"]["white"], all,
        "{mode}: a forfeit scores all squares"
    );
    r
}

#[test]
fn an_illegal_square_forfeits() {
    let r = assert_forfeit("illegal", "no-flips");
    assert!(
        r["forfeit"]["detail"]
            .as_str()
            .unwrap()
            .contains("flips no disc"),
        "{r}"
    );
}

#[test]
fn an_occupied_square_forfeits() {
    assert_forfeit("occupied", "occupied");
}

#[test]
fn garbage_text_forfeits() {
    let r = assert_forfeit("garbage", "unparseable");
    assert!(r["forfeit"]["detail"]
        .as_str()
        .unwrap()
        .contains("hello there"));
}

#[test]
fn pass_with_moves_available_forfeits() {
    assert_forfeit("pass", "pass-with-moves");
}

#[test]
fn no_ready_forfeits() {
    let r = assert_forfeit("no-ready", "no-ready");
    assert_eq!(r["moves"].as_array().unwrap().len(), 0);
}

#[test]
fn a_hang_past_the_move_time_forfeits() {
    let r = assert_forfeit("hang", "timeout");
    assert!(r["forfeit"]["detail"]
        .as_str()
        .unwrap()
        .contains("no answer in time"));
}

#[test]
fn an_exit_mid_game_forfeits_with_status_and_stderr() {
    let r = assert_forfeit("exit-mid", "exited");
    assert_eq!(r["forfeit"]["exit"], "exit status 3", "{r}");
    let tail: Vec<&str> = r["forfeit"]["stderr_tail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        tail.iter().any(|l| l.contains("exiting on purpose")),
        "{tail:?}"
    );
}

#[test]
fn a_10_mb_answer_is_refused_as_garbage() {
    let r = assert_forfeit("big", "garbage");
    assert!(
        r["forfeit"]["detail"]
            .as_str()
            .unwrap()
            .contains("bytes; a message is at most 4096"),
        "{r}"
    );
}

#[test]
fn an_answer_without_its_last_newline_never_completes() {
    assert_forfeit("no-newline", "incomplete");
}

#[test]
fn binary_bytes_are_garbage() {
    assert_forfeit("binary", "garbage");
}

#[test]
fn crlf_and_upper_case_answers_are_accepted() {
    let r = misbehave("crlf-upper", &[]);
    assert_eq!(r["reason"], "normal", "{r}");
    assert!(r["moves"].as_array().unwrap().len() > 8);
}

#[test]
fn retries_send_illegal_and_a_new_turn_before_the_forfeit() {
    let r = misbehave("garbage", &["--max-retries", "2"]);
    assert_eq!(r["reason"], "unparseable");
}

#[test]
fn a_grandchild_is_gone_after_the_game() {
    let s = Scratch::new();
    let out = s
        .cmd(&[
            "play",
            "--black",
            &fakebot("grandchild"),
            "--white",
            "random",
            "--json",
            "--board",
            "board",
            "--size",
            "6",
            // The pid file goes outside the mailbox, as the machine sees it.
            "--no-sandbox",
        ])
        .env("FAKEBOT_OUT", s.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let r = record_of(&out.stdout);
    assert_eq!(r["reason"], "normal");
    let gc: u32 = std::fs::read_to_string(s.join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The grandchild's group is the bot's group (the bot leads it).
    let stat = crate::fixture::stat_fields(std::path::Path::new(&format!("/proc/{gc}/stat")));
    let gone = stat
        .as_ref()
        .is_none_or(|f| f.first().is_some_and(|state| state == "Z"));
    assert!(gone, "grandchild {gc} still runs: {stat:?}");
}

#[test]
fn the_game_log_holds_every_move_and_both_bots_stderr() {
    let s = Scratch::new();
    let out = play(&s, &fakebot("ok"), &fakebot("slow 1"), &["--size", "6"]);
    assert!(out.status.success());
    let r = record_of(&out.stdout);
    let id = r["id"].as_str().unwrap();
    let log = std::fs::read_to_string(s.join(&format!("results/logs/{id}.log"))).unwrap();
    for (ply, m) in r["moves"].as_array().unwrap().iter().enumerate() {
        let mv = m["move"].as_str().unwrap();
        let needle = if mv == "pass" {
            format!("pass ply={}", ply + 1)
        } else {
            format!(
                "move ply={} color={} mv={mv}",
                ply + 1,
                m["color"].as_str().unwrap()
            )
        };
        assert!(log.contains(&needle), "log lacks `{needle}`:\n{log}");
    }
    for bot in ["fakebot.1", "fakebot.2"] {
        assert!(
            log.lines()
                .any(|l| l.contains("[bot]") && l.contains(bot) && l.contains("read #")),
            "no stderr line of {bot} in:\n{log}"
        );
    }
}

#[test]
fn the_console_shows_the_moves_live_by_default() {
    let s = Scratch::new();
    let out = s
        .cmd(&[
            "play", "--black", "greedy", "--white", "weighted", "--board", "board",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("   1. black "), "{stdout}");
    assert!(stdout.contains("   2. white "), "{stdout}");
    assert!(stdout.contains("result: "), "{stdout}");
    assert!(stdout.contains("transcript: "), "{stdout}");
}

#[test]
fn a_missing_interpreter_is_named_with_its_package() {
    let s = Scratch::new();
    let out = play(&s, "no-such-ruby-xyz bots/x.rb", "random", &[]);
    assert_eq!(out.status.code(), Some(6));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-ruby-xyz"), "{err}");
    // A script that does not exist, for an interpreter that does.
    if needs::keep_runnable(vec![()], |_| Some(needs::RUBY)).is_empty() {
        return;
    }
    let out = play(&s, "ruby does-not-exist.rb", "random", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does-not-exist.rb") && err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn no_bot_process_outlives_a_play() {
    let s = Scratch::new();
    let log = s.join("starts.log");
    let out = s
        .cmd(&[
            "play",
            "--black",
            &fakebot("ok"),
            "--white",
            &fakebot("hang"),
            "--json",
            "--board",
            "board",
            // Black's one answer must come within it on a busy machine;
            // white hangs past it.
            "--move-ms",
            "1500",
            // The pids go into a log outside the mailboxes.
            "--no-sandbox",
        ])
        .env("FAKEBOT_LOG", &log)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let pids: Vec<u32> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(
            live_in_group(pid).is_empty(),
            "group {pid} still has processes"
        );
    }
    let r = record_of(&out.stdout);
    assert_eq!(r["result"], "black");
    assert_eq!(r["reason"], "timeout");
    let _ = Winner::Black;
}

#[test]
fn the_console_shows_a_forfeit_with_the_bots_last_stderr_lines() {
    let s = Scratch::new();
    let out = s
        .cmd(&[
            "play",
            "--black",
            &fakebot("exit-mid"),
            "--white",
            "greedy",
            "--board",
            "board",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("black forfeits: exited"), "{stdout}");
    assert!(stdout.contains("exit status 3"), "{stdout}");
    assert!(
        stdout.contains("last lines of fakebot's stderr:"),
        "{stdout}"
    );
    assert!(stdout.contains("| fakebot: exiting on purpose"), "{stdout}");
}

/// The seq of the message in the instance's `in.txt` (the last one it was
/// sent through the files).
fn seq_in_file(inst: &Instance) -> String {
    let text = std::fs::read_to_string(inst.mailbox().dir().join("in.txt")).unwrap_or_default();
    text.lines().nth(2).unwrap_or_default().to_string()
}

#[test]
fn the_shipped_libraries_take_the_pipe_and_the_basic_bots_keep_to_files() {
    let bots = [
        ("python3 bots/python/weighted.py", Transport::Pipe),
        ("ruby bots/ruby/greedy.rb", Transport::Pipe),
        ("node bots/js/minimax.js", Transport::Pipe),
        ("yabasic bots/yabasic/greedy.yab", Transport::Files),
        ("bwbasic bots/bwbasic/greedy.bas", Transport::Files),
    ];
    let bots = needs::keep_runnable(bots.to_vec(), |(c, _)| needs::interpreter_of(c));
    let s = Scratch::new();
    let mut greedy = Instance::new(builtin_spec("greedy"), s.path(), 1).unwrap();
    for (command, transport) in bots {
        let argv: Vec<String> = command.split(' ').map(String::from).collect();
        let mut bot = Instance::new(command_spec("lib", &argv), s.path(), 1).unwrap();
        for g in 0..2 {
            let r = play_game(&game(&format!("g{g}"), 6), &mut bot, &mut greedy, &Silent).unwrap();
            assert_eq!(r.reason, EndReason::Normal, "{command}, game {g}: {r:?}");
        }
        assert_eq!(bot.transport(), transport, "{command}");
        assert_eq!(bot.starts(), 1, "{command}: one process for both games");
        // On the pipe, in.txt still holds the first NEW; on files, the last END.
        let expect = if transport == Transport::Pipe {
            "1".to_string()
        } else {
            bot.seq().to_string()
        };
        assert_eq!(seq_in_file(&bot), expect, "{command}");
        assert!(bot.seq() > 20, "{command}: {} messages", bot.seq());
        // The built-in bots take it too.
        assert_eq!(greedy.transport(), Transport::Pipe);
    }
}

#[test]
fn a_bot_that_answers_the_offer_with_other_words_keeps_to_the_files() {
    let s = Scratch::new();
    let log = s.join("starts.log");
    let mut late = Instance::new(
        fake_spec("late", "pipe-wrong-word", &log, Restart::Reuse),
        s.path(),
        1,
    )
    .unwrap();
    let mut ok = Instance::new(
        fake_spec("prompt", "pipe-ok", &log, Restart::Reuse),
        s.path(),
        1,
    )
    .unwrap();
    let r = play_game(&game("late", 4), &mut late, &mut ok, &Silent).unwrap();
    assert_eq!(r.reason, EndReason::Normal, "{r:?}");
    assert_eq!(late.transport(), Transport::Files);
    assert_eq!(seq_in_file(&late), late.seq().to_string());
    assert_eq!(ok.transport(), Transport::Pipe);
    assert_eq!(seq_in_file(&ok), "1");
}

#[test]
fn misbehaviour_on_the_pipe_is_judged_with_its_reason() {
    let cases = [
        (
            "pipe-garbage",
            "garbage",
            "garbage on the pipe (fd 4): byte 0x82",
        ),
        ("pipe-wrong-seq", "garbage", "an answer to seq"),
        ("pipe-extra", "garbage", "after the fourth line feed"),
        ("pipe-partial", "incomplete", "the pipe (fd 4) gave"),
        ("pipe-hang", "timeout", "no answer in time"),
        ("pipe-close-in", "garbage", "the bot closed fd 3"),
    ];
    for (mode, reason, words) in cases {
        let r = assert_forfeit(mode, reason);
        let detail = r["forfeit"]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(words), "{mode}: {detail}");
    }
    let r = misbehave("pipe-ok", &[]);
    assert_eq!(r["reason"], "normal", "{r}");
}

/// CPU ticks (user + system) of process `pid` so far.
fn cpu_ticks(pid: u32) -> u64 {
    let Some(fields) =
        crate::fixture::stat_fields(std::path::Path::new(&format!("/proc/{pid}/stat")))
    else {
        return 0;
    };
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn a_sandboxed_bot_waits_at_no_cost_with_or_without_a_pipe() {
    let s = Scratch::new();
    for pipe in [false, true] {
        let argv: Vec<String> = ["python3", "tests/fixtures/fakebot.py", "pipe-ok"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        let spec = Arc::new(PlayerSpec {
            pipe,
            ..(*command_spec("idle", &argv)).clone()
        });
        let mut bot = Instance::new(spec, s.path(), 1).unwrap();
        bot.prepare(tracing::Span::none()).unwrap();
        let far = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let ready = bot
            .exchange(
                &tournament::protocol::Request::decode("NEW g1 black other 4 1000").unwrap(),
                far,
            )
            .unwrap();
        assert_eq!(ready, "READY");
        // The wardens (the process the referee started, and the first
        // process of the bot's namespace) and the bot all sleep while no
        // message comes.
        let warden = bot.pid().unwrap();
        let tree = || {
            let mut all = tournament::player::process::descendants(warden);
            all.push(warden);
            all.iter().map(|&p| cpu_ticks(p)).sum::<u64>()
        };
        let before = tree();
        std::thread::sleep(std::time::Duration::from_secs(1));
        let used = tree() - before;
        assert!(
            used <= 5,
            "pipe {pipe}: the bot's process tree used {used} ticks in 1 s of waiting"
        );
        assert_eq!(
            bot.transport(),
            if pipe {
                Transport::Pipe
            } else {
                Transport::Files
            }
        );
    }
}

#[test]
fn a_bot_on_the_pipe_told_end_before_its_ready_was_awaited_plays_on_in_the_same_process() {
    // Black never answers NEW, so the referee ends each game without
    // waiting for white's READY: white's first answer (which takes the
    // pipe), and later its READY on the pipe, are never awaited.
    let s = Scratch::new();
    let log = s.join("starts.log");
    let mut silent = Instance::new(
        fake_spec("silent", "no-ready", &log, Restart::Reuse),
        s.path(),
        1,
    )
    .unwrap();
    let argv: Vec<String> = ["python3", "bots/python/weighted.py"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    let mut white = Instance::new(command_spec("lib", &argv), s.path(), 1).unwrap();
    for g in 0..3 {
        let mut spec = game(&format!("n{g}"), 4);
        spec.time.startup_ms = 1000;
        let r = play_game(&spec, &mut silent, &mut white, &Silent).unwrap();
        assert_eq!(r.reason, EndReason::NoReady, "game {g}: {r:?}");
    }
    assert_eq!(white.transport(), Transport::Pipe);
    assert_eq!(white.starts(), 1, "white was never restarted");
    let r = play_game(&game("after", 4), &mut white, &mut silent, &Silent).unwrap();
    assert_eq!(r.result, Winner::Black, "{r:?}");
    assert_eq!(white.starts(), 1);
}
