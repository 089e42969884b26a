//! The default openings (issue 30's first Must-show): with no `[openings]`
//! table an 8×8 run plays the shipped balanced list, one opening per
//! colour-swapped pair; an SPRT of a bot against an identical copy of
//! itself then seldom accepts H1 (at most 2 runs in 20, seeds apart), and
//! one of a clearly stronger bot against a weaker one accepts it.

use std::collections::{BTreeMap, HashSet};

use tournament::record::GameRecord;

use crate::fixture::Scratch;

/// An 8×8 SPRT [0, 50] with every default (no `[openings]`), up to
/// `limit` games, between two built-ins with seeds of their own.
fn sprt_toml(first: (&str, u64), second: (&str, u64), limit: u32) -> String {
    let player = |name: &str, (builtin, seed): (&str, u64)| {
        format!("\n[[player]]\nname = \"{name}\"\nbuiltin = \"{builtin}\"\nseed = {seed}\n")
    };
    format!(
        "[tournament]\nname = \"sprt\"\ngames-per-pairing = {limit}\nconcurrency = 1\n\n\
         [sprt]\nelo0 = 0\nelo1 = 50\n{}{}",
        player("first", first),
        player("second", second)
    )
}

/// The run's verdict from its last line: "H0", "H1" or "none" (the limit
/// reached first), and the games it played; `limit` games were scheduled.
fn verdict(s: &Scratch, limit: u32) -> (String, Vec<GameRecord>) {
    let out = s.run_ok(&["run"], 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "openings: {} distinct (the balanced openings shipped with the program, \
         openings/balanced-8.txt), each played by both colours",
        limit / 2
    );
    assert!(
        stderr.contains(&said),
        "the run says which openings it plays, one per scheduled pair: {stderr}"
    );
    let result = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SPRT: "))
        .map_or("none", |l| &l[..2])
        .to_string();
    let records = std::fs::read_to_string(s.join("results/games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (result, records)
}

/// Games 2k and 2k+1 share an opening, colours swapped, and no two pairs
/// share one; none is the initial position.
fn assert_one_opening_per_pair(records: &[GameRecord]) {
    let mut by_round: BTreeMap<u32, &GameRecord> = BTreeMap::new();
    for r in records {
        by_round.insert(r.round, r);
    }
    let mut seen = HashSet::new();
    for (round, r) in &by_round {
        assert_eq!(r.opening.len(), 16, "8 plays: {r:?}");
        if round % 2 == 0 {
            let first = by_round[&(round - 1)];
            assert_eq!(first.opening, r.opening, "round {round}");
            assert_eq!(first.black, r.white, "round {round}: colours swapped");
        } else {
            assert!(seen.insert(r.opening.clone()), "{} again", r.opening);
        }
    }
}

#[test]
fn an_sprt_of_a_bot_against_its_copy_accepts_h1_in_at_most_2_of_20_seeds() {
    let mut results: BTreeMap<String, u32> = BTreeMap::new();
    let mut games = 0;
    for run in 0..20u64 {
        let s = Scratch::new();
        s.write(
            "tournament.toml",
            &sprt_toml(("weighted", 2 * run + 1), ("weighted", 2 * run + 2), 1000),
        );
        let (result, records) = verdict(&s, 1000);
        if run == 0 {
            assert_one_opening_per_pair(&records);
        }
        games += records.len();
        *results.entry(result).or_default() += 1;
    }
    eprintln!("20 SPRTs of weighted against weighted, {games} games: {results:?}");
    assert!(results.get("H1").copied().unwrap_or(0) <= 2, "{results:?}");
    // Most end on a verdict, not at the limit: the test decides.
    assert!(results.get("H0").copied().unwrap_or(0) >= 15, "{results:?}");
}

#[test]
fn an_sprt_of_a_clearly_stronger_bot_against_a_weaker_one_accepts_h1() {
    let s = Scratch::new();
    s.write(
        "tournament.toml",
        &sprt_toml(("weighted", 1), ("random", 2), 200),
    );
    let (result, records) = verdict(&s, 200);
    assert_eq!(result, "H1", "after {} games", records.len());
    assert!(records.len() < 200, "decided before its limit");
    assert_one_opening_per_pair(&records);
}
