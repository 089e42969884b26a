//! The crosstable explains itself (issues 30 and 32), run as a user runs
//! `tournament run`, `crosstable` and `report` with built-in bots: a
//! Swiss's rows agree with their visible columns, a 12-player round
//! robin's statistics fit in a bounded number of lines, a one-pair match
//! says "too few games", and a 60-player Swiss prints its standings
//! without an unreadable score matrix.

use crate::fixture::Scratch;

/// A tournament file of built-in bots (random, greedy, weighted in turn),
/// `players` of them, with `extra` in `[tournament]`.
fn field(players: usize, extra: &str) -> String {
    let mut t = format!(
        "[tournament]\nname = \"xtab\"\nconcurrency = 2\n{extra}\n\
         [time]\nmove-ms = 3000\nstartup-ms = 5000\n\n[openings]\nrandom-plies = 2\nseed = 3\n"
    );
    for k in 0..players {
        let bot = ["random", "greedy", "weighted"][k % 3];
        t.push_str(&format!(
            "\n[[player]]\nname = \"{bot}{k}\"\nbuiltin = \"{bot}\"\nseed = {k}\n"
        ));
    }
    t
}

/// A scratch folder where `toml` was run to its end.
fn played(toml: &str, secs: u64) -> Scratch {
    let s = Scratch::new();
    s.write("tournament.toml", toml);
    s.run_ok(&["run"], secs);
    s
}

fn stdout(s: &Scratch, args: &[&str]) -> String {
    String::from_utf8(s.run_ok(args, 60).stdout).unwrap()
}

/// The cells of the text table's rows under `columns`, as numbers.
fn text_columns(text: &str, columns: &[&str]) -> Vec<Vec<f64>> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let at: Vec<usize> = columns
        .iter()
        .map(|c| {
            head.iter()
                .position(|h| h == c)
                .unwrap_or_else(|| panic!("no column {c}: {text}"))
        })
        .collect();
    lines
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            at.iter().map(|&k| cells[k].parse().unwrap()).collect()
        })
        .collect()
}

#[test]
fn a_swiss_crosstables_rows_agree_with_their_visible_columns() {
    let s = played(&field(9, "size = 6\nformat = \"swiss\"\nrounds = 4"), 300);
    let ranked = ["Score", "Buchholz", "SB", "Points"];
    let text = stdout(&s, &["crosstable"]);
    let rows = text_columns(&text, &ranked);
    assert_eq!(rows.len(), 9, "{text}");
    for w in rows.windows(2) {
        assert!(
            w[0] >= w[1],
            "a row above one its columns rank higher: {text}"
        );
    }
    // The columns come in the order the ranking uses them.
    let head = text.lines().next().unwrap();
    let at: Vec<usize> = ranked.iter().map(|c| head.find(c).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{head}");
    assert!(text.contains("Ranked by Score"), "{text}");

    // The same score per row as JSON, which names its ranking keys.
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&s, &["crosstable", "--format", "json"])).unwrap();
    assert_eq!(json["ranked_by"][0], "swiss.score", "{json}");
    let scores: Vec<f64> = json["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["swiss"]["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores, rows.iter().map(|r| r[0]).collect::<Vec<_>>());

    let md = stdout(&s, &["crosstable", "--format", "markdown"]);
    assert!(
        md.starts_with("| # | Player | Score | Buchholz | SB |"),
        "{md}"
    );
    let csv = stdout(&s, &["crosstable", "--format", "csv"]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header[..2], ["rank", "player"]);
    assert_eq!(
        header[10..14],
        ["swiss_score", "buchholz", "sonneborn_berger", "byes"]
    );
    s.run_ok(&["report"], 60);
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    assert!(
        html.contains("<th>Score</th><th>Buchholz</th><th>SB</th><th>Byes</th><th>Points</th>"),
        "the report's crosstable"
    );
}

#[test]
fn a_twelve_player_round_robins_statistics_fit_in_a_bounded_number_of_lines() {
    let s = played(&field(12, "size = 4\ngames-per-pairing = 2"), 300);
    let text = stdout(&s, &["crosstable"]);
    // 13 lines of table, 11 of pairings and one saying how many were left
    // out, the legend, the sandbox and results lines: not 66 pairings.
    let lines = text.lines().count();
    assert!(lines <= 36, "{lines} lines: {text}");
    assert!(text.contains("56 more pairings not shown"), "{text}");
    assert!(text.contains("--full"), "{text}");
    // The matrix of 12 fits: its last column is there.
    assert!(text.lines().next().unwrap().ends_with("12"), "{text}");
    let full = stdout(&s, &["crosstable", "--full"]);
    let pairing_rows = full
        .lines()
        .skip_while(|l| !l.starts_with("First"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(pairing_rows, 66, "{full}");
    s.run_ok(&["report"], 60);
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    let (bounded, all) = html
        .split_once("<details class=\"all-pairings\">")
        .expect("every pairing on demand");
    let stats = bounded.split("<section id=\"statistics\">").nth(1).unwrap();
    assert_eq!(stats.matches("<tr><td class=\"l\">").count(), 10);
    assert!(all.contains("All 66 pairings"));
}

#[test]
fn a_one_pair_match_shows_too_few_games() {
    let s = played(&field(2, "size = 6\ngames-per-pairing = 2"), 120);
    let text = stdout(&s, &["crosstable"]);
    let stats: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("First"))
        .take(2)
        .collect();
    assert_eq!(stats.len(), 2, "{text}");
    assert!(stats[1].contains("too few games"), "{text}");
    assert!(!text.contains("± 0.0"), "{text}");
    // No LOS from one pair either (it said `LOS 50.0 %`).
    assert!(!text.contains(".0 %"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&s, &["crosstable", "--format", "json"])).unwrap();
    let pairing = &json["pairings"][0];
    assert_eq!(pairing["games"], 2, "{json}");
    assert!(pairing["los"].is_null(), "{json}");
    assert!(
        pairing["elo"].is_null() || pairing["elo"]["error"].is_null(),
        "{json}"
    );
}

#[test]
fn a_sixty_player_swiss_prints_standings_and_no_unreadable_matrix() {
    let s = played(&field(60, "size = 4\nformat = \"swiss\"\nrounds = 3"), 600);
    let text = stdout(&s, &["crosstable"]);
    let standings: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(standings.len(), 61, "{text}");
    for l in &standings {
        assert!(l.chars().count() <= 100, "too wide for a terminal: {l}");
    }
    assert!(standings[0].ends_with("Elo"), "no matrix: {}", standings[0]);
    assert!(
        text.contains("score matrix of 60 players is left out"),
        "{text}"
    );
    assert!(text.lines().count() <= 61 + 20, "{text}");
    let full = stdout(&s, &["crosstable", "--full"]);
    assert!(full.lines().next().unwrap().ends_with(" 60"), "{full}");
    s.run_ok(&["report"], 60);
    let html = std::fs::read_to_string(s.join("results/report.html")).unwrap();
    let cross = html
        .split("<table class=\"cross\">")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap();
    assert_eq!(cross.matches("<tr><td>").count(), 60);
    assert!(!cross.contains("<th>60</th>") && !cross.contains("class=\"self\""));
}
