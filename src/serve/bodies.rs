//! The bodies the live page's server sends, each holding at most one
//! chunk at a time: a file read [`CHUNK`] bytes at a time as the viewer
//! takes them (never read whole), and the chunks of an event stream as
//! they come through a channel of a few places.
//!
//! Owns only the reading; what is read, and from where, is `super`'s and
//! `files`'.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// The bytes of a file read at once (and held per viewer).
pub const CHUNK: usize = 8 * 1024;

/// The first `left` bytes of a file, a chunk per frame.
pub struct FileBody {
    file: tokio::fs::File,
    left: u64,
    buf: Box<[u8]>,
}

impl FileBody {
    /// `file`'s first `len` bytes (its length when opened: what is
    /// appended later is not sent).
    pub fn new(file: tokio::fs::File, len: u64) -> FileBody {
        FileBody {
            file,
            left: len,
            buf: vec![0; CHUNK].into_boxed_slice(),
        }
    }
}

impl Body for FileBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if this.left == 0 {
            return Poll::Ready(None);
        }
        let want = CHUNK.min(usize::try_from(this.left).unwrap_or(CHUNK));
        let mut read = ReadBuf::new(&mut this.buf[..want]);
        ready!(Pin::new(&mut this.file).poll_read(cx, &mut read))?;
        let got = read.filled();
        if got.is_empty() {
            // The file got shorter since it was opened.
            return Poll::Ready(Some(Err(io::ErrorKind::UnexpectedEof.into())));
        }
        this.left -= got.len() as u64;
        Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(got)))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

/// Chunks as a sender pushes them; ends when the sender is dropped.
pub struct ChannelBody {
    chunks: mpsc::Receiver<Bytes>,
}

impl ChannelBody {
    /// A body and its sender, with room for `room` chunks in between.
    pub fn new(room: usize) -> (mpsc::Sender<Bytes>, ChannelBody) {
        let (tx, rx) = mpsc::channel(room);
        (tx, ChannelBody { chunks: rx })
    }
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.get_mut()
            .chunks
            .poll_recv(cx)
            .map(|chunk| chunk.map(|b| Ok(Frame::data(b))))
    }
}
