//! One tournament in shares (issue 29): a round robin of 6 deterministic
//! players run as 4 shares at once gives the whole run's games (same ids,
//! openings, colours and results) and crosstable; a share killed mid-run
//! and run again loses and doubles nothing; a share of another
//! configuration or another split is refused; an SPRT in 4 shares stops
//! every share with one verdict; a Swiss of 5 rounds in 3 shares (each
//! waiting for the others' part of a round before pairing the next) gives
//! the whole Swiss's games; and the same on a real one-node Slurm
//! (`scripts/slurm-one-node`, `sbatch --array=0-3`, `--array=0-2`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use tournament::record::GameRecord;

use crate::fixture::{fakebot, project_root, tournament_bin, wait_until, Scratch};
use crate::needs::{self, Need};

/// A round robin of 6 players (4 built-ins and `extra`), 2 games a
/// pairing: 30 games, 15 colour-swapped pairs.
fn six(extra: &str, per_pairing: u32) -> String {
    let mut t = format!(
        "[tournament]\nname = \"six\"\ngames-per-pairing = {per_pairing}\nconcurrency = 1\nsize = 6\n\n\
         [time]\nmove-ms = 3000\nstartup-ms = 5000\n\n[openings]\nrandom-plies = 2\nseed = 3\n"
    );
    for (name, how) in [
        ("r1", "builtin = \"random\""),
        ("g1", "builtin = \"greedy\""),
        ("w1", "builtin = \"weighted\""),
        ("r2", "builtin = \"random\""),
        ("w2", "builtin = \"weighted\""),
        ("x", extra),
    ] {
        t.push_str(&format!("\n[[player]]\nname = \"{name}\"\n{how}\n"));
    }
    t
}

fn greedy() -> &'static str {
    "builtin = \"greedy\""
}

fn read(path: &Path) -> Vec<GameRecord> {
    crate::fixture::whole_records(path)
}

/// id → (round, black, white, opening, transcript, result): what the
/// schedule and deterministic bots fix.
type Outcome = (u32, String, String, String, String, String);

fn outcomes(recs: &[GameRecord]) -> BTreeMap<String, Outcome> {
    recs.iter()
        .map(|r| {
            (
                r.id.clone(),
                (
                    r.round,
                    r.black.clone(),
                    r.white.clone(),
                    r.opening.clone(),
                    r.transcript.clone(),
                    r.result.name().to_string(),
                ),
            )
        })
        .collect()
}

fn standings(s: &Scratch, results: &str) -> serde_json::Value {
    let out = s
        .cmd(&["crosstable", "--format", "json", "--results", results])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    table["standings"].clone()
}

/// The whole tournament run unsharded in its own folder.
fn reference(toml: &str) -> (Scratch, BTreeMap<String, Outcome>) {
    let r = Scratch::new();
    r.write("tournament.toml", toml);
    r.run_ok(&["run"], 300);
    let games = outcomes(&read(&r.join("results/games.jsonl")));
    (r, games)
}

