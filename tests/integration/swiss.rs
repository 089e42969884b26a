//! Swiss pairings at scale: each round's pairing checked against an
//! independent matching solver (networkx), and a thousand-player event
//! stopped mid-round pairing as it would have uninterrupted.
//!
//! Owns these checks only; the pairing rule is `schedule::swiss`, the
//! lib tests check it against an exhaustive search on small fields.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

use rand::{rngs::StdRng, Rng, SeedableRng};
use tournament::record::GameRecord;
use tournament::schedule::swiss::{pair_round, History, RoundPairing};

use crate::fixture::{tournament_bin, wait_until, Scratch};
use crate::needs;

/// (primary, secondary) of pairing ranks i < j, from the README's rule:
/// squared score difference in half points; same score group of g: |d −
/// ⌊g/2⌋|, different groups: d − 1 (d: places apart).
fn rule_cost(halves: &[i64], i: usize, j: usize) -> (i64, i64) {
    let diff = halves[i] - halves[j];
    let d = (j - i) as i64;
    if diff != 0 {
        return (diff * diff, d - 1);
    }
    let g = halves.iter().filter(|&&x| x == halves[i]).count() as i64;
    (0, (d - g / 2).abs())
}

/// One round to pair: its number of players (ranks), and the allowed
/// pairs (i, j, primary, secondary).
type Instance = (usize, Vec<(usize, usize, i64, i64)>);

/// networkx's best (Σ primary, Σ secondary) of each instance, or `None`
/// where it finds no perfect matching.
fn networkx_optimum(instances: &[Instance]) -> Vec<Option<(i64, i64)>> {
    let script = r#"
import json, sys
import networkx as nx
out = []
for m, edges in json.load(sys.stdin):
    unit = m * m + 1
    top = max([p * unit + s for _, _, p, s in edges] + [0]) + 1
    g = nx.Graph()
    g.add_nodes_from(range(m))
    for i, j, p, s in edges:
        g.add_edge(i, j, weight=top - (p * unit + s), p=p, s=s)
    mate = nx.max_weight_matching(g, maxcardinality=True)
    if 2 * len(mate) != m:
        out.append(None)
        continue
    out.append([sum(g[i][j]["p"] for i, j in mate), sum(g[i][j]["s"] for i, j in mate)])
print(json.dumps(out))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let input = serde_json::to_string(instances).unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "networkx failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Fields of 31 and 60 players over 7 and 5 rounds of random results:
/// every round's pairing (rematch-free, everyone paired but the bye)
/// costs what networkx's maximum-weight matching finds best over the
/// same allowed pairs.
#[test]
fn pairings_are_as_cheap_as_networkx_finds() {
    if !needs::have(&[needs::NETWORKX]) {
        return;
    }
    let mut rng = StdRng::seed_from_u64(60);
    let mut instances = Vec::new();
    let mut ours = Vec::new();
    for (n, rounds) in [(31usize, 7u32), (60, 5), (44, 6)] {
        let mut h = History::new(n);
        for round in 1..=rounds {
            let got: RoundPairing = pair_round(&h, round).expect("pairable");
            let ranked: Vec<usize> = h
                .ranking()
                .into_iter()
                .filter(|&p| Some(p) != got.bye)
                .collect();
            let halves: Vec<i64> = ranked.iter().map(|&p| (h.score[p] * 2.0) as i64).collect();
            let rank = |p: usize| ranked.iter().position(|&x| x == p).unwrap();
            let mut edges = Vec::new();
            for i in 0..ranked.len() {
                for j in i + 1..ranked.len() {
                    if !h.met(ranked[i], ranked[j]) {
                        let (p, s) = rule_cost(&halves, i, j);
                        edges.push((i, j, p, s));
                    }
                }
            }
            let mut cost = (0, 0);
            for &(a, b) in &got.pairs {
                assert!(!h.met(a, b), "rematch {a}-{b}");
                let (i, j) = (rank(a).min(rank(b)), rank(a).max(rank(b)));
                let (p, s) = rule_cost(&halves, i, j);
                cost = (cost.0 + p, cost.1 + s);
            }
            assert_eq!(2 * got.pairs.len(), ranked.len(), "n {n} round {round}");
            instances.push((ranked.len(), edges));
            ours.push((n, round, cost));
            for &(a, b) in &got.pairs {
                let (pa, pb) = [(2.0, 0.0), (1.0, 1.0), (0.0, 2.0)][rng.gen_range(0..3)];
                h.add_result(a, b, pa, pb);
            }
            if let Some(b) = got.bye {
                h.add_bye(b);
            }
        }
    }
    let theirs = networkx_optimum(&instances);
    for ((n, round, cost), best) in ours.into_iter().zip(theirs) {
        assert_eq!(Some(cost), best, "{n} players, round {round}");
    }
}

fn records(s: &Scratch) -> Vec<GameRecord> {
    crate::fixture::whole_records(&s.join("results/games.jsonl"))
}

/// A Swiss of `n` built-in random players on 4×4.
fn big_swiss(n: usize, rounds: u32) -> String {
    let mut t = format!(
        "[tournament]\nname = \"big swiss\"\nformat = \"swiss\"\nrounds = {rounds}\n\
         concurrency = 2\nsize = 4\n\n[time]\nmove-ms = 3000\nstartup-ms = 5000\n\n\
         [openings]\nrandom-plies = 2\nseed = 5\n"
    );
    for k in 0..n {
        t.push_str(&format!(
            "\n[[player]]\nname = \"p{k:04}\"\nbuiltin = \"random\"\nseed = {k}\n"
        ));
    }
    t
}

/// The pairings of each round (game ids name round and colours) and
/// each game's result.
fn event(recs: &[GameRecord]) -> BTreeMap<String, (Option<u32>, String)> {
    recs.iter()
        .map(|r| (r.id.clone(), (r.swiss_round, r.result.name().to_string())))
        .collect()
}

/// 1,000 players, 2 rounds: stopped (killed) in round 2, whose pairings
/// depend on round 1's results, then resumed, the event is the one an
/// uninterrupted run plays: the same games (ids: round, players,
/// colours) with the same results.
#[test]
fn a_thousand_player_swiss_resumed_mid_round_pairs_as_uninterrupted() {
    let (n, rounds) = (1000, 2);
    let whole = Scratch::new();
    whole.write("tournament.toml", &big_swiss(n, rounds));
    whole.run_ok(&["-q", "run"], 900);
    let reference = records(&whole);
    assert_eq!(reference.len(), n * rounds as usize);

    let s = Scratch::new();
    s.write("tournament.toml", &big_swiss(n, rounds));
    let mut child = Command::new(tournament_bin())
        .current_dir(s.path())
        .args(["-q", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(600, || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            let text = std::fs::read(s.join("results/games.jsonl")).unwrap_or_default();
            text.iter().filter(|&&b| b == b'\n').count() >= n + 200
        }),
        "round 2 was reached"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&s);
    assert!(
        before.len() < rounds as usize * n,
        "killed mid-round 2 ({} games)",
        before.len()
    );
    s.run_ok(&["-q", "run"], 900);
    let after = records(&s);
    assert_eq!(after.len(), reference.len());
    assert_eq!(
        event(&after),
        event(&reference),
        "same pairings and results"
    );
}
