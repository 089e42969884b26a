//! What the bench needs from the operating system: the machine's
//! description, the file system of a folder, CPU time, scratch folders, and
//! a child's peak memory. Linux first; elsewhere the answers say "unknown".

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tournament::player::process::descendants;

/// One line about the machine: CPU model, cores, memory, kernel.
pub fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or("? GiB".to_string(), |kb| {
            format!("{:.0} GiB", kb / 1024.0 / 1024.0)
        });
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| format!("{} {}", std::env::consts::OS, s.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_string());
    format!("{cpu}, {cores} cores, {mem}, {kernel}")
}

/// The file-system type of the folder `path` (`ext4`, `tmpfs`, …).
pub fn fs_type(path: &Path) -> String {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return "?".into();
        };
        // SAFETY: statfs writes into the zeroed struct we own; c is a valid
        // NUL-terminated path.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return "?".into();
        }
        #[allow(clippy::unnecessary_cast)]
        let magic = st.f_type as i64 as u32;
        match magic {
            0xEF53 => "ext4",
            0x0102_1994 => "tmpfs",
            0x9123_683E => "btrfs",
            0x5846_5342 => "xfs",
            0x2FC1_2FC1 => "zfs",
            0x6969 => "nfs",
            0x6573_5546 => "fuse",
            0x794C_7630 => "overlayfs",
            0xFE53_4D42 => "smb2",
            0xFF53_4D42 => "cifs",
            0x0102_1997 => "9p",
            0x6E73_6673 => "nsfs",
            _ => return format!("fs 0x{magic:x}"),
        }
        .to_string()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        "?".into()
    }
}

/// CPU time (user + system) this process used so far, all threads.
pub fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Context switches (voluntary and not) of this process so far, all threads.
pub fn context_switches() -> u64 {
    // SAFETY: getrusage fills the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (ru.ru_nvcsw + ru.ru_nivcsw).max(0) as u64
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

/// A folder of our own under `root`, removed with everything in it when
/// dropped.
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    pub fn new(root: &Path, what: &str) -> io::Result<Scratch> {
        static N: AtomicU64 = AtomicU64::new(0);
        let path = root.join(format!(
            "tournament-bench-{}-{}-{what}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path)?;
        Ok(Scratch { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// How a waited-for child ended, with its resource use.
pub struct Ended {
    /// The exit code, or None if a signal ended it.
    pub code: Option<i32>,
    /// Peak resident memory (KiB) of the child or of the largest process
    /// it waited for, whichever is larger (Linux `wait4` semantics).
    pub maxrss_kib: u64,
    /// CPU seconds (user + system) of the child and of the processes it
    /// waited for.
    pub cpu_s: f64,
}

/// Waits for `child` and returns its exit code and peak memory.
pub fn wait_rusage(child: &mut Child) -> io::Result<Ended> {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 on our own child's pid, writing into values we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Ended {
        code,
        maxrss_kib: ru.ru_maxrss.max(0) as u64,
        cpu_s: seconds(ru.ru_utime) + seconds(ru.ru_stime),
    })
}

/// Peak memory seen while watching a process and its descendants.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryPeak {
    /// The process's own peak resident set (`VmHWM`), KiB.
    pub own_hwm_kib: u64,
    /// The largest sum of proportional set sizes (`Pss`: shared pages split
    /// among their users) of the process and all its descendants, KiB.
    pub tree_pss_kib: u64,
    /// The most descendants alive at once.
    pub descendants: usize,
    /// The process's own CPU time (user + system, its threads but not its
    /// children), last seen: seconds.
    pub own_cpu_s: f64,
}

/// Samples `pid`'s memory on a thread until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<MemoryPeak>,
}

impl Sampler {
    pub fn start(pid: u32, every: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut peak = MemoryPeak::default();
            let mut round = 0u32;
            while !flag.load(Ordering::Relaxed) {
                if let Some(hwm) = status_kib(pid, "VmHWM:") {
                    peak.own_hwm_kib = peak.own_hwm_kib.max(hwm);
                }
                if let Some(cpu) = own_cpu_s(pid) {
                    peak.own_cpu_s = peak.own_cpu_s.max(cpu);
                }
                // The whole tree is costlier to read: every fifth sample.
                if round.is_multiple_of(5) {
                    let kids = descendants(pid);
                    let pss: u64 = std::iter::once(pid)
                        .chain(kids.iter().copied())
                        .filter_map(pss_kib)
                        .sum();
                    peak.tree_pss_kib = peak.tree_pss_kib.max(pss);
                    peak.descendants = peak.descendants.max(kids.len());
                }
                round += 1;
                std::thread::sleep(every);
            }
            peak
        });
        Sampler { stop, handle }
    }

    pub fn finish(self) -> MemoryPeak {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// utime + stime of `pid` itself, from `/proc/<pid>/stat`, in seconds.
fn own_cpu_s(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ...: fields after the last ')'; utime and stime are
    // the 14th and 15th of the line, the 12th and 13th after it.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| ticks as f64 / hz as f64)
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn pss_kib(pid: u32) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    s.lines()
        .find(|l| l.starts_with("Pss:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
