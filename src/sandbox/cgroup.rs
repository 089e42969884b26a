//! Control groups for spawned bots: one per bot process, so that its
//! processes and its memory are counted for it alone.
//!
//! Owns: finding, once per run, which hierarchy this referee may use (the
//! unified cgroup v2 one, or the v1 `pids` and `memory` hierarchies), the
//! run's folder in each (`tournament-<pid>`, beside the referee in its own
//! group), one group per bot process with its `pids` and `memory` limits,
//! reading whether the kernel killed it for memory, and removing every
//! group again (also those a referee killed with -9 left behind). Must not:
//! start or signal processes (the warden moves itself in, by the paths
//! [`BotGroup::procs`] gives), know about players or games.
//!
//! Both versions are handled because both are in use: cgroup v2 where
//! systemd runs the machine in unified mode, v1 hierarchies on older or
//! container hosts (the CI machine of this project has v1 only). The run
//! says which was used ([`Hierarchy::describe`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The folder name of a run's groups: `tournament-<referee pid>`.
const RUN_PREFIX: &str = "tournament-";

/// Where the kernel mounts control groups.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The hierarchies a referee can put bots in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hierarchy {
    /// cgroup v2: one folder per bot with `pids.max` and `memory.max`.
    Unified { run: PathBuf },
    /// cgroup v1: a folder per bot in each of the `pids` and `memory`
    /// hierarchies (either may be missing: then `None`).
    Legacy {
        pids: Option<PathBuf>,
        memory: Option<PathBuf>,
    },
}

impl Hierarchy {
    /// Finds a hierarchy this process may make groups in, and makes the
    /// run's folder there; `Err(why)` when there is none.
    pub fn for_this_run() -> Result<Hierarchy, String> {
        if !cfg!(target_os = "linux") {
            return Err("not Linux".into());
        }
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let mounts = fs::read_to_string("/proc/self/mounts")
            .map_err(|e| format!("cannot read /proc/self/mounts: {e}"))?;
        let run_name = format!("{RUN_PREFIX}{}", std::process::id());
        let unified = unified(&own, &mounts)
            .and_then(|base| {
                if !crate::sandbox::is_root() {
                    leave_for_a_leaf(&base, &run_name)?;
                }
                enable_controllers(&base)?;
                make_run_dir(&base, &run_name)
            })
            .and_then(|run| {
                enable_controllers(&run).inspect_err(|_| {
                    let _ = remove_tree(&run);
                })?;
                Ok(run)
            });
        match unified {
            Ok(run) => Ok(Hierarchy::Unified { run }),
            Err(v2_why) => {
                let pids = legacy(&own, &mounts, "pids").and_then(|b| make_run_dir(&b, &run_name));
                let memory =
                    legacy(&own, &mounts, "memory").and_then(|b| make_run_dir(&b, &run_name));
                match (pids, memory) {
                    (Err(p), Err(m)) => Err(format!("{v2_why}; {p}; {m}")),
                    (pids, memory) => Ok(Hierarchy::Legacy {
                        pids: pids.ok(),
                        memory: memory.ok(),
                    }),
                }
            }
        }
    }

    /// Which hierarchy, in words for the log, with what is missing.
    pub fn describe(&self) -> String {
        match self {
            Hierarchy::Unified { run } => format!("cgroup v2 ({})", run.display()),
            Hierarchy::Legacy { pids, memory } => {
                let part = |p: &Option<PathBuf>, what: &str| match p {
                    Some(p) => format!("{what} {}", p.display()),
                    None => format!("no {what} controller"),
                };
                format!(
                    "cgroup v1 ({}; {})",
                    part(pids, "pids"),
                    part(memory, "memory")
                )
            }
        }
    }

    /// What a bot's group cannot limit here, if anything.
    pub fn missing(&self) -> Option<String> {
        match self {
            Hierarchy::Legacy { pids: None, .. } => Some(
                "cgroups: no pids controller: a bot's processes are limited by RLIMIT_NPROC on its own id".into(),
            ),
            Hierarchy::Legacy { memory: None, .. } => Some(
                "cgroups: no memory controller: shared memory, memfds and tmpfs files of a bot are not counted against memory-mb".into(),
            ),
            _ => None,
        }
    }

    /// Whether a bot's group counts its processes (`pids.max`).
    pub fn counts_processes(&self) -> bool {
        !matches!(self, Hierarchy::Legacy { pids: None, .. })
    }

