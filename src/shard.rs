//! Shares of one tournament played on several machines (issue 29): which
//! games share K of N plays, where its board and its part of the results
//! folder are, where K and N came from (`--shard`, Slurm's array
//! variables, Kubernetes' `JOB_COMPLETION_INDEX`), and what each share of
//! a results folder is doing.
//!
//! Owns the partition (whole colour-swapped pairs, dealt in the order
//! they first appear in the schedule), the share folder names and the
//! reading of the schedulers' variables. K is 0-based, as Slurm's task ids
//! (`--array=0-3`) and Kubernetes' completion indexes are. Must not play
//! games or read records (that is `results`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::schedule::ScheduledGame;

/// The folder of a results folder that holds one folder per share.
pub const SHARDS_DIR: &str = "shards";

/// Share `index` (0-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Share {
    pub index: u32,
    pub count: u32,
}

/// Why K/N could not be known.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct ShareError(pub String);

impl Share {
    /// A share, refused unless `index < count` and `count` is 1 to 10000.
    pub fn new(index: u32, count: u32) -> Result<Share, ShareError> {
        if count == 0 || count > 10_000 {
            return Err(ShareError(format!(
                "the number of shares must be 1 to 10000, not {count}"
            )));
        }
        if index >= count {
            return Err(ShareError(format!(
                "share {index} of {count} does not exist: shares are numbered from 0 to {} \
                 (0-based, as Slurm's --array=0-{} and Kubernetes' completion indexes)",
                count - 1,
                count - 1
            )));
        }
        Ok(Share { index, count })
    }

    /// `K/N` as `--shard` takes it (K 0-based).
    pub fn parse(text: &str) -> Result<Share, ShareError> {
        let bad = || {
            ShareError(format!(
                "`{text}` is not a share: write K/N, K counted from 0 (0/4 … 3/4)"
            ))
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k = k.trim().parse::<u32>().map_err(|_| bad())?;
        let n = n.trim().parse::<u32>().map_err(|_| bad())?;
        Share::new(k, n)
    }

    /// `K-of-N`: the share's folder in `shards/` and its board's suffix.
    pub fn name(&self) -> String {
        format!("{}-of-{}", self.index, self.count)
    }

    /// The share's own part of the results folder `results`.
    pub fn dir(&self, results: &Path) -> PathBuf {
        results.join(SHARDS_DIR).join(self.name())
    }

    /// The share's own board beside `board` (`board-shard-K-of-N`), so
    /// that shares on one machine do not share a board.
    pub fn board(&self, board: &Path) -> PathBuf {
        let mut name = board
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "board".into());
        name.push(format!("-shard-{}", self.name()));
        board.with_file_name(name)
    }

    /// The games of `schedule` this share plays, in the schedule's order.
    pub fn games(&self, schedule: &[ScheduledGame]) -> Vec<ScheduledGame> {
        let units = unit_numbers(schedule);
        schedule
            .iter()
            .zip(units)
            .filter(|(_, u)| u % self.count as usize == self.index as usize)
            .map(|(g, _)| g.clone())
            .collect()
    }
}

impl std::fmt::Display for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// For each game of `schedule`, the number of its colour-swapped pair
/// (games 2k−1 and 2k of one pairing), pairs numbered in the order they
/// first appear. Adding players appends games, so earlier numbers stay.
fn unit_numbers(schedule: &[ScheduledGame]) -> Vec<usize> {
    let mut seen: HashMap<(String, String, u32), usize> = HashMap::new();
    schedule
        .iter()
        .map(|g| {
            let (a, b) = if g.black < g.white {
                (&g.black, &g.white)
            } else {
                (&g.white, &g.black)
            };
            let key = (a.clone(), b.clone(), g.round.div_ceil(2));
            let next = seen.len();
            *seen.entry(key).or_insert(next)
        })
        .collect()
}

/// A share and the words saying where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen {
    pub share: Share,
    pub from: String,
}

