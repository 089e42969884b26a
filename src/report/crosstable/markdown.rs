//! The crosstable as GitHub-flavoured markdown: a standings table, a blank
//! line, then the score matrix as a second table whose columns are
//! numbered by row, then the statistics (SPRT, pairings, disc margins,
//! Swiss) as a list.
//!
//! Owns markdown layout and escaping. Must not compute anything about the
//! games.

use crate::rating::Crosstable;

pub(super) fn render(table: &Crosstable) -> String {
    let n = table.standings.len();
    let mut out = String::new();
    row(
        &mut out,
        [
            "#", "Player", "Points", "Games", "W-D-L", "Discs", "Elo", "±",
        ]
        .map(String::from),
    );
    out.push_str("|--:|:--|--:|--:|:-:|--:|--:|--:|\n");
    for s in &table.standings {
        row(
            &mut out,
            [
                s.rank.to_string(),
                escape(&s.player),
                super::points(s.points),
                s.games.to_string(),
                format!("{}-{}-{}", s.wins, s.draws, s.losses),
                super::signed(s.disc_diff),
                super::elo(s.elo),
                super::elo_error(s.elo_error),
            ],
        );
    }

    out.push('\n');
    let mut header = vec!["#".to_string(), "Player".to_string()];
    header.extend((1..=n).map(|k| k.to_string()));
    row(&mut out, header);
    out.push_str("|--:|:--|");
    out.push_str(&":-:|".repeat(n));
    out.push('\n');
    for (i, s) in table.standings.iter().enumerate() {
        let mut cells = vec![(i + 1).to_string(), escape(&s.player)];
        cells.extend((0..n).map(|j| super::cell(table, i, j)));
        row(&mut out, cells);
    }
    let details = super::details(table);
    if !details.is_empty() {
        out.push('\n');
        for d in details {
            out.push_str("- ");
            out.push_str(&escape(&d));
            out.push('\n');
        }
    }
    out
}

fn row(out: &mut String, cells: impl IntoIterator<Item = String>) {
    out.push('|');
    for c in cells {
        out.push(' ');
        out.push_str(&c);
        out.push_str(" |");
    }
    out.push('\n');
}

/// Escapes markdown punctuation so that a name shows as written and cannot
/// break the table; line breaks become spaces.
fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::crosstable::tests::sample;

    /// Splits a table row on unescaped `|`.
    fn cells(line: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    let last = out.last_mut().unwrap();
                    last.push(c);
                    last.extend(chars.next());
                }
                '|' => out.push(String::new()),
                _ => out.last_mut().unwrap().push(c),
            }
        }
        // Drop what lies outside the outer pipes.
        out[1..out.len() - 1]
            .iter()
            .map(|s| s.trim().to_string())
            .collect()
    }

    #[test]
    fn two_tables_with_a_row_per_player() {
        let t = sample();
        let md = render(&t);
        let all: Vec<&str> = md.split("\n\n").collect();
        assert_eq!(all.len(), 3, "{md}");
        // Then the statistics, as a list.
        assert!(all[2].lines().all(|l| l.starts_with("- ")), "{md}");
        assert!(all[2].contains("disc margin"), "{md}");
        let parts = &all[..2];
        let n = t.standings.len();
        for (k, part) in parts.iter().enumerate() {
            let lines: Vec<&str> = part.lines().collect();
            assert_eq!(lines.len(), 2 + n, "{part}");
            let width = if k == 0 { 8 } else { 2 + n };
            for l in &lines {
                assert!(l.starts_with('|') && l.ends_with('|'), "{l}");
                assert_eq!(cells(l).len(), width, "{l}");
            }
            assert!(lines[1].chars().all(|c| "|-:".contains(c)));
        }
        let first = cells(parts[0].lines().nth(2).unwrap());
        assert_eq!(first[..6], ["1", "alpha", "3.5", "4", "3-1-0", "+76"]);
        let bo = cells(parts[1].lines().nth(3).unwrap());
        assert_eq!(bo, ["2", "Smith, \"Bo\"", "0.5/2", "·", "1/2", "-"]);
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("x_y*z"), "x\\_y\\*z");
        assert_eq!(escape("two\nlines"), "two lines");
        assert_eq!(escape("plain-name 2"), "plain-name 2");
    }
}