    /// Makes the group of one bot process, with its limits.
    pub fn group(&self, name: &str, processes: u64, memory_mb: u64) -> io::Result<BotGroup> {
        let bytes = memory_mb.saturating_mul(1 << 20);
        let mut dirs = Vec::new();
        let made = (|| -> io::Result<()> {
            match self {
                Hierarchy::Unified { run } => {
                    let dir = fresh_dir(run, name)?;
                    dirs.push(dir.clone());
                    fs::write(dir.join("pids.max"), processes.to_string())?;
                    fs::write(dir.join("memory.max"), bytes.to_string())?;
                    // Swap would hide memory from the limit.
                    let _ = fs::write(dir.join("memory.swap.max"), "0");
                }
                Hierarchy::Legacy { pids, memory } => {
                    if let Some(run) = pids {
                        let dir = fresh_dir(run, name)?;
                        dirs.push(dir.clone());
                        fs::write(dir.join("pids.max"), processes.to_string())?;
                    }
                    if let Some(run) = memory {
                        let dir = fresh_dir(run, name)?;
                        dirs.push(dir.clone());
                        fs::write(dir.join("memory.limit_in_bytes"), bytes.to_string())?;
                        let _ = fs::write(dir.join("memory.swappiness"), "0");
                    }
                }
            }
            Ok(())
        })();
        let group = BotGroup {
            dirs,
            unified: matches!(self, Hierarchy::Unified { .. }),
        };
        made.map(|()| group)
    }

    /// Removes the run's folders (call once every bot's group is gone).
    pub fn remove(&self) {
        for run in self.run_dirs() {
            if let Err(e) = remove_tree(run) {
                tracing::warn!("cannot remove the control group {}: {e}", run.display());
            }
        }
    }

    fn run_dirs(&self) -> Vec<&Path> {
        match self {
            Hierarchy::Unified { run } => vec![run.as_path()],
            Hierarchy::Legacy { pids, memory } => pids
                .iter()
                .chain(memory.iter())
                .map(|p| p.as_path())
                .collect(),
        }
    }
}

/// The group of one bot process: what the warden joins, what tells an
/// out-of-memory kill, removed (its last processes killed) when dropped.
#[derive(Debug)]
pub struct BotGroup {
    dirs: Vec<PathBuf>,
    unified: bool,
}

impl BotGroup {
    /// The `cgroup.procs` files the warden writes itself into.
    pub fn procs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Whether the kernel killed a process of this group for going over
    /// its memory limit.
    pub fn oom_killed(&self) -> bool {
        self.dirs.iter().any(|d| {
            let (file, key) = if self.unified {
                ("memory.events", "oom_kill")
            } else {
                ("memory.oom_control", "oom_kill")
            };
            fs::read_to_string(d.join(file))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_once(' '))
                .any(|(k, v)| k == key && v.trim().parse::<u64>().is_ok_and(|n| n > 0))
        })
    }
}

impl Drop for BotGroup {
    fn drop(&mut self) {
        for dir in &self.dirs {
            if let Err(e) = remove_tree(dir) {
                tracing::warn!("cannot remove the control group {}: {e}", dir.display());
            }
        }
    }
}

/// Removes the groups a referee that is no longer running left beside
/// this one (`tournament-<pid>` of a dead pid), with what is below them;
/// quietly leaves those this user may not remove (another user's).
pub fn sweep_dead_runs() {
    let Ok(own) = fs::read_to_string("/proc/self/cgroup") else {
        return;
    };
    let Ok(mounts) = fs::read_to_string("/proc/self/mounts") else {
        return;
    };
    // (Another user's runs live in its own delegated group, which ends
    // with it.)
    let v2 = if crate::sandbox::is_root() {
        unified(&own, &mounts)
    } else {
        Err(String::new())
    };
    let bases = [
        v2,
        legacy(&own, &mounts, "pids"),
        legacy(&own, &mounts, "memory"),
    ];
    for base in bases.into_iter().flatten() {
        let Ok(entries) = fs::read_dir(&base) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(RUN_PREFIX)
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if !crate::pid::pid_alive(pid) {
                if let Err(e) = remove_tree(&e.path()) {
                    tracing::debug!("left a dead referee's control group: {e}");
                }
            }
        }
    }
}

