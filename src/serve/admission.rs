//! Who the live page's server lets in, and for how long: at most
//! 2048 connections at once (fewer when the process may open few files),
//! at most
//! [`PER_ADDRESS`] from one client address (IPv6: one /64), and a
//! connection that moves no byte either way for [`IDLE`] is closed.
//!
//! Owns the counts and the idle watch. Does not speak HTTP (`hyper` does,
//! with its own timeout for the request head, set in `super`), and decides
//! nothing about what is served (`files`, `super`).

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Connections open at once from one client address. A class behind one
/// NAT shows as one address: this leaves room for a hundred viewers there,
/// and keeps one visitor from taking every connection.
pub const PER_ADDRESS: usize = 128;
/// Connections open at once from everyone, at most (fewer when the
/// process may open few files: see [`Admission::new`]).
const MAX_TOTAL: usize = 2048;
/// A connection that moves no byte, in or out, for this long is closed (a
/// viewer that stopped reading; an event stream sends a line every 15 s).
pub const IDLE: Duration = Duration::from_secs(30);

/// The open connections, counted per client address.
pub struct Admission {
    open: Mutex<HashMap<IpAddr, usize>>,
    total: usize,
}

impl Admission {
    /// At most [`MAX_TOTAL`] connections, and never more than a quarter of
    /// the files this process may open (the referee's games need the rest).
    pub fn new() -> Admission {
        Admission {
            open: Mutex::new(HashMap::new()),
            total: MAX_TOTAL.min(open_files_limit() / 4).max(16),
        }
    }

    /// A slot for a connection from `peer`, if it is under both limits;
    /// given back when the slot is dropped.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Slot> {
        let client = client_of(peer);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let total: usize = open.values().sum();
        let mine = open.get(&client).copied().unwrap_or(0);
        if total >= self.total || mine >= PER_ADDRESS {
            return None;
        }
        open.insert(client, mine + 1);
        Some(Slot {
            admission: Arc::clone(self),
            client,
        })
    }
}

/// One admitted connection; its place is freed on drop.
pub struct Slot {
    admission: Arc<Admission>,
    client: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .admission
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// What counts as one client: the address, an IPv4 one inside IPv6 as
/// itself, an IPv6 one by its /64 (one machine can have the whole /64).
fn client_of(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

/// The soft limit of open files of this process.
fn open_files_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

/// A connection whose last moved byte is on record, for [`idle_out`].
pub struct Watched<S> {
    inner: S,
    last: Arc<AtomicU64>,
    epoch: Instant,
}

impl<S> Watched<S> {
    pub fn new(inner: S) -> (Watched<S>, Activity) {
        let last = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        let activity = Activity {
            last: Arc::clone(&last),
            epoch,
        };
        (Watched { inner, last, epoch }, activity)
    }

    fn moved(&self) {
        let ms = self.epoch.elapsed().as_millis() as u64;
        self.last.store(ms, Ordering::Relaxed);
    }
}

/// When a [`Watched`] connection last moved a byte.
pub struct Activity {
    last: Arc<AtomicU64>,
    epoch: Instant,
}

/// Returns once the connection has moved nothing for [`IDLE`].
pub async fn idle_out(activity: Activity) {
    loop {
        let last = activity.epoch + Duration::from_millis(activity.last.load(Ordering::Relaxed));
        let deadline = last + IDLE;
        if Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep_until(deadline.into()).await;
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.moved();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.moved();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            this.moved();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_gets_its_share_and_a_freed_slot_is_given_again() {
        let admission = Arc::new(Admission::new());
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        let slots: Vec<Slot> = (0..PER_ADDRESS)
            .map(|_| admission.admit(one).expect("under the limit"))
            .collect();
        assert!(admission.admit(one).is_none(), "over its share");
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert!(
            admission.admit(mapped).is_none(),
            "the same address in IPv6"
        );
        let other = admission.admit("10.0.0.2".parse().unwrap());
        assert!(other.is_some(), "another address is let in");
        drop(slots);
        assert!(admission.admit(one).is_some(), "its slots were given back");
    }

    #[test]
    fn one_ipv6_machine_is_one_client_by_its_64() {
        let admission = Arc::new(Admission::new());
        let slots: Vec<Slot> = (0..PER_ADDRESS)
            .map(|i| {
                let addr: IpAddr = format!("2001:db8::{:x}", i + 1).parse().unwrap();
                admission.admit(addr).expect("under the limit")
            })
            .collect();
        assert!(admission.admit("2001:db8::ffff".parse().unwrap()).is_none());
        assert!(admission
            .admit("2001:db8:0:1::1".parse().unwrap())
            .is_some());
        drop(slots);
    }
}
