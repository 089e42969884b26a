//! `tournament run` as a user runs it: a round robin at concurrency 2,
//! resume after kill -9, Ctrl-C, config errors, a changed schedule, and
//! `watch` from a second process.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use tournament::record::GameRecord;

use crate::fixture::{
    assert_ok, fakebot, live_in_group, stat_fields, tournament_bin, wait_until, Scratch,
};

fn toml(players: &[(&str, &str)], extra: &str) -> String {
    let mut t = format!(
        "[tournament]\nname = \"test\"\ngames-per-pairing = 2\nconcurrency = 2\nsize = 6\n{extra}\n\
         [time]\nmove-ms = 3000\nstartup-ms = 5000\n\n[openings]\nrandom-plies = 2\nseed = 3\n"
    );
    for (name, how) in players {
        t.push_str(&format!("\n[[player]]\nname = \"{name}\"\n{how}\n"));
    }
    t
}

fn builtin(b: &str) -> String {
    format!("builtin = \"{b}\"")
}

fn command(cmdline: &str) -> String {
    let parts: Vec<String> = cmdline.split(' ').map(|p| format!("{p:?}")).collect();
    format!("command = [{}]", parts.join(", "))
}

fn records(s: &Scratch) -> Vec<GameRecord> {
    crate::fixture::whole_records(&s.join("results/games.jsonl"))
}

/// id → (transcript, result, WOF discs): what must not depend on timing.
fn outcomes(recs: &[GameRecord]) -> BTreeMap<String, (String, String, u32, u32)> {
    recs.iter()
        .map(|r| {
            (
                r.id.clone(),
                (
                    r.transcript.clone(),
                    r.result.name().to_string(),
                    r.discs_wof.black,
                    r.discs_wof.white,
                ),
            )
        })
        .collect()
}

#[test]
fn a_four_player_round_robin_at_concurrency_2_adds_up() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("rand", &builtin("random")),
                ("greedy", &builtin("greedy")),
                ("weighted", &builtin("weighted")),
                ("rand2", &builtin("random")),
            ],
            "",
        ),
    );
    let out = s.run_ok(&["run"], 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for name in ["rand", "greedy", "weighted", "rand2"] {
        assert!(stdout.contains(name), "{stdout}");
    }
    let recs = records(&s);
    assert_eq!(recs.len(), 12, "6 pairings x 2 games");
    let json = s.cmd(&["crosstable", "--format", "json"]).output().unwrap();
    assert!(json.status.success());
    let table: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(table["games"], 12);
    let standings = table["standings"].as_array().unwrap();
    let points: f64 = standings
        .iter()
        .map(|p| p["points"].as_f64().unwrap())
        .sum();
    let games: u64 = standings.iter().map(|p| p["games"].as_u64().unwrap()).sum();
    assert_eq!(points, 12.0, "one point per game");
    assert_eq!(games, 24, "two players per game");
    for p in standings {
        assert_eq!(p["games"], 6, "{p}");
    }
    // Each pairing played once as black and once as white.
    let mut colours: BTreeMap<(String, String), u32> = BTreeMap::new();
    for r in &recs {
        *colours
            .entry((r.black.clone(), r.white.clone()))
            .or_default() += 1;
    }
    assert!(colours.values().all(|&n| n == 1), "{colours:?}");
    // The board is left clean: mailbox folders stay (a bot on another
    // machine may still see them) but hold no message, and no temp file
    // or lock remains.
    for entry in std::fs::read_dir(s.join("board/players"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "temp file left behind: {name}");
        let inbox = entry.path().join("in.txt");
        assert!(!inbox.exists(), "{} left behind", inbox.display());
        let out = std::fs::read(entry.path().join("out.txt")).unwrap_or_default();
        assert!(out.is_empty(), "{name}/out.txt still holds an answer");
    }
    assert!(!s.join("board/REFEREE").exists());
}

fn resumable_toml() -> String {
    toml(
        &[
            ("rand", &builtin("random")),
            ("greedy", &builtin("greedy")),
            ("weighted", &builtin("weighted")),
            ("slowpoke", &command(&fakebot("slow 12"))),
        ],
        "",
    )
    .replace("games-per-pairing = 2", "games-per-pairing = 4")
}