fn share(s: &Scratch, k: u32, n: u32) -> std::process::Child {
    Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["run", "--shard", &format!("{k}/{n}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn four_shares_at_once_give_the_whole_runs_games_and_crosstable() {
    let (r, expected) = reference(&six(greedy(), 2));
    assert_eq!(expected.len(), 30);

    let s = Scratch::new();
    s.write("tournament.toml", &six(greedy(), 2));
    let children: Vec<_> = (0..4).map(|k| share(&s, k, 4)).collect();
    let mut share_ids: Vec<Vec<String>> = Vec::new();
    for (k, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "share {k}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "share {k}/4 (0-based) of the tournament, from --shard {k}/4"
            )),
            "{stderr}"
        );
        let recs = read(&s.join(&format!("results/shards/{k}-of-4/games.jsonl")));
        // Whole colour-swapped pairs: each game's partner is in its share.
        for g in &recs {
            assert!(
                recs.iter()
                    .any(|h| h.black == g.white && h.white == g.black && h.opening == g.opening),
                "share {k}: {} without its partner",
                g.id
            );
        }
        share_ids.push(recs.iter().map(|r| r.id.clone()).collect());
    }
    let sizes: Vec<usize> = share_ids.iter().map(Vec::len).collect();
    assert_eq!(sizes, [8, 8, 8, 6], "15 pairs dealt to 4 shares");

    let out = s.run_ok(&["merge"], 60);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("merged 30 games of 4 shares (4 done)"),
        "{out:?}"
    );
    let merged = read(&s.join("results/merged/games.jsonl"));
    assert_eq!(
        outcomes(&merged),
        expected,
        "the same games as the whole run"
    );
    assert_eq!(standings(&s, "results"), standings(&r, "results"));
    assert_eq!(standings(&s, "results/merged"), standings(&r, "results"));
    let text = s.run_ok(&["crosstable"], 60);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("shares: 4 of 4 done"), "{text}");
    assert!(text.contains("share 3-of-4 done (6 games)"), "{text}");
    // The folder is played in 4 shares: a whole run or a split in 2 would
    // play games again.
    let whole = s.cmd(&["run"]).output().unwrap();
    assert_eq!(whole.status.code(), Some(5), "{whole:?}");
    let two = s.cmd(&["run", "--shard", "0/2"]).output().unwrap();
    assert_eq!(two.status.code(), Some(5), "{two:?}");
    assert!(String::from_utf8_lossy(&two.stderr).contains("is played in 4 shares"));
}

#[test]
fn a_share_killed_mid_run_resumes_with_nothing_lost_or_doubled() {
    let slow = format!(
        "command = {:?}",
        fakebot("slow 40").split(' ').collect::<Vec<_>>()
    );
    let toml = six(&slow, 4);
    let (_r, expected) = reference(&toml);
    assert_eq!(expected.len(), 60);

    let s = Scratch::new();
    s.write("tournament.toml", &toml);
    let games = s.join("results/shards/1-of-2/games.jsonl");
    let mut child = share(&s, 1, 2);
    assert!(
        wait_until(120, || read(&games).len() >= 4),
        "games were played"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = read(&games);
    let states = s.cmd(&["crosstable"]).output().unwrap();
    let text = String::from_utf8_lossy(&states.stdout);
    assert!(text.contains("share 0-of-2 missing"), "{text}");
    assert!(text.contains("share 1-of-2 stopped"), "{text}");

    let out = s.run_ok(&["run", "--shard", "1/2"], 300);
    let after = read(&games);
    assert_eq!(&after[..before.len()], &before[..], "finished games kept");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&format!("({} already played)", before.len())),
        "resumed"
    );
    s.run_ok(&["run", "--shard", "0/2"], 300);
    let mut all = read(&s.join("results/shards/0-of-2/games.jsonl"));
    all.extend(after);
    assert_eq!(all.len(), 60, "no game lost or doubled");
    assert_eq!(outcomes(&all), expected);

    // A share of another configuration is refused, as a changed schedule.
    s.write("tournament.toml", &six(&slow, 2));
    let changed = s.cmd(&["run", "--shard", "0/2"]).output().unwrap();
    assert_eq!(changed.status.code(), Some(5), "{changed:?}");
    assert!(String::from_utf8_lossy(&changed.stderr).contains("different schedule"));
}

/// `sbatch --parsable OPTIONS scripts/tournament-array.sbatch
/// tournament.toml` in `s`, each task's output in `slurm-K.out`.
fn sbatch(s: &Scratch, options: &[&str]) -> std::process::Output {
    Command::new("sbatch")
        .current_dir(s.path())
        .env("TOURNAMENT", tournament_bin())
        .arg("--parsable")
        .args(options)
        .arg("--output")
        .arg(s.join("slurm-%a.out"))
        .arg(project_root().join("scripts/tournament-array.sbatch"))
        .arg("tournament.toml")
        .output()
        .unwrap()
}

