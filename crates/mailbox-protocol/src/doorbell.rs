//! Waking a waiter when a move file may have changed: file-system
//! notifications where they work, a bounded back-off poll where they don't.
//!
//! Owns: the `Doorbell` each waiter sleeps on. On Linux a doorbell has its
//! own inotify instance on its file's folder and an eventfd for rings, and
//! the waiting thread sleeps on both itself: the kernel wakes it directly,
//! with no thread in between. A process has at most [`MAX_OWN`] of them:
//! the kernel's limit of inotify instances (128 per user by default) is
//! the whole user's, and a referee of a thousand players must leave the
//! user's other programs theirs. Past that, where the kernel refuses one,
//! and elsewhere, one process-wide watcher shared by every mailbox
//! (inotify on Linux, the notify crate elsewhere; one watch per folder)
//! rings the doorbells of its files.
//! Never reads a move file itself; a ring only means "look again".

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// The first wait of a poll, doubled up to its maximum while nothing rings.
pub const POLL_MIN: Duration = Duration::from_millis(1);
/// The longest sleep between two reads where notifications may miss a
/// write: the latency on a network mount written from another machine
/// (which sends no notification), or with no watcher at all.
pub const POLL_MAX: Duration = Duration::from_millis(16);
/// The longest sleep between two reads on a local file system that is
/// watched: there a ring comes with every write, and the poll is only a
/// safety net. Each needless wake-up costs ~50–90 µs of CPU on a virtual
/// machine, so a referee waiting on a slow bot stays near 0.1 % of a core.
pub const POLL_MAX_LOCAL: Duration = Duration::from_millis(250);

/// How long to sleep at most between looks at files in `dir`: long on a
/// watched local file system, short on network mounts and unknown drives.
pub fn poll_max_for(dir: &Path, watched: bool) -> Duration {
    if watched && is_local_fs(dir) {
        POLL_MAX_LOCAL
    } else {
        POLL_MAX
    }
}

#[cfg(target_os = "linux")]
pub fn is_local_fs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    // statfs magic numbers of local disk and memory file systems (from
    // linux/magic.h); everything else (NFS, SMB, FUSE such as sshfs…) is
    // treated as possibly shared with another machine.
    const LOCAL: [i64; 8] = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0xF2F5_2010, // f2fs
        0x2FC1_2FC1, // zfs
        0x794C_7630, // overlayfs
        0x4d44,      // vfat
    ];
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path and a zeroed statfs to fill.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    LOCAL.contains(&(st.f_type as i64))
}

#[cfg(not(target_os = "linux"))]
pub fn is_local_fs(_dir: &Path) -> bool {
    false
}

/// A generation counter a waiter can sleep on until it moves.
#[derive(Debug, Default)]
pub struct Doorbell {
    rings: Mutex<u64>,
    changed: Condvar,
    /// This doorbell's own notifications (Linux), if it has them.
    #[cfg(target_os = "linux")]
    own: Option<own::OwnWatch>,
}

impl Doorbell {
    pub fn new() -> Arc<Doorbell> {
        Arc::new(Doorbell::default())
    }

    /// A doorbell that rings whenever `file` may have new content (and
    /// when rung), and whether the file is watched at all (false: polls
    /// only). Its own inotify where it can have one, else the shared
    /// watcher ([`watch`]); stop it with [`unwatch`].
    pub fn watching(file: &Path) -> (Arc<Doorbell>, bool) {
        #[cfg(target_os = "linux")]
        match own::OwnWatch::new(file) {
            Ok(w) => {
                return (
                    Arc::new(Doorbell {
                        own: Some(w),
                        ..Doorbell::default()
                    }),
                    true,
                )
            }
            Err(e) => tracing::debug!(
                "no inotify of its own for {} ({e}); the shared watcher",
                file.display()
            ),
        }
        let bell = Doorbell::new();
        let watched = watch(file, &bell);
        (bell, watched)
    }

    /// Whether every change of the watched file made after this doorbell
    /// was made wakes a later wait at once, however late the wait starts
    /// (its own inotify queues the events; overflow counts as a change). A
    /// waiter that looked after the doorbell was made may then wait before
    /// its next look instead of looking first. False for the shared watcher
    /// (a ring before the ticket is lost to the wait) and for polling only.
    /// A change made from another machine sends no event at all: ask
    /// [`is_local_fs`] too.
    pub fn queues_changes(&self) -> bool {
        self.has_own()
    }