/// The share this run plays: `--shard` first, else Slurm's array
/// variables (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, divided
/// by `SLURM_ARRAY_TASK_STEP`, of `SLURM_ARRAY_TASK_COUNT` or the count
/// from MIN to MAX), else `JOB_COMPLETION_INDEX` of `--shards N`. `None`:
/// the whole tournament. `--shards N` checks N against what was found.
pub fn choose(
    explicit: Option<Share>,
    shards: Option<u32>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Chosen>, ShareError> {
    let chosen = match explicit {
        Some(share) => Some(Chosen {
            share,
            from: format!("--shard {share}"),
        }),
        None => match from_slurm(&env)? {
            Some(c) => Some(c),
            None => from_kubernetes(&env, shards)?,
        },
    };
    match (&chosen, shards) {
        (Some(c), Some(n)) if c.share.count != n => Err(ShareError(format!(
            "--shards {n}, but {} says {} shares",
            c.from, c.share.count
        ))),
        (None, Some(n)) => Err(ShareError(format!(
            "--shards {n} needs the share's index: --shard K/{n}, or run as a Slurm array task \
             (SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)"
        ))),
        _ => Ok(chosen),
    }
}

fn number(env: &impl Fn(&str) -> Option<String>, name: &str) -> Result<Option<u32>, ShareError> {
    match env(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v
            .trim()
            .parse::<u32>()
            .map(Some)
            .map_err(|_| ShareError(format!("{name}={v} is not a whole number"))),
    }
}

fn from_slurm(env: &impl Fn(&str) -> Option<String>) -> Result<Option<Chosen>, ShareError> {
    let Some(id) = number(env, "SLURM_ARRAY_TASK_ID")? else {
        return Ok(None);
    };
    let min = number(env, "SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = number(env, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let count = match (
        number(env, "SLURM_ARRAY_TASK_COUNT")?,
        number(env, "SLURM_ARRAY_TASK_MAX")?,
    ) {
        (Some(c), _) => c,
        (None, Some(max)) if max >= min => (max - min) / step + 1,
        _ => {
            return Err(ShareError(
                "SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor \
                 SLURM_ARRAY_TASK_MAX: give --shard K/N"
                    .into(),
            ))
        }
    };
    if id < min || (id - min) % step != 0 {
        return Err(ShareError(format!(
            "SLURM_ARRAY_TASK_ID={id} is not one of the array's tasks from {min} by {step}: \
             use a range (--array=0-{}) or give --shard K/N",
            count.saturating_sub(1)
        )));
    }
    let share = Share::new((id - min) / step, count).map_err(|e| {
        ShareError(format!(
            "SLURM_ARRAY_TASK_ID={id}, MIN={min}, STEP={step}, COUNT={count}: {e}; an array \
             given as a list (--array=1,5,7) cannot be numbered: use a range, or --shard K/N"
        ))
    })?;
    Ok(Some(Chosen {
        share,
        from: format!("Slurm: SLURM_ARRAY_TASK_ID={id}, SLURM_ARRAY_TASK_MIN={min}, {count} tasks"),
    }))
}

fn from_kubernetes(
    env: &impl Fn(&str) -> Option<String>,
    shards: Option<u32>,
) -> Result<Option<Chosen>, ShareError> {
    let (Some(index), Some(count)) = (number(env, "JOB_COMPLETION_INDEX")?, shards) else {
        return Ok(None);
    };
    let share = Share::new(index, count)?;
    Ok(Some(Chosen {
        share,
        from: format!("Kubernetes: JOB_COMPLETION_INDEX={index}, --shards {count}"),
    }))
}

/// The shares found in the `shards/` folder of `results`: their count and
/// the indexes that have a folder. Folders of two different counts are an
/// error (two partitions of one tournament would play games twice).
pub fn found(results: &Path) -> Result<Option<(u32, Vec<u32>)>, ShareError> {
    let dir = results.join(SHARDS_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(None);
    };
    let mut count = None;
    let mut indexes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((k, n)) = name.split_once("-of-") else {
            continue;
        };
        let (Ok(k), Ok(n)) = (k.parse::<u32>(), n.parse::<u32>()) else {
            continue;
        };
        if Share::new(k, n).is_err() {
            continue;
        }
        match count {
            Some(c) if c != n => {
                return Err(ShareError(format!(
                    "{} holds shares of {c} and of {n}: one tournament is split one way; move \
                     the folders of the other split away",
                    dir.display()
                )))
            }
            _ => count = Some(n),
        }
        indexes.push(k);
    }
    indexes.sort_unstable();
    Ok(count.map(|c| (c, indexes)))
}

/// What one share of a results folder is doing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase", tag = "state")]
pub enum ShareState {
    /// Every game of the share is recorded, or the tournament's SPRT is
    /// decided.
    Done { games: usize },
    /// A referee holds the share's lock.
    Running {
        games: usize,
        of: usize,
        host: String,
        pid: u32,
    },
    /// Some games recorded, no referee on it: run it again to resume.
    Stopped { games: usize, of: usize },
    /// Never started.
    Missing { of: usize },
}

/// One share's line of the shares' summary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ShareStatus {
    pub share: String,
    #[serde(flatten)]
    pub state: ShareState,
}

impl ShareStatus {
    pub fn is_done(&self) -> bool {
        matches!(self.state, ShareState::Done { .. })
    }
}