/// One Slurm test at a time: the one-node cluster has 2 CPUs, and a task
/// requeued by one test waited past its time behind another test's array.
static SLURM_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What the Slurm test needs: the tools of a one-node cluster.
const SLURM: &[Need] = &[
    Need::Root,
    Need::Program("sbatch", "slurm-wlm"),
    Need::Program("slurmctld", "slurm-wlm"),
    Need::Program("slurmd", "slurm-wlm"),
    Need::Program("munged", "munge"),
];

#[test]
fn a_slurm_job_array_of_4_tasks_gives_the_whole_runs_games() {
    if !needs::have(SLURM) {
        return;
    }
    let _turn = SLURM_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let up = Command::new(project_root().join("scripts/slurm-one-node"))
        .output()
        .unwrap();
    assert!(up.status.success(), "scripts/slurm-one-node: {up:?}");
    let (_r, expected) = reference(&six(greedy(), 2));

    let s = Scratch::new();
    s.write("tournament.toml", &six(greedy(), 2));
    let sbatch = sbatch(&s, &["--wait", "--array=0-3"]);
    let logs: String = (0..4)
        .map(|k| std::fs::read_to_string(s.join(&format!("slurm-{k}.out"))).unwrap_or_default())
        .collect();
    assert!(sbatch.status.success(), "{sbatch:?}\n{logs}");
    each_task_said_its_share(&logs, 4);
    let merged = merged(&s);
    assert_eq!(
        outcomes(&merged),
        expected,
        "the same games as the whole run"
    );
}

/// Each of the `tasks` tasks of a Slurm array said, in `logs` (their
/// outputs), which share it plays and that Slurm told it.
fn each_task_said_its_share(logs: &str, tasks: usize) {
    for k in 0..tasks {
        assert!(
            logs.contains(&format!(
                "share {k}/{tasks} (0-based) of the tournament, from Slurm"
            )),
            "{logs}"
        );
    }
}

/// `tournament merge`'s one `games.jsonl` of every share.
fn merged(s: &Scratch) -> Vec<GameRecord> {
    s.run_ok(&["merge"], 60);
    read(&s.join("results/merged/games.jsonl"))
}

/// `squeue` shows nothing more of job `job` (at most `secs`).
fn slurm_job_ends(job: &str, secs: u64) -> bool {
    wait_until(secs, || {
        Command::new("squeue")
            .args(["-h", "-j", job])
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout.is_empty())
    })
}

#[test]
fn a_requeued_slurm_task_resumes_with_nothing_lost_or_doubled() {
    if !needs::have(SLURM) {
        return;
    }
    let _turn = SLURM_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let up = Command::new(project_root().join("scripts/slurm-one-node"))
        .output()
        .unwrap();
    assert!(up.status.success(), "scripts/slurm-one-node: {up:?}");
    let slow = format!(
        "command = {:?}",
        fakebot("slow 40").split(' ').collect::<Vec<_>>()
    );
    let toml = six(&slow, 4);
    let (_r, expected) = reference(&toml);

    let s = Scratch::new();
    s.write("tournament.toml", &toml);
    let sbatch = sbatch(&s, &["--array=0-1"]);
    assert!(sbatch.status.success(), "{sbatch:?}");
    let job = String::from_utf8_lossy(&sbatch.stdout).trim().to_string();
    let games = s.join("results/shards/1-of-2/games.jsonl");
    assert!(wait_until(120, || read(&games).len() >= 4), "task 1 plays");
    let task = format!("{job}_1");
    let requeue = Command::new("scontrol")
        .args(["requeue", &task])
        .output()
        .unwrap();
    assert!(requeue.status.success(), "{requeue:?}");
    // A requeued task is pending for the credential lifetime (10 s in
    // scripts/slurm-one-node's slurm.conf) before it runs again. Starting
    // it sooner (`StartTime=now`) has slurmd refuse it for good ("Job
    // credential revoked") when it falls in the second of the requeue.
    assert!(wait_until(60, || {
        Command::new("squeue")
            .args(["-h", "-j", &task, "-o", "%T"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "PENDING")
    }));
    assert!(
        wait_until(300, || read(&games).len() >= 30),
        "task 1 finishes its share ({} games):\n{}",
        read(&games).len(),
        std::fs::read_to_string(s.join("slurm-1.out")).unwrap_or_default()
    );
    assert!(slurm_job_ends(&job, 60), "the array ends");
    let log = std::fs::read_to_string(s.join("slurm-1.out")).unwrap();
    assert!(log.contains("DUE TO JOB REQUEUE"), "{log}");
    let starts: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("already played)"))
        .collect();
    assert!(starts.len() >= 2, "run, then run again:\n{log}");
    assert!(
        !starts[starts.len() - 1].contains("(0 already played)"),
        "it resumed:\n{log}"
    );
    let mut all = read(&s.join("results/shards/0-of-2/games.jsonl"));
    all.extend(read(&games));
    assert_eq!(all.len(), 60, "no game lost or doubled:\n{log}");
    assert!(
        all.iter().all(|r| r.forfeit.is_none()),
        "no bot forfeits for being killed by the requeue"
    );
    assert_eq!(outcomes(&all), expected);
}