#[test]
fn kill_9_mid_run_then_resume_loses_and_doubles_nothing() {
    // The uninterrupted reference.
    let reference = Scratch::new();
    reference.write("tournament.toml", &resumable_toml());
    reference.run_ok(&["run"], 240);
    let expected = outcomes(&records(&reference));
    assert_eq!(expected.len(), 24);

    let s = Scratch::new();
    s.write("tournament.toml", &resumable_toml());
    let mut child = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(120, || records(&s).len() >= 5),
        "games were played"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&s);
    assert!(before.len() < 24, "killed mid-run ({} games)", before.len());

    let out = s.run_ok(&["run"], 240);
    let after = records(&s);
    assert_eq!(after.len(), 24, "no game lost or doubled");
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished games kept as they were"
    );
    assert_eq!(
        outcomes(&after),
        expected,
        "same results as the uninterrupted run"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("({} already played)", before.len())),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_finishes_running_games_then_a_second_one_stops_at_once() {
    let s = Scratch::new();
    // The bots log their pids outside their mailbox, which a sandboxed bot
    // cannot write to (and where its pid would be its namespace's).
    let unsandboxed = || resumable_toml() + "sandbox = false\n";
    s.write("tournament.toml", &unsandboxed());
    let log = s.join("starts.log");
    let child = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .env("FAKEBOT_LOG", &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(120, || records(&s).len() >= 2));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the running games finish"), "{err}");
    assert!(
        err.contains("games left; run the same command again to resume"),
        "{err}"
    );
    let first = records(&s).len();
    assert!(first < 24);

    // Second run: two signals in a row stop at once and kill the bots. The
    // slow bot now takes a second a move (bots' commands are not part of
    // the schedule), so its game is still running when the second signal
    // comes, sent once the referee has shown it handled the first.
    s.write(
        "tournament.toml",
        &unsandboxed().replace("slow 12", "slow 1000"),
    );
    let mut child = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .env("FAKEBOT_LOG", &log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let (pipe, stderr) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let mut all = stderr.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        })
    };
    let started = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(wait_until(60, || std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count()
        > started));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(
        wait_until(30, || stderr
            .lock()
            .unwrap()
            .contains("the running games finish")),
        "{}",
        stderr.lock().unwrap()
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    reader.join().unwrap();
    let err = stderr.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("stopping at once"), "{err}");
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let pid: u32 = line.split_whitespace().next().unwrap().parse().unwrap();
        assert!(
            wait_until(5, || live_in_group(pid).is_empty()),
            "bot group {pid} outlived the referee"
        );
    }
    s.write("tournament.toml", &resumable_toml());
    // And the run still completes later, with every game exactly once.
    let out = s
        .cmd(&["run"])
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    assert!(out.status.success());
    let recs = records(&s);
    assert_eq!(recs.len(), 24);
    let ids: std::collections::BTreeSet<_> = recs.iter().map(|r| &r.id).collect();
    assert_eq!(ids.len(), 24);
}

