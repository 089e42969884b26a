//! Mailbox protocol v1 and the board lock, with real processes and real
//! folders: two referees on one board, a killed holder, a stale lock from
//! another host, racing breakers, slow writers, symlinks, huge files, and a
//! bot written from PROTOCOL.md alone.

use std::fs;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tournament::mailbox::{
    mailbox_dir, AnswerError, BoardLock, LockOptions, Mailbox, OwnerRecord, Pending, WriteAccess,
    OUT_FILE,
};

use crate::fixture::{assert_ok, fakebot, record_of, tournament_bin, wait_until, Scratch};

/// A `tournament play` that holds the board for a few seconds.
fn slow_referee(s: &Scratch) -> std::process::Child {
    Command::new(tournament_bin())
        .current_dir(s.path())
        .args([
            "play",
            "--black",
            &fakebot("slow 120"),
            "--white",
            "random",
            "--size",
            "6",
            "--board",
            "board",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn owner_exists(s: &Scratch) -> bool {
    s.join("board/REFEREE/OWNER").exists()
}

#[test]
fn a_second_referee_on_the_same_board_is_refused_and_the_first_goes_on() {
    let s = Scratch::new();
    let first = slow_referee(&s);
    assert!(wait_until(10, || owner_exists(&s)));
    let out = s
        .cmd(&[
            "play", "--black", "greedy", "--white", "random", "--board", "board",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "exit status for a locked board");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is in use by another referee"), "{err}");
    assert!(err.contains(&format!("pid {}", first.id())), "{err}");
    assert!(err.contains("tournament play"), "{err}");
    let done = first.wait_with_output().unwrap();
    assert_ok(&done);
    assert_eq!(record_of(&done.stdout)["reason"], "normal");
}

#[test]
fn a_holder_killed_with_9_is_taken_over_at_once_on_the_same_machine() {
    let s = Scratch::new();
    let mut first = slow_referee(&s);
    assert!(wait_until(10, || owner_exists(&s)));
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(owner_exists(&s), "the dead referee left its lock behind");
    let t0 = Instant::now();
    let out = s
        .cmd(&[
            "play", "--black", "greedy", "--white", "random", "--board", "board", "--size", "4",
            "--json",
        ])
        .output()
        .unwrap();
    assert_ok(&out);
    // Far below the 30 s stale period: the dead pid and free flock told.
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its process is gone"), "{err}");
}

/// A lock of a referee on another machine; `stale_ms` 0 is a record of an
/// older referee that did not say its stale period.
fn foreign_owner(s: &Scratch, heartbeat: u64, stale_ms: u64) {
    let rec = OwnerRecord {
        token: "feedfacefeedface".into(),
        host: "some-other-machine".into(),
        pid: 4242,
        started: "2026-01-01T00:00:00Z".into(),
        heartbeat,
        board: "/mnt/share/board".into(),
        command: "tournament run".into(),
        stale_ms,
    };
    fs::create_dir_all(s.join("board/REFEREE")).unwrap();
    fs::write(s.join("board/REFEREE/OWNER"), rec.encode()).unwrap();
}

#[test]
fn a_lock_of_another_host_is_taken_only_after_the_stale_period() {
    let s = Scratch::new();
    foreign_owner(&s, 7, 0);
    let t0 = Instant::now();
    let out = s
        .cmd(&[
            "play",
            "--black",
            "greedy",
            "--white",
            "random",
            "--board",
            "board",
            "--size",
            "4",
            "--stale-lock-ms",
            "1500",
            "--json",
        ])
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert_ok(&out);
    assert!(
        took >= Duration::from_millis(1500),
        "took over after {took:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("took over the board from a stale lock"),
        "{err}"
    );
    assert!(err.contains("some-other-machine"), "{err}");
    assert!(
        err.contains("(in 1.5 s: the holder recorded no stale-lock-ms; this referee's)"),
        "{err}"
    );
}

/// The time at the start of a console log line (`2026-…Z  WARN …`).
fn logged_at(line: &str) -> std::time::SystemTime {
    let stamp = line.split_whitespace().next().unwrap_or_default();
    humantime::parse_rfc3339(stamp).unwrap_or_else(|e| panic!("no time in {line:?}: {e}"))
}

#[test]
fn a_foreign_stale_lock_says_at_once_whom_it_waits_for_and_when_it_takes_over() {
    let s = Scratch::new();
    // The holder on the other machine was configured with 2.5 s; this
    // referee's own 60 s must not apply to it.
    foreign_owner(&s, 7, 2500);
    let t0 = Instant::now();
    let out = s
        .cmd(&[
            "play",
            "--black",
            "greedy",
            "--white",
            "random",
            "--board",
            "board",
            "--size",
            "4",
            "--stale-lock-ms",
            "60000",
            "--json",
        ])
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert_ok(&out);
    assert!(
        took >= Duration::from_millis(2500) && took < Duration::from_secs(60),
        "took over after {took:?}: the holder's 2.5 s applies"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let waiting = err
        .lines()
        .find(|l| l.contains("is locked by"))
        .unwrap_or_else(|| panic!("no line saying whom it waits for: {err}"));
    for needle in [
        "WARN",
        "`tournament run` on host some-other-machine (pid 4242)",
        "heartbeat #7",
        "Waiting for that referee: if its heartbeat moves, this one stops",
        "takes the board over at ",
        "(in 2.5 s: the holder's stale-lock-ms)",
    ] {
        assert!(waiting.contains(needle), "`{needle}` missing: {waiting}");
    }
    let took_line = err
        .lines()
        .find(|l| l.contains("took over the board from a stale lock"))
        .unwrap_or_else(|| panic!("no takeover: {err}"));
    // Said at the start of the wait, not at its end; and the announced
    // time is when it happened.
    let (said, done) = (logged_at(waiting), logged_at(took_line));
    let gap = done.duration_since(said).unwrap();
    assert!(gap >= Duration::from_millis(2000), "said {gap:?} before");
    let announced = waiting
        .split("takes the board over at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .map(|t| humantime::parse_rfc3339(t).unwrap())
        .unwrap();
    // The announced time is cut to whole seconds, and a busy machine can
    // only make the takeover later: not before it, and within 2 s after
    // (an announcement of the wait's start would be 2.5 s or more off).
    match done.duration_since(announced) {
        Ok(late) => assert!(
            late <= Duration::from_millis(2000),
            "announced {announced:?}, took over {done:?}"
        ),
        Err(early) => assert!(
            early.duration() <= Duration::from_millis(200),
            "announced {announced:?}, took over {done:?}"
        ),
    }
}

#[test]
fn a_stale_holders_results_lock_is_not_waited_for_a_second_time() {
    let s = Scratch::new();
    // A referee on another machine died holding the board and the results.
    foreign_owner(&s, 7, 2000);
    let results_lock = s.join("results/lock/REFEREE");
    fs::create_dir_all(&results_lock).unwrap();
    let mut rec =
        OwnerRecord::parse(&fs::read_to_string(s.join("board/REFEREE/OWNER")).unwrap()).unwrap();
    rec.token = "0123456789abcdef".into();
    fs::write(results_lock.join("OWNER"), rec.encode()).unwrap();
    s.write(
        "tournament.toml",
        "[tournament]\nname = \"t\"\nsize = 4\n\n[[player]]\nname = \"a\"\nbuiltin = \"random\"\n\n\
         [[player]]\nname = \"b\"\nbuiltin = \"greedy\"\n",
    );
    let out = s.cmd(&["run"]).output().unwrap();
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("is locked by").count(),
        1,
        "one wait, for the board only: {err}"
    );
    assert!(
        err.contains("(the same referee whose other lock just went stale)"),
        "{err}"
    );
}

#[test]
fn board_status_says_when_a_silent_holder_is_taken_over() {
    let s = Scratch::new();
    foreign_owner(&s, 7, 45_000);
    let out = s
        .cmd(&["board", "status", "--board", "board", "--watch-ms", "500"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a referee started now takes it over at "),
        "{text}"
    );
    assert!(
        text.contains("if the heartbeat stays still (after 45.0 s: the holder's stale-lock-ms)"),
        "{text}"
    );
    let at = text
        .split("takes it over at ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .map(|t| humantime::parse_rfc3339(t).unwrap())
        .unwrap();
    let ahead = at
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    assert!(
        ahead > Duration::from_secs(35) && ahead <= Duration::from_secs(46),
        "{ahead:?} ahead: {text}"
    );
}

#[test]
fn a_live_foreign_heartbeat_is_refused_with_its_details() {
    let s = Scratch::new();
    // Configured with 7 s on its machine; this referee's 3 s is not it.
    foreign_owner(&s, 1, 7000);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let beat = {
        let (stop, path) = (Arc::clone(&stop), s.join("board/REFEREE/OWNER"));
        std::thread::spawn(move || {
            let mut n = 1;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                n += 1;
                let text = fs::read_to_string(&path).unwrap();
                let mut rec = OwnerRecord::parse(&text).unwrap();
                rec.heartbeat = n;
                fs::write(&path, rec.encode()).unwrap();
            }
        })
    };
    let out = s
        .cmd(&[
            "play",
            "--black",
            "greedy",
            "--white",
            "random",
            "--board",
            "board",
            "--stale-lock-ms",
            "3000",
        ])
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    beat.join().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "some-other-machine",
        "pid 4242",
        "2026-01-01T00:00:00Z",
        "heartbeat #",
        "changed",
        "taken over automatically once its heartbeat has not changed for 7 s (its stale-lock-ms)",
    ] {
        assert!(err.contains(needle), "`{needle}` missing: {err}");
    }
}

#[test]
fn racing_breakers_never_both_win() {
    // Four breakers race for a stale lock of another host, 15 times. Each
    // winner then holds the board, checking `ensure_held` (what a referee
    // checks before every write) every 10 ms. Safety: the spans in which two
    // of them believe they hold it never overlap. (Under heavy load a
    // winner's heartbeat can stall past the stale period: it then stops
    // acting and a later breaker may take over — one after the other, not
    // at once.)
    let rounds = 15;
    let racers = 4;
    let mut single = 0;
    for round in 0..rounds {
        let s = Scratch::new();
        foreign_owner(&s, round, 0);
        let board = s.join("board");
        let gate = Arc::new(Barrier::new(racers));
        let base = Instant::now();
        let handles: Vec<_> = (0..racers)
            .map(|_| {
                let (board, gate) = (board.clone(), Arc::clone(&gate));
                std::thread::spawn(move || {
                    gate.wait();
                    let opts = LockOptions {
                        stale: Duration::from_millis(1000),
                        flock: false,
                        command: "racer".into(),
                        stale_holders: Vec::new(),
                    };
                    let lock = BoardLock::acquire(&board, &opts).ok()?;
                    let got = base.elapsed();
                    let mut held_until = got;
                    for _ in 0..50 {
                        std::thread::sleep(Duration::from_millis(10));
                        if lock.ensure_held().is_err() {
                            break;
                        }
                        held_until = base.elapsed();
                    }
                    Some((got, held_until))
                })
            })
            .collect();
        let mut spans: Vec<(Duration, Duration)> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        assert!(
            !spans.is_empty(),
            "round {round}: nobody took the stale lock"
        );
        spans.sort();
        for pair in spans.windows(2) {
            assert!(
                pair[0].1 < pair[1].0,
                "round {round}: two breakers held the board at once: {spans:?}"
            );
        }
        single += usize::from(spans.len() == 1);
    }
    eprintln!(
        "racing breakers: {rounds} rounds x {racers} racers: never two holders at once; \
         {single} rounds with a single winner"
    );
}

#[test]
fn a_slow_byte_by_byte_writer_is_read_only_when_complete() {
    let s = Scratch::new();
    let dir = mailbox_dir(s.path(), "slow", Some(1));
    let mb = Mailbox::open(&WriteAccess::unshared(s.path()), &dir, "slow.1").unwrap();
    fs::write(dir.join(OUT_FILE), "slow.1\nreferee\n4\nc4\n").unwrap();
    mb.send(
        &WriteAccess::unshared(mb.board()),
        5,
        "TURN black x none 100",
    )
    .unwrap();
    let full = b"slow.1\r\nreferee\r\n5\r\nd3\r\n".to_vec();
    let writer = {
        let dir = dir.clone();
        let full = full.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = fs::File::create(dir.join(OUT_FILE)).unwrap();
            for b in full {
                f.write_all(&[b]).unwrap();
                f.flush().unwrap();
                std::thread::sleep(Duration::from_millis(3));
            }
        })
    };
    // Looks made while the writer was still writing (a loaded machine
    // stretches the reader's sleeps, so only these count).
    let mut looks = 0;
    let answer = loop {
        let done = writer.is_finished();
        looks += usize::from(!done);
        match mb.poll_answer(5).unwrap() {
            Ok(text) => break text,
            Err(Pending::Stale(seq)) => assert_eq!(seq, 4, "only the old answer"),
            Err(_) => {}
        }
        assert!(!done, "the complete message was not taken");
        std::thread::sleep(Duration::from_micros(300));
    };
    assert!(
        writer.is_finished() || {
            writer.join().unwrap();
            true
        }
    );
    assert_eq!(answer, "d3");
    assert!(
        looks >= 3,
        "the reader looked only {looks} times while the writer wrote"
    );
    // An old seq is never the new answer.
    mb.send(&WriteAccess::unshared(mb.board()), 6, "TURN black x d3 100")
        .unwrap();
    assert_eq!(mb.poll_answer(6).unwrap(), Err(Pending::Stale(5)));
    let r = mb.wait_answer(6, Instant::now() + Duration::from_millis(50), &mut || None);
    assert!(
        matches!(
            r,
            Err(AnswerError::Timeout {
                pending: Pending::Stale(5)
            })
        ),
        "{r:?}"
    );
}

fn content_and_mtime(p: &std::path::Path) -> (Vec<u8>, std::time::SystemTime) {
    (
        fs::read(p).unwrap(),
        fs::metadata(p).unwrap().modified().unwrap(),
    )
}

#[test]
fn symlinks_are_refused_and_their_targets_untouched() {
    let s = Scratch::new();
    let target = s.write("secret.txt", "precious\n");
    std::thread::sleep(Duration::from_millis(20));
    let before = content_and_mtime(&target);

    // out.txt as a symlink.
    let dir = mailbox_dir(s.path(), "a", Some(1));
    let mb = Mailbox::open(&WriteAccess::unshared(s.path()), &dir, "a.1").unwrap();
    mb.send(&WriteAccess::unshared(mb.board()), 1, "NEW g a b 8 100")
        .unwrap();
    std::os::unix::fs::symlink(&target, dir.join(OUT_FILE)).unwrap();
    let r = mb.wait_answer(1, Instant::now() + Duration::from_millis(200), &mut || None);
    assert!(matches!(r, Err(AnswerError::Symlink(_))), "{r:?}");

    // in.txt as a symlink: the referee does not write through it.
    let dir_b = mailbox_dir(s.path(), "b", Some(1));
    let mb_b = Mailbox::open(&WriteAccess::unshared(s.path()), &dir_b, "b.1").unwrap();
    std::os::unix::fs::symlink(&target, dir_b.join("in.txt")).unwrap();
    assert!(matches!(
        mb_b.send(&WriteAccess::unshared(mb_b.board()), 1, "NEW"),
        Err(AnswerError::Symlink(_))
    ));

    // The mailbox folder itself as a symlink, before and after opening.
    let elsewhere = s.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("in.txt"), "keep me\n").unwrap();
    let dir_c = mailbox_dir(s.path(), "c", Some(1));
    std::os::unix::fs::symlink(&elsewhere, &dir_c).unwrap();
    assert!(Mailbox::open(&WriteAccess::unshared(s.path()), &dir_c, "c.1").is_err());
    let dir_d = mailbox_dir(s.path(), "d", Some(1));
    let mb_d = Mailbox::open(&WriteAccess::unshared(s.path()), &dir_d, "d.1").unwrap();
    fs::remove_dir(&dir_d).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &dir_d).unwrap();
    assert!(matches!(
        mb_d.send(&WriteAccess::unshared(mb_d.board()), 1, "NEW"),
        Err(AnswerError::Symlink(_))
    ));
    assert!(matches!(mb_d.poll_answer(1), Err(AnswerError::Symlink(_))));

    assert_eq!(
        content_and_mtime(&target),
        before,
        "the link target is untouched"
    );
    assert_eq!(
        fs::read_to_string(elsewhere.join("in.txt")).unwrap(),
        "keep me\n"
    );
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        1,
        "nothing written there"
    );
}