#[test]
fn kubernetes_gives_the_index_and_a_swiss_waits_for_the_other_shares() {
    let s = Scratch::new();
    s.write("tournament.toml", &six(greedy(), 2));
    let out = s
        .cmd(&["run", "--shards", "2"])
        .env("JOB_COMPLETION_INDEX", "1")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "share 1/2 (0-based) of the tournament, from Kubernetes: JOB_COMPLETION_INDEX=1"
        ),
        "{stderr}"
    );
    assert_eq!(read(&s.join("results/shards/1-of-2/games.jsonl")).len(), 14);
    // Without the index, --shards N says what it lacks.
    let out = s.cmd(&["run", "--shards", "2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the share's index"));

    // A Swiss is played in shares too: its rounds wait for each other.
    let t = Scratch::new();
    t.write("tournament.toml", &swiss(3));
    let log = t.join("share-1.log");
    let mut waiting = Command::new(tournament_bin())
        .current_dir(t.path())
        .args(["run", "--shards", "2"])
        .env("JOB_COMPLETION_INDEX", "1")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let said = wait_until(120, || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Swiss round 2: waiting for share 0-of-2")
    });
    signal(&waiting, libc::SIGTERM);
    let status = waiting.wait().unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(said, "{stderr}");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("share 1/2 (0-based) of the tournament, from Kubernetes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Swiss round 2: waiting for share 0-of-2 (0 of 4 games)"),
        "share 1 waits for share 0's part of round 1: {stderr}"
    );
}

#[test]
fn a_share_that_cannot_start_a_player_says_so_and_stops() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &six("command = [\"no-such-bot-anywhere\"]", 2),
    );
    let out = s.cmd(&["run", "--shard", "0/2"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains("no-such-bot-anywhere"), "{stderr}");
    assert!(
        read(&s.join("results/shards/0-of-2/games.jsonl")).is_empty(),
        "no game played, no forfeit recorded"
    );
}

/// An SPRT of a strong built-in against a weak one, at most 400 games.
fn sprt_match() -> String {
    "[tournament]\nname = \"sprt\"\nsize = 6\ngames-per-pairing = 400\nconcurrency = 1\n\n\
     [time]\nmove-ms = 3000\n\n[sprt]\nelo0 = 0\nelo1 = 100\nalpha = 0.05\nbeta = 0.05\n\n\
     [openings]\nrandom-plies = 6\nseed = 5\n\n\
     [[player]]\nname = \"a\"\nbuiltin = \"weighted\"\n\n[[player]]\nname = \"b\"\nbuiltin = \"random\"\n"
        .to_string()
}