fn config_error(text: &str) -> (i32, String) {
    let s = Scratch::new();
    s.write("tournament.toml", text);
    let out = s.cmd(&["run"]).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn config_errors_name_file_line_column_and_key() {
    let base = toml(&[("a", &builtin("random")), ("b", &builtin("greedy"))], "");
    let cases = [
        (
            base.replace("concurrency = 2", "concurency = 2"),
            "tournament.toml:4:1: `tournament.concurency`: unknown field `concurency`",
        ),
        (
            base.replace("size = 6", "size = \"six\""),
            "tournament.toml:5:8: `tournament.size`: invalid type: string \"six\", expected u8",
        ),
        (
            base.replace("size = 6", "size = 7"),
            "tournament.toml:5:8: `tournament.size`: board size 7 is not allowed; expected 4, 6 or 8",
        ),
        (
            base.replace(
                "size = 6",
                "size = 6\nformat = \"gauntlet\"\ngauntlet-player = \"zed\"",
            ),
            "tournament.toml:7:19: `tournament.gauntlet-player`: unknown player `zed`; expected one of the [[player]] names: a, b",
        ),
        (
            base.replace("name = \"b\"", "name = \"a\""),
            "`player[2].name`: duplicate player name `a` (first defined at line",
        ),
    ];
    for (text, expected) in cases {
        let (code, err) = config_error(&text);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
    }
}

#[test]
fn a_changed_schedule_is_refused() {
    let s = Scratch::new();
    let three = toml(
        &[
            ("a", &builtin("random")),
            ("b", &builtin("greedy")),
            ("c", &builtin("weighted")),
        ],
        "",
    );
    s.write("tournament.toml", &three);
    assert!(s.cmd(&["run"]).output().unwrap().status.success());
    // A player removed.
    let two = toml(&[("a", &builtin("random")), ("b", &builtin("greedy"))], "");
    s.write("tournament.toml", &two);
    let out = s.cmd(&["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("different schedule"), "{err}");
    assert!(err.contains("players then: a, b, c; now: a, b"), "{err}");
    // A setting changed, even together with an added player.
    let more = toml(
        &[
            ("a", &builtin("random")),
            ("b", &builtin("greedy")),
            ("c", &builtin("weighted")),
            ("d", &builtin("random")),
        ],
        "",
    )
    .replace("games-per-pairing = 2", "games-per-pairing = 4");
    s.write("tournament.toml", &more);
    let out = s.cmd(&["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(records(&s).len(), 6, "nothing was mixed in");
}

#[test]
fn a_player_added_to_a_finished_round_robin_plays_only_its_own_pairings() {
    let s = Scratch::new();
    let three = [
        ("a", builtin("random")),
        ("b", builtin("greedy")),
        ("c", builtin("weighted")),
    ];
    let players = |list: &[(&str, String)]| -> String {
        let refs: Vec<(&str, &str)> = list.iter().map(|(n, h)| (*n, h.as_str())).collect();
        toml(&refs, "")
    };
    s.write("tournament.toml", &players(&three));
    s.run_ok(&["run"], 120);
    let before = records(&s);
    assert_eq!(before.len(), 6);

    let mut four = three.to_vec();
    four.insert(1, ("late", builtin("random")));
    s.write("tournament.toml", &players(&four));
    let out = s.run_ok(&["run"], 120);
    let after = records(&s);
    assert_eq!(after.len(), 12, "3 new pairings x 2 games");
    assert_eq!(&after[..6], &before[..], "old games kept as they were");
    for r in &after[6..] {
        assert!(r.black == "late" || r.white == "late", "{}", r.id);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("(6 already played)"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("late"), "{stdout}");
    // Run again: nothing left to play, nothing refused.
    s.run_ok(&["run"], 60);
    assert_eq!(records(&s).len(), 12);
}

fn sprt_toml(first: &str, second: &str, limit: u32) -> String {
    toml(
        &[("first", first), ("second", second)],
        "\n[sprt]\nelo0 = 0\nelo1 = 50\nalpha = 0.05\nbeta = 0.05\n",
    )
    .replace(
        "games-per-pairing = 2",
        &format!("games-per-pairing = {limit}"),
    )
    .replace("random-plies = 2", "random-plies = 4")
}

/// The crosstable's JSON of the results in `s`.
fn table_json(s: &Scratch) -> serde_json::Value {
    let out = s.run_ok(&["crosstable", "--format", "json"], 30);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_sprt_of_weighted_against_random_accepts_h1_long_before_its_limit() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &sprt_toml(&builtin("weighted"), &builtin("random"), 400),
    );
    let out = s.run_ok(&["run"], 300);
    let played = records(&s).len();
    assert!(played < 100, "stopped after {played} of 400 games");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("SPRT: H1 accepted"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("LLR "), "the LLR is shown live: {stderr}");
    let t = table_json(&s);
    assert_eq!(t["sprt"]["result"], "H1", "{t}");
    assert_eq!(t["sprt"]["model"], "normalized");
    let llr = t["sprt"]["llr"].as_f64().unwrap();
    assert!(llr >= t["sprt"]["upper"].as_f64().unwrap(), "{t}");
    assert!((t["sprt"]["upper"].as_f64().unwrap() - 2.94).abs() < 0.01);
    assert!((t["sprt"]["lower"].as_f64().unwrap() + 2.94).abs() < 0.01);
    let penta: Vec<u64> = t["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(penta.len(), 5);
    let pairs: u64 = penta.iter().sum();
    assert!(pairs * 2 <= played as u64 && pairs * 2 + 2 >= played as u64);
    assert!(penta[4] > penta[0], "weighted scores more: {penta:?}");
    // The text crosstable says it too; a second run plays nothing more.
    let text = s.run_ok(&["crosstable"], 30);
    assert!(String::from_utf8_lossy(&text.stdout).contains("→ H1"));
    s.run_ok(&["run"], 60);
    assert_eq!(records(&s).len(), played);
}

#[test]
fn an_sprt_between_two_copies_of_one_bot_does_not_accept_h1() {
    let s = Scratch::new();
    let copy = |seed: u32| format!("{}\nseed = {seed}", builtin("random"));
    s.write("tournament.toml", &sprt_toml(&copy(11), &copy(12), 300));
    s.run_ok(&["run"], 300);
    let t = table_json(&s);
    assert_ne!(t["sprt"]["result"], "H1", "{t}");
    let llr = t["sprt"]["llr"].as_f64().unwrap();
    assert!(llr < t["sprt"]["upper"].as_f64().unwrap(), "{t}");
}

/// Issue 30: an SPRT from one repeated position is refused when the file
/// is read; with `repeat-openings = true` it runs and every verdict says so.
#[test]
fn an_sprt_from_one_repeated_position_is_refused_or_marked() {
    let s = Scratch::new();
    let toml = sprt_toml(&builtin("weighted"), &builtin("random"), 40)
        .replace("random-plies = 4", "random-plies = 0");
    s.write("tournament.toml", &toml);
    let out = s
        .cmd(&["run"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the config's exit code: {err}");
    assert!(
        err.contains("tournament.toml:7:1: `sprt`"),
        "names the line: {err}"
    );
    assert!(
        err.contains("every pair starts from the initial position"),
        "{err}"
    );
    assert!(!s.join("results/games.jsonl").exists(), "nothing played");
    s.write(
        "tournament.toml",
        &toml.replace("[sprt]\n", "[sprt]\nrepeat-openings = true\n"),
    );
    let out = s.run_ok(&["run"], 300);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("openings: 1 distinct (the initial position: random-plies = 0)"),
        "{err}"
    );
    assert!(
        err.contains("openings repeat: 1 distinct for 20 pairs"),
        "the verdicts say so: {err}"
    );
    let t = table_json(&s);
    assert_eq!(
        t["sprt"]["caveat"], "openings repeat: 1 distinct for 20 pairs (repeat-openings = true)",
        "{t}"
    );
}

fn swiss_toml() -> String {
    let mut players = Vec::new();
    for (k, b) in ["random", "greedy", "weighted"].iter().enumerate() {
        for copy in 0..3 {
            players.push((
                format!("{b}{copy}"),
                format!("{}\nseed = {}", builtin(b), 10 * k + copy),
            ));
        }
    }
    let refs: Vec<(&str, &str)> = players
        .iter()
        .map(|(n, h)| (n.as_str(), h.as_str()))
        .collect();
    toml(&refs, "format = \"swiss\"\nrounds = 5\n")
        .replace("games-per-pairing = 2\n", "")
        .replace("concurrency = 2", "concurrency = 1")
}

/// By brute force: the least sum of squared score differences over all
/// pairings of `players` in which every pair may meet.
fn least_squared_difference(
    players: &[String],
    score: &BTreeMap<String, f64>,
    may_meet: &dyn Fn(&String, &String) -> bool,
) -> f64 {
    let Some((first, rest)) = players.split_first() else {
        return 0.0;
    };
    let mut best = f64::INFINITY;
    for (i, other) in rest.iter().enumerate() {
        if !may_meet(first, other) {
            continue;
        }
        let mut remaining = rest.to_vec();
        remaining.remove(i);
        let cost = (score[first] - score[other]).powi(2)
            + least_squared_difference(&remaining, score, may_meet);
        best = best.min(cost);
    }
    best
}

#[test]
fn swiss_nine_players_five_rounds_pairs_by_score_and_resumes_mid_round() {
    let reference = Scratch::new();
    reference.write("tournament.toml", &swiss_toml());
    reference.run_ok(&["run"], 300);
    let recs = records(&reference);
    assert_eq!(recs.len(), 40, "5 rounds x 4 pairings x 2 games");
    let names: Vec<String> = ["random", "greedy", "weighted"]
        .iter()
        .flat_map(|b| (0..3).map(move |c| format!("{b}{c}")))
        .collect();
    let mut met = std::collections::HashSet::new();
    let mut byes = Vec::new();
    let mut score: BTreeMap<String, f64> = names.iter().map(|n| (n.clone(), 0.0)).collect();
    for round in 1..=5u32 {
        let games: Vec<&GameRecord> = recs
            .iter()
            .filter(|r| r.swiss_round == Some(round))
            .collect();
        assert_eq!(games.len(), 8, "round {round}");
        // Pairings of the round: game points of each side.
        let mut pairings: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
        for r in &games {
            let (a, b) = if r.black < r.white {
                (&r.black, &r.white)
            } else {
                (&r.white, &r.black)
            };
            let e = pairings.entry((a.clone(), b.clone())).or_default();
            let a_black = &r.black == a;
            let pts = r.result.points_for(tournament::game::Color::Black);
            let (pa, pb) = if a_black {
                (pts, 1.0 - pts)
            } else {
                (1.0 - pts, pts)
            };
            e.0 += pa;
            e.1 += pb;
        }
        assert_eq!(pairings.len(), 4, "round {round}");
        for (a, b) in pairings.keys() {
            assert!(met.insert((a.clone(), b.clone())), "rematch {a}-{b}");
            // Colours swapped within the pair.
            let ab = games.iter().filter(|r| &r.black == a).count();
            let ba = games.iter().filter(|r| &r.black == b).count();
            assert_eq!((ab, ba), (1, 1), "{a}-{b} in round {round}");
        }
        let bye: Vec<&String> = names
            .iter()
            .filter(|n| !games.iter().any(|r| &&r.black == n || &&r.white == n))
            .collect();
        assert_eq!(bye.len(), 1, "round {round}");
        assert!(!byes.contains(bye[0]), "second bye for {}", bye[0]);
        // Pairings by score: no pairing of the others without a rematch
        // has a smaller sum of squared score differences.
        let others: Vec<String> = names.iter().filter(|n| *n != bye[0]).cloned().collect();
        let played: f64 = pairings
            .keys()
            .map(|(a, b)| (score[a] - score[b]).powi(2))
            .sum();
        let unmet = |a: &String, b: &String| {
            let key = if a < b {
                (a.clone(), b.clone())
            } else {
                (b.clone(), a.clone())
            };
            !met.contains(&key) || pairings.contains_key(&key)
        };
        let best = least_squared_difference(&others, &score, &unmet);
        assert_eq!(played, best, "round {round}: {pairings:?} with {score:?}");
        byes.push(bye[0].clone());
        *score.get_mut(bye[0]).unwrap() += 1.0;
        for ((a, b), (pa, pb)) in &pairings {
            let (ma, mb) = if pa > pb {
                (1.0, 0.0)
            } else if pa < pb {
                (0.0, 1.0)
            } else {
                (0.5, 0.5)
            };
            *score.get_mut(a).unwrap() += ma;
            *score.get_mut(b).unwrap() += mb;
        }
    }
    // The crosstable ranks by Swiss score and shows the tie-breaks.
    let t = table_json(&reference);
    let standings = t["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 9);
    for row in standings {
        let name = row["player"].as_str().unwrap();
        assert_eq!(
            row["swiss"]["score"].as_f64().unwrap(),
            score[name],
            "{row}"
        );
        assert!(row["swiss"]["buchholz"].as_f64().is_some());
        assert!(row["swiss"]["sonneborn_berger"].as_f64().is_some());
    }
    let scores: Vec<f64> = standings
        .iter()
        .map(|r| r["swiss"]["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    // Killed mid-round, then resumed: the same event.
    let s = Scratch::new();
    s.write("tournament.toml", &swiss_toml());
    let mut child = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Built-in games are quick: a kill timed from a poll can land on a
    // round's end under load. So the referee is stopped (SIGSTOP) first,
    // and killed only if what it has recorded ends mid-round; else it is
    // continued until its next game is recorded.
    let pid = child.id() as i32;
    let mut seen = 10;
    loop {
        assert!(
            wait_until(120, || records(&s).len() > seen),
            "games were played"
        );
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        assert!(wait_until(10, || all_threads_stopped(pid)), "stopped");
        seen = records(&s).len();
        if !seen.is_multiple_of(8) || seen >= 40 {
            break;
        }
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&s);
    assert!(
        !before.len().is_multiple_of(8) && before.len() < 40,
        "killed mid-round ({} games)",
        before.len()
    );
    s.run_ok(&["run"], 300);
    let after = records(&s);
    assert_eq!(after.len(), 40);
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(outcomes(&after), outcomes(&recs), "same pairings and games");
}

/// Whether every thread of `pid` is in the stopped state (so none is
/// still in the middle of writing a record).
fn all_threads_stopped(pid: i32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|t| {
        stat_fields(&t.path().join("stat"))
            .is_some_and(|f| f.first().is_some_and(|s| s == "T" || s == "t"))
    })
}

#[test]
fn watch_follows_a_running_game_to_its_end() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &toml(
            &[
                ("slow", &command(&fakebot("slow 150"))),
                ("greedy", &builtin("greedy")),
            ],
            "",
        )
        .replace("concurrency = 2", "concurrency = 1"),
    );
    let mut run = Command::new(tournament_bin())
        .current_dir(s.path())
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = s
        .cmd(&["watch", "--wait-secs", "30"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    run.wait().unwrap();
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("game r01."), "{text}");
    assert!(text.contains("   a b c d e f"), "a board was drawn: {text}");
    assert!(text.contains("move 5: "), "{text}");
    assert!(text.contains("game over: "), "{text}");
}