/// Where this referee makes its run's folder in the unified hierarchy,
/// if that has the `pids` and `memory` controllers: the hierarchy's root
/// for root; for another user, its own group (delegated to it, e.g. by
/// `systemd-run --user --scope -p Delegate=yes`).
fn unified(own: &str, mounts: &str) -> Result<PathBuf, String> {
    let mount = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 2 && f[2] == "cgroup2").then(|| PathBuf::from(f[1]))
        })
        .min_by_key(|p| p != Path::new(CGROUP_ROOT))
        .ok_or("no cgroup v2 hierarchy is mounted")?;
    let rel = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("this process is in no cgroup v2 group")?;
    let base = if crate::sandbox::is_root() {
        mount
    } else {
        mount.join(rel.trim_start_matches('/'))
    };
    let controllers = fs::read_to_string(base.join("cgroup.controllers")).unwrap_or_default();
    for need in ["pids", "memory"] {
        if !controllers.split_whitespace().any(|c| c == need) {
            return Err(format!(
                "cgroup v2 at {} has no {need} controller (controllers: {})",
                base.display(),
                if controllers.trim().is_empty() {
                    "none"
                } else {
                    controllers.trim()
                }
            ));
        }
    }
    Ok(base)
}

/// The folder of this process's group in the v1 hierarchy of
/// `controller`, if one is mounted.
fn legacy(own: &str, mounts: &str, controller: &str) -> Result<PathBuf, String> {
    let mount = mounts
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == controller))
                .then(|| PathBuf::from(f[1]))
        })
        .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy is mounted"))?;
    let rel = own
        .lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
            list.split(',').any(|c| c == controller).then_some(path)
        })
        .unwrap_or("/");
    Ok(mount.join(rel.trim_start_matches('/')))
}

/// Makes `base/name` (a fresh, empty run folder).
fn make_run_dir(base: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = base.join(name);
    if dir.exists() {
        // A referee that had our pid before us, killed with -9.
        let _ = remove_tree(&dir);
    }
    fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Lets groups below `dir` use the `pids` and `memory` controllers (v2).
/// A v2 group with processes of its own (other than the root) cannot
/// hand controllers down, so the run folder holds only bots' groups.
fn enable_controllers(dir: &Path) -> Result<(), String> {
    let enabled = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if ["pids", "memory"]
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == *c))
    {
        return Ok(());
    }
    fs::write(dir.join("cgroup.subtree_control"), "+pids +memory")
        .map_err(|e| format!("cannot enable pids and memory below {}: {e}", dir.display()))
}

/// Moves this process (all its threads) from its own group `base` into a
/// new leaf below it (`<run>-referee`), so that `base` may hand its
/// controllers down to the run's folder beside it (v2, not root: `base`
/// is delegated to this user).
fn leave_for_a_leaf(base: &Path, run_name: &str) -> Result<(), String> {
    let leaf = base.join(format!("{run_name}-referee"));
    if !leaf.is_dir() {
        fs::create_dir(&leaf).map_err(|e| format!("cannot make {}: {e}", leaf.display()))?;
    }
    fs::write(leaf.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| format!("cannot move the referee into {}: {e}", leaf.display()))
}

/// A new folder `run/name`, or `run/name-2`… if that one is still there
/// (its processes not yet gone).
fn fresh_dir(run: &Path, name: &str) -> io::Result<PathBuf> {
    for n in 1..1000 {
        let dir = if n == 1 {
            run.join(name)
        } else {
            run.join(format!("{name}-{n}"))
        };
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "too many groups named {name} in {}",
        run.display()
    )))
}

/// Kills what is still in `dir` and below, and removes the folders
/// (deepest first). A group whose processes take a moment to go is tried
/// again for up to five seconds (on a busy machine a killed process can
/// take more than one to leave its group); one this user may not remove
/// is left at once.
fn remove_tree(dir: &Path) -> io::Result<()> {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path())?;
            }
        }
    }
    let mut attempt = 0;
    loop {
        kill_members(dir);
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied || attempt == 250 => {
                return Err(e)
            }
            Err(_) => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

/// KILLs every process listed in `dir/cgroup.procs`.
fn kill_members(dir: &Path) {
    let Ok(text) = fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        #[cfg(unix)]
        // SAFETY: kill with a valid signal; a pid that is gone just errors.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid 0 0\n\
        cgroup /sys/fs/cgroup/memory cgroup rw,nosuid,memory 0 0\n\
        cgroup /sys/fs/cgroup/pids cgroup rw,nosuid,pids 0 0\n";

    #[test]
    fn a_v1_controller_is_found_beside_this_process() {
        let own = "8:pids:/\n4:memory:/api/abc\n0::/\n";
        assert_eq!(
            legacy(own, MOUNTS, "memory").unwrap(),
            PathBuf::from("/sys/fs/cgroup/memory/api/abc")
        );
        assert_eq!(
            legacy(own, MOUNTS, "pids").unwrap(),
            PathBuf::from("/sys/fs/cgroup/pids")
        );
        assert!(legacy(own, MOUNTS, "cpu")
            .unwrap_err()
            .contains("no cgroup v1 cpu"));
    }
}
