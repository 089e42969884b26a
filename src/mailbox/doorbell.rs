//! Waking a waiter when a move file may have changed: file-system
//! notifications where they work, a bounded back-off poll where they don't.
//!
//! Owns: one process-wide notify watcher shared by every mailbox (one
//! watch per folder, rings per file), and the `Doorbell` each waiter sleeps on. Never reads a move file itself; a ring
//! only means "look again".

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

/// The first wait of a poll, doubled up to [`POLL_MAX`] while nothing rings.
pub const POLL_MIN: Duration = Duration::from_millis(1);
/// The longest sleep between two reads: the latency on a drive that sends no
/// notifications (a network mount written from another machine).
pub const POLL_MAX: Duration = Duration::from_millis(16);

/// A generation counter a waiter can sleep on until it moves.
#[derive(Debug, Default)]
pub struct Doorbell {
    rings: Mutex<u64>,
    changed: Condvar,
}

impl Doorbell {
    pub fn new() -> Arc<Doorbell> {
        Arc::new(Doorbell::default())
    }

    /// Wakes every waiter.
    pub fn ring(&self) {
        let mut n = self.rings.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.wrapping_add(1);
        self.changed.notify_all();
    }

    /// The current generation: take it *before* looking, then wait on it, so
    /// a ring between the look and the wait is not lost.
    pub fn ticket(&self) -> u64 {
        *self.rings.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps until a ring after `ticket` or until `timeout`; true if rung.
    pub fn wait(&self, ticket: u64, timeout: Duration) -> bool {
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
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: POLL_MIN }
    }
}

impl Backoff {
    /// Waits on `bell` from `ticket` until a ring, the back-off, or `deadline`.
    pub fn wait(&mut self, bell: &Doorbell, ticket: u64, deadline: Instant) {
        let left = deadline.saturating_duration_since(Instant::now());
        if bell.wait(ticket, self.next.min(left)) {
            self.next = POLL_MIN;
        } else {
            self.next = (self.next * 2).min(POLL_MAX);
        }
    }
}

/// The process's one notify watcher, the doorbells of watched files, and
/// how many watched files each folder has.
struct Registry {
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    bells: Arc<Mutex<HashMap<PathBuf, Vec<Weak<Doorbell>>>>>,
    folders: Mutex<HashMap<PathBuf, usize>>,
}

/// Whether an event may mean new content in the file: a write, a close
/// after writing, a rename into place. A deletion or a read does not, and
/// ringing for it would only wake the waiter to find nothing.
fn may_bring_content(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode};
    use notify::EventKind::*;
    matches!(
        kind,
        Create(_) | Modify(_) | Access(AccessKind::Close(AccessMode::Write)) | Any | Other
    )
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let bells: Arc<Mutex<HashMap<PathBuf, Vec<Weak<Doorbell>>>>> = Arc::default();
        let handler_bells = Arc::clone(&bells);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if !may_bring_content(&event.kind) {
                return;
            }
            let map = handler_bells.lock().unwrap_or_else(|e| e.into_inner());
            for path in &event.paths {
                if let Some(list) = map.get(path) {
                    for bell in list.iter().filter_map(Weak::upgrade) {
                        bell.ring();
                    }
                }
            }
        });
        if let Err(e) = &watcher {
            tracing::debug!("no file-system notifications ({e}); polling only");
        }
        Registry {
            watcher: Mutex::new(watcher.ok()),
            bells,
            folders: Mutex::new(HashMap::new()),
        }
    })
}

/// Rings `bell` whenever `file` may have new content (best effort: on a
/// drive without notifications nothing rings and waiters fall back to
/// polls). Only events on that one file ring, so a referee is not woken by
/// its own writes to `in.txt`, nor a bot by its own `out.txt`.
pub fn watch(file: &Path, bell: &Arc<Doorbell>) {
    let reg = registry();
    reg.bells
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(file.to_path_buf())
        .or_default()
        .push(Arc::downgrade(bell));
    let Some(dir) = file.parent() else { return };
    let mut folders = reg.folders.lock().unwrap_or_else(|e| e.into_inner());
    let count = folders.entry(dir.to_path_buf()).or_insert(0);
    *count += 1;
    if *count == 1 {
        if let Some(w) = reg
            .watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            if let Err(e) = w.watch(dir, RecursiveMode::NonRecursive) {
                tracing::debug!("cannot watch {}: {e}; polling", dir.display());
            }
        }
    }
}

/// Stops ringing `bell` for `file`; the folder's watch ends with its last file.
pub fn unwatch(file: &Path, bell: &Arc<Doorbell>) {
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
    if let Some(count) = folders.get_mut(dir) {
        *count -= 1;
        if *count == 0 {
            folders.remove(dir);
            if let Some(w) = reg
                .watcher
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
            {
                let _ = w.unwatch(dir);
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