    fn has_own(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.own.is_some();
        #[cfg(not(target_os = "linux"))]
        return false;
    }

    /// Wakes every waiter.
    pub fn ring(&self) {
        let mut n = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.wrapping_add(1);
        self.changed.notify_all();
        #[cfg(target_os = "linux")]
        if let Some(w) = &self.own {
            w.ring();
        }
    }

    /// The current generation: take it *before* looking, then wait on it, so
    /// a ring between the look and the wait is not lost.
    pub fn ticket(&self) -> u64 {
        *self.rings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps until a ring after `ticket` or until `timeout`; true if rung.
    /// (With its own notifications a ring may also be a change of the file
    /// from before the ticket: one look too many, never one too few.)
    pub fn wait(&self, ticket: u64, timeout: Duration) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(w) = &self.own {
            if self.ticket() != ticket {
                return true;
            }
            return w.wait(timeout);
        }
        let guard = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |n| *n == ticket)
            .unwrap_or_else(|e| e.into_inner());
        *guard != ticket
    }
}

/// Sleeps between looks: short after a ring, growing while nothing happens.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
    max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::up_to(POLL_MAX)
    }
}

impl Backoff {
    /// A back-off whose sleeps grow up to `max`.
    pub fn up_to(max: Duration) -> Backoff {
        Backoff {
            next: POLL_MIN,
            max,
        }
    }

    /// Waits on `bell` from `ticket` until a ring, the back-off, or
    /// `deadline`; true if rung (false: the time ran out).
    pub fn wait(&mut self, bell: &Doorbell, ticket: u64, deadline: Instant) -> bool {
        let left = deadline.saturating_duration_since(Instant::now());
        let rung = bell.wait(ticket, self.next.min(left));
        if rung {
            self.next = POLL_MIN;
        } else {
            self.next = (self.next * 2).min(self.max);
        }
        rung
    }
}

/// A doorbell's own inotify instance and eventfd (Linux).
/// At most this many doorbells of a process have an inotify instance of
/// their own (a game in play needs two; a referee's concurrency rarely
/// passes eight); the others share one watcher.
pub const MAX_OWN: usize = 32;

#[cfg(target_os = "linux")]
mod own {
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[derive(Debug)]
    pub struct OwnWatch {
        inotify: OwnedFd,
        event: OwnedFd,
        /// The watched file's name in its folder.
        name: Vec<u8>,
        _slot: Slot,
    }

    /// How many doorbells of this process have an inotify of their own.
    static OWNED: AtomicUsize = AtomicUsize::new(0);

    /// One of the process's [`super::MAX_OWN`] own instances, given back
    /// on drop.
    #[derive(Debug)]
    struct Slot;

    impl Slot {
        fn take() -> io::Result<Slot> {
            if OWNED.fetch_add(1, Ordering::AcqRel) >= super::MAX_OWN {
                OWNED.fetch_sub(1, Ordering::AcqRel);
                return Err(io::Error::other(format!(
                    "this process already has {} inotify instances of its own",
                    super::MAX_OWN
                )));
            }
            Ok(Slot)
        }
    }

    impl Drop for Slot {
        fn drop(&mut self) {
            OWNED.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn check(r: libc::c_int) -> io::Result<libc::c_int> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }

    impl OwnWatch {
        pub fn new(file: &Path) -> io::Result<OwnWatch> {
            let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
                return Err(io::Error::other("not a file in a folder"));
            };
            let dir = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
            let slot = Slot::take()?;
            // SAFETY: plain system calls; each descriptor is owned at once.
            let inotify = unsafe {
                OwnedFd::from_raw_fd(check(libc::inotify_init1(
                    libc::IN_NONBLOCK | libc::IN_CLOEXEC,
                ))?)
            };
            // Not MODIFY: a writer closes the file right after its one write
            // (a rename brings MOVED_TO), and one that never closes is still
            // seen by the poll.
            check(unsafe {
                libc::inotify_add_watch(
                    inotify.as_raw_fd(),
                    dir.as_ptr(),
                    libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE,
                )
            })?;
            let event = unsafe {
                OwnedFd::from_raw_fd(check(libc::eventfd(
                    0,
                    libc::EFD_NONBLOCK | libc::EFD_CLOEXEC,
                ))?)
            };
            Ok(OwnWatch {
                inotify,
                event,
                name: name.as_bytes().to_vec(),
                _slot: slot,
            })
        }

