//! The crosstable as GitHub-flavoured markdown: a standings table (with
//! the Swiss columns in ranking order in a Swiss event), then the score
//! matrix as a second table whose columns are numbered by row (where it
//! fits), then the pairings' statistics as a third (bounded), the SPRT as
//! a list and the legend as a paragraph.
//!
//! Owns markdown layout and escaping. Must not compute anything about the
//! games.

use super::Layout;
use crate::rating::Crosstable;

pub(super) fn render(table: &Crosstable, layout: Layout) -> String {
    let n = table.standings.len();
    let swiss = super::is_swiss(table);
    let byes = super::has_byes(table);
    let mut out = String::new();
    let mut header: Vec<String> = vec!["#".into(), "Player".into()];
    let mut rule = String::from("|--:|:--|");
    if swiss {
        header.extend(super::SWISS_HEADINGS.map(String::from));
        rule.push_str("--:|--:|--:|");
    }
    if byes {
        header.push("Byes".into());
        rule.push_str("--:|");
    }
    header.extend(["Points", "Games", "W-D-L", "Discs", "Elo", "±"].map(String::from));
    rule.push_str("--:|--:|:-:|--:|--:|--:|\n");
    row(&mut out, header);
    out.push_str(&rule);
    for s in &table.standings {
        let mut cells = vec![
            s.rank.to_string(),
            escape(&super::shown_name(table, &s.player)),
        ];
        if swiss {
            cells.extend(super::swiss_cells(s));
        }
        if byes {
            cells.push(s.swiss.as_ref().map_or(0, |w| w.byes).to_string());
        }
        cells.extend([
            super::points(s.points),
            s.games.to_string(),
            format!("{}-{}-{}", s.wins, s.draws, s.losses),
            super::signed(s.disc_diff),
            super::elo(s.elo),
            super::elo_error(s.elo_error),
        ]);
        row(&mut out, cells);
    }

    if n > 0 && layout.shows_matrix(n) {
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
    }
    let (shown, left) = super::shown_pairings(table, layout);
    if !shown.is_empty() {
        out.push('\n');
        row(&mut out, super::PAIRING_HEADINGS.map(String::from));
        out.push_str("|:--|:--|--:|:-:|--:|--:|--:|--:|\n");
        for p in &shown {
            let mut cells = super::pairing_cells(p);
            cells[0] = escape(&cells[0]);
            cells[1] = escape(&cells[1]);
            row(&mut out, cells);
        }
        if left > 0 {
            out.push('\n');
            out.push_str(&escape(&super::left_out_line(shown.len(), left)));
            out.push('\n');
        }
    }
    let notes = super::notes(table);
    if !notes.is_empty() {
        out.push('\n');
        for d in notes {
            out.push_str("- ");
            out.push_str(&escape(&d));
            out.push('\n');
        }
    }
    if n > 0 {
        out.push('\n');
        out.push_str(&escape(&super::legend(table, layout).join(" ")));
        out.push('\n');
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
        let md = render(&t, Layout::default());
        let all: Vec<&str> = md.split("\n\n").collect();
        assert_eq!(all.len(), 4, "{md}");
        // Then the pairings' table (3 pairings met) and the legend.
        let pairings: Vec<&str> = all[2].lines().collect();
        assert_eq!(pairings.len(), 2 + 3, "{md}");
        assert_eq!(cells(pairings[0])[3], "Pairs 0-½-1-1½-2");
        assert!(pairings.iter().all(|l| cells(l).len() == 8), "{md}");
        assert!(all[3].starts_with("Points: win 1"), "{md}");
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