/// The one `SPRT: … accepted after N games` line in `text`, and N.
fn verdict_line(text: &str) -> (String, usize) {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("SPRT: ")).collect();
    assert_eq!(lines.len(), 1, "one verdict: {text}");
    let games = lines[0]
        .split(" accepted after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a verdict with its games: {}", lines[0]));
    (lines[0].to_string(), games)
}

/// What the crosstable (JSON) of `results` says of the SPRT.
fn sprt_of(s: &Scratch, results: &str) -> serde_json::Value {
    let out = s
        .cmd(&["crosstable", "--format", "json", "--results", results])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    table["sprt"].clone()
}

#[test]
fn an_sprt_in_four_shares_stops_every_share_with_one_verdict() {
    // Unsharded, the run's verdict is the one its readers show.
    let r = Scratch::new();
    r.write("tournament.toml", &sprt_match());
    let out = r.run_ok(&["run"], 300);
    let (_, games) = verdict_line(&String::from_utf8_lossy(&out.stdout));
    let kept = sprt_of(&r, "results");
    assert_eq!(kept["result"], "H1", "{kept}");
    assert_eq!(kept["decided_after"], games, "{kept}");

    let s = Scratch::new();
    s.write("tournament.toml", &sprt_match());
    let children: Vec<_> = (0..4)
        .map(|k| {
            Command::new(tournament_bin())
                .current_dir(s.path())
                .args(["run", "--shard", &format!("{k}/4")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut lines = Vec::new();
    for (k, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "share {k}: {out:?}");
        lines.push(verdict_line(&String::from_utf8_lossy(&out.stdout)));
    }
    let (line, games) = lines[0].clone();
    assert!(lines.iter().all(|l| l.0 == line), "one verdict: {lines:?}");
    assert!(line.starts_with("SPRT: H1 accepted after "), "{line}");
    let played: usize = (0..4)
        .map(|k| read(&s.join(&format!("results/shards/{k}-of-4/games.jsonl"))).len())
        .sum();
    assert!(
        games <= played && played < 400,
        "stopped early: {games} of {played}"
    );
    let kept = sprt_of(&s, "results");
    assert_eq!(kept["result"], "H1", "{kept}");
    assert_eq!(kept["decided_after"], games, "{kept}");
    let text = String::from_utf8_lossy(&s.run_ok(&["crosstable"], 60).stdout).to_string();
    assert!(text.contains("shares: 4 of 4 done"), "{text}");
    assert!(
        text.contains(&format!("→ H1 (decided after {games} games)")),
        "{text}"
    );
    // A share run again plays nothing more and says the same verdict.
    let again = s.run_ok(&["run", "--shard", "2/4"], 60);
    assert_eq!(
        verdict_line(&String::from_utf8_lossy(&again.stdout)).0,
        line
    );
    let after: usize = (0..4)
        .map(|k| read(&s.join(&format!("results/shards/{k}-of-4/games.jsonl"))).len())
        .sum();
    assert_eq!(after, played);
    // The merged folder keeps the shares' verdict.
    s.run_ok(&["merge"], 60);
    assert_eq!(sprt_of(&s, "results/merged")["decided_after"], games);
}

#[test]
fn an_sprt_as_a_slurm_array_of_4_tasks_stops_every_task_with_one_verdict() {
    if !needs::have(SLURM) {
        return;
    }
    let _turn = SLURM_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let up = Command::new(project_root().join("scripts/slurm-one-node"))
        .output()
        .unwrap();
    assert!(up.status.success(), "scripts/slurm-one-node: {up:?}");
    let s = Scratch::new();
    s.write("tournament.toml", &sprt_match());
    let sbatch = sbatch(&s, &["--wait", "--array=0-3"]);
    let logs: Vec<String> = (0..4)
        .map(|k| std::fs::read_to_string(s.join(&format!("slurm-{k}.out"))).unwrap_or_default())
        .collect();
    assert!(sbatch.status.success(), "{sbatch:?}\n{logs:?}");
    let lines: Vec<(String, usize)> = logs.iter().map(|l| verdict_line(l)).collect();
    assert!(
        lines.iter().all(|l| l == &lines[0]),
        "every task, one verdict: {lines:?}"
    );
    assert_eq!(sprt_of(&s, "results")["decided_after"], lines[0].1);
}

#[test]
fn two_shares_on_two_mounts_started_by_gnu_parallel_give_one_tournament() {
    let mut needed = needs::SHARED_DRIVE.to_vec();
    needed.push(needs::GNU_PARALLEL);
    if !needs::have(&needed) {
        return;
    }
    let (r, expected) = reference(&six(greedy(), 2));
    let _serial = crate::faults::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let drive = crate::faults::Drive::up(crate::faults::Cache::Default);
    let ws = drive.ws("six");
    std::fs::write(ws.a.join("tournament.toml"), six(greedy(), 2)).unwrap();
    // Share 0 on mount A ("PC A"), share 1 on mount B, from another host
    // name ("PC B"): one command line each, as GNU parallel runs them.
    let local = Scratch::new();
    let bin = tournament_bin().display().to_string();
    let a = format!("cd '{}' && '{bin}' run --shard 0/2", ws.a.display());
    let b = format!(
        "cd '{}' && unshare --uts sh -c 'hostname pc-b && exec \"$0\" \"$@\"' '{bin}' run --shard 1/2",
        ws.b.display()
    );
    let out = Command::new("parallel")
        .current_dir(local.path())
        .args(["--line-buffer", "--halt", "never", ":::", &a, &b])
        .env_remove("TOURNAMENT_LOG")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    for k in 0..2 {
        assert!(
            said.contains(&format!(
                "share {k}/2 (0-based) of the tournament, from --shard {k}/2"
            )),
            "{said}"
        );
    }
    // One tournament, read from either mount: at once, or, for the games
    // the other mount wrote, once sshfs's default cache (20 s) lets them
    // through.
    let whole = standings(&r, "results");
    for mount in [&ws.a, &ws.b] {
        let read_there = || {
            let out = Command::new(tournament_bin())
                .current_dir(mount)
                .args(["crosstable", "--format", "json"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            table["standings"].clone()
        };
        assert!(
            wait_until(45, || read_there() == whole),
            "{}: {} against the whole run's {whole}",
            mount.display(),
            read_there()
        );
    }
    let merged = Command::new(tournament_bin())
        .current_dir(&ws.b)
        .arg("merge")
        .output()
        .unwrap();
    assert!(merged.status.success(), "{merged:?}");
    assert_eq!(
        outcomes(&read(&ws.a.join("results/merged/games.jsonl"))),
        expected,
        "the same games as the whole run"
    );
}

/// A Swiss of `rounds` rounds of 7 deterministic built-ins on a 6x6
/// board: 3 pairings (6 games) and a bye a round.
fn swiss(rounds: u32) -> String {
    let mut t = format!(
        "[tournament]\nname = \"swiss\"\nformat = \"swiss\"\nrounds = {rounds}\nconcurrency = 1\n\
         size = 6\n\n[time]\nmove-ms = 3000\nstartup-ms = 5000\n\n[openings]\nrandom-plies = 2\n\
         seed = 7\n"
    );
    for (name, how) in [
        ("g1", "greedy"),
        ("w1", "weighted"),
        ("r1", "random"),
        ("g2", "greedy"),
        ("w2", "weighted"),
        ("r2", "random"),
        ("w3", "weighted"),
    ] {
        t.push_str(&format!(
            "\n[[player]]\nname = \"{name}\"\nbuiltin = \"{how}\"\n"
        ));
    }
    t
}

fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: a plain kill(2) of a child this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
}

#[test]
fn a_swiss_in_three_shares_equals_the_whole_swiss() {
    let (r, expected) = reference(&swiss(5));
    assert_eq!(expected.len(), 30, "5 rounds of 3 pairings");

    let s = Scratch::new();
    s.write("tournament.toml", &swiss(5));
    let part = |k: u32| s.join(&format!("results/shards/{k}-of-3/games.jsonl"));
    // Shares 0 and 1 play their part of round 1, then wait for share 2.
    let zero = share(&s, 0, 3);
    let one = share(&s, 1, 3);
    assert!(
        wait_until(120, || read(&part(0)).len() == 2
            && read(&part(1)).len() == 2),
        "shares 0 and 1 play round 1"
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(read(&part(0)).len(), 2, "share 0 waits for share 2");
    // A waiting share stops at once on TERM, and says how to resume.
    signal(&one, libc::SIGTERM);
    let out = one.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("Swiss round 2: waiting for share 2-of-3 (0 of 2 games)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("run the same command again to resume"),
        "{stderr}"
    );
    // Share 2 plays round 1; share 0 plays round 2 and waits for share 1.
    let two = share(&s, 2, 3);
    assert!(
        wait_until(120, || read(&part(0)).len() == 4),
        "share 0 plays round 2"
    );
    let one = share(&s, 1, 3);
    let mut shares_said = String::new();
    for (k, child) in [(0, zero), (1, one), (2, two)] {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "share {k}: {stderr}");
        shares_said.push_str(&stderr);
        assert_eq!(read(&part(k)).len(), 10, "share {k}: one pairing a round");
    }
    assert!(
        shares_said.contains("(2 already played)"),
        "share 1 resumed:\n{shares_said}"
    );
    // (Whether share 0 waits for share 1 in a later round depends on how
    // fast share 1 catches up: the waiting line is checked above, where
    // share 2 had not started.)

    let out = s.run_ok(&["merge"], 60);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("merged 30 games of 3 shares (3 done)"),
        "{out:?}"
    );
    let merged = read(&s.join("results/merged/games.jsonl"));
    assert_eq!(
        outcomes(&merged),
        expected,
        "the same games as the whole Swiss"
    );
    let rounds = |recs: &[GameRecord]| -> BTreeMap<String, Option<u32>> {
        recs.iter().map(|r| (r.id.clone(), r.swiss_round)).collect()
    };
    assert_eq!(
        rounds(&merged),
        rounds(&read(&r.join("results/games.jsonl")))
    );
    assert_eq!(standings(&s, "results"), standings(&r, "results"));
}

#[test]
fn a_swiss_as_a_slurm_array_of_3_tasks_equals_the_whole_swiss() {
    if !needs::have(SLURM) {
        return;
    }
    let _turn = SLURM_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let up = Command::new(project_root().join("scripts/slurm-one-node"))
        .output()
        .unwrap();
    assert!(up.status.success(), "scripts/slurm-one-node: {up:?}");
    let (_r, expected) = reference(&swiss(5));

    let s = Scratch::new();
    s.write("tournament.toml", &swiss(5));
    // The tasks of a Swiss wait for each other: all 3 must run at once,
    // sharing the node's CPUs (the partition allows it, see
    // scripts/slurm-one-node).
    let sbatch = sbatch(&s, &["--array=0-2", "--oversubscribe"]);
    assert!(sbatch.status.success(), "{sbatch:?}");
    let job = String::from_utf8_lossy(&sbatch.stdout).trim().to_string();
    let logs = || -> String {
        (0..3)
            .map(|k| std::fs::read_to_string(s.join(&format!("slurm-{k}.out"))).unwrap_or_default())
            .collect()
    };
    // No task can end before every task has played every round: the
    // array ends only if the 3 ran at once.
    let ended = slurm_job_ends(&job, 600);
    if !ended {
        let _ = Command::new("scancel").arg(&job).status();
    }
    let logs = logs();
    assert!(ended, "the 3 tasks ran at once and ended:\n{logs}");
    each_task_said_its_share(&logs, 3);
    let merged = merged(&s);
    assert_eq!(
        outcomes(&merged),
        expected,
        "the same games as the whole Swiss:\n{logs}"
    );
}