        pub fn ring(&self) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes we own into our eventfd.
            unsafe {
                libc::write(
                    self.event.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }

        /// Sleeps until our file changed, a ring, or `timeout`; false only
        /// when the time ran out.
        pub fn wait(&self, timeout: Duration) -> bool {
            // Events already queued first, without `ppoll`: a waiter's own
            // writes in the folder (the referee's in.txt, a bot's out.txt
            // and its spare) always leave some, and one read takes them.
            if self.drain_ours() {
                return true;
            }
            let deadline = Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let ts = libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: left.subsec_nanos() as libc::c_long,
                };
                let mut fds = [
                    libc::pollfd {
                        fd: self.inotify.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: self.event.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                // SAFETY: two pollfds we own, a valid timespec, no sigmask.
                let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
                if n < 0 {
                    if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return true; // look again rather than sleep wrongly
                }
                if n == 0 {
                    return false;
                }
                if fds[1].revents != 0 {
                    let mut v = 0u64;
                    // SAFETY: reads 8 bytes into a u64 we own.
                    unsafe {
                        libc::read(
                            self.event.as_raw_fd(),
                            (&mut v as *mut u64).cast(),
                            std::mem::size_of::<u64>(),
                        )
                    };
                    return true;
                }
                if self.drain_ours() {
                    return true;
                }
            }
        }

        /// Reads the pending events: was one about our file (or were events
        /// lost)? Events about the folder's other files are dropped. A read
        /// that left room for the longest event took every event queued
        /// then, so no second read is made to learn that the queue is empty
        /// (an event queued later wakes the next `ppoll`).
        fn drain_ours(&self) -> bool {
            /// An event's header and the longest name (`NAME_MAX` + NUL).
            const LONGEST_EVENT: usize = 16 + 256;
            let mut hit = false;
            let mut buf = [0u8; 4096];
            loop {
                // SAFETY: reads into a buffer we own, at most its size.
                let n = unsafe {
                    libc::read(self.inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
                };
                if n <= 0 {
                    return hit;
                }
                let got = &buf[..n as usize];
                let all_taken = buf.len() - got.len() >= LONGEST_EVENT;
                let mut i = 0;
                while i + 16 <= got.len() {
                    let word = |at: usize| {
                        u32::from_ne_bytes(got[at..at + 4].try_into().expect("4 bytes"))
                    };
                    let (mask, len) = (word(i + 4), word(i + 12) as usize);
                    let end = (i + 16 + len).min(got.len());
                    let name = &got[i + 16..end];
                    let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                    if name == self.name.as_slice() || mask & libc::IN_Q_OVERFLOW != 0 {
                        hit = true;
                    }
                    i += 16 + len;
                }
                if all_taken {
                    return hit;
                }
            }
        }
    }
}

/// Who must be woken when a file changes: doorbells by file path.
type Bells = Arc<Mutex<HashMap<PathBuf, Vec<Weak<Doorbell>>>>>;

fn ring_file(bells: &Bells, path: &Path) {
    let map = bells.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(list) = map.get(path) {
        for bell in list.iter().filter_map(Weak::upgrade) {
            bell.ring();
        }
    }
}

fn ring_all(bells: &Bells) {
    let map = bells.lock().unwrap_or_else(|e| e.into_inner());
    for bell in map.values().flatten().filter_map(Weak::upgrade) {
        bell.ring();
    }
}

/// On Linux: inotify itself, read by one thread of ours. The kernel filters
/// by event kind (a rename into place, a close after writing), so
/// deletions and our own temp files wake nobody — measured here, the
/// general-purpose `notify` crate's extra thread hop and unfiltered events
/// cost about 25 µs per message.
#[cfg(target_os = "linux")]
mod backend {
    use super::*;
    use inotify::{Inotify, WatchDescriptor, WatchMask};

    pub struct Backend {
        watches: inotify::Watches,
        dirs: Arc<Mutex<HashMap<WatchDescriptor, PathBuf>>>,
    }

    pub type Handle = WatchDescriptor;