impl std::fmt::Display for ShareStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            ShareState::Done { games } => write!(f, "{} done ({games} games)", self.share),
            ShareState::Running {
                games,
                of,
                host,
                pid,
            } => write!(
                f,
                "{} running ({games}/{of} games, host {host} pid {pid})",
                self.share
            ),
            ShareState::Stopped { games, of } => write!(
                f,
                "{} stopped ({games}/{of} games; run it again to resume)",
                self.share
            ),
            ShareState::Missing { of } => {
                write!(f, "{} missing (not started; {of} games)", self.share)
            }
        }
    }
}

/// The state of share `share` whose folder holds `recorded` of its `of`
/// games; `lock` is the folder of its results lock. Once the tournament's
/// SPRT is `decided`, a share no referee holds has nothing left to play.
pub fn state_of(
    share: Share,
    exists: bool,
    recorded: usize,
    of: usize,
    lock: &Path,
    decided: bool,
) -> ShareStatus {
    let owner = crate::mailbox::read_owner(lock)
        .filter(|o| o.host != crate::mailbox::hostname() || crate::mailbox::holder_alive(o));
    let state = match owner {
        Some(o) => ShareState::Running {
            games: recorded,
            of,
            host: o.host,
            pid: o.pid,
        },
        None if recorded >= of || decided => ShareState::Done { games: recorded },
        None if !exists => ShareState::Missing { of },
        None => ShareState::Stopped {
            games: recorded,
            of,
        },
    };
    ShareStatus {
        share: share.name(),
        state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.get(k).cloned()
    }

    fn rr(players: &[&str], per_pairing: u32) -> Vec<ScheduledGame> {
        let names: Vec<String> = players.iter().map(|s| s.to_string()).collect();
        let pairs = crate::schedule::round_robin(names.len());
        crate::schedule::schedule(&names, &pairs, per_pairing, &["f5".into(), "d3".into()])
    }

    #[test]
    fn shares_cover_the_schedule_once_and_keep_pairs_whole() {
        let all = rr(&["a", "b", "c", "d", "e", "f"], 4);
        let mut union: Vec<ScheduledGame> = Vec::new();
        for k in 0..4 {
            let part = Share::new(k, 4).unwrap().games(&all);
            assert!(part.len() >= 14 && part.len() <= 16, "{}", part.len());
            for g in &part {
                // Its colour-swapped partner is in the same share.
                let partner = if g.round % 2 == 1 {
                    g.round + 1
                } else {
                    g.round - 1
                };
                assert!(
                    part.iter().any(|h| h.round == partner
                        && h.black == g.white
                        && h.white == g.black
                        && h.opening == g.opening),
                    "{} without its partner",
                    g.id
                );
            }
            union.extend(part);
        }
        assert_eq!(union.len(), all.len());
        let mut ids: Vec<&str> = union.iter().map(|g| g.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "no game in two shares");
    }

    #[test]
    fn k_is_zero_based_and_checked() {
        assert_eq!(Share::parse("0/4").unwrap(), Share { index: 0, count: 4 });
        assert!(Share::parse("4/4").unwrap_err().0.contains("0 to 3"));
        assert!(Share::parse("1-4").is_err());
        assert!(Share::parse("0/0").is_err());
    }

    #[test]
    fn slurm_and_kubernetes_variables_give_the_share() {
        let c = choose(
            None,
            None,
            env(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.share, Share { index: 3, count: 4 });
        assert!(c.from.contains("SLURM_ARRAY_TASK_ID=3"), "{}", c.from);
        // --array=1-4: task 1 is share 0.
        let c = choose(
            None,
            None,
            env(&[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "4"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.share, Share { index: 0, count: 4 });
        // --array=0-6:2
        let c = choose(
            None,
            None,
            env(&[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_STEP", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.share, Share { index: 2, count: 4 });
        let c = choose(None, Some(3), env(&[("JOB_COMPLETION_INDEX", "2")]))
            .unwrap()
            .unwrap();
        assert_eq!(c.share, Share { index: 2, count: 3 });
        assert!(c.from.contains("JOB_COMPLETION_INDEX=2"));
        // Without --shards, a Kubernetes index alone is no share.
        assert_eq!(
            choose(None, None, env(&[("JOB_COMPLETION_INDEX", "2")])),
            Ok(None)
        );
        assert!(choose(None, Some(3), env(&[])).is_err());
        // --shard wins over the environment.
        let c = choose(
            Some(Share { index: 1, count: 2 }),
            None,
            env(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.share, Share { index: 1, count: 2 });
        assert!(choose(
            None,
            Some(5),
            env(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ])
        )
        .is_err());
    }

    #[test]
    fn a_share_has_its_own_board_and_folder() {
        let s = Share { index: 2, count: 4 };
        assert_eq!(
            s.board(Path::new("/x/board")),
            Path::new("/x/board-shard-2-of-4")
        );
        assert_eq!(s.dir(Path::new("/r")), Path::new("/r/shards/2-of-4"));
    }
}