#[test]
fn a_10_mb_out_txt_is_refused_without_reading_it() {
    let s = Scratch::new();
    let dir = mailbox_dir(s.path(), "big", Some(1));
    let mb = Mailbox::open(&WriteAccess::unshared(s.path()), &dir, "big.1").unwrap();
    mb.send(&WriteAccess::unshared(mb.board()), 1, "NEW")
        .unwrap();
    let f = fs::File::create(dir.join(OUT_FILE)).unwrap();
    f.set_len(10 * 1024 * 1024).unwrap();
    match mb.poll_answer(1) {
        Err(AnswerError::Garbage(why)) => assert!(why.contains("10485760 bytes"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// A bot written from PROTOCOL.md alone (sections 2 and 3), in Ruby.
const RUBY_BOT: &str = r##"
box = ARGV[0] || ENV["TOURNAMENT_MAILBOX"] || "."
last = nil
DIRS = [[-1,-1],[-1,0],[-1,1],[0,-1],[0,1],[1,-1],[1,0],[1,1]]
def legal(board, me)
  n = Math.sqrt(board.length).to_i
  them = me == "X" ? "O" : "X"
  out = []
  n.times do |r|
    n.times do |c|
      next unless board[r * n + c] == "-"
      ok = DIRS.any? do |dr, dc|
        rr, cc, seen = r + dr, c + dc, 0
        while rr.between?(0, n - 1) && cc.between?(0, n - 1) && board[rr * n + cc] == them
          rr += dr; cc += dc; seen += 1
        end
        seen > 0 && rr.between?(0, n - 1) && cc.between?(0, n - 1) && board[rr * n + cc] == me
      end
      out << "abcdefgh"[c] + (r + 1).to_s if ok
    end
  end
  out
end
loop do
  text = File.read(File.join(box, "in.txt"), 4096) rescue ""
  lines = text.split("\n", -1)
  if lines.length < 5 || lines[2].strip == last
    sleep 0.005
    next
  end
  id, seq, words = lines[1].strip, lines[2].strip, lines[3].strip.split(" ")
  answer = case words[0]
           when "NEW" then "READY"
           when "TURN" then (legal(words[2], words[1] == "black" ? "X" : "O").last || "pass")
           when "END" then "BYE"
           else "OK"
           end
  File.write(File.join(box, "out.txt"), "#{id}\nreferee\n#{seq}\n#{answer}\n")
  last = seq
end
"##;

#[test]
fn a_ruby_bot_written_from_protocol_md_answers_new_and_three_turns() {
    use tournament::game::{replay_transcript, Color, Move, Position};
    use tournament::protocol::{Reply, Request};
    if !crate::needs::have(&[crate::needs::RUBY]) {
        return;
    }
    let s = Scratch::new();
    let script = s.write("bot.rb", RUBY_BOT);
    let dir = mailbox_dir(s.path(), "rb", Some(1));
    let mb = Mailbox::open(&WriteAccess::unshared(s.path()), &dir, "rb.1").unwrap();
    let mut child = Command::new("ruby")
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let ask = |seq: u64, text: &str| {
        mb.send(&WriteAccess::unshared(mb.board()), seq, text)
            .unwrap();
        mb.wait_answer(seq, Instant::now() + Duration::from_secs(10), &mut || None)
    };
    let decode = |answer: &Result<String, AnswerError>| {
        Reply::decode(answer.as_ref().expect("an answer"), 8).expect("a reply")
    };
    let new = Request::New {
        game: "g1".into(),
        color: Color::White,
        opponent: "greedy".into(),
        size: 8,
        move_ms: 1000,
    };
    assert_eq!(decode(&ask(1, &new.encode())), Reply::Ready);
    // Three positions with white to move, after three different openings.
    let mut seq = 1;
    for opening in ["f5", "f5d6c3", "c4c3d3c5b3"] {
        let (played, pos) = replay_transcript(Position::start(8), opening).unwrap();
        let last = played.last().copied();
        let (_, pos) = if pos.to_move() == Color::White {
            (0, pos)
        } else {
            // Let black play once more with the first legal move so white moves.
            let sq = pos.legal_squares()[0];
            (0, pos.play(Move::Play(sq)).unwrap().0)
        };
        seq += 1;
        let answer = ask(seq, &Request::turn(&pos, last, 1000).encode());
        let Reply::Move(mv) = decode(&answer) else {
            panic!("{answer:?} to TURN after {opening}");
        };
        assert!(pos.check(mv).is_ok(), "{answer:?} is legal in {opening}");
    }
    seq += 1;
    let end = Request::end(40, 24, "normal");
    assert_eq!(decode(&ask(seq, &end.encode())), Reply::Bye);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn board_status_names_the_owner_and_the_mailbox_waiting_for_an_answer() {
    let s = Scratch::new();
    let free = s
        .cmd(&["board", "status", "--board", "board"])
        .output()
        .unwrap();
    assert!(free.status.success());
    assert!(String::from_utf8_lossy(&free.stdout).contains("does not exist"));
    // A referee waiting on a bot that never answers a move.
    let mut referee = Command::new(tournament_bin())
        .current_dir(s.path())
        .args([
            "play",
            "--black",
            &fakebot("hang"),
            "--white",
            "random",
            "--board",
            "board",
            "--move-ms",
            "20000",
            "--json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(20, || {
        fs::read_to_string(s.join("board/players/fakebot.1/in.txt"))
            .is_ok_and(|t| t.contains("TURN"))
    }));
    let out = s
        // Long enough to see the 2 s heartbeat move on a busy machine.
        .cmd(&["board", "status", "--board", "board", "--watch-ms", "6000"])
        .output()
        .unwrap();
    referee.kill().unwrap();
    referee.wait().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("(pid {})", referee.id())), "{text}");
    assert!(text.contains("tournament play"), "{text}");
    assert!(
        text.contains("alive (its heartbeat moved while we watched)"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("fakebot.1"))
        .unwrap_or_else(|| panic!("no fakebot.1 row: {text}"));
    assert!(
        row.contains("fakebot") && row.contains("WAITING") && row.contains("TURN black"),
        "{row}"
    );
    assert!(text.contains("1 mailbox(es) wait for an answer"), "{text}");
    // With the referee gone (killed), the owner shows as dead.
    let out = s
        .cmd(&["board", "status", "--board", "board"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("dead (same machine, its process is gone)"),
        "{text}"
    );
}