    impl Backend {
        pub fn start(bells: Bells) -> std::io::Result<Backend> {
            let mut inotify = Inotify::init()?;
            let watches = inotify.watches();
            let dirs: Arc<Mutex<HashMap<WatchDescriptor, PathBuf>>> = Arc::default();
            let reader_dirs = Arc::clone(&dirs);
            std::thread::Builder::new()
                .name("mailbox-watch".into())
                .spawn(move || {
                    let mut buf = [0u8; 8192];
                    loop {
                        let events = match inotify.read_events_blocking(&mut buf) {
                            Ok(events) => events,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(_) => return,
                        };
                        for ev in events {
                            if ev.mask.contains(inotify::EventMask::Q_OVERFLOW) {
                                // Events were lost: everyone looks again.
                                ring_all(&bells);
                                continue;
                            }
                            let Some(name) = ev.name else { continue };
                            let dir = reader_dirs
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .get(&ev.wd)
                                .cloned();
                            if let Some(dir) = dir {
                                ring_file(&bells, &dir.join(name));
                            }
                        }
                    }
                })?;
            Ok(Backend { watches, dirs })
        }

        pub fn watch(&mut self, dir: &Path) -> std::io::Result<Handle> {
            // Not MODIFY: a bot overwriting out.txt closes it right after
            // its one write, and a writer that never closes is still seen
            // by the poll.
            let mask = WatchMask::MOVED_TO | WatchMask::CLOSE_WRITE;
            let wd = self.watches.add(dir, mask)?;
            self.dirs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(wd.clone(), dir.to_path_buf());
            Ok(wd)
        }

        pub fn unwatch(&mut self, _dir: &Path, handle: Handle) {
            self.dirs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&handle);
            let _ = self.watches.remove(handle);
        }
    }
}

/// Elsewhere: the `notify` crate's recommended watcher.
#[cfg(not(target_os = "linux"))]
mod backend {
    use super::*;
    pub struct Backend {
        watcher: notify::RecommendedWatcher,
    }

    pub type Handle = ();

    /// Whether an event may mean new content in the file: a write, a close
    /// after writing, a rename into place. A deletion or a read does not.
    fn may_bring_content(kind: &notify::EventKind) -> bool {
        use notify::event::{AccessKind, AccessMode};
        use notify::EventKind::*;
        matches!(
            kind,
            Create(_) | Modify(_) | Access(AccessKind::Close(AccessMode::Write)) | Any | Other
        )
    }

    impl Backend {
        pub fn start(bells: Bells) -> std::io::Result<Backend> {
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    let Ok(event) = event else { return };
                    if may_bring_content(&event.kind) {
                        for path in &event.paths {
                            ring_file(&bells, path);
                        }
                    }
                })
                .map_err(std::io::Error::other)?;
            Ok(Backend { watcher })
        }

        pub fn watch(&mut self, dir: &Path) -> std::io::Result<Handle> {
            self.watcher
                .watch(dir, RecursiveMode::NonRecursive)
                .map_err(std::io::Error::other)
        }

        pub fn unwatch(&mut self, dir: &Path, _handle: Handle) {
            let _ = self.watcher.unwatch(dir);
        }
    }
}

/// The process's one watcher, the doorbells of watched files, and how many
/// watched files each folder has.
struct Registry {
    backend: Mutex<Option<backend::Backend>>,
    bells: Bells,
    folders: Mutex<HashMap<PathBuf, (usize, Option<backend::Handle>)>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let bells: Bells = Arc::default();
        let backend = backend::Backend::start(Arc::clone(&bells));
        if let Err(e) = &backend {
            tracing::debug!("no file-system notifications ({e}); polling only");
        }
        Registry {
            backend: Mutex::new(backend.ok()),
            bells,
            folders: Mutex::new(HashMap::new()),
        }
    })
}

/// Rings `bell` whenever `file` may have new content (best effort: on a
/// drive without notifications nothing rings and waiters fall back to
/// polls). Only events on that one file ring, so a referee is not woken by
/// its own writes to `in.txt`, nor a bot by its own `out.txt`.
/// Returns whether the file's folder is watched (false: polls only).
pub fn watch(file: &Path, bell: &Arc<Doorbell>) -> bool {
    let reg = registry();
    reg.bells
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(file.to_path_buf())
        .or_default()
        .push(Arc::downgrade(bell));
    let Some(dir) = file.parent() else {
        return false;
    };
    let mut folders = reg.folders.lock().unwrap_or_else(|e| e.into_inner());
    let entry = folders.entry(dir.to_path_buf()).or_insert((0, None));
    entry.0 += 1;
    if entry.0 == 1 {
        if let Some(b) = reg
            .backend
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            match b.watch(dir) {
                Ok(h) => entry.1 = Some(h),
                Err(e) => tracing::debug!("cannot watch {}: {e}; polling", dir.display()),
            }
        }
    }
    entry.1.is_some()
}

/// Stops ringing `bell` for `file`; the folder's watch ends with its last file.
/// (A doorbell with its own notifications stops when it is dropped.)
pub fn unwatch(file: &Path, bell: &Arc<Doorbell>) {
    if bell.has_own() {
        return;
    }
    let reg = registry();
    {
        let mut map = reg.bells.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = map.get_mut(file) {
            list.retain(|w| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), Arc::as_ptr(bell)));
            if list.is_empty() {
                map.remove(file);
            }
        }
    }
    let Some(dir) = file.parent() else { return };
    let mut folders = reg.folders.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(entry) = folders.get_mut(dir) {
        entry.0 -= 1;
        if entry.0 == 0 {
            let (_, handle) = folders.remove(dir).expect("present");
            if let (Some(h), Some(b)) = (
                handle,
                reg.backend
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_mut(),
            ) {
                b.unwatch(dir, h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_after_the_ticket_wakes_the_waiter() {
        let bell = Doorbell::new();
        let t = bell.ticket();
        bell.ring();
        assert!(bell.wait(t, Duration::from_secs(5)), "rung before the wait");
        let t = bell.ticket();
        assert!(!bell.wait(t, Duration::from_millis(5)), "nothing rang");
    }

    /// The tests that count this process's own inotify instances, one at
    /// a time.
    static OWN_COUNTED: Mutex<()> = Mutex::new(());

    #[test]
    fn a_doorbell_of_its_own_wakes_for_its_file_and_rings_only() {
        let _one = OWN_COUNTED.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        let (bell, watched) = Doorbell::watching(&dir.join("out.txt"));
        assert!(watched);
        #[cfg(target_os = "linux")]
        assert!(bell.has_own(), "an inotify instance of its own");
        let t = bell.ticket();
        std::fs::write(dir.join("in.txt"), "x").unwrap();
        assert!(!bell.wait(t, Duration::from_millis(100)), "another file");
        std::fs::write(dir.join("out.txt"), "x").unwrap();
        assert!(bell.wait(t, Duration::from_secs(5)), "its file");
        let t = bell.ticket();
        assert!(!bell.wait(t, Duration::from_millis(20)), "nothing new");
        let ringer = Arc::clone(&bell);
        let handle = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            ringer.ring();
        });
        assert!(bell.wait(t, Duration::from_secs(5)), "a ring from a thread");
        handle.join().unwrap();
        unwatch(&dir.join("out.txt"), &bell);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_process_keeps_to_its_share_of_inotify_instances_and_the_rest_still_ring() {
        let _one = OWN_COUNTED.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        let bells: Vec<_> = (0..MAX_OWN + 8)
            .map(|i| {
                let folder = dir.join(format!("m{i}"));
                std::fs::create_dir(&folder).unwrap();
                let (bell, watched) = Doorbell::watching(&folder.join("out.txt"));
                assert!(watched, "bell {i} is watched");
                (folder, bell)
            })
            .collect();
        let own = bells.iter().filter(|(_, b)| b.has_own()).count();
        assert!(own <= MAX_OWN, "{own} own inotify instances");
        assert!(
            bells.iter().any(|(_, b)| !b.has_own()),
            "past the share: the shared watcher"
        );
        let (folder, last) = bells.last().unwrap();
        let t = last.ticket();
        std::fs::write(folder.join("out.txt"), "x").unwrap();
        assert!(
            last.wait(t, Duration::from_secs(5)),
            "a shared bell rings for its file"
        );
        for (folder, bell) in &bells {
            unwatch(&folder.join("out.txt"), bell);
        }
    }

    #[test]
    fn only_the_watched_file_rings() {
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        let bell = Doorbell::new();
        watch(&dir.join("out.txt"), &bell);
        let t = bell.ticket();
        std::fs::write(dir.join("in.txt"), "x").unwrap();
        assert!(!bell.wait(t, Duration::from_millis(100)), "another file");
        std::fs::write(dir.join("out.txt"), "x").unwrap();
        assert!(bell.wait(t, Duration::from_secs(5)));
        unwatch(&dir.join("out.txt"), &bell);
    }
}
